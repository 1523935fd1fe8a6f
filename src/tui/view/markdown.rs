//! The lesson's Markdown (narrative, notes, questions, explanations, glossary text) as terminal
//! lines: CommonMark read by `pulldown-cmark`'s event parser, as the exported page reads it
//! (`src/viz/html.rs`), so the two agree on what is a list, a code span or emphasis.
//!
//! * a paragraph is one [`Line`] (the pane wraps it);
//! * a heading, of any level, is one bold underlined line in the accent colour;
//! * `code` is in the accent colour, **strong** is bold, *emphasis* is italic;
//! * a list item is one line with its marker (`• ` or `1. `, nested lists indented by two
//!   spaces per level); a block quote is indented the same way;
//! * a fenced or indented code block is one line per source line, in the accent colour;
//! * blocks are separated by one empty line where the source has a blank line between them
//!   (none between the items of a tight list, nor between a paragraph and a list that follows
//!   it on the next line);
//! * raw HTML is shown as text, links and images keep only their text.

use std::ops::Range;

use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::color;
use crate::palette;

/// One list being read: `Some(n)` numbers its next item `n.`, `None` is a bullet list.
type List = Option<u64>;

/// The lines made so far and where the reader is in `src`.
struct Lines<'a> {
    src: &'a str,
    out: Vec<Line<'static>>,
    /// The spans of the line being made.
    cur: Vec<Span<'static>>,
    /// Open `**strong**` and `*emphasis*`.
    strong: usize,
    emph: usize,
    /// Inside a heading: the line is made plain and styled as a whole.
    heading: bool,
    /// Inside a code block (`Some(true)`) or an HTML block (`Some(false)`): the text is split
    /// at its newlines, one line each, in the code style for a code block.
    raw: Option<bool>,
    /// The lists open, outermost first.
    lists: Vec<List>,
    /// Open block quotes.
    quotes: usize,
    /// The marker of the item whose first line is not started yet.
    marker: Option<String>,
    /// Where the last block ended, until the next one starts: an empty line goes between them
    /// when the source has one.
    gap_from: Option<usize>,
}

impl<'a> Lines<'a> {
    fn new(src: &'a str) -> Self {
        Lines {
            src,
            out: Vec::new(),
            cur: Vec::new(),
            strong: 0,
            emph: 0,
            heading: false,
            raw: None,
            lists: Vec::new(),
            quotes: 0,
            marker: None,
            gap_from: None,
        }
    }

    fn span_style(&self, code: bool) -> Style {
        let mut s = Style::new();
        if code {
            s = s.fg(color(palette::ACCENT));
        }
        if self.strong > 0 {
            s = s.add_modifier(Modifier::BOLD);
        }
        if self.emph > 0 {
            s = s.add_modifier(Modifier::ITALIC);
        }
        s
    }

    /// What a new line starts with: two spaces per open list or quote, the innermost list's
    /// marker in its place on an item's first line; two more in a code block.
    fn lead(&mut self) -> String {
        let depth = self.lists.len() + self.quotes;
        let mut lead = match self.marker.take() {
            Some(m) => format!("{}{m}", "  ".repeat(depth.saturating_sub(1))),
            None => "  ".repeat(depth),
        };
        if self.raw == Some(true) {
            lead.push_str("  ");
        }
        lead
    }

    fn push(&mut self, text: String, code: bool) {
        if text.is_empty() {
            return;
        }
        if self.cur.is_empty() {
            let lead = self.lead();
            if !lead.is_empty() {
                self.cur.push(Span::raw(lead));
            }
        }
        let style = self.span_style(code);
        self.cur.push(Span::styled(text, style));
    }

    /// Ends the line being made, if any.
    fn flush(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.cur);
        self.out.push(if self.heading {
            let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
            Line::styled(
                text,
                Style::new()
                    .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
                    .fg(color(palette::ACCENT)),
            )
        } else {
            Line::from(spans)
        });
    }

    /// A block starts at byte `start`: the line before it ends, and an empty line follows
    /// when the source has a blank line between the last block and this one.
    fn block(&mut self, start: usize) {
        self.flush();
        let Some(from) = self.gap_from.take() else {
            return;
        };
        let last = self.src.get(..from).unwrap_or_default().trim_end().len();
        let gap = self.src.get(last..start).unwrap_or_default();
        if gap.matches('\n').count() >= 2 && !self.out.is_empty() {
            self.out.push(Line::raw(""));
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Heading { .. } => self.heading = true,
            Tag::CodeBlock(_) => self.raw = Some(true),
            Tag::HtmlBlock => self.raw = Some(false),
            Tag::BlockQuote(_) => self.quotes += 1,
            Tag::List(first) => self.lists.push(first),
            Tag::Item => {
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{}. ", *n - 1)
                    }
                    _ => "• ".to_string(),
                };
                self.marker = Some(marker);
            }
            Tag::Strong => self.strong += 1,
            Tag::Emphasis => self.emph += 1,
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Heading(_) => self.heading = false,
            TagEnd::CodeBlock | TagEnd::HtmlBlock => self.raw = None,
            TagEnd::BlockQuote(_) => self.quotes = self.quotes.saturating_sub(1),
            TagEnd::List(_) => {
                self.lists.pop();
            }
            TagEnd::Strong => self.strong = self.strong.saturating_sub(1),
            TagEnd::Emphasis => self.emph = self.emph.saturating_sub(1),
            _ => {}
        }
    }

    /// Text; in a code or HTML block every newline ends a line (an empty one stays).
    fn text(&mut self, text: &str) {
        let Some(code) = self.raw else {
            self.push(text.to_string(), false);
            return;
        };
        let mut pieces = text.split('\n').peekable();
        while let Some(piece) = pieces.next() {
            self.push(piece.to_string(), code);
            if pieces.peek().is_some() {
                if self.cur.is_empty() {
                    self.out.push(Line::raw(""));
                }
                self.flush();
            }
        }
    }

    fn event(&mut self, e: Event<'_>, at: Range<usize>) {
        match e {
            Event::Start(tag) => {
                if is_block(&tag) {
                    self.block(at.start);
                }
                self.start(tag);
            }
            Event::End(tag) => {
                if is_block_end(tag) {
                    // An item with no text still shows its marker.
                    if tag == TagEnd::Item && self.marker.is_some() {
                        let lead = self.lead();
                        self.cur.push(Span::raw(lead));
                    }
                    self.flush();
                    self.gap_from = Some(at.end);
                }
                self.end(tag);
            }
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => self.text(&t),
            Event::Code(t) => self.push(t.to_string(), true),
            Event::SoftBreak => self.push(" ".to_string(), false),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.block(at.start);
                self.push("────────".to_string(), false);
                self.flush();
                self.gap_from = Some(at.end);
            }
            _ => {}
        }
    }
}

/// Tags that start a block: the line before ends there.
fn is_block(tag: &Tag<'_>) -> bool {
    matches!(
        tag,
        Tag::Paragraph
            | Tag::Heading { .. }
            | Tag::CodeBlock(_)
            | Tag::HtmlBlock
            | Tag::BlockQuote(_)
            | Tag::List(_)
            | Tag::Item
    )
}

fn is_block_end(tag: TagEnd) -> bool {
    matches!(
        tag,
        TagEnd::Paragraph
            | TagEnd::Heading(_)
            | TagEnd::CodeBlock
            | TagEnd::HtmlBlock
            | TagEnd::BlockQuote(_)
            | TagEnd::List(_)
            | TagEnd::Item
    )
}

/// `text` (CommonMark) as lines, one per paragraph, heading, list item or code-block line,
/// blocks separated by an empty line (see the module's list).
pub fn markdown(text: &str) -> Vec<Line<'static>> {
    let mut lines = Lines::new(text);
    for (e, at) in Parser::new(text).into_offset_iter() {
        lines.event(e, at);
    }
    lines.flush();
    lines.out
}

/// `text` (one paragraph, a question) as the spans of one line, to follow a label; a text of
/// several blocks has them joined by spaces.
pub fn markdown_spans(text: &str) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    for line in markdown(text) {
        if line.spans.is_empty() {
            continue;
        }
        if !spans.is_empty() {
            spans.push(Span::raw(" "));
        }
        let style = line.style;
        spans.extend(line.spans.into_iter().map(|s| s.patch_style(style)));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line's text.
    fn texts(md: &str) -> Vec<String> {
        markdown(md)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn paragraphs_are_one_line_each_with_an_empty_line_between() {
        assert_eq!(
            texts("# Title\n\nOne\n  two\nthree.\n\n\nFour."),
            ["Title", "", "One two three.", "", "Four."]
        );
        // A heading followed by its paragraph on the next line: no empty line, as in the source.
        assert_eq!(texts("# Title\nText"), ["Title", "Text"]);
    }

    #[test]
    fn lists_are_one_line_per_item() {
        assert_eq!(
            texts("Steps:\n\n1. `a`,\n   still a.\n2. b\n3. c\n\nAfter."),
            ["Steps:", "", "1. a, still a.", "2. b", "3. c", "", "After."]
        );
        assert_eq!(texts("7. x\n8. y"), ["7. x", "8. y"]);
        // A bullet list right under its paragraph, nested, and loose.
        assert_eq!(
            texts("Two things:\n* a\n  * a1\n* b"),
            ["Two things:", "• a", "  • a1", "• b"]
        );
        assert_eq!(texts("- a\n\n- b"), ["• a", "", "• b"]);
    }

    #[test]
    fn code_blocks_keep_their_lines() {
        assert_eq!(
            texts("Run:\n\n    cmd \\\n        --flag\n\n    next\n\nDone."),
            [
                "Run:",
                "",
                "  cmd \\",
                "      --flag",
                "",
                "  next",
                "",
                "Done."
            ]
        );
        assert_eq!(texts("```\nx\ny\n```"), ["  x", "  y"]);
        let code = markdown("```\nx\n```");
        assert_eq!(code[0].spans[1].style.fg, Some(color(palette::ACCENT)));
    }

    #[test]
    fn inline_styles() {
        let line = &markdown("a `c` **b** *e* **`bc`**")[0];
        let style = |text: &str| {
            line.spans
                .iter()
                .find(|s| s.content == text)
                .map(|s| s.style)
                .unwrap()
        };
        let accent = Style::new().fg(color(palette::ACCENT));
        assert_eq!(style("a "), Style::new());
        assert_eq!(style("c"), accent);
        assert_eq!(style("b"), Style::new().add_modifier(Modifier::BOLD));
        assert_eq!(style("e"), Style::new().add_modifier(Modifier::ITALIC));
        assert_eq!(style("bc"), accent.add_modifier(Modifier::BOLD));
        let heading = &markdown("## A `b`")[0];
        assert_eq!(heading.spans.len(), 1);
        assert_eq!(heading.spans[0].content, "A b");
        assert_eq!(
            heading.style,
            Style::new()
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
                .fg(color(palette::ACCENT))
        );
    }

    #[test]
    fn html_is_text_and_questions_are_one_line() {
        assert_eq!(texts("a <b>c</b>"), ["a <b>c</b>"]);
        let spans: String = markdown_spans("Pick `x`\nor *y*.")
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(spans, "Pick x or y.");
    }
}
