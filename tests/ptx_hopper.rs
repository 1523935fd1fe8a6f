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
#[ignore = "FA3's op_ld/op_st wavefronts on the H200 exceed what its LDS/STS make (fa3_d64_full_f16_s128: st 161 measured for 130 STS, simulated 130) and vary between launches with equal counts (d128 s128 full 331, causal 338); see tests/data/ptx_hopper/README.md"]
fn fa3_shared_wavefronts_match_the_h200() {
    assert_matches(&FA3, &[]);
}
