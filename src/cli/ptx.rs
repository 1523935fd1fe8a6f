//! `tilelab ptx FILE.ptx --grid X[,Y,Z] --block X[,Y,Z] …`: runs one CTA of a PTX kernel on
//! the simulator ([`tilelab::ptx`]) and prints, per PTX line with a shared-memory or
//! tensor-core instruction, its executions, wavefronts, ideal and bank conflicts, the worst
//! lines first, and the per-CTA totals in Nsight Compute's counters. `--json`: the
//! [`tilelab::ptx::Report`] (format in `src/ptx/report.rs`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use tilelab::ptx::engine::ALL_WARPS;
use tilelab::ptx::trace::WorstOfLine;
use tilelab::ptx::{self, Launch, Report};

use super::out;

/// Arguments of `tilelab ptx`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "A launch file (--launch FILE.json, format in docs/launch-files.md) holds the PTX file, kernel, grid, block, cluster, dynamic shared memory and every parameter's value; flags given beside --launch override the file's (an --arg or --tensor-map replaces the file's entry for the same parameter and byte offset).\n\nExamples:\n  tilelab ptx --launch tests/data/ptx_hopper/launch/cute_wgmma_tma_sm90.json\n  tilelab ptx --launch tests/data/ptx_hopper/launch/cute_wgmma_tma_sm90.json --cta 1,0,0"
)]
pub struct PtxArgs {
    /// PTX file (nvcc `-ptx`, Triton `.asm["ptx"]`); with --launch, overrides the file's.
    #[arg(required_unless_present = "launch")]
    pub file: Option<PathBuf>,
    /// A launch file (JSON, `{"format": "tilelab-launch", "version": 1, ...}`, see
    /// docs/launch-files.md): the PTX file (relative to the launch file), kernel, grid, block,
    /// cluster, CTA, dynamic shared memory, instruction budget and parameter values. Flags given
    /// beside it override its values.
    #[arg(long, value_name = "FILE.json")]
    pub launch: Option<PathBuf>,
    /// Kernel (`.entry`) to run, needed when the file has several: its name (mangled or
    /// demangled), a part of exactly one kernel's name, or #N (the N-th .entry, from 0).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Grid size in CTAs: X[,Y,Z].
    #[arg(long, value_parser = parse_dim3, required_unless_present = "launch")]
    pub grid: Option<[u32; 3]>,
    /// Block size in threads: X[,Y,Z].
    #[arg(long, value_parser = parse_dim3, required_unless_present = "launch")]
    pub block: Option<[u32; 3]>,
    /// The CTA to simulate: X[,Y,Z] [default: 0,0,0].
    #[arg(long, value_parser = parse_dim3_zero)]
    pub cta: Option<[u32; 3]>,
    /// CTAs per cluster, X[,Y,Z] (default 1,1,1: no cluster, or the kernel's
    /// .reqnctapercluster): every CTA of --cta's cluster runs together (their own shared
    /// memory, shared::cluster addresses, barrier.cluster); the grid must be a multiple of it,
    /// at most 8 CTAs (the portable limit).
    #[arg(long, value_name = "X[,Y,Z]", value_parser = parse_dim3)]
    pub cluster: Option<[u32; 3]>,
    /// A parameter value (repeatable): NAME=VALUE or INDEX=VALUE for a scalar;
    /// NAME[+OFFSET]=TYPE:V[,V...] packs values of one PTX type little-endian from byte OFFSET
    /// (default 0) of a by-value struct (.b8 array), e.g. 0=s32:128,128,512 or 0+16=f16:1.0.
    /// Pointers need none, nor a .b8 parameter the kernel never reads.
    #[arg(long = "arg", value_name = "NAME=VALUE", value_parser = parse_arg)]
    pub args: Vec<(String, String)>,
    /// A CUtensorMap in a parameter (repeatable): NAME[+BYTE_OFFSET]=DTYPE:DIMS:STRIDES:BOX[:SWIZZLE]
    /// with cuTensorMapEncodeTiled's arguments (dims and box innermost first, in elements;
    /// strides in bytes for dims 1..; element strides 1; zero fill out of bounds), e.g.
    /// 3=f16:512,128:1024:64,128:128B. The tensor gets its own zero-filled buffer, or with a
    /// trailing @POINTER that pointer parameter's. The place: 128 bytes at a multiple of 64 of
    /// a .b8 parameter of .align 64 or more.
    #[arg(long = "tensor-map", value_name = "NAME=SPEC", value_parser = parse_tensor_map)]
    pub tensor_maps: Vec<tilelab::ptx::params::TensorMapArg>,
    /// Dynamic shared memory per block, a size: bytes (32768) or K, KB, KiB of 1024 bytes (32K),
    /// M, MB, MiB of 1024 KiB (default: what is left of sm_90's 232,448 bytes per block).
    #[arg(long, value_name = "BYTES", value_parser = parse_smem_bytes)]
    pub dynamic_smem: Option<u32>,
    /// Stop after N warp instructions, or once they cost more than 20·N units (1 per
    /// instruction, 32 per memory instruction, 64 per mma.sync): a runaway loop of any kind ends
    /// within seconds. At most 30000000.
    /// [default: 3000000]
    #[arg(long, value_name = "N", value_parser = parse_max_instructions)]
    pub max_instructions: Option<u64>,
    /// Print only the N lines with the most bank conflicts (then the most wavefronts) in the
    /// per-line table, in line order; 0 prints every line. Totals always count every line.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = super::whole::<usize>("0 (every line) or a number of lines"))]
    pub top: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Compile the PTX for its .target with ptxas (its own line table) and show each PTX line's
    /// SASS (nvdisasm) with how often each instruction issues in the simulated CTA, and the
    /// dynamic SASS counts per family. Looks in $TILELAB_CUDA_BIN (alone, when set), PATH,
    /// $CUDA_HOME/bin, then python3's nvidia/cu13/bin and triton/backends/nvidia/bin; without
    /// them the counts stay PTX-level
    #[arg(long)]
    pub sass: bool,
    /// How --sass compiles the PTX, as the driver does for one load path: link (ptxas -c, as
    /// cuLinkAddData), module (a whole program, as cuModuleLoadDataEx) or auto (the path
    /// `verify --ptx` takes: module for an .extern .shared aligned above 16 bytes, else link)
    #[arg(long, value_name = "PATH", default_value = "auto", requires = "sass", value_parser = ["auto", "link", "module"])]
    pub sass_load: String,
    /// Write the bank grid of line --line's worst execution (most bank conflicts, then most
    /// wavefronts, over every warp of the CTA) to FILE as an SVG picture.
    #[arg(long, value_name = "FILE", requires = "line")]
    pub svg: Option<PathBuf>,
    /// The PTX line (1-based) that --svg draws.
    #[arg(long, value_name = "N", requires = "svg", value_parser = super::whole::<u32>("a line of the PTX file, 1-based"))]
    pub line: Option<u32>,
}

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

/// Runs `tilelab ptx`.
pub fn run(a: PtxArgs) -> anyhow::Result<ExitCode> {
    let r = super::launch::resolve(
        a.launch.as_deref(),
        super::launch::Flags {
            ptx: a.file.clone(),
            kernel: a.kernel.clone(),
            grid: a.grid,
            block: a.block,
            cta: a.cta,
            cluster: a.cluster,
            args: a.args.clone(),
            tensor_maps: a.tensor_maps.clone(),
            dynamic_smem: a.dynamic_smem,
            max_instructions: a.max_instructions,
        },
        "tilelab ptx",
    )?;
    let src = match r.src {
        Some(s) => s,
        None => super::launch::read_ptx(&r.ptx)?,
    };
    let (file, launch) = (&r.ptx, &r.launch);
    let prog = match ptx::report::load(&src, r.kernel.as_deref()) {
        Ok(p) => p,
        Err(e) => bail!("{}: {e}", tilelab::text::path(file)),
    };
    let mut worst = WorstOfLine::new(a.line.unwrap_or(0));
    let observer: Option<(u32, &mut dyn ptx::Observer)> = match a.line {
        Some(_) => Some((ALL_WARPS, &mut worst)),
        None => None,
    };
    let report = match ptx::report::simulate_program(&prog, launch, observer) {
        Ok(r) => r,
        Err(e) => bail!("{}: {e}", tilelab::text::path(file)),
    };
    if let (Some(path), Some(line)) = (&a.svg, a.line) {
        write_svg(path, line, file, &prog, &worst)?;
    }
    let sass = if a.sass {
        let relocatable = match a.sass_load.as_str() {
            "link" => Some(true),
            "module" => Some(false),
            _ => None,
        };
        match sass_report(&src, &prog, launch, &report, relocatable) {
            Ok(s) => Some(s),
            Err(e) => {
                out::note(format_args!(
                    "SASS counts are PTX-level (one SASS instruction per PTX instruction of a class): {e:#}"
                ));
                None
            }
        }
    } else {
        None
    };
    if a.json {
        let mut v = serde_json::to_value(&report)?;
        if let Some(s) = &sass {
            v["totals"]["sass_from"] = s.from.clone().into();
            v["totals"]["sass_executed"] = serde_json::to_value(&s.counts)?;
            v["sass"] = serde_json::to_value(s)?;
            // Each counted line also carries its own SASS (`sass` there is the class name).
            let by: std::collections::BTreeMap<u32, &tilelab::sass::report::SassLine> =
                s.lines.iter().map(|l| (l.line, l)).collect();
            if let Some(lines) = v["lines"].as_array_mut() {
                for l in lines {
                    let n = l["line"].as_u64().and_then(|n| u32::try_from(n).ok());
                    if let Some(sl) = n.and_then(|n| by.get(&n)) {
                        l["sass_instructions"] = serde_json::to_value(&sl.sass)?;
                    }
                }
            }
        }
        out::emit_json(&v)?;
    } else {
        let mut text = render(&report, launch, a.top);
        if let Some(s) = &sass {
            text.push_str(&render_sass(s));
        }
        out::emit(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// ptxas's SASS of the kernel with the run's dynamic counts.
fn sass_report(
    src: &str,
    prog: &ptx::decode::Program,
    launch: &ptx::Launch,
    report: &Report,
    relocatable: Option<bool>,
) -> anyhow::Result<tilelab::sass::report::SassReport> {
    let tools = tilelab::sass::CudaTools::find()?;
    let k = tilelab::sass::of_ptx(&tools, src, &prog.name, relocatable)?;
    let l = tilelab::sass::report::replay_launch(prog, launch, &k.arch);
    Ok(tilelab::sass::report::build(
        src,
        &k,
        &report.reached,
        l.as_ref().map_err(String::as_str),
    ))
}

/// The SASS section of the text report: each PTX line with its SASS and their issues.
fn render_sass(s: &tilelab::sass::report::SassReport) -> String {
    let mut o = String::new();
    outln!(o);
    outln!(
        o,
        "{}",
        out::bold(&format!(
            "SASS ({}, {}, {}; {}): each PTX line, then its SASS with warp-level issues ({})",
            s.from, s.mode, s.arch, s.tool, s.counted_by
        ))
    );
    for l in &s.lines {
        if l.line == 0 {
            outln!(o, "{:>6}  (no PTX line)", "-");
        } else {
            outln!(o, "{:>6}  {:>10}  {}", l.line, l.reached, l.ptx);
        }
        for r in &l.sass {
            outln!(
                o,
                "        {:>10}    /*{:04x}*/ {}",
                r.executions,
                r.addr,
                r.text
            );
        }
    }
    let c = &s.counts;
    let fam = |f: &str| c.families.get(f).copied().unwrap_or(0);
    let off = |f: &str| match c.never_true.get(f) {
        Some(n) => format!(" ({n} @!PT)"),
        None => String::new(),
    };
    outln!(o);
    outln!(
        o,
        "SASS executed ({}): smsp__inst_executed {}; LDS {}{} STS {}{} LDSM {} STSM {} HMMA {} HGMMA {} LDGSTS {} BAR {}",
        s.from,
        c.inst_executed,
        fam("LDS"),
        off("LDS"),
        fam("STS"),
        off("STS"),
        fam("LDSM"),
        fam("STSM"),
        fam("HMMA"),
        fam("HGMMA"),
        fam("LDGSTS"),
        fam("BAR")
    );
    o
}

/// Writes the bank grid of `line`'s worst execution; errors name the line and why it has no
/// picture (never ran, an mma, a cp.async the model does not cost, not a shared access).
fn write_svg(
    path: &std::path::Path,
    line: u32,
    file: &std::path::Path,
    prog: &ptx::decode::Program,
    w: &WorstOfLine,
) -> anyhow::Result<()> {
    let Some((warp, r)) = &w.worst else {
        if w.saw_mma {
            bail!(
                "--line {line}: an mma reads registers only; there is no shared-memory access to draw"
            );
        }
        let mut shared: Vec<u32> = prog
            .insts
            .iter()
            .filter(|i| {
                use ptx::report::Class;
                ptx::report::class_of(&i.op)
                    .is_some_and(|c| !matches!(c, Class::Hmma | Class::Gmma | Class::Tma))
            })
            .map(|i| i.line)
            .collect();
        shared.dedup();
        bail!(
            "--line {line}: no shared-memory instruction of {} ran there; lines with one: {}",
            tilelab::text::path(file),
            tilelab::text::list_max(&shared, 12)
        );
    };
    let req = r
        .step
        .request
        .as_ref()
        .context("a shared-memory step has a request")?;
    let rep = tilelab::sim::bank::schedule(req);
    if let Some(why) = rep.not_modelled {
        bail!("--line {line}: the request model does not cost this cp.async ({why}); no picture");
    }
    let text = prog.texts.get(r.pc as usize).cloned().unwrap_or_default();
    let title = format!(
        "{} line {line}, warp {warp} (worst of {}): {} wavefronts, {} bank conflicts · {text}",
        file.file_name()
            .map_or_else(|| tilelab::text::path(file), tilelab::text::escape_os),
        out::plural(w.executions, "execution"),
        rep.wavefront_count(),
        rep.bank_conflicts()
    );
    std::fs::write(path, tilelab::viz::bank_grid(&rep, &title))
        .with_context(|| format!("cannot write SVG file '{}'", tilelab::text::path(path)))?;
    out::note(format_args!(
        "wrote {}: line {line}, warp {warp}: {} wavefronts, {} bank conflicts (worst of {})",
        tilelab::text::path(path),
        rep.wavefront_count(),
        rep.bank_conflicts(),
        out::plural(w.executions, "execution")
    ));
    Ok(())
}

fn dims(d: [u32; 3]) -> String {
    format!("({},{},{})", d[0], d[1], d[2])
}

/// The text report; `top` > 0 keeps only that many lines (most bank conflicts, then most
/// wavefronts) in the per-line table.
fn render(r: &Report, l: &Launch, top: usize) -> String {
    let mut o = String::new();
    let t = &r.totals;
    let threads = l.block.iter().product::<u32>();
    outln!(
        o,
        "kernel {}: CTA {} of grid {}, block {} ({}); {} warp instructions; shared memory {} bytes, {} touched",
        r.kernel_demangled,
        dims(r.cta),
        dims(l.grid),
        dims(r.block),
        out::plural(u64::from(threads.div_ceil(32)), "warp"),
        t.warp_instructions,
        t.smem_bytes,
        t.smem_touched
    );
    if r.ctas.len() > 1 {
        outln!(
            o,
            "cluster {}: its {} CTAs ran together, each with its own shared memory; every count is their sum: {}",
            dims(r.cluster),
            r.ctas.len(),
            r.ctas
                .iter()
                .map(|c| format!(
                    "CTA {} (rank {}) {} warp instructions",
                    dims(c.cta),
                    c.rank,
                    c.totals.warp_instructions
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut worst: Vec<_> = r.lines.iter().filter(|x| x.bank_conflicts > 0).collect();
    worst.sort_by(|a, b| {
        b.bank_conflicts
            .cmp(&a.bank_conflicts)
            .then(a.line.cmp(&b.line))
    });
    outln!(o);
    let unmodelled = r.lines.iter().filter(|x| x.not_modelled > 0).count();
    if worst.is_empty() && unmodelled > 0 {
        outln!(
            o,
            "no bank conflicts on any line the model costs ({} not modelled: see the table)",
            out::plural(unmodelled as u64, "line")
        );
    } else if worst.is_empty() {
        outln!(o, "no bank conflicts on any line");
    } else {
        outln!(o, "{}", out::bold("worst lines (bank conflicts):"));
        for x in worst.iter().take(5) {
            // N-way as Nsight Compute and the FA v1→v2 article count it: wavefronts per request.
            let ways =
                tilelab::sim::stats::ways(x.wavefronts, x.ideal, x.executions - x.not_modelled)
                    .map(|w| format!(", {w}"))
                    .unwrap_or_default();
            let runs = if x.not_modelled > 0 {
                format!(
                    "{} of {} executions (the rest not modelled)",
                    x.executions - x.not_modelled,
                    x.executions
                )
            } else {
                out::plural(x.executions, "execution")
            };
            outln!(
                o,
                "  line {}: {} in {runs}{ways}  {}",
                x.line,
                out::plural(x.bank_conflicts, "conflict"),
                x.ptx
            );
        }
    }
    outln!(o);
    outln!(
        o,
        "{:>6}  {:<6} {:>10} {:>11} {:>9} {:>9}  ptx",
        "line",
        "sass",
        "executions",
        "wavefronts",
        "ideal",
        "conflicts"
    );
    let shown: Vec<_> = if top > 0 && top < r.lines.len() {
        let mut by_cost: Vec<_> = r.lines.iter().collect();
        by_cost.sort_by(|a, b| {
            (b.bank_conflicts, b.wavefronts, a.line).cmp(&(a.bank_conflicts, a.wavefronts, b.line))
        });
        by_cost.truncate(top);
        by_cost.sort_by_key(|x| x.line);
        by_cost
    } else {
        r.lines.iter().collect()
    };
    for x in &shown {
        // A line none of whose executions the model costs has no counts: `-`, not 0.
        let none = x.not_modelled > 0 && x.not_modelled == x.executions;
        let num = |v: u64, w: usize| {
            if none {
                format!("{:>w$}", "-")
            } else {
                format!("{v:>w$}")
            }
        };
        let c = if x.bank_conflicts > 0 {
            out::paint(&format!("{:>9}", x.bank_conflicts), out::BAD)
        } else {
            num(x.bank_conflicts, 9)
        };
        // Lines with an execution the model does not cost: how many, and the line's bounds on
        // ncu's SASS-attributed count (every execution, costed or not).
        let of = |n: u64| {
            if n == x.executions {
                out::plural(n, "execution")
            } else {
                format!("{n} of {} executions", x.executions)
            }
        };
        let note = match (x.not_modelled, x.sass_wavefronts) {
            (0, _) => String::new(),
            (n, Some([lo, hi])) => format!(
                "  [{} not modelled; the line's SASS-attributed count: {}]",
                of(n),
                span(lo, hi)
            ),
            (n, None) => format!("  [{} not modelled]", of(n)),
        };
        outln!(
            o,
            "{:>6}  {:<6} {:>10} {} {} {c}  {}{note}",
            x.line,
            x.sass,
            x.executions,
            num(x.wavefronts, 11),
            num(x.ideal, 9),
            x.ptx
        );
    }
    if shown.len() < r.lines.len() {
        outln!(
            o,
            "  ({} of {} lines shown: --top {top}; totals below count every line)",
            shown.len(),
            r.lines.len()
        );
    }
    outln!(o);
    outln!(
        o,
        "shared loads (LDS+LDSM): {} wavefronts, {} bank conflicts; shared stores (STS+STSM): {} wavefronts, {} bank conflicts; cp.async shared side: {}",
        t.shared_ld_wavefronts,
        t.shared_ld_bank_conflicts,
        t.shared_st_wavefronts,
        t.shared_st_bank_conflicts,
        match t.ldgsts_wavefronts {
            Some(w) => format!("{w} wavefronts"),
            None => {
                let spread = t.ldgsts_not_modelled - t.ldgsts_unbounded;
                let mut parts = Vec::new();
                if spread > 0 {
                    parts.push(format!("{spread} with spread or repeated sources"));
                }
                if t.ldgsts_unbounded > 0 {
                    parts.push(format!("{} .cg or zero-filled", t.ldgsts_unbounded));
                }
                format!(
                    "not modelled for {} ({}; see docs/wavefront-model.md){}",
                    out::plural(t.ldgsts_not_modelled, "execution"),
                    parts.join(", "),
                    match t.ldgsts_sass_wavefronts {
                        Some([lo, hi]) => format!(
                            "; ncu's SASS-attributed count (..._op_ldgsts) {}",
                            span(lo, hi)
                        ),
                        None => String::new(),
                    }
                )
            }
        }
    );
    let s = &t.sass;
    outln!(
        o,
        "SASS: LDS {} STS {} LDSM {} STSM {} HMMA {} LDGSTS {}{}",
        s.LDS,
        s.STS,
        s.LDSM,
        s.STSM,
        s.HMMA,
        s.LDGSTS,
        if t.atoms > 0 {
            format!(" ATOMS {}", t.atoms)
        } else {
            String::new()
        }
    );
    if s.GMMA > 0 {
        outln!(
            o,
            "wgmma: {} warp executions (smsp__inst_executed_pipe_tensor_op_gmma; in HMMA too): {}; {} gmma operand wavefronts (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma, not in the ld/st wavefronts)",
            s.GMMA,
            t.gmma_shapes
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            t.gmma_wavefronts
        );
    }
    if t.tma_ld + t.tma_st > 0 {
        outln!(
            o,
            "TMA: UTMALDG {} UTMASTG {} UBLKCP {} UTMAREDG+UBLKRED {}; loads {} (smsp__inst_executed_op_tma_ld_pred_on_any), {} bytes (l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld); stores {} (smsp__inst_executed_op_tma_st_pred_on_any), {} bytes (l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st); no l1tex shared wavefronts",
            s.UTMALDG,
            s.UTMASTG,
            s.UBLKCP,
            s.UTMAREDG,
            t.tma_ld,
            t.tma_ld_bytes,
            t.tma_st,
            t.tma_st_bytes
        );
    }
    if t.dshared_st + t.dshared_ld + t.dshared_atom > 0 {
        outln!(
            o,
            "distributed shared memory (another CTA's): stores {} (smsp__sass_inst_executed_op_dshared_st), {} bytes (l1tex__t_bytes_pipe_lsu_mem_dshared_op_st); loads {}; atomics {}; not in the shared wavefronts or STS/LDS",
            t.dshared_st,
            t.dshared_st_bytes,
            t.dshared_ld,
            t.dshared_atom
        );
    }
    // A long table scrolls the worst lines off the screen: name the worst one again last.
    if shown.len() > 20
        && let Some(w) = worst.first()
    {
        outln!(
            o,
            "worst line: {} ({} in {}; the list at the top has the others, --top N shortens the table)",
            w.line,
            out::plural(w.bank_conflicts, "conflict"),
            out::plural(w.executions, "execution")
        );
    }
    o
}

/// `lo` and `hi` as a bound in words: "7 wavefronts" or "between 5 and 9 wavefronts".
fn span(lo: u64, hi: u64) -> String {
    if lo == hi {
        out::plural(lo, "wavefront")
    } else {
        format!("between {lo} and {hi} wavefronts")
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
