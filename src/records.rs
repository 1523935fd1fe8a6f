//! The replay record format: one warp shared-memory request per record, as in
//! `tests/data/h200_wavefronts.json` and `tests/data/*.json`.
//!
//! ```json
//! {"name": "v4.stride2", "instruction": "ld.shared.v4.b32",
//!  "lane_byte_offsets": [0, 32, 64, ...32 values],
//!  "active_mask": 4294967295,        // optional, bit i = lane i, default all 32
//!  "wavefronts": 8,                  // optional, measured
//!  "bank_conflicts": 4,              // optional, measured
//!  "global_addresses": [4096, ...]}  // cp.async only: each lane's global source address
//! ```
//!
//! A `cp.async.ca` record without `global_addresses` is not modelled (its cost depends on the
//! 128-byte lines of its sources; [`crate::sim::bank::NotModelled`]), nor is any `cp.async.cg`.

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::sim::bank::WarpRequest;
use crate::sim::instr::Instruction;

/// The 237 records measured on an H200 (`tests/data/h200_wavefronts.json`, a copy of
/// `tests/data/h200_wavefronts.json`), built into the binary.
pub const MEASURED_H200_JSON: &str = include_str!("../tests/data/h200_wavefronts.json");

/// One recorded warp request.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// What the pattern is.
    pub name: String,
    /// PTX instruction, e.g. `ld.shared.v4.b32`, `ldmatrix.x4.trans`.
    pub instruction: String,
    /// 32 byte offsets into shared memory, lane 0 first.
    pub lane_byte_offsets: Vec<u64>,
    /// Active lanes, bit i = lane i; absent = all 32.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_mask: Option<u64>,
    /// Measured wavefronts (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wavefronts: Option<u32>,
    /// Measured bank conflicts (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_conflicts: Option<u32>,
    /// `cp.async` only: 32 global source byte addresses, lane 0 first
    /// ([`WarpRequest::global_addrs`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_addresses: Option<Vec<u64>>,
}

impl Record {
    /// The record as a [`WarpRequest`].
    ///
    /// # Errors
    /// Unknown instruction, not 32 offsets, offsets or mask too large; the message names the record.
    pub fn request(&self) -> anyhow::Result<WarpRequest> {
        let ctx = || format!("record '{}'", self.name);
        let ins = Instruction::parse(&self.instruction).with_context(ctx)?;
        let mask = match self.active_mask {
            None => u32::MAX,
            Some(m) => u32::try_from(m)
                .map_err(|_| {
                    anyhow::anyhow!("active_mask {m} does not fit in 32 bits (bit i = lane i)")
                })
                .with_context(ctx)?,
        };
        let mut req =
            WarpRequest::from_slice(ins, &self.lane_byte_offsets, mask).with_context(ctx)?;
        if let Some(g) = &self.global_addresses {
            let g: [u64; 32] = g
                .as_slice()
                .try_into()
                .map_err(|_| {
                    anyhow::anyhow!(
                        "global_addresses has {} values; give exactly 32 (one per lane)",
                        g.len()
                    )
                })
                .with_context(ctx)?;
            req.global_addrs = Some(Box::new(g));
        }
        Ok(req)
    }

    /// A record from a request (no measurements).
    pub fn from_request(name: impl Into<String>, r: &WarpRequest) -> Record {
        Record {
            name: name.into(),
            instruction: r.instruction.to_string(),
            lane_byte_offsets: r.lane_byte_offsets.iter().map(|&o| o as u64).collect(),
            active_mask: (r.active_mask != u32::MAX).then_some(r.active_mask as u64),
            wavefronts: None,
            bank_conflicts: None,
            global_addresses: r.global_addrs.as_ref().map(|g| g.to_vec()),
        }
    }
}

/// The most bytes read for one record, counting the text before it (whitespace, a separator, the
/// envelope's other fields): 64 MiB. Bounds the memory a record takes and how long a reader
/// follows input that never completes one (`/dev/zero`, a pipe of endless garbage).
pub const MAX_RECORD_BYTES: usize = 64 << 20;

/// What a replay file must hold, for error messages.
const FORMAT: &str = "a JSON array of records {name, instruction, lane_byte_offsets[32], active_mask?, wavefronts?, bank_conflicts?} (or an object whose \"records\" field is one)";

/// Reads records one at a time from `path` and hands each to `f`, in file order, holding one
/// record in memory at a time; returns how many there were. The file is either a JSON array of
/// records or an object with a `"records"` array (its other fields, such as `"provenance"`,
/// must be valid JSON and are skipped). Any readable path works, a pipe or a device too: input
/// that does not complete a record within [`MAX_RECORD_BYTES`] is an error.
///
/// The array is split into elements by a scan of brackets and strings, and each element is
/// parsed by `serde_json` from its bytes (several times faster than parsing from a reader).
///
/// # Errors
/// An unreadable path, malformed JSON, a record over the limit (the message names the file,
/// the record's index and byte offset, and the format), or the first error `f` returns (as
/// it is).
pub fn stream(
    path: &std::path::Path,
    f: impl FnMut(Record) -> anyhow::Result<()>,
) -> anyhow::Result<u64> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read replay file '{}'", path.display()))?;
    // A directory opens on Unix and fails only at the first read, which would be reported as
    // a malformed record file.
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        anyhow::bail!(
            "cannot read replay file '{}': it is a directory; give a JSON file of records such as tests/data/h200_wavefronts.json",
            path.display()
        );
    }
    stream_from(file, f).map_err(|e| match e {
        StreamError::Callback(e) => e,
        StreamError::Format(e) => e.context(format!("'{}' is not {FORMAT}", path.display())),
    })
}

/// Why [`stream_from`] stopped.
#[derive(Debug)]
pub enum StreamError {
    /// The input is not a record file, could not be read, or ran over [`MAX_RECORD_BYTES`].
    Format(anyhow::Error),
    /// The callback's error.
    Callback(anyhow::Error),
}

/// [`stream`] over any reader (read in 256 KiB chunks).
///
/// # Errors
/// See [`StreamError`].
pub fn stream_from(
    reader: impl std::io::Read,
    f: impl FnMut(Record) -> anyhow::Result<()>,
) -> Result<u64, StreamError> {
    stream_limited(reader, MAX_RECORD_BYTES, f)
}

/// [`stream_from`] with a record limit of `limit` bytes instead of [`MAX_RECORD_BYTES`].
fn stream_limited(
    reader: impl std::io::Read,
    limit: usize,
    mut f: impl FnMut(Record) -> anyhow::Result<()>,
) -> Result<u64, StreamError> {
    let mut s = Scanner {
        r: reader,
        buf: Vec::with_capacity(CHUNK),
        pos: 0,
        mark: 0,
        offset: 0,
        eof: false,
        limit,
    };
    let mut count = 0;
    match s.skip_ws()? {
        Some(b'[') => s.array(&mut f, &mut count)?,
        Some(b'{') => {
            s.pos += 1;
            let mut seen = false;
            if s.skip_ws()? == Some(b'}') {
                return Err(bad("the object has no \"records\" field"));
            }
            loop {
                if s.skip_ws()? != Some(b'"') {
                    return Err(bad(format!("expected a field name at byte {}", s.at())));
                }
                s.mark = s.pos;
                s.value_end()?;
                let key: String = serde_json::from_slice(&s.buf[s.mark..s.pos])
                    .map_err(|e| bad(format!("field name at byte {}: {e}", s.at())))?;
                if s.skip_ws()? != Some(b':') {
                    return Err(bad(format!("expected ':' at byte {}", s.at())));
                }
                s.pos += 1;
                if key == "records" {
                    if seen {
                        return Err(bad("the \"records\" field appears twice"));
                    }
                    seen = true;
                    if s.skip_ws()? != Some(b'[') {
                        return Err(bad(format!(
                            "\"records\" is not an array (byte {})",
                            s.at()
                        )));
                    }
                    s.array(&mut f, &mut count)?;
                } else {
                    s.skip_ws()?;
                    s.mark = s.pos;
                    s.value_end()?;
                    serde_json::from_slice::<serde::de::IgnoredAny>(&s.buf[s.mark..s.pos])
                        .map_err(|e| bad(format!("field '{key}' at byte {}: {e}", s.at())))?;
                }
                s.mark = s.pos;
                match s.skip_ws()? {
                    Some(b',') => s.pos += 1,
                    Some(b'}') => {
                        s.pos += 1;
                        break;
                    }
                    _ => return Err(bad(format!("expected ',' or '}}' at byte {}", s.at()))),
                }
            }
            if !seen {
                return Err(bad("the object has no \"records\" field"));
            }
        }
        Some(_) => return Err(bad(format!("expected '[' or '{{' at byte {}", s.at()))),
        None => return Err(bad("the input is empty")),
    }
    s.mark = s.pos;
    if s.skip_ws()?.is_some() {
        return Err(bad(format!(
            "unexpected text after the records at byte {}",
            s.at()
        )));
    }
    Ok(count)
}

/// Reads all records of `path` (see [`stream`]).
///
/// # Errors
/// Those of [`stream`].
pub fn load(path: &std::path::Path) -> anyhow::Result<Vec<Record>> {
    let mut v = Vec::new();
    stream(path, |r| {
        v.push(r);
        Ok(())
    })?;
    Ok(v)
}

/// Bytes read at a time.
const CHUNK: usize = 256 << 10;

fn bad(msg: impl std::fmt::Display + Send + Sync + 'static) -> StreamError {
    StreamError::Format(anyhow::anyhow!("{msg}"))
}

/// A window onto the input: `buf[pos..]` is unread; `buf[mark..]` is the record being read
/// (with the text before it), which may not exceed [`MAX_RECORD_BYTES`].
struct Scanner<R> {
    r: R,
    buf: Vec<u8>,
    pos: usize,
    mark: usize,
    /// Input offset of `buf[0]`.
    offset: u64,
    eof: bool,
    /// Most bytes in `buf[mark..]` before a read is refused.
    limit: usize,
}

impl<R: std::io::Read> Scanner<R> {
    /// Input offset of `pos`, for messages.
    fn at(&self) -> u64 {
        self.offset + self.pos as u64
    }

    /// Reads another chunk; false at the end of the input.
    fn fill(&mut self) -> Result<bool, StreamError> {
        if self.eof {
            return Ok(false);
        }
        if self.buf.len() - self.mark > self.limit {
            return Err(bad(format!(
                "no complete record within {} MiB after byte {}",
                self.limit >> 20,
                self.offset + self.mark as u64
            )));
        }
        // Drop what was read before the current record.
        if self.mark >= CHUNK {
            self.buf.drain(..self.mark);
            self.offset += self.mark as u64;
            self.pos -= self.mark;
            self.mark = 0;
        }
        let len = self.buf.len();
        self.buf.resize(len + CHUNK, 0);
        let n = loop {
            match self.r.read(&mut self.buf[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.buf.truncate(len);
                    return Err(StreamError::Format(
                        anyhow::Error::new(e).context(format!("read error at byte {}", self.at())),
                    ));
                }
            }
        };
        self.buf.truncate(len + n);
        self.eof = n == 0;
        Ok(n > 0)
    }

    /// The next byte that is not JSON whitespace (not consumed), or `None` at the end.
    fn skip_ws(&mut self) -> Result<Option<u8>, StreamError> {
        loop {
            while let Some(&b) = self.buf.get(self.pos) {
                if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                    return Ok(Some(b));
                }
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Moves `pos` past the JSON value that starts there (by brackets and strings only; the
    /// value's own syntax is checked when it is parsed).
    fn value_end(&mut self) -> Result<(), StreamError> {
        /// Bytes that end a scalar (1), or that matter inside brackets (2) or strings (4).
        const CLASS: [u8; 256] = {
            let mut t = [0u8; 256];
            t[b',' as usize] = 1;
            t[b' ' as usize] = 1;
            t[b'\n' as usize] = 1;
            t[b'\r' as usize] = 1;
            t[b'\t' as usize] = 1;
            t[b']' as usize] = 1 | 2;
            t[b'}' as usize] = 1 | 2;
            t[b'[' as usize] = 2;
            t[b'{' as usize] = 2;
            t[b'"' as usize] = 2 | 4;
            t[b'\\' as usize] = 4;
            t
        };
        let mut depth = 0usize;
        let mut in_str = false;
        let mut escaped = false;
        let Some(&first) = self.buf.get(self.pos) else {
            return Err(bad(format!(
                "the input ends where a value was expected, at byte {}",
                self.at()
            )));
        };
        let scalar = !matches!(first, b'{' | b'[' | b'"');
        loop {
            let want = if scalar {
                1
            } else if in_str {
                4
            } else {
                2
            };
            // Skip to the next byte of interest.
            let rest = &self.buf[self.pos..];
            let skip = if escaped {
                0
            } else {
                rest.iter()
                    .position(|&b| CLASS[b as usize] & want != 0)
                    .unwrap_or(rest.len())
            };
            self.pos += skip;
            let Some(&b) = self.buf.get(self.pos) else {
                if !self.fill()? {
                    return if scalar {
                        Ok(())
                    } else {
                        Err(bad(format!(
                            "the input ends inside a value at byte {}",
                            self.at()
                        )))
                    };
                }
                continue;
            };
            if scalar {
                return Ok(());
            }
            self.pos += 1;
            if in_str {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_str = false;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                continue;
            }
            match b {
                b'"' => in_str = true,
                b'{' | b'[' => depth += 1,
                _ => {
                    // '}' or ']'
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Parses the record at `pos` (= `mark`) and moves `pos` past it. Parsed straight from the
    /// buffer; only a record that runs past the bytes read so far (once per chunk) is first
    /// delimited by [`Self::value_end`], which reads on until it ends, and then parsed.
    fn record(&mut self, index: u64) -> Result<Record, StreamError> {
        let fail = |e: serde_json::Error, at: u64| bad(format!("record {index} (byte {at}): {e}"));
        let at = self.offset + self.mark as u64;
        let mut values =
            serde_json::Deserializer::from_slice(&self.buf[self.pos..]).into_iter::<Record>();
        match values.next() {
            Some(Ok(rec)) => {
                self.pos += values.byte_offset();
                Ok(rec)
            }
            Some(Err(e)) if !e.is_eof() => Err(fail(e, at)),
            _ => {
                self.value_end()?;
                serde_json::from_slice(&self.buf[self.mark..self.pos]).map_err(|e| fail(e, at))
            }
        }
    }

    /// Reads the array at `pos` (`[` next), handing each element to `f` as a [`Record`].
    fn array(
        &mut self,
        f: &mut impl FnMut(Record) -> anyhow::Result<()>,
        count: &mut u64,
    ) -> Result<(), StreamError> {
        self.pos += 1;
        self.mark = self.pos;
        if self.skip_ws()? == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            let Some(_) = self.skip_ws()? else {
                return Err(bad(format!(
                    "the input ends inside the array at byte {}",
                    self.at()
                )));
            };
            // The record starts here (`fill` keeps `buf[mark..]` in place).
            self.mark = self.pos;
            let rec = self.record(*count)?;
            *count += 1;
            f(rec).map_err(StreamError::Callback)?;
            self.mark = self.pos;
            match self.skip_ws()? {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(_) => {
                    return Err(bad(format!(
                        "expected ',' or ']' after record {} at byte {}",
                        *count - 1,
                        self.at()
                    )));
                }
                None => {
                    return Err(bad(format!(
                        "the input ends inside the array at byte {}",
                        self.at()
                    )));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(name: &str) -> String {
        let offs: Vec<String> = (0..32).map(|l| (l * 4).to_string()).collect();
        format!(
            r#"{{"name":"{name}","instruction":"ld.shared.b32","lane_byte_offsets":[{}],"wavefronts":1}}"#,
            offs.join(",")
        )
    }

    fn names(input: &[u8]) -> Result<Vec<String>, String> {
        let mut v = Vec::new();
        stream_from(input, |r| {
            v.push(r.name);
            Ok(())
        })
        .map_err(|e| match e {
            StreamError::Format(e) | StreamError::Callback(e) => format!("{e:#}"),
        })?;
        Ok(v)
    }

    #[test]
    fn arrays_and_envelopes_stream_in_order() {
        let arr = format!("[{}, {}\n,{}]", rec("a"), rec("b\\\"]}"), rec("c"));
        assert_eq!(names(arr.as_bytes()).unwrap(), ["a", "b\"]}", "c"]);
        assert_eq!(names(b" [ ] ").unwrap(), Vec::<String>::new());
        let env = format!(
            r#"{{"provenance": {{"card": "H200", "runs": [1, 2, {{"x": "]"}}]}}, "records": [{}]}}"#,
            rec("p")
        );
        assert_eq!(names(env.as_bytes()).unwrap(), ["p"]);
    }

    #[test]
    fn malformed_input_is_an_error_naming_the_place() {
        for (input, needle) in [
            ("", "empty"),
            ("\0\0\0", "expected '[' or '{' at byte 0"),
            ("[1]", "record 0"),
            (
                &format!("[{} {}]", rec("a"), rec("b")),
                "expected ',' or ']' after record 0",
            ),
            (&format!("[{},]", rec("a")), "record 1"),
            (&format!("[{}", rec("a")), "ends inside the array"),
            (&format!("[{}] x", rec("a")), "unexpected text"),
            (r#"{"provenance": 1}"#, "no \"records\""),
            (r#"{"records": {}}"#, "not an array"),
            (r#"{"records": [], "records": []}"#, "twice"),
            (r#"{"p": [}, "records": []}"#, "field 'p'"),
            (r#"[{"name": "a"#, "ends inside a value"),
        ] {
            let e = names(input.as_bytes()).unwrap_err();
            assert!(e.contains(needle), "{input:?}: {e}");
        }
    }

    /// An endless input that never completes a record (`/dev/zero` gives NUL bytes, a pipe may
    /// give endless blanks, one endless string or endless nesting) ends in an error after at
    /// most the limit plus two chunks, and holds no more than that in memory.
    #[test]
    fn endless_input_ends_in_an_error() {
        struct Endless {
            head: &'static [u8],
            fill: u8,
            read: usize,
        }
        impl std::io::Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = self.head.get(self.read + i).copied().unwrap_or(self.fill);
                }
                self.read += buf.len();
                Ok(buf.len())
            }
        }
        for (head, fill, needle) in [
            (&b""[..], 0u8, "expected '['"),
            (&b""[..], b' ', "no complete record within 1 MiB"),
            (
                &b"[{\"name\": \""[..],
                b'x',
                "no complete record within 1 MiB",
            ),
            // Nested arrays are no record: refused at the first element, before the limit.
            (
                &b"[[[["[..],
                b'[',
                "record 0 (byte 1): invalid type: sequence",
            ),
        ] {
            let mut e = Endless {
                head,
                fill,
                read: 0,
            };
            // The limit of 1 MiB instead of 64 keeps the test short; the code path is the same.
            let r = stream_limited(&mut e, 1 << 20, |_| Ok(()));
            let Err(StreamError::Format(err)) = r else {
                panic!("{head:?}: {r:?}")
            };
            assert!(format!("{err:#}").contains(needle), "{head:?}: {err:#}");
            assert!(e.read <= (1 << 20) + 2 * CHUNK, "read {} bytes", e.read);
        }
    }

    #[test]
    fn the_callback_error_stops_the_stream_as_it_is() {
        let arr = format!("[{}, {}]", rec("a"), rec("b"));
        let mut n = 0;
        let r = stream_from(arr.as_bytes(), |_| {
            n += 1;
            anyhow::bail!("record refused")
        });
        assert!(matches!(r, Err(StreamError::Callback(e)) if e.to_string() == "record refused"));
        assert_eq!(n, 1);
    }
}
