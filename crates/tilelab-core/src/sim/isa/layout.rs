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

use crate::sim::error::SimError;

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
    /// [`SimError::BadSwizzle`] unless `B <= S` (CuTe's `static_assert(abs(S) >= B)`) and
    /// `B+M+S <= 31` (summed without overflow).
    pub fn new(bits: u32, base: u32, shift: u32) -> Result<Swizzle, SimError> {
        let span = u64::from(bits) + u64::from(base) + u64::from(shift);
        if shift < bits || span > 31 {
            return Err(SimError::BadSwizzle { bits, base, shift });
        }
        Ok(Swizzle { bits, base, shift })
    }

    /// Size of the blocks the swizzle permutes within: `2^(B+M+S)` offsets (same unit as the
    /// offsets it is applied to).
    pub fn period(self) -> u64 {
        1u64 << (self.bits + self.base + self.shift)
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

    /// Parses a layout string for an R×C tile of `elem_bytes`-byte elements: the tile's shape
    /// is checked first, then the string ([`LayoutSpec::parse`]), then the footprint
    /// ([`LayoutSpec::tile`]).
    ///
    /// # Errors
    /// [`SimError::NotAllowed`] for zero-sized tiles or element sizes other than 1/2/4/8;
    /// those of [`LayoutSpec::parse`] and [`LayoutSpec::tile`].
    pub fn parse(spec: &str, rows: u32, cols: u32, elem_bytes: u32) -> Result<Layout, SimError> {
        check_tile_shape(rows, cols, elem_bytes)?;
        LayoutSpec::parse(spec)?.tile(rows, cols, elem_bytes)
    }

    /// The footprint in bytes ([`Self::size_bytes`]) computed without overflow: `None` when it
    /// is 2^32 bytes or more (no 32-bit shared-memory address could reach it).
    pub fn checked_size_bytes(&self) -> Option<u32> {
        let (lines, len) = match self.order {
            Order::Row => (self.rows, self.cols),
            Order::Col => (self.cols, self.rows),
        };
        let pitch = u64::from(len) + u64::from(self.pad);
        let n = u64::from(lines).checked_mul(pitch)?;
        let n = match self.swizzle {
            Some(s) => n.checked_next_multiple_of(s.period())?,
            None => n,
        };
        u32::try_from(n.checked_mul(u64::from(self.elem_bytes))?).ok()
    }

    /// Elements between consecutive rows (Row) or columns (Col), padding included. Exact for a
    /// parsed layout (its footprint fits in 32 bits); saturates at `u32::MAX` for a hand-built
    /// one that does not.
    pub fn pitch(&self) -> u32 {
        match self.order {
            Order::Row => self.cols.saturating_add(self.pad),
            Order::Col => self.rows.saturating_add(self.pad),
        }
    }

    /// Total footprint in bytes: the rows (or columns) times the pitch, rounded up to whole
    /// swizzle periods (a swizzle permutes offsets within aligned blocks of `2^(B+M+S)`
    /// elements), times the element size. Every byte offset of the tile is below it.
    ///
    /// Exact for a parsed layout, which [`Self::parse`] checks fits in 32 bits; a hand-built
    /// layout too large for that reports `u32::MAX` (never a small wrapped-around number).
    pub fn size_bytes(&self) -> u32 {
        self.checked_size_bytes().unwrap_or(u32::MAX)
    }

    /// Element offset of `(row, col)` before the swizzle. `row < rows` and `col < cols`; then
    /// the offset is below the footprint, which a parsed layout keeps inside 32 bits.
    pub fn linear_offset(&self, row: u32, col: u32) -> u32 {
        debug_assert!(
            row < self.rows && col < self.cols,
            "({row},{col}) outside {self}"
        );
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

    /// Whether the `n` elements from `(row, col)` along a row (`along_row`) or down a column lie
    /// at consecutive byte offsets, as a vector access or an ldmatrix row needs.
    pub fn is_contiguous(&self, row: u32, col: u32, n: u32, along_row: bool) -> bool {
        let base = self.byte_offset(row, col);
        (1..n).all(|j| {
            let (r, c) = if along_row {
                (row, col + j)
            } else {
                (row + j, col)
            };
            self.byte_offset(r, c) == base + j * self.elem_bytes
        })
    }
}

/// Checks an R×C tile of `elem_bytes`-byte elements: both sizes at least 1, elements of 1, 2, 4
/// or 8 bytes.
fn check_tile_shape(rows: u32, cols: u32, elem_bytes: u32) -> Result<(), SimError> {
    for (param, v) in [("tile rows", rows), ("tile columns", cols)] {
        if v == 0 {
            return Err(SimError::NotAllowed {
                param,
                value: 0,
                allowed: "at least 1".into(),
            });
        }
    }
    if ![1, 2, 4, 8].contains(&elem_bytes) {
        return Err(SimError::NotAllowed {
            param: "element size",
            value: elem_bytes.into(),
            allowed: "1, 2, 4, 8 bytes".into(),
        });
    }
    Ok(())
}

/// A parsed layout string before it meets a tile: storage order, padding and swizzle
/// (`row+pad:8`, `col+swizzle:3,3,3`, …). The tiling builders take one
/// ([`crate::sim::program::GemmTiling::build`]), so a string is parsed once, where it enters;
/// [`Self::tile`] gives the [`Layout`] of one R×C tile. Displays as the string it was parsed
/// from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LayoutSpec {
    /// Row- or column-major.
    pub order: Order,
    /// Padding in elements after each row (Row) or column (Col).
    pub pad: u32,
    /// Optional swizzle on the element offset.
    pub swizzle: Option<Swizzle>,
    /// The string as given, for messages.
    text: String,
}

impl LayoutSpec {
    /// Plain row-major storage (`row`).
    pub fn row() -> LayoutSpec {
        LayoutSpec {
            order: Order::Row,
            pad: 0,
            swizzle: None,
            text: "row".into(),
        }
    }

    /// Parses a layout string.
    ///
    /// The grammar is strict: parts `row`, `col`, `trans`, `pad:N`, `swizzle:B,M,S` joined with
    /// `+`, each kind at most once (`pad:0+pad:8` is an error, not `pad:8`), numbers as plain
    /// decimal digits. Surrounding spaces are ignored.
    ///
    /// # Errors
    /// [`SimError::BadLayout`] quoting the string and listing the allowed forms (also for a
    /// swizzle CuTe rejects, with [`SimError::BadSwizzle`]'s reason).
    pub fn parse(spec: &str) -> Result<LayoutSpec, SimError> {
        let bad = |reason: String| SimError::BadLayout {
            spec: spec.to_string(),
            reason,
        };
        let number = |what: &str, a: &str| -> Result<u32, SimError> {
            let a = a.trim();
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            if a.strip_prefix('-').is_some_and(digits) {
                return Err(bad(format!(
                    "{what} '{a}' is negative; it counts elements, 0 or more"
                )));
            }
            if !digits(a) {
                return Err(bad(format!("{what} '{a}' is not a whole number")));
            }
            a.parse()
                .map_err(|_| bad(format!("{what} '{a}' is larger than {}", u32::MAX)))
        };
        let mut l = LayoutSpec {
            order: Order::Row,
            pad: 0,
            swizzle: None,
            text: spec.to_string(),
        };
        let (mut order_part, mut pad_part, mut swizzle_part) =
            (None::<&str>, None::<&str>, None::<&str>);
        if spec.trim().is_empty() {
            return Err(bad("empty".into()));
        }
        for tok in spec.trim().split('+') {
            let tok = tok.trim();
            let (name, arg) = match tok.split_once(':') {
                Some((n, a)) => (n.trim(), Some(a)),
                None => (tok, None),
            };
            let twice = |kind: &str, first: &str| {
                bad(format!("more than one {kind} ('{first}' and '{tok}')"))
            };
            match (name, arg) {
                ("", None) => return Err(bad("an empty part between '+'".into())),
                ("row" | "col" | "trans", None) => {
                    if let Some(first) = order_part {
                        return Err(twice("of row/col/trans", first));
                    }
                    order_part = Some(tok);
                    l.order = if name == "row" {
                        Order::Row
                    } else {
                        Order::Col
                    };
                }
                ("row" | "col" | "trans", Some(_)) => {
                    return Err(bad(format!("'{name}' takes no value, got '{tok}'")));
                }
                ("pad", Some(a)) => {
                    if let Some(first) = pad_part {
                        return Err(twice("pad", first));
                    }
                    pad_part = Some(tok);
                    l.pad = number("pad", a)?;
                }
                ("swizzle", Some(a)) => {
                    if let Some(first) = swizzle_part {
                        return Err(twice("swizzle", first));
                    }
                    swizzle_part = Some(tok);
                    let parts: Vec<&str> = a.split(',').collect();
                    if parts.len() != 3 {
                        return Err(bad(format!("swizzle '{a}' must be three numbers B,M,S")));
                    }
                    let v = parts
                        .iter()
                        .map(|p| number("swizzle number", p))
                        .collect::<Result<Vec<u32>, _>>()?;
                    l.swizzle =
                        Some(Swizzle::new(v[0], v[1], v[2]).map_err(|e| bad(e.to_string()))?);
                }
                ("pad" | "swizzle", None) => {
                    return Err(bad(format!(
                        "'{name}' needs a value: pad:N or swizzle:B,M,S"
                    )));
                }
                _ => {
                    return Err(bad(format!("unknown part '{}'", crate::text::value(tok))));
                }
            }
        }
        Ok(l)
    }

    /// The string it was parsed from.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The layout of an R×C tile of `elem_bytes`-byte elements stored this way.
    ///
    /// # Errors
    /// [`SimError::NotAllowed`] for zero-sized tiles or element sizes other than 1/2/4/8;
    /// [`SimError::LayoutTooLarge`] when the footprint ([`Layout::size_bytes`]) would not fit in
    /// 32 bits, so every byte offset of the layout is exact.
    pub fn tile(&self, rows: u32, cols: u32, elem_bytes: u32) -> Result<Layout, SimError> {
        check_tile_shape(rows, cols, elem_bytes)?;
        let l = Layout {
            rows,
            cols,
            elem_bytes,
            order: self.order,
            pad: self.pad,
            swizzle: self.swizzle,
        };
        if l.checked_size_bytes().is_none() {
            return Err(SimError::LayoutTooLarge {
                spec: self.text.clone(),
                rows,
                cols,
                elem_bytes,
            });
        }
        Ok(l)
    }
}

impl fmt::Display for LayoutSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for LayoutSpec {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LayoutSpec::parse(s)
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
    fn a_spec_parses_once_and_serves_every_tile_shape() {
        let spec = LayoutSpec::parse("row+pad:8").unwrap();
        assert_eq!(spec.to_string(), "row+pad:8");
        // The same spec on the Q (64x128) and P (64x64) tiles of a tiling: 272- and 144-byte rows.
        assert_eq!(spec.tile(64, 128, 2).unwrap().byte_offset(1, 0), 272);
        assert_eq!(spec.tile(64, 64, 2).unwrap().byte_offset(1, 0), 144);
        assert_eq!(
            spec.tile(64, 128, 2).unwrap(),
            Layout::parse("row+pad:8", 64, 128, 2).unwrap()
        );
        assert_eq!(
            LayoutSpec::row().tile(8, 8, 4).unwrap(),
            Layout::row_major(8, 8, 4)
        );
        // Shape errors belong to the tile, grammar errors to the string.
        assert!(matches!(
            spec.tile(0, 8, 2),
            Err(SimError::NotAllowed { value: 0, .. })
        ));
        assert!(matches!(
            "row+diag".parse::<LayoutSpec>(),
            Err(SimError::BadLayout { .. })
        ));
        let big = LayoutSpec::parse("pad:4294967232").unwrap();
        assert!(matches!(
            big.tile(2, 64, 2),
            Err(SimError::LayoutTooLarge { .. })
        ));
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

    /// Issue #16, kind 5: every part at most once, numbers as plain digits, no empty parts.
    #[test]
    fn loose_strings_are_errors() {
        for (s, why) in [
            ("pad:0+pad:8", "more than one pad ('pad:0' and 'pad:8')"),
            ("pad:8+pad:8", "more than one pad"),
            ("swizzle:3,3,3+swizzle:3,3,3", "more than one swizzle"),
            ("row+trans", "more than one of row/col/trans"),
            ("pad:+8", "pad ''"),
            ("pad:-8", "'-8'"),
            ("pad:8.0", "'8.0'"),
            ("pad:", "''"),
            ("pad", "needs a value"),
            ("swizzle", "needs a value"),
            ("row:1", "takes no value"),
            ("row+", "empty part"),
            ("+row", "empty part"),
            ("swizzle:3,3,3,3", "three numbers"),
            ("swizzle:3,,3", "''"),
            ("pad:99999999999", "larger than 4294967295"),
            (
                "swizzle:4294967295,1,1",
                "Swizzle<4294967295,1,1> is not allowed",
            ),
        ] {
            match Layout::parse(s, 8, 8, 2) {
                Err(e @ SimError::BadLayout { .. }) => {
                    let m = e.to_string();
                    assert!(m.contains(&format!("'{s}'")) && m.contains(why), "{s}: {m}");
                }
                other => panic!("{s}: {other:?}"),
            }
        }
        // Spaces around parts are fine.
        assert_eq!(
            Layout::parse(" row + pad:8 ", 8, 8, 2).unwrap(),
            Layout::parse("row+pad:8", 8, 8, 2).unwrap()
        );
    }

    /// Issue #16, kind 1: the samples that wrapped around to a small footprint.
    #[test]
    fn footprints_beyond_32_bits_are_errors() {
        // 32 rows of 64 + 4294967232 f32: 2^37 bytes, not 0.
        let e = Layout::parse("pad:4294967232", 32, 64, 4).unwrap_err();
        assert!(
            matches!(
                e,
                SimError::LayoutTooLarge {
                    rows: 32,
                    cols: 64,
                    elem_bytes: 4,
                    ..
                }
            ),
            "{e:?}"
        );
        // Swizzle<10,10,11> permutes blocks of 2^31 f16 = 2^32 bytes.
        let e = Layout::parse("swizzle:10,10,11", 16, 16, 2).unwrap_err();
        assert!(matches!(e, SimError::LayoutTooLarge { .. }), "{e:?}");
        assert!(e.to_string().contains("'swizzle:10,10,11'"), "{e}");
        // One bit less: blocks of 2^30 f16 = 2^31 bytes fit.
        let l = Layout::parse("swizzle:10,10,10", 16, 16, 2).unwrap();
        assert_eq!(l.size_bytes(), 1 << 31);
        // 65536 x 65536 u8 = 2^32 bytes: one byte too many.
        assert!(Layout::parse("row", 65536, 65536, 1).is_err());
        assert_eq!(
            Layout::parse("row", 65536, 65535, 1).unwrap().size_bytes(),
            65536 * 65535
        );
        // A hand-built layout never reports a wrapped-around size.
        let mut h = Layout::row_major(32, 64, 4);
        h.pad = u32::MAX - 63;
        assert_eq!(h.checked_size_bytes(), None);
        assert_eq!(h.size_bytes(), u32::MAX);
    }

    /// Reference byte offset in u128, straight from the definitions in the module docs.
    fn reference_offset(l: &Layout, r: u32, c: u32) -> u128 {
        let (r, c) = (u128::from(r), u128::from(c));
        let (lines_len, pad) = (
            u128::from(if l.order == Order::Row {
                l.cols
            } else {
                l.rows
            }),
            u128::from(l.pad),
        );
        let mut o = match l.order {
            Order::Row => r * (lines_len + pad) + c,
            Order::Col => c * (lines_len + pad) + r,
        };
        if let Some(s) = l.swizzle {
            let mask = (1u128 << s.bits) - 1;
            o ^= ((o >> (s.base + s.shift)) & mask) << s.base;
        }
        o * u128::from(l.elem_bytes)
    }

    fn extreme() -> impl proptest::strategy::Strategy<Value = u32> {
        use proptest::prelude::*;
        prop_oneof![
            1u32..=300,
            Just(u32::MAX),
            Just(u32::MAX - 1),
            Just(1 << 31),
            Just(65536),
            Just(65535),
            any::<u32>(),
        ]
    }

    proptest::proptest! {
        /// At the u32 limits: parsing never panics; a parsed layout's footprint is the exact
        /// product (below 2^32) and every corner's byte offset equals the u128 reference and lies
        /// inside it; an error is a footprint of 2^32 bytes or more (or a bad swizzle).
        #[test]
        fn layouts_at_the_limits_are_exact_or_errors(
            rows in extreme(),
            cols in extreme(),
            eb in proptest::sample::select(vec![1u32, 2, 4, 8]),
            pad in proptest::prop_oneof![proptest::strategy::Just(0u32), extreme()],
            order in proptest::sample::select(vec!["row", "col"]),
            sw in proptest::option::of((0u32..=12, 0u32..=12, 0u32..=12)),
        ) {
            let spec = match sw {
                Some((b, m, s)) => format!("{order}+pad:{pad}+swizzle:{b},{m},{s}"),
                None => format!("{order}+pad:{pad}"),
            };
            let (lines, len) = if order == "row" { (rows, cols) } else { (cols, rows) };
            let mut want = u128::from(lines) * (u128::from(len) + u128::from(pad));
            let mut sw_ok = true;
            if let Some((b, m, s)) = sw {
                sw_ok = s >= b && b + m + s <= 31;
                let p = 1u128 << (b + m + s);
                want = want.div_ceil(p) * p;
            }
            want *= u128::from(eb);
            match Layout::parse(&spec, rows, cols, eb) {
                Ok(l) => {
                    proptest::prop_assert!(sw_ok);
                    proptest::prop_assert_eq!(u128::from(l.size_bytes()), want);
                    proptest::prop_assert!(want < 1 << 32);
                    for (r, c) in [(0, 0), (rows - 1, 0), (0, cols - 1), (rows - 1, cols - 1), (rows / 2, cols / 3)] {
                        let got = l.byte_offset(r, c);
                        proptest::prop_assert_eq!(u128::from(got), reference_offset(&l, r, c));
                        proptest::prop_assert!(got + eb <= l.size_bytes());
                    }
                }
                Err(SimError::LayoutTooLarge { .. }) => proptest::prop_assert!(sw_ok && want >= 1 << 32),
                Err(SimError::BadLayout { .. }) => proptest::prop_assert!(!sw_ok),
                Err(e) => proptest::prop_assert!(false, "{spec}: {e}"),
            }
        }

        /// Any string: an error or a layout, never a panic; accepted strings are exactly the
        /// grammar's (re-parsing the canonical spelling gives the same layout).
        #[test]
        fn any_layout_string_parses_or_errors(s in "[a-z:+,0-9 ]{0,24}|(row|col|trans|pad:[0-9]{1,3}|swizzle:[0-9],[0-9],[0-9])(\\+(row|col|trans|pad:[0-9]{1,3}|swizzle:[0-9],[0-9],[0-9])){0,3}") {
            if let Ok(l) = Layout::parse(&s, 32, 64, 2) {
                let parts: Vec<&str> = s.split('+').map(str::trim).collect();
                for kind in ["pad:", "swizzle:"] {
                    proptest::prop_assert!(parts.iter().filter(|p| p.starts_with(kind)).count() <= 1, "{}", s);
                }
                proptest::prop_assert!(parts.iter().filter(|p| ["row", "col", "trans"].contains(p)).count() <= 1, "{}", s);
                let mut canon = String::from(if l.order == Order::Row { "row" } else { "col" });
                canon += &format!("+pad:{}", l.pad);
                if let Some(sw) = l.swizzle {
                    canon += &format!("+swizzle:{},{},{}", sw.bits, sw.base, sw.shift);
                }
                proptest::prop_assert_eq!(Layout::parse(&canon, 32, 64, 2).unwrap(), l);
            }
        }
    }

    /// Column-major (`col`): element (r, c) at c·R + r, so a column's elements are consecutive
    /// and a row's are R apart (third mutation round).
    #[test]
    fn columns_of_a_column_major_tile_are_contiguous() {
        let l = Layout::parse("col", 16, 8, 2).unwrap();
        assert_eq!(l.byte_offset(3, 2), (2 * 16 + 3) * 2);
        assert!(l.is_contiguous(2, 5, 8, false));
        assert!(!l.is_contiguous(2, 5, 2, true));
        assert!(l.is_contiguous(8, 7, 8, false));
        let r = Layout::row_major(16, 8, 2);
        assert!(r.is_contiguous(3, 0, 8, true));
        assert!(!r.is_contiguous(3, 0, 2, false));
    }

    /// An empty or bare-sign number is "not a whole number" (not "negative", not "too large"),
    /// and a spec remembers the text it came from.
    #[test]
    fn empty_numbers_are_not_whole_numbers() {
        for spec in ["pad:", "pad:-", "pad: "] {
            let e = LayoutSpec::parse(spec).unwrap_err().to_string();
            assert!(e.contains("is not a whole number"), "{spec}: {e}");
        }
        let e = LayoutSpec::parse("pad:-3").unwrap_err().to_string();
        assert!(e.contains("is negative"), "{e}");
        assert_eq!(LayoutSpec::parse("pad:8").unwrap().as_str(), "pad:8");
        assert_eq!(
            LayoutSpec::parse("swizzle:3,3,3").unwrap().as_str(),
            "swizzle:3,3,3"
        );
    }
}
