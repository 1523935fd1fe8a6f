//! `tilelab sim counts gemm|flash-attn`: the CLI around [`tilelab::sim::program`] and
//! [`tilelab::sim::counts`]; one file per kernel (`gemm.rs`, `flash.rs`), the tables both
//! print here.
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
//!   executions_per_line}], total, lines, mean_line_executions}, dynamic_checks, bank, lines}`.

use std::process::ExitCode;

use serde::Serialize;
use tilelab::sim::arch::Arch;
use tilelab::sim::counts::{AccessStats, BankSummary, FormulaCheck, Line};
use tilelab::sim::program::{CtaProgram, TileId};

use super::out::{self, group};

mod flash;
mod gemm;
mod hopper;

pub use flash::FlashArgs;
pub use gemm::GemmArgs;

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
    /// FlashAttention forward: FA2 torch/triton styles (static counts per code copy and kernel,
    /// dynamic counts per line) or the Hopper kernel (wgmma, TMA, mbarriers per CTA).
    FlashAttn(FlashArgs),
}

pub fn run_counts(a: CountsArgs) -> anyhow::Result<ExitCode> {
    match a.kernel {
        CountsKernel::Gemm(g) => gemm::run(g),
        CountsKernel::FlashAttn(f) => flash::run(f),
    }
}

// ---------------------------------------------------------------------------------------------
// Tables both kernels print

pub(super) fn verdict(ok: bool) -> String {
    if ok {
        out::paint("ok", out::GOOD)
    } else {
        out::paint("DIFFERS", out::BAD)
    }
}

/// A number of a formula check: integers without decimals.
pub(super) fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.is_finite() {
        group(v as u64)
    } else {
        format!("{v:.2}")
    }
}

#[derive(Serialize)]
pub(super) struct TileJson {
    tile: TileId,
    rows: u32,
    cols: u32,
    base_byte: u32,
    size_bytes: u32,
    layout: String,
}

pub(super) fn tiles_json(cta: &CtaProgram) -> Vec<TileJson> {
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

pub(super) fn print_tiles(o: &mut String, cta: &CtaProgram, spec: &str, arch: Arch) {
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
pub(super) fn print_checks(o: &mut String, title: &str, checks: &[FormulaCheck]) {
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

pub(super) fn stats_cells(s: &AccessStats) -> String {
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
pub(super) fn print_bank(
    o: &mut String,
    b: &BankSummary,
    spec: &str,
    iteration: &str,
    whole: Option<&str>,
) {
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
            out::paint(&line, tilelab::palette::replay(1))
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

pub(super) fn print_lines(o: &mut String, lines: &[Line]) {
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
        assert_eq!((f.bm, f.bn, f.head_dim, f.warps), (None, None, 128, None));
        assert_eq!((f.batch, f.heads, f.seq, f.causal), (2, 16, 1024, true));
    }

    #[test]
    fn number_formatting() {
        assert_eq!(group(20480), "20,480");
        assert_eq!(group(640), "640");
        assert_eq!(num(8704.0), "8,704");
    }
}
