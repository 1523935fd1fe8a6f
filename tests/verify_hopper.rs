//! The Hopper groups of `tilelab verify` without a GPU: their comparisons fed with what the
//! H200 returned (tests/data/h200_*_2026-11-30.json) must pass, and with planted differences
//! must fail; on a device that is not sm_90 each group is one SKIPPED row; the cp.async group
//! end to end with a fake ncu printing the H200's counters.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tilelab::gpu::hopper_check::{
    self, BANK_CONFLICTS_LDGSTS, CP_ASYNC_METRICS, INST_LDGSTS, SASS_WAVEFRONTS_LDGSTS, TmaCase,
    WAVEFRONTS_ALL, WAVEFRONTS_MISC, WgmmaFill,
};
use tilelab::gpu::ncu;
use tilelab::gpu::tools::Tools;
use tilelab::gpu::verify::{
    Check, Collect, Context, DeviceFacts, GROUPS, Options, Plan, Tally, Verdict,
};
use tilelab::records::Record;
use tilelab::sim::arch::Arch;
use tilelab::sim::bank::WarpRequest;
use tilelab::sim::instr::Instruction;
use tilelab::sim::tma::TmaSwizzle;
use tilelab::sim::wgmma;

fn load(name: &str) -> Value {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

fn facts() -> DeviceFacts {
    DeviceFacts {
        card: "NVIDIA H200 (sm_90)".into(),
        driver: "580.159.04".into(),
        cuda: "13.0".into(),
    }
}

/// A fresh temporary directory, removed when dropped.
fn temp_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("tilelab-vh-{tag}-"))
        .tempdir()
        .unwrap()
}

fn plan(groups: &[&str], hopper_fuzz: usize) -> Plan {
    Plan::new(&Options {
        groups: groups.iter().map(|s| s.to_string()).collect(),
        hopper_fuzz,
        seed: 3,
        mismatches: "m.json".into(),
        ..Options::default()
    })
    .unwrap()
}

#[test]
fn hopper_groups_are_registered_and_skipped_off_sm90() {
    for name in ["stmatrix", "cp.async", "tma", "wgmma", "fa3"] {
        let g = GROUPS.iter().find(|g| g.name == name).expect(name);
        for arch in [Arch::Sm80, Arch::Sm89] {
            let mut progress = Collect::default();
            let mut ctx = Context::without_gpu(
                arch,
                facts(),
                Tools::default(),
                PathBuf::from("tilelab"),
                &mut progress,
            );
            let rows = (g.run)(&mut ctx, &plan(&[], 4)).unwrap();
            assert_eq!(rows.len(), 1, "{name}");
            assert_eq!(rows[0].verdict, Verdict::Skip, "{name}");
            assert!(
                rows[0].detail.contains("needs an sm_90"),
                "{}",
                rows[0].detail
            );
            let t = Tally::of(&rows);
            assert_eq!((t.passed, t.skipped), (0, 1));
        }
    }
}

#[test]
fn group_filter_names_known_groups_only() {
    let p = plan(&["tma", "wgmma"], 0);
    assert_eq!(p.groups, ["tma", "wgmma"]);
    let e = Plan::new(&Options {
        groups: vec!["tmaa".into()],
        ..Options::default()
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("--group 'tmaa' is not a group") && e.contains("cp.async"),
        "{e}"
    );
    // The plan's Hopper requests: structured ones, then the random ones; cp.async with sources.
    let p = plan(&[], 10);
    // + the stmatrix steps of lessons 11 and 14, 2 layouts each
    assert_eq!(p.stmatrix_records.len(), 36 + 2 + 2 + 10);
    assert_eq!(p.cp_async_records.len(), 24 + 10);
    assert!(
        p.cp_async_records
            .iter()
            .all(|r| r.global_addresses.is_some())
    );
}

/// `tests/data/h200_stmatrix_smem_2026-11-30.json` as the probe listed it: the nonzero words
/// (byte offset, value) in address order.
/// A request, the words written, the listed (byte offset, value) words.
type StsmDump = (WarpRequest, u32, Vec<(u32, u16)>);

fn stsm_dumps() -> Vec<StsmDump> {
    let data = load("h200_stmatrix_smem_2026-11-30.json");
    data["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let ins = Instruction::parse(r["instruction"].as_str().unwrap()).unwrap();
            let offs: [u32; 32] = u32s(&r["lane_byte_offsets"]).try_into().unwrap();
            let n = ins.matrices().unwrap().count() as u32;
            let slots = r["slots"].as_array().unwrap();
            let mut words = BTreeMap::new();
            let mut i = 0;
            for lane in 0..32 {
                for reg in 0..n {
                    for h in 0..2 {
                        if let Some(a) = slots[i].as_i64().filter(|&a| a >= 0) {
                            words.insert(a as u32, hopper_check::stsm_value(lane, reg, h));
                        }
                        i += 1;
                    }
                }
            }
            let written = r["written"].as_u64().unwrap() as u32;
            (
                WarpRequest::new(ins, offs),
                written,
                words.into_iter().collect(),
            )
        })
        .collect()
}

#[test]
fn stmatrix_placement_accepts_every_h200_dump_and_catches_a_moved_word() {
    let dumps = stsm_dumps();
    assert_eq!(dumps.len(), 570);
    for (req, n, words) in &dumps {
        hopper_check::stmatrix_placement(req, *n, words).unwrap();
    }
    // A word at the wrong address, a wrong value, a missing word.
    let (req, n, words) = &dumps[0];
    let mut moved = words.clone();
    moved[3].0 += 2;
    assert!(hopper_check::stmatrix_placement(req, *n, &moved).is_err());
    let mut wrong = words.clone();
    wrong[5].1 ^= 1 << 3;
    assert!(hopper_check::stmatrix_placement(req, *n, &wrong).is_err());
    assert!(hopper_check::stmatrix_placement(req, *n, &words[1..]).is_err());
}

/// The H200's cp.async records as the group's plan holds them (sources relative to the buffer)
/// and ncu's rows for them, by metric name.
fn cp_async_measured() -> (Vec<Record>, Vec<BTreeMap<String, f64>>) {
    let data = load("h200_cpasync_2026-11-30.json");
    let keys: BTreeMap<String, String> = data["metrics"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (v.as_str().unwrap().to_string(), k.clone()))
        .collect();
    let mut recs = Vec::new();
    let mut rows = Vec::new();
    for r in data["records"].as_array().unwrap() {
        let ins = r["instruction"].as_str().unwrap();
        if !ins.starts_with("cp.async") {
            continue;
        }
        let stride = r["src_stride"].as_u64().unwrap();
        recs.push(Record {
            name: r["name"].as_str().unwrap().to_string(),
            instruction: ins.to_string(),
            lane_byte_offsets: r["lane_byte_offsets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect(),
            active_mask: Some(r["active_mask"].as_u64().unwrap()),
            wavefronts: None,
            bank_conflicts: None,
            global_addresses: Some((0..32).map(|l| stride * l).collect()),
        });
        let mut m = BTreeMap::new();
        for (short, v) in r["counters"].as_object().unwrap() {
            m.insert(keys[short].clone(), v.as_f64().unwrap());
        }
        rows.push(m);
    }
    (recs, rows)
}

#[test]
fn cp_async_checks_pass_on_the_h200_counters_and_fail_on_planted_ones() {
    let (recs, rows) = cp_async_measured();
    assert_eq!(recs.len(), 170);
    let checks = hopper_check::cp_async_checks(&recs, &rows).unwrap();
    let verdicts: Vec<Verdict> = checks.iter().map(|c| c.verdict).collect();
    // Instructions, .ca wavefronts and conflicts (the 77 one-line-unit requests), the
    // SASS-attributed count, .cg quiet pass; the 52 spread requests' SASS-attributed counts lie
    // within the bounds (pass), their L1TEX counts are not modelled (skipped).
    use Verdict::{Pass, Skip};
    assert_eq!(
        verdicts,
        [Pass, Pass, Pass, Pass, Pass, Pass, Skip],
        "{checks:#?}"
    );
    assert_eq!(checks[1].simulated, "77 agree");
    assert_eq!(checks[3].measured, "77 equal");
    assert_eq!(checks[4].measured, "41 quiet");
    assert_eq!(
        (checks[5].simulated.as_str(), checks[5].measured.as_str()),
        ("52 within", "52 total")
    );
    assert_eq!(checks[6].measured, "52 measured");
    // A spread request's SASS-attributed count one above its bounds: `4.pairs_same.src16`
    // (L1 banks 0, 4, .., 28 read four times, lane pairs writing one word: 4..=5, measured 5).
    let k = recs
        .iter()
        .position(|r| r.name.contains("ca.shared.global.4.pairs_same.src16"))
        .unwrap();
    let mut planted = rows.clone();
    *planted[k].get_mut(SASS_WAVEFRONTS_LDGSTS).unwrap() += 1.0;
    let c = hopper_check::cp_async_checks(&recs, &planted).unwrap();
    assert_eq!(c[5].verdict, Verdict::Fail);
    assert_eq!(
        (c[7].simulated.as_str(), c[7].measured.as_str()),
        ("4..=5", "6")
    );
    // One .ca count off by one: its row appears and the summary fails.
    let i = recs
        .iter()
        .position(|r| r.name.contains("ca.shared.global.4.pairs_same.src4"))
        .unwrap();
    let mut planted = rows.clone();
    *planted[i].get_mut(WAVEFRONTS_ALL).unwrap() += 1.0;
    let c = hopper_check::cp_async_checks(&recs, &planted).unwrap();
    assert_eq!(c[1].verdict, Verdict::Fail);
    assert_eq!(
        (c[7].simulated.as_str(), c[7].measured.as_str()),
        ("2", "3")
    );
    // A .cg that moved the L1TEX counter fails the .cg row.
    let j = recs
        .iter()
        .position(|r| r.instruction.contains(".cg"))
        .unwrap();
    let mut planted = rows.clone();
    *planted[j].get_mut(WAVEFRONTS_ALL).unwrap() += 4.0;
    let c = hopper_check::cp_async_checks(&recs, &planted).unwrap();
    assert_eq!(c[4].verdict, Verdict::Fail);
    // Two LDGSTS in a launch fail the first row.
    let mut planted = rows;
    planted[0].insert(INST_LDGSTS.into(), 2.0);
    assert_eq!(
        hopper_check::cp_async_checks(&recs, &planted).unwrap()[0].verdict,
        Verdict::Fail
    );
    for m in [
        WAVEFRONTS_MISC,
        BANK_CONFLICTS_LDGSTS,
        SASS_WAVEFRONTS_LDGSTS,
    ] {
        assert!(CP_ASYNC_METRICS.contains(&m));
    }
}

fn fake_tool(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The cp.async group without a GPU: a fake ncu prints the H200's counters for the records (in
/// ncu's CSV shape); the rows are those of the comparison, the probe child is asked for, and the
/// SASS row fails because there is no GPU to compile on (a failure, never a pass).
#[test]
fn cp_async_group_reads_ncu_and_compares() {
    let dir = temp_dir("cpasync");
    let (recs, rows) = cp_async_measured();
    let mut csv = String::from(
        "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n",
    );
    for (i, m) in rows.iter().enumerate() {
        for (k, v) in m {
            csv.push_str(&format!(
                "\"{i}\",\"1\",\"tilelab\",\"127.0.0.1\",\"cpasync_src_count\",\"1\",\"7\",\"(32, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"{k}\",\"\",\"{v}\"\n"
            ));
        }
    }
    std::fs::write(dir.path().join("out.csv"), csv).unwrap();
    let ncu = fake_tool(
        dir.path(),
        "ncu",
        &format!(
            "echo \"$@\" > '{}'\ncat '{}'",
            dir.path().join("args").display(),
            dir.path().join("out.csv").display()
        ),
    );
    let mut p = plan(&["cp.async"], 0);
    p.cp_async_records = recs;
    p.save_hopper = Some(dir.path().join("saved"));
    let mut progress = Collect::default();
    let mut ctx = Context::without_gpu(
        Arch::Sm90,
        facts(),
        Tools {
            ncu: Some(ncu),
            cuobjdump: None,
        },
        PathBuf::from("/opt/tilelab/tilelab"),
        &mut progress,
    );
    let g = GROUPS.iter().find(|g| g.name == "cp.async").unwrap();
    let out: Vec<Check> = (g.run)(&mut ctx, &p).unwrap();
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    for want in [
        "--clock-control none",
        "regex:cpasync_src_count",
        "verify --probe-cpasync",
        ncu::WAVEFRONTS_ST,
    ] {
        assert!(args.contains(want), "{args}");
    }
    assert_eq!(out.len(), 8, "{out:#?}");
    assert!(out[..6].iter().all(|c| c.passed()), "{out:#?}");
    assert!(
        out[5].name.contains("within the model's bounds"),
        "{out:#?}"
    );
    assert_eq!(
        out[6].verdict,
        Verdict::Skip,
        "spread sources: L1TEX count not modelled"
    );
    assert_eq!(out[7].verdict, Verdict::Fail);
    assert!(out[7].detail.contains("needs a GPU"), "{}", out[7].detail);
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("saved/cpasync.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(saved["measured"].as_array().unwrap().len(), 170);
    assert_eq!(saved["provenance"]["card"], "NVIDIA H200 (sm_90)");
}

/// A `TmaCase` from a record of `tests/data/h200_tma_2026-11-30.json`.
fn tma_case_of(c: &Value) -> TmaCase {
    let g = |k: &str| c[k].as_u64().unwrap() as u32;
    TmaCase {
        rows: g("rows"),
        inner_bytes: g("cols") * g("elem_bytes"),
        elem_bytes: g("elem_bytes"),
        swizzle: TmaSwizzle::ALL[g("swizzle") as usize],
        dst: g("dst"),
        oob: c["y0"].as_i64().unwrap() != 3,
    }
}

/// What the probe read back, rebuilt from the record's chunk list (tag − 1 = global row·32 +
/// chunk, -1 untouched, -2 zero filled; no stray bytes were measured).
fn tma_readback(case: &TmaCase, c: &Value) -> Vec<u8> {
    let l = case.launch();
    let mut out = vec![0xA5u8; l.out_bytes as usize];
    for (i, v) in c["chunks"].as_array().unwrap().iter().enumerate() {
        let v = v.as_i64().unwrap();
        let at = case.dst as usize + 16 * i;
        for o in 0..16 {
            out[at + o] = match v {
                -1 => 0xA5,
                -2 => 0,
                v => hopper_check::tma_fill_byte(v as u32 / 32, (v as u32 % 32) * 16 + o as u32),
            };
        }
    }
    out
}

#[test]
fn tma_cases_were_all_measured_and_compare_as_the_h200_placed_them() {
    let data = load("h200_tma_2026-11-30.json");
    let measured: Vec<&Value> = data["cases"].as_array().unwrap().iter().collect();
    let cases = hopper_check::tma_cases();
    let (mut placed, mut rejected) = (0, 0);
    for case in &cases {
        let c = measured
            .iter()
            .find(|c| tma_case_of(c) == *case)
            .unwrap_or_else(|| panic!("{} was never measured", case.label()));
        let l = case.launch();
        assert_eq!(
            (l.x0, l.y0, l.global_rows, l.global_row_bytes),
            (
                c["x0"].as_u64().unwrap() as u32,
                c["y0"].as_u64().unwrap() as u32,
                c["global_rows"].as_u64().unwrap() as u32,
                c["global_row_bytes"].as_u64().unwrap() as u32
            ),
            "{}",
            case.label()
        );
        if c["encode_status"].as_i64().unwrap() != 0 {
            hopper_check::tma_compare(case, Err("CUDA_ERROR_INVALID_VALUE")).unwrap();
            rejected += 1;
            continue;
        }
        assert_eq!(c["stray_bytes"], 0);
        let got = tma_readback(case, c);
        hopper_check::tma_compare(case, Ok(&got))
            .unwrap_or_else(|e| panic!("{}: {e}", case.label()));
        // The global image holds what the chunk tags say.
        let img = case.global_image();
        assert_eq!(img.len() as u32, l.global_rows * l.global_row_bytes);
        placed += 1;
    }
    assert!(placed >= 100 && rejected >= 7, "{placed} {rejected}");
    // Two chunks swapped, a padding byte written, a rejection the model does not make.
    let case = cases
        .iter()
        .find(|c| c.swizzle == TmaSwizzle::B128 && c.rows == 64 && c.elem_bytes == 2 && !c.oob)
        .unwrap();
    let c = measured.iter().find(|c| tma_case_of(c) == *case).unwrap();
    let mut got = tma_readback(case, c);
    let d = case.dst as usize;
    got.copy_within(d..d + 16, d + 16 * 9);
    assert!(hopper_check::tma_compare(case, Ok(&got)).is_err());
    let mut got = tma_readback(case, c);
    let last = got.len() - 1;
    got[last] = 0;
    assert!(hopper_check::tma_compare(case, Ok(&got)).is_err());
    assert!(hopper_check::tma_compare(case, Err("CUDA_ERROR_INVALID_VALUE")).is_err());
}

fn fnv1a64(vals: &[f32]) -> String {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for v in vals {
        for b in (*v as i32).to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

#[test]
fn wgmma_cases_are_the_measured_ones_and_compare_register_by_register() {
    let data = load("h200_wgmma_2026-11-30.json");
    let measured = data["cases"].as_array().unwrap();
    let cases = hopper_check::wgmma_cases();
    assert_eq!(cases.len(), 43);
    let mut with_d = 0;
    for case in &cases {
        let m = measured
            .iter()
            .find(|m| m["name"] == case.name)
            .unwrap_or_else(|| panic!("{} not measured", case.name));
        let inp = case.inputs(WgmmaFill::Small).unwrap();
        assert_eq!(inp.kernel, m["kernel"].as_str().unwrap(), "{}", case.name);
        // The descriptors the H200 ran are the ones the simulator builds (A's unused with A
        // from registers: 0 in both).
        let ran: Vec<u64> = m["descriptors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| u64::from_str_radix(h.as_str().unwrap(), 16).unwrap())
            .collect();
        assert_eq!(inp.desc, ran, "{}", case.name);
        let sim = case.simulate(&inp).unwrap();
        let reference = case.reference(&inp);
        assert_eq!(sim, reference, "{}", case.name);
        // The same inputs as the H200 runs: the result's hash is the measured one.
        assert_eq!(
            fnv1a64(&sim),
            m["d_fnv1a64"].as_str().unwrap(),
            "{}",
            case.name
        );
        if let Some(d) = m["d"].as_array() {
            let hw: Vec<f32> = d.iter().map(|v| v.as_f64().unwrap() as f32).collect();
            hopper_check::wgmma_compare(case.n, &hw, &sim, &reference).unwrap();
            let mut planted = hw.clone();
            planted.swap(0, 1 + (case.n as usize / 2));
            if planted != hw {
                assert!(hopper_check::wgmma_compare(case.n, &planted, &sim, &reference).is_err());
            }
            with_d += 1;
        }
        // Unique values: every register names its element of D.
        let inp = case.inputs(WgmmaFill::Unique).unwrap();
        let reference = case.reference(&inp);
        for (i, v) in reference.iter().enumerate() {
            let (t, r) = (
                (i / (case.n as usize / 2)) as u32,
                (i % (case.n as usize / 2)) as u32,
            );
            let (row, col) = wgmma::acc_fragment(t, r);
            assert_eq!(
                *v,
                (row * case.n + col + 1) as f32,
                "{} t{t} r{r}",
                case.name
            );
        }
        assert_eq!(case.simulate(&inp).unwrap(), reference, "{}", case.name);
    }
    assert!(with_d >= 8);
    // A short output is an error, not a pass.
    assert!(hopper_check::wgmma_compare(8, &[0.0; 10], &[0.0; 10], &[0.0; 10]).is_err());
}
