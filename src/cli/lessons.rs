//! `tilelab lessons`: list, show, check the lessons and print their kernels.
//!
//! * `tilelab lessons [--json]`: the list, in curriculum order;
//! * `tilelab lessons show NAME [--step N] [--layout L] [--variant V] [--answers] [--json]
//!   [--svg FILE]`: the narrative and every step's numbers per layout; with `--step`, the lanes
//!   of that step. A step that asks a question keeps its numbers (they are the answer) and
//!   the explanation of its answer (`[steps.exercise] explanation`) to itself unless
//!   `--answers`: `?` in the table, a line saying the explanation is hidden, no `results` and
//!   no `exercise.explanation` in `--json` (`"answers_hidden": true`), no lanes, no picture;
//!   `--svg FILE` draws step N (default 1) as a picture: the bank grid for shared-memory steps,
//!   the fragment map for ldmatrix and mma steps (both for ldmatrix);
//! * `tilelab lessons check [NAME]… [--hw FILE] [--json]` (prints the lessons' own numbers, and so
//!   the answers to their questions): every expected number against the
//!   simulator, kernel-level `[[model]]` claims against the counts model (exit 1 on a
//!   mismatch); `measured` links are checked against the built-in H200 records, or `--hw FILE`.
//!   Each check carries its basis (`--json`: `"basis"`): `simulator`, `measured`, `model` test
//!   the model; `arithmetic` (an article's formula re-evaluated) and `consistency` (a lesson's
//!   SASS table against its own steps) do not, and the summary counts them apart;
//! * `tilelab lessons kernel NAME`: the lesson's CUDA C kernel (`kernels/lesson_NAME.cu`);
//!   with `--json`, `{name, kernel, kernel_function, source}`.
//!
//! `--dir DIR` loads lessons from DIR instead of the built-in set (for lesson authors).
//!
//! `--json` of the list prints an array of `{name, title, summary, claims, kernel, kernel_function,
//! layouts, variants, steps, source}`; of `show`, `{name, title, narrative, layouts, variants,
//! steps: [{index, title, note, exercise: {kind, question, layout, answer_form, explanation},
//! instruction, sass, variant, results: {LAYOUT: {wavefronts, conflicts, ideal}}}]}` (`exercise`
//! only for a step that asks, its `explanation` only with `--answers`); with `--step`, also `lanes: [{lane, row, col, byte_offset, bank, wavefronts}]`
//! for the step under `--layout`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;
use tilelab::lessons::run::{CheckStatus, StepRun, check_lesson, run_step};
use tilelab::lessons::{self, Lesson, LessonLayout};

use super::out;

/// Arguments of `tilelab lessons`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  tilelab lessons\n  tilelab lessons show swizzle --step 1 --layout swizzle:3,3,3\n  tilelab lessons show ldmatrix --step 2 --svg ldmatrix.svg --answers   # the picture shows the answer\n  tilelab lessons check\n  tilelab tui banks"
)]
pub struct LessonsArgs {
    /// Print the result of the subcommand as JSON instead of text (the lesson list, a step,
    /// the checks, an answer, progress, a kernel's source with its file name).
    #[arg(long, global = true)]
    pub json: bool,
    /// Load lessons from DIR (*.toml) instead of the built-in ones.
    #[arg(long, global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    #[command(subcommand)]
    pub cmd: Option<LessonsCmd>,
}

/// `tilelab lessons …` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum LessonsCmd {
    /// The narrative and every step of a lesson, with wavefronts and conflicts per layout.
    Show(ShowArgs),
    /// Check every expected number of the lessons against the simulator (exit 1 on a mismatch);
    /// it prints those numbers, so the answers to the lessons' questions too.
    Check(CheckArgs),
    /// Print a lesson's CUDA C kernel (the text of kernels/lesson_NAME.cu).
    Kernel {
        /// Lesson name.
        name: String,
    },
    /// Answer a step's question; the simulator checks it (exit 0 right, 1 wrong) and your progress is saved.
    Answer(AnswerArgs),
    /// Which exercises you have answered right (kept in $XDG_DATA_HOME/tilelab/progress.json).
    Progress(ProgressArgs),
    /// Write a lesson as a self-contained web page (inline SVG, a small script, no network).
    Export(ExportArgs),
}

/// Arguments of `tilelab lessons export`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  tilelab lessons export warps-and-banks --html site/\n  tilelab lessons export fa2-counts --variant triton --html site/\n  tilelab lessons export --all --html site/"
)]
pub struct ExportArgs {
    /// Lesson name (see `tilelab lessons`).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub name: Option<String>,
    /// Every lesson, one page each (their first variants).
    #[arg(long, conflicts_with = "variant")]
    pub all: bool,
    /// Directory to write LESSON.html into (created if missing).
    #[arg(long, value_name = "DIR", required = true)]
    pub html: PathBuf,
    /// Variant whose steps the page walks through (default the first).
    #[arg(long, value_name = "VARIANT")]
    pub variant: Option<String>,
}

/// Arguments of `tilelab lessons answer`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples (the answers here are not all right: the simulator says which, and why):\n  tilelab lessons answer warps-and-banks 3 row\n  tilelab lessons answer mma 3 12         # which lane holds A(9, 3)?\n  tilelab lessons answer swizzle 1 'Swizzle<2,3,3>'"
)]
pub struct AnswerArgs {
    /// Lesson name (see `tilelab lessons`).
    pub name: String,
    /// Step number (1-based, as `tilelab lessons show` numbers them).
    #[arg(value_parser = super::whole::<usize>("1..=the lesson's number of steps"))]
    pub step: usize,
    /// Your answer: a number, a layout (row, pad:8, swizzle:3,3,3) or a lane, as the question asks.
    #[arg(allow_negative_numbers = true)]
    pub answer: String,
    /// Variant whose steps are numbered (default the first).
    #[arg(long, value_name = "VARIANT")]
    pub variant: Option<String>,
}

/// Arguments of `tilelab lessons progress`.
#[derive(clap::Args, Debug)]
pub struct ProgressArgs {
    /// Forget every answer (removes the progress file).
    #[arg(long)]
    pub reset: bool,
}

/// Arguments of `tilelab lessons show`.
#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// Lesson name (see `tilelab lessons`).
    pub name: String,
    /// Show the lanes of step N (1-based).
    #[arg(long, value_name = "N", value_parser = super::whole::<usize>("1..=the lesson's number of steps"))]
    pub step: Option<usize>,
    /// Layout for --step and --svg (one of the lesson's layouts; default its first).
    #[arg(long, value_name = "LAYOUT")]
    pub layout: Option<String>,
    /// Variant whose steps are listed (e.g. torch or triton; default the first).
    #[arg(long, value_name = "VARIANT")]
    pub variant: Option<String>,
    /// Write an SVG picture of step N (default 1): bank grid and/or fragment map.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Also show the numbers of the steps that ask a question (they are their answers): without
    /// it such a step's wavefronts and conflicts print as `?`, the explanation of its answer is
    /// left out, its lanes (--step) too and its picture (--svg) is refused.
    #[arg(long)]
    pub answers: bool,
}

/// Arguments of `tilelab lessons check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Lessons to check (default: all).
    pub names: Vec<String>,
    /// Hardware records to check `measured` links against (default: the built-in H200 records,
    /// tests/data/h200_wavefronts.json).
    #[arg(long, value_name = "FILE")]
    pub hw: Option<PathBuf>,
}

/// Loads the built-in lessons, or those of `dir`.
pub fn load(dir: Option<&PathBuf>) -> anyhow::Result<Vec<Lesson>> {
    Ok(match dir {
        Some(d) => lessons::load_dir(d)?,
        None => lessons::builtin()?,
    })
}

/// `lessons kernel NAME --json`.
#[derive(Serialize)]
struct KernelJson<'a> {
    name: &'a str,
    /// The file the source is kept in, relative to the repository root.
    kernel: &'a str,
    kernel_function: String,
    /// The CUDA C source.
    source: &'a str,
}

#[derive(Serialize)]
struct ListItem<'a> {
    name: &'a str,
    title: &'a str,
    summary: &'a str,
    claims: &'a [String],
    kernel: &'a str,
    kernel_function: String,
    layouts: &'a [LessonLayout],
    variants: &'a [String],
    steps: usize,
    source: &'a str,
}

pub fn run(a: LessonsArgs) -> anyhow::Result<ExitCode> {
    let all = load(a.dir.as_ref())?;
    match a.cmd {
        None => list(&all, a.json),
        Some(LessonsCmd::Show(s)) => show(&all, s, a.json),
        Some(LessonsCmd::Check(c)) => check(&all, c, a.json),
        Some(LessonsCmd::Answer(x)) => answer(&all, x, a.json),
        Some(LessonsCmd::Progress(p)) => progress(&all, p, a.json),
        Some(LessonsCmd::Export(x)) => export(&all, x, a.json),
        Some(LessonsCmd::Kernel { name }) => {
            let l = lessons::find(&all, &name)?;
            let source = tilelab::gpu::source::lesson::kernel_source(l);
            if a.json {
                out::emit_json(&KernelJson {
                    name: &l.name,
                    kernel: &l.kernel,
                    kernel_function: l.kernel_function(),
                    source: &source,
                })?;
            } else {
                out::emit(&source)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn list(all: &[Lesson], json: bool) -> anyhow::Result<ExitCode> {
    if json {
        let items: Vec<ListItem> = all
            .iter()
            .map(|l| ListItem {
                name: &l.name,
                title: &l.title,
                summary: &l.summary,
                claims: &l.claims,
                kernel: &l.kernel,
                kernel_function: l.kernel_function(),
                layouts: &l.layouts,
                variants: &l.variants,
                steps: l.steps.len(),
                source: &l.source,
            })
            .collect();
        out::emit_json(&items)?;
        return Ok(ExitCode::SUCCESS);
    }
    let w = out::column_width(all.iter().map(|l| l.name.as_str()), 4, out::NAME_MAX);
    let mut o = String::new();
    outln!(
        o,
        "{}",
        out::bold(&format!("{:>2}  {:w$}  {:>5}  title", "#", "name", "steps"))
    );
    for (i, l) in all.iter().enumerate() {
        outln!(
            o,
            "{:>2}  {:w$}  {:>5}  {}",
            i + 1,
            out::clip(&l.name, out::NAME_MAX),
            l.steps.len(),
            l.title
        );
        outln!(o, "{:>2}  {:w$}  {:>5}  {}", "", "", "", l.summary);
    }
    outln!(
        o,
        "\nStart one with `tilelab tui NAME` (or `tilelab tui` to pick); print one with `tilelab lessons show NAME`."
    );
    out::emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct StepResult {
    wavefronts: u32,
    conflicts: u32,
    ideal: u32,
}

/// A step's question as `show --json` lists it (never its answer: the simulator computes that
/// when the learner answers).
#[derive(Serialize)]
struct ExerciseJson {
    kind: &'static str,
    question: String,
    /// The layout the question is asked under.
    layout: String,
    /// What an answer looks like, with an example that is not the step's answer.
    answer_form: String,
    /// The part of the step's explanation that gives the answer (`[steps.exercise]
    /// explanation`): only with `--answers`, like the step's numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    explanation: Option<String>,
    /// The question has an explanation that `--answers` would show (the text says so; the
    /// JSON's `answers_hidden` already does).
    #[serde(skip)]
    explanation_hidden: bool,
}

/// `hidden`: the step's answer is kept from the reader (no `--answers`), so is the explanation.
fn exercise_json(
    l: &Lesson,
    si: usize,
    ex: &tilelab::lessons::exercise::Exercise,
    hidden: bool,
) -> ExerciseJson {
    let has = !ex.explanation.trim().is_empty();
    ExerciseJson {
        kind: ex.kind.name(),
        question: ex.question.trim().to_string(),
        layout: l.layouts[ex.layout].spec.clone(),
        answer_form: tilelab::lessons::exercise::answer_prompt(l, si),
        explanation: (has && !hidden).then(|| ex.explanation.trim().to_string()),
        explanation_hidden: has && hidden,
    }
}

#[derive(Serialize)]
struct StepJson {
    index: usize,
    title: String,
    /// The step's explanation (Markdown), as the TUI's narrative pane shows it.
    note: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    exercise: Option<ExerciseJson>,
    instruction: String,
    sass: String,
    variant: Option<String>,
    /// Per layout; empty for a step that asks a question, unless `--answers`.
    results: BTreeMap<String, StepResult>,
    /// The step asks a question and its numbers are left out (no `--answers`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    answers_hidden: bool,
}

#[derive(Serialize)]
struct ShowJson<'a> {
    name: &'a str,
    title: &'a str,
    narrative: &'a str,
    layouts: &'a [LessonLayout],
    variants: &'a [String],
    steps: Vec<StepJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lanes: Option<Vec<out::LaneRow>>,
    /// The articles and papers the lesson cites, in full.
    sources: Vec<tilelab::sources::Source>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ptx: Vec<PtxJson>,
}

/// A `[[ptx]]` part as `lessons show` prints it.
#[derive(serde::Serialize)]
struct PtxJson {
    label: String,
    launch: String,
    module: String,
    note: String,
    /// The flags of `tilelab ptx` / `tilelab tui --ptx` / `tilelab verify --ptx`.
    flags: String,
    /// The counters the lesson states (measured on the H200).
    counters: BTreeMap<String, u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<[u64; 4]>,
}

/// The one rule for a picture (`lessons show --svg`, `tui --svg`) of step `n` (1-based, of
/// variant `vi`): a step that asks a question is drawn only with `--answers` (`answers`), as
/// its picture (the request's wavefronts and conflicts in the title, the lanes of a fragment)
/// is the answer.
///
/// # Errors
/// The step asks a question and `answers` is false, or `n` is not a step.
pub fn refuse_question_svg(l: &Lesson, vi: usize, n: usize, answers: bool) -> anyhow::Result<()> {
    if !answers && l.steps[l.step_index(vi, n)?].exercise.is_some() {
        anyhow::bail!(
            "step {n} of lesson '{}' asks a question, and its picture shows the answer: answer it first (tilelab lessons answer {} {n} ANSWER), then add --answers to draw it",
            l.name,
            l.name,
        );
    }
    Ok(())
}

fn show(all: &[Lesson], a: ShowArgs, json: bool) -> anyhow::Result<ExitCode> {
    let l = lessons::find(all, &a.name)?;
    let li = l.layout_index(a.layout.as_deref())?;
    let vi = l.variant_index(a.variant.as_deref())?;
    // The step `--step` (or `--svg`, step 1 by default) shows: its run under `--layout` is kept
    // from the one pass over every step and layout.
    let selected = match (a.step, &a.svg) {
        (Some(n), _) => Some(l.step_index(vi, n)?),
        (None, Some(_)) => Some(l.step_index(vi, 1)?),
        (None, None) => None,
    };
    let (steps, selected_run) = show_steps(l, vi, selected.map(|si| (si, li)), a.answers)?;
    // `--step N` / `--svg` of a step whose question is not to be answered for the reader.
    let lanes_hidden = match a.step {
        Some(n) => !a.answers && l.steps[l.step_index(vi, n)?].exercise.is_some(),
        None => false,
    };
    if a.svg.is_some() {
        refuse_question_svg(l, vi, a.step.unwrap_or(1), a.answers)?;
    }
    let lanes = match (a.step, &selected_run) {
        (Some(_), Some(run)) if !lanes_hidden => lane_rows(run),
        _ => None,
    };
    if let (Some(path), Some(run)) = (&a.svg, &selected_run) {
        let svg = tilelab::viz::lesson::step_svg(l, run);
        std::fs::write(path, svg)
            .with_context(|| format!("cannot write SVG file '{}'", tilelab::text::path(path)))?;
        out::note(format_args!("wrote {}", tilelab::text::path(path)));
    }
    let ptx = ptx_parts(l)?;
    if json {
        out::emit_json(&ShowJson {
            name: &l.name,
            title: &l.title,
            narrative: &l.narrative,
            layouts: &l.layouts,
            variants: &l.variants,
            steps,
            lanes,
            sources: l.cited_sources(),
            ptx,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    print_header(&mut o, l, vi);
    print_steps(&mut o, l, &steps, a.answers);
    print_sources_and_ptx(&mut o, l, vi, &ptx);
    let n = a.step.unwrap_or(1);
    if lanes_hidden {
        outln!(
            o,
            "\nstep {n} asks a question: its lanes are left out, they show the answer; answer it (tilelab lessons answer {} {n} ANSWER) or add --answers",
            l.name
        );
    }
    if let (Some(lanes), Some(run)) = (lanes, &selected_run) {
        print_lanes(&mut o, n, &l.layouts[li].spec, lanes, run);
    }
    out::emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

/// Every step of variant `vi`, run once under every layout: their rows of `show`, and the run of
/// `selected` (step index, layout index) when asked for. A step that asks a question keeps its
/// numbers to itself unless `answers`.
fn show_steps(
    l: &Lesson,
    vi: usize,
    selected: Option<(usize, usize)>,
    answers: bool,
) -> anyhow::Result<(Vec<StepJson>, Option<StepRun>)> {
    let mut selected_run = None;
    let mut steps = Vec::new();
    for (n, &si) in l.steps_of(vi).iter().enumerate() {
        let st = &l.steps[si];
        let mut results = BTreeMap::new();
        let hidden = st.exercise.is_some() && !answers;
        for (lj, layout) in l.layouts.iter().enumerate() {
            let run = run_step(l, si, lj)?;
            let cost = run.cost;
            if selected == Some((si, lj)) {
                selected_run = Some(run);
            }
            if let (false, Some(cost)) = (hidden, cost) {
                results.insert(
                    layout.spec.clone(),
                    StepResult {
                        wavefronts: cost.wavefronts,
                        conflicts: cost.bank_conflicts(),
                        ideal: cost.ideal,
                    },
                );
            }
        }
        steps.push(StepJson {
            index: n + 1,
            title: st.title.clone(),
            note: st.note.trim().to_string(),
            exercise: st
                .exercise
                .as_ref()
                .map(|e| exercise_json(l, si, e, hidden)),
            instruction: st.op_name(),
            sass: st.sass().to_string(),
            variant: st.variant.clone(),
            results,
            answers_hidden: hidden,
        });
    }
    Ok((steps, selected_run))
}

/// The lanes of a shared-memory step's request (`None`: the step is an mma).
fn lane_rows(run: &StepRun) -> Option<Vec<out::LaneRow>> {
    let (req, rep) = (run.request.as_ref()?, run.report.as_ref()?);
    Some(out::LaneRow::rows(&run.coords, &req.lane_byte_offsets, rep))
}

/// The lesson's `[[ptx]]` parts, resolved to the module and flags to run them with.
fn ptx_parts(l: &Lesson) -> anyhow::Result<Vec<PtxJson>> {
    let mut parts = Vec::new();
    for p in &l.ptx {
        let r = p
            .resolve()
            .map_err(|e| anyhow::anyhow!("lesson {}: ptx '{}': {e}", l.name, p.label))?;
        parts.push(PtxJson {
            label: p.label.clone(),
            launch: p.launch.clone(),
            module: r.ptx_path.clone(),
            note: p.note.trim().to_string(),
            flags: r.flags(),
            counters: p.counters.clone(),
            line: p
                .line
                .as_ref()
                .map(|x| [u64::from(x.line), x.executions, x.wavefronts, x.conflicts]),
        });
    }
    Ok(parts)
}

/// Title, summary, narrative and the variant line of `show`.
fn print_header(o: &mut String, l: &Lesson, vi: usize) {
    outln!(o, "{}", out::bold(&format!("{} ({})", l.title, l.name)));
    outln!(o, "{}\n", l.summary);
    outln!(o, "{}", l.narrative.trim());
    outln!(o);
    if l.variants.len() > 1 {
        outln!(
            o,
            "variant: {} (of {})",
            l.variants[vi],
            l.variants.join(", ")
        );
    }
}

/// The steps table of `show`: per layout wavefronts / conflicts (`?` for a question kept from
/// the reader), each step's note, question and (with `answers`) the explanation of its answer.
fn print_steps(o: &mut String, l: &Lesson, steps: &[StepJson], answers: bool) {
    let cols: Vec<String> = l
        .layouts
        .iter()
        .map(|s| format!(" {:>16}", format!("{s} wf/cf")))
        .collect();
    outln!(
        o,
        "steps: per layout, wf/cf = wavefronts / bank conflicts of the step's request (`tilelab explain wavefront`){}",
        if !answers && steps.iter().any(|s| s.answers_hidden) {
            "; ? = a step that asks a question (its numbers are the answer: --answers shows them, and why)"
        } else {
            ""
        }
    );
    outln!(
        o,
        "{}",
        out::bold(&format!(
            "{:>2}  {:18} {:16} {}  title",
            "#",
            "instruction",
            "SASS",
            cols.join("")
        ))
    );
    for s in steps {
        let vals: Vec<String> = l
            .layouts
            .iter()
            .map(|layout| match s.results.get(&layout.spec) {
                _ if s.answers_hidden => format!("{:>16}", "?"),
                Some(r) => {
                    let v = format!("{:>16}", format!("{}/{}", r.wavefronts, r.conflicts));
                    if r.conflicts > 0 {
                        out::paint(&v, out::BAD)
                    } else {
                        v
                    }
                }
                None => format!("{:>16}", "-"),
            })
            .collect();
        outln!(
            o,
            "{:>2}  {:18} {:16} {}  {}",
            s.index,
            s.instruction,
            s.sass,
            vals.join(""),
            s.title
        );
        // The note the TUI shows beside the step, indented under its row.
        for line in s.note.lines() {
            outln!(o, "      {}", line.trim_end());
        }
        if let Some(e) = &s.exercise {
            print_exercise(o, l, s.index, e);
        }
    }
}

/// A step's question under its row, and the explanation that gives its answer behind the same
/// `--answers` as the numbers.
fn print_exercise(o: &mut String, l: &Lesson, n: usize, e: &ExerciseJson) {
    outln!(
        o,
        "      {} {}  (answer: tilelab lessons answer {} {} ANSWER; {})",
        out::bold("Exercise:"),
        e.question.replace('\n', " "),
        l.name,
        n,
        e.answer_form
    );
    if let Some(x) = &e.explanation {
        outln!(o, "      {}", out::bold("Answer:"));
        for line in x.lines() {
            outln!(o, "      {}", line.trim_end());
        }
    } else if e.explanation_hidden {
        outln!(
            o,
            "      (the explanation of the answer is hidden: --answers shows it)"
        );
    }
}

/// The lesson's sources, its SASS mnemonics and its `[[ptx]]` parts, after the steps table.
fn print_sources_and_ptx(o: &mut String, l: &Lesson, vi: usize, ptx: &[PtxJson]) {
    let cited = l.cited_sources();
    if !cited.is_empty() {
        outln!(o, "\nsources:");
        for c in cited {
            outln!(o, "  {}: {}", c.short, c.cite());
        }
    }
    let counts = tilelab::lessons::run::sass_counts(l, vi);
    if !counts.is_empty() {
        let by: Vec<String> = counts.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
        outln!(
            o,
            "
instructions by SASS mnemonic: {}",
            by.join(", ")
        );
    }
    for (i, p) in ptx.iter().enumerate() {
        outln!(o);
        outln!(o, "{}", out::bold(&format!("PTX {}: {}", i + 1, p.label)));
        outln!(o, "  {}", p.note);
        outln!(o, "  tilelab tui --ptx {} {}", p.module, p.flags);
        let c: Vec<String> = p
            .counters
            .iter()
            .map(|(k, v)| format!("{} {v}", k.trim_end_matches(".sum")))
            .collect();
        outln!(o, "  measured on the H200 ({}): {}", p.launch, c.join(", "));
        if let Some([line, e, w, cf]) = p.line {
            outln!(
                o,
                "  line {line} (ncu source view): {e} executions, {w} wavefronts, {cf} bank conflicts"
            );
        }
    }
}

/// The lanes of step `n` under `layout`, each in the colour of the first wavefront serving it
/// ([`tilelab::palette::wavefront`]).
fn print_lanes(o: &mut String, n: usize, layout: &str, lanes: Vec<out::LaneRow>, run: &StepRun) {
    outln!(
        o,
        "\nstep {n} under '{layout}': lane, element, byte offset, bank, wavefronts"
    );
    for x in lanes {
        let colour = match (x.wavefronts.first(), run.report.as_ref()) {
            (Some(&w), Some(rep)) => tilelab::palette::wavefront(rep, w),
            _ => tilelab::palette::DIM,
        };
        let wf: Vec<String> = x.wavefronts.iter().map(|w| w.to_string()).collect();
        let line = format!(
            "lane {:>2}  ({:>3}, {:>3})  {:>6}  bank {:>2}  wavefront {}",
            x.lane,
            x.row,
            x.col,
            x.byte_offset,
            x.bank,
            wf.join(",")
        );
        outln!(o, "{}", out::paint(&line, colour));
    }
}

fn check(all: &[Lesson], a: CheckArgs, json: bool) -> anyhow::Result<ExitCode> {
    let hw = Some(tilelab::lessons::run::hw_records(a.hw.as_deref())?);
    let chosen: Vec<&Lesson> = if a.names.is_empty() {
        all.iter().collect()
    } else {
        a.names
            .iter()
            .map(|n| lessons::find(all, n))
            .collect::<Result<_, _>>()?
    };
    let mut report = BTreeMap::new();
    let mut o = String::new();
    let (mut pass, mut fail, mut pending) = (0, 0, 0);
    // Checks that involve no model (the lesson's arithmetic, its tables against its own steps).
    let (mut own_pass, mut own) = (0, 0);
    for l in chosen {
        let checks = check_lesson(l, hw.as_ref());
        for c in &checks {
            if !c.basis.tests_the_model() {
                own += 1;
                own_pass += usize::from(c.status == CheckStatus::Pass);
            }
            match c.status {
                CheckStatus::Pass => pass += 1,
                CheckStatus::Fail => fail += 1,
                CheckStatus::Pending => pending += 1,
            }
            if !json && c.status != CheckStatus::Pass {
                let tag = match c.status {
                    CheckStatus::Fail => out::paint("FAIL", out::BAD),
                    _ => out::paint("pending", tilelab::palette::replay(1)),
                };
                outln!(o, "{tag}  {}: {}  ({})", l.name, c.what, c.detail);
            }
        }
        report.insert(l.name.clone(), checks);
    }
    if json {
        out::emit_json(&report)?;
    } else {
        outln!(
            o,
            "{pass} passed, {fail} failed, {pending} pending: {} test the model (the simulator against the lessons' sourced numbers, H200 records, printed results); {own} are the lessons' own arithmetic and SASS tables, no model involved ({own_pass} passed)",
            pass + fail + pending - own
        );
        out::emit(&o)?;
    }
    Ok(if fail > 0 {
        ExitCode::from(super::EXIT_MISMATCH)
    } else {
        ExitCode::SUCCESS
    })
}

/// `lessons answer --json`.
#[derive(Serialize)]
struct AnswerJson<'a> {
    lesson: &'a str,
    step: usize,
    question: &'a str,
    #[serde(flatten)]
    verdict: &'a tilelab::lessons::exercise::Verdict,
    progress_file: String,
}

fn answer(all: &[Lesson], a: AnswerArgs, json: bool) -> anyhow::Result<ExitCode> {
    use tilelab::lessons::{exercise, progress};
    let l = lessons::find(all, &a.name)?;
    let vi = l.variant_index(a.variant.as_deref())?;
    let si = l.step_index(vi, a.step)?;
    let ex = l.steps[si].exercise.as_ref().ok_or_else(|| {
        let with = l.question_steps(vi);
        anyhow::anyhow!(
            "step {} of lesson '{}' asks no question; steps with one: {}",
            a.step,
            l.name,
            if with.is_empty() {
                "none".to_string()
            } else {
                tilelab::text::list(&with)
            }
        )
    })?;
    let v = exercise::check_answer(l, si, &a.answer)?;
    let path = progress::default_path()?;
    // Saved (under the progress file's lock, merged with every other answer) before anything
    // is printed: what the output reports is on disk.
    let p = progress::record_answer(&path, &l.name, si, &v)?;
    if json {
        out::emit_json(&AnswerJson {
            lesson: &l.name,
            step: a.step,
            question: ex.question.trim(),
            verdict: &v,
            progress_file: path.display().to_string(),
        })?;
    } else {
        let mut o = String::new();
        let tag = if v.correct {
            out::paint("✓", tilelab::palette::GOOD)
        } else {
            out::paint("✗", tilelab::palette::BAD)
        };
        outln!(o, "{tag} {}", v.explanation);
        let (right, total) = p.score(l);
        outln!(
            o,
            "{} of {} exercises of '{}' answered right (progress in {})",
            right,
            total,
            l.name,
            tilelab::text::path(&path)
        );
        out::emit(&o)?;
    }
    Ok(if v.correct {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_MISMATCH)
    })
}

#[derive(Serialize)]
struct ProgressStep {
    /// 1-based position in the lesson file.
    step: usize,
    question: String,
    correct: bool,
    attempts: u32,
}

#[derive(Serialize)]
struct ProgressLesson {
    lesson: String,
    exercises: usize,
    right: usize,
    steps: Vec<ProgressStep>,
}

#[derive(Serialize)]
struct ProgressJson {
    progress_file: String,
    lessons: Vec<ProgressLesson>,
}

fn progress(all: &[Lesson], a: ProgressArgs, json: bool) -> anyhow::Result<ExitCode> {
    use tilelab::lessons::progress;
    let path = progress::default_path()?;
    if a.reset {
        let removed = progress::reset(&path)?;
        if json {
            out::emit_json(&serde_json::json!({
                "progress_file": path.display().to_string(),
                "removed": removed,
            }))?;
        } else if removed {
            out::line(format_args!(
                "progress reset: removed {}",
                tilelab::text::path(&path)
            ))?;
        } else {
            out::line(format_args!(
                "no progress to reset: {} does not exist",
                tilelab::text::path(&path)
            ))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let p = progress::Progress::load(&path)?;
    let lessons: Vec<ProgressLesson> = all
        .iter()
        .map(|l| {
            let steps: Vec<ProgressStep> = l
                .steps
                .iter()
                .enumerate()
                .filter_map(|(i, s)| {
                    let ex = s.exercise.as_ref()?;
                    let r = p.get(&l.name, i).cloned().unwrap_or_default();
                    Some(ProgressStep {
                        step: i + 1,
                        question: ex.question.trim().to_string(),
                        correct: r.correct,
                        attempts: r.attempts,
                    })
                })
                .collect();
            ProgressLesson {
                lesson: l.name.clone(),
                exercises: steps.len(),
                right: steps.iter().filter(|s| s.correct).count(),
                steps,
            }
        })
        .collect();
    if json {
        out::emit_json(&ProgressJson {
            progress_file: path.display().to_string(),
            lessons,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let w = out::column_width(all.iter().map(|l| l.name.as_str()), 6, out::NAME_MAX);
    let mut o = String::new();
    outln!(
        o,
        "{}",
        out::bold(&format!(
            "{:w$}  right  steps (✓ right, ✗ tried, · not yet)",
            "lesson"
        ))
    );
    let (mut right, mut total) = (0, 0);
    for pl in &lessons {
        right += pl.right;
        total += pl.exercises;
        let marks: Vec<String> = pl
            .steps
            .iter()
            .map(|s| {
                let m = match (s.correct, s.attempts) {
                    (true, _) => out::paint("✓", tilelab::palette::GOOD),
                    (false, 0) => "·".to_string(),
                    (false, _) => out::paint("✗", tilelab::palette::BAD),
                };
                format!("{} {m}", s.step)
            })
            .collect();
        outln!(
            o,
            "{:w$}  {:>5}  {}",
            out::clip(&pl.lesson, out::NAME_MAX),
            format!("{}/{}", pl.right, pl.exercises),
            if marks.is_empty() {
                "(no exercises)".to_string()
            } else {
                marks.join("  ")
            }
        );
    }
    outln!(
        o,
        "\n{right} of {total} exercises answered right; progress in {} (`--reset` forgets it)",
        tilelab::text::path(&path)
    );
    out::emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

fn export(all: &[Lesson], a: ExportArgs, json: bool) -> anyhow::Result<ExitCode> {
    // Every page is built before anything is written: a lesson that fails leaves no files.
    let mut pages = Vec::new();
    match &a.name {
        Some(name) => {
            let l = lessons::find(all, name)?;
            let vi = l.variant_index(a.variant.as_deref())?;
            pages.push((l, tilelab::viz::html::lesson_page(l, vi)?));
        }
        None => {
            for l in all {
                pages.push((l, tilelab::viz::html::lesson_page(l, 0)?));
            }
        }
    }
    std::fs::create_dir_all(&a.html)
        .with_context(|| format!("cannot create directory '{}'", tilelab::text::path(&a.html)))?;
    let mut written = Vec::new();
    for (l, page) in &pages {
        let path = a.html.join(format!("{}.html", l.name));
        std::fs::write(&path, page)
            .with_context(|| format!("cannot write '{}'", tilelab::text::path(&path)))?;
        written.push(serde_json::json!({
            "lesson": l.name,
            "file": path.display().to_string(),
            "bytes": page.len(),
        }));
    }
    // Reported once every page is written (a failure above prints only its error).
    if !json {
        for w in &written {
            out::line(format_args!(
                "wrote {} ({} bytes): open it in a browser, no server needed",
                w["file"].as_str().unwrap_or_default(),
                w["bytes"]
            ))?;
        }
    } else {
        // One lesson: its object (as before `--all`); `--all`: the list.
        match a.name {
            Some(_) => out::emit_json(&written[0])?,
            None => out::emit_json(&written)?,
        }
    }
    Ok(ExitCode::SUCCESS)
}
