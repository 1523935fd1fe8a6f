//! `tilelab tui --ptx`: one warp of a simulated PTX kernel. The lesson screen's arrangement:
//! the bank grid ([`super::banks::grid_lines`]) and the lanes on top, the PTX source around the
//! current line and the lane's registers (fragments for `ldmatrix`, `stmatrix`, `mma`) below,
//! running counters at the bottom. The header names the kernel, warp, step, line and filters;
//! the footer shows the keys, the go-to-line prompt or a status message.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::banks::{draw_grid, grid_lines, lane_words};
use super::{color, pane_block, unit_color, wavefront_char, wavefront_style, wrapped_more};
use crate::palette;
use crate::ptx::decode::Op;
use crate::ptx::trace::Recorded;
use crate::sim::bank::bank_of;
use crate::sim::exec::register_byte_address;
use crate::sim::instr::Instruction;
use crate::sim::mma::{self, Operand};
use crate::tui::app::{App, Pane, Screen};
use crate::tui::keys;
use crate::tui::ptx::PtxState;

/// What the PTX grid's fill character means (bottom border).
pub const PTX_LEGEND: &str = " ·=word not read ";

pub(super) fn render_ptx(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(p) = app.ptx.as_deref() else {
        return;
    };
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    render_header(p, head, buf);
    if app.zoom {
        render_pane(app, p, app.focus, body, buf);
    } else {
        let top_h = (body.height.saturating_sub(6)) / 2;
        let [top, mid, bottom] = Layout::vertical([
            Constraint::Length(top_h),
            Constraint::Min(3),
            Constraint::Length(6),
        ])
        .areas(body);
        let grid_w = 40.max(top.width / 2).min(top.width);
        let [grid, lanes] =
            Layout::horizontal([Constraint::Length(grid_w), Constraint::Min(10)]).areas(top);
        let [src, regs] =
            Layout::horizontal([Constraint::Length(grid_w), Constraint::Min(10)]).areas(mid);
        render_pane(app, p, Pane::Banks, grid, buf);
        render_pane(app, p, Pane::Lanes, lanes, buf);
        render_pane(app, p, Pane::Narrative, src, buf);
        render_pane(app, p, Pane::Registers, regs, buf);
        render_pane(app, p, Pane::Counters, bottom, buf);
    }
    let extra = if let Some(t) = &p.prompt {
        Some(Line::from(vec![
            Span::styled(
                " go to PTX line: ",
                Style::new().fg(Color::Black).bg(Color::Yellow),
            ),
            Span::raw(format!(" {t}_   Enter go · Esc cancel")),
        ]))
    } else {
        p.status.as_ref().map(|s| {
            Line::from(vec![
                Span::styled(" ! ", Style::new().fg(Color::Black).bg(Color::Yellow)),
                Span::raw(format!(" {s}")),
            ])
        })
    };
    super::render_footer(keys::footer(Screen::Ptx), extra, foot, buf);
}

fn render_header(p: &PtxState, area: Rect, buf: &mut Buffer) {
    let mut spans = vec![Span::styled(
        format!(" {} ", p.report.kernel_demangled),
        Style::new().fg(Color::Black).bg(Color::Cyan),
    )];
    spans.push(Span::raw(format!(" warp {}/{} ", p.warp, p.warps)));
    let role = p.role(p.warp);
    if role != crate::ptx::trace::Role::Other {
        spans.push(Span::raw(format!("({}) ", role.name())));
    }
    match p.current() {
        Some(r) => {
            let shown = p.visible_steps();
            let k = shown.iter().position(|&i| i == p.pos).map_or(0, |k| k + 1);
            spans.push(Span::styled(
                format!("step {k}/{} ", shown.len()),
                Style::new().add_modifier(Modifier::BOLD),
            ));
            spans.push(Span::raw(format!("│ line {} {} ", r.line, p.sass(r))));
            if let Some((at, text)) = p.source_line() {
                spans.push(Span::raw(format!("│ {at} ")));
                if let Ok(t) = text {
                    spans.push(Span::styled(
                        format!("{} ", crate::text::escape(&t)),
                        Style::new().add_modifier(Modifier::BOLD),
                    ));
                }
            }
        }
        None => spans.push(Span::raw("no steps ")),
    }
    if p.only_conflicts {
        spans.push(Span::styled(
            "[conflicts only]",
            Style::new().fg(Color::Black).bg(Color::Yellow),
        ));
    }
    if let Some(l) = p.only_line {
        spans.push(Span::styled(
            format!("[line {l} only]"),
            Style::new().fg(Color::Black).bg(Color::Magenta),
        ));
    }
    Line::from(spans).render(area, buf);
}

fn render_pane(app: &App, p: &PtxState, pane: Pane, area: Rect, buf: &mut Buffer) {
    if pane == Pane::Lanes && p.show_roles {
        return super::hopper::render_roles(app, p, area, buf);
    }
    if let Some(r) = p.current()
        && let Some(h) = &r.hopper
    {
        match pane {
            Pane::Banks => return super::hopper::render_main(app, p, r, h, area, buf),
            Pane::Lanes => return super::hopper::render_side(app, p, h, area, buf),
            _ => {}
        }
    }
    match pane {
        Pane::Banks => render_banks(app, p, area, buf),
        Pane::Lanes => render_lanes(app, p, area, buf),
        Pane::Narrative => render_source(app, p, area, buf),
        Pane::Registers => render_registers(app, p, area, buf),
        Pane::Counters => render_counters(app, p, area, buf),
    }
}

fn plural(n: u32, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn render_banks(app: &App, p: &PtxState, area: Rect, buf: &mut Buffer) {
    let Some(r) = p.current() else {
        let block = pane_block(app, Pane::Banks, " Banks ".into());
        Paragraph::new(format!(
            "Warp {} executed no shared-memory or mma instruction.",
            p.warp
        ))
        .wrap(Wrap { trim: true })
        .block(block)
        .render(area, buf);
        return;
    };
    let Some(req) = r.step.request.as_ref() else {
        let block = pane_block(app, Pane::Banks, " Banks ".into());
        Paragraph::new("mma.sync reads registers only: no shared-memory access in this step.")
            .wrap(Wrap { trim: true })
            .block(block)
            .render(area, buf);
        return;
    };
    let Some(report) = p.report_of(r) else {
        let block = pane_block(app, Pane::Banks, " Banks · not modelled ".into());
        let why = r
            .step
            .cost
            .not_modelled
            .map_or_else(String::new, |w| w.to_string());
        Paragraph::new(format!(
            "The request model does not cost this cp.async: {why}"
        ))
        .wrap(Wrap { trim: true })
        .block(block)
        .render(area, buf);
        return;
    };
    let title = format!(
        " Banks · {} wf, {} ",
        report.wavefront_count(),
        plural(report.bank_conflicts(), "conflict")
    );
    let block = pane_block(app, Pane::Banks, title).title_bottom(Line::styled(
        PTX_LEGEND,
        Style::new().fg(color(palette::DIM)),
    ));
    let inner = block.inner(area);
    let (lines, sel) = grid_lines(
        &report,
        &lane_words(req, app.lane),
        |_| true,
        inner.width,
        false,
    );
    draw_grid(app, block, lines, sel, area, buf);
}

fn render_lanes(app: &App, p: &PtxState, area: Rect, buf: &mut Buffer) {
    let block = pane_block(app, Pane::Lanes, " Lanes ".into());
    let mut lines = Vec::new();
    let cur = p.current();
    match (cur.and_then(|r| r.step.request.as_ref()), cur) {
        (Some(req), Some(r)) => {
            let rep = p.report_of(r);
            lines.push(Line::styled(
                "ln   byte bank wf",
                Style::new().fg(color(palette::DIM)),
            ));
            let lanes = req.address_lanes()
                & if req.instruction.matrices().is_some() {
                    u32::MAX
                } else {
                    r.mask
                };
            for lane in 0..32usize {
                let mut style;
                let text = if lanes >> lane & 1 == 1 {
                    let off = req.lane_byte_offsets[lane];
                    let wfs = rep
                        .as_ref()
                        .map(|x| x.lane_wavefronts(lane))
                        .unwrap_or_default();
                    let wtxt: String = wfs.iter().map(|&w| wavefront_char(w)).collect();
                    style = match (&rep, wfs.first()) {
                        (Some(x), Some(&w)) => wavefront_style(x, w),
                        _ => Style::new(),
                    };
                    format!("{lane:>2} {off:>6}  b{:<2} {wtxt}", bank_of(off))
                } else {
                    style = Style::new().fg(color(palette::DIM));
                    if req.instruction.matrices().is_some() {
                        format!("{lane:>2} (no address: .x1/.x2 use lanes 0-7/0-15)")
                    } else {
                        format!("{lane:>2} (inactive: guard off or exited)")
                    }
                };
                if lane as u32 == app.lane {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                lines.push(Line::styled(text, style));
            }
        }
        _ => lines = super::lanes::mma_lane_lines(app.lane),
    }
    super::lanes::render_lane_lines(lines, app.lane, block, area, buf);
}

/// The PTX text around the current line: line numbers (red where the CTA's report has bank
/// conflicts on that line), the current line reversed.
fn render_source(app: &App, p: &PtxState, area: Rect, buf: &mut Buffer) {
    let cur = p.current().map_or(1, |r| r.line);
    let title = format!(" PTX {} ", short_name(&p.file));
    let block = pane_block(app, Pane::Narrative, title);
    let inner = block.inner(area);
    let h = inner.height as usize;
    let n = p.source.len().max(1);
    let c = (cur as usize).clamp(1, n);
    // Current line a third of the way down, moved by the pane's scroll offset.
    let mut first = c.saturating_sub(h / 3).max(1);
    first = (first + app.scroll_of(Pane::Narrative) as usize).min(n);
    let conflicted: std::collections::BTreeSet<u32> = p
        .report
        .lines
        .iter()
        .filter(|x| x.bank_conflicts > 0)
        .map(|x| x.line)
        .collect();
    let mut lines = Vec::new();
    for ln in first..(first + h).min(n + 1) {
        let text = p.source.get(ln - 1).map_or("", |s| s.trim_end());
        let num_style = if conflicted.contains(&(ln as u32)) {
            Style::new()
                .fg(color(palette::BAD))
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().fg(color(palette::DIM))
        };
        let mut line = Line::from(vec![
            Span::styled(format!("{ln:>5} "), num_style),
            Span::raw(text.replace('\t', "  ")),
        ]);
        if ln == c {
            line = line.style(Style::new().add_modifier(Modifier::REVERSED));
        }
        lines.push(line);
    }
    let block = super::more_marker(block, first > 1, first + h <= n);
    Paragraph::new(lines).block(block).render(area, buf);
}

fn short_name(f: &str) -> &str {
    f.rsplit('/').next().unwrap_or(f)
}

/// The registers pane's text for the selected lane of the current step.
pub fn ptx_register_lines(app: &App, p: &PtxState) -> Vec<Line<'static>> {
    let lane = app.lane;
    let head = |fragments: bool| {
        // groupID and threadID_in_group only mean something for fragments (mma, ldmatrix,
        // stmatrix); beside a plain ld.shared they are jargon with nothing to explain.
        Line::styled(
            if fragments {
                format!(
                    "lane {lane}: groupID {}, threadID_in_group {}",
                    lane / 4,
                    lane % 4
                )
            } else {
                format!("lane {lane}")
            },
            Style::new().add_modifier(Modifier::BOLD),
        )
    };
    let Some(r) = p.current() else {
        return vec![head(false)];
    };
    let fragments = matches!(p.op(r), Some(Op::Mma { .. }))
        || r.step
            .request
            .as_ref()
            .is_some_and(|q| q.instruction.matrices().is_some());
    let mut lines = vec![head(fragments)];
    let text = p.prog.texts.get(r.pc as usize).cloned().unwrap_or_default();
    match (&r.step.request, p.op(r)) {
        (None, Some(Op::Mma { kind, .. })) => {
            mma_lines(&mut lines, r, kind, lane);
            lines.push(Line::styled(
                format!("{} · {}", kind.ptx(), kind.sass()),
                Style::new().fg(color(palette::DIM)),
            ));
        }
        (Some(req), _) => shared_lines(&mut lines, r, req, lane),
        _ => {}
    }
    lines.push(Line::styled(text, Style::new().fg(color(palette::DIM))));
    lines
}

fn mma_lines(lines: &mut Vec<Line<'static>>, r: &Recorded, kind: &mma::MmaKind, lane: u32) {
    for (op, name) in [(Operand::A, "a"), (Operand::B, "b")] {
        for reg in 0..kind.regs(op) {
            let els: Vec<String> = (0..kind.elems_per_reg(op))
                .map(|h| {
                    let (row, col) = kind.fragment(op, lane, reg, h);
                    format!("{op}({row},{col})")
                })
                .collect();
            lines.push(Line::from(vec![
                Span::styled(
                    format!("{name}{reg:<2} "),
                    Style::new()
                        .fg(unit_color(reg as usize))
                        .add_modifier(Modifier::BOLD),
                ),
                Span::raw(els.join(" ")),
            ]));
        }
    }
    for reg in 0..kind.regs(Operand::C) {
        let (row, col) = kind.fragment(Operand::C, lane, reg, 0);
        let word = r.step.regs[lane as usize][reg as usize];
        let v = match kind.acc {
            mma::MmaAcc::F16 => format!(
                "{}, D({},{}) = {}",
                kind.acc.decode(word),
                kind.fragment(Operand::C, lane, reg, 1).0,
                kind.fragment(Operand::C, lane, reg, 1).1,
                kind.acc.decode(word >> 16)
            ),
            acc => acc.decode(word).to_string(),
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!("d{reg:<2} "),
                Style::new()
                    .fg(unit_color(reg as usize))
                    .add_modifier(Modifier::BOLD),
            ),
            Span::raw(format!("D({row},{col}) = {v}")),
        ]));
    }
}

fn shared_lines(
    lines: &mut Vec<Line<'static>>,
    r: &Recorded,
    req: &crate::sim::bank::WarpRequest,
    lane: u32,
) {
    let l = lane as usize;
    let store = req.instruction.is_store();
    let nregs = match req.instruction {
        Instruction::Ldmatrix { num, .. } | Instruction::Stmatrix { num, .. } => num.count(),
        i => i.bytes_per_address().div_ceil(4) as usize,
    };
    let active = r.mask >> lane & 1 == 1 || req.instruction.matrices().is_some();
    if !active {
        lines.push(Line::styled(
            "inactive in this instruction",
            Style::new().fg(color(palette::DIM)),
        ));
        return;
    }
    for reg in 0..nregs {
        let mut parts = Vec::new();
        let halves: &[u32] = if req.instruction.matrices().is_some() {
            &[0, 2]
        } else {
            &[0]
        };
        for &b in halves {
            if let Some(a) = register_byte_address(req, l, reg, b) {
                parts.push(format!("byte {a} (bank {})", bank_of(a)));
            }
        }
        if let Instruction::Ldmatrix { trans, .. } | Instruction::Stmatrix { trans, .. } =
            req.instruction
        {
            let e = crate::sim::ldmatrix::fragment(trans, lane, reg as u32, 0);
            let e1 = crate::sim::ldmatrix::fragment(trans, lane, reg as u32, 1);
            parts.insert(
                0,
                format!(
                    "m{}({},{}) ({},{}) row from lane {}:",
                    e.matrix,
                    e.row,
                    e.col,
                    e1.row,
                    e1.col,
                    crate::sim::ldmatrix::address_lane(e.matrix, e.row)
                ),
            );
        }
        let value = if store {
            String::new()
        } else {
            format!(" = {:#010x}", r.step.regs[l][reg])
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!("r{reg:<2} {} ", if store { "→" } else { "←" }),
                Style::new()
                    .fg(unit_color(reg))
                    .add_modifier(Modifier::BOLD),
            ),
            Span::raw(format!("{}{value}", parts.join(" "))),
        ]));
    }
}

fn render_registers(app: &App, p: &PtxState, area: Rect, buf: &mut Buffer) {
    let block = pane_block(app, Pane::Registers, " Registers & fragments ".into());
    let inner = block.inner(area);
    let lines = ptx_register_lines(app, p);
    let scroll = app.scroll_of(Pane::Registers);
    wrapped_more(block, &lines, inner, scroll).render(area, buf);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((scroll, 0))
        .render(inner, buf);
}

fn render_counters(app: &App, p: &PtxState, area: Rect, buf: &mut Buffer) {
    let (by, stats) = p.counters();
    let block = pane_block(
        app,
        Pane::Counters,
        format!(" Counters · warp {} steps 1-{} ", p.warp, p.pos + 1),
    );
    let mut first = vec![Span::styled("SASS ", Style::new().fg(color(palette::DIM)))];
    for (k, v) in &by {
        first.push(Span::styled(
            k.to_string(),
            Style::new().add_modifier(Modifier::BOLD),
        ));
        first.push(Span::raw(format!(" ×{v}  ")));
    }
    let cf = stats.conflicts;
    let mut second = vec![
        Span::styled("wavefronts ", Style::new().fg(color(palette::DIM))),
        Span::raw(format!("{} (ideal {})  ", stats.wavefronts, stats.ideal)),
        Span::styled("conflicts ", Style::new().fg(color(palette::DIM))),
        Span::styled(
            format!("{cf}"),
            if cf > 0 {
                Style::new()
                    .fg(color(palette::BAD))
                    .add_modifier(Modifier::BOLD)
            } else {
                Style::new().fg(color(palette::GOOD))
            },
        ),
    ];
    if let Some(r) = p.current()
        && r.step.request.is_some()
        && r.step.cost.not_modelled.is_none()
    {
        second.push(Span::raw(format!(
            "  │ this one {} wf, {} cf",
            r.step.cost.wavefronts,
            r.bank_conflicts()
        )));
    }
    let mut lines = vec![Line::from(first), Line::from(second)];
    if let Some(r) = p.current()
        && let Some(x) = p.report.lines.iter().find(|x| x.line == r.line)
    {
        lines.push(Line::styled(
            format!(
                "line {} in the CTA ({} warps): {} executions, {} wavefronts, {} conflicts",
                x.line, p.warps, x.executions, x.wavefronts, x.bank_conflicts
            ),
            Style::new().fg(color(palette::DIM)),
        ));
    }
    let t = &p.report.totals;
    lines.push(Line::styled(
        format!(
            "CTA {}: loads {} wf / {} cf, stores {} wf / {} cf",
            p.launch,
            t.shared_ld_wavefronts,
            t.shared_ld_bank_conflicts,
            t.shared_st_wavefronts,
            t.shared_st_bank_conflicts
        ),
        Style::new().fg(color(palette::DIM)),
    ));
    if let Some((at, text)) = p.source_line() {
        lines.push(Line::from(vec![
            Span::styled(format!("{at}: "), Style::new().fg(color(palette::DIM))),
            match text {
                Ok(t) => Span::styled(
                    crate::text::escape(&t).into_owned(),
                    Style::new().add_modifier(Modifier::BOLD),
                ),
                Err(e) => Span::styled(
                    format!("(source text not shown: {})", crate::text::escape(&e)),
                    Style::new().fg(color(palette::DIM)),
                ),
            },
        ]));
    }
    if p.trace.dropped > 0 {
        lines.push(Line::styled(
            format!(
                "recorded the first {} steps of warp {} (cap, --max-steps); {} later ones not shown",
                p.trace.steps.len(),
                p.warp,
                p.trace.dropped
            ),
            Style::new().fg(color(palette::BAD)),
        ));
    }
    let scroll = app.scroll_of(Pane::Counters);
    let block = wrapped_more(block.clone(), &lines, block.inner(area), scroll);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((scroll, 0))
        .block(block)
        .render(area, buf);
}
