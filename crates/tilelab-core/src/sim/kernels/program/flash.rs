//! FlashAttention-2 forward: one CTA's warp program in the PyTorch (torch) and Triton styles,
//! and the kv loop each CTA runs.

use serde::Serialize;

use super::build::{check_multiple, check_share, check_warps, finish, place_program_tiles};
use super::emit::{ASource, BSource, WarpGemm, sts_acc_half};
use super::{CtaProgram, Product, SmemTile, Stage, StageKind, TileId, WarpInstr, WarpProgram};
use crate::sim::arch::Arch;
use crate::sim::error::SimError;
use crate::sim::layout::LayoutSpec;

/// How a FlashAttention forward kernel splits its work among warps (FA2 counts article).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlashStyle {
    /// PyTorch's FlashAttention-2 (`flash_fwd_kernel.h`): parallel over Q rows. Warp w owns
    /// `bm/warps` rows of Q, S and O; loads its Q rows and all of K (`LDSM`), keeps P in registers
    /// and loads all of V with `LDSM.T`. The masking loop is unrolled `ceil(bm/bn)` times (when
    /// bn divides bm or bm divides bn; [`FlashTiling::masked_copies`] in general) when
    /// causal (one peeled iteration when not), then one unmasked loop.
    Torch,
    /// The simple Triton kernel (FA2 counts article; loop structure of the Triton tutorial `_attn_fwd`):
    /// parallel over K. Warp w owns `bn/warps` columns of S (its keys) and `d/warps` columns of O;
    /// loads all of Q and its K rows, stores its P slab to shared memory (`st.shared.b32`),
    /// reloads all of P (`LDSM`) and its V columns (`LDSM.T`). Causal: an off-band unmasked loop
    /// then an on-band masked loop; not causal: one loop.
    Triton,
}

impl FlashStyle {
    /// Parses `torch` or `triton`.
    ///
    /// # Errors
    /// [`SimError::Unknown`] naming the value and the allowed ones.
    pub fn parse(s: &str) -> Result<FlashStyle, SimError> {
        match s {
            "torch" | "pytorch" | "fa2" => Ok(FlashStyle::Torch),
            "triton" => Ok(FlashStyle::Triton),
            _ => Err(SimError::Unknown {
                what: "style",
                given: s.to_string(),
                allowed: "torch, triton",
            }),
        }
    }

    /// `torch` or `triton`.
    pub fn name(self) -> &'static str {
        match self {
            FlashStyle::Torch => "torch",
            FlashStyle::Triton => "triton",
        }
    }
}

/// The tiling of one FlashAttention-2 forward CTA: a bm-row block of Q against bn-row blocks of
/// K and V, head dimension d, f16 in shared memory, f32 accumulators. Units: elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct FlashTiling {
    /// Work split among warps.
    pub style: FlashStyle,
    /// Q rows per CTA (BLOCK_M).
    pub bm: u32,
    /// K/V rows per loop iteration (BLOCK_N).
    pub bn: u32,
    /// Head dimension d.
    pub head_dim: u32,
    /// Warps per CTA (num_warps).
    pub warps: u32,
    /// Causal masking (changes the loop copies and their trip counts).
    pub causal: bool,
}

/// The problem a FlashAttention kernel is launched on: grid = batch·heads·(seq/bm) CTAs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct FlashProblem {
    /// Batch size B.
    pub batch: u32,
    /// Heads H.
    pub heads: u32,
    /// Sequence length S (queries = keys), elements.
    pub seq: u32,
}

/// Consecutive kv-block iterations of a CTA's loop through one stage (index into
/// [`WarpProgram::stages`]): blocks `first, first ∓ 1, …` (`count` of them, descending or not).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct KvRun {
    /// Stage that runs these blocks.
    pub stage: usize,
    /// The first block run (rows `first·bn ..`).
    pub first: u32,
    /// How many blocks.
    pub count: u32,
    /// Whether the blocks go down from `first` (FlashAttention-2) or up (Triton).
    pub descending: bool,
}

/// One kv-block iteration of a CTA's loop: which block, through which stage (index into
/// [`WarpProgram::stages`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct KvVisit {
    /// Index of the K/V block (rows `kv_block·bn ..`).
    pub kv_block: u32,
    /// Stage that runs it.
    pub stage: usize,
}

impl FlashTiling {
    /// Number of unrolled masked copies for the torch style (FlashAttention-2's
    /// `n_masking_steps`); 1 (a loop) or 0 for Triton.
    ///
    /// Torch, causal: the most key blocks that hold a masked element for one bm-row query block,
    /// `ceil((bm + bn − gcd(bm, bn)) / bn)` (a block starting `ρ` keys before the block's first
    /// query row, ρ a multiple of gcd(bm, bn) up to bn − gcd, meets `ceil((ρ + bm)/bn)` of them).
    /// When one of bm, bn divides the other, as in every FlashAttention-2 tile (kBlockM 64 or 128,
    /// kBlockN 32 to 256), this is `flash_fwd_kernel.h`'s `ceil_div(kBlockM, kBlockN)`; for other
    /// pairs (bm 32, bn 48) that formula leaves a diagonal block unmasked, so the model does not
    /// use it. Checked against a brute force over the mask (`tests/program_oracles.rs`). Torch,
    /// not causal: 1 (FA2 peels one masking iteration for the sequence boundary).
    pub fn masked_copies(&self) -> u32 {
        match (self.style, self.causal) {
            (FlashStyle::Torch, true) => {
                let (bm, bn) = (self.bm as u64, self.bn as u64);
                let g = gcd(self.bm, self.bn) as u64;
                // At most bm/bn + 2: fits in u32 whatever bm and bn are.
                (bm + bn - g).div_ceil(bn) as u32
            }
            (FlashStyle::Torch, false) => 1,
            (FlashStyle::Triton, true) => 1,
            (FlashStyle::Triton, false) => 0,
        }
    }

    /// Checks the tiling.
    ///
    /// # Errors
    /// [`SimError::NotMultiple`] if bm, bn or d is not a positive multiple of 16, or triton with
    /// `causal` and bm not a multiple of bn; [`SimError::NotAllowed`] if `warps` is outside
    /// 1..=32; [`SimError::WarpSplit`] if the warps cannot share the 16-row slabs of bm (torch) or
    /// the 16-wide slabs of bn and d (triton) evenly.
    pub fn validate(&self) -> Result<(), SimError> {
        check_multiple("--bm", self.bm, "ldmatrix.x4 and mma take 16 rows of Q")?;
        check_multiple("--bn", self.bn, "ldmatrix.x4 loads 16 rows of K and V")?;
        check_multiple(
            "--head-dim",
            self.head_dim,
            "mma m16n8k16 reduces Q·Kᵀ over 16",
        )?;
        check_warps(self.warps)?;
        match self.style {
            FlashStyle::Torch => check_share(
                self.warps,
                self.bm / 16,
                "16-row",
                &format!("--bm {} (torch style splits Q rows)", self.bm),
            ),
            FlashStyle::Triton => {
                check_share(
                    self.warps,
                    self.bn / 16,
                    "16-key",
                    &format!("--bn {} (triton style splits the keys)", self.bn),
                )?;
                check_share(
                    self.warps,
                    self.head_dim / 16,
                    "16-column",
                    &format!(
                        "--head-dim {} (triton style splits V's columns)",
                        self.head_dim
                    ),
                )?;
                if self.causal && !self.bm.is_multiple_of(self.bn) {
                    return Err(SimError::NotMultiple {
                        param: "--bm",
                        value: self.bm.into(),
                        of: format!(
                            "--bn {} (the triton style's on-band causal loop steps over the bm diagonal rows in bn blocks)",
                            self.bn
                        ),
                        allowed: "bm = bn, 2·bn, …".into(),
                    });
                }
                Ok(())
            }
        }
    }

    /// Checks a problem against the tiling.
    ///
    /// # Errors
    /// [`SimError::NotAllowed`] for zero batch or heads, [`SimError::NotMultiple`] for a sequence
    /// that is not a multiple of both bm and bn.
    pub fn check_problem(&self, p: &FlashProblem) -> Result<(), SimError> {
        if p.batch == 0 || p.heads == 0 {
            let (param, value) = if p.batch == 0 {
                ("--batch", p.batch)
            } else {
                ("--heads", p.heads)
            };
            return Err(SimError::NotAllowed {
                param,
                value: value.into(),
                allowed: "at least 1".into(),
            });
        }
        let l = lcm(self.bm, self.bn);
        if p.seq == 0 || !p.seq.is_multiple_of(l) {
            return Err(SimError::NotMultiple {
                param: "--seq",
                value: p.seq.into(),
                of: format!("--bm {} and --bn {}", self.bm, self.bn),
                allowed: format!("multiples of {l}"),
            });
        }
        Ok(())
    }

    /// Builds the CTA program.
    ///
    /// Stages: torch = prologue, masked step 0..[`Self::masked_copies`], unmasked, epilogue;
    /// triton causal = prologue, unmasked (off-band), masked (on-band), epilogue; triton not causal
    /// = prologue, unmasked, epilogue. Every loop copy holds the same instructions (the mask adds
    /// no shared-memory or tensor-core instruction).
    ///
    /// # Errors
    /// Those of [`Self::validate`]; a `layout` whose tiles are too large
    /// ([`LayoutSpec::tile`]) or break ldmatrix's 16-byte rows; tiles over the per-block shared
    /// memory of `arch`.
    pub fn build(&self, layout: &LayoutSpec, arch: Arch) -> Result<CtaProgram, SimError> {
        self.validate()?;
        let (bm, bn, d) = (self.bm, self.bn, self.head_dim);
        let mut shapes = vec![(TileId::Q, bm, d), (TileId::K, bn, d), (TileId::V, bn, d)];
        if self.style == FlashStyle::Triton {
            shapes.push((TileId::P, bm, bn));
        }
        let (tiles, smem) = place_program_tiles(layout, arch, &shapes)?;
        let warps = (0..self.warps)
            .map(|w| WarpProgram {
                warp: w,
                stages: self.stages(self.loop_body(w, &tiles)),
            })
            .collect();
        finish(tiles, smem, arch, warps)
    }

    /// One loop-body copy of warp `w`: S = Q·Kᵀ, (triton: P to shared memory), O += P·V.
    /// `tiles` are Q, K, V (and P for triton), as [`Self::build`] places them.
    fn loop_body(&self, w: u32, tiles: &[SmemTile]) -> Vec<WarpInstr> {
        let (bm, bn, d, nw) = (self.bm, self.bn, self.head_dim, self.warps);
        let (q, k, v) = (&tiles[0], &tiles[1], &tiles[2]);
        let mut body = Vec::new();
        match self.style {
            FlashStyle::Torch => {
                // Warp w owns Q rows w·bm/nw..; P stays in its registers.
                let rows = bm / nw;
                let m0 = w * rows;
                WarpGemm {
                    product: Product::QK,
                    a: ASource::Smem(q),
                    b: BSource::NK(k),
                    m0,
                    m_len: rows,
                    n0: 0,
                    n_len: bn,
                    k_len: d,
                }
                .emit(&mut body);
                WarpGemm {
                    product: Product::PV,
                    a: ASource::Registers,
                    b: BSource::KNTrans(v),
                    m0,
                    m_len: rows,
                    n0: 0,
                    n_len: d,
                    k_len: bn,
                }
                .emit(&mut body);
            }
            FlashStyle::Triton => {
                // Warp w owns keys w·bn/nw.. of S and columns w·d/nw.. of O; P goes through
                // shared memory between the two products.
                let p = &tiles[3];
                let (keys, cols) = (bn / nw, d / nw);
                WarpGemm {
                    product: Product::QK,
                    a: ASource::Smem(q),
                    b: BSource::NK(k),
                    m0: 0,
                    m_len: bm,
                    n0: w * keys,
                    n_len: keys,
                    k_len: d,
                }
                .emit(&mut body);
                for m in (0..bm).step_by(16) {
                    for n in (w * keys..(w + 1) * keys).step_by(8) {
                        body.push(WarpInstr::Smem(sts_acc_half(p, m, n)));
                        body.push(WarpInstr::Smem(sts_acc_half(p, m + 8, n)));
                    }
                }
                WarpGemm {
                    product: Product::PV,
                    a: ASource::Smem(p),
                    b: BSource::KNTrans(v),
                    m0: 0,
                    m_len: bm,
                    n0: w * cols,
                    n_len: cols,
                    k_len: bn,
                }
                .emit(&mut body);
            }
        }
        body
    }

    /// The stages of a warp: prologue, the copies of the loop `body` for the style and mask
    /// (see [`Self::build`]), epilogue.
    fn stages(&self, body: Vec<WarpInstr>) -> Vec<Stage> {
        let stage = |kind, step, instrs| Stage { kind, step, instrs };
        let mut stages = vec![stage(StageKind::Prologue, None, Vec::new())];
        match (self.style, self.causal) {
            (FlashStyle::Torch, _) => {
                for s in 0..self.masked_copies() {
                    stages.push(stage(StageKind::Masked, Some(s), body.clone()));
                }
                stages.push(stage(StageKind::Unmasked, None, body));
            }
            (FlashStyle::Triton, true) => {
                stages.push(stage(StageKind::Unmasked, None, body.clone()));
                stages.push(stage(StageKind::Masked, None, body));
            }
            (FlashStyle::Triton, false) => stages.push(stage(StageKind::Unmasked, None, body)),
        }
        stages.push(stage(StageKind::Epilogue, None, Vec::new()));
        stages
    }

    /// The kv-block loop of the CTA that owns Q block `q_block` (rows `q_block·bm ..`), in the
    /// order the kernel runs it, for a sequence of `seq` keys, as runs of consecutive blocks
    /// through one stage (at most `masked_copies() + 1` runs, so walking a grid costs one step
    /// per run, not per block). Stage indices refer to the program [`Self::build`] makes.
    ///
    /// * torch (FlashAttention-2): `n_block` runs from `n_block_max − 1` down to 0 with
    ///   `n_block_max = min(seq/bn, ceil((q_block+1)·bm/bn))` when causal (`seq/bn` otherwise);
    ///   the first `masked_copies()` iterations go through the masked copies, one each, the rest
    ///   through the unmasked copy;
    /// * triton causal: blocks `0 .. q_block·bm/bn` through the unmasked copy, then the bm/bn
    ///   blocks of the diagonal through the masked copy; not causal: all `seq/bn` blocks unmasked.
    pub fn kv_runs(&self, q_block: u32, seq: u32) -> Vec<KvRun> {
        let n_kv = seq / self.bn;
        let mut out = Vec::new();
        let mut push = |stage: usize, first: u32, count: u32, descending: bool| {
            if count > 0 {
                out.push(KvRun {
                    stage,
                    first,
                    count,
                    descending,
                });
            }
        };
        match self.style {
            FlashStyle::Torch => {
                let n_max = if self.causal {
                    let rows = (q_block as u64 + 1) * self.bm as u64;
                    (n_kv as u64).min(rows.div_ceil(self.bn as u64)) as u32
                } else {
                    n_kv
                };
                let masked = self.masked_copies().min(n_max);
                for i in 0..masked {
                    push(1 + i as usize, n_max - 1 - i, 1, true);
                }
                if n_max > masked {
                    push(
                        1 + self.masked_copies() as usize,
                        n_max - 1 - masked,
                        n_max - masked,
                        true,
                    );
                }
            }
            FlashStyle::Triton => {
                if self.causal {
                    let off_band = (q_block as u64 * self.bm as u64 / self.bn as u64) as u32;
                    let on_band = self.bm / self.bn;
                    push(1, 0, off_band, false);
                    let end = off_band.saturating_add(on_band).min(n_kv);
                    push(2, off_band, end.saturating_sub(off_band), false);
                } else {
                    push(1, 0, n_kv, false);
                }
            }
        }
        out
    }

    /// Blocks of K/V visited by all the Q-block CTAs of one (batch, head) of a sequence of `seq`
    /// keys: Σ over `q_block < seq/bm` of the block count of [`Self::kv_runs`], in closed form
    /// (O(log seq), no walk over the Q blocks) so that a problem too large to count is refused
    /// before any loop runs. Per Q block the count is `min(seq/bn, ⌊(a·q_block + b)/bn⌋)`:
    ///
    /// * not causal: `seq/bn` (every block);
    /// * torch causal: `n_block_max = min(seq/bn, ⌈(q_block+1)·bm/bn⌉)`: `a = bm`, `b = bm + bn − 1`;
    /// * triton causal: `⌊q_block·bm/bn⌋` off the diagonal plus the `⌊bm/bn⌋` diagonal blocks,
    ///   at most `seq/bn`: `a = bm`, `b = bn·⌊bm/bn⌋`.
    ///
    /// Exact: at most `2^32 · 2^32` blocks, so it fits in `u128` (`tests/program_oracles.rs`
    /// compares it with the walk of [`Self::kv_runs`]).
    pub fn kv_visits(&self, seq: u32) -> u128 {
        let (bm, bn) = (self.bm as u128, self.bn as u128);
        if bm == 0 || bn == 0 {
            return 0;
        }
        let (nq, n_kv) = ((seq / self.bm) as u128, (seq / self.bn) as u128);
        let b = match (self.style, self.causal) {
            (_, false) => return nq * n_kv,
            (FlashStyle::Torch, true) => bm + bn - 1,
            (FlashStyle::Triton, true) => bn * (bm / bn),
        };
        // f(q) = ⌊(bm·q + b)/bn⌋ is non-decreasing: below q* it is < n_kv, from q* on it is capped.
        let q_star = if n_kv * bn <= b {
            0
        } else {
            (n_kv * bn - b).div_ceil(bm).min(nq)
        };
        floor_sum(q_star, bn, bm, b) + (nq - q_star) * n_kv
    }

    /// [`Self::kv_runs`] one block at a time.
    pub fn kv_schedule(&self, q_block: u32, seq: u32) -> Vec<KvVisit> {
        self.kv_runs(q_block, seq)
            .iter()
            .flat_map(|r| {
                (0..r.count).map(move |i| KvVisit {
                    kv_block: if r.descending {
                        r.first - i
                    } else {
                        r.first + i
                    },
                    stage: r.stage,
                })
            })
            .collect()
    }
}

/// `Σ_{i < n} ⌊(a·i + b)/m⌋` for `m > 0` in O(log m) steps (the Euclid-like reduction: take
/// `⌊a/m⌋` and `⌊b/m⌋` out, then swap the roles of `a` and `m`). Callers keep every term below
/// 2^66 and `n` below 2^33, so nothing overflows `u128`.
fn floor_sum(mut n: u128, mut m: u128, mut a: u128, mut b: u128) -> u128 {
    let mut sum = 0u128;
    loop {
        if a >= m {
            sum += n * (n.saturating_sub(1)) / 2 * (a / m);
            a %= m;
        }
        if b >= m {
            sum += n * (b / m);
            b %= m;
        }
        let y_max = a * n + b;
        if y_max < m {
            return sum;
        }
        n = y_max / m;
        b = y_max % m;
        std::mem::swap(&mut m, &mut a);
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn lcm(a: u32, b: u32) -> u32 {
    a / gcd(a, b) * b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::bank::schedule;

    fn torch() -> FlashTiling {
        FlashTiling {
            style: FlashStyle::Torch,
            bm: 64,
            bn: 64,
            head_dim: 128,
            warps: 4,
            causal: true,
        }
    }

    #[test]
    fn swizzle_removes_the_q_conflicts() {
        let cta = torch()
            .build(&"swizzle:3,3,4".parse().unwrap(), Arch::Sm80)
            .unwrap();
        for w in &cta.warps {
            for i in &w.stages[1].instrs {
                if let WarpInstr::Smem(op) = i {
                    assert_eq!(schedule(&op.request).bank_conflicts(), 0, "{op:?}");
                }
            }
        }
    }

    #[test]
    fn torch_warps_own_disjoint_rows() {
        let cta = torch().build(&LayoutSpec::row(), Arch::Sm80).unwrap();
        for (w, prog) in cta.warps.iter().enumerate() {
            for i in &prog.stages[1].instrs {
                if let WarpInstr::Mma(m) = i {
                    assert_eq!(m.m / 16, w as u32);
                }
            }
        }
        assert_eq!(cta.smem_bytes, 3 * 16384);
        assert_eq!(cta.warps[0].stages.len(), 4);
    }

    #[test]
    fn schedules_visit_every_needed_block_once() {
        for style in [FlashStyle::Torch, FlashStyle::Triton] {
            for causal in [false, true] {
                for (bm, bn) in [(64, 64), (128, 64), (64, 128), (128, 32)] {
                    let t = FlashTiling {
                        style,
                        bm,
                        bn,
                        head_dim: 64,
                        warps: 2,
                        causal,
                    };
                    if t.validate().is_err() {
                        continue;
                    }
                    let seq = 512;
                    for qb in 0..seq / bm {
                        let mut kv: Vec<u32> =
                            t.kv_schedule(qb, seq).iter().map(|v| v.kv_block).collect();
                        kv.sort();
                        let need = if causal {
                            ((qb + 1) * bm).div_ceil(bn).min(seq / bn)
                        } else {
                            seq / bn
                        };
                        assert_eq!(kv, (0..need).collect::<Vec<_>>(), "{t:?} q {qb}");
                    }
                }
            }
        }
    }

    #[test]
    fn bad_tilings_name_the_value() {
        let mut t = torch();
        t.warps = 8;
        let e = t.validate().unwrap_err().to_string();
        assert!(
            e.contains("--warps 8") && e.contains("allowed: 1, 2, 4"),
            "{e}"
        );
        t.warps = 3;
        assert!(t.validate().unwrap_err().to_string().contains("evenly"));
        t.warps = 4;
        t.bn = 24;
        assert!(t.validate().unwrap_err().to_string().contains("--bn 24"));
        let e = torch()
            .build(&"col".parse().unwrap(), Arch::Sm80)
            .unwrap_err()
            .to_string();
        assert!(e.contains("'col'") && e.contains("allowed"), "{e}");
        let e = torch()
            .build(&"pad:4".parse().unwrap(), Arch::Sm80)
            .unwrap_err()
            .to_string();
        assert!(e.contains("16-byte"), "{e}");
        let big = FlashTiling {
            bm: 128,
            bn: 128,
            head_dim: 256,
            ..torch()
        };
        let e = big
            .build(&LayoutSpec::row(), Arch::Sm75)
            .unwrap_err()
            .to_string();
        assert!(e.contains("sm_75") && e.contains("65536"), "{e}");
    }

    #[test]
    fn styles_parse_with_their_aliases() {
        for s in ["torch", "pytorch", "fa2"] {
            assert_eq!(FlashStyle::parse(s).unwrap(), FlashStyle::Torch, "{s}");
        }
        assert_eq!(FlashStyle::parse("triton").unwrap(), FlashStyle::Triton);
        assert!(FlashStyle::parse("cudnn").is_err());
        assert_eq!(
            (FlashStyle::Torch.name(), FlashStyle::Triton.name()),
            ("torch", "triton")
        );
    }

    /// Triton style gives each warp whole 16-key slabs of the block and 16-column slabs of V:
    /// bn = 16 has one key slab, too few for 2 warps; D = 16 one column slab.
    #[test]
    fn triton_style_needs_a_slab_per_warp() {
        let t = |bn, head_dim| FlashTiling {
            style: FlashStyle::Triton,
            bm: 64,
            bn,
            head_dim,
            warps: 2,
            causal: false,
        };
        let e = t(16, 64).validate().unwrap_err();
        assert!(
            matches!(&e, SimError::WarpSplit { warps: 2, slabs: 1, slab, .. } if slab == "16-key"),
            "{e}"
        );
        let e = t(64, 16).validate().unwrap_err();
        assert!(
            matches!(&e, SimError::WarpSplit { warps: 2, slabs: 1, slab, .. } if slab == "16-column"),
            "{e}"
        );
        assert!(t(32, 32).validate().is_ok());
    }

    /// Zero batch or heads is named; the sequence must be a positive multiple of lcm(bm, bn)
    /// (64 and 64: 64; 64 and 48: 192).
    #[test]
    fn check_problem_names_the_bad_value() {
        let p = |batch, heads, seq| FlashProblem { batch, heads, seq };
        let t = torch();
        assert!(t.check_problem(&p(1, 1, 64)).is_ok());
        assert!(matches!(
            t.check_problem(&p(0, 4, 64)),
            Err(SimError::NotAllowed {
                param: "--batch",
                ..
            })
        ));
        assert!(matches!(
            t.check_problem(&p(2, 0, 64)),
            Err(SimError::NotAllowed {
                param: "--heads",
                ..
            })
        ));
        assert!(matches!(
            t.check_problem(&p(1, 1, 0)),
            Err(SimError::NotMultiple { param: "--seq", .. })
        ));
        assert!(matches!(
            t.check_problem(&p(1, 1, 96)),
            Err(SimError::NotMultiple { param: "--seq", .. })
        ));
        let odd = FlashTiling { bn: 48, ..torch() };
        assert!(odd.check_problem(&p(1, 1, 192)).is_ok());
        let e = odd.check_problem(&p(1, 1, 128)).unwrap_err().to_string();
        assert!(e.contains("192"), "{e}");
    }

    /// A zero block size has nothing to visit (and must not divide by zero).
    #[test]
    fn kv_visits_of_a_zero_block_is_zero() {
        assert_eq!(FlashTiling { bm: 0, ..torch() }.kv_visits(128), 0);
        assert_eq!(FlashTiling { bn: 0, ..torch() }.kv_visits(128), 0);
        // Not causal, bm = bn = 64, 128 keys: 2 Q blocks x 2 K/V blocks.
        let full = FlashTiling {
            causal: false,
            ..torch()
        };
        assert_eq!(full.kv_visits(128), 4);
    }
}
