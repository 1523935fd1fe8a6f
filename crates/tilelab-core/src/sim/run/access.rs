//! Warp access patterns over a tile: the shared-memory requests a warp issues to read a whole
//! R×C tile stored with a [`Layout`], one [`WarpRequest`] per instruction.
//!
//! Patterns (strings for [`Access::parse`]):
//! * `row`: scalar loads, lane i reads element i of the tile in row order (32 consecutive
//!   elements of a row per request, wrapping to the next row);
//! * `col`: scalar loads down a column (lane i reads row i), the way `tl.trans(kj)` reads K;
//! * `col16`: the column read FA v1→v2 article measured in Triton's PTX: only 16 distinct addresses
//!   (`tid & 15`), lanes 16-31 repeat lanes 0-15;
//! * `vec8`, `vec16`: 64- and 128-bit vector loads (`ld.shared.v2.b32`, `ld.shared.v4.b32`) of
//!   consecutive elements along rows;
//! * `ldmatrix`, `ldmatrix.trans`: `ldmatrix.x4` of each 16x16 block of the tile *as stored*,
//!   matrices in the order of an mma A operand: (rows 0-7, cols 0-7), (rows 8-15, cols 0-7),
//!   (rows 0-7, cols 8-15), (rows 8-15, cols 8-15).

use std::fmt;

use crate::sim::bank::{WARP_SIZE, WarpRequest};
use crate::sim::error::SimError;
use crate::sim::instr::{AccessWidth, Instruction, MatrixCount};
use crate::sim::layout::{Layout, Order};

/// A warp access pattern over a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Scalar loads in row order.
    Row,
    /// Scalar loads down columns (lane i = row i).
    Col,
    /// Scalar loads down columns with `tid & 15` rows: 16 distinct addresses per request.
    Col16,
    /// Vector loads of `bytes` (8 or 16) consecutive bytes along rows.
    Vec {
        /// 8 (`v2.b32`) or 16 (`v4.b32`).
        bytes: u32,
    },
    /// `ldmatrix.x4[.trans]` of 16x16 blocks of the stored matrix (2-byte elements).
    Ldmatrix {
        /// `.trans`.
        trans: bool,
    },
}

/// Accepted pattern names, for errors and help.
pub const ACCESS_NAMES: &str = "row, col, col16, vec8, vec16, ldmatrix, ldmatrix.trans";

impl Access {
    /// The element type a tile read this way has when none is given: `f16` for `ldmatrix`
    /// (it loads b16 elements), `f32` otherwise.
    pub fn default_dtype(self) -> &'static str {
        match self {
            Access::Ldmatrix { .. } => "f16",
            _ => "f32",
        }
    }

    /// The layouts (`Layout::parse` spellings) compared when none is given: for `ldmatrix`
    /// the row-major tile and the `Swizzle<3,3,3>` that removes its conflicts; for vector
    /// loads only `row` (they need the row's elements contiguous, which `trans` breaks); for
    /// scalar loads `row` and `trans`.
    pub fn default_layouts(self) -> &'static [&'static str] {
        match self {
            Access::Ldmatrix { .. } => &["row", "swizzle:3,3,3"],
            Access::Vec { .. } => &["row"],
            _ => &["row", "trans"],
        }
    }

    /// Parses a pattern name (see the module docs).
    ///
    /// # Errors
    /// [`SimError::Unknown`] naming the value and listing [`ACCESS_NAMES`].
    pub fn parse(s: &str) -> Result<Access, SimError> {
        Ok(match s {
            "row" => Access::Row,
            "col" => Access::Col,
            "col16" => Access::Col16,
            "vec8" | "v2" => Access::Vec { bytes: 8 },
            "vec16" | "v4" => Access::Vec { bytes: 16 },
            "ldmatrix" | "ldsm" => Access::Ldmatrix { trans: false },
            "ldmatrix.trans" | "ldsm.trans" => Access::Ldmatrix { trans: true },
            _ => {
                return Err(SimError::Unknown {
                    what: "access",
                    given: s.to_string(),
                    allowed: ACCESS_NAMES,
                });
            }
        })
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Access::Row => write!(f, "row"),
            Access::Col => write!(f, "col"),
            Access::Col16 => write!(f, "col16"),
            Access::Vec { bytes } => write!(f, "vec{bytes}"),
            Access::Ldmatrix { trans: false } => write!(f, "ldmatrix"),
            Access::Ldmatrix { trans: true } => write!(f, "ldmatrix.trans"),
        }
    }
}

/// One generated request and what it reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileRequest {
    /// Human label, e.g. `col 3, rows 0-31` or `block (16,32)`.
    pub label: String,
    /// The warp request.
    pub request: WarpRequest,
    /// Per lane, the tile element(s) (row, col) whose address the lane gives (first element of a
    /// vector or matrix row); `None` for inactive lanes.
    pub elems: [Option<(u32, u32)>; WARP_SIZE],
}

fn scalar_width(elem_bytes: u32) -> Result<AccessWidth, SimError> {
    AccessWidth::from_bytes(elem_bytes).ok_or_else(|| SimError::NotAllowed {
        param: "element size",
        value: elem_bytes.into(),
        allowed: "1, 2, 4, 8 bytes (the scalar ld.shared widths)".into(),
    })
}

/// Generates every request a warp issues to read the whole tile with `access`.
///
/// # Errors
/// [`SimError::AccessUnfit`] when the pattern cannot read this tile: vector or ldmatrix reads whose
/// elements are not contiguous in memory under the layout, tile sizes that are not multiples of
/// the vector or of 16 (ldmatrix), ldmatrix on elements that are not 2 bytes.
pub fn requests(access: Access, l: &Layout) -> Result<Vec<TileRequest>, SimError> {
    match access {
        Access::Row | Access::Col => scalar_requests(access, l),
        Access::Col16 => col16_requests(l),
        Access::Vec { bytes } => vec_requests(bytes, l),
        Access::Ldmatrix { trans } => ldmatrix_requests(trans, l),
    }
}

/// The request `ins` in which lane i gives the address under `l` of element `lanes[i]` (row,
/// col); the lanes past the list are inactive.
fn tile_request(label: String, ins: Instruction, lanes: &[(u32, u32)], l: &Layout) -> TileRequest {
    let mut offs = [0u32; WARP_SIZE];
    let mut elems = [None; WARP_SIZE];
    let mut mask = 0u32;
    for (i, &(r, c)) in lanes.iter().enumerate() {
        offs[i] = l.byte_offset(r, c);
        elems[i] = Some((r, c));
        mask |= 1 << i;
    }
    let mut request = WarpRequest::new(ins, offs);
    request.active_mask = mask;
    TileRequest {
        label,
        request,
        elems,
    }
}

/// `row` and `col`: scalar loads of 32 consecutive elements in row (column) order per request.
fn scalar_requests(access: Access, l: &Layout) -> Result<Vec<TileRequest>, SimError> {
    let (rows, cols) = (l.rows, l.cols);
    let ins = Instruction::Ld(scalar_width(l.elem_bytes)?);
    let n = rows * cols;
    let coord = |e: u32| {
        if access == Access::Row {
            (e / cols, e % cols)
        } else {
            (e % rows, e / rows)
        }
    };
    let mut out = Vec::new();
    for start in (0..n).step_by(WARP_SIZE) {
        let lanes: Vec<_> = (start..(start + WARP_SIZE as u32).min(n))
            .map(coord)
            .collect();
        let (a, b) = (lanes[0], *lanes.last().unwrap());
        let label = format!("{access} ({},{})..({},{})", a.0, a.1, b.0, b.1);
        out.push(tile_request(label, ins, &lanes, l));
    }
    Ok(out)
}

/// `col16`: scalar loads down each column, 16 rows at a time (`tid & 15`: lanes 16-31 repeat
/// lanes 0-15).
fn col16_requests(l: &Layout) -> Result<Vec<TileRequest>, SimError> {
    let (rows, cols) = (l.rows, l.cols);
    let ins = Instruction::Ld(scalar_width(l.elem_bytes)?);
    let mut out = Vec::new();
    for c in 0..cols {
        for r0 in (0..rows).step_by(16) {
            let lanes: Vec<_> = (0..WARP_SIZE as u32)
                .map(|t| (r0 + (t & 15) % (rows - r0).min(16), c))
                .collect();
            let label = format!("col {c}, rows {r0}..{} (tid & 15)", (r0 + 16).min(rows) - 1);
            out.push(tile_request(label, ins, &lanes, l));
        }
    }
    Ok(out)
}

/// `vec8`, `vec16`: vector loads of `bytes` consecutive bytes along rows, 32 vectors in row
/// order per request.
fn vec_requests(bytes: u32, l: &Layout) -> Result<Vec<TileRequest>, SimError> {
    let access = Access::Vec { bytes };
    let (rows, cols) = (l.rows, l.cols);
    let w = AccessWidth::from_bytes(bytes)
        .filter(|_| bytes >= 8)
        .ok_or_else(|| SimError::NotAllowed {
            param: "vector width",
            value: bytes.into(),
            allowed: "8, 16 bytes".into(),
        })?;
    if !bytes.is_multiple_of(l.elem_bytes) || !(cols * l.elem_bytes).is_multiple_of(bytes) {
        return Err(SimError::AccessUnfit {
            access: access.to_string(),
            reason: format!(
                "vec{bytes} needs rows of a whole number of {bytes}-byte vectors; a row has {} bytes",
                u64::from(cols) * u64::from(l.elem_bytes)
            ),
        });
    }
    let per = bytes / l.elem_bytes;
    let vecs: Vec<(u32, u32)> = (0..rows)
        .flat_map(|r| (0..cols).step_by(per as usize).map(move |c| (r, c)))
        .collect();
    for &(r, c) in &vecs {
        if !l.is_contiguous(r, c, per, true) {
            return Err(SimError::AccessUnfit {
                access: access.to_string(),
                reason: format!(
                    "vec{bytes} reads {per} consecutive elements of a row, but layout {l} does not store row {r}, columns {c}..{} contiguously; use a row-major layout (or a swizzle that keeps {bytes}-byte chunks)",
                    c + per - 1
                ),
            });
        }
    }
    let mut out = Vec::new();
    for chunk in vecs.chunks(WARP_SIZE) {
        let (a, b) = (chunk[0], *chunk.last().unwrap());
        let label = format!("vec{bytes} ({},{})..({},{})", a.0, a.1, b.0, b.1 + per - 1);
        out.push(tile_request(label, Instruction::Ld(w), chunk, l));
    }
    Ok(out)
}

/// `ldmatrix`, `ldmatrix.trans`: one `ldmatrix.x4` per 16x16 block of the tile as stored, its
/// four 8x8 matrices in the order of an mma A operand.
fn ldmatrix_requests(trans: bool, l: &Layout) -> Result<Vec<TileRequest>, SimError> {
    let access = Access::Ldmatrix { trans };
    let (rows, cols) = (l.rows, l.cols);
    if l.elem_bytes != 2 {
        return Err(SimError::AccessUnfit {
            access: access.to_string(),
            reason: format!(
                "ldmatrix loads b16 elements; --dtype must be 2 bytes (f16/bf16), not {} bytes",
                l.elem_bytes
            ),
        });
    }
    // Stored matrix: rows are the contiguous direction.
    let along_row = l.order == Order::Row;
    let (srows, scols) = if along_row {
        (rows, cols)
    } else {
        (cols, rows)
    };
    if srows % 16 != 0 || scols % 16 != 0 {
        return Err(SimError::AccessUnfit {
            access: access.to_string(),
            reason: format!(
                "ldmatrix.x4 reads 16x16 blocks; the stored tile is {srows}x{scols}, which is not a multiple of 16 in both dimensions"
            ),
        });
    }
    // Map stored (row, col) to the logical tile coordinate.
    let logical = |sr: u32, sc: u32| if along_row { (sr, sc) } else { (sc, sr) };
    let ins = Instruction::Ldmatrix {
        num: MatrixCount::X4,
        trans,
    };
    let mut out = Vec::new();
    for br in (0..srows).step_by(16) {
        for bc in (0..scols).step_by(16) {
            let lanes: Vec<(u32, u32)> = (0..WARP_SIZE as u32)
                .map(|lane| {
                    let (m, r) = (lane / 8, lane % 8);
                    logical(br + (m % 2) * 8 + r, bc + (m / 2) * 8)
                })
                .collect();
            for &(r, c) in &lanes {
                if !l.is_contiguous(r, c, 8, along_row) {
                    return Err(SimError::AccessUnfit {
                        access: access.to_string(),
                        reason: format!(
                            "ldmatrix reads 16-byte rows of 8 elements, but layout {l} does not keep the 8 elements from ({r},{c}) contiguous; use a swizzle with M >= 3 on 2-byte elements"
                        ),
                    });
                }
            }
            let label = format!("{ins} block ({br},{bc}) of the stored {srows}x{scols}");
            out.push(tile_request(label, ins, &lanes, l));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(access: &str, layout: &str, r: u32, c: u32, e: u32) -> (usize, u32) {
        let l = Layout::parse(layout, r, c, e).unwrap();
        let reqs = requests(Access::parse(access).unwrap(), &l).unwrap();
        let w = reqs.iter().map(|t| t.request.cost().wavefronts).sum();
        (reqs.len(), w)
    }

    #[test]
    fn column_reads_conflict_unless_stored_transposed() {
        // 32x64 f32 K tile: each column read is a 32-way conflict in row-major storage.
        assert_eq!(total("col", "row", 32, 64, 4), (64, 64 * 32));
        assert_eq!(total("col", "trans", 32, 64, 4), (64, 64));
        assert_eq!(total("col", "row+pad:1", 32, 64, 4), (64, 64));
        // tid & 15: 16 distinct rows, 16-way.
        assert_eq!(total("col16", "row", 32, 64, 4), (128, 128 * 16));
    }

    #[test]
    fn ldmatrix_on_128_byte_rows_needs_swizzle_or_pad() {
        // 64x64 f16: 128-byte rows, every row of a matrix in the same 4 banks: 8 wavefronts per matrix.
        assert_eq!(total("ldmatrix", "row", 64, 64, 2), (16, 16 * 32));
        assert_eq!(total("ldmatrix", "swizzle:3,3,3", 64, 64, 2), (16, 16 * 4));
        assert_eq!(total("ldmatrix", "pad:8", 64, 64, 2), (16, 16 * 4));
    }

    #[test]
    fn impossible_patterns_are_errors() {
        let l = Layout::parse("trans", 32, 64, 2).unwrap();
        assert!(requests(Access::Vec { bytes: 16 }, &l).is_err());
        let l = Layout::parse("row", 32, 64, 4).unwrap();
        assert!(requests(Access::Ldmatrix { trans: false }, &l).is_err());
        assert!(
            Access::parse("diagonal")
                .unwrap_err()
                .to_string()
                .contains("col16")
        );
    }

    /// Row order walks the tile element by element, 32 lanes a request; column order walks down
    /// the columns. 4×16 tile of 4-byte elements, row-major: lane i of request 0 reads element
    /// (i / 16, i % 16) at byte 4i (row) or (i % 4, i / 4) at byte (16·(i % 4) + i / 4)·4 (col).
    /// (Third mutation round, 2026-12-01.)
    #[test]
    fn row_and_column_walks() {
        let l = Layout::row_major(4, 16, 4);
        let row = requests(Access::Row, &l).unwrap();
        assert_eq!(row.len(), 2);
        assert_eq!(row[0].label, "row (0,0)..(1,15)");
        let col = requests(Access::Col, &l).unwrap();
        assert_eq!(col[1].label, "col (0,8)..(3,15)");
        for i in 0..32u32 {
            let lane = i as usize;
            assert_eq!(row[0].elems[lane], Some((i / 16, i % 16)));
            assert_eq!(row[0].request.lane_byte_offsets[lane], 4 * i);
            assert_eq!(col[0].elems[lane], Some((i % 4, i / 4)));
            assert_eq!(
                col[0].request.lane_byte_offsets[lane],
                (16 * (i % 4) + i / 4) * 4
            );
        }
        for (text, a) in [
            ("row", Access::Row),
            ("v2", Access::Vec { bytes: 8 }),
            ("vec16", Access::Vec { bytes: 16 }),
            ("ldsm.trans", Access::Ldmatrix { trans: true }),
        ] {
            assert_eq!(Access::parse(text).unwrap(), a, "{text}");
        }
        assert_eq!(Access::Vec { bytes: 8 }.to_string(), "vec8");
        assert_eq!(
            Access::Ldmatrix { trans: true }.to_string(),
            "ldmatrix.trans"
        );
    }

    /// col16 on a 20-row tile: lane t reads row r0 + (t & 15) mod (rows left), so the last
    /// request of a column covers rows 16..19 four times over. vec16 on 2x16 f16: one request,
    /// 4 lanes, one 16-byte vector each at bytes 0, 16, 32, 48 (vec8: 8 lanes); vec16 on 24-byte
    /// rows and a 4-byte "vector" are errors. ldmatrix.x4 on a 16x16 f16 tile: lanes 8m..8m+7
    /// give the rows of matrix m, which is rows 8(m % 2).., columns 8(m / 2).. (the order of the
    /// m16n8k16 A fragment, PTX ISA 9.7.14.5.8: a0a1 rows 0-7, a2a3 rows 8-15, a4a5 rows 0-7 of
    /// k 8-15, a6a7 rows 8-15 of k 8-15); a 16x24 tile is refused. (Third mutation round.)
    #[test]
    fn col16_vector_and_ldmatrix_lane_maps() {
        let l = Layout::row_major(20, 2, 4);
        let reqs = requests(Access::Col16, &l).unwrap();
        assert_eq!(reqs.len(), 4);
        assert_eq!(reqs[1].label, "col 0, rows 16..19 (tid & 15)");
        for t in 0..32u32 {
            let lane = t as usize;
            assert_eq!(reqs[0].elems[lane], Some((t % 16, 0)), "lane {t}");
            let r = 16 + (t % 16) % 4;
            assert_eq!(reqs[1].elems[lane], Some((r, 0)), "lane {t}");
            assert_eq!(reqs[1].request.lane_byte_offsets[lane], r * 8);
        }

        let l = Layout::row_major(2, 16, 2);
        let v = requests(Access::Vec { bytes: 16 }, &l).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].label, "vec16 (0,0)..(1,15)");
        assert_eq!(v[0].request.active_mask, 0b1111);
        assert_eq!(v[0].request.lane_byte_offsets[..4], [0, 16, 32, 48]);
        assert_eq!(v[0].elems[3], Some((1, 8)));
        let v8 = requests(Access::Vec { bytes: 8 }, &l).unwrap();
        assert_eq!(v8[0].request.active_mask, 0xff);
        assert!(requests(Access::Vec { bytes: 4 }, &l).is_err());
        let narrow = Layout::row_major(2, 12, 2);
        let e = requests(Access::Vec { bytes: 16 }, &narrow).unwrap_err();
        assert!(e.to_string().contains("a row has 24 bytes"), "{e}");

        let l = Layout::row_major(16, 16, 2);
        let m = requests(Access::Ldmatrix { trans: false }, &l).unwrap();
        assert_eq!(m.len(), 1);
        for lane in 0..32u32 {
            let (mat, r) = (lane / 8, lane % 8);
            let (row, col) = (8 * (mat % 2) + r, 8 * (mat / 2));
            assert_eq!(m[0].elems[lane as usize], Some((row, col)), "lane {lane}");
            assert_eq!(
                m[0].request.lane_byte_offsets[lane as usize],
                row * 32 + col * 2
            );
        }
        let e = requests(
            Access::Ldmatrix { trans: false },
            &Layout::row_major(16, 24, 2),
        )
        .unwrap_err();
        assert!(e.to_string().contains("16x24"), "{e}");
    }
}
