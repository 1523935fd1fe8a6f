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
//! 7. `conventions`: `--color`, `NO_COLOR`, `--json` everywhere.

use std::io::Read;
use std::process::{Command, Output, Stdio};

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

fn tilelab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tilelab"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run tilelab")
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
