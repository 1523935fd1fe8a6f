//! Emitting instructions: the `ldmatrix.x4` operand orders, one `ldmatrix.x4`, the `st.shared`
//! of an accumulator half tile, and a warp's share of one product (its loads and mmas).

use super::{MmaOp, Product, SmemOp, SmemTile, WarpInstr};
use crate::sim::bank::WarpRequest;
use crate::sim::instr::{AccessWidth, Instruction};

// ldmatrix.x4 matrix orders: (row, col) offset of matrix j (= destination register j) inside
// the 16x16 block, in elements of the stored tile. Lane 8j + r gives the address of row r of
// matrix j (PTX ISA §9.7.14.5.15).

/// A operand of m16n8k16 from an M×K row-major tile: registers a0..a3 =
/// (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15).
pub const X4_ORDER_A: [(u32, u32); 4] = [(0, 0), (8, 0), (0, 8), (8, 8)];
/// B operand from a tile stored N×K (no `.trans`): registers b0, b1 of n-tile 0 then of n-tile 1
/// = (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
pub const X4_ORDER_B_NK: [(u32, u32); 4] = [(0, 0), (0, 8), (8, 0), (8, 8)];
/// B operand from a tile stored K×N, loaded with `.trans`: b0, b1 of n-tile 0 then n-tile 1 =
/// (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15).
pub const X4_ORDER_B_KN_TRANS: [(u32, u32); 4] = [(0, 0), (8, 0), (0, 8), (8, 8)];

/// The `ldmatrix.x4` that loads the 16x16 block of `tile` at `(row0, col0)` in the given order.
pub fn ldsm_x4(
    tile: &SmemTile,
    trans: bool,
    row0: u32,
    col0: u32,
    order: [(u32, u32); 4],
) -> SmemOp {
    let offs = std::array::from_fn(|lane| {
        let (j, r) = (lane / 8, lane as u32 % 8);
        let (dr, dc) = order[j];
        tile.byte_addr(row0 + dr + r, col0 + dc)
    });
    let ins = if trans {
        Instruction::LDSM_X4_T
    } else {
        Instruction::LDSM_X4
    };
    SmemOp {
        tile: tile.id,
        row: row0,
        col: col0,
        request: WarpRequest::new(ins, offs),
    }
}

/// The `st.shared.b32` with which a warp writes half of a 16x8 f32 accumulator tile as packed
/// f16 to `tile`: lane (g = lane/4, t = lane%4) writes elements `(row0 + g, col0 + 2t .. +1)`;
/// `row0` is the tile's top row (registers c0, c1) or top + 8 (c2, c3). PTX ISA §9.7.13.5.8.
pub fn sts_acc_half(tile: &SmemTile, row0: u32, col0: u32) -> SmemOp {
    let offs = std::array::from_fn(|lane| {
        let (g, t) = (lane as u32 / 4, lane as u32 % 4);
        tile.byte_addr(row0 + g, col0 + 2 * t)
    });
    SmemOp {
        tile: tile.id,
        row: row0,
        col: col0,
        request: WarpRequest::new(Instruction::St(AccessWidth::B32), offs),
    }
}

/// Where the A operand of a warp-level product comes from.
#[derive(Clone, Copy, Debug)]
pub(super) enum ASource<'a> {
    /// `ldmatrix.x4` from an M×K tile.
    Smem(&'a SmemTile),
    /// Already in registers (FlashAttention-2 keeps P there).
    Registers,
}

/// Where the B operand comes from.
#[derive(Clone, Copy, Debug)]
pub(super) enum BSource<'a> {
    /// Tile stored N×K, `ldmatrix.x4`.
    NK(&'a SmemTile),
    /// Tile stored K×N, `ldmatrix.x4.trans`.
    KNTrans(&'a SmemTile),
}

/// A warp's share of one product: output rows `m0..m0+m_len`, columns `n0..n0+n_len`, full
/// reduction `0..k_len`; all multiples of 16 (checked by the tilings).
#[derive(Clone, Copy, Debug)]
pub(super) struct WarpGemm<'a> {
    pub(super) product: Product,
    pub(super) a: ASource<'a>,
    pub(super) b: BSource<'a>,
    pub(super) m0: u32,
    pub(super) m_len: u32,
    pub(super) n0: u32,
    pub(super) n_len: u32,
    pub(super) k_len: u32,
}

impl WarpGemm<'_> {
    /// Emits the product: for each 16-wide k step, the A loads of the warp's 16-row blocks, the
    /// B loads of its 16-column blocks, then one mma per (16-row, 8-column) output tile.
    pub(super) fn emit(&self, out: &mut Vec<WarpInstr>) {
        for k in (0..self.k_len).step_by(16) {
            if let ASource::Smem(t) = self.a {
                for m in (self.m0..self.m0 + self.m_len).step_by(16) {
                    out.push(WarpInstr::Smem(ldsm_x4(t, false, m, k, X4_ORDER_A)));
                }
            }
            for n in (self.n0..self.n0 + self.n_len).step_by(16) {
                let op = match self.b {
                    BSource::NK(t) => ldsm_x4(t, false, n, k, X4_ORDER_B_NK),
                    BSource::KNTrans(t) => ldsm_x4(t, true, k, n, X4_ORDER_B_KN_TRANS),
                };
                out.push(WarpInstr::Smem(op));
            }
            for m in (self.m0..self.m0 + self.m_len).step_by(16) {
                for n in (self.n0..self.n0 + self.n_len).step_by(8) {
                    out.push(WarpInstr::Mma(MmaOp {
                        product: self.product,
                        m,
                        n,
                        k,
                    }));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::bank::schedule;
    use crate::sim::layout::Layout;
    use crate::sim::program::TileId;

    #[test]
    fn ldsm_addresses_follow_the_fragment_order() {
        let tile = SmemTile {
            id: TileId::Q,
            layout: Layout::row_major(64, 128, 2),
            base_byte: 0,
        };
        let op = ldsm_x4(&tile, false, 16, 32, X4_ORDER_A);
        // lane 0: row 16, col 32; lane 9: matrix 1 row 1 -> row 25, col 32; lane 17: row 17, col 40.
        assert_eq!(op.request.lane_byte_offsets[0], (16 * 128 + 32) * 2);
        assert_eq!(op.request.lane_byte_offsets[9], (25 * 128 + 32) * 2);
        assert_eq!(op.request.lane_byte_offsets[17], (17 * 128 + 40) * 2);
        // Row-major pitch 256 bytes: the 8 rows of a matrix share banks: 8-way, 32 wavefronts.
        let r = schedule(&op.request);
        assert_eq!((r.wavefront_count(), r.bank_conflicts()), (32, 28));
    }
}
