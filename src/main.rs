//! The `tilelab` binary: the CLI glue around [`tilelab::sim`], [`tilelab::gpu`] and
//! [`tilelab::tui`]. Every error is printed once, as one line, by `main`.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    // Like other Unix filters, end quietly when the reader of our output goes away
    // (`tilelab sim replay … | head`) instead of failing on a broken pipe.
    #[cfg(unix)]
    // SAFETY: restores the default disposition of SIGPIPE before any thread or output exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
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
