//! `tilelab verify`: flags, the result table and the exit code. The checks themselves are
//! `tilelab::gpu::verify` (one file per group).
//!
//! Exit codes: 0 every check passed; 1 a check disagreed ([`super::EXIT_MISMATCH`]); 2 bad
//! input; 3 no usable GPU ([`super::EXIT_NO_GPU`]: no driver, no device, no NVRTC, or an
//! architecture the simulator does not know — printed in one line).
//!
//! `--json FILE` writes `{"device", "driver_version", "arch", "date", "checks": [{"group", "name",
//! "simulated", "measured", "verdict", "pass", "skipped", "detail"}], "passed", "failed",
//! "skipped", "warnings"}`.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::Context;
use serde::Serialize;
use tilelab::gpu::GpuError;
use tilelab::gpu::device::Gpu;
use tilelab::gpu::tools::Tools;
use tilelab::gpu::verify::{self, Check, Options, Plan, Probe, Progress, Tally, Verdict};

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

impl VerifyArgs {
    /// The probe this invocation asks for, if any.
    fn probe(&self) -> Option<Probe> {
        if let Some(f) = &self.probe_file {
            Some(Probe::Records(f.clone()))
        } else if self.probe_gemm {
            Some(Probe::Gemm)
        } else if self.probe_fa2 {
            Some(Probe::Fa2)
        } else {
            None
        }
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
        }
    }
}

#[derive(Serialize)]
struct Summary<'a> {
    device: &'a str,
    driver_version: i32,
    arch: String,
    date: String,
    checks: &'a [Check],
    #[serde(flatten)]
    tally: Tally,
}

/// An indicatif spinner on stderr for each long step; notes printed on stdout (the first
/// write error is kept for the end of the run).
#[derive(Default)]
struct Spinner {
    bar: Option<indicatif::ProgressBar>,
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
        if self.error.is_none() {
            self.error = out::line(format_args!("{line}")).err();
        }
    }
}

pub fn run(a: VerifyArgs) -> anyhow::Result<ExitCode> {
    if let Some(p) = a.probe() {
        out::line(format_args!("{}", verify::run_probe(&p)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    let plan = Plan::new(&a.options())?;
    let gpu = match Gpu::open() {
        Ok(g) => g,
        Err(e @ GpuError::UnknownArch { .. }) => {
            eprintln!("tilelab: verify: skipped, unsupported GPU: {e}");
            return Ok(ExitCode::from(EXIT_NO_GPU));
        }
        Err(e) => {
            eprintln!("tilelab: verify: skipped, no GPU: {e}");
            return Ok(ExitCode::from(EXIT_NO_GPU));
        }
    };
    out::line(format_args!(
        "{} {} ({}), CUDA driver {}",
        out::bold("device:"),
        gpu.name,
        gpu.arch,
        gpu.driver_version_string()
    ))?;
    let exe = std::env::current_exe().context("cannot find the tilelab executable")?;
    let mut spinner = Spinner::default();
    let mut ctx = verify::Context::new(&gpu, Tools::find(), exe, &mut spinner);
    let rows = verify::run(&plan, &mut ctx)?;
    if let Some(e) = spinner.error.take() {
        return Err(e);
    }
    print_table(&rows)?;
    let tally = Tally::of(&rows);
    out::line(format_args!("\n{tally}"))?;
    if let Some(p) = &a.json {
        let s = Summary {
            device: &gpu.name,
            driver_version: gpu.driver_version,
            arch: gpu.arch.to_string(),
            date: date_utc(),
            checks: &rows,
            tally,
        };
        std::fs::write(p, serde_json::to_string_pretty(&s)?)
            .with_context(|| format!("cannot write '{}'", p.display()))?;
    }
    Ok(if tally.failed > 0 {
        ExitCode::from(EXIT_MISMATCH)
    } else {
        ExitCode::SUCCESS
    })
}

/// The table: group, name (as wide as the longest, at most 80 characters), simulated, measured,
/// verdict, and the detail of every row that did not simply pass.
fn print_table(rows: &[Check]) -> anyhow::Result<()> {
    let w = rows
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 80);
    out::line(format_args!(
        "\n{:<11} {:<w$} {:>12} {:>12}  verdict",
        "check", "name", "simulated", "measured"
    ))?;
    for c in rows {
        let verdict = match c.verdict {
            Verdict::Skip => out::paint("skipped", crossterm::style::Color::Yellow),
            Verdict::Warn => out::paint("ok (warning)", crossterm::style::Color::Yellow),
            Verdict::Pass => out::paint("ok", crossterm::style::Color::Green),
            Verdict::Fail => out::paint("MISMATCH", crossterm::style::Color::Red),
        };
        let name: String = c.name.chars().take(w).collect();
        out::line(format_args!(
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
        ))?;
    }
    Ok(())
}

fn date_utc() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}
