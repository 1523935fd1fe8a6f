//! Issue 27: `tilelab ptx` on the Hopper kernels measured on the H200
//! (`tests/data/ptx_hopper/*.json`, made by `scripts/hopper_fixtures/`, format in
//! `tests/data/ptx_hopper/README.md`). Each launch file's command line is built from its `cli`
//! and launch fields, run through the binary with `--json`, and its per-CTA totals compared with
//! the file's measured counters (never values computed here).
//!
//! Instruction counts are compared where ncu counts what the PTX asks for: the
//! `smsp__sass_inst_executed_*` counters for LDS/STS (ptxas adds predicated-off LDS, issue #28;
//! `tt_matmul_bf16_8w`'s `_pred_on_any` is 1 where the SASS counter is 0) and for the bulk
//! copies (the Triton kernels issue UTMALDG from every warp under an elected
//! predicate; `tt_attn_fwd_d128`'s `_pred_on_any` is 52 for 34 SASS executions).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx_hopper");

/// The measured file of a launch.
fn fixture(name: &str) -> Value {
    let p = Path::new(DIR).join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

/// `tilelab ptx` on the launch of `f` with `--json`: the report, or the error line.
fn run(f: &Value) -> Result<Value, String> {
    let l = &f["launch"];
    let dim = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut args: Vec<String> = vec![
        "ptx".into(),
        Path::new(DIR)
            .join(f["ptx"].as_str().unwrap())
            .to_string_lossy()
            .into_owned(),
        "--kernel".into(),
        l["kernel"].as_str().unwrap().into(),
        "--grid".into(),
        dim(&l["grid"]),
        "--block".into(),
        dim(&l["block"]),
        "--dynamic-smem".into(),
        l["dynamic_smem_bytes"].to_string(),
        "--json".into(),
    ];
    args.extend(
        l["cli"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .map(String::from),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_tilelab"))
        .args(&args)
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(serde_json::from_slice(&out.stdout).unwrap())
}

/// The counters compared: (ncu metric, path in the report's totals). `HMMA` is the whole
/// tensor pipe less its `HFMA2.MMA` part, as in tests/ptx_fixtures.rs.
const COUNTERS: &[(&str, &str)] = &[
    (
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "shared_ld_wavefronts",
    ),
    (
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "shared_st_wavefronts",
    ),
    (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "shared_ld_bank_conflicts",
    ),
    (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "shared_st_bank_conflicts",
    ),
    ("smsp__sass_inst_executed_op_shared_ld.sum", "sass.LDS"),
    ("smsp__sass_inst_executed_op_shared_st.sum", "sass.STS"),
    ("smsp__inst_executed_op_ldsm.sum", "sass.LDSM"),
    ("smsp__inst_executed_op_shared_stsm.sum", "sass.STSM"),
    ("smsp__inst_executed_pipe_tensor_op_hmma.sum", "sass.HMMA"),
    ("smsp__inst_executed_pipe_tensor_op_gmma.sum", "sass.GMMA"),
    ("sm__sass_inst_executed_op_ldgsts.sum", "sass.LDGSTS"),
    (
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum",
        "gmma_wavefronts",
    ),
    ("smsp__sass_inst_executed_op_tma_ld.sum", "tma_ld"),
    ("smsp__sass_inst_executed_op_tma_st.sum", "tma_st"),
    (
        "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
        "tma_ld_bytes",
    ),
    (
        "l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum",
        "tma_st_bytes",
    ),
];

/// A measured counter of `f` (in `counters` or `sass_counters`).
fn measured(f: &Value, k: &str) -> u64 {
    let v = f["counters"]
        .get(k)
        .or_else(|| f["sass_counters"].get(k))
        .unwrap_or_else(|| panic!("{}: no counter {k}", f["fixture"]));
    let mut n = v.as_f64().unwrap_or_else(|| panic!("{k}: {v}")) as u64;
    if k == "smsp__inst_executed_pipe_tensor_op_hmma.sum" {
        n -= f["counters"]["smsp__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum"]
            .as_f64()
            .unwrap_or(0.0) as u64;
    }
    n
}

/// Every disagreement of fixture `name` outside `skip`: (counter, simulated, measured); also
/// a SASS shape the run reports that the H200's SASS of the module does not have.
fn disagreements(name: &str, skip: &[&str]) -> Vec<(String, u64, u64)> {
    let f = fixture(name);
    let r = match run(&f) {
        Ok(r) => r,
        Err(e) => return vec![(format!("error: {e}"), 0, 0)],
    };
    let t = &r["totals"];
    let mut bad = Vec::new();
    for &(k, path) in COUNTERS.iter().filter(|(k, _)| !skip.contains(k)) {
        let sim = path.split('.').fold(t, |v, p| &v[p]).as_u64().unwrap();
        let want = measured(&f, k);
        if sim != want {
            bad.push((k.to_string(), sim, want));
        }
    }
    let opcodes = &f["sass_static"]["opcodes"];
    for (shape, n) in t["gmma_shapes"].as_object().unwrap() {
        if opcodes.get(shape).is_none() {
            bad.push((
                format!("{shape} not in the H200's SASS"),
                n.as_u64().unwrap(),
                0,
            ));
        }
    }
    bad
}

fn assert_matches(names: &[&str], skip: &[&str]) {
    let mut all = Vec::new();
    for n in names {
        for d in disagreements(n, skip) {
            all.push(format!("{n}: {} simulated {} measured {}", d.0, d.1, d.2));
        }
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
}

/// The hand-written two-stage TMA -> mbarrier -> wgmma pipeline (producer warp 4, consumer
/// warpgroup 0-3): 64 HGMMA warp executions, 512 gmma wavefronts, 8 boxes of 8 KiB.
#[test]
fn hand_tma_wgmma_pipe_matches_the_h200() {
    assert_matches(&["hand_tma_wgmma_pipe"], &[]);
}

/// Triton's tutorial matmul (cp.async + ldmatrix + wgmma), 4 and 8 warps, f16 and bf16.
#[test]
fn triton_matmuls_match_the_h200() {
    assert_matches(
        &[
            "tt_matmul_f16_4w",
            "tt_matmul_f16_8w",
            "tt_matmul_bf16_4w",
            "tt_matmul_bf16_8w",
        ],
        &[],
    );
}

/// 09-persistent-matmul's TMA kernel: host TensorDescriptors, TMA loads and stores.
#[test]
fn triton_tma_matmul_matches_the_h200() {
    assert_matches(&["tt_matmul_tma"], &[]);
}

/// The reading-triton-ptx lesson kernel at BLOCK_M 64 (wgmma with A from registers).
#[test]
fn triton_lesson_attention_matches_the_h200() {
    assert_matches(&["tt_lesson_attn_bm64"], &[]);
}

/// The tutorial fused attention through TensorDescriptors, D = 64 and 128.
#[test]
fn triton_fused_attention_matches_the_h200() {
    assert_matches(&["tt_attn_fwd_d64", "tt_attn_fwd_d128"], &[]);
}

const FA3: [&str; 8] = [
    "fa3_d64_full_f16_s128",
    "fa3_d64_full_f16_s512",
    "fa3_d64_causal_f16_s128",
    "fa3_d64_causal_f16_s512",
    "fa3_d128_full_f16_s128",
    "fa3_d128_full_f16_s512",
    "fa3_d128_causal_f16_s128",
    "fa3_d128_causal_f16_s512",
];

/// The counters of FA3's shared loads and stores that do not match (tests/data/ptx_hopper/
/// README.md, "What tilelab ptx gives"): the H200 counts more `op_ld`/`op_st` wavefronts
/// than its LDS/STS make, varying between launches of equal instruction counts.
const FA3_UNMATCHED: [&str; 4] = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
];

/// `kernels/fa3_fwd.cu` (producer warpgroup, two consumer warpgroups, TMA, mbarriers,
/// wgmma), every variant: all counters but the shared ld/st wavefronts and conflicts.
#[test]
fn fa3_matches_the_h200_but_its_shared_wavefronts() {
    assert_matches(&FA3, &FA3_UNMATCHED);
}

/// The same with the shared ld/st wavefronts and conflicts: they do not match yet.
#[test]
#[ignore = "FA3's op_ld/op_st wavefronts on the H200 exceed what its LDS/STS make (fa3_d64_full_f16_s128: st 161 measured for 130 STS, simulated 130) and vary between launches with equal counts (d128 s128 full 331, causal 338); the SASS-attributed counters equal the simulated ones (fa3_shared_wavefronts_equal_what_its_sass_instructions_make): the rest belongs to no SASS instruction; see tests/data/ptx_hopper/README.md"]
fn fa3_shared_wavefronts_match_the_h200() {
    assert_matches(&FA3, &[]);
}

/// What the SASS says about that gap (issue 28): Nsight Compute's SASS-attributed shared
/// wavefronts, `smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_{st,ld}.sum` (the
/// wavefronts of the LDS/STS instructions themselves), equal the simulated ones on all 8 FA3
/// launches (d64 s128: 130 stores, 16 loads; the plain counters say 161 and 16). The rest of the
/// measured `op_st` wavefronts, and their bank conflicts (8 in `fa3_d64_full_f16_s128`'s
/// source-view run, 0 to 11 here), belong to no SASS instruction: the SASS has no STS or STSM the
/// PTX model misses (17 STS, no STSM: `sass_static`), so there is nothing to fix in the model;
/// the unattributed part follows the hardware (TMA and mbarrier traffic: it varies between
/// launches of equal instruction counts).
#[test]
fn fa3_shared_wavefronts_equal_what_its_sass_instructions_make() {
    let mut bad = Vec::new();
    for n in FA3 {
        let f = fixture(n);
        let r = run(&f).unwrap_or_else(|e| panic!("{n}: {e}"));
        for (k, path) in [
            (
                "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                "shared_st_wavefronts",
            ),
            (
                "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                "shared_ld_wavefronts",
            ),
        ] {
            let sim = r["totals"][path].as_u64().unwrap();
            let want = measured(&f, k);
            if sim != want {
                bad.push(format!("{n}: {path} simulated {sim}, {k} {want}"));
            }
        }
        assert_eq!(f["sass_static"]["opcodes"].get("STSM"), None, "{n}");
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// The engine's Hopper arms on small kernels, and the acceptance lines.
// ---------------------------------------------------------------------------------------------

fn launch(block: u32, args: &[&str], maps: &[&str]) -> tilelab::ptx::Launch {
    tilelab::ptx::Launch {
        grid: [1, 1, 1],
        block: [block, 1, 1],
        cta: [0, 0, 0],
        args: args
            .iter()
            .map(|a| {
                let (k, v) = a.split_once('=').unwrap();
                (k.to_string(), v.to_string())
            })
            .collect(),
        tensor_maps: maps
            .iter()
            .map(|m| tilelab::ptx::params::parse_tensor_map(m).unwrap())
            .collect(),
        dynamic_smem: None,
        max_instructions: 1_000_000,
    }
}

/// 8 KiB of shared memory filled with f16 1.0, then two `m64n8k16` wgmmas over it (A at 0,
/// B at 4096, no swizzle, LBO 128, SBO 256 bytes): the first with scale-d false (the 5.0 the
/// accumulators held is not read), the second accumulating. Every D element is then
/// 16 + 16 = 32 whatever the fragment layout (K = 16 products of 1.0 · 1.0, PTX ISA
/// 9.7.15.5.2: D = A·B + (scale-d ? D : 0)); the kernel checks its own accumulators against
/// `EXPECT` and loads from address 0 (an error) when one differs.
const WGMMA_ONES: &str = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n.reqntid 128, 1, 1\n{\n.reg .pred %p<8>;\n.reg .b32 %r<12>;\n.reg .f32 %f<4>;\n.reg .b64 %rd<4>;\n.shared .align 1024 .b8 s[8192];\nmov.u32 %r0, %tid.x;\nshl.b32 %r1, %r0, 6;\nmov.u32 %r2, s;\nadd.u32 %r1, %r1, %r2;\nmov.b32 %r5, 1006648320;\nst.shared.v4.b32 [%r1], {%r5, %r5, %r5, %r5};\nst.shared.v4.b32 [%r1+16], {%r5, %r5, %r5, %r5};\nst.shared.v4.b32 [%r1+32], {%r5, %r5, %r5, %r5};\nst.shared.v4.b32 [%r1+48], {%r5, %r5, %r5, %r5};\nbar.sync 0;\nmov.f32 %f0, 0f40A00000;\nmov.f32 %f1, 0f40A00000;\nmov.f32 %f2, 0f40A00000;\nmov.f32 %f3, 0f40A00000;\nsetp.ne.u32 %p1, %r0, %r0;\nsetp.eq.u32 %p2, %r0, %r0;\nmov.b64 %rd1, 68720001024;\nmov.b64 %rd2, 68720001280;\nwgmma.fence.sync.aligned;\nwgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p1, 1, 1, 0, 0;\nwgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p2, 1, 1, 0, 0;\nwgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\nsetp.ne.f32 %p3, %f0, EXPECT;\nsetp.ne.f32 %p4, %f3, EXPECT;\nor.pred %p3, %p3, %p4;\nmov.u64 %rd3, 0;\n@%p3 ld.global.u32 %r9, [%rd3];\nret;\n}\n";

/// The wgmma arm end to end: gathered from four warps, executed once, scale-d honoured, the
/// accumulators written back to every thread; 4 warp executions per wgmma in the tensor pipe.
#[test]
fn wgmma_accumulates_over_the_warpgroup() {
    let ok = WGMMA_ONES.replace("EXPECT", "0f42000000"); // 32.0
    let r = tilelab::ptx::simulate(&ok, None, &launch(128, &[], &[])).unwrap();
    assert_eq!(r.totals.sass.GMMA, 8);
    assert_eq!(r.totals.gmma_shapes.get("HGMMA.64x8x16.F32"), Some(&8));
    // The control: 16.0 (scale-d ignored on the second, or D lost) is not what it computes.
    let wrong = WGMMA_ONES.replace("EXPECT", "0f41800000");
    let e = tilelab::ptx::simulate(&wrong, None, &launch(128, &[], &[])).unwrap_err();
    assert!(e.to_string().contains("outside every buffer"), "{e}");
}

/// A warpgroup whose warp 3 never reaches the wgmma: one line naming the waiting warps, the
/// line and the warp missing.
#[test]
fn a_warpgroup_that_does_not_converge_is_one_line() {
    let src = WGMMA_ONES.replace("EXPECT", "0f42000000").replace(
        "wgmma.fence.sync.aligned;\n",
        "wgmma.fence.sync.aligned;\nshr.u32 %r6, %r0, 5;\nsetp.eq.u32 %p5, %r6, 3;\n@%p5 ret;\n",
    );
    let e = tilelab::ptx::simulate(&src, None, &launch(128, &[], &[]))
        .unwrap_err()
        .to_string();
    assert!(!e.contains('\n'), "{e}");
    // Warp 3 has exited (at the `@%p5 ret`) by the time warp 0 arrives.
    assert_eq!(
        e,
        "line 34: warp 0 reaches wgmma.mma_async, but warp 3 of its warpgroup 0 has exited: the four warps of a warpgroup execute it together (.aligned, PTX ISA 9.7.15.5.2)"
    );
    // Warp 3 (the last at bar.sync, so it runs on first) branches to the second wgmma; warp 0
    // then reaches the first.
    let src = WGMMA_ONES.replace("EXPECT", "0f42000000").replace(
        "wgmma.fence.sync.aligned;\n",
        "wgmma.fence.sync.aligned;\nshr.u32 %r6, %r0, 5;\nsetp.eq.u32 %p5, %r6, 3;\n@%p5 bra $SKIP;\n",
    ).replace(
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p2",
        "$SKIP:\nwgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p2",
    );
    let e = tilelab::ptx::simulate(&src, None, &launch(128, &[], &[]))
        .unwrap_err()
        .to_string();
    assert!(!e.contains('\n'), "{e}");
    assert_eq!(
        e,
        "line 34: warp 0 reaches this wgmma.mma_async while warp 3 of its warpgroup 0 waits at the one of line 36: the four warps of a warpgroup execute the same wgmma.mma_async together (.aligned, PTX ISA 9.7.15.5.2)"
    );
}

fn hand() -> String {
    std::fs::read_to_string(Path::new(DIR).join("hand_tma_wgmma_pipe.ptx")).unwrap()
}

const HAND_MAP: &str = "f16:256,64:512:64,64:128B";

/// Acceptance: the consumer waits on a phase nobody completes (the producer's second load,
/// line 183, removed: 8192 of the 16384 bytes it expects never come): one line naming the
/// barrier, its phase and the warps.
#[test]
fn a_phase_nobody_completes_is_one_line_naming_barrier_phase_and_warps() {
    let src: String = hand()
        .lines()
        .enumerate()
        .filter(|(i, _)| *i + 1 != 183)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let maps = [format!("0={HAND_MAP}"), format!("1={HAND_MAP}")];
    let maps: Vec<&str> = maps.iter().map(String::as_str).collect();
    let e = tilelab::ptx::simulate(&src, None, &launch(160, &["3=4"], &maps))
        .unwrap_err()
        .to_string();
    assert!(!e.contains('\n'), "{e}");
    assert!(
        e.starts_with("deadlock: warps 0-3 wait at mbarrier 'full_bar'+0 (shared address 0x0) (line 90) for phase 0 (parity 0) to complete: 0 of 1 arrivals and 8192 transaction bytes pending"),
        "{e}"
    );
}

/// Acceptance: a tensor map left out is one line naming the parameter and the flag; a map
/// parameter holding other bytes is refused where the copy reads it, naming it.
#[test]
fn a_missing_tensor_map_is_one_line_naming_the_parameter() {
    let m0 = format!("0={HAND_MAP}");
    let e = tilelab::ptx::simulate(&hand(), None, &launch(160, &["3=4"], &[&m0]))
        .unwrap_err()
        .to_string();
    assert!(!e.contains('\n'), "{e}");
    assert!(
        e.contains("missing value for parameter tma_wgmma_pipe_param_1")
            && e.contains("--tensor-map NAME"),
        "{e}"
    );
    let bytes = format!("1=u32:{}", vec!["0"; 32].join(","));
    let e = tilelab::ptx::simulate(&hand(), None, &launch(160, &["3=4", &bytes], &[&m0]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("byte 0 of parameter 'tma_wgmma_pipe_param_1', which holds no tensor map: give it with --tensor-map tma_wgmma_pipe_param_1="),
        "{e}"
    );
}

/// A from registers (4 `.b32` of f16 1.0 pairs per thread, no imm-trans-a): the same sums,
/// and only B read from shared memory (8 x 16 f16 = 256 bytes, 2 gmma wavefronts per wgmma:
/// H200 rule, m64n64k16 RS 16 = B only, tests/data/ptx_hopper/README.md).
#[test]
fn wgmma_with_a_from_registers() {
    let src = WGMMA_ONES.replace("EXPECT", "0f42000000").replace(
        "%rd1, %rd2, %p1, 1, 1, 0, 0;",
        "{%r5, %r5, %r5, %r5}, %rd2, %p1, 1, 1, 0;",
    );
    let src = src.replace(
        "%rd1, %rd2, %p2, 1, 1, 0, 0;",
        "{%r5, %r5, %r5, %r5}, %rd2, %p2, 1, 1, 0;",
    );
    let r = tilelab::ptx::simulate(&src, None, &launch(128, &[], &[])).unwrap();
    assert_eq!((r.totals.sass.GMMA, r.totals.gmma_wavefronts), (8, 4));
}

/// Forms the decoder refuses, each one line naming the rule.
#[test]
fn wgmma_forms_the_isa_does_not_have_are_refused() {
    let base = WGMMA_ONES.replace("EXPECT", "0f42000000");
    for (from, to, want) in [
        (
            "m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
            "m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p1, 1, 1, 0;",
            "7 operands; this form takes 8",
        ),
        (
            "m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
            "m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p1, 2, 1, 0, 0;",
            "imm-scale-a is '2'; allowed: 1, -1",
        ),
        (
            "m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
            "m64n8k16.f32.f16.f16 {%f0, %f1, %f2}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
            "d has 3 registers; m64n8 .f32 takes 4",
        ),
        (
            "m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
            "m64n8k16.f32.bf16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
            "is not a PTX form",
        ),
        (
            "m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
            "m64n8k32.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
            "K = 32 with .f16 inputs; allowed: k16",
        ),
    ] {
        let src = base.replacen(from, to, 1);
        assert_ne!(src, base);
        let e = tilelab::ptx::report::load(&src, None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("line 31:") && e.contains(want), "{to}: {e}");
    }
}

/// `cp.async.bulk` without a map, global to shared, completing on an mbarrier: its bytes are
/// the copy size (PTX ISA 9.7.9.25.4.1: complete-tx of `size` bytes), one UBLKCP; the wait
/// returns once they land.
#[test]
fn a_bulk_copy_without_a_map_completes_its_bytes() {
    let src = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{\n.reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.shared .align 128 .b8 s[256];\n.shared .align 8 .b64 bar;\nld.param.u64 %rd1, [k_param_0];\ncvta.to.global.u64 %rd1, %rd1;\nmov.u32 %r1, s;\nmov.u32 %r2, bar;\nelect.sync %r3|%p1, -1;\n@%p1 mbarrier.init.shared::cta.b64 [%r2], 1;\n@%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 256;\n@%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 256, [%r2];\nmov.u32 %r4, 0;\n$W:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], %r4;\n@!%p2 bra $W;\nret;\n}\n";
    let r = tilelab::ptx::simulate(src, None, &launch(32, &[], &[])).unwrap();
    let t = &r.totals;
    assert_eq!((t.sass.UBLKCP, t.tma_ld, t.tma_ld_bytes), (1, 1, 256));
    assert_eq!((t.shared_ld_wavefronts, t.shared_st_wavefronts), (0, 0));
}

/// `m64nNk16` of ones with scale-d false then true, for N from 8 to 256: the kernel checks its
/// first and last accumulator registers of every thread against 32 (K = 16 products of
/// 1.0 · 1.0, twice; PTX ISA 9.7.15.5.2) and the run counts (2048 + 32·N) / 128 gmma
/// wavefronts per wgmma (A's 64 x 16 and B's N x 16 f16 bytes / 128, the H200's rule:
/// tests/data/ptx_hopper/README.md).
fn wgmma_n(n: u32) -> String {
    let regs = n / 2;
    let d: Vec<String> = (0..regs).map(|r| format!("%f{r}")).collect();
    let d = d.join(", ");
    let inits: String = (0..regs)
        .map(|r| format!("mov.f32 %f{r}, 0f40A00000;\n"))
        .collect();
    let stores: String = (0..8)
        .map(|k| {
            format!(
                "st.shared.v4.b32 [%r1+{}], {{%r5, %r5, %r5, %r5}};\n",
                16 * k
            )
        })
        .collect();
    format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n.reqntid 128, 1, 1\n{{\n.reg .pred %p<8>;\n.reg .b32 %r<12>;\n.reg .f32 %f<{regs}>;\n.reg .b64 %rd<4>;\n.shared .align 1024 .b8 s[16384];\nmov.u32 %r0, %tid.x;\nshl.b32 %r1, %r0, 7;\nmov.u32 %r2, s;\nadd.u32 %r1, %r1, %r2;\nmov.b32 %r5, 1006648320;\n{stores}bar.sync 0;\n{inits}setp.ne.u32 %p1, %r0, %r0;\nsetp.eq.u32 %p2, %r0, %r0;\nmov.b64 %rd1, 68720001024;\nmov.b64 %rd2, 68720001280;\nwgmma.fence.sync.aligned;\nwgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 {{{d}}}, %rd1, %rd2, %p1, 1, 1, 0, 0;\nwgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 {{{d}}}, %rd1, %rd2, %p2, 1, 1, 0, 0;\nwgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\nsetp.ne.f32 %p3, %f0, 0f42000000;\nsetp.ne.f32 %p4, %f{}, 0f42000000;\nor.pred %p3, %p3, %p4;\nmov.u64 %rd3, 0;\n@%p3 ld.global.u32 %r9, [%rd3];\nret;\n}}\n",
        regs - 1
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(8))]
    #[test]
    fn wgmma_of_every_n_sums_over_the_warpgroup(k in 1u32..=32) {
        let n = 8 * k;
        let r = tilelab::ptx::simulate(&wgmma_n(n), None, &launch(128, &[], &[]))
            .map_err(|e| proptest::test_runner::TestCaseError::fail(format!("N = {n}: {e}")))?;
        proptest::prop_assert_eq!(r.totals.gmma_wavefronts, 2 * (2048 + 32 * u64::from(n)) / 128);
        proptest::prop_assert_eq!(r.totals.sass.GMMA, 8);
    }
}

/// The control of the property: the last register of N = 256 (thread-major D, register 127)
/// is checked, so 16 instead of 32 there fails.
#[test]
fn wgmma_n256_checks_its_last_register() {
    let src = wgmma_n(256).replace("%f127, 0f42000000", "%f127, 0f41800000");
    assert!(tilelab::ptx::simulate(&src, None, &launch(128, &[], &[])).is_err());
}

/// The acceptance line: the FA3 kernel's PTX, one CTA, gives the counts
/// `sim counts flash-attn --style hopper` predicts for that launch (CTA 0 of a grid of one: the
/// persistent CTA walks every tile; `--sms 1`). Two models built apart (the code-structure model
/// of `sim::fa3` and the PTX engine) must agree on every counter both give, for each of the 8
/// H200 launches (the H200 values themselves are compared in
/// `fa3_matches_the_h200_but_its_shared_wavefronts`).
#[test]
fn fa3_ptx_gives_the_counts_sim_counts_predicts() {
    for name in FA3 {
        let f = fixture(name);
        let t = &run(&f).unwrap()["totals"];
        let d = if name.contains("d64") { "64" } else { "128" };
        let s = if name.ends_with("s128") { "128" } else { "512" };
        let mut args = vec![
            "sim",
            "counts",
            "flash-attn",
            "--style",
            "hopper",
            "--head-dim",
            d,
            "--seq",
            s,
            "--batch",
            "1",
            "--heads",
            "1",
            "--sms",
            "1",
            "--json",
        ];
        if name.contains("causal") {
            args.push("--causal");
        }
        let out = Command::new(env!("CARGO_BIN_EXE_tilelab"))
            .args(&args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let c: Value = serde_json::from_slice(&out.stdout).unwrap();
        let c = &c["cta0"];
        let pairs = [
            ("STS", &t["sass"]["STS"], &c["sts"]),
            ("UTMALDG", &t["sass"]["UTMALDG"], &c["tma"]["loads"]),
            ("UTMASTG", &t["sass"]["UTMASTG"], &c["tma"]["o_stores"]),
            (
                "TMA load bytes",
                &t["tma_ld_bytes"],
                &c["tma"]["load_bytes"],
            ),
            (
                "TMA store bytes",
                &t["tma_st_bytes"],
                &c["tma"]["store_bytes"],
            ),
        ];
        for (what, ptx, counts) in pairs {
            assert!(
                ptx.as_u64().is_some(),
                "{name}: {what} missing in tilelab ptx"
            );
            assert_eq!(ptx, counts, "{name}: {what}: tilelab ptx vs sim counts");
        }
        // Per SASS shape (d = 128: S = Q·Kᵀ and O += P·V are both HGMMA.64x128x16.F32).
        let mut shapes = std::collections::BTreeMap::<String, u64>::new();
        for h in c["hgmma"].as_array().unwrap() {
            *shapes
                .entry(h["sass"].as_str().unwrap().into())
                .or_default() += h["warp_executions"].as_u64().unwrap();
        }
        let ptx_shapes: std::collections::BTreeMap<String, u64> = t["gmma_shapes"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(
            ptx_shapes, shapes,
            "{name}: HGMMA warp executions per shape"
        );
    }
}
