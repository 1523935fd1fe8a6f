//! The tiled GEMM lesson kernel (`kernels/gemm_tile.cu`) specialised to one simulator tiling:
//! the same warp split, ldmatrix orders and shared-memory layout as
//! [`crate::sim::program::GemmTiling::build`], so its SASS and its Nsight Compute counters can be
//! compared with the simulator's program.

use crate::sim::SimError;
use crate::sim::layout::Order;
use crate::sim::program::{CtaProgram, GemmTiling, Split, TileId};

use super::GEMM_TILE_CU;

/// The kernel source with the `#define`s of `t` and the tile placement of `cta` prepended.
///
/// # Errors
/// [`SimError::Invalid`] for layouts the kernel does not implement (column-major tiles).
pub fn source(t: &GemmTiling, cta: &CtaProgram) -> Result<String, SimError> {
    let a = cta
        .tile(TileId::A)
        .ok_or_else(|| SimError::Invalid("GEMM program without tile A".into()))?;
    let b = cta
        .tile(TileId::B)
        .ok_or_else(|| SimError::Invalid("GEMM program without tile B".into()))?;
    if a.layout.order != Order::Row || b.layout.order != Order::Row {
        return Err(SimError::Invalid(
            "the GEMM kernel implements row-major tiles (row, pad:N, swizzle:B,M,S); not 'col'"
                .into(),
        ));
    }
    let (mw, nw) = t.warp_share();
    let sw = a.layout.swizzle;
    let defs = [
        ("TL_M", t.m),
        ("TL_N", t.n),
        ("TL_K", t.k),
        ("TL_WARPS", t.warps),
        ("TL_MW", mw),
        ("TL_NW", nw),
        ("TL_SPLIT_ROWS", (t.split == Split::Rows) as u32),
        ("TL_PITCH_A", a.layout.pitch()),
        ("TL_PITCH_B", b.layout.pitch()),
        ("TL_B_BASE", b.base_byte - a.base_byte),
        ("TL_SWZ_B", sw.map_or(0, |s| s.bits)),
        ("TL_SWZ_M", sw.map_or(0, |s| s.base)),
        ("TL_SWZ_S", sw.map_or(0, |s| s.shift)),
    ];
    let mut s: String = defs
        .iter()
        .map(|(k, v)| format!("#define {k} {v}\n"))
        .collect();
    s.push_str(GEMM_TILE_CU);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::arch::Arch;

    #[test]
    fn defines_follow_the_program() {
        let t = GemmTiling {
            m: 64,
            n: 64,
            k: 128,
            warps: 4,
            split: Split::Rows,
        };
        let cta = t.build(&"pad:8".parse().unwrap(), Arch::Sm90).unwrap();
        let s = source(&t, &cta).unwrap();
        assert!(s.contains("#define TL_MW 16\n") && s.contains("#define TL_PITCH_A 136\n"));
        assert!(s.contains(&format!(
            "#define TL_B_BASE {}\n",
            cta.tile(TileId::B).unwrap().base_byte
        )));
    }
}
