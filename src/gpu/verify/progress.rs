//! Where the suite reports progress while it runs (the checks never print): a spinner in the
//! CLI, [`Silent`] or [`Collect`] in tests.

/// Receives the suite's progress. Each long step (compiling, a run under Nsight Compute) is
/// announced by [`Progress::start`] and closed by [`Progress::finish`].
pub trait Progress {
    /// A step that may take a while starts, e.g. "measuring 1542 warp requests with Nsight
    /// Compute".
    fn start(&mut self, what: &str);
    /// The step started last is done.
    fn finish(&mut self);
    /// A line for the user beside the table, e.g. where disagreeing records were written.
    fn note(&mut self, line: &str);
}

/// Ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {
    fn start(&mut self, _: &str) {}
    fn finish(&mut self) {}
    fn note(&mut self, _: &str) {}
}

/// Keeps everything, in order: `start: …`, `finish`, `note: …`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Collect {
    /// The events.
    pub events: Vec<String>,
}

impl Progress for Collect {
    fn start(&mut self, what: &str) {
        self.events.push(format!("start: {what}"));
    }
    fn finish(&mut self) {
        self.events.push("finish".into());
    }
    fn note(&mut self, line: &str) {
        self.events.push(format!("note: {line}"));
    }
}
