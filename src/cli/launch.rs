//! `--launch FILE.json` for `tilelab ptx`, `tui --ptx` and `verify --ptx`: the launch file read
//! through the bounded reader ([`tilelab::textfile::MAX_LAUNCH_FILE_BYTES`]), parsed
//! ([`tilelab::ptx::launch_file`]) and merged with the flags given beside it (a flag wins; an
//! `--arg`/`--tensor-map` replaces the file's entry at the same parameter and byte offset).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use tilelab::ptx::Launch;
use tilelab::ptx::launch_file::{self, LaunchSpec};
use tilelab::ptx::params::TensorMapArg;

/// The launch flags of `tilelab ptx`, `tui --ptx` and `verify --ptx`, declared once and
/// flattened into each command (`#[command(flatten)]`); each `None`/empty when absent. The PTX
/// file (`ptx FILE`, `--ptx FILE`) and `--cta` (not in `verify`, which runs every CTA) are the
/// commands' own. Dimensions are in CTAs (grid, cluster) and threads (block).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct LaunchArgs {
    /// A launch file (JSON, `{"format": "tilelab-launch", "version": 1, ...}`, see
    /// docs/launch-files.md): the PTX file (relative to the launch file), kernel, grid, block,
    /// cluster, CTA, dynamic shared memory, instruction budget and parameter values. Flags given
    /// beside it (the PTX file included) override its values.
    #[arg(long, value_name = "FILE.json")]
    pub launch: Option<PathBuf>,
    /// Kernel (`.entry`) to run, needed when the file has several: its name (mangled or
    /// demangled), a part of exactly one kernel's name, or #N (the N-th .entry, from 0).
    #[arg(long, value_name = "K")]
    pub kernel: Option<String>,
    /// Grid size in CTAs: X[,Y,Z].
    #[arg(long, value_name = "X[,Y,Z]", value_parser = parse_dim3)]
    pub grid: Option<[u32; 3]>,
    /// Block size in threads: X[,Y,Z].
    #[arg(long, value_name = "X[,Y,Z]", value_parser = parse_dim3)]
    pub block: Option<[u32; 3]>,
    /// CTAs per cluster, X[,Y,Z] (left out: no cluster, or the kernel's .reqnctapercluster;
    /// 1,1,1 is a cluster launch of one CTA each, as the driver takes it): every CTA of a
    /// cluster runs together (their own shared memory, shared::cluster addresses,
    /// barrier.cluster); the grid must be a multiple of it, at most 8 CTAs (the portable limit).
    #[arg(long, value_name = "X[,Y,Z]", value_parser = parse_dim3)]
    pub cluster: Option<[u32; 3]>,
    /// A parameter value (repeatable): NAME=VALUE or INDEX=VALUE for a scalar;
    /// NAME[+OFFSET]=TYPE:V[,V...] packs values of one PTX type little-endian from byte OFFSET
    /// (default 0) of a by-value struct (.b8 array), e.g. 0=s32:128,128,512 or 0+16=f16:1.0.
    /// Pointers need none (each gets its own zero-filled buffer), nor a .b8 parameter the
    /// kernel never reads.
    #[arg(long = "arg", value_name = "NAME=VALUE", value_parser = parse_arg)]
    pub args: Vec<(String, String)>,
    /// A CUtensorMap in a parameter (repeatable): NAME[+BYTE_OFFSET]=DTYPE:DIMS:STRIDES:BOX[:SWIZZLE]
    /// with cuTensorMapEncodeTiled's arguments (dims and box innermost first, in elements;
    /// strides in bytes for dims 1..; element strides 1; zero fill out of bounds), e.g.
    /// 3=f16:512,128:1024:64,128:128B. The tensor gets its own zero-filled buffer, or with a
    /// trailing @POINTER that pointer parameter's. The place: 128 bytes at a multiple of 64 of
    /// a .b8 parameter of .align 64 or more.
    #[arg(long = "tensor-map", value_name = "NAME=SPEC", value_parser = parse_tensor_map)]
    pub tensor_maps: Vec<TensorMapArg>,
    /// Dynamic shared memory per block, a size: bytes (32768) or K, KB, KiB of 1024 bytes (32K),
    /// M, MB, MiB of 1024 KiB (default: what is left of sm_90's 232,448 bytes per block in the
    /// simulator; 0 on the GPU).
    #[arg(long, value_name = "BYTES", value_parser = parse_smem_bytes)]
    pub dynamic_smem: Option<u32>,
    /// Stop the simulation of a CTA after N warp instructions, or once they cost more than
    /// 20·N units (1 per instruction, 32 per memory instruction, 64 per mma.sync): a runaway
    /// loop of any kind ends within seconds. At most 30000000.
    /// [default: 3000000]
    #[arg(long, value_name = "N", value_parser = parse_max_instructions)]
    pub max_instructions: Option<u64>,
}

impl LaunchArgs {
    /// Whether any flag but `--launch` was given (they belong to a PTX run).
    pub fn any_flag(&self) -> bool {
        self.kernel.is_some()
            || self.grid.is_some()
            || self.block.is_some()
            || self.cluster.is_some()
            || !self.args.is_empty()
            || !self.tensor_maps.is_empty()
            || self.dynamic_smem.is_some()
            || self.max_instructions.is_some()
    }
}

/// The launch flags as one command line gave them: [`LaunchArgs`] with the command's PTX file
/// and `--cta`.
#[derive(Clone, Debug, Default)]
pub struct Flags {
    /// The PTX file (`tilelab ptx FILE`, `--ptx FILE`).
    pub ptx: Option<PathBuf>,
    /// `--cta` (`None` for `verify`, which runs every CTA).
    pub cta: Option<[u32; 3]>,
    /// The shared launch flags.
    pub launch: LaunchArgs,
}

/// One launch, from flags or a launch file and flags.
#[derive(Debug)]
pub struct Resolved {
    /// The PTX file (a launch file's, relative to the launch file's folder).
    pub ptx: PathBuf,
    /// Its text when a launch file was merged (its args need the kernel's parameters); `None`
    /// otherwise (read it with [`read_ptx`] when needed).
    pub src: Option<String>,
    /// The kernel loaded from `src` when a launch file was merged and it loaded (the run uses
    /// it instead of parsing and decoding the file again); `None` otherwise.
    pub prog: Option<tilelab::ptx::decode::Program>,
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

/// The launch `flags` describe, on top of their launch file (`--launch`) when given. `cmd`
/// names the command in the error for a missing PTX file, grid or block (`verify --ptx`).
///
/// # Errors
/// The launch file's, an unreadable PTX file, or no PTX file, grid or block from either.
pub fn resolve(flags: &Flags, cmd: &str) -> anyhow::Result<Resolved> {
    let Flags {
        ptx: ptx_flag,
        cta,
        launch: flags,
    } = flags;
    let file = flags.launch.as_deref();
    let spec = file.map(read_file).transpose()?;
    let ptx = match (ptx_flag, &spec, file) {
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
    let mut prog = None;
    let (args, tensor_maps) = match (&spec, &src) {
        (Some(s), Some(src)) => match tilelab::ptx::report::load(src, kernel.as_deref()) {
            Ok(p) => {
                let merged = (
                    launch_file::override_args(&p, &s.args, &flags.args),
                    launch_file::override_maps(&p, &s.tensor_maps, &flags.tensor_maps),
                );
                prog = Some(p);
                merged
            }
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
        cta: (*cta).or(spec.as_ref().map(|s| s.cta)).unwrap_or([0, 0, 0]),
        cluster: flags.cluster.or(spec.as_ref().and_then(|s| s.cluster)),
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
        prog,
        kernel,
        launch,
    })
}

// The launch flags' value parsers (also `tui --ptx`'s `--cta`).

fn parse_dims(s: &str, min: u32) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err("expected X, X,Y or X,Y,Z (one to three whole numbers)".to_string());
    }
    let mut out = [1u32; 3];
    if min == 0 {
        out = [0; 3];
    }
    for (i, p) in parts.iter().enumerate() {
        let v: u32 = match p.parse() {
            Ok(v) => v,
            Err(e) if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) => {
                let l = tilelab::ptx::params::ARCH.limits();
                let [gx, gy, gz] = l.max_grid_dim;
                let [bx, by, bz] = l.max_block_dim;
                return Err(format!(
                    "'{p}' is too large: CUDA allows a grid of at most {gx},{gy},{gz} blocks and a block of at most {bx},{by},{bz} threads ({} in all)",
                    l.max_threads_per_block
                ));
            }
            Err(_) => {
                return Err(format!(
                    "'{p}' is not a whole number; expected X, X,Y or X,Y,Z"
                ));
            }
        };
        if v < min {
            return Err(format!("every dimension must be at least {min}"));
        }
        out[i] = v;
    }
    Ok(out)
}

pub(super) fn parse_dim3(s: &str) -> Result<[u32; 3], String> {
    parse_dims(s, 1)
}

pub(super) fn parse_dim3_zero(s: &str) -> Result<[u32; 3], String> {
    parse_dims(s, 0)
}

/// `--dynamic-smem BYTES`: a size ([`tilelab::sim::size`]: `32768`, `32K`, `32KiB`); one past
/// u32 is named as too large with the limit the simulator enforces (sm_90's 232,448 bytes per
/// block), not as clap's "number too large to fit in target type". Values up to u32 pass: the
/// simulator names the static and dynamic bytes when their sum is too large.
pub(super) fn parse_smem_bytes(s: &str) -> Result<u32, String> {
    use tilelab::sim::size::{SizeError, parse_bytes};
    let limit = tilelab::ptx::params::ARCH.limits().smem_per_block_bytes;
    match parse_bytes(s, u32::MAX as u64) {
        Ok(v) => Ok(v as u32),
        Err(SizeError::TooLarge { .. }) => Err(format!(
            "too large: shared memory per block is at most {limit} bytes (sm_90)"
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// `--max-instructions N`: 0..=[`tilelab::ptx::engine::MAX_INSTRUCTIONS_LIMIT`], the bound
/// that keeps a runaway loop within about a minute.
pub(super) fn parse_max_instructions(s: &str) -> Result<u64, String> {
    super::whole_in::<u64>(0, tilelab::ptx::engine::MAX_INSTRUCTIONS_LIMIT)(s)
}

/// `--tensor-map NAME[+BYTE_OFFSET]=SPEC[@POINTER]` ([`tilelab::ptx::params::parse_tensor_map`]).
pub(super) fn parse_tensor_map(s: &str) -> Result<tilelab::ptx::params::TensorMapArg, String> {
    tilelab::ptx::params::parse_tensor_map(s)
}

pub(super) fn parse_arg(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        // The value is kept as typed: `encode_arg` refuses spaces around it.
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
            Ok((k.trim().to_string(), v.to_string()))
        }
        _ => Err(format!(
            "'{s}': expected NAME=VALUE or INDEX=VALUE, e.g. --arg seq=4096 (a struct: NAME[+OFFSET]=TYPE:V[,V...])"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_parse() {
        assert_eq!(parse_dim3("64").unwrap(), [64, 1, 1]);
        assert_eq!(parse_dim3("2,3").unwrap(), [2, 3, 1]);
        assert_eq!(parse_dim3_zero("1,0,2").unwrap(), [1, 0, 2]);
        assert!(parse_dim3("0").is_err());
        assert!(parse_dim3("1,2,3,4").is_err());
        assert!(parse_dim3("x").unwrap_err().contains("'x'"));
        // A whole number past u32 is too large, not "not a whole number" (new-user trial).
        let e = parse_dim3("99999999999999").unwrap_err();
        assert!(e.contains("too large") && !e.contains("not a whole"), "{e}");
        assert_eq!(parse_smem_bytes("32768").unwrap(), 32768);
        assert_eq!(parse_smem_bytes("16KB").unwrap(), 16384);
        assert_eq!(parse_smem_bytes("32KiB").unwrap(), 32768);
        let e = parse_smem_bytes("99999999999999999999999").unwrap_err();
        assert!(e.contains("at most 232448 bytes"), "{e}");
        assert!(
            parse_smem_bytes("4G")
                .unwrap_err()
                .starts_with("not a size; allowed: ")
        );
        assert!(
            parse_smem_bytes("0.5")
                .unwrap_err()
                .starts_with("not a whole number of bytes")
        );
        assert_eq!(
            parse_arg("seq=4096").unwrap(),
            ("seq".into(), "4096".into())
        );
        assert!(parse_arg("seq").is_err());
    }
}
