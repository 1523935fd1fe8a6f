//! Output helpers shared by the subcommands: colour on/off, bank colours, JSON printing.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::style::{Color, Stylize};

static COLOR: AtomicBool = AtomicBool::new(false);

/// Decides once whether to colour output (`auto`: stdout is a terminal and `NO_COLOR` is unset).
pub fn set_color(mode: &str) {
    let on = match mode {
        "always" => true,
        "never" => false,
        _ => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    COLOR.store(on, Ordering::Relaxed);
}

/// True when colour is on.
pub fn color() -> bool {
    COLOR.load(Ordering::Relaxed)
}

/// Colour of wavefront `i` (cycled), so a grid shows which accesses are served together.
pub fn wavefront_color(i: usize) -> Color {
    const C: [Color; 8] = [
        Color::Green,
        Color::Yellow,
        Color::Red,
        Color::Magenta,
        Color::Cyan,
        Color::Blue,
        Color::DarkYellow,
        Color::DarkRed,
    ];
    C[i % C.len()]
}

/// `s` painted with `c` when colour is on.
pub fn paint(s: &str, c: Color) -> String {
    if color() {
        s.with(c).to_string()
    } else {
        s.to_string()
    }
}

/// `s` in bold when colour is on.
pub fn bold(s: &str) -> String {
    if color() {
        s.bold().to_string()
    } else {
        s.to_string()
    }
}

/// Pretty JSON to stdout.
pub fn print_json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
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

/// Writes a rendered report to stdout; a closed pipe (`| head`) is a quiet success.
///
/// # Errors
/// Any other write error (e.g. a full disk).
pub fn emit(s: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// Pretty JSON through [`emit`].
///
/// # Errors
/// Those of [`emit`].
pub fn emit_json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    emit(&(serde_json::to_string_pretty(v)? + "\n"))
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
