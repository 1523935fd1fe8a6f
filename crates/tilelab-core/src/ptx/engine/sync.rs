//! Synchronisation and the asynchronous units of the CTA engine: the sixteen named barriers
//! (`bar.sync`/`bar.arrive`/`bar.red` with thread counts), mbarrier objects (through the pure
//! model [`crate::sim::mbarrier`]), `barrier.cluster`, the units' groups and waits
//! (`cp.async`, bulk copies, `wgmma`: [`AsyncOp`]), and `elect.sync`, `mapa`, `call`.
//!
//! **Async units.** An asynchronous operation a warp issues is an [`AsyncOp`] in the CTA's
//! pending list: the group it belongs to (if its unit has groups) and its completion action
//! (e.g. a complete-tx of N bytes on an mbarrier). The scheduler completes every pending
//! operation when no warp can run (all blocked, spinning or exited): a legal schedule, since
//! PTX promises completion only at the waits (`wait_group`, the mbarrier phase), and one that
//! lets each wait see the most work done before it. A later bulk-copy or `wgmma` arm issues
//! one with [`Machine::issue_async`].
//!
//! **Cluster.** A launch runs every CTA of the cluster containing `--cta` together
//! ([`ClusterShape::of`], the shape from [`crate::ptx::params::check_cluster`]; one CTA when the
//! launch names no cluster): each CTA has its own warps, shared memory window, named barriers
//! and mbarriers ([`super::CtaState`]); `barrier.cluster` completes a phase when every
//! warp of every CTA not exited has arrived (PTX ISA 9.7.13.2); `mapa` gives the
//! `shared::cluster` address of the same offset in another CTA ([`super::mem::cluster_addr`]);
//! an `mbarrier.arrive` on a `shared::cluster` address arrives on that CTA's object; pending
//! asynchronous operations name the CTA whose mbarrier they complete.

use super::mem::addr_value;
use super::{
    Block, Launch, Machine, MbarState, MbarrierEvent, Observer, TraceEvent, TraceKind, WState,
    check_member, observe,
};
use crate::ptx::decode::{AsyncUnit, BarRed, Inst, MbarOp, Op, SHARED_WINDOW, Space, Src};
use crate::sim::bank::WARP_SIZE;
use crate::sim::mbarrier::{Mbarrier, MbarrierError};

/// One CTA's place in its cluster (PTX ISA §10.11-§10.17, the cluster special registers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::ptx) struct ClusterShape {
    /// `%cluster_nctaid`: CTAs per cluster in x, y, z.
    pub(in crate::ptx) dims: [u32; 3],
    /// `%cluster_ctaid`: the CTA's position in its cluster.
    pub(in crate::ptx) ctaid: [u32; 3],
    /// `%clusterid`: the cluster's position in the grid.
    pub(in crate::ptx) id: [u32; 3],
    /// `%nclusterid`: clusters in the grid.
    pub(in crate::ptx) nclusters: [u32; 3],
    /// `%cluster_ctarank`.
    pub(in crate::ptx) rank: u32,
    /// `%is_explicit_cluster`.
    pub(in crate::ptx) explicit: bool,
}

impl ClusterShape {
    /// The CTA of cluster rank `rank` in the cluster of `dims` CTAs that contains `l.cta`
    /// (`explicit`: `%is_explicit_cluster`). The rank is linear, x fastest (PTX ISA §10.15
    /// `%cluster_ctarank`: `x + y * nx + z * nx * ny` of `%cluster_ctaid`); a launch that
    /// names no cluster runs clusters of 1×1×1 (§10.17), each CTA its own.
    pub(in crate::ptx) fn of(l: &Launch, dims: [u32; 3], explicit: bool, rank: u32) -> Self {
        let ctaid = [
            rank % dims[0],
            (rank / dims[0]) % dims[1],
            rank / (dims[0] * dims[1]),
        ];
        ClusterShape {
            dims,
            ctaid,
            id: std::array::from_fn(|d| l.cta[d] / dims[d]),
            nclusters: std::array::from_fn(|d| l.grid[d] / dims[d]),
            rank,
            explicit,
        }
    }

    /// The cluster rank of CTA `cta` in clusters of `dims`.
    pub(in crate::ptx) fn rank_of(cta: [u32; 3], dims: [u32; 3]) -> u32 {
        let c: [u32; 3] = std::array::from_fn(|d| cta[d] % dims[d]);
        c[0] + c[1] * dims[0] + c[2] * dims[0] * dims[1]
    }

    /// This CTA's `%ctaid`.
    pub(in crate::ptx) fn cta(&self) -> [u32; 3] {
        std::array::from_fn(|d| self.id[d] * self.dims[d] + self.ctaid[d])
    }

    /// `%cluster_nctarank`: CTAs in the cluster.
    pub(in crate::ptx) fn ctas(&self) -> u32 {
        self.dims.iter().product()
    }
}

/// An mbarrier operation's PTX name (`arrive`, `try_wait`, ...).
fn mbar_op_name(op: &MbarOp) -> &'static str {
    match op {
        MbarOp::Init => "init",
        MbarOp::Arrive => "arrive",
        MbarOp::ArriveDrop => "arrive_drop",
        MbarOp::ExpectTx => "expect_tx",
        MbarOp::CompleteTx => "complete_tx",
        MbarOp::TestWait => "test_wait",
        MbarOp::TryWait => "try_wait",
        MbarOp::Inval => "inval",
        MbarOp::CpAsyncArrive { .. } => "cp.async.mbarrier.arrive",
    }
}

/// What the engine does after a synchronising instruction.
pub(in crate::ptx) enum Flow {
    /// Go on with the next instruction.
    Next,
    /// Block for `block`; `advance`: past the instruction (else it runs again on release).
    Block { block: Block, advance: bool },
}

/// One named barrier's current round (PTX ISA 9.7.13.1 bar, barrier).
#[derive(Clone, Debug, Default)]
pub(in crate::ptx) struct NamedBar {
    /// The thread count of this round's arrivals (`None`: every thread of the CTA).
    count: Option<u32>,
    /// Threads arrived: 32 per warp with a count (PTX ISA: "the arrival count is incremented
    /// by the warp size"), the warp's non-exited threads without one.
    arrived: u32,
    /// Warps waiting, with the `bar.red` result they receive (operation, register).
    waiters: Vec<(usize, Option<(BarRed, u32)>)>,
    /// `bar.red`: threads whose predicate was true, false.
    trues: u32,
    falses: u32,
}

/// What completing an asynchronous operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(dead_code)] // issued by the bulk-copy and wgmma arms when they are integrated
pub(in crate::ptx) enum AsyncAction {
    /// A complete-tx of `bytes` on the mbarrier at shared byte `mbar` of the CTA of cluster
    /// rank `cta` (`.mbarrier::complete_tx::bytes`; a multicast completes one per CTA).
    CompleteTx { cta: usize, mbar: u32, bytes: u32 },
    /// Nothing beyond closing its part of its group (a `bulk_group` store, a `wgmma`).
    Done,
}

/// An asynchronous operation in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::ptx) struct AsyncOp {
    /// The cluster rank of the CTA that issued it.
    pub(in crate::ptx) cta: usize,
    /// The warp that issued it.
    pub(in crate::ptx) warp: usize,
    /// The issuing instruction.
    pub(in crate::ptx) pc: u32,
    /// Its unit and group number, if its unit commits groups.
    pub(in crate::ptx) group: Option<(AsyncUnit, u64)>,
    /// The issuing line.
    pub(in crate::ptx) line: u32,
    /// What completing it does.
    pub(in crate::ptx) action: AsyncAction,
}

impl Machine<'_> {
    /// The synchronising instructions: named barriers, mbarriers, the units' waits and
    /// `barrier.cluster`.
    pub(in crate::ptx) fn exec_sync<'o>(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        mask: u32,
        obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<Flow, String> {
        match &inst.op {
            Op::Bar { .. } => self.bar(w, inst, mask),
            Op::Mbarrier { .. } => {
                let Some(o) = obs.filter(|_| mask != 0) else {
                    return self.mbarrier(w, inst, mask, None);
                };
                let mut ev = None;
                let flow = self.mbarrier(w, inst, mask, Some(&mut ev));
                if let Some(e) = &ev {
                    observe(Some(o), w, pc, inst, mask, TraceKind::Mbarrier(e));
                }
                flow
            }
            Op::AsyncWait { unit, n, all } if mask != 0 => {
                if *all {
                    self.warps[w].groups[*unit as usize] += 1;
                }
                Ok(if self.outstanding(w, *unit) <= u64::from(*n) {
                    Flow::Next
                } else {
                    Flow::Block {
                        block: Block::Group {
                            unit: *unit,
                            n: *n,
                            line: inst.line,
                        },
                        advance: true,
                    }
                })
            }
            Op::ClusterBarrier { wait } if mask != 0 => self.cluster_barrier(w, inst, mask, *wait),
            _ => Ok(Flow::Next),
        }
    }

    /// `bar.sync`/`barrier.sync`/`bar.arrive`/`bar.red` (PTX ISA 9.7.13.1): the warp arrives
    /// at named barrier `a` (0..=15) with thread count `b` (a non-zero multiple of 32) or all
    /// the CTA's threads; sync and red wait, arrive goes on.
    fn bar(&mut self, w: usize, inst: &Inst, mask: u32) -> Result<Flow, String> {
        let Op::Bar {
            id,
            count,
            arrive,
            red,
        } = &inst.op
        else {
            return Ok(Flow::Next);
        };
        let warp = &self.warps[w];
        let all = warp.live & !warp.exited;
        let name = match (red, arrive) {
            (Some(_), _) => "bar.red",
            (None, true) => "bar.arrive",
            (None, false) => "bar.sync",
        };
        if mask != all {
            return Err(format!(
                "{name} reached by lanes {mask:#010x} of warp {w} while lanes {:#010x} are elsewhere: PTX requires all threads of a warp to execute {name} together",
                all & !mask
            ));
        }
        let regs = &warp.regs;
        let first = mask.trailing_zeros() as usize;
        let rd = |s: &Src| match *s {
            Src::Imm(v) => v as u32,
            Src::Reg(r) => regs[r as usize * WARP_SIZE + first] as u32,
        };
        let id = rd(id);
        let count = count.as_ref().map(rd);
        if id > 15 || count.is_some_and(|c| c == 0 || c % 32 != 0) {
            return Err(format!(
                "barrier {id}{}: ids are 0..=15 (a CTA has sixteen barriers) and a thread count is a non-zero multiple of the warp size, 32 (PTX ISA, barrier)",
                count
                    .map(|c| format!(" with count {c}"))
                    .unwrap_or_default()
            ));
        }
        let (mut t, mut f) = (0, 0);
        if let Some((_, _, (p, neg))) = red {
            for l in 0..WARP_SIZE {
                if mask >> l & 1 == 1 {
                    let v = match *p {
                        Src::Imm(v) => v,
                        Src::Reg(r) => regs[r as usize * WARP_SIZE + l],
                    };
                    if (v & 1 != 0) != *neg {
                        t += 1;
                    } else {
                        f += 1;
                    }
                }
            }
        }
        let nb = &mut self.bars[id as usize];
        if (nb.arrived > 0 || !nb.waiters.is_empty()) && nb.count != count {
            let said =
                |c: Option<u32>| c.map_or("all threads".to_string(), |c| format!("{c} threads"));
            return Err(format!(
                "{name} {id} with {} while warps already at barrier {id} gave {}: every arrival of one barrier round names the same thread count (PTX ISA, bar)",
                said(count),
                said(nb.count)
            ));
        }
        nb.count = count;
        nb.arrived += if count.is_some() {
            32
        } else {
            all.count_ones()
        };
        nb.trues += t;
        nb.falses += f;
        if !arrive {
            nb.waiters.push((w, red.map(|(op, d, _)| (op, d))));
        }
        let released = self.release_bar(id as usize);
        if *arrive || released.contains(&w) {
            return Ok(Flow::Next);
        }
        Ok(Flow::Block {
            block: Block::Bar {
                id,
                count,
                line: inst.line,
            },
            advance: true,
        })
    }

    /// Releases named barrier `id` if its expected threads have arrived: its waiters run
    /// (with their `bar.red` results), and a new round begins. Returns the warps released.
    fn release_bar(&mut self, id: usize) -> Vec<usize> {
        let not_exited: u32 = self
            .warps
            .iter()
            .map(|w| (w.live & !w.exited).count_ones())
            .sum();
        let nb = &self.bars[id];
        let expected = nb.count.unwrap_or(not_exited);
        if nb.arrived == 0 || nb.arrived < expected {
            return Vec::new();
        }
        let nb = std::mem::take(&mut self.bars[id]);
        let mut out = Vec::with_capacity(nb.waiters.len());
        for (w, red) in nb.waiters {
            let warp = &mut self.warps[w];
            warp.state = WState::Run;
            if let Some((op, d)) = red {
                let v = match op {
                    BarRed::Popc => u64::from(nb.trues),
                    BarRed::And => u64::from(nb.falses == 0),
                    BarRed::Or => u64::from(nb.trues > 0),
                };
                let lanes = warp.live & !warp.exited;
                for l in 0..WARP_SIZE {
                    if lanes >> l & 1 == 1 {
                        warp.regs[d as usize * WARP_SIZE + l] = v;
                    }
                }
                warp.changed = true;
            }
            out.push(w);
        }
        out
    }

    /// The scheduler's look at every waiting warp: releases the named barriers whose threads
    /// have all arrived, completes the cluster barrier's phase, and wakes the warps whose
    /// mbarrier phase completed, whose groups drained, or whose cluster phase passed. False
    /// when nothing changed.
    pub(in crate::ptx) fn release(&mut self) -> bool {
        let mut any = false;
        for id in 0..self.bars.len() {
            if !self.bars[id].waiters.is_empty() && !self.release_bar(id).is_empty() {
                any = true;
            }
        }
        self.cluster_settle();
        for w in 0..self.warps.len() {
            let WState::Blocked(b) = self.warps[w].state else {
                continue;
            };
            let go = match b {
                Block::Bar { .. } => false,
                Block::Mbarrier { addr, phase, .. } => self
                    .mbars
                    .get(&addr)
                    .is_none_or(|m| !m.is_live() || m.phase() > phase),
                Block::Group { unit, n, .. } => self.outstanding(w, unit) <= u64::from(n),
                Block::Cluster { phase, .. } => self.cluster_phase > phase,
                // Released by the warp that completes the warpgroup.
                Block::Warpgroup { .. } => false,
            };
            if go {
                self.warps[w].state = WState::Run;
                any = true;
            }
        }
        any
    }

    /// The committed groups of `unit` warp `w` still has operations of in flight.
    fn outstanding(&self, w: usize, unit: AsyncUnit) -> u64 {
        let committed = self.warps[w].groups[unit as usize];
        let mut gs: Vec<u64> = self
            .pending
            .iter()
            .filter(|o| o.cta == self.cur && o.warp == w)
            .filter_map(|o| match o.group {
                Some((u, g)) if u == unit && g < committed => Some(g),
                _ => None,
            })
            .collect();
        gs.sort_unstable();
        gs.dedup();
        gs.len() as u64
    }

    /// Issues an asynchronous operation of warp `w` at instruction `pc`, PTX `line`: in the
    /// open group of `unit` (when given), completing with `action` when the scheduler completes
    /// the pending work.
    /// The door the bulk-copy and `wgmma` arms enqueue through.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(in crate::ptx) fn issue_async(
        &mut self,
        w: usize,
        unit: Option<AsyncUnit>,
        (pc, line): (usize, u32),
        action: AsyncAction,
    ) {
        let group = unit.map(|u| (u, self.warps[w].groups[u as usize]));
        self.pending.push(AsyncOp {
            cta: self.cur,
            warp: w,
            pc: pc as u32,
            group,
            line,
            action,
        });
    }

    /// Completes every operation in flight, in issue order.
    ///
    /// # Errors
    /// A complete-tx the mbarrier refuses, naming the issuing line.
    pub(in crate::ptx) fn complete_async<'o>(
        &mut self,
        mut obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<(), super::RunError> {
        let ops = std::mem::take(&mut self.pending);
        if ops.is_empty() {
            return Ok(());
        }
        for op in ops {
            if let AsyncAction::CompleteTx { cta, mbar, bytes } = op.action {
                let before = MbarState::of(self.mbars_of(cta).get(&mbar));
                let done = self
                    .mbars_of(cta)
                    .entry(mbar)
                    .or_default()
                    .complete_tx(bytes);
                // A landing belongs to the warp that issued the copy: traced when its CTA is.
                if op.cta == self.home
                    && let (Some(o), Ok(())) = (obs.as_deref_mut(), &done)
                {
                    let after = MbarState::of(self.mbars_of(cta).get(&mbar));
                    o.event(&TraceEvent {
                        warp: op.warp as u32,
                        pc: op.pc,
                        line: op.line,
                        mask: 0,
                        kind: TraceKind::Mbarrier(&MbarrierEvent {
                            addr: mbar,
                            op: None,
                            threads: 0,
                            bytes: Some(u64::from(bytes)),
                            waited: None,
                            wait_for: None,
                            before,
                            after,
                        }),
                    });
                }
                done.map_err(|e| super::RunError::At {
                    line: op.line,
                    message: format!(
                        "the asynchronous operation's complete-tx of {bytes} bytes on mbarrier {}: {e}",
                        self.mbar_name(mbar)
                    ),
                })?;
            }
        }
        self.epoch += 1;
        Ok(())
    }

    /// An mbarrier's shared address in words: `'full'+8 (shared address 0x10)`.
    pub(in crate::ptx) fn mbar_name(&self, at: u32) -> String {
        self.prog.shared_label(at)
    }

    /// The observer's view of an mbarrier instruction at object `at`, before it runs: `av` is
    /// the first lane's first operand (tx bytes, count or the waited phase or parity).
    fn mbar_event(
        &self,
        op: MbarOp,
        expect_tx: bool,
        at: u32,
        mask: u32,
        av: Option<u64>,
    ) -> MbarrierEvent {
        let state = MbarState::of(self.mbars.get(&at));
        let waits = matches!(op, MbarOp::TryWait | MbarOp::TestWait);
        let tx = expect_tx || matches!(op, MbarOp::ExpectTx | MbarOp::CompleteTx);
        MbarrierEvent {
            addr: at,
            op: Some(op),
            threads: mask.count_ones(),
            bytes: av.filter(|_| tx),
            waited: None,
            wait_for: av.filter(|_| waits),
            before: state,
            after: state,
        }
    }

    /// Lane `l`'s mbarrier: the cluster rank of the CTA whose shared memory holds it and its
    /// byte offset there (a `.shared::cluster` or generic address may name another CTA's,
    /// [`super::mem::cluster_addr`]), 8-byte aligned, inside shared memory.
    pub(in crate::ptx) fn mbar_target(
        &self,
        w: usize,
        space: Space,
        addr: &crate::ptx::decode::Addr,
        l: usize,
    ) -> Result<(usize, u32), String> {
        let a = addr_value(&self.warps[w].regs, addr, l);
        let len = i128::from(self.smem.len());
        let (rank, off) = match space {
            Space::Generic => {
                let win = i128::from(SHARED_WINDOW);
                let top = win + (((self.nctas() + 1) as i128) << super::mem::CLUSTER_RANK_SHIFT);
                if !(win..top).contains(&a) {
                    return Err(format!(
                        "lane {l}: the generic address {a:#x} of an mbarrier is not in the shared window ({win:#x}..{:#x}): an mbarrier object lives in shared memory (PTX ISA §9.7.13.15)",
                        win + len
                    ));
                }
                let (r, o) = super::mem::cluster_addr(a - win, self.cur, self.nctas(), l)?;
                (r, i128::from(o))
            }
            Space::Cluster => {
                let (r, o) = super::mem::cluster_addr(a, self.cur, self.nctas(), l)?;
                (r, i128::from(o))
            }
            _ => (self.cur, a),
        };
        if off < 0 || off + 8 > len {
            return Err(format!(
                "lane {l}: mbarrier address {off} (8 bytes) is outside shared memory of {len} bytes"
            ));
        }
        if off % 8 != 0 {
            return Err(format!(
                "lane {l}: mbarrier address {off:#x} is not aligned to 8 bytes: an mbarrier object is a .b64 (PTX ISA §9.7.13.15.1)"
            ));
        }
        Ok((rank, off as u32))
    }

    /// An mbarrier instruction for each lane of `mask`, lowest first (each lane arrives once):
    /// the state changes go through [`Mbarrier`]; `try_wait` on an incomplete phase blocks
    /// the warp until it completes and then runs again (a try_wait may return at any time
    /// before its time limit; this one waits as long as it takes), `test_wait` answers.
    ///
    /// With `ev`, it receives the operation's [`MbarrierEvent`] (the first lane's object).
    fn mbarrier(
        &mut self,
        w: usize,
        inst: &Inst,
        mask: u32,
        mut ev: Option<&mut Option<MbarrierEvent>>,
    ) -> Result<Flow, String> {
        let Op::Mbarrier {
            op,
            expect_tx,
            parity,
            space,
            d,
            addr,
            a,
            b,
        } = &inst.op
        else {
            return Ok(Flow::Next);
        };
        let mut changed = false;
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let (rank, at) = self.mbar_target(w, *space, addr, l)?;
            let remote = matches!(
                op,
                MbarOp::Arrive | MbarOp::ArriveDrop | MbarOp::ExpectTx | MbarOp::CompleteTx
            );
            if rank != self.cur && (!remote || d.is_some()) {
                return Err(format!(
                    "lane {l}: mbarrier.{} on the object at offset {at:#x} of the CTA of cluster rank {rank}: another CTA's mbarrier takes only arrive (with the sink _ as its state), arrive_drop, expect_tx and complete_tx (PTX ISA §9.7.13.15.13 mbarrier.arrive: .shared::cluster)",
                    mbar_op_name(op)
                ));
            }
            let regs = &self.warps[w].regs;
            let val = |s: &Option<Src>| {
                s.map(|s| match s {
                    Src::Imm(v) => v,
                    Src::Reg(r) => regs[r as usize * WARP_SIZE + l],
                })
            };
            let (av, bv) = (val(a), val(b));
            if let Some(e) = ev.as_deref_mut().filter(|e| e.is_none()) {
                *e = Some(self.mbar_event(*op, *expect_tx, at, mask, av));
            }
            // The mbarrier's name, for an error only (made when one is reported).
            let name = |m: &Self| match rank == m.cur {
                true => m.mbar_name(at),
                false => format!("{} of cluster rank {rank}", m.mbar_name(at)),
            };
            let mbars = if rank == self.cur {
                &mut self.mbars
            } else {
                &mut self.ctas[rank].mbars
            };
            let bar = mbars.entry(at).or_default();
            let res: Result<Option<u64>, MbarrierError> = match op {
                MbarOp::Init => bar.init(av.unwrap_or(0) as u32).map(|_| None),
                MbarOp::Arrive | MbarOp::ArriveDrop => {
                    let (tx, count) = match expect_tx {
                        true => (av, bv.unwrap_or(1)),
                        false => (None, av.unwrap_or(1)),
                    };
                    let count = count as u32;
                    match (op, tx) {
                        (MbarOp::Arrive, Some(t)) => bar.arrive_expect_tx(t as u32, count),
                        (MbarOp::Arrive, None) => bar.arrive(count),
                        (_, Some(t)) => {
                            bar.expect_tx(t as u32).and_then(|_| bar.arrive_drop(count))
                        }
                        (_, None) => bar.arrive_drop(count),
                    }
                    .map(Some)
                }
                MbarOp::ExpectTx => bar.expect_tx(av.unwrap_or(0) as u32).map(|_| None),
                MbarOp::CompleteTx => bar.complete_tx(av.unwrap_or(0) as u32).map(|_| None),
                MbarOp::TestWait | MbarOp::TryWait => {
                    let what = if *op == MbarOp::TryWait {
                        "try_wait"
                    } else {
                        "test_wait"
                    };
                    bar.check_live(what).map(|_| {
                        let v = av.unwrap_or(0);
                        Some(u64::from(if *parity {
                            bar.test_wait_parity(v as u32)
                        } else {
                            bar.test_wait(v)
                        }))
                    })
                }
                MbarOp::Inval => bar.inval().map(|_| None),
                MbarOp::CpAsyncArrive { noinc } => {
                    // This thread's cp.asyncs completed at issue: the arrive-on happens now.
                    if *noinc {
                        bar.arrive(1).map(|_| None)
                    } else {
                        bar.check_live("cp.async.mbarrier.arrive").map(|_| None)
                    }
                }
            };
            let res = match res {
                Ok(r) => r,
                Err(e) => return Err(format!("lane {l}: mbarrier {}: {e}", name(self))),
            };
            if let Some(Some(e)) = ev.as_deref_mut() {
                e.after = MbarState::of(self.mbars.get(&e.addr));
                if matches!(op, MbarOp::TryWait | MbarOp::TestWait) {
                    e.waited = Some(e.waited.unwrap_or(true) && res == Some(1));
                }
            }
            if *op == MbarOp::TryWait && res == Some(0) {
                let phase = self.mbars.get(&at).map_or(0, Mbarrier::phase);
                return Ok(Flow::Block {
                    block: Block::Mbarrier {
                        addr: at,
                        phase,
                        line: inst.line,
                    },
                    advance: false,
                });
            }
            if let (Some(d), Some(v)) = (d, res) {
                let slot = &mut self.warps[w].regs[*d as usize * WARP_SIZE + l];
                changed |= *slot != v;
                *slot = v;
            }
        }
        let waits = matches!(op, MbarOp::TestWait | MbarOp::TryWait);
        if mask != 0 && !waits {
            // The object is shared memory: a spinning warp may wait for it.
            self.epoch += 1;
            changed = true;
        }
        if changed {
            self.warps[w].changed = true;
        }
        Ok(Flow::Next)
    }

    /// `barrier.cluster.arrive` / `wait` (PTX ISA 9.7.13.2) over the cluster's warps (every
    /// CTA's): a phase completes when every warp not exited has arrived; a wait returns once
    /// the phase of its warp's arrive has completed.
    fn cluster_barrier(
        &mut self,
        w: usize,
        inst: &Inst,
        mask: u32,
        wait: bool,
    ) -> Result<Flow, String> {
        let warp = &self.warps[w];
        let all = warp.live & !warp.exited;
        let name = if wait {
            "barrier.cluster.wait"
        } else {
            "barrier.cluster.arrive"
        };
        if mask != all {
            return Err(format!(
                "{name} reached by lanes {mask:#010x} of warp {w} while lanes {:#010x} are elsewhere: the simulator runs barrier.cluster per warp, all its threads together",
                all & !mask
            ));
        }
        match (wait, warp.cluster_arrived) {
            (false, Some(_)) => Err(format!(
                "{name} twice without a barrier.cluster.wait between: each thread arrives once per phase, then waits (PTX ISA 9.7.13.2 barrier.cluster)"
            )),
            (false, None) => {
                self.warps[w].cluster_arrived = Some(self.cluster_phase);
                self.cluster_settle();
                Ok(Flow::Next)
            }
            (true, None) => Err(format!(
                "{name} without a barrier.cluster.arrive before it: a wait waits for the phase of the thread's own arrive (PTX ISA 9.7.13.2 barrier.cluster)"
            )),
            (true, Some(p)) if p < self.cluster_phase => {
                self.warps[w].cluster_arrived = None;
                Ok(Flow::Next)
            }
            (true, Some(phase)) => Ok(Flow::Block {
                block: Block::Cluster {
                    phase,
                    line: inst.line,
                },
                advance: false,
            }),
        }
    }

    /// Completes the cluster barrier's phase once every warp not exited has arrived in it.
    fn cluster_settle(&mut self) {
        let p = self.cluster_phase;
        let live: Vec<&super::Warp> = self
            .all_warps()
            .filter(|w| w.state != WState::Done)
            .collect();
        if !live.is_empty() && live.iter().all(|w| w.cluster_arrived == Some(p)) {
            self.cluster_phase += 1;
        }
    }

    /// `wgmma`/`cp.async` commits, `elect.sync`, `mapa`, `call`.
    pub(in crate::ptx) fn exec_hopper<'o>(
        &mut self,
        w: usize,
        _pc: usize,
        inst: &Inst,
        mask: u32,
        path: u32,
        _obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let mut changed = false;
        let live = self.warps[w].live & !self.warps[w].exited;
        let (ctas, own) = (self.nctas(), self.cur);
        let regs = &mut self.warps[w].regs;
        match &inst.op {
            Op::AsyncCommit { unit } if mask != 0 => {
                self.warps[w].groups[*unit as usize] += 1;
            }
            Op::Elect { d, p, member } if mask != 0 => {
                check_member("elect.sync", regs, Some(*member), mask, path, live)?;
                let first = mask.trailing_zeros() as usize;
                let mm = v!(regs, *member, first) as u32;
                // PTX ISA 9.7.13.12 elect.sync: the leader is the active thread of
                // membermask with the lowest lane id.
                let leader = (mask & mm).trailing_zeros() as usize;
                each!(mask, |l| {
                    if let Some(d) = d {
                        set!(changed, regs, *d, l, leader as u64);
                    }
                    if let Some(p) = p {
                        set!(changed, regs, *p, l, u64::from(l == leader));
                    }
                });
            }
            Op::Mapa { d, a, rank } => {
                each!(mask, |l| {
                    let r = v!(regs, *rank, l);
                    if r >= ctas as u64 {
                        return Err(format!(
                            "lane {l}: mapa to CTA rank {r}, but the cluster has {ctas} CTA{} (ranks 0..={}; PTX ISA 9.7.9.22 mapa: the rank must be in the cluster; --cluster gives the shape)",
                            if ctas == 1 { "" } else { "s" },
                            ctas - 1
                        ));
                    }
                    let v = super::mem::mapa(v!(regs, *a, l), r as usize, own, ctas)
                        .map_err(|e| format!("lane {l}: mapa: {e}"))?;
                    set!(changed, regs, *d, l, v);
                });
            }
            Op::Call { name } if mask != 0 => {
                let what = match name.as_str() {
                    "__assertfail" => ": a device-side assert() failed on this path",
                    "vprintf" => ": device-side printf",
                    _ => "",
                };
                return Err(format!(
                    "call to '{}'{what}; calls to functions are not simulated (lanes {mask:#010x} reach it)",
                    crate::text::escape(name)
                ));
            }
            _ => {}
        }
        Ok(changed)
    }

    /// A blocked warp's reason in words, `at …` (grouped warps share it): with `detail`, the
    /// barrier's state (the deadlock message), without it the short form (the budget's).
    pub(in crate::ptx) fn block_words(&self, b: &Block, detail: bool) -> String {
        match *b {
            Block::Bar { id, count, line } => {
                let c = count.map(|c| format!(", {c} threads")).unwrap_or_default();
                if detail {
                    format!("at barrier {id} (line {line}{c})")
                } else {
                    format!("at barrier {id} (line {line})")
                }
            }
            Block::Mbarrier { addr, phase, line } => {
                let name = self.mbar_name(addr);
                if !detail {
                    return format!("at mbarrier {name} (line {line})");
                }
                let state = match self.mbars.get(&addr) {
                    Some(m) if m.is_live() => format!(
                        "{} of {} arrivals and {} transaction bytes pending",
                        m.pending(),
                        m.expected(),
                        m.tx_count()
                    ),
                    _ => "not initialised".to_string(),
                };
                format!(
                    "at mbarrier {name} (line {line}) for phase {phase} (parity {}) to complete: {state}",
                    phase & 1
                )
            }
            Block::Group { unit, n, line } => {
                format!("at {} {n} (line {line})", unit.wait_name())
            }
            Block::Warpgroup { pc, line } => self.warpgroup_words(pc, line, detail),
            Block::Cluster { phase, line } => {
                let arrived = self
                    .all_warps()
                    .filter(|w| w.cluster_arrived == Some(phase))
                    .count();
                if detail {
                    format!(
                        "at barrier.cluster.wait (line {line}) for cluster phase {phase}: {arrived} of {} warps{} arrived",
                        self.all_warps().count(),
                        if self.nctas() > 1 {
                            format!(" of the cluster's {} CTAs", self.nctas())
                        } else {
                            String::new()
                        }
                    )
                } else {
                    format!("at barrier.cluster.wait (line {line})")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::engine::RunError;

    const KERNEL: &str = ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n.reg .pred %p<3>;\n.reg .b32 %r<8>;\n.shared .align 8 .b64 full;\nelect.sync _|%p1, -1;\n@%p1 mbarrier.init.shared.b64 [full], 1;\n@%p1 mbarrier.arrive.expect_tx.shared.b64 _, [full], 64;\ncp.async.bulk.commit_group;\ncp.async.bulk.wait_group 0;\nmov.u32 %r7, 0;\n$W:\nmbarrier.try_wait.parity.shared.b64 %p2, [full], %r7;\n@!%p2 bra $W;\nret;\n}\n";

    fn machine(prog: &crate::ptx::decode::Program) -> Machine<'_> {
        let l = Launch {
            grid: [1, 1, 1],
            block: [32, 1, 1],
            cta: [0, 0, 0],
            args: vec![],
            tensor_maps: vec![],
            dynamic_smem: None,
            max_instructions: 10_000,
            cluster: None,
        };
        Machine::new(prog, &l, (0, String::new())).unwrap()
    }

    /// An operation issued in the warp's open bulk group, completing 64 bytes on `full`: the
    /// warp's `wait_group 0` blocks until the scheduler completes it (every warp waits), the
    /// complete-tx then completes phase 0, and the try_wait loop ends.
    #[test]
    fn an_async_operation_completes_its_group_and_its_mbarrier_bytes() {
        let prog = crate::ptx::report::load(KERNEL, None).unwrap();
        let mut m = machine(&prog);
        m.issue_async(
            0,
            Some(AsyncUnit::Bulk),
            (0, 13),
            AsyncAction::CompleteTx {
                cta: 0,
                mbar: 0,
                bytes: 64,
            },
        );
        assert_eq!(m.outstanding(0, AsyncUnit::Bulk), 0, "not committed yet");
        m.run(None).unwrap();
        assert!(m.pending.is_empty());
        assert_eq!(m.warps[0].groups[AsyncUnit::Bulk as usize], 1);
        let b = m.mbars[&0];
        assert_eq!((b.phase(), b.pending(), b.tx_count()), (1, 1, 0));
        // wait_group (line 13) blocked until the completion, so the try_wait (line 16) found
        // the phase complete: one execution each.
        for line in [13, 16] {
            let i = prog.insts.iter().position(|i| i.line == line).unwrap();
            assert_eq!(m.stats[i].executions, 1, "line {line}");
        }
    }

    /// Without the operation the 64 bytes never come: a deadlock naming the object, its phase
    /// and what it still waits for.
    #[test]
    fn without_it_the_wait_is_a_deadlock() {
        let prog = crate::ptx::report::load(KERNEL, None).unwrap();
        let mut m = machine(&prog);
        let e = m.run(None).unwrap_err();
        assert_eq!(
            e,
            RunError::Deadlock("warp 0 waits at mbarrier 'full'+0 (shared address 0x0) (line 16) for phase 0 (parity 0) to complete: 0 of 1 arrivals and 64 transaction bytes pending; no warp that could arrive on or complete what they wait for can run, and no asynchronous operation is in flight (32 threads in the CTA)".into())
        );
    }

    /// A complete-tx the object refuses (more bytes than the tx-count range) names the line
    /// that issued it.
    #[test]
    fn a_refused_completion_names_the_issuing_line() {
        let prog = crate::ptx::report::load(KERNEL, None).unwrap();
        let mut m = machine(&prog);
        m.issue_async(
            0,
            None,
            (0, 13),
            AsyncAction::CompleteTx {
                cta: 0,
                mbar: 0,
                bytes: 1 << 21,
            },
        );
        let e = m.run(None).unwrap_err();
        assert!(
            matches!(&e, RunError::At { line: 13, message } if message.contains("2097152 bytes")),
            "{e}"
        );
    }
}
