//! `tilelab verify --ptx FILE [launch flags]`: a PTX kernel simulated ([`crate::ptx`]) and run on
//! the GPU with the same launch, compared counter by counter and per PTX line
//! ([`crate::gpu::ptx_check`]).
//!
//! * **Simulated**: every CTA of the grid, one after another, summed (Nsight Compute counts the
//!   whole launch); each pointer parameter its own zero-filled buffer.
//! * **Measured**: this executable, run by ncu with the hidden `--probe-ptx`, JIT-compiles the PTX
//!   through the driver's linker ([`Gpu::jit_ptx`]), gives each pointer parameter its own
//!   zero-filled device buffer of `--pointer-bytes` (the simulator's buffers have no size; the
//!   kernel must stay inside these), and launches the grid once. Two ncu runs: the counters of
//!   [`ptx_check::METRICS`], and `--section SourceCounters` with the PTX given its own line table
//!   ([`source_view::with_own_line_info`]) so the source page's rows are the PTX file's lines.
//!
//! This is the path the fixtures of `tests/data/ptx/` were measured on
//! (`scripts/ptx_fixtures/harness.py`).

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use cudarc::driver::LaunchConfig;

use super::{Check, Context};
use crate::gpu::device::Gpu;
use crate::gpu::launch::{DeviceBuffer, PtxKernel};
use crate::gpu::ncu;
use crate::gpu::params::{Param, ParamBuffer};
use crate::gpu::ptx_check::{self, PtxCheck, SimLine, SimTotals};
use crate::gpu::source_view::{self, KernelLines};
use crate::ptx::{self, Launch};

/// The most CTAs `verify --ptx` simulates (the grid is simulated CTA by CTA).
pub const MAX_CTAS: u64 = 4096;

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
    /// `--tensor-map`s (simulated; not yet encoded through the driver: [`probe`] refuses them).
    pub tensor_maps: Vec<crate::ptx::params::TensorMapArg>,
    /// Dynamic shared memory, bytes (`None`: 0 on the GPU; the simulator's default).
    pub dynamic_smem: Option<u32>,
    /// The simulator's per-CTA instruction budget.
    pub max_instructions: u64,
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
            .and_then(|_| ptx::params::launch_params(&prog, &l))
            .and_then(|_| ptx::params::check_smem(&prog, &l))
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
        let mut totals = SimTotals::default();
        let mut lines: std::collections::BTreeMap<u32, SimLine> = std::collections::BTreeMap::new();
        progress.start(&format!("simulating {n} CTA(s) of {}", prog.name));
        let add = |a: u64, b: u64| a.checked_add(b).context("simulated counts overflow u64");
        for z in 0..self.grid[2] {
            for y in 0..self.grid[1] {
                for x in 0..self.grid[0] {
                    let r = ptx::report::simulate_program(prog, &self.launch([x, y, z]), None)
                        .map_err(|e| anyhow::anyhow!("{file}: CTA ({x},{y},{z}): {e}"));
                    let r = match r {
                        Ok(r) => r,
                        Err(e) => {
                            progress.finish();
                            return Err(e);
                        }
                    };
                    let t = &r.totals;
                    totals = SimTotals {
                        shared_ld_wavefronts: add(
                            totals.shared_ld_wavefronts,
                            t.shared_ld_wavefronts,
                        )?,
                        shared_st_wavefronts: add(
                            totals.shared_st_wavefronts,
                            t.shared_st_wavefronts,
                        )?,
                        shared_ld_bank_conflicts: add(
                            totals.shared_ld_bank_conflicts,
                            t.shared_ld_bank_conflicts,
                        )?,
                        shared_st_bank_conflicts: add(
                            totals.shared_st_bank_conflicts,
                            t.shared_st_bank_conflicts,
                        )?,
                        lds: add(totals.lds, t.sass.LDS)?,
                        sts: add(totals.sts, t.sass.STS)?,
                        ldsm: add(totals.ldsm, t.sass.LDSM)?,
                        stsm: add(totals.stsm, t.sass.STSM)?,
                        hmma: add(totals.hmma, t.sass.HMMA)?,
                        ldgsts: add(totals.ldgsts, t.sass.LDGSTS)?,
                    };
                    for l in &r.lines {
                        let e = lines.entry(l.line).or_insert_with(|| SimLine {
                            line: l.line,
                            ptx: l.ptx.clone(),
                            ..SimLine::default()
                        });
                        e.executions = add(e.executions, l.executions)?;
                        e.wavefronts = add(e.wavefronts, l.wavefronts)?;
                        e.bank_conflicts = add(e.bank_conflicts, l.bank_conflicts)?;
                    }
                }
            }
        }
        progress.finish();
        Ok(Simulated {
            kernel: prog.name.clone(),
            ctas: n,
            totals,
            lines: lines.into_values().collect(),
        })
    }
}

/// The packed parameters of `prog` for the GPU: each pointer parameter the address of its own
/// zero-filled buffer of `pointer_bytes`, every other one the value `args` give it (by name or
/// index), read by its PTX type as the simulator reads it. Returns the buffers too (they must
/// outlive the launch).
///
/// # Errors
/// A value for a pointer, a missing or unreadable value, an unknown parameter name, an array
/// parameter; a driver error allocating.
fn gpu_params(
    gpu: &Gpu,
    prog: &crate::ptx::decode::Program,
    args: &[(String, String)],
    pointer_bytes: u64,
) -> anyhow::Result<(ParamBuffer, Vec<DeviceBuffer>)> {
    let mut given: Vec<Option<&str>> = vec![None; prog.params.len()];
    // The driver side passes one scalar per parameter (no struct bytes yet).
    if let Some((k, v)) = args
        .iter()
        .find(|(k, v)| k.contains('+') || v.contains(':'))
    {
        bail!(
            "--arg {k}={v}: verify --ptx does not yet pass struct bytes (NAME[+OFFSET]=TYPE:V,...) to the GPU; `tilelab ptx` simulates them"
        );
    }
    for (k, v) in args {
        let i = prog
            .params
            .iter()
            .position(|p| &p.name == k)
            .or_else(|| k.parse::<usize>().ok().filter(|&i| i < prog.params.len()))
            .with_context(|| {
                format!(
                    "--arg {k}={v}: kernel '{}' has no parameter '{k}'",
                    prog.name
                )
            })?;
        given[i] = Some(v);
    }
    let bytes =
        usize::try_from(pointer_bytes).context("--pointer-bytes does not fit this machine")?;
    let mut pb = ParamBuffer::new();
    let mut bufs = Vec::new();
    for (i, p) in prog.params.iter().enumerate() {
        let bad = |why: &str| anyhow::anyhow!("parameter {i} '{}' (.{}): {why}", p.name, p.ty);
        if p.pointer {
            if given[i].is_some() {
                return Err(bad(
                    "a pointer takes no value (it gets its own zero-filled buffer)",
                ));
            }
            let b = DeviceBuffer::zeroed(gpu, bytes)?;
            pb.push(Param::U64(b.addr(gpu)));
            bufs.push(b);
            continue;
        }
        // A 64-bit parameter the kernel never reads (an unused pointer) needs no value, as in
        // the simulator (`ptx::params::launch_params`); a struct cannot be passed yet.
        if given[i].is_none()
            && p.reads.is_empty()
            && matches!(p.ty.as_str(), "u64" | "s64" | "b64")
        {
            pb.push(Param::U64(0));
            continue;
        }
        if p.ty == "b8" && p.size > 1 {
            return Err(bad(
                "verify --ptx does not yet pass by-value struct parameters to the GPU; `tilelab ptx` simulates them",
            ));
        }
        let v =
            given[i].ok_or_else(|| bad("no value; give --arg NAME=VALUE or --arg INDEX=VALUE"))?;
        let int = || -> anyhow::Result<i128> {
            let t = v.trim();
            let (neg, t) = t.strip_prefix('-').map_or((false, t), |r| (true, r));
            let n = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(h) => i128::from_str_radix(h, 16).ok(),
                None => t.parse::<i128>().ok(),
            }
            .ok_or_else(|| bad(&format!("'{v}' is not an integer (decimal or 0x hex)")))?;
            Ok(if neg { -n } else { n })
        };
        let fits = |n: i128, lo: i128, hi: i128| {
            if (lo..=hi).contains(&n) {
                Ok(n)
            } else {
                Err(bad(&format!("{v} is out of range ({lo}..={hi})")))
            }
        };
        let param = match (p.ty.as_str(), p.size) {
            ("f32", 4) => Param::F32(
                v.trim()
                    .parse()
                    .map_err(|_| bad(&format!("'{v}' is not a number")))?,
            ),
            ("f64", 8) => Param::F64(
                v.trim()
                    .parse()
                    .map_err(|_| bad(&format!("'{v}' is not a number")))?,
            ),
            ("s32", 4) => Param::S32(fits(int()?, i32::MIN.into(), i32::MAX.into())? as i32),
            ("s64", 8) => Param::S64(fits(int()?, i64::MIN.into(), i64::MAX.into())? as i64),
            (_, 1) => Param::U8(fits(int()?, i8::MIN.into(), u8::MAX.into())? as u8),
            (_, 2) => Param::U16(fits(int()?, i16::MIN.into(), u16::MAX.into())? as u16),
            (_, 4) => Param::U32(fits(int()?, i32::MIN.into(), u32::MAX.into())? as u32),
            (_, 8) => Param::U64(fits(int()?, i64::MIN.into(), u64::MAX.into())? as u64),
            _ => return Err(bad("this parameter type is not supported by verify --ptx")),
        };
        pb.push(param);
    }
    let sizes: Vec<usize> = prog.params.iter().map(|p| p.size as usize).collect();
    pb.check_declared(&prog.name, &sizes)?;
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
    let cubin = gpu.jit_ptx(&name, &text, line_info)?;
    let module = gpu.load_cubin(&name, cubin)?;
    let k = PtxKernel::load(&module, &prog.name)?;
    let smem = run.dynamic_smem.unwrap_or(0);
    if smem > DEFAULT_DYNAMIC_SMEM_LIMIT {
        k.set_max_dynamic_shared(smem)?;
    }
    if let Some(m) = run.tensor_maps.first() {
        bail!(
            "--tensor-map {}: verify --ptx does not yet encode tensor maps through the driver (cuTensorMapEncodeTiled); `tilelab ptx` simulates them",
            m.text()
        );
    }
    let (params, bufs) = gpu_params(gpu, &prog, &run.args, run.pointer_bytes)?;
    let cfg = LaunchConfig {
        grid_dim: (run.grid[0], run.grid[1], run.grid[2]),
        block_dim: (run.block[0], run.block[1], run.block[2]),
        shared_mem_bytes: smem,
    };
    // SAFETY: the parameters follow the kernel's declaration (checked sizes, in order); every
    // pointer addresses its own live zero-filled buffer of `pointer_bytes`, which the user
    // vouches is large enough (as for the simulator's buffers, addresses must not depend on
    // loaded data for the comparison to mean anything).
    unsafe { k.launch(gpu, cfg, &params) }?;
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
    let regex = format!("^{kernel}$");
    ctx.progress
        .start("measuring the launch with Nsight Compute");
    let counted = ncu::profile(
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
    let report = std::env::temp_dir().join(format!("tilelab-ptx-{}", std::process::id()));
    ctx.progress.start("reading Nsight Compute's source view");
    let paged = ncu::profile_source(&ncu_path, &regex, &ctx.exe, &run.child_args(true), &report);
    ctx.progress.finish();
    let lines = match paged {
        Err(e) => Err(format!("cannot run {}: {e}", crate::text::path(&ncu_path))),
        Ok((page, o)) if page.is_empty() => Err(ncu::why_no_rows(&o)),
        Ok((page, _)) => match source_view::parse_source_page(&page) {
            Err(e) => Err(e.to_string()),
            Ok(ks) => ks
                .into_iter()
                .find(|k| k.function == kernel)
                .ok_or_else(|| format!("the source page has no function {kernel}")),
        },
    };
    Ok(Measured { counters, lines })
}

fn row(c: PtxCheck) -> Check {
    Check::new(
        "ptx",
        c.name,
        c.simulated,
        c.measured.map_or("-".to_string(), |m| m.to_string()),
        c.pass,
        c.detail,
    )
}

/// The table rows: the counters, then the lines (or one skipped row saying why there are none).
pub fn checks(sim: &Simulated, m: &Measured) -> Vec<Check> {
    let mut out: Vec<Check> = ptx_check::counter_checks(&sim.totals, &m.counters)
        .into_iter()
        .map(row)
        .collect();
    match &m.lines {
        Ok(k) => out.extend(ptx_check::line_checks(&sim.lines, k).into_iter().map(row)),
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
