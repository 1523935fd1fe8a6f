//! tilelab: what happens inside a tensor-core tile kernel, one warp instruction at a time.
//!
//! [`sim`], [`ptx`], [`measured`], [`text`] and [`textfile`] are the pure core crate
//! `tilelab-core` (`crates/tilelab-core`), re-exported here; the rest is this crate.
//!
//! * [`sim`]: the pure CPU simulator (wavefronts, bank conflicts, ldmatrix and mma fragments);
//! * [`gpu`]: running the same tiling on an NVIDIA GPU (cudarc, loaded at run time);
//! * [`lessons`]: the lesson files (`lessons/*.toml`), loaded and run on [`sim`];
//! * [`tui`]: the terminal walkthrough;
//! * [`viz`]: SVG pictures of bank grids and fragment maps;
//! * [`sass`]: ptxas and nvdisasm on the host, each SASS instruction on its PTX line, dynamic SASS
//!   counts of a simulated CTA;
//! * [`measured`]: the measured-data formats and readers: warp requests (the replay format,
//!   [`records`]), where a measured file came from ([`provenance`]), ncu's CSV and source page,
//!   SASS listings;
//! * [`text`]: user input as messages and tables show it (control characters and non-UTF-8
//!   bytes escaped, long lists and values cut).

pub mod gpu;
pub mod lessons;
pub mod palette;
pub mod sass;
pub mod sources;
pub mod tui;
pub mod viz;

// The pure core (`crates/tilelab-core`), at the paths the rest of the crate and the tests use.
pub use tilelab_core::{measured, ptx, seeded, sim, text, textfile};

/// The commit the running binary was built from (`git rev-parse HEAD` at build time, by
/// `build.rs`), or `unknown` when it was built outside a git checkout. Written into the
/// provenance of what `tilelab verify --save-measured` measures.
pub const BUILD_COMMIT: &str = match option_env!("TILELAB_COMMIT") {
    Some(c) => c,
    None => "unknown",
};

/// The provenance of measured files, at its old path `tilelab::provenance` (the integration tests name it).
pub use measured::provenance;
/// The replay format, at its old path `tilelab::records` (the integration tests use it).
pub use measured::records;
