//! Running lesson steps on the simulator, and checking a lesson's expected numbers.
//!
//! [`run_step`] turns step `i` under layout `j` into the [`WarpRequest`] the warp issues, runs it
//! through the warp executor ([`crate::sim::exec::execute`]: validation and cost), and lists
//! which element every lane holds in every register afterwards, from the executor's own table
//! of register bytes ([`crate::sim::exec::register_segments`]) and, for mma steps,
//! [`crate::sim::mma::fragment`]. Nothing here computes wavefronts or fragments itself.
//!
//! [`check_lesson`] runs every check a lesson file states and returns one [`Check`] per
//! expected number, so tests and `tilelab lessons check` report the same things.

use std::collections::BTreeMap;

pub use super::check::{Basis, Check, CheckStatus};
use super::hooks::{self, ModelAnswer};
use super::{Feed, LanePattern, Lesson, LessonError, Spot, StepOp, Tile};
use crate::sim::arch::Arch;
use crate::sim::bank::{RequestCost, RequestReport, WARP_SIZE, WarpRequest, schedule};
use crate::sim::exec::{self, WarpOp};
use crate::sim::instr::Instruction;
use crate::sim::layout::Layout;
use crate::sim::mma::{self, MmaShape, Operand};
use crate::sim::placement;
use crate::sim::smem::SharedMemory;

/// Where one tile sits under one layout choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedTile {
    /// The layout string in force for this tile (the tile's fixed one or the lesson's choice).
    pub spec: String,
    /// The parsed layout.
    pub layout: Layout,
    /// Byte offset of the tile in shared memory.
    pub base: u32,
}

/// The architecture lessons model: sm_90 (the H200 the lessons' numbers were measured on).
pub const LESSON_ARCH: Arch = Arch::Sm90;

/// The tiles of `lesson` placed under layout choice `layout` (index into [`Lesson::layouts`]),
/// as the loader placed them ([`super::LessonLayout::place`]).
///
/// # Errors
/// [`LessonError::Invalid`] when `layout` is not an index of the lesson's layouts.
pub fn place_tiles(lesson: &Lesson, layout: usize) -> Result<&[PlacedTile], LessonError> {
    lesson
        .layouts
        .get(layout)
        .map(|l| l.tiles.as_slice())
        .ok_or_else(|| LessonError::Invalid {
            file: lesson.source.clone(),
            field: "layouts".into(),
            message: format!(
                "layout index {layout} is out of range; the lesson has {}",
                lesson.layouts.len()
            ),
        })
}

/// Parses layout choice `choice` for every tile of `tiles` (a tile's fixed layout wins) and
/// places them by `sim`'s one placement rule ([`crate::sim::placement`]) on [`LESSON_ARCH`];
/// `source` names the lesson file in errors.
///
/// # Errors
/// A layout that does not parse for a tile, or tiles over sm_90's shared memory (the loader
/// rejects such lessons).
pub(super) fn place(
    tiles: &[Tile],
    choice: &str,
    source: &str,
) -> Result<Vec<PlacedTile>, LessonError> {
    let mut parsed = Vec::with_capacity(tiles.len());
    for (i, t) in tiles.iter().enumerate() {
        let spec = t.fixed_layout.clone().unwrap_or_else(|| choice.to_string());
        let layout = Layout::parse(&spec, t.rows, t.cols, t.elem_bytes).map_err(|e| {
            LessonError::Invalid {
                file: source.to_string(),
                field: format!("tiles[{i}]"),
                message: e.to_string(),
            }
        })?;
        parsed.push((spec, layout));
    }
    let named: Vec<(&str, Layout)> = tiles
        .iter()
        .zip(&parsed)
        .map(|(t, (_, l))| (t.name.as_str(), *l))
        .collect();
    let placed = placement::place_tiles(&named, LESSON_ARCH).map_err(|e| LessonError::Invalid {
        file: source.to_string(),
        field: "tiles".into(),
        message: format!("under layout '{choice}': {e}"),
    })?;
    Ok(parsed
        .into_iter()
        .zip(placed.bases)
        .map(|((spec, layout), base)| PlacedTile { spec, layout, base })
        .collect())
}

/// What register part holds: an element of a tile or of an mma operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Holder {
    /// Element `(row, col)` of tile `tiles[index]`.
    Tile(usize),
    /// Element `(row, col)` of an mma operand (C means C and D).
    Operand(Operand),
}

/// One part of one register of one lane after the step: `regs[lane][reg]`, part `half`
/// (0 = low bits) holds element `(row, col)` of `holder`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegElem {
    /// Lane 0..32.
    pub lane: u32,
    /// Register index within the instruction's destination (or source, for stores) vector.
    pub reg: u32,
    /// Part of the register: 0/1 for b16 halves, 0..4 for bytes, 0 for 32-bit data.
    pub half: u32,
    /// Whose element.
    pub holder: Holder,
    /// Row, in elements.
    pub row: u32,
    /// Column, in elements.
    pub col: u32,
}

/// One step, simulated under one layout.
#[derive(Clone, Debug)]
pub struct StepRun {
    /// Index into [`Lesson::steps`].
    pub step: usize,
    /// Layout index the run used.
    pub layout: usize,
    /// Placement of the step's tile (shared-memory steps).
    pub tile: Option<PlacedTile>,
    /// The tile `(row, col)` each address lane points at (`None`: lane gives no address).
    pub coords: [Option<(u32, u32)>; WARP_SIZE],
    /// The request the warp issues (shared-memory steps).
    pub request: Option<WarpRequest>,
    /// Its wavefronts and ideal count, from the warp executor ([`exec::execute`]).
    pub cost: Option<RequestCost>,
    /// Its per-wavefront detail ([`crate::sim::bank::schedule`]), for display.
    pub report: Option<RequestReport>,
    /// Register contents after the step.
    pub regs: Vec<RegElem>,
}

impl StepRun {
    /// The element in `lane`'s register `reg`, part `half`, if any.
    pub fn reg(&self, lane: u32, reg: u32, half: u32) -> Option<&RegElem> {
        self.regs
            .iter()
            .find(|e| e.lane == lane && e.reg == reg && e.half == half)
    }

    /// Elements held by `lane`, in register order.
    pub fn lane_regs(&self, lane: u32) -> Vec<&RegElem> {
        self.regs.iter().filter(|e| e.lane == lane).collect()
    }
}

fn invalid(lesson: &Lesson, step: usize, layout: &str, message: String) -> LessonError {
    LessonError::Invalid {
        file: lesson.source.clone(),
        field: format!("steps[{step}].access"),
        message: format!("under layout '{layout}': {message}"),
    }
}

/// Runs step `step` of `lesson` under layout choice `layout`.
///
/// # Errors
/// [`LessonError::Invalid`] when the access leaves the tile, is not contiguous under the layout
/// (a 16-byte access must cover 16 contiguous bytes), or `sim` rejects the request (misaligned,
/// out of shared memory). The loader runs every step under every layout, so built-in lessons
/// never fail here.
pub fn run_step(lesson: &Lesson, step: usize, layout: usize) -> Result<StepRun, LessonError> {
    let s = lesson.steps.get(step).ok_or_else(|| LessonError::Invalid {
        file: lesson.source.clone(),
        field: "steps".into(),
        message: format!(
            "step {step} is out of range; the lesson has {}",
            lesson.steps.len()
        ),
    })?;
    match &s.op {
        StepOp::Mma { shape, .. } => {
            let mut regs = Vec::new();
            for op in [Operand::A, Operand::B, Operand::C] {
                for lane in 0..WARP_SIZE as u32 {
                    for reg in 0..shape.regs(op) {
                        for half in 0..shape.elems_per_reg(op) {
                            let (row, col) = mma::fragment(*shape, op, lane, reg, half);
                            regs.push(RegElem {
                                lane,
                                reg,
                                half,
                                holder: Holder::Operand(op),
                                row,
                                col,
                            });
                        }
                    }
                }
            }
            Ok(StepRun {
                step,
                layout,
                tile: None,
                coords: [None; WARP_SIZE],
                request: None,
                cost: None,
                report: None,
                regs,
            })
        }
        StepOp::Shared {
            instruction,
            tile,
            access,
        } => {
            let placed = place_tiles(lesson, layout)?[*tile].clone();
            let t = &lesson.tiles[*tile];
            run_shared(lesson, step, *instruction, *tile, t, access, placed, layout)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run_shared(
    lesson: &Lesson,
    step: usize,
    ins: Instruction,
    tile_index: usize,
    t: &Tile,
    access: &LanePattern,
    placed: PlacedTile,
    layout: usize,
) -> Result<StepRun, LessonError> {
    let spec = placed.spec.clone();
    let eb = t.elem_bytes;
    let width = ins.bytes_per_address();
    if width < eb {
        return Err(invalid(
            lesson,
            step,
            &spec,
            format!(
                "{ins} moves {width} bytes per lane but tile '{}' has {eb}-byte elements; use an access at least one element wide",
                t.name
            ),
        ));
    }
    if ins.matrices().is_some() && eb != 2 {
        return Err(invalid(
            lesson,
            step,
            &spec,
            format!(
                "{ins} moves b16 elements but tile '{}' has {eb}-byte elements",
                t.name
            ),
        ));
    }
    let n = width / eb;
    let coords = access.coords(t, n);
    let lanes = ins.address_lanes();
    let mut offs = [0u32; WARP_SIZE];
    for lane in 0..WARP_SIZE {
        if lanes >> lane & 1 == 0 {
            continue;
        }
        let Some((r, c)) = coords[lane] else {
            return Err(invalid(
                lesson,
                step,
                &spec,
                format!("lane {lane} gives no address but {ins} needs one"),
            ));
        };
        if r >= t.rows || c.checked_add(n).is_none_or(|end| end > t.cols) {
            return Err(invalid(
                lesson,
                step,
                &spec,
                format!(
                    "lane {lane} reads elements ({r}, {c}..{}) outside tile '{}' of {}x{}",
                    c.saturating_add(n),
                    t.name,
                    t.rows,
                    t.cols
                ),
            ));
        }
        if !placed.layout.is_contiguous(r, c, n, true) {
            return Err(invalid(
                lesson,
                step,
                &spec,
                format!(
                    "lane {lane}'s {width}-byte access at ({r}, {c}) covers elements that are not contiguous in this layout; pick an access along the stored rows"
                ),
            ));
        }
        offs[lane] = placed.base + placed.layout.byte_offset(r, c);
    }
    // Execute it: the data a lesson moves does not matter (zeros), its cost and where each
    // register's bytes come from do.
    let req = WarpRequest::new(ins, offs);
    let mut smem = SharedMemory::for_arch(LESSON_ARCH);
    let op = WarpOp::Shared {
        request: req.clone(),
        data: [[0; 4]; WARP_SIZE],
    };
    let done =
        exec::execute(&mut smem, &op).map_err(|e| invalid(lesson, step, &spec, e.to_string()))?;
    let holder = Holder::Tile(tile_index);
    let mut regs = Vec::new();
    let reg_lanes = exec::register_lanes(&req);
    for lane in (0..WARP_SIZE).filter(|&l| reg_lanes >> l & 1 == 1) {
        for reg in 0..ins.regs_per_lane() {
            // Byte position inside the register of the segment's first byte.
            let mut at = 0u32;
            for seg in exec::register_segments(ins, lane, reg).as_slice() {
                if let Some((r, c)) = coords[seg.addr_lane as usize] {
                    for j in 0..seg.len as u32 {
                        let off = seg.offset as u32 + j;
                        if off.is_multiple_of(eb) {
                            regs.push(RegElem {
                                lane: lane as u32,
                                reg: reg as u32,
                                half: if eb >= 4 { 0 } else { (at + j) / eb },
                                holder,
                                row: r,
                                col: c + off / eb,
                            });
                        }
                    }
                }
                at += seg.len as u32;
            }
        }
    }
    Ok(StepRun {
        step,
        layout,
        tile: Some(placed),
        coords,
        cost: Some(done.cost),
        report: Some(schedule(&req)),
        request: Some(req),
        regs,
    })
}

/// Whether an ldmatrix run's registers `feed.regs` equal the m16n8k16 `feed.operand` fragment
/// of the operand stored in the tile at `feed.origin` as `feed.storage`. Returns the first
/// differing `(lane, mma reg, half)` with both tile coordinates when they differ.
pub fn feed_mismatch(run: &StepRun, feed: &Feed) -> Option<String> {
    for (j, &reg) in feed.regs.iter().enumerate() {
        for lane in 0..WARP_SIZE as u32 {
            for half in 0..2 {
                let (i, jj) = mma::fragment(MmaShape::M16N8K16, feed.operand, lane, j as u32, half);
                // A: (m, k) = (i, jj); B: (k, n) = (i, jj).
                let dim = |c: char| match (feed.operand, c) {
                    (Operand::A, 'm') | (Operand::B, 'k') => i,
                    _ => jj,
                };
                let want = (
                    feed.origin.0 + dim(feed.storage[0]),
                    feed.origin.1 + dim(feed.storage[1]),
                );
                let got = run.reg(lane, reg, half).map(|e| (e.row, e.col));
                if got != Some(want) {
                    let name = if feed.operand == Operand::A { "a" } else { "b" };
                    return Some(format!(
                        "lane {lane} ldmatrix reg {reg} half {half} holds tile {}, the {name}{j} fragment needs tile ({}, {})",
                        cell(got),
                        want.0,
                        want.1
                    ));
                }
            }
        }
    }
    None
}

/// Whether a spot check holds; `Err` carries what the register really holds.
pub fn spot_holds(run: &StepRun, spot: &Spot) -> Result<(), String> {
    let got = run
        .regs
        .iter()
        .find(|e| {
            e.lane == spot.lane
                && e.reg == spot.reg
                && e.half == spot.half
                && match spot.operand {
                    Some(op) => e.holder == Holder::Operand(op),
                    None => true,
                }
        })
        .map(|e| (e.row, e.col));
    if got == Some((spot.row, spot.col)) {
        Ok(())
    } else {
        Err(format!(
            "lane {} reg {} half {} holds {}, expected ({}, {})",
            spot.lane,
            spot.reg,
            spot.half,
            cell(got),
            spot.row,
            spot.col
        ))
    }
}

/// A tile element as checks print it: `(row, col)`, or "nothing" where no element is held.
fn cell(e: Option<(u32, u32)>) -> String {
    e.map_or_else(|| "nothing".to_string(), |(r, c)| format!("({r}, {c})"))
}

/// SASS counts as checks print them: `LDS ×5, LDS.U8 ×1`.
fn counts_text(m: &BTreeMap<String, u32>) -> String {
    crate::text::list_max(m.iter().map(|(k, n)| format!("{k} ×{n}")), usize::MAX)
}

/// Instructions by SASS mnemonic over the steps of `variant`.
pub fn sass_counts(lesson: &Lesson, variant: usize) -> BTreeMap<String, u32> {
    let mut m = BTreeMap::new();
    for i in lesson.steps_of(variant) {
        *m.entry(lesson.steps[i].sass().to_string()).or_insert(0) += 1;
    }
    m
}

/// The hardware records `lessons check` compares `measured` links with, by name: the built-in
/// H200 records ([`crate::measured::records::MEASURED_H200_JSON`], from
/// `tests/data/h200_wavefronts.json`) or those of the JSON file `path`.
///
/// The file is in the replay format ([`crate::measured::records::parse`]): a JSON array of
/// records, or an object whose `"records"` field is one (a measured file with its provenance).
///
/// # Errors
/// The file cannot be read (or is over [`crate::textfile::MAX_HW_RECORDS_BYTES`]), or is not a
/// JSON array of `{name, instruction, lane_byte_offsets, wavefronts}` (or such an object).
pub fn hw_records(path: Option<&std::path::Path>) -> anyhow::Result<BTreeMap<String, HwRecord>> {
    use crate::measured::records;
    use anyhow::Context;
    let recs: Vec<HwRecord> = match path {
        None => records::parse(records::MEASURED_H200_JSON).context("built-in hardware records")?,
        Some(p) => {
            let text = crate::textfile::read_text(
                p,
                crate::textfile::MAX_HW_RECORDS_BYTES,
                "hardware record file",
            )
            .with_context(|| format!("cannot read hardware records '{}'", crate::text::path(p)))?;
            records::parse(&text).with_context(|| {
                format!(
                    "'{}' is not a JSON array of {{name, instruction, lane_byte_offsets, wavefronts}} (or an object whose \"records\" field is one)",
                    crate::text::path(p)
                )
            })?
        }
    };
    Ok(recs.into_iter().map(|r| (r.name.clone(), r)).collect())
}

/// One hardware record, as `tests/data/h200_wavefronts.json` holds it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct HwRecord {
    /// Record name.
    pub name: String,
    /// PTX instruction.
    pub instruction: String,
    /// 32 byte offsets.
    pub lane_byte_offsets: Vec<u32>,
    /// Measured wavefronts.
    pub wavefronts: u32,
}

/// Runs every check `lesson` states: per-step wavefronts and conflicts for every layout,
/// hardware-record links (when `hw` is given), ldmatrix→mma feeds, register spot checks, mma
/// register counts, SASS counts per variant, arithmetic facts, and model claims via
/// [`hooks::counts_model`].
pub fn check_lesson(lesson: &Lesson, hw: Option<&BTreeMap<String, HwRecord>>) -> Vec<Check> {
    let mut out = Vec::new();
    for (si, step) in lesson.steps.iter().enumerate() {
        let label = format!("step {} ({})", si + 1, step.op_name());
        for (li, spec) in lesson.layouts.iter().enumerate() {
            let run = match run_step(lesson, si, li) {
                Ok(r) => r,
                Err(e) => {
                    push(
                        &mut out,
                        Basis::Simulator,
                        format!("{label} under '{spec}' runs"),
                        Err(e.to_string()),
                    );
                    continue;
                }
            };
            check_layout_run(&mut out, &label, step, &spec.spec, &run, hw);
            if li == 0 {
                check_registers(&mut out, &label, step, &run);
            }
        }
    }
    check_tables(&mut out, lesson);
    out.extend(lesson.model.iter().map(check_model));
    for p in &lesson.ptx {
        out.extend(super::ptx::check_part(p));
    }
    out
}

/// A step's numbers under layout `spec` against the lesson's `expect` (the simulator) and its
/// `measured` link (the hardware record `hw` holds; pending without records).
fn check_layout_run(
    out: &mut Vec<Check>,
    label: &str,
    step: &super::Step,
    spec: &str,
    run: &StepRun,
    hw: Option<&BTreeMap<String, HwRecord>>,
) {
    if let (Some(e), Some(cost)) = (step.expect.get(spec), run.cost) {
        let got = (cost.wavefronts, cost.bank_conflicts());
        push(
            out,
            Basis::Simulator,
            format!(
                "{label} under '{spec}': wavefronts {}, conflicts {}",
                e.wavefronts, e.conflicts
            ),
            if got == (e.wavefronts, e.conflicts) {
                Ok(())
            } else {
                Err(format!(
                    "simulator: wavefronts {}, conflicts {}",
                    got.0, got.1
                ))
            },
        );
    }
    if let Some(rec_name) = step.measured.get(spec) {
        let what = format!("{label} under '{spec}' is hardware record '{rec_name}'");
        match hw.map(|h| h.get(rec_name)) {
            None => out.push(Check {
                what,
                status: CheckStatus::Pending,
                basis: Basis::Measured,
                detail: "no hardware records given".into(),
            }),
            Some(None) => push(out, Basis::Measured, what, Err("no such record".into())),
            Some(Some(rec)) => {
                let req = run.request.as_ref().expect("shared step");
                let same_ins = req.instruction.to_string()
                    == crate::sim::instr::Instruction::parse(&rec.instruction)
                        .map(|i| i.to_string())
                        .unwrap_or_default();
                let same_addr = req.lane_byte_offsets.as_slice() == rec.lane_byte_offsets;
                let wf = run.cost.map(|c| c.wavefronts);
                push(
                    out,
                    Basis::Measured,
                    what,
                    if same_ins && same_addr && wf == Some(rec.wavefronts) {
                        Ok(())
                    } else {
                        Err(format!(
                            "instruction same: {same_ins}, addresses same: {same_addr}, simulated {} vs measured {} wavefronts",
                            wf.map_or_else(|| "no cost".to_string(), |w| w.to_string()),
                            rec.wavefronts
                        ))
                    },
                );
            }
        }
    }
}

/// A step's register claims, under the lesson's first layout: ldmatrix→mma feeds, register
/// spot checks, mma registers per lane.
fn check_registers(out: &mut Vec<Check>, label: &str, step: &super::Step, run: &StepRun) {
    for (fi, feed) in step.feeds.iter().enumerate() {
        let m = feed_mismatch(run, feed);
        let verb = if feed.matches { "is" } else { "is not" };
        push(
            out,
            Basis::Simulator,
            format!(
                "{label} feeds[{fi}]: regs {} {verb} the m16n8k16 {} fragment",
                crate::text::list_max(&feed.regs, usize::MAX),
                feed.operand
            ),
            match (feed.matches, m) {
                (true, None) => Ok(()),
                (true, Some(d)) => Err(d),
                (false, Some(_)) => Ok(()),
                (false, None) => Err("the registers do match".into()),
            },
        );
    }
    for spot in &step.checks {
        push(
            out,
            Basis::Simulator,
            format!(
                "{label}: lane {} reg {} half {} holds ({}, {})",
                spot.lane, spot.reg, spot.half, spot.row, spot.col
            ),
            spot_holds(run, spot),
        );
    }
    if let (Some((a, b, c)), StepOp::Mma { shape, .. }) = (step.mma_regs, &step.op) {
        let got = (
            shape.regs(Operand::A),
            shape.regs(Operand::B),
            shape.regs(Operand::C),
        );
        push(
            out,
            Basis::Simulator,
            format!("{label}: registers per lane A {a}, B {b}, C/D {c}"),
            if got == (a, b, c) {
                Ok(())
            } else {
                Err(format!(
                    "simulator: A {}, B {}, C/D {}",
                    got.0, got.1, got.2
                ))
            },
        );
    }
}

/// The lesson's own tables: each variant's SASS counts against its steps, and the articles'
/// arithmetic as written.
fn check_tables(out: &mut Vec<Check>, lesson: &Lesson) {
    for (vi, v) in lesson.variants.iter().enumerate() {
        if let Some(want) = lesson.sass_counts.get(v) {
            let got = sass_counts(lesson, vi);
            push(
                out,
                Basis::Consistency,
                format!("variant '{v}': SASS counts {}", counts_text(want)),
                if &got == want {
                    Ok(())
                } else {
                    Err(format!("steps give {}", counts_text(&got)))
                },
            );
        }
    }
    for a in &lesson.arithmetic {
        push(
            out,
            Basis::Arithmetic,
            format!("{} ({})", a.label, a.source),
            if a.holds() {
                Ok(())
            } else {
                Err(format!(
                    "computes {}, the lesson says {}",
                    a.value(),
                    a.equals
                ))
            },
        );
    }
}

/// Checks one kernel-level claim against the counts model ([`hooks::counts_model`]). A passed
/// check's `detail` holds the model's values of the expected keys (`LDSM.16.M88.4 40, …`).
pub fn check_model(m: &hooks::ModelClaim) -> Check {
    let what = format!("{} ({}, {})", m.label, m.kind.name(), m.source);
    match hooks::counts_model(m).and_then(|ans| compare_model(m, &ans)) {
        Ok(values) => Check {
            what,
            status: CheckStatus::Pass,
            basis: Basis::Model,
            detail: values,
        },
        Err(detail) => Check {
            what,
            status: CheckStatus::Fail,
            basis: Basis::Model,
            detail,
        },
    }
}

/// The model's values of the expected keys, or the first disagreement.
fn compare_model(m: &hooks::ModelClaim, ans: &ModelAnswer) -> Result<String, String> {
    let mut values = Vec::new();
    for (k, want) in &m.expect {
        let Some(got) = ans.get(k) else {
            return Err(format!(
                "the counts model gives no '{k}'; it gives {}",
                crate::text::list(ans.keys())
            ));
        };
        let tol = m.tolerance * want.abs();
        if (got - want).abs() > tol.max(1e-9) {
            return Err(format!("'{k}': model {got}, lesson {want}"));
        }
        values.push(if got.fract() == 0.0 {
            format!("{k} {got}")
        } else {
            format!("{k} {got:.3}")
        });
    }
    Ok(values.join(", "))
}

impl super::Step {
    /// Short instruction name for labels (`ldmatrix.x4.trans`, `mma.m16n8k16.f16`).
    pub fn op_name(&self) -> String {
        match &self.op {
            StepOp::Shared { instruction, .. } => instruction.to_string(),
            StepOp::Mma { shape, dtype } => {
                let (m, n, k) = shape.mnk();
                format!("mma.m{m}n{n}k{k}.{}", dtype.name())
            }
        }
    }
}

fn push(out: &mut Vec<Check>, basis: Basis, what: String, ok: Result<(), String>) {
    out.push(match ok {
        Ok(()) => Check {
            what,
            status: CheckStatus::Pass,
            basis,
            detail: String::new(),
        },
        Err(d) => Check {
            what,
            status: CheckStatus::Fail,
            basis,
            detail: d,
        },
    })
}
