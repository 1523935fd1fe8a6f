//! `tilelab sim bank-conflicts`.
use std::process::ExitCode;

/// Arguments of `tilelab sim bank-conflicts`.
#[derive(clap::Args, Debug)]
pub struct BankArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(_a: BankArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not yet")
}
