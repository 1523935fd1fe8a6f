//! A lesson as one self-contained static web page (`tilelab lessons export LESSON --html DIR`):
//! no server, no network, nothing fetched. The page holds, for every step of one variant under
//! every layout, the SVG picture of [`super::lesson::step_svg`] (inline), the step's note, its
//! counters and its question; a small inline script steps back and forth (buttons, ← →) and
//! switches the layout (a select, `l` or 1-9), showing one picture at a time. The narrative, the
//! notes, the questions and the explanations are the lesson's Markdown rendered to HTML as
//! CommonMark by `pulldown-cmark` ([`markdown_html`]), with any HTML of the lesson's shown as text.
//!
//! Every number on the page comes from the simulator at export time ([`run_step`]); the ones a
//! step shows (`#wf`, `#ideal`, `#cf`: wavefronts and bank conflicts in Nsight Compute's sense)
//! are those of `tilelab lessons show LESSON --json --answers` (`steps[].results[LAYOUT]`), the running
//! ones (`#run-*`) those of the TUI's counters pane, and `#stated` compares the step with the
//! lesson file's `expect` as the TUI's ✓/✗ does; `tests/export.rs` checks all of them in a
//! headless Chromium (`scripts/html_check.py`) against the TUI drawn at the same step.
//! A step that asks a question shows `?` for its numbers (and those of the running totals) and no
//! picture until its `<details data-reveal>` "Show the answer" is opened, as the TUI hides them
//! until `r` (the data block still holds them: the page hides, it does not encrypt); the
//! explanation of the answer (`[steps.exercise] explanation`) is inside that `<details>`. The same
//! numbers sit in a `<script type="application/json" id="tilelab-data">` block for anyone
//! embedding the page. All lesson text is HTML-escaped ([`esc`]); the JSON block has `<`, `>`
//! and `&` as `\u` escapes. Pure string building; the CLI writes the file.

use std::collections::BTreeMap;
use std::fmt::Write;

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use serde::Serialize;

use crate::lessons::exercise;
use crate::lessons::run::run_step;
use crate::lessons::{Lesson, LessonError, LessonLayout};

/// `s` with `& < > " '` escaped for HTML text and attribute values.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// One heading level deeper (`#` is `<h2>`: the page title is the `<h1>`), `<h6>` at most.
fn deeper(level: HeadingLevel) -> HeadingLevel {
    HeadingLevel::try_from(level as usize + 1).unwrap_or(HeadingLevel::H6)
}

/// `text` parsed as CommonMark (`pulldown-cmark`), made fit for the page: every text, code span
/// and raw HTML of the lesson comes out as escaped text ([`esc`]), so the lesson's own markup is
/// shown, never run; headings go one level down ([`deeper`]); links and images keep only their
/// text (the page fetches and links nothing).
fn markdown_events(text: &str) -> Vec<Event<'_>> {
    Parser::new(text)
        .filter_map(|e| {
            Some(match e {
                Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => {
                    Event::InlineHtml(esc(&t).into())
                }
                Event::Code(t) => Event::InlineHtml(format!("<code>{}</code>", esc(&t)).into()),
                Event::Start(Tag::HtmlBlock) => Event::Start(Tag::Paragraph),
                Event::End(TagEnd::HtmlBlock) => Event::End(TagEnd::Paragraph),
                Event::Start(Tag::Heading { level, .. }) => Event::Start(Tag::Heading {
                    level: deeper(level),
                    id: None,
                    classes: Vec::new(),
                    attrs: Vec::new(),
                }),
                Event::End(TagEnd::Heading(level)) => Event::End(TagEnd::Heading(deeper(level))),
                Event::Start(Tag::Link { .. } | Tag::Image { .. })
                | Event::End(TagEnd::Link | TagEnd::Image) => return None,
                e => e,
            })
        })
        .collect()
}

/// A lesson's Markdown (narrative, note, explanation) as HTML blocks: CommonMark, as
/// `markdown_events` makes it safe.
pub fn markdown_html(text: &str) -> String {
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, markdown_events(text).into_iter());
    out
}

/// [`markdown_html`] of a text that is one paragraph (a question), without the `<p>`, to sit
/// inside a line of the page; a text of several blocks keeps them.
fn markdown_inline(text: &str) -> String {
    let mut events = markdown_events(text);
    let paragraphs = events
        .iter()
        .filter(|e| matches!(e, Event::Start(Tag::Paragraph)))
        .count();
    if paragraphs == 1
        && matches!(events.first(), Some(Event::Start(Tag::Paragraph)))
        && matches!(events.last(), Some(Event::End(TagEnd::Paragraph)))
    {
        events.pop();
        events.remove(0);
    }
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    out
}

/// The numbers one step shows under one layout (`null` for registers-only mma steps).
#[derive(Serialize, Clone, Copy)]
struct Counts {
    wavefronts: u32,
    conflicts: u32,
    ideal: u32,
}

/// Running totals over steps 1..=n under one layout (what the TUI's counters pane adds up;
/// `u64`: a sum of `u32` per-step counts over a lesson's steps cannot overflow it).
#[derive(Serialize, Clone, Default)]
struct Running {
    requests: u64,
    wavefronts: u64,
    ideal: u64,
    conflicts: u64,
    /// `LDS ×3, LDSM.16.M88.4 ×1`.
    sass: String,
}

#[derive(Serialize)]
struct StepData {
    index: usize,
    title: String,
    instruction: String,
    sass: String,
    /// Per layout (the order of `layouts`): this step's numbers.
    results: Vec<Option<Counts>>,
    /// Per layout: totals over steps 1..=index.
    running: Vec<Running>,
    /// Per layout: the lesson file's own numbers for this step (`expect`), if it states them.
    stated: Vec<Option<Stated>>,
    /// The step asks a question: the page shows its numbers and picture only once the reader
    /// opens its "Show the answer" `<details>`.
    asks: bool,
}

/// What a lesson file states for a step under one layout (`expect.<layout>`).
#[derive(Serialize, Clone, Copy)]
struct Stated {
    wavefronts: u32,
    conflicts: u32,
}

#[derive(Serialize)]
struct PageData<'a> {
    name: &'a str,
    title: &'a str,
    variant: &'a str,
    layouts: &'a [LessonLayout],
    steps: Vec<StepData>,
}

const STYLE: &str = r#"
body { font-family: system-ui, sans-serif; margin: 0; color: #222; background: #fafafa; }
header { padding: 12px 20px; background: #20303f; color: #fff; }
header h1 { margin: 0; font-size: 1.4em; }
header p { margin: 4px 0 0; color: #cde; }
header code { background: #3a4e62; color: #fff; }
nav { position: sticky; top: 0; background: #fff; border-bottom: 1px solid #ddd; padding: 8px 20px; display: flex; gap: 12px; align-items: center; z-index: 1; }
nav button { font-size: 1em; padding: 4px 12px; }
main { display: grid; grid-template-columns: minmax(0, 1fr) 360px; gap: 16px; padding: 16px 20px; }
figure { margin: 0; overflow-x: auto; background: #fff; border: 1px solid #ddd; }
figure svg { display: block; max-width: 100%; height: auto; }
aside { background: #fff; border: 1px solid #ddd; padding: 12px; align-self: start; }
aside table { border-collapse: collapse; width: 100%; margin: 8px 0; }
aside td, aside th { text-align: left; padding: 2px 6px; border-bottom: 1px solid #eee; font-variant-numeric: tabular-nums; }
aside th { width: 10em; white-space: nowrap; }
#run-sass span { white-space: nowrap; }
.bad { color: #b03020; font-weight: bold; }
.good { color: #207040; font-weight: bold; }
.exercise { background: #fff6e0; border: 1px solid #e8c870; padding: 8px; margin-top: 8px; }
article { grid-column: 1 / -1; background: #fff; border: 1px solid #ddd; padding: 4px 16px; }
code { background: #f0f0f0; padding: 0 3px; }
footer { padding: 8px 20px; color: #777; font-size: 0.9em; }
[hidden] { display: none !important; }
"#;

const SCRIPT: &str = r#"
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("tilelab-data").textContent);
  var n = data.steps.length, step = 0, layout = 0;
  var sel = document.getElementById("layout");
  function text(id, s) { document.getElementById(id).textContent = s; }
  var revealed = {};
  function show() {
    var s = data.steps[step], r = s.results[layout], run = s.running[layout];
    // A question's step keeps its numbers and picture (the answer) until its answer is opened.
    var hide = s.asks && !revealed[step];
    var figs = document.querySelectorAll("figure[data-step]");
    for (var i = 0; i < figs.length; i++) {
      figs[i].hidden = hide ||
        !(+figs[i].dataset.step === step && +figs[i].dataset.layout === layout);
    }
    document.getElementById("hidden-pic").hidden = !hide;
    var notes = document.querySelectorAll("[data-note]");
    for (var j = 0; j < notes.length; j++) { notes[j].hidden = +notes[j].dataset.note !== step; }
    text("pos", "step " + (step + 1) + " / " + n);
    text("step-title", s.index + ". " + s.title);
    text("instruction", s.instruction);
    text("sass", s.sass);
    function num(v) { return hide ? "?" : String(v); }
    text("wf", r ? num(r.wavefronts) : "-");
    text("ideal", r ? num(r.ideal) : "-");
    text("cf", r ? num(r.conflicts) : "-");
    document.getElementById("cf").className = !r || hide ? "" : r.conflicts > 0 ? "bad" : "good";
    var st = s.stated[layout];
    var agree = st && r && st.wavefronts === r.wavefronts && st.conflicts === r.conflicts;
    text("stated", !st ? "-" : hide ? "?" : st.wavefronts + " wf, " + st.conflicts + " cf " +
      (agree ? "\u2713" : "\u2717 the simulator disagrees"));
    document.getElementById("stated").className = !st || hide ? "" : agree ? "good" : "bad";
    text("run-req", String(run.requests));
    text("run-wf", num(run.wavefronts));
    text("run-ideal", num(run.ideal));
    text("run-cf", num(run.conflicts));
    document.getElementById("run-cf").className = hide ? "" : run.conflicts > 0 ? "bad" : "good";
    // One unbreakable item per SASS mnemonic ("LDSM.16.M88.4 ×2"); the text stays "A ×1, B ×2".
    var rs = document.getElementById("run-sass");
    rs.textContent = "";
    run.sass.split(", ").forEach(function (item, k) {
      if (k > 0) { rs.appendChild(document.createTextNode(", ")); }
      var sp = document.createElement("span");
      sp.textContent = item;
      rs.appendChild(sp);
    });
    document.getElementById("prev").disabled = step === 0;
    document.getElementById("next").disabled = step === n - 1;
    sel.value = String(layout);
    document.body.dataset.step = String(step);
    document.body.dataset.layout = String(layout);
  }
  function go(d) { step = Math.max(0, Math.min(n - 1, step + d)); show(); }
  var reveals = document.querySelectorAll("details[data-reveal]");
  for (var k = 0; k < reveals.length; k++) {
    reveals[k].addEventListener("toggle", function (e) {
      if (e.target.open) { revealed[+e.target.dataset.reveal] = true; show(); }
    });
  }
  document.getElementById("prev").addEventListener("click", function () { go(-1); });
  document.getElementById("next").addEventListener("click", function () { go(1); });
  sel.addEventListener("change", function () { layout = +sel.value; show(); });
  document.addEventListener("keydown", function (e) {
    if (e.target === sel) { return; }
    if (e.key === "ArrowRight" || e.key === "n") { go(1); }
    else if (e.key === "ArrowLeft" || e.key === "p") { go(-1); }
    else if (e.key >= "1" && e.key <= "9" && +e.key <= data.layouts.length) { layout = +e.key - 1; show(); }
    else if (e.key === "l") { layout = (layout + 1) % data.layouts.length; show(); }
  });
  show();
})();
"#;

/// The whole page of `lesson`'s variant `variant` (index into [`Lesson::variants`]).
///
/// # Errors
/// A step that does not run (the loader rules that out for validated lessons).
pub fn lesson_page(lesson: &Lesson, variant: usize) -> Result<String, LessonError> {
    let mut page = Steps::new(lesson, variant);
    for (n, &si) in lesson.steps_of(variant).iter().enumerate() {
        page.add(n, si)?;
    }
    let data = PageData {
        name: &lesson.name,
        title: &lesson.title,
        variant: &lesson.variants[variant],
        layouts: &lesson.layouts,
        steps: page.data,
    };
    Ok(page_html(
        lesson,
        variant,
        &page.figures,
        &page.notes,
        &data_json(&data),
    ))
}

/// What the page holds of its steps, built one step at a time ([`Steps::add`]).
struct Steps<'a> {
    lesson: &'a Lesson,
    variant: usize,
    /// The data block's steps.
    data: Vec<StepData>,
    /// One `<figure>` (the picture of [`super::lesson::step_svg`]) per step and layout.
    figures: String,
    /// One `<div data-note>` per step: note, question, answer.
    notes: String,
    /// Per layout: totals over the steps so far.
    running: Vec<Running>,
    /// Per layout: how often each SASS instruction ran so far.
    sass: Vec<BTreeMap<&'a str, u32>>,
}

impl<'a> Steps<'a> {
    fn new(lesson: &'a Lesson, variant: usize) -> Self {
        let nl = lesson.layouts.len();
        Steps {
            lesson,
            variant,
            data: Vec::new(),
            figures: String::new(),
            notes: String::new(),
            running: vec![Running::default(); nl],
            sass: vec![BTreeMap::new(); nl],
        }
    }

    /// Step `si` of the lesson, the `n`-th (from 0) of the variant: runs it under every layout.
    fn add(&mut self, n: usize, si: usize) -> Result<(), LessonError> {
        let (lesson, st) = (self.lesson, &self.lesson.steps[si]);
        let mut results = Vec::new();
        for li in 0..lesson.layouts.len() {
            let run = run_step(lesson, si, li)?;
            let c = run.cost.map(|c| Counts {
                wavefronts: c.wavefronts,
                conflicts: c.bank_conflicts(),
                ideal: c.ideal,
            });
            self.count(li, st.sass(), c);
            results.push(c);
            let _ = writeln!(
                self.figures,
                "<figure data-step=\"{n}\" data-layout=\"{li}\"{}>\n{}</figure>",
                if n == 0 && li == 0 { "" } else { " hidden" },
                super::lesson::step_svg(lesson, &run)
            );
        }
        let _ = writeln!(
            self.notes,
            "<div data-note=\"{n}\"{}>{}</div>",
            if n == 0 { "" } else { " hidden" },
            step_note(lesson, self.variant, n, si)
        );
        self.data.push(StepData {
            index: n + 1,
            title: st.title.clone(),
            instruction: st.op_name(),
            sass: st.sass().to_string(),
            results,
            running: self.running.clone(),
            stated: lesson
                .layouts
                .iter()
                .map(|l| {
                    st.expect.get(&l.spec).map(|e| Stated {
                        wavefronts: e.wavefronts,
                        conflicts: e.conflicts,
                    })
                })
                .collect(),
            asks: st.exercise.is_some(),
        });
        Ok(())
    }

    /// Adds a step (SASS `sass`, numbers `c`) to layout `li`'s running totals.
    fn count(&mut self, li: usize, sass: &'a str, c: Option<Counts>) {
        let r = &mut self.running[li];
        *self.sass[li].entry(sass).or_insert(0) += 1;
        if let Some(c) = c {
            r.requests += 1;
            r.wavefronts += u64::from(c.wavefronts);
            r.ideal += u64::from(c.ideal);
            r.conflicts += u64::from(c.conflicts);
        }
        r.sass = self.sass[li]
            .iter()
            .map(|(k, v)| format!("{k} ×{v}"))
            .collect::<Vec<_>>()
            .join(", ");
    }
}

/// The note of step `si` (the `n`-th of variant `variant`), with its question, how to answer
/// it, and its answer and explanation behind a `<details data-reveal>`.
fn step_note(lesson: &Lesson, variant: usize, n: usize, si: usize) -> String {
    let st = &lesson.steps[si];
    let mut note = markdown_html(&st.note);
    let Some(ex) = &st.exercise else {
        return note;
    };
    let _ = write!(
        note,
        "<div class=\"exercise\"><strong>Exercise:</strong> {}<br><small>Answer with <code>tilelab lessons answer {} {} ANSWER{}</code> ({}); the simulator checks it.</small>",
        markdown_inline(ex.question.trim()),
        esc(&lesson.name),
        n + 1,
        if variant == 0 {
            String::new()
        } else {
            format!(" --variant {}", esc(&lesson.variants[variant]))
        },
        esc(&exercise::answer_prompt(lesson, si))
    );
    // The step's numbers and picture give the answer: hidden until this is opened.
    // So is the explanation of the answer (`[steps.exercise] explanation`).
    let why = if ex.explanation.trim().is_empty() {
        String::new()
    } else {
        format!(
            "<div class=\"explanation\">{}</div>",
            markdown_html(&ex.explanation)
        )
    };
    let _ = write!(
        note,
        "<details data-reveal=\"{n}\"><summary>Show the answer (and this step's numbers and picture)</summary><p class=\"answer\">{}</p>{why}</details>",
        exercise::model_answer(lesson, si)
            .map_or_else(|| "The numbers above.".to_string(), |a| esc(&a))
    );
    note.push_str("</div>");
    note
}

/// The data block's JSON. Inside <script>, `</script>` or `<!--` in a string would end or
/// confuse the block: every `<`, `>` and `&` (they only occur inside JSON strings) becomes a
/// \u escape.
fn data_json(data: &PageData) -> String {
    serde_json::to_string(data)
        .expect("plain data serializes")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The page around the steps' `figures` and `notes` and the data block `json`.
fn page_html(lesson: &Lesson, variant: usize, figures: &str, notes: &str, json: &str) -> String {
    let options: String = lesson
        .layouts
        .iter()
        .enumerate()
        .map(|(i, l)| format!("<option value=\"{i}\">{}: {}</option>", i + 1, esc(&l.spec)))
        .collect();
    let variant_note = if lesson.variants.len() > 1 {
        format!(
            " · variant <code>{}</code> of {}",
            esc(&lesson.variants[variant]),
            esc(&lesson.variants.join(", "))
        )
    } else {
        String::new()
    };
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · tilelab</title>
<style>{STYLE}</style>
</head>
<body data-step="0" data-layout="0">
<header><h1>{title}</h1><p>{summary}{variant_note}</p></header>
<nav><button id="prev" type="button">← back</button><span id="pos">step 1</span><button id="next" type="button">next →</button>
<label>layout <select id="layout">{options}</select></label><small>keys: ← → step, l or 1-9 layout</small></nav>
<main>
<section id="stage">
<p id="hidden-pic" class="exercise" hidden>This step asks a question, and its picture and numbers give the answer away: they show once you open “Show the answer” beside it.</p>
{figures}</section>
<aside>
<h3 id="step-title"></h3>
<table>
<tr><th>instruction</th><td><code id="instruction"></code></td></tr>
<tr><th>SASS</th><td><code id="sass"></code></td></tr>
<tr><th>wavefronts</th><td id="wf"></td></tr>
<tr><th>ideal</th><td id="ideal"></td></tr>
<tr><th>bank conflicts</th><td id="cf"></td></tr>
<tr><th>the lesson states</th><td id="stated"></td></tr>
</table>
<table>
<tr><th colspan="2">steps 1 to this one</th></tr>
<tr><th>shared requests</th><td id="run-req"></td></tr>
<tr><th>wavefronts</th><td id="run-wf"></td></tr>
<tr><th>ideal</th><td id="run-ideal"></td></tr>
<tr><th>bank conflicts</th><td id="run-cf"></td></tr>
<tr><th colspan="2">by SASS</th></tr>
<tr><td colspan="2" id="run-sass"></td></tr>
</table>
{notes}</aside>
<article>
{narrative}</article>
</main>
<footer>Exported by tilelab from <code>{source}</code>: every number is the simulator's (wavefronts and bank conflicts as Nsight Compute counts them). Works offline; nothing is loaded from elsewhere.</footer>
<script type="application/json" id="tilelab-data">{json}</script>
<script>{SCRIPT}</script>
</body>
</html>
"#,
        title = esc(&lesson.title),
        summary = esc(&lesson.summary),
        source = esc(&lesson.source),
        narrative = markdown_html(&lesson.narrative),
    )
}

#[cfg(test)]
mod tests {
    use super::{markdown_html, markdown_inline};

    #[test]
    fn markdown_is_commonmark_with_the_lessons_html_as_text() {
        assert_eq!(
            markdown_html("# T & <i>x</i>\n\n1. `a<b`\n2. **b** *c*\n"),
            "<h2>T &amp; &lt;i&gt;x&lt;/i&gt;</h2>\n<ol>\n<li><code>a&lt;b</code></li>\n\
             <li><strong>b</strong> <em>c</em></li>\n</ol>\n"
        );
        // Nothing linked or fetched: links and images keep their text only.
        let h =
            markdown_html("[a](http://x) ![b](y.png) <http://z>\n\n<div onclick=\"q\">'</div>\n");
        assert!(
            !h.contains("href") && !h.contains("<img") && !h.contains("<div"),
            "{h}"
        );
        assert!(
            h.contains("a b") && h.contains("&lt;div onclick=&quot;q&quot;&gt;&#39;"),
            "{h}"
        );
        assert_eq!(
            markdown_inline("Which `pad:1`?"),
            "Which <code>pad:1</code>?"
        );
        assert_eq!(markdown_inline("a\n\nb"), "<p>a</p>\n<p>b</p>\n");
    }
}
