//! The CPU model of one warp meeting shared memory and the tensor cores. Pure: no I/O, no CLI,
//! no GPU code. Three kinds of file, a folder each: [`isa`] (what the PTX ISA and the hardware
//! say an instruction does: the instruction table, fragment maps, descriptors, tensor maps, the
//! bank rule), [`run`] (execution: the one executor and what feeds it or reads its results) and
//! [`kernels`] (models of whole kernels: counts, FA3, traffic, occupancy, tiled programs).
//!
//! * [`instr`]: the instruction table (PTX name, SASS class, scope, completion, cost rule) and
//!   what a warp shared-memory instruction is (bytes per lane, address lanes, SASS mnemonic);
//! * [`addr`]: address expressions over `lane` (`(lane%8)*132+(lane/8)*4`);
//! * [`bank`]: wavefronts and bank conflicts of one warp request;
//! * [`bank_read`]: the reads `tilelab sim bank-conflicts` costs: a tile under a layout (the
//!   access pattern's defaults), or one request from lane address expressions;
//! * [`layout`]: tile layouts (row, col, padding, `Swizzle<B,M,S>`);
//! * [`ldmatrix`], [`mma`]: fragment tables (`stmatrix`, ldmatrix's store twin on
//!   sm_90, is an [`instr::Instruction`] the executor runs through the ldmatrix table);
//! * [`exec`]: **the** executor, one instruction of any scope: warp (ld/st, ldmatrix,
//!   stmatrix, cp.async, mma), warpgroup (wgmma) and bulk (TMA box load/store/reduce, bulk
//!   copy): the request, its cost, the register and memory writes;
//! * [`smem`]: the byte array it executes against;
//! * [`arch`]: per-architecture limits;
//! * [`placement`]: where tiles sit in shared memory (one rule for tilings and lessons);
//! * [`stats`]: request totals (wavefronts, ideal, conflicts), the one type every report shows;
//! * [`program`]: the warp program of a tiled kernel (GEMM, FlashAttention-2 torch/triton styles);
//! * [`counts`]: static and dynamic instruction counts, bank conflicts and the articles' formulas;
//! * [`fa3`]: the Hopper FlashAttention kernel's (`kernels/fa3_fwd.cu`) wgmma, TMA, mbarrier
//!   and barrier counts per CTA of its persistent grid, and its predicted SASS counts;
//! * [`traffic`]: global-memory bytes of the FlashAttention v1 and v2 loop orders;
//! * [`mbarrier`]: the mbarrier object (phase, pending arrivals, transaction bytes), pure;
//! * [`occupancy`]: blocks per SM, active warps and the limiting resource;
//! * [`size`]: the one spelling of a byte size (`32768`, `32K`, `32KiB`, `2M`);
//! * [`tensormap`]: tensor maps a kernel makes or changes (`tensormap.replace`'s fields),
//!   pure;
//! * [`tma`]: tensor maps (`cuTensorMapEncodeTiled`, rank 1..=5), where a TMA box lands in
//!   shared memory under each swizzle mode, bulk-copy and reduction rules (sm_90; executed by
//!   [`exec`]);
//! * [`tma_copy`]: one TMA box load/store or bulk copy run through [`exec`], with its
//!   shared-memory chunk map and read-back costs (what `tilelab sim tma` shows);
//! * [`wgmma`]: warpgroup MMA forms, matrix descriptors, canonical layouts and fragments
//!   (sm_90a; executed by [`exec`]);
//! * [`wgmma_run`]: one wgmma problem (tiles, the checked chain, each instruction's
//!   descriptors), what `tilelab sim wgmma` shows;
//! * [`readback`]: wavefronts of reading a TMA box or a wgmma operand back with `ldmatrix`;
//! * [`selfcheck`]: the executor's mma and wgmma on known inputs against plain f64 sums.

// The three kinds of file, one folder each (the modules keep their paths: `sim::bank`,
// `sim::exec`, `sim::counts`, ... are re-exported below).
pub mod isa;
pub mod kernels;
pub mod run;

pub mod error;
pub mod size;

pub use isa::{arch, bank, instr, layout, ldmatrix, mbarrier, mma, tensormap, tma, wgmma};
pub use kernels::{counts, fa3, occupancy, program, traffic};
pub(crate) use run::mma_fast;
pub use run::{
    access, addr, bank_read, exec, placement, readback, selfcheck, smem, stats, tma_copy, wgmma_run,
};

pub use error::SimError;
