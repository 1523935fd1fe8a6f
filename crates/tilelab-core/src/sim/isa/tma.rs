//! The Tensor Memory Accelerator's 2-D tile copy, `cp.async.bulk.tensor.2d.shared::cluster.global
//! .mbarrier::complete_tx::bytes` (SASS `UTMALDG.2D`), with a `CUtensorMap` built by the driver's
//! `cuTensorMapEncodeTiled`: **where each element of the box lands in shared memory** for every
//! swizzle mode.
//!
//! A box of `rows × cols` elements (`boxDim[1] × boxDim[0]`; `cols` is the inner, contiguous
//! dimension) of `elem_bytes`-byte elements is written row after row from the destination address
//! `base`, each row taking `pitch` bytes: the row's own `cols * elem_bytes` bytes, **padded to the
//! swizzle span** (32, 64 or 128 bytes) when a swizzled row is narrower. Then the swizzle permutes
//! **16-byte chunks** by XOR-ing bits of the *shared-memory address itself*:
//!
//! ```text
//!   pitch   = max(cols * elem_bytes, span)        (span: NONE 0, 32B 32, 64B 64, 128B 128)
//!   linear  = base + row * pitch + col * elem_bytes                    (bytes)
//!   address = linear ^ (((linear >> 7) & mask) << 4)
//!   mask:  SWIZZLE_NONE 0,  SWIZZLE_32B 1,  SWIZZLE_64B 3,  SWIZZLE_128B 7
//! ```
//!
//! i.e. the 16-byte chunk index (address bits 4..) is XOR-ed with the 128-byte line index (bits
//! 7..) modulo 2, 4 or 8: CuTe's `Swizzle<1,4,3>`, `Swizzle<2,4,3>`, `Swizzle<3,4,3>` on **byte**
//! addresses (CUTLASS `cute/atom/mma_traits_sm90_gmma.hpp`, `Layout_K_SW{32,64,128}_Atom_Bits`
//! composed with `Swizzle<B,4,3>`). On *element* offsets of `e`-byte elements the same map is
//! `Swizzle<B, 4 - log2(e), 3>`: `Swizzle<3,3,3>` for f16 in 128B mode, the swizzle
//! [`crate::sim::layout::Swizzle`] and `tilelab sim bank-conflicts --layout swizzle:3,3,3` use. The
//! pattern repeats every 256, 512 or 1024 bytes (the repeat, [`TmaSwizzle::repeat_bytes`]).
//!
//! Measured on an H200 (`tests/data/h200_tma_2026-11-30.json`, 107 boxes, every byte of every
//! footprint): the padding of narrow rows (e.g. 16-byte rows under 128B swizzle land 128 bytes
//! apart, the other 112 bytes of each line untouched), and that the XOR uses the absolute address:
//! a 128B-swizzled box at 128, 256 or 512 mod 1024 starts in phase 1, 2 or 4 of the pattern (so
//! a tile a `wgmma` descriptor with base offset 0 reads must sit on the repeat, as CUTLASS aligns
//! it; tilelab allows the others and shows where the data lands).
//!
//! Rules checked (CUDA driver API, `cuTensorMapEncodeTiled`, and the driver's answers in the
//! measured file; PTX ISA, `cp.async.bulk.tensor`): `boxDim[i]` in 1..=256; `boxDim[0] *
//! elem_bytes` a multiple of 16 bytes; with a swizzle, the inner box bytes at most the swizzle span
//! (the driver returns `CUDA_ERROR_INVALID_VALUE` otherwise); the destination 128-byte aligned;
//! the box's footprint from the destination inside one block's shared memory (sm_90: 227 KB =
//! 232,448 bytes, [`Arch::limits`]).
//!
//! # Tensor maps of rank 1..=5 and the bulk ops
//! [`TensorMap`] holds `cuTensorMapEncodeTiled`'s arguments and applies its rules (rank 1..=5,
//! `globalDim` 1..=2^32, `globalStrides` multiples of 16 below 2^40, `boxDim` 1..=256,
//! `elementStrides` 1, the inner-box rules above), with the text form
//! `DTYPE:DIMS:STRIDES:BOX[:SWIZZLE]` ([`TensorMap::parse`]). A box of rank 3..5 lands as rows
//! of the 2-D rule: dimension 1 inside 2 inside 3 …, row `i1 + b1·(i2 + b2·(i3 + …))`
//! ([`TensorMap::smem_box`]). The copies themselves (load with zero fill, store, reduction,
//! `cp.async.bulk`) are run by [`crate::sim::exec`]; [`check_bulk_copy`] and [`ReduceOp`] hold their
//! rules. The swizzle is CuTe's [`Swizzle`] (the one of [`crate::sim::layout`]), not a formula of its
//! own.

use std::fmt;

use crate::sim::arch::Arch;
use crate::sim::error::SimError;
use crate::sim::layout::Swizzle;

/// Largest `boxDim` entry the driver accepts (elements).
pub const MAX_BOX_DIM: u32 = 256;
/// Alignment the PTX ISA requires of a bulk tensor copy's shared-memory destination (bytes).
pub const DST_ALIGN: u32 = 128;

/// `CUtensorMapSwizzle` (and, with another numbering, the `wgmma` descriptor's layout type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum TmaSwizzle {
    /// `CU_TENSOR_MAP_SWIZZLE_NONE`.
    None,
    /// `CU_TENSOR_MAP_SWIZZLE_32B`: 16-byte chunks swizzled within 32-byte spans.
    B32,
    /// `CU_TENSOR_MAP_SWIZZLE_64B`: 16-byte chunks swizzled within 64-byte spans.
    B64,
    /// `CU_TENSOR_MAP_SWIZZLE_128B`: 16-byte chunks swizzled within 128-byte spans.
    B128,
}

/// Every spelling [`TmaSwizzle::parse`] accepts.
pub const SWIZZLE_NAMES: &str = "none, 32B, 64B, 128B";

impl TmaSwizzle {
    /// All four modes, none first.
    pub const ALL: [TmaSwizzle; 4] = [
        TmaSwizzle::None,
        TmaSwizzle::B32,
        TmaSwizzle::B64,
        TmaSwizzle::B128,
    ];

    /// Parses `none`, `32B`, `64B`, `128B` (also lower-case `b`, or a bare `0/32/64/128`).
    ///
    /// # Errors
    /// [`SimError::Invalid`] naming the value and [`SWIZZLE_NAMES`].
    pub fn parse(s: &str) -> Result<TmaSwizzle, SimError> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "none" | "0" => TmaSwizzle::None,
            "32b" | "32" => TmaSwizzle::B32,
            "64b" | "64" => TmaSwizzle::B64,
            "128b" | "128" => TmaSwizzle::B128,
            _ => {
                return Err(SimError::Invalid(format!(
                    "unknown swizzle mode '{s}'; allowed: {SWIZZLE_NAMES}"
                )));
            }
        })
    }

    /// Number of XOR-ed bits B of `Swizzle<B,4,3>` (0 for none).
    pub fn bits(self) -> u32 {
        match self {
            TmaSwizzle::None => 0,
            TmaSwizzle::B32 => 1,
            TmaSwizzle::B64 => 2,
            TmaSwizzle::B128 => 3,
        }
    }

    /// The span in bytes within which 16-byte chunks move (32/64/128; 16 for none: a chunk).
    pub fn span_bytes(self) -> u32 {
        16 << self.bits()
    }

    /// Bytes after which the pattern repeats: 128-byte lines × 2^B (256, 512, 1024; 16 for none).
    pub fn repeat_bytes(self) -> u32 {
        if self == TmaSwizzle::None {
            16
        } else {
            128 << self.bits()
        }
    }

    /// CuTe's `Swizzle<B,4,3>` on byte addresses (`None` for no swizzle).
    pub fn cute_bytes(self) -> Option<Swizzle> {
        (self != TmaSwizzle::None).then_some(Swizzle {
            bits: self.bits(),
            base: 4,
            shift: 3,
        })
    }

    /// The same swizzle on element offsets of `elem_bytes`-byte elements (1, 2, 4, 8, 16):
    /// `Swizzle<B, 4 - log2(elem_bytes), 3>`.
    pub fn cute_elements(self, elem_bytes: u32) -> Option<Swizzle> {
        let base = 4u32.checked_sub(elem_bytes.trailing_zeros())?;
        (self != TmaSwizzle::None && elem_bytes.is_power_of_two()).then_some(Swizzle {
            bits: self.bits(),
            base,
            shift: 3,
        })
    }

    /// Applies the swizzle to a shared-memory byte address: [`Self::cute_bytes`]'s
    /// `Swizzle<B,4,3>` (the one [`Swizzle`] of layouts, TMA and wgmma), the identity for none.
    pub fn apply(self, addr: u32) -> u32 {
        self.cute_bytes().map_or(addr, |s| s.apply(addr))
    }

    /// The driver's enum name, e.g. `CU_TENSOR_MAP_SWIZZLE_128B`.
    pub fn cu_name(self) -> &'static str {
        match self {
            TmaSwizzle::None => "CU_TENSOR_MAP_SWIZZLE_NONE",
            TmaSwizzle::B32 => "CU_TENSOR_MAP_SWIZZLE_32B",
            TmaSwizzle::B64 => "CU_TENSOR_MAP_SWIZZLE_64B",
            TmaSwizzle::B128 => "CU_TENSOR_MAP_SWIZZLE_128B",
        }
    }

    /// The driver's enum value (`CUtensorMapSwizzle`: 0, 1, 2, 3).
    pub fn cu_value(self) -> u32 {
        self.bits()
    }
}

impl fmt::Display for TmaSwizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TmaSwizzle::None => "none",
            TmaSwizzle::B32 => "32B",
            TmaSwizzle::B64 => "64B",
            TmaSwizzle::B128 => "128B",
        })
    }
}

/// One TMA box landing in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct TmaBox {
    /// `boxDim[1]`: rows (elements of the outer dimension).
    pub rows: u32,
    /// `boxDim[0]`: elements of the inner (contiguous) dimension.
    pub cols: u32,
    /// Bytes per element: 1, 2, 4 or 8.
    pub elem_bytes: u32,
    /// The tensor map's swizzle mode.
    pub swizzle: TmaSwizzle,
    /// Shared-memory byte address of the destination.
    pub base: u32,
}

impl TmaBox {
    /// Checks the tensor map and destination rules of the module docs.
    ///
    /// # Errors
    /// [`SimError::Invalid`] naming the offending value and what is allowed.
    pub fn new(
        rows: u32,
        cols: u32,
        elem_bytes: u32,
        swizzle: TmaSwizzle,
        base: u32,
    ) -> Result<TmaBox, SimError> {
        TmaBox::stacked_rows(rows, cols, elem_bytes, swizzle, base, MAX_BOX_DIM)
    }

    /// [`TmaBox::new`] for a box of rank 3..=5 flattened to rows: `rows` is the product of
    /// `boxDim[1..rank]` (each already checked by [`TensorMap::new`]), so it may exceed 256.
    ///
    /// # Errors
    /// Those of [`TmaBox::new`] except the 256-row limit.
    pub fn stacked(
        rows: u32,
        cols: u32,
        elem_bytes: u32,
        swizzle: TmaSwizzle,
        base: u32,
    ) -> Result<TmaBox, SimError> {
        TmaBox::stacked_rows(rows, cols, elem_bytes, swizzle, base, u32::MAX)
    }

    fn stacked_rows(
        rows: u32,
        cols: u32,
        elem_bytes: u32,
        swizzle: TmaSwizzle,
        base: u32,
        max_rows: u32,
    ) -> Result<TmaBox, SimError> {
        let bad = |m: String| Err(SimError::Invalid(m));
        if ![1, 2, 4, 8].contains(&elem_bytes) {
            return bad(format!(
                "element size {elem_bytes} bytes is not allowed; allowed: 1, 2, 4, 8"
            ));
        }
        for (name, v, max) in [
            ("rows (boxDim[1])", rows, max_rows),
            ("columns (boxDim[0])", cols, MAX_BOX_DIM),
        ] {
            if v == 0 || v > max {
                return bad(format!(
                    "box {name} {v} is not allowed; allowed: 1..={max} elements"
                ));
            }
        }
        let inner = cols * elem_bytes;
        if !inner.is_multiple_of(16) {
            return bad(format!(
                "box inner dimension {cols} x {elem_bytes} B = {inner} bytes is not allowed; it must be a multiple of 16 bytes"
            ));
        }
        if swizzle != TmaSwizzle::None && inner > swizzle.span_bytes() {
            return bad(format!(
                "box inner dimension {inner} bytes is not allowed with swizzle {swizzle}; allowed: at most {} bytes (the swizzle span)",
                swizzle.span_bytes()
            ));
        }
        if !base.is_multiple_of(DST_ALIGN) {
            return bad(format!(
                "destination address {base} is not allowed; it must be a multiple of {DST_ALIGN} bytes"
            ));
        }
        let pitch = inner.max(if swizzle == TmaSwizzle::None {
            0
        } else {
            swizzle.span_bytes()
        });
        // The box lands in one block's shared memory: sm_90's per-block limit (TMA is sm_90).
        let smem = u64::from(Arch::Sm90.limits().smem_per_block_bytes);
        let size = u64::from(rows) * u64::from(pitch);
        if u64::from(base) >= smem {
            return bad(format!(
                "destination address {base} is past the end of shared memory; allowed: below {smem} bytes (sm_90's shared memory per block)"
            ));
        }
        if u64::from(base) + size > smem {
            return bad(format!(
                "box of {rows} rows x {pitch} bytes = {size} bytes at destination {base} ends at byte {}, past the end of shared memory; allowed: destination + box bytes <= {smem} (sm_90's shared memory per block)",
                u64::from(base) + size
            ));
        }
        Ok(TmaBox {
            rows,
            cols,
            elem_bytes,
            swizzle,
            base,
        })
    }

    /// Bytes of one box row in shared memory (`cols * elem_bytes`).
    pub fn inner_bytes(&self) -> u32 {
        self.cols * self.elem_bytes
    }

    /// Bytes the box's data has (`rows * inner_bytes`): the transaction count the mbarrier
    /// expects (`mbarrier.arrive.expect_tx`).
    pub fn size_bytes(&self) -> u32 {
        self.rows * self.inner_bytes()
    }

    /// Bytes between consecutive box rows in shared memory: the inner bytes, padded to the
    /// swizzle span when narrower.
    pub fn pitch(&self) -> u32 {
        match self.swizzle {
            TmaSwizzle::None => self.inner_bytes(),
            s => self.inner_bytes().max(s.span_bytes()),
        }
    }

    /// Bytes of shared memory the box spans from `base` (`rows * pitch`); padding bytes inside
    /// it are not written.
    pub fn footprint_bytes(&self) -> u32 {
        self.rows * self.pitch()
    }

    /// 16-byte chunks per box row.
    pub fn chunks_per_row(&self) -> u32 {
        self.inner_bytes() / 16
    }

    /// Shared-memory byte address of element `(row, col)` (no bounds check beyond debug).
    pub fn byte_address(&self, row: u32, col: u32) -> u32 {
        debug_assert!(row < self.rows && col < self.cols);
        let linear = self.base + row * self.pitch() + col * self.elem_bytes;
        self.swizzle.apply(linear)
    }

    /// Shared-memory byte address of the 16-byte chunk `chunk` of box row `row`.
    pub fn chunk_address(&self, row: u32, chunk: u32) -> u32 {
        self.swizzle
            .apply(self.base + row * self.pitch() + chunk * 16)
    }

    /// The inverse map over the footprint: for each 16-byte chunk of shared memory from `base`,
    /// the box `(row, chunk)` it holds (`None` for padding).
    pub fn smem_chunks(&self) -> Vec<Option<(u32, u32)>> {
        let n = (self.footprint_bytes() / 16) as usize;
        let mut out = vec![None; n];
        for r in 0..self.rows {
            for c in 0..self.chunks_per_row() {
                let i = ((self.chunk_address(r, c) - self.base) / 16) as usize;
                out[i] = Some((r, c));
            }
        }
        out
    }
}

/// Largest tensor rank of a tiled `CUtensorMap` (`cuTensorMapEncodeTiled`'s `tensorRank`).
pub const MAX_RANK: usize = 5;
/// Global strides must be below 2^40 bytes (`cuTensorMapEncodeTiled`).
pub const MAX_GLOBAL_STRIDE: u64 = 1 << 40;
/// Global dimensions must be at most 2^32 elements (`cuTensorMapEncodeTiled`).
pub const MAX_GLOBAL_DIM: u64 = 1 << 32;
/// Largest `elementStrides` entry (`cuTensorMapEncodeTiled`).
pub const MAX_ELEMENT_STRIDE: u32 = 8;

/// `CUtensorMapDataType`, by the lower-case short names [`TmaDtype::parse`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum TmaDtype {
    /// `CU_TENSOR_MAP_DATA_TYPE_UINT8`.
    U8,
    /// `CU_TENSOR_MAP_DATA_TYPE_UINT16`.
    U16,
    /// `CU_TENSOR_MAP_DATA_TYPE_UINT32`.
    U32,
    /// `CU_TENSOR_MAP_DATA_TYPE_INT32`.
    S32,
    /// `CU_TENSOR_MAP_DATA_TYPE_UINT64`.
    U64,
    /// `CU_TENSOR_MAP_DATA_TYPE_INT64`.
    S64,
    /// `CU_TENSOR_MAP_DATA_TYPE_FLOAT16`.
    F16,
    /// `CU_TENSOR_MAP_DATA_TYPE_FLOAT32`.
    F32,
    /// `CU_TENSOR_MAP_DATA_TYPE_FLOAT64`.
    F64,
    /// `CU_TENSOR_MAP_DATA_TYPE_BFLOAT16`.
    Bf16,
    /// `CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ`.
    F32Ftz,
    /// `CU_TENSOR_MAP_DATA_TYPE_TFLOAT32`.
    Tf32,
    /// `CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ`.
    Tf32Ftz,
}

/// Every name [`TmaDtype::parse`] accepts.
pub const TMA_DTYPE_NAMES: &str =
    "u8, u16, u32, s32, u64, s64, f16, f32, f64, bf16, f32_ftz, tf32, tf32_ftz";

impl TmaDtype {
    /// All thirteen, in `CUtensorMapDataType` order.
    pub const ALL: [TmaDtype; 13] = [
        TmaDtype::U8,
        TmaDtype::U16,
        TmaDtype::U32,
        TmaDtype::S32,
        TmaDtype::U64,
        TmaDtype::S64,
        TmaDtype::F16,
        TmaDtype::F32,
        TmaDtype::F64,
        TmaDtype::Bf16,
        TmaDtype::F32Ftz,
        TmaDtype::Tf32,
        TmaDtype::Tf32Ftz,
    ];

    /// The short name (`u8`, …, `tf32_ftz`).
    pub fn name(self) -> &'static str {
        match self {
            TmaDtype::U8 => "u8",
            TmaDtype::U16 => "u16",
            TmaDtype::U32 => "u32",
            TmaDtype::S32 => "s32",
            TmaDtype::U64 => "u64",
            TmaDtype::S64 => "s64",
            TmaDtype::F16 => "f16",
            TmaDtype::F32 => "f32",
            TmaDtype::F64 => "f64",
            TmaDtype::Bf16 => "bf16",
            TmaDtype::F32Ftz => "f32_ftz",
            TmaDtype::Tf32 => "tf32",
            TmaDtype::Tf32Ftz => "tf32_ftz",
        }
    }

    /// Parses a short name (case-insensitive).
    ///
    /// # Errors
    /// [`SimError::Invalid`] naming the value and [`TMA_DTYPE_NAMES`].
    pub fn parse(s: &str) -> Result<TmaDtype, SimError> {
        let t = s.trim().to_ascii_lowercase();
        TmaDtype::ALL
            .into_iter()
            .find(|d| d.name() == t)
            .ok_or_else(|| {
                SimError::Invalid(format!(
                    "unknown tensor map data type '{s}'; allowed: {TMA_DTYPE_NAMES}"
                ))
            })
    }

    /// Bytes per element: 1, 2, 4 or 8.
    pub fn bytes(self) -> u32 {
        match self {
            TmaDtype::U8 => 1,
            TmaDtype::U16 | TmaDtype::F16 | TmaDtype::Bf16 => 2,
            TmaDtype::U32
            | TmaDtype::S32
            | TmaDtype::F32
            | TmaDtype::F32Ftz
            | TmaDtype::Tf32
            | TmaDtype::Tf32Ftz => 4,
            TmaDtype::U64 | TmaDtype::S64 | TmaDtype::F64 => 8,
        }
    }
}

impl fmt::Display for TmaDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tiled `CUtensorMap`: the arguments of `cuTensorMapEncodeTiled` (CUDA driver API), with
/// interleave `CU_TENSOR_MAP_INTERLEAVE_NONE`, OOB fill `CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE`
/// (out-of-bounds elements read as zero) and L2 promotion ignored (it changes no byte).
///
/// Dimensions are innermost first. Units: `dims` and `box_dims` in elements, `strides` in bytes
/// (`strides[i]` is `globalStrides[i - 1]`, the byte step of dimension `i`; `strides[0]` is the
/// element size), `elem_strides` in elements. Entries at and beyond `rank` are unused (dims and
/// boxes 1, strides 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct TensorMap {
    /// `tensorDataType`.
    pub dtype: TmaDtype,
    /// `tensorRank`: 1..=5.
    pub rank: usize,
    /// `globalDim`, elements.
    pub dims: [u64; MAX_RANK],
    /// Byte step per dimension: the element size, then `globalStrides`.
    pub strides: [u64; MAX_RANK],
    /// `boxDim`, elements.
    pub box_dims: [u32; MAX_RANK],
    /// `elementStrides`: only 1 is modelled.
    pub elem_strides: [u32; MAX_RANK],
    /// `swizzle`.
    pub swizzle: TmaSwizzle,
}

impl TensorMap {
    /// Builds and validates a map with `cuTensorMapEncodeTiled`'s rules (CUDA driver API; each
    /// rule checked against the H200's driver 580.159.04 in
    /// `tests/data/hopper_probes/h200_tensormap_rules.json`, replayed by
    /// `tests/tensormap_rules.rs`): rank 1..=5; every `globalDim` in 1..=2^32; `globalStrides`
    /// (`global_strides`, bytes, one per dimension 1..rank) multiples of 16 (0 included) and
    /// below 2^40; every `boxDim` in 1..=256;
    /// `boxDim[0] * elemsize` a multiple of 16 bytes; with a swizzle, `boxDim[0] * elemsize` at
    /// most the swizzle span; `elementStrides` in 1..=8, of which only 1 is modelled.
    ///
    /// # Errors
    /// [`SimError::Invalid`], one line naming the value and what is allowed.
    pub fn new(
        dtype: TmaDtype,
        dims: &[u64],
        global_strides: &[u64],
        box_dims: &[u32],
        elem_strides: Option<&[u32]>,
        swizzle: TmaSwizzle,
    ) -> Result<TensorMap, SimError> {
        let bad = |m: String| Err(SimError::Invalid(m));
        let rank = dims.len();
        if rank == 0 || rank > MAX_RANK {
            return bad(format!(
                "tensor rank {rank} is not allowed; allowed: 1..={MAX_RANK} dimensions"
            ));
        }
        if global_strides.len() != rank - 1 || box_dims.len() != rank {
            return bad(format!(
                "a rank-{rank} tensor map takes {rank} dims, {} strides and {rank} box dims; given {}, {} and {}",
                rank - 1,
                dims.len(),
                global_strides.len(),
                box_dims.len()
            ));
        }
        let e = u64::from(dtype.bytes());
        let mut m = TensorMap {
            dtype,
            rank,
            dims: [1; MAX_RANK],
            strides: [0; MAX_RANK],
            box_dims: [1; MAX_RANK],
            elem_strides: [1; MAX_RANK],
            swizzle,
        };
        m.strides[0] = e;
        for (i, &d) in dims.iter().enumerate() {
            if d == 0 || d > MAX_GLOBAL_DIM {
                return bad(format!(
                    "globalDim[{i}] {d} is not allowed; allowed: 1..={MAX_GLOBAL_DIM} elements"
                ));
            }
            m.dims[i] = d;
        }
        for (i, &st) in global_strides.iter().enumerate() {
            // 0 is a multiple of 16: the driver accepts it (every index of the dimension reads
            // the same bytes; tests/data/hopper_probes/h200_tensormap_rules.json).
            if !st.is_multiple_of(16) || st >= MAX_GLOBAL_STRIDE {
                return bad(format!(
                    "globalStrides[{i}] {st} bytes is not allowed; allowed: a multiple of 16 below 2^40"
                ));
            }
            m.strides[i + 1] = st;
        }
        for (i, &b) in box_dims.iter().enumerate() {
            if b == 0 || b > MAX_BOX_DIM {
                return bad(format!(
                    "boxDim[{i}] {b} is not allowed; allowed: 1..={MAX_BOX_DIM} elements"
                ));
            }
            m.box_dims[i] = b;
        }
        if let Some(es) = elem_strides {
            if es.len() != rank {
                return bad(format!(
                    "a rank-{rank} tensor map takes {rank} element strides; given {}",
                    es.len()
                ));
            }
            for (i, &s) in es.iter().enumerate() {
                if s == 0 || s > MAX_ELEMENT_STRIDE {
                    return bad(format!(
                        "elementStrides[{i}] {s} is not allowed; allowed: 1..={MAX_ELEMENT_STRIDE}"
                    ));
                }
                if s != 1 {
                    return bad(format!(
                        "elementStrides[{i}] {s} is not modelled; allowed: 1 (every element of the box)"
                    ));
                }
            }
        }
        let inner = u64::from(m.box_dims[0]) * e;
        if !inner.is_multiple_of(16) {
            return bad(format!(
                "boxDim[0] {} x {e} B = {inner} bytes is not allowed; it must be a multiple of 16 bytes",
                m.box_dims[0]
            ));
        }
        if swizzle != TmaSwizzle::None && inner > u64::from(swizzle.span_bytes()) {
            return bad(format!(
                "boxDim[0] {inner} bytes is not allowed with swizzle {swizzle}; allowed: at most {} bytes (the swizzle span)",
                swizzle.span_bytes()
            ));
        }
        Ok(m)
    }

    /// Parses `DTYPE:DIMS:STRIDES:BOX[:SWIZZLE]` (the form of `--tensor-map`): comma-separated
    /// lists innermost first, dims and box in elements, strides in bytes for dimensions
    /// 1..rank (empty for rank 1), swizzle `none` when left out; e.g.
    /// `f16:512,128:1024:64,128:128B`.
    ///
    /// # Errors
    /// [`SimError::Invalid`] naming the part and what is allowed, or [`TensorMap::new`]'s.
    pub fn parse(spec: &str) -> Result<TensorMap, SimError> {
        const FORM: &str = "DTYPE:DIMS:STRIDES:BOX[:SWIZZLE], e.g. f16:512,128:1024:64,128:128B";
        let parts: Vec<&str> = spec.trim().split(':').collect();
        if !(4..=5).contains(&parts.len()) {
            return Err(SimError::Invalid(format!(
                "tensor map '{spec}' has {} ':'-separated parts; allowed: {FORM}",
                parts.len()
            )));
        }
        fn list<T: std::str::FromStr>(spec: &str, what: &str, s: &str) -> Result<Vec<T>, SimError> {
            if s.trim().is_empty() {
                return Ok(Vec::new());
            }
            s.split(',')
                .map(|v| {
                    v.trim().parse::<T>().map_err(|_| {
                        SimError::Invalid(format!(
                            "tensor map '{spec}': {what} '{v}' is not a whole number; allowed: comma-separated whole numbers"
                        ))
                    })
                })
                .collect()
        }
        let dtype = TmaDtype::parse(parts[0])?;
        let dims: Vec<u64> = list(spec, "dim", parts[1])?;
        let strides: Vec<u64> = list(spec, "stride", parts[2])?;
        let boxes: Vec<u32> = list(spec, "box dim", parts[3])?;
        let sw = match parts.get(4) {
            Some(s) => TmaSwizzle::parse(s)?,
            None => TmaSwizzle::None,
        };
        TensorMap::new(dtype, &dims, &strides, &boxes, None, sw)
    }

    /// Checks `cuTensorMapEncodeTiled`'s remaining arguments, by their driver enum values, for
    /// what the model covers: `interleave` must be `CU_TENSOR_MAP_INTERLEAVE_NONE` (0; 16B and
    /// 32B interleave are not modelled), `oobFill` `CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE` (0: zero
    /// fill; 1, NaN fill, is not modelled); `l2Promotion` (0..=3) changes no byte and is
    /// accepted.
    ///
    /// # Errors
    /// [`SimError::Invalid`] naming the value.
    pub fn check_driver_options(
        interleave: u32,
        oob_fill: u32,
        l2_promotion: u32,
    ) -> Result<(), SimError> {
        let bad = |m: String| Err(SimError::Invalid(m));
        match interleave {
            0 => {}
            1 | 2 => {
                return bad(format!(
                    "tensor map interleave {interleave} (CU_TENSOR_MAP_INTERLEAVE_{}B) is not modelled; allowed: 0 (NONE)",
                    16 * interleave
                ));
            }
            _ => {
                return bad(format!(
                    "tensor map interleave {interleave} is not allowed; allowed: 0 (NONE), 1 (16B), 2 (32B)"
                ));
            }
        }
        match oob_fill {
            0 => {}
            1 => {
                return bad(
                    "tensor map oobFill 1 (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) is not modelled; allowed: 0 (NONE: zero fill)".into(),
                );
            }
            _ => {
                return bad(format!(
                    "tensor map oobFill {oob_fill} is not allowed; allowed: 0 (NONE), 1 (NAN_REQUEST_ZERO_FMA)"
                ));
            }
        }
        if l2_promotion > 3 {
            return bad(format!(
                "tensor map l2Promotion {l2_promotion} is not allowed; allowed: 0..=3 (NONE, 64B, 128B, 256B)"
            ));
        }
        Ok(())
    }

    /// Elements in one box (the product of `boxDim`).
    pub fn box_elements(&self) -> u64 {
        self.box_dims.iter().map(|&b| u64::from(b)).product()
    }

    /// Bytes of one box: the transaction count a load's `mbarrier::complete_tx::bytes` signals,
    /// the whole box also when part of it lies outside the tensor and is zero-filled.
    pub fn box_bytes(&self) -> u64 {
        self.box_elements() * u64::from(self.dtype.bytes())
    }

    /// Rows of the box in shared memory: the product of `boxDim[1..rank]` (1 for rank 1; up
    /// to 256^4, so a u64).
    pub fn box_rows(&self) -> u64 {
        self.box_dims[1..].iter().map(|&b| u64::from(b)).product()
    }

    /// The box as it lands in shared memory at byte address `base`: `box_rows()` rows of
    /// `boxDim[0]` elements (outer dimensions stack boxes of rows, dimension 2 outside 1, …),
    /// placed and swizzled by the measured 2-D rule ([`TmaBox`]).
    ///
    /// # Errors
    /// [`TmaBox::new`]'s destination rules (128-byte aligned, inside sm_90's shared memory).
    pub fn smem_box(&self, base: u32) -> Result<TmaBox, SimError> {
        let rows = u32::try_from(self.box_rows()).map_err(|_| {
            SimError::Invalid(format!(
                "a box of {} rows of {} bytes does not fit sm_90's shared memory per block",
                self.box_rows(),
                u64::from(self.box_dims[0]) * u64::from(self.dtype.bytes())
            ))
        })?;
        TmaBox::stacked(
            rows,
            self.box_dims[0],
            self.dtype.bytes(),
            self.swizzle,
            base,
        )
    }

    /// Row of the shared-memory box (see [`Self::smem_box`]) holding box index `idx` (one per
    /// dimension; `idx[0]` is the column).
    pub fn box_row(&self, idx: &[u32; MAX_RANK]) -> u32 {
        (1..MAX_RANK)
            .rev()
            .fold(0, |row, d| row * self.box_dims[d] + idx[d])
    }

    /// Byte offset from the tensor's global base address of the element at tensor coordinates
    /// `c` (one per dimension), or `None` when any coordinate is outside `0..dims[i]` (the
    /// element a load zero-fills and a store skips).
    pub fn global_offset(&self, c: &[i64; MAX_RANK]) -> Option<u64> {
        let mut off = 0u64;
        for ((&x, &dim), &st) in c.iter().zip(&self.dims).zip(&self.strides).take(self.rank) {
            let x = u64::try_from(x).ok().filter(|&x| x < dim)?;
            off = off.checked_add(x.checked_mul(st)?)?;
        }
        Some(off)
    }

    /// The `cp.async.bulk.tensor.Nd` dimension qualifier, e.g. `2d`.
    pub fn dim_qualifier(&self) -> String {
        format!("{}d", self.rank)
    }
}

impl fmt::Display for TensorMap {
    /// The `--tensor-map` form [`TensorMap::parse`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |v: &[String]| v.join(",");
        let dims: Vec<String> = self.dims[..self.rank]
            .iter()
            .map(|d| d.to_string())
            .collect();
        let st: Vec<String> = self.strides[1..self.rank]
            .iter()
            .map(|d| d.to_string())
            .collect();
        let bx: Vec<String> = self.box_dims[..self.rank]
            .iter()
            .map(|d| d.to_string())
            .collect();
        write!(
            f,
            "{}:{}:{}:{}:{}",
            self.dtype,
            join(&dims),
            join(&st),
            join(&bx),
            self.swizzle
        )
    }
}

/// Rules of `cp.async.bulk` without a tensor map (PTX ISA, "Data Movement and Conversion
/// Instructions: cp.async.bulk"): both addresses 16-byte aligned, the size a non-zero multiple
/// of 16 bytes. No swizzle: the bytes land contiguously.
///
/// # Errors
/// [`SimError::Invalid`] naming the value.
pub fn check_bulk_copy(smem_addr: u32, global_addr: u64, bytes: u32) -> Result<(), SimError> {
    if bytes == 0 || !bytes.is_multiple_of(16) {
        return Err(SimError::Invalid(format!(
            "bulk copy size {bytes} bytes is not allowed; allowed: a non-zero multiple of 16"
        )));
    }
    if !smem_addr.is_multiple_of(16) {
        return Err(SimError::Invalid(format!(
            "bulk copy shared address {smem_addr} is not allowed; it must be a multiple of 16 bytes"
        )));
    }
    if !global_addr.is_multiple_of(16) {
        return Err(SimError::Invalid(format!(
            "bulk copy global address {global_addr:#x} is not allowed; it must be a multiple of 16 bytes"
        )));
    }
    Ok(())
}

/// The reduction of `cp.reduce.async.bulk(.tensor)` (PTX ISA, `.redOp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum ReduceOp {
    /// `.add`.
    Add,
    /// `.min`.
    Min,
    /// `.max`.
    Max,
    /// `.inc`: `old >= src ? 0 : old + 1` (unsigned).
    Inc,
    /// `.dec`: `old == 0 || old > src ? src : old - 1` (unsigned).
    Dec,
    /// `.and`.
    And,
    /// `.or`.
    Or,
    /// `.xor`.
    Xor,
}

impl ReduceOp {
    /// All eight.
    pub const ALL: [ReduceOp; 8] = [
        ReduceOp::Add,
        ReduceOp::Min,
        ReduceOp::Max,
        ReduceOp::Inc,
        ReduceOp::Dec,
        ReduceOp::And,
        ReduceOp::Or,
        ReduceOp::Xor,
    ];

    /// The PTX qualifier without the dot.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Add => "add",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::Inc => "inc",
            ReduceOp::Dec => "dec",
            ReduceOp::And => "and",
            ReduceOp::Or => "or",
            ReduceOp::Xor => "xor",
        }
    }

    /// Parses `add`, `min`, … `xor`.
    ///
    /// # Errors
    /// [`SimError::Invalid`] naming the value.
    pub fn parse(s: &str) -> Result<ReduceOp, SimError> {
        ReduceOp::ALL
            .into_iter()
            .find(|o| o.name() == s.trim())
            .ok_or_else(|| {
                SimError::Invalid(format!(
                    "unknown reduction '{s}'; allowed: add, min, max, inc, dec, and, or, xor"
                ))
            })
    }

    /// Checks the element type is one the PTX ISA allows with this reduction: `.add` on u32,
    /// s32, u64, f32, f64, f16, bf16 (`.noftz`); `.min`/`.max` on u32, s32, u64, s64, f16, bf16;
    /// `.inc`/`.dec` on u32; `.and`/`.or`/`.xor` on the 32- and 64-bit integer types (`.b32`,
    /// `.b64`).
    ///
    /// # Errors
    /// [`SimError::Invalid`] naming the pair.
    pub fn check_type(self, t: TmaDtype) -> Result<(), SimError> {
        use TmaDtype::*;
        let (ok, allowed) = match self {
            ReduceOp::Add => (
                matches!(t, U32 | S32 | U64 | F32 | F64 | F16 | Bf16),
                "u32, s32, u64, f32, f64, f16, bf16",
            ),
            ReduceOp::Min | ReduceOp::Max => (
                matches!(t, U32 | S32 | U64 | S64 | F16 | Bf16),
                "u32, s32, u64, s64, f16, bf16",
            ),
            ReduceOp::Inc | ReduceOp::Dec => (t == U32, "u32"),
            ReduceOp::And | ReduceOp::Or | ReduceOp::Xor => (
                matches!(t, U32 | S32 | U64 | S64),
                "u32, s32, u64, s64 (.b32, .b64)",
            ),
        };
        if ok {
            Ok(())
        } else {
            Err(SimError::Invalid(format!(
                "cp.reduce.async.bulk .{} on {t} is not allowed; allowed: {allowed}",
                self.name()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::layout::Layout;

    #[test]
    fn swizzle_128b_is_cute_343_on_bytes_and_333_on_f16_offsets() {
        let b = TmaBox::new(64, 64, 2, TmaSwizzle::B128, 0).unwrap();
        let l = Layout::parse("swizzle:3,3,3", 64, 64, 2).unwrap();
        let s343 = TmaSwizzle::B128.cute_bytes().unwrap();
        assert_eq!((s343.bits, s343.base, s343.shift), (3, 4, 3));
        for r in 0..64 {
            for c in 0..64 {
                let a = b.byte_address(r, c);
                assert_eq!(a, l.byte_offset(r, c), "({r},{c})");
                assert_eq!(a, s343.apply(r * 128 + c * 2));
            }
        }
        // Row 1's first chunk moves to chunk 1 of its line, row 7's to chunk 7 (PTX ISA's
        // 128B swizzle figure: line i holds chunk j at j ^ i).
        assert_eq!(b.chunk_address(1, 0), 128 + 16);
        assert_eq!(b.chunk_address(7, 2), 7 * 128 + (2 ^ 7) * 16);
    }

    /// Every spelling `parse` takes, the driver's names and values (CUDA driver API,
    /// `CUtensorMapSwizzle`: `CU_TENSOR_MAP_SWIZZLE_NONE` 0, `_32B` 1, `_64B` 2, `_128B` 3), the
    /// shown name; CuTe's element form exists only for a swizzle on a power-of-two element size;
    /// the inverse map has one entry per 16-byte chunk of the footprint (64x64 f16, 128B: 64 rows
    /// of 128 bytes, 512 chunks; row 1's chunk c sits at position c ^ 1 of line 1).
    /// (Third mutation round, 2026-12-01.)
    #[test]
    fn names_values_spellings_and_the_chunk_map() {
        let rows = [
            (
                ["none", "0", " NONE "],
                TmaSwizzle::None,
                "CU_TENSOR_MAP_SWIZZLE_NONE",
                0,
                "none",
            ),
            (
                ["32B", "32", "32b"],
                TmaSwizzle::B32,
                "CU_TENSOR_MAP_SWIZZLE_32B",
                1,
                "32B",
            ),
            (
                ["64B", "64", "64b"],
                TmaSwizzle::B64,
                "CU_TENSOR_MAP_SWIZZLE_64B",
                2,
                "64B",
            ),
            (
                ["128B", "128", "128b"],
                TmaSwizzle::B128,
                "CU_TENSOR_MAP_SWIZZLE_128B",
                3,
                "128B",
            ),
        ];
        for (texts, sw, name, value, shown) in rows {
            for t in texts {
                assert_eq!(TmaSwizzle::parse(t).unwrap(), sw, "{t}");
            }
            assert_eq!((sw.cu_name(), sw.cu_value()), (name, value));
            assert_eq!(sw.to_string(), shown);
        }
        assert!(TmaSwizzle::parse("16B").is_err());
        assert!(TmaSwizzle::None.cute_elements(2).is_none());
        assert!(TmaSwizzle::B128.cute_elements(3).is_none());
        let m = TmaBox::new(64, 64, 2, TmaSwizzle::B128, 0)
            .unwrap()
            .smem_chunks();
        assert_eq!(m.len(), 512);
        assert_eq!((m[8], m[9]), (Some((1, 1)), Some((1, 0))));
    }

    #[test]
    fn smaller_modes_are_cute_143_and_243() {
        for (sw, bits) in [(TmaSwizzle::B32, 1), (TmaSwizzle::B64, 2)] {
            let s = sw.cute_bytes().unwrap();
            assert_eq!((s.bits, s.base, s.shift), (bits, 4, 3));
            let e = sw.cute_elements(4).unwrap();
            assert_eq!((e.bits, e.base, e.shift), (bits, 2, 3));
        }
        // 32B mode, f32, 8-element rows (32 bytes): rows 4..7 (bit 7 set) swap their two chunks.
        let b = TmaBox::new(8, 8, 4, TmaSwizzle::B32, 0).unwrap();
        assert_eq!(b.chunk_address(3, 0), 96);
        assert_eq!(b.chunk_address(4, 0), 128 + 16);
        assert_eq!(b.chunk_address(4, 1), 128);
    }

    #[test]
    fn every_placement_is_a_permutation_of_the_box_bytes() {
        for sw in TmaSwizzle::ALL {
            for e in [1, 2, 4] {
                for inner in [16, 32, 64, 128] {
                    if sw != TmaSwizzle::None && inner > sw.span_bytes() {
                        continue;
                    }
                    // Every chunk is placed once, inside the footprint.
                    let b = TmaBox::new(24, inner / e, e, sw, 2048).unwrap();
                    let mut seen: Vec<(u32, u32)> = b.smem_chunks().into_iter().flatten().collect();
                    seen.sort();
                    let want: Vec<(u32, u32)> = (0..24)
                        .flat_map(|r| (0..inner / 16).map(move |c| (r, c)))
                        .collect();
                    assert_eq!(seen, want, "{sw} e{e} inner{inner}");
                }
            }
        }
    }

    #[test]
    fn narrow_rows_are_padded_to_the_span() {
        // 16-byte rows under 128B swizzle: one row per 128-byte line, chunk 0 of row r at
        // chunk r % 8 of line r.
        let b = TmaBox::new(8, 8, 2, TmaSwizzle::B128, 0).unwrap();
        assert_eq!(
            (b.pitch(), b.footprint_bytes(), b.size_bytes()),
            (128, 1024, 128)
        );
        for r in 0..8 {
            assert_eq!(b.chunk_address(r, 0), r * 128 + r * 16);
        }
        // Without swizzle rows stay packed.
        assert_eq!(
            TmaBox::new(8, 8, 2, TmaSwizzle::None, 0).unwrap().pitch(),
            16
        );
        // The XOR uses the address: a box at 128 starts in phase 1.
        let c = TmaBox::new(2, 64, 2, TmaSwizzle::B128, 128).unwrap();
        assert_eq!(c.chunk_address(0, 0), 128 + 16);
    }

    #[test]
    fn rule_violations_name_the_value() {
        let e = |r, c, b, s, base| TmaBox::new(r, c, b, s, base).unwrap_err().to_string();
        assert!(e(64, 128, 2, TmaSwizzle::B128, 0).contains("256 bytes"));
        assert!(e(64, 128, 2, TmaSwizzle::B128, 0).contains("at most 128"));
        assert!(e(64, 4, 2, TmaSwizzle::None, 0).contains("multiple of 16"));
        assert!(e(257, 8, 2, TmaSwizzle::None, 0).contains("1..=256"));
        assert!(e(8, 64, 2, TmaSwizzle::B128, 64).contains("multiple of 128"));
        assert!(e(8, 8, 2, TmaSwizzle::None, 64).contains("multiple of 128"));
        assert!(e(8, 8, 3, TmaSwizzle::None, 0).contains("allowed: 1, 2, 4, 8"));
        // Issue #26: `--base 300000` (and any destination past 227 KB) printed a placement.
        assert_eq!(
            e(64, 64, 2, TmaSwizzle::B128, 299_904),
            "destination address 299904 is past the end of shared memory; allowed: below 232448 bytes (sm_90's shared memory per block)"
        );
        // 256 rows of 2048 bytes (256 x u64, no swizzle): 512 KiB, more than a block has.
        assert_eq!(
            e(256, 256, 8, TmaSwizzle::None, 0),
            "box of 256 rows x 2048 bytes = 524288 bytes at destination 0 ends at byte 524288, past the end of shared memory; allowed: destination + box bytes <= 232448 (sm_90's shared memory per block)"
        );
        // The last byte may be the last of shared memory, not one more: 8 KiB ending at 232448.
        assert!(TmaBox::new(64, 64, 2, TmaSwizzle::B128, 232_448 - 8192).is_ok());
        assert!(
            e(64, 64, 2, TmaSwizzle::B128, 232_448 - 8192 + 128).contains("ends at byte 232576")
        );
        assert!(
            TmaSwizzle::parse("96B")
                .unwrap_err()
                .to_string()
                .contains("'96B'")
        );
    }
}
