//! The Hopper arms of the CTA engine: `wgmma.mma_async` at warpgroup scope and the bulk copies
//! (TMA) at bulk scope, both executed by the one executor, [`crate::sim::exec::execute`].
//!
//! **wgmma.** `wgmma.mma_async.sync.aligned` is warpgroup-collective (PTX ISA 9.7.15.5.2): the
//! four warps 4g..4g+3 of warpgroup g execute it together, every lane active. A warp that
//! reaches it blocks ([`Block::Warpgroup`]) until the fourth warp of its warpgroup arrives at
//! the same instruction; that warp gathers the 128 threads' accumulators (and A registers),
//! runs one [`WgmmaOp`], writes the accumulators back to all four warps and releases them, and
//! each warp's part is an asynchronous operation of its open `wgmma` group, closed by
//! `wgmma.commit_group` and awaited by `wgmma.wait_group N`. PTX leaves the accumulators
//! undefined until that wait; the engine writes them at issue (a legal schedule: a program
//! that reads them only after the wait sees the same values). A warp reaching another
//! `wgmma.mma_async` than the ones its warpgroup waits at, or with lanes off, is an error
//! naming the warps and lines; a warpgroup some warp never completes is a deadlock naming them.
//!
//! **Bulk copies.** Each lane whose guard is true issues one copy (in practice one elected
//! lane). The tensor map is found through the 128-byte handle ([`crate::ptx::params::tensor_map_index`])
//! at the address the instruction gives (a parameter's address, directly or as its generic
//! address after `cvta.param`); its tensor's base is the handle's bytes 16..24. The data moves
//! at issue through a [`BulkOp`]; a load then enqueues a complete-tx of the whole box's bytes
//! ([`crate::sim::exec::BulkStep::tx_bytes`]) on its mbarrier, a store closes its part of the
//! warp's open bulk group. Counters (per instruction, [`super::InstStats`]): a
//! `wgmma`'s operand wavefronts, one per core matrix read from shared memory, i.e. bytes / 128
//! ([`crate::sim::exec::WgmmaStep::wavefronts`]; `gmma_wavefronts`, H200:
//! `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma`, tests/data/ptx_hopper/README.md), the
//! bulk copies' global bytes (`tma_bytes`); neither touches the `l1tex` ld/st wavefronts.

use super::mem::{Global, addr_value, cluster_addr, shared_addr};
use super::sync::{AsyncAction, Flow};
use super::{
    Block, BulkEvent, Machine, Observer, TraceKind, WState, WgmmaEvent, observe, warp_ranges,
};
use crate::ptx::decode::{AsyncUnit, BulkForm, Inst, Op, Space, Src, WgmmaSrc};
use crate::sim::bank::WARP_SIZE;
use crate::sim::error::SimError;
use crate::sim::exec::{self, BulkKind, BulkOp, GlobalMemory, WgmmaA, WgmmaOp};
use crate::sim::tma::{MAX_RANK, TensorMap};
use crate::sim::wgmma::{MatrixDescriptor, WARPGROUP_THREADS};

/// The engine's global buffers as the bulk executor sees them.
struct Buffers<'a>(&'a mut Global);

impl GlobalMemory for Buffers<'_> {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), SimError> {
        self.0.read(addr, out).map_err(SimError::Invalid)
    }
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), SimError> {
        self.0.store(addr, data, 0).map_err(SimError::Invalid)
    }
}

impl Machine<'_> {
    /// `wgmma.mma_async` for warp `w` (see the module docs): blocks until the warpgroup has
    /// arrived; the last warp executes it for all four.
    pub(in crate::ptx) fn exec_wgmma<'o>(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        mask: u32,
        mut obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<Flow, String> {
        let warp = &self.warps[w];
        let all = warp.live & !warp.exited;
        if mask != u32::MAX || all != u32::MAX {
            return Err(format!(
                "wgmma.mma_async reached by lanes {mask:#010x} of warp {w}: it is .sync.aligned over a warpgroup of 128 threads, every lane of warps 4g..4g+3 executes it together (PTX ISA 9.7.15.5.2)"
            ));
        }
        let g = w / 4;
        let members: [usize; 4] = std::array::from_fn(|i| 4 * g + i);
        if members[3] >= self.warps.len() {
            return Err(format!(
                "warp {w} reaches wgmma.mma_async, but warpgroup {g} (warps {}-{}) is not whole: the CTA has {} warps (a warpgroup is four consecutive warps, PTX ISA 9.7.15.5.2)",
                4 * g,
                4 * g + 3,
                self.warps.len()
            ));
        }
        let mut arrived = 0;
        for &o in members.iter().filter(|&&o| o != w) {
            match self.warps[o].state {
                WState::Blocked(Block::Warpgroup { pc: p, .. }) if p as usize == pc => arrived += 1,
                WState::Blocked(Block::Warpgroup { line, .. }) => {
                    return Err(format!(
                        "warp {w} reaches this wgmma.mma_async while warp {o} of its warpgroup {g} waits at the one of line {line}: the four warps of a warpgroup execute the same wgmma.mma_async together (.aligned, PTX ISA 9.7.15.5.2)"
                    ));
                }
                WState::Done => {
                    return Err(format!(
                        "warp {w} reaches wgmma.mma_async, but warp {o} of its warpgroup {g} has exited: the four warps of a warpgroup execute it together (.aligned, PTX ISA 9.7.15.5.2)"
                    ));
                }
                _ => {}
            }
        }
        if arrived < 3 {
            return Ok(Flow::Block {
                block: Block::Warpgroup {
                    pc: pc as u32,
                    line: inst.line,
                },
                advance: true,
            });
        }
        let ev = self.wgmma_execute(w, pc, inst, &members)?;
        for &o in &members {
            observe(
                obs.as_deref_mut(),
                o,
                pc,
                inst,
                u32::MAX,
                TraceKind::Wgmma(&ev),
            );
            if o != w {
                self.warps[o].state = WState::Run;
            }
            self.warps[o].changed = true;
            self.issue_async(
                o,
                Some(AsyncUnit::Wgmma),
                (pc, inst.line),
                AsyncAction::Done,
            );
        }
        Ok(Flow::Next)
    }

    /// Gathers the warpgroup's registers, runs the one [`WgmmaOp`], writes D back, counts;
    /// returns what the observer sees of it.
    fn wgmma_execute(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        members: &[usize],
    ) -> Result<WgmmaEvent, String> {
        let Op::Wgmma {
            kind,
            d,
            a,
            b,
            scale_d,
            scale,
            trans,
        } = &inst.op
        else {
            return Err("not a wgmma.mma_async".into());
        };
        let nd = d.len();
        // Counts only: D keeps its old value where the plan skips it (`crate::ptx::dataflow`).
        let values = self.computes(pc);
        let reg = |warps: &[super::Warp], t: usize, s: Src| -> u64 {
            let regs = &warps[members[t / WARP_SIZE]].regs;
            v!(regs, s, t % WARP_SIZE)
        };
        // Descriptors and scale-d are uniform over the warpgroup: thread 0's.
        let desc = |warps: &[super::Warp], s: &Src| -> Result<u64, String> {
            let v = reg(warps, 0, *s);
            for t in 1..WARPGROUP_THREADS {
                if reg(warps, t, *s) != v {
                    return Err(format!(
                        "the matrix descriptor differs between threads 0 ({v:#x}) and {t} ({:#x}) of warpgroup {}: a wgmma descriptor is uniform over the warpgroup",
                        reg(warps, t, *s),
                        w / 4
                    ));
                }
            }
            Ok(v)
        };
        let b_raw = desc(&self.warps, b)?;
        let bd = MatrixDescriptor::decode(b_raw);
        let a_raw = match a {
            WgmmaSrc::Desc(s) => Some(desc(&self.warps, s)?),
            WgmmaSrc::Regs(_) => None,
        };
        let mut a_regs = [[0u32; 4]; WARPGROUP_THREADS];
        let a_op = match a {
            WgmmaSrc::Desc(_) => WgmmaA::Desc(MatrixDescriptor::decode(a_raw.unwrap_or(0))),
            WgmmaSrc::Regs(rs) => {
                for (t, tr) in a_regs.iter_mut().enumerate() {
                    for (i, s) in rs.iter().enumerate() {
                        tr[i] = reg(&self.warps, t, *s) as u32;
                    }
                }
                WgmmaA::Regs(&a_regs)
            }
        };
        let sd = (reg(&self.warps, 0, scale_d.0) & 1 != 0) != scale_d.1;
        // One buffer for every wgmma of the run (a counts-only one leaves it unread).
        let mut acc = std::mem::take(&mut self.wgmma_acc);
        acc.resize(WARPGROUP_THREADS * nd, 0);
        if values {
            // Warp by warp, register by register: each register's 32 lanes are contiguous.
            for (wi, &m) in members.iter().enumerate() {
                let regs = &self.warps[m].regs;
                let rows = &mut acc[wi * WARP_SIZE * nd..(wi + 1) * WARP_SIZE * nd];
                for (r, &dr) in d.iter().enumerate() {
                    let lanes = &regs[dr as usize * WARP_SIZE..(dr as usize + 1) * WARP_SIZE];
                    for (row, &x) in rows.chunks_exact_mut(nd).zip(lanes) {
                        row[r] = x as u32;
                    }
                }
            }
        }
        let step = exec::execute(
            &mut self.smem,
            WgmmaOp {
                kind: *kind,
                a: a_op,
                b: bd,
                scale_d: sd,
                scale_a: scale[0],
                scale_b: scale[1],
                trans_a: trans[0],
                trans_b: trans[1],
                d: &mut acc,
                values,
            },
        )
        .map_err(|e| e.to_string());
        let step = match step {
            Ok(s) => s,
            Err(e) => {
                self.wgmma_acc = acc;
                return Err(e);
            }
        };
        if values {
            for (wi, &m) in members.iter().enumerate() {
                let regs = &mut self.warps[m].regs;
                let rows = &acc[wi * WARP_SIZE * nd..(wi + 1) * WARP_SIZE * nd];
                for (r, &dr) in d.iter().enumerate() {
                    let lanes = &mut regs[dr as usize * WARP_SIZE..(dr as usize + 1) * WARP_SIZE];
                    for (row, x) in rows.chunks_exact(nd).zip(lanes) {
                        *x = u64::from(row[r]);
                    }
                }
            }
        }
        self.wgmma_acc = acc;
        let s = &mut self.stats[pc];
        s.gmma_wavefronts += u64::from(step.wavefronts);
        s.wgmma += 1;
        Ok(WgmmaEvent {
            warpgroup: (w / 4) as u32,
            kind: *kind,
            a_desc: a_raw,
            b_desc: b_raw,
            trans: *trans,
            scale_d: sd,
            wavefronts: step.wavefronts,
        })
    }

    /// The tensor map at the address `a` an instruction gives and its tensor's global base: a
    /// parameter's handle (the handle's bytes 16..24 hold the base), or a map in global memory
    /// ([`Machine::global_map`]: copied there, or made by `tensormap.replace`).
    fn tensor_map_at(&self, a: i128, l: usize) -> Result<(TensorMap, u64), String> {
        let off = u64::try_from(a).ok();
        if let Some(o) = off
            && let Some(i) = crate::ptx::params::tensor_map_index(&self.params, o)
            && i < self.tensor_maps.len()
        {
            let o = o as usize + 16;
            let mut b = [0u8; 8];
            b.copy_from_slice(&self.params[o..o + 8]);
            return Ok((self.tensor_maps[i], u64::from_le_bytes(b)));
        }
        let owner = off.and_then(|o| {
            self.prog.params.iter().find(|p| {
                (u64::from(p.offset)..u64::from(p.offset) + u64::from(p.size)).contains(&o)
            })
        });
        if owner.is_none()
            && let Some(g) = off
            && self.global.check(g, 128).is_ok()
        {
            return self.global_map(g, l);
        }
        Err(match owner {
            Some(p) => format!(
                "lane {l}: the tensor map operand is byte {} of parameter '{}', which holds no tensor map: give it with --tensor-map {}{}=DTYPE:DIMS:STRIDES:BOX[:SWIZZLE]",
                a - i128::from(p.offset),
                crate::text::escape(&p.name),
                crate::text::escape(&p.name),
                match a - i128::from(p.offset) {
                    0 => String::new(),
                    o => format!("+{o}"),
                }
            ),
            None => format!(
                "lane {l}: the tensor map operand {a:#x} is neither the address of a kernel parameter (a __grid_constant__ CUtensorMap: its address, or its generic address after cvta.param) nor of a map in global memory"
            ),
        })
    }

    /// `cp.async.bulk{.tensor}` / `cp.reduce.async.bulk{.tensor}`: one copy per lane of `mask`.
    pub(in crate::ptx) fn exec_bulk<'o>(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        mask: u32,
        mut obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let Op::Bulk {
            form,
            smem,
            global,
            tmap,
            size,
            mbar,
            cta_mask,
        } = &inst.op
        else {
            return Ok(false);
        };
        let mut changed = false;
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let (sa, targets, mb) = self.bulk_targets(w, *form, smem, *cta_mask, mbar, l)?;
            let regs = &self.warps[w].regs;
            let map = match tmap {
                Some((ta, cs)) => {
                    let (i, base) = self.tensor_map_at(addr_value(regs, ta, l), l)?;
                    let mut coords = [0i64; MAX_RANK];
                    for (k, c) in cs.iter().enumerate() {
                        coords[k] = i64::from(v!(regs, *c, l) as u32 as i32);
                    }
                    Some((i, base, coords))
                }
                None => None,
            };
            let gaddr = global.as_ref().map(|g| addr_value(regs, g, l));
            let gaddr = match gaddr {
                Some(a) => Some(
                    u64::try_from(a)
                        .map_err(|_| format!("lane {l}: negative global address {a}"))?,
                ),
                None => None,
            };
            let bytes = size.map(|s| v!(regs, s, l) as u32);
            let tm = map.as_ref().map(|(m, base, c)| (m, *base, *c));
            let kind = bulk_kind(*form, tm, sa, gaddr.unwrap_or(0), bytes.unwrap_or(0))?;
            if let BulkKind::TensorLoad { map, .. }
            | BulkKind::TensorStore { map, .. }
            | BulkKind::TensorReduce { map, .. } = &kind
                && usize::from(form.rank()) != map.rank
            {
                return Err(format!(
                    "lane {l}: a .{}d copy through a tensor map of rank {} (cp.async.bulk.tensor's .dim is the map's rank, PTX ISA 9.7.9.25.5)",
                    form.rank(),
                    map.rank
                ));
            }
            let mut done = Vec::with_capacity(targets.len());
            for &t in &targets {
                let (smem, touched) = if t == self.cur {
                    (&mut self.smem, &mut self.touched)
                } else {
                    let c = &mut self.ctas[t];
                    (&mut c.smem, &mut c.touched)
                };
                let step = exec::execute(
                    smem,
                    BulkOp {
                        kind,
                        global: &mut Buffers(&mut self.global),
                    },
                )
                .map_err(|e| format!("lane {l}: {e}"))?;
                if let Some(end) = step.smem_written.iter().map(|r| r.end).max() {
                    *touched = (*touched).max(end);
                }
                self.stats[pc].tma_bytes += step.tx_bytes;
                done.push((t, step.tx_bytes));
            }
            self.stats[pc].tma_ops += 1;
            // The shared side, every byte the copy can touch from its offset (the box or the
            // size), within the regions the counts-only plan assumed.
            if self.shared_allowed != crate::ptx::dataflow::ALL_SHARED
                && let Some(&(_, tx)) = done.first()
            {
                self.shared_in_plan(u64::from(sa), u64::from(sa).saturating_add(tx));
            }
            if obs.is_some() {
                let ev = BulkEvent {
                    lane: l as u32,
                    form: *form,
                    map: map.map(|(m, _, _)| m),
                    coords: map.map_or([0; MAX_RANK], |(_, _, c)| c),
                    smem: sa,
                    global: gaddr,
                    bytes: done.first().map_or(0, |d| d.1),
                    mbar: mb.map(|(_, o)| o),
                };
                observe(
                    obs.as_deref_mut(),
                    w,
                    pc,
                    inst,
                    1 << l,
                    TraceKind::Bulk(&ev),
                );
            }
            self.epoch += 1;
            changed = true;
            if form.is_store() {
                self.issue_async(w, Some(AsyncUnit::Bulk), (pc, inst.line), AsyncAction::Done);
                continue;
            }
            for (t, tx) in done {
                let bytes = u32::try_from(tx).map_err(|_| {
                    format!("lane {l}: {tx} transaction bytes do not fit an mbarrier's tx-count")
                })?;
                let mbar = mb.map_or(0, |(_, o)| o);
                let action = AsyncAction::CompleteTx {
                    cta: t,
                    mbar,
                    bytes,
                };
                self.issue_async(w, None, (pc, inst.line), action);
            }
        }
        Ok(changed)
    }

    /// Where lane `l`'s bulk copy lands: its shared offset, the CTAs (cluster ranks) it lands
    /// in (the destination CTA, which a `shared::cluster` address may name; with
    /// `.multicast::cluster` every CTA of ctaMask, at the same offset, PTX ISA 9.7.9.25.5.1) and
    /// its mbarrier (rank, offset; each receiving CTA's at the same offset for a multicast).
    fn bulk_targets(
        &self,
        w: usize,
        form: BulkForm,
        smem: &crate::ptx::decode::Addr,
        cta_mask: Option<Src>,
        mbar: &Option<crate::ptx::decode::Addr>,
        l: usize,
    ) -> Result<BulkTargets, String> {
        let regs = &self.warps[w].regs;
        let n = self.nctas();
        let (dst, sa) = match form.is_store() {
            true => (
                self.cur,
                shared_addr(addr_value(regs, smem, l), l, self.smem.len())?,
            ),
            false => cluster_addr(addr_value(regs, smem, l), self.cur, n, l)?,
        };
        let mut targets: Vec<usize> = vec![dst];
        if let Some(cm) = cta_mask {
            let v = v!(regs, cm, l) & 0xffff;
            if v == 0 || v >> n != 0 {
                return Err(format!(
                    "lane {l}: .multicast::cluster with ctaMask {v:#06x}: each bit is a CTA's cluster rank, and the cluster has {n} CTA{} (allowed: a non-zero mask below {:#06x}; --cluster gives the shape)",
                    if n == 1 { "" } else { "s" },
                    1u32 << n
                ));
            }
            targets = (0..n).filter(|r| v >> r & 1 == 1).collect();
        }
        let mb = match mbar {
            Some(a) => Some(self.mbar_target(w, Space::Cluster, a, l)?),
            None => None,
        };
        if let (None, Some((mr, _))) = (cta_mask, mb)
            && mr != dst
        {
            return Err(format!(
                "lane {l}: the copy lands in the CTA of cluster rank {dst} but its mbarrier is in rank {mr}'s shared memory: they must be in the same CTA (PTX ISA 9.7.9.25.5.1 cp.async.bulk.tensor)"
            ));
        }
        Ok((sa, targets, mb))
    }

    /// A warpgroup wait in words (the deadlock message): the warps of the warpgroup not there.
    pub(in crate::ptx) fn warpgroup_words(&self, w_pc: u32, line: u32, detail: bool) -> String {
        if !detail {
            return format!("at wgmma.mma_async (line {line})");
        }
        let waiting: Vec<usize> = (0..self.warps.len())
            .filter(|&o| matches!(self.warps[o].state, WState::Blocked(Block::Warpgroup { pc, .. }) if pc == w_pc))
            .collect();
        let g = waiting.first().map_or(0, |w| w / 4);
        let missing: Vec<usize> = (4 * g..(4 * g + 4).min(self.warps.len()))
            .filter(|o| !waiting.contains(o))
            .collect();
        format!(
            "at wgmma.mma_async (line {line}) for {} of warpgroup {g}, which never reach{} it (the four warps of a warpgroup execute it together, .aligned)",
            warp_ranges(&missing),
            if missing.len() == 1 { "es" } else { "" }
        )
    }
}

/// The executor's form of a bulk copy: `form` with its tensor map, tensor base and coordinates
/// (`tm`), shared address `sa`, and for copies without a map the global address and bytes.
///
/// # Errors
/// A tensor form without its map.
fn bulk_kind(
    form: BulkForm,
    tm: Option<(&crate::sim::tma::TensorMap, u64, [i64; MAX_RANK])>,
    sa: u32,
    gaddr: u64,
    bytes: u32,
) -> Result<BulkKind<'_>, String> {
    Ok(match (form, tm) {
        (BulkForm::TensorLoad { .. }, Some((map, tensor, coords))) => BulkKind::TensorLoad {
            map,
            tensor,
            coords,
            smem: sa,
        },
        (BulkForm::TensorStore { .. }, Some((map, tensor, coords))) => BulkKind::TensorStore {
            map,
            tensor,
            coords,
            smem: sa,
        },
        (BulkForm::TensorReduce { op, .. }, Some((map, tensor, coords))) => {
            BulkKind::TensorReduce {
                map,
                tensor,
                coords,
                smem: sa,
                op,
            }
        }
        (BulkForm::CopyToShared, _) => BulkKind::CopyToShared {
            smem: sa,
            global: gaddr,
            bytes,
        },
        (BulkForm::CopyToGlobal, _) => BulkKind::CopyToGlobal {
            smem: sa,
            global: gaddr,
            bytes,
        },
        (BulkForm::ReduceToGlobal { op, dtype }, _) => BulkKind::ReduceToGlobal {
            smem: sa,
            global: gaddr,
            bytes,
            dtype,
            op,
        },
        _ => return Err("a tensor copy without its tensor map".into()),
    })
}

/// Where a bulk copy lands ([`Machine::bulk_targets`]): the shared offset, the receiving CTAs'
/// cluster ranks, and the mbarrier's (rank, offset).
type BulkTargets = (u32, Vec<usize>, Option<(usize, u32)>);

impl BulkForm {
    /// The tensor forms' rank (0 for copies without a map).
    pub fn rank(self) -> u8 {
        match self {
            BulkForm::TensorLoad { rank }
            | BulkForm::TensorStore { rank }
            | BulkForm::TensorReduce { rank, .. } => rank,
            _ => 0,
        }
    }
}
