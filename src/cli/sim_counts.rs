//! `tilelab sim counts|traffic|occupancy` (being built: see the counts issue).

use std::process::ExitCode;

/// Arguments of `tilelab sim counts`.
#[derive(clap::Args, Debug)]
pub struct CountsArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tilelab sim traffic`.
#[derive(clap::Args, Debug)]
pub struct TrafficArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tilelab sim occupancy`.
#[derive(clap::Args, Debug)]
pub struct OccupancyArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run_counts(_a: CountsArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("'tilelab sim counts' is not available in this build yet")
}
pub fn run_traffic(_a: TrafficArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("'tilelab sim traffic' is not available in this build yet")
}
pub fn run_occupancy(_a: OccupancyArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("'tilelab sim occupancy' is not available in this build yet")
}
