//! The interpreter's one door to `sim`: every warp-level shared-memory and tensor-core
//! instruction (`ld/st.shared`, `ldmatrix`, `stmatrix`, the shared side of `cp.async`,
//! `mma.sync`) becomes a [`WarpOp`] (an `mma.sync` an [`MmaLanes`] on borrowed registers) for
//! the single warp executor, [`crate::sim::exec::execute`],
//! which validates it, costs it with the request model (wavefronts, ideal) and moves the data.
//! The interpreter never computes a wavefront or a fragment itself.

use crate::sim::bank::{RequestCost, WARP_SIZE, WarpRequest};
use crate::sim::error::SimError;
use crate::sim::exec::{self, MmaLanes, WarpOp};
use crate::sim::instr::{AccessWidth, CpAsyncKind, Instruction, MatrixCount};
use crate::sim::mma::MmaKind;

pub use crate::sim::exec::{LaneRegs, LoadStep, MmaStep, WarpStep as Step};
pub use crate::sim::smem::SharedMemory as Smem;

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
    /// The shared side of `cp.async.{ca,cg}` of 4, 8 or 16 bytes.
    CpAsync(CpAsyncKind),
}

impl SharedKind {
    /// Bytes each address covers.
    pub fn bytes_per_address(self) -> u32 {
        match self {
            SharedKind::Ld(w) | SharedKind::St(w) => w.bytes(),
            SharedKind::CpAsync(k) => k.bytes(),
            SharedKind::Ldmatrix(..) | SharedKind::Stmatrix(..) => 16,
        }
    }
}

/// Executes one warp shared-memory instruction through the executor: loads fill the step's
/// registers, stores write `data` (registers little-endian, as the executor's table says);
/// `src_addrs` are `cp.async`'s global source byte addresses per lane (ignored by the others).
///
/// # Errors
/// The executor's: misaligned or out-of-range addresses, a partial mask for ldmatrix/stmatrix.
pub fn shared(
    smem: &mut Smem,
    kind: SharedKind,
    addrs: [u32; WARP_SIZE],
    mask: u32,
    data: &LaneRegs,
    src_addrs: &[u64; WARP_SIZE],
) -> Result<Step, SimError> {
    let op = match kind {
        SharedKind::Ld(w) => WarpOp::ld(w, addrs, mask),
        SharedKind::St(w) => WarpOp::st(w, addrs, mask, *data),
        SharedKind::Ldmatrix(n, t) => {
            let mut op = WarpOp::ldmatrix(n, t, addrs);
            if let WarpOp::Shared { request, .. } = &mut op {
                request.active_mask = mask;
            }
            op
        }
        SharedKind::Stmatrix(n, t) => {
            let mut op = WarpOp::stmatrix(n, t, addrs, *data);
            if let WarpOp::Shared { request, .. } = &mut op {
                request.active_mask = mask;
            }
            op
        }
        SharedKind::CpAsync(k) => WarpOp::cp_async(k, addrs, mask, *src_addrs, *data),
    };
    exec::execute(smem, &op)
}

/// The request of the load `ins` at `addrs` over the lanes of `mask` (no global side).
fn load_request(ins: Instruction, addrs: [u32; WARP_SIZE], mask: u32) -> WarpRequest {
    WarpRequest {
        instruction: ins,
        lane_byte_offsets: addrs,
        active_mask: mask,
        global_addrs: None,
    }
}

/// `ldmatrix.<num>[.trans]` with row addresses `addrs` and active lanes `mask` through the
/// executor's [`exec::LoadLanes`] arm ([`exec::load_lanes_into`]), its registers written to `d`
/// (`d[r][lane]`, as [`LoadStep::d`]) instead of returned: what [`shared`] gives for
/// [`SharedKind::Ldmatrix`] (the same validation, cost and registers); returns the cost.
///
/// # Errors
/// As [`shared`]'s; `d` is then untouched.
#[inline]
pub fn ldmatrix_into(
    smem: &mut Smem,
    num: MatrixCount,
    trans: bool,
    addrs: [u32; WARP_SIZE],
    mask: u32,
    d: &mut [[u32; WARP_SIZE]; 4],
) -> Result<RequestCost, SimError> {
    let request = load_request(Instruction::Ldmatrix { num, trans }, addrs, mask);
    exec::load_lanes_into(smem, &request, d)
}

/// The [`Step`] that [`shared`] gives for that `ldmatrix`, made from the `cost` and registers
/// `d` [`ldmatrix_into`] gave (for an observer: the same request, cost and registers, without
/// loading again).
pub fn ldmatrix_step(
    num: MatrixCount,
    trans: bool,
    addrs: [u32; WARP_SIZE],
    mask: u32,
    cost: RequestCost,
    d: &[[u32; WARP_SIZE]; 4],
) -> Step {
    let request = load_request(Instruction::Ldmatrix { num, trans }, addrs, mask);
    Step {
        cost,
        regs: std::array::from_fn(|l| std::array::from_fn(|r| d[r][l])),
        regs_per_lane: request.instruction.regs_per_lane(),
        reg_lanes: exec::register_lanes(&request),
        stored_lanes: 0,
        request: Some(request),
    }
}

/// `mma.sync.aligned.<shape>.row.col.<acc>.<dtype>.<dtype>.<acc>` through the executor, on the
/// lane arrays of its registers (`a[r]`: A register `r`'s 32 lanes, the register in the low 32
/// bits of each, borrowed from the register file): D register-major in the step. A and B are
/// packed 16-bit pairs (or 8-bit quads); C and D are f32 bits per register (`acc` F32) or two
/// f16 per register (`acc` F16, registers 0 and 1 only).
///
/// # Errors
/// A shape and type pair the model does not cover.
#[inline]
pub fn mma(
    smem: &mut Smem,
    kind: MmaKind,
    a: &[&[u64; WARP_SIZE]],
    b: &[&[u64; WARP_SIZE]],
    c: &[&[u64; WARP_SIZE]],
) -> Result<MmaStep, SimError> {
    exec::execute(smem, MmaLanes { kind, a, b, c })
}

/// [`mma`] with D written to `d` (`d[r][lane]`) instead of returned in a step
/// ([`exec::mma_lanes_into`]: the same registers); returns D's registers per lane
/// ([`MmaStep::regs`]).
///
/// # Errors
/// As [`mma`]'s; `d` is then untouched.
#[inline]
pub fn mma_into(
    kind: MmaKind,
    a: &[&[u64; WARP_SIZE]],
    b: &[&[u64; WARP_SIZE]],
    c: &[&[u64; WARP_SIZE]],
    d: &mut [[u32; WARP_SIZE]; 4],
) -> Result<usize, SimError> {
    exec::mma_lanes_into(MmaLanes { kind, a, b, c }, d)
}
