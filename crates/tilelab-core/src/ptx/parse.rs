//! PTX text → [`Module`]: the kernels (`.entry`), their parameters, register and shared-memory
//! declarations, labels and instructions, each with its 1-based source line.
//!
//! Two layers: a hand-written splitter cuts the text into statements (it knows PTX's comments,
//! which directives end at the end of a line, `.section` blocks of debug data, and which braces
//! open a scope rather than a vector operand), and [winnow] parsers read each statement
//! (guard, opcode, operands; declarations). Only the syntax a kernel body needs is parsed; the
//! meaning of an opcode is [`super::decode`]'s business. Every error is a [`ParseError`] naming
//! the line and what was expected; nothing here panics on any input (fuzzed in the tests).
//!
//! **Bounded by construction.** The splitter hands each statement on as it finds it (nothing is
//! kept per statement but the parsed result), refuses brackets nested deeper than
//! [`MAX_NESTING`] in one statement and blocks deeper than [`MAX_BLOCK_DEPTH`], and no parser
//! here recurses (a vector operand's elements are scalars, PTX ISA §6.4.3). What declarations
//! cost is checked before anything is allocated: registers per kernel ([`MAX_REGISTERS`],
//! `%r<N>` ranges are kept as ranges), instructions, labels, kernels and variables per module
//! ([`MAX_INSTRUCTIONS`], [`MAX_MODULE_OPERANDS`], [`MAX_LABELS`], [`MAX_BLOCKS`],
//! [`MAX_KERNELS`], [`MAX_VARIABLES`]; per instruction [`MAX_OPERANDS`],
//! [`MAX_VECTOR_ELEMENTS`] and [`MAX_QUALIFIERS`]), each variable's
//! size against its state space's limit and each initializer against its variable. Memory is
//! proportional to the text and capped by those limits.
//!
//! **What the ISA forbids in declarations** is refused here, with the line and the rule: names
//! that are not PTX types (§5.2), two state spaces or two types in one declaration (§5.1),
//! `.align` that is not a power of two (§5.4.5), vectors over 128 bits (§5.4.2), initializers
//! longer than their variable or out of their type's range (§5.4.4), a kernel or module-scope
//! name defined twice, two parameters of one name, `.reqntid` with `.maxntid` (§11.4).
//!
//! Source: PTX ISA 9.0 (docs.nvidia.com/cuda/parallel-thread-execution) §4 (syntax), §5 (state
//! spaces, types, variables), §6.4 (operands), §11 (directives).

use std::collections::HashMap;
use std::fmt;

use winnow::ascii::{digit1, hex_digit1, multispace0};
use winnow::combinator::{alt, cut_err, delimited, fail, opt, preceded, separated};
use winnow::error::{ContextError, StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::token::{one_of, take_while};

use super::lineinfo::{self, SourceLoc};
use super::types::Ty;
pub(crate) use super::types::int_value;
use crate::sim::arch::Arch;

/// The largest `.local` frame accepted, in bytes per thread (CUDA's 512 KiB of local memory
/// per thread).
pub const LOCAL_FRAME_LIMIT: u32 = 512 * 1024;
/// The most bytes a kernel's parameters may take (CUDA 12.1 and later on Volta and newer:
/// 32,764; older toolkits allow 4,096).
pub const PARAM_LIMIT: u32 = 32_764;
/// The deepest nesting of brackets — `{`, `[` and `(` together — inside one statement. PTX
/// nests a vector operand's braces once (PTX ISA §6.4.3 "Vectors as Operands"), an address's
/// brackets once (§6.4.1 "Addresses as Operands") and an initializer's braces once per array
/// dimension (§5.4.4 "Initializers"); 16 leaves room for all of those together. Deeper text is
/// refused by the splitter with the statement's line, before any parser sees it.
pub const MAX_NESTING: u32 = 16;

/// The deepest nesting of `{ … }` blocks in a kernel body, the kernel's own braces being
/// level 1. nvcc and Triton nest two or three (inline-assembly blocks); every name lookup walks
/// the enclosing blocks, so the depth is bounded.
pub const MAX_BLOCK_DEPTH: u32 = 64;

/// The most registers one kernel may declare, every `.reg` of every block counted (`%r<N>`
/// counts N). PTX's virtual registers are unlimited in the ISA (ptxas maps them onto at most
/// 255 hardware registers per thread, `Arch::limits().max_regs_per_thread`); the largest
/// fixture (`tests/data/ptx/fa2_d128_bm128_causal.ptx`) declares 15,427, a quarter of this.
/// The decoder adds a few registers of its own (special registers, variable addresses): a
/// program's `nregs` is at most `decode::MAX_NREGS`; the per-warp register file the machine
/// allocates is `nregs` × 32 lanes × 8 bytes (16 MiB per warp at this limit).
pub const MAX_REGISTERS: u32 = 65_536;

/// The most instructions one module may hold (every kernel together). The largest fixture
/// has 3,917; parsing and decoding cost about 0.7 KB per instruction, so this caps a module's
/// instructions at about 180 MB whatever the file's size.
pub const MAX_INSTRUCTIONS: u32 = 250_000;

/// The most operands one instruction may have (PTX's widest, `wgmma.mma_async`, has 8).
pub const MAX_OPERANDS: u32 = 32;

/// The most qualifiers one opcode may have (`add.s32` has one; PTX's longest, of
/// `cp.async.bulk.tensor` and block-scaled `mma`, about 14).
pub const MAX_QUALIFIERS: u32 = 32;

/// The most elements one vector operand may have (`wgmma` accumulators of m64n256k16 in f32
/// are 128 registers).
pub const MAX_VECTOR_ELEMENTS: u32 = 256;

/// The most operands one module's instructions may have together, each vector element
/// counted (the largest fixture has about 30,000; an operand costs about 90 bytes parsed).
pub const MAX_MODULE_OPERANDS: u32 = 1_000_000;

/// The most labels one module may define (every kernel together).
pub const MAX_LABELS: u32 = 250_000;

/// The most kernels (`.entry`) one module may define.
pub const MAX_KERNELS: u32 = 4_096;

/// The most variables (`.global`, `.const`, `.shared`, `.local`, module and body scope) one
/// module may declare. The machine gives every pointer parameter (at most 32,764, one byte
/// each) and every global variable a buffer at `(k + 1) << 40`; with at most this many
/// variables every buffer lies below the shared window at `1 << 56` (`decode::SHARED_WINDOW`).
pub const MAX_VARIABLES: u32 = 16_384;

/// The most `{ … }` blocks one module's kernel bodies may open (every block costs two body
/// statements, whatever it holds).
pub const MAX_BLOCKS: u32 = 250_000;

/// The largest `.global` variable, bytes (1 GiB; the machine stores only what is written).
pub const GLOBAL_VAR_LIMIT: u64 = 1 << 30;

/// A parse error: the 1-based line and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line of the statement.
    pub line: u32,
    /// What was expected and what was found.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A parsed PTX module.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    /// `.version` (major, minor), if given.
    pub version: Option<(u32, u32)>,
    /// `.target` (e.g. `sm_90a`), if given.
    pub target: Option<String>,
    /// Module-scope variables (`.shared`, `.global`, `.const`), in declaration order.
    pub vars: Vec<VarDecl>,
    /// Every `.entry` in file order.
    pub kernels: Vec<Kernel>,
    /// `.file INDEX "NAME"` (PTX ISA §11.5.1): the source files the `.loc` directives name, by
    /// index (Triton lists them after the kernel).
    pub files: std::collections::BTreeMap<u32, String>,
}

/// One `.entry` kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// Its name.
    pub name: String,
    /// Line of `.entry`.
    pub line: u32,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// `.reqntid x, y, z` (PTX ISA §11.4.3): the block the kernel must be launched with
    /// (missing dimensions are 1). Never given together with `maxntid`.
    pub reqntid: Option<[u32; 3]>,
    /// `.maxntid x, y, z` (PTX ISA §11.4.2): the largest block it may be launched with, as
    /// dimensions (missing ones are 1; the bound is on their product). Checked at launch by the
    /// machine, not here.
    pub maxntid: Option<[u32; 3]>,
    /// `.minnctapersm n` (PTX ISA §11.4.4): CTAs per SM the kernel asks to fit; a hint.
    pub minnctapersm: Option<u32>,
    /// `.maxnreg n` (PTX ISA §11.4.1): registers per thread ptxas may use; a hint.
    pub maxnreg: Option<u32>,
    /// `.reqnctapercluster x, y, z` (PTX ISA §11.7.1): the cluster shape, CTAs in x, y, z
    /// (missing dimensions are 1), the kernel must run in.
    pub reqnctapercluster: Option<[u32; 3]>,
    /// `.maxclusterrank n` (PTX ISA §11.7.3): the most CTAs a cluster of the kernel may have.
    pub maxclusterrank: Option<u32>,
    /// `.explicitcluster` (PTX ISA §11.7.2): the kernel must be launched with cluster dimensions
    /// (at launch or through `.reqnctapercluster`).
    pub explicitcluster: bool,
    /// Body statements in order.
    pub body: Vec<Stmt>,
    /// The `.loc` in force at each instruction, by the instruction's PTX line (PTX ISA
    /// §11.5.2: an instruction belongs to the last `.loc` before it); lines before any `.loc`
    /// have none.
    pub source: std::collections::BTreeMap<u32, SourceLoc>,
}

/// A kernel parameter (`.param .u64 .ptr .global .align 1 name`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Name as written.
    pub name: String,
    /// Type suffix (`u64`, `f32`, `b8`, …).
    pub ty: String,
    /// Size in bytes (array parameters: element size times count).
    pub size: u32,
    /// Alignment in bytes (a power of two).
    pub align: u32,
    /// Marked `.ptr` (Triton marks every pointer).
    pub ptr: bool,
}

/// A variable declaration (`.shared .align 16 .b8 smem[1024];`, `.extern .shared … name[];`).
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    /// State space without the dot: `shared`, `global`, `const`, `local`.
    pub space: String,
    /// Name.
    pub name: String,
    /// Element type suffix (`b8`, `u32`, `f32`, …).
    pub ty: String,
    /// Alignment in bytes (the element size when not given; a power of two).
    pub align: u32,
    /// Size in bytes; `None` for an unsized `.extern` array (dynamic shared memory). Within
    /// its state space's limit (checked when parsed).
    pub size: Option<u64>,
    /// Initial bytes (little-endian), if an initializer was given; never longer than `size`.
    pub init: Vec<u8>,
    /// Line of the declaration.
    pub line: u32,
}

/// A `.reg` declaration: `.reg .b32 %r<145>, %t;` (PTX ISA §5.1.1 "Register State Space",
/// §5.4.6 "Parameterized Variable Names").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegDecl {
    /// The registers' type.
    pub ty: Ty,
    /// Each name with its count: `("%r", Some(145))` declares `%r0` … `%r144`, `("%t", None)`
    /// declares `%t`.
    pub names: Vec<(String, Option<u32>)>,
    /// Line of the declaration.
    pub line: u32,
}

impl RegDecl {
    /// How many registers the declaration declares.
    pub fn count(&self) -> u64 {
        self.names.iter().map(|(_, n)| n.map_or(1, u64::from)).sum()
    }
}

/// One statement of a kernel body.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `{`: a nested scope (registers declared inside are local to it).
    Open,
    /// `}`.
    Close,
    /// `name:`.
    Label(String, u32),
    /// `.reg .b32 %r<145>;` or `.reg .pred p, q;`.
    Reg(RegDecl),
    /// A variable declared in the body (`.shared`, `.local`).
    Var(VarDecl),
    /// An instruction.
    Inst(Inst),
    /// A `.param` declared in the body: a `call`'s argument or return value (its name, line);
    /// `st.param`/`ld.param` on it mean nothing while calls are not simulated.
    CallParam(String, u32),
}

/// A name in an instruction (an opcode part, a register, a label, a variable): a string kept
/// inline up to 24 bytes, so a parsed instruction allocates for its lists, not for each name
/// (issue #31: one `String` per name was a quarter of loading a kernel).
pub type Name = compact_str::CompactString;

/// One instruction as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// 1-based line.
    pub line: u32,
    /// Guard predicate: register name and whether it is negated (`@!%p1`).
    pub guard: Option<(Name, bool)>,
    /// Opcode with its modifiers, e.g. `ld.shared.v4.b32`, split at dots (`::` stays inside a part).
    pub opcode: Vec<Name>,
    /// Operands in order.
    pub operands: Vec<Operand>,
    /// The statement's text, whitespace collapsed (for reports).
    pub text: String,
}

/// An operand as written.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register or special register (`%r1`, `%tid.x`) or a name (label, variable, parameter).
    Name(Name),
    /// `!%p1` (negated predicate source).
    Not(Name),
    /// `%p1|%p2` (setp's two results).
    Pair(Name, Name),
    /// An integer literal (two's complement bits).
    Int(i128),
    /// `0fXXXXXXXX` (f32 bits).
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float (f64 bits).
    F64(u64),
    /// `{a, b, …}`: scalars only (PTX ISA §6.4.3).
    Vector(Vec<Operand>),
    /// `[base + offset]`, `[base]`, `[offset]`.
    Address(Option<Name>, i64),
    /// `[tensorMap, {c0, c1, …}]`: a tensor map's address and the tensor coordinates of
    /// `cp.async.bulk.tensor` / `cp.reduce.async.bulk.tensor` (PTX ISA §9.7.9.25.5, 1 to 5
    /// scalar coordinates).
    TensorAddress(Name, Vec<Operand>),
    /// `_` (sink).
    Sink,
}

/// An operand in PTX's own spelling, for error messages: `%r1`, `!%p0`, `%p1|%p2`, `42`,
/// `0f3F800000`, `0d3FF0000000000000`, `{%r1, %r2}`, `[%rd1+16]`, `[%r2+-8]`, `_`. Names are
/// escaped ([`crate::text::escape`]): a control byte in the input is never printed raw.
impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::text::escape;
        match self {
            Operand::Name(n) => f.write_str(&escape(n)),
            Operand::Not(n) => write!(f, "!{}", escape(n)),
            Operand::Pair(a, b) => write!(f, "{}|{}", escape(a), escape(b)),
            Operand::Int(v) => write!(f, "{v}"),
            Operand::F32(b) => write!(f, "0f{b:08X}"),
            Operand::F64(b) => write!(f, "0d{b:016X}"),
            Operand::Vector(v) => {
                f.write_str("{")?;
                for (k, e) in v.iter().enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str("}")
            }
            Operand::Address(Some(n), 0) => write!(f, "[{}]", escape(n)),
            Operand::Address(Some(n), o) => write!(f, "[{}+{o}]", escape(n)),
            Operand::Address(None, o) => write!(f, "[{o}]"),
            Operand::TensorAddress(n, v) => {
                write!(f, "[{}, ", escape(n))?;
                write!(f, "{}]", Operand::Vector(v.clone()))
            }
            Operand::Sink => f.write_str("_"),
        }
    }
}

/// Every type name the PTX ISA defines: the fundamental types (§5.2.1), the alternate
/// floating-point formats (§5.2.3) and the packed types (§5.2.5), and the source formats of
/// `ldmatrix`. A modifier spelled like a type (`.b33`, `.f12`, `.u7x3`) that is not here is
/// "not a PTX type"; one here that the simulator does not model (`.b128`, `.tf32`, `.e4m3`) is
/// unsupported instead.
pub const PTX_TYPES: &[&str] = &[
    "s8",
    "s16",
    "s32",
    "s64",
    "u8",
    "u16",
    "u32",
    "u64",
    "f16",
    "f16x2",
    "f32",
    "f64",
    "b8",
    "b16",
    "b32",
    "b64",
    "b128",
    "pred",
    "bf16",
    "bf16x2",
    "tf32",
    "e4m3",
    "e5m2",
    "e4m3x2",
    "e5m2x2",
    "e2m1",
    "e2m1x2",
    "e3m2",
    "e3m2x2",
    "e2m3",
    "e2m3x2",
    "ue8m0",
    "ue8m0x2",
    "ue4m3",
    "s4",
    "u4",
    "b1",
    "b4",
    "b6",
    "s16x2",
    "u16x2",
    "f32x2",
    "b8x16",
    "b6x16_p32",
    "b4x16_p64",
];

/// Whether `m` (a modifier without its dot) is spelled like a type: a width after `b`, `s`, `u`,
/// `f`, `bf` (optionally `xN`), or an `eNmM`/`ueNmM` float format. Video byte and half selectors
/// (`.b0`-`.b3`, `.h0`, `.h1`) are spelled like that too and are not types.
pub fn type_like(m: &str) -> bool {
    if matches!(m, "b0" | "b2" | "b3") {
        return false;
    }
    let digits_x = |s: &str| {
        let (w, x) = match s.split_once('x') {
            Some((w, x)) => (w, Some(x)),
            None => (s, None),
        };
        !w.is_empty()
            && w.bytes().all(|c| c.is_ascii_digit())
            && x.is_none_or(|x| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit()))
    };
    let fmt = |s: &str| {
        let b = s.as_bytes();
        b.len() >= 4 && b[0] == b'e' && b[1].is_ascii_digit() && b[2] == b'm' && digits_x(&s[3..])
    };
    if let Some(r) = m.strip_prefix("bf") {
        return digits_x(r);
    }
    if let Some(r) = m.strip_prefix("ue") {
        return fmt(&format!("e{r}"));
    }
    match m.as_bytes().first() {
        Some(b'b' | b's' | b'u' | b'f') => digits_x(&m[1..]),
        Some(b'e') => fmt(m),
        _ => false,
    }
}

/// The type a declaration names, or the error: not a PTX type (§5.2), or a PTX type the
/// simulator does not model.
fn decl_type(t: &str, line: u32, what: &str) -> Result<Ty, ParseError> {
    if let Some(ty) = Ty::parse(t) {
        return Ok(ty);
    }
    Err(ParseError {
        line,
        message: if PTX_TYPES.contains(&t) {
            format!(
                "{what} of type '.{t}' is not supported (modelled: .b8-.b64, .s8-.s64, .u8-.u64, .f16, .bf16, .f16x2, .bf16x2, .f32, .f64, .pred)"
            )
        } else {
            not_a_type(t)
        },
    })
}

/// "'.b33' is not a PTX type (…)": the rule, for every place a type is written.
pub fn not_a_type(t: &str) -> String {
    format!(
        "'.{t}' is not a PTX type (PTX ISA §5.2.1 Fundamental Types: .s8 .s16 .s32 .s64 .u8 .u16 .u32 .u64 .f16 .f16x2 .f32 .f64 .b8 .b16 .b32 .b64 .b128 .pred; §5.2.3 alternate formats: .bf16 .bf16x2 .tf32 .e4m3 .e5m2 …)"
    )
}

/// Whether `n` is a power of two (PTX ISA §5.4.5: "the alignment must be a power of two").
fn align_error(n: i128, line: u32, text: &str) -> Option<ParseError> {
    let ok = u32::try_from(n).is_ok_and(u32::is_power_of_two);
    (!ok).then(|| ParseError {
        line,
        message: format!(
            "'.align {n}' in '{}': an alignment is a power of two number of bytes (PTX ISA §5.4.5 Alignment), e.g. .align 4",
            shorten(text)
        ),
    })
}

/// A raw statement: its text and first line.
struct Raw<'a> {
    text: &'a str,
    line: u32,
}

/// Directives that end at the end of their line (no `;`).
const LINE_DIRECTIVES: [&str; 6] = [
    ".version",
    ".target",
    ".address_size",
    ".loc",
    ".file",
    ".pragma",
];

enum Piece<'a> {
    Stmt(Raw<'a>),
    /// Text before a `{` that opens a scope (an `.entry` header), or empty.
    Open(Raw<'a>),
    Close(u32),
    Label(Raw<'a>),
}

/// Cuts the source into pieces and hands each to `emit` as it is found (nothing is collected).
/// Errors: an unterminated comment or string, an unbalanced `}`, brackets nested deeper than
/// [`MAX_NESTING`] in one statement, and whatever `emit` returns.
fn split<'a>(
    src: &'a str,
    mut emit: impl FnMut(Piece<'a>) -> Result<(), ParseError>,
) -> Result<(), ParseError> {
    let b = src.as_bytes();
    let mut i = 0usize;
    let mut line = 1u32;
    let mut st = SplitState::default();
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            if st.inner == 0
                && let Some(r) = line_directive(src, st.start, i)
            {
                emit(Piece::Stmt(r))?;
                st.start = None;
                st.brackets = 0;
            }
            line = line.saturating_add(1);
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            // Line comment: keep the statement so far, skip to the newline.
            let text_end = i;
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            if st.inner == 0
                && let Some(r) = line_directive(src, st.start, text_end)
            {
                emit(Piece::Stmt(r))?;
                st.start = None;
                st.brackets = 0;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            (i, line) = skip_block_comment(b, i, line)?;
            continue;
        }
        if c == b'@' && st.start.is_none() && b[i..].starts_with(b"@@DWARF") {
            // Old nvcc `-G` debug data (`@@DWARF .section .debug_info`, `@@DWARF .byte …`): a
            // whole line of DWARF bytes for the assembler, nothing the simulator reads.
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'"' {
            if st.start.is_none() {
                st.start = Some((i, line));
            }
            (i, line) = skip_string(b, i, line)?;
            continue;
        }
        if st.section > 0 {
            if c == b'{' {
                st.section = st.section.saturating_add(1);
            } else if c == b'}' {
                st.section -= 1;
                if st.section == 1 {
                    st.section = 0;
                }
            }
            i += 1;
            continue;
        }
        if st.start.is_some() && plain(c) {
            // Inside a statement: a run of bytes that change nothing here (what `punct` does
            // with each of them, and whitespace), skipped at once.
            i += 1;
            while i < b.len() && plain(b[i]) {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        punct(src, &mut st, c, i, line, &mut emit)?;
        i += 1;
    }
    if st.section > 0 {
        return Err(ParseError {
            line,
            message: "unterminated .section block: expected '}'".into(),
        });
    }
    if let Some((s, l)) = st.start {
        let t = src[s..].trim();
        if LINE_DIRECTIVES.iter().any(|d| starts_with_word(t, d)) {
            emit(Piece::Stmt(Raw { text: t, line: l }))?;
        } else {
            return Err(ParseError {
                line: l,
                message: format!("expected ';' after '{}'", shorten(t)),
            });
        }
    }
    Ok(())
}

/// A byte that, inside a statement and outside a `.section`, the splitter only steps over:
/// statement text [`punct`] keeps as it is, or whitespace but a newline (a newline counts a
/// line and may end a line directive; `/` may begin a comment, `"` a string; the rest are
/// [`punct`]'s).
fn plain(c: u8) -> bool {
    PLAIN[usize::from(c)]
}

/// [`plain`] of every byte, looked up rather than compared eleven times per byte.
static PLAIN: [bool; 256] = {
    let mut t = [true; 256];
    let not = b"\n/\";{}:[(])";
    let mut k = 0;
    while k < not.len() {
        t[not[k] as usize] = false;
        k += 1;
    }
    t
};

/// The splitter's state inside the current statement.
#[derive(Default)]
struct SplitState {
    /// Statement start (byte, line).
    start: Option<(usize, u32)>,
    /// Open braces inside the current statement (vector operands, initializers).
    inner: u32,
    /// Open `[` and `(` inside the current statement.
    brackets: u32,
    /// Depth inside a `.section { … }` being skipped.
    section: u32,
    /// The statement (by its start) whose first ':' was tried as a label's: a later ':' never
    /// ends a label (its text holds the earlier ':'), so each statement is scanned once.
    label_tried: Option<usize>,
}

/// Brackets nested past [`MAX_NESTING`] in the statement at byte `s` (line `l`), at byte `i`.
fn too_deep(src: &str, s: usize, l: u32, i: usize) -> ParseError {
    ParseError {
        line: l,
        message: format!(
            "brackets nest deeper than {MAX_NESTING} levels in one statement, at '{}': PTX nests a vector operand's braces once (PTX ISA §6.4.3), an address's brackets once (§6.4.1) and an initializer's braces once per array dimension (§5.4.4)",
            shorten(&src[s..=i])
        ),
    }
}

/// The splitter at a byte `c` (at `i`, on `line`) that is not whitespace, a comment or a
/// string: `;` ends a statement, `{`/`}` open and close scopes (or nest inside a statement),
/// a `:` may end a label, anything else is statement text.
fn punct<'a>(
    src: &'a str,
    st: &mut SplitState,
    c: u8,
    i: usize,
    line: u32,
    emit: &mut impl FnMut(Piece<'a>) -> Result<(), ParseError>,
) -> Result<(), ParseError> {
    let b = src.as_bytes();
    let text = |s: usize, e: usize| src[s..e].trim();
    match c {
        b';' => {
            if let Some((s, l)) = st.start.take() {
                st.inner = 0;
                st.brackets = 0;
                emit(Piece::Stmt(Raw {
                    text: text(s, i),
                    line: l,
                }))?;
            } else {
                // An empty statement: allowed.
            }
        }
        b'{' => match st.start {
            Some((s, l)) => {
                let t = text(s, i);
                if st.inner == 0 && st.brackets == 0 && starts_with_word(t, ".section") {
                    st.section = 2;
                    st.start = None;
                } else if st.inner == 0
                    && st.brackets == 0
                    && t.starts_with('.')
                    && !t.contains('=')
                {
                    emit(Piece::Open(Raw { text: t, line: l }))?;
                    st.start = None;
                } else {
                    st.inner += 1;
                    if st.inner + st.brackets > MAX_NESTING {
                        return Err(too_deep(src, s, l, i));
                    }
                }
            }
            None => emit(Piece::Open(Raw { text: "", line }))?,
        },
        b'}' => {
            if st.inner > 0 {
                st.inner -= 1;
            } else {
                if let Some((s, l)) = st.start.take() {
                    return Err(ParseError {
                        line: l,
                        message: format!("expected ';' after '{}'", shorten(text(s, i))),
                    });
                }
                emit(Piece::Close(line))?;
            }
        }
        b':' if b.get(i + 1) != Some(&b':')
            && i > 0
            && b[i - 1] != b':'
            && st.inner == 0
            && st.brackets == 0 =>
        {
            if let Some((s, l)) = st.start
                && st.label_tried != Some(s)
                && {
                    st.label_tried = Some(s);
                    is_ident(text(s, i))
                }
            {
                emit(Piece::Label(Raw {
                    text: text(s, i),
                    line: l,
                }))?;
                st.start = None;
            } else if st.start.is_none() {
                // A ':' that ends no label is text of a statement (an error there).
                st.start = Some((i, line));
            }
        }
        _ => {
            if st.start.is_none() {
                st.start = Some((i, line));
            }
            match c {
                b'[' | b'(' => {
                    st.brackets += 1;
                    if st.inner + st.brackets > MAX_NESTING {
                        let (s, l) = st.start.unwrap_or((i, line));
                        return Err(too_deep(src, s, l, i));
                    }
                }
                b']' | b')' => st.brackets = st.brackets.saturating_sub(1),
                _ => {}
            }
        }
    }
    Ok(())
}

/// The statement from `start` to byte `end` when it is a line-ended directive (`.loc`,
/// `.file`, … without a `;`): it ends at the newline or comment.
fn line_directive(src: &str, start: Option<(usize, u32)>, end: usize) -> Option<Raw<'_>> {
    let (s, l) = start?;
    let t = src[s..end].trim();
    (LINE_DIRECTIVES.iter().any(|d| starts_with_word(t, d)) && !t.ends_with(';'))
        .then_some(Raw { text: t, line: l })
}

/// Skips the `/* … */` comment at byte `i`: the byte after it and the line there.
fn skip_block_comment(b: &[u8], mut i: usize, mut line: u32) -> Result<(usize, u32), ParseError> {
    let l0 = line;
    i += 2;
    loop {
        if i + 1 >= b.len() {
            return Err(ParseError {
                line: l0,
                message: "unterminated /* comment".into(),
            });
        }
        if b[i] == b'\n' {
            line = line.saturating_add(1);
        }
        if b[i] == b'*' && b[i + 1] == b'/' {
            return Ok((i + 2, line));
        }
        i += 1;
    }
}

/// Skips the string literal whose opening quote is at byte `i`: the byte after its closing
/// quote and the line there. A backslash escapes the byte after it (`\"`, `\\`: PTX strings
/// are C strings, as `.file 2 "a \"b\".cu"` writes a quote), so an escaped quote does not end it.
fn skip_string(b: &[u8], mut i: usize, mut line: u32) -> Result<(usize, u32), ParseError> {
    let l0 = line;
    i += 1;
    while i < b.len() && b[i] != b'"' {
        if b[i] == b'\\' && i + 1 < b.len() && b[i + 1] != b'\n' {
            i += 1;
        }
        if b[i] == b'\n' {
            line = line.saturating_add(1);
        }
        i += 1;
    }
    if i >= b.len() {
        return Err(ParseError {
            line: l0,
            message: "unterminated string".into(),
        });
    }
    Ok((i + 1, line))
}

fn starts_with_word(t: &str, w: &str) -> bool {
    t.starts_with(w)
        && t[w.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
}

fn is_ident(t: &str) -> bool {
    let mut c = t.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_' || ch == '$' || ch == '%')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '$')
}

/// A statement's text as written, borrowed, and shortened ([`shorten`]) only when it is
/// shown: the decoder holds one per instruction for its error messages, and most instructions
/// have none (no copy per instruction).
#[derive(Clone, Copy, Debug, Default)]
pub struct Quoted<'a>(pub &'a str);

impl std::fmt::Display for Quoted<'_> {
    /// The text as [`shorten`] gives it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&shorten(self.0))
    }
}

/// `t` on one line, cut to 60 characters and escaped ([`crate::text::clip`]), for quoting in an error.
pub fn shorten(t: &str) -> String {
    let one: String = t.split_whitespace().take(64).collect::<Vec<_>>().join(" ");
    crate::text::clip(&one, 61).into_owned()
}

/// Checks that `src` opens like a PTX module: its first token, after whitespace and comments,
/// is the `.version` directive (PTX ISA, "PTX Module Directives: .version": each PTX module
/// must begin with one; nvcc `-ptx` and Triton's `asm["ptx"]` write it first). Catches a wrong
/// file (a README, a CUDA source, a TOML file) before the parser reports some line inside it.
///
/// # Errors
/// A [`ParseError`] at the first token's line naming it, or at line 1 for an empty text.
pub fn check_module_start(src: &str) -> Result<(), ParseError> {
    let mut rest = src;
    let mut line = 1u32;
    loop {
        let trimmed = rest.trim_start();
        let skipped = rest[..rest.len() - trimmed.len()].matches('\n').count();
        line = line.saturating_add(u32::try_from(skipped).unwrap_or(u32::MAX));
        rest = trimmed;
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            let Some(end) = r.find("*/") else { break };
            let skipped = r[..end].matches('\n').count();
            line = line.saturating_add(u32::try_from(skipped).unwrap_or(u32::MAX));
            rest = &r[end + 2..];
        } else {
            break;
        }
    }
    let word: String = rest
        .chars()
        .take_while(|c| !c.is_whitespace())
        .take(40)
        .collect();
    if word == ".version" {
        return Ok(());
    }
    let found = if word.is_empty() {
        "no text".to_string()
    } else {
        format!("'{word}'")
    };
    Err(ParseError {
        line,
        message: format!(
            "not a PTX module: PTX begins with a .version directive (as nvcc -ptx and Triton's asm[\"ptx\"] write it), found {found}"
        ),
    })
}

/// The module being built from the splitter's pieces, with the counts the limits bound.
struct Builder {
    m: Module,
    /// The kernel whose body is being read.
    cur: Option<Kernel>,
    /// Block depth inside the current kernel body (its own braces are 1).
    depth: u32,
    /// An `.entry` header waiting for its `{`.
    pending: Option<Kernel>,
    /// Registers declared by the current kernel so far.
    regs: u64,
    instructions: u32,
    operands: u32,
    labels: u32,
    blocks: u32,
    variables: u32,
    /// Module-scope names (kernels and variables) and the line defining each.
    names: HashMap<String, u32>,
    /// The line of the module's first statement.
    first: Option<u32>,
    /// The lines of `.version`, `.target` and `.address_size`.
    version_line: Option<u32>,
    target_line: Option<u32>,
    address_size_line: Option<u32>,
    /// The `.loc` in force in the current kernel body.
    loc: Option<SourceLoc>,
    /// The line of each `.file` index's directive.
    file_lines: HashMap<u32, u32>,
    /// Each opcode text split so far.
    opcodes: Opcodes,
}

/// Opcode texts already split at their dots ([`split_opcode`]), by text: a kernel repeats a
/// few dozen opcodes thousands of times, and a copy of the parts costs less than a split.
#[derive(Default)]
struct Opcodes(HashMap<String, Vec<Name>, foldhash::fast::RandomState>);

impl Opcodes {
    /// The most texts kept (past it, each new text is split without being kept).
    const MAX: usize = 4096;

    /// `op` split at its dots.
    fn split(&mut self, op: &str) -> Vec<Name> {
        if let Some(v) = self.0.get(op) {
            return v.clone();
        }
        let v = split_opcode(op);
        if self.0.len() < Self::MAX {
            self.0.insert(op.to_string(), v.clone());
        }
        v
    }
}

/// The targets the PTX ISA names (PTX ISA §11.1.2 ".target", Table "PTX Module Directives:
/// .target": sm_10 … sm_121f), each also as `compute_NN`; the suffixes `a` and `f` as the table
/// lists them.
const TARGETS: &[&str] = &[
    "10", "11", "12", "13", "20", "21", "30", "32", "35", "37", "50", "52", "53", "60", "61", "62",
    "70", "72", "75", "80", "86", "87", "88", "89", "90", "90a", "100", "100a", "100f", "101",
    "101a", "101f", "103", "103a", "103f", "110", "110a", "110f", "120", "120a", "120f", "121",
    "121a", "121f",
];
/// The `.target` options after the architecture (PTX ISA §11.1.2 ".target").
const TARGET_OPTIONS: &[&str] = &[
    "texmode_unified",
    "texmode_independent",
    "debug",
    "map_f64_to_f32",
];

/// "line N: … at most LIMIT (parse::NAME)": a limit's error.
fn limit_error(line: u32, what: &str, limit: u32, name: &str) -> ParseError {
    ParseError {
        line,
        message: format!(
            "more than {limit} {what} in one module: tilelab's limit (parse::{name}) for what it parses and keeps in memory"
        ),
    }
}

impl Builder {
    fn piece(&mut self, p: Piece<'_>) -> Result<(), ParseError> {
        if self.first.is_none() {
            let line = match &p {
                Piece::Stmt(r) | Piece::Open(r) | Piece::Label(r) => r.line,
                Piece::Close(l) => *l,
            };
            self.first = Some(line);
        }
        match p {
            Piece::Open(raw) => {
                if let Some(k) = self.cur.as_mut() {
                    if !raw.text.is_empty() {
                        return Err(err(raw.line, "'{' to open a scope", raw.text));
                    }
                    self.depth += 1;
                    self.blocks += 1;
                    if self.blocks > MAX_BLOCKS {
                        return Err(limit_error(raw.line, "blocks", MAX_BLOCKS, "MAX_BLOCKS"));
                    }
                    if self.depth > MAX_BLOCK_DEPTH {
                        return Err(ParseError {
                            line: raw.line,
                            message: format!(
                                "blocks nest deeper than {MAX_BLOCK_DEPTH} levels in kernel '{}': tilelab's limit (parse::MAX_BLOCK_DEPTH; nvcc and Triton nest two or three)",
                                k.name
                            ),
                        });
                    }
                    k.body.push(Stmt::Open);
                } else if raw.text.is_empty() {
                    match self.pending.take() {
                        Some(k) => self.open_kernel(k)?,
                        None => {
                            return Err(ParseError {
                                line: raw.line,
                                message: "expected a declaration or '.entry', found '{'".into(),
                            });
                        }
                    }
                } else {
                    match entry_header(raw.text, raw.line)? {
                        Some(k) => self.open_kernel(k)?,
                        None => {
                            return Err(ParseError {
                                line: raw.line,
                                message: format!(
                                    "unsupported directive '{}': only .entry kernels are simulated (device functions called with `call` are not)",
                                    shorten(raw.text)
                                ),
                            });
                        }
                    }
                }
            }
            Piece::Close(line) => {
                let Some(k) = self.cur.as_mut() else {
                    return Err(ParseError {
                        line,
                        message: "unbalanced '}'".into(),
                    });
                };
                self.depth -= 1;
                if self.depth == 0 {
                    if let Some(k) = self.cur.take() {
                        self.m.kernels.push(k);
                    }
                } else {
                    k.body.push(Stmt::Close);
                }
            }
            Piece::Label(raw) => match self.cur.as_mut() {
                Some(k) => {
                    self.labels += 1;
                    if self.labels > MAX_LABELS {
                        return Err(limit_error(raw.line, "labels", MAX_LABELS, "MAX_LABELS"));
                    }
                    k.body.push(Stmt::Label(raw.text.to_string(), raw.line));
                }
                None => {
                    return Err(ParseError {
                        line: raw.line,
                        message: format!("label '{}' outside a kernel body", raw.text),
                    });
                }
            },
            Piece::Stmt(raw) => {
                let t = raw.text;
                let line = raw.line;
                if self.cur.is_some() {
                    if starts_with_word(t, ".loc") {
                        self.loc = Some(
                            lineinfo::parse_loc(t)
                                .map_err(|message| ParseError { line, message })?,
                        );
                        return Ok(());
                    }
                    let s = body_stmt(t, line, &mut self.opcodes)?;
                    self.count(s.as_ref(), line)?;
                    if let (Some(k), Some(s)) = (self.cur.as_mut(), s) {
                        if let (Stmt::Inst(i), Some(l)) = (&s, self.loc) {
                            k.source.insert(i.line, l);
                        }
                        k.body.push(s);
                    }
                } else if starts_with_word(t, ".file") {
                    self.file(t, line)?;
                } else if t.starts_with('.') {
                    if [".version", ".target", ".address_size"]
                        .iter()
                        .any(|d| starts_with_word(t, d))
                    {
                        self.module_directive(t, line)?;
                    } else if LINE_DIRECTIVES.iter().any(|d| starts_with_word(t, d)) {
                    } else if t.contains(".entry") || t.contains(".func") {
                        // A prototype without a body (`.extern .func …;`) or an entry whose
                        // `{` follows on a later statement: keep the header.
                        if t.contains(".entry") {
                            self.pending = entry_header(t, line)?;
                        }
                    } else if let Some(v) = var_decl(t, line, true)? {
                        self.count_var(line)?;
                        self.define(&v.name, line, "a module-scope variable")?;
                        self.m.vars.push(v);
                    }
                } else {
                    return Err(err(line, "a directive at module scope", t));
                }
            }
        }
        Ok(())
    }

    /// `.version MAJOR.MINOR` (first, once, a known major), `.target` (once, known targets),
    /// `.address_size` (once, 32 or 64): PTX ISA §11.1 "PTX Module Directives".
    fn module_directive(&mut self, t: &str, line: u32) -> Result<(), ParseError> {
        let fail = |message: String| Err(ParseError { line, message });
        let (word, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
        let rest = rest.trim().trim_end_matches(';').trim();
        let seen = match word {
            ".version" => &mut self.version_line,
            ".target" => &mut self.target_line,
            _ => &mut self.address_size_line,
        };
        if let Some(first) = *seen {
            return fail(format!(
                "'{word}' is given twice (first at line {first}): a module has one {word} directive (PTX ISA §11.1 PTX Module Directives)"
            ));
        }
        *seen = Some(line);
        match word {
            ".version" => {
                if self.first != Some(line) {
                    return fail(format!(
                        "'.version' must be the module's first directive (PTX ISA §11.1.1 .version: each PTX module begins with a .version directive), found it after line {}",
                        self.first.unwrap_or(1)
                    ));
                }
                let v = rest.split_once('.').and_then(|(a, b)| {
                    let digits = |x: &str| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit());
                    (digits(a) && digits(b) && a.len() <= 2 && b.len() <= 2)
                        .then(|| (a.parse::<u32>().ok(), b.parse::<u32>().ok()))
                });
                match v {
                    Some((Some(major @ 1..=9), Some(minor))) => {
                        self.m.version = Some((major, minor));
                    }
                    _ => {
                        return fail(format!(
                            "'.version {}': the version is MAJOR.MINOR with a PTX ISA major version 1 to 9, e.g. .version 8.7 (PTX ISA §11.1.1 .version)",
                            shorten(rest)
                        ));
                    }
                }
            }
            ".target" => {
                let mut parts = rest.split(',').map(str::trim);
                let arch = parts.next().unwrap_or("");
                let known = arch
                    .strip_prefix("sm_")
                    .or_else(|| arch.strip_prefix("compute_"))
                    .is_some_and(|n| TARGETS.contains(&n));
                if !known {
                    return fail(format!(
                        "'.target {}': {} is not a target of the PTX ISA (sm_50 … sm_90, sm_90a, sm_100 … sm_121f, or compute_NN; PTX ISA §11.1.2 .target)",
                        shorten(rest),
                        if arch.is_empty() {
                            "no target".to_string()
                        } else {
                            format!("'{}'", shorten(arch))
                        }
                    ));
                }
                if let Some(o) = parts.find(|o| !TARGET_OPTIONS.contains(o)) {
                    return fail(format!(
                        "'.target {}': '{}' is not a .target option ({}; PTX ISA §11.1.2 .target)",
                        shorten(rest),
                        shorten(o),
                        TARGET_OPTIONS.join(", ")
                    ));
                }
                self.m.target = Some(arch.to_string());
            }
            _ => {
                if !matches!(rest, "32" | "64") {
                    return fail(format!(
                        "'.address_size {}': the address size is 32 or 64 (PTX ISA §11.1.3 .address_size)",
                        shorten(rest)
                    ));
                }
            }
        }
        Ok(())
    }

    /// A kernel's body opens: its name must be new to the module, and the module may take one
    /// more kernel.
    fn open_kernel(&mut self, k: Kernel) -> Result<(), ParseError> {
        if self.m.kernels.len() >= MAX_KERNELS as usize {
            return Err(limit_error(k.line, "kernels", MAX_KERNELS, "MAX_KERNELS"));
        }
        self.define(&k.name, k.line, "a kernel")?;
        self.cur = Some(k);
        self.depth = 1;
        self.regs = 0;
        self.loc = None;
        Ok(())
    }

    /// `.file INDEX "NAME"` at module scope (PTX ISA §11.5.1): each index once.
    fn file(&mut self, t: &str, line: u32) -> Result<(), ParseError> {
        let (idx, name) =
            lineinfo::parse_file(t).map_err(|message| ParseError { line, message })?;
        if let Some(first) = self.file_lines.insert(idx, line) {
            return Err(ParseError {
                line,
                message: format!(
                    "'.file {idx}' is given twice (first at line {first}): each .file index names one file (PTX ISA §11.5.1 .file)"
                ),
            });
        }
        self.m.files.insert(idx, name);
        Ok(())
    }

    /// Records a module-scope name; a second definition is an error naming the first.
    fn define(&mut self, name: &str, line: u32, what: &str) -> Result<(), ParseError> {
        if let Some(&first) = self.names.get(name) {
            return Err(ParseError {
                line,
                message: format!(
                    "'{name}' is defined twice at module scope (first at line {first}), here as {what}: a module defines each kernel and variable name once (PTX ISA §4.4 Identifiers, §11.2.1 .entry)"
                ),
            });
        }
        self.names.insert(name.to_string(), line);
        Ok(())
    }

    fn count_var(&mut self, line: u32) -> Result<(), ParseError> {
        self.variables += 1;
        if self.variables > MAX_VARIABLES {
            return Err(limit_error(
                line,
                "variables",
                MAX_VARIABLES,
                "MAX_VARIABLES",
            ));
        }
        Ok(())
    }

    /// Counts a body statement against the module's and the kernel's limits.
    fn count(&mut self, s: Option<&Stmt>, line: u32) -> Result<(), ParseError> {
        match s {
            Some(Stmt::Inst(i)) => {
                let n: usize = i
                    .operands
                    .iter()
                    .map(|o| match o {
                        Operand::Vector(v) => v.len(),
                        _ => 1,
                    })
                    .sum();
                self.operands = self
                    .operands
                    .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
                if self.operands > MAX_MODULE_OPERANDS {
                    return Err(limit_error(
                        line,
                        "operands",
                        MAX_MODULE_OPERANDS,
                        "MAX_MODULE_OPERANDS",
                    ));
                }
                self.instructions += 1;
                if self.instructions > MAX_INSTRUCTIONS {
                    return Err(limit_error(
                        line,
                        "instructions",
                        MAX_INSTRUCTIONS,
                        "MAX_INSTRUCTIONS",
                    ));
                }
            }
            Some(Stmt::Var(_)) => self.count_var(line)?,
            Some(Stmt::Reg(r)) => {
                self.regs = self.regs.saturating_add(r.count());
                if self.regs > u64::from(MAX_REGISTERS) {
                    let name = self.cur.as_ref().map_or("", |k| k.name.as_str());
                    return Err(ParseError {
                        line,
                        message: format!(
                            "kernel '{name}' declares {} registers by this line, more than {MAX_REGISTERS}: tilelab's limit per kernel (parse::MAX_REGISTERS; PTX's virtual registers are unlimited, ptxas allocates at most 255 per thread)",
                            self.regs
                        ),
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Parses a whole PTX module.
///
/// # Errors
/// The first [`ParseError`]: its line and what was expected, or the rule or limit broken.
pub fn parse(src: &str) -> Result<Module, ParseError> {
    let mut b = Builder {
        m: Module::default(),
        cur: None,
        depth: 0,
        pending: None,
        regs: 0,
        instructions: 0,
        operands: 0,
        labels: 0,
        blocks: 0,
        variables: 0,
        names: HashMap::new(),
        first: None,
        version_line: None,
        target_line: None,
        address_size_line: None,
        loc: None,
        file_lines: HashMap::new(),
        opcodes: Opcodes::default(),
    };
    split(src, |p| b.piece(p))?;
    let Some(vline) = b.version_line else {
        return Err(ParseError {
            line: b.first.unwrap_or(1),
            message: "the module has no .version directive: each PTX module begins with one (PTX ISA §11.1.1 .version)".into(),
        });
    };
    if b.target_line.is_none() {
        return Err(ParseError {
            line: vline,
            message: "the module has no .target directive: .version is followed by a .target naming the architecture, e.g. .target sm_90 (PTX ISA §11.1.2 .target)".into(),
        });
    }
    if let Some(k) = b.cur {
        return Err(ParseError {
            line: k.line,
            message: format!("kernel '{}' has no closing '}}'", k.name),
        });
    }
    Ok(b.m)
}

fn err(line: u32, expected: &str, found: &str) -> ParseError {
    ParseError {
        line,
        message: format!("expected {expected}, found '{}'", shorten(found)),
    }
}

/// Turns winnow's error at `rest` into a one-line message.
fn werr(line: u32, what: &str, rest: &str, e: &ContextError) -> ParseError {
    let mut exp: Vec<String> = e
        .context()
        .filter_map(|c| match c {
            StrContext::Expected(v) => Some(match v {
                StrContextValue::CharLiteral(c) => format!("'{c}'"),
                StrContextValue::StringLiteral(s) => format!("'{s}'"),
                StrContextValue::Description(d) => d.to_string(),
                _ => v.to_string(),
            }),
            _ => None,
        })
        .collect();
    exp.dedup();
    let expected = if exp.is_empty() {
        what.to_string()
    } else {
        format!("{} ({what})", exp.join(" or "))
    };
    let found = if rest.trim().is_empty() {
        "end of statement".to_string()
    } else {
        format!("'{}'", shorten(rest))
    };
    ParseError {
        line,
        message: format!("expected {expected}, found {found}"),
    }
}

fn ws<'a>(i: &mut &'a str) -> ModalResult<&'a str> {
    multispace0.parse_next(i)
}

fn ident<'a>(i: &mut &'a str) -> ModalResult<&'a str> {
    (
        one_of(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$' || c == '%'),
        take_while(0.., |c: char| {
            c.is_ascii_alphanumeric() || c == '_' || c == '$'
        }),
    )
        .take()
        .context(StrContext::Expected(StrContextValue::Description("a name")))
        .parse_next(i)
}

/// A register-like name: `%r1`, `%tid.x`, `%ctaid.y`, `name`.
fn reg_name<'a>(i: &mut &'a str) -> ModalResult<&'a str> {
    (
        ident,
        opt((
            '.',
            one_of(['x', 'y', 'z', 'w']),
            winnow::combinator::not(one_of(|c: char| c.is_ascii_alphanumeric() || c == '_')),
        )),
    )
        .take()
        .parse_next(i)
}

/// An integer literal (PTX ISA §4.5.1 "Integer Constants"): hexadecimal `0x…`, binary `0b…`,
/// octal `0…` (a leading zero), decimal; an optional `-` and `U` suffix. Values up to 2^64 - 1.
fn int_lit(i: &mut &str) -> ModalResult<i128> {
    let start = *i;
    let text = (
        opt('-'),
        one_of(|c: char| c.is_ascii_digit()),
        take_while(0.., |c: char| c.is_ascii_alphanumeric()),
    )
        .take()
        .parse_next(i)?;
    match int_value(text) {
        Some(v) => Ok(v),
        None => {
            *i = start;
            fail.parse_next(i)
        }
    }
}

fn number(i: &mut &str) -> ModalResult<Operand> {
    alt((
        preceded(alt(("0f", "0F")), hex_digit1)
            .verify(|h: &str| h.len() == 8)
            .try_map(|h: &str| u32::from_str_radix(h, 16).map(Operand::F32)),
        preceded(alt(("0d", "0D")), hex_digit1)
            .verify(|h: &str| h.len() == 16)
            .try_map(|h: &str| u64::from_str_radix(h, 16).map(Operand::F64)),
        (
            opt('-'),
            digit1,
            '.',
            take_while(0.., |c: char| c.is_ascii_digit()),
        )
            .take()
            .try_map(|s: &str| s.parse::<f64>().map(|v| Operand::F64(v.to_bits()))),
        int_lit.map(Operand::Int),
    ))
    .context(StrContext::Expected(StrContextValue::Description(
        "a number",
    )))
    .parse_next(i)
}

fn address(i: &mut &str) -> ModalResult<Operand> {
    delimited(
        ('[', ws),
        alt((
            (reg_name, ws, ',', ws, vector).verify_map(|(n, _, _, _, v)| match v {
                Operand::Vector(v) => Some(Operand::TensorAddress(n.into(), v)),
                _ => None,
            }),
            (
                reg_name,
                ws,
                opt(preceded(('+', ws), int_lit.try_map(i64::try_from))),
            )
                .map(|(n, _, o)| Operand::Address(Some(n.into()), o.unwrap_or(0))),
            int_lit
                .try_map(i64::try_from)
                .map(|o| Operand::Address(None, o)),
        )),
        (ws, ']'),
    )
    .context(StrContext::Expected(StrContextValue::Description(
        "an address [reg+offset]",
    )))
    .parse_next(i)
}

/// The operand at the start of `i` when it is a plain name (`%r1`, `%tid.x`, `label`): what
/// [`scalar`] parses there, without trying its other alternatives first (a name starts with a
/// letter, `%` or `$`, where no number, `!` or `_` can; a `|` after it makes it a pair, left
/// to [`scalar`]). `None` (nothing consumed) for anything else.
fn plain_name(i: &mut &str) -> Option<Operand> {
    let c = *i.as_bytes().first()?;
    if !(c.is_ascii_alphabetic() || c == b'%' || c == b'$') {
        return None;
    }
    let start = *i;
    let Ok(name) = reg_name.parse_next(i) else {
        *i = start; // (cannot fail after such a character; left as found if it did)
        return None;
    };
    if i.trim_start().starts_with('|') {
        *i = start;
        return None;
    }
    Some(Operand::Name(name.into()))
}

/// A scalar operand: anything but an address or a vector.
fn scalar(i: &mut &str) -> ModalResult<Operand> {
    if let Some(o) = plain_name(i) {
        return Ok(o);
    }
    alt((
        preceded(('!', ws), reg_name).map(|n: &str| Operand::Not(n.into())),
        number,
        (reg_name, ws, '|', ws, reg_name)
            .map(|(a, _, _, _, b): (&str, _, _, _, &str)| Operand::Pair(a.into(), b.into())),
        (
            '_',
            winnow::combinator::not(one_of(|c: char| {
                c.is_ascii_alphanumeric() || c == '_' || c == '$'
            })),
        )
            .map(|_| Operand::Sink),
        reg_name.map(|n: &str| Operand::Name(n.into())),
    ))
    .parse_next(i)
}

/// One element of a vector operand: a scalar. A `{` here is a vector nested in a vector, which
/// PTX does not have (PTX ISA §6.4.3 "Vectors as Operands": a brace-enclosed list of scalar
/// registers); it is refused at once, so the operand parser never recurses.
fn vector_element(i: &mut &str) -> ModalResult<Operand> {
    let _ = ws.parse_next(i)?;
    if i.starts_with('{') {
        return cut_err(fail)
            .context(StrContext::Expected(StrContextValue::Description(
                "a scalar vector element, not '{' (a vector operand's braces nest once, PTX ISA §6.4.3 Vectors as Operands)",
            )))
            .parse_next(i);
    }
    scalar.parse_next(i)
}

/// `{a, b, …}`: at most [`MAX_VECTOR_ELEMENTS`] scalars.
fn vector(i: &mut &str) -> ModalResult<Operand> {
    let _ = ('{', ws).parse_next(i)?;
    let v: Vec<Operand> = cut_err(separated(
        1..=MAX_VECTOR_ELEMENTS as usize,
        vector_element,
        (ws, ','),
    ))
    .parse_next(i)?;
    let _ = ws.parse_next(i)?;
    if v.len() == MAX_VECTOR_ELEMENTS as usize && i.starts_with(',') {
        return cut_err(fail)
            .context(StrContext::Expected(StrContextValue::Description(
                "'}' after at most 256 elements (parse::MAX_VECTOR_ELEMENTS)",
            )))
            .parse_next(i);
    }
    cut_err('}').parse_next(i)?;
    Ok(Operand::Vector(v))
}

fn operand(i: &mut &str) -> ModalResult<Operand> {
    // A plain name (most operands) is what `scalar` would parse: `address` and `vector` fail
    // at its first character.
    let start = *i;
    let _ = ws.parse_next(i)?;
    if let Some(o) = plain_name(i) {
        return Ok(o);
    }
    *i = start;
    preceded(ws, alt((address, vector, scalar)))
        .context(StrContext::Expected(StrContextValue::Description(
            "an operand",
        )))
        .parse_next(i)
}

fn opcode<'a>(i: &mut &'a str) -> ModalResult<&'a str> {
    (
        one_of(|c: char| c.is_ascii_alphabetic()),
        take_while(0.., |c: char| {
            c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == ':'
        }),
    )
        .take()
        .context(StrContext::Expected(StrContextValue::Description(
            "an opcode",
        )))
        .parse_next(i)
}

/// A byte cursor over one statement for [`quick_instruction_in`].
struct Quick<'a> {
    t: &'a str,
    i: usize,
}

impl<'a> Quick<'a> {
    fn peek(&self) -> Option<u8> {
        self.t.as_bytes().get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.i += usize::from(hit);
        hit
    }

    /// [`ws`]: ASCII spaces, tabs, carriage returns and newlines (winnow's `multispace0`).
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    fn run(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
    }

    /// [`reg_name`]: an [`ident`] and an optional `.x`/`.y`/`.z`/`.w` not followed by a letter,
    /// digit or `_`. `underscore`: whether it may begin with `_` ([`plain_name`] may not).
    fn reg_name(&mut self, underscore: bool) -> Option<&'a str> {
        let start = self.i;
        let c = self.peek()?;
        if !(c.is_ascii_alphabetic() || c == b'$' || c == b'%' || (underscore && c == b'_')) {
            return None;
        }
        self.i += 1;
        let b = self.t.as_bytes();
        while b.get(self.i).is_some_and(|&c| IDENT_REST[usize::from(c)]) {
            self.i += 1;
        }
        if b.get(self.i) == Some(&b'.')
            && matches!(b.get(self.i + 1), Some(b'x' | b'y' | b'z' | b'w'))
            && !b
                .get(self.i + 2)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            self.i += 2;
        }
        Some(&self.t[start..self.i])
    }

    /// [`int_lit`]: `-`, a digit, letters and digits, read by [`int_value`].
    fn int_lit(&mut self) -> Option<i128> {
        let start = self.i;
        self.eat(b'-');
        if !self.peek()?.is_ascii_digit() {
            return None;
        }
        self.run(|c| c.is_ascii_alphanumeric());
        int_value(&self.t[start..self.i])
    }

    /// [`number`] for `0f` + 8 and `0d` + 16 hex digits and integers; `None` for the rest
    /// (decimal floats among them).
    fn number(&mut self) -> Option<Operand> {
        let rest = &self.t[self.i..];
        let hex = |n: usize| {
            let h = &rest[2..];
            let k = h.bytes().take_while(u8::is_ascii_hexdigit).count();
            (k == n).then(|| &h[..n])
        };
        if rest.starts_with("0f") || rest.starts_with("0F") {
            let v = u32::from_str_radix(hex(8)?, 16).ok()?;
            self.i += 10;
            return Some(Operand::F32(v));
        }
        if rest.starts_with("0d") || rest.starts_with("0D") {
            let v = u64::from_str_radix(hex(16)?, 16).ok()?;
            self.i += 18;
            return Some(Operand::F64(v));
        }
        let digits = rest.strip_prefix('-').unwrap_or(rest);
        let k = digits.bytes().take_while(u8::is_ascii_digit).count();
        if digits.as_bytes().get(k) == Some(&b'.') {
            return None;
        }
        self.int_lit().map(Operand::Int)
    }

    /// A scalar that is a plain name (not a `|` pair) or a number.
    fn scalar(&mut self) -> Option<Operand> {
        let c = self.peek()?;
        if c.is_ascii_digit() || c == b'-' {
            return self.number();
        }
        let name = self.reg_name(false)?;
        let end = self.i;
        self.ws();
        if self.peek() == Some(b'|') {
            return None;
        }
        self.i = end;
        Some(Operand::Name(name.into()))
    }

    /// [`address`]'s `[name]` and `[name+int]`.
    fn address(&mut self) -> Option<Operand> {
        self.ws();
        let name = self.reg_name(true)?;
        self.ws();
        let mut off = 0;
        if self.eat(b'+') {
            self.ws();
            off = i64::try_from(self.int_lit()?).ok()?;
            self.ws();
        }
        self.eat(b']')
            .then(|| Operand::Address(Some(name.into()), off))
    }

    /// [`vector`] of at most [`MAX_VECTOR_ELEMENTS`] - 1 scalars.
    fn vector(&mut self) -> Option<Operand> {
        let mut v = Vec::new();
        loop {
            if v.len() + 1 >= MAX_VECTOR_ELEMENTS as usize {
                return None;
            }
            self.ws();
            v.push(self.scalar()?);
            self.ws();
            if self.eat(b'}') {
                return Some(Operand::Vector(v));
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    fn operand(&mut self) -> Option<Operand> {
        self.ws();
        if self.eat(b'[') {
            self.address()
        } else if self.eat(b'{') {
            self.vector()
        } else {
            self.scalar()
        }
    }
}

/// The bytes an identifier continues with: ASCII letters, digits, `_` and `$` ([`ident`]).
static IDENT_REST: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
        c += 1;
    }
    t
};

/// The bytes an opcode continues with ([`opcode`]): ASCII letters, digits, `_`, `.` and `:`.
static OPCODE_REST: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':');
        c += 1;
    }
    t
};

/// [`quick_instruction_in`] with an opcode cache of its own.
#[cfg(test)]
fn quick_instruction(t: &str, line: u32) -> Option<Inst> {
    quick_instruction_in(t, line, &mut Opcodes::default())
}

/// [`instruction_in`]'s answer for the common shapes, without winnow: a guard, an opcode
/// (split through `ops`) and comma-separated names, integers, `0f`/`0d` constants,
/// `[name+int]` addresses and vectors of those. `None` for anything else (every error among
/// it), which [`instruction_in`] then reads with winnow; where this answers, the answer is
/// exactly winnow's (tested on every statement of the fixtures and on mutations of them).
fn quick_instruction_in(t: &str, line: u32, ops: &mut Opcodes) -> Option<Inst> {
    let mut q = Quick { t, i: 0 };
    q.ws();
    let guard = if q.eat(b'@') {
        let neg = q.eat(b'!');
        Some((q.reg_name(true)?.into(), neg))
    } else {
        None
    };
    q.ws();
    let start = q.i;
    if !q.peek()?.is_ascii_alphabetic() {
        return None;
    }
    while q.peek().is_some_and(|c| OPCODE_REST[usize::from(c)]) {
        q.i += 1;
    }
    let op = &t[start..q.i];
    let opcode = ops.split(op);
    if opcode.len() > MAX_QUALIFIERS as usize + 1 || opcode[0] == "call" {
        return None;
    }
    q.ws();
    let mut operands = Vec::new();
    if q.i < t.len() {
        loop {
            if operands.len() >= MAX_OPERANDS as usize {
                return None;
            }
            operands.push(q.operand()?);
            q.ws();
            if q.i == t.len() {
                break;
            }
            if !q.eat(b',') {
                return None;
            }
        }
    }
    Some(Inst {
        line,
        guard,
        opcode,
        operands,
        text: collapse_ws(t),
    })
}

/// [`instruction_in`] with an opcode cache of its own.
#[cfg(test)]
fn instruction(t: &str, line: u32) -> Result<Inst, ParseError> {
    instruction_in(t, line, &mut Opcodes::default())
}

/// An instruction statement, its opcode split through `ops`.
fn instruction_in(t: &str, line: u32, ops: &mut Opcodes) -> Result<Inst, ParseError> {
    if let Some(i) = quick_instruction_in(t, line, ops) {
        return Ok(i);
    }
    winnow_instruction(t, line)
}

/// An instruction statement read with winnow (every shape, every error).
fn winnow_instruction(t: &str, line: u32) -> Result<Inst, ParseError> {
    let mut i = t;
    let guard = (
        ws,
        opt(preceded(
            '@',
            (opt('!'), reg_name).map(|(n, r): (Option<char>, &str)| (r.into(), n.is_some())),
        )),
        ws,
    )
        .map(|(_, g, _)| g)
        .parse_next(&mut i)
        .map_err(|e| werr(line, "a guard @%p", i, &unwrap_err(e)))?;
    let op = opcode
        .parse_next(&mut i)
        .map_err(|e| werr(line, "an instruction", i, &unwrap_err(e)))?;
    if op.split('.').count() > MAX_QUALIFIERS as usize + 1 {
        return Err(ParseError {
            line,
            message: format!(
                "more than {MAX_QUALIFIERS} qualifiers in '{}': tilelab's limit per opcode (parse::MAX_QUALIFIERS; PTX's longest opcodes have about 14)",
                shorten(op)
            ),
        });
    }
    let opcode: Vec<Name> = split_opcode(op);
    let mut operands = Vec::new();
    let _ = ws.parse_next(&mut i);
    if opcode[0] == "call" {
        operands = call_operands(i, line)?;
    } else if !i.is_empty() {
        let list: Result<Vec<Operand>, _> =
            separated(1..=MAX_OPERANDS as usize, operand, (ws, ',')).parse_next(&mut i);
        operands = list.map_err(|e| werr(line, "operands separated by ','", i, &unwrap_err(e)))?;
        let _ = ws.parse_next(&mut i);
        if operands.len() == MAX_OPERANDS as usize && i.starts_with(',') {
            return Err(ParseError {
                line,
                message: format!(
                    "more than {MAX_OPERANDS} operands in '{}': tilelab's limit per instruction (parse::MAX_OPERANDS; PTX's widest instruction has 8)",
                    shorten(t)
                ),
            });
        }
        if !i.is_empty() {
            return Err(err(line, "',' or the end of the statement", i));
        }
    }
    Ok(Inst {
        line,
        guard,
        opcode,
        operands,
        text: collapse_ws(t),
    })
}

/// `t`'s words joined by single spaces (`split_whitespace`, then `join(" ")`, without the
/// list). ASCII text is cut at ASCII whitespace bytes (the only whitespace it can hold; an
/// ASCII byte is always a character boundary), without decoding characters.
///
/// Eight bytes at a time where none of them is at most a space (none can be whitespace): the
/// statements are mostly such runs.
fn collapse_ws(t: &str) -> String {
    if t.is_ascii() {
        let b = t.as_bytes();
        let white = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
        let mut out = vec![0u8; b.len()];
        let mut n = 0;
        // Whitespace seen since the last byte of a word.
        let mut gap = false;
        let mut k = 0;
        while k < b.len() {
            let w = b.get(k..k + 8).unwrap_or(&b[k..]);
            if let Ok(w8) = <[u8; 8]>::try_from(w) {
                let x = u64::from_le_bytes(w8);
                // Whether some byte of x is below 0x21 (exact for ASCII bytes).
                if x.wrapping_sub(0x2121_2121_2121_2121) & !x & 0x8080_8080_8080_8080 == 0 {
                    if gap && n > 0 {
                        out[n] = b' ';
                        n += 1;
                    }
                    gap = false;
                    out[n..n + 8].copy_from_slice(&w8);
                    n += 8;
                    k += 8;
                    continue;
                }
            }
            for &c in w {
                if c <= b' ' && white(c) {
                    gap = true;
                } else {
                    if gap && n > 0 {
                        out[n] = b' ';
                        n += 1;
                    }
                    gap = false;
                    out[n] = c;
                    n += 1;
                }
            }
            k += w.len();
        }
        out.truncate(n);
        return String::from_utf8(out).unwrap_or_default();
    }
    let mut out = String::with_capacity(t.len());
    for w in t.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// `call`'s operands (PTX ISA 9.7.12.3 call: `call{.uni} (ret-param), func, (param-list)`,
/// either list optional, an indirect call's prototype last): the callee alone, as a name; the
/// parameter lists are not simulated.
fn call_operands(rest: &str, line: u32) -> Result<Vec<Operand>, ParseError> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (k, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(rest[start..k].trim());
                start = k + 1;
            }
            _ => {}
        }
        if depth < 0 {
            break;
        }
    }
    parts.push(rest[start..].trim());
    let callee = parts.iter().find(|p| !p.starts_with('('));
    let ok = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.'))
    };
    match callee {
        Some(c) if depth == 0 && ok(c) => Ok(vec![Operand::Name((*c).into())]),
        _ => Err(ParseError {
            line,
            message: format!(
                "'call {}': expected call{{.uni}} (ret-param), func, (param-list) (PTX ISA 9.7.12.3 call)",
                shorten(rest)
            ),
        }),
    }
}

fn unwrap_err(e: winnow::error::ErrMode<ContextError>) -> ContextError {
    match e {
        winnow::error::ErrMode::Backtrack(e) | winnow::error::ErrMode::Cut(e) => e,
        winnow::error::ErrMode::Incomplete(_) => ContextError::new(),
    }
}

/// `ld.shared::cta.v4.b32` → `["ld", "shared::cta", "v4", "b32"]`.
fn split_opcode(op: &str) -> Vec<Name> {
    let b = op.as_bytes();
    let mut v = Vec::with_capacity(b.iter().filter(|&&c| c == b'.').count() + 1);
    let mut s = 0;
    for (k, &c) in b.iter().enumerate() {
        if c == b'.' {
            v.push(Name::from(&op[s..k]));
            s = k + 1;
        }
    }
    v.push(Name::from(&op[s..]));
    v
}

/// Directives a kernel body may hold that mean nothing to the simulation (their use, such as
/// `call` for `.param`, is refused where it appears).
const BODY_DIRECTIVES: [&str; 5] = [
    ".param",
    ".callprototype",
    ".branchtargets",
    ".calltargets",
    ".maxnreg",
];

/// A body statement: `.reg`, a variable, `.pragma`/`.loc` (nothing), or an instruction.
fn body_stmt(t: &str, line: u32, ops: &mut Opcodes) -> Result<Option<Stmt>, ParseError> {
    if starts_with_word(t, ".reg") {
        return reg_decl(&t[".reg".len()..], line).map(|r| Some(Stmt::Reg(r)));
    }
    if t.starts_with('.') {
        if LINE_DIRECTIVES.iter().any(|d| starts_with_word(t, d)) {
            return Ok(None);
        }
        if starts_with_word(t, ".param") {
            let last = t.split_whitespace().last().unwrap_or("");
            let name = last.split('[').next().unwrap_or(last).trim_end_matches(';');
            return Ok(Some(Stmt::CallParam(name.to_string(), line)));
        }
        if BODY_DIRECTIVES.iter().any(|d| starts_with_word(t, d)) {
            return Ok(None);
        }
        return match var_decl(t, line, false)? {
            Some(v) => Ok(Some(Stmt::Var(v))),
            None => Err(ParseError {
                line,
                message: format!(
                    "unsupported directive '{}' in a kernel body (allowed: .reg, .shared, .local, .pragma, .loc; PTX ISA §11)",
                    shorten(t)
                ),
            }),
        };
    }
    instruction_in(t, line, ops).map(|i| Some(Stmt::Inst(i)))
}

/// `.reg .b32 %r<145>;` → `%r` × 145; `.reg .pred %p, %q;` → both names. The type must be a
/// PTX type the simulator models; a count is at most [`MAX_REGISTERS`] (the kernel's total is
/// checked by the caller). Vector registers (`.reg .v4 .b32`) are not supported.
fn reg_decl(rest: &str, line: u32) -> Result<RegDecl, ParseError> {
    let text = || format!(".reg{rest}");
    let mut i = rest;
    let ty = preceded((ws, '.'), ident)
        .parse_next(&mut i)
        .map_err(|e| werr(line, ".reg .TYPE name or name<N>", i, &unwrap_err(e)))?;
    if matches!(ty, "v2" | "v4" | "v8") {
        return Err(ParseError {
            line,
            message: format!(
                "vector registers ('{}') are not supported: declare scalar registers",
                shorten(&text())
            ),
        });
    }
    let ty = decl_type(ty, line, "a register")?;
    let r: Result<Vec<(&str, Option<i128>)>, _> = separated(
        1..,
        (
            preceded(ws, ident),
            opt(delimited(('<', ws), int_lit, (ws, '>'))),
        ),
        (ws, ','),
    )
    .parse_next(&mut i);
    let r = r.map_err(|e| werr(line, ".reg .TYPE name or name<N>", i, &unwrap_err(e)))?;
    if !i.trim().is_empty() {
        return Err(err(line, "';' after the register list", i));
    }
    let mut names = Vec::with_capacity(r.len());
    for (name, n) in r {
        let n = match n {
            Some(n) => Some(
                u32::try_from(n)
                    .ok()
                    .filter(|&n| n <= MAX_REGISTERS)
                    .ok_or_else(|| ParseError {
                        line,
                        message: format!(
                            "'{name}<{n}>' declares {n} registers; a kernel may declare 0 to {MAX_REGISTERS} (tilelab's limit, parse::MAX_REGISTERS)"
                        ),
                    })?,
            ),
            None => None,
        };
        names.push((name.to_string(), n));
    }
    Ok(RegDecl { ty, names, line })
}

/// Size in bytes of a PTX scalar type suffix (`b8` 1, `f16x2` 4, `pred` 1).
pub fn type_size(ty: &str) -> Option<u32> {
    Some(match ty {
        "b8" | "u8" | "s8" | "pred" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        _ => return None,
    })
}

/// The state spaces a variable may be declared in here (PTX ISA §5.1).
const VAR_SPACES: [&str; 4] = ["shared", "global", "const", "local"];

/// Module-scope directives that declare nothing the simulation needs (linking, aliases,
/// texture references): kept as nothing.
const MODULE_DIRECTIVES: [&str; 6] = [".visible", ".weak", ".extern", ".common", ".alias", ".tex"];

/// The largest size a variable of `space` may have, bytes, and the rule's words.
fn space_limit(space: &str) -> (u64, String) {
    let l = Arch::Sm90.limits();
    match space {
        "shared" => (
            u64::from(l.smem_per_block_bytes),
            format!(
                "{} bytes of shared memory per block on sm_90, the simulated GPU (CUDA C++ Programming Guide, Table 31)",
                l.smem_per_block_bytes
            ),
        ),
        "const" => (
            u64::from(l.const_bytes),
            format!(
                "{} bytes of constant memory (CUDA C++ Programming Guide, Table 31)",
                l.const_bytes
            ),
        ),
        "local" => (u64::from(LOCAL_FRAME_LIMIT), String::new()),
        _ => (
            GLOBAL_VAR_LIMIT,
            format!("{GLOBAL_VAR_LIMIT} bytes (1 GiB), tilelab's limit (parse::GLOBAL_VAR_LIMIT)"),
        ),
    }
}

/// A declaration's qualifiers, each at most once: its state space, `.align`, type and
/// vector width (PTX ISA §5.4.1 Variable Declarations).
type DeclMods<'a> = (Option<&'a str>, Option<u32>, Option<&'a str>, u32);

/// Reads the qualifiers of the declaration `t` ([`DeclMods`]).
fn decl_mods<'a>(
    mods: &[(&'a str, Option<i128>)],
    line: u32,
    t: &str,
) -> Result<DeclMods<'a>, ParseError> {
    let mut space: Option<&str> = None;
    let mut align = None;
    let mut ty: Option<&str> = None;
    let mut vec = 1u32;
    for (m, n) in mods {
        let m = *m;
        if VAR_SPACES.contains(&m) {
            if let Some(s) = space {
                return Err(ParseError {
                    line,
                    message: format!(
                        "two state spaces '.{s}' and '.{m}' in '{}': a variable lives in one state space (PTX ISA §5.1 State Spaces)",
                        shorten(t)
                    ),
                });
            }
            space = Some(m);
        } else if m == "align" {
            let Some(n) = n else {
                return Err(err(line, "a byte count after .align", t));
            };
            if align.is_some() {
                return Err(ParseError {
                    line,
                    message: format!("'.align' given twice in '{}'", shorten(t)),
                });
            }
            if let Some(e) = align_error(*n, line, t) {
                return Err(e);
            }
            align = u32::try_from(*n).ok();
        } else if matches!(m, "v2" | "v4") {
            if vec != 1 {
                return Err(ParseError {
                    line,
                    message: format!(
                        "two vector qualifiers in '{}': a variable takes one of .v2 .v4 (PTX ISA §5.4.2 Vectors)",
                        shorten(t)
                    ),
                });
            }
            vec = if m == "v2" { 2 } else { 4 };
        } else if type_like(m) || m == "pred" {
            if let Some(t0) = ty {
                return Err(ParseError {
                    line,
                    message: format!(
                        "two types '.{t0}' and '.{m}' in '{}': a variable has one type (PTX ISA §5.4.1 Variable Declarations)",
                        shorten(t)
                    ),
                });
            }
            ty = Some(m);
        } else if MODULE_DIRECTIVES.contains(&format!(".{m}").as_str()) {
        } else {
            return Err(ParseError {
                line,
                message: format!(
                    "unknown or unsupported '.{m}' in the declaration '{}' (PTX ISA §5.4.1 Variable Declarations)",
                    shorten(t)
                ),
            });
        }
    }
    Ok((space, align, ty, vec))
}

/// The bytes of an integer initializer (`= {1, 2, 3}`) of scalar type `scalar` (written
/// `ty`, `sbytes` bytes each), each value checked against the type's range (PTX ISA §5.4.4
/// Initializers), and how many scalars it has.
fn init_bytes(
    init: Option<&str>,
    scalar: Ty,
    sbytes: u32,
    ty: &str,
    line: u32,
) -> Result<(Vec<u8>, u64), ParseError> {
    let mut bytes = Vec::new();
    let mut scalars = 0u64;
    if let Some(init) = init {
        let body = init.trim().trim_start_matches('{').trim_end_matches('}');
        let bits = scalar.bits();
        for part in body
            .split(',')
            .map(|p| p.trim().trim_matches(['{', '}']).trim())
        {
            if part.is_empty() {
                continue;
            }
            let v = int_value(part).ok_or_else(|| err(line, "an integer initializer", part))?;
            let fits = bits >= 64 || (-(1i128 << (bits - 1))..(1i128 << bits)).contains(&v);
            if !fits || !(-(1i128 << 63)..(1i128 << 64)).contains(&v) {
                return Err(ParseError {
                    line,
                    message: format!(
                        "initializer {part} does not fit in .{ty} (PTX ISA §5.4.4 Initializers)"
                    ),
                });
            }
            let le = (v as u64).to_le_bytes();
            bytes.extend_from_slice(&le[..sbytes as usize]);
            scalars += 1;
        }
    }
    Ok((bytes, scalars))
}

/// An initializer nests its braces once per array dimension, and once more for the elements
/// of a vector type (PTX ISA §5.4.4 Initializers): `allowed` levels.
fn check_init_nesting(init: &str, name: &str, allowed: usize, line: u32) -> Result<(), ParseError> {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for c in init.chars() {
        match c {
            '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > allowed || depth != 0 {
        return Err(ParseError {
            line,
            message: format!(
                "the initializer of '{name}' nests braces {deepest} deep, its declaration has {allowed} level{} (one per array dimension, one for a vector; PTX ISA §5.4.4 Initializers)",
                if allowed == 1 { "" } else { "s" }
            ),
        });
    }
    Ok(())
}

/// A variable's size against its initializer's `scalars` (of `sbytes` bytes each) and its
/// state space's limit (`space_limit`).
fn check_var_size(
    name: &str,
    space: &str,
    size: u64,
    scalars: u64,
    sbytes: u32,
    line: u32,
) -> Result<(), ParseError> {
    let capacity = size / u64::from(sbytes);
    if scalars > capacity {
        return Err(ParseError {
            line,
            message: format!(
                "the initializer of '{name}' has {scalars} elements, the variable {capacity} (PTX ISA §5.4.4 Initializers)"
            ),
        });
    }
    let (limit, rule) = space_limit(space);
    if size > limit {
        return Err(ParseError {
            line,
            message: if space == "local" {
                // The words of the frame's own check (decode.rs), which sums the variables.
                format!(
                    "local variable '{name}' of {size} bytes makes the frame exceed {limit} bytes per thread (CUDA's local-memory limit)"
                )
            } else {
                format!("{space} variable '{name}' of {size} bytes exceeds {rule}")
            },
        });
    }
    Ok(())
}

/// A variable declaration at module (`module` true) or body scope, or `None` for module
/// directives without meaning here. Every modifier must mean something (a state space, a type,
/// `.align N`, `.v2`/`.v4`, a linking directive); one state space, one type; the size within
/// the space's limit; the initializer within the variable.
fn var_decl(t: &str, line: u32, module: bool) -> Result<Option<VarDecl>, ParseError> {
    let (decl, init) = match t.split_once('=') {
        Some((d, i)) => (d.trim(), Some(i.trim())),
        None => (t, None),
    };
    let mut i = decl;
    let parsed: Result<_, winnow::error::ErrMode<ContextError>> = (
        winnow::combinator::repeat::<_, _, Vec<(&str, Option<i128>)>, _, _>(
            0..,
            preceded(
                (ws, '.'),
                (
                    ident,
                    opt(preceded(
                        (take_while(1.., ' '), winnow::combinator::peek(digit1)),
                        int_lit,
                    )),
                ),
            ),
        ),
        ws,
        opt(ident),
        opt(delimited(('[', ws), opt(int_lit), (ws, ']'))),
        ws,
    )
        .parse_next(&mut i);
    let (mods, _, name, dims, _) =
        parsed.map_err(|e| werr(line, "a variable declaration", i, &unwrap_err(e)))?;
    let (space, align, ty, vec) = decl_mods(&mods, line, t)?;
    let Some(space) = space else {
        if let Some(t0) = ty.filter(|t0| !PTX_TYPES.contains(t0)) {
            return Err(ParseError {
                line,
                message: not_a_type(t0),
            });
        }
        let first = t.split_whitespace().next().unwrap_or("");
        if module && MODULE_DIRECTIVES.contains(&first) {
            // `.visible`, `.weak`, `.alias`, … carry nothing to simulate.
            return Ok(None);
        }
        if module {
            return Err(ParseError {
                line,
                message: format!(
                    "unknown or unsupported directive '{}' at module scope (PTX ISA §11 Directives)",
                    shorten(t)
                ),
            });
        }
        return Ok(None);
    };
    if !i.is_empty() {
        return Err(err(line, "'=' or ';' after the declaration", i));
    }
    let Some(name) = name else {
        return Err(err(line, "a variable name", t));
    };
    let Some(ty) = ty else {
        return Err(err(
            line,
            "a type (.b8, .u32, .f32, …) in the declaration",
            t,
        ));
    };
    let scalar = decl_type(ty, line, "a variable")?;
    if scalar == Ty::Pred {
        return Err(ParseError {
            line,
            message: format!(
                "'.{space} .pred {name}': predicates live only in registers (PTX ISA §5.2.1: .pred is restricted to the .reg state space)"
            ),
        });
    }
    let sbytes = scalar.bytes();
    let el = sbytes * vec;
    if el > 16 {
        return Err(ParseError {
            line,
            message: format!(
                "'.v{vec} .{ty}' is {} bits: a vector is at most 128 bits (PTX ISA §5.4.2 Vectors)",
                el * 8
            ),
        });
    }
    // Initializer scalars, checked against the type's range as they are read.
    let (bytes, scalars) = init_bytes(init, scalar, sbytes, ty, line)?;
    let external = mods.iter().any(|(m, _)| *m == "extern");
    if external && space == "local" {
        return Err(ParseError {
            line,
            message: format!(
                "'.extern .local {name}': .local variables are private to a thread and cannot be external (PTX ISA §5.1.5 Local State Space, §11.6.1 .extern)"
            ),
        });
    }
    if let Some(init) = init {
        let allowed = usize::from(dims.is_some()) + usize::from(vec > 1);
        check_init_nesting(init, name, allowed, line)?;
    }
    let size = match dims {
        None => Some(u64::from(el)),
        // `name[] = {…}`: the initializer gives the size.
        Some(None) if init.is_some() => Some(scalars.div_ceil(u64::from(vec)) * u64::from(el)),
        Some(None) if !external => {
            return Err(ParseError {
                line,
                message: format!(
                    "'{name}[]' has no size: only an .extern array (dynamic shared memory, .extern .shared) or one with an initializer may omit it (PTX ISA §5.4.1 Variable Declarations, §11.6.1 .extern)"
                ),
            });
        }
        Some(None) => None,
        Some(Some(n)) => {
            let n = u64::try_from(n).map_err(|_| err(line, "a non-negative array size", t))?;
            Some(
                n.checked_mul(u64::from(el))
                    .ok_or_else(|| err(line, "an array size that fits in 64 bits", t))?,
            )
        }
    };
    if let Some(size) = size {
        check_var_size(name, space, size, scalars, sbytes, line)?;
    }
    if init.is_some() && matches!(space, "shared" | "local") {
        return Err(ParseError {
            line,
            message: format!(
                "'{name}' in .{space} has an initializer: .shared and .local variables cannot be initialized (PTX ISA §5.4.4 Initializers)"
            ),
        });
    }
    Ok(Some(VarDecl {
        space: space.to_string(),
        name: name.to_string(),
        ty: ty.to_string(),
        align: align.unwrap_or(el).max(1),
        size,
        init: bytes,
        line,
    }))
}

/// The performance-tuning and cluster directives an `.entry` header may carry after its
/// parameters (PTX ISA §11.4 "Performance-Tuning Directives", §11.7 "Cluster Dimension
/// Directives"), with how many integers each takes.
const ENTRY_DIRECTIVES: [(&str, usize, usize); 10] = [
    (".maxnreg", 1, 1),
    (".maxntid", 1, 3),
    (".reqntid", 1, 3),
    (".minnctapersm", 1, 1),
    (".maxnctapersm", 1, 1),
    (".noreturn", 0, 0),
    (".reqnctapercluster", 1, 3),
    (".maxclusterrank", 1, 1),
    (".explicitcluster", 0, 0),
    (".blocksareclusters", 0, 0),
];

/// `.visible .entry name( params ) .reqntid 64` → a kernel without body; `None` for `.func`.
fn entry_header(t: &str, line: u32) -> Result<Option<Kernel>, ParseError> {
    let Some(pos) = t.find(".entry") else {
        return Ok(None);
    };
    let rest = &t[pos + ".entry".len()..];
    let mut i = rest;
    let name = preceded(ws, ident)
        .parse_next(&mut i)
        .map_err(|e| werr(line, "a kernel name after .entry", i, &unwrap_err(e)))?
        .to_string();
    let mut params: Vec<Param> = Vec::new();
    let mut param_names: std::collections::HashSet<String> = std::collections::HashSet::new();
    let (mut counted, mut newlines) = (0usize, 0usize);
    let after;
    let t2 = i.trim_start();
    if let Some(p) = t2.strip_prefix('(') {
        let Some(close) = p.find(')') else {
            return Err(err(line, "')' closing the parameter list", p));
        };
        for part in p[..close]
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            // The parameter's own line: `part` is a slice of `t`, which starts at `line`;
            // newlines are counted from the previous parameter on (linear in the header).
            let at = (part.as_ptr() as usize).saturating_sub(t.as_ptr() as usize);
            newlines += t.get(counted..at).map_or(0, |h| h.matches('\n').count());
            counted = counted.max(at);
            let line = line.saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
            let q = param(part, line)?;
            if !param_names.insert(q.name.clone()) {
                return Err(ParseError {
                    line,
                    message: format!(
                        "parameter '{}' of kernel '{name}' is declared twice: each parameter has its own name (PTX ISA §5.1.6.1 Kernel Function Parameters)",
                        q.name
                    ),
                });
            }
            // Every parameter takes at least one byte: past this many the layout cannot fit.
            if params.len() >= PARAM_LIMIT as usize {
                return Err(ParseError {
                    line,
                    message: format!(
                        "kernel '{name}' has more than {} parameters: they cannot fit in CUDA's {} bytes of kernel parameters",
                        PARAM_LIMIT, PARAM_LIMIT
                    ),
                });
            }
            params.push(q);
        }
        after = &p[close + 1..];
    } else {
        after = t2;
    }
    let mut k = Kernel {
        name,
        line,
        params,
        reqntid: None,
        maxntid: None,
        minnctapersm: None,
        maxnreg: None,
        reqnctapercluster: None,
        maxclusterrank: None,
        explicitcluster: false,
        body: Vec::new(),
        source: std::collections::BTreeMap::new(),
    };
    entry_directives(after, line, &mut k)?;
    Ok(Some(k))
}

/// Reads the directives after an `.entry`'s parameter list into `k`: each one known, with
/// 1 to 3 (or exactly 1) positive integers; `.reqntid` never with `.maxntid` (PTX ISA §11.4.3:
/// "The .reqntid directive cannot be used in conjunction with the .maxntid directive");
/// `.reqnctapercluster` never with `.maxclusterrank` (ptxas 13.0.88 refuses the pair as
/// "Conflicting directives", checked 2026-12-02, `tests/data/ptx_invalid/d14_*`); those two
/// may be 0, which means absent (as ptxas and the H200's driver take it).
fn entry_directives(after: &str, line: u32, k: &mut Kernel) -> Result<(), ParseError> {
    let mut rest = after.trim();
    // Whether .reqnctapercluster and .maxclusterrank were written (a 0 is written too).
    let mut both = (false, false);
    while !rest.is_empty() {
        let word_end = rest
            .find(|c: char| c.is_whitespace() || c == ',')
            .unwrap_or(rest.len());
        let word = &rest[..word_end];
        let Some(&(d, min, max)) = ENTRY_DIRECTIVES.iter().find(|(d, _, _)| *d == word) else {
            return Err(ParseError {
                line,
                message: format!(
                    "unknown directive '{}' after the parameters of kernel '{}' (PTX ISA §11.4: .maxnreg, .maxntid, .reqntid, .minnctapersm, .maxnctapersm, .noreturn; §11.7: .reqnctapercluster, .maxclusterrank, .explicitcluster)",
                    shorten(word),
                    k.name
                ),
            });
        };
        rest = rest[word_end..].trim_start();
        // Its integers: up to the next directive.
        let args_end = rest.find('.').unwrap_or(rest.len());
        let args_text = &rest[..args_end];
        rest = rest[args_end..].trim_start();
        let mut vals = Vec::new();
        for a in args_text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
        {
            // A cluster directive of 0 is written as absent (ptxas 13.0.88 accepts it and the
            // H200's driver launches as without it: tests/data/hopper_probes/h200_cluster_rules.json).
            let zero_ok = matches!(d, ".reqnctapercluster" | ".maxclusterrank");
            let v = a.parse::<u32>().ok().filter(|&v| v >= 1 || zero_ok);
            let Some(v) = v else {
                return Err(ParseError {
                    line,
                    message: format!(
                        "'{d} {}': {d} takes positive integers, found '{}' (PTX ISA §11.4)",
                        shorten(args_text),
                        shorten(a)
                    ),
                });
            };
            vals.push(v);
        }
        if vals.len() < min || vals.len() > max {
            let want = if min == max {
                format!("{min}")
            } else {
                format!("{min} to {max}")
            };
            return Err(ParseError {
                line,
                message: format!(
                    "'{d} {}': {d} takes {want} integers, found {} (PTX ISA §11.4)",
                    shorten(args_text),
                    vals.len()
                ),
            });
        }
        let dims = || {
            [
                vals[0],
                vals.get(1).copied().unwrap_or(1),
                vals.get(2).copied().unwrap_or(1),
            ]
        };
        match d {
            ".reqntid" => k.reqntid = Some(dims()),
            ".maxntid" => k.maxntid = Some(dims()),
            ".minnctapersm" => k.minnctapersm = Some(vals[0]),
            ".maxnreg" => k.maxnreg = Some(vals[0]),
            ".reqnctapercluster" => {
                both.0 = true;
                k.reqnctapercluster = Some(dims()).filter(|d| !d.contains(&0));
            }
            ".maxclusterrank" => {
                both.1 = true;
                k.maxclusterrank = Some(vals[0]).filter(|&v| v > 0);
            }
            ".explicitcluster" => k.explicitcluster = true,
            _ => {}
        }
    }
    if both == (true, true) {
        return Err(ParseError {
            line,
            message: format!(
                "kernel '{}' has both .reqnctapercluster and .maxclusterrank: a fixed cluster shape leaves no rank to bound (PTX ISA §11.7; ptxas 13.0 refuses them together as conflicting directives)",
                k.name
            ),
        });
    }
    if k.reqntid.is_some() && k.maxntid.is_some() {
        return Err(ParseError {
            line,
            message: format!(
                "kernel '{}' has both .reqntid and .maxntid: PTX ISA §11.4.3 says .reqntid cannot be used in conjunction with .maxntid",
                k.name
            ),
        });
    }
    Ok(())
}

/// One `.param` of an `.entry`: `.param .u64 .ptr .global .align 16 name` or `.param .b8
/// name[N]`. One type, a power-of-two `.align`, nothing unknown.
fn param(part: &str, line: u32) -> Result<Param, ParseError> {
    let words: Vec<&str> = part.split_whitespace().collect();
    if words.first() != Some(&".param") {
        return Err(err(line, "'.param' in the parameter list", part));
    }
    let mut ty: Option<&str> = None;
    let mut align = None;
    let mut ptr = false;
    let mut k = 1;
    let last = words.len().saturating_sub(1);
    while k < last {
        let w = words[k];
        let Some(m) = w.strip_prefix('.') else {
            return Err(err(line, "a parameter modifier (.TYPE, .align N, .ptr)", w));
        };
        if m == "align" {
            let n = words
                .get(k + 1)
                .filter(|_| k + 1 < last)
                .and_then(|s| {
                    let mut s = *s;
                    int_lit.parse_next(&mut s).ok().filter(|_| s.is_empty())
                })
                .ok_or_else(|| err(line, "a byte count after .align", part))?;
            if let Some(e) = align_error(n, line, part) {
                return Err(e);
            }
            // After `.ptr`, `.align N` is the alignment of the memory pointed to, not the
            // parameter's (PTX ISA §5.1.6.1 Kernel Function Parameters: `.param .type .ptr
            // .space .align N name`): the parameter keeps its type's natural alignment (Triton's
            // `.param .u64 .ptr .global .align 1` after an `.f32` sits at byte 8).
            if !ptr {
                align = u32::try_from(n).ok();
            }
            k += 2;
            continue;
        }
        if m == "ptr" {
            ptr = true;
        } else if ptr && VAR_SPACES.contains(&m) {
            // `.ptr .global`: the space the pointer points to.
        } else if type_like(m) || m == "pred" {
            if let Some(t0) = ty {
                return Err(ParseError {
                    line,
                    message: format!(
                        "two types '.{t0}' and '.{m}' in '{}': a parameter has one type",
                        shorten(part)
                    ),
                });
            }
            ty = Some(m);
        } else {
            return Err(ParseError {
                line,
                message: format!(
                    "unknown or unsupported '.{m}' in the parameter '{}' (PTX ISA §5.1.6.1 Kernel Function Parameters)",
                    shorten(part)
                ),
            });
        }
        k += 1;
    }
    let Some(ty) = ty else {
        return Err(err(line, "a parameter type (.u32, .u64, .f32, …)", part));
    };
    let sty = decl_type(ty, line, "a parameter")?;
    if sty == Ty::Pred {
        return Err(ParseError {
            line,
            message: format!(
                "parameter '{}' of type .pred: predicates live only in registers (PTX ISA §5.2.1)",
                shorten(part)
            ),
        });
    }
    let last = words.last().copied().unwrap_or("");
    let (name, count) = match last.split_once('[') {
        Some((n, c)) => {
            let c = c
                .strip_suffix(']')
                .and_then(|c| c.parse::<u32>().ok())
                .ok_or_else(|| err(line, "an array size", last))?;
            (n, c)
        }
        None => (last, 1),
    };
    if !is_ident(name) {
        return Err(err(line, "a parameter name", name));
    }
    let el = sty.bytes();
    Ok(Param {
        name: name.to_string(),
        size: el.saturating_mul(count),
        align: align.unwrap_or(el),
        ty: ty.to_string(),
        ptr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_starts_with_version() {
        assert!(check_module_start(SMALL).is_ok());
        // Comments and blank lines may come first (nvcc writes a comment header).
        let nvcc =
            "//\n// Generated by NVIDIA NVVM Compiler\n/* block\ncomment */\n\n.version 8.7\n";
        assert!(check_module_start(nvcc).is_ok());
        // A README: its first word, on its line.
        let e = check_module_start("\n\n# tilelab\n\nSee what happens").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("not a PTX module"), "{}", e.message);
        assert!(e.message.contains("'#'"), "{}", e.message);
        let e = check_module_start("[package]\nname = \"x\"").unwrap_err();
        assert!(e.message.contains("'[package]'"), "{}", e.message);
        let e = check_module_start("  // only a comment\n").unwrap_err();
        assert!(e.message.contains("found no text"), "{}", e.message);
        let e = check_module_start("/* never closed").unwrap_err();
        assert!(e.message.contains("'/*'"), "{}", e.message);
        // `.target` first is not a module either (the ISA wants .version first).
        assert!(check_module_start(".target sm_90\n.version 8.7\n").is_err());
    }

    const SMALL: &str = r#"
.version 8.7
.target sm_90a
.address_size 64
.extern .shared .align 16 .b8 global_smem[];
.global .align 1 .b8 s[3] = {1, 2, 3};
.visible .entry k(
	.param .u64 .ptr .global .align 1 k_param_0,
	.param .u32 k_param_1
)
.reqntid 64
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	ld.param.b32 	%r1, [k_param_1];   // comment
	mov.u32 	%r2, %tid.x;
	setp.lt.s32 %p0|%p1, %r1, 0x10;
$L__BB0_1:
	@!%p0 bra 	$L__BB0_1;
	{ .reg .b32 %t; mov.b32 %t, 0f3F800000; }
	ld.shared.v2.b32 {%r0, %r3}, [%r2+-16];
	ret;
}
	.section	.debug_abbrev
	{
.b8 1 // x
	}
"#;

    #[test]
    fn parses_a_small_module() {
        let m = parse(SMALL).unwrap();
        assert_eq!(m.target.as_deref(), Some("sm_90a"));
        assert_eq!(m.vars.len(), 2);
        assert_eq!(m.vars[0].size, None);
        assert_eq!(m.vars[1].init, vec![1, 2, 3]);
        let k = &m.kernels[0];
        assert_eq!(k.name, "k");
        assert_eq!(k.reqntid, Some([64, 1, 1]));
        assert!(k.params[0].ptr && !k.params[1].ptr);
        let insts: Vec<&Inst> = k
            .body
            .iter()
            .filter_map(|s| if let Stmt::Inst(i) = s { Some(i) } else { None })
            .collect();
        assert_eq!(insts[0].line, 15);
        assert_eq!(insts[1].operands[1], Operand::Name("%tid.x".into()));
        assert_eq!(
            insts[2].operands[0],
            Operand::Pair("%p0".into(), "%p1".into())
        );
        assert_eq!(insts[2].operands[2], Operand::Int(16));
        assert_eq!(insts[3].guard, Some(("%p0".into(), true)));
        assert_eq!(insts[4].operands[1], Operand::F32(0x3F80_0000));
        assert_eq!(
            insts[5].operands[1],
            Operand::Address(Some("%r2".into()), -16)
        );
        assert_eq!(insts[6].opcode, vec!["ret".to_string()]);
    }

    #[test]
    fn errors_name_the_line() {
        let e =
            parse(".version 8.7\n.visible .entry k()\n{\n add.s32 %r1, , %r2;\n}\n").unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        assert!(e.to_string().starts_with("line 4: expected"), "{e}");
        let e = parse(".visible .entry k()\n{\n add.s32 %r1, %r2\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
    }

    const HEAD: &str = ".version 8.7\n.target sm_90\n.address_size 64\n";

    /// PTX ISA §11.1 "PTX Module Directives": `.version MAJOR.MINOR` first and once with a
    /// major 1-9; one `.target` naming a target of the ISA's table; `.address_size` 32 or 64.
    /// Each refused with one line naming the directive's line (ptxas, CUDA 13.0, refuses all).
    #[test]
    fn module_directives_follow_the_isa() {
        let k = ".visible .entry k()\n{\nret;\n}\n";
        let bad: &[(&str, u32, &str)] = &[
            (".version 99.9\n.target sm_90\n", 1, "major version 1 to 9"),
            (".version abc\n.target sm_90\n", 1, "MAJOR.MINOR"),
            (".version 8\n.target sm_90\n", 1, "MAJOR.MINOR"),
            (
                ".version 8.7\n.version 8.7\n.target sm_90\n",
                2,
                "given twice (first at line 1)",
            ),
            (".version 8.7\n.target foo\n", 2, "'foo' is not a target"),
            (
                ".version 8.7\n.target sm_1000\n",
                2,
                "'sm_1000' is not a target",
            ),
            (
                ".version 8.7\n.target sm_91\n",
                2,
                "'sm_91' is not a target",
            ),
            (".version 8.7\n.target\n", 2, "no target is not a target"),
            (
                ".version 8.7\n.target sm_90, bogus\n",
                2,
                "'bogus' is not a .target option",
            ),
            (
                ".version 8.7\n.target sm_90\n.target sm_80\n",
                3,
                "given twice",
            ),
            (
                ".version 8.7\n.address_size 64\n",
                1,
                "no .target directive",
            ),
            (
                ".version 8.7\n.target sm_90\n.address_size 48\n",
                3,
                "32 or 64",
            ),
            (
                ".version 8.7\n.target sm_90\n.address_size 0\n",
                3,
                "32 or 64",
            ),
            (
                ".target sm_90\n.version 8.7\n",
                2,
                "must be the module's first directive",
            ),
        ];
        for (head, line, want) in bad {
            let e = parse(&format!("{head}{k}")).expect_err(head);
            assert_eq!(e.line, *line, "{head}: {e}");
            assert!(e.message.contains(want), "{head}: {e}");
            assert!(e.message.contains("PTX ISA §11.1"), "{head}: {e}");
        }
        for head in [
            ".version 8.7\n.target sm_90a\n.address_size 64\n",
            ".version 7.0\n.target sm_80\n.address_size 32\n",
            ".version 9.0\n.target sm_120f\n",
            ".version 6.4\n.target compute_70, debug\n",
        ] {
            let m = parse(&format!("{head}{k}")).unwrap_or_else(|e| panic!("{head}: {e}"));
            assert!(m.version.is_some() && m.target.is_some());
        }
    }

    /// Declarations the ISA forbids: an unsized array that is neither `.extern` nor
    /// initialized (§5.4.1), two vector qualifiers (§5.4.2), initializer braces deeper than
    /// the array's dimensions (§5.4.4), an `.extern .local` (§5.1.5).
    #[test]
    fn declarations_follow_the_isa() {
        let bad: &[(&str, &str)] = &[
            (".shared .b8 s[];", "'s[]' has no size"),
            (".shared .v2 .v2 .b32 s;", "two vector qualifiers"),
            (".shared .v2 .v4 .b32 s;", "two vector qualifiers"),
            (".extern .local .b8 l[];", "cannot be external"),
        ];
        for (decl, want) in bad {
            let e = parse(&format!(
                "{HEAD}.visible .entry k()\n{{\n{decl}\nret;\n}}\n"
            ))
            .expect_err(decl);
            assert_eq!(e.line, 6, "{decl}: {e}");
            assert!(e.message.contains(want), "{decl}: {e}");
        }
        let e = parse(&format!("{HEAD}.global .b32 g[2] = {{1, {{2}}}};\n")).unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        assert!(e.message.contains("nests braces 2 deep"), "{e}");
        for ok in [
            ".extern .shared .align 16 .b8 dyn[];",
            ".global .b32 g[] = {1, 2, 3};",
            ".global .v2 .u32 v[2] = {{1, 2}, {3, 4}};",
            ".const .b32 c = 5;",
        ] {
            parse(&format!("{HEAD}{ok}\n")).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    /// `HEAD` + a kernel `k` with `body`; its first body line is line 6.
    fn kernel(body: &str) -> String {
        format!("{HEAD}.visible .entry k()\n{{\n{body}\n}}\n")
    }

    fn parse_err(src: &str) -> ParseError {
        let e = parse(src).unwrap_err();
        assert!(!e.message.contains('\n'), "{e}");
        e
    }

    /// `.loc` attaches to the instructions after it until the next `.loc` (PTX ISA §11.5.2),
    /// Triton's trailing comment and nvcc's inlined form included; `.file` after the kernel
    /// (Triton's order) names the files; old nvcc's `@@DWARF` lines are skipped; a bad `.loc`
    /// or a `.file` index given twice is one line naming the line.
    #[test]
    fn loc_and_file_make_the_line_table() {
        let src = format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<3>;\nmov.u32 %r0, 1;\n\t.loc\t1 27 19                         // kernel.py:27:19\nmov.u32 %r1, 2;\nadd.u32 %r2, %r1, 1;\n.loc 2 170 12, function_name $L__info_string0, inlined_at 1 31 33\nL1:\nmov.u32 %r1, 3;\nret;\n}}\n@@DWARF .section .debug_info\n@@DWARF .byte 0x01, 0x02\n\t.file\t1 \"/tmp/kernel.py\"\n.file 2 \"standard.py\", 1700000000, 99\n"
        );
        let m = parse(&src).unwrap();
        let k = &m.kernels[0];
        let lines: Vec<(u32, u32, u32)> = k
            .source
            .iter()
            .map(|(&l, s)| (l, s.pos.file, s.pos.line))
            .collect();
        // HEAD is 3 lines: mov at 7 has no .loc; 9, 10 are kernel.py:27; 13 and ret (14) are
        // standard.py:170 inlined at kernel.py:31.
        assert_eq!(lines, [(9, 1, 27), (10, 1, 27), (13, 2, 170), (14, 2, 170)]);
        assert_eq!(k.source[&9].pos.column, 19);
        assert_eq!(
            k.source[&13].inlined_at.map(|p| (p.file, p.line, p.column)),
            Some((1, 31, 33))
        );
        assert_eq!(m.files[&1], "/tmp/kernel.py");
        assert_eq!(m.files[&2], "standard.py");
        let e = parse_err(&kernel(".loc 1 x 3\nret;"));
        assert!(
            e.line == 6 && e.message.contains("expected .loc FILE LINE COLUMN"),
            "{e}"
        );
        let e = parse_err(&format!(
            "{}.file 1 \"a.py\"\n.file 1 \"b.py\"\n",
            kernel("ret;")
        ));
        assert!(
            e.message
                .contains("'.file 1' is given twice (first at line 8)")
                && e.line == 9,
            "{e}"
        );
    }

    #[test]
    fn operands_print_as_ptx_writes_them() {
        let i = instruction(
            "@!%p1 mov.b64 {%r1, _}, [%rd2+-8], 0f3F800000, 0d3FF0000000000000, %p|%q, !%p2, -3, [k_param_0], [16]",
            1,
        )
        .unwrap();
        let shown: Vec<String> = i.operands.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "{%r1, _}",
                "[%rd2+-8]",
                "0f3F800000",
                "0d3FF0000000000000",
                "%p|%q",
                "!%p2",
                "-3",
                "[k_param_0]",
                "[16]"
            ]
        );
    }

    /// PTX ISA §6.4.3 "Vectors as Operands": a vector is a brace-enclosed list of scalars, so
    /// a brace inside one is refused at once (no recursion), and 100,000 levels are refused by
    /// the splitter's nesting limit with the line (it overflowed the stack).
    #[test]
    fn nested_vectors_are_refused_without_recursion() {
        let e = parse_err(&kernel(".reg .b32 %r<3>;\nmov.b64 %rd1, {{%r1, %r2}};"));
        assert_eq!(e.line, 7, "{e}");
        assert!(e.message.contains("PTX ISA §6.4.3"), "{e}");
        for open in ["{", "[", "("] {
            let close = match open {
                "{" => "}",
                "[" => "]",
                _ => ")",
            };
            let deep = format!("{}%r2{}", open.repeat(100_000), close.repeat(100_000));
            let e = parse_err(&kernel(&format!(".reg .b32 %r<3>;\nmov.b32 %r1, {deep};")));
            assert_eq!(e.line, 7, "{e}");
            assert!(
                e.message.starts_with(&format!(
                    "brackets nest deeper than {MAX_NESTING} levels in one statement"
                )),
                "{e}"
            );
        }
        // Initializers and module scope too.
        let deep = format!("{}1{}", "{".repeat(50_000), "}".repeat(50_000));
        let e = parse_err(&format!("{HEAD}.global .b32 g[1] = {deep};\n"));
        assert_eq!(e.line, 4, "{e}");
        // One level of braces (a vector) and one of brackets (an address) parse.
        let m = parse(&kernel(
            ".reg .b32 %r<3>;\n.reg .b64 %rd<2>;\nld.global.v2.b32 {%r1, %r2}, [%rd1+8];",
        ))
        .unwrap();
        assert_eq!(m.kernels[0].body.len(), 3);
    }

    #[test]
    fn blocks_nest_at_most_the_limit() {
        let ok = format!(
            "{}ret;{}",
            "{\n".repeat(MAX_BLOCK_DEPTH as usize - 1),
            "}\n".repeat(MAX_BLOCK_DEPTH as usize - 1)
        );
        assert!(parse(&kernel(&ok)).is_ok());
        let deep = format!("{}ret;{}", "{\n".repeat(100_000), "}\n".repeat(100_000));
        let e = parse_err(&kernel(&deep));
        assert_eq!(e.line, 6 + MAX_BLOCK_DEPTH - 1, "{e}");
        assert!(e.message.contains("parse::MAX_BLOCK_DEPTH"), "{e}");
    }

    /// `%r<N>` is kept as a range (it was expanded into N strings: forty `<1000000>` took
    /// 2.3 GB); the kernel's total is bounded before anything is allocated.
    #[test]
    fn register_declarations_are_ranges_within_a_budget() {
        let m = parse(&kernel(".reg .b32 %r<145>, %t;\n.reg .pred %p<2>;\nret;")).unwrap();
        let Stmt::Reg(r) = &m.kernels[0].body[0] else {
            panic!("{:?}", m.kernels[0].body[0]);
        };
        assert_eq!(
            (r.ty, r.names.clone(), r.count()),
            (
                Ty::B(32),
                vec![("%r".to_string(), Some(145)), ("%t".to_string(), None)],
                146
            )
        );
        let forty: String = (0..40)
            .map(|i| format!(".reg .b32 %x{i}<1000000>;\n"))
            .collect();
        let e = parse_err(&kernel(&forty));
        assert_eq!(e.line, 6, "{e}");
        assert!(e.message.contains("0 to 65536"), "{e}");
        let two = ".reg .b32 %x<40000>;\n.reg .b32 %y<40000>;\nret;";
        let e = parse_err(&kernel(two));
        assert_eq!(e.line, 7, "{e}");
        assert!(
            e.message.contains("80000 registers") && e.message.contains("MAX_REGISTERS"),
            "{e}"
        );
        // The budget is per kernel.
        let k2 = format!(
            "{}.visible .entry k2()\n{{\n.reg .b32 %y<40000>;\nret;\n}}\n",
            kernel(".reg .b32 %x<40000>;\nret;")
        );
        assert_eq!(parse(&k2).unwrap().kernels.len(), 2);
    }

    /// PTX ISA §5.2.1 "Fundamental Types": `.b33` is none; `.b128` is one the simulator does
    /// not model. Everywhere a type is written: registers, variables, parameters.
    #[test]
    fn unknown_types_are_refused_everywhere() {
        let e = parse_err(&kernel(".reg .b33 %r<3>;"));
        assert_eq!(e.line, 6);
        assert!(
            e.message
                .starts_with("'.b33' is not a PTX type (PTX ISA §5.2.1"),
            "{e}"
        );
        let e = parse_err(&kernel(".reg .b128 %q;"));
        assert!(e.message.contains("'.b128' is not supported"), "{e}");
        let e = parse_err(&kernel(".shared .align 4 .f12 s[4];"));
        assert!(e.message.starts_with("'.f12' is not a PTX type"), "{e}");
        let e = parse_err(&format!("{HEAD}.global .u7x3 g;\n"));
        assert!(e.message.starts_with("'.u7x3' is not a PTX type"), "{e}");
        let e = parse_err(&format!(
            "{HEAD}.visible .entry k(.param .b33 a)\n{{\nret;\n}}\n"
        ));
        assert_eq!(e.line, 4);
        assert!(e.message.starts_with("'.b33' is not a PTX type"), "{e}");
        // A parameter's error names its own line in a header of several.
        let e = parse_err(&format!(
            "{HEAD}.visible .entry k(\n.param .u64 a,\n.param .b33 b\n)\n{{\nret;\n}}\n"
        ));
        assert_eq!(e.line, 6, "{e}");
        let e = parse_err(&kernel(".shared .b8 .b16 s[4];"));
        assert!(e.message.contains("two types '.b8' and '.b16'"), "{e}");
        for (m, t) in [
            ("b33", true),
            ("f12", true),
            ("bf8x2", true),
            ("e4m7", true),
        ] {
            assert_eq!(type_like(m), t, "{m}");
            assert!(!PTX_TYPES.contains(&m), "{m}");
        }
        for m in [
            "m16n8k16",
            "x4",
            "v4",
            "b0",
            "h1",
            "shared::cta",
            "L2::256B",
            "sync",
        ] {
            assert!(!type_like(m), "{m}");
        }
        for m in PTX_TYPES
            .iter()
            .filter(|m| !m.contains('_') && !matches!(**m, "pred" | "tf32"))
        {
            assert!(type_like(m), "{m}");
        }
    }

    /// PTX ISA §5.4.5 "Alignment": the byte count is a power of two.
    #[test]
    fn alignment_is_a_power_of_two() {
        for (n, ok) in [
            (0i64, false),
            (1, true),
            (3, false),
            (16, true),
            (4096, true),
            (6, false),
        ] {
            let src = kernel(&format!(".shared .align {n} .b8 s[16];\nret;"));
            match parse(&src) {
                Ok(m) => {
                    assert!(ok, "{n}");
                    let Stmt::Var(v) = &m.kernels[0].body[0] else {
                        panic!()
                    };
                    assert_eq!(v.align, n as u32);
                }
                Err(e) => {
                    assert!(!ok, "{n}: {e}");
                    assert_eq!(e.line, 6);
                    assert!(e.message.contains(&format!("'.align {n}'")), "{e}");
                    assert!(e.message.contains("PTX ISA §5.4.5"), "{e}");
                }
            }
        }
        let e = parse_err(&format!(
            "{HEAD}.visible .entry k(.param .align 3 .b8 a[4])\n{{\nret;\n}}\n"
        ));
        assert!(e.message.contains("'.align 3'"), "{e}");
        let e = parse_err(&format!("{HEAD}.global .align 12 .b8 g[4];\n"));
        assert!(e.message.contains("'.align 12'"), "{e}");
    }

    /// Sizes against their state space's limit (sm_90: 227 KB of shared memory per block,
    /// 64 KB of constant memory, CUDA C++ Programming Guide Table 31; 512 KiB of local memory
    /// per thread), initializers against their variable (PTX ISA §5.4.4).
    #[test]
    fn declarations_are_bounded_before_allocation() {
        assert!(parse(&kernel(".shared .align 16 .b8 s[232448];\nret;")).is_ok());
        let e = parse_err(&kernel(".shared .align 16 .b8 s[232449];\nret;"));
        assert!(
            e.message
                .contains("shared variable 's' of 232449 bytes exceeds 232448 bytes"),
            "{e}"
        );
        let e = parse_err(&format!("{HEAD}.const .b32 c[16385];\n"));
        assert!(
            e.message
                .contains("65540 bytes exceeds 65536 bytes of constant memory"),
            "{e}"
        );
        let e = parse_err(&kernel(".local .b8 l[524289];\nret;"));
        assert!(
            e.message
                .contains("524289 bytes makes the frame exceed 524288"),
            "{e}"
        );
        let e = parse_err(&format!("{HEAD}.global .b8 g[1073741825];\n"));
        assert!(e.message.contains("GLOBAL_VAR_LIMIT"), "{e}");
        let e = parse_err(&format!("{HEAD}.global .b32 g[2] = {{1, 2, 3}};\n"));
        assert!(e.message.contains("has 3 elements, the variable 2"), "{e}");
        let e = parse_err(&format!("{HEAD}.global .b8 g[2] = {{1, 256}};\n"));
        assert!(
            e.message.contains("initializer 256 does not fit in .b8"),
            "{e}"
        );
        let e = parse_err(&kernel(".shared .b32 s[2] = {1, 2};\nret;"));
        assert!(e.message.contains("cannot be initialized"), "{e}");
        let e = parse_err(&format!("{HEAD}.global .v4 .b64 g;\n"));
        assert!(
            e.message.contains("256 bits: a vector is at most 128 bits"),
            "{e}"
        );
        // An unsized array takes its initializer's size; a vector initializer counts scalars.
        let m = parse(&format!(
            "{HEAD}.global .b16 g[] = {{1, 2, 3}};\n.global .v2 .b8 h[2] = {{{{1, 2}}, {{3, 4}}}};\n"
        ))
        .unwrap();
        assert_eq!(
            (m.vars[0].size, m.vars[0].init.clone()),
            (Some(6), vec![1, 0, 2, 0, 3, 0])
        );
        assert_eq!(
            (m.vars[1].size, m.vars[1].init.clone()),
            (Some(4), vec![1, 2, 3, 4])
        );
    }

    #[test]
    fn operands_per_instruction_are_bounded() {
        let regs = |n: usize| vec!["%r1"; n].join(", ");
        assert!(instruction(&format!("mov.b32 %r1, {{{}}}", regs(256)), 1).is_ok());
        let e = instruction(&format!("mov.b32 %r1, {{{}}}", regs(257)), 1).unwrap_err();
        assert!(e.message.contains("parse::MAX_VECTOR_ELEMENTS"), "{e}");
        assert_eq!(
            instruction(&format!("add.s32 {}", regs(32)), 1)
                .unwrap()
                .operands
                .len(),
            32
        );
        let e = instruction(&format!("fence{}", ".x".repeat(33)), 1).unwrap_err();
        assert!(e.message.starts_with("more than 32 qualifiers"), "{e}");
        assert!(instruction(&format!("fence{}", ".x".repeat(32)), 1).is_ok());
        let e = instruction(&format!("add.s32 {}", regs(33)), 1).unwrap_err();
        assert!(e.message.starts_with("more than 32 operands"), "{e}");
        // A missing operand is still that, not a limit.
        let e = instruction("add.s32 %r1, , %r0", 1).unwrap_err();
        assert!(e.message.starts_with("expected"), "{e}");
        let e = instruction("mov.b64 %rd1, {%r1, , %r2}", 1).unwrap_err();
        assert!(e.message.starts_with("expected"), "{e}");
    }

    /// Statements whose text each ':' or each parameter rescanned (quadratic time) are read in
    /// one pass; a ':' that ends no label is an error, not dropped.
    #[test]
    fn long_statements_are_read_in_linear_time() {
        let t = std::time::Instant::now();
        let e = parse_err(&kernel(&format!(
            "{} {}ret;",
            "a".repeat(200_000),
            ": ".repeat(200_000)
        )));
        assert_eq!(e.line, 6, "{e}");
        let params: Vec<String> = (0..40_000).map(|k| format!(".param .b8 p{k}")).collect();
        let e = parse_err(&format!(
            "{HEAD}.visible .entry k({})\n{{\nret;\n}}\n",
            params.join(", ")
        ));
        assert!(e.message.contains("more than 32764 parameters"), "{e}");
        assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
        let e = parse_err(&kernel("L1: : ret;"));
        assert!(e.message.starts_with("expected an opcode"), "{e}");
    }

    /// PTX ISA §4.5.1 "Integer Constants": octal has a leading 0, binary a 0b prefix.
    #[test]
    fn integer_literals_in_every_base() {
        let i = instruction("add.s32 %r1, 017, 0b101, 0x1F, 10, 0", 1).unwrap();
        let v: Vec<Operand> = i.operands[1..].to_vec();
        assert_eq!(
            v,
            [
                Operand::Int(15),
                Operand::Int(5),
                Operand::Int(31),
                Operand::Int(10),
                Operand::Int(0)
            ]
        );
    }

    #[test]
    fn names_are_defined_once() {
        let two = format!("{}.visible .entry k()\n{{\nret;\n}}\n", kernel("ret;"));
        let e = parse_err(&two);
        assert_eq!(e.line, 8, "{e}");
        assert!(
            e.message
                .starts_with("'k' is defined twice at module scope (first at line 4)"),
            "{e}"
        );
        let e = parse_err(&format!("{HEAD}.global .b32 g;\n.const .b32 g;\n"));
        assert_eq!(e.line, 5, "{e}");
        let e = parse_err(&format!(
            "{HEAD}.visible .entry k(.param .u32 a, .param .u64 a)\n{{\nret;\n}}\n"
        ));
        assert!(
            e.message
                .contains("parameter 'a' of kernel 'k' is declared twice"),
            "{e}"
        );
        let e = parse_err(&kernel(".shared .global .b8 s[4];"));
        assert!(
            e.message
                .contains("two state spaces '.shared' and '.global'"),
            "{e}"
        );
    }

    /// PTX ISA §11.4: the directives after the parameters, with their integers, into the
    /// kernel (the machine checks a launch against them).
    #[test]
    fn performance_directives_are_read_strictly() {
        let m = parse(&format!(
            "{HEAD}.visible .entry k()\n.maxntid 16, 2\n.minnctapersm 4\n.maxnreg 128\n{{\nret;\n}}\n"
        ))
        .unwrap();
        let k = &m.kernels[0];
        assert_eq!(
            (k.reqntid, k.maxntid, k.minnctapersm, k.maxnreg),
            (None, Some([16, 2, 1]), Some(4), Some(128))
        );
        let e = parse_err(&format!(
            "{HEAD}.visible .entry k() .reqntid 64 .maxntid 64\n{{\nret;\n}}\n"
        ));
        assert!(e.message.contains("both .reqntid and .maxntid"), "{e}");
        let e = parse_err(&format!(
            "{HEAD}.visible .entry k() .reqntid 0\n{{\nret;\n}}\n"
        ));
        assert!(
            e.message.contains("takes positive integers, found '0'"),
            "{e}"
        );
        let e = parse_err(&format!(
            "{HEAD}.visible .entry k() .reqntid 1, 2, 3, 4\n{{\nret;\n}}\n"
        ));
        assert!(e.message.contains("takes 1 to 3 integers, found 4"), "{e}");
        let e = parse_err(&format!(
            "{HEAD}.visible .entry k() .maxthreads 64\n{{\nret;\n}}\n"
        ));
        assert!(e.message.contains("unknown directive '.maxthreads'"), "{e}");
    }

    #[test]
    fn unknown_directives_are_refused() {
        let e = parse_err(&kernel(".foo 1;\nret;"));
        assert!(e.message.contains("unknown or unsupported '.foo'"), "{e}");
        let e = parse_err(&kernel(".attribute x;\nret;"));
        assert!(
            e.message.contains("unknown or unsupported '.attribute'"),
            "{e}"
        );
        let e = parse_err(&format!("{HEAD}.foo bar;\n"));
        assert!(e.message.contains("unknown or unsupported '.foo'"), "{e}");
        // What nvcc and Triton write at module scope still parses.
        assert!(parse(&format!("{HEAD}.extern .func (.param .b32 r) vprintf(.param .b64 f);\n.weak .global .align 4 .b8 w[4];\n")).is_ok());
    }

    /// The limits on what a module holds: a text of many cheap statements stops at the limit
    /// instead of filling memory.
    #[test]
    fn modules_hold_at_most_the_limits() {
        let labels: String = (0..=MAX_LABELS).map(|i| format!("L{i}:\n")).collect();
        let e = parse_err(&kernel(&labels));
        assert_eq!(e.line, 6 + MAX_LABELS, "{e}");
        assert!(e.message.contains("parse::MAX_LABELS"), "{e}");
        let blocks = "{\n}\n".repeat(MAX_BLOCKS as usize + 1);
        let e = parse_err(&kernel(&blocks));
        assert_eq!(e.line, 6 + 2 * MAX_BLOCKS, "{e}");
        assert!(e.message.contains("parse::MAX_BLOCKS"), "{e}");
        let vars: String = (0..=MAX_VARIABLES)
            .map(|i| format!(".global .b8 g{i};\n"))
            .collect();
        let e = parse_err(&format!("{HEAD}{vars}"));
        assert_eq!(e.line, 4 + MAX_VARIABLES, "{e}");
        assert!(e.message.contains("parse::MAX_VARIABLES"), "{e}");
        let insts = "ret;\n".repeat(MAX_INSTRUCTIONS as usize + 1);
        let e = parse_err(&kernel(&insts));
        assert_eq!(e.line, 6 + MAX_INSTRUCTIONS, "{e}");
        assert!(e.message.contains("more than 250000 instructions"), "{e}");
    }

    /// Where [`quick_instruction`] answers for `t`, winnow answers the same; returns whether
    /// it answered.
    /// [`collapse_ws`] is `split_whitespace` joined by single spaces, ASCII or not.
    #[test]
    fn collapse_ws_joins_words_as_split_whitespace_does() {
        for t in [
            "",
            " ",
            "add.s32 %r1, %r2, 3;",
            "ld.param.u64 \t%rd1, [p];",
            "  a\t\tb \n c\r\x0b\x0cd  ",
            "a\u{a0}b\u{3000} c",
            "é  ü\tx",
            "x\u{1c}y",
        ] {
            let want = t.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(collapse_ws(t), want, "{t:?}");
        }
    }

    fn quick_agrees(t: &str) -> bool {
        match quick_instruction(t, 7) {
            Some(q) => {
                assert_eq!(Ok(q), winnow_instruction(t, 7), "statement {t:?}");
                true
            }
            None => false,
        }
    }

    /// Every statement of every `.ptx` under tests/data.
    fn fixture_statements() -> Vec<String> {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            let mut es: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
            es.sort_by_key(std::fs::DirEntry::path);
            for e in es {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "ptx") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data"),
            &mut files,
        );
        assert!(files.len() > 50, "{} fixtures", files.len());
        let mut stmts = Vec::new();
        for f in files {
            let Ok(src) = std::fs::read_to_string(&f) else {
                continue;
            };
            // Invalid fixtures stop the splitter early; what came before is kept.
            let _ = split(&src, |p| {
                if let Piece::Stmt(r) = p {
                    stmts.push(r.text.to_string());
                }
                Ok(())
            });
        }
        stmts
    }

    #[test]
    fn quick_instruction_is_winnows_answer_on_every_fixture_statement() {
        let stmts = fixture_statements();
        let answered = stmts.iter().filter(|t| quick_agrees(t)).count();
        // The fast path must take the bulk of them, or it is no fast path.
        assert!(
            answered * 10 > stmts.len() * 8,
            "{answered} of {}",
            stmts.len()
        );
    }

    #[test]
    fn quick_instruction_is_winnows_answer_on_mutated_statements() {
        // One statement of each opcode and operand count, mutated at every character: each
        // character deleted, replaced by and preceded by each of these.
        const CHARS: &[char] = &[
            ' ', '\t', ',', '|', '{', '}', '[', ']', '+', '-', '.', '_', '!', '@', '0', '7', 'x',
            'f', 'd', 'F', '$', '%', ';', ':', '(', '\u{a0}', 'é',
        ];
        let mut seen = std::collections::HashSet::new();
        let mut shapes = Vec::new();
        for t in fixture_statements() {
            if let Some(i) = quick_instruction(&t, 1)
                && seen.insert((i.opcode.join("."), i.operands.len(), i.guard.is_some()))
            {
                shapes.push(t);
            }
        }
        assert!(shapes.len() > 20, "{} shapes", shapes.len());
        for t in &shapes {
            let at: Vec<usize> = t.char_indices().map(|(k, _)| k).chain([t.len()]).collect();
            for w in at.windows(2) {
                let (k, next) = (w[0], w[1]);
                quick_agrees(&format!("{}{}", &t[..k], &t[next..]));
                for c in CHARS {
                    quick_agrees(&format!("{}{c}{}", &t[..k], &t[next..]));
                    quick_agrees(&format!("{}{c}{}", &t[..k], &t[k..]));
                }
            }
            quick_agrees(&format!("{t} "));
            quick_agrees(&format!("{t},"));
        }
    }

    proptest::proptest! {
        #[test]
        fn quick_instruction_is_winnows_answer_on_operand_soup(
            guard in "(@!?[%_a-z][a-z0-9]{0,3} )?",
            op in "[a-z]{1,4}(\\.[a-z0-9:]{1,4}){0,3}",
            ops in proptest::collection::vec(
                "[ \t]{0,2}(%[a-z]{1,2}[0-9]{0,3}(\\.[xyzw])?|-?[0-9]{1,4}[uU]?|0[xXbB][0-9a-f]{1,5}|0[fFdD][0-9A-F]{6,17}|\\[ ?[%_a-z][a-z0-9]{0,3} ?(\\+ ?-?[0-9]{1,3})? ?\\]|\\{ ?%r[0-9]( ?, ?%r[0-9]){0,3} ?\\}|_|!%p1|%p1\\|%p2|[0-9]\\.[0-9])[ \t]{0,2}",
                0..5,
            ),
            sep in "[ ,]{1,2}",
        ) {
            quick_agrees(&format!("{guard}{op} {}", ops.join(&sep)));
        }
    }
}
