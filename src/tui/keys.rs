//! The key table: one list of bindings that both maps keys to [`Msg`]s and builds the help
//! overlay and the footer, so the help can never disagree with the keys (gitui's `key_list.rs`).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, Msg, Screen};
use super::ptx::HopperKind;

/// Where a binding applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Lesson screen only.
    Lesson,
    /// The lesson screen and the PTX screen (stepping, lanes, panes).
    Stepping,
    /// PTX screen only (`tilelab tui --ptx`).
    Ptx,
    /// Menu only.
    Menu,
    /// Both screens.
    Both,
}

/// One row of the key table.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    /// Keys that trigger it.
    pub keys: &'static [KeyCode],
    /// How the keys are written in the help and footer.
    pub label: &'static str,
    /// The message sent (for the digit row, `SetLayout(0)` stands for "the digit's layout").
    pub msg: Msg,
    /// What it does.
    pub help: &'static str,
    /// Where it applies.
    pub scope: Scope,
    /// Shown in the one-line footer.
    pub footer: bool,
}

const DIGITS: &[KeyCode] = &[
    KeyCode::Char('1'),
    KeyCode::Char('2'),
    KeyCode::Char('3'),
    KeyCode::Char('4'),
    KeyCode::Char('5'),
    KeyCode::Char('6'),
    KeyCode::Char('7'),
    KeyCode::Char('8'),
    KeyCode::Char('9'),
];

/// Every binding, in help order.
pub const BINDINGS: &[Binding] = &[
    Binding {
        keys: &[KeyCode::Right, KeyCode::Char('n'), KeyCode::Char(' ')],
        label: "→ n space",
        msg: Msg::NextStep,
        help: "next warp instruction",
        scope: Scope::Stepping,
        footer: true,
    },
    Binding {
        keys: &[KeyCode::Left, KeyCode::Char('p'), KeyCode::Backspace],
        label: "← p",
        msg: Msg::PrevStep,
        help: "previous warp instruction",
        scope: Scope::Stepping,
        footer: true,
    },
    Binding {
        keys: &[KeyCode::Home, KeyCode::Char('g')],
        label: "Home g",
        msg: Msg::FirstStep,
        help: "first step",
        scope: Scope::Stepping,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::End, KeyCode::Char('G')],
        label: "End G",
        msg: Msg::LastStep,
        help: "last step",
        scope: Scope::Stepping,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Char('l')],
        label: "l",
        msg: Msg::NextLayout,
        help: "next layout (row, pad, swizzle…), counts follow",
        scope: Scope::Lesson,
        footer: true,
    },
    Binding {
        keys: DIGITS,
        label: "1-9",
        msg: Msg::SetLayout(0),
        help: "pick layout 1-9",
        scope: Scope::Lesson,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Char('v')],
        label: "v",
        msg: Msg::NextVariant,
        help: "next variant (e.g. torch / triton)",
        scope: Scope::Lesson,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Down, KeyCode::Char('j')],
        label: "↓ j",
        msg: Msg::NextLane,
        help: "select next lane",
        scope: Scope::Stepping,
        footer: true,
    },
    Binding {
        keys: &[KeyCode::Up, KeyCode::Char('k')],
        label: "↑ k",
        msg: Msg::PrevLane,
        help: "select previous lane",
        scope: Scope::Stepping,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Char('o')],
        label: "o",
        msg: Msg::NextOperand,
        help: "fragment map: operand A → B → C",
        scope: Scope::Stepping,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Tab],
        label: "Tab",
        msg: Msg::FocusNext,
        help: "focus next pane",
        scope: Scope::Stepping,
        footer: true,
    },
    Binding {
        keys: &[KeyCode::Char('z'), KeyCode::Enter],
        label: "z Enter",
        msg: Msg::ToggleZoom,
        help: "zoom the focused pane (fragment map when zoomed)",
        scope: Scope::Stepping,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::PageDown, KeyCode::Char('J')],
        label: "PgDn J",
        msg: Msg::ScrollDown,
        help: "scroll the focused pane down",
        scope: Scope::Stepping,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::PageUp, KeyCode::Char('K')],
        label: "PgUp K",
        msg: Msg::ScrollUp,
        help: "scroll the focused pane up",
        scope: Scope::Stepping,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Char(']')],
        label: "]",
        msg: Msg::NextLesson,
        help: "next lesson",
        scope: Scope::Lesson,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Char('[')],
        label: "[",
        msg: Msg::PrevLesson,
        help: "previous lesson",
        scope: Scope::Lesson,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Char('m')],
        label: "m",
        msg: Msg::Menu,
        help: "back to the lesson list",
        scope: Scope::Lesson,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Up, KeyCode::Char('k')],
        label: "↑ k",
        msg: Msg::MenuUp,
        help: "previous lesson in the list",
        scope: Scope::Menu,
        footer: true,
    },
    Binding {
        keys: &[KeyCode::Down, KeyCode::Char('j')],
        label: "↓ j",
        msg: Msg::MenuDown,
        help: "next lesson in the list",
        scope: Scope::Menu,
        footer: true,
    },
    Binding {
        keys: &[KeyCode::Enter, KeyCode::Right, KeyCode::Char(' ')],
        label: "Enter →",
        msg: Msg::Open,
        help: "open the lesson",
        scope: Scope::Menu,
        footer: true,
    },
    // `r` shares the row of `a` (the help overlay fits 80x24): it sends Msg::Reveal.
    Binding {
        keys: &[KeyCode::Char('a'), KeyCode::Char('r')],
        label: "a r",
        msg: Msg::StartAnswer,
        help: "answer the question (Enter checks); r shows its numbers first",
        scope: Scope::Lesson,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Char('e')],
        label: "e",
        msg: Msg::ToggleGlossary,
        help: "explain this step's terms (glossary; j/k scroll, e Esc close)",
        scope: Scope::Lesson,
        footer: true,
    },
    Binding {
        keys: &[KeyCode::Char('c')],
        label: "c",
        msg: Msg::NextConflict,
        help: "next instruction with bank conflicts",
        scope: Scope::Ptx,
        footer: true,
    },
    Binding {
        keys: &[KeyCode::Char('C')],
        label: "C",
        msg: Msg::PrevConflict,
        help: "previous instruction with bank conflicts",
        scope: Scope::Ptx,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Char(':'), KeyCode::Char('L')],
        label: ": L",
        msg: Msg::GotoLine,
        help: "go to a PTX line (type the number, Enter)",
        scope: Scope::Ptx,
        footer: true,
    },
    Binding {
        keys: &[KeyCode::Char('f')],
        label: "f",
        msg: Msg::FilterConflicts,
        help: "filter: only instructions with conflicts (toggle)",
        scope: Scope::Ptx,
        footer: true,
    },
    Binding {
        keys: &[KeyCode::Char('F')],
        label: "F",
        msg: Msg::FilterLine,
        help: "filter: only this PTX line (toggle)",
        scope: Scope::Ptx,
        footer: false,
    },
    // The capital of `w`, `t`, `b` shares its row (the help overlay fits 80x24): it sends
    // Msg::PrevHopper.
    Binding {
        keys: &[KeyCode::Char('w'), KeyCode::Char('W')],
        label: "w W",
        msg: Msg::NextHopper(HopperKind::Wgmma),
        help: "next/previous wgmma: descriptors, core matrices, accumulators",
        scope: Scope::Ptx,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Char('t'), KeyCode::Char('T')],
        label: "t T",
        msg: Msg::NextHopper(HopperKind::Bulk),
        help: "next/previous TMA or bulk copy: where its box landed",
        scope: Scope::Ptx,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Char('b'), KeyCode::Char('B')],
        label: "b B",
        msg: Msg::NextHopper(HopperKind::Mbarrier),
        help: "next/previous mbarrier operation: phase, arrivals, tx bytes",
        scope: Scope::Ptx,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Char('R')],
        label: "R",
        msg: Msg::ToggleRoles,
        help: "warp roles: producer (TMA loads) or consumer (wgmma), per warp",
        scope: Scope::Ptx,
        footer: false,
    },
    Binding {
        keys: &[KeyCode::Char('?'), KeyCode::F(1)],
        label: "?",
        msg: Msg::ToggleHelp,
        help: "this help (Esc closes it)",
        scope: Scope::Both,
        footer: true,
    },
    Binding {
        keys: &[KeyCode::Char('q'), KeyCode::Esc],
        label: "q Esc",
        msg: Msg::Quit,
        help: "quit (Ctrl-C too)",
        scope: Scope::Both,
        footer: true,
    },
];

fn applies(scope: Scope, screen: Screen) -> bool {
    match scope {
        Scope::Both => true,
        Scope::Lesson => screen == Screen::Lesson,
        Scope::Stepping => matches!(screen, Screen::Lesson | Screen::Ptx),
        Scope::Ptx => screen == Screen::Ptx,
        Scope::Menu => screen == Screen::Menu,
    }
}

/// The message for a key on `screen`; while the help overlay is open, Esc and `?` close it.
pub fn msg_for(key: KeyEvent, screen: Screen, help_open: bool) -> Option<Msg> {
    msg_for_overlay(key, screen, help_open, false)
}

/// [`msg_for`] when the glossary overlay may be open: then Esc and `e` close it.
pub fn msg_for_overlay(
    key: KeyEvent,
    screen: Screen,
    help_open: bool,
    glossary_open: bool,
) -> Option<Msg> {
    msg_for_state(key, screen, help_open, glossary_open, false)
}

/// The message for a key in every state: while an answer is typed (`input_open`) characters
/// go into it, Backspace deletes, Enter checks, Esc cancels; an open glossary closes on Esc and
/// `e`; otherwise [`BINDINGS`].
pub fn msg_for_state(
    key: KeyEvent,
    screen: Screen,
    help_open: bool,
    glossary_open: bool,
    input_open: bool,
) -> Option<Msg> {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        return Some(Msg::Quit);
    }
    if input_open {
        return match key.code {
            KeyCode::Char(c) => Some(Msg::InputChar(c)),
            KeyCode::Backspace => Some(Msg::InputBack),
            KeyCode::Enter => Some(Msg::SubmitAnswer),
            KeyCode::Esc => Some(Msg::CancelInput),
            _ => None,
        };
    }
    if glossary_open && !help_open && matches!(key.code, KeyCode::Esc | KeyCode::Char('e')) {
        return Some(Msg::ToggleGlossary);
    }
    if help_open && matches!(key.code, KeyCode::Esc | KeyCode::Char('?') | KeyCode::F(1)) {
        return Some(Msg::ToggleHelp);
    }
    for b in BINDINGS {
        if !applies(b.scope, screen) || !b.keys.contains(&key.code) {
            continue;
        }
        if let (Msg::SetLayout(_), KeyCode::Char(c)) = (b.msg, key.code) {
            return Some(Msg::SetLayout(c as usize - '1' as usize));
        }
        if let (Msg::StartAnswer, KeyCode::Char('r')) = (b.msg, key.code) {
            return Some(Msg::Reveal);
        }
        if let (Msg::NextHopper(k), KeyCode::Char(c)) = (b.msg, key.code)
            && c.is_ascii_uppercase()
        {
            return Some(Msg::PrevHopper(k));
        }
        return Some(b.msg);
    }
    None
}

/// The message for a key given the whole app: while the go-to-line prompt is open, digits type
/// into it, Backspace deletes, Enter accepts and Esc closes it; while an answer is typed (`a`),
/// keys go into it ([`msg_for_state`]); otherwise [`msg_for`].
pub fn msg_for_app(key: KeyEvent, app: &App) -> Option<Msg> {
    if app.prompt_open() {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Some(Msg::Quit);
        }
        return match key.code {
            KeyCode::Char(c) => Some(Msg::PromptChar(c)),
            KeyCode::Backspace => Some(Msg::PromptBack),
            KeyCode::Enter => Some(Msg::PromptEnter),
            KeyCode::Esc => Some(Msg::PromptCancel),
            _ => None,
        };
    }
    msg_for_state(
        key,
        app.screen,
        app.help,
        app.glossary_open,
        app.input.is_some(),
    )
}

/// `(keys, what)` rows of the help overlay for `screen`.
pub fn help_rows(screen: Screen) -> Vec<(&'static str, &'static str)> {
    BINDINGS
        .iter()
        .filter(|b| applies(b.scope, screen))
        .map(|b| (b.label, b.help))
        .collect()
}

/// The one-line footer for `screen`: `label what` of the bindings marked for it.
pub fn footer(screen: Screen) -> Vec<(&'static str, &'static str)> {
    BINDINGS
        .iter()
        .filter(|b| b.footer && applies(b.scope, screen))
        .map(|b| {
            let short = match b.msg {
                Msg::NextStep => "step",
                Msg::PrevStep => "back",
                Msg::NextLayout => "layout",
                Msg::NextLane => "lane",
                Msg::FocusNext => "pane",
                Msg::ToggleZoom => "zoom",
                Msg::ToggleHelp => "help",
                Msg::ToggleGlossary => "explain",
                Msg::Quit => "quit",
                Msg::MenuUp | Msg::MenuDown => "choose",
                Msg::Open => "open",
                Msg::NextConflict => "conflict",
                Msg::GotoLine => "line",
                Msg::FilterConflicts => "filter",
                _ => b.help,
            };
            (b.label.split(' ').next().unwrap_or(b.label), short)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    #[test]
    fn keys_map_to_messages_per_screen() {
        assert_eq!(
            msg_for(key(KeyCode::Right), Screen::Lesson, false),
            Some(Msg::NextStep)
        );
        assert_eq!(
            msg_for(key(KeyCode::Right), Screen::Menu, false),
            Some(Msg::Open)
        );
        assert_eq!(
            msg_for(key(KeyCode::Char('3')), Screen::Lesson, false),
            Some(Msg::SetLayout(2))
        );
        assert_eq!(
            msg_for(key(KeyCode::Esc), Screen::Lesson, true),
            Some(Msg::ToggleHelp)
        );
        assert_eq!(
            msg_for(key(KeyCode::Esc), Screen::Lesson, false),
            Some(Msg::Quit)
        );
        assert_eq!(
            msg_for(
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
                Screen::Menu,
                false
            ),
            Some(Msg::Quit)
        );
        assert_eq!(
            msg_for(key(KeyCode::Char('x')), Screen::Lesson, false),
            None
        );
    }

    #[test]
    fn no_key_is_bound_twice_on_one_screen() {
        for screen in [Screen::Menu, Screen::Lesson, Screen::Ptx] {
            let mut seen = Vec::new();
            for b in BINDINGS.iter().filter(|b| applies(b.scope, screen)) {
                for k in b.keys {
                    assert!(!seen.contains(k), "{k:?} bound twice on {screen:?}");
                    seen.push(*k);
                }
            }
        }
    }
}
