//! Execution: **the** executor ([`exec`]: one instruction of any scope against shared memory
//! [`smem`]), the `mma.sync` fast path it uses, and what feeds it or reads its results: requests
//! from tiles and lane expressions ([`access`], [`addr`], [`bank_read`]), tile placement
//! ([`placement`]), request totals ([`stats`]), read-back costs ([`readback`]), one TMA copy or
//! wgmma problem run through it ([`tma_copy`], [`wgmma_run`]) and its self-check
//! ([`selfcheck`]).

pub mod access;
pub mod addr;
pub mod bank_read;
pub mod exec;
pub(crate) mod mma_fast;
pub mod placement;
pub mod readback;
pub mod selfcheck;
pub mod smem;
pub mod stats;
pub mod tma_copy;
pub mod wgmma_run;
