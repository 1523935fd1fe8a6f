//! Issue 28's `mma.sync` forms and generic shared addresses against the H200
//! (`tests/data/ptx_mma/`, made by `scripts/research/mma_fixtures/`, format in its README).
//!
//! * every fixture (one warp, one `mma.sync` form each) simulated by `tilelab ptx` gives the
//!   per-CTA counters ncu measured (HMMA, IMMA, LDSM, STSM, LDS, STS, shared wavefronts and
//!   conflicts), and the D registers of the simulated mma equal, bit for bit, what the device
//!   stored (`device_output`);
//! * the device's own D equals a plain-loop reference through the PTX ISA fragment tables
//!   (`reference_check`, computed by `scripts/research/mma_fixtures/check.py` when the data was collected);
//! * `ldsm_generic`: ldmatrix/stmatrix without `.shared` on `cvta.shared` addresses load and
//!   store what the device did; generic ld/st wavefronts count in the shared totals as on the H200;
//! * the refusals: the forms the PTX ISA has not, targets below a form's oldest, wrong register
//!   counts, a generic address outside the shared window.

use std::path::Path;
use std::process::Command;

use crate::common::skip;

use serde_json::Value;
use tilelab::ptx::{self, Launch, Observer, TraceEvent, TraceKind};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx_mma");

/// Every event of warp 0: (pc, D registers of an mma or loaded registers of a shared access).
#[derive(Default)]
struct Events(Vec<(u32, bool, [[u32; 4]; 32])>);

impl Observer for Events {
    fn event(&mut self, ev: &TraceEvent<'_>) {
        match ev.kind {
            TraceKind::Mma(d) => self.0.push((ev.pc, true, *d)),
            TraceKind::Shared(s) => self.0.push((ev.pc, false, s.regs)),
            _ => {}
        }
    }
}

fn launch() -> Launch {
    Launch {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        cta: [0, 0, 0],
        args: vec![],
        tensor_maps: vec![],
        dynamic_smem: Some(0),
        max_instructions: tilelab::ptx::machine::DEFAULT_MAX_INSTRUCTIONS,
        cluster: None,
    }
}

fn fixtures() -> Vec<Value> {
    let mut files: Vec<_> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

/// The device's word `w` of `lane`.
fn word(f: &Value, lane: usize, w: usize) -> u32 {
    f["device_output"]["words"][lane][w].as_u64().unwrap() as u32
}

#[test]
fn every_mma_form_fixture_equals_the_h200() {
    let src = std::fs::read_to_string(Path::new(DIR).join("mma_forms.ptx")).unwrap();
    let fs = fixtures();
    assert_eq!(fs.len(), 20, "fixtures in {DIR}");
    let mut bad = Vec::new();
    let mut mma_checked = 0;
    for f in &fs {
        let name = f["fixture"].as_str().unwrap();
        assert_eq!(f["ptx"], "mma_forms.ptx", "{name}");
        assert_eq!(f["launch"]["kernel"], name);
        // The device's D matched the ISA-table reference when the data was collected.
        assert_eq!(f["reference_check"]["mismatches"], 0, "{name}");
        let prog = ptx::report::load(&src, Some(name)).unwrap();
        let mut ev = Events::default();
        let r = ptx::report::simulate_program(
            &prog,
            &launch(),
            Some((0, &mut ev as &mut dyn Observer)),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        bad.extend(counter_disagreements(f, &r.totals));
        if name == "ldsm_generic" {
            check_generic(f, &ev, &mut bad);
            continue;
        }
        // The one mma: D registers, bit for bit, in every lane.
        let mmas: Vec<_> = ev.0.iter().filter(|e| e.1).collect();
        assert_eq!(mmas.len(), 1, "{name}");
        let d = &mmas[0].2;
        let ncd = if f["note"].as_str().unwrap().contains(".row.col.f16.") {
            2
        } else {
            4
        };
        for (lane, dl) in d.iter().enumerate() {
            for (i, &v) in dl.iter().enumerate().take(ncd) {
                if v != word(f, lane, 10 + i) {
                    bad.push(format!(
                        "{name}: lane {lane} d{i}: simulated {v:#010x}, H200 {:#010x}",
                        word(f, lane, 10 + i)
                    ));
                }
            }
        }
        mma_checked += 1;
    }
    assert_eq!(mma_checked, 19);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Every counter of `f` the simulated totals `t` do not equal, as "NAME: counter: simulated S,
/// measured M": HMMA (less HFMA2.MMA), IMMA, LDSM, STSM, LDS, STS (guard on), shared ld/st
/// wavefronts and bank conflicts.
fn counter_disagreements(f: &Value, t: &tilelab::ptx::report::Totals) -> Vec<String> {
    let name = f["fixture"].as_str().unwrap();
    let mut bad = Vec::new();
    let c = |k: &str| {
        f["counters"][k]
            .as_u64()
            .unwrap_or_else(|| panic!("{name}: no counter {k}"))
    };
    let want = [
        (
            "hmma - hfma2",
            t.sass.HMMA,
            c("smsp__inst_executed_pipe_tensor_op_hmma.sum")
                - c("smsp__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum"),
        ),
        (
            "imma",
            t.sass.IMMA,
            c("smsp__inst_executed_pipe_tensor_op_imma.sum"),
        ),
        ("ldsm", t.sass.LDSM, c("smsp__inst_executed_op_ldsm.sum")),
        (
            "stsm",
            t.sass.STSM,
            c("smsp__inst_executed_op_shared_stsm.sum"),
        ),
        (
            "lds",
            t.sass.LDS,
            c("smsp__inst_executed_op_shared_ld_pred_on_any.sum"),
        ),
        (
            "sts",
            t.sass.STS,
            c("smsp__inst_executed_op_shared_st_pred_on_any.sum"),
        ),
        (
            "ld wavefronts",
            t.shared_ld_wavefronts,
            c("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
        ),
        (
            "st wavefronts",
            t.shared_st_wavefronts,
            c("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
        ),
        (
            "ld conflicts",
            t.shared_ld_bank_conflicts,
            c("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
        ),
        (
            "st conflicts",
            t.shared_st_bank_conflicts,
            c("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
        ),
    ];
    for (k, s, m) in want {
        if s != m {
            bad.push(format!("{name}: {k}: simulated {s}, measured {m}"));
        }
    }
    bad
}

/// ldmatrix's registers, the stmatrix.trans result read back by generic `ld`, and the generic
/// `atom.add` sum, against the device's words.
fn check_generic(f: &Value, ev: &Events, bad: &mut Vec<String>) {
    let shared: Vec<_> = ev.0.iter().filter(|e| !e.1).collect();
    // ldmatrix (first load event with four registers), then stmatrix, then the generic loads.
    let ld = shared
        .iter()
        .find(|e| e.2[31][3] != 0)
        .expect("ldmatrix event");
    let loads: Vec<_> = shared
        .iter()
        .skip_while(|e| e.0 <= ld.0)
        .filter(|e| e.2.iter().any(|l| l[0] != 0))
        .collect();
    for lane in 0..32 {
        for r in 0..4 {
            if ld.2[lane][r] != word(f, lane, r) {
                bad.push(format!("ldsm_generic: lane {lane} ldmatrix r{r}"));
            }
        }
    }
    // Four row loads (words 4..7) and the sum (word 9).
    assert!(loads.len() >= 5, "{} generic loads traced", loads.len());
    for (i, e) in loads.iter().take(4).enumerate() {
        for lane in 0..32 {
            if e.2[lane][0] != word(f, lane, 4 + i) {
                bad.push(format!("ldsm_generic: lane {lane} stmatrix word {i}"));
            }
        }
    }
    assert_eq!(word(f, 0, 9), (1..=32).sum::<u32>());
    if loads[4].2[0][0] != word(f, 0, 9) {
        bad.push(format!(
            "ldsm_generic: atom sum simulated {}, H200 {}",
            loads[4].2[0][0],
            word(f, 0, 9)
        ));
    }
}

/// The H200 ignores a tf32 register's 13 low mantissa bits: with them used, the reference
/// differs in every element (measured: `tf32_k8_lowbits`); the simulator reads 19 bits.
#[test]
fn tf32_low_mantissa_bits_are_not_read() {
    let f: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(DIR).join("tf32_k8_lowbits.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(f["reference_check"]["mismatches"], 0);
    assert_eq!(f["reference_check"]["mismatches_if_low_bits_used"], 128);
    assert_ne!(word(&f, 0, 0) & 0x1fff, 0, "the inputs carry low bits");
}

/// The SASS the driver made of each form on the H200 (`sass_static`, cuobjdump) is the
/// mnemonic `MmaKind::sass` names, as many times as `sass_count(90)` says.
#[test]
fn the_h200_sass_is_the_table_s_mnemonic() {
    let src = std::fs::read_to_string(Path::new(DIR).join("mma_forms.ptx")).unwrap();
    for f in fixtures() {
        let name = f["fixture"].as_str().unwrap();
        if name == "ldsm_generic" {
            assert_eq!(f["sass_static"]["LDSM.16.M88.4"], 1);
            assert_eq!(f["sass_static"]["STSM.16.MT88.4"], 1);
            continue;
        }
        let prog = ptx::report::load(&src, Some(name)).unwrap();
        let kind = prog
            .insts
            .iter()
            .find_map(|i| match &i.op {
                ptx::decode::Op::Mma { kind, .. } => Some(*kind),
                _ => None,
            })
            .unwrap();
        let n = f["sass_static"][kind.sass()].as_u64();
        assert_eq!(
            n,
            Some(u64::from(kind.sass_count(90))),
            "{name}: {} in {}",
            kind.sass(),
            f["sass_static"]
        );
    }
}

fn decode_err(target: &str, inst: &str, regs: &str) -> String {
    let src = format!(
        ".version 9.0\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<40>;\n.reg .f32 %f<40>;\n{regs}\n{inst}\nret;\n}}\n"
    );
    match ptx::report::load(&src, None) {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

/// What the PTX ISA forbids is refused in one line naming the form (the same forms ptxas
/// 13.0.88 refuses: docs/log/2026-12-02-mma-forms.md), and what it allows decodes.
#[test]
fn the_forms_the_isa_has_not_are_refused() {
    let f4 = "{%f1, %f2, %f3, %f4}";
    let r4 = "{%r1, %r2, %r3, %r4}";
    let ok = [
        format!(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {f4}, {r4}, {{%r5, %r6}}, {f4};"
        ),
        format!(
            "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {f4}, {{%r1, %r2}}, {{%r5}}, {f4};"
        ),
        format!(
            "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {f4}, {{%r1, %r2}}, {{%r5}}, {f4};"
        ),
        format!(
            "mma.sync.aligned.m16n8k16.row.col.satfinite.s32.u8.s8.s32 {r4}, {{%r5, %r6}}, {{%r7}}, {r4};"
        ),
        format!(
            "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e4m3.f16 {{%r9, %r10}}, {r4}, {{%r5, %r6}}, {{%r9, %r10}};"
        ),
    ];
    for i in &ok {
        assert_eq!(decode_err("sm_90", i, ""), "", "{i}");
    }
    for (target, inst, want) in [
        (
            "sm_90",
            format!("mma.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {f4}, {r4}, {{%r5, %r6}}, {f4};"),
            "'mma.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32': mma.m16n8k16 does not take .tf32 A elements; the m16n8 forms are m16n8k16 with f16, bf16, s8 or u8;",
        ),
        (
            "sm_90",
            format!("mma.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f16 {{%r9, %r10}}, {r4}, {{%r5, %r6}}, {{%r9, %r10}};"),
            "bf16 inputs and f16 accumulators",
        ),
        (
            "sm_90",
            format!("mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32 {f4}, {r4}, {{%r5, %r6}}, {f4};"),
            ".satfinite with f16 inputs",
        ),
        (
            "sm_90",
            format!("mma.sync.aligned.m16n8k8.row.col.f32.f16.bf16.f32 {f4}, {{%r1, %r2}}, {{%r5}}, {f4};"),
            "f16 A and bf16 B",
        ),
        (
            "sm_90",
            format!("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16 {f4}, {r4}, {{%r5, %r6}}, {{%r9, %r10}};"),
            ".dtype .f32 and .ctype .f16 differ",
        ),
        (
            "sm_80",
            format!("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {f4}, {r4}, {{%r5, %r6}}, {f4};"),
            "'mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32' needs PTX ISA 8.4 or later and .target sm_89 or later; this module has .version 9.0 and .target sm_80 (PTX ISA 9.7.14.5.14 mma)",
        ),
        (
            "sm_75",
            format!("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {r4}, {{%r5, %r6}}, {{%r7}}, {r4};"),
            "needs PTX ISA 7.0 or later and .target sm_80 or later; this module has .version 9.0 and .target sm_75",
        ),
        (
            "sm_90",
            format!("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {f4}, {r4}, {{%r5}}, {f4};"),
            "takes 4 D, 4 A, 2 B and 4 C",
        ),
        (
            "sm_90",
            format!("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {r4}, {{%r1, %r2}}, {{%r5, %r6}}, {r4};"),
            "has 4 D, 2 A, 2 B and 4 C registers",
        ),
        (
            "sm_90",
            "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {%r1, %r2}, {%r3, %r4}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};".to_string(),
            "unsupported mma",
        ),
    ] {
        let e = decode_err(target, &inst, "");
        assert!(e.contains(want), "{inst}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // The m16n8k8 f16 form is older than m16n8k16 (sm_75).
    assert_eq!(
        decode_err(
            "sm_75",
            &format!(
                "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {f4}, {{%r1, %r2}}, {{%r5}}, {f4};"
            ),
            ""
        ),
        ""
    );
}

/// A generic address outside the shared window (here a global buffer's) is refused by
/// ldmatrix and stmatrix without `.shared`, naming the window; inside it, they run.
#[test]
fn generic_matrix_addresses_must_be_in_the_shared_window() {
    let body = |addr: &str, op: &str| {
        format!(
            ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.shared .align 16 .b8 s[512];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd1, %r1, 16;\n{addr}\nadd.s64 %rd3, %rd2, %rd1;\n{op}\nret;\n}}\n"
        )
    };
    let ld = "ldmatrix.sync.aligned.m8n8.x4.b16 {%r2, %r3, %r4, %r5}, [%rd3];";
    let st = "stmatrix.sync.aligned.m8n8.x4.b16 [%rd3], {%r2, %r3, %r4, %r5};";
    let shared = "mov.u64 %rd4, s;\ncvta.shared.u64 %rd2, %rd4;";
    let global = "ld.param.u64 %rd4, [p];\ncvta.to.global.u64 %rd2, %rd4;";
    for op in [ld, st] {
        let r = ptx::simulate(&body(shared, op), None, &launch())
            .unwrap_or_else(|e| panic!("{op}: {e}"));
        assert_eq!(r.totals.sass.LDSM + r.totals.sass.STSM, 1, "{op}");
        let e = ptx::simulate(&body(global, op), None, &launch())
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("is not in the shared window") && e.contains("cvta.shared"),
            "{op}: {e}"
        );
        // With .shared, the generic address is an out-of-range shared address, as before.
        let op_s = op.replace(".b16", ".shared.b16");
        let e = ptx::simulate(&body(shared, &op_s), None, &launch())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("outside shared memory"), "{op_s}: {e}");
    }
}

/// With ptxas and nvdisasm (`tilelab ptx --sass`): the dynamic SASS counts of every fixture
/// equal ncu's, the whole `smsp__inst_executed.sum` and the HMMA, IMMA, LDSM, STSM families
/// (an FP8 form's two HMMA.16816 and its F2FP conversions included). Skipped, and said so,
/// without the tools.
#[test]
fn with_ptxas_every_fixture_s_sass_counts_equal_the_h200() {
    if let Err(e) = tilelab::sass::CudaTools::find() {
        skip::skip(
            "with_ptxas_every_fixture_s_sass_counts_equal_the_h200",
            "cuda-tools",
            &e.to_string(),
        );
        return;
    }
    let ptx = Path::new(DIR).join("mma_forms.ptx");
    let mut bad = Vec::new();
    for f in fixtures() {
        let name = f["fixture"].as_str().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_tilelab"))
            .args(["ptx", ptx.to_str().unwrap(), "--kernel", name])
            .args(["--grid", "1,1,1", "--block", "32,1,1", "--sass", "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        let s = &r["totals"]["sass_executed"];
        let fam = |k: &str| s["families"][k].as_u64().unwrap_or(0);
        let c = |k: &str| f["counters"][k].as_u64().unwrap();
        for (k, sim, hw) in [
            (
                "inst_executed",
                s["inst_executed"].as_u64().unwrap(),
                c("smsp__inst_executed.sum"),
            ),
            (
                "HMMA",
                fam("HMMA"),
                c("smsp__inst_executed_pipe_tensor_op_hmma.sum"),
            ),
            (
                "IMMA",
                fam("IMMA"),
                c("smsp__inst_executed_pipe_tensor_op_imma.sum"),
            ),
            ("LDSM", fam("LDSM"), c("smsp__inst_executed_op_ldsm.sum")),
            (
                "STSM",
                fam("STSM"),
                c("smsp__inst_executed_op_shared_stsm.sum"),
            ),
        ] {
            if sim != hw {
                bad.push(format!("{name}: {k}: SASS {sim}, H200 {hw}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Triton 3.6's fp32 and int8 `tl.dot` (the kernels issue 28 says were refused), compiled for
/// sm_80 and sm_90 on a CPU and measured on the H200 (`tests/data/ptx_mma/triton/`): every
/// compared counter equals ncu (32 HMMA.1688.F32.TF32, 8 IMMA.16832.S8.S8.SAT).
#[test]
fn triton_tf32_and_int8_dots_equal_the_h200() {
    let dir = Path::new(DIR).join("triton");
    let mut n = 0;
    let mut bad = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let f: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let src = std::fs::read_to_string(dir.join(f["ptx"].as_str().unwrap())).unwrap();
        let mut l = launch();
        l.dynamic_smem = Some(f["launch"]["dynamic_smem_bytes"].as_u64().unwrap() as u32);
        let r = ptx::simulate(&src, None, &l).unwrap_or_else(|e| panic!("{p:?}: {e}"));
        let c = |k: &str| f["counters"][k].as_u64().unwrap();
        let mma = c("smsp__inst_executed_pipe_tensor_op_hmma.sum")
            + c("smsp__inst_executed_pipe_tensor_op_imma.sum");
        assert!(mma > 0, "{p:?}");
        bad.extend(counter_disagreements(&f, &r.totals));
        n += 1;
    }
    assert_eq!(n, 4);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// D4: the declared types of the mma registers against ptxas 13.0.88
/// (`tests/data/hopper_probes/ptxas_mma_regs.tsv`, written by
/// `scripts/research/hopper_fixtures/ptxas_mma_regs.sh`: each form with one operand's registers declared
/// .b32, .u32, .s32, .f32 or .f16x2). The decoder accepts what ptxas accepts and refuses the
/// rest in one line naming the register, its type, the operand and the types it takes.
#[test]
fn mma_register_types_are_the_ones_ptxas_accepts() {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/hopper_probes/ptxas_mma_regs.tsv"
    );
    let text = std::fs::read_to_string(p).unwrap();
    let mut n = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let [form, operand, ty, inst, ptxas] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("bad row {line}");
        };
        let src = format!(
            ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<16>;\n.reg .u32 %u<16>;\n.reg .s32 %s<16>;\n.reg .f32 %f<16>;\n.reg .f16x2 %h<16>;\n{inst}\nret;\n}}\n"
        );
        let got = match ptx::report::load(&src, None) {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        };
        let case = format!("{form} {operand} .{ty}: ptxas {ptxas}, tilelab '{got}'");
        if ptxas == "OK" {
            assert_eq!(got, "", "{case}");
        } else {
            assert!(
                got.starts_with("line 11: '%")
                    && got.contains(&format!(
                        "' is declared .{ty} but {operand} of 'mma.sync.aligned.{form}' holds ."
                    ))
                    && got.contains("elements: its registers are .")
                    && !got.contains('\n'),
                "{case}"
            );
        }
        n += 1;
    }
    assert_eq!(n, 140);
    // The user's case: .f32 registers for an f16 A.
    let e = decode_err(
        "sm_90",
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%f5, %f6, %f7, %f8}, {%r5, %r6}, {%f1, %f2, %f3, %f4};",
        "",
    );
    assert_eq!(
        e,
        "line 9: '%f5' is declared .f32 but A of 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32' holds .f16 elements: its registers are .b32 or .f16x2 (PTX ISA 9.7.14.5.14 mma; ptxas 13.0.88 refuses the others)"
    );
}

/// D7: an FP8 `mma.sync` on sm_89 is one `QMMA.16832` (on sm_90 two HMMA.16816; ptxas 13.0.88
/// and nvdisasm, `docs/log/2026-12-02-mma-forms.md`): the text summary of `tilelab ptx` shows
/// the QMMA class beside HMMA and IMMA, and `--json` counts it in `totals.sass.QMMA`.
#[test]
fn fp8_mma_on_sm89_is_shown_as_qmma() {
    let tmp = tempfile::tempdir().unwrap();
    let body = |target: &str| {
        format!(
            ".version 8.7\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<8>;\n.reg .f32 %f<8>;\nmma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {{%f1, %f2, %f3, %f4}}, {{%r1, %r2, %r3, %r4}}, {{%r5, %r6}}, {{%f1, %f2, %f3, %f4}};\nret;\n}}\n"
        )
    };
    for (target, summary) in [
        (
            "sm_89",
            "SASS: LDS 0 STS 0 LDSM 0 STSM 0 HMMA 0 LDGSTS 0 QMMA 1",
        ),
        ("sm_90", "SASS: LDS 0 STS 0 LDSM 0 STSM 0 HMMA 2 LDGSTS 0"),
    ] {
        let f = tmp.path().join(format!("{target}.ptx"));
        std::fs::write(&f, body(target)).unwrap();
        let args = ["ptx", f.to_str().unwrap(), "--grid", "1", "--block", "32"];
        let o = Command::new(env!("CARGO_BIN_EXE_tilelab"))
            .args(args)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.lines().any(|l| l == summary), "{target}: {text}");
        let o = Command::new(env!("CARGO_BIN_EXE_tilelab"))
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let q = &v["totals"]["sass"]["QMMA"];
        if target == "sm_89" {
            assert_eq!(q, 1);
        } else {
            assert!(q.is_null(), "{q}");
        }
    }
}
