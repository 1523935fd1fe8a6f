//! `tilelab sim ldmatrix` and `tilelab sim mma`.
use std::process::ExitCode;

/// Arguments of `tilelab sim ldmatrix`.
#[derive(clap::Args, Debug)]
pub struct LdmatrixArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}
/// Arguments of `tilelab sim mma`.
#[derive(clap::Args, Debug)]
pub struct MmaArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}
pub fn run_ldmatrix(_a: LdmatrixArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not yet")
}
pub fn run_mma(_a: MmaArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not yet")
}
