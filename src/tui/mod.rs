//! Terminal UI (ratatui + crossterm): step through the warp instructions of a lesson's tile,
//! or of one warp of your own PTX kernel simulated by [`crate::ptx`] (`tilelab tui --ptx`,
//! state in [`ptx`]).
//!
//! Elm style: [`app::App`] is the state, [`app::Msg`] the messages, [`app::update`] the only
//! place state changes, [`view`] draws `&App`; [`keys::BINDINGS`] is the one key table (it also
//! builds the help overlay and footer). The TUI asks [`crate::lessons::run`] (and through it
//! [`crate::sim`]) for the report of each step; it never works out conflicts itself.
//!
//! [`run`] owns the terminal: raw mode and the alternate screen are entered once and left on
//! every way out — normal exit, an error (a guard's `Drop`) and a panic (a panic hook that
//! restores the terminal before the default hook prints the message).
//!
//! [`crate::viz::lesson`] draws the same bank grid and fragment maps as SVG pictures.

pub mod app;
pub mod keys;
pub mod ptx;
pub mod view;

use std::io::{self, Stdout};
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use app::{App, update};

/// How long to wait for an event before drawing again. Nothing animates; the timeout only
/// bounds how late a resize that arrives without an event is noticed.
pub const POLL: Duration = Duration::from_millis(250);

/// Leaves raw mode and the alternate screen and shows the cursor. Safe to call twice.
pub fn restore_terminal() {
    let _ = disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        LeaveAlternateScreen,
        ratatui::crossterm::cursor::Show
    );
}

struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
}

/// Runs the TUI on the real terminal until the user quits; answers are saved to
/// `progress_file` (see [`crate::lessons::progress`]) as they are given.
///
/// # Errors
/// Terminal I/O errors (the terminal is restored first).
pub fn run(mut app: App, progress_file: Option<std::path::PathBuf>) -> io::Result<()> {
    install_panic_hook();
    // SIGTERM and SIGHUP (a closed terminal, `kill`) end the loop like `q`, so the guard restores
    // the terminal; Ctrl-C arrives as a key in raw mode.
    let stop = Arc::new(AtomicBool::new(false));
    #[cfg(unix)]
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    enable_raw_mode()?;
    let _guard = Guard;
    execute!(io::stdout(), EnterAlternateScreen)?;
    let mut terminal: Terminal<CrosstermBackend<Stdout>> =
        Terminal::new(CrosstermBackend::new(io::stdout()))?;
    terminal.clear()?;
    // Watchdog: crossterm's input reader can spin forever on a hung-up terminal, so a signal
    // (or a terminal that answers no size query) ends the process from a second thread.
    {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(POLL);
                if stop.load(Ordering::Relaxed) || ratatui::crossterm::terminal::size().is_err() {
                    restore_terminal();
                    std::process::exit(0);
                }
            }
        });
    }
    while !app.should_quit && !stop.load(Ordering::Relaxed) {
        terminal.draw(|f| f.render_widget(&app, f.area()))?;
        if !event::poll(POLL)? {
            continue;
        }
        match event::read()? {
            Event::Key(k) if k.kind == KeyEventKind::Press => {
                if let Some(msg) = keys::msg_for_app(k, &app) {
                    update(&mut app, msg);
                }
                for (lesson, step, v) in std::mem::take(&mut app.pending_answers) {
                    let Some(path) = &progress_file else { continue };
                    match crate::lessons::progress::record_answer(path, &lesson, step, &v) {
                        // The file's progress, with answers other processes saved meanwhile.
                        Ok(p) => app.progress = p,
                        // Shown in the narrative pane; the terminal stays in raw mode.
                        Err(e) => {
                            app.verdict = Some(Err(format!("answer checked but not saved: {e}")));
                        }
                    }
                }
            }
            Event::Resize(_, _) => terminal.autoresize()?,
            _ => {}
        }
    }
    terminal.show_cursor()?;
    Ok(())
}
