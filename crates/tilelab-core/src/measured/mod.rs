//! The measured-data formats and their readers, pure (no GPU code, no process runs): replay
//! records ([`records`]) and where a measured file came from ([`provenance`]), Nsight Compute's
//! text ([`ncu_csv`]: `--csv` metrics; [`source_view`]: the source page, and the PTX line table
//! that makes it name the PTX's own lines) and SASS listings ([`sass_listing`]). Running the
//! tools that produce them is `gpu`'s.

pub mod ncu_csv;
pub mod provenance;
pub mod records;
pub mod sass_listing;
pub mod source_view;
