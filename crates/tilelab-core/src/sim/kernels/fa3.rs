//! Instruction counts of the Hopper FlashAttention forward kernel `kernels/fa3_fwd.cu` (the
//! `--style hopper` of `tilelab sim counts flash-attn`): its tiling, the persistent grid's tile
//! schedule, and per CTA and per grid the wgmma (`HGMMA`) instructions by shape, TMA copies and
//! bytes, mbarrier operations, named-barrier syncs and shared stores; and the static counts of
//! one compiled variant's SASS.
//!
//! Everything here is read off the kernel source (its header comment and code; `FA_OVERLAP`,
//! `FA_PINGPONG`, `FA_EARLY` and `FA_XTILE` = 1, the defaults the benchmarks and `tilelab verify
//! --group fa3` build):
//!
//! * persistent grid: `min(B·H·S/128, SMs)` CTAs of 384 threads (warpgroup 0 the producer,
//!   warpgroups 1 and 2 the consumers); CTA `b` computes tile `b` first, then the tiles its
//!   producer claims from a global counter (`atomicAdd`) once it has issued its current tile's
//!   loads, in the order of `t` ([`Fa3Tiling::schedule`] models who gets which: every key block
//!   taking the same time, ties to the lower CTA); tile `t` is (query block `qb`, head `h`)
//!   (`fa3_tile`): not causal `qb = t % nq`, `h = t / nq`; causal, the heads in groups (group
//!   0 of `r` heads, the others of `gh`, [`Fa3Tiling::head_groups`]) and inside a group of `n`
//!   heads, `i` tiles into it, `qb = nq − 1 − i / n`, `h = first head + i % n` (longest first);
//!   a tile runs `qb + 1` key blocks when causal, `S / bn` otherwise (`bn` = `FA_BN`, 128 or,
//!   not causal, 64: [`FA3_BLOCK_N`]);
//! * per key block, each consumer warpgroup issues `D/16` `wgmma.m64n{bn}k16` (S = Q·Kᵀ, both
//!   operands from shared memory) and `bn/16` `wgmma.m64nDk16` (O += P·V, P from
//!   registers); the producer's one thread issues `D/64` TMA boxes of K and of V
//!   (`{64 columns, bn rows}`, `bn`·128 bytes each), and per tile `D/64` boxes of Q
//!   (`{64, 128}`, 16 KiB); each consumer's
//!   leader thread stores its 64 rows of O in `D/64` boxes of `{64, 64}` (8 KiB each);
//! * a tile's first S = Q·Kᵀ is issued in the same ping-pong turn as the last P·V of the tile
//!   before it (`FA_XTILE` = 1), so it runs while that tile's epilogue writes O; a CTA's first
//!   tile issues it on its own, and after a CTA's last tile each consumer issues one S that
//!   reads stale shared memory and is discarded (no branch around a wgmma: ptxas would
//!   serialize the pipeline): `D/16` S wgmma and one commit group per consumer per CTA more
//!   than the key blocks need.
//!
//! Counts of instructions a warpgroup issues (`wgmma`) are per warpgroup instruction; the SASS
//! `HGMMA` runs in each of the warpgroup's 4 warps, so Nsight Compute's warp-level
//! `inst_executed` is 4 times that (given as `warp_executions`). TMA, `mbarrier.init` and
//! `mbarrier.arrive.expect_tx` are issued by one thread (one warp instruction each). Waits
//! (`mbarrier.try_wait` in a loop) are counted as the number of wait calls: the fewest
//! `try_wait` executions, one per call if the phase has already completed.
//!
//! The static counts are a prediction of what ptxas emits (each wgmma, TMA and store call of
//! the source appears once per code copy, every `#pragma unroll` loop unrolled, the runtime loops
//! not): `tilelab verify --group fa3` checks them against `cuobjdump -sass` on an sm_90 GPU.
//!
//! # Example: D = 128, S = 4096, not causal, on the H200's 132 SMs
//! ```
//! use tilelab_core::sim::fa3::{Fa3Tiling, H200_SMS};
//! use tilelab_core::sim::program::FlashProblem;
//! let t = Fa3Tiling::new(128, false);
//! let p = FlashProblem { batch: 2, heads: 16, seq: 4096 };
//! let r = t.report(&p, H200_SMS).unwrap();
//! assert_eq!((r.schedule.tiles, r.schedule.grid), (1024, 132));
//! // CTA 0: 8 tiles of 32 key blocks; each consumer: 256 · (8 + 8) HGMMA.64x128x16.F32 and
//! // the 8 of the discarded S after the last tile.
//! assert_eq!(r.cta0.hgmma_by_sass()["HGMMA.64x128x16.F32"], 2 * (256 * 16 + 8));
//! ```

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use serde::Serialize;

use crate::sim::error::SimError;
use crate::sim::mma::MmaDtype;
use crate::sim::program::FlashProblem;
use crate::sim::wgmma;

/// `FA_BM` of `kernels/fa3_fwd.cu` (query rows per tile, fixed there by `#define`) and the
/// default `FA_BN` (keys per block).
pub const FA3_BLOCK: u32 = 128;
/// The key-block widths `FA_BN` `kernels/fa3_fwd.cu` builds with (its `#error` refuses the
/// others): the S = Q·Kᵀ wgmma is `m64n{FA_BN}k16`, and the kernel carries the `n64` and
/// `n128` wrappers; 64 only without `FA_CAUSAL` (the kernel masks one key block per query
/// block, the diagonal, so a causal build needs `FA_BN = FA_BM`).
pub const FA3_BLOCK_N: [u32; 2] = [64, 128];
/// `FA_STAGES` default of the kernel: K/V buffers.
pub const FA3_STAGES: u32 = 2;
/// Threads per CTA (`__launch_bounds__(384, 1)`): three warpgroups.
pub const FA3_THREADS: u32 = 384;
/// Streaming multiprocessors of an NVIDIA H200 (SXM): the persistent grid's default size
/// ([`crate::sim::arch::H200_SMS`]).
pub use crate::sim::arch::H200_SMS;
/// Consumer warpgroups per CTA (rows 64c..64c+63 of each tile).
pub const FA3_CONSUMERS: u64 = 2;

/// The kernel variant: the compile-time constants of `kernels/fa3_fwd.cu`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Fa3Tiling {
    /// Query rows per tile (`FA_BM`; the kernel fixes 128).
    pub bm: u32,
    /// Keys per block (`FA_BN`: 128, or 64 when not causal; [`FA3_BLOCK_N`]).
    pub bn: u32,
    /// Head dimension D (`FA_D`: 64 or 128).
    pub head_dim: u32,
    /// K/V buffers (`FA_STAGES`, default 2).
    pub stages: u32,
    /// Causal masking (`FA_CAUSAL`).
    pub causal: bool,
    /// Input type (`FA_BF16`: f16 or bf16); O is written in the same type.
    pub dtype: MmaDtype,
}

/// One wgmma of the kernel: its role, PTX and SASS names and how often it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HgmmaCount {
    /// `S = Q·Kᵀ (SS)` or `O += P·V (RS)`.
    pub role: &'static str,
    /// PTX, e.g. `wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16`.
    pub ptx: String,
    /// SASS, e.g. `HGMMA.64x128x16.F32`.
    pub sass: String,
    /// Warpgroup instructions issued by one consumer warpgroup (both issue the same number).
    pub per_consumer: u64,
    /// Warpgroup instructions of both consumers.
    pub total: u64,
    /// Warp-level executions (4 warps per warpgroup instruction: ncu's `inst_executed`).
    pub warp_executions: u64,
}

/// TMA copies (`cp.async.bulk.tensor.2d`, SASS `UTMALDG.2D` / `UTMASTG.2D`) and bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TmaCounts {
    /// Boxes of Q loaded (`{64, 128}`, `D/64` per tile).
    pub q_loads: u64,
    /// Boxes of K loaded (`D/64` per key block).
    pub k_loads: u64,
    /// Boxes of V loaded (`D/64` per key block).
    pub v_loads: u64,
    /// All loads.
    pub loads: u64,
    /// Bytes of Q loaded (`128·D·2` per tile).
    pub q_bytes: u64,
    /// Bytes of K loaded (`bn·D·2` per key block).
    pub k_bytes: u64,
    /// Bytes of V loaded.
    pub v_bytes: u64,
    /// All bytes loaded.
    pub load_bytes: u64,
    /// Boxes of O stored (`{64, 64}`, `D/64` per consumer per tile).
    pub o_stores: u64,
    /// Bytes of O stored (`128·D·2` per tile).
    pub store_bytes: u64,
}

/// mbarrier operations (warp instructions: each is issued by one thread, or by one lane per
/// warp).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MbarrierCounts {
    /// `mbarrier.init` (thread 0: Q full/empty of 2 buffers, K/V full/empty of each stage:
    /// `4 + 4·stages` per CTA).
    pub init: u64,
    /// `mbarrier.arrive.expect_tx` (producer: 1 per tile for Q, 2 per key block for K and V).
    pub arrive_expect_tx: u64,
    /// `mbarrier.arrive` (lane 0 of each consumer warp: K empty and V empty per key block, Q
    /// empty per tile; 8 consumer warps; and the producer's one arrive on Q full per CTA that
    /// tells the consumers there are no more tiles).
    pub arrive: u64,
    /// Wait calls of the producer thread (Q empty per tile and once more before its last
    /// claim's "no more tiles", K and V empty per key block): the fewest `mbarrier.try_wait`
    /// executions.
    pub wait_producer: u64,
    /// Wait calls of the consumer warps (Q full per tile and once more for "no more tiles", K
    /// full and V full per key block, in each of the 8 warps): the fewest `mbarrier.try_wait`
    /// warp executions.
    pub wait_consumer_warps: u64,
}

/// Named-barrier instructions (warp instructions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BarrierCounts {
    /// `__syncthreads()` after the mbarrier init: 12 warps once per CTA.
    pub syncthreads: u64,
    /// Ping-pong turns, `bar.sync 3+c, 256`: per consumer `key blocks + 1` per CTA (one per
    /// wgmma issue point: the CTA's first S, each loop iteration, each tile's last P·V with
    /// the next tile's first S), 4 warps each; and consumer 0's one more at the end of the CTA
    /// (taking consumer 1's last pass).
    pub turn_sync: u64,
    /// Ping-pong hand-overs, `bar.arrive 3+(c^1), 256`: as many as the syncs (consumer 1 arrives
    /// once before its first turn, then after each of its turns).
    pub turn_arrive: u64,
    /// Epilogue `bar.sync 1+c, 128`: 2 per consumer per tile, 4 warps each.
    pub epilogue_sync: u64,
}

/// Dynamic counts of an amount of work: one CTA's tiles, or the whole grid's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fa3Counts {
    /// CTAs the work is spread over (1 for a CTA).
    pub ctas: u64,
    /// (query block, head) tiles computed.
    pub tiles: u64,
    /// Key blocks computed (sum over the tiles).
    pub key_blocks: u64,
    /// wgmma per role (S, then P·V).
    pub hgmma: Vec<HgmmaCount>,
    /// `wgmma.commit_group` per consumer warpgroup (2 per key block: S and P·V, and the
    /// discarded S once per CTA); `wgmma.fence` and `wgmma.wait_group` as many.
    pub wgmma_groups_per_consumer: u64,
    /// TMA copies and bytes.
    pub tma: TmaCounts,
    /// mbarrier operations.
    pub mbarrier: MbarrierCounts,
    /// Named barriers.
    pub barriers: BarrierCounts,
    /// Shared stores (SASS `STS`, warp instructions): the epilogue's `st.shared.b32`, `D/4` per
    /// consumer warp per tile, and the producer's tile number for the consumers, one per tile
    /// and one "no more tiles" per CTA. The kernel has no `ldmatrix` / `stmatrix` (LDSM / STSM:
    /// 0).
    pub sts: u64,
    /// Global `atomicAdd` of the tile scheduler (producer thread): one claim after each tile
    /// (the last one finds no tile) and one count-out per CTA. (The CTA that counts out last
    /// also zeroes the two words, two `atomicExch`, not counted.)
    pub atomics: u64,
}

impl Fa3Counts {
    /// wgmma warpgroup instructions of both consumers summed by SASS name (S and P·V share one
    /// at D = 128).
    pub fn hgmma_by_sass(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for h in &self.hgmma {
            *m.entry(h.sass.clone()).or_insert(0) += h.total;
        }
        m
    }
}

/// One code copy of the consumer loop (the kernel's `FA_OVERLAP` structure).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fa3Copy {
    /// `first tile's first block`, `loop body`, `last block + next tile's first`.
    pub label: &'static str,
    /// S = Q·Kᵀ wgmma in the copy (`D/16`, or 0).
    pub s_hgmma: u64,
    /// P·V wgmma in the copy (`bn/16`, or 0).
    pub pv_hgmma: u64,
}

/// Static counts of one compiled variant (SASS lines), predicted from the code structure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fa3Static {
    /// The consumer's code copies: the CTA's first S (before the tile loop), the loop (S of
    /// block it, P·V of block it − 1), the last block's P·V with the next tile's first S.
    pub copies: Vec<Fa3Copy>,
    /// `HGMMA` lines by SASS name (S's `D/16` per copy × 3 copies; P·V's 8 × 2).
    pub hgmma: BTreeMap<String, u64>,
    /// `UTMALDG.2D` lines: `D/64` each for Q, K and V (the panel loops unrolled).
    pub utmaldg: u64,
    /// `UTMASTG.2D` lines: `D/64` (the epilogue's panel loop).
    pub utmastg: u64,
    /// `STS` lines: `D/4` `st.shared.b32` of the epilogue (prediction: no vectorising, their
    /// addresses are not contiguous) and the producer's one store of the tile number.
    pub sts: u64,
}

/// The persistent grid's tile schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fa3Schedule {
    /// Query blocks per head, `S / 128`.
    pub nq: u64,
    /// Batch × heads.
    pub bh: u64,
    /// Tiles, `nq · bh`.
    pub tiles: u64,
    /// CTAs, `min(tiles, SMs)`.
    pub grid: u64,
    /// Heads per group of the causal tile order (`gh` of `fa3_tile`, see
    /// [`Fa3Tiling::head_groups`]); 1 when not causal (one head after another).
    pub heads_per_group: u64,
    /// Heads of the first group (`r` of `fa3_tile`, `1..=gh`); 1 when not causal.
    pub first_group_heads: u64,
    /// Tiles and key blocks of every CTA, CTA 0 first: the model of the kernel's dynamic
    /// claims (each key block taking the same time; the hardware's order may differ where
    /// CTAs finish together, the grid's totals may not).
    pub per_cta: Vec<CtaWork>,
}

/// One CTA's share of the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CtaWork {
    /// Tiles it computes.
    pub tiles: u64,
    /// Key blocks over those tiles.
    pub key_blocks: u64,
}

/// Everything `sim counts flash-attn --style hopper` reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fa3Report {
    /// The variant.
    pub tiling: Fa3Tiling,
    /// The problem.
    pub problem: FlashProblem,
    /// SMs the persistent grid is sized for.
    pub sms: u32,
    /// Dynamic shared memory the launch asks for, bytes (`FA3_SMEM_BYTES` + 1024 alignment).
    pub dynamic_smem_bytes: u64,
    /// The tile schedule.
    pub schedule: Fa3Schedule,
    /// Static counts (prediction, checked by `tilelab verify --group fa3`).
    #[serde(rename = "static")]
    pub static_counts: Fa3Static,
    /// CTA 0's dynamic counts.
    pub cta0: Fa3Counts,
    /// The CTA with the most key blocks (the first one if several).
    pub busiest_index: u64,
    /// Its dynamic counts.
    pub busiest: Fa3Counts,
    /// The whole grid's dynamic counts.
    pub grid: Fa3Counts,
}

fn overflow(p: &FlashProblem) -> SimError {
    SimError::Overflow {
        problem: format!("--batch {} --heads {} --seq {}", p.batch, p.heads, p.seq),
        quantity: "instruction and byte counts",
    }
}

impl Fa3Tiling {
    /// The default variant (bm = bn = 128, 2 stages, f16) with `head_dim` and `causal`.
    pub fn new(head_dim: u32, causal: bool) -> Fa3Tiling {
        Fa3Tiling {
            bm: FA3_BLOCK,
            bn: FA3_BLOCK,
            head_dim,
            stages: FA3_STAGES,
            causal,
            dtype: MmaDtype::F16,
        }
    }

    /// Dynamic shared memory the kernel needs, bytes: `FA3_SMEM_BYTES` = 3 Q-sized buffers (two
    /// Q, the O staging), each `128·D·2`, + `2·stages` K/V tiles, each `bn·D·2`, plus 1024 for
    /// the 1024-byte alignment (what `scripts/bench_fa3.py` launches with). `None` on overflow.
    pub fn dynamic_smem_bytes(&self) -> Option<u64> {
        let (q, kv) = self.tile_bytes()?;
        let kvs = u64::from(self.stages).checked_mul(2)?.checked_mul(kv)?;
        q.checked_mul(3)?.checked_add(kvs)?.checked_add(1024)
    }

    /// Bytes of one Q tile (`bm·D·2`) and of one K or V tile (`bn·D·2`).
    fn tile_bytes(&self) -> Option<(u64, u64)> {
        let d2 = u64::from(self.head_dim).checked_mul(2)?;
        Some((
            u64::from(self.bm).checked_mul(d2)?,
            u64::from(self.bn).checked_mul(d2)?,
        ))
    }

    /// Checks the variant is one `kernels/fa3_fwd.cu` compiles to and sm_90 can launch.
    ///
    /// # Errors
    /// [`SimError::NotAllowed`] for a head dim other than 64/128, a bm other than 128, a bn
    /// outside [`FA3_BLOCK_N`] (or 64 with causal masking), zero stages; [`SimError::Unsupported`] for another input type than f16/bf16;
    /// [`SimError::SharedMemory`] when the buffers
    /// exceed 227 KiB.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.head_dim != 64 && self.head_dim != 128 {
            return Err(SimError::NotAllowed {
                param: "--head-dim",
                value: self.head_dim.into(),
                allowed: "64, 128 (FA_D of kernels/fa3_fwd.cu)".into(),
            });
        }
        if self.bm != FA3_BLOCK {
            return Err(SimError::NotAllowed {
                param: "--bm",
                value: self.bm.into(),
                allowed: "128 (FA_BM = 128 is fixed in kernels/fa3_fwd.cu)".into(),
            });
        }
        if !FA3_BLOCK_N.contains(&self.bn) {
            return Err(SimError::NotAllowed {
                param: "--bn",
                value: self.bn.into(),
                allowed: "64, 128 (FA_BN of kernels/fa3_fwd.cu: its S = Q·Kᵀ wgmma is m64n64k16 or m64n128k16)".into(),
            });
        }
        if self.causal && self.bn != self.bm {
            return Err(SimError::NotAllowed {
                param: "--bn",
                value: self.bn.into(),
                allowed: "128 with --causal (kernels/fa3_fwd.cu masks only the first key block a query block runs, so FA_CAUSAL needs FA_BN = FA_BM = 128)".into(),
            });
        }
        if self.stages == 0 {
            return Err(SimError::NotAllowed {
                param: "--stages",
                value: 0,
                allowed: "1 or more K/V buffers, as shared memory allows".into(),
            });
        }
        if !matches!(self.dtype, MmaDtype::F16 | MmaDtype::Bf16) {
            return Err(SimError::Unsupported {
                what: format!("--dtype {} in kernels/fa3_fwd.cu", self.dtype.name()),
                allowed: "f16, bf16 (FA_BF16)",
            });
        }
        let needed = self.dynamic_smem_bytes();
        let limit = crate::sim::arch::Arch::Sm90.limits().smem_per_block_bytes;
        if needed.is_none_or(|n| n > u64::from(limit)) {
            let tile = u128::from(self.bm) * u128::from(self.head_dim) * 2;
            let kv = u128::from(self.bn) * u128::from(self.head_dim) * 2;
            return Err(SimError::SharedMemory {
                needed: needed.map_or(
                    3 * tile + 2 * u128::from(self.stages) * kv + 1024,
                    u128::from,
                ),
                lower_bound: false,
                parts: format!(
                    "2 Q + O staging 3 x {tile} B, {} K and {} V tiles of {kv} B, 1024 B alignment",
                    self.stages, self.stages
                ),
                limit,
                arch: "sm_90".into(),
            });
        }
        Ok(())
    }

    /// Checks the problem is one the kernel runs: `S` a positive multiple of 128, `B`, `H` at
    /// least 1, and `B·H·S` rows addressable by the kernel's `int` row coordinates.
    ///
    /// # Errors
    /// [`SimError::NotAllowed`], [`SimError::NotMultiple`].
    pub fn check_problem(&self, p: &FlashProblem) -> Result<(), SimError> {
        for (param, v) in [("--batch", p.batch), ("--heads", p.heads)] {
            if v == 0 {
                return Err(SimError::NotAllowed {
                    param,
                    value: 0,
                    allowed: "1 or more".into(),
                });
            }
        }
        if p.seq == 0 || !p.seq.is_multiple_of(self.bm) {
            return Err(SimError::NotMultiple {
                param: "--seq",
                value: p.seq.into(),
                of: format!("{} (the kernel's query and key block)", self.bm),
                allowed: "128, 256, 384, ...".into(),
            });
        }
        let rows = u64::from(p.batch) * u64::from(p.heads) * u64::from(p.seq);
        if rows > i32::MAX as u64 {
            return Err(SimError::NotAllowed {
                param: "--batch x --heads x --seq",
                value: rows,
                allowed: format!(
                    "at most {} rows (the kernel's int row coordinates)",
                    i32::MAX
                ),
            });
        }
        Ok(())
    }

    /// The S = Q·Kᵀ wgmma's N (`bn`) and the P·V wgmma's N (`D`).
    fn shapes(&self) -> [(&'static str, u32); 2] {
        [("S = Q·Kᵀ (SS)", self.bn), ("O += P·V (RS)", self.head_dim)]
    }

    /// wgmma per key block per consumer: S `D/16` k-steps, P·V `bn/16`.
    fn per_block(&self) -> [u64; 2] {
        [u64::from(self.head_dim / 16), u64::from(self.bn / 16)]
    }

    /// Static counts of one compiled variant (see [`Fa3Static`]).
    pub fn static_counts(&self) -> Fa3Static {
        let [s, pv] = self.per_block();
        let copies = vec![
            Fa3Copy {
                label: "first tile's first block",
                s_hgmma: s,
                pv_hgmma: 0,
            },
            Fa3Copy {
                label: "loop body",
                s_hgmma: s,
                pv_hgmma: pv,
            },
            Fa3Copy {
                label: "last block + next tile's first",
                s_hgmma: s,
                pv_hgmma: pv,
            },
        ];
        let mut hgmma = BTreeMap::new();
        let [(_, ns), (_, npv)] = self.shapes();
        let s_lines: u64 = copies.iter().map(|c| c.s_hgmma).sum();
        let pv_lines: u64 = copies.iter().map(|c| c.pv_hgmma).sum();
        *hgmma
            .entry(crate::sim::instr::wgmma_f32_sass(ns, self.dtype))
            .or_insert(0) += s_lines;
        *hgmma
            .entry(crate::sim::instr::wgmma_f32_sass(npv, self.dtype))
            .or_insert(0) += pv_lines;
        let panels = u64::from(self.head_dim / 64);
        Fa3Static {
            copies,
            hgmma,
            utmaldg: 3 * panels,
            utmastg: panels,
            sts: u64::from(self.head_dim / 4) + 1,
        }
    }

    /// The causal tile order's head groups (`fa3_groups` of the kernel) for `nq` query blocks
    /// per head, `bh` heads, `grid` CTAs and `seq` keys: `(gh, r)`, groups of `gh` heads but
    /// the first, of `r` (`1..=gh`). The wanted size is at least `⌈2·grid/nq⌉` heads (two
    /// tiles per CTA, so the claims even out) and at most the heads whose K and V
    /// (`seq·D·4` bytes each) fit in 24 MiB of the H200's 50 MB L2, within `1..=bh`; then
    /// `ng = ⌊bh / wanted⌋` groups of `gh = ⌈bh / ng⌉`, the remainder first.
    pub fn head_groups(&self, nq: u64, bh: u64, grid: u64, seq: u64) -> (u64, u64) {
        let l2_heads = ((24u64 << 20) / (seq * u64::from(self.head_dim) * 4)).max(1);
        let want = l2_heads.min((2 * grid).div_ceil(nq)).clamp(1, bh);
        let ng = bh / want;
        let gh = bh.div_ceil(ng);
        (gh, bh - (bh.div_ceil(gh) - 1) * gh)
    }

    /// Query block and head of tile `t` (`fa3_tile` of the kernel), for `nq` query blocks per
    /// head and causal groups `(gh, r)` ([`Self::head_groups`]).
    fn tile(&self, t: u64, nq: u64, (gh, r): (u64, u64)) -> (u64, u64) {
        if !self.causal {
            return (t % nq, t / nq);
        }
        let (i, n, h0) = if t < nq * r {
            (t, r, 0)
        } else {
            let u = t - nq * r;
            let g = u / (nq * gh);
            (u - g * nq * gh, gh, r + g * gh)
        };
        (nq - 1 - i / n, h0 + i % n)
    }

    /// The persistent grid's schedule on `sms` SMs. CTA `b` runs tile `b` first; every later
    /// tile, in the order of `t`, goes to the CTA whose claim comes first, modelled as the CTA
    /// with the fewest key blocks so far (the producer claims when it has issued its tile's
    /// loads, a fixed lead over the consumers' finish), the lower index on a tie.
    ///
    /// # Errors
    /// Those of [`Self::validate`] and [`Self::check_problem`]; [`SimError::NotAllowed`] for
    /// `sms` 0 or above `i32::MAX`.
    pub fn schedule(&self, p: &FlashProblem, sms: u32) -> Result<Fa3Schedule, SimError> {
        self.validate()?;
        self.check_problem(p)?;
        if sms == 0 || sms > i32::MAX as u32 {
            return Err(SimError::NotAllowed {
                param: "--sms",
                value: sms.into(),
                allowed: format!("1..={}", i32::MAX),
            });
        }
        let nq = u64::from(p.seq / self.bm);
        let bh = u64::from(p.batch)
            .checked_mul(u64::from(p.heads))
            .ok_or_else(|| overflow(p))?;
        let tiles = nq.checked_mul(bh).ok_or_else(|| overflow(p))?;
        let grid = tiles.min(u64::from(sms));
        // grid ≤ i32::MAX, so 2·grid + nq fits; seq·D·4 < 2^31·2^9.
        let groups = if self.causal {
            self.head_groups(nq, bh, grid, u64::from(p.seq))
        } else {
            (1, 1)
        };
        let full = u64::from(p.seq / self.bn);
        let blocks = |t: u64| {
            if self.causal {
                self.tile(t, nq, groups).0 + 1
            } else {
                full
            }
        };
        let mut per_cta = vec![
            CtaWork {
                tiles: 0,
                key_blocks: 0,
            };
            grid as usize
        ];
        // Min-heap of (key blocks so far, CTA): the next claim's owner.
        let mut ready = BinaryHeap::with_capacity(grid as usize);
        for t in 0..tiles {
            let b = if t < grid {
                t
            } else {
                let Reverse((_, b)) = ready.pop().expect("grid > 0 CTAs in the heap");
                b
            };
            let w = &mut per_cta[b as usize];
            w.tiles += 1;
            w.key_blocks = w
                .key_blocks
                .checked_add(blocks(t))
                .ok_or_else(|| overflow(p))?;
            ready.push(Reverse((w.key_blocks, b)));
        }
        Ok(Fa3Schedule {
            nq,
            bh,
            tiles,
            grid,
            heads_per_group: groups.0,
            first_group_heads: groups.1,
            per_cta,
        })
    }

    /// Dynamic counts of `tiles` tiles holding `key_blocks` key blocks, run by `ctas` CTAs
    /// (per-CTA work, the mbarrier init and `__syncthreads`, counted once per CTA).
    ///
    /// # Errors
    /// [`SimError::Overflow`] (naming `p`) when a count does not fit in 64 bits.
    pub fn counts(
        &self,
        p: &FlashProblem,
        ctas: u64,
        tiles: u64,
        key_blocks: u64,
    ) -> Result<Fa3Counts, SimError> {
        let of = || overflow(p);
        let mul = |a: u64, b: u64| a.checked_mul(b).ok_or_else(of);
        let add = |a: u64, b: u64| a.checked_add(b).ok_or_else(of);
        let d = u64::from(self.head_dim);
        let panels = d / 64;
        let consumer_warps = FA3_CONSUMERS * 4;
        let mut hgmma = Vec::new();
        // S runs once per key block and once more per CTA (the discarded S after its last
        // tile); P·V once per key block.
        let s_issues = add(key_blocks, ctas)?;
        let issues = [s_issues, key_blocks];
        for (((role, n), per), times) in self.shapes().into_iter().zip(self.per_block()).zip(issues)
        {
            let per_consumer = mul(times, per)?;
            let total = mul(per_consumer, FA3_CONSUMERS)?;
            hgmma.push(HgmmaCount {
                role,
                ptx: wgmma::ptx(n, self.dtype),
                sass: crate::sim::instr::wgmma_f32_sass(n, self.dtype),
                per_consumer,
                total,
                warp_executions: mul(total, 4)?,
            });
        }
        let box_kv = u64::from(self.bn) * 64 * 2; // {64 columns, bn rows} of 2-byte elements
        let box_q = u64::from(self.bm) * 64 * 2;
        let box_o = 64 * 64 * 2; // {64 columns, 64 rows}
        let q_loads = mul(tiles, panels)?;
        let k_loads = mul(key_blocks, panels)?;
        let o_stores = mul(mul(tiles, panels)?, FA3_CONSUMERS)?;
        let tma = TmaCounts {
            q_loads,
            k_loads,
            v_loads: k_loads,
            loads: add(q_loads, mul(k_loads, 2)?)?,
            q_bytes: mul(q_loads, box_q)?,
            k_bytes: mul(k_loads, box_kv)?,
            v_bytes: mul(k_loads, box_kv)?,
            load_bytes: add(mul(q_loads, box_q)?, mul(mul(k_loads, box_kv)?, 2)?)?,
            o_stores,
            store_bytes: mul(o_stores, box_o)?,
        };
        // Producer: per tile one Q wait + expect_tx, per key block K and V each; per CTA one
        // more Q wait and a plain arrive for "no more tiles".
        let producer_ops = add(tiles, mul(key_blocks, 2)?)?;
        // Each consumer warp: per tile Q (arrive on Q empty; wait on Q full), per key block K
        // and V (arrive on K/V empty; wait on K/V full); per CTA one more Q full wait.
        let per_warp_ops = add(tiles, mul(key_blocks, 2)?)?;
        let mbarrier = MbarrierCounts {
            init: mul(ctas, 4 + 4 * u64::from(self.stages))?,
            arrive_expect_tx: producer_ops,
            arrive: add(mul(per_warp_ops, consumer_warps)?, ctas)?,
            wait_producer: add(producer_ops, ctas)?,
            wait_consumer_warps: mul(add(per_warp_ops, ctas)?, consumer_warps)?,
        };
        // Both consumers: key blocks + 1 turns per CTA, 4 warps each; consumer 0's last sync and
        // consumer 1's first arrive: 4 warps per CTA each.
        let turns = add(mul(s_issues, consumer_warps)?, mul(ctas, 4)?)?;
        let barriers = BarrierCounts {
            syncthreads: mul(ctas, u64::from(FA3_THREADS / 32))?,
            turn_sync: turns,
            turn_arrive: turns,
            epilogue_sync: mul(mul(tiles, 2)?, consumer_warps)?,
        };
        Ok(Fa3Counts {
            ctas,
            tiles,
            key_blocks,
            hgmma,
            wgmma_groups_per_consumer: add(key_blocks, s_issues)?,
            tma,
            mbarrier,
            barriers,
            sts: add(mul(mul(tiles, d / 4)?, consumer_warps)?, add(tiles, ctas)?)?,
            atomics: add(tiles, ctas)?,
        })
    }

    /// The whole report on `sms` SMs: schedule, static counts, CTA 0, the busiest CTA, the grid.
    ///
    /// # Errors
    /// Those of [`Self::schedule`] and [`Self::counts`].
    pub fn report(&self, p: &FlashProblem, sms: u32) -> Result<Fa3Report, SimError> {
        let schedule = self.schedule(p, sms)?;
        let first = schedule.per_cta[0];
        let (busiest_index, busiest) =
            schedule
                .per_cta
                .iter()
                .enumerate()
                .fold((0usize, first), |(bi, bw), (i, w)| {
                    if w.key_blocks > bw.key_blocks {
                        (i, *w)
                    } else {
                        (bi, bw)
                    }
                });
        let mut total_kb = 0u64;
        for w in &schedule.per_cta {
            total_kb = total_kb
                .checked_add(w.key_blocks)
                .ok_or_else(|| overflow(p))?;
        }
        Ok(Fa3Report {
            tiling: *self,
            problem: *p,
            sms,
            dynamic_smem_bytes: self.dynamic_smem_bytes().ok_or_else(|| overflow(p))?,
            static_counts: self.static_counts(),
            cta0: self.counts(p, 1, first.tiles, first.key_blocks)?,
            busiest_index: busiest_index as u64,
            busiest: self.counts(p, 1, busiest.tiles, busiest.key_blocks)?,
            grid: self.counts(p, schedule.grid, schedule.tiles, total_kb)?,
            schedule,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prob(batch: u32, heads: u32, seq: u32) -> FlashProblem {
        FlashProblem { batch, heads, seq }
    }

    /// B=1 H=2 S=256 causal: nq 2, bh 2, 4 tiles on 4 CTAs; t=0,1 are query block 1 (2 key
    /// blocks), t=2,3 query block 0 (1 key block).
    #[test]
    fn small_causal_schedule() {
        let s = Fa3Tiling::new(64, true)
            .schedule(&prob(1, 2, 256), H200_SMS)
            .unwrap();
        assert_eq!((s.nq, s.bh, s.tiles, s.grid), (2, 2, 4, 4));
        let kb: Vec<u64> = s.per_cta.iter().map(|w| w.key_blocks).collect();
        assert_eq!(kb, vec![2, 2, 1, 1]);
    }

    /// Two SMs, 4 tiles not causal (S=256: 2 key blocks each): CTA 0 gets t=0,2, CTA 1 t=1,3.
    #[test]
    fn fewer_sms_than_tiles() {
        let s = Fa3Tiling::new(128, false)
            .schedule(&prob(1, 2, 256), 2)
            .unwrap();
        assert_eq!(s.grid, 2);
        assert_eq!(
            s.per_cta,
            vec![
                CtaWork {
                    tiles: 2,
                    key_blocks: 4
                };
                2
            ]
        );
    }

    /// B=1 H=2 S=256 not causal on 2 SMs: each CTA runs 2 tiles of 2 key blocks. Per consumer
    /// (module docs): S = (4 key blocks + 1 discarded) · D/16 wgmma, P·V = 4 · 8. D = 64: S
    /// `m64n128k16` 5 · 4 = 20, P·V `m64n64k16` 32; D = 128: one shape, 5 · 8 + 32 = 72; both
    /// consumers summed.
    #[test]
    fn hgmma_by_sass_sums_both_consumers_by_shape() {
        let p = prob(1, 2, 256);
        let d64 = Fa3Tiling::new(64, false).report(&p, 2).unwrap();
        let want: BTreeMap<String, u64> = [
            ("HGMMA.64x128x16.F32".to_string(), 40),
            ("HGMMA.64x64x16.F32".to_string(), 64),
        ]
        .into();
        assert_eq!(d64.cta0.hgmma_by_sass(), want);
        let d128 = Fa3Tiling::new(128, false).report(&p, 2).unwrap();
        let want: BTreeMap<String, u64> = [("HGMMA.64x128x16.F32".to_string(), 144)].into();
        assert_eq!(d128.cta0.hgmma_by_sass(), want);
    }

    #[test]
    fn static_d64_splits_shapes() {
        // D=64: S is m64n128k16, 64/16 = 4 per copy, 3 copies; P·V m64n64k16, 8 per copy, 2 copies;
        // STS: 64/4 = 16 of the epilogue and the producer's tile number.
        let st = Fa3Tiling::new(64, false).static_counts();
        assert_eq!(st.hgmma["HGMMA.64x128x16.F32"], 12);
        assert_eq!(st.hgmma["HGMMA.64x64x16.F32"], 16);
        assert_eq!((st.utmaldg, st.utmastg, st.sts), (3, 1, 17));
    }

    /// Shared memory at D = 128 (module docs: 3 Q-sized buffers + 2·stages K/V tiles of
    /// 128·128·2 = 32768 B, + 1024): 2 stages 229,376 + 1,024 = 230,400 B fits sm_90's 232,448;
    /// 3 stages 295,936 does not, and the error names the tile. Problems: S a positive multiple
    /// of 128 and B·H·S ≤ i32::MAX rows (1024·16·131072 = 2^31 is one too many).
    #[test]
    fn shared_memory_and_problem_limits() {
        let mut t = Fa3Tiling::new(128, false);
        assert_eq!(t.dynamic_smem_bytes(), Some(230_400));
        assert!(t.validate().is_ok());
        t.stages = 3;
        let e = t.validate().unwrap_err().to_string();
        assert!(e.contains("295936") && e.contains("3 x 32768 B"), "{e}");
        let t = Fa3Tiling::new(64, true);
        assert!(t.check_problem(&prob(2, 3, 256)).is_ok());
        for bad in [
            prob(0, 1, 128),
            prob(1, 0, 128),
            prob(1, 1, 0),
            prob(1, 1, 100),
        ] {
            assert!(t.check_problem(&bad).is_err(), "{bad:?}");
        }
        assert!(t.check_problem(&prob(1024, 16, 131_072 - 128)).is_ok());
        let e = t.check_problem(&prob(1024, 16, 131_072)).unwrap_err();
        assert!(e.to_string().contains("2147483648"), "{e}");
    }

    /// Causal head groups by the doc's rule, worked by hand at D = 128. S = 4096 (nq 32), 32
    /// heads, 132 CTAs: L2 holds 24 MiB / (4096·128·4 B) = 12 heads, two tiles per CTA want
    /// ⌈264/32⌉ = 9, so 9; ⌊32/9⌋ = 3 groups of ⌈32/3⌉ = 11, the first 32 − 2·11 = 10. With
    /// seq 16384 (nq 16 passed), 31 heads: L2 holds 3 (the grid wants 17), ⌊31/3⌋ = 10 groups of
    /// ⌈31/10⌉ = 4, the first 31 − 7·4 = 3.
    #[test]
    fn head_groups_by_hand() {
        let t = Fa3Tiling::new(128, true);
        assert_eq!(t.head_groups(32, 32, 132, 4096), (11, 10));
        assert_eq!(t.head_groups(16, 31, 132, 16384), (4, 3));
    }

    /// `fa3_tile` by the module docs, worked by hand with nq = 4. Not causal: t = 9 is query
    /// block 9 % 4 = 1 of head 9 / 4 = 2. Causal with groups (gh 3, r 2): group 0 (heads 0, 1)
    /// holds tiles 0..8 longest first, two heads at a time: t 0 → (3, 0), 1 → (3, 1), 2 → (2, 0),
    /// 7 → (0, 1); group 1 (heads 2..4) starts at t 8 → (3, 2); t 13 is 5 tiles into it → (2, 4);
    /// group 2 (heads 5..7) starts at t 20 → (3, 5); t 23 → (2, 5).
    #[test]
    fn tile_order_by_hand() {
        assert_eq!(Fa3Tiling::new(64, false).tile(9, 4, (1, 1)), (1, 2));
        let t = Fa3Tiling::new(64, true);
        let got: Vec<_> = [0, 1, 2, 7, 8, 13, 20, 23]
            .iter()
            .map(|&i| t.tile(i, 4, (3, 2)))
            .collect();
        let want = [
            (3, 0),
            (3, 1),
            (2, 0),
            (0, 1),
            (3, 2),
            (2, 4),
            (3, 5),
            (2, 5),
        ];
        assert_eq!(got, want);
    }

    /// `--sms` is 1..=i32::MAX (the kernel's `int` grid): 0 and 2^31 are refused, i32::MAX runs
    /// (a 4-tile problem then has a grid of 4).
    #[test]
    fn sms_range() {
        let t = Fa3Tiling::new(128, false);
        let p = prob(1, 2, 256);
        assert_eq!(t.schedule(&p, i32::MAX as u32).unwrap().grid, 4);
        for bad in [0, 1 << 31] {
            let e = t.schedule(&p, bad).unwrap_err().to_string();
            assert!(e.contains("--sms") && e.contains(&bad.to_string()), "{e}");
        }
    }

    #[test]
    fn rejects_what_the_kernel_does_not_build() {
        let mut t = Fa3Tiling::new(96, false);
        assert!(
            t.validate()
                .unwrap_err()
                .to_string()
                .contains("--head-dim 96")
        );
        t.head_dim = 128;
        t.stages = 3; // 3·32 KiB + 6·32 KiB + 1 KiB > 227 KiB
        assert!(matches!(t.validate(), Err(SimError::SharedMemory { .. })));
        t.stages = 2;
        for bn in [32, 96, 192, 256] {
            t.bn = bn;
            let e = t.validate().unwrap_err().to_string();
            assert!(
                e.contains(&format!("--bn {bn}")) && e.contains("64, 128"),
                "{e}"
            );
        }
        t.bn = 64;
        assert!(t.validate().is_ok());
        t.causal = true;
        let e = t.validate().unwrap_err().to_string();
        assert!(e.contains("--bn 64") && e.contains("--causal"), "{e}");
    }

    /// `FA_BN = 64` (kernels/fa3_fwd.cu, not causal), D = 128, S = 512, one CTA: 512/128 = 4
    /// tiles of 512/64 = 8 key blocks, 32 in all; S = Q·Kᵀ is m64n64k16, D/16 = 8 per block plus
    /// the discarded S: 8·33 = 264 per consumer; P·V m64n128k16, 64/16 = 4 per block: 128 per
    /// consumer. Q boxes {64, 128} are 16384 bytes, K and V boxes {64, 64} 8192, 2 panels each:
    /// 8 Q loads and 64 of K and of V, so 136 loads and 8·16384 + 128·8192 = 1,179,648 load
    /// bytes. Shared memory: 3·32768 + 4·16384 + 1024 = 164,864 bytes.
    #[test]
    fn key_blocks_of_64() {
        let mut t = Fa3Tiling::new(128, false);
        t.bn = 64;
        assert_eq!(t.dynamic_smem_bytes(), Some(164_864));
        let r = t.report(&prob(1, 1, 512), 1).unwrap();
        let c = &r.cta0;
        assert_eq!((c.tiles, c.key_blocks), (4, 32));
        let want: BTreeMap<String, u64> = [
            ("HGMMA.64x64x16.F32".to_string(), 2 * 264),
            ("HGMMA.64x128x16.F32".to_string(), 2 * 128),
        ]
        .into();
        assert_eq!(c.hgmma_by_sass(), want);
        assert_eq!((c.tma.loads, c.tma.load_bytes), (136, 1_179_648));
    }
}
