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
//!
//! Issue 26 adds the invalid forms (`Invalid`): a fixture turned into what the PTX ISA forbids
//! (two `.entry` of one name, a name that is no type, two state spaces, a store to `.const`, a
//! register declared twice, a write to a special register, an operand too many, a `.b32`
//! guard, `.align 3`, `mma….col.row`, a `.pred` source, a qualifier of none of the
//! instruction's slots) or past a documented limit (operands
//! nested 100,000 levels deep, 65,537 registers, shared memory past sm_90's 227 KB): each must
//! fail naming the mutated line, in one line, and exit 2 from the command.
//! `regressions` holds each input the property found that once failed, as a plain test.

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;
use tilelab::ptx::report::PtxError;
use tilelab::ptx::{self, Launch};

use crate::common::fixture_launch;
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
                tensor_maps: vec![],
                dynamic_smem: Some(
                    u32::try_from(l["dynamic_smem_bytes"].as_u64().unwrap()).unwrap(),
                ),
                max_instructions: BUDGET,
                cluster: None,
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

/// Issue 26: the invalid forms. Each turns one line of a valid fixture into what the PTX ISA
/// forbids (or a declaration past tilelab's documented limits), and knows the line the error
/// must name: the verdicts are the ISA's (the section in each variant's doc), not the code's.
#[derive(Clone, Debug)]
enum Invalid {
    /// An instruction's last register nested `DEPTHS[d]` levels deep in `BRACKETS[b]`: PTX
    /// nests a vector operand's braces once (§6.4.3), an address's brackets once (§6.4.1).
    /// 100,000 levels overflowed the stack.
    DeepNest(u64, usize, usize),
    /// A declaration past a limit (`HUGE`), after the kernel's first `.reg` or, at module
    /// scope, before its `.entry`.
    HugeDecl(usize),
    /// The kernel defined again after itself: two `.entry` of one name.
    DuplicateEntry,
    /// A type suffix replaced by a name that is no PTX type (§5.2.1 Fundamental Types).
    UnknownType(u64, usize),
    /// A memory instruction's state space given twice (`true`) or a second one (one `.ss`
    /// per instruction, §9.7).
    TwoSpaces(u64, bool),
    /// A store to the read-only `.const` space (§5.1.3).
    StoreConst(u64),
    /// A `.reg` line repeated in its block (a name is declared once per block).
    RedeclareReg(u64),
    /// A special register as an instruction's destination (§10: read-only).
    WriteSpecial(u64, usize),
    /// One operand more than the instruction's syntax (§9.7, each instruction's syntax).
    ExtraOperand(u64),
    /// A `.b32` register as a guard (§9.3: a guard is a `.pred` register).
    NonPredGuard(u64),
    /// `.align N` with N not a power of two (§5.4.5).
    BadAlign(u64, usize),
    /// An `mma` layout other than `.row.col` (9.7.14.5.14).
    MmaLayout(u64, usize),
    /// A `.pred` register as an arithmetic source (§9.4: `.pred` agrees only with `.pred`).
    PredSource(u64),
    /// A qualifier that is none of the instruction's (`add.zz.s32`; §9.7, each syntax).
    UnknownQualifier(u64),
    /// `RULES[k]`: a qualifier the ISA requires dropped, or one it forbids added, or a module
    /// directive's value out of the ISA's list (ptxas, CUDA 13.0, refuses each).
    BrokenRule(u64, usize),
}

/// (text, replacement) at the start of an instruction's opcode or a directive: rounding that
/// `fma`/`div` need (9.7.3.5, 9.7.3.8), `.lo`/`.wide` of integer `mul`/`mad` (§9.7.1), `.approx`
/// of `ex2`, `.nc` on a non-global load (9.7.9.9), `.aligned` of `ldmatrix`/`stmatrix`/`mma` (9.7.14.5), `.ftz` on an
/// integer `add`, rounding on an integer `cvt` (9.7.9.21), `.target`, `.version` and
/// `.address_size` values (§11.1).
const RULES: [(&str, &str); 14] = [
    ("fma.rn.", "fma."),
    ("mad.lo.", "mad."),
    ("mul.lo.", "mul."),
    ("mul.wide.", "mul."),
    ("ex2.approx.", "ex2."),
    ("ld.shared.", "ld.shared.nc."),
    ("ldmatrix.sync.aligned.", "ldmatrix.sync."),
    ("stmatrix.sync.aligned.", "stmatrix.aligned."),
    ("mma.sync.aligned.", "mma.sync."),
    ("add.s32", "add.ftz.s32"),
    ("cvt.u64.u32", "cvt.rn.u64.u32"),
    (".target sm_", ".target sm_1"),
    (".version ", ".version 1"),
    (".address_size 64", ".address_size 48"),
];

const DEPTHS: [usize; 5] = [2, 3, 17, 1_000, 100_000];
const BRACKETS: [(&str, &str); 3] = [("{", "}"), ("[", "]"), ("(", ")")];
/// (inserted text, at module scope, lines before the one the error names).
const HUGE: [(&str, bool, u32); 7] = [
    // More than 65,536 registers (parse::MAX_REGISTERS) in one range, or in one kernel.
    (".reg .b32 %huge<65537>;", false, 0),
    (".reg .b32 %huge<4294967296>;", false, 0),
    (
        ".reg .b32 %hugea<40000>;\n.reg .b32 %hugeb<40000>;",
        false,
        1,
    ),
    // Past sm_90's 232,448 bytes of shared memory per block; 512 KiB of local memory.
    (".shared .align 16 .b8 huge_smem[232449];", false, 0),
    (".local .align 4 .b8 huge_local[524289];", false, 0),
    // An initializer longer than its variable (§5.4.4); constant memory past 64 KB.
    (".global .align 1 .b8 huge_init[2] = {1, 2, 3};", true, 0),
    (".const .align 4 .b8 huge_const[65537];", true, 0),
];
const TYPES: [&str; 7] = [".b32", ".u32", ".f32", ".s32", ".b64", ".u64", ".b16"];
const NOT_TYPES: [&str; 5] = [".b33", ".u7", ".f12", ".s48", ".bf8x3"];
const SPACES: [&str; 5] = ["global", "shared", "local", "param", "const"];
const SPECIALS: [&str; 6] = [
    "%tid.x", "%ntid.y", "%laneid", "%ctaid.z", "%clock", "%warpid",
];
const ALIGNS: [&str; 4] = ["0", "3", "6", "12"];
const LAYOUTS: [&str; 4] = [".col.row", ".col.col", ".row.row", ".col"];
/// Opcodes whose operand count is one number in every form the fixtures use (their syntax
/// in the PTX ISA §9.7).
const FIXED_ARITY: [&str; 27] = [
    "add", "sub", "mul", "mad", "fma", "mov", "and", "or", "xor", "shl", "shr", "max", "min",
    "neg", "not", "ex2", "rcp", "selp", "ld", "st", "ldmatrix", "stmatrix", "mma", "shfl", "cvta",
    "div", "setp",
];
/// Destinations a special register replaces: never stores, branches, barriers or copies.
const NO_DST: [&str; 12] = [
    "st", "red", "bra", "bar", "barrier", "cp", "stmatrix", "ret", "exit", "membar", "fence",
    "prefetch",
];

fn invalid() -> impl Strategy<Value = Invalid> {
    prop_oneof![
        (any::<u64>(), 0..DEPTHS.len(), 0..BRACKETS.len())
            .prop_map(|(a, d, b)| Invalid::DeepNest(a, d, b)),
        (0..HUGE.len()).prop_map(Invalid::HugeDecl),
        Just(Invalid::DuplicateEntry),
        (any::<u64>(), 0..NOT_TYPES.len()).prop_map(|(a, k)| Invalid::UnknownType(a, k)),
        (any::<u64>(), any::<bool>()).prop_map(|(a, k)| Invalid::TwoSpaces(a, k)),
        any::<u64>().prop_map(Invalid::StoreConst),
        any::<u64>().prop_map(Invalid::RedeclareReg),
        (any::<u64>(), 0..SPECIALS.len()).prop_map(|(a, k)| Invalid::WriteSpecial(a, k)),
        any::<u64>().prop_map(Invalid::ExtraOperand),
        any::<u64>().prop_map(Invalid::NonPredGuard),
        (any::<u64>(), 0..ALIGNS.len()).prop_map(|(a, k)| Invalid::BadAlign(a, k)),
        (any::<u64>(), 0..LAYOUTS.len()).prop_map(|(a, k)| Invalid::MmaLayout(a, k)),
        any::<u64>().prop_map(Invalid::PredSource),
        any::<u64>().prop_map(Invalid::UnknownQualifier),
        (any::<u64>(), 0..RULES.len()).prop_map(|(a, k)| Invalid::BrokenRule(a, k)),
    ]
}

/// Every kind once, for the tests that each kind applies somewhere.
fn every_invalid() -> Vec<Invalid> {
    let i = |k: usize| (k as u64) << 58;
    let mut v = vec![Invalid::DuplicateEntry];
    v.extend((0..HUGE.len()).map(Invalid::HugeDecl));
    for d in 0..DEPTHS.len() {
        for b in 0..BRACKETS.len() {
            v.push(Invalid::DeepNest(i(0), d, b));
        }
    }
    v.extend((0..NOT_TYPES.len()).map(|k| Invalid::UnknownType(i(k * 7), k)));
    v.extend([
        Invalid::TwoSpaces(i(0), true),
        Invalid::TwoSpaces(i(1), false),
        Invalid::StoreConst(i(0)),
        Invalid::RedeclareReg(i(0)),
        Invalid::ExtraOperand(i(0)),
        Invalid::NonPredGuard(i(0)),
        Invalid::PredSource(i(0)),
        Invalid::UnknownQualifier(i(0)),
        Invalid::UnknownQualifier(i(63)),
    ]);
    v.extend((0..SPECIALS.len()).map(|k| Invalid::WriteSpecial(i(k), k)));
    v.extend((0..ALIGNS.len()).map(|k| Invalid::BadAlign(i(0), k)));
    v.extend((0..LAYOUTS.len()).map(|k| Invalid::MmaLayout(i(0), k)));
    v.extend((0..RULES.len()).map(|k| Invalid::BrokenRule(i(0), k)));
    v
}

/// The candidate a mutation's `u64` picks among `len`: the fraction `a / 2^64` of them (as
/// proptest's `Index` does).
fn fraction(a: u64, len: usize) -> usize {
    ((len as u128 * a as u128) >> 64) as usize
}

/// A line without its `//` comment, trimmed.
fn code(l: &str) -> &str {
    l.split("//").next().unwrap_or("").trim()
}

/// An instruction line's guard, opcode and operand text, if it is one (one statement ending
/// the line, as nvcc and Triton write them).
fn inst_parts(l: &str) -> Option<(Option<&str>, &str, &str)> {
    let c = code(l);
    if !c.ends_with(';') || c.starts_with(['.', '{', '}', '$']) || c[..c.len() - 1].contains(';') {
        return None;
    }
    let (guard, c) = match c.strip_prefix('@') {
        Some(r) => {
            let (g, rest) = r.split_once(char::is_whitespace)?;
            (Some(g), rest.trim_start())
        }
        None => (None, c),
    };
    let (op, rest) = c.split_once(char::is_whitespace).unwrap_or((c, ""));
    op.starts_with(|ch: char| ch.is_ascii_alphabetic())
        .then(|| (guard, op, rest.trim().trim_end_matches(';').trim()))
}

/// Whether `s` is a plain register name (`%r12`, `%rd3`, `%f1`).
fn plain_reg(s: &str) -> bool {
    s.strip_prefix('%')
        .is_some_and(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// The operands of an instruction's operand text, split at the top-level commas.
fn top_operands(r: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (k, c) in r.char_indices() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(r[start..k].trim());
                start = k + 1;
            }
            _ => {}
        }
    }
    if !r.trim().is_empty() {
        out.push(r[start..].trim());
    }
    out
}

/// The first and last line index of the (first) kernel: its `.entry` line to its closing `}`.
fn kernel_lines(lines: &[String]) -> Option<(usize, usize)> {
    let start = lines.iter().position(|l| code(l).contains(".entry"))?;
    let mut depth = 0i32;
    let mut opened = false;
    for (k, l) in lines.iter().enumerate().skip(start) {
        for ch in code(l).chars() {
            match ch {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth == 0 {
            return Some((start, k));
        }
    }
    None
}

/// A register the kernel declares as `.reg TY %x<N>` with N ≥ 2: `%x1`.
fn declared(lines: &[String], ty: &str) -> Option<String> {
    lines.iter().find_map(|l| {
        let rest = code(l)
            .strip_prefix(".reg")?
            .trim_start()
            .strip_prefix(ty)?
            .trim();
        let (name, n) = rest.split_once('<')?;
        let n: u32 = n.trim_end_matches(';').trim_end_matches('>').parse().ok()?;
        (n >= 2).then(|| format!("{}1", name.trim()))
    })
}

/// `line` with the operand text of its instruction replaced by `ops` (the rest kept).
fn with_operands(line: &str, old: &str, ops: &str) -> String {
    line.replacen(old, ops, 1)
}

/// `m` applied to `src`: the text and the 1-based line its error must name, or `None` where
/// the fixture has no line it applies to.
fn apply_invalid(src: &str, m: &Invalid) -> Option<(String, u32)> {
    let mut lines: Vec<String> = src.split_inclusive('\n').map(str::to_string).collect();
    let (k0, k1) = kernel_lines(&lines)?;
    let body: Vec<usize> = (k0 + 1..k1).collect();
    let pick = |f: &dyn Fn(&str) -> bool, a: &u64| {
        let v: Vec<usize> = body.iter().copied().filter(|&k| f(&lines[k])).collect();
        (!v.is_empty()).then(|| v[fraction(*a, v.len())])
    };
    let base = |op: &str| op.split('.').next().unwrap_or("").to_string();
    let at = match m {
        Invalid::DeepNest(a, d, b) => {
            let k = pick(
                &|l| {
                    inst_parts(l).is_some_and(|(_, _, r)| {
                        plain_reg(top_operands(r).last().copied().unwrap_or(""))
                    })
                },
                a,
            )?;
            let (_, _, r) = inst_parts(&lines[k])?;
            let ops = top_operands(r);
            let last = *ops.last()?;
            let (o, c) = BRACKETS[*b];
            let deep = format!("{}{last}{}", o.repeat(DEPTHS[*d]), c.repeat(DEPTHS[*d]));
            let new_ops = format!("{}{deep}", &r[..r.len() - last.len()]);
            lines[k] = with_operands(&lines[k], r, &new_ops);
            k
        }
        Invalid::HugeDecl(v) => {
            let (text, module, before) = HUGE[*v];
            let k = if module {
                k0
            } else {
                body.iter()
                    .copied()
                    .find(|&k| code(&lines[k]).starts_with(".reg"))?
                    + 1
            };
            lines.insert(k, format!("{text}\n"));
            return Some((lines.concat(), (k + 1) as u32 + before));
        }
        Invalid::DuplicateEntry => {
            let copy: Vec<String> = lines[k0..=k1].to_vec();
            if !lines[k1].ends_with('\n') {
                lines[k1].push('\n');
            }
            for (j, l) in copy.into_iter().enumerate() {
                lines.insert(k1 + 1 + j, l);
            }
            return Some((lines.concat(), (k1 + 2) as u32));
        }
        Invalid::UnknownType(a, n) => {
            // The first type suffix of an opcode, or a `.reg` line's type.
            let first_type = |l: &str| -> Option<(usize, &'static str)> {
                let head = if code(l).starts_with(".reg") {
                    code(l)
                } else {
                    inst_parts(l)?.1
                };
                let at = l.find(head)?;
                TYPES.iter().find_map(|t| {
                    let p = head.find(t)?;
                    let end = p + t.len();
                    (head[end..].starts_with(['.', ' ', '\t']) || end == head.len())
                        .then_some((at + p, *t))
                })
            };
            let k = pick(&|l| first_type(l).is_some(), a)?;
            let (p, t) = first_type(&lines[k])?;
            lines[k].replace_range(p..p + t.len(), NOT_TYPES[*n]);
            k
        }
        Invalid::TwoSpaces(a, same) => {
            let space_of = |l: &str| {
                let (_, op, _) = inst_parts(l)?;
                let mut parts = op.split('.');
                matches!(parts.next(), Some("ld" | "st"))
                    .then(|| parts.find(|p| SPACES.contains(p)))
                    .flatten()
                    .map(str::to_string)
            };
            let k = pick(&|l| space_of(l).is_some(), a)?;
            let s = space_of(&lines[k])?;
            let other = if *same {
                s.clone()
            } else if s == "global" {
                "shared".into()
            } else {
                "global".into()
            };
            lines[k] = lines[k].replacen(&format!(".{s}"), &format!(".{s}.{other}"), 1);
            k
        }
        Invalid::StoreConst(a) => {
            let k = pick(
                &|l| inst_parts(l).is_some_and(|(_, op, _)| base(op) == "st"),
                a,
            )?;
            let (_, op, _) = inst_parts(&lines[k])?;
            let mut parts: Vec<&str> = op.split('.').collect();
            match parts.iter().position(|p| SPACES.contains(p)) {
                Some(p) => parts[p] = "const",
                None => parts.insert(1, "const"),
            }
            let new = parts.join(".");
            lines[k] = lines[k].replacen(op, &new, 1);
            k
        }
        Invalid::RedeclareReg(a) => {
            let k = pick(
                &|l| code(l).starts_with(".reg") && code(l).ends_with(';'),
                a,
            )?;
            let l = lines[k].clone();
            lines.insert(k + 1, l);
            k + 1
        }
        Invalid::WriteSpecial(a, s) => {
            let dst = |l: &str| {
                let (_, op, r) = inst_parts(l)?;
                let ops = top_operands(r);
                (!NO_DST.contains(&base(op).as_str()) && ops.len() >= 2 && plain_reg(ops[0]))
                    .then(|| ops[0].to_string())
            };
            let k = pick(&|l| dst(l).is_some(), a)?;
            let d = dst(&lines[k])?;
            let (_, _, r) = inst_parts(&lines[k])?;
            let new_ops = r.replacen(&d, SPECIALS[*s], 1);
            lines[k] = with_operands(&lines[k], r, &new_ops);
            k
        }
        Invalid::ExtraOperand(a) => {
            let k = pick(
                &|l| {
                    inst_parts(l).is_some_and(|(_, op, r)| {
                        FIXED_ARITY.contains(&base(op).as_str()) && !r.is_empty()
                    })
                },
                a,
            )?;
            let (_, _, r) = inst_parts(&lines[k])?;
            let new_ops = format!("{r}, %r1");
            lines[k] = with_operands(&lines[k], r, &new_ops);
            k
        }
        Invalid::NonPredGuard(a) => {
            let r32 = declared(&lines[k0..k1], ".b32")?;
            let k = pick(&|l| inst_parts(l).is_some_and(|(g, _, _)| g.is_some()), a)?;
            let (g, _, _) = inst_parts(&lines[k])?;
            let g = g?.trim_start_matches('!');
            lines[k] = lines[k].replacen(g, &r32, 1);
            k
        }
        Invalid::BadAlign(a, n) => {
            // Anywhere in the file: module-scope variables, parameters, body variables.
            let v: Vec<usize> = (0..lines.len())
                .filter(|&k| code(&lines[k]).contains(".align "))
                .collect();
            let k = *v.get(fraction(*a, v.len().max(1)))?;
            let l = &lines[k];
            let p = l.find(".align ")? + ".align ".len();
            let e = p + l[p..].find(|c: char| !c.is_ascii_digit())?;
            lines[k].replace_range(p..e, ALIGNS[*n]);
            k
        }
        Invalid::MmaLayout(a, n) => {
            let k = pick(
                &|l| {
                    inst_parts(l)
                        .is_some_and(|(_, op, _)| op.starts_with("mma.") && op.contains(".row.col"))
                },
                a,
            )?;
            lines[k] = lines[k].replacen(".row.col", LAYOUTS[*n], 1);
            k
        }
        Invalid::PredSource(a) => {
            let p = declared(&lines[k0..k1], ".pred")?;
            let src = |l: &str| {
                let (_, op, r) = inst_parts(l)?;
                let ops = top_operands(r);
                (matches!(base(op).as_str(), "add" | "sub" | "mul" | "max" | "min")
                    && ops.len() == 3
                    && plain_reg(ops[1]))
                .then(|| ops[1].to_string())
            };
            let k = pick(&|l| src(l).is_some(), a)?;
            let s = src(&lines[k])?;
            let (_, _, r) = inst_parts(&lines[k])?;
            let ops = top_operands(r);
            let new_ops = format!("{}, {p}, {}", ops[0], ops[2]);
            debug_assert_eq!(ops[1], s);
            lines[k] = with_operands(&lines[k], r, &new_ops);
            k
        }
        Invalid::UnknownQualifier(a) => {
            let k = pick(&|l| inst_parts(l).is_some(), a)?;
            let (_, op, _) = inst_parts(&lines[k])?;
            let b = base(op);
            let new = format!("{b}.zz{}", &op[b.len()..]);
            lines[k] = lines[k].replacen(op, &new, 1);
            k
        }
        Invalid::BrokenRule(a, n) => {
            let (from, to) = RULES[*n];
            // Anywhere in the file: directives precede the kernel.
            let v: Vec<usize> = (0..lines.len())
                .filter(|&k| {
                    let l = &lines[k];
                    code(l).starts_with(from)
                        || inst_parts(l).is_some_and(|(_, op, _)| {
                            op.starts_with(from)
                                && (op.len() == from.len()
                                    || from.ends_with('.')
                                    || op[from.len()..].starts_with('.'))
                        })
                })
                .collect();
            let k = *v.get(fraction(*a, v.len().max(1)))?;
            lines[k] = lines[k].replacen(from, to, 1);
            k
        }
    };
    Some((lines.concat(), (at + 1) as u32))
}

/// The invalid form's verdict: an error naming `line` (a parse or decode error), one line,
/// in PTX's words (no Rust `Debug` output).
fn check_invalid(text: &str, line: u32, f: &Fixture, m: &Invalid) -> Result<(), TestCaseError> {
    match ptx::simulate(text, Some(&f.kernel), &f.launch) {
        Ok(_) => prop_assert!(false, "{}: {m:?} ran (line {line})", f.name),
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(!msg.contains(['\n', '\r']), "{m:?}: {msg:?}");
            for debug in ["Name(", "Vector(", "Address(", "Int("] {
                prop_assert!(!msg.contains(debug), "{m:?}: Debug output in {msg}");
            }
            let got = match &e {
                PtxError::Parse(p) => p.line,
                PtxError::Decode(d) => d.line,
                other => {
                    prop_assert!(
                        false,
                        "{}: {m:?} line {line}: not a parse/decode error: {other}",
                        f.name
                    );
                    0
                }
            };
            prop_assert_eq!(got, line, "{}: {:?}: {}", &f.name, m, msg);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(192), .. ProptestConfig::default() })]

    /// Issue 26: a valid fixture made invalid in one of the ways the PTX ISA forbids (or past
    /// a documented limit) fails, naming the mutated line, in one line.
    #[test]
    fn invalid_forms_fail_at_their_line(which in any::<Index>(), m in invalid()) {
        let fx = fixtures();
        let f = &fx[which.index(fx.len())];
        if let Some((text, line)) = apply_invalid(&f.src, &m) {
            check_invalid(&text, line, f, &m)?;
        }
    }
}

/// Every kind of invalid form applies to some fixture (the property is not vacuous) and, run
/// by the command, exits 2 with one line naming the mutated line.
#[test]
fn every_invalid_form_applies_and_exits_2_from_the_command() {
    let dir = std::env::temp_dir().join(format!("tilelab-invalid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for m in every_invalid() {
        let hit = fixtures()
            .iter()
            .filter(|f| f.src.lines().count() <= SMALL_LINES)
            .find_map(|f| apply_invalid(&f.src, &m).map(|r| (f, r)));
        let Some((f, (text, line))) = hit else {
            panic!("{m:?} applies to no small fixture");
        };
        check_invalid(&text, line, f, &m).unwrap();
        let path = dir.join("invalid.ptx");
        std::fs::write(&path, &text).unwrap();
        let [gx, gy, gz] = f.launch.grid;
        let [bx, by, bz] = f.launch.block;
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_tilelab"));
        cmd.arg("ptx")
            .arg(&path)
            .args(["--kernel", &f.kernel])
            .args(["--grid", &format!("{gx},{gy},{gz}")])
            .args(["--block", &format!("{bx},{by},{bz}")])
            .env("NO_COLOR", "1");
        for (k, v) in &f.launch.args {
            cmd.args(["--arg", &format!("{k}={v}")]);
        }
        let o = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{m:?} on {}: {err}", f.name);
        assert!(o.stdout.is_empty(), "{m:?}");
        assert_eq!(err.lines().count(), 1, "{m:?}: {err}");
        assert!(
            err.starts_with("tilelab: error: ") && err.contains(&format!(": line {line}: ")),
            "{m:?} on {}, line {line}: {err}",
            f.name
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the property found and what reading the code beside it found (each fixed in
/// `src/ptx`), and what mutation testing found unchecked (docs/log/2026-12-01-mutants.md), kept as plain tests.
mod regressions {
    use super::*;

    const HEAD: &str = ".version 8.7\n.target sm_90\n.address_size 64\n";

    fn launch(block: u32) -> Launch {
        Launch {
            grid: [1, 1, 1],
            block: [block, 1, 1],
            cta: [0, 0, 0],
            args: vec![],
            tensor_maps: vec![],
            dynamic_smem: None,
            max_instructions: 1_000,
            cluster: None,
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
        // allocation). That alignment is no power of two (PTX ISA §5.4.5), refused when
        // parsed (issue 26); 2^31 is one, and ends past the limit.
        let src = format!(
            "{HEAD}.visible .entry k(.param .u64 a, .param .align 4294967295 .u32 b)\n{{\nret;\n}}\n"
        );
        let e = ptx::simulate(&src, None, &launch(32)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 4: '.align 4294967295' in '.param .align 4294967295 .u32 b'"),
            "{e}"
        );
        let src = src.replace("4294967295", "2147483648");
        let e = ptx::simulate(&src, None, &launch(32)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 4: parameter 'b' (.align 2147483648, 4 bytes) ends past 32764 bytes, CUDA's limit for a kernel's parameters"
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
        // Found by mutation testing (docs/log/2026-12-01-mutants.md): nothing checked which lanes' addresses
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
        // Found by mutation testing (docs/log/2026-12-01-mutants.md): nothing read the interpreter's mma result
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
