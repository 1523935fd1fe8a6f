//! The CPU model of one warp meeting shared memory and the tensor cores. Pure: no I/O, no CLI,
//! no GPU code.
//!
//! * [`instr`]: what an instruction is (PTX name, bytes per lane, address lanes, SASS mnemonic);
//! * [`bank`]: wavefronts and bank conflicts of one warp request;
//! * [`layout`]: tile layouts (row, col, padding, `Swizzle<B,M,S>`);
//! * [`ldmatrix`], [`mma`]: fragment tables and execution;
//! * [`smem`]: a byte array to execute against;
//! * [`arch`]: per-architecture limits.

pub mod access;
pub mod arch;
pub mod bank;
pub mod error;
pub mod instr;
pub mod layout;
pub mod ldmatrix;
pub mod mma;
pub mod smem;

pub use error::SimError;
