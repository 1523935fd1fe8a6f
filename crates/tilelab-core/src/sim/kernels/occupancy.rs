//! Theoretical occupancy: how many blocks of a kernel fit on one SM, the active warps, the
//! occupancy (active warps / maximum warps per SM, what Nsight Compute calls "Theoretical
//! Occupancy") and the resource that limits it.
//!
//! The computation follows the CUDA Occupancy Calculator (`cuda_occupancy.h`,
//! `cudaOccMaxActiveBlocksPerMultiprocessor`) with the default shared-memory carve-out (the
//! largest), on the limits of [`Arch::limits`] (CUDA C++ Programming Guide, "Technical
//! Specifications per Compute Capability"):
//!
//! * warps: `max_warps_per_sm / ceil(threads/32)`;
//! * blocks: `max_blocks_per_sm`;
//! * registers: a warp gets `regs·32` rounded up to 256 registers, from one of 4 sub-partitions of
//!   `regs_per_sm/4`; blocks = `floor((regs_per_sm/4) / regs_per_warp) · 4 / warps_per_block`;
//! * shared memory: a block gets `smem + reserved` (1 KB from sm_80 on) rounded up to the
//!   allocation unit (256 B on sm_75, 128 B later); blocks = `smem_per_sm / that`.
//!
//! # Example: the FA v1→v2 article's v1 kernel on a Turing card
//! ```
//! use tilelab_core::sim::arch::Arch;
//! use tilelab_core::sim::occupancy::{occupancy, Limiter, OccupancyInput};
//! let r = occupancy(&OccupancyInput { arch: Arch::Sm75, threads_per_block: 128,
//!     smem_per_block_bytes: 28 * 1024, regs_per_thread: None, smem_opt_in: true }).unwrap();
//! assert_eq!((r.blocks_per_sm, r.active_warps), (2, 8));
//! assert_eq!(r.occupancy, 0.25);
//! assert_eq!(r.limiting, vec![Limiter::SharedMemory]);
//! ```

use serde::Serialize;

use crate::sim::arch::{Arch, ArchLimits};
use crate::sim::error::SimError;

/// The kernel's launch resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OccupancyInput {
    /// Architecture (serialized as `sm_75`, …).
    #[serde(serialize_with = "arch_name")]
    pub arch: Arch,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Shared memory per block (static + dynamic), bytes.
    pub smem_per_block_bytes: u32,
    /// 32-bit registers per thread; `None` leaves registers out of the limits.
    pub regs_per_thread: Option<u32>,
    /// The kernel opts in to more than 48 KB of (dynamic) shared memory per block
    /// (`cudaFuncAttributeMaxDynamicSharedMemorySize`); without it a block gets at most
    /// [`SMEM_PER_BLOCK_WITHOUT_OPT_IN_BYTES`].
    pub smem_opt_in: bool,
}

fn arch_name<S: serde::Serializer>(a: &Arch, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(a)
}

/// A resource that can limit the blocks per SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// Resident warps (threads) per SM.
    Warps,
    /// Resident blocks per SM.
    Blocks,
    /// Register file.
    Registers,
    /// Shared memory.
    SharedMemory,
}

impl Limiter {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Limiter::Warps => "warps",
            Limiter::Blocks => "blocks",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared memory",
        }
    }
}

/// The blocks per SM each resource allows (`None`: that resource sets no limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// From resident warps.
    pub warps: u32,
    /// From resident blocks.
    pub blocks: u32,
    /// From registers (`None` when no register count was given).
    pub registers: Option<u32>,
    /// From shared memory (`None` for a block using none).
    pub shared_memory: Option<u32>,
}

/// The result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OccupancyReport {
    /// The input.
    pub input: OccupancyInput,
    /// The architecture's limits used.
    #[serde(skip)]
    pub limits_table: ArchLimits,
    /// Warps per block: `ceil(threads/32)`.
    pub warps_per_block: u32,
    /// Registers allocated per warp (`regs·32` rounded up to 256), if registers were given.
    pub regs_per_warp: Option<u32>,
    /// The most shared memory one block may use, bytes: the architecture's limit with the
    /// opt-in, [`SMEM_PER_BLOCK_WITHOUT_OPT_IN_BYTES`] without.
    pub smem_per_block_limit_bytes: u32,
    /// Shared memory allocated per block: `smem + reserved`, rounded up to the allocation unit
    /// (u64: it is computed for any requested size, also one that does not fit).
    pub smem_allocated_per_block_bytes: u64,
    /// Shared memory per SM the blocks share (the largest carve-out), bytes.
    pub smem_per_sm_bytes: u32,
    /// Blocks per SM allowed by each resource.
    pub limits: Limits,
    /// Resident blocks per SM: the least of the limits, 0 when a block does not fit at all.
    pub blocks_per_sm: u32,
    /// Resident warps per SM.
    pub active_warps: u32,
    /// Maximum resident warps per SM.
    pub max_warps: u32,
    /// `active_warps / max_warps`, 0..=1.
    pub occupancy: f64,
    /// Every resource whose limit equals `blocks_per_sm`, in the order warps, blocks, registers,
    /// shared memory; for a block that does not fit, the resources it exceeds.
    pub limiting: Vec<Limiter>,
    /// Why no block fits (`None` when one does): each exceeded limit with the numbers.
    pub reason: Option<String>,
}

/// Shared memory one block may use without opting in, bytes: 48 KB. More needs dynamic shared
/// memory and `cudaFuncSetAttribute(…, cudaFuncAttributeMaxDynamicSharedMemorySize, …)` (CUDA
/// C++ Programming Guide, "Technical Specifications per Compute Capability", footnote to
/// "Maximum amount of shared memory per thread block").
pub const SMEM_PER_BLOCK_WITHOUT_OPT_IN_BYTES: u32 = 48 * 1024;

/// Computes the theoretical occupancy.
///
/// A block that cannot be resident at all — more registers per block than the SM has, more shared memory than the per-block limit (with or without the
/// opt-in, [`OccupancyInput::smem_opt_in`]) — is a result, not an error: `blocks_per_sm` 0,
/// occupancy 0, the resource in `limiting` and the why in `reason`.
///
/// # Errors
/// [`SimError::NotAllowed`] for values no kernel has: 0 threads or more than the arch's
/// threads per block (no launch has them), 0 registers or more than the
/// 255 per thread ptxas can allocate.
pub fn occupancy(inp: &OccupancyInput) -> Result<OccupancyReport, SimError> {
    let l = inp.arch.limits();
    let arch = inp.arch;
    let t = inp.threads_per_block;
    // 0 threads or more than a block can have is no launch at all (cudaLaunchKernel refuses
    // it): refused, not reported as 0 blocks per SM.
    if t == 0 || t > l.max_threads_per_block {
        return Err(SimError::NotAllowed {
            param: "--threads",
            value: t.into(),
            allowed: format!(
                "1..={} threads per block on {arch}",
                l.max_threads_per_block
            ),
        });
    }
    if let Some(r) = inp.regs_per_thread
        && (r == 0 || r > l.max_regs_per_thread)
    {
        return Err(SimError::NotAllowed {
            param: "--regs",
            value: r.into(),
            allowed: format!(
                "1..={} registers per thread on {arch}",
                l.max_regs_per_thread
            ),
        });
    }
    let mut reasons = Vec::new();
    let mut blocked = Vec::new();
    let warps = t.div_ceil(32);
    let by_warps = l.max_warps_per_sm / warps;
    let by_blocks = l.max_blocks_per_sm;
    let (by_regs, regs_per_warp) = match inp.regs_per_thread {
        None => (None, None),
        Some(r) => {
            let per_warp = (r * 32).next_multiple_of(l.reg_alloc_unit);
            // The hardware check assumes every sub-partition allocates at once.
            let assumed =
                u64::from(per_warp) * u64::from(warps.next_multiple_of(l.reg_sub_partitions));
            if assumed > u64::from(l.max_regs_per_block) {
                reasons.push(format!(
                    "{r} registers per thread with {t} threads need {assumed} registers per block ({per_warp} per warp, warps rounded up to {}); {arch} has {} per block",
                    l.reg_sub_partitions, l.max_regs_per_block
                ));
                blocked.push(Limiter::Registers);
            }
            let per_sub = (l.regs_per_sm / l.reg_sub_partitions) / per_warp;
            (Some(per_sub * l.reg_sub_partitions / warps), Some(per_warp))
        }
    };
    let s = inp.smem_per_block_bytes;
    let per_block_limit = if inp.smem_opt_in {
        l.smem_per_block_bytes
    } else {
        SMEM_PER_BLOCK_WITHOUT_OPT_IN_BYTES.min(l.smem_per_block_bytes)
    };
    if s > per_block_limit {
        reasons.push(if inp.smem_opt_in || s > l.smem_per_block_bytes {
            format!(
                "{s} bytes of shared memory per block; {arch} allows at most {} ({} KB) per block",
                l.smem_per_block_bytes,
                l.smem_per_block_bytes / 1024
            )
        } else {
            format!(
                "{s} bytes of shared memory per block; without the opt-in a block gets at most {SMEM_PER_BLOCK_WITHOUT_OPT_IN_BYTES} (48 KB); {arch} allows {} ({} KB) with it",
                l.smem_per_block_bytes,
                l.smem_per_block_bytes / 1024
            )
        });
        blocked.push(Limiter::SharedMemory);
    }
    // u64: `s` may be any u32 here.
    let alloc = if s == 0 {
        0
    } else {
        (u64::from(s) + u64::from(l.smem_reserved_per_block_bytes))
            .next_multiple_of(u64::from(l.smem_alloc_unit_bytes))
    };
    let by_smem = u64::from(l.smem_per_sm_bytes)
        .checked_div(alloc)
        .map(|b| b as u32);
    let limits = Limits {
        warps: by_warps,
        blocks: by_blocks,
        registers: by_regs,
        shared_memory: by_smem,
    };
    let (blocks, limiting) = if blocked.is_empty() {
        let blocks = [Some(by_warps), Some(by_blocks), by_regs, by_smem]
            .into_iter()
            .flatten()
            .min()
            .expect("warps and blocks always limit");
        let mut limiting = Vec::new();
        for (lim, v) in [
            (Limiter::Warps, Some(by_warps)),
            (Limiter::Blocks, Some(by_blocks)),
            (Limiter::Registers, by_regs),
            (Limiter::SharedMemory, by_smem),
        ] {
            if v == Some(blocks) {
                limiting.push(lim);
            }
        }
        (blocks, limiting)
    } else {
        (0, blocked)
    };
    let active = blocks * warps;
    Ok(OccupancyReport {
        input: *inp,
        limits_table: l,
        warps_per_block: warps,
        regs_per_warp,
        smem_per_block_limit_bytes: per_block_limit,
        smem_allocated_per_block_bytes: alloc,
        smem_per_sm_bytes: l.smem_per_sm_bytes,
        limits,
        blocks_per_sm: blocks,
        active_warps: active,
        max_warps: l.max_warps_per_sm,
        occupancy: active as f64 / l.max_warps_per_sm as f64,
        limiting,
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
    })
}

/// Parses a byte size of at most `u32::MAX` bytes: `28672`, `28K`, `28KB`, `28KiB`, `1.5K`
/// (K = 1024 bytes, as CUDA counts shared memory), `0`; the forms of [`crate::sim::size`].
///
/// # Errors
/// [`SimError::Size`] quoting the string and why (not a size, a fraction of a byte, too large).
pub fn parse_bytes(s: &str) -> Result<u32, SimError> {
    crate::sim::size::parse_bytes(s, u32::MAX as u64)
        .map(|b| b as u32)
        .map_err(|why| SimError::Size {
            given: s.to_string(),
            why,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::arch::ALL_ARCHES;

    fn occ(arch: Arch, t: u32, s: u32, r: Option<u32>) -> OccupancyReport {
        occupancy(&OccupancyInput {
            arch,
            threads_per_block: t,
            smem_per_block_bytes: s,
            regs_per_thread: r,
            smem_opt_in: true,
        })
        .unwrap()
    }

    #[test]
    fn seed_004_turing_case() {
        let r = occ(Arch::Sm75, 128, 28 * 1024, None);
        assert_eq!((r.blocks_per_sm, r.active_warps, r.max_warps), (2, 8, 32));
        assert_eq!(r.occupancy, 0.25);
        assert_eq!(r.limiting, vec![Limiter::SharedMemory]);
        // With 64 registers per thread the register file would allow 8 blocks: smem still limits.
        assert_eq!(occ(Arch::Sm75, 128, 28 * 1024, Some(64)).blocks_per_sm, 2);
    }

    #[test]
    fn calculator_spot_checks() {
        // sm_80, 256 threads, 255 regs: 8192 regs per warp, 2 warps per sub-partition, 8 warps: 1 block.
        let r = occ(Arch::Sm80, 256, 0, Some(255));
        assert_eq!(
            (r.blocks_per_sm, r.limiting.clone()),
            (1, vec![Limiter::Registers])
        );
        // 40 regs: 1280 per warp, 12 per sub-partition (not 12.8), 48 warps: 6 blocks of 8 warps.
        assert_eq!(occ(Arch::Sm80, 256, 0, Some(40)).limits.registers, Some(6));
        // sm_80 with 48 KB: (48 + 1) KB allocated, 164/49 = 3 blocks.
        assert_eq!(occ(Arch::Sm80, 128, 48 * 1024, None).blocks_per_sm, 3);
        // Tiny blocks hit the block limit.
        let r = occ(Arch::Sm90, 32, 0, None);
        assert_eq!(
            (r.blocks_per_sm, r.limiting.clone()),
            (32, vec![Limiter::Blocks])
        );
        // 1024 threads on sm_86: 48 warps per SM -> 1 block, 32/48 warps.
        let r = occ(Arch::Sm86, 1024, 0, None);
        assert_eq!((r.blocks_per_sm, r.active_warps), (1, 32));
    }

    #[test]
    fn values_no_kernel_has_are_errors() {
        let e = |t, r| {
            occupancy(&OccupancyInput {
                arch: Arch::Sm80,
                threads_per_block: t,
                smem_per_block_bytes: 0,
                regs_per_thread: r,
                smem_opt_in: true,
            })
            .unwrap_err()
            .to_string()
        };
        assert!(e(0, None).contains("--threads 0"));
        assert!(e(128, Some(300)).contains("--regs 300"));
        assert!(e(128, Some(0)).contains("--regs 0"));
    }

    /// Issue #16: a kernel that does not fit is a result (0 blocks and the reason).
    #[test]
    fn blocks_that_do_not_fit_are_results() {
        let r = occ(Arch::Sm75, 128, 70 * 1024, None);
        assert_eq!((r.blocks_per_sm, r.occupancy), (0, 0.0));
        assert_eq!(r.limiting, vec![Limiter::SharedMemory]);
        assert!(
            r.reason
                .unwrap()
                .contains("sm_75 allows at most 65536 (64 KB) per block")
        );
        // More threads than a block can have is refused, like 0 (#26).
        for t in [0, 1025, 2048] {
            let e = occupancy(&OccupancyInput {
                arch: Arch::Sm80,
                threads_per_block: t,
                smem_per_block_bytes: 0,
                regs_per_thread: None,
                smem_opt_in: true,
            })
            .unwrap_err()
            .to_string();
            assert!(e.contains("1..=1024 threads per block on sm_80"), "{e}");
        }
        // 128 registers x 32 lanes = 4096 per warp, 32 warps: 131072 > 65536 per block.
        let r = occ(Arch::Sm80, 1024, 0, Some(128));
        assert_eq!((r.blocks_per_sm, r.limiting), (0, vec![Limiter::Registers]));
        assert!(
            r.reason
                .unwrap()
                .contains("need 131072 registers per block")
        );
        // Any u32 size: no overflow, a reason.
        let r = occ(Arch::Sm90, 128, u32::MAX, None);
        assert_eq!(r.blocks_per_sm, 0);
        assert_eq!(r.smem_allocated_per_block_bytes, 4_294_968_320);
    }

    /// Without the opt-in a block gets 48 KB (49,152 bytes), with it sm_90's 227 KB.
    #[test]
    fn the_48_kb_limit_without_opt_in() {
        let no = |s| {
            occupancy(&OccupancyInput {
                arch: Arch::Sm90,
                threads_per_block: 128,
                smem_per_block_bytes: s,
                regs_per_thread: None,
                smem_opt_in: false,
            })
            .unwrap()
        };
        // 48 KB + 1 KB reserved = 50176 B per block; 228 KB = 233472 B per SM: 4 blocks.
        let r = no(48 * 1024);
        assert_eq!((r.blocks_per_sm, r.smem_per_block_limit_bytes), (4, 49_152));
        let r = no(48 * 1024 + 1);
        assert_eq!(r.blocks_per_sm, 0);
        assert!(
            r.reason
                .unwrap()
                .contains("without the opt-in a block gets at most 49152")
        );
        // With the opt-in 64 KB fits: 66560 B per block, 3 blocks.
        let r = occ(Arch::Sm90, 128, 64 * 1024, None);
        assert_eq!(
            (r.blocks_per_sm, r.smem_per_block_limit_bytes),
            (3, 232_448)
        );
        // Without the opt-in, up to sm_90's own 227 KB (232,448 B) the opt-in is the advice;
        // beyond it no opt-in helps, and the reason says what the arch allows.
        let opt_in_advice = "without the opt-in";
        for (s, advice) in [(232_448, true), (232_449, false), (300_000, false)] {
            let why = no(s).reason.unwrap();
            assert_eq!(why.contains(opt_in_advice), advice, "{s}: {why}");
            if !advice {
                assert!(
                    why.contains("sm_90 allows at most 232448 (227 KB)"),
                    "{why}"
                );
            }
        }
    }

    #[test]
    fn every_arch_at_its_limits_launches_one_block() {
        for a in ALL_ARCHES {
            let l = a.limits();
            let r = occ(a, 1024, l.smem_per_block_bytes, Some(64));
            assert_eq!(r.blocks_per_sm, 1, "{a}");
        }
    }

    /// The limiters' names as the report prints them.
    #[test]
    fn limiter_names() {
        let names: Vec<&str> = [
            Limiter::Warps,
            Limiter::Blocks,
            Limiter::Registers,
            Limiter::SharedMemory,
        ]
        .iter()
        .map(|l| l.name())
        .collect();
        assert_eq!(names, ["warps", "blocks", "registers", "shared memory"]);
    }

    #[test]
    fn parses_sizes() {
        assert_eq!(parse_bytes("28KB").unwrap(), 28672);
        assert_eq!(parse_bytes("28k").unwrap(), 28672);
        assert_eq!(parse_bytes("28 KiB").unwrap(), 28672);
        assert_eq!(parse_bytes("1.5K").unwrap(), 1536);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(
            parse_bytes("lots").unwrap_err().to_string(),
            format!(
                "bad size 'lots': not a size; allowed: {}",
                crate::sim::size::FORMS
            )
        );
        assert!(parse_bytes("0.3").is_err());
        assert_eq!(
            parse_bytes("4G").unwrap_err().to_string(),
            format!(
                "bad size '4G': not a size; allowed: {}",
                crate::sim::size::FORMS
            )
        );
        assert_eq!(
            parse_bytes("4096M").unwrap_err().to_string(),
            "bad size '4096M': too large: at most 4,294,967,295 bytes"
        );
    }
}
