//! Reading a whole text input (a PTX module, a lesson, a launch file) with a size limit, so that
//! a path to `/dev/zero`, a symlink to it or a runaway pipe is a one-line error instead of a read
//! that runs until memory is gone (`tilelab ptx /dev/zero` was killed by the OOM killer, exit
//! 137, before this).

use std::io::Read;
use std::path::Path;

/// The most bytes a PTX module may have: 64 MiB (the largest fixture, FA2 d128 bm128 causal,
/// is 299,292 bytes; Triton's and nvcc's modules with line info stay far below).
pub const MAX_PTX_BYTES: u64 = 64 << 20;

/// The most bytes of a lesson file or a lesson's launch file: 4 MiB (the largest lesson,
/// `lessons/09-fa2-counts.toml`, is about 10 KB).
pub const MAX_LESSON_BYTES: u64 = 4 << 20;

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
    /// The bytes are not UTF-8 text.
    #[error("not text (invalid UTF-8 at byte {at}): a {what} is a text file; is it a binary?")]
    NotText {
        /// Byte offset of the first invalid sequence.
        at: usize,
        /// What the file should be.
        what: &'static str,
    },
}

/// Reads `path` as UTF-8 text of at most `limit` bytes; `what` names the kind of file in the
/// errors ("PTX module"). Reads at most `limit + 1` bytes, whatever the path is (a pipe or a
/// device too).
///
/// # Errors
/// [`TextError`]: the I/O error, more than `limit` bytes, or bytes that are not UTF-8.
pub fn read_text(path: &Path, limit: u64, what: &'static str) -> Result<String, TextError> {
    let file = std::fs::File::open(path)?;
    read_text_from(file, limit, what)
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
    fn binary_bytes_are_named() {
        let e = read_text_from(&b"ab\xff\xfe"[..], 100, "PTX module").unwrap_err();
        assert!(matches!(e, TextError::NotText { at: 2, .. }), "{e}");
    }
}
