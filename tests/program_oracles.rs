//! The warp programs of `sim counts` (`tilelab::sim::program`) against oracles that do not come
//! from the program builders:
//!
//! * **register contents**: shared memory is filled so that every f16 names its tile and
//!   element; every `ldmatrix` of a warp's loop body is executed (`sim::exec`), and the registers
//!   each mma consumes must hold exactly the A and B fragments of the PTX ISA operand tables
//!   (`tests/data/ptx_isa/mma_m16n8k16_f16.json`) for that mma's (m, n, k);
//! * **warp ownership**: the mma tiles of each warp equal an enumeration written here from the
//!   seed article's description of each style (GEMM rows/cols split; PyTorch FA2 parallel over Q
//!   rows; the simple Triton kernel parallel over K: keys of S, columns of O);
//! * **masked steps**: the kv loop of every CTA against a brute force over the causal mask's
//!   elements, for every (bm, bn, seq, causal) up to a size, including bm < bn and bm % bn ≠ 0.

use crate::common;

use std::collections::{BTreeSet, HashMap};

use common::isa_tables as isa;
use tilelab::sim::arch::Arch;
use tilelab::sim::exec::{WarpOp, execute};
use tilelab::sim::instr::Instruction;
use tilelab::sim::layout::LayoutSpec;
use tilelab::sim::program::{
    CtaProgram, FlashStyle, FlashTiling, GemmTiling, MmaOp, Product, Split, StageKind, TileId,
    WarpInstr,
};
use tilelab::sim::smem::SharedMemory;

// ---------------------------------------------------------------------------------------------
// Register contents.

/// Index of a tile in the tag space: tags are `16384 · index + row · cols + col` (mod 2^16), so
/// every tile of at most 16384 elements gets distinct tags.
fn tile_index(id: TileId) -> u32 {
    match id {
        TileId::A | TileId::Q => 0,
        TileId::B | TileId::K => 1,
        TileId::V => 2,
        TileId::P => 3,
    }
}

fn tag(cta: &CtaProgram, id: TileId, row: u32, col: u32) -> u32 {
    let t = cta.tile(id).unwrap();
    assert!(t.layout.rows * t.layout.cols <= 16384);
    (16384 * tile_index(id) + row * t.layout.cols + col) & 0xffff
}

/// Shared memory with every element of every tile holding its tag.
fn tagged_memory(cta: &CtaProgram) -> SharedMemory {
    let mut smem = SharedMemory::zeroed(cta.smem_bytes);
    for t in &cta.tiles {
        for r in 0..t.layout.rows {
            for c in 0..t.layout.cols {
                smem.write_u16(t.byte_addr(r, c), tag(cta, t.id, r, c) as u16)
                    .unwrap();
            }
        }
    }
    smem
}

/// Which tile (and how it is stored) holds each operand of a product.
struct Operands {
    /// A, stored M×K; `None` when A stays in registers (FA2's P).
    a: Option<TileId>,
    /// B and whether it is stored N×K (loaded without .trans) or K×N (with .trans).
    b: TileId,
    b_stored_nk: bool,
}

fn operands(p: Product, style: Option<FlashStyle>) -> Operands {
    match (p, style) {
        (Product::AB, _) => Operands {
            a: Some(TileId::A),
            b: TileId::B,
            b_stored_nk: true,
        },
        (Product::QK, _) => Operands {
            a: Some(TileId::Q),
            b: TileId::K,
            b_stored_nk: true,
        },
        (Product::PV, Some(FlashStyle::Triton)) => Operands {
            a: Some(TileId::P),
            b: TileId::V,
            b_stored_nk: false,
        },
        (Product::PV, _) => Operands {
            a: None,
            b: TileId::V,
            b_stored_nk: false,
        },
    }
}

/// Walks every warp's loop body (or GEMM body) in issue order, executing each ldmatrix on the
/// tagged memory, and checks each mma's A and B registers against the ISA tables. Returns how
/// many (mma, operand) pairs were checked.
fn check_registers(cta: &CtaProgram, style: Option<FlashStyle>, what: &str) -> usize {
    let ta = isa::mma_table(16, "A", "f16");
    let tb = isa::mma_table(16, "B", "f16");
    let mut smem = tagged_memory(cta);
    let mut checked = 0;
    for w in &cta.warps {
        let stage = w
            .stages
            .iter()
            .find(|s| s.is_loop_copy() || s.kind == StageKind::Body)
            .unwrap();
        // The registers of the latest ldmatrix of each (tile, top row, left col) block.
        let mut loaded: HashMap<(TileId, u32, u32), [[u32; 4]; 32]> = HashMap::new();
        for ins in &stage.instrs {
            match ins {
                WarpInstr::Smem(op) => {
                    if let Instruction::Ldmatrix { .. } = op.request.instruction {
                        let step = execute(&mut smem, &WarpOp::load(op.request.clone())).unwrap();
                        loaded.insert((op.tile, op.row, op.col), step.regs);
                    }
                    // Stores (triton's P) are not executed: the tags stay, so a later load of P
                    // still names the elements it reads.
                }
                WarpInstr::Mma(m) => {
                    let ops = operands(m.product, style);
                    // B: the 16x16 block holding (k..k+16, n..n+8); n-tile j of its two.
                    let n16 = m.n - m.n % 16;
                    let j = (m.n % 16) / 8;
                    let key = if ops.b_stored_nk {
                        (ops.b, n16, m.k)
                    } else {
                        (ops.b, m.k, n16)
                    };
                    let regs = loaded.get(&key).unwrap_or_else(|| {
                        panic!(
                            "{what}: warp {} {m:?}: no ldmatrix of {key:?} before it",
                            w.warp
                        )
                    });
                    for &[lane, i, reg, pos, kr, nc] in &tb.fragments {
                        let (kk, nn) = (m.k + kr, m.n + nc);
                        let want = if ops.b_stored_nk {
                            tag(cta, ops.b, nn, kk)
                        } else {
                            tag(cta, ops.b, kk, nn)
                        };
                        let got =
                            regs[lane as usize][(2 * j + reg) as usize] >> (16 * pos) & 0xffff;
                        assert_eq!(
                            got,
                            want,
                            "{what}: warp {} {m:?}: B lane {lane} b{i} (register {}, half {pos}) should hold B[{kk}][{nn}]",
                            w.warp,
                            2 * j + reg
                        );
                    }
                    checked += 1;
                    let Some(a) = ops.a else { continue };
                    let regs = loaded.get(&(a, m.m, m.k)).unwrap_or_else(|| {
                        panic!(
                            "{what}: warp {} {m:?}: no ldmatrix of A block ({}, {})",
                            w.warp, m.m, m.k
                        )
                    });
                    for &[lane, i, reg, pos, mr, kc] in &ta.fragments {
                        let want = tag(cta, a, m.m + mr, m.k + kc);
                        let got = regs[lane as usize][reg as usize] >> (16 * pos) & 0xffff;
                        assert_eq!(
                            got,
                            want,
                            "{what}: warp {} {m:?}: A lane {lane} a{i} should hold A[{}][{}]",
                            w.warp,
                            m.m + mr,
                            m.k + kc
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    checked
}

fn layouts() -> Vec<LayoutSpec> {
    ["row", "pad:8", "swizzle:3,3,3", "swizzle:3,3,4"]
        .iter()
        .map(|s| LayoutSpec::parse(s).unwrap())
        .collect()
}

#[test]
fn gemm_ldmatrix_registers_are_the_isa_fragments_of_each_mma() {
    let mut total = 0;
    for (m, n, k, warps, split) in [
        (16, 16, 16, 1, Split::Rows),
        (64, 64, 64, 4, Split::Rows),
        (64, 64, 64, 4, Split::Cols),
        (32, 128, 48, 2, Split::Cols),
        (128, 32, 32, 8, Split::Rows),
    ] {
        let t = GemmTiling {
            m,
            n,
            k,
            warps,
            split,
        };
        for layout in layouts() {
            let Ok(cta) = t.build(&layout, Arch::Sm90) else {
                continue;
            };
            total += check_registers(&cta, None, &format!("{t:?} {layout}"));
        }
    }
    assert!(total > 1000, "{total}");
}

fn flash(style: FlashStyle, bm: u32, bn: u32, d: u32, warps: u32, causal: bool) -> FlashTiling {
    FlashTiling {
        style,
        bm,
        bn,
        head_dim: d,
        warps,
        causal,
    }
}

#[test]
fn flash_ldmatrix_registers_are_the_isa_fragments_of_each_mma() {
    let mut total = 0;
    for style in [FlashStyle::Torch, FlashStyle::Triton] {
        for (bm, bn, d, warps) in [
            (64, 64, 128, 4),
            (64, 32, 64, 2),
            (32, 64, 64, 2),
            (128, 64, 64, 4),
        ] {
            let t = flash(style, bm, bn, d, warps, true);
            for layout in layouts() {
                let Ok(cta) = t.build(&layout, Arch::Sm90) else {
                    continue;
                };
                total += check_registers(&cta, Some(style), &format!("{t:?} {layout}"));
            }
        }
    }
    assert!(total > 5000, "{total}");
}

// ---------------------------------------------------------------------------------------------
// Warp ownership, enumerated from the articles' descriptions.

type Tiles = BTreeSet<(&'static str, u32, u32, u32)>;

fn tiles(p: Product, rows: std::ops::Range<u32>, cols: std::ops::Range<u32>, k: u32) -> Tiles {
    let mut s = Tiles::new();
    for m in rows.step_by(16) {
        for n in cols.clone().step_by(8) {
            for kk in (0..k).step_by(16) {
                s.insert((p.name(), m, n, kk));
            }
        }
    }
    s
}

fn mma_set(cta: &CtaProgram, w: usize) -> Tiles {
    let stage = cta.warps[w]
        .stages
        .iter()
        .find(|s| s.is_loop_copy() || s.kind == StageKind::Body)
        .unwrap();
    stage
        .instrs
        .iter()
        .filter_map(|i| match i {
            WarpInstr::Mma(MmaOp { product, m, n, k }) => Some((product.name(), *m, *n, *k)),
            _ => None,
        })
        .collect()
}

#[test]
fn gemm_warps_own_the_rows_or_columns_the_article_gives_them() {
    // Seed 000: with K != 16 only rows (or only columns) are split; warp w owns C rows
    // w·M/n .. (w+1)·M/n (every column), or columns w·N/n .. (every row).
    for (m, n, k, warps) in [
        (64, 64, 32, 4),
        (128, 64, 64, 2),
        (32, 128, 16, 2),
        (64, 32, 48, 1),
    ] {
        for split in [Split::Rows, Split::Cols] {
            let t = GemmTiling {
                m,
                n,
                k,
                warps,
                split,
            };
            let Ok(cta) = t.build(&LayoutSpec::row(), Arch::Sm90) else {
                continue;
            };
            for w in 0..warps {
                let want = match split {
                    Split::Rows => tiles(Product::AB, w * m / warps..(w + 1) * m / warps, 0..n, k),
                    Split::Cols => tiles(Product::AB, 0..m, w * n / warps..(w + 1) * n / warps, k),
                };
                assert_eq!(mma_set(&cta, w as usize), want, "{t:?} warp {w}");
            }
        }
    }
}

#[test]
fn flash_warps_own_what_each_style_gives_them() {
    for (bm, bn, d, warps) in [
        (64, 64, 128, 4),
        (128, 64, 64, 4),
        (64, 128, 64, 2),
        (64, 32, 32, 2),
    ] {
        for style in [FlashStyle::Torch, FlashStyle::Triton] {
            let t = flash(style, bm, bn, d, warps, false);
            let Ok(cta) = t.build(&LayoutSpec::row(), Arch::Sm90) else {
                continue;
            };
            for w in 0..warps {
                let want: Tiles = match style {
                    // PyTorch's FA2, parallel over Q rows: warp w owns rows w·bm/n.. of S and O.
                    FlashStyle::Torch => {
                        let rows = w * bm / warps..(w + 1) * bm / warps;
                        let mut s = tiles(Product::QK, rows.clone(), 0..bn, d);
                        s.extend(tiles(Product::PV, rows, 0..d, bn));
                        s
                    }
                    // The simple Triton kernel, parallel over K: warp w owns keys w·bn/n.. of S
                    // (all rows) and columns w·d/n.. of O (all rows, every key).
                    FlashStyle::Triton => {
                        let mut s =
                            tiles(Product::QK, 0..bm, w * bn / warps..(w + 1) * bn / warps, d);
                        s.extend(tiles(
                            Product::PV,
                            0..bm,
                            w * d / warps..(w + 1) * d / warps,
                            bn,
                        ));
                        s
                    }
                };
                assert_eq!(mma_set(&cta, w as usize), want, "{t:?} warp {w}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Masked steps against a brute force over the mask.

/// Whether kv block `nb` (keys nb·bn ..) has, for the query rows of block `qb`, any element the
/// causal mask removes (key > query) and any it keeps (key <= query): row by row, each row
/// against the block's first and last key.
fn mask_of_block(bm: u32, bn: u32, qb: u32, nb: u32) -> (bool, bool) {
    let (first, last) = (nb * bn, (nb + 1) * bn - 1);
    let (mut masked, mut kept) = (false, false);
    for i in qb * bm..(qb + 1) * bm {
        masked |= last > i;
        kept |= first <= i;
    }
    (masked, kept)
}

#[test]
fn kv_loops_match_a_brute_force_over_the_causal_mask() {
    let sizes = [16u32, 32, 48, 64, 80, 96, 128];
    let mut cases = 0;
    for style in [FlashStyle::Torch, FlashStyle::Triton] {
        for &bm in &sizes {
            for &bn in &sizes {
                for causal in [false, true] {
                    let t = flash(style, bm, bn, 16, 1, causal);
                    if t.validate().is_err() {
                        // Only triton causal with bm % bn != 0 is refused (its on-band loop
                        // steps over the diagonal in bn blocks).
                        assert!(
                            style == FlashStyle::Triton && causal && bm % bn != 0,
                            "{t:?}"
                        );
                        continue;
                    }
                    let cta = t.build(&LayoutSpec::row(), Arch::Sm90).unwrap();
                    let stages = &cta.warps[0].stages;
                    let l = bm / gcd(bm, bn) * bn;
                    // The masked steps a CTA needs: the longest run of mask-needing blocks at
                    // the start of its loop, over every q block of every sequence length.
                    let mut needed = 0;
                    for seq in (l..=(4 * l).max(512)).step_by(l as usize) {
                        for qb in 0..seq / bm {
                            let visits = t.kv_schedule(qb, seq);
                            let blocks: Vec<u32> = visits.iter().map(|v| v.kv_block).collect();
                            // Every block with a kept element is visited once; no other.
                            let want: BTreeSet<u32> = (0..seq / bn)
                                .filter(|&nb| !causal || mask_of_block(bm, bn, qb, nb).1)
                                .collect();
                            assert_eq!(
                                blocks.iter().copied().collect::<BTreeSet<_>>(),
                                want,
                                "{t:?} seq {seq} q block {qb}"
                            );
                            assert_eq!(
                                blocks.len(),
                                want.len(),
                                "{t:?} seq {seq} q block {qb}: a block visited twice"
                            );
                            for (pos, v) in visits.iter().enumerate() {
                                let needs_mask = causal && mask_of_block(bm, bn, qb, v.kv_block).0;
                                let kind = stages[v.stage].kind;
                                assert!(matches!(kind, StageKind::Masked | StageKind::Unmasked));
                                if needs_mask {
                                    assert_eq!(
                                        kind,
                                        StageKind::Masked,
                                        "{t:?} seq {seq} q block {qb}: kv block {} needs the mask",
                                        v.kv_block
                                    );
                                    needed = needed.max(pos as u32 + 1);
                                }
                            }
                            cases += 1;
                        }
                    }
                    if style == FlashStyle::Torch {
                        let copies = stages
                            .iter()
                            .filter(|s| s.kind == StageKind::Masked)
                            .count() as u32;
                        assert_eq!(copies, t.masked_copies());
                        if causal {
                            // As many unrolled masked steps as the worst CTA needs, no more.
                            assert_eq!(copies, needed, "{t:?}");
                        } else {
                            // FA2 peels one (boundary) masking iteration when not causal.
                            assert_eq!((copies, needed), (1, 0), "{t:?}");
                        }
                    }
                }
            }
        }
    }
    assert!(cases > 10_000, "{cases}");
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[test]
fn fa2_masked_steps_are_ceil_bm_over_bn_when_one_divides_the_other() {
    // flash_fwd_kernel.h: n_masking_steps = ceil_div(kBlockM, kBlockN) for causal, even M and N;
    // its tiles (kBlockM 64/128, kBlockN 32..256) always have one size dividing the other.
    for (bm, bn, steps) in [
        (64, 64, 1),
        (128, 64, 2),
        (128, 32, 4),
        (64, 128, 1),
        (32, 128, 1),
        (64, 256, 1),
    ] {
        assert_eq!(
            flash(FlashStyle::Torch, bm, bn, 64, 1, true).masked_copies(),
            steps,
            "{bm} {bn}"
        );
    }
}

/// `FlashTiling::kv_visits` (closed form, what `sim counts flash-attn` checks for overflow
/// before it walks the grid) against the walk of `kv_runs` over every Q block, for every valid
/// (style, bm, bn, causal) of the brute force above and every sequence length up to 8 lcm(bm, bn).
#[test]
fn kv_visits_in_closed_form_equal_the_walk() {
    let sizes = [16u32, 32, 48, 64, 80, 96, 128];
    let mut cases = 0;
    for style in [FlashStyle::Torch, FlashStyle::Triton] {
        for &bm in &sizes {
            for &bn in &sizes {
                for causal in [false, true] {
                    let t = flash(style, bm, bn, 16, 1, causal);
                    if t.validate().is_err() {
                        continue;
                    }
                    let l = bm / gcd(bm, bn) * bn;
                    for seq in (l..=8 * l).step_by(l as usize) {
                        let runs: Vec<_> =
                            (0..seq / bm).flat_map(|qb| t.kv_runs(qb, seq)).collect();
                        // A run is one or more consecutive blocks through one stage, at most
                        // masked_copies() + 1 of them per Q block.
                        assert!(
                            runs.iter().all(|r| r.count > 0),
                            "{t:?} seq {seq}: empty run"
                        );
                        for qb in 0..seq / bm {
                            assert!(t.kv_runs(qb, seq).len() as u32 <= t.masked_copies() + 1);
                        }
                        let walked: u128 = runs.iter().map(|r| r.count as u128).sum();
                        assert_eq!(t.kv_visits(seq), walked, "{t:?} seq {seq}");
                        cases += 1;
                    }
                }
            }
        }
    }
    assert!(cases > 1_000, "{cases}");
    // Large sequences, the walk over 2^16 Q blocks against the closed form (the walk in u128).
    for (style, bm, bn) in [
        (FlashStyle::Torch, 64, 64),
        (FlashStyle::Torch, 48, 32),
        (FlashStyle::Torch, 32, 48),
        (FlashStyle::Triton, 128, 64),
    ] {
        let t = flash(style, bm, bn, 16, 1, true);
        let seq = (1u32 << 16) * bm;
        let seq = seq - seq % (bm / gcd(bm, bn) * bn);
        let walked: u128 = (0..seq / bm)
            .flat_map(|qb| t.kv_runs(qb, seq))
            .map(|r| r.count as u128)
            .sum();
        assert_eq!(t.kv_visits(seq), walked, "{t:?} seq {seq}");
    }
}
