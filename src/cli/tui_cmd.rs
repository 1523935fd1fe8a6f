//! `tilelab tui [LESSON]`: the terminal walkthrough (see `tilelab::tui`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use tilelab::lessons::{self, run::run_step};
use tilelab::tui::app::{App, Msg, update};

use super::lessons::{load, refuse_question_svg};

/// Arguments of `tilelab tui`.
#[derive(clap::Args, Debug)]
#[command(group(
    clap::ArgGroup::new("ptx_view")
        .args(["ptx", "launch"])
        .multiple(true)
        .conflicts_with_all(["lesson", "step", "layout", "variant", "svg", "dir"])
))]
#[command(
    after_help = "Keys inside: → next instruction, ← back, l layout, j/k lane, Tab pane, z zoom, e explain terms, a answer the step's question (its numbers stay hidden until it is answered; r shows them, --answers shows them all), ? help, q quit.\nWith --ptx: c/C next/previous instruction with bank conflicts, : go to a PTX line, f only conflicting, F only this line; w/W wgmma (descriptors, core matrices, accumulators), t/T TMA box, b/B mbarrier phases, R warp roles.\n\nExamples:\n  tilelab tui                 pick a lesson from the list\n  tilelab tui swizzle         open a lesson\n  tilelab tui swizzle --step 3 --layout pad:8\n  tilelab tui ldmatrix --step 1 --svg step1.svg   write a picture, no terminal UI\n  tilelab tui ldmatrix --step 2 --svg step2.svg --answers   a step that asks a question: its picture shows the answer\n  tilelab tui --ptx tests/data/ptx_hand/col16.ptx --kernel col16 --grid 1 --block 32\n  tilelab tui --launch tests/data/ptx_hopper/launch/tt_matmul_tma.json --warp 4   a launch file (docs/launch-files.md); flags beside it override its values\n  tilelab tui --ptx tests/data/ptx/triton_fa_v1_trans.ptx --grid 1 --block 128 --dynamic-smem 32768 \\\n      --arg 6=64 --arg 7=0.125 --warp 0 --line 402"
)]
pub struct TuiArgs {
    /// Lesson name (see `tilelab lessons`); without it, a list to pick from.
    pub lesson: Option<String>,
    /// Start at step N (1-based).
    #[arg(long, value_name = "N", value_parser = super::whole::<usize>("1..=the lesson's number of steps"))]
    pub step: Option<usize>,
    /// Start with this layout (one of the lesson's layouts).
    #[arg(long, value_name = "LAYOUT")]
    pub layout: Option<String>,
    /// Start with this variant (e.g. torch or triton).
    #[arg(long, value_name = "VARIANT")]
    pub variant: Option<String>,
    /// Do not start the UI: write an SVG picture of the step (bank grid, fragment maps) to FILE.
    #[arg(long, value_name = "FILE", requires = "lesson")]
    pub svg: Option<PathBuf>,
    /// Show the numbers of the steps that ask a question from the start (as if `r` had been
    /// pressed on each: they are their answers); without it they stay hidden until the question
    /// is answered or `r` is pressed, and --svg refuses to draw such a step (its picture is the
    /// answer), as `tilelab lessons show --svg` does.
    #[arg(long, conflicts_with = "ptx_view")]
    pub answers: bool,
    /// Load lessons from DIR (*.toml) instead of the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Step through one warp of your own PTX kernel instead of a lesson: one CTA simulated as
    /// `tilelab ptx` does (same launch flags), then that warp's shared-memory and mma
    /// instructions one at a time.
    #[arg(long, value_name = "FILE")]
    pub ptx: Option<PathBuf>,
    /// --ptx: the launch, as for `tilelab ptx` (the stepper follows --cta's warps; a
    /// cluster's other CTAs run beside them).
    #[command(flatten)]
    pub launch: super::launch::LaunchArgs,
    /// --ptx: the CTA to simulate, X[,Y,Z] (default 0,0,0).
    #[arg(long, value_name = "X[,Y,Z]", value_parser = super::launch::parse_dim3_zero)]
    pub cta: Option<[u32; 3]>,
    /// --ptx: the warp to follow (0-based, within the CTA) [default: 0].
    #[arg(long, value_name = "W", value_parser = super::whole::<u32>("0..=31, a warp of the CTA"))]
    pub warp: Option<u32>,
    /// --ptx: start at the first instruction of this PTX line.
    #[arg(long, value_name = "N", value_parser = super::whole::<u32>("a line of the PTX file, 1-based"))]
    pub line: Option<u32>,
    /// --ptx: keep at most N of the warp's steps (later ones are counted, not shown) [default: 10000].
    #[arg(long, value_name = "N", value_parser = super::whole::<usize>("a whole number of steps"))]
    pub max_steps: Option<usize>,
}

fn run_ptx(a: &TuiArgs) -> anyhow::Result<ExitCode> {
    let r = super::launch::resolve(
        &super::launch::Flags {
            ptx: a.ptx.clone(),
            cta: a.cta,
            launch: a.launch.clone(),
        },
        "tilelab tui --ptx",
    )?;
    let text = match &r.src {
        Some(s) => s.clone(),
        None => super::launch::read_ptx(&r.ptx)?,
    };
    let (file, text, launch) = (r.ptx.as_path(), &text, &r.launch);
    let state = tilelab::tui::ptx::PtxState::load(
        tilelab::text::path(file),
        text,
        r.kernel.as_deref(),
        launch,
        a.warp.unwrap_or(0),
        a.max_steps.unwrap_or(tilelab::ptx::trace::DEFAULT_CAP),
        a.line,
    )
    .map_err(anyhow::Error::msg)?;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "tilelab tui needs a terminal; for plain text use `tilelab ptx {} …` with the same launch flags",
            tilelab::text::path(file)
        );
    }
    let mut app = App::new_ptx(state);
    app.color = super::out::color();
    // The PTX view asks no questions: no progress file to write.
    tilelab::tui::run(app, None).context("terminal error")?;
    Ok(ExitCode::SUCCESS)
}

pub fn run(a: TuiArgs) -> anyhow::Result<ExitCode> {
    if a.ptx.is_some() || a.launch.launch.is_some() {
        return run_ptx(&a);
    }
    // clap does not enforce `requires = "ptx"` when a lesson (which conflicts with --ptx) is named.
    if a.launch.any_flag()
        || a.cta.is_some()
        || a.line.is_some()
        || a.warp.is_some()
        || a.max_steps.is_some()
    {
        anyhow::bail!(
            "--kernel, --grid, --block, --cta, --cluster, --arg, --tensor-map, --dynamic-smem, --line, --warp, --max-steps and --max-instructions go with --ptx FILE or --launch FILE.json; a lesson takes --step, --layout and --variant"
        );
    }
    let all = load(a.dir.as_ref())?;
    let start = match &a.lesson {
        None => None,
        Some(name) => {
            lessons::find(&all, name)?;
            all.iter().position(|l| &l.name == name)
        }
    };
    // Resolve every option before touching the terminal.
    let (mut li, mut vi, mut pos) = (0, 0, 0);
    if let Some(i) = start {
        let l = &all[i];
        li = l.layout_index(a.layout.as_deref())?;
        vi = l.variant_index(a.variant.as_deref())?;
        if let Some(n) = a.step {
            l.step_index(vi, n)?;
            pos = n - 1;
        }
        if let Some(path) = &a.svg {
            refuse_question_svg(l, vi, a.step.unwrap_or(1), a.answers)?;
            let si = l.step_index(vi, a.step.unwrap_or(1))?;
            let svg = tilelab::viz::lesson::step_svg(l, &run_step(l, si, li)?);
            std::fs::write(path, svg).with_context(|| {
                format!("cannot write SVG file '{}'", tilelab::text::path(path))
            })?;
            super::out::note(format_args!("wrote {}", tilelab::text::path(path)));
            return Ok(ExitCode::SUCCESS);
        }
    } else if a.step.is_some() || a.layout.is_some() || a.variant.is_some() {
        anyhow::bail!("--step, --layout and --variant need a lesson name; see `tilelab lessons`");
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "tilelab tui needs a terminal; for plain text use `tilelab lessons show NAME`"
        );
    }
    // Progress: read before the terminal is taken (a damaged file is a one-line error); a
    // machine without a data directory runs without saving.
    let progress_file = tilelab::lessons::progress::default_path().ok();
    let progress = match &progress_file {
        Some(p) => tilelab::lessons::progress::Progress::load(p)?,
        None => Default::default(),
    };
    let mut app = App::new(all, start);
    app.progress = progress;
    if a.answers {
        app.reveal_all();
    }
    // `--color never` (or NO_COLOR with `auto`) draws without colours.
    app.color = super::out::color();
    if start.is_some() {
        for _ in 0..vi {
            update(&mut app, Msg::NextVariant);
        }
        update(&mut app, Msg::SetLayout(li));
        for _ in 0..pos {
            update(&mut app, Msg::NextStep);
        }
    }
    tilelab::tui::run(app, progress_file).context("terminal error")?;
    Ok(ExitCode::SUCCESS)
}
