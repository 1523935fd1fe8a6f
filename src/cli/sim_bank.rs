//! `tilelab sim bank-conflicts`: a warp reading a whole tile under one or more layouts, shown as
//! a bank grid per request plus totals in Nsight Compute's terms.
//!
//! `--json` prints `{"tile": [R, C], "dtype", "elem_bytes", "access", "layouts": [{"layout",
//! "cute", "instruction", "sass", "requests", "wavefronts", "ideal", "bank_conflicts",
//! "conflict_rate", "avg_wavefronts_per_request", "wavefronts_per_request": [..], "shown": {
//! "request", "label", "lanes": [{"lane", "row", "col", "byte_offset", "bank", "wavefronts"}],
//! "grid": [{"wavefront", "banks": [{"bank", "word", "lanes"}]}]}}]}`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;
use tilelab::sim::access::{Access, TileRequest};
use tilelab::sim::bank::{
    NUM_BANKS, NotModelled, RequestReport, SharedMemoryConfig, WarpRequest, bank_of, schedule,
};
use tilelab::sim::bank_read::{self, AddrOp, AddrRequestSpec};
use tilelab::sim::instr::Instruction;

use super::out;

/// Arguments of `tilelab sim bank-conflicts`.
#[derive(clap::Args, Debug)]
pub struct BankArgs {
    /// Layout(s) of the tile in shared memory; repeat to compare: row | col | trans | pad:N |
    /// swizzle:B,M,S, joined with '+' (e.g. row+pad:8). Default: row and trans for the scalar
    /// accesses, row for vec8/vec16, row and swizzle:3,3,3 for ldmatrix.
    #[arg(long)]
    pub layout: Vec<String>,
    /// Element type: f32, f16, bf16, u8, f64 (or a byte count 1/2/4/8). Default: f32, or f16
    /// for ldmatrix (it loads b16 elements).
    #[arg(long)]
    pub dtype: Option<String>,
    /// Tile size RxC in elements (default: the FA v1→v2 article's K block, Bc=32 rows by D=64 columns).
    #[arg(long, default_value = "32x64")]
    pub tile: String,
    /// How the warp reads the tile: row, col, col16 (tid & 15), vec8, vec16, ldmatrix, ldmatrix.trans.
    #[arg(long, default_value = "col")]
    pub access: String,
    /// Which request's bank grid to draw (0-based).
    #[arg(long, default_value_t = 0, value_parser = super::whole::<usize>("0..=the number of requests - 1"))]
    pub request: usize,
    /// Also print the per-lane table (address, bank, wavefront) of the drawn request.
    #[arg(long)]
    pub lanes: bool,
    /// Write the drawn request's bank grid (first layout) as SVG to FILE.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Instead of a tile: one request whose lane byte offsets are an expression over `lane`,
    /// e.g. "lane*12" or "(lane%8)*132+(lane/8)*4" (operators + - * / % ^ & | << >> and
    /// parentheses, C precedence, 32-bit checked arithmetic).
    #[arg(
        long,
        value_name = "EXPR",
        conflicts_with_all = ["layout", "dtype", "tile", "access", "request"]
    )]
    pub addr: Option<String>,
    /// Bytes per lane of the --addr request: 1, 2, 4, 8 (.v2.b32) or 16 (.v4.b32); 4, 8 or 16
    /// for --op cp.async.ca.
    #[arg(long, value_name = "BYTES", value_parser = super::size_u32, requires = "addr")]
    pub width: Option<u32>,
    /// Active lanes of the --addr request, bit i = lane i: hex (0xffff) or decimal. Default all 32.
    #[arg(long, value_name = "M", requires = "addr")]
    pub mask: Option<String>,
    /// Load, store or async copy for the --addr request: ld (ld.shared), st (st.shared) or
    /// cp.async.ca (cp.async.ca.shared.global of --width 4, 8 or 16 bytes, sources from --src).
    /// Default ld.
    #[arg(long, value_name = "OP", value_parser = ["ld", "st", "cp.async.ca"], requires = "addr")]
    pub op: Option<String>,
    /// --op cp.async.ca: each lane's global source byte address, an expression over `lane` like
    /// --addr (default `lane*W`, W = --width: the contiguous tile copy). Its 128-byte lines decide
    /// the cost; sources spread over several lines give bounds, not a count.
    #[arg(long, value_name = "EXPR", requires = "addr")]
    pub src: Option<String>,
}

/// Parses `RxC`.
pub fn parse_tile(raw: &str) -> anyhow::Result<(u32, u32)> {
    let s = &*tilelab::text::value(raw);
    let bad =
        || anyhow::anyhow!("bad tile '{s}'; expected ROWSxCOLS with both at least 1, e.g. 32x64");
    let (r, c) = raw.split_once(['x', 'X']).ok_or_else(bad)?;
    let num = |t: &str| -> anyhow::Result<u32> {
        let t = t.trim();
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        // All digits: a parse failure is a number past u32, i.e. past the 4096 allowed.
        t.parse().map_err(|_| {
            anyhow::anyhow!(
                "bad tile '{s}'; rows and columns must be 1..=4096, not {}",
                tilelab::text::value(t)
            )
        })
    };
    let (r, c) = (num(r)?, num(c)?);
    if r == 0 || c == 0 || r > 4096 || c > 4096 {
        return Err(anyhow::anyhow!(
            "bad tile '{s}'; rows and columns must be 1..=4096"
        ));
    }
    Ok((r, c))
}

/// Element size in bytes of a dtype name.
pub fn parse_dtype(s: &str) -> anyhow::Result<u32> {
    Ok(match s {
        "u8" | "i8" | "s8" | "fp8" | "1" => 1,
        "f16" | "bf16" | "half" | "u16" | "2" => 2,
        "f32" | "float" | "u32" | "i32" | "4" => 4,
        "f64" | "double" | "u64" | "8" => 8,
        _ => anyhow::bail!(
            "unknown dtype '{}'; allowed: u8, f16, bf16, f32, f64 (or 1, 2, 4, 8)",
            tilelab::text::value(s)
        ),
    })
}

#[derive(Serialize)]
struct BankCell {
    bank: usize,
    word: u32,
    lanes: Vec<usize>,
}

#[derive(Serialize)]
struct GridRow {
    wavefront: usize,
    banks: Vec<BankCell>,
}

#[derive(Serialize)]
struct Shown {
    request: usize,
    label: String,
    lanes: Vec<out::LaneRow>,
    grid: Vec<GridRow>,
}

#[derive(Serialize)]
struct LayoutReport {
    layout: String,
    cute: String,
    instruction: String,
    sass: String,
    requests: usize,
    wavefronts: u64,
    ideal: u64,
    bank_conflicts: u64,
    conflict_rate: f64,
    avg_wavefronts_per_request: f64,
    wavefronts_per_request: Vec<u32>,
    shown: Shown,
}

#[derive(Serialize)]
struct Report {
    tile: [u32; 2],
    dtype: String,
    elem_bytes: u32,
    access: String,
    layouts: Vec<LayoutReport>,
}

fn lanes_of(mask: u32) -> Vec<usize> {
    (0..32).filter(|l| mask >> l & 1 == 1).collect()
}

/// The bank grid of one request, for `--json`: per wavefront, the banks it touches, the word
/// each serves and the lanes served.
fn grid_rows(r: &RequestReport) -> Vec<GridRow> {
    r.wavefronts
        .iter()
        .enumerate()
        .map(|(i, w)| GridRow {
            wavefront: i,
            banks: (0..NUM_BANKS)
                .filter_map(|b| {
                    w.bank_words[b].map(|word| BankCell {
                        bank: b,
                        word,
                        lanes: lanes_of(w.bank_lanes[b]),
                    })
                })
                .collect(),
        })
        .collect()
}

/// One layout's report ([`bank_read::read_tile`]), with request `shown` drawn.
fn analyse(
    spec: &str,
    access: Access,
    rows: u32,
    cols: u32,
    eb: u32,
    shown: usize,
) -> anyhow::Result<(LayoutReport, RequestReport, TileRequest)> {
    let read = bank_read::read_tile(spec, access, rows, cols, eb)?;
    let reqs = &read.requests;
    if shown >= reqs.len() {
        anyhow::bail!(
            "--request {shown} is out of range; this tiling has requests 0..={}",
            reqs.len() - 1
        );
    }
    let stats = read.stats;
    let t = &reqs[shown];
    let r = &schedule(&t.request);
    let lanes = out::LaneRow::rows(&t.elems, &t.request.lane_byte_offsets, r);
    let ins = t.request.instruction;
    let rep = LayoutReport {
        layout: read.spec.clone(),
        cute: read.layout.to_string(),
        instruction: ins.to_string(),
        sass: ins.sass().to_string(),
        requests: reqs.len(),
        wavefronts: stats.wavefronts,
        ideal: stats.ideal,
        bank_conflicts: stats.conflicts,
        conflict_rate: stats.conflict_rate(),
        avg_wavefronts_per_request: stats.wavefronts_per_request(),
        wavefronts_per_request: read.costs.iter().map(|c| c.wavefronts).collect(),
        shown: Shown {
            request: shown,
            label: t.label.clone(),
            lanes,
            grid: grid_rows(r),
        },
    };
    Ok((rep, r.clone(), t.clone()))
}

/// Prints the bank grid of one request as two blocks of 16 banks (fits 80 columns).
fn print_grid(o: &mut String, r: &RequestReport) {
    for half in 0..2 {
        let banks = half * 16..half * 16 + 16;
        if r.wavefronts
            .iter()
            .all(|w| banks.clone().all(|b| w.bank_lanes[b] == 0))
        {
            outln!(o, "  banks {}-{}: not touched", banks.start, banks.end - 1);
            continue;
        }
        let mut head = String::from("        ");
        for b in banks.clone() {
            head.push_str(&format!("{:>4}", format!("b{b}")));
        }
        outln!(o, "{}", out::bold(&head));
        for (i, w) in r.wavefronts.iter().enumerate() {
            let mut line = format!("  wf{:<3} ", i);
            for b in banks.clone() {
                let cellstr = match w.bank_lanes[b] {
                    0 => "   ·".to_string(),
                    m if m.count_ones() == 1 => format!("{:>4}", m.trailing_zeros()),
                    m => format!("{:>3}+", m.trailing_zeros()),
                };
                line.push_str(&if w.bank_lanes[b] == 0 {
                    cellstr
                } else {
                    out::paint(&cellstr, tilelab::palette::wavefront(r, i))
                });
            }
            outln!(o, "{line}");
        }
    }
    // cp.async writes are never merged: no cell has several lanes.
    let shares = if matches!(r.instruction, Instruction::CpAsync(_)) {
        "cp.async writes are never merged: one lane per cell"
    } else {
        "'+' = several lanes share the word"
    };
    outln!(
        o,
        "  (cell = lowest lane served by that bank in that wavefront; {shares})"
    );
}

pub fn run(mut a: BankArgs) -> anyhow::Result<ExitCode> {
    if let Some(expr) = &a.addr {
        return run_addr(expr, &a);
    }
    let (rows, cols) = parse_tile(&a.tile)?;
    let access = Access::parse(&a.access)?;
    // Defaults that work for the access (`sim::access`).
    let (dtype, layouts) = bank_read::tile_defaults(access, a.dtype.as_deref(), &a.layout);
    a.layout = layouts;
    let eb = parse_dtype(&dtype)?;
    let mut reports = Vec::new();
    let mut first = None;
    for spec in &a.layout {
        let (rep, rr, tr) = analyse(spec, access, rows, cols, eb, a.request)?;
        if first.is_none() {
            first = Some((rr.clone(), tr.clone()));
        }
        reports.push((rep, rr));
    }
    if let Some(path) = &a.svg {
        let (rr, tr) = first.as_ref().expect("at least one layout");
        let title = format!(
            "{} {}x{} {} layout '{}': request {} ({}) - {} wavefronts",
            rr.instruction,
            rows,
            cols,
            dtype,
            tilelab::text::escape(&a.layout[0]),
            a.request,
            tr.label,
            rr.wavefront_count()
        );
        std::fs::write(path, tilelab::viz::bank_grid(rr, &title))
            .with_context(|| format!("cannot write SVG to '{}'", tilelab::text::path(path)))?;
    }
    if a.json {
        out::emit_json(&Report {
            tile: [rows, cols],
            dtype: dtype.clone(),
            elem_bytes: eb,
            access: access.to_string(),
            layouts: reports.into_iter().map(|(r, _)| r).collect(),
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let tile = TileText {
        rows,
        cols,
        dtype: &dtype,
        eb,
        access,
        lanes: a.lanes,
    };
    out::emit(&tile_text(&tile, &reports))?;
    Ok(ExitCode::SUCCESS)
}

/// What the text of a tile read names besides its reports.
struct TileText<'a> {
    rows: u32,
    cols: u32,
    dtype: &'a str,
    eb: u32,
    access: Access,
    /// `--lanes`: the per-lane table of each drawn request.
    lanes: bool,
}

/// The text of a tile read: per layout its drawn request and totals, then a comparison table
/// when there are several layouts.
fn tile_text(t: &TileText, reports: &[(LayoutReport, RequestReport)]) -> String {
    let TileText {
        rows,
        cols,
        dtype,
        eb,
        access,
        ..
    } = *t;
    let mut o = String::new();
    for (rep, rr) in reports {
        outln!(
            o,
            "{} tile {rows}x{cols} {} ({eb} B), layout '{}' = {}, access {}: {} requests of {} ({})",
            out::bold("==>"),
            dtype,
            tilelab::text::escape(&rep.layout),
            rep.cute,
            access,
            rep.requests,
            rep.instruction,
            rep.sass
        );
        outln!(
            o,
            "request {}: {}  -> {} wavefront(s) (ideal {}, {} bank conflict(s)){}",
            rep.shown.request,
            rep.shown.label,
            rr.wavefront_count(),
            rr.ideal(),
            rr.bank_conflicts(),
            tilelab::sim::stats::ways(rr.wavefront_count() as u64, rr.ideal() as u64, 1)
                .map(|w| format!(": a {w}"))
                .unwrap_or_default()
        );
        print_grid(&mut o, rr);
        if t.lanes {
            outln!(o, "  lane  (row,col)   byte offset  bank  wavefront(s)");
            for l in &rep.shown.lanes {
                outln!(
                    o,
                    "  {:>4}  {:>9}  {:>11}  {:>4}  {}",
                    l.lane,
                    format!("({},{})", l.row, l.col),
                    l.byte_offset,
                    l.bank,
                    out::wavefront_set(&l.wavefronts)
                );
            }
        }
        outln!(
            o,
            "total: {} requests, {} wavefronts, ideal {}, {} bank conflicts; conflict rate {:.2}% of wavefronts, {:.2} wavefronts per request on average{}\n",
            rep.requests,
            rep.wavefronts,
            rep.ideal,
            rep.bank_conflicts,
            100.0 * rep.conflict_rate,
            rep.avg_wavefronts_per_request,
            tilelab::sim::stats::ways(rep.wavefronts, rep.ideal, rep.requests as u64)
                .map(|w| format!(": {w}"))
                .unwrap_or_default()
        );
    }
    if reports.len() > 1 {
        let w = out::column_width(
            reports.iter().map(|(r, _)| r.layout.as_str()),
            22,
            out::NAME_MAX,
        );
        outln!(
            o,
            "{:<w$} {:>9} {:>11} {:>7} {:>10} {:>9} {:>8}",
            "layout",
            "requests",
            "wavefronts",
            "ideal",
            "conflicts",
            "rate",
            "wf/req"
        );
        for (r, _) in reports {
            outln!(
                o,
                "{:<w$} {:>9} {:>11} {:>7} {:>10} {:>8.2}% {:>8.2}",
                out::clip(&r.layout, out::NAME_MAX),
                r.requests,
                r.wavefronts,
                r.ideal,
                r.bank_conflicts,
                100.0 * r.conflict_rate,
                r.avg_wavefronts_per_request
            );
        }
    }
    o
}

/// `--json` of `sim bank-conflicts --addr`.
#[derive(Serialize)]
struct AddrReport {
    addr: String,
    /// cp.async: the source expression.
    #[serde(skip_serializing_if = "Option::is_none")]
    src: Option<String>,
    instruction: String,
    sass: String,
    active_mask: u32,
    wavefronts: u32,
    ideal: u32,
    bank_conflicts: u32,
    lanes: Vec<AddrLane>,
    grid: Vec<GridRow>,
}

/// `--json` of `sim bank-conflicts --addr` for a request the model does not cost
/// (`cp.async.ca` with spread sources).
#[derive(Serialize)]
struct AddrNotModelled {
    addr: String,
    src: Option<String>,
    instruction: String,
    sass: String,
    active_mask: u32,
    /// Why there is no count.
    not_modelled: String,
    /// Spread sources: bounds `[lo, hi]` on ncu's SASS-attributed wavefronts.
    sass_wavefronts: Option<[u32; 2]>,
    /// Spread sources: bounds on ncu's SASS-attributed bank conflicts (wavefronts − units).
    sass_bank_conflicts: Option<[u32; 2]>,
    /// Units with an active lane (spread sources; else null).
    units: Option<u32>,
    lanes: Vec<AddrLane>,
}

/// `sim bank-conflicts --addr` for a request the model does not cost: the reason (with the
/// bounds on ncu's SASS-attributed count where there are some), no grid.
fn addr_not_modelled(
    expr: &str,
    src: Option<String>,
    a: &BankArgs,
    req: &WarpRequest,
    lanes: Vec<AddrLane>,
    why: NotModelled,
) -> anyhow::Result<ExitCode> {
    let (ins, mask) = (req.instruction, req.active_mask);
    if a.svg.is_some() {
        anyhow::bail!("--svg: no bank grid to draw, the model does not cost this request ({why})");
    }
    let b = match why {
        NotModelled::CpAsyncSpreadSources(b) => Some(b),
        _ => None,
    };
    if a.json {
        out::emit_json(&AddrNotModelled {
            addr: expr.to_string(),
            src: src.clone(),
            instruction: ins.to_string(),
            sass: ins.sass().to_string(),
            active_mask: mask,
            not_modelled: why.to_string(),
            sass_wavefronts: b.map(|b| [b.lo, b.hi]),
            sass_bank_conflicts: b.map(|b| [b.lo - b.units, b.hi - b.units]),
            units: b.map(|b| b.units),
            lanes,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    outln!(o, "{}", addr_header(expr, src.as_deref(), a, ins, mask));
    outln!(o, "{why}");
    if a.lanes {
        lane_table(&mut o, &lanes);
    }
    out::emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

/// The first line of `--addr`'s output: instruction, SASS name, the expressions (`src`: the
/// cp.async source expression), the mask.
fn addr_header(expr: &str, src: Option<&str>, a: &BankArgs, ins: Instruction, mask: u32) -> String {
    let src = match src {
        Some(s) if a.src.is_some() => format!(", sources '{}'", out::clip(s, 200)),
        Some(s) => format!(", sources '{s}' (the default)"),
        None => String::new(),
    };
    format!(
        "{} {ins} ({}), address '{}'{src}, active mask {mask:#010x}",
        out::bold("==>"),
        ins.sass(),
        out::clip(expr, 200)
    )
}

/// `--lanes`: one row per active lane (with the global source and its L1 bank for cp.async).
fn lane_table(o: &mut String, lanes: &[AddrLane]) {
    let cp = lanes.iter().any(|l| l.global_address.is_some());
    // A request the model does not cost has no wavefronts to list.
    let costed = lanes.iter().any(|l| !l.wavefronts.is_empty());
    outln!(
        o,
        "  lane  byte offset  bank{}{}",
        if cp { "  global source  L1 bank" } else { "" },
        if costed { "  wavefront(s)" } else { "" }
    );
    for l in lanes {
        let g = match (l.global_address, l.l1_bank) {
            (Some(g), Some(b)) => format!("  {g:>13}  {b:>7}"),
            _ => String::new(),
        };
        let w = if costed {
            format!("  {}", out::wavefront_set(&l.wavefronts))
        } else {
            String::new()
        };
        outln!(
            o,
            "  {:>4}  {:>11}  {:>4}{g}{w}",
            l.lane,
            l.byte_offset,
            l.bank
        );
    }
}

#[derive(Serialize)]
struct AddrLane {
    lane: usize,
    byte_offset: u32,
    bank: usize,
    /// cp.async: the lane's global source byte address and its L1 bank ((address / 4) % 32).
    #[serde(skip_serializing_if = "Option::is_none")]
    global_address: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    l1_bank: Option<u64>,
    wavefronts: Vec<usize>,
}

/// `sim bank-conflicts --addr EXPR [--width B] [--mask M] [--op ld|st]`: one request.
fn run_addr(expr: &str, a: &BankArgs) -> anyhow::Result<ExitCode> {
    let op = match a.op.as_deref() {
        Some("st") => AddrOp::St,
        Some("cp.async.ca") => AddrOp::CpAsyncCa,
        _ => AddrOp::Ld,
    };
    let built = bank_read::addr_request(&AddrRequestSpec {
        expr,
        width: a.width,
        op,
        mask: a.mask.as_deref(),
        src: a.src.as_deref(),
    })?;
    let (req, src_expr) = (built.request, built.src_expr);
    let (ins, mask, offs) = (req.instruction, req.active_mask, req.lane_byte_offsets);
    let smem = SharedMemoryConfig::default();
    let rr = tilelab::sim::bank::simulate(&req, &smem)?;
    let src = req.global_addrs.as_deref();
    let lanes: Vec<AddrLane> = (0..32)
        .filter(|l| mask >> l & 1 == 1)
        .map(|lane| AddrLane {
            lane,
            byte_offset: offs[lane],
            bank: bank_of(offs[lane]),
            global_address: src.map(|g| g[lane]),
            l1_bank: src.map(|g| g[lane] / 4 % 32),
            wavefronts: rr.lane_wavefronts(lane),
        })
        .collect();
    if let Some(why) = rr.not_modelled {
        return addr_not_modelled(expr, src_expr, a, &req, lanes, why);
    }
    if let Some(path) = &a.svg {
        let title = format!(
            "{ins} address {} - {} wavefronts",
            out::clip(expr, 60),
            rr.wavefront_count()
        );
        std::fs::write(path, tilelab::viz::bank_grid(&rr, &title))
            .with_context(|| format!("cannot write SVG to '{}'", tilelab::text::path(path)))?;
    }
    if a.json {
        let grid = grid_rows(&rr);
        out::emit_json(&AddrReport {
            addr: expr.to_string(),
            src: src_expr.clone(),
            instruction: ins.to_string(),
            sass: ins.sass().to_string(),
            active_mask: mask,
            wavefronts: rr.wavefront_count(),
            ideal: rr.ideal(),
            bank_conflicts: rr.bank_conflicts(),
            lanes,
            grid,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    outln!(
        o,
        "{}",
        addr_header(expr, src_expr.as_deref(), a, ins, mask)
    );
    outln!(
        o,
        "{} (ideal {}, {})",
        out::plural(rr.wavefront_count().into(), "wavefront"),
        rr.ideal(),
        out::plural(rr.bank_conflicts().into(), "bank conflict")
    );
    print_grid(&mut o, &rr);
    if a.lanes {
        lane_table(&mut o, &lanes);
    }
    out::emit(&o)?;
    Ok(ExitCode::SUCCESS)
}
