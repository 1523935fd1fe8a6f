//! The bank grid: one row per 128-byte line the request touches, 32 bank columns, each word
//! read labelled with its wavefront and coloured by [`crate::palette::wavefront`].

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{color, more_marker, pane_block, wavefront_char, wavefront_style};
use crate::lessons::run::StepRun;
use crate::palette;
use crate::sim::bank::{NUM_BANKS, RequestReport, WarpRequest};
use crate::tui::app::{App, Pane};

/// What the grid's two fill characters mean, short enough for the grid's bottom border at 80
/// columns: `·` a word of the tile the step does not read, `░` a word of no tile (padding,
/// swizzle slack). The help overlay says it in full.
pub const LEGEND: &str = " ·=tile ░=pad ";

/// A word the request reads, in the grid of a step whose numbers are hidden (its question is
/// not answered yet): which wavefront reads it would give the answer away.
pub const HIDDEN_WORD: char = '■';

pub(super) fn render_banks(app: &App, area: Rect, buf: &mut Buffer) {
    let run = app.run();
    let Some(report) = &run.report else {
        let block = pane_block(app, Pane::Banks, " Banks ".into());
        Paragraph::new("mma.sync reads registers only: no shared-memory access in this step.")
            .wrap(Wrap { trim: true })
            .block(block)
            .render(area, buf);
        return;
    };
    let title = if app.answer_hidden() {
        " Banks · ? wf, ? conflicts (r reveals) ".to_string()
    } else {
        format!(
            " Banks · {} wf, {} conflict{} ",
            report.wavefront_count(),
            report.bank_conflicts(),
            if report.bank_conflicts() == 1 {
                ""
            } else {
                "s"
            }
        )
    };
    let block = pane_block(app, Pane::Banks, title)
        .title_bottom(Line::styled(LEGEND, Style::new().fg(color(palette::DIM))));
    let inner = block.inner(area);
    let (lines, sel_line) = bank_grid_lines(app, run, report, inner.width);
    draw_grid(app, block, lines, sel_line, area, buf);
}

/// Draws grid `lines` (header first) in `block`, scrolled by the banks pane's offset and so that
/// row `sel_line` stays visible, with a more-marker when rows are hidden.
pub(super) fn draw_grid(
    app: &App,
    block: ratatui::widgets::Block<'static>,
    lines: Vec<Line<'static>>,
    sel_line: Option<usize>,
    area: Rect,
    buf: &mut Buffer,
) {
    let inner = block.inner(area);
    // One header line, then `rows` lines of which `h` fit.
    let h = (inner.height as usize).saturating_sub(1);
    let rows = lines.len() - 1;
    let mut skip = app.scroll_of(Pane::Banks) as usize;
    if let Some(sl) = sel_line
        && h > 0
        && sl >= skip + h
    {
        skip = sl + 1 - h;
    }
    more_marker(block, skip > 0, skip + h < rows).render(area, buf);
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
    let sel_words: std::collections::BTreeSet<u32> = run
        .request
        .as_ref()
        .filter(|_| !app.lane_addresses_hidden())
        .map(|req| lane_words(req, app.lane))
        .unwrap_or_default();
    grid_lines(
        report,
        &sel_words,
        |w| app.tile_words.contains(&w),
        width,
        app.answer_hidden(),
    )
}

/// The 4-byte words (byte offset / 4) that `lane` addresses in `req`; empty when the lane gives
/// no address.
pub fn lane_words(req: &WarpRequest, lane: u32) -> std::collections::BTreeSet<u32> {
    let a = req.lane_byte_offsets[lane as usize];
    let width = req.instruction.bytes_per_address();
    if req.address_lanes() >> lane & 1 == 1 {
        (a / 4..=(a + width - 1) / 4).collect()
    } else {
        Default::default()
    }
}

/// The bank grid of `report`: a header, then one line per 128-byte row the request touches,
/// each word labelled with its wavefront ([`wavefront_char`], coloured by
/// [`wavefront_style`]); `sel_words` underlined; words not read drawn `·` where `is_tile_word`
/// says they hold data, `░` elsewhere. With `hide_wavefronts` (a step whose question is not
/// answered yet) every word read is [`HIDDEN_WORD`], uncoloured: which banks are asked shows,
/// how many passes they take does not. Also the index among the rows of the first row of
/// `sel_words`. Shared by the lesson screen and `tilelab tui --ptx`.
pub fn grid_lines(
    report: &RequestReport,
    sel_words: &std::collections::BTreeSet<u32>,
    is_tile_word: impl Fn(u32) -> bool,
    width: u16,
    hide_wavefronts: bool,
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
    let mut lines = vec![Line::styled(head, Style::new().fg(color(palette::DIM)))];
    for r in rows {
        let mut spans = vec![Span::styled(
            format!("{:>5} ", r * 128),
            Style::new().fg(color(palette::DIM)),
        )];
        for b in 0..NUM_BANKS as u32 {
            let word = r * NUM_BANKS as u32 + b;
            let (ch, mut style) = match wf_of.get(&word) {
                Some(_) if hide_wavefronts => (HIDDEN_WORD, Style::new()),
                Some(&w) => (wavefront_char(w), wavefront_style(report, w)),
                None if is_tile_word(word) => ('·', Style::new().fg(color(palette::DIM))),
                None => ('░', Style::new().fg(color(palette::DIM))),
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
