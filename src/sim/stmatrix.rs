//! `stmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16` (PTX ISA "Warp-level matrix store
//! instruction: stmatrix", sm_90; SASS `STSM.16.M88[.2|.4]`, `STSM.16.MT88[.2|.4]`): the inverse
//! of `ldmatrix`. Lanes `8m + r` give the 16-byte address of row `r` of matrix `m` (lanes 0-7,
//! 0-15 or 0-31), and every lane *sends* its registers: register `m`, half `h` of lane `l` is
//! written to the element [`super::ldmatrix::fragment`] names for the same `(l, m, h)` —
//! `(row l/4, col 2*(l%4) + h)`, transposed by `.trans`. This is how an epilogue writes an
//! `mma`/`wgmma` accumulator tile (converted to 16-bit) to shared memory, 16 bytes per row.
//!
//! The instruction itself (SASS name, cost, execution) is [`super::instr::Instruction::Stmatrix`]
//! and [`super::exec`]. The placement and the wavefronts (one unit per 8x8 matrix, as for
//! `ldmatrix`) are checked on an H200 in `tests/data/h200_stmatrix_*.json`.

use super::instr::MatrixCount;
use super::ldmatrix::{self, MatrixElem};

/// The element lane `lane` writes from register `reg`, half `half` (0 = low 16 bits): the same
/// table as `ldmatrix` (PTX ISA: "stmatrix ... the fragment layout is that of ldmatrix").
pub fn fragment(trans: bool, lane: u32, reg: u32, half: u32) -> MatrixElem {
    ldmatrix::fragment(trans, lane, reg, half)
}

/// The full PTX name, e.g. `stmatrix.sync.aligned.m8n8.x4.trans.shared.b16`.
pub fn ptx(num: MatrixCount, trans: bool) -> String {
    format!(
        "stmatrix.sync.aligned.m8n8.x{}{}.shared.b16",
        num.count(),
        if trans { ".trans" } else { "" }
    )
}

/// Byte address each (lane, register, half) is written to, for row addresses `lane_byte_offsets`
/// (lane `8m + r` = row `r` of matrix `m`): `offs[8m + row] + 2 * col`.
pub fn destination(
    trans: bool,
    lane_byte_offsets: &[u32; 32],
    lane: u32,
    reg: u32,
    half: u32,
) -> u32 {
    let e = fragment(trans, lane, reg, half);
    lane_byte_offsets[ldmatrix::address_lane(e.matrix, e.row) as usize] + 2 * e.col
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_5_writes_row_1_cols_2_3() {
        let offs = std::array::from_fn(|l| l as u32 * 16);
        // Plain: lane 5 (g=1, t=1) register 0 -> matrix 0 row 1 cols 2, 3 (address lane 1).
        assert_eq!(destination(false, &offs, 5, 0, 0), 16 + 4);
        assert_eq!(destination(false, &offs, 5, 0, 1), 16 + 6);
        // .trans: lane 5 register 2 half 1 -> matrix 2 row 3 col 1 (address lane 19).
        assert_eq!(destination(true, &offs, 5, 2, 1), 19 * 16 + 2);
    }
}
