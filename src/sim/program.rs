//! The **warp program** of a tiled tensor-core kernel: for each warp of one CTA, the sequence of
//! shared-memory and tensor-core instructions a tiling issues, grouped into stages (prologue,
//! masked diagonal stage, unmasked stage, epilogue) whose trip counts come from the kernel's loop.
//!
//! Main types: [`CtaProgram`] (the tiles in shared memory and one [`WarpProgram`] per warp),
//! [`Stage`], [`WarpInstr`] (= [`SmemOp`] with 32 real lane byte addresses, or [`MmaOp`]).
//! Builders: [`GemmTiling::build`] and [`FlashTiling::build`]; the loop of a FlashAttention CTA
//! is [`FlashTiling::kv_schedule`]. Counting lives in [`super::counts`]: every count there is
//! obtained by walking these programs, and the seed articles' closed forms only check them.
//!
//! Instructions modelled (seed 000):
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
//! use tilelab::sim::arch::Arch;
//! use tilelab::sim::program::{FlashStyle, FlashTiling};
//! use tilelab::sim::counts::ClassCounts;
//! let t = FlashTiling { style: FlashStyle::Torch, bm: 64, bn: 64, head_dim: 128, warps: 4, causal: true };
//! let cta = t.build("row", Arch::Sm80).unwrap();
//! let copy = ClassCounts::of(&cta.warps[0].stages[1].instrs);
//! assert_eq!((copy.ldsm, copy.ldsm_t, copy.hmma), (40, 32, 128)); // seed 000
//! ```

use std::fmt;

use serde::Serialize;

use super::arch::Arch;
use super::bank::{SharedMemoryConfig, WarpRequest};
use super::error::SimError;
use super::exec::check_request;
use super::instr::{AccessWidth, Instruction};
use super::layout::Layout;
use super::mma::{MmaDtype, MmaShape};
use super::placement::place_tiles;

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
    /// Byte offset of the tile in shared memory ([`super::placement`]'s rule).
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
            InstrClass::Ldsm => "LDSM",
            InstrClass::LdsmT => "LDSM.T",
            InstrClass::Hmma => "HMMA",
            InstrClass::Sts => "STS",
            InstrClass::Lds => "LDS",
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
    /// The instruction and its 32 lane byte addresses, ready for [`super::bank::schedule`].
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
    /// `ceil(bm/bn)` of them), which step; `None` for a copy that loops.
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

// ---------------------------------------------------------------------------------------------
// ldmatrix.x4 matrix orders: (row, col) offset of matrix j (= destination register j) inside
// the 16x16 block, in elements of the stored tile. Lane 8j + r gives the address of row r of
// matrix j (PTX ISA §9.7.14.5.15).

/// A operand of m16n8k16 from an M×K row-major tile: registers a0..a3 =
/// (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15).
pub const X4_ORDER_A: [(u32, u32); 4] = [(0, 0), (8, 0), (0, 8), (8, 8)];
/// B operand from a tile stored N×K (no `.trans`): registers b0, b1 of n-tile 0 then of n-tile 1
/// = (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
pub const X4_ORDER_B_NK: [(u32, u32); 4] = [(0, 0), (0, 8), (8, 0), (8, 8)];
/// B operand from a tile stored K×N, loaded with `.trans`: b0, b1 of n-tile 0 then n-tile 1 =
/// (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15).
pub const X4_ORDER_B_KN_TRANS: [(u32, u32); 4] = [(0, 0), (8, 0), (0, 8), (8, 8)];

/// The `ldmatrix.x4` that loads the 16x16 block of `tile` at `(row0, col0)` in the given order.
pub fn ldsm_x4(
    tile: &SmemTile,
    trans: bool,
    row0: u32,
    col0: u32,
    order: [(u32, u32); 4],
) -> SmemOp {
    let offs = std::array::from_fn(|lane| {
        let (j, r) = (lane / 8, lane as u32 % 8);
        let (dr, dc) = order[j];
        tile.byte_addr(row0 + dr + r, col0 + dc)
    });
    let ins = if trans {
        Instruction::LDSM_X4_T
    } else {
        Instruction::LDSM_X4
    };
    SmemOp {
        tile: tile.id,
        row: row0,
        col: col0,
        request: WarpRequest::new(ins, offs),
    }
}

/// The `st.shared.b32` with which a warp writes half of a 16x8 f32 accumulator tile as packed
/// f16 to `tile`: lane (g = lane/4, t = lane%4) writes elements `(row0 + g, col0 + 2t .. +1)`;
/// `row0` is the tile's top row (registers c0, c1) or top + 8 (c2, c3). PTX ISA §9.7.13.5.8.
pub fn sts_acc_half(tile: &SmemTile, row0: u32, col0: u32) -> SmemOp {
    let offs = std::array::from_fn(|lane| {
        let (g, t) = (lane as u32 / 4, lane as u32 % 4);
        tile.byte_addr(row0 + g, col0 + 2 * t)
    });
    SmemOp {
        tile: tile.id,
        row: row0,
        col: col0,
        request: WarpRequest::new(Instruction::St(AccessWidth::B32), offs),
    }
}

/// Where the A operand of a warp-level product comes from.
#[derive(Clone, Copy, Debug)]
enum ASource<'a> {
    /// `ldmatrix.x4` from an M×K tile.
    Smem(&'a SmemTile),
    /// Already in registers (FlashAttention-2 keeps P there).
    Registers,
}

/// Where the B operand comes from.
#[derive(Clone, Copy, Debug)]
enum BSource<'a> {
    /// Tile stored N×K, `ldmatrix.x4`.
    NK(&'a SmemTile),
    /// Tile stored K×N, `ldmatrix.x4.trans`.
    KNTrans(&'a SmemTile),
}

/// A warp's share of one product: output rows `m0..m0+m_len`, columns `n0..n0+n_len`, full
/// reduction `0..k_len`; all multiples of 16 (checked by the tilings).
#[derive(Clone, Copy, Debug)]
struct WarpGemm<'a> {
    product: Product,
    a: ASource<'a>,
    b: BSource<'a>,
    m0: u32,
    m_len: u32,
    n0: u32,
    n_len: u32,
    k_len: u32,
}

impl WarpGemm<'_> {
    /// Emits the product: for each 16-wide k step, the A loads of the warp's 16-row blocks, the
    /// B loads of its 16-column blocks, then one mma per (16-row, 8-column) output tile.
    fn emit(&self, out: &mut Vec<WarpInstr>) {
        for k in (0..self.k_len).step_by(16) {
            if let ASource::Smem(t) = self.a {
                for m in (self.m0..self.m0 + self.m_len).step_by(16) {
                    out.push(WarpInstr::Smem(ldsm_x4(t, false, m, k, X4_ORDER_A)));
                }
            }
            for n in (self.n0..self.n0 + self.n_len).step_by(16) {
                let op = match self.b {
                    BSource::NK(t) => ldsm_x4(t, false, n, k, X4_ORDER_B_NK),
                    BSource::KNTrans(t) => ldsm_x4(t, true, k, n, X4_ORDER_B_KN_TRANS),
                };
                out.push(WarpInstr::Smem(op));
            }
            for m in (self.m0..self.m0 + self.m_len).step_by(16) {
                for n in (self.n0..self.n0 + self.n_len).step_by(8) {
                    out.push(WarpInstr::Mma(MmaOp {
                        product: self.product,
                        m,
                        n,
                        k,
                    }));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Validation helpers.

fn check_multiple(flag: &'static str, v: u32, why: &str) -> Result<(), SimError> {
    if v == 0 || !v.is_multiple_of(16) {
        return Err(SimError::NotMultiple {
            param: flag,
            value: v.into(),
            of: format!("16 ({why})"),
            allowed: "16, 32, 48, …".into(),
        });
    }
    Ok(())
}

/// Checks that `warps` warps can share `slabs` slabs (named `slab`, e.g. `16-row`) of `what` evenly.
fn check_share(warps: u32, slabs: u32, slab: &str, what: &str) -> Result<(), SimError> {
    if warps > slabs || !slabs.is_multiple_of(warps) {
        return Err(SimError::WarpSplit {
            warps,
            slabs,
            slab: slab.to_string(),
            what: what.to_string(),
        });
    }
    Ok(())
}

fn check_warps(warps: u32) -> Result<(), SimError> {
    if warps == 0 || warps > 32 {
        return Err(SimError::NotAllowed {
            param: "--warps",
            value: warps.into(),
            allowed: "1..=32 (at most 1024 threads per block)".into(),
        });
    }
    Ok(())
}

/// Places tiles (rows, cols) with the layout `spec` by [`place_tiles`]' rule, and checks that
/// every 16-byte row chunk stays contiguous and aligned (ldmatrix reads whole 16-byte rows).
fn place_program_tiles(
    spec: &str,
    arch: Arch,
    shapes: &[(TileId, u32, u32)],
) -> Result<(Vec<SmemTile>, u32), SimError> {
    // The unpadded bytes first: padding and alignment only add, and a huge tile must fail here,
    // before its layout is built row by row.
    let limit = arch.limits().smem_per_block_bytes;
    // u128: three tiles of up to (2^32)^2 two-byte elements each cannot overflow it.
    let tile_bytes = |r: u32, c: u32| u128::from(r) * u128::from(c) * u128::from(ELEM_BYTES);
    let raw: u128 = shapes.iter().map(|&(_, r, c)| tile_bytes(r, c)).sum();
    if raw > u128::from(limit) {
        let parts = shapes
            .iter()
            .map(|&(id, r, c)| format!("{id} {r}x{c} = {} B", tile_bytes(r, c)))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(SimError::SharedMemory {
            needed: raw,
            lower_bound: true,
            parts,
            limit,
            arch: arch.to_string(),
        });
    }
    let mut layouts = Vec::with_capacity(shapes.len());
    for &(id, rows, cols) in shapes {
        let layout = Layout::parse(spec, rows, cols, ELEM_BYTES)?;
        check_row_chunks(spec, id, &layout)?;
        layouts.push((id, layout));
    }
    let placed = place_tiles(&layouts, arch)?;
    let tiles = layouts
        .iter()
        .zip(&placed.bases)
        .map(|(&(id, layout), &base_byte)| SmemTile {
            id,
            layout,
            base_byte,
        })
        .collect();
    Ok((tiles, placed.end))
}

fn check_row_chunks(spec: &str, id: TileId, l: &Layout) -> Result<(), SimError> {
    for r in 0..l.rows {
        for c in (0..l.cols).step_by(8) {
            if !l.byte_offset(r, c).is_multiple_of(16) || !l.is_contiguous(r, c, 8, true) {
                return Err(SimError::AccessUnfit {
                    access: "ldmatrix".into(),
                    reason: format!(
                        "layout '{spec}' breaks the 16-byte row chunk at row {r}, columns {c}..{} of tile {id} ({}x{} f16): ldmatrix reads 8 contiguous f16 at a 16-byte aligned address; allowed: row, pad:N with N a multiple of 8, swizzle:B,M,S with M >= 3",
                        c + 7,
                        l.rows,
                        l.cols
                    ),
                });
            }
        }
    }
    Ok(())
}

fn finish(
    tiles: Vec<SmemTile>,
    smem_bytes: u32,
    arch: Arch,
    warps: Vec<WarpProgram>,
) -> Result<CtaProgram, SimError> {
    let cfg = SharedMemoryConfig::for_arch(arch);
    for w in &warps {
        for s in &w.stages {
            for i in &s.instrs {
                if let WarpInstr::Smem(op) = i {
                    check_request(&op.request, &cfg)?;
                }
            }
        }
    }
    Ok(CtaProgram {
        tiles,
        warps,
        smem_bytes,
    })
}

// ---------------------------------------------------------------------------------------------
// GEMM

/// How the warps of a GEMM CTA share the output (seed 000: with K ≠ 16 the accumulation must stay
/// inside one warp, so only rows or only columns are split).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// Warp w owns output rows `w·M/n .. (w+1)·M/n`; every warp loads all of B.
    Rows,
    /// Warp w owns output columns `w·N/n .. (w+1)·N/n`; every warp loads all of A.
    Cols,
}

impl Split {
    /// Parses `rows` or `cols`.
    ///
    /// # Errors
    /// [`SimError::Unknown`] naming the value and the allowed ones.
    pub fn parse(s: &str) -> Result<Split, SimError> {
        match s {
            "rows" | "row" | "m" => Ok(Split::Rows),
            "cols" | "col" | "n" => Ok(Split::Cols),
            _ => Err(SimError::Unknown {
                what: "split",
                given: s.to_string(),
                allowed: "rows, cols",
            }),
        }
    }
}

/// The four cases of seed 000's counting rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GemmCase {
    /// One warp, K = 16.
    OneWarpK16,
    /// n warps, K = 16.
    WarpsK16,
    /// One warp, K ≠ 16.
    OneWarpK,
    /// n warps, K ≠ 16.
    WarpsK,
}

impl GemmCase {
    /// The article's wording of the case.
    pub fn describe(self) -> &'static str {
        match self {
            GemmCase::OneWarpK16 => "one warp, K = 16",
            GemmCase::WarpsK16 => "n warps, K = 16",
            GemmCase::OneWarpK => "one warp, K ≠ 16",
            GemmCase::WarpsK => "n warps, K ≠ 16",
        }
    }
}

/// One CTA computing `C (M×N, f32) = A (M×K, f16) · Bᵀ` with B stored N×K, both tiles whole in
/// shared memory, with m16n8k16 mma and ldmatrix.x4. Units: elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct GemmTiling {
    /// Rows of A and C.
    pub m: u32,
    /// Columns of C (rows of the stored B).
    pub n: u32,
    /// Reduction length.
    pub k: u32,
    /// Warps in the CTA.
    pub warps: u32,
    /// How the warps share C.
    pub split: Split,
}

impl GemmTiling {
    /// Checks the tiling.
    ///
    /// # Errors
    /// [`SimError::NotMultiple`] if M, N or K is not a positive multiple of 16,
    /// [`SimError::NotAllowed`] if `warps` is outside 1..=32, [`SimError::WarpSplit`] if the
    /// warps cannot share the 16-wide slabs of the split dimension evenly.
    pub fn validate(&self) -> Result<(), SimError> {
        check_multiple(
            "--m",
            self.m,
            "mma m16n8k16 and ldmatrix.x4 take 16 rows of A",
        )?;
        check_multiple(
            "--n",
            self.n,
            "one ldmatrix.x4 loads 16 rows of B, two n8 mma tiles",
        )?;
        check_multiple("--k", self.k, "mma m16n8k16 reduces over 16")?;
        check_warps(self.warps)?;
        match self.split {
            Split::Rows => check_share(
                self.warps,
                self.m / 16,
                "16-row",
                &format!("--m {}", self.m),
            ),
            Split::Cols => check_share(
                self.warps,
                self.n / 16,
                "16-column",
                &format!("--n {}", self.n),
            ),
        }
    }

    /// Which of the article's four cases this is.
    pub fn case(&self) -> GemmCase {
        match (self.warps == 1, self.k == 16) {
            (true, true) => GemmCase::OneWarpK16,
            (false, true) => GemmCase::WarpsK16,
            (true, false) => GemmCase::OneWarpK,
            (false, false) => GemmCase::WarpsK,
        }
    }

    /// Rows and columns of C owned by each warp: `(M/n, N)` or `(M, N/n)`.
    pub fn warp_share(&self) -> (u32, u32) {
        match self.split {
            Split::Rows => (self.m / self.warps, self.n),
            Split::Cols => (self.m, self.n / self.warps),
        }
    }

    /// Builds the CTA program: one `Body` stage per warp.
    ///
    /// # Errors
    /// Those of [`Self::validate`]; a bad `layout` spec ([`Layout::parse`], or one that breaks
    /// 16-byte rows); tiles over the per-block shared memory of `arch`.
    pub fn build(&self, layout: &str, arch: Arch) -> Result<CtaProgram, SimError> {
        self.validate()?;
        let (tiles, smem) = place_program_tiles(
            layout,
            arch,
            &[(TileId::A, self.m, self.k), (TileId::B, self.n, self.k)],
        )?;
        let (mw, nw) = self.warp_share();
        let warps = (0..self.warps)
            .map(|w| {
                let (m0, n0) = match self.split {
                    Split::Rows => (w * mw, 0),
                    Split::Cols => (0, w * nw),
                };
                let mut instrs = Vec::new();
                WarpGemm {
                    product: Product::AB,
                    a: ASource::Smem(&tiles[0]),
                    b: BSource::NK(&tiles[1]),
                    m0,
                    m_len: mw,
                    n0,
                    n_len: nw,
                    k_len: self.k,
                }
                .emit(&mut instrs);
                WarpProgram {
                    warp: w,
                    stages: vec![Stage {
                        kind: StageKind::Body,
                        step: None,
                        instrs,
                    }],
                }
            })
            .collect();
        finish(tiles, smem, arch, warps)
    }
}

// ---------------------------------------------------------------------------------------------
// FlashAttention-2 forward

/// How a FlashAttention forward kernel splits its work among warps (seed 000).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlashStyle {
    /// PyTorch's FlashAttention-2 (`flash_fwd_kernel.h`): parallel over Q rows. Warp w owns
    /// `bm/warps` rows of Q, S and O; loads its Q rows and all of K (`LDSM`), keeps P in registers
    /// and loads all of V with `LDSM.T`. The masking loop is unrolled `ceil(bm/bn)` times when
    /// causal (one peeled iteration when not), then one unmasked loop.
    Torch,
    /// The simple Triton kernel (seed 000; loop structure of the Triton tutorial `_attn_fwd`):
    /// parallel over K. Warp w owns `bn/warps` columns of S (its keys) and `d/warps` columns of O;
    /// loads all of Q and its K rows, stores its P slab to shared memory (`st.shared.b32`),
    /// reloads all of P (`LDSM`) and its V columns (`LDSM.T`). Causal: an off-band unmasked loop
    /// then an on-band masked loop; not causal: one loop.
    Triton,
}

impl FlashStyle {
    /// Parses `torch` or `triton`.
    ///
    /// # Errors
    /// [`SimError::Unknown`] naming the value and the allowed ones.
    pub fn parse(s: &str) -> Result<FlashStyle, SimError> {
        match s {
            "torch" | "pytorch" | "fa2" => Ok(FlashStyle::Torch),
            "triton" => Ok(FlashStyle::Triton),
            _ => Err(SimError::Unknown {
                what: "style",
                given: s.to_string(),
                allowed: "torch, triton",
            }),
        }
    }

    /// `torch` or `triton`.
    pub fn name(self) -> &'static str {
        match self {
            FlashStyle::Torch => "torch",
            FlashStyle::Triton => "triton",
        }
    }
}

/// The tiling of one FlashAttention-2 forward CTA: a bm-row block of Q against bn-row blocks of
/// K and V, head dimension d, f16 in shared memory, f32 accumulators. Units: elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct FlashTiling {
    /// Work split among warps.
    pub style: FlashStyle,
    /// Q rows per CTA (BLOCK_M).
    pub bm: u32,
    /// K/V rows per loop iteration (BLOCK_N).
    pub bn: u32,
    /// Head dimension d.
    pub head_dim: u32,
    /// Warps per CTA (num_warps).
    pub warps: u32,
    /// Causal masking (changes the loop copies and their trip counts).
    pub causal: bool,
}

/// The problem a FlashAttention kernel is launched on: grid = batch·heads·(seq/bm) CTAs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct FlashProblem {
    /// Batch size B.
    pub batch: u32,
    /// Heads H.
    pub heads: u32,
    /// Sequence length S (queries = keys), elements.
    pub seq: u32,
}

/// Consecutive kv-block iterations of a CTA's loop through one stage (index into
/// [`WarpProgram::stages`]): blocks `first, first ∓ 1, …` (`count` of them, descending or not).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct KvRun {
    /// Stage that runs these blocks.
    pub stage: usize,
    /// The first block run (rows `first·bn ..`).
    pub first: u32,
    /// How many blocks.
    pub count: u32,
    /// Whether the blocks go down from `first` (FlashAttention-2) or up (Triton).
    pub descending: bool,
}

/// One kv-block iteration of a CTA's loop: which block, through which stage (index into
/// [`WarpProgram::stages`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct KvVisit {
    /// Index of the K/V block (rows `kv_block·bn ..`).
    pub kv_block: u32,
    /// Stage that runs it.
    pub stage: usize,
}

impl FlashTiling {
    /// Number of unrolled masked copies (FlashAttention-2's `n_masking_steps`: `ceil(bm/bn)` when
    /// causal, 1 otherwise) for the torch style; 1 (a loop) or 0 for Triton.
    pub fn masked_copies(&self) -> u32 {
        match (self.style, self.causal) {
            (FlashStyle::Torch, true) => self.bm.div_ceil(self.bn),
            (FlashStyle::Torch, false) => 1,
            (FlashStyle::Triton, true) => 1,
            (FlashStyle::Triton, false) => 0,
        }
    }

    /// Checks the tiling.
    ///
    /// # Errors
    /// [`SimError::NotMultiple`] if bm, bn or d is not a positive multiple of 16, or triton with
    /// `causal` and bm not a multiple of bn; [`SimError::NotAllowed`] if `warps` is outside
    /// 1..=32; [`SimError::WarpSplit`] if the warps cannot share the 16-row slabs of bm (torch) or
    /// the 16-wide slabs of bn and d (triton) evenly.
    pub fn validate(&self) -> Result<(), SimError> {
        check_multiple("--bm", self.bm, "ldmatrix.x4 and mma take 16 rows of Q")?;
        check_multiple("--bn", self.bn, "ldmatrix.x4 loads 16 rows of K and V")?;
        check_multiple(
            "--head-dim",
            self.head_dim,
            "mma m16n8k16 reduces Q·Kᵀ over 16",
        )?;
        check_warps(self.warps)?;
        match self.style {
            FlashStyle::Torch => check_share(
                self.warps,
                self.bm / 16,
                "16-row",
                &format!("--bm {} (torch style splits Q rows)", self.bm),
            ),
            FlashStyle::Triton => {
                check_share(
                    self.warps,
                    self.bn / 16,
                    "16-key",
                    &format!("--bn {} (triton style splits the keys)", self.bn),
                )?;
                check_share(
                    self.warps,
                    self.head_dim / 16,
                    "16-column",
                    &format!(
                        "--head-dim {} (triton style splits V's columns)",
                        self.head_dim
                    ),
                )?;
                if self.causal && !self.bm.is_multiple_of(self.bn) {
                    return Err(SimError::NotMultiple {
                        param: "--bm",
                        value: self.bm.into(),
                        of: format!(
                            "--bn {} (the triton style's on-band causal loop steps over the bm diagonal rows in bn blocks)",
                            self.bn
                        ),
                        allowed: "bm = bn, 2·bn, …".into(),
                    });
                }
                Ok(())
            }
        }
    }

    /// Checks a problem against the tiling.
    ///
    /// # Errors
    /// [`SimError::NotAllowed`] for zero batch or heads, [`SimError::NotMultiple`] for a sequence
    /// that is not a multiple of both bm and bn.
    pub fn check_problem(&self, p: &FlashProblem) -> Result<(), SimError> {
        if p.batch == 0 || p.heads == 0 {
            let (param, value) = if p.batch == 0 {
                ("--batch", p.batch)
            } else {
                ("--heads", p.heads)
            };
            return Err(SimError::NotAllowed {
                param,
                value: value.into(),
                allowed: "at least 1".into(),
            });
        }
        let l = lcm(self.bm, self.bn);
        if p.seq == 0 || !p.seq.is_multiple_of(l) {
            return Err(SimError::NotMultiple {
                param: "--seq",
                value: p.seq.into(),
                of: format!("--bm {} and --bn {}", self.bm, self.bn),
                allowed: format!("multiples of {l}"),
            });
        }
        Ok(())
    }

    /// Builds the CTA program.
    ///
    /// Stages: torch = prologue, masked step 0..[`Self::masked_copies`], unmasked, epilogue;
    /// triton causal = prologue, unmasked (off-band), masked (on-band), epilogue; triton not causal
    /// = prologue, unmasked, epilogue. Every loop copy holds the same instructions (the mask adds
    /// no shared-memory or tensor-core instruction).
    ///
    /// # Errors
    /// Those of [`Self::validate`]; a bad `layout` spec or one that breaks 16-byte rows; tiles over
    /// the per-block shared memory of `arch`.
    pub fn build(&self, layout: &str, arch: Arch) -> Result<CtaProgram, SimError> {
        self.validate()?;
        let (bm, bn, d, nw) = (self.bm, self.bn, self.head_dim, self.warps);
        let mut shapes = vec![(TileId::Q, bm, d), (TileId::K, bn, d), (TileId::V, bn, d)];
        if self.style == FlashStyle::Triton {
            shapes.push((TileId::P, bm, bn));
        }
        let (tiles, smem) = place_program_tiles(layout, arch, &shapes)?;
        let (q, k, v) = (&tiles[0], &tiles[1], &tiles[2]);
        let warps = (0..nw)
            .map(|w| {
                let mut body = Vec::new();
                match self.style {
                    FlashStyle::Torch => {
                        let rows = bm / nw;
                        let m0 = w * rows;
                        WarpGemm {
                            product: Product::QK,
                            a: ASource::Smem(q),
                            b: BSource::NK(k),
                            m0,
                            m_len: rows,
                            n0: 0,
                            n_len: bn,
                            k_len: d,
                        }
                        .emit(&mut body);
                        WarpGemm {
                            product: Product::PV,
                            a: ASource::Registers,
                            b: BSource::KNTrans(v),
                            m0,
                            m_len: rows,
                            n0: 0,
                            n_len: d,
                            k_len: bn,
                        }
                        .emit(&mut body);
                    }
                    FlashStyle::Triton => {
                        let p = &tiles[3];
                        let (keys, cols) = (bn / nw, d / nw);
                        WarpGemm {
                            product: Product::QK,
                            a: ASource::Smem(q),
                            b: BSource::NK(k),
                            m0: 0,
                            m_len: bm,
                            n0: w * keys,
                            n_len: keys,
                            k_len: d,
                        }
                        .emit(&mut body);
                        for m in (0..bm).step_by(16) {
                            for n in (w * keys..(w + 1) * keys).step_by(8) {
                                body.push(WarpInstr::Smem(sts_acc_half(p, m, n)));
                                body.push(WarpInstr::Smem(sts_acc_half(p, m + 8, n)));
                            }
                        }
                        WarpGemm {
                            product: Product::PV,
                            a: ASource::Smem(p),
                            b: BSource::KNTrans(v),
                            m0: 0,
                            m_len: bm,
                            n0: w * cols,
                            n_len: cols,
                            k_len: bn,
                        }
                        .emit(&mut body);
                    }
                }
                let copy = |kind, step| Stage {
                    kind,
                    step,
                    instrs: body.clone(),
                };
                let mut stages = vec![Stage {
                    kind: StageKind::Prologue,
                    step: None,
                    instrs: Vec::new(),
                }];
                match (self.style, self.causal) {
                    (FlashStyle::Torch, _) => {
                        for s in 0..self.masked_copies() {
                            stages.push(copy(StageKind::Masked, Some(s)));
                        }
                        stages.push(copy(StageKind::Unmasked, None));
                    }
                    (FlashStyle::Triton, true) => {
                        stages.push(copy(StageKind::Unmasked, None));
                        stages.push(copy(StageKind::Masked, None));
                    }
                    (FlashStyle::Triton, false) => stages.push(copy(StageKind::Unmasked, None)),
                }
                stages.push(Stage {
                    kind: StageKind::Epilogue,
                    step: None,
                    instrs: Vec::new(),
                });
                WarpProgram { warp: w, stages }
            })
            .collect();
        finish(tiles, smem, arch, warps)
    }

    /// The kv-block loop of the CTA that owns Q block `q_block` (rows `q_block·bm ..`), in the
    /// order the kernel runs it, for a sequence of `seq` keys, as runs of consecutive blocks
    /// through one stage (at most `masked_copies() + 1` runs, so walking a grid costs one step
    /// per run, not per block). Stage indices refer to the program [`Self::build`] makes.
    ///
    /// * torch (FlashAttention-2): `n_block` runs from `n_block_max − 1` down to 0 with
    ///   `n_block_max = min(seq/bn, ceil((q_block+1)·bm/bn))` when causal (`seq/bn` otherwise);
    ///   the first `masked_copies()` iterations go through the masked copies, one each, the rest
    ///   through the unmasked copy;
    /// * triton causal: blocks `0 .. q_block·bm/bn` through the unmasked copy, then the bm/bn
    ///   blocks of the diagonal through the masked copy; not causal: all `seq/bn` blocks unmasked.
    pub fn kv_runs(&self, q_block: u32, seq: u32) -> Vec<KvRun> {
        let n_kv = seq / self.bn;
        let mut out = Vec::new();
        let mut push = |stage: usize, first: u32, count: u32, descending: bool| {
            if count > 0 {
                out.push(KvRun {
                    stage,
                    first,
                    count,
                    descending,
                });
            }
        };
        match self.style {
            FlashStyle::Torch => {
                let n_max = if self.causal {
                    let rows = (q_block as u64 + 1) * self.bm as u64;
                    (n_kv as u64).min(rows.div_ceil(self.bn as u64)) as u32
                } else {
                    n_kv
                };
                let masked = self.masked_copies().min(n_max);
                for i in 0..masked {
                    push(1 + i as usize, n_max - 1 - i, 1, true);
                }
                if n_max > masked {
                    push(
                        1 + self.masked_copies() as usize,
                        n_max - 1 - masked,
                        n_max - masked,
                        true,
                    );
                }
            }
            FlashStyle::Triton => {
                if self.causal {
                    let off_band = (q_block as u64 * self.bm as u64 / self.bn as u64) as u32;
                    let on_band = self.bm / self.bn;
                    push(1, 0, off_band, false);
                    let end = off_band.saturating_add(on_band).min(n_kv);
                    push(2, off_band, end.saturating_sub(off_band), false);
                } else {
                    push(1, 0, n_kv, false);
                }
            }
        }
        out
    }

    /// [`Self::kv_runs`] one block at a time.
    pub fn kv_schedule(&self, q_block: u32, seq: u32) -> Vec<KvVisit> {
        self.kv_runs(q_block, seq)
            .iter()
            .flat_map(|r| {
                (0..r.count).map(move |i| KvVisit {
                    kv_block: if r.descending {
                        r.first - i
                    } else {
                        r.first + i
                    },
                    stage: r.stage,
                })
            })
            .collect()
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn lcm(a: u32, b: u32) -> u32 {
    a / gcd(a, b) * b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::bank::schedule;

    fn torch() -> FlashTiling {
        FlashTiling {
            style: FlashStyle::Torch,
            bm: 64,
            bn: 64,
            head_dim: 128,
            warps: 4,
            causal: true,
        }
    }

    #[test]
    fn ldsm_addresses_follow_the_fragment_order() {
        let tile = SmemTile {
            id: TileId::Q,
            layout: Layout::row_major(64, 128, 2),
            base_byte: 0,
        };
        let op = ldsm_x4(&tile, false, 16, 32, X4_ORDER_A);
        // lane 0: row 16, col 32; lane 9: matrix 1 row 1 -> row 25, col 32; lane 17: row 17, col 40.
        assert_eq!(op.request.lane_byte_offsets[0], (16 * 128 + 32) * 2);
        assert_eq!(op.request.lane_byte_offsets[9], (25 * 128 + 32) * 2);
        assert_eq!(op.request.lane_byte_offsets[17], (17 * 128 + 40) * 2);
        // Row-major pitch 256 bytes: the 8 rows of a matrix share banks: 8-way, 32 wavefronts.
        let r = schedule(&op.request);
        assert_eq!((r.wavefront_count(), r.bank_conflicts()), (32, 28));
    }

    #[test]
    fn swizzle_removes_the_q_conflicts() {
        let cta = torch().build("swizzle:3,3,4", Arch::Sm80).unwrap();
        for w in &cta.warps {
            for i in &w.stages[1].instrs {
                if let WarpInstr::Smem(op) = i {
                    assert_eq!(schedule(&op.request).bank_conflicts(), 0, "{op:?}");
                }
            }
        }
    }

    #[test]
    fn torch_warps_own_disjoint_rows() {
        let cta = torch().build("row", Arch::Sm80).unwrap();
        for (w, prog) in cta.warps.iter().enumerate() {
            for i in &prog.stages[1].instrs {
                if let WarpInstr::Mma(m) = i {
                    assert_eq!(m.m / 16, w as u32);
                }
            }
        }
        assert_eq!(cta.smem_bytes, 3 * 16384);
        assert_eq!(cta.warps[0].stages.len(), 4);
    }

    #[test]
    fn schedules_visit_every_needed_block_once() {
        for style in [FlashStyle::Torch, FlashStyle::Triton] {
            for causal in [false, true] {
                for (bm, bn) in [(64, 64), (128, 64), (64, 128), (128, 32)] {
                    let t = FlashTiling {
                        style,
                        bm,
                        bn,
                        head_dim: 64,
                        warps: 2,
                        causal,
                    };
                    if t.validate().is_err() {
                        continue;
                    }
                    let seq = 512;
                    for qb in 0..seq / bm {
                        let mut kv: Vec<u32> =
                            t.kv_schedule(qb, seq).iter().map(|v| v.kv_block).collect();
                        kv.sort();
                        let need = if causal {
                            ((qb + 1) * bm).div_ceil(bn).min(seq / bn)
                        } else {
                            seq / bn
                        };
                        assert_eq!(kv, (0..need).collect::<Vec<_>>(), "{t:?} q {qb}");
                    }
                }
            }
        }
    }

    #[test]
    fn bad_tilings_name_the_value() {
        let mut t = torch();
        t.warps = 8;
        let e = t.validate().unwrap_err().to_string();
        assert!(
            e.contains("--warps 8") && e.contains("allowed: 1, 2, 4"),
            "{e}"
        );
        t.warps = 3;
        assert!(t.validate().unwrap_err().to_string().contains("evenly"));
        t.warps = 4;
        t.bn = 24;
        assert!(t.validate().unwrap_err().to_string().contains("--bn 24"));
        let e = torch().build("col", Arch::Sm80).unwrap_err().to_string();
        assert!(e.contains("'col'") && e.contains("allowed"), "{e}");
        let e = torch().build("pad:4", Arch::Sm80).unwrap_err().to_string();
        assert!(e.contains("16-byte"), "{e}");
        let big = FlashTiling {
            bm: 128,
            bn: 128,
            head_dim: 256,
            ..torch()
        };
        let e = big.build("row", Arch::Sm75).unwrap_err().to_string();
        assert!(e.contains("sm_75") && e.contains("65536"), "{e}");
    }
}
