//! Tests of "Instruction counts, memory traffic and occupancy of tiled kernels".
//!
//! Contents:
//! * `article`: every number the seed articles state, as expected values (seed 000: LDSM /
//!   LDSM.T / HMMA per copy and per kernel, 2048 / 15360 / 8704 executions; seed 004: grid
//!   sizes, measured traffic, 2 blocks and 25% occupancy on sm_75);
//! * `agreement`: the articles' closed forms against the walked programs over sweeps of tile
//!   sizes, warp counts, styles and masking;
//! * `props`: proptest invariants of programs, schedules and bank statistics;
//! * `cli`: the built binary: tables, `--json`, snapshots, bad inputs (exit 2, one line on
//!   stderr, no panic), a closed pipe.

use tilelab::sim::arch::Arch;
use tilelab::sim::counts::{
    bank_summary, dynamic_counts, flash_checks, flash_dynamic_checks, gemm_checks, gemm_counts,
    static_counts, warps_share_code,
};
use tilelab::sim::layout::LayoutSpec;
use tilelab::sim::program::{
    FlashProblem, FlashStyle, FlashTiling, GemmCase, GemmTiling, Split, StageKind, TileId,
    WarpInstr,
};

fn article_fa(style: FlashStyle) -> FlashTiling {
    FlashTiling {
        style,
        bm: 64,
        bn: 64,
        head_dim: 128,
        warps: 4,
        causal: true,
    }
}

const ARTICLE_PROBLEM: FlashProblem = FlashProblem {
    batch: 2,
    heads: 16,
    seq: 1024,
};

mod article {
    use super::*;
    use tilelab::sim::occupancy::{Limiter, OccupancyInput, occupancy};
    use tilelab::sim::traffic::{
        ARTICLE_PROBLEM as TRAFFIC, ARTICLE_V1, ARTICLE_V2, LoopOrder, TrafficProblem, compare,
        simulate,
    };

    fn gemm(m: u32, n: u32, k: u32, warps: u32, split: Split) -> (GemmCase, u64, u64, u64) {
        let t = GemmTiling {
            m,
            n,
            k,
            warps,
            split,
        };
        let g = gemm_counts(&t, &t.build(&LayoutSpec::row(), Arch::Sm80).unwrap());
        (
            g.case,
            g.a_loads_per_warp,
            g.b_loads_per_warp,
            g.per_warp.hmma,
        )
    }

    /// Seed 000, the four counting cases (A loads, B loads, HMMA per warp).
    #[test]
    fn seed_000_gemm_cases() {
        // One warp, K = 16: A M/16, B N/16, MN/(16·8).
        assert_eq!(
            gemm(64, 64, 16, 1, Split::Rows),
            (GemmCase::OneWarpK16, 4, 4, 32)
        );
        // n = 2 warps splitting B (A·[B0; B1]): A M/16, B N/(16·n), MN/(16·8·n).
        assert_eq!(
            gemm(64, 64, 16, 2, Split::Cols),
            (GemmCase::WarpsK16, 4, 2, 16)
        );
        // One warp, K ≠ 16: MK/256 + NK/256 loads, MNK/(16·16·8) mma.
        assert_eq!(
            gemm(64, 64, 128, 1, Split::Rows),
            (GemmCase::OneWarpK, 32, 32, 256)
        );
        // n warps, K ≠ 16, rows only: torch's Q·Kᵀ, 64·128/(16·16·4) + 64·128/(16·16) = 8 + 32.
        assert_eq!(
            gemm(64, 64, 128, 4, Split::Rows),
            (GemmCase::WarpsK, 8, 32, 64)
        );
    }

    /// Seed 000: torch style 40 LDSM + 32 LDSM.T + 128 HMMA per copy, 80 / 64 / 256 per kernel.
    #[test]
    fn seed_000_torch_static() {
        let cta = article_fa(FlashStyle::Torch)
            .build(&LayoutSpec::row(), Arch::Sm80)
            .unwrap();
        let s = static_counts(&cta.warps[0]);
        let c = s.per_copy.unwrap();
        assert_eq!((c.ldsm, c.ldsm_t, c.hmma), (40, 32, 128));
        let k = s.per_kernel;
        assert_eq!((k.ldsm, k.ldsm_t, k.hmma), (80, 64, 256));
        // Q·Kᵀ: 8 + 32 LDSM, 64 HMMA; P·V: 32 LDSM.T, 64 HMMA (P in registers).
        let copy = &cta.warps[0].stages[1].instrs;
        let of_tile = |id| {
            copy.iter()
                .filter(|i| matches!(i, WarpInstr::Smem(op) if op.tile == id))
                .count()
        };
        assert_eq!(
            (of_tile(TileId::Q), of_tile(TileId::K), of_tile(TileId::V)),
            (8, 32, 32)
        );
    }

    /// Seed 000: Triton style 112 LDSM (56 per copy: +16 for P) and 16 LDSM.T (8 per copy).
    #[test]
    fn seed_000_triton_static() {
        let cta = article_fa(FlashStyle::Triton)
            .build(&LayoutSpec::row(), Arch::Sm80)
            .unwrap();
        let s = static_counts(&cta.warps[0]);
        let c = s.per_copy.unwrap();
        assert_eq!((c.ldsm, c.ldsm_t, c.hmma), (56, 8, 128));
        assert_eq!((s.per_kernel.ldsm, s.per_kernel.ldsm_t), (112, 16));
        assert_eq!(s.per_kernel.hmma, 256);
    }

    /// Seed 000: lines outside the loop 2048 = 2·16·16·4, unmasked stage 15360 = 2048·15/2,
    /// mean over lines 8704, for both styles.
    #[test]
    fn seed_000_dynamic() {
        for style in [FlashStyle::Torch, FlashStyle::Triton] {
            let t = article_fa(style);
            let cta = t.build(&LayoutSpec::row(), Arch::Sm80).unwrap();
            let d = dynamic_counts(&t, &ARTICLE_PROBLEM, &cta.warps[0]).unwrap();
            let by = |k: StageKind| -> Vec<u64> {
                d.stages
                    .iter()
                    .filter(|s| s.kind == k)
                    .map(|s| s.executions_per_line)
                    .collect()
            };
            assert_eq!(by(StageKind::Prologue), vec![2048]);
            assert_eq!(by(StageKind::Epilogue), vec![2048]);
            assert_eq!(by(StageKind::Masked), vec![2048]);
            assert_eq!(by(StageKind::Unmasked), vec![15360]);
            assert_eq!(d.mean_line_executions, 8704.0, "{style:?}");
            assert_eq!(d.ctas * d.warps_per_cta as u64, 2048);
        }
    }

    /// Seed 004: grid 640 -> 20,480 blocks; v1 writes 5.54 GB; the measured reads against the model.
    #[test]
    fn seed_004_traffic() {
        let v1 = simulate(&TRAFFIC, LoopOrder::V1, true).unwrap();
        let v2 = simulate(&TRAFFIC, LoopOrder::V2, true).unwrap();
        assert_eq!((v1.blocks, v2.blocks), (640, 20_480));
        assert_eq!(v2.grid, [32, 640]);
        let c1 = compare(&v1, &ARTICLE_V1);
        assert!(c1.written_gap_bytes.unwrap().unsigned_abs() <= ARTICLE_V1.rounding_bytes);
        // The v1 read gap is one more pass over K and V.
        let passes = c1.read_gap_kv_passes.unwrap();
        assert!((passes - 1.0).abs() < 0.02, "{passes}");
        // v2 with L2 reuse reads Q, K, V once: 503.32 MB; the measured 412.18 MB is below that.
        assert_eq!(v2.read_bytes, 503_316_480);
        let c2 = compare(&v2, &ARTICLE_V2);
        assert!(c2.measured_below_compulsory);
        // Without L2 reuse v2 would read K and V once per Q block.
        let v2_no = simulate(&TRAFFIC, LoopOrder::V2, false).unwrap();
        assert_eq!(v2_no.read_bytes, 167_772_160 * (1 + 2 * 32));
    }

    /// Separate B_r (--bm) and B_c (--bn) against the FlashAttention papers' I/O analysis, on the
    /// article's problem (one tensor x = B·N_h·S·D·4 = 167,772,160 bytes):
    /// * v1 (FlashAttention, Algorithm 1: K/V outer over T_c = S/B_c blocks): K and V read once;
    ///   Q read, O read and O written once per outer step, T_c times; m and ℓ (one f32 each per
    ///   row) read and written T_c times: none of it depends on B_r;
    /// * v2 (FlashAttention-2, Algorithm 1: Q outer over T_r = S/B_r blocks, one thread block
    ///   each): grid (T_r, B·N_h); Q read and O written once; K and V read T_r times without L2
    ///   (once with it); the logsumexp L written once: 4 bytes per row, 4·S per head;
    /// * both: T_r·T_c inner steps per head.
    #[test]
    fn traffic_with_bm_and_bn_follows_the_papers_io_analysis() {
        let x: u64 = 167_772_160;
        let rows: u64 = 10 * 64 * 1024; // B·N_h·S query rows
        let tensor = |r: &tilelab::sim::traffic::TrafficReport, name: &str| {
            let t = r.tensors.iter().find(|t| t.tensor == name).unwrap();
            (t.read_bytes, t.written_bytes, t.l2_hit_bytes)
        };
        for (bm, bn) in [
            (32u32, 32u32),
            (64, 32),
            (32, 64),
            (128, 64),
            (16, 128),
            (256, 16),
        ] {
            let p = TrafficProblem { bm, bn, ..TRAFFIC };
            let (tr, tc) = (1024 / bm as u64, 1024 / bn as u64);
            let v1 = simulate(&p, LoopOrder::V1, false).unwrap();
            assert_eq!(tensor(&v1, "K"), (x, 0, 0), "{bm} {bn}");
            assert_eq!(tensor(&v1, "Q"), (tc * x, 0, 0), "{bm} {bn}");
            assert_eq!(tensor(&v1, "O"), (tc * x, tc * x, 0), "{bm} {bn}");
            assert_eq!(tensor(&v1, "m,l"), (tc * 8 * rows, tc * 8 * rows, 0));
            assert_eq!(tensor(&v1, "L"), (0, 0, 0));
            assert_eq!((v1.grid, v1.inner_steps), ([10, 64], tr * tc * 640));
            let v2 = simulate(&p, LoopOrder::V2, false).unwrap();
            assert_eq!(tensor(&v2, "Q"), (x, 0, 0), "{bm} {bn}");
            assert_eq!(tensor(&v2, "K"), (tr * x, 0, 0), "{bm} {bn}");
            assert_eq!(tensor(&v2, "V"), (tr * x, 0, 0), "{bm} {bn}");
            assert_eq!(tensor(&v2, "O"), (0, x, 0), "{bm} {bn}");
            assert_eq!(tensor(&v2, "L"), (0, 4 * rows, 0), "{bm} {bn}");
            assert_eq!(v2.written_bytes, x + 4 * rows);
            assert_eq!((v2.grid, v2.blocks), ([tr, 640], tr * 640));
            assert_eq!(v2.inner_steps, tr * tc * 640);
            let v2l2 = simulate(&p, LoopOrder::V2, true).unwrap();
            assert_eq!(tensor(&v2l2, "K"), (x, 0, (tr - 1) * x), "{bm} {bn}");
            assert_eq!(v2l2.read_bytes, 3 * x);
        }
        // The numbers for B_r = 64, B_c = 32: v2 reads K and V 16 times (2.68 GB each), writes
        // 167.77 MB of O and 2.62 MB of logsumexp; v1 reads Q 32 times (5.37 GB).
        let p = TrafficProblem {
            bm: 64,
            bn: 32,
            ..TRAFFIC
        };
        let v2 = simulate(&p, LoopOrder::V2, false).unwrap();
        assert_eq!(tensor(&v2, "K").0, 2_684_354_560);
        assert_eq!(v2.written_bytes, 167_772_160 + 2_621_440);
        let v1 = simulate(&p, LoopOrder::V1, false).unwrap();
        assert_eq!(tensor(&v1, "Q").0, 5_368_709_120);
    }

    /// Seed 004: ~28 KB per block, 4 warps on sm_75 -> 2 blocks per SM, 25% occupancy.
    #[test]
    fn seed_004_occupancy() {
        let r = occupancy(&OccupancyInput {
            arch: Arch::Sm75,
            threads_per_block: 128,
            smem_per_block_bytes: 28 * 1024,
            regs_per_thread: None,
            smem_opt_in: true,
        })
        .unwrap();
        assert_eq!((r.blocks_per_sm, r.active_warps, r.max_warps), (2, 8, 32));
        assert_eq!(r.occupancy, 0.25);
        assert_eq!(r.limiting, vec![Limiter::SharedMemory]);
        // The article's sizing rule, 2·Bc + 3·Bc·D + Bc² floats for Bc = 32, D = 64, is 28,928
        // bytes ("about 28 KB"): still 2 blocks.
        let floats = 2 * 32 + 3 * 32 * 64 + 32 * 32;
        let r = occupancy(&OccupancyInput {
            arch: Arch::Sm75,
            threads_per_block: 128,
            smem_per_block_bytes: 4 * floats,
            regs_per_thread: None,
            smem_opt_in: true,
        })
        .unwrap();
        assert_eq!(
            (4 * floats, r.blocks_per_sm, r.occupancy),
            (28_928, 2, 0.25)
        );
    }
}

mod agreement {
    use super::*;

    const SIZES: [u32; 5] = [16, 32, 48, 64, 128];

    #[test]
    fn gemm_formulas_match_the_programs() {
        let mut checked = 0;
        for m in SIZES {
            for n in SIZES {
                for k in SIZES {
                    for warps in [1, 2, 3, 4, 8] {
                        for split in [Split::Rows, Split::Cols] {
                            let t = GemmTiling {
                                m,
                                n,
                                k,
                                warps,
                                split,
                            };
                            let Ok(cta) = t.build(&LayoutSpec::row(), Arch::Sm90) else {
                                assert!(t.validate().is_err(), "{t:?}");
                                continue;
                            };
                            assert!(warps_share_code(&cta));
                            let g = gemm_counts(&t, &cta);
                            for c in gemm_checks(&t, &g) {
                                assert!(c.agrees, "{t:?}: {c:?}");
                            }
                            assert_eq!(g.per_cta.hmma, (m * n * k / (16 * 8 * 16)) as u64);
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 300, "{checked}");
    }

    #[test]
    fn flash_formulas_match_the_programs() {
        let mut checked = 0;
        for style in [FlashStyle::Torch, FlashStyle::Triton] {
            for causal in [false, true] {
                for bm in [16, 32, 64, 128] {
                    for bn in [16, 32, 64, 128] {
                        for head_dim in [16, 64, 128] {
                            for warps in [1, 2, 4, 8] {
                                let t = FlashTiling {
                                    style,
                                    bm,
                                    bn,
                                    head_dim,
                                    warps,
                                    causal,
                                };
                                let Ok(cta) = t.build(&LayoutSpec::row(), Arch::Sm90) else {
                                    assert!(t.validate().is_err(), "{t:?}");
                                    continue;
                                };
                                assert!(warps_share_code(&cta), "{t:?}");
                                let s = static_counts(&cta.warps[0]);
                                for c in flash_checks(&t, &s) {
                                    assert!(c.agrees, "{t:?}: {c:?}");
                                }
                                let p = FlashProblem {
                                    batch: 2,
                                    heads: 3,
                                    seq: 512,
                                };
                                let d = dynamic_counts(&t, &p, &cta.warps[0]).unwrap();
                                let checks = flash_dynamic_checks(&t, &p, &d);
                                assert!(!checks.is_empty());
                                for c in checks {
                                    assert!(c.agrees, "{t:?}: {c:?}");
                                }
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 150, "{checked}");
    }
}

/// The overflow check `sim counts flash-attn` makes before it walks the grid
/// (`counts::check_dynamic_fit`, closed form) refuses exactly the problems whose walk overflows:
/// the sum of all executions times 32 must fit in u64. The walk of a one-head problem gives the
/// executions per head `e`; then B·H = ⌊u64::MAX / (32·e)⌋ heads fit and one more batch does not.
mod overflow {
    use super::*;
    use tilelab::sim::counts::check_dynamic_fit;
    use tilelab::sim::error::SimError;

    #[test]
    fn refused_before_the_walk_exactly_where_the_walk_overflows() {
        for t in [
            article_fa(FlashStyle::Torch),
            article_fa(FlashStyle::Triton),
            FlashTiling {
                bm: 48,
                bn: 32,
                warps: 1,
                ..article_fa(FlashStyle::Torch)
            },
            FlashTiling {
                bm: 32,
                bn: 128,
                warps: 2,
                causal: false,
                ..article_fa(FlashStyle::Torch)
            },
        ] {
            let cta = t.build(&LayoutSpec::row(), Arch::Sm90).unwrap();
            let prog = &cta.warps[0];
            let seq = 3 * (t.bm * t.bn / gcd(t.bm, t.bn));
            let one = FlashProblem {
                batch: 1,
                heads: 1,
                seq,
            };
            let per_head = dynamic_counts(&t, &one, prog).unwrap().total.total() as u128;
            let heads = 1u32 << 20;
            let bh_max = u64::MAX as u128 / (32 * per_head);
            let batch = u32::try_from(bh_max / heads as u128).unwrap();
            let fits = FlashProblem { batch, heads, seq };
            let over = FlashProblem {
                batch: batch + 1,
                ..fits
            };
            assert!(check_dynamic_fit(&t, &fits, prog).is_ok(), "{t:?}");
            assert!(dynamic_counts(&t, &fits, prog).is_ok(), "{t:?}");
            for r in [
                check_dynamic_fit(&t, &over, prog),
                dynamic_counts(&t, &over, prog).map(|_| ()),
            ] {
                assert!(matches!(r, Err(SimError::Overflow { .. })), "{t:?}: {r:?}");
            }
        }
    }

    /// A sequence near 2^32 (2^26 Q blocks of 64 rows: the walk took 1.9 s in a release build, and
    /// then refused) is refused by the closed form, which walks nothing.
    #[test]
    fn a_sequence_near_2_pow_32_is_refused_without_walking() {
        let t = article_fa(FlashStyle::Torch);
        let cta = t.build(&LayoutSpec::row(), Arch::Sm90).unwrap();
        let p = FlashProblem {
            batch: 2,
            heads: 16,
            seq: 4_294_967_232,
        };
        let e = check_dynamic_fit(&t, &p, &cta.warps[0]).unwrap_err();
        assert!(matches!(e, SimError::Overflow { .. }), "{e:?}");
        assert!(
            e.to_string()
                .contains("--batch 2 --heads 16 --seq 4294967232"),
            "{e}"
        );
    }

    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn tiling() -> impl Strategy<Value = FlashTiling> {
        (
            prop_oneof![Just(FlashStyle::Torch), Just(FlashStyle::Triton)],
            1u32..=8,
            1u32..=8,
            1u32..=8,
            prop_oneof![Just(1u32), Just(2), Just(4)],
            any::<bool>(),
        )
            .prop_map(|(style, bm, bn, d, warps, causal)| FlashTiling {
                style,
                bm: 16 * bm,
                bn: 16 * bn,
                head_dim: 16 * d,
                warps,
                causal,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The whole grid does the same tensor-core work whatever the style: every (Q block,
        /// needed K/V block) pair costs 2·bm·bn·d/(16·8·16) HMMA over the CTA's warps.
        #[test]
        fn hmma_work_is_style_independent(t in tiling(), seq_mult in 1u32..=4) {
            prop_assume!(t.validate().is_ok());
            let l = t.bm.max(t.bn) / gcd(t.bm, t.bn) * t.bm.min(t.bn);
            let p = FlashProblem { batch: 1, heads: 2, seq: l * seq_mult };
            let cta = t.build(&LayoutSpec::row(), Arch::Sm90).unwrap();
            let d = dynamic_counts(&t, &p, &cta.warps[0]).unwrap();
            let mut pairs = 0u64;
            for qb in 0..p.seq / t.bm {
                pairs += if t.causal {
                    ((qb + 1) * t.bm).div_ceil(t.bn).min(p.seq / t.bn) as u64
                } else {
                    (p.seq / t.bn) as u64
                };
            }
            let per_pair = 2 * (t.bm * t.bn * t.head_dim / (16 * 8 * 16)) as u64;
            prop_assert_eq!(d.total.hmma, 2 * pairs * per_pair);
        }

        /// Wavefronts are at least one per matrix and the conflict count is their excess.
        #[test]
        fn bank_stats_are_consistent(t in tiling(), layout in prop_oneof![
            Just("row"), Just("row+pad:8"), Just("swizzle:3,3,3"), Just("swizzle:3,3,4")]) {
            prop_assume!(t.validate().is_ok());
            let cta = t.build(&layout.parse().unwrap(), Arch::Sm90).unwrap();
            let trips = vec![1; cta.warps[0].stages.len()];
            let b = bank_summary(&cta, &trips);
            for r in &b.rows {
                let s = r.total;
                prop_assert!(s.wavefronts >= s.ideal);
                prop_assert_eq!(s.conflicts, s.wavefronts - s.ideal);
                prop_assert!(s.requests > 0);
            }
            // Every tile width is a multiple of 16 f16 = an even number of 16-byte chunks, so
            // pad:8 makes the pitch an odd number of chunks: the 8 rows of an ldmatrix matrix
            // (and of a P store) then fall in 8 different 4-bank groups.
            if layout == "row+pad:8" {
                prop_assert_eq!(b.total.conflicts, 0);
            }
        }

        /// Every warp program has the same code, and every loop copy the same counts.
        #[test]
        fn copies_and_warps_agree(t in tiling()) {
            prop_assume!(t.validate().is_ok());
            let cta = t.build(&LayoutSpec::row(), Arch::Sm90).unwrap();
            prop_assert!(warps_share_code(&cta));
            let s = static_counts(&cta.warps[0]);
            prop_assert!(s.per_copy.is_some());
            prop_assert_eq!(s.loop_copies, t.masked_copies() + 1);
        }
    }

    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 { a } else { gcd(b, a % b) }
    }

    /// Named bank facts: row-major f16 tiles of 128-byte or 256-byte rows put an ldmatrix
    /// matrix's 8 rows in the same 4 banks (8-way); pad:8 and the right swizzle remove it.
    #[test]
    fn layouts_and_conflicts() {
        let t = article_fa(FlashStyle::Triton);
        let trips = [1, 1, 1, 1];
        let rate = |layout: &str, tile: TileId| {
            let cta = t.build(&layout.parse().unwrap(), Arch::Sm80).unwrap();
            let b = bank_summary(&cta, &trips);
            b.rows
                .iter()
                .filter(|r| r.tile == tile)
                .map(|r| (r.per_iteration.wavefronts, r.per_iteration.requests))
                .fold((0, 0), |a, x| (a.0 + x.0, a.1 + x.1))
        };
        // Row-major: 32 wavefronts per LDSM (4 matrices x 8-way); P's st.shared.b32: 8-way.
        let (w, r) = rate("row", TileId::Q);
        assert_eq!(w, 32 * r);
        let cta = t.build(&LayoutSpec::row(), Arch::Sm80).unwrap();
        let b = bank_summary(&cta, &trips);
        let sts = b
            .rows
            .iter()
            .find(|r| r.class == tilelab::sim::program::InstrClass::Sts)
            .unwrap();
        assert_eq!(sts.per_iteration.wavefronts, 8 * sts.per_iteration.requests);
        // pad:8: conflict-free everywhere.
        let padded = t.build(&"row+pad:8".parse().unwrap(), Arch::Sm80).unwrap();
        assert_eq!(bank_summary(&padded, &trips).total.conflicts, 0);
        // Swizzle<3,3,4> fits 128-element rows (Q, K, V), Swizzle<3,3,3> 64-element rows (P):
        // one swizzle for all tiles leaves the other kind 2-way.
        let sw4 = t
            .build(&"swizzle:3,3,4".parse().unwrap(), Arch::Sm80)
            .unwrap();
        let b4 = bank_summary(&sw4, &trips);
        for r in &b4.rows {
            let conflicted = r.per_iteration.conflicts > 0;
            assert_eq!(conflicted, r.tile == TileId::P, "{r:?}");
        }
    }
}

mod cli {
    use std::io::Read;
    use std::process::{Command, Output, Stdio};

    fn run(args: &[&str]) -> Output {
        let a: Vec<&str> = ["--color", "never"].iter().chain(args).copied().collect();
        crate::common::run::tilelab(&a)
    }

    fn stdout(args: &[&str]) -> String {
        let o = run(args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    }

    fn json(args: &[&str]) -> serde_json::Value {
        let mut a = args.to_vec();
        a.push("--json");
        serde_json::from_str(&stdout(&a)).expect("valid JSON")
    }

    #[test]
    fn counts_gemm_table_and_json() {
        let s = stdout(&[
            "sim", "counts", "gemm", "--m", "64", "--n", "64", "--k", "128", "--warps", "4",
        ]);
        assert!(s.contains("n warps, K ≠ 16"), "{s}");
        assert!(s.contains("8 + 32 = 40"), "{s}");
        assert!(!s.contains("DIFFERS"), "{s}");
        let j = json(&[
            "sim", "counts", "gemm", "--m", "64", "--n", "64", "--k", "16", "--warps", "2",
            "--split", "cols",
        ]);
        assert_eq!(j["counts"]["case"], "warps_k16");
        assert_eq!(j["counts"]["a_loads_per_warp"], 4);
        assert_eq!(j["counts"]["b_loads_per_warp"], 2);
        assert_eq!(j["counts"]["per_cta"]["hmma"], 32);
        assert!(
            j["checks"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["agrees"] == true)
        );
    }

    #[test]
    fn counts_flash_attn_reproduces_seed_000() {
        let base = ["sim", "counts", "flash-attn", "--causal", "--style"];
        let torch = json(&[&base[..], &["torch"]].concat());
        assert_eq!(torch["static"]["per_copy"]["ldsm"], 40);
        assert_eq!(torch["static"]["per_copy"]["ldsm_t"], 32);
        assert_eq!(torch["static"]["per_copy"]["hmma"], 128);
        assert_eq!(torch["static"]["per_kernel"]["ldsm"], 80);
        assert_eq!(torch["static"]["per_kernel"]["ldsm_t"], 64);
        assert_eq!(torch["static"]["per_kernel"]["hmma"], 256);
        let stages = torch["dynamic"]["stages"].as_array().unwrap();
        let exec: Vec<u64> = stages
            .iter()
            .map(|s| s["executions_per_line"].as_u64().unwrap())
            .collect();
        assert_eq!(exec, vec![2048, 2048, 15360, 2048]);
        assert_eq!(torch["dynamic"]["mean_line_executions"], 8704.0);
        let triton = json(&[&base[..], &["triton"]].concat());
        assert_eq!(triton["static"]["per_kernel"]["ldsm"], 112);
        assert_eq!(triton["static"]["per_kernel"]["ldsm_t"], 16);
        for j in [&torch, &triton] {
            for key in ["checks", "dynamic_checks"] {
                for c in j[key].as_array().unwrap() {
                    assert_eq!(c["agrees"], true, "{c}");
                }
            }
        }
        let table = stdout(&[&base[..], &["torch", "--layout", "row+pad:8"]].concat());
        assert!(
            table.contains("15,360") && table.contains("8,704"),
            "{table}"
        );
        assert!(table.contains("whole kernel"), "{table}");
    }

    #[test]
    fn counts_flash_attn_lines_carry_executions() {
        let j = json(&[
            "sim",
            "counts",
            "flash-attn",
            "--style",
            "triton",
            "--causal",
            "--lines",
        ]);
        let lines = j["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 2 * (56 + 8 + 128 + 16));
        let sts = lines.iter().find(|l| l["class"] == "sts").unwrap();
        assert_eq!(sts["tile"], "P");
        assert_eq!(sts["wavefronts"], 8);
    }

    #[test]
    fn traffic_reproduces_seed_004_grids() {
        let j = json(&["sim", "traffic", "flash-attn"]);
        let reps = j["reports"].as_array().unwrap();
        assert_eq!(reps.len(), 4);
        assert_eq!(reps[0]["blocks"], 640);
        assert_eq!(reps[2]["blocks"], 20480);
        assert_eq!(reps[1]["written_bytes"], 5_536_481_280u64);
        assert_eq!(
            j["article"][1]["comparison"]["measured_below_compulsory"],
            true
        );
        let v2 = json(&["sim", "traffic", "flash-attn", "--algorithm", "v2"]);
        assert_eq!(v2["reports"].as_array().unwrap().len(), 2);
        // B_r and B_c apart: v2 launches S/B_r blocks per head and writes the logsumexp.
        let v2 = json(&[
            "sim",
            "traffic",
            "flash-attn",
            "--algorithm",
            "v2",
            "--bm",
            "64",
            "--bn",
            "32",
        ]);
        assert_eq!(
            (v2["problem"]["bm"].clone(), v2["problem"]["bn"].clone()),
            (64.into(), 32.into())
        );
        assert_eq!(v2["reports"][0]["grid"], serde_json::json!([16, 640]));
        assert_eq!(
            v2["reports"][0]["written_bytes"],
            167_772_160u64 + 2_621_440
        );
        let lse = &v2["reports"][0]["tensors"][5];
        assert_eq!(
            (lse["tensor"].as_str(), lse["written_bytes"].as_u64()),
            (Some("L"), Some(2_621_440))
        );
        let t = stdout(&["sim", "traffic", "flash-attn"]);
        assert!(t.contains("11.58 GB") && t.contains("412.18 MB"), "{t}");
        assert!(t.contains("20,480") && t.contains("assumptions:"), "{t}");
    }

    #[test]
    fn occupancy_reproduces_seed_004() {
        let j = json(&[
            "sim",
            "occupancy",
            "--arch",
            "sm_75",
            "--threads",
            "128",
            "--smem",
            "28KB",
        ]);
        assert_eq!(j["blocks_per_sm"], 2);
        assert_eq!(j["active_warps"], 8);
        assert_eq!(j["occupancy"], 0.25);
        assert_eq!(j["limiting"], serde_json::json!(["shared_memory"]));
    }

    #[test]
    fn tables_snapshot() {
        insta::assert_snapshot!(
            "occupancy_sm75_28kb",
            stdout(&[
                "sim",
                "occupancy",
                "--arch",
                "sm_75",
                "--threads",
                "128",
                "--smem",
                "28KB",
            ])
        );
        insta::assert_snapshot!(
            "gemm_64x64x128_4warps",
            stdout(&[
                "sim", "counts", "gemm", "--m", "64", "--n", "64", "--k", "128", "--warps", "4",
            ])
        );
        insta::assert_snapshot!(
            "flash_attn_torch_causal",
            stdout(&[
                "sim",
                "counts",
                "flash-attn",
                "--style",
                "torch",
                "--causal"
            ])
        );
        insta::assert_snapshot!(
            "traffic_seed_004",
            stdout(&["sim", "traffic", "flash-attn"])
        );
    }

    /// Impossible tilings and bad values: exit 2, one line on stderr naming the value, no panic.
    #[test]
    fn bad_inputs_fail_with_one_line() {
        let cases: &[(&[&str], &str)] = &[
            (
                &[
                    "sim", "counts", "gemm", "--m", "24", "--n", "64", "--k", "16",
                ],
                "--m 24",
            ),
            (
                &[
                    "sim", "counts", "gemm", "--m", "64", "--n", "64", "--k", "8",
                ],
                "--k 8",
            ),
            (
                &[
                    "sim", "counts", "gemm", "--m", "64", "--n", "64", "--k", "16", "--warps", "8",
                ],
                "--warps 8",
            ),
            (
                &[
                    "sim", "counts", "gemm", "--m", "64", "--n", "64", "--k", "16", "--split",
                    "diag",
                ],
                "'diag'",
            ),
            (&["sim", "counts", "flash-attn", "--style", "jax"], "'jax'"),
            (
                &[
                    "sim",
                    "counts",
                    "flash-attn",
                    "--style",
                    "torch",
                    "--warps",
                    "5",
                ],
                "--warps 5",
            ),
            (
                &[
                    "sim",
                    "counts",
                    "flash-attn",
                    "--style",
                    "torch",
                    "--seq",
                    "1000",
                ],
                "--seq 1000",
            ),
            (
                &[
                    "sim",
                    "counts",
                    "flash-attn",
                    "--style",
                    "torch",
                    "--bm",
                    "128",
                    "--bn",
                    "128",
                    "--head-dim",
                    "256",
                    "--arch",
                    "sm_75",
                ],
                "sm_75",
            ),
            (
                &[
                    "sim",
                    "counts",
                    "flash-attn",
                    "--style",
                    "torch",
                    "--layout",
                    "col",
                ],
                "'col'",
            ),
            (
                &[
                    "sim",
                    "counts",
                    "flash-attn",
                    "--style",
                    "torch",
                    "--layout",
                    "pad:3",
                ],
                "'pad:3'",
            ),
            (
                &["sim", "occupancy", "--arch", "sm_70", "--threads", "128"],
                "'sm_70'",
            ),
            (
                &["sim", "traffic", "flash-attn", "--algorithm", "v3"],
                "'v3'",
            ),
            (
                &["sim", "traffic", "flash-attn", "--block", "48"],
                "--bm 48",
            ),
            (
                &["sim", "traffic", "flash-attn", "--bm", "64", "--bn", "48"],
                "--seq 1024 is not a positive multiple of --bn 48",
            ),
        ];
        for (args, needle) in cases {
            let o = run(args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(err.starts_with("tilelab: error: "), "{err}");
            assert!(err.contains(needle), "{args:?}: {err}");
            assert!(!err.contains("panicked"), "{err}");
            assert!(o.stdout.is_empty(), "{args:?}");
        }
    }

    /// `tilelab ... | head`: the reader goes away; the command still exits 0 without a panic.
    #[test]
    fn closed_pipe_is_quiet() {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tilelab"))
            .args([
                "sim",
                "counts",
                "flash-attn",
                "--style",
                "torch",
                "--head-dim",
                "256",
                "--lines",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "{err}");
        assert!(err.is_empty(), "{err}");
    }
}
