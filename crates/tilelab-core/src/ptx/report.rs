//! What one simulated CTA did, per PTX line and in total, in Nsight Compute's terms; the
//! wire format of `tilelab ptx --json`.
//!
//! ```json
//! {"kernel": "tl_matmul", "cta": [0,0,0], "block": [64,1,1],
//!  "totals": {"shared_ld_wavefronts": 192, "shared_st_wavefronts": 16,
//!             "shared_ld_bank_conflicts": 0, "shared_st_bank_conflicts": 0,
//!             "sass": {"LDS": 0, "STS": 0, "LDSM": 48, "STSM": 2, "HMMA": 64, "LDGSTS": 64},
//!             "ldgsts_wavefronts": 256, "atoms": 0, "warp_instructions": 4321,
//!             "smem_bytes": 8192, "smem_touched": 8192},
//!  "lines": [{"line": 181, "ptx": "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {…}, [%r85];",
//!             "sass": "LDSM", "executions": 16, "wavefronts": 64, "ideal": 64, "bank_conflicts": 0}]}
//! ```
//!
//! Totals mean the per-CTA counters: `shared_ld_wavefronts` =
//! `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum` (LDS and LDSM), `shared_st_wavefronts`
//! = `…_op_st.sum` (STS and STSM), `shared_{ld,st}_bank_conflicts` =
//! `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum`, `sass.LDS`/`STS` =
//! `smsp__inst_executed_op_shared_{ld,st}.sum`, `LDSM` = `smsp__inst_executed_op_ldsm.sum`,
//! `HMMA` = `smsp__inst_executed_pipe_tensor_op_hmma.sum`, `LDGSTS` =
//! `sm__sass_inst_executed_op_ldgsts.sum`. `STSM` has no instruction counter of its own on sm_90
//! (GPU-NOTES). The shared side of `cp.async` (`ldgsts_wavefronts`) is kept out of the store
//! totals: whether ncu books it under `op_st` is for the fixtures' measurements to decide.
//! One PTX instruction is one SASS instruction of its class (an `ld.shared.v4.b32` one
//! `LDS.128`, an `mma.sync.aligned.m16n8k16` one `HMMA.16816.F32`, measured by `tilelab verify`);
//! `lines` holds every line with a shared-memory, tensor-core or atomic instruction, in source
//! order, even where it never ran.

use serde::Serialize;
use thiserror::Error;

use super::decode::{self, DecodeError, Op, Program, Space};
use super::engine::{self, Launch, Observer, RunError, RunResult};
use super::parse::{self, ParseError};

/// Any error of `tilelab ptx`'s engine.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PtxError {
    /// The text does not parse.
    #[error("{0}")]
    Parse(#[from] ParseError),
    /// An instruction cannot be decoded (unsupported, undeclared register, …).
    #[error("{0}")]
    Decode(#[from] DecodeError),
    /// `--kernel` names no kernel, or the file has several and none was named, or none.
    #[error("{0}")]
    Kernel(String),
    /// The run failed.
    #[error("{0}")]
    Run(#[from] RunError),
}

/// SASS instruction classes counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Class {
    /// `ld.shared` (LDS, LDS.64, LDS.128, …).
    Lds,
    /// `st.shared`.
    Sts,
    /// `ldmatrix`.
    Ldsm,
    /// `stmatrix`.
    Stsm,
    /// `mma.sync` (HMMA).
    Hmma,
    /// `cp.async` (LDGSTS).
    Ldgsts,
    /// `atom/red.shared` (ATOMS).
    Atoms,
    /// `wgmma.mma_async` (HGMMA, QGMMA, IGMMA by input type).
    Gmma,
    /// The bulk copies (UTMALDG, UTMASTG, UTMAREDG, UBLKCP, UBLKRED by form).
    Tma,
}

use crate::sim::instr::SassClass;

impl Class {
    /// The SASS mnemonic's class name ([`SassClass::name`]).
    pub fn name(self) -> &'static str {
        match self {
            Class::Lds => SassClass::Lds.name(),
            Class::Sts => SassClass::Sts.name(),
            Class::Ldsm => SassClass::Ldsm.name(),
            Class::Stsm => SassClass::Stsm.name(),
            Class::Hmma => SassClass::Hmma.name(),
            Class::Ldgsts => SassClass::Ldgsts.name(),
            // Not a row of the instruction table (`sim::instr`): the shared atomics have no
            // SassClass yet.
            Class::Atoms => "ATOMS",
            Class::Gmma => SassClass::Hgmma.name(),
            Class::Tma => SassClass::Utmaldg.name(),
        }
    }
}

/// The SASS class of one instruction as cuobjdump spells it: [`Class::name`], except for the
/// Hopper families, whose class follows the form (`QGMMA` for fp8 inputs, `UTMASTG` for a
/// tensor store, `UBLKCP` for a copy without a map; [`crate::sim::instr::SassClass`]).
pub fn sass_name(op: &Op) -> Option<&'static str> {
    use crate::sim::instr::SassClass as S;
    use crate::sim::wgmma::WgmmaType as T;
    Some(match op {
        Op::Wgmma { kind, .. } => match kind.a {
            T::E4m3 | T::E5m2 => S::Qgmma.name(),
            T::S8 | T::U8 => S::Igmma.name(),
            _ => S::Hgmma.name(),
        },
        Op::Bulk { form, .. } => tma_class(*form).name(),
        o => class_of(o)?.name(),
    })
}

/// The SASS class of a bulk copy form.
fn tma_class(form: decode::BulkForm) -> crate::sim::instr::SassClass {
    use crate::sim::instr::SassClass as S;
    use decode::BulkForm as F;
    match form {
        F::TensorLoad { .. } => S::Utmaldg,
        F::TensorStore { .. } => S::Utmastg,
        F::TensorReduce { .. } => S::Utmaredg,
        F::CopyToShared | F::CopyToGlobal => S::Ublkcp,
        F::ReduceToGlobal { .. } => S::Ublkred,
    }
}

/// The class of a decoded instruction, `None` for instructions that are not counted.
/// Generic loads and stores are classed where they run: shared addresses as LDS/STS is the
/// decoder's choice for `ld.shared`/`st.shared` only; generic ones count as not shared.
pub fn class_of(op: &Op) -> Option<Class> {
    Some(match op {
        Op::Ld {
            space: Space::Shared,
            ..
        } => Class::Lds,
        Op::St {
            space: Space::Shared,
            ..
        } => Class::Sts,
        Op::Ldmatrix { .. } => Class::Ldsm,
        Op::Stmatrix { .. } => Class::Stsm,
        Op::Mma { .. } => Class::Hmma,
        Op::CpAsync { .. } => Class::Ldgsts,
        Op::Atom {
            space: Space::Shared,
            ..
        } => Class::Atoms,
        Op::Wgmma { .. } => Class::Gmma,
        Op::Bulk { .. } => Class::Tma,
        _ => return None,
    })
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// SASS instruction counts per class (warp-level executions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[allow(non_snake_case)]
pub struct Sass {
    /// `smsp__inst_executed_op_shared_ld_pred_on_any.sum`: executions with a lane's guard on
    /// (ptxas adds predicated-off `LDS` beside `cp.async` that no PTX line asks for, which the
    /// plain `…op_shared_ld.sum` also counts; `tests/data/ptx/README.md`).
    pub LDS: u64,
    /// `smsp__inst_executed_op_shared_st_pred_on_any.sum`.
    pub STS: u64,
    /// `smsp__inst_executed_op_ldsm.sum`.
    pub LDSM: u64,
    /// `smsp__inst_executed_op_shared_stsm.sum`.
    pub STSM: u64,
    /// `smsp__inst_executed_pipe_tensor_op_hmma.sum` minus its `HFMA2.MMA` part
    /// (`…_hmma_type_hfma2.sum`: register moves ptxas runs on the tensor pipe). An FP8
    /// `mma.sync` on sm_90 is two HMMA.16816 ([`crate::sim::mma::MmaKind::sass_count`];
    /// measured: tests/data/ptx_mma/).
    pub HMMA: u64,
    /// Integer `mma.sync` (IMMA.16816/IMMA.16832): `smsp__inst_executed_pipe_tensor_op_imma.sum`,
    /// not part of `…_op_hmma` (tests/data/ptx_mma/).
    pub IMMA: u64,
    /// FP8 `mma.sync` on a target that runs it as one `QMMA.16832` (sm_89; on sm_90 it is two
    /// HMMA, [`crate::sim::mma::MmaKind::sass_on`], checked with ptxas 13.0.88 and nvdisasm). Not
    /// measured here (no sm_89 device); absent from the JSON when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub QMMA: u64,
    /// `sm__sass_inst_executed_op_ldgsts.sum`.
    pub LDGSTS: u64,
    /// `wgmma.mma_async` warp-level executions, four per warpgroup instruction (HGMMA, QGMMA
    /// and IGMMA together): `smsp__inst_executed_pipe_tensor_op_gmma.sum` (they are also in
    /// `HMMA`, the whole tensor pipe, as on the H200: tests/data/ptx_hopper/README.md).
    pub GMMA: u64,
    /// Tensor loads with a lane's guard on: UTMALDG, `smsp__sass_inst_executed_op_tma_ld.sum`
    /// (with UBLKCP loads, `smsp__inst_executed_op_tma_ld_pred_on_any.sum`).
    pub UTMALDG: u64,
    /// Tensor stores with a lane's guard on (UTMASTG; with UBLKCP stores and the reductions,
    /// `smsp__inst_executed_op_tma_st_pred_on_any.sum`).
    pub UTMASTG: u64,
    /// Bulk copies without a tensor map, either direction (UBLKCP).
    pub UBLKCP: u64,
    /// Bulk reductions, with and without a map (UTMAREDG, UBLKRED).
    pub UTMAREDG: u64,
}

/// Per-CTA totals (see the module docs for the counters).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// LDS + LDSM wavefronts.
    pub shared_ld_wavefronts: u64,
    /// STS + STSM wavefronts.
    pub shared_st_wavefronts: u64,
    /// LDS + LDSM bank conflicts (wavefronts − ideal).
    pub shared_ld_bank_conflicts: u64,
    /// STS + STSM bank conflicts.
    pub shared_st_bank_conflicts: u64,
    /// SASS counts.
    pub sass: Sass,
    /// Wavefronts of cp.async's shared side (not in the store totals); `None` when some
    /// execution falls outside what the model costs (see `ldgsts_not_modelled`).
    pub ldgsts_wavefronts: Option<u64>,
    /// cp.async executions the request model does not cost (sources spread over several
    /// 128-byte lines or repeated, `.cg`, zero-filled: `docs/wavefront-model.md`).
    pub ldgsts_not_modelled: u64,
    /// Bounds `[lowest, highest]` on ncu's SASS-attributed cp.async wavefronts
    /// (`sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum`): equal to
    /// `ldgsts_wavefronts` when every execution is modelled, the sum of the spread-source
    /// executions' `SassBounds` otherwise; `None` when a `.cg` or a zero-filled `.ca` (an active
    /// lane's `src-size` below the copy size) ran: no bounds.
    pub ldgsts_sass_wavefronts: Option<[u64; 2]>,
    /// Of `ldgsts_not_modelled`, the executions with neither a count nor bounds (`.cg`,
    /// zero-filled `.ca`); the rest have spread sources.
    pub ldgsts_unbounded: u64,
    /// Executions of `atom/red.shared` (their wavefronts are not modelled).
    pub atoms: u64,
    /// `wgmma` operand wavefronts: bytes of A (from a descriptor) and B read from shared
    /// memory / 128 per warpgroup instruction,
    /// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum` (not in the ld/st wavefronts).
    pub gmma_wavefronts: u64,
    /// Per SASS shape (`HGMMA.64x128x16.F32`, [`crate::sim::instr::wgmma_sass`]): warp-level
    /// executions (four per warpgroup instruction).
    pub gmma_shapes: std::collections::BTreeMap<String, u64>,
    /// Bulk copies to shared memory issued with a lane's guard on (UTMALDG + UBLKCP loads,
    /// warp-level): `smsp__inst_executed_op_tma_ld_pred_on_any.sum`.
    pub tma_ld: u64,
    /// Bulk copies to global memory issued with a lane's guard on:
    /// `smsp__inst_executed_op_tma_st_pred_on_any.sum`.
    pub tma_st: u64,
    /// Bytes the bulk loads move (the whole box of each tensor load, zero-filled parts too):
    /// `l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum`.
    pub tma_ld_bytes: u64,
    /// Bytes the bulk stores and reductions move:
    /// `l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum`.
    pub tma_st_bytes: u64,
    /// Stores to another CTA's shared memory (distributed shared memory: `st.shared::cluster`
    /// or a generic store to an address from `mapa`), warp-level executions:
    /// `smsp__sass_inst_executed_op_dshared_st.sum` (SASS `ST.E`; counted neither in `STS` nor
    /// in the shared wavefronts; H200, tests/data/ptx_hopper/hand_cluster_mc_wgmma.json).
    pub dshared_st: u64,
    /// Their bytes: `l1tex__t_bytes_pipe_lsu_mem_dshared_op_st.sum` (same measurement).
    pub dshared_st_bytes: u64,
    /// Loads from another CTA's shared memory, warp-level executions (not yet measured:
    /// `smsp__sass_inst_executed_op_dshared_ld.sum` by name).
    pub dshared_ld: u64,
    /// Atomics and reductions on another CTA's shared memory, warp-level executions (not yet
    /// measured: `smsp__sass_inst_executed_op_dshared_atom.sum` / `_redas` by name).
    pub dshared_atom: u64,
    /// Warp instructions executed (all PTX instructions).
    pub warp_instructions: u64,
    /// What the SASS counts come from: `"ptx"` here (one SASS instruction per PTX instruction
    /// of a class); `tilelab ptx --sass` replaces it with ptxas's version (`"ptxas 13.0.88"`)
    /// when its SASS gave the dynamic counts (`tilelab::sass`).
    pub sass_from: String,
    /// Shared memory modelled, bytes.
    pub smem_bytes: u32,
    /// One past the highest shared byte accessed.
    pub smem_touched: u32,
}

/// One PTX line's numbers.
///
/// Serialized with its keys in sorted order (its own `Serialize`, not a derived one), as a
/// `serde_json::Value` orders them: written straight to JSON it reads as through a `Value`,
/// so `tilelab ptx --json` writes the lines without building a `Value` for each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineReport {
    /// 1-based line.
    pub line: u32,
    /// The instruction text.
    pub ptx: String,
    /// Its SASS class.
    pub sass: &'static str,
    /// Warp-level executions.
    pub executions: u64,
    /// Shared-memory wavefronts (0 for HMMA, atomics and bulk copies; a `wgmma`'s are its
    /// gmma operand wavefronts, [`Totals::gmma_wavefronts`]).
    pub wavefronts: u64,
    /// Conflict-free wavefronts.
    pub ideal: u64,
    /// wavefronts − ideal.
    pub bank_conflicts: u64,
    /// Executions whose cost the model does not give (cp.async only); when non-zero the line's
    /// wavefronts count only the other executions.
    pub not_modelled: u64,
    /// cp.async lines: bounds `[lowest, highest]` on ncu's SASS-attributed wavefronts (see
    /// [`Totals::ldgsts_sass_wavefronts`]); absent for other lines and for `.cg`.
    pub sass_wavefronts: Option<[u64; 2]>,
    /// The source line the PTX line came from (the `.loc` in force, PTX ISA §11.5.2):
    /// `{"file", "line", "column"}` and `inlined_at` for inlined code; `null` without `.loc`.
    pub source: Option<super::lineinfo::SourceRef>,
}

/// `tilelab ptx`'s report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Kernel name, as the `.entry` spells it (mangled for C++).
    pub kernel: String,
    /// The kernel's name demangled ([`demangle`]; the name itself when it is not mangled).
    pub kernel_demangled: String,
    /// The simulated CTA.
    pub cta: [u32; 3],
    /// Block size.
    pub block: [u32; 3],
    /// Totals: over every CTA of the cluster (Nsight Compute's per-launch counters of a launch
    /// of one cluster).
    pub totals: Totals,
    /// The cluster's shape in CTAs (x, y, z); `[1, 1, 1]`: the one CTA `cta`.
    pub cluster: [u32; 3],
    /// Per CTA of the cluster, by cluster rank: its own totals (`totals` is their sum).
    pub ctas: Vec<CtaReport>,
    /// Lines with a counted instruction, source order (summed over the cluster's CTAs).
    pub lines: Vec<LineReport>,
    /// Every PTX line with an instruction: the warp-level executions of its instruction (the
    /// most of any when it has several), warps whose guard was false in every lane included
    /// (an issued SASS instruction's count: `tilelab::sass::dynamic`). Not in the JSON.
    #[serde(skip)]
    pub reached: std::collections::BTreeMap<u32, u64>,
    /// For a cluster of several CTAs, [`Self::reached`] of each CTA, by cluster rank (empty for
    /// one CTA). Not in the JSON.
    #[serde(skip)]
    pub cta_reached: Vec<std::collections::BTreeMap<u32, u64>>,
    /// The `tensormap.replace` and `tensormap.cp_fenceproxy` lines ([`map_lines`]): per line,
    /// `[executions with a lane's guard true, distinct shared-memory maps over them]`, summed
    /// over the cluster's CTAs. Not in the JSON.
    #[serde(skip)]
    pub map_lines: std::collections::BTreeMap<u32, [u64; 2]>,
}

impl Serialize for LineReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        // Every field named, so that a new one is not forgotten here.
        let LineReport {
            line,
            ptx,
            sass,
            executions,
            wavefronts,
            ideal,
            bank_conflicts,
            not_modelled,
            sass_wavefronts,
            source,
        } = self;
        let n = 9 + usize::from(sass_wavefronts.is_some());
        let mut m = s.serialize_struct("LineReport", n)?;
        // The keys in byte order.
        m.serialize_field("bank_conflicts", bank_conflicts)?;
        m.serialize_field("executions", executions)?;
        m.serialize_field("ideal", ideal)?;
        m.serialize_field("line", line)?;
        m.serialize_field("not_modelled", not_modelled)?;
        m.serialize_field("ptx", ptx)?;
        m.serialize_field("sass", sass)?;
        match sass_wavefronts {
            Some(w) => m.serialize_field("sass_wavefronts", w)?,
            None => m.skip_field("sass_wavefronts")?,
        }
        match source {
            // Through a `Value`: its keys sorted too.
            Some(r) => m.serialize_field(
                "source",
                &serde_json::to_value(r).map_err(serde::ser::Error::custom)?,
            )?,
            None => m.serialize_field("source", &None::<()>)?,
        }
        m.serialize_field("wavefronts", wavefronts)?;
        m.end()
    }
}

/// One CTA's row of a cluster's report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CtaReport {
    /// Its `%ctaid`.
    pub cta: [u32; 3],
    /// Its `%cluster_ctarank`.
    pub rank: u32,
    /// Its totals.
    pub totals: Totals,
}

/// The most characters [`demangle`] writes: a name whose demangling is longer is shown mangled.
/// Real CUTLASS names demangle to a few KiB; a crafted one whose substitutions refer to each
/// other doubles at every level (16 levels: 1.8 MB, 24: more than a minute), so the demangler
/// stops at this bound instead.
pub const MAX_DEMANGLED: usize = 64 * 1024;

/// A kernel's name as people read it: an Itanium C++ ABI name (`_Z…`, what nvcc gives
/// `__global__` functions: `_Z11gemm_kernelILi128EEvPKfPf`) demangled by `cpp_demangle`
/// (`void gemm_kernel<128>(float const*, float*)`, as c++filt prints it); any other name, one
/// that does not demangle, or one whose demangling passes [`MAX_DEMANGLED`] characters, as it is.
pub fn demangle(name: &str) -> String {
    /// A `String` that refuses to grow past [`MAX_DEMANGLED`].
    struct Capped(String);
    impl std::fmt::Write for Capped {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            if self.0.len() + s.len() > MAX_DEMANGLED {
                return Err(std::fmt::Error);
            }
            self.0.push_str(s);
            Ok(())
        }
    }
    if !name.starts_with("_Z") {
        return name.to_string();
    }
    let Ok(sym) = cpp_demangle::Symbol::new(name) else {
        return name.to_string();
    };
    let mut out = Capped(String::new());
    match sym.structured_demangle(&mut out, &cpp_demangle::DemangleOptions::default()) {
        Ok(()) => out.0,
        Err(_) => name.to_string(),
    }
}

/// The kernels of a module, demangled, for messages ([`crate::text::list`]: only the names
/// shown are demangled, the rest counted).
fn kernel_list<'a>(ks: impl IntoIterator<Item = &'a parse::Kernel>) -> String {
    crate::text::list(ks.into_iter().enumerate().map(|(i, k)| {
        if i < crate::text::LIST_MAX {
            crate::text::value(&demangle(&k.name)).into_owned()
        } else {
            String::new()
        }
    }))
}

/// The `.entry` of `m` that `--kernel` `want` names: the exact name (mangled or demangled),
/// `#N` (the N-th `.entry` in the file, counted from 0), or else a piece of exactly one
/// kernel's name (mangled or demangled, case-sensitive).
///
/// # Errors
/// [`PtxError::Kernel`]: no kernel matches (listing them), `#N` past the last one, or several
/// match (listing those, demangled).
pub fn find_kernel<'m>(m: &'m parse::Module, want: &str) -> Result<&'m parse::Kernel, PtxError> {
    let w = crate::text::escape(want);
    let ks = &m.kernels;
    if ks.is_empty() {
        return Err(PtxError::Kernel(format!(
            "no kernel '{w}': the file has no .entry"
        )));
    }
    if let Some(k) = ks.iter().find(|k| k.name == want) {
        return Ok(k);
    }
    if let Some(n) = want.strip_prefix('#') {
        return n
            .parse::<usize>()
            .ok()
            .and_then(|i| ks.get(i))
            .ok_or_else(|| {
                PtxError::Kernel(format!(
                    "--kernel '{w}': the file has {} .entry kernel{} (#0..=#{}, in file order): {}",
                    crate::text::group(ks.len() as u64),
                    if ks.len() == 1 { "" } else { "s" },
                    ks.len() - 1,
                    kernel_list(ks)
                ))
            });
    }
    let names: Vec<String> = ks.iter().map(|k| demangle(&k.name)).collect();
    if let Some(i) = names.iter().position(|d| d == want) {
        return Ok(&ks[i]);
    }
    let hits: Vec<&parse::Kernel> = ks
        .iter()
        .zip(&names)
        .filter(|(k, d)| k.name.contains(want) || d.contains(want))
        .map(|(k, _)| k)
        .collect();
    match hits.as_slice() {
        [k] => Ok(k),
        [] => Err(PtxError::Kernel(format!(
            "no kernel '{w}' in the file; kernels: {}",
            kernel_list(ks)
        ))),
        _ => Err(PtxError::Kernel(format!(
            "--kernel '{w}' is part of {} kernels' names; give more of one, its whole name or #N (N from 0 in file order): {}",
            crate::text::group(hits.len() as u64),
            kernel_list(hits.iter().copied())
        ))),
    }
}

/// Parses `src`, picks `kernel` ([`find_kernel`]; or the only one) and decodes it.
///
/// # Errors
/// A text that does not begin with `.version` (not a PTX module, [`parse::check_module_start`]);
/// parse and decode errors; an unknown or ambiguous kernel (listing the kernels), several
/// kernels and none named, or no kernel.
pub fn load(src: &str, kernel: Option<&str>) -> Result<Program, PtxError> {
    parse::check_module_start(src)?;
    let mut m = parse::parse(src)?;
    let k = match kernel {
        Some(n) => find_kernel(&m, n)?,
        None => match m.kernels.as_slice() {
            [k] => k,
            [] => return Err(PtxError::Kernel("the file has no .entry kernel".into())),
            _ => {
                return Err(PtxError::Kernel(format!(
                    "the file has {} kernels; choose one with --kernel: {} (a name, a part of one or #N from 0)",
                    crate::text::group(m.kernels.len() as u64),
                    kernel_list(&m.kernels)
                )));
            }
        },
    };
    // The kernel out of the module (decoding reads the module's variables, files and
    // target, not its kernels), so that its texts move into the program.
    let at = m
        .kernels
        .iter()
        .position(|x| std::ptr::eq(x, k))
        .unwrap_or(0);
    let k = m.kernels.swap_remove(at);
    Ok(decode::decode_owned(&m, k)?)
}

/// Parses, decodes and runs one CTA; the report.
///
/// # Errors
/// Any [`PtxError`].
pub fn simulate(src: &str, kernel: Option<&str>, launch: &Launch) -> Result<Report, PtxError> {
    let prog = load(src, kernel)?;
    simulate_program(&prog, launch, None)
}

/// Runs a decoded program, optionally tracing one warp. Without an observer only counts are
/// kept, so the run skips the tensor-core results where [`super::dataflow`] proves that
/// changes no count ([`engine::run_counts`]); an observer sees every value.
///
/// # Errors
/// [`PtxError::Run`].
pub fn simulate_program(
    prog: &Program,
    launch: &Launch,
    observer: Option<(u32, &mut dyn Observer)>,
) -> Result<Report, PtxError> {
    let r = match observer {
        None => engine::run_counts(prog, launch)?,
        Some(o) => engine::run(prog, launch, Some(o))?,
    };
    Ok(build(prog, launch, &r))
}

/// `acc` plus one instruction's bounds on ncu's SASS-attributed cp.async wavefronts; `None`
/// (no bounds) from the first execution without any (`.cg`, zero-filled) on.
fn add_sass_bounds(acc: Option<[u64; 2]>, s: &engine::InstStats) -> Option<[u64; 2]> {
    acc.filter(|_| s.sass_unbounded == 0)
        .map(|[lo, hi]| [lo + s.sass_bounds[0], hi + s.sass_bounds[1]])
}

/// Sums a run per line and in total, and each CTA of a cluster in total.
pub fn build(prog: &Program, launch: &Launch, r: &RunResult) -> Report {
    let (mut t, lines) = tally(prog, &r.stats, true);
    t.warp_instructions = r.instructions;
    t.smem_bytes = r.smem_bytes;
    t.smem_touched = r.smem_touched;
    let ctas = r
        .ctas
        .iter()
        .map(|c| {
            let (mut ct, _) = tally(prog, &c.stats, false);
            ct.warp_instructions = c.instructions;
            ct.smem_bytes = r.smem_bytes;
            ct.smem_touched = c.smem_touched;
            CtaReport {
                cta: c.cta,
                rank: c.rank,
                totals: ct,
            }
        })
        .collect();
    Report {
        kernel: prog.name.clone(),
        kernel_demangled: demangle(&prog.name),
        cta: launch.cta,
        block: launch.block,
        totals: t,
        cluster: r.cluster,
        ctas,
        lines,
        reached: reached(prog, &r.stats),
        cta_reached: if r.ctas.len() > 1 {
            r.ctas.iter().map(|c| reached(prog, &c.stats)).collect()
        } else {
            Vec::new()
        },
        map_lines: map_lines(prog, &r.stats),
    }
}

/// The totals of one CTA's per-instruction counts `stats` (but `warp_instructions`,
/// `smem_bytes` and `smem_touched`, which the run knows), without the per-line rows.
pub fn cta_totals(prog: &Program, stats: &[engine::InstStats]) -> Totals {
    tally(prog, stats, false).0
}

/// The totals (but the run-wide `warp_instructions`, `smem_bytes`, `smem_touched`) and, when
/// `with_lines` (else none), the per-line rows of per-instruction counts `stats`.
fn tally(
    prog: &Program,
    stats: &[engine::InstStats],
    with_lines: bool,
) -> (Totals, Vec<LineReport>) {
    let mut t = Totals {
        sass_from: "ptx".into(),
        ldgsts_wavefronts: Some(0),
        ldgsts_sass_wavefronts: Some([0, 0]),
        ..Totals::default()
    };
    let mut lines: Vec<LineReport> = Vec::new();
    for (i, inst) in prog.insts.iter().enumerate() {
        let s = stats[i];
        match inst.op {
            Op::St { .. } => {
                t.dshared_st += s.dshared;
                t.dshared_st_bytes += s.dshared_bytes;
            }
            Op::Ld { .. } => t.dshared_ld += s.dshared,
            Op::Atom { .. } => t.dshared_atom += s.dshared,
            _ => {}
        }
        let Some(class) = class_of(&inst.op) else {
            // A generic ld/st whose lanes reached shared memory: its wavefronts and conflicts
            // are the shared pipe's (H200: `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}`
            // count them), its executions are not LDS/STS (`smsp__inst_executed_op_generic_*`;
            // fixture ldsm_generic, tests/data/ptx_mma/).
            let conflicts = s.wavefronts - s.ideal.min(s.wavefronts);
            match inst.op {
                Op::Ld { .. } => {
                    t.shared_ld_wavefronts += s.wavefronts;
                    t.shared_ld_bank_conflicts += conflicts;
                }
                Op::St { .. } => {
                    t.shared_st_wavefronts += s.wavefronts;
                    t.shared_st_bank_conflicts += conflicts;
                }
                _ => {}
            }
            continue;
        };
        let conflicts = s.wavefronts - s.ideal.min(s.wavefronts);
        match class {
            Class::Lds | Class::Ldsm => {
                t.shared_ld_wavefronts += s.wavefronts;
                t.shared_ld_bank_conflicts += conflicts;
            }
            Class::Sts | Class::Stsm => {
                t.shared_st_wavefronts += s.wavefronts;
                t.shared_st_bank_conflicts += conflicts;
            }
            Class::Ldgsts => {
                t.ldgsts_not_modelled += s.not_modelled;
                t.ldgsts_unbounded += s.sass_unbounded;
                t.ldgsts_wavefronts = t
                    .ldgsts_wavefronts
                    .filter(|_| s.not_modelled == 0)
                    .map(|w| w + s.wavefronts);
                t.ldgsts_sass_wavefronts = add_sass_bounds(t.ldgsts_sass_wavefronts, &s);
            }
            Class::Gmma => t.gmma_wavefronts += s.gmma_wavefronts,
            Class::Tma => {
                if let Op::Bulk { form, .. } = &inst.op {
                    if form.is_store() {
                        t.tma_st += s.pred_on;
                        t.tma_st_bytes += s.tma_bytes;
                    } else {
                        t.tma_ld += s.pred_on;
                        t.tma_ld_bytes += s.tma_bytes;
                    }
                    use crate::sim::instr::SassClass as S;
                    match tma_class(*form) {
                        S::Utmaldg => t.sass.UTMALDG += s.pred_on,
                        S::Utmastg => t.sass.UTMASTG += s.pred_on,
                        S::Ublkcp => t.sass.UBLKCP += s.pred_on,
                        _ => t.sass.UTMAREDG += s.pred_on,
                    }
                }
            }
            Class::Hmma | Class::Atoms => {}
        }
        match class {
            Class::Lds => t.sass.LDS += s.pred_on,
            Class::Sts => t.sass.STS += s.pred_on,
            Class::Ldsm => t.sass.LDSM += s.executions,
            Class::Stsm => t.sass.STSM += s.executions,
            Class::Hmma => match &inst.op {
                Op::Mma { kind, .. } if kind.dtype.is_int() => t.sass.IMMA += s.executions,
                Op::Mma { kind, .. } if kind.sass_on(prog.target_sm).starts_with("QMMA") => {
                    t.sass.QMMA += s.executions
                }
                Op::Mma { kind, .. } => {
                    t.sass.HMMA += s.executions * u64::from(kind.sass_count(prog.target_sm))
                }
                _ => t.sass.HMMA += s.executions,
            },
            Class::Ldgsts => t.sass.LDGSTS += s.executions,
            Class::Atoms => t.atoms += s.executions,
            Class::Gmma => {
                t.sass.HMMA += s.executions;
                t.sass.GMMA += s.executions;
                if let Op::Wgmma { kind, .. } = &inst.op
                    && s.executions > 0
                {
                    *t.gmma_shapes
                        .entry(crate::sim::instr::wgmma_sass(kind))
                        .or_default() += s.executions;
                }
            }
            Class::Tma => {}
        }
        if !with_lines {
            continue;
        }
        let sass = sass_name(&inst.op).unwrap_or(class.name());
        // A wgmma's operand wavefronts: no bank conflicts (none measured, any layout).
        let (wavefronts, ideal) = match class {
            Class::Gmma => (s.gmma_wavefronts, s.gmma_wavefronts),
            _ => (s.wavefronts, s.ideal),
        };
        match lines.last_mut() {
            Some(l) if l.line == inst.line && l.sass == sass => {
                l.executions += s.executions;
                l.wavefronts += wavefronts;
                l.ideal += ideal;
                l.bank_conflicts += conflicts;
                l.not_modelled += s.not_modelled;
                l.sass_wavefronts = add_sass_bounds(l.sass_wavefronts, &s);
            }
            _ => lines.push(LineReport {
                line: inst.line,
                ptx: prog.texts[i].clone(),
                sass,
                executions: s.executions,
                wavefronts,
                ideal,
                bank_conflicts: conflicts,
                not_modelled: s.not_modelled,
                sass_wavefronts: if class == Class::Ldgsts {
                    add_sass_bounds(Some([0, 0]), &s)
                } else {
                    None
                },
                source: prog.sources.get(&inst.line).cloned(),
            }),
        }
    }
    (t, lines)
}

/// One source line's PTX lines summed: a row of `tilelab ptx --by-source` (JSON field names as
/// here). Counts are warp-level executions and wavefronts, as in [`LineReport`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceGroup {
    /// The source file (`.file`'s name); `null` for the PTX lines no `.loc` reaches.
    #[serde(serialize_with = "opt_str")]
    pub file: Option<std::sync::Arc<str>>,
    /// The 1-based source line (0 with `file` null).
    pub line: u32,
    /// The counted PTX lines of this source line, ascending.
    pub ptx_lines: Vec<u32>,
    /// Warp-level executions of those lines' instructions, summed.
    pub executions: u64,
    /// Shared-memory wavefronts, summed.
    pub wavefronts: u64,
    /// Conflict-free wavefronts, summed.
    pub ideal: u64,
    /// Bank conflicts (wavefronts − ideal), summed.
    pub bank_conflicts: u64,
    /// Executions the model does not cost (cp.async), summed.
    pub not_modelled: u64,
    /// Executions per SASS class of the PTX lines (`LDSM`, `HMMA`, …: PTX-level, one SASS
    /// instruction per PTX instruction of a class).
    pub classes: std::collections::BTreeMap<&'static str, u64>,
}

fn opt_str<S: serde::Serializer>(f: &Option<std::sync::Arc<str>>, s: S) -> Result<S::Ok, S::Error> {
    match f {
        Some(f) => s.serialize_str(f),
        None => s.serialize_none(),
    }
}

/// The report's lines summed per source line (file and line; columns merged), in the order the
/// source lines first appear in the PTX; the lines without `.loc` last, as one group with no
/// file. Several PTX lines of one source line (Triton emits one `.loc` per sub-expression)
/// become one row.
pub fn by_source(r: &Report) -> Vec<SourceGroup> {
    let mut groups: Vec<SourceGroup> = Vec::new();
    let mut index: std::collections::HashMap<(Option<std::sync::Arc<str>>, u32), usize> =
        std::collections::HashMap::new();
    let mut lines: Vec<&LineReport> = r.lines.iter().collect();
    // Lines without a source sort after every line with one.
    lines.sort_by_key(|l| (l.source.is_none(), l.line));
    for l in lines {
        let key = match &l.source {
            Some(s) => (Some(s.file.clone()), s.line),
            None => (None, 0),
        };
        let at = *index.entry(key.clone()).or_insert_with(|| {
            groups.push(SourceGroup {
                file: key.0.clone(),
                line: key.1,
                ptx_lines: Vec::new(),
                executions: 0,
                wavefronts: 0,
                ideal: 0,
                bank_conflicts: 0,
                not_modelled: 0,
                classes: std::collections::BTreeMap::new(),
            });
            groups.len() - 1
        });
        let g = &mut groups[at];
        if g.ptx_lines.last() != Some(&l.line) {
            g.ptx_lines.push(l.line);
        }
        g.executions += l.executions;
        g.wavefronts += l.wavefronts;
        g.ideal += l.ideal;
        g.bank_conflicts += l.bank_conflicts;
        g.not_modelled += l.not_modelled;
        *g.classes.entry(l.sass).or_default() += l.executions;
    }
    groups
}

/// Per PTX line, the most warp-level executions of any of its instructions (per-instruction
/// counts `stats`, one run's or one CTA's).
pub fn reached(
    prog: &Program,
    stats: &[engine::InstStats],
) -> std::collections::BTreeMap<u32, u64> {
    // Sorted by line (a kernel's instructions mostly are already), each line's most kept,
    // then built at once: no search per instruction.
    let mut v: Vec<(u32, u64)> = prog
        .insts
        .iter()
        .zip(stats)
        .map(|(inst, s)| (inst.line, s.executions))
        .collect();
    v.sort_by_key(|&(line, _)| line);
    v.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.1 = kept.1.max(later.1);
        }
        same
    });
    v.into_iter().collect()
}

/// Every `tensormap.replace` and `tensormap.cp_fenceproxy` line of `prog` that ran with a
/// lane's guard true: `[pred_on, maps]` from `stats` ([`engine::InstStats::maps`]). The PTX
/// model gives these lines no shared-memory traffic; the SASS view costs the `LDS`/`STS` ptxas
/// expands them into from these (`tilelab::sass::report::Expansion`).
pub fn map_lines(
    prog: &Program,
    stats: &[engine::InstStats],
) -> std::collections::BTreeMap<u32, [u64; 2]> {
    let mut m = std::collections::BTreeMap::new();
    for (inst, s) in prog.insts.iter().zip(stats) {
        if matches!(
            inst.op,
            super::decode::Op::TensorMapReplace { .. } | super::decode::Op::TensorMapCopy { .. }
        ) && s.pred_on > 0
        {
            let e: &mut [u64; 2] = m.entry(inst.line).or_default();
            e[0] += s.pred_on;
            e[1] += s.maps;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A line's JSON written straight (sorted keys, `tilelab ptx --json`) is its JSON through
    /// a `serde_json::Value`, and that is the derived serialization's (every field, none
    /// twice), with and without `sass_wavefronts` and `source` (an inlined one too).
    #[test]
    fn line_json_written_straight_is_the_value_json() {
        use super::super::lineinfo::SourceRef;
        #[derive(Serialize)]
        struct Derived<'a> {
            line: u32,
            ptx: &'a str,
            sass: &'static str,
            executions: u64,
            wavefronts: u64,
            ideal: u64,
            bank_conflicts: u64,
            not_modelled: u64,
            #[serde(skip_serializing_if = "Option::is_none")]
            sass_wavefronts: Option<[u64; 2]>,
            source: &'a Option<SourceRef>,
        }
        let at = SourceRef {
            file: "/a/k\"b.py".into(),
            line: 7,
            column: 3,
            inlined_at: None,
        };
        let inlined = SourceRef {
            inlined_at: Some(Box::new(at.clone())),
            ..at.clone()
        };
        for (w, src) in [
            (None, None),
            (Some([1, 9]), None),
            (None, Some(at.clone())),
            (Some([0, 0]), Some(inlined)),
        ] {
            let l = LineReport {
                line: 12,
                ptx: "ld.shared.v4.b32 {%r1, %r2}, [%r3+16] \"\u{1}".into(),
                sass: "LDS",
                executions: 4,
                wavefronts: 1 << 40,
                ideal: 3,
                bank_conflicts: 2,
                not_modelled: 1,
                sass_wavefronts: w,
                source: src,
            };
            let d = Derived {
                line: l.line,
                ptx: &l.ptx,
                sass: l.sass,
                executions: l.executions,
                wavefronts: l.wavefronts,
                ideal: l.ideal,
                bank_conflicts: l.bank_conflicts,
                not_modelled: l.not_modelled,
                sass_wavefronts: l.sass_wavefronts,
                source: &l.source,
            };
            let v = serde_json::to_value(&l).unwrap();
            assert_eq!(v, serde_json::to_value(&d).unwrap());
            assert_eq!(
                serde_json::to_string_pretty(&l).unwrap(),
                serde_json::to_string_pretty(&v).unwrap()
            );
            assert_eq!(
                serde_json::to_string(&[&l, &l]).unwrap(),
                serde_json::to_string(&v)
                    .map(|s| format!("[{s},{s}]"))
                    .unwrap()
            );
        }
    }

    const TEXTS: [&str; 4] = [
        include_str!("../../../../tests/data/ptx_hand/divergence.ptx"),
        include_str!("../../../../tests/data/ptx_hand/ldmatrix_mma.ptx"),
        include_str!("../../../../tests/data/ptx_hand/transpose_store.ptx"),
        include_str!("../../../../tests/data/ptx_hand/triton_matmul_2w.ptx"),
    ];

    fn launch() -> Launch {
        Launch {
            grid: [1, 1, 1],
            block: [64, 1, 1],
            cta: [0, 0, 0],
            args: (3..7).map(|i| (i.to_string(), "32".to_string())).collect(),
            tensor_maps: vec![],
            dynamic_smem: None,
            max_instructions: 20_000,
            cluster: None,
        }
    }

    /// `map_lines`: a `tensormap.replace` run by lanes 0-2 of warp 0 (lanes 0 and 1 on one map,
    /// lane 2 on another, 128 bytes on) and by no lane of warp 1: one execution with a guard on,
    /// two distinct maps; the copy of lane 0's map, one map. Lines without a lane on are absent.
    #[test]
    fn tensor_map_lines_count_the_distinct_maps_their_lanes_name() {
        let src = ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n.shared .align 128 .b8 m[1024];\nmov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 3;\nsetp.eq.u32 %p2, %r1, 2;\nselp.u32 %r2, 128, 0, %p2;\nmov.u32 %r3, m;\nadd.u32 %r4, %r3, %r2;\ncvt.u64.u32 %rd1, %r4;\n@%p1 tensormap.replace.tile.rank.shared::cta.b1024.b32 [%rd1], 1;\nsetp.eq.u32 %p3, %r1, 0;\nld.param.u64 %rd2, [p];\ncvta.to.global.u64 %rd3, %rd2;\ncvt.u64.u32 %rd4, %r3;\n@%p3 tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd3], [%rd4], 128;\n@%p2 tensormap.replace.tile.rank.shared::cta.b1024.b32 [%rd1], 2;\nret;\n}\n";
        let prog = load(src, None).unwrap();
        let l = Launch {
            args: vec![],
            ..launch()
        };
        let r = simulate_program(&prog, &l, None).unwrap();
        let line = |needle: &str| {
            src.lines()
                .position(|t| t.contains(needle))
                .map(|i| i as u32 + 1)
                .unwrap()
        };
        assert_eq!(
            r.map_lines,
            std::collections::BTreeMap::from([
                (line("[%rd1], 1;"), [1, 2]),
                (line("cp_fenceproxy"), [1, 1]),
                (line("[%rd1], 2;"), [1, 1]),
            ])
        );
        // The PTX model itself gives them no shared-memory traffic.
        assert_eq!(
            (r.totals.shared_ld_wavefronts, r.totals.shared_st_wavefronts),
            (0, 0)
        );
    }

    /// `--kernel` picks the named entry of a module with two; without it, two kernels are an
    /// error listing both, and an unknown name lists the kernels. The SASS class names are the
    /// mnemonics cuobjdump prints (LDS, STS, LDSM, STSM, HMMA, LDGSTS, ATOMS).
    #[test]
    fn kernel_choice_and_class_names() {
        let two = ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry a()\n{\nret;\n}\n.visible .entry b()\n{\nret;\n}\n";
        assert_eq!(load(two, Some("b")).unwrap().name, "b");
        assert_eq!(load(two, Some("a")).unwrap().name, "a");
        let e = load(two, None).unwrap_err().to_string();
        assert!(e.contains("2 kernels") && e.contains("a, b"), "{e}");
        let e = load(two, Some("c")).unwrap_err().to_string();
        assert!(e.contains("no kernel 'c'"), "{e}");
        let names: Vec<&str> = [
            Class::Lds,
            Class::Sts,
            Class::Ldsm,
            Class::Stsm,
            Class::Hmma,
            Class::Ldgsts,
            Class::Atoms,
        ]
        .iter()
        .map(|c| c.name())
        .collect();
        assert_eq!(
            names,
            ["LDS", "STS", "LDSM", "STSM", "HMMA", "LDGSTS", "ATOMS"]
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]
        /// Mutated PTX (bytes deleted, replaced or inserted) never panics the parser, decoder or
        /// machine; every parse or decode error names a line of the text.
        #[test]
        fn mutated_ptx_never_panics(
            which in 0usize..4,
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, prop::sample::select(
                vec!['{', '}', ';', ',', '[', ']', '%', '.', ':', '@', '!', '-', '0', 'x', '\n', ' ', '/', '*', '"', '|', '<', '>', 'r'])), 1..6),
        ) {
            let mut s: Vec<char> = TEXTS[which].chars().collect();
            for (idx, kind, c) in edits {
                if s.is_empty() { break; }
                let i = idx.index(s.len());
                match kind {
                    0 => { s.remove(i); }
                    1 => s[i] = c,
                    _ => s.insert(i, c),
                }
            }
            let text: String = s.into_iter().collect();
            let lines = text.lines().count() as u32 + 1;
            let kernel = if which == 3 { None } else { None::<&str> };
            match simulate(&text, kernel, &launch()) {
                Err(PtxError::Parse(e)) => prop_assert!(e.line >= 1 && e.line <= lines, "{e}"),
                Err(PtxError::Decode(e)) => prop_assert!(e.line >= 1 && e.line <= lines, "{e}"),
                Err(e) => prop_assert!(!e.to_string().contains('\n'), "{e}"),
                Ok(_) => {}
            }
        }
    }
}
