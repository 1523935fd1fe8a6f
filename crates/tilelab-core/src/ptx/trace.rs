//! A bounded record of one warp's shared-memory and tensor-core instructions: the feed of
//! `tilelab tui --ptx` (issues 17, 27). [`Recorder`] is an [`Observer`]: pass it to
//! [`super::report::simulate_program`] with the warp to follow and it keeps, in that warp's
//! program order, every `ld/st.shared`, `ldmatrix`, `stmatrix`, `cp.async` (shared side) and
//! `mma.sync` execution as a [`Recorded`] (the executor's [`Step`] with its instruction index
//! and PTX line), and the Hopper events ([`Hopper`]: `wgmma.mma_async`, bulk copies, mbarrier
//! operations and landings), up to [`Recorder::cap`] of them; the rest are counted in
//! [`Recorder::dropped`], never silently lost. [`Recorder::following`] traced with
//! [`super::engine::ALL_WARPS`] also counts every warp's [`WarpActivity`], whose
//! [`WarpActivity::role`] is the warp's producer/consumer role. Pure: no I/O.
//!
//! ```
//! use tilelab_core::ptx::{self, Launch, trace::Recorder};
//! let src = ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<3>;\n.shared .align 4 .b8 s[4096];\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 7;\nld.shared.b32 %r0, [%r2];\nld.shared.b32 %r0, [%r2+4];\nret;\n}\n";
//! let launch = Launch { grid: [1, 1, 1], block: [32, 1, 1], cta: [0, 0, 0], cluster: None,
//!     args: vec![], tensor_maps: vec![], dynamic_smem: None, max_instructions: 1_000_000 };
//! let prog = ptx::report::load(src, None).unwrap();
//! let mut rec = Recorder::new(1);
//! ptx::report::simulate_program(&prog, &launch, Some((0, &mut rec))).unwrap();
//! // The cap keeps the first load (line 10: rows 128 bytes apart, 32 wavefronts) and counts
//! // the second.
//! assert_eq!((rec.steps.len(), rec.dropped), (1, 1));
//! assert_eq!((rec.steps[0].line, rec.steps[0].step.cost.wavefronts), (10, 32));
//! ```

use super::engine::{BulkEvent, MbarrierEvent, Observer, TraceEvent, TraceKind, WgmmaEvent};
use super::warp_ops::Step;

/// Steps a [`Recorder`] keeps by default: about 7 MB (one [`Step`] is under 700 bytes: 32
/// lane addresses, 32x4 registers, the cost).
pub const DEFAULT_CAP: usize = 10_000;

/// One recorded execution of the followed warp.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// Instruction index into [`super::decode::Program::insts`].
    pub pc: u32,
    /// 1-based PTX line.
    pub line: u32,
    /// Lanes that executed it (guard applied).
    pub mask: u32,
    /// What the executor did: for shared-memory instructions the request (32 lane byte
    /// addresses in the shared window), its cost (wavefronts, ideal) and the registers loaded;
    /// for an `mma` no request, zero cost and D in `regs` (f32 bit patterns); for a Hopper
    /// event (see [`Self::hopper`]) an empty step.
    pub step: Step,
    /// A `wgmma.mma_async`, bulk copy or mbarrier operation (`None` for the warp-level steps).
    pub hopper: Option<Hopper>,
}

/// The Hopper events a [`Recorder`] keeps, as the engine gave them (fixed size: a trace's
/// bytes stay [`Recorder::cap`] times one [`Recorded`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hopper {
    /// `wgmma.mma_async` of the warp's warpgroup.
    Wgmma(WgmmaEvent),
    /// A bulk copy (TMA) one lane issued.
    Bulk(BulkEvent),
    /// An mbarrier operation, or a bulk copy's bytes landing on one.
    Mbarrier(MbarrierEvent),
}

/// What one warp executed of the instructions that give a warp-specialised kernel's roles:
/// bulk copies issued (one per issuing lane), `wgmma.mma_async` taken part in, mbarrier
/// instructions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarpActivity {
    /// Bulk copies into shared memory (`cp.async.bulk{.tensor}` global -> shared, SASS
    /// `UTMALDG`/`UBLKCP`) issued.
    pub bulk_copies: u64,
    /// Bulk copies out of shared memory (stores and reductions to global, SASS `UTMASTG`,
    /// `UBLKCP`, `UTMAREDG`) issued: a consumer's epilogue, not a producer's work.
    pub bulk_stores: u64,
    /// `wgmma.mma_async` executions (SASS `HGMMA`) of the warp's warpgroup.
    pub wgmma: u64,
    /// mbarrier instructions executed (warp instructions).
    pub mbarrier_ops: u64,
}

/// A warp's role, derived from what it executed ([`WarpActivity`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Issued bulk copies into shared memory (TMA loads) and no wgmma: it feeds shared memory.
    Producer,
    /// Took part in wgmma and issued no bulk copy into shared memory (a TMA store of its
    /// results is allowed): it computes on what was fed.
    Consumer,
    /// Both (a kernel without warp specialisation).
    Both,
    /// Neither.
    Other,
}

impl Role {
    /// `producer`, `consumer`, `producer+consumer`, `-`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Producer => "producer",
            Role::Consumer => "consumer",
            Role::Both => "producer+consumer",
            Role::Other => "-",
        }
    }
}

impl WarpActivity {
    /// The role: a warp that issues bulk copies into shared memory is a producer, one that
    /// issues wgmma a consumer (FlashAttention-3's consumer warps also store O by TMA).
    pub fn role(&self) -> Role {
        match (self.bulk_copies > 0, self.wgmma > 0) {
            (true, false) => Role::Producer,
            (false, true) => Role::Consumer,
            (true, true) => Role::Both,
            (false, false) => Role::Other,
        }
    }
}

/// The most warps a CTA has (1024 threads, CUDA's block limit): [`Recorder::warps`]' bound.
pub const MAX_WARPS: usize = 32;

impl Recorded {
    /// Bank conflicts of this execution (wavefronts − ideal; 0 for mma and for a `cp.async`
    /// the model does not cost).
    pub fn bank_conflicts(&self) -> u32 {
        self.step
            .cost
            .wavefronts
            .saturating_sub(self.step.cost.ideal)
    }

    /// Whether it is an `mma.sync` (no shared-memory request, no Hopper event).
    pub fn is_mma(&self) -> bool {
        self.step.request.is_none() && self.hopper.is_none()
    }
}

/// Keeps the first [`Self::cap`] shared-memory, mma and Hopper events (wgmma, bulk copies,
/// mbarrier operations) of the traced warp, and every warp's [`WarpActivity`].
#[derive(Clone, Debug)]
pub struct Recorder {
    /// Most steps kept.
    pub cap: usize,
    /// The warp whose steps are kept (`None`: every event given); trace with
    /// [`super::engine::ALL_WARPS`] so that [`Self::warps`] sees every warp.
    pub follow: Option<u32>,
    /// The kept steps, in the warp's program order.
    pub steps: Vec<Recorded>,
    /// Executions seen after the cap was reached (not kept).
    pub dropped: u64,
    /// What each warp executed (index: warp; at most [`MAX_WARPS`]).
    pub warps: Vec<WarpActivity>,
}

impl Recorder {
    /// An empty recorder keeping at most `cap` steps of whatever it is given.
    pub fn new(cap: usize) -> Recorder {
        Recorder {
            cap,
            follow: None,
            steps: Vec::new(),
            dropped: 0,
            warps: Vec::new(),
        }
    }

    /// An empty recorder keeping at most `cap` steps of warp `warp` and the activity of every
    /// warp it is given.
    pub fn following(warp: u32, cap: usize) -> Recorder {
        Recorder {
            follow: Some(warp),
            ..Recorder::new(cap)
        }
    }

    fn count(&mut self, ev: &TraceEvent<'_>) {
        let w = ev.warp as usize;
        if w >= MAX_WARPS {
            return;
        }
        if self.warps.len() <= w {
            self.warps.resize(w + 1, WarpActivity::default());
        }
        let a = &mut self.warps[w];
        match ev.kind {
            TraceKind::Bulk(b) if b.form.is_store() => a.bulk_stores += 1,
            TraceKind::Bulk(_) => a.bulk_copies += 1,
            TraceKind::Wgmma(_) => a.wgmma += 1,
            TraceKind::Mbarrier(m) if m.op.is_some() => a.mbarrier_ops += 1,
            _ => {}
        }
    }
}

impl Observer for Recorder {
    fn reserved(&self) -> (u64, String) {
        let each = std::mem::size_of::<Recorded>();
        (
            (self.cap as u64)
                .saturating_mul(each as u64)
                .saturating_add((MAX_WARPS * std::mem::size_of::<WarpActivity>()) as u64),
            format!("trace of {} steps x {each} bytes (--max-steps)", self.cap),
        )
    }

    fn event(&mut self, ev: &TraceEvent<'_>) {
        self.count(ev);
        if self.follow.is_some_and(|w| w != ev.warp) {
            return;
        }
        if self.steps.len() >= self.cap {
            self.dropped += 1;
            return;
        }
        let empty = |regs| Step {
            request: None,
            cost: Default::default(),
            regs,
            regs_per_lane: 4,
            reg_lanes: ev.mask,
            stored_lanes: 0,
        };
        let (step, hopper) = match ev.kind {
            TraceKind::Shared(s) => (s.clone(), None),
            TraceKind::Mma(d) => (empty(*d), None),
            TraceKind::Wgmma(e) => (empty([[0; 4]; 32]), Some(Hopper::Wgmma(*e))),
            TraceKind::Bulk(e) => (empty([[0; 4]; 32]), Some(Hopper::Bulk(*e))),
            TraceKind::Mbarrier(e) => (empty([[0; 4]; 32]), Some(Hopper::Mbarrier(*e))),
        };
        self.steps.push(Recorded {
            pc: ev.pc,
            line: ev.line,
            mask: ev.mask,
            step,
            hopper,
        });
    }
}

/// The worst execution of one PTX line over every warp it is given (trace with
/// [`super::engine::ALL_WARPS`]): the most bank conflicts, then the most wavefronts, the
/// earliest on ties. Feeds `tilelab ptx --svg FILE --line N`.
#[derive(Clone, Debug)]
pub struct WorstOfLine {
    /// The PTX line watched.
    pub line: u32,
    /// Executions of the line seen (shared-memory and mma).
    pub executions: u64,
    /// The worst shared-memory execution so far, with its warp.
    pub worst: Option<(u32, Recorded)>,
    /// Whether the line ran an mma (no shared-memory access to picture).
    pub saw_mma: bool,
}

impl WorstOfLine {
    /// Watches `line`.
    pub fn new(line: u32) -> WorstOfLine {
        WorstOfLine {
            line,
            executions: 0,
            worst: None,
            saw_mma: false,
        }
    }
}

impl Observer for WorstOfLine {
    fn event(&mut self, ev: &TraceEvent<'_>) {
        if ev.line != self.line {
            return;
        }
        let s = match ev.kind {
            TraceKind::Shared(s) => s,
            TraceKind::Mma(_) | TraceKind::Wgmma(_) => {
                self.executions += 1;
                self.saw_mma = true;
                return;
            }
            TraceKind::Bulk(_) | TraceKind::Mbarrier(_) => return,
        };
        self.executions += 1;
        let key = |c: &crate::sim::bank::RequestCost| {
            (c.wavefronts.saturating_sub(c.ideal), c.wavefronts)
        };
        if self
            .worst
            .as_ref()
            .is_none_or(|(_, r)| key(&s.cost) > key(&r.step.cost))
        {
            self.worst = Some((
                ev.warp,
                Recorded {
                    pc: ev.pc,
                    line: ev.line,
                    mask: ev.mask,
                    step: s.clone(),
                    hopper: None,
                },
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::{self, Launch, engine::ALL_WARPS};

    /// Two warps; lane l of warp w loads the word at byte `l << (2 + 5w)` (PTX lines 13 and
    /// 14): warp 0 reads 32 consecutive words (1 wavefront, no conflict), warp 1 rows 128
    /// bytes apart, every lane in bank 0 (32 wavefronts, 31 conflicts). Line 14 adds 4 bytes.
    /// Line 17: both warps read words 0..31 (1 wavefront each, a tie).
    const SRC: &str = ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<6>;\n.shared .align 4 .b8 s[16384];\nmov.u32 %r1, %tid.x;\nshr.u32 %r3, %r1, 5;\nmul.lo.u32 %r4, %r3, 5;\nadd.u32 %r4, %r4, 2;\nshl.b32 %r2, %r1, %r4;\nld.shared.b32 %r0, [%r2];\nld.shared.b32 %r0, [%r2+4];\nand.b32 %r5, %r1, 31;\nshl.b32 %r5, %r5, 2;\nld.shared.b32 %r0, [%r5];\nret;\n}\n";

    fn run(warp: u32, obs: &mut dyn Observer) {
        let launch = Launch {
            grid: [1, 1, 1],
            block: [64, 1, 1],
            cta: [0, 0, 0],
            args: vec![],
            tensor_maps: vec![],
            dynamic_smem: None,
            max_instructions: 1_000_000,
            cluster: None,
        };
        let prog = ptx::report::load(SRC, None).unwrap();
        ptx::report::simulate_program(&prog, &launch, Some((warp, obs))).unwrap();
    }

    #[test]
    fn recorder_keeps_the_followed_warp_up_to_its_cap() {
        let mut all = Recorder::new(5);
        run(1, &mut all);
        assert_eq!((all.steps.len(), all.dropped), (3, 0));
        let lines: Vec<u32> = all.steps.iter().map(|r| r.line).collect();
        assert_eq!(lines, [13, 14, 17]);
        let s = &all.steps[0];
        assert_eq!((s.step.cost.wavefronts, s.bank_conflicts()), (32, 31));
        assert!(!s.is_mma() && s.mask == u32::MAX);
        let mut one = Recorder::new(1);
        run(0, &mut one);
        assert_eq!((one.steps.len(), one.dropped), (1, 2));
        assert_eq!(one.steps[0].bank_conflicts(), 0);
        let mut none = Recorder::new(0);
        run(0, &mut none);
        assert_eq!((none.steps.len(), none.dropped), (0, 3));
    }

    #[test]
    fn worst_of_a_line_is_the_warp_with_the_most_conflicts() {
        let mut w = WorstOfLine::new(14);
        run(ALL_WARPS, &mut w);
        assert_eq!(w.executions, 2);
        let (warp, r) = w.worst.as_ref().unwrap();
        assert_eq!((*warp, r.line, r.bank_conflicts()), (1, 14, 31));
        assert!(!w.saw_mma);
        // A tie keeps the earliest warp.
        let mut tie = WorstOfLine::new(17);
        run(ALL_WARPS, &mut tie);
        let (warp, r) = tie.worst.as_ref().unwrap();
        assert_eq!((tie.executions, *warp, r.step.cost.wavefronts), (2, 0, 1));
        let mut other = WorstOfLine::new(12);
        run(ALL_WARPS, &mut other);
        assert_eq!((other.executions, other.worst.is_none()), (0, true));
    }
}
