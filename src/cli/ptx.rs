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
    /// The launch: kernel, grid, block, cluster, parameters (or a launch file holding them).
    #[command(flatten)]
    pub launch: super::launch::LaunchArgs,
    /// The CTA to simulate: X[,Y,Z] [default: 0,0,0]; with --cluster, every CTA of its
    /// cluster runs.
    #[arg(long, value_name = "X[,Y,Z]", value_parser = super::launch::parse_dim3_zero)]
    pub cta: Option<[u32; 3]>,
    /// Simulate many CTAs instead of one and report their sum (with `all`: Nsight Compute's
    /// whole-launch counters), each counter's spread over the CTAs (min, median, max) and the
    /// busiest CTA: all, X,Y[,Z] (one CTA), N (a linear index x + y*gx + z*gx*gy), A..B or
    /// A..=B. With --cluster, every CTA of each cluster holding a selected one runs.
    #[arg(long, value_name = "SET", value_parser = ptx::grid::parse_ctas, conflicts_with_all = ["cta", "svg", "line"])]
    pub ctas: Option<ptx::grid::CtaSet>,
    /// Threads simulating CTAs at once with --ctas [default: the CPUs available]
    #[arg(long, value_name = "N", requires = "ctas", value_parser = super::whole_in::<usize>(1, 1024))]
    pub jobs: Option<usize>,
    /// Print only the N lines with the most bank conflicts (then the most wavefronts) in the
    /// per-line table, in line order; 0 prints every line. Totals always count every line.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = super::whole::<usize>("0 (every line) or a number of lines"))]
    pub top: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Sum the per-line counts of each source line (the `.file`/`.loc` line table Triton and
    /// `nvcc -lineinfo` write): executions, wavefronts, bank conflicts and SASS counts, with the
    /// line's text when the source file is readable. With --json: a `by_source` array.
    #[arg(long)]
    pub by_source: bool,
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
    #[arg(long, value_name = "MODE", default_value = "auto", requires = "sass", value_parser = ["auto", "link", "module"])]
    pub sass_load: String,
    /// Write the bank grid of line --line's worst execution (most bank conflicts, then most
    /// wavefronts, over every warp of the CTA) to FILE as an SVG picture.
    #[arg(long, value_name = "FILE", requires = "line")]
    pub svg: Option<PathBuf>,
    /// The PTX line (1-based) that --svg draws.
    #[arg(long, value_name = "N", requires = "svg", value_parser = super::whole::<u32>("a line of the PTX file, 1-based"))]
    pub line: Option<u32>,
}

/// Runs `tilelab ptx`.
pub fn run(a: PtxArgs) -> anyhow::Result<ExitCode> {
    let r = super::launch::resolve(
        &super::launch::Flags {
            ptx: a.file.clone(),
            cta: a.cta,
            launch: a.launch.clone(),
        },
        "tilelab ptx",
    )?;
    let src = match r.src {
        Some(s) => s,
        None => super::launch::read_ptx(&r.ptx)?,
    };
    let (file, launch) = (&r.ptx, &r.launch);
    let prog = match r.prog {
        Some(p) => p,
        None => match ptx::report::load(&src, r.kernel.as_deref()) {
            Ok(p) => p,
            Err(e) => bail!("{}: {e}", tilelab::text::path(file)),
        },
    };
    if let Some(set) = &a.ctas {
        return run_grid(&a, set, &src, &prog, file, launch);
    }
    let mut worst = WorstOfLine::new(a.line.unwrap_or(0));
    let observer: Option<(u32, &mut dyn ptx::Observer)> = match a.line {
        Some(_) => Some((ALL_WARPS, &mut worst)),
        None => None,
    };
    let mut report = match ptx::report::simulate_program(&prog, launch, observer) {
        Ok(r) => r,
        Err(e) => bail!("{}: {e}", tilelab::text::path(file)),
    };
    if let (Some(path), Some(line)) = (&a.svg, a.line) {
        write_svg(path, line, file, &prog, &worst)?;
    }
    // Why `--sass` fell back to the PTX-level counts (`totals.sass_error` in the JSON).
    let (kernel_sass, sass_error) = kernel_sass(&a, &src, &prog);
    let sass = kernel_sass.map(|k| {
        let l = tilelab::sass::report::replay_launch(&prog, launch, &k.arch);
        tilelab::sass::report::build(
            &src,
            &k,
            (&report.reached, &report.map_lines),
            &report.cta_reached,
            l.as_deref().map_err(String::as_str),
        )
    });
    // What ptxas's expansion of tensor-map instructions adds to the totals.
    if let Some(s) = &sass {
        s.expansion.add_to(&mut report.totals);
    }
    let grouped = a
        .by_source
        .then(|| source_rows(&report, &prog, sass.as_ref(), file));
    if a.json {
        // The lines apart: without --sass (which adds to each line's JSON) they are written
        // straight, sorted as a `Value` sorts them (`LineReport`'s own `Serialize`), not
        // through a `Value` each.
        let mut report = report;
        let lines = std::mem::take(&mut report.lines);
        let mut v = serde_json::to_value(&report)?;
        if let Some(g) = &grouped {
            v["by_source"] = serde_json::to_value(&g.rows)?;
            v["source_files"] = serde_json::to_value(&g.files)?;
        }
        if let Some(e) = &sass_error {
            v["totals"]["sass_error"] = e.clone().into();
        }
        if let Some(s) = &sass {
            v["lines"] = serde_json::to_value(&lines)?;
            add_sass_json(&mut v, s)?;
            out::emit_json(&v)?;
        } else {
            out::emit_json(&WithLines {
                v: &v,
                lines: &lines,
            })?;
        }
    } else {
        let mut text = render(&report, launch, a.top);
        if let Some(s) = &sass {
            text.push_str(&render_sass(s));
        }
        if let Some(g) = &grouped {
            text.push_str(&render_by_source(g, sass.is_some()));
        }
        out::emit(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A report's JSON object `v` with its `lines` entry written from `lines`: the same text as
/// `v` holding `serde_json::to_value(lines)` there (its entries in `v`'s order, sorted; a
/// line's keys sorted by [`ptx::report::LineReport`]'s `Serialize`).
struct WithLines<'a> {
    v: &'a serde_json::Value,
    lines: &'a [ptx::report::LineReport],
}

impl serde::Serialize for WithLines<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Some(o) = self.v.as_object() else {
            return serde::Serialize::serialize(self.v, s);
        };
        let mut m = s.serialize_map(Some(o.len()))?;
        for (k, x) in o {
            if k == "lines" {
                m.serialize_entry(k, self.lines)?;
            } else {
                m.serialize_entry(k, x)?;
            }
        }
        m.end()
    }
}

/// Puts the SASS report `s` into a report's JSON `v`: `totals.sass_from`,
/// `totals.sass_executed`, `sass`, and each counted line's `sass_instructions`.
fn add_sass_json(
    v: &mut serde_json::Value,
    s: &tilelab::sass::report::SassReport,
) -> anyhow::Result<()> {
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
    Ok(())
}

/// `tilelab ptx --ctas SET`: the selected CTAs simulated across threads
/// ([`ptx::grid::run`]), with a progress bar on a terminal; the summed report, the spread and
/// the busiest CTA; with --sass, ptxas's SASS replayed per CTA and summed.
fn run_grid(
    a: &PtxArgs,
    set: &ptx::grid::CtaSet,
    src: &str,
    prog: &ptx::decode::Program,
    file: &std::path::Path,
    launch: &Launch,
) -> anyhow::Result<ExitCode> {
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    // Why `--sass` fell back to the PTX-level counts (`totals.sass_error` in the JSON).
    let (kernel_sass, sass_error) = kernel_sass(a, src, prog);
    let planned = ptx::grid::planned_ctas(prog, launch, set);
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(planned),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{bar:40} {pos}/{len} CTAs, {elapsed} (about {eta} left)",
    ) {
        bar.set_style(style);
    }
    let opts = ptx::grid::GridOptions {
        jobs,
        ..ptx::grid::GridOptions::default()
    };
    let progress = |d: u64| bar.set_position(d);
    let extra = kernel_sass
        .as_ref()
        .map(|k| tilelab::sass::report::GridSass { prog, sass: k });
    let result = ptx::grid::run(prog, launch, set, &opts, &progress, &extra);
    bar.finish_and_clear();
    let mut g = match result {
        Ok(g) => g,
        Err(e) => bail!("{}: {e}", tilelab::text::path(file)),
    };
    let sass = kernel_sass.as_ref().map(|k| {
        tilelab::sass::report::build_grid(
            src,
            k,
            &g.report.reached,
            &g.report.map_lines,
            std::mem::take(&mut g.extra_vector),
            &g.extra_notes,
            g.ctas_simulated,
        )
    });
    if let Some(s) = &sass {
        s.expansion.add_to(&mut g.report.totals);
    }
    let grouped = a
        .by_source
        .then(|| source_rows(&g.report, prog, sass.as_ref(), file));
    if a.json {
        let mut v = serde_json::to_value(&g)?;
        if let Some(gr) = &grouped {
            v["by_source"] = serde_json::to_value(&gr.rows)?;
            v["source_files"] = serde_json::to_value(&gr.files)?;
        }
        if let Some(s) = &sass {
            add_sass_json(&mut v, s)?;
        }
        if let Some(e) = &sass_error {
            v["totals"]["sass_error"] = e.clone().into();
        }
        out::emit_json(&v)?;
    } else {
        let mut text = render_launch(&g, launch);
        text.push_str(&render_body(&g.report, a.top));
        if let Some(s) = &sass {
            text.push_str(&render_sass(s));
        }
        if let Some(gr) = &grouped {
            text.push_str(&render_by_source(gr, sass.is_some()));
        }
        out::emit(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The head of `--ctas`'s text report: what ran, the launch's sums in one line, each
/// counter's spread over the CTAs and the busiest CTA.
fn render_launch(g: &ptx::grid::GridReport, l: &Launch) -> String {
    let mut o = String::new();
    let r = &g.report;
    let threads = l.block.iter().product::<u32>();
    outln!(
        o,
        "kernel {}: grid {}, block {} ({}); --ctas {}: {} of {} simulated{} on {}; {} warp instructions{}",
        r.kernel_demangled,
        dims(g.grid),
        dims(r.block),
        out::plural(u64::from(threads.div_ceil(32)), "warp"),
        g.selected,
        tilelab::text::group(g.ctas_simulated),
        tilelab::text::group(g.grid.iter().map(|&d| u64::from(d)).product()),
        if r.cluster.iter().product::<u32>() > 1 {
            format!(
                " (as {} clusters of {})",
                tilelab::text::group(g.clusters_simulated),
                dims(r.cluster)
            )
        } else {
            String::new()
        },
        out::plural(g.jobs as u64, "thread"),
        tilelab::text::group(r.totals.warp_instructions),
        if g.whole_launch {
            " (the whole launch: every count below is Nsight Compute's whole-kernel sum)"
        } else {
            " (every count below is the sum over the simulated CTAs)"
        }
    );
    outln!(o);
    outln!(
        o,
        "{}",
        out::bold("per CTA (spread over the simulated CTAs):")
    );
    outln!(
        o,
        "{:<26} {:>14} {:>14} {:>14}  busiest CTA",
        "counter",
        "min",
        "median",
        "max"
    );
    let mut names: Vec<&String> = g.spread.keys().collect();
    // The PTX counters in their fixed order, then the SASS ones.
    names.sort_by_key(|n| {
        (
            ptx::grid::SPREAD_COUNTERS
                .iter()
                .position(|c| c == n)
                .unwrap_or(usize::MAX),
            n.as_str(),
        )
    });
    for n in names {
        let s = &g.spread[n];
        if s.max == 0 {
            continue;
        }
        outln!(
            o,
            "{:<26} {:>14} {:>14} {:>14}  {}",
            n,
            tilelab::text::group(s.min),
            s.median.map_or("-".to_string(), tilelab::text::group),
            tilelab::text::group(s.max),
            dims(s.max_cta)
        );
    }
    if g.spread.values().any(|s| s.median.is_none()) {
        outln!(
            o,
            "(median -: more than {} distinct per-CTA values, not kept)",
            tilelab::text::group(ptx::grid::MAX_DISTINCT as u64)
        );
    }
    let b = g.busiest_cta;
    outln!(
        o,
        "busiest CTA (most warp instructions): {} (tilelab ptx --cta {},{},{} reports it alone)",
        dims(b),
        b[0],
        b[1],
        b[2]
    );
    for (why, n) in &g.extra_notes {
        outln!(o, "SASS of {}: {why}", out::plural(*n, "CTA"));
    }
    o
}

/// One row of `--by-source`: a source line's summed counts, its SASS and its text.
#[derive(serde::Serialize)]
struct SourceRow {
    #[serde(flatten)]
    group: ptx::report::SourceGroup,
    /// Dynamic SASS issues per family of every SASS instruction of the source line's PTX lines
    /// (with --sass and the CUDA tools; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    sass_executed: Option<std::collections::BTreeMap<String, u64>>,
    /// The source line's text (blanks at both ends trimmed), `null` when the file was not read.
    text: Option<String>,
    /// Why `text` is `null` for a file that was read: the `.loc` line is past its end
    /// (`line 900 is past the end of kernel.py, 120 lines`) or is line 0 (the compiler knows
    /// none). Absent when the text is there or the file was not read (`source_files` says why).
    #[serde(skip_serializing_if = "Option::is_none")]
    text_missing: Option<String>,
}

/// The `--by-source` rows and, per source file, whether its text could be read.
struct SourceRows {
    rows: Vec<SourceRow>,
    /// File → "read" or why not.
    files: std::collections::BTreeMap<String, String>,
}

/// Groups the report by source line ([`ptx::report::by_source`]), adds the SASS families of
/// each group's PTX lines, and reads each source file once (bounded: at most
/// [`tilelab::textfile::MAX_SOURCE_BYTES`], a regular file; the path as `.file` gives it, then
/// beside the PTX file) for the lines' text.
fn source_rows(
    report: &Report,
    prog: &ptx::decode::Program,
    sass: Option<&tilelab::sass::report::SassReport>,
    ptx_file: &std::path::Path,
) -> SourceRows {
    use std::collections::BTreeMap;
    let groups = ptx::report::by_source(report);
    let mut texts: BTreeMap<String, Result<Vec<String>, String>> = BTreeMap::new();
    for g in &groups {
        let Some(f) = &g.file else { continue };
        if texts.contains_key(&**f) {
            continue;
        }
        texts.insert(
            f.to_string(),
            tilelab::textfile::read_source_lines(f, ptx_file),
        );
    }
    // Per group (by file and line), the SASS families of its PTX lines.
    let mut fams: BTreeMap<(Option<String>, u32), BTreeMap<String, u64>> = BTreeMap::new();
    if let Some(s) = sass {
        for l in &s.lines {
            let key = match prog.sources.get(&l.line) {
                Some(r) => (Some(r.file.to_string()), r.line),
                None => (None, 0),
            };
            let m = fams.entry(key).or_default();
            for r in &l.sass {
                let fam = r.mnemonic.split('.').next().unwrap_or("").to_string();
                *m.entry(fam).or_default() += r.executions;
            }
        }
    }
    let rows = groups
        .into_iter()
        .map(|g| {
            let key = (g.file.as_ref().map(|f| f.to_string()), g.line);
            let text = key.0.as_ref().and_then(|f| match texts.get(f) {
                Some(Ok(lines)) => g
                    .line
                    .checked_sub(1)
                    .and_then(|i| lines.get(i as usize))
                    .map(|t| t.trim().to_string()),
                _ => None,
            });
            let text_missing = match (&text, key.0.as_ref().and_then(|f| texts.get(f))) {
                (None, Some(Ok(lines))) => Some(if g.line == 0 {
                    "the .loc gives line 0 (no source line)".to_string()
                } else {
                    let base = g.file.as_deref().unwrap_or("");
                    let base = base.rsplit(['/', '\\']).next().unwrap_or(base);
                    format!(
                        "line {} is past the end of {}, {} line{}",
                        g.line,
                        tilelab::text::escape(base),
                        lines.len(),
                        if lines.len() == 1 { "" } else { "s" }
                    )
                }),
                _ => None,
            };
            SourceRow {
                sass_executed: sass.map(|_| fams.remove(&key).unwrap_or_default()),
                group: g,
                text,
                text_missing,
            }
        })
        .collect();
    let files = texts
        .into_iter()
        .map(|(f, r)| (f, r.map_or_else(|e| e, |_| "read".to_string())))
        .collect();
    SourceRows { rows, files }
}

/// The `--by-source` table: one row per source line, its summed counts and text.
fn render_by_source(g: &SourceRows, with_sass: bool) -> String {
    let mut o = String::new();
    outln!(o);
    outln!(
        o,
        "{}",
        out::bold("by source line (the PTX lines of each .loc line summed):")
    );
    let name = |r: &SourceRow| match &r.group.file {
        Some(f) => tilelab::ptx::lineinfo::SourceRef {
            file: f.clone(),
            line: r.group.line,
            column: 0,
            inlined_at: None,
        }
        .short(),
        None => "(no .loc)".to_string(),
    };
    let w = g
        .rows
        .iter()
        .map(|r| name(r).len())
        .max()
        .unwrap_or(6)
        .max(6);
    let classes_of = |r: &SourceRow| -> String {
        let v: Vec<String> = match &r.sass_executed {
            Some(m) => m
                .iter()
                .filter(|(f, n)| **n > 0 && is_counted_family(f))
                .map(|(f, n)| format!("{f} {n}"))
                .collect(),
            None => r
                .group
                .classes
                .iter()
                .map(|(f, n)| format!("{f} {n}"))
                .collect(),
        };
        v.join(" ")
    };
    let cw = g
        .rows
        .iter()
        .map(|r| classes_of(r).len())
        .max()
        .unwrap_or(0)
        .max(16);
    outln!(
        o,
        "{:<w$}  {:>9} {:>10} {:>11} {:>9} {:>9}  {:<cw$} text",
        "source",
        "ptx lines",
        "executions",
        "wavefronts",
        "ideal",
        "conflicts",
        if with_sass {
            "sass (issued)"
        } else {
            "sass (ptx-level)"
        }
    );
    for r in &g.rows {
        let x = &r.group;
        let c = if x.bank_conflicts > 0 {
            out::paint(&format!("{:>9}", x.bank_conflicts), out::BAD)
        } else {
            format!("{:>9}", x.bank_conflicts)
        };
        outln!(
            o,
            "{:<w$}  {:>9} {:>10} {:>11} {:>9} {c}  {:<cw$} {}",
            name(r),
            x.ptx_lines.len(),
            x.executions,
            x.wavefronts,
            x.ideal,
            classes_of(r),
            match (&r.text, &r.text_missing) {
                (Some(t), _) => tilelab::text::escape(t).into_owned(),
                (None, Some(why)) => format!("({why})"),
                (None, None) => String::new(),
            }
        );
    }
    for (f, why) in &g.files {
        if why != "read" {
            outln!(
                o,
                "  {}: source text not shown ({})",
                tilelab::text::escape(f),
                tilelab::text::escape(why)
            );
        }
    }
    o
}

/// The SASS families `--by-source` lists (the shared-memory, tensor-core and barrier ones).
fn is_counted_family(f: &str) -> bool {
    matches!(
        f,
        "LDS"
            | "STS"
            | "LDSM"
            | "STSM"
            | "HMMA"
            | "IMMA"
            | "QMMA"
            | "HGMMA"
            | "QGMMA"
            | "LDGSTS"
            | "BAR"
            | "ATOMS"
    )
}

/// With `--sass`, ptxas's SASS of the kernel (compiled as `--sass-load` says), or why there is
/// none (also noted on stderr: the counts stay PTX-level); `(None, None)` without `--sass`.
fn kernel_sass(
    a: &PtxArgs,
    src: &str,
    prog: &ptx::decode::Program,
) -> (Option<tilelab::sass::KernelSass>, Option<String>) {
    if !a.sass {
        return (None, None);
    }
    let relocatable = match a.sass_load.as_str() {
        "link" => Some(true),
        "module" => Some(false),
        _ => None,
    };
    match tilelab::sass::CudaTools::find()
        .and_then(|t| tilelab::sass::of_ptx(&t, src, &prog.name, relocatable))
    {
        Ok(k) => (Some(k), None),
        Err(e) => {
            out::note(format_args!(
                "SASS counts are PTX-level (one SASS instruction per PTX instruction of a class): {e:#}"
            ));
            (None, Some(format!("{e:#}")))
        }
    }
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
    // The integer and FP8 mma.sync families, when the kernel has them (IMMA; QMMA on sm_89).
    for f in ["IMMA", "QMMA"] {
        if fam(f) > 0 {
            o.pop();
            outln!(o, " {f} {}", fam(f));
        }
    }
    let e = &s.expansion;
    if e.lines > 0 {
        outln!(
            o,
            "ptxas expands {} tensor-map line(s) into {} LDS and {} STS of the maps' words: +{} load and +{} store wavefronts ({} and {} bank conflicts), in the totals above",
            e.lines,
            e.lds,
            e.sts,
            e.ld_wavefronts,
            e.st_wavefronts,
            e.ld_bank_conflicts,
            e.st_bank_conflicts
        );
    }
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
    o.push_str(&render_body(r, top));
    o
}

/// The report's body: the worst lines, the per-line table, the totals.
fn render_body(r: &Report, top: usize) -> String {
    let mut o = String::new();
    let worst = worst_lines(r);
    render_worst(&mut o, r, &worst);
    let shown = shown_lines(r, top);
    render_table(&mut o, r, &shown, top);
    outln!(o);
    render_totals(&mut o, &r.totals);
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

/// The lines with a bank conflict, most conflicts first (then by line).
fn worst_lines(r: &Report) -> Vec<&ptx::report::LineReport> {
    let mut worst: Vec<_> = r.lines.iter().filter(|x| x.bank_conflicts > 0).collect();
    worst.sort_by(|a, b| {
        b.bank_conflicts
            .cmp(&a.bank_conflicts)
            .then(a.line.cmp(&b.line))
    });
    worst
}

/// The list of the (at most five) worst lines, or that no line has a bank conflict.
fn render_worst(o: &mut String, r: &Report, worst: &[&ptx::report::LineReport]) {
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
                "  line {}: {} in {runs}{ways}{}  {}",
                x.line,
                out::plural(x.bank_conflicts, "conflict"),
                x.source
                    .as_ref()
                    .map(|s| format!(", {}", s.short()))
                    .unwrap_or_default(),
                x.ptx
            );
        }
    }
}

/// The lines of the per-line table: with `top` > 0, only that many (most bank conflicts, then
/// most wavefronts), in line order.
fn shown_lines(r: &Report, top: usize) -> Vec<&ptx::report::LineReport> {
    if top > 0 && top < r.lines.len() {
        let mut by_cost: Vec<_> = r.lines.iter().collect();
        by_cost.sort_by(|a, b| {
            (b.bank_conflicts, b.wavefronts, a.line).cmp(&(a.bank_conflicts, a.wavefronts, b.line))
        });
        by_cost.truncate(top);
        by_cost.sort_by_key(|x| x.line);
        by_cost
    } else {
        r.lines.iter().collect()
    }
}

/// The per-line table: its header, a row per line of `shown`, and how many of the report's
/// lines it shows when `--top` left some out.
fn render_table(o: &mut String, r: &Report, shown: &[&ptx::report::LineReport], top: usize) {
    // The source column (`kernel.py:27`) when the PTX has a line table.
    let src_w = shown
        .iter()
        .filter_map(|x| x.source.as_ref().map(|s| s.short().len()))
        .max()
        .map(|w| w.max(6));
    outln!(o);
    outln!(
        o,
        "{:>6}  {:<6} {:>10} {:>11} {:>9} {:>9}  {}ptx",
        "line",
        "sass",
        "executions",
        "wavefronts",
        "ideal",
        "conflicts",
        match src_w {
            Some(w) => format!("{:<w$}  ", "source"),
            None => String::new(),
        }
    );
    for x in shown {
        table_row(o, x, src_w);
    }
    if shown.len() < r.lines.len() {
        outln!(
            o,
            "  ({} of {} lines shown: --top {top}; totals below count every line)",
            shown.len(),
            r.lines.len()
        );
    }
}

/// One row of the per-line table: line `x`'s counts (`-` when the model costs none of its
/// executions), its source cell when the table has the column (`src_w`: its width), its PTX.
fn table_row(o: &mut String, x: &ptx::report::LineReport, src_w: Option<usize>) {
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
        "{:>6}  {:<6} {:>10} {} {} {c}  {}{}{note}",
        x.line,
        x.sass,
        x.executions,
        num(x.wavefronts, 11),
        num(x.ideal, 9),
        src_cell(x, src_w),
        x.ptx
    );
}

/// Line `x`'s cell of the source column (`kernel.py:27`), `src_w` wide; nothing when the table
/// has no such column.
fn src_cell(x: &ptx::report::LineReport, src_w: Option<usize>) -> String {
    match src_w {
        Some(w) => format!(
            "{:<w$}  ",
            x.source.as_ref().map(|s| s.short()).unwrap_or_default()
        ),
        None => String::new(),
    }
}

/// The per-CTA totals: shared-memory wavefronts and bank conflicts, the SASS counts, and the
/// wgmma, TMA and distributed-shared-memory lines when the kernel has those.
fn render_totals(o: &mut String, t: &ptx::report::Totals) {
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
        } + &if s.IMMA > 0 {
            format!(" IMMA {}", s.IMMA)
        } else {
            String::new()
        } + &if s.QMMA > 0 {
            format!(" QMMA {}", s.QMMA)
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
}

/// `lo` and `hi` as a bound in words: "7 wavefronts" or "between 5 and 9 wavefronts".
fn span(lo: u64, hi: u64) -> String {
    if lo == hi {
        out::plural(lo, "wavefront")
    } else {
        format!("between {lo} and {hi} wavefronts")
    }
}
