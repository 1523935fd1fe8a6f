//! GEMM: one CTA computing `C = A·Bᵀ` with both tiles whole in shared memory (the FA2 counts article's four
//! counting cases).

use serde::Serialize;

use super::build::{check_multiple, check_share, check_warps, finish, place_program_tiles};
use super::emit::{ASource, BSource, WarpGemm};
use super::{CtaProgram, Product, Stage, StageKind, TileId, WarpProgram};
use crate::sim::arch::Arch;
use crate::sim::error::SimError;
use crate::sim::layout::LayoutSpec;

/// How the warps of a GEMM CTA share the output (FA2 counts article: with K ≠ 16 the accumulation must stay
/// inside one warp, so only rows or only columns are split).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// Warp w owns output rows `w·M/n .. (w+1)·M/n`; every warp loads all of B.
    Rows,
    /// Warp w owns output columns `w·N/n .. (w+1)·N/n`; every warp loads all of A.
    Cols,
}

impl Split {
    /// Parses `rows` or `cols`.
    ///
    /// # Errors
    /// [`SimError::Unknown`] naming the value and the allowed ones.
    pub fn parse(s: &str) -> Result<Split, SimError> {
        match s {
            "rows" | "row" | "m" => Ok(Split::Rows),
            "cols" | "col" | "n" => Ok(Split::Cols),
            _ => Err(SimError::Unknown {
                what: "split",
                given: s.to_string(),
                allowed: "rows, cols",
            }),
        }
    }
}

/// The four cases of the FA2 counts article's counting rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GemmCase {
    /// One warp, K = 16.
    OneWarpK16,
    /// n warps, K = 16.
    WarpsK16,
    /// One warp, K ≠ 16.
    OneWarpK,
    /// n warps, K ≠ 16.
    WarpsK,
}

impl GemmCase {
    /// The article's wording of the case.
    pub fn describe(self) -> &'static str {
        match self {
            GemmCase::OneWarpK16 => "one warp, K = 16",
            GemmCase::WarpsK16 => "n warps, K = 16",
            GemmCase::OneWarpK => "one warp, K ≠ 16",
            GemmCase::WarpsK => "n warps, K ≠ 16",
        }
    }
}

/// One CTA computing `C (M×N, f32) = A (M×K, f16) · Bᵀ` with B stored N×K, both tiles whole in
/// shared memory, with m16n8k16 mma and ldmatrix.x4. Units: elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct GemmTiling {
    /// Rows of A and C.
    pub m: u32,
    /// Columns of C (rows of the stored B).
    pub n: u32,
    /// Reduction length.
    pub k: u32,
    /// Warps in the CTA.
    pub warps: u32,
    /// How the warps share C.
    pub split: Split,
}

impl GemmTiling {
    /// Checks the tiling.
    ///
    /// # Errors
    /// [`SimError::NotMultiple`] if M, N or K is not a positive multiple of 16,
    /// [`SimError::NotAllowed`] if `warps` is outside 1..=32, [`SimError::WarpSplit`] if the
    /// warps cannot share the 16-wide slabs of the split dimension evenly.
    pub fn validate(&self) -> Result<(), SimError> {
        check_multiple(
            "--m",
            self.m,
            "mma m16n8k16 and ldmatrix.x4 take 16 rows of A",
        )?;
        check_multiple(
            "--n",
            self.n,
            "one ldmatrix.x4 loads 16 rows of B, two n8 mma tiles",
        )?;
        check_multiple("--k", self.k, "mma m16n8k16 reduces over 16")?;
        check_warps(self.warps)?;
        match self.split {
            Split::Rows => check_share(
                self.warps,
                self.m / 16,
                "16-row",
                &format!("--m {}", self.m),
            ),
            Split::Cols => check_share(
                self.warps,
                self.n / 16,
                "16-column",
                &format!("--n {}", self.n),
            ),
        }
    }

    /// Which of the article's four cases this is.
    pub fn case(&self) -> GemmCase {
        match (self.warps == 1, self.k == 16) {
            (true, true) => GemmCase::OneWarpK16,
            (false, true) => GemmCase::WarpsK16,
            (true, false) => GemmCase::OneWarpK,
            (false, false) => GemmCase::WarpsK,
        }
    }

    /// Rows and columns of C owned by each warp: `(M/n, N)` or `(M, N/n)`.
    pub fn warp_share(&self) -> (u32, u32) {
        match self.split {
            Split::Rows => (self.m / self.warps, self.n),
            Split::Cols => (self.m, self.n / self.warps),
        }
    }

    /// Builds the CTA program: one `Body` stage per warp.
    ///
    /// # Errors
    /// Those of [`Self::validate`]; a `layout` whose tiles are too large
    /// ([`LayoutSpec::tile`]) or break ldmatrix's 16-byte rows; tiles over the per-block shared
    /// memory of `arch`.
    pub fn build(&self, layout: &LayoutSpec, arch: Arch) -> Result<CtaProgram, SimError> {
        self.validate()?;
        let (tiles, smem) = place_program_tiles(
            layout,
            arch,
            &[(TileId::A, self.m, self.k), (TileId::B, self.n, self.k)],
        )?;
        let (mw, nw) = self.warp_share();
        let warps = (0..self.warps)
            .map(|w| {
                let (m0, n0) = match self.split {
                    Split::Rows => (w * mw, 0),
                    Split::Cols => (0, w * nw),
                };
                let mut instrs = Vec::new();
                WarpGemm {
                    product: Product::AB,
                    a: ASource::Smem(&tiles[0]),
                    b: BSource::NK(&tiles[1]),
                    m0,
                    m_len: mw,
                    n0,
                    n_len: nw,
                    k_len: self.k,
                }
                .emit(&mut instrs);
                WarpProgram {
                    warp: w,
                    stages: vec![Stage {
                        kind: StageKind::Body,
                        step: None,
                        instrs,
                    }],
                }
            })
            .collect();
        finish(tiles, smem, arch, warps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::arch::Arch;
    use crate::sim::layout::LayoutSpec;

    fn t(m: u32, n: u32, k: u32, warps: u32, split: Split) -> GemmTiling {
        GemmTiling {
            m,
            n,
            k,
            warps,
            split,
        }
    }

    // Third mutation round (2026-12-01): the article's four cases and the CLI's spellings.

    #[test]
    fn split_parses_its_aliases() {
        for s in ["rows", "row", "m"] {
            assert_eq!(Split::parse(s).unwrap(), Split::Rows, "{s}");
        }
        for s in ["cols", "col", "n"] {
            assert_eq!(Split::parse(s).unwrap(), Split::Cols, "{s}");
        }
        assert!(Split::parse("k").is_err());
    }

    #[test]
    fn the_four_cases_of_the_article() {
        let case = |warps, k| t(64, 64, k, warps, Split::Rows).case();
        assert_eq!(case(1, 16), GemmCase::OneWarpK16);
        assert_eq!(case(4, 16), GemmCase::WarpsK16);
        assert_eq!(case(1, 64), GemmCase::OneWarpK);
        assert_eq!(case(4, 64), GemmCase::WarpsK);
        assert_eq!(GemmCase::OneWarpK16.describe(), "one warp, K = 16");
        assert_eq!(GemmCase::WarpsK16.describe(), "n warps, K = 16");
        assert_eq!(GemmCase::OneWarpK.describe(), "one warp, K ≠ 16");
        assert_eq!(GemmCase::WarpsK.describe(), "n warps, K ≠ 16");
    }

    /// M = 64 by rows over 4 warps: 16 rows each, all 32 columns; N = 32 by columns: 8 each.
    /// 2 warps cannot share M = 16 (one 16-row slab) or N = 16.
    #[test]
    fn warps_share_whole_slabs() {
        assert_eq!(t(64, 32, 16, 4, Split::Rows).warp_share(), (16, 32));
        assert_eq!(t(64, 32, 16, 4, Split::Cols).warp_share(), (64, 8));
        assert!(t(64, 32, 16, 4, Split::Rows).validate().is_ok());
        let e = t(16, 64, 16, 2, Split::Rows).validate().unwrap_err();
        assert!(
            matches!(&e, SimError::WarpSplit { warps: 2, slabs: 1, slab, .. } if slab == "16-row"),
            "{e}"
        );
        let e = t(64, 16, 16, 2, Split::Cols).validate().unwrap_err();
        assert!(
            matches!(&e, SimError::WarpSplit { warps: 2, slabs: 1, slab, .. } if slab == "16-column"),
            "{e}"
        );
        assert!(matches!(
            t(24, 64, 16, 1, Split::Rows).validate(),
            Err(SimError::NotMultiple { param: "--m", .. })
        ));
    }

    // Tile placement and warp limits (build.rs), through GemmTiling::build / validate.

    /// sm_90 allows 227 KiB = 232,448 bytes per block. A 16×32 f16 (1,024 bytes, so B starts at
    /// 1,024, a multiple of the 1,024-byte tile alignment) and B 3616×32 (231,424 bytes),
    /// row-major without padding: exactly the limit, accepted. N = 3632 is 1,024 bytes over, and
    /// refused from the unpadded sizes already.
    #[test]
    fn tiles_exactly_at_the_limit_fit() {
        let cta = t(16, 3616, 32, 1, Split::Rows)
            .build(&LayoutSpec::row(), Arch::Sm90)
            .unwrap();
        assert_eq!(cta.smem_bytes, 232_448);
        let e = t(16, 3632, 32, 1, Split::Rows)
            .build(&LayoutSpec::row(), Arch::Sm90)
            .unwrap_err();
        assert!(
            matches!(
                e,
                SimError::SharedMemory {
                    needed: 233_472,
                    lower_bound: true,
                    limit: 232_448,
                    ..
                }
            ),
            "{e}"
        );
    }

    /// A tile far too large is refused from its unpadded size (a lower bound), before any layout
    /// is built: A 2^20 × 1024 f16 alone is 2 GiB.
    #[test]
    fn huge_tiles_fail_on_the_unpadded_size() {
        let e = t(1 << 20, 16, 1024, 1, Split::Rows)
            .build(&LayoutSpec::row(), Arch::Sm90)
            .unwrap_err();
        let want: u128 = 2 * (1 << 20) * 1024 + 2 * 16 * 1024;
        assert!(
            matches!(e, SimError::SharedMemory { needed, lower_bound: true, .. } if needed == want),
            "{e}"
        );
    }

    /// 1..=32 warps (1,024 threads): M = 512 has 32 slabs of 16 rows.
    #[test]
    fn warps_from_1_to_32() {
        assert!(t(512, 16, 16, 32, Split::Rows).validate().is_ok());
        for w in [0, 33] {
            assert!(
                matches!(
                    t(512, 16, 16, w, Split::Rows).validate(),
                    Err(SimError::NotAllowed {
                        param: "--warps",
                        ..
                    })
                ),
                "{w}"
            );
        }
    }
}
