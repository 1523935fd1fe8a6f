//! The hook for claims about whole kernels: instruction counts of tiled GEMM and
//! FlashAttention-2, global-memory traffic of FlashAttention v1 vs v2, occupancy.
//!
//! Lessons state these claims as data (`[[model]]` in a lesson file: a kind, parameters, the
//! expected numbers from the two articles (README, Sources)). [`counts_model`] answers them with the counts
//! model (the same functions as `tilelab sim counts | traffic | occupancy`): it builds the warp
//! programs of [`crate::sim::program`] and counts them by walking their instructions
//! ([`crate::sim::counts`]), walks the loop orders of [`crate::sim::traffic`], or computes
//! [`crate::sim::occupancy`]. [`super::run::check_lesson`] compares every expected key with the
//! answer; `tilelab lessons check`, `tests/lessons.rs` and the TUI's counters pane report each
//! claim as passed or failed.
//!
//! # Parameters and keys
//! A claim's parameters are typed when the lesson loads ([`ModelQuery::from_params`]: TOML
//! integers and booleans arrive as `"64"`, `"true"`): a parameter the model does not know is a
//! load error that lists the allowed ones; so is a missing required one, a malformed number, an
//! unknown architecture or loop order. Whether the simulator accepts the tiling is decided when
//! the claim is answered. The answer holds every key below that the parameters allow, so a
//! claim may expect any subset.
//!
//! * `counts`, `program = "gemm"`: one CTA computing `C = A·Bᵀ` ([`GemmTiling`]). Params `m`,
//!   `n`, `k`; optional `warps` (1), `split` (`rows` | `cols`, `rows`), `arch` (`sm_90`). Keys,
//!   per warp: SASS mnemonics (`LDSM.16.M88.4`, `HMMA.16816.F32`, …, counted over warp 0's
//!   program), `a_loads`, `b_loads` (`ldmatrix.x4` of A and of B).
//! * `counts`, `program = "fa2-torch" | "fa2-triton"`: FlashAttention-2 forward ([`FlashTiling`],
//!   styles torch and triton). Params `d`, `bm`, `bn`, `warps`; optional `causal` (`false`),
//!   `arch` (`sm_90`), `copies` (left out or the program's number of loop-body copies: the whole
//!   kernel's SASS; `1`: one copy of the loop body), and `batch`, `heads`, `seq` (all three or
//!   none) for the dynamic counts. Keys, per warp: SASS mnemonics (`LDSM.16.M88.4`,
//!   `LDSM.16.MT88.4`, `HMMA.16816.F32`, `STS`), `loop_copies`; with `batch`, `heads`, `seq`:
//!   `exec_outside` (executions of one SASS line outside the kv loop, summed over all warps of
//!   the grid), `exec_unmasked` (of a line of the unmasked copy), `exec_mean` (mean over the
//!   program's lines), `ctas`.
//! * `traffic` ([`traffic::simulate`]): params `loop_order` (`v1` | `v2`), `batch`, `heads`,
//!   `seq`, `bc` (block rows of Q and of K/V), `d`, `elem_bytes` (2 | 4); optional `l2_kv_reuse`
//!   (`false`). Keys: `read_gb`, `written_gb` (all DRAM traffic), `qo_read_gb` (Q and O reads),
//!   `o_write_gb` (O writes), `blocks`, `inner_steps`; 1 GB = 10⁹ bytes.
//! * `occupancy` ([`occupancy`]): params `arch`, `threads`; optional `smem_bytes` (per block,
//!   `28672` or `28K`; 0), `regs` (per thread; not a limit when left out). Keys
//!   `blocks_per_sm`, `occupancy_pct`, `active_warps`, `warps_per_block`,
//!   `smem_allocated_bytes`.
//! * `tma` ([`TmaBox`], sm_90): params `rows`, `cols`, `elem_bytes`, `swizzle` (`none`, `32B`,
//!   `64B`, `128B`); optional `base` (0), `layout` (a [`Layout`] string of the same tile, e.g.
//!   `swizzle:3,3,3`). Keys `size_bytes`, `pitch`, `footprint_bytes`, `repeat_bytes`, `cute_b`,
//!   `cute_m`, `cute_s` (the `Swizzle<B,M,S>` on byte addresses), `chunk.R.C` (shared-memory byte
//!   address of 16-byte chunk C of box row R), `ldmatrix_x4_requests`, `ldmatrix_x4_wavefronts`,
//!   `ldmatrix_x4_conflicts` (reading 16-row x 32-byte blocks back, lane 8m+r: row (m%2)*8+r,
//!   chunk m/2), `core_matrices`, `core_matrix_wavefronts` (8 rows x 16 bytes, each as one
//!   unit); with `layout`: `layout_disagreements` (elements whose byte address differs from the
//!   layout's plus `base`).
//! * `wgmma` ([`wgmma`], sm_90a, f16): params `n`; optional `major` (`k`), `major_a`, `major_b`,
//!   `swizzle` (`128B`), `k` (one swizzle span of K-major rows, at least 16), `order` (`mn` | `k`).
//!   Keys `k_blocks`, `smem_bytes`, `regs_per_thread`, `layout_type`, `lbo_a`, `sbo_a`, `lbo_b`,
//!   `sbo_b`, `start_a.KB`, `start_b.KB` (descriptor start addresses of k-block KB),
//!   `core_matrix_wavefronts_a`, `_b` (k-block 0's core matrices, each as one 8-row unit),
//!   `acc.T.R.row`, `acc.T.R.col` (the accumulator map), `max_abs_error` (D through the
//!   descriptors against ndarray's A·Bᵀ on small integers).
//! * `request` ([`WarpRequest::cost`]): one warp request of any instruction the simulator knows,
//!   `stmatrix` and `cp.async` included (which lesson steps cannot run yet). Params
//!   `instruction` (e.g. `stmatrix.x4`), `addr` (an [`AddrExpr`] over `lane`, e.g.
//!   `(lane%8)*128+(lane/8)*16`); optional `mask` (active lanes, default all) and, for
//!   `cp.async`, `src` (each lane's global source address, an [`AddrExpr`]: without it a
//!   `cp.async.ca` is not modelled). Keys `wavefronts`, `ideal`, `conflicts`; a request the model
//!   cannot cost (`cp.async.cg`, or no `src`) fails its claim with the reason.

use std::collections::BTreeMap;

use ndarray::Array2;

use crate::sim::addr::AddrExpr;
use crate::sim::arch::Arch;
use crate::sim::bank::{SharedMemoryConfig, WarpRequest};
use crate::sim::counts::{dynamic_counts, gemm_counts, static_counts, warps_share_code};
use crate::sim::error::SimError;
use crate::sim::exec;
use crate::sim::instr::{Instruction, MatrixCount};
use crate::sim::layout::Layout;
use crate::sim::layout::LayoutSpec;
use crate::sim::mma::{MmaDtype, MmaShape};
use crate::sim::occupancy::{OccupancyInput, occupancy, parse_bytes};
use crate::sim::program::{
    FlashProblem, FlashStyle, FlashTiling, GemmTiling, Split, Stage, StageKind,
};
use crate::sim::readback;
use crate::sim::smem::SharedMemory;
use crate::sim::tma::{TmaBox, TmaSwizzle};
use crate::sim::traffic::{self, LoopOrder, TensorTraffic, TrafficProblem};
use crate::sim::wgmma::{self, AtomOrder, Major, OperandTile};

/// What part of the counts model a claim needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum ModelKind {
    /// Static or dynamic instruction counts by SASS mnemonic (`tilelab sim counts`).
    Counts,
    /// Global-memory bytes read and written (`tilelab sim traffic`).
    Traffic,
    /// Resident blocks per SM and theoretical occupancy (`tilelab sim occupancy`).
    Occupancy,
    /// Where a TMA box lands in shared memory (`tilelab sim tma`).
    Tma,
    /// wgmma descriptors, layouts and fragments (`tilelab sim wgmma`).
    Wgmma,
    /// One warp request's wavefronts (`tilelab sim bank-conflicts --addr`).
    Request,
}

impl ModelKind {
    /// From `counts`, `traffic` or `occupancy`.
    pub fn parse(s: &str) -> Option<ModelKind> {
        Some(match s {
            "counts" => ModelKind::Counts,
            "traffic" => ModelKind::Traffic,
            "occupancy" => ModelKind::Occupancy,
            "tma" => ModelKind::Tma,
            "wgmma" => ModelKind::Wgmma,
            "request" => ModelKind::Request,
            _ => return None,
        })
    }

    /// The lesson-file spelling.
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Counts => "counts",
            ModelKind::Traffic => "traffic",
            ModelKind::Occupancy => "occupancy",
            ModelKind::Tma => "tma",
            ModelKind::Wgmma => "wgmma",
            ModelKind::Request => "request",
        }
    }
}

/// A claim for the counts model, as a lesson states it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ModelClaim {
    /// Which model.
    pub kind: ModelKind,
    /// What the numbers are ("PyTorch FA2, one copy of the loop body, per warp").
    pub label: String,
    /// Where they come from (`FA2 counts article`).
    pub source: String,
    /// The parameters as the lesson file writes them, for display (`d = "128"`).
    pub params: BTreeMap<String, String>,
    /// The same parameters, typed: what [`counts_model`] answers.
    #[serde(skip)]
    pub query: ModelQuery,
    /// Expected values by key (SASS mnemonic, `read_gb`, `occupancy_pct`, …).
    pub expect: BTreeMap<String, f64>,
    /// Allowed relative difference (0 = exact).
    pub tolerance: f64,
}

/// What a claim asks the counts model, typed (see the module docs for the parameters).
#[derive(Clone, Debug, PartialEq)]
pub enum ModelQuery {
    /// `counts`, `program = "gemm"`.
    Gemm {
        /// M, N, K, warps and split.
        tiling: GemmTiling,
        /// Whose shared memory the tiles must fit (`sm_90` when left out).
        arch: Arch,
    },
    /// `counts`, `program = "fa2-torch" | "fa2-triton"`.
    Flash {
        /// Style, bm, bn, head dim, warps, causal.
        tiling: FlashTiling,
        /// Whose shared memory the tiles must fit (`sm_90` when left out).
        arch: Arch,
        /// `copies`: `Some(1)` for one copy of the loop body, `Some(n)` or `None` for the whole
        /// kernel (n must be the program's number of copies).
        copies: Option<u32>,
        /// `batch`, `heads`, `seq`, for the dynamic counts.
        launch: Option<FlashProblem>,
    },
    /// `traffic`.
    Traffic {
        /// `v1` or `v2`.
        order: LoopOrder,
        /// The problem and its blocking.
        problem: TrafficProblem,
        /// `l2_kv_reuse`.
        l2_kv_reuse: bool,
    },
    /// `occupancy`.
    Occupancy(OccupancyInput),
    /// `tma`: a box, and optionally a tile layout to compare it with.
    Tma {
        /// The box (checked against the tensor-map rules).
        tma_box: TmaBox,
        /// `layout`, parsed for the box's rows, columns and element size.
        layout: Option<Layout>,
    },
    /// `wgmma`: one m64nNk16 problem's operand tiles.
    Wgmma {
        /// N.
        n: u32,
        /// The A tile (64 x k).
        a: OperandTile,
        /// The B tile (n x k).
        b: OperandTile,
        /// Shared-memory bytes of both.
        smem_bytes: u32,
    },
    /// `request`: one warp request.
    Request(WarpRequest),
}

impl ModelQuery {
    /// Types a claim's parameters (strings, as the lesson file gives them) for `kind`.
    ///
    /// # Errors
    /// One line naming the parameter (`params.splt is not a parameter of …; allowed: …`,
    /// `params.m is missing`, `params.m 'x' is not a whole number`, an unknown `arch`, `split`,
    /// `loop_order` or `program`, `batch` without `heads` and `seq`).
    pub fn from_params(
        kind: ModelKind,
        params: &BTreeMap<String, String>,
    ) -> Result<ModelQuery, String> {
        let p = Params(params);
        match kind {
            ModelKind::Counts => match p.str("program")? {
                "gemm" => gemm_query(&p),
                "fa2-torch" => flash_query(&p, FlashStyle::Torch),
                "fa2-triton" => flash_query(&p, FlashStyle::Triton),
                other => Err(format!(
                    "params.program '{other}' is not allowed; allowed: gemm, fa2-torch, fa2-triton"
                )),
            },
            ModelKind::Traffic => traffic_query(&p),
            ModelKind::Occupancy => occupancy_query(&p),
            ModelKind::Tma => tma_query(&p),
            ModelKind::Wgmma => wgmma_query(&p),
            ModelKind::Request => request_query(&p),
        }
    }

    /// The model this query needs.
    pub fn kind(&self) -> ModelKind {
        match self {
            ModelQuery::Gemm { .. } | ModelQuery::Flash { .. } => ModelKind::Counts,
            ModelQuery::Traffic { .. } => ModelKind::Traffic,
            ModelQuery::Occupancy(_) => ModelKind::Occupancy,
            ModelQuery::Tma { .. } => ModelKind::Tma,
            ModelQuery::Wgmma { .. } => ModelKind::Wgmma,
            ModelQuery::Request(_) => ModelKind::Request,
        }
    }

    /// Answers the query: every key its parameters allow (see the module docs). `Err` carries
    /// the simulator's reason when it refuses the tiling or problem.
    pub fn answer(&self) -> Result<ModelAnswer, String> {
        match self {
            ModelQuery::Gemm { tiling, arch } => gemm(tiling, *arch),
            ModelQuery::Flash {
                tiling,
                arch,
                copies,
                launch,
            } => flash(tiling, *arch, *copies, launch.as_ref()),
            ModelQuery::Traffic {
                order,
                problem,
                l2_kv_reuse,
            } => traffic_model(*order, problem, *l2_kv_reuse),
            ModelQuery::Occupancy(input) => occupancy_model(input),
            ModelQuery::Tma { tma_box, layout } => Ok(tma_model(tma_box, layout.as_ref())),
            ModelQuery::Wgmma {
                n,
                a,
                b,
                smem_bytes,
            } => wgmma_model(*n, a, b, *smem_bytes),
            ModelQuery::Request(r) => {
                let c = r.cost().modelled().map_err(|why| why.to_string())?;
                Ok(ModelAnswer::from([
                    ("wavefronts".into(), c.wavefronts as f64),
                    ("ideal".into(), c.ideal as f64),
                    ("conflicts".into(), c.bank_conflicts() as f64),
                ]))
            }
        }
    }
}

/// The model's values, by the same keys as [`ModelClaim::expect`].
pub type ModelAnswer = BTreeMap<String, f64>;

/// **The counts hook.** Answers a [`ModelClaim`] with the counts model: every key the claim's
/// typed parameters allow (see the module docs), each computed from the generated programs or
/// loops. `Err` carries the simulator's reason when it refuses the tiling or problem.
///
/// # Example: the FA2 counts article's FlashAttention-2 Q·Kᵀ per warp
/// ```
/// use tilelab::lessons::hooks::{ModelClaim, ModelKind, ModelQuery, counts_model};
/// let params = [("program", "gemm"), ("m", "64"), ("n", "64"), ("k", "128"), ("warps", "4")];
/// let params: std::collections::BTreeMap<String, String> =
///     params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
/// let claim = ModelClaim {
///     kind: ModelKind::Counts,
///     label: "Q·Kᵀ".into(),
///     source: "FA2 counts article".into(),
///     query: ModelQuery::from_params(ModelKind::Counts, &params).unwrap(),
///     params,
///     expect: Default::default(),
///     tolerance: 0.0,
/// };
/// let a = counts_model(&claim).unwrap();
/// assert_eq!((a["a_loads"], a["b_loads"], a["LDSM.16.M88.4"]), (8.0, 32.0, 40.0));
/// assert_eq!(a["HMMA.16816.F32"], 64.0);
/// ```
pub fn counts_model(claim: &ModelClaim) -> Result<ModelAnswer, String> {
    claim.query.answer()
}

/// A claim's parameters, read as the model needs them.
struct Params<'a>(&'a BTreeMap<String, String>);

impl Params<'_> {
    /// Fails on a parameter outside `allowed`.
    fn only(&self, what: &str, allowed: &[&str]) -> Result<(), String> {
        match self.0.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err(format!(
                "params.{k} is not a parameter of {what}; allowed: {}",
                crate::text::list(allowed)
            )),
            None => Ok(()),
        }
    }

    fn opt_str(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    fn str(&self, key: &str) -> Result<&str, String> {
        self.opt_str(key)
            .ok_or_else(|| format!("params.{key} is missing"))
    }

    fn opt_u32(&self, key: &str) -> Result<Option<u32>, String> {
        self.opt_str(key)
            .map(|v| {
                v.parse()
                    .map_err(|_| format!("params.{key} '{v}' is not a whole number"))
            })
            .transpose()
    }

    fn u32(&self, key: &str) -> Result<u32, String> {
        self.opt_u32(key)?
            .ok_or_else(|| format!("params.{key} is missing"))
    }

    fn opt_bool(&self, key: &str) -> Result<Option<bool>, String> {
        self.opt_str(key)
            .map(|v| {
                v.parse()
                    .map_err(|_| format!("params.{key} '{v}' is not allowed; allowed: true, false"))
            })
            .transpose()
    }

    /// `arch`, `sm_90` when left out.
    fn arch(&self) -> Result<Arch, String> {
        Arch::parse(self.opt_str("arch").unwrap_or("sm_90")).map_err(sim)
    }
}

fn sim(e: SimError) -> String {
    e.to_string()
}

/// Instructions by SASS mnemonic, walking `stages`; the three mnemonics FA2 counts article counts are
/// always present (0 when the program has none).
fn by_sass<'a>(stages: impl IntoIterator<Item = &'a Stage>) -> ModelAnswer {
    let mut a: ModelAnswer = [
        Instruction::Ldmatrix {
            num: MatrixCount::X4,
            trans: false,
        }
        .sass(),
        Instruction::Ldmatrix {
            num: MatrixCount::X4,
            trans: true,
        }
        .sass(),
        MmaShape::M16N8K16.sass(MmaDtype::F16),
    ]
    .into_iter()
    .map(|k| (k.to_string(), 0.0))
    .collect();
    for i in stages.into_iter().flat_map(|s| &s.instrs) {
        *a.entry(i.sass().to_string()).or_insert(0.0) += 1.0;
    }
    a
}

fn gemm_query(p: &Params) -> Result<ModelQuery, String> {
    p.only(
        "the gemm counts program",
        &["program", "m", "n", "k", "warps", "split", "arch"],
    )?;
    Ok(ModelQuery::Gemm {
        tiling: GemmTiling {
            m: p.u32("m")?,
            n: p.u32("n")?,
            k: p.u32("k")?,
            warps: p.opt_u32("warps")?.unwrap_or(1),
            split: Split::parse(p.opt_str("split").unwrap_or("rows")).map_err(sim)?,
        },
        arch: p.arch()?,
    })
}

fn gemm(t: &GemmTiling, arch: Arch) -> Result<ModelAnswer, String> {
    // Counts do not depend on the layout; the tiles must still fit in `arch`'s shared memory.
    let cta = t.build(&LayoutSpec::row(), arch).map_err(sim)?;
    let g = gemm_counts(t, &cta);
    let mut a = by_sass(&cta.warps[0].stages);
    a.insert("a_loads".into(), g.a_loads_per_warp as f64);
    a.insert("b_loads".into(), g.b_loads_per_warp as f64);
    Ok(a)
}

fn flash_query(p: &Params, style: FlashStyle) -> Result<ModelQuery, String> {
    let what = format!("the fa2-{} counts program", style.name());
    p.only(
        &what,
        &[
            "program", "d", "bm", "bn", "warps", "causal", "copies", "batch", "heads", "seq",
            "arch",
        ],
    )?;
    let launch = match (p.opt_u32("batch")?, p.opt_u32("heads")?, p.opt_u32("seq")?) {
        (None, None, None) => None,
        (Some(batch), Some(heads), Some(seq)) => Some(FlashProblem { batch, heads, seq }),
        _ => {
            return Err(
                "params batch, heads and seq go together (the launch of the dynamic counts); give all three or none"
                    .into(),
            );
        }
    };
    Ok(ModelQuery::Flash {
        tiling: FlashTiling {
            style,
            bm: p.u32("bm")?,
            bn: p.u32("bn")?,
            head_dim: p.u32("d")?,
            warps: p.u32("warps")?,
            causal: p.opt_bool("causal")?.unwrap_or(false),
        },
        arch: p.arch()?,
        copies: p.opt_u32("copies")?,
        launch,
    })
}

fn flash(
    t: &FlashTiling,
    arch: Arch,
    copies: Option<u32>,
    launch: Option<&FlashProblem>,
) -> Result<ModelAnswer, String> {
    let what = format!("the fa2-{} counts program", t.style.name());
    let cta = t.build(&LayoutSpec::row(), arch).map_err(sim)?;
    if !warps_share_code(&cta) {
        return Err(format!(
            "the warps of {what} run different code: per-warp counts are undefined"
        ));
    }
    let w0 = &cta.warps[0];
    let st = static_counts(w0);
    let mut a = match copies {
        Some(1) => {
            if st.per_copy.is_none() {
                return Err(format!(
                    "params.copies = 1: the {} copies of the loop body of {what} differ",
                    st.loop_copies
                ));
            }
            by_sass(w0.stages.iter().filter(|s| s.is_loop_copy()).take(1))
        }
        None => by_sass(&w0.stages),
        Some(n) if n == st.loop_copies => by_sass(&w0.stages),
        Some(n) => {
            let c = st.loop_copies;
            return Err(format!(
                "params.copies = {n}: {what} ({}) has {c} {} of the loop body; allowed: {}",
                if t.causal { "causal" } else { "not causal" },
                if c == 1 { "copy" } else { "copies" },
                if c == 1 {
                    "1".to_string()
                } else {
                    format!("1 (one copy) or {c} (the whole kernel)")
                }
            ));
        }
    };
    a.insert("loop_copies".into(), st.loop_copies as f64);
    if let Some(launch) = launch {
        let d = dynamic_counts(t, launch, w0).map_err(sim)?;
        let per_line = |kind| {
            d.stages
                .iter()
                .find(|s| s.kind == kind)
                .map(|s| s.executions_per_line as f64)
        };
        for (key, kind) in [
            ("exec_outside", StageKind::Prologue),
            ("exec_unmasked", StageKind::Unmasked),
        ] {
            if let Some(v) = per_line(kind) {
                a.insert(key.into(), v);
            }
        }
        a.insert("exec_mean".into(), d.mean_line_executions);
        a.insert("ctas".into(), d.ctas as f64);
    }
    Ok(a)
}

fn traffic_query(p: &Params) -> Result<ModelQuery, String> {
    p.only(
        "the traffic model",
        &[
            "loop_order",
            "batch",
            "heads",
            "seq",
            "bc",
            "br",
            "d",
            "elem_bytes",
            "l2_kv_reuse",
        ],
    )?;
    Ok(ModelQuery::Traffic {
        order: LoopOrder::parse(p.str("loop_order")?).map_err(sim)?,
        problem: TrafficProblem {
            batch: p.u32("batch")?,
            heads: p.u32("heads")?,
            seq: p.u32("seq")?,
            head_dim: p.u32("d")?,
            bm: match p.opt_u32("br")? {
                Some(br) => br,
                None => p.u32("bc")?,
            },
            bn: p.u32("bc")?,
            elem_bytes: p.u32("elem_bytes")?,
            stat_bytes: 4,
        },
        l2_kv_reuse: p.opt_bool("l2_kv_reuse")?.unwrap_or(false),
    })
}

fn traffic_model(
    order: LoopOrder,
    problem: &TrafficProblem,
    l2: bool,
) -> Result<ModelAnswer, String> {
    let r = traffic::simulate(problem, order, l2).map_err(sim)?;
    let gb = |b: u64| b as f64 / 1e9;
    let sum = |names: &[&str], bytes: fn(&TensorTraffic) -> u64| -> u64 {
        r.tensors
            .iter()
            .filter(|t| names.contains(&t.tensor))
            .map(bytes)
            .sum()
    };
    Ok(ModelAnswer::from([
        ("read_gb".into(), gb(r.read_bytes)),
        ("written_gb".into(), gb(r.written_bytes)),
        ("qo_read_gb".into(), gb(sum(&["Q", "O"], |t| t.read_bytes))),
        ("o_write_gb".into(), gb(sum(&["O"], |t| t.written_bytes))),
        ("blocks".into(), r.blocks as f64),
        ("inner_steps".into(), r.inner_steps as f64),
    ]))
}

fn occupancy_query(p: &Params) -> Result<ModelQuery, String> {
    p.only(
        "the occupancy model",
        &["arch", "threads", "smem_bytes", "regs"],
    )?;
    Ok(ModelQuery::Occupancy(OccupancyInput {
        arch: Arch::parse(p.str("arch")?).map_err(sim)?,
        threads_per_block: p.u32("threads")?,
        smem_per_block_bytes: parse_bytes(p.opt_str("smem_bytes").unwrap_or("0")).map_err(sim)?,
        regs_per_thread: p.opt_u32("regs")?,
        smem_opt_in: true,
    }))
}

fn occupancy_model(input: &OccupancyInput) -> Result<ModelAnswer, String> {
    let r = occupancy(input).map_err(sim)?;
    Ok(ModelAnswer::from([
        ("blocks_per_sm".into(), r.blocks_per_sm as f64),
        ("occupancy_pct".into(), 100.0 * r.occupancy),
        ("active_warps".into(), r.active_warps as f64),
        ("warps_per_block".into(), r.warps_per_block as f64),
        (
            "smem_allocated_bytes".into(),
            r.smem_allocated_per_block_bytes as f64,
        ),
    ]))
}

fn request_query(p: &Params) -> Result<ModelQuery, String> {
    p.only("the request model", &["instruction", "addr", "mask", "src"])?;
    let ins = Instruction::parse(p.str("instruction")?).map_err(sim)?;
    let offs = AddrExpr::parse(p.str("addr")?)
        .and_then(|e| e.lanes())
        .map_err(sim)?;
    let mut r = WarpRequest::new(ins, offs);
    if let Some(m) = p.opt_str("mask") {
        let v = m
            .strip_prefix("0x")
            .map_or_else(|| m.parse(), |h| u32::from_str_radix(h, 16));
        r.active_mask =
            v.map_err(|_| format!("params.mask '{m}' is not a 32-bit lane mask (e.g. 0xffff)"))?;
    }
    if let Some(src) = p.opt_str("src") {
        let g = AddrExpr::parse(src).and_then(|e| e.lanes()).map_err(sim)?;
        r.global_addrs = Some(Box::new(g.map(u64::from)));
    }
    r.validate(&SharedMemoryConfig::default()).map_err(sim)?;
    Ok(ModelQuery::Request(r))
}

fn tma_query(p: &Params) -> Result<ModelQuery, String> {
    p.only(
        "the tma model",
        &["rows", "cols", "elem_bytes", "swizzle", "base", "layout"],
    )?;
    let sw = TmaSwizzle::parse(p.str("swizzle")?).map_err(sim)?;
    let (rows, cols, e) = (p.u32("rows")?, p.u32("cols")?, p.u32("elem_bytes")?);
    let tma_box = TmaBox::new(rows, cols, e, sw, p.opt_u32("base")?.unwrap_or(0)).map_err(sim)?;
    let layout = p
        .opt_str("layout")
        .map(|spec| Layout::parse(spec, rows, cols, e).map_err(sim))
        .transpose()?;
    Ok(ModelQuery::Tma { tma_box, layout })
}

fn tma_model(b: &TmaBox, layout: Option<&Layout>) -> ModelAnswer {
    let mut a = ModelAnswer::new();
    a.insert("size_bytes".into(), b.size_bytes() as f64);
    a.insert("pitch".into(), b.pitch() as f64);
    a.insert("footprint_bytes".into(), b.footprint_bytes() as f64);
    a.insert("repeat_bytes".into(), b.swizzle.repeat_bytes() as f64);
    if let Some(c) = b.swizzle.cute_bytes() {
        a.insert("cute_b".into(), c.bits as f64);
        a.insert("cute_m".into(), c.base as f64);
        a.insert("cute_s".into(), c.shift as f64);
    }
    let cpr = b.chunks_per_row();
    for r in 0..b.rows {
        for c in 0..cpr {
            a.insert(format!("chunk.{r}.{c}"), b.chunk_address(r, c) as f64);
        }
    }
    if let Some(x4) = readback::tma_ldmatrix_x4(b) {
        a.insert("ldmatrix_x4_requests".into(), x4.requests as f64);
        a.insert("ldmatrix_x4_wavefronts".into(), x4.wavefronts as f64);
        a.insert("ldmatrix_x4_conflicts".into(), x4.conflicts as f64);
    }
    if let Some(core) = readback::tma_core_matrices(b) {
        a.insert("core_matrices".into(), core.requests as f64);
        a.insert("core_matrix_wavefronts".into(), core.wavefronts as f64);
    }
    if let Some(l) = layout {
        let mut bad = 0u32;
        for r in 0..b.rows {
            for c in 0..b.cols {
                let want = b.base as u64 + l.byte_offset(r, c) as u64;
                bad += (b.byte_address(r, c) as u64 != want) as u32;
            }
        }
        a.insert("layout_disagreements".into(), bad as f64);
    }
    a
}

fn wgmma_query(p: &Params) -> Result<ModelQuery, String> {
    p.only(
        "the wgmma model",
        &["n", "major", "major_a", "major_b", "swizzle", "k", "order"],
    )?;
    let major = |key: &str| -> Result<Major, String> {
        Major::parse(p.opt_str(key).or(p.opt_str("major")).unwrap_or("k")).map_err(sim)
    };
    let sw = TmaSwizzle::parse(p.opt_str("swizzle").unwrap_or("128B")).map_err(sim)?;
    let k = p.opt_u32("k")?.unwrap_or((sw.span_bytes() / 2).max(16));
    let order = match p.opt_str("order").unwrap_or("mn") {
        "mn" => AtomOrder::MnFirst,
        "k" => AtomOrder::KFirst,
        o => return Err(format!("params.order '{o}' is not allowed; allowed: mn, k")),
    };
    let n = p.u32("n")?;
    let (a, b, smem_bytes) =
        wgmma::operand_tiles(n, major("major_a")?, major("major_b")?, sw, k, order).map_err(sim)?;
    Ok(ModelQuery::Wgmma {
        n,
        a,
        b,
        smem_bytes,
    })
}

fn wgmma_model(
    n: u32,
    ta: &OperandTile,
    tb: &OperandTile,
    smem_bytes: u32,
) -> Result<ModelAnswer, String> {
    let mut a = ModelAnswer::new();
    a.insert("k_blocks".into(), ta.k_blocks() as f64);
    a.insert("smem_bytes".into(), smem_bytes as f64);
    a.insert("regs_per_thread".into(), (n / 2) as f64);
    a.insert("layout_type".into(), wgmma::layout_type(ta.swizzle) as f64);
    for (name, t) in [("a", ta), ("b", tb)] {
        let (lbo, sbo) = t.offsets();
        a.insert(format!("lbo_{name}"), lbo as f64);
        a.insert(format!("sbo_{name}"), sbo as f64);
        for kb in 0..t.k_blocks() {
            let start = t.descriptor(kb).start_address;
            a.insert(format!("start_{name}.{kb}"), start as f64);
        }
        let w: u32 = readback::operand_core_matrices(t)
            .iter()
            .map(|c| c.wavefronts)
            .sum();
        a.insert(format!("core_matrix_wavefronts_{name}"), w as f64);
    }
    for t in 0..wgmma::WARPGROUP_THREADS as u32 {
        for r in 0..n / 2 {
            let (row, col) = wgmma::acc_fragment(t, r);
            a.insert(format!("acc.{t}.{r}.row"), row as f64);
            a.insert(format!("acc.{t}.{r}.col"), col as f64);
        }
    }
    // D through the descriptors against ndarray's product, on small integers.
    let small = |i: usize, j: usize, s: usize| ((i * 7 + j * 3 + s * 5) % 7) as f32 - 3.0;
    let (k, nu) = (ta.k as usize, n as usize);
    let am = Array2::from_shape_fn((64, k), |(i, j)| small(i, j, 0));
    let bm = Array2::from_shape_fn((nu, k), |(i, j)| small(i, j, 1));
    let mut smem = SharedMemory::zeroed(smem_bytes);
    let bits = |v: f32| half::f16::from_f32(v).to_bits();
    for (t, m) in [(ta, &am), (tb, &bm)] {
        for ((i, j), v) in m.indexed_iter() {
            smem.write_u16(t.byte_address(i as u32, j as u32), bits(*v))
                .map_err(sim)?;
        }
    }
    // Through the one executor, k16 block by k16 block (scale-d 0 on the first).
    let kind = wgmma::WgmmaKind::f32_of(n, MmaDtype::F16);
    let mut d = vec![0u32; wgmma::WARPGROUP_THREADS * nu / 2];
    for kb in 0..ta.k_blocks() {
        exec::execute(
            &mut smem,
            exec::WgmmaOp {
                kind,
                a: exec::WgmmaA::Desc(ta.descriptor(kb)),
                b: tb.descriptor(kb),
                scale_d: kb > 0,
                scale_a: 1,
                scale_b: 1,
                trans_a: ta.major == Major::Mn,
                trans_b: tb.major == Major::Mn,
                d: &mut d,
                values: true,
            },
        )
        .map_err(sim)?;
    }
    let want = am.mapv(f64::from).dot(&bm.mapv(f64::from).t());
    let mut err = 0f64;
    for (i, v) in d.iter().enumerate() {
        let (t, r) = (i / (nu / 2), i % (nu / 2));
        let (row, col) = wgmma::acc_fragment(t as u32, r as u32);
        err = err.max((f32::from_bits(*v) as f64 - want[[row as usize, col as usize]]).abs());
    }
    a.insert("max_abs_error".into(), err);
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Types the parameters, then answers: errors of either step.
    fn answer(kind: ModelKind, params: &[(&str, &str)]) -> Result<ModelAnswer, String> {
        let params = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ModelQuery::from_params(kind, &params)?.answer()
    }

    const FA2: [(&str, &str); 5] = [
        ("d", "128"),
        ("bm", "64"),
        ("bn", "64"),
        ("warps", "4"),
        ("program", "fa2-triton"),
    ];

    #[test]
    fn copies_must_match_the_program() {
        // Not causal, the Triton kernel has one loop: two copies is a wrong claim, named as such.
        let mut p = FA2.to_vec();
        p.push(("copies", "2"));
        let e = answer(ModelKind::Counts, &p).unwrap_err();
        assert!(
            e.contains("not causal") && e.contains("1 copy") && e.contains("allowed: 1"),
            "{e}"
        );
        p.push(("causal", "true"));
        let a = answer(ModelKind::Counts, &p).unwrap();
        assert_eq!(a["loop_copies"], 2.0);
        // Per copy each warp stores its 64x16 slab of P, one 8x8 piece per st.shared.b32.
        assert_eq!(a["STS"], 2.0 * (64.0 * 16.0) / 64.0);
    }

    #[test]
    fn the_launch_goes_together() {
        let mut p = FA2.to_vec();
        p.push(("batch", "2"));
        let e = answer(ModelKind::Counts, &p).unwrap_err();
        assert!(e.contains("batch, heads and seq"), "{e}");
        p.extend([("heads", "16"), ("seq", "1024"), ("causal", "yes")]);
        let e = answer(ModelKind::Counts, &p).unwrap_err();
        assert!(e.contains("params.causal 'yes'"), "{e}");
    }

    #[test]
    fn traffic_and_occupancy_answer_what_the_simulator_computes() {
        let p = [
            ("loop_order", "v2"),
            ("batch", "10"),
            ("heads", "64"),
            ("seq", "1024"),
            ("bc", "32"),
            ("d", "64"),
            ("elem_bytes", "4"),
            ("l2_kv_reuse", "true"),
        ];
        let a = answer(ModelKind::Traffic, &p).unwrap();
        let r = traffic::simulate(&traffic::ARTICLE_PROBLEM, LoopOrder::V2, true).unwrap();
        assert_eq!(a["read_gb"], r.read_bytes as f64 / 1e9);
        assert_eq!(a["blocks"], 20_480.0);
        let a = answer(
            ModelKind::Occupancy,
            &[("arch", "sm_75"), ("threads", "128"), ("smem_bytes", "28K")],
        )
        .unwrap();
        assert_eq!((a["blocks_per_sm"], a["occupancy_pct"]), (2.0, 25.0));
        let e = answer(ModelKind::Occupancy, &[("threads", "128")]).unwrap_err();
        assert_eq!(e, "params.arch is missing");
    }
}
