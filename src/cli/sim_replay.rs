//! `tilelab sim replay FILE`: predicted vs measured wavefronts for recorded warp requests.
//!
//! FILE is a JSON array of records (the format of `tests/data/h200_wavefronts.json`):
//! `{"name": str, "instruction": str, "lane_byte_offsets": [32 ints], "active_mask": int
//! (optional, bit i = lane i, default all 32), "wavefronts": int (optional, measured),
//! "bank_conflicts": int (optional, measured), "global_addresses": [32 ints] (cp.async only: each
//! lane's global source address)}`, or an object whose `"records"` field is such an
//! array (other fields, e.g. `"provenance"`, are skipped). Records are read, predicted and
//! printed one at a time, so a file of any size up to `textfile::MAX_REPLAY_BYTES` (1 GiB)
//! works in bounded memory; FILE must be a regular file (a FIFO or a device such as
//! `/dev/zero` is an error at once); a bad record stops the run at that record.
//!
//! `--json` prints an array with one object per record (with `--mismatches`, per record that
//! does not match):
//! `{"name", "instruction", "active_mask", "wavefronts" (predicted), "ideal", "bank_conflicts",
//! "measured" (or null), "measured_bank_conflicts" (or null), "match" (or null), "not_modelled"
//! (null, or why the model has no count), "sass_wavefronts" (`[lo, hi]`: for a `cp.async.ca`
//! with spread sources, the bounds on ncu's SASS-attributed wavefronts; else null)}`; "match"
//! compares wavefronts, and bank conflicts too where the record has them.
//!
//! A request the model cannot cost (`cp.async.cg`; `cp.async.ca` without `global_addresses`; the
//! L1TEX count of a `cp.async.ca` with spread sources) gets no numbers: its row says `not
//! modelled` (predicted, ideal and conflicts `-`, JSON `null`), followed for spread sources by
//! the bounds on ncu's SASS-attributed count; the summary gives the reason, and it is neither a
//! match nor a mismatch (a record's `wavefronts` is the L1TEX count).
//!
//! Exit status: 0 when every record with measured values that the model covers matches (or none
//! has any), 1 ([`super::EXIT_MISMATCH`]) when one does not, 2 for a bad file.

use std::borrow::Cow;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;
use tilelab::measured::records::{self, RecordRef};
use tilelab::sim::bank::{NotModelled, SharedMemoryConfig};
use tilelab::sim::instr::Instruction;

use super::out;

/// Arguments of `tilelab sim replay`.
#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// JSON file of records: an array of {name, instruction, lane_byte_offsets[32], active_mask?, wavefronts?, bank_conflicts?, global_addresses[32]? (cp.async only)}, as in tests/data/h200_wavefronts.json; a regular file of at most 1 GiB (1073741824 bytes).
    pub file: PathBuf,
    /// Print a JSON array of per-record predictions instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Print only the records that do not match and the summary line.
    #[arg(long)]
    pub mismatches: bool,
}

/// One output record.
#[derive(Serialize, Debug)]
pub struct Prediction<'a> {
    name: &'a str,
    instruction: Cow<'a, str>,
    active_mask: u32,
    wavefronts: Option<u32>,
    ideal: Option<u32>,
    bank_conflicts: Option<u32>,
    measured: Option<u32>,
    measured_bank_conflicts: Option<u32>,
    #[serde(rename = "match")]
    matches: Option<bool>,
    not_modelled: Option<String>,
    /// `cp.async.ca` with spread sources: bounds `[lowest, highest]` on ncu's SASS-attributed
    /// wavefronts (`SassBounds`); `null` otherwise.
    sass_wavefronts: Option<[u32; 2]>,
    /// The reason as the summary groups it (spread sources: one line for all bounds).
    #[serde(skip)]
    summary_reason: Option<String>,
}

/// The instruction names a file has used, as written, with the instruction each names and its
/// canonical name (what rows print): a file names a few instructions many times, and parsing
/// and `Display` cost more than the model. Keeps the first [`Self::MAX`] names.
#[derive(Default, Debug)]
pub struct Instructions(Vec<(String, Instruction, String)>);

impl Instructions {
    /// Most names kept.
    const MAX: usize = 64;
}

/// Predicts one record (validated first, then [`WarpRequest::cost`](tilelab::sim::bank::WarpRequest::cost)).
///
/// # Errors
/// The record's instruction, offsets or mask are invalid (message names the record).
pub fn predict<'a>(
    r: RecordRef<'a>,
    smem: &SharedMemoryConfig,
    known: &'a mut Instructions,
) -> anyhow::Result<Prediction<'a>> {
    let hit = known.0.iter().position(|(w, ..)| w == r.instruction);
    let req = match hit {
        Some(i) => r.request_as(known.0[i].1)?,
        None => r.request()?,
    };
    req.validate(smem)
        .with_context(|| format!("record '{}'", out::clip(r.name, out::NAME_MAX)))?;
    let hit = match hit {
        None if known.0.len() < Instructions::MAX => {
            let canonical = req.instruction.to_string();
            known
                .0
                .push((r.instruction.to_string(), req.instruction, canonical));
            Some(known.0.len() - 1)
        }
        hit => hit,
    };
    let known: &'a Instructions = known;
    let instruction = match hit {
        Some(i) => Cow::Borrowed(known.0[i].2.as_str()),
        None => Cow::Owned(req.instruction.to_string()),
    };
    let cost = req.cost();
    let not_modelled = cost.not_modelled.map(|w| w.to_string());
    let sass_wavefronts = match cost.not_modelled {
        Some(NotModelled::CpAsyncSpreadSources(b)) => Some([b.lo, b.hi]),
        _ => None,
    };
    let summary_reason = match (cost.not_modelled, &not_modelled) {
        (Some(NotModelled::CpAsyncSpreadSources(_)), _) => Some(
            "not modelled: a unit of this cp.async.ca reads from several 128-byte global lines or two lanes read the same bytes, and the L1TEX count then depends on the cache state; each row gives the bounds on ncu's SASS-attributed count (docs/wavefront-model.md)".to_string(),
        ),
        (_, why) => why.clone(),
    };
    let c = cost.modelled();
    let c = c.as_ref().ok();
    Ok(Prediction {
        name: r.name,
        instruction,
        active_mask: req.active_mask,
        wavefronts: c.map(|c| c.wavefronts),
        ideal: c.map(|c| c.ideal),
        bank_conflicts: c.map(|c| c.bank_conflicts()),
        measured: r.wavefronts,
        measured_bank_conflicts: r.bank_conflicts,
        matches: c.and_then(|c| {
            r.wavefronts.map(|m| {
                m == c.wavefronts && r.bank_conflicts.is_none_or(|b| b == c.bank_conflicts())
            })
        }),
        not_modelled,
        sass_wavefronts,
        summary_reason,
    })
}

/// Appends `n` spaces.
fn pad(s: &mut String, n: usize) {
    const SPACES: &str = "                                                                ";
    let mut n = n;
    while n > 0 {
        let k = n.min(SPACES.len());
        s.push_str(&SPACES[..k]);
        n -= k;
    }
}

/// Width of the table's name column, in characters ([`out::NAME_MAX`]): every measured record
/// name in `tests/data/` fits; longer names are clipped ([`out::clip`]). Fixed, because rows
/// are printed as records are read.
const NAME_COLUMN: usize = out::NAME_MAX;

/// `v` in decimal, written into `buf` (10 digits hold any `u32`).
fn decimal(mut v: u32, buf: &mut [u8; 10]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&buf[i..]).unwrap_or("?")
}

/// Runs `tilelab sim replay`: records are read, predicted and printed one at a time (memory
/// does not grow with the file), the output buffered.
///
/// # Errors
/// A bad file or record (after the rows before it were printed), or a failed write.
pub fn run(a: ReplayArgs) -> anyhow::Result<ExitCode> {
    let smem = SharedMemoryConfig::default();
    // Rows go out as they are made; once the reader has gone (`| head`), the rest are only
    // counted: the exit status still says whether every record matched.
    let mut o = out::Out::new();
    let width = NAME_COLUMN;
    let (mut with_meas, mut ok, mut shown, mut measured_any) = (0u64, 0u64, 0u64, 0u64);
    let mut unmodelled: std::collections::BTreeMap<String, u64> = Default::default();
    let mut row = String::new();
    let mut json_row: Vec<u8> = Vec::new();
    // The header goes out with the first good record, so that a file whose first record is
    // bad prints nothing but the error.
    let header = |o: &mut out::Out| -> std::io::Result<()> {
        if a.json {
            o.write_all(b"[")
        } else {
            writeln!(
                o,
                "{:width$}  {:18}  {:>9}  {:>8}  {:>5}  {:>9}",
                "name", "instruction", "predicted", "measured", "ideal", "conflicts"
            )
        }
    };
    let mut started = false;
    // The verdicts, painted once.
    let (v_ok, v_bad, v_nm) = (
        out::paint("ok", out::GOOD),
        out::paint("MISMATCH", out::BAD),
        out::paint("not modelled", tilelab::palette::HIGHLIGHT),
    );
    let mut known = Instructions::default();
    let total = records::stream(&a.file, |r| {
        let p = predict(r, &smem, &mut known)?;
        if !started {
            header(&mut o)?;
            started = true;
        }
        if let Some(m) = p.matches {
            with_meas += 1;
            ok += m as u64;
        }
        measured_any += p.measured.is_some() as u64;
        if let Some(why) = &p.summary_reason {
            *unmodelled.entry(why.clone()).or_default() += 1;
        }
        if o.is_closed() || (a.mismatches && p.matches != Some(false)) {
            return Ok(());
        }
        if a.json {
            // Serialized into `row` first and written once: `serde_json` writes a record in
            // dozens of pieces, each a call through the output's layers.
            json_row.clear();
            json_row.extend_from_slice(if shown == 0 { b"\n" } else { b",\n" });
            serde_json::to_writer(&mut json_row, &p)?;
            o.write_all(&json_row)?;
            shown += 1;
            return Ok(());
        }
        let verdict = match p.matches {
            Some(true) => v_ok.as_str(),
            Some(false) => v_bad.as_str(),
            None if p.not_modelled.is_some() => v_nm.as_str(),
            None => "",
        };
        // One row built by hand (padding through `format!` costs more than the model), one
        // write, no allocation.
        row.clear();
        let name = out::clip(p.name, width);
        row.push_str(&name);
        pad(&mut row, width + 2 - name.chars().count().min(width));
        row.push_str(&p.instruction);
        // 18 characters hold every name but cp.async's (up to 28), whose rows shift right: a
        // wider column would push every row past 120 characters.
        pad(&mut row, 20 - p.instruction.len().min(18));
        for (v, w) in [
            (p.wavefronts, 9),
            (p.measured, 8),
            (p.ideal, 5),
            (p.bank_conflicts, 9),
        ] {
            let mut digits = [0u8; 10];
            let v = match v {
                Some(v) => decimal(v, &mut digits),
                None => "-",
            };
            pad(&mut row, w - v.len().min(w));
            row.push_str(v);
            row.push_str("  ");
        }
        row.push_str(verdict);
        if let Some([lo, hi]) = p.sass_wavefronts {
            row.push_str(&if lo == hi {
                format!(" (SASS-attributed: {lo})")
            } else {
                format!(" (SASS-attributed: {lo}..={hi})")
            });
        }
        row.push('\n');
        o.write_all(row.as_bytes())?;
        Ok(())
    })?;
    let status = if ok < with_meas {
        ExitCode::from(super::EXIT_MISMATCH)
    } else {
        ExitCode::SUCCESS
    };
    if !started {
        header(&mut o)?;
    }
    if a.json {
        o.write_all(b"\n]\n")?;
        o.finish()?;
        return Ok(status);
    }
    for (why, n) in &unmodelled {
        writeln!(o, "{}: {why}", out::plural(*n, "record"))?;
    }
    if with_meas == 0 && measured_any > 0 {
        writeln!(
            o,
            "{}, {measured_any} with measured wavefronts, none of them costed by the model: nothing to compare",
            out::plural(total as u64, "record")
        )?;
    } else if with_meas == 0 {
        writeln!(
            o,
            "{}, none with measured wavefronts: nothing to compare",
            out::plural(total as u64, "record")
        )?;
    } else {
        writeln!(o, "{ok}/{with_meas} records match")?;
    }
    o.finish()?;
    Ok(status)
}
