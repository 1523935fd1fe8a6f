//! PTX kernels on the simulator: [`parse`] reads the text, [`decode`] turns one kernel into a
//! compact program, [`mod@cfg`] finds each branch's reconvergence point, [`engine`] runs one CTA
//! (every warp, lockstep per warp) and [`report`] sums what it did per PTX line in Nsight
//! Compute's terms; [`trace`] records one warp's steps for the TUI. Every warp-level shared-memory and tensor-core instruction goes through
//! [`warp_ops`], the one door to `sim`. Pure: no I/O.
//!
//! ```
//! use tilelab_core::ptx;
//! let src = ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<3>;\n.shared .align 4 .b8 s[4096];\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 7;\nld.shared.b32 %r0, [%r2];\nret;\n}\n";
//! let launch = ptx::Launch { grid: [1, 1, 1], block: [32, 1, 1], cta: [0, 0, 0], cluster: None,
//!     args: vec![], tensor_maps: vec![], dynamic_smem: None, max_instructions: 1_000_000 };
//! let r = ptx::simulate(src, None, &launch).unwrap();
//! // 32 lanes, rows 128 bytes apart: one bank, a 32-way conflict.
//! assert_eq!((r.totals.shared_ld_wavefronts, r.totals.shared_ld_bank_conflicts), (32, 31));
//! ```

#[macro_use]
mod lanes;
pub mod cfg;
pub mod dataflow;
pub mod decode;
pub mod engine;
pub mod grid;
pub mod inst;
pub mod launch_file;
pub mod lineinfo;
pub mod load_path;
pub mod parse;
pub mod report;
pub mod trace;
pub mod types;
pub mod warp_ops;

pub use engine::{Launch, Observer, RunError, TraceEvent, TraceKind, alu, mem, params};

/// The names of the former `ptx::machine` module (split into [`engine`], [`mem`], [`params`]
/// and [`alu`]), re-exported so that `tilelab_core::ptx::machine::X` paths keep working.
pub mod machine {
    pub use super::engine::mem::{BUFFER_WINDOW, MAX_GLOBAL_BYTES};
    pub use super::engine::*;
    pub use super::params::*;
}
pub use report::{Report, simulate};
