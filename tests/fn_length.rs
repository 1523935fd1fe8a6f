//! Issue #27's done-when: no function in `src/ptx` is over 150 lines (the PTX interpreter's
//! families are functions of their own, not arms of one match); issue #30's: none anywhere in
//! `src` (both crates). A function runs from its `fn` line to the first line after it that is
//! its indentation and `}`.

use std::path::Path;

const LIMIT: usize = 150;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

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

#[test]
fn no_function_in_src_ptx_is_over_150_lines() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/tilelab-core/src/ptx"),
        &mut files,
    );
    assert!(files.len() >= 10, "{files:?}");
    let mut long = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (line, name, n) in long_functions(&text, LIMIT) {
            long.push(format!("{}:{line}: fn {name} is {n} lines", f.display()));
        }
    }
    assert!(long.is_empty(), "{}", long.join("\n"));
}

#[test]
fn no_function_in_either_crate_is_over_150_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates/tilelab-core/src"), &mut files);
    assert!(files.len() >= 100, "{}", files.len());
    let mut long = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (line, name, n) in long_functions(&text, LIMIT) {
            long.push(format!("{}:{line}: fn {name} is {n} lines", f.display()));
        }
    }
    assert!(long.is_empty(), "{}", long.join("\n"));
}
