//! Running counters: instructions by SASS mnemonic, wavefronts and conflicts up to this step,
//! and the lesson's kernel-level claims against the counts model.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{color, pane_block, wrapped_more};
use crate::lessons::run::CheckStatus;
use crate::palette;
use crate::tui::app::{App, Pane};

pub(super) fn render_counters(app: &App, area: Rect, buf: &mut Buffer) {
    let l = app.current();
    let (by, stats) = app.counters();
    let (wf, ideal, cf) = (stats.wavefronts, stats.ideal, stats.conflicts);
    let block = pane_block(
        app,
        Pane::Counters,
        format!(" Counters · steps 1-{} ", app.pos + 1),
    );
    let mut first = vec![Span::styled("SASS ", Style::new().fg(color(palette::DIM)))];
    for (k, v) in &by {
        first.push(Span::styled(
            k.to_string(),
            Style::new().add_modifier(Modifier::BOLD),
        ));
        first.push(Span::raw(format!(" ×{v}  ")));
    }
    // A step whose question is unanswered: its numbers, and the totals that include them, `?`.
    let hidden = app.answer_hidden();
    let shown = |v: u64| {
        if hidden {
            "?".to_string()
        } else {
            v.to_string()
        }
    };
    let mut second = vec![
        Span::styled("wavefronts ", Style::new().fg(color(palette::DIM))),
        Span::raw(format!("{} (ideal {})  ", shown(wf), shown(ideal))),
        Span::styled("conflicts ", Style::new().fg(color(palette::DIM))),
        Span::styled(
            shown(cf),
            if hidden {
                Style::new()
            } else if cf > 0 {
                Style::new()
                    .fg(color(palette::BAD))
                    .add_modifier(Modifier::BOLD)
            } else {
                Style::new().fg(color(palette::GOOD))
            },
        ),
    ];
    let run = app.run();
    let step = &l.steps[run.step];
    if hidden && run.cost.is_some() {
        second.push(Span::raw("  │ this step ? wf, ? cf"));
    } else if let Some(c) = run.cost {
        second.push(Span::raw(format!(
            "  │ this step {} wf, {} cf",
            c.wavefronts,
            c.bank_conflicts()
        )));
        if let Some(e) = step.expect.get(&l.layouts[app.layout].spec) {
            let ok = (e.wavefronts, e.conflicts) == (c.wavefronts, c.bank_conflicts());
            second.push(Span::styled(
                if ok {
                    " ✓"
                } else {
                    " ✗ lesson file disagrees"
                },
                Style::new().fg(color(if ok { palette::GOOD } else { palette::BAD })),
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
            Style::new().fg(color(palette::DIM)),
        ));
        for c in &app.model_checks {
            let ok = c.status == CheckStatus::Pass;
            lines.push(Line::from(vec![
                Span::styled(
                    if ok { "✓ " } else { "✗ " },
                    Style::new().fg(color(if ok { palette::GOOD } else { palette::BAD })),
                ),
                Span::raw(format!("{}: {}", c.what, c.detail)),
            ]));
        }
    }
    let scroll = app.scroll_of(Pane::Counters);
    let block = wrapped_more(block.clone(), &lines, block.inner(area), scroll);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((scroll, 0))
        .block(block)
        .render(area, buf);
}
