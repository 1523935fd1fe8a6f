//! The simulator's one error type. Every variant quotes the offending value and says what
//! is allowed, so the CLI can print it as a single line.

use thiserror::Error;

/// Errors from building or executing simulated requests, layouts and tilings.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SimError {
    /// An instruction name that is not one of [`super::instr::INSTRUCTION_NAMES`].
    #[error("unknown instruction '{0}'; allowed: {names}", names = super::instr::INSTRUCTION_NAMES)]
    UnknownInstruction(String),
    /// A lane's byte address is not a multiple of the access width (PTX requires natural alignment).
    #[error(
        "lane {lane}: byte offset {offset} is not aligned to {align} bytes, as {instruction} requires"
    )]
    Misaligned {
        /// Lane (0-31) whose address is bad.
        lane: usize,
        /// The byte offset it gave.
        offset: u64,
        /// Required alignment in bytes.
        align: u32,
        /// The instruction, as PTX.
        instruction: String,
    },
    /// A lane's access does not fit inside the shared memory being modelled.
    #[error(
        "lane {lane}: bytes {offset}..{end} are outside shared memory of {limit} bytes ({arch}); allowed offsets are 0..={max}"
    )]
    OutOfRange {
        /// Lane (0-31) whose address is bad.
        lane: usize,
        /// First byte accessed.
        offset: u64,
        /// One past the last byte accessed.
        end: u64,
        /// Shared-memory size in bytes.
        limit: u32,
        /// The architecture the limit comes from.
        arch: String,
        /// Largest allowed starting offset.
        max: u64,
    },
    /// `ldmatrix` and `stmatrix` are `.sync.aligned`: all 32 lanes must execute them.
    #[error(
        "active mask {mask:#010x} is not allowed for {instruction}: it is .sync.aligned, all 32 lanes must be active (mask 0xffffffff)"
    )]
    PartialLdmatrix {
        /// The mask given.
        mask: u32,
        /// The instruction, as PTX.
        instruction: String,
    },
    /// A request needs exactly 32 lane addresses.
    #[error("expected 32 lane byte offsets (lane 0 first), got {0}")]
    LaneCount(usize),
    /// A layout string that does not parse.
    #[error(
        "bad layout '{spec}': {reason}; allowed: row | col | trans | pad:N | swizzle:B,M,S, combined with '+', e.g. 'row+pad:8', 'col+swizzle:3,3,3'"
    )]
    BadLayout {
        /// The string given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Any other invalid argument (tile shape, dtype, tiling): the message names value and rule.
    #[error("{0}")]
    Invalid(String),
}
