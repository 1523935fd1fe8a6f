//! `wgmma.mma_async.sync.aligned` (PTX ISA 9.7.15 "Asynchronous Warpgroup Level Matrix
//! Multiply-Accumulate", sm_90a; SASS `HGMMA`/`QGMMA`/`IGMMA`): the **ISA facts** the one
//! executor ([`crate::sim::exec`], [`crate::sim::exec::WgmmaOp`]) uses, no execution of their own. A
//! warpgroup of 128 threads (4 consecutive warps) computes D (64×N, in registers) = A (64×K) ·
//! B (K×N) (+ D), K = 32 bytes of input: m64nNk16 (f16, bf16), m64nNk8 (tf32), m64nNk32 (e4m3,
//! e5m2, s8, u8) ([`WgmmaKind`]: the allowed types, accumulators and N), with A and B read from
//! shared memory through 64-bit **matrix descriptors** (A may instead come from registers:
//! [`WgmmaKind::a_fragment`]).
//!
//! # Matrix descriptor (PTX ISA "Matrix Descriptor Format"; CUTLASS `cute/arch/mma_sm90_desc.hpp`)
//! ```text
//!   bits  0..14  start address >> 4          bits 32..46  stride byte offset (SBO) >> 4
//!   bits 16..30  leading byte offset (LBO) >> 4   bits 49..52  base offset (0 here)
//!   bits 62..64  layout type: 0 no swizzle (interleave), 1 128B, 2 64B, 3 32B
//! ```
//!
//! # Canonical layouts (bytes; `e` = element bytes = 2, `W` = swizzle span 32/64/128)
//! Operands are made of **core matrices** of 8 rows × 16 bytes. For one k16 block, element
//! `(mn, k)` of A (mn = m) or B (mn = n) is read at `start + offset`, the swizzle of the mode then
//! applied to that *address* (CuTe `Swizzle<1|2|3,4,3>`, as in [`crate::sim::tma`]):
//! ```text
//! K-major  none:  (mn/8)*SBO + (k/8)*LBO + (mn%8)*16 + (k%8)*e
//! K-major  W:     (mn/8)*SBO + (mn%8)*W  + k*e                      (LBO unused)
//! MN-major none:  (mn/8)*SBO + (k/8)*LBO + (k%8)*16 + (mn%8)*e
//! MN-major W:     (mn/(W/e))*LBO + (k/8)*SBO + (k%8)*W + (mn%(W/e))*e
//! ```
//! (CUTLASS `cute/atom/mma_traits_sm90_gmma.hpp`, `make_gmma_desc`: note that LBO and SBO swap
//! roles between the no-swizzle and swizzled MN-major forms.) K-major is PTX's non-transposed
//! operand (`imm-trans-a/b` = 0): A row-major M×K, B column-major K×N.
//!
//! # Accumulator fragment (PTX ISA "wgmma .m64nNk16 register fragment layout for D")
//! Thread `t` of the warpgroup, warp `w = t/32`, `g = (t%32)/4`, `q = t%4`, register `d[i]`
//! (i < N/2): row `16w + g + 8*((i%4)/2)`, column `8*(i/4) + 2q + i%2`. A in registers follows
//! `mma.m16n8k16`'s A fragment, rows offset by 16w: `a0:(g, 2q+h) a1:(g+8, 2q+h) a2:(g, 2q+8+h)
//! a3:(g+8, 2q+8+h)`. Checked on an H200, register by register (`tests/data/h200_wgmma_*.json`).

use std::fmt;

use crate::sim::error::SimError;
use crate::sim::mma::MmaDtype;
use crate::sim::tma::TmaSwizzle;

/// Threads in a warpgroup.
pub const WARPGROUP_THREADS: usize = 128;
/// Rows of A and D.
pub const M: u32 = 64;
/// K of one instruction (f16/bf16).
pub const K: u32 = 16;
/// Largest byte value a 14-bit descriptor field holds (`(2^14 - 1) << 4`).
pub const FIELD_MAX_BYTES: u32 = ((1 << 14) - 1) << 4;

/// Which dimension is contiguous in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Major {
    /// K-major: elements adjacent in K are adjacent in memory (`imm-trans` = 0).
    K,
    /// MN-major: elements adjacent in M (A) or N (B) are adjacent (`imm-trans` = 1).
    Mn,
}

impl Major {
    /// Parses `k` or `mn`.
    ///
    /// # Errors
    /// [`SimError::Invalid`] naming the value.
    pub fn parse(s: &str) -> Result<Major, SimError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "k" => Ok(Major::K),
            "mn" | "m" | "n" => Ok(Major::Mn),
            _ => Err(SimError::Invalid(format!(
                "unknown major '{s}'; allowed: k, mn"
            ))),
        }
    }

    /// PTX's `imm-trans` immediate: 0 for K-major, 1 for MN-major.
    pub fn imm_trans(self) -> u32 {
        match self {
            Major::K => 0,
            Major::Mn => 1,
        }
    }
}

impl fmt::Display for Major {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Major::K => "K-major",
            Major::Mn => "MN-major",
        })
    }
}

/// The descriptor's 2-bit layout type of a swizzle mode (0 none, 1 128B, 2 64B, 3 32B).
pub fn layout_type(s: TmaSwizzle) -> u64 {
    match s {
        TmaSwizzle::None => 0,
        TmaSwizzle::B128 => 1,
        TmaSwizzle::B64 => 2,
        TmaSwizzle::B32 => 3,
    }
}

/// A shared-memory matrix descriptor, fields in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct MatrixDescriptor {
    /// Shared-memory byte address of the operand's first core matrix (multiple of 16).
    pub start_address: u32,
    /// Leading dimension byte offset (multiple of 16).
    pub leading_byte_offset: u32,
    /// Stride dimension byte offset (multiple of 16).
    pub stride_byte_offset: u32,
    /// Matrix base offset (bits 49..52); only 0 is modelled.
    pub base_offset: u32,
    /// Swizzle mode (layout type).
    pub swizzle: TmaSwizzle,
}

impl MatrixDescriptor {
    /// Packs the 64-bit descriptor.
    ///
    /// # Errors
    /// [`SimError::Invalid`] for a field that is not a multiple of 16 or exceeds 14 bits after
    /// the shift, or a base offset other than 0.
    pub fn encode(&self) -> Result<u64, SimError> {
        let field = |name: &str, v: u32| -> Result<u64, SimError> {
            if !v.is_multiple_of(16) || v > FIELD_MAX_BYTES {
                return Err(SimError::Invalid(format!(
                    "descriptor {name} {v} bytes is not allowed; allowed: multiples of 16 up to {FIELD_MAX_BYTES}"
                )));
            }
            Ok((v >> 4) as u64)
        };
        if self.base_offset != 0 {
            return Err(SimError::Invalid(format!(
                "descriptor base offset {} is not modelled; allowed: 0 (tiles aligned to the swizzle repeat)",
                self.base_offset
            )));
        }
        Ok(field("start address", self.start_address)?
            | field("leading byte offset", self.leading_byte_offset)? << 16
            | field("stride byte offset", self.stride_byte_offset)? << 32
            | layout_type(self.swizzle) << 62)
    }

    /// Unpacks a 64-bit descriptor (unused bits ignored).
    pub fn decode(d: u64) -> MatrixDescriptor {
        let f = |shift: u32| (((d >> shift) & 0x3fff) as u32) << 4;
        MatrixDescriptor {
            start_address: f(0),
            leading_byte_offset: f(16),
            stride_byte_offset: f(32),
            base_offset: ((d >> 49) & 7) as u32,
            swizzle: match d >> 62 {
                1 => TmaSwizzle::B128,
                2 => TmaSwizzle::B64,
                3 => TmaSwizzle::B32,
                _ => TmaSwizzle::None,
            },
        }
    }

    /// Byte address of element `(mn, k)` (`mn` < 64 for A or < N for B, `k` < 16) of a 2-byte
    /// operand of the given major (module docs' formulas).
    pub fn element_address(&self, major: Major, mn: u32, k: u32) -> u32 {
        self.element_address_of(major, mn, k, 2)
    }

    /// [`Self::element_address`] for `elem_bytes`-byte elements (1, 2 or 4): K is counted in
    /// elements, the canonical layouts in bytes (`k * elem_bytes` replaces `k * 2`; a core
    /// matrix row holds `16 / elem_bytes` elements). MN-major exists only for 2-byte types
    /// (the PTX ISA's `imm-trans` is f16/bf16 only); it is computed as for 2 bytes.
    pub fn element_address_of(&self, major: Major, mn: u32, k: u32, elem_bytes: u32) -> u32 {
        let e = elem_bytes;
        let kb = k * e;
        let (lbo, sbo) = (self.leading_byte_offset, self.stride_byte_offset);
        let off = match (major, self.swizzle) {
            (Major::K, TmaSwizzle::None) => {
                (mn / 8) * sbo + (kb / 16) * lbo + (mn % 8) * 16 + kb % 16
            }
            (Major::K, s) => (mn / 8) * sbo + (mn % 8) * s.span_bytes() + kb,
            (Major::Mn, TmaSwizzle::None) => {
                (mn / 8) * sbo + (k / 8) * lbo + (k % 8) * 16 + (mn % 8) * 2
            }
            (Major::Mn, s) => {
                let w = s.span_bytes();
                let per = w / 2;
                (mn / per) * lbo + (k / 8) * sbo + (k % 8) * w + (mn % per) * 2
            }
        };
        self.swizzle.apply(self.start_address.wrapping_add(off))
    }

    /// The 8 row addresses (16 bytes each) of the core matrix holding element `(mn, k)`: the
    /// shared-memory footprint the tensor core reads for it. Rows run along MN for K-major and
    /// along K for MN-major operands.
    pub fn core_matrix_rows(&self, major: Major, mn: u32, k: u32) -> [u32; 8] {
        self.core_matrix_rows_of(major, mn, k, 2)
    }

    /// [`Self::core_matrix_rows`] for `elem_bytes`-byte elements (a K-major core matrix spans
    /// `16 / elem_bytes` elements of K).
    pub fn core_matrix_rows_of(&self, major: Major, mn: u32, k: u32, elem_bytes: u32) -> [u32; 8] {
        let per = 16 / elem_bytes.max(1);
        let (mn0, k0) = match major {
            Major::K => (mn / 8 * 8, k / per * per),
            Major::Mn => (mn / 8 * 8, k / 8 * 8),
        };
        std::array::from_fn(|r| {
            let r = r as u32;
            match major {
                Major::K => self.element_address_of(major, mn0 + r, k0, elem_bytes) & !15,
                Major::Mn => self.element_address_of(major, mn0, k0 + r, elem_bytes) & !15,
            }
        })
    }
}

/// How atoms (8 rows × span bytes; core matrices without swizzle) are tiled over an operand tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum AtomOrder {
    /// Atoms adjacent along MN first (CuTe's `tile_to_shape` default, column-major over (MN, K)).
    MnFirst,
    /// Atoms adjacent along K first.
    KFirst,
}

/// An operand tile of `mn × k` 2-byte elements stored in a canonical layout, and the descriptors
/// that read its k16 blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct OperandTile {
    /// Contiguous dimension.
    pub major: Major,
    /// Swizzle mode.
    pub swizzle: TmaSwizzle,
    /// Rows of A (64) or columns of B (N).
    pub mn: u32,
    /// K extent (a multiple of 16).
    pub k: u32,
    /// Shared-memory byte address of the tile (aligned to the swizzle repeat).
    pub base: u32,
    /// Atom tiling order.
    pub order: AtomOrder,
}

impl OperandTile {
    /// Builds and checks a tile.
    ///
    /// # Errors
    /// [`SimError::Invalid`] when `mn` or `k` do not fill whole atoms (K-major: `mn % 8 == 0`,
    /// `k*2 % span == 0`; MN-major: `mn*2 % span == 0`, `k % 8 == 0`; always `k % 16 == 0`), or
    /// the base is not aligned to the swizzle repeat.
    pub fn new(
        major: Major,
        swizzle: TmaSwizzle,
        mn: u32,
        k: u32,
        base: u32,
        order: AtomOrder,
    ) -> Result<OperandTile, SimError> {
        let w = swizzle.span_bytes();
        let bad = |m: String| Err(SimError::Invalid(m));
        if mn == 0 || k == 0 || !k.is_multiple_of(16) || mn > 256 || k > 256 {
            return bad(format!(
                "operand tile {mn}x{k} is not allowed; allowed: MN 8..=256, K a multiple of 16 up to 256"
            ));
        }
        let (mn_ok, k_ok) = match major {
            Major::K => (mn.is_multiple_of(8), (k * 2).is_multiple_of(w)),
            Major::Mn => ((mn * 2).is_multiple_of(w.max(16)), k.is_multiple_of(8)),
        };
        if !mn_ok || !k_ok {
            return bad(format!(
                "operand tile {mn}x{k} ({major}) does not fill whole {w}-byte swizzle atoms; allowed: {}",
                match major {
                    Major::K => format!("MN a multiple of 8 and K a multiple of {}", w / 2),
                    Major::Mn =>
                        format!("MN a multiple of {} and K a multiple of 8", w.max(16) / 2),
                }
            ));
        }
        let align = swizzle.repeat_bytes().max(16);
        if !base.is_multiple_of(align) {
            return bad(format!(
                "tile address {base} is not allowed with swizzle {swizzle}; it must be a multiple of {align} bytes"
            ));
        }
        let t = OperandTile {
            major,
            swizzle,
            mn,
            k,
            base,
            order,
        };
        // Fields must fit the descriptor.
        let (lbo, sbo) = t.offsets();
        let end = base as u64 + t.size_bytes() as u64;
        if lbo.max(sbo) > FIELD_MAX_BYTES || end > FIELD_MAX_BYTES as u64 + 16 {
            return bad(format!(
                "tile {mn}x{k} at {base} needs offsets or addresses beyond the descriptor's {FIELD_MAX_BYTES} bytes"
            ));
        }
        Ok(t)
    }

    /// Bytes of one atom row: the swizzle span (16 without swizzle).
    fn row_bytes(&self) -> u32 {
        self.swizzle.span_bytes()
    }

    /// Atoms along MN and along K.
    fn atoms(&self) -> (u32, u32) {
        let w = self.row_bytes();
        match self.major {
            Major::K => (self.mn / 8, self.k * 2 / w),
            Major::Mn => (self.mn * 2 / w, self.k / 8),
        }
    }

    /// Byte offset of atom `(i, j)` (i along MN, j along K); an atom is 8 rows of span bytes.
    fn atom_offset(&self, i: u32, j: u32) -> u32 {
        let (nm, nk) = self.atoms();
        let idx = match self.order {
            AtomOrder::MnFirst => i + j * nm,
            AtomOrder::KFirst => j + i * nk,
        };
        idx * 8 * self.row_bytes()
    }

    /// (LBO, SBO) of this tile's descriptors, in bytes (LBO of swizzled K-major tiles is unused
    /// and set to 16, CUTLASS's "assumed 1").
    pub fn offsets(&self) -> (u32, u32) {
        let (dmn, dk) = (self.atom_offset(1, 0), self.atom_offset(0, 1));
        match (self.major, self.swizzle) {
            (Major::K, TmaSwizzle::None) => (dk, dmn),
            (Major::K, _) => (16, dmn),
            (Major::Mn, TmaSwizzle::None) => (dk, dmn),
            (Major::Mn, _) => (dmn, dk),
        }
    }

    /// Bytes the tile occupies.
    pub fn size_bytes(&self) -> u32 {
        self.mn * self.k * 2
    }

    /// Number of k16 blocks (`k / 16`).
    pub fn k_blocks(&self) -> u32 {
        self.k / K
    }

    /// Where element `(mn, k)` of the tile is stored (byte address, swizzle applied).
    pub fn byte_address(&self, mn: u32, k: u32) -> u32 {
        let w = self.row_bytes();
        let lin = match self.major {
            Major::K => {
                let (i, r) = (mn / 8, mn % 8);
                let kb = k * 2;
                self.atom_offset(i, kb / w) + r * w + kb % w
            }
            Major::Mn => {
                let per = w / 2;
                let (i, c) = (mn / per, mn % per);
                let (j, r) = (k / 8, k % 8);
                self.atom_offset(i, j) + r * w + c * 2
            }
        };
        self.swizzle.apply(self.base + lin)
    }

    /// The descriptor of k16 block `kb` (< `k_blocks()`).
    pub fn descriptor(&self, kb: u32) -> MatrixDescriptor {
        let (lbo, sbo) = self.offsets();
        let start = match self.major {
            // k-block kb starts 32*kb bytes into the K extent.
            Major::K => {
                let w = self.row_bytes();
                let kbytes = kb * K * 2;
                if self.swizzle == TmaSwizzle::None {
                    self.base + self.atom_offset(0, kbytes / 16)
                } else {
                    self.base + self.atom_offset(0, kbytes / w) + kbytes % w
                }
            }
            Major::Mn => self.base + self.atom_offset(0, kb * 2),
        };
        MatrixDescriptor {
            start_address: start,
            leading_byte_offset: lbo,
            stride_byte_offset: sbo,
            base_offset: 0,
            swizzle: self.swizzle,
        }
    }
}

/// The operand tiles of one `m64nNk16` problem over K = `k` as `tilelab sim wgmma` and the H200
/// checks place them: A (64 × k) at byte 0, B (n × k) at the next multiple of
/// `max(1024, repeat)` bytes after A. Returns (A, B, shared-memory bytes used).
///
/// # Errors
/// Those of [`check_n`] and [`OperandTile::new`].
pub fn operand_tiles(
    n: u32,
    major_a: Major,
    major_b: Major,
    swizzle: TmaSwizzle,
    k: u32,
    order: AtomOrder,
) -> Result<(OperandTile, OperandTile, u32), SimError> {
    operand_tiles_at(0, n, major_a, major_b, swizzle, k, order)
}

/// [`operand_tiles`] with A at shared byte address `base` instead of 0 (`tilelab sim wgmma
/// --base`); B follows A as there. Returns (A, B, the end of B in bytes).
///
/// # Errors
/// Those of [`operand_tiles`]; a base not aligned to the swizzle repeat, or tiles whose
/// addresses do not fit the descriptor's 14-bit fields ([`FIELD_MAX_BYTES`]).
pub fn operand_tiles_at(
    base: u32,
    n: u32,
    major_a: Major,
    major_b: Major,
    swizzle: TmaSwizzle,
    k: u32,
    order: AtomOrder,
) -> Result<(OperandTile, OperandTile, u32), SimError> {
    check_n(n)?;
    let ta = OperandTile::new(major_a, swizzle, M, k, base, order)?;
    let b_base = base
        .checked_add(ta.size_bytes())
        .map(|e| e.next_multiple_of(swizzle.repeat_bytes().max(1024)))
        .filter(|&b| b <= FIELD_MAX_BYTES)
        .ok_or_else(|| {
            SimError::Invalid(format!(
                "tile base {base} puts B beyond the descriptor's 14-bit start address field (at most {FIELD_MAX_BYTES} bytes)"
            ))
        })?;
    let tb = OperandTile::new(major_b, swizzle, n, k, b_base, order)?;
    Ok((ta, tb, b_base + tb.size_bytes()))
}

/// Checks `n` is a legal wgmma N for f16/bf16 (8..=256, multiple of 8).
///
/// # Errors
/// [`SimError::Invalid`] naming the value.
pub fn check_n(n: u32) -> Result<(), SimError> {
    if n == 0 || n > 256 || !n.is_multiple_of(8) {
        return Err(SimError::Invalid(format!(
            "wgmma N = {n} is not allowed; allowed: 8, 16, ..., 256 (multiples of 8)"
        )));
    }
    Ok(())
}

/// Checks the input type is one this model covers (f16 or bf16; k16 shapes).
///
/// # Errors
/// [`SimError::Invalid`] naming the type.
pub fn check_dtype(dtype: MmaDtype) -> Result<(), SimError> {
    match dtype {
        MmaDtype::F16 | MmaDtype::Bf16 => Ok(()),
        other => Err(SimError::Invalid(format!(
            "wgmma input type {} is not modelled; allowed: f16, bf16 (m64nNk16)",
            other.name()
        ))),
    }
}

/// The PTX name of the f32-accumulating form, e.g.
/// `wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16` ([`WgmmaKind::ptx`]).
pub fn ptx(n: u32, dtype: MmaDtype) -> String {
    WgmmaKind::f32_of(n, dtype).ptx()
}

/// `(row, col)` of D held by thread `thread` (0..128) in accumulator register `reg` (0..N/2).
pub fn acc_fragment(thread: u32, reg: u32) -> (u32, u32) {
    let (w, lane) = (thread / 32, thread % 32);
    let (g, q) = (lane / 4, lane % 4);
    let (j, i) = (reg / 4, reg % 4);
    (16 * w + g + 8 * (i / 2), 8 * j + 2 * q + i % 2)
}

/// `(row, k)` of A held by thread `thread` in A register `reg` (0..4), half `half` (0 = low 16
/// bits), when A comes from registers.
pub fn a_fragment(thread: u32, reg: u32, half: u32) -> (u32, u32) {
    let (w, lane) = (thread / 32, thread % 32);
    let (g, q) = (lane / 4, lane % 4);
    (16 * w + g + 8 * (reg % 2), 2 * q + half + 8 * (reg / 2))
}

/// Where A comes from, with A's major (the form [`crate::sim::exec::WgmmaOp::f32_acc`] takes; the
/// executor's own is [`crate::sim::exec::WgmmaA`]).
#[derive(Clone, Debug, PartialEq)]
pub enum ASource {
    /// Shared memory through a descriptor, with its major.
    Smem(MatrixDescriptor, Major),
    /// Registers: `regs[thread][r]`, r < 4, two 16-bit values each (low half first).
    Registers(Box<[[u32; 4]; WARPGROUP_THREADS]>),
}

/// An input type of `wgmma.mma_async` (PTX ISA 9.7.15: `.f16`, `.bf16`, `.tf32`, `.e4m3`,
/// `.e5m2`, `.s8`, `.u8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum WgmmaType {
    /// `.f16`.
    F16,
    /// `.bf16`.
    Bf16,
    /// `.tf32`: 32-bit containers, the 13 low mantissa bits ignored.
    Tf32,
    /// `.e4m3` (OCP FP8).
    E4m3,
    /// `.e5m2` (OCP FP8).
    E5m2,
    /// `.s8`.
    S8,
    /// `.u8`.
    U8,
}

/// Every name [`WgmmaType::parse`] takes.
pub const WGMMA_TYPE_NAMES: &str = "f16, bf16, tf32, e4m3, e5m2, s8, u8";

impl WgmmaType {
    /// All seven.
    pub const ALL: [WgmmaType; 7] = [
        WgmmaType::F16,
        WgmmaType::Bf16,
        WgmmaType::Tf32,
        WgmmaType::E4m3,
        WgmmaType::E5m2,
        WgmmaType::S8,
        WgmmaType::U8,
    ];

    /// The PTX type without the dot.
    pub fn name(self) -> &'static str {
        match self {
            WgmmaType::F16 => "f16",
            WgmmaType::Bf16 => "bf16",
            WgmmaType::Tf32 => "tf32",
            WgmmaType::E4m3 => "e4m3",
            WgmmaType::E5m2 => "e5m2",
            WgmmaType::S8 => "s8",
            WgmmaType::U8 => "u8",
        }
    }

    /// Parses a name.
    ///
    /// # Errors
    /// [`SimError::Invalid`] naming the value and [`WGMMA_TYPE_NAMES`].
    pub fn parse(s: &str) -> Result<WgmmaType, SimError> {
        WgmmaType::ALL
            .into_iter()
            .find(|t| t.name() == s.trim())
            .ok_or_else(|| {
                SimError::Invalid(format!(
                    "unknown wgmma input type '{s}'; allowed: {WGMMA_TYPE_NAMES}"
                ))
            })
    }

    /// Bytes per element in shared memory and registers: 2, 4 (tf32) or 1.
    pub fn bytes(self) -> u32 {
        match self {
            WgmmaType::F16 | WgmmaType::Bf16 => 2,
            WgmmaType::Tf32 => 4,
            _ => 1,
        }
    }

    /// K of one instruction: 16 (f16, bf16), 8 (tf32), 32 (8-bit types): always 32 bytes.
    pub fn k(self) -> u32 {
        32 / self.bytes()
    }

    /// True for `.s8`/`.u8`.
    pub fn is_integer(self) -> bool {
        matches!(self, WgmmaType::S8 | WgmmaType::U8)
    }

    /// The value of an element's bits (the low `8 * bytes()` bits of `bits`), exact in f64:
    /// f16/bf16 through `half`, tf32 as f32 with the 13 low mantissa bits cleared, FP8 through
    /// [`MmaDtype::decode`] (OCP OFP8, the table of `tests/data/ofp8_codes.json`), integers
    /// sign- or zero-extended.
    pub fn decode(self, bits: u32) -> f64 {
        match self {
            WgmmaType::F16 => MmaDtype::F16.decode(bits & 0xffff),
            WgmmaType::Bf16 => MmaDtype::Bf16.decode(bits & 0xffff),
            WgmmaType::Tf32 => f64::from(f32::from_bits(bits & !0x1fff)),
            WgmmaType::E4m3 => MmaDtype::E4m3.decode(bits & 0xff),
            WgmmaType::E5m2 => MmaDtype::E5m2.decode(bits & 0xff),
            WgmmaType::S8 => MmaDtype::S8.decode(bits & 0xff),
            WgmmaType::U8 => MmaDtype::U8.decode(bits & 0xff),
        }
    }

    /// Rounds `v` to this type and returns its bits (tf32: the f32 bits, low 13 cleared after
    /// round-to-nearest-even to 10 mantissa bits; the others [`MmaDtype::encode`]).
    pub fn encode(self, v: f64) -> u32 {
        match self {
            WgmmaType::F16 => MmaDtype::F16.encode(v),
            WgmmaType::Bf16 => MmaDtype::Bf16.encode(v),
            WgmmaType::Tf32 => {
                let b = (v as f32).to_bits();
                let r = b.wrapping_add(0xfff + ((b >> 13) & 1));
                if (v as f32).is_finite() && f32::from_bits(r & !0x1fff).is_finite() {
                    r & !0x1fff
                } else {
                    b & !0x1fff
                }
            }
            WgmmaType::E4m3 => MmaDtype::E4m3.encode(v),
            WgmmaType::E5m2 => MmaDtype::E5m2.encode(v),
            WgmmaType::S8 => MmaDtype::S8.encode(v),
            WgmmaType::U8 => MmaDtype::U8.encode(v),
        }
    }

    /// This type as an [`MmaDtype`] (`None` for tf32).
    pub fn mma_dtype(self) -> Option<MmaDtype> {
        Some(match self {
            WgmmaType::F16 => MmaDtype::F16,
            WgmmaType::Bf16 => MmaDtype::Bf16,
            WgmmaType::Tf32 => return None,
            WgmmaType::E4m3 => MmaDtype::E4m3,
            WgmmaType::E5m2 => MmaDtype::E5m2,
            WgmmaType::S8 => MmaDtype::S8,
            WgmmaType::U8 => MmaDtype::U8,
        })
    }
}

impl From<MmaDtype> for WgmmaType {
    fn from(d: MmaDtype) -> WgmmaType {
        match d {
            MmaDtype::F16 => WgmmaType::F16,
            MmaDtype::Bf16 => WgmmaType::Bf16,
            MmaDtype::E4m3 => WgmmaType::E4m3,
            MmaDtype::E5m2 => WgmmaType::E5m2,
            MmaDtype::S8 => WgmmaType::S8,
            MmaDtype::U8 => WgmmaType::U8,
            MmaDtype::Tf32 => WgmmaType::Tf32,
        }
    }
}

/// The accumulator type of `wgmma.mma_async` (`.dtype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum WgmmaAcc {
    /// `.f32`: N/2 registers per thread.
    F32,
    /// `.f16`: N/4 `.f16x2` registers per thread.
    F16,
    /// `.s32`: N/2 registers per thread.
    S32,
}

impl WgmmaAcc {
    /// The PTX type without the dot.
    pub fn name(self) -> &'static str {
        match self {
            WgmmaAcc::F32 => "f32",
            WgmmaAcc::F16 => "f16",
            WgmmaAcc::S32 => "s32",
        }
    }

    /// Parses `f32`, `f16` or `s32`.
    ///
    /// # Errors
    /// [`SimError::Invalid`] naming the value.
    pub fn parse(s: &str) -> Result<WgmmaAcc, SimError> {
        match s.trim() {
            "f32" => Ok(WgmmaAcc::F32),
            "f16" => Ok(WgmmaAcc::F16),
            "s32" => Ok(WgmmaAcc::S32),
            _ => Err(SimError::Invalid(format!(
                "unknown wgmma accumulator type '{s}'; allowed: f32, f16, s32"
            ))),
        }
    }
}

/// One dense `wgmma.mma_async` form: `m64nNkK`, D type, A and B types, `.satfinite`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct WgmmaKind {
    /// N.
    pub n: u32,
    /// Accumulator (D) type.
    pub acc: WgmmaAcc,
    /// A's type.
    pub a: WgmmaType,
    /// B's type.
    pub b: WgmmaType,
    /// `.satfinite` (integer forms only): D saturates to the s32 range instead of wrapping.
    pub satfinite: bool,
}

/// The allowed N of the integer forms (`.s8`/`.u8`, PTX ISA 9.7.15): 8, 16, 24, then multiples
/// of 16 from 32 to 256.
pub fn integer_n_allowed(n: u32) -> bool {
    matches!(n, 8 | 16 | 24) || (32..=256).contains(&n) && n.is_multiple_of(16)
}

impl WgmmaKind {
    /// Checks the combination against the PTX ISA's forms (9.7.15.5.1): f16 x f16 -> f16 or
    /// f32; bf16 x bf16 -> f32; tf32 x tf32 -> f32; {e4m3, e5m2} x {e4m3, e5m2} -> f16 or f32;
    /// {s8, u8} x {s8, u8} -> s32 (`.satfinite` optional, integer forms only). N: 8..=256 in
    /// steps of 8, for the integer forms 8, 16, 24, 32, 48, …, 256.
    ///
    /// # Errors
    /// [`SimError::Invalid`], one line naming the combination and what is allowed.
    pub fn new(
        n: u32,
        acc: WgmmaAcc,
        a: WgmmaType,
        b: WgmmaType,
        satfinite: bool,
    ) -> Result<WgmmaKind, SimError> {
        use WgmmaType::*;
        let k = WgmmaKind {
            n,
            acc,
            a,
            b,
            satfinite,
        };
        let fp8 = |t: WgmmaType| matches!(t, E4m3 | E5m2);
        let types_ok = match (a, b) {
            (F16, F16) => matches!(acc, WgmmaAcc::F16 | WgmmaAcc::F32),
            (Bf16, Bf16) | (Tf32, Tf32) => acc == WgmmaAcc::F32,
            (x, y) if fp8(x) && fp8(y) => matches!(acc, WgmmaAcc::F16 | WgmmaAcc::F32),
            (x, y) if x.is_integer() && y.is_integer() => acc == WgmmaAcc::S32,
            _ => false,
        };
        if !types_ok {
            return Err(SimError::Invalid(format!(
                "wgmma .{}.{}.{} is not a PTX form; allowed: f16.f16 -> f16|f32, bf16.bf16 -> f32, tf32.tf32 -> f32, {{e4m3,e5m2}}x{{e4m3,e5m2}} -> f16|f32, {{s8,u8}}x{{s8,u8}} -> s32",
                acc.name(),
                a.name(),
                b.name()
            )));
        }
        if satfinite && !a.is_integer() {
            return Err(SimError::Invalid(format!(
                "wgmma .satfinite with .{} inputs is not allowed; allowed: only the integer forms (s8, u8)",
                a.name()
            )));
        }
        if a.is_integer() {
            if !integer_n_allowed(n) {
                return Err(SimError::Invalid(format!(
                    "wgmma N = {n} with .{} inputs is not allowed; allowed: 8, 16, 24, 32, 48, ..., 256 (multiples of 16 from 32)",
                    a.name()
                )));
            }
        } else {
            check_n(n)?;
        }
        Ok(k)
    }

    /// The f32-accumulating f16/bf16 form [`ptx`] and `instr::wgmma_f32_sass` name.
    pub fn f32_of(n: u32, dtype: MmaDtype) -> WgmmaKind {
        let t = WgmmaType::from(dtype);
        WgmmaKind {
            n,
            acc: if t.is_integer() {
                WgmmaAcc::S32
            } else {
                WgmmaAcc::F32
            },
            a: t,
            b: t,
            satfinite: false,
        }
    }

    /// K of the instruction (the inputs' [`WgmmaType::k`]).
    pub fn k(&self) -> u32 {
        self.a.k()
    }

    /// Accumulator registers per thread: N/2 (f32, s32) or N/4 (f16).
    pub fn d_regs(&self) -> u32 {
        match self.acc {
            WgmmaAcc::F16 => self.n / 4,
            _ => self.n / 2,
        }
    }

    /// True when `imm-trans-a/b` may be 1: only the f16 and bf16 forms (PTX ISA: the other
    /// types' operands must be K-major).
    pub fn allows_transpose(&self) -> bool {
        matches!(self.a, WgmmaType::F16 | WgmmaType::Bf16)
    }

    /// True when `imm-scale-a/b` exist (every form but the integer ones).
    pub fn allows_scale(&self) -> bool {
        !self.a.is_integer()
    }

    /// The PTX name, e.g. `wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16`.
    pub fn ptx(&self) -> String {
        format!(
            "wgmma.mma_async.sync.aligned.m64n{}k{}{}.{}.{}.{}",
            self.n,
            self.k(),
            if self.satfinite { ".satfinite" } else { "" },
            self.acc.name(),
            self.a.name(),
            self.b.name()
        )
    }

    /// `(row, col)` of D held by `thread` (0..128) in accumulator register `reg`, half `half`
    /// (0 for 32-bit accumulators; 0 or 1 for `.f16`, low half first): the PTX ISA's "register
    /// fragment layout for accumulator matrix D" ([`acc_fragment`]; an f16 register `j` holds
    /// what the f32 registers `2j`, `2j + 1` would).
    pub fn d_fragment(&self, thread: u32, reg: u32, half: u32) -> (u32, u32) {
        match self.acc {
            WgmmaAcc::F16 => acc_fragment(thread, 2 * reg + half),
            _ => acc_fragment(thread, reg),
        }
    }

    /// `(row, k)` of A held by `thread` in A register `reg` (0..4), element `pos` (0..4/bytes,
    /// low bits first), when A comes from registers: the PTX ISA's A fragment figures for
    /// `.m64nNk16` (two 16-bit elements per register), `.m64nNk8` (one tf32) and `.m64nNk32`
    /// (four 8-bit): rows `16w + g` (+8 for odd registers), K `q * per + pos` (+K/2 for
    /// registers 2, 3), with `w = thread / 32`, `g = lane / 4`, `q = lane % 4`.
    pub fn a_fragment(&self, thread: u32, reg: u32, pos: u32) -> (u32, u32) {
        let per = 4 / self.a.bytes();
        let (w, lane) = (thread / 32, thread % 32);
        let (g, q) = (lane / 4, lane % 4);
        (
            16 * w + g + 8 * (reg % 2),
            q * per + pos + (self.k() / 2) * (reg / 2),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::smem::SharedMemory;

    /// One f32-accumulating wgmma through the executor on `acc[thread][reg]` (B K-major).
    fn run(
        n: u32,
        dtype: MmaDtype,
        a: &ASource,
        b: &MatrixDescriptor,
        smem: &mut SharedMemory,
        acc: &mut [Vec<f32>],
    ) -> Result<(), SimError> {
        let mut d: Vec<u32> = acc.iter().flatten().map(|v| v.to_bits()).collect();
        let op = crate::sim::exec::WgmmaOp::f32_acc(n, dtype, a, *b, Major::K, &mut d);
        crate::sim::exec::execute(smem, op)?;
        for (v, bits) in acc.iter_mut().flatten().zip(d) {
            *v = f32::from_bits(bits);
        }
        Ok(())
    }
    use half::{bf16, f16};

    #[test]
    fn descriptor_bits_round_trip_and_match_cutlass_fields() {
        let d = MatrixDescriptor {
            start_address: 0x400,
            leading_byte_offset: 16,
            stride_byte_offset: 1024,
            base_offset: 0,
            swizzle: TmaSwizzle::B128,
        };
        let bits = d.encode().unwrap();
        // start 0x400>>4 = 0x40; LBO 1; SBO 64 (the "SBO = 64" of 128B K-major tiles); type 1.
        assert_eq!(bits, 0x40 | 1 << 16 | 64u64 << 32 | 1u64 << 62);
        assert_eq!(MatrixDescriptor::decode(bits), d);
        let e = MatrixDescriptor {
            start_address: 8,
            ..d
        }
        .encode()
        .unwrap_err();
        assert!(e.to_string().contains("start address 8"), "{e}");
        assert_eq!(layout_type(TmaSwizzle::B32), 3);
    }

    /// A 14-bit field of `address >> 4` holds at most 16383 · 16 = 262128 bytes: that value
    /// encodes (all ones in bits 16..29 for the LBO), 262144 does not; decode reads layout types
    /// 2 and 3 as 64B and 32B and bits 49..51 as the base offset (PTX ISA "Matrix Descriptor
    /// Format"). `k`/`mn` (and `m`, `n`) parse, with PTX's `imm-trans` 0 for K-major and 1 for
    /// MN-major. (Third mutation round, 2026-12-01.)
    #[test]
    fn descriptor_field_limits_layout_types_and_major_names() {
        assert_eq!(FIELD_MAX_BYTES, 262_128);
        let d = MatrixDescriptor {
            start_address: 0,
            leading_byte_offset: 262_128,
            stride_byte_offset: 0,
            base_offset: 0,
            swizzle: TmaSwizzle::None,
        };
        assert_eq!(d.encode().unwrap(), 0x3fff << 16);
        let e = MatrixDescriptor {
            leading_byte_offset: 262_144,
            ..d
        }
        .encode()
        .unwrap_err();
        assert!(e.to_string().contains("262144"), "{e}");
        for (t, sw) in [
            (2u64, TmaSwizzle::B64),
            (3, TmaSwizzle::B32),
            (0, TmaSwizzle::None),
        ] {
            assert_eq!(MatrixDescriptor::decode(t << 62 | 0x10).swizzle, sw);
            assert_eq!(layout_type(sw), t);
        }
        for (texts, major, imm, shown) in [
            (&["k", " K "][..], Major::K, 0, "K-major"),
            (&["mn", "m", "N"][..], Major::Mn, 1, "MN-major"),
        ] {
            for t in texts {
                assert_eq!(Major::parse(t).unwrap(), major, "{t}");
            }
            assert_eq!(
                (major.imm_trans(), major.to_string()),
                (imm, shown.to_string())
            );
        }
        assert!(Major::parse("row").is_err());
        // Bits 49..51 are the base offset (3 bits): decoded even though encode refuses non-zero.
        assert_eq!(MatrixDescriptor::decode(5u64 << 49 | 0x10).base_offset, 5);
        assert_eq!(MatrixDescriptor::decode(u64::MAX).base_offset, 7);
    }

    /// The 8 16-byte rows of a core matrix, from the module docs' no-swizzle formulas with
    /// start 0x1000, LBO 128, SBO 256: K-major element (9, 3) is in the core matrix of rows
    /// mn 8..15, k 0..7, row r at SBO + 16r, element (9, 11) in the next one along K (+ LBO);
    /// MN-major element (9, 11) in the one of k 8..15, mn 8..15, row r (k = 8 + r) at
    /// SBO + LBO + 16r, element (17, 11) at 2·SBO + LBO + 16r. With 128B swizzle, K-major rows are 128
    /// bytes apart and row r's 16-byte chunk 0 moves to chunk r (the TMA 128B pattern).
    #[test]
    fn core_matrix_rows_of_both_majors() {
        let d = MatrixDescriptor {
            start_address: 0x1000,
            leading_byte_offset: 128,
            stride_byte_offset: 256,
            base_offset: 0,
            swizzle: TmaSwizzle::None,
        };
        let k: Vec<u32> = (0..8).map(|r| 0x1000 + 256 + 16 * r).collect();
        assert_eq!(d.core_matrix_rows(Major::K, 9, 3).to_vec(), k);
        let k11: Vec<u32> = (0..8).map(|r| 0x1000 + 256 + 128 + 16 * r).collect();
        assert_eq!(d.core_matrix_rows(Major::K, 9, 11).to_vec(), k11);
        let mn: Vec<u32> = (0..8).map(|r| 0x1000 + 256 + 128 + 16 * r).collect();
        assert_eq!(d.core_matrix_rows(Major::Mn, 9, 11).to_vec(), mn);
        let mn17: Vec<u32> = (0..8).map(|r| 0x1000 + 512 + 128 + 16 * r).collect();
        assert_eq!(d.core_matrix_rows(Major::Mn, 17, 11).to_vec(), mn17);
        let s = MatrixDescriptor {
            start_address: 0,
            leading_byte_offset: 16,
            stride_byte_offset: 1024,
            swizzle: TmaSwizzle::B128,
            ..d
        };
        let sw: Vec<u32> = (0..8).map(|r| 1024 + 128 * r + 16 * r).collect();
        assert_eq!(s.core_matrix_rows(Major::K, 8, 0).to_vec(), sw);
    }

    /// PTX names (PTX ISA, `wgmma.mma_async`: `.m64nNk16`, `.f32` D, `.f16`/`.bf16` A and B) and
    /// the SASS cuobjdump printed for sm_90a (`tests/data/h200_wgmma_2026-11-30.json`:
    /// `HGMMA.64x64x16.F32`, `.BF16` appended for bf16); only f16 and bf16 inputs are modelled.
    #[test]
    fn names_and_modelled_types() {
        assert_eq!(
            ptx(64, MmaDtype::F16),
            "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"
        );
        assert_eq!(
            ptx(256, MmaDtype::Bf16),
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"
        );
        assert!(check_dtype(MmaDtype::F16).is_ok() && check_dtype(MmaDtype::Bf16).is_ok());
        for t in [MmaDtype::S8, MmaDtype::E4m3] {
            let e = check_dtype(t).unwrap_err().to_string();
            assert!(e.contains(t.name()) && e.contains("f16, bf16"), "{e}");
        }
    }

    /// PTX ISA's A register fragment of `wgmma` (`.m64nNk16`, A in registers): warp w's rows
    /// 16w.., then as `mma.m16n8k16`'s A: register 0 row g, k 2q + half; register 1 row g + 8;
    /// registers 2 and 3 the same at k + 8 (g = groupID, q = threadID_in_group). Every element of
    /// the 64x16 A once.
    #[test]
    fn a_fragment_is_the_ptx_table() {
        assert_eq!(a_fragment(0, 0, 0), (0, 0));
        assert_eq!(a_fragment(37, 3, 1), (25, 11));
        assert_eq!(a_fragment(127, 2, 1), (55, 15));
        assert_eq!(a_fragment(66, 1, 0), (32 + 8, 4));
        let mut seen = [[0u8; 16]; 64];
        for t in 0..128 {
            for r in 0..4 {
                for h in 0..2 {
                    let (m, k) = a_fragment(t, r, h);
                    seen[m as usize][k as usize] += 1;
                }
            }
        }
        assert!(seen.iter().flatten().all(|&c| c == 1));
    }

    /// One m64n8k16 on small integers, D starting at 1: A[m][k] = (m + 2k) % 5 − 2 and
    /// B[n][k] = (3n + k) % 7 − 3 written to shared memory (K-major, no swizzle), the reference
    /// summed here from those two formulas, each thread's registers read through the PTX ISA's D
    /// figure written out here (register i: row 16w + g + 8·((i % 4) / 2), column 2q + i % 2). A
    /// from shared memory and from registers (the A table written out here too), f16 and bf16;
    /// accumulators of the wrong shape are refused.
    #[test]
    fn execute_small_integers_from_smem_and_registers() {
        let (ta, tb, used) = operand_tiles(
            8,
            Major::K,
            Major::K,
            TmaSwizzle::None,
            16,
            AtomOrder::MnFirst,
        )
        .unwrap();
        let a = |m: u32, k: u32| ((m + 2 * k) % 5) as f32 - 2.0;
        let b = |n: u32, k: u32| ((3 * n + k) % 7) as f32 - 3.0;
        let want = |row: u32, col: u32| 1.0 + (0..16).map(|k| a(row, k) * b(col, k)).sum::<f32>();
        let wgq = |t: u32| (t / 32, (t % 32) / 4, t % 4);
        for dtype in [MmaDtype::F16, MmaDtype::Bf16] {
            let bits = |v: f32| match dtype {
                MmaDtype::Bf16 => bf16::from_f32(v).to_bits(),
                _ => f16::from_f32(v).to_bits(),
            };
            let mut smem = SharedMemory::zeroed(used);
            for m in 0..64 {
                for k in 0..16 {
                    smem.write_u16(ta.byte_address(m, k), bits(a(m, k)))
                        .unwrap();
                }
            }
            for n in 0..8 {
                for k in 0..16 {
                    smem.write_u16(tb.byte_address(n, k), bits(b(n, k)))
                        .unwrap();
                }
            }
            let regs: Box<[[u32; 4]; WARPGROUP_THREADS]> = Box::new(std::array::from_fn(|t| {
                let (w, g, q) = wgq(t as u32);
                std::array::from_fn(|r| {
                    let (m, k) = (16 * w + g + 8 * (r as u32 % 2), 2 * q + 8 * (r as u32 / 2));
                    u32::from(bits(a(m, k))) | u32::from(bits(a(m, k + 1))) << 16
                })
            }));
            let bd = tb.descriptor(0);
            for src in [
                ASource::Smem(ta.descriptor(0), Major::K),
                ASource::Registers(regs),
            ] {
                let mut acc = vec![vec![1.0f32; 4]; WARPGROUP_THREADS];
                run(8, dtype, &src, &bd, &mut smem, &mut acc).unwrap();
                for t in 0..128u32 {
                    let (w, g, q) = wgq(t);
                    for i in 0..4u32 {
                        let (row, col) = (16 * w + g + 8 * (i / 2), 2 * q + i % 2);
                        assert_eq!(
                            acc[t as usize][i as usize],
                            want(row, col),
                            "{dtype:?} t{t} d{i}"
                        );
                    }
                }
                for bad in [vec![vec![0.0; 3]; 128], vec![vec![0.0; 4]; 127]] {
                    let mut bad = bad;
                    assert!(run(8, dtype, &src, &bd, &mut smem, &mut bad).is_err());
                }
            }
        }
    }

    #[test]
    fn accumulator_map_covers_d_once() {
        for n in [8u32, 24, 256] {
            let mut seen = vec![0u8; (64 * n) as usize];
            for t in 0..128 {
                for r in 0..n / 2 {
                    let (row, col) = acc_fragment(t, r);
                    seen[(row * n + col) as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "n = {n}");
        }
        // PTX figure: thread 0 holds (0,0),(0,1),(8,0),(8,1); thread 37 (warp 1, g 1, q 1)
        // register 5 holds row 16+1, column 8+2+1.
        assert_eq!(acc_fragment(0, 2), (8, 0));
        assert_eq!(acc_fragment(37, 5), (17, 11));
    }

    #[test]
    fn every_tile_descriptor_reads_what_the_tile_stores() {
        for major in [Major::K, Major::Mn] {
            for sw in TmaSwizzle::ALL {
                for order in [AtomOrder::MnFirst, AtomOrder::KFirst] {
                    let t = OperandTile::new(major, sw, 64, 64, 1024, order).unwrap();
                    for kb in 0..t.k_blocks() {
                        let d = t.descriptor(kb);
                        for mn in 0..64 {
                            for k in 0..16 {
                                assert_eq!(
                                    d.element_address(major, mn, k),
                                    t.byte_address(mn, 16 * kb + k),
                                    "{major} {sw} {order:?} kb{kb} ({mn},{k})"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn tile_bytes_are_a_permutation() {
        for (major, order) in [Major::K, Major::Mn]
            .into_iter()
            .flat_map(|m| [(m, AtomOrder::MnFirst), (m, AtomOrder::KFirst)])
        {
            for sw in TmaSwizzle::ALL {
                let t = OperandTile::new(major, sw, 128, 64, 0, order).unwrap();
                let mut a: Vec<u32> = (0..128)
                    .flat_map(|mn| (0..64).map(move |k| t.byte_address(mn, k)))
                    .collect();
                a.sort();
                assert!(
                    a.iter().enumerate().all(|(i, &x)| x == 2 * i as u32),
                    "{major} {sw} {order:?}"
                );
            }
        }
    }

    /// Atoms of 8 rows × 16 bytes (no swizzle) on a 16x32 tile (MN 16, K 32: 2 atoms along MN,
    /// 4 along K in both majors) tiled K first: atom (i, j) at (j + 4i)·128 bytes. K-major element
    /// (8, 8) is row 0 of atom (1, 1): byte 640 (MN first: (1 + 2·1)·128 = 384); MN-major element
    /// (9, 10) is atom (1, 1), row k % 8 = 2, column mn % 8 = 1: 640 + 32 + 2 = 674. K first, the
    /// K-major descriptor's LBO is the K step 128 and its SBO the MN step 512. A 64x64 tile is
    /// 8192 bytes and 4 k16 blocks; `operand_tiles` puts B (64x64) at 8192, 16384 bytes in all.
    #[test]
    fn k_first_atoms_sizes_and_operand_placement() {
        let k = OperandTile::new(Major::K, TmaSwizzle::None, 16, 32, 0, AtomOrder::KFirst).unwrap();
        assert_eq!(k.byte_address(8, 8), 640);
        assert_eq!(k.offsets(), (128, 512));
        let kmn =
            OperandTile::new(Major::K, TmaSwizzle::None, 16, 32, 0, AtomOrder::MnFirst).unwrap();
        assert_eq!(kmn.byte_address(8, 8), 384);
        let mn =
            OperandTile::new(Major::Mn, TmaSwizzle::None, 16, 32, 0, AtomOrder::KFirst).unwrap();
        assert_eq!(mn.byte_address(9, 10), 674);
        let (a, b, used) = operand_tiles(
            64,
            Major::K,
            Major::K,
            TmaSwizzle::B128,
            64,
            AtomOrder::MnFirst,
        )
        .unwrap();
        assert_eq!(
            (a.size_bytes(), a.k_blocks(), b.base, used),
            (8192, 4, 8192, 16384)
        );
    }

    #[test]
    fn k_major_128b_matches_tma_box_of_the_same_tile() {
        // A 64x64 f16 K-major tile with 128B swizzle is exactly what a TMA box 64x64 with
        // CU_TENSOR_MAP_SWIZZLE_128B writes: the FlashAttention-3 pairing.
        let t =
            OperandTile::new(Major::K, TmaSwizzle::B128, 64, 64, 0, AtomOrder::MnFirst).unwrap();
        let b = crate::sim::tma::TmaBox::new(64, 64, 2, TmaSwizzle::B128, 0).unwrap();
        for m in 0..64 {
            for k in 0..64 {
                assert_eq!(t.byte_address(m, k), b.byte_address(m, k));
            }
        }
        assert_eq!(t.offsets(), (16, 1024));
    }

    #[test]
    fn bad_shapes_name_the_value() {
        let e = OperandTile::new(Major::K, TmaSwizzle::B128, 64, 16, 0, AtomOrder::MnFirst)
            .unwrap_err()
            .to_string();
        assert!(e.contains("64x16") && e.contains("multiple of 64"), "{e}");
        assert!(check_n(12).unwrap_err().to_string().contains("N = 12"));
        // PTX ISA: N = 8, 16, ..., 256 for .f16/.bf16 inputs.
        for n in [8, 136, 256] {
            assert!(check_n(n).is_ok(), "{n}");
        }
        for n in [0, 4, 264, 512] {
            assert!(check_n(n).is_err(), "{n}");
        }
        assert!(
            OperandTile::new(Major::Mn, TmaSwizzle::B64, 64, 16, 256, AtomOrder::MnFirst)
                .unwrap_err()
                .to_string()
                .contains("multiple of 512")
        );
    }
}
