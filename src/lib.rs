//! tilelab: what happens inside a tensor-core tile kernel, one warp instruction at a time.
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
pub mod measured;
pub mod palette;
pub mod ptx;
pub mod sass;
pub mod sim;
pub mod sources;
pub mod text;
pub mod textfile;
pub mod tui;
pub mod viz;

/// Provenance sidecars, at their old path `tilelab::provenance` (build.rs and the integration tests name it).
pub use measured::provenance;
/// The replay format, at its old path `tilelab::records` (the integration tests use it).
pub use measured::records;
