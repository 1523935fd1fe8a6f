//! `tilelab lessons` (being built: see the lessons/TUI issue).

use std::process::ExitCode;

/// Arguments of `tilelab lessons`.
#[derive(clap::Args, Debug)]
pub struct LessonsArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(_a: LessonsArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("'tilelab lessons' is not available in this build yet")
}
