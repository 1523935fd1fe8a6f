//! `tilelab sim traffic flash-attn`: the CLI around [`tilelab::sim::traffic`].
//!
//! The problem is checked before any work, so an input error is one line. `--json` prints one
//! object:
//!
//! * `traffic flash-attn`: `{problem, reports: [{order, problem, l2_kv_reuse, grid, blocks,
//!   inner_steps, tensors: [{tensor, read_bytes, written_bytes, l2_hit_bytes}], read_bytes,
//!   written_bytes}], article: [{order, comparison}], assumptions: {v1: [..], v2: [..]}}`.

use std::process::ExitCode;

use serde::Serialize;
use tilelab::sim::traffic::{self, LoopOrder, TrafficProblem, TrafficReport};

use super::out::{self, emit, emit_json, group};

/// Arguments of `tilelab sim traffic`.
#[derive(clap::Args, Debug)]
pub struct TrafficArgs {
    #[command(subcommand)]
    pub kernel: TrafficKernel,
}

/// Kernels `tilelab sim traffic` knows.
#[derive(clap::Subcommand, Debug)]
pub enum TrafficKernel {
    /// FlashAttention forward: DRAM bytes of the v1 and v2 loop orders, with and without L2.
    FlashAttn(TrafficFlashArgs),
}

/// Arguments of `tilelab sim traffic flash-attn`. Defaults are the v1 → v2 article's setting.
#[derive(clap::Args, Debug)]
pub struct TrafficFlashArgs {
    /// Loop order: v1 (K/V outer, Q and O reloaded) or v2 (Q outer, held on chip); both if omitted.
    #[arg(long = "algorithm", value_name = "v1|v2")]
    pub order: Option<String>,
    /// Batch size B.
    #[arg(long, default_value_t = 10, value_parser = super::whole::<u32>("at least 1"))]
    pub batch: u32,
    /// Heads N_h.
    #[arg(long, default_value_t = 64, value_parser = super::whole::<u32>("at least 1"))]
    pub heads: u32,
    /// Sequence length S.
    #[arg(long, default_value_t = 1024, value_parser = super::whole::<u32>("at least 1, a multiple of --bm and --bn"))]
    pub seq: u32,
    /// Head dimension D.
    #[arg(long, default_value_t = 64, value_parser = super::whole::<u32>("at least 1"))]
    pub head_dim: u32,
    /// Block size for both B_r and B_c (rows of Q and of K/V per block); --bm and --bn override it.
    #[arg(long, default_value_t = 32, value_parser = super::whole::<u32>("at least 1"))]
    pub block: u32,
    /// B_r: rows of Q per block (one v2 thread block per Q block) [default: --block].
    #[arg(long, value_parser = super::whole::<u32>("at least 1"))]
    pub bm: Option<u32>,
    /// B_c: rows of K and V per block [default: --block].
    #[arg(long, value_parser = super::whole::<u32>("at least 1"))]
    pub bn: Option<u32>,
    /// Bytes per element of Q, K, V, O: 4 (fp32, the article's kernels) or 2 (fp16/bf16).
    #[arg(long, value_name = "BYTES", value_parser = super::size_u32, default_value_t = 4)]
    pub elem_bytes: u32,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Decimal bytes, as Nsight Compute prints them: "11.24 GB", "412.18 MB".
fn bytes(b: f64) -> String {
    let a = b.abs();
    let (v, u) = if a >= 1e9 {
        (b / 1e9, "GB")
    } else if a >= 1e6 {
        (b / 1e6, "MB")
    } else if a >= 1e3 {
        (b / 1e3, "KB")
    } else {
        (b, "B")
    };
    format!("{v:.2} {u}")
}

/// A signed byte difference: "+339.27 MB", "-91.14 MB".
fn signed_bytes(b: i64) -> String {
    let sign = if b < 0 { '-' } else { '+' };
    format!("{sign}{}", bytes(b.unsigned_abs() as f64))
}

/// Bytes, or "-" for none.
fn bytes_or_dash(b: u64) -> String {
    if b == 0 {
        "-".to_string()
    } else {
        bytes(b as f64)
    }
}

#[derive(Serialize)]
struct ArticleJson {
    order: LoopOrder,
    comparison: traffic::Comparison,
}

#[derive(Serialize)]
struct AssumptionsJson {
    v1: Vec<&'static str>,
    v2: Vec<&'static str>,
}

#[derive(Serialize)]
struct TrafficJson {
    problem: TrafficProblem,
    reports: Vec<TrafficReport>,
    article: Vec<ArticleJson>,
    assumptions: AssumptionsJson,
}

/// Runs `tilelab sim traffic`.
///
/// # Errors
/// An invalid problem (sizes, block, element width) or a failed write.
pub fn run(a: TrafficArgs) -> anyhow::Result<ExitCode> {
    let TrafficKernel::FlashAttn(a) = a.kernel;
    let orders = match &a.order {
        Some(s) => vec![LoopOrder::parse(s)?],
        None => vec![LoopOrder::V1, LoopOrder::V2],
    };
    let p = TrafficProblem {
        batch: a.batch,
        heads: a.heads,
        seq: a.seq,
        head_dim: a.head_dim,
        bm: a.bm.unwrap_or(a.block),
        bn: a.bn.unwrap_or(a.block),
        elem_bytes: a.elem_bytes,
        stat_bytes: 4,
    };
    let s = traffic::study(&p, &orders)?;
    if a.json {
        emit_json(&TrafficJson {
            problem: p,
            article: s
                .article
                .iter()
                .map(|&(order, comparison)| ArticleJson { order, comparison })
                .collect(),
            reports: s.reports,
            assumptions: AssumptionsJson {
                v1: traffic::assumptions(LoopOrder::V1),
                v2: traffic::assumptions(LoopOrder::V2),
            },
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    reports_text(&mut o, &p, &s.reports);
    if s.is_article {
        article_text(&mut o, &p, &s);
    }
    outln!(o, "assumptions:");
    for order in &orders {
        for s in traffic::assumptions(*order) {
            if order == &LoopOrder::V2 && !s.starts_with("v2") && orders.len() == 2 {
                continue; // shared assumptions printed once, with v1
            }
            outln!(o, "  - {s}");
        }
    }
    emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

/// The problem, one row per report and its bytes per tensor.
fn reports_text(o: &mut String, p: &TrafficProblem, reports: &[TrafficReport]) {
    outln!(
        o,
        "{}",
        out::bold(&format!(
            "FlashAttention forward DRAM traffic: B {}, N_h {}, S {}, D {}, B_r {}, B_c {}, {}-byte elements",
            p.batch, p.heads, p.seq, p.head_dim, p.bm, p.bn, p.elem_bytes
        ))
    );
    outln!(
        o,
        "  {:<22} {:>12} {:>10} {:>14} {:>12} {:>12}",
        "loop order",
        "grid",
        "blocks",
        "inner steps",
        "read",
        "written"
    );
    for r in reports {
        let label = format!(
            "{}{}",
            r.order.name(),
            if r.l2_kv_reuse {
                " + L2 reuse of K/V"
            } else {
                ""
            }
        );
        outln!(
            o,
            "  {:<22} {:>12} {:>10} {:>14} {:>12} {:>12}",
            label,
            format!("({}, {})", r.grid[0], r.grid[1]),
            group(r.blocks),
            group(r.inner_steps),
            bytes(r.read_bytes as f64),
            bytes(r.written_bytes as f64)
        );
    }
    outln!(o, "per tensor (read / written / L2 hits):");
    for r in reports {
        let cells: Vec<String> = r
            .tensors
            .iter()
            .filter(|x| x.read_bytes + x.written_bytes + x.l2_hit_bytes > 0)
            .map(|x| {
                let mut s = format!(
                    "{} {} / {}",
                    x.tensor,
                    bytes_or_dash(x.read_bytes),
                    bytes_or_dash(x.written_bytes)
                );
                if x.l2_hit_bytes > 0 {
                    s.push_str(&format!(" / {}", bytes(x.l2_hit_bytes as f64)));
                }
                s
            })
            .collect();
        outln!(
            o,
            "  {}{}: {}",
            r.order.name(),
            if r.l2_kv_reuse { "+L2" } else { "" },
            cells.join("; ")
        );
    }
}

/// The article's measurements beside the model with L2 reuse, and the read reduction.
fn article_text(o: &mut String, p: &TrafficProblem, s: &traffic::TrafficStudy) {
    outln!(
        o,
        "the v1 → v2 article's measurements (Nsight Compute) beside the model with L2 reuse:"
    );
    outln!(o, "  source: {}", tilelab::sources::FA_ARCHAEOLOGY.cite());
    for (r, &(_, c)) in s.reports.iter().filter(|r| r.l2_kv_reuse).zip(&s.article) {
        comparison_text(o, p, r, &c);
    }
    if let Some(x) = s.read_reduction {
        outln!(
            o,
            "  read reduction v1 → v2: article quotes −{:.2}%, its own figures give −{:.2}%, the model (with L2) −{:.2}%",
            x.quoted_percent,
            x.article_figures_percent,
            x.model_percent
        );
    }
}

/// One order's report beside the article's measurement: the read and write gaps.
fn comparison_text(o: &mut String, p: &TrafficProblem, r: &TrafficReport, c: &traffic::Comparison) {
    let tb = c.tensor_bytes as f64;
    let rounding = format!(
        "the quoted figure's rounding is ±{}",
        bytes(c.rounding_bytes as f64)
    );
    if let (Some(m), Some(g)) = (c.measured_read_bytes, c.read_gap_bytes) {
        outln!(
            o,
            "  {} read:    measured {}, model {}, gap {} = {:.2} passes over K and V ({} per pass)",
            r.order.name(),
            bytes(m as f64),
            bytes(r.read_bytes as f64),
            signed_bytes(g),
            c.read_gap_kv_passes.unwrap_or(f64::NAN),
            bytes(2.0 * tb)
        );
        if r.order == LoopOrder::V1
            && (g - 2 * c.tensor_bytes as i64).unsigned_abs() <= c.rounding_bytes
        {
            outln!(
                o,
                "      the gap is one more read of K and V ({rounding}); the stated v1 loop order reads each K/V block once, so the model leaves it unexplained"
            );
        }
    }
    if let (Some(m), Some(g)) = (c.measured_written_bytes, c.written_gap_bytes) {
        let note = if g.unsigned_abs() <= c.rounding_bytes {
            format!(" ({rounding}: agrees)")
        } else {
            String::new()
        };
        outln!(
            o,
            "  {} written: measured {}, model {}, gap {}{note}",
            r.order.name(),
            bytes(m as f64),
            bytes(r.written_bytes as f64),
            signed_bytes(g)
        );
    }
    if c.measured_below_compulsory {
        outln!(
            o,
            "  {} read is below the {} that reading Q, K and V once takes at {}-byte elements: no loop order reads less, so the measurement cannot be this exact setting (at 2-byte elements the compulsory reads are {}); taken as is, it implies {:.2} passes over K and V",
            r.order.name(),
            bytes(c.compulsory_read_bytes as f64),
            p.elem_bytes,
            bytes(c.compulsory_read_bytes as f64 * 2.0 / p.elem_bytes as f64),
            c.implied_kv_passes.unwrap_or(f64::NAN)
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
    fn traffic_takes_an_algorithm_flag() {
        let c = parse(&["sim", "traffic", "flash-attn", "--algorithm", "v2"]);
        let Command::Sim {
            cmd:
                SimCommand::Traffic(TrafficArgs {
                    kernel: TrafficKernel::FlashAttn(t),
                }),
        } = c.cmd
        else {
            panic!("not traffic")
        };
        assert_eq!(t.order.as_deref(), Some("v2"));
        assert_eq!(
            (t.batch, t.heads, t.block, t.bm, t.bn),
            (10, 64, 32, None, None)
        );
    }

    #[test]
    fn byte_formatting() {
        assert_eq!(bytes(11_580_000_000.0), "11.58 GB");
        assert_eq!(bytes(412_180_000.0), "412.18 MB");
        assert_eq!(signed_bytes(-91_140_000), "-91.14 MB");
        assert_eq!(bytes_or_dash(0), "-");
    }
}
