//! The simulator's one error type, [`SimError`]: a caller matches on *what* went wrong (an
//! unknown name, a number outside its range, a layout that does not fit, …); every variant
//! carries the offending value and what is allowed, and prints as a single line, in the manner
//! of globset's `ErrorKind`.
//!
//! Parameters are named the way the command line spells them (`--seq`, `--warps`), because that
//! is where the value came from; library callers see the same names in the fields.

use thiserror::Error;

/// Every spelling `sim::instr::Instruction::parse` accepts, for error messages.
pub const INSTRUCTION_NAMES: &str = "ld.shared.{u8,u16,b32,v2.b32,v4.b32}, st.shared.{u8,u16,b32,v2.b32,v4.b32}, ldmatrix.{x1,x2,x4}[.trans], stmatrix.{x1,x2,x4}[.trans], cp.async.ca.shared.global.{4,8,16}, cp.async.cg.shared.global.16 (also other PTX types of the same width, e.g. .s8, .f16, .f32, .b64, .v2.f32, .v2.b64, the state space .shared::cta, and the full ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16)";

/// Errors from building or executing simulated requests, layouts, tilings and reports.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SimError {
    /// An instruction name that is not one of [`INSTRUCTION_NAMES`].
    #[error("unknown instruction '{}'; allowed: {names}", crate::text::value(.0), names = INSTRUCTION_NAMES)]
    UnknownInstruction(String),
    /// An instruction name made of known parts put together wrongly: a qualifier given twice,
    /// two matrix counts (`ldmatrix.x2.x4`), a count missing.
    #[error("bad instruction '{}': {reason}; allowed: {names}", crate::text::value(.given), names = INSTRUCTION_NAMES)]
    BadInstruction {
        /// The name given.
        given: String,
        /// What is wrong with it, e.g. "'.trans' given twice".
        reason: String,
    },
    /// A name outside a closed set: an access pattern, an architecture, an mma shape or dtype, a
    /// warp split, a kernel style, a loop order.
    #[error("unknown {what} '{}'; allowed: {allowed}", crate::text::value(.given))]
    Unknown {
        /// What kind of name it is, e.g. `"access"`, `"architecture"`.
        what: &'static str,
        /// The name given.
        given: String,
        /// The accepted names.
        allowed: &'static str,
    },
    /// A byte size that does not parse or is too large ([`crate::sim::size`]).
    #[error("bad size '{}': {why}", crate::text::value(.given))]
    Size {
        /// The string given.
        given: String,
        /// Why it was refused.
        why: crate::sim::size::SizeError,
    },
    /// A `cp.async` lane's global source address is not a multiple of the copy size (PTX ISA
    /// §9.7.9.25.3: the source must be aligned to cp-size).
    #[error(
        "lane {lane}: global source address {addr} is not aligned to {align} bytes, as {instruction} requires"
    )]
    MisalignedSource {
        /// Lane (0-31) whose address is bad.
        lane: usize,
        /// The global byte address it gave.
        addr: u64,
        /// Required alignment in bytes (the copy size).
        align: u32,
        /// The instruction, as PTX.
        instruction: String,
    },
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
    /// A layout string that does not parse, or parses into something impossible (a part given
    /// twice, a swizzle CuTe rejects).
    #[error(
        "bad layout '{}': {reason}; allowed: row | col | trans | pad:N | swizzle:B,M,S, each at most once, combined with '+', e.g. 'row+pad:8', 'col+swizzle:3,3,3'",
        crate::text::value(.spec)
    )]
    BadLayout {
        /// The string given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `Swizzle<B,M,S>` that CuTe rejects: it needs `S >= B` (invertible) and, here, `B+M+S <= 31`
    /// so every bit it moves is inside a 32-bit offset.
    #[error("Swizzle<{bits},{base},{shift}> is not allowed: need S >= B and B+M+S <= 31")]
    BadSwizzle {
        /// B: bits in the mask.
        bits: u32,
        /// M: least-significant bits kept constant.
        base: u32,
        /// S: shift distance.
        shift: u32,
    },
    /// A layout whose byte footprint or some byte offset does not fit in 32 bits (a huge pad or
    /// tile): shared-memory addresses are 32-bit, so no such tile can exist.
    #[error(
        "layout '{}' of a {rows}x{cols} tile of {elem_bytes}-byte elements spans 2^32 bytes or more, far beyond any shared memory (at most 227 KiB per block); use a smaller pad, swizzle or tile",
        crate::text::value(.spec)
    )]
    LayoutTooLarge {
        /// The layout string.
        spec: String,
        /// Tile rows.
        rows: u32,
        /// Tile columns.
        cols: u32,
        /// Bytes per element.
        elem_bytes: u32,
    },
    /// A number outside the values the model accepts (a zero size, an element size other than
    /// 1/2/4/8, more than 32 warps, …).
    #[error("{param} {value} is not allowed; allowed: {allowed}")]
    NotAllowed {
        /// The parameter, as the command line spells it (`--warps`, `element size`).
        param: &'static str,
        /// The value given.
        value: u64,
        /// The accepted values, e.g. `1..=32`.
        allowed: String,
    },
    /// A size that must be a multiple of another (a tile edge of 16, a sequence of its block).
    #[error("{param} {value} is not a positive multiple of {of}; allowed: {allowed}")]
    NotMultiple {
        /// The parameter, as the command line spells it.
        param: &'static str,
        /// The value given.
        value: u64,
        /// What it must be a multiple of, with the reason, e.g. `16 (mma k steps)` or `--block 64`.
        of: String,
        /// The accepted values.
        allowed: String,
    },
    /// The warps of a CTA cannot share the work evenly.
    #[error(
        "--warps {warps} does not divide the {slabs} {slab} slabs of {what} evenly; allowed: {allowed}",
        allowed = divisors(*slabs)
    )]
    WarpSplit {
        /// Warps asked for.
        warps: u32,
        /// Slabs to share.
        slabs: u32,
        /// What a slab is, e.g. `16-row`.
        slab: String,
        /// What is shared, e.g. `M = 64`.
        what: String,
    },
    /// An access pattern that cannot read this tile under this layout or element size (a vector
    /// load across non-contiguous elements, ldmatrix on 4-byte elements, a tile that is not a
    /// multiple of the block).
    #[error("{access} cannot read this tile: {reason}")]
    AccessUnfit {
        /// The pattern or instruction, e.g. `vec16`, `ldmatrix`.
        access: String,
        /// Why, naming the layout, tile or dtype and what to change.
        reason: String,
    },
    /// A tiling or tile that needs more shared memory than one block may have.
    #[error(
        "the tiling needs {at_least}{needed} bytes of shared memory ({parts}) but {arch} allows at most {limit} bytes per block; use smaller tiles or another --arch",
        at_least = if *lower_bound { "at least " } else { "" }
    )]
    SharedMemory {
        /// Bytes needed (u128: a tiling of huge tiles is reported exactly, not wrapped).
        needed: u128,
        /// True when `needed` counts only the unpadded tiles (the real need is larger).
        lower_bound: bool,
        /// What the bytes are, e.g. `A 64x64 = 8192 B, B 64x64 = 8192 B`.
        parts: String,
        /// Per-block limit in bytes.
        limit: u32,
        /// Architecture of the limit.
        arch: String,
    },
    /// A resource request over a hard limit that no launch can meet (registers per block).
    #[error("{what} needs {needed}, over {arch}'s {limit}; {hint}")]
    OverLimit {
        /// What is asked for, e.g. `--regs 255 with --threads 1024`.
        what: String,
        /// How much it needs, with the unit.
        needed: String,
        /// The limit, with the unit.
        limit: String,
        /// Architecture of the limit.
        arch: String,
        /// What to change.
        hint: &'static str,
    },
    /// A loop walk longer than the model steps through.
    #[error(
        "{what} = {value} {unit}; the loop walk allows at most {max} (use a larger --block or a shorter --seq)"
    )]
    WalkTooLong {
        /// How the count arises, e.g. `--seq 4096 / --block 1`.
        what: String,
        /// The count.
        value: u64,
        /// Its unit, e.g. `blocks per sequence`.
        unit: &'static str,
        /// The most allowed.
        max: u64,
    },
    /// A count or byte total of the problem that does not fit in 64 bits.
    #[error(
        "{problem}: the {quantity} of this problem do not fit in 64 bits; use a smaller problem"
    )]
    Overflow {
        /// The flags that set the problem size, e.g. `--batch 4 --heads 8 --seq 1024`.
        problem: String,
        /// What overflowed, e.g. `byte counts`.
        quantity: &'static str,
    },
    /// A combination the model does not cover (m16n8k8 with bf16, a column-major GEMM tile).
    #[error("{what} is not modelled; allowed: {allowed}")]
    Unsupported {
        /// The combination given.
        what: String,
        /// What is modelled.
        allowed: &'static str,
    },
    /// An mma operand matrix of the wrong shape.
    #[error("operand {operand} is {rows}x{cols}, expected {want_rows}x{want_cols}")]
    OperandShape {
        /// `A`, `B` or `C`.
        operand: &'static str,
        /// Rows given.
        rows: usize,
        /// Columns given.
        cols: usize,
        /// Rows the shape needs.
        want_rows: u32,
        /// Columns the shape needs.
        want_cols: u32,
    },
    /// An address expression ([`super::addr`]) that does not parse.
    #[error(
        "bad address expression '{}' at byte {at}: {reason}; allowed: lane, numbers, + - * / % ^ & | << >> and parentheses, e.g. '(lane%8)*132+(lane/8)*4'",
        crate::text::value(.expr)
    )]
    AddrSyntax {
        /// The expression given.
        expr: String,
        /// Byte position of the problem (0-based).
        at: usize,
        /// What was found and what was expected.
        reason: String,
    },
    /// An address expression whose value for one lane is not a 32-bit byte offset: an
    /// intermediate result below 0 or above 2^32 − 1, a division or remainder by zero, a shift
    /// by 32 or more.
    #[error("address expression '{}' at lane {lane}: {reason}", crate::text::value(.expr))]
    AddrEval {
        /// The expression given.
        expr: String,
        /// The lane (0-31) being evaluated.
        lane: u32,
        /// The operation and its operands, e.g. `4294967295 + 1 does not fit in 32 bits`.
        reason: String,
    },
    /// Transitional: an error not yet given its own variant. New code uses a specific variant
    /// (or adds one); this one is removed once no branch uses it.
    #[error("{0}")]
    Invalid(String),
}

/// Divisors of `n`, comma separated: the warp counts that share `n` slabs evenly.
fn divisors(n: u32) -> String {
    crate::text::list((1..=n).filter(|d| n.is_multiple_of(*d)))
}
