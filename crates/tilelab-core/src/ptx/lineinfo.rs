//! The debug line table a PTX module carries: `.file` and `.loc` (PTX ISA §11.5.1 ".file",
//! §11.5.2 ".loc"), read so that every reported PTX line can name the source line it came from.
//!
//! Triton writes `.loc 1 27 19` before the instructions of `kernel.py:27:19` (the file at
//! `.file 1 "/path/kernel.py"`, listed after the kernel); nvcc does with `-lineinfo` or `-G`,
//! and both write the inlined form `.loc 2 170 12, function_name $L__info_string0, inlined_at 1
//! 31 33` for code of an inlined function (Triton's `tl.max` body in `standard.py`, a CUDA
//! `__device__` function). Each instruction belongs to the last `.loc` before it in its kernel.
//!
//! Pure text functions; errors are one-line messages naming what was expected (the caller adds
//! the line).

use std::sync::Arc;

use serde::Serialize;

/// The longest `.file` name, bytes: 4096 (Linux's `PATH_MAX`). Each reported line shares its
/// file's name ([`SourceRef::file`] is one `Arc` per `.file`), so memory does not grow with it.
pub const MAX_FILE_NAME: usize = 4096;

/// A position in a source file: the `.file` index, the 1-based line and column as `.loc`
/// writes them (a column of 0 means "the whole line", as Triton and nvcc write it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourcePos {
    /// `.file` index the position is in.
    pub file: u32,
    /// Line in that file (1-based; 0 when the compiler knows none).
    pub line: u32,
    /// Column (1-based; 0 when the compiler gives none).
    pub column: u32,
}

/// What one `.loc` says: its own position and, for inlined code, the call site it was inlined
/// at (`inlined_at`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceLoc {
    /// The position of the instructions that follow.
    pub pos: SourcePos,
    /// `inlined_at FILE LINE COLUMN`: where the function holding `pos` was inlined.
    pub inlined_at: Option<SourcePos>,
}

/// A reported line's source position with the file's name resolved from `.file` (the JSON
/// `source` of a line: `{"file": "/path/kernel.py", "line": 27, "column": 19}`, plus
/// `"inlined_at": {…}` for inlined code).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SourceRef {
    /// The file as `.file` names it (Triton: an absolute path; nvcc: the path it was given),
    /// shared by every line of the file.
    #[serde(serialize_with = "as_str")]
    pub file: Arc<str>,
    /// 1-based line (0: none known).
    pub line: u32,
    /// Column (0: none given).
    pub column: u32,
    /// The call site an inlined function's code was inlined at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inlined_at: Option<Box<SourceRef>>,
}

fn as_str<S: serde::Serializer>(f: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(f)
}

impl SourceRef {
    /// `kernel.py:27`: the file's last path component and the line, how the tables show it.
    pub fn short(&self) -> String {
        let base = self
            .file
            .rsplit(['/', '\\'])
            .next()
            .filter(|b| !b.is_empty())
            .unwrap_or(&self.file);
        format!("{}:{}", crate::text::escape(base), self.line)
    }
}

/// The `.file` and `.loc` forms, for error messages.
const FILE_FORM: &str = "expected .file INDEX \"NAME\" [, TIMESTAMP, SIZE] (PTX ISA §11.5.1 .file), e.g. .file 1 \"kernel.py\"";
const LOC_FORM: &str = "expected .loc FILE LINE COLUMN [, function_name LABEL[+N], inlined_at FILE LINE COLUMN] (PTX ISA §11.5.2 .loc), e.g. .loc 1 27 19";

/// A non-negative integer constant that fits u32, in any of PTX's spellings (PTX ISA §4.5.1
/// "Integer Constants": decimal, hexadecimal `0x1`, octal `01`, binary `0b1`, an optional `U`).
fn number(s: &str) -> Option<u32> {
    if s.starts_with('-') {
        return None;
    }
    u32::try_from(super::types::int_value(s)?).ok()
}

/// `t` with its `/* … */` comments (outside quoted strings) turned into a blank: PTX allows a
/// comment wherever whitespace may be (PTX ISA §4.2 "Comments"), and a line directive's text
/// runs to the end of its line, comments included.
fn without_block_comments(t: &str) -> std::borrow::Cow<'_, str> {
    if !t.contains("/*") {
        return t.into();
    }
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    let mut in_string = false;
    while let Some(c) = rest.chars().next() {
        if in_string {
            if c == '\\' && rest.len() > 1 {
                let n = 1 + rest[1..].chars().next().map_or(0, char::len_utf8);
                out.push_str(&rest[..n]);
                rest = &rest[n..];
                continue;
            }
            in_string = c != '"';
        } else if c == '"' {
            in_string = true;
        } else if let Some(r) = rest.strip_prefix("/*") {
            // The splitter has checked that the comment ends.
            rest = r.find("*/").map_or("", |e| &r[e + 2..]);
            out.push(' ');
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out.into()
}

/// Three numbers separated by blanks: `FILE LINE COLUMN`.
fn triple(s: &str) -> Option<SourcePos> {
    let mut it = s.split_whitespace();
    let (f, l, c) = (it.next()?, it.next()?, it.next()?);
    if it.next().is_some() {
        return None;
    }
    Some(SourcePos {
        file: number(f)?,
        line: number(l)?,
        column: number(c)?,
    })
}

/// Reads `.loc …` (the statement's text, without a trailing comment).
///
/// # Errors
/// Anything but three whole numbers, optionally followed by `, function_name LABEL[+N]` and
/// `, inlined_at FILE LINE COLUMN` (in that order, each at most once).
pub fn parse_loc(t: &str) -> Result<SourceLoc, String> {
    let t = &*without_block_comments(t);
    let rest = t.trim().strip_prefix(".loc").unwrap_or(t).trim();
    let mut parts = rest.split(',').map(str::trim);
    let pos = parts
        .next()
        .and_then(triple)
        .ok_or_else(|| format!("'{}': {LOC_FORM}", crate::text::escape(t.trim())))?;
    let mut loc = SourceLoc {
        pos,
        inlined_at: None,
    };
    let mut seen_function = false;
    for p in parts {
        let (word, arg) = p.split_once(char::is_whitespace).unwrap_or((p, ""));
        match word {
            "function_name" if !seen_function && loc.inlined_at.is_none() && !arg.is_empty() => {
                seen_function = true;
            }
            "inlined_at" if loc.inlined_at.is_none() => {
                loc.inlined_at =
                    Some(triple(arg).ok_or_else(|| {
                        format!("'{}': {LOC_FORM}", crate::text::escape(t.trim()))
                    })?);
            }
            _ => return Err(format!("'{}': {LOC_FORM}", crate::text::escape(t.trim()))),
        }
    }
    Ok(loc)
}

/// Reads `.file INDEX "NAME" [, TIMESTAMP, SIZE]`: the index and the name (`\"` and `\\`
/// unescaped).
///
/// # Errors
/// A missing or non-numeric index, a name that is not one quoted string, anything after it but
/// two numbers.
pub fn parse_file(t: &str) -> Result<(u32, String), String> {
    let t = &*without_block_comments(t);
    let bad = || format!("'{}': {FILE_FORM}", crate::text::escape(t.trim()));
    let rest = t.trim().strip_prefix(".file").unwrap_or(t).trim_start();
    let (idx, rest) = rest.split_once(char::is_whitespace).ok_or_else(bad)?;
    let idx = number(idx).ok_or_else(bad)?;
    let rest = rest.trim_start().strip_prefix('"').ok_or_else(bad)?;
    let mut name = String::new();
    let mut chars = rest.char_indices();
    let mut end = None;
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                end = Some(i + 1);
                break;
            }
            '\\' => match chars.next() {
                Some((_, e)) => name.push(e),
                None => return Err(bad()),
            },
            _ => name.push(c),
        }
    }
    let after = rest[end.ok_or_else(bad)?..].trim();
    if name.len() > MAX_FILE_NAME {
        return Err(format!(
            "'.file {idx}' names a file of {} bytes, more than {MAX_FILE_NAME}: tilelab's limit (lineinfo::MAX_FILE_NAME, Linux's PATH_MAX)",
            name.len()
        ));
    }
    if !after.is_empty() {
        let extra: Vec<&str> = after
            .strip_prefix(',')
            .ok_or_else(bad)?
            .split(',')
            .map(str::trim)
            .collect();
        if extra.len() != 2 || extra.iter().any(|e| number_u64(e).is_none()) {
            return Err(bad());
        }
    }
    Ok((idx, name))
}

/// A non-negative integer constant that fits u64 (`.file`'s timestamp and size; PTX ISA
/// §4.5.1 spellings as [`number`]).
fn number_u64(s: &str) -> Option<u64> {
    if s.starts_with('-') {
        return None;
    }
    u64::try_from(super::types::int_value(s)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(file: u32, line: u32, column: u32) -> SourcePos {
        SourcePos { file, line, column }
    }

    /// The forms Triton 3.6 and nvcc 13 write (PTX ISA §11.5.2's syntax).
    #[test]
    fn loc_forms() {
        assert_eq!(
            parse_loc(".loc\t1 27 19").unwrap(),
            SourceLoc {
                pos: pos(1, 27, 19),
                inlined_at: None
            }
        );
        let l =
            parse_loc(".loc 2 170 12, function_name $L__info_string0, inlined_at 1 31 33").unwrap();
        assert_eq!(l.pos, pos(2, 170, 12));
        assert_eq!(l.inlined_at, Some(pos(1, 31, 33)));
        let l =
            parse_loc(".loc 1 5 3, function_name $L__info_string1+4, inlined_at 1 9 1").unwrap();
        assert_eq!(l.inlined_at, Some(pos(1, 9, 1)));
        for bad in [
            ".loc 1 27",
            ".loc a 1 2",
            ".loc 1 2 3 4",
            ".loc 1 2 -3",
            ".loc 1 2 3, inlined_at 1 2",
            ".loc 1 2 3, discriminator 4",
            ".loc 1 2 3, inlined_at 1 2 3, inlined_at 1 2 3",
            ".loc 1 2 99999999999",
        ] {
            let e = parse_loc(bad).unwrap_err();
            assert!(e.contains("expected .loc FILE LINE COLUMN"), "{bad}: {e}");
        }
    }

    #[test]
    fn file_forms() {
        assert_eq!(
            parse_file(".file\t1 \"/tmp/kernel.py\"").unwrap(),
            (1, "/tmp/kernel.py".to_string())
        );
        assert_eq!(
            parse_file(".file 2 \"a \\\"b\\\".cu\", 1700000000, 1234").unwrap(),
            (2, "a \"b\".cu".to_string())
        );
        for bad in [
            ".file 1",
            ".file x \"a\"",
            ".file 1 a.py",
            ".file 1 \"a.py",
            ".file 1 \"a.py\" junk",
            ".file 1 \"a.py\", 5",
        ] {
            let e = parse_file(bad).unwrap_err();
            assert!(e.contains("expected .file INDEX"), "{bad}: {e}");
        }
    }

    /// D6: a `/* … */` comment where whitespace may be (PTX ISA §4.2), the integer spellings of
    /// §4.5.1 (hex, octal, binary, `U`), and the C escapes of a `.file` name.
    #[test]
    fn comments_integer_spellings_and_escapes() {
        let loc = |t: &str| parse_loc(t).map(|l| (l.pos, l.inlined_at));
        assert_eq!(loc(".loc 1 2 5 /* comment */"), Ok((pos(1, 2, 5), None)));
        assert_eq!(loc(".loc 1 /* c */ 2 5"), Ok((pos(1, 2, 5), None)));
        assert_eq!(loc(".loc 0x1 2 5"), Ok((pos(1, 2, 5), None)));
        assert_eq!(loc(".loc 1 010 0b101"), Ok((pos(1, 8, 5), None)));
        assert_eq!(loc(".loc 1U 0X1F 0"), Ok((pos(1, 31, 0), None)));
        assert_eq!(
            loc(".loc 1 3 3, function_name $L__info_string0, inlined_at 0x1 9 3 /* x */"),
            Ok((pos(1, 3, 3), Some(pos(1, 9, 3))))
        );
        for bad in [
            ".loc -1 2 5",
            ".loc 1 2 0x1g",
            ".loc 1 2 4294967296",
            ".loc 1 2 09",
        ] {
            assert!(loc(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_file(".file 1 \"x\\\\y\""),
            Ok((1, "x\\y".to_string()))
        );
        assert_eq!(
            parse_file(".file 1 \"a/*b*/.py\" /* c */, 0x10, 5"),
            Ok((1, "a/*b*/.py".to_string()))
        );
    }

    #[test]
    fn short_names() {
        let r = SourceRef {
            file: "/home/u/kernel.py".into(),
            line: 27,
            column: 19,
            inlined_at: None,
        };
        assert_eq!(r.short(), "kernel.py:27");
        let r = SourceRef {
            file: "gemm.cu".into(),
            line: 3,
            column: 0,
            inlined_at: None,
        };
        assert_eq!(r.short(), "gemm.cu:3");
    }
}
