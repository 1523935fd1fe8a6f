//! The lesson's Markdown with the current step's note on top, and the Markdown-lite renderer.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{color, pane_block, wrapped_more};
use crate::lessons::exercise::ExerciseKind;
use crate::palette;
use crate::tui::app::{App, Pane};

fn md_line(s: &str) -> Line<'static> {
    let t = s.trim_end();
    if let Some(h) = t.strip_prefix('#') {
        return Line::styled(
            h.trim_start_matches('#').trim().to_string(),
            Style::new()
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
                .fg(color(palette::ACCENT)),
        );
    }
    let mut spans = Vec::new();
    let mut code = false;
    let mut bold = false;
    let mut cur = String::new();
    let style = |code: bool, bold: bool| {
        let mut s = Style::new();
        if code {
            s = s.fg(color(palette::ACCENT));
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
    head.extend(md_line(ex.question.trim()).spans);
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
