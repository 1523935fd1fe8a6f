//! The `tilelab` binary: the CLI glue around [`tilelab::sim`], [`tilelab::gpu`] and
//! [`tilelab::tui`]. Every error is printed once, as one line, by `main`.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    // Like ripgrep, end quietly with success when the reader of our output goes away
    // (`tilelab sim replay … | head`): `println!` reports a closed pipe by panicking.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.contains("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default_hook(info);
    }));
    let cli = match cli::parse() {
        Ok(c) => c,
        Err(code) => return code,
    };
    match cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // One line: the whole error chain, no backtrace.
            cli::error_line(&format!("{e:#}"));
            ExitCode::from(cli::EXIT_ERROR)
        }
    }
}
