//! The replay record format: one warp shared-memory request per record, as in
//! `shared/hw/h200_wavefronts.json` and `tests/data/*.json`.
//!
//! ```json
//! {"name": "v4.stride2", "instruction": "ld.shared.v4.b32",
//!  "lane_byte_offsets": [0, 32, 64, ...32 values],
//!  "active_mask": 4294967295,        // optional, bit i = lane i, default all 32
//!  "wavefronts": 8,                  // optional, measured
//!  "bank_conflicts": 4}              // optional, measured
//! ```

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::sim::bank::WarpRequest;
use crate::sim::instr::Instruction;

/// The 237 records measured on an H200 (`tests/data/h200_wavefronts.json`, a copy of
/// `shared/hw/h200_wavefronts.json`), built into the binary.
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
        WarpRequest::from_slice(ins, &self.lane_byte_offsets, mask).with_context(ctx)
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
        }
    }
}

/// Reads a JSON array of records.
///
/// # Errors
/// Unreadable file or malformed JSON (the message names the file and the expected format).
pub fn load(path: &std::path::Path) -> anyhow::Result<Vec<Record>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read replay file '{}'", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "'{}' is not a JSON array of records {{name, instruction, lane_byte_offsets[32], active_mask?, wavefronts?, bank_conflicts?}}",
            path.display()
        )
    })
}
