//! Output helpers shared by the subcommands: colour on/off, bank colours, JSON printing, and
//! the one writer of standard output ([`Out`]).

use std::ffi::OsString;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::ColorChoice;
use crossterm::style::{Color, Stylize};
use tilelab::palette::{self, Ansi, Swatch};

static COLOR: AtomicBool = AtomicBool::new(false);

/// Decides once whether to colour output (the text reports, clap's help and the TUI), from
/// `--color` and the environment through [`color_wanted`] with stdout's terminal test.
/// crossterm, which reads `NO_COLOR` itself, is told the same so `--color always` wins over it.
/// Returns the decision.
pub fn set_color(mode: ColorChoice) -> bool {
    let on = color_wanted(mode, std::io::stdout().is_terminal(), &|k| {
        std::env::var_os(k)
    });
    COLOR.store(on, Ordering::Relaxed);
    crossterm::style::force_color_output(on);
    on
}

/// The colour decision, from the `--color` mode, whether stdout is a terminal and the
/// environment (`env` looks a variable up):
///
/// 1. `--color always` / `--color never` win over everything;
/// 2. `NO_COLOR` set and not empty: no colour (no-color.org);
/// 3. `CLICOLOR_FORCE` set and not `0`: colour, even when stdout is not a terminal
///    (bixense.com/clicolors);
/// 4. `CLICOLOR=0`: no colour;
/// 5. otherwise colour when stdout is a terminal.
///
/// The order of anstream, which clap uses: `NO_COLOR` wins over `CLICOLOR_FORCE`.
pub fn color_wanted(
    mode: ColorChoice,
    terminal: bool,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> bool {
    match mode {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                false
            } else if env("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
                true
            } else if env("CLICOLOR").is_some_and(|v| v == "0") {
                false
            } else {
                terminal
            }
        }
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

impl LaneRow {
    /// The rows of a request's lanes that give an address: `elems[lane]` the tile element the
    /// lane points at (`None`: no address), `offsets` the 32 byte offsets, `rep` the request's
    /// schedule (which wavefronts serve each lane).
    pub fn rows(
        elems: &[Option<(u32, u32)>; 32],
        offsets: &[u32; 32],
        rep: &tilelab::sim::bank::RequestReport,
    ) -> Vec<LaneRow> {
        (0..32)
            .filter_map(|lane| {
                let (row, col) = elems[lane]?;
                let off = offsets[lane];
                Some(LaneRow {
                    lane,
                    row,
                    col,
                    byte_offset: off,
                    bank: tilelab::sim::bank::bank_of(off),
                    wavefronts: rep.lane_wavefronts(lane),
                })
            })
            .collect()
    }
}

/// True when file descriptor 1 was closed when the process started (`tilelab … >&-`).
///
/// Rust's runtime opens `/dev/null` on a closed standard descriptor before `main`, so every
/// later write would succeed and the output be lost without a word. [`note_closed_stdout`] runs
/// earlier, from the ELF `.init_array` (as the `ctor` crate does), and records it here; [`Out`]
/// then fails its first write with `EBADF`, as a write to the closed descriptor would have.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

#[cfg(any(target_os = "linux", target_os = "android"))]
#[used]
#[unsafe(link_section = ".init_array")]
static NOTE_CLOSED_STDOUT: extern "C" fn() = note_closed_stdout;

/// Records in [`STDOUT_CLOSED`] whether descriptor 1 is closed. Runs before `main` (and before
/// the runtime reopens it on `/dev/null`).
#[cfg(any(target_os = "linux", target_os = "android"))]
extern "C" fn note_closed_stdout() {
    // SAFETY: `fcntl(F_GETFD)` only reads the descriptor's flags; it fails (with EBADF) exactly
    // when descriptor 1 is not open.
    let closed = unsafe { libc::fcntl(1, libc::F_GETFD) } == -1;
    STDOUT_CLOSED.store(closed, Ordering::Relaxed);
}

/// Where [`Out`] writes: a duplicate of descriptor 1 as a `File`, whose writes report every
/// error (`std::io::Stdout` turns `EBADF`, e.g. `1</dev/null`, into a silent success), or the
/// error that stands for a closed standard output.
enum Sink {
    File(std::fs::File),
    Failed(i32),
    #[cfg(not(unix))]
    Std(std::io::Stdout),
}

impl Sink {
    fn open() -> Sink {
        if STDOUT_CLOSED.load(Ordering::Relaxed) {
            return Sink::Failed(libc::EBADF);
        }
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            match std::io::stdout().as_fd().try_clone_to_owned() {
                Ok(fd) => Sink::File(std::fs::File::from(fd)),
                Err(e) => Sink::Failed(e.raw_os_error().unwrap_or(libc::EBADF)),
            }
        }
        #[cfg(not(unix))]
        Sink::Std(std::io::stdout())
    }
}

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::File(f) => f.write(buf),
            Sink::Failed(code) => Err(std::io::Error::from_raw_os_error(*code)),
            #[cfg(not(unix))]
            Sink::Std(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::File(f) => f.flush(),
            Sink::Failed(code) => Err(std::io::Error::from_raw_os_error(*code)),
            #[cfg(not(unix))]
            Sink::Std(s) => s.flush(),
        }
    }
}

/// Standard output of a report, written through `std::io::Write` so every write returns an
/// `io::Result` instead of panicking as `println!` does. Every byte tilelab writes on stdout
/// outside the TUI goes through it: reports, JSON, and clap's help and version.
///
/// * A closed pipe (`tilelab … | head`) is not an error: the reader has gone, so the writer
///   remembers it ([`Out::is_closed`]), drops this and every later write, and the command still
///   ends with its own exit status (a replay mismatch piped to `head` exits 1).
/// * Any other error is returned, its message saying it was standard output, and `main` prints
///   it as one line and exits 2: a full disk (`> /dev/full`, ENOSPC), an I/O error (EIO), a
///   descriptor not open for writing (`1</dev/null`, EBADF) and a closed one (`>&-`, EBADF,
///   see [`STDOUT_CLOSED`]).
///
/// Call [`Out::finish`] at the end: the writer is buffered, and an error of the last flush is
/// only seen there (dropping an `Out` flushes but cannot report).
pub struct Out {
    w: std::io::BufWriter<Sink>,
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
            w: std::io::BufWriter::new(Sink::open()),
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

/// One line on stderr (`wrote FILE`, a progress note): a failing stderr (`2>/dev/full`) is
/// ignored, as [`super::error_line`] ignores it, where `eprintln!` would panic.
pub fn note(args: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{args}");
}

/// Pretty JSON and a newline through [`emit`].
///
/// # Errors
/// Those of [`emit`].
pub fn emit_json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    emit(&(serde_json::to_string_pretty(v)? + "\n"))
}

/// At most `max` characters of `s` (`max` ≥ 1), its control characters escaped first
/// ([`tilelab::text::clip`]: ESC is `\x1b`): longer text ends in `…` after `max - 1` of its
/// characters, so one long name (a 65,536-byte record name) can neither overflow a table's
/// padding nor multiply its size, and a name can neither move the cursor nor break the line.
pub use tilelab::text::clip;

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

/// The wavefronts a lane takes part in, as the lane tables print them: `[0]`, `[0, 3]`.
pub fn wavefront_set(w: &[usize]) -> String {
    format!("[{}]", tilelab::text::list_max(w, usize::MAX))
}

/// A count and its noun: "1 warp", "4 warps".
pub fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Integer with thousands separators: 20480 -> "20,480".
pub use tilelab::text::group;

#[cfg(test)]
mod tests {
    use super::*;

    /// `--color` wins; then NO_COLOR > CLICOLOR_FORCE > CLICOLOR > the terminal test.
    #[test]
    fn color_follows_the_flag_then_no_color_then_clicolor() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let (a, n, x) = (ColorChoice::Always, ColorChoice::Never, ColorChoice::Auto);
        assert!(color_wanted(a, false, &env(&[("NO_COLOR", "1")])));
        assert!(!color_wanted(n, true, &env(&[("CLICOLOR_FORCE", "1")])));
        assert!(color_wanted(x, true, &env(&[])));
        assert!(!color_wanted(x, false, &env(&[])));
        // no-color.org: "when present and not an empty string".
        assert!(color_wanted(x, true, &env(&[("NO_COLOR", "")])));
        assert!(!color_wanted(x, true, &env(&[("NO_COLOR", "1")])));
        // CLICOLOR_FORCE forces (not "0"), but NO_COLOR wins over it.
        assert!(color_wanted(x, false, &env(&[("CLICOLOR_FORCE", "1")])));
        assert!(color_wanted(x, false, &env(&[("CLICOLOR_FORCE", "")])));
        assert!(!color_wanted(x, false, &env(&[("CLICOLOR_FORCE", "0")])));
        let both = env(&[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]);
        assert!(!color_wanted(x, true, &both));
        // CLICOLOR=0 turns a terminal's colour off; CLICOLOR_FORCE wins over it.
        assert!(!color_wanted(x, true, &env(&[("CLICOLOR", "0")])));
        assert!(color_wanted(x, true, &env(&[("CLICOLOR", "1")])));
        let force = env(&[("CLICOLOR", "0"), ("CLICOLOR_FORCE", "1")]);
        assert!(color_wanted(x, false, &force));
    }

    #[test]
    fn clip_bounds_length_and_hides_control_characters() {
        assert_eq!(clip("ldsm.x4", 48), "ldsm.x4");
        let long = "n".repeat(65_536);
        let c = clip(&long, 48);
        assert_eq!(c.chars().count(), 48);
        assert!(c.ends_with('…'));
        assert_eq!(clip("a\u{1b}[2Jb", 48), "a\\x1b[2Jb");
        assert_eq!(clip("\u{1b}\u{1b}", 5), "\\x1b…");
        assert_eq!(clip("äöü", 2), "ä…");
        assert_eq!(column_width(["ab", &long], 4, 48), 48);
        assert_eq!(column_width(["ab"], 4, 48), 4);
        assert_eq!(column_width([], 4, 48), 4);
    }
}
