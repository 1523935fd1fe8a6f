//! SVG pictures of a lesson step, outside the terminal: the bank grid (32 bank columns, one row
//! per 128-byte line the request touches, each accessed word labelled and coloured by its
//! wavefront, conflict replays in warm colours) and the fragment map (which lane holds which
//! element, coloured by register). Pure string building; the CLI writes the file.

use std::fmt::Write;

use crate::lessons::Lesson;
use crate::lessons::StepOp;
use crate::lessons::run::{Holder, StepRun};
use crate::palette;
use crate::sim::bank::NUM_BANKS;
use crate::sim::mma::Operand;

const CELL: u32 = 22;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Writes one line of text at x = 10 and widens `width` as far as the text needs, so titles and
/// captions stay on the canvas.
fn text_line(body: &mut String, width: &mut u32, y: u32, px: u32, bold: bool, text: String) {
    let need = 20 + super::text_width(&text, f64::from(px)).ceil() as u32;
    *width = (*width).max(need);
    let _ = writeln!(
        body,
        "<text x=\"10\" y=\"{y}\" font-size=\"{px}\"{}>{}</text>",
        if bold { " font-weight=\"bold\"" } else { "" },
        esc(&text)
    );
}

/// The picture of `run` (a step of `lesson`): bank grid for shared-memory steps, fragment maps
/// for ldmatrix (the tile elements each lane receives) and mma steps (A, B and C/D).
pub fn step_svg(lesson: &Lesson, run: &StepRun) -> String {
    let step = &lesson.steps[run.step];
    let layout = &lesson.layouts[run.layout];
    let mut body = String::new();
    let mut y = 40u32;
    let mut width = 60 + CELL * NUM_BANKS as u32 + 20;
    text_line(
        &mut body,
        &mut width,
        24,
        16,
        true,
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
            layout
        ),
    );
    if let Some(rep) = &run.report {
        text_line(
            &mut body,
            &mut width,
            y + 4,
            13,
            false,
            format!(
                "{} wavefronts, ideal {}, {} bank conflicts; cell = 4-byte word, label = wavefront",
                rep.wavefront_count(),
                rep.ideal(),
                rep.bank_conflicts()
            ),
        );
        y += 24;
        for b in 0..NUM_BANKS as u32 {
            let _ = writeln!(
                body,
                "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#666\">{b}</text>",
                60 + b * CELL + CELL / 2,
                y + 10
            );
        }
        y += 14;
        let mut words = std::collections::BTreeMap::new();
        for (w, wave) in rep.wavefronts.iter().enumerate() {
            let k = rep.replay(w);
            for word in wave.bank_words.iter().flatten() {
                words.entry(*word).or_insert((w, wave.unit, k));
            }
        }
        let mut rows: Vec<u32> = words.keys().map(|w| w / NUM_BANKS as u32).collect();
        rows.dedup();
        for r in rows {
            let _ = writeln!(
                body,
                "<text x=\"54\" y=\"{}\" font-size=\"10\" text-anchor=\"end\" fill=\"#666\">{}</text>",
                y + 15,
                r * 128
            );
            for b in 0..NUM_BANKS as u32 {
                let word = r * NUM_BANKS as u32 + b;
                let x = 60 + b * CELL;
                match words.get(&word) {
                    Some(&(w, unit, k)) => {
                        // Text on a replay's warm colour is black, as in the TUI: white on
                        // yellow is unreadable.
                        let (fill, ink) = if k == 0 {
                            (palette::unit(unit).hex(), "#fff".to_string())
                        } else {
                            (palette::replay(k).hex(), palette::ON_REPLAY.hex())
                        };
                        let _ = writeln!(
                            body,
                            "<rect x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"{fill}\" stroke=\"#fff\"/><text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"{ink}\">{w}</text>",
                            x + CELL / 2,
                            y + 15
                        );
                    }
                    None => {
                        let _ = writeln!(
                            body,
                            "<rect x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"#eee\" stroke=\"#fff\"/>"
                        );
                    }
                }
            }
            y += CELL;
        }
        y += 20;
    }
    // Fragment maps.
    let maps: Vec<(Holder, String, u32, u32)> = match &step.op {
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
    };
    for (holder, name, rows, cols) in maps {
        let es: Vec<_> = run.regs.iter().filter(|e| e.holder == holder).collect();
        let (r0, c0) = (
            es.iter().map(|e| e.row).min().unwrap_or(0),
            es.iter().map(|e| e.col).min().unwrap_or(0),
        );
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
        text_line(
            &mut body,
            &mut width,
            y + 4,
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
        y += 14;
        for e in &es {
            let x = 60 + (e.col - c0) * CELL;
            let yy = y + (e.row - r0) * CELL;
            let _ = writeln!(
                body,
                "<rect x=\"{x}\" y=\"{yy}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"{}\" stroke=\"#fff\"/><text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#fff\">{}</text>",
                palette::unit(e.reg as usize).hex(),
                x + CELL / 2,
                yy + 15,
                e.lane
            );
        }
        width = width.max(60 + cols * CELL + 20);
        y += rows * CELL + 24;
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{y}\" viewBox=\"0 0 {width} {y}\" font-family=\"monospace\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n{body}</svg>\n"
    )
}
