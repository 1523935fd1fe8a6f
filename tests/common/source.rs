//! The repository's Rust sources, for the tests that read code as text (`house.rs`,
//! `fn_length.rs`).

use std::path::{Path, PathBuf};

/// Every `.rs` file below `dir`, recursively (pushed onto `out`).
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}
