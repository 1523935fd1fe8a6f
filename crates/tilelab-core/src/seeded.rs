//! The one seeded generator of generated inputs (mma self-checks, GPU verify cases, request
//! fuzzing): ChaCha8 ([`chacha20::ChaCha8Rng`]), keyed from a `u64` seed by splitmix64.
//!
//! ChaCha8's keystream is fixed by its specification (the `chacha20` crate checks it against
//! known-answer tests), and the seed expansion and the maps to floats and integers below are
//! this module's own code: a given seed gives the same values on every machine and every
//! version of the libraries, which a recorded case (a seed in a measured data file) needs.
//! `rand`'s `StdRng` promises no such thing.

use chacha20::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

/// A deterministic stream of values from one `u64` seed.
#[derive(Debug)]
pub struct Seeded(ChaCha8Rng);

/// splitmix64 (Steele, Lea, Flood 2014): one step of the seed expansion.
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Seeded {
    /// The stream of `seed`: ChaCha8 keyed with four splitmix64 outputs of `seed` (little-endian),
    /// stream 0, position 0.
    pub fn new(seed: u64) -> Seeded {
        let mut key = [0u8; 32];
        let mut x = seed;
        for chunk in key.chunks_exact_mut(8) {
            chunk.copy_from_slice(&splitmix64(&mut x).to_le_bytes());
        }
        Seeded(ChaCha8Rng::from_seed(key))
    }

    /// The next 64 bits of the keystream.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `[0, 1)`, 53 bits (the top 53 bits of [`Self::next_u64`] over 2^53).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Standard normal N(0, 1) by Box-Muller on two draws in `(0, 1)` (never 0: no `ln 0`).
    pub fn normal(&mut self) -> f64 {
        let mut open = || ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let (u1, u2) = (open(), open());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Uniform integer in `lo..=hi` (`lo <= hi`), by rejection (no modulo bias).
    ///
    /// # Panics
    /// When `lo > hi` (a caller's constant range, never input).
    pub fn int_in(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi, "Seeded::int_in: empty range {lo}..={hi}");
        let span = (hi as i128 - lo as i128 + 1) as u128;
        if span > u128::from(u64::MAX) {
            return self.next_u64() as i64;
        }
        let span = span as u64;
        // The largest multiple of `span` that fits: values at or above it are redrawn.
        let zone = u64::MAX - (u64::MAX % span + 1) % span;
        loop {
            let v = self.next_u64();
            if v <= zone {
                return (lo as i128 + (v % span) as i128) as i64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// splitmix64 from state 0: the reference outputs of Vigna's `splitmix64.c`.
    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        let mut x = 0u64;
        assert_eq!(splitmix64(&mut x), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut x), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(splitmix64(&mut x), 0x06C4_5D18_8009_454F);
    }

    /// ChaCha8 keyed with zeros: the first keystream words of the reference implementation
    /// (the ChaCha8 test vector of the `rand_chacha`/`chacha20` known answers: key 0, nonce 0).
    #[test]
    fn chacha8_zero_key_matches_the_known_answer() {
        let mut r = ChaCha8Rng::from_seed([0u8; 32]);
        let mut first = [0u8; 8];
        first.copy_from_slice(&r.next_u64().to_le_bytes());
        assert_eq!(first, [0x3e, 0x00, 0xef, 0x2f, 0x89, 0x5f, 0x40, 0xd6]);
    }

    #[test]
    fn one_seed_one_stream_and_ranges_hold() {
        let (mut a, mut b) = (Seeded::new(7), Seeded::new(7));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Seeded::new(7).next_u64(), Seeded::new(8).next_u64());
        let mut r = Seeded::new(1);
        let mut seen = [false; 9];
        for _ in 0..1000 {
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
            let k = r.int_in(-4, 4);
            assert!((-4..=4).contains(&k));
            seen[(k + 4) as usize] = true;
            assert!(r.normal().is_finite());
        }
        assert!(
            seen.iter().all(|&s| s),
            "every value of -4..=4 drawn in 1000 draws"
        );
    }
}
