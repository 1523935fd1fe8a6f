//! `tilelab verify` (being built: see the verify issue).

use std::process::ExitCode;

/// Arguments of `tilelab verify`.
#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// Write the results as JSON to FILE.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
}

pub fn run(_a: VerifyArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("'tilelab verify' is not available in this build yet")
}
