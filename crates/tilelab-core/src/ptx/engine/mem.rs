//! Memory of the CTA engine: the global buffers (`Global`, lazily paged), state spaces
//! (`.param`, `.shared` = `shared::cta`, `.local`, `.global`, generic addresses resolved to one
//! of them: `Resolved`), natural-alignment checks, shared and local address helpers, and the
//! one door from the engine to `sim`'s shared-memory request model ([`crate::ptx::warp_ops`]).

use std::collections::BTreeMap;

use super::alu::{atomic, extend};
use super::{Machine, Observer, TraceKind, observe};
use crate::ptx::decode::{
    Addr, Inst, LOCAL_WINDOW, LOCAL_WINDOW_BYTES, Op, SHARED_WINDOW, Space, Src, buffer_base,
};
use crate::ptx::warp_ops::{self, LaneRegs, SharedKind, Step};
use crate::sim::bank::{NotModelled, RequestCost, WARP_SIZE};
use crate::sim::instr::{AccessWidth, CpAsyncKind, MatrixCount};

pub(in crate::ptx) const PAGE: u64 = 1 << 16;
/// Bytes each global buffer may span from its base.
pub const BUFFER_WINDOW: u64 = 1 << 36;

pub(in crate::ptx) struct Global {
    pub(in crate::ptx) nbufs: usize,
    pub(in crate::ptx) names: Vec<String>,
    /// Per buffer: whether it holds a `.const` variable, which no store may write (PTX ISA
    /// §5.1.3 Constant State Space: read-only).
    pub(in crate::ptx) read_only: Vec<bool>,
    /// Written 64 KiB pages by page number: a B-tree, so that no choice of addresses can make
    /// a lookup slow (at most [`MAX_GLOBAL_BYTES`] / 64 KiB = 4,096 pages).
    pub(in crate::ptx) pages: BTreeMap<u64, Box<[u8]>>,
    /// The buffers the running instruction's accesses are assumed to stay in
    /// ([`crate::ptx::dataflow::Plan::global`]; all outside a counts-only run's instructions).
    pub(in crate::ptx) allowed: std::cell::Cell<crate::ptx::dataflow::GlobalSet>,
    /// Set when an access left [`Global::allowed`]: the counts-only run is made again with
    /// values.
    pub(in crate::ptx) strayed: std::cell::Cell<bool>,
}

impl Global {
    pub(in crate::ptx) fn check(&self, addr: u64, n: u64) -> Result<(), String> {
        let k = (addr >> 40) as usize;
        let ok = k >= 1 && k <= self.nbufs && addr - buffer_base(k - 1) + n <= BUFFER_WINDOW;
        if ok {
            let allowed = self.allowed.get();
            if allowed != crate::ptx::dataflow::ALL_GLOBAL {
                let bit = if k <= 63 { 1u64 << (k - 1) } else { 1 << 63 };
                if allowed & bit == 0 {
                    self.strayed.set(true);
                }
            }
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

    /// Reads `out.len()` bytes at `addr`, one page lookup per page touched; unwritten bytes
    /// read 0.
    pub(in crate::ptx) fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), String> {
        self.check(addr, out.len() as u64)?;
        self.copy_pages(addr, out);
        Ok(())
    }

    /// The bytes of [`Global::read`] without its check.
    fn copy_pages(&self, addr: u64, out: &mut [u8]) {
        let mut done = 0;
        while done < out.len() {
            let a = addr + done as u64;
            let off = (a % PAGE) as usize;
            let n = (PAGE as usize - off).min(out.len() - done);
            match self.pages.get(&(a / PAGE)) {
                Some(p) => out[done..done + n].copy_from_slice(&p[off..off + n]),
                None => out[done..done + n].fill(0),
            }
            done += n;
        }
    }

    /// [`Global::read`] for the lanes of one instruction: `last` keeps the page the previous
    /// lane looked up (its number and bytes, `None` bytes: unwritten), so that lanes reading
    /// one page look it up once. The same bytes and errors as [`Global::read`].
    pub(in crate::ptx) fn read_lane<'g>(
        &'g self,
        addr: u64,
        out: &mut [u8],
        last: &mut Option<(u64, Option<&'g [u8]>)>,
    ) -> Result<(), String> {
        self.check(addr, out.len() as u64)?;
        self.copy_lane(addr, out, last);
        Ok(())
    }

    /// The bytes of [`Global::read_lane`] without its check (the caller checked the range:
    /// a warp's `cp.async` checks its lanes once, [`Machine::exec_cp_async`]).
    #[inline]
    pub(in crate::ptx) fn copy_lane<'g>(
        &'g self,
        addr: u64,
        out: &mut [u8],
        last: &mut Option<(u64, Option<&'g [u8]>)>,
    ) {
        let off = (addr % PAGE) as usize;
        if off + out.len() > PAGE as usize {
            return self.copy_pages(addr, out);
        }
        let page = addr / PAGE;
        let bytes = match *last {
            Some((p, b)) if p == page => b,
            _ => {
                let b = self.pages.get(&page).map(|p| &p[..]);
                *last = Some((page, b));
                b
            }
        };
        match bytes {
            Some(p) => out.copy_from_slice(&p[off..off + out.len()]),
            None => out.fill(0),
        }
    }

    /// A store's write of lane `lane`: as [`Global::write`], refused in a `.const` buffer
    /// (reached with `cvta.const` and a generic or `.global` store, `atom` or `red`).
    pub(in crate::ptx) fn store(
        &mut self,
        addr: u64,
        data: &[u8],
        lane: usize,
    ) -> Result<(), String> {
        self.check(addr, data.len() as u64)?;
        let k = (addr >> 40) as usize;
        if self.read_only.get(k - 1).copied().unwrap_or(false) {
            return Err(format!(
                "lane {lane}: a store to {addr:#x} writes the .const variable '{}': the constant state space is read-only (PTX ISA §5.1.3 Constant State Space)",
                crate::text::escape(&self.names[k - 1])
            ));
        }
        self.write(addr, data)
    }

    /// Writes `data` at `addr`, allocating a zero-filled page on first touch, at most
    /// [`MAX_GLOBAL_BYTES`] of them.
    pub(in crate::ptx) fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), String> {
        self.check(addr, data.len() as u64)?;
        let mut done = 0;
        while done < data.len() {
            let a = addr + done as u64;
            let off = (a % PAGE) as usize;
            let n = (PAGE as usize - off).min(data.len() - done);
            if !self.pages.contains_key(&(a / PAGE))
                && (self.pages.len() as u64 + 1) * PAGE > MAX_GLOBAL_BYTES
            {
                return Err(format!(
                    "a store to global address {a:#x} needs a new {} KiB page, but this launch has written {} bytes of global memory already, the simulator's limit (tilelab::ptx::machine::MAX_GLOBAL_BYTES)",
                    PAGE / 1024,
                    self.pages.len() as u64 * PAGE
                ));
            }
            let p = self
                .pages
                .entry(a / PAGE)
                .or_insert_with(|| vec![0u8; PAGE as usize].into_boxed_slice());
            p[off..off + n].copy_from_slice(&data[done..done + n]);
            done += n;
        }
        Ok(())
    }
}

/// The most bytes of global memory a launch may write: stores allocate zero-filled 64 KiB pages
/// on first touch (reads of unwritten bytes cost nothing), at most this many bytes of them
/// (256 MiB = 268,435,456 bytes; the H200 fixtures' buffers are 16 MiB each, and one CTA
/// writes far less).
pub const MAX_GLOBAL_BYTES: u64 = 256 << 20;

impl Machine<'_> {
    /// `ld` of every state space (`.param`, `.global`, `.local`, `.shared` and generic).
    pub(in crate::ptx) fn exec_ld<'o>(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        mask: u32,
        _path: u32,
        obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let mut changed = false;
        let Op::Ld { space, ty, d, addr } = &inst.op else {
            return Ok(changed);
        };
        let (space, ty) = (*space, *ty);
        let eb = ty.bytes();
        let total = eb * d.len() as u32;
        match self.resolve_space(w, space, addr, mask, total)? {
            Resolved::Param => {
                let regs = &mut self.warps[w].regs;
                let base = addr_value(regs, addr, mask.trailing_zeros() as usize);
                each!(mask, |l| {
                    for (i, dst) in d.iter().enumerate() {
                        let o = base + (i as u32 * eb) as i128;
                        let v = read_bytes(&self.params, o, eb).ok_or_else(|| {
                            format!(
                                "parameter offset {o} is outside the {} parameter bytes",
                                self.params.len()
                            )
                        })?;
                        if let Some(r) = dst {
                            set!(changed, regs, *r, l, extend(ty, v));
                        }
                    }
                });
            }
            Resolved::Global(addrs) => {
                let regs = &mut self.warps[w].regs;
                let (eb, n) = (eb as usize, total as usize);
                let mut bytes = vec![0u8; n];
                each!(mask, |l| {
                    // One read per lane: the vector's elements are contiguous.
                    self.global.read(addrs[l], &mut bytes)?;
                    for (i, dst) in d.iter().enumerate() {
                        if let Some(r) = dst {
                            let mut b = [0u8; 8];
                            b[..eb].copy_from_slice(&bytes[i * eb..(i + 1) * eb]);
                            set!(changed, regs, *r, l, extend(ty, u64::from_le_bytes(b)));
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
                each!(mask, |l| {
                    let base = l * frame + addrs[l] as usize;
                    for (i, dst) in d.iter().enumerate() {
                        let o = base + i * eb as usize;
                        let mut b = [0u8; 8];
                        b[..eb as usize].copy_from_slice(&local[o..o + eb as usize]);
                        if let Some(r) = dst {
                            set!(changed, regs, *r, l, extend(ty, u64::from_le_bytes(b)));
                        }
                    }
                });
            }
            Resolved::Remote(at) => {
                self.count_remote(pc, mask, total);
                let (eb, n) = (eb as usize, total as usize);
                each!(mask, |l| {
                    let (r, o) = (at[l].0 as usize, at[l].1 as usize);
                    let mut bytes = [0u8; 32];
                    bytes[..n].copy_from_slice(&self.smem_of(r).bytes()[o..o + n]);
                    let regs = &mut self.warps[w].regs;
                    for (i, dst) in d.iter().enumerate() {
                        if let Some(r) = dst {
                            let mut b = [0u8; 8];
                            b[..eb].copy_from_slice(&bytes[i * eb..(i + 1) * eb]);
                            set!(changed, regs, *r, l, extend(ty, u64::from_le_bytes(b)));
                        }
                    }
                });
            }
            Resolved::Shared(addrs) => {
                let width = width_of(total)?;
                let step = self.shared_op(pc, SharedKind::Ld(width), addrs, mask, &[[0; 4]; 32])?;
                let regs = &mut self.warps[w].regs;
                each!(mask, |l| {
                    let bytes = lane_bytes(&step.regs[l]);
                    for (i, dst) in d.iter().enumerate() {
                        if let Some(r) = dst {
                            let o = i * eb as usize;
                            let mut b = [0u8; 8];
                            b[..eb as usize].copy_from_slice(&bytes[o..o + eb as usize]);
                            set!(changed, regs, *r, l, extend(ty, u64::from_le_bytes(b)));
                        }
                    }
                });
                observe(obs, w, pc, inst, mask, TraceKind::Shared(&step));
            }
        }
        Ok(changed)
    }

    /// `st` of every writable state space.
    pub(in crate::ptx) fn exec_st<'o>(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        mask: u32,
        _path: u32,
        obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let changed = false;
        let Op::St { space, ty, s, addr } = &inst.op else {
            return Ok(changed);
        };
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
                each!(mask, |l| {
                    let base = l * frame + addrs[l] as usize;
                    for (i, src) in s.iter().enumerate() {
                        let o = base + i * eb as usize;
                        local[o..o + eb as usize]
                            .copy_from_slice(&v!(regs, *src, l).to_le_bytes()[..eb as usize]);
                    }
                });
            }
            Resolved::Global(addrs) => {
                let regs = &self.warps[w].regs;
                let eb = eb as usize;
                let mut bytes = vec![0u8; total as usize];
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    // One write per lane: the vector's elements are contiguous.
                    for (i, src) in s.iter().enumerate() {
                        bytes[i * eb..(i + 1) * eb]
                            .copy_from_slice(&v!(regs, *src, l).to_le_bytes()[..eb]);
                    }
                    self.global.store(addrs[l], &bytes, l)?;
                }
            }
            Resolved::Remote(at) => {
                self.count_remote(pc, mask, total);
                let eb = eb as usize;
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let mut bytes = [0u8; 32];
                    for (i, src) in s.iter().enumerate() {
                        let regs = &self.warps[w].regs;
                        let v = v!(regs, *src, l);
                        bytes[i * eb..(i + 1) * eb].copy_from_slice(&v.to_le_bytes()[..eb]);
                    }
                    let (r, o) = (at[l].0 as usize, at[l].1);
                    let n = total as usize;
                    self.smem_of(r).bytes_mut()[o as usize..o as usize + n]
                        .copy_from_slice(&bytes[..n]);
                }
            }
            Resolved::Shared(addrs) => {
                let width = width_of(total)?;
                let mut data = [[0u32; 4]; 32];
                let regs = &self.warps[w].regs;
                each!(mask, |l| {
                    let mut bytes = [0u8; 16];
                    for (i, src) in s.iter().enumerate() {
                        let o = i * eb as usize;
                        bytes[o..o + eb as usize]
                            .copy_from_slice(&v!(regs, *src, l).to_le_bytes()[..eb as usize]);
                    }
                    data[l] = regs_of(&bytes);
                });
                let step = self.shared_op(pc, SharedKind::St(width), addrs, mask, &data)?;
                observe(obs, w, pc, inst, mask, TraceKind::Shared(&step));
            }
        }
        Ok(changed)
    }

    /// `ldmatrix` and `stmatrix` through the door to `sim`.
    pub(in crate::ptx) fn exec_matrix<'o>(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        mask: u32,
        _path: u32,
        obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let mut changed = false;
        match &inst.op {
            Op::Ldmatrix {
                num,
                trans,
                d,
                addr,
                generic,
            } => {
                let addrs = self.matrix_addrs(w, addr, *num, *generic)?;
                let n = MatrixCount::from_count(*num as u32).unwrap_or(MatrixCount::X4);
                // The executor's register-major load, written into `dregs` (no step to copy:
                // issue #31); an observer gets the step `shared_op` would give (the same
                // request, cost and registers), made from them.
                let mut dregs = [[0u32; WARP_SIZE]; 4];
                let cost =
                    warp_ops::ldmatrix_into(&mut self.smem, n, *trans, addrs, mask, &mut dregs)
                        .map_err(|e| e.to_string())?;
                let kind = SharedKind::Ldmatrix(n, *trans);
                let ins = crate::sim::instr::Instruction::Ldmatrix {
                    num: n,
                    trans: *trans,
                };
                self.count_shared(pc, kind, &cost, ins.address_lanes(), &addrs);
                let regs = &mut self.warps[w].regs;
                for (i, r) in d.iter().enumerate().take(4) {
                    changed |= crate::ptx::lanes::arrays::write(regs, *r, u32::MAX, &dregs[i]);
                }
                if obs.is_some() {
                    let full = warp_ops::ldmatrix_step(n, *trans, addrs, mask, cost, &dregs);
                    observe(obs, w, pc, inst, mask, TraceKind::Shared(&full));
                }
            }
            Op::Stmatrix {
                num,
                trans,
                s,
                addr,
                generic,
            } => {
                let addrs = self.matrix_addrs(w, addr, *num, *generic)?;
                let n = MatrixCount::from_count(*num as u32).unwrap_or(MatrixCount::X4);
                let regs = &self.warps[w].regs;
                let mut data = [[0u32; 4]; 32];
                for (l, lane) in data.iter_mut().enumerate() {
                    for (i, src) in s.iter().enumerate() {
                        lane[i] = v!(regs, *src, l) as u32;
                    }
                }
                let step =
                    self.shared_op(pc, SharedKind::Stmatrix(n, *trans), addrs, mask, &data)?;
                observe(obs, w, pc, inst, mask, TraceKind::Shared(&step));
            }
            _ => {}
        }
        Ok(changed)
    }

    /// `cp.async.{ca,cg}.shared.global`: the copy completes at issue (a legal schedule: PTX only promises completion by `cp.async.wait_group`).
    pub(in crate::ptx) fn exec_cp_async<'o>(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        mask: u32,
        _path: u32,
        obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let changed = false;
        let Op::CpAsync {
            size,
            dst,
            src,
            src_size,
            ignore,
            cg,
        } = &inst.op
        else {
            return Ok(changed);
        };
        let (cg, size) = (*cg, *size);
        let Resolved::Shared(saddrs) = self.resolve_space(w, Space::Shared, dst, mask, size)?
        else {
            return Err("cp.async destination must be shared memory".into());
        };
        let mut data = [[0u32; 4]; 32];
        let mut src_addrs = [0u64; 32];
        let mut zero_fill = false;
        // Every active lane copying its whole cp-size (src-size equal to it, none ignored):
        // the warp's fast path; otherwise (zero fill, a src-size past cp-size) lane by lane.
        let full = {
            let regs = &self.warps[w].regs;
            let mut ok = true;
            let mut m = mask;
            while ok && m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                if let Some(s) = src_size {
                    ok &= v!(regs, *s, l) == u64::from(size);
                }
                if let Some((p, neg)) = ignore {
                    ok &= (v!(regs, *p, l) & 1 != 0) == *neg;
                }
            }
            ok
        };
        if !full || !self.cp_async_fast(w, src, mask, size, &mut data, &mut src_addrs) {
            let regs = &self.warps[w].regs;
            let mut page = None;
            let mut m = mask;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let mut n = match src_size {
                    Some(s) => {
                        let n = v!(regs, *s, l);
                        if n > u64::from(size) {
                            return Err(format!(
                                "lane {l}: cp.async src-size {n} is larger than its cp-size {size}: undefined (PTX ISA §9.7.9.25.3, cp.async: src-size must not exceed cp-size); allowed: 0..={size}"
                            ));
                        }
                        n as u32
                    }
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
                    self.global
                        .read_lane(a, &mut bytes[..n as usize], &mut page)?;
                } else {
                    // An ignored source (src-size 0) is read from nowhere; its address
                    // still places the lane for the cost model.
                    src_addrs[l] = u64::try_from(addr_value(regs, src, l)).unwrap_or(0);
                }
                data[l] = regs_of(&bytes);
            }
        }
        let kind = match (cg, size) {
            (false, 4) => CpAsyncKind::Ca4,
            (false, 8) => CpAsyncKind::Ca8,
            (false, _) => CpAsyncKind::Ca16,
            (true, 16) => CpAsyncKind::Cg16,
            (true, n) => return Err(format!("cp.async.cg copies 16 bytes; found {n}")),
        };
        // The shared side through the executor's store arm on the machine's one `cp.async`
        // request (its boxed source addresses allocated once), without a step unless an
        // observer watches.
        let req = &mut self.cp_request;
        req.instruction = crate::sim::instr::Instruction::CpAsync(kind);
        req.lane_byte_offsets = saddrs;
        req.active_mask = mask;
        match &mut req.global_addrs {
            Some(b) => **b = src_addrs,
            None => req.global_addrs = Some(Box::new(src_addrs)),
        }
        let mut cost = crate::sim::exec::store_into(&mut self.smem, &self.cp_request, &data)
            .map_err(|e| e.to_string())?;
        // A `.ca` copy with an active lane reading fewer bytes than it writes: never measured,
        // so neither counted nor bounded (`.cg` keeps its own reason).
        if zero_fill && cost.not_modelled != Some(NotModelled::CpAsyncCg) {
            cost = RequestCost::unmodelled(NotModelled::CpAsyncZeroFill);
        }
        let lanes = self.cp_request.address_lanes();
        self.count_shared(pc, SharedKind::CpAsync(kind), &cost, lanes, &saddrs);
        if obs.is_some() {
            let step = crate::sim::exec::store_step(&self.cp_request, cost);
            observe(obs, w, pc, inst, mask, TraceKind::Shared(&step));
        }
        Ok(changed)
    }

    /// The global side of a `cp.async` whose active lanes each copy all `size` bytes, when
    /// every lane's source lies in one buffer: one buffer check for the warp (the lowest
    /// address's buffer holds the highest one's end; [`Global::check`] once) and the bytes by
    /// [`Global::copy_lane`], each lane's as little-endian words into `data`, its address into
    /// `addrs`. False (nothing written) when the lanes need the per-lane path (an immediate
    /// base, a negative address, several buffers, or a check that fails: the per-lane path
    /// then gives the error).
    fn cp_async_fast(
        &self,
        w: usize,
        src: &Addr,
        mask: u32,
        size: u32,
        data: &mut LaneRegs,
        addrs: &mut [u64; 32],
    ) -> bool {
        let Src::Reg(r) = src.base else { return false };
        if mask == 0 || !matches!(size, 4 | 8 | 16) {
            return false;
        }
        let b = r as usize * WARP_SIZE;
        let Some(vals) = self.warps[w].regs.get(b..b + WARP_SIZE) else {
            return false;
        };
        let vals: &[u64; WARP_SIZE] = vals.try_into().unwrap_or_else(|_| unreachable!());
        let (lo, hi) = masked_min_max(vals, mask);
        let off = i128::from(src.offset);
        let (lo, hi) = (i128::from(lo) + off, i128::from(hi) + off);
        let (Ok(lo), Ok(hi)) = (u64::try_from(lo), u64::try_from(hi)) else {
            return false;
        };
        // Every lane in the buffer of the lowest address: the highest one's end inside that
        // buffer's window ([`BUFFER_WINDOW`] < 2^40, the buffers' spacing).
        let k = (lo >> 40) as usize;
        let n = u64::from(size);
        if k < 1 || k > self.global.nbufs || hi >> 40 != lo >> 40 {
            return false;
        }
        if hi - crate::ptx::decode::buffer_base(k - 1) + n > BUFFER_WINDOW {
            return false;
        }
        // The plan's buffer check, once for the warp (every lane is in buffer `k`).
        if self.global.check(lo, n).is_err() {
            return false;
        }
        let mut last = None;
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = vals[l].wrapping_add(src.offset as u64);
            addrs[l] = a;
            let mut bytes = [0u8; 16];
            self.global
                .copy_lane(a, &mut bytes[..size as usize], &mut last);
            data[l] = regs_of(&bytes);
        }
        true
    }

    /// `mma.sync.aligned` through the door to `sim`.
    pub(in crate::ptx) fn exec_mma<'o>(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        mask: u32,
        _path: u32,
        obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let mut changed = false;
        let computes = self.computes(pc);
        let Op::Mma { kind, d, a, b, c } = &inst.op else {
            return Ok(changed);
        };
        if mask != u32::MAX {
            return Err(format!(
                "mma.sync needs all 32 lanes of the warp (.aligned); active lanes {mask:#010x}"
            ));
        }
        if !computes {
            // Counts only (`crate::ptx::dataflow::plan`): D keeps its old value. Whether a
            // computed D would have changed is not known: the spin rule does not decide on
            // this loop iteration (`Warp::skipped`, `Machine::branch`).
            self.warps[w].skipped = true;
            return Ok(false);
        }
        // The registers' lane arrays borrowed from the register file (an immediate operand,
        // which the decoder may allow, is spread into a copy first).
        // D is written into `dregs` (not returned by value through each layer: issue #31).
        let regs = &self.warps[w].regs;
        let mut dregs = [[0u32; WARP_SIZE]; 4];
        let nregs = match (reg_lanes(regs, a), reg_lanes(regs, b), reg_lanes(regs, c)) {
            (Some(ra), Some(rb), Some(rc)) => warp_ops::mma_into(
                *kind,
                &ra[..a.len().min(4)],
                &rb[..b.len().min(4)],
                &rc[..c.len().min(4)],
                &mut dregs,
            ),
            _ => {
                let own = |srcs: &[Src]| -> [[u64; WARP_SIZE]; 4] {
                    std::array::from_fn(|i| {
                        srcs.get(i).map_or([0; WARP_SIZE], |s| {
                            crate::ptx::lanes::arrays::operand(regs, *s)
                        })
                    })
                };
                let (oa, ob, oc) = (own(a), own(b), own(c));
                warp_ops::mma_into(
                    *kind,
                    &oa.each_ref(),
                    &ob.each_ref(),
                    &oc.each_ref(),
                    &mut dregs,
                )
            }
        }
        .map_err(|e| e.to_string())?;
        let regs = &mut self.warps[w].regs;
        for (i, r) in d.iter().enumerate().take(4) {
            changed |= crate::ptx::lanes::arrays::write(regs, *r, u32::MAX, &dregs[i]);
        }
        if obs.is_some() {
            let step = warp_ops::MmaStep {
                d: dregs,
                regs: nregs,
            };
            observe(obs, w, pc, inst, mask, TraceKind::Mma(&step.lane_regs()));
        }
        Ok(changed)
    }

    /// `atom` and `red` on shared or global memory.
    pub(in crate::ptx) fn exec_atom<'o>(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        mask: u32,
        _path: u32,
        _obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let changed = false;
        let Op::Atom {
            space,
            op,
            ty,
            d,
            addr,
            b,
            c,
        } = &inst.op
        else {
            return Ok(changed);
        };
        let eb = ty.bytes();
        let resolved = self.resolve_space(w, *space, addr, mask, eb)?;
        if matches!(resolved, Resolved::Remote(_)) {
            self.count_remote(pc, mask, eb);
        }
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
                Resolved::Remote(a) => {
                    let (r, o) = (a[l].0 as usize, a[l].1 as usize);
                    buf[..eb as usize]
                        .copy_from_slice(&self.smem_of(r).bytes()[o..o + eb as usize]);
                }
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
                    self.smem.bytes_mut()[o..o + eb as usize].copy_from_slice(&nb[..eb as usize]);
                }
                Resolved::Global(a) => self.global.store(a[l], &nb[..eb as usize], l)?,
                Resolved::Remote(a) => {
                    let (r, o) = (a[l].0 as usize, a[l].1 as usize);
                    self.smem_of(r).bytes_mut()[o..o + eb as usize]
                        .copy_from_slice(&nb[..eb as usize]);
                }
                Resolved::Param | Resolved::Local(_) => {}
            }
            if let Some(d) = d {
                self.warps[w].regs[*d as usize * WARP_SIZE + l] = extend(*ty, old);
            }
        }
        Ok(changed)
    }

    /// Runs one shared-memory request (`ld`/`st.shared`, `stmatrix`; `cp.async` has its own
    /// request, [`Machine::exec_cp_async`]) through the door to `sim`, counting it.
    pub(in crate::ptx) fn shared_op(
        &mut self,
        pc: usize,
        kind: SharedKind,
        addrs: [u32; 32],
        mask: u32,
        data: &LaneRegs,
    ) -> Result<Step, String> {
        let step = warp_ops::shared(&mut self.smem, kind, addrs, mask, data, &[0u64; 32])
            .map_err(|e| e.to_string())?;
        let lanes = step.request.as_ref().map_or(0, |r| r.address_lanes());
        self.count_shared(pc, kind, &step.cost, lanes, &addrs);
        Ok(step)
    }

    /// Counts one shared-memory request of instruction `pc`: its cost into the per-instruction
    /// stats, and the bytes its address lanes `lanes` reach at `addrs` into `touched`.
    fn count_shared(
        &mut self,
        pc: usize,
        kind: SharedKind,
        cost: &RequestCost,
        lanes: u32,
        addrs: &[u32; 32],
    ) {
        let st = &mut self.stats[pc];
        st.wavefronts += cost.wavefronts as u64;
        st.ideal += cost.ideal as u64;
        if cost.not_modelled.is_some() {
            st.not_modelled += 1;
        }
        if matches!(kind, SharedKind::CpAsync(_)) {
            match cost.not_modelled {
                None => {
                    let w = u64::from(cost.wavefronts);
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
        // The largest end of an address lane (`saturating_add` keeps the order, so the end of
        // the largest address is the largest end).
        if lanes != 0 {
            let width = kind.bytes_per_address();
            let top = masked_max(addrs, lanes);
            self.touched = self.touched.max(top.saturating_add(width));
        }
    }

    /// The row addresses of an `ldmatrix`/`stmatrix` (lanes 0..8·num) as shared offsets; a
    /// `generic` one (no `.shared`) must lie in the CTA's shared window.
    ///
    /// # Errors
    /// A lane's address outside shared memory, or, generic, outside the shared window (a
    /// global or local address: the instruction reads and writes shared memory only).
    pub(in crate::ptx) fn matrix_addrs(
        &self,
        w: usize,
        addr: &Addr,
        num: u8,
        generic: bool,
    ) -> Result<[u32; 32], String> {
        let regs = &self.warps[w].regs;
        let lanes = 8 * num as usize;
        let len = self.smem.len();
        // One range check per lane (the window's offset, or the u32 range), in i128 as
        // `addr_value` computes; a lane outside it takes the checks below for their message.
        let (sub, lim) = if generic {
            (i128::from(SHARED_WINDOW), i128::from(len))
        } else {
            (0, 1i128 << 32)
        };
        let mut out = [0u32; 32];
        // The base hoisted out of the lane loop: when the smallest and the largest lane value
        // land in range (i128, as `addr_value`), every lane does (`base + offset - sub` grows
        // with `base`), and each lane's value is its u64 arithmetic modulo 2^32. Otherwise
        // the lane loop below finds the lane at fault.
        let miss = match addr.base {
            Src::Reg(r) => {
                let b = r as usize * WARP_SIZE;
                let lane_vals: &[u64; WARP_SIZE] = (&regs[b..b + WARP_SIZE])
                    .try_into()
                    .unwrap_or_else(|_| unreachable!());
                let vals = &lane_vals[..lanes.min(WARP_SIZE)];
                let (lo, hi) = min_max(vals);
                let fits =
                    |v: u64| (0..lim).contains(&(i128::from(v) + i128::from(addr.offset) - sub));
                let ok = !vals.is_empty() && fits(lo) && fits(hi);
                if ok {
                    let k = (addr.offset as u64).wrapping_sub(sub as u64);
                    for (o, &v) in out.iter_mut().zip(vals) {
                        *o = v.wrapping_add(k) as u32;
                    }
                }
                !ok
            }
            Src::Imm(_) => true,
        };
        if !miss {
            return Ok(out);
        }
        for (l, o) in out.iter_mut().enumerate().take(lanes) {
            let a = addr_value(regs, addr, l);
            let v = a - sub;
            *o = if (0..lim).contains(&v) {
                v as u32
            } else if generic {
                generic_shared(a, l, len)?
            } else {
                shared_addr(a, l, len)?
            };
        }
        Ok(out)
    }

    /// Every lane of `mask` of a distributed-shared-memory access: inside the CTA's window
    /// and naturally aligned.
    fn check_remote(&self, r: &[(u8, u32); 32], mask: u32, bytes: u32) -> Result<(), String> {
        let len = self.smem.len();
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let (rank, o) = r[l];
            if o.checked_add(bytes).is_none_or(|e| e > len) {
                return Err(format!(
                    "lane {l}: bytes {o}..{} of the CTA of cluster rank {rank} are outside its shared memory of {len} bytes",
                    u64::from(o) + u64::from(bytes)
                ));
            }
            check_aligned("shared::cluster", l, u64::from(o), bytes)?;
        }
        Ok(())
    }

    /// Counts one distributed-shared-memory execution of instruction `pc`: `lanes` lanes of
    /// `bytes` bytes each ([`super::InstStats::dshared`]).
    fn count_remote(&mut self, pc: usize, mask: u32, bytes: u32) {
        let s = &mut self.stats[pc];
        s.dshared += 1;
        s.dshared_bytes += u64::from(mask.count_ones()) * u64::from(bytes);
    }

    /// Notes a `.shared` access of the running instruction to bytes `lo .. end` (offsets,
    /// `end` exclusive): one outside the regions the counts-only plan assumed
    /// ([`Machine::shared_allowed`]) makes the run again with values, as a global access
    /// outside its buffers does ([`Global::strayed`]).
    pub(in crate::ptx) fn shared_in_plan(&self, lo: u64, end: u64) {
        if let Some((_, regions)) = self.shared_plan
            && regions.span(lo, end) & !self.shared_allowed != 0
        {
            self.global.strayed.set(true);
        }
    }

    /// [`Machine::shared_in_plan`] for the `bytes`-byte accesses of `mask`'s lanes at `out`
    /// (nothing to do outside a planned instruction).
    fn shared_lanes_in_plan(&self, out: &[u32; 32], mask: u32, bytes: u32) {
        if self.shared_allowed == crate::ptx::dataflow::ALL_SHARED || mask == 0 {
            return;
        }
        let on = || {
            (0..WARP_SIZE)
                .filter(|l| mask >> l & 1 == 1)
                .map(|l| out[l])
        };
        let lo = on().min().unwrap_or(0);
        let hi = on().max().unwrap_or(0);
        self.shared_in_plan(u64::from(lo), u64::from(hi) + u64::from(bytes));
    }

    pub(in crate::ptx) fn resolve_space(
        &self,
        w: usize,
        space: Space,
        addr: &Addr,
        mask: u32,
        bytes: u32,
    ) -> Result<Resolved, String> {
        let regs = &self.warps[w].regs;
        match space {
            Space::Param => {
                let l = mask.trailing_zeros() as usize;
                if let (true, Ok(a)) = (mask != 0, u64::try_from(addr_value(regs, addr, l))) {
                    check_aligned("parameter", l, a, bytes)?;
                }
                Ok(Resolved::Param)
            }
            Space::Shared => {
                let mut out = [0u32; 32];
                // Every active lane's address in u32 range when the lowest and the highest
                // are (one min/max for the warp); otherwise the lane loop finds the lane at
                // fault. Inactive lanes stay 0.
                if let Src::Reg(r) = addr.base
                    && mask != 0
                    && let Some(vals) =
                        regs.get(r as usize * WARP_SIZE..(r as usize + 1) * WARP_SIZE)
                {
                    let vals: &[u64; WARP_SIZE] =
                        vals.try_into().unwrap_or_else(|_| unreachable!());
                    let (lo, hi) = masked_min_max(vals, mask);
                    let off = i128::from(addr.offset);
                    if i128::from(lo) + off >= 0 && i128::from(hi) + off <= i128::from(u32::MAX) {
                        for (l, (o, &v)) in out.iter_mut().zip(vals).enumerate() {
                            let on = 0u32.wrapping_sub(mask >> l & 1);
                            *o = v.wrapping_add(addr.offset as u64) as u32 & on;
                        }
                        self.shared_lanes_in_plan(&out, mask, bytes);
                        return Ok(Resolved::Shared(out));
                    }
                }
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    out[l] = shared_addr(addr_value(regs, addr, l), l, self.smem.len())?;
                }
                self.shared_lanes_in_plan(&out, mask, bytes);
                Ok(Resolved::Shared(out))
            }
            Space::Cluster => {
                let mut out = [(0u8, 0u32); 32];
                let mut remote = false;
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let (r, o) =
                        cluster_addr(addr_value(regs, addr, l), self.cur, self.nctas(), l)?;
                    out[l] = (r as u8, o);
                    remote |= r != self.cur;
                }
                if remote {
                    self.check_remote(&out, mask, bytes)?;
                    return Ok(Resolved::Remote(out));
                }
                Ok(Resolved::Shared(out.map(|(_, o)| o)))
            }
            Space::Local => {
                let mut out = [0u32; 32];
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    out[l] = local_addr(addr_value(regs, addr, l), bytes, self.prog.local_frame)
                        .map_err(|e| format!("lane {l}: {e}"))?;
                    check_aligned("local", l, u64::from(out[l]), bytes)?;
                }
                Ok(Resolved::Local(out))
            }
            Space::Global | Space::Generic => {
                let mut g = [0u64; 32];
                let mut s = [0u32; 32];
                let mut loc = [0u32; 32];
                let mut rem = [(0u8, 0u32); 32];
                let (mut any_s, mut any_g, mut any_l, mut any_r) = (false, false, false, false);
                let cluster_top =
                    SHARED_WINDOW + (((self.nctas() + 1) as u64) << CLUSTER_RANK_SHIFT);
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
                        && self.nctas() > 1
                        && (SHARED_WINDOW..cluster_top).contains(&a)
                    {
                        let (r, o) =
                            cluster_addr(i128::from(a - SHARED_WINDOW), self.cur, self.nctas(), l)?;
                        rem[l] = (r as u8, o);
                        any_r = true;
                    } else if space == Space::Generic
                        && (LOCAL_WINDOW..LOCAL_WINDOW + LOCAL_WINDOW_BYTES).contains(&a)
                    {
                        loc[l] =
                            local_addr(i128::from(a - LOCAL_WINDOW), bytes, self.prog.local_frame)
                                .map_err(|e| format!("lane {l}: generic address {a:#x}: {e}"))?;
                        check_aligned("generic (local)", l, a - LOCAL_WINDOW, bytes)?;
                        any_l = true;
                    } else {
                        self.global
                            .check(a, bytes as u64)
                            .map_err(|e| format!("lane {l}: {e}"))?;
                        check_aligned("global", l, a, bytes)?;
                        g[l] = a;
                        any_g = true;
                    }
                }
                match (any_s, any_g, any_l, any_r) {
                    (true, false, false, false) => Ok(Resolved::Shared(s)),
                    (false, false, true, false) => Ok(Resolved::Local(loc)),
                    (false, false, false, true) => {
                        self.check_remote(&rem, mask, bytes)?;
                        Ok(Resolved::Remote(rem))
                    }
                    (false, _, false, false) => Ok(Resolved::Global(g)),
                    _ => Err(format!(
                        "a generic access mixes {} addresses across lanes",
                        [
                            (any_g, "global"),
                            (any_s, "shared"),
                            (any_l, "local"),
                            (any_r, "another CTA's shared")
                        ]
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

pub(in crate::ptx) enum Resolved {
    Param,
    Shared([u32; 32]),
    /// Lanes reaching another CTA's shared memory (distributed shared memory): each lane's
    /// cluster rank (at most 8 CTAs, [`crate::ptx::params::MAX_CLUSTER_CTAS`]) and byte offset there
    /// (every active lane of the access).
    Remote([(u8, u32); 32]),
    Global([u64; 32]),
    /// Byte offsets into each lane's own frame, checked against its size.
    Local([u32; 32]),
}

/// The smallest and the largest of `v` (`(u64::MAX, 0)` when empty); compiled for AVX2 where
/// the CPU has it (the same numbers: integer comparisons).
fn min_max(v: &[u64]) -> (u64, u64) {
    #[inline(always)]
    fn body(v: &[u64]) -> (u64, u64) {
        let lo = v.iter().copied().fold(u64::MAX, u64::min);
        let hi = v.iter().copied().fold(0, u64::max);
        (lo, hi)
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn avx2(v: &[u64]) -> (u64, u64) {
        body(v)
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked just above).
        return unsafe { avx2(v) };
    }
    body(v)
}

/// The smallest and the largest of `v` over the lanes of `mask` (`(u64::MAX, 0)` when none);
/// compiled for AVX2 where the CPU has it (integer comparisons: the same numbers).
pub(in crate::ptx) fn masked_min_max(v: &[u64; 32], mask: u32) -> (u64, u64) {
    #[inline(always)]
    fn body(v: &[u64; 32], mask: u32) -> (u64, u64) {
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        for (l, &x) in v.iter().enumerate() {
            let on = 0u64.wrapping_sub(u64::from(mask >> l & 1));
            lo = lo.min(x | !on);
            hi = hi.max(x & on);
        }
        (lo, hi)
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn avx2(v: &[u64; 32], mask: u32) -> (u64, u64) {
        body(v, mask)
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked just above).
        return unsafe { avx2(v, mask) };
    }
    body(v, mask)
}

/// The largest of `addrs` over the lanes of `lanes` (0 when none); compiled for AVX2 where
/// the CPU has it.
fn masked_max(addrs: &[u32; 32], lanes: u32) -> u32 {
    #[inline(always)]
    fn body(addrs: &[u32; 32], lanes: u32) -> u32 {
        let mut top = 0u32;
        for (l, &a) in addrs.iter().enumerate() {
            top = top.max(a & 0u32.wrapping_sub(lanes >> l & 1));
        }
        top
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn avx2(addrs: &[u32; 32], lanes: u32) -> u32 {
        body(addrs, lanes)
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked just above).
        return unsafe { avx2(addrs, lanes) };
    }
    body(addrs, lanes)
}

pub(in crate::ptx) fn addr_value(regs: &[u64], a: &Addr, l: usize) -> i128 {
    let base = match a.base {
        Src::Reg(r) => regs[r as usize * WARP_SIZE + l],
        Src::Imm(v) => v,
    };
    base as i128 + a.offset as i128
}

/// Natural alignment of a `bytes`-byte access at `a` in `space` (PTX ISA §6.4.1 "Addresses as
/// Operands": an address must be a multiple of the access size, a vector's whole size; the
/// behaviour is undefined otherwise).
pub(in crate::ptx) fn check_aligned(
    space: &str,
    l: usize,
    a: u64,
    bytes: u32,
) -> Result<(), String> {
    let align = 1u64 << bytes.max(1).trailing_zeros();
    if a.is_multiple_of(align) {
        Ok(())
    } else {
        Err(format!(
            "lane {l}: {space} address {a:#x} is not aligned to {align} bytes: a {bytes}-byte access must be naturally aligned (PTX ISA §6.4.1, Addresses as Operands)"
        ))
    }
}

/// The bit where a `shared::cluster` address starts to name its CTA: the simulator's form is
/// `offset | (rank + 1) << 24` for the CTA of cluster rank `rank` (what `mapa` gives), and a
/// plain shared offset (below 2^24) is the executing CTA's own window (PTX ISA §5.1.4.1: the
/// `shared::cta` window is contained in the `shared::cluster` window). Shared memory per CTA
/// is at most 227 KiB, below 2^24; a generic address of another CTA's window is
/// [`SHARED_WINDOW`] plus the same form.
pub const CLUSTER_RANK_SHIFT: u32 = 24;

/// A `shared::cluster` address `a` executed by the CTA of rank `own` in a cluster of `nctas`:
/// the rank of the CTA it names and the byte offset in that CTA's window.
///
/// # Errors
/// A negative address, or one naming no CTA of the cluster.
pub(in crate::ptx) fn cluster_addr(
    a: i128,
    own: usize,
    nctas: usize,
    l: usize,
) -> Result<(usize, u32), String> {
    let v = u32::try_from(a).map_err(|_| {
        format!("lane {l}: shared::cluster address {a:#x} is outside every CTA's shared memory")
    })?;
    match (v >> CLUSTER_RANK_SHIFT) as usize {
        0 => Ok((own, v)),
        k if k <= nctas => Ok((k - 1, v & ((1 << CLUSTER_RANK_SHIFT) - 1))),
        k => Err(format!(
            "lane {l}: shared::cluster address {v:#x} names CTA rank {}, but the cluster has {nctas} CTA{} (an address from mapa of a rank in 0..={})",
            k - 1,
            if nctas == 1 { "" } else { "s" },
            nctas - 1
        )),
    }
}

/// `mapa` of address `a` to the CTA of rank `rank` (PTX ISA 9.7.9.22): the same offset in that
/// CTA's window, as a `shared::cluster` address ([`CLUSTER_RANK_SHIFT`]) or, when `a` is a
/// generic shared address, a generic one; to the executing CTA's own rank, the plain address
/// of its own window.
///
/// # Errors
/// [`cluster_addr`]'s, or a generic address outside the shared window.
pub(in crate::ptx) fn mapa(a: u64, rank: usize, own: usize, nctas: usize) -> Result<u64, String> {
    // The executing CTA's own window: its plain (shared::cta) addresses.
    let tag = match rank == own {
        true => 0,
        false => ((rank as u64) + 1) << CLUSTER_RANK_SHIFT,
    };
    if a >= SHARED_WINDOW {
        let (_, off) = cluster_addr(i128::from(a - SHARED_WINDOW), own, nctas, 0)
            .map_err(|_| format!("the generic address {a:#x} is not in the shared window"))?;
        return Ok(SHARED_WINDOW + tag + u64::from(off));
    }
    let (_, off) = cluster_addr(i128::from(a), own, nctas, 0)?;
    Ok(tag | u64::from(off))
}

/// The shared offset of generic address `a` of lane `l` of an instruction that reaches shared
/// memory only (`ldmatrix`, `stmatrix` without `.shared`).
///
/// # Errors
/// `a` outside the window [`SHARED_WINDOW`]`..+size`, named with the window.
pub(in crate::ptx) fn generic_shared(a: i128, l: usize, size: u32) -> Result<u32, String> {
    let base = i128::from(SHARED_WINDOW);
    if (base..base + i128::from(size)).contains(&a) {
        return Ok((a - base) as u32);
    }
    Err(format!(
        "lane {l}: generic address {a:#x} is not in the shared window {base:#x}..{:#x} ({size} bytes of shared memory): ldmatrix/stmatrix without .shared take a generic address of shared memory (cvta.shared of a shared address)",
        base + i128::from(size)
    ))
}

pub(in crate::ptx) fn shared_addr(a: i128, l: usize, size: u32) -> Result<u32, String> {
    u32::try_from(a).map_err(|_| {
        format!("lane {l}: shared address {a} is outside shared memory of {size} bytes")
    })
}

/// A local address `a` of an access of `n` bytes, checked against the thread's frame.
pub(in crate::ptx) fn local_addr(a: i128, n: u32, frame: u32) -> Result<u32, String> {
    match a.checked_add(i128::from(n)) {
        Some(end) if a >= 0 && end <= i128::from(frame) => Ok(a as u32),
        _ => Err(format!(
            "local address {a} ({n} bytes) is outside the thread's .local frame of {frame} bytes"
        )),
    }
}

pub(in crate::ptx) fn read_bytes(buf: &[u8], o: i128, n: u32) -> Option<u64> {
    let o = usize::try_from(o).ok()?;
    let s = buf.get(o..o.checked_add(n as usize)?)?;
    let mut b = [0u8; 8];
    b[..s.len()].copy_from_slice(s);
    Some(u64::from_le_bytes(b))
}

pub(in crate::ptx) fn width_of(bytes: u32) -> Result<AccessWidth, String> {
    AccessWidth::from_bytes(bytes).ok_or_else(|| {
        format!("a shared access of {bytes} bytes per lane is not supported (1, 2, 4, 8 or 16)")
    })
}

pub(in crate::ptx) fn lane_bytes(r: &[u32; 4]) -> [u8; 16] {
    let mut b = [0u8; 16];
    for i in 0..4 {
        b[4 * i..4 * i + 4].copy_from_slice(&r[i].to_le_bytes());
    }
    b
}

pub(in crate::ptx) fn regs_of(b: &[u8; 16]) -> [u32; 4] {
    std::array::from_fn(|i| {
        u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    })
}

/// The lane arrays of registers `srcs` (up to 4) in the register file `regs`, borrowed;
/// `None` when one is an immediate.
fn reg_lanes<'r>(regs: &'r [u64], srcs: &[Src]) -> Option<[&'r [u64; WARP_SIZE]; 4]> {
    static ZERO: [u64; WARP_SIZE] = [0; WARP_SIZE];
    let mut out = [&ZERO; 4];
    for (o, s) in out.iter_mut().zip(srcs) {
        let Src::Reg(r) = *s else { return None };
        let b = r as usize * WARP_SIZE;
        *o = regs.get(b..b + WARP_SIZE)?.try_into().ok()?;
    }
    Some(out)
}
