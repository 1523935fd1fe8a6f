//! `tilelab sim counts gemm|flash-attn` and `tilelab sim occupancy`: the CLI around
//! [`tilelab::sim::program`], [`tilelab::sim::counts`] and [`tilelab::sim::occupancy`].
//!
//! Each command first resolves its arguments into simulator values (tiling, layout, arch), so
//! every input error is reported before any work, as one line. `--json` prints one object:
//!
//! * `counts gemm`: `{kernel: "gemm", tiling, layout, arch, tiles: [{tile, rows, cols, base_byte,
//!   size_bytes, layout}], smem_bytes, counts: {case, per_warp, a_loads_per_warp,
//!   b_loads_per_warp, per_cta}, checks: [{formula: {quantity, class, symbolic, substituted,
//!   value}, program, agrees}], bank: {rows: [{tile, class, per_iteration, total}],
//!   per_iteration, total}, lines (with --lines)}`; counts are `{ldsm, ldsm_t, hmma, sts, lds}`,
//!   bank statistics `{requests, wavefronts, ideal, conflicts}`;
//! * `counts flash-attn`: `{kernel: "flash-attn", tiling, problem, layout, arch, tiles,
//!   smem_bytes, static: {stages: [{label, kind, step, counts}], loop_copies, per_copy,
//!   per_kernel}, checks, dynamic: {ctas, warps_per_cta, stages: [{label, kind, step, lines,
//!   executions_per_line}], total, lines, mean_line_executions}, dynamic_checks, bank, lines}`;
//! * `occupancy`: `{input: {arch, threads_per_block, smem_per_block_bytes, regs_per_thread,
//!   smem_opt_in}, warps_per_block, regs_per_warp, smem_per_block_limit_bytes,
//!   smem_allocated_per_block_bytes, smem_per_sm_bytes, limits: {warps, blocks, registers,
//!   shared_memory}, blocks_per_sm, active_warps, max_warps, occupancy, limiting, reason}`;
//!   a block that does not fit is a result: `blocks_per_sm` 0 and `reason` says why (null
//!   when it fits).

use std::process::ExitCode;

use crossterm::style::Color;
use serde::Serialize;
use tilelab::sim::arch::Arch;
use tilelab::sim::counts::{
    self, AccessStats, BankSummary, FormulaCheck, Line, StaticCounts, bank_summary, dynamic_counts,
    flash_checks, flash_dynamic_checks, gemm_checks, gemm_counts, static_counts,
};
use tilelab::sim::layout::LayoutSpec;
use tilelab::sim::occupancy::{OccupancyInput, occupancy, parse_bytes};
use tilelab::sim::program::{
    CtaProgram, FlashProblem, FlashStyle, FlashTiling, GemmTiling, InstrClass, Split, TileId,
};

use super::out::{self, emit, emit_json, group};

// ---------------------------------------------------------------------------------------------
// Arguments

/// Arguments of `tilelab sim counts`.
#[derive(clap::Args, Debug)]
pub struct CountsArgs {
    #[command(subcommand)]
    pub kernel: CountsKernel,
}

/// Kernels `tilelab sim counts` knows.
#[derive(clap::Subcommand, Debug)]
pub enum CountsKernel {
    /// One CTA computing C (MxN) = A (MxK) · Bᵀ (B stored NxK) with ldmatrix.x4 and mma m16n8k16.
    Gemm(GemmArgs),
    /// FlashAttention-2 forward: static counts per code copy and kernel, dynamic counts per line.
    FlashAttn(FlashArgs),
}

/// Arguments of `tilelab sim counts gemm`.
#[derive(clap::Args, Debug)]
pub struct GemmArgs {
    /// Rows of A and C (a multiple of 16).
    #[arg(long)]
    pub m: u32,
    /// Columns of C = rows of the stored B (a multiple of 16).
    #[arg(long)]
    pub n: u32,
    /// Reduction length (a multiple of 16).
    #[arg(long)]
    pub k: u32,
    /// Warps per CTA (1..=32).
    #[arg(long, default_value_t = 1)]
    pub warps: u32,
    /// How the warps share C: rows (each warp owns M/warps rows) or cols (N/warps columns).
    #[arg(long, default_value = "rows")]
    pub split: String,
    /// Shared-memory layout of every tile: row, pad:N, swizzle:B,M,S (e.g. row+pad:8).
    #[arg(long, default_value = "row")]
    pub layout: String,
    /// Architecture whose per-block shared memory must hold the tiles.
    #[arg(long, default_value = "sm_90")]
    pub arch: String,
    /// Also list every line of warp 0's program with its wavefronts.
    #[arg(long)]
    pub lines: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tilelab sim counts flash-attn`.
#[derive(clap::Args, Debug)]
pub struct FlashArgs {
    /// Kernel style: torch (FlashAttention-2, warps split Q rows, P in registers) or triton
    /// (warps split the keys, P through shared memory).
    #[arg(long)]
    pub style: String,
    /// Q rows per CTA (BLOCK_M, a multiple of 16).
    #[arg(long, default_value_t = 64)]
    pub bm: u32,
    /// K/V rows per loop iteration (BLOCK_N, a multiple of 16).
    #[arg(long, default_value_t = 64)]
    pub bn: u32,
    /// Head dimension d (a multiple of 16).
    #[arg(long, default_value_t = 128)]
    pub head_dim: u32,
    /// Warps per CTA (num_warps).
    #[arg(long, default_value_t = 4)]
    pub warps: u32,
    /// Batch size B (for the dynamic counts).
    #[arg(long, default_value_t = 2)]
    pub batch: u32,
    /// Heads H.
    #[arg(long, default_value_t = 16)]
    pub heads: u32,
    /// Sequence length S (a multiple of bm and bn).
    #[arg(long, default_value_t = 1024)]
    pub seq: u32,
    /// Causal masking.
    #[arg(long)]
    pub causal: bool,
    /// Shared-memory layout of every tile: row, pad:N, swizzle:B,M,S (e.g. swizzle:3,3,4).
    #[arg(long, default_value = "row")]
    pub layout: String,
    /// Architecture whose per-block shared memory must hold the tiles.
    #[arg(long, default_value = "sm_90")]
    pub arch: String,
    /// Also list every line of warp 0's program with its wavefronts and executions.
    #[arg(long)]
    pub lines: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tilelab sim occupancy`.
#[derive(clap::Args, Debug)]
pub struct OccupancyArgs {
    /// Architecture: sm_75, sm_80, sm_86, sm_89, sm_90.
    #[arg(long)]
    pub arch: String,
    /// Threads per block.
    #[arg(long)]
    pub threads: u32,
    /// Shared memory per block: bytes (28672) or KB of 1024 bytes (28K, 28KB).
    #[arg(long, default_value = "0")]
    pub smem: String,
    /// Registers per thread (left out: registers are not counted as a limit).
    #[arg(long)]
    pub regs: Option<u32>,
    /// The kernel does not opt in to more than 48 KB of shared memory per block
    /// (cudaFuncAttributeMaxDynamicSharedMemorySize): a block gets at most 48 KB. Default: it
    /// opts in and gets the architecture's per-block limit.
    #[arg(long)]
    pub no_opt_in: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn verdict(ok: bool) -> String {
    if ok {
        out::paint("ok", Color::Green)
    } else {
        out::paint("DIFFERS", Color::Red)
    }
}

/// A number of a formula check: integers without decimals.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.is_finite() {
        group(v as u64)
    } else {
        format!("{v:.2}")
    }
}

#[derive(Serialize)]
struct TileJson {
    tile: TileId,
    rows: u32,
    cols: u32,
    base_byte: u32,
    size_bytes: u32,
    layout: String,
}

fn tiles_json(cta: &CtaProgram) -> Vec<TileJson> {
    cta.tiles
        .iter()
        .map(|t| TileJson {
            tile: t.id,
            rows: t.layout.rows,
            cols: t.layout.cols,
            base_byte: t.base_byte,
            size_bytes: t.size_bytes(),
            layout: t.layout.to_string(),
        })
        .collect()
}

fn print_tiles(o: &mut String, cta: &CtaProgram, spec: &str, arch: Arch) {
    let parts: Vec<String> = cta
        .tiles
        .iter()
        .map(|t| {
            format!(
                "{} {}x{} at {} ({} B)",
                t.id,
                t.layout.rows,
                t.layout.cols,
                t.base_byte,
                t.size_bytes()
            )
        })
        .collect();
    outln!(
        o,
        "shared memory (layout {spec}): {}; {} of {} bytes per block on {arch}",
        parts.join(", "),
        group(cta.smem_bytes as u64),
        group(arch.limits().smem_per_block_bytes as u64)
    );
}

/// One line per check: `quantity [against]  symbolic = substituted = value  program N  ok`.
fn print_checks(o: &mut String, title: &str, checks: &[FormulaCheck]) {
    outln!(o, "{title}");
    let width = checks
        .iter()
        .map(|c| c.formula.quantity.chars().count() + c.against.chars().count() + 3)
        .max()
        .unwrap_or(0);
    for c in checks {
        let f = &c.formula;
        let value = format!("{}", f.value);
        let mut expr = format!("{} = {}", f.symbolic, f.substituted);
        if f.substituted != value {
            expr.push_str(&format!(" = {value}"));
        }
        let label = format!("{} [{}]", f.quantity, c.against);
        outln!(
            o,
            "  {label:<width$}  {expr}   program {}  {}",
            num(c.program),
            verdict(c.agrees)
        );
    }
}

fn stats_cells(s: &AccessStats) -> String {
    format!(
        "{:>12} {:>14} {:>12} {:>14} {:>6.1}% {:>8.2}",
        group(s.requests),
        group(s.wavefronts),
        group(s.ideal),
        group(s.conflicts),
        100.0 * s.conflict_rate(),
        s.wavefronts_per_request()
    )
}

/// The bank table: one row per (tile, class) for one iteration (`iteration` names it), a sum row,
/// and, for a kernel with a loop, a row for the whole kernel.
fn print_bank(o: &mut String, b: &BankSummary, spec: &str, iteration: &str, whole: Option<&str>) {
    outln!(
        o,
        "bank conflicts under layout {spec} (rows: {iteration}):\n  {:<16} {:>12} {:>14} {:>12} {:>14} {:>7} {:>8}",
        "access",
        "requests",
        "wavefronts",
        "ideal",
        "conflicts",
        "rate",
        "wf/req"
    );
    let paint_row = |label: &str, s: &AccessStats| {
        let line = format!("  {label:<16} {}", stats_cells(s));
        if s.conflicts > 0 {
            out::paint(&line, Color::Yellow)
        } else {
            line
        }
    };
    for r in &b.rows {
        outln!(
            o,
            "{}",
            paint_row(&format!("{} {}", r.tile, r.class.short()), &r.per_iteration)
        );
    }
    outln!(o, "{}", paint_row("sum", &b.per_iteration));
    if let Some(w) = whole {
        outln!(o, "{}", paint_row(w, &b.total));
    }
}

fn print_lines(o: &mut String, lines: &[Line]) {
    outln!(
        o,
        "lines of warp 0:\n  {:<24} {:>4}  {:<15} {:<6} {:<14} {:>5} {:>9} {:>12}",
        "stage",
        "#",
        "SASS",
        "what",
        "coords",
        "wf",
        "conflicts",
        "executions"
    );
    for l in lines {
        let what = l
            .tile
            .map(|t| t.to_string())
            .or(l.product.map(|p| p.name().to_string()))
            .unwrap_or_default();
        let coords = l
            .coords
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",");
        outln!(
            o,
            "  {:<24} {:>4}  {:<15} {:<6} {:<14} {:>5} {:>9} {:>12}",
            l.stage_label,
            l.index,
            l.sass,
            what,
            format!("({coords})"),
            l.wavefronts.map_or("-".into(), |w| w.to_string()),
            l.bank_conflicts.map_or("-".into(), |w| w.to_string()),
            l.executions.map_or("-".into(), group),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// counts

pub fn run_counts(a: CountsArgs) -> anyhow::Result<ExitCode> {
    match a.kernel {
        CountsKernel::Gemm(g) => run_gemm(g),
        CountsKernel::FlashAttn(f) => run_flash(f),
    }
}

#[derive(Serialize)]
struct GemmJson<'a> {
    kernel: &'static str,
    tiling: GemmTiling,
    layout: &'a str,
    arch: String,
    tiles: Vec<TileJson>,
    smem_bytes: u32,
    counts: counts::GemmCounts,
    checks: Vec<FormulaCheck>,
    bank: BankSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    lines: Option<Vec<Line>>,
}

fn run_gemm(a: GemmArgs) -> anyhow::Result<ExitCode> {
    let mut o = String::new();
    // Resolve everything first.
    let arch = Arch::parse(&a.arch)?;
    let t = GemmTiling {
        m: a.m,
        n: a.n,
        k: a.k,
        warps: a.warps,
        split: Split::parse(&a.split)?,
    };
    t.validate()?;
    let layout = LayoutSpec::parse(&a.layout)?;
    let cta = t.build(&layout, arch)?;
    let g = gemm_counts(&t, &cta);
    let checks = gemm_checks(&t, &g);
    let bank = bank_summary(&cta, &[1]);
    let lines = a.lines.then(|| counts::lines(&cta.warps[0], Some(&[1])));
    if a.json {
        emit_json(&GemmJson {
            kernel: "gemm",
            tiling: t,
            layout: &a.layout,
            arch: arch.to_string(),
            tiles: tiles_json(&cta),
            smem_bytes: cta.smem_bytes,
            counts: g,
            checks,
            bank,
            lines,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let split = match t.split {
        Split::Rows => "rows",
        Split::Cols => "cols",
    };
    outln!(
        o,
        "{}",
        out::bold(&format!(
            "GEMM C = A·Bᵀ: M {}, N {}, K {}, {} warp(s), split {split} — case: {}",
            t.m,
            t.n,
            t.k,
            t.warps,
            t.case().describe()
        ))
    );
    print_tiles(&mut o, &cta, &a.layout, arch);
    outln!(o, "  {:<12} {:>10} {:>10}", "", "per warp", "per CTA");
    let per_cta_a: u64 = g.a_loads_per_warp * t.warps as u64;
    let per_cta_b: u64 = g.b_loads_per_warp * t.warps as u64;
    for (label, w, c) in [
        ("LDSM of A", g.a_loads_per_warp, per_cta_a),
        ("LDSM of B", g.b_loads_per_warp, per_cta_b),
        ("LDSM", g.per_warp.ldsm, g.per_cta.ldsm),
        ("HMMA", g.per_warp.hmma, g.per_cta.hmma),
    ] {
        outln!(o, "  {label:<12} {:>10} {:>10}", group(w), group(c));
    }
    print_checks(&mut o, "seed 000's formulas (per warp):", &checks);
    print_bank(
        &mut o,
        &bank,
        &a.layout,
        &format!("the whole CTA, all {} warps", t.warps),
        None,
    );
    if let Some(l) = &lines {
        print_lines(&mut o, l);
    }
    emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct FlashJson<'a> {
    kernel: &'static str,
    tiling: FlashTiling,
    problem: FlashProblem,
    layout: &'a str,
    arch: String,
    tiles: Vec<TileJson>,
    smem_bytes: u32,
    #[serde(rename = "static")]
    static_counts: StaticCounts,
    checks: Vec<FormulaCheck>,
    dynamic: counts::DynamicCounts,
    dynamic_checks: Vec<FormulaCheck>,
    bank: BankSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    lines: Option<Vec<Line>>,
}

fn run_flash(a: FlashArgs) -> anyhow::Result<ExitCode> {
    let mut o = String::new();
    let arch = Arch::parse(&a.arch)?;
    let t = FlashTiling {
        style: FlashStyle::parse(&a.style)?,
        bm: a.bm,
        bn: a.bn,
        head_dim: a.head_dim,
        warps: a.warps,
        causal: a.causal,
    };
    let p = FlashProblem {
        batch: a.batch,
        heads: a.heads,
        seq: a.seq,
    };
    t.validate()?;
    t.check_problem(&p)?;
    let layout = LayoutSpec::parse(&a.layout)?;
    let cta = t.build(&layout, arch)?;
    let w0 = &cta.warps[0];
    let st = static_counts(w0);
    let checks = flash_checks(&t, &st);
    let dynamic = dynamic_counts(&t, &p, w0)?;
    let dchecks = flash_dynamic_checks(&t, &p, &dynamic);
    // Per-warp trips of each stage = executions per line / warps.
    let trips: Vec<u64> = dynamic
        .stages
        .iter()
        .map(|s| s.executions_per_line / t.warps as u64)
        .collect();
    let per_line: Vec<u64> = dynamic
        .stages
        .iter()
        .map(|s| s.executions_per_line)
        .collect();
    let bank = bank_summary(&cta, &trips);
    let lines = a.lines.then(|| counts::lines(w0, Some(&per_line)));
    if a.json {
        emit_json(&FlashJson {
            kernel: "flash-attn",
            tiling: t,
            problem: p,
            layout: &a.layout,
            arch: arch.to_string(),
            tiles: tiles_json(&cta),
            smem_bytes: cta.smem_bytes,
            static_counts: st,
            checks,
            dynamic,
            dynamic_checks: dchecks,
            bank,
            lines,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        o,
        "{}",
        out::bold(&format!(
            "FlashAttention-2 forward, {} style: bm {}, bn {}, d {}, {} warps, {}; B {}, H {}, S {}",
            t.style.name(),
            t.bm,
            t.bn,
            t.head_dim,
            t.warps,
            if t.causal { "causal" } else { "not causal" },
            p.batch,
            p.heads,
            p.seq
        ))
    );
    print_tiles(&mut o, &cta, &a.layout, arch);
    let classes: Vec<InstrClass> = InstrClass::ALL
        .into_iter()
        .filter(|&c| st.per_kernel.get(c) > 0)
        .collect();
    let head: String = classes
        .iter()
        .map(|c| format!("{:>8}", c.short()))
        .collect();
    outln!(
        o,
        "static counts per warp (SASS lines):\n  {:<26}{head}",
        "stage"
    );
    let mut row = |label: &str, c: &counts::ClassCounts| {
        let cells: String = classes
            .iter()
            .map(|&k| format!("{:>8}", group(c.get(k))))
            .collect();
        outln!(o, "  {label:<26}{cells}");
    };
    for s in &st.stages {
        row(&s.label, &s.counts);
    }
    row(
        &format!("per kernel ({} copies)", st.loop_copies),
        &st.per_kernel,
    );
    print_checks(&mut o, "seed 000's formulas:", &checks);
    outln!(
        o,
        "dynamic executions: grid {} CTAs × {} warps\n  {:<26} {:>6} {:>16}",
        group(dynamic.ctas),
        t.warps,
        "stage",
        "lines",
        "executions/line"
    );
    for s in &dynamic.stages {
        outln!(
            o,
            "  {:<26} {:>6} {:>16}",
            s.label,
            s.lines,
            group(s.executions_per_line)
        );
    }
    let totals: Vec<String> = classes
        .iter()
        .map(|&c| format!("{} {}", c.short(), group(dynamic.total.get(c))))
        .collect();
    outln!(
        o,
        "  mean over the {} lines: {}; executed in total: {}",
        dynamic.lines,
        num(dynamic.mean_line_executions),
        totals.join(", ")
    );
    print_checks(
        &mut o,
        "seed 000's formulas (executions per line):",
        &dchecks,
    );
    let iteration = format!("one kv iteration of a CTA, all {} warps", t.warps);
    print_bank(&mut o, &bank, &a.layout, &iteration, Some("whole kernel"));
    if let Some(l) = &lines {
        print_lines(&mut o, l);
    }
    emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------------------------------------
// occupancy

pub fn run_occupancy(a: OccupancyArgs) -> anyhow::Result<ExitCode> {
    let mut o = String::new();
    let inp = OccupancyInput {
        arch: Arch::parse(&a.arch)?,
        threads_per_block: a.threads,
        smem_per_block_bytes: parse_bytes(&a.smem)?,
        regs_per_thread: a.regs,
        smem_opt_in: !a.no_opt_in,
    };
    let r = occupancy(&inp)?;
    if a.json {
        emit_json(&r)?;
        return Ok(ExitCode::SUCCESS);
    }
    let l = inp.arch.limits();
    outln!(
        o,
        "{}",
        out::bold(&format!(
            "{}: {} threads ({} warps) per block, {} B shared memory per block ({} B allocated), {}",
            inp.arch,
            inp.threads_per_block,
            r.warps_per_block,
            group(inp.smem_per_block_bytes as u64),
            group(r.smem_allocated_per_block_bytes),
            match (inp.regs_per_thread, r.regs_per_warp) {
                (Some(n), Some(w)) => format!("{n} registers per thread ({w} per warp)"),
                _ => "registers not given".to_string(),
            }
        ))
    );
    let lim = |v: Option<u32>| v.map_or("-".to_string(), |x| x.to_string());
    let rows = [
        (
            format!("warps ({} per SM)", l.max_warps_per_sm),
            Some(r.limits.warps),
            tilelab::sim::occupancy::Limiter::Warps,
        ),
        (
            format!("blocks ({} per SM)", l.max_blocks_per_sm),
            Some(r.limits.blocks),
            tilelab::sim::occupancy::Limiter::Blocks,
        ),
        (
            format!("registers ({} per SM)", group(l.regs_per_sm as u64)),
            r.limits.registers,
            tilelab::sim::occupancy::Limiter::Registers,
        ),
        (
            format!(
                "shared memory ({} B per SM)",
                group(l.smem_per_sm_bytes as u64)
            ),
            r.limits.shared_memory,
            tilelab::sim::occupancy::Limiter::SharedMemory,
        ),
    ];
    outln!(
        o,
        "shared memory per block: at most {} B ({} KB){}",
        group(r.smem_per_block_limit_bytes as u64),
        r.smem_per_block_limit_bytes / 1024,
        if inp.smem_opt_in {
            " with the opt-in to more than 48 KB (cudaFuncAttributeMaxDynamicSharedMemorySize; --no-opt-in for 48 KB)"
        } else {
            " without the opt-in (--no-opt-in)"
        }
    );
    outln!(o, "  {:<32} {:>10}", "limit", "blocks/SM");
    for (label, v, which) in rows {
        let mark = if r.limiting.contains(&which) {
            out::paint("  <- limiting", Color::Yellow)
        } else {
            String::new()
        };
        outln!(o, "  {label:<32} {:>10}{mark}", lim(v));
    }
    let names: Vec<&str> = r.limiting.iter().map(|x| x.name()).collect();
    match &r.reason {
        Some(why) => outln!(
            o,
            "blocks per SM 0: the block does not fit ({why}); theoretical occupancy 0%"
        ),
        None => outln!(
            o,
            "blocks per SM {}, active warps {} of {}, theoretical occupancy {:.1}% (limited by {})",
            r.blocks_per_sm,
            r.active_warps,
            r.max_warps,
            100.0 * r.occupancy,
            names.join(" and ")
        ),
    }
    outln!(
        o,
        "sources: CUDA C++ Programming Guide, Technical Specifications per Compute Capability; cuda_occupancy.h (allocation granularities)"
    );
    emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    use crate::cli::{Cli, Command, SimCommand};

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("tilelab").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn flash_attn_flags_parse_with_defaults() {
        let c = parse(&[
            "sim",
            "counts",
            "flash-attn",
            "--style",
            "torch",
            "--causal",
        ]);
        let Command::Sim {
            cmd:
                SimCommand::Counts(CountsArgs {
                    kernel: CountsKernel::FlashAttn(f),
                }),
        } = c.cmd
        else {
            panic!("not flash-attn")
        };
        assert_eq!((f.bm, f.bn, f.head_dim, f.warps), (64, 64, 128, 4));
        assert_eq!((f.batch, f.heads, f.seq, f.causal), (2, 16, 1024, true));
    }

    #[test]
    fn occupancy_flags() {
        let c = parse(&[
            "sim",
            "occupancy",
            "--arch",
            "sm_75",
            "--threads",
            "128",
            "--smem",
            "28KB",
        ]);
        let Command::Sim {
            cmd: SimCommand::Occupancy(o),
        } = c.cmd
        else {
            panic!("not occupancy")
        };
        assert_eq!((o.threads, o.smem.as_str(), o.regs), (128, "28KB", None));
    }

    #[test]
    fn number_formatting() {
        assert_eq!(group(20480), "20,480");
        assert_eq!(group(640), "640");
        assert_eq!(num(8704.0), "8,704");
    }
}
