//! The `tilelab` binary: the CLI glue around [`tilelab::sim`], [`tilelab::gpu`] and
//! [`tilelab::tui`]. Every error is printed once, as one line, by `main`.
//!
//! Output goes through `cli::out` (an `io::Write` on stdout): a closed pipe is quiet and the
//! command keeps its own exit status; any other write error is an error like the others.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    let cli = match cli::parse() {
        Ok(c) => c,
        Err(code) => return code,
    };
    match cli::run(cli) {
        Ok(code) => code,
        // The reader went away before the command finished (a writer that did not absorb the
        // closed pipe): nothing is left to tell it, as `| head` expects.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the whole error chain, no backtrace.
            cli::error_line(&format!("{e:#}"));
            ExitCode::from(cli::EXIT_ERROR)
        }
    }
}

/// True when the error chain holds an I/O error of kind `BrokenPipe`.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
