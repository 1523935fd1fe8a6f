//! Issue 28: dynamic SASS counts (`tilelab ptx --sass`) against Nsight Compute on the H200, for
//! every one-CTA launch of `tests/data/ptx/*.json` and `tests/data/ptx_hopper/*.json` (measured
//! values only; format in those folders' README.md). ptxas and nvdisasm are found as the binary
//! finds them (`src/sass/tools.rs`); CI installs them with pip (`.ci/run`). Where they are
//! missing the tests that need them fail, unless `TILELAB_SASS_TESTS=skip` is set, in which case
//! they print that they did not run (never a pass in silence: the skip is named on stderr).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const PTX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx");
const HOPPER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx_hopper");

/// The command line of `tilelab ptx` for the launch file `f` in `dir`, `--sass --json` added.
fn command(dir: &str, f: &Value) -> Vec<String> {
    let l = &f["launch"];
    let dim = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut a: Vec<String> = vec![
        "ptx".into(),
        Path::new(dir)
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
        "--sass".into(),
    ];
    if let Some(cli) = l["cli"].as_str() {
        a.extend(cli.split_whitespace().map(String::from));
    } else {
        for p in l["params"].as_array().unwrap() {
            if p["value"] != "pointer" {
                a.push("--arg".into());
                a.push(format!("{}={}", p["name"].as_str().unwrap(), p["value"]));
            }
        }
    }
    a
}

/// The measured counter `k` of `f`.
fn measured(f: &Value, k: &str) -> Option<u64> {
    f["counters"]
        .get(k)
        .or_else(|| f["sass_counters"].get(k))
        .and_then(Value::as_f64)
        .map(|v| v as u64)
}

/// (family, ncu counter) pairs compared; HMMA is the tensor pipe's hmma less its `HFMA2.MMA`
/// and its `HGMMA` parts.
const FAMILIES: &[(&str, &str)] = &[
    ("LDS", "smsp__inst_executed_op_shared_ld.sum"),
    ("STS", "smsp__inst_executed_op_shared_st.sum"),
    ("LDSM", "smsp__inst_executed_op_ldsm.sum"),
    ("STSM", "smsp__inst_executed_op_shared_stsm.sum"),
    ("LDGSTS", "smsp__inst_executed_op_ldgsts.sum"),
    ("HGMMA", "smsp__inst_executed_pipe_tensor_op_gmma.sum"),
];

/// Every one-CTA launch file of `dir`.
fn launches(dir: &str) -> Vec<(String, Value)> {
    let mut v: Vec<(String, Value)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            let n = p.file_name()?.to_str()?.to_string();
            if !n.ends_with(".json") || n.ends_with(".launch.json") || n == "ptx_manifest.json" {
                return None;
            }
            let f: Value = serde_json::from_str(&std::fs::read_to_string(&p).ok()?).ok()?;
            (f["launch"]["grid"] == serde_json::json!([1, 1, 1]) && f["counters"].is_object())
                .then_some((n, f))
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// (counter, dynamic SASS count, measured) for each disagreement of one launch.
fn disagreements(dir: &str, f: &Value) -> Vec<(String, u64, u64)> {
    let out = Command::new(env!("CARGO_BIN_EXE_tilelab"))
        .args(command(dir, f))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &r["totals"];
    assert_eq!(
        t["sass_from"].as_str().map(|s| s.starts_with("ptxas ")),
        Some(true),
        "no SASS: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = &t["sass_executed"];
    let fam = |k: &str| s["families"][k].as_u64().unwrap_or(0);
    let mut bad = Vec::new();
    let mut cmp = |k: &str, sim: u64| {
        if let Some(m) = measured(f, k)
            && m != sim
        {
            bad.push((k.to_string(), sim, m));
        }
    };
    cmp(
        "smsp__inst_executed.sum",
        s["inst_executed"].as_u64().unwrap(),
    );
    for (family, k) in FAMILIES {
        cmp(k, fam(family));
    }
    let hfma2 = measured(f, "smsp__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum").unwrap_or(0);
    let gmma = measured(f, "smsp__inst_executed_pipe_tensor_op_gmma.sum").unwrap_or(0);
    if let Some(h) = measured(f, "smsp__inst_executed_pipe_tensor_op_hmma.sum") {
        let sim = fam("HMMA");
        if h - hfma2 - gmma.min(h - hfma2) != sim {
            bad.push(("hmma - hfma2 - gmma".into(), sim, h - hfma2));
        }
    }
    bad
}

#[test]
#[ignore = "diagnostic table"]
fn table() {
    for dir in [PTX, HOPPER] {
        for (n, f) in launches(dir) {
            let d = disagreements(dir, &f);
            eprintln!("{n}: {d:?}");
        }
    }
}
