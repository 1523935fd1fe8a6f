//! What stumbled in the new-user trial of 2026-12-01 (`docs/log/2026-12-01-new-user-trial.md`),
//! run as the user ran it: each test is one stumble and the behaviour it has now.

use crate::common::run;
use run::tilelab;

use std::process::Command;
use std::time::{Duration, Instant};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

/// The one-line error of a failing run (exit 2, nothing on stdout).
fn error(args: &[&str]) -> String {
    let o = tilelab(args);
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{args:?} should fail: {e}");
    assert!(o.stdout.is_empty(), "{args:?}");
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    assert!(e.starts_with("tilelab: error: "), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    e
}

/// `tilelab ptx /dev/zero` read until the OOM killer ended it (exit 137, 24 GB machine); then
/// at most 64 MiB were read; now (issue #26) a device is refused before any byte is read, and
/// a regular file over the limit is refused by its size. The same path through `tui --ptx`.
#[test]
fn an_endless_file_is_refused_not_read_until_memory_runs_out() {
    if !std::path::Path::new("/dev/zero").exists() {
        return; // not a Unix-like system: nothing to read endlessly
    }
    let start = Instant::now();
    let e = error(&["ptx", "/dev/zero", "--grid", "1", "--block", "32"]);
    assert_eq!(
        e,
        "tilelab: error: cannot read PTX file '/dev/zero': not a regular file (it is a character device); a PTX module must be a regular file\n"
    );
    let e = error(&["tui", "--ptx", "/dev/zero", "--grid", "1", "--block", "32"]);
    assert!(e.contains("it is a character device"), "{e}");
    // A sparse regular file one byte over 64 MiB: refused by its size, nothing read.
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.ptx");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((64 << 20) + 1)
        .unwrap();
    let e = error(&["ptx", big.to_str().unwrap(), "--grid", "1", "--block", "32"]);
    assert!(e.contains("more than 67108864 bytes"), "{e}");
    assert!(e.contains("PTX module"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(60));
}

/// Runs tilelab with `XDG_DATA_HOME=data`, killing it after 20 s (a FIFO open that blocks would
/// otherwise hang the test too): (exit code, stderr). `None` as the code: it had to be killed.
fn run_bounded(args: &[&str], data: &std::path::Path) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tilelab"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", data)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let mut e = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut e).unwrap();
            return (st.code(), e);
        }
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            return (None, String::new());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Issue #26: a FIFO as `progress.json` hung `lessons answer`; `/dev/zero` or `/dev/urandom`
/// behind a symlink grew it to 2 GB. Every file tilelab reads is now a regular file: a FIFO (no
/// writer), a symlink to a device, each in the place of every kind of input, is a one-line
/// error at once (exit 2) that names the file and says what it is.
#[cfg(unix)]
#[test]
fn every_input_must_be_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let urandom = d.join("urandom");
    std::os::unix::fs::symlink("/dev/urandom", &urandom).unwrap();
    let data = d.join("data");
    std::fs::create_dir_all(data.join("tilelab")).unwrap();
    let progress = data.join("tilelab").join("progress.json");
    let lessons = d.join("lessons");
    std::fs::create_dir_all(&lessons).unwrap();
    for (bad, kind) in [(&fifo, "FIFO (named pipe)"), (&urandom, "character device")] {
        let f = bad.to_str().unwrap();
        let _ = std::fs::remove_file(&progress);
        std::os::unix::fs::symlink(bad, &progress).unwrap();
        let _ = std::fs::remove_file(lessons.join("a.toml"));
        std::os::unix::fs::symlink(bad, lessons.join("a.toml")).unwrap();
        let l = lessons.to_str().unwrap();
        for (args, what) in [
            (vec!["ptx", f, "--grid", "1", "--block", "32"], "PTX module"),
            (
                vec!["tui", "--ptx", f, "--grid", "1", "--block", "32"],
                "PTX module",
            ),
            (vec!["sim", "replay", f], "replay file"),
            (
                vec!["lessons", "check", "banks", "--hw", f],
                "hardware record file",
            ),
            (vec!["lessons", "--dir", l], "lesson file"),
            (
                vec!["lessons", "answer", "banks", "4", "1"],
                "progress file",
            ),
            (vec!["lessons", "progress"], "progress file"),
        ] {
            let (code, e) = run_bounded(&args, &data);
            assert_eq!(code, Some(2), "{args:?} with {kind}: {e}");
            assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
            assert!(
                e.contains(&format!(
                    "not a regular file (it is a {kind}); a {what} must be a regular file"
                )),
                "{args:?}: {e}"
            );
        }
    }
}

/// A README, a TOML file or a binary given to `tilelab ptx` named a line deep inside it
/// ("line 39: unterminated /* comment"); now the error says it is not PTX.
#[test]
fn a_file_that_is_not_ptx_says_so() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = format!("{root}/README.md");
    let e = error(&["ptx", &readme, "--grid", "1", "--block", "32"]);
    assert!(
        e.contains("line 1: not a PTX module: PTX begins with a .version directive"),
        "{e}"
    );
    assert!(e.contains("found '#'"), "{e}");
    let toml = format!("{root}/Cargo.toml");
    let e = error(&["ptx", &toml, "--grid", "1", "--block", "32"]);
    assert!(
        e.contains("not a PTX module") && e.contains("'[package]'"),
        "{e}"
    );
    // A binary: not UTF-8.
    let bin = env!("CARGO_BIN_EXE_tilelab");
    let e = error(&["ptx", bin, "--grid", "1", "--block", "32"]);
    assert!(e.contains("not text (invalid UTF-8 at byte"), "{e}");
    // A CUDA source instead of its PTX.
    let cu = format!("{root}/kernels/lesson_banks.cu");
    let e = error(&["ptx", &cu, "--grid", "1", "--block", "32"]);
    assert!(e.contains("not a PTX module"), "{e}");
}

/// Usage errors pointed every command to `tilelab --help`; they name the subcommand's own help.
#[test]
fn usage_errors_point_to_the_subcommands_help() {
    let e = error(&["sim", "bank-conflicts", "--acess", "col16"]);
    assert!(e.contains("'--access'"), "{e}");
    assert!(
        e.ends_with("see 'tilelab sim bank-conflicts --help'\n"),
        "{e}"
    );
    let col16 = format!("{DATA}/ptx_hand/col16.ptx");
    let e = error(&["ptx", &col16, "--grid", "1", "--block", "32", "--warp", "1"]);
    assert!(e.ends_with("see 'tilelab ptx --help'\n"), "{e}");
    // A global flag's value is not taken for a subcommand name.
    let e = error(&["--color", "never", "lessons", "show", "--bogus"]);
    assert!(e.ends_with("see 'tilelab lessons show --help'\n"), "{e}");
    let e = error(&["simm"]);
    assert!(e.ends_with("see 'tilelab --help'\n"), "{e}");
}

/// `--block 99999999999999` said "'99999999999999' is not a whole number"; `--dynamic-smem`
/// past u32 printed Rust's "number too large to fit in target type".
#[test]
fn huge_numbers_are_named_too_large() {
    let col16 = format!("{DATA}/ptx_hand/col16.ptx");
    let e = error(&[
        "ptx",
        &col16,
        "--kernel",
        "col16",
        "--grid",
        "1",
        "--block",
        "99999999999999",
    ]);
    assert!(e.contains("'99999999999999' is too large"), "{e}");
    assert!(!e.contains("not a whole number"), "{e}");
    let e = error(&[
        "ptx",
        &col16,
        "--grid",
        "1",
        "--block",
        "32",
        "--dynamic-smem",
        "99999999999999999999999",
    ]);
    assert!(
        e.contains("too large: shared memory per block is at most 232448 bytes"),
        "{e}"
    );
    let e = error(&["sim", "bank-conflicts", "--tile", "99999999999x4"]);
    assert!(e.contains("must be 1..=4096, not 99999999999"), "{e}");
}

/// `tilelab tui swizzle --warp 2 --max-steps 5` opened the lesson and ignored both flags (exit 0).
#[test]
fn ptx_only_flags_with_a_lesson_are_an_error() {
    for flag in [
        ["--warp", "2"],
        ["--max-steps", "5"],
        ["--max-instructions", "9"],
    ] {
        let e = error(&["tui", "swizzle", flag[0], flag[1]]);
        assert!(e.contains("go with --ptx FILE"), "{flag:?}: {e}");
    }
}

/// `tilelab explain bank conflict` (two words, no quotes) was "unexpected argument 'conflict'".
#[test]
fn explain_takes_several_words() {
    let o = tilelab(&["explain", "bank", "conflict"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.starts_with("bank conflict\n"), "{s}");
}

/// "(1 warps)" and "in 1 executions" in `tilelab ptx`'s report.
#[test]
fn one_warp_is_singular() {
    let col16 = format!("{DATA}/ptx_hand/col16.ptx");
    let o = tilelab(&[
        "ptx", &col16, "--kernel", "col16", "--grid", "1", "--block", "32",
    ]);
    assert!(o.status.success());
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("block (32,1,1) (1 warp);"), "{s}");
    assert!(
        s.contains("line 21: 15 conflicts in 1 execution, 16-way bank conflict (16 wavefronts per request for 1 ideal)"),
        "{s}"
    );
}

/// `tilelab lessons answer …` with its progress kept in a directory of its own.
fn answer(args: &[&str]) -> (Option<i32>, String, String) {
    // Inside target/ (CARGO_TARGET_TMPDIR), not /tmp: nothing is left behind outside the build.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tilelab-new-user-{}", std::process::id()));
    let o = Command::new(env!("CARGO_BIN_EXE_tilelab"))
        .args(["lessons", "answer"])
        .args(args)
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", &dir)
        .output()
        .expect("run tilelab");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Trial 2026-12-01 (#18): T(0, 7) of the first lesson's f32 tile was "in lane 7 (register 0,
/// low half)", but an f32 element is the whole register; a wrong lane "holds (0, 8)" without
/// the tile's name.
#[test]
fn a_32_bit_element_is_the_whole_register() {
    let (code, out, _) = answer(&["warps-and-banks", "1", "8"]);
    assert_eq!(code, Some(1));
    assert!(
        out.starts_with("✗ Not lane 8: it holds T(0, 8); T(0, 7) is in lane 7 (register 0)\n"),
        "{out}"
    );
    assert!(!out.contains("half"), "{out}");
    // 16-bit fragments keep their halves: A(9, 3) of mma m16n8k16 is a1's high half of lane 5.
    let (code, out, _) = answer(&["mma", "3", "5"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("A(9, 3) is in lane 5 (a1, high half)"),
        "{out}"
    );
}

/// Trial 2026-12-01 (#18): answering the conflicts when the wavefronts were asked (31 for a
/// 32-way read) got the same explanation as any wrong number; "1 bank conflicts"; and the
/// first lessons' explanations spoke of a "phase" they had not introduced.
#[test]
fn a_wrong_count_that_is_the_other_count_says_so() {
    let (code, out, _) = answer(&["banks", "5", "31"]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("Not 31: the simulator gives 32 wavefronts under 'row' (31 is the number of bank conflicts; wavefronts = bank conflicts + ideal = 31 + 1)"),
        "{out}"
    );
    assert!(out.contains("32 wavefronts where 1 would do: bank 0 is asked for 32 different 4-byte words (lanes 0, 1, 2"), "{out}");
    assert!(!out.contains("phase"), "{out}");
    let (code, out, _) = answer(&["banks", "4", "2"]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("gives 1 bank conflict under 'row' (2 is the number of wavefronts; bank conflicts = wavefronts − ideal = 2 − 1)"),
        "{out}"
    );
    let (_, out, _) = answer(&["warps-and-banks", "3", "pad:2"]);
    assert!(out.contains("still has 1 bank conflict under it"), "{out}");
    // Several phases keep the word: LDS.128 is served a quarter-warp at a time.
    let (_, out, _) = answer(&["vectors", "2", "1"]);
    assert!(out.contains("4 phases"), "{out}");
}

/// Trial 2026-12-01 (#18): `answer warps-and-banks 4 -1` was "unexpected argument '-1'", and
/// a 20-digit answer "is not a whole number".
#[test]
fn negative_and_huge_answers_say_what_is_wrong() {
    let (code, out, e) = answer(&["warps-and-banks", "4", "-1"]);
    assert_eq!(code, Some(2), "{out}{e}");
    assert_eq!(
        e,
        // The example is not the step's answer (2): see exercises.rs, no_answer_example_is_the_answer.
        "tilelab: error: answer '-1' is not a whole number, e.g. 6; a count is never negative\n"
    );
    let (code, _, e) = answer(&["warps-and-banks", "4", "99999999999999999999"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("it is larger than 4294967295"), "{e}");
    // Flags still work after the answer.
    let (code, out, _) = answer(&["warps-and-banks", "4", "2", "--json"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("\"correct\": true"), "{out}");
}

/// Trial 2026-12-01 (#18): `explain bank-conflict`, `explain ld.shared.b32` (the lessons'
/// instruction column) and `explain cf` (the `wf/cf` column) were unknown terms.
#[test]
fn explain_knows_the_spellings_the_lessons_show() {
    for (term, entry) in [
        ("bank-conflict", "bank conflict\n"),
        ("bank_conflicts", "bank conflict\n"),
        ("cf", "bank conflict\n"),
        ("ld.shared.b32", "LDS\n"),
        ("st.shared", "LDS\n"),
        ("ld.shared.u16", "LDS\n"),
    ] {
        let o = tilelab(&["explain", term]);
        let s = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{term}");
        assert!(s.starts_with(entry), "{term}: {s}");
    }
    // The `wf/cf` columns of `lessons show` are spelled out.
    let o = tilelab(&["lessons", "show", "warps-and-banks"]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(
        s.contains("wf/cf = wavefronts / bank conflicts of the step's request"),
        "{s}"
    );
}

/// Trial 2026-12-01 (#16): a missing PTX file printed the OS error twice ("No such file or
/// directory (os error 2): No such file or directory (os error 2)"); `sim replay DIR` said the
/// directory "is not a JSON array of records … read error at byte 0".
#[test]
fn file_errors_say_it_once_and_name_a_directory() {
    let e = error(&["ptx", "/nonexistent/k.ptx", "--grid", "1", "--block", "32"]);
    assert_eq!(
        e,
        "tilelab: error: cannot read PTX file '/nonexistent/k.ptx': No such file or directory (os error 2)\n"
    );
    let e = error(&["tui", "--ptx", DATA, "--grid", "1", "--block", "32"]);
    assert_eq!(e.matches("os error 21").count(), 1, "{e}");
    let e = error(&["sim", "replay", DATA]);
    assert!(e.contains("it is a directory"), "{e}");
    assert!(!e.contains("JSON array"), "{e}");
}

/// Trial 2026-12-01 (#16): `tilelab --help` said `lessons` only lists them and `tui` only
/// steps through a lesson; `tui --help`'s keys left out `a` (answer); `sim replay --help`
/// sent the reader to `tilelab sim replay --help`.
#[test]
fn help_names_what_each_command_does() {
    let o = tilelab(&["--help"]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("answer its questions"), "{s}");
    assert!(s.contains("one warp of your own PTX kernel (--ptx)"), "{s}");
    let o = tilelab(&["tui", "--help"]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("a answer the step's question"), "{s}");
    let o = tilelab(&["sim", "replay", "--help"]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(!s.contains("(see `tilelab sim replay --help`)"), "{s}");
    assert!(s.contains("lane_byte_offsets[32]"), "{s}");
}

/// Trial 2026-12-01 (#17): the README showed the Triton FA v1 conflict but not its fix, nor
/// where `--arg 6=64` comes from; the lesson said "16-way" while `tilelab ptx` said 8.0
/// wavefronts per ideal one and ncu "32-way". The README's fix example prints what its comment
/// promises; issue #26: "N-way" is ncu's and the article's (wavefronts per request) everywhere,
/// and the report says which numbers it is.
#[test]
fn the_triton_fix_is_in_the_readme_and_the_ways_agree() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    assert!(
        readme.contains("tilelab ptx tests/data/ptx/triton_fa_v1_kt.ptx --grid 1 --block 128")
            && readme.contains("# the fix, K stored transposed: no bank conflicts on any line"),
        "README"
    );
    assert!(readme.contains("`--arg 6=64` is the seventh `.param`"));
    let launch = [
        "--grid",
        "1",
        "--block",
        "128",
        "--dynamic-smem",
        "32768",
        "--arg",
        "6=64",
        "--arg",
        "7=0.125",
    ];
    let run = |fixture: &str| {
        let f = format!("{DATA}/ptx/{fixture}");
        let mut args = vec!["ptx", f.as_str()];
        args.extend(launch);
        let o = tilelab(&args);
        assert!(o.status.success(), "{fixture}");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let kt = run("triton_fa_v1_kt.ptx");
    assert!(kt.contains("\nno bank conflicts on any line\n"), "{kt}");
    assert!(
        kt.contains("shared loads (LDS+LDSM): 7808 wavefronts, 0 bank conflicts"),
        "{kt}"
    );
    let trans = run("triton_fa_v1_trans.ptx");
    assert!(
        trans.contains("line 402: 448 conflicts in 16 executions, 32-way bank conflict (32 wavefronts per request for 4 ideal, 8 per ideal one)"),
        "{trans}"
    );
    let o = tilelab(&["lessons", "show", "reading-triton-ptx"]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(
        s.contains("ncu calls line 402 *32-way*, and so does `tilelab ptx`:"),
        "{s}"
    );
    // The article's 16-way is the 4-byte read: 16 wavefronts per request.
    let o = tilelab(&[
        "sim",
        "bank-conflicts",
        "--access",
        "col16",
        "--layout",
        "row",
    ]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("16.00 wavefronts per request on average: 16-way bank conflict (16 wavefronts per request for 1 ideal)"), "{s}");
}

/// Trial 2026-12-01 (#16): `--layout pad:-1` said "pad '-1' is not a whole number".
#[test]
fn a_negative_pad_is_named_negative() {
    let e = error(&["sim", "bank-conflicts", "--layout", "pad:-1"]);
    assert!(
        e.contains("bad layout 'pad:-1': pad '-1' is negative; it counts elements, 0 or more"),
        "{e}"
    );
    assert!(e.contains("allowed: row | col | trans | pad:N"), "{e}");
}
