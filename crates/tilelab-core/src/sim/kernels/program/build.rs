//! What both builders share: checks of the tiling's numbers, the placement of its tiles (by
//! [`crate::sim::placement`]'s rule, plus ldmatrix's 16-byte row chunks) and the final
//! validation of every request.

use super::{CtaProgram, ELEM_BYTES, SmemTile, TileId, WarpInstr, WarpProgram};
use crate::sim::arch::Arch;
use crate::sim::bank::SharedMemoryConfig;
use crate::sim::error::SimError;
use crate::sim::exec::check_request;
use crate::sim::layout::{Layout, LayoutSpec};
use crate::sim::placement::place_tiles;

pub(super) fn check_multiple(flag: &'static str, v: u32, why: &str) -> Result<(), SimError> {
    if v == 0 || !v.is_multiple_of(16) {
        return Err(SimError::NotMultiple {
            param: flag,
            value: v.into(),
            of: format!("16 ({why})"),
            allowed: "16, 32, 48, …".into(),
        });
    }
    Ok(())
}

/// Checks that `warps` warps can share `slabs` slabs (named `slab`, e.g. `16-row`) of `what` evenly.
pub(super) fn check_share(warps: u32, slabs: u32, slab: &str, what: &str) -> Result<(), SimError> {
    if warps > slabs || !slabs.is_multiple_of(warps) {
        return Err(SimError::WarpSplit {
            warps,
            slabs,
            slab: slab.to_string(),
            what: what.to_string(),
        });
    }
    Ok(())
}

pub(super) fn check_warps(warps: u32) -> Result<(), SimError> {
    if warps == 0 || warps > 32 {
        return Err(SimError::NotAllowed {
            param: "--warps",
            value: warps.into(),
            allowed: "1..=32 (at most 1024 threads per block)".into(),
        });
    }
    Ok(())
}

/// Places tiles (rows, cols) with the layout `spec` by [`place_tiles`]' rule, and checks that
/// every 16-byte row chunk stays contiguous and aligned (ldmatrix reads whole 16-byte rows).
pub(super) fn place_program_tiles(
    spec: &LayoutSpec,
    arch: Arch,
    shapes: &[(TileId, u32, u32)],
) -> Result<(Vec<SmemTile>, u32), SimError> {
    // The unpadded bytes first: padding and alignment only add, and a huge tile must fail here,
    // before its layout is built row by row.
    let limit = arch.limits().smem_per_block_bytes;
    // u128: three tiles of up to (2^32)^2 two-byte elements each cannot overflow it.
    let tile_bytes = |r: u32, c: u32| u128::from(r) * u128::from(c) * u128::from(ELEM_BYTES);
    let raw: u128 = shapes.iter().map(|&(_, r, c)| tile_bytes(r, c)).sum();
    if raw > u128::from(limit) {
        let parts = crate::text::list(
            shapes
                .iter()
                .map(|&(id, r, c)| format!("{id} {r}x{c} = {} B", tile_bytes(r, c))),
        );
        return Err(SimError::SharedMemory {
            needed: raw,
            lower_bound: true,
            parts,
            limit,
            arch: arch.to_string(),
        });
    }
    let mut layouts = Vec::with_capacity(shapes.len());
    for &(id, rows, cols) in shapes {
        let layout = spec.tile(rows, cols, ELEM_BYTES)?;
        check_row_chunks(spec, id, &layout)?;
        layouts.push((id, layout));
    }
    let placed = place_tiles(&layouts, arch)?;
    let tiles = layouts
        .iter()
        .zip(&placed.bases)
        .map(|(&(id, layout), &base_byte)| SmemTile {
            id,
            layout,
            base_byte,
        })
        .collect();
    Ok((tiles, placed.end))
}

pub(super) fn check_row_chunks(spec: &LayoutSpec, id: TileId, l: &Layout) -> Result<(), SimError> {
    for r in 0..l.rows {
        for c in (0..l.cols).step_by(8) {
            if !l.byte_offset(r, c).is_multiple_of(16) || !l.is_contiguous(r, c, 8, true) {
                return Err(SimError::AccessUnfit {
                    access: "ldmatrix".into(),
                    reason: format!(
                        "layout '{spec}' breaks the 16-byte row chunk at row {r}, columns {c}..{} of tile {id} ({}x{} f16): ldmatrix reads 8 contiguous f16 at a 16-byte aligned address; allowed: row, pad:N with N a multiple of 8, swizzle:B,M,S with M >= 3",
                        c + 7,
                        l.rows,
                        l.cols
                    ),
                });
            }
        }
    }
    Ok(())
}

pub(super) fn finish(
    tiles: Vec<SmemTile>,
    smem_bytes: u32,
    arch: Arch,
    warps: Vec<WarpProgram>,
) -> Result<CtaProgram, SimError> {
    let cfg = SharedMemoryConfig::for_arch(arch);
    for w in &warps {
        for s in &w.stages {
            for i in &s.instrs {
                if let WarpInstr::Smem(op) = i {
                    check_request(&op.request, &cfg)?;
                }
            }
        }
    }
    Ok(CtaProgram {
        tiles,
        warps,
        smem_bytes,
    })
}
