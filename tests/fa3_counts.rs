//! `tilelab sim counts flash-attn --style hopper`: the Hopper kernel `kernels/fa3_fwd.cu`.
//!
//! Every expected value is derived by hand from the kernel source (`fa3_tile`, the producer and
//! consumer loops, the `#pragma unroll` panel loops) and written out with its derivation; the
//! library is only the thing under test.

use std::process::{Command, Output};

use tilelab::sim::fa3::{Fa3Tiling, H200_SMS};
use tilelab::sim::mma::MmaDtype;
use tilelab::sim::program::FlashProblem;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tilelab"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run tilelab")
}

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
/// CTA 0 runs t = 0, 132, …, 924 (8 tiles; 1056 > 1023), CTA 131 runs t = 131, …, 923 (7).
/// Every tile has 4096/128 = 32 key blocks: CTA 0 256, CTA 131 224, grid 1024·32 = 32768.
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
    // S = Q·Kᵀ: D/16 = 8 wgmma.m64n128k16 per key block per consumer: 256·8 = 2048.
    assert_eq!(hgmma(c, 0, "per_consumer"), 2048);
    assert_eq!(hgmma(c, 0, "total"), 4096);
    assert_eq!(c["hgmma"][0]["sass"], "HGMMA.64x128x16.F32");
    assert_eq!(
        c["hgmma"][0]["ptx"],
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"
    );
    // O += P·V: 128/16 = 8 wgmma.m64n128k16 (N = D = 128) per key block per consumer.
    assert_eq!(hgmma(c, 1, "per_consumer"), 2048);
    assert_eq!(c["hgmma"][1]["sass"], "HGMMA.64x128x16.F32");
    // Each warpgroup instruction runs in 4 warps: (4096 + 4096)·4.
    assert_eq!(
        hgmma(c, 0, "warp_executions") + hgmma(c, 1, "warp_executions"),
        32768
    );
    // One commit group for S and one for P·V per key block.
    assert_eq!(c["wgmma_groups_per_consumer"], 512);
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
    // waits and expects once per tile (Q) and twice per key block (K, V): 8 + 512 = 520; each
    // of the 8 consumer warps arrives (lane 0) as often: 8·520.
    let m = &c["mbarrier"];
    assert_eq!(m["init"], 12);
    assert_eq!(m["arrive_expect_tx"], 520);
    assert_eq!(m["wait_producer"], 520);
    assert_eq!(m["arrive"], 8 * 520);
    assert_eq!(m["wait_consumer_warps"], 8 * 520);
    // Ping-pong: a turn per issue point (first block, 31 loop iterations, last P·V = 33 per
    // tile = key blocks + 1), 8 warps: 8·(256 + 8); epilogue 2 bar.sync per tile: 8·2·8.
    let b = &c["barriers"];
    assert_eq!(b["turn_sync"], 8 * 264);
    assert_eq!(b["turn_arrive"], 8 * 264);
    assert_eq!(b["epilogue_sync"], 128);
    assert_eq!(b["syncthreads"], 12);
    // Epilogue: D/4 = 32 st.shared.b32 per thread per tile: 8 tiles · 32 · 8 warps.
    assert_eq!(c["sts"], 2048);

    let g = &j["grid"];
    assert_eq!(g["key_blocks"], 32768);
    // 2 consumers · 16 wgmma per key block · 32768 key blocks = 1,048,576; each is
    // 2·64·128·16 flop: 1,048,576 · 262,144 = 2.749e11 = 4·B·H·S²·D.
    assert_eq!(hgmma(g, 0, "total") + hgmma(g, 1, "total"), 1_048_576);
    assert_eq!(1_048_576u64 * 2 * 64 * 128 * 16, 4 * 32 * 4096 * 4096 * 128);
    // O is written once: B·H·S·D·2 bytes; Q read once, K and V once per tile.
    assert_eq!(g["tma"]["store_bytes"], 32u64 * 4096 * 128 * 2);
    assert_eq!(g["tma"]["q_bytes"], 32u64 * 4096 * 128 * 2);
    assert_eq!(g["tma"]["k_bytes"], 32768u64 * 32768);
    assert_eq!(g["mbarrier"]["init"], 132 * 12);

    let st = &j["static"];
    // Two code copies hold S (first block, loop body): 2·8; two hold P·V (loop, last): 2·8.
    assert_eq!(st["hgmma"]["HGMMA.64x128x16.F32"], 32);
    assert_eq!(st["hgmma"].as_object().unwrap().len(), 1);
    assert_eq!(
        (&st["utmaldg"], &st["utmastg"], &st["sts"]),
        (&6.into(), &2.into(), &32.into())
    );
    // FA3_SMEM_BYTES = 3·32768 + 2·2·32768, + 1024 alignment.
    assert_eq!(j["dynamic_smem_bytes"], 230400);
}

/// D = 128, S = 4096, causal: tile t is query block 31 − t/32 with 32 − t/32 key blocks.
/// CTA 0: t = 132·i (i = 0..7), t/32 = 4i: 32 + 28 + … + 4 = 144 key blocks (the most: CTAs
/// 0..=3 have t/32 = 4i for every i). CTA 131: t = 131 + 132·i (i = 0..6), t/32 = 4i + 4:
/// 28 + 24 + … + 4 = 112. Grid: 32 heads · (1 + 2 + … + 32) = 32·528 = 16896.
#[test]
fn d128_causal_s4096() {
    let j = json(&["--seq", "4096", "--causal"]);
    let per_cta = j["schedule"]["per_cta"].as_array().unwrap();
    assert_eq!(per_cta[0]["key_blocks"], 144);
    assert_eq!(per_cta[3]["key_blocks"], 144);
    assert_eq!(
        per_cta[4]["key_blocks"],
        32 + 28 + 24 + 20 + 16 + 12 + 8 + 3
    );
    assert_eq!(per_cta[131]["key_blocks"], 112);
    // CTA 99: t = 99 + 132·i, t/32 = 3, 7, …, 31: 29 + 25 + … + 1 = 120.
    assert_eq!(per_cta[99]["key_blocks"], 120);
    assert_eq!(j["busiest_index"], 0);
    let c = &j["cta0"];
    assert_eq!(c["key_blocks"], 144);
    assert_eq!(hgmma(c, 0, "per_consumer"), 144 * 8);
    assert_eq!(hgmma(c, 1, "per_consumer"), 144 * 8);
    assert_eq!(c["tma"]["k_bytes"], 144 * 32768);
    assert_eq!(c["tma"]["load_bytes"], 8 * 32768 + 2 * 144 * 32768);
    assert_eq!(c["mbarrier"]["arrive_expect_tx"], 8 + 2 * 144);
    assert_eq!(c["barriers"]["turn_sync"], 8 * (144 + 8));
    let g = &j["grid"];
    assert_eq!(g["key_blocks"], 16896);
    assert_eq!(hgmma(g, 0, "total") + hgmma(g, 1, "total"), 2 * 16 * 16896);
    // Causality does not change the code: the same static counts.
    assert_eq!(j["static"]["hgmma"]["HGMMA.64x128x16.F32"], 32);
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
    assert_eq!(hgmma(c, 0, "per_consumer"), 8);
    assert_eq!(hgmma(c, 1, "per_consumer"), 16);
    // D/64 = 1 box per tensor: Q 1, K 2, V 2 boxes of 16384 B; O 1 box per consumer.
    assert_eq!(c["tma"]["loads"], 5);
    assert_eq!(c["tma"]["load_bytes"], 5 * 16384);
    assert_eq!(c["tma"]["o_stores"], 2);
    assert_eq!(c["tma"]["store_bytes"], 16384);
    let st = &j["static"];
    assert_eq!(st["hgmma"]["HGMMA.64x128x16.F32.BF16"], 8);
    assert_eq!(st["hgmma"]["HGMMA.64x64x16.F32.BF16"], 16);
    assert_eq!(
        (&st["utmaldg"], &st["utmastg"], &st["sts"]),
        (&3.into(), &1.into(), &16.into())
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
    // 8 tiles on 3 SMs: CTA 0 t = 0, 3, 6; CTA 2 t = 2, 5: 3 and 2 tiles of 4 key blocks.
    let r = t.report(&p, 3).unwrap();
    assert_eq!(r.schedule.grid, 3);
    assert_eq!(r.schedule.per_cta[0].key_blocks, 12);
    assert_eq!(r.schedule.per_cta[2].key_blocks, 8);
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
