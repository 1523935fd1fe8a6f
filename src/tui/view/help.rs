//! The help overlay: the key table of [`crate::tui::keys`] and what the grid's characters mean.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget};

use super::color;
use crate::palette;
use crate::tui::app::App;
use crate::tui::keys;

pub(super) fn render_help(app: &App, area: Rect, buf: &mut Buffer) {
    let rows = keys::help_rows(app.screen);
    let w = 76.min(area.width);
    // The key rows, 1 line on the grid (2 on lesson screens: the counters' ✓), 2 borders
    // (fits 80x24 with 20 key rows).
    let legend = if app.screen == crate::tui::app::Screen::Ptx {
        1
    } else {
        2
    };
    let h = (rows.len() as u16 + legend + 2).min(area.height);
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
                Span::styled(
                    format!("{k:>9}  "),
                    Style::new().fg(color(palette::HIGHLIGHT)),
                ),
                Span::raw(what),
            ])
        })
        .collect();
    lines.push(Line::styled(
        if app.screen == crate::tui::app::Screen::Ptx {
            "  grid: 0-9,a-z = wavefront of a word, warm = conflict, · word not accessed"
        } else {
            "  grid: 0-9,a-z wavefront, warm = conflict, · unread, ░ no tile, ■ hidden"
        },
        Style::new().fg(color(palette::DIM)),
    ));
    if app.screen != crate::tui::app::Screen::Ptx {
        lines.push(Line::styled(
            "  counters: ✓ = the step's numbers equal the lesson file's (measured) ones",
            Style::new().fg(color(palette::DIM)),
        ));
    }
    Paragraph::new(lines)
        .block(
            Block::new()
                .borders(Borders::ALL)
                .border_type(BorderType::Double)
                .title(" Keys "),
        )
        .render(r, buf);
}
