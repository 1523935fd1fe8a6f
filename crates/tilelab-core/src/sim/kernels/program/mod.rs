//! The **warp program** of a tiled tensor-core kernel: for each warp of one CTA, the sequence of
//! shared-memory and tensor-core instructions a tiling issues, grouped into stages (prologue,
//! masked diagonal stage, unmasked stage, epilogue) whose trip counts come from the kernel's loop.
//!
//! Main types: [`CtaProgram`] (the tiles in shared memory and one [`WarpProgram`] per warp),
//! [`Stage`], [`WarpInstr`] (= [`SmemOp`] with 32 real lane byte addresses, or [`MmaOp`]).
//! Builders: [`GemmTiling::build`] (`gemm.rs`) and [`FlashTiling::build`] (`flash.rs`); the loop
//! of a FlashAttention CTA is [`FlashTiling::kv_schedule`]. Both builders emit their
//! instructions with `emit.rs` (ldmatrix.x4 operand orders, the warp-level product) and check
//! and place their tiles with `build.rs`. Counting lives in [`super::counts`]: every count there is
//! obtained by walking these programs, and the two articles' closed forms only check them.
//!
//! Instructions modelled (FA2 counts article):
//! * `ldmatrix.sync.aligned.m8n8.x4.shared.b16` (SASS `LDSM.16.M88.4`) and its `.trans` form
//!   (`LDSM.16.MT88.4`), PTX ISA §9.7.14.5.15; each loads one 16x16 f16 block;
//! * `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` (`HMMA.16816.F32`), PTX ISA §9.7.13.5.8;
//! * `st.shared.b32` of P (two packed f16 per lane) when P goes through shared memory.
//!
//! Not modelled: global↔shared copies (`cp.async`, `LDG`/`STG`), softmax arithmetic, the f32→f16
//! packing (`F2FP.PACK_AB`), barriers and the epilogue's store of O. They issue no `LDSM`/`HMMA`,
//! so the prologue and epilogue of the FlashAttention programs hold no instructions here; their
//! stages still carry the trip counts ("lines outside the loop").
//!
//! # Example
//! ```
//! use tilelab_core::sim::arch::Arch;
//! use tilelab_core::sim::program::{FlashStyle, FlashTiling};
//! use tilelab_core::sim::counts::ClassCounts;
//! use tilelab_core::sim::layout::LayoutSpec;
//! let t = FlashTiling { style: FlashStyle::Torch, bm: 64, bn: 64, head_dim: 128, warps: 4, causal: true };
//! let cta = t.build(&LayoutSpec::row(), Arch::Sm80).unwrap();
//! let copy = ClassCounts::of(&cta.warps[0].stages[1].instrs);
//! assert_eq!((copy.ldsm, copy.ldsm_t, copy.hmma), (40, 32, 128)); // FA2 counts article
//! ```

use std::fmt;

use serde::Serialize;

use crate::sim::bank::WarpRequest;
use crate::sim::instr::{Instruction, SassClass};
use crate::sim::layout::Layout;
use crate::sim::mma::{MmaDtype, MmaShape};

mod build;
mod emit;
mod flash;
mod gemm;

pub use emit::{X4_ORDER_A, X4_ORDER_B_KN_TRANS, X4_ORDER_B_NK, ldsm_x4, sts_acc_half};
pub use flash::{FlashProblem, FlashStyle, FlashTiling, KvRun, KvVisit};
pub use gemm::{GemmCase, GemmTiling, Split};

/// Bytes per element of every tile (f16).
pub const ELEM_BYTES: u32 = 2;
/// Rows and columns of the block one `ldmatrix.x4` loads (four 8x8 b16 matrices), in elements.
pub const LDSM_X4_BLOCK: u32 = 16;

/// The shared-memory tiles a program addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum TileId {
    /// GEMM A, M×K row-major (K contiguous).
    A,
    /// GEMM B stored N×K (K contiguous): the article's `D = A·Bᵀ`, mma `.row.col`.
    B,
    /// FlashAttention Q block, bm×d.
    Q,
    /// K block, bn×d (d contiguous): the B operand of S = Q·Kᵀ, loaded without `.trans`.
    K,
    /// V block, bn×d (d contiguous): the B operand of O = P·V, loaded with `.trans`.
    V,
    /// P = softmax(S) as f16, bm×bn, when it goes through shared memory (Triton style).
    P,
}

impl TileId {
    /// One-letter name.
    pub fn name(self) -> &'static str {
        match self {
            TileId::A => "A",
            TileId::B => "B",
            TileId::Q => "Q",
            TileId::K => "K",
            TileId::V => "V",
            TileId::P => "P",
        }
    }
}

impl fmt::Display for TileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tile placed in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmemTile {
    /// Which tile.
    pub id: TileId,
    /// Element (row, col) → byte offset inside the tile; f16 elements.
    pub layout: Layout,
    /// Byte offset of the tile in shared memory ([`crate::sim::placement`]'s rule).
    pub base_byte: u32,
}

impl SmemTile {
    /// Shared-memory byte address of element `(row, col)`.
    pub fn byte_addr(&self, row: u32, col: u32) -> u32 {
        self.base_byte + self.layout.byte_offset(row, col)
    }

    /// Footprint in bytes (padding and swizzle period included).
    pub fn size_bytes(&self) -> u32 {
        self.layout.size_bytes()
    }
}

/// What the article counts: instruction classes by SASS mnemonic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstrClass {
    /// `ldmatrix...x4` = `LDSM.16.M88.4`.
    Ldsm,
    /// `ldmatrix...x4.trans` = `LDSM.16.MT88.4`.
    LdsmT,
    /// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` = `HMMA.16816.F32`.
    Hmma,
    /// `st.shared.*` = `STS*`.
    Sts,
    /// `ld.shared.*` = `LDS*`.
    Lds,
}

impl InstrClass {
    /// Every class, in report order.
    pub const ALL: [InstrClass; 5] = [
        InstrClass::Ldsm,
        InstrClass::LdsmT,
        InstrClass::Hmma,
        InstrClass::Sts,
        InstrClass::Lds,
    ];

    /// Short name used in tables: `LDSM`, `LDSM.T`, `HMMA`, `STS`, `LDS`.
    pub fn short(self) -> &'static str {
        match self {
            InstrClass::Ldsm => SassClass::Ldsm.name(),
            InstrClass::LdsmT => SassClass::LDSM_T_SHORT,
            InstrClass::Hmma => SassClass::Hmma.name(),
            InstrClass::Sts => SassClass::Sts.name(),
            InstrClass::Lds => SassClass::Lds.name(),
        }
    }
}

/// One warp-wide shared-memory instruction of the program, with its real lane addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmemOp {
    /// Tile accessed.
    pub tile: TileId,
    /// Row of the first element covered (elements): the top of the 16x16 block of an
    /// `ldmatrix.x4`, or of the 8-row half of a 16x8 accumulator tile for `st.shared` of P.
    pub row: u32,
    /// Column of the first element covered (elements).
    pub col: u32,
    /// The instruction and its 32 lane byte addresses, ready for [`crate::sim::bank::schedule`].
    pub request: WarpRequest,
}

/// Which product an mma belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Product {
    /// GEMM `C = A·Bᵀ` (A M×K, B N×K).
    AB,
    /// `S = Q·Kᵀ` (bm×bn, reduction over d).
    QK,
    /// `O += P·V` (bm×d, reduction over the bn keys).
    PV,
}

impl Product {
    /// `A·Bᵀ`, `Q·Kᵀ`, `P·V`.
    pub fn name(self) -> &'static str {
        match self {
            Product::AB => "A·Bᵀ",
            Product::QK => "Q·Kᵀ",
            Product::PV => "P·V",
        }
    }
}

/// One `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`: D (16x8 f32) += A (16x16) · B (16x8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct MmaOp {
    /// The product it belongs to.
    pub product: Product,
    /// First output row (elements of the product's M dimension).
    pub m: u32,
    /// First output column (elements of N).
    pub n: u32,
    /// First reduction index (elements of K).
    pub k: u32,
}

/// One instruction of a warp program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WarpInstr {
    /// `ldmatrix`, `ld.shared` or `st.shared`.
    Smem(SmemOp),
    /// A tensor-core mma.
    Mma(MmaOp),
}

impl WarpInstr {
    /// Its class (what the article counts).
    pub fn class(&self) -> InstrClass {
        match self {
            WarpInstr::Mma(_) => InstrClass::Hmma,
            WarpInstr::Smem(s) => match s.request.instruction {
                Instruction::Ldmatrix { trans: false, .. } => InstrClass::Ldsm,
                Instruction::Ldmatrix { trans: true, .. } => InstrClass::LdsmT,
                // Programs emit no stmatrix or cp.async yet; both store to shared memory.
                Instruction::St(_) | Instruction::Stmatrix { .. } | Instruction::CpAsync(_) => {
                    InstrClass::Sts
                }
                Instruction::Ld(_) => InstrClass::Lds,
            },
        }
    }

    /// PTX spelling (`ldmatrix.x4.trans`, `st.shared.b32`, `mma.sync.aligned.m16n8k16...`).
    pub fn ptx(&self) -> String {
        match self {
            WarpInstr::Smem(s) => s.request.instruction.to_string(),
            WarpInstr::Mma(_) => MmaShape::M16N8K16.ptx(MmaDtype::F16),
        }
    }

    /// SASS mnemonic on sm_80/sm_90.
    pub fn sass(&self) -> &'static str {
        match self {
            WarpInstr::Smem(s) => s.request.instruction.sass(),
            WarpInstr::Mma(_) => MmaShape::M16N8K16.sass(MmaDtype::F16),
        }
    }
}

/// Where a stage sits in the kernel's loop structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StageKind {
    /// Before the kv loop; runs once per CTA.
    Prologue,
    /// A copy of the kv-loop body that applies the causal mask (the diagonal blocks). FlashAttention-2
    /// also peels its first iteration into this copy when not causal.
    Masked,
    /// A copy of the kv-loop body without a mask.
    Unmasked,
    /// Straight-line code that runs once (the GEMM tile).
    Body,
    /// After the kv loop; runs once per CTA.
    Epilogue,
}

/// A stage: one copy of code in the kernel, with its instructions for one warp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// Its place in the loop structure.
    pub kind: StageKind,
    /// For a masked copy unrolled once per masking step (FlashAttention-2 unrolls
    /// [`FlashTiling::masked_copies`] of them), which step; `None` for a copy that loops.
    pub step: Option<u32>,
    /// The instructions, in issue order.
    pub instrs: Vec<WarpInstr>,
}

impl Stage {
    /// True for copies of the kv-loop body (masked or unmasked).
    pub fn is_loop_copy(&self) -> bool {
        matches!(self.kind, StageKind::Masked | StageKind::Unmasked)
    }

    /// Human label: `prologue`, `masked diagonal`, `masked diagonal step 1`, `unmasked`, ….
    pub fn label(&self) -> String {
        let base = match self.kind {
            StageKind::Prologue => "prologue",
            StageKind::Masked => "masked diagonal",
            StageKind::Unmasked => "unmasked",
            StageKind::Body => "body",
            StageKind::Epilogue => "epilogue",
        };
        match self.step {
            Some(s) => format!("{base} step {s}"),
            None => base.to_string(),
        }
    }
}

/// The program of one warp of a CTA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpProgram {
    /// Warp index in the CTA (0-based).
    pub warp: u32,
    /// Stages in code order. Every warp of a CTA has the same stages and the same instruction
    /// classes in the same order (one SASS program); only addresses and coordinates differ.
    pub stages: Vec<Stage>,
}

/// The program of one CTA: the tiles in shared memory and every warp's program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtaProgram {
    /// Tiles in shared memory, in address order.
    pub tiles: Vec<SmemTile>,
    /// One program per warp, warp 0 first.
    pub warps: Vec<WarpProgram>,
    /// Shared memory the tiles occupy, bytes (end of the last tile).
    pub smem_bytes: u32,
}

impl CtaProgram {
    /// The tile with this id, if the program uses it.
    pub fn tile(&self, id: TileId) -> Option<&SmemTile> {
        self.tiles.iter().find(|t| t.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Third mutation round (2026-12-01): the names the tables print, spelled as PTX and SASS
    // spell them (SASS as disassembled on the H200 by `tilelab verify`).

    #[test]
    fn names_of_tiles_classes_products_and_stages() {
        let tiles = [
            TileId::A,
            TileId::B,
            TileId::Q,
            TileId::K,
            TileId::V,
            TileId::P,
        ];
        let names: Vec<String> = tiles.iter().map(|t| t.to_string()).collect();
        assert_eq!(names, ["A", "B", "Q", "K", "V", "P"]);
        assert_eq!(TileId::V.name(), "V");
        let short: Vec<&str> = InstrClass::ALL.iter().map(|c| c.short()).collect();
        assert_eq!(short, ["LDSM", "LDSM.T", "HMMA", "STS", "LDS"]);
        assert_eq!(
            [Product::AB, Product::QK, Product::PV].map(Product::name),
            ["A·Bᵀ", "Q·Kᵀ", "P·V"]
        );
        let stage = |kind, step| Stage {
            kind,
            step,
            instrs: vec![],
        };
        assert_eq!(stage(StageKind::Prologue, None).label(), "prologue");
        assert_eq!(
            stage(StageKind::Masked, Some(1)).label(),
            "masked diagonal step 1"
        );
        assert_eq!(stage(StageKind::Masked, None).label(), "masked diagonal");
        assert_eq!(stage(StageKind::Unmasked, None).label(), "unmasked");
        assert_eq!(stage(StageKind::Body, None).label(), "body");
        assert_eq!(stage(StageKind::Epilogue, None).label(), "epilogue");
    }

    #[test]
    fn instructions_spell_their_ptx_and_sass() {
        let tile = SmemTile {
            id: TileId::K,
            layout: Layout::row_major(64, 64, 2),
            base_byte: 4096,
        };
        // 64 x 64 f16, no padding: 8192 bytes; element (3, 5) at 4096 + (3·64 + 5)·2.
        assert_eq!(tile.size_bytes(), 8192);
        assert_eq!(tile.byte_addr(3, 5), 4096 + (3 * 64 + 5) * 2);
        let ld = WarpInstr::Smem(ldsm_x4(&tile, true, 0, 0, X4_ORDER_B_KN_TRANS));
        assert_eq!(
            (ld.ptx(), ld.sass()),
            ("ldmatrix.x4.trans".into(), "LDSM.16.MT88.4")
        );
        assert_eq!(ld.class(), InstrClass::LdsmT);
        let st = WarpInstr::Smem(sts_acc_half(&tile, 8, 16));
        assert_eq!((st.ptx(), st.sass()), ("st.shared.b32".into(), "STS"));
        let mma = WarpInstr::Mma(MmaOp {
            product: Product::QK,
            m: 0,
            n: 0,
            k: 0,
        });
        assert_eq!(
            (mma.ptx(), mma.sass()),
            (
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32".into(),
                "HMMA.16816.F32"
            )
        );
    }

    /// `st.shared.b32` of half an accumulator tile (PTX ISA §9.7.13.5.8, C fragment): lane
    /// (g = lane / 4, t = lane % 4) writes element (row0 + g, col0 + 2t).
    #[test]
    fn sts_acc_half_puts_lane_g_t_at_row_g_column_2t() {
        let tile = SmemTile {
            id: TileId::P,
            layout: Layout::row_major(64, 64, 2),
            base_byte: 0,
        };
        let op = sts_acc_half(&tile, 8, 16);
        assert_eq!((op.tile, op.row, op.col), (TileId::P, 8, 16));
        for lane in 0..32u32 {
            let (row, col) = (8 + lane / 4, 16 + 2 * (lane % 4));
            assert_eq!(
                op.request.lane_byte_offsets[lane as usize],
                (row * 64 + col) * 2,
                "lane {lane}"
            );
        }
    }
}
