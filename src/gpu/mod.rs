//! The GPU room: everything that runs on an NVIDIA GPU, and the suite of checks behind
//! `tilelab verify` that compares the simulator with the hardware.
//!
//! * [`device`]: the CUDA driver and NVRTC, loaded at run time through cudarc (the binary builds
//!   and starts without CUDA; a missing library is a [`GpuError`], never a panic); CUBINs from
//!   CUDA C, PTX modules through the driver's JIT;
//! * [`launch`]: one typed wrapper per kernel signature; every `unsafe` launch lives there;
//! * [`params`]: kernel parameters packed as a PTX `.entry` declares them (raw launches by name);
//! * [`source`]: the CUDA C the suite compiles (`kernels/*.cu`, lesson and GEMM kernels
//!   generated from simulator data);
//! * [`verify`]: the checks, one file per group, registered in [`verify::GROUPS`];
//! * [`tools`], [`ncu`], [`sass`]: finding and running Nsight Compute and `cuobjdump` (their
//!   output is parsed in [`crate::measured`]);
//! * [`check`]: one row of the verify table, its verdict, a run's tally and JSON report (below
//!   [`verify`] and [`hopper_check`], which both make rows);
//! * [`compare`]: the comparison logic (pure, tested without a GPU);
//! * [`fuzz`]: random warp requests for `verify --fuzz N`;
//! * [`ptx_check`]: `verify --ptx`'s verdicts, simulated CTA against measured counters;
//! * [`hopper_check`]: the Hopper groups' cases, expected results and comparisons (pure).
//!
//! Kernels (`kernels/*.cu`) are compiled into the binary with `include_str!` and built by NVRTC
//! for the device's own architecture.

pub mod check;
pub mod device;
pub mod fuzz;
pub mod launch;
pub mod ncu;
pub mod params;
pub mod sass;
pub mod source;
pub mod tools;
pub mod verify;

// The pure comparisons sit beside the verify groups that use them; their old paths stay.
pub use verify::{compare, hopper_check, ptx_check};

/// A driver error in CUDA's words: `CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected`
/// (cudarc's `Display` prints its Rust `Debug` form, `DriverError(…, "…")`).
pub fn driver_text(e: &cudarc::driver::DriverError) -> String {
    let name = e
        .error_name()
        .map_or_else(|_| cu_name(e.0), |n| n.to_string_lossy().into_owned());
    match e.error_string() {
        Ok(s) => format!("{name}: {}", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// The C name of a driver result, `CUDA_ERROR_INVALID_VALUE` (the `Debug` of cudarc's C enum is
/// exactly its C identifier).
pub fn cu_name(r: cudarc::driver::sys::CUresult) -> String {
    format!("{r:?}")
}

/// The C name of an NVRTC result, `NVRTC_ERROR_COMPILATION` (cudarc's `Display` would print
/// `NvrtcError(…)`).
pub fn nvrtc_text(e: &cudarc::nvrtc::result::NvrtcError) -> String {
    format!("{:?}", e.0)
}

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
    /// The device's compute capability is not one the simulator has limits for: the suite
    /// refuses it rather than treating it as another architecture.
    #[error(
        "{name} is sm_{major}{minor} (compute capability {major}.{minor}), an architecture the simulator has no limits for; known: sm_75, sm_80, sm_86, sm_89, sm_90"
    )]
    UnknownArch {
        /// Device name.
        name: String,
        /// Compute capability, major.
        major: i32,
        /// Compute capability, minor.
        minor: i32,
    },
    /// A driver call failed.
    #[error("CUDA driver error in {0}: {1}")]
    Driver(&'static str, String),
    /// NVRTC rejected a kernel.
    #[error("NVRTC could not compile {0}: {1}")]
    Compile(String, String),
    /// A name or text the driver cannot take (a NUL byte inside).
    #[error("{0}")]
    BadName(String),
    /// A kernel was asked for something it does not implement.
    #[error("{0}")]
    Unsupported(String),
    /// Kernel parameters that do not fit the kernel's declaration.
    #[error(transparent)]
    Params(#[from] params::ParamError),
}
