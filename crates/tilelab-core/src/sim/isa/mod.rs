//! ISA facts: what the PTX ISA and the H200's measurements say an instruction is and costs,
//! with no execution: the instruction table ([`instr`]), per-architecture limits ([`arch`]),
//! the bank rule ([`bank`]), layouts and `Swizzle<B,M,S>` ([`layout`]), fragment maps
//! ([`ldmatrix`], [`mma`]), wgmma forms and descriptors ([`wgmma`]), tensor maps and where a box
//! lands ([`tma`], [`tensormap`]), the mbarrier object ([`mbarrier`]).

pub mod arch;
pub mod bank;
pub mod instr;
pub mod layout;
pub mod ldmatrix;
pub mod mbarrier;
pub mod mma;
pub mod tensormap;
pub mod tma;
pub mod wgmma;
