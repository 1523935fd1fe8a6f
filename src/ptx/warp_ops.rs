//! The interpreter's one door to `sim`: every warp-level shared-memory and tensor-core
//! instruction (`ld/st.shared`, `ldmatrix`, `stmatrix`, the shared side of `cp.async`,
//! `mma.sync`) goes through [`shared`] or [`mma`], which hand it to the simulator's request model
//! ([`WarpRequest::cost`]: wavefronts and ideal) and fragment tables ([`crate::sim::ldmatrix`],
//! [`crate::sim::mma`]). The interpreter never computes a wavefront itself.
//!
//! Interim: until `sim::exec::execute` (the single warp executor) is on main, the data movement
//! lives here and stmatrix is costed as the ldmatrix request with the same row addresses (the
//! H200 rule: one unit per 8x8 matrix), the shared side of cp.async as an `st.shared` of its
//! width. Switching to the executor replaces the bodies of [`shared`] and [`mma`] only.

use crate::sim::bank::{RequestCost, SharedMemoryConfig, WARP_SIZE, WarpRequest};
use crate::sim::error::SimError;
use crate::sim::instr::{AccessWidth, Instruction, MatrixCount};
use crate::sim::ldmatrix;
use crate::sim::mma::{self, MmaDtype, MmaRegs, MmaShape};

/// Per-lane 32-bit registers, lane 0 first, up to 4 per lane.
pub type LaneRegs = [[u32; 4]; WARP_SIZE];

/// A warp-level shared-memory instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedKind {
    /// `ld.shared` of a width.
    Ld(AccessWidth),
    /// `st.shared` of a width.
    St(AccessWidth),
    /// `ldmatrix.xN[.trans]`.
    Ldmatrix(MatrixCount, bool),
    /// `stmatrix.xN[.trans]`.
    Stmatrix(MatrixCount, bool),
    /// The shared side of `cp.async` of 4, 8 or 16 bytes.
    CpAsync(AccessWidth),
}

impl SharedKind {
    /// Bytes each address covers.
    pub fn bytes_per_address(self) -> u32 {
        match self {
            SharedKind::Ld(w) | SharedKind::St(w) | SharedKind::CpAsync(w) => w.bytes(),
            SharedKind::Ldmatrix(..) | SharedKind::Stmatrix(..) => 16,
        }
    }

    /// True when it writes shared memory.
    pub fn is_store(self) -> bool {
        matches!(
            self,
            SharedKind::St(_) | SharedKind::Stmatrix(..) | SharedKind::CpAsync(_)
        )
    }

    /// The request model's instruction for its cost (see the module docs for the interim
    /// stand-ins of stmatrix and cp.async).
    fn model_instruction(self) -> Instruction {
        match self {
            SharedKind::Ld(w) => Instruction::Ld(w),
            SharedKind::St(w) | SharedKind::CpAsync(w) => Instruction::St(w),
            SharedKind::Ldmatrix(num, trans) | SharedKind::Stmatrix(num, trans) => {
                Instruction::Ldmatrix { num, trans }
            }
        }
    }
}

/// What one shared-memory instruction did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The request given to the model (lane addresses, active mask).
    pub request: WarpRequest,
    /// Its wavefronts and ideal.
    pub cost: RequestCost,
    /// Loaded registers per lane (loads only).
    pub regs: LaneRegs,
}

/// Shared memory of one CTA: bytes, little-endian.
#[derive(Clone, Debug)]
pub struct Smem {
    bytes: Vec<u8>,
}

impl Smem {
    /// `size` zero bytes.
    pub fn zeroed(size: u32) -> Smem {
        Smem {
            bytes: vec![0; size as usize],
        }
    }

    /// Size in bytes.
    pub fn len(&self) -> u32 {
        self.bytes.len() as u32
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Mutable bytes (atomics, which the request model does not cover).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }
}

/// Executes one warp shared-memory instruction: validates and costs the request, then moves
/// the data (loads into the returned registers, stores from `data`, registers little-endian).
///
/// # Errors
/// Misaligned or out-of-range addresses, a partial mask for ldmatrix/stmatrix.
pub fn shared(
    smem: &mut Smem,
    kind: SharedKind,
    addrs: [u32; WARP_SIZE],
    mask: u32,
    data: &LaneRegs,
) -> Result<Step, SimError> {
    let collective = matches!(kind, SharedKind::Ldmatrix(..) | SharedKind::Stmatrix(..));
    let request = WarpRequest {
        instruction: kind.model_instruction(),
        lane_byte_offsets: addrs,
        active_mask: if collective { u32::MAX } else { mask },
    };
    if collective && mask != u32::MAX {
        return Err(SimError::PartialLdmatrix {
            mask,
            instruction: kind.model_instruction().to_string(),
        });
    }
    let cfg = SharedMemoryConfig {
        size_bytes: smem.len(),
        ..SharedMemoryConfig::default()
    };
    request.validate(&cfg)?;
    let cost = request.cost();
    let mut regs = [[0u32; 4]; WARP_SIZE];
    match kind {
        SharedKind::Ld(w) => {
            let n = w.bytes() as usize;
            for lane in lanes(mask) {
                let a = addrs[lane] as usize;
                let mut b = [0u8; 16];
                b[..n].copy_from_slice(&smem.bytes[a..a + n]);
                for r in 0..4 {
                    regs[lane][r] =
                        u32::from_le_bytes([b[4 * r], b[4 * r + 1], b[4 * r + 2], b[4 * r + 3]]);
                }
            }
        }
        SharedKind::St(w) | SharedKind::CpAsync(w) => {
            let n = w.bytes() as usize;
            for lane in lanes(mask) {
                let a = addrs[lane] as usize;
                let mut b = [0u8; 16];
                for r in 0..4 {
                    b[4 * r..4 * r + 4].copy_from_slice(&data[lane][r].to_le_bytes());
                }
                smem.bytes[a..a + n].copy_from_slice(&b[..n]);
            }
        }
        SharedKind::Ldmatrix(num, trans) | SharedKind::Stmatrix(num, trans) => {
            let store = kind.is_store();
            for lane in 0..WARP_SIZE as u32 {
                for r in 0..num.count() as u32 {
                    for h in 0..2u32 {
                        let e = ldmatrix::fragment(trans, lane, r, h);
                        let a = (addrs[ldmatrix::address_lane(e.matrix, e.row) as usize]
                            + 2 * e.col) as usize;
                        if store {
                            let v = (data[lane as usize][r as usize] >> (16 * h)) as u16;
                            smem.bytes[a..a + 2].copy_from_slice(&v.to_le_bytes());
                        } else {
                            let v = u16::from_le_bytes([smem.bytes[a], smem.bytes[a + 1]]);
                            regs[lane as usize][r as usize] |= (v as u32) << (16 * h);
                        }
                    }
                }
            }
        }
    }
    Ok(Step {
        request,
        cost,
        regs,
    })
}

fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    (0..WARP_SIZE).filter(move |l| mask >> l & 1 == 1)
}

/// `mma.sync.aligned.<shape>.row.col.f32.<dtype>.<dtype>.f32`: D (f32 bits) from A, B (packed
/// 16-bit pairs) and C (f32 bits) on the fragments of [`crate::sim::mma::fragment`].
///
/// # Errors
/// A shape and type pair the model does not cover.
pub fn mma(
    shape: MmaShape,
    dtype: MmaDtype,
    a: &LaneRegs,
    b: &LaneRegs,
    c: &LaneRegs,
) -> Result<LaneRegs, SimError> {
    shape.check_dtype(dtype)?;
    let regs = MmaRegs {
        a: *a,
        b: b.map(|r| [r[0], r[1]]),
        c: c.map(|r| r.map(f32::from_bits)),
    };
    let d = mma::execute(shape, dtype, &regs);
    Ok(d.map(|r| r.map(f32::to_bits)))
}
