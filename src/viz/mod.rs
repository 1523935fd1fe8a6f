//! Pictures outside the terminal: SVG renderings of a request's bank grid and of fragment maps
//! (here), and of a lesson step ([`lesson`]). Pure string builders (the caller writes the file).

pub mod html;
pub mod lesson;

use svg::Document;
use svg::node::element::{Element, Group, Rectangle, Text};

use crate::sim::bank::{NUM_BANKS, RequestReport};

use crate::palette;

/// Width in pixels a monospace `text` of `font_px` pixels needs: 0.6 em per character, a whole
/// em for wide (CJK) characters. Pictures size their canvas with it so no title or caption runs
/// off the edge.
pub fn text_width(text: &str, font_px: f64) -> f64 {
    text.chars()
        .map(|c| if c >= '\u{2e80}' { 1.0 } else { 0.6 })
        .sum::<f64>()
        * font_px
}

fn cell(x: f64, y: f64, w: f64, h: f64, fill: &str) -> Rectangle {
    Rectangle::new()
        .set("x", x)
        .set("y", y)
        .set("width", w)
        .set("height", h)
        .set("fill", fill)
        .set("stroke", "#444")
        .set("stroke-width", 0.5)
}

fn text(x: f64, y: f64, size: f64, s: &str) -> Element {
    text_element(centred(x, y, size, s))
}

/// [`text`] filled with `ink`.
fn text_in(x: f64, y: f64, size: f64, s: &str, ink: &str) -> Element {
    text_element(centred(x, y, size, s).set("fill", ink))
}

fn centred(x: f64, y: f64, size: f64, s: &str) -> Text {
    Text::new(s)
        .set("x", x)
        .set("y", y)
        .set("font-family", "monospace")
        .set("font-size", size)
        .set("text-anchor", "middle")
}

/// A `<text>` as a plain element: the crate writes an `element::Text` node in its alternate
/// form, with a line break before and after the text; as an [`Element`] the text sits right
/// inside its tags (`<text …>caption</text>`), which is what a reader of an SVG's
/// `textContent` (the exported page and its checks) gets.
pub(crate) fn text_element(t: Text) -> Element {
    t.into()
}

/// A white document with `title` centred at the top, `width` wide or as wide as the title needs.
fn canvas(width: f64, height: f64, title: &str) -> Document {
    let width = width.max((text_width(title, 13.0) + 20.0).ceil());
    Document::new()
        .set("viewBox", (0, 0, width, height))
        .set("width", width)
        .set("height", height)
        .add(cell(0.0, 0.0, width, height, "white").set("stroke", "none"))
        .add(text(width / 2.0, 16.0, 13.0, title))
}

/// The bank grid of one request: 32 bank columns, one row per wavefront; each cell names the
/// lowest lane served by that bank word (`+` when several lanes share it) and its word index,
/// filled with [`palette::wavefront`]: the unit's colour for its first wavefront, a warm colour
/// for each bank-conflict replay.
pub fn bank_grid(report: &RequestReport, title: &str) -> String {
    let (cw, ch, top, left) = (34.0, 30.0, 48.0, 60.0);
    let rows = report.wavefronts.len().max(1);
    let width = left + cw * NUM_BANKS as f64 + 10.0;
    let height = top + ch * rows as f64 + 20.0;
    let mut doc = canvas(width, height, title);
    for b in 0..NUM_BANKS {
        doc = doc.add(text(
            left + cw * (b as f64 + 0.5),
            top - 8.0,
            10.0,
            &format!("b{b}"),
        ));
    }
    for (i, w) in report.wavefronts.iter().enumerate() {
        let y = top + ch * i as f64;
        doc = doc.add(text(left / 2.0, y + ch * 0.62, 10.0, &format!("wf {i}")));
        for (b, word) in w.bank_words.iter().enumerate() {
            let x = left + cw * b as f64;
            match word {
                Some(word) => {
                    let lanes = w.bank_lanes[b];
                    let label = match lanes.count_ones() {
                        0 => String::new(),
                        1 => format!("L{}", lanes.trailing_zeros()),
                        _ => format!("L{}+", lanes.trailing_zeros()),
                    };
                    // Black on a replay's warm colour, as in the TUI; white on a unit's.
                    let ink = if report.replay(i) > 0 {
                        palette::ON_REPLAY.hex()
                    } else {
                        "#fff".to_string()
                    };
                    doc = doc
                        .add(cell(x, y, cw, ch, &palette::wavefront(report, i).hex()))
                        .add(text_in(x + cw / 2.0, y + 12.0, 9.0, &label, ink.as_str()))
                        .add(text_in(
                            x + cw / 2.0,
                            y + 24.0,
                            8.0,
                            &format!("w{word}"),
                            ink.as_str(),
                        ));
                }
                None => doc = doc.add(cell(x, y, cw, ch, palette::EMPTY_RGB)),
            }
        }
    }
    doc.to_string()
}

/// One fragment map to draw: a `rows`×`cols` grid whose cell (r, c) shows `label(r, c)`
/// coloured by `group(r, c)` (e.g. the register index).
pub struct FragmentMap<'a> {
    /// Title above the grid.
    pub title: String,
    /// Rows, in elements.
    pub rows: u32,
    /// Columns, in elements.
    pub cols: u32,
    /// Text of cell (r, c), e.g. `T5.1`.
    pub label: &'a dyn Fn(u32, u32) -> String,
    /// Colour group of cell (r, c), e.g. the register index: [`palette::unit`] of it.
    pub group: &'a dyn Fn(u32, u32) -> usize,
}

/// Draws `m` into a group at the origin; returns it with its width and height.
fn fragment_group(m: &FragmentMap) -> (Group, f64, f64) {
    let (cw, ch, top, left) = (44.0, 22.0, 44.0, 36.0);
    let width = (left + cw * m.cols as f64 + 10.0).max((text_width(&m.title, 13.0) + 20.0).ceil());
    let height = top + ch * m.rows as f64 + 10.0;
    let mut g = Group::new()
        .add(cell(0.0, 0.0, width, height, "white").set("stroke", "none"))
        .add(text(width / 2.0, 16.0, 13.0, &m.title));
    for c in 0..m.cols {
        g = g.add(text(
            left + cw * (c as f64 + 0.5),
            top - 6.0,
            10.0,
            &c.to_string(),
        ));
    }
    for r in 0..m.rows {
        let y = top + ch * r as f64;
        g = g.add(text(left / 2.0, y + ch * 0.65, 10.0, &r.to_string()));
        for c in 0..m.cols {
            let x = left + cw * c as f64;
            let fill = palette::unit((m.group)(r, c)).hex();
            g = g.add(cell(x, y, cw, ch, &fill)).add(text_in(
                x + cw / 2.0,
                y + ch * 0.65,
                9.0,
                &(m.label)(r, c),
                "#fff",
            ));
        }
    }
    (g, width, height)
}

/// Several fragment maps stacked top to bottom in one SVG document.
pub fn fragment_maps(maps: &[FragmentMap]) -> String {
    let drawn: Vec<(Group, f64, f64)> = maps.iter().map(fragment_group).collect();
    let width = drawn.iter().map(|d| d.1).fold(0.0, f64::max);
    let height: f64 = drawn.iter().map(|d| d.2 + 10.0).sum();
    let mut doc = Document::new()
        .set("viewBox", (0, 0, width, height))
        .set("width", width)
        .set("height", height);
    let mut y = 0.0;
    for (g, _, h) in drawn {
        doc = doc.add(g.set("transform", format!("translate(0,{y})")));
        y += h + 10.0;
    }
    doc.to_string()
}
