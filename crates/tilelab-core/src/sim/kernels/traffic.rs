//! Global-memory traffic of the FlashAttention forward loop orders the v1 → v2 article
//! (`tilelab::sources::FA_ARCHAEOLOGY`) compares: bytes read and written by v1 (outer loop over
//! K/V blocks of B_c rows, inner over Q blocks of B_r rows, Q and O reloaded every inner step)
//! and v2 (Q block outer and held on chip, accumulator in registers, O and the logsumexp written
//! once), with and without L2 reuse of K/V, and the grid each order launches.
//!
//! The I/O analysis is the FlashAttention papers': v1 reads K and V once and Q and O once per
//! K/V block (`T_c = S/B_c` times); v2 reads Q once and K and V once per Q block (`T_r = S/B_r`
//! times, when L2 does not serve the re-reads) and writes O and the logsumexp `L = m + log ℓ`
//! (one f32 per query row: 4·S bytes per head) once, as FlashAttention-2 (Dao, 2023, Algorithm 1)
//! and Triton's fused-attention tutorial do.
//!
//! The bytes come from walking each order's loops ([`simulate`]) and adding the loads and stores
//! it issues; K/V loads are served by L2 after their first DRAM read of a (batch, head) when
//! `l2_kv_reuse` is set. [`assumptions`] lists what the model takes for granted, and [`compare`]
//! sets a result beside the article's measurements.
//!
//! # Example: the article's grid sizes
//! ```
//! use tilelab_core::sim::traffic::{simulate, LoopOrder, ARTICLE_PROBLEM};
//! let v1 = simulate(&ARTICLE_PROBLEM, LoopOrder::V1, false).unwrap();
//! let v2 = simulate(&ARTICLE_PROBLEM, LoopOrder::V2, true).unwrap();
//! assert_eq!((v1.blocks, v2.blocks), (640, 20_480));
//! assert_eq!(v1.written_bytes, 5_536_481_280); // the article measured 5.54 GB
//! ```

use serde::Serialize;

use crate::sim::error::SimError;

/// The attention problem and blocking. Units: elements unless named `_bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct TrafficProblem {
    /// Batch B.
    pub batch: u32,
    /// Heads N_h.
    pub heads: u32,
    /// Sequence length S (queries = keys).
    pub seq: u32,
    /// Head dimension D.
    pub head_dim: u32,
    /// B_r: rows of Q per block (`--bm`; a Q block is one v2 thread block).
    pub bm: u32,
    /// B_c: rows of K and V per block (`--bn`).
    pub bn: u32,
    /// Bytes per element of Q, K, V, O (4: the article's Triton kernels compute in fp32).
    pub elem_bytes: u32,
    /// Bytes per softmax statistic (m and l, one each per query row), f32.
    pub stat_bytes: u32,
}

/// The v1 → v2 article's setting: B = 10, N_h = 64, S = 1024, D = 64, B_r = B_c = 32, fp32.
pub const ARTICLE_PROBLEM: TrafficProblem = TrafficProblem {
    batch: 10,
    heads: 64,
    seq: 1024,
    head_dim: 64,
    bm: 32,
    bn: 32,
    elem_bytes: 4,
    stat_bytes: 4,
};

/// A measurement quoted by the article, bytes (decimal: 1 GB = 10⁹ bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Measured {
    /// DRAM bytes read.
    pub read_bytes: Option<u64>,
    /// DRAM bytes written.
    pub written_bytes: Option<u64>,
    /// Half a unit of the last digit the article prints (11.58 GB: 5 MB), bytes: gaps smaller
    /// than this are rounding.
    pub rounding_bytes: u64,
}

/// The v1 → v2 article, v1: "读取：11.58 GB，写入：5.54 GB".
pub const ARTICLE_V1: Measured = Measured {
    read_bytes: Some(11_580_000_000),
    written_bytes: Some(5_540_000_000),
    rounding_bytes: 5_000_000,
};

/// The v1 → v2 article, v2: "内存读取：从11.58 GB减少到412.18 MB" (writes not quoted).
pub const ARTICLE_V2: Measured = Measured {
    read_bytes: Some(412_180_000),
    written_bytes: None,
    rounding_bytes: 5_000,
};

/// The reduction in reads the v1 → v2 article quotes for v1 → v2, percent ("减少92.98%").
pub const ARTICLE_READ_REDUCTION_PERCENT: f64 = 92.98;

/// Which loop order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopOrder {
    /// FlashAttention v1 (paper's Algorithm 1): grid (B, N_h); `for j in K/V blocks { load K_j,
    /// V_j; for i in Q blocks { load Q_i, O_i, l_i, m_i; update; store O_i, l_i, m_i } }`.
    V1,
    /// FlashAttention v2: grid (S/B_r, B·N_h); `load Q_i; for j in K/V blocks { load K_j, V_j;
    /// update registers }; store O_i, L_i` (m and ℓ stay in registers; the logsumexp
    /// `L_i = m_i + log ℓ_i`, one f32 per row, is written for the backward pass).
    V2,
}

impl LoopOrder {
    /// Parses `v1` or `v2`.
    ///
    /// # Errors
    /// [`SimError::Unknown`] naming the value and the allowed ones.
    pub fn parse(s: &str) -> Result<LoopOrder, SimError> {
        match s {
            "v1" | "1" => Ok(LoopOrder::V1),
            "v2" | "2" => Ok(LoopOrder::V2),
            _ => Err(SimError::Unknown {
                what: "loop order",
                given: s.to_string(),
                allowed: "v1, v2",
            }),
        }
    }

    /// `v1` or `v2`.
    pub fn name(self) -> &'static str {
        match self {
            LoopOrder::V1 => "v1",
            LoopOrder::V2 => "v2",
        }
    }
}

/// Bytes moved for one tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TensorTraffic {
    /// `Q`, `K`, `V`, `O`, `m,l` (v1's running statistics) or `L` (v2's logsumexp).
    pub tensor: &'static str,
    /// Bytes read from DRAM.
    pub read_bytes: u64,
    /// Bytes written to DRAM.
    pub written_bytes: u64,
    /// Loads served by L2 instead (bytes), with K/V reuse on.
    pub l2_hit_bytes: u64,
}

/// Traffic of one loop order over the whole grid.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TrafficReport {
    /// The loop order.
    pub order: LoopOrder,
    /// The problem.
    pub problem: TrafficProblem,
    /// Whether K/V loads after the first of each (batch, head) hit L2.
    pub l2_kv_reuse: bool,
    /// Grid as the article writes it: (B, N_h) for v1, (S/B_r, B·N_h) for v2.
    pub grid: [u64; 2],
    /// Thread blocks launched (product of `grid`).
    pub blocks: u64,
    /// Inner-loop steps over the whole grid.
    pub inner_steps: u64,
    /// Per tensor.
    pub tensors: Vec<TensorTraffic>,
    /// Sum of DRAM reads, bytes.
    pub read_bytes: u64,
    /// Sum of DRAM writes, bytes.
    pub written_bytes: u64,
}

/// Largest `head_dim`, `bm` and `bn` [`TrafficProblem::validate`] accepts (elements).
pub const MAX_DIM: u32 = 1 << 16;

impl TrafficProblem {
    /// Checks the problem.
    ///
    /// # Errors
    /// [`SimError::NotAllowed`] for a zero size, a head dimension or block over [`MAX_DIM`], or
    /// element sizes other than 2 or 4 bytes; [`SimError::NotMultiple`] for a sequence that is
    /// not a multiple of both block sizes.
    pub fn validate(&self) -> Result<(), SimError> {
        for (flag, v) in [
            ("--batch", self.batch),
            ("--heads", self.heads),
            ("--seq", self.seq),
            ("--head-dim", self.head_dim),
            ("--bm", self.bm),
            ("--bn", self.bn),
        ] {
            if v == 0 {
                return Err(SimError::NotAllowed {
                    param: flag,
                    value: 0,
                    allowed: "at least 1".into(),
                });
            }
        }
        for (flag, b) in [("--bm", self.bm), ("--bn", self.bn)] {
            if !self.seq.is_multiple_of(b) {
                return Err(SimError::NotMultiple {
                    param: "--seq",
                    value: self.seq.into(),
                    of: format!("{flag} {b}"),
                    allowed: "block sizes that divide the sequence".into(),
                });
            }
        }
        for (flag, v) in [
            ("--head-dim", self.head_dim),
            ("--bm", self.bm),
            ("--bn", self.bn),
        ] {
            if v > MAX_DIM {
                return Err(SimError::NotAllowed {
                    param: flag,
                    value: v.into(),
                    allowed: format!("1..={MAX_DIM}"),
                });
            }
        }
        for (flag, v) in [
            ("--elem-bytes", self.elem_bytes),
            ("stat bytes", self.stat_bytes),
        ] {
            if v != 2 && v != 4 {
                return Err(SimError::NotAllowed {
                    param: flag,
                    value: v.into(),
                    allowed: "2 (fp16/bf16), 4 (fp32)".into(),
                });
            }
        }
        Ok(())
    }

    /// Bytes of one whole Q (or K, V, O) tensor: B·N_h·S·D·elem_bytes.
    pub fn tensor_bytes(&self) -> u64 {
        self.batch as u64
            * self.heads as u64
            * self.seq as u64
            * self.head_dim as u64
            * self.elem_bytes as u64
    }

    /// [`Self::tensor_bytes`], or `None` if it does not fit in `u64`.
    fn tensor_bytes_checked(&self) -> Option<u64> {
        [self.heads, self.seq, self.head_dim, self.elem_bytes]
            .iter()
            .try_fold(self.batch as u64, |acc, &x| acc.checked_mul(x as u64))
    }

    /// Reads no loop order can avoid: Q, K and V once each.
    pub fn compulsory_read_bytes(&self) -> u64 {
        3 * self.tensor_bytes()
    }

    /// [`Self::compulsory_read_bytes`], or `None` if it does not fit in `u64`.
    pub fn compulsory_read_bytes_checked(&self) -> Option<u64> {
        self.tensor_bytes_checked()?.checked_mul(3)
    }
}

/// Bytes of one tensor: (read, written, L2 hits).
type Bytes3 = (u64, u64, u64);

/// Per (batch, head): bytes of Q, K, V, O, m,l and L, and inner steps.
#[derive(Default, Debug, PartialEq, Eq)]
struct Acc {
    q: Bytes3,
    k: Bytes3,
    v: Bytes3,
    o: Bytes3,
    ml: Bytes3,
    lse: Bytes3,
    steps: u64,
}

/// The bytes of `order`'s loops for one (batch, head) in closed form (O(1) in the sequence
/// length), `None` on `u64` overflow. With `T_r = S/B_r` Q blocks, `T_c = S/B_c` K/V blocks,
/// `x = S·D·elem` bytes per tensor of one head, and `s = 2·S·stat` bytes of m and ℓ per head:
///
/// * v1 (K/V block outer, Q block inner): `T_r·T_c` steps; K and V read `x` each (every block
///   once, so L2 reuse changes nothing); Q read, O read and O written `T_c·x` each (every Q
///   block once per K/V block); m,ℓ read and written `T_c·s` each.
/// * v2 (Q block outer): `T_r·T_c` steps; Q read and O written `x` each; K and V read `T_r·x`
///   each from DRAM, or with L2 reuse `x` from DRAM (the first Q block's pass) and `(T_r−1)·x`
///   from L2; the logsumexp written once, `S·stat` bytes.
///
/// Equal to walking the loops (`walk`, kept as the test oracle).
fn closed_form(p: &TrafficProblem, order: LoopOrder, l2_kv_reuse: bool) -> Option<Acc> {
    let (tr, tc) = ((p.seq / p.bm) as u64, (p.seq / p.bn) as u64);
    let x = (p.seq as u64)
        .checked_mul(p.head_dim as u64)?
        .checked_mul(p.elem_bytes as u64)?;
    let stats = p.seq as u64 * p.stat_bytes as u64;
    let steps = tr.checked_mul(tc)?;
    Some(match order {
        LoopOrder::V1 => {
            let every = tc.checked_mul(x)?;
            let ml = tc.checked_mul(2 * stats)?;
            Acc {
                q: (every, 0, 0),
                k: (x, 0, 0),
                v: (x, 0, 0),
                o: (every, every, 0),
                ml: (ml, ml, 0),
                lse: (0, 0, 0),
                steps,
            }
        }
        LoopOrder::V2 => {
            let every = tr.checked_mul(x)?;
            let kv = if l2_kv_reuse {
                (x, 0, every - x)
            } else {
                (every, 0, 0)
            };
            Acc {
                q: (x, 0, 0),
                k: kv,
                v: kv,
                o: (0, x, 0),
                ml: (0, 0, 0),
                lse: (0, stats, 0),
                steps,
            }
        }
    })
}

/// The traffic of `order` over the whole grid: the per-(batch, head) bytes in closed form
/// (every (batch, head) runs the same loops), scaled by B·N_h. Constant time in every size; any
/// count that would not fit in `u64` is an error before anything is summed.
///
/// # Errors
/// Those of [`TrafficProblem::validate`]; [`SimError::Overflow`] when a byte count does not fit
/// in 64 bits.
pub fn simulate(
    p: &TrafficProblem,
    order: LoopOrder,
    l2_kv_reuse: bool,
) -> Result<TrafficReport, SimError> {
    p.validate()?;
    let tr = (p.seq / p.bm) as u64;
    let bh = p.batch as u64 * p.heads as u64;
    let overflow = || SimError::Overflow {
        problem: format!("--batch {} --heads {} --seq {}", p.batch, p.heads, p.seq),
        quantity: "byte counts",
    };
    let a = closed_form(p, order, l2_kv_reuse).ok_or_else(overflow)?;
    let steps = a.steps;
    let mul = |x: u64| x.checked_mul(bh).ok_or_else(overflow);
    let mut tensors = Vec::with_capacity(6);
    for (tensor, (r, w, h)) in [
        ("Q", a.q),
        ("K", a.k),
        ("V", a.v),
        ("O", a.o),
        ("m,l", a.ml),
        ("L", a.lse),
    ] {
        tensors.push(TensorTraffic {
            tensor,
            read_bytes: mul(r)?,
            written_bytes: mul(w)?,
            l2_hit_bytes: mul(h)?,
        });
    }
    let sum = |f: fn(&TensorTraffic) -> u64| {
        tensors
            .iter()
            .try_fold(0u64, |acc, x| acc.checked_add(f(x)))
            .ok_or_else(overflow)
    };
    let (read_bytes, written_bytes) = (sum(|x| x.read_bytes)?, sum(|x| x.written_bytes)?);
    // The report's readers also print B·N_h·S·D·elem_bytes and 3 times it.
    p.compulsory_read_bytes_checked().ok_or_else(overflow)?;
    let grid = match order {
        LoopOrder::V1 => [p.batch as u64, p.heads as u64],
        LoopOrder::V2 => [tr, bh],
    };
    Ok(TrafficReport {
        order,
        problem: *p,
        l2_kv_reuse,
        grid,
        blocks: grid[0].checked_mul(grid[1]).ok_or_else(overflow)?,
        inner_steps: mul(steps)?,
        read_bytes,
        written_bytes,
        tensors,
    })
}

/// What the model assumes, one sentence each.
pub fn assumptions(order: LoopOrder) -> Vec<&'static str> {
    let mut v = vec![
        "bytes are DRAM traffic; 1 GB = 10^9 bytes, 1 MB = 10^6 bytes, as Nsight Compute prints them",
        "Q, K, V, O are dense [B, N_h, S, D] tensors of --elem-bytes each (4 = fp32, which makes v1's modelled writes match the measured 5.54 GB)",
        "every block load or store moves exactly its bytes: no partial sectors, no prefetch, no write-allocate reads",
        "not causal: every Q block meets every K/V block",
        "'with L2 reuse' means a K/V block read by one thread block is an L2 hit for every later block of the same (batch, head); 'without' means every load goes to DRAM",
    ];
    match order {
        LoopOrder::V1 => v.extend([
            "v1: O starts in DRAM and each inner step reads Q_i, O_i, m_i, l_i and writes back O_i, m_i, l_i (f32 statistics)",
            "v1: K_j and V_j are read once per outer step, so L2 reuse of K/V changes nothing; Q/O re-reads are assumed to miss L2 (each (batch, head) re-reads 2·S·D·elem bytes per outer step, and the resident blocks together exceed L2)",
        ]),
        LoopOrder::V2 => v.extend([
            "v2: each thread block reads its Q block once and writes its O block once; m and l stay in registers; the logsumexp L = m + log l is written once, one f32 per query row (4·S bytes per head), as FlashAttention-2 and Triton's fused attention do",
            "v2: without L2 reuse each of the S/B_r thread blocks of a (batch, head) reads all of K and V from DRAM",
        ]),
    }
    v
}

/// A model result beside a measurement.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// Measured DRAM reads, bytes.
    pub measured_read_bytes: Option<u64>,
    /// Measured DRAM writes, bytes.
    pub measured_written_bytes: Option<u64>,
    /// Measured − modelled reads, bytes.
    pub read_gap_bytes: Option<i64>,
    /// Measured − modelled writes, bytes.
    pub written_gap_bytes: Option<i64>,
    /// Bytes of one whole tensor (Q, K, V or O), to size the gaps.
    pub tensor_bytes: u64,
    /// The read gap in passes over K and V: `gap / (2·tensor_bytes)`.
    pub read_gap_kv_passes: Option<f64>,
    /// The measurement's rounding, bytes (see [`Measured::rounding_bytes`]).
    pub rounding_bytes: u64,
    /// Q, K and V read once each: the least any order reads.
    pub compulsory_read_bytes: u64,
    /// True when the measured reads are below [`Self::compulsory_read_bytes`], which no loop order
    /// can achieve for this problem: the measurement must come from another setting.
    pub measured_below_compulsory: bool,
    /// For v2: how many full passes over K and V the measured reads imply, given Q read once:
    /// `(measured − Q) / (K + V)`; 1 = perfect L2 reuse, S/Bc = none.
    pub implied_kv_passes: Option<f64>,
}

/// Compares a report with a measurement.
pub fn compare(r: &TrafficReport, m: &Measured) -> Comparison {
    let tb = r.problem.tensor_bytes();
    let comp = r.problem.compulsory_read_bytes();
    Comparison {
        measured_read_bytes: m.read_bytes,
        measured_written_bytes: m.written_bytes,
        read_gap_bytes: m.read_bytes.map(|x| x as i64 - r.read_bytes as i64),
        written_gap_bytes: m.written_bytes.map(|x| x as i64 - r.written_bytes as i64),
        tensor_bytes: tb,
        read_gap_kv_passes: m
            .read_bytes
            .map(|x| (x as f64 - r.read_bytes as f64) / (2.0 * tb as f64)),
        rounding_bytes: m.rounding_bytes,
        compulsory_read_bytes: comp,
        measured_below_compulsory: m.read_bytes.is_some_and(|x| x < comp),
        implied_kv_passes: match (r.order, m.read_bytes) {
            (LoopOrder::V2, Some(x)) => Some((x as f64 - tb as f64) / (2.0 * tb as f64)),
            _ => None,
        },
    }
}

/// The article's measurement of `order`: [`ARTICLE_V1`] or [`ARTICLE_V2`].
pub fn article_measured(order: LoopOrder) -> Measured {
    match order {
        LoopOrder::V1 => ARTICLE_V1,
        LoopOrder::V2 => ARTICLE_V2,
    }
}

/// The v1 → v2 reduction in DRAM reads, percent, three ways.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ReadReduction {
    /// What the article quotes ([`ARTICLE_READ_REDUCTION_PERCENT`]).
    pub quoted_percent: f64,
    /// What the article's own read figures give: `100 · (1 − v2 / v1)`.
    pub article_figures_percent: f64,
    /// What the model gives with L2 reuse.
    pub model_percent: f64,
}

/// The loop orders of one problem, each without and with L2 reuse of K/V, beside the
/// article's measurements.
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficStudy {
    /// Per order (in the order given), the report without L2 reuse, then with it.
    pub reports: Vec<TrafficReport>,
    /// Each order's L2-reuse report beside the article's measurement of that order (the
    /// hardware has an L2).
    pub article: Vec<(LoopOrder, Comparison)>,
    /// Whether the problem is the article's ([`ARTICLE_PROBLEM`]).
    pub is_article: bool,
    /// With both orders: the v1 → v2 reduction in reads.
    pub read_reduction: Option<ReadReduction>,
}

/// Checks `p` and simulates every order of `orders` without and with L2 reuse of K/V.
///
/// # Errors
/// [`TrafficProblem::validate`]'s and [`simulate`]'s.
pub fn study(p: &TrafficProblem, orders: &[LoopOrder]) -> Result<TrafficStudy, SimError> {
    p.validate()?;
    let mut reports = Vec::new();
    for &o in orders {
        for l2 in [false, true] {
            reports.push(simulate(p, o, l2)?);
        }
    }
    let article = reports
        .iter()
        .filter(|r| r.l2_kv_reuse)
        .map(|r| (r.order, compare(r, &article_measured(r.order))))
        .collect();
    let l2_reads = |o: LoopOrder| {
        reports
            .iter()
            .find(|r| r.l2_kv_reuse && r.order == o)
            .map(|r| r.read_bytes as f64)
    };
    let read_reduction = match (l2_reads(LoopOrder::V1), l2_reads(LoopOrder::V2)) {
        (Some(m1), Some(m2)) => {
            let v1 = ARTICLE_V1.read_bytes.unwrap_or(0) as f64;
            let v2 = ARTICLE_V2.read_bytes.unwrap_or(0) as f64;
            Some(ReadReduction {
                quoted_percent: ARTICLE_READ_REDUCTION_PERCENT,
                article_figures_percent: 100.0 * (1.0 - v2 / v1),
                model_percent: 100.0 * (1.0 - m2 / m1),
            })
        }
        _ => None,
    };
    Ok(TrafficStudy {
        reports,
        article,
        is_article: *p == ARTICLE_PROBLEM,
        read_reduction,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loops of `order` for one (batch, head), walked block by block: the oracle the
    /// closed form is checked against.
    fn walk(p: &TrafficProblem, order: LoopOrder, l2_kv_reuse: bool) -> Acc {
        let (n_q, n_kv) = ((p.seq / p.bm) as u64, (p.seq / p.bn) as u64);
        // One block's bytes: B_r (or B_c) rows of D elements; m and l: one f32 each per row.
        let q_tile = p.bm as u64 * p.head_dim as u64 * p.elem_bytes as u64;
        let kv_tile = p.bn as u64 * p.head_dim as u64 * p.elem_bytes as u64;
        let stats = 2 * p.bm as u64 * p.stat_bytes as u64;
        let lse = p.bm as u64 * p.stat_bytes as u64;
        let mut a = Acc::default();
        // K/V blocks of this (batch, head) already in L2.
        let mut cached = vec![false; n_kv as usize];
        let mut load_kv = |a: &mut Acc, j: usize| {
            if l2_kv_reuse && cached[j] {
                a.k.2 += kv_tile;
                a.v.2 += kv_tile;
            } else {
                a.k.0 += kv_tile;
                a.v.0 += kv_tile;
                cached[j] = true;
            }
        };
        match order {
            LoopOrder::V1 => {
                for j in 0..n_kv as usize {
                    load_kv(&mut a, j);
                    for _i in 0..n_q {
                        a.q.0 += q_tile;
                        a.o.0 += q_tile;
                        a.ml.0 += stats;
                        a.o.1 += q_tile;
                        a.ml.1 += stats;
                        a.steps += 1;
                    }
                }
            }
            LoopOrder::V2 => {
                for _i in 0..n_q {
                    a.q.0 += q_tile;
                    for j in 0..n_kv as usize {
                        load_kv(&mut a, j);
                        a.steps += 1;
                    }
                    a.o.1 += q_tile;
                    a.lse.1 += lse;
                }
            }
        }
        a
    }

    #[test]
    fn closed_form_equals_the_walk() {
        let blocks = [1u32, 2, 3, 4, 8, 32, 48, 64];
        let mut cases = 0;
        for seq in [1u32, 2, 3, 8, 12, 64, 96, 192, 1024] {
            for bm in blocks {
                for bn in blocks {
                    if !seq.is_multiple_of(bm) || !seq.is_multiple_of(bn) {
                        continue;
                    }
                    for (d, e) in [(1, 2), (64, 4), (128, 2)] {
                        let p = TrafficProblem {
                            batch: 1,
                            heads: 1,
                            seq,
                            head_dim: d,
                            bm,
                            bn,
                            elem_bytes: e,
                            stat_bytes: 4,
                        };
                        for order in [LoopOrder::V1, LoopOrder::V2] {
                            for l2 in [false, true] {
                                assert_eq!(
                                    closed_form(&p, order, l2).unwrap(),
                                    walk(&p, order, l2),
                                    "{p:?} {order:?} l2 {l2}"
                                );
                                cases += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(cases > 500, "{cases}");
    }

    /// No block cap: S = 2^28 with 16-row blocks (2^24 blocks, 2^48 block pairs) is answered
    /// at once; counts beyond 64 bits are an error, not a wrap.
    #[test]
    fn long_sequences_are_closed_form() {
        let mut p = TrafficProblem {
            seq: 1 << 28,
            bm: 16,
            bn: 16,
            batch: 1,
            heads: 1,
            head_dim: 64,
            elem_bytes: 2,
            stat_bytes: 4,
        };
        let r = simulate(&p, LoopOrder::V2, true).unwrap();
        let n = 1u64 << 24;
        assert_eq!(r.inner_steps, n * n);
        // Q read once, K and V once from DRAM: 3 tensors of S·D·2 bytes.
        assert_eq!(r.read_bytes, 3 * (1u64 << 28) * 64 * 2);
        p.batch = u32::MAX;
        p.heads = u32::MAX;
        let e = simulate(&p, LoopOrder::V1, false).unwrap_err().to_string();
        assert!(e.contains("do not fit in 64 bits"), "{e}");
    }

    #[test]
    fn v1_reproduces_the_measured_writes_and_the_article_arithmetic() {
        let v1 = simulate(&ARTICLE_PROBLEM, LoopOrder::V1, false).unwrap();
        // "每次迭代读取(Q+O) ≈ 10.6 GB，写入O ≈ 5.3 GB": Q+O reads are 10.74 GB, O writes 5.37 GB.
        let q = v1.tensors.iter().find(|t| t.tensor == "Q").unwrap();
        let o = v1.tensors.iter().find(|t| t.tensor == "O").unwrap();
        assert_eq!(q.read_bytes + o.read_bytes, 10_737_418_240);
        assert_eq!(o.written_bytes, 5_368_709_120);
        // O + m,l writes: 5.5365 GB, printed as 5.54 GB.
        assert_eq!((v1.written_bytes as f64 / 1e7).round() / 100.0, 5.54);
        assert_eq!(v1.read_bytes, 11_240_734_720);
        // The measured 11.58 GB exceeds the model by one more pass over K and V, within rounding.
        let c = compare(&v1, &ARTICLE_V1);
        let gap = c.read_gap_bytes.unwrap();
        assert!(
            (gap - 2 * 167_772_160).unsigned_abs() <= ARTICLE_V1.rounding_bytes,
            "{gap}"
        );
        assert!(c.written_gap_bytes.unwrap().unsigned_abs() <= ARTICLE_V1.rounding_bytes);
        // L2 reuse cannot help v1's K/V (each block is read once).
        let v1l2 = simulate(&ARTICLE_PROBLEM, LoopOrder::V1, true).unwrap();
        assert_eq!(v1l2.read_bytes, v1.read_bytes);
    }

    #[test]
    fn v2_with_and_without_l2() {
        let tb = ARTICLE_PROBLEM.tensor_bytes();
        assert_eq!(tb, 167_772_160);
        let no = simulate(&ARTICLE_PROBLEM, LoopOrder::V2, false).unwrap();
        let l2 = simulate(&ARTICLE_PROBLEM, LoopOrder::V2, true).unwrap();
        assert_eq!(no.read_bytes, tb + 32 * 2 * tb);
        assert_eq!(l2.read_bytes, 3 * tb);
        // O and the logsumexp: 4 bytes per query row, B·N_h·S rows.
        assert_eq!(l2.written_bytes, tb + 4 * 10 * 64 * 1024);
        assert_eq!(no.grid, [32, 640]);
        let c = compare(&l2, &ARTICLE_V2);
        assert!(c.measured_below_compulsory);
        let passes = c.implied_kv_passes.unwrap();
        assert!((passes - 0.728).abs() < 0.001, "{passes}");
    }

    /// The comparison's numbers by hand for the article's problem (tensor 10·64·1024·64·4 =
    /// 167,772,160 B; 655,360 query rows; 32 K/V blocks). v1 writes O 32 times and m, l (two
    /// f32 per row) 32 times: 5,368,709,120 + 167,772,160 = 5,536,481,280 B, so the measured
    /// 5.54 GB is 3,518,720 above; reads 11.58 GB − 11,240,734,720 = 339,265,280 B, 1.0111 passes
    /// over K and V (2 tensors). "Below compulsory" means strictly below Q + K + V =
    /// 503,316,480 B. Each order lists 7 assumptions.
    #[test]
    fn comparison_gaps_and_the_compulsory_edge() {
        let v1 = simulate(&ARTICLE_PROBLEM, LoopOrder::V1, false).unwrap();
        assert_eq!(v1.written_bytes, 5_536_481_280);
        let c = compare(&v1, &ARTICLE_V1);
        assert_eq!(c.written_gap_bytes, Some(3_518_720));
        assert_eq!(c.read_gap_bytes, Some(339_265_280));
        let passes = c.read_gap_kv_passes.unwrap();
        assert!(
            (passes - 339_265_280.0 / 335_544_320.0).abs() < 1e-9,
            "{passes}"
        );
        assert_eq!(
            (c.tensor_bytes, c.compulsory_read_bytes),
            (167_772_160, 503_316_480)
        );
        assert!(!c.measured_below_compulsory && c.implied_kv_passes.is_none());
        let v2 = simulate(&ARTICLE_PROBLEM, LoopOrder::V2, true).unwrap();
        for (reads, below) in [(503_316_480, false), (503_316_479, true)] {
            let m = Measured {
                read_bytes: Some(reads),
                written_bytes: None,
                rounding_bytes: 0,
            };
            assert_eq!(compare(&v2, &m).measured_below_compulsory, below, "{reads}");
        }
        for o in [LoopOrder::V1, LoopOrder::V2] {
            let a = assumptions(o);
            assert_eq!(a.len(), 7);
            assert!(a.iter().any(|s| s.starts_with(o.name())), "{o:?}");
        }
    }

    /// Head dimension and blocks up to 2^16 = 65536 are taken, 65537 is not; the loop orders
    /// parse as `v1`/`1`, `v2`/`2` and print as `v1`, `v2`.
    #[test]
    fn dimension_limit_and_loop_order_names() {
        let mut p = ARTICLE_PROBLEM;
        p.head_dim = 65_536;
        assert!(p.validate().is_ok());
        p.head_dim = 65_537;
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("--head-dim") && e.contains("1..=65536"), "{e}");
        for (texts, o) in [(["v1", "1"], LoopOrder::V1), (["v2", "2"], LoopOrder::V2)] {
            for t in texts {
                assert_eq!(LoopOrder::parse(t).unwrap(), o, "{t}");
            }
            assert_eq!(o.name(), texts[0]);
        }
        assert!(LoopOrder::parse("v3").is_err());
    }

    #[test]
    fn the_study_of_both_orders_sets_each_beside_the_article() {
        let s = study(&ARTICLE_PROBLEM, &[LoopOrder::V1, LoopOrder::V2]).unwrap();
        assert_eq!(s.reports.len(), 4);
        assert!(s.is_article);
        assert_eq!(s.reports[0].written_bytes, 5_536_481_280); // v1, as measured: 5.54 GB
        let orders: Vec<LoopOrder> = s.article.iter().map(|(o, _)| *o).collect();
        assert_eq!(orders, [LoopOrder::V1, LoopOrder::V2]);
        assert_eq!(s.read_reduction.map(|r| r.quoted_percent), Some(92.98));
        let one = study(&ARTICLE_PROBLEM, &[LoopOrder::V2]).unwrap();
        assert_eq!((one.reports.len(), one.read_reduction), (2, None));
    }

    #[test]
    fn bad_problems_are_named() {
        let mut p = ARTICLE_PROBLEM;
        p.bn = 48;
        let e = simulate(&p, LoopOrder::V1, false).unwrap_err().to_string();
        assert!(e.contains("--seq 1024") && e.contains("--bn 48"), "{e}");
        p.bn = 32;
        p.bm = 0;
        let e = simulate(&p, LoopOrder::V2, false).unwrap_err().to_string();
        assert!(e.contains("--bm"), "{e}");
        p.bm = 32;
        p.elem_bytes = 3;
        assert!(
            simulate(&p, LoopOrder::V2, false)
                .unwrap_err()
                .to_string()
                .contains("allowed: 2")
        );
    }
}
