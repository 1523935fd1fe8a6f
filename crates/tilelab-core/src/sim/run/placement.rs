//! Where tiles sit in shared memory: the one placement rule of every tiling
//! ([`crate::sim::program`]) and every lesson.
//!
//! Tiles are placed one after another in the order given. Each starts at the next multiple of
//! its alignment ([`tile_alignment`]): [`TILE_ALIGN_BYTES`], or the period of its swizzle in
//! bytes when that is larger, so that a swizzle's pattern does not depend on where the tile
//! lies (`Swizzle<3,3,3>` on f16 repeats every 1024 bytes, `Swizzle<3,3,4>` every 2048). Every
//! tile also starts in bank 0. All arithmetic is checked: a placement that does not fit the
//! architecture's per-block shared memory is an error, never a wrapped address.

use std::fmt;

use crate::sim::arch::Arch;
use crate::sim::error::SimError;
use crate::sim::layout::Layout;

/// Tiles start at multiples of this many bytes (at least; see [`tile_alignment`]).
pub const TILE_ALIGN_BYTES: u32 = 1024;

/// The alignment of a tile in bytes: [`TILE_ALIGN_BYTES`] or its swizzle's period
/// (`2^(B+M+S)` elements) in bytes, whichever is larger. `u64`, since a swizzle's period may
/// exceed any shared memory.
pub fn tile_alignment(layout: &Layout) -> u64 {
    let period = layout
        .swizzle
        .map_or(0, |s| s.period() * layout.elem_bytes as u64);
    period.max(TILE_ALIGN_BYTES as u64)
}

/// The result of [`place_tiles`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Byte offset of each tile in shared memory, in the order given.
    pub bases: Vec<u32>,
    /// One past the last byte of the last tile: the shared memory the tiles need, in bytes.
    pub end: u32,
}

/// Places tiles `(name, layout)` one after another by the rule of the module docs, on `arch`.
///
/// # Errors
/// [`SimError::SharedMemory`] naming every tile and its size when the tiles do not fit
/// `arch`'s per-block shared memory.
pub fn place_tiles<N: fmt::Display>(
    tiles: &[(N, Layout)],
    arch: Arch,
) -> Result<Placement, SimError> {
    let limit = arch.limits().smem_per_block_bytes;
    // u64: an alignment is at most 2^31 elements of 8 bytes and a size below 2^32 bytes, so a
    // handful of tiles cannot overflow it.
    let mut bases = Vec::with_capacity(tiles.len());
    let mut next = 0u64;
    for (_, layout) in tiles {
        let align = tile_alignment(layout);
        let base = next.div_ceil(align) * align;
        bases.push(base);
        next = base + layout.size_bytes() as u64;
    }
    if next > limit as u64 {
        let parts = crate::text::list(
            tiles
                .iter()
                .map(|(name, l)| format!("{name} {}x{} = {} B", l.rows, l.cols, l.size_bytes())),
        );
        return Err(SimError::SharedMemory {
            needed: next.into(),
            lower_bound: false,
            parts,
            limit,
            arch: arch.to_string(),
        });
    }
    // Every base is below `next`, which fits in u32.
    Ok(Placement {
        bases: bases.into_iter().map(|b| b as u32).collect(),
        end: next as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_start_at_1024_or_their_swizzle_period() {
        // 16x128 f16 tiles (4096 B); a 16x16 one (512 B) pushes the next to 1024-byte boundaries,
        // Swizzle<3,3,4> on f16 to 2048-byte ones.
        let row = |r, c| Layout::parse("row", r, c, 2).unwrap();
        let p = place_tiles(&[("P", row(16, 16)), ("Q", row(16, 128))], Arch::Sm90).unwrap();
        assert_eq!((p.bases, p.end), (vec![0, 1024], 1024 + 4096));
        let sw = |r, c| Layout::parse("swizzle:3,3,4", r, c, 2).unwrap();
        let p = place_tiles(&[("P", row(16, 16)), ("K", sw(16, 128))], Arch::Sm90).unwrap();
        assert_eq!(p.bases, vec![0, 2048]);
        assert_eq!(tile_alignment(&sw(16, 128)), 2048);
        assert_eq!(tile_alignment(&row(1, 1)), 1024);
    }

    #[test]
    fn tiles_over_the_limit_are_named() {
        // sm_75: 64 KiB per block; three 128x128 f16 tiles need 96 KiB.
        let l = Layout::parse("row", 128, 128, 2).unwrap();
        let e = place_tiles(&[("Q", l), ("K", l), ("V", l)], Arch::Sm75)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("98304 bytes") && e.contains("K 128x128 = 32768 B") && e.contains("65536"),
            "{e}"
        );
        // A swizzle period beyond any shared memory is an error, not a wrapped base.
        let huge = Layout::parse("swizzle:8,8,12", 1, 8, 8).unwrap();
        assert!(place_tiles(&[("A", l), ("B", huge)], Arch::Sm90).is_err());
    }
}
