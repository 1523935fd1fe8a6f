//! `tilelab verify`: the suite that runs the simulator's tilings on an NVIDIA GPU and checks
//! the simulator against the hardware (register contents, wavefronts and bank conflicts under
//! Nsight Compute, SASS instruction names and counts, kernel results, occupancy, timings).
//!
//! A run is: flags → [`Options`] → [`Plan::new`] (pure: lessons, records, fuzz requests) →
//! [`Gpu::open`] → [`run`], which calls every group of [`GROUPS`] in order with a [`Context`]
//! (the GPU, the tools, a [`Progress`] sink) and collects their [`Check`] rows. The CLI only
//! builds the options, prints the rows and picks the exit code.
//!
//! # Where a new GPU check goes
//! One file per group in this folder, registered by one line in [`GROUPS`]: a `pub const GROUP:
//! Group` naming the group and its `fn run(&mut Context, &Plan) -> anyhow::Result<Vec<Check>>`.
//! Kernels it launches get a typed wrapper in [`crate::gpu::launch`] (the only place with an
//! `unsafe` launch), their CUDA C goes in `kernels/` with a constant in [`crate::gpu::source`],
//! and the pure comparison logic in [`crate::gpu::compare`] (tested without a GPU). A kernel
//! measured under ncu launches itself in a child process: add a [`Probe`] variant. PTX kernels
//! (hand-written or from `src/ptx/`) load through [`Gpu::load_ptx`] and launch by name with
//! packed parameters ([`crate::gpu::launch::PtxKernel`], [`crate::gpu::params`]); the [`ptx`]
//! group checks that path end to end and is where `verify --ptx FILE` belongs.
//!
//! The Hopper groups (`stmatrix`, `cp.async`, `tma`, `wgmma`, `fa3`; shared parts in [`hopper`], the
//! pure comparisons in [`crate::gpu::hopper_check`]) run only on an sm_90 device; elsewhere each
//! is one SKIPPED row. `--group NAME` (repeatable) runs only the named groups.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;

use anyhow::Context as _;

use super::device::{Compiled, Gpu};
use super::tools::Tools;
use crate::sim::arch::Arch;

pub mod compare;
pub mod cpasync;
pub mod fa2;
pub mod fa3;
pub mod fragments;
pub mod gemm;
pub mod hopper;
pub mod hopper_check;
pub mod kernel;
pub mod lesson_ptx;
pub mod lessons;
pub mod occupancy;
pub mod plan;
pub mod progress;
pub mod ptx;
pub mod ptx_check;
pub mod ptx_file;
pub mod stmatrix;
pub mod timing;
pub mod tma;
pub mod wavefronts;
pub mod wgmma;

pub use super::check::{Check, Report, Tally, Verdict};
pub use plan::{Options, Plan};
pub use progress::{Collect, Progress, Silent};

/// The signature of a group's checks.
pub type GroupFn = fn(&mut Context<'_>, &Plan) -> anyhow::Result<Vec<Check>>;

/// One group of checks.
#[derive(Clone, Copy)]
pub struct Group {
    /// Short name (the file's name).
    pub name: &'static str,
    /// What it checks, one line.
    pub about: &'static str,
    /// Runs its checks.
    pub run: GroupFn,
}

/// Every group, in the order a run goes through them (and the table shows their rows).
pub const GROUPS: &[Group] = &[
    fragments::GROUP,
    lessons::GROUP,
    lesson_ptx::GROUP,
    wavefronts::GROUP,
    gemm::GROUP,
    occupancy::GROUP,
    fa2::GROUP,
    timing::GROUP,
    ptx::GROUP,
    stmatrix::GROUP,
    cpasync::GROUP,
    tma::GROUP,
    wgmma::GROUP,
    fa3::GROUP,
];

/// The names of [`GROUPS`], comma-separated (for messages).
pub fn group_names() -> String {
    GROUPS.iter().map(|g| g.name).collect::<Vec<_>>().join(", ")
}

/// What a run's measurements are labelled with (the provenance of measured files).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceFacts {
    /// The card and its architecture, e.g. `NVIDIA H200 (sm_90)`.
    pub card: String,
    /// The NVIDIA driver version (`nvidia-smi`), e.g. `580.159.04`.
    pub driver: String,
    /// The CUDA version of the driver API, e.g. `13.0`.
    pub cuda: String,
}

impl DeviceFacts {
    /// The facts of `gpu`; the driver version from `nvidia-smi` when it can be run.
    pub fn of(gpu: &Gpu) -> DeviceFacts {
        let driver = std::process::Command::new("nvidia-smi")
            .args(["--query-gpu=driver_version", "--format=csv,noheader"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .next()
                    .map(|l| l.trim().to_string())
            })
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "unknown (nvidia-smi not available)".into());
        DeviceFacts {
            card: format!("{} ({})", gpu.name, gpu.arch),
            driver,
            cuda: gpu.driver_version_string(),
        }
    }
}

/// What the groups share during a run.
pub struct Context<'a> {
    /// The GPU; `None` only in tests of groups that measure in a child process (wavefronts).
    pub gpu: Option<&'a Gpu>,
    /// The architecture programs are built for: the device's.
    pub arch: Arch,
    /// `ncu` and `cuobjdump`.
    pub tools: Tools,
    /// This executable, which ncu runs with a hidden probe flag ([`Probe`]).
    pub exe: PathBuf,
    /// Where progress goes.
    pub progress: &'a mut dyn Progress,
    /// What the measurements are labelled with.
    pub device: DeviceFacts,
    compiled: BTreeMap<String, Rc<Compiled>>,
}

impl<'a> Context<'a> {
    /// A context on `gpu`.
    pub fn new(
        gpu: &'a Gpu,
        tools: Tools,
        exe: PathBuf,
        progress: &'a mut dyn Progress,
    ) -> Context<'a> {
        Context {
            gpu: Some(gpu),
            arch: gpu.arch,
            tools,
            exe,
            progress,
            device: DeviceFacts::of(gpu),
            compiled: BTreeMap::new(),
        }
    }

    /// A context without a GPU (groups that need one fail with an error saying so), for the
    /// groups that measure in a child process; `device` labels what they measure.
    pub fn without_gpu(
        arch: Arch,
        device: DeviceFacts,
        tools: Tools,
        exe: PathBuf,
        progress: &'a mut dyn Progress,
    ) -> Context<'a> {
        Context {
            gpu: None,
            arch,
            tools,
            exe,
            progress,
            device,
            compiled: BTreeMap::new(),
        }
    }

    /// The GPU.
    ///
    /// # Errors
    /// When the context has none.
    pub fn gpu(&self) -> anyhow::Result<&'a Gpu> {
        self.gpu
            .context("this check needs a GPU and the context has none")
    }

    /// The module compiled under `key`, compiling it with `build` the first time (so groups
    /// share kernels: occupancy asks for the GEMM kernels the gemm group built).
    ///
    /// # Errors
    /// Those of `build`; no GPU.
    pub fn compiled(
        &mut self,
        key: &str,
        build: impl FnOnce(&Gpu) -> anyhow::Result<Compiled>,
    ) -> anyhow::Result<Rc<Compiled>> {
        if let Some(c) = self.compiled.get(key) {
            return Ok(c.clone());
        }
        let c = Rc::new(build(self.gpu()?)?);
        self.compiled.insert(key.to_string(), c.clone());
        Ok(c)
    }
}

/// The SASS listing of `cubin` by `cuobjdump -sass`, or the row that stands for the SASS checks
/// `name` when there is none: skipped without cuobjdump, failed when it fails.
pub fn sass_listing(
    ctx: &Context<'_>,
    name: &str,
    cubin: &[u8],
    tag: &str,
) -> Result<super::sass::Listing, Box<Check>> {
    let Some(tool) = &ctx.tools.cuobjdump else {
        return Err(Box::new(Check::skipped(
            "sass",
            name,
            "-",
            "-",
            "cuobjdump not found on PATH or in /usr/local/cuda/bin",
        )));
    };
    super::sass::of_cubin(tool, cubin, tag)
        .map_err(|e| Box::new(Check::new("sass", name, "-", "-", false, format!("{e:#}"))))
}

/// Runs every group of [`GROUPS`] (those of `plan.groups` when it names any) and returns all
/// rows, in order.
///
/// # Errors
/// The first group that could not run (a driver error, a kernel that does not compile); checks
/// that disagree are rows, not errors.
pub fn run(plan: &Plan, ctx: &mut Context<'_>) -> anyhow::Result<Vec<Check>> {
    let mut rows = Vec::new();
    for g in GROUPS {
        if !plan.groups.is_empty() && !plan.groups.iter().any(|n| n == g.name) {
            continue;
        }
        rows.extend((g.run)(ctx, plan).with_context(|| format!("verify group {}", g.name))?);
    }
    Ok(rows)
}

/// A launch that verify runs in a child process under Nsight Compute (hidden flags of
/// `tilelab verify`), so ncu's per-launch counters belong to exactly these kernels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// `--probe-file FILE`: the probe kernel once per record of FILE.
    Records(PathBuf),
    /// `--probe-gemm`: every GEMM case once ([`gemm::CASES`]).
    Gemm,
    /// `--probe-fa2`: every FlashAttention-2 case once ([`fa2::CASES`]).
    Fa2,
    /// `--probe-stmatrix FILE`: `stsm_count` once per record of FILE ([`stmatrix::probe`]).
    Stmatrix(PathBuf),
    /// `--probe-cpasync FILE`: `cpasync_src_count` once per record of FILE ([`cpasync::probe`]).
    CpAsync(PathBuf),
    /// `--ptx FILE … --probe-ptx [--line-info]`: the PTX kernel once ([`ptx_file::probe`]), with
    /// the PTX's own line table when the flag is set.
    Ptx(ptx_file::PtxRun, bool),
}

/// Runs a probe on the GPU; returns a line for stdout (ncu skips it).
///
/// # Errors
/// No GPU, a record the probe cannot launch, a driver error.
pub fn run_probe(p: &Probe) -> anyhow::Result<String> {
    let gpu = Gpu::open()?;
    match p {
        Probe::Records(file) => wavefronts::probe(&gpu, file),
        Probe::Gemm => gemm::probe(&gpu),
        Probe::Fa2 => fa2::probe(&gpu),
        Probe::Stmatrix(file) => stmatrix::probe(&gpu, file),
        Probe::CpAsync(file) => cpasync::probe(&gpu, file),
        Probe::Ptx(run, line_info) => ptx_file::probe(&gpu, run, *line_info),
    }
}
