//! The glossary overlay (`e`): the entries of the current step's terms, then the lesson's,
//! each with its one-line meaning, its explanation and its first source; `tilelab explain TERM`
//! prints the rest.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget, Wrap};

use super::{color, markdown, wrapped_more};
use crate::palette;
use crate::tui::app::App;

pub(super) fn render_glossary(app: &App, area: Rect, buf: &mut Buffer) {
    let w = 76.min(area.width);
    let h = area.height.saturating_sub(2).max(3);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    Clear.render(r, buf);
    let entries = app.step_glossary();
    let mut lines: Vec<Line<'static>> = Vec::new();
    if entries.is_empty() {
        lines.push(Line::raw("This lesson marks no glossary terms."));
    }
    for e in entries {
        lines.push(Line::from(vec![
            Span::styled(
                e.name.clone(),
                Style::new()
                    .add_modifier(Modifier::BOLD)
                    .fg(color(palette::HIGHLIGHT)),
            ),
            Span::raw(format!(": {}", e.short)),
        ]));
        lines.extend(markdown(&e.text));
        if let Some(s) = e.sources.first() {
            lines.push(Line::styled(
                format!("source: {s}"),
                Style::new().fg(color(palette::DIM)),
            ));
        }
        lines.push(Line::raw(""));
    }
    lines.push(Line::styled(
        "`tilelab explain TERM`: every source and the lessons using it",
        Style::new().fg(color(palette::DIM)),
    ));
    let block = Block::new()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .title(" Glossary: this step's terms (j/k scroll, e or Esc close) ");
    let block = wrapped_more(block.clone(), &lines, block.inner(r), app.glossary_scroll);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((app.glossary_scroll, 0))
        .block(block)
        .render(r, buf);
}
