//! ISA rules of the model checked against NVIDIA's own tools.
//!
//! `sim::tma::TensorMap::new` against the H200's driver: every case of
//! `tests/data/hopper_probes/h200_tensormap_rules.json` (120 calls of `cuTensorMapEncodeTiled`,
//! driver 580.159.04 / CUDA 13.0, made by `scripts/research/hopper_fixtures/tensormap_rules.py` on
//! 2026-12-02) must be accepted by the model exactly when the driver accepted it. The one allowed
//! difference: a map the driver accepts whose `elementStrides` are not 1, which the model refuses
//! as "not modelled" (never as "not allowed").

//!
//! `sim::wgmma::integer_n_allowed` against ptxas 13.0.88 (the H200 machine's version, from pip's
//! `nvidia-cuda-nvcc==13.0.88`): `tests/data/hopper_probes/ptxas_wgmma_integer_n.txt`, written by
//! `scripts/research/hopper_fixtures/ptxas_wgmma_n.sh`, lists the N that ptxas accepts for
//! `wgmma.mma_async.sync.aligned.m64nNk32.s32.s8.s8`.

use tilelab::sim::tma::{TensorMap, TmaDtype, TmaSwizzle};
use tilelab::sim::wgmma::integer_n_allowed;

#[derive(serde::Deserialize)]
struct Case {
    name: String,
    dtype: usize,
    dims: Vec<u64>,
    strides: Vec<u64>,
    #[serde(rename = "box")]
    box_dims: Vec<u32>,
    elem_strides: Vec<u32>,
    swizzle: usize,
    result: i64,
}

#[derive(serde::Deserialize)]
struct Probe {
    driver: u32,
    cases: Vec<Case>,
}

fn probe() -> Probe {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/hopper_probes/h200_tensormap_rules.json"
    );
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn every_driver_case_is_decided_as_the_driver_decided_it() {
    let p = probe();
    assert_eq!(p.driver, 13000);
    assert_eq!(p.cases.len(), 120);
    let mut wrong = Vec::new();
    for c in &p.cases {
        let got = TensorMap::new(
            TmaDtype::ALL[c.dtype],
            &c.dims,
            &c.strides,
            &c.box_dims,
            Some(&c.elem_strides),
            TmaSwizzle::ALL[c.swizzle],
        );
        let driver_ok = c.result == 0;
        let fine = match (&got, driver_ok) {
            (Ok(_), true) | (Err(_), false) => true,
            (Err(e), true) => {
                e.to_string().contains("not modelled") && c.elem_strides.iter().any(|&s| s != 1)
            }
            (Ok(_), false) => false,
        };
        if !fine {
            wrong.push(format!(
                "{}: driver {} , model {:?}",
                c.name,
                c.result,
                got.map(|_| "accepts").map_err(|e| e.to_string())
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_probe_covers_both_answers_of_each_rule() {
    // The measured edges the model's limits come from: a probe without them would not test them.
    let p = probe();
    let result = |n: &str| {
        p.cases
            .iter()
            .find(|c| c.name == n)
            .unwrap_or_else(|| panic!("case {n}"))
            .result
    };
    for (accepted, refused) in [
        ("dim0=4294967296", "dim0=4294967297"),
        ("dim1=1", "dim1=0"),
        ("stride=1099511627760", "stride=1099511627776"),
        ("stride=0", "stride=8"),
        ("box1=256", "box1=257"),
        ("box0=8,f16,none", "box0=12,f16,none"),
        ("32B,inner=32", "32B,inner=64"),
        ("64B,inner=64", "64B,inner=128"),
        ("128B,inner=128", "128B,inner=256"),
        ("es0=8", "es0=9"),
    ] {
        assert_eq!(result(accepted), 0, "{accepted}");
        assert_ne!(result(refused), 0, "{refused}");
    }
}

#[test]
fn integer_wgmma_n_are_the_ones_ptxas_accepts() {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/hopper_probes/ptxas_wgmma_integer_n.txt"
    );
    let text = std::fs::read_to_string(p).unwrap();
    let line = text.lines().find(|l| !l.starts_with('#')).unwrap();
    let accepted: Vec<u32> = line
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(accepted.len(), 18);
    for n in (8..=256).step_by(8) {
        assert_eq!(integer_n_allowed(n), accepted.contains(&n), "N = {n}");
    }
    assert!(!integer_n_allowed(0) && !integer_n_allowed(4) && !integer_n_allowed(264));
}

/// The cluster rules (`ptx::params::check_cluster`) against the H200's driver: every one of the
/// 280 `cuLaunchKernelEx` calls of `tests/data/hopper_probes/h200_cluster_rules.json` (ten
/// kernels with and without `.reqnctapercluster`, `.maxclusterrank`, `.explicitcluster`, four
/// grids, no cluster attribute and six cluster shapes; driver 580.159.04, 2026-12-02,
/// `scripts/research/hopper_fixtures/cluster_rules.c`, docs/log/2026-12-02-cluster-rules.md) is
/// accepted exactly when the driver launched it, with the cluster size the kernel read from
/// `%cluster_nctarank` and its `%is_explicit_cluster`.
#[test]
fn every_cluster_launch_is_decided_as_the_driver_decided_it() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/hopper_probes");
    let rules: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{dir}/h200_cluster_rules.json")).unwrap(),
    )
    .unwrap();
    let cases = rules["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 280);
    let num = |v: &serde_json::Value| v.as_u64().unwrap() as u32;
    let mut wrong = Vec::new();
    for c in cases {
        let name = c["ptx"].as_str().unwrap();
        let src = std::fs::read_to_string(format!("{dir}/cluster_rules/{name}.ptx")).unwrap();
        let prog = tilelab::ptx::report::load(&src, None).unwrap();
        let g = c["grid"].as_array().unwrap();
        let a: Vec<u32> = c["cluster_attr"]
            .as_array()
            .unwrap()
            .iter()
            .map(num)
            .collect();
        let launch = tilelab::ptx::Launch {
            grid: [num(&g[0]), num(&g[1]), 1],
            block: [32, 1, 1],
            cta: [0, 0, 0],
            args: vec![],
            tensor_maps: vec![],
            dynamic_smem: None,
            max_instructions: 1000,
            cluster: (a != [0, 0, 0]).then(|| [a[0], a[1], a[2]]),
        };
        let driver_ok = c["launch"] == "CUDA_SUCCESS";
        let got = tilelab::ptx::params::check_cluster(&prog, &launch);
        match (&got, driver_ok) {
            (Ok((dims, explicit)), true) => {
                let n = dims[0] * dims[1] * dims[2];
                let cta0 = &c["cta0"];
                if n != num(&cta0["cluster_nctarank"])
                    || u32::from(*explicit) != num(&cta0["is_explicit_cluster"])
                {
                    wrong.push(format!("{c}: tilelab {dims:?} explicit {explicit}"));
                }
            }
            (Err(_), false) => {}
            _ => wrong.push(format!("{c}: tilelab {got:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The largest number ptxas names after `key` in its messages (`requires PTX ISA .version 7.8`
/// → 7.8 as (7, 8); `requires .target sm_90` → 90 as (90, 0)).
fn ptxas_needs(msgs: &str, key: &str) -> Option<(u32, u32)> {
    msgs.match_indices(key)
        .filter_map(|(i, _)| {
            let rest = &msgs[i + key.len()..];
            let num: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let mut it = num.trim_end_matches('.').split('.');
            let a = it.next()?.parse().ok()?;
            Some((a, it.next().and_then(|b| b.parse().ok()).unwrap_or(0)))
        })
        .max()
}

/// The version/target gates (`sim::instr::GATES`, D4) against ptxas 13.0.88:
/// `tests/data/hopper_probes/ptxas_gates.tsv` (written by `scripts/research/hopper_fixtures/ptxas_gates.sh`)
/// compiles each gated form under `.version 6.3 .target sm_75`, `.version 9.0 .target sm_75` and
/// `.version 9.0 .target sm_90`. The decoder refuses a form exactly when ptxas does, and its
/// one-line message names the version and the target ptxas names.
#[test]
fn version_and_target_gates_are_the_ones_ptxas_applies() {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/hopper_probes/ptxas_gates.tsv"
    );
    let text = std::fs::read_to_string(p).unwrap();
    let mut rows = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        let [name, version, target, regs, inst, msgs] = f[..] else {
            panic!("bad row {line}");
        };
        let src = format!(
            ".version {version}\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n{regs}\n{inst}\nret;\n}}\n"
        );
        let got = match tilelab::ptx::report::load(&src, None) {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        };
        let gated = got.contains(" needs PTX ISA ");
        let case = format!(
            "{name} under .version {version} .target {target}: ptxas '{msgs}', tilelab '{got}'"
        );
        assert!(!got.contains('\n'), "{case}");
        if msgs == "OK" {
            assert!(!gated, "{case}");
            rows += 1;
            continue;
        }
        assert!(gated, "{case}");
        let opname = inst
            .split_whitespace()
            .next()
            .unwrap()
            .trim_end_matches(';');
        assert!(
            got.starts_with(&format!("line 7: '{opname}' needs PTX ISA ")),
            "{case}"
        );
        assert!(
            got.contains(&format!(
                "; this module has .version {version} and .target {target} (PTX ISA "
            )),
            "{case}"
        );
        if let Some((ma, mi)) = ptxas_needs(msgs, "requires PTX ISA .version ") {
            assert!(
                got.contains(&format!("needs PTX ISA {ma}.{mi} or later")),
                "{case}"
            );
        }
        if let Some((sm, _)) = ptxas_needs(msgs, "requires .target sm_") {
            // `sm_90 or later`, or `sm_90a …` for the architecture-specific forms.
            assert!(got.contains(&format!("and .target sm_{sm}")), "{case}");
        }
        if msgs.contains("not supported on .target 'sm_90'") {
            assert!(got.contains(".target sm_90a"), "{case}");
        }
        rows += 1;
    }
    assert_eq!(rows, 132, "every form under three headers");
}

/// D4, the new user's cases: stmatrix under PTX 7.0 / sm_80, wgmma and setmaxnreg under plain
/// sm_90 (the ISA's "Requires sm_90a"), e4m3 mma under PTX 8.0 — one line each, naming both
/// minimums and the module's values.
#[test]
fn the_new_users_gated_forms_are_refused_in_one_line() {
    let load = |version: &str, target: &str, body: &str| {
        let src = format!(
            ".version {version}\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<8>;\n.reg .f32 %f<8>;\n.reg .b64 %rd<4>;\n{body}\nret;\n}}\n"
        );
        match tilelab::ptx::report::load(&src, None) {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    };
    assert_eq!(
        load(
            "7.0",
            "sm_80",
            "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%rd1], {%r1, %r2, %r3, %r4};"
        ),
        "line 9: 'stmatrix.sync.aligned.m8n8.x4.shared.b16' needs PTX ISA 7.8 or later and .target sm_90 or later; this module has .version 7.0 and .target sm_80 (PTX ISA 9.7.14.5.16 stmatrix)"
    );
    assert_eq!(
        load("8.0", "sm_90", "wgmma.fence.sync.aligned;"),
        "line 9: 'wgmma.fence.sync.aligned' needs PTX ISA 8.0 or later and .target sm_90a (only); this module has .version 8.0 and .target sm_90 (PTX ISA 9.7.15 wgmma)"
    );
    assert_eq!(load("8.0", "sm_90a", "wgmma.fence.sync.aligned;"), "");
    assert_eq!(
        load("8.0", "sm_90", "setmaxnreg.inc.sync.aligned.u32 240;"),
        "line 9: 'setmaxnreg.inc.sync.aligned.u32' needs PTX ISA 8.0 or later and .target sm_90a or a later architecture-specific target (a or f suffix); this module has .version 8.0 and .target sm_90 (PTX ISA 9.7.17.1 setmaxnreg)"
    );
    assert_eq!(
        load(
            "8.0",
            "sm_90",
            "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};"
        ),
        "line 9: 'mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32' needs PTX ISA 8.4 or later and .target sm_89 or later; this module has .version 8.0 and .target sm_90 (PTX ISA 9.7.14.5.14 mma)"
    );
}

/// D5: a cluster directive of 0 is read as absent (as ptxas 13.0.88 and the H200's driver take
/// it, `h200_cluster_rules.json` above), and the docs say so where they list the refused
/// directive values.
#[test]
fn a_cluster_directive_of_0_is_absent_and_the_docs_say_so() {
    for d in [".reqnctapercluster 0, 1, 1", ".maxclusterrank 0"] {
        let src = format!(
            ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k() {d}\n{{\nret;\n}}\n"
        );
        let p = tilelab::ptx::report::load(&src, None).unwrap();
        assert_eq!((p.reqnctapercluster, p.maxclusterrank), (None, None), "{d}");
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let ptx_md = std::fs::read_to_string(format!("{root}/docs/ptx.md")).unwrap();
    let flat = ptx_md.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("directive values that are not positive integers, except that a `.reqnctapercluster` with a 0 dimension and a `.maxclusterrank 0` are read as absent"),
        "docs/ptx.md"
    );
    let rob = std::fs::read_to_string(format!("{root}/docs/robustness.md")).unwrap();
    assert!(rob.contains(
        "a directive of 0 (`.reqnctapercluster 0,1,1`, `.maxclusterrank 0`) is read as absent"
    ));
}
