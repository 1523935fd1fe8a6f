//! Read-back costs: how many shared-memory wavefronts it costs to read back what a TMA box or
//! a `wgmma` operand tile put in shared memory, with `ldmatrix` (the 8-address unit rule of
//! [`crate::sim::bank`], measured on the H200: `tests/data/h200_wavefronts.json`). One place for
//! `tilelab sim tma`, `tilelab sim wgmma` and the lessons' `tma`/`wgmma` models.
//!
//! * [`tma_ldmatrix_x4`]: every 16-row × 32-byte block of the box with one `ldmatrix.x4`
//!   (lanes `8m + r` give row `r` of matrix `m`: box row `(m % 2) * 8 + r`, chunk `m / 2`);
//! * [`tma_core_matrices`]: every 8-row × 16-byte core matrix of the box as one 8-address unit
//!   (how a `wgmma` operand is made of core matrices);
//! * [`operand_core_matrices`]: the core matrices of an operand tile's first k16 block, as its
//!   descriptor addresses them.

use crate::sim::bank::WarpRequest;
use crate::sim::instr::{Instruction, MatrixCount};
use crate::sim::stats::AccessStats;
use crate::sim::tma::TmaBox;
use crate::sim::wgmma::{K, OperandTile};

/// Wavefronts of reading 8 rows of 16 bytes as one unit (one `ldmatrix.x1` matrix, one `wgmma`
/// core matrix); `rows` are byte addresses.
pub fn eight_rows(rows: [u32; 8]) -> u32 {
    let x1 = Instruction::Ldmatrix {
        num: MatrixCount::X1,
        trans: false,
    };
    WarpRequest::new(x1, std::array::from_fn(|l| rows[l % 8]))
        .cost()
        .wavefronts
}

/// `ldmatrix.x4` over every 16-row × 32-byte block of the box (module docs); `None` when the
/// box has fewer than 16 rows or 2 chunks per row.
pub fn tma_ldmatrix_x4(b: &TmaBox) -> Option<AccessStats> {
    let cpr = b.chunks_per_row();
    if b.rows < 16 || cpr < 2 {
        return None;
    }
    Some(
        (0..b.rows - 15)
            .step_by(16)
            .flat_map(|r0| (0..cpr - 1).step_by(2).map(move |c0| (r0, c0)))
            .map(|(r0, c0)| {
                let offs = std::array::from_fn(|l| {
                    let (m, r) = (l as u32 / 8, l as u32 % 8);
                    b.chunk_address(r0 + (m % 2) * 8 + r, c0 + m / 2)
                });
                WarpRequest::new(Instruction::LDSM_X4, offs).cost()
            })
            .sum(),
    )
}

/// Every 8-row × 16-byte core matrix of the box read as one 8-address unit; `None` when the box
/// has fewer than 8 rows.
pub fn tma_core_matrices(b: &TmaBox) -> Option<AccessStats> {
    if b.rows < 8 {
        return None;
    }
    let cpr = b.chunks_per_row();
    Some(
        (0..b.rows - 7)
            .step_by(8)
            .flat_map(|r0| (0..cpr).map(move |ch| (r0, ch)))
            .map(|(r0, ch)| {
                let w = eight_rows(std::array::from_fn(|r| b.chunk_address(r0 + r as u32, ch)));
                AccessStats {
                    requests: 1,
                    wavefronts: u64::from(w),
                    ideal: 1,
                    conflicts: u64::from(w) - 1,
                }
            })
            .sum(),
    )
}

/// One core matrix of an operand tile: its first (mn, k) element, its 8 row addresses and the
/// wavefronts of reading them as one unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CoreMatrix {
    /// First M or N index.
    pub mn: u32,
    /// First K index.
    pub k: u32,
    /// Row byte addresses.
    pub rows: [u32; 8],
    /// Wavefronts ([`eight_rows`]).
    pub wavefronts: u32,
}

/// The core matrices of k-block 0 of `t` (MN in steps of 8, K in steps of 8), through its
/// descriptor.
pub fn operand_core_matrices(t: &OperandTile) -> Vec<CoreMatrix> {
    let d = t.descriptor(0);
    let mut v = Vec::new();
    for mn in (0..t.mn).step_by(8) {
        for k in (0..K).step_by(8) {
            let rows = d.core_matrix_rows(t.major, mn, k);
            v.push(CoreMatrix {
                mn,
                k,
                rows,
                wavefronts: eight_rows(rows),
            });
        }
    }
    v
}
