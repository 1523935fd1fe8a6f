//! `tilelab sim counts flash-attn --style hopper`: the Hopper kernel `kernels/fa3_fwd.cu`.
//!
//! Every expected value is derived by hand from the kernel source (`fa3_tile`, the producer and
//! consumer loops, the `#pragma unroll` panel loops) and written out with its derivation; the
//! library is only the thing under test.

use crate::common::run;
use run::tilelab as run;

use tilelab::sim::fa3::{Fa3Tiling, H200_SMS};
use tilelab::sim::mma::MmaDtype;
use tilelab::sim::program::FlashProblem;

fn json(args: &[&str]) -> serde_json::Value {
    let mut a = vec!["sim", "counts", "flash-attn", "--style", "hopper", "--json"];
    a.extend_from_slice(args);
    let o = run(&a);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("valid JSON")
}

fn hgmma(c: &serde_json::Value, role: usize, field: &str) -> u64 {
    c["hgmma"][role][field].as_u64().unwrap()
}

/// D = 128, S = 4096, B = 2, H = 16, f16, not causal, 132 SMs.
///
/// nq = 4096/128 = 32 query blocks, bh = 32, tiles = 1024, grid = min(1024, 132) = 132.
/// Every tile has 4096/128 = 32 key blocks, so every CTA finishes each of its tiles together
/// with all others and the claims go to the lower CTA first: CTA 0 runs t = 0, 132, …, 924 (8
/// tiles; 1056 > 1023), CTA 131 runs t = 131, …, 923 (7). CTA 0 256 key blocks, CTA 131 224,
/// grid 1024·32 = 32768.
#[test]
fn d128_not_causal_s4096() {
    let j = json(&["--seq", "4096"]);
    let s = &j["schedule"];
    assert_eq!(
        (&s["nq"], &s["bh"], &s["tiles"], &s["grid"]),
        (&32.into(), &32.into(), &1024.into(), &132.into())
    );
    let per_cta = s["per_cta"].as_array().unwrap();
    assert_eq!(per_cta.len(), 132);
    assert_eq!(per_cta[0]["tiles"], 8);
    assert_eq!(per_cta[0]["key_blocks"], 256);
    assert_eq!(per_cta[131]["tiles"], 7);
    assert_eq!(per_cta[131]["key_blocks"], 224);
    // 1024 = 7·132 + 100: CTAs 0..=99 run 8 tiles, 100..=131 run 7.
    assert_eq!(per_cta[99]["tiles"], 8);
    assert_eq!(per_cta[100]["tiles"], 7);

    let c = &j["cta0"];
    // S = Q·Kᵀ: D/16 = 8 wgmma.m64n128k16 per key block per consumer, and 8 for the S issued
    // with the last tile's P·V (discarded): 257·8 = 2056.
    assert_eq!(hgmma(c, 0, "per_consumer"), 2056);
    assert_eq!(hgmma(c, 0, "total"), 4112);
    assert_eq!(c["hgmma"][0]["sass"], "HGMMA.64x128x16.F32");
    assert_eq!(
        c["hgmma"][0]["ptx"],
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"
    );
    // O += P·V: 128/16 = 8 wgmma.m64n128k16 (N = D = 128) per key block per consumer.
    assert_eq!(hgmma(c, 1, "per_consumer"), 2048);
    assert_eq!(c["hgmma"][1]["sass"], "HGMMA.64x128x16.F32");
    // Each warpgroup instruction runs in 4 warps: (4112 + 4096)·4.
    assert_eq!(
        hgmma(c, 0, "warp_executions") + hgmma(c, 1, "warp_executions"),
        32832
    );
    // One commit group for S and one for P·V per key block, one for the discarded S.
    assert_eq!(c["wgmma_groups_per_consumer"], 513);
    // TMA: D/64 = 2 boxes of {64, 128} (16384 B) per Q tile and per K / V block.
    let t = &c["tma"];
    assert_eq!((&t["q_loads"], &t["k_loads"]), (&16.into(), &512.into()));
    assert_eq!(t["v_loads"], 512);
    assert_eq!(t["loads"], 16 + 512 + 512);
    assert_eq!(t["q_bytes"], 8 * 32768);
    assert_eq!(t["k_bytes"], 256 * 32768);
    assert_eq!(t["load_bytes"], 8 * 32768 + 2 * 256 * 32768);
    // O: per tile each consumer stores 2 boxes of {64, 64} (8192 B): 8·2·2 = 32, 8·32768 B.
    assert_eq!(
        (&t["o_stores"], &t["store_bytes"]),
        (&32.into(), &262144.into())
    );
    // mbarriers: init 2·2 (Q full/empty) + 4·2 stages (K/V full/empty) = 12; the producer
    // expects once per tile (Q) and twice per key block (K, V): 8 + 512 = 520, and waits as
    // often plus once on Q empty before it finds no ninth tile: 521; each of the 8 consumer
    // warps arrives (lane 0) 520 times, the producer once on Q full for "no more tiles":
    // 8·520 + 1; the consumer warps wait 520 + 1 (that last Q full) times each.
    let m = &c["mbarrier"];
    assert_eq!(m["init"], 12);
    assert_eq!(m["arrive_expect_tx"], 520);
    assert_eq!(m["wait_producer"], 521);
    assert_eq!(m["arrive"], 8 * 520 + 1);
    assert_eq!(m["wait_consumer_warps"], 8 * 521);
    // Ping-pong: a turn per issue point (the CTA's first S; per tile 31 loop iterations and the
    // last P·V with the next tile's first S = 32 = key blocks), 8 warps: 8·(1 + 256), and 4
    // warps once more (consumer 0 takes consumer 1's last pass; consumer 1 passed once before
    // its first turn); epilogue 2 bar.sync per tile: 8·2·8.
    let b = &c["barriers"];
    assert_eq!(b["turn_sync"], 8 * 257 + 4);
    assert_eq!(b["turn_arrive"], 8 * 257 + 4);
    assert_eq!(b["epilogue_sync"], 128);
    assert_eq!(b["syncthreads"], 12);
    // Epilogue: D/4 = 32 st.shared.b32 per thread per tile: 8 tiles · 32 · 8 warps; the
    // producer stores the tile number 8 times and "no more tiles" once.
    assert_eq!(c["sts"], 2048 + 9);
    // Claims: one after each of the 8 tiles (the last finds none), one count-out.
    assert_eq!(c["atomics"], 9);

    let g = &j["grid"];
    assert_eq!(g["key_blocks"], 32768);
    // 2 consumers · 16 wgmma per key block · 32768 key blocks = 1,048,576; each is
    // 2·64·128·16 flop: 1,048,576 · 262,144 = 2.749e11 = 4·B·H·S²·D. Plus the discarded S:
    // 2 consumers · 8 · 132 CTAs = 2112.
    assert_eq!(
        hgmma(g, 0, "total") + hgmma(g, 1, "total"),
        1_048_576 + 2112
    );
    assert_eq!(1_048_576u64 * 2 * 64 * 128 * 16, 4 * 32 * 4096 * 4096 * 128);
    // O is written once: B·H·S·D·2 bytes; Q read once, K and V once per tile.
    assert_eq!(g["tma"]["store_bytes"], 32u64 * 4096 * 128 * 2);
    assert_eq!(g["tma"]["q_bytes"], 32u64 * 4096 * 128 * 2);
    assert_eq!(g["tma"]["k_bytes"], 32768u64 * 32768);
    assert_eq!(g["mbarrier"]["init"], 132 * 12);

    let st = &j["static"];
    // Three code copies hold S (the CTA's first, loop body, last block + next tile's first):
    // 3·8; two hold P·V (loop, last): 2·8.
    assert_eq!(st["hgmma"]["HGMMA.64x128x16.F32"], 40);
    assert_eq!(st["hgmma"].as_object().unwrap().len(), 1);
    // STS: 32 of the epilogue, 1 of the producer's tile number.
    assert_eq!(
        (&st["utmaldg"], &st["utmastg"], &st["sts"]),
        (&6.into(), &2.into(), &33.into())
    );
    // FA3_SMEM_BYTES = 3·32768 + 2·2·32768, + 1024 alignment.
    assert_eq!(j["dynamic_smem_bytes"], 230400);
}

/// (tiles, key blocks) of every CTA of a printed schedule.
fn tiles_and_blocks(schedule: &serde_json::Value) -> Vec<(u64, u64)> {
    let field = |w: &serde_json::Value, k: &str| w[k].as_u64().unwrap();
    schedule["per_cta"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (field(w, "tiles"), field(w, "key_blocks")))
        .collect()
}

/// The kernel's tile claims replayed by brute force, independently of the library: the tiles
/// listed in the causal order written out (per head group, query blocks from the last down,
/// every head of the group in turn), then a clock that ticks one key block at a time; at each
/// tick the CTAs that finish, lowest first, take the next tile. Returns (tiles, key blocks) per
/// CTA.
fn brute_force_claims(nq: u64, groups: &[u64], grid: u64) -> Vec<(u64, u64)> {
    let mut order = Vec::new(); // key blocks of each tile in claim order
    for &n in groups {
        for qb in (0..nq).rev() {
            for _head in 0..n {
                order.push(qb + 1);
            }
        }
    }
    let mut work = vec![(0u64, 0u64); grid as usize];
    let mut busy_until = vec![0u64; grid as usize];
    let mut next = 0usize;
    let mut now = 0u64;
    while next < order.len() {
        for b in 0..grid as usize {
            if busy_until[b] == now && next < order.len() {
                work[b].0 += 1;
                work[b].1 += order[next];
                busy_until[b] = now + order[next];
                next += 1;
            }
        }
        now += 1;
    }
    work
}

/// D = 128, S = 4096, causal: nq = 32, bh = 32, 132 CTAs. Head groups (`fa3_groups`): the L2
/// allows 24 MiB / (4096·128·4 B = 2 MiB) = 12 heads, the claims want ⌈2·132/32⌉ = 9, so
/// ng = ⌊32/9⌋ = 3 groups of gh = ⌈32/3⌉ = 11 heads, the first of r = 32 − 2·11 = 10. The
/// first tile of CTA b is in group 0 (10 heads): query block 31 − ⌊b/10⌋, so CTA 0 starts
/// with 32 key blocks and CTA 131 with 32 − 13 = 19. Grid: 32 heads · (1 + … + 32) = 16896.
#[test]
fn d128_causal_s4096() {
    let j = json(&["--seq", "4096", "--causal"]);
    let s = &j["schedule"];
    assert_eq!(
        (&s["heads_per_group"], &s["first_group_heads"]),
        (&11.into(), &10.into())
    );
    let per_cta = tiles_and_blocks(s);
    assert_eq!(per_cta, brute_force_claims(32, &[10, 11, 11], 132));
    assert_eq!(per_cta.iter().map(|w| w.0).sum::<u64>(), 1024);
    assert_eq!(per_cta.iter().map(|w| w.1).sum::<u64>(), 16896);
    // Balanced within one tile: 16896 / 132 = 128 on average, no CTA 32 key blocks off.
    assert!(
        per_cta.iter().all(|w| w.1.abs_diff(128) < 32),
        "{per_cta:?}"
    );
    let busiest = j["busiest_index"].as_u64().unwrap() as usize;
    let most = per_cta.iter().map(|w| w.1).max().unwrap();
    assert_eq!(per_cta[busiest].1, most);
    assert!(per_cta[..busiest].iter().all(|w| w.1 < most));
    let c = &j["cta0"];
    let (tiles0, kb0) = per_cta[0];
    assert_eq!(c["key_blocks"], kb0);
    assert_eq!(hgmma(c, 0, "per_consumer"), (kb0 + 1) * 8);
    assert_eq!(hgmma(c, 1, "per_consumer"), kb0 * 8);
    assert_eq!(c["tma"]["k_bytes"], kb0 * 32768);
    assert_eq!(c["tma"]["load_bytes"], tiles0 * 32768 + 2 * kb0 * 32768);
    assert_eq!(c["mbarrier"]["arrive_expect_tx"], tiles0 + 2 * kb0);
    assert_eq!(c["barriers"]["turn_sync"], 8 * (kb0 + 1) + 4);
    let g = &j["grid"];
    assert_eq!(g["key_blocks"], 16896);
    assert_eq!(
        hgmma(g, 0, "total") + hgmma(g, 1, "total"),
        2 * 16 * 16896 + 2 * 8 * 132
    );
    // Claims: one per tile, one count-out per CTA.
    assert_eq!(g["atomics"], 1024 + 132);
    // Causality does not change the code: the same static counts.
    assert_eq!(j["static"]["hgmma"]["HGMMA.64x128x16.F32"], 40);
}

/// S = 16384, D = 128, B = 2, H = 16 causal: the L2 allows 24 MiB / 8 MiB = 3 heads, the claims
/// want ⌈264/128⌉ = 3: ng = ⌊32/3⌋ = 10 groups of ⌈32/10⌉ = 4 heads, the first of 32 − 7·4 = 4.
/// B = 2, H = 5 at D = 64: the L2 allows 24 MiB / 4 MiB = 6, the claims want 3: ng = 3 groups of
/// ⌈10/3⌉ = 4, the first of 10 − 2·4 = 2. S = 1024: the claims want ⌈264/8⌉ = 33 > 32 heads: one
/// group of all 32.
#[test]
fn causal_head_groups() {
    let groups = |args: &[&str]| {
        let mut a = vec!["--causal"];
        a.extend_from_slice(args);
        let j = json(&a);
        let s = &j["schedule"];
        (
            s["heads_per_group"].as_u64().unwrap(),
            s["first_group_heads"].as_u64().unwrap(),
        )
    };
    assert_eq!(groups(&["--seq", "16384"]), (4, 4));
    assert_eq!(
        groups(&["--seq", "16384", "--heads", "5", "--head-dim", "64"]),
        (4, 2)
    );
    assert_eq!(groups(&["--seq", "1024"]), (32, 32));
    // Not causal: one head after another.
    let j = json(&["--seq", "16384"]);
    assert_eq!(j["schedule"]["heads_per_group"], 1);
    // B = 2, H = 5, S = 16384, D = 64 causal: 640 tiles, the claims replayed by brute force.
    let j = json(&[
        "--causal",
        "--seq",
        "16384",
        "--heads",
        "5",
        "--head-dim",
        "64",
    ]);
    let per_cta = tiles_and_blocks(&j["schedule"]);
    assert_eq!(per_cta, brute_force_claims(128, &[2, 4, 4], 132));
}

/// B = 1, H = 2, S = 256, D = 64, causal, bf16: nq 2, bh 2, 4 tiles on 4 CTAs. t = 0, 1 are
/// query block 1 (2 key blocks), t = 2, 3 query block 0 (1 key block).
#[test]
fn small_d64_causal_bf16() {
    let j = json(&[
        "--batch",
        "1",
        "--heads",
        "2",
        "--seq",
        "256",
        "--head-dim",
        "64",
        "--causal",
        "--dtype",
        "bf16",
    ]);
    let kb: Vec<u64> = j["schedule"]["per_cta"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["key_blocks"].as_u64().unwrap())
        .collect();
    assert_eq!(kb, vec![2, 2, 1, 1]);
    let c = &j["cta0"];
    // S: 64/16 = 4 m64n128k16 per block; P·V: 8 m64n64k16 per block (N = D = 64).
    assert_eq!(c["hgmma"][0]["sass"], "HGMMA.64x128x16.F32.BF16");
    assert_eq!(c["hgmma"][1]["sass"], "HGMMA.64x64x16.F32.BF16");
    assert_eq!(hgmma(c, 0, "per_consumer"), (2 + 1) * 4);
    assert_eq!(hgmma(c, 1, "per_consumer"), 16);
    // D/64 = 1 box per tensor: Q 1, K 2, V 2 boxes of 16384 B; O 1 box per consumer.
    assert_eq!(c["tma"]["loads"], 5);
    assert_eq!(c["tma"]["load_bytes"], 5 * 16384);
    assert_eq!(c["tma"]["o_stores"], 2);
    assert_eq!(c["tma"]["store_bytes"], 16384);
    let st = &j["static"];
    // S in 3 code copies (the CTA's first, loop, last block + next tile's first): 3·4.
    assert_eq!(st["hgmma"]["HGMMA.64x128x16.F32.BF16"], 12);
    assert_eq!(st["hgmma"]["HGMMA.64x64x16.F32.BF16"], 16);
    assert_eq!(
        (&st["utmaldg"], &st["utmastg"], &st["sts"]),
        (&3.into(), &1.into(), &17.into())
    );
    assert_eq!(j["grid"]["key_blocks"], 6);
    // FA3_SMEM_BYTES = 3·16384 + 4·16384, + 1024.
    assert_eq!(j["dynamic_smem_bytes"], 7 * 16384 + 1024);
}

/// The library gives what the CLI prints, and fewer SMs spread the tiles further.
#[test]
fn library_matches_and_sms_flag() {
    let mut t = Fa3Tiling::new(64, false);
    t.dtype = MmaDtype::F16;
    let p = FlashProblem {
        batch: 1,
        heads: 2,
        seq: 512,
    };
    // 8 tiles of 4 key blocks on 3 SMs: CTAs finish together, the lower claims first: CTA 0
    // t = 0, 3, 6; CTA 2 t = 2, 5: 3 and 2 tiles of 4 key blocks.
    let r = t.report(&p, 3).unwrap();
    assert_eq!(r.schedule.grid, 3);
    assert_eq!(r.schedule.per_cta[0].key_blocks, 12);
    assert_eq!(r.schedule.per_cta[2].key_blocks, 8);
    // Causal (D = 64, S = 512: nq 4, 2 heads in one group): tiles in claim order have 4, 4, 3,
    // 3, 2, 2, 1, 1 key blocks. CTAs 0-2 take the first three (4, 4, 3); CTA 2 is free first
    // (at 3) and takes the fourth (until 6); CTAs 0 and 1 (free at 4) take 2 each (until 6); at
    // 6 all three are free: CTA 0 and CTA 1 take the last two. CTA 0: 4 + 2 + 1, CTA 1 the
    // same, CTA 2: 3 + 3.
    t.causal = true;
    let s = t.schedule(&p, 3).unwrap();
    let kb: Vec<(u64, u64)> = s.per_cta.iter().map(|w| (w.tiles, w.key_blocks)).collect();
    assert_eq!(kb, vec![(3, 7), (3, 7), (2, 6)]);
    t.causal = false;
    let j = json(&[
        "--batch",
        "1",
        "--heads",
        "2",
        "--seq",
        "512",
        "--head-dim",
        "64",
        "--sms",
        "3",
    ]);
    assert_eq!(j["schedule"]["per_cta"][0]["key_blocks"], 12);
    assert_eq!(
        j["cta0"]["hgmma"][0]["per_consumer"],
        r.cta0.hgmma[0].per_consumer
    );
    assert_eq!(t.report(&p, H200_SMS).unwrap().schedule.grid, 8);
}

#[test]
fn table_names_the_counters() {
    let o = run(&[
        "sim",
        "counts",
        "flash-attn",
        "--style",
        "hopper",
        "--seq",
        "4096",
        "--causal",
    ]);
    assert!(o.status.success());
    let s = String::from_utf8(o.stdout).unwrap();
    for needle in [
        "HGMMA.64x128x16.F32",
        "UTMALDG.2D",
        "UTMASTG.2D",
        "mbarrier.arrive.expect_tx",
        "16,896",
        "132 CTAs",
    ] {
        assert!(s.contains(needle), "{needle}: {s}");
    }
}

#[test]
fn bad_inputs_fail_with_one_line() {
    let base = ["sim", "counts", "flash-attn", "--style"];
    let cases: &[(&[&str], &str)] = &[
        (&["hopper", "--head-dim", "96"], "--head-dim 96"),
        (&["hopper", "--seq", "1000"], "--seq 1000"),
        (&["hopper", "--seq", "0"], "--seq 0"),
        (&["hopper", "--bm", "64"], "--bm 64"),
        (&["hopper", "--bn", "256"], "--bn 256"),
        (&["hopper", "--bn", "96"], "allowed: 64, 128"),
        (
            &["hopper", "--bn", "64", "--causal"],
            "FA_CAUSAL needs FA_BN",
        ),
        (&["hopper", "--stages", "3"], "shared memory"),
        (&["hopper", "--stages", "0"], "--stages 0"),
        (&["hopper", "--warps", "4"], "--warps 4"),
        (&["hopper", "--layout", "row"], "--layout"),
        (&["hopper", "--lines"], "--lines"),
        (&["hopper", "--dtype", "e4m3"], "'e4m3'"),
        (&["hopper", "--arch", "sm_80"], "sm_80"),
        (&["hopper", "--sms", "0"], "--sms 0"),
        (&["hopper", "--batch", "0"], "--batch 0"),
        (
            &[
                "hopper", "--batch", "65536", "--heads", "65536", "--seq", "128",
            ],
            "int row coordinates",
        ),
        (&["jax"], "torch, triton, hopper"),
        (&["torch", "--stages", "2"], "--stages"),
        (&["triton", "--sms", "132"], "--sms"),
    ];
    for (args, needle) in cases {
        let a: Vec<&str> = base.iter().chain(args.iter()).copied().collect();
        let o = run(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}
