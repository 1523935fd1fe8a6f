//! Output helpers shared by the subcommands: colour on/off, bank colours, JSON printing.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::style::{Color, Stylize};
use tilelab::palette::{self, Ansi, Swatch};

static COLOR: AtomicBool = AtomicBool::new(false);

/// Decides once whether to colour output: `always` and `never` win over everything; `auto`
/// colours when stdout is a terminal and `NO_COLOR` is unset or empty (no-color.org: "when
/// present and not an empty string"). crossterm, which reads `NO_COLOR` itself, is told the
/// same so `--color always` wins over it.
pub fn set_color(mode: &str) {
    let on = color_wanted(
        mode,
        std::io::stdout().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
    );
    COLOR.store(on, Ordering::Relaxed);
    crossterm::style::force_color_output(on);
}

/// The colour decision of [`set_color`] from its inputs: the `--color` mode, whether stdout is
/// a terminal, and the value of `NO_COLOR` if set.
pub fn color_wanted(mode: &str, terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    match mode {
        "always" => true,
        "never" => false,
        _ => terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

/// True when colour is on.
pub fn color() -> bool {
    COLOR.load(Ordering::Relaxed)
}

/// The terminal colour of a [`palette`] swatch.
pub fn ansi(a: Ansi) -> Color {
    match a {
        Ansi::Black => Color::Black,
        Ansi::Green => Color::DarkGreen,
        Ansi::Cyan => Color::DarkCyan,
        Ansi::Blue => Color::DarkBlue,
        Ansi::Magenta => Color::DarkMagenta,
        Ansi::Yellow => Color::DarkYellow,
        Ansi::LightRed => Color::Red,
        Ansi::Red => Color::DarkRed,
        Ansi::DarkGray => Color::DarkGrey,
    }
}

/// `s` painted with the palette's swatch `c` when colour is on: [`palette::unit`] for units and
/// registers, [`palette::replay`] for bank-conflict replays, [`palette::GOOD`] /
/// [`palette::BAD`] for verdicts.
pub fn paint(s: &str, c: Swatch) -> String {
    if color() {
        s.with(ansi(c.ansi)).to_string()
    } else {
        s.to_string()
    }
}

/// Re-exported so commands name colours by meaning.
pub use palette::{BAD, GOOD};

/// `s` in bold when colour is on.
pub fn bold(s: &str) -> String {
    if color() {
        s.bold().to_string()
    } else {
        s.to_string()
    }
}

/// One lane of a drawn request, as `--json` prints it (`sim bank-conflicts`, `lessons show`).
#[derive(serde::Serialize)]
pub struct LaneRow {
    /// Lane 0-31.
    pub lane: usize,
    /// Tile row of the element whose address the lane gives.
    pub row: u32,
    /// Tile column of that element.
    pub col: u32,
    /// Shared-memory byte offset.
    pub byte_offset: u32,
    /// Bank, `(byte_offset / 4) % 32`.
    pub bank: usize,
    /// Wavefronts the lane takes part in.
    pub wavefronts: Vec<usize>,
}

/// Standard output of a report, written through `std::io::Write` so every write returns an
/// `io::Result` instead of panicking as `println!` does.
///
/// * A closed pipe (`tilelab … | head`) is not an error: the reader has gone, so the writer
///   remembers it ([`Out::is_closed`]), drops this and every later write, and the command still
///   ends with its own exit status (a replay mismatch piped to `head` exits 1).
/// * Any other error (a full disk, `> /dev/full`) is returned, its message saying it was
///   standard output, and `main` prints it as one line and exits 2.
///
/// Call [`Out::finish`] at the end: the writer is buffered, and an error of the last flush is
/// only seen there (dropping an `Out` flushes but cannot report).
pub struct Out {
    w: std::io::BufWriter<std::io::Stdout>,
    closed: bool,
}

impl Default for Out {
    fn default() -> Self {
        Out::new()
    }
}

impl Out {
    /// A buffered writer to standard output.
    pub fn new() -> Out {
        Out {
            w: std::io::BufWriter::new(std::io::stdout()),
            closed: false,
        }
    }

    /// True once a write found the pipe closed: a loop producing output may stop early (its
    /// exit status must not depend on it).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Flushes what is buffered.
    ///
    /// # Errors
    /// A write error other than a closed pipe.
    pub fn finish(mut self) -> std::io::Result<()> {
        std::io::Write::flush(&mut self)
    }

    /// Maps a write result: a closed pipe marks the writer closed and succeeds, any other
    /// error names standard output.
    fn absorb<T>(&mut self, r: std::io::Result<T>, ok: T) -> std::io::Result<T> {
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(ok)
            }
            Err(e) => Err(std::io::Error::new(
                e.kind(),
                format!("cannot write to standard output: {e}"),
            )),
            Ok(v) => Ok(v),
        }
    }
}

impl std::io::Write for Out {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let r = self.w.write(buf);
        self.absorb(r, buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.w.flush();
        self.absorb(r, ())
    }
}

/// Writes a rendered report to standard output through [`Out`]: a closed pipe is a quiet
/// success, any other write error is returned.
///
/// # Errors
/// A write error other than a closed pipe (e.g. a full disk).
pub fn emit(s: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut o = Out::new();
    o.write_all(s.as_bytes())?;
    o.finish()?;
    Ok(())
}

/// One formatted line through [`emit`]: `out::line(format_args!("{n} passed"))?` where a
/// command would have used `println!`.
///
/// # Errors
/// Those of [`emit`].
pub fn line(args: std::fmt::Arguments) -> anyhow::Result<()> {
    emit(&format!("{args}\n"))
}

/// Pretty JSON and a newline through [`emit`].
///
/// # Errors
/// Those of [`emit`].
pub fn emit_json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    emit(&(serde_json::to_string_pretty(v)? + "\n"))
}

/// At most `max` characters of `s` (`max` ≥ 1): longer text ends in `…` after `max - 1` of its
/// characters, so one long name (a 65,536-byte record name) can neither overflow a table's
/// padding nor multiply its size. Control characters are shown as `?` so a name cannot move
/// the cursor or break the line.
pub fn clip(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let max = max.max(1);
    let clean = !s.chars().any(char::is_control);
    if clean && s.len() <= max {
        // Byte length bounds the character count.
        return std::borrow::Cow::Borrowed(s);
    }
    let n = s.chars().count();
    let keep = if n <= max { n } else { max - 1 };
    let mut t: String = s
        .chars()
        .take(keep)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if n > max {
        t.push('…');
    }
    std::borrow::Cow::Owned(t)
}

/// Width of a table column holding `names`: the longest clipped name, at least `min`, at most
/// `max` characters. Use with [`clip`] at the same `max`.
pub fn column_width<'a>(names: impl IntoIterator<Item = &'a str>, min: usize, max: usize) -> usize {
    names
        .into_iter()
        .map(|n| n.chars().count().min(max))
        .max()
        .unwrap_or(0)
        .clamp(min, max.max(min))
}

/// The widest a name column of a table may be, in characters.
pub const NAME_MAX: usize = 48;

/// A count and its noun: "1 warp", "4 warps".
pub fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
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
    use std::ffi::OsStr;

    /// no-color.org: "when present and not an empty string"; `--color` wins over it.
    #[test]
    fn color_follows_no_color_org_and_the_flag_wins() {
        let one = Some(OsStr::new("1"));
        let empty = Some(OsStr::new(""));
        assert!(color_wanted("always", false, one));
        assert!(!color_wanted("never", true, None));
        assert!(color_wanted("auto", true, None));
        assert!(color_wanted("auto", true, empty));
        assert!(!color_wanted("auto", true, one));
        assert!(!color_wanted("auto", false, None));
    }

    #[test]
    fn clip_bounds_length_and_hides_control_characters() {
        assert_eq!(clip("ldsm.x4", 48), "ldsm.x4");
        let long = "n".repeat(65_536);
        let c = clip(&long, 48);
        assert_eq!(c.chars().count(), 48);
        assert!(c.ends_with('…'));
        assert_eq!(clip("a\u{1b}[2Jb", 48), "a?[2Jb");
        assert_eq!(clip("äöü", 2), "ä…");
        assert_eq!(column_width(["ab", &long], 4, 48), 48);
        assert_eq!(column_width(["ab"], 4, 48), 4);
        assert_eq!(column_width([], 4, 48), 4);
    }
}
