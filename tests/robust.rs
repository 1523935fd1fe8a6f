//! Issue #16 (robustness): every sample input of the issue, run through the binary with the
//! behaviour it must have, and one property test per kind of fault over random input.
//!
//! Contents, by fault kind of the issue:
//! 1. `overflow`: layouts whose footprint or offsets pass 32 bits are one-line errors;
//! 2. `write_errors`: a full disk is a one-line error (exit 2), a closed pipe is quiet and keeps
//!    the command's own exit status;
//! 3. `long_names`: tables clip names, so one huge name neither panics nor multiplies output;
//! 5. `strict`: layout strings and instruction names are parsed strictly;
//! 6. `empty`: a lesson directory without lessons is an error;
//! 7. `conventions`: `--color`, `NO_COLOR`, `--json` everywhere;
//!
//! `fuzz`: random layout strings, instruction names and mutated lesson TOML through the binary
//! and the library, each against an oracle written here: no panic, no hang, exit 0 only on
//! valid input.
//!
//! `ptx` (tests/robust/ptx.rs): issue #26 round 2 for `tilelab ptx` and `tui --ptx`: launches
//! CUDA refuses, argument values, the memory a launch may cost, hangs, undefined behaviour at
//! run time.
//!
//! And what the first users missed: `addr` (an access pattern as one expression over `lane`),
//! `defaults` (every `--access` works with the default layout and dtype), `occupancy` (a block
//! that does not fit is a result; the 48 KB limit without the opt-in), `svg` (titles and
//! captions stay on the canvas), `show_notes` (text mode carries every step's note).
//!
//! `round2_cli` (issue #26, round 2): non-UTF-8 arguments, a closed or read-only standard
//! output, one colour decision (clap's help included, `CLICOLOR`, `CLICOLOR_FORCE`), capped
//! lists and escaped control bytes in errors and tables, one size syntax.

use crate::common::run;
use run::tilelab;

use std::io::Read;
use std::process::{Command, Output, Stdio};

use crate::common::skip;

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tilelab-robust-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A replay file of `n` records (`ld.shared.b32`, lane i at 4i: 1 wavefront each), the record
/// at `long` named with `long_len` bytes; `measured` sets every record's measured wavefronts.
fn replay_file(path: &std::path::Path, n: usize, long: usize, long_len: usize, measured: u32) {
    let offs = (0..32)
        .map(|l| (l * 4).to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut text = String::from("[");
    for i in 0..n {
        let name = if i == long {
            "x".repeat(long_len)
        } else {
            format!("r{i}")
        };
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"name":"{name}","instruction":"ld.shared.b32","lane_byte_offsets":[{offs}],"wavefronts":{measured}}}"#
        ));
    }
    text.push(']');
    std::fs::write(path, text).unwrap();
}

/// Asserts a bad input: exit 2, nothing on stdout, one line on stderr starting
/// `tilelab: error: ` and containing every needle, no panic.
fn assert_error(args: &[&str], needles: &[&str]) {
    let o = tilelab(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}: stdout not empty");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("tilelab: error: "), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err} lacks {n:?}");
    }
}

mod overflow {
    use super::*;

    /// `pad:4294967232` made 64 + pad wrap to 0: every row at one address, "0 conflicts".
    #[test]
    fn huge_pad_is_an_error_not_zero_conflicts() {
        assert_error(
            &["sim", "bank-conflicts", "--layout", "pad:4294967232"],
            &["'pad:4294967232'", "2^32 bytes"],
        );
    }

    /// `Swizzle<10,10,11>` rounded the tile up to 2^32 bytes = 0: tiles placed at 0 B.
    #[test]
    fn huge_swizzle_period_is_an_error_not_tiles_at_zero() {
        assert_error(
            &[
                "sim",
                "counts",
                "gemm",
                "--m",
                "16",
                "--n",
                "16",
                "--k",
                "16",
                "--layout",
                "swizzle:10,10,11",
            ],
            &["'swizzle:10,10,11'", "2^32 bytes"],
        );
        // One bit less fits in 32 bits but not in shared memory: the exact byte count.
        assert_error(
            &[
                "sim",
                "counts",
                "gemm",
                "--m",
                "16",
                "--n",
                "16",
                "--k",
                "16",
                "--layout",
                "swizzle:9,10,11",
            ],
            &["needs 4294967296 bytes", "at most 232448 bytes"],
        );
    }

    /// GEMM edges near u32::MAX: the unpadded tile bytes pass 2^64; still an exact error.
    #[test]
    fn gemm_edges_at_u32_max_are_errors() {
        assert_error(
            &[
                "sim",
                "counts",
                "gemm",
                "--m",
                "4294967280",
                "--n",
                "4294967280",
                "--k",
                "4294967280",
                "--warps",
                "1",
            ],
            &["allows at most 232448 bytes per block"],
        );
    }
}

mod strict {
    use super::*;

    #[test]
    fn a_layout_part_given_twice_is_an_error() {
        assert_error(
            &["sim", "bank-conflicts", "--layout", "pad:0+pad:8"],
            &["'pad:0+pad:8'", "more than one pad", "allowed:"],
        );
    }

    #[test]
    fn ldmatrix_with_two_counts_or_two_trans_is_an_error() {
        let dir = std::env::temp_dir().join(format!("tilelab-strict-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let offs = (0..32)
            .map(|l| (l * 16).to_string())
            .collect::<Vec<_>>()
            .join(",");
        for (ins, why) in [
            ("ldmatrix.x2.x4", "two matrix counts"),
            ("ldmatrix.x4.trans.trans", "'.trans' given twice"),
        ] {
            let p = dir.join(format!("{ins}.json"));
            std::fs::write(
                &p,
                format!(r#"[{{"name":"n","instruction":"{ins}","lane_byte_offsets":[{offs}]}}]"#),
            )
            .unwrap();
            assert_error(
                &["sim", "replay", p.to_str().unwrap()],
                &[&format!("'{ins}'"), why, "allowed:"],
            );
        }
    }
}

mod write_errors {
    use super::*;

    /// `> /dev/full`: every command ends with one line naming standard output, exit 2, never
    /// the panic of `println!` (exit 101).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_disk_is_a_one_line_error_for_every_command() {
        let measured = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/h200_wavefronts.json"
        );
        let cases: Vec<Vec<&str>> = vec![
            vec!["lessons"],
            vec!["lessons", "--json"],
            vec!["lessons", "show", "banks"],
            vec!["lessons", "show", "banks", "--json"],
            vec!["lessons", "check", "banks"],
            vec!["lessons", "check", "banks", "--json"],
            vec!["lessons", "kernel", "banks"],
            vec!["lessons", "kernel", "banks", "--json"],
            vec!["sim", "bank-conflicts"],
            vec!["sim", "bank-conflicts", "--json"],
            vec!["sim", "replay", measured],
            vec!["sim", "replay", measured, "--json"],
            vec!["sim", "ldmatrix"],
            vec!["sim", "ldmatrix", "--json"],
            vec!["sim", "mma"],
            vec!["sim", "mma", "--json"],
            vec![
                "sim", "counts", "gemm", "--m", "64", "--n", "64", "--k", "64",
            ],
            vec!["sim", "counts", "flash-attn", "--style", "torch", "--json"],
            vec!["sim", "traffic", "flash-attn"],
            vec!["sim", "occupancy", "--arch", "sm_90", "--threads", "128"],
            vec!["--help"],
            vec!["--version"],
        ];
        for args in cases {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            let o = Command::new(env!("CARGO_BIN_EXE_tilelab"))
                .args(&args)
                .stdout(full)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(
                err.starts_with("tilelab: error: cannot write to standard output: "),
                "{args:?}: {err}"
            );
        }
    }

    /// `tilelab sim replay FILE | head`: the reader goes away at once; a file with a mismatch
    /// still exits 1, one without exits 0, and neither prints anything on stderr.
    #[test]
    fn a_closed_pipe_keeps_the_replay_verdict() {
        let dir = temp_dir("pipe");
        for (measured, want) in [(2, 1), (1, 0)] {
            let p = dir.join(format!("m{measured}.json"));
            replay_file(&p, 3000, usize::MAX, 0, measured);
            let mut child = Command::new(env!("CARGO_BIN_EXE_tilelab"))
                .args(["sim", "replay", p.to_str().unwrap()])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            drop(child.stdout.take());
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            let status = child.wait().unwrap();
            assert_eq!(status.code(), Some(want), "{err}");
            assert!(err.is_empty(), "{err}");
        }
    }
}

/// Every command whose reader goes away at once: exit 0 and nothing on stderr (no panic of a
/// `println!`, which the panic hook used to recognise by its text).
#[test]
fn every_command_is_quiet_on_a_closed_pipe() {
    for args in [
        vec!["lessons"],
        vec!["lessons", "show", "fa2-counts"],
        vec!["lessons", "kernel", "banks", "--json"],
        vec!["sim", "bank-conflicts", "--lanes"],
        vec!["sim", "ldmatrix", "--num", "4"],
        vec!["sim", "mma"],
        vec!["sim", "counts", "flash-attn", "--style", "torch", "--lines"],
        vec!["--help"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tilelab"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

mod long_names {
    use super::*;

    /// A record name of 65,536 bytes used to panic in the table padding.
    #[test]
    fn a_65536_byte_name_is_clipped() {
        let p = temp_dir("long").join("long.json");
        replay_file(&p, 3, 1, 65_536, 1);
        let o = tilelab(&["sim", "replay", p.to_str().unwrap()]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(out.ends_with("3/3 records match\n"), "{out}");
        for line in out.lines() {
            assert!(line.chars().count() < 120, "{line}");
        }
        assert!(out.contains(&format!("{}…", "x".repeat(47))), "{out}");
        // --json keeps the whole name.
        let j = tilelab(&["sim", "replay", p.to_str().unwrap(), "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
        assert_eq!(v[1]["name"].as_str().unwrap().len(), 65_536);
    }

    /// 20,000 records with one 60,000-character name: the table stays about 20,000 short lines
    /// (it used to pad every row to 60,000 characters: 1.2 GB here, 6 GB at 100k records).
    #[test]
    fn one_long_name_does_not_widen_every_row() {
        let p = temp_dir("wide").join("wide.json");
        replay_file(&p, 20_000, 7, 60_000, 1);
        let o = tilelab(&["sim", "replay", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0));
        assert!(o.stdout.len() < 20_001 * 120, "{} bytes", o.stdout.len());
        assert!(String::from_utf8_lossy(&o.stdout).ends_with("20000/20000 records match\n"));
    }
}

mod empty {
    use super::*;

    /// `--dir EMPTY_DIR` used to list nothing and check "0 passed, 0 failed" with exit 0.
    #[test]
    fn a_directory_without_lessons_is_an_error() {
        let d = temp_dir("empty");
        let dir = d.to_str().unwrap();
        for args in [
            vec!["lessons", "--dir", dir],
            vec!["lessons", "check", "--dir", dir],
            vec!["lessons", "--dir", dir, "--json"],
            vec!["lessons", "show", "banks", "--dir", dir],
        ] {
            assert_error(&args, &["no lessons in", dir, "*.toml"]);
        }
    }
}

mod conventions {
    use super::*;

    /// `--version` names the commit the binary was built from (`git rev-parse HEAD`, asked
    /// here of git itself), its first 12 hex digits.
    #[test]
    fn version_names_the_commit() {
        let o = tilelab(&["--version"]);
        assert!(o.status.success());
        let v = String::from_utf8_lossy(&o.stdout).into_owned();
        let head = Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|g| g.status.success())
            .map(|g| String::from_utf8_lossy(&g.stdout).trim().to_string());
        match head {
            Some(h) => assert_eq!(
                v.trim_end(),
                format!(
                    "tilelab {} (commit {})",
                    env!("CARGO_PKG_VERSION"),
                    &h[..12]
                )
            ),
            None => assert_eq!(
                v.trim_end(),
                format!("tilelab {} (commit unknown)", env!("CARGO_PKG_VERSION"))
            ),
        }
    }

    /// `completions SHELL` prints the shell's script (bash: a `_tilelab` function registered
    /// with `complete -F`; zsh: a `#compdef tilelab` file), naming the subcommands; an unknown
    /// shell is a one-line error.
    #[test]
    fn completions_for_each_shell() {
        let bash = String::from_utf8(tilelab(&["completions", "bash"]).stdout).unwrap();
        assert!(bash.contains("_tilelab()"), "{bash}");
        assert!(bash.contains("complete -F _tilelab"), "{bash}");
        for sub in [
            "sim",
            "tui",
            "verify",
            "lessons",
            "explain",
            "ptx",
            "bank-conflicts",
        ] {
            assert!(bash.contains(sub), "bash completion lacks {sub}");
        }
        let zsh = String::from_utf8(tilelab(&["completions", "zsh"]).stdout).unwrap();
        assert!(zsh.starts_with("#compdef tilelab"), "{zsh}");
        for shell in ["fish", "elvish", "powershell"] {
            let o = tilelab(&["completions", shell]);
            assert!(o.status.success() && !o.stdout.is_empty(), "{shell}");
        }
        assert_error(&["completions", "tcsh"], &["'tcsh'", "bash, elvish, fish"]);
    }

    /// `man` prints tilelab(1) in roff: the title line and a section per part.
    #[test]
    fn man_page_is_roff() {
        let o = tilelab(&["man"]);
        assert!(o.status.success());
        let m = String::from_utf8(o.stdout).unwrap();
        assert!(m.contains(".TH tilelab 1"), "{m}");
        for section in [".SH NAME", ".SH SYNOPSIS", ".SH SUBCOMMANDS", ".SH VERSION"] {
            assert!(m.contains(section), "man page lacks {section}");
        }
        assert!(m.contains(r"tilelab\-ptx(1)"), "the subcommands are listed");
    }

    /// `--color always` wins over `NO_COLOR` (crossterm reads it too), `--color never` wins
    /// over a terminal.
    #[test]
    fn color_always_wins_over_no_color() {
        let o = tilelab(&["--color", "always", "sim", "bank-conflicts"]);
        assert!(String::from_utf8_lossy(&o.stdout).contains("\u{1b}["));
        let o = tilelab(&["--color", "never", "sim", "bank-conflicts"]);
        assert!(!String::from_utf8_lossy(&o.stdout).contains('\u{1b}'));
    }

    /// `lessons kernel NAME --json` printed CUDA; now an object with the source in it.
    #[test]
    fn lessons_kernel_json_is_json() {
        let o = tilelab(&["lessons", "kernel", "banks", "--json"]);
        assert!(o.status.success());
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        assert_eq!(v["name"], "banks");
        assert_eq!(v["kernel"], "kernels/lesson_banks.cu");
        assert_eq!(v["kernel_function"], "lesson_banks");
        assert!(
            v["source"]
                .as_str()
                .unwrap()
                .contains("__global__ void lesson_banks")
        );
    }
}

mod addr {
    use super::*;

    fn json(args: &[&str]) -> serde_json::Value {
        let o = tilelab(args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    }

    /// The issue's example as 4-byte stores: word (l%8)·33 + l/8 sits in bank (l%8 + l/8) mod
    /// 32; banks 3-7 are each reached by 4 lanes at distinct words: 4 wavefronts, 3 conflicts.
    /// As 16-byte stores the 132-byte pitch is misaligned (lane 1 at byte 132): an error.
    #[test]
    fn padded_pitch_example() {
        let e = "(lane%8)*132+(lane/8)*4";
        let v = json(&["sim", "bank-conflicts", "--addr", e, "--op", "st", "--json"]);
        assert_eq!(v["instruction"], "st.shared.b32");
        assert_eq!(v["sass"], "STS");
        assert_eq!(
            (v["wavefronts"].as_u64(), v["ideal"].as_u64()),
            (Some(4), Some(1))
        );
        assert_eq!(v["bank_conflicts"], 3);
        assert_eq!(v["lanes"][9]["byte_offset"], 136);
        assert_eq!(v["lanes"][9]["bank"], 2);
        assert_error(
            &[
                "sim",
                "bank-conflicts",
                "--addr",
                e,
                "--width",
                "16",
                "--op",
                "st",
            ],
            &[
                "lane 1: byte offset 132 is not aligned to 16 bytes",
                "st.shared.v4.b32",
            ],
        );
    }

    /// lane*12 as 4-byte loads: word 3·lane, 3 is odd so 32 lanes hit 32 banks: 1 wavefront.
    /// lane*8 as 8-byte loads of the upper half-warp only (mask 0xffff0000): one half-warp unit
    /// reading 16 x 8 = 128 contiguous bytes, each bank once: 1 wavefront.
    #[test]
    fn strides_and_masks() {
        let v = json(&["sim", "bank-conflicts", "--addr", "lane*12", "--json"]);
        assert_eq!(
            (v["wavefronts"].as_u64(), v["bank_conflicts"].as_u64()),
            (Some(1), Some(0))
        );
        let v = json(&[
            "sim",
            "bank-conflicts",
            "--addr",
            "lane*8",
            "--width",
            "8",
            "--mask",
            "0xffff0000",
            "--json",
        ]);
        assert_eq!(v["active_mask"], 0xffff_0000u64);
        assert_eq!(v["lanes"].as_array().unwrap().len(), 16);
        assert_eq!(v["lanes"][0]["lane"], 16);
        assert_eq!(v["wavefronts"], 1);
        // Lane 0 is inactive, so lane*4-4 is never evaluated there.
        let v = json(&[
            "sim",
            "bank-conflicts",
            "--addr",
            "lane*4-4",
            "--mask",
            "0xfffffffe",
            "--json",
        ]);
        assert_eq!(v["lanes"][0]["byte_offset"], 0);
    }

    #[test]
    fn bad_expressions_and_flags_are_one_line_errors() {
        for (args, needles) in [
            (
                vec!["--addr", "lane*4-4"],
                vec!["'lane*4-4'", "lane 0", "0 - 4 is below 0"],
            ),
            (
                vec!["--addr", "lane/(lane%1)"],
                vec!["lane 0", "divides by zero"],
            ),
            (vec!["--addr", "lane<<32"], vec!["shifts by 32 or more"]),
            (
                vec!["--addr", "lane*4294967295"],
                vec!["lane 2", "does not fit in 32 bits"],
            ),
            (
                vec!["--addr", "(lane*4"],
                vec!["'(lane*4'", "without its ')'"],
            ),
            (
                vec!["--addr", "tid*4"],
                vec!["unknown name 'tid'", "allowed: lane"],
            ),
            (
                vec!["--addr", "lane*4", "--width", "3"],
                vec!["--width 3", "1, 2, 4, 8, 16"],
            ),
            (
                vec!["--addr", "lane*4", "--mask", "0"],
                vec!["no active lane"],
            ),
            (vec!["--addr", "lane*4", "--mask", "0xg"], vec!["'0xg'"]),
            (
                vec!["--addr", "lane*4", "--op", "mov"],
                vec!["'mov'", "ld, st"],
            ),
            (
                vec!["--addr", "lane*4", "--layout", "row"],
                vec!["--layout"],
            ),
            (vec!["--width", "4"], vec!["--addr"]),
            (vec!["--addr", "lane*8000"], vec!["outside shared memory"]),
        ] {
            let mut a = vec!["sim", "bank-conflicts"];
            a.extend(args);
            assert_error(&a, &needles);
        }
    }

    /// Reference for [`random_expressions_through_the_binary`]: i128, every intermediate kept
    /// inside 0..2^32, as the module docs of `sim::addr` define.
    fn reference(e: &Expr, lane: i128) -> Option<i128> {
        let v = match e {
            Expr::Lane => lane,
            Expr::Num(n) => *n as i128,
            Expr::Bin(op, a, b) => {
                let (a, b) = (reference(a, lane)?, reference(b, lane)?);
                match *op {
                    "+" => a + b,
                    "-" => a - b,
                    "*" => a * b,
                    "/" | "%" if b == 0 => return None,
                    "/" => a / b,
                    "%" => a % b,
                    "<<" | ">>" if b >= 32 => return None,
                    "<<" => a << b,
                    ">>" => a >> b,
                    "&" => a & b,
                    "^" => a ^ b,
                    _ => a | b,
                }
            }
        };
        (0..1i128 << 32).contains(&v).then_some(v)
    }

    #[derive(Clone, Debug)]
    enum Expr {
        Lane,
        Num(u32),
        Bin(&'static str, Box<Expr>, Box<Expr>),
    }

    fn text(e: &Expr) -> String {
        match e {
            Expr::Lane => "lane".into(),
            Expr::Num(n) => n.to_string(),
            Expr::Bin(op, a, b) => format!("({}{op}{})", text(a), text(b)),
        }
    }

    fn expr() -> impl proptest::strategy::Strategy<Value = Expr> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Expr::Lane),
            (0u32..300).prop_map(Expr::Num),
            any::<u32>().prop_map(Expr::Num)
        ];
        leaf.prop_recursive(4, 16, 2, |inner| {
            (
                proptest::sample::select(vec!["+", "-", "*", "/", "%", "<<", ">>", "&", "^", "|"]),
                inner.clone(),
                inner,
            )
                .prop_map(|(op, a, b)| Expr::Bin(op, Box::new(a), Box::new(b)))
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(48))]

        /// Random expressions as 1-byte loads: exit 0 exactly when every lane's value is defined
        /// and inside the 227 KiB of shared memory, with those offsets; otherwise one line and
        /// exit 2. Never a panic.
        #[test]
        fn random_expressions_through_the_binary(e in expr()) {
            let t = text(&e);
            let o = tilelab(&["sim", "bank-conflicts", "--addr", &t, "--width", "1", "--json"]);
            let want: Option<Vec<i128>> = (0..32).map(|l| reference(&e, l)).collect();
            let fits = want.as_ref().is_some_and(|w| w.iter().all(|&v| v < 232_448));
            let err = String::from_utf8_lossy(&o.stderr);
            proptest::prop_assert!(!err.contains("panicked"), "{}: {}", t, err);
            if fits {
                proptest::prop_assert_eq!(o.status.code(), Some(0), "{}: {}", t, err);
                let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
                for (l, w) in want.unwrap().iter().enumerate() {
                    proptest::prop_assert_eq!(v["lanes"][l]["byte_offset"].as_i64(), Some(*w as i64));
                }
            } else {
                proptest::prop_assert_eq!(o.status.code(), Some(2), "{}", t);
                proptest::prop_assert_eq!(err.lines().count(), 1, "{}", err);
            }
        }

        /// Any text: exit 0 or a one-line error, never a panic or a hang.
        #[test]
        fn random_text_through_the_binary(s in "[lane0-9x()+*/%^&|<> -]{1,30}") {
            let o = tilelab(&["sim", "bank-conflicts", "--addr", &s, "--width", "1"]);
            let err = String::from_utf8_lossy(&o.stderr);
            proptest::prop_assert!(matches!(o.status.code(), Some(0 | 2)), "{}: {}", s, err);
            proptest::prop_assert!(!err.contains("panicked"), "{}: {}", s, err);
            if o.status.code() == Some(2) {
                proptest::prop_assert_eq!(err.lines().count(), 1, "{}", err);
            }
        }
    }
}

mod defaults {
    use super::*;

    /// `--access vec16`, `vec8` and `ldmatrix` failed with the default layouts (row and trans)
    /// and dtype (f32). Now each picks defaults that work: row-major f32 rows for vectors,
    /// f16 with row and Swizzle<3,3,3> for ldmatrix (64 f16 = 128-byte rows: 8 rows of a
    /// matrix in the same 4 banks, 8 wavefronts per matrix, 32 per x4; swizzled: 4).
    #[test]
    fn every_access_works_with_its_defaults() {
        for access in [
            "row",
            "col",
            "col16",
            "vec8",
            "vec16",
            "ldmatrix",
            "ldmatrix.trans",
        ] {
            let o = tilelab(&["sim", "bank-conflicts", "--access", access, "--json"]);
            assert!(
                o.status.success(),
                "{access}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let o = tilelab(&["sim", "bank-conflicts", "--access", "ldmatrix", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["dtype"], "f16");
        assert_eq!(v["layouts"][0]["layout"], "row");
        assert_eq!(v["layouts"][0]["wavefronts_per_request"][0], 32);
        assert_eq!(v["layouts"][1]["layout"], "swizzle:3,3,3");
        assert_eq!(v["layouts"][1]["wavefronts_per_request"][0], 4);
        // vec16 on 64 f32 per row: a quarter-warp reads 128 contiguous bytes, 4 per request.
        let o = tilelab(&["sim", "bank-conflicts", "--access", "vec16", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["layouts"][0]["wavefronts_per_request"][0], 4);
    }

    /// Asking for what cannot work still says which flag to change.
    #[test]
    fn explicit_misfits_name_the_flag() {
        assert_error(
            &[
                "sim",
                "bank-conflicts",
                "--access",
                "ldmatrix",
                "--dtype",
                "f32",
            ],
            &["--dtype must be 2 bytes"],
        );
        assert_error(
            &[
                "sim",
                "bank-conflicts",
                "--access",
                "vec16",
                "--layout",
                "trans",
            ],
            &["vec16", "use a row-major layout"],
        );
    }
}

mod occupancy {
    use super::*;

    fn json(args: &[&str]) -> serde_json::Value {
        let o = tilelab(args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    }

    /// Kernels that do not fit used to be "bad input" (exit 2). They are results: 0 blocks per
    /// SM and the reason (CUDA C++ Programming Guide, Table "Memory Information per Compute
    /// Capability": sm_75 64 KB per block, sm_80 65,536 registers per block).
    #[test]
    fn a_block_that_does_not_fit_is_a_result() {
        let j = json(&[
            "sim",
            "occupancy",
            "--arch",
            "sm_75",
            "--threads",
            "128",
            "--smem",
            "70KB",
            "--json",
        ]);
        assert_eq!(j["blocks_per_sm"], 0);
        assert_eq!(j["occupancy"], 0.0);
        assert_eq!(j["limiting"], serde_json::json!(["shared_memory"]));
        assert!(
            j["reason"]
                .as_str()
                .unwrap()
                .contains("at most 65536 (64 KB)"),
            "{j}"
        );
        // 255 registers: 8192 per warp, 32 warps: 262144 > 65536 per block.
        let j = json(&[
            "sim",
            "occupancy",
            "--arch",
            "sm_80",
            "--threads",
            "1024",
            "--regs",
            "255",
            "--json",
        ]);
        assert_eq!(j["blocks_per_sm"], 0);
        assert!(
            j["reason"]
                .as_str()
                .unwrap()
                .contains("262144 registers per block"),
            "{j}"
        );
        // More threads than a block may have is no launch: refused like 0 (#26 round 2).
        let t = tilelab(&["sim", "occupancy", "--arch", "sm_80", "--threads", "2048"]);
        assert_eq!(t.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&t.stderr).contains("1..=1024 threads per block on sm_80"));
        // A fitting kernel has no reason.
        let j = json(&[
            "sim",
            "occupancy",
            "--arch",
            "sm_75",
            "--threads",
            "128",
            "--smem",
            "28KB",
            "--json",
        ]);
        assert_eq!(j["reason"], serde_json::Value::Null);
    }

    /// 48 KB per block without the opt-in; the default (opt-in) is stated in the output.
    #[test]
    fn no_opt_in_limits_a_block_to_48_kb() {
        let base = [
            "sim",
            "occupancy",
            "--arch",
            "sm_90",
            "--threads",
            "128",
            "--smem",
            "64KB",
        ];
        let j = json(&[&base[..], &["--json"]].concat());
        assert_eq!(j["input"]["smem_opt_in"], true);
        assert_eq!(j["smem_per_block_limit_bytes"], 232_448);
        assert_eq!(j["blocks_per_sm"], 3);
        let j = json(&[&base[..], &["--no-opt-in", "--json"]].concat());
        assert_eq!(j["smem_per_block_limit_bytes"], 49_152);
        assert_eq!(j["blocks_per_sm"], 0);
        let t = tilelab(&base);
        assert!(String::from_utf8_lossy(&t.stdout).contains("with the opt-in to more than 48 KB"));
    }

    #[test]
    fn values_no_kernel_has_are_errors() {
        assert_error(
            &["sim", "occupancy", "--arch", "sm_90", "--threads", "0"],
            &["--threads 0"],
        );
        assert_error(
            &[
                "sim",
                "occupancy",
                "--arch",
                "sm_90",
                "--threads",
                "32",
                "--regs",
                "256",
            ],
            &["--regs 256", "1..=255"],
        );
    }
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    /// `Swizzle<B,M,S>` as (B, M, S).
    type Sw = (u32, u32, u32);

    /// The layout grammar, checked independently of `sim::layout`: `Some((pad, swizzle, col))`
    /// for a valid string.
    fn layout_oracle(s: &str) -> Option<(u64, Option<Sw>, bool)> {
        let (mut order, mut pad, mut sw) = (None, None, None);
        if s.trim().is_empty() {
            return None;
        }
        for part in s.trim().split('+').map(str::trim) {
            let digits = |t: &str| -> Option<u64> {
                let t = t.trim();
                (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| t.parse::<u64>().ok())
                    .flatten()
                    .filter(|&v| v <= u32::MAX as u64)
            };
            if ["row", "col", "trans"].contains(&part) {
                if order.replace(part != "row").is_some() {
                    return None;
                }
            } else if let Some(v) = part.strip_prefix("pad:") {
                if pad.replace(digits(v)?).is_some() {
                    return None;
                }
            } else if let Some(v) = part.strip_prefix("swizzle:") {
                let n: Vec<u64> = v.split(',').map(digits).collect::<Option<_>>()?;
                if n.len() != 3 || n[2] < n[0] || n[0] + n[1] + n[2] > 31 {
                    return None;
                }
                if sw
                    .replace((n[0] as u32, n[1] as u32, n[2] as u32))
                    .is_some()
                {
                    return None;
                }
            } else {
                return None;
            }
        }
        Some((pad.unwrap_or(0), sw, order.unwrap_or(false)))
    }

    fn layout_text() -> impl Strategy<Value = String> {
        let part = prop_oneof![
            Just("row".to_string()),
            Just("col".to_string()),
            Just("trans".to_string()),
            Just("diag".to_string()),
            Just(String::new()),
            (0u64..40).prop_map(|n| format!("pad:{n}")),
            any::<u64>().prop_map(|n| format!("pad:{n}")),
            "[0-9+ -]{0,4}".prop_map(|t| format!("pad:{t}")),
            (0u32..8, 0u32..8, 0u32..8).prop_map(|(b, m, s)| format!("swizzle:{b},{m},{s}")),
            "[0-9,]{0,7}".prop_map(|t| format!("swizzle:{t}")),
        ];
        prop::collection::vec(part, 1..4).prop_map(|v| v.join("+"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// `sim bank-conflicts --layout S` (32x64 f32, scalar column reads: always aligned):
        /// exit 0 exactly for a valid string whose footprint fits sm_90's 232,448 bytes.
        #[test]
        fn layout_strings(s in layout_text()) {
            let o = tilelab(&["sim", "bank-conflicts", "--layout", &s, "--json"]);
            let err = String::from_utf8_lossy(&o.stderr);
            prop_assert!(!err.contains("panicked"), "{}: {}", s, err);
            let fits = layout_oracle(&s).is_some_and(|(pad, sw, col)| {
                let (lines, len) = if col { (64u128, 32u128) } else { (32, 64) };
                let mut n = lines * (len + pad as u128);
                if let Some((b, m, z)) = sw {
                    let p = 1u128 << (b + m + z);
                    n = n.div_ceil(p) * p;
                }
                n * 4 <= 232_448
            });
            if fits {
                prop_assert_eq!(o.status.code(), Some(0), "{}: {}", s, err);
            } else {
                prop_assert_eq!(o.status.code(), Some(2), "{}", s);
                prop_assert_eq!(err.lines().count(), 1, "{}", err);
            }
        }

        /// Instruction names in a replay record: `ldmatrix`/`stmatrix` qualifiers are valid only
        /// once each, in PTX order, with exactly one count; a valid name replays (exit 0), any
        /// other is one line and exit 2.
        #[test]
        fn instruction_names(
            head in prop::sample::select(vec!["ldmatrix", "stmatrix", "ld.shared", "st.shared", "ldmatrix.sync.aligned"]),
            quals in prop::collection::vec(prop::sample::select(vec![
                "x1", "x2", "x4", "trans", "m8n8", "shared", "b16", "b32", "v4", "sync", "x3", ""
            ]), 0..5),
        ) {
            let name = std::iter::once(head).chain(quals.iter().copied()).collect::<Vec<_>>().join(".");
            let rank = |q: &str| match q {
                "sync" => Some(0), "aligned" => Some(1), "m8n8" => Some(2),
                "x1" | "x2" | "x4" => Some(3), "trans" => Some(4), "shared" => Some(5),
                "b16" => Some(6), _ => None,
            };
            let parts: Vec<&str> = name.split('.').collect();
            let valid = match parts[0] {
                "ldmatrix" | "stmatrix" => {
                    let r: Option<Vec<u8>> = parts[1..].iter().map(|q| rank(q)).collect();
                    r.is_some_and(|r| r.windows(2).all(|w| w[0] < w[1]) && r.contains(&3))
                }
                // ld.shared / st.shared take exactly one type suffix of the PTX ISA.
                _ => ["b16", "b32", "v4.b32"].contains(&parts[2..].join(".").as_str()),
            };
            let p = temp_dir("names").join(format!("{}.json", name.len() * 1000 + quals.len()));
            let offs = (0..32).map(|l| (l * 16).to_string()).collect::<Vec<_>>().join(",");
            std::fs::write(&p, format!(r#"[{{"name":"n","instruction":"{name}","lane_byte_offsets":[{offs}]}}]"#)).unwrap();
            let o = tilelab(&["sim", "replay", p.to_str().unwrap()]);
            let err = String::from_utf8_lossy(&o.stderr);
            prop_assert!(!err.contains("panicked"), "{}: {}", name, err);
            if valid {
                prop_assert_eq!(o.status.code(), Some(0), "{}: {}", name, err);
            } else {
                prop_assert_eq!(o.status.code(), Some(2), "{}", name);
                prop_assert!(err.contains(&format!("'{name}'")), "{}", err);
            }
        }
    }

    /// A built-in lesson with one mutation: an integer replaced by an extreme value, a line
    /// dropped, or a string value replaced.
    fn mutated_lesson() -> impl Strategy<Value = String> {
        let files: Vec<&'static str> = tilelab::lessons::embedded::FILES
            .iter()
            .map(|(_, t)| *t)
            .collect();
        (
            prop::sample::select(files),
            0usize..10_000,
            0usize..4,
            prop::sample::select(vec![
                "0",
                "-1",
                "1",
                "7",
                "4294967295",
                "4294967296",
                "65536",
                "18446744073709551616",
                "1e9",
                "\"x\"",
                "[]",
                "{}",
            ]),
        )
            .prop_map(|(text, at, how, val)| {
                let lines: Vec<&str> = text.lines().collect();
                let i = at % lines.len();
                let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                match how {
                    0 => {
                        out.remove(i);
                    }
                    1 | 2 => {
                        // The first integer at or after line i.
                        if let Some((k, l)) = out
                            .iter()
                            .enumerate()
                            .skip(i)
                            .find(|(_, l)| l.bytes().any(|b| b.is_ascii_digit()))
                        {
                            let start = l.find(|c: char| c.is_ascii_digit()).unwrap();
                            let end = l[start..]
                                .find(|c: char| !c.is_ascii_digit())
                                .map_or(l.len(), |e| start + e);
                            out[k] = format!("{}{val}{}", &l[..start], &l[end..]);
                        }
                    }
                    _ => {
                        if let Some((k, l)) = out
                            .iter()
                            .enumerate()
                            .skip(i)
                            .find(|(_, l)| l.contains(" = \""))
                        {
                            let start = l.find(" = \"").unwrap() + 4;
                            let end = l[start..].find('"').map_or(l.len(), |e| start + e);
                            out[k] = format!("{}{}{}", &l[..start], "zz:9", &l[end..]);
                        }
                    }
                }
                out.join("\n")
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// Loading and checking a mutated lesson never panics (every step under every layout).
        #[test]
        fn lesson_toml_in_the_library(text in mutated_lesson()) {
            if let Ok(l) = tilelab::lessons::parse_lesson(&text, "fuzz.toml") {
                let _ = tilelab::lessons::run::check_lesson(&l, None);
                for si in 0..l.steps.len() {
                    for li in 0..l.layouts.len() {
                        let _ = tilelab::lessons::run::run_step(&l, si, li);
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// `lessons check --dir` on a mutated lesson: 0 (passes), 1 (a number disagrees) or a
        /// one-line error (2); never a panic.
        #[test]
        fn lesson_toml_through_the_binary(text in mutated_lesson(), n in 0u32..1_000_000) {
            let d = temp_dir(&format!("toml-{n}"));
            std::fs::write(d.join("fuzz.toml"), &text).unwrap();
            let o = tilelab(&["lessons", "check", "--dir", d.to_str().unwrap()]);
            let err = String::from_utf8_lossy(&o.stderr);
            prop_assert!(!err.contains("panicked"), "{}", err);
            prop_assert!(matches!(o.status.code(), Some(0..=2)), "{:?}: {}", o.status, err);
            if o.status.code() == Some(2) {
                prop_assert_eq!(err.lines().count(), 1, "{}", err);
            }
            let _ = std::fs::remove_dir_all(&d);
        }
    }
}

/// Lessons made invalid on purpose, one certain fault each, at a random place of a random
/// built-in lesson: the library refuses them and the binary exits 2 with one line naming the
/// fault, never 0 (the mutations of `fuzz` may leave a lesson valid, so they cannot show this).
mod invalid_lessons {
    use super::*;
    use proptest::prelude::*;

    /// (lesson text, a word the error must contain).
    fn invalid_lesson() -> impl Strategy<Value = (String, String)> {
        let files: Vec<&'static str> = tilelab::lessons::embedded::FILES
            .iter()
            .map(|(_, t)| *t)
            .collect();
        (
            prop::sample::select(files),
            0usize..10_000,
            0usize..5,
            prop::sample::select(vec![
                "pad:0+pad:8",
                "swizzle:10,10,11",
                "pad:4294967232",
                "zz:9",
                "row+row",
                "swizzle:3,3",
                "",
            ]),
            prop::sample::select(vec![
                "ldmatrix.x2.x4",
                "ldmatrix.x4.trans.trans",
                "ld.shared.v3.b32",
                "ldmatrix.x3",
                "mma.sync",
                "LDSM.16.M88.4",
            ]),
        )
            .prop_map(|(text, at, how, layout, instr)| {
                let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
                let pick = |pred: &dyn Fn(&str) -> bool, lines: &[String]| -> Option<usize> {
                    let hits: Vec<usize> = (0..lines.len()).filter(|&i| pred(&lines[i])).collect();
                    (!hits.is_empty()).then(|| hits[at % hits.len()])
                };
                let instr_line = pick(&|l| l.starts_with("instruction = \""), &lines);
                match (how, instr_line) {
                    // A key no table has, after a random table header (or at the top).
                    (0, _) | (2, None) => {
                        let i = pick(&|l| l.starts_with("[["), &lines).map_or(0, |i| i + 1);
                        lines.insert(i, "zz_unknown_key = 1".into());
                        (lines.join("\n"), "zz_unknown_key".into())
                    }
                    (1, _) => {
                        let i = pick(&|l| l.starts_with("layouts = ["), &lines).unwrap();
                        lines[i] = lines[i].replacen(
                            "layouts = [",
                            &format!("layouts = [\"{layout}\", "),
                            1,
                        );
                        let word = if layout.is_empty() { "layout" } else { layout };
                        (lines.join("\n"), word.into())
                    }
                    (2, Some(i)) => {
                        lines[i] = format!("instruction = \"{instr}\"");
                        (lines.join("\n"), instr.into())
                    }
                    // A top-level key given twice.
                    (3, _) => {
                        lines.insert(1, "title = \"again\"".into());
                        (lines.join("\n"), "duplicate key".into())
                    }
                    // A required key dropped.
                    _ => {
                        let i = lines.iter().position(|l| l.starts_with("name = ")).unwrap();
                        lines.remove(i);
                        (lines.join("\n"), "name".into())
                    }
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn the_library_refuses_them((text, word) in invalid_lesson()) {
            match tilelab::lessons::parse_lesson(&text, "bad.toml") {
                Ok(l) => prop_assert!(false, "accepted ({word}): {}", l.name),
                Err(e) => prop_assert!(e.to_string().contains(&word), "{word}: {e}"),
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        #[test]
        fn the_binary_exits_2((text, word) in invalid_lesson(), n in 0u32..1_000_000) {
            let d = temp_dir(&format!("bad-toml-{n}"));
            std::fs::write(d.join("bad.toml"), &text).unwrap();
            for cmd in [vec!["lessons", "check"], vec!["lessons"]] {
                let mut args = cmd.clone();
                args.extend(["--dir", d.to_str().unwrap()]);
                let o = tilelab(&args);
                let err = String::from_utf8_lossy(&o.stderr);
                prop_assert_eq!(o.status.code(), Some(2), "{:?} ({}): {}", args, word, err);
                prop_assert_eq!(err.lines().count(), 1, "{}", err);
                prop_assert!(err.contains(&word), "{}: {}", word, err);
            }
            let _ = std::fs::remove_dir_all(&d);
        }
    }
}

mod svg {
    use super::*;

    /// Every `<text>` of an SVG document: (x, font size, anchor, text), `&lt;` etc. unescaped.
    fn texts(doc: &str) -> Vec<(f64, f64, String, String)> {
        let attr = |tag: &str, name: &str| -> Option<String> {
            let k = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            Some(tag[k..k + tag[k..].find('"')?].to_string())
        };
        let mut out = Vec::new();
        let mut rest = doc;
        while let Some(i) = rest.find("<text") {
            let open_end = i + rest[i..].find('>').unwrap();
            let tag = &rest[i..open_end];
            let close = open_end + rest[open_end..].find("</text>").unwrap();
            let body = rest[open_end + 1..close]
                .trim()
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&");
            out.push((
                attr(tag, "x").unwrap().parse().unwrap(),
                attr(tag, "font-size").unwrap().parse().unwrap(),
                attr(tag, "text-anchor").unwrap_or_else(|| "start".into()),
                body,
            ));
            rest = &rest[close..];
        }
        out
    }

    /// Monospace text advances 0.6 em per character (a whole em for CJK): every text's extent
    /// lies inside [0, width] of the document.
    fn assert_on_canvas(what: &str, doc: &str) {
        let w: f64 = {
            let k = doc.find("width=\"").unwrap() + 7;
            doc[k..k + doc[k..].find('"').unwrap()].parse().unwrap()
        };
        for (x, px, anchor, t) in texts(doc) {
            let len: f64 = t
                .chars()
                .map(|c| if c >= '\u{2e80}' { 1.0 } else { 0.6 })
                .sum::<f64>()
                * px;
            let (a, b) = match anchor.as_str() {
                "middle" => (x - len / 2.0, x + len / 2.0),
                "end" => (x - len, x),
                _ => (x, x + len),
            };
            assert!(
                a >= -0.5 && b <= w + 0.5,
                "{what}: '{t}' spans {a:.0}..{b:.0}, canvas {w}"
            );
        }
    }

    #[test]
    fn titles_and_captions_stay_on_the_canvas() {
        let dir = temp_dir("svg");
        let mut n = 0;
        let mut run = |args: &[&str]| {
            n += 1;
            let p = dir.join(format!("{n}.svg"));
            let mut a = args.to_vec();
            a.extend(["--svg", p.to_str().unwrap()]);
            let o = tilelab(&a);
            assert!(
                o.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert_on_canvas(&format!("{args:?}"), &std::fs::read_to_string(&p).unwrap());
        };
        for shape in ["m16n8k16", "m16n8k8", "m16n8k32"] {
            for op in ["a", "b", "c"] {
                run(&["sim", "mma", "--shape", shape, "--operand", op]);
            }
            run(&["sim", "mma", "--shape", shape]);
        }
        run(&["sim", "ldmatrix", "--num", "1", "--trans"]);
        run(&[
            "sim",
            "bank-conflicts",
            "--access",
            "ldmatrix.trans",
            "--layout",
            "col+pad:8",
        ]);
        run(&[
            "sim",
            "bank-conflicts",
            "--addr",
            &format!("{}lane*4", "0+".repeat(80)),
        ]);
        for l in tilelab::lessons::builtin().unwrap() {
            for (i, &si) in l.steps_of(0).iter().enumerate() {
                let step = (i + 1).to_string();
                if l.steps[si].exercise.is_some() {
                    // The picture of a question's step gives the answer: only with --answers
                    // (issue #26).
                    let o = tilelab(&[
                        "lessons", "show", &l.name, "--step", &step, "--svg", "x.svg",
                    ]);
                    let e = String::from_utf8_lossy(&o.stderr);
                    assert_eq!(o.status.code(), Some(2), "{e}");
                    assert!(
                        e.contains("asks a question") && e.contains("--answers"),
                        "{e}"
                    );
                    assert!(!std::path::Path::new("x.svg").exists());
                    // `tui --svg` follows the same rule (red team L1: it wrote the picture).
                    let o = tilelab(&["tui", &l.name, "--step", &step, "--svg", "x.svg"]);
                    let e2 = String::from_utf8_lossy(&o.stderr);
                    assert_eq!(o.status.code(), Some(2), "{e2}");
                    assert_eq!(e2, e, "tui --svg and lessons show --svg differ");
                    assert!(!std::path::Path::new("x.svg").exists());
                }
                run(&["lessons", "show", &l.name, "--step", &step, "--answers"]);
                run(&["tui", &l.name, "--step", &step, "--answers"]);
            }
        }
    }
}

/// `lessons show` dropped each step's `note`: every note line of every built-in lesson (every
/// variant) now appears in the text, and in `--json` as `steps[].note`.
#[test]
fn show_notes() {
    for l in tilelab::lessons::builtin().unwrap() {
        for (vi, v) in l.variants.iter().enumerate() {
            let o = tilelab(&["lessons", "show", &l.name, "--variant", v]);
            assert!(o.status.success(), "{}", l.name);
            let out = String::from_utf8_lossy(&o.stdout);
            for &si in &l.steps_of(vi) {
                for line in l.steps[si].note.lines().filter(|x| !x.trim().is_empty()) {
                    assert!(
                        out.contains(line.trim_end()),
                        "{} {v}: note line {line:?} missing",
                        l.name
                    );
                }
            }
        }
        let o = tilelab(&["lessons", "show", &l.name, "--json"]);
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let first = &l.steps[l.steps_of(0)[0]];
        assert_eq!(j["steps"][0]["note"], first.note.trim(), "{}", l.name);
    }
}

/// Issue #26, round 2: arguments that are not UTF-8, a closed standard output, colour from
/// `--color` and the environment (clap's help included), long lists and control bytes in
/// errors, one size syntax.
mod round2_cli {
    use super::*;
    use proptest::prelude::*;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    use std::os::unix::process::CommandExt;

    const PTX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx_hand/col16.ptx");
    const REPLAY: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/h200_wavefronts.json"
    );

    // The one runner (tests/common/run.rs) takes OS-string arguments too.
    use crate::common::run::tilelab as tilelab_os;

    /// One valid command line of every subcommand, with no option that takes a file to write
    /// (where any bytes are a valid name) and no GPU needed.
    fn command_lines() -> Vec<Vec<&'static str>> {
        vec![
            vec!["explain", "wavefront"],
            vec!["lessons", "show", "banks"],
            vec!["lessons", "check", "banks"],
            vec!["lessons", "kernel", "banks"],
            vec![
                "sim",
                "bank-conflicts",
                "--layout",
                "row",
                "--access",
                "col",
            ],
            vec!["sim", "replay", REPLAY],
            vec!["sim", "ldmatrix", "--num", "4"],
            vec!["sim", "stmatrix"],
            vec!["sim", "mma"],
            vec!["sim", "tma"],
            vec!["sim", "wgmma"],
            vec![
                "sim", "counts", "gemm", "--m", "64", "--n", "64", "--k", "64",
            ],
            vec!["sim", "traffic", "flash-attn"],
            vec!["sim", "occupancy", "--arch", "sm_90", "--threads", "128"],
            vec![
                "ptx", PTX, "--kernel", "col16", "--grid", "1", "--block", "32",
            ],
            vec!["tui", "banks", "--step", "1"],
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A non-UTF-8 byte in any argument of any subcommand (in place of an argument or
        /// inserted anywhere): exit 2 and one line that shows the argument with the byte
        /// escaped; it used to panic in `std::env::args` (exit 101, a backtrace).
        #[test]
        fn a_non_utf8_argument_is_a_one_line_error_naming_it(
            line in proptest::sample::select(command_lines()),
            at in 0usize..16,
            replace in any::<bool>(),
            prefix in "[a-z]{0,3}",
            byte in 0x80u8..=0xff,
            suffix in "[a-z.]{0,3}",
        ) {
            let mut bad = prefix.clone().into_bytes();
            bad.push(byte);
            bad.extend_from_slice(suffix.as_bytes());
            let shown = format!("{prefix}\\x{byte:02x}{suffix}");
            let mut args: Vec<OsString> = line.iter().map(OsString::from).collect();
            let at = at % (args.len() + 1);
            if replace && at < args.len() {
                args[at] = OsString::from_vec(bad);
            } else {
                args.insert(at, OsString::from_vec(bad));
            }
            let o = tilelab_os(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            prop_assert_eq!(o.status.code(), Some(2), "{:?}: {}", args, err);
            prop_assert!(o.stdout.is_empty(), "{:?}", args);
            prop_assert_eq!(err.lines().count(), 1, "{:?}: {}", args, err);
            prop_assert!(err.starts_with("tilelab: error: "), "{:?}: {}", args, err);
            prop_assert!(err.contains(&shown), "{:?}: {} lacks {}", args, err, shown);
        }
    }

    /// The sample of the issue: `tilelab explain $'\xff'`.
    #[test]
    fn explain_ff_names_the_argument() {
        let o = tilelab_os(&[OsString::from("explain"), OsString::from_vec(vec![0xff])]);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            "tilelab: error: argument 2 is not valid UTF-8: '\\xff'; names, numbers and options \
             are UTF-8 text (a file path may be any bytes); see 'tilelab explain --help'\n"
        );
    }

    /// Runs `args` with descriptor 1 closed before `exec` (`tilelab … >&-`).
    fn with_stdout_closed(args: &[&str]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tilelab"));
        c.args(args).env("NO_COLOR", "1").stderr(Stdio::piped());
        // SAFETY: close(2) is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            c.pre_exec(|| {
                libc::close(1);
                Ok(())
            });
        }
        c.output().expect("run tilelab")
    }

    /// Commands that write on stdout, help and version included.
    fn writers() -> Vec<Vec<&'static str>> {
        let mut v = command_lines();
        v.retain(|l| l[0] != "tui");
        v.extend([
            vec!["lessons"],
            vec!["lessons", "--json"],
            vec!["sim", "bank-conflicts", "--json"],
            vec![
                "ptx", PTX, "--kernel", "col16", "--grid", "1", "--block", "32", "--json",
            ],
            vec!["--help"],
            vec!["sim", "--help"],
            vec!["--version"],
        ]);
        v
    }

    /// `>&-`: the runtime puts `/dev/null` on a closed descriptor 1, so the output used to be
    /// lost with exit 0. Now one line naming standard output, exit 2, for every command.
    #[test]
    fn a_closed_stdout_is_a_one_line_error_for_every_command() {
        for args in writers() {
            let o = with_stdout_closed(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert_eq!(
                err,
                "tilelab: error: cannot write to standard output: Bad file descriptor (os error 9)\n",
                "{args:?}"
            );
        }
    }

    /// `1</dev/null`: a descriptor open only for reading fails every write with EBADF, which
    /// `std::io::Stdout` used to turn into a silent success.
    #[test]
    fn a_read_only_stdout_is_a_one_line_error() {
        for args in [vec!["sim", "bank-conflicts"], vec!["--help"]] {
            let o = Command::new(env!("CARGO_BIN_EXE_tilelab"))
                .args(&args)
                .stdout(std::fs::File::open("/dev/null").unwrap())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.starts_with(
                    "tilelab: error: cannot write to standard output: Bad file descriptor"
                ),
                "{args:?}: {err}"
            );
        }
    }

    /// A command that writes nothing on stdout is not failed by a closed one, and output to
    /// `/dev/null` opened for writing is a success.
    #[test]
    fn closed_stdout_fails_only_a_write() {
        let svg = temp_dir("closed").join("g.svg");
        let o = with_stdout_closed(&["tui", "banks", "--svg", svg.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
        let o = Command::new(env!("CARGO_BIN_EXE_tilelab"))
            .args(["sim", "bank-conflicts"])
            .stdout(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0));
        assert!(o.stderr.is_empty());
    }

    /// Runs `args` with stdout a pipe (not a terminal) and `env` as the only colour variables.
    fn colored(args: &[&str], env: &[(&str, &str)]) -> bool {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tilelab"));
        c.args(args)
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR")
            .env_remove("CLICOLOR_FORCE");
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?} {env:?}");
        o.stdout.contains(&0x1b)
    }

    /// One colour decision for clap's help and the reports: `--color` wins, then NO_COLOR,
    /// then CLICOLOR_FORCE; not a terminal means no colour by default.
    #[test]
    fn help_and_reports_follow_the_same_colour_decision() {
        for args in [
            &["--help"][..],
            &["sim", "bank-conflicts", "--help"],
            &["sim", "bank-conflicts"],
        ] {
            let with = |flag: Option<&str>, env: &[(&str, &str)]| {
                let mut a: Vec<&str> = args.to_vec();
                if let Some(f) = flag {
                    a.insert(0, f);
                    a.insert(0, "--color");
                }
                colored(&a, env)
            };
            assert!(!with(None, &[]), "{args:?}: a pipe is not a terminal");
            assert!(with(Some("always"), &[]), "{args:?}");
            assert!(with(Some("always"), &[("NO_COLOR", "1")]), "{args:?}");
            assert!(!with(Some("never"), &[("CLICOLOR_FORCE", "1")]), "{args:?}");
            assert!(with(None, &[("CLICOLOR_FORCE", "1")]), "{args:?}");
            assert!(
                !with(None, &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]),
                "{args:?}: NO_COLOR wins"
            );
            assert!(!with(None, &[("CLICOLOR_FORCE", "0")]), "{args:?}");
        }
        // `--color=never` after the subcommand, as a global flag.
        assert!(!colored(
            &["sim", "bank-conflicts", "--help", "--color=never"],
            &[("CLICOLOR_FORCE", "1")]
        ));
    }
    /// A size written as `whole[.frac][ ]unit`, and what it is worth by an oracle written here:
    /// `Some(bytes)` for a valid size (units B, K/KB/KiB = 1024, M/MB/MiB = 1024², any case, a
    /// fraction only when the bytes are whole), `None` otherwise.
    fn size_case() -> impl Strategy<Value = (String, Option<u128>)> {
        let whole = prop_oneof![0u64..300, any::<u64>()];
        let frac = proptest::option::of("[0-9]{1,3}");
        let unit = proptest::sample::select(vec![
            "", "B", "b", "K", "k", "KB", "kB", "KiB", "kib", "M", "MB", "MiB", "G", "GB", "X",
            "K B", "KK",
        ]);
        (whole, frac, any::<bool>(), unit).prop_map(|(w, f, space, unit)| {
            let text = format!(
                "{w}{}{}{unit}",
                f.as_ref().map(|f| format!(".{f}")).unwrap_or_default(),
                if space && !unit.is_empty() { " " } else { "" }
            );
            let mult: Option<u128> = match unit.to_ascii_lowercase().as_str() {
                "" | "b" => Some(1),
                "k" | "kb" | "kib" => Some(1024),
                "m" | "mb" | "mib" => Some(1024 * 1024),
                _ => None,
            };
            let bytes = mult.and_then(|m| {
                let (num, den) = match &f {
                    Some(f) => {
                        let d = 10u128.pow(f.len() as u32);
                        (w as u128 * d + f.parse::<u128>().unwrap(), d)
                    }
                    None => (w as u128, 1),
                };
                (num * m % den == 0).then(|| num * m / den)
            });
            (text, bytes)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// One size syntax: `sim occupancy --smem S` and `ptx --dynamic-smem S` accept exactly
        /// the valid sizes, with the oracle's number of bytes (the JSON echoes them; col16's
        /// kernel has 16,384 static bytes), and refuse every other one in one line naming it and
        /// the allowed forms. `--dynamic-smem 16KB` used to be refused while `--smem 28KB` was
        /// accepted.
        #[test]
        fn every_size_flag_reads_one_syntax((text, bytes) in size_case()) {
            let fits_u32 = bytes.filter(|&b| b <= u32::MAX as u128);
            let o = tilelab(&["sim", "occupancy", "--arch", "sm_90", "--threads", "128", "--smem", &text, "--json"]);
            let err = String::from_utf8_lossy(&o.stderr);
            match fits_u32 {
                Some(b) => {
                    prop_assert_eq!(o.status.code(), Some(0), "{}: {}", text, err);
                    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
                    prop_assert_eq!(v["input"]["smem_per_block_bytes"].as_u64(), Some(b as u64), "{}", text);
                }
                None => {
                    prop_assert_eq!(o.status.code(), Some(2), "{}", text);
                    prop_assert_eq!(err.lines().count(), 1, "{}", err);
                    let named = format!("'{text}'");
                    prop_assert!(err.contains(&named), "{}", err);
                    prop_assert!(
                        err.contains(if bytes.is_some() { "too large: at most 4,294,967,295 bytes" } else { "K, KB, KiB (1024 bytes" }),
                        "{}", err
                    );
                }
            }
            let o = tilelab(&["ptx", PTX, "--kernel", "col16", "--grid", "1", "--block", "32", "--dynamic-smem", &text, "--json"]);
            let err = String::from_utf8_lossy(&o.stderr);
            prop_assert_eq!(err.lines().count(), o.status.code().map_or(1, |c| (c != 0) as usize), "{}: {}", text, err);
            match fits_u32 {
                Some(b) if b + 16_384 <= 232_448 => {
                    prop_assert_eq!(o.status.code(), Some(0), "{}: {}", text, err);
                    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
                    prop_assert_eq!(v["totals"]["smem_bytes"].as_u64(), Some(b as u64 + 16_384), "{}", text);
                }
                Some(_) => prop_assert!(err.contains("exceeds sm_90's 232448 bytes per block"), "{}: {}", text, err),
                None => {
                    prop_assert_eq!(o.status.code(), Some(2), "{}", text);
                    prop_assert!(err.contains(&format!("'{text}'")), "{}", err);
                    prop_assert!(
                        err.contains(if bytes.is_some() { "at most 232448 bytes (sm_90)" } else { "K, KB, KiB (1024 bytes" }),
                        "{}", err
                    );
                }
            }
        }
    }

    /// The issue's sample, for every byte-size flag: `16KB` is 16,384 bytes wherever a size is
    /// taken, `16QB` the same one-line refusal.
    #[test]
    fn sixteen_kb_everywhere() {
        let flags: [&[&str]; 7] = [
            &[
                "ptx",
                PTX,
                "--kernel",
                "col16",
                "--grid",
                "1",
                "--block",
                "32",
                "--dynamic-smem",
            ],
            &[
                "tui",
                "--ptx",
                PTX,
                "--kernel",
                "col16",
                "--grid",
                "1",
                "--block",
                "32",
                "--dynamic-smem",
            ],
            &[
                "verify",
                "--ptx",
                PTX,
                "--grid",
                "1",
                "--block",
                "32",
                "--dynamic-smem",
            ],
            &[
                "verify",
                "--ptx",
                PTX,
                "--grid",
                "1",
                "--block",
                "32",
                "--pointer-bytes",
            ],
            &[
                "sim",
                "occupancy",
                "--arch",
                "sm_90",
                "--threads",
                "128",
                "--smem",
            ],
            &["sim", "tma", "--base"],
            &["sim", "traffic", "flash-attn", "--elem-bytes"],
        ];
        for f in flags {
            let mut args = f.to_vec();
            args.push("16QB");
            let o = tilelab(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert!(
                err.contains(&format!("invalid value '16QB' for '{} <BYTES>': not a size; allowed: a whole number of bytes (32768 or 32768B), or of K, KB, KiB (1024 bytes: 32K, 32KB, 1.5KiB) or M, MB, MiB (1024 KiB: 2M)", f[f.len() - 1])),
                "{args:?}: {err}"
            );
        }
        let o = tilelab(&["sim", "tma", "--base", "16KB", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["base"], 16384);
        let o = tilelab(&[
            "sim",
            "bank-conflicts",
            "--addr",
            "lane*8",
            "--width",
            "8B",
            "--json",
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// True when `bytes` hold a control character other than a newline: C0 (ESC, BEL, CR, …),
    /// DEL, or C1 (U+0080 to U+009F, `C2 80` to `C2 9F` in UTF-8).
    fn raw_control(bytes: &[u8]) -> bool {
        bytes.iter().any(|&b| (b < 0x20 && b != b'\n') || b == 0x7f)
            || bytes
                .windows(2)
                .any(|w| w[0] == 0xc2 && (0x80..=0x9f).contains(&w[1]))
    }

    /// A control character as a string: C0 (not NUL, which no argument can hold), DEL or C1.
    fn control_char() -> impl Strategy<Value = char> {
        prop_oneof![
            (1u32..0x20).prop_map(|c| char::from_u32(c).unwrap()),
            Just('\u{7f}'),
            (0x80u32..0xa0).prop_map(|c| char::from_u32(c).unwrap()),
        ]
    }

    /// Command lines whose arguments the output or the error echoes: names, layouts, access
    /// patterns, expressions, kernel and parameter names, file names.
    fn echoing_lines() -> Vec<Vec<&'static str>> {
        let mut v = command_lines();
        v.extend([
            vec!["explain", "bank conflict"],
            vec!["lessons", "show", "banks", "--layout", "row", "--step", "2"],
            vec![
                "sim",
                "bank-conflicts",
                "--addr",
                "(lane%8)*132+(lane/8)*4",
                "--lanes",
            ],
            vec![
                "sim",
                "bank-conflicts",
                "--layout",
                "row+pad:8",
                "--layout",
                "swizzle:3,3,3",
            ],
            vec![
                "ptx",
                PTX,
                "--kernel",
                "col16",
                "--grid",
                "1",
                "--block",
                "32",
                "--arg",
                "col16_param_0=1",
            ],
            vec![
                "sim",
                "mma",
                "--shape",
                "m16n8k16",
                "--dtype",
                "bf16",
                "--operand",
                "a",
            ],
        ]);
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A control character anywhere in any argument never reaches the terminal raw, on
        /// stdout or stderr: errors and tables show it escaped (`\x1b`), and an error is still
        /// one line.
        #[test]
        fn control_bytes_in_arguments_are_never_printed_raw(
            line in proptest::sample::select(echoing_lines()),
            which in 0usize..16,
            at in 0usize..64,
            c in control_char(),
        ) {
            let mut args: Vec<String> = line.iter().map(|s| s.to_string()).collect();
            let which = which % args.len();
            let chars: Vec<char> = args[which].chars().collect();
            let at = at % (chars.len() + 1);
            let mut t: String = chars[..at].iter().collect();
            t.push(c);
            t.extend(&chars[at..]);
            args[which] = t;
            let o = Command::new(env!("CARGO_BIN_EXE_tilelab"))
                .args(&args)
                .env("NO_COLOR", "1")
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            prop_assert!(!raw_control(&o.stdout), "{:?}: raw control on stdout", args);
            prop_assert!(!raw_control(&o.stderr), "{:?}: {:?}", args, err);
            prop_assert!(!err.contains("panicked"), "{:?}: {}", args, err);
            if !o.status.success() {
                prop_assert_eq!(o.status.code(), Some(2), "{:?}: {}", args, err);
                prop_assert_eq!(err.lines().count(), 1, "{:?}: {}", args, err);
            }
        }
    }

    /// Names from files: a replay record named with ESC is shown escaped in the table (and kept
    /// whole in JSON); a lesson whose title holds ESC is refused naming the field.
    #[test]
    fn control_bytes_in_files_are_escaped_or_refused() {
        let dir = temp_dir("ctl");
        let offs = (0..32)
            .map(|l| (l * 4).to_string())
            .collect::<Vec<_>>()
            .join(",");
        let rec = |name: &str| {
            format!(
                r#"{{"name":"{name}","instruction":"ld.shared.b32","lane_byte_offsets":[{offs}],"wavefronts":1}}"#
            )
        };
        let p = dir.join("ctl.json");
        std::fs::write(
            &p,
            format!("[{},{}]", rec("a\\u001b[2Jb"), rec("c\\u009bd")),
        )
        .unwrap();
        let o = tilelab(&["sim", "replay", p.to_str().unwrap()]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!raw_control(&o.stdout), "{out}");
        assert!(
            out.contains("a\\x1b[2Jb") && out.contains("c\\u{9b}d"),
            "{out}"
        );
        let j = tilelab(&["sim", "replay", p.to_str().unwrap(), "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
        assert_eq!(v[0]["name"], "a\u{1b}[2Jb");

        let lessons = dir.join("lessons");
        std::fs::create_dir_all(&lessons).unwrap();
        let banks = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/lessons/01-banks.toml"
        ))
        .unwrap();
        let bad = banks.replacen(
            "title = \"Banks and broadcast\"",
            "title = \"Banks\\u001b]0;x\\u0007\"",
            1,
        );
        assert_ne!(bad, banks);
        std::fs::write(lessons.join("01-banks.toml"), bad).unwrap();
        for args in [
            vec!["lessons"],
            vec!["lessons", "show", "banks"],
            vec!["tui", "banks", "--svg", "x.svg"],
        ] {
            let mut args = args;
            args.extend(["--dir", lessons.to_str().unwrap()]);
            assert_error(
                &args,
                &[
                    "field 'title': control character '\\x1b' (U+001B) in lesson text; allowed: printable text, newlines and tabs",
                ],
            );
        }
    }

    /// A file with 4,000 kernels (parse::MAX_KERNELS is 4,096; a file with more is refused by count) and one with 8,000 parameters: the error lists the first 20
    /// and says how many more, instead of echoing every name (10 KB to 1 MB lines).
    #[test]
    fn long_lists_in_errors_are_cut() {
        let dir = temp_dir("lists");
        let hdr = ".version 8.7\n.target sm_90\n.address_size 64\n";
        let mut many = hdr.to_string();
        for i in 0..4_000 {
            many.push_str(&format!(".visible .entry k{i}()\n{{\n\tret;\n}}\n"));
        }
        let p = dir.join("many.ptx");
        std::fs::write(&p, many).unwrap();
        let first: Vec<String> = (0..20).map(|i| format!("k{i}")).collect();
        let want = format!(
            "the file has 4,000 kernels; choose one with --kernel: {}, … and 3,980 more",
            first.join(", ")
        );
        assert_error(
            &["ptx", p.to_str().unwrap(), "--grid", "1", "--block", "32"],
            &[&want],
        );
        let want = format!(
            "no kernel 'nope' in the file; kernels: {}, … and 3,980 more",
            first.join(", ")
        );
        assert_error(
            &[
                "ptx",
                p.to_str().unwrap(),
                "--kernel",
                "nope",
                "--grid",
                "1",
                "--block",
                "32",
            ],
            &[&want],
        );

        let params: Vec<String> = (0..8000).map(|i| format!("\t.param .u32 p{i}")).collect();
        let p = dir.join("params.ptx");
        std::fs::write(
            &p,
            format!(
                "{hdr}.visible .entry kp(\n{}\n)\n{{\n\tret;\n}}\n",
                params.join(",\n")
            ),
        )
        .unwrap();
        let first: Vec<String> = (0..20).map(|i| format!("p{i} (.u32, index {i})")).collect();
        let want = format!(
            "missing value for parameters {}, … and 7,980 more: give --arg",
            first.join(", ")
        );
        assert_error(
            &["ptx", p.to_str().unwrap(), "--grid", "1", "--block", "32"],
            &[&want],
        );
        let o = tilelab(&[
            "ptx",
            p.to_str().unwrap(),
            "--grid",
            "1",
            "--block",
            "32",
            "--arg",
            "q=1",
        ]);
        assert!(o.stderr.len() < 1200, "{} bytes", o.stderr.len());
    }

    /// A 100,000-byte argument (near Linux's 128 KiB limit for one) or a 1 MB field of a file:
    /// the error quotes at most 120 characters of it and stays one line of about 1,000
    /// characters at most, whatever built it.
    #[test]
    fn a_huge_value_is_cut_in_the_error() {
        let huge = "x".repeat(100_000);
        let o = tilelab(&["sim", "bank-conflicts", "--layout", &huge]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(err.lines().count(), 1);
        assert!(err.len() < 1100, "{} bytes", err.len());
        // The value is cut where it is quoted, so what is allowed still ends the line.
        let cut = format!(
            "bad layout '{}…': unknown part '{}…'; allowed: row | col | trans",
            "x".repeat(119),
            "x".repeat(119)
        );
        assert!(err.starts_with(&format!("tilelab: error: {cut}")), "{err}");
        let o = tilelab(&["explain", &huge]);
        assert!(o.stderr.len() < 1100 && o.status.code() == Some(2));
        let offs = (0..32)
            .map(|l| (l * 4).to_string())
            .collect::<Vec<_>>()
            .join(",");
        let p = temp_dir("huge").join("huge.json");
        std::fs::write(
            &p,
            format!(
                r#"[{{"name":"r","instruction":"{}","lane_byte_offsets":[{offs}]}}]"#,
                "y".repeat(1 << 20)
            ),
        )
        .unwrap();
        let o = tilelab(&["sim", "replay", p.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1);
        assert!(err.len() < 1100, "{} bytes", err.len());
    }

    /// PTX operands are quoted in PTX's words, never as Rust `Debug` (`Vector([Name("%r2")])`).
    #[test]
    fn operands_are_quoted_as_ptx() {
        use tilelab::ptx::parse::Operand as O;
        let name = |s: &str| O::Name(s.into());
        for (o, want) in [
            (name("%r1"), "%r1"),
            (O::Not("%p1".into()), "!%p1"),
            (O::Pair("%p1".into(), "%p2".into()), "%p1|%p2"),
            (O::Int(-3), "-3"),
            (O::F32(0x3F80_0000), "0f3F800000"),
            (O::F64(0x3FF0_0000_0000_0000), "0d3FF0000000000000"),
            (O::Vector(vec![name("%r2"), name("%r3")]), "{%r2, %r3}"),
            (O::Address(Some("%rd1".into()), 16), "[%rd1+16]"),
            (O::Address(Some("%rd1".into()), -4), "[%rd1+-4]"),
            (O::Address(Some("tile".into()), 0), "[tile]"),
            (O::Address(None, 64), "[64]"),
            (O::Sink, "_"),
        ] {
            assert_eq!(o.to_string(), want);
        }
        let dir = temp_dir("operand");
        let src = std::fs::read_to_string(PTX).unwrap().replacen(
            "and.b32 \t%r2, %r1, 15;",
            "and.b32 \t%r2, {%r1}, 15;",
            1,
        );
        assert!(src.contains("{%r1}"));
        let p = dir.join("vec.ptx");
        std::fs::write(&p, src).unwrap();
        assert_error(
            &[
                "ptx",
                p.to_str().unwrap(),
                "--kernel",
                "col16",
                "--grid",
                "1",
                "--block",
                "32",
            ],
            &["expected a register or a number, found '{%r1}'"],
        );
    }

    /// "N-way" is Nsight Compute's number: for every line of Triton's FA v1 kernel that ncu's
    /// source page (H200) gives bank conflicts, `tilelab ptx` names the conflict with ncu's
    /// `L1 Conflicts Shared N-Way` and ncu's wavefronts and ideal per execution. It used to say
    /// "8.0 wavefronts per ideal one" where ncu says 32-way.
    #[test]
    fn n_way_is_the_number_ncu_measured() {
        let page = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/ncu_source_page_h200_2026-11-30.csv"
        ))
        .unwrap();
        let section = page
            .split("\"File Path\"")
            .find(|s| s.contains("triton_fa_v1_trans.ptx"))
            .unwrap();
        // One CSV row: fields in double quotes, "" inside a field for a quote.
        let cells = |l: &str| -> Vec<String> {
            let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
            let mut it = l.trim_end().chars().peekable();
            while let Some(c) = it.next() {
                match (c, quoted) {
                    ('"', true) if it.peek() == Some(&'"') => {
                        cur.push('"');
                        it.next();
                    }
                    ('"', _) => quoted = !quoted,
                    (',', false) => out.push(std::mem::take(&mut cur)),
                    (c, _) => cur.push(c),
                }
            }
            out.push(cur);
            out
        };
        let mut lines = section.lines().skip(2);
        let head = cells(lines.next().unwrap());
        let col = |name: &str| head.iter().position(|h| h == name).unwrap();
        let (ln, ex, nway, exc, wf, ideal) = (
            col("Line No"),
            col("Instructions Executed"),
            col("L1 Conflicts Shared N-Way"),
            col("L1 Wavefronts Shared Excessive"),
            col("L1 Wavefronts Shared"),
            col("L1 Wavefronts Shared Ideal"),
        );
        let num = |c: &str| c.replace(',', "").parse::<u64>().unwrap_or(0);
        let mut measured = Vec::new();
        for l in lines {
            let c = cells(l);
            if c.len() > ideal && !c[ln].is_empty() && num(&c[exc]) > 0 {
                let e = num(&c[ex]);
                measured.push((
                    c[ln].clone(),
                    num(&c[nway]),
                    num(&c[wf]) / e,
                    num(&c[ideal]) / e,
                ));
            }
        }
        // The page holds lines 402 and 403 of this kernel: 16 executions, 512 wavefronts, 64 ideal.
        assert!(measured.len() >= 2, "{measured:?}");
        let f = format!(
            "{}/tests/data/ptx/triton_fa_v1_trans.ptx",
            env!("CARGO_MANIFEST_DIR")
        );
        let o = tilelab(&[
            "ptx",
            &f,
            "--grid",
            "1",
            "--block",
            "128",
            "--dynamic-smem",
            "32K",
            "--arg",
            "6=64",
            "--arg",
            "7=0.125",
        ]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut seen = 0;
        for (line, n, w, i) in &measured {
            let Some(row) = out
                .lines()
                .find(|r| r.starts_with(&format!("  line {line}: ")))
            else {
                continue;
            };
            seen += 1;
            assert_eq!(n, w, "ncu's N-way is its wavefronts per execution");
            let want = format!(
                "{n}-way bank conflict ({w} wavefronts per request for {i} ideal, {} per ideal one)",
                w / i
            );
            assert!(row.contains(&want), "{row} lacks {want}");
        }
        assert_eq!(seen, measured.len(), "{measured:?}");
    }

    /// A skip says what `cargo test` cannot: the line on the terminal says the test will be
    /// listed as ok, and each skip is one line of the file `.ci/run` counts; the README says
    /// the same (it used to claim a skip was "never" reported as a pass).
    #[test]
    fn a_skip_says_it_is_listed_as_ok_and_is_counted() {
        let file = temp_dir("skip").join("skipped.txt");
        let _ = std::fs::remove_file(&file);
        let mut terminal = Vec::new();
        super::skip::record("e2e::walk", "needs tmux", &mut terminal, &file);
        super::skip::record("verify::gpu", "needs a GPU", &mut Vec::new(), &file);
        assert_eq!(
            String::from_utf8(terminal).unwrap(),
            "SKIPPED e2e::walk: needs tmux (cargo test lists it as ok; .ci/run counts it as skipped)\n"
        );
        let recorded = std::fs::read_to_string(&file).unwrap();
        assert_eq!(recorded.lines().count(), 2, "{recorded}");
        assert!(
            recorded
                .lines()
                .nth(1)
                .unwrap()
                .starts_with("SKIPPED verify::gpu: needs a GPU")
        );
        let ci = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/run")).unwrap();
        assert!(
            ci.contains("skipped=target/tmp/skipped.txt")
                && ci.contains("echo \"cargo test: $n skipped\"")
        );
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
        assert!(!readme.contains("never as a pass"));
        let section = readme
            .split("### Skipped tests")
            .nth(1)
            .unwrap()
            .split("\n## ")
            .next()
            .unwrap();
        for needle in [
            "lists such a test as `... ok`",
            "counts it among the passed",
            "`cargo test: N skipped`",
        ] {
            assert!(section.contains(needle), "README lacks {needle}");
        }
    }

    /// `2>/dev/full`: a note (`wrote FILE`) or an error that cannot be written to stderr is not
    /// a panic (`eprintln!` panicked, exit 101); the exit status still says what happened.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_stderr_is_not_a_panic() {
        let svg = temp_dir("fullerr").join("g.svg");
        for (args, want) in [
            (vec!["tui", "banks", "--svg", svg.to_str().unwrap()], 0),
            (vec!["sim", "bank-conflicts", "--layout", "diag"], 2),
            (vec!["--colr"], 2),
        ] {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            let o = Command::new(env!("CARGO_BIN_EXE_tilelab"))
                .args(&args)
                .stderr(full)
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(want), "{args:?}");
        }
    }

    /// A one-kernel module `k` with these parameters (`.param .f32 x`), doing nothing.
    fn ptx_module(params: &str) -> (String, ()) {
        (
            format!(
                ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k({params})\n{{\nret;\n}}\n"
            ),
            (),
        )
    }

    /// The one error line of a run that must exit 2.
    fn err2(args: &[&str]) -> String {
        let o = tilelab(args);
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.starts_with("tilelab: error: "), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
        e
    }

    /// A1: every whole-number flag and positional says what is wrong in words and what is
    /// allowed, never Rust's "invalid digit found in string" or "number too large to fit".
    #[test]
    fn whole_number_flags_name_what_is_allowed() {
        let big = "18446744073709551616";
        let ptx = [
            "ptx", PTX, "--kernel", "col16", "--grid", "1", "--block", "32",
        ];
        let with = |base: &[&'static str], extra: [&'static str; 2]| {
            let mut v = base.to_vec();
            v.extend(extra);
            v
        };
        let lines: Vec<(Vec<&str>, &str)> = vec![
            (
                vec!["sim", "occupancy", "--arch", "sm_90", "--threads", "1e3"],
                "not a whole number; allowed: 1..=1024",
            ),
            (
                vec!["lessons", "answer", "banks", big, "1"],
                "too large; allowed: 1..=",
            ),
            (
                vec!["lessons", "show", "banks", "--step", "x"],
                "not a whole number; allowed: 1..=",
            ),
            (
                vec!["sim", "ldmatrix", "--num", "4294967297"],
                "too large; allowed: 1, 2, 4",
            ),
            (vec!["sim", "stmatrix", "--num", "x"], "allowed: 1, 2, 4"),
            (
                vec!["sim", "wgmma", "--n", "1e3"],
                "allowed: 8, 16, ..., 256",
            ),
            (
                vec![
                    "sim", "counts", "gemm", "--m", "x", "--n", "16", "--k", "16",
                ],
                "allowed: a multiple of 16",
            ),
            (
                vec!["sim", "traffic", "flash-attn", "--batch", big],
                "too large; allowed: at least 1",
            ),
            (vec!["verify", "--fuzz", "1e3"], "allowed: 0..=100000"),
            (
                vec!["verify", "--seed", big],
                "too large; allowed: 0..=18,446,744,073,709,551,615",
            ),
            (
                with(&ptx, ["--top", "x"]),
                "not a whole number; allowed: 0 (every line)",
            ),
            (
                with(&ptx, ["--max-instructions", "18446744073709551615"]),
                "too large; allowed: 0..=30,000,000",
            ),
            (
                vec![
                    "tui", "--ptx", PTX, "--grid", "1", "--block", "32", "--warp", "x",
                ],
                "allowed: 0..=31",
            ),
        ];
        for (args, want) in lines {
            let e = err2(&args);
            assert!(e.contains(want), "{args:?}: {e}");
            for rust in ["invalid digit", "too large to fit", "not in 0..="] {
                assert!(!e.contains(rust), "{args:?}: {e}");
            }
        }
    }

    /// R1: --max-instructions has a documented cap, named in --help.
    #[test]
    fn max_instructions_is_capped_and_documented() {
        let e = err2(&[
            "ptx",
            PTX,
            "--kernel",
            "col16",
            "--grid",
            "1",
            "--block",
            "32",
            "--max-instructions",
            "30000001",
        ]);
        assert!(e.contains("too large; allowed: 0..=30,000,000"), "{e}");
        let help = String::from_utf8_lossy(&tilelab(&["ptx", "--help"]).stdout).into_owned();
        assert!(help.contains("At most 30000000"), "{help}");
    }

    /// A2: a value starting with '-' reaches its flag's parser and is named whole.
    #[test]
    fn negative_values_are_named_whole() {
        let ptx = |extra: &[&'static str]| {
            let mut v = vec![
                "ptx", PTX, "--kernel", "col16", "--grid", "1", "--block", "32",
            ];
            v.extend(extra);
            v
        };
        for (args, want) in [
            (
                ptx(&["--dynamic-smem", "-1K"]),
                "invalid value '-1K' for '--dynamic-smem",
            ),
            (
                ptx(&["--top", "-1"]),
                "'-1' for '--top <N>': negative numbers are not allowed",
            ),
            (ptx(&["--cta", "-1"]), "invalid value '-1' for '--cta"),
            (ptx(&["--arg", "-1=1"]), "--arg -1=1"),
            (vec!["sim", "bank-conflicts", "--addr", "-lane"], "'-lane'"),
            (
                vec!["verify", "--seed", "-1"],
                "negative numbers are not allowed",
            ),
            (
                vec!["lessons", "answer", "banks", "-1", "1"],
                "negative numbers are not allowed",
            ),
            // A following option is still a missing value, not a value.
            (
                ptx(&["--top", "--json"]),
                "a value is required for '--top' but none was supplied ('--json' is an option)",
            ),
        ] {
            let e = err2(&args);
            assert!(e.contains(want), "{args:?}: {e}");
            assert!(!e.contains("unexpected argument '-"), "{args:?}: {e}");
        }
    }

    /// A3: `tilelab help …` shows help or lists what is allowed and points to a help that works.
    #[test]
    fn help_subcommand_shows_help_or_a_working_pointer() {
        for args in [
            &["help", "--help"][..],
            &["help", "--color", "never", "sim"],
            &["help", "sim", "-h"],
        ] {
            let o = tilelab(args);
            assert_eq!(o.status.code(), Some(0), "{args:?}");
            assert!(
                String::from_utf8_lossy(&o.stdout).contains("Usage: tilelab"),
                "{args:?}"
            );
        }
        let e = err2(&["help", "sim", "nosuch"]);
        assert!(
            e.contains("unrecognized subcommand 'nosuch'; allowed: bank-conflicts, replay"),
            "{e}"
        );
        assert!(e.ends_with("see 'tilelab sim --help'\n"), "{e}");
    }

    /// A4: a huge value is quoted clipped and the allowed part survives.
    #[test]
    fn a_huge_value_keeps_the_allowed_part() {
        let h = "A".repeat(131_000);
        let e = err2(&["sim", "tma", "--box", &h]);
        assert!(e.len() < 600, "{}", e.len());
        assert!(
            e.contains("expected ROWSxCOLS, each 1..=256 elements"),
            "{e}"
        );
        let e = err2(&[
            "ptx",
            PTX,
            "--kernel",
            "col16",
            "--grid",
            "1",
            "--block",
            "32",
            "--arg",
            &format!("col16_param_0={h}"),
        ]);
        assert!(e.len() < 1_400, "{}", e.len());
    }

    /// R2: float parameters take one spelling of infinity and NaN, and no spaces.
    #[test]
    fn float_args_take_inf_and_nan_only_so() {
        let (m, _) = ptx_module(".param .f32 k_f32");
        let f = temp_dir("r2").join("k.ptx");
        std::fs::write(&f, m).unwrap();
        let f = f.to_str().unwrap().to_string();
        for v in ["infinity", "Infinity", "-nan", "1 ", " 1", "INF"] {
            let arg = format!("k_f32={v}");
            let e = err2(&["ptx", &f, "--grid", "1", "--block", "32", "--arg", &arg]);
            assert!(
                e.contains("allowed: a decimal number (0.125, -1e3) or inf, -inf, nan")
                    || e.contains("spaces around it"),
                "{v}: {e}"
            );
        }
        for v in ["inf", "-inf", "nan", "1.5"] {
            let arg = format!("k_f32={v}");
            let o = tilelab(&["ptx", &f, "--grid", "1", "--block", "32", "--arg", &arg]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{v}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }

    /// V1: `verify --ptx` refuses bad launch input with exit 2 before looking for a GPU.
    #[test]
    fn verify_ptx_checks_the_launch_before_the_gpu() {
        let base = ["verify", "--ptx", PTX, "--kernel", "col16", "--grid", "1"];
        for (extra, want) in [
            (&["--block", "2048"][..], "above CUDA's limit of 1024"),
            (&["--block", "32,32,2"], "2048 threads"),
            (&["--block", "1,1,65"], "z = 65"),
            (&["--block", "32", "--arg", "x=1"], "has no parameter 'x'"),
            (
                &["--block", "32", "--dynamic-smem", "300K"],
                "exceeds sm_90's 232448 bytes",
            ),
        ] {
            let mut args = base.to_vec();
            args.extend(extra);
            let e = err2(&args);
            assert!(e.contains(want), "{extra:?}: {e}");
        }
    }

    /// F2: progress and replay files' errors are said in the format's words.
    #[test]
    fn json_errors_name_no_rust_types() {
        let d = temp_dir("f2");
        std::fs::create_dir_all(d.join("tilelab")).unwrap();
        for (text, want) in [
            ("[]", "found an array, expected an object {\"version\": 1"),
            ("null", "found null, expected an object {\"version\": 1"),
            (
                r#"{"version":1,"lessons":{"banks":{"4":{"correct":true,"attempts":-1,"answer":"1"}}}}"#,
                "expected a whole number 0..=4294967295",
            ),
        ] {
            std::fs::write(d.join("tilelab/progress.json"), text).unwrap();
            let o = Command::new(env!("CARGO_BIN_EXE_tilelab"))
                .args(["lessons", "progress"])
                .env("XDG_DATA_HOME", &d)
                .output()
                .unwrap();
            let e = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{text}: {e}");
            assert!(e.contains(want), "{text}: {e}");
            for rust in ["struct", "u32", "u64"] {
                assert!(!e.contains(rust), "{text}: {e}");
            }
        }
        let r = d.join("r.json");
        std::fs::write(&r, r#"[{"name":"x","instruction":"ld.shared.b32","lane_byte_offsets":[0],"active_mask":"0xffff"}]"#).unwrap();
        let e = err2(&["sim", "replay", r.to_str().unwrap()]);
        assert!(
            e.contains("found the string \"0xffff\", expected a whole number"),
            "{e}"
        );
        assert!(!e.contains("u64") && !e.contains("invalid type"), "{e}");
    }

    /// Cosmetic: an --arg for a kernel without parameters says so; a BOM is shown escaped.
    #[test]
    fn no_parameters_and_invisible_characters_are_said() {
        let (m, _) = ptx_module("");
        let f = temp_dir("cos").join("k.ptx");
        std::fs::write(&f, m).unwrap();
        let e = err2(&[
            "ptx",
            f.to_str().unwrap(),
            "--grid",
            "1",
            "--block",
            "32",
            "--arg",
            "x=1",
        ]);
        assert!(e.contains("the kernel takes no parameters"), "{e}");
        let e = err2(&["sim", "bank-conflicts", "--layout", "\u{feff}row\u{202e}"]);
        assert!(e.contains("\\u{feff}row\\u{202e}"), "{e}");
        assert!(!e.contains('\u{feff}'), "{e}");
    }
}

#[path = "robust/ptx.rs"]
mod ptx;
