//! Kernel models: whole kernels counted from their tiling, without a PTX file: the warp programs
//! of tiled GEMM and FlashAttention-2 ([`program`]), their instruction and bank-conflict counts
//! ([`counts`]), the Hopper FlashAttention kernel's per-CTA counts ([`fa3`]), global-memory
//! traffic of the FlashAttention loop orders ([`traffic`]), occupancy ([`occupancy`]).

pub mod counts;
pub mod fa3;
pub mod occupancy;
pub mod program;
pub mod traffic;
