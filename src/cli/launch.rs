//! `--launch FILE.json` for `tilelab ptx`, `tui --ptx` and `verify --ptx`: the launch file read
//! through the bounded reader ([`tilelab::textfile::MAX_LAUNCH_FILE_BYTES`]), parsed
//! ([`tilelab::ptx::launch_file`]) and merged with the flags given beside it (a flag wins; an
//! `--arg`/`--tensor-map` replaces the file's entry at the same parameter and byte offset).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use tilelab::ptx::Launch;
use tilelab::ptx::launch_file::{self, LaunchSpec};
use tilelab::ptx::params::TensorMapArg;

/// The launch flags as given on the command line (each `None`/empty when absent).
#[derive(Clone, Debug, Default)]
pub struct Flags {
    /// The PTX file (`tilelab ptx FILE`, `--ptx FILE`).
    pub ptx: Option<PathBuf>,
    /// `--kernel`.
    pub kernel: Option<String>,
    /// `--grid`.
    pub grid: Option<[u32; 3]>,
    /// `--block`.
    pub block: Option<[u32; 3]>,
    /// `--cta`.
    pub cta: Option<[u32; 3]>,
    /// `--cluster`.
    pub cluster: Option<[u32; 3]>,
    /// `--arg`s.
    pub args: Vec<(String, String)>,
    /// `--tensor-map`s.
    pub tensor_maps: Vec<TensorMapArg>,
    /// `--dynamic-smem`.
    pub dynamic_smem: Option<u32>,
    /// `--max-instructions`.
    pub max_instructions: Option<u64>,
}

/// One launch, from flags or a launch file and flags.
#[derive(Debug)]
pub struct Resolved {
    /// The PTX file (a launch file's, relative to the launch file's folder).
    pub ptx: PathBuf,
    /// Its text when a launch file was merged (its args need the kernel's parameters); `None`
    /// otherwise (read it with [`read_ptx`] when needed).
    pub src: Option<String>,
    /// `--kernel`.
    pub kernel: Option<String>,
    /// The launch.
    pub launch: Launch,
}

/// Reads a PTX module through the bounded reader.
///
/// # Errors
/// One line naming the file.
pub fn read_ptx(path: &Path) -> anyhow::Result<String> {
    tilelab::textfile::read_text(path, tilelab::textfile::MAX_PTX_BYTES, "PTX module")
        .with_context(|| format!("cannot read PTX file '{}'", tilelab::text::path(path)))
}

/// Reads and checks a launch file.
///
/// # Errors
/// One line naming the file: unreadable, too large, or the JSON path and what is wrong.
pub fn read_file(path: &Path) -> anyhow::Result<LaunchSpec> {
    let shown = tilelab::text::path(path);
    let text = tilelab::textfile::read_text(
        path,
        tilelab::textfile::MAX_LAUNCH_FILE_BYTES,
        "launch file",
    )
    .with_context(|| format!("cannot read launch file '{shown}'"))?;
    launch_file::parse(&text).map_err(|e| anyhow::anyhow!("launch file '{shown}': {e}"))
}

/// The launch `flags` describe, on top of launch file `file` when given. `cmd` names the
/// command in the error for a missing grid or block (`verify --ptx`).
///
/// # Errors
/// The launch file's, an unreadable PTX file, or no grid/block from either.
pub fn resolve(file: Option<&Path>, flags: Flags, cmd: &str) -> anyhow::Result<Resolved> {
    let spec = file.map(read_file).transpose()?;
    let ptx = match (&flags.ptx, &spec, file) {
        (Some(p), _, _) => p.clone(),
        (None, Some(s), Some(f)) => {
            let p = Path::new(&s.ptx);
            match f.parent() {
                Some(dir) if p.is_relative() => dir.join(p),
                _ => p.to_path_buf(),
            }
        }
        _ => bail!("{cmd} needs a PTX file (or --launch FILE.json)"),
    };
    let kernel = flags
        .kernel
        .clone()
        .or_else(|| spec.as_ref().and_then(|s| s.kernel.clone()));
    let need = |v: Option<[u32; 3]>, from: Option<[u32; 3]>, flag: &str| {
        v.or(from)
            .with_context(|| format!("{cmd} needs {flag} X[,Y,Z] (or --launch FILE.json)"))
    };
    let grid = need(flags.grid, spec.as_ref().map(|s| s.grid), "--grid")?;
    let block = need(flags.block, spec.as_ref().map(|s| s.block), "--block")?;
    let src = match &spec {
        Some(_) => Some(read_ptx(&ptx)?),
        None => None,
    };
    let (args, tensor_maps) = match (&spec, &src) {
        (Some(s), Some(src)) => match tilelab::ptx::report::load(src, kernel.as_deref()) {
            Ok(prog) => (
                launch_file::override_args(&prog, &s.args, &flags.args),
                launch_file::override_maps(&prog, &s.tensor_maps, &flags.tensor_maps),
            ),
            // The run loads it again and names the error.
            Err(_) => (
                s.args.iter().chain(&flags.args).cloned().collect(),
                s.tensor_maps
                    .iter()
                    .chain(&flags.tensor_maps)
                    .cloned()
                    .collect(),
            ),
        },
        _ => (flags.args.clone(), flags.tensor_maps.clone()),
    };
    let launch = Launch {
        grid,
        block,
        cta: flags
            .cta
            .or(spec.as_ref().map(|s| s.cta))
            .unwrap_or([0, 0, 0]),
        cluster: flags
            .cluster
            .or(spec.as_ref().map(|s| s.cluster))
            .unwrap_or([1, 1, 1]),
        args,
        tensor_maps,
        dynamic_smem: flags
            .dynamic_smem
            .or(spec.as_ref().and_then(|s| s.dynamic_smem)),
        max_instructions: flags
            .max_instructions
            .or(spec.as_ref().and_then(|s| s.max_instructions))
            .unwrap_or(tilelab::ptx::engine::DEFAULT_MAX_INSTRUCTIONS),
    };
    Ok(Resolved {
        ptx,
        src,
        kernel,
        launch,
    })
}
