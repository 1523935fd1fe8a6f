//! Records the commit the binary is built from (`TILELAB_COMMIT`, read by
//! `tilelab::BUILD_COMMIT`) so `tilelab verify --save-measured` can write it into the
//! provenance of what it measures. Outside a git checkout nothing is set ("unknown").
//! `TILELAB_VERSION` is what `tilelab --version` prints after the name: the package version and
//! the commit's first 12 hex digits (`0.1.0 (commit 8dba9e8a1b2c)`, `(commit unknown)` outside a
//! git checkout).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let commit = git(&["rev-parse", "HEAD"]);
    let short = commit
        .as_deref()
        .map_or("unknown", |c| &c[..c.len().min(12)]);
    println!("cargo:rustc-env=TILELAB_VERSION={version} (commit {short})");
    let Some(commit) = commit else {
        return;
    };
    println!("cargo:rustc-env=TILELAB_COMMIT={commit}");
    // Rebuild when HEAD moves: HEAD itself (checkout), the branch it points at (commit), the
    // packed refs. Only files that exist: a missing one would rerun this script on every build.
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    let watched = ["HEAD", branch.as_deref().unwrap_or("HEAD"), "packed-refs"];
    for name in watched {
        if let Some(p) = git(&["rev-parse", "--git-path", name])
            && std::path::Path::new(&p).exists()
        {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
