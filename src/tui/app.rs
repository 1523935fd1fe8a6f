//! The TUI's state ([`App`]), its messages ([`Msg`]) and the one function that changes state
//! ([`update`]), in the Elm style: keys become messages (see [`super::keys`]), `update` applies
//! them, and [`super::view`] draws `&App` without changing it.
//!
//! `App` never computes wavefronts or conflicts: for the current lesson, variant and layout it
//! keeps the [`StepRun`]s that [`crate::lessons::run::run_step`] gets from `sim`, and the
//! counters pane only adds up their reports.

use std::collections::{BTreeMap, BTreeSet};

use crate::lessons::Lesson;
use crate::lessons::exercise::{Exercise, Verdict, check_answer};
use crate::lessons::glossary::{Entry, Glossary};
use crate::lessons::progress::Progress;
use crate::lessons::run::{Check, StepRun, check_model, place_tiles, run_step};
use crate::sim::mma::Operand;
use crate::sim::stats::AccessStats;

use super::ptx::{HopperKind, PtxState};

/// Which screen is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    /// The list of lessons.
    Menu,
    /// One lesson, step by step.
    Lesson,
    /// `tilelab tui --ptx`: one warp of a simulated PTX kernel, step by step.
    Ptx,
}

/// The panes of the lesson screen, in focus order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    /// Shared memory as 32 bank columns.
    Banks,
    /// The 32 lanes: element, byte address, bank, wavefront.
    Lanes,
    /// The lesson's Markdown and the step's note.
    Narrative,
    /// Registers and fragments of the selected lane.
    Registers,
    /// Running counters.
    Counters,
}

impl Pane {
    /// All panes in focus order.
    pub const ALL: [Pane; 5] = [
        Pane::Banks,
        Pane::Lanes,
        Pane::Narrative,
        Pane::Registers,
        Pane::Counters,
    ];

    fn index(self) -> usize {
        Pane::ALL.iter().position(|&p| p == self).unwrap_or(0)
    }
}

/// Everything a key can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    /// Next warp instruction.
    NextStep,
    /// Previous warp instruction.
    PrevStep,
    /// First step.
    FirstStep,
    /// Last step.
    LastStep,
    /// Next layout of the lesson (row → pad → swizzle → …).
    NextLayout,
    /// Layout number n (0-based).
    SetLayout(usize),
    /// Next variant (torch ↔ triton).
    NextVariant,
    /// Select the next lane.
    NextLane,
    /// Select the previous lane.
    PrevLane,
    /// Fragment map: next operand (A → B → C).
    NextOperand,
    /// Focus the next pane.
    FocusNext,
    /// Show the focused pane alone (toggle).
    ToggleZoom,
    /// Scroll the focused pane down.
    ScrollDown,
    /// Scroll the focused pane up.
    ScrollUp,
    /// Help overlay on/off.
    ToggleHelp,
    /// Glossary overlay (the current step's terms) on/off.
    ToggleGlossary,
    /// Start typing an answer to the current step's question.
    StartAnswer,
    /// Show the numbers of the current step, and the explanation of its answer, although its
    /// question is not answered yet.
    Reveal,
    /// A character typed into the answer.
    InputChar(char),
    /// Delete the last character of the answer.
    InputBack,
    /// Check the answer with the simulator.
    SubmitAnswer,
    /// Stop typing without answering.
    CancelInput,
    /// Back to the lesson list.
    Menu,
    /// Menu: previous entry.
    MenuUp,
    /// Menu: next entry.
    MenuDown,
    /// Menu: open the selected lesson.
    Open,
    /// Open the next lesson.
    NextLesson,
    /// Open the previous lesson.
    PrevLesson,
    /// PTX: next instruction with bank conflicts.
    NextConflict,
    /// PTX: previous instruction with bank conflicts.
    PrevConflict,
    /// PTX: open the go-to-line prompt.
    GotoLine,
    /// PTX: show only instructions with bank conflicts (toggle).
    FilterConflicts,
    /// PTX: show only the current instruction's line (toggle).
    FilterLine,
    /// PTX: next step of this Hopper event kind (`wgmma`, bulk copy, mbarrier).
    NextHopper(HopperKind),
    /// PTX: previous step of this Hopper event kind.
    PrevHopper(HopperKind),
    /// PTX: open or close the warp-roles view.
    ToggleRoles,
    /// Prompt: a typed character.
    PromptChar(char),
    /// Prompt: delete the last character.
    PromptBack,
    /// Prompt: accept.
    PromptEnter,
    /// Prompt: close without acting.
    PromptCancel,
    /// Leave the TUI.
    Quit,
}

/// The whole state of the TUI.
#[derive(Clone, Debug)]
pub struct App {
    /// All lessons, in curriculum order.
    pub lessons: Vec<Lesson>,
    /// Current screen.
    pub screen: Screen,
    /// Selected entry of the menu.
    pub menu: usize,
    /// Open lesson (index into `lessons`).
    pub lesson: usize,
    /// Variant index.
    pub variant: usize,
    /// Layout index.
    pub layout: usize,
    /// Position in the variant's steps (0-based).
    pub pos: usize,
    /// Selected lane.
    pub lane: u32,
    /// Operand shown by the fragment map of mma steps.
    pub operand: Operand,
    /// Focused pane.
    pub focus: Pane,
    /// Whether the focused pane fills the body.
    pub zoom: bool,
    /// Whether the help overlay is open.
    pub help: bool,
    /// Whether the glossary overlay (entries of the current step's terms) is open.
    pub glossary_open: bool,
    /// Lines the glossary overlay is scrolled by.
    pub glossary_scroll: u16,
    /// The glossary ([`crate::lessons::glossary::builtin`]; empty if it failed to load, which
    /// `tests/glossary.rs` rules out for the built-in file).
    pub glossary: Glossary,
    /// Scroll offset (lines) of each pane, by [`Pane::ALL`] index.
    pub scroll: [u16; 5],
    /// Set by [`Msg::Quit`].
    pub should_quit: bool,
    /// Draw in colour; `false` (`--color never`, or `NO_COLOR` / `CLICOLOR=0`: the CLI's one
    /// colour decision) draws every cell in the terminal's default colours, with reverse video
    /// where a colour marked a background.
    pub color: bool,
    /// Indices into `Lesson::steps` of the current variant's steps.
    pub order: Vec<usize>,
    /// `runs[i]`: step `order[i]` under the current layout, from `sim`.
    pub runs: Vec<StepRun>,
    /// 4-byte words (byte offset / 4) that hold tile data under the current layout (the rest of
    /// each tile's footprint is padding or swizzle slack).
    pub tile_words: BTreeSet<u32>,
    /// The open lesson's kernel-level claims (`[[model]]`), each checked against the counts
    /// model when the lesson opens.
    pub model_checks: Vec<Check>,
    /// `tilelab tui --ptx`: the simulated kernel and the followed warp's steps.
    pub ptx: Option<Box<PtxState>>,
    /// The answer being typed (`a` opened it), if any.
    pub input: Option<String>,
    /// The simulator's verdict on the last answer to the current step's question, or a
    /// one-line reason the answer could not be checked (`Err`).
    pub verdict: Option<Result<Verdict, String>>,
    /// The learner's progress: loaded by `tilelab tui`, updated here in memory; the run loop
    /// saves each of [`Self::pending_answers`] and puts the file's merged progress back here
    /// (this module does no I/O).
    pub progress: Progress,
    /// Answers given (lesson name, step index, verdict) that the run loop has not yet saved
    /// ([`crate::lessons::progress::record_answer`]: one locked read-modify-write each, so a
    /// `lessons answer` run meanwhile is not overwritten).
    pub pending_answers: Vec<(String, usize, Verdict)>,
    /// Steps (lesson name, step index) whose numbers the learner asked to see with `r` before
    /// answering their question.
    pub revealed: std::collections::BTreeSet<(String, usize)>,
}

impl App {
    /// A new app showing the menu, or lesson `start` at its first step.
    ///
    /// # Panics
    /// If `lessons` is empty.
    pub fn new(lessons: Vec<Lesson>, start: Option<usize>) -> App {
        assert!(!lessons.is_empty(), "no lessons to show");
        let mut app = App {
            lessons,
            screen: Screen::Menu,
            menu: 0,
            lesson: 0,
            variant: 0,
            layout: 0,
            pos: 0,
            lane: 0,
            operand: Operand::A,
            focus: Pane::Banks,
            zoom: false,
            help: false,
            glossary_open: false,
            glossary_scroll: 0,
            glossary: crate::lessons::glossary::builtin().unwrap_or(Glossary {
                entries: Vec::new(),
            }),
            scroll: [0; 5],
            should_quit: false,
            color: true,
            order: Vec::new(),
            runs: Vec::new(),
            tile_words: BTreeSet::new(),
            model_checks: Vec::new(),
            ptx: None,
            input: None,
            verdict: None,
            progress: Progress::default(),
            pending_answers: Vec::new(),
            revealed: Default::default(),
        };
        if let Some(i) = start {
            app.open(i);
        }
        app
    }

    /// An app showing a PTX kernel's warp (`tilelab tui --ptx`); no lessons.
    pub fn new_ptx(state: PtxState) -> App {
        App {
            lessons: Vec::new(),
            screen: Screen::Ptx,
            menu: 0,
            lesson: 0,
            variant: 0,
            layout: 0,
            pos: 0,
            lane: 0,
            operand: Operand::A,
            focus: Pane::Banks,
            zoom: false,
            help: false,
            scroll: [0; 5],
            should_quit: false,
            color: true,
            order: Vec::new(),
            runs: Vec::new(),
            tile_words: BTreeSet::new(),
            model_checks: Vec::new(),
            glossary_open: false,
            glossary_scroll: 0,
            glossary: crate::lessons::glossary::Glossary {
                entries: Vec::new(),
            },
            ptx: Some(Box::new(state)),
            input: None,
            verdict: None,
            progress: Progress::default(),
            pending_answers: Vec::new(),
            revealed: Default::default(),
        }
    }

    /// Whether the go-to-line prompt is open (keys then type into it).
    pub fn prompt_open(&self) -> bool {
        self.ptx.as_ref().is_some_and(|p| p.prompt.is_some())
    }

    /// The open lesson.
    pub fn current(&self) -> &Lesson {
        &self.lessons[self.lesson]
    }

    /// The run of the current step.
    pub fn run(&self) -> &StepRun {
        &self.runs[self.pos]
    }

    /// The glossary entries of the current step's terms, then the lesson's
    /// ([`Lesson::terms_of`]); terms without an entry are skipped.
    pub fn step_glossary(&self) -> Vec<&Entry> {
        let l = self.current();
        let Some(&si) = self.order.get(self.pos) else {
            return Vec::new();
        };
        l.terms_of(si)
            .into_iter()
            .filter_map(|t| self.glossary.find(t).ok())
            .fold(Vec::new(), |mut v, e| {
                if !v.iter().any(|o: &&Entry| o.name == e.name) {
                    v.push(e);
                }
                v
            })
    }

    /// The current step's question, if it asks one.
    pub fn exercise(&self) -> Option<&Exercise> {
        let si = *self.order.get(self.pos)?;
        self.current().steps[si].exercise.as_ref()
    }

    /// Whether the current step's question was answered right (now or in an earlier session).
    pub fn answered_right(&self) -> bool {
        self.order
            .get(self.pos)
            .and_then(|&si| self.progress.get(&self.current().name, si))
            .is_some_and(|r| r.correct)
    }

    /// Whether the current step's numbers are hidden: it asks a question that has not been
    /// answered (right or wrong: a wrong answer's explanation gives the model's numbers) and
    /// the learner did not press `r`. The banks pane's title and grid, the lanes' wavefronts,
    /// the counters and (for a which-lane question) the registers then show `?` instead, and
    /// the narrative leaves out the explanation of the answer (`[steps.exercise] explanation`).
    pub fn answer_hidden(&self) -> bool {
        let Some(&si) = self.order.get(self.pos) else {
            return false;
        };
        let name = &self.current().name;
        self.exercise().is_some()
            && self.progress.get(name, si).is_none()
            && !self.revealed.contains(&(name.clone(), si))
    }

    /// Reveals every question of every lesson, as `r` on each would (`tilelab tui --answers`).
    pub fn reveal_all(&mut self) {
        for l in &self.lessons {
            for (si, st) in l.steps.iter().enumerate() {
                if st.exercise.is_some() {
                    self.revealed.insert((l.name.clone(), si));
                }
            }
        }
    }

    /// Whether the lanes' addresses are hidden too: [`Self::answer_hidden`] on an `ld`/`st` step
    /// that asks which lane reads an element, where that is the lane whose address it is (its
    /// element, byte offset and bank, and its word underlined in the bank grid, are the answer).
    /// An ldmatrix's address lanes are not the lanes that receive the element: shown.
    pub fn lane_addresses_hidden(&self) -> bool {
        self.answer_hidden()
            && self.exercise().is_some_and(|e| {
                matches!(
                    e.kind,
                    crate::lessons::exercise::ExerciseKind::LaneOf { .. }
                )
            })
            && self
                .runs
                .get(self.pos)
                .and_then(|r| r.request.as_ref())
                .is_some_and(|q| q.instruction.matrices().is_none())
    }

    /// Whether the current step is the lesson's last.
    pub fn at_end(&self) -> bool {
        self.pos + 1 == self.runs.len()
    }

    fn open(&mut self, i: usize) {
        self.lesson = i.min(self.lessons.len() - 1);
        self.menu = self.lesson;
        self.screen = Screen::Lesson;
        self.variant = 0;
        self.layout = 0;
        self.pos = 0;
        self.lane = 0;
        self.operand = Operand::A;
        self.scroll = [0; 5];
        self.zoom = false;
        self.input = None;
        self.verdict = None;
        self.model_checks = self.lessons[self.lesson]
            .model
            .iter()
            .map(check_model)
            .collect();
        self.recompute();
    }

    /// Recomputes the runs for the current lesson, variant and layout (asks `sim`).
    pub fn recompute(&mut self) {
        let l = &self.lessons[self.lesson];
        self.order = l.steps_of(self.variant);
        self.runs = self
            .order
            .iter()
            .map(|&si| run_step(l, si, self.layout).expect("checked when the lesson loaded"))
            .collect();
        self.pos = self.pos.min(self.runs.len().saturating_sub(1));
        self.tile_words.clear();
        if let Ok(placed) = place_tiles(l, self.layout) {
            for (t, p) in l.tiles.iter().zip(placed) {
                for r in 0..t.rows {
                    for c in 0..t.cols {
                        let b = p.base + p.layout.byte_offset(r, c);
                        for w in b / 4..=(b + t.elem_bytes - 1) / 4 {
                            self.tile_words.insert(w);
                        }
                    }
                }
            }
        }
    }

    /// Running counters over steps `0..=pos`: instructions by SASS mnemonic, and the request
    /// totals of `sim` ([`AccessStats`] summed from each step's cost).
    pub fn counters(&self) -> (BTreeMap<&'static str, u32>, AccessStats) {
        let l = self.current();
        let mut by = BTreeMap::new();
        for (i, _) in self.runs.iter().enumerate().take(self.pos + 1) {
            *by.entry(l.steps[self.order[i]].sass()).or_insert(0) += 1;
        }
        let stats = self
            .runs
            .iter()
            .take(self.pos + 1)
            .filter_map(|r| r.cost)
            .sum();
        (by, stats)
    }
}

/// Applies one message: the only place where [`App`] changes.
pub fn update(app: &mut App, msg: Msg) {
    if msg == Msg::Quit {
        app.should_quit = true;
        return;
    }
    if msg == Msg::ToggleHelp {
        app.help = !app.help;
        return;
    }
    if app.input.is_some() {
        input_update(app, msg);
        return;
    }
    if msg == Msg::ToggleGlossary {
        app.glossary_open = !app.glossary_open && app.screen == Screen::Lesson;
        app.glossary_scroll = 0;
        return;
    }
    if app.glossary_open {
        match msg {
            Msg::ScrollDown | Msg::NextLane => {
                app.glossary_scroll = app.glossary_scroll.saturating_add(3)
            }
            Msg::ScrollUp | Msg::PrevLane => {
                app.glossary_scroll = app.glossary_scroll.saturating_sub(3)
            }
            _ => {}
        }
        return;
    }
    match app.screen {
        Screen::Menu => match msg {
            Msg::MenuUp | Msg::PrevLane | Msg::PrevStep => app.menu = app.menu.saturating_sub(1),
            Msg::MenuDown | Msg::NextLane | Msg::NextStep => {
                app.menu = (app.menu + 1).min(app.lessons.len() - 1)
            }
            Msg::Open => app.open(app.menu),
            _ => {}
        },
        Screen::Lesson => lesson_update(app, msg),
        Screen::Ptx => ptx_update(app, msg),
    }
}

fn ptx_update(app: &mut App, msg: Msg) {
    let Some(p) = app.ptx.as_deref_mut() else {
        return;
    };
    if p.prompt.is_some() {
        match msg {
            Msg::PromptChar(c) if c.is_ascii_digit() => {
                if let Some(t) = p.prompt.as_mut().filter(|t| t.len() < 9) {
                    t.push(c);
                }
            }
            Msg::PromptBack => {
                if let Some(t) = p.prompt.as_mut() {
                    t.pop();
                }
            }
            Msg::PromptEnter => {
                let t = p.prompt.take().unwrap_or_default();
                match t.parse::<u32>() {
                    Ok(n) if n >= 1 => p.goto_line(n),
                    // Letters are not taken, so ':abc' arrives empty: say what ':' wants.
                    _ if t.is_empty() => p.status = Some(
                        "no line number: ':' takes the digits of a PTX line, e.g. :402, then Enter"
                            .into(),
                    ),
                    _ => p.status = Some(format!("'{t}' is not a line number (1 or more)")),
                }
            }
            Msg::PromptCancel => p.prompt = None,
            _ => {}
        }
        return;
    }
    p.status = None;
    match msg {
        Msg::NextStep => p.next(),
        Msg::PrevStep => p.prev(),
        Msg::FirstStep => p.first(),
        Msg::LastStep => p.last(),
        Msg::NextConflict => p.next_conflict(),
        Msg::PrevConflict => p.prev_conflict(),
        Msg::GotoLine => p.prompt = Some(String::new()),
        Msg::FilterConflicts => p.toggle_conflicts(),
        Msg::FilterLine => p.toggle_line(),
        Msg::NextHopper(k) => p.next_hopper(k),
        Msg::PrevHopper(k) => p.prev_hopper(k),
        Msg::ToggleRoles => p.toggle_roles(),
        Msg::NextLane => app.lane = (app.lane + 1) % 32,
        Msg::PrevLane => app.lane = (app.lane + 31) % 32,
        Msg::NextOperand => {
            app.operand = match app.operand {
                Operand::A => Operand::B,
                Operand::B => Operand::C,
                Operand::C => Operand::A,
            }
        }
        Msg::FocusNext => app.focus = Pane::ALL[(app.focus.index() + 1) % Pane::ALL.len()],
        Msg::ToggleZoom => app.zoom = !app.zoom,
        Msg::ScrollDown => {
            let s = &mut app.scroll[app.focus.index()];
            *s = s.saturating_add(3);
        }
        Msg::ScrollUp => {
            let s = &mut app.scroll[app.focus.index()];
            *s = s.saturating_sub(3);
        }
        _ => {}
    }
}

/// Keys while an answer is typed: characters, Backspace, Enter (check), Esc (cancel).
fn input_update(app: &mut App, msg: Msg) {
    let Some(buf) = app.input.as_mut() else {
        return;
    };
    match msg {
        Msg::InputChar(c) if buf.chars().count() < 40 && !c.is_control() => buf.push(c),
        Msg::InputBack => {
            buf.pop();
        }
        Msg::CancelInput => app.input = None,
        Msg::SubmitAnswer => {
            let answer = app.input.take().unwrap_or_default();
            let si = app.order[app.pos];
            let l = &app.lessons[app.lesson];
            app.verdict = Some(match check_answer(l, si, &answer) {
                Ok(v) => {
                    app.progress.record(&l.name, si, &v);
                    app.pending_answers.push((l.name.clone(), si, v.clone()));
                    Ok(v)
                }
                Err(e) => Err(e.to_string()),
            });
        }
        _ => {}
    }
}

fn lesson_update(app: &mut App, msg: Msg) {
    let n = app.runs.len();
    if matches!(
        msg,
        Msg::NextStep | Msg::PrevStep | Msg::FirstStep | Msg::LastStep | Msg::NextVariant
    ) {
        app.verdict = None;
    }
    match msg {
        Msg::Reveal => {
            if app.exercise().is_some() {
                let key = (app.current().name.clone(), app.order[app.pos]);
                app.revealed.insert(key);
            }
        }
        Msg::StartAnswer => {
            if app.exercise().is_some() {
                app.input = Some(String::new());
                app.verdict = None;
            }
        }
        Msg::InputChar(_) | Msg::InputBack | Msg::SubmitAnswer | Msg::CancelInput => {}
        Msg::NextStep => {
            if app.pos + 1 < n {
                app.pos += 1;
                app.scroll[Pane::Narrative.index()] = 0;
            }
        }
        Msg::PrevStep => {
            if app.pos > 0 {
                app.pos -= 1;
                app.scroll[Pane::Narrative.index()] = 0;
            }
        }
        Msg::FirstStep => app.pos = 0,
        Msg::LastStep => app.pos = n.saturating_sub(1),
        Msg::NextLayout => {
            app.layout = (app.layout + 1) % app.current().layouts.len();
            app.recompute();
        }
        Msg::SetLayout(i) => {
            if i < app.current().layouts.len() {
                app.layout = i;
                app.recompute();
            }
        }
        Msg::NextVariant => {
            app.variant = (app.variant + 1) % app.current().variants.len();
            app.pos = 0;
            app.recompute();
        }
        Msg::NextLane => app.lane = (app.lane + 1) % 32,
        Msg::PrevLane => app.lane = (app.lane + 31) % 32,
        Msg::NextOperand => {
            app.operand = match app.operand {
                Operand::A => Operand::B,
                Operand::B => Operand::C,
                Operand::C => Operand::A,
            }
        }
        Msg::FocusNext => {
            app.focus = Pane::ALL[(app.focus.index() + 1) % Pane::ALL.len()];
        }
        Msg::ToggleZoom => app.zoom = !app.zoom,
        Msg::ScrollDown => {
            let s = &mut app.scroll[app.focus.index()];
            *s = s.saturating_add(3);
        }
        Msg::ScrollUp => {
            let s = &mut app.scroll[app.focus.index()];
            *s = s.saturating_sub(3);
        }
        Msg::Menu => {
            app.screen = Screen::Menu;
            app.menu = app.lesson;
        }
        Msg::NextLesson => {
            if app.lesson + 1 < app.lessons.len() {
                app.open(app.lesson + 1);
            }
        }
        Msg::PrevLesson => {
            if app.lesson > 0 {
                app.open(app.lesson - 1);
            }
        }
        Msg::MenuUp
        | Msg::MenuDown
        | Msg::Open
        | Msg::Quit
        | Msg::ToggleHelp
        | Msg::ToggleGlossary
        | Msg::NextConflict
        | Msg::PrevConflict
        | Msg::GotoLine
        | Msg::FilterConflicts
        | Msg::FilterLine
        | Msg::NextHopper(_)
        | Msg::PrevHopper(_)
        | Msg::ToggleRoles
        | Msg::PromptChar(_)
        | Msg::PromptBack
        | Msg::PromptEnter
        | Msg::PromptCancel => {}
    }
}

impl App {
    /// Scroll offset of `pane`.
    pub fn scroll_of(&self, pane: Pane) -> u16 {
        self.scroll[pane.index()]
    }
}
