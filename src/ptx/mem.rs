//! Memory of the CTA engine: the global buffers ([`Global`], lazily paged), state spaces
//! (`.param`, `.shared` = `shared::cta`, `.local`, `.global`, generic addresses resolved to one
//! of them: [`Resolved`]), natural-alignment checks, shared and local address helpers, and the
//! one door from the engine to `sim`'s shared-memory request model ([`super::warp_ops`]).

use std::collections::BTreeMap;

use super::decode::{
    Addr, LOCAL_WINDOW, LOCAL_WINDOW_BYTES, SHARED_WINDOW, Space, Src, buffer_base,
};
use super::engine::Machine;
use super::warp_ops::{self, LaneRegs, SharedKind, Step};
use crate::sim::bank::{NotModelled, RequestCost, WARP_SIZE};
use crate::sim::instr::AccessWidth;

/// A `cp.async`'s global side, for [`Machine::shared_op`]: each lane's source address, and
/// whether an active lane reads fewer bytes than it writes (`src-size` or `ignore-src`).
#[derive(Clone, Copy)]
pub(super) struct CpSources<'a> {
    pub(super) addrs: &'a [u64; 32],
    pub(super) zero_fill: bool,
}

pub(super) const PAGE: u64 = 1 << 16;
/// Bytes each global buffer may span from its base.
pub const BUFFER_WINDOW: u64 = 1 << 36;

pub(super) struct Global {
    pub(super) nbufs: usize,
    pub(super) names: Vec<String>,
    /// Per buffer: whether it holds a `.const` variable, which no store may write (PTX ISA
    /// §5.1.3 Constant State Space: read-only).
    pub(super) read_only: Vec<bool>,
    /// Written 64 KiB pages by page number: a B-tree, so that no choice of addresses can make
    /// a lookup slow (at most [`MAX_GLOBAL_BYTES`] / 64 KiB = 4,096 pages).
    pub(super) pages: BTreeMap<u64, Box<[u8]>>,
}

impl Global {
    pub(super) fn check(&self, addr: u64, n: u64) -> Result<(), String> {
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

    /// Reads `out.len()` bytes at `addr`, one page lookup per page touched; unwritten bytes
    /// read 0.
    pub(super) fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), String> {
        self.check(addr, out.len() as u64)?;
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
        Ok(())
    }

    /// A store's write of lane `lane`: as [`Global::write`], refused in a `.const` buffer
    /// (reached with `cvta.const` and a generic or `.global` store, `atom` or `red`).
    pub(super) fn store(&mut self, addr: u64, data: &[u8], lane: usize) -> Result<(), String> {
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
    pub(super) fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), String> {
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
    /// Runs one shared-memory request through the door to `sim`, counting it.
    pub(super) fn shared_op(
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

    pub(super) fn matrix_addrs(&self, w: usize, addr: &Addr, num: u8) -> Result<[u32; 32], String> {
        let regs = &self.warps[w].regs;
        let lanes = 8 * num as usize;
        let mut out = [0u32; 32];
        for (l, o) in out.iter_mut().enumerate().take(lanes) {
            *o = shared_addr(addr_value(regs, addr, l), l, self.smem.len())?;
        }
        Ok(out)
    }

    pub(super) fn resolve_space(
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
                    check_aligned("local", l, u64::from(out[l]), bytes)?;
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

pub(super) enum Resolved {
    Param,
    Shared([u32; 32]),
    Global([u64; 32]),
    /// Byte offsets into each lane's own frame, checked against its size.
    Local([u32; 32]),
}

pub(super) fn addr_value(regs: &[u64], a: &Addr, l: usize) -> i128 {
    let base = match a.base {
        Src::Reg(r) => regs[r as usize * WARP_SIZE + l],
        Src::Imm(v) => v,
    };
    base as i128 + a.offset as i128
}

/// Natural alignment of a `bytes`-byte access at `a` in `space` (PTX ISA §6.4.1 "Addresses as
/// Operands": an address must be a multiple of the access size, a vector's whole size; the
/// behaviour is undefined otherwise).
pub(super) fn check_aligned(space: &str, l: usize, a: u64, bytes: u32) -> Result<(), String> {
    let align = 1u64 << bytes.max(1).trailing_zeros();
    if a.is_multiple_of(align) {
        Ok(())
    } else {
        Err(format!(
            "lane {l}: {space} address {a:#x} is not aligned to {align} bytes: a {bytes}-byte access must be naturally aligned (PTX ISA §6.4.1, Addresses as Operands)"
        ))
    }
}

pub(super) fn shared_addr(a: i128, l: usize, size: u32) -> Result<u32, String> {
    u32::try_from(a).map_err(|_| {
        format!("lane {l}: shared address {a} is outside shared memory of {size} bytes")
    })
}

/// A local address `a` of an access of `n` bytes, checked against the thread's frame.
pub(super) fn local_addr(a: i128, n: u32, frame: u32) -> Result<u32, String> {
    match a.checked_add(i128::from(n)) {
        Some(end) if a >= 0 && end <= i128::from(frame) => Ok(a as u32),
        _ => Err(format!(
            "local address {a} ({n} bytes) is outside the thread's .local frame of {frame} bytes"
        )),
    }
}

pub(super) fn read_bytes(buf: &[u8], o: i128, n: u32) -> Option<u64> {
    let o = usize::try_from(o).ok()?;
    let s = buf.get(o..o.checked_add(n as usize)?)?;
    let mut b = [0u8; 8];
    b[..s.len()].copy_from_slice(s);
    Some(u64::from_le_bytes(b))
}

pub(super) fn width_of(bytes: u32) -> Result<AccessWidth, String> {
    AccessWidth::from_bytes(bytes).ok_or_else(|| {
        format!("a shared access of {bytes} bytes per lane is not supported (1, 2, 4, 8 or 16)")
    })
}

pub(super) fn lane_bytes(r: &[u32; 4]) -> [u8; 16] {
    let mut b = [0u8; 16];
    for i in 0..4 {
        b[4 * i..4 * i + 4].copy_from_slice(&r[i].to_le_bytes());
    }
    b
}

pub(super) fn regs_of(b: &[u8; 16]) -> [u32; 4] {
    std::array::from_fn(|i| {
        u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    })
}
