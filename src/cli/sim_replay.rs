//! `tilelab sim replay FILE`: predicted vs measured wavefronts for recorded warp requests.
//!
//! FILE is a JSON array of records (the format of `shared/hw/h200_wavefronts.json`):
//! `{"name": str, "instruction": str, "lane_byte_offsets": [32 ints], "active_mask": int
//! (optional, bit i = lane i, default all 32), "wavefronts": int (optional, measured)}`.
//!
//! `--json` prints an array with one object per record:
//! `{"name", "instruction", "active_mask", "wavefronts" (predicted), "ideal", "bank_conflicts",
//! "measured" (or null), "measured_bank_conflicts" (or null), "match" (or null)}`; "match"
//! compares wavefronts.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use tilelab::sim::bank::{SharedMemoryConfig, WarpRequest, simulate};
use tilelab::sim::instr::Instruction;

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

/// One input record.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// What the pattern is.
    pub name: String,
    /// PTX instruction.
    pub instruction: String,
    /// 32 byte offsets.
    pub lane_byte_offsets: Vec<u64>,
    /// Active lanes, bit i = lane i.
    #[serde(default)]
    pub active_mask: Option<u64>,
    /// Measured wavefronts.
    #[serde(default)]
    pub wavefronts: Option<u32>,
    /// Measured bank conflicts (optional; ignored by the comparison, reported).
    #[serde(default)]
    pub bank_conflicts: Option<u32>,
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

/// Loads and checks a record file.
pub fn load(path: &std::path::Path) -> anyhow::Result<Vec<Record>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read replay file '{}'", path.display()))?;
    let recs: Vec<Record> = serde_json::from_str(&text).with_context(|| {
        format!(
            "'{}' is not a JSON array of records {{name, instruction, lane_byte_offsets[32], active_mask?, wavefronts?}}",
            path.display()
        )
    })?;
    Ok(recs)
}

/// Predicts one record.
///
/// # Errors
/// The record's instruction, offsets or mask are invalid (message names the record).
pub fn predict(r: &Record, smem: &SharedMemoryConfig) -> anyhow::Result<Prediction> {
    let ctx = || format!("record '{}'", r.name);
    let ins = Instruction::parse(&r.instruction).with_context(ctx)?;
    let mask = match r.active_mask {
        None => u32::MAX,
        Some(m) => u32::try_from(m)
            .map_err(|_| {
                anyhow::anyhow!("active_mask {m} does not fit in 32 bits (bit i = lane i)")
            })
            .with_context(ctx)?,
    };
    let req = WarpRequest::from_slice(ins, &r.lane_byte_offsets, mask).with_context(ctx)?;
    let rep = simulate(&req, smem).with_context(ctx)?;
    let w = rep.wavefront_count();
    Ok(Prediction {
        name: r.name.clone(),
        instruction: ins.to_string(),
        active_mask: mask,
        wavefronts: w,
        ideal: rep.ideal(),
        bank_conflicts: rep.bank_conflicts(),
        measured: r.wavefronts,
        measured_bank_conflicts: r.bank_conflicts,
        matches: r.wavefronts.map(|m| m == w),
    })
}

pub fn run(a: ReplayArgs) -> anyhow::Result<ExitCode> {
    let recs = load(&a.file)?;
    let smem = SharedMemoryConfig::default();
    let preds: Vec<Prediction> = recs
        .iter()
        .map(|r| predict(r, &smem))
        .collect::<anyhow::Result<_>>()?;
    if a.json {
        out::print_json(&preds)?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = preds.iter().map(|p| p.name.len()).max().unwrap_or(4).max(4);
    println!(
        "{:width$}  {:18}  {:>9}  {:>8}  {:>5}  {:>9}",
        "name", "instruction", "predicted", "measured", "ideal", "conflicts"
    );
    let (mut with_meas, mut ok) = (0, 0);
    for p in &preds {
        if let Some(m) = p.matches {
            with_meas += 1;
            ok += m as usize;
        }
        if a.mismatches && p.matches != Some(false) {
            continue;
        }
        let meas = p.measured.map_or("-".to_string(), |m| m.to_string());
        let verdict = match p.matches {
            Some(true) => out::paint("ok", crossterm::style::Color::Green),
            Some(false) => out::paint("MISMATCH", crossterm::style::Color::Red),
            None => String::new(),
        };
        println!(
            "{:width$}  {:18}  {:>9}  {:>8}  {:>5}  {:>9}  {}",
            p.name, p.instruction, p.wavefronts, meas, p.ideal, p.bank_conflicts, verdict
        );
    }
    println!("{ok}/{with_meas} records match");
    Ok(ExitCode::SUCCESS)
}
