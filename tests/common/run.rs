//! The one way the integration tests run the `tilelab` binary (`CARGO_BIN_EXE_tilelab`), and the
//! checks that many of them make of its output.
//!
//! Every run sets `NO_COLOR=1`, so that text output carries no escape codes whatever the
//! terminal. Used as `use crate::common::run;` (see tests/README.md).

#![allow(dead_code)]

use std::ffi::OsStr;
use std::process::{Command, Output};

use serde_json::Value;

/// Runs the binary on `args` (`&str`s, `String`s or `OsString`s: non-UTF-8 arguments are
/// allowed) with `NO_COLOR=1` and returns its exit status, stdout and stderr.
///
/// # Panics
/// When the binary cannot be started.
pub fn tilelab<S: AsRef<OsStr>>(args: &[S]) -> Output {
    tilelab_env(args, std::iter::empty::<(&str, &str)>())
}

/// [`tilelab`] with extra environment variables (e.g. `XDG_DATA_HOME` for a private progress
/// folder).
///
/// # Panics
/// When the binary cannot be started.
pub fn tilelab_env<S, E, K, V>(args: &[S], env: E) -> Output
where
    S: AsRef<OsStr>,
    E: IntoIterator<Item = (K, V)>,
    K: AsRef<OsStr>,
    V: AsRef<OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_tilelab"))
        .args(args)
        .env("NO_COLOR", "1")
        .envs(env)
        .output()
        .expect("run tilelab")
}

/// Runs `args` followed by `--json` and parses stdout.
///
/// # Panics
/// When the run fails (the message carries the arguments and stderr) or stdout is not JSON.
pub fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    stdout_json(&a)
}

/// Runs `args` as given (they carry their own `--json`) and parses stdout.
///
/// # Panics
/// When the run fails (the message carries the arguments and stderr) or stdout is not JSON.
pub fn stdout_json(args: &[&str]) -> Value {
    let o = tilelab(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("valid JSON")
}

/// The one-line error of a failing run, as stderr gives it (its newline kept).
///
/// # Panics
/// Unless the run exits 2 with nothing on stdout and exactly one line on stderr that is not a
/// panic message.
pub fn one_line_error(args: &[&str]) -> String {
    let o = tilelab(args);
    assert_eq!(o.status.code(), Some(2), "{args:?} should fail");
    assert!(o.stdout.is_empty());
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    assert!(!e.contains("panicked"), "{e}");
    e
}
