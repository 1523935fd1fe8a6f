//! Nsight Compute: running a program under `ncu`. The metric names and the parser of its
//! `--csv` output are [`crate::measured::ncu_csv`]'s (pure), re-exported here for the checks.
//! [`super::tools::Tools`] finds `ncu`.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

pub use crate::measured::ncu_csv::{
    BANK_CONFLICTS, BANK_CONFLICTS_LD, LaunchMetrics, SASS_WAVEFRONTS_LDSM, WAVEFRONTS_LD,
    WAVEFRONTS_ST, parse_csv, version_of,
};

/// Which kernels ncu profiles: `-k regex:R`, matched against the function name
/// (`--kernel-name-base function`, ncu's default: the name without parameters or templates) or
/// the mangled name (`--kernel-name-base mangled`). Nsight Compute CLI, "Filter Profiled
/// Kernels": `--kernel-name-base {function, demangled, mangled}` sets what `--kernel-name`
/// matches; a C++ kernel's `.entry` name in PTX is its mangled name
/// (`_Z11gemm_deviceILi128EEv…`), which the function base never equals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelFilter {
    regex: String,
    mangled: bool,
}

impl KernelFilter {
    /// `-k regex:R` against the function name (ncu's default base).
    pub fn regex(r: &str) -> KernelFilter {
        KernelFilter {
            regex: r.to_string(),
            mangled: false,
        }
    }

    /// Exactly the `.entry` named `name` in PTX: `--kernel-name-base mangled -k regex:^NAME$`,
    /// the name's regex metacharacters escaped (a C name is its own mangled name).
    pub fn exact_mangled(name: &str) -> KernelFilter {
        let mut r = String::from("^");
        for c in name.chars() {
            if "\\.+*?()|[]{}^$".contains(c) {
                r.push('\\');
            }
            r.push(c);
        }
        r.push('$');
        KernelFilter {
            regex: r,
            mangled: true,
        }
    }

    /// ncu's arguments for the filter.
    pub fn args(&self) -> Vec<String> {
        let mut a = Vec::new();
        if self.mangled {
            a.extend(["--kernel-name-base".to_string(), "mangled".to_string()]);
        }
        a.extend(["-k".to_string(), format!("regex:{}", self.regex)]);
        a
    }
}

/// Runs `program args…` under `ncu --clock-control none --csv --metrics METRICS -k regex:KERNEL`
/// and returns the parsed per-launch table (see [`parse_csv`]) with ncu's raw output, whose
/// text explains an empty table (e.g. `ERR_NVGPUCTRPERM` when counters are not readable).
///
/// # Errors
/// `ncu` could not be started.
pub fn profile<S: AsRef<OsStr>>(
    ncu: &Path,
    metrics: &[&str],
    kernel_regex: &str,
    program: &Path,
    args: &[S],
) -> std::io::Result<(LaunchMetrics, Output)> {
    profile_filtered(
        ncu,
        metrics,
        &KernelFilter::regex(kernel_regex),
        program,
        args,
    )
}

/// [`profile`] with any [`KernelFilter`].
///
/// # Errors
/// `ncu` could not be started.
pub fn profile_filtered<S: AsRef<OsStr>>(
    ncu: &Path,
    metrics: &[&str],
    filter: &KernelFilter,
    program: &Path,
    args: &[S],
) -> std::io::Result<(LaunchMetrics, Output)> {
    let o = Command::new(ncu)
        .args(["--clock-control", "none", "--csv", "--metrics"])
        .arg(metrics.join(","))
        .args(filter.args())
        .arg(program)
        .args(args)
        .output()?;
    let table = parse_csv(&String::from_utf8_lossy(&o.stdout));
    Ok((table, o))
}

/// ncu's version (`ncu --version`'s `Version 2025.3.1.0 (build …)` line: `2025.3.1.0`), or
/// `unknown` with the reason.
pub fn version(ncu: &Path) -> String {
    match Command::new(ncu).arg("--version").output() {
        Ok(o) => version_of(&String::from_utf8_lossy(&o.stdout))
            .unwrap_or_else(|| "unknown (no Version line in ncu --version)".into()),
        Err(e) => format!("unknown (cannot run {}: {e})", ncu.display()),
    }
}

/// Why ncu's output holds no per-launch rows: its first error line (e.g. `==ERROR==
/// ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance
/// Counters …`), or its exit status.
pub fn why_no_rows(o: &Output) -> String {
    let text = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    text.lines()
        .chain(err.lines())
        .find(|l| l.contains("ERR") || l.contains("rror"))
        .map(|l| l.trim().to_string())
        .unwrap_or_else(|| format!("no per-launch metrics in ncu's output ({})", o.status))
}

/// Runs `program args…` under `ncu --clock-control none --section SourceCounters
/// --import-source yes -k regex:KERNEL -f -o REPORT` (REPORT: `report`, without the
/// `.ncu-rep` ncu adds; the kernel filter is [`KernelFilter::args`]), then prints the report's source page with
/// `ncu -i REPORT.ncu-rep --page source --csv --print-source cuda,sass`: per kernel, its source
/// file's lines with the counters of their SASS instructions (read by
/// [`crate::measured::source_view::parse_source_page`]). Returns the page (empty when there is no report)
/// and the profiling run's output, which explains an empty page. The report file is removed.
///
/// # Errors
/// `ncu` could not be started.
pub fn profile_source<S: AsRef<OsStr>>(
    ncu: &Path,
    filter: &KernelFilter,
    program: &Path,
    args: &[S],
    report: &Path,
) -> std::io::Result<(String, Output)> {
    let run = Command::new(ncu)
        .args(["--clock-control", "none", "--section", "SourceCounters"])
        .args(["--import-source", "yes", "-f", "-o"])
        .arg(report)
        .args(filter.args())
        .arg(program)
        .args(args)
        .output()?;
    let mut rep = report.as_os_str().to_owned();
    rep.push(".ncu-rep");
    let rep = std::path::PathBuf::from(rep);
    if !rep.is_file() {
        return Ok((String::new(), run));
    }
    let page = Command::new(ncu)
        .arg("-i")
        .arg(&rep)
        .args(["--page", "source", "--csv", "--print-source", "cuda,sass"])
        .output();
    let _ = std::fs::remove_file(&rep);
    Ok((String::from_utf8_lossy(&page?.stdout).into_owned(), run))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nvcc's mangled name of `gemm_device<128>` (`tests/data/ptx_params/struct_params.ptx`) is
    /// matched as the mangled base, exactly; a C name likewise; metacharacters are escaped.
    #[test]
    fn kernel_filters_match_mangled_names_exactly() {
        let f = KernelFilter::exact_mangled(
            "_Z11gemm_deviceILi128EEvN4cute5tupleIJiiiEEENS0_1CIXT_EEE3EpiPfPi",
        );
        assert_eq!(
            f.args(),
            [
                "--kernel-name-base",
                "mangled",
                "-k",
                "regex:^_Z11gemm_deviceILi128EEvN4cute5tupleIJiiiEEENS0_1CIXT_EEE3EpiPfPi$"
            ]
        );
        assert_eq!(
            KernelFilter::exact_mangled("a.b$c").args()[3],
            "regex:^a\\.b\\$c$"
        );
        assert_eq!(
            KernelFilter::regex("smem_probe").args(),
            ["-k", "regex:smem_probe"]
        );
    }
}
