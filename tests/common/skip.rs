//! Tests that cannot run say so: `SKIPPED <test>: <why>` on the terminal and one line in
//! `target/tmp/skipped.txt`, which `.ci/run` counts and prints after `cargo test`.
//!
//! libtest has no way for a test to skip itself at run time: a skipped test returns early, and
//! `cargo test` lists it as `... ok` and counts it among the passed. The `SKIPPED` line (printed
//! just above that `ok`) and the file are what tell a skip from a pass; `TILELAB_REQUIRE` turns
//! a skip into a failure where the requirement was provided on purpose.
//!
//! Used as `use crate::common::skip;` by the tests that need it.

#![allow(dead_code)]

use std::io::Write;

/// The line a skip prints and records: `SKIPPED <test>: <why> (cargo test lists it as ok)`.
pub fn line(test: &str, why: &str) -> String {
    format!("SKIPPED {test}: {why} (cargo test lists it as ok; .ci/run counts it as skipped)\n")
}

/// Reports that `test` cannot run because `requirement` (e.g. `tmux`, `gpu`) is missing, for the
/// reason `why`, and returns so the caller can `return`.
///
/// The line goes straight to the process's stderr: libtest captures `println!`/`eprintln!` of a
/// passing test and would hide it. It is also appended to `CARGO_TARGET_TMPDIR/skipped.txt`.
///
/// # Panics
/// When the environment variable `TILELAB_REQUIRE` names `requirement` (comma-separated, or
/// `all`): where the requirement was provided on purpose (CI installs tmux), a skip is a failure.
pub fn skip(test: &str, requirement: &str, why: &str) {
    let required = std::env::var("TILELAB_REQUIRE").unwrap_or_default();
    if required
        .split(',')
        .any(|r| r.trim() == requirement || r.trim() == "all")
    {
        panic!("{test}: TILELAB_REQUIRE={required} but {requirement} is missing: {why}");
    }
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped.txt");
    record(test, why, &mut std::io::stderr().lock(), &path);
}

/// Writes [`line`] to `terminal` and appends it to the file `path` (errors are ignored: a skip
/// must not fail for want of a log).
pub fn record(test: &str, why: &str, terminal: &mut dyn Write, path: &std::path::Path) {
    let line = line(test, why);
    let _ = terminal.write_all(line.as_bytes());
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}
