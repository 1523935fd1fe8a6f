//! The learner's progress through the exercises, kept in the user's data directory:
//! `$XDG_DATA_HOME/tilelab/progress.json` (by default `~/.local/share/tilelab/progress.json` on
//! Linux; the platform's data directory elsewhere, as the `dirs` crate finds it).
//!
//! The file is JSON, `{"version": 1, "lessons": {LESSON: {STEP: {correct, attempts, answer}}}}`
//! with STEP the 1-based position of the step in the lesson file. A step once answered right
//! stays right; `attempts` counts every answer. A missing file is empty progress; a file that is
//! not this JSON is an error naming it (never silently overwritten). Writes go to a temporary
//! file renamed over the old one, so a full disk leaves the old progress intact.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::exercise::Verdict;

/// One exercise's record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// Answered right at least once.
    pub correct: bool,
    /// Answers given, right or wrong.
    pub attempts: u32,
    /// The last answer given (as understood).
    pub answer: String,
}

/// Every lesson's records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Progress {
    /// Format version (1).
    pub version: u32,
    /// Lesson name → 1-based step number (as a string) → record.
    pub lessons: BTreeMap<String, BTreeMap<String, Record>>,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            version: 1,
            lessons: BTreeMap::new(),
        }
    }
}

/// Errors reading or writing the progress file; each one line naming the path.
#[derive(Debug, thiserror::Error)]
pub enum ProgressError {
    /// No data directory: neither `XDG_DATA_HOME` nor a home directory is known.
    #[error(
        "cannot find a data directory for the progress file: set XDG_DATA_HOME (or HOME) to a writable directory"
    )]
    NoDataDir,
    /// Reading, writing or removing failed.
    #[error("progress file '{path}': {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
}

fn io(path: &Path, what: &str, e: impl std::fmt::Display) -> ProgressError {
    ProgressError::Io {
        path: crate::text::path(path),
        message: format!("{what}: {e}"),
    }
}

/// `<data dir>/tilelab/progress.json`.
///
/// # Errors
/// [`ProgressError::NoDataDir`].
pub fn default_path() -> Result<PathBuf, ProgressError> {
    dirs::data_dir()
        .map(|d| d.join("tilelab").join("progress.json"))
        .ok_or(ProgressError::NoDataDir)
}

impl Progress {
    /// Reads `path`; a missing file is empty progress.
    ///
    /// # Errors
    /// An unreadable file, or one that is not the progress JSON.
    pub fn load(path: &Path) -> Result<Progress, ProgressError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Progress::default()),
            Err(e) => return Err(io(path, "cannot read", e)),
        };
        let p: Progress = serde_json::from_str(&text).map_err(|e| {
            io(
                path,
                "is not tilelab's progress JSON (remove it or run `tilelab lessons progress --reset`)",
                e,
            )
        })?;
        if p.version != 1 {
            return Err(io(path, "unknown version", p.version));
        }
        Ok(p)
    }

    /// Writes to `path` (creating its directory) through a temporary file and a rename.
    ///
    /// # Errors
    /// Any I/O error (full disk, read-only directory), naming the path.
    pub fn save(&self, path: &Path) -> Result<(), ProgressError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io(dir, "cannot create directory", e))?;
        }
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(self).expect("plain data serializes");
        std::fs::write(&tmp, text + "\n").map_err(|e| io(&tmp, "cannot write", e))?;
        std::fs::rename(&tmp, path).map_err(|e| io(path, "cannot replace", e))
    }

    /// Records an answer to the exercise of step `step` (index into the lesson's steps).
    pub fn record(&mut self, lesson: &str, step: usize, v: &Verdict) {
        let r = self
            .lessons
            .entry(lesson.to_string())
            .or_default()
            .entry((step + 1).to_string())
            .or_default();
        r.correct |= v.correct;
        r.attempts = r.attempts.saturating_add(1);
        r.answer = v.answer.clone();
    }

    /// The record of step `step` (index) of `lesson`, if answered.
    pub fn get(&self, lesson: &str, step: usize) -> Option<&Record> {
        self.lessons.get(lesson)?.get(&(step + 1).to_string())
    }
}

/// Removes the progress file; `Ok(false)` when there was none.
///
/// # Errors
/// A file that exists but cannot be removed.
pub fn reset(path: &Path) -> Result<bool, ProgressError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io(path, "cannot remove", e)),
    }
}
