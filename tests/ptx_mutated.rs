//! Issue 12 (robustness of `tilelab ptx`): every PTX fixture measured on the H200
//! (`tests/data/ptx/*.ptx`, one launch of each from its JSON), mutated at random the way a
//! hand-edited or truncated file goes wrong, through the library function the command calls
//! ([`tilelab::ptx::simulate`]) with a small instruction budget.
//!
//! Mutations: a line deleted, duplicated or swapped with another; a token replaced by another
//! token of the same file; the text truncated; an integer literal replaced by an extreme value
//! (0, -1, 2^31, 2^32, 2^63 - 1, 2^64, …); a register name changed (another class, a huge
//! index); garbage inserted (NUL, U+FFFD for bytes that are not UTF-8, braces, comment openers,
//! quotes, control characters).
//!
//! The property: no panic; the run finishes (its warp instructions stay within the budget); an
//! error is one non-empty line, and a parse or decode error names a line of the text.
//! `regressions` holds each input the property found that once failed, as a plain test.

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;
use tilelab::ptx::report::PtxError;
use tilelab::ptx::{self, Launch};

#[path = "common/fixture_launch.rs"]
mod fixture_launch;
use fixture_launch::{DIR, dim};
/// Warp instructions per run: every lesson kernel, `triton_softmax`, `triton_transpose`,
/// `triton_matmul_2w` and the small GEMMs finish within it, the others stop at it past their
/// first `ldmatrix`/`mma`; a debug build runs 2,000 in 1 to 350 ms.
const BUDGET: u64 = 2_000;
/// Fixtures up to this many lines are "small" (parsed in tens of milliseconds by a debug
/// build): the lessons, the small GEMMs and Triton kernels. The FA2 kernels, the one-warp
/// 64x64x128 GEMMs and Triton's FlashAttention v1 are "large" and get fewer cases.
const SMALL_LINES: usize = 1_100;

struct Fixture {
    name: String,
    src: String,
    kernel: String,
    launch: Launch,
    /// The file's tokens (runs of name and number characters; opcodes split at their dots), for
    /// token replacement.
    tokens: Vec<String>,
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '%' | '$')
}

/// Byte ranges of the tokens of `s`.
fn token_ranges(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        match (is_token_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(b)) => {
                out.push((b, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(b) = start {
        out.push((b, s.len()));
    }
    out
}

/// One launch of every PTX module (the first launch file naming it, by file name).
fn fixtures() -> &'static [Fixture] {
    static F: OnceLock<Vec<Fixture>> = OnceLock::new();
    F.get_or_init(|| {
        let mut files: Vec<_> = std::fs::read_dir(DIR)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        let mut out: Vec<Fixture> = Vec::new();
        for path in files {
            let f: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let ptx_name = f["ptx"].as_str().unwrap();
            if out.iter().any(|x| x.name == ptx_name) {
                continue;
            }
            let src = std::fs::read_to_string(Path::new(DIR).join(ptx_name)).unwrap();
            let l = &f["launch"];
            let args = fixture_launch::args(l);
            let launch = Launch {
                grid: dim(&l["grid"]),
                block: dim(&l["block"]),
                cta: [0, 0, 0],
                args,
                dynamic_smem: Some(
                    u32::try_from(l["dynamic_smem_bytes"].as_u64().unwrap()).unwrap(),
                ),
                max_instructions: BUDGET,
            };
            let mut tokens: Vec<String> = token_ranges(&src)
                .into_iter()
                .map(|(a, b)| src[a..b].to_string())
                .collect();
            tokens.sort();
            tokens.dedup();
            out.push(Fixture {
                name: ptx_name.to_string(),
                kernel: l["kernel"].as_str().unwrap().to_string(),
                src,
                launch,
                tokens,
            });
        }
        out
    })
}

/// Integer literals a mutation writes.
const EXTREMES: [&str; 14] = [
    "0",
    "-1",
    "1",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "0xffffffffffffffff",
    "340282366920938463463374607431768211456",
];

/// Text a mutation inserts: bytes that are not UTF-8 arrive as U+FFFD (what a lossy read
/// makes of them), and the characters the splitter and parsers treat specially.
const GARBAGE: [&str; 24] = [
    "\u{0}",
    "\u{FFFD}",
    "\u{FFFD}\u{FFFD}\u{0}\u{7f}",
    "é",
    "\u{1F600}",
    "{",
    "}",
    ";",
    "\r",
    "\t",
    "\n",
    "[",
    "]",
    "//",
    "/*",
    "\"",
    "@",
    "!",
    "|",
    "<",
    ">",
    "::",
    "%",
    "{ { ;",
];

/// Register classes a flipped register name takes.
const REG_CLASSES: [&str; 8] = ["%r", "%rd", "%f", "%fd", "%p", "%rs", "%hh", "%tid."];

#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(Index),
    DuplicateLine(Index),
    SwapLines(Index, Index),
    ReplaceToken(Index, Index),
    Truncate(Index),
    ExtremeInt(Index, usize),
    FlipRegister(Index, usize, u32),
    Garbage(Index, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::DeleteLine),
        any::<Index>().prop_map(Mutation::DuplicateLine),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::ReplaceToken(a, b)),
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), 0..EXTREMES.len()).prop_map(|(a, k)| Mutation::ExtremeInt(a, k)),
        (
            any::<Index>(),
            0..REG_CLASSES.len() + 2,
            prop_oneof![Just(0u32), Just(1_000_000), Just(u32::MAX), 0u32..64]
        )
            .prop_map(|(a, k, n)| Mutation::FlipRegister(a, k, n)),
        (any::<Index>(), 0..GARBAGE.len()).prop_map(|(a, k)| Mutation::Garbage(a, k)),
    ]
}

/// The byte offsets of the line starts of `s`.
fn line_ranges(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if c == '\n' {
            out.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < s.len() {
        out.push((start, s.len()));
    }
    out
}

/// The tokens of `s` that satisfy `f`, as byte ranges.
fn tokens_where(s: &str, f: impl Fn(&str) -> bool) -> Vec<(usize, usize)> {
    token_ranges(s)
        .into_iter()
        .filter(|&(a, b)| f(&s[a..b]))
        .collect()
}

/// Character boundaries of `s`, including its end.
fn boundaries(s: &str) -> Vec<usize> {
    s.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()))
        .collect()
}

fn apply(s: &mut String, m: &Mutation, tokens: &[String]) {
    let lines = line_ranges(s);
    match m {
        Mutation::DeleteLine(a) if !lines.is_empty() => {
            let (x, y) = lines[a.index(lines.len())];
            s.replace_range(x..y, "");
        }
        Mutation::DuplicateLine(a) if !lines.is_empty() => {
            let (x, y) = lines[a.index(lines.len())];
            let mut l = s[x..y].to_string();
            if !l.ends_with('\n') {
                l.push('\n');
            }
            s.insert_str(x, &l);
        }
        Mutation::SwapLines(a, b) if !lines.is_empty() => {
            let (i, j) = (a.index(lines.len()), b.index(lines.len()));
            let (i, j) = (i.min(j), i.max(j));
            if i != j {
                let mut v: Vec<String> = lines.iter().map(|&(x, y)| s[x..y].to_string()).collect();
                for l in &mut v {
                    if !l.ends_with('\n') {
                        l.push('\n');
                    }
                }
                v.swap(i, j);
                *s = v.concat();
            }
        }
        Mutation::ReplaceToken(a, b) if !tokens.is_empty() => {
            let t = token_ranges(s);
            if !t.is_empty() {
                let (x, y) = t[a.index(t.len())];
                s.replace_range(x..y, &tokens[b.index(tokens.len())]);
            }
        }
        Mutation::Truncate(a) => {
            let b = boundaries(s);
            s.truncate(b[a.index(b.len())]);
        }
        Mutation::ExtremeInt(a, k) => {
            let t = tokens_where(s, |t| {
                t.starts_with(|c: char| c.is_ascii_digit())
                    && !t.starts_with("0f")
                    && !t.starts_with("0d")
            });
            if !t.is_empty() {
                let (x, y) = t[a.index(t.len())];
                s.replace_range(x..y, EXTREMES[*k]);
            }
        }
        Mutation::FlipRegister(a, k, n) => {
            let t = tokens_where(s, |t| t.starts_with('%'));
            if !t.is_empty() {
                let (x, y) = t[a.index(t.len())];
                let old = &s[x..y];
                let digits: String = old.chars().filter(char::is_ascii_digit).collect();
                let new = match *k {
                    // Same class, another index.
                    k if k == REG_CLASSES.len() => {
                        let class: String =
                            old.chars().take_while(|c| !c.is_ascii_digit()).collect();
                        format!("{class}{n}")
                    }
                    // The index dropped.
                    k if k == REG_CLASSES.len() + 1 => {
                        old.chars().take_while(|c| !c.is_ascii_digit()).collect()
                    }
                    k => format!("{}{digits}", REG_CLASSES[k]),
                };
                s.replace_range(x..y, &new);
            }
        }
        Mutation::Garbage(a, k) => {
            let b = boundaries(s);
            s.insert_str(b[a.index(b.len())], GARBAGE[*k]);
        }
        _ => {}
    }
}

/// The property for one mutated text: no panic (a panic fails the test), the budget holds,
/// errors are one line and parse/decode errors name a line of the text.
fn check(text: &str, kernel: Option<&str>, launch: &Launch) -> Result<(), TestCaseError> {
    let lines = u32::try_from(text.lines().count()).unwrap() + 1;
    match ptx::simulate(text, kernel, launch) {
        Ok(r) => prop_assert!(
            r.totals.warp_instructions <= launch.max_instructions,
            "{} warp instructions under a budget of {}",
            r.totals.warp_instructions,
            launch.max_instructions
        ),
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(!msg.trim().is_empty(), "empty error: {e:?}");
            prop_assert!(
                !msg.contains(['\n', '\r']),
                "error of more than one line: {msg:?}"
            );
            match e {
                PtxError::Parse(p) => prop_assert!(p.line >= 1 && p.line <= lines, "{p}"),
                PtxError::Decode(d) => prop_assert!(d.line >= 1 && d.line <= lines, "{d}"),
                _ => {}
            }
        }
    }
    Ok(())
}

#[test]
fn every_fixture_runs_unmutated_within_the_budget_or_stops_at_it() {
    // The texts the mutations start from: each fixture either finishes within the budget or
    // stops at it with the budget error, never anything else.
    let fx = fixtures();
    let modules = std::fs::read_dir(DIR)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "ptx")
        })
        .count();
    assert_eq!(
        fx.len(),
        modules,
        "one launch per PTX module of tests/data/ptx"
    );
    assert_eq!(modules, 30);
    let mut finished = Vec::new();
    for f in fx {
        match ptx::simulate(&f.src, Some(&f.kernel), &f.launch) {
            Ok(r) => {
                assert!(r.totals.warp_instructions <= BUDGET, "{}", f.name);
                finished.push(f.name.as_str());
            }
            Err(PtxError::Run(ptx::RunError::Budget { limit, .. })) => {
                assert_eq!(limit, BUDGET, "{}", f.name)
            }
            Err(e) => panic!("{}: {e}", f.name),
        }
    }
    assert_eq!(finished.len(), 15, "{finished:?}");
}

/// `PROPTEST_CASES` when set (proptest's own variable: deeper runs by hand), else `n`.
fn cases(n: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n)
}

/// Applies `muts` to fixture `which` of those with `small` size and checks the property.
fn mutate_and_check(
    small: bool,
    which: Index,
    muts: &[Mutation],
    named: bool,
) -> Result<(), TestCaseError> {
    let fx: Vec<&Fixture> = fixtures()
        .iter()
        .filter(|f| (f.src.lines().count() <= SMALL_LINES) == small)
        .collect();
    let f = fx[which.index(fx.len())];
    let mut text = f.src.clone();
    for m in muts {
        apply(&mut text, m, &f.tokens);
    }
    check(&text, named.then_some(f.kernel.as_str()), &f.launch)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), .. ProptestConfig::default() })]

    /// Random mutations of a small fixture: see the module docs.
    #[test]
    fn mutated_small_fixtures_never_panic_and_fail_in_one_line(
        which in any::<Index>(),
        muts in prop::collection::vec(mutation(), 1..4),
        named in any::<bool>(),
    ) {
        mutate_and_check(true, which, &muts, named)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(12), .. ProptestConfig::default() })]

    /// The same for the large fixtures (the FA2 kernels among them), fewer cases: a debug
    /// build parses one in 0.1 to 0.4 s.
    #[test]
    fn mutated_large_fixtures_never_panic_and_fail_in_one_line(
        which in any::<Index>(),
        muts in prop::collection::vec(mutation(), 1..4),
        named in any::<bool>(),
    ) {
        mutate_and_check(false, which, &muts, named)?;
    }
}

/// What the property found and what reading the code beside it found (each fixed in
/// `src/ptx`), and what mutation testing found unchecked (docs/mutants.md), kept as plain tests.
mod regressions {
    use super::*;

    const HEAD: &str = ".version 8.7\n.target sm_90\n.address_size 64\n";

    fn launch(block: u32) -> Launch {
        Launch {
            grid: [1, 1, 1],
            block: [block, 1, 1],
            cta: [0, 0, 0],
            args: vec![],
            dynamic_smem: None,
            max_instructions: 1_000,
        }
    }

    #[test]
    fn a_statement_cut_by_a_brace_is_a_one_line_error() {
        // A line of a Triton file's DWARF `.section` swapped to the top: the section's
        // `.b8 …` lines became one statement ending at `}`, and the error quoted all of them,
        // newlines and comments included.
        let src = ".version 8.7\n.b8 1 // Abbreviation Code\n.b8 17 // DW_TAG_compile_unit\n}\n";
        let e = ptx::simulate(src, None, &launch(32)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: expected ';' after '.b8 1 // Abbreviation Code .b8 17 // DW_TAG_compile_unit'"
        );
    }

    #[test]
    fn a_branch_to_a_label_closing_the_body_exits_its_lanes() {
        // The `ret` between the last label and `}` deleted: the branch target is one past the
        // last instruction, which indexed past the reconvergence pass's block table (a panic).
        // Lanes 0-15 branch there and exit; lanes 16-31 store: one STS of 16 consecutive words.
        let src = format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .pred %p<2>;\n.reg .b32 %r<3>;\n\
             .shared .align 4 .b8 s[128];\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\n\
             setp.lt.u32 %p1, %r1, 16;\n@%p1 bra $END;\nst.shared.u32 [%r2], %r1;\n$END:\n}}\n"
        );
        let r = ptx::simulate(&src, None, &launch(32)).unwrap();
        assert_eq!(r.totals.sass.STS, 1);
        assert_eq!(r.totals.shared_st_wavefronts, 1);
        assert_eq!(r.totals.smem_touched, 128);
        assert_eq!(r.totals.warp_instructions, 5);
    }

    #[test]
    fn parameters_past_cudas_limit_are_a_decode_error() {
        // `.align 1` turned into `.align 4294967295`: the offset saturated at 2^32 - 1 and the
        // machine sliced the parameter bytes past their end (a panic, after a 4 GiB
        // allocation).
        let src = format!(
            "{HEAD}.visible .entry k(.param .u64 a, .param .align 4294967295 .u32 b)\n{{\nret;\n}}\n"
        );
        let e = ptx::simulate(&src, None, &launch(32)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 4: parameter 'b' (.align 4294967295, 4 bytes) ends past 32764 bytes, CUDA's limit for a kernel's parameters"
        );
        let src = format!("{HEAD}.visible .entry k(.param .b8 a[40000])\n{{\nret;\n}}\n");
        let e = ptx::simulate(&src, None, &launch(32)).unwrap_err();
        assert!(e.to_string().contains("'a' (.align 1, 40000 bytes)"), "{e}");
    }

    #[test]
    fn an_atomic_outside_shared_memory_is_an_error() {
        // `atom.shared` sliced shared memory at the lane's address unchecked (a panic).
        let src = format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<3>;\n.shared .align 4 .b8 s[64];\n\
             mov.u32 %r1, 4096;\natom.shared.add.u32 %r2, [%r1], 1;\nret;\n}}\n"
        );
        let e = ptx::simulate(&src, None, &launch(32)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 9: lane 0: bytes 4096..4100 are outside shared memory of 64 bytes"
        );
        // Through a generic address inside the shared window whose last bytes are past its end.
        let src = format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .b64 %rd<3>;\n.reg .b32 %r<3>;\n\
             .shared .align 4 .b8 s[66];\nmov.u64 %rd1, s;\ncvta.shared.u64 %rd2, %rd1;\n\
             add.s64 %rd2, %rd2, 64;\natom.add.u32 %r2, [%rd2], 1;\nret;\n}}\n"
        );
        let e = ptx::simulate(&src, None, &launch(32)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 12: lane 0: bytes 64..68 are outside shared memory of 66 bytes"
        );
        // In range it adds: every lane adds 1 to word 0 and gets the old value, lane l sees
        // l (lane order), and reads word l.
        let src = format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4>;\n.shared .align 4 .b8 s[128];\n\
             mov.u32 %r1, 0;\natom.shared.add.u32 %r2, [%r1], 1;\nshl.b32 %r3, %r2, 2;\n\
             ld.shared.u32 %r1, [%r3];\nret;\n}}\n"
        );
        let r = ptx::simulate(&src, None, &launch(32)).unwrap();
        assert_eq!(r.totals.atoms, 1);
        assert_eq!(r.totals.smem_touched, 128);
        assert_eq!(r.totals.shared_ld_wavefronts, 1);
    }

    #[test]
    fn a_large_global_array_costs_nothing_until_written() {
        // `.global .b8 g[N]` with N near the 1 GiB limit was materialised byte by byte into
        // the page table before the first instruction (seconds, gigabytes). Its initializer is
        // still read back: the word at g + 4 is 256 (bytes 0, 1, 0, 0), past it zeros.
        let src = format!(
            "{HEAD}.global .align 4 .b8 g[1073741824] = {{4, 0, 0, 0, 0, 1}};\n\
             .visible .entry k()\n{{\n.reg .b32 %r<5>;\n.shared .align 4 .b8 s[512];\n\
             ld.global.u32 %r1, [g+4];\nld.shared.u32 %r2, [%r1];\n\
             ld.global.u32 %r3, [g+536870912];\nld.shared.u32 %r4, [%r3];\nret;\n}}\n"
        );
        let r = ptx::simulate(&src, None, &launch(32)).unwrap();
        assert_eq!(r.totals.smem_touched, 260);
        assert_eq!(r.totals.sass.LDS, 2);
    }

    #[test]
    fn only_active_lanes_count_towards_the_shared_bytes_touched() {
        // Found by mutation testing (docs/mutants.md): nothing checked which lanes' addresses
        // `smem_touched` takes. Lane l stores at 4 * (l ^ 5), lanes 16-31 guarded off: the
        // active lanes reach words 0-15, the highest at lane 10 (10 ^ 5 = 15), so one past the
        // last byte written is 64; the idle lanes' addresses (words 16-31) must not count.
        let src = format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n\
             .shared .align 4 .b8 s[256];\nmov.u32 %r1, %tid.x;\nxor.b32 %r2, %r1, 5;\n\
             shl.b32 %r3, %r2, 2;\nsetp.lt.u32 %p1, %r1, 16;\n@%p1 st.shared.u32 [%r3], %r1;\n\
             ret;\n}}\n"
        );
        let r = ptx::simulate(&src, None, &launch(32)).unwrap();
        assert_eq!(r.totals.smem_touched, 64);
        assert_eq!(r.totals.shared_st_wavefronts, 1);
    }

    #[test]
    fn an_mma_in_a_kernel_writes_its_d_registers() {
        // Found by mutation testing (docs/mutants.md): nothing read the interpreter's mma result
        // back, so an mma writing zeros went unseen. A = B = all 1.0 (f16 0x3c00), C = 0: every
        // D element is K = 16, f32 bits 0x41800000; those bits >> 20 (0x418 = 1048) are used
        // as a shared address, so one past the highest byte loaded is 1052 (4 were D zero).
        let src = format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .f32 %f<5>;\n.reg .b32 %r<5>;\n\
             .shared .align 4 .b8 s[2048];\nmov.b32 %r1, 0x3c003c00;\nmov.f32 %f1, 0f00000000;\n\
             mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{%f1, %f2, %f3, %f4}}, \
             {{%r1, %r1, %r1, %r1}}, {{%r1, %r1}}, {{%f1, %f1, %f1, %f1}};\n\
             mov.b32 %r2, %f4;\nshr.u32 %r3, %r2, 20;\nld.shared.u32 %r4, [%r3];\nret;\n}}\n"
        );
        let r = ptx::simulate(&src, None, &launch(32)).unwrap();
        assert_eq!(r.totals.smem_touched, 1052);
        assert_eq!(r.totals.shared_ld_wavefronts, 1);
    }
}
