//! Issue 30's layers. The pure core (`sim`, `ptx`, `measured`, `text`, `textfile`) is its own
//! crate, `crates/tilelab-core`: Cargo refuses an import from it of anything in `tilelab`, and
//! [`the_core_crate_depends_on_no_layer_above_it`] keeps the layers' libraries (cudarc, ratatui,
//! crossterm, clap, indicatif) out of its dependencies. Inside `tilelab`, `src/sass` and
//! `src/lessons` never name a room above them (`crate::gpu`, `crate::cli`, `crate::tui`) in code. Comments and doc comments may (a doc link up is not an
//! import). docs/architecture.md has the room table.

use std::path::Path;

use crate::common::source::rust_files;

/// The rooms that may not use the ones in [`ABOVE`] (the core's too: a second guard beside Cargo's).
const LOWER: [&str; 5] = [
    "crates/tilelab-core/src/sim",
    "crates/tilelab-core/src/ptx",
    "crates/tilelab-core/src/measured",
    "src/sass",
    "src/lessons",
];
/// The rooms above them.
const ABOVE: [&str; 3] = ["crate::gpu", "crate::cli", "crate::tui"];

/// `text` with its comments (`//…` to the end of the line, `/* … */` nested) blanked, line
/// numbers kept. String literals are kept whole (a `//` inside one is not a comment; `'"'` starts none).
fn code_only(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut depth = 0usize; // block comment nesting
    for line in text.lines() {
        let b = line.as_bytes();
        let mut out = String::new();
        let (mut i, mut in_str) = (0, false);
        while i < b.len() {
            let two = &b[i..(i + 2).min(b.len())];
            if depth > 0 {
                if two == b"*/" {
                    depth -= 1;
                    i += 2;
                } else if two == b"/*" {
                    depth += 1;
                    i += 2;
                } else {
                    i += 1;
                }
                continue;
            }
            if in_str {
                if b[i] == b'\\' {
                    i += 2;
                    continue;
                }
                if b[i] == b'"' {
                    in_str = false;
                }
                out.push(b[i] as char);
                i += 1;
                continue;
            }
            if two == b"//" {
                break;
            }
            if two == b"/*" {
                depth += 1;
                i += 2;
                continue;
            }
            if b[i..].starts_with(b"'\"'") {
                i += 3; // the char literal '"'
                continue;
            }
            if b[i] == b'"' {
                in_str = true;
            }
            out.push(b[i] as char);
            i += 1;
        }
        lines.push(out);
    }
    lines
}

/// `(line, what)` for each code line of `text` naming a room of [`ABOVE`].
fn uses_up(text: &str) -> Vec<(usize, &'static str)> {
    let mut hits = Vec::new();
    for (n, l) in code_only(text).iter().enumerate() {
        for up in ABOVE {
            if l.contains(up) {
                hits.push((n + 1, up));
            }
        }
    }
    hits
}

#[test]
fn the_scanner_skips_comments_and_finds_code() {
    let text = "//! [`crate::gpu::x`]\n/// crate::cli\nuse crate::sim::bank;\n\
                let a = 1; // crate::tui\n/* crate::gpu\n crate::gpu */ use crate::gpu::ncu;\n\
                let s = \"//\"; use crate::cli::out;\nlet q = '\"'; use crate::tui::app;\n";
    assert_eq!(
        uses_up(text),
        vec![(6, "crate::gpu"), (7, "crate::cli"), (8, "crate::tui")]
    );
}

#[test]
fn pure_rooms_and_lessons_never_use_gpu_cli_or_tui() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut bad = Vec::new();
    for room in LOWER {
        let mut files = Vec::new();
        rust_files(&root.join(room), &mut files);
        assert!(!files.is_empty(), "no Rust files in {room}");
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (line, up) in uses_up(&text) {
                let rel = f.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&f);
                bad.push(format!("{}:{line}: uses {up}", rel.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "a lower room uses a room above it (docs/architecture.md):\n{}",
        bad.join("\n")
    );
}

/// Issue 30's module circles, broken one way each: the lower module of each pair (first) never
/// names the upper one in code.
const ONE_WAY: [(&str, &str); 12] = [
    ("src/gpu/check.rs", "verify::"),
    ("src/gpu/verify/hopper_check.rs", "verify::"),
    ("src/lessons/ptx.rs", "run::"),
    ("crates/tilelab-core/src/ptx/cfg.rs", "decode::"),
    ("crates/tilelab-core/src/ptx/inst.rs", "decode::"),
    ("crates/tilelab-core/src/sim/isa/ldmatrix.rs", "exec::"),
    ("crates/tilelab-core/src/sim/error.rs", "instr::"),
    ("crates/tilelab-core/src/sim/isa/wgmma.rs", "instr::"),
    ("crates/tilelab-core/src/ptx/parse.rs", "decode::"),
    ("crates/tilelab-core/src/ptx/lineinfo.rs", "parse::"),
    ("crates/tilelab-core/src/ptx/decode.rs", "params::"),
    ("src/cli/launch.rs", "super::ptx"),
];

#[test]
fn the_broken_module_circles_stay_broken() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut bad = Vec::new();
    for (file, upper) in ONE_WAY {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        for (n, l) in code_only(&text).iter().enumerate() {
            if l.contains(upper) {
                bad.push(format!("{file}:{}: names {upper}", n + 1));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "a module circle is back:\n{}",
        bad.join("\n")
    );
}

/// The libraries of the layers above the core: the core crate may not depend on them, nor on
/// `tilelab` itself (issue 30: "no cudarc, ratatui, crossterm, clap, indicatif").
const NOT_IN_CORE: [&str; 6] = [
    "cudarc",
    "ratatui",
    "crossterm",
    "clap",
    "indicatif",
    "tilelab",
];

#[test]
fn the_core_crate_depends_on_no_layer_above_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("crates/tilelab-core/Cargo.toml")).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    assert_eq!(manifest["package"]["name"].as_str(), Some("tilelab-core"));
    let deps = manifest["dependencies"].as_table().unwrap();
    assert!(
        deps.contains_key("half"),
        "the core's dependencies: {deps:?}"
    );
    let bad: Vec<&str> = NOT_IN_CORE
        .into_iter()
        .filter(|d| {
            deps.keys()
                .any(|k| k == d || k.starts_with(&format!("{d}_")))
        })
        .collect();
    assert!(bad.is_empty(), "tilelab-core depends on {bad:?}");
    // And the tilelab crate takes the core from the workspace, so the re-exported paths are it.
    let top: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        top["dependencies"]["tilelab-core"]["path"].as_str(),
        Some("crates/tilelab-core")
    );
    assert!(
        top["workspace"]["default-members"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m.as_str() == Some("crates/tilelab-core")),
        "`cargo test` from the root must run the core's unit tests too"
    );
}

/// The modules of `sim`'s two other kinds of file: execution (`sim/run/`) and kernel models
/// (`sim/kernels/`).
const RUN_AND_KERNELS: [&str; 17] = [
    "exec",
    "mma_fast",
    "smem",
    "access",
    "addr",
    "placement",
    "stats",
    "readback",
    "selfcheck",
    "bank_read",
    "tma_copy",
    "wgmma_run",
    "counts",
    "fa3",
    "traffic",
    "occupancy",
    "program",
];

/// `sim` is grouped by kind of file (issue 30): ISA facts in `sim/isa/` execute nothing, so their
/// code (tests aside: they may run the executor on a fact) names no module of `sim/run/` or
/// `sim/kernels/`.
#[test]
fn isa_facts_name_no_execution_or_kernel_model() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("crates/tilelab-core/src/sim/isa");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(files.len() >= 10, "{files:?}");
    let mut bad = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, l) in code_only(code).iter().enumerate() {
            for m in RUN_AND_KERNELS {
                let named = [
                    format!("sim::{m}"),
                    format!("run::{m}"),
                    format!("kernels::{m}"),
                ];
                if named.iter().any(|x| l.contains(x.as_str())) {
                    bad.push(format!("{}:{}: names {m}", f.display(), n + 1));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
