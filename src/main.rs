//! The `tilelab` binary: the CLI glue around [`tilelab::sim`], [`tilelab::gpu`] and
//! [`tilelab::tui`]. Every error is printed once, as one line, by `main`.
//!
//! Output goes through `cli::out` (an `io::Write` on stdout): a closed pipe is quiet and the
//! command keeps its own exit status; any other write error is an error like the others.
//!
//! A panic is a bug, never an answer: the hook prints one line (`tilelab: internal error: …`,
//! no backtrace) and the process exits with 101.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    install_panic_hook();
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

/// The last safety net: a panic prints `tilelab: internal error: MESSAGE at FILE:LINE; please
/// report it` as one line on stderr instead of the default text and backtrace. (The TUI adds its
/// own hook in front, which restores the terminal first and then calls this one.)
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        use std::io::Write;
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_string());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let line = tilelab::text::one_line(&format!("{msg}{at}; please report it"));
        let _ = writeln!(std::io::stderr(), "tilelab: internal error: {line}");
    }));
}
