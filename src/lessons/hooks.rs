//! The hook for claims about whole kernels: instruction counts of tiled GEMM and
//! FlashAttention-2, global-memory traffic of FlashAttention v1 vs v2, occupancy.
//!
//! Lessons state these claims as data (`[[model]]` in a lesson file: a kind, parameters, the
//! expected numbers from `shared/seeds/NOTES.md`). The model that answers them is the counts
//! work (`tilelab sim counts | traffic | occupancy`, `src/sim/counts.rs` and friends on the
//! `counts` branch). Until it is connected, [`counts_model`] answers `None` and every such claim
//! is reported as *pending* by [`super::run::check_lesson`], by `tilelab lessons check` and in
//! the TUI's counters pane, never as passed.
//!
//! # Connecting the counts model
//! Replace the body of [`counts_model`] with a call into `crate::sim::counts` that reads
//! `claim.params` (strings, see each lesson's `[[model]]` tables) and returns, for every key of
//! `claim.expect`, the model's value. Key names used by the built-in lessons:
//!
//! * `counts`: `LDSM.16.M88.4`, `LDSM.16.MT88.4`, `HMMA.16816.F32`, `exec_outside`,
//!   `exec_unmasked`, `exec_mean`; params `program` (`gemm` | `fa2-torch` | `fa2-triton`), `m`,
//!   `n`, `k`, `warps`, `split` (`rows`), `d`, `bm`, `bn`, `copies`, `batch`, `heads`, `seq`,
//!   `causal`;
//! * `traffic`: `qo_read_gb`, `o_write_gb`, `blocks`; params `loop_order` (`v1` | `v2`), `batch`,
//!   `heads`, `seq`, `bc`, `d`, `elem_bytes`;
//! * `occupancy`: `blocks_per_sm`, `occupancy_pct`; params `arch`, `smem_bytes`, `threads`.

use std::collections::BTreeMap;

/// What part of the counts model a claim needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum ModelKind {
    /// Static or dynamic instruction counts by SASS mnemonic (`tilelab sim counts`).
    Counts,
    /// Global-memory bytes read and written (`tilelab sim traffic`).
    Traffic,
    /// Resident blocks per SM and theoretical occupancy (`tilelab sim occupancy`).
    Occupancy,
}

impl ModelKind {
    /// From `counts`, `traffic` or `occupancy`.
    pub fn parse(s: &str) -> Option<ModelKind> {
        Some(match s {
            "counts" => ModelKind::Counts,
            "traffic" => ModelKind::Traffic,
            "occupancy" => ModelKind::Occupancy,
            _ => return None,
        })
    }

    /// The lesson-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Counts => "counts",
            ModelKind::Traffic => "traffic",
            ModelKind::Occupancy => "occupancy",
        }
    }
}

/// A claim for the counts model, as a lesson states it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ModelClaim {
    /// Which model.
    pub kind: ModelKind,
    /// What the numbers are ("PyTorch FA2, one copy of the loop body, per warp").
    pub label: String,
    /// Where they come from (`seed 000`).
    pub source: String,
    /// Model parameters, as strings (`d = "128"`, `program = "fa2-torch"`).
    pub params: BTreeMap<String, String>,
    /// Expected values by key (SASS mnemonic, `read_gb`, `occupancy_pct`, …).
    pub expect: BTreeMap<String, f64>,
    /// Allowed relative difference (0 = exact).
    pub tolerance: f64,
}

/// The model's values, by the same keys as [`ModelClaim::expect`].
pub type ModelAnswer = BTreeMap<String, f64>;

/// **The counts hook.** Answers a [`ModelClaim`] with the counts model, or `None` while that
/// model is not connected to lessons (today: always `None`; see the module docs for how to
/// connect it). `Some(Err(_))` is for parameters the model rejects.
pub fn counts_model(claim: &ModelClaim) -> Option<Result<ModelAnswer, String>> {
    let _ = claim;
    None
}
