//! Exercises: a lesson step may ask the learner a question, and the **simulator** answers it.
//!
//! Nothing here stores an answer. [`check_answer`] runs the step on the model
//! ([`super::run::run_step`], i.e. [`crate::sim::exec::execute`]) and compares:
//!
//! | kind | question | the model's answer |
//! |------|----------|--------------------|
//! | [`ExerciseKind::Wavefronts`] | how many wavefronts will this request take (under `layout`)? | the request's wavefronts |
//! | [`ExerciseKind::Conflicts`] | how many bank conflicts? | wavefronts − ideal |
//! | [`ExerciseKind::ConflictFree`] | which layout makes this access conflict-free? | any layout string under which the step runs with 0 conflicts (the lesson's layouts are offered) |
//! | [`ExerciseKind::Swizzle`] | pick the swizzle (`swizzle:B,M,S` or `Swizzle<B,M,S>`) | any swizzle under which the step runs with 0 conflicts |
//! | [`ExerciseKind::LaneOf`] | which lane holds element (row, col) of the tile / of mma operand A, B or C? | the lane(s) whose registers hold it after the step ([`super::run::StepRun::regs`]) |
//!
//! A wrong answer comes with an explanation built from the model's report: the worst bank and
//! the lanes fighting over it, the layout's counts, the lane's groupID and threadID_in_group.
//! Progress (which exercises were answered right) is kept by [`super::progress`], not here:
//! this module does no I/O.

use super::run::{Holder, StepRun, run_step};
use super::{Lesson, LessonError, LessonLayout, StepOp};
use crate::sim::bank::{NUM_BANKS, RequestReport, WARP_SIZE};
use crate::sim::mma::Operand;

/// What a step asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exercise {
    /// The kind of question (and so how the model answers it).
    pub kind: ExerciseKind,
    /// The question as the learner reads it (Markdown, one paragraph).
    pub question: String,
    /// Index into [`Lesson::layouts`] the question is asked under (wavefronts, conflicts,
    /// lane_of); default 0.
    pub layout: usize,
    /// Shown with a wrong answer, after the model's explanation (may be empty).
    pub hint: String,
    /// The part of the step's explanation that states the answer (Markdown, may be empty):
    /// shown, like the step's numbers, only once the question is answered or revealed
    /// (`lessons show --answers`, the TUI after an answer or `r`, the export's
    /// `<details data-reveal>`). The step's `note` holds the rest, which any reader sees.
    pub explanation: String,
}

/// The kinds of question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExerciseKind {
    /// "How many wavefronts will this request take?" Answer: a whole number.
    Wavefronts,
    /// "How many bank conflicts?" Answer: a whole number.
    Conflicts,
    /// "Which layout makes this access conflict-free?" Answer: a layout string.
    ConflictFree,
    /// "Pick the swizzle": answer `swizzle:B,M,S` or `Swizzle<B,M,S>`.
    Swizzle,
    /// "Which lane holds element (row, col)?" of the step's tile, or of an mma operand.
    LaneOf {
        /// The mma operand (mma steps); `None`: the step's tile.
        operand: Option<Operand>,
        /// Row, in elements.
        row: u32,
        /// Column, in elements.
        col: u32,
    },
}

impl ExerciseKind {
    /// The name used in lesson files (`kind = "..."`).
    pub fn name(&self) -> &'static str {
        match self {
            ExerciseKind::Wavefronts => "wavefronts",
            ExerciseKind::Conflicts => "conflicts",
            ExerciseKind::ConflictFree => "conflict_free",
            ExerciseKind::Swizzle => "swizzle",
            ExerciseKind::LaneOf { .. } => "lane_of",
        }
    }

    /// What an answer looks like, without an example (an example could be a step's answer:
    /// [`answer_prompt`] adds one that is not).
    pub fn answer_form(&self) -> &'static str {
        match self {
            ExerciseKind::Wavefronts | ExerciseKind::Conflicts => "a whole number",
            ExerciseKind::ConflictFree => {
                "a layout (row | col | trans | pad:N | swizzle:B,M,S, combined with '+')"
            }
            ExerciseKind::Swizzle => "a swizzle (swizzle:B,M,S or Swizzle<B,M,S>)",
            ExerciseKind::LaneOf { .. } => "a lane number 0-31",
        }
    }

    /// Examples of an answer of this kind, offered in turn by [`answer_example`] (which skips
    /// the ones that answer the step); none for a lane (the range says it).
    fn examples(&self) -> &'static [&'static str] {
        match self {
            ExerciseKind::Wavefronts | ExerciseKind::Conflicts => {
                &["4", "3", "6", "2", "5", "8", "7", "16"]
            }
            ExerciseKind::ConflictFree => &[
                "row",
                "pad:8",
                "swizzle:3,3,3",
                "pad:1",
                "swizzle:2,3,3",
                "pad:4",
                "row+pad:2",
            ],
            ExerciseKind::Swizzle => &[
                "swizzle:3,3,3",
                "swizzle:2,3,3",
                "swizzle:3,4,3",
                "swizzle:2,4,3",
                "swizzle:1,3,3",
                "swizzle:3,3,4",
                "swizzle:2,2,3",
            ],
            ExerciseKind::LaneOf { .. } => &[],
        }
    }
}

/// An example answer to the question of step `step` (an index into [`Lesson::steps`]) that
/// the simulator does **not** accept (issue #26: "e.g. 4" printed beside a question whose
/// answer is 4): the kind's examples are tried from a place that depends on the lesson and
/// the step (so the example shown does not single out the answer by always skipping it), and
/// the first that is well-formed, runs and is wrong is taken. `None` for a lane question, for
/// a step that asks nothing, or when every example is right.
pub fn answer_example(lesson: &Lesson, step: usize) -> Option<String> {
    let ex = lesson.steps.get(step)?.exercise.as_ref()?;
    let list = ex.kind.examples();
    if list.is_empty() {
        return None;
    }
    let start = lesson
        .name
        .bytes()
        .fold(step * 7, |h, b| h.wrapping_mul(31).wrapping_add(b as usize))
        % list.len();
    (0..list.len())
        .map(|i| list[(start + i) % list.len()])
        .find(|cand| {
            let wrong = check(lesson, step, cand).is_ok_and(|v| !v.correct);
            // A layout the step cannot run under is wrong, but a puzzling example.
            let runs = !matches!(ex.kind, ExerciseKind::ConflictFree | ExerciseKind::Swizzle)
                || run_under(lesson, step, cand, &ex.kind).is_ok_and(|r| r.is_ok());
            wrong && runs
        })
        .map(str::to_string)
}

/// What an answer to step `step`'s question looks like, with an example that is not its
/// answer ([`answer_example`]): "a whole number, e.g. 3", "a swizzle (…), e.g. swizzle:2,3,3
/// or Swizzle<2,3,3>". Printed with the question (`lessons show`, the TUI, the export) and in
/// the error for an answer of the wrong form.
pub fn answer_prompt(lesson: &Lesson, step: usize) -> String {
    let Some(ex) = lesson.steps.get(step).and_then(|s| s.exercise.as_ref()) else {
        return String::new();
    };
    let form = ex.kind.answer_form();
    match (answer_example(lesson, step), &ex.kind) {
        (Some(e), ExerciseKind::Swizzle) => {
            let bms = e.strip_prefix("swizzle:").unwrap_or(&e);
            format!("a swizzle, e.g. {e} or Swizzle<{bms}>")
        }
        (Some(e), ExerciseKind::ConflictFree) => format!("a layout, e.g. {e}"),
        (Some(e), _) => format!("{form}, e.g. {e}"),
        (None, _) => form.to_string(),
    }
}

/// The outcome of one answer.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    /// Whether the model agrees with the answer.
    pub correct: bool,
    /// The answer as understood (trimmed; `Swizzle<3,3,3>` as `swizzle:3,3,3`).
    pub answer: String,
    /// The model's answer in words (`32`, `pad:1 (of the lesson's layouts)`, `lane 6`).
    pub expected: String,
    /// Why: the model's numbers for the answer given and for the right one, one paragraph.
    pub explanation: String,
}

/// Errors of [`check_answer`]: the question cannot be asked, or the answer has the wrong form.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ExerciseError {
    /// The step asks no question.
    #[error("step {step} of lesson '{lesson}' has no exercise; steps with one: {with}")]
    NoExercise {
        /// Lesson name.
        lesson: String,
        /// 1-based step number as given.
        step: usize,
        /// The steps that have one, comma-separated (1-based), or "none".
        with: String,
    },
    /// The answer is not of the form the question takes.
    #[error("answer '{answer}' is not {form}{why}")]
    BadAnswer {
        /// The answer given.
        answer: String,
        /// What is allowed ([`answer_prompt`] from [`check_answer`]).
        form: String,
        /// Details (e.g. the layout parser's reason), starting with "; " when present.
        why: String,
    },
    /// Running the step failed (a lesson that did not validate).
    #[error("{0}")]
    Lesson(#[from] LessonError),
}

/// `Swizzle<B,M,S>` (any case) → `swizzle:B,M,S`; other strings trimmed.
fn normalize_layout(s: &str) -> String {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    if let Some(inner) = lower
        .strip_prefix("swizzle<")
        .and_then(|r| r.strip_suffix('>'))
    {
        return format!("swizzle:{}", inner.replace(' ', ""));
    }
    t.to_string()
}

fn parse_count(answer: &str, kind: &ExerciseKind) -> Result<u32, ExerciseError> {
    let t = answer.trim();
    t.parse::<u32>().map_err(|_| {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let why = if digits(t) {
            format!("; it is larger than {}", u32::MAX)
        } else if t.strip_prefix('-').is_some_and(digits) {
            "; a count is never negative".to_string()
        } else {
            String::new()
        };
        ExerciseError::BadAnswer {
            answer: answer.to_string(),
            form: kind.answer_form().to_string(),
            why,
        }
    })
}

fn parse_lane(answer: &str, kind: &ExerciseKind) -> Result<u32, ExerciseError> {
    let t = answer.trim().to_ascii_lowercase();
    let t = t.strip_prefix("lane").unwrap_or(&t).trim();
    match t.parse::<u32>() {
        Ok(l) if l < WARP_SIZE as u32 => Ok(l),
        _ => Err(ExerciseError::BadAnswer {
            answer: answer.to_string(),
            form: kind.answer_form().to_string(),
            why: String::new(),
        }),
    }
}

/// Runs step `step` of `lesson` under the layout string `spec` (one of the lesson's, or any
/// other: the lesson is re-laid with that one layout). `Ok(Err(reason))` when the step cannot
/// run under it (an access that is not contiguous, a tile that no longer fits).
///
/// # Errors
/// [`ExerciseError::BadAnswer`] when `spec` is not a layout for the step's tile.
pub fn run_under(
    lesson: &Lesson,
    step: usize,
    spec: &str,
    kind: &ExerciseKind,
) -> Result<Result<StepRun, String>, ExerciseError> {
    if let Some(i) = lesson.layouts.iter().position(|l| l.spec == spec) {
        return Ok(run_step(lesson, step, i).map_err(|e| e.to_string()));
    }
    if let StepOp::Shared { tile, .. } = &lesson.steps[step].op {
        let t = &lesson.tiles[*tile];
        crate::sim::layout::Layout::parse(spec, t.rows, t.cols, t.elem_bytes).map_err(|e| {
            ExerciseError::BadAnswer {
                answer: spec.to_string(),
                form: kind.answer_form().to_string(),
                why: format!("; {e}"),
            }
        })?;
    }
    let message = |e: LessonError| match e {
        LessonError::Invalid { message, .. } => message,
        e => e.to_string(),
    };
    let mut other = lesson.clone();
    other.layouts = match LessonLayout::place(&lesson.tiles, spec, &lesson.source) {
        Ok(l) => vec![l],
        Err(e) => return Ok(Err(message(e))),
    };
    Ok(run_step(&other, step, 0).map_err(message))
}

/// One sentence on why `rep` costs what it does: its phases and its worst bank.
pub fn why_cost(rep: &RequestReport, offsets: &[u32; WARP_SIZE]) -> String {
    let (w, ideal) = (rep.wavefront_count(), rep.ideal());
    // One phase (every access of 4 bytes or less) is the whole warp: say so without the word,
    // which the first lessons have not introduced yet.
    let one = rep.units.len() == 1;
    let phases = format!("{} phases", rep.units.len());
    let deg = rep.bank_degree();
    let (bank, way) = deg
        .iter()
        .enumerate()
        .max_by_key(|&(b, d)| (*d, std::cmp::Reverse(b)))
        .map(|(b, d)| (b, *d))
        .unwrap_or((0, 0));
    if way <= 1 {
        if one {
            return format!(
                "{w} wavefront{}: the whole warp is served in one pass, each bank asked for at most one distinct 4-byte word: no bank conflict",
                if w == 1 { "" } else { "s" }
            );
        }
        return format!(
            "{w} wavefront{} = {phases}, each bank asked for at most one distinct 4-byte word per phase: no bank conflict",
            if w == 1 { "" } else { "s" }
        );
    }
    let mut lanes: Vec<usize> = (0..WARP_SIZE)
        .filter(|&l| rep.active_mask >> l & 1 == 1 && (offsets[l] / 4) as usize % NUM_BANKS == bank)
        .collect();
    let more = lanes.len() > 6;
    lanes.truncate(6);
    let list = lanes
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let (whole, within) = if one {
        (format!("where {ideal} would do"), "")
    } else {
        (format!("for {phases} (ideal {ideal})"), " within one phase")
    };
    format!(
        "{w} wavefronts {whole}: bank {bank} is asked for {way} different 4-byte words{within} (lanes {list}{}), and a bank delivers one word per wavefront: {} bank conflict{}",
        if more { ", …" } else { "" },
        w - ideal,
        if w - ideal == 1 { "" } else { "s" }
    )
}

fn counts_of(run: &StepRun) -> Option<(u32, u32, String)> {
    let rep = run.report.as_ref()?;
    let req = run.request.as_ref()?;
    Some((
        rep.wavefront_count(),
        rep.bank_conflicts(),
        why_cost(rep, &req.lane_byte_offsets),
    ))
}

/// The steps (1-based, in the order of variant 0, then the others' own steps) that ask a
/// question, as "2, 5" or "none".
/// The lesson's layouts under which `step` runs without a bank conflict, in lesson order; for a
/// [`ExerciseKind::Swizzle`] question only the swizzles among them.
fn free_layouts<'a>(lesson: &'a Lesson, step: usize, kind: &ExerciseKind) -> Vec<&'a str> {
    (0..lesson.layouts.len())
        .filter(|&i| {
            run_step(lesson, step, i)
                .ok()
                .and_then(|r| r.cost)
                .is_some_and(|c| c.bank_conflicts() == 0)
        })
        .map(|i| lesson.layouts[i].spec.as_str())
        .filter(|l| *kind == ExerciseKind::ConflictFree || l.contains("swizzle:"))
        .collect()
}

fn steps_with(lesson: &Lesson) -> String {
    let with: Vec<String> = lesson
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.exercise.is_some())
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    if with.is_empty() {
        "none".into()
    } else {
        crate::text::list(&with)
    }
}

/// The lanes whose registers hold element `(row, col)` of `holder` after `run`, with the
/// register and part: `(lane, reg, half)`.
pub fn holders(run: &StepRun, holder: Holder, row: u32, col: u32) -> Vec<(u32, u32, u32)> {
    run.regs
        .iter()
        .filter(|e| e.holder == holder && e.row == row && e.col == col)
        .map(|e| (e.lane, e.reg, e.half))
        .collect()
}

fn operand_reg_name(op: Option<Operand>, reg: u32) -> String {
    match op {
        Some(Operand::A) => format!("a{reg}"),
        Some(Operand::B) => format!("b{reg}"),
        Some(Operand::C) => format!("c{reg}"),
        None => format!("register {reg}"),
    }
}

/// Checks `answer` to the exercise of step `step` (an index into [`Lesson::steps`]) with the
/// simulator.
///
/// # Errors
/// [`ExerciseError::NoExercise`] when the step asks nothing; [`ExerciseError::BadAnswer`] for
/// an answer of the wrong form (not a number, not a layout, a lane outside 0-31).
pub fn check_answer(lesson: &Lesson, step: usize, answer: &str) -> Result<Verdict, ExerciseError> {
    check(lesson, step, answer).map_err(|e| match e {
        ExerciseError::BadAnswer { answer, form, why } => ExerciseError::BadAnswer {
            answer,
            // The step's own example (never its answer) rather than the kind's bare form;
            // "asked of a shared-memory step" stays.
            form: if form.starts_with("asked") {
                form
            } else {
                answer_prompt(lesson, step)
            },
            why,
        },
        e => e,
    })
}

/// [`check_answer`] with the kind's bare form in its errors ([`answer_example`] calls it).
fn check(lesson: &Lesson, step: usize, answer: &str) -> Result<Verdict, ExerciseError> {
    let ex = lesson
        .steps
        .get(step)
        .and_then(|s| s.exercise.as_ref())
        .ok_or_else(|| ExerciseError::NoExercise {
            lesson: lesson.name.clone(),
            step: step + 1,
            with: steps_with(lesson),
        })?;
    match &ex.kind {
        k @ (ExerciseKind::Wavefronts | ExerciseKind::Conflicts) => {
            check_count(lesson, step, ex, k, answer)
        }
        k @ (ExerciseKind::ConflictFree | ExerciseKind::Swizzle) => {
            check_layout(lesson, step, ex, k, answer)
        }
        k @ ExerciseKind::LaneOf { operand, row, col } => {
            check_lane_of(lesson, step, ex, k, (*operand, *row, *col), answer)
        }
    }
}

/// The verdict on an answer to `ex`; a wrong one's explanation ends with the exercise's hint.
fn verdict(
    ex: &Exercise,
    correct: bool,
    answer: String,
    expected: String,
    explanation: String,
) -> Verdict {
    Verdict {
        correct,
        answer,
        expected,
        explanation: if correct || ex.hint.trim().is_empty() {
            explanation
        } else {
            format!("{explanation}. Hint: {}", ex.hint.trim())
        },
    }
}

/// A [`ExerciseKind::Wavefronts`] or [`ExerciseKind::Conflicts`] question (`k`): the count of
/// the step's request under the exercise's layout.
fn check_count(
    lesson: &Lesson,
    step: usize,
    ex: &Exercise,
    k: &ExerciseKind,
    answer: &str,
) -> Result<Verdict, ExerciseError> {
    let spec = &lesson.layouts[ex.layout];
    let n = parse_count(answer, k)?;
    let run = run_step(lesson, step, ex.layout)?;
    let (w, c, why) = counts_of(&run).ok_or_else(|| ExerciseError::BadAnswer {
        answer: answer.into(),
        form: "asked of a shared-memory step".to_string(),
        why: String::new(),
    })?;
    let wavefronts = *k == ExerciseKind::Wavefronts;
    let want = if wavefronts { w } else { c };
    let what = match (wavefronts, want == 1) {
        (true, true) => "wavefront",
        (true, false) => "wavefronts",
        (false, true) => "bank conflict",
        (false, false) => "bank conflicts",
    };
    let ideal = w - c;
    // The usual slip: the other number of the same request.
    let mixed = match (wavefronts, n) {
        (true, n) if n == c && c != w => format!(
            " ({n} is the number of bank conflicts; wavefronts = bank conflicts + ideal = {c} + {ideal})"
        ),
        (false, n) if n == w && c != w => format!(
            " ({n} is the number of wavefronts; bank conflicts = wavefronts − ideal = {w} − {ideal})"
        ),
        _ => String::new(),
    };
    let head = if n == want {
        format!("Right: {want} {what} under '{spec}'")
    } else {
        format!("Not {n}: the simulator gives {want} {what} under '{spec}'{mixed}")
    };
    Ok(verdict(
        ex,
        n == want,
        n.to_string(),
        want.to_string(),
        format!("{head}. {why}"),
    ))
}

/// A [`ExerciseKind::ConflictFree`] or [`ExerciseKind::Swizzle`] question (`k`): whether the
/// step runs without a bank conflict under the layout answered.
fn check_layout(
    lesson: &Lesson,
    step: usize,
    ex: &Exercise,
    k: &ExerciseKind,
    answer: &str,
) -> Result<Verdict, ExerciseError> {
    let a = normalize_layout(answer);
    if a.is_empty() {
        return Err(ExerciseError::BadAnswer {
            answer: answer.into(),
            form: k.answer_form().to_string(),
            why: String::new(),
        });
    }
    let free = free_layouts(lesson, step, k);
    let expected = if free.is_empty() {
        "a layout with 0 bank conflicts".to_string()
    } else {
        format!("{} (of the lesson's layouts)", crate::text::list(&free))
    };
    let run = match run_under(lesson, step, &a, k)? {
        Ok(r) => r,
        Err(reason) => {
            return Ok(verdict(
                ex,
                false,
                a.clone(),
                expected,
                format!("The step cannot run under '{a}': {reason}"),
            ));
        }
    };
    let (w, c, why) = counts_of(&run).unwrap_or((0, 0, String::new()));
    let is_swizzle = a.contains("swizzle:");
    if *k == ExerciseKind::Swizzle && !is_swizzle {
        let tail = if c == 0 {
            "it removes the conflicts too, but by wasting bytes: the question asks for a swizzle, which moves data instead"
        } else {
            "and it still conflicts"
        };
        return Ok(verdict(
            ex,
            false,
            a.clone(),
            expected,
            format!("'{a}' is not a swizzle ({w} wavefronts, {c} bank conflicts): {tail}"),
        ));
    }
    let correct = c == 0;
    let head = if correct {
        format!(
            "Right: under '{a}' the step takes {w} wavefront{}, no bank conflict",
            if w == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "Not '{a}': the step still has {c} bank conflict{} under it",
            if c == 1 { "" } else { "s" }
        )
    };
    Ok(verdict(ex, correct, a, expected, format!("{head}. {why}")))
}

/// A [`ExerciseKind::LaneOf`] question (`k`, asking for element `(row, col)` of `operand` or
/// of the step's tile): whether the lane answered holds it after the step.
fn check_lane_of(
    lesson: &Lesson,
    step: usize,
    ex: &Exercise,
    k: &ExerciseKind,
    (operand, row, col): (Option<Operand>, u32, u32),
    answer: &str,
) -> Result<Verdict, ExerciseError> {
    let lane = parse_lane(answer, k)?;
    let run = run_step(lesson, step, ex.layout)?;
    let holder = match (operand, &lesson.steps[step].op) {
        (Some(op), _) => Holder::Operand(op),
        (None, StepOp::Shared { tile, .. }) => Holder::Tile(*tile),
        (None, StepOp::Mma { .. }) => Holder::Operand(Operand::A),
    };
    let matrix = match operand {
        Some(op) => op.to_string(),
        None => match holder {
            Holder::Tile(t) => lesson.tiles[t].name.clone(),
            Holder::Operand(op) => op.to_string(),
        },
    };
    let name = format!("{matrix}({row}, {col})");
    let who = holders(&run, holder, row, col);
    // A register holds two elements only for 16-bit data: an f32 element is the whole
    // register, and "low half" would be wrong there.
    let parts = run
        .regs
        .iter()
        .filter(|e| e.holder == holder)
        .map(|e| e.half)
        .max()
        .unwrap_or(0);
    let lanes: Vec<String> = who
        .iter()
        .map(|(l, r, h)| {
            let reg = operand_reg_name(operand, *r);
            match (parts, h) {
                (0, _) => format!("lane {l} ({reg})"),
                (1, 0) => format!("lane {l} ({reg}, low half)"),
                (1, _) => format!("lane {l} ({reg}, high half)"),
                (_, h) => format!("lane {l} ({reg}, byte {h})"),
            }
        })
        .collect();
    let expected = who
        .iter()
        .map(|(l, _, _)| format!("lane {l}"))
        .collect::<Vec<_>>()
        .join(" or ");
    let mma_words = |l: u32| {
        if operand.is_some() {
            format!(
                " (groupID = {l} >> 2 = {}, threadID_in_group = {l} % 4 = {})",
                l >> 2,
                l % 4
            )
        } else {
            String::new()
        }
    };
    let correct = who.iter().any(|(l, _, _)| *l == lane);
    if correct {
        return Ok(verdict(
            ex,
            true,
            format!("lane {lane}"),
            expected,
            format!(
                "Right: {name} is in {}{}",
                lanes.join(" and "),
                mma_words(lane)
            ),
        ));
    }
    let mut held: Vec<String> = run
        .regs
        .iter()
        .filter(|e| e.lane == lane && e.holder == holder)
        .map(|e| format!("{matrix}({}, {})", e.row, e.col))
        .collect();
    held.dedup();
    let truth = who.first().map(|(l, _, _)| *l).unwrap_or(0);
    Ok(verdict(
        ex,
        false,
        format!("lane {lane}"),
        expected,
        format!(
            "Not lane {lane}: it holds {}{}; {name} is in {}{}",
            if held.is_empty() {
                "nothing of it".to_string()
            } else {
                held.join(" ")
            },
            mma_words(lane),
            lanes.join(" and "),
            mma_words(truth)
        ),
    ))
}

/// The simulator's answer to the exercise of step `step`, in words (`32`, `pad:1`,
/// `lane 5 (a1, high half)`), or `None` when the step asks nothing. For layout questions, the
/// lesson's layouts that answer it. Computed, never read from the file.
pub fn model_answer(lesson: &Lesson, step: usize) -> Option<String> {
    let ex = lesson.steps.get(step)?.exercise.as_ref()?;
    match &ex.kind {
        ExerciseKind::Wavefronts | ExerciseKind::Conflicts => {
            let run = run_step(lesson, step, ex.layout).ok()?;
            let (w, c, why) = counts_of(&run)?;
            let n = if ex.kind == ExerciseKind::Wavefronts {
                w
            } else {
                c
            };
            Some(format!("{n}. {why}"))
        }
        ExerciseKind::ConflictFree | ExerciseKind::Swizzle => {
            let free = free_layouts(lesson, step, &ex.kind);
            Some(format!("{} (0 bank conflicts)", free.join(" or ")))
        }
        ExerciseKind::LaneOf { operand, row, col } => {
            let run = run_step(lesson, step, ex.layout).ok()?;
            let holder = match (operand, &lesson.steps[step].op) {
                (Some(op), _) => Holder::Operand(*op),
                (None, StepOp::Shared { tile, .. }) => Holder::Tile(*tile),
                (None, StepOp::Mma { .. }) => return None,
            };
            let lanes: Vec<String> = holders(&run, holder, *row, *col)
                .iter()
                .map(|(l, r, h)| {
                    format!(
                        "lane {l} ({}, {} half)",
                        operand_reg_name(*operand, *r),
                        if *h == 0 { "low" } else { "high" }
                    )
                })
                .collect();
            Some(lanes.join(" and "))
        }
    }
}

/// Checks that the model can answer the exercise of step `step`: its layout runs, a
/// conflict_free question has both a conflicting and a conflict-free layout among the lesson's,
/// a swizzle question has a conflicting first layout and a conflict-free swizzle among the
/// lesson's, a lane_of element is held by some lane. `Err` is the rule broken (the loader names
/// the file and field).
pub fn validate(lesson: &Lesson, step: usize) -> Result<(), String> {
    let Some(ex) = &lesson.steps[step].exercise else {
        return Ok(());
    };
    let conflicts = |i: usize| {
        run_step(lesson, step, i)
            .ok()
            .and_then(|r| r.cost)
            .map(|c| c.bank_conflicts())
    };
    match &ex.kind {
        ExerciseKind::Wavefronts | ExerciseKind::Conflicts => Ok(()),
        ExerciseKind::ConflictFree => {
            let all: Vec<Option<u32>> = (0..lesson.layouts.len()).map(conflicts).collect();
            if !all.contains(&Some(0)) || !all.iter().any(|c| c.is_some_and(|c| c > 0)) {
                let given = lesson.layouts.iter().zip(&all).map(|(l, c)| match c {
                    Some(c) => format!("{l}: {c}"),
                    None => format!("{l}: not modelled"),
                });
                return Err(format!(
                    "a conflict_free question needs a layout with and one without bank conflicts among the lesson's layouts; the model gives bank conflicts {}",
                    crate::text::list(given)
                ));
            }
            Ok(())
        }
        ExerciseKind::Swizzle => {
            let ok = (0..lesson.layouts.len())
                .any(|i| lesson.layouts[i].spec.contains("swizzle:") && conflicts(i) == Some(0));
            if !ok || conflicts(0).unwrap_or(0) == 0 {
                return Err(format!(
                    "a swizzle question needs conflicts under the first layout and a conflict-free swizzle among the lesson's layouts ({})",
                    crate::text::list(&lesson.layouts)
                ));
            }
            Ok(())
        }
        ExerciseKind::LaneOf { operand, row, col } => {
            let run = run_step(lesson, step, ex.layout).map_err(|e| e.to_string())?;
            let holder = match (operand, &lesson.steps[step].op) {
                (Some(op), _) => Holder::Operand(*op),
                (None, StepOp::Shared { tile, .. }) => Holder::Tile(*tile),
                (None, StepOp::Mma { .. }) => {
                    return Err(
                        "a lane_of question on an mma step names operand = \"A\" | \"B\" | \"C\""
                            .into(),
                    );
                }
            };
            if holders(&run, holder, *row, *col).is_empty() {
                return Err(format!(
                    "no lane holds element ({row}, {col}) after this step; pick one the step loads"
                ));
            }
            Ok(())
        }
    }
}
