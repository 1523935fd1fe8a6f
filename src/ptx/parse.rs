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
//! Source: PTX ISA 8.x §4 (syntax), §5.4 (variables), §11 (directives).

use std::fmt;

use winnow::ascii::{digit1, hex_digit1, multispace0};
use winnow::combinator::{alt, delimited, opt, preceded, separated};
use winnow::error::{ContextError, StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::token::{one_of, take_while};

/// A parse error: the 1-based line and what was expected there.
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
    /// `.target` (e.g. `sm_90a`), if given.
    pub target: Option<String>,
    /// Module-scope variables (`.shared`, `.global`, `.const`), in declaration order.
    pub vars: Vec<VarDecl>,
    /// Every `.entry` in file order.
    pub kernels: Vec<Kernel>,
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
    /// `.reqntid` if present (x, y, z): the exact block the kernel must be launched with.
    pub reqntid: Option<[u32; 3]>,
    /// `.maxntid` if present (x, y, z): the block's threads must not exceed their product
    /// (PTX ISA, "Performance-Tuning Directives").
    pub maxntid: Option<[u32; 3]>,
    /// Body statements in order.
    pub body: Vec<Stmt>,
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
    /// Alignment in bytes.
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
    /// Alignment in bytes (the element size when not given).
    pub align: u32,
    /// Size in bytes; `None` for an unsized `.extern` array (dynamic shared memory).
    pub size: Option<u64>,
    /// Initial bytes (little-endian), if an initializer was given.
    pub init: Vec<u8>,
    /// Line of the declaration.
    pub line: u32,
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
    /// `.reg .b32 %r<145>;` or `.reg .pred p, q;`: register names declared, whether they are
    /// predicates, and the line.
    Reg(Vec<String>, bool, u32),
    /// A variable declared in the body (`.shared`, `.local`).
    Var(VarDecl),
    /// An instruction.
    Inst(Inst),
}

/// One instruction as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// 1-based line.
    pub line: u32,
    /// Guard predicate: register name and whether it is negated (`@!%p1`).
    pub guard: Option<(String, bool)>,
    /// Opcode with its modifiers, e.g. `ld.shared.v4.b32`, split at dots (`::` stays inside a part).
    pub opcode: Vec<String>,
    /// Operands in order.
    pub operands: Vec<Operand>,
    /// The statement's text, whitespace collapsed (for reports).
    pub text: String,
}

/// An operand as written.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register or special register (`%r1`, `%tid.x`) or a name (label, variable, parameter).
    Name(String),
    /// `!%p1` (negated predicate source).
    Not(String),
    /// `%p1|%p2` (setp's two results).
    Pair(String, String),
    /// An integer literal (two's complement bits).
    Int(i128),
    /// `0fXXXXXXXX` (f32 bits).
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float (f64 bits).
    F64(u64),
    /// `{a, b, …}`.
    Vector(Vec<Operand>),
    /// `[base + offset]`, `[base]`, `[offset]`.
    Address(Option<String>, i64),
    /// `_` (sink).
    Sink,
}

/// The operand in PTX syntax, as errors quote it: `%r1`, `!%p1`, `%p1|%p2`, `42`, `0f3F800000`,
/// `0d3FF0000000000000`, `{%r1, %r2}`, `[%rd1+16]`, `_`.
impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Name(n) => f.write_str(&crate::text::escape(n)),
            Operand::Not(n) => write!(f, "!{}", crate::text::escape(n)),
            Operand::Pair(a, b) => {
                write!(f, "{}|{}", crate::text::escape(a), crate::text::escape(b))
            }
            Operand::Int(v) => write!(f, "{v}"),
            Operand::F32(b) => write!(f, "0f{b:08X}"),
            Operand::F64(b) => write!(f, "0d{b:016X}"),
            Operand::Vector(v) => {
                f.write_str("{")?;
                for (i, o) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{o}")?;
                }
                f.write_str("}")
            }
            Operand::Address(base, off) => match (base, off) {
                (Some(b), 0) => write!(f, "[{}]", crate::text::escape(b)),
                (Some(b), o) if *o < 0 => {
                    write!(f, "[{}-{}]", crate::text::escape(b), o.unsigned_abs())
                }
                (Some(b), o) => write!(f, "[{}+{o}]", crate::text::escape(b)),
                (None, o) => write!(f, "[{o}]"),
            },
            Operand::Sink => f.write_str("_"),
        }
    }
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

/// Cuts the source into pieces. Errors: an unterminated comment or string, an unbalanced `}`.
fn split(src: &str) -> Result<Vec<Piece<'_>>, ParseError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0usize;
    let mut line = 1u32;
    let mut start: Option<(usize, u32)> = None; // statement start (byte, line)
    let mut inner = 0u32; // open braces inside the current statement (vector operands, initializers)
    let mut section = 0u32; // depth inside a `.section { … }` being skipped
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            if let Some((s, l)) = start
                && inner == 0
            {
                let t = src[s..i].trim();
                if LINE_DIRECTIVES.iter().any(|d| starts_with_word(t, d)) && !t.ends_with(';') {
                    out.push(Piece::Stmt(Raw { text: t, line: l }));
                    start = None;
                }
            }
            line += 1;
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            // Line comment: keep the statement so far, skip to the newline.
            let text_end = i;
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            if let Some((s, l)) = start
                && inner == 0
            {
                let t = src[s..text_end].trim();
                if LINE_DIRECTIVES.iter().any(|d| starts_with_word(t, d)) {
                    out.push(Piece::Stmt(Raw { text: t, line: l }));
                    start = None;
                }
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
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
                    line += 1;
                }
                if b[i] == b'*' && b[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                i += 1;
            }
            continue;
        }
        if c == b'"' {
            let l0 = line;
            if start.is_none() {
                start = Some((i, line));
            }
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\n' {
                    line += 1;
                }
                i += 1;
            }
            if i >= b.len() {
                return Err(ParseError {
                    line: l0,
                    message: "unterminated string".into(),
                });
            }
            i += 1;
            continue;
        }
        if section > 0 {
            if c == b'{' {
                section += 1;
            } else if c == b'}' {
                section -= 1;
                if section == 1 {
                    section = 0;
                }
            }
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let text = |s: usize, e: usize| src[s..e].trim();
        match c {
            b';' => {
                if let Some((s, l)) = start.take() {
                    inner = 0;
                    out.push(Piece::Stmt(Raw {
                        text: text(s, i),
                        line: l,
                    }));
                } else {
                    // An empty statement: allowed.
                }
                i += 1;
            }
            b'{' => {
                match start {
                    Some((s, l)) => {
                        let t = text(s, i);
                        if starts_with_word(t, ".section") {
                            section = 2;
                            start = None;
                        } else if t.starts_with('.') && !t.contains('=') && inner == 0 {
                            out.push(Piece::Open(Raw { text: t, line: l }));
                            start = None;
                        } else {
                            inner += 1;
                        }
                    }
                    None => out.push(Piece::Open(Raw { text: "", line })),
                }
                i += 1;
            }
            b'}' => {
                if inner > 0 {
                    inner -= 1;
                } else {
                    if let Some((s, l)) = start.take() {
                        return Err(ParseError {
                            line: l,
                            message: format!("expected ';' after '{}'", shorten(text(s, i))),
                        });
                    }
                    out.push(Piece::Close(line));
                }
                i += 1;
            }
            b':' if b.get(i + 1) != Some(&b':') && i > 0 && b[i - 1] != b':' && inner == 0 => {
                if let Some((s, l)) = start
                    && is_ident(text(s, i))
                {
                    out.push(Piece::Label(Raw {
                        text: text(s, i),
                        line: l,
                    }));
                    start = None;
                }
                i += 1;
            }
            _ => {
                if start.is_none() {
                    start = Some((i, line));
                }
                i += 1;
            }
        }
    }
    if section > 0 {
        return Err(ParseError {
            line,
            message: "unterminated .section block: expected '}'".into(),
        });
    }
    if let Some((s, l)) = start {
        let t = src[s..].trim();
        if LINE_DIRECTIVES.iter().any(|d| starts_with_word(t, d)) {
            out.push(Piece::Stmt(Raw { text: t, line: l }));
        } else {
            return Err(ParseError {
                line: l,
                message: format!("expected ';' after '{}'", shorten(t)),
            });
        }
    }
    Ok(out)
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

fn shorten(t: &str) -> String {
    let one: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 60 {
        format!("{}…", one.chars().take(60).collect::<String>())
    } else {
        one
    }
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
        line += rest[..rest.len() - trimmed.len()].matches('\n').count() as u32;
        rest = trimmed;
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            let Some(end) = r.find("*/") else { break };
            line += r[..end].matches('\n').count() as u32;
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

/// Parses a whole PTX module.
///
/// # Errors
/// The first [`ParseError`]: its line and what was expected.
pub fn parse(src: &str) -> Result<Module, ParseError> {
    let pieces = split(src)?;
    let mut m = Module::default();
    let mut cur: Option<Kernel> = None;
    let mut depth = 0u32; // brace depth inside the current kernel body
    let mut pending: Option<Kernel> = None; // `.entry` header waiting for its `{`
    for p in pieces {
        match p {
            Piece::Open(raw) => {
                if let Some(k) = cur.as_mut() {
                    if !raw.text.is_empty() {
                        return Err(err(raw.line, "'{' to open a scope", raw.text));
                    }
                    depth += 1;
                    k.body.push(Stmt::Open);
                } else if raw.text.is_empty() {
                    match pending.take() {
                        Some(k) => {
                            cur = Some(k);
                            depth = 1;
                        }
                        None => {
                            return Err(ParseError {
                                line: raw.line,
                                message: "expected a declaration or '.entry', found '{'".into(),
                            });
                        }
                    }
                } else {
                    let k = entry_header(raw.text, raw.line)?;
                    match k {
                        Some(k) => {
                            cur = Some(k);
                            depth = 1;
                        }
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
                let Some(k) = cur.as_mut() else {
                    return Err(ParseError {
                        line,
                        message: "unbalanced '}'".into(),
                    });
                };
                depth -= 1;
                if depth == 0 {
                    m.kernels.push(cur.take().unwrap_or_else(|| unreachable!()));
                } else {
                    k.body.push(Stmt::Close);
                }
            }
            Piece::Label(raw) => match cur.as_mut() {
                Some(k) => k.body.push(Stmt::Label(raw.text.to_string(), raw.line)),
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
                if let Some(k) = cur.as_mut() {
                    k.body.push(body_stmt(t, line)?);
                } else if t.starts_with('.') || t.starts_with("//") {
                    if let Some(tg) = t.strip_prefix(".target") {
                        m.target = Some(tg.trim().split(',').next().unwrap_or("").trim().into());
                    } else if LINE_DIRECTIVES.iter().any(|d| starts_with_word(t, d)) {
                    } else if t.contains(".entry") || t.contains(".func") {
                        // A prototype without a body (`.extern .func …;`) or an entry whose
                        // `{` follows on a later statement: keep the header.
                        if t.contains(".entry") {
                            pending = entry_header(t, line)?;
                        }
                    } else if let Some(v) = var_decl(t, line)? {
                        m.vars.push(v);
                    }
                } else {
                    return Err(err(line, "a directive at module scope", t));
                }
            }
        }
    }
    if let Some(k) = cur {
        return Err(ParseError {
            line: k.line,
            message: format!("kernel '{}' has no closing '}}'", k.name),
        });
    }
    Ok(m)
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

fn int_lit(i: &mut &str) -> ModalResult<i128> {
    let neg = opt('-').parse_next(i)?.is_some();
    let v: i128 = alt((
        preceded(alt(("0x", "0X")), hex_digit1)
            .try_map(|h: &str| u64::from_str_radix(h, 16).map(|v| v as i128)),
        digit1.try_map(|d: &str| d.parse::<u64>().map(|v| v as i128)),
    ))
    .parse_next(i)?;
    let _ = opt(one_of(['U', 'u'])).parse_next(i)?;
    Ok(if neg { -v } else { v })
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
            (
                reg_name,
                ws,
                opt(preceded(('+', ws), int_lit.try_map(i64::try_from))),
            )
                .map(|(n, _, o)| Operand::Address(Some(n.to_string()), o.unwrap_or(0))),
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

fn operand(i: &mut &str) -> ModalResult<Operand> {
    preceded(
        ws,
        alt((
            address,
            delimited(('{', ws), separated(1.., operand, (ws, ',')), (ws, '}'))
                .map(Operand::Vector),
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
        )),
    )
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

fn instruction(t: &str, line: u32) -> Result<Inst, ParseError> {
    let mut i = t;
    let guard = (
        ws,
        opt(preceded(
            '@',
            (opt('!'), reg_name).map(|(n, r): (Option<char>, &str)| (r.to_string(), n.is_some())),
        )),
        ws,
    )
        .map(|(_, g, _)| g)
        .parse_next(&mut i)
        .map_err(|e| werr(line, "a guard @%p", i, &unwrap_err(e)))?;
    let op = opcode
        .parse_next(&mut i)
        .map_err(|e| werr(line, "an instruction", i, &unwrap_err(e)))?;
    let opcode: Vec<String> = split_opcode(op);
    let mut operands = Vec::new();
    let _ = ws.parse_next(&mut i);
    if !i.is_empty() {
        let list: Result<Vec<Operand>, _> = separated(1.., operand, (ws, ',')).parse_next(&mut i);
        operands = list.map_err(|e| werr(line, "operands separated by ','", i, &unwrap_err(e)))?;
        let _ = ws.parse_next(&mut i);
        if !i.is_empty() {
            return Err(err(line, "',' or the end of the statement", i));
        }
    }
    Ok(Inst {
        line,
        guard,
        opcode,
        operands,
        text: t.split_whitespace().collect::<Vec<_>>().join(" "),
    })
}

fn unwrap_err(e: winnow::error::ErrMode<ContextError>) -> ContextError {
    match e {
        winnow::error::ErrMode::Backtrack(e) | winnow::error::ErrMode::Cut(e) => e,
        winnow::error::ErrMode::Incomplete(_) => ContextError::new(),
    }
}

/// `ld.shared::cta.v4.b32` → `["ld", "shared::cta", "v4", "b32"]`.
fn split_opcode(op: &str) -> Vec<String> {
    op.split('.').map(str::to_string).collect()
}

/// A body statement: `.reg`, a variable, `.pragma`/`.loc` (kept as nothing), or an instruction.
fn body_stmt(t: &str, line: u32) -> Result<Stmt, ParseError> {
    if let Some(rest) = t.strip_prefix(".reg") {
        let pred = rest.trim_start().starts_with(".pred");
        return reg_decl(rest, line).map(|n| Stmt::Reg(n, pred, line));
    }
    if t.starts_with('.') {
        if LINE_DIRECTIVES.iter().any(|d| starts_with_word(t, d)) {
            return Ok(Stmt::Reg(vec![], false, line));
        }
        return match var_decl(t, line)? {
            Some(v) => Ok(Stmt::Var(v)),
            None => Ok(Stmt::Reg(vec![], false, line)),
        };
    }
    instruction(t, line).map(Stmt::Inst)
}

/// `.reg .b32 %r<145>;` → `%r0` … `%r144`; `.reg .pred %p, %q;` → both names.
fn reg_decl(rest: &str, line: u32) -> Result<Vec<String>, ParseError> {
    let mut i = rest;
    let r: Result<Vec<(&str, Option<i128>)>, _> = preceded(
        (ws, opt(("v", one_of(['2', '4']), ws)), '.', ident, ws),
        separated(
            1..,
            (
                preceded(ws, reg_name),
                opt(delimited(('<', ws), int_lit, (ws, '>'))),
            ),
            (ws, ','),
        ),
    )
    .parse_next(&mut i);
    let r = r.map_err(|e| werr(line, ".reg .TYPE name or name<N>", i, &unwrap_err(e)))?;
    if !i.trim().is_empty() {
        return Err(err(line, "';' after the register list", i));
    }
    let mut out = Vec::new();
    for (name, n) in r {
        match n {
            Some(n) => {
                if !(0..=1_000_000).contains(&n) {
                    return Err(ParseError {
                        line,
                        message: format!(
                            "register count {n} of '{name}' is out of range 0..=1000000"
                        ),
                    });
                }
                for k in 0..n {
                    out.push(format!("{name}{k}"));
                }
            }
            None => out.push(name.to_string()),
        }
    }
    Ok(out)
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

/// A variable declaration at module or body scope, or `None` for directives without meaning here.
fn var_decl(t: &str, line: u32) -> Result<Option<VarDecl>, ParseError> {
    let words: Vec<&str> = t.split_whitespace().collect();
    let space = ["shared", "global", "const", "local"]
        .into_iter()
        .find(|s| words.iter().any(|w| *w == format!(".{s}")));
    let Some(space) = space else {
        // `.visible`, `.weak`, `.common` alone, `.maxnreg`, … carry nothing to simulate.
        return Ok(None);
    };
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
        ident,
        opt(delimited(('[', ws), opt(int_lit), (ws, ']'))),
        ws,
    )
        .parse_next(&mut i);
    let (mods, _, name, dims, _) =
        parsed.map_err(|e| werr(line, "a variable declaration", i, &unwrap_err(e)))?;
    if !i.is_empty() {
        return Err(err(line, "'=' or ';' after the declaration", i));
    }
    let mut align = None;
    let mut ty = None;
    let mut vec = 1u32;
    for (m, n) in &mods {
        match (*m, n) {
            ("align", Some(n)) => align = u32::try_from(*n).ok(),
            ("v2", _) => vec = 2,
            ("v4", _) => vec = 4,
            (t, _) if type_size(t).is_some() => ty = Some(t.to_string()),
            _ => {}
        }
    }
    let Some(ty) = ty else {
        return Err(err(
            line,
            "a type (.b8, .u32, .f32, …) in the declaration",
            t,
        ));
    };
    let el = type_size(&ty).unwrap_or(1) * vec;
    let size = match dims {
        None => Some(el as u64),
        Some(None) => None,
        Some(Some(n)) => {
            let n = u64::try_from(n).map_err(|_| err(line, "a non-negative array size", t))?;
            Some(
                n.checked_mul(el as u64)
                    .ok_or_else(|| err(line, "an array size that fits in 64 bits", t))?,
            )
        }
    };
    let mut bytes = Vec::new();
    if let Some(init) = init {
        let body = init.trim().trim_start_matches('{').trim_end_matches('}');
        for part in body.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let mut p = part;
            let v = int_lit
                .parse_next(&mut p)
                .map_err(|_| err(line, "an integer initializer", part))?;
            let le = (v as u64).to_le_bytes();
            bytes.extend_from_slice(&le[..el.min(8) as usize]);
        }
    }
    Ok(Some(VarDecl {
        space: space.to_string(),
        name: name.to_string(),
        ty,
        align: align.unwrap_or(el).max(1),
        size,
        init: bytes,
        line,
    }))
}

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
    let mut params = Vec::new();
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
            params.push(param(part, line)?);
        }
        after = &p[close + 1..];
    } else {
        after = t2;
    }
    let (mut reqntid, mut maxntid) = (None, None);
    let words: Vec<&str> = after.split_whitespace().collect();
    for (k, w) in words.iter().enumerate() {
        if *w == ".reqntid" || *w == ".maxntid" {
            let dims: Vec<u32> = words[k + 1..]
                .join(" ")
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .take_while(|s| !s.starts_with('.'))
                .filter_map(|s| s.parse().ok())
                .collect();
            if !dims.is_empty() {
                let d = Some([
                    dims[0],
                    dims.get(1).copied().unwrap_or(1),
                    dims.get(2).copied().unwrap_or(1),
                ]);
                if *w == ".reqntid" {
                    reqntid = d;
                } else {
                    maxntid = d;
                }
            }
        }
    }
    Ok(Some(Kernel {
        name,
        line,
        params,
        reqntid,
        maxntid,
        body: Vec::new(),
    }))
}

fn param(part: &str, line: u32) -> Result<Param, ParseError> {
    let words: Vec<&str> = part.split_whitespace().collect();
    if words.first() != Some(&".param") {
        return Err(err(line, "'.param' in the parameter list", part));
    }
    let mut ty = None;
    let mut align = None;
    let mut ptr = false;
    let mut k = 1;
    while k < words.len() {
        let w = words[k];
        if w == ".align" {
            align = words.get(k + 1).and_then(|s| s.parse::<u32>().ok());
            k += 2;
            continue;
        }
        if w == ".ptr" {
            ptr = true;
        } else if let Some(t) = w.strip_prefix('.')
            && type_size(t).is_some()
            && ty.is_none()
        {
            ty = Some(t.to_string());
        }
        k += 1;
    }
    let Some(ty) = ty else {
        return Err(err(line, "a parameter type (.u32, .u64, .f32, …)", part));
    };
    let last = words.last().copied().unwrap_or("");
    let (name, count) = match last.split_once('[') {
        Some((n, c)) => {
            let c = c
                .trim_end_matches(']')
                .parse::<u32>()
                .map_err(|_| err(line, "an array size", last))?;
            (n, c)
        }
        None => (last, 1),
    };
    if !is_ident(name) {
        return Err(err(line, "a parameter name", name));
    }
    let el = type_size(&ty).unwrap_or(1);
    Ok(Param {
        name: name.to_string(),
        size: el.saturating_mul(count),
        align: align.unwrap_or(el),
        ty,
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
}
