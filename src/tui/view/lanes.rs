//! The 32 lanes: element, byte offset, bank and wavefronts of a shared-memory step; groupID and
//! threadID_in_group of an mma step.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Widget};

use super::{color, more_marker, pane_block, unit_color, wavefront_char, wavefront_style};
use crate::palette;
use crate::sim::bank::bank_of;
use crate::tui::app::{App, Pane};

pub(super) fn render_lanes(app: &App, area: Rect, buf: &mut Buffer) {
    let run = app.run();
    let block = pane_block(app, Pane::Lanes, " Lanes ".into());
    // The wavefront column of a step whose question is unanswered: `?`.
    let hidden = app.answer_hidden();
    let where_hidden = app.lane_addresses_hidden();
    let mut lines = Vec::new();
    match (&run.request, &run.report) {
        (Some(req), Some(rep)) => {
            lines.push(Line::styled(
                "ln (row,col)   byte bank wf",
                Style::new().fg(color(palette::DIM)),
            ));
            let lanes = req.address_lanes();
            for lane in 0..32usize {
                let sel = lane as u32 == app.lane;
                let text;
                let mut style;
                if lanes >> lane & 1 == 1 {
                    let off = req.lane_byte_offsets[lane];
                    let (r, c) = run.coords[lane].unwrap_or((0, 0));
                    let wfs = rep.lane_wavefronts(lane);
                    let wtxt: String = if hidden {
                        "?".into()
                    } else {
                        wfs.iter().map(|&w| wavefront_char(w)).collect()
                    };
                    text = if where_hidden {
                        format!("{lane:>2} (  ?,  ?)      ?  b?  {wtxt}")
                    } else {
                        format!(
                            "{lane:>2} ({r:>3},{c:>3}) {off:>6}  b{:<2} {wtxt}",
                            bank_of(off)
                        )
                    };
                    style = match wfs.first() {
                        Some(&w) if !hidden => wavefront_style(rep, w),
                        _ => Style::new(),
                    };
                } else {
                    text = format!("{lane:>2} (no address: .x1/.x2 use lanes 0-7/0-15)");
                    style = Style::new().fg(color(palette::DIM));
                }
                if sel {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                lines.push(Line::styled(text, style));
            }
        }
        _ => lines = mma_lane_lines(app.lane),
    }
    render_lane_lines(lines, app.lane, block, area, buf);
}

/// The mma view of the lanes: a header, then each lane's groupID and threadID_in_group (PTX
/// ISA, mma fragments: groupID = lane / 4, threadID_in_group = lane % 4), coloured by group,
/// the `selected` lane reversed.
pub(super) fn mma_lane_lines(selected: u32) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(
        "ln groupID threadID_in_group",
        Style::new().fg(color(palette::DIM)),
    )];
    for lane in 0..32u32 {
        let mut style = Style::new().fg(unit_color((lane / 4) as usize));
        if lane == selected {
            style = style.add_modifier(Modifier::REVERSED);
        }
        lines.push(Line::styled(
            format!("{lane:>2}    g={}    t={}", lane / 4, lane % 4),
            style,
        ));
    }
    lines
}

/// Draws a lanes pane: `lines` is a header line (never empty) then one line per lane; the body scrolls so
/// that the `selected` lane stays visible, with "more" markers on `block` where lines are cut.
pub(super) fn render_lane_lines(
    lines: Vec<Line<'static>>,
    selected: u32,
    block: Block<'static>,
    area: Rect,
    buf: &mut Buffer,
) {
    let inner = block.inner(area);
    // Keep the selected lane (line lane+1) visible.
    let h = inner.height as usize;
    // A header line, then the lane lines starting at `start`: h - 1 of them fit.
    let rows = lines.len() - 1;
    let want = selected as usize + 1;
    let start = if want < h { 0 } else { want + 1 - h };
    let body: Vec<Line> = std::iter::once(lines[0].clone())
        .chain(lines.into_iter().skip(1 + start))
        .collect();
    let shown = h.saturating_sub(1);
    more_marker(block, start > 0, start + shown < rows).render(area, buf);
    Paragraph::new(body).render(inner, buf);
}
