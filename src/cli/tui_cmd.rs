//! `tilelab tui [LESSON]` (being built: see the lessons/TUI issue).

use std::process::ExitCode;

/// Arguments of `tilelab tui`.
#[derive(clap::Args, Debug)]
pub struct TuiArgs {
    /// Lesson name (see `tilelab lessons`).
    pub lesson: Option<String>,
}

pub fn run(_a: TuiArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("'tilelab tui' is not available in this build yet")
}
