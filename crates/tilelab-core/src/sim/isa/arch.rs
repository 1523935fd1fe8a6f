//! Per-architecture limits the simulator needs: shared-memory size (for address checks), the
//! occupancy limits of each SM and the launch limits (grid and block dimensions).
//!
//! Sources: CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"
//! (CUDA 13: §5.1.3, Tables 30 and 31; columns 7.5, 8.0, 8.6, 8.9, 9.0:
//! grid and block dimensions, threads per block, resident blocks, warps and threads per SM,
//! registers per SM/block/thread, shared memory per SM and per block, local memory per thread,
//! and the 1 KB of shared memory reserved per block from 8.0 on) and the CUDA
//! Occupancy Calculator as shipped in `cuda_occupancy.h` (`cudaOccSMemAllocationGranularity`:
//! 256 bytes on 7.x, 128 on 8.x/9.x; `cudaOccRegAllocationGranularity`: 256 registers per warp;
//! `cudaOccSubPartitionsPerMultiprocessor`: 4; `cudaOccAlignUpShmemSizeVoltaPlus`: Turing's
//! carve-out is at most 64 KB).

use std::fmt;

use crate::sim::error::SimError;

/// Streaming multiprocessors of an NVIDIA H200 (SXM, sm_90: 132 SMs, as `cudaDevAttrMultiProcessorCount`
/// reports on the H200 `tilelab verify` ran on): the default size of persistent grids.
pub const H200_SMS: u32 = 132;

/// A GPU architecture (compute capability) the simulator knows the limits of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    /// Turing, compute capability 7.5 (e.g. RTX 2080, T4): the card of the FA v1→v2 article.
    Sm75,
    /// Ampere A100, compute capability 8.0.
    Sm80,
    /// Ampere GA10x, compute capability 8.6.
    Sm86,
    /// Ada, compute capability 8.9.
    Sm89,
    /// Hopper H100/H200, compute capability 9.0 (the card `tilelab verify` was run on).
    Sm90,
}

/// Per-SM and per-block limits of one architecture. Units in each field's name or doc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchLimits {
    /// Maximum resident threads per SM.
    pub max_threads_per_sm: u32,
    /// Maximum resident warps per SM.
    pub max_warps_per_sm: u32,
    /// Maximum resident blocks (CTAs) per SM.
    pub max_blocks_per_sm: u32,
    /// Maximum threads per block.
    pub max_threads_per_block: u32,
    /// Maximum grid dimensions in blocks (x, y, z): 2^31 − 1, 65,535, 65,535 on every
    /// architecture here.
    pub max_grid_dim: [u32; 3],
    /// Maximum block dimensions in threads (x, y, z): 1,024, 1,024, 64 (the product is also
    /// limited, by [`Self::max_threads_per_block`]).
    pub max_block_dim: [u32; 3],
    /// Maximum local memory per thread, bytes (512 KB).
    pub max_local_bytes_per_thread: u32,
    /// 32-bit registers per SM.
    pub regs_per_sm: u32,
    /// Maximum 32-bit registers per thread.
    pub max_regs_per_thread: u32,
    /// Registers are allocated per warp in units of this many registers.
    pub reg_alloc_unit: u32,
    /// Maximum 32-bit registers per block.
    pub max_regs_per_block: u32,
    /// The register file is split into this many sub-partitions, and a warp's registers come
    /// from one of them (`cuda_occupancy.h`, `cudaOccMaxBlocksPerSMRegsLimit`).
    pub reg_sub_partitions: u32,
    /// Shared memory per SM usable by blocks, bytes (the largest carve-out).
    pub smem_per_sm_bytes: u32,
    /// Maximum shared memory one block may use (with the opt-in attribute above 48 KB), bytes.
    pub smem_per_block_bytes: u32,
    /// Shared memory the driver reserves per resident block, bytes.
    pub smem_reserved_per_block_bytes: u32,
    /// Shared memory is allocated in units of this many bytes.
    pub smem_alloc_unit_bytes: u32,
    /// Constant memory a module's `.const` variables may take, bytes (Table 31, "Total amount
    /// of constant memory": 64 KB on every compute capability listed).
    pub const_bytes: u32,
}

/// All architectures, in order.
pub const ALL_ARCHES: [Arch; 5] = [Arch::Sm75, Arch::Sm80, Arch::Sm86, Arch::Sm89, Arch::Sm90];

impl Arch {
    /// Parses `sm_75`, `sm_80`, `sm_86`, `sm_89`, `sm_90` (also `75`, `9.0`, `sm90`).
    ///
    /// # Errors
    /// [`SimError::Unknown`] naming the value and the allowed ones.
    pub fn parse(s: &str) -> Result<Arch, SimError> {
        let t = s.trim().to_ascii_lowercase().replace(['_', '.'], "");
        let t = t.strip_prefix("sm").unwrap_or(&t);
        Ok(match t {
            "75" => Arch::Sm75,
            "80" => Arch::Sm80,
            "86" => Arch::Sm86,
            "89" => Arch::Sm89,
            "90" | "90a" => Arch::Sm90,
            _ => {
                return Err(SimError::Unknown {
                    what: "architecture",
                    given: s.to_string(),
                    allowed: "sm_75, sm_80, sm_86, sm_89, sm_90",
                });
            }
        })
    }

    /// Compute capability as major*10+minor (75, 80, 86, 89, 90).
    pub fn cc(self) -> u32 {
        match self {
            Arch::Sm75 => 75,
            Arch::Sm80 => 80,
            Arch::Sm86 => 86,
            Arch::Sm89 => 89,
            Arch::Sm90 => 90,
        }
    }

    /// From a device's compute capability (major, minor), if known.
    pub fn from_cc(major: i32, minor: i32) -> Option<Arch> {
        Arch::parse(&format!("sm_{major}{minor}")).ok()
    }

    /// The limits table of this architecture (CUDA C++ Programming Guide, compute capabilities).
    /// A `const fn`, so that limits elsewhere (e.g. `ptx::params::check_smem`'s) are read from
    /// this table rather than written again.
    pub const fn limits(self) -> ArchLimits {
        const KB: u32 = 1024;
        let base = ArchLimits {
            max_threads_per_sm: 2048,
            max_warps_per_sm: 64,
            max_blocks_per_sm: 32,
            max_threads_per_block: 1024,
            max_grid_dim: [(1 << 31) - 1, 65_535, 65_535],
            max_block_dim: [1024, 1024, 64],
            max_local_bytes_per_thread: 512 * KB,
            regs_per_sm: 65536,
            max_regs_per_thread: 255,
            reg_alloc_unit: 256,
            max_regs_per_block: 65536,
            reg_sub_partitions: 4,
            smem_per_sm_bytes: 228 * KB,
            smem_per_block_bytes: 227 * KB,
            smem_reserved_per_block_bytes: KB,
            smem_alloc_unit_bytes: 128,
            const_bytes: 64 * KB,
        };
        match self {
            Arch::Sm75 => ArchLimits {
                max_threads_per_sm: 1024,
                max_warps_per_sm: 32,
                max_blocks_per_sm: 16,
                smem_per_sm_bytes: 64 * KB,
                smem_per_block_bytes: 64 * KB,
                smem_reserved_per_block_bytes: 0,
                smem_alloc_unit_bytes: 256,
                ..base
            },
            Arch::Sm80 => ArchLimits {
                smem_per_sm_bytes: 164 * KB,
                smem_per_block_bytes: 163 * KB,
                ..base
            },
            Arch::Sm86 => ArchLimits {
                max_threads_per_sm: 1536,
                max_warps_per_sm: 48,
                max_blocks_per_sm: 16,
                smem_per_sm_bytes: 100 * KB,
                smem_per_block_bytes: 99 * KB,
                ..base
            },
            Arch::Sm89 => ArchLimits {
                max_threads_per_sm: 1536,
                max_warps_per_sm: 48,
                max_blocks_per_sm: 24,
                smem_per_sm_bytes: 100 * KB,
                smem_per_block_bytes: 99 * KB,
                ..base
            },
            Arch::Sm90 => base,
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}", self.cc())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CUDA C++ Programming Guide (CUDA 13), §5.1.3, Table 30 "Device and Streaming
    /// Multiprocessor (SM) Information per Compute Capability" (resident blocks, warps and
    /// threads per SM) and Table 31 "Memory Information per Compute Capability" (shared memory
    /// per SM and per block, KB = 1024 bytes; registers).
    #[test]
    fn limits_are_the_programming_guides_table() {
        const KB: u32 = 1024;
        // arch, blocks/SM, warps/SM, threads/SM, smem/SM, smem/block
        for (a, blocks, warps, threads, sm, block) in [
            (Arch::Sm75, 16, 32, 1024, 64 * KB, 64 * KB),
            (Arch::Sm80, 32, 64, 2048, 164 * KB, 163 * KB),
            (Arch::Sm86, 16, 48, 1536, 100 * KB, 99 * KB),
            (Arch::Sm89, 24, 48, 1536, 100 * KB, 99 * KB),
            (Arch::Sm90, 32, 64, 2048, 228 * KB, 227 * KB),
        ] {
            let l = a.limits();
            assert_eq!(
                (
                    l.max_blocks_per_sm,
                    l.max_warps_per_sm,
                    l.max_threads_per_sm,
                    l.smem_per_sm_bytes,
                    l.smem_per_block_bytes
                ),
                (blocks, warps, threads, sm, block),
                "{a}"
            );
            assert_eq!(
                (l.regs_per_sm, l.max_regs_per_block, l.max_regs_per_thread),
                (64 * KB, 64 * KB, 255),
                "{a}"
            );
            assert_eq!(l.max_threads_per_block, 1024, "{a}");
            // Table 30: "Maximum x-dimension of a grid of thread blocks" 2^31-1, "Maximum y- or
            // z-dimension of a grid of thread blocks" 65535, "Maximum x- or y-dimension of a
            // block" 1024, "Maximum z-dimension of a block" 64; Table 31: "Maximum amount of
            // local memory per thread" 512 KB.
            assert_eq!(l.max_grid_dim, [2_147_483_647, 65_535, 65_535], "{a}");
            assert_eq!(l.max_block_dim, [1024, 1024, 64], "{a}");
            assert_eq!(l.max_local_bytes_per_thread, 524_288, "{a}");
            assert_eq!(l.const_bytes, 64 * KB, "{a}");
        }
    }

    /// Every spelling, the compute capability both ways, and the shared-memory allocation
    /// details: 256-byte units and no reserved bytes on sm_75, 128-byte units and 1 KB reserved
    /// per block from sm_80 on (the CUDA Occupancy Calculator's GPU data; the Programming
    /// Guide's compute-capability sections for 8.x and 9.0 reserve 1 KB per block for the
    /// system).
    #[test]
    fn spellings_capabilities_and_allocation_units() {
        for (a, cc, texts) in [
            (Arch::Sm75, 75, ["sm_75", "75", "7.5"]),
            (Arch::Sm80, 80, ["sm_80", "80", "SM80"]),
            (Arch::Sm86, 86, ["sm_86", "86", "8.6"]),
            (Arch::Sm89, 89, ["sm_89", "89", "sm89"]),
            (Arch::Sm90, 90, ["sm_90", "sm_90a", "9.0"]),
        ] {
            for t in texts {
                assert_eq!(Arch::parse(t).unwrap(), a, "{t}");
            }
            assert_eq!(a.cc(), cc);
            assert_eq!(Arch::from_cc((cc / 10) as i32, (cc % 10) as i32), Some(a));
            assert_eq!(a.to_string(), format!("sm_{cc}"));
            let l = a.limits();
            let (unit, reserved) = if a == Arch::Sm75 {
                (256, 0)
            } else {
                (128, 1024)
            };
            assert_eq!(
                (l.smem_alloc_unit_bytes, l.smem_reserved_per_block_bytes),
                (unit, reserved),
                "{a}"
            );
        }
        assert_eq!(Arch::from_cc(7, 0), None);
    }

    #[test]
    fn hopper_block_limit_is_227_kib() {
        assert_eq!(Arch::Sm90.limits().smem_per_block_bytes, 232_448);
        assert_eq!(Arch::parse("sm_90").unwrap(), Arch::Sm90);
        assert_eq!(Arch::parse("7.5").unwrap(), Arch::Sm75);
        assert!(
            Arch::parse("sm_70")
                .unwrap_err()
                .to_string()
                .contains("sm_75")
        );
    }
}
