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

/// The 237 records measured on an H200 (`tests/data/h200_wavefronts.json`, its provenance
/// inside), built into the binary; read with [`measured_h200`] (or [`parse`]).
pub const MEASURED_H200_JSON: &str = include_str!("../../../../tests/data/h200_wavefronts.json");

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
    /// The record as a [`WarpRequest`] (see [`RecordRef::request`]).
    ///
    /// # Errors
    /// Unknown instruction, not 32 offsets, offsets or mask too large; the message names the record.
    pub fn request(&self) -> anyhow::Result<WarpRequest> {
        self.view().request()
    }

    /// The record borrowed.
    pub fn view(&self) -> RecordRef<'_> {
        RecordRef {
            name: &self.name,
            instruction: &self.instruction,
            lane_byte_offsets: &self.lane_byte_offsets,
            active_mask: self.active_mask,
            wavefronts: self.wavefronts,
            bank_conflicts: self.bank_conflicts,
            global_addresses: self.global_addresses.as_deref(),
        }
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

/// A [`Record`] borrowed: what [`stream`] hands on, from the bytes it has read (or from a
/// [`Record`], [`Record::view`]) without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordRef<'a> {
    /// What the pattern is.
    pub name: &'a str,
    /// PTX instruction as written.
    pub instruction: &'a str,
    /// Byte offsets into shared memory, lane 0 first (32 in a valid record).
    pub lane_byte_offsets: &'a [u64],
    /// Active lanes, bit i = lane i; absent = all 32.
    pub active_mask: Option<u64>,
    /// Measured wavefronts.
    pub wavefronts: Option<u32>,
    /// Measured bank conflicts.
    pub bank_conflicts: Option<u32>,
    /// `cp.async` only: global source byte addresses, lane 0 first.
    pub global_addresses: Option<&'a [u64]>,
}

impl RecordRef<'_> {
    /// The record as a [`WarpRequest`].
    ///
    /// # Errors
    /// Unknown instruction, not 32 offsets, offsets or mask too large; the message names the record.
    pub fn request(&self) -> anyhow::Result<WarpRequest> {
        let ins = Instruction::parse(self.instruction)
            .with_context(|| format!("record '{}'", self.name))?;
        self.request_as(ins)
    }

    /// [`Self::request`] for `ins`, the instruction [`Self::instruction`] names, already parsed
    /// (a reader that meets the same name many times parses it once).
    ///
    /// # Errors
    /// Not 32 offsets, offsets or mask too large, `global_addresses` not 32 values or given for
    /// an instruction other than `cp.async`; the message names the record.
    pub fn request_as(&self, ins: Instruction) -> anyhow::Result<WarpRequest> {
        let ctx = || format!("record '{}'", self.name);
        let mask = match self.active_mask {
            None => u32::MAX,
            Some(m) => u32::try_from(m)
                .map_err(|_| {
                    anyhow::anyhow!("active_mask {m} does not fit in 32 bits (bit i = lane i)")
                })
                .with_context(ctx)?,
        };
        let mut req =
            WarpRequest::from_slice(ins, self.lane_byte_offsets, mask).with_context(ctx)?;
        if let Some(g) = self.global_addresses {
            if !matches!(ins, Instruction::CpAsync(_)) {
                return Err(anyhow::anyhow!(
                    "global_addresses is for cp.async records only (this one is {ins}); remove it"
                ))
                .with_context(ctx);
            }
            let g: [u64; 32] = g
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

    /// The record owned.
    pub fn to_record(&self) -> Record {
        Record {
            name: self.name.to_string(),
            instruction: self.instruction.to_string(),
            lane_byte_offsets: self.lane_byte_offsets.to_vec(),
            active_mask: self.active_mask,
            wavefronts: self.wavefronts,
            bank_conflicts: self.bank_conflicts,
            global_addresses: self.global_addresses.map(<[u64]>::to_vec),
        }
    }
}

/// A record read by [`quick`]: its strings borrowed from the input, its lane arrays from
/// [`Lanes`].
struct Quick<'a> {
    name: &'a str,
    instruction: &'a str,
    lanes: &'a Lanes,
    active_mask: Option<u64>,
    wavefronts: Option<u32>,
    bank_conflicts: Option<u32>,
    has_global: bool,
}

/// Where [`quick`] writes a record's lane arrays (kept by the reader, so that a record's
/// arrays are not moved about).
struct Lanes {
    offsets: [u64; 32],
    global: [u64; 32],
}

/// The byte at `p`, or 0 past the end (a byte that [`quick`] never accepts, so that a record
/// running past the end is left to `serde_json`).
#[inline(always)]
fn byte(b: &[u8], p: usize) -> u8 {
    b.get(p).copied().unwrap_or(0)
}

/// Moves `p` past JSON whitespace.
#[inline(always)]
fn skip_blank(b: &[u8], p: &mut usize) {
    while matches!(byte(b, *p), b' ' | b'\n' | b'\r' | b'\t') {
        *p += 1;
    }
}

/// The JSON number at `p` if it is an integer written as digits only (no sign, no leading
/// zero, no fraction or exponent) that fits in a `u64`; moves `p` past it.
#[inline(always)]
fn plain_uint(b: &[u8], p: &mut usize) -> Option<u64> {
    let start = *p;
    // A number of up to 7 digits (every lane offset below 10^7), from the eight bytes that
    // start it, all at once.
    if let Some(&word) = b.get(start..).and_then(|r| r.first_chunk::<8>()) {
        let w = u64::from_le_bytes(word);
        let digits = digit_run(w);
        if (1..8).contains(&digits) {
            // Tested on `w`, not on `word`: a byte of `word` read back from memory stalled.
            if digits > 1 && w as u8 == b'0' {
                return None;
            }
            if matches!((w >> (8 * digits)) as u8, b'.' | b'e' | b'E') {
                return None;
            }
            *p = start + digits;
            // The digits' values moved to the high bytes, zeros (leading digits 0) below them;
            // what followed them (and any borrow from it) shifted out.
            let v = w.wrapping_sub(0x3030_3030_3030_3030) << (8 * (8 - digits));
            return Some(eight_digits(v));
        }
    }
    let first = byte(b, *p).wrapping_sub(b'0');
    if first > 9 {
        return None;
    }
    *p += 1;
    let mut n = u64::from(first);
    loop {
        let d = byte(b, *p).wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if first == 0 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d))?;
        *p += 1;
    }
    if matches!(byte(b, *p), b'.' | b'e' | b'E') {
        return None;
    }
    Some(n)
}

/// How many of the eight bytes of `w` (the first in the low byte) are ASCII digits before the
/// first that is not (8: all are).
#[inline(always)]
fn digit_run(w: u64) -> usize {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    // A byte is marked unless its high nibble is 3 and adding 6 keeps it so ('0'..='9'). Only
    // a byte above 0xF9 carries into the next, and the first byte that is not a digit is
    // marked whatever comes after it.
    let marked = ((w & HIGH) ^ ZEROS) | ((w.wrapping_add(0x0606_0606_0606_0606) & HIGH) ^ ZEROS);
    (marked.trailing_zeros() / 8) as usize
}

/// The number written by eight decimal digits, one per byte of `v` (values 0 to 9), the most
/// significant in the low byte (the SWAR conversion of simdjson).
#[inline(always)]
fn eight_digits(v: u64) -> u64 {
    // Each byte: 10 x its digit + the next digit; the even bytes hold the four pairs.
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    const PAIRS: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    ((v & PAIRS)
        .wrapping_mul(MUL1)
        .wrapping_add(((v >> 16) & PAIRS).wrapping_mul(MUL2)))
        >> 32
}

/// The bytes of the JSON string at `p` (its opening quote) if it has no escapes or control
/// characters; moves `p` past it.
#[inline(always)]
fn plain_bytes<'a>(b: &'a [u8], p: &mut usize) -> Option<&'a [u8]> {
    if byte(b, *p) != b'"' {
        return None;
    }
    let start = *p + 1;
    let mut end = start;
    loop {
        match byte(b, end) {
            b'"' => break,
            b'\\' | 0..0x20 => return None,
            _ => end += 1,
        }
    }
    *p = end + 1;
    Some(&b[start..end])
}

/// [`plain_bytes`] as a string, if they are UTF-8.
#[inline(always)]
fn plain_str<'a>(b: &'a [u8], p: &mut usize) -> Option<&'a str> {
    std::str::from_utf8(plain_bytes(b, p)?).ok()
}

/// [`Record`]'s fields, in its order; their first letters differ.
const FIELDS: [&[u8]; 7] = [
    b"name",
    b"instruction",
    b"lane_byte_offsets",
    b"active_mask",
    b"wavefronts",
    b"bank_conflicts",
    b"global_addresses",
];

/// Which of [`FIELDS`] the JSON string at `p` is, if it is one written without escapes; moves
/// `p` past it.
#[inline(always)]
fn field(b: &[u8], p: &mut usize) -> Option<usize> {
    if byte(b, *p) != b'"' {
        return None;
    }
    let i = match byte(b, *p + 1) {
        b'n' => 0,
        b'i' => 1,
        b'l' => 2,
        b'a' => 3,
        b'w' => 4,
        b'b' => 5,
        b'g' => 6,
        _ => return None,
    };
    let k = FIELDS[i];
    let (key, rest) = b.get(*p + 1..)?.split_at_checked(k.len())?;
    if key != k || rest.first() != Some(&b'"') {
        return None;
    }
    *p += k.len() + 2;
    Some(i)
}

/// Reads the JSON array at `p` into `out` if it holds exactly 32 integers that [`plain_uint`]
/// takes; moves `p` past it.
#[inline(always)]
fn plain_lanes(b: &[u8], p: &mut usize, out: &mut [u64; 32]) -> Option<()> {
    if byte(b, *p) != b'[' {
        return None;
    }
    *p += 1;
    for (i, v) in out.iter_mut().enumerate() {
        skip_blank(b, p);
        *v = plain_uint(b, p)?;
        skip_blank(b, p);
        if byte(b, *p) != if i == 31 { b']' } else { b',' } {
            return None;
        }
        *p += 1;
    }
    Some(())
}

/// The record at the start of `b` and the bytes it takes, if it is written the usual way: an
/// object of [`Record`]'s fields, each once, with the three required ones; strings without
/// escapes or control characters; numbers that [`plain_uint`] takes (the counts below 2^32);
/// lane arrays of exactly 32 of them. `None` for anything else, valid or not, and for a record
/// that runs past the end of `b`: `serde_json` then reads it as a [`Record`]. What this
/// accepts, `serde_json` reads as the same [`Record`] (`tests/model_props.rs` and the tests
/// below check it); it saves `serde_json`'s per-integer work, which was most of the time of a
/// `sim replay` of a large file (docs/perf-cpu.md).
fn quick<'a>(b: &'a [u8], lanes: &'a mut Lanes) -> Option<(Quick<'a>, usize)> {
    if byte(b, 0) != b'{' {
        return None;
    }
    let mut p = 1;
    let (mut name, mut instruction) = (None, None);
    let (mut active_mask, mut wavefronts, mut bank_conflicts) = (None, None, None);
    // Bit i: field i was seen.
    let mut seen = 0u32;
    loop {
        skip_blank(b, &mut p);
        let i = field(b, &mut p)?;
        if seen >> i & 1 != 0 {
            return None;
        }
        seen |= 1 << i;
        skip_blank(b, &mut p);
        if byte(b, p) != b':' {
            return None;
        }
        p += 1;
        skip_blank(b, &mut p);
        let p = &mut p;
        match i {
            0 => name = Some(plain_str(b, p)?),
            1 => instruction = Some(plain_str(b, p)?),
            2 => plain_lanes(b, p, &mut lanes.offsets)?,
            3 => active_mask = Some(plain_uint(b, p)?),
            4 => wavefronts = Some(u32::try_from(plain_uint(b, p)?).ok()?),
            5 => bank_conflicts = Some(u32::try_from(plain_uint(b, p)?).ok()?),
            _ => plain_lanes(b, p, &mut lanes.global)?,
        }
        skip_blank(b, p);
        match byte(b, *p) {
            b',' => *p += 1,
            b'}' => {
                *p += 1;
                break;
            }
            _ => return None,
        }
    }
    if seen & 0b111 != 0b111 {
        return None;
    }
    let q = Quick {
        name: name?,
        instruction: instruction?,
        lanes,
        active_mask,
        wavefronts,
        bank_conflicts,
        has_global: seen >> 6 & 1 != 0,
    };
    Some((q, p))
}

/// One record as read: by [`quick`], or by `serde_json` as a [`Record`].
enum Parsed<'a> {
    Quick(Quick<'a>),
    Owned(Record),
}

impl Parsed<'_> {
    fn view(&self) -> RecordRef<'_> {
        match self {
            Parsed::Quick(q) => RecordRef {
                name: q.name,
                instruction: q.instruction,
                lane_byte_offsets: &q.lanes.offsets,
                active_mask: q.active_mask,
                wavefronts: q.wavefronts,
                bank_conflicts: q.bank_conflicts,
                global_addresses: q.has_global.then_some(&q.lanes.global[..]),
            },
            Parsed::Owned(r) => r.view(),
        }
    }
}

/// The record at the start of `bytes` and how many bytes it takes; `None` when it runs past
/// the end of `bytes`. Read by [`quick`], or else by `serde_json` as a [`Record`], whose value,
/// error or end of input is then the answer.
fn parse_at<'a>(
    bytes: &'a [u8],
    lanes: &'a mut Lanes,
) -> Result<Option<(Parsed<'a>, usize)>, serde_json::Error> {
    if let Some((q, used)) = quick(bytes, lanes) {
        return Ok(Some((Parsed::Quick(q), used)));
    }
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<Record>();
    match values.next() {
        Some(Ok(rec)) => Ok(Some((Parsed::Owned(rec), values.byte_offset()))),
        Some(Err(e)) if !e.is_eof() => Err(e),
        _ => Ok(None),
    }
}

/// How a replay file's errors name the record: an object, not Rust's `struct Record`.
const RECORD_SHAPES: &[(&str, &str)] = &[(
    "Record",
    "a record object {\"name\": ..., \"instruction\": ..., \"lane_byte_offsets\": [...]}",
)];

/// The record that is all of `bytes` (as [`parse_at`], where the input ends after it).
fn parse_whole<'a>(bytes: &'a [u8], lanes: &'a mut Lanes) -> Result<Parsed<'a>, serde_json::Error> {
    if let Some((q, used)) = quick(bytes, lanes)
        && used == bytes.len()
    {
        return Ok(Parsed::Quick(q));
    }
    serde_json::from_slice::<Record>(bytes).map(Parsed::Owned)
}

/// The most bytes read for one record, counting the text before it (whitespace, a separator, the
/// envelope's other fields): 64 MiB. Bounds the memory a record takes and how long a reader
/// follows input that never completes one (`/dev/zero`, a pipe of endless garbage).
pub const MAX_RECORD_BYTES: usize = 64 << 20;

/// What a replay file must hold, for error messages.
const FORMAT: &str = "a JSON array of records {name, instruction, lane_byte_offsets[32], active_mask?, wavefronts?, bank_conflicts?, global_addresses[32]? (cp.async only)} (or an object whose \"records\" field is one)";

/// Reads records one at a time from `path` and hands each to `f`, in file order, holding one
/// record in memory at a time; returns how many there were. The file is either a JSON array of
/// records or an object with a `"records"` array (its other fields, such as `"provenance"`,
/// must be valid JSON and are skipped). The path must be a regular file of at most
/// [`crate::textfile::MAX_REPLAY_BYTES`] ([`crate::textfile::open_regular`]: a FIFO or a device is
/// an error at once); a record that does not complete within [`MAX_RECORD_BYTES`] is an error.
/// ([`stream_from`] takes any reader, a pipe too.)
///
/// Each record is read straight from the bytes read and handed on borrowed: a record written
/// the usual way (plain strings and integers, 32 lanes) by a scan that allocates nothing
/// (`quick`), any other by `serde_json` as a [`Record`] (several times faster from the bytes
/// than from a reader), so values and error messages are those of `serde_json`'s reading.
///
/// # Errors
/// An unreadable path, malformed JSON, a record over the limit (the message names the file,
/// the record's index and byte offset, and the format), or the first error `f` returns (as
/// it is).
pub fn stream(
    path: &std::path::Path,
    f: impl FnMut(RecordRef<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<u64> {
    stream_path(path, f, None)
}

/// [`stream`], also handing back the JSON text of the file's top-level `"provenance"` field
/// (`{"provenance": {...}, "records": [...]}`, the form `tilelab verify --save-measured`
/// writes; [`crate::measured::provenance`]): `None` for a bare array or an object without one.
///
/// # Errors
/// Those of [`stream`]; a `"provenance"` field that appears twice.
pub fn stream_with_provenance(
    path: &std::path::Path,
    f: impl FnMut(RecordRef<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<(u64, Option<String>)> {
    let mut kept = None;
    let n = stream_path(path, f, Some(&mut kept))?;
    // The scanner validated the field as JSON, which is UTF-8.
    Ok((n, kept.map(|b| String::from_utf8_lossy(&b).into_owned())))
}

/// [`stream`], keeping the `"provenance"` field's bytes in `keep` when it is given.
fn stream_path(
    path: &std::path::Path,
    f: impl FnMut(RecordRef<'_>) -> anyhow::Result<()>,
    keep: Option<&mut Option<Vec<u8>>>,
) -> anyhow::Result<u64> {
    use crate::textfile::{Limited, MAX_REPLAY_BYTES, TextError, open_regular};
    const WHAT: &str = "replay file";
    let file = match open_regular(path, MAX_REPLAY_BYTES, WHAT) {
        Ok(f) => f,
        // A directory would otherwise be reported as a malformed record file.
        Err(TextError::Io(e)) if e.kind() == std::io::ErrorKind::IsADirectory => anyhow::bail!(
            "cannot read replay file '{}': it is a directory; give a JSON file of records such as tests/data/h200_wavefronts.json",
            crate::text::path(path)
        ),
        Err(e) => {
            return Err(anyhow::Error::new(e))
                .with_context(|| format!("cannot read replay file '{}'", crate::text::path(path)));
        }
    };
    scan(
        Limited::new(file, MAX_REPLAY_BYTES, WHAT),
        MAX_RECORD_BYTES,
        f,
        keep,
    )
    .map_err(|e| match e {
        StreamError::Callback(e) => e,
        StreamError::Format(e) => {
            e.context(format!("'{}' is not {FORMAT}", crate::text::path(path)))
        }
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
    f: impl FnMut(RecordRef<'_>) -> anyhow::Result<()>,
) -> Result<u64, StreamError> {
    stream_limited(reader, MAX_RECORD_BYTES, f)
}

/// [`stream_from`] with a record limit of `limit` bytes instead of [`MAX_RECORD_BYTES`].
fn stream_limited(
    reader: impl std::io::Read,
    limit: usize,
    f: impl FnMut(RecordRef<'_>) -> anyhow::Result<()>,
) -> Result<u64, StreamError> {
    scan(reader, limit, f, None)
}

/// The field of an object-form file that [`stream_with_provenance`] keeps.
const PROVENANCE_FIELD: &str = "provenance";

/// [`stream_limited`], keeping the bytes of the object's [`PROVENANCE_FIELD`] in `keep` when it
/// is given (then that field may appear once only).
fn scan(
    reader: impl std::io::Read,
    limit: usize,
    mut f: impl FnMut(RecordRef<'_>) -> anyhow::Result<()>,
    mut keep: Option<&mut Option<Vec<u8>>>,
) -> Result<u64, StreamError> {
    let mut s = Scanner {
        r: reader,
        buf: Vec::new(),
        end: 0,
        lanes: Lanes {
            offsets: [0; 32],
            global: [0; 32],
        },
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
                        .map_err(|e| {
                            bad(format!(
                                "field '{key}' at byte {}: {}",
                                s.at(),
                                crate::text::serde_words(&e.to_string(), RECORD_SHAPES)
                            ))
                        })?;
                    if key == PROVENANCE_FIELD
                        && let Some(kept) = keep.as_deref_mut()
                    {
                        if kept.is_some() {
                            return Err(bad("the \"provenance\" field appears twice"));
                        }
                        *kept = Some(s.buf[s.mark..s.pos].to_vec());
                    }
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
        v.push(r.to_record());
        Ok(())
    })?;
    Ok(v)
}

/// The records of a replay file's text, each read as a `T` by `serde_json` (a [`Record`], or
/// another view of one such as `lessons check`'s hardware records): a JSON array of them, or
/// an object whose `"records"` field is one (its other fields, such as `"provenance"`, are
/// skipped; `"records"` may appear once). For text already in memory, such as
/// [`MEASURED_H200_JSON`]; a file is read with [`stream`] or [`load`].
///
/// # Errors
/// Malformed JSON, neither form, no or two `"records"` fields, a record that is not a `T`
/// (`serde_json`'s message, with its line and column).
pub fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Result<Vec<T>, serde_json::Error> {
    serde_json::from_str::<Either<T>>(text).map(|e| e.0)
}

/// The records of [`MEASURED_H200_JSON`].
///
/// # Errors
/// Those of [`parse`] (none for the file built in: `tests/verify_logic.rs` reads it).
pub fn measured_h200() -> Result<Vec<Record>, serde_json::Error> {
    parse(MEASURED_H200_JSON)
}

/// What [`parse`] reads: the records of either form.
struct Either<T>(Vec<T>);

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Either<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::de::DeserializeOwned> Visitor<'de> for V<T> {
            type Value = Either<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON array of records or an object whose \"records\" field is one")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Either<T>, A::Error> {
                let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(r) = seq.next_element()? {
                    v.push(r);
                }
                Ok(Either(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Either<T>, A::Error> {
                let mut records = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == "records" {
                        if records.is_some() {
                            return Err(de::Error::duplicate_field("records"));
                        }
                        records = Some(map.next_value::<Vec<T>>()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                records
                    .map(Either)
                    .ok_or_else(|| de::Error::missing_field("records"))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// Bytes read at a time.
const CHUNK: usize = 256 << 10;

fn bad(msg: impl std::fmt::Display + Send + Sync + 'static) -> StreamError {
    StreamError::Format(anyhow::anyhow!("{msg}"))
}

/// A window onto the input: `buf[pos..end]` is unread; `buf[mark..end]` is the record being read
/// (with the text before it), which may not exceed [`MAX_RECORD_BYTES`].
struct Scanner<R> {
    r: R,
    /// `buf[..end]` holds input; the rest is room for the next read (zeroed once, when the
    /// buffer grows, and not again).
    buf: Vec<u8>,
    end: usize,
    /// The lane arrays of the record being read ([`quick`]).
    lanes: Lanes,
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
        if self.end - self.mark > self.limit {
            return Err(bad(format!(
                "no complete record within {} MiB after byte {}",
                self.limit >> 20,
                self.offset + self.mark as u64
            )));
        }
        // Drop what was read before the current record.
        if self.mark >= CHUNK {
            self.buf.copy_within(self.mark..self.end, 0);
            self.offset += self.mark as u64;
            self.pos -= self.mark;
            self.end -= self.mark;
            self.mark = 0;
        }
        let end = self.end;
        if self.buf.len() < end + CHUNK {
            self.buf.resize(end + CHUNK, 0);
        }
        let n = loop {
            match self.r.read(&mut self.buf[end..end + CHUNK]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(StreamError::Format(
                        anyhow::Error::new(e).context(format!("read error at byte {}", self.at())),
                    ));
                }
            }
        };
        self.end += n;
        self.eof = n == 0;
        Ok(n > 0)
    }

    /// The next byte that is not JSON whitespace (not consumed), or `None` at the end.
    fn skip_ws(&mut self) -> Result<Option<u8>, StreamError> {
        loop {
            while let Some(&b) = self.buf[..self.end].get(self.pos) {
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
        let Some(&first) = self.buf[..self.end].get(self.pos) else {
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
            let rest = &self.buf[self.pos..self.end];
            let skip = if escaped {
                0
            } else {
                rest.iter()
                    .position(|&b| CLASS[b as usize] & want != 0)
                    .unwrap_or(rest.len())
            };
            self.pos += skip;
            let Some(&b) = self.buf[..self.end].get(self.pos) else {
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

    /// Parses the record at `pos` (= `mark`), moves `pos` past it, counts it and hands it to
    /// `f`. Parsed straight from the buffer ([`parse_at`]); only a record that runs past the
    /// bytes read so far (once per chunk) is first delimited by [`Self::value_end`], which reads
    /// on until it ends, and then parsed.
    fn record(
        &mut self,
        f: &mut impl FnMut(RecordRef<'_>) -> anyhow::Result<()>,
        count: &mut u64,
    ) -> Result<(), StreamError> {
        let index = *count;
        let at = self.offset + self.mark as u64;
        let fail = |e: serde_json::Error| {
            bad(format!(
                "record {index} (byte {at}): {}",
                crate::text::serde_words(&e.to_string(), RECORD_SHAPES)
            ))
        };
        let used = match parse_at(&self.buf[self.pos..self.end], &mut self.lanes).map_err(fail)? {
            Some((rec, used)) => {
                *count += 1;
                f(rec.view()).map_err(StreamError::Callback)?;
                used
            }
            None => {
                self.value_end()?;
                let rec =
                    parse_whole(&self.buf[self.mark..self.pos], &mut self.lanes).map_err(fail)?;
                *count += 1;
                return f(rec.view()).map_err(StreamError::Callback);
            }
        };
        self.pos += used;
        Ok(())
    }

    /// Reads the array at `pos` (`[` next), handing each element to `f` as a [`RecordRef`].
    fn array(
        &mut self,
        f: &mut impl FnMut(RecordRef<'_>) -> anyhow::Result<()>,
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
            self.record(f, count)?;
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
            v.push(r.name.to_string());
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

    /// [`parse`] reads both forms as the stream reads them, into any record type, and says
    /// what is wrong with text in neither.
    #[test]
    fn parse_reads_both_forms() {
        let arr = format!("[{}, {}]", rec("a"), rec("b"));
        let env = format!(
            r#"{{"provenance": {{"card": "H200", "runs": [1, {{"x": "]"}}]}}, "records": {arr}, "note": null}}"#
        );
        for text in [&arr, &env] {
            let got: Vec<Record> = parse(text).unwrap();
            let names: Vec<&str> = got.iter().map(|r| r.name.as_str()).collect();
            assert_eq!(names, ["a", "b"], "{text}");
            assert_eq!(parse::<serde_json::Value>(text).unwrap().len(), 2);
        }
        for (text, needle) in [
            (
                r#"{"provenance": {}}"#.to_string(),
                "missing field `records`",
            ),
            (
                format!(r#"{{"records": {arr}, "records": []}}"#),
                "duplicate field `records`",
            ),
            (r#"{"records": {}}"#.to_string(), "invalid type: map"),
            ("7".to_string(), "a JSON array of records or an object"),
            (
                format!("[{}]", rec("a").replace("\"name\"", "\"nom\"")),
                "unknown field `nom`",
            ),
        ] {
            let e = parse::<Record>(&text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
        // The built-in records, provenance inside.
        assert_eq!(measured_h200().unwrap().len(), 237);
        assert!(MEASURED_H200_JSON.contains("\"provenance\""));
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
            (&b"[[[["[..], b'[', "record 0 (byte 1): found an array"),
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

    /// Integers of every length up to 21 digits, followed by what may follow a number (with
    /// eight bytes to read at once or fewer): read as `str::parse` reads them, where JSON
    /// allows them and `u64` holds them.
    #[test]
    fn plain_integers_are_read_as_str_parse_reads_them() {
        let mut nums: Vec<String> = Vec::new();
        for len in 1..=21 {
            for lead in ['1', '9', '0'] {
                let rest = (1..len).map(|i| char::from(b'0' + (i * 7 % 10) as u8));
                nums.push(std::iter::once(lead).chain(rest).collect());
            }
        }
        for n in [
            "18446744073709551615",
            "18446744073709551616",
            "9999999",
            "10000000",
        ] {
            nums.push(n.to_string());
        }
        for n in &nums {
            for end in [
                "",
                ",",
                "]",
                " ",
                "}",
                ".5",
                "e1",
                "E1",
                "x",
                "-",
                ",0000000000",
            ] {
                let text = format!("{n}{end}");
                let mut p = 0;
                let got = plain_uint(text.as_bytes(), &mut p);
                let leading_zero = n.len() > 1 && n.starts_with('0');
                let goes_on = matches!(end.as_bytes().first(), Some(b'.' | b'e' | b'E'));
                let want = if leading_zero || goes_on {
                    None
                } else {
                    n.parse::<u64>().ok()
                };
                assert_eq!(got, want, "{text}");
                if got.is_some() {
                    assert_eq!(p, n.len(), "{text}");
                }
            }
        }
    }

    /// Records spelt the usual way and otherwise: the reader gives what `serde_json` gives (the
    /// record, or its error message), and the scan without `serde_json` ([`quick`]) takes the
    /// usual spellings and leaves the others.
    #[test]
    fn every_spelling_is_read_as_serde_json_reads_it() {
        let l = |v: &str| vec![v; 32].join(",");
        let rec = |head: &str, lanes: &str, tail: &str| {
            format!(
                r#"{{{head}"instruction":"ld.shared.b32","lane_byte_offsets":[{lanes}]{tail}}}"#
            )
        };
        let name = r#""name":"n","#;
        let g = format!(r#","global_addresses":[{}]"#, l("4096"));
        let cases: Vec<(String, bool)> = vec![
            (rec(name, &l("4"), ""), true),
            (rec(name, &l("0"), ""), true),
            (rec(name, &l("1234567"), ""), true),
            (rec(name, &l("12345678"), ""), true),
            (rec(name, &l("18446744073709551615"), ""), true),
            (rec(name, &l("18446744073709551616"), ""), false),
            (rec(name, &l("01"), ""), false),
            (rec(name, &l("-0"), ""), false),
            (rec(name, &l("1.0"), ""), false),
            (rec(name, &l("1e2"), ""), false),
            (rec(name, &l("1E2"), ""), false),
            (rec(name, &l(" 4 "), ""), true),
            (rec(name, &l("\t\n4\r"), ""), true),
            (rec(name, &l("\"4\""), ""), false),
            (rec(name, &l("null"), ""), false),
            (rec(name, &vec!["4"; 31].join(","), ""), false),
            (rec(name, &vec!["4"; 33].join(","), ""), false),
            (rec(name, &l("4"), r#","active_mask":4294967295"#), true),
            (rec(name, &l("4"), r#","active_mask":4294967296"#), true),
            (rec(name, &l("4"), r#","active_mask":null"#), false),
            (
                rec(
                    name,
                    &l("4"),
                    r#","wavefronts":4294967295,"bank_conflicts":0"#,
                ),
                true,
            ),
            (rec(name, &l("4"), r#","wavefronts":4294967296"#), false),
            (rec(name, &l("4"), r#","bank_conflicts":-1"#), false),
            (rec(name, &l("4"), &g), true),
            (rec(name, &l("4"), &g.repeat(2)), false),
            (rec(name, &l("4"), r#","name":"again""#), false),
            (rec(name, &l("4"), r#","extra":1"#), false),
            (rec(name, &l("4"), ","), false),
            (rec(r#""na\u006de":"n","#, &l("4"), ""), false),
            (rec(r#""name":"a\"b","#, &l("4"), ""), false),
            (rec(r#""name":"é","#, &l("4"), ""), true),
            (rec("\"name\":\"a\u{1}b\",", &l("4"), ""), false),
            (rec(r#""name":{"a":1},"#, &l("4"), ""), false),
            (rec(r#" "name" : "n" , "#, &l("4"), " "), true),
            (rec("", &l("4"), ""), false),
            ("{}".to_string(), false),
        ];
        for (text, usual) in cases {
            let mut lanes = Lanes {
                offsets: [0; 32],
                global: [0; 32],
            };
            let took = quick(text.as_bytes(), &mut lanes).map(|(_, used)| used);
            assert_eq!(took, usual.then_some(text.len()), "{text}");
            let want = serde_json::from_str::<Record>(&text).map_err(|e| {
                format!(
                    "record 0 (byte 1): {}",
                    crate::text::serde_words(&e.to_string(), RECORD_SHAPES)
                )
            });
            let mut got = Vec::new();
            let r = stream_from(format!("[{text}]").as_bytes(), |r| {
                got.push(r.to_record());
                Ok(())
            });
            match (want, r) {
                (Ok(want), Ok(1)) => assert_eq!(got, [want], "{text}"),
                (Err(want), Err(StreamError::Format(e))) => {
                    assert_eq!(format!("{e:#}"), want, "{text}")
                }
                (want, r) => panic!("{text}: {want:?} / {r:?}"),
            }
        }
    }
}
