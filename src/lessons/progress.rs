//! The learner's progress through the exercises, kept in the user's data directory:
//! `$XDG_DATA_HOME/tilelab/progress.json` (by default `~/.local/share/tilelab/progress.json` on
//! Linux; the platform's data directory elsewhere, as the `dirs` crate finds it).
//!
//! The file is JSON, `{"version": 1, "lessons": {LESSON: {STEP: {correct, attempts, answer}}}}`
//! with STEP the 1-based position of the step in the lesson file. A step once answered right
//! stays right; `attempts` counts every answer. A missing file is empty progress; a file that is
//! not this JSON is an error naming it (never silently overwritten), and so is one that is not a
//! regular file or is over [`MAX_PROGRESS_BYTES`] (a FIFO or `/dev/zero` in its place).
//!
//! Every change is one read-modify-write under an exclusive lock ([`update`], [`reset`]), so
//! any number of `tilelab lessons answer` processes and TUIs can answer at once and none loses
//! another's answer: the lock is `progress.json.lock` beside the file (an advisory `flock`
//! through `fd-lock`; the progress file itself cannot carry it, since it is replaced by a
//! rename). The new text goes to a uniquely named temporary file in the same directory
//! (`tempfile`), is flushed to disk (`fsync`) and then renamed over the old file, and the
//! directory is flushed too: a crash or a full disk leaves the old progress or the new, never a
//! mix. Readers ([`Progress::load`]) take no lock: the rename is atomic.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::exercise::Verdict;
pub use crate::textfile::MAX_PROGRESS_BYTES;

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

/// An I/O error as the OS says it ("Permission denied (os error 13)"), without the path that
/// `tempfile` appends in Rust's debug quoting: the message names the directory itself.
fn os_words(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
        None => e.kind().to_string(),
    }
}

/// "cannot save it in 'DIR'".
fn save_in(dir: &Path) -> String {
    format!("cannot save it in '{}'", crate::text::path(dir))
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

/// The lock file of the progress file `path`: `path` with `.lock` appended
/// (`progress.json.lock`).
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// Runs `f` holding the exclusive lock of the progress file `path` (creating its directory and
/// the lock file), and releases it after.
fn with_lock<T>(
    path: &Path,
    f: impl FnOnce() -> Result<T, ProgressError>,
) -> Result<T, ProgressError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, "cannot create directory", e))?;
    }
    let lp = lock_path(path);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lp)
        .map_err(|e| io(&lp, "cannot open the lock file", e))?;
    let mut lock = fd_lock::RwLock::new(file);
    let guard = lock
        .write()
        .map_err(|e| io(&lp, "cannot lock the lock file", e))?;
    let r = f();
    drop(guard);
    r
}

/// Applies `change` to the progress in `path` as one locked read-modify-write and returns the
/// progress as written: the file's progress (with every other process's answers), changed.
///
/// # Errors
/// The file cannot be read or is not the progress JSON (then it is left as it is); the new file
/// cannot be written (the old one stays); it would be over [`MAX_PROGRESS_BYTES`].
pub fn update(path: &Path, change: impl FnOnce(&mut Progress)) -> Result<Progress, ProgressError> {
    with_lock(path, || {
        let mut p = Progress::load(path)?;
        change(&mut p);
        p.write(path)?;
        Ok(p)
    })
}

/// Records `v`, an answer to the exercise of step `step` (index into the lesson's steps) of
/// `lesson`, in the progress file `path` ([`update`]): saved when this returns `Ok`.
///
/// # Errors
/// See [`update`].
pub fn record_answer(
    path: &Path,
    lesson: &str,
    step: usize,
    v: &Verdict,
) -> Result<Progress, ProgressError> {
    update(path, |p| p.record(lesson, step, v))
}

impl Progress {
    /// Reads `path`; a missing file is empty progress.
    ///
    /// # Errors
    /// An unreadable file, one that is not a regular file or is over [`MAX_PROGRESS_BYTES`], or
    /// one that is not the progress JSON.
    pub fn load(path: &Path) -> Result<Progress, ProgressError> {
        use crate::textfile::{TextError, read_text};
        let text = match read_text(path, MAX_PROGRESS_BYTES, "progress file") {
            Ok(t) => t,
            Err(TextError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Progress::default());
            }
            Err(e) => return Err(io(path, "cannot read", e)),
        };
        let p: Progress = serde_json::from_str(&text).map_err(|e| {
            let why = crate::text::serde_words(
                &e.to_string(),
                &[
                    (
                        "Progress",
                        "an object {\"version\": 1, \"lessons\": {...}}",
                    ),
                    (
                        "Record",
                        "a step's record {\"correct\": ..., \"attempts\": ..., \"answer\": ...}",
                    ),
                ],
            );
            io(
                path,
                "is not tilelab's progress JSON (remove it or run `tilelab lessons progress --reset`)",
                why,
            )
        })?;
        if p.version != 1 {
            return Err(io(path, "unknown version", p.version));
        }
        Ok(p)
    }

    /// Writes to `path` through a unique temporary file in its directory, flushed, then renamed
    /// over `path`; the directory is flushed after. The caller holds the lock ([`update`]).
    fn write(&self, path: &Path) -> Result<(), ProgressError> {
        use std::io::Write;
        let text = serde_json::to_string_pretty(self).expect("plain data serializes") + "\n";
        if text.len() as u64 > MAX_PROGRESS_BYTES {
            return Err(io(
                path,
                "not saved",
                format!(
                    "the progress would take {} bytes, more than the {MAX_PROGRESS_BYTES} a progress file may have",
                    text.len()
                ),
            ));
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut tmp = tempfile::Builder::new()
            .prefix(".progress.")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| io(path, &save_in(dir), os_words(&e)))?;
        tmp.write_all(text.as_bytes())
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(|e| io(path, &save_in(dir), os_words(&e)))?;
        tmp.persist(path)
            .map_err(|e| io(path, "cannot replace", os_words(&e.error)))?;
        // The rename itself is made durable by flushing the directory (Unix; a directory cannot
        // be opened as a file elsewhere).
        #[cfg(unix)]
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io(dir, "cannot flush directory", e))?;
        Ok(())
    }

    /// Records an answer to the exercise of step `step` (index into the lesson's steps), in
    /// memory only (see [`record_answer`] to save one).
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

    /// (answered right, exercises) of lesson `l`: its steps that ask a question, of every
    /// variant, and how many of them this progress has answered right.
    pub fn score(&self, l: &super::Lesson) -> (usize, usize) {
        let with: Vec<usize> = (0..l.steps.len())
            .filter(|&i| l.steps[i].exercise.is_some())
            .collect();
        let right = with
            .iter()
            .filter(|&&i| self.get(&l.name, i).is_some_and(|r| r.correct))
            .count();
        (right, with.len())
    }

    /// The record of step `step` (index) of `lesson`, if answered.
    pub fn get(&self, lesson: &str, step: usize) -> Option<&Record> {
        self.lessons.get(lesson)?.get(&(step + 1).to_string())
    }
}

/// Removes the progress file, holding its lock (so no answer being saved is half-removed);
/// `Ok(false)` when there was none. The lock file stays.
///
/// # Errors
/// A file that exists but cannot be removed; the lock cannot be taken.
pub fn reset(path: &Path) -> Result<bool, ProgressError> {
    with_lock(path, || match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io(path, "cannot remove", e)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(correct: bool, answer: &str) -> Verdict {
        Verdict {
            correct,
            answer: answer.into(),
            expected: "32".into(),
            explanation: String::new(),
        }
    }

    #[test]
    fn the_lock_is_beside_the_file() {
        assert_eq!(
            lock_path(Path::new("/d/tilelab/progress.json")),
            Path::new("/d/tilelab/progress.json.lock")
        );
    }

    /// Two in-memory copies that each save their own answer (the TUI's old way) lost one; two
    /// updates keep both, and leave no temporary file behind.
    #[test]
    fn updates_merge_with_what_is_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tilelab").join("progress.json");
        record_answer(&path, "banks", 3, &verdict(false, "4")).unwrap();
        let p = record_answer(&path, "mma", 0, &verdict(true, "6")).unwrap();
        assert_eq!(p.get("banks", 3).unwrap().attempts, 1);
        let p = record_answer(&path, "banks", 3, &verdict(true, "32")).unwrap();
        let r = p.get("banks", 3).unwrap();
        assert_eq!((r.correct, r.attempts, r.answer.as_str()), (true, 2, "32"));
        assert_eq!(Progress::load(&path).unwrap(), p);
        let mut names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["progress.json", "progress.json.lock"]);
    }

    /// A damaged file is an error and stays as it was; so does one over the limit.
    #[test]
    fn a_corrupt_file_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("progress.json");
        std::fs::write(&path, "{").unwrap();
        let e = record_answer(&path, "banks", 3, &verdict(true, "32")).unwrap_err();
        assert!(
            e.to_string().contains("is not tilelab's progress JSON"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{");
        let big = " ".repeat(MAX_PROGRESS_BYTES as usize + 1);
        std::fs::write(&path, &big).unwrap();
        let e = record_answer(&path, "banks", 3, &verdict(true, "32")).unwrap_err();
        assert!(e.to_string().contains("more than 16777216 bytes"), "{e}");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), big.len() as u64);
        assert!(reset(&path).unwrap());
        assert!(!reset(&path).unwrap());
    }
}
