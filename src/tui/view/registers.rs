//! Registers and fragments of the selected lane; zoomed, the fragment map beside them.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{color, pane_block, unit_color, wrapped_more};
use crate::lessons::run::{Holder, StepRun, feed_mismatch};
use crate::lessons::{Lesson, StepOp};
use crate::palette;
use crate::sim::mma::Operand;
use crate::tui::app::{App, Pane};

fn holder_name(l: &Lesson, h: Holder) -> String {
    match h {
        Holder::Tile(i) => l.tiles[i].name.clone(),
        Holder::Operand(Operand::A) => "A".into(),
        Holder::Operand(Operand::B) => "B".into(),
        Holder::Operand(Operand::C) => "C".into(),
    }
}

fn reg_name(run: &StepRun, l: &Lesson, h: Holder, reg: u32) -> String {
    match (h, &l.steps[run.step].op) {
        (Holder::Operand(Operand::A), _) => format!("a{reg}"),
        (Holder::Operand(Operand::B), _) => format!("b{reg}"),
        (Holder::Operand(Operand::C), _) => format!("c{reg}"),
        _ => format!("r{reg}"),
    }
}

/// Whether the current step asks which lane holds an element and is not answered yet: then the
/// registers and the fragment map (the answer, read off) are not drawn.
fn lane_question_hidden(app: &App) -> bool {
    app.answer_hidden()
        && app.exercise().is_some_and(|e| {
            matches!(
                e.kind,
                crate::lessons::exercise::ExerciseKind::LaneOf { .. }
            )
        })
}

/// The registers pane's text for the selected lane.
pub fn register_lines(app: &App) -> Vec<Line<'static>> {
    let l = app.current();
    let run = app.run();
    let lane = app.lane;
    let elems = run.lane_regs(lane);
    // groupID / threadID_in_group pick a fragment's row and column: shown for mma and
    // ldmatrix/stmatrix steps, not beside a plain ld.shared where nothing uses them.
    let fragments = matches!(l.steps[run.step].op, StepOp::Mma { .. })
        || elems.iter().any(|e| matches!(e.holder, Holder::Operand(_)))
        || run
            .request
            .as_ref()
            .is_some_and(|q| q.instruction.matrices().is_some());
    let mut lines = vec![Line::styled(
        if fragments {
            format!(
                "lane {lane} · groupID {} · threadID_in_group {}",
                lane / 4,
                lane % 4
            )
        } else {
            format!("lane {lane}")
        },
        Style::new().add_modifier(Modifier::BOLD),
    )];
    if lane_question_hidden(app) {
        lines.push(Line::styled(
            "which lane holds what is this step's question (r reveals)",
            Style::new().fg(color(palette::DIM)),
        ));
        return lines;
    }
    let mut keys: Vec<(Holder, u32)> = Vec::new();
    for e in &elems {
        if !keys.contains(&(e.holder, e.reg)) {
            keys.push((e.holder, e.reg));
        }
    }
    for (h, reg) in keys {
        let name = holder_name(l, h);
        let parts: Vec<String> = elems
            .iter()
            .filter(|e| e.holder == h && e.reg == reg)
            .map(|e| format!("{name}({},{})", e.row, e.col))
            .collect();
        let color = unit_color(reg as usize);
        lines.push(Line::from(vec![
            Span::styled(
                format!("{:<3} ", reg_name(run, l, h, reg)),
                Style::new().fg(color).add_modifier(Modifier::BOLD),
            ),
            Span::raw(parts.join(" ")),
        ]));
    }
    let step = &l.steps[run.step];
    for f in &step.feeds {
        let ok = feed_mismatch(run, f).is_none();
        let op = if f.operand == Operand::A { "a" } else { "b" };
        let regs: Vec<String> = f.regs.iter().map(|r| format!("r{r}")).collect();
        let outs: Vec<String> = (0..f.regs.len()).map(|j| format!("{op}{j}")).collect();
        lines.push(Line::styled(
            format!(
                "{} {} {} mma {} fragment{}",
                regs.join(","),
                if ok { "=" } else { "≠" },
                outs.join(","),
                f.operand,
                if ok { " ✓" } else { " ✗" }
            ),
            Style::new().fg(color(if ok { palette::GOOD } else { palette::BAD })),
        ));
    }
    if let StepOp::Mma { shape, dtype } = &step.op {
        lines.push(Line::styled(
            format!("{} · {}", shape.ptx(*dtype), shape.sass(*dtype)),
            Style::new().fg(color(palette::DIM)),
        ));
    }
    lines
}

/// The fragment map: for mma steps the operand `app.operand`; for shared steps the tile
/// elements loaded. Each cell shows the lane that holds the element, coloured by register; the
/// selected lane's cells are reversed. `None` when nothing fits in `width` x `height`.
pub fn fragment_map(app: &App, width: u16, height: u16) -> Option<Vec<Line<'static>>> {
    if lane_question_hidden(app) {
        return None;
    }
    let l = app.current();
    let run = app.run();
    let (holder, rows, cols, r0, c0, title) = match &l.steps[run.step].op {
        StepOp::Mma { shape, .. } => {
            let (r, c) = shape.dims(app.operand);
            let h = Holder::Operand(app.operand);
            (
                h,
                r,
                c,
                0,
                0,
                format!("{} {}x{} (o: next operand)", holder_name(l, h), r, c),
            )
        }
        StepOp::Shared { tile, .. } => {
            let es: Vec<_> = run.regs.iter().collect();
            let rmin = es.iter().map(|e| e.row).min()?;
            let rmax = es.iter().map(|e| e.row).max()?;
            let cmin = es.iter().map(|e| e.col).min()?;
            let cmax = es.iter().map(|e| e.col).max()?;
            (
                Holder::Tile(*tile),
                rmax - rmin + 1,
                cmax - cmin + 1,
                rmin,
                cmin,
                format!(
                    "{} rows {rmin}-{rmax}, cols {cmin}-{cmax}: lane per element",
                    l.tiles[*tile].name
                ),
            )
        }
    };
    if (cols * 3 + 5) as u16 > width || (rows + 2) as u16 > height {
        return None;
    }
    let mut owner = vec![None; (rows * cols) as usize];
    for e in run.regs.iter().filter(|e| e.holder == holder) {
        if e.row >= r0 && e.col >= c0 && e.row - r0 < rows && e.col - c0 < cols {
            owner[((e.row - r0) * cols + (e.col - c0)) as usize] = Some((e.lane, e.reg));
        }
    }
    let mut lines = vec![Line::styled(
        title,
        Style::new().add_modifier(Modifier::BOLD),
    )];
    let mut head = String::from("     ");
    for c in 0..cols {
        head.push_str(&format!("{:>3}", c + c0));
    }
    lines.push(Line::styled(head, Style::new().fg(color(palette::DIM))));
    for r in 0..rows {
        let mut spans = vec![Span::styled(
            format!("{:>4} ", r + r0),
            Style::new().fg(color(palette::DIM)),
        )];
        for c in 0..cols {
            match owner[(r * cols + c) as usize] {
                Some((lane, reg)) => {
                    let mut st = Style::new().fg(unit_color(reg as usize));
                    if lane == app.lane {
                        st = st.add_modifier(Modifier::REVERSED);
                    }
                    spans.push(Span::styled(format!("{lane:>3}"), st));
                }
                None => spans.push(Span::styled("  ·", Style::new().fg(color(palette::DIM)))),
            }
        }
        lines.push(Line::from(spans));
    }
    Some(lines)
}

pub(super) fn render_registers(app: &App, area: Rect, buf: &mut Buffer, zoomed: bool) {
    let block = pane_block(app, Pane::Registers, " Registers & fragments ".into());
    let inner = block.inner(area);
    let lines = register_lines(app);
    let mut text_area = inner;
    if zoomed {
        // Text on the left, the fragment map on the right when both fit.
        for map_w in [inner.width.saturating_sub(24), inner.width] {
            if let Some(map) = fragment_map(app, map_w, inner.height) {
                let used = map
                    .iter()
                    .map(|l| l.width() as u16)
                    .max()
                    .unwrap_or(0)
                    .min(map_w);
                let [left, right] =
                    Layout::horizontal([Constraint::Min(0), Constraint::Length(used)]).areas(inner);
                Paragraph::new(map).render(right, buf);
                text_area = left;
                break;
            }
        }
    }
    let scroll = app.scroll_of(Pane::Registers);
    wrapped_more(block, &lines, text_area, scroll).render(area, buf);
    if text_area.width > 0 {
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .render(text_area, buf);
    }
}
