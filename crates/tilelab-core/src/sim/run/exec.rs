//! The executor: the **one** place where an instruction meets shared memory, global memory
//! and the tensor cores, at every scope. [`execute`] takes an op of any scope and returns that
//! scope's step:
//!
//! | scope | op | step | instructions |
//! |---|---|---|---|
//! | warp | `&`[`WarpOp`] | [`WarpStep`] | ld/st.shared, ldmatrix, stmatrix, cp.async, mma.sync |
//! | warpgroup | [`WgmmaOp`] | [`WgmmaStep`] | wgmma.mma_async (every dense form of [`WgmmaKind`]) |
//! | bulk | [`BulkOp`] | [`BulkStep`] | cp.async.bulk.tensor.{1..5}d load/store, cp.reduce.async.bulk(.tensor), cp.async.bulk |
//!
//! Every op is validated before anything is written; the step says what the instruction cost
//! and touched (wavefronts, core matrices and bytes read, transaction bytes, shared ranges
//! written). What each instruction *is* (PTX name, SASS class, scope, completion, cost rule)
//! is one row of [`crate::sim::instr::TABLE`]; the ISA facts the arms use (fragment maps,
//! descriptor layouts, box placement, tensor map rules) live in [`crate::sim::ldmatrix`],
//! [`crate::sim::mma`], [`crate::sim::wgmma`] and [`crate::sim::tma`], which execute nothing themselves.
//! Global memory enters through the [`GlobalMemory`] trait (the PTX engine implements it;
//! [`FlatGlobal`] is one allocation).
//!
//! The lessons, the TUI, `tilelab sim`, the counts programs and the PTX interpreter all come
//! through here: the counts programs, which carry no data, through [`check_request`] (the
//! validation and cost the warp arm applies); the others through [`execute`] itself, and
//! through [`register_segments`] when they need to know *which* bytes a register holds.
//!
//! # Per-instruction cost to the caller
//! Warp ops are fixed arrays built on the stack: building and executing one allocates nothing
//! on the ld/st/ldmatrix/stmatrix path (a cp.async op boxes its 32 global source addresses). A
//! [`WgmmaOp`] borrows the caller's accumulator slice (thread-major) and A registers; its step
//! holds one `Vec` of the core matrices read (at most 80). A [`BulkOp`] borrows the tensor map
//! and the global memory; a load stages the box (at most one block's shared memory) in one
//! buffer so that a failing global read writes nothing.
//!
//! # Warp instructions (PTX names; `.sync.aligned` left out)
//! * `ld.shared` / `st.shared` of 1, 2, 4, 8 and 16 bytes per lane ([`AccessWidth`]): a load
//!   returns the lane's bytes as little-endian 32-bit registers, zero-extended (`.u8`, `.u16`);
//! * `ldmatrix.x1/.x2/.x4[.trans]` (PTX ISA §9.7.14.5.15) and its inverse `stmatrix` (§9.7.14.5.16,
//!   sm_90): one register per 8x8 b16 matrix, the fragment table of [`crate::sim::ldmatrix::fragment`];
//! * `cp.async.{ca,cg}.shared.global` of 4, 8 or 16 bytes: the shared side only; the caller
//!   supplies each lane's source bytes as registers (little-endian, like a store) and their
//!   global addresses (the cost depends on their 128-byte lines; `.cg` is executed but not
//!   costed, see [`crate::sim::bank::NotModelled`]);
//! * `mma.sync.aligned` of every [`MmaKind`] (shape, input type, accumulator type) that
//!   [`crate::sim::mma`] models, on per-lane registers (A, B, C and D as raw 32-bit words: f32 or
//!   s32 bit patterns, or f16 pairs with f16 accumulators).
//!
//! Costs come from [`WarpRequest::cost`]; the per-wavefront detail ([`crate::sim::bank::schedule`])
//! is for callers that display it.
//!
//! # Warpgroup: `wgmma.mma_async` (PTX ISA 9.7.15)
//! A from registers ([`WgmmaA::Regs`], [`WgmmaKind::a_fragment`]) or a matrix descriptor, B
//! from a descriptor; elements read at [`MatrixDescriptor::element_address_of`] (the canonical
//! layouts, swizzled through [`crate::sim::layout::Swizzle`]); products exact in f64, summed in f64,
//! rounded once to the accumulator (f32, f16) or summed exactly in i64 and wrapped (or
//! saturated with `.satfinite`) to s32. `scale_d = false` ignores D's old value; `imm-scale`
//! negates A or B. The step lists the core matrices read and their bank cost as 8-address units
//! ([`crate::sim::instr::CostRule::CoreMatrices`]; whether the H200's `l1tex` shared counters see
//! wgmma operand reads is not measured yet).
//!
//! # Bulk: the TMA unit
//! A tensor load reads the box at signed coordinates (elements outside the tensor read as
//! zero) and writes it where [`TensorMap::smem_box`] says (the measured 2-D placement; outer
//! dimensions stack boxes of rows); [`BulkStep::tx_bytes`] is the whole box, what
//! `mbarrier::complete_tx::bytes` receives, also when part of it was zero-filled. A store
//! writes the in-bounds elements back; a reduction combines them with [`ReduceOp`] on the map's
//! type; `cp.async.bulk` moves contiguous bytes (16-byte aligned, a multiple of 16).
//!
//! # Which bytes a register holds
//! [`register_segments`] is the table, shared by loads and stores: register `r` of lane `l` is
//! * ld/st/cp.async of `w` bytes: bytes `4r .. min(4r + 4, w)` of lane `l`'s own access;
//! * ldmatrix/stmatrix: half `h` (16 bits) is element `fragment(trans, l, r, h)` = (matrix,
//!   row, col): bytes `2·col .. 2·col + 2` of the row whose address lane `8·matrix + row` gave.
//!
//! # Adding an instruction
//! Always: a row of [`crate::sim::instr::TABLE`] (PTX name, SASS class and form, scope, completion,
//! cost rule), then by scope:
//! * **warp**: a variant of [`Instruction`] with its PTX spelling (`parse`, `Display`), SASS
//!   mnemonic, bytes per address, address lanes, registers per lane and `is_store`; its cost
//!   as one arm of `unit_rule` in [`crate::sim::bank`]; an arm of [`register_segments`] if its
//!   register ↔ memory map is not one of the two above. The warp arm reads or writes through
//!   that table, chosen by `is_store`; a non-memory warp op is a [`WarpOp`] variant and an arm
//!   of `warp`.
//! * **warpgroup**: the ISA facts (forms, fragment maps, descriptor layouts) in
//!   [`crate::sim::wgmma`]; a field or variant of [`WgmmaOp`] and its arm in `warpgroup_on`.
//! * **bulk**: its rules in [`crate::sim::tma`]; a [`BulkKind`] variant and an arm of `bulk`
//!   returning its [`BulkStep`].
//!
//! Then tests below against the PTX ISA's tables written as data, and the measured files.
//!
//! # Example
//! ```
//! use tilelab_core::sim::exec::{execute, WarpOp};
//! use tilelab_core::sim::instr::AccessWidth;
//! use tilelab_core::sim::smem::SharedMemory;
//! let mut smem = SharedMemory::with_b16_indices(4096);
//! // Every lane loads the 16 bytes at 16·lane: conflict-free, 4 wavefronts (quarter-warps).
//! let op = WarpOp::ld(AccessWidth::V4, std::array::from_fn(|l| 16 * l as u32), u32::MAX);
//! let step = execute(&mut smem, &op).unwrap();
//! assert_eq!((step.cost.wavefronts, step.cost.bank_conflicts()), (4, 0));
//! assert_eq!(step.regs[1][0], 8 | 9 << 16); // lane 1: b16 elements 8 and 9
//! ```

use std::ops::Range;

use crate::sim::bank::{RequestCost, SharedMemoryConfig, WARP_SIZE, WarpRequest};
use crate::sim::error::SimError;
use crate::sim::instr::{AccessWidth, CpAsyncKind, Instruction, MatrixCount};
use crate::sim::ldmatrix;
use crate::sim::mma::{MmaAcc, MmaKind, Operand, RawRegs};
use crate::sim::smem::SharedMemory;
use crate::sim::tma::{MAX_RANK, ReduceOp, TensorMap, TmaDtype, check_bulk_copy};
use crate::sim::wgmma::{
    Major, MatrixDescriptor, WARPGROUP_THREADS, WgmmaAcc, WgmmaKind, WgmmaType,
};

/// Per-lane 32-bit registers, lane 0 first, up to 4 per lane (unused ones 0).
pub type LaneRegs = [[u32; 4]; WARP_SIZE];

/// One warp instruction with every lane's operands.
///
/// Operands are fixed arrays so that building and executing an op never allocates; an op is
/// built on the stack and passed by reference, so the size of the mma variant (three
/// [`LaneRegs`]) costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WarpOp {
    /// A shared-memory instruction (`ld.shared`, `st.shared`, `ldmatrix`, `stmatrix`, `cp.async`):
    /// the request (instruction, 32 lane byte addresses, active mask) and, for instructions that
    /// write shared memory, each lane's data registers ([`Instruction::regs_per_lane`] of them,
    /// little-endian; ignored by loads).
    Shared {
        /// Instruction, lane byte addresses and active mask.
        request: WarpRequest,
        /// Each lane's source registers for stores; the source bytes for `cp.async`.
        data: LaneRegs,
    },
    /// `mma.sync.aligned.<shape>.row.col.<acc>.<dtype>.<dtype>.<acc>`: D = A·B + C on the
    /// fragments of [`MmaKind::fragment`]. Registers beyond the kind's count are ignored.
    Mma {
        /// Shape, input type of A and B, accumulator type of C and D (built with
        /// [`MmaKind::new`]; [`execute`] checks the combination again).
        kind: MmaKind,
        /// A fragments (packed 16-bit pairs or 8-bit quads, lowest bits = lower element index).
        a: LaneRegs,
        /// B fragments.
        b: LaneRegs,
        /// C fragments: f32 or s32 bit patterns, or two f16 per register (low half = lower
        /// element index).
        c: LaneRegs,
    },
}

impl WarpOp {
    /// A load (or any request, with zero data): `ld.shared`, `ldmatrix`.
    pub fn load(request: WarpRequest) -> WarpOp {
        WarpOp::Shared {
            request,
            data: [[0; 4]; WARP_SIZE],
        }
    }

    /// A request that writes `data` (`st.shared`, `stmatrix`, `cp.async`).
    pub fn store(request: WarpRequest, data: LaneRegs) -> WarpOp {
        WarpOp::Shared { request, data }
    }

    /// `ld.shared.<width>` at byte addresses `addrs` for the lanes of `mask`.
    pub fn ld(width: AccessWidth, addrs: [u32; WARP_SIZE], mask: u32) -> WarpOp {
        WarpOp::load(request(Instruction::Ld(width), addrs, mask))
    }

    /// `st.shared.<width>` of `data` at byte addresses `addrs` for the lanes of `mask`.
    pub fn st(width: AccessWidth, addrs: [u32; WARP_SIZE], mask: u32, data: LaneRegs) -> WarpOp {
        WarpOp::store(request(Instruction::St(width), addrs, mask), data)
    }

    /// `ldmatrix.<num>[.trans]` with row addresses `addrs` (lane `8i + r`: row `r` of matrix `i`).
    pub fn ldmatrix(num: MatrixCount, trans: bool, addrs: [u32; WARP_SIZE]) -> WarpOp {
        WarpOp::load(WarpRequest::new(
            Instruction::Ldmatrix { num, trans },
            addrs,
        ))
    }

    /// `stmatrix.<num>[.trans]` of `data` (lane `l`'s register `i` holds its fragment of matrix
    /// `i`) with row addresses `addrs`.
    pub fn stmatrix(
        num: MatrixCount,
        trans: bool,
        addrs: [u32; WARP_SIZE],
        data: LaneRegs,
    ) -> WarpOp {
        WarpOp::store(
            WarpRequest::new(Instruction::Stmatrix { num, trans }, addrs),
            data,
        )
    }

    /// The shared side of `cp.async`: each lane of `mask` writes its `kind.bytes()` source bytes
    /// (`src`, little-endian words), read from global byte address `src_addrs[lane]`, at its
    /// shared byte address `addrs[lane]`. The global addresses decide the cost (which 128-byte
    /// lines the lanes read: [`crate::sim::bank`]).
    pub fn cp_async(
        kind: CpAsyncKind,
        addrs: [u32; WARP_SIZE],
        mask: u32,
        src_addrs: [u64; WARP_SIZE],
        src: LaneRegs,
    ) -> WarpOp {
        let mut r = request(Instruction::CpAsync(kind), addrs, mask);
        r.global_addrs = Some(Box::new(src_addrs));
        WarpOp::store(r, src)
    }

    /// The shared-memory request, `None` for an mma.
    pub fn request(&self) -> Option<&WarpRequest> {
        match self {
            WarpOp::Shared { request, .. } => Some(request),
            WarpOp::Mma { .. } => None,
        }
    }

    /// `mma.sync` of `kind` on raw registers (A, B, C as [`MmaKind::pack`] lays them out);
    /// [`execute`] returns D's raw bits in [`WarpStep::regs`].
    pub fn mma(kind: MmaKind, regs: &RawRegs) -> WarpOp {
        WarpOp::Mma {
            kind,
            a: regs.a,
            b: regs.b.map(|r| [r[0], r[1], 0, 0]),
            c: regs.c,
        }
    }

    /// `mma.sync` with f32 accumulators on the registers of [`crate::sim::mma::pack`]
    /// (C as f32 values); D comes back as f32 bit patterns in [`WarpStep::regs`].
    ///
    /// # Errors
    /// A (shape, dtype) pair with no f32-accumulator form ([`MmaKind::new`]).
    pub fn mma_f32(
        shape: crate::sim::mma::MmaShape,
        dtype: crate::sim::mma::MmaDtype,
        regs: &crate::sim::mma::MmaRegs,
    ) -> Result<WarpOp, SimError> {
        let kind = MmaKind::new(shape, dtype, crate::sim::mma::MmaAcc::F32)?;
        Ok(WarpOp::mma(
            kind,
            &RawRegs {
                a: regs.a,
                b: regs.b,
                c: regs.c.map(|l| l.map(f32::to_bits)),
            },
        ))
    }
}

/// `mma.sync` on borrowed registers, as the PTX engine holds them: `a[r]` is A's register
/// `r`, its 32 lanes (lane 0 first, the register's bits in the low 32 bits of each lane's
/// word), likewise B and C; fragments and types as in [`WarpOp::Mma`]. Nothing is copied to
/// build one; [`execute`] returns D as an [`MmaStep`]. Registers beyond the kind's count are
/// ignored, missing ones read as 0.
#[derive(Clone, Copy, Debug)]
pub struct MmaLanes<'a> {
    /// Shape, input types, accumulator type (checked again by [`execute`]).
    pub kind: MmaKind,
    /// A registers.
    pub a: &'a [&'a [u64; WARP_SIZE]],
    /// B registers.
    pub b: &'a [&'a [u64; WARP_SIZE]],
    /// C registers.
    pub c: &'a [&'a [u64; WARP_SIZE]],
}

/// What an [`MmaLanes`] did: its D registers, register-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmaStep {
    /// `d[r][lane]`: D register `r` of `lane` (f32 or s32 bits, or two f16); registers from
    /// [`Self::regs`] on are 0.
    pub d: [[u32; WARP_SIZE]; 4],
    /// D registers per lane ([`MmaKind::regs`] of C).
    pub regs: usize,
}

impl MmaStep {
    /// D lane-major (`[lane][reg]`), as [`WarpStep::regs`] holds it.
    pub fn lane_regs(&self) -> LaneRegs {
        std::array::from_fn(|l| std::array::from_fn(|r| self.d[r][l]))
    }
}

/// A shared-memory load (`ld.shared`, `ldmatrix`) on a borrowed request, as the PTX engine
/// runs `ldmatrix` (an observer gets a [`WarpStep`] built from it): the same validation, cost
/// and registers as the load arm of
/// [`WarpOp::Shared`], without copying the request into the step, its registers
/// register-major (as the engine's register file holds them). A request whose instruction
/// writes shared memory is refused ([`SimError::Invalid`]): run it as a [`WarpOp`].
#[derive(Clone, Copy, Debug)]
pub struct LoadLanes<'a> {
    /// The request: instruction, lane byte addresses, active mask.
    pub request: &'a WarpRequest,
}

/// What a [`LoadLanes`] did: the cost and registers of the [`WarpStep`] the same request
/// gives as a [`WarpOp`], registers register-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadStep {
    /// Wavefronts and ideal count ([`WarpRequest::cost`]).
    pub cost: RequestCost,
    /// `d[r][lane]`: register `r` of `lane` (0 for registers from [`Self::regs_per_lane`] on
    /// and for lanes outside [`Self::reg_lanes`]).
    pub d: [[u32; WARP_SIZE]; 4],
    /// Registers written per lane ([`Instruction::regs_per_lane`]).
    pub regs_per_lane: usize,
    /// Lanes whose registers were written ([`register_lanes`]).
    pub reg_lanes: u32,
}

/// The [`LoadLanes`] arm: `ldmatrix` rows straight into register-major lanes, any other load
/// by [`load_by_segments`] (both the registers [`load`] gives, tested).
#[inline]
fn load_lanes(smem: &SharedMemory, req: &WarpRequest) -> Result<LoadStep, SimError> {
    let mut d = [[0u32; WARP_SIZE]; 4];
    let cost = load_lanes_into(smem, req, &mut d)?;
    Ok(LoadStep {
        cost,
        d,
        regs_per_lane: req.instruction.regs_per_lane(),
        reg_lanes: register_lanes(req),
    })
}

/// What a [`LoadLanes`] on `req` gives ([`LoadStep`]), its registers written to `d`
/// (`d[r][lane]`, as [`LoadStep::d`]) instead of returned: the PTX engine's `ldmatrix`, which
/// copies them into its register file, so that the 512 bytes are not moved through every
/// caller's return value (issue #31). Returns [`LoadStep::cost`]; the step's other fields are
/// `req.instruction.regs_per_lane()` and [`register_lanes`]`(req)`.
///
/// # Errors
/// As [`execute`]'s for a [`LoadLanes`]; `d` is then untouched.
#[inline]
pub fn load_lanes_into(
    smem: &SharedMemory,
    req: &WarpRequest,
    d: &mut [[u32; WARP_SIZE]; 4],
) -> Result<RequestCost, SimError> {
    if req.instruction.is_store() {
        return Err(SimError::Invalid(format!(
            "{} writes shared memory: it is not a load",
            req.instruction
        )));
    }
    let cost = check_request(req, &smem.config())?;
    match req.instruction {
        Instruction::Ldmatrix { num, trans } => {
            ldmatrix_lanes(smem, &req.lane_byte_offsets, num.count(), trans, d);
        }
        _ => {
            let r = load_by_segments(smem, req);
            *d = std::array::from_fn(|i| std::array::from_fn(|l| r[l][i]));
        }
    }
    Ok(cost)
}

/// The registers of a validated `ldmatrix.x<num>[.trans]` (row `r` of matrix `m` at
/// `addrs[8m + r]`), register-major, written to `d` (registers from `num` on set to 0):
/// [`ldmatrix::lane_registers`] transposed. Without
/// `.trans` lane `4g + t`'s register `m` is word `t` of row `g` (its b16 elements `2t`,
/// `2t + 1`), so register `m` is rows `8m .. 8m + 8` end to end; with `.trans` it holds
/// element `g` of rows `2t` and `2t + 1`.
fn ldmatrix_lanes(
    smem: &SharedMemory,
    addrs: &[u32; WARP_SIZE],
    num: usize,
    trans: bool,
    d: &mut [[u32; WARP_SIZE]; 4],
) {
    for dm in d.iter_mut().skip(num.min(4)) {
        *dm = [0; WARP_SIZE];
    }
    for (m, dm) in d.iter_mut().enumerate().take(num.min(4)) {
        let rows: [[u32; 4]; 8] = std::array::from_fn(|r| smem.load_row32(addrs[8 * m + r]));
        if trans {
            // Lane `4g + t` holds element `g` of rows `2t`, `2t + 1`: lanes `4g .. 4g + 3` are
            // column `g` of the 8 x 8 matrix, so register `m` is its transpose, row-major.
            for (q, col) in dm.chunks_exact_mut(4).zip(&transpose_b16(&rows)) {
                q.copy_from_slice(col);
            }
        } else {
            for (q, row) in dm.chunks_exact_mut(4).zip(&rows) {
                q.copy_from_slice(row);
            }
        }
    }
}

/// The transpose of an 8 x 8 matrix of b16 elements, rows as four little-endian words each
/// (element `c` of row `r`: bits `16(c % 2)..` of `rows[r][c / 2]`): `out[c]` is column `c`,
/// element `r` of it row `r`'s. SSE2 (part of x86-64) where there is one, else element by
/// element (the same bits, tested).
fn transpose_b16(rows: &[[u32; 4]; 8]) -> [[u32; 4]; 8] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: unaligned 16-byte loads from and stores to `[u32; 4]` arrays; SSE2 is part
        // of every x86-64 CPU.
        unsafe {
            let r: [__m128i; 8] = std::array::from_fn(|i| _mm_loadu_si128(rows[i].as_ptr().cast()));
            let a = [
                _mm_unpacklo_epi16(r[0], r[1]),
                _mm_unpackhi_epi16(r[0], r[1]),
                _mm_unpacklo_epi16(r[2], r[3]),
                _mm_unpackhi_epi16(r[2], r[3]),
                _mm_unpacklo_epi16(r[4], r[5]),
                _mm_unpackhi_epi16(r[4], r[5]),
                _mm_unpacklo_epi16(r[6], r[7]),
                _mm_unpackhi_epi16(r[6], r[7]),
            ];
            let b = [
                _mm_unpacklo_epi32(a[0], a[2]),
                _mm_unpackhi_epi32(a[0], a[2]),
                _mm_unpacklo_epi32(a[1], a[3]),
                _mm_unpackhi_epi32(a[1], a[3]),
                _mm_unpacklo_epi32(a[4], a[6]),
                _mm_unpackhi_epi32(a[4], a[6]),
                _mm_unpacklo_epi32(a[5], a[7]),
                _mm_unpackhi_epi32(a[5], a[7]),
            ];
            let c = [
                _mm_unpacklo_epi64(b[0], b[4]),
                _mm_unpackhi_epi64(b[0], b[4]),
                _mm_unpacklo_epi64(b[1], b[5]),
                _mm_unpackhi_epi64(b[1], b[5]),
                _mm_unpacklo_epi64(b[2], b[6]),
                _mm_unpackhi_epi64(b[2], b[6]),
                _mm_unpacklo_epi64(b[3], b[7]),
                _mm_unpackhi_epi64(b[3], b[7]),
            ];
            let mut out = [[0u32; 4]; 8];
            for (o, v) in out.iter_mut().zip(c) {
                _mm_storeu_si128(o.as_mut_ptr().cast(), v);
            }
            out
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    transpose_b16_scalar(rows)
}

/// [`transpose_b16`] element by element (every target; tested against the SSE2 one).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn transpose_b16_scalar(rows: &[[u32; 4]; 8]) -> [[u32; 4]; 8] {
    let half = |row: &[u32; 4], col: usize| (row[col / 2] >> (16 * (col % 2))) & 0xffff;
    std::array::from_fn(|c| {
        std::array::from_fn(|w| half(&rows[2 * w], c) | half(&rows[2 * w + 1], c) << 16)
    })
}

fn request(instruction: Instruction, addrs: [u32; WARP_SIZE], mask: u32) -> WarpRequest {
    WarpRequest {
        instruction,
        lane_byte_offsets: addrs,
        active_mask: mask,
        global_addrs: None,
    }
}

/// What one [`WarpOp`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpStep {
    /// The shared-memory request (`None` for an mma).
    pub request: Option<WarpRequest>,
    /// Its wavefronts and ideal count ([`WarpRequest::cost`]); zero for an mma. For a `cp.async`
    /// the model cannot cost (`.cg`, or no global source addresses) the data still move and
    /// `cost.not_modelled` says why: show that, not the zero counts.
    pub cost: RequestCost,
    /// Registers written, per lane: loaded data (ld, ldmatrix) or D (mma: f32 bit patterns, s32
    /// for s8/u8 inputs).
    pub regs: LaneRegs,
    /// How many of each lane's registers were written (0 for stores).
    pub regs_per_lane: usize,
    /// Lanes whose registers were written (bit `i` = lane `i`).
    pub reg_lanes: u32,
    /// Stores: the address lanes whose bytes were written; see [`Self::writes`].
    pub stored_lanes: u32,
}

impl WarpStep {
    /// The shared-memory byte ranges written, one per address lane of a store, lane order
    /// (ranges of different lanes may coincide or overlap); empty for loads and mma.
    pub fn writes(&self) -> impl Iterator<Item = (usize, Range<u32>)> + '_ {
        let req = self.request.as_ref();
        (0..WARP_SIZE)
            .filter(|&l| self.stored_lanes >> l & 1 == 1)
            .filter_map(move |l| {
                let r = req?;
                let a = r.lane_byte_offsets[l];
                Some((l, a..a + r.instruction.bytes_per_address()))
            })
    }
}

/// `len` bytes at byte `offset` of the access whose address lane `addr_lane` gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The lane (0-31) whose address operand the bytes are at.
    pub addr_lane: u8,
    /// Bytes from that address.
    pub offset: u8,
    /// Length in bytes (1-4).
    pub len: u8,
}

/// The bytes of one register: up to two [`Segment`]s, the first holding its low bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegSegments {
    segs: [Segment; 2],
    n: usize,
}

impl RegSegments {
    const EMPTY: RegSegments = RegSegments {
        segs: [Segment {
            addr_lane: 0,
            offset: 0,
            len: 0,
        }; 2],
        n: 0,
    };

    /// The segments, low bytes first (empty when the register does not exist).
    pub fn as_slice(&self) -> &[Segment] {
        &self.segs[..self.n]
    }

    fn push(&mut self, s: Segment) {
        // Merge with the previous segment when the bytes continue it.
        if let Some(p) = self.segs[..self.n].last_mut()
            && p.addr_lane == s.addr_lane
            && p.offset + p.len == s.offset
        {
            p.len += s.len;
            return;
        }
        self.segs[self.n] = s;
        self.n += 1;
    }
}

/// Where register `reg` of `lane` lives in shared memory for `ins` (see the module docs): the
/// bytes a load puts in it, or a store takes from it. Empty for `reg >= ins.regs_per_lane()`.
///
/// Source: PTX ISA §9.7.9.8 (ld, little-endian vectors), §9.7.14.5.15/16 (ldmatrix/stmatrix
/// fragments, via [`crate::sim::ldmatrix::fragment`]).
pub fn register_segments(ins: Instruction, lane: usize, reg: usize) -> RegSegments {
    let mut out = RegSegments::EMPTY;
    if lane >= WARP_SIZE || reg >= ins.regs_per_lane() {
        return out;
    }
    match ins {
        Instruction::Ldmatrix { trans, .. } | Instruction::Stmatrix { trans, .. } => {
            for half in 0..2 {
                let e = ldmatrix::fragment(trans, lane as u32, reg as u32, half);
                out.push(Segment {
                    addr_lane: ldmatrix::address_lane(e.matrix, e.row) as u8,
                    offset: (2 * e.col) as u8,
                    len: 2,
                });
            }
        }
        Instruction::Ld(_) | Instruction::St(_) | Instruction::CpAsync(_) => {
            let first = 4 * reg as u32;
            out.push(Segment {
                addr_lane: lane as u8,
                offset: first as u8,
                len: (ins.bytes_per_address() - first).min(4) as u8,
            });
        }
    }
    out
}

/// The shared-memory byte address of byte `byte` (0-3) of register `reg` of `lane` in request
/// `req` ([`register_segments`] applied to the lanes' addresses): where a store writes that
/// byte, or where a load takes it from. `None` when the register or byte does not exist (or the
/// address overflows). For `stmatrix`, half `h` of a register is bytes `2h, 2h + 1`:
/// `register_byte_address(req, l, r, 2 * h)` is where lane `l`'s register `r`, half `h` lands.
pub fn register_byte_address(req: &WarpRequest, lane: usize, reg: usize, byte: u32) -> Option<u32> {
    let mut skip = byte;
    for s in register_segments(req.instruction, lane, reg).as_slice() {
        if skip < s.len as u32 {
            return req.lane_byte_offsets[s.addr_lane as usize].checked_add(s.offset as u32 + skip);
        }
        skip -= s.len as u32;
    }
    None
}

/// Validates `req` against shared memory of `smem` and returns its cost: what [`execute`] does
/// before it moves any data, for callers that have no data (the counts programs).
///
/// # Errors
/// Those of [`WarpRequest::validate`]: [`SimError::Misaligned`], [`SimError::OutOfRange`] (the
/// whole access must fit; computed without wrapping), [`SimError::PartialLdmatrix`] (ldmatrix
/// and stmatrix need all 32 lanes).
pub fn check_request(
    req: &WarpRequest,
    smem: &SharedMemoryConfig,
) -> Result<RequestCost, SimError> {
    req.validate(smem)?;
    Ok(req.cost())
}

/// The warp arm of [`execute`].
fn warp(smem: &mut SharedMemory, op: &WarpOp) -> Result<WarpStep, SimError> {
    match op {
        WarpOp::Shared { request, data } if request.instruction.is_store() => {
            store(smem, request, data)
        }
        WarpOp::Shared { request, .. } => load(smem, request),
        WarpOp::Mma { kind, a, b, c } => mma_step(*kind, a, b, c),
    }
}

/// Lanes that hold the instruction's registers (destinations of a load, sources of a store):
/// all 32 for ldmatrix/stmatrix, the active lanes otherwise.
pub fn register_lanes(req: &WarpRequest) -> u32 {
    if req.instruction.is_warp_collective() {
        u32::MAX
    } else {
        req.active_mask
    }
}

/// A load (any instruction that does not write shared memory), through a shared reference.
/// `ldmatrix` is read a row at a time ([`ldmatrix::lane_registers`]: its 8·num 16-byte rows,
/// then every lane's registers), any other load register by register
/// ([`register_segments`]); both give the same registers (tested).
pub(crate) fn load(smem: &SharedMemory, req: &WarpRequest) -> Result<WarpStep, SimError> {
    let cost = check_request(req, &smem.config())?;
    let ins = req.instruction;
    let regs = match ins {
        Instruction::Ldmatrix { num, trans } => {
            let n = num.count();
            let mut rows = [[0u16; 8]; WARP_SIZE];
            for (row, &a) in rows.iter_mut().zip(&req.lane_byte_offsets).take(8 * n) {
                *row = smem.load_row16(a);
            }
            ldmatrix::lane_registers(&rows, n, trans)
        }
        _ => load_by_segments(smem, req),
    };
    Ok(WarpStep {
        request: Some(req.clone()),
        cost,
        regs,
        regs_per_lane: ins.regs_per_lane(),
        reg_lanes: register_lanes(req),
        stored_lanes: 0,
    })
}

/// The registers of a validated load, each from its [`register_segments`].
fn load_by_segments(smem: &SharedMemory, req: &WarpRequest) -> LaneRegs {
    let ins = req.instruction;
    let n = ins.regs_per_lane();
    let mut regs = [[0u32; 4]; WARP_SIZE];
    let mut m = register_lanes(req);
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        for (reg, out) in regs[lane].iter_mut().enumerate().take(n) {
            let mut v = 0u32;
            let mut shift = 0u32;
            for s in register_segments(ins, lane, reg).as_slice() {
                let addr = req.lane_byte_offsets[s.addr_lane as usize] + s.offset as u32;
                v |= smem
                    .load_le(addr, s.len as usize)
                    .checked_shl(shift)
                    .unwrap_or(0);
                shift += 8 * s.len as u32;
            }
            *out = v;
        }
    }
    regs
}

/// A request that writes shared memory. `st.shared` and `cp.async` write each active lane's
/// registers as `bytes_per_address` little-endian bytes at its address (what their
/// [`register_segments`] say: register `r` is bytes `4r ..` of the lane's own access), at once;
/// `stmatrix` register by register through its segments. Lanes in order (the higher wins).
fn store(
    smem: &mut SharedMemory,
    req: &WarpRequest,
    data: &LaneRegs,
) -> Result<WarpStep, SimError> {
    let cost = store_into(smem, req, data)?;
    Ok(store_step(req, cost))
}

/// The [`WarpStep`] of the store `req` that cost `cost` (what [`execute`] returns for it).
pub fn store_step(req: &WarpRequest, cost: RequestCost) -> WarpStep {
    WarpStep {
        request: Some(req.clone()),
        cost,
        regs: [[0; 4]; WARP_SIZE],
        regs_per_lane: 0,
        reg_lanes: 0,
        stored_lanes: req.address_lanes(),
    }
}

/// The store arm of [`execute`] on a borrowed request: validates `req` (an instruction that
/// writes shared memory: `st.shared`, `stmatrix`, `cp.async`), writes `data` (each lane's
/// registers, little-endian) and returns the cost, without building the [`WarpStep`] (the PTX
/// engine's `cp.async`, which keeps one request between instructions: issue #31). The same
/// validation, cost and bytes as [`execute`] of [`WarpOp::store`]`(req, data)`.
///
/// # Errors
/// As [`execute`]'s ([`WarpRequest::validate`]); a request whose instruction does not write
/// shared memory is refused ([`SimError::Invalid`]). Shared memory is then untouched.
pub fn store_into(
    smem: &mut SharedMemory,
    req: &WarpRequest,
    data: &LaneRegs,
) -> Result<RequestCost, SimError> {
    if !req.instruction.is_store() {
        return Err(SimError::Invalid(format!(
            "{} does not write shared memory: it is not a store",
            req.instruction
        )));
    }
    let cost = check_request(req, &smem.config())?;
    match req.instruction {
        Instruction::Stmatrix { .. } => store_by_segments(smem, req, data),
        ins => {
            let width = ins.bytes_per_address() as usize;
            let mut m = register_lanes(req);
            while m != 0 {
                let lane = m.trailing_zeros() as usize;
                m &= m - 1;
                let mut bytes = [0u8; 16];
                for (b, w) in bytes.chunks_exact_mut(4).zip(&data[lane]) {
                    b.copy_from_slice(&w.to_le_bytes());
                }
                smem.store_bytes(req.lane_byte_offsets[lane], &bytes[..width.min(16)]);
            }
        }
    }
    Ok(cost)
}

/// The writes of a validated store, each register through its [`register_segments`].
fn store_by_segments(smem: &mut SharedMemory, req: &WarpRequest, data: &LaneRegs) {
    let ins = req.instruction;
    let n = ins.regs_per_lane();
    let mut m = register_lanes(req);
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        for (reg, &v) in data[lane].iter().enumerate().take(n) {
            let mut shift = 0u32;
            for s in register_segments(ins, lane, reg).as_slice() {
                let addr = req.lane_byte_offsets[s.addr_lane as usize] + s.offset as u32;
                smem.store_le(addr, s.len as usize, v.checked_shr(shift).unwrap_or(0));
                shift += 8 * s.len as u32;
            }
        }
    }
}

/// The [`WarpOp::Mma`] arm: [`mma_lanes`] on the registers as lane arrays.
fn mma_step(kind: MmaKind, a: &LaneRegs, b: &LaneRegs, c: &LaneRegs) -> Result<WarpStep, SimError> {
    let by_reg = |x: &LaneRegs| -> [[u64; WARP_SIZE]; 4] {
        std::array::from_fn(|r| std::array::from_fn(|l| u64::from(x[l][r])))
    };
    let (ra, rb, rc) = (by_reg(a), by_reg(b), by_reg(c));
    let step = mma_lanes(MmaLanes {
        kind,
        a: &ra.each_ref(),
        b: &rb.each_ref()[..2],
        c: &rc.each_ref(),
    })?;
    Ok(WarpStep {
        request: None,
        cost: RequestCost::default(),
        regs: step.lane_regs(),
        regs_per_lane: step.regs,
        reg_lanes: u32::MAX,
        stored_lanes: 0,
    })
}

/// The [`MmaLanes`] arm: the float forms straight from the lane arrays
/// (`crate::sim::mma_fast`), every other form by the reference on a copy.
#[inline]
fn mma_lanes(op: MmaLanes<'_>) -> Result<MmaStep, SimError> {
    let mut d = [[0u32; WARP_SIZE]; 4];
    let regs = mma_lanes_into(op, &mut d)?;
    Ok(MmaStep { d, regs })
}

/// What executing an [`MmaLanes`] gives ([`MmaStep`]), its D registers written to `d`
/// (`d[r][lane]`, registers from the returned count on untouched) instead of returned: the
/// PTX engine's `mma.sync`, which copies D into its register file, so that the 512 bytes of D
/// are not moved through every caller's return value. Returns [`MmaStep::regs`].
///
/// # Errors
/// As [`execute`]'s for an [`MmaLanes`] (a form the model does not cover); `d` is then
/// untouched.
#[inline]
pub fn mma_lanes_into(op: MmaLanes<'_>, d: &mut [[u32; WARP_SIZE]; 4]) -> Result<usize, SimError> {
    let k = op.kind;
    let kind = MmaKind::with_types(k.shape, k.dtype, k.btype, k.acc, k.satfinite)?;
    if !crate::sim::mma_fast::mma_d_into(kind, op.a, op.b, op.c, d) {
        let mut regs = RawRegs::zero();
        for (o, srcs) in [(Operand::A, op.a), (Operand::B, op.b), (Operand::C, op.c)] {
            for (reg, lanes) in srcs.iter().enumerate().take(kind.regs(o) as usize) {
                for (lane, &x) in lanes.iter().enumerate() {
                    *regs.slot(o, lane as u32, reg as u32) = x as u32;
                }
            }
        }
        let r = mma_d_reference(kind, &regs);
        *d = std::array::from_fn(|i| std::array::from_fn(|l| r[l][i]));
    }
    Ok(kind.regs(Operand::C) as usize)
}

/// The tensor-core arithmetic of `mma.sync`, the reference (on `ndarray` matrices) that every
/// form falls back to and the fast path equals bit for bit (and is tested against): every
/// lane's D registers (raw bits) in the C/D fragment layout.
/// Each D element is C plus the K products, summed in f64 and rounded once to
/// the accumulator type (f32 or f16, to nearest even); integer inputs sum exactly and wrap
/// modulo 2^32 into s32, or with `.satfinite` clamp to [-2^31, 2^31 - 1] (both measured on the
/// H200: `tests/data/ptx_mma/`). tf32 inputs are read without their 13 low mantissa bits. NaN and infinite inputs propagate as
/// IEEE arithmetic does. The hardware accumulates at least to f32 precision for f16/bf16 inputs
/// (measured within 1e-6 of f64 on N(0,1) inputs, exact on small integers); FP8 tensor cores are
/// reported to keep fewer bits while accumulating, which this model does not reproduce.
pub(crate) fn mma_d_reference(kind: MmaKind, regs: &RawRegs) -> [[u32; 4]; 32] {
    let a = kind.unpack(Operand::A, regs);
    let b = kind.unpack(Operand::B, regs);
    let c = kind.unpack(Operand::C, regs);
    let (_, _, k) = kind.shape.mnk();
    let mut d = RawRegs::zero();
    let bits = kind.elem_bits(Operand::C);
    for lane in 0..32u32 {
        for reg in 0..kind.regs(Operand::C) {
            let mut word = 0u32;
            for pos in 0..kind.elems_per_reg(Operand::C) {
                let (i, j) = kind.fragment(Operand::C, lane, reg, pos);
                let (i, j) = (i as usize, j as usize);
                let v = if kind.acc == MmaAcc::S32 {
                    let dot: i64 = (0..k as usize)
                        .map(|kk| a[[i, kk]] as i64 * b[[kk, j]] as i64)
                        .sum();
                    let sum = (c[[i, j]] as i64).wrapping_add(dot);
                    if kind.satfinite {
                        sum.clamp(i32::MIN as i64, i32::MAX as i64) as f64
                    } else {
                        sum as f64
                    }
                } else {
                    (0..k as usize).fold(c[[i, j]], |s, kk| s + a[[i, kk]] * b[[kk, j]])
                };
                let mask = u32::MAX >> (32 - bits);
                word |= (kind.acc.encode(v) & mask) << (bits * pos);
            }
            *d.slot(Operand::C, lane, reg) = word;
        }
    }
    d.c
}

// ---------------------------------------------------------------------------------------------
// The one entry point, at every scope.
// ---------------------------------------------------------------------------------------------

mod sealed {
    use super::{SharedMemory, SimError};

    /// An op of one scope: its executor arm (in this file) and the step it returns.
    pub trait Sealed {
        type Step;
        fn run(self, smem: &mut SharedMemory) -> Result<Self::Step, SimError>;
    }
}

/// An instruction [`execute`] runs: `&`[`WarpOp`], [`MmaLanes`] or [`LoadLanes`] (warp; the
/// second an `mma.sync` on borrowed registers, the same arm as [`WarpOp::Mma`], the third a
/// shared load on a borrowed request, the load arm of [`WarpOp::Shared`]), [`WgmmaOp`]
/// (warpgroup) or [`BulkOp`] (bulk). Sealed: a new instruction is a variant of one of these and an arm here,
/// never a new executor.
pub trait Op: sealed::Sealed {}

impl sealed::Sealed for &WarpOp {
    type Step = WarpStep;
    fn run(self, smem: &mut SharedMemory) -> Result<WarpStep, SimError> {
        warp(smem, self)
    }
}
impl Op for &WarpOp {}

impl sealed::Sealed for MmaLanes<'_> {
    type Step = MmaStep;
    #[inline]
    fn run(self, _smem: &mut SharedMemory) -> Result<MmaStep, SimError> {
        mma_lanes(self)
    }
}
impl Op for MmaLanes<'_> {}

impl sealed::Sealed for LoadLanes<'_> {
    type Step = LoadStep;
    #[inline]
    fn run(self, smem: &mut SharedMemory) -> Result<LoadStep, SimError> {
        load_lanes(smem, self.request)
    }
}
impl Op for LoadLanes<'_> {}

impl sealed::Sealed for WgmmaOp<'_> {
    type Step = WgmmaStep;
    fn run(self, smem: &mut SharedMemory) -> Result<WgmmaStep, SimError> {
        warpgroup(smem, self)
    }
}
impl Op for WgmmaOp<'_> {}

impl sealed::Sealed for BulkOp<'_> {
    type Step = BulkStep;
    fn run(self, smem: &mut SharedMemory) -> Result<BulkStep, SimError> {
        bulk(smem, self)
    }
}
impl Op for BulkOp<'_> {}

/// Executes one instruction of any scope on `smem` and returns what it did: a [`WarpStep`]
/// for a `&WarpOp`, an [`MmaStep`] for an [`MmaLanes`], a [`LoadStep`] for a [`LoadLanes`], a [`WgmmaStep`] for a [`WgmmaOp`], a [`BulkStep`] for a [`BulkOp`].
///
/// Warp ops: loads fill [`WarpStep::regs`]; stores write `smem` in lane order, then register
/// order (PTX leaves undefined which of two lanes storing to one address wins; here the higher
/// lane does). An mma touches no memory. Nothing is written when an error is returned.
/// Warpgroup and bulk ops: see [`WgmmaOp`] and [`BulkOp`].
///
/// # Errors
/// Warp ops: those of [`check_request`]; for an mma, a kind that [`MmaKind::new`] refuses.
/// Warpgroup: a form [`WgmmaKind::new`] refuses, an `imm-trans`/`imm-scale` the ISA forbids,
/// an accumulator slice of the wrong length, a descriptor base offset other than 0 (not
/// modelled), operand bytes outside `smem`. Bulk: the tensor map and copy rules of
/// [`crate::sim::tma`], shared-memory ranges outside `smem`, and the [`GlobalMemory`]'s errors.
pub fn execute<O: Op>(smem: &mut SharedMemory, op: O) -> Result<O::Step, SimError> {
    sealed::Sealed::run(op, smem)
}

// ---------------------------------------------------------------------------------------------
// Global memory.
// ---------------------------------------------------------------------------------------------

/// Global memory as the bulk ops see it: bytes at 64-bit addresses. The PTX engine implements
/// it over its allocations; [`FlatGlobal`] is one contiguous allocation (tests, `tilelab sim`).
pub trait GlobalMemory {
    /// Fills `out` with the bytes at `addr..addr + out.len()`.
    ///
    /// # Errors
    /// An address range that is not mapped (one line naming it).
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), SimError>;
    /// Writes `data` at `addr..addr + data.len()`.
    ///
    /// # Errors
    /// An address range that is not mapped.
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), SimError>;
}

/// One global allocation of `bytes.len()` bytes at byte address `base`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlatGlobal {
    /// Address of byte 0.
    pub base: u64,
    /// The bytes.
    pub bytes: Vec<u8>,
}

impl FlatGlobal {
    fn range(&self, addr: u64, len: usize) -> Result<Range<usize>, SimError> {
        let start = addr
            .checked_sub(self.base)
            .and_then(|o| usize::try_from(o).ok());
        match start.and_then(|s| Some(s..s.checked_add(len)?)) {
            Some(r) if r.end <= self.bytes.len() => Ok(r),
            _ => Err(SimError::Invalid(format!(
                "global address range {addr:#x}+{len} is outside the allocation {:#x}..{:#x}",
                self.base,
                self.base.saturating_add(self.bytes.len() as u64)
            ))),
        }
    }
}

impl GlobalMemory for FlatGlobal {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), SimError> {
        let r = self.range(addr, out.len())?;
        out.copy_from_slice(&self.bytes[r]);
        Ok(())
    }
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), SimError> {
        let r = self.range(addr, data.len())?;
        self.bytes[r].copy_from_slice(data);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Warpgroup: wgmma.mma_async.
// ---------------------------------------------------------------------------------------------

/// Where `wgmma`'s A comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WgmmaA<'a> {
    /// Shared memory through a matrix descriptor (decoded with [`MatrixDescriptor::decode`]).
    Desc(MatrixDescriptor),
    /// Registers: `regs[thread][r]`, 4 per thread, in [`WgmmaKind::a_fragment`]'s layout.
    Regs(&'a [[u32; 4]; WARPGROUP_THREADS]),
}

/// One `wgmma.mma_async.sync.aligned` of a warpgroup: `D = scale_d ? D + (sa·A)(sb·B) :
/// (sa·A)(sb·B)`, A 64×K, B K×N (read N×K through B's descriptor), D 64×N in registers.
#[derive(Debug)]
pub struct WgmmaOp<'a> {
    /// The form (N, D type, A and B types, `.satfinite`), built with [`WgmmaKind::new`].
    pub kind: WgmmaKind,
    /// A.
    pub a: WgmmaA<'a>,
    /// B's descriptor.
    pub b: MatrixDescriptor,
    /// The `scale-d` predicate: false means D = A·B (D's old value is not read).
    pub scale_d: bool,
    /// `imm-scale-a`: 1 or -1 (integer forms: 1, they have no imm-scale).
    pub scale_a: i32,
    /// `imm-scale-b`: 1 or -1.
    pub scale_b: i32,
    /// `imm-trans-a`: A MN-major (f16/bf16 with A from a descriptor only).
    pub trans_a: bool,
    /// `imm-trans-b`: B MN-major (f16/bf16 only).
    pub trans_b: bool,
    /// D, thread-major: register `r` of thread `t` at `d[t * kind.d_regs() + r]` (f32 or s32
    /// bits, or two f16 per register, low half first); read as C, overwritten with D.
    pub d: &'a mut [u32],
    /// Compute D. `false`: counts only — the form, the descriptors and every operand byte's
    /// address are checked and the step's wavefronts and bytes are the same, but D is left as
    /// it is and no [`CoreMatrixRead`]s are listed (a run whose D values are proven to reach no
    /// address, branch or guard: `crate::ptx::dataflow`).
    pub values: bool,
}

impl<'a> WgmmaOp<'a> {
    /// `wgmma.mma_async` with f32 accumulators (`D += A·B`, scale-d 1, imm-scales 1), f16 or
    /// bf16 inputs, A from `a` (a descriptor with its major: MN-major is imm-trans-a 1, or
    /// registers), B through `b` with `b_major`; `d` thread-major, `N/2` f32 bit patterns per
    /// thread of the 128. [`execute`] checks the form.
    pub fn f32_acc(
        n: u32,
        dtype: crate::sim::mma::MmaDtype,
        a: &'a crate::sim::wgmma::ASource,
        b: MatrixDescriptor,
        b_major: Major,
        d: &'a mut [u32],
    ) -> WgmmaOp<'a> {
        use crate::sim::wgmma::ASource;
        let (a, trans_a) = match a {
            ASource::Smem(desc, major) => (WgmmaA::Desc(*desc), *major == Major::Mn),
            ASource::Registers(regs) => (WgmmaA::Regs(regs), false),
        };
        WgmmaOp {
            kind: WgmmaKind::f32_of(n, dtype),
            a,
            b,
            scale_d: true,
            scale_a: 1,
            scale_b: 1,
            trans_a,
            trans_b: b_major == Major::Mn,
            d,
            values: true,
        }
    }
}

/// One core matrix (8 rows × 16 bytes) a `wgmma` read from shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CoreMatrixRead {
    /// 0 for A, 1 for B.
    pub operand: u8,
    /// First M (A) or N (B) index it holds.
    pub mn: u32,
    /// First K index (elements).
    pub k: u32,
    /// Byte addresses of its 8 rows.
    pub rows: [u32; 8],
}

impl CoreMatrixRead {
    /// Wavefronts its 8 rows would take read as one 8-address unit (an `ldmatrix .x1`-like
    /// request): a layout diagnostic, not what the H200 counts ([`WgmmaStep::wavefronts`]
    /// counts one per core matrix, [`crate::sim::instr::CostRule::CoreMatrices`]).
    pub fn wavefronts(&self) -> u32 {
        let x1 = Instruction::Ldmatrix {
            num: MatrixCount::X1,
            trans: false,
        };
        WarpRequest::new(x1, std::array::from_fn(|l| self.rows[l % 8]))
            .cost()
            .wavefronts
    }
}

/// What one [`WgmmaOp`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WgmmaStep {
    /// Core matrices read, A's first (none for A from registers), in (mn, k) order.
    pub core_matrices: Vec<CoreMatrixRead>,
    /// Shared-memory bytes read for A (0 from registers) and B.
    pub smem_bytes: [u32; 2],
    /// Operand wavefronts as the H200 counts them: one per core matrix read from shared memory,
    /// i.e. (A bytes from shared memory + B bytes) / 128, never conflicted
    /// (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma`; tests/data/hopper_probes,
    /// tests/data/ptx_hopper/README.md, [`crate::sim::instr::CostRule::CoreMatrices`]).
    pub wavefronts: u32,
    /// Ideal wavefronts (one per core matrix).
    pub ideal: u32,
}

fn read_elem(smem: &SharedMemory, addr: u32, bytes: u32) -> Result<u32, SimError> {
    Ok(match bytes {
        1 => u32::from(smem.read_u8(addr)?),
        2 => u32::from(smem.read_u16(addr)?),
        _ => smem.read_u32(addr)?,
    })
}

/// [`warpgroup_on`] without values (`op.values` false): the same checks, wavefronts, bytes
/// and errors. Each core-matrix row is 16 contiguous bytes at a 16-byte boundary and the
/// operand's elements fill its rows, so the elements are read (in the computed run's order,
/// for its error) only when a row ends past shared memory (one range from 0).
fn warpgroup_counts(
    smem: &SharedMemory,
    op: &WgmmaOp,
    mut step: WgmmaStep,
) -> Result<WgmmaStep, SimError> {
    let kind = op.kind;
    let kk = kind.k();
    let major = |t: bool| if t { Major::Mn } else { Major::K };
    let mut operand = |which: u8, d: &MatrixDescriptor, maj: Major, t: WgmmaType, rows: u32| {
        let e = t.bytes();
        let kstep = match maj {
            Major::K => 16 / e,
            Major::Mn => 8,
        };
        let mut past_end = false;
        for mn in (0..rows).step_by(8) {
            for k in (0..kk).step_by(kstep as usize) {
                for r in d.core_matrix_rows_of(maj, mn, k, e) {
                    past_end |= u64::from(r) + 16 > u64::from(smem.len());
                }
                step.wavefronts += 1;
                step.ideal += 1;
            }
        }
        if past_end {
            // The computed run's reads in its order, for its error (the first element out).
            for mn in 0..rows {
                for k in 0..kk {
                    read_elem(smem, d.element_address_of(maj, mn, k, e), e)?;
                }
            }
        }
        step.smem_bytes[which as usize] = rows * kk * e;
        Ok::<(), SimError>(())
    };
    if let WgmmaA::Desc(d) = op.a {
        operand(0, &d, major(op.trans_a), kind.a, 64)?;
    }
    operand(1, &op.b, major(op.trans_b), kind.b, kind.n)?;
    Ok(step)
}

fn check_wgmma(op: &WgmmaOp) -> Result<(), SimError> {
    let k = WgmmaKind::new(
        op.kind.n,
        op.kind.acc,
        op.kind.a,
        op.kind.b,
        op.kind.satfinite,
    )?;
    let bad = |m: String| Err(SimError::Invalid(m));
    for (name, s) in [("imm-scale-a", op.scale_a), ("imm-scale-b", op.scale_b)] {
        if k.allows_scale() && s != 1 && s != -1 {
            return bad(format!("wgmma {name} {s} is not allowed; allowed: 1, -1"));
        }
        if !k.allows_scale() && s != 1 {
            return bad(format!(
                "wgmma {name} {s} with .{} inputs is not allowed; the integer forms take no imm-scale",
                k.a.name()
            ));
        }
    }
    for (name, t) in [("imm-trans-a", op.trans_a), ("imm-trans-b", op.trans_b)] {
        if t && !k.allows_transpose() {
            return bad(format!(
                "wgmma {name} 1 with .{} inputs is not allowed; allowed: 0 (only f16 and bf16 operands may be MN-major)",
                k.a.name()
            ));
        }
    }
    if op.trans_a && matches!(op.a, WgmmaA::Regs(_)) {
        return bad(
            "wgmma imm-trans-a is not allowed with A from registers; allowed: A from a descriptor"
                .into(),
        );
    }
    let descs = match op.a {
        WgmmaA::Desc(d) => [Some(d), Some(op.b)],
        WgmmaA::Regs(_) => [None, Some(op.b)],
    };
    for d in descs.into_iter().flatten() {
        if d.base_offset != 0 {
            return bad(format!(
                "descriptor base offset {} is not modelled; allowed: 0 (tiles aligned to the swizzle repeat)",
                d.base_offset
            ));
        }
    }
    let want = WARPGROUP_THREADS * k.d_regs() as usize;
    if op.d.len() != want {
        return bad(format!(
            "accumulators must be 128 threads x {} registers for N = {} .{} ({want} words); given {}",
            k.d_regs(),
            k.n,
            k.acc.name(),
            op.d.len()
        ));
    }
    Ok(())
}

fn warpgroup(smem: &mut SharedMemory, op: WgmmaOp) -> Result<WgmmaStep, SimError> {
    warpgroup_on(smem, op)
}

/// The warpgroup arm (reads shared memory only).
fn warpgroup_on(smem: &SharedMemory, mut op: WgmmaOp) -> Result<WgmmaStep, SimError> {
    check_wgmma(&op)?;
    let kind = op.kind;
    let (kk, n) = (kind.k() as usize, kind.n as usize);
    let major = |t: bool| if t { Major::Mn } else { Major::K };
    let mut step = WgmmaStep {
        core_matrices: Vec::new(),
        smem_bytes: [0, 0],
        wavefronts: 0,
        ideal: 0,
    };
    if op.values {
        // The core matrices of each shared-memory operand: rows / 8 x (K / the K a row holds).
        let cms = |maj: Major, t: WgmmaType, rows: usize| {
            let kstep = match maj {
                Major::K => 16 / t.bytes() as usize,
                Major::Mn => 8,
            };
            rows.div_ceil(8) * kk.div_ceil(kstep)
        };
        let a = match op.a {
            WgmmaA::Desc(_) => cms(major(op.trans_a), kind.a, 64),
            WgmmaA::Regs(_) => 0,
        };
        step.core_matrices = Vec::with_capacity(a + cms(major(op.trans_b), kind.b, n));
    }
    if !op.values {
        return warpgroup_counts(smem, &op, step);
    }
    // Operand values, exact in f64 (every input type's products are exact too), in buffers
    // kept per thread: A 64 x kk and B n x kk row-major (mn, k), B transposed, the dots.
    WGMMA_SCRATCH.with_borrow_mut(|scratch| {
        let need = 64 * kk + 2 * n * kk + 64 * n;
        if scratch.len() < need {
            scratch.resize(need, 0.0);
        }
        let (av, rest) = scratch.split_at_mut(64 * kk);
        let (bv, rest) = rest.split_at_mut(n * kk);
        let (bt, o) = rest.split_at_mut(n * kk);
        let o = &mut o[..64 * n];
        let mut read_operand = |which: u8,
                                d: &MatrixDescriptor,
                                maj: Major,
                                t: WgmmaType,
                                rows: usize,
                                out: &mut [f64]|
         -> Result<(), SimError> {
            read_operand_values(smem, d, maj, t, rows, kk, out)?;
            let e = t.bytes();
            let kstep = match maj {
                Major::K => 16 / e,
                Major::Mn => 8,
            };
            for mn in (0..rows as u32).step_by(8) {
                for k in (0..kk as u32).step_by(kstep as usize) {
                    step.core_matrices.push(CoreMatrixRead {
                        operand: which,
                        mn,
                        k,
                        rows: d.core_matrix_rows_of(maj, mn, k, e),
                    });
                    // The H200 counts one `..._op_gmma` wavefront per 128 operand bytes (one
                    // per core matrix) and no conflicts in any layout tried
                    // (CostRule::CoreMatrices; `CoreMatrixRead::wavefronts` is the 8-address
                    // cost, a diagnostic).
                    step.wavefronts += 1;
                    step.ideal += 1;
                }
            }
            step.smem_bytes[which as usize] = rows as u32 * kk as u32 * e;
            Ok(())
        };
        match op.a {
            WgmmaA::Desc(d) => read_operand(0, &d, major(op.trans_a), kind.a, 64, av)?,
            WgmmaA::Regs(regs) => {
                let per = 4 / kind.a.bytes();
                let bits = 8 * kind.a.bytes();
                for (t, tr) in regs.iter().enumerate() {
                    for (r, &v) in tr.iter().enumerate() {
                        for pos in 0..per {
                            let (m, k) = kind.a_fragment(t as u32, r as u32, pos);
                            let x = v.checked_shr(bits * pos).unwrap_or(0);
                            av[m as usize * kk + k as usize] = kind.a.decode(x);
                        }
                    }
                }
            }
        }
        read_operand(1, &op.b, major(op.trans_b), kind.b, n, bv)?;
        // Float accumulators: every (row, col) dot product at once, vectorised over columns,
        // the iterator sums' values bit for bit (`crate::sim::mma_fast::wgmma_dots`).
        if kind.acc != WgmmaAcc::S32 {
            for (col, bcol) in bv.chunks_exact(kk).enumerate() {
                for (k, &x) in bcol.iter().enumerate() {
                    bt[k * n + col] = x;
                }
            }
            crate::sim::mma_fast::wgmma_dots(av, bt, kk, n, o);
        }
        write_wgmma_d(&mut op, av, bv, o);
        Ok(step)
    })
}

thread_local! {
    /// [`warpgroup_on`]'s operand and dot buffers (f64 elements), kept between instructions so
    /// that none allocates; every element it reads was written by the same instruction.
    static WGMMA_SCRATCH: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The `rows x kk` operand at `d` (`maj`-major, elements of type `t`) decoded into `out`
/// (row-major `(mn, k)`), one 16-byte core-matrix row at a time: a row holds `16 / e`
/// consecutive K elements (K-major) or 8 consecutive MN elements (MN-major, 2-byte types),
/// at consecutive addresses (the swizzle moves whole 16-byte units, `Swizzle<B,4,3>`). Where a
/// row ends past shared memory the elements are read one by one, in `(mn, k)` order, for the
/// first one's error (test `wgmma_operand_rows_equal_element_reads`).
fn read_operand_values(
    smem: &SharedMemory,
    d: &MatrixDescriptor,
    maj: Major,
    t: WgmmaType,
    rows: usize,
    kk: usize,
    out: &mut [f64],
) -> Result<(), SimError> {
    let e = t.bytes() as usize;
    let bytes = smem.bytes();
    let elem = |row: &[u8], j: usize| -> f64 {
        let x = match e {
            1 => u32::from(row[j]),
            2 => u32::from(u16::from_le_bytes([row[2 * j], row[2 * j + 1]])),
            _ => u32::from_le_bytes([row[4 * j], row[4 * j + 1], row[4 * j + 2], row[4 * j + 3]]),
        };
        t.decode(x)
    };
    let row_at = |a: u32| bytes.get(a as usize..a as usize + 16);
    let whole = match maj {
        Major::K => {
            let per = 16 / e;
            (0..rows).all(|mn| {
                (0..kk).step_by(per).all(|k0| {
                    let a = d.element_address_of(maj, mn as u32, k0 as u32, e as u32);
                    let Some(row) = row_at(a) else { return false };
                    let dst = &mut out[mn * kk + k0..mn * kk + k0 + per];
                    if let (WgmmaType::F16, Ok(r), Ok(o)) = (
                        t,
                        <&[u8; 16]>::try_from(row),
                        <&mut [f64; 8]>::try_from(&mut *dst),
                    ) {
                        crate::sim::mma_fast::f16_row(r, o);
                        return true;
                    }
                    for (j, x) in dst.iter_mut().enumerate() {
                        *x = elem(row, j);
                    }
                    true
                })
            })
        }
        Major::Mn => (0..rows).step_by(8).all(|mn0| {
            (0..kk).all(|k| {
                let a = d.element_address_of(maj, mn0 as u32, k as u32, e as u32);
                let Some(row) = row_at(a) else { return false };
                for j in 0..8.min(rows - mn0) {
                    out[(mn0 + j) * kk + k] = elem(row, j);
                }
                true
            })
        }),
    };
    if !whole {
        for mn in 0..rows {
            for k in 0..kk {
                let addr = d.element_address_of(maj, mn as u32, k as u32, e as u32);
                out[mn * kk + k] = t.decode(read_elem(smem, addr, e as u32)?);
            }
        }
    }
    Ok(())
}

/// Writes D of a computed `wgmma` into `op.d` from the decoded operands `av` (64 x kk),
/// `bv` (n x kk) and, for float accumulators, the dots `dots` (64 x n): `D = C + scale · A·B`
/// (C = 0 without scale-d), rounded once to the accumulator type; s32 sums exact (saturated
/// with `.satfinite`).
fn write_wgmma_d(op: &mut WgmmaOp, av: &[f64], bv: &[f64], dots: &[f64]) {
    if op.kind.acc == WgmmaAcc::F32 {
        write_wgmma_d_f32(op, dots);
        return;
    }
    write_wgmma_d_by_fragment(op, av, bv, dots);
}

/// [`write_wgmma_d_by_fragment`] for f32 accumulators, thread by thread along the fragment
/// layout ([`crate::sim::wgmma::acc_fragment`]): thread `t` (warp `w`, `g = lane / 4`,
/// `q = lane % 4`) holds in registers `4j .. 4j + 3` the columns `8j + 2q`, `8j + 2q + 1` of
/// rows `16w + g` and `16w + g + 8`; the same `C + scale · dot` rounded once to f32 (test
/// `f32_d_write_equals_the_fragment_write`).
fn write_wgmma_d_f32(op: &mut WgmmaOp, dots: &[f64]) {
    let n = op.kind.n as usize;
    let scale = f64::from(op.scale_a * op.scale_b);
    let regs = op.kind.d_regs() as usize;
    let scale_d = op.scale_d;
    let one = |slot: &mut u32, dot: f64| {
        let c = if scale_d {
            f64::from(f32::from_bits(*slot))
        } else {
            0.0
        };
        *slot = ((c + scale * dot) as f32).to_bits();
    };
    for (t, slots) in
        op.d.chunks_exact_mut(regs)
            .enumerate()
            .take(WARPGROUP_THREADS)
    {
        let (w, lane) = (t / 32, t % 32);
        let (g, q) = (lane / 4, lane % 4);
        let row0 = &dots[(16 * w + g) * n..(16 * w + g + 1) * n];
        let row1 = &dots[(16 * w + g + 8) * n..(16 * w + g + 9) * n];
        for (j, quad) in slots.chunks_exact_mut(4).enumerate() {
            let c = 8 * j + 2 * q;
            one(&mut quad[0], row0[c]);
            one(&mut quad[1], row0[c + 1]);
            one(&mut quad[2], row1[c]);
            one(&mut quad[3], row1[c + 1]);
        }
    }
}

/// [`write_wgmma_d`] through [`WgmmaKind::d_fragment`] per register (every accumulator type).
fn write_wgmma_d_by_fragment(op: &mut WgmmaOp, av: &[f64], bv: &[f64], dots: &[f64]) {
    let kind = op.kind;
    let (kk, n) = (kind.k() as usize, kind.n as usize);
    let scale = f64::from(op.scale_a * op.scale_b);
    let regs = kind.d_regs() as usize;
    let scale_d = op.scale_d;
    for (t, slots) in
        op.d.chunks_exact_mut(regs)
            .enumerate()
            .take(WARPGROUP_THREADS)
    {
        for (r, slot) in slots.iter_mut().enumerate() {
            *slot = match kind.acc {
                WgmmaAcc::S32 => {
                    let (row, col) = kind.d_fragment(t as u32, r as u32, 0);
                    let (row, col) = (row as usize, col as usize);
                    let arow = &av[row * kk..(row + 1) * kk];
                    let brow = &bv[col * kk..(col + 1) * kk];
                    let dot: i64 = arow
                        .iter()
                        .zip(brow)
                        .map(|(x, y)| *x as i64 * *y as i64)
                        .sum();
                    let c = if scale_d { *slot as i32 as i64 } else { 0 };
                    let v = c + dot;
                    if kind.satfinite {
                        v.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32
                    } else {
                        v as i32 as u32
                    }
                }
                WgmmaAcc::F32 => {
                    let (row, col) = kind.d_fragment(t as u32, r as u32, 0);
                    let dot = dots[row as usize * n + col as usize];
                    let c = if scale_d {
                        f64::from(f32::from_bits(*slot))
                    } else {
                        0.0
                    };
                    ((c + scale * dot) as f32).to_bits()
                }
                WgmmaAcc::F16 => {
                    let mut word = 0u32;
                    for h in 0..2 {
                        let (row, col) = kind.d_fragment(t as u32, r as u32, h);
                        let dot = dots[row as usize * n + col as usize];
                        let c = if scale_d {
                            half::f16::from_bits((*slot >> (16 * h)) as u16).to_f64()
                        } else {
                            0.0
                        };
                        word |=
                            u32::from(half::f16::from_f64(c + scale * dot).to_bits()) << (16 * h);
                    }
                    word
                }
            };
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Bulk: the TMA unit.
// ---------------------------------------------------------------------------------------------

/// What a bulk op does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BulkKind<'m> {
    /// `cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes`: the
    /// box at tensor coordinates `coords` (elements, signed, innermost first; out-of-bounds
    /// elements are zero-filled) of the tensor at global address `tensor` to shared address
    /// `smem` (placed and swizzled by [`TensorMap::smem_box`]).
    TensorLoad {
        /// The tensor map.
        map: &'m TensorMap,
        /// The tensor's global base address (`globalAddress`, 16-byte aligned).
        tensor: u64,
        /// Box start coordinates.
        coords: [i64; MAX_RANK],
        /// Shared-memory destination (128-byte aligned).
        smem: u32,
    },
    /// `cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group`: the box from `smem` back
    /// to the tensor; out-of-bounds elements are not written.
    TensorStore {
        /// The tensor map.
        map: &'m TensorMap,
        /// The tensor's global base address.
        tensor: u64,
        /// Box start coordinates.
        coords: [i64; MAX_RANK],
        /// Shared-memory source (128-byte aligned).
        smem: u32,
    },
    /// `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.<op>.tile.bulk_group`: as a store,
    /// each in-bounds element combined with the global one by `op` on the map's type.
    TensorReduce {
        /// The tensor map.
        map: &'m TensorMap,
        /// The tensor's global base address.
        tensor: u64,
        /// Box start coordinates.
        coords: [i64; MAX_RANK],
        /// Shared-memory source.
        smem: u32,
        /// The reduction.
        op: ReduceOp,
    },
    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`: `bytes` contiguous
    /// bytes from `global` to `smem` (no tensor map, no swizzle).
    CopyToShared {
        /// Shared destination (16-byte aligned).
        smem: u32,
        /// Global source (16-byte aligned).
        global: u64,
        /// Size (a multiple of 16).
        bytes: u32,
    },
    /// `cp.async.bulk.global.shared::cta.bulk_group`: `bytes` from `smem` to `global`.
    CopyToGlobal {
        /// Shared source.
        smem: u32,
        /// Global destination.
        global: u64,
        /// Size.
        bytes: u32,
    },
    /// `cp.reduce.async.bulk.global.shared::cta.bulk_group.<op>.<type>`: `bytes` from `smem`
    /// combined into `global` element by element.
    ReduceToGlobal {
        /// Shared source.
        smem: u32,
        /// Global destination.
        global: u64,
        /// Size.
        bytes: u32,
        /// Element type.
        dtype: TmaDtype,
        /// The reduction.
        op: ReduceOp,
    },
}

/// One bulk op with the global memory it reads or writes.
pub struct BulkOp<'a> {
    /// What to do.
    pub kind: BulkKind<'a>,
    /// Global memory.
    pub global: &'a mut dyn GlobalMemory,
}

/// What one [`BulkOp`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkStep {
    /// The transaction bytes: the whole box (tensor ops, also when part of it was out of bounds
    /// and zero-filled) or the copy size. For loads this is what
    /// `mbarrier::complete_tx::bytes` completes.
    pub tx_bytes: u64,
    /// Global bytes read and written (in-bounds elements only).
    pub global_read: u64,
    /// Global bytes written.
    pub global_written: u64,
    /// Box elements outside the tensor (zero-filled by a load, skipped by a store).
    pub out_of_bounds: u64,
    /// Shared-memory byte ranges written (loads), merged where contiguous, address order of
    /// the writes.
    pub smem_written: Vec<Range<u32>>,
    /// Shared-memory bytes read (stores, reductions).
    pub smem_read: u64,
}

impl BulkStep {
    fn new(tx: u64) -> BulkStep {
        BulkStep {
            tx_bytes: tx,
            global_read: 0,
            global_written: 0,
            out_of_bounds: 0,
            smem_written: Vec::new(),
            smem_read: 0,
        }
    }

    fn wrote(&mut self, r: Range<u32>) {
        if let Some(last) = self.smem_written.last_mut()
            && last.end == r.start
        {
            last.end = r.end;
            return;
        }
        self.smem_written.push(r);
    }
}

fn smem_range(smem: &SharedMemory, start: u32, len: u64) -> Result<Range<usize>, SimError> {
    let end = u64::from(start) + len;
    if end > u64::from(smem.len()) {
        return Err(SimError::Invalid(format!(
            "shared-memory range {start}..{end} is past the end of the {} bytes of shared memory",
            smem.len()
        )));
    }
    Ok(start as usize..end as usize)
}

/// One box row: its shared-memory row index and the tensor coordinates of its element 0.
struct BoxRow {
    row: u32,
    coords: [i64; MAX_RANK],
}

fn box_rows<'m>(map: &'m TensorMap, coords: &[i64; MAX_RANK]) -> impl Iterator<Item = BoxRow> + 'm {
    let rows = u32::try_from(map.box_rows()).unwrap_or(0);
    let c0 = *coords;
    (0..rows).map(move |row| {
        let mut c = c0;
        let mut rest = row;
        for d in 1..MAX_RANK {
            let b = map.box_dims[d];
            c[d] = c0[d] + i64::from(rest % b);
            rest /= b;
        }
        BoxRow { row, coords: c }
    })
}

/// The in-bounds element range `lo..hi` of box row `r` (box columns), with the global byte
/// offset of element `lo`; `None` when the row lies wholly outside the tensor.
fn in_bounds(map: &TensorMap, r: &BoxRow) -> Option<(u32, u32, u64)> {
    let b0 = i64::from(map.box_dims[0]);
    let x0 = r.coords[0];
    let lo = (-x0).clamp(0, b0);
    let hi = (i64::try_from(map.dims[0]).unwrap_or(i64::MAX) - x0).clamp(0, b0);
    if lo >= hi {
        return None;
    }
    let mut c = r.coords;
    c[0] = x0 + lo;
    let off = map.global_offset(&c)?;
    Some((lo as u32, hi as u32, off))
}

/// `cuTensorMapEncodeTiled`'s `globalAddress` rule (interleave none): 16-byte aligned.
fn check_tensor(tensor: u64) -> Result<(), SimError> {
    if !tensor.is_multiple_of(16) {
        return Err(SimError::Invalid(format!(
            "tensor global address {tensor:#x} is not allowed; it must be a multiple of 16 bytes (cuTensorMapEncodeTiled)"
        )));
    }
    Ok(())
}

fn bulk(smem: &mut SharedMemory, op: BulkOp) -> Result<BulkStep, SimError> {
    let BulkOp { kind, global } = op;
    match kind {
        BulkKind::TensorLoad {
            map,
            tensor,
            coords,
            smem: dst,
        } => {
            check_tensor(tensor)?;
            let bx = map.smem_box(dst)?;
            smem_range(smem, dst, u64::from(bx.footprint_bytes()))?;
            let e = map.dtype.bytes();
            let inner = bx.inner_bytes() as usize;
            let mut step = BulkStep::new(map.box_bytes());
            // Read every row first (a failing global read writes nothing), then place it.
            let mut data = vec![0u8; inner * map.box_rows() as usize];
            for r in box_rows(map, &coords) {
                let line = &mut data[r.row as usize * inner..(r.row as usize + 1) * inner];
                match in_bounds(map, &r) {
                    Some((lo, hi, off)) => {
                        let (a, b) = ((lo * e) as usize, (hi * e) as usize);
                        global.read(tensor.wrapping_add(off), &mut line[a..b])?;
                        step.global_read += (b - a) as u64;
                        step.out_of_bounds += u64::from(map.box_dims[0] - (hi - lo));
                    }
                    None => step.out_of_bounds += u64::from(map.box_dims[0]),
                }
            }
            let bytes = smem.bytes_mut();
            for row in 0..bx.rows {
                for ch in 0..bx.chunks_per_row() {
                    let a = bx.chunk_address(row, ch);
                    let src = row as usize * inner + 16 * ch as usize;
                    bytes[a as usize..a as usize + 16].copy_from_slice(&data[src..src + 16]);
                    step.wrote(a..a + 16);
                }
            }
            Ok(step)
        }
        BulkKind::TensorStore {
            map,
            tensor,
            coords,
            smem: src,
        }
        | BulkKind::TensorReduce {
            map,
            tensor,
            coords,
            smem: src,
            ..
        } => {
            let red = match kind {
                BulkKind::TensorReduce { op, .. } => {
                    op.check_type(map.dtype)?;
                    Some(op)
                }
                _ => None,
            };
            check_tensor(tensor)?;
            let bx = map.smem_box(src)?;
            smem_range(smem, src, u64::from(bx.footprint_bytes()))?;
            let e = map.dtype.bytes();
            let mut step = BulkStep::new(map.box_bytes());
            step.smem_read = map.box_bytes();
            let mut line = vec![0u8; bx.inner_bytes() as usize];
            for r in box_rows(map, &coords) {
                let Some((lo, hi, off)) = in_bounds(map, &r) else {
                    step.out_of_bounds += u64::from(map.box_dims[0]);
                    continue;
                };
                step.out_of_bounds += u64::from(map.box_dims[0] - (hi - lo));
                for ch in 0..bx.chunks_per_row() {
                    let a = bx.chunk_address(r.row, ch) as usize;
                    line[16 * ch as usize..16 * ch as usize + 16]
                        .copy_from_slice(&smem.bytes()[a..a + 16]);
                }
                let part = &line[(lo * e) as usize..(hi * e) as usize];
                let at = tensor.wrapping_add(off);
                write_or_reduce(global, at, part, map.dtype, red, &mut step)?;
            }
            Ok(step)
        }
        BulkKind::CopyToShared {
            smem: dst,
            global: g,
            bytes,
        } => {
            check_bulk_copy(dst, g, bytes)?;
            let r = smem_range(smem, dst, u64::from(bytes))?;
            let mut buf = vec![0u8; bytes as usize];
            global.read(g, &mut buf)?;
            smem.bytes_mut()[r].copy_from_slice(&buf);
            let mut step = BulkStep::new(u64::from(bytes));
            step.global_read = u64::from(bytes);
            step.wrote(dst..dst + bytes);
            Ok(step)
        }
        BulkKind::CopyToGlobal {
            smem: src,
            global: g,
            bytes,
        }
        | BulkKind::ReduceToGlobal {
            smem: src,
            global: g,
            bytes,
            ..
        } => {
            check_bulk_copy(src, g, bytes)?;
            let (dtype, red) = match kind {
                BulkKind::ReduceToGlobal { dtype, op, .. } => {
                    op.check_type(dtype)?;
                    (dtype, Some(op))
                }
                _ => (TmaDtype::U8, None),
            };
            let r = smem_range(smem, src, u64::from(bytes))?;
            let mut step = BulkStep::new(u64::from(bytes));
            step.smem_read = u64::from(bytes);
            let data = smem.bytes()[r].to_vec();
            write_or_reduce(global, g, &data, dtype, red, &mut step)?;
            Ok(step)
        }
    }
}

fn write_or_reduce(
    global: &mut dyn GlobalMemory,
    at: u64,
    data: &[u8],
    dtype: TmaDtype,
    red: Option<ReduceOp>,
    step: &mut BulkStep,
) -> Result<(), SimError> {
    match red {
        None => global.write(at, data)?,
        Some(op) => {
            let mut old = vec![0u8; data.len()];
            global.read(at, &mut old)?;
            step.global_read += data.len() as u64;
            let e = dtype.bytes() as usize;
            for (o, s) in old.chunks_exact_mut(e).zip(data.chunks_exact(e)) {
                reduce_elem(dtype, op, o, s);
            }
            global.write(at, &old)?;
        }
    }
    step.global_written += data.len() as u64;
    Ok(())
}

/// `old = old <op> src` on one little-endian element of `t` ([`ReduceOp::check_type`] has
/// allowed the pair). Floating-point adds round once to the type (f16, bf16 `.noftz`: no
/// flush of subnormals); min/max of floats follow IEEE `minNum`/`maxNum`.
fn reduce_elem(t: TmaDtype, op: ReduceOp, old: &mut [u8], src: &[u8]) {
    fn le(b: &[u8]) -> u64 {
        let mut x = [0u8; 8];
        x[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(x)
    }
    let (o, s) = (le(old), le(src));
    let int = |a: i128, b: i128| -> i128 {
        match op {
            ReduceOp::Add => a + b,
            ReduceOp::Min => a.min(b),
            ReduceOp::Max => a.max(b),
            ReduceOp::Inc => {
                if a >= b {
                    0
                } else {
                    a + 1
                }
            }
            ReduceOp::Dec => {
                if a == 0 || a > b {
                    b
                } else {
                    a - 1
                }
            }
            ReduceOp::And => a & b,
            ReduceOp::Or => a | b,
            ReduceOp::Xor => a ^ b,
        }
    };
    let flt = |a: f64, b: f64| -> f64 {
        match op {
            ReduceOp::Min => a.min(b),
            ReduceOp::Max => a.max(b),
            _ => a + b,
        }
    };
    let r: u64 = match t {
        TmaDtype::U32 => int(i128::from(o as u32), i128::from(s as u32)) as u64 & 0xffff_ffff,
        TmaDtype::S32 => int(i128::from(o as u32 as i32), i128::from(s as u32 as i32)) as u64,
        TmaDtype::U64 | TmaDtype::U8 | TmaDtype::U16 => int(i128::from(o), i128::from(s)) as u64,
        TmaDtype::S64 => int(i128::from(o as i64), i128::from(s as i64)) as u64,
        TmaDtype::F32 | TmaDtype::F32Ftz | TmaDtype::Tf32 | TmaDtype::Tf32Ftz => {
            let v = flt(
                f64::from(f32::from_bits(o as u32)),
                f64::from(f32::from_bits(s as u32)),
            );
            u64::from((v as f32).to_bits())
        }
        TmaDtype::F64 => flt(f64::from_bits(o), f64::from_bits(s)).to_bits(),
        TmaDtype::F16 => {
            let v = flt(
                half::f16::from_bits(o as u16).to_f64(),
                half::f16::from_bits(s as u16).to_f64(),
            );
            u64::from(half::f16::from_f64(v).to_bits())
        }
        TmaDtype::Bf16 => {
            let v = flt(
                half::bf16::from_bits(o as u16).to_f64(),
                half::bf16::from_bits(s as u16).to_f64(),
            );
            u64::from(half::bf16::from_f64(v).to_bits())
        }
    };
    let n = old.len();
    old.copy_from_slice(&r.to_le_bytes()[..n]);
}

// ---------------------------------------------------------------------------------------------
// Paths kept for callers (and measured tests) written before the one executor.
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::mma::{self, MmaAcc, MmaDtype, MmaShape};
    use ndarray::Array2;

    /// 512 bytes where byte `a` holds `a % 256`: every loaded byte names its address.
    fn byte_indexed() -> SharedMemory {
        let mut m = SharedMemory::zeroed(512);
        for (a, b) in m.bytes_mut().iter_mut().enumerate() {
            *b = a as u8;
        }
        m
    }

    /// Little-endian word of the four bytes starting at `a` of [`byte_indexed`] memory.
    fn word(a: u32) -> u32 {
        u32::from_le_bytes([a as u8, (a + 1) as u8, (a + 2) as u8, (a + 3) as u8])
    }

    /// A counts-only `wgmma` (m64n64k16, f16, both operands K-major without swizzle: A is
    /// 2 KiB, B 2 KiB) succeeds where the computed one does, with the same wavefronts and bytes,
    /// and fails with the same error where B's last core-matrix rows end past shared memory.
    #[test]
    fn a_counts_only_wgmma_checks_every_operand_row_as_the_computed_one() {
        use crate::sim::tma::TmaSwizzle;
        use crate::sim::wgmma::{ASource, Major, MatrixDescriptor};
        let desc = |start| MatrixDescriptor {
            start_address: start,
            leading_byte_offset: 128,
            stride_byte_offset: 256,
            base_offset: 0,
            swizzle: TmaSwizzle::None,
        };
        let a = ASource::Smem(desc(0), Major::K);
        let run = |b_start: u32, values: bool| {
            let mut smem = SharedMemory::zeroed(8192);
            let mut d = vec![0u32; 128 * 32];
            let mut op = WgmmaOp::f32_acc(64, MmaDtype::F16, &a, desc(b_start), Major::K, &mut d);
            op.values = values;
            execute(&mut smem, op).map(|s| (s.wavefronts, s.smem_bytes))
        };
        // B from 6144: its last row ends at 6144 + 2048 = 8192, the end of shared memory.
        assert_eq!(run(6144, true), Ok((16 + 16, [2048, 2048])));
        assert_eq!(run(6144, false), run(6144, true));
        // 16 bytes further, B's last row ends past it: both runs fail, with one error.
        let (c, v) = (run(6160, false), run(6160, true));
        assert!(c.is_err(), "{c:?}");
        assert_eq!(c, v);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// The f32 D write along the fragment layout writes what the per-register write through
        /// `d_fragment` does, bit for bit, for every N, with and without scale-d and imm-scale.
        #[test]
        fn f32_d_write_equals_the_fragment_write(
            n8 in 1u32..33,
            scale_d in proptest::prelude::any::<bool>(),
            neg in proptest::prelude::any::<bool>(),
            seed in proptest::prelude::any::<u64>(),
        ) {
            use crate::sim::wgmma::{ASource, Major, MatrixDescriptor};
            let n = 8 * n8;
            let mut x = seed | 1;
            let mut next = || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
            let dots: Vec<f64> = (0..64 * n).map(|_| (next() as i64 as f64) * 1e-12).collect();
            let c: Vec<u32> = (0..128 * n / 2).map(|_| (next() as f32 * 1e-12).to_bits()).collect();
            let a = ASource::Smem(MatrixDescriptor::decode(0), Major::K);
            let (mut d1, mut d2) = (c.clone(), c.clone());
            let mk = |d: &mut Vec<u32>| {
                let mut op = WgmmaOp::f32_acc(n, MmaDtype::F16, &a, MatrixDescriptor::decode(0), Major::K, d);
                op.scale_d = scale_d;
                op.scale_a = if neg { -1 } else { 1 };
                write_wgmma_d_f32(&mut op, &dots);
            };
            mk(&mut d1);
            {
                let mut op = WgmmaOp::f32_acc(n, MmaDtype::F16, &a, MatrixDescriptor::decode(0), Major::K, &mut d2);
                op.scale_d = scale_d;
                op.scale_a = if neg { -1 } else { 1 };
                write_wgmma_d_by_fragment(&mut op, &[], &[], &dots);
            }
            proptest::prop_assert_eq!(d1, d2);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// `read_operand_values` (16-byte rows) decodes what reading every element at
        /// `element_address_of` does, for every swizzle, both majors and 1-, 2- and 4-byte
        /// types, and fails with the same error where the operand leaves shared memory.
        #[test]
        fn wgmma_operand_rows_equal_element_reads(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 4096),
            start in 0u32..320,
            lbo in 1u32..64,
            sbo in 1u32..64,
            sw in 0usize..4,
            mn_major in proptest::prelude::any::<bool>(),
            ty in 0usize..4,
            rows in proptest::prop_oneof![proptest::strategy::Just(64usize), proptest::strategy::Just(8), proptest::strategy::Just(24)],
        ) {
            use crate::sim::tma::TmaSwizzle;
            use crate::sim::wgmma::{Major, MatrixDescriptor, WgmmaType};
            let t = [WgmmaType::F16, WgmmaType::Bf16, WgmmaType::Tf32, WgmmaType::E4m3][ty];
            // MN-major exists for 2-byte types only.
            let maj = if mn_major && t.bytes() == 2 { Major::Mn } else { Major::K };
            let kk = (32 / t.bytes()) as usize;
            let d = MatrixDescriptor {
                start_address: 16 * start,
                leading_byte_offset: 16 * lbo,
                stride_byte_offset: 16 * sbo,
                base_offset: 0,
                swizzle: [TmaSwizzle::None, TmaSwizzle::B32, TmaSwizzle::B64, TmaSwizzle::B128][sw],
            };
            let mut smem = SharedMemory::zeroed(4096);
            smem.bytes_mut().copy_from_slice(&bytes);
            let mut got = vec![f64::NAN; rows * kk];
            let fast = read_operand_values(&smem, &d, maj, t, rows, kk, &mut got);
            let mut want = vec![f64::NAN; rows * kk];
            let slow = (|| {
                for mn in 0..rows {
                    for k in 0..kk {
                        let a = d.element_address_of(maj, mn as u32, k as u32, t.bytes());
                        want[mn * kk + k] = t.decode(read_elem(&smem, a, t.bytes())?);
                    }
                }
                Ok::<(), SimError>(())
            })();
            proptest::prop_assert_eq!(&fast, &slow);
            if slow.is_ok() {
                let same = got.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits());
                proptest::prop_assert!(same, "{:?}", d);
            }
        }
    }

    #[test]
    fn ld_of_every_width_returns_zero_extended_little_endian_words() {
        let mut m = byte_indexed();
        // Hand-computed: lane 3 of each access.
        let cases: [(AccessWidth, u32, [u32; 4]); 5] = [
            (AccessWidth::U8, 1, [0x03, 0, 0, 0]),
            (AccessWidth::U16, 2, [0x0706, 0, 0, 0]),
            (AccessWidth::B32, 4, [0x0f0e_0d0c, 0, 0, 0]),
            (AccessWidth::V2, 8, [0x1b1a_1918, 0x1f1e_1d1c, 0, 0]),
            (
                AccessWidth::V4,
                16,
                [0x3332_3130, 0x3736_3534, 0x3b3a_3938, 0x3f3e_3d3c],
            ),
        ];
        for (w, stride, lane3) in cases {
            let op = WarpOp::ld(w, std::array::from_fn(|l| stride * l as u32), u32::MAX);
            let step = execute(&mut m, &op).unwrap();
            assert_eq!(step.regs[3], lane3, "{w:?}");
            assert_eq!(step.regs_per_lane, w.bytes().div_ceil(4) as usize);
            for lane in 0..32u32 {
                let a = stride * lane;
                let want: [u32; 4] = std::array::from_fn(|r| {
                    let r = r as u32;
                    match w.bytes() {
                        1 if r == 0 => a & 0xff,
                        2 if r == 0 => (a & 0xff) | ((a + 1) & 0xff) << 8,
                        n if 4 * r < n => word(a + 4 * r),
                        _ => 0,
                    }
                });
                assert_eq!(step.regs[lane as usize], want, "{w:?} lane {lane}");
            }
            assert!(step.writes().next().is_none());
        }
    }

    #[test]
    fn inactive_lanes_neither_load_nor_store() {
        let mut m = byte_indexed();
        let addrs = std::array::from_fn(|l| 4 * l as u32);
        let step = execute(&mut m, &WarpOp::ld(AccessWidth::B32, addrs, 0b101)).unwrap();
        assert_eq!(step.reg_lanes, 0b101);
        assert_eq!((step.regs[0][0], step.regs[1][0]), (word(0), 0));
        assert_eq!(step.regs[2][0], word(8));
        let data = std::array::from_fn(|l| [0xaa00 + l as u32, 0, 0, 0]);
        let step = execute(&mut m, &WarpOp::st(AccessWidth::U16, addrs, 0b10, data)).unwrap();
        assert_eq!(step.writes().collect::<Vec<_>>(), vec![(1, 4..6)]);
        assert_eq!(&m.bytes()[0..8], &[0, 1, 2, 3, 0x01, 0xaa, 6, 7]);
    }

    #[test]
    fn stores_write_the_low_bytes_and_the_higher_lane_wins() {
        let mut m = SharedMemory::zeroed(256);
        // Lanes 0..32 all store to byte 8 (.u8); lane 31's value remains.
        let data = std::array::from_fn(|l| [0x100 + l as u32, 0, 0, 0]);
        execute(
            &mut m,
            &WarpOp::st(AccessWidth::U8, [8; 32], u32::MAX, data),
        )
        .unwrap();
        assert_eq!(m.bytes()[8], 31);
        assert_eq!(m.bytes()[9], 0);
        // .v2: two little-endian words.
        let data = std::array::from_fn(|l| [0x0403_0201 * (l as u32 + 1), 0x0807_0605, 0, 0]);
        execute(&mut m, &WarpOp::st(AccessWidth::V2, [16; 32], 1, data)).unwrap();
        assert_eq!(&m.bytes()[16..24], &[1, 2, 3, 4, 5, 6, 7, 8]);
    }

    /// (row, col) of an element of an 8x8 matrix.
    type Rc = (u32, u32);

    /// PTX ISA §9.7.14.5.15, figure "ldmatrix fragment layout" (one 8x8 matrix of b16):
    /// (lane, half) -> (row, col) for the plain and the `.trans` load.
    const LDMATRIX_FIGURE: [(u32, u32, Rc, Rc); 6] = [
        // lane, half, plain (row, col), .trans (row, col)
        (0, 0, (0, 0), (0, 0)),
        (0, 1, (0, 1), (1, 0)),
        (1, 0, (0, 2), (2, 0)),
        (5, 1, (1, 3), (3, 1)),
        (30, 0, (7, 4), (4, 7)),
        (31, 1, (7, 7), (7, 7)),
    ];

    /// Rows of matrix `m` at byte `512·m + 32·r` (16 b16 elements of pitch), reversed within each
    /// matrix so that a wrong address lane shows.
    fn matrix_rows(m: u32) -> u32 {
        let (i, r) = (m / 8, m % 8);
        512 * i + 32 * (7 - r)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// The whole-instruction ldmatrix (rows, then every lane's registers) loads what the
        /// per-register segments do, and its step (cost, lanes, register count) is the same
        /// function of the request: random bytes, random 16-byte-aligned row addresses (rows
        /// may repeat or overlap matrices), every count, with and without .trans.
        #[test]
        fn whole_ldmatrix_equals_the_segments(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 1024),
            rows in proptest::collection::vec(0u32..64, 32),
            num in 0usize..3,
            trans in proptest::prelude::any::<bool>(),
        ) {
            let mut smem = SharedMemory::zeroed(1024);
            for (i, &b) in bytes.iter().enumerate() {
                smem.store_le(i as u32, 1, u32::from(b));
            }
            let num = [MatrixCount::X1, MatrixCount::X2, MatrixCount::X4][num];
            let addrs: [u32; 32] = std::array::from_fn(|l| 16 * rows[l]);
            let op = WarpOp::ldmatrix(num, trans, addrs);
            let req = op.request().unwrap();
            let step = load(&smem, req).unwrap();
            proptest::prop_assert_eq!(step.regs, load_by_segments(&smem, req));
            proptest::prop_assert_eq!(step.cost, req.cost());
            proptest::prop_assert_eq!(step.regs_per_lane, num.count());
            proptest::prop_assert_eq!(step.reg_lanes, u32::MAX);
            proptest::prop_assert_eq!(execute(&mut smem, &op).unwrap(), step);
        }

        /// [`LoadLanes`] gives the [`WarpOp`] load's cost, registers (register-major), register
        /// count and lanes, and its errors: random bytes, ldmatrix of every count with and
        /// without .trans on random (sometimes misaligned or out-of-range) row addresses, and
        /// `ld.shared` of every width on random addresses and masks.
        #[test]
        fn load_lanes_equal_the_warp_op(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 1024),
            rows in proptest::collection::vec(0u32..64, 32),
            skew in 0u32..40,
            mask in proptest::prelude::any::<u32>(),
            which in 0usize..11,
        ) {
            let mut smem = SharedMemory::zeroed(1024);
            for (i, &b) in bytes.iter().enumerate() {
                smem.store_le(i as u32, 1, u32::from(b));
            }
            let ins = [
                Instruction::Ldmatrix { num: MatrixCount::X1, trans: false },
                Instruction::Ldmatrix { num: MatrixCount::X2, trans: false },
                Instruction::Ldmatrix { num: MatrixCount::X4, trans: false },
                Instruction::Ldmatrix { num: MatrixCount::X1, trans: true },
                Instruction::Ldmatrix { num: MatrixCount::X2, trans: true },
                Instruction::Ldmatrix { num: MatrixCount::X4, trans: true },
                Instruction::Ld(AccessWidth::U8),
                Instruction::Ld(AccessWidth::U16),
                Instruction::Ld(AccessWidth::B32),
                Instruction::Ld(AccessWidth::V2),
                Instruction::Ld(AccessWidth::V4),
            ][which];
            let w = ins.bytes_per_address();
            // Mostly aligned and in range; skew 33.. moves lane 5 off (misaligned or past the end).
            let addrs: [u32; 32] = std::array::from_fn(|l| {
                let a = (w * rows[l]) % 1024;
                if l == 5 && skew > 32 { a + 8 * (skew - 32) + 1 } else { a }
            });
            let mask = if ins.is_warp_collective() && skew % 3 != 0 { u32::MAX } else { mask };
            let req = WarpRequest {
                instruction: ins,
                lane_byte_offsets: addrs,
                active_mask: mask,
                global_addrs: None,
            };
            let want = execute(&mut smem, &WarpOp::load(req.clone()));
            let got = execute(&mut smem, LoadLanes { request: &req });
            match (want, got) {
                (Ok(want), Ok(got)) => {
                    proptest::prop_assert_eq!(got.cost, want.cost);
                    proptest::prop_assert_eq!(got.regs_per_lane, want.regs_per_lane);
                    proptest::prop_assert_eq!(got.reg_lanes, want.reg_lanes);
                    for l in 0..WARP_SIZE {
                        for r in 0..4 {
                            proptest::prop_assert_eq!(got.d[r][l], want.regs[l][r], "lane {} reg {}", l, r);
                        }
                    }
                }
                (Err(a), Err(b)) => proptest::prop_assert_eq!(a.to_string(), b.to_string()),
                (a, b) => proptest::prop_assert!(false, "{:?} vs {:?}", a.map(|_| ()), b.map(|_| ())),
            }
        }
    }

    proptest::proptest! {
        /// The SSE2 transpose of b16 elements is the element-by-element one.
        #[test]
        fn b16_transposes_agree(words in proptest::collection::vec(proptest::prelude::any::<u32>(), 32)) {
            let rows: [[u32; 4]; 8] = std::array::from_fn(|r| std::array::from_fn(|w| words[4 * r + w]));
            proptest::prop_assert_eq!(transpose_b16(&rows), transpose_b16_scalar(&rows));
        }
    }

    /// A store's request is no load.
    #[test]
    fn load_lanes_refuse_a_store() {
        let mut smem = SharedMemory::zeroed(1024);
        let req = WarpRequest::new(Instruction::St(AccessWidth::B32), [0; 32]);
        assert!(execute(&mut smem, LoadLanes { request: &req }).is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// `st.shared` of every width and `cp.async` write, lane by lane, what the per-register
        /// segments write (random data, masks and aligned addresses, lanes colliding).
        #[test]
        fn whole_lane_stores_equal_the_segments(
            words in proptest::collection::vec(proptest::prelude::any::<u32>(), 128),
            slots in proptest::collection::vec(0u32..16, 32),
            mask in proptest::prelude::any::<u32>(),
            which in 0usize..9,
        ) {
            let ins = [
                Instruction::St(AccessWidth::U8),
                Instruction::St(AccessWidth::U16),
                Instruction::St(AccessWidth::B32),
                Instruction::St(AccessWidth::V2),
                Instruction::St(AccessWidth::V4),
                Instruction::CpAsync(CpAsyncKind::Ca4),
                Instruction::CpAsync(CpAsyncKind::Ca8),
                Instruction::CpAsync(CpAsyncKind::Ca16),
                Instruction::CpAsync(CpAsyncKind::Cg16),
            ][which];
            let w = ins.bytes_per_address();
            let addrs: [u32; 32] = std::array::from_fn(|l| w * slots[l]);
            let data: LaneRegs = std::array::from_fn(|l| std::array::from_fn(|r| words[4 * l + r]));
            let mut r = request(ins, addrs, mask);
            if matches!(ins, Instruction::CpAsync(_)) {
                r.global_addrs = Some(Box::new(std::array::from_fn(|l| 16 * l as u64)));
            }
            let mut fast = SharedMemory::zeroed(256);
            let mut slow = SharedMemory::zeroed(256);
            let step = execute(&mut fast, &WarpOp::store(r.clone(), data)).unwrap();
            store_by_segments(&mut slow, &r, &data);
            proptest::prop_assert_eq!(fast.bytes(), slow.bytes());
            proptest::prop_assert_eq!(step.stored_lanes, r.address_lanes());
        }
    }

    #[test]
    fn ldmatrix_follows_the_ptx_figure() {
        let mut smem = SharedMemory::with_b16_indices(4096);
        let addrs = std::array::from_fn(|l| matrix_rows(l as u32));
        // Element (row r, col c) of matrix i holds b16 index (512 i + 32 (7 - r) + 2 c) / 2.
        let elem = |i: u32, r: u32, c: u32| (512 * i + 32 * (7 - r) + 2 * c) / 2;
        for num in [MatrixCount::X1, MatrixCount::X2, MatrixCount::X4] {
            for trans in [false, true] {
                let step = execute(&mut smem, &WarpOp::ldmatrix(num, trans, addrs)).unwrap();
                assert_eq!(step.regs_per_lane, num.count());
                assert_eq!(step.reg_lanes, u32::MAX);
                for &(lane, half, plain, tr) in &LDMATRIX_FIGURE {
                    let (r, c) = if trans { tr } else { plain };
                    for i in 0..num.count() as u32 {
                        let got = step.regs[lane as usize][i as usize] >> (16 * half) & 0xffff;
                        assert_eq!(got, elem(i, r, c), "{num:?} trans {trans} lane {lane}");
                    }
                }
            }
        }
    }

    #[test]
    fn stmatrix_stores_rows_and_ldmatrix_reads_them_back() {
        // x1: lane l sends (2l, 2l+1) in register 0. Plain: row r, col c = lane 4r + c/2, half
        // c%2, i.e. value 8r + c (rows in order); .trans: value 8c + r (the transpose).
        for trans in [false, true] {
            let mut smem = SharedMemory::zeroed(1024);
            let addrs: [u32; 32] = std::array::from_fn(|l| 64 * (l as u32 % 8) + 16);
            let data =
                std::array::from_fn(|l| [(2 * l as u32) | ((2 * l as u32 + 1) << 16), 0, 0, 0]);
            let step = execute(
                &mut smem,
                &WarpOp::stmatrix(MatrixCount::X1, trans, addrs, data),
            )
            .unwrap();
            assert_eq!(step.stored_lanes, 0xff);
            assert_eq!(
                step.writes().map(|(_, r)| r.start).collect::<Vec<_>>(),
                (0..8).map(|r| 64 * r + 16).collect::<Vec<_>>()
            );
            for r in 0..8u32 {
                for c in 0..8u32 {
                    let got = smem.read_u16(64 * r + 16 + 2 * c).unwrap() as u32;
                    let want = if trans { 8 * c + r } else { 8 * r + c };
                    assert_eq!(got, want, "trans {trans} row {r} col {c}");
                }
            }
            // Bytes outside the rows are untouched.
            assert!(smem.bytes()[..16].iter().all(|&b| b == 0));
        }
        // x4 round trip with arbitrary data and scattered rows, both forms.
        let mut rng = crate::seeded::Seeded::new(0x2545_f491);
        let data: LaneRegs =
            std::array::from_fn(|_| std::array::from_fn(|_| rng.next_u64() as u32));
        let addrs = std::array::from_fn(|l| 16 * ((l as u32 * 7) % 32) + 1024);
        for num in [MatrixCount::X1, MatrixCount::X2, MatrixCount::X4] {
            for trans in [false, true] {
                let mut smem = SharedMemory::zeroed(2048);
                execute(&mut smem, &WarpOp::stmatrix(num, trans, addrs, data)).unwrap();
                let back = execute(&mut smem, &WarpOp::ldmatrix(num, trans, addrs)).unwrap();
                for (lane, sent) in data.iter().enumerate() {
                    assert_eq!(
                        back.regs[lane][..num.count()],
                        sent[..num.count()],
                        "{num:?} trans {trans} lane {lane}"
                    );
                }
            }
        }
    }

    #[test]
    fn cp_async_writes_source_bytes_and_costs_a_pass_per_lane_write() {
        let mut smem = SharedMemory::zeroed(1024);
        let src = std::array::from_fn(|l| std::array::from_fn(|w| (l * 4 + w) as u32));
        let addrs = std::array::from_fn(|l| 16 * l as u32);
        // Lane l reads global bytes 4096 + 16 l: the usual tile copy.
        let global: [u64; 32] = std::array::from_fn(|l| 4096 + 16 * l as u64);
        let step = execute(
            &mut smem,
            &WarpOp::cp_async(CpAsyncKind::Cg16, addrs, u32::MAX, global, src),
        )
        .unwrap();
        assert_eq!(smem.read_u32(16 * 5 + 8).unwrap(), 22);
        assert_eq!(
            step.request.unwrap().instruction.sass(),
            "LDGSTS.E.BYPASS.128"
        );
        // .cg: the data move, the cost is not modelled (no L1TEX counter sees it).
        assert_eq!(
            step.cost.modelled(),
            Err(crate::sim::bank::NotModelled::CpAsyncCg)
        );
        // Same addresses for every lane: a 16-byte cp.async writes each lane's 16 bytes in its
        // own pass, 32 wavefronts (measured on the H200: `cp.async.ca.shared.global.16.same.src16`
        // in tests/data/h200_cpasync_2026-11-30.json), a 16-byte load 2 (packed).
        let st = execute(
            &mut smem,
            &WarpOp::cp_async(CpAsyncKind::Ca16, [0; 32], u32::MAX, global, src),
        )
        .unwrap();
        let ld = execute(&mut smem, &WarpOp::ld(AccessWidth::V4, [0; 32], u32::MAX)).unwrap();
        assert_eq!((st.cost.wavefronts, ld.cost.wavefronts), (32, 2));
        // Without the global addresses a .ca is not modelled either, but still executes.
        let mut r = st.request.clone().unwrap();
        r.global_addrs = None;
        let unknown = execute(&mut smem, &WarpOp::store(r, src)).unwrap();
        assert_eq!(
            unknown.cost.modelled(),
            Err(crate::sim::bank::NotModelled::CpAsyncSourcesUnknown)
        );
        let ca4 = execute(
            &mut smem,
            &WarpOp::cp_async(
                CpAsyncKind::Ca4,
                addrs.map(|a| a / 4),
                0b1,
                global.map(|g| g / 4),
                src,
            ),
        )
        .unwrap();
        assert_eq!(ca4.writes().collect::<Vec<_>>(), vec![(0, 0..4)]);
        assert_eq!(smem.read_u32(0).unwrap(), 0);
    }

    #[test]
    fn register_bytes_land_where_the_fragment_table_says() {
        // stmatrix, rows 16 bytes apart: lane 5 (g=1, t=1) register 0 -> matrix 0 row 1 cols
        // 2, 3 (address lane 1); .trans: lane 5 register 2 half 1 -> matrix 2 row 3 col 1
        // (address lane 19). PTX ISA §9.7.14.5.16 (the ldmatrix fragment table).
        let offs = std::array::from_fn(|l| l as u32 * 16);
        let plain = WarpRequest::new(
            Instruction::Stmatrix {
                num: MatrixCount::X4,
                trans: false,
            },
            offs,
        );
        assert_eq!(register_byte_address(&plain, 5, 0, 0), Some(16 + 4));
        assert_eq!(register_byte_address(&plain, 5, 0, 2), Some(16 + 6));
        let t = WarpRequest::new(
            Instruction::Stmatrix {
                num: MatrixCount::X4,
                trans: true,
            },
            offs,
        );
        assert_eq!(register_byte_address(&t, 5, 2, 2), Some(19 * 16 + 2));
        assert_eq!(register_byte_address(&t, 5, 4, 0), None);
        // ld.shared.v4: register 3 of lane 2 = bytes 12..16 of its access.
        let v4 = WarpRequest::new(Instruction::Ld(AccessWidth::V4), offs);
        assert_eq!(register_byte_address(&v4, 2, 3, 1), Some(32 + 13));
        assert_eq!(register_byte_address(&v4, 2, 3, 4), None);
    }

    #[test]
    fn stmatrix_costs_a_unit_per_matrix() {
        let mut smem = SharedMemory::zeroed(4096);
        let data = [[0; 4]; 32];
        // Eight identical rows per matrix: one wavefront per matrix.
        let step = execute(
            &mut smem,
            &WarpOp::stmatrix(MatrixCount::X4, false, [0; 32], data),
        )
        .unwrap();
        assert_eq!((step.cost.wavefronts, step.cost.ideal), (4, 4));
        // 128-byte row pitch: the 8 rows of a matrix share 4 banks, 8 wavefronts each.
        let addrs = std::array::from_fn(|l| 128 * l as u32);
        let step = execute(
            &mut smem,
            &WarpOp::stmatrix(MatrixCount::X2, true, addrs, data),
        )
        .unwrap();
        assert_eq!((step.cost.wavefronts, step.cost.bank_conflicts()), (16, 14));
    }

    #[test]
    fn bad_requests_are_errors_and_write_nothing() {
        let mut smem = SharedMemory::zeroed(256);
        let before = smem.clone();
        let e = execute(
            &mut smem,
            &WarpOp::ld(AccessWidth::V4, std::array::from_fn(|l| 8 * l as u32), 0b11),
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                SimError::Misaligned {
                    lane: 1,
                    offset: 8,
                    align: 16,
                    ..
                }
            ),
            "{e}"
        );
        // Lane 2's word ends past the 256 bytes.
        let addrs = [
            0, 4, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0,
        ];
        let data = [[7; 4]; 32];
        let e = execute(
            &mut smem,
            &WarpOp::st(AccessWidth::B32, addrs, u32::MAX, data),
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                SimError::OutOfRange {
                    lane: 2,
                    offset: 256,
                    end: 260,
                    ..
                }
            ),
            "{e}"
        );
        // The largest aligned address: its end does not wrap.
        let e = execute(
            &mut smem,
            &WarpOp::cp_async(CpAsyncKind::Ca16, [u32::MAX - 15; 32], 1, [0; 32], data),
        )
        .unwrap_err();
        assert!(matches!(e, SimError::OutOfRange { lane: 0, .. }), "{e}");
        for op in [
            WarpOp::store(
                WarpRequest {
                    active_mask: 0xffff,
                    ..WarpRequest::new(
                        Instruction::Stmatrix {
                            num: MatrixCount::X2,
                            trans: false,
                        },
                        [0; 32],
                    )
                },
                data,
            ),
            WarpOp::load(WarpRequest {
                active_mask: 0x7fff_ffff,
                ..WarpRequest::new(Instruction::LDSM_X4, [0; 32])
            }),
        ] {
            let e = execute(&mut smem, &op).unwrap_err();
            assert!(matches!(e, SimError::PartialLdmatrix { .. }), "{e}");
        }
        assert_eq!(smem, before);
    }

    #[test]
    fn mma_computes_d_from_register_fragments() {
        // Small integers: exact in f16 and f32. A (16x16) = i - j, B (16x8) = (i + 2j) % 5,
        // C = 100 i + j; D computed here with ndarray's matrix product.
        for (shape, dtype) in [
            (MmaShape::M16N8K16, MmaDtype::F16),
            (MmaShape::M16N8K16, MmaDtype::Bf16),
            (MmaShape::M16N8K8, MmaDtype::F16),
        ] {
            let (m, n, k) = shape.mnk();
            let (m, n, k) = (m as usize, n as usize, k as usize);
            let a = Array2::from_shape_fn((m, k), |(i, j)| i as f32 - j as f32);
            let b = Array2::from_shape_fn((k, n), |(i, j)| ((i + 2 * j) % 5) as f32);
            let c = Array2::from_shape_fn((m, n), |(i, j)| (100 * i + j) as f32);
            let want = a.dot(&b) + &c;
            let p = mma::pack(shape, dtype, &a, &b, &c).unwrap();
            let op = WarpOp::Mma {
                kind: MmaKind::new(shape, dtype, MmaAcc::F32).unwrap(),
                a: p.a,
                b: p.b.map(|r| [r[0], r[1], 0, 0]),
                c: p.c.map(|r| r.map(f32::to_bits)),
            };
            let mut smem = SharedMemory::zeroed(0);
            let step = execute(&mut smem, &op).unwrap();
            assert_eq!((step.regs_per_lane, step.request.is_none()), (4, true));
            for lane in 0..32u32 {
                for reg in 0..4 {
                    let (i, j) = mma::fragment(shape, Operand::C, lane, reg, 0);
                    let got = f32::from_bits(step.regs[lane as usize][reg as usize]);
                    assert_eq!(got, want[[i as usize, j as usize]], "{shape:?} lane {lane}");
                }
            }
        }
        // A kind built by hand that is not a PTX form: refused, not computed.
        let op = WarpOp::Mma {
            kind: MmaKind {
                shape: MmaShape::M16N8K16,
                dtype: MmaDtype::Bf16,
                btype: MmaDtype::Bf16,
                acc: MmaAcc::F16,
                satfinite: false,
            },
            a: [[0; 4]; 32],
            b: [[0; 4]; 32],
            c: [[0; 4]; 32],
        };
        assert!(execute(&mut SharedMemory::zeroed(0), &op).is_err());
    }

    #[test]
    fn mma_with_f16_accumulators_packs_d_in_two_registers() {
        // m16n8k16 f16 -> f16: C and D are two .f16x2 registers per lane (c0, c1 | c2, c3).
        // Small integers, exact in f16: A = (i + j) % 3, B = (2i + j) % 4, C = 10 i + j.
        let kind = MmaKind::new(MmaShape::M16N8K16, MmaDtype::F16, MmaAcc::F16).unwrap();
        let a = Array2::from_shape_fn((16, 16), |(i, j)| ((i + j) % 3) as f32);
        let b = Array2::from_shape_fn((16, 8), |(i, j)| ((2 * i + j) % 4) as f32);
        let c = Array2::from_shape_fn((16, 8), |(i, j)| (10 * i + j) as f32);
        let want = a.dot(&b) + &c;
        let p = mma::pack(MmaShape::M16N8K16, MmaDtype::F16, &a, &b, &c).unwrap();
        // C as f16 pairs: lane (g, t) holds (g, 2t), (g, 2t+1) in c0 and rows g+8 in c1.
        let half = |v: f32| half::f16::from_f32(v).to_bits() as u32;
        let c16: LaneRegs = std::array::from_fn(|lane| {
            let (g, t) = (lane / 4, lane % 4);
            let r = |row: usize| half(c[[row, 2 * t]]) | half(c[[row, 2 * t + 1]]) << 16;
            [r(g), r(g + 8), 0, 0]
        });
        let op = WarpOp::Mma {
            kind,
            a: p.a,
            b: p.b.map(|r| [r[0], r[1], 0, 0]),
            c: c16,
        };
        let step = execute(&mut SharedMemory::zeroed(0), &op).unwrap();
        assert_eq!(step.regs_per_lane, 2);
        for lane in 0..32usize {
            let (g, t) = (lane / 4, lane % 4);
            for (reg, row) in [(0, g), (1, g + 8)] {
                for pos in 0..2 {
                    let bits = (step.regs[lane][reg] >> (16 * pos)) as u16;
                    let got = half::f16::from_bits(bits).to_f32();
                    assert_eq!(got, want[[row, 2 * t + pos]], "lane {lane} reg {reg}");
                }
            }
        }
    }

    #[test]
    fn register_segments_cover_each_access_once() {
        // Every byte of every address lane's access belongs to exactly one (lane, reg) segment.
        for ins in [
            "ld.shared.u8",
            "ld.shared.u16",
            "ld.shared.b32",
            "st.shared.v2.b32",
            "ld.shared.v4.b32",
            "ldmatrix.x1",
            "ldmatrix.x2.trans",
            "stmatrix.x4",
            "stmatrix.x4.trans",
            "cp.async.ca.shared.global.8",
        ] {
            let ins = Instruction::parse(ins).unwrap();
            let w = ins.bytes_per_address() as usize;
            let mut seen = vec![0u32; WARP_SIZE * w];
            for lane in 0..WARP_SIZE {
                for reg in 0..4 {
                    for s in register_segments(ins, lane, reg).as_slice() {
                        for b in 0..s.len as usize {
                            seen[s.addr_lane as usize * w + s.offset as usize + b] += 1;
                        }
                    }
                }
            }
            let lanes = ins.address_lanes();
            for (i, &n) in seen.iter().enumerate() {
                let want = lanes >> (i / w) & 1;
                assert_eq!(n, want, "{ins} byte {i}");
            }
        }
    }

    #[test]
    fn a_register_within_one_row_is_one_segment() {
        // PTX ISA §9.7.14.5.15: without .trans, register r of lane l holds row l/4 of matrix r,
        // columns 2(l%4) and 2(l%4) + 1: four adjacent bytes of the row address lane 8r + l/4
        // gave, so one 4-byte segment. With .trans it holds column l/4 of rows 2(l%4) and
        // 2(l%4) + 1: two bytes from each of two rows, two segments, the low half first.
        // Lane 13 (l/4 = 3, l%4 = 1), register 2.
        let seg = |addr_lane, offset, len| Segment {
            addr_lane,
            offset,
            len,
        };
        for (trans, want) in [
            (false, vec![seg(8 * 2 + 3, 2 * 2, 4)]),
            (
                true,
                vec![seg(8 * 2 + 2, 2 * 3, 2), seg(8 * 2 + 3, 2 * 3, 2)],
            ),
        ] {
            for ins in [
                Instruction::Ldmatrix {
                    num: MatrixCount::X4,
                    trans,
                },
                Instruction::Stmatrix {
                    num: MatrixCount::X4,
                    trans,
                },
            ] {
                assert_eq!(register_segments(ins, 13, 2).as_slice(), &want[..], "{ins}");
            }
        }
        // ld.shared.v2.b32: register 1 of lane 7 is bytes 4..8 of lane 7's own access.
        let v2 = Instruction::Ld(AccessWidth::V2);
        assert_eq!(register_segments(v2, 7, 1).as_slice(), &[seg(7, 4, 4)]);
    }

    #[test]
    fn request_is_the_shared_request_and_none_for_an_mma() {
        let addrs: [u32; WARP_SIZE] = std::array::from_fn(|l| 8 * l as u32);
        let op = WarpOp::ld(AccessWidth::V2, addrs, 0x0f0f);
        let r = op.request().expect("a shared request");
        assert_eq!(r.instruction, Instruction::Ld(AccessWidth::V2));
        assert_eq!((r.lane_byte_offsets, r.active_mask), (addrs, 0x0f0f));
        let mma = WarpOp::Mma {
            kind: MmaKind::new(MmaShape::M16N8K16, MmaDtype::F16, MmaAcc::F32).unwrap(),
            a: [[0; 4]; WARP_SIZE],
            b: [[0; 4]; WARP_SIZE],
            c: [[0; 4]; WARP_SIZE],
        };
        assert!(mma.request().is_none());
    }

    /// ldmatrix on index-filled memory (moved from `sim::ldmatrix`'s tests, which no longer
    /// import the executor).
    #[test]
    fn executes_on_index_filled_memory() {
        let mut smem = SharedMemory::with_b16_indices(4096);
        // x4 over a 16x16 row-major f16 tile (pitch 16 elements = 32 bytes):
        // matrices: (rows 0-7, cols 0-7), (rows 8-15, cols 0-7), (rows 0-7, cols 8-15), (8-15, 8-15)
        let offs = std::array::from_fn(|l| {
            let (m, r) = (l as u32 / 8, l as u32 % 8);
            ((m % 2) * 8 + r) * 32 + (m / 2) * 16
        });
        let res = execute(&mut smem, &WarpOp::ldmatrix(MatrixCount::X4, false, offs)).unwrap();
        // lane 5: g=1, t=1 -> reg0 = tile(1, 2..3) = indices 18, 19.
        assert_eq!(res.regs[5][0], 18 | (19 << 16));
        // reg3 = tile(9, 10..11) = 154, 155
        assert_eq!(res.regs[5][3], 154 | (155 << 16));
        let t = execute(&mut smem, &WarpOp::ldmatrix(MatrixCount::X4, true, offs)).unwrap();
        // trans: lane 5 reg0 = (row 2, col 1), (row 3, col 1) = 33, 49
        assert_eq!(t.regs[5][0], 33 | (49 << 16));
        assert_eq!(res.cost.wavefronts, 8); // 32-byte pitch: 2-way per matrix
    }
}
