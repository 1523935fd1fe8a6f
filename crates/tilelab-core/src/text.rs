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
        if invisible(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
            return true;
        }
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

/// An invisible format character (Unicode's `Cf`: the byte-order mark U+FEFF, zero-width
/// spaces and joiners U+200B-U+200F, bidirectional controls U+202A-U+202E and U+2066-U+2069,
/// the soft hyphen, …) or a line or paragraph separator (U+2028, U+2029): shown as is, it is
/// nothing on the screen, or it reorders or breaks the line around it.
fn invisible(c: char) -> bool {
    matches!(c as u32,
        0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x890..=0x891 | 0x8e2 | 0x180e
        | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x2064 | 0x2066..=0x206f | 0xfeff
        | 0xfff9..=0xfffb | 0x110bd | 0x110cd | 0x13430..=0x1343f | 0x1bca0..=0x1bca3
        | 0x1d173..=0x1d17a | 0xe0001 | 0xe0020..=0xe007f)
}

/// `s` with every control character (C0 such as ESC, DEL, C1) and every invisible format
/// character (U+FEFF, U+200B, bidi controls, U+2028) written as an escape: ESC is `\x1b`, a
/// newline `\n`, U+009B `\u{9b}`, a byte-order mark `\u{feff}`. Text without control characters is borrowed as is.
///
/// ```
/// assert_eq!(tilelab_core::text::escape("a\u{1b}[2Jb"), "a\\x1b[2Jb");
/// assert_eq!(tilelab_core::text::escape("ldsm.x4"), "ldsm.x4");
/// ```
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() || invisible(c)) {
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
/// assert_eq!(tilelab_core::text::escape_os(OsStr::from_bytes(b"k\xff\x1b")), "k\\xff\\x1b");
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
/// assert_eq!(tilelab_core::text::clip("ldsm.x4", 48), "ldsm.x4");
/// assert_eq!(tilelab_core::text::clip("abcdef", 4), "abc…");
/// assert_eq!(tilelab_core::text::clip("a\u{1b}b", 48), "a\\x1bb");
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
///     tilelab_core::text::list(&names[..21]),
///     "k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12, k13, k14, k15, k16, k17, k18, k19, … and 1 more"
/// );
/// assert!(tilelab_core::text::list(&names).ends_with("k19, … and 19,980 more"));
/// assert_eq!(tilelab_core::text::list(["a", "b"]), "a, b");
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

/// How many of a too-long message's last characters [`one_line`] keeps: the end of a message
/// says what is allowed and where to look, so a cut falls in its middle (a long quoted value).
pub const LINE_TAIL: usize = 300;

/// A message as one bounded line: newlines, carriage returns and tabs become spaces, other
/// control characters are escaped ([`escape`]) and a message past [`LINE_MAX`] characters
/// loses its middle: its first characters, "… (N characters left out) …" and its last
/// [`LINE_TAIL`] characters, so what is allowed, at the end, always survives. The safety net
/// where every error is printed, whatever built it.
///
/// ```
/// let m = tilelab_core::text::one_line(&format!("bad\n\u{1b}[31m'{}'; allowed: 1..=4", "x".repeat(5000)));
/// assert!(m.starts_with("bad \\x1b[31m'xxx"));
/// assert!(m.contains("… (4,") && m.contains(" characters left out) …"));
/// assert!(m.ends_with("xxx'; allowed: 1..=4"));
/// ```
pub fn one_line(msg: &str) -> String {
    let push = |out: &mut String, c: char| match c {
        '\n' | '\r' | '\t' => out.push(' '),
        c => {
            if !escape_char(c, out) {
                out.push(c);
            }
        }
    };
    let mut out = String::new();
    let n = msg.chars().count();
    if n <= LINE_MAX {
        msg.chars().for_each(|c| push(&mut out, c));
        return out;
    }
    let head = LINE_MAX - LINE_TAIL;
    msg.chars().take(head).for_each(|c| push(&mut out, c));
    let cut = n - LINE_MAX;
    let noun = if cut == 1 { "character" } else { "characters" };
    let _ = write!(out, "… ({} {noun} left out) …", group(cut as u64));
    msg.chars()
        .skip(n - LINE_TAIL)
        .for_each(|c| push(&mut out, c));
    out
}

/// A serde (JSON) error's message in a format's own words: `shapes` names each Rust struct the
/// format reads (`("Progress", "an object {\"version\": 1, \"lessons\": {...}}")`); Rust's
/// integer and float type names become the numbers they hold, "invalid type: string \"0xffff\""
/// becomes "found the string \"0xffff\"", backquotes become quotes. No Rust type name is left.
///
/// ```
/// let m = tilelab_core::text::serde_words(
///     "invalid type: string \"0xffff\", expected u64 at line 1 column 9",
///     &[],
/// );
/// assert_eq!(m, "found the string \"0xffff\", expected a whole number 0..=18446744073709551615 at line 1 column 9");
/// ```
pub fn serde_words(msg: &str, shapes: &[(&str, &str)]) -> String {
    let mut m = msg.replace('`', "'");
    for (rust, words) in shapes {
        let s = format!("struct {rust}");
        if m.starts_with("invalid length") && m.contains(&s) {
            let at = m.find(" at line ").map_or("", |i| &m[i..]);
            m = format!("found an array, expected {words}{at}");
        }
        m = m.replace(&s, words);
    }
    m = m
        .replace("invalid type: ", "found ")
        .replace("invalid value: ", "found ")
        .replace("found string ", "found the string ")
        .replace("found integer ", "found the number ")
        .replace("found floating point ", "found the number ")
        .replace("found sequence", "found an array")
        .replace("found map", "found an object");
    for (rust, words) in [
        ("u8", "a whole number 0..=255"),
        ("u16", "a whole number 0..=65535"),
        ("u32", "a whole number 0..=4294967295"),
        ("u64", "a whole number 0..=18446744073709551615"),
        ("usize", "a whole number 0..=18446744073709551615"),
        ("i32", "a whole number"),
        ("i64", "a whole number"),
        ("f32", "a number"),
        ("f64", "a number"),
        ("a boolean", "true or false"),
    ] {
        for end in [" at line", ",", ""] {
            let from = format!("expected {rust}{end}");
            if m.contains(&from) && (!end.is_empty() || m.ends_with(&format!("expected {rust}"))) {
                m = m.replace(&from, &format!("expected {words}{end}"));
            }
        }
    }
    m
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
        // Invisible format characters and line separators (#26 round 2).
        assert_eq!(escape("\u{feff}.version"), "\\u{feff}.version");
        assert_eq!(
            escape("a\u{200b}\u{202e}b\u{2028}\u{2066}"),
            "a\\u{200b}\\u{202e}b\\u{2028}\\u{2066}"
        );
        assert_eq!(one_line("x\u{feff}"), "x\\u{feff}");
    }

    #[test]
    fn a_short_list_is_whole_and_a_long_one_says_how_many_are_left() {
        assert_eq!(list(Vec::<String>::new()), "");
        assert_eq!(list_max(["a", "b", "c"], 3), "a, b, c");
        assert_eq!(list_max(["a", "b", "c", "d"], 3), "a, b, c, … and 1 more");
        assert_eq!(list(["\u{1b}[2J"]), "\\x1b[2J");
    }

    #[test]
    fn one_line_keeps_exactly_line_max_characters_and_cuts_the_middle() {
        let m = one_line(&"é".repeat(LINE_MAX));
        assert_eq!(m, "é".repeat(LINE_MAX));
        let m = one_line(&format!("{}z", "é".repeat(LINE_MAX)));
        assert_eq!(
            m,
            format!(
                "{}… (1 character left out) …{}z",
                "é".repeat(LINE_MAX - LINE_TAIL),
                "é".repeat(LINE_TAIL - 1)
            )
        );
    }
}
