//! `tilelab verify`: flags, the result table and the exit code. The checks themselves are
//! `tilelab::gpu::verify` (one file per group).
//!
//! Exit codes: 0 every check passed; 1 a check disagreed ([`super::EXIT_MISMATCH`]); 2 bad
//! input; 3 no usable GPU ([`super::EXIT_NO_GPU`]: no driver, no device, no NVRTC, or an
//! architecture the simulator does not know — printed in one line).
//!
//! `--json` prints the result (`tilelab::gpu::verify::Report`: `{"device", "driver_version",
//! "arch", "date", "checks": [{"group", "name", "simulated", "measured", "verdict", "pass",
//! "skipped", "detail"}], "passed", "failed", "skipped", "warnings"}`) on stdout instead of the
//! table, like every other `--json`; `--json-out FILE` writes it to FILE beside the table.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use tilelab::gpu::GpuError;
use tilelab::gpu::device::Gpu;
use tilelab::gpu::tools::Tools;
use tilelab::gpu::verify::{self, Check, Options, Plan, Probe, Progress, Report, Tally, Verdict};
use tilelab::measured::provenance;

use super::{EXIT_MISMATCH, EXIT_NO_GPU, out};

/// Arguments of `tilelab verify`.
#[derive(clap::Args, Debug)]
#[command(group(
    clap::ArgGroup::new("ptx_check")
        .args(["ptx", "launch"])
        .multiple(true)
        .conflicts_with_all(["all", "lesson", "fuzz", "records"])
))]
// The launch flags (but --max-instructions, as before) mean nothing without a PTX kernel.
#[command(group(
    clap::ArgGroup::new("ptx_launch_flags")
        .args(["kernel", "grid", "block", "args", "tensor_maps", "cluster", "dynamic_smem"])
        .multiple(true)
        .requires("ptx_check")
))]
pub struct VerifyArgs {
    /// Run every check (the default).
    #[arg(long, conflicts_with = "lesson")]
    pub all: bool,
    /// Check one lesson's kernel (SASS, registers, its requests' wavefronts) beside the
    /// fragment, SASS-name and timing checks, instead of every lesson (see `tilelab lessons`).
    #[arg(long, value_name = "NAME")]
    pub lesson: Option<String>,
    /// Also measure N random warp requests (every instruction kind, partial masks, shared
    /// addresses) under ncu and compare each with the model; N at most 100000 (each is one ncu
    /// launch).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = super::whole::<usize>("0..=100000 requests"))]
    pub fuzz: usize,
    /// Seed of the --fuzz requests.
    #[arg(long, default_value_t = 1, value_parser = super::whole_in::<u64>(0, u64::MAX))]
    pub seed: u64,
    /// Also measure the records of this replay file (repeatable).
    #[arg(long, value_name = "FILE")]
    pub records: Vec<PathBuf>,
    /// Print the result as JSON on stdout instead of the table (progress goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Also write the result as JSON to FILE (the same document as --json).
    #[arg(long, value_name = "FILE")]
    pub json_out: Option<PathBuf>,
    /// Where to write the wavefront records that disagree, in replay format.
    #[arg(long, value_name = "FILE", default_value = "verify-mismatches.json")]
    pub mismatches: PathBuf,
    /// Write every measured wavefront record (replay format, ncu's values) to FILE with its
    /// provenance (card, driver, CUDA, ncu, date, command, generator, commit) inside:
    /// {"provenance": {...}, "records": [...]}.
    #[arg(long, value_name = "FILE")]
    pub save_measured: Option<PathBuf>,
    /// Do not run Nsight Compute: its checks are SKIPPED (wavefronts are then only timed with
    /// clock64()).
    #[arg(long)]
    pub no_ncu: bool,
    /// Run only this group (repeatable): fragments, lessons, lesson-ptx, wavefronts, gemm, occupancy, fa2,
    /// timing, ptx, stmatrix, cp.async, tma, wgmma, fa3. Default: all.
    #[arg(long = "group", value_name = "NAME")]
    pub groups: Vec<String>,
    /// Random stmatrix and cp.async requests (each) that the Hopper groups measure beside their
    /// structured ones (seed --seed); N at most 100000.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = super::whole::<usize>("0..=100000 requests"))]
    pub hopper_fuzz: usize,
    /// Write what the Hopper groups measured to DIR (stmatrix.json, cpasync.json, tma.json,
    /// wgmma.json, each with its provenance).
    #[arg(long, value_name = "DIR")]
    pub save_hopper: Option<PathBuf>,
    /// Internal: launch the probe kernel once per record of FILE (run under ncu by verify).
    #[arg(long, hide = true)]
    pub probe_file: Option<PathBuf>,
    /// Internal: launch every GEMM lesson case once (run under ncu by verify).
    #[arg(long, hide = true)]
    pub probe_gemm: bool,
    /// Internal: launch every FlashAttention-2 variant once (run under ncu by verify).
    #[arg(long, hide = true)]
    pub probe_fa2: bool,
    /// Internal: launch stsm_count once per record of FILE (run under ncu by verify).
    #[arg(long, hide = true)]
    pub probe_stmatrix: Option<PathBuf>,
    /// Internal: launch cpasync_src_count once per record of FILE (run under ncu by verify).
    #[arg(long, hide = true)]
    pub probe_cpasync: Option<PathBuf>,
    /// Check a PTX kernel instead of the suite: simulate every CTA of the launch (as
    /// `tilelab ptx` does one), run the same launch on the GPU under Nsight Compute, and compare
    /// per counter and per PTX line. Takes the launch flags below.
    #[arg(long, value_name = "FILE")]
    pub ptx: Option<PathBuf>,
    /// --ptx: the launch, as for `tilelab ptx`; every CTA of the grid is simulated and
    /// measured, a cluster is launched as one (cuLaunchKernelEx with
    /// CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION), a tensor map is encoded with
    /// cuTensorMapEncodeTiled over its own zero-filled buffer (or @POINTER's).
    #[command(flatten)]
    pub launch: super::launch::LaunchArgs,
    /// --ptx: bytes of each pointer parameter's zero-filled device buffer (the kernel must stay
    /// inside it), a size: 1048576, 1024K, 1M, 1MiB.
    #[arg(long, value_name = "BYTES", value_parser = super::size_u64, default_value_t = verify::ptx_file::POINTER_BYTES)]
    pub pointer_bytes: u64,
    /// Internal: launch the --ptx kernel once (run under ncu by verify --ptx).
    #[arg(long, hide = true, requires = "ptx")]
    pub probe_ptx: bool,
    /// Internal: with --probe-ptx, give the PTX its own line table.
    #[arg(long, hide = true, requires = "probe_ptx")]
    pub line_info: bool,
}

impl VerifyArgs {
    /// The --ptx run the flags (and --launch's file) describe.
    ///
    /// # Errors
    /// The launch file's; --grid or --block missing.
    fn ptx_run(&self) -> anyhow::Result<verify::ptx_file::PtxRun> {
        let r = super::launch::resolve(
            &super::launch::Flags {
                ptx: self.ptx.clone(),
                cta: None,
                launch: self.launch.clone(),
            },
            "verify --ptx",
        )?;
        Ok(verify::ptx_file::PtxRun {
            file: r.ptx,
            kernel: r.kernel,
            grid: r.launch.grid,
            block: r.launch.block,
            args: r.launch.args,
            tensor_maps: r.launch.tensor_maps,
            dynamic_smem: r.launch.dynamic_smem,
            max_instructions: r.launch.max_instructions,
            cluster: r.launch.cluster,
            pointer_bytes: self.pointer_bytes,
        })
    }

    /// The probe this invocation asks for, if any.
    fn probe(&self) -> anyhow::Result<Option<Probe>> {
        if self.ptx.is_some() && self.probe_ptx {
            return Ok(Some(Probe::Ptx(self.ptx_run()?, self.line_info)));
        }
        Ok(if let Some(f) = &self.probe_file {
            Some(Probe::Records(f.clone()))
        } else if self.probe_gemm {
            Some(Probe::Gemm)
        } else if self.probe_fa2 {
            Some(Probe::Fa2)
        } else if let Some(f) = &self.probe_stmatrix {
            Some(Probe::Stmatrix(f.clone()))
        } else {
            self.probe_cpasync.clone().map(Probe::CpAsync)
        })
    }

    fn options(&self) -> Options {
        Options {
            lesson: self.lesson.clone(),
            fuzz: self.fuzz,
            seed: self.seed,
            records: self.records.clone(),
            no_ncu: self.no_ncu,
            mismatches: self.mismatches.clone(),
            save_measured: self.save_measured.clone(),
            groups: self.groups.clone(),
            hopper_fuzz: self.hopper_fuzz,
            save_hopper: self.save_hopper.clone(),
            // As typed, for the report; an argument that is not UTF-8 is shown escaped.
            command: std::env::args_os()
                .map(|a| tilelab::text::escape_os(&a))
                .map(|a| {
                    if a.contains(char::is_whitespace) {
                        format!("'{a}'")
                    } else {
                        a
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// An indicatif spinner on stderr for each long step; notes printed on stdout, or on stderr
/// when stdout carries JSON (the first write error is kept for the end of the run).
#[derive(Default)]
struct Spinner {
    bar: Option<indicatif::ProgressBar>,
    notes_to_stderr: bool,
    error: Option<anyhow::Error>,
}

impl Progress for Spinner {
    fn start(&mut self, what: &str) {
        let p = indicatif::ProgressBar::new_spinner();
        p.set_message(what.to_string());
        p.enable_steady_tick(Duration::from_millis(120));
        self.bar = Some(p);
    }
    fn finish(&mut self) {
        if let Some(p) = self.bar.take() {
            p.finish_and_clear();
        }
    }
    fn note(&mut self, line: &str) {
        if self.notes_to_stderr {
            out::note(format_args!("{line}"));
        } else if self.error.is_none() {
            self.error = out::line(format_args!("{line}")).err();
        }
    }
}

pub fn run(a: VerifyArgs) -> anyhow::Result<ExitCode> {
    if let Some(p) = a.probe()? {
        out::line(format_args!("{}", verify::run_probe(&p)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    if a.ptx.is_some() || a.launch.launch.is_some() {
        let run = a.ptx_run()?;
        return run_ptx(&a, &run);
    }
    // Names, counts and files first (milliseconds), then the GPU, then the plan: generating the
    // fuzz requests and simulating the lessons never runs on a machine without a GPU.
    let options = a.options();
    options.check()?;
    let gpu = match open_gpu(a.json) {
        Ok(g) => g,
        Err(code) => return Ok(code),
    };
    let plan = Plan::new(&options)?;
    if !a.json {
        out::line(format_args!(
            "{} {} ({}), CUDA driver {}",
            out::bold("device:"),
            gpu.name,
            gpu.arch,
            gpu.driver_version_string()
        ))?;
    }
    let exe = std::env::current_exe().context("cannot find the tilelab executable")?;
    let mut spinner = Spinner {
        notes_to_stderr: a.json,
        ..Spinner::default()
    };
    let mut ctx = verify::Context::new(&gpu, Tools::find(), exe, &mut spinner);
    let rows = verify::run(&plan, &mut ctx)?;
    if let Some(e) = spinner.error.take() {
        return Err(e);
    }
    finish(&a, &gpu, &rows)
}

/// Prints the rows (table, or JSON with --json), writes --json-out, and picks the exit code.
fn finish(a: &VerifyArgs, gpu: &Gpu, rows: &[Check]) -> anyhow::Result<ExitCode> {
    let report = Report {
        device: &gpu.name,
        driver_version: gpu.driver_version,
        arch: gpu.arch.to_string(),
        date: provenance::utc_now(),
        checks: rows,
        tally: Tally::of(rows),
    };
    if a.json {
        out::emit_json(&report)?;
    } else {
        out::emit(&table(rows))?;
    }
    if let Some(p) = &a.json_out {
        std::fs::write(p, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("cannot write '{}'", tilelab::text::path(p)))?;
    }
    Ok(if report.tally.failed > 0 {
        ExitCode::from(EXIT_MISMATCH)
    } else {
        ExitCode::SUCCESS
    })
}

/// The GPU, or the exit code after saying in one line why there is none; with `--json` also a
/// JSON document on stdout saying so: `{"gpu": null, "verdict": "skipped", "reason", "exit_code":
/// 3, "checks": []}` (`reason` is the stderr line's text after `skipped, `).
fn open_gpu(json: bool) -> Result<Gpu, ExitCode> {
    let reason = match Gpu::open() {
        Ok(g) => return Ok(g),
        Err(e @ GpuError::UnknownArch { .. }) => format!("unsupported GPU: {e}"),
        Err(e) => format!("no GPU: {e}"),
    };
    out::note(format_args!("tilelab: verify: skipped, {reason}"));
    if json {
        let doc = serde_json::json!({
            "gpu": null,
            "verdict": "skipped",
            "reason": reason,
            "exit_code": EXIT_NO_GPU,
            "checks": [],
        });
        if let Err(e) = out::emit_json(&doc) {
            super::error_line(&format!("{e:#}"));
            return Err(ExitCode::from(super::EXIT_ERROR));
        }
    }
    Err(ExitCode::from(EXIT_NO_GPU))
}

/// `verify --ptx`: the file read, the grid bounded and the kernel found (milliseconds); then
/// the GPU looked for; only then every CTA simulated (seconds to minutes), measured and
/// compared.
fn run_ptx(a: &VerifyArgs, run: &verify::ptx_file::PtxRun) -> anyhow::Result<ExitCode> {
    let mut spinner = Spinner {
        notes_to_stderr: a.json,
        ..Spinner::default()
    };
    let prepared = run.prepare()?;
    let gpu = match open_gpu(a.json) {
        Ok(g) => g,
        Err(code) => return Ok(code),
    };
    let sim = run.simulate_prepared(&prepared, &mut spinner)?;
    if !a.json {
        out::line(format_args!(
            "{} {} ({}), CUDA driver {}",
            out::bold("device:"),
            gpu.name,
            gpu.arch,
            gpu.driver_version_string()
        ))?;
        let d = |v: [u32; 3]| format!("({},{},{})", v[0], v[1], v[2]);
        out::line(format_args!(
            "{} {} in {}: grid {}, block {}; {} CTA(s) simulated, the launch measured",
            out::bold("kernel:"),
            tilelab::ptx::report::demangle(&sim.kernel),
            tilelab::text::path(&run.file),
            d(run.grid),
            d(run.block),
            sim.ctas
        ))?;
    }
    let exe = std::env::current_exe().context("cannot find the tilelab executable")?;
    let tools = Tools::find();
    let rows = if a.no_ncu || tools.ncu.is_none() {
        let why = if a.no_ncu {
            "--no-ncu given"
        } else {
            "ncu not found on PATH or in /usr/local/cuda/bin"
        };
        vec![Check::skipped("ptx", "counters (ncu)", "-", "-", why)]
    } else {
        let mut ctx = verify::Context::new(&gpu, tools, exe, &mut spinner);
        let m = verify::ptx_file::measure(&mut ctx, run, &sim.kernel)?;
        verify::ptx_file::checks(&sim, &m)
    };
    if let Some(e) = spinner.error.take() {
        return Err(e);
    }
    finish(a, &gpu, &rows)
}

/// The table: group, name (as wide as the longest, at most 80 characters), simulated, measured,
/// verdict (`ok`, `ok (warning)`, `MISMATCH`, `SKIPPED`), the detail of every row that did not
/// simply pass; then `N passed, N failed, N skipped` (and `, N warnings`).
fn table(rows: &[Check]) -> String {
    let w = rows
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 80);
    let mut s = String::new();
    outln!(
        s,
        "\n{:<11} {:<w$} {:>12} {:>12}  verdict",
        "check",
        "name",
        "simulated",
        "measured"
    );
    for c in rows {
        let verdict = match c.verdict {
            Verdict::Skip => out::paint("SKIPPED", tilelab::palette::replay(1)),
            Verdict::Warn => out::paint("ok (warning)", tilelab::palette::replay(1)),
            Verdict::Pass => out::paint("ok", out::GOOD),
            Verdict::Fail => out::paint("MISMATCH", out::BAD),
        };
        let name: String = c.name.chars().take(w).collect();
        outln!(
            s,
            "{:<11} {:<w$} {:>12} {:>12}  {}{}",
            c.group,
            name,
            c.simulated,
            c.measured,
            verdict,
            if c.detail.is_empty() || c.verdict == Verdict::Pass {
                String::new()
            } else {
                format!("  ({})", c.detail)
            }
        );
    }
    outln!(s, "\n{}", Tally::of(rows));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every verdict has its word, skipped rows say why, and the summary counts them apart.
    #[test]
    fn the_table_shows_skips_and_warnings() {
        let rows = [
            Check::new(
                "fragments",
                "ldmatrix.x4 16x16 tile",
                "128 regs",
                "128 equal",
                true,
                "all registers equal",
            ),
            Check::new(
                "gemm",
                "gemm 64x64x128 4w Rows pad:8: LDSM executed",
                640,
                600,
                false,
                "differs",
            ),
            Check::skipped("sass", "cuobjdump -sass", "-", "-", "cuobjdump not found"),
            Check::new(
                "gemm",
                "L1TEX",
                2560,
                "2620 (+60)",
                true,
                "above the measured bound",
            )
            .with_verdict(Verdict::Warn),
        ];
        let t = table(&rows);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[2].ends_with("  ok"), "{t}");
        assert!(lines[3].contains("MISMATCH  (differs)"), "{t}");
        assert!(lines[4].contains("SKIPPED  (cuobjdump not found)"), "{t}");
        assert!(
            lines[5].contains("ok (warning)  (above the measured bound)"),
            "{t}"
        );
        assert_eq!(
            lines.last(),
            Some(&"2 passed, 1 failed, 1 skipped, 1 warning"),
            "{t}"
        );
    }
}

#[cfg(test)]
mod ptx_tests {
    use clap::Parser;

    use super::super::{Cli, Command};
    use super::*;

    fn args(argv: &[&str]) -> VerifyArgs {
        match Cli::try_parse_from(argv).expect("parses").cmd {
            Command::Verify(a) => a,
            _ => panic!("not verify"),
        }
    }

    /// The child ncu runs gets exactly the launch the parent simulated.
    #[test]
    fn the_probe_flags_carry_the_same_launch() {
        let a = args(&[
            "tilelab",
            "verify",
            "--ptx",
            "k.ptx",
            "--kernel",
            "tl_fa_v1",
            "--grid",
            "2,3",
            "--block",
            "128",
            "--arg",
            "n_ctx=64",
            "--arg",
            "7=0.125",
            "--dynamic-smem",
            "32768",
            "--pointer-bytes",
            "4096",
        ]);
        let run = a.ptx_run().unwrap();
        assert_eq!((run.grid, run.block), ([2, 3, 1], [128, 1, 1]));
        for line_info in [false, true] {
            let child: Vec<String> = std::iter::once("tilelab".to_string())
                .chain(
                    run.child_args(line_info)
                        .iter()
                        .map(|s| s.to_string_lossy().into()),
                )
                .collect();
            let c = args(&child.iter().map(String::as_str).collect::<Vec<_>>());
            assert_eq!(c.probe().unwrap(), Some(Probe::Ptx(run.clone(), line_info)));
        }
    }

    #[test]
    fn ptx_flags_need_the_file_and_the_grid() {
        assert!(Cli::try_parse_from(["tilelab", "verify", "--grid", "1"]).is_err());
        let a = args(&["tilelab", "verify", "--ptx", "k.ptx", "--block", "32"]);
        let e = a.ptx_run().unwrap_err();
        assert_eq!(
            e.to_string(),
            "verify --ptx needs --grid X[,Y,Z] (or --launch FILE.json)"
        );
        assert!(
            Cli::try_parse_from(["tilelab", "verify", "--ptx", "k.ptx", "--lesson", "banks"])
                .is_err()
        );
    }
}
