//! Showing user input in messages and tables: control characters and bytes that are not UTF-8
//! are written as escapes ([`escape`], [`escape_os`]), so a name or an argument can neither move
//! the terminal's cursor nor break a line; long lists are cut to a few items ([`list`]), so an
//! error about 20,000 kernel names stays one short line.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt::{Display, Write};

/// How many items a message lists before "… and N more" ([`list`]): a built-in list of choices
/// (15 lessons, 10 subcommands) fits whole; one built from the input (20,000 kernel names) does
/// not grow the line.
pub const LIST_MAX: usize = 20;

/// `c` written as an escape when it is a control character (C0, DEL or C1, Unicode's `Cc`):
/// `\t`, `\n`, `\r`, `\x1b`, `\x7f`, `\u{9b}` appended to `out` (true); any other character is
/// left to the caller (false).
fn escape_char(c: char, out: &mut String) -> bool {
    if !c.is_control() {
        return false;
    }
    match c {
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    true
}

/// `s` with every control character (C0 such as ESC, DEL, C1) written as an escape: ESC is
/// `\x1b`, a newline `\n`, U+009B `\u{9b}`. Text without control characters is borrowed as is.
///
/// ```
/// assert_eq!(tilelab::text::escape("a\u{1b}[2Jb"), "a\\x1b[2Jb");
/// assert_eq!(tilelab::text::escape("ldsm.x4"), "ldsm.x4");
/// ```
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !escape_char(c, &mut out) {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// An OS string (a command-line argument, a file name) as text: its UTF-8 runs through
/// [`escape`], every byte that is not UTF-8 as `\xNN`.
///
/// ```
/// use std::ffi::OsStr;
/// use std::os::unix::ffi::OsStrExt;
/// assert_eq!(tilelab::text::escape_os(OsStr::from_bytes(b"k\xff\x1b")), "k\\xff\\x1b");
/// ```
pub fn escape_os(s: &OsStr) -> String {
    let mut out = String::new();
    for chunk in s.as_encoded_bytes().utf8_chunks() {
        out.push_str(&escape(chunk.valid()));
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// The most characters of one value a message quotes ([`clip`]).
pub const VALUE_MAX: usize = 120;

/// `s` escaped ([`escape`]) and, past `max` characters (`max` ≥ 1), cut to `max - 1` of them and
/// `…`: one long value can neither overflow a table column nor push the rest of a message (what
/// is allowed) out of the line.
///
/// ```
/// assert_eq!(tilelab::text::clip("ldsm.x4", 48), "ldsm.x4");
/// assert_eq!(tilelab::text::clip("abcdef", 4), "abc…");
/// assert_eq!(tilelab::text::clip("a\u{1b}b", 48), "a\\x1bb");
/// ```
pub fn clip(s: &str, max: usize) -> Cow<'_, str> {
    let max = max.max(1);
    let s = escape(s);
    // Byte length bounds the character count.
    if s.len() <= max || s.chars().count() <= max {
        return s;
    }
    let mut t: String = s.chars().take(max - 1).collect();
    t.push('…');
    Cow::Owned(t)
}

/// A value as messages quote it: [`clip`] at [`VALUE_MAX`].
pub fn value(s: &str) -> Cow<'_, str> {
    clip(s, VALUE_MAX)
}

/// A path as text, as [`escape_os`] shows it: `Path::display` would print its control
/// characters raw and its other bytes as U+FFFD.
pub fn path(p: &std::path::Path) -> String {
    escape_os(p.as_os_str())
}

/// At most [`LIST_MAX`] items joined by `", "`, each through [`escape`]; a longer list ends in
/// "… and N more" (N with thousands separators), so a message about 20,000 names stays short.
///
/// ```
/// let names: Vec<String> = (0..20_000).map(|i| format!("k{i}")).collect();
/// assert_eq!(
///     tilelab::text::list(&names[..21]),
///     "k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12, k13, k14, k15, k16, k17, k18, k19, … and 1 more"
/// );
/// assert!(tilelab::text::list(&names).ends_with("k19, … and 19,980 more"));
/// assert_eq!(tilelab::text::list(["a", "b"]), "a, b");
/// ```
pub fn list<I>(items: I) -> String
where
    I: IntoIterator,
    I::Item: Display,
{
    list_max(items, LIST_MAX)
}

/// [`list`] with at most `max` items shown (`max` ≥ 1).
pub fn list_max<I>(items: I, max: usize) -> String
where
    I: IntoIterator,
    I::Item: Display,
{
    let max = max.max(1);
    let mut out = String::new();
    let mut rest = 0u64;
    for (i, item) in items.into_iter().enumerate() {
        if i >= max {
            rest += 1;
            continue;
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&escape(&item.to_string()));
    }
    if rest > 0 {
        let _ = write!(out, ", … and {} more", group(rest));
    }
    out
}

/// The most characters [`one_line`] keeps of a message.
pub const LINE_MAX: usize = 1000;

/// A message as one bounded line: newlines, carriage returns and tabs become spaces, other
/// control characters are escaped ([`escape`]) and text past [`LINE_MAX`] characters is cut,
/// ending in "… (N more characters)". The safety net where every error is printed, whatever
/// built it.
///
/// ```
/// let m = tilelab::text::one_line(&format!("bad\n\u{1b}[31m{}", "x".repeat(5000)));
/// assert!(m.starts_with("bad \\x1b[31mxxx"));
/// assert!(m.ends_with("… (4,009 more characters)"));
/// ```
pub fn one_line(msg: &str) -> String {
    let mut out = String::new();
    for c in msg.chars().take(LINE_MAX) {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c => {
                if !escape_char(c, &mut out) {
                    out.push(c);
                }
            }
        }
    }
    let rest = msg.chars().count().saturating_sub(LINE_MAX);
    if rest > 0 {
        let noun = if rest == 1 { "character" } else { "characters" };
        let _ = write!(out, "… ({} more {noun})", group(rest as u64));
    }
    out
}

/// Integer with thousands separators: 20480 -> "20,480".
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_c0_del_and_c1_and_keeps_other_text() {
        assert_eq!(escape("\u{0}\u{7}\u{1b}\u{7f}"), "\\x00\\x07\\x1b\\x7f");
        assert_eq!(escape("a\tb\nc\rd"), "a\\tb\\nc\\rd");
        assert_eq!(escape("\u{85}\u{9b}"), "\\u{85}\\u{9b}");
        assert_eq!(escape("äöü ≥ 中"), "äöü ≥ 中");
    }

    #[test]
    fn a_short_list_is_whole_and_a_long_one_says_how_many_are_left() {
        assert_eq!(list(Vec::<String>::new()), "");
        assert_eq!(list_max(["a", "b", "c"], 3), "a, b, c");
        assert_eq!(list_max(["a", "b", "c", "d"], 3), "a, b, c, … and 1 more");
        assert_eq!(list(["\u{1b}[2J"]), "\\x1b[2J");
    }

    #[test]
    fn one_line_keeps_exactly_line_max_characters() {
        let m = one_line(&"é".repeat(LINE_MAX));
        assert_eq!(m, "é".repeat(LINE_MAX));
        let m = one_line(&"é".repeat(LINE_MAX + 1));
        assert_eq!(m, format!("{}… (1 more character)", "é".repeat(LINE_MAX)));
    }
}
