//! The CTA interpreter: every warp of one CTA runs a decoded [`Program`] in lockstep, 32 lanes
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
//!   (PTX: `bar.sync` is `.aligned`).
//! * **Memory**: shared memory is one byte array of the CTA (static variables, then
//!   `.extern .shared` arrays); its warp instructions go through [`super::warp_ops`], the door
//!   to `sim`'s request model. Global memory: each pointer parameter (and each `.global`
//!   variable) is its own zero-filled buffer at [`buffer_base`], allocated lazily in 64 KiB
//!   pages; an address outside every buffer is an error naming the line. `cp.async` completes
//!   at issue (a legal schedule: PTX only promises completion by `cp.async.wait_group`).
//!   Local memory (`.local`, nvcc's `__local_depot0` stack frame): each thread its own
//!   zero-filled frame of [`Program::local_frame`] bytes, local address 0 its first byte;
//!   `ld/st.local` and generic addresses in the local window ([`LOCAL_WINDOW`], reached through
//!   `cvta.local`) read and write the executing lane's frame, and an access past it is an error
//!   naming the line. Local accesses never touch shared memory or its counters (Nsight Compute
//!   books them as local, `LDL`/`STL`).
//! * **Budget**: `max_instructions` warp instructions, then an error (runaway loops).
//!
//! An optional [`Observer`] sees, for one chosen warp, every shared-memory and tensor-core
//! instruction as it executes (the TUI stepper's feed); without one the run pays nothing.

use std::collections::HashMap;

use thiserror::Error;

use super::decode::{
    Addr, AtomOp, Bin, BoolOp, Cmp, Inst, LOCAL_WINDOW, LOCAL_WINDOW_BYTES, Op, Program,
    SHARED_WINDOW, ShflMode, Space, Special, Src, Tern, Un, buffer_base,
};
use super::types::{Ty, float1, float2, fma, from_f64, sext, to_f64};
use super::warp_ops::{self, LaneRegs, SharedKind, Smem, Step};
use crate::sim::bank::{NotModelled, RequestCost, WARP_SIZE};
use crate::sim::instr::{AccessWidth, CpAsyncKind, MatrixCount};

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
    /// The instruction budget ran out.
    #[error(
        "stopped after {limit} warp instructions (--max-instructions) at line {line}, warp {warp}: a runaway loop, or raise the limit"
    )]
    Budget {
        /// The limit.
        limit: u64,
        /// Line of the next instruction.
        line: u32,
        /// Warp.
        warp: u32,
    },
    /// Warps wait at barriers that can never complete.
    #[error("deadlock: {0}")]
    Deadlock(String),
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
    /// Dynamic shared memory in bytes; `None`: up to the sm_90 per-block limit.
    pub dynamic_smem: Option<u32>,
    /// Warp instructions before the run is stopped.
    pub max_instructions: u64,
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
}

/// A `cp.async`'s global side, for [`Machine::shared_op`]: each lane's source address, and
/// whether an active lane reads fewer bytes than it writes (`src-size` or `ignore-src`).
#[derive(Clone, Copy)]
struct CpSources<'a> {
    addrs: &'a [u64; 32],
    zero_fill: bool,
}

/// What a run counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunResult {
    /// Per instruction (index into [`Program::insts`]).
    pub stats: Vec<InstStats>,
    /// Warp instructions executed.
    pub instructions: u64,
    /// Shared memory modelled, in bytes.
    pub smem_bytes: u32,
    /// One past the highest shared byte accessed.
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

/// Receives the traced warp's shared-memory and tensor-core instructions.
pub trait Observer {
    /// Called once per execution, in program order of that warp.
    fn event(&mut self, ev: &TraceEvent<'_>);
}

impl Observer for Vec<(u32, u32, Step)> {
    /// Keeps (pc, line, step) of shared-memory instructions.
    fn event(&mut self, ev: &TraceEvent<'_>) {
        if let TraceKind::Shared(s) = ev.kind {
            self.push((ev.pc, ev.line, s.clone()));
        }
    }
}

const PAGE: u64 = 1 << 16;
/// Bytes each global buffer may span from its base.
pub const BUFFER_WINDOW: u64 = 1 << 36;

struct Global {
    nbufs: usize,
    names: Vec<String>,
    pages: HashMap<u64, Box<[u8]>>,
}

impl Global {
    fn check(&self, addr: u64, n: u64) -> Result<(), String> {
        let k = (addr >> 40) as usize;
        let ok = k >= 1 && k <= self.nbufs && addr - buffer_base(k - 1) + n <= BUFFER_WINDOW;
        if ok {
            Ok(())
        } else {
            Err(format!(
                "global address {addr:#x} ({n} bytes) is outside every buffer ({})",
                crate::text::list(
                    self.names
                        .iter()
                        .enumerate()
                        .map(|(i, s)| format!("{s} at {:#x}", buffer_base(i)))
                )
            ))
        }
    }

    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), String> {
        self.check(addr, out.len() as u64)?;
        for (i, b) in out.iter_mut().enumerate() {
            let a = addr + i as u64;
            *b = self
                .pages
                .get(&(a / PAGE))
                .map_or(0, |p| p[(a % PAGE) as usize]);
        }
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), String> {
        self.check(addr, data.len() as u64)?;
        for (i, &b) in data.iter().enumerate() {
            let a = addr + i as u64;
            let p = self
                .pages
                .entry(a / PAGE)
                .or_insert_with(|| vec![0u8; PAGE as usize].into_boxed_slice());
            p[(a % PAGE) as usize] = b;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    pc: u32,
    mask: u32,
    rpc: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WState {
    Run,
    Bar {
        id: u32,
        count: Option<u32>,
        line: u32,
    },
    Done,
}

struct Warp {
    regs: Vec<u64>,
    /// The 32 lanes' `.local` frames, lane `l`'s at `l · frame`; empty until the warp's first
    /// local access (zero-filled then).
    local: Vec<u8>,
    stack: Vec<Entry>,
    state: WState,
    live: u32,
    exited: u32,
}

/// The sm_90 per-block shared-memory limit in bytes (227 KiB).
pub const SMEM_LIMIT: u32 = 232_448;

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
    let mut m = Machine::new(prog, launch)?;
    m.run(observer)?;
    Ok(RunResult {
        stats: m.stats,
        instructions: m.executed,
        smem_bytes: m.smem.len(),
        smem_touched: m.touched,
    })
}

struct Machine<'p> {
    prog: &'p Program,
    warps: Vec<Warp>,
    smem: Smem,
    global: Global,
    params: Vec<u8>,
    stats: Vec<InstStats>,
    executed: u64,
    budget: u64,
    nthreads: u32,
    touched: u32,
}

fn parse_int(s: &str) -> Option<i128> {
    let t = s.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).ok()?
    } else {
        t.parse::<i128>().ok()?
    };
    Some(if neg { -v } else { v })
}

impl<'p> Machine<'p> {
    fn new(prog: &'p Program, l: &Launch) -> Result<Self, RunError> {
        let bad = |s: String| Err(RunError::Launch(s));
        for (name, v) in [("--grid", l.grid), ("--block", l.block)] {
            if v.contains(&0) {
                return bad(format!(
                    "{name} {},{},{} has a zero dimension; every dimension must be at least 1",
                    v[0], v[1], v[2]
                ));
            }
        }
        for d in 0..3 {
            if l.cta[d] >= l.grid[d] {
                return bad(format!(
                    "--cta {},{},{} is outside the grid {},{},{}",
                    l.cta[0], l.cta[1], l.cta[2], l.grid[0], l.grid[1], l.grid[2]
                ));
            }
        }
        let nthreads = l.block.iter().try_fold(1u32, |a, &b| a.checked_mul(b));
        let nthreads = match nthreads {
            Some(n) if n <= 1024 => n,
            _ => {
                return bad(format!(
                    "--block {},{},{} has more than 1024 threads (the CUDA limit per block)",
                    l.block[0], l.block[1], l.block[2]
                ));
            }
        };
        if let Some(r) = prog.reqntid
            && r != l.block
        {
            return bad(format!(
                "kernel '{}' requires a block of {},{},{} threads (.reqntid); --block gave {},{},{}",
                prog.name, r[0], r[1], r[2], l.block[0], l.block[1], l.block[2]
            ));
        }
        // Parameters.
        let mut params = vec![0u8; prog.param_bytes as usize];
        let mut given: Vec<Option<&str>> = vec![None; prog.params.len()];
        for (k, v) in &l.args {
            let idx = prog
                .params
                .iter()
                .position(|p| &p.name == k)
                .or_else(|| k.parse::<usize>().ok().filter(|&i| i < prog.params.len()));
            let Some(i) = idx else {
                return bad(format!(
                    "--arg {k}={v}: kernel '{}' has no parameter '{k}'; parameters: {}",
                    prog.name,
                    param_list(prog)
                ));
            };
            given[i] = Some(v.as_str());
        }
        let mut missing = Vec::new();
        for (i, p) in prog.params.iter().enumerate() {
            let o = p.offset as usize;
            // The decoder lays the parameters out inside `param_bytes`.
            let Some(dst) = params.get_mut(o..o.saturating_add(p.size as usize)) else {
                return bad(format!(
                    "parameter '{}' lies outside the {} parameter bytes",
                    p.name, prog.param_bytes
                ));
            };
            match (given[i], p.pointer) {
                (None, true) => {
                    dst.copy_from_slice(&buffer_base(i).to_le_bytes()[..dst.len().min(8)])
                }
                (Some(v), true) => {
                    return bad(format!(
                        "--arg {}={v}: '{}' is a pointer; pointers need no value (each gets its own zero-filled buffer)",
                        p.name, p.name
                    ));
                }
                (None, false) => missing.push(format!("{} (.{}, index {i})", p.name, p.ty)),
                (Some(v), false) => {
                    let bytes: Vec<u8> = match p.ty.as_str() {
                        "f32" => match v.parse::<f32>() {
                            Ok(f) => f.to_le_bytes().to_vec(),
                            Err(_) => {
                                return bad(format!(
                                    "--arg {}={v}: expected a number for an .f32 parameter",
                                    p.name
                                ));
                            }
                        },
                        "f64" => match v.parse::<f64>() {
                            Ok(f) => f.to_le_bytes().to_vec(),
                            Err(_) => {
                                return bad(format!(
                                    "--arg {}={v}: expected a number for an .f64 parameter",
                                    p.name
                                ));
                            }
                        },
                        t => {
                            let Some(ty) = Ty::parse(t) else {
                                return bad(format!(
                                    "parameter '{}' of type .{t} is not supported",
                                    p.name
                                ));
                            };
                            let Some(n) = parse_int(v) else {
                                return bad(format!(
                                    "--arg {}={v}: expected an integer (decimal or 0x hex)",
                                    p.name
                                ));
                            };
                            let bits = ty.bits();
                            let (lo, hi) = if ty.signed() {
                                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                            } else {
                                (-(1i128 << (bits - 1)), (1i128 << bits) - 1)
                            };
                            if n < lo || n > hi {
                                return bad(format!(
                                    "--arg {}={v}: out of range for .{t} ({lo}..={hi})",
                                    p.name
                                ));
                            }
                            (n as u64).to_le_bytes()[..ty.bytes() as usize].to_vec()
                        }
                    };
                    if bytes.len() != dst.len() {
                        return bad(format!(
                            "parameter '{}' of {} bytes is not supported",
                            p.name,
                            dst.len()
                        ));
                    }
                    dst.copy_from_slice(&bytes);
                }
            }
        }
        if !missing.is_empty() {
            return bad(format!(
                "missing value for parameter{} {}: give --arg NAME=VALUE (or --arg INDEX=VALUE)",
                if missing.len() > 1 { "s" } else { "" },
                crate::text::list(&missing)
            ));
        }
        // Shared memory.
        let smem_bytes = match (prog.dynamic_smem_offset, l.dynamic_smem) {
            (Some(o), Some(d)) => o.checked_add(d),
            (Some(_), None) => Some(SMEM_LIMIT),
            (None, Some(d)) => prog.static_smem.checked_add(d),
            (None, None) => Some(prog.static_smem),
        };
        let smem_bytes = match smem_bytes {
            Some(b) if b <= SMEM_LIMIT => b,
            _ => {
                return bad(format!(
                    "shared memory of {} static + {} dynamic bytes exceeds sm_90's {SMEM_LIMIT} bytes per block",
                    prog.static_smem,
                    l.dynamic_smem.unwrap_or(0)
                ));
            }
        };
        // Global buffers: one per parameter index (pointers only are used), then variables.
        let mut names: Vec<String> = prog.params.iter().map(|p| p.name.clone()).collect();
        names.extend(prog.globals.iter().map(|g| g.name.clone()));
        let mut global = Global {
            nbufs: names.len(),
            names,
            pages: HashMap::new(),
        };
        for (g, v) in prog.globals.iter().enumerate() {
            global
                .write(buffer_base(prog.params.len() + g), &v.bytes)
                .map_err(RunError::Launch)?;
        }
        // Warps.
        let nwarps = nthreads.div_ceil(32);
        let nr = prog.nregs as usize;
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
                        Special::Ctaid(d) => l.cta[d as usize],
                        Special::Nctaid(d) => l.grid[d as usize],
                        Special::Laneid => lane,
                        Special::Warpid => w,
                        Special::Nwarpid => nwarps,
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
                    regs[r as usize * WARP_SIZE + lane as usize] =
                        buffer_base(prog.params.len() + g);
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
            });
        }
        Ok(Machine {
            prog,
            warps,
            smem: Smem::zeroed(smem_bytes),
            global,
            params,
            stats: vec![InstStats::default(); prog.insts.len()],
            executed: 0,
            budget: l.max_instructions,
            nthreads,
            touched: 0,
        })
    }

    fn run<'o>(
        &mut self,
        mut obs: Option<(u32, &mut (dyn Observer + 'o))>,
    ) -> Result<(), RunError> {
        loop {
            for w in 0..self.warps.len() {
                if self.warps[w].state == WState::Run {
                    let o = match obs.as_mut() {
                        Some((tw, o)) if *tw as usize == w || *tw == ALL_WARPS => Some(&mut **o),
                        _ => None,
                    };
                    self.run_warp(w, o)?;
                }
            }
            if self.warps.iter().all(|w| w.state == WState::Done) {
                return Ok(());
            }
            if !self.release() {
                return Err(RunError::Deadlock(self.deadlock_message()));
            }
        }
    }

    /// Releases every barrier whose expected threads have arrived; false when none did.
    fn release(&mut self) -> bool {
        let not_exited: u32 = self
            .warps
            .iter()
            .map(|w| (w.live & !w.exited).count_ones())
            .sum();
        let mut released = false;
        let mut ids: Vec<(u32, Option<u32>)> = self
            .warps
            .iter()
            .filter_map(|w| match w.state {
                WState::Bar { id, count, .. } => Some((id, count)),
                _ => None,
            })
            .collect();
        ids.sort_unstable();
        ids.dedup();
        for (id, count) in ids {
            let arrived: u32 = self
                .warps
                .iter()
                .filter(|w| matches!(w.state, WState::Bar { id: i, count: c, .. } if i == id && c == count))
                .map(|w| (w.live & !w.exited).count_ones())
                .sum();
            let expected = count.unwrap_or(not_exited);
            if arrived >= expected {
                for w in &mut self.warps {
                    if matches!(w.state, WState::Bar { id: i, count: c, .. } if i == id && c == count)
                    {
                        w.state = WState::Run;
                    }
                }
                released = true;
            }
        }
        released
    }

    fn deadlock_message(&self) -> String {
        let mut parts = Vec::new();
        for (i, w) in self.warps.iter().enumerate() {
            match w.state {
                WState::Bar { id, line, count } => parts.push(format!(
                    "warp {i} waits at barrier {id} (line {line}{})",
                    count.map(|c| format!(", {c} threads")).unwrap_or_default()
                )),
                WState::Done => parts.push(format!("warp {i} has exited")),
                WState::Run => {}
            }
        }
        format!(
            "{}; the barrier can never complete ({} threads in the CTA)",
            crate::text::list(&parts),
            self.nthreads
        )
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
            if self.executed >= self.budget {
                return Err(RunError::Budget {
                    limit: self.budget,
                    line: inst.line,
                    warp: w as u32,
                });
            }
            self.executed += 1;
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
                    let target = *target;
                    let taken = mask;
                    let not = top.mask & !mask;
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
                Op::Bar { id, count, arrive } => {
                    let all = warp.live & !warp.exited;
                    if mask != all {
                        return Err(RunError::At {
                            line: inst.line,
                            message: format!(
                                "bar.sync reached by lanes {mask:#010x} of warp {w} while lanes {:#010x} are elsewhere: PTX requires all threads of a warp to execute bar.sync together",
                                all & !mask
                            ),
                        });
                    }
                    if *arrive {
                        return Err(RunError::At {
                            line: inst.line,
                            message: "bar.arrive is not supported".into(),
                        });
                    }
                    let rd = |s: &Src| match *s {
                        Src::Imm(v) => v as u32,
                        Src::Reg(r) => {
                            warp.regs[r as usize * WARP_SIZE + mask.trailing_zeros() as usize]
                                as u32
                        }
                    };
                    let id = rd(id);
                    let count = count.as_ref().map(rd);
                    if id > 15 || count.is_some_and(|c| c == 0 || c % 32 != 0) {
                        return Err(RunError::At {
                            line: inst.line,
                            message: format!(
                                "barrier {id}{}: ids are 0..=15 and counts non-zero multiples of 32",
                                count
                                    .map(|c| format!(" with count {c}"))
                                    .unwrap_or_default()
                            ),
                        });
                    }
                    warp.stack.last_mut().unwrap_or_else(|| unreachable!()).pc += 1;
                    warp.state = WState::Bar {
                        id,
                        count,
                        line: inst.line,
                    };
                    return Ok(());
                }
                _ => {}
            }
            self.exec(w, pc, inst, mask, top.mask, obs.as_deref_mut())
                .map_err(|message| RunError::At {
                    line: inst.line,
                    message,
                })?;
            let warp = &mut self.warps[w];
            if let Some(t) = warp.stack.last_mut() {
                t.pc += 1;
            }
        }
    }

    /// Executes a non-control instruction for the lanes of `mask` (`path` = the lanes on the
    /// path before the guard).
    fn exec<'o>(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        mask: u32,
        path: u32,
        obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<(), String> {
        macro_rules! v {
            ($regs:ident, $s:expr, $l:expr) => {
                match $s {
                    Src::Reg(r) => $regs[r as usize * WARP_SIZE + $l],
                    Src::Imm(v) => v,
                }
            };
        }
        macro_rules! each {
            (|$l:ident| $body:expr) => {
                let mut m = mask;
                while m != 0 {
                    let $l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    $body;
                }
            };
        }
        macro_rules! set {
            ($regs:ident, $d:expr, $l:expr, $v:expr) => {
                $regs[$d as usize * WARP_SIZE + $l] = $v
            };
        }
        let regs = &mut self.warps[w].regs;
        match &inst.op {
            Op::Nop | Op::CpCommit | Op::CpWait | Op::WarpSync => {}
            Op::Mov { ty, d, a } => {
                let (ty, d, a) = (*ty, *d, *a);
                each!(|l| {
                    let x = v!(regs, a, l);
                    set!(
                        regs,
                        d,
                        l,
                        if ty == Ty::Pred {
                            (x & 1 != 0) as u64
                        } else {
                            ty.trunc(x)
                        }
                    )
                });
            }
            Op::Pack {
                part_bits,
                d,
                parts,
            } => {
                let pb = *part_bits;
                each!(|l| {
                    let mut x = 0u64;
                    for (i, p) in parts.iter().enumerate() {
                        let part =
                            v!(regs, *p, l) & if pb >= 64 { u64::MAX } else { (1u64 << pb) - 1 };
                        x |= part.checked_shl(pb * i as u32).unwrap_or(0);
                    }
                    set!(regs, *d, l, x)
                });
            }
            Op::Unpack {
                part_bits,
                parts,
                a,
            } => {
                let pb = *part_bits;
                each!(|l| {
                    let x = v!(regs, *a, l);
                    for (i, p) in parts.iter().enumerate() {
                        if let Some(p) = p {
                            let part = x.checked_shr(pb * i as u32).unwrap_or(0)
                                & if pb >= 64 { u64::MAX } else { (1u64 << pb) - 1 };
                            set!(regs, *p, l, part);
                        }
                    }
                });
            }
            Op::Un { k, ty, d, a } => {
                let (k, ty, d, a) = (*k, *ty, *d, *a);
                each!(|l| {
                    let x = v!(regs, a, l);
                    set!(regs, d, l, unary(k, ty, x))
                });
            }
            Op::Bin { k, ty, d, a, b } => {
                let (k, ty, d, a, b) = (*k, *ty, *d, *a, *b);
                each!(|l| {
                    let (x, y) = (v!(regs, a, l), v!(regs, b, l));
                    set!(regs, d, l, binary(k, ty, x, y))
                });
            }
            Op::Tern { k, ty, d, a, b, c } => {
                let (k, ty, d, a, b, c) = (*k, *ty, *d, *a, *b, *c);
                each!(|l| {
                    let (x, y, z) = (v!(regs, a, l), v!(regs, b, l), v!(regs, c, l));
                    set!(regs, d, l, ternary(k, ty, x, y, z))
                });
            }
            Op::Bfi { ty, d, s } => {
                let bits = ty.bits();
                each!(|l| {
                    let (a, b) = (v!(regs, s[0], l), v!(regs, s[1], l));
                    let pos = (v!(regs, s[2], l) & 0xff) as u32;
                    let len = (v!(regs, s[3], l) & 0xff) as u32;
                    let mut x = ty.trunc(b);
                    for i in 0..len {
                        let bit = pos + i;
                        if bit >= bits {
                            break;
                        }
                        x = (x & !(1 << bit)) | ((a >> i) & 1) << bit;
                    }
                    set!(regs, *d, l, x)
                });
            }
            Op::Lop3 { d, s, lut } => {
                each!(|l| {
                    let (a, b, c) = (
                        v!(regs, s[0], l) as u32,
                        v!(regs, s[1], l) as u32,
                        v!(regs, s[2], l) as u32,
                    );
                    let mut r = 0u32;
                    for i in 0..8 {
                        if lut >> i & 1 == 1 {
                            let ta = if i & 4 != 0 { a } else { !a };
                            let tb = if i & 2 != 0 { b } else { !b };
                            let tc = if i & 1 != 0 { c } else { !c };
                            r |= ta & tb & tc;
                        }
                    }
                    set!(regs, *d, l, r as u64)
                });
            }
            Op::Setp {
                cmp,
                ty,
                d,
                d2,
                a,
                b,
                comb,
            } => {
                each!(|l| {
                    let r = compare(*cmp, *ty, v!(regs, *a, l), v!(regs, *b, l));
                    let (p, q) = match comb {
                        None => (r, !r),
                        Some((op, s, neg)) => {
                            let c = (v!(regs, *s, l) & 1 != 0) != *neg;
                            let f = |x: bool| match op {
                                BoolOp::And => x && c,
                                BoolOp::Or => x || c,
                                BoolOp::Xor => x != c,
                            };
                            (f(r), f(!r))
                        }
                    };
                    set!(regs, *d, l, p as u64);
                    if let Some(d2) = d2 {
                        set!(regs, *d2, l, q as u64);
                    }
                });
            }
            Op::PredLogic { k, d, a, b } => {
                each!(|l| {
                    let x = (v!(regs, a.0, l) & 1 != 0) != a.1;
                    let y = (v!(regs, b.0, l) & 1 != 0) != b.1;
                    let r = match k {
                        0 => x && y,
                        1 => x || y,
                        2 => x != y,
                        _ => !x,
                    };
                    set!(regs, *d, l, r as u64)
                });
            }
            Op::Selp { ty, d, a, b, p } => {
                each!(|l| {
                    let c = (v!(regs, p.0, l) & 1 != 0) != p.1;
                    let x = if c { v!(regs, *a, l) } else { v!(regs, *b, l) };
                    set!(regs, *d, l, ty.trunc(x))
                });
            }
            Op::Cvt {
                dt,
                st,
                rnd,
                int_round,
                sat,
                d,
                a,
            } => {
                each!(|l| {
                    let x = v!(regs, *a, l);
                    set!(regs, *d, l, convert(*dt, *st, *rnd, *int_round, *sat, x))
                });
            }
            Op::CvtPack { dt, relu, d, a, b } => {
                let e = if *dt == Ty::F16x2 { Ty::F16 } else { Ty::Bf16 };
                each!(|l| {
                    let f = |x: u64| {
                        let mut v = f32::from_bits(x as u32) as f64;
                        if *relu && v <= 0.0 {
                            v = 0.0;
                        }
                        from_f64(e, v)
                    };
                    let hi = f(v!(regs, *a, l));
                    let lo = f(v!(regs, *b, l));
                    set!(regs, *d, l, lo | hi << 16)
                });
            }
            Op::Activemask { d } => {
                each!(|l| set!(regs, *d, l, path as u64));
            }
            Op::Vote { mode, d, p } => {
                let mut ballot = 0u32;
                each!(|l| {
                    if (v!(regs, p.0, l) & 1 != 0) != p.1 {
                        ballot |= 1 << l;
                    }
                });
                let r = match mode {
                    0 => (ballot == mask) as u64,
                    1 => (ballot != 0) as u64,
                    2 => (ballot == 0 || ballot == mask) as u64,
                    _ => ballot as u64,
                };
                each!(|l| set!(regs, *d, l, r));
            }
            Op::Shfl { mode, d, p, s } => {
                let mut out = [0u64; 32];
                let mut ok = [false; 32];
                each!(|l| {
                    let lane = l as u32;
                    let bval = (v!(regs, s[1], l) & 0x1f) as u32;
                    let c = v!(regs, s[2], l) as u32;
                    let cval = c & 0x1f;
                    let seg = (c >> 8) & 0x1f;
                    let max_lane = (lane & seg) | (cval & !seg);
                    let min_lane = lane & seg;
                    let (j, pval) = match mode {
                        ShflMode::Up => {
                            let j = lane as i32 - bval as i32;
                            (j, j >= max_lane as i32)
                        }
                        ShflMode::Down => {
                            let j = (lane + bval) as i32;
                            (j, j <= max_lane as i32)
                        }
                        ShflMode::Bfly => {
                            let j = (lane ^ bval) as i32;
                            (j, j <= max_lane as i32)
                        }
                        ShflMode::Idx => {
                            let j = (min_lane | (bval & !seg)) as i32;
                            (j, j <= max_lane as i32)
                        }
                    };
                    let src = if pval { j as usize } else { l };
                    out[l] = v!(regs, s[0], src & 31);
                    ok[l] = pval;
                });
                each!(|l| {
                    set!(regs, *d, l, out[l] & 0xffff_ffff);
                    if let Some(p) = p {
                        set!(regs, *p, l, ok[l] as u64);
                    }
                });
            }
            Op::Ld { space, ty, d, addr } => {
                let (space, ty) = (*space, *ty);
                let eb = ty.bytes();
                let total = eb * d.len() as u32;
                match self.resolve_space(w, space, addr, mask, total)? {
                    Resolved::Param => {
                        let regs = &mut self.warps[w].regs;
                        let base = addr_value(regs, addr, mask.trailing_zeros() as usize);
                        each!(|l| {
                            for (i, dst) in d.iter().enumerate() {
                                let o = base + (i as u32 * eb) as i128;
                                let v = read_bytes(&self.params, o, eb).ok_or_else(|| {
                                    format!(
                                        "parameter offset {o} is outside the {} parameter bytes",
                                        self.params.len()
                                    )
                                })?;
                                if let Some(r) = dst {
                                    set!(regs, *r, l, extend(ty, v));
                                }
                            }
                        });
                    }
                    Resolved::Global(addrs) => {
                        let regs = &mut self.warps[w].regs;
                        each!(|l| {
                            for (i, dst) in d.iter().enumerate() {
                                let mut b = [0u8; 8];
                                self.global.read(
                                    addrs[l] + (i as u32 * eb) as u64,
                                    &mut b[..eb as usize],
                                )?;
                                if let Some(r) = dst {
                                    set!(regs, *r, l, extend(ty, u64::from_le_bytes(b)));
                                }
                            }
                        });
                    }
                    Resolved::Local(addrs) => {
                        let frame = self.prog.local_frame as usize;
                        let warp = &mut self.warps[w];
                        if warp.local.is_empty() {
                            warp.local = vec![0u8; frame * WARP_SIZE];
                        }
                        let (regs, local) = (&mut warp.regs, &warp.local);
                        each!(|l| {
                            let base = l * frame + addrs[l] as usize;
                            for (i, dst) in d.iter().enumerate() {
                                let o = base + i * eb as usize;
                                let mut b = [0u8; 8];
                                b[..eb as usize].copy_from_slice(&local[o..o + eb as usize]);
                                if let Some(r) = dst {
                                    set!(regs, *r, l, extend(ty, u64::from_le_bytes(b)));
                                }
                            }
                        });
                    }
                    Resolved::Shared(addrs) => {
                        let width = width_of(total)?;
                        let step = self.shared_op(
                            pc,
                            SharedKind::Ld(width),
                            addrs,
                            mask,
                            &[[0; 4]; 32],
                            None,
                        )?;
                        let regs = &mut self.warps[w].regs;
                        each!(|l| {
                            let bytes = lane_bytes(&step.regs[l]);
                            for (i, dst) in d.iter().enumerate() {
                                if let Some(r) = dst {
                                    let o = i * eb as usize;
                                    let mut b = [0u8; 8];
                                    b[..eb as usize].copy_from_slice(&bytes[o..o + eb as usize]);
                                    set!(regs, *r, l, extend(ty, u64::from_le_bytes(b)));
                                }
                            }
                        });
                        observe(obs, w, pc, inst, mask, TraceKind::Shared(&step));
                    }
                }
            }
            Op::St { space, ty, s, addr } => {
                let (space, ty) = (*space, *ty);
                let eb = ty.bytes();
                let total = eb * s.len() as u32;
                match self.resolve_space(w, space, addr, mask, total)? {
                    Resolved::Param => return Err("st.param is not supported in a kernel".into()),
                    Resolved::Local(addrs) => {
                        let frame = self.prog.local_frame as usize;
                        let warp = &mut self.warps[w];
                        if warp.local.is_empty() {
                            warp.local = vec![0u8; frame * WARP_SIZE];
                        }
                        let (regs, local) = (&warp.regs, &mut warp.local);
                        each!(|l| {
                            let base = l * frame + addrs[l] as usize;
                            for (i, src) in s.iter().enumerate() {
                                let o = base + i * eb as usize;
                                local[o..o + eb as usize].copy_from_slice(
                                    &v!(regs, *src, l).to_le_bytes()[..eb as usize],
                                );
                            }
                        });
                    }
                    Resolved::Global(addrs) => {
                        let regs = &self.warps[w].regs;
                        let mut m = mask;
                        while m != 0 {
                            let l = m.trailing_zeros() as usize;
                            m &= m - 1;
                            for (i, src) in s.iter().enumerate() {
                                let x = v!(regs, *src, l).to_le_bytes();
                                self.global
                                    .write(addrs[l] + (i as u32 * eb) as u64, &x[..eb as usize])?;
                            }
                        }
                    }
                    Resolved::Shared(addrs) => {
                        let width = width_of(total)?;
                        let mut data = [[0u32; 4]; 32];
                        let regs = &self.warps[w].regs;
                        each!(|l| {
                            let mut bytes = [0u8; 16];
                            for (i, src) in s.iter().enumerate() {
                                let o = i * eb as usize;
                                bytes[o..o + eb as usize].copy_from_slice(
                                    &v!(regs, *src, l).to_le_bytes()[..eb as usize],
                                );
                            }
                            data[l] = regs_of(&bytes);
                        });
                        let step =
                            self.shared_op(pc, SharedKind::St(width), addrs, mask, &data, None)?;
                        observe(obs, w, pc, inst, mask, TraceKind::Shared(&step));
                    }
                }
            }
            Op::Ldmatrix {
                num,
                trans,
                d,
                addr,
            } => {
                let addrs = self.matrix_addrs(w, addr, *num)?;
                let n = MatrixCount::from_count(*num as u32).unwrap_or(MatrixCount::X4);
                let step = self.shared_op(
                    pc,
                    SharedKind::Ldmatrix(n, *trans),
                    addrs,
                    mask,
                    &[[0; 4]; 32],
                    None,
                )?;
                let regs = &mut self.warps[w].regs;
                for l in 0..WARP_SIZE {
                    for (i, r) in d.iter().enumerate() {
                        set!(regs, *r, l, step.regs[l][i] as u64);
                    }
                }
                observe(obs, w, pc, inst, mask, TraceKind::Shared(&step));
            }
            Op::Stmatrix {
                num,
                trans,
                s,
                addr,
            } => {
                let addrs = self.matrix_addrs(w, addr, *num)?;
                let n = MatrixCount::from_count(*num as u32).unwrap_or(MatrixCount::X4);
                let regs = &self.warps[w].regs;
                let mut data = [[0u32; 4]; 32];
                for (l, lane) in data.iter_mut().enumerate() {
                    for (i, src) in s.iter().enumerate() {
                        lane[i] = v!(regs, *src, l) as u32;
                    }
                }
                let step = self.shared_op(
                    pc,
                    SharedKind::Stmatrix(n, *trans),
                    addrs,
                    mask,
                    &data,
                    None,
                )?;
                observe(obs, w, pc, inst, mask, TraceKind::Shared(&step));
            }
            Op::CpAsync {
                size,
                dst,
                src,
                src_size,
                ignore,
                cg,
            } => {
                let (cg, size) = (*cg, *size);
                let Resolved::Shared(saddrs) =
                    self.resolve_space(w, Space::Shared, dst, mask, size)?
                else {
                    return Err("cp.async destination must be shared memory".into());
                };
                let regs = &self.warps[w].regs;
                let mut data = [[0u32; 4]; 32];
                let mut src_addrs = [0u64; 32];
                let mut zero_fill = false;
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let mut n = match src_size {
                        Some(s) => (v!(regs, *s, l) as u32).min(size),
                        None => size,
                    };
                    if let Some((p, neg)) = ignore
                        && (v!(regs, *p, l) & 1 != 0) != *neg
                    {
                        n = 0;
                    }
                    zero_fill |= n < size;
                    let mut bytes = [0u8; 16];
                    if n > 0 {
                        let a = addr_value(regs, src, l);
                        let a = u64::try_from(a)
                            .map_err(|_| format!("lane {l}: negative global address {a}"))?;
                        src_addrs[l] = a;
                        self.global.read(a, &mut bytes[..n as usize])?;
                    } else {
                        // An ignored source (src-size 0) is read from nowhere; its address
                        // still places the lane for the cost model.
                        src_addrs[l] = u64::try_from(addr_value(regs, src, l)).unwrap_or(0);
                    }
                    data[l] = regs_of(&bytes);
                }
                let kind = match (cg, size) {
                    (false, 4) => CpAsyncKind::Ca4,
                    (false, 8) => CpAsyncKind::Ca8,
                    (false, _) => CpAsyncKind::Ca16,
                    (true, 16) => CpAsyncKind::Cg16,
                    (true, n) => return Err(format!("cp.async.cg copies 16 bytes; found {n}")),
                };
                let step = self.shared_op(
                    pc,
                    SharedKind::CpAsync(kind),
                    saddrs,
                    mask,
                    &data,
                    Some(CpSources {
                        addrs: &src_addrs,
                        zero_fill,
                    }),
                )?;
                observe(obs, w, pc, inst, mask, TraceKind::Shared(&step));
            }
            Op::Mma {
                shape,
                dtype,
                d,
                a,
                b,
                c,
            } => {
                if mask != u32::MAX {
                    return Err(format!(
                        "mma.sync needs all 32 lanes of the warp (.aligned); active lanes {mask:#010x}"
                    ));
                }
                let mut ra = [[0u32; 4]; 32];
                let mut rb = [[0u32; 4]; 32];
                let mut rc = [[0u32; 4]; 32];
                for l in 0..WARP_SIZE {
                    for (i, s) in a.iter().enumerate() {
                        ra[l][i] = v!(regs, *s, l) as u32;
                    }
                    for (i, s) in b.iter().enumerate() {
                        rb[l][i] = v!(regs, *s, l) as u32;
                    }
                    for (i, s) in c.iter().enumerate() {
                        rc[l][i] = v!(regs, *s, l) as u32;
                    }
                }
                let out = warp_ops::mma(&mut self.smem, *shape, *dtype, &ra, &rb, &rc)
                    .map_err(|e| e.to_string())?;
                for l in 0..WARP_SIZE {
                    for (i, r) in d.iter().enumerate() {
                        set!(regs, *r, l, out[l][i] as u64);
                    }
                }
                observe(obs, w, pc, inst, mask, TraceKind::Mma(&out));
            }
            Op::Atom {
                space,
                op,
                ty,
                d,
                addr,
                b,
                c,
            } => {
                let eb = ty.bytes();
                let resolved = self.resolve_space(w, *space, addr, mask, eb)?;
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let regs = &self.warps[w].regs;
                    let (bv, cv) = (v!(regs, *b, l), c.map(|c| v!(regs, c, l)));
                    let mut buf = [0u8; 8];
                    match &resolved {
                        Resolved::Shared(a) => {
                            let o = a[l] as usize;
                            if !(a[l]).is_multiple_of(eb) {
                                return Err(format!(
                                    "lane {l}: shared address {} is not aligned to {eb} bytes",
                                    a[l]
                                ));
                            }
                            let Some(old) = self.smem.bytes().get(o..o + eb as usize) else {
                                return Err(format!(
                                    "lane {l}: bytes {o}..{} are outside shared memory of {} bytes",
                                    o + eb as usize,
                                    self.smem.len()
                                ));
                            };
                            buf[..eb as usize].copy_from_slice(old);
                        }
                        Resolved::Global(a) => self.global.read(a[l], &mut buf[..eb as usize])?,
                        Resolved::Param => return Err("atom on .param".into()),
                        Resolved::Local(_) => {
                            return Err(format!(
                                "lane {l}: a generic atom/red address falls in the local window (atomics act on global or shared memory)"
                            ));
                        }
                    }
                    let old = u64::from_le_bytes(buf);
                    let new = atomic(*op, *ty, old, bv, cv);
                    let nb = new.to_le_bytes();
                    match &resolved {
                        Resolved::Shared(a) => {
                            let o = a[l] as usize;
                            self.smem.bytes_mut()[o..o + eb as usize]
                                .copy_from_slice(&nb[..eb as usize]);
                        }
                        Resolved::Global(a) => self.global.write(a[l], &nb[..eb as usize])?,
                        Resolved::Param | Resolved::Local(_) => {}
                    }
                    if let Some(d) = d {
                        self.warps[w].regs[*d as usize * WARP_SIZE + l] = extend(*ty, old);
                    }
                }
            }
            Op::Bra { .. } | Op::Exit | Op::Bar { .. } => {}
        }
        Ok(())
    }

    /// Runs one shared-memory request through the door to `sim`, counting it.
    fn shared_op(
        &mut self,
        pc: usize,
        kind: SharedKind,
        addrs: [u32; 32],
        mask: u32,
        data: &LaneRegs,
        copy: Option<CpSources>,
    ) -> Result<Step, String> {
        let (src_addrs, zero_fill) = copy.map_or((&[0u64; 32], false), |c| (c.addrs, c.zero_fill));
        let mut step = warp_ops::shared(&mut self.smem, kind, addrs, mask, data, src_addrs)
            .map_err(|e| e.to_string())?;
        // A `.ca` copy with an active lane reading fewer bytes than it writes: never measured,
        // so neither counted nor bounded (`.cg` keeps its own reason).
        if zero_fill && step.cost.not_modelled != Some(NotModelled::CpAsyncCg) {
            step.cost = RequestCost::unmodelled(NotModelled::CpAsyncZeroFill);
        }
        let st = &mut self.stats[pc];
        st.wavefronts += step.cost.wavefronts as u64;
        st.ideal += step.cost.ideal as u64;
        if step.cost.not_modelled.is_some() {
            st.not_modelled += 1;
        }
        if matches!(kind, SharedKind::CpAsync(_)) {
            match step.cost.not_modelled {
                None => {
                    let w = u64::from(step.cost.wavefronts);
                    st.sass_bounds = [st.sass_bounds[0] + w, st.sass_bounds[1] + w];
                }
                Some(NotModelled::CpAsyncSpreadSources(b)) => {
                    st.sass_bounds = [
                        st.sass_bounds[0] + u64::from(b.lo),
                        st.sass_bounds[1] + u64::from(b.hi),
                    ];
                }
                Some(_) => st.sass_unbounded += 1,
            }
        }
        let lanes = step.request.as_ref().map_or(0, |r| r.address_lanes());
        let width = kind.bytes_per_address();
        for (l, &a) in addrs.iter().enumerate() {
            if lanes >> l & 1 == 1 {
                self.touched = self.touched.max(a.saturating_add(width));
            }
        }
        Ok(step)
    }

    fn matrix_addrs(&self, w: usize, addr: &Addr, num: u8) -> Result<[u32; 32], String> {
        let regs = &self.warps[w].regs;
        let lanes = 8 * num as usize;
        let mut out = [0u32; 32];
        for (l, o) in out.iter_mut().enumerate().take(lanes) {
            *o = shared_addr(addr_value(regs, addr, l), l, self.smem.len())?;
        }
        Ok(out)
    }

    fn resolve_space(
        &self,
        w: usize,
        space: Space,
        addr: &Addr,
        mask: u32,
        bytes: u32,
    ) -> Result<Resolved, String> {
        let regs = &self.warps[w].regs;
        match space {
            Space::Param => Ok(Resolved::Param),
            Space::Shared => {
                let mut out = [0u32; 32];
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    out[l] = shared_addr(addr_value(regs, addr, l), l, self.smem.len())?;
                }
                Ok(Resolved::Shared(out))
            }
            Space::Local => {
                let mut out = [0u32; 32];
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    out[l] = local_addr(addr_value(regs, addr, l), bytes, self.prog.local_frame)
                        .map_err(|e| format!("lane {l}: {e}"))?;
                }
                Ok(Resolved::Local(out))
            }
            Space::Global | Space::Generic => {
                let mut g = [0u64; 32];
                let mut s = [0u32; 32];
                let mut loc = [0u32; 32];
                let (mut any_s, mut any_g, mut any_l) = (false, false, false);
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let a = addr_value(regs, addr, l);
                    let a =
                        u64::try_from(a).map_err(|_| format!("lane {l}: negative address {a}"))?;
                    if space == Space::Generic
                        && (SHARED_WINDOW..SHARED_WINDOW + self.smem.len() as u64).contains(&a)
                    {
                        s[l] = (a - SHARED_WINDOW) as u32;
                        any_s = true;
                    } else if space == Space::Generic
                        && (LOCAL_WINDOW..LOCAL_WINDOW + LOCAL_WINDOW_BYTES).contains(&a)
                    {
                        loc[l] =
                            local_addr(i128::from(a - LOCAL_WINDOW), bytes, self.prog.local_frame)
                                .map_err(|e| format!("lane {l}: generic address {a:#x}: {e}"))?;
                        any_l = true;
                    } else {
                        self.global
                            .check(a, bytes as u64)
                            .map_err(|e| format!("lane {l}: {e}"))?;
                        g[l] = a;
                        any_g = true;
                    }
                }
                match (any_s, any_g, any_l) {
                    (true, false, false) => Ok(Resolved::Shared(s)),
                    (false, false, true) => Ok(Resolved::Local(loc)),
                    (false, _, false) => Ok(Resolved::Global(g)),
                    _ => Err(format!(
                        "a generic access mixes {} addresses across lanes",
                        [(any_g, "global"), (any_s, "shared"), (any_l, "local")]
                            .iter()
                            .filter(|x| x.0)
                            .map(|x| x.1)
                            .collect::<Vec<_>>()
                            .join(" and ")
                    )),
                }
            }
        }
    }
}

enum Resolved {
    Param,
    Shared([u32; 32]),
    Global([u64; 32]),
    /// Byte offsets into each lane's own frame, checked against its size.
    Local([u32; 32]),
}

fn observe<'o>(
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

fn param_list(p: &Program) -> String {
    crate::text::list(p.params.iter().enumerate().map(|(i, q)| {
        format!(
            "{i}: {} (.{}{})",
            q.name,
            q.ty,
            if q.pointer { ", pointer" } else { "" }
        )
    }))
}

fn addr_value(regs: &[u64], a: &Addr, l: usize) -> i128 {
    let base = match a.base {
        Src::Reg(r) => regs[r as usize * WARP_SIZE + l],
        Src::Imm(v) => v,
    };
    base as i128 + a.offset as i128
}

fn shared_addr(a: i128, l: usize, size: u32) -> Result<u32, String> {
    u32::try_from(a).map_err(|_| {
        format!("lane {l}: shared address {a} is outside shared memory of {size} bytes")
    })
}

/// A local address `a` of an access of `n` bytes, checked against the thread's frame.
fn local_addr(a: i128, n: u32, frame: u32) -> Result<u32, String> {
    match a.checked_add(i128::from(n)) {
        Some(end) if a >= 0 && end <= i128::from(frame) => Ok(a as u32),
        _ => Err(format!(
            "local address {a} ({n} bytes) is outside the thread's .local frame of {frame} bytes"
        )),
    }
}

fn read_bytes(buf: &[u8], o: i128, n: u32) -> Option<u64> {
    let o = usize::try_from(o).ok()?;
    let s = buf.get(o..o.checked_add(n as usize)?)?;
    let mut b = [0u8; 8];
    b[..s.len()].copy_from_slice(s);
    Some(u64::from_le_bytes(b))
}

fn width_of(bytes: u32) -> Result<AccessWidth, String> {
    AccessWidth::from_bytes(bytes).ok_or_else(|| {
        format!("a shared access of {bytes} bytes per lane is not supported (1, 2, 4, 8 or 16)")
    })
}

fn lane_bytes(r: &[u32; 4]) -> [u8; 16] {
    let mut b = [0u8; 16];
    for i in 0..4 {
        b[4 * i..4 * i + 4].copy_from_slice(&r[i].to_le_bytes());
    }
    b
}

fn regs_of(b: &[u8; 16]) -> [u32; 4] {
    std::array::from_fn(|i| {
        u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    })
}

/// A loaded value of `ty` in a register: signed types sign-extended.
fn extend(ty: Ty, v: u64) -> u64 {
    if ty.signed() {
        sext(v, ty.bits()) as u64
    } else {
        ty.trunc(v)
    }
}

fn unary(k: Un, ty: Ty, x: u64) -> u64 {
    let bits = ty.bits();
    match k {
        Un::Not => ty.trunc(!x),
        Un::Cnot => (ty.trunc(x) == 0) as u64,
        Un::Neg if ty.is_float() => float1(ty, x, |a| -a, |a| -a),
        Un::Neg => ty.trunc((ty.int(x)).wrapping_neg() as u64),
        Un::Abs if ty.is_float() => float1(ty, x, f32::abs, f64::abs),
        Un::Abs => ty.trunc(ty.int(x).unsigned_abs() as u64),
        Un::Popc => ty.trunc(x).count_ones() as u64,
        Un::Clz => (ty.trunc(x).leading_zeros() - (64 - bits)) as u64,
        Un::Brev => ty.trunc(x).reverse_bits() >> (64 - bits),
        Un::Ex2 => float1(ty, x, f32::exp2, f64::exp2),
        Un::Lg2 => float1(ty, x, f32::log2, f64::log2),
        Un::Rcp => float1(ty, x, |a| 1.0 / a, |a| 1.0 / a),
        Un::Sqrt => float1(ty, x, f32::sqrt, f64::sqrt),
        Un::Rsqrt => float1(ty, x, |a| 1.0 / a.sqrt(), |a| 1.0 / a.sqrt()),
        Un::Sin => float1(ty, x, f32::sin, f64::sin),
        Un::Cos => float1(ty, x, f32::cos, f64::cos),
        Un::Tanh => float1(ty, x, f32::tanh, f64::tanh),
        Un::CvtaToShared => ty.trunc(x.wrapping_sub(SHARED_WINDOW)),
        Un::CvtaFromShared => ty.trunc((x & 0xffff_ffff).wrapping_add(SHARED_WINDOW)),
        Un::CvtaToLocal => ty.trunc(x.wrapping_sub(LOCAL_WINDOW)),
        Un::CvtaFromLocal => ty.trunc((x & 0xffff_ffff).wrapping_add(LOCAL_WINDOW)),
    }
}

fn binary(k: Bin, ty: Ty, x: u64, y: u64) -> u64 {
    if ty.is_float() {
        return match k {
            Bin::Add => float2(ty, x, y, |a, b| a + b, |a, b| a + b),
            Bin::Sub => float2(ty, x, y, |a, b| a - b, |a, b| a - b),
            Bin::MulLo | Bin::MulHi | Bin::MulWide => float2(ty, x, y, |a, b| a * b, |a, b| a * b),
            Bin::Div => float2(ty, x, y, |a, b| a / b, |a, b| a / b),
            Bin::Min => float2(ty, x, y, f32::min, f64::min),
            Bin::Max => float2(ty, x, y, f32::max, f64::max),
            Bin::Copysign => float2(ty, x, y, |a, b| b.copysign(a), |a, b| b.copysign(a)),
            Bin::And => x & y,
            Bin::Or => x | y,
            Bin::Xor => x ^ y,
            _ => 0,
        };
    }
    let bits = ty.bits();
    let (a, b) = (ty.int(x), ty.int(y));
    let t = |v: i128| ty.trunc(v as u64);
    match k {
        Bin::Add => t(a.wrapping_add(b)),
        Bin::Sub => t(a.wrapping_sub(b)),
        Bin::MulLo => t(a.wrapping_mul(b)),
        Bin::MulHi => t(a.wrapping_mul(b) >> bits),
        Bin::MulWide => {
            let p = a.wrapping_mul(b) as u128 as u64;
            if bits >= 32 {
                p
            } else {
                p & ((1u64 << (2 * bits)) - 1)
            }
        }
        Bin::Div => {
            if b == 0 {
                ty.trunc(u64::MAX)
            } else {
                t(a.wrapping_div(b))
            }
        }
        Bin::Rem => {
            if b == 0 {
                t(a)
            } else {
                t(a.wrapping_rem(b))
            }
        }
        Bin::Min => t(a.min(b)),
        Bin::Max => t(a.max(b)),
        Bin::And => ty.trunc(x & y),
        Bin::Or => ty.trunc(x | y),
        Bin::Xor => ty.trunc(x ^ y),
        Bin::Shl => {
            let s = y & 0xffff_ffff;
            if s >= bits as u64 {
                0
            } else {
                ty.trunc(x << s)
            }
        }
        Bin::Shr => {
            let s = (y & 0xffff_ffff).min(bits as u64 - 1 + ty.signed() as u64);
            if ty.signed() {
                t(a >> s.min(127))
            } else if s >= bits as u64 {
                0
            } else {
                ty.trunc(x) >> s
            }
        }
        Bin::Copysign => 0,
    }
}

fn ternary(k: Tern, ty: Ty, x: u64, y: u64, z: u64) -> u64 {
    let bits = ty.bits();
    match k {
        Tern::MadLo if ty.is_float() => fma(ty, x, y, z),
        Tern::MadLo => ty.trunc(ty.int(x).wrapping_mul(ty.int(y)).wrapping_add(ty.int(z)) as u64),
        Tern::MadHi => {
            ty.trunc(((ty.int(x).wrapping_mul(ty.int(y))) >> bits).wrapping_add(ty.int(z)) as u64)
        }
        Tern::MadWide => {
            let wide = match ty {
                Ty::S(b) => Ty::S(b * 2),
                Ty::U(b) => Ty::U(b * 2),
                o => o,
            };
            wide.trunc(ty.int(x).wrapping_mul(ty.int(y)).wrapping_add(wide.int(z)) as u64)
        }
        Tern::Bfe => {
            let a = ty.trunc(x);
            let pos = (y & 0xff) as u32;
            let len = (z & 0xff) as u32;
            let msb = bits - 1;
            let sbit = if ty.signed() && len > 0 {
                (a >> (pos + len - 1).min(msb)) & 1
            } else {
                0
            };
            let mut d = 0u64;
            for i in 0..bits {
                let bit = if i < len && pos + i <= msb {
                    (a >> (pos + i)) & 1
                } else {
                    sbit
                };
                d |= bit << i;
            }
            d
        }
        Tern::Prmt => {
            let src = (x & 0xffff_ffff) | (y & 0xffff_ffff) << 32;
            let mut d = 0u64;
            for i in 0..4 {
                let sel = (z >> (4 * i)) & 0xf;
                let byte = (src >> (8 * (sel & 7))) & 0xff;
                let byte = if sel & 8 != 0 {
                    if byte & 0x80 != 0 { 0xff } else { 0 }
                } else {
                    byte
                };
                d |= byte << (8 * i);
            }
            d
        }
        Tern::ShfL(wrap) | Tern::ShfR(wrap) => {
            let n = if wrap {
                (z & 31) as u32
            } else {
                (z as u32).min(32)
            };
            let v = (x & 0xffff_ffff) | (y & 0xffff_ffff) << 32;
            if matches!(k, Tern::ShfL(_)) {
                ((v << n) >> 32) & 0xffff_ffff
            } else {
                (v >> n) & 0xffff_ffff
            }
        }
    }
}

fn compare(cmp: Cmp, ty: Ty, x: u64, y: u64) -> bool {
    if ty.is_float() {
        let (a, b) = (to_f64(ty, x), to_f64(ty, y));
        let nan = a.is_nan() || b.is_nan();
        return match cmp {
            Cmp::Eq => a == b,
            Cmp::Ne => !nan && a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Unordered(k) => {
                nan || match k {
                    0 => a == b,
                    1 => a != b,
                    2 => a < b,
                    3 => a <= b,
                    4 => a > b,
                    _ => a >= b,
                }
            }
            Cmp::Num => !nan,
            Cmp::Nan => nan,
        };
    }
    let (a, b) = (ty.int(x), ty.int(y));
    match cmp {
        Cmp::Eq | Cmp::Unordered(0) => a == b,
        Cmp::Ne | Cmp::Unordered(1) => a != b,
        Cmp::Lt | Cmp::Unordered(2) => a < b,
        Cmp::Le | Cmp::Unordered(3) => a <= b,
        Cmp::Gt | Cmp::Unordered(4) => a > b,
        Cmp::Ge | Cmp::Unordered(_) => a >= b,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

fn round(x: f64, rnd: u8) -> f64 {
    match rnd {
        1 => x.trunc(),
        2 => x.floor(),
        3 => x.ceil(),
        _ => x.round_ties_even(),
    }
}

fn convert(dt: Ty, st: Ty, rnd: u8, int_round: bool, sat: bool, x: u64) -> u64 {
    let int_range = |t: Ty| -> (f64, f64) {
        let b = t.bits();
        if t.signed() {
            (-(2f64.powi(b as i32 - 1)), 2f64.powi(b as i32 - 1) - 1.0)
        } else {
            (0.0, 2f64.powi(b as i32) - 1.0)
        }
    };
    match (st.is_float(), dt.is_float()) {
        (false, false) => {
            let v = st.int(x);
            let v = if sat {
                let b = dt.bits();
                let (lo, hi) = if dt.signed() {
                    (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
                } else {
                    (0, (1i128 << b) - 1)
                };
                v.clamp(lo, hi)
            } else {
                v
            };
            if dt.signed() && dt.bits() < 64 {
                // Keep the register bits of the destination width, sign-extended.
                sext(v as u64, dt.bits()) as u64 & dt_mask(dt)
            } else {
                dt.trunc(v as u64)
            }
        }
        (true, false) => {
            let f = to_f64(st, x);
            if f.is_nan() {
                return 0;
            }
            let (lo, hi) = int_range(dt);
            let r = round(f, rnd).clamp(lo, hi);
            dt.trunc(r as i128 as u64)
        }
        (false, true) => {
            let v = st.int(x) as f64;
            from_f64(dt, v)
        }
        (true, true) => {
            let mut f = to_f64(st, x);
            if int_round {
                f = round(f, rnd);
            }
            if sat && !f.is_nan() {
                f = f.clamp(0.0, 1.0);
            }
            from_f64(dt, f)
        }
    }
}

fn dt_mask(t: Ty) -> u64 {
    if t.bits() >= 64 {
        u64::MAX
    } else {
        (1u64 << t.bits()) - 1
    }
}

fn atomic(op: AtomOp, ty: Ty, old: u64, b: u64, c: Option<u64>) -> u64 {
    if ty.is_float() {
        return match op {
            AtomOp::Add => float2(ty, old, b, |x, y| x + y, |x, y| x + y),
            AtomOp::Min => float2(ty, old, b, f32::min, f64::min),
            AtomOp::Max => float2(ty, old, b, f32::max, f64::max),
            AtomOp::Exch => b,
            _ => old,
        };
    }
    let (a, v) = (ty.int(old), ty.int(b));
    let t = |x: i128| ty.trunc(x as u64);
    match op {
        AtomOp::Add => t(a.wrapping_add(v)),
        AtomOp::Min => t(a.min(v)),
        AtomOp::Max => t(a.max(v)),
        AtomOp::And => ty.trunc(old & b),
        AtomOp::Or => ty.trunc(old | b),
        AtomOp::Xor => ty.trunc(old ^ b),
        AtomOp::Exch => ty.trunc(b),
        AtomOp::Cas => {
            if ty.trunc(old) == ty.trunc(b) {
                ty.trunc(c.unwrap_or(old))
            } else {
                old
            }
        }
        AtomOp::Inc => {
            if a >= v {
                0
            } else {
                t(a + 1)
            }
        }
        AtomOp::Dec => {
            if a == 0 || a > v {
                t(v)
            } else {
                t(a - 1)
            }
        }
    }
}
