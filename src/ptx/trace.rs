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
//!     dynamic_smem: None, max_instructions: 1_000_000 };
//! let prog = ptx::report::load(src, None).unwrap();
//! let mut rec = Recorder::new(1);
//! ptx::report::simulate_program(&prog, &launch, Some((0, &mut rec))).unwrap();
//! // The cap keeps the first load (line 10: rows 128 bytes apart, 32 wavefronts) and counts
//! // the second.
//! assert_eq!((rec.steps.len(), rec.dropped), (1, 1));
//! assert_eq!((rec.steps[0].line, rec.steps[0].step.cost.wavefronts), (10, 32));
//! ```

use super::machine::{Observer, TraceEvent, TraceKind};
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
/// [`super::machine::ALL_WARPS`]): the most bank conflicts, then the most wavefronts, the
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
