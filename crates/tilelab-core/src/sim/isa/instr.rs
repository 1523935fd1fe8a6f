//! What a shared-memory instruction *is*: its PTX name, bytes per lane, and which lanes
//! supply addresses. What it *means* (wavefronts, fragments) lives in [`crate::sim::bank`] and
//! [`crate::sim::ldmatrix`], in the manner of CuTe's split between `arch/` operations and
//! `atom/` traits.
//!
//! Naming: instructions are written as their PTX mnemonics without the `.sync.aligned`
//! qualifiers, e.g. `ld.shared.v4.b32` or `ldmatrix.x4.trans`
//! (= `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16`, SASS `LDSM.16.MT88.4`).

use std::fmt;

use crate::sim::error::SimError;

/// Width of one lane's `ld.shared` / `st.shared` access, in bytes.
///
/// PTX ISA §9.7.9.8 (ld) and §9.7.9.10 (st): scalar `.u8/.u16/.b32`, vectors `.v2.b32`, `.v4.b32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessWidth {
    /// 1 byte (`.u8`, `.s8`, `.b8`).
    U8,
    /// 2 bytes (`.u16`, `.s16`, `.b16`, `.f16`).
    U16,
    /// 4 bytes (`.b32`, `.u32`, `.s32`, `.f32`).
    B32,
    /// 8 bytes (`.v2.b32`, `.b64`, `.u64`, `.f64`, `.v2.f32`).
    V2,
    /// 16 bytes (`.v4.b32`, `.v2.b64`, `.v4.f32`).
    V4,
}

impl AccessWidth {
    /// Bytes read or written per lane.
    pub fn bytes(self) -> u32 {
        match self {
            AccessWidth::U8 => 1,
            AccessWidth::U16 => 2,
            AccessWidth::B32 => 4,
            AccessWidth::V2 => 8,
            AccessWidth::V4 => 16,
        }
    }

    /// The canonical PTX type suffix (`u8`, `u16`, `b32`, `v2.b32`, `v4.b32`).
    pub fn suffix(self) -> &'static str {
        match self {
            AccessWidth::U8 => "u8",
            AccessWidth::U16 => "u16",
            AccessWidth::B32 => "b32",
            AccessWidth::V2 => "v2.b32",
            AccessWidth::V4 => "v4.b32",
        }
    }

    /// Width from a byte count (1, 2, 4, 8 or 16).
    pub fn from_bytes(bytes: u32) -> Option<AccessWidth> {
        Some(match bytes {
            1 => AccessWidth::U8,
            2 => AccessWidth::U16,
            4 => AccessWidth::B32,
            8 => AccessWidth::V2,
            16 => AccessWidth::V4,
            _ => return None,
        })
    }

    fn parse_suffix(s: &str) -> Option<AccessWidth> {
        Some(match s {
            "u8" | "s8" | "b8" => AccessWidth::U8,
            "u16" | "s16" | "b16" | "f16" | "bf16" => AccessWidth::U16,
            "u32" | "s32" | "b32" | "f32" => AccessWidth::B32,
            "v2.b32" | "v2.u32" | "v2.s32" | "v2.f32" | "b64" | "u64" | "s64" | "f64" => {
                AccessWidth::V2
            }
            "v4.b32" | "v4.u32" | "v4.s32" | "v4.f32" | "v2.b64" | "v2.u64" | "v2.f64" => {
                AccessWidth::V4
            }
            _ => return None,
        })
    }
}

/// Number of 8x8 b16 matrices one `ldmatrix` loads (`.x1`, `.x2`, `.x4`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatrixCount {
    /// `.x1`: one matrix, row addresses from lanes 0-7.
    X1,
    /// `.x2`: two matrices, row addresses from lanes 0-15.
    X2,
    /// `.x4`: four matrices, row addresses from lanes 0-31.
    X4,
}

impl MatrixCount {
    /// Number of 8x8 matrices (1, 2 or 4) = destination registers per lane.
    pub fn count(self) -> usize {
        match self {
            MatrixCount::X1 => 1,
            MatrixCount::X2 => 2,
            MatrixCount::X4 => 4,
        }
    }

    /// From 1, 2 or 4.
    pub fn from_count(n: u32) -> Option<MatrixCount> {
        Some(match n {
            1 => MatrixCount::X1,
            2 => MatrixCount::X2,
            4 => MatrixCount::X4,
            _ => return None,
        })
    }
}

/// The cache operator and copy size of a `cp.async` (PTX ISA, "Data Movement and Conversion
/// Instructions: cp.async"): `.ca` copies 4, 8 or 16 bytes per lane, `.cg` (bypass L1) only 16.
/// The variants are exactly the legal pairs, so an illegal one cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpAsyncKind {
    /// `cp.async.ca.shared.global [dst], [src], 4`.
    Ca4,
    /// `cp.async.ca.shared.global [dst], [src], 8`.
    Ca8,
    /// `cp.async.ca.shared.global [dst], [src], 16`.
    Ca16,
    /// `cp.async.cg.shared.global [dst], [src], 16`.
    Cg16,
}

impl CpAsyncKind {
    /// Bytes copied per lane (the `cp-size` operand): 4, 8 or 16.
    pub fn bytes(self) -> u32 {
        match self {
            CpAsyncKind::Ca4 => 4,
            CpAsyncKind::Ca8 => 8,
            CpAsyncKind::Ca16 | CpAsyncKind::Cg16 => 16,
        }
    }

    /// `ca` or `cg`.
    pub fn cache(self) -> &'static str {
        match self {
            CpAsyncKind::Cg16 => "cg",
            _ => "ca",
        }
    }

    fn from_parts(cache: &str, bytes: u32) -> Option<CpAsyncKind> {
        Some(match (cache, bytes) {
            ("ca", 4) => CpAsyncKind::Ca4,
            ("ca", 8) => CpAsyncKind::Ca8,
            ("ca", 16) => CpAsyncKind::Ca16,
            ("cg", 16) => CpAsyncKind::Cg16,
            _ => return None,
        })
    }
}

/// One warp-wide shared-memory instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instruction {
    /// `ld.shared.<type>`: each active lane reads `width` bytes at its own address.
    Ld(AccessWidth),
    /// `st.shared.<type>`: each active lane writes `width` bytes at its own address.
    St(AccessWidth),
    /// `ldmatrix.sync.aligned.m8n8.<num>[.trans].shared.b16` (PTX ISA §9.7.14.5.15):
    /// lanes supply the addresses of 16-byte matrix rows; every lane receives fragments.
    Ldmatrix {
        /// `.x1`, `.x2` or `.x4`.
        num: MatrixCount,
        /// `.trans`: each lane receives transposed fragments.
        trans: bool,
    },
    /// `stmatrix.sync.aligned.m8n8.<num>[.trans].shared.b16` (PTX ISA §9.7.14.5.16, sm_90): the
    /// inverse of `ldmatrix`. Lanes `8i..8i+7` give the 16-byte row addresses of matrix `i`; lane
    /// `l`'s register `i` holds row `l/4`, columns `2(l%4)` and `2(l%4)+1` of matrix `i` (with
    /// `.trans`, column `l/4`, rows `2(l%4)`, `2(l%4)+1`): the fragment table of
    /// [`crate::sim::ldmatrix::fragment`]. SASS `STSM.16.M88[.2|.4]`, `STSM.16.MT88[.2|.4]`. This is
    /// how an epilogue writes an `mma`/`wgmma` accumulator tile (converted to 16-bit) to shared
    /// memory, 16 bytes per row. Placement ([`crate::sim::exec::register_byte_address`]) and cost (one
    /// unit per matrix, as `ldmatrix`) checked on an H200: `tests/data/h200_stmatrix_*.json`.
    Stmatrix {
        /// `.x1`, `.x2` or `.x4`.
        num: MatrixCount,
        /// `.trans`: each lane sends transposed fragments.
        trans: bool,
    },
    /// `cp.async.{ca,cg}.shared.global [dst], [src], cp-size`, the shared side only: each active
    /// lane writes `cp-size` bytes (fetched from global memory) at its shared address. SASS `LDGSTS`.
    CpAsync(CpAsyncKind),
}

/// Parses the qualifiers after `ldmatrix.` (or `stmatrix.`): `[sync.][aligned.][m8n8.]` one of
/// `x1|x2|x4`, then `[.trans][.shared|.shared::cta][.b16]`, each at most once and in the PTX
/// ISA's order (§9.7.14.5.15: `ldmatrix.sync.aligned.shape.num{.trans}{.ss}.type`). `name` is
/// the whole instruction, for messages.
///
/// # Errors
/// [`SimError::UnknownInstruction`] for a part that is no qualifier of these instructions;
/// [`SimError::BadInstruction`] for a qualifier given twice (`ldmatrix.x4.trans.trans`), two
/// counts (`ldmatrix.x2.x4`), qualifiers out of order or no count.
pub fn parse_matrix_qualifiers(name: &str, rest: &str) -> Result<(MatrixCount, bool), SimError> {
    const ORDER: &str = "PTX order is .sync.aligned.m8n8.{x1,x2,x4}[.trans][.shared].b16";
    let bad = |reason: String| SimError::BadInstruction {
        given: name.to_string(),
        reason,
    };
    let mut num = None;
    let mut trans = false;
    // (rank in the PTX order, the part) of the last qualifier seen.
    let mut last: Option<(u8, &str)> = None;
    for part in rest.split('.') {
        let rank = match part {
            "sync" => 0,
            "aligned" => 1,
            "m8n8" => 2,
            "x1" | "x2" | "x4" => 3,
            "trans" => 4,
            "shared" | "shared::cta" => 5,
            "b16" => 6,
            _ => return Err(SimError::UnknownInstruction(name.to_string())),
        };
        if let Some((r, prev)) = last {
            if r == rank && rank == 3 {
                return Err(bad(format!(
                    "two matrix counts '.{prev}' and '.{part}'; give exactly one of .x1, .x2, .x4"
                )));
            }
            if r == rank {
                return Err(bad(format!("'.{part}' given twice")));
            }
            if r > rank {
                return Err(bad(format!("'.{part}' after '.{prev}'; {ORDER}")));
            }
        }
        last = Some((rank, part));
        match part {
            "x1" => num = Some(MatrixCount::X1),
            "x2" => num = Some(MatrixCount::X2),
            "x4" => num = Some(MatrixCount::X4),
            "trans" => trans = true,
            _ => {}
        }
    }
    let num = num.ok_or_else(|| bad("no matrix count; give one of .x1, .x2, .x4".into()))?;
    Ok((num, trans))
}

pub use crate::sim::error::INSTRUCTION_NAMES;

impl Instruction {
    /// `ldmatrix.x4` (`LDSM.16.M88.4`).
    pub const LDSM_X4: Instruction = Instruction::Ldmatrix {
        num: MatrixCount::X4,
        trans: false,
    };
    /// `ldmatrix.x4.trans` (`LDSM.16.MT88.4`).
    pub const LDSM_X4_T: Instruction = Instruction::Ldmatrix {
        num: MatrixCount::X4,
        trans: true,
    };

    /// Parses a PTX instruction name such as `ld.shared.v4.b32`, `st.shared.u16`,
    /// `ldmatrix.x2.trans` or the full `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16`.
    ///
    /// # Errors
    /// [`SimError::UnknownInstruction`] quoting the name and listing what is allowed;
    /// [`SimError::BadInstruction`] for known parts put together wrongly (see
    /// [`parse_matrix_qualifiers`]).
    pub fn parse(name: &str) -> Result<Instruction, SimError> {
        let bad = || SimError::UnknownInstruction(name.to_string());
        let s = name.trim();
        for (prefix, store) in [("ldmatrix.", false), ("stmatrix.", true)] {
            let Some(rest) = s.strip_prefix(prefix) else {
                continue;
            };
            let (num, trans) = parse_matrix_qualifiers(name, rest)?;
            return Ok(if store {
                Instruction::Stmatrix { num, trans }
            } else {
                Instruction::Ldmatrix { num, trans }
            });
        }
        if let Some(rest) = s.strip_prefix("cp.async.") {
            // cp.async.{ca,cg}.shared[::cta].global.<cp-size>
            let mut parts = rest.split('.');
            let cache = parts.next().ok_or_else(bad)?;
            let space = parts.next().ok_or_else(bad)?;
            if !matches!(space, "shared" | "shared::cta") || parts.next() != Some("global") {
                return Err(bad());
            }
            let bytes = parts.next().and_then(|b| b.parse::<u32>().ok());
            if parts.next().is_some() {
                return Err(bad());
            }
            return bytes
                .and_then(|b| CpAsyncKind::from_parts(cache, b))
                .map(Instruction::CpAsync)
                .ok_or_else(bad);
        }
        let (op, rest) = if let Some(r) = s.strip_prefix("ld.shared.") {
            ("ld", r)
        } else if let Some(r) = s.strip_prefix("st.shared.") {
            ("st", r)
        } else if let Some(r) = s.strip_prefix("ld.shared::cta.") {
            ("ld", r)
        } else if let Some(r) = s.strip_prefix("st.shared::cta.") {
            ("st", r)
        } else {
            return Err(bad());
        };
        let w = AccessWidth::parse_suffix(rest).ok_or_else(bad)?;
        Ok(if op == "ld" {
            Instruction::Ld(w)
        } else {
            Instruction::St(w)
        })
    }

    /// Bytes one address covers: the lane's access width (the `cp-size` of `cp.async`), or 16
    /// (one matrix row) for ldmatrix and stmatrix.
    pub fn bytes_per_address(self) -> u32 {
        match self {
            Instruction::Ld(w) | Instruction::St(w) => w.bytes(),
            Instruction::Ldmatrix { .. } | Instruction::Stmatrix { .. } => 16,
            Instruction::CpAsync(k) => k.bytes(),
        }
    }

    /// The number of 8x8 matrices of an `ldmatrix` or `stmatrix`, `None` for other instructions.
    pub fn matrices(self) -> Option<MatrixCount> {
        match self {
            Instruction::Ldmatrix { num, .. } | Instruction::Stmatrix { num, .. } => Some(num),
            _ => None,
        }
    }

    /// Required alignment of every address, in bytes (= [`Self::bytes_per_address`]).
    pub fn alignment(self) -> u32 {
        self.bytes_per_address()
    }

    /// True for instructions that write shared memory: `st.shared`, `stmatrix` and the shared
    /// side of `cp.async`.
    pub fn is_store(self) -> bool {
        matches!(
            self,
            Instruction::St(_) | Instruction::Stmatrix { .. } | Instruction::CpAsync(_)
        )
    }

    /// True for `.sync.aligned` instructions, which all 32 lanes must execute together
    /// (`ldmatrix`, `stmatrix`).
    pub fn is_warp_collective(self) -> bool {
        self.matrices().is_some()
    }

    /// Lanes whose address operand is used: all 32 for ld/st/cp.async; lanes 0-7, 0-15 or 0-31
    /// for ldmatrix and stmatrix .x1/.x2/.x4 (PTX ISA §9.7.14.5.15, table "ldmatrix: threads
    /// providing addresses"; §9.7.14.5.16 for stmatrix).
    pub fn address_lanes(self) -> u32 {
        match self.matrices() {
            None => u32::MAX,
            Some(MatrixCount::X1) => 0xff,
            Some(MatrixCount::X2) => 0xffff,
            Some(MatrixCount::X4) => u32::MAX,
        }
    }

    /// 32-bit registers each lane reads or writes: `ceil(width / 4)` for ld/st (so a `.u8` or
    /// `.u16` access fills one zero-extended register), the `cp-size / 4` words of source data of
    /// `cp.async`, one per matrix for ldmatrix/stmatrix.
    pub fn regs_per_lane(self) -> usize {
        match self.matrices() {
            Some(num) => num.count(),
            None => self.bytes_per_address().div_ceil(4) as usize,
        }
    }

    /// The SASS mnemonic nvcc emits for it on sm_80/sm_90 (`LDS.128`, `STS.U16`, `LDSM.16.MT88.4`, …).
    pub fn sass(self) -> &'static str {
        match self {
            Instruction::Ld(w) => match w {
                AccessWidth::U8 => "LDS.U8",
                AccessWidth::U16 => "LDS.U16",
                AccessWidth::B32 => "LDS",
                AccessWidth::V2 => "LDS.64",
                AccessWidth::V4 => "LDS.128",
            },
            Instruction::St(w) => match w {
                AccessWidth::U8 => "STS.U8",
                AccessWidth::U16 => "STS.U16",
                AccessWidth::B32 => "STS",
                AccessWidth::V2 => "STS.64",
                AccessWidth::V4 => "STS.128",
            },
            Instruction::Ldmatrix { num, trans } => match (num, trans) {
                (MatrixCount::X1, false) => "LDSM.16.M88",
                (MatrixCount::X2, false) => "LDSM.16.M88.2",
                (MatrixCount::X4, false) => "LDSM.16.M88.4",
                (MatrixCount::X1, true) => "LDSM.16.MT88",
                (MatrixCount::X2, true) => "LDSM.16.MT88.2",
                (MatrixCount::X4, true) => "LDSM.16.MT88.4",
            },
            Instruction::Stmatrix { num, trans } => match (num, trans) {
                (MatrixCount::X1, false) => "STSM.16.M88",
                (MatrixCount::X2, false) => "STSM.16.M88.2",
                (MatrixCount::X4, false) => "STSM.16.M88.4",
                (MatrixCount::X1, true) => "STSM.16.MT88",
                (MatrixCount::X2, true) => "STSM.16.MT88.2",
                (MatrixCount::X4, true) => "STSM.16.MT88.4",
            },
            // Without L2 prefetch or cache-hint qualifiers; `.cg` bypasses L1.
            Instruction::CpAsync(k) => match k {
                CpAsyncKind::Ca4 => "LDGSTS.E",
                CpAsyncKind::Ca8 => "LDGSTS.E.64",
                CpAsyncKind::Ca16 => "LDGSTS.E.128",
                CpAsyncKind::Cg16 => "LDGSTS.E.BYPASS.128",
            },
        }
    }
}

impl Instruction {
    /// The full PTX spelling of an `ldmatrix`/`stmatrix` (e.g.
    /// `stmatrix.sync.aligned.m8n8.x4.trans.shared.b16`); the short name ([`fmt::Display`]) for
    /// every other instruction.
    pub fn full_ptx(self) -> String {
        match self {
            Instruction::Ldmatrix { num, trans } | Instruction::Stmatrix { num, trans } => {
                format!(
                    "{}.sync.aligned.m8n8.x{}{}.shared.b16",
                    if self.is_store() {
                        "stmatrix"
                    } else {
                        "ldmatrix"
                    },
                    num.count(),
                    if trans { ".trans" } else { "" }
                )
            }
            _ => self.to_string(),
        }
    }
}

impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Instruction::Ld(w) => write!(f, "ld.shared.{}", w.suffix()),
            Instruction::St(w) => write!(f, "st.shared.{}", w.suffix()),
            Instruction::Ldmatrix { num, trans } | Instruction::Stmatrix { num, trans } => write!(
                f,
                "{}.x{}{}",
                if self.is_store() {
                    "stmatrix"
                } else {
                    "ldmatrix"
                },
                num.count(),
                if *trans { ".trans" } else { "" }
            ),
            Instruction::CpAsync(k) => {
                write!(f, "cp.async.{}.shared.global.{}", k.cache(), k.bytes())
            }
        }
    }
}

impl std::str::FromStr for Instruction {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Instruction::parse(s)
    }
}

/// The SASS instruction classes tilelab counts: the **one** spelling of each (full mnemonics
/// such as `LDSM.16.MT88.4` or `HGMMA.64x128x16.F32` start with their class's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum SassClass {
    /// `LDS` (`ld.shared`).
    Lds,
    /// `STS` (`st.shared`).
    Sts,
    /// `LDSM` (`ldmatrix`).
    Ldsm,
    /// `STSM` (`stmatrix`, sm_90).
    Stsm,
    /// `LDGSTS` (`cp.async`).
    Ldgsts,
    /// `HMMA` (`mma.sync`, floating-point inputs).
    Hmma,
    /// `IMMA` (`mma.sync`, integer inputs).
    Imma,
    /// `HGMMA` (`wgmma.mma_async`, f16/bf16/tf32 inputs).
    Hgmma,
    /// `QGMMA` (`wgmma.mma_async`, FP8 inputs).
    Qgmma,
    /// `IGMMA` (`wgmma.mma_async`, 8-bit integer inputs).
    Igmma,
    /// `UTMALDG` (`cp.async.bulk.tensor` global -> shared).
    Utmaldg,
    /// `UTMASTG` (`cp.async.bulk.tensor` shared -> global).
    Utmastg,
    /// `UTMAREDG` (`cp.reduce.async.bulk.tensor`).
    Utmaredg,
    /// `UBLKCP` (`cp.async.bulk` without a tensor map).
    Ublkcp,
    /// `UBLKRED` (`cp.reduce.async.bulk` without a tensor map).
    Ublkred,
}

impl SassClass {
    /// The counts tables' short label of the transposing `LDSM` (`LDSM.16.MT88.*`).
    pub const LDSM_T_SHORT: &'static str = "LDSM.T";

    /// The class name as cuobjdump prints it (`LDSM`, `HGMMA`, `UTMALDG`, …).
    pub const fn name(self) -> &'static str {
        match self {
            SassClass::Lds => "LDS",
            SassClass::Sts => "STS",
            SassClass::Ldsm => "LDSM",
            SassClass::Stsm => "STSM",
            SassClass::Ldgsts => "LDGSTS",
            SassClass::Hmma => "HMMA",
            SassClass::Imma => "IMMA",
            SassClass::Hgmma => "HGMMA",
            SassClass::Qgmma => "QGMMA",
            SassClass::Igmma => "IGMMA",
            SassClass::Utmaldg => "UTMALDG",
            SassClass::Utmastg => "UTMASTG",
            SassClass::Utmaredg => "UTMAREDG",
            SassClass::Ublkcp => "UBLKCP",
            SassClass::Ublkred => "UBLKRED",
        }
    }
}

impl fmt::Display for SassClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Who executes an instruction together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Scope {
    /// One warp (32 lanes): ld/st.shared, ldmatrix, stmatrix, cp.async, mma.sync.
    Warp,
    /// A warpgroup (4 consecutive warps, 128 threads): wgmma.mma_async.
    Warpgroup,
    /// One thread issues a bulk copy the TMA unit performs: cp.async.bulk(.tensor),
    /// cp.reduce.async.bulk(.tensor).
    Bulk,
}

/// How an instruction's effect becomes visible (what a waiter waits on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Completion {
    /// Done when the instruction retires.
    Synchronous,
    /// `cp.async.commit_group` / `cp.async.wait_group`.
    CpAsyncGroup,
    /// `wgmma.commit_group` / `wgmma.wait_group`.
    WgmmaGroup,
    /// `mbarrier::complete_tx::bytes`: the copy's bytes complete an mbarrier transaction count.
    MbarrierTxBytes,
    /// `cp.async.bulk.commit_group` / `cp.async.bulk.wait_group(.read)`.
    BulkGroup,
}

/// How the model costs an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum CostRule {
    /// Shared-memory wavefronts of the warp request ([`crate::sim::bank`]: lanes grouped into units).
    BankUnits,
    /// Shared-memory wavefronts by the 128-byte global lines the lanes read (`cp.async.ca`;
    /// `.cg` not modelled: [`crate::sim::bank::NotModelled`]).
    CpAsyncLines,
    /// Tensor-core work only: no shared-memory request.
    TensorCore,
    /// Core matrices (8 rows x 16 bytes) read from shared memory: one wavefront each, i.e.
    /// (A bytes from shared memory + B bytes) / 128 per `wgmma`, in
    /// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma` (also in `..._mem_shared` and
    /// `_cmd_read`, never in `_op_ld`) with no bank conflicts in any layout measured on the H200
    /// (tests/data/hopper_probes, tests/data/ptx_hopper/README.md: m64n64k16 SS 32, m64n128k16
    /// 48, m64n256k16 80, m64n64k16 RS 16). The earlier unmeasured rule (each core matrix costed
    /// as an 8-address ldmatrix-like unit, conflicts where rows share banks) differed for
    /// conflicting layouts and was replaced by this one.
    CoreMatrices,
    /// Bytes moved by the TMA unit (no warp shared-memory request).
    BulkBytes,
}

/// One row of the instruction table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct InstrRow {
    /// PTX name without the operands (qualifiers that vary are written in braces).
    pub ptx: &'static str,
    /// SASS class.
    pub sass: SassClass,
    /// Full SASS mnemonic pattern (e.g. `UTMALDG.2D`, `HGMMA.64xNx16.F32`).
    pub sass_form: &'static str,
    /// Who executes it.
    pub scope: Scope,
    /// How it completes.
    pub completion: Completion,
    /// How it is costed.
    pub cost: CostRule,
}

const fn row(
    ptx: &'static str,
    sass: SassClass,
    sass_form: &'static str,
    scope: Scope,
    completion: Completion,
    cost: CostRule,
) -> InstrRow {
    InstrRow {
        ptx,
        sass,
        sass_form,
        scope,
        completion,
        cost,
    }
}

/// The instruction table: every non-ALU instruction the executor ([`crate::sim::exec::execute`])
/// runs, once. Sources: PTX ISA 8.x (sm_90a) for names and completion; SASS forms as cuobjdump
/// prints them for sm_90a (`tests/data/h200_*`: LDS/STS/LDSM/STSM/LDGSTS/HMMA/HGMMA f16 and
/// bf16, UTMALDG.2D, UTMASTG.2D); every `mma.sync` form as ptxas 13.0.88 assembles it for
/// sm_90 and sm_89 and nvdisasm prints it (`docs/log/2026-12-02-mma-forms.md`); the
/// QGMMA/IGMMA/UTMAREDG/UBLKCP/UBLKRED forms and the tf32 HGMMA form are NVIDIA's SASS names not
/// yet disassembled here.
pub const TABLE: &[InstrRow] = &[
    row(
        "ld.shared.{u8,u16,b32,v2.b32,v4.b32}",
        SassClass::Lds,
        "LDS{.U8,.U16,,.64,.128}",
        Scope::Warp,
        Completion::Synchronous,
        CostRule::BankUnits,
    ),
    row(
        "st.shared.{u8,u16,b32,v2.b32,v4.b32}",
        SassClass::Sts,
        "STS{.U8,.U16,,.64,.128}",
        Scope::Warp,
        Completion::Synchronous,
        CostRule::BankUnits,
    ),
    row(
        "ldmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16",
        SassClass::Ldsm,
        "LDSM.16.{M88,MT88}{,.2,.4}",
        Scope::Warp,
        Completion::Synchronous,
        CostRule::BankUnits,
    ),
    row(
        "stmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16",
        SassClass::Stsm,
        "STSM.16.{M88,MT88}{,.2,.4}",
        Scope::Warp,
        Completion::Synchronous,
        CostRule::BankUnits,
    ),
    row(
        "cp.async.{ca,cg}.shared.global",
        SassClass::Ldgsts,
        "LDGSTS.E{,.64,.128,.BYPASS.128}",
        Scope::Warp,
        Completion::CpAsyncGroup,
        CostRule::CpAsyncLines,
    ),
    row(
        "mma.sync.aligned.{m16n8k16,m16n8k8}.row.col.{f32,f16}.{f16,bf16}.{f16,bf16}.{f32,f16}",
        SassClass::Hmma,
        "HMMA.{16816,1688}.{F32,F16}[.BF16]",
        Scope::Warp,
        Completion::Synchronous,
        CostRule::TensorCore,
    ),
    row(
        "mma.sync.aligned.{m16n8k8,m16n8k4}.row.col.f32.tf32.tf32.f32",
        SassClass::Hmma,
        "HMMA.{1688,1684}.F32.TF32",
        Scope::Warp,
        Completion::Synchronous,
        CostRule::TensorCore,
    ),
    row(
        "mma.sync.aligned.{m16n8k16,m16n8k32}.row.col[.satfinite].s32.{s8,u8}.{s8,u8}.s32",
        SassClass::Imma,
        "IMMA.{16816,16832}.{S8,U8}.{S8,U8}[.SAT]",
        Scope::Warp,
        Completion::Synchronous,
        CostRule::TensorCore,
    ),
    row(
        "mma.sync.aligned.m16n8k32.row.col.{f32,f16}.{e4m3,e5m2}.{e4m3,e5m2}.{f32,f16}",
        SassClass::Hmma,
        "HMMA.16816.{F32,F16} x2 after F2FP.F16.{E4M3,E5M2}.UNPACK_B (sm_90); QMMA.16832.{F32,F16}.{E4M3,E5M2}.{E4M3,E5M2} (sm_89)",
        Scope::Warp,
        Completion::Synchronous,
        CostRule::TensorCore,
    ),
    row(
        "wgmma.mma_async.sync.aligned.m64nNk{16,8}.{f16,bf16,tf32}",
        SassClass::Hgmma,
        "HGMMA.64xNx{16,8}.{F32,F16}[.BF16,.TF32]",
        Scope::Warpgroup,
        Completion::WgmmaGroup,
        CostRule::CoreMatrices,
    ),
    row(
        "wgmma.mma_async.sync.aligned.m64nNk32.{e4m3,e5m2}",
        SassClass::Qgmma,
        "QGMMA.64xNx32.{F32,F16}.{E4M3,E5M2}.{E4M3,E5M2}",
        Scope::Warpgroup,
        Completion::WgmmaGroup,
        CostRule::CoreMatrices,
    ),
    row(
        "wgmma.mma_async.sync.aligned.m64nNk32.s32.{s8,u8}",
        SassClass::Igmma,
        "IGMMA.64xNx32.{S8,U8}.{S8,U8}[.SAT]",
        Scope::Warpgroup,
        Completion::WgmmaGroup,
        CostRule::CoreMatrices,
    ),
    row(
        "cp.async.bulk.tensor.{1d..5d}.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        SassClass::Utmaldg,
        "UTMALDG.{1D..5D}",
        Scope::Bulk,
        Completion::MbarrierTxBytes,
        CostRule::BulkBytes,
    ),
    row(
        "cp.async.bulk.tensor.{1d..5d}.global.shared::cta.tile.bulk_group",
        SassClass::Utmastg,
        "UTMASTG.{1D..5D}",
        Scope::Bulk,
        Completion::BulkGroup,
        CostRule::BulkBytes,
    ),
    row(
        "cp.reduce.async.bulk.tensor.{1d..5d}.global.shared::cta.{add,min,max,inc,dec,and,or,xor}.tile.bulk_group",
        SassClass::Utmaredg,
        "UTMAREDG.{1D..5D}",
        Scope::Bulk,
        Completion::BulkGroup,
        CostRule::BulkBytes,
    ),
    row(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
        SassClass::Ublkcp,
        "UBLKCP.S.G",
        Scope::Bulk,
        Completion::MbarrierTxBytes,
        CostRule::BulkBytes,
    ),
    row(
        "cp.async.bulk.global.shared::cta.bulk_group",
        SassClass::Ublkcp,
        "UBLKCP.G.S",
        Scope::Bulk,
        Completion::BulkGroup,
        CostRule::BulkBytes,
    ),
    row(
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.{add,min,max,inc,dec,and,or,xor}",
        SassClass::Ublkred,
        "UBLKRED.G.S",
        Scope::Bulk,
        Completion::BulkGroup,
        CostRule::BulkBytes,
    ),
];

/// Which targets accept an instruction form beyond its oldest architecture number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum TargetRule {
    /// Every target numbered `sm` or later (the ISA's "onion" model: `sm_90` code runs on later
    /// targets), with or without an `a`/`f` suffix.
    AndLater,
    /// Only the architecture-specific targets (`a` or `f` suffix) numbered `sm` or later: the
    /// ISA's "Requires sm_90a or higher" forms (`setmaxnreg`, `tensormap.replace`; ptxas 13.0.88
    /// accepts them on sm_90a, sm_100a/f … sm_121a and refuses them on sm_90, sm_100, sm_120).
    ArchSpecific,
    /// One target only (`wgmma.*`: "Requires sm_90a"; ptxas 13.0.88 refuses it on every other
    /// target, sm_100a and sm_120a included).
    Only(&'static str),
}

/// One row of the version/target gates: the oldest PTX ISA version ("PTX ISA Notes") and target
/// ("Target ISA Notes") that accept an instruction form. A row applies when the opcode is `op`
/// and every qualifier of `when` is present; every row that applies is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Gate {
    /// The opcode (`stmatrix`, `mbarrier`, `cp`).
    pub op: &'static str,
    /// The qualifiers that select the form (all present), e.g. `["try_wait"]`.
    pub when: &'static [&'static str],
    /// The oldest `.version` (major, minor).
    pub ptx: (u32, u32),
    /// The oldest target number (90 for sm_90).
    pub sm: u32,
    /// Which targets of that number or later accept it.
    pub targets: TargetRule,
    /// The PTX ISA section whose notes give the minimums.
    pub section: &'static str,
}

const fn gate(
    op: &'static str,
    when: &'static [&'static str],
    ptx: (u32, u32),
    sm: u32,
    targets: TargetRule,
    section: &'static str,
) -> Gate {
    Gate {
        op,
        when,
        ptx,
        sm,
        targets,
        section,
    }
}

use TargetRule::{AndLater, ArchSpecific, Only};

/// The version/target gates of the instructions the PTX engine decodes, from each section's
/// "PTX ISA Notes" and "Target ISA Notes" (PTX ISA 8.x/9.0 numbering; NVIDIA's CCCL
/// `cuda::ptx` pages give the same pairs, e.g. "elect.sync … PTX ISA 80, SM_90",
/// "mbarrier.try_wait … PTX ISA 78, SM_90"). Every row was checked against ptxas 13.0.88, which
/// refuses the form one version or one target below ("Feature 'stmatrix' requires PTX ISA
/// .version 7.8 or later", "… requires .target sm_90 or higher", "Instruction 'wgmma.fence' not
/// supported on .target 'sm_90'") and accepts it at the minimum. More specific rows first: the
/// first row that refuses names the message.
pub const GATES: &[Gate] = &[
    gate(
        "ldmatrix",
        &[],
        (6, 5),
        75,
        AndLater,
        "PTX ISA 9.7.14.5.15 ldmatrix",
    ),
    gate(
        "stmatrix",
        &[],
        (7, 8),
        90,
        AndLater,
        "PTX ISA 9.7.14.5.16 stmatrix",
    ),
    // mma.sync: fp8 with f16 accumulators (8.7), fp8 (8.4, sm_89), tf32/bf16 and the
    // m16n8k16/k32/k4 shapes (7.0, sm_80), m16n8k8 f16 (6.5, sm_75), mma itself (6.4, sm_70).
    gate(
        "mma",
        &["e4m3", "f16"],
        (8, 7),
        89,
        AndLater,
        "PTX ISA 9.7.14.5.14 mma",
    ),
    gate(
        "mma",
        &["e5m2", "f16"],
        (8, 7),
        89,
        AndLater,
        "PTX ISA 9.7.14.5.14 mma",
    ),
    gate(
        "mma",
        &["e4m3"],
        (8, 4),
        89,
        AndLater,
        "PTX ISA 9.7.14.5.14 mma",
    ),
    gate(
        "mma",
        &["e5m2"],
        (8, 4),
        89,
        AndLater,
        "PTX ISA 9.7.14.5.14 mma",
    ),
    gate(
        "mma",
        &["tf32"],
        (7, 0),
        80,
        AndLater,
        "PTX ISA 9.7.14.5.14 mma",
    ),
    gate(
        "mma",
        &["bf16"],
        (7, 0),
        80,
        AndLater,
        "PTX ISA 9.7.14.5.14 mma",
    ),
    gate(
        "mma",
        &["m16n8k16"],
        (7, 0),
        80,
        AndLater,
        "PTX ISA 9.7.14.5.14 mma",
    ),
    gate(
        "mma",
        &["m16n8k32"],
        (7, 0),
        80,
        AndLater,
        "PTX ISA 9.7.14.5.14 mma",
    ),
    gate(
        "mma",
        &["m16n8k4"],
        (7, 0),
        80,
        AndLater,
        "PTX ISA 9.7.14.5.14 mma",
    ),
    gate(
        "mma",
        &["m16n8k8"],
        (6, 5),
        75,
        AndLater,
        "PTX ISA 9.7.14.5.14 mma",
    ),
    gate("mma", &[], (6, 4), 70, AndLater, "PTX ISA 9.7.14.5.14 mma"),
    gate(
        "wgmma",
        &[],
        (8, 0),
        90,
        Only("sm_90a"),
        "PTX ISA 9.7.15 wgmma",
    ),
    gate(
        "setmaxnreg",
        &[],
        (8, 0),
        90,
        ArchSpecific,
        "PTX ISA 9.7.17.1 setmaxnreg",
    ),
    gate(
        "elect",
        &[],
        (8, 0),
        90,
        AndLater,
        "PTX ISA 9.7.13.12 elect.sync",
    ),
    gate(
        "cp",
        &["reduce", "async", "bulk"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA 9.7.9.25.4.2 cp.reduce.async.bulk",
    ),
    gate(
        "cp",
        &["async", "bulk", "tensor"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA 9.7.9.25.5.1 cp.async.bulk.tensor",
    ),
    gate(
        "cp",
        &["async", "bulk"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA 9.7.9.25 cp.async.bulk",
    ),
    gate(
        "cp",
        &["async"],
        (7, 0),
        80,
        AndLater,
        "PTX ISA §9.7.9.25.3 cp.async",
    ),
    gate(
        "fence",
        &["proxy", "tensormap::generic"],
        (8, 3),
        90,
        AndLater,
        "PTX ISA 9.7.13.4 membar/fence",
    ),
    gate(
        "fence",
        &["proxy", "async"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA 9.7.13.4 membar/fence",
    ),
    gate(
        "fence",
        &["proxy"],
        (7, 5),
        70,
        AndLater,
        "PTX ISA 9.7.13.4 membar/fence",
    ),
    gate(
        "fence",
        &["mbarrier_init"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA 9.7.13.4 membar/fence",
    ),
    gate(
        "fence",
        &["cluster"],
        (7, 8),
        90,
        AndLater,
        "PTX ISA 9.7.13.4 membar/fence",
    ),
    gate(
        "mbarrier",
        &["try_wait", "relaxed"],
        (8, 6),
        90,
        AndLater,
        "PTX ISA §9.7.13.15.16 mbarrier.test_wait/try_wait",
    ),
    gate(
        "mbarrier",
        &["test_wait", "relaxed"],
        (8, 6),
        90,
        AndLater,
        "PTX ISA §9.7.13.15.16 mbarrier.test_wait/try_wait",
    ),
    gate(
        "mbarrier",
        &["expect_tx"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA §9.7.13.15.11 mbarrier.expect_tx",
    ),
    gate(
        "mbarrier",
        &["complete_tx"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA §9.7.13.15.12 mbarrier.complete_tx",
    ),
    gate(
        "mbarrier",
        &["release"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA §9.7.13.15 mbarrier",
    ),
    gate(
        "mbarrier",
        &["acquire"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA §9.7.13.15 mbarrier",
    ),
    gate(
        "mbarrier",
        &["cluster"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA §9.7.13.15 mbarrier",
    ),
    gate(
        "mbarrier",
        &["try_wait"],
        (7, 8),
        90,
        AndLater,
        "PTX ISA §9.7.13.15.16 mbarrier.test_wait/try_wait",
    ),
    gate(
        "mbarrier",
        &["test_wait", "parity"],
        (7, 1),
        80,
        AndLater,
        "PTX ISA §9.7.13.15.16 mbarrier.test_wait/try_wait",
    ),
    gate(
        "mbarrier",
        &[],
        (7, 0),
        80,
        AndLater,
        "PTX ISA §9.7.13.15 mbarrier",
    ),
    gate(
        "barrier",
        &["cluster", "release"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA 9.7.13.2 barrier.cluster",
    ),
    gate(
        "barrier",
        &["cluster", "relaxed"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA 9.7.13.2 barrier.cluster",
    ),
    gate(
        "barrier",
        &["cluster", "acquire"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA 9.7.13.2 barrier.cluster",
    ),
    gate(
        "barrier",
        &["cluster"],
        (7, 8),
        90,
        AndLater,
        "PTX ISA 9.7.13.2 barrier.cluster",
    ),
    gate(
        "griddepcontrol",
        &[],
        (7, 8),
        90,
        AndLater,
        "PTX ISA §9.7.13 griddepcontrol",
    ),
    gate("mapa", &[], (7, 8), 90, AndLater, "PTX ISA 9.7.9.22 mapa"),
    gate(
        "redux",
        &[],
        (7, 0),
        80,
        AndLater,
        "PTX ISA §9.7.13 redux.sync",
    ),
    gate(
        "prefetch",
        &["tensormap"],
        (8, 0),
        90,
        AndLater,
        "PTX ISA 9.7.9.15 prefetch",
    ),
    gate(
        "tensormap",
        &["replace"],
        (8, 3),
        90,
        ArchSpecific,
        "PTX ISA §9.7.9.26 tensormap.replace",
    ),
    gate(
        "tensormap",
        &["cp_fenceproxy"],
        (8, 3),
        90,
        AndLater,
        "PTX ISA §9.7.13 tensormap.cp_fenceproxy",
    ),
];

/// A module's `.target` as the gates read it: its number and suffix (`sm_90a` → (90, "a"),
/// `compute_80` → (80, ""), `sm_100f` → (100, "f")); `None` when it names no number.
pub fn target_parts(target: &str) -> Option<(u32, &str)> {
    let d = target
        .strip_prefix("sm_")
        .or_else(|| target.strip_prefix("compute_"))?;
    let n = d.len() - d.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    Some((d[..n].parse().ok()?, &d[n..]))
}

impl Gate {
    /// Whether the form is allowed under `.version` `version` (major, minor) and `.target`
    /// `target` (`sm_90a`). A target without a number, and the version (0, 0) (none given), are
    /// not checked.
    pub fn allows(&self, version: (u32, u32), target: &str) -> bool {
        let target_ok = match target_parts(target) {
            None => true,
            Some((n, suffix)) => match self.targets {
                AndLater => n >= self.sm,
                ArchSpecific => n >= self.sm && matches!(suffix, "a" | "f"),
                Only(t) => target == t || target.strip_prefix("compute_") == t.strip_prefix("sm_"),
            },
        };
        (version == (0, 0) || version >= self.ptx) && target_ok
    }

    /// What the form needs, for a message: `PTX ISA 7.8 or later and .target sm_90 or later`.
    pub fn needs(&self) -> String {
        let t = match self.targets {
            AndLater => format!(".target sm_{} or later", self.sm),
            ArchSpecific => format!(
                ".target sm_{}a or a later architecture-specific target (a or f suffix)",
                self.sm
            ),
            Only(t) => format!(".target {t} (only)"),
        };
        format!("PTX ISA {}.{} or later and {t}", self.ptx.0, self.ptx.1)
    }
}

/// The first gate refusing the instruction `op` with qualifiers `mods` under `.version`
/// `version` and `.target` `target` ([`GATES`]); `None` when every row that applies allows it.
pub fn refusing_gate(
    op: &str,
    mods: &[&str],
    version: (u32, u32),
    target: &str,
) -> Option<&'static Gate> {
    GATES.iter().find(|g| {
        g.op == op && g.when.iter().all(|w| mods.contains(w)) && !g.allows(version, target)
    })
}

/// The table's row of an [`Instruction`] (the warp shared-memory instructions).
pub fn row_of(ins: Instruction) -> &'static InstrRow {
    let class = match ins {
        Instruction::Ld(_) => SassClass::Lds,
        Instruction::St(_) => SassClass::Sts,
        Instruction::Ldmatrix { .. } => SassClass::Ldsm,
        Instruction::Stmatrix { .. } => SassClass::Stsm,
        Instruction::CpAsync(_) => SassClass::Ldgsts,
    };
    class_row(class)
}

/// The first table row of a SASS class.
pub fn class_row(class: SassClass) -> &'static InstrRow {
    TABLE.iter().find(|r| r.sass == class).unwrap_or(&TABLE[0])
}

/// The SASS mnemonic of a `wgmma.mma_async` form: `HGMMA.64x{N}x16.F32` (`.BF16` appended for
/// bf16, as cuobjdump prints sm_90a: `tests/data/h200_wgmma_2026-11-30.json`),
/// `HGMMA.64x{N}x16.F16` for f16 accumulators, `HGMMA.64x{N}x8.F32.TF32`,
/// `QGMMA.64x{N}x32.{F32,F16}.{E4M3,E5M2}.{E4M3,E5M2}`, `IGMMA.64x{N}x32.{S8,U8}.{S8,U8}`
/// (`.SAT` with `.satfinite`).
pub fn wgmma_sass(k: &crate::sim::wgmma::WgmmaKind) -> String {
    use crate::sim::wgmma::WgmmaType as T;
    let up = |t: T| t.name().to_ascii_uppercase();
    let (n, kk) = (k.n, k.k());
    let acc = k.acc.name().to_ascii_uppercase();
    match k.a {
        T::F16 => format!("{}.64x{n}x{kk}.{acc}", SassClass::Hgmma),
        T::Bf16 => format!("{}.64x{n}x{kk}.{acc}.BF16", SassClass::Hgmma),
        T::Tf32 => format!("{}.64x{n}x{kk}.{acc}.TF32", SassClass::Hgmma),
        T::E4m3 | T::E5m2 => format!(
            "{}.64x{n}x{kk}.{acc}.{}.{}",
            SassClass::Qgmma,
            up(k.a),
            up(k.b)
        ),
        T::S8 | T::U8 => format!(
            "{}.64x{n}x{kk}.{}.{}{}",
            SassClass::Igmma,
            up(k.a),
            up(k.b),
            if k.satfinite { ".SAT" } else { "" }
        ),
    }
}

/// [`wgmma_sass`] of the f32-accumulating form of `dtype` inputs, N = `n`, e.g.
/// `HGMMA.64x64x16.F32` (`.BF16` appended for bf16 inputs).
pub fn wgmma_f32_sass(n: u32, dtype: crate::sim::mma::MmaDtype) -> String {
    wgmma_sass(&crate::sim::wgmma::WgmmaKind::f32_of(n, dtype))
}

/// The SASS mnemonic of a tensor bulk copy of rank `rank` (1..=5): `UTMALDG.2D` (load),
/// `UTMASTG.2D` (store), `UTMAREDG.2D` (reduce).
pub fn tma_sass(class: SassClass, rank: usize) -> String {
    format!("{class}.{rank}D")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As cuobjdump prints sm_90a (`tests/data/h200_wgmma_2026-11-30.json`).
    #[test]
    fn f32_wgmma_forms_name_their_hgmma() {
        use crate::sim::mma::MmaDtype;
        assert_eq!(wgmma_f32_sass(64, MmaDtype::F16), "HGMMA.64x64x16.F32");
        assert_eq!(
            wgmma_f32_sass(128, MmaDtype::Bf16),
            "HGMMA.64x128x16.F32.BF16"
        );
    }

    #[test]
    fn parses_every_spelling_of_the_measured_file() {
        for (s, i) in [
            ("ld.shared.u8", Instruction::Ld(AccessWidth::U8)),
            ("ld.shared.u16", Instruction::Ld(AccessWidth::U16)),
            ("ld.shared.b32", Instruction::Ld(AccessWidth::B32)),
            ("ld.shared.v2.b32", Instruction::Ld(AccessWidth::V2)),
            ("ld.shared.v4.b32", Instruction::Ld(AccessWidth::V4)),
            ("st.shared.u16", Instruction::St(AccessWidth::U16)),
            (
                "ldmatrix.x1",
                Instruction::Ldmatrix {
                    num: MatrixCount::X1,
                    trans: false,
                },
            ),
            ("ldmatrix.x4.trans", Instruction::LDSM_X4_T),
            (
                "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
                Instruction::LDSM_X4_T,
            ),
        ] {
            assert_eq!(Instruction::parse(s).unwrap(), i, "{s}");
        }
        // stmatrix and cp.async (sm_90 / sm_80), with their SASS.
        for (s, sass) in [
            ("stmatrix.x4.trans", "STSM.16.MT88.4"),
            ("stmatrix.sync.aligned.m8n8.x2.shared.b16", "STSM.16.M88.2"),
            ("cp.async.ca.shared.global.4", "LDGSTS.E"),
            ("cp.async.ca.shared::cta.global.8", "LDGSTS.E.64"),
            ("cp.async.cg.shared.global.16", "LDGSTS.E.BYPASS.128"),
        ] {
            assert_eq!(Instruction::parse(s).unwrap().sass(), sass, "{s}");
        }
        let st = Instruction::parse("stmatrix.x2").unwrap();
        assert_eq!(
            (st.is_store(), st.address_lanes(), st.regs_per_lane()),
            (true, 0xffff, 2)
        );
        let cp = Instruction::parse("cp.async.ca.shared.global.8").unwrap();
        assert_eq!(
            (cp.is_store(), cp.bytes_per_address(), cp.regs_per_lane()),
            (true, 8, 2)
        );
        // Display round-trips.
        for s in [
            "ld.shared.v4.b32",
            "st.shared.u8",
            "ldmatrix.x2.trans",
            "stmatrix.x1",
            "cp.async.cg.shared.global.16",
        ] {
            assert_eq!(Instruction::parse(s).unwrap().to_string(), s);
        }
    }

    /// Issue #16, kind 5: `ldmatrix.x2.x4` was read as x4, `.trans.trans` as `.trans`.
    #[test]
    fn rejects_repeated_or_misordered_qualifiers() {
        for (s, why) in [
            ("ldmatrix.x2.x4", "two matrix counts '.x2' and '.x4'"),
            ("ldmatrix.x4.x4", "two matrix counts"),
            ("ldmatrix.x4.trans.trans", "'.trans' given twice"),
            ("ldmatrix.trans.x4", "'.x4' after '.trans'"),
            (
                "ldmatrix.sync.sync.aligned.m8n8.x4.shared.b16",
                "'.sync' given twice",
            ),
            (
                "ldmatrix.x4.shared.shared::cta",
                "'.shared::cta' given twice",
            ),
            ("ldmatrix.trans", "no matrix count"),
            ("ldmatrix.sync.aligned.m8n8.shared.b16", "no matrix count"),
        ] {
            match Instruction::parse(s) {
                Err(e @ SimError::BadInstruction { .. }) => {
                    let m = e.to_string();
                    assert!(m.contains(&format!("'{s}'")) && m.contains(why), "{m}");
                    assert!(m.contains("allowed: ld.shared."), "{m}");
                }
                other => panic!("{s}: {other:?}"),
            }
        }
        assert_eq!(
            Instruction::parse("ldmatrix.sync.aligned.m8n8.x2.shared::cta.b16").unwrap(),
            Instruction::Ldmatrix {
                num: MatrixCount::X2,
                trans: false
            }
        );
    }

    /// The full PTX spellings (PTX ISA: `ldmatrix.sync.aligned.shape.num{.trans}{.ss}.type`,
    /// the same for `stmatrix`); other instructions keep their short name.
    #[test]
    fn full_ptx_names() {
        let st = Instruction::Stmatrix {
            num: MatrixCount::X4,
            trans: true,
        };
        assert_eq!(
            st.full_ptx(),
            "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"
        );
        let ld = Instruction::Ldmatrix {
            num: MatrixCount::X1,
            trans: false,
        };
        assert_eq!(ld.full_ptx(), "ldmatrix.sync.aligned.m8n8.x1.shared.b16");
        assert_eq!(
            Instruction::Ld(AccessWidth::V4).full_ptx(),
            "ld.shared.v4.b32"
        );
    }

    /// Byte counts to widths (the `ld.shared` widths: u8 1, u16 2, b32 4, v2.b32 8, v4.b32 16)
    /// and ldmatrix's `.x1/.x2/.x4` from 1, 2, 4; anything else is `None`.
    #[test]
    fn widths_and_matrix_counts_from_numbers() {
        for (n, w) in [
            (1, AccessWidth::U8),
            (2, AccessWidth::U16),
            (4, AccessWidth::B32),
            (8, AccessWidth::V2),
            (16, AccessWidth::V4),
        ] {
            assert_eq!(AccessWidth::from_bytes(n), Some(w), "{n}");
        }
        assert_eq!(AccessWidth::from_bytes(3), None);
        for (n, m) in [
            (1, MatrixCount::X1),
            (2, MatrixCount::X2),
            (4, MatrixCount::X4),
        ] {
            assert_eq!(MatrixCount::from_count(n), Some(m), "{n}");
            assert_eq!(m.count(), n as usize);
        }
        assert_eq!(MatrixCount::from_count(3), None);
    }

    #[test]
    fn rejects_unknown_names_listing_allowed() {
        for s in [
            "ld.global.b32",
            "ldmatrix.x3",
            "ld.shared.v8.b32",
            "ldmatrix",
            "stmatrix.x8",
            "cp.async.cg.shared.global.4",
            "cp.async.ca.shared.global.2",
            "cp.async.ca.global.shared.4",
            "",
        ] {
            let e = Instruction::parse(s).unwrap_err().to_string();
            assert!(
                e.contains(&format!("'{s}'")) && e.contains("ldmatrix.{x1,x2,x4}"),
                "{e}"
            );
        }
    }
}
