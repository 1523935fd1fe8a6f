//! The state of `tilelab tui --ptx` (issue 17): one simulated CTA of a PTX kernel, the
//! recorded shared-memory and tensor-core instructions of one of its warps
//! ([`crate::ptx::trace::Recorder`]), and where the user is among them (position, filters, the
//! go-to-line prompt). [`super::app::update`] moves through it; [`super::view`] draws it.
//!
//! Nothing here computes a wavefront: each step carries the executor's cost, and
//! [`PtxState::report_of`] asks [`crate::sim::bank::schedule`] for the wavefront of each lane.

use std::collections::BTreeMap;

use crate::ptx::Launch;
use crate::ptx::decode::{Op, Program};
use crate::ptx::engine::{ALL_WARPS, MbarrierEvent};
use crate::ptx::report::{Report, class_of, load, simulate_program};
use crate::ptx::trace::{Hopper, Recorded, Recorder, Role, WarpActivity};
use crate::sim::bank::{self, RequestReport};
use crate::sim::stats::AccessStats;

/// Everything `tilelab tui --ptx` shows, and where the user is.
#[derive(Clone, Debug)]
pub struct PtxState {
    /// The PTX file as named on the command line.
    pub file: String,
    /// The PTX text, one entry per line (line `n` is `source[n - 1]`).
    pub source: Vec<String>,
    /// The decoded kernel (instruction classes, mma shapes).
    pub prog: Program,
    /// The simulated CTA's report: totals and per-line sums over all its warps.
    pub report: Report,
    /// The launch in words (`grid (1,1,1), block (128,1,1), CTA (0,0,0)`).
    pub launch: String,
    /// The followed warp.
    pub warp: u32,
    /// Warps in the CTA.
    pub warps: u32,
    /// The followed warp's recorded steps.
    pub trace: Recorder,
    /// Current step (index into `trace.steps`).
    pub pos: usize,
    /// Filter: only steps with bank conflicts.
    pub only_conflicts: bool,
    /// Filter: only steps of this PTX line.
    pub only_line: Option<u32>,
    /// The go-to-line prompt's text while it is open.
    pub prompt: Option<String>,
    /// A one-line message for the footer (a refused filter, a line without steps).
    pub status: Option<String>,
    /// The warp-roles view is open (`R`).
    pub show_roles: bool,
    /// The text of each source file the PTX's `.loc` lines name (`.file`), or why it could not
    /// be read ([`crate::textfile::read_source_lines`]); empty for PTX without a line table.
    pub source_files: BTreeMap<String, Result<Vec<String>, String>>,
}

/// The Hopper events the jump keys look for (`w`, `t`, `b` and their capitals).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HopperKind {
    /// `wgmma.mma_async`.
    Wgmma,
    /// Bulk copies (TMA).
    Bulk,
    /// mbarrier operations and landings.
    Mbarrier,
}

impl HopperKind {
    fn of(h: &Hopper) -> HopperKind {
        match h {
            Hopper::Wgmma(_) => HopperKind::Wgmma,
            Hopper::Bulk(_) => HopperKind::Bulk,
            Hopper::Mbarrier(_) => HopperKind::Mbarrier,
        }
    }

    fn words(self) -> &'static str {
        match self {
            HopperKind::Wgmma => "wgmma.mma_async",
            HopperKind::Bulk => "bulk copy (TMA)",
            HopperKind::Mbarrier => "mbarrier operation",
        }
    }
}

impl PtxState {
    /// A state at the first recorded step.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        file: String,
        text: &str,
        prog: Program,
        report: Report,
        launch: String,
        warp: u32,
        warps: u32,
        trace: Recorder,
    ) -> PtxState {
        PtxState {
            file,
            source: text.lines().map(str::to_string).collect(),
            prog,
            report,
            launch,
            warp,
            warps,
            trace,
            pos: 0,
            only_conflicts: false,
            only_line: None,
            prompt: None,
            status: None,
            show_roles: false,
            source_files: BTreeMap::new(),
        }
    }

    /// The current step's source line: `kernel.py:27` and the line's text (blanks trimmed)
    /// when its file was read, else why not; `None` without a `.loc`.
    pub fn source_line(&self) -> Option<(String, Result<String, String>)> {
        let r = self.current()?;
        let s = self.prog.sources.get(&r.line)?;
        let text = match self.source_files.get(&*s.file) {
            Some(Ok(lines)) => s
                .line
                .checked_sub(1)
                .and_then(|i| lines.get(i as usize))
                .map(|t| t.trim().to_string())
                .ok_or_else(|| format!("the file has no line {}", s.line)),
            Some(Err(e)) => Err(e.clone()),
            None => Err("not read".to_string()),
        };
        Some((s.short(), text))
    }

    /// Decodes `text` (kernel `kernel`, or the only one), simulates one CTA of `launch` while
    /// recording warp `warp`'s steps (at most `cap`), and starts at the first step, or at the
    /// first step of PTX line `line` when given (the status line says when it has none).
    ///
    /// # Errors
    /// One line: parse, decode or run errors of [`crate::ptx`]; a warp outside the CTA (naming
    /// the number of warps); a zero `cap`.
    pub fn load(
        file: String,
        text: &str,
        kernel: Option<&str>,
        launch: &Launch,
        warp: u32,
        cap: usize,
        line: Option<u32>,
    ) -> Result<PtxState, String> {
        let prog = load(text, kernel).map_err(|e| format!("{file}: {e}"))?;
        // CUDA's launch limits first (the same check the run makes), then the warp.
        let threads =
            crate::ptx::params::check_launch(&prog, launch).map_err(|e| format!("{file}: {e}"))?;
        let warps = threads.div_ceil(32);
        if warp >= warps {
            return Err(format!(
                "--warp {warp}: the CTA has {warps} warp{} ({threads} threads), so 0-{}",
                if warps == 1 { "" } else { "s" },
                warps.saturating_sub(1)
            ));
        }
        if cap == 0 {
            return Err("--max-steps 0: at least one step must be kept".into());
        }
        // Every warp is observed (the roles need each warp's activity); the recorder keeps the
        // followed warp's steps.
        let mut rec = Recorder::following(warp, cap);
        let report = simulate_program(&prog, launch, Some((ALL_WARPS, &mut rec)))
            .map_err(|e| format!("{file}: {e}"))?;
        let d = |v: [u32; 3]| format!("({},{},{})", v[0], v[1], v[2]);
        let words = format!("{} of grid {}", d(launch.cta), d(launch.grid));
        let mut s = PtxState::new(file, text, prog, report, words, warp, warps, rec);
        let names: std::collections::BTreeSet<String> = s
            .prog
            .sources
            .values()
            .map(|r| r.file.to_string())
            .collect();
        for n in names {
            let read = crate::textfile::read_source_lines(&n, std::path::Path::new(&s.file));
            s.source_files.insert(n, read);
        }
        if let Some(l) = line {
            s.goto_line(l);
        }
        Ok(s)
    }

    /// The current step, `None` when the warp ran no shared-memory or mma instruction.
    pub fn current(&self) -> Option<&Recorded> {
        self.trace.steps.get(self.pos)
    }

    /// The SASS class name of a step (`LDS`, `LDSM`, `HMMA`, …; `mbarrier` for an mbarrier
    /// operation or a copy's bytes landing on one).
    pub fn sass(&self, r: &Recorded) -> &'static str {
        if matches!(r.hopper, Some(Hopper::Mbarrier(_))) {
            return "mbarrier";
        }
        self.prog
            .insts
            .get(r.pc as usize)
            .and_then(|i| class_of(&i.op))
            .map_or("?", |c| c.name())
    }

    /// The decoded op of a step.
    pub fn op(&self, r: &Recorded) -> Option<&Op> {
        self.prog.insts.get(r.pc as usize).map(|i| &i.op)
    }

    /// The wavefronts of a shared-memory step by lane ([`bank::schedule`] of its request);
    /// `None` for an mma or a request the model does not cost.
    pub fn report_of(&self, r: &Recorded) -> Option<RequestReport> {
        let req = r.step.request.as_ref()?;
        // The step's cost, not the request alone: it also knows a zero-filled cp.async (the
        // interpreter knows each lane's src-size).
        r.step
            .cost
            .not_modelled
            .is_none()
            .then(|| bank::schedule(req))
    }

    /// Whether step `i` passes the filters.
    pub fn visible(&self, i: usize) -> bool {
        let Some(r) = self.trace.steps.get(i) else {
            return false;
        };
        (!self.only_conflicts || r.bank_conflicts() > 0)
            && self.only_line.is_none_or(|l| r.line == l)
    }

    /// Indices of the steps that pass the filters.
    pub fn visible_steps(&self) -> Vec<usize> {
        (0..self.trace.steps.len())
            .filter(|&i| self.visible(i))
            .collect()
    }

    /// The next step after the current one satisfying `f` (and the filters).
    fn next_where(&self, f: impl Fn(&Recorded) -> bool) -> Option<usize> {
        (self.pos + 1..self.trace.steps.len()).find(|&i| self.visible(i) && f(&self.trace.steps[i]))
    }

    fn prev_where(&self, f: impl Fn(&Recorded) -> bool) -> Option<usize> {
        (0..self.pos)
            .rev()
            .find(|&i| self.visible(i) && f(&self.trace.steps[i]))
    }

    /// Next visible step.
    pub fn next(&mut self) {
        if let Some(i) = self.next_where(|_| true) {
            self.pos = i;
        }
    }

    /// Previous visible step.
    pub fn prev(&mut self) {
        if let Some(i) = self.prev_where(|_| true) {
            self.pos = i;
        }
    }

    /// First visible step.
    pub fn first(&mut self) {
        if let Some(i) = (0..self.trace.steps.len()).find(|&i| self.visible(i)) {
            self.pos = i;
        }
    }

    /// Last visible step.
    pub fn last(&mut self) {
        if let Some(i) = (0..self.trace.steps.len()).rev().find(|&i| self.visible(i)) {
            self.pos = i;
        }
    }

    /// Next step with a bank conflict, or a status message saying there is none.
    pub fn next_conflict(&mut self) {
        match self.next_where(|r| r.bank_conflicts() > 0) {
            Some(i) => self.pos = i,
            None => self.status = Some(self.none_msg("no later instruction with bank conflicts")),
        }
    }

    /// Previous step with a bank conflict.
    pub fn prev_conflict(&mut self) {
        match self.prev_where(|r| r.bank_conflicts() > 0) {
            Some(i) => self.pos = i,
            None => self.status = Some(self.none_msg("no earlier instruction with bank conflicts")),
        }
    }

    fn none_msg(&self, what: &str) -> String {
        format!(
            "{what} among warp {}'s {} recorded steps",
            self.warp,
            self.trace.steps.len()
        )
    }

    /// Jumps to the first recorded step of PTX line `line` at or after the current step
    /// (wrapping to the start), or, when that line has none, of the nearest later line that
    /// has one; says so in the status line. Clears a filter that would hide it.
    pub fn goto_line(&mut self, line: u32) {
        let steps = &self.trace.steps;
        let n = steps.len();
        let exact = (0..n)
            .map(|k| (self.pos + k) % n.max(1))
            .find(|&i| steps.get(i).is_some_and(|r| r.line == line));
        let (target, msg) = match exact {
            Some(i) => (Some(i), None),
            None => {
                let later = steps
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.line > line)
                    .min_by_key(|(i, r)| (r.line, *i))
                    .map(|(i, _)| i);
                let why = format!("line {line}: no shared/mma step of warp {}", self.warp);
                match later {
                    Some(i) => (
                        Some(i),
                        Some(format!(
                            "{why}; showing line {}, the next with one",
                            steps[i].line
                        )),
                    ),
                    None => (None, Some(format!("{why} there or after it"))),
                }
            }
        };
        if let Some(i) = target {
            self.pos = i;
            if !self.visible(i) {
                self.only_conflicts = false;
                self.only_line = self.only_line.map(|_| steps[i].line);
            }
        }
        self.status = msg;
    }

    /// Toggles the only-conflicting filter; refused (with a status message) when no recorded
    /// step has a conflict. Moves to the nearest visible step.
    pub fn toggle_conflicts(&mut self) {
        self.only_conflicts = !self.only_conflicts;
        if !self.settle() {
            self.only_conflicts = false;
            self.status = Some(self.none_msg("no instruction with bank conflicts"));
        }
    }

    /// Toggles the only-this-line filter (the current step's line).
    pub fn toggle_line(&mut self) {
        self.only_line = match (self.only_line, self.current()) {
            (Some(_), _) | (None, None) => None,
            (None, Some(r)) => Some(r.line),
        };
        if !self.settle() {
            self.only_line = None;
        }
    }

    /// After a filter change: stays if the current step is visible, else moves to the next
    /// visible step (or the previous one). False when no step is visible.
    fn settle(&mut self) -> bool {
        if self.visible(self.pos) {
            return true;
        }
        if let Some(i) = self.next_where(|_| true).or(self.prev_where(|_| true)) {
            self.pos = i;
            return true;
        }
        false
    }

    /// Next step (after the current one, among the visible) of Hopper event kind `k`, or a
    /// status message saying there is none.
    pub fn next_hopper(&mut self, k: HopperKind) {
        let is = |r: &Recorded| r.hopper.as_ref().is_some_and(|h| HopperKind::of(h) == k);
        match self.next_where(is) {
            Some(i) => self.pos = i,
            None => self.status = Some(self.none_msg(&format!("no later {}", k.words()))),
        }
    }

    /// Previous step of Hopper event kind `k`.
    pub fn prev_hopper(&mut self, k: HopperKind) {
        let is = |r: &Recorded| r.hopper.as_ref().is_some_and(|h| HopperKind::of(h) == k);
        match self.prev_where(is) {
            Some(i) => self.pos = i,
            None => self.status = Some(self.none_msg(&format!("no earlier {}", k.words()))),
        }
    }

    /// Opens or closes the warp-roles view.
    pub fn toggle_roles(&mut self) {
        self.show_roles = !self.show_roles;
    }

    /// What each warp of the CTA executed (bulk copies, wgmma, mbarrier instructions); warps
    /// past the last active one are idle.
    pub fn activity(&self, warp: u32) -> WarpActivity {
        self.trace
            .warps
            .get(warp as usize)
            .copied()
            .unwrap_or_default()
    }

    /// A warp's role, derived from what it executed ([`WarpActivity::role`]).
    pub fn role(&self, warp: u32) -> Role {
        self.activity(warp).role()
    }

    /// The recorded mbarrier events of the object at shared byte `addr` among steps
    /// `0..=pos`, with their step index: its phase history as the followed warp saw it.
    pub fn mbar_history(&self, addr: u32) -> Vec<(usize, &Recorded, &MbarrierEvent)> {
        self.trace
            .steps
            .iter()
            .enumerate()
            .take(self.pos + 1)
            .filter_map(|(i, r)| match &r.hopper {
                Some(Hopper::Mbarrier(m)) if m.addr == addr => Some((i, r, m)),
                _ => None,
            })
            .collect()
    }

    /// Running counters of the followed warp over steps `0..=pos` (all steps, whatever the
    /// filters): executions by SASS class and the summed request costs.
    pub fn counters(&self) -> (BTreeMap<&'static str, u32>, AccessStats) {
        let mut by = BTreeMap::new();
        let mut stats = AccessStats::default();
        for r in self.trace.steps.iter().take(self.pos + 1) {
            // An mbarrier operation has no class of its own; a landing is its copy's.
            if matches!(r.hopper, Some(Hopper::Mbarrier(_))) {
                continue;
            }
            *by.entry(self.sass(r)).or_insert(0) += 1;
            if r.step.request.is_some() && r.step.cost.not_modelled.is_none() {
                stats += AccessStats::from(r.step.cost);
            }
        }
        (by, stats)
    }
}
