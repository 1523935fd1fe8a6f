//! Drawing: `impl Widget for &App`, one file per pane, none of which changes state. The same
//! `App` always draws the same screen (what the snapshot tests rely on).
//!
//! * `menu`: the lesson list;
//! * `banks`: the bank grid; `lanes`: the 32 lanes; `narrative`: the lesson text and the
//!   step's note; `registers`: registers and fragment maps; `counters`: running counts;
//! * `ptx`: `tilelab tui --ptx`, the same panes for one warp of a PTX kernel (the source
//!   around the current line in the narrative's place);
//! * `hopper`: the Hopper events' views in `--ptx` (wgmma, TMA, mbarrier, warp roles);
//! * `help`: the key overlay; `glossary`: the current step's terms explained;
//! * `markdown`: the lessons' Markdown as lines (`pulldown-cmark`, as the exported page).
//!
//! Colours come from [`crate::palette`] (also checked by `tests/tui.rs`): in the bank grid each
//! accessed word shows the number of the wavefront that reads it; the first wavefront of each
//! unit (warp, half-warp, quarter-warp or matrix) is drawn in a cool foreground colour
//! ([`unit_color`]), every further wavefront of a unit — a bank-conflict replay — on a warm
//! background ([`conflict_bg`]). With [`App::color`] off every cell is drawn in the terminal's
//! default colours and backgrounds become reverse video.
//!
//! A pane whose text does not fit shows `↓ more` (or `↑ more`, `↕ more`) in its bottom border.

mod banks;
mod counters;
mod glossary;
mod help;
mod hopper;
mod lanes;
mod markdown;
mod menu;
mod narrative;
mod ptx;
mod registers;

pub use banks::{LEGEND, bank_grid_lines};
pub use hopper::mbar_op_name;
pub use markdown::{markdown, markdown_spans};
pub use ptx::{PTX_LEGEND, ptx_register_lines};
pub use registers::{fragment_map, register_lines};

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph, Widget, Wrap};

use super::app::{App, Pane, Screen};
use super::keys;
use crate::palette::{self, Ansi, Swatch};
use crate::sim::bank::RequestReport;

/// Smallest size drawn in full; below it a one-line notice is shown.
pub const MIN_SIZE: (u16, u16) = (60, 16);

/// The terminal colour of a palette swatch.
pub fn color(s: Swatch) -> Color {
    match s.ansi {
        Ansi::Black => Color::Black,
        Ansi::Green => Color::Green,
        Ansi::Cyan => Color::Cyan,
        Ansi::Blue => Color::Blue,
        Ansi::Magenta => Color::Magenta,
        Ansi::Yellow => Color::Yellow,
        Ansi::LightRed => Color::LightRed,
        Ansi::Red => Color::Red,
        Ansi::DarkGray => Color::DarkGray,
    }
}

/// Foreground of the first wavefront of unit `u` (no conflict): [`palette::unit`].
pub fn unit_color(u: usize) -> Color {
    color(palette::unit(u))
}

/// Background of the `k`-th extra wavefront (k >= 1) of a unit, a bank-conflict replay:
/// [`palette::replay`].
pub fn conflict_bg(k: usize) -> Color {
    color(palette::replay(k))
}

/// Style of wavefront `w` of `report`.
pub fn wavefront_style(report: &RequestReport, w: usize) -> Style {
    let k = report.replay(w);
    if k == 0 {
        Style::new().fg(unit_color(report.wavefronts[w].unit))
    } else {
        Style::new()
            .fg(color(palette::ON_REPLAY))
            .bg(conflict_bg(k))
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
            Screen::Menu => menu::render_menu(self, area, buf),
            Screen::Lesson => render_lesson(self, area, buf),
            Screen::Ptx => ptx::render_ptx(self, area, buf),
        }
        if self.glossary_open && self.screen == Screen::Lesson {
            glossary::render_glossary(self, area, buf);
        }
        if self.help {
            help::render_help(self, area, buf);
        }
        if !self.color {
            monochrome(buf, area);
        }
    }
}

/// Drops every colour of `area`: foregrounds and backgrounds become the terminal's defaults, and
/// a cell that had a background (a conflict replay, a highlighted key) is drawn in reverse video
/// so it still stands out.
pub fn monochrome(buf: &mut Buffer, area: Rect) {
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            let c = &mut buf[(x, y)];
            if c.bg != Color::Reset {
                c.modifier.toggle(Modifier::REVERSED);
            }
            c.fg = Color::Reset;
            c.bg = Color::Reset;
        }
    }
}

/// `block` with a `↓ more` / `↑ more` / `↕ more` marker in its bottom border when lines are
/// hidden below or above the visible part.
pub fn more_marker(block: Block<'static>, above: bool, below: bool) -> Block<'static> {
    let mark = match (above, below) {
        (false, false) => return block,
        (true, false) => " ↑ more ",
        (false, true) => " ↓ more ",
        (true, true) => " ↕ more ",
    };
    block.title_bottom(
        Line::styled(mark, Style::new().fg(color(palette::replay(1)))).right_aligned(),
    )
}

/// [`more_marker`] for a wrapped paragraph of `lines` scrolled by `scroll` lines inside a
/// block whose inner area is `inner`.
pub fn wrapped_more(
    block: Block<'static>,
    lines: &[Line<'static>],
    inner: Rect,
    scroll: u16,
) -> Block<'static> {
    let total = Paragraph::new(lines.to_vec())
        .wrap(Wrap { trim: false })
        .line_count(inner.width);
    let shown = usize::from(scroll) + usize::from(inner.height);
    more_marker(block, scroll > 0, total > shown)
}

pub(super) fn pane_block(app: &App, pane: Pane, title: String) -> Block<'static> {
    let focused = app.focus == pane && app.screen != Screen::Menu;
    Block::new()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(if focused {
            Style::new().fg(color(palette::replay(1)))
        } else {
            Style::new().fg(color(palette::DIM))
        })
        .title(Span::styled(
            title,
            Style::new().add_modifier(Modifier::BOLD),
        ))
}

pub(super) fn render_footer(
    hints: Vec<(&str, &str)>,
    extra: Option<Line>,
    area: Rect,
    buf: &mut Buffer,
) {
    if let Some(line) = extra {
        line.render(area, buf);
        return;
    }
    let hints = fit_hints(hints, usize::from(area.width));
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

/// The footer hints that fit in `width` columns: `help` and `quit` always (a new user at 80x24
/// must see how to leave), the others in order while they fit.
fn fit_hints<'a>(hints: Vec<(&'a str, &'a str)>, width: usize) -> Vec<(&'a str, &'a str)> {
    let cell = |(k, w): &(&str, &str)| Span::raw(format!(" {k}  {w} ")).width();
    let must = |(_, w): &(&str, &str)| *w == "help" || *w == "quit";
    let mut used: usize = hints.iter().filter(|h| must(h)).map(cell).sum();
    let mut keep = vec![false; hints.len()];
    let mut full = false;
    for (i, h) in hints.iter().enumerate() {
        if must(h) {
            keep[i] = true;
        } else if !full && used + cell(h) <= width {
            used += cell(h);
            keep[i] = true;
        } else {
            full = true;
        }
    }
    hints
        .into_iter()
        .zip(keep)
        .filter_map(|(h, k)| k.then_some(h))
        .collect()
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
        Pane::Banks => banks::render_banks(app, area, buf),
        Pane::Lanes => lanes::render_lanes(app, area, buf),
        Pane::Narrative => narrative::render_narrative(app, area, buf),
        Pane::Registers => registers::render_registers(app, area, buf, zoomed),
        Pane::Counters => counters::render_counters(app, area, buf),
    }
}
