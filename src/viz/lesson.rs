//! SVG pictures of a lesson step, outside the terminal: the bank grid (32 bank columns, one row
//! per 128-byte line the request touches, each accessed word labelled and coloured by its
//! wavefront, conflict replays in warm colours) and the fragment map (which lane holds which
//! element, coloured by register). Written with the `svg` crate, as the pictures of [`super`]
//! (it escapes the text); pure string building, the CLI writes the file.

use std::collections::BTreeMap;

use svg::Document;
use svg::Node;
use svg::node::element::{Element, Rectangle, Text};

use crate::lessons::Lesson;
use crate::lessons::StepOp;
use crate::lessons::run::{Holder, RegElem, StepRun};
use crate::palette;
use crate::sim::bank::{NUM_BANKS, RequestReport};
use crate::sim::mma::Operand;

/// Side of one cell (a bank word or a fragment element), in pixels.
const CELL: u32 = 22;
/// Left edge of the grids: the row labels sit before it.
const LEFT: u32 = 60;

/// A `CELL`-square cell at (`x`, `y`) filled with `fill`, white grid lines.
fn cell(x: u32, y: u32, fill: &str) -> Rectangle {
    Rectangle::new()
        .set("x", x)
        .set("y", y)
        .set("width", CELL)
        .set("height", CELL)
        .set("fill", fill)
        .set("stroke", "#fff")
}

/// `s` at (`x`, `y`), `px` pixels high, anchored by `anchor` and filled with `ink`.
/// As an [`Element`] (see [`super::text_element`]).
fn label(x: u32, y: u32, px: u32, anchor: &str, ink: &str, s: String) -> Element {
    super::text_element(
        Text::new(s)
            .set("x", x)
            .set("y", y)
            .set("font-size", px)
            .set("text-anchor", anchor)
            .set("fill", ink),
    )
}

/// The picture being drawn: its elements in drawing order, the width its contents need so far
/// and the next free `y`.
struct Picture {
    doc: Document,
    width: u32,
    y: u32,
}

impl Picture {
    fn new() -> Self {
        let background = Rectangle::new()
            .set("width", "100%")
            .set("height", "100%")
            .set("fill", "#fff");
        Picture {
            doc: Document::new()
                .set("font-family", "monospace")
                .add(background),
            width: LEFT + CELL * NUM_BANKS as u32 + 20,
            y: 40,
        }
    }

    fn add(&mut self, node: impl Node) {
        self.doc.append(node);
    }

    /// One line of text at x = 10, widening the picture as far as the text needs, so titles and
    /// captions stay on the canvas.
    fn text_line(&mut self, y: u32, px: u32, bold: bool, text: String) {
        let need = 20 + super::text_width(&text, f64::from(px)).ceil() as u32;
        self.width = self.width.max(need);
        let mut t = Text::new(text)
            .set("x", 10)
            .set("y", y)
            .set("font-size", px);
        if bold {
            t = t.set("font-weight", "bold");
        }
        self.add(super::text_element(t));
    }

    /// The SVG document, as tall and as wide as what was drawn.
    fn finish(self) -> String {
        let (w, h) = (self.width, self.y);
        let doc = self
            .doc
            .set("width", w)
            .set("height", h)
            .set("viewBox", (0, 0, w, h));
        format!("{doc}\n")
    }
}

/// The picture of `run` (a step of `lesson`): bank grid for shared-memory steps, fragment maps
/// for ldmatrix (the tile elements each lane receives) and mma steps (A, B and C/D).
pub fn step_svg(lesson: &Lesson, run: &StepRun) -> String {
    let mut pic = Picture::new();
    pic.text_line(24, 16, true, title(lesson, run));
    if let Some(rep) = &run.report {
        bank_grid(&mut pic, rep);
    }
    for (holder, name, rows, cols) in fragment_maps(lesson, run) {
        fragment_map(&mut pic, run, holder, &name, rows, cols);
    }
    pic.finish()
}

/// `Lesson: step N INSTRUCTION (SASS), layout L`: N counts in the first variant's order.
fn title(lesson: &Lesson, run: &StepRun) -> String {
    let step = &lesson.steps[run.step];
    format!(
        "{}: step {} {} ({}), layout {}",
        lesson.title,
        lesson
            .steps_of(0)
            .iter()
            .position(|&s| s == run.step)
            .map_or(run.step + 1, |p| p + 1),
        step.op_name(),
        step.sass(),
        lesson.layouts[run.layout]
    )
}

/// The request's caption, bank numbers and one row of cells per 128-byte line it touches.
fn bank_grid(pic: &mut Picture, rep: &RequestReport) {
    pic.text_line(
        pic.y + 4,
        13,
        false,
        format!(
            "{} wavefronts, ideal {}, {} bank conflicts; cell = 4-byte word, label = wavefront",
            rep.wavefront_count(),
            rep.ideal(),
            rep.bank_conflicts()
        ),
    );
    pic.y += 24;
    for b in 0..NUM_BANKS as u32 {
        let x = LEFT + b * CELL + CELL / 2;
        pic.add(label(x, pic.y + 10, 10, "middle", "#666", b.to_string()));
    }
    pic.y += 14;
    // Each word the request touches: the wavefront that first serves it, its unit and replay.
    let mut words = BTreeMap::new();
    for (w, wave) in rep.wavefronts.iter().enumerate() {
        let k = rep.replay(w);
        for word in wave.bank_words.iter().flatten() {
            words.entry(*word).or_insert((w, wave.unit, k));
        }
    }
    let mut rows: Vec<u32> = words.keys().map(|w| w / NUM_BANKS as u32).collect();
    rows.dedup();
    for r in rows {
        bank_row(pic, &words, r);
        pic.y += CELL;
    }
    pic.y += 20;
}

/// Line `r` of the bank grid at `pic.y`: its byte offset, then one cell per bank, labelled
/// with the wavefront of the word it holds (grey when the request does not touch it).
fn bank_row(pic: &mut Picture, words: &BTreeMap<u32, (usize, usize, usize)>, r: u32) {
    let y = pic.y;
    pic.add(label(54, y + 15, 10, "end", "#666", (r * 128).to_string()));
    for b in 0..NUM_BANKS as u32 {
        let x = LEFT + b * CELL;
        match words.get(&(r * NUM_BANKS as u32 + b)) {
            Some(&(w, unit, k)) => {
                // Text on a replay's warm colour is black, as in the TUI: white on yellow is
                // unreadable.
                let (fill, ink) = if k == 0 {
                    (palette::unit(unit).hex(), "#fff".to_string())
                } else {
                    (palette::replay(k).hex(), palette::ON_REPLAY.hex())
                };
                pic.add(cell(x, y, &fill));
                pic.add(label(
                    x + CELL / 2,
                    y + 15,
                    11,
                    "middle",
                    &ink,
                    w.to_string(),
                ));
            }
            None => pic.add(cell(x, y, "#eee")),
        }
    }
}

/// The fragment maps a step draws: (holder, name, rows, cols); A, B and C of an mma, the tile
/// of an ldmatrix, none for other steps.
fn fragment_maps(lesson: &Lesson, run: &StepRun) -> Vec<(Holder, String, u32, u32)> {
    match &lesson.steps[run.step].op {
        StepOp::Mma { shape, .. } => [Operand::A, Operand::B, Operand::C]
            .into_iter()
            .map(|op| {
                let (r, c) = shape.dims(op);
                (Holder::Operand(op), op.to_string(), r, c)
            })
            .collect(),
        StepOp::Shared {
            instruction: crate::sim::instr::Instruction::Ldmatrix { .. },
            tile,
            ..
        } => {
            let t = &lesson.tiles[*tile];
            vec![(Holder::Tile(*tile), t.name.clone(), t.rows, t.cols)]
        }
        _ => Vec::new(),
    }
}

/// The map of `holder` (at most `rows` × `cols`, cut to the elements the lanes hold): its
/// caption, then one cell per element naming the lane that holds it, coloured by register.
fn fragment_map(
    pic: &mut Picture,
    run: &StepRun,
    holder: Holder,
    name: &str,
    rows: u32,
    cols: u32,
) {
    let es: Vec<&RegElem> = run.regs.iter().filter(|e| e.holder == holder).collect();
    let r0 = es.iter().map(|e| e.row).min().unwrap_or(0);
    let c0 = es.iter().map(|e| e.col).min().unwrap_or(0);
    let rows = es
        .iter()
        .map(|e| e.row - r0 + 1)
        .max()
        .unwrap_or(0)
        .min(rows);
    let cols = es
        .iter()
        .map(|e| e.col - c0 + 1)
        .max()
        .unwrap_or(0)
        .min(cols);
    pic.text_line(
        pic.y + 4,
        13,
        false,
        format!(
            "{} rows {}-{}, cols {}-{}: lane holding each element (colour = register)",
            name,
            r0,
            r0 + rows.saturating_sub(1),
            c0,
            c0 + cols.saturating_sub(1)
        ),
    );
    pic.y += 14;
    for e in &es {
        let x = LEFT + (e.col - c0) * CELL;
        let y = pic.y + (e.row - r0) * CELL;
        pic.add(cell(x, y, &palette::unit(e.reg as usize).hex()));
        pic.add(label(
            x + CELL / 2,
            y + 15,
            10,
            "middle",
            "#fff",
            e.lane.to_string(),
        ));
    }
    pic.width = pic.width.max(LEFT + cols * CELL + 20);
    pic.y += rows * CELL + 24;
}
