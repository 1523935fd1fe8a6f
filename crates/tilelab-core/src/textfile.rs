//! Reading a whole input file (a PTX module, a lesson, a launch file, the progress file, a
//! replay file) with a size limit, and only from a **regular file**: a path to `/dev/zero`, a
//! symlink to `/dev/urandom`, a FIFO or a socket is a one-line error instead of a read that runs
//! until memory is gone (`tilelab ptx /dev/zero` was killed by the OOM killer, exit 137) or an
//! open that waits forever for a writer (a FIFO as `progress.json` hung `lessons answer`).
//!
//! [`open_regular`] opens with `O_NONBLOCK` on Unix (so opening a FIFO returns at once), then
//! `fstat`s the opened file (not the path, so a symlink swapped after the check cannot slip a
//! device in) and requires a regular file no larger than the limit; [`read_text`] then reads at
//! most `limit + 1` bytes (a file that grows while read is still cut off). Every file tilelab
//! reads goes through one of these, each kind with its own limit below.

use std::io::Read;
use std::path::Path;

/// The most bytes a PTX module may have: 64 MiB (the largest fixture, FA2 d128 bm128 causal,
/// is 299,292 bytes; Triton's and nvcc's modules with line info stay far below).
pub const MAX_PTX_BYTES: u64 = 64 << 20;

/// The most bytes of a lesson file or a lesson's launch file: 4 MiB (the largest lesson,
/// `lessons/09-fa2-counts.toml`, is about 10 KB).
pub const MAX_LESSON_BYTES: u64 = 4 << 20;

/// The most bytes of a tilelab launch file (`ptx --launch FILE.json`, format in
/// `docs/launch-files.md`): 4 MiB. A launch names a few dozen parameters in about 100 bytes
/// each; the largest in `tests/data/ptx_hopper/launch/` is under 8 KB.
pub const MAX_LAUNCH_FILE_BYTES: u64 = 4 << 20;

/// The most bytes of the learner's progress file (`progress.json`): 16 MiB. One record (a step's
/// right/attempts/last answer) takes about 100 bytes and the built-in lessons ask a few dozen
/// questions, so a real file is a few KB; 16 MiB leaves room for many `--dir` lessons.
/// `tilelab::lessons::progress` refuses to write a file over this, so what it saves can always
/// be read back.
pub const MAX_PROGRESS_BYTES: u64 = 16 << 20;

/// The most bytes of a replay file of warp-request records (`sim replay FILE`, `verify
/// --records FILE`): 1 GiB. Records are streamed one at a time (`records::stream`), so memory
/// stays bounded; the limit bounds the time a run takes (a record is about 300 bytes, so 1 GiB
/// is some 3.5 million records; the largest measured file, `tests/data/h200_cpasync_lab_*.json`,
/// is 670 KB).
pub const MAX_REPLAY_BYTES: u64 = 1 << 30;

/// The most bytes of a hardware-record file read whole (`lessons check --hw FILE`): 64 MiB, the
/// largest single record `records::stream` takes (`records::MAX_RECORD_BYTES`); the built-in
/// H200 file is under 100 KB.
pub const MAX_HW_RECORDS_BYTES: u64 = 64 << 20;

/// The most bytes of the `"provenance"` field inside a measured replay file
/// (`measured::provenance::load_for`): 1 MiB. A provenance holds about ten short strings (card,
/// driver, tools, date, the command line); the largest in `tests/data/` is under 2 KB.
pub const MAX_PROVENANCE_BYTES: u64 = 1 << 20;

/// The most bytes of a kernel's source file that `tilelab ptx --by-source` reads to show its
/// lines' text (the `.file` a `.loc` names: `kernel.py`, `gemm.cu`): 16 MiB. A larger file's
/// text is not shown (the counts are).
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// The lines of the source file `name` a PTX file's `.file` names (for `--by-source` and the
/// TUI), or why it could not be read (one line): the path as given, then (a file that moved
/// since the PTX was made, or a relative name) the path relative to `ptx_file`'s folder, then
/// its last component there. Each try is [`read_text`] with [`MAX_SOURCE_BYTES`].
pub fn read_source_lines(name: &str, ptx_file: &Path) -> Result<Vec<String>, String> {
    let p = Path::new(name);
    let dir = ptx_file.parent().unwrap_or(Path::new(""));
    let mut tries = vec![p.to_path_buf()];
    if p.is_relative() {
        tries.push(dir.join(p));
    }
    if let Some(base) = p.file_name() {
        tries.push(dir.join(base));
    }
    let mut first_err = None;
    for t in &tries {
        match read_text(t, MAX_SOURCE_BYTES, "source file") {
            Ok(text) => return Ok(text.lines().map(str::to_string).collect()),
            Err(e) => {
                first_err.get_or_insert(e.to_string());
            }
        }
    }
    Err(first_err.unwrap_or_default())
}

/// Why [`read_text`] failed.
#[derive(Debug, thiserror::Error)]
pub enum TextError {
    /// Opening or reading failed (missing file, a directory, no permission, ...). Transparent,
    /// so that the error chain does not print the I/O error twice.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// More than `limit` bytes: not the kind of file asked for (or a device such as /dev/zero).
    #[error(
        "more than {limit} bytes ({mib} MiB), the most a {what} may have; is it the right file?",
        mib = limit >> 20
    )]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
        /// What the file should be ("PTX module", "lesson file").
        what: &'static str,
    },
    /// Not a regular file: a FIFO, a device (`/dev/zero`, `/dev/urandom`, also through a
    /// symlink) or a socket. (A directory is [`TextError::Io`] with the OS's "Is a directory".)
    #[error("not a regular file (it is a {kind}); a {what} must be a regular file")]
    NotRegular {
        /// What it is ("FIFO (named pipe)", "character device", ...).
        kind: &'static str,
        /// What the file should be.
        what: &'static str,
    },
    /// The bytes are not UTF-8 text.
    #[error("not text (invalid UTF-8 at byte {at}): a {what} is a text file; is it a binary?")]
    NotText {
        /// Byte offset of the first invalid sequence.
        at: usize,
        /// What the file should be.
        what: &'static str,
    },
}

/// Opens `path` for reading if it is a regular file of at most `limit` bytes; `what` names the
/// kind of file in the errors. On Unix the open is non-blocking (a FIFO without a writer does
/// not hang it), and the checks are made on the opened file. Reading it stays the caller's job:
/// bound it too ([`read_text_from`], [`Limited`]), since a file may grow after the check.
///
/// # Errors
/// [`TextError::Io`] (missing, no permission; a directory as the OS's "Is a directory"),
/// [`TextError::NotRegular`], [`TextError::TooLarge`].
pub fn open_regular(
    path: &Path,
    limit: u64,
    what: &'static str,
) -> Result<std::fs::File, TextError> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    let file = o.open(path)?;
    let meta = file.metadata()?;
    let ft = meta.file_type();
    if ft.is_dir() {
        #[cfg(unix)]
        return Err(TextError::Io(std::io::Error::from_raw_os_error(
            libc::EISDIR,
        )));
        #[cfg(not(unix))]
        return Err(TextError::Io(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        )));
    }
    if !ft.is_file() {
        return Err(TextError::NotRegular {
            kind: kind_of(&ft),
            what,
        });
    }
    if meta.len() > limit {
        return Err(TextError::TooLarge { limit, what });
    }
    Ok(file)
}

/// What a file that is neither a regular file nor a directory is, in words.
fn kind_of(ft: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "FIFO (named pipe)";
        }
        if ft.is_char_device() {
            return "character device";
        }
        if ft.is_block_device() {
            return "block device";
        }
        if ft.is_socket() {
            return "socket";
        }
    }
    let _ = ft;
    "special file"
}

/// Reads `path` as UTF-8 text of at most `limit` bytes; `what` names the kind of file in the
/// errors ("PTX module"). Only a regular file is read ([`open_regular`]), and at most
/// `limit + 1` bytes of it.
///
/// # Errors
/// [`TextError`]: the I/O error, not a regular file, more than `limit` bytes, or bytes that are
/// not UTF-8.
pub fn read_text(path: &Path, limit: u64, what: &'static str) -> Result<String, TextError> {
    let file = open_regular(path, limit, what)?;
    read_text_from(file, limit, what)
}

/// A reader that fails once more than `limit` bytes came through it, for input that is
/// streamed rather than read whole (replay files): the error is an [`std::io::Error`] whose
/// message is [`TextError::TooLarge`]'s.
#[derive(Debug)]
pub struct Limited<R> {
    inner: R,
    /// Bytes that may still be read before the input is over the limit, plus one.
    left: u64,
    limit: u64,
    what: &'static str,
}

impl<R: Read> Limited<R> {
    /// Wraps `inner`: at most `limit` bytes; `what` names the kind of input in the error.
    pub fn new(inner: R, limit: u64, what: &'static str) -> Limited<R> {
        Limited {
            inner,
            left: limit.saturating_add(1),
            limit,
            what,
        }
    }

    fn too_large(&self) -> std::io::Error {
        std::io::Error::other(TextError::TooLarge {
            limit: self.limit,
            what: self.what,
        })
    }
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(self.too_large());
        }
        let max = usize::try_from(self.left)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let n = self.inner.read(&mut buf[..max])?;
        self.left -= n as u64;
        if self.left == 0 {
            return Err(self.too_large());
        }
        Ok(n)
    }
}

/// [`read_text`] over any reader.
///
/// # Errors
/// See [`read_text`].
pub fn read_text_from(
    reader: impl Read,
    limit: u64,
    what: &'static str,
) -> Result<String, TextError> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(TextError::TooLarge { limit, what });
    }
    String::from_utf8(bytes).map_err(|e| TextError::NotText {
        at: e.utf8_error().valid_up_to(),
        what,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_stops_an_endless_reader() {
        let endless = std::io::repeat(b'x');
        let e = read_text_from(endless, 1000, "PTX module").unwrap_err();
        assert!(matches!(e, TextError::TooLarge { limit: 1000, .. }), "{e}");
        assert!(e.to_string().contains("PTX module"), "{e}");
    }

    #[test]
    fn exactly_the_limit_is_read() {
        let s = read_text_from(&b"abcd"[..], 4, "PTX module").unwrap();
        assert_eq!(s, "abcd");
        assert!(read_text_from(&b"abcde"[..], 4, "PTX module").is_err());
    }

    #[test]
    fn limited_fails_past_the_limit_only() {
        let mut out = Vec::new();
        Limited::new(&b"abcd"[..], 4, "replay file")
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, b"abcd");
        let e = Limited::new(std::io::repeat(b'x'), 1000, "replay file")
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "more than 1000 bytes (0 MiB), the most a replay file may have; is it the right file?"
        );
    }

    #[test]
    fn only_regular_files_under_the_limit_open() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.txt");
        std::fs::write(&f, "12345").unwrap();
        assert_eq!(read_text(&f, 5, "lesson file").unwrap(), "12345");
        let e = read_text(&f, 4, "lesson file").unwrap_err();
        assert!(matches!(e, TextError::TooLarge { limit: 4, .. }), "{e}");
        let e = read_text(dir.path(), 100, "lesson file").unwrap_err();
        assert!(e.to_string().contains("os error 21"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("progress.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = read_text(&link, 100, "progress file").unwrap_err();
        assert_eq!(
            e.to_string(),
            "not a regular file (it is a character device); a progress file must be a regular file"
        );
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No writer: a blocking open would never return.
        let e = read_text(&fifo, 100, "progress file").unwrap_err();
        assert!(
            matches!(
                e,
                TextError::NotRegular {
                    kind: "FIFO (named pipe)",
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn binary_bytes_are_named() {
        let e = read_text_from(&b"ab\xff\xfe"[..], 100, "PTX module").unwrap_err();
        assert!(matches!(e, TextError::NotText { at: 2, .. }), "{e}");
    }
}
