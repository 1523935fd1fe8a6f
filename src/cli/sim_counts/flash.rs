//! `tilelab sim counts flash-attn`: FlashAttention-2 forward in the torch or triton style,
//! static counts per code copy, dynamic executions per line, the FA2 counts article's formulas, bank
//! conflicts and (with `--lines`) the program.

use std::process::ExitCode;

use serde::Serialize;
use tilelab::sim::SimError;
use tilelab::sim::arch::Arch;
use tilelab::sim::counts::{
    self, BankSummary, DynamicCounts, FormulaCheck, Line, StaticCounts, bank_summary,
    dynamic_counts, flash_checks, flash_dynamic_checks, static_counts,
};
use tilelab::sim::layout::LayoutSpec;
use tilelab::sim::program::{FlashProblem, FlashStyle, FlashTiling, InstrClass};

use super::{TileJson, num, print_bank, print_checks, print_lines, print_tiles, tiles_json};
use crate::cli::out::{self, emit, emit_json, group};

/// Arguments of `tilelab sim counts flash-attn`.
#[derive(clap::Args, Debug)]
pub struct FlashArgs {
    /// Kernel style: torch (FlashAttention-2, warps split Q rows, P in registers), triton
    /// (warps split the keys, P through shared memory) or hopper (kernels/fa3_fwd.cu: TMA,
    /// wgmma, a producer and two consumer warpgroups, persistent grid).
    #[arg(long)]
    pub style: String,
    /// Q rows per CTA (BLOCK_M, a multiple of 16; default 64, hopper 128, the only value it has).
    #[arg(long, value_parser = crate::cli::whole::<u32>("a multiple of 16"))]
    pub bm: Option<u32>,
    /// K/V rows per loop iteration (BLOCK_N, a multiple of 16; default 64, hopper 128).
    #[arg(long, value_parser = crate::cli::whole::<u32>("a multiple of 16"))]
    pub bn: Option<u32>,
    /// Head dimension d (a multiple of 16; hopper: 64 or 128).
    #[arg(long, default_value_t = 128, value_parser = crate::cli::whole::<u32>("a multiple of 16"))]
    pub head_dim: u32,
    /// Warps per CTA (num_warps; default 4; hopper: 12, three warpgroups).
    #[arg(long, value_parser = crate::cli::whole::<u32>("a number of warps per CTA, at least 1"))]
    pub warps: Option<u32>,
    /// Batch size B (for the dynamic counts).
    #[arg(long, default_value_t = 2, value_parser = crate::cli::whole::<u32>("at least 1"))]
    pub batch: u32,
    /// Heads H.
    #[arg(long, default_value_t = 16, value_parser = crate::cli::whole::<u32>("at least 1"))]
    pub heads: u32,
    /// Sequence length S (a multiple of bm and bn).
    #[arg(long, default_value_t = 1024, value_parser = crate::cli::whole::<u32>("a multiple of --bm and --bn"))]
    pub seq: u32,
    /// Causal masking.
    #[arg(long)]
    pub causal: bool,
    /// Shared-memory layout of every tile: row, pad:N, swizzle:B,M,S (e.g. swizzle:3,3,4;
    /// default row; not for hopper, whose tiles are TMA 128B-swizzled).
    #[arg(long)]
    pub layout: Option<String>,
    /// Architecture whose per-block shared memory must hold the tiles (hopper: sm_90 only).
    #[arg(long, default_value = "sm_90")]
    pub arch: String,
    /// K/V buffers of the hopper kernel (FA_STAGES, default 2).
    #[arg(long, value_parser = crate::cli::whole::<u32>("at least 1 K/V buffer"))]
    pub stages: Option<u32>,
    /// Input type of the hopper kernel: f16 (default) or bf16 (FA_BF16).
    #[arg(long)]
    pub dtype: Option<String>,
    /// SMs the hopper kernel's persistent grid is sized for (default 132, an H200).
    #[arg(long, value_parser = crate::cli::whole::<u32>("at least 1 SM"))]
    pub sms: Option<u32>,
    /// Also list every line of warp 0's program with its wavefronts and executions (not hopper).
    #[arg(long)]
    pub lines: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
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
    dynamic: DynamicCounts,
    dynamic_checks: Vec<FormulaCheck>,
    bank: BankSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    lines: Option<Vec<Line>>,
}

/// `tilelab sim counts flash-attn`.
pub(super) fn run(a: FlashArgs) -> anyhow::Result<ExitCode> {
    if matches!(a.style.as_str(), "hopper" | "fa3") {
        return super::hopper::run(a);
    }
    let style = FlashStyle::parse(&a.style).map_err(|_| SimError::Unknown {
        what: "style",
        given: a.style.clone(),
        allowed: "torch, triton, hopper",
    })?;
    for (flag, given) in [
        ("--stages", a.stages.is_some()),
        ("--dtype", a.dtype.is_some()),
        ("--sms", a.sms.is_some()),
    ] {
        if given {
            anyhow::bail!("{flag} applies only to --style hopper (kernels/fa3_fwd.cu)");
        }
    }
    let mut o = String::new();
    let arch = Arch::parse(&a.arch)?;
    let layout_spec = a.layout.clone().unwrap_or_else(|| "row".into());
    let t = FlashTiling {
        style,
        bm: a.bm.unwrap_or(64),
        bn: a.bn.unwrap_or(64),
        head_dim: a.head_dim,
        warps: a.warps.unwrap_or(4),
        causal: a.causal,
    };
    let p = FlashProblem {
        batch: a.batch,
        heads: a.heads,
        seq: a.seq,
    };
    t.validate()?;
    t.check_problem(&p)?;
    let layout = LayoutSpec::parse(&layout_spec)?;
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
            layout: &layout_spec,
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
    print_tiles(&mut o, &cta, &layout_spec, arch);
    // The classes this kernel executes: the columns of both tables.
    let classes: Vec<InstrClass> = InstrClass::ALL
        .into_iter()
        .filter(|&c| st.per_kernel.get(c) > 0)
        .collect();
    print_static(&mut o, &st, &classes);
    print_checks(&mut o, "the FA2 counts article's formulas:", &checks);
    outln!(o, "  source: {}", tilelab::sources::FA2_COUNTS.cite());
    print_dynamic(&mut o, &dynamic, t.warps, &classes);
    print_checks(
        &mut o,
        "the FA2 counts article's formulas (executions per line):",
        &dchecks,
    );
    let iteration = format!("one kv iteration of a CTA, all {} warps", t.warps);
    print_bank(
        &mut o,
        &bank,
        &layout_spec,
        &iteration,
        Some("whole kernel"),
    );
    if let Some(l) = &lines {
        print_lines(&mut o, l);
    }
    emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

/// Static counts per warp: one row per stage and one for the kernel, one column per class.
fn print_static(o: &mut String, st: &StaticCounts, classes: &[InstrClass]) {
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
}

/// Dynamic executions: one row per stage, the mean over lines and the totals per class.
fn print_dynamic(o: &mut String, dynamic: &DynamicCounts, warps: u32, classes: &[InstrClass]) {
    outln!(
        o,
        "dynamic executions: grid {} CTAs × {} warps\n  {:<26} {:>6} {:>16}",
        group(dynamic.ctas),
        warps,
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
}
