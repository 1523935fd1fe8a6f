//! Tests that cannot run say so: `SKIPPED <test>: <why>` on the terminal and one line in
//! `target/tmp/skipped.txt`, which `.ci/run` counts and prints after `cargo test` (a skipped test
//! is never reported as a silent pass).
//!
//! Included with `#[path = "common/skip.rs"] mod skip;` by the tests that need it.

use std::io::Write;

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
    let line = format!("SKIPPED {test}: {why}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped.txt");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}
