//! Drawing: `impl Widget for &App`, one `render_*` function per pane, none of which changes
//! state. The same `App` always draws the same screen (what the snapshot tests rely on).
//!
//! Colours (also checked by `tests/tui.rs`): in the bank grid each accessed word shows the
//! number of the wavefront that reads it; the first wavefront of each unit (warp, half-warp,
//! quarter-warp or matrix) is drawn in a cool foreground colour ([`unit_color`]), every further
//! wavefront of a unit — a bank-conflict replay — on a warm background ([`conflict_bg`]).

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget, Wrap};

use super::app::{App, Pane, Screen};
use super::keys;
use crate::lessons::run::{CheckStatus, Holder, StepRun, feed_mismatch};
use crate::lessons::{Lesson, StepOp};
use crate::sim::bank::{NUM_BANKS, RequestReport, bank_of};
use crate::sim::mma::Operand;

/// Smallest size drawn in full; below it a one-line notice is shown.
pub const MIN_SIZE: (u16, u16) = (60, 16);

/// Foreground of the first wavefront of unit `u` (no conflict).
pub fn unit_color(u: usize) -> Color {
    [Color::Green, Color::Cyan, Color::Blue, Color::Magenta][u % 4]
}

/// Background of the `k`-th extra wavefront (k >= 1) of a unit: a bank-conflict replay.
pub fn conflict_bg(k: usize) -> Color {
    [Color::Yellow, Color::LightRed, Color::Red][(k - 1) % 3]
}

/// Style of wavefront `w` of `report`.
pub fn wavefront_style(report: &RequestReport, w: usize) -> Style {
    let k = report.replay(w);
    if k == 0 {
        Style::new().fg(unit_color(report.wavefronts[w].unit))
    } else {
        Style::new().fg(Color::Black).bg(conflict_bg(k))
    }
}

/// One character for wavefront `w`: 0-9, then a-z, then `+`.
pub fn wavefront_char(w: usize) -> char {
    std::char::from_digit(w as u32, 36).unwrap_or('+')
}

impl Widget for &App {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
            Paragraph::new(format!(
                "terminal too small: {}x{}, tilelab tui needs at least {}x{} (80x24 recommended)",
                area.width, area.height, MIN_SIZE.0, MIN_SIZE.1
            ))
            .wrap(Wrap { trim: true })
            .render(area, buf);
            return;
        }
        match self.screen {
            Screen::Menu => render_menu(self, area, buf),
            Screen::Lesson => render_lesson(self, area, buf),
        }
        if self.help {
            render_help(self, area, buf);
        }
    }
}

fn pane_block(app: &App, pane: Pane, title: String) -> Block<'static> {
    let focused = app.focus == pane && app.screen == Screen::Lesson;
    Block::new()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(if focused {
            Style::new().fg(Color::Yellow)
        } else {
            Style::new().fg(Color::DarkGray)
        })
        .title(Span::styled(
            title,
            Style::new().add_modifier(Modifier::BOLD),
        ))
}

fn render_menu(app: &App, area: Rect, buf: &mut Buffer) {
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    Line::from(vec![
        Span::styled(" tilelab ", Style::new().fg(Color::Black).bg(Color::Cyan)),
        Span::raw(" lessons: pick one with ↑/↓ and Enter"),
    ])
    .render(head, buf);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(body);
    let items: Vec<Line> = app
        .lessons
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let s = format!("{:>2}. {}", i + 1, l.title);
            if i == app.menu {
                Line::styled(s, Style::new().add_modifier(Modifier::REVERSED))
            } else {
                Line::raw(s)
            }
        })
        .collect();
    let skip = app
        .menu
        .saturating_sub(left.height.saturating_sub(3) as usize);
    Paragraph::new(items.into_iter().skip(skip).collect::<Vec<_>>())
        .block(
            Block::new()
                .borders(Borders::ALL)
                .title(" Lessons ")
                .border_style(Style::new().fg(Color::Yellow)),
        )
        .render(left, buf);
    let l = &app.lessons[app.menu];
    let mut lines = vec![
        Line::styled(l.title.clone(), Style::new().add_modifier(Modifier::BOLD)),
        Line::styled(
            format!("tilelab tui {}", l.name),
            Style::new().fg(Color::Cyan),
        ),
        Line::raw(""),
        Line::raw(l.summary.clone()),
        Line::raw(""),
        Line::styled("Claims covered:", Style::new().add_modifier(Modifier::BOLD)),
    ];
    for c in &l.claims {
        lines.push(Line::raw(format!("• {c}")));
    }
    lines.push(Line::raw(""));
    lines.push(Line::raw(format!(
        "{} steps · layouts: {} · kernel: {}",
        l.steps.len(),
        l.layouts.join(", "),
        l.kernel
    )));
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(Block::new().borders(Borders::ALL).title(" About "))
        .render(right, buf);
    render_footer(keys::footer(Screen::Menu), None, foot, buf);
}

fn render_footer(hints: Vec<(&str, &str)>, extra: Option<Line>, area: Rect, buf: &mut Buffer) {
    if let Some(line) = extra {
        line.render(area, buf);
        return;
    }
    let mut spans = Vec::new();
    for (k, what) in hints {
        spans.push(Span::styled(
            format!(" {k} "),
            Style::new().fg(Color::Black).bg(Color::Gray),
        ));
        spans.push(Span::raw(format!(" {what} ")));
    }
    Line::from(spans).render(area, buf);
}

fn render_lesson(app: &App, area: Rect, buf: &mut Buffer) {
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    render_header(app, head, buf);
    if app.zoom {
        render_pane(app, app.focus, body, buf, true);
    } else {
        let top_h = (body.height.saturating_sub(4)) / 2;
        let [top, mid, bottom] = Layout::vertical([
            Constraint::Length(top_h),
            Constraint::Min(3),
            Constraint::Length(4),
        ])
        .areas(body);
        let grid_w = 40.max(top.width / 2).min(top.width);
        let [grid, lanes] =
            Layout::horizontal([Constraint::Length(grid_w), Constraint::Min(10)]).areas(top);
        let [narr, regs] =
            Layout::horizontal([Constraint::Length(grid_w), Constraint::Min(10)]).areas(mid);
        render_pane(app, Pane::Banks, grid, buf, false);
        render_pane(app, Pane::Lanes, lanes, buf, false);
        render_pane(app, Pane::Narrative, narr, buf, false);
        render_pane(app, Pane::Registers, regs, buf, false);
        render_pane(app, Pane::Counters, bottom, buf, false);
    }
    let extra = app.at_end().then(|| {
        Line::from(vec![
            Span::styled(
                " ✓ last step ",
                Style::new().fg(Color::Black).bg(Color::Green),
            ),
            Span::raw(" ] next lesson · m lesson list · ← back · q quit · ? help"),
        ])
    });
    render_footer(keys::footer(Screen::Lesson), extra, foot, buf);
}

fn render_header(app: &App, area: Rect, buf: &mut Buffer) {
    let l = app.current();
    let step = &l.steps[app.order[app.pos]];
    let mut spans = vec![
        Span::styled(
            format!(" {} ", l.name),
            Style::new().fg(Color::Black).bg(Color::Cyan),
        ),
        Span::styled(
            format!(" step {}/{} ", app.pos + 1, app.runs.len()),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::raw(if area.width >= 100 {
            format!("{} │ layout ", step.op_name())
        } else {
            "│ ".to_string()
        }),
    ];
    for (i, spec) in l.layouts.iter().enumerate() {
        let s = format!("{}:{}", i + 1, spec);
        spans.push(if i == app.layout {
            Span::styled(
                format!("[{s}]"),
                Style::new().fg(Color::Black).bg(Color::Yellow),
            )
        } else {
            Span::raw(format!(" {s} "))
        });
    }
    if l.variants.len() > 1 {
        spans.push(Span::raw(" │ "));
        spans.push(Span::styled(
            l.variants[app.variant].clone(),
            Style::new().fg(Color::Black).bg(Color::Magenta),
        ));
    }
    Line::from(spans).render(area, buf);
}

fn render_pane(app: &App, pane: Pane, area: Rect, buf: &mut Buffer, zoomed: bool) {
    match pane {
        Pane::Banks => render_banks(app, area, buf),
        Pane::Lanes => render_lanes(app, area, buf),
        Pane::Narrative => render_narrative(app, area, buf),
        Pane::Registers => render_registers(app, area, buf, zoomed),
        Pane::Counters => render_counters(app, area, buf),
    }
}

fn render_banks(app: &App, area: Rect, buf: &mut Buffer) {
    let run = app.run();
    let Some(report) = &run.report else {
        let block = pane_block(app, Pane::Banks, " Banks ".into());
        Paragraph::new("mma.sync reads registers only: no shared-memory access in this step.")
            .wrap(Wrap { trim: true })
            .block(block)
            .render(area, buf);
        return;
    };
    let title = format!(
        " Banks · {} wf, {} conflict{} ",
        report.wavefront_count(),
        report.bank_conflicts(),
        if report.bank_conflicts() == 1 {
            ""
        } else {
            "s"
        }
    );
    let block = pane_block(app, Pane::Banks, title);
    let inner = block.inner(area);
    block.render(area, buf);
    let (lines, sel_line) = bank_grid_lines(app, run, report, inner.width);
    let h = inner.height as usize;
    let mut skip = app.scroll_of(Pane::Banks) as usize;
    if let Some(sl) = sel_line
        && h > 1
        && sl >= skip + h
    {
        skip = sl + 1 - h;
    }
    std::iter::once(lines[0].clone())
        .chain(lines.into_iter().skip(1 + skip))
        .take(inner.height as usize)
        .enumerate()
        .for_each(|(i, line)| {
            line.render(
                Rect {
                    y: inner.y + i as u16,
                    height: 1,
                    ..inner
                },
                buf,
            )
        });
}

/// Lines of the bank grid (header, then one line per 128-byte row the request touches) and the
/// index among the rows of the first row holding the selected lane's words.
pub fn bank_grid_lines(
    app: &App,
    run: &StepRun,
    report: &RequestReport,
    width: u16,
) -> (Vec<Line<'static>>, Option<usize>) {
    const LABEL: usize = 6;
    let cell = ((width as usize).saturating_sub(LABEL) / NUM_BANKS).clamp(1, 3);
    // word -> wavefront
    let mut wf_of = std::collections::BTreeMap::new();
    for (w, wave) in report.wavefronts.iter().enumerate() {
        for word in wave.bank_words.iter().flatten() {
            wf_of.entry(*word).or_insert(w);
        }
    }
    let sel_words: std::collections::BTreeSet<u32> = run
        .request
        .as_ref()
        .map(|req| {
            let a = req.lane_byte_offsets[app.lane as usize];
            let width = req.instruction.bytes_per_address();
            let lanes = req.address_lanes();
            if lanes >> app.lane & 1 == 1 {
                (a / 4..=(a + width - 1) / 4).collect()
            } else {
                Default::default()
            }
        })
        .unwrap_or_default();
    let mut rows: Vec<u32> = wf_of.keys().map(|w| w / NUM_BANKS as u32).collect();
    rows.dedup();
    let lines_rows = rows.clone();
    let mut head = String::from("bank  ");
    for b in 0..NUM_BANKS {
        let s = match cell {
            1 => {
                if b % 8 == 0 {
                    format!("{b:<8}")
                } else {
                    String::new()
                }
            }
            2 => {
                if b % 4 == 0 {
                    format!("{b:<8}")
                } else {
                    String::new()
                }
            }
            _ => format!("{b:>2} "),
        };
        head.push_str(&s);
    }
    let mut lines = vec![Line::styled(head, Style::new().fg(Color::DarkGray))];
    for r in rows {
        let mut spans = vec![Span::styled(
            format!("{:>5} ", r * 128),
            Style::new().fg(Color::DarkGray),
        )];
        for b in 0..NUM_BANKS as u32 {
            let word = r * NUM_BANKS as u32 + b;
            let (ch, mut style) = match wf_of.get(&word) {
                Some(&w) => (wavefront_char(w), wavefront_style(report, w)),
                None if app.tile_words.contains(&word) => ('·', Style::new().fg(Color::DarkGray)),
                None => ('░', Style::new().fg(Color::DarkGray)),
            };
            if sel_words.contains(&word) {
                style = style.add_modifier(Modifier::UNDERLINED | Modifier::BOLD);
            }
            let text = match cell {
                1 => ch.to_string(),
                2 => format!("{ch} "),
                _ => format!(" {ch} "),
            };
            spans.push(Span::styled(text, style));
        }
        lines.push(Line::from(spans));
    }
    let sel_row = sel_words.iter().next().map(|w| w / NUM_BANKS as u32);
    let sel_line = sel_row.and_then(|r| lines_rows.iter().position(|&x| x == r));
    (lines, sel_line)
}

fn render_lanes(app: &App, area: Rect, buf: &mut Buffer) {
    let run = app.run();
    let block = pane_block(app, Pane::Lanes, " Lanes ".into());
    let inner = block.inner(area);
    block.render(area, buf);
    let mut lines = Vec::new();
    match (&run.request, &run.report) {
        (Some(req), Some(rep)) => {
            lines.push(Line::styled(
                "ln (row,col)   byte bank wf",
                Style::new().fg(Color::DarkGray),
            ));
            let lanes = req.address_lanes();
            for lane in 0..32usize {
                let sel = lane as u32 == app.lane;
                let text;
                let mut style;
                if lanes >> lane & 1 == 1 {
                    let off = req.lane_byte_offsets[lane];
                    let (r, c) = run.coords[lane].unwrap_or((0, 0));
                    let wfs = rep.lane_wavefronts(lane);
                    let wtxt: String = wfs.iter().map(|&w| wavefront_char(w)).collect();
                    text = format!(
                        "{lane:>2} ({r:>3},{c:>3}) {off:>6}  b{:<2} {wtxt}",
                        bank_of(off)
                    );
                    style = wfs
                        .first()
                        .map_or(Style::new(), |&w| wavefront_style(rep, w));
                } else {
                    text = format!("{lane:>2} (no address: .x1/.x2 use lanes 0-7/0-15)");
                    style = Style::new().fg(Color::DarkGray);
                }
                if sel {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                lines.push(Line::styled(text, style));
            }
        }
        _ => {
            lines.push(Line::styled(
                "ln groupID threadID_in_group",
                Style::new().fg(Color::DarkGray),
            ));
            for lane in 0..32u32 {
                let mut style = Style::new().fg(unit_color((lane / 4) as usize));
                if lane == app.lane {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                lines.push(Line::styled(
                    format!("{lane:>2}    g={}    t={}", lane / 4, lane % 4),
                    style,
                ));
            }
        }
    }
    // Keep the selected lane (line lane+1) visible.
    let h = inner.height as usize;
    let want = app.lane as usize + 1;
    let start = if want < h { 0 } else { want + 1 - h };
    let body: Vec<Line> = std::iter::once(lines[0].clone())
        .chain(lines.into_iter().skip(1 + start))
        .collect();
    Paragraph::new(body).render(inner, buf);
}

fn md_line(s: &str) -> Line<'static> {
    let t = s.trim_end();
    if let Some(h) = t.strip_prefix('#') {
        return Line::styled(
            h.trim_start_matches('#').trim().to_string(),
            Style::new()
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
                .fg(Color::Cyan),
        );
    }
    let mut spans = Vec::new();
    let mut code = false;
    let mut bold = false;
    let mut cur = String::new();
    let style = |code: bool, bold: bool| {
        let mut s = Style::new();
        if code {
            s = s.fg(Color::Cyan);
        }
        if bold {
            s = s.add_modifier(Modifier::BOLD);
        }
        s
    };
    let mut chars = t.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '`' {
            spans.push(Span::styled(std::mem::take(&mut cur), style(code, bold)));
            code = !code;
        } else if ch == '*' && chars.peek() == Some(&'*') && !code {
            chars.next();
            spans.push(Span::styled(std::mem::take(&mut cur), style(code, bold)));
            bold = !bold;
        } else {
            cur.push(ch);
        }
    }
    spans.push(Span::styled(cur, style(code, bold)));
    Line::from(spans)
}

/// Markdown-lite to lines: headings, `code`, **bold**; paragraphs are joined so that they wrap.
pub fn markdown(text: &str) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let mut para = String::new();
    let flush = |para: &mut String, out: &mut Vec<Line<'static>>| {
        if !para.is_empty() {
            out.push(md_line(para));
            para.clear();
        }
    };
    for raw in text.lines() {
        let l = raw.trim_end();
        if l.is_empty() {
            flush(&mut para, &mut out);
            out.push(Line::raw(""));
        } else if l.starts_with('#') || l.starts_with("* ") || l.starts_with("- ") {
            flush(&mut para, &mut out);
            if l.starts_with('#') {
                out.push(md_line(l));
            } else {
                para.push_str(&format!("• {}", &l[2..]));
            }
        } else if l.starts_with("  ") && !para.is_empty() {
            para.push(' ');
            para.push_str(l.trim());
        } else {
            if !para.is_empty() {
                para.push(' ');
            }
            para.push_str(l);
        }
    }
    flush(&mut para, &mut out);
    out
}

fn render_narrative(app: &App, area: Rect, buf: &mut Buffer) {
    let l = app.current();
    let step = &l.steps[app.order[app.pos]];
    let block = pane_block(app, Pane::Narrative, " Narrative ".into());
    let mut lines = vec![Line::styled(
        format!(
            "Step {}/{}: {} ({})",
            app.pos + 1,
            app.runs.len(),
            step.title,
            step.sass()
        ),
        Style::new().add_modifier(Modifier::BOLD).fg(Color::Yellow),
    )];
    if !step.note.trim().is_empty() {
        lines.extend(markdown(&step.note));
    }
    lines.push(Line::raw(""));
    lines.extend(markdown(&l.narrative));
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((app.scroll_of(Pane::Narrative), 0))
        .block(block)
        .render(area, buf);
}

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

/// The registers pane's text for the selected lane.
pub fn register_lines(app: &App) -> Vec<Line<'static>> {
    let l = app.current();
    let run = app.run();
    let lane = app.lane;
    let mut lines = vec![Line::styled(
        format!(
            "lane {lane} · groupID {} · threadID_in_group {}",
            lane / 4,
            lane % 4
        ),
        Style::new().add_modifier(Modifier::BOLD),
    )];
    let elems = run.lane_regs(lane);
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
                "{} {} {} mma {:?} fragment{}",
                regs.join(","),
                if ok { "=" } else { "≠" },
                outs.join(","),
                f.operand,
                if ok { " ✓" } else { " ✗" }
            ),
            Style::new().fg(if ok { Color::Green } else { Color::Red }),
        ));
    }
    if let StepOp::Mma { shape, dtype } = &step.op {
        lines.push(Line::styled(
            format!("{} · {}", shape.ptx(*dtype), shape.sass(*dtype)),
            Style::new().fg(Color::DarkGray),
        ));
    }
    lines
}

/// The fragment map: for mma steps the operand `app.operand`; for shared steps the tile
/// elements loaded. Each cell shows the lane that holds the element, coloured by register; the
/// selected lane's cells are reversed. `None` when nothing fits in `width` x `height`.
pub fn fragment_map(app: &App, width: u16, height: u16) -> Option<Vec<Line<'static>>> {
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
    lines.push(Line::styled(head, Style::new().fg(Color::DarkGray)));
    for r in 0..rows {
        let mut spans = vec![Span::styled(
            format!("{:>4} ", r + r0),
            Style::new().fg(Color::DarkGray),
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
                None => spans.push(Span::styled("  ·", Style::new().fg(Color::DarkGray))),
            }
        }
        lines.push(Line::from(spans));
    }
    Some(lines)
}

fn render_registers(app: &App, area: Rect, buf: &mut Buffer, zoomed: bool) {
    let block = pane_block(app, Pane::Registers, " Registers & fragments ".into());
    let inner = block.inner(area);
    block.render(area, buf);
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
    if text_area.width > 0 {
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((app.scroll_of(Pane::Registers), 0))
            .render(text_area, buf);
    }
}

fn render_counters(app: &App, area: Rect, buf: &mut Buffer) {
    let l = app.current();
    let (by, stats) = app.counters();
    let (wf, ideal, cf) = (stats.wavefronts, stats.ideal, stats.conflicts);
    let block = pane_block(
        app,
        Pane::Counters,
        format!(" Counters · steps 1-{} ", app.pos + 1),
    );
    let mut first = vec![Span::styled("SASS ", Style::new().fg(Color::DarkGray))];
    for (k, v) in &by {
        first.push(Span::styled(
            k.to_string(),
            Style::new().add_modifier(Modifier::BOLD),
        ));
        first.push(Span::raw(format!(" ×{v}  ")));
    }
    let mut second = vec![
        Span::styled("wavefronts ", Style::new().fg(Color::DarkGray)),
        Span::raw(format!("{wf} (ideal {ideal})  ")),
        Span::styled("conflicts ", Style::new().fg(Color::DarkGray)),
        Span::styled(
            format!("{cf}"),
            if cf > 0 {
                Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
            } else {
                Style::new().fg(Color::Green)
            },
        ),
    ];
    let run = app.run();
    let step = &l.steps[run.step];
    if let Some(c) = run.cost {
        second.push(Span::raw(format!(
            "  │ this step {} wf, {} cf",
            c.wavefronts,
            c.bank_conflicts()
        )));
        if let Some(e) = step.expect.get(&l.layouts[app.layout]) {
            let ok = (e.wavefronts, e.conflicts) == (c.wavefronts, c.bank_conflicts());
            second.push(Span::styled(
                if ok {
                    " ✓"
                } else {
                    " ✗ lesson file disagrees"
                },
                Style::new().fg(if ok { Color::Green } else { Color::Red }),
            ));
        }
    }
    let mut lines = vec![Line::from(first), Line::from(second)];
    if !app.model_checks.is_empty() {
        let agree = app
            .model_checks
            .iter()
            .filter(|c| c.status == CheckStatus::Pass)
            .count();
        lines.push(Line::styled(
            format!(
                "kernel-level claims: {agree} of {} agree with the counts model",
                app.model_checks.len()
            ),
            Style::new().fg(Color::DarkGray),
        ));
        for c in &app.model_checks {
            let ok = c.status == CheckStatus::Pass;
            lines.push(Line::from(vec![
                Span::styled(
                    if ok { "✓ " } else { "✗ " },
                    Style::new().fg(if ok { Color::Green } else { Color::Red }),
                ),
                Span::raw(format!("{}: {}", c.what, c.detail)),
            ]));
        }
    }
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((app.scroll_of(Pane::Counters), 0))
        .block(block)
        .render(area, buf);
}

fn render_help(app: &App, area: Rect, buf: &mut Buffer) {
    let rows = keys::help_rows(app.screen);
    let w = 64.min(area.width);
    let h = (rows.len() as u16 + 6).min(area.height);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    Clear.render(r, buf);
    let mut lines: Vec<Line> = rows
        .into_iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(format!("{k:>9}  "), Style::new().fg(Color::Yellow)),
                Span::raw(what),
            ])
        })
        .collect();
    lines.push(Line::styled(
        "   bank grid: each cell is a 4-byte word; its character is the",
        Style::new().fg(Color::DarkGray),
    ));
    lines.push(Line::styled(
        "   wavefront that serves it (0-9, then a-z for 10-35)",
        Style::new().fg(Color::DarkGray),
    ));
    lines.push(Line::styled(
        "   Esc or ? closes this help",
        Style::new().fg(Color::DarkGray),
    ));
    Paragraph::new(lines)
        .block(
            Block::new()
                .borders(Borders::ALL)
                .border_type(BorderType::Double)
                .title(" Keys "),
        )
        .render(r, buf);
}
