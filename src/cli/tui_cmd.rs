//! `tilelab tui [LESSON]`: the terminal walkthrough (see `tilelab::tui`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use tilelab::lessons::{self, run::run_step};
use tilelab::tui::app::{App, Msg, update};

use super::lessons::{layout_index, load, step_index, variant_index};

/// Arguments of `tilelab tui`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Keys inside: → next instruction, ← back, l layout, j/k lane, Tab pane, z zoom, e explain terms, ? help, q quit.\n\nExamples:\n  tilelab tui                 pick a lesson from the list\n  tilelab tui swizzle         open a lesson\n  tilelab tui swizzle --step 3 --layout pad:8\n  tilelab tui ldmatrix --step 2 --svg step2.svg   write a picture, no terminal UI"
)]
pub struct TuiArgs {
    /// Lesson name (see `tilelab lessons`); without it, a list to pick from.
    pub lesson: Option<String>,
    /// Start at step N (1-based).
    #[arg(long, value_name = "N")]
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
    /// Load lessons from DIR (*.toml) instead of the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn run(a: TuiArgs) -> anyhow::Result<ExitCode> {
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
        li = layout_index(l, a.layout.as_deref())?;
        vi = variant_index(l, a.variant.as_deref())?;
        if let Some(n) = a.step {
            step_index(l, vi, n)?;
            pos = n - 1;
        }
        if let Some(path) = &a.svg {
            let si = step_index(l, vi, a.step.unwrap_or(1))?;
            let svg = tilelab::viz::lesson::step_svg(l, &run_step(l, si, li)?);
            std::fs::write(path, svg)
                .with_context(|| format!("cannot write SVG file '{}'", path.display()))?;
            eprintln!("wrote {}", path.display());
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
    let mut app = App::new(all, start);
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
    tilelab::tui::run(app).context("terminal error")?;
    Ok(ExitCode::SUCCESS)
}
