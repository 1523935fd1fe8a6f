//! The tensor-map arms of the CTA engine: `tensormap.replace` and `tensormap.cp_fenceproxy`
//! (the fields and their meaning: [`crate::sim::tensormap`]), and finding the map a
//! `cp.async.bulk.tensor` names, wherever it lives: a tensor-map parameter (tilelab's handle,
//! [`crate::ptx::params::TENSOR_MAP_MAGIC`]) or an object in global memory that the kernel made or
//! changed ([`MapImage`], Triton's `tl.make_tensor_descriptor`).
//!
//! Counters: ptxas expands each `tensormap.replace` into loads and stores of the object's
//! bytes (`LDS`/`STS` for a shared object) whose number depends on its own encoding, which is
//! not published; the PTX-level report counts none of them (the SASS view of issue 28 does).

use super::Machine;
use super::mem::{addr_value, shared_addr};
use crate::ptx::decode::{Addr, Inst, Op, SHARED_WINDOW, Space};
use crate::ptx::params::tensor_map_index;
use crate::sim::tensormap::{MAP_BYTES, MapImage};
use crate::sim::tma::TensorMap;

/// Alignment of a tensor-map object (bytes): `CUtensorMap` is `alignas(64)` (CUDA driver API,
/// cuTensorMapEncodeTiled: "tensorMap address must be aligned to 64 bytes").
pub const MAP_ALIGN: u64 = 64;

/// Where a tensor-map object is.
#[derive(Clone, Copy)]
enum At {
    Shared(u32),
    Global(u64),
}

impl Machine<'_> {
    /// The object at the address lane `l` of warp `w` gives in `space`.
    fn map_place(&self, w: usize, space: Space, a: &Addr, l: usize) -> Result<At, String> {
        let v = addr_value(&self.warps[w].regs, a, l);
        let at = match space {
            Space::Shared => At::Shared(shared_addr(v, l, self.smem.len())?),
            _ => {
                let g = u64::try_from(v)
                    .map_err(|_| format!("lane {l}: negative tensor-map address {v}"))?;
                let in_shared =
                    (SHARED_WINDOW..SHARED_WINDOW + u64::from(self.smem.len())).contains(&g);
                if space == Space::Generic && in_shared {
                    At::Shared((g - SHARED_WINDOW) as u32)
                } else {
                    At::Global(g)
                }
            }
        };
        let off = match at {
            At::Shared(s) => u64::from(s),
            At::Global(g) => g,
        };
        if !off.is_multiple_of(MAP_ALIGN) {
            return Err(format!(
                "lane {l}: tensor-map object at {v:#x} is not allowed; allowed: a multiple of {MAP_ALIGN} bytes (CUtensorMap's alignment)"
            ));
        }
        Ok(at)
    }

    fn map_read(&self, at: At) -> Result<[u8; MAP_BYTES], String> {
        let mut b = [0u8; MAP_BYTES];
        match at {
            At::Shared(s) => {
                let s = s as usize;
                let src = self.smem.bytes().get(s..s + MAP_BYTES).ok_or_else(|| {
                    format!(
                        "tensor-map object at shared {s:#x} ends past the CTA's {} bytes of shared memory",
                        self.smem.len()
                    )
                })?;
                b.copy_from_slice(src);
            }
            At::Global(g) => self.global.read(g, &mut b)?,
        }
        Ok(b)
    }

    fn map_write(&mut self, at: At, b: &[u8; MAP_BYTES], l: usize) -> Result<(), String> {
        match at {
            At::Shared(s) => {
                let len = self.smem.len();
                let dst = self
                    .smem
                    .bytes_mut()
                    .get_mut(s as usize..s as usize + MAP_BYTES)
                    .ok_or_else(|| {
                        format!(
                            "tensor-map object at shared {s:#x} ends past the CTA's {len} bytes of shared memory"
                        )
                    })?;
                dst.copy_from_slice(b);
                Ok(())
            }
            At::Global(g) => self.global.store(g, b, l),
        }
    }

    /// The handle's map and base when `b` is a tensor-map parameter's handle.
    fn handle_map(&self, b: &[u8; MAP_BYTES]) -> Option<(TensorMap, u64)> {
        let i = tensor_map_index(b, 0)?;
        let base = u64::from_le_bytes(b[16..24].try_into().ok()?);
        self.tensor_maps.get(i).map(|m| (*m, base))
    }

    /// The map of a `cp.async.bulk.tensor` whose tensor-map operand is the global address `g`
    /// (not a parameter): a copied parameter handle or a [`MapImage`].
    pub(in crate::ptx) fn global_map(&self, g: u64, l: usize) -> Result<(TensorMap, u64), String> {
        if !self.values {
            self.needs_values.set(true);
        }
        let at = At::Global(g);
        if !g.is_multiple_of(MAP_ALIGN) {
            return Err(format!(
                "lane {l}: the tensor map operand {g:#x} is not allowed; allowed: a multiple of {MAP_ALIGN} bytes (CUtensorMap's alignment)"
            ));
        }
        let b = self.map_read(at).map_err(|e| format!("lane {l}: {e}"))?;
        if let Some(m) = self.handle_map(&b) {
            return Ok(m);
        }
        match MapImage::from_bytes(&b) {
            Some(img) => img
                .tensor_map()
                .map_err(|e| format!("lane {l}: the tensor map at {g:#x}: {e}")),
            None => Err(format!(
                "lane {l}: the tensor map operand {g:#x} holds no tensor map: no --tensor-map parameter was copied there and no tensormap.replace wrote it"
            )),
        }
    }

    /// `tensormap.replace` / `tensormap.cp_fenceproxy` for the lanes of `mask`; whether memory
    /// changed.
    pub(in crate::ptx) fn exec_tensormap(
        &mut self,
        w: usize,
        pc: usize,
        inst: &Inst,
        mask: u32,
    ) -> Result<bool, String> {
        // The distinct shared-memory maps the lanes name ([`InstStats::maps`]).
        let mut maps = [0u32; 32];
        let mut distinct = 0usize;
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let shared = match &inst.op {
                Op::TensorMapReplace {
                    space,
                    addr,
                    field,
                    value,
                } => {
                    let at = self.map_place(w, *space, addr, l)?;
                    let b = self.map_read(at).map_err(|e| format!("lane {l}: {e}"))?;
                    let mut img = match (MapImage::from_bytes(&b), self.handle_map(&b)) {
                        (Some(img), _) => img,
                        (None, Some((map, base))) => MapImage::of_map(&map, base),
                        (None, None) => MapImage::default(),
                    };
                    let regs = &self.warps[w].regs;
                    let v = v!(regs, *value, l);
                    img.replace(*field, v);
                    self.map_write(at, &img.to_bytes(), l)?;
                    at
                }
                Op::TensorMapCopy { dst, src } => {
                    let from = self.map_place(w, Space::Shared, src, l)?;
                    let to = self.map_place(w, Space::Global, dst, l)?;
                    let b = self.map_read(from).map_err(|e| format!("lane {l}: {e}"))?;
                    self.map_write(to, &b, l)?;
                    from
                }
                _ => return Ok(false),
            };
            if let At::Shared(s) = shared
                && !maps[..distinct].contains(&s)
            {
                maps[distinct] = s;
                distinct += 1;
            }
        }
        if let Some(st) = self.stats.get_mut(pc) {
            st.maps += distinct as u64;
        }
        Ok(mask != 0)
    }
}
