//! The shared-memory request model: how many **wavefronts** one warp-wide shared-memory
//! instruction takes on sm_80/sm_90, which lanes each wavefront serves, and the **bank
//! conflicts** Nsight Compute reports for it.
//!
//! Shared memory has [`NUM_BANKS`] = 32 banks of [`BANK_BYTES`] = 4 bytes; byte address `a`
//! lives in bank `(a / 4) % 32` (FA v1→v2 article: `bank = floor(byte_address / 4) mod 32`). A
//! *wavefront* is one pass through the banks in which every bank delivers at most one 4-byte
//! word; any number of lanes may receive the same word (broadcast).
//!
//! # The rules (each checked against an H200, see `tests/data/`)
//! A request is split into **units** (units without an active lane are dropped); each unit costs
//! as many wavefronts as the largest number of *distinct 4-byte words* its active lanes touch in
//! any one bank (at least one):
//!
//! * accesses of 1, 2 or 4 bytes (`ld/st.shared.{u8,u16,b32}`): the whole warp is one unit;
//! * 8-byte accesses (`.v2.b32`): each half-warp (lanes 0-15, 16-31) is a unit;
//! * 16-byte accesses (`.v4.b32`): each quarter-warp (lanes 0-7, 8-15, …) is a unit;
//! * **vector loads** only (never stores): the sibling units — the two half-warps of a `.v2`
//!   load, quarter-warps 0+1 and 2+3 of a `.v4` load — are issued together ("packed" return,
//!   twice the register bandwidth) when the active lanes read addresses in pairs: every active
//!   lane `n` whose partner `n ^ 1` is active reads the partner's address, **or** every active lane
//!   `n` whose partner `n ^ 2` is active does (lanes with an inactive partner are free). E.g. every
//!   lane reading one address: packed (1 wavefront for `.v2`, 2 for `.v4`); `AABB CCDD …` or
//!   `ABAB ABAB …`: packed; `ABCD ABCD …`: not packed; one odd lane out in a uniform warp: not
//!   packed. Rule as NVIDIA's Greg Smith states it for sm_70–sm_75 ("Unexpected shared memory
//!   bank conflict", NVIDIA developer forums, 2019); it holds on the H200 for every `.v2`/`.v4`
//!   load record in `tests/data/` (1,160 records where it decides the count);
//! * `ldmatrix.x{1,2,4}[.trans]`: each 8x8 matrix (the eight 16-byte rows whose addresses lanes
//!   8m..8m+7 give) is a unit, so even eight identical row addresses cost one wavefront per matrix;
//! * `stmatrix.x{1,2,4}[.trans]` (sm_90): like `ldmatrix`, one unit per matrix (measured: all
//!   570 records of `tests/data/h200_stmatrix_2026-11-30.json`, wavefronts in
//!   `..._mem_shared_op_st.sum`);
//! * `cp.async.ca` of 4, 8 or 16 bytes (`LDGSTS.E[.64|.128]`), modelled **only when every unit
//!   reads distinct `size`-byte pieces of one 128-byte global line** ([`WarpRequest::global_addrs`];
//!   units as an `st.shared` of that width: warp, half-warps, quarter-warps, 128 bytes each):
//!   the tile copy, where each unit reads one L1 line, every L1 bank at most once. Then a unit
//!   costs the store rule **without merging**: the largest number of lane writes landing in one
//!   bank (32 lanes copying into one word: 32 wavefronts, where `st.shared` takes 1); bank
//!   conflicts = wavefronts − units. Measured on the H200: all 77 such records of
//!   `tests/data/h200_cpasync_2026-11-30.json` and all 22 such random and structured requests of
//!   `tests/data/h200_cpasync_verify_2026-11-30.json` (wavefronts and conflicts). Everything else
//!   is **not modelled** ([`NotModelled`]): no sources given; a unit reading several lines or one
//!   address twice. For the latter ("spread sources") the model gives [`SassBounds`] on the count
//!   ncu attributes to the instruction, from the banks each unit reads and writes, and no L1TEX
//!   count (that one depends on the cache state). A rule grouping lanes by source line fitted
//!   all 129 records of the first file but failed 29 of 77 random requests measured afterwards
//!   (docs/wavefront-model.md).
//!   The cold/warm probe of 2026-12-01 (`tests/data/h200_cpasync_lab_2026-12-01.json`, 570
//!   launches) matched the one-line rule on all 119 launches of the class (47 fresh random
//!   requests) and showed that a cold launch's L1TEX count can carry a miss-path surplus the
//!   banks do not explain; the two rules fitted on its 65 structured spread requests predict
//!   only 35 of 63 fresh random ones. Its second run
//!   (`tests/data/h200_cpasync_lab_d_2026-12-01.json`, 520 launches) measured 113 spread
//!   requests warm: they predict 80 (L1TEX) and 79 (SASS-attributed) of them, and warm the two
//!   counters disagree on 44, so the spread class stays not modelled.
//! * `cp.async.cg` (`LDGSTS.E.BYPASS.128`): **not modelled** ([`NotModelled::CpAsyncCg`]): on the
//!   H200 no L1TEX shared-memory wavefront counter moves for it (41 records: the launch's
//!   `l1tex__data_pipe_lsu_wavefronts_mem_shared.sum` is only the kernel's 4 `op_misc`
//!   wavefronts), so there is no measured count to model; ncu's SASS-attributed `..._op_ldgsts`
//!   count for it follows the global sectors, not the banks. ncu books `.ca` wavefronts neither
//!   in `..._op_st` nor `..._op_ld` but in `l1tex__data_pipe_lsu_wavefronts_mem_shared.sum` (see
//!   `docs/wavefront-model.md`).
//!
//! Nsight Compute's `l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum` is then
//! `wavefronts − units` (one wavefront per unit is the ideal): for a full warp without packing
//! that equals `max(0, wavefronts − ideal)` with ideal 1/2/4/one-per-matrix; a packed pair is
//! one unit costing the distinct words per bank of both siblings' lanes (two packed half-warps
//! reading different words of the same banks: 2 wavefronts, 1 conflict). It held for every
//! record measured, full or partial mask.
//!
//! Sources: measured `tests/data/h200_wavefronts.json` (237 records, all reproduced) and the
//! records `tilelab verify` took on an H200 with `kernels/smem_probe.cu` under `ncu`
//! (`tests/data/h200_*.json`, 5,460 records, all reproduced); `docs/wavefront-model.md` tells
//! how each rule was checked.

use crate::sim::arch::Arch;
use crate::sim::error::SimError;
use crate::sim::instr::{CpAsyncKind, Instruction};

/// Lanes in a warp.
pub const WARP_SIZE: usize = 32;
/// Shared-memory banks.
pub const NUM_BANKS: usize = 32;
/// Bytes per bank word.
pub const BANK_BYTES: u32 = 4;

/// Bank of a byte address: `(byte_addr / 4) % 32`.
pub fn bank_of(byte_addr: u32) -> usize {
    ((byte_addr / BANK_BYTES) as usize) % NUM_BANKS
}

/// Why the model gives no wavefront count for a request (`cp.async` only; every other request
/// is modelled). Commands show the reason ([`NotModelled`]'s `Display`) instead of a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NotModelled {
    /// `cp.async.cg` (`LDGSTS.E.BYPASS.128`): no L1TEX shared-memory wavefront counter moves for
    /// it on the H200 (41 records of `tests/data/h200_cpasync_2026-11-30.json`).
    CpAsyncCg,
    /// `cp.async.ca` without each lane's global source address: its shared-side cost depends on
    /// which 128-byte lines the sources lie in.
    CpAsyncSourcesUnknown,
    /// `cp.async.ca` with a unit whose lanes read from more than one 128-byte global line, or
    /// two of them the same bytes. Its L1TEX wavefronts and bank conflicts are not modelled: on
    /// the H200 they depend on the cache state (the same request measured cold and warm gives
    /// different counts, `tests/data/h200_cpasync_lab_d_2026-12-01.json`), and no exact rule for
    /// ncu's SASS-attributed count held on held-out requests either (docs/wavefront-model.md).
    /// What the model does give is the bounds on that SASS-attributed count ([`SassBounds`]).
    CpAsyncSpreadSources(SassBounds),
    /// `cp.async.ca` with an active lane that reads fewer bytes than it writes (PTX's `src-size`
    /// operand below the copy size, or the `ignore-src` predicate set: the rest is zero-filled).
    /// Set by `tilelab ptx`'s interpreter, which knows each lane's `src-size`; no such copy has
    /// been measured, so neither a count nor bounds are given.
    CpAsyncZeroFill,
}

/// Bounds on the wavefronts Nsight Compute attributes to one `cp.async.ca` instruction
/// (`sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum`, the count its Source
/// page shows; the same cold and warm on the H200). Its SASS-attributed bank conflicts
/// (`sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum`) are that count −
/// `units` in every launch measured.
///
/// Per unit (warp, half-warps or quarter-warps, as an `st.shared` of the copy width), with every
/// lane's `size / 4` words counted:
/// * `R` = the most lane words read from one L1 bank (global byte address / 4 mod 32; two lanes
///   reading one word count twice: the read side does not broadcast);
/// * `W` = the most lane words written to one shared bank (never merged);
/// * `G` = read groups: lanes taken in lane order, each joining the first group none of whose
///   lanes reads one of its L1 banks (a lane's words are read together).
///
/// The unit costs at least `max(R, W)` (one word per bank per wavefront, on each side) and at
/// most `G + W − 1` (one read group per wavefront, every shared bank writing one waiting word
/// per wavefront: a bank's last write then ends at most `W − 1` wavefronts after the last read
/// group). `lo` and `hi` sum these over the units. When every unit reads one group (`G = 1`,
/// which includes the one-line tile copy) the two meet: the count is exact.
///
/// Measured on the H200: the 652 distinct spread requests of 2026-11-30 and 2026-12-01 before
/// the bounds were written, and 290 measured after them (`tests/data/h200_cpasync_lab_f_2026-12-01.json`,
/// written to press on `hi`, and `h200_cpasync_verify_seed43_2026-12-01.json`); 797 distinct
/// requests in all, every SASS-attributed count within its bounds (`scripts/research/hopper/cpasync_bounds.py`;
/// docs/wavefront-model.md, "Bounds on the SASS-attributed count").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SassBounds {
    /// The least SASS-attributed wavefronts (sum over units of `max(R, W)`).
    pub lo: u32,
    /// The most (sum over units of `G + W − 1`); at least `lo`.
    pub hi: u32,
    /// Units with an active lane: the conflict-free count.
    pub units: u32,
}

impl std::fmt::Display for SassBounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.lo == self.hi {
            let s = if self.lo == 1 { "" } else { "s" };
            write!(f, "{} wavefront{s}", self.lo)
        } else {
            write!(f, "between {} and {} wavefronts", self.lo, self.hi)
        }
    }
}

impl std::fmt::Display for NotModelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NotModelled::CpAsyncCg => {
                "not modelled: cp.async.cg's shared-side writes move no L1TEX shared-memory wavefront counter on the H200 (41 measured records), so there is no count to model"
            }
            NotModelled::CpAsyncSourcesUnknown => {
                "not modelled: cp.async.ca's shared-side cost depends on which 128-byte global lines the lanes' sources lie in; give each lane's global source address"
            }
            NotModelled::CpAsyncZeroFill => {
                "not modelled: an active lane of this cp.async.ca reads fewer bytes than it writes (src-size below the copy size, or ignore-src; the rest is zero-filled), and no such copy has been measured"
            }
            NotModelled::CpAsyncSpreadSources(b) => {
                return write!(
                    f,
                    "not modelled (the L1TEX count): a unit of this cp.async.ca reads from several 128-byte global lines or two lanes read the same bytes, and that count then depends on the cache state; ncu's SASS-attributed count (..._op_ldgsts) is {b} for {} (bounds from the banks read and written, docs/wavefront-model.md)",
                    if b.units == 1 {
                        "1 unit".to_string()
                    } else {
                        format!("{} units", b.units)
                    }
                );
            }
        })
    }
}

/// One warp-wide shared-memory instruction with its 32 lane addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpRequest {
    /// The instruction the warp executes.
    pub instruction: Instruction,
    /// Byte offset into shared memory given by each lane, lane 0 first. For `ldmatrix`, lane
    /// `8m + r` gives the address of row `r` of matrix `m` (lanes beyond the matrices are ignored).
    pub lane_byte_offsets: [u32; WARP_SIZE],
    /// Active lanes, bit `i` = lane `i`. `ldmatrix` requires all 32.
    pub active_mask: u32,
    /// `cp.async` only: each lane's global source byte address (lane 0 first; inactive lanes
    /// ignored). Its 128-byte line decides the shared-side cost (module docs). `None`: unknown,
    /// and a `cp.async.ca` is then not modelled ([`NotModelled::CpAsyncSourcesUnknown`]).
    /// Ignored by every other instruction.
    pub global_addrs: Option<Box<[u64; WARP_SIZE]>>,
}

/// The shared memory being modelled: its size in bytes and the architecture it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedMemoryConfig {
    /// Architecture whose per-block limit is assumed.
    pub arch: Arch,
    /// Size in bytes (addresses must satisfy `offset + width <= size_bytes`).
    pub size_bytes: u32,
}

impl SharedMemoryConfig {
    /// The largest shared memory one block may use on `arch` (227 KiB on sm_90).
    pub fn for_arch(arch: Arch) -> Self {
        SharedMemoryConfig {
            arch,
            size_bytes: arch.limits().smem_per_block_bytes,
        }
    }
}

impl Default for SharedMemoryConfig {
    /// sm_90 (H100/H200): 232,448 bytes (227 KiB), the per-block maximum with opt-in.
    fn default() -> Self {
        SharedMemoryConfig::for_arch(Arch::Sm90)
    }
}

/// One wavefront: the word each bank delivers and the lanes that receive data in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wavefront {
    /// Index of the unit (half-warp, quarter-warp, matrix, or whole warp) it belongs to.
    pub unit: usize,
    /// Lanes that receive (load) or send (store) at least one word in this wavefront; for
    /// `ldmatrix`, the address lanes whose rows it reads.
    pub lanes: u32,
    /// Per bank, the 4-byte word index (`byte_offset / 4`) accessed, if any.
    pub bank_words: [Option<u32>; NUM_BANKS],
    /// Per bank, the lanes that receive (or send) that word: more than one bit is a broadcast.
    pub bank_lanes: [u32; NUM_BANKS],
}

/// The model's answer for one [`WarpRequest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestReport {
    /// The instruction.
    pub instruction: Instruction,
    /// Active lanes.
    pub active_mask: u32,
    /// Lane masks of the units, in issue order.
    pub units: Vec<u32>,
    /// Wavefronts in issue order (none when the request is not modelled).
    pub wavefronts: Vec<Wavefront>,
    /// Why there is no count (then `units` and `wavefronts` are empty).
    pub not_modelled: Option<NotModelled>,
}

impl RequestReport {
    /// Number of wavefronts (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`).
    pub fn wavefront_count(&self) -> u32 {
        self.wavefronts.len() as u32
    }

    /// The conflict-free wavefront count: one per unit.
    pub fn ideal(&self) -> u32 {
        self.units.len() as u32
    }

    /// Bank conflicts as Nsight Compute counts them (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum`):
    /// wavefronts beyond the ideal.
    pub fn bank_conflicts(&self) -> u32 {
        self.wavefront_count().saturating_sub(self.ideal())
    }

    /// The same numbers as [`WarpRequest::cost`].
    pub fn cost(&self) -> RequestCost {
        RequestCost {
            wavefronts: self.wavefront_count(),
            ideal: self.ideal(),
            not_modelled: self.not_modelled,
        }
    }

    /// Which pass of its unit wavefront `w` is: 0 for the unit's first wavefront, `k >= 1` for
    /// its `k`-th bank-conflict replay (what the TUI and the SVGs colour). 0 for `w` out of range.
    pub fn replay(&self, w: usize) -> usize {
        let Some(unit) = self.wavefronts.get(w).map(|x| x.unit) else {
            return 0;
        };
        self.wavefronts[..w]
            .iter()
            .filter(|x| x.unit == unit)
            .count()
    }

    /// Wavefront indices (into [`Self::wavefronts`]) in which `lane` takes part.
    pub fn lane_wavefronts(&self, lane: usize) -> Vec<usize> {
        self.wavefronts
            .iter()
            .enumerate()
            .filter(|(_, w)| w.lanes >> lane & 1 == 1)
            .map(|(i, _)| i)
            .collect()
    }

    /// Per bank, the largest number of distinct words any unit reads from it (the "way" of the
    /// conflict in that bank; 0 for untouched banks).
    pub fn bank_degree(&self) -> [u32; NUM_BANKS] {
        let mut per_unit = vec![[0u32; NUM_BANKS]; self.units.len()];
        for w in &self.wavefronts {
            for (b, word) in w.bank_words.iter().enumerate() {
                if word.is_some() {
                    per_unit[w.unit][b] += 1;
                }
            }
        }
        let mut out = [0u32; NUM_BANKS];
        for u in per_unit {
            for b in 0..NUM_BANKS {
                out[b] = out[b].max(u[b]);
            }
        }
        out
    }
}

/// What one request costs, without the per-lane detail: the numbers Nsight Compute reports
/// for it. Computed by [`WarpRequest::cost`], the one function every command uses; the
/// per-wavefront lanes ([`schedule`]) are built only where they are displayed.
///
/// When `not_modelled` is set the numbers are 0 and mean nothing: show the reason instead
/// ([`RequestCost::modelled`] turns it into an error).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RequestCost {
    /// Wavefronts (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum` for this request;
    /// `l1tex__data_pipe_lsu_wavefronts_mem_shared.sum` minus the launch's `op_misc` for
    /// `cp.async.ca`).
    pub wavefronts: u32,
    /// Units that have an active lane: the conflict-free wavefront count.
    pub ideal: u32,
    /// Why the model has no count for this request (`cp.async` only).
    pub not_modelled: Option<NotModelled>,
}

impl RequestCost {
    /// A modelled cost.
    pub fn new(wavefronts: u32, ideal: u32) -> RequestCost {
        RequestCost {
            wavefronts,
            ideal,
            not_modelled: None,
        }
    }

    /// A request the model cannot cost, and why.
    pub fn unmodelled(why: NotModelled) -> RequestCost {
        RequestCost {
            wavefronts: 0,
            ideal: 0,
            not_modelled: Some(why),
        }
    }

    /// Bank conflicts as Nsight Compute counts them: `wavefronts - ideal`.
    pub fn bank_conflicts(self) -> u32 {
        self.wavefronts.saturating_sub(self.ideal)
    }

    /// The cost, or why there is none.
    ///
    /// # Errors
    /// The [`NotModelled`] reason.
    pub fn modelled(self) -> Result<RequestCost, NotModelled> {
        match self.not_modelled {
            None => Ok(self),
            Some(why) => Err(why),
        }
    }
}

impl WarpRequest {
    /// A request with all 32 lanes active.
    pub fn new(instruction: Instruction, lane_byte_offsets: [u32; WARP_SIZE]) -> Self {
        WarpRequest {
            instruction,
            lane_byte_offsets,
            active_mask: u32::MAX,
            global_addrs: None,
        }
    }

    /// Builds a request from a slice of exactly 32 byte offsets (`u64`, so that too-large values
    /// are reported rather than truncated).
    ///
    /// # Errors
    /// [`SimError::LaneCount`] if the slice does not hold 32 offsets; [`SimError::OutOfRange`] for
    /// offsets that do not fit in 32 bits.
    pub fn from_slice(
        instruction: Instruction,
        offsets: &[u64],
        active_mask: u32,
    ) -> Result<Self, SimError> {
        if offsets.len() != WARP_SIZE {
            return Err(SimError::LaneCount(offsets.len()));
        }
        let mut o = [0u32; WARP_SIZE];
        // Every offset fits (the usual case): converted at once. Otherwise the loop names the
        // first that does not.
        if offsets.iter().fold(0, |m, &v| m | v) <= u64::from(u32::MAX) {
            for (o, &v) in o.iter_mut().zip(offsets) {
                *o = v as u32;
            }
            return Ok(WarpRequest {
                instruction,
                lane_byte_offsets: o,
                active_mask,
                global_addrs: None,
            });
        }
        for (lane, &v) in offsets.iter().enumerate() {
            o[lane] = u32::try_from(v).map_err(|_| SimError::OutOfRange {
                lane,
                offset: v,
                end: v.saturating_add(instruction.bytes_per_address() as u64),
                limit: u32::MAX,
                arch: "32-bit shared window".into(),
                max: u32::MAX as u64,
            })?;
        }
        Ok(WarpRequest {
            instruction,
            lane_byte_offsets: o,
            active_mask,
            global_addrs: None,
        })
    }

    /// Lanes whose addresses the instruction uses: active lanes for ld/st/cp.async, the
    /// matrix-row lanes for ldmatrix and stmatrix.
    pub fn address_lanes(&self) -> u32 {
        if self.instruction.is_warp_collective() {
            self.instruction.address_lanes()
        } else {
            self.active_mask
        }
    }

    /// Checks alignment, range and (for ldmatrix and stmatrix) the full mask.
    ///
    /// # Errors
    /// [`SimError::Misaligned`], [`SimError::MisalignedSource`] (a `cp.async` global source),
    /// [`SimError::OutOfRange`], [`SimError::PartialLdmatrix`].
    pub fn validate(&self, smem: &SharedMemoryConfig) -> Result<(), SimError> {
        let ins = self.instruction;
        if ins.is_warp_collective() && self.active_mask != u32::MAX {
            return Err(SimError::PartialLdmatrix {
                mask: self.active_mask,
                instruction: ins.to_string(),
            });
        }
        let width = ins.bytes_per_address();
        let lanes = self.address_lanes();
        // The usual case, every address lane aligned and in range, checked for all lanes at once:
        // their offsets ORed (the alignment is a power of two) and the largest. The loop below
        // finds the first lane at fault, and checks cp.async's global sources.
        // A cp.async's global sources are checked the same way (ORed, against its width).
        let align = ins.alignment();
        let src = match (ins, &self.global_addrs) {
            (Instruction::CpAsync(_), Some(src)) => Some(src),
            _ => None,
        };
        if align.is_power_of_two() && width.is_power_of_two() {
            let (mut or, mut max) = (0u32, 0u32);
            for (lane, &off) in self.lane_byte_offsets.iter().enumerate() {
                let off = off & 0u32.wrapping_sub(lanes >> lane & 1);
                or |= off;
                max = max.max(off);
            }
            let mut src_or = 0u64;
            if let Some(src) = src {
                for (lane, &a) in src.iter().enumerate() {
                    src_or |= a & 0u64.wrapping_sub(u64::from(lanes >> lane & 1));
                }
            }
            if or & (align - 1) == 0
                && src_or & (u64::from(width) - 1) == 0
                && u64::from(max) + u64::from(width) <= u64::from(smem.size_bytes)
            {
                return Ok(());
            }
        }
        for lane in 0..WARP_SIZE {
            if lanes >> lane & 1 == 0 {
                continue;
            }
            let off = self.lane_byte_offsets[lane];
            if !off.is_multiple_of(ins.alignment()) {
                return Err(SimError::Misaligned {
                    lane,
                    offset: off as u64,
                    align: ins.alignment(),
                    instruction: ins.to_string(),
                });
            }
            if let (Instruction::CpAsync(_), Some(src)) = (ins, &self.global_addrs)
                && !src[lane].is_multiple_of(width as u64)
            {
                return Err(SimError::MisalignedSource {
                    lane,
                    addr: src[lane],
                    align: width,
                    instruction: ins.to_string(),
                });
            }
            let end = off as u64 + width as u64;
            if end > smem.size_bytes as u64 {
                return Err(SimError::OutOfRange {
                    lane,
                    offset: off as u64,
                    end,
                    limit: smem.size_bytes,
                    arch: smem.arch.to_string(),
                    max: smem.size_bytes.saturating_sub(width) as u64,
                });
            }
        }
        Ok(())
    }

    /// Splits the request into units (see the module docs), as lane masks in issue order.
    pub fn units(&self) -> Vec<u32> {
        let (u, n) = self.units_fixed();
        u[..n].to_vec()
    }

    /// [`Self::units`] without allocating: at most 4 units (quarter-warps or matrices).
    fn units_fixed(&self) -> ([u32; 4], usize) {
        let lanes = self.address_lanes();
        let (group, may_pack) = unit_rule(self.instruction);
        let gmask = if group == 32 {
            u32::MAX
        } else {
            (1u32 << group) - 1
        };
        let mut groups = [0u32; 4];
        let ngroups = WARP_SIZE / group;
        for (k, g) in groups.iter_mut().enumerate().take(ngroups) {
            *g = lanes & (gmask << (k * group));
        }
        let mut units = [0u32; 4];
        let mut n = 0;
        let mut push = |m: u32| {
            if m != 0 {
                units[n] = m;
                n += 1;
            }
        };
        // Vector loads: sibling groups (half-warps of .v2, quarter pairs of .v4) share their
        // passes when lanes read addresses in pairs (see `packed_return`).
        let packed = may_pack && self.packed_return();
        for pair in groups[..ngroups].chunks(2) {
            if packed && pair.len() == 2 {
                push(pair[0] | pair[1]);
            } else {
                pair.iter().for_each(|&g| push(g));
            }
        }
        (units, n)
    }

    /// Whether a vector load's sibling units are issued together (the packed return of the
    /// module docs): the active lanes' addresses agree across every active lane pair
    /// `(n, n ^ 1)`, or across every active lane pair `(n, n ^ 2)`. Source: NVIDIA developer
    /// forums, "Unexpected shared memory bank conflict" (thread 77228, sm_70–sm_75), confirmed
    /// on the H200 by the `.v2`/`.v4` records in `tests/data/`.
    fn packed_return(&self) -> bool {
        let lanes = self.address_lanes();
        let pairs_agree = |xor: usize| {
            (0..WARP_SIZE).all(|n| {
                let p = n ^ xor;
                lanes >> n & 1 == 0
                    || lanes >> p & 1 == 0
                    || self.lane_byte_offsets[n] == self.lane_byte_offsets[p]
            })
        };
        pairs_agree(1) || pairs_agree(2)
    }

    /// Wavefronts and units of this request: the numbers every command counts with (no
    /// validation, no allocation, no per-lane detail). Equal to `schedule(self)`'s
    /// `wavefront_count()` and `ideal()` for every request, aligned or not (property-tested in
    /// `tests/model_props.rs`).
    ///
    /// How: with natural alignment a lane's access lies in one *chunk* of `max(width, 4)` bytes
    /// whose words sit in `max(width, 4) / 4` adjacent banks, and two chunks share banks exactly
    /// when their chunk indices agree modulo `128 / max(width, 4)` (the chunk's *slot*). So a
    /// unit's wavefronts are the most distinct chunk indices (*keys*, one per lane) in any one
    /// slot. On x86-64 CPUs with AVX2 (detected at run time) the keys of in-range requests are
    /// compared 16 lanes per instruction; elsewhere [`Self::cost_portable`] runs, which gives the
    /// same numbers. Misaligned requests (never produced by a validated request) are counted
    /// word by word.
    pub fn cost(&self) -> RequestCost {
        if let Some(why) = self.not_modelled() {
            return RequestCost::unmodelled(why);
        }
        #[cfg(target_arch = "x86_64")]
        if merges_same_word(self.instruction) && std::is_x86_feature_detected!("avx2") {
            let width = self.instruction.bytes_per_address();
            let lanes = self.address_lanes();
            // The common unit shapes first: one 32-lane unit (accesses of at most 4 bytes) and
            // four 8-lane units (16-byte accesses not packed).
            let (group, may_pack) = unit_rule(self.instruction);
            // SAFETY (both calls): AVX2 is present (checked just above).
            let fast = match group {
                32 => unsafe { avx2::warp_unit(&self.lane_byte_offsets, lanes, width) },
                8 if width == 16 && !(may_pack && self.packed_return()) => unsafe {
                    avx2::quarter_units(&self.lane_byte_offsets, lanes)
                },
                _ => None,
            };
            if let Some((wavefronts, units)) = fast {
                return RequestCost::new(wavefronts, units);
            }
            let (units, n) = self.units_fixed();
            // SAFETY: AVX2 is present (checked just above).
            let w = unsafe { avx2::wavefronts(&self.lane_byte_offsets, lanes, width, &units[..n]) };
            if let Some(wavefronts) = w {
                return RequestCost::new(wavefronts, n as u32);
            }
        }
        self.cost_portable()
    }

    /// [`Self::cost`] without SIMD: the scalar path, on every CPU. Gives the same numbers as
    /// [`Self::cost`] (property-tested); public so that tests and benchmarks can compare the two.
    ///
    /// For each unit one pass over its lanes builds the 32-bit mask of slots that more than one
    /// lane uses; only those slots are examined for distinct keys.
    pub fn cost_portable(&self) -> RequestCost {
        if let Some(why) = self.not_modelled() {
            return RequestCost::unmodelled(why);
        }
        let (units, n) = self.units_fixed();
        let merge = merges_same_word(self.instruction);
        let mut wavefronts = 0;
        match self.chunk_keys() {
            Some(k) => {
                for &u in &units[..n] {
                    wavefronts += unit_wavefronts(&k.keys, u, k.slot_mask, merge);
                }
            }
            None => {
                let width = self.instruction.bytes_per_address();
                for &u in &units[..n] {
                    wavefronts += unit_wavefronts_words(&self.lane_byte_offsets, u, width, merge);
                }
            }
        }
        RequestCost::new(wavefronts, n as u32)
    }

    /// Why the model has no count for this request, or `None` when it has one: `cp.async.cg`;
    /// a `cp.async.ca` without global source addresses; a `cp.async.ca` with a unit whose active
    /// lanes do not read distinct `size`-byte pieces of one 128-byte global line (module docs).
    pub fn not_modelled(&self) -> Option<NotModelled> {
        let Instruction::CpAsync(kind) = self.instruction else {
            return None;
        };
        if kind == CpAsyncKind::Cg16 {
            return Some(NotModelled::CpAsyncCg);
        }
        let Some(src) = &self.global_addrs else {
            return Some(NotModelled::CpAsyncSourcesUnknown);
        };
        let (units, n) = self.units_fixed();
        for &u in &units[..n] {
            let first = src[u.trailing_zeros() as usize] / GLOBAL_LINE_BYTES;
            // The byte offsets within the line that lanes of the unit read so far: within one
            // line, two lanes read the same address exactly when they read the same offset.
            let mut seen = 0u128;
            let mut m = u;
            while m != 0 {
                let lane = m.trailing_zeros() as usize;
                m &= m - 1;
                let bit = 1u128 << (src[lane] % GLOBAL_LINE_BYTES);
                let dup = seen & bit != 0;
                seen |= bit;
                if src[lane] / GLOBAL_LINE_BYTES != first || dup {
                    return Some(NotModelled::CpAsyncSpreadSources(
                        self.sass_bounds(src, &units[..n]),
                    ));
                }
            }
        }
        None
    }

    /// The [`SassBounds`] of a `cp.async.ca` whose lanes read `src` (global byte addresses,
    /// lane 0 first), over `units` (lane masks).
    fn sass_bounds(&self, src: &[u64; WARP_SIZE], units: &[u32]) -> SassBounds {
        let words = (self.instruction.bytes_per_address() / BANK_BYTES).max(1);
        let (mut lo, mut hi) = (0u32, 0u32);
        for &u in units {
            let (mut reads, mut writes) = ([0u32; NUM_BANKS], [0u32; NUM_BANKS]);
            // Per read group, the L1 banks its lanes read (at most 32 groups: one per lane).
            let mut groups: Vec<u32> = Vec::new();
            let mut m = u;
            while m != 0 {
                let lane = m.trailing_zeros() as usize;
                m &= m - 1;
                let mut read_banks = 0u32;
                for i in 0..u64::from(words) {
                    let rb = ((src[lane] / u64::from(BANK_BYTES) + i) % NUM_BANKS as u64) as usize;
                    let wb = bank_of(self.lane_byte_offsets[lane]) + i as usize;
                    reads[rb] += 1;
                    writes[wb % NUM_BANKS] += 1;
                    read_banks |= 1 << rb;
                }
                match groups.iter_mut().find(|g| **g & read_banks == 0) {
                    Some(g) => *g |= read_banks,
                    None => groups.push(read_banks),
                }
            }
            let (r, w) = (
                reads.iter().copied().max().unwrap_or(0),
                writes.iter().copied().max().unwrap_or(0),
            );
            lo += r.max(w);
            hi += groups.len() as u32 + w - 1;
        }
        SassBounds {
            lo,
            hi,
            units: units.len() as u32,
        }
    }

    /// Each lane's chunk index (`offset / max(width, 4)`) and the slot mask, or `None` when an
    /// address lane is not aligned to the access width.
    #[inline]
    fn chunk_keys(&self) -> Option<ChunkKeys> {
        let width = self.instruction.bytes_per_address();
        let lanes = self.address_lanes();
        let mut misaligned = 0;
        // Chunk = max(width, 4) bytes: shift 2 (u8/u16/b32), 3 (v2), 4 (v4, ldmatrix rows).
        let shift = width.max(BANK_BYTES).trailing_zeros();
        let mut keys = [0u32; WARP_SIZE];
        for (lane, (k, &a)) in keys.iter_mut().zip(&self.lane_byte_offsets).enumerate() {
            misaligned |= (a & (width - 1)) * (lanes >> lane & 1);
            *k = a >> shift;
        }
        (misaligned == 0).then_some(ChunkKeys {
            keys,
            slot_mask: (NUM_BANKS as u32 >> (shift - 2)) - 1,
        })
    }

    /// The wavefront count alone: `self.cost().wavefronts`.
    pub fn wavefront_count(&self) -> u32 {
        self.cost().wavefronts
    }
}

/// Chunk indices of an aligned request (see [`WarpRequest::cost`]).
struct ChunkKeys {
    /// Per lane, `offset / max(width, 4)`.
    keys: [u32; WARP_SIZE],
    /// `128 / max(width, 4) - 1`: two keys share banks when they agree under this mask.
    slot_mask: u32,
}

/// The AVX2 path of [`WarpRequest::cost`].
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{BANK_BYTES, NUM_BANKS, WARP_SIZE};
    use std::arch::x86_64::*;

    /// Key of a lane outside the address lanes: never the key of an address lane (address
    /// lanes with this key or larger take the scalar path).
    const NO_KEY: u32 = 0xffff;

    /// The 32 chunk indices (keys, `offset >> shift`) as 16-bit lanes in lane order, lanes 0-15
    /// in the first register and 16-31 in the second; lanes outside `lanes` get [`NO_KEY`].
    /// `None` when an address lane is not aligned to `width` or its key is [`NO_KEY`] or larger.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn keys16(
        offsets: &[u32; WARP_SIZE],
        lanes: u32,
        width: u32,
        shift: u32,
    ) -> Option<(__m256i, __m256i)> {
        let bit_of_lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
        let align = _mm256_set1_epi32((width - 1) as i32);
        let count = _mm_cvtsi32_si128(shift as i32);
        let none = _mm256_set1_epi32(NO_KEY as i32);
        let one = _mm256_set1_epi32(1);
        let mut k = [_mm256_setzero_si256(); 4];
        let mut bad = _mm256_setzero_si256();
        for (j, kj) in k.iter_mut().enumerate() {
            // SAFETY: lanes 8j..8j+8 of a 32-lane array.
            let o = unsafe { _mm256_loadu_si256(offsets.as_ptr().add(8 * j).cast()) };
            let m = _mm256_and_si256(_mm256_set1_epi32((lanes >> (8 * j)) as i32), bit_of_lane);
            let active = _mm256_cmpeq_epi32(m, bit_of_lane);
            let key = _mm256_srl_epi32(o, count);
            // Misaligned address bits, and keys from NO_KEY up, of address lanes.
            let big = _mm256_srli_epi32(_mm256_add_epi32(key, one), 16);
            let b = _mm256_or_si256(_mm256_and_si256(o, align), big);
            bad = _mm256_or_si256(bad, _mm256_and_si256(b, active));
            *kj = _mm256_blendv_epi8(none, key, active);
        }
        if _mm256_testz_si256(bad, bad) == 0 {
            return None;
        }
        // `packus` interleaves 64-bit quarters (lanes 0-3, 8-11, 4-7, 12-15); `permute4x64`
        // puts them back in order.
        let a = _mm256_permute4x64_epi64(_mm256_packus_epi32(k[0], k[1]), 0xd8);
        let b = _mm256_permute4x64_epi64(_mm256_packus_epi32(k[2], k[3]), 0xd8);
        Some((a, b))
    }

    /// Bit `i` set when 16-bit lane `i` of `(a, b)` (lanes 0-15, 16-31) equals lane `i` of
    /// `(ra, rb)`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn eq_mask(a: __m256i, b: __m256i, ra: __m256i, rb: __m256i) -> u32 {
        let e = _mm256_packs_epi16(_mm256_cmpeq_epi16(a, ra), _mm256_cmpeq_epi16(b, rb));
        _mm256_movemask_epi8(_mm256_permute4x64_epi64(e, 0xd8)) as u32
    }

    /// Wavefronts and units of a request whose only unit is the whole warp (accesses of 1, 2
    /// or 4 bytes): the most distinct keys (4-byte words) among `lanes` in one bank, 0 units
    /// when `lanes` is empty. `None` when the scalar path must decide (see [`keys16`]).
    ///
    /// A lane is its key's representative when no earlier lane has the key: comparing the keys
    /// with themselves rotated by r = 1..16 lanes finds every equal pair once (r and 32 - r
    /// give the same pairs); the representatives are then counted per bank.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn warp_unit(
        offsets: &[u32; WARP_SIZE],
        lanes: u32,
        width: u32,
    ) -> Option<(u32, u32)> {
        if lanes == 0 {
            return Some((0, 0));
        }
        // SAFETY: AVX2 (this function's contract).
        let (a, b) = unsafe { keys16(offsets, lanes, width, 2)? };
        // p = lanes 8-23, q = lanes 24-31 then 0-7: the 32 keys seen from lane 8 and lane 24.
        let p = _mm256_permute2x128_si256(a, b, 0x21);
        let q = _mm256_permute2x128_si256(b, a, 0x21);
        let mut dup = 0u32;
        // Keys rotated by r lanes: lane i of (ra, rb) holds lane (i + r) mod 32. Bit i of the
        // equality mask pairs lane i with lane (i + r) mod 32: the later of the two is a
        // duplicate.
        macro_rules! rot {
            ($r:literal, $ra:expr, $rb:expr) => {{
                let e = eq_mask(a, b, $ra, $rb);
                let wraps = !(u32::MAX >> $r);
                dup |= ((e & !wraps) << $r) | (e & wraps);
            }};
        }
        macro_rules! low {
            ($r:literal) => {
                rot!(
                    $r,
                    _mm256_alignr_epi8::<{ 2 * $r }>(p, a),
                    _mm256_alignr_epi8::<{ 2 * $r }>(q, b)
                )
            };
        }
        macro_rules! high {
            ($r:literal) => {
                rot!(
                    $r,
                    _mm256_alignr_epi8::<{ 2 * ($r - 8) }>(b, p),
                    _mm256_alignr_epi8::<{ 2 * ($r - 8) }>(a, q)
                )
            };
        }
        low!(1);
        low!(2);
        low!(3);
        low!(4);
        low!(5);
        low!(6);
        low!(7);
        rot!(8, p, q);
        high!(9);
        high!(10);
        high!(11);
        high!(12);
        high!(13);
        high!(14);
        high!(15);
        rot!(16, b, a);
        // Representatives per bank (at most 32 each), then the largest count.
        let bank = _mm256_set1_epi16(31);
        let banks = lane_bytes(_mm256_and_si256(a, bank), _mm256_and_si256(b, bank));
        Some((max_byte(&count_bytes(&banks, lanes & !dup)), 1))
    }

    /// The 32 16-bit lanes of `(a, b)` (lanes 0-15, 16-31; each below 256) as bytes in lane
    /// order.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn lane_bytes(a: __m256i, b: __m256i) -> [u8; 32] {
        // `packus` interleaves 64-bit quarters (lanes 0-7, 16-23, 8-15, 24-31).
        let bytes = _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xd8);
        let mut out = [0u8; 32];
        // SAFETY: 32 bytes.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), bytes) };
        out
    }

    /// How many lanes of `lanes` have each index (`index[lane] & 31`), without branches.
    #[inline]
    fn count_bytes(index: &[u8; 32], lanes: u32) -> [u8; 32] {
        let mut count = [0u8; 32];
        for (lane, &i) in index.iter().enumerate() {
            count[(i & 31) as usize] += (lanes >> lane & 1) as u8;
        }
        count
    }

    /// The largest of 32 bytes.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn max_byte(bytes: &[u8; 32]) -> u32 {
        // SAFETY: 32 bytes.
        let c = unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) };
        let c = _mm256_max_epu8(c, _mm256_permute2x128_si256(c, c, 1));
        let c = _mm256_max_epu8(c, _mm256_srli_si256(c, 8));
        let c = _mm256_max_epu8(c, _mm256_srli_si256(c, 4));
        let c = _mm256_max_epu8(c, _mm256_srli_si256(c, 2));
        let c = _mm256_max_epu8(c, _mm256_srli_si256(c, 1));
        (_mm256_cvtsi256_si32(c) & 0xff) as u32
    }

    /// Wavefronts and units of a 16-byte request split into four 8-lane units (quarter-warps of
    /// `ld/st.shared.v4`, the matrices of `ldmatrix`/`stmatrix`), none packed: per unit the
    /// most distinct 16-byte chunks among its `lanes` in one group of four banks. `None` when
    /// the scalar path must decide (see [`keys16`]).
    ///
    /// As [`warp_unit`], with the keys rotated inside each unit (r = 1..4 lanes).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn quarter_units(
        offsets: &[u32; WARP_SIZE],
        lanes: u32,
    ) -> Option<(u32, u32)> {
        // SAFETY: AVX2 (this function's contract).
        let (a, b) = unsafe { keys16(offsets, lanes, 16, 4)? };
        let mut dup = 0u32;
        // Bit i pairs lane i with lane i + r of its unit (mod 8); the later one is a duplicate.
        macro_rules! rot {
            ($r:literal) => {{
                let e = eq_mask(
                    a,
                    b,
                    _mm256_alignr_epi8::<{ 2 * $r }>(a, a),
                    _mm256_alignr_epi8::<{ 2 * $r }>(b, b),
                );
                let stays = 0x0101_0101u32 * ((1u32 << (8 - $r)) - 1);
                dup |= ((e & stays) << $r) | (e & !stays);
            }};
        }
        rot!(1);
        rot!(2);
        rot!(3);
        rot!(4);
        // Per unit, the representatives counted per slot (a 16-byte chunk spans 4 banks, so 8
        // slots); index unit * 8 + slot.
        // Index unit * 8 + slot; lanes 0-15 are units 0 and 1, lanes 16-31 units 2 and 3.
        let unit_base = |u0: i16, u1: i16| {
            _mm256_setr_epi16(
                u0, u0, u0, u0, u0, u0, u0, u0, u1, u1, u1, u1, u1, u1, u1, u1,
            )
        };
        let (base_a, base_b) = (unit_base(0, 8), unit_base(16, 24));
        let seven = _mm256_set1_epi16(7);
        let a_idx = _mm256_or_si256(_mm256_and_si256(a, seven), base_a);
        let b_idx = _mm256_or_si256(_mm256_and_si256(b, seven), base_b);
        let index = lane_bytes(a_idx, b_idx);
        let per_slot = count_bytes(&index, lanes & !dup);
        // The largest count of each unit's 8 bytes lands in its low byte; sum the four.
        // SAFETY: 32 bytes.
        let c = unsafe { _mm256_loadu_si256(per_slot.as_ptr().cast()) };
        let c = _mm256_max_epu8(c, _mm256_srli_epi64(c, 32));
        let c = _mm256_max_epu8(c, _mm256_srli_epi64(c, 16));
        let c = _mm256_max_epu8(c, _mm256_srli_epi64(c, 8));
        let low = _mm256_and_si256(c, _mm256_set1_epi64x(0xff));
        let s = _mm256_sad_epu8(low, _mm256_setzero_si256());
        let s = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        let wavefronts = (_mm_cvtsi128_si32(s) + _mm_extract_epi32(s, 2)) as u32;
        let units = [0xffu32, 0xff00, 0xff_0000, 0xff00_0000]
            .iter()
            .filter(|&&u| lanes & u != 0)
            .count() as u32;
        Some((wavefronts, units))
    }

    /// Sum over `units` of each unit's most distinct chunk indices (keys) in one slot (see
    /// [`super::WarpRequest::cost`]), or `None` when an address lane (`lanes`) is not aligned to
    /// `width` or its key is [`NO_KEY`] or more (the caller then takes the scalar path). Used for
    /// the unit shapes [`warp_unit`] and [`quarter_units`] do not take (`.v2`, packed loads).
    ///
    /// The 32 keys are held as 16-bit lanes of two registers. Per lane one broadcast and two
    /// compares give the 32-bit mask of lanes with the same key; the lane represents its key
    /// when no earlier lane of its unit has that key, and representatives are counted per slot.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn wavefronts(
        offsets: &[u32; WARP_SIZE],
        lanes: u32,
        width: u32,
        units: &[u32],
    ) -> Option<u32> {
        let shift = width.max(BANK_BYTES).trailing_zeros();
        let slot_mask = ((NUM_BANKS as u32 >> (shift - 2)) - 1) & 31;
        // SAFETY: AVX2 (this function's contract).
        let (a, b) = unsafe { keys16(offsets, lanes, width, shift)? };
        let mut keys = [0u16; WARP_SIZE];
        // SAFETY: 2 x 16 lanes of 2 bytes.
        unsafe {
            _mm256_storeu_si256(keys.as_mut_ptr().cast(), a);
            _mm256_storeu_si256(keys.as_mut_ptr().add(16).cast(), b);
        }
        let mut total = 0;
        for &unit in units {
            let mut per_slot = [0u8; 32];
            let mut done = 0u32;
            let mut m = unit;
            while m != 0 {
                let lane = m.trailing_zeros();
                m &= m - 1;
                let key = keys[(lane & 31) as usize];
                let k = _mm256_set1_epi16(key as i16);
                let same = eq_mask(a, b, k, k);
                per_slot[(u32::from(key) & slot_mask) as usize] += (same & done == 0) as u8;
                done |= 1 << lane;
            }
            total += max_byte(&per_slot);
        }
        Some(total)
    }
}

/// Wavefronts of one unit of an aligned request: the largest number of distinct `keys` (chunk
/// indices, one per lane) among the unit's lanes that share a slot (`key & slot_mask`); at
/// least 1 for a unit with a lane, 0 for an empty one.
#[inline]
///
/// Without `merge` (`cp.async`), every lane is its own bank access: the most lanes in one slot.
fn unit_wavefronts(keys: &[u32; WARP_SIZE], unit: u32, slot_mask: u32, merge: bool) -> u32 {
    // One pass: each slot's lanes, and the slots that more than one lane uses.
    let mut slot_lanes = [0u32; NUM_BANKS];
    let (mut seen, mut multi) = (0u32, 0u32);
    let mut m = unit;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let slot = (keys[lane] & slot_mask) as usize;
        multi |= seen & (1 << slot);
        seen |= 1 << slot;
        slot_lanes[slot] |= 1 << lane;
    }
    let mut worst = (unit != 0) as u32;
    if !merge {
        return slot_lanes.iter().map(|l| l.count_ones()).max().unwrap_or(0);
    }
    // Only shared slots can need more than one wavefront; count their distinct keys.
    while multi != 0 {
        let slot = multi.trailing_zeros() as usize;
        multi &= multi - 1;
        let mut left = slot_lanes[slot];
        if left.count_ones() <= worst {
            continue;
        }
        let mut distinct = 0;
        while left != 0 {
            let key = keys[left.trailing_zeros() as usize];
            // Drop every lane of this slot that reads the same chunk (a broadcast).
            let mut rest = left;
            while rest != 0 {
                let lane = rest.trailing_zeros();
                rest &= rest - 1;
                left &= !(((keys[lane as usize] == key) as u32) << lane);
            }
            distinct += 1;
        }
        worst = worst.max(distinct);
    }
    worst
}

/// Wavefronts of one unit, word by word (any alignment): the most distinct 4-byte words the
/// unit's lanes touch in one bank; at least 1 for a unit with a lane. Addresses are taken in
/// 64 bits, so an access running past `u32::MAX` cannot overflow.
///
/// Without `merge` (`cp.async`), every lane's touch of a word counts.
fn unit_wavefronts_words(offsets: &[u32; WARP_SIZE], unit: u32, width: u32, merge: bool) -> u32 {
    // At most 32 lanes x 5 words (a misaligned 16-byte access).
    let mut words = [0u64; WARP_SIZE * 5];
    let mut n = 0;
    let mut m = unit;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = offsets[lane] as u64;
        for word in a / BANK_BYTES as u64..=(a + width as u64 - 1) / BANK_BYTES as u64 {
            words[n] = word;
            n += 1;
        }
    }
    let words = &mut words[..n];
    words.sort_unstable();
    let mut per_bank = [0u32; NUM_BANKS];
    let mut worst = (unit != 0) as u32;
    for (i, &w) in words.iter().enumerate() {
        if !merge || i == 0 || words[i - 1] != w {
            let b = &mut per_bank[(w % NUM_BANKS as u64) as usize];
            *b += 1;
            worst = worst.max(*b);
        }
    }
    worst
}

/// Bytes of the global-memory line a `cp.async` unit must read from to be modelled (an L1
/// cache line).
pub const GLOBAL_LINE_BYTES: u64 = 128;

/// **The unit rules, in one place**: how many consecutive lanes form one unit of `ins` (32, 16
/// or 8), and whether sibling units may be packed into one (vector loads only; see the module
/// docs). A new instruction's cost is decided here.
fn unit_rule(ins: Instruction) -> (usize, bool) {
    let by_width = |bytes: u32| match bytes {
        16 => 8,
        8 => 16,
        _ => 32,
    };
    match ins {
        Instruction::Ld(w) => {
            let g = by_width(w.bytes());
            (g, g < 32)
        }
        Instruction::St(w) => (by_width(w.bytes()), false),
        // ldmatrix: every matrix is a unit even when its rows coincide (measured: x4
        // rowstride0 = 4 wavefronts).
        Instruction::Ldmatrix { .. } => (8, false),
        // stmatrix: like ldmatrix, one unit per 8x8 matrix (measured on the H200: 570 records,
        // wavefronts under `..._mem_shared_op_st.sum`).
        Instruction::Stmatrix { .. } => (8, false),
        // cp.async (LDGSTS), shared side: the units of a store of cp-size bytes per lane, never
        // packed, same-word writes not merged; only units reading one global line are modelled
        // (`WarpRequest::not_modelled`); .cg not modelled (module docs).
        Instruction::CpAsync(k) => (by_width(k.bytes()), false),
    }
}

/// Whether lanes touching the same 4-byte word share one bank access (broadcast for loads, one
/// write for stores). Not for `cp.async`: each lane's write is its own bank access (measured on
/// the H200: 32 lanes copying into one word take 32 wavefronts; module docs).
fn merges_same_word(ins: Instruction) -> bool {
    !matches!(ins, Instruction::CpAsync(_))
}

/// Runs the request model on one warp request.
///
/// # Errors
/// Those of [`WarpRequest::validate`].
///
/// # Example
/// ```
/// use tilelab_core::sim::bank::{simulate, WarpRequest, SharedMemoryConfig};
/// use tilelab_core::sim::instr::Instruction;
/// // 32 lanes reading a column of a 64-wide f16 tile: all in bank 0, a 32-way conflict.
/// let offs = std::array::from_fn(|lane| lane as u32 * 128);
/// let req = WarpRequest::new(Instruction::parse("ld.shared.u16").unwrap(), offs);
/// let r = simulate(&req, &SharedMemoryConfig::default()).unwrap();
/// assert_eq!((r.wavefront_count(), r.bank_conflicts()), (32, 31));
/// ```
pub fn simulate(req: &WarpRequest, smem: &SharedMemoryConfig) -> Result<RequestReport, SimError> {
    req.validate(smem)?;
    Ok(schedule(req))
}

/// The model without validation (callers that built addresses from a checked layout).
pub fn schedule(req: &WarpRequest) -> RequestReport {
    if let Some(why) = req.not_modelled() {
        return RequestReport {
            instruction: req.instruction,
            active_mask: req.active_mask,
            units: Vec::new(),
            wavefronts: Vec::new(),
            not_modelled: Some(why),
        };
    }
    let width = req.instruction.bytes_per_address();
    let merge = merges_same_word(req.instruction);
    let units = req.units();
    let mut wavefronts = Vec::new();
    for (ui, &umask) in units.iter().enumerate() {
        // Distinct words per bank (every lane write, for cp.async), in lane order of first touch.
        let mut bank_lists: [Vec<u32>; NUM_BANKS] = Default::default();
        // (lane, word, pass) triples to attribute lanes to wavefronts.
        let mut touches: Vec<(usize, u32, usize)> = Vec::with_capacity(WARP_SIZE * 4);
        for lane in 0..WARP_SIZE {
            if umask >> lane & 1 == 0 {
                continue;
            }
            let a = req.lane_byte_offsets[lane];
            let first = a / BANK_BYTES;
            // In 64 bits: an unvalidated access may run past u32::MAX.
            let last = ((a as u64 + width as u64 - 1) / BANK_BYTES as u64) as u32;
            for word in first..=last {
                let list = &mut bank_lists[(word as usize) % NUM_BANKS];
                let pass = match list.iter().position(|&w| w == word) {
                    Some(j) if merge => j,
                    _ => {
                        list.push(word);
                        list.len() - 1
                    }
                };
                touches.push((lane, word, pass));
            }
        }
        let n = bank_lists.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let base = wavefronts.len();
        for j in 0..n {
            let mut bank_words = [None; NUM_BANKS];
            for (b, list) in bank_lists.iter().enumerate() {
                bank_words[b] = list.get(j).copied();
            }
            wavefronts.push(Wavefront {
                unit: ui,
                lanes: 0,
                bank_words,
                bank_lanes: [0; NUM_BANKS],
            });
        }
        for (lane, word, j) in touches {
            let b = (word as usize) % NUM_BANKS;
            wavefronts[base + j].lanes |= 1 << lane;
            wavefronts[base + j].bank_lanes[b] |= 1 << lane;
        }
    }
    RequestReport {
        instruction: req.instruction,
        active_mask: req.active_mask,
        units,
        wavefronts,
        not_modelled: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::instr::MatrixCount;

    fn req(ins: &str, f: impl Fn(u32) -> u32) -> WarpRequest {
        WarpRequest::new(
            Instruction::parse(ins).unwrap(),
            std::array::from_fn(|l| f(l as u32)),
        )
    }

    #[test]
    fn b32_stride_conflicts_follow_gcd() {
        // stride s words: conflict degree gcd(s, 32) (measured b32.strideNw records).
        for s in 0..=33u32 {
            let r = schedule(&req("ld.shared.b32", |l| l * 4 * s));
            let want = if s == 0 { 1 } else { gcd(s, 32) };
            assert_eq!(r.wavefront_count(), want, "stride {s}");
        }
    }

    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 { a } else { gcd(b, a % b) }
    }

    #[test]
    fn uniform_vector_loads_merge_but_stores_do_not() {
        assert_eq!(
            schedule(&req("ld.shared.v4.b32", |_| 0)).wavefront_count(),
            2
        );
        assert_eq!(
            schedule(&req("st.shared.v4.b32", |_| 0)).wavefront_count(),
            4
        );
        assert_eq!(
            schedule(&req("ld.shared.v2.b32", |_| 0)).wavefront_count(),
            1
        );
        assert_eq!(
            schedule(&req("st.shared.v2.b32", |_| 0)).wavefront_count(),
            2
        );
    }

    /// Lane-pair patterns of the packed-return rule (addresses `8 * id`, all in distinct banks),
    /// with the units ncu reported for them on the H200 (`tests/data/h200_probe_2026-11-29.json`
    /// `targeted.*`, `tests/data/h200_verify_seed4_2026-11-29.json` `fuzz.4.238.p1`).
    #[test]
    fn vector_loads_pack_when_lane_pairs_share_addresses() {
        let ids = |pat: &str| -> ([u32; 32], u32) {
            let mut offs = [0u32; 32];
            let mut mask = 0u32;
            for (lane, c) in pat.chars().filter(|c| *c != ' ').enumerate() {
                if c != '.' {
                    offs[lane] = 8 * (c as u32 - 'A' as u32);
                    mask |= 1 << lane;
                }
            }
            (offs, mask)
        };
        let units = |pat: &str| {
            let (offs, mask) = ids(pat);
            let mut r = WarpRequest::new(Instruction::parse("ld.shared.v2.b32").unwrap(), offs);
            r.active_mask = mask;
            schedule(&r).units.len()
        };
        // (n, n^1) pairs agree, (n, n^2) pairs agree, neither.
        assert_eq!(units("AABB CCDD EEFF GGHH IIJJ KKLL MMNN OOPP"), 1);
        assert_eq!(units("ABAB CDCD EFEF GHGH IJIJ KLKL MNMN OPOP"), 1);
        assert_eq!(units("ABCD ABCD ABCD ABCD ABCD ABCD ABCD ABCD"), 2);
        assert_eq!(units("AAAA AAAA AAAA AAAA BBBB BBBB BBBB BBBC"), 2);
        // Inactive partners are free: lanes 6 and 7 differ but their n^2 partners are off.
        assert_eq!(units(".A.. ..BC D... .... ...E .... ..D. ...."), 1);
        // Lanes 0 and 1 differ (n^1), lanes 13 and 15 differ (n^2): not packed.
        assert_eq!(units("AB.. .... .... .C.B .... ...C ..C. ...."), 2);
    }

    #[test]
    fn ldmatrix_costs_a_wavefront_per_matrix() {
        let r = schedule(&req("ldmatrix.x4", |_| 0));
        assert_eq!(
            (r.wavefront_count(), r.ideal(), r.bank_conflicts()),
            (4, 4, 0)
        );
        let r = schedule(&req("ldmatrix.x2.trans", |l| l * 128));
        assert_eq!(r.wavefront_count(), 16);
        assert_eq!(
            r.instruction,
            Instruction::Ldmatrix {
                num: MatrixCount::X2,
                trans: true
            }
        );
    }

    #[test]
    fn misaligned_and_out_of_range_are_errors() {
        let smem = SharedMemoryConfig::default();
        let e = simulate(&req("ld.shared.v4.b32", |l| l * 8), &smem).unwrap_err();
        assert!(
            matches!(
                e,
                SimError::Misaligned {
                    lane: 1,
                    offset: 8,
                    align: 16,
                    ..
                }
            ),
            "{e}"
        );
        let e = simulate(&req("ld.shared.b32", |l| 232_448 - 4 + l * 4), &smem).unwrap_err();
        assert!(matches!(e, SimError::OutOfRange { lane: 1, .. }), "{e}");
        let mut r = req("ldmatrix.x1", |l| l * 16);
        r.active_mask = 0xff;
        assert!(matches!(
            simulate(&r, &smem),
            Err(SimError::PartialLdmatrix { .. })
        ));
    }

    #[test]
    fn cost_agrees_with_the_schedule() {
        for (ins, f) in [
            ("ld.shared.b32", 4u32),
            ("ld.shared.v4.b32", 16),
            ("st.shared.v2.b32", 8),
            ("ldmatrix.x4", 128),
        ] {
            let r = req(ins, |l| l * f);
            let s = schedule(&r);
            assert_eq!(r.cost(), s.cost(), "{ins}");
            assert_eq!(r.cost().bank_conflicts(), s.bank_conflicts(), "{ins}");
        }
        // 128-byte row stride ldmatrix: 8 wavefronts per matrix, 4 units.
        let r = req("ldmatrix.x4", |l| l * 128);
        assert_eq!(r.cost(), RequestCost::new(32, 4));
    }

    #[test]
    fn replays_count_within_a_unit() {
        // ld.v4 with a 2-way conflict in each quarter-warp: lanes 4-7 repeat lanes 0-3's banks
        // with other words, so every unit takes 2 wavefronts (first pass, one replay).
        let r = schedule(&req("ld.shared.v4.b32", |l| {
            (l / 8) * 1024 + (l % 4) * 16 + (l % 8 / 4) * 128
        }));
        assert_eq!((r.wavefront_count(), r.ideal()), (8, 4));
        let replays: Vec<usize> = (0..8).map(|w| r.replay(w)).collect();
        assert_eq!(replays, vec![0, 1, 0, 1, 0, 1, 0, 1]);
        assert_eq!(r.replay(99), 0);
    }

    /// cp.async.ca records of `tests/data/h200_cpasync_2026-11-30.json` (sources contiguous):
    /// `same.src4` 32 wavefronts, `pairs_same.src8` 4, `contiguous.src16` (16 B) 4.
    #[test]
    fn cp_async_writes_to_one_word_are_not_merged() {
        // Sources contiguous at the copy size (lane l reads 8192 + size * l).
        let req = |ins: &str, f: fn(u32) -> u32| {
            let mut r = req(ins, f);
            let w = r.instruction.bytes_per_address() as u64;
            r.global_addrs = Some(Box::new(std::array::from_fn(|l| 8192 + w * l as u64)));
            r
        };
        let r = req("cp.async.ca.shared.global.4", |_| 1024);
        assert_eq!((r.cost().wavefronts, r.cost().ideal), (32, 1));
        assert_eq!(schedule(&r).wavefront_count(), 32);
        assert_eq!(schedule(&r).wavefronts[5].lanes, 1 << 5);
        let r = req("cp.async.ca.shared.global.8", |l| 4096 + (l / 2) * 8);
        assert_eq!(r.cost().wavefronts, 4);
        assert_eq!(schedule(&r).cost(), r.cost());
        let r = req("cp.async.ca.shared.global.16", |l| 1024 + 16 * l);
        assert_eq!(r.cost().wavefronts, 4);
        // The same addresses as st.shared.b32: one wavefront.
        assert_eq!(req("st.shared.b32", |_| 1024).cost().wavefronts, 1);
    }

    /// Spread sources are not modelled: `cp.async.ca.shared.global.4.pairs_same.src16` of
    /// `tests/data/h200_cpasync_2026-11-30.json` (sources 16 bytes apart: four lines) measured 5
    /// wavefronts, and no rule found holds for such requests in general; two lanes of a unit
    /// reading the same bytes, the same; the tile copy (one line per unit, distinct pieces) is
    /// modelled, `.cg` is not.
    #[test]
    fn cp_async_is_modelled_only_for_one_line_per_unit() {
        let mut r = WarpRequest::new(
            Instruction::parse("cp.async.ca.shared.global.4").unwrap(),
            std::array::from_fn(|l| 4096 + (l as u32 / 2) * 4),
        );
        r.global_addrs = Some(Box::new(std::array::from_fn(|l| 16 * l as u64)));
        // Lane l reads word 4l: L1 banks 0, 4, ..., 28, each read by 4 lanes (R = 4, four read
        // groups of 8 lanes); lane pairs write one word (W = 2). Bounds: max(4, 2) = 4 and
        // 4 + 2 - 1 = 5; the H200 measured 5 (SASS-attributed and L1TEX).
        let spread = NotModelled::CpAsyncSpreadSources(SassBounds {
            lo: 4,
            hi: 5,
            units: 1,
        });
        assert_eq!(r.cost().modelled(), Err(spread));
        assert!(schedule(&r).wavefronts.is_empty());
        assert_eq!(schedule(&r).not_modelled, Some(spread));
        // Sources 4 bytes apart in one line, reversed: modelled, pairs of writes to a word: 2.
        r.global_addrs = Some(Box::new(std::array::from_fn(|l| 4 * (31 - l) as u64)));
        assert_eq!((r.cost().wavefronts, r.cost().bank_conflicts()), (2, 1));
        assert_eq!(schedule(&r).cost(), r.cost());
        // Lanes 0 and 1 reading the same 4 bytes: bank 1 read twice (R = 2, two read groups:
        // lanes 0 and 2-31, then lane 1), each of the 16 written words twice (W = 2): from 2 to
        // 2 + 2 - 1 = 3.
        r.global_addrs = Some(Box::new(std::array::from_fn(|l| 4 * l.max(1) as u64)));
        assert_eq!(
            r.cost().modelled(),
            Err(NotModelled::CpAsyncSpreadSources(SassBounds {
                lo: 2,
                hi: 3,
                units: 1
            }))
        );
        // ...unless lane 0 is inactive.
        r.active_mask = !1;
        assert!(r.cost().modelled().is_ok());
        r.global_addrs = None;
        assert_eq!(r.cost().modelled(), Err(NotModelled::CpAsyncSourcesUnknown));
        r.instruction = Instruction::parse("cp.async.cg.shared.global.16").unwrap();
        r.global_addrs = Some(Box::new([0; 32]));
        assert_eq!(r.cost().modelled(), Err(NotModelled::CpAsyncCg));
    }

    #[test]
    fn inactive_lanes_are_ignored() {
        let mut r = req("ld.shared.b32", |l| l * 128);
        r.active_mask = 0b1;
        assert_eq!(schedule(&r).wavefront_count(), 1);
        r.active_mask = 0;
        assert_eq!(schedule(&r).wavefront_count(), 0);
    }

    // Third mutation round (2026-12-01): expected values below are derived by hand from the
    // rule in the module docs, never from the code under test.

    #[test]
    fn not_modelled_messages_name_the_reason() {
        let cg = NotModelled::CpAsyncCg.to_string();
        assert!(cg.starts_with("not modelled: cp.async.cg"), "{cg}");
        let src = NotModelled::CpAsyncSourcesUnknown.to_string();
        assert!(
            src.contains("give each lane's global source address"),
            "{src}"
        );
        let b = SassBounds {
            lo: 3,
            hi: 5,
            units: 2,
        };
        let spread = NotModelled::CpAsyncSpreadSources(b).to_string();
        assert!(spread.contains("several 128-byte global lines"), "{spread}");
        assert!(spread.contains("is between 3 and 5 wavefronts"), "{spread}");
        let exact = NotModelled::CpAsyncSpreadSources(SassBounds { hi: 3, ..b }).to_string();
        assert!(exact.contains("is 3 wavefronts"), "{exact}");
        let one = SassBounds { lo: 1, hi: 1, ..b }.to_string();
        assert_eq!(one, "1 wavefront");
    }

    /// Lanes 0-15 read words 0-15 and lanes 16-31 words 32-47: banks 0-15 hold two distinct
    /// words each (a 2-way conflict), banks 16-31 none. The first wavefront serves the words
    /// met first in lane order (lanes 0-15), the second lanes 16-31 (lane 7 off: below).
    #[test]
    fn lane_wavefronts_and_bank_degree_of_a_two_way_conflict() {
        let mut r = req("ld.shared.b32", |l| (l % 16) * 4 + (l / 16) * 128);
        r.active_mask = !(1 << 7); // lane 7 inactive: in no wavefront
        assert_eq!(r.wavefront_count(), 2);
        let rep = schedule(&r);
        assert_eq!(rep.wavefront_count(), 2);
        for lane in 0..WARP_SIZE {
            // Wavefront j serves each bank's j-th distinct word: with lane 7 off, lane 23's
            // word is bank 7's only one.
            let want: Vec<usize> = match lane {
                7 => vec![],
                0..=15 | 23 => vec![0],
                _ => vec![1],
            };
            assert_eq!(rep.lane_wavefronts(lane), want, "lane {lane}");
        }
        // Which lanes each wavefront serves in bank 3: lane 3's word, then lane 19's.
        assert_eq!(rep.wavefronts[0].bank_lanes[3], 1 << 3);
        assert_eq!(rep.wavefronts[1].bank_lanes[3], 1 << 19);
        assert_eq!(rep.wavefronts[0].bank_lanes[20], 0);
        let deg = rep.bank_degree();
        for (b, &d) in deg.iter().enumerate() {
            // Bank 7 keeps its second word (lane 23) with lane 7 off: degree 1.
            let want = match b {
                7 => 1,
                0..=15 => 2,
                _ => 0,
            };
            assert_eq!(d, want, "bank {b}");
        }
    }

    #[test]
    fn from_slice_names_the_first_offset_past_32_bits() {
        let ins = Instruction::parse("ld.shared.b32").unwrap();
        let mut offs = [0u64; WARP_SIZE];
        // Two offsets with the same high word: their OR, AND and XOR differ; only the first
        // at fault is named.
        offs[3] = (1 << 32) + 16;
        offs[5] = (1 << 32) + 16;
        match WarpRequest::from_slice(ins, &offs, u32::MAX) {
            Err(SimError::OutOfRange { lane, offset, .. }) => {
                assert_eq!((lane, offset), (3, (1 << 32) + 16))
            }
            other => panic!("{other:?}"),
        }
        offs[3] = 0;
        offs[5] = u64::MAX;
        assert!(matches!(
            WarpRequest::from_slice(ins, &offs, u32::MAX),
            Err(SimError::OutOfRange { lane: 5, .. })
        ));
        let fits: Vec<u64> = (0..32).map(|l| u64::from(u32::MAX) - 3 - l).collect();
        let r = WarpRequest::from_slice(ins, &fits, 0xffff).unwrap();
        assert_eq!(r.lane_byte_offsets[31], u32::MAX - 34);
        assert_eq!(r.active_mask, 0xffff);
    }

    #[test]
    fn validate_rejects_what_the_fast_check_must_not_pass() {
        let smem = SharedMemoryConfig::default();
        // b32 at bytes 1 and 2: misaligned although the offsets' OR is 3 = alignment - 1.
        let r = req("ld.shared.b32", |l| match l {
            0 => 1,
            1 => 2,
            _ => 0,
        });
        assert!(matches!(
            r.validate(&smem),
            Err(SimError::Misaligned { lane: 0, .. })
        ));
        // A u8 one byte past the end: offset + 1 > size although offset · 1 <= size.
        let end = smem.size_bytes;
        let r = req("ld.shared.u8", |l| if l == 9 { end } else { 0 });
        assert!(matches!(
            r.validate(&smem),
            Err(SimError::OutOfRange { lane: 9, .. })
        ));
        let r = req("ld.shared.u8", |l| if l == 9 { end - 1 } else { 0 });
        assert!(r.validate(&smem).is_ok());
        // One active lane at u32::MAX - 4 (the inactive ones at 0): misaligned, and past the end.
        let mut r = req("ld.shared.b32", |l| if l == 0 { u32::MAX - 4 } else { 0 });
        r.active_mask = 1;
        assert!(matches!(
            r.validate(&smem),
            Err(SimError::Misaligned { lane: 0, .. })
        ));
        // cp.async.ca.16 with aligned shared offsets and one global source 8 bytes off.
        let mut r = req("cp.async.ca.shared.global.16", |l| 16 * l);
        let mut src: [u64; WARP_SIZE] = std::array::from_fn(|l| 4096 + 16 * l as u64);
        src[12] += 8;
        r.global_addrs = Some(Box::new(src));
        assert!(matches!(
            r.validate(&smem),
            Err(SimError::MisalignedSource {
                lane: 12,
                addr: 4296,
                ..
            })
        ));
        // The same with lane 12 inactive, and an inactive lane's misaligned shared offset:
        // nothing to check.
        r.active_mask = !(1 << 12);
        r.lane_byte_offsets[12] = 3;
        assert!(r.validate(&smem).is_ok());
    }

    /// `ld.shared.v4` with lanes n and n^1 reading the same 16 bytes, pair k at 16·k: each
    /// quarter-warp reads 64 contiguous bytes, and the packed return puts two quarter-warps in
    /// one 128-byte unit: 2 wavefronts, not 4 (lesson 03's packed case).
    #[test]
    fn packed_v4_loads_cost_two_wavefronts_on_every_path() {
        let r = req("ld.shared.v4.b32", |l| (l / 2) * 16);
        assert_eq!(r.cost().wavefronts, 2);
        assert_eq!(r.cost_portable().wavefronts, 2);
        // Not packed (every lane its own 16 bytes): four quarter-warps of 128 bytes, 4.
        let r = req("ld.shared.v4.b32", |l| l * 16);
        assert_eq!(r.cost().wavefronts, 4);
        assert_eq!(r.cost_portable().wavefronts, 4);
    }

    /// Requests `validate` rejects as misaligned still get the word-by-word count (the API
    /// allows costing without validating): the most distinct 4-byte words of one bank per unit.
    #[test]
    fn misaligned_requests_are_counted_word_by_word() {
        // b32 at 4l + 2: lane l touches words l and l + 1, words 0..=32; bank 0 holds 0 and 32.
        let r = req("ld.shared.b32", |l| 4 * l + 2);
        assert_eq!(r.cost_portable().wavefronts, 2);
        assert_eq!(r.cost().wavefronts, 2);
        // Only lane 0 misaligned (byte 2: words 0 and 1), the others at 4l: words 0..=31, one
        // per bank: 1 (lane 31's access ends at byte 127, word 31).
        let r = req("ld.shared.b32", |l| if l == 0 { 2 } else { 4 * l });
        assert_eq!(r.cost_portable().wavefronts, 1);
        // Every lane at byte 2: words 0 and 1, read by all lanes, merged: 1.
        let r = req("ld.shared.b32", |_| 2);
        assert_eq!(r.cost_portable().wavefronts, 1);
        assert_eq!(r.cost().wavefronts, 1);
        // v4 at 16l + 2: five words per lane (4l..=4l+4), per quarter-warp words 8q..=8q+32 of
        // which 8q and 8q+32 share a bank: 2 per unit, 4 units: 8.
        let r = req("ld.shared.v4.b32", |l| 16 * l + 2);
        assert_eq!(r.cost_portable().wavefronts, 8);
        assert_eq!(r.cost().wavefronts, 8);
        // cp.async (no merging of one word's writes): 4-byte copies to byte 2 from distinct
        // pieces of one line: every lane writes words 0 and 1: 32 writes in bank 0.
        let mut r = req("cp.async.ca.shared.global.4", |_| 2);
        r.global_addrs = Some(Box::new(std::array::from_fn(|l| 8192 + 4 * l as u64)));
        assert_eq!(r.cost_portable().wavefronts, 32);
        assert_eq!(r.cost().wavefronts, 32);
        // Half the lanes: 16.
        r.active_mask = 0xffff;
        assert_eq!(r.cost().wavefronts, 16);
    }
}
