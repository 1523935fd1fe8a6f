//! The GPU side of `tilelab verify`: run the same tilings on an NVIDIA GPU and compare with the
//! simulator.
//!
//! * [`device`]: the CUDA driver and NVRTC, loaded at run time through cudarc (the binary builds
//!   and starts without CUDA; a missing library is a [`GpuError`], never a panic);
//! * [`ncu`]: running Nsight Compute on ourselves and parsing its CSV;
//! * [`sass`]: counting SASS mnemonics in `cuobjdump -sass` output;
//! * [`compare`]: the comparison logic (pure, tested without a GPU);
//! * [`fuzz`]: random warp requests for `verify --fuzz N`;
//! * [`gemm`]: the tiled GEMM lesson kernel specialised to a simulator tiling;
//! * [`source_view`]: per-PTX-line counters from Nsight Compute's source page;
//! * [`ptx_check`]: `verify --ptx`'s verdicts, simulated CTA against measured counters.
//!
//! Kernels (`kernels/*.cu`) are compiled into the binary with `include_str!` and built by NVRTC
//! for the device's own architecture.

pub mod compare;
pub mod device;
pub mod fuzz;
pub mod gemm;
pub mod ncu;
pub mod ptx_check;
pub mod sass;
pub mod source_view;

/// `kernels/smem_probe.cu`: one warp, one shared-memory instruction.
pub const SMEM_PROBE_CU: &str = include_str!("../../kernels/smem_probe.cu");
/// `kernels/fragments.cu`: ldmatrix and mma register dumps.
pub const FRAGMENTS_CU: &str = include_str!("../../kernels/fragments.cu");
/// `kernels/fa2_fwd.cu`: the FlashAttention-2 forward lesson kernel (torch tiling).
pub const FA2_FWD_CU: &str = include_str!("../../kernels/fa2_fwd.cu");
/// `kernels/bank_time.cu`: clock64 timing of one access pattern.
pub const BANK_TIME_CU: &str = include_str!("../../kernels/bank_time.cu");

/// Why the GPU cannot be used. Each message is one line naming what is missing.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// `libcuda.so` could not be loaded.
    #[error(
        "no CUDA driver: libcuda.so.1 was not found (install the NVIDIA driver; the simulator commands work without it)"
    )]
    NoDriver,
    /// The driver loaded but reports no device.
    #[error("no CUDA device: the driver found no GPU ({0})")]
    NoDevice(String),
    /// NVRTC (`libnvrtc.so`) could not be loaded.
    #[error("no NVRTC: libnvrtc.so was not found (install the CUDA toolkit's NVRTC)")]
    NoNvrtc,
    /// A driver call failed.
    #[error("CUDA driver error in {0}: {1}")]
    Driver(&'static str, String),
    /// NVRTC rejected a kernel.
    #[error("NVRTC could not compile {0}: {1}")]
    Compile(String, String),
}
