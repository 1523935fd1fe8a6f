//! The mbarrier object of sm_80 and later (PTX ISA 8.x, §9.7.13.15 "Parallel Synchronization
//! and Communication Instructions: mbarrier"), as a pure state machine: the 64-bit object in
//! shared memory holds a **current phase**, a **pending arrival count**, an **expected arrival
//! count** and (sm_90) a **transaction count** (tx-count) of bytes still to arrive.
//!
//! * `mbarrier.init [a], count`: expected = pending = `count` (1 ..= 2^20 − 1, §9.7.13.15.9),
//!   phase 0, tx-count 0 ([`Mbarrier::init`]).
//! * an *arrive-on* operation (`mbarrier.arrive`, `.arrive_drop`, `cp.async.mbarrier.arrive`)
//!   decrements the pending count by its count ([`Mbarrier::arrive`]); `arrive_drop` also
//!   lowers the expected count of the following phases ([`Mbarrier::arrive_drop`]).
//! * *expect-tx* (`mbarrier.expect_tx`, `mbarrier.arrive.expect_tx`) raises the tx-count by a
//!   number of bytes, *complete-tx* (`mbarrier.complete_tx`, a TMA copy with
//!   `.mbarrier::complete_tx::bytes`) lowers it ([`Mbarrier::expect_tx`],
//!   [`Mbarrier::complete_tx`]); the tx-count lies in −(2^20 − 1) ..= 2^20 − 1 (§9.7.13.15.1,
//!   "tx-count": a complete-tx may come before its expect-tx).
//! * **phase completion** (§9.7.13.15.1 "Phase Completion of the mbarrier object"): when the
//!   pending count is 0 and the tx-count is 0, the current phase completes: the phase number
//!   advances (its parity flips), the pending count is reset to the expected count, which the
//!   phase's `arrive_drop`s lowered.
//! * `mbarrier.test_wait` / `try_wait` with the state an arrive returned, or `.parity` with a
//!   phase parity, ask whether that phase has completed ([`Mbarrier::test_wait`],
//!   [`Mbarrier::test_wait_parity`]); `mbarrier.inval` ends the object ([`Mbarrier::inval`]).
//!
//! What the ISA leaves undefined is an error here, one line each ([`MbarrierError`]): any
//! operation on an object not initialised (or invalidated), a count outside 1 ..= 2^20 − 1, an
//! arrive-on with a count above the pending count, a tx-count leaving its range.
//!
//! ```
//! use tilelab_core::sim::mbarrier::Mbarrier;
//! // A TMA pipeline stage: one producer arrival that expects 8192 bytes, then the copy.
//! let mut b = Mbarrier::default();
//! b.init(1).unwrap();
//! let state = b.arrive_expect_tx(8192, 1).unwrap();
//! assert!(!b.test_wait(state) && !b.test_wait_parity(0));
//! b.complete_tx(8192).unwrap();
//! assert!(b.test_wait(state) && b.test_wait_parity(0) && b.parity() == 1);
//! ```

use thiserror::Error;

/// The largest expected or arrival count of an mbarrier, 2^20 − 1 = 1,048,575 (PTX ISA
/// §9.7.13.15.9 mbarrier.init: "count ... in the range 1 through 2^20 - 1"; §9.7.13.15.13
/// mbarrier.arrive: the same range for its count operand).
pub const MAX_COUNT: u32 = (1 << 20) - 1;

/// The bound of the transaction count, in bytes: it lies in −(2^20 − 1) ..= 2^20 − 1 (PTX ISA
/// §9.7.13.15.1, "tx-count ... valid range").
pub const MAX_TX_COUNT: i64 = (1 << 20) - 1;

/// Why an mbarrier operation is undefined (PTX ISA §9.7.13.15): each prints as one line naming
/// the operation, the value and what is allowed.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum MbarrierError {
    /// An operation other than `init` on an object never initialised, or invalidated by
    /// `mbarrier.inval` (PTX ISA §9.7.13.15.10: "performing any mbarrier operation except
    /// mbarrier.init on an invalidated mbarrier object results in undefined behaviour").
    #[error(
        "mbarrier.{op} on an mbarrier object that is {state}: initialise it with mbarrier.init first (PTX ISA §9.7.13.15, mbarrier)"
    )]
    NotInitialised {
        /// The operation (`arrive`, `try_wait`, …).
        op: &'static str,
        /// `"not initialised"` or `"invalidated (mbarrier.inval)"`.
        state: &'static str,
    },
    /// A count outside 1 ..= [`MAX_COUNT`].
    #[error(
        "mbarrier.{op} with count {count}: allowed 1..={MAX_COUNT} (2^20 - 1; PTX ISA §9.7.13.15, mbarrier.{op})"
    )]
    Count {
        /// The operation.
        op: &'static str,
        /// The count given.
        count: u64,
    },
    /// An arrive-on whose count is above the pending arrivals of the current phase.
    #[error(
        "mbarrier.{op} with count {count} on a phase with {pending} pending arrival{s} (phase {phase}, expected count {expected}): more arrivals than pending is undefined (PTX ISA §9.7.13.15.1, phase completion)",
        s = if *pending == 1 { "" } else { "s" }
    )]
    TooManyArrivals {
        /// The operation.
        op: &'static str,
        /// Arrivals given.
        count: u32,
        /// Arrivals pending in the current phase.
        pending: u32,
        /// The current phase number (0 after init).
        phase: u64,
        /// The expected arrival count.
        expected: u32,
    },
    /// An expect-tx or complete-tx that takes the tx-count out of its range.
    #[error(
        "mbarrier.{op} of {bytes} bytes takes the tx-count from {tx_count} to {new}, outside -{MAX_TX_COUNT}..={MAX_TX_COUNT} (2^20 - 1; PTX ISA §9.7.13.15.1, tx-count)"
    )]
    TxCount {
        /// The operation.
        op: &'static str,
        /// Bytes given.
        bytes: u64,
        /// The tx-count before.
        tx_count: i64,
        /// The tx-count it would reach.
        new: i64,
    },
}

/// Whether an object was initialised (the three states of §9.7.13.15).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Life {
    #[default]
    Uninitialised,
    Live,
    Invalidated,
}

/// One mbarrier object (PTX ISA §9.7.13.15.1 "Contents of the mbarrier object"). Starts
/// uninitialised ([`Default`]); [`Mbarrier::init`] makes it live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mbarrier {
    life: Life,
    /// Arrivals each phase expects (after the `arrive_drop`s of earlier phases).
    expected: u32,
    /// Arrivals the current phase still waits for.
    pending: u32,
    /// Expected-count decrements of the current phase's `arrive_drop`s, applied when it
    /// completes.
    drops: u32,
    /// Transaction bytes still to arrive (negative: completed before expected), bytes.
    tx: i64,
    /// Phases completed since init: the current phase's number; its parity is bit 0.
    phase: u64,
}

impl Mbarrier {
    /// `mbarrier.init [a], count`: phase 0, expected and pending `count`, tx-count 0 (PTX ISA
    /// §9.7.13.15.9). Also re-initialises a live or invalidated object.
    ///
    /// # Errors
    /// [`MbarrierError::Count`] for `count` outside 1 ..= [`MAX_COUNT`].
    pub fn init(&mut self, count: u32) -> Result<(), MbarrierError> {
        check_count("init", u64::from(count))?;
        *self = Mbarrier {
            life: Life::Live,
            expected: count,
            pending: count,
            drops: 0,
            tx: 0,
            phase: 0,
        };
        Ok(())
    }

    fn live(&self, op: &'static str) -> Result<(), MbarrierError> {
        match self.life {
            Life::Live => Ok(()),
            Life::Uninitialised => Err(MbarrierError::NotInitialised {
                op,
                state: "not initialised",
            }),
            Life::Invalidated => Err(MbarrierError::NotInitialised {
                op,
                state: "invalidated (mbarrier.inval)",
            }),
        }
    }

    /// Whether an object is live (initialised and not invalidated).
    pub fn is_live(&self) -> bool {
        self.life == Life::Live
    }

    /// The current phase's number (phases completed since init).
    pub fn phase(&self) -> u64 {
        self.phase
    }

    /// The current phase's parity, 0 or 1 (what `try_wait.parity` compares against).
    pub fn parity(&self) -> u32 {
        (self.phase & 1) as u32
    }

    /// Arrivals the current phase still waits for.
    pub fn pending(&self) -> u32 {
        self.pending
    }

    /// Arrivals each phase expects.
    pub fn expected(&self) -> u32 {
        self.expected
    }

    /// Transaction bytes still to arrive in the current phase (negative when more were
    /// completed than expected so far), bytes.
    pub fn tx_count(&self) -> i64 {
        self.tx
    }

    /// Completes the phase when nothing is pending (§9.7.13.15.1 "Phase Completion").
    fn settle(&mut self) {
        if self.pending == 0 && self.tx == 0 {
            self.phase += 1;
            self.expected -= self.drops;
            self.drops = 0;
            self.pending = self.expected;
        }
    }

    fn take(&mut self, op: &'static str, count: u32) -> Result<u64, MbarrierError> {
        self.live(op)?;
        check_count(op, u64::from(count))?;
        if count > self.pending {
            return Err(MbarrierError::TooManyArrivals {
                op,
                count,
                pending: self.pending,
                phase: self.phase,
                expected: self.expected,
            });
        }
        Ok(self.phase)
    }

    /// An arrive-on operation of `count` arrivals (`mbarrier.arrive{.shared}.b64 state, [a]{,
    /// count}`, PTX ISA §9.7.13.15.13): the pending count drops by `count`, and the phase
    /// completes if that leaves nothing pending. Returns the *state*: the phase number before
    /// the arrival (an opaque 64-bit value to PTX, for [`Mbarrier::test_wait`]).
    ///
    /// # Errors
    /// Not initialised; `count` outside 1 ..= [`MAX_COUNT`]; `count` above the pending count.
    pub fn arrive(&mut self, count: u32) -> Result<u64, MbarrierError> {
        let state = self.take("arrive", count)?;
        self.pending -= count;
        self.settle();
        Ok(state)
    }

    /// `mbarrier.arrive_drop` (PTX ISA §9.7.13.15.14): an arrive-on of `count` that also lowers
    /// the expected count of every following phase by `count` (a thread leaving the
    /// pipeline). Returns the state as [`Mbarrier::arrive`].
    ///
    /// # Errors
    /// As [`Mbarrier::arrive`].
    pub fn arrive_drop(&mut self, count: u32) -> Result<u64, MbarrierError> {
        let state = self.take("arrive_drop", count)?;
        self.pending -= count;
        // Each drop is one of this phase's arrivals: drops never exceed the expected count.
        self.drops += count;
        self.settle();
        Ok(state)
    }

    /// `mbarrier.expect_tx [a], txCount` (PTX ISA §9.7.13.15.11): the tx-count rises by `bytes`
    /// (and the phase completes if that brings a negative tx-count back to 0 with no arrival
    /// pending).
    ///
    /// # Errors
    /// Not initialised; the tx-count leaving ±[`MAX_TX_COUNT`].
    pub fn expect_tx(&mut self, bytes: u32) -> Result<(), MbarrierError> {
        self.live("expect_tx")?;
        self.tx = self.tx_after("expect_tx", bytes, 1)?;
        // A complete-tx that came first may leave this the phase's last change.
        self.settle();
        Ok(())
    }

    /// `mbarrier.arrive.expect_tx.b64 state, [a], txCount{, count}` (PTX ISA §9.7.13.15.13):
    /// expect-tx of `bytes`, then an arrive-on of `count`; nothing changes on an error.
    ///
    /// # Errors
    /// As [`Mbarrier::expect_tx`] and [`Mbarrier::arrive`].
    pub fn arrive_expect_tx(&mut self, bytes: u32, count: u32) -> Result<u64, MbarrierError> {
        self.live("arrive.expect_tx")?;
        let tx = self.tx_after("arrive.expect_tx", bytes, 1)?;
        self.take("arrive.expect_tx", count)?;
        self.tx = tx;
        self.arrive(count)
    }

    /// A complete-tx of `bytes` (`mbarrier.complete_tx`, PTX ISA §9.7.13.15.12, or the end of a
    /// `cp.async.bulk` with `.mbarrier::complete_tx::bytes`): the tx-count falls by `bytes` and
    /// the phase completes if nothing is pending.
    ///
    /// # Errors
    /// Not initialised; the tx-count leaving ±[`MAX_TX_COUNT`].
    pub fn complete_tx(&mut self, bytes: u32) -> Result<(), MbarrierError> {
        self.live("complete_tx")?;
        self.tx = self.tx_after("complete_tx", bytes, -1)?;
        self.settle();
        Ok(())
    }

    fn tx_after(&self, op: &'static str, bytes: u32, sign: i64) -> Result<i64, MbarrierError> {
        let new = self.tx + sign * i64::from(bytes);
        if new.abs() > MAX_TX_COUNT || i64::from(bytes) > MAX_TX_COUNT {
            return Err(MbarrierError::TxCount {
                op,
                bytes: u64::from(bytes),
                tx_count: self.tx,
                new,
            });
        }
        Ok(new)
    }

    /// `mbarrier.test_wait.b64 waitComplete, [a], state` (and `try_wait`, PTX ISA
    /// §9.7.13.15.16): whether the phase `state` names (an arrive's return value) has
    /// completed: true once the current phase is a later one. (Whether the object is live is
    /// [`Mbarrier::check_live`].)
    pub fn test_wait(&self, state: u64) -> bool {
        self.phase > state
    }

    /// `mbarrier.test_wait.parity.b64 waitComplete, [a], phaseParity` (and `try_wait.parity`,
    /// PTX ISA §9.7.13.15.16): `parity` names the current phase or the one before it by its
    /// parity (bit 0); true when that is the phase before, i.e. it differs from the current
    /// phase's parity.
    pub fn test_wait_parity(&self, parity: u32) -> bool {
        parity & 1 != self.parity()
    }

    /// Whether a wait may be asked at all: the object is live.
    ///
    /// # Errors
    /// [`MbarrierError::NotInitialised`] naming `op`.
    pub fn check_live(&self, op: &'static str) -> Result<(), MbarrierError> {
        self.live(op)
    }

    /// `mbarrier.inval [a]` (PTX ISA §9.7.13.15.10): the object ends; anything but `init` on
    /// it afterwards is an error.
    ///
    /// # Errors
    /// Not initialised.
    pub fn inval(&mut self) -> Result<(), MbarrierError> {
        self.live("inval")?;
        self.life = Life::Invalidated;
        Ok(())
    }
}

fn check_count(op: &'static str, count: u64) -> Result<(), MbarrierError> {
    if (1..=u64::from(MAX_COUNT)).contains(&count) {
        Ok(())
    } else {
        Err(MbarrierError::Count { op, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn isa_limits() {
        // PTX ISA §9.7.13.15: counts and the tx-count range are 2^20 - 1.
        assert_eq!(MAX_COUNT, 1_048_575);
        assert_eq!(MAX_TX_COUNT, 1_048_575);
        let mut b = Mbarrier::default();
        assert!(b.init(0).is_err());
        assert!(b.init(1_048_576).is_err());
        b.init(1_048_575).unwrap();
        assert_eq!(
            (b.pending(), b.expected(), b.phase()),
            (1_048_575, 1_048_575, 0)
        );
        assert!(b.arrive(1_048_576).is_err());
        assert!(b.expect_tx(1_048_575).is_ok());
        let e = b.expect_tx(1).unwrap_err();
        assert!(e.to_string().contains("1048576"), "{e}");
        // complete_tx first (TMA before expect_tx): the tx-count goes negative, down to the bound.
        let mut c = Mbarrier::default();
        c.init(1).unwrap();
        c.complete_tx(1_048_575).unwrap();
        assert_eq!(c.tx_count(), -1_048_575);
        assert!(c.complete_tx(1).is_err());
    }

    #[test]
    fn uninitialised_and_invalidated_are_errors() {
        let mut b = Mbarrier::default();
        let e = b.arrive(1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "mbarrier.arrive on an mbarrier object that is not initialised: initialise it with mbarrier.init first (PTX ISA §9.7.13.15, mbarrier)"
        );
        assert!(b.complete_tx(4).is_err() && b.expect_tx(4).is_err() && b.inval().is_err());
        b.init(2).unwrap();
        b.inval().unwrap();
        assert!(b.arrive(1).unwrap_err().to_string().contains("invalidated"));
        b.init(2).unwrap();
        assert_eq!(b.arrive(1), Ok(0));
    }

    #[test]
    fn more_arrivals_than_pending_is_an_error() {
        let mut b = Mbarrier::default();
        b.init(4).unwrap();
        b.arrive(3).unwrap();
        let e = b.arrive(2).unwrap_err();
        assert_eq!(
            e,
            MbarrierError::TooManyArrivals {
                op: "arrive",
                count: 2,
                pending: 1,
                phase: 0,
                expected: 4
            }
        );
        // Nothing changed.
        assert_eq!((b.pending(), b.phase()), (1, 0));
    }

    #[test]
    fn arrive_drop_lowers_the_following_phases() {
        // Two threads; one leaves with arrive_drop: phase 0 completes with both, phase 1
        // expects one.
        let mut b = Mbarrier::default();
        b.init(2).unwrap();
        b.arrive_drop(1).unwrap();
        assert_eq!(b.pending(), 1);
        b.arrive(1).unwrap();
        assert_eq!((b.phase(), b.expected(), b.pending()), (1, 1, 1));
        b.arrive(1).unwrap();
        assert_eq!(b.phase(), 2);
    }

    #[test]
    fn arrive_expect_tx_is_all_or_nothing() {
        let mut b = Mbarrier::default();
        b.init(1).unwrap();
        assert!(b.arrive_expect_tx(16, 2).is_err());
        assert_eq!((b.tx_count(), b.pending()), (0, 1));
    }

    /// One operation on a barrier of `n` expected arrivals.
    #[derive(Clone, Debug)]
    enum Step {
        Arrive(u32),
        Expect(u32),
        Complete(u32),
    }

    proptest! {
        /// A phase completes exactly when its N arrivals and as many completed bytes as
        /// expected have been given, in any order: never before the last of them.
        #[test]
        fn a_phase_completes_exactly_when_all_arrivals_and_bytes_are_in(
            n in 1u32..6,
            tx in proptest::collection::vec(1u32..5000, 0..4),
            seed in any::<u64>(),
        ) {
            let mut steps: Vec<Step> = (0..n).map(|_| Step::Arrive(1)).collect();
            for &t in &tx {
                steps.push(Step::Expect(t));
                steps.push(Step::Complete(t));
            }
            // A deterministic shuffle from the seed.
            let mut rng = crate::seeded::Seeded::new(seed);
            for i in (1..steps.len()).rev() {
                steps.swap(i, rng.int_in(0, i as i64) as usize);
            }
            // The phase completes at the first step after which every arrival is in and the
            // bytes completed equal the bytes expected (possibly a prefix of the
            // transactions: the ISA's rule looks only at the counts).
            let mut b = Mbarrier::default();
            b.init(n).unwrap();
            let (mut arrived, mut expected, mut completed) = (0u32, 0u64, 0u64);
            let total: u64 = tx.iter().map(|&t| u64::from(t)).sum();
            for (k, st) in steps.iter().enumerate() {
                prop_assert_eq!(b.phase(), 0, "completed early before step {}", k);
                match *st {
                    Step::Arrive(c) => { b.arrive(c).unwrap(); arrived += c; }
                    Step::Expect(t) => { b.expect_tx(t).unwrap(); expected += u64::from(t); }
                    Step::Complete(t) => { b.complete_tx(t).unwrap(); completed += u64::from(t); }
                }
                let done = arrived == n && expected == completed;
                prop_assert_eq!(b.phase() == 1, done, "after step {}", k);
                if done { break; }
            }
            prop_assert_eq!(b.phase(), 1);
            prop_assert!(completed <= total);
            prop_assert_eq!((b.pending(), b.tx_count()), (n, 0));
        }

        /// The parity alternates with each completed phase, and `test_wait.parity` of the
        /// previous phase's parity is true, of the current one false.
        #[test]
        fn parity_alternates(n in 1u32..5, phases in 1usize..9) {
            let mut b = Mbarrier::default();
            b.init(n).unwrap();
            for p in 0..phases {
                prop_assert_eq!(b.parity(), (p % 2) as u32);
                prop_assert!(!b.test_wait_parity(b.parity()));
                let st = b.arrive(n).unwrap();
                prop_assert_eq!(st, p as u64);
                prop_assert!(b.test_wait(st));
                prop_assert_eq!(b.parity(), ((p + 1) % 2) as u32);
                prop_assert!(b.test_wait_parity((p % 2) as u32));
            }
        }

        /// No sequence of operations with any values panics; each either succeeds or is an
        /// error, and a live barrier's counts stay in their ranges.
        #[test]
        fn no_sequence_panics(
            init in 0u32..8,
            ops in proptest::collection::vec((0u8..6, any::<u32>()), 0..40),
        ) {
            let mut b = Mbarrier::default();
            let _ = b.init(init);
            for (k, v) in ops {
                let v = if v % 3 == 0 { v } else { v % 9 };
                let _ = match k {
                    0 => b.arrive(v).map(|_| ()),
                    1 => b.arrive_drop(v).map(|_| ()),
                    2 => b.expect_tx(v),
                    3 => b.complete_tx(v),
                    4 => b.arrive_expect_tx(v, 1).map(|_| ()),
                    _ => b.inval(),
                };
                let _ = (b.test_wait(u64::from(v)), b.test_wait_parity(v));
                if b.is_live() {
                    prop_assert!(b.pending() <= b.expected());
                    prop_assert!(b.tx_count().abs() <= MAX_TX_COUNT);
                }
            }
        }
    }
}
