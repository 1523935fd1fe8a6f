//! `tilelab verify`: run the same tilings on an NVIDIA GPU and check the simulator against the
//! hardware: fragments (register contents), wavefronts (Nsight Compute), SASS instruction names,
//! and timings.
//!
//! Exit codes: 0 every check passed; 1 a check disagreed ([`super::EXIT_MISMATCH`]); 2 bad
//! input; 3 no GPU ([`super::EXIT_NO_GPU`]: no driver, no device or no NVRTC — printed in one
//! line).
//!
//! `--json FILE` writes `{"device", "driver_version", "arch", "date", "checks": [{"group", "name",
//! "simulated", "measured", "pass", "skipped", "detail"}], "passed", "failed", "skipped"}`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::{Context, bail};
use cudarc::driver::{LaunchConfig, PushKernelArg};
use ndarray::Array2;
use serde::Serialize;
use tilelab::gpu::compare::{self, Check};
use tilelab::gpu::device::Gpu;
use tilelab::gpu::{self, fuzz, ncu, sass};
use tilelab::records::{self, Record};
use tilelab::sim::access::{self, Access};
use tilelab::sim::arch::Arch;
use tilelab::sim::bank::{WarpRequest, schedule};
use tilelab::sim::counts;
use tilelab::sim::instr::{Instruction, MatrixCount};
use tilelab::sim::layout::Layout;
use tilelab::sim::ldmatrix;
use tilelab::sim::mma::{self, MmaDtype, MmaShape};
use tilelab::sim::occupancy::{OccupancyInput, occupancy};
use tilelab::sim::program::{CtaProgram, FlashProblem, FlashStyle, FlashTiling, GemmTiling, Split};
use tilelab::sim::smem::SharedMemory;

use super::{EXIT_MISMATCH, EXIT_NO_GPU, out};

/// Arguments of `tilelab verify`.
#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// Run every check (the default).
    #[arg(long, conflicts_with = "lesson")]
    pub all: bool,
    /// Check one lesson's kernel (SASS, registers, its requests' wavefronts) beside the
    /// fragment, SASS-name and timing checks, instead of every lesson (see `tilelab lessons`).
    #[arg(long, value_name = "NAME")]
    pub lesson: Option<String>,
    /// Also measure N random warp requests (every instruction kind, partial masks, shared
    /// addresses) under ncu and compare each with the model.
    #[arg(long, default_value_t = 0)]
    pub fuzz: usize,
    /// Seed of the --fuzz requests.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also measure the records of this replay file (repeatable).
    #[arg(long)]
    pub records: Vec<PathBuf>,
    /// Write all results as JSON to FILE.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Where to write the wavefront records that disagree, in replay format.
    #[arg(long, default_value = "verify-mismatches.json")]
    pub mismatches: PathBuf,
    /// Write every measured wavefront record (replay format, with measured values) to FILE.
    #[arg(long)]
    pub save_measured: Option<PathBuf>,
    /// Do not run Nsight Compute (wavefronts are then only timed with clock64()).
    #[arg(long)]
    pub no_ncu: bool,
    /// Internal: launch the probe kernel once per record of FILE (run under ncu by verify).
    #[arg(long, hide = true)]
    pub probe_file: Option<PathBuf>,
    /// Internal: launch every GEMM lesson case once (run under ncu by verify).
    #[arg(long, hide = true)]
    pub probe_gemm: bool,
    /// Internal: launch every FlashAttention-2 variant once (run under ncu by verify).
    #[arg(long, hide = true)]
    pub probe_fa2: bool,
}

/// The FA2 lesson kernel's variants verify builds: (head dim, bm, causal).
const FA2_CASES: &[(u32, u32, bool)] = &[
    (64, 64, false),
    (64, 64, true),
    (128, 64, false),
    (128, 64, true),
    (128, 128, false),
    (128, 128, true),
];
/// The problem verify runs them on (small, so the CPU reference is quick).
const FA2_PROBLEM: FlashProblem = FlashProblem {
    batch: 1,
    heads: 2,
    seq: 512,
};

/// The simulator's program for FA2 case `i` and the swizzle layout the kernel uses.
fn fa2_case(i: usize) -> anyhow::Result<(FlashTiling, CtaProgram, String)> {
    let (d, bm, causal) = FA2_CASES[i];
    let t = FlashTiling {
        style: FlashStyle::Torch,
        bm,
        bn: 64,
        head_dim: d,
        warps: 4,
        causal,
    };
    // The kernel XORs each row's 16-byte chunks with row % 8: Swizzle<3,3,3> on 64-element rows,
    // Swizzle<3,3,4> on 128-element rows.
    let layout = if d == 64 {
        "swizzle:3,3,3"
    } else {
        "swizzle:3,3,4"
    };
    let cta = t.build(layout, Arch::Sm90)?;
    let name = format!("fa2 d{d} bm{bm} {}", if causal { "causal" } else { "full" });
    Ok((t, cta, name))
}

/// Compiles and runs FA2 case `i` on `FA2_PROBLEM` with N(0,1)-ish inputs; returns the compiled
/// kernel and the max relative error of O against an f64 CPU reference.
fn run_fa2(gpu: &Gpu, i: usize) -> anyhow::Result<(gpu::device::Compiled, f64)> {
    let (d, bm, causal) = FA2_CASES[i];
    let src = format!(
        "#define FA_D {d}\n#define FA_BM {bm}\n#define FA_CAUSAL {}\n{}",
        causal as u32,
        gpu::FA2_FWD_CU
    );
    let c = gpu.compile_with("fa2_fwd.cu", &src, &["-use_fast_math"])?;
    let f = gpu.function(&c, "fa2_fwd")?;
    let smem = (bm + 4 * 64) * d * 2;
    f.set_attribute(
        cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        smem as i32,
    )
    .map_err(derr)?;
    let p = FA2_PROBLEM;
    let (bh, sq, du) = ((p.batch * p.heads) as usize, p.seq as usize, d as usize);
    let n = bh * sq * du;
    let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ i as u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        ((seed >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0) as f32
    };
    let h = |x: f32| half::f16::from_f32(x);
    let (q, k, v): (Vec<half::f16>, Vec<half::f16>, Vec<half::f16>) = (
        (0..n).map(|_| h(rnd())).collect(),
        (0..n).map(|_| h(rnd())).collect(),
        (0..n).map(|_| h(rnd())).collect(),
    );
    let bits = |x: &Vec<half::f16>| x.iter().map(|v| v.to_bits()).collect::<Vec<u16>>();
    let s = &gpu.stream;
    let (dq, dk, dv) = (
        s.clone_htod(&bits(&q)).map_err(derr)?,
        s.clone_htod(&bits(&k)).map_err(derr)?,
        s.clone_htod(&bits(&v)).map_err(derr)?,
    );
    let mut dout = s.alloc_zeros::<u16>(n).map_err(derr)?;
    let (seq, scale) = (p.seq as i32, 1.0f32 / (d as f32).sqrt());
    let cfg = LaunchConfig {
        grid_dim: (p.seq / bm, bh as u32, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: smem,
    };
    // SAFETY: arguments match fa2_fwd(const u16*, const u16*, const u16*, u16*, int, float).
    unsafe {
        s.launch_builder(&f)
            .arg(&dq)
            .arg(&dk)
            .arg(&dv)
            .arg(&mut dout)
            .arg(&seq)
            .arg(&scale)
            .launch(cfg)
    }
    .map_err(derr)?;
    let out: Vec<u16> = s.clone_dtoh(&dout).map_err(derr)?;
    // f64 reference on the f16-rounded inputs.
    let (mut num, mut den) = (0f64, 0f64);
    for head in 0..bh {
        let at = |x: &Vec<half::f16>, r: usize, c: usize| x[(head * sq + r) * du + c].to_f64();
        for r in 0..sq {
            let keys = if causal { r + 1 } else { sq };
            let sc: Vec<f64> = (0..keys)
                .map(|j| (0..du).map(|c| at(&q, r, c) * at(&k, j, c)).sum::<f64>() * scale as f64)
                .collect();
            let mx = sc.iter().cloned().fold(f64::MIN, f64::max);
            let e: Vec<f64> = sc.iter().map(|x| (x - mx).exp()).collect();
            let z: f64 = e.iter().sum();
            for c in 0..du {
                let want = (0..keys).map(|j| e[j] * at(&v, j, c)).sum::<f64>() / z;
                let got = half::f16::from_bits(out[(head * sq + r) * du + c]).to_f64();
                num += (got - want) * (got - want);
                den += want * want;
            }
        }
    }
    Ok((c, (num / den).sqrt()))
}

/// The GEMM cases verify runs: seed 000's four cases (one warp K = 16; n warps; K != 16; n warps
/// with K != 16) and the 64x64x128 tile under three shared-memory layouts.
const GEMM_CASES: &[(u32, u32, u32, u32, Split, &str)] = &[
    (32, 32, 16, 1, Split::Rows, "row"),
    (32, 64, 16, 2, Split::Cols, "row"),
    (64, 64, 128, 1, Split::Rows, "row"),
    (64, 64, 128, 4, Split::Rows, "row"),
    (64, 64, 128, 4, Split::Rows, "pad:8"),
    (64, 64, 128, 4, Split::Rows, "swizzle:3,3,3"),
    (64, 64, 128, 1, Split::Rows, "pad:8"),
];
/// CTAs per GEMM launch.
const GEMM_GRID: u32 = 4;

fn gemm_case(i: usize) -> anyhow::Result<(GemmTiling, CtaProgram, String)> {
    let (m, n, k, warps, split, layout) = GEMM_CASES[i];
    let t = GemmTiling {
        m,
        n,
        k,
        warps,
        split,
    };
    let cta = t.build(layout, Arch::Sm90)?;
    let name = format!("gemm {m}x{n}x{k} {warps}w {split:?} {layout}");
    Ok((t, cta, name))
}

fn check(
    group: &str,
    name: impl Into<String>,
    sim: impl ToString,
    meas: impl ToString,
    pass: bool,
    detail: impl Into<String>,
) -> Check {
    Check {
        group: group.into(),
        name: name.into(),
        simulated: sim.to_string(),
        measured: meas.to_string(),
        pass,
        detail: detail.into(),
    }
}

/// Executed `ldmatrix` instructions (all forms), per launch.
const LDSM_EXECUTED: &str = "smsp__inst_executed_op_ldsm.sum";

/// Launches `verify PROBE_FLAG` under ncu and returns one row of metrics per launch of `kernel`
/// (the LDSM count and the metrics of [`kernel_wavefront_checks`]), or the skipped check that
/// says why there are none (`--no-ncu` or no ncu; fewer rows than the `cases` launched).
fn kernel_metrics(
    a: &VerifyArgs,
    group: &str,
    what: &str,
    kernel: &str,
    probe_flag: &str,
    cases: usize,
) -> anyhow::Result<Result<ncu::LaunchMetrics, Check>> {
    let skipped = |measured: String, why: &str| {
        Ok(Err(check(
            group,
            "dynamic counts (ncu)",
            "-",
            measured,
            true,
            why,
        )))
    };
    let Some(ncu_path) = (if a.no_ncu { None } else { ncu::find() }) else {
        return skipped("-".into(), "ncu not available");
    };
    let exe = std::env::current_exe()?;
    let spin = spinner(&format!("measuring the {what} kernels with Nsight Compute"));
    let (table, _) = ncu::profile(
        &ncu_path,
        &[
            LDSM_EXECUTED,
            ncu::WAVEFRONTS_LD,
            ncu::SASS_WAVEFRONTS_LDSM,
            ncu::BANK_CONFLICTS_LD,
        ],
        kernel,
        &exe,
        &["verify", probe_flag],
    )?;
    spin.finish_and_clear();
    if table.len() != cases {
        return skipped(
            format!("{} rows", table.len()),
            "ncu gave no per-launch metrics",
        );
    }
    Ok(Ok(table))
}

/// The two shared-load wavefront checks of a multi-warp kernel that loads shared memory only
/// with `ldmatrix` (`m`: one launch's ncu metrics; `sim_wf`, `sim_conflicts`: the simulator's
/// totals for the launch).
///
/// 1. Per instruction: the wavefronts Nsight Compute attributes to each executed `LDSM`
///    ([`ncu::SASS_WAVEFRONTS_LDSM`]) must equal the simulator's sum exactly.
/// 2. The L1TEX hardware counter ([`ncu::WAVEFRONTS_LD`]) must be explained, as
///    [`compare::kernel_wavefront_verdicts`] says.
fn kernel_wavefront_checks(
    group: &str,
    name: &str,
    m: &std::collections::BTreeMap<String, f64>,
    sim_wf: u64,
    sim_conflicts: u64,
    setup: &str,
) -> Vec<(Check, bool)> {
    let get = |k: &str| m.get(k).copied().map(|v| v as i64).unwrap_or(-1);
    let (sim_wf, sim_conflicts) = (sim_wf as i64, sim_conflicts as i64);
    let meas = compare::KernelWavefronts {
        per_instruction: get(ncu::SASS_WAVEFRONTS_LDSM),
        l1tex: get(ncu::WAVEFRONTS_LD),
        l1tex_conflicts: get(ncu::BANK_CONFLICTS_LD),
    };
    let (per_instr_ok, hw_ok) = compare::kernel_wavefront_verdicts(&meas, sim_wf, sim_conflicts);
    let (per_instr, hw, hw_conflicts) = (meas.per_instruction, meas.l1tex, meas.l1tex_conflicts);
    let surplus = hw - sim_wf;
    let hw_detail = if surplus == 0 {
        format!("{}, {setup}", ncu::WAVEFRONTS_LD)
    } else {
        format!(
            "{}, {setup}; surplus {surplus} ({:.2}%), ncu bank conflicts {hw_conflicts} vs {sim_conflicts} simulated: re-issued wavefronts (docs/wavefront-model.md)",
            ncu::WAVEFRONTS_LD,
            100.0 * surplus as f64 / sim_wf.max(1) as f64
        )
    };
    vec![
        (
            check(
                group,
                format!("{name}: shared-load wavefronts per instruction"),
                sim_wf,
                per_instr,
                per_instr_ok,
                format!("{}, {setup}", ncu::SASS_WAVEFRONTS_LDSM),
            ),
            false,
        ),
        (
            check(
                group,
                format!("{name}: shared-load wavefronts, L1TEX counter"),
                sim_wf,
                if surplus > 0 {
                    format!("{hw} (+{surplus})")
                } else {
                    hw.to_string()
                },
                hw_ok,
                hw_detail,
            ),
            false,
        ),
    ]
}

#[derive(Serialize)]
struct Summary<'a> {
    device: &'a str,
    driver_version: i32,
    arch: String,
    date: String,
    checks: &'a [Row],
    passed: usize,
    failed: usize,
    skipped: usize,
}

#[derive(Serialize, Clone)]
struct Row {
    #[serde(flatten)]
    check: Check,
    skipped: bool,
}

pub fn run(a: VerifyArgs) -> anyhow::Result<ExitCode> {
    if let Some(f) = &a.probe_file {
        return probe_mode(f);
    }
    if a.probe_fa2 {
        let gpu = Gpu::open()?;
        for i in 0..FA2_CASES.len() {
            run_fa2(&gpu, i)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if a.probe_gemm {
        let gpu = Gpu::open()?;
        for i in 0..GEMM_CASES.len() {
            run_gemm(&gpu, i)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut lessons = tilelab::lessons::builtin()?;
    if let Some(name) = &a.lesson {
        let one = tilelab::lessons::find(&lessons, name)?.clone();
        lessons = vec![one];
    }
    let extra: Vec<Vec<Record>> = a
        .records
        .iter()
        .map(|p| records::load(p))
        .collect::<anyhow::Result<_>>()?;
    let gpu = match Gpu::open() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("tilelab: verify: skipped, no GPU: {e}");
            return Ok(ExitCode::from(EXIT_NO_GPU));
        }
    };
    out::line(format_args!(
        "{} {} ({}), CUDA driver {}.{}",
        out::bold("device:"),
        gpu.name,
        gpu.arch(),
        gpu.driver_version / 1000,
        (gpu.driver_version % 1000) / 10
    ))?;
    let mut rows: Vec<Row> = Vec::new();
    let mut add = |c: Check, skipped: bool| rows.push(Row { check: c, skipped });

    let spin = spinner("compiling kernels with NVRTC");
    let probe = gpu.compile("smem_probe.cu", gpu::SMEM_PROBE_CU)?;
    let frags = gpu.compile("fragments.cu", gpu::FRAGMENTS_CU)?;
    let timing = gpu.compile("bank_time.cu", gpu::BANK_TIME_CU)?;
    spin.finish_and_clear();

    for c in fragment_checks(&gpu, &frags)? {
        add(c, false);
    }
    for (c, skipped) in sass_checks(&probe.cubin, &frags.cubin) {
        add(c, skipped);
    }
    let (lcs, lesson_records) = lesson_checks(&gpu, &lessons)?;
    for c in lcs {
        add(c, false);
    }
    // Wavefronts: the measured H200 file, the lessons' requests, extra files, fuzz.
    let mut recs: Vec<Record> =
        serde_json::from_str(records::MEASURED_H200_JSON).context("built-in measured records")?;
    for r in &mut recs {
        r.name = format!("h200.{}", r.name);
    }
    for e in extra {
        recs.extend(e);
    }
    recs.extend(lesson_records);
    recs.extend(fuzz::records(a.fuzz, a.seed));
    let (wcs, skipped) = wavefront_checks(&a, &recs)?;
    for c in wcs {
        add(c, skipped);
    }
    for (c, skipped) in gemm_checks(&gpu, &a)? {
        add(c, skipped);
    }
    for (c, skipped) in fa2_checks(&gpu, &a)? {
        add(c, skipped);
    }
    for c in time_checks(&gpu, &timing)? {
        add(c, false);
    }

    // Table.
    let w = rows
        .iter()
        .map(|r| r.check.name.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 80);
    out::line(format_args!(
        "\n{:<11} {:<w$} {:>12} {:>12}  verdict",
        "check", "name", "simulated", "measured"
    ))?;
    for r in &rows {
        let c = &r.check;
        let verdict = if r.skipped {
            out::paint("skipped", crossterm::style::Color::Yellow)
        } else if c.pass {
            out::paint("ok", crossterm::style::Color::Green)
        } else {
            out::paint("MISMATCH", crossterm::style::Color::Red)
        };
        let name: String = c.name.chars().take(w).collect();
        out::line(format_args!(
            "{:<11} {:<w$} {:>12} {:>12}  {}{}",
            c.group,
            name,
            c.simulated,
            c.measured,
            verdict,
            if c.detail.is_empty() || (c.pass && !r.skipped) {
                String::new()
            } else {
                format!("  ({})", c.detail)
            }
        ))?;
    }
    let failed = rows.iter().filter(|r| !r.skipped && !r.check.pass).count();
    let skipped = rows.iter().filter(|r| r.skipped).count();
    let passed = rows.len() - failed - skipped;
    out::line(format_args!(
        "\n{passed} passed, {failed} failed, {skipped} skipped"
    ))?;
    if let Some(p) = &a.json {
        let s = Summary {
            device: &gpu.name,
            driver_version: gpu.driver_version,
            arch: gpu.arch(),
            date: date_utc(),
            checks: &rows,
            passed,
            failed,
            skipped,
        };
        std::fs::write(p, serde_json::to_string_pretty(&s)?)
            .with_context(|| format!("cannot write '{}'", p.display()))?;
    }
    Ok(if failed > 0 {
        ExitCode::from(EXIT_MISMATCH)
    } else {
        ExitCode::SUCCESS
    })
}

fn date_utc() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn spinner(msg: &str) -> indicatif::ProgressBar {
    let p = indicatif::ProgressBar::new_spinner();
    p.set_message(msg.to_string());
    p.enable_steady_tick(Duration::from_millis(120));
    p
}

fn derr(e: cudarc::driver::DriverError) -> anyhow::Error {
    anyhow::anyhow!("CUDA driver error: {e:?}")
}

/// ldmatrix register dumps and mma results against the simulator.
fn fragment_checks(gpu: &Gpu, frags: &gpu::device::Compiled) -> anyhow::Result<Vec<Check>> {
    let mut out = Vec::new();
    let s = &gpu.stream;
    let ldsm = gpu.function(frags, "ldsm_dump")?;
    let smem_bytes = 8192u32;
    let smem = SharedMemory::with_b16_indices(smem_bytes);
    // Two address patterns: a 16x16 f16 tile (32-byte pitch), and scattered rows.
    let tile: [u32; 32] = std::array::from_fn(|l| {
        let (m, r) = (l as u32 / 8, l as u32 % 8);
        ((m % 2) * 8 + r) * 32 + (m / 2) * 16
    });
    let scattered: [u32; 32] = std::array::from_fn(|l| ((l as u32 * 37 + 11) % 512) * 16);
    for (kind, (num, trans)) in [
        (MatrixCount::X1, false),
        (MatrixCount::X2, false),
        (MatrixCount::X4, false),
        (MatrixCount::X1, true),
        (MatrixCount::X2, true),
        (MatrixCount::X4, true),
    ]
    .into_iter()
    .enumerate()
    {
        for (pname, offs) in [("16x16 tile", &tile), ("scattered rows", &scattered)] {
            let d_offs = s.clone_htod(offs).map_err(derr)?;
            let mut d_out = s.alloc_zeros::<u32>(128).map_err(derr)?;
            let (k, n) = (kind as i32, smem_bytes / 2);
            let cfg = one_warp(smem_bytes);
            // SAFETY: arguments match ldsm_dump(const unsigned*, int, unsigned, unsigned*).
            unsafe {
                s.launch_builder(&ldsm)
                    .arg(&d_offs)
                    .arg(&k)
                    .arg(&n)
                    .arg(&mut d_out)
                    .launch(cfg)
            }
            .map_err(derr)?;
            let hw: Vec<u32> = s.clone_dtoh(&d_out).map_err(derr)?;
            let hw: [[u32; 4]; 32] =
                std::array::from_fn(|l| std::array::from_fn(|r| hw[l * 4 + r]));
            let want = compare::ldmatrix_expected(&ldmatrix::fragment, num, trans, offs, &smem)?;
            let d = compare::diff_regs(num.count(), &want, &hw);
            let ins = Instruction::Ldmatrix { num, trans };
            out.push(check(
                "fragments",
                format!("{ins} {pname}"),
                format!("{} regs", 32 * num.count()),
                format!("{} equal", 32 * num.count() - d.len()),
                d.is_empty(),
                compare::describe_diffs(&d),
            ));
        }
    }
    // mma: small integers (exact) and N(0,1)-like inputs (tolerance 1e-5 absolute).
    let mmaf = gpu.function(frags, "mma_dump")?;
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut normal = move || {
        // Box-Muller on xorshift.
        let mut u = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ((seed >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let (u1, u2) = (u(), u());
        ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()) as f32
    };
    for (kind, (shape, dtype)) in [
        (MmaShape::M16N8K16, MmaDtype::F16),
        (MmaShape::M16N8K16, MmaDtype::Bf16),
        (MmaShape::M16N8K8, MmaDtype::F16),
    ]
    .into_iter()
    .enumerate()
    {
        for random in [false, true] {
            let dims = |op| {
                let (r, c) = shape.dims(op);
                (r as usize, c as usize)
            };
            let mut small = 0u32;
            let mut gen_val = |o: u32| -> f32 {
                if random {
                    normal()
                } else {
                    small = small.wrapping_mul(1_103_515_245).wrapping_add(12345 + o);
                    ((small >> 16) % 9) as f32 - 4.0
                }
            };
            let a = Array2::from_shape_simple_fn(dims(mma::Operand::A), || gen_val(0));
            let b = Array2::from_shape_simple_fn(dims(mma::Operand::B), || gen_val(1));
            let c = Array2::from_shape_simple_fn(dims(mma::Operand::C), || gen_val(2));
            let regs = mma::pack(shape, dtype, &a, &b, &c)?;
            let af: Vec<u32> = regs.a.iter().flatten().copied().collect();
            let bf: Vec<u32> = regs.b.iter().flatten().copied().collect();
            let cf: Vec<f32> = regs.c.iter().flatten().copied().collect();
            let (da, db, dc) = (
                s.clone_htod(&af).map_err(derr)?,
                s.clone_htod(&bf).map_err(derr)?,
                s.clone_htod(&cf).map_err(derr)?,
            );
            let mut dd = s.alloc_zeros::<f32>(128).map_err(derr)?;
            let k = kind as i32;
            let cfg = one_warp(0);
            // SAFETY: arguments match mma_dump(int, const unsigned*, const unsigned*, const float*, float*).
            unsafe {
                s.launch_builder(&mmaf)
                    .arg(&k)
                    .arg(&da)
                    .arg(&db)
                    .arg(&dc)
                    .arg(&mut dd)
                    .launch(cfg)
            }
            .map_err(derr)?;
            let d: Vec<f32> = s.clone_dtoh(&dd).map_err(derr)?;
            let d: [[f32; 4]; 32] = std::array::from_fn(|l| std::array::from_fn(|r| d[l * 4 + r]));
            let m = compare::mma_check(shape, dtype, &regs, &d);
            let (tol, what) = if random {
                (1e-5, "N(0,1) inputs, tol 1e-5")
            } else {
                (0.0, "small integers, exact")
            };
            out.push(check(
                "fragments",
                format!("{} {what}", shape.sass(dtype)),
                "A·B+C",
                format!("err {:.1e}", m.max_err_vs_reference),
                m.max_err_vs_reference <= tol && m.max_err_vs_sim <= tol.max(1e-6),
                format!(
                    "max |D_gpu - reference| = {:e}, max |D_gpu - D_sim| = {:e}",
                    m.max_err_vs_reference, m.max_err_vs_sim
                ),
            ));
        }
    }
    Ok(out)
}

fn find_tool(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from(format!("/usr/local/cuda/bin/{name}"))])
        .find(|p| p.is_file())
}

/// The SASS of the probe and fragment kernels holds exactly the mnemonics the simulator names.
fn sass_checks(probe_cubin: &[u8], frag_cubin: &[u8]) -> Vec<(Check, bool)> {
    let Some(tool) = find_tool("cuobjdump") else {
        return vec![(
            check(
                "sass",
                "cuobjdump -sass",
                "-",
                "-",
                true,
                "cuobjdump not found",
            ),
            true,
        )];
    };
    let mut rows = Vec::new();
    let (Ok(pl), Ok(fl)) = (
        sass_of(&tool, probe_cubin, "probe"),
        sass_of(&tool, frag_cubin, "frag"),
    ) else {
        return vec![(
            check(
                "sass",
                "cuobjdump -sass",
                "-",
                "-",
                false,
                "cuobjdump failed",
            ),
            false,
        )];
    };
    let get = |l: &std::collections::BTreeMap<String, std::collections::BTreeMap<String, u32>>,
               f: &str,
               m: &str| { l.get(f).and_then(|x| x.get(m)).copied().unwrap_or(0) };
    for name in fuzz::PROBE_KINDS {
        let m = Instruction::parse(name).expect("probe kinds parse").sass();
        let n = get(&pl, "smem_probe", m);
        rows.push((
            check(
                "sass",
                format!("smem_probe {name} -> {m}"),
                1,
                n,
                n == 1,
                "",
            ),
            false,
        ));
    }
    for (shape, dtype) in [
        (MmaShape::M16N8K16, MmaDtype::F16),
        (MmaShape::M16N8K16, MmaDtype::Bf16),
        (MmaShape::M16N8K8, MmaDtype::F16),
    ] {
        let m = shape.sass(dtype);
        let n = get(&fl, "mma_dump", m);
        rows.push((
            check(
                "sass",
                format!(
                    "mma_dump {} -> {m}",
                    shape.ptx(dtype).replace("mma.sync.aligned.", "")
                ),
                1,
                n,
                n == 1,
                "",
            ),
            false,
        ));
    }
    rows
}

/// Wavefronts of every record under ncu, compared with the model.
fn wavefront_checks(a: &VerifyArgs, recs: &[Record]) -> anyhow::Result<(Vec<Check>, bool)> {
    let ncu_path = if a.no_ncu { None } else { ncu::find() };
    let Some(ncu_path) = ncu_path else {
        let why = if a.no_ncu {
            "--no-ncu given"
        } else {
            "ncu not found on PATH or in /usr/local/cuda/bin"
        };
        return Ok((
            vec![check(
                "wavefronts",
                format!("{} records", recs.len()),
                "-",
                "-",
                true,
                format!("{why}; wavefronts not measured, see the timing checks (clock64)"),
            )],
            true,
        ));
    };
    let tmp = std::env::temp_dir().join(format!("tilelab-probe-{}.json", std::process::id()));
    std::fs::write(&tmp, serde_json::to_string(recs)?)?;
    let exe = std::env::current_exe().context("cannot find the tilelab executable")?;
    let spin = spinner(&format!(
        "measuring {} warp requests with Nsight Compute (one launch each)",
        recs.len()
    ));
    let (table, o) = ncu::profile(
        &ncu_path,
        &[ncu::WAVEFRONTS_LD, ncu::WAVEFRONTS_ST, ncu::BANK_CONFLICTS],
        "smem_probe",
        &exe,
        &[
            std::ffi::OsStr::new("verify"),
            std::ffi::OsStr::new("--probe-file"),
            tmp.as_os_str(),
        ],
    )
    .with_context(|| format!("cannot run {}", ncu_path.display()))?;
    spin.finish_and_clear();
    let _ = std::fs::remove_file(&tmp);
    let text = String::from_utf8_lossy(&o.stdout);
    if table.len() != recs.len() {
        let err = String::from_utf8_lossy(&o.stderr);
        let why = text
            .lines()
            .chain(err.lines())
            .find(|l| l.contains("ERR") || l.contains("rror"))
            .unwrap_or("no per-launch metrics in ncu's output");
        return Ok((
            vec![check(
                "wavefronts",
                format!("{} records", recs.len()),
                "-",
                format!("{} rows", table.len()),
                true,
                format!("ncu could not read counters: {why}; falling back to clock64 timing"),
            )],
            true,
        ));
    }
    let mut checks = Vec::new();
    let mut measured_all = Vec::new();
    let mut mismatches = Vec::new();
    let (mut ok, mut ok_conf) = (0, 0);
    for (i, r) in recs.iter().enumerate() {
        let m = &table[&(i as u64)];
        let wf = (m.get(ncu::WAVEFRONTS_LD).copied().unwrap_or(0.0)
            + m.get(ncu::WAVEFRONTS_ST).copied().unwrap_or(0.0)) as u32;
        let bc = m.get(ncu::BANK_CONFLICTS).copied().unwrap_or(0.0) as u32;
        let rep = schedule(&r.request()?);
        let mut mr = r.clone();
        mr.wavefronts = Some(wf);
        mr.bank_conflicts = Some(bc);
        let agree = rep.wavefront_count() == wf;
        ok += agree as usize;
        ok_conf += (agree && rep.bank_conflicts() == bc) as usize;
        if !agree || rep.bank_conflicts() != bc {
            mismatches.push(mr.clone());
        }
        // Per-record rows only for the built-in measured set's first few and every mismatch.
        if !agree {
            checks.push(check(
                "wavefronts",
                format!("{} {}", r.name, r.instruction),
                rep.wavefront_count(),
                wf,
                false,
                format!("bank conflicts sim {} / ncu {}", rep.bank_conflicts(), bc),
            ));
        }
        measured_all.push(mr);
    }
    checks.insert(
        0,
        check(
            "wavefronts",
            format!("{} warp requests under ncu", recs.len()),
            format!("{ok} agree"),
            format!("{} total", recs.len()),
            ok == recs.len(),
            "",
        ),
    );
    checks.insert(
        1,
        check(
            "wavefronts",
            "bank conflicts (ncu counter) where wavefronts agree",
            format!("{ok_conf} agree"),
            format!("{ok} total"),
            ok_conf == ok,
            "",
        ),
    );
    if !mismatches.is_empty() {
        std::fs::write(&a.mismatches, serde_json::to_string_pretty(&mismatches)?)
            .with_context(|| format!("cannot write '{}'", a.mismatches.display()))?;
        out::line(format_args!(
            "{} records disagree; written to {} (replay format)",
            mismatches.len(),
            a.mismatches.display()
        ))?;
    }
    if let Some(p) = &a.save_measured {
        std::fs::write(p, serde_json::to_string(&measured_all)?)
            .with_context(|| format!("cannot write '{}'", p.display()))?;
    }
    Ok((checks, false))
}

/// Internal mode: launch the probe once per record (under ncu).
fn probe_mode(file: &Path) -> anyhow::Result<ExitCode> {
    let recs = records::load(file)?;
    let gpu = Gpu::open()?;
    let probe = gpu.compile("smem_probe.cu", gpu::SMEM_PROBE_CU)?;
    let f = gpu.function(&probe, "smem_probe")?;
    let s = &gpu.stream;
    let mut d_out = s.alloc_zeros::<u32>(32).map_err(derr)?;
    for r in &recs {
        let req = r.request()?;
        let Some(kind) = fuzz::probe_kind(&r.instruction) else {
            bail!("record '{}': the probe has no {}", r.name, r.instruction)
        };
        let d_offs = s.clone_htod(&req.lane_byte_offsets).map_err(derr)?;
        let (mask, k) = (req.active_mask, kind as i32);
        let cfg = one_warp(fuzz::PROBE_SMEM_BYTES);
        // SAFETY: arguments match smem_probe(const unsigned*, unsigned, int, unsigned*).
        unsafe {
            s.launch_builder(&f)
                .arg(&d_offs)
                .arg(&mask)
                .arg(&k)
                .arg(&mut d_out)
                .launch(cfg)
        }
        .map_err(derr)?;
        s.synchronize().map_err(derr)?;
    }
    out::line(format_args!("launched {}", recs.len()))?;
    Ok(ExitCode::SUCCESS)
}

/// Cycles per request (clock64, one warp, many repeats) beside the simulated wavefronts.
fn time_checks(gpu: &Gpu, timing: &gpu::device::Compiled) -> anyhow::Result<Vec<Check>> {
    let f = gpu.function(timing, "bank_time")?;
    let s = &gpu.stream;
    let cases: Vec<(&str, &str, &str, u32, u32, &str)> = vec![
        // (group label, access, layout, rows, cols, dtype)
        ("K column read", "col", "row", 32, 64, "f32"),
        ("K column read", "col", "row+pad:1", 32, 64, "f32"),
        ("K column read", "col", "trans", 32, 64, "f32"),
        ("ldmatrix.x4 64x64 f16", "ldmatrix", "row", 64, 64, "f16"),
        ("ldmatrix.x4 64x64 f16", "ldmatrix", "pad:8", 64, 64, "f16"),
        (
            "ldmatrix.x4 64x64 f16",
            "ldmatrix",
            "swizzle:3,3,3",
            64,
            64,
            "f16",
        ),
    ];
    let mut measured: Vec<(String, String, u32, f64)> = Vec::new();
    for (label, acc, lay, r, c, dt) in cases {
        let eb = if dt == "f32" { 4 } else { 2 };
        let l = Layout::parse(lay, r, c, eb)?;
        let req: WarpRequest = access::requests(Access::parse(acc)?, &l)?.remove(0).request;
        let kind: i32 = match req.instruction {
            Instruction::Ld(w) if w.bytes() == 4 => 0,
            Instruction::Ld(w) if w.bytes() == 8 => 1,
            Instruction::Ld(_) => 2,
            Instruction::Ldmatrix { trans: false, .. } => 3,
            _ => 4,
        };
        let iters = 4096i32;
        let d_offs = s.clone_htod(&req.lane_byte_offsets).map_err(derr)?;
        let mut d_cyc = s.alloc_zeros::<u64>(1).map_err(derr)?;
        let mut d_sink = s.alloc_zeros::<u32>(1024).map_err(derr)?;
        // 32 warps on one SM: the shared-memory pipe is the bottleneck.
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1024, 1, 1),
            shared_mem_bytes: 48 * 1024,
        };
        let mut best = f64::MAX;
        for _ in 0..5 {
            // SAFETY: arguments match bank_time(const unsigned*, int, int, unsigned long long*, unsigned*).
            unsafe {
                s.launch_builder(&f)
                    .arg(&d_offs)
                    .arg(&kind)
                    .arg(&iters)
                    .arg(&mut d_cyc)
                    .arg(&mut d_sink)
                    .launch(cfg)
            }
            .map_err(derr)?;
            let cyc: Vec<u64> = s.clone_dtoh(&d_cyc).map_err(derr)?;
            best = best.min(cyc[0] as f64 / (32.0 * 8.0 * iters as f64));
        }
        measured.push((
            label.to_string(),
            lay.to_string(),
            schedule(&req).wavefront_count(),
            best,
        ));
    }
    // Within each group, more wavefronts must cost more cycles.
    let mut out = Vec::new();
    for (label, lay, wf, cyc) in &measured {
        let worse_ok = measured
            .iter()
            .filter(|(l2, _, w2, _)| l2 == label && w2 < wf)
            .all(|(_, _, _, c2)| c2 < cyc);
        out.push(check(
            "time",
            format!("{label}, layout {lay}"),
            format!("{wf} wavefronts"),
            format!("{cyc:.1} cycles"),
            worse_ok,
            "cycles per request should grow with wavefronts",
        ));
    }
    Ok(out)
}

/// Small-integer f16 inputs for the GEMM (exact in f32 accumulation): A is M×K, B is N×K.
fn gemm_inputs(t: &GemmTiling, seed: u32) -> (Vec<u16>, Vec<u16>, Vec<f32>) {
    let mut s = seed.wrapping_mul(2_654_435_761).max(1);
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (s % 5) as f32 - 2.0
    };
    let (m, n, k) = (t.m as usize, t.n as usize, t.k as usize);
    let a: Vec<f32> = (0..m * k).map(|_| next()).collect();
    let b: Vec<f32> = (0..n * k).map(|_| next()).collect();
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|kk| a[i * k + kk] * b[j * k + kk]).sum();
        }
    }
    let h = |v: &Vec<f32>| {
        v.iter()
            .map(|&x| half::f16::from_f32(x).to_bits())
            .collect()
    };
    (h(&a), h(&b), c)
}

/// Compiles and launches GEMM case `i` (grid [`GEMM_GRID`]); returns the compiled kernel, the
/// function and the result C of every CTA.
fn run_gemm(
    gpu: &Gpu,
    i: usize,
) -> anyhow::Result<(
    gpu::device::Compiled,
    cudarc::driver::CudaFunction,
    Vec<f32>,
    Vec<f32>,
)> {
    let (t, cta, _) = gemm_case(i)?;
    let src = gpu::gemm::source(&t, &cta)?;
    let c = gpu.compile("gemm_tile.cu", &src)?;
    let f = gpu.function(&c, "gemm_tile")?;
    let (a, b, want) = gemm_inputs(&t, i as u32 + 1);
    let s = &gpu.stream;
    let (da, db) = (
        s.clone_htod(&a).map_err(derr)?,
        s.clone_htod(&b).map_err(derr)?,
    );
    let mut dc = s
        .alloc_zeros::<f32>((t.m * t.n * GEMM_GRID) as usize)
        .map_err(derr)?;
    let cfg = LaunchConfig {
        grid_dim: (GEMM_GRID, 1, 1),
        block_dim: (t.warps * 32, 1, 1),
        shared_mem_bytes: cta.smem_bytes,
    };
    // SAFETY: arguments match gemm_tile(const unsigned short*, const unsigned short*, float*).
    unsafe {
        s.launch_builder(&f)
            .arg(&da)
            .arg(&db)
            .arg(&mut dc)
            .launch(cfg)
    }
    .map_err(derr)?;
    let got: Vec<f32> = s.clone_dtoh(&dc).map_err(derr)?;
    Ok((c, f, got, want))
}

/// The GEMM lesson kernel: results, SASS counts, occupancy, and (under ncu) dynamic LDSM counts
/// and shared-load wavefronts, each against the simulator's program.
fn gemm_checks(gpu: &Gpu, a: &VerifyArgs) -> anyhow::Result<Vec<(Check, bool)>> {
    let mut out = Vec::new();
    let cuobjdump = find_tool("cuobjdump");
    for i in 0..GEMM_CASES.len() {
        let (t, cta, name) = gemm_case(i)?;
        let gc = counts::gemm_counts(&t, &cta);
        let (compiled, f, got, want) = run_gemm(gpu, i)?;
        let bad = (0..GEMM_GRID as usize)
            .flat_map(|c| got[c * want.len()..(c + 1) * want.len()].iter().zip(&want))
            .filter(|(g, w)| g != w)
            .count();
        out.push((
            check(
                "gemm",
                format!("{name}: C = A·Bᵀ"),
                "exact",
                format!("{bad} wrong"),
                bad == 0,
                "small-integer inputs, every CTA",
            ),
            false,
        ));
        // SASS.
        match &cuobjdump {
            Some(tool) => {
                let l = sass_of(tool, &compiled.cubin, &format!("gemm{i}"))?;
                let get = |m: &str| {
                    l.get("gemm_tile")
                        .and_then(|x| x.get(m))
                        .copied()
                        .unwrap_or(0) as u64
                };
                let (ldsm, hmma) = (get("LDSM.16.M88.4"), get("HMMA.16816.F32"));
                out.push((
                    check(
                        "sass",
                        format!("{name}: LDSM.16.M88.4"),
                        gc.per_warp.ldsm,
                        ldsm,
                        ldsm == gc.per_warp.ldsm,
                        "static, per warp program",
                    ),
                    false,
                ));
                out.push((
                    check(
                        "sass",
                        format!("{name}: HMMA.16816.F32"),
                        gc.per_warp.hmma,
                        hmma,
                        hmma == gc.per_warp.hmma,
                        "static, per warp program",
                    ),
                    false,
                ));
            }
            None => out.push((
                check(
                    "sass",
                    name.to_string(),
                    "-",
                    "-",
                    true,
                    "cuobjdump not found",
                ),
                true,
            )),
        }
        // Occupancy: the driver's answer against the simulator's, for the kernel's registers.
        let regs = f
            .get_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)
            .map_err(derr)? as u32;
        let threads = t.warps * 32;
        let driver = f
            .occupancy_max_active_blocks_per_multiprocessor(threads, cta.smem_bytes as usize, None)
            .map_err(derr)?;
        let arch = Arch::from_cc(gpu.cc.0, gpu.cc.1).unwrap_or(Arch::Sm90);
        let sim = occupancy(&OccupancyInput {
            arch,
            threads_per_block: threads,
            smem_per_block_bytes: cta.smem_bytes,
            regs_per_thread: Some(regs),
        })?;
        out.push((
            check(
                "occupancy",
                format!(
                    "{name} ({threads} thr, {} B smem, {regs} regs)",
                    cta.smem_bytes
                ),
                format!("{} blocks/SM", sim.blocks_per_sm),
                format!("{driver} blocks/SM"),
                sim.blocks_per_sm == driver,
                "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            ),
            false,
        ));
    }
    // Dynamic counts under ncu.
    let ldsm_metric = LDSM_EXECUTED;
    let table = match kernel_metrics(
        a,
        "gemm",
        "GEMM",
        "gemm_tile",
        "--probe-gemm",
        GEMM_CASES.len(),
    )? {
        Ok(t) => t,
        Err(skip) => {
            out.push((skip, true));
            return Ok(out);
        }
    };
    for i in 0..GEMM_CASES.len() {
        let (t, cta, name) = gemm_case(i)?;
        let gc = counts::gemm_counts(&t, &cta);
        let banks = counts::bank_summary(&cta, &[1]);
        let m = &table[&(i as u64)];
        let ldsm = m.get(ldsm_metric).copied().unwrap_or(-1.0) as i64;
        let want_ldsm = (gc.per_cta.ldsm * GEMM_GRID as u64) as i64;
        out.push((
            check(
                "gemm",
                format!("{name}: LDSM executed"),
                want_ldsm,
                ldsm,
                ldsm == want_ldsm,
                format!("{ldsm_metric}, {GEMM_GRID} CTAs"),
            ),
            false,
        ));
        out.extend(kernel_wavefront_checks(
            "gemm",
            &name,
            m,
            banks.total.wavefronts * GEMM_GRID as u64,
            banks.total.conflicts * GEMM_GRID as u64,
            &format!("{GEMM_GRID} CTAs"),
        ));
    }
    Ok(out)
}

/// Every lesson kernel: its SASS holds the shared-memory and tensor-core instructions of its steps,
/// and after every load step each lane's registers hold what the simulator says (shared memory
/// filled with b16 indices, so each value names its address). Returns the checks and one replay
/// record per (step, layout) so the wavefront checks measure the lessons' own requests.
fn lesson_checks(
    gpu: &Gpu,
    lessons: &[tilelab::lessons::Lesson],
) -> anyhow::Result<(Vec<Check>, Vec<Record>)> {
    use tilelab::lessons::{StepOp, run};
    let mut out = Vec::new();
    let mut recs = Vec::new();
    let smem = SharedMemory::with_b16_indices(64 * 1024);
    let cuobjdump = find_tool("cuobjdump");
    for lesson in lessons {
        let src = tilelab::lessons::cuda::kernel_source(lesson);
        let fname = lesson.kernel_function();
        let compiled = gpu.compile(&lesson.kernel, &src)?;
        let f = gpu.function_named(&compiled, &fname)?;
        // SASS: every simulated step appears once in the kernel.
        if let Some(tool) = &cuobjdump {
            // The kernel holds one copy of the steps per variant (`variant == v` branches).
            let mut want: std::collections::BTreeMap<String, u32> =
                std::collections::BTreeMap::new();
            for v in 0..lesson.variants.len().max(1) {
                for (m, n) in run::sass_counts(lesson, v) {
                    *want.entry(m).or_default() += n;
                }
            }
            let l = sass_of(tool, &compiled.cubin, &fname)?;
            let got = l.get(&fname).cloned().unwrap_or_default();
            // Shared-memory and tensor-core instructions only; the prologue's index fill is
            // `STS.U16` (not a lesson step unless a step stores u16).
            let fill_is_extra = !want.contains_key("STS.U16");
            let relevant = |m: &str| {
                (m.starts_with("LDS") || m.starts_with("STS") || m.starts_with("HMMA"))
                    && !(fill_is_extra && m == "STS.U16")
            };
            let got_f: std::collections::BTreeMap<String, u32> =
                got.into_iter().filter(|(m, _)| relevant(m)).collect();
            let show = |m: &std::collections::BTreeMap<String, u32>| {
                m.iter()
                    .map(|(k, v)| format!("{v} {k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            out.push(check(
                "sass",
                format!("lesson {}: {}", lesson.name, show(&want)),
                want.values().sum::<u32>(),
                got_f.values().sum::<u32>(),
                got_f == want,
                format!("kernel has {}", show(&got_f)),
            ));
        }
        // Registers after each load step, under every layout.
        let (mut steps_ok, mut steps_all, mut first_bad) = (0, 0, String::new());
        for li in 0..lesson.layouts.len() {
            for (si, st) in lesson.steps.iter().enumerate() {
                let StepOp::Shared { instruction, .. } = st.op else {
                    continue;
                };
                let r = run::run_step(lesson, si, li)?;
                let Some(req) = r.request else { continue };
                recs.push(Record::from_request(
                    format!("lesson.{}.s{si}.{}", lesson.name, lesson.layouts[li]),
                    &req,
                ));
                if instruction.is_store() {
                    continue;
                }
                // A load after a store of its variant reads data the simulator does not model
                // (the stored values come from mma results): wavefronts are still measured.
                let vi = st
                    .variant
                    .as_ref()
                    .and_then(|v| lesson.variants.iter().position(|x| x == v))
                    .unwrap_or(0);
                let after_store = lesson.steps_of(vi).into_iter().take_while(|&k| k < si).any(|k| {
                    matches!(lesson.steps[k].op, StepOp::Shared { instruction, .. } if instruction.is_store())
                });
                if after_store {
                    continue;
                }
                let variant = st
                    .variant
                    .as_ref()
                    .and_then(|v| lesson.variants.iter().position(|x| x == v))
                    .unwrap_or(0) as i32;
                let s = &gpu.stream;
                let mut d_out = s.alloc_zeros::<u32>(128).map_err(derr)?;
                let (step_i, layout_i) = (si as i32, li as i32);
                let cfg = one_warp(0);
                // SAFETY: arguments match lesson_<name>(unsigned*, int, int, int).
                unsafe {
                    s.launch_builder(&f)
                        .arg(&mut d_out)
                        .arg(&step_i)
                        .arg(&layout_i)
                        .arg(&variant)
                        .launch(cfg)
                }
                .map_err(derr)?;
                let hw: Vec<u32> = s.clone_dtoh(&d_out).map_err(derr)?;
                let want = expected_load_regs(&req, &smem)?;
                steps_all += 1;
                let mut bad = None;
                for lane in 0..32 {
                    if let Some(w) = want[lane] {
                        for q in 0..4 {
                            if hw[lane * 4 + q] != w[q] && bad.is_none() {
                                bad = Some(format!(
                                    "step {si} layout {}: lane {lane} r{q} expected {:#x} got {:#x}",
                                    lesson.layouts[li],
                                    w[q],
                                    hw[lane * 4 + q]
                                ));
                            }
                        }
                    }
                }
                match bad {
                    None => steps_ok += 1,
                    Some(b) if first_bad.is_empty() => first_bad = b,
                    Some(_) => {}
                }
            }
        }
        if steps_all > 0 {
            out.push(check(
                "fragments",
                format!("lesson {}: registers after each load step", lesson.name),
                format!("{steps_all} runs"),
                format!("{steps_ok} equal"),
                steps_ok == steps_all,
                first_bad,
            ));
        }
    }
    Ok((out, recs))
}

/// What each lane's 4 output registers hold after a load step, with shared memory filled with
/// b16 indices; `None` for lanes that do not load.
fn expected_load_regs(
    req: &WarpRequest,
    smem: &SharedMemory,
) -> anyhow::Result<[Option<[u32; 4]>; 32]> {
    let mut want = [None; 32];
    let word = |addr: u32| -> anyhow::Result<u32> {
        Ok(smem.read_u16(addr)? as u32 | (smem.read_u16(addr + 2)? as u32) << 16)
    };
    match req.instruction {
        Instruction::Ldmatrix { num, trans } => {
            let res = ldmatrix::execute(num, trans, smem, req.lane_byte_offsets)?;
            for (lane, w) in want.iter_mut().enumerate() {
                *w = Some(res.regs[lane]);
            }
        }
        Instruction::Ld(w) => {
            for (lane, slot) in want.iter_mut().enumerate() {
                if req.active_mask >> lane & 1 == 0 {
                    continue;
                }
                let a = req.lane_byte_offsets[lane];
                let mut r = [0u32; 4];
                match w.bytes() {
                    1 => r[0] = (smem.read_u16(a & !1)? >> (8 * (a & 1))) as u32 & 0xff,
                    2 => r[0] = smem.read_u16(a)? as u32,
                    n => {
                        for (q, v) in r.iter_mut().enumerate().take((n / 4) as usize) {
                            *v = word(a + 4 * q as u32)?;
                        }
                    }
                }
                *slot = Some(r);
            }
        }
        Instruction::St(_) | Instruction::Stmatrix { .. } | Instruction::CpAsync(_) => {}
    }
    Ok(want)
}

/// Launch shape of the single-warp kernels: one block of 32 threads.
fn one_warp(shared_mem_bytes: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes,
    }
}

/// SASS mnemonic counts per function of a CUBIN, via `cuobjdump -sass` (`tool`).
fn sass_of(
    tool: &Path,
    cubin: &[u8],
    tag: &str,
) -> anyhow::Result<std::collections::BTreeMap<String, std::collections::BTreeMap<String, u32>>> {
    let p = std::env::temp_dir().join(format!("tilelab-{}-{tag}.cubin", std::process::id()));
    std::fs::write(&p, cubin)?;
    let o = Command::new(tool).arg("-sass").arg(&p).output();
    let _ = std::fs::remove_file(&p);
    let o = o.with_context(|| format!("cannot run {}", tool.display()))?;
    Ok(sass::count_mnemonics(&String::from_utf8_lossy(&o.stdout)))
}

/// The FlashAttention-2 lesson kernel: O against an f64 reference, its SASS LDSM / LDSM.T / HMMA
/// against the simulator's static counts of the same tiling, and (under ncu) executed LDSM and
/// shared-load wavefronts against the simulator's dynamic counts and bank model.
fn fa2_checks(gpu: &Gpu, a: &VerifyArgs) -> anyhow::Result<Vec<(Check, bool)>> {
    let mut out = Vec::new();
    let cuobjdump = find_tool("cuobjdump");
    for i in 0..FA2_CASES.len() {
        let (_, cta, name) = fa2_case(i)?;
        let (compiled, err) = run_fa2(gpu, i)?;
        out.push((
            check(
                "fa2",
                format!("{name}: O vs f64 reference"),
                "rel err < 2e-3",
                format!("{err:.1e}"),
                err < 2e-3,
                "B=1 H=2 S=512, inputs uniform(-2,2) rounded to f16",
            ),
            false,
        ));
        if let Some(tool) = &cuobjdump {
            let l = sass_of(tool, &compiled.cubin, &format!("fa2_{i}"))?;
            let get = |m: &str| {
                l.get("fa2_fwd")
                    .and_then(|x| x.get(m))
                    .copied()
                    .unwrap_or(0) as u64
            };
            let sc = counts::static_counts(&cta.warps[0]);
            let want = sc.per_kernel;
            for (m, w) in [
                ("LDSM.16.M88.4", want.ldsm),
                ("LDSM.16.MT88.4", want.ldsm_t),
                ("HMMA.16816.F32", want.hmma),
            ] {
                let g = get(m);
                out.push((
                    check(
                        "sass",
                        format!("{name}: {m}"),
                        w,
                        g,
                        g == w,
                        "static, all loop copies of the warp program",
                    ),
                    false,
                ));
            }
        }
    }
    // Dynamic counts under ncu.
    let ldsm_metric = LDSM_EXECUTED;
    let table = match kernel_metrics(
        a,
        "fa2",
        "FlashAttention-2",
        "fa2_fwd",
        "--probe-fa2",
        FA2_CASES.len(),
    )? {
        Ok(t) => t,
        Err(skip) => {
            out.push((skip, true));
            return Ok(out);
        }
    };
    for i in 0..FA2_CASES.len() {
        let (t, cta, name) = fa2_case(i)?;
        let dynamic = counts::dynamic_counts(&t, &FA2_PROBLEM, &cta.warps[0])?;
        let trips: Vec<u64> = dynamic
            .stages
            .iter()
            .map(|s| s.executions_per_line / t.warps as u64)
            .collect();
        let banks = counts::bank_summary(&cta, &trips);
        let m = &table[&(i as u64)];
        let ldsm = m.get(ldsm_metric).copied().unwrap_or(-1.0) as i64;
        let want_ldsm = (dynamic.total.ldsm + dynamic.total.ldsm_t) as i64;
        out.push((
            check(
                "fa2",
                format!("{name}: LDSM + LDSM.T executed"),
                want_ldsm,
                ldsm,
                ldsm == want_ldsm,
                format!("{ldsm_metric}, B=1 H=2 S=512"),
            ),
            false,
        ));
        out.extend(kernel_wavefront_checks(
            "fa2",
            &name,
            m,
            banks.total.wavefronts,
            banks.total.conflicts,
            "B=1 H=2 S=512",
        ));
    }
    Ok(out)
}
