//! The CTA engine (the interpreter's core; arithmetic in [`alu`], memory in
//! [`mem`], launch parameters in [`super::params`]): every warp of one CTA runs a decoded [`Program`] in lockstep, 32 lanes
//! under an active mask, until every lane has exited.
//!
//! * **Registers**: one flat `u64` array per warp, register `r` of lane `l` at `32·r + l`;
//!   special registers and variable addresses are written there once when the warp starts.
//! * **Divergence**: a SIMT stack per warp. A branch whose active lanes disagree replaces the
//!   top entry by its reconvergence point (the immediate post-dominator, [`super::cfg`]) with
//!   the whole mask, and pushes the fall-through and taken paths, each with that reconvergence
//!   point; an entry is popped when its pc reaches its reconvergence point or its lanes have
//!   all exited. Correct for loops (the back edge's reconvergence point is the loop exit) and
//!   nested ifs; lanes leaving a loop early wait at its exit.
//! * **Barriers**: warps are run one at a time until they exit or reach `bar.sync`; a barrier
//!   releases when the threads it expects (its count, or every thread not exited) have arrived.
//!   When no warp can run and no barrier can release, the run stops with an error naming the
//!   waiting warps and lines (never a hang). `bar.sync` reached by part of a warp is an error
//!   (PTX: `bar.sync` is `.aligned`). A warp that goes once round a loop without changing a
//!   register or memory (`WState::Spin`) yields while another warp could write memory, and runs
//!   again once shared or global memory changed: spin-waits on another warp complete, and
//!   spinning while the others wait at a barrier is a prompt deadlock.
//! * **Launch**: [`params::check_launch`] (CUDA's grid and block limits, `.reqntid`, `.maxntid`),
//!   [`param_buffer`](params::param_buffer) and [`encode_arg`](params::encode_arg) (every `--arg`), and the bytes the launch will
//!   allocate, at most [`MAX_LAUNCH_BYTES`], all before anything is allocated.
//! * **Memory**: shared memory is one byte array of the CTA (static variables, then
//!   `.extern .shared` arrays); its warp instructions go through [`super::warp_ops`], the door
//!   to `sim`'s request model. Global memory: each pointer parameter (and each `.global`
//!   variable) is its own zero-filled buffer at [`super::decode::buffer_base`], allocated lazily in 64 KiB
//!   pages, at most [`MAX_GLOBAL_BYTES`](mem::MAX_GLOBAL_BYTES); an address outside every buffer is an error naming the
//!   line, as is one not naturally aligned in any state space. `cp.async` completes
//!   at issue (a legal schedule: PTX only promises completion by `cp.async.wait_group`).
//!   Local memory (`.local`, nvcc's `__local_depot0` stack frame): each thread its own
//!   zero-filled frame of [`Program::local_frame`] bytes, local address 0 its first byte;
//!   `ld/st.local` and generic addresses in the local window ([`LOCAL_WINDOW`](super::decode::LOCAL_WINDOW), reached through
//!   `cvta.local`) read and write the executing lane's frame, and an access past it is an error
//!   naming the line. Local accesses never touch shared memory or its counters (Nsight Compute
//!   books them as local, `LDL`/`STL`).
//! * **Budget**: `max_instructions` warp instructions costing at most
//!   [`UNITS_PER_INSTRUCTION`] units each on average ([`cost_units`]), then an error (runaway
//!   loops end within seconds).
//!
//! An optional [`Observer`] sees, for one chosen warp or all ([`ALL_WARPS`]), every
//! shared-memory and tensor-core instruction as it executes, and the Hopper events
//! ([`WgmmaEvent`], [`BulkEvent`], [`MbarrierEvent`]; the TUI stepper's feed); without one the
//! run pays nothing.

// The instruction families: `impl Machine` blocks of their own, parts of the engine.
pub mod alu;
mod hopper;
pub mod mem;
pub mod params;
mod sync;
mod tensormap;

use thiserror::Error;

use std::collections::BTreeMap;

use super::decode::{AsyncUnit, Inst, Op, Program, Space, Special, Src, buffer_base};
use super::warp_ops::{LaneRegs, Smem, Step};
use crate::sim::bank::WARP_SIZE;
use crate::sim::mbarrier::Mbarrier;
use mem::Global;
use params::{check_cluster, check_launch, check_smem, launch_params};
use sync::{AsyncOp, ClusterShape, Flow, NamedBar};

/// Errors of a run (launch arguments, or an instruction that cannot execute).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RunError {
    /// Bad launch configuration or arguments.
    #[error("{0}")]
    Launch(String),
    /// An instruction failed: the line and why.
    #[error("line {line}: {message}")]
    At {
        /// 1-based PTX line.
        line: u32,
        /// What went wrong.
        message: String,
    },
    /// The instruction budget ran out ([`Launch::max_instructions`] warp instructions, or their
    /// cost, see [`cost_units`]).
    #[error(
        "stopped after {executed} warp instructions at line {line}, warp {warp}: the --max-instructions budget of {limit} is spent (at most {limit} warp instructions costing at most {UNITS_PER_INSTRUCTION} units each on average: 1 each, {MEMORY_UNITS} a memory access, {MMA_UNITS} an mma.sync){waiting}; a runaway loop, or raise --max-instructions"
    )]
    Budget {
        /// The limit.
        limit: u64,
        /// Warp instructions executed.
        executed: u64,
        /// Line of the next instruction.
        line: u32,
        /// Warp.
        warp: u32,
        /// The warps waiting at barriers then, in words (`""`, or `"; warps 1-3 wait at
        /// barrier 0 (line 12)"`).
        waiting: String,
    },
    /// Warps wait at barriers that can never complete.
    #[error("deadlock: {0}")]
    Deadlock(String),
}

/// Cost units of an `mma.sync` toward the budget (see [`cost_units`]).
pub const MMA_UNITS: u64 = 64;
/// Cost units of a memory instruction toward the budget: `ld`/`st`/`atom`/`red` of any state
/// space but `.param`, `ldmatrix`, `stmatrix`, `cp.async` (see [`cost_units`]).
pub const MEMORY_UNITS: u64 = 32;
/// The average cost units per warp instruction a run may spend: a budget of N warp
/// instructions also stops the run once they have cost `N * UNITS_PER_INSTRUCTION` units.
pub const UNITS_PER_INSTRUCTION: u64 = 20;
/// The default [`Launch::max_instructions`] (`--max-instructions`): 3,000,000 warp instructions,
/// at most 60,000,000 cost units. The heaviest CTA of any known real kernel, the FA2 lesson
/// kernel's at S = 4096 (`tests/data/ptx/fa2_d128_bm128_causal_s4096_grid32.json`), runs
/// 270,596 warp instructions costing 5,206,852 units: over 11x headroom in both; an endless
/// loop of the costliest instructions stops within seconds (docs/ptx.md, "Budget").
pub const DEFAULT_MAX_INSTRUCTIONS: u64 = 3_000_000;
/// The largest [`Launch::max_instructions`] the command line accepts (`--max-instructions`):
/// 30,000,000 warp instructions, 10x the default and over 100x the heaviest known CTA: the
/// costliest endless loop (docs/ptx.md, "Budget": `ld.shared.v4`, 5.1 s per 3,000,000) then
/// stops within about a minute; an unbounded budget would let it run for hours (issue #26).
pub const MAX_INSTRUCTIONS_LIMIT: u64 = 30_000_000;

/// What one execution of `op` costs toward the budget, in units of a plain instruction's
/// simulation time: the simulator spends about 0.1 µs on an ALU or control instruction, 1 to 3
/// µs on a memory instruction (the request model, 32 lanes' addresses) and 7 µs on an
/// `mma.sync` (measured in a release build, loops of each kind: docs/ptx.md, "Budget").
pub fn cost_units(op: &Op) -> u64 {
    match op {
        Op::Mma { .. } | Op::Wgmma { .. } => MMA_UNITS,
        Op::Ld {
            space: Space::Param,
            ..
        } => 1,
        Op::Ld { .. }
        | Op::St { .. }
        | Op::Atom { .. }
        | Op::Ldmatrix { .. }
        | Op::Stmatrix { .. }
        | Op::CpAsync { .. }
        | Op::Bulk { .. }
        | Op::TensorMapReplace { .. }
        | Op::TensorMapCopy { .. } => MEMORY_UNITS,
        _ => 1,
    }
}

/// Warp numbers in words: `"warp 3"`, `"warps 0-2, 5"`.
fn warp_list(ws: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        let mut j = i;
        while j + 1 < ws.len() && ws[j + 1] == ws[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            ws[i].to_string()
        } else {
            format!("{}-{}", ws[i], ws[j])
        });
        i = j + 1;
    }
    format!(
        "warp{} {}",
        if ws.len() == 1 { "" } else { "s" },
        parts.join(", ")
    )
}

/// How to launch the one simulated CTA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Grid size in CTAs (x, y, z).
    pub grid: [u32; 3],
    /// Block size in threads (x, y, z).
    pub block: [u32; 3],
    /// Which CTA to simulate (`%ctaid`).
    pub cta: [u32; 3],
    /// Parameter values: (name or index, value as written).
    pub args: Vec<(String, String)>,
    /// `--tensor-map`s, in order (a map's index here is the one its handle holds).
    pub tensor_maps: Vec<params::TensorMapArg>,
    /// Dynamic shared memory in bytes; `None`: up to the sm_90 per-block limit.
    pub dynamic_smem: Option<u32>,
    /// Warp instructions before the run is stopped; the run also stops once their cost passes
    /// `max_instructions *` [`UNITS_PER_INSTRUCTION`] units ([`cost_units`]). Default
    /// [`DEFAULT_MAX_INSTRUCTIONS`].
    pub max_instructions: u64,
    /// CTAs per cluster (x, y, z) given at launch, `--cluster`; `None`: the launch names no
    /// cluster (the kernel's `.reqnctapercluster` shape, if it has one, else clusters of one
    /// CTA, not an explicit cluster launch). `Some([1, 1, 1])` is a cluster launch of one CTA
    /// per cluster, as `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` 1x1x1 is on the H200
    /// (`%is_explicit_cluster` true). Every CTA of the cluster containing `cta` runs, together
    /// ([`params::check_cluster`]).
    pub cluster: Option<[u32; 3]>,
}

/// Per-instruction counts of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstStats {
    /// Warp-level executions (issued with at least one lane on the path, guard or not).
    pub executions: u64,
    /// Executions with at least one lane's guard true (Nsight Compute's `_pred_on_any`).
    pub pred_on: u64,
    /// Shared-memory wavefronts.
    pub wavefronts: u64,
    /// Conflict-free wavefronts (units).
    pub ideal: u64,
    /// Executions whose cost the request model does not give (`cp.async` outside the measured
    /// tile-copy class: `RequestCost::not_modelled`); their wavefronts are not in `wavefronts`.
    pub not_modelled: u64,
    /// `cp.async` only: bounds on ncu's SASS-attributed wavefronts
    /// (`sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum`), lowest and highest:
    /// a modelled execution adds its wavefronts to both, a spread-source one its
    /// [`crate::sim::bank::SassBounds`].
    pub sass_bounds: [u64; 2],
    /// `cp.async` executions without such bounds (`.cg`, zero-filled `.ca`).
    pub sass_unbounded: u64,
    /// `wgmma.mma_async` only: warpgroup executions (each also counts 4 warp `executions`).
    pub wgmma: u64,
    /// `wgmma.mma_async` only: operand wavefronts, the bytes of A (from a descriptor) and B
    /// read from shared memory / 128 per execution (H200:
    /// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma`, tests/data/ptx_hopper/README.md).
    pub gmma_wavefronts: u64,
    /// Bulk copies only: copies issued (one per lane whose guard is true).
    pub tma_ops: u64,
    /// Bulk copies only: bytes moved, the whole box per tensor copy (H200:
    /// `l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld` for loads,
    /// `l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st` for stores). A multicast load
    /// counts its box once per CTA it lands in (H200: the receiving CTAs' `_dest_multicast`
    /// bytes, tests/data/ptx_hopper/hand_cluster_mc_wgmma.json).
    pub tma_bytes: u64,
    /// `ld`/`st`/`atom`/`red` reaching another CTA's shared memory (distributed shared memory,
    /// `.shared::cluster` or a generic address from `mapa`): executions with such a lane (H200:
    /// `smsp__sass_inst_executed_op_dshared_st.sum` for stores; not in the shared wavefronts).
    pub dshared: u64,
    /// Their bytes, every such lane's (H200: `l1tex__t_bytes_pipe_lsu_mem_dshared_op_st.sum`).
    pub dshared_bytes: u64,
    /// `tensormap.replace` and `tensormap.cp_fenceproxy` only: over the executions, the
    /// distinct tensor-map objects in shared memory that the lanes whose guard is true name
    /// (the source map of a copy). The PTX model gives these instructions no wavefronts; ptxas
    /// expands each into `LDS`/`STS` of the object's words, one wavefront per distinct object
    /// (`tilelab::sass::report::Expansion`; H200, tests/data/ptx_hopper/u2_device_desc_matmul.json).
    pub maps: u64,
}

impl InstStats {
    /// Adds another CTA's counts of the same instruction.
    pub fn add(&mut self, o: &InstStats) {
        self.executions += o.executions;
        self.pred_on += o.pred_on;
        self.wavefronts += o.wavefronts;
        self.ideal += o.ideal;
        self.not_modelled += o.not_modelled;
        self.sass_bounds[0] += o.sass_bounds[0];
        self.sass_bounds[1] += o.sass_bounds[1];
        self.sass_unbounded += o.sass_unbounded;
        self.wgmma += o.wgmma;
        self.gmma_wavefronts += o.gmma_wavefronts;
        self.tma_ops += o.tma_ops;
        self.tma_bytes += o.tma_bytes;
        self.dshared += o.dshared;
        self.dshared_bytes += o.dshared_bytes;
        self.maps += o.maps;
    }
}

/// What a run counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunResult {
    /// Per instruction (index into [`Program::insts`]).
    pub stats: Vec<InstStats>,
    /// Warp instructions executed.
    pub instructions: u64,
    /// Their cost toward the budget ([`cost_units`]).
    pub cost_units: u64,
    /// Shared memory modelled, in bytes.
    pub smem_bytes: u32,
    /// One past the highest shared byte accessed (the highest over the cluster's CTAs).
    pub smem_touched: u32,
    /// The cluster's shape in CTAs (x, y, z): `[1, 1, 1]` for a launch of one CTA.
    pub cluster: [u32; 3],
    /// Per CTA of the cluster, by cluster rank (`%cluster_ctarank`): its own counts; `stats`
    /// and `instructions` above are their sums.
    pub ctas: Vec<CtaRun>,
}

/// What one CTA of a cluster counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtaRun {
    /// Its `%ctaid`.
    pub cta: [u32; 3],
    /// Its `%cluster_ctarank`.
    pub rank: u32,
    /// Per instruction (index into [`Program::insts`]).
    pub stats: Vec<InstStats>,
    /// Warp instructions it executed.
    pub instructions: u64,
    /// One past the highest byte of its shared memory accessed.
    pub smem_touched: u32,
}

/// An instruction the observer sees.
#[derive(Clone, Debug)]
pub enum TraceKind<'a> {
    /// A shared-memory instruction (ld/st.shared, ldmatrix, stmatrix, cp.async): the request,
    /// its cost and the registers loaded.
    Shared(&'a Step),
    /// An mma: the D registers written.
    Mma(&'a LaneRegs),
    /// A `wgmma.mma_async` the warp took part in (each of the warpgroup's four warps sees it).
    Wgmma(&'a WgmmaEvent),
    /// A bulk copy (TMA box or plain bulk copy) one lane of the warp issued.
    Bulk(&'a BulkEvent),
    /// An mbarrier operation: an `mbarrier.*` instruction of the warp (all its lanes), or the
    /// complete-tx of a bulk copy the warp issued, when the asynchronous unit lands it.
    Mbarrier(&'a MbarrierEvent),
}

/// One `wgmma.mma_async` of a warpgroup as the engine executed it: what the TUI needs to show
/// the descriptors (decode with [`crate::sim::wgmma::MatrixDescriptor::decode`]), the core
/// matrices read ([`crate::sim::wgmma::MatrixDescriptor::core_matrix_rows_of`]) and the
/// accumulator map ([`crate::sim::wgmma::WgmmaKind::d_fragment`]). Fixed size (a trace of
/// them is bounded by its step count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaEvent {
    /// Warpgroup `g` (warps 4g..4g+3).
    pub warpgroup: u32,
    /// The form: N, D/A/B types.
    pub kind: crate::sim::wgmma::WgmmaKind,
    /// A's 64-bit matrix descriptor (uniform over the warpgroup), `None` when A comes from
    /// registers.
    pub a_desc: Option<u64>,
    /// B's 64-bit matrix descriptor.
    pub b_desc: u64,
    /// `imm-trans-a`, `imm-trans-b` (true: MN-major).
    pub trans: [bool; 2],
    /// The `scale-d` predicate's value (false: D = A·B, true: D += A·B).
    pub scale_d: bool,
    /// Shared-memory wavefronts of the operand reads, one per 128-byte core matrix
    /// ([`crate::sim::exec::WgmmaStep::wavefronts`]).
    pub wavefronts: u32,
}

/// One bulk copy as issued (`cp.async.bulk{.tensor}`, `cp.reduce.async.bulk{.tensor}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BulkEvent {
    /// The issuing lane.
    pub lane: u32,
    /// Which copy.
    pub form: super::decode::BulkForm,
    /// The tensor map (tensor copies): its box lands under its swizzle
    /// ([`crate::sim::tma::TensorMap::smem_box`], [`crate::sim::tma::TmaBox::smem_chunks`]).
    pub map: Option<crate::sim::tma::TensorMap>,
    /// The box's coordinates, elements, innermost first (entries past the rank 0).
    pub coords: [i64; crate::sim::tma::MAX_RANK],
    /// The shared-memory byte address (destination of a load, source of a store).
    pub smem: u32,
    /// The global byte address of a copy without a map.
    pub global: Option<u64>,
    /// Bytes moved: a load's transaction bytes (the whole box, zero fill included).
    pub bytes: u64,
    /// The mbarrier (shared byte address) a load completes its bytes on.
    pub mbar: Option<u32>,
}

/// An mbarrier's state ([`crate::sim::mbarrier::Mbarrier`]): the current phase, the arrivals
/// it still waits for, the expected count of a phase and the transaction count (bytes expected
/// and not yet completed; negative when bytes completed before they were expected).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MbarState {
    /// Phases completed so far (the phase's parity is `phase & 1`).
    pub phase: u64,
    /// Pending arrivals of the current phase.
    pub pending: u32,
    /// The arrival count a phase starts with (`mbarrier.init`'s count, less drops).
    pub expected: u32,
    /// Transaction bytes outstanding.
    pub tx: i64,
}

impl MbarState {
    /// The state of `m`; an uninitialised object reads as zeros.
    pub fn of(m: Option<&Mbarrier>) -> MbarState {
        m.map_or_else(MbarState::default, |m| MbarState {
            phase: m.phase(),
            pending: m.pending(),
            expected: m.expected(),
            tx: m.tx_count(),
        })
    }
}

/// One mbarrier operation: the object, what was done and its state before and after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MbarrierEvent {
    /// The object's shared byte address.
    pub addr: u32,
    /// The operation (`None`: the complete-tx of a bulk copy landing, [`Self::bytes`] bytes).
    pub op: Option<super::decode::MbarOp>,
    /// Threads that executed it (0 for a landing).
    pub threads: u32,
    /// Transaction bytes the operation expects or completes (per thread), if any.
    pub bytes: Option<u64>,
    /// A wait's answer (`try_wait`, `test_wait`: whether the phase had completed; a `try_wait`
    /// answered false blocks the warp and runs again once the phase completes).
    pub waited: Option<bool>,
    /// The phase or parity a wait asked about.
    pub wait_for: Option<u64>,
    /// State before the first thread's operation.
    pub before: MbarState,
    /// State after the last thread's.
    pub after: MbarState,
}

/// One traced execution.
#[derive(Clone, Debug)]
pub struct TraceEvent<'a> {
    /// Warp.
    pub warp: u32,
    /// Instruction index.
    pub pc: u32,
    /// PTX line.
    pub line: u32,
    /// Lanes that executed it (guard applied).
    pub mask: u32,
    /// What it did.
    pub kind: TraceKind<'a>,
}

/// The warp number that traces every warp of the CTA (each event names its warp).
pub const ALL_WARPS: u32 = u32::MAX;

/// Receives the traced warp's shared-memory, tensor-core, bulk-copy and mbarrier events.
pub trait Observer {
    /// Called once per execution, in program order of that warp.
    fn event(&mut self, ev: &TraceEvent<'_>);

    /// The most bytes this observer may keep during a run, and what they are in words (e.g.
    /// "trace of 10000 steps x 720 bytes (--max-steps)"): counted with the launch's own state
    /// against [`MAX_LAUNCH_BYTES`] before the run starts. None by default.
    fn reserved(&self) -> (u64, String) {
        (0, String::new())
    }
}

impl Observer for Vec<(u32, u32, Step)> {
    /// Keeps (pc, line, step) of shared-memory instructions.
    fn event(&mut self, ev: &TraceEvent<'_>) {
        if let TraceKind::Shared(s) = ev.kind {
            self.push((ev.pc, ev.line, s.clone()));
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Entry {
    pc: u32,
    mask: u32,
    rpc: u32,
}

/// What a warp is doing: running, blocked (one reason, [`Block`]), spinning, or exited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WState {
    Run,
    /// Waits; runs again when the scheduler finds the reason gone (`Machine::release`).
    Blocked(Block),
    /// Went once round a loop (back edge `line`) without changing anything: it waits for memory
    /// another warp writes, and runs again once the CTA's memory has changed since `epoch`.
    Spin {
        line: u32,
        epoch: u64,
    },
    Done,
}

/// Why a warp waits (the one list of blocking reasons of the scheduler).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Block {
    /// `bar.sync`/`barrier.sync`/`bar.red` at named barrier `id` (0..=15), for `count` threads
    /// or, without one, every thread of the CTA not exited (PTX ISA 9.7.13.1 bar, barrier).
    /// The warp's pc is past the barrier.
    Bar {
        id: u32,
        count: Option<u32>,
        line: u32,
    },
    /// `mbarrier.try_wait` on an incomplete phase: the object at shared byte `addr` was in
    /// phase `phase`; the warp re-executes the wait once that phase completed.
    Mbarrier { addr: u32, phase: u64, line: u32 },
    /// A unit's `wait_group n`: waits until at most `n` of its committed groups are pending.
    Group { unit: AsyncUnit, n: u32, line: u32 },
    /// `barrier.cluster.wait` after the warp's arrive in cluster phase `phase`.
    Cluster { phase: u64, line: u32 },
    /// `wgmma.mma_async` at instruction `pc`: waits for the other warps of its warpgroup
    /// (the last to arrive executes it for all four and releases them; pc is past it).
    Warpgroup { pc: u32, line: u32 },
}

pub(super) struct Warp {
    pub(super) regs: Vec<u64>,
    /// The 32 lanes' `.local` frames, lane `l`'s at `l · frame`; empty until the warp's first
    /// local access (zero-filled then).
    pub(super) local: Vec<u8>,
    pub(super) stack: Vec<Entry>,
    pub(super) state: WState,
    pub(super) live: u32,
    pub(super) exited: u32,
    /// Whether a register, this warp's memory or the CTA's changed since the last back edge
    /// taken (`mark`).
    pub(super) changed: bool,
    /// Counts-only runs: whether an instruction whose change of a register is not known ran
    /// since the last back edge taken: one whose computation was skipped (a pure ALU
    /// instruction, [`super::dataflow::Lanes::Skip`], or an uncomputed `mma`) or computed from
    /// values that may be stale ([`super::dataflow::Lanes::Inexact`]; its changes are left out
    /// of `changed`). Such an iteration's `changed` may not be the values run's, so the spin
    /// rule cannot decide on it (`Machine::branch`).
    pub(super) skipped: bool,
    /// The last back edge taken (branch index) and the SIMT stack there: a loop iteration that
    /// ends at the same back edge with the same stack and `changed` false changed nothing.
    pub(super) mark: Option<u32>,
    pub(super) mark_stack: Vec<Entry>,
    /// Per asynchronous unit ([`AsyncUnit`] as index): groups committed so far; an operation
    /// issued now belongs to the open group of this number.
    pub(super) groups: [u64; 3],
    /// `barrier.cluster.arrive` done in this cluster phase, not yet waited for.
    pub(super) cluster_arrived: Option<u64>,
}

/// The state of one CTA of the cluster that is its own: its warps, shared memory window,
/// named barriers, mbarriers and counts. The running CTA's lives in [`Machine`]'s fields
/// ([`Machine::enter`] swaps it in); the others' wait here.
pub(super) struct CtaState {
    pub(super) warps: Vec<Warp>,
    pub(super) smem: Smem,
    pub(super) stats: Vec<InstStats>,
    pub(super) touched: u32,
    pub(super) bars: [NamedBar; 16],
    pub(super) mbars: BTreeMap<u32, Mbarrier>,
    pub(super) cluster: ClusterShape,
    pub(super) executed: u64,
}

impl Default for CtaState {
    /// A hollow state (no warps, no shared memory): the running CTA's entry.
    fn default() -> Self {
        CtaState {
            warps: Vec::new(),
            smem: Smem::zeroed(0),
            stats: Vec::new(),
            touched: 0,
            bars: Default::default(),
            mbars: BTreeMap::new(),
            cluster: ClusterShape::default(),
            executed: 0,
        }
    }
}

/// Runs one CTA of `prog`.
///
/// # Errors
/// [`RunError`]: bad launch or arguments, an instruction that cannot execute (naming its line),
/// the budget, a deadlock.
pub fn run(
    prog: &Program,
    launch: &Launch,
    observer: Option<(u32, &mut dyn Observer)>,
) -> Result<RunResult, RunError> {
    let reserved = observer
        .as_ref()
        .map_or((0, String::new()), |(_, o)| o.reserved());
    let mut m = Machine::new(prog, launch, reserved)?;
    m.run(observer)?;
    Ok(m.finish())
}

/// [`run`] for counts only: the `mma` and `wgmma` instructions, and the pure ALU ones
/// ([`super::dataflow::pure_alu`]), whose results [`super::dataflow::plan`] shows reach no
/// address, guard, branch or checked operand are not computed (their destination registers
/// keep their old values; each is still counted), which changes no count and no error; the
/// others are computed as in [`run`]. Register and memory values of the result are not the
/// kernel's. A run whose spin rule would decide on a loop iteration that skipped a computation
/// is made again with values (`Machine::branch`).
///
/// # Errors
/// Those of [`run`].
pub fn run_counts(prog: &Program, launch: &Launch) -> Result<RunResult, RunError> {
    let params = launch_params(prog, launch).unwrap_or_default();
    run_counts_planned(prog, launch, &super::dataflow::plan(prog, &params))
}

/// [`run_counts`] with the plan already made (`plan`: [`super::dataflow::plan`] of `prog` and
/// the launch's parameter buffer; a caller running many CTAs of one launch plans once).
///
/// # Errors
/// Those of [`run`].
pub fn run_counts_planned(
    prog: &Program,
    launch: &Launch,
    plan: &super::dataflow::Plan,
) -> Result<RunResult, RunError> {
    let mut m = Machine::counts_only(prog, launch, plan)?;
    let r = m.run(None);
    if m.needs_values.get() || m.global.strayed.get() {
        // A tensor map was read from global memory, which a skipped result may have written
        // (the plan follows memory per state space and buffer, not per byte), an access left
        // the buffer the plan assumed, or a loop iteration that skipped an instruction would
        // have yielded as a spin (a computed result might have changed a register:
        // `Machine::branch`): count again with values.
        return run(prog, launch, None);
    }
    r?;
    Ok(m.finish())
}

pub(super) struct Machine<'p> {
    pub(super) prog: &'p Program,
    /// Compute every result (`false`: a counts-only run that skips some,
    /// [`run_counts_planned`]; `compute` says which tensor-core results are computed, `lanes`
    /// which ALU instructions are not).
    pub(super) values: bool,
    /// A counts-only run's plan: by instruction index, the tensor-core instructions computed
    /// ([`super::dataflow::Plan::compute`]).
    pub(super) compute: Option<&'p [bool]>,
    /// A counts-only run's plan: by instruction index, the pure ALU instructions whose lanes
    /// are not computed and the instructions computed from values that may be stale
    /// ([`super::dataflow::Plan::lanes`]); `None` in a run with values.
    pub(super) lanes: Option<&'p [super::dataflow::Lanes]>,
    /// A counts-only run's plan: by instruction index, the global buffers its accesses are
    /// assumed to stay in ([`super::dataflow::Plan::global`]; checked by [`Global::check`]).
    pub(super) global_plan: Option<&'p [super::dataflow::GlobalSet]>,
    /// A counts-only run's plan: by instruction index, the shared regions its `.shared`
    /// accesses are assumed to stay in, and the regions ([`super::dataflow::Plan::shared`];
    /// checked by [`Machine::shared_in_plan`]).
    pub(super) shared_plan: Option<(
        &'p [super::dataflow::SharedSet],
        &'p super::dataflow::Regions,
    )>,
    /// The regions the running instruction's `.shared` accesses are assumed to stay in
    /// ([`super::dataflow::ALL_SHARED`] outside a counts-only run's planned instructions).
    pub(super) shared_allowed: super::dataflow::SharedSet,
    /// Set by a counts-only run that read what a skipped result may have written and that the
    /// proof does not cover (a tensor map in global memory), or whose spin rule would have
    /// decided on a loop iteration that skipped a computation (`Machine::branch`): the run is
    /// made again with values.
    pub(super) needs_values: std::cell::Cell<bool>,
    pub(super) warps: Vec<Warp>,
    pub(super) smem: Smem,
    pub(super) global: Global,
    pub(super) params: Vec<u8>,
    pub(super) stats: Vec<InstStats>,
    pub(super) executed: u64,
    /// Cost units spent ([`cost_units`]).
    pub(super) units: u64,
    /// Stores to shared or global memory so far (spinning warps wait for it to change).
    pub(super) epoch: u64,
    pub(super) budget: u64,
    pub(super) nthreads: u32,
    pub(super) touched: u32,
    /// The sixteen named barriers of the CTA (PTX ISA 9.7.13.1).
    pub(super) bars: [NamedBar; 16],
    /// mbarrier objects by shared byte address ([`crate::sim::mbarrier`]); an address not
    /// here has never been initialised.
    pub(super) mbars: BTreeMap<u32, Mbarrier>,
    /// Asynchronous operations issued and not yet complete, in issue order ([`AsyncOp`]).
    pub(super) pending: Vec<AsyncOp>,
    /// `barrier.cluster` phases completed.
    pub(super) cluster_phase: u64,
    /// The launch's cluster ([`ClusterShape`]).
    pub(super) cluster: ClusterShape,
    /// The launch's tensor maps ([`Launch::tensor_maps`], parsed), by handle index.
    pub(super) tensor_maps: Vec<crate::sim::tma::TensorMap>,
    /// Every CTA of the cluster by rank; the running one's entry is hollow while its state is
    /// in the fields above ([`Machine::enter`]).
    pub(super) ctas: Vec<CtaState>,
    /// The running CTA's rank.
    pub(super) cur: usize,
    /// The rank of `--cta` (the CTA an observer watches).
    pub(super) home: usize,
    /// Warp instructions the running CTA executed.
    pub(super) cta_executed: u64,
    /// The accumulator buffer of `wgmma.mma_async` (128 threads x D registers), kept between
    /// instructions so that none allocates; its contents are written before every read.
    pub(super) wgmma_acc: Vec<u32>,
    /// The one `cp.async` shared-side request, refilled by each `cp.async` (its boxed source
    /// addresses allocated once per machine, not per instruction).
    pub(super) cp_request: crate::sim::bank::WarpRequest,
}

/// The most bytes of simulator state one launch may allocate when it starts: every warp's
/// register file (8 bytes per register an instruction names ([`Program::nregs`]), per lane,
/// 32 lanes per warp), every thread's `.local` frame, shared memory, the per-instruction
/// counters and an observer's trace (1 GiB = 1,073,741,824 bytes). Checked before anything is
/// allocated; whatever the decoder accepts, a launch past it is a one-line error naming the
/// need.
pub const MAX_LAUNCH_BYTES: u64 = 1 << 30;

impl<'p> Machine<'p> {
    /// The machine of a counts-only run of `prog` under `plan` ([`run_counts_planned`]): with
    /// values when the plan skips nothing, else with the plan's tensor-core, lane and buffer
    /// parts.
    ///
    /// # Errors
    /// A plan made for another program (its lengths differ), or those of [`Machine::new`].
    pub(super) fn counts_only(
        prog: &'p Program,
        launch: &Launch,
        plan: &'p super::dataflow::Plan,
    ) -> Result<Self, RunError> {
        for n in [
            plan.compute.len(),
            plan.lanes.len(),
            plan.global.len(),
            plan.shared.len(),
        ] {
            if n != prog.insts.len() {
                return Err(RunError::Launch(format!(
                    "a counts-only plan of {n} instructions for a program of {}",
                    prog.insts.len()
                )));
            }
        }
        let mut m = Machine::new(prog, launch, (0, String::new()))?;
        m.values = !plan.skips_any();
        if !m.values {
            m.compute = Some(&plan.compute);
            m.global_plan = Some(&plan.global);
            // With nothing placed (one region, or no placed access) there is nothing to check.
            if plan
                .shared
                .iter()
                .any(|&s| s != super::dataflow::ALL_SHARED)
            {
                m.shared_plan = Some((&plan.shared, &plan.regions));
            }
            m.lanes = Some(&plan.lanes);
        }
        Ok(m)
    }

    /// Whether the tensor-core instruction at `pc` computes its result ([`Machine::compute`]).
    pub(super) fn computes(&self, pc: usize) -> bool {
        self.values
            || self
                .compute
                .is_some_and(|c| c.get(pc).copied().unwrap_or(true))
    }

    pub(super) fn new(
        prog: &'p Program,
        l: &Launch,
        reserved: (u64, String),
    ) -> Result<Self, RunError> {
        let bad = |s: String| Err(RunError::Launch(s));
        let nthreads = check_launch(prog, l)?;
        let (dims, explicit) = check_cluster(prog, l)?;
        let params = launch_params(prog, l)?;
        let smem_bytes = check_smem(prog, l)?;
        let nctas: u32 = dims.iter().product();
        // What the launch will allocate, bounded before anything is: every CTA of the cluster
        // its own registers, frames, shared memory and counters.
        let nwarps = nthreads.div_ceil(32);
        let lanes = u64::from(nwarps) * WARP_SIZE as u64;
        let regs = u64::from(prog.nregs) * lanes * 8;
        let local = u64::from(prog.local_frame) * lanes;
        let stats = prog.insts.len() as u64 * std::mem::size_of::<InstStats>() as u64;
        let per_cta = [regs, local, u64::from(smem_bytes), stats]
            .iter()
            .try_fold(0u64, |a, &b| a.checked_add(b));
        let need = per_cta
            .and_then(|c| c.checked_mul(u64::from(nctas)))
            .and_then(|c| c.checked_add(reserved.0));
        if need.is_none_or(|n| n > MAX_LAUNCH_BYTES) {
            return bad(format!(
                "the launch needs {} bytes of simulator memory, more than its limit of {MAX_LAUNCH_BYTES} bytes (tilelab::ptx::machine::MAX_LAUNCH_BYTES): registers {} per thread x {lanes} threads x 8 bytes = {regs}, .local {} bytes x {lanes} threads = {local}, shared {smem_bytes}, counters {stats}{}{}; make the largest part smaller (fewer registers, threads or steps)",
                need.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string()),
                prog.nregs,
                prog.local_frame,
                if nctas > 1 {
                    format!(", each of the cluster's {nctas} CTAs")
                } else {
                    String::new()
                },
                if reserved.0 > 0 {
                    format!(", {} = {}", reserved.1, reserved.0)
                } else {
                    String::new()
                }
            ));
        }
        // Global buffers: one per parameter index (pointers only are used), then variables.
        let mut names: Vec<String> = prog.params.iter().map(|p| p.name.clone()).collect();
        names.extend(prog.globals.iter().map(|g| g.name.clone()));
        names.extend(params::tensor_map_names(&l.tensor_maps));
        let mut read_only = vec![false; prog.params.len()];
        read_only.extend(prog.globals.iter().map(|g| g.read_only));
        read_only.resize(names.len(), false);
        let mut global = Global {
            nbufs: names.len(),
            names,
            read_only,
            pages: Default::default(),
            allowed: std::cell::Cell::new(super::dataflow::ALL_GLOBAL),
            strayed: std::cell::Cell::new(false),
        };
        for (g, v) in prog.globals.iter().enumerate() {
            global
                .write(buffer_base(prog.params.len() + g), &v.bytes)
                .map_err(RunError::Launch)?;
        }
        let tensor_maps = l
            .tensor_maps
            .iter()
            .map(|m| m.map().map_err(RunError::Launch))
            .collect::<Result<Vec<_>, _>>()?;
        let ctas: Vec<CtaState> = (0..nctas)
            .map(|rank| {
                let cluster = ClusterShape::of(l, dims, explicit, rank);
                CtaState {
                    warps: make_warps(prog, l, &cluster, nthreads),
                    smem: Smem::zeroed(smem_bytes),
                    stats: vec![InstStats::default(); prog.insts.len()],
                    cluster,
                    ..CtaState::default()
                }
            })
            .collect();
        let home = ClusterShape::rank_of(l.cta, dims) as usize;
        let mut m = Machine {
            prog,
            values: true,
            compute: None,
            lanes: None,
            global_plan: None,
            shared_plan: None,
            shared_allowed: super::dataflow::ALL_SHARED,
            needs_values: std::cell::Cell::new(false),
            warps: Vec::new(),
            smem: Smem::zeroed(0),
            global,
            params,
            stats: Vec::new(),
            executed: 0,
            units: 0,
            epoch: 0,
            budget: l.max_instructions,
            nthreads,
            touched: 0,
            bars: Default::default(),
            mbars: BTreeMap::new(),
            pending: Vec::new(),
            cluster_phase: 0,
            cluster: ClusterShape::default(),
            tensor_maps,
            ctas,
            cur: home,
            home,
            cta_executed: 0,
            wgmma_acc: Vec::new(),
            cp_request: crate::sim::bank::WarpRequest {
                instruction: crate::sim::instr::Instruction::CpAsync(
                    crate::sim::instr::CpAsyncKind::Ca16,
                ),
                lane_byte_offsets: [0; 32],
                active_mask: 0,
                global_addrs: Some(Box::new([0; 32])),
            },
        };
        m.swap_cta(home);
        Ok(m)
    }

    /// Exchanges the running CTA's fields with entry `r` of [`Machine::ctas`].
    fn swap_cta(&mut self, r: usize) {
        let c = &mut self.ctas[r];
        std::mem::swap(&mut self.warps, &mut c.warps);
        std::mem::swap(&mut self.smem, &mut c.smem);
        std::mem::swap(&mut self.stats, &mut c.stats);
        std::mem::swap(&mut self.touched, &mut c.touched);
        std::mem::swap(&mut self.bars, &mut c.bars);
        std::mem::swap(&mut self.mbars, &mut c.mbars);
        std::mem::swap(&mut self.cluster, &mut c.cluster);
        std::mem::swap(&mut self.cta_executed, &mut c.executed);
    }

    /// Makes the CTA of rank `r` the running one (its warps, shared memory, barriers).
    pub(super) fn enter(&mut self, r: usize) {
        if r != self.cur {
            self.swap_cta(self.cur);
            self.swap_cta(r);
            self.cur = r;
        }
    }

    /// The CTAs of the cluster.
    pub(super) fn nctas(&self) -> usize {
        self.ctas.len()
    }

    /// The shared memory window of the CTA of rank `r`.
    pub(super) fn smem_of(&mut self, r: usize) -> &mut Smem {
        if r == self.cur {
            &mut self.smem
        } else {
            &mut self.ctas[r].smem
        }
    }

    /// The mbarriers of the CTA of rank `r`.
    pub(super) fn mbars_of(&mut self, r: usize) -> &mut BTreeMap<u32, Mbarrier> {
        if r == self.cur {
            &mut self.mbars
        } else {
            &mut self.ctas[r].mbars
        }
    }

    /// Every warp of the cluster (the running CTA's first).
    pub(super) fn all_warps(&self) -> impl Iterator<Item = &Warp> {
        self.warps
            .iter()
            .chain(self.ctas.iter().flat_map(|c| c.warps.iter()))
    }

    /// The counts of the run, per CTA and summed.
    fn finish(mut self) -> RunResult {
        self.swap_cta(self.cur);
        let mut stats = vec![InstStats::default(); self.prog.insts.len()];
        let mut ctas = Vec::with_capacity(self.ctas.len());
        for (r, c) in self.ctas.iter().enumerate() {
            for (t, s) in stats.iter_mut().zip(&c.stats) {
                t.add(s);
            }
            ctas.push(CtaRun {
                cta: c.cluster.cta(),
                rank: r as u32,
                stats: c.stats.clone(),
                instructions: c.executed,
                smem_touched: c.touched,
            });
        }
        RunResult {
            stats,
            instructions: self.executed,
            cost_units: self.units,
            smem_bytes: self.ctas[0].smem.len(),
            smem_touched: ctas.iter().map(|c| c.smem_touched).max().unwrap_or(0),
            cluster: self.ctas[0].cluster.dims,
            ctas,
        }
    }

    /// Runs the cluster's CTAs to the end: each round runs every runnable warp of each CTA
    /// (rank order), then releases what the round completed in each, wakes the spinning warps
    /// once memory changed, and completes the asynchronous work when nothing else can move.
    pub(super) fn run<'o>(
        &mut self,
        obs: Option<(u32, &mut (dyn Observer + 'o))>,
    ) -> Result<(), RunError> {
        // Every warp's events go through one observer that keeps the traced warp's: a wgmma
        // is executed by the last warp of its warpgroup to arrive, for all four, and a landing
        // copy's complete-tx belongs to the warp that issued it. Only `--cta`'s CTA of the
        // cluster is traced.
        let mut one;
        let mut obs: Option<&mut dyn Observer> = match obs {
            Some((ALL_WARPS, o)) => Some(o),
            Some((warp, inner)) => {
                one = OneWarp { warp, inner };
                Some(&mut one)
            }
            None => None,
        };
        let n = self.nctas();
        loop {
            for c in 0..n {
                self.enter(c);
                let home = c == self.home;
                for w in 0..self.warps.len() {
                    if self.warps[w].state == WState::Run {
                        let o = if home { obs.as_deref_mut() } else { None };
                        self.run_warp(w, o)?;
                    }
                }
            }
            if self.all_warps().all(|w| w.state == WState::Done) {
                // What is still in flight lands (its mbarrier effects), then the CTAs are done.
                self.complete_async(obs.as_deref_mut())?;
                return Ok(());
            }
            // A warp released by a later warp's arrival in this round runs next round.
            let mut released = self.all_warps().any(|w| w.state == WState::Run);
            for c in 0..n {
                self.enter(c);
                released |= self.release();
            }
            // A spinning warp runs again once memory changed since it began to spin.
            let epoch = self.epoch;
            let mut woke = false;
            let others = self.ctas.iter_mut().flat_map(|c| c.warps.iter_mut());
            for w in self.warps.iter_mut().chain(others) {
                if let WState::Spin { epoch: e, .. } = w.state
                    && e != epoch
                {
                    w.state = WState::Run;
                    woke = true;
                }
            }
            if !released && !woke {
                // Every live warp waits: the asynchronous units complete what they hold (a
                // legal schedule: PTX promises completion only at the waits), and the
                // scheduler looks again; with nothing in flight, no warp can ever run.
                if self.pending.is_empty() {
                    return Err(RunError::Deadlock(self.cluster_deadlock()));
                }
                self.complete_async(obs.as_deref_mut())?;
            }
        }
    }

    /// The deadlock message: [`Machine::deadlock_message`] for a CTA of its own; for a
    /// cluster, each CTA's warps under its `%ctaid` and rank.
    fn cluster_deadlock(&mut self) -> String {
        if self.nctas() == 1 {
            return self.deadlock_message();
        }
        let parts: Vec<String> = (0..self.nctas())
            .map(|c| {
                self.enter(c);
                let [x, y, z] = self.cluster.cta();
                format!(
                    "CTA ({x},{y},{z}) (cluster rank {c}): {}",
                    self.deadlock_message()
                )
            })
            .collect();
        parts.join(" | ")
    }

    /// The warps waiting at barriers, for the budget's message: `""` or
    /// `"; warps 1-3 wait at barrier 0 (line 12)"`.
    fn waiting(&self) -> String {
        let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
        for (i, w) in self.warps.iter().enumerate() {
            let what = match w.state {
                WState::Blocked(b) => self.block_words(&b, false),
                _ => continue,
            };
            match groups.iter_mut().find(|g| g.0 == what) {
                Some(g) => g.1.push(i as u32),
                None => groups.push((what, vec![i as u32])),
            }
        }
        groups
            .iter()
            .map(|(what, ws)| {
                let wait = if ws.len() == 1 { "waits" } else { "wait" };
                format!("; {} {wait} {what}", warp_list(ws))
            })
            .collect()
    }

    /// `message` of an instruction that failed, with the CTA that ran it when the run holds a
    /// cluster of several (`CTA (3,0,0): lane 0: …`); as it is for one CTA.
    fn in_cluster(&self, message: String) -> String {
        if self.ctas.len() > 1 {
            let [x, y, z] = self.cluster.cta();
            format!("CTA ({x},{y},{z}): {message}")
        } else {
            message
        }
    }

    /// One line for a run where no warp can go on: the warps grouped by what they wait for
    /// (`warps 0-3, 5 wait at barrier 0 (line 12)`, `warp 1 waits at mbarrier full+8 …`), so
    /// a 32-warp CTA reads as one clause, then why nothing can complete.
    fn deadlock_message(&self) -> String {
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        let (mut barrier, mut other) = (false, false);
        for (i, w) in self.warps.iter().enumerate() {
            let what = match w.state {
                WState::Blocked(b) => {
                    match b {
                        Block::Bar { .. } => barrier = true,
                        _ => other = true,
                    }
                    self.block_words(&b, true)
                }
                WState::Spin { line, .. } => format!(
                    "in the loop of line {line} (an iteration changes nothing, and no warp can write the memory it waits for)"
                ),
                WState::Done => "exited".to_string(),
                WState::Run => continue,
            };
            match groups.iter_mut().find(|(w, _)| *w == what) {
                Some((_, ws)) => ws.push(i),
                None => groups.push((what, vec![i])),
            }
        }
        let parts = groups.iter().map(|(what, ws)| {
            let verb = match (ws.len() == 1, what.as_str()) {
                (true, "exited") => "has",
                (false, "exited") => "have",
                (true, w) if w.starts_with("at ") => "waits",
                (false, w) if w.starts_with("at ") => "wait",
                (true, _) => "spins",
                (false, _) => "spin",
            };
            format!("{} {verb} {what}", warp_ranges(ws))
        });
        let why = match (barrier, other) {
            (true, false) => format!(
                "the barrier can never complete ({} threads in the CTA)",
                self.nthreads
            ),
            (_, true) => format!(
                "no warp that could arrive on or complete what they wait for can run, and no asynchronous operation is in flight ({} threads in the CTA)",
                self.nthreads
            ),
            _ => "no warp can make progress".to_string(),
        };
        format!("{}; {why}", crate::text::list(parts))
    }

    fn run_warp<'o>(
        &mut self,
        w: usize,
        mut obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<(), RunError> {
        let prog = self.prog;
        loop {
            let warp = &mut self.warps[w];
            let Some(top) = warp.stack.last().copied() else {
                warp.state = WState::Done;
                return Ok(());
            };
            if top.mask == 0 || top.pc == top.rpc {
                warp.stack.pop();
                continue;
            }
            let pc = top.pc as usize;
            let Some(inst) = prog.insts.get(pc) else {
                // Falling off the end of the body: the lanes exit (as `ret`).
                let lanes = top.mask;
                warp.exited |= lanes;
                for e in &mut warp.stack {
                    e.mask &= !lanes;
                }
                continue;
            };
            let cost = cost_units(&inst.op);
            if self.executed >= self.budget
                || self.units.saturating_add(cost)
                    > self.budget.saturating_mul(UNITS_PER_INSTRUCTION)
            {
                return Err(RunError::Budget {
                    limit: self.budget,
                    executed: self.executed,
                    line: inst.line,
                    warp: w as u32,
                    waiting: self.waiting(),
                });
            }
            let warp = &mut self.warps[w];
            self.executed += 1;
            self.cta_executed += 1;
            self.units += cost;
            self.stats[pc].executions += 1;
            let mask = match inst.guard {
                None => top.mask,
                Some((p, neg)) => {
                    let base = p as usize * WARP_SIZE;
                    let mut g = 0u32;
                    for lane in 0..WARP_SIZE {
                        if (warp.regs[base + lane] & 1 != 0) != neg {
                            g |= 1 << lane;
                        }
                    }
                    g & top.mask
                }
            };
            if mask != 0 {
                self.stats[pc].pred_on += 1;
            }
            match &inst.op {
                Op::Bra { target } => {
                    if self.branch(w, pc, inst.line, *target, mask, top.mask) {
                        return Ok(());
                    }
                    continue;
                }
                Op::Exit => {
                    warp.exited |= mask;
                    for e in &mut warp.stack {
                        e.mask &= !mask;
                    }
                    if let Some(t) = warp.stack.last_mut()
                        && t.mask != 0
                    {
                        t.pc += 1;
                    }
                    continue;
                }
                Op::Bar { .. }
                | Op::Mbarrier { .. }
                | Op::AsyncWait { .. }
                | Op::ClusterBarrier { .. }
                | Op::Wgmma { .. } => {
                    let o = obs.as_deref_mut();
                    let flow = match inst.op {
                        Op::Wgmma { .. } => self.exec_wgmma(w, pc, inst, mask, o),
                        _ => self.exec_sync(w, pc, inst, mask, o),
                    }
                    .map_err(|message| RunError::At {
                        line: inst.line,
                        message: self.in_cluster(message),
                    })?;
                    let warp = &mut self.warps[w];
                    let t = warp.stack.last_mut().unwrap_or_else(|| unreachable!());
                    match flow {
                        Flow::Next => t.pc += 1,
                        Flow::Block { block, advance } => {
                            if advance {
                                t.pc += 1;
                            }
                            // Other warps may write memory before this one runs again.
                            warp.changed = true;
                            warp.state = WState::Blocked(block);
                            return Ok(());
                        }
                    }
                    continue;
                }
                _ => {}
            }
            self.exec(w, pc, inst, mask, top.mask, obs.as_deref_mut())
                .map_err(|message| RunError::At {
                    line: inst.line,
                    message: self.in_cluster(message),
                })?;
            let warp = &mut self.warps[w];
            if let Some(t) = warp.stack.last_mut() {
                t.pc += 1;
            }
        }
    }

    /// `bra` to `target` for the lanes of `mask` (`path`: the lanes on the path): the SIMT
    /// stack's divergence and reconvergence, and the spin rule of a back edge (a loop
    /// iteration that changed nothing yields while another warp could write memory). True when
    /// the warp yields.
    fn branch(
        &mut self,
        w: usize,
        pc: usize,
        line: u32,
        target: u32,
        mask: u32,
        path: u32,
    ) -> bool {
        let prog = self.prog;
        let warp = &mut self.warps[w];
        let taken = mask;
        let not = path & !mask;
        if not == 0 && target as usize <= pc {
            // A back edge: a whole loop iteration that changed nothing repeats
            // forever unless another warp writes memory, so the warp yields (when
            // one could) instead of spinning through the budget.
            let same = warp.mark == Some(pc as u32) && warp.mark_stack == warp.stack;
            if same && !warp.changed {
                let others = (0..self.warps.len())
                    .any(|i| i != w && self.warps[i].state != WState::Done)
                    || self
                        .ctas
                        .iter()
                        .any(|c| c.warps.iter().any(|o| o.state != WState::Done));
                if others && self.warps[w].skipped {
                    // A counts-only run skipped a computation in this iteration: with values
                    // it might have changed a register, and the warp would not yield. Not
                    // decidable here: the run is made again with values
                    // (`run_counts_planned`), and this one ends at the next instruction any
                    // warp issues (a budget of 0; its result is not read).
                    self.needs_values.set(true);
                    self.budget = 0;
                }
                if others {
                    let warp = &mut self.warps[w];
                    let t = warp.stack.last_mut().unwrap_or_else(|| unreachable!());
                    t.pc = target;
                    warp.state = WState::Spin {
                        line,
                        epoch: self.epoch,
                    };
                    warp.mark = None;
                    return true;
                }
            }
            let warp = &mut self.warps[w];
            warp.mark = Some(pc as u32);
            warp.mark_stack.clone_from(&warp.stack);
            warp.changed = false;
            warp.skipped = false;
        }
        let warp = &mut self.warps[w];
        let t = warp.stack.last_mut().unwrap_or_else(|| unreachable!());
        if not == 0 {
            t.pc = target;
        } else if taken == 0 {
            t.pc += 1;
        } else {
            let r = prog.reconverge[pc];
            if t.rpc == r {
                warp.stack.pop();
            } else {
                t.pc = r;
            }
            if pc as u32 + 1 != r {
                warp.stack.push(Entry {
                    pc: pc as u32 + 1,
                    mask: not,
                    rpc: r,
                });
            }
            if target != r {
                warp.stack.push(Entry {
                    pc: target,
                    mask: taken,
                    rpc: r,
                });
            }
        }
        false
    }

    /// Executes a non-control instruction for the lanes of `mask` (`path` = the lanes on the
    /// path before the guard): one family function per kind of instruction.
    fn exec<'o>(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        mask: u32,
        path: u32,
        obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<(), String> {
        use super::dataflow::Lanes;
        let lanes = self
            .lanes
            .and_then(|l| l.get(pc).copied())
            .unwrap_or(Lanes::Exact);
        if lanes == Lanes::Skip {
            // Counts only: a pure ALU instruction whose results no count needs
            // (`super::dataflow::Lanes::Skip`): its destinations keep their values.
            if mask != 0 {
                self.warps[w].skipped = true;
            }
            return Ok(());
        }
        // Stores to shared or global memory: the CTA's memory changed (`Machine::epoch`).
        let stores = matches!(
            inst.op,
            Op::St { .. } | Op::Stmatrix { .. } | Op::CpAsync { .. } | Op::Atom { .. }
        );
        let mut changed = false;
        if stores && mask != 0 {
            self.epoch += 1;
            changed = true;
        }
        let (m, p) = (mask, path);
        // The buffers the plan placed this instruction's global accesses in (every buffer, as
        // `allowed` is between instructions, for all but a counts-only run's `ld`, `st`,
        // `atom` and `cp.async`).
        let allowed = self
            .global_plan
            .and_then(|g| g.get(pc).copied())
            .unwrap_or(super::dataflow::ALL_GLOBAL);
        if allowed != super::dataflow::ALL_GLOBAL {
            self.global.allowed.set(allowed);
        }
        if let Some((s, _)) = self.shared_plan {
            self.shared_allowed = s.get(pc).copied().unwrap_or(super::dataflow::ALL_SHARED);
        }
        changed |= match &inst.op {
            Op::Nop => false,
            Op::Bra { .. }
            | Op::Exit
            | Op::Bar { .. }
            | Op::Mbarrier { .. }
            | Op::AsyncWait { .. }
            | Op::ClusterBarrier { .. }
            | Op::Wgmma { .. } => false,
            Op::Bulk { .. } => self.exec_bulk(w, pc, inst, m, obs)?,
            Op::TensorMapReplace { .. } | Op::TensorMapCopy { .. } => {
                self.exec_tensormap(w, pc, inst, m)?
            }
            Op::AsyncCommit { .. } | Op::Elect { .. } | Op::Mapa { .. } | Op::Call { .. } => {
                self.exec_hopper(w, pc, inst, m, p, obs)?
            }
            Op::Mov { .. } | Op::Pack { .. } | Op::Unpack { .. } => {
                self.exec_move(w, pc, inst, m, p, obs)?
            }
            Op::Un { .. } | Op::Bin { .. } | Op::Tern { .. } | Op::Bfi { .. } | Op::Lop3 { .. } => {
                self.exec_arith(w, pc, inst, m, p, obs)?
            }
            Op::Setp { .. } | Op::PredLogic { .. } | Op::Selp { .. } => {
                self.exec_pred(w, pc, inst, m, p, obs)?
            }
            Op::Cvt { .. } | Op::CvtPack { .. } => self.exec_cvt(w, pc, inst, m, p, obs)?,
            Op::WarpSync { .. } | Op::Activemask { .. } | Op::Vote { .. } | Op::Shfl { .. } => {
                self.exec_collective(w, pc, inst, m, p, obs)?
            }
            Op::Ld { .. } => self.exec_ld(w, pc, inst, m, p, obs)?,
            Op::St { .. } => self.exec_st(w, pc, inst, m, p, obs)?,
            Op::Ldmatrix { .. } | Op::Stmatrix { .. } => {
                self.exec_matrix(w, pc, inst, m, p, obs)?
            }
            Op::CpAsync { .. } => self.exec_cp_async(w, pc, inst, m, p, obs)?,
            Op::Mma { .. } => self.exec_mma(w, pc, inst, m, p, obs)?,
            Op::Atom { .. } => self.exec_atom(w, pc, inst, m, p, obs)?,
        };
        if allowed != super::dataflow::ALL_GLOBAL {
            self.global.allowed.set(super::dataflow::ALL_GLOBAL);
        }
        if self.shared_plan.is_some() {
            self.shared_allowed = super::dataflow::ALL_SHARED;
        }
        if lanes == Lanes::Inexact && mask != 0 {
            // Its register changes may not be the values run's (none of these stores).
            self.warps[w].skipped = true;
            changed = false;
        }
        if changed {
            self.warps[w].changed = true;
        }
        Ok(())
    }
}

/// The observer of one warp's events over an observer of all (`Machine::run`).
struct OneWarp<'a, 'o> {
    warp: u32,
    inner: &'a mut (dyn Observer + 'o),
}

impl Observer for OneWarp<'_, '_> {
    fn event(&mut self, ev: &TraceEvent<'_>) {
        if ev.warp == self.warp {
            self.inner.event(ev);
        }
    }
}

/// The warps of one CTA (`cluster`: its place in the grid and its cluster), each with its
/// special registers and `.global` variable addresses written, at pc 0.
fn make_warps(prog: &Program, l: &Launch, cluster: &ClusterShape, nthreads: u32) -> Vec<Warp> {
    let nwarps = nthreads.div_ceil(32);
    let nr = prog.nregs as usize;
    let cta = cluster.cta();
    let mut warps = Vec::with_capacity(nwarps as usize);
    for w in 0..nwarps {
        let mut regs = vec![0u64; nr * WARP_SIZE];
        let mut live = 0u32;
        for lane in 0..32u32 {
            let t = w * 32 + lane;
            if t < nthreads {
                live |= 1 << lane;
            }
            let [bx, by, _] = l.block;
            let tid = [t % bx, (t / bx) % by, t / (bx * by)];
            for &(r, sp) in &prog.specials {
                let v = match sp {
                    Special::Tid(d) => tid[d as usize],
                    Special::Ntid(d) => l.block[d as usize],
                    Special::Ctaid(d) => cta[d as usize],
                    Special::Nctaid(d) => l.grid[d as usize],
                    Special::Laneid => lane,
                    Special::Warpid => w,
                    Special::Nwarpid => nwarps,
                    Special::ClusterCtaid(d) => cluster.ctaid[d as usize],
                    Special::ClusterNctaid(d) => cluster.dims[d as usize],
                    Special::Clusterid(d) => cluster.id[d as usize],
                    Special::Nclusterid(d) => cluster.nclusters[d as usize],
                    Special::ClusterCtarank => cluster.rank,
                    Special::ClusterNctarank => cluster.ctas(),
                    Special::IsExplicitCluster => u32::from(cluster.explicit),
                    Special::Lanemask(k) => {
                        let eq = 1u32 << lane;
                        match k {
                            0 => eq,
                            1 => eq - 1,
                            2 => (eq - 1) | eq,
                            3 => !((eq - 1) | eq),
                            _ => !(eq - 1),
                        }
                    }
                };
                regs[r as usize * WARP_SIZE + lane as usize] = v as u64;
            }
            for &(r, g) in &prog.global_addrs {
                regs[r as usize * WARP_SIZE + lane as usize] = buffer_base(prog.params.len() + g);
            }
        }
        let mut stack = Vec::with_capacity(8);
        if !prog.insts.is_empty() {
            stack.push(Entry {
                pc: 0,
                mask: live,
                rpc: u32::MAX,
            });
        }
        warps.push(Warp {
            regs,
            local: Vec::new(),
            stack,
            state: if prog.insts.is_empty() {
                WState::Done
            } else {
                WState::Run
            },
            live,
            exited: 0,
            changed: true,
            skipped: false,
            mark: None,
            mark_stack: Vec::new(),
            groups: [0; 3],
            cluster_arrived: None,
        });
    }
    warps
}

pub(super) fn observe<'o>(
    obs: Option<&mut (dyn Observer + 'o)>,
    w: usize,
    pc: usize,
    inst: &Inst,
    mask: u32,
    kind: TraceKind<'_>,
) {
    if let Some(o) = obs {
        o.event(&TraceEvent {
            warp: w as u32,
            pc: pc as u32,
            line: inst.line,
            mask,
            kind,
        });
    }
}

/// `warp 3` or `warps 0-3, 5, 7-9`: warp indices (ascending) as ranges.
pub(super) fn warp_ranges(ws: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &w in ws {
        match runs.last_mut() {
            Some((_, hi)) if *hi + 1 == w => *hi = w,
            _ => runs.push((w, w)),
        }
    }
    let text = runs
        .iter()
        .map(|&(lo, hi)| match lo == hi {
            true => lo.to_string(),
            false => format!("{lo}-{hi}"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!("warp{} {text}", if ws.len() == 1 { "" } else { "s" })
}

/// The membermask rule of `shfl.sync`, `vote.sync` and `bar.warp.sync` (PTX ISA, each
/// instruction: "the behavior is undefined if the executing thread is not in the
/// membermask"; on sm_70 and later each non-exited thread of membermask must execute the same
/// instruction before any continues): every executing lane (`mask`) must be in its membermask,
/// and every non-exited lane (`live`) of it must be on this path (`path`): a lockstep warp
/// cannot wait for lanes on another path. A text without a membermask passes.
pub(super) fn check_member(
    name: &str,
    regs: &[u64],
    member: Option<Src>,
    mask: u32,
    path: u32,
    live: u32,
) -> Result<(), String> {
    let Some(member) = member else {
        return Ok(());
    };
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let mm = match member {
            Src::Reg(r) => regs[r as usize * WARP_SIZE + l],
            Src::Imm(v) => v,
        } as u32;
        if mm >> l & 1 == 0 {
            return Err(format!(
                "lane {l}: {name} with membermask {mm:#010x}, which does not include the executing lane {l}: undefined (PTX ISA, {name}: the executing thread must be in membermask); allowed: a membermask with the bit of every executing lane, e.g. 0xffffffff"
            ));
        }
        let away = mm & live & !path;
        if away != 0 {
            return Err(format!(
                "lane {l}: {name} with membermask {mm:#010x} names lanes {away:#010x}, which are on another path: PTX requires every non-exited lane of membermask to execute the same {name}, and the simulator runs a warp's paths one after the other, so it cannot wait for them"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::warp_ranges;

    #[test]
    fn warp_ranges_join_consecutive_warps() {
        assert_eq!(warp_ranges(&[3]), "warp 3");
        assert_eq!(warp_ranges(&[0, 1, 2, 3, 5, 7, 8, 9]), "warps 0-3, 5, 7-9");
        assert_eq!(warp_ranges(&[1, 4]), "warps 1, 4");
    }
}
