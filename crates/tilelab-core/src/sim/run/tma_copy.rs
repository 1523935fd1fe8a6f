//! One TMA copy as `tilelab sim tma` shows it, run through the one executor
//! ([`crate::sim::exec::execute`]) on sm_90's shared memory: a tensor-map box load or store
//! ([`tensor_copy`]) or a bulk copy without a tensor map ([`bulk_copy`]), with where each box
//! row's 16-byte chunks land ([`TensorCopy::lines`]) and what reading the box back costs
//! ([`crate::sim::readback`]).
//!
//! Global memory is not allocated for a tensor copy: every byte reads as a pattern of its
//! address (`address % 251`), writes are counted. The tensor (or the bulk source) sits at
//! [`TENSOR_BASE`].

use crate::sim::arch::Arch;
use crate::sim::error::SimError;
use crate::sim::exec::{self, BulkKind, BulkOp, BulkStep, FlatGlobal, GlobalMemory};
use crate::sim::instr::{self, SassClass};
use crate::sim::readback;
use crate::sim::smem::SharedMemory;
use crate::sim::stats::AccessStats;
use crate::sim::tma::{MAX_RANK, TensorMap, TmaBox, TmaDtype, TmaSwizzle};

/// The global byte address of the tensor (and of a bulk copy's global side).
pub const TENSOR_BASE: u64 = 0x7f00_0000_0000;

/// Global memory of a tensor copy: every byte reads as `address % 251` (nothing is allocated
/// for the tensor), writes are counted.
struct PatternGlobal {
    written: u64,
}

impl GlobalMemory for PatternGlobal {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), SimError> {
        for (i, b) in out.iter_mut().enumerate() {
            *b = (addr.wrapping_add(i as u64) % 251) as u8;
        }
        Ok(())
    }
    fn write(&mut self, _addr: u64, data: &[u8]) -> Result<(), SimError> {
        self.written += data.len() as u64;
        Ok(())
    }
}

/// The tensor map of a 2-D box given as rows × columns: `dims` = the extent (`extent_rows` ×
/// `extent_cols` elements), the row stride the extent's row bytes rounded up to 16, the box
/// `box_rows` × `box_cols` elements (columns contiguous: `boxDim[0]` = `box_cols`), element
/// stride 1.
///
/// # Errors
/// [`TensorMap::new`]'s rules.
pub fn tiled_2d(
    dtype: TmaDtype,
    box_rows: u32,
    box_cols: u32,
    extent_rows: u64,
    extent_cols: u64,
    swizzle: TmaSwizzle,
) -> Result<TensorMap, SimError> {
    let stride = (extent_cols * u64::from(dtype.bytes())).next_multiple_of(16);
    TensorMap::new(
        dtype,
        &[extent_cols, extent_rows],
        &[stride],
        &[box_cols, box_rows],
        None,
        swizzle,
    )
}

/// One tensor-map copy to run: the map, the box's start coordinates and where in shared
/// memory the box sits.
#[derive(Clone, Copy, Debug)]
pub struct TensorCopyCase<'m> {
    /// The tensor map (rank 1..=5).
    pub map: &'m TensorMap,
    /// Box start coordinates in elements, innermost first (`map.rank` of them used; may be
    /// negative or past the extent).
    pub coords: [i64; MAX_RANK],
    /// Shared-memory byte address of the box (a multiple of 128).
    pub base: u32,
    /// The store direction (shared → global, `UTMASTG`) instead of the load.
    pub store: bool,
}

/// What [`tensor_copy`] ran and found.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorCopy {
    /// The PTX instruction (`cp.async.bulk.tensor.{N}d...`).
    pub ptx: String,
    /// Its SASS (`UTMALDG.2D`, `UTMASTG.3D`, ...).
    pub sass: String,
    /// The box as it lies in shared memory (rows: the product of the outer box dims).
    pub smem_box: TmaBox,
    /// The executor's step: transaction bytes, global bytes, out-of-bounds elements.
    pub step: BulkStep,
    /// Per 128-byte line of shared memory from the base, which box row and 16-byte chunk each
    /// of its 8 chunks holds (`None`: padding that is not written); a shorter last line for
    /// small boxes.
    pub lines: Vec<Vec<Option<(u32, u32)>>>,
    /// `ldmatrix.x4` over every 16-row × 32-byte block ([`readback::tma_ldmatrix_x4`]).
    pub ldmatrix_x4: Option<AccessStats>,
    /// Every 8-row × 16-byte core matrix as one unit ([`readback::tma_core_matrices`]).
    pub core_matrices: Option<AccessStats>,
}

/// Runs the load (or store) of `case` through the executor on sm_90's shared memory, the
/// tensor at [`TENSOR_BASE`] in patterned global memory.
///
/// # Errors
/// The box's shared-memory rules ([`TensorMap::smem_box`]) and the executor's.
pub fn tensor_copy(case: &TensorCopyCase) -> Result<TensorCopy, SimError> {
    let TensorCopyCase {
        map,
        coords,
        base,
        store,
    } = *case;
    let smem_box = map.smem_box(base)?;
    let mut smem = SharedMemory::for_arch(Arch::Sm90);
    let mut g = PatternGlobal { written: 0 };
    let kind = if store {
        BulkKind::TensorStore {
            map,
            tensor: TENSOR_BASE,
            coords,
            smem: base,
        }
    } else {
        BulkKind::TensorLoad {
            map,
            tensor: TENSOR_BASE,
            coords,
            smem: base,
        }
    };
    let step = exec::execute(
        &mut smem,
        BulkOp {
            kind,
            global: &mut g,
        },
    )?;
    let (class, ptx) = if store {
        (
            SassClass::Utmastg,
            format!(
                "cp.async.bulk.tensor.{}.global.shared::cta.tile.bulk_group",
                map.dim_qualifier()
            ),
        )
    } else {
        (
            SassClass::Utmaldg,
            format!(
                "cp.async.bulk.tensor.{}.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                map.dim_qualifier()
            ),
        )
    };
    let lines = smem_box
        .smem_chunks()
        .chunks(8)
        .map(<[_]>::to_vec)
        .collect();
    Ok(TensorCopy {
        ptx,
        sass: instr::tma_sass(class, map.rank),
        step,
        lines,
        ldmatrix_x4: readback::tma_ldmatrix_x4(&smem_box),
        core_matrices: readback::tma_core_matrices(&smem_box),
        smem_box,
    })
}

/// What [`bulk_copy`] ran and found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkCopy {
    /// The PTX instruction of the instruction table's row (`cp.async.bulk...`).
    pub ptx: &'static str,
    /// Its SASS form (`UBLKCP`).
    pub sass: &'static str,
    /// The executor's step: transaction bytes and the shared-memory ranges written.
    pub step: BulkStep,
}

/// Runs a bulk copy (`cp.async.bulk`, no tensor map, no swizzle) of `bytes` bytes between
/// shared byte address `smem` and [`TENSOR_BASE`] (shared → global when `store`) through the
/// executor on sm_90's shared memory.
///
/// # Errors
/// The executor's: alignment (16 bytes), size (a multiple of 16), the shared-memory range.
pub fn bulk_copy(smem: u32, bytes: u32, store: bool) -> Result<BulkCopy, SimError> {
    let mut shared = SharedMemory::for_arch(Arch::Sm90);
    let mut g = FlatGlobal {
        base: TENSOR_BASE,
        bytes: (0..bytes).map(|i| (i % 251) as u8).collect(),
    };
    let kind = if store {
        BulkKind::CopyToGlobal {
            smem,
            global: TENSOR_BASE,
            bytes,
        }
    } else {
        BulkKind::CopyToShared {
            smem,
            global: TENSOR_BASE,
            bytes,
        }
    };
    let step = exec::execute(
        &mut shared,
        BulkOp {
            kind,
            global: &mut g,
        },
    )?;
    let direction = if store {
        "global.shared"
    } else {
        "shared::cluster.global"
    };
    let row = instr::TABLE
        .iter()
        .find(|r| r.sass == SassClass::Ublkcp && r.ptx.contains(direction))
        .copied()
        .unwrap_or(instr::TABLE[0]);
    Ok(BulkCopy {
        ptx: row.ptx,
        sass: row.sass_form,
        step,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values `tests/sim_hopper_cli.rs` checks through `tilelab sim tma`.
    #[test]
    fn a_box_past_the_extent_counts_the_whole_box() {
        // --extent 40x50: a 64x64 f16 box of which 64*64 - 40*50 elements lie outside.
        let map = tiled_2d(TmaDtype::F16, 64, 64, 40, 50, TmaSwizzle::B128).unwrap();
        let r = tensor_copy(&TensorCopyCase {
            map: &map,
            coords: [0; MAX_RANK],
            base: 0,
            store: false,
        })
        .unwrap();
        assert_eq!(r.step.tx_bytes, 8192);
        assert_eq!(r.step.out_of_bounds, 64 * 64 - 40 * 50);
        assert_eq!(r.step.global_read, 4000);
        assert_eq!(r.smem_box.size_bytes(), 8192);
    }

    #[test]
    fn a_bulk_copy_writes_its_bytes_contiguously() {
        let r = bulk_copy(16, 256, false).unwrap();
        assert_eq!(r.step.tx_bytes, 256);
        assert_eq!(r.step.smem_written, vec![16..272]);
        assert_eq!(r.sass, "UBLKCP.S.G");
        let r = bulk_copy(0, 64, true).unwrap();
        assert_eq!(r.ptx, "cp.async.bulk.global.shared::cta.bulk_group");
        assert!(bulk_copy(0, 24, false).is_err());
    }
}
