//! The TUI, drawn into ratatui's `TestBackend` at 80x24 (the smallest size promised).
//!
//! * `first_steps_of_every_lesson`: insta snapshots of the first steps of each lesson, driven
//!   by messages as a user's keys would send them;
//! * `conflict_colours`: `Buffer` style checks (snapshots do not record colour): conflict-free
//!   wavefronts in cool foregrounds, bank-conflict replays on warm backgrounds;
//! * `layout_switch_changes_the_counts`, `help_lists_every_key`, `survives_resizes`,
//!   `menu_opens_a_lesson`, `zoomed_registers_show_the_fragment_map`,
//!   `zoomed_counters_show_the_kernel_claims`;
//! * `color_never_draws_without_colours`, `clipped_panes_show_a_more_marker_and_the_grid_a_legend`
//!   (issue #16);
//! * `a_questions_explanation_waits_for_the_answer`, `a_which_lane_question_hides_the_lanes_addresses`
//!   (issue #26);
//! * `lesson_markdown_lists_are_one_line_per_item` (issue #30).

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use tilelab::lessons;
use tilelab::tui::app::{App, Msg, Screen, update};
use tilelab::tui::keys;

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
fn first_steps_of_every_lesson() {
    for l in lessons::builtin().unwrap() {
        let mut app = open(&l.name);
        for step in 1..=2.min(app.runs.len()) {
            let t = draw(&app, 80, 24);
            insta::assert_snapshot!(format!("{}_step{step}", l.name), text(t.backend().buffer()));
            update(&mut app, Msg::NextStep);
        }
    }
}

/// Position of the first cell whose symbol is `ch` in row `y`, from column `x0`.
fn find(buf: &Buffer, y: u16, x0: u16, ch: &str) -> Option<u16> {
    (x0..buf.area.width).find(|&x| buf[(x, y)].symbol() == ch)
}

#[test]
fn conflict_colours() {
    // strided, step 3 (column read): 32 wavefronts in bank 0, rows 0..; first one is the
    // ideal (green foreground), the next ones are conflict replays on warm backgrounds.
    let mut app = open("strided");
    update(&mut app, Msg::NextStep);
    update(&mut app, Msg::NextStep);
    // The step asks a question: until it is answered (or `r`), the grid shows which words are
    // read, uncoloured, and not which pass reads them (issue #26).
    let t = draw(&app, 80, 24);
    let buf = t.backend().buffer();
    let (x, y) = (7, 3);
    assert_eq!(buf[(x, y)].symbol(), "■", "{}", text(buf));
    assert_eq!(buf[(x, y + 1)].symbol(), "■");
    assert_eq!(buf[(x, y + 1)].bg, Color::Reset);
    assert!(
        text(buf).contains("Banks · ? wf, ? conflicts"),
        "{}",
        text(buf)
    );
    update(&mut app, Msg::Reveal);
    let t = draw(&app, 80, 24);
    let buf = t.backend().buffer();
    // Grid rows start at y = 3 (header line 0, border 1, bank numbers 2); bank 0 is column 7.
    assert_eq!(buf[(x, y)].symbol(), "0", "{}", text(buf));
    assert_eq!(buf[(x, y)].fg, Color::Green);
    assert_eq!(buf[(x, y + 1)].symbol(), "1");
    assert_eq!(buf[(x, y + 1)].bg, Color::Yellow);
    assert_eq!(buf[(x, y + 2)].bg, Color::LightRed);
    assert_eq!(buf[(x, y + 3)].bg, Color::Red);
    // Bank 1 of row 0 is tile data not accessed: a dim dot.
    assert_eq!(buf[(x + 1, y)].symbol(), "·");
    assert_eq!(buf[(x + 1, y)].fg, Color::DarkGray);

    // Same step padded: one wavefront, every access green, no warm background anywhere.
    update(&mut app, Msg::NextLayout);
    let t = draw(&app, 80, 24);
    let buf = t.backend().buffer();
    let mut zeros = 0;
    for yy in 3..10 {
        for xx in 7..39 {
            let c = &buf[(xx, yy)];
            if c.symbol() == "0" {
                zeros += 1;
                assert_eq!(c.fg, Color::Green);
            }
            assert!(
                ![Color::Yellow, Color::LightRed, Color::Red].contains(&c.bg),
                "warm background at ({xx},{yy})"
            );
        }
    }
    assert!(zeros >= 5, "padded column read shows its accesses");

    // Counters: conflicts in red when nonzero.
    let mut app = open("strided");
    update(&mut app, Msg::LastStep);
    let t = draw(&app, 80, 24);
    let buf = t.backend().buffer();
    let y = 21;
    let x = find(buf, y, 0, "c").expect("counters line");
    let xs = (x..80)
        .find(|&xx| {
            buf[(xx, y)].symbol().chars().all(|c| c.is_ascii_digit())
                && buf[(xx, y)].symbol() != " "
                && buf[(xx, y)].fg == Color::Red
        })
        .expect("a red conflict count");
    assert!(xs > x);
}

#[test]
fn layout_switch_changes_the_counts() {
    let mut app = open("swizzle");
    let t = draw(&app, 80, 24);
    let s = text(t.backend().buffer());
    // Step 1 asks a question: its numbers wait for an answer or `r` (issue #26).
    assert!(s.contains("Banks · ? wf, ? conflicts"), "{s}");
    assert!(s.contains("wavefronts ? (ideal ?)"), "{s}");
    assert!(!s.contains("28 conflicts"), "{s}");
    // `r` (the key, through the key table) reveals them.
    let r = ratatui::crossterm::event::KeyEvent::new(
        ratatui::crossterm::event::KeyCode::Char('r'),
        ratatui::crossterm::event::KeyModifiers::NONE,
    );
    let m = keys::msg_for_state(r, app.screen, false, false, false).unwrap();
    assert_eq!(m, Msg::Reveal);
    update(&mut app, m);
    let t = draw(&app, 80, 24);
    assert!(text(t.backend().buffer()).contains("Banks · 32 wf, 28 conflicts"));
    update(&mut app, Msg::SetLayout(2));
    let t = draw(&app, 80, 24);
    let s = text(t.backend().buffer());
    assert!(s.contains("Banks · 4 wf, 0 conflicts"), "{s}");
    assert!(s.contains("[3:swizzle:3,3,3]"), "{s}");
    assert!(s.contains("wavefronts 4 (ideal 4)"), "{s}");
}

#[test]
fn help_lists_every_key() {
    let mut app = open("banks");
    update(&mut app, Msg::ToggleHelp);
    let t = draw(&app, 80, 24);
    let s = text(t.backend().buffer());
    for (label, what) in keys::help_rows(Screen::Lesson) {
        assert!(s.contains(label), "help lacks {label}\n{s}");
        assert!(s.contains(what), "help lacks {what}\n{s}");
    }
    insta::assert_snapshot!("help_overlay", s);
}

#[test]
fn survives_resizes() {
    let mut app = open("fa2-counts");
    update(&mut app, Msg::NextVariant);
    for (w, h) in [(80, 24), (200, 60), (40, 10), (81, 25), (120, 30), (80, 24)] {
        let t = draw(&app, w, h);
        let s = text(t.backend().buffer());
        if w < 60 {
            assert!(s.contains("terminal too small"), "{s}");
        } else {
            assert!(s.contains("fa2-counts"), "{w}x{h}: {s}");
        }
        update(&mut app, Msg::NextStep);
    }
}

#[test]
fn menu_opens_a_lesson_and_the_last_step_says_so() {
    let mut app = App::new(lessons::builtin().unwrap(), None);
    let t = draw(&app, 80, 24);
    insta::assert_snapshot!("menu", text(t.backend().buffer()));
    update(&mut app, Msg::MenuDown);
    update(&mut app, Msg::Open);
    assert_eq!(app.screen, Screen::Lesson);
    assert_eq!(app.current().name, "banks");
    update(&mut app, Msg::LastStep);
    let t = draw(&app, 80, 24);
    assert!(text(t.backend().buffer()).contains("✓ last step"));
    update(&mut app, Msg::NextLesson);
    assert_eq!(app.current().name, "strided");
    update(&mut app, Msg::Quit);
    assert!(app.should_quit);
}

#[test]
fn zoomed_registers_show_the_fragment_map() {
    let mut app = open("mma");
    update(&mut app, Msg::LastStep);
    update(&mut app, Msg::FocusNext);
    update(&mut app, Msg::FocusNext);
    update(&mut app, Msg::FocusNext);
    update(&mut app, Msg::ToggleZoom);
    update(&mut app, Msg::NextLane);
    // The last step asks which lane holds an element: the map is its answer, drawn once the
    // learner answers or presses `r` (issue #26).
    let t = draw(&app, 80, 24);
    let s = text(t.backend().buffer());
    assert!(
        s.contains("which lane holds what is this step's question"),
        "{s}"
    );
    assert!(!s.contains("A 16x16"), "{s}");
    update(&mut app, Msg::Reveal);
    let t = draw(&app, 80, 24);
    insta::assert_snapshot!("mma_fragment_a_lane1", text(t.backend().buffer()));
    update(&mut app, Msg::NextOperand);
    update(&mut app, Msg::NextOperand);
    let t = draw(&app, 80, 24);
    let s = text(t.backend().buffer());
    assert!(s.contains("C 16x8"), "{s}");
}

/// The counters pane lists every kernel-level claim of the lesson with the counts model's
/// numbers (zoomed, as the 4-line pane shows only the running counters).
#[test]
fn zoomed_counters_show_the_kernel_claims() {
    let mut app = open("fa2-counts");
    for _ in 0..4 {
        update(&mut app, Msg::FocusNext);
    }
    update(&mut app, Msg::ToggleZoom);
    let t = draw(&app, 80, 24);
    let s = text(t.backend().buffer());
    insta::assert_snapshot!("fa2-counts_counters_zoomed", s);
    assert!(s.contains("4 of 4 agree with the counts model"), "{s}");
    assert!(s.contains("LDSM.16.M88.4 112"), "{s}");
    assert!(!s.contains("pending"), "{s}");
}

/// Issue #16: `--color never` reaches the TUI (`App::color`): no cell keeps a colour, and a
/// conflict replay, which had a warm background, is drawn in reverse video instead.
#[test]
fn color_never_draws_without_colours() {
    let mut app = open("strided");
    update(&mut app, Msg::NextStep);
    update(&mut app, Msg::NextStep);
    update(&mut app, Msg::Reveal);
    app.color = false;
    let t = draw(&app, 80, 24);
    let buf = t.backend().buffer();
    for c in &buf.content {
        assert_eq!((c.fg, c.bg), (Color::Reset, Color::Reset), "{:?}", c);
    }
    // The replay in row 1 of bank 0 (see `conflict_colours`) stands out in reverse video.
    let (x, y) = (7, 4);
    assert_eq!(buf[(x, y)].symbol(), "1");
    assert!(
        buf[(x, y)]
            .modifier
            .contains(ratatui::style::Modifier::REVERSED)
    );
    assert!(
        !buf[(x, y - 1)]
            .modifier
            .contains(ratatui::style::Modifier::REVERSED)
    );
}

/// Issue #16: at 80x24 a clipped pane says so (`↓ more`), a pane that fits does not, and a
/// scrolled one shows what is above; the bank grid has a legend for its fill characters.
#[test]
fn clipped_panes_show_a_more_marker_and_the_grid_a_legend() {
    let app = open("banks");
    let s = text(draw(&app, 80, 24).backend().buffer());
    // The bottom border of the grid and the lanes pane: 33 lane lines in 7 rows are clipped.
    let border = s
        .lines()
        .find(|l| l.contains("·=tile ░=pad"))
        .expect("grid legend");
    assert!(border.ends_with("↓ more ┘"), "{s}");
    // Tall enough, the lanes fit and the marker goes away.
    let s = text(draw(&app, 100, 90).backend().buffer());
    let lanes_bottom = s
        .lines()
        .find(|l| l.contains("·=tile ░=pad"))
        .expect("grid bottom border");
    assert!(!lanes_bottom.contains("more"), "{s}");
    // Scrolling the narrative shows that lines are hidden above too.
    let mut app = open("banks");
    update(&mut app, Msg::FocusNext);
    update(&mut app, Msg::FocusNext);
    update(&mut app, Msg::ScrollDown);
    let s = text(draw(&app, 80, 24).backend().buffer());
    assert!(s.contains("↕ more"), "{s}");
}

/// `e` opens the glossary of the current step's terms (issue #18): the banks lesson explains
/// bank and wavefront with their sources; `e` again (or Esc) closes it.
#[test]
fn glossary_overlay_explains_the_steps_terms() {
    let mut app = open("banks");
    let key = |c| {
        ratatui::crossterm::event::KeyEvent::new(c, ratatui::crossterm::event::KeyModifiers::NONE)
    };
    use ratatui::crossterm::event::KeyCode;
    let m = keys::msg_for_overlay(key(KeyCode::Char('e')), app.screen, false, false).unwrap();
    assert_eq!(m, Msg::ToggleGlossary);
    update(&mut app, m);
    assert!(app.glossary_open);
    let names: Vec<&str> = app
        .step_glossary()
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert!(
        names.contains(&"bank") && names.contains(&"wavefront"),
        "{names:?}"
    );
    let s = text(draw(&app, 80, 24).backend().buffer());
    assert!(s.contains("Glossary"), "{s}");
    assert!(
        s.contains("warp: 32 threads that issue one instruction together"),
        "{s}"
    );
    // While open, Esc closes the glossary instead of quitting.
    let m = keys::msg_for_overlay(key(KeyCode::Esc), app.screen, false, true).unwrap();
    assert_eq!(m, Msg::ToggleGlossary);
    update(&mut app, Msg::NextLane);
    assert_eq!(app.glossary_scroll, 3);
    update(&mut app, m);
    assert!(!app.glossary_open && !app.should_quit);
}

/// `a` asks for an answer to the step's question; the simulator checks it (issue #18): a wrong
/// layout is explained, the right one is recorded in the progress the run loop saves.
#[test]
fn answering_a_question_in_the_tui() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut app = open("warps-and-banks");
    update(&mut app, Msg::NextStep);
    update(&mut app, Msg::NextStep);
    let s = text(draw(&app, 80, 24).backend().buffer());
    assert!(s.contains("Exercise: Which of the layouts"), "{s}");
    // The question names the layouts; they were appended a second time (trial 2026-12-01).
    let wide = text(draw(&app, 200, 40).backend().buffer());
    assert_eq!(wide.matches("(row, pad:1)").count(), 1, "{wide}");
    let type_keys = |app: &mut App, keys: &str| {
        for c in keys.chars() {
            let k = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
            let m = keys::msg_for_state(k, app.screen, false, false, app.input.is_some()).unwrap();
            update(app, m);
        }
    };
    type_keys(&mut app, "a");
    assert_eq!(app.input.as_deref(), Some(""));
    // While typing, 'q' is a character, not quit.
    type_keys(&mut app, "rowq");
    update(&mut app, Msg::InputBack);
    assert_eq!(app.input.as_deref(), Some("row"));
    update(&mut app, Msg::SubmitAnswer);
    let v = app.verdict.clone().unwrap().unwrap();
    assert!(
        !v.correct && v.explanation.contains("31 bank conflicts"),
        "{v:?}"
    );
    assert!(!app.answered_right());
    type_keys(&mut app, "apad:1");
    update(&mut app, Msg::SubmitAnswer);
    assert!(app.verdict.clone().unwrap().unwrap().correct);
    assert!(app.answered_right() && !app.should_quit);
    // Both answers wait for the run loop to save them, in order.
    let pending: Vec<(&str, usize, &str)> = app
        .pending_answers
        .iter()
        .map(|(l, s, v)| (l.as_str(), *s, v.answer.as_str()))
        .collect();
    assert_eq!(
        pending,
        [
            ("warps-and-banks", 2, "row"),
            ("warps-and-banks", 2, "pad:1")
        ]
    );
    let s = text(draw(&app, 80, 24).backend().buffer());
    assert!(s.contains("✓ Right"), "{s}");
    let r = app.progress.get("warps-and-banks", 2).unwrap();
    assert_eq!((r.correct, r.attempts), (true, 2));
    // Esc cancels typing; moving on clears the verdict.
    type_keys(&mut app, "a");
    update(&mut app, Msg::CancelInput);
    assert!(app.input.is_none());
    update(&mut app, Msg::NextStep);
    assert!(app.verdict.is_none());
}

/// Issue #26: the part of a step's explanation that gives its answer (`[steps.exercise]
/// explanation`) waits, like the step's numbers, until the question is answered or `r` is
/// pressed; then the narrative shows it under the note as "Answer: …". Every question step of
/// every built-in lesson (first variant), drawn large enough that the narrative is not clipped
/// above the explanation.
#[test]
fn a_questions_explanation_waits_for_the_answer() {
    let mut checked = 0;
    for l in lessons::builtin().unwrap() {
        let mut app = open(&l.name);
        for pos in 0..app.runs.len() {
            let si = app.order[pos];
            if let Some(ex) = l.steps[si]
                .exercise
                .as_ref()
                .filter(|e| !e.explanation.is_empty())
            {
                // "Answer: " and the explanation's first two words, Markdown marks dropped.
                let first: Vec<String> = ex
                    .explanation
                    .replace(['`', '*'], "")
                    .split_whitespace()
                    .take(2)
                    .map(String::from)
                    .collect();
                let label = format!("Answer: {}", first.join(" "));
                let s = text(draw(&app, 240, 120).backend().buffer());
                assert!(
                    s.contains("· r shows the step's numbers and the answer")
                        && !s.contains("Answer: "),
                    "{} step {}: {s}",
                    l.name,
                    pos + 1
                );
                update(&mut app, Msg::Reveal);
                let s = text(draw(&app, 240, 120).backend().buffer());
                assert!(
                    s.contains(&label),
                    "{} step {}: no '{label}' in {s}",
                    l.name,
                    pos + 1
                );
                checked += 1;
            }
            update(&mut app, Msg::NextStep);
        }
    }
    assert!(checked >= 25, "{checked}");
    // An answer, even a wrong one, shows it too (its verdict gives the model's numbers anyway).
    let mut app = open("banks");
    for _ in 0..3 {
        update(&mut app, Msg::NextStep);
    }
    update(&mut app, Msg::StartAnswer);
    for c in "5".chars() {
        update(&mut app, Msg::InputChar(c));
    }
    update(&mut app, Msg::SubmitAnswer);
    assert!(!app.verdict.clone().unwrap().unwrap().correct);
    let s = text(draw(&app, 240, 120).backend().buffer());
    assert!(s.contains("Answer: Lanes i and i+16"), "{s}");
}

/// Issue #26: warps-and-banks step 1 asks which lane reads T(0, 7); on an `ld.shared` step that
/// is the lane whose address it is, so the lanes pane (element, byte, bank) and the selected
/// lane's underlined word in the bank grid gave it away. They are `?` until answered or `r`.
#[test]
fn a_which_lane_question_hides_the_lanes_addresses() {
    let mut app = open("warps-and-banks");
    app.lane = 7;
    let s = text(draw(&app, 200, 60).backend().buffer());
    assert!(!s.contains("(  0,  7)") && !s.contains("  28  b7"), "{s}");
    assert!(s.contains(" 7 (  ?,  ?)      ?  b?  ?"), "{s}");
    let t = draw(&app, 200, 60);
    let buf = t.backend().buffer();
    // The words read are drawn ■ (their wavefront hidden); none is underlined as lane 7's.
    let words: Vec<_> = buf.content.iter().filter(|c| c.symbol() == "■").collect();
    assert_eq!(words.len(), 32);
    assert!(
        words
            .iter()
            .all(|c| !c.modifier.contains(ratatui::style::Modifier::UNDERLINED)),
        "no word underlined"
    );
    update(&mut app, Msg::Reveal);
    let t = draw(&app, 200, 60);
    let s = text(t.backend().buffer());
    assert!(s.contains(" 7 (  0,  7)     28  b7"), "{s}");
    // Revealed: lane 7's word, wavefront 0, is underlined again.
    assert_eq!(
        t.backend()
            .buffer()
            .content
            .iter()
            .filter(
                |c| c.symbol() == "0" && c.modifier.contains(ratatui::style::Modifier::UNDERLINED)
            )
            .count(),
        1
    );
    // Step 3 asks for a layout, not a lane: its lanes' addresses show (their wavefronts do not).
    update(&mut app, Msg::NextStep);
    update(&mut app, Msg::NextStep);
    app.lane = 1;
    let s = text(draw(&app, 200, 60).backend().buffer());
    assert!(s.contains(" 1 (  1,  0)    128  b0  ?"), "{s}");
    // An ldmatrix's address lanes are not the lanes that receive the element: shown.
    let mut app = open("ldmatrix");
    update(&mut app, Msg::NextStep);
    let s = text(draw(&app, 200, 60).backend().buffer());
    assert!(s.contains(" 1 (  1,  0)     32  b8  ?"), "{s}");
}

/// Issue #30: the narrative reads the lesson's Markdown as CommonMark (`pulldown-cmark`, as the
/// exported page does): fa2-counts' numbered list is three items, each starting a row of the
/// zoomed narrative pane with its number, instead of one paragraph.
#[test]
fn lesson_markdown_lists_are_one_line_per_item() {
    let mut app = open("fa2-counts");
    update(&mut app, Msg::FocusNext);
    update(&mut app, Msg::FocusNext);
    update(&mut app, Msg::ToggleZoom);
    let t = draw(&app, 100, 60);
    let buf = t.backend().buffer();
    let s = text(buf);
    // Rows of the pane, without its borders.
    let rows: Vec<&str> = s
        .lines()
        .map(|l| {
            l.trim_start_matches(['│', '┃', ' '])
                .trim_end_matches(['│', '┃', ' '])
        })
        .collect();
    let row_of = |start: &str| {
        rows.iter()
            .position(|r| r.starts_with(start))
            .unwrap_or_else(|| panic!("no row starts with {start:?}:\n{s}"))
    };
    let one = row_of("1. ldmatrix.x4 of Q (A), ldmatrix.x4 of K (B, no transpose");
    let two = row_of("2. torch: P = softmax(S) stays in registers.");
    let three = row_of("3. ldmatrix.x4.trans of V (B of P·V), two mmas → O.");
    assert!(one < two && two < three, "{s}");
    // Item 1 fits on its row; the next paragraph is not joined to item 3.
    assert!(rows[one].ends_with("two mmas → S."), "{s}");
    assert_eq!(rows[three + 1], "", "{s}");
    assert!(
        rows[three + 2].starts_with("Scaled to the whole loop body"),
        "{s}"
    );
    // `ldmatrix.x4` in an item keeps the code style.
    let y = s
        .lines()
        .position(|l| l.contains("1. ldmatrix.x4"))
        .unwrap() as u16;
    let x = find(buf, y, 0, "l").unwrap();
    assert_ne!(buf[(x, y)].fg, Color::Reset, "{s}");
}
