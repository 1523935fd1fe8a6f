//! The `tilelab` binary: the CLI glue around [`tilelab::sim`], [`tilelab::gpu`] and
//! [`tilelab::tui`]. Every error is printed once, as one line, by `main`.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    let cli = match cli::parse() {
        Ok(c) => c,
        Err(code) => return code,
    };
    match cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // One line: the whole error chain, no backtrace.
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("tilelab: error: {msg}");
            ExitCode::from(cli::EXIT_ERROR)
        }
    }
}
