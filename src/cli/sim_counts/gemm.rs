//! `tilelab sim counts gemm`: one CTA computing `C = A·Bᵀ`, its counts beside the FA2 counts article's
//! formulas, its bank conflicts and (with `--lines`) its program.

use std::process::ExitCode;

use serde::Serialize;
use tilelab::sim::arch::Arch;
use tilelab::sim::counts::{
    self, BankSummary, FormulaCheck, Line, bank_summary, gemm_checks, gemm_counts,
};
use tilelab::sim::instr::SassClass;
use tilelab::sim::layout::LayoutSpec;
use tilelab::sim::program::{GemmTiling, Split};

use super::{TileJson, print_bank, print_checks, print_lines, print_tiles, tiles_json};
use crate::cli::out::{self, emit, emit_json, group};

/// Arguments of `tilelab sim counts gemm`.
#[derive(clap::Args, Debug)]
pub struct GemmArgs {
    /// Rows of A and C (a multiple of 16).
    #[arg(long, value_parser = crate::cli::whole::<u32>("a multiple of 16"))]
    pub m: u32,
    /// Columns of C = rows of the stored B (a multiple of 16).
    #[arg(long, value_parser = crate::cli::whole::<u32>("a multiple of 16"))]
    pub n: u32,
    /// Reduction length (a multiple of 16).
    #[arg(long, value_parser = crate::cli::whole::<u32>("a multiple of 16"))]
    pub k: u32,
    /// Warps per CTA (1..=32).
    #[arg(long, default_value_t = 1, value_parser = crate::cli::whole::<u32>("1..=32"))]
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

/// `tilelab sim counts gemm`.
pub(super) fn run(a: GemmArgs) -> anyhow::Result<ExitCode> {
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
    let (ldsm, hmma) = (SassClass::Ldsm.name(), SassClass::Hmma.name());
    for (label, w, c) in [
        (format!("{ldsm} of A"), g.a_loads_per_warp, per_cta_a),
        (format!("{ldsm} of B"), g.b_loads_per_warp, per_cta_b),
        (ldsm.to_string(), g.per_warp.ldsm, g.per_cta.ldsm),
        (hmma.to_string(), g.per_warp.hmma, g.per_cta.hmma),
    ] {
        outln!(o, "  {label:<12} {:>10} {:>10}", group(w), group(c));
    }
    print_checks(
        &mut o,
        "the FA2 counts article's formulas (per warp):",
        &checks,
    );
    outln!(o, "  source: {}", tilelab::sources::FA2_COUNTS.cite());
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
