//! `tilelab verify --ptx FILE [launch flags]`: a PTX kernel simulated ([`crate::ptx`]) and run on
//! the GPU with the same launch, compared counter by counter and per PTX line
//! ([`crate::gpu::ptx_check`]).
//!
//! * **Simulated**: every CTA of the grid, across the CPUs ([`crate::ptx::grid`]), summed (Nsight Compute counts the
//!   whole launch); each pointer parameter its own zero-filled buffer.
//! * **Measured**: this executable, run by ncu with the hidden `--probe-ptx`, loads the PTX
//!   ([`load_path`]: through the driver's linker as the sm_80-style fixtures were measured, or
//!   with `cuModuleLoadDataEx` for kernels with `extern __shared__ __align__(1024)`), passes the parameter bytes `tilelab ptx` builds
//!   (scalars, by-value structs; [`gpu_plan`]), gives each pointer parameter its own
//!   zero-filled device buffer of `--pointer-bytes` (the simulator's buffers have no size; the
//!   kernel must stay inside these), encodes each `--tensor-map` with `cuTensorMapEncodeTiled`
//!   ([`TensorMapEncode`]) over its own zero-filled buffer (or its `@POINTER`'s) and places its
//!   128 bytes in the parameter, and launches the grid once. ncu selects the kernel by its
//!   mangled name ([`ncu::KernelFilter::exact_mangled`]). Two ncu runs: the counters of
//!   [`ptx_check::METRICS`], and `--section SourceCounters` with the PTX given its own line table
//!   ([`source_view::with_own_line_info`]) so the source page's rows are the PTX file's lines.
//!
//! The fixtures of `tests/data/ptx/` were measured through cuLink
//! (`scripts/research/ptx_fixtures/harness.py`); `docs/ptx.md` ("Loading PTX") lists what the other path
//! changes; the FA3 fixtures were measured with `cuModuleLoadDataEx`.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use cudarc::driver::LaunchConfig;

use super::{Check, Context};
use crate::gpu::device::Gpu;
use crate::gpu::launch::{DeviceBuffer, PtxKernel, TensorMapEncode};
use crate::gpu::ncu;
use crate::gpu::params::ParamBuffer;
use crate::gpu::ptx_check::{self, PtxCheck, SimLine, SimTotals};
use crate::measured::source_view::{self, KernelLines};
use crate::ptx::load_path::{LoadPath, load_path};
use crate::ptx::{self, Launch};

/// The most CTAs `verify --ptx` simulates (every CTA, across the machine's CPUs: the 4,096-CTA
/// launch of Triton's tutorial matmul at K = 4096 took 31.7 s on the H200 machine's 16 cores,
/// ncu's two runs included; docs/log/2026-12-02-whole-launch.md). 65,536: a GEMM of 64 x 64
/// tiles over 16,384 x 16,384.
pub const MAX_CTAS: u64 = 65_536;

/// Default bytes of each pointer parameter's device buffer.
pub const POINTER_BYTES: u64 = 16 << 20;

/// The most bytes `--pointer-bytes` may give each pointer parameter's device buffer: 64 GiB
/// (an H200 has 141 GB of memory; one buffer larger than this leaves too little for the
/// others). The driver refuses what does not fit the card.
pub const MAX_POINTER_BYTES: u64 = 64 << 30;

/// A `verify --ptx` run whose file was read and whose kernel was found ([`PtxRun::prepare`]),
/// ready to simulate.
#[derive(Clone, Debug)]
pub struct Prepared {
    prog: crate::ptx::decode::Program,
}

/// Dynamic shared memory the GPU allows a block without opting in, bytes.
const DEFAULT_DYNAMIC_SMEM_LIMIT: u32 = 48 * 1024;

/// One `verify --ptx` run: the file and the launch, as the flags gave them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxRun {
    /// The PTX file.
    pub file: PathBuf,
    /// The `.entry` (needed when the file has several).
    pub kernel: Option<String>,
    /// Grid, CTAs.
    pub grid: [u32; 3],
    /// Block, threads.
    pub block: [u32; 3],
    /// Parameter values: (name or index, value as written); pointers take none.
    pub args: Vec<(String, String)>,
    /// `--tensor-map`s (simulated, and encoded through the driver on the GPU).
    pub tensor_maps: Vec<crate::ptx::params::TensorMapArg>,
    /// Dynamic shared memory, bytes (`None`: 0 on the GPU; the simulator's default).
    pub dynamic_smem: Option<u32>,
    /// The simulator's per-CTA instruction budget.
    pub max_instructions: u64,
    /// CTAs per cluster (`--cluster`, [`crate::ptx::Launch::cluster`]; `None`: none given): the
    /// simulator runs each cluster's CTAs together, the GPU launches with
    /// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` when one is given.
    pub cluster: Option<[u32; 3]>,
    /// Bytes of each pointer parameter's device buffer.
    pub pointer_bytes: u64,
}

/// What the simulator says about the whole launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Simulated {
    /// The kernel's name.
    pub kernel: String,
    /// CTAs simulated (the grid).
    pub ctas: u64,
    /// Totals over all CTAs.
    pub totals: SimTotals,
    /// Per PTX line, summed over all CTAs, in line order.
    pub lines: Vec<SimLine>,
    /// The PTX line ptxas's line table gives each `HGMMA`/`IGMMA`/`QGMMA` of the kernel, in
    /// address order (`crate::sass`, compiled as the driver compiles it on this run's load
    /// path), or why there are none (no ptxas/nvdisasm): the per-line rows book each wgmma's
    /// counts there, as Nsight Compute's source view does
    /// ([`ptx_check::book_wgmma_on_sass_lines`]).
    pub gmma_lines: Result<Vec<u32>, String>,
}

impl PtxRun {
    fn launch(&self, cta: [u32; 3]) -> Launch {
        Launch {
            grid: self.grid,
            block: self.block,
            cta,
            args: self.args.clone(),
            tensor_maps: self.tensor_maps.clone(),
            dynamic_smem: self.dynamic_smem,
            max_instructions: self.max_instructions,
            cluster: self.cluster,
        }
    }

    fn source(&self) -> anyhow::Result<String> {
        crate::textfile::read_text(&self.file, crate::textfile::MAX_PTX_BYTES, "PTX module")
            .with_context(|| format!("cannot read '{}'", crate::text::path(&self.file)))
    }

    /// The arguments of the child process ncu runs (`tilelab verify --ptx FILE … --probe-ptx`).
    pub fn child_args(&self, line_info: bool) -> Vec<OsString> {
        let dims = |d: [u32; 3]| format!("{},{},{}", d[0], d[1], d[2]);
        let mut a: Vec<OsString> = vec!["verify".into(), "--ptx".into(), self.file.clone().into()];
        if let Some(k) = &self.kernel {
            a.extend(["--kernel".into(), k.into()]);
        }
        a.extend(["--grid".into(), dims(self.grid).into()]);
        a.extend(["--block".into(), dims(self.block).into()]);
        for (k, v) in &self.args {
            a.extend(["--arg".into(), format!("{k}={v}").into()]);
        }
        for m in &self.tensor_maps {
            a.extend(["--tensor-map".into(), m.text().into()]);
        }
        if let Some(s) = self.dynamic_smem {
            a.extend(["--dynamic-smem".into(), s.to_string().into()]);
        }
        if let Some(c) = self.cluster {
            a.extend(["--cluster".into(), dims(c).into()]);
        }
        a.extend([
            "--pointer-bytes".into(),
            self.pointer_bytes.to_string().into(),
        ]);
        a.push("--probe-ptx".into());
        if line_info {
            a.push("--line-info".into());
        }
        a
    }

    /// The checks before any simulation (milliseconds): the file is read, the grid has at most
    /// [`MAX_CTAS`] CTAs, `--pointer-bytes` is in 1..=[`MAX_POINTER_BYTES`], the module parses
    /// and has the kernel.
    ///
    /// # Errors
    /// An unreadable file; more than [`MAX_CTAS`] CTAs; `--pointer-bytes` out of range; bad PTX,
    /// an unknown kernel or a launch `tilelab ptx` refuses (block, CTA, `--arg`, shared memory),
    /// prefixed with the file name.
    pub fn prepare(&self) -> anyhow::Result<Prepared> {
        let src = self.source()?;
        let n = self.ctas();
        if n > MAX_CTAS {
            bail!(
                "--grid {},{},{} has {n} CTAs; verify --ptx simulates each one (ncu counts the whole launch) and allows at most {MAX_CTAS}",
                self.grid[0],
                self.grid[1],
                self.grid[2]
            );
        }
        if !(1..=MAX_POINTER_BYTES).contains(&self.pointer_bytes) {
            bail!(
                "--pointer-bytes {} is not allowed; allowed: 1..={MAX_POINTER_BYTES} bytes",
                self.pointer_bytes
            );
        }
        let prog = ptx::report::load(&src, self.kernel.as_deref())
            .map_err(|e| anyhow::anyhow!("{}: {e}", crate::text::path(&self.file)))?;
        // The launch checks `tilelab ptx` makes (microseconds), before the GPU is looked for:
        // bad launch input is exit 2 with its error, not "skipped, no GPU".
        let l = self.launch([0, 0, 0]);
        ptx::params::check_launch(&prog, &l)
            .and_then(|_| ptx::params::check_cluster(&prog, &l))
            .and_then(|_| ptx::params::launch_params(&prog, &l))
            .and_then(|_| ptx::params::check_smem(&prog, &l))
            .map_err(|e| anyhow::anyhow!("{}: {e}", crate::text::path(&self.file)))?;
        // The GPU side's plan (tensor maps under the driver's rules), before the GPU is looked
        // for.
        gpu_plan(&prog, &l)
            .map_err(|e| anyhow::anyhow!("{}: {e}", crate::text::path(&self.file)))?;
        Ok(Prepared { prog })
    }

    /// CTAs in the grid.
    fn ctas(&self) -> u64 {
        self.grid.iter().map(|&d| u64::from(d)).product::<u64>()
    }

    /// Simulates every CTA of the grid and sums them ([`Self::prepare`], then
    /// [`Self::simulate_prepared`]).
    ///
    /// # Errors
    /// Those of [`Self::prepare`]; any simulator error (missing argument, unsupported
    /// instruction), prefixed with the file name and the CTA.
    pub fn simulate(&self, progress: &mut dyn super::Progress) -> anyhow::Result<Simulated> {
        let p = self.prepare()?;
        self.simulate_prepared(&p, progress)
    }

    /// Simulates every CTA of the grid of a prepared run and sums them.
    ///
    /// # Errors
    /// Any simulator error (missing argument, unsupported instruction), prefixed with the file
    /// name and the CTA.
    pub fn simulate_prepared(
        &self,
        prepared: &Prepared,
        progress: &mut dyn super::Progress,
    ) -> anyhow::Result<Simulated> {
        let n = self.ctas();
        let file = crate::text::path(&self.file);
        let prog = &prepared.prog;
        // ptxas's SASS of the module as the driver compiles it on this run's load path (None
        // when ptxas or nvdisasm is missing): its LDS/STS issues and where its wgmma lines are.
        let sass = self.source().map_err(|e| e.to_string()).and_then(|src| {
            let tools = crate::sass::CudaTools::find().map_err(|e| e.to_string())?;
            let k = crate::sass::of_ptx(&tools, &src, &prog.name, None)
                .map_err(|e| format!("{e:#}"))?;
            Ok((src, k))
        });
        // Every CTA (one run per cluster), across the machine's cores (`ptx::grid`).
        let opts = ptx::grid::GridOptions {
            jobs: std::thread::available_parallelism().map_or(1, |j| j.get()),
            ..ptx::grid::GridOptions::default()
        };
        progress.start(&format!(
            "simulating {n} CTA(s) of {} on {} thread(s)",
            prog.name, opts.jobs
        ));
        let launch = self.launch([0, 0, 0]);
        let all = ptx::grid::CtaSet::All;
        let extra = sass
            .as_ref()
            .ok()
            .map(|(_, k)| crate::sass::report::GridSass { prog, sass: k });
        let g = ptx::grid::run(prog, &launch, &all, &opts, &|_| {}, &extra);
        progress.finish();
        let g = g.map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        // The LDS/STS ptxas expands tensor-map instructions into, costed from the SASS.
        let mut t = g.report.totals.clone();
        let expansion = match &sass {
            Ok((_, k)) => crate::sass::report::Expansion::of(k, &g.report.map_lines),
            Err(_) => crate::sass::report::Expansion::default(),
        };
        expansion.add_to(&mut t);
        let sum = |name: &str| g.spread.get(name).map_or(0, |s| s.sum);
        let totals = SimTotals {
            shared_ld_wavefronts: t.shared_ld_wavefronts,
            shared_st_wavefronts: t.shared_st_wavefronts,
            shared_ld_bank_conflicts: t.shared_ld_bank_conflicts,
            shared_st_bank_conflicts: t.shared_st_bank_conflicts,
            lds: t.sass.LDS,
            sts: t.sass.STS,
            ldsm: t.sass.LDSM,
            stsm: t.sass.STSM,
            hmma: t.sass.HMMA,
            ldgsts: t.sass.LDGSTS,
            sass_issued: sass
                .as_ref()
                .ok()
                .map(|_| [sum("sass LDS"), sum("sass STS")]),
        };
        let mut lines: Vec<SimLine> = g
            .report
            .lines
            .iter()
            .map(|l| SimLine {
                line: l.line,
                ptx: l.ptx.clone(),
                executions: l.executions,
                wavefronts: l.wavefronts,
                bank_conflicts: l.bank_conflicts,
            })
            .collect();
        // The tensor-map lines' LDS/STS, where the source view books them.
        let src = sass.as_ref().map(|(s, _)| s.as_str()).unwrap_or("");
        for (&line, &[wf, conf]) in &expansion.by_line {
            match lines.iter_mut().find(|l| l.line == line) {
                Some(l) => {
                    l.wavefronts = l.wavefronts.saturating_add(wf);
                    l.bank_conflicts = l.bank_conflicts.saturating_add(conf);
                }
                None => lines.push(SimLine {
                    line,
                    ptx: line
                        .checked_sub(1)
                        .and_then(|i| src.lines().nth(i as usize))
                        .map_or(String::new(), |t| t.trim().to_string()),
                    // The executions with a lane on, each of which issues the line's LDS/STS
                    // (ptxas may branch the others around it: `u2_device_desc_matmul`'s line
                    // 161 issues 3 SASS instructions for 4 PTX executions, 3 of them guarded off).
                    executions: g.report.map_lines.get(&line).map_or(0, |m| m[0]),
                    wavefronts: wf,
                    bank_conflicts: conf,
                }),
            }
        }
        lines.sort_by_key(|l| l.line);
        let gmma_lines = sass.map(|(_, k)| {
            k.insts
                .iter()
                .filter(|i| matches!(i.family(), "HGMMA" | "IGMMA" | "QGMMA"))
                .map(|i| i.line.unwrap_or(0))
                .collect()
        });
        Ok(Simulated {
            kernel: prog.name.clone(),
            ctas: n,
            totals,
            lines,
            gmma_lines,
        })
    }
}

/// Where the tensor of a `--tensor-map` lives on the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapGlobal {
    /// Its own zero-filled buffer of this many bytes (the span
    /// [`crate::ptx::params::TensorMapArg::tensor_bytes`] gives: the simulator's buffer).
    Own(u64),
    /// The buffer of this pointer parameter (`@POINTER`; index from 0).
    Pointer(usize),
}

/// One `--tensor-map` as the GPU launch encodes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapPlan {
    /// The flag as written (for messages).
    pub flag: String,
    /// Byte offset of the map's 128 bytes in the parameter buffer (the parameter's offset plus
    /// `+BYTE_OFFSET`).
    pub at: usize,
    /// The map, parsed and checked with `cuTensorMapEncodeTiled`'s rules.
    pub map: crate::sim::tma::TensorMap,
    /// Its tensor's device memory.
    pub global: MapGlobal,
}

/// The parameters of the GPU launch before anything is allocated: the bytes `tilelab ptx`
/// builds ([`ptx::params::launch_params`]: scalars, struct bytes, zeros for what the kernel
/// never reads), where each parameter lies, which parameters are pointers (each gets its own
/// zero-filled device buffer, its address written over the simulator's), and the tensor maps
/// (each encoded by the driver over its own zero-filled buffer or its `@POINTER`'s, the
/// 128 bytes written over the simulator's handle).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuParams {
    /// The parameter buffer, bytes (`Program::param_bytes` long).
    pub bytes: Vec<u8>,
    /// Per parameter in order: (offset, size, alignment), bytes (the alignment the driver
    /// lays the parameter out with).
    pub layout: Vec<(usize, usize, usize)>,
    /// Indices of the pointer parameters.
    pub pointers: Vec<usize>,
    /// The tensor maps, in `--tensor-map` order.
    pub maps: Vec<MapPlan>,
}

/// The plan of the GPU launch's parameters (pure: nothing is allocated).
///
/// # Errors
/// Every error `tilelab ptx` gives for the same flags (one line naming the `--arg` or
/// `--tensor-map`), and a map `sim::tma::TensorMap::parse` refuses (the driver's rules).
pub fn gpu_plan(prog: &crate::ptx::decode::Program, l: &Launch) -> anyhow::Result<GpuParams> {
    let bytes = ptx::params::launch_params(prog, l).map_err(|e| anyhow::anyhow!("{e}"))?;
    // A scalar's alignment is its size (a `.ptr .align N` names the pointee's alignment, not
    // the parameter's: PTX ISA, "Kernel Function Parameters"); a `.b8` array's is its `.align`.
    let layout = prog
        .params
        .iter()
        .map(|p| {
            let align = if p.ty == "b8" { p.align } else { p.size };
            (p.offset as usize, p.size as usize, align as usize)
        })
        .collect();
    let pointers = (0..prog.params.len())
        .filter(|&i| prog.params[i].pointer)
        .collect();
    let find = |key: &str| {
        prog.params
            .iter()
            .position(|p| p.name == key)
            .or_else(|| key.parse::<usize>().ok().filter(|&i| i < prog.params.len()))
    };
    let mut maps = Vec::new();
    for m in &l.tensor_maps {
        let flag = format!("--tensor-map {}", m.text());
        // launch_params accepted the flag: the parameter exists and holds the map's 128 bytes.
        let i = find(&m.param).with_context(|| format!("{flag}: no such parameter"))?;
        let map = crate::sim::tma::TensorMap::parse(&m.spec)
            .map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
        let global = match &m.base {
            None => MapGlobal::Own(
                m.tensor_bytes()
                    .map_err(|e| anyhow::anyhow!("{flag}: {e}"))?,
            ),
            Some(b) => {
                MapGlobal::Pointer(find(b).with_context(|| format!("{flag}: no parameter '{b}'"))?)
            }
        };
        maps.push(MapPlan {
            flag,
            at: prog.params[i].offset as usize + m.byte_offset as usize,
            map,
            global,
        });
    }
    Ok(GpuParams {
        bytes,
        layout,
        pointers,
        maps,
    })
}

impl GpuParams {
    /// The packed parameters for `cuLaunchKernel`, each one the bytes of its place in
    /// [`GpuParams::bytes`] at its declared alignment.
    ///
    /// # Errors
    /// The packing lands a parameter elsewhere than the PTX declares it (a `.param` layout
    /// this packing does not follow), or another size.
    pub fn packed(&self, kernel: &str) -> anyhow::Result<ParamBuffer> {
        let mut pb = ParamBuffer::new();
        for (i, &(off, size, align)) in self.layout.iter().enumerate() {
            let b = self
                .bytes
                .get(off..off + size)
                .with_context(|| format!("parameter {i} lies outside the parameter bytes"))?;
            pb.push_bytes(align, b);
            if pb.offsets()[i] != off {
                bail!(
                    "parameter {i} of '{kernel}' is declared at byte {off}, packed at {}",
                    pb.offsets()[i]
                );
            }
        }
        let sizes: Vec<usize> = self.layout.iter().map(|l| l.1).collect();
        pb.check_declared(kernel, &sizes)?;
        Ok(pb)
    }
}

/// The GPU's parameters: every pointer its own zero-filled buffer of `pointer_bytes`, every
/// tensor map encoded over its buffer; returns the buffers too (they must outlive the launch).
///
/// # Errors
/// A driver error allocating or encoding (naming the `--tensor-map`).
fn gpu_params(
    gpu: &Gpu,
    prog: &crate::ptx::decode::Program,
    mut plan: GpuParams,
    pointer_bytes: u64,
) -> anyhow::Result<(ParamBuffer, Vec<DeviceBuffer>)> {
    let bytes =
        usize::try_from(pointer_bytes).context("--pointer-bytes does not fit this machine")?;
    let mut bufs = Vec::new();
    let mut addr = vec![0u64; prog.params.len()];
    for &i in &plan.pointers {
        let b = DeviceBuffer::zeroed(gpu, bytes)?;
        addr[i] = b.addr(gpu);
        let (off, size, _) = plan.layout[i];
        let n = size.min(8);
        plan.bytes[off..off + n].copy_from_slice(&addr[i].to_le_bytes()[..n]);
        bufs.push(b);
    }
    for m in &plan.maps {
        let global = match m.global {
            MapGlobal::Pointer(i) => addr[i],
            MapGlobal::Own(n) => {
                let n = usize::try_from(n).context("a tensor does not fit this machine")?;
                let b = DeviceBuffer::zeroed(gpu, n)?;
                let a = b.addr(gpu);
                bufs.push(b);
                a
            }
        };
        let enc = TensorMapEncode::of(&m.map)
            .encode(gpu, global)
            .map_err(|e| anyhow::anyhow!("{}: {e}", m.flag))?;
        plan.bytes[m.at..m.at + 128].copy_from_slice(&enc);
    }
    let pb = plan.packed(&prog.name)?;
    Ok((pb, bufs))
}

/// The child process: JIT-compiles the PTX (with its own line table when `line_info`), launches
/// the grid once and returns a line for stdout.
///
/// # Errors
/// The JIT rejects the PTX; bad parameters; a driver error or a faulting kernel.
pub fn probe(gpu: &Gpu, run: &PtxRun, line_info: bool) -> anyhow::Result<String> {
    let src = run.source()?;
    let prog = ptx::report::load(&src, run.kernel.as_deref())
        .map_err(|e| anyhow::anyhow!("{}: {e}", crate::text::path(&run.file)))?;
    let text = if line_info {
        let abs = std::fs::canonicalize(&run.file).unwrap_or_else(|_| run.file.clone());
        source_view::with_own_line_info(&src, &abs.to_string_lossy())
    } else {
        src
    };
    let name = crate::text::path(&run.file);
    // The launch's parameters are planned before the module is loaded (bad flags are one
    // line, before any JIT).
    let plan =
        gpu_plan(&prog, &run.launch([0, 0, 0])).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let k = match load_path(&text) {
        LoadPath::ModuleLoadDataEx => {
            let module = gpu.load_ptx_ex(&name, &text, line_info)?;
            PtxKernel::load_jit(&module, &prog.name)?
        }
        LoadPath::Link => {
            let module = gpu.load_cubin(&name, gpu.jit_ptx(&name, &text, line_info)?)?;
            PtxKernel::load(&module, &prog.name)?
        }
    };
    let smem = run.dynamic_smem.unwrap_or(0);
    if smem > DEFAULT_DYNAMIC_SMEM_LIMIT {
        k.set_max_dynamic_shared(smem)?;
    }
    let (params, bufs) = gpu_params(gpu, &prog, plan, run.pointer_bytes)?;
    let cfg = LaunchConfig {
        grid_dim: (run.grid[0], run.grid[1], run.grid[2]),
        block_dim: (run.block[0], run.block[1], run.block[2]),
        shared_mem_bytes: smem,
    };
    // SAFETY: the parameters follow the kernel's declaration (checked offsets and sizes, in
    // order); every tensor map was encoded by the driver over a live buffer of the tensor's
    // span; every pointer addresses its own live zero-filled buffer of `pointer_bytes`, which
    // the user vouches is large enough (as for the simulator's buffers, addresses must not depend on
    // loaded data for the comparison to mean anything).
    unsafe { k.launch_cluster(gpu, cfg, run.cluster, &params) }?;
    drop(bufs);
    Ok(format!(
        "launched {} grid ({},{},{}) block ({},{},{}), {} registers",
        prog.name,
        run.grid[0],
        run.grid[1],
        run.grid[2],
        run.block[0],
        run.block[1],
        run.block[2],
        k.num_regs()?
    ))
}

/// What ncu measured: the counters of the one launch and, if the source page could be read, the
/// kernel's per-line counters.
pub struct Measured {
    /// Metric name to value.
    pub counters: std::collections::BTreeMap<String, f64>,
    /// Per PTX line; `None` with the reason when the source view gave nothing.
    pub lines: Result<KernelLines, String>,
}

/// Runs the child under ncu twice (counters; source page) for kernel `kernel`.
///
/// # Errors
/// ncu cannot be started, or its run gave no row for the launch (the reason is in the message).
pub fn measure(ctx: &mut Context<'_>, run: &PtxRun, kernel: &str) -> anyhow::Result<Measured> {
    let ncu_path = ctx
        .tools
        .ncu
        .clone()
        .context("ncu (Nsight Compute) not found on PATH or in /usr/local/cuda/bin")?;
    let regex = ncu::KernelFilter::exact_mangled(kernel);
    ctx.progress
        .start("measuring the launch with Nsight Compute");
    let counted = ncu::profile_filtered(
        &ncu_path,
        ptx_check::METRICS,
        &regex,
        &ctx.exe,
        &run.child_args(false),
    );
    ctx.progress.finish();
    let (table, o) =
        counted.with_context(|| format!("cannot run {}", crate::text::path(&ncu_path)))?;
    if table.len() != 1 {
        bail!(
            "ncu measured {} launches of {kernel}, expected 1: {}",
            table.len(),
            ncu::why_no_rows(&o)
        );
    }
    let counters = table.into_values().next().unwrap_or_default();
    // ncu writes REPORT.ncu-rep; the folder goes when `dir` is dropped.
    let dir = tempfile::Builder::new()
        .prefix("tilelab-ptx-")
        .tempdir()
        .context("cannot create a temporary folder for Nsight Compute's report")?;
    let report = dir.path().join("report");
    ctx.progress.start("reading Nsight Compute's source view");
    let paged = ncu::profile_source(&ncu_path, &regex, &ctx.exe, &run.child_args(true), &report);
    ctx.progress.finish();
    let lines = match paged {
        Err(e) => Err(format!("cannot run {}: {e}", crate::text::path(&ncu_path))),
        Ok((page, o)) if page.is_empty() => Err(ncu::why_no_rows(&o)),
        Ok((page, _)) => match source_view::parse_source_page(&page) {
            Err(e) => Err(e.to_string()),
            Ok(ks) => source_kernel(ks, kernel),
        },
    };
    Ok(Measured { counters, lines })
}

/// The kernel's part of the source page: the function named `kernel` (mangled) or its
/// demangled name, or else the page's only function (ncu profiled the one kernel the mangled
/// filter selects; how the page spells a C++ name depends on ncu's `--print-kernel-base`).
fn source_kernel(ks: Vec<KernelLines>, kernel: &str) -> Result<KernelLines, String> {
    let demangled = ptx::report::demangle(kernel);
    let n = ks.len();
    let mut only = None;
    for k in ks {
        if k.function == kernel || k.function == demangled {
            return Ok(k);
        }
        only = Some(k);
    }
    match only {
        Some(k) if n == 1 => Ok(k),
        _ => Err(format!(
            "the source page has no function {kernel} ({n} functions)"
        )),
    }
}

fn row(c: PtxCheck) -> Check {
    let warn = c.warn;
    let check = Check::new(
        "ptx",
        c.name,
        c.simulated,
        c.measured.map_or("-".to_string(), |m| m.to_string()),
        c.pass,
        c.detail,
    );
    if warn {
        check.with_verdict(crate::gpu::verify::Verdict::Warn)
    } else {
        check
    }
}

/// The table rows: the counters, then the lines (or one skipped row saying why there are none).
pub fn checks(sim: &Simulated, m: &Measured) -> Vec<Check> {
    let mut out: Vec<Check> = ptx_check::counter_checks(&sim.totals, &m.counters)
        .into_iter()
        .map(row)
        .collect();
    let booked = match &sim.gmma_lines {
        Ok(g) => ptx_check::book_wgmma_on_sass_lines(&sim.lines, g),
        Err(_) => sim.lines.clone(),
    };
    match &m.lines {
        Ok(k) => out.extend(ptx_check::line_checks(&booked, k).into_iter().map(row)),
        Err(why) => out.push(Check::skipped(
            "ptx",
            "per-line counters",
            sim.lines.len(),
            "-",
            format!("ncu's source view gave none: {why}"),
        )),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::verify::Silent;
    use crate::gpu::verify::Verdict;

    /// The fixture launch of the FA v1→v2 article's FA v1 kernel (`tests/data/ptx/triton_fa_v1_trans.json`).
    fn fa_v1() -> PtxRun {
        PtxRun {
            file: format!(
                "{}/tests/data/ptx/triton_fa_v1_trans.ptx",
                env!("CARGO_MANIFEST_DIR")
            )
            .into(),
            kernel: None,
            grid: [1, 1, 1],
            block: [128, 1, 1],
            args: vec![
                ("6".into(), "64".into()),
                ("tl_fa_v1_param_7".into(), "0.125".into()),
            ],
            tensor_maps: vec![],
            dynamic_smem: Some(32768),
            max_instructions: 10_000_000,
            cluster: None,
            pointer_bytes: POINTER_BYTES,
        }
    }

    /// What `ncu --csv --metrics …` printed for the fixture's launch on the H200, rebuilt in
    /// ncu's CSV format from the measured values of the fixture file.
    fn ncu_csv(fixture: &str) -> String {
        let path = format!(
            "{}/tests/data/ptx/{fixture}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut s = String::from(
            "==PROF== Connected to process 1\nlaunched tl_fa_v1\n\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n",
        );
        for part in ["counters", "sass_counters"] {
            for (k, x) in v[part].as_object().unwrap() {
                if ptx_check::METRICS.contains(&k.as_str()) {
                    let n = x.as_u64().unwrap();
                    s.push_str(&format!("\"0\",\"1\",\"tilelab\",\"127.0.0.1\",\"tl_fa_v1\",\"1\",\"7\",\"(128, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"{k}\",\"\",\"{}\"\n", thousands(n)));
                }
            }
        }
        s
    }

    /// `14336` as ncu prints it: `14,336`.
    fn thousands(n: u64) -> String {
        let d = n.to_string();
        let mut out = String::new();
        for (i, c) in d.chars().enumerate() {
            if i > 0 && (d.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    fn measured(csv: &str) -> Measured {
        let table = ncu::parse_csv(csv);
        assert_eq!(table.len(), 1);
        let page = include_str!("../../../tests/data/ncu_source_page_h200_2026-11-30.csv");
        let lines = source_view::parse_source_page(page)
            .unwrap()
            .into_iter()
            .find(|k| k.function == "tl_fa_v1")
            .ok_or_else(|| "no tl_fa_v1".to_string());
        Measured {
            counters: table.into_values().next().unwrap(),
            lines,
        }
    }

    #[test]
    fn the_fa_v1_fixture_agrees_with_what_the_h200_measured() {
        let mut sim = fa_v1().simulate(&mut Silent).unwrap();
        assert_eq!(sim.kernel, "tl_fa_v1");
        let m = measured(&ncu_csv("triton_fa_v1_trans"));
        // The source-page sample holds three lines of this kernel (163, 402, 403).
        sim.lines.retain(|l| [163, 402, 403].contains(&l.line));
        let rows = checks(&sim, &m);
        let bad: Vec<_> = rows.iter().filter(|c| c.verdict != Verdict::Pass).collect();
        assert!(bad.is_empty(), "{bad:#?}");
        let l402 = rows
            .iter()
            .find(|c| c.name == "line 402 bank conflicts")
            .unwrap();
        assert_eq!(
            (l402.simulated.as_str(), l402.measured.as_str()),
            ("448", "448")
        );
    }

    fn run_of(file: &str, kernel: &str, block: u32, args: &[&str], maps: &[&str]) -> PtxRun {
        PtxRun {
            file: format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR")).into(),
            kernel: Some(kernel.into()),
            grid: [1, 1, 1],
            block: [block, 1, 1],
            args: args
                .iter()
                .map(|a| {
                    let (k, v) = a.split_once('=').unwrap();
                    (k.to_string(), v.to_string())
                })
                .collect(),
            tensor_maps: maps
                .iter()
                .map(|m| crate::ptx::params::parse_tensor_map(m).unwrap())
                .collect(),
            dynamic_smem: None,
            max_instructions: 1_000_000,
            cluster: None,
            pointer_bytes: POINTER_BYTES,
        }
    }

    fn plan_of(r: &PtxRun) -> anyhow::Result<GpuParams> {
        let p = r.prepare()?;
        gpu_plan(&p.prog, &r.launch([0, 0, 0]))
    }

    /// `gemm_device<128>(cute::tuple<int,int,int>, cute::C<128>, Epi, float*, int*)` as nvcc
    /// lays it out (`.align 4 .b8 [12]`, `.align 1 .b8 [1]`, `.align 4 .b8 [12]`, `.u64`,
    /// `.u64`): offsets 0, 12, 16, 32, 40 (PTX ISA, kernel parameters at their alignment);
    /// the struct values little-endian where `--arg` puts them (1.0f32 = 0x3f800000,
    /// 1.0f16 = 0x3c00); the empty struct and the unused `int*` zero; the `float*` (converted
    /// with `cvta.to.global`) the one pointer.
    #[test]
    fn struct_parameters_go_to_the_gpu_as_their_bytes() {
        let r = run_of(
            "ptx_params/struct_params.ptx",
            "gemm",
            32,
            &["0=s32:32,0,1", "2=f32:1", "2+8=f16:1"],
            &[],
        );
        let plan = plan_of(&r).unwrap();
        assert_eq!(plan.pointers, vec![3]);
        assert_eq!(
            plan.layout,
            vec![(0, 12, 4), (12, 1, 1), (16, 12, 4), (32, 8, 8), (40, 8, 8)]
        );
        assert_eq!(&plan.bytes[..12], &[32, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(plan.bytes[12], 0);
        assert_eq!(
            &plan.bytes[16..28],
            &[0, 0, 0x80, 0x3f, 0, 0, 0, 0, 0, 0x3c, 0, 0]
        );
        assert_eq!(&plan.bytes[40..48], &[0; 8]);
        let pb = plan.packed(&r.kernel.clone().unwrap()).unwrap();
        assert_eq!(pb.offsets(), &[0, 12, 16, 32, 40]);
        assert_eq!(pb.size_bytes(), 48);
        assert_eq!(&pb.as_bytes()[16..20], &[0, 0, 0x80, 0x3f]);
        // A struct value the kernel reads and nobody gave: the simulator's one line, before
        // the GPU.
        let r = run_of(
            "ptx_params/struct_params.ptx",
            "gemm",
            32,
            &["2=f32:1"],
            &[],
        );
        let e = plan_of(&r).unwrap_err().to_string();
        assert!(
            e.contains(
                "_param_0 (.b8[12], index 0; reads bytes 0..4 at line 36, 8..12 at line 35)"
            ) && !e.contains('\n'),
            "{e}"
        );
    }

    /// `map_launch(CUtensorMap as .param .align 64 .b8 [128], unsigned *out)`
    /// (`tests/data/ptx_params/map_launch.ptx`): the map's 128 bytes at byte 0, the pointer at
    /// 128. The map is the hand-written TMA pipeline's as the H200 ran it
    /// (`tests/data/ptx_hopper/hand_tma_wgmma_pipe.json`'s `cli`: a 256 x 64 f16 tensor, rows
    /// 512 bytes apart, box 64 x 64, 128B swizzle), over its own 32 KiB (64 rows x 512 bytes)
    /// buffer; the driver gets FLOAT16, rank 2, dims [256, 64], strides [512], box [64, 64],
    /// element strides [1, 1].
    #[test]
    fn tensor_maps_are_planned_and_encoded_as_cu_tensor_map_encode_tiled_takes_them() {
        use cudarc::driver::sys::{CUtensorMapDataType as T, CUtensorMapSwizzle as S};
        let r = run_of(
            "ptx_params/map_launch.ptx",
            "map_launch",
            32,
            &[],
            &["0=f16:256,64:512:64,64:128B"],
        );
        let plan = plan_of(&r).unwrap();
        assert_eq!(plan.maps.len(), 1);
        assert_eq!(plan.maps[0].at, 0);
        assert_eq!(plan.maps[0].global, MapGlobal::Own(64 * 512));
        assert_eq!(plan.pointers, vec![1]);
        assert_eq!(plan.layout, vec![(0, 128, 64), (128, 8, 8)]);
        // The simulator's handle is there until the device encodes the map over it.
        assert_eq!(&plan.bytes[..8], b"tlTMAP\0\x01");
        let e = TensorMapEncode::of(&plan.maps[0].map);
        assert_eq!(
            e,
            TensorMapEncode {
                dtype: T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                rank: 2,
                dims: vec![256, 64],
                strides: vec![512],
                box_dims: vec![64, 64],
                elem_strides: vec![1, 1],
                swizzle: S::CU_TENSOR_MAP_SWIZZLE_128B,
            }
        );
        let pb = plan.packed("map_launch").unwrap();
        assert_eq!(pb.offsets(), &[0, 128]);
        assert_eq!(pb.size_bytes(), 136);
        // A 3-D bf16 map with no swizzle: strides are dimensions 1 and 2.
        let m = crate::sim::tma::TensorMap::parse("bf16:64,32,4:128,4096:64,8,2").unwrap();
        let e = TensorMapEncode::of(&m);
        assert_eq!(
            (e.dtype, e.rank, e.dims, e.strides, e.box_dims, e.swizzle),
            (
                T::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                3,
                vec![64, 32, 4],
                vec![128, 4096],
                vec![64, 8, 2],
                S::CU_TENSOR_MAP_SWIZZLE_NONE
            )
        );
    }

    /// A map the driver would refuse (box rows of 128 f16 = 256 bytes, past the 128-byte
    /// swizzle span: cuTensorMapEncodeTiled's rule) is refused when the flag is read, before
    /// any GPU is looked for: one line naming the value and the rule.
    #[test]
    fn a_map_the_driver_refuses_is_one_line_before_the_gpu() {
        let e = crate::ptx::params::parse_tensor_map("0=f16:256,64:512:128,64:128B")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'0=f16:256,64:512:128,64:128B': boxDim[0] 256 bytes")
                && e.contains("at most 128 bytes (the swizzle span)")
                && !e.contains('\n'),
            "{e}"
        );
    }

    /// The source page is searched by the mangled name, then the demangled one, then its only
    /// function.
    #[test]
    fn the_source_page_kernel_is_found_by_either_name() {
        let k = |f: &str| KernelLines {
            file: String::new(),
            function: f.into(),
            lines: vec![],
        };
        let m = "_Z10tma_kernel3TmaPf";
        assert_eq!(source_kernel(vec![k("a"), k(m)], m).unwrap().function, m);
        assert_eq!(
            source_kernel(vec![k("a"), k("tma_kernel(Tma, float*)")], m)
                .unwrap()
                .function,
            "tma_kernel(Tma, float*)"
        );
        assert_eq!(
            source_kernel(vec![k("tma_kernel")], m).unwrap().function,
            "tma_kernel"
        );
        assert_eq!(
            source_kernel(vec![k("a"), k("b")], m).unwrap_err(),
            "the source page has no function _Z10tma_kernel3TmaPf (2 functions)"
        );
    }

    #[test]
    fn a_disagreement_is_a_failed_row() {
        let sim = fa_v1().simulate(&mut Silent).unwrap();
        let csv = ncu_csv("triton_fa_v1_trans").replace("\"14,336\"", "\"14,335\"");
        let mut m = measured(&csv);
        m.lines = Err("no source page".into());
        let rows = checks(&sim, &m);
        let failed: Vec<_> = rows
            .iter()
            .filter(|c| c.verdict == Verdict::Fail)
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(failed, vec!["shared-load bank conflicts"]);
        assert_eq!(rows.last().unwrap().verdict, Verdict::Skip);
    }
}
