//! Issue 12's acceptance: for every launch measured on the H200 (`tests/data/ptx/*.json`, made
//! by `scripts/research/ptx_fixtures/`), `tilelab ptx`'s totals equal Nsight Compute's per-CTA counters
//! exactly: wavefronts and bank conflicts of shared loads (LDS+LDSM) and stores (STS+STSM),
//! executed LDS and STS (`_pred_on_any`), LDSM, STSM, HMMA (minus `HFMA2.MMA`) and LDGSTS.
//! Causal FA2 launches compare CTA (0,0,0) of the full grid with `cta0_by_difference`.

use std::path::Path;

use serde_json::Value;
use tilelab::ptx::{self, Launch};

use crate::common::fixture_launch;
use fixture_launch::{DIR, dim};

/// (fixture, counter, simulated, measured) for every disagreement of one launch file.
fn check(path: &Path) -> Vec<(String, String, u64, u64)> {
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let name = f["fixture"].as_str().unwrap().to_string();
    let src = std::fs::read_to_string(Path::new(DIR).join(f["ptx"].as_str().unwrap())).unwrap();
    let l = &f["launch"];
    let args = fixture_launch::args(l);
    let counters = if f["cta0_by_difference"].is_object() {
        &f["cta0_by_difference"]["counters"]
    } else if dim(&l["grid"]) == [1, 1, 1] {
        &f["counters"]
    } else {
        // The launch with one CTA fewer: it only serves the difference of its partner.
        return Vec::new();
    };
    let launch = Launch {
        grid: dim(&l["grid"]),
        block: dim(&l["block"]),
        cta: [0, 0, 0],
        args,
        tensor_maps: vec![],
        dynamic_smem: Some(l["dynamic_smem_bytes"].as_u64().unwrap() as u32),
        max_instructions: tilelab::ptx::machine::DEFAULT_MAX_INSTRUCTIONS,
        cluster: None,
    };
    let r = match ptx::simulate(&src, l["kernel"].as_str(), &launch) {
        Ok(r) => r,
        Err(e) => return vec![(name, format!("error: {e}"), 0, 0)],
    };
    let t = r.totals;
    let c = |k: &str| {
        counters[k]
            .as_f64()
            .unwrap_or_else(|| panic!("{name}: no counter {k}")) as u64
    };
    let want = [
        (
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            t.shared_ld_wavefronts,
            c("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
        ),
        (
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
            t.shared_st_wavefronts,
            c("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
        ),
        (
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
            t.shared_ld_bank_conflicts,
            c("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
        ),
        (
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
            t.shared_st_bank_conflicts,
            c("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
        ),
        (
            "smsp__inst_executed_op_shared_ld_pred_on_any.sum",
            t.sass.LDS,
            c("smsp__inst_executed_op_shared_ld_pred_on_any.sum"),
        ),
        (
            "smsp__inst_executed_op_shared_st_pred_on_any.sum",
            t.sass.STS,
            c("smsp__inst_executed_op_shared_st_pred_on_any.sum"),
        ),
        (
            "smsp__inst_executed_op_ldsm.sum",
            t.sass.LDSM,
            c("smsp__inst_executed_op_ldsm.sum"),
        ),
        (
            "smsp__inst_executed_op_shared_stsm.sum",
            t.sass.STSM,
            c("smsp__inst_executed_op_shared_stsm.sum"),
        ),
        (
            "hmma - hfma2",
            t.sass.HMMA,
            c("smsp__inst_executed_pipe_tensor_op_hmma.sum")
                - c("smsp__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum"),
        ),
        (
            "sm__sass_inst_executed_op_ldgsts.sum",
            t.sass.LDGSTS,
            c("sm__sass_inst_executed_op_ldgsts.sum"),
        ),
    ];
    want.iter()
        .filter(|(_, s, m)| s != m)
        .map(|(k, s, m)| (name.clone(), k.to_string(), *s, *m))
        .collect()
}

#[test]
fn every_measured_launch_is_reproduced_exactly() {
    let mut files: Vec<_> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 50, "{} launch files", files.len());
    let bad: Vec<_> = files.iter().flat_map(|p| check(p)).collect();
    for (f, k, s, m) in &bad {
        eprintln!("{f}: {k}: simulated {s}, measured {m}");
    }
    assert!(
        bad.is_empty(),
        "{} disagreements in {} launches",
        bad.len(),
        files.len()
    );
}
