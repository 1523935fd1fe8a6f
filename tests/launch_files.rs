//! Launch files (`--launch FILE.json`, docs/launch-files.md) as a user runs them: the same
//! report as the flags they hold, flags beside them overriding, and one-line errors (exit 2)
//! naming the file and the JSON path, for `tilelab ptx`, `tui` and `verify`.

use crate::common::run;
use run::tilelab;

use std::path::{Path, PathBuf};

use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx_hopper");

fn totals(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    let o = tilelab(&a);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["totals"].clone()
}

/// The one-line error of a failing run (exit 2, nothing on stdout).
fn error(args: &[&str]) -> String {
    let o = tilelab(args);
    assert_eq!(o.status.code(), Some(2), "{args:?} should fail");
    assert!(o.stdout.is_empty());
    let e = String::from_utf8_lossy(&o.stderr).trim().to_string();
    assert_eq!(e.lines().count(), 1, "{e}");
    e
}

fn launch(name: &str) -> String {
    format!("{DIR}/launch/{name}.json")
}

/// A copy of launch file `name` in a temporary folder with `edit` applied to its text, the PTX
/// path made absolute.
fn edited(name: &str, edit: impl Fn(&str) -> String) -> (tempfile::TempDir, PathBuf) {
    let text = std::fs::read_to_string(launch(name)).unwrap();
    let abs = Path::new(DIR).join(format!("{name}.ptx"));
    let text = text.replace(
        &format!("\"../{name}.ptx\""),
        &format!("\"{}\"", abs.display()),
    );
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("l.json");
    std::fs::write(&p, edit(&text)).unwrap();
    (d, p)
}

/// `--launch` gives the report the flags it holds give (the hand-written pipeline's flags as
/// its measured record wrote them).
#[test]
fn a_launch_file_runs_as_its_flags() {
    let ptx = format!("{DIR}/hand_tma_wgmma_pipe.ptx");
    let by_flags = totals(&[
        "ptx",
        &ptx,
        "--kernel",
        "tma_wgmma_pipe",
        "--grid",
        "1",
        "--block",
        "160",
        "--dynamic-smem",
        "33792",
        "--arg",
        "3=4",
        "--tensor-map",
        "0=f16:256,64:512:64,64:128B",
        "--tensor-map",
        "1=f16:256,64:512:64,64:128B",
    ]);
    let by_file = totals(&["ptx", "--launch", &launch("hand_tma_wgmma_pipe")]);
    assert_eq!(by_file, by_flags);
    // And it is the measured pipeline: 8 boxes of 8 KiB, 64 HGMMA warp executions.
    assert_eq!(by_file["tma_ld_bytes"], 65536);
    assert_eq!(by_file["sass"]["GMMA"], 64);
}

/// Flags beside `--launch` win: `--cta` picks another CTA, an `--arg` at the same parameter
/// and offset replaces the file's value instead of clashing with it, and a positional PTX file
/// replaces the file's. The override: K = 128 instead of 256 in CuTe's wgmma_tma_sm90, whose
/// prologue loads all K_PIPE_MAX = 3 stages whatever K (the third tile past K = 128 is out of
/// bounds, zero-filled) and whose main loop loads while tiles remain: 3 tiles x 2 operands x 16
/// boxes of 64x8 f16 = 96 TMA loads of 1 KiB per CTA, where the file's K = 256 (4 tiles) makes
/// 128; the file's cluster of 2 runs both CTAs, so the totals are twice that (192, 256).
#[test]
fn flags_beside_a_launch_file_override_it() {
    let f = launch("cute_wgmma_tma_sm90");
    let o = tilelab(&["ptx", "--launch", &f, "--cta", "1,0,0", "--json"]);
    assert!(o.status.success());
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["cta"], serde_json::json!([1, 0, 0]));
    let file = totals(&["ptx", "--launch", &f]);
    assert_eq!(file["tma_ld"], 256);
    let k128 = totals(&["ptx", "--launch", &f, "--arg", "0=s32:256,128,128"]);
    assert_eq!(k128["tma_ld"], 192);
    assert_eq!(k128["tma_ld_bytes"], 196608);
    let one = totals(&["ptx", "--launch", &f, "--cluster", "1,1,1"]);
    assert_eq!(one["tma_ld"], 128);
    // The positional PTX file is the one run: the hand-written pipeline's kernel (#0, its only
    // one) with the file's block of 128, which its .reqntid 160 refuses.
    let e = error(&[
        "ptx",
        &format!("{DIR}/hand_tma_wgmma_pipe.ptx"),
        "--launch",
        &f,
    ]);
    assert!(
        e.contains("hand_tma_wgmma_pipe.ptx: kernel 'tma_wgmma_pipe' requires a block of 160"),
        "{e}"
    );
}

/// Bad launch files: one line naming the file and the JSON path, exit 2, for each command.
#[test]
fn bad_launch_files_name_the_file_and_the_path() {
    let cases: [(&str, &str, &str); 5] = [
        (
            "\"version\": 1",
            "\"version\": 7",
            "version: version 7 is not supported",
        ),
        ("\"grid\"", "\"grids\"", "grids: unknown field `grids`"),
        (
            "\"from\"",
            "\"origin\"",
            "args[0].origin: unknown field `origin`",
        ),
        (":128B", ":96B", "args[3].tensor_map:"),
        (
            "\"block\": [\n  128",
            "\"block\": [\n  0",
            "block[0]: 0: every dimension must be at least 1",
        ),
    ];
    for (from, to, want) in cases {
        let (_d, p) = edited("cute_wgmma_tma_sm90", |t| t.replacen(from, to, 1));
        let p = p.to_str().unwrap();
        for cmd in [
            vec!["ptx", "--launch", p],
            vec!["tui", "--launch", p],
            vec!["verify", "--launch", p],
        ] {
            let e = error(&cmd);
            assert!(
                e.contains(&format!("launch file '{p}': {want}")),
                "{cmd:?}: {e}"
            );
        }
    }
    let e = error(&["ptx", "--launch", "/nonexistent/l.json"]);
    assert!(
        e.contains("cannot read launch file '/nonexistent/l.json'"),
        "{e}"
    );
    let e = error(&["ptx", "--launch", "/dev/zero"]);
    assert!(e.contains("not a regular file"), "{e}");
    // The PTX path is relative to the launch file: a copy elsewhere names the PTX it lacks.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("l.json");
    std::fs::copy(launch("tt_matmul_tma"), &p).unwrap();
    let e = error(&["ptx", "--launch", p.to_str().unwrap()]);
    assert!(
        e.contains("cannot read PTX file") && e.contains("../tt_matmul_tma.ptx"),
        "{e}"
    );
}

/// A parameter a launch file does not give is named as with flags (here: the struct bytes
/// after CuTe's first CUtensorMap, whose address the kernel takes).
#[test]
fn a_missing_struct_value_names_the_parameter() {
    let (_d, p) = edited("cute_wgmma_tma_sm90", |t| {
        let v: Value = serde_json::from_str(t).unwrap();
        let mut v = v;
        let args = v["args"].as_array_mut().unwrap();
        args.retain(|a| !(a["param"] == 3 && a.get("offset").is_some()));
        v.to_string()
    });
    let e = error(&["ptx", "--launch", p.to_str().unwrap()]);
    assert!(
        e.contains("aram_3 (.b8[256], index 3; reads bytes 128..256"),
        "{e}"
    );
}

/// `--help` says what a launch file holds and that flags beside it override it.
#[test]
fn help_says_flags_override() {
    for cmd in ["ptx", "tui", "verify"] {
        let o = tilelab(&[cmd, "--help"]);
        let h = String::from_utf8_lossy(&o.stdout);
        assert!(h.contains("--launch"), "{cmd}");
        assert!(h.contains("override"), "{cmd}: {h}");
    }
}
