//! The lesson's Markdown with the current step's note on top (its lines made by
//! [`markdown`](fn@super::markdown)).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{color, markdown, markdown_spans, pane_block, wrapped_more};
use crate::lessons::exercise::ExerciseKind;
use crate::palette;
use crate::tui::app::{App, Pane};

pub(super) fn render_narrative(app: &App, area: Rect, buf: &mut Buffer) {
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
        Style::new()
            .add_modifier(Modifier::BOLD)
            .fg(color(palette::HIGHLIGHT)),
    )];
    lines.extend(exercise_lines(app));
    if !step.note.trim().is_empty() {
        lines.extend(markdown(&step.note));
    }
    // The part of the explanation that gives the answer: once answered or revealed (`r`).
    if let Some(ex) = app.exercise()
        && !ex.explanation.trim().is_empty()
        && !app.answer_hidden()
    {
        let mut why = markdown(&ex.explanation);
        if let Some(first) = why.first_mut() {
            first.spans.insert(
                0,
                Span::styled(
                    "Answer: ",
                    Style::new()
                        .add_modifier(Modifier::BOLD)
                        .fg(color(palette::ACCENT)),
                ),
            );
        }
        lines.extend(why);
    }
    lines.push(Line::raw(""));
    lines.extend(markdown(&l.narrative));
    let scroll = app.scroll_of(Pane::Narrative);
    let block = wrapped_more(block.clone(), &lines, block.inner(area), scroll);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((scroll, 0))
        .block(block)
        .render(area, buf);
}

/// The current step's question, and the answer being typed or the simulator's verdict.
fn exercise_lines(app: &App) -> Vec<Line<'static>> {
    let Some(ex) = app.exercise() else {
        return Vec::new();
    };
    let l = app.current();
    let accent = Style::new()
        .add_modifier(Modifier::BOLD)
        .fg(color(palette::ACCENT));
    let mut head = vec![Span::styled("Exercise: ", accent)];
    head.extend(markdown_spans(ex.question.trim()));
    let offered = l.layout_specs().join(", ");
    // The lesson's layouts, unless the question already names them.
    if matches!(ex.kind, ExerciseKind::ConflictFree) && !ex.question.contains(&offered) {
        head.push(Span::raw(format!(" ({offered})")));
    }
    let mut out = vec![Line::from(head)];
    // What an answer looks like, with an example that is not this step's answer.
    let form = app
        .order
        .get(app.pos)
        .map(|&si| crate::lessons::exercise::answer_prompt(l, si))
        .unwrap_or_default();
    let good = Style::new().fg(color(palette::GOOD));
    let bad = Style::new().fg(color(palette::BAD));
    match (&app.input, &app.verdict) {
        (Some(buf), _) => out.push(Line::from(vec![
            Span::styled(format!("answer: {buf}▏"), accent),
            Span::raw(format!("  {form} · Enter check · Esc cancel")),
        ])),
        (None, Some(Ok(v))) => out.push(Line::styled(
            format!("{} {}", if v.correct { "✓" } else { "✗" }, v.explanation),
            if v.correct { good } else { bad },
        )),
        (None, Some(Err(e))) => out.push(Line::styled(format!("✗ {e}"), bad)),
        (None, None) if app.answered_right() => out.push(Line::styled(
            "✓ answered right · a to answer again".to_string(),
            good,
        )),
        (None, None) => out.push(Line::styled(
            format!(
                "a: answer ({form}){}",
                match app.answer_hidden() {
                    true if !ex.explanation.trim().is_empty() => {
                        " · r shows the step's numbers and the answer"
                    }
                    true => " · r shows the step's numbers",
                    false => "",
                }
            ),
            Style::new().fg(color(palette::DIM)),
        )),
    }
    out
}
