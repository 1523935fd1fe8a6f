//! Finding and running ptxas and nvdisasm on the host (no GPU needed): the one place of the
//! crate that starts them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The pip command that installs both tools (CUDA 13.0, the H200 machine's version).
pub const PIP_HINT: &str = "pip install nvidia-cuda-nvcc==13.0.88 nvidia-cuda-nvdisasm";

/// ptxas and nvdisasm, where they were found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaTools {
    /// `ptxas`.
    pub ptxas: PathBuf,
    /// `nvdisasm`.
    pub nvdisasm: PathBuf,
    /// ptxas's version as reports name it: `ptxas 13.0.88` (from `ptxas --version`'s
    /// `…, V13.0.88` line).
    pub version: String,
    /// Which place of the search gave ptxas (`$TILELAB_CUDA_BIN`, `PATH`, `$CUDA_HOME/bin`,
    /// `python3's nvidia/cu13/bin`, `python3's triton/backends/nvidia/bin`).
    pub from: String,
}

/// The directories searched, in order, each with its name: `$TILELAB_CUDA_BIN` alone when it is
/// set and not empty (so an empty directory there means "no tools"); otherwise `PATH`'s directories,
/// `$CUDA_HOME/bin`, `/usr/local/cuda/bin` (the H200 machine's), then `nvidia/cu13/bin` and Triton's `backends/nvidia/bin` in the
/// site-packages of the `python3` on `PATH`.
pub fn search_dirs() -> Vec<(String, PathBuf)> {
    if let Some(d) = std::env::var_os("TILELAB_CUDA_BIN").filter(|d| !d.is_empty()) {
        return vec![("$TILELAB_CUDA_BIN".into(), PathBuf::from(d))];
    }
    let mut out: Vec<(String, PathBuf)> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|d| ("PATH".to_string(), d))
        .collect();
    if let Some(h) = std::env::var_os("CUDA_HOME") {
        out.push(("$CUDA_HOME/bin".into(), PathBuf::from(h).join("bin")));
    }
    out.push((
        "/usr/local/cuda/bin".into(),
        PathBuf::from("/usr/local/cuda/bin"),
    ));
    for site in python_site_packages() {
        out.push((
            "python3's nvidia/cu13/bin".into(),
            site.join("nvidia/cu13/bin"),
        ));
        out.push((
            "python3's triton/backends/nvidia/bin".into(),
            site.join("triton/backends/nvidia/bin"),
        ));
    }
    out
}

/// The `purelib` and `platlib` directories of the `python3` on `PATH` (none when it cannot be
/// run).
fn python_site_packages() -> Vec<PathBuf> {
    let Ok(o) = Command::new("python3")
        .args([
            "-c",
            "import sysconfig as s; p=s.get_paths(); print(p['purelib']); print(p['platlib'])",
        ])
        .output()
    else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = Vec::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        let p = PathBuf::from(l.trim());
        if !l.trim().is_empty() && !v.contains(&p) {
            v.push(p);
        }
    }
    v
}

/// `ptxas --version`'s `V13.0.88` as `ptxas 13.0.88`.
fn version(ptxas: &Path) -> anyhow::Result<String> {
    let s = run(ptxas, &["--version".into()])?;
    s.lines()
        .find_map(|l| l.rsplit_once(", V").map(|(_, v)| v.trim().to_string()))
        .map(|v| format!("ptxas {v}"))
        .with_context(|| {
            format!(
                "{} --version printed no ', V<version>' line",
                crate::text::path(ptxas)
            )
        })
}

impl CudaTools {
    /// Looks for ptxas and nvdisasm in [`search_dirs`] (each tool in the first directory that
    /// has it).
    ///
    /// # Errors
    /// Either tool is in none of the directories (the message lists where it looked and
    /// gives [`PIP_HINT`]), or `ptxas --version` cannot be read.
    pub fn find() -> anyhow::Result<CudaTools> {
        let dirs = search_dirs();
        let find = |name: &str| {
            dirs.iter()
                .map(|(from, d)| (from, d.join(name)))
                .find(|(_, p)| p.is_file())
        };
        // `$TILELAB_CUDA_BIN=/its/value`: the one place searched then, named with its value.
        let places = || {
            let mut names: Vec<String> = dirs
                .iter()
                .map(|(f, d)| {
                    if f == "$TILELAB_CUDA_BIN" {
                        format!("{f}={}", crate::text::path(d))
                    } else {
                        f.clone()
                    }
                })
                .collect();
            names.dedup();
            names.join(", ")
        };
        let Some((from, ptxas)) = find("ptxas") else {
            bail!("no ptxas in {} ({PIP_HINT})", places());
        };
        let Some((_, nvdisasm)) = find("nvdisasm") else {
            bail!("no nvdisasm in {} ({PIP_HINT})", places());
        };
        Ok(CudaTools {
            version: version(&ptxas)?,
            ptxas,
            nvdisasm,
            from: from.clone(),
        })
    }

    /// Compiles `ptx` for `arch` (`sm_90a`) with `ptxas -lineinfo` (and `-c` when
    /// `relocatable`) and returns
    /// `nvdisasm --print-line-info -c` of the CUBIN. The files live in a temporary directory
    /// removed afterwards.
    ///
    /// `-c` (a relocatable object, shared-memory symbols left to the linker) is how the driver
    /// compiles PTX given to `cuLinkAddData`: on the H200 (driver 580.159.04) the JIT's SASS of
    /// nine fixtures through cuLink equals `ptxas 13.0.88 -c`'s instruction for instruction but
    /// for the relocated symbol values, while a whole-program `ptxas` folds the shared window's
    /// address and schedules differently (docs/log/2026-12-02-sass-lines.md). PTX given to
    /// `cuModuleLoadDataEx` (FA3's) is compiled as a whole program.
    ///
    /// # Errors
    /// The temporary files cannot be written; either tool cannot be started or fails (its first
    /// error line is in the message).
    pub fn listing(&self, ptx: &str, arch: &str, relocatable: bool) -> anyhow::Result<String> {
        let dir = tempfile::Builder::new()
            .prefix("tilelab-sass")
            .tempdir()
            .context("cannot make a temporary directory")?;
        let src = dir.path().join(TEMP_PTX);
        let bin = dir.path().join("k.cubin");
        std::fs::write(&src, ptx).with_context(|| format!("cannot write '{}'", src.display()))?;
        let mut args: Vec<OsString> = vec![format!("-arch={arch}").into()];
        if relocatable {
            args.push("-c".into());
        }
        args.extend([
            "-lineinfo".into(),
            "-o".into(),
            bin.clone().into(),
            src.into(),
        ]);
        // The temporary file's path says nothing to the user: ptxas's messages name it
        // [`TEMP_PTX`] (`k.ptx, line N`), which [`super::of_ptx`] turns into the user's line.
        let tmp = crate::text::path(&dir.path().join(TEMP_PTX));
        run(&self.ptxas, &args)
            .map_err(|e| anyhow::anyhow!(e.to_string().replace(&tmp, TEMP_PTX)))?;
        run(
            &self.nvdisasm,
            &["--print-line-info".into(), "-c".into(), bin.into()],
        )
    }
}

/// The name of the PTX file [`CudaTools::listing`] gives ptxas (in a temporary directory).
pub const TEMP_PTX: &str = "k.ptx";

/// The most stderr lines a failing tool's message quotes (each in full, joined by ` / `).
pub const ERROR_LINES: usize = 8;

/// How long ptxas or nvdisasm may run on one kernel (seconds) before it is stopped: far above
/// the few seconds the largest fixture takes (FA3), so that only a tool that hangs meets it.
pub const TOOL_SECONDS: u64 = 120;

/// Runs `tool args`, its stdout as text; stopped after [`TOOL_SECONDS`].
fn run(tool: &Path, args: &[OsString]) -> anyhow::Result<String> {
    run_limited(tool, args, TOOL_SECONDS)
}

/// Runs `tool args` with no input, its stdout as text; stopped (killed) after `seconds`.
///
/// # Errors
/// The tool cannot be started, exits unsuccessfully (its stderr in the message, one line: the
/// first [`ERROR_LINES`] non-empty lines in full, joined by ` / `) or runs longer than
/// `seconds`.
fn run_limited(tool: &Path, args: &[OsString], seconds: u64) -> anyhow::Result<String> {
    use std::io::{Read, Seek};
    let name = crate::text::path(tool);
    let mut out = tempfile::tempfile().context("cannot make a temporary file")?;
    let mut err = tempfile::tempfile().context("cannot make a temporary file")?;
    let mut child = Command::new(tool)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone().context("cannot make a temporary file")?)
        .stderr(err.try_clone().context("cannot make a temporary file")?)
        .spawn()
        .with_context(|| format!("cannot run {name}"))?;
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child
            .try_wait()
            .with_context(|| format!("cannot wait for {name}"))?
        {
            break s;
        }
        if start.elapsed().as_secs() >= seconds {
            // Best effort: the child may have ended between the check and the kill.
            let _ = child.kill();
            let _ = child.wait();
            bail!("{name} ran longer than {seconds} s and was stopped");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let read = |f: &mut std::fs::File| -> anyhow::Result<String> {
        let mut v = Vec::new();
        f.rewind()?;
        f.read_to_end(&mut v)?;
        Ok(String::from_utf8_lossy(&v).into_owned())
    };
    if !status.success() {
        let err = read(&mut err)?;
        let lines: Vec<&str> = err
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let mut said: Vec<String> = lines
            .iter()
            .take(ERROR_LINES)
            .map(|l| crate::text::escape(l).into_owned())
            .collect();
        if lines.len() > ERROR_LINES {
            said.push(format!("… and {} more lines", lines.len() - ERROR_LINES));
        }
        bail!("{name} exited with {status}: {}", said.join(" / "));
    }
    read(&mut out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_that_hangs_is_stopped_at_the_limit() {
        let start = std::time::Instant::now();
        let e = run_limited(Path::new("/bin/sh"), &["-c".into(), "sleep 30".into()], 1)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "/bin/sh ran longer than 1 s and was stopped");
        assert!(start.elapsed().as_secs() < 10, "the child was not killed");
    }

    #[test]
    fn a_failing_tool_names_its_first_error_line() {
        let e = run_limited(
            Path::new("/bin/sh"),
            &[
                "-c".into(),
                "echo; echo 'ptxas fatal: bad' >&2; exit 3".into(),
            ],
            5,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("exit status: 3") && e.ends_with("ptxas fatal: bad"),
            "{e}"
        );
        let out = run_limited(Path::new("/bin/sh"), &["-c".into(), "echo hi".into()], 5).unwrap();
        assert_eq!(out, "hi\n");
    }
}
