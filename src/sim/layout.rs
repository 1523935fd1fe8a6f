//! Tile layouts: where element `(row, col)` of an R×C tile lives in shared memory.
//!
//! A [`Layout`] maps a 2-D element coordinate to an **element offset** (CuTe's
//! `(shape):(stride)` codomain), optionally passed through CuTe's [`Swizzle<B,M,S>`](Swizzle)
//! — which therefore acts on *element* offsets, as in CuTe when the tensor's value type is the
//! element — and multiplies by the element size to give a **byte offset**.
//!
//! Strings (see [`Layout::parse`]): `row`, `col` (alias `trans`: the tile stored transposed,
//! column-major), `pad:N` (N elements of padding after each row, or each column for `col`),
//! `swizzle:B,M,S`, joined with `+`: `row+pad:8`, `col+swizzle:3,3,3`. A bare `pad:8` or
//! `swizzle:3,3,3` means row-major with it.

use std::fmt;

use super::error::SimError;

/// CuTe's `Swizzle<B,M,S>` on an offset `o` (CuTe `include/cute/swizzle.hpp`):
///
/// ```text
///   bits  [M+S, M+S+B)  are XORed into  [M, M+B)
///   o' = o ^ ((o & (((1<<B)-1) << (M+S))) >> S)
/// ```
/// e.g. `Swizzle<3,3,3>` on f16 element offsets of a 64-element (128-byte) row: the 16-byte
/// chunk index (bits 3..6) is XORed with the row index modulo 8 (bits 6..9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Swizzle {
    /// Number of bits in the mask (B).
    pub bits: u32,
    /// Number of least-significant bits kept constant (M).
    pub base: u32,
    /// Shift distance of the mask (S); requires `S >= B` so the XOR is invertible.
    pub shift: u32,
}

impl Swizzle {
    /// Validates and builds `Swizzle<B,M,S>`.
    ///
    /// # Errors
    /// [`SimError::Invalid`] unless `B <= S` (CuTe's `static_assert(abs(S) >= B)`) and `B+M+S <= 31`.
    pub fn new(bits: u32, base: u32, shift: u32) -> Result<Swizzle, SimError> {
        if shift < bits || bits + base + shift > 31 {
            return Err(SimError::Invalid(format!(
                "Swizzle<{bits},{base},{shift}> is not allowed: need S >= B and B+M+S <= 31"
            )));
        }
        Ok(Swizzle { bits, base, shift })
    }

    /// Applies the swizzle to an offset (same unit in and out).
    pub fn apply(self, o: u32) -> u32 {
        let yyy = ((1u32 << self.bits) - 1) << (self.base + self.shift);
        o ^ ((o & yyy) >> self.shift)
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sw<{},{},{}>", self.bits, self.base, self.shift)
    }
}

/// Storage order of the tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// Row-major: element (r, c) at `r * pitch + c`.
    Row,
    /// Column-major (the transposed tile): element (r, c) at `c * pitch + r`.
    Col,
}

/// An R×C tile of `elem_bytes`-byte elements in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// Rows (R).
    pub rows: u32,
    /// Columns (C).
    pub cols: u32,
    /// Bytes per element: 1, 2, 4 or 8.
    pub elem_bytes: u32,
    /// Row- or column-major.
    pub order: Order,
    /// Padding in elements after each row (Row) or column (Col).
    pub pad: u32,
    /// Optional swizzle on the element offset.
    pub swizzle: Option<Swizzle>,
}

impl Layout {
    /// A plain row-major tile.
    pub fn row_major(rows: u32, cols: u32, elem_bytes: u32) -> Layout {
        Layout {
            rows,
            cols,
            elem_bytes,
            order: Order::Row,
            pad: 0,
            swizzle: None,
        }
    }

    /// Parses a layout string for an R×C tile of `elem_bytes`-byte elements.
    ///
    /// # Errors
    /// [`SimError::BadLayout`] quoting the string and listing the allowed forms;
    /// [`SimError::Invalid`] for zero-sized tiles or element sizes other than 1/2/4/8.
    pub fn parse(spec: &str, rows: u32, cols: u32, elem_bytes: u32) -> Result<Layout, SimError> {
        if rows == 0 || cols == 0 {
            return Err(SimError::Invalid(format!(
                "tile {rows}x{cols} is empty; rows and columns must be at least 1"
            )));
        }
        if ![1, 2, 4, 8].contains(&elem_bytes) {
            return Err(SimError::Invalid(format!(
                "element size {elem_bytes} bytes is not allowed; allowed: 1, 2, 4, 8"
            )));
        }
        let bad = |reason: String| SimError::BadLayout {
            spec: spec.to_string(),
            reason,
        };
        let mut l = Layout::row_major(rows, cols, elem_bytes);
        let mut order_set = false;
        if spec.trim().is_empty() {
            return Err(bad("empty".into()));
        }
        for tok in spec.trim().split('+') {
            let tok = tok.trim();
            let (name, arg) = match tok.split_once(':') {
                Some((n, a)) => (n, Some(a)),
                None => (tok, None),
            };
            match (name, arg) {
                ("row", None) | ("col", None) | ("trans", None) => {
                    if order_set {
                        return Err(bad("more than one of row/col/trans".into()));
                    }
                    order_set = true;
                    l.order = if name == "row" {
                        Order::Row
                    } else {
                        Order::Col
                    };
                }
                ("pad", Some(_)) if l.pad != 0 => {
                    return Err(bad("more than one pad".into()));
                }
                ("swizzle", Some(_)) if l.swizzle.is_some() => {
                    return Err(bad("more than one swizzle".into()));
                }
                ("pad", Some(a)) => {
                    l.pad = a
                        .trim()
                        .parse()
                        .map_err(|_| bad(format!("pad '{a}' is not a whole number of elements")))?;
                }
                ("swizzle", Some(a)) => {
                    let v: Vec<u32> = a
                        .split(',')
                        .map(|x| x.trim().parse::<u32>())
                        .collect::<Result<_, _>>()
                        .map_err(|_| bad(format!("swizzle '{a}' must be three numbers B,M,S")))?;
                    if v.len() != 3 {
                        return Err(bad(format!("swizzle '{a}' must be three numbers B,M,S")));
                    }
                    l.swizzle =
                        Some(Swizzle::new(v[0], v[1], v[2]).map_err(|e| bad(e.to_string()))?);
                }
                _ => return Err(bad(format!("unknown part '{tok}'"))),
            }
        }
        Ok(l)
    }

    /// Elements between consecutive rows (Row) or columns (Col), padding included.
    pub fn pitch(&self) -> u32 {
        match self.order {
            Order::Row => self.cols + self.pad,
            Order::Col => self.rows + self.pad,
        }
    }

    /// Total footprint in bytes (largest byte offset + element size, swizzle included).
    pub fn size_bytes(&self) -> u32 {
        let n = match self.order {
            Order::Row => self.rows * self.pitch(),
            Order::Col => self.cols * self.pitch(),
        };
        // A swizzle permutes offsets within aligned blocks of 2^(B+M+S) elements.
        let n = match self.swizzle {
            Some(s) => n.next_multiple_of(1 << (s.bits + s.base + s.shift)),
            None => n,
        };
        n * self.elem_bytes
    }

    /// Element offset of `(row, col)` before the swizzle.
    pub fn linear_offset(&self, row: u32, col: u32) -> u32 {
        match self.order {
            Order::Row => row * self.pitch() + col,
            Order::Col => col * self.pitch() + row,
        }
    }

    /// Element offset of `(row, col)`, swizzle applied.
    pub fn elem_offset(&self, row: u32, col: u32) -> u32 {
        let o = self.linear_offset(row, col);
        self.swizzle.map_or(o, |s| s.apply(o))
    }

    /// Byte offset of `(row, col)`.
    pub fn byte_offset(&self, row: u32, col: u32) -> u32 {
        self.elem_offset(row, col) * self.elem_bytes
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (shape, stride) = match self.order {
            Order::Row => ((self.rows, self.cols), (self.pitch(), 1)),
            Order::Col => ((self.rows, self.cols), (1, self.pitch())),
        };
        if let Some(s) = self.swizzle {
            write!(f, "{s} o ")?;
        }
        write!(f, "({},{}):({},{})", shape.0, shape.1, stride.0, stride.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swizzle_333_matches_the_measured_ldmatrix_addresses() {
        // h200_wavefronts.json, ldsm.x4.tile64_block0_swizzle333: row r, chunk 0 or 1 of a
        // 64-wide f16 tile.
        let l = Layout::parse("swizzle:3,3,3", 64, 64, 2).unwrap();
        let want = [0, 144, 288, 432, 576, 720, 864, 1008, 1024, 1168];
        for (r, w) in want.iter().enumerate() {
            assert_eq!(l.byte_offset(r as u32, 0), *w);
        }
        assert_eq!(l.byte_offset(1, 8), 128);
        assert_eq!(l.to_string(), "Sw<3,3,3> o (64,64):(64,1)");
    }

    #[test]
    fn pad_and_trans() {
        let l = Layout::parse("row+pad:8", 64, 128, 2).unwrap();
        assert_eq!(l.byte_offset(1, 0), 272); // tile128_pad8: 136 elements per row
        let t = Layout::parse("trans", 32, 64, 2).unwrap();
        assert_eq!(t.byte_offset(5, 0), 10);
        assert_eq!(t.byte_offset(0, 1), 64);
        assert_eq!(Layout::parse("col+pad:1", 32, 64, 4).unwrap().pitch(), 33);
    }

    #[test]
    fn bad_strings_name_the_value() {
        for s in [
            "diag",
            "pad:x",
            "swizzle:3,3",
            "swizzle:4,3,3",
            "row+col",
            "",
        ] {
            let e = Layout::parse(s, 8, 8, 2).unwrap_err().to_string();
            assert!(
                e.contains(&format!("'{s}'")) && e.contains("allowed"),
                "{e}"
            );
        }
    }
}
