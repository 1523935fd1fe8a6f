//! The lesson list: titles on the left, the selected lesson's summary and claims on the right.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget, Wrap};

use super::{color, render_footer};
use crate::palette;
use crate::tui::app::{App, Screen};
use crate::tui::keys;

pub(super) fn render_menu(app: &App, area: Rect, buf: &mut Buffer) {
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    Line::from(vec![
        Span::styled(
            " tilelab ",
            Style::new().fg(Color::Black).bg(color(palette::ACCENT)),
        ),
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
                .border_style(Style::new().fg(color(palette::HIGHLIGHT))),
        )
        .render(left, buf);
    let l = &app.lessons[app.menu];
    let mut lines = vec![
        Line::styled(l.title.clone(), Style::new().add_modifier(Modifier::BOLD)),
        Line::styled(
            format!("tilelab tui {}", l.name),
            Style::new().fg(color(palette::ACCENT)),
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
        l.layout_specs().join(", "),
        l.kernel
    )));
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(Block::new().borders(Borders::ALL).title(" About "))
        .render(right, buf);
    render_footer(keys::footer(Screen::Menu), None, foot, buf);
}
