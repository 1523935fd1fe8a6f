//! `tilelab sim replay FILE`: predicted vs measured wavefronts for recorded warp requests.
//!
//! FILE is a JSON array of records (the format of `shared/hw/h200_wavefronts.json`):
//! `{"name": str, "instruction": str, "lane_byte_offsets": [32 ints], "active_mask": int
//! (optional, bit i = lane i, default all 32), "wavefronts": int (optional, measured)}`.
//!
//! `--json` prints an array with one object per record:
//! `{"name", "instruction", "active_mask", "wavefronts" (predicted), "ideal", "bank_conflicts",
//! "measured" (or null), "measured_bank_conflicts" (or null), "match" (or null)}`; "match"
//! compares wavefronts, and bank conflicts too where the record has them.
//!
//! Exit status: 0 when every record with measured values matches (or none has any), 1
//! ([`super::EXIT_MISMATCH`]) when one does not, 2 for a bad file.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;
use tilelab::records::{self, Record};
use tilelab::sim::bank::{SharedMemoryConfig, simulate};

use super::out;

/// Arguments of `tilelab sim replay`.
#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// JSON file of records (see `tilelab sim replay --help`).
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
pub struct Prediction {
    name: String,
    instruction: String,
    active_mask: u32,
    wavefronts: u32,
    ideal: u32,
    bank_conflicts: u32,
    measured: Option<u32>,
    measured_bank_conflicts: Option<u32>,
    #[serde(rename = "match")]
    matches: Option<bool>,
}

/// Predicts one record.
///
/// # Errors
/// The record's instruction, offsets or mask are invalid (message names the record).
pub fn predict(r: &Record, smem: &SharedMemoryConfig) -> anyhow::Result<Prediction> {
    let req = r.request()?;
    let rep = simulate(&req, smem).with_context(|| format!("record '{}'", r.name))?;
    let w = rep.wavefront_count();
    Ok(Prediction {
        name: r.name.clone(),
        instruction: req.instruction.to_string(),
        active_mask: req.active_mask,
        wavefronts: w,
        ideal: rep.ideal(),
        bank_conflicts: rep.bank_conflicts(),
        measured: r.wavefronts,
        measured_bank_conflicts: r.bank_conflicts,
        matches: r
            .wavefronts
            .map(|m| m == w && r.bank_conflicts.is_none_or(|c| c == rep.bank_conflicts())),
    })
}

pub fn run(a: ReplayArgs) -> anyhow::Result<ExitCode> {
    let recs = records::load(&a.file)?;
    let smem = SharedMemoryConfig::default();
    let preds: Vec<Prediction> = recs
        .iter()
        .map(|r| predict(r, &smem))
        .collect::<anyhow::Result<_>>()?;
    let status = if preds.iter().any(|p| p.matches == Some(false)) {
        ExitCode::from(super::EXIT_MISMATCH)
    } else {
        ExitCode::SUCCESS
    };
    if a.json {
        out::emit_json(&preds)?;
        return Ok(status);
    }
    let width = out::column_width(preds.iter().map(|p| p.name.as_str()), 4, out::NAME_MAX);
    // Rows go out as they are made; once the reader has gone (`| head`), the rest are only
    // counted: the exit status still says whether every record matched.
    let mut o = out::Out::new();
    writeln!(
        o,
        "{:width$}  {:18}  {:>9}  {:>8}  {:>5}  {:>9}",
        "name", "instruction", "predicted", "measured", "ideal", "conflicts"
    )?;
    let (mut with_meas, mut ok) = (0, 0);
    for p in &preds {
        if let Some(m) = p.matches {
            with_meas += 1;
            ok += m as usize;
        }
        if o.is_closed() || (a.mismatches && p.matches != Some(false)) {
            continue;
        }
        let meas = p.measured.map_or("-".to_string(), |m| m.to_string());
        let verdict = match p.matches {
            Some(true) => out::paint("ok", crossterm::style::Color::Green),
            Some(false) => out::paint("MISMATCH", crossterm::style::Color::Red),
            None => String::new(),
        };
        writeln!(
            o,
            "{:width$}  {:18}  {:>9}  {:>8}  {:>5}  {:>9}  {}",
            out::clip(&p.name, out::NAME_MAX),
            p.instruction,
            p.wavefronts,
            meas,
            p.ideal,
            p.bank_conflicts,
            verdict
        )?;
    }
    if with_meas == 0 {
        writeln!(
            o,
            "{} records, none with measured wavefronts: nothing to compare",
            preds.len()
        )?;
    } else {
        writeln!(o, "{ok}/{with_meas} records match")?;
    }
    o.finish()?;
    Ok(status)
}
