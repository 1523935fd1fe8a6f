//! Issue #27's done-when: no function in `src/ptx` is over 150 lines (the PTX interpreter's
//! families are functions of their own, not arms of one match); issue #30's: none anywhere in
//! `src` (both crates). A function runs from its `fn` line to the first line after it that is
//! its indentation and `}`.

use std::path::Path;

use crate::common::source::rust_files;

const LIMIT: usize = 150;

/// (line, name, length) of each function of `text` longer than `limit` lines.
fn long_functions(text: &str, limit: usize) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let indent = &l[..l.len() - t.len()];
        let rest = t
            .strip_prefix("pub(super) ")
            .or_else(|| t.strip_prefix("pub(crate) "))
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        let rest = rest.strip_prefix("const ").unwrap_or(rest);
        let Some(sig) = rest.strip_prefix("fn ") else {
            continue;
        };
        if l.trim_end().ends_with(';') {
            continue;
        }
        let name: String = sig
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{indent}}}");
        if let Some(j) = lines[i + 1..].iter().position(|x| *x == close) {
            let n = j + 2;
            if n > limit {
                out.push((i + 1, name, n));
            }
        }
    }
    out
}

#[test]
fn the_checker_measures_a_function() {
    let f = format!(
        "fn a() {{\n{}}}\n    fn b() {{\n    }}\n",
        "x;\n".repeat(150)
    );
    assert_eq!(long_functions(&f, LIMIT), vec![(1, "a".to_string(), 152)]);
}

/// `path:line: fn name is N lines` for each function over [`LIMIT`] in the `.rs` files below
/// `dirs` (relative to the repository root); at least `min_files` files must be read.
fn long_in(dirs: &[&str], min_files: usize) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in dirs {
        rust_files(&root.join(d), &mut files);
    }
    assert!(files.len() >= min_files, "{files:?}");
    let mut long = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (line, name, n) in long_functions(&text, LIMIT) {
            long.push(format!("{}:{line}: fn {name} is {n} lines", f.display()));
        }
    }
    long
}

#[test]
fn no_function_in_src_ptx_is_over_150_lines() {
    let long = long_in(&["crates/tilelab-core/src/ptx"], 10);
    assert!(long.is_empty(), "{}", long.join("\n"));
}

#[test]
fn no_function_in_either_crate_is_over_150_lines() {
    let long = long_in(&["src", "crates/tilelab-core/src"], 100);
    assert!(long.is_empty(), "{}", long.join("\n"));
}
