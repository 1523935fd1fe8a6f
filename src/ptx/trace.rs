//! A bounded record of one warp's shared-memory and tensor-core instructions: the feed of
//! `tilelab tui --ptx` (issue 17). [`Recorder`] is an [`Observer`]: pass it to
//! [`super::report::simulate_program`] with the warp to follow and it keeps, in that warp's
//! program order, every `ld/st.shared`, `ldmatrix`, `stmatrix`, `cp.async` (shared side) and
//! `mma.sync` execution as a [`Recorded`] (the executor's [`Step`] with its instruction index
//! and PTX line), up to [`Recorder::cap`] of them; the rest are counted in
//! [`Recorder::dropped`], never silently lost. Pure: no I/O.
//!
//! ```
//! use tilelab::ptx::{self, Launch, trace::Recorder};
//! let src = ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<3>;\n.shared .align 4 .b8 s[4096];\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 7;\nld.shared.b32 %r0, [%r2];\nld.shared.b32 %r0, [%r2+4];\nret;\n}\n";
//! let launch = Launch { grid: [1, 1, 1], block: [32, 1, 1], cta: [0, 0, 0], args: vec![],
//!     tensor_maps: vec![], dynamic_smem: None, max_instructions: 1_000_000,
//!     cluster: [1, 1, 1] };
//! let prog = ptx::report::load(src, None).unwrap();
//! let mut rec = Recorder::new(1);
//! ptx::report::simulate_program(&prog, &launch, Some((0, &mut rec))).unwrap();
//! // The cap keeps the first load (line 10: rows 128 bytes apart, 32 wavefronts) and counts
//! // the second.
//! assert_eq!((rec.steps.len(), rec.dropped), (1, 1));
//! assert_eq!((rec.steps[0].line, rec.steps[0].step.cost.wavefronts), (10, 32));
//! ```

use super::engine::{Observer, TraceEvent, TraceKind};
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
    /// for an `mma` no request, zero cost and D in `regs` (f32 bit patterns).
    pub step: Step,
}

impl Recorded {
    /// Bank conflicts of this execution (wavefronts − ideal; 0 for mma and for a `cp.async`
    /// the model does not cost).
    pub fn bank_conflicts(&self) -> u32 {
        self.step
            .cost
            .wavefronts
            .saturating_sub(self.step.cost.ideal)
    }

    /// Whether it is an `mma` (no shared-memory request).
    pub fn is_mma(&self) -> bool {
        self.step.request.is_none()
    }
}

/// Keeps the first [`Self::cap`] shared-memory and mma executions of the traced warp.
#[derive(Clone, Debug)]
pub struct Recorder {
    /// Most steps kept.
    pub cap: usize,
    /// The kept steps, in the warp's program order.
    pub steps: Vec<Recorded>,
    /// Executions seen after the cap was reached (not kept).
    pub dropped: u64,
}

impl Recorder {
    /// An empty recorder keeping at most `cap` steps.
    pub fn new(cap: usize) -> Recorder {
        Recorder {
            cap,
            steps: Vec::new(),
            dropped: 0,
        }
    }
}

impl Observer for Recorder {
    fn reserved(&self) -> (u64, String) {
        let each = std::mem::size_of::<Recorded>();
        (
            (self.cap as u64).saturating_mul(each as u64),
            format!("trace of {} steps x {each} bytes (--max-steps)", self.cap),
        )
    }

    fn event(&mut self, ev: &TraceEvent<'_>) {
        if self.steps.len() >= self.cap {
            self.dropped += 1;
            return;
        }
        let step = match ev.kind {
            TraceKind::Shared(s) => s.clone(),
            TraceKind::Mma(d) => Step {
                request: None,
                cost: Default::default(),
                regs: *d,
                regs_per_lane: 4,
                reg_lanes: ev.mask,
                stored_lanes: 0,
            },
        };
        self.steps.push(Recorded {
            pc: ev.pc,
            line: ev.line,
            mask: ev.mask,
            step,
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
        self.executions += 1;
        let TraceKind::Shared(s) = ev.kind else {
            self.saw_mma = true;
            return;
        };
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
            cluster: [1, 1, 1],
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
