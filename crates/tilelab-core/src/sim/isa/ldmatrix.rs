//! `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16` (PTX ISA §9.7.14.5.15): which lanes
//! give row addresses, which element each lane/register/half receives, and execution against a
//! [`crate::sim::smem::SharedMemory`] (a thin use of [`crate::sim::exec`], which also runs `stmatrix` with this table).
//!
//! The fragment table, as (lane 32, reg r, half h) -> (matrix, row, col), b16 elements:
//!
//! ```text
//!   plain:   (matrix r, row lane/4,         col 2*(lane%4) + h)
//!   .trans:  (matrix r, row 2*(lane%4) + h, col lane/4)
//! ```
//! where "row" is the memory row whose 16-byte address lane `8r + row` supplied and h = 0 is the
//! low 16 bits of the register: groupID = lane/4 selects the row and threadID_in_group = lane%4
//! the column pair (swapped by `.trans`). Measured on the H200 (the H200 measurements, tests/data/h200_wavefronts.json).

/// Coordinates of one b16 element of an 8x8 matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct MatrixElem {
    /// Which matrix (0..num), = destination register index.
    pub matrix: u32,
    /// Row within the matrix (0..8): the memory row whose address lane `8*matrix + row` gave.
    pub row: u32,
    /// Column within the matrix (0..8), in b16 elements.
    pub col: u32,
}

/// The element that `lane` receives in register `reg`, half `half` (0 = low 16 bits).
///
/// # Panics
/// Never for `lane < 32`, `half < 2`; `reg` is taken as the matrix index unchecked.
pub fn fragment(trans: bool, lane: u32, reg: u32, half: u32) -> MatrixElem {
    let (g, t) = (lane / 4, lane % 4);
    if trans {
        MatrixElem {
            matrix: reg,
            row: 2 * t + half,
            col: g,
        }
    } else {
        MatrixElem {
            matrix: reg,
            row: g,
            col: 2 * t + half,
        }
    }
}

/// Inverse of [`fragment`]: the (lane, half) holding `(row, col)` of a matrix.
pub fn owner(trans: bool, row: u32, col: u32) -> (u32, u32) {
    if trans {
        (col * 4 + row / 2, row % 2)
    } else {
        (row * 4 + col / 2, col % 2)
    }
}

/// The lane that supplies the address of `row` of `matrix` (`8*matrix + row`).
pub fn address_lane(matrix: u32, row: u32) -> u32 {
    8 * matrix + row
}

/// Every lane's registers of a whole `ldmatrix.x<num>[.trans]` (all of [`fragment`] at once):
/// `rows[8m + r]` are the 8 b16 elements (column order) of row `r` of matrix `m`, the 16 bytes
/// at address lane `8m + r`'s address ([`address_lane`]). Register `m` of lane `l` holds
/// element `fragment(trans, l, m, 0)` in its low 16 bits and `fragment(trans, l, m, 1)` in its
/// high 16 bits; registers from `num` on (and rows from `8·num` on) are not used: 0.
pub fn lane_registers(rows: &[[u16; 8]; 32], num: usize, trans: bool) -> [[u32; 4]; 32] {
    let mut out = [[0u32; 4]; 32];
    for (m, mat) in rows.chunks_exact(8).enumerate().take(num.min(4)) {
        for (l, regs) in out.iter_mut().enumerate() {
            let (g, t) = (l / 4, l % 4);
            let (lo, hi) = if trans {
                (mat[2 * t][g], mat[2 * t + 1][g])
            } else {
                (mat[g][2 * t], mat[g][2 * t + 1])
            };
            regs[m] = u32::from(lo) | u32::from(hi) << 16;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole-instruction registers are the fragment table's, element by element.
    #[test]
    fn lane_registers_follow_the_fragment_table() {
        // Every element names its matrix, row and column.
        let rows: [[u16; 8]; 32] =
            std::array::from_fn(|a| std::array::from_fn(|c| (a * 8 + c) as u16 | 0x8000));
        for trans in [false, true] {
            for num in [1usize, 2, 4] {
                let regs = lane_registers(&rows, num, trans);
                for lane in 0..32u32 {
                    for reg in 0..4u32 {
                        let word = regs[lane as usize][reg as usize];
                        if reg as usize >= num {
                            assert_eq!(word, 0);
                            continue;
                        }
                        for h in 0..2 {
                            let e = fragment(trans, lane, reg, h);
                            let want = rows[address_lane(e.matrix, e.row) as usize][e.col as usize];
                            assert_eq!(
                                (word >> (16 * h)) as u16,
                                want,
                                "{trans} x{num} {lane} {reg} {h}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn table_matches_ptx_figure() {
        // PTX ISA ldmatrix figure: lane 0 holds row 0 cols 0,1; lane 5 row 1 cols 2,3.
        assert_eq!(
            fragment(false, 5, 0, 1),
            MatrixElem {
                matrix: 0,
                row: 1,
                col: 3
            }
        );
        assert_eq!(
            fragment(true, 5, 2, 1),
            MatrixElem {
                matrix: 2,
                row: 3,
                col: 1
            }
        );
        for trans in [false, true] {
            for lane in 0..32 {
                for h in 0..2 {
                    let e = fragment(trans, lane, 0, h);
                    assert_eq!(owner(trans, e.row, e.col), (lane, h));
                }
            }
        }
    }
}
