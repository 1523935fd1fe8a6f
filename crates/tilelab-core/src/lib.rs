//! tilelab's pure core, on which the `tilelab` crate (CLI, TUI, GPU checks, lessons) sits:
//!
//! * [`sim`]: the CPU model of an SM's shared memory and tensor cores: the instruction table,
//!   the one executor, fragment maps, descriptors, tensor maps, the bank rule, kernel models;
//! * [`ptx`]: PTX text to program, the CTA engine, the per-line report in Nsight Compute's
//!   terms, whole launches across threads;
//! * [`measured`]: the measured-data formats and readers (replay records, provenance,
//!   ncu's CSV and source page, SASS listings);
//! * [`text`], [`textfile`]: user input as messages show it; bounded reads of input files;
//! * [`seeded`]: the one seeded generator of generated inputs (ChaCha8).
//!
//! No I/O beyond reading the files a caller names, no GPU, terminal or command-line code: the
//! dependencies in this crate's `Cargo.toml` are what the core may use (docs/architecture.md).

pub mod measured;
pub mod ptx;
pub mod seeded;
pub mod sim;
pub mod text;
pub mod textfile;
