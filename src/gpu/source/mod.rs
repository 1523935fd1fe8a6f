//! The CUDA C the suite compiles: the kernel files of `kernels/` (built into the binary with
//! `include_str!`, compiled at run time by NVRTC for the device's own architecture) and the
//! kernels generated from simulator data.
//!
//! * [`lesson`]: the kernel of a lesson, generated from the lesson file (`kernels/lesson_*.cu`
//!   hold the same text);
//! * [`gemm`]: `kernels/gemm_tile.cu` specialised to one [`crate::sim::program::GemmTiling`].

pub mod gemm;
pub mod lesson;

/// `kernels/smem_probe.cu`: one warp, one shared-memory instruction (`smem_probe`).
pub const SMEM_PROBE_CU: &str = include_str!("../../../kernels/smem_probe.cu");
/// `kernels/fragments.cu`: ldmatrix and mma register dumps (`ldsm_dump`, `mma_dump`).
pub const FRAGMENTS_CU: &str = include_str!("../../../kernels/fragments.cu");
/// `kernels/fa2_fwd.cu`: the FlashAttention-2 forward lesson kernel (torch tiling, `fa2_fwd`).
pub const FA2_FWD_CU: &str = include_str!("../../../kernels/fa2_fwd.cu");
/// `kernels/bank_time.cu`: clock64 timing of one access pattern (`bank_time`).
pub const BANK_TIME_CU: &str = include_str!("../../../kernels/bank_time.cu");
/// `kernels/gemm_tile.cu`: the tiled GEMM lesson kernel, before [`gemm::source`] adds its
/// `#define`s (`gemm_tile`).
pub const GEMM_TILE_CU: &str = include_str!("../../../kernels/gemm_tile.cu");
