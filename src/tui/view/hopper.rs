//! `tilelab tui --ptx` on Hopper kernels: the views of the followed warp's Hopper events, in
//! the bank grid's and the lanes' places ([`super::ptx`] chooses them).
//!
//! * `wgmma.mma_async` (`w`): the warpgroup, the A and B descriptors decoded (start address,
//!   LBO, SBO, swizzle: [`MatrixDescriptor::decode`]), the core matrices read with the shared
//!   address and bank of each of their 8 rows ([`MatrixDescriptor::core_matrix_rows_of`]); beside
//!   it the accumulator map of the selected lane (which register holds which (row, col) of D,
//!   [`WgmmaKind::d_fragment`]).
//! * TMA / bulk copy (`t`): where the box landed, one line per 128 bytes of shared memory, each
//!   16-byte chunk showing the box `row,chunk` it holds under the map's swizzle (the grid
//!   `tilelab sim tma` draws: [`crate::sim::tma::TmaBox::smem_chunks`]); beside it the map and
//!   the coordinates.
//! * mbarrier (`b`): the operation with the object's phase, pending arrivals and transaction
//!   bytes before and after; beside it the object's history among the recorded steps.
//! * warp roles (`R`): per warp its bulk copies, wgmma and mbarrier instructions and the role
//!   they give ([`crate::ptx::trace::WarpActivity::role`]).
//!
//! Nothing here models anything: the events carry what the engine did, and the layouts come
//! from the `sim` functions named above.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{color, pane_block, wrapped_more};
use crate::palette;
use crate::ptx::decode::{BulkForm, MbarOp};
use crate::ptx::engine::{BulkEvent, MbarState, MbarrierEvent, WgmmaEvent};
use crate::ptx::trace::{Hopper, Recorded};
use crate::sim::bank::bank_of;
use crate::sim::wgmma::{Major, MatrixDescriptor, WgmmaKind};
use crate::tui::app::{App, Pane};
use crate::tui::ptx::PtxState;

fn dim(s: String) -> Line<'static> {
    Line::styled(s, Style::new().fg(color(palette::DIM)))
}

fn bold(s: String) -> Line<'static> {
    Line::styled(s, Style::new().add_modifier(Modifier::BOLD))
}

fn draw(
    app: &App,
    pane: Pane,
    title: String,
    lines: Vec<Line<'static>>,
    area: Rect,
    buf: &mut Buffer,
) {
    let block = pane_block(app, pane, title);
    let inner = block.inner(area);
    let scroll = app.scroll_of(pane);
    let block = wrapped_more(block, &lines, inner, scroll);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((scroll, 0))
        .block(block)
        .render(area, buf);
}

/// The main view of a Hopper step (the bank grid's place).
pub(super) fn render_main(
    app: &App,
    p: &PtxState,
    r: &Recorded,
    h: &Hopper,
    area: Rect,
    buf: &mut Buffer,
) {
    let (title, lines) = match h {
        Hopper::Wgmma(e) => (
            format!(" wgmma · warpgroup {} · {} wf ", e.warpgroup, e.wavefronts),
            wgmma_lines(e),
        ),
        Hopper::Bulk(e) => (" TMA box in shared memory ".to_string(), bulk_lines(p, e)),
        Hopper::Mbarrier(e) => (
            format!(" mbarrier · {} ", p.prog.shared_label(e.addr)),
            mbar_lines(p, r, e),
        ),
    };
    draw(app, Pane::Banks, title, lines, area, buf);
}

/// The side view of a Hopper step (the lanes' place): the accumulator map, the tensor map, the
/// mbarrier's history.
pub(super) fn render_side(app: &App, p: &PtxState, h: &Hopper, area: Rect, buf: &mut Buffer) {
    let (title, lines) = match h {
        Hopper::Wgmma(e) => (
            format!(" Accumulators · lane {} ", app.lane),
            acc_lines(p.warp, app.lane, &e.kind),
        ),
        Hopper::Bulk(e) => (" Tensor map ".to_string(), map_lines(e)),
        Hopper::Mbarrier(e) => (" Phases ".to_string(), history_lines(p, e.addr)),
    };
    draw(app, Pane::Lanes, title, lines, area, buf);
}

/// The warp-roles view (`R`), in the lanes' place.
pub(super) fn render_roles(app: &App, p: &PtxState, area: Rect, buf: &mut Buffer) {
    let mut lines = vec![dim(
        "warp  role              TMA ld  TMA st  wgmma  mbarrier".into(),
    )];
    for w in 0..p.warps {
        let a = p.activity(w);
        let line = format!(
            "{w:>4}  {:<16} {:>7} {:>7} {:>6} {:>9}",
            a.role().name(),
            a.bulk_copies,
            a.bulk_stores,
            a.wgmma,
            a.mbarrier_ops
        );
        lines.push(if w == p.warp {
            bold(line)
        } else {
            Line::raw(line)
        });
    }
    lines.push(dim(
        "a warp that issues TMA/bulk loads is a producer, one that issues wgmma a consumer".into(),
    ));
    draw(
        app,
        Pane::Lanes,
        " Warp roles (R) ".into(),
        lines,
        area,
        buf,
    );
}

fn major(trans: bool) -> Major {
    if trans { Major::Mn } else { Major::K }
}

/// `desc 0x…: start 0x400 (1024), LBO 16, SBO 1024, swizzle 128B, K-major`.
fn desc_line(name: &str, raw: u64, trans: bool) -> Line<'static> {
    let d = MatrixDescriptor::decode(raw);
    Line::raw(format!(
        "{name} desc {raw:#018x}: start {:#x} ({}), LBO {}, SBO {}, swizzle {}, {}",
        d.start_address,
        d.start_address,
        d.leading_byte_offset,
        d.stride_byte_offset,
        d.swizzle,
        if trans { "MN-major" } else { "K-major" }
    ))
}

/// The core matrices of an operand of `rows` x K elements: per core matrix, its 8 rows as
/// `address:bank` (hex address, bank of the row's first word).
fn core_lines(
    name: &str,
    raw: u64,
    trans: bool,
    rows: u32,
    kind: &WgmmaKind,
) -> Vec<Line<'static>> {
    let d = MatrixDescriptor::decode(raw);
    let eb = kind.a.bytes();
    let m = major(trans);
    // A K-major core matrix spans 16 bytes of K, an MN-major one 8 elements of K.
    let k_step = match m {
        Major::K => 16 / eb.max(1),
        Major::Mn => 8,
    };
    let mut out = vec![dim(format!(
        "{name}: {} core matrices of 8 rows x 16 B (row address:bank)",
        (rows / 8) * kind.k().div_ceil(k_step)
    ))];
    for mn in (0..rows).step_by(8) {
        for k in (0..kind.k()).step_by(k_step as usize) {
            let rows = d.core_matrix_rows_of(m, mn, k, eb);
            let cells: Vec<String> = rows
                .iter()
                .map(|&a| format!("{a:x}:{}", bank_of(a)))
                .collect();
            out.push(Line::raw(format!(
                "{name} mn {mn:>3} k {k:>2}  {}",
                cells.join(" ")
            )));
        }
    }
    out
}

fn wgmma_lines(e: &WgmmaEvent) -> Vec<Line<'static>> {
    let k = &e.kind;
    let g = e.warpgroup;
    let mut out = vec![
        bold(format!(
            "{} · warps {}-{} · scale-d {}",
            k.ptx(),
            4 * g,
            4 * g + 3,
            u8::from(e.scale_d)
        )),
        match e.a_desc {
            Some(a) => desc_line("A", a, e.trans[0]),
            None => Line::raw("A from registers (the A fragment of each thread)".to_string()),
        },
        desc_line("B", e.b_desc, e.trans[1]),
    ];
    if let Some(a) = e.a_desc {
        out.extend(core_lines("A", a, e.trans[0], 64, k));
    }
    out.extend(core_lines("B", e.b_desc, e.trans[1], k.n, k));
    out
}

/// The registers of `lane` (thread `32·(warp % 4) + lane` of its warpgroup) and the (row, col)
/// of D each holds.
fn acc_lines(warp: u32, lane: u32, kind: &WgmmaKind) -> Vec<Line<'static>> {
    let t = 32 * (warp % 4) + lane;
    let halves = if kind.acc == crate::sim::wgmma::WgmmaAcc::F16 {
        2
    } else {
        1
    };
    let mut out = vec![dim(format!(
        "thread {t} of the warpgroup (warp {warp} lane {lane}): D register -> (row, col) of the 64x{}",
        kind.n
    ))];
    let mut cells = Vec::new();
    for r in 0..kind.d_regs() {
        let pos: Vec<String> = (0..halves)
            .map(|h| {
                let (row, col) = kind.d_fragment(t, r, h);
                format!("({row},{col})")
            })
            .collect();
        cells.push(format!("d{r}={}", pos.join("")));
    }
    for c in cells.chunks(4) {
        out.push(Line::raw(c.join(" ")));
    }
    out
}

fn form_name(f: BulkForm) -> String {
    match f {
        BulkForm::TensorLoad { rank } => format!("cp.async.bulk.tensor.{rank}d load (UTMALDG)"),
        BulkForm::TensorStore { rank } => format!("cp.async.bulk.tensor.{rank}d store (UTMASTG)"),
        BulkForm::TensorReduce { rank, .. } => format!("cp.reduce.async.bulk.tensor.{rank}d"),
        BulkForm::CopyToShared => "cp.async.bulk global -> shared (UBLKCP)".into(),
        BulkForm::CopyToGlobal => "cp.async.bulk shared -> global (UBLKCP)".into(),
        BulkForm::ReduceToGlobal { .. } => "cp.reduce.async.bulk shared -> global".into(),
    }
}

fn bulk_lines(p: &PtxState, e: &BulkEvent) -> Vec<Line<'static>> {
    let mut out = vec![bold(format!(
        "{} · lane {} · {} bytes",
        form_name(e.form),
        e.lane,
        e.bytes
    ))];
    if let Some(m) = e.mbar {
        out.push(Line::raw(format!(
            "completes its bytes on mbarrier {}",
            p.prog.shared_label(m)
        )));
    }
    let Some(map) = e.map else {
        out.push(Line::raw(format!(
            "no tensor map: {} contiguous bytes at shared {:#x}, global {:#x} (no swizzle)",
            e.bytes,
            e.smem,
            e.global.unwrap_or(0)
        )));
        return out;
    };
    let Ok(b) = map.smem_box(e.smem) else {
        out.push(Line::raw(format!("box at shared {:#x}", e.smem)));
        return out;
    };
    out.push(dim(format!(
        "{} rows x {} B at {:#x}, swizzle {}: each 128-byte line, its 16-byte chunks as box row,chunk",
        b.rows,
        b.inner_bytes(),
        b.base,
        b.swizzle
    )));
    for (i, line) in b.smem_chunks().chunks(8).enumerate() {
        let cells: Vec<String> = line
            .iter()
            .map(|c| c.map_or(" ·".to_string(), |(r, k)| format!("{r},{k}")))
            .map(|s| format!("{s:>6}"))
            .collect();
        out.push(Line::raw(format!(
            "{:#07x}{}",
            b.base as usize + 128 * i,
            cells.join("")
        )));
    }
    out
}

fn map_lines(e: &BulkEvent) -> Vec<Line<'static>> {
    let Some(m) = e.map else {
        return vec![Line::raw("a bulk copy without a tensor map".to_string())];
    };
    let coords: Vec<String> = e.coords[..m.rank].iter().map(i64::to_string).collect();
    let dims: Vec<String> = m.dims[..m.rank].iter().map(u64::to_string).collect();
    let boxes: Vec<String> = m.box_dims[..m.rank].iter().map(u32::to_string).collect();
    vec![
        Line::raw(format!("--tensor-map {m}")),
        Line::raw(format!(
            "{} · dims {} · box {} · swizzle {}",
            m.dtype.name(),
            dims.join("x"),
            boxes.join("x"),
            m.swizzle
        )),
        Line::raw(format!(
            "coordinates {{{}}} (innermost first)",
            coords.join(", ")
        )),
        Line::raw(format!("shared destination {:#x} ({})", e.smem, e.smem)),
        Line::raw(format!(
            "{} bytes (the whole box, zero fill included)",
            e.bytes
        )),
    ]
}

/// `mbarrier.arrive.expect_tx` etc. (a landing: `complete_tx of a bulk copy`).
pub fn mbar_op_name(e: &MbarrierEvent) -> String {
    let Some(op) = e.op else {
        return "complete_tx (a bulk copy's bytes land)".into();
    };
    let name = match op {
        MbarOp::Init => "init",
        MbarOp::Arrive if e.bytes.is_some() => "arrive.expect_tx",
        MbarOp::Arrive => "arrive",
        MbarOp::ArriveDrop if e.bytes.is_some() => "arrive_drop.expect_tx",
        MbarOp::ArriveDrop => "arrive_drop",
        MbarOp::ExpectTx => "expect_tx",
        MbarOp::CompleteTx => "complete_tx",
        MbarOp::TestWait => "test_wait",
        MbarOp::TryWait => "try_wait",
        MbarOp::Inval => "inval",
        MbarOp::CpAsyncArrive { .. } => "cp.async.mbarrier.arrive",
    };
    format!("mbarrier.{name}")
}

fn state_line(what: &str, s: &MbarState) -> Line<'static> {
    Line::raw(format!(
        "{what:<7} {:>6} {:>6} {:>7}/{:<7} {:>8}",
        s.phase,
        s.phase & 1,
        s.pending,
        s.expected,
        s.tx
    ))
}

fn mbar_lines(p: &PtxState, r: &Recorded, e: &MbarrierEvent) -> Vec<Line<'static>> {
    let mut head = format!("{} (line {})", mbar_op_name(e), r.line);
    if e.threads > 0 {
        head.push_str(&format!(
            ", {} thread{}",
            e.threads,
            if e.threads == 1 { "" } else { "s" }
        ));
    }
    if let Some(b) = e.bytes {
        head.push_str(&format!(", {b} tx bytes"));
    }
    let mut out = vec![
        bold(head),
        Line::raw(format!("object {}", p.prog.shared_label(e.addr))),
        dim("        phase parity pending/expected  tx bytes".into()),
        state_line("before", &e.before),
        state_line("after", &e.after),
    ];
    if let (Some(w), Some(done)) = (e.wait_for, e.waited) {
        out.push(Line::raw(if done {
            format!("waits for {w}: complete, the warp goes on")
        } else {
            format!("waits for {w}: not complete, the warp blocks until it is (then runs the wait again)")
        }));
    }
    if e.after.phase > e.before.phase {
        out.push(bold(format!(
            "phase {} -> {}: completed (parity {} -> {})",
            e.before.phase,
            e.after.phase,
            e.before.phase & 1,
            e.after.phase & 1
        )));
    }
    out
}

fn history_lines(p: &PtxState, addr: u32) -> Vec<Line<'static>> {
    let mut out = vec![dim("step  line  operation            phase  tx".into())];
    for (i, r, m) in p.mbar_history(addr) {
        let phase = if m.after.phase == m.before.phase {
            format!("{}", m.after.phase)
        } else {
            format!("{}->{}", m.before.phase, m.after.phase)
        };
        let name = mbar_op_name(m);
        let name = name.strip_prefix("mbarrier.").unwrap_or(&name);
        let name = if m.op.is_none() { "landing" } else { name };
        let wait = match m.waited {
            Some(true) => " ok",
            Some(false) => " blocks",
            None => "",
        };
        let line = format!(
            "{:>4} {:>5}  {:<18} {:>6} {:>4}{wait}",
            i + 1,
            r.line,
            name,
            phase,
            m.after.tx
        );
        out.push(if i == p.pos {
            bold(line)
        } else {
            Line::raw(line)
        });
    }
    out
}
