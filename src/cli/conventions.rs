//! `tilelab completions SHELL` (clap_complete) and `tilelab man` (clap_mangen): the shell
//! completion script and the manual page, both generated from the one clap definition
//! ([`super::Cli`]) and written to stdout.

use std::process::ExitCode;

use clap::CommandFactory;

use super::{Cli, out};

/// Arguments of `tilelab completions`.
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, elvish, fish, powershell or zsh.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Prints the completion script for `a.shell`.
///
/// # Errors
/// Writing stdout fails (other than a closed pipe).
pub fn completions(a: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "tilelab", &mut buf);
    out::emit(&String::from_utf8_lossy(&buf))?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the manual page, `tilelab(1)`, in roff.
///
/// # Errors
/// Writing stdout fails (other than a closed pipe).
pub fn man() -> anyhow::Result<ExitCode> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut buf)?;
    out::emit(&String::from_utf8_lossy(&buf))?;
    Ok(ExitCode::SUCCESS)
}
