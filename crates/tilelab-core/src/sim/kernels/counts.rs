//! Counting a warp program: static instruction counts per stage, per loop copy and per kernel;
//! dynamic execution counts per SASS line, from the kernel's loop simulated CTA by CTA; bank
//! conflicts of every shared access; and the two articles' closed-form formulas beside them.
//!
//! Every count here comes from walking a [`CtaProgram`] built by [`crate::sim::program`]. The
//! formulas ([`gemm_formulas`], [`flash_formulas`], [`flash_dynamic_formulas`]) are the
//! explanation, computed independently; the tests check that both agree over sweeps of tilings.
//!
//! # Example: the FA2 counts article's dynamic counts
//! ```
//! use tilelab_core::sim::arch::Arch;
//! use tilelab_core::sim::counts::dynamic_counts;
//! use tilelab_core::sim::layout::LayoutSpec;
//! use tilelab_core::sim::program::{FlashProblem, FlashStyle, FlashTiling, StageKind};
//! let t = FlashTiling { style: FlashStyle::Torch, bm: 64, bn: 64, head_dim: 128, warps: 4, causal: true };
//! let cta = t.build(&LayoutSpec::row(), Arch::Sm80).unwrap();
//! let p = FlashProblem { batch: 2, heads: 16, seq: 1024 };
//! let d = dynamic_counts(&t, &p, &cta.warps[0]).unwrap();
//! let per_line = |k| d.stages.iter().find(|s| s.kind == k).unwrap().executions_per_line;
//! assert_eq!(per_line(StageKind::Prologue), 2048);
//! assert_eq!(per_line(StageKind::Unmasked), 15360);
//! assert_eq!(d.mean_line_executions, 8704.0);
//! ```

use std::ops::{Add, AddAssign};

use serde::Serialize;

use crate::sim::error::SimError;
use crate::sim::program::{
    CtaProgram, FlashProblem, FlashStyle, FlashTiling, GemmCase, GemmTiling, InstrClass, Product,
    Split, Stage, StageKind, TileId, WarpInstr, WarpProgram,
};

/// How many instructions of each class (static lines or dynamic executions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct ClassCounts {
    /// `LDSM.16.M88.4` (`ldmatrix.x4`).
    pub ldsm: u64,
    /// `LDSM.16.MT88.4` (`ldmatrix.x4.trans`).
    pub ldsm_t: u64,
    /// `HMMA.16816.F32` (`mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`).
    pub hmma: u64,
    /// `STS` (`st.shared.*`).
    pub sts: u64,
    /// `LDS` (`ld.shared.*`).
    pub lds: u64,
}

impl ClassCounts {
    /// Counts the instructions of a slice by walking it.
    pub fn of(instrs: &[WarpInstr]) -> ClassCounts {
        let mut c = ClassCounts::default();
        for i in instrs {
            c.add_n(i.class(), 1);
        }
        c
    }

    /// The count of one class.
    pub fn get(&self, class: InstrClass) -> u64 {
        match class {
            InstrClass::Ldsm => self.ldsm,
            InstrClass::LdsmT => self.ldsm_t,
            InstrClass::Hmma => self.hmma,
            InstrClass::Sts => self.sts,
            InstrClass::Lds => self.lds,
        }
    }

    /// Adds `n` to one class.
    pub fn add_n(&mut self, class: InstrClass, n: u64) {
        let f = match class {
            InstrClass::Ldsm => &mut self.ldsm,
            InstrClass::LdsmT => &mut self.ldsm_t,
            InstrClass::Hmma => &mut self.hmma,
            InstrClass::Sts => &mut self.sts,
            InstrClass::Lds => &mut self.lds,
        };
        *f += n;
    }

    /// Every count multiplied by `f`, or `None` if one overflows `u64`.
    pub fn checked_scaled(self, f: u64) -> Option<ClassCounts> {
        let mut c = ClassCounts::default();
        for k in InstrClass::ALL {
            c.add_n(k, self.get(k).checked_mul(f)?);
        }
        Some(c)
    }

    /// The class-wise sum, or `None` if one overflows `u64`.
    pub fn checked_add(self, o: ClassCounts) -> Option<ClassCounts> {
        let mut c = ClassCounts::default();
        for k in InstrClass::ALL {
            c.add_n(k, self.get(k).checked_add(o.get(k))?);
        }
        Some(c)
    }

    /// Sum over classes.
    pub fn total(&self) -> u64 {
        InstrClass::ALL.iter().map(|&c| self.get(c)).sum()
    }
}

impl Add for ClassCounts {
    type Output = ClassCounts;
    fn add(mut self, o: ClassCounts) -> ClassCounts {
        self += o;
        self
    }
}

impl AddAssign for ClassCounts {
    fn add_assign(&mut self, o: ClassCounts) {
        for k in InstrClass::ALL {
            self.add_n(k, o.get(k));
        }
    }
}

/// Static counts of one stage of a warp program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StageCounts {
    /// `prologue`, `masked diagonal step 0`, `unmasked`, ….
    pub label: String,
    /// Its place in the loop.
    pub kind: StageKind,
    /// Unrolled masking step, if any.
    pub step: Option<u32>,
    /// Instructions (= SASS lines modelled) in the stage.
    pub counts: ClassCounts,
}

/// Static counts of a warp program (= of the kernel's SASS, which every warp runs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StaticCounts {
    /// Per stage, in code order.
    pub stages: Vec<StageCounts>,
    /// Number of copies of the loop body (masked and unmasked stages).
    pub loop_copies: u32,
    /// Counts of one loop copy, when every copy holds the same counts (always, for the programs
    /// of [`FlashTiling::build`]); the body for a GEMM.
    pub per_copy: Option<ClassCounts>,
    /// Sum over all stages: the kernel's SASS.
    pub per_kernel: ClassCounts,
}

/// Walks a warp program and counts its instructions per stage.
pub fn static_counts(p: &WarpProgram) -> StaticCounts {
    let stages: Vec<StageCounts> = p
        .stages
        .iter()
        .map(|s| StageCounts {
            label: s.label(),
            kind: s.kind,
            step: s.step,
            counts: ClassCounts::of(&s.instrs),
        })
        .collect();
    let copies: Vec<ClassCounts> = p
        .stages
        .iter()
        .zip(&stages)
        .filter(|(s, _)| s.is_loop_copy() || s.kind == StageKind::Body)
        .map(|(_, c)| c.counts)
        .collect();
    let per_copy = match copies.first() {
        Some(&c) if copies.iter().all(|&x| x == c) => Some(c),
        _ => None,
    };
    let per_kernel = stages
        .iter()
        .fold(ClassCounts::default(), |a, s| a + s.counts);
    StaticCounts {
        loop_copies: p.stages.iter().filter(|s| s.is_loop_copy()).count() as u32,
        stages,
        per_copy,
        per_kernel,
    }
}

/// True when every warp runs the same code: same stages, same instruction classes in the same
/// order (only addresses and coordinates may differ), as one SASS kernel requires.
pub fn warps_share_code(cta: &CtaProgram) -> bool {
    let sig = |w: &WarpProgram| -> Vec<(StageKind, Option<u32>, Vec<InstrClass>)> {
        w.stages
            .iter()
            .map(|s| (s.kind, s.step, s.instrs.iter().map(|i| i.class()).collect()))
            .collect()
    };
    let first = cta.warps.first().map(sig);
    cta.warps.iter().all(|w| Some(sig(w)) == first)
}

/// Per-warp and per-CTA counts of a GEMM tile, with its A and B loads apart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GemmCounts {
    /// The article's case.
    pub case: GemmCase,
    /// Counts of one warp (warp 0; all warps run the same code).
    pub per_warp: ClassCounts,
    /// `ldmatrix.x4` of A per warp.
    pub a_loads_per_warp: u64,
    /// `ldmatrix.x4` of B per warp.
    pub b_loads_per_warp: u64,
    /// Sum over the CTA's warps (each warp loads its own copy of the shared operand).
    pub per_cta: ClassCounts,
}

/// Walks a GEMM CTA program (from [`GemmTiling::build`]).
pub fn gemm_counts(t: &GemmTiling, cta: &CtaProgram) -> GemmCounts {
    let w0 = &cta.warps[0];
    let tile_loads = |id: TileId| -> u64 {
        w0.stages
            .iter()
            .flat_map(|s| &s.instrs)
            .filter(|i| matches!(i, WarpInstr::Smem(op) if op.tile == id))
            .count() as u64
    };
    let of_warp = |w: &WarpProgram| {
        w.stages.iter().fold(ClassCounts::default(), |a, s| {
            a + ClassCounts::of(&s.instrs)
        })
    };
    GemmCounts {
        case: t.case(),
        per_warp: of_warp(w0),
        a_loads_per_warp: tile_loads(TileId::A),
        b_loads_per_warp: tile_loads(TileId::B),
        per_cta: cta
            .warps
            .iter()
            .fold(ClassCounts::default(), |a, w| a + of_warp(w)),
    }
}

// ---------------------------------------------------------------------------------------------
// Formulas

/// A closed-form count, as the FA2 counts article writes it, with the numbers substituted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Formula {
    /// What it counts, e.g. `LDSM per warp per copy`.
    pub quantity: String,
    /// The instruction class counted, if one.
    pub class: Option<InstrClass>,
    /// Symbolic form, e.g. `bm·d/(16·16·w) + bn·d/(16·16)`.
    pub symbolic: String,
    /// Numbers substituted, without the final value, e.g.
    /// `64·128/(16·16·4) + 64·128/(16·16) = 8 + 32`.
    pub substituted: String,
    /// Its value (an integer for every count; the mean over lines may be fractional).
    pub value: f64,
}

fn formula(quantity: &str, class: Option<InstrClass>, sym: &str, sub: String, v: f64) -> Formula {
    Formula {
        quantity: quantity.to_string(),
        class,
        symbolic: sym.to_string(),
        substituted: sub,
        value: v,
    }
}

/// The FA2 counts article's GEMM counting rules for the case of `t` (per warp): A loads, B loads, their sum,
/// and HMMA. With `n` warps only one dimension is split (rows: A is divided; cols: B is).
///
/// Source: FA2 counts article, "张量核指令数量计算" (the four cases). The article's text lost its `+` signs;
/// the loads of the n-warp case are `M/(16·n) + N/16` (a sum, as `8 + 32 = 40` shows).
pub fn gemm_formulas(t: &GemmTiling) -> Vec<Formula> {
    let (m, n, k, w) = (t.m as u64, t.n as u64, t.k as u64, t.warps as u64);
    let (a_div, b_div) = match t.split {
        Split::Rows => (w, 1),
        Split::Cols => (1, w),
    };
    let a_val = m * k / (256 * a_div);
    let b_val = n * k / (256 * b_div);
    let hmma = m * n * k / (16 * 16 * 8 * w);
    let ws = |d: u64| {
        if d == 1 {
            String::new()
        } else {
            "·n".to_string()
        }
    };
    let wn = |d: u64| {
        if d == 1 {
            String::new()
        } else {
            format!("·{d}")
        }
    };
    let (a_sym, a_sub, b_sym, b_sub, h_sym, h_sub) = if k == 16 {
        (
            format!("M/(16{})", ws(a_div)),
            format!("{m}/(16{})", wn(a_div)),
            format!("N/(16{})", ws(b_div)),
            format!("{n}/(16{})", wn(b_div)),
            format!("M·N/(16·8{})", ws(w)),
            format!("{m}·{n}/(16·8{})", wn(w)),
        )
    } else {
        (
            format!("M·K/(16·16{})", ws(a_div)),
            format!("{m}·{k}/(16·16{})", wn(a_div)),
            format!("N·K/(16·16{})", ws(b_div)),
            format!("{n}·{k}/(16·16{})", wn(b_div)),
            format!("M·N·K/(16·16·8{})", ws(w)),
            format!("{m}·{n}·{k}/(16·16·8{})", wn(w)),
        )
    };
    vec![
        formula(
            &format!("{} of A per warp", InstrClass::Ldsm.short()),
            Some(InstrClass::Ldsm),
            &a_sym,
            a_sub,
            a_val as f64,
        ),
        formula(
            &format!("{} of B per warp", InstrClass::Ldsm.short()),
            Some(InstrClass::Ldsm),
            &b_sym,
            b_sub,
            b_val as f64,
        ),
        formula(
            &format!("{} per warp", InstrClass::Ldsm.short()),
            Some(InstrClass::Ldsm),
            &format!("{a_sym} + {b_sym}"),
            format!("{a_val} + {b_val}"),
            (a_val + b_val) as f64,
        ),
        formula(
            "HMMA per warp",
            Some(InstrClass::Hmma),
            &h_sym,
            h_sub,
            hmma as f64,
        ),
    ]
}

/// The FA2 counts article's per-copy counts of one FlashAttention loop body, per warp, and the per-kernel
/// totals (copies × per copy). Symbols: bm, bn, d = head dim, w = warps.
///
/// * torch: `LDSM = bm·d/(16·16·w) + bn·d/(16·16)`, `LDSM.T = bn·d/(16·16)`,
///   `HMMA = bm·bn·d/(16·8·16·w) + bm·d·bn/(16·8·16·w)`;
/// * triton: `LDSM = bm·d/(16·16) + bn·d/(16·16·w) + bm·bn/(16·16)` (P reloaded),
///   `LDSM.T = bn·d/(16·16·w)` (V split over warps), same HMMA, `STS = 2·bm·bn/(16·8·w)`.
pub fn flash_formulas(t: &FlashTiling) -> Vec<Formula> {
    let (bm, bn, d, w) = (t.bm as u64, t.bn as u64, t.head_dim as u64, t.warps as u64);
    let hq = bm * bn * d / (16 * 8 * 16 * w);
    let hmma_sym = "bm·bn·d/(16·8·16·w) + bm·d·bn/(16·8·16·w)";
    let hmma_sub =
        format!("{bm}·{bn}·{d}/(16·8·16·{w}) + {bm}·{d}·{bn}/(16·8·16·{w}) = {hq} + {hq}");
    let mut v = Vec::new();
    let pc = |c: &str| format!("{c} per warp per copy");
    match t.style {
        FlashStyle::Torch => {
            let (qa, kb) = (bm * d / (256 * w), bn * d / 256);
            v.push(formula(
                &pc(InstrClass::Ldsm.short()),
                Some(InstrClass::Ldsm),
                "bm·d/(16·16·w) + bn·d/(16·16)",
                format!("{bm}·{d}/(16·16·{w}) + {bn}·{d}/(16·16) = {qa} + {kb}"),
                (qa + kb) as f64,
            ));
            v.push(formula(
                &pc(InstrClass::LdsmT.short()),
                Some(InstrClass::LdsmT),
                "bn·d/(16·16)",
                format!("{bn}·{d}/(16·16)"),
                (bn * d / 256) as f64,
            ));
            v.push(formula(
                &pc(InstrClass::Sts.short()),
                Some(InstrClass::Sts),
                "0 (P stays in registers)",
                "0".into(),
                0.0,
            ));
        }
        FlashStyle::Triton => {
            let (qa, kb, pa) = (bm * d / 256, bn * d / (256 * w), bm * bn / 256);
            v.push(formula(
                &pc(InstrClass::Ldsm.short()),
                Some(InstrClass::Ldsm),
                "bm·d/(16·16) + bn·d/(16·16·w) + bm·bn/(16·16)",
                format!(
                    "{bm}·{d}/(16·16) + {bn}·{d}/(16·16·{w}) + {bm}·{bn}/(16·16) = {qa} + {kb} + {pa}"
                ),
                (qa + kb + pa) as f64,
            ));
            v.push(formula(
                &pc(InstrClass::LdsmT.short()),
                Some(InstrClass::LdsmT),
                "bn·d/(16·16·w)",
                format!("{bn}·{d}/(16·16·{w})"),
                (bn * d / (256 * w)) as f64,
            ));
            v.push(formula(
                &pc(InstrClass::Sts.short()),
                Some(InstrClass::Sts),
                "2·bm·bn/(16·8·w)",
                format!("2·{bm}·{bn}/(16·8·{w})"),
                (2 * bm * bn / (128 * w)) as f64,
            ));
        }
    }
    v.push(formula(
        &pc(crate::sim::instr::SassClass::Hmma.name()),
        Some(InstrClass::Hmma),
        hmma_sym,
        hmma_sub,
        (2 * hq) as f64,
    ));
    let copies = t.masked_copies() as u64 + 1;
    let per_copy: Vec<Formula> = v.clone();
    for f in per_copy {
        let c = f.class.expect("per-copy formulas name a class");
        v.push(formula(
            &format!("{} per kernel", c.short()),
            Some(c),
            "copies · per copy",
            format!("{copies}·{}", f.value),
            f.value * copies as f64,
        ));
    }
    v
}

/// Closed forms of the dynamic counts of [`dynamic_counts`] (FA2 counts article): executions of each line
/// of each stage, summed over all warps of all CTAs. `None` where no closed form is given here
/// (causal with bm not a multiple of bn).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DynamicFormulas {
    /// Lines outside the loop: `B·H·(S/bm)·w` (FA2 counts article: `2·16·16·4 = 2048`).
    pub outside: Formula,
    /// Each line of a masked copy (each unrolled step for torch).
    pub masked: Option<Formula>,
    /// Each line of the unmasked copy (FA2 counts article: `2048·(16 − 1)/2 = 15360`).
    pub unmasked: Option<Formula>,
    /// Mean executions over the lines of the loop copies, which all hold the same number of
    /// lines (FA2 counts article: `(2048 + 15360)/2 = 8704`).
    pub mean: Option<Formula>,
}

/// The closed forms for tiling `t` on problem `p`.
pub fn flash_dynamic_formulas(t: &FlashTiling, p: &FlashProblem) -> DynamicFormulas {
    let (b, h, s, w) = (p.batch as u64, p.heads as u64, p.seq as u64, t.warps as u64);
    let (bm, bn) = (t.bm as u64, t.bn as u64);
    let nq = s / bm;
    let out = b * h * nq * w;
    let outside = formula(
        "per line outside the loop",
        None,
        "B·H·(S/bm)·w",
        format!("{b}·{h}·({s}/{bm})·{w}"),
        out as f64,
    );
    let (masked, unmasked) = if t.causal && bm % bn == 0 {
        let r = bm / bn;
        let um = out * (nq - 1) * r / 2;
        let um_f = formula(
            "per unmasked line",
            None,
            "B·H·(S/bm)·w · (S/bm − 1)/2 · bm/bn",
            format!("{out}·({nq} − 1)/2·{r}"),
            um as f64,
        );
        let m_f = match t.style {
            FlashStyle::Torch => formula(
                "per masked line (each unrolled step)",
                None,
                "B·H·(S/bm)·w",
                format!("{b}·{h}·({s}/{bm})·{w}"),
                out as f64,
            ),
            FlashStyle::Triton => formula(
                "per masked line",
                None,
                "B·H·(S/bm)·w · bm/bn",
                format!("{out}·{r}"),
                (out * r) as f64,
            ),
        };
        (Some(m_f), Some(um_f))
    } else if !t.causal {
        let nk = s / bn;
        match t.style {
            FlashStyle::Torch => (
                Some(formula(
                    "per masked line (peeled 1st iteration)",
                    None,
                    "B·H·(S/bm)·w",
                    format!("{b}·{h}·({s}/{bm})·{w}"),
                    out as f64,
                )),
                Some(formula(
                    "per unmasked line",
                    None,
                    "B·H·(S/bm)·w · (S/bn − 1)",
                    format!("{out}·({nk} − 1)"),
                    (out * (nk - 1)) as f64,
                )),
            ),
            FlashStyle::Triton => (
                None,
                Some(formula(
                    "per loop line",
                    None,
                    "B·H·(S/bm)·w · S/bn",
                    format!("{out}·{nk}"),
                    (out * nk) as f64,
                )),
            ),
        }
    } else {
        (None, None)
    };
    let mean = unmasked.as_ref().map(|um| {
        let masked_copies = t.masked_copies() as u64;
        let mv = masked.as_ref().map_or(0.0, |m| m.value);
        let copies = masked_copies + 1;
        let v = (mv * masked_copies as f64 + um.value) / copies as f64;
        let (sym, sub) = if masked_copies == 0 {
            ("unmasked".to_string(), format!("{}", um.value))
        } else if masked_copies == 1 {
            (
                "(masked + unmasked)/2".to_string(),
                format!("({} + {})/2", mv, um.value),
            )
        } else {
            (
                format!("({masked_copies}·masked + unmasked)/{copies}"),
                format!("({masked_copies}·{mv} + {})/{copies}", um.value),
            )
        };
        formula("mean per loop line", None, &sym, sub, v)
    });
    DynamicFormulas {
        outside,
        masked,
        unmasked,
        mean,
    }
}

/// A formula beside the count the program walk gave.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FormulaCheck {
    /// The closed form.
    pub formula: Formula,
    /// What it was compared with (`per copy`, `per kernel`, a stage label, …).
    pub against: String,
    /// What walking the program gave.
    pub program: f64,
    /// `formula.value == program`.
    pub agrees: bool,
}

fn check(formula: Formula, against: &str, program: f64) -> FormulaCheck {
    FormulaCheck {
        agrees: formula.value == program,
        against: against.to_string(),
        formula,
        program,
    }
}

/// [`gemm_formulas`] beside the walked counts (A loads, B loads, LDSM and HMMA per warp).
pub fn gemm_checks(t: &GemmTiling, g: &GemmCounts) -> Vec<FormulaCheck> {
    let walked = [
        g.a_loads_per_warp,
        g.b_loads_per_warp,
        g.per_warp.ldsm,
        g.per_warp.hmma,
    ];
    gemm_formulas(t)
        .into_iter()
        .zip(walked)
        .map(|(f, w)| check(f, "warp 0", w as f64))
        .collect()
}

/// [`flash_formulas`] beside the walked static counts: per-copy formulas against every loop copy
/// (a copy that differs makes the check fail), per-kernel ones against the kernel total.
pub fn flash_checks(t: &FlashTiling, s: &StaticCounts) -> Vec<FormulaCheck> {
    let fs = flash_formulas(t);
    let n = fs.len() / 2;
    fs.into_iter()
        .enumerate()
        .map(|(i, f)| {
            let c = f.class.expect("flash formulas name a class");
            let (against, walked) = if i < n {
                match s.per_copy {
                    Some(pc) => ("each loop copy", pc.get(c) as f64),
                    None => ("loop copies differ", f64::NAN),
                }
            } else {
                ("all stages", s.per_kernel.get(c) as f64)
            };
            check(f, against, walked)
        })
        .collect()
}

/// [`flash_dynamic_formulas`] beside the simulated executions: the outside formula against every
/// stage outside the loop, the masked one against every masked copy, the unmasked one against the
/// unmasked copy, the mean against the mean over lines.
pub fn flash_dynamic_checks(
    t: &FlashTiling,
    p: &FlashProblem,
    d: &DynamicCounts,
) -> Vec<FormulaCheck> {
    let f = flash_dynamic_formulas(t, p);
    let mut out = Vec::new();
    let per_kind = |pred: &dyn Fn(StageKind) -> bool| -> Vec<(String, f64)> {
        d.stages
            .iter()
            .filter(|s| pred(s.kind))
            .map(|s| (s.label.clone(), s.executions_per_line as f64))
            .collect()
    };
    let mut push_all = |formula: &Formula, walked: Vec<(String, f64)>| {
        for (label, w) in walked {
            out.push(check(formula.clone(), &label, w));
        }
    };
    push_all(
        &f.outside,
        per_kind(&|k| matches!(k, StageKind::Prologue | StageKind::Epilogue)),
    );
    if let Some(m) = &f.masked {
        push_all(m, per_kind(&|k| k == StageKind::Masked));
    }
    if let Some(u) = &f.unmasked {
        push_all(u, per_kind(&|k| k == StageKind::Unmasked));
    }
    if let Some(m) = f.mean {
        out.push(check(m, "all lines", d.mean_line_executions));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Dynamic counts

/// Executions of one stage's lines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StageExec {
    /// Stage label.
    pub label: String,
    /// Stage kind.
    pub kind: StageKind,
    /// Unrolled masking step, if any.
    pub step: Option<u32>,
    /// Modelled lines in the stage.
    pub lines: u64,
    /// How often the stage runs, summed over every warp of every CTA: the execution count of
    /// each of its SASS lines (what Nsight Compute shows per line).
    pub executions_per_line: u64,
}

/// Dynamic execution counts of a FlashAttention kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DynamicCounts {
    /// CTAs in the grid: `B·H·(S/bm)`.
    pub ctas: u64,
    /// Warps per CTA.
    pub warps_per_cta: u32,
    /// Per stage (code order).
    pub stages: Vec<StageExec>,
    /// Executions per instruction class, summed over all lines.
    pub total: ClassCounts,
    /// Modelled lines in the program.
    pub lines: u64,
    /// Mean of the executions per line over the modelled lines (lines outside the loop count
    /// too; the FlashAttention programs have none there).
    pub mean_line_executions: f64,
}

/// Refuses, before any loop runs, a problem whose dynamic counts cannot fit: the CTA count
/// `B·H·(S/bm)` in `u64`, and the executions of all lines summed over every class, times 32 (the
/// most wavefronts one request takes), in `u64`. The sum is taken in closed form from
/// [`FlashTiling::kv_visits`] (blocks visited per head) with the smallest loop copy, so it is
/// exact whenever the loop copies hold equal counts (every program [`FlashTiling::build`]
/// makes) and a lower bound otherwise: a problem refused here would overflow in
/// [`dynamic_counts`]' walk, and one that passes is walked (whose own checks still apply).
/// O(stages + log S).
///
/// # Errors
/// [`SimError::Overflow`] naming `--batch --heads --seq`.
pub fn check_dynamic_fit(
    t: &FlashTiling,
    p: &FlashProblem,
    prog: &WarpProgram,
) -> Result<(), SimError> {
    let overflow = || SimError::Overflow {
        problem: format!("--batch {} --heads {} --seq {}", p.batch, p.heads, p.seq),
        quantity: "instruction counts",
    };
    let bh = p.batch as u128 * p.heads as u128;
    let nq = p.seq.checked_div(t.bm).unwrap_or(0) as u128;
    if bh * nq > u64::MAX as u128 {
        return Err(overflow());
    }
    let class_sum = |s: &Stage| ClassCounts::of(&s.instrs).total() as u128;
    let outside: u128 = prog
        .stages
        .iter()
        .filter(|s| !s.is_loop_copy())
        .map(class_sum)
        .sum();
    let min_copy = prog
        .stages
        .iter()
        .filter(|s| s.is_loop_copy())
        .map(class_sum)
        .min()
        .unwrap_or(0);
    // Per head: nq runs of the stages outside the loop, kv_visits runs of one copy each.
    let least = nq
        .checked_mul(outside)
        .and_then(|o| t.kv_visits(p.seq).checked_mul(min_copy)?.checked_add(o))
        .and_then(|per_head| per_head.checked_mul(bh))
        .and_then(|n| n.checked_mul(t.warps as u128))
        .and_then(|n| n.checked_mul(32));
    match least {
        Some(n) if n <= u64::MAX as u128 => Ok(()),
        _ => Err(overflow()),
    }
}

/// Runs the kernel's loop for every CTA of the grid and counts how often each stage of `prog`
/// runs. The grid is B·H·(S/bm) CTAs; CTAs with the same Q block follow the same schedule, so the
/// schedule is walked once per Q block and counted B·H times. Each warp of a CTA runs every stage
/// the CTA runs, so executions per line = (Σ over CTAs of the stage's trips) · warps.
///
/// # Errors
/// Those of [`FlashTiling::check_problem`]; a problem whose counts (or 32 times their sum, the
/// most wavefronts they can take) do not fit in `u64`.
pub fn dynamic_counts(
    t: &FlashTiling,
    p: &FlashProblem,
    prog: &WarpProgram,
) -> Result<DynamicCounts, SimError> {
    t.check_problem(p)?;
    let overflow = || SimError::Overflow {
        problem: format!("--batch {} --heads {} --seq {}", p.batch, p.heads, p.seq),
        quantity: "instruction counts",
    };
    check_dynamic_fit(t, p, prog)?;
    // Σ over CTAs in u128 (B·H·(S/bm) CTAs, each at most S/bn trips: < 2^96), checked to u64 below.
    let bh = p.batch as u128 * p.heads as u128;
    let nq = p.seq / t.bm;
    let mut trips = vec![0u128; prog.stages.len()];
    for qb in 0..nq {
        for (i, s) in prog.stages.iter().enumerate() {
            if !s.is_loop_copy() {
                trips[i] += bh;
            }
        }
        for r in t.kv_runs(qb, p.seq) {
            trips[r.stage] += r.count as u128 * bh;
        }
    }
    let warps = t.warps as u128;
    let mut total = ClassCounts::default();
    let mut lines = 0u64;
    let mut line_exec = 0u128;
    let mut stages = Vec::with_capacity(prog.stages.len());
    for (s, &tr) in prog.stages.iter().zip(&trips) {
        let per_line = u64::try_from(tr * warps).map_err(|_| overflow())?;
        let c = ClassCounts::of(&s.instrs)
            .checked_scaled(per_line)
            .ok_or_else(overflow)?;
        total = total.checked_add(c).ok_or_else(overflow)?;
        lines += s.instrs.len() as u64;
        line_exec += s.instrs.len() as u128 * per_line as u128;
        stages.push(StageExec {
            label: s.label(),
            kind: s.kind,
            step: s.step,
            lines: s.instrs.len() as u64,
            executions_per_line: per_line,
        });
    }
    // The sum of all five classes must fit too (`ClassCounts::total`), times 32: no request
    // takes more than 32 wavefronts, so every wavefront total of `bank_summary` fits as well.
    InstrClass::ALL
        .iter()
        .try_fold(0u64, |acc, &k| acc.checked_add(total.get(k)))
        .and_then(|n| n.checked_mul(32))
        .ok_or_else(overflow)?;
    Ok(DynamicCounts {
        ctas: u64::try_from(bh * nq as u128).map_err(|_| overflow())?,
        warps_per_cta: t.warps,
        stages,
        total,
        lines,
        mean_line_executions: if lines == 0 {
            0.0
        } else {
            line_exec as f64 / lines as f64
        },
    })
}

// ---------------------------------------------------------------------------------------------
// Bank conflicts

pub use crate::sim::stats::AccessStats;

/// Bank statistics of one (tile, instruction class) pair.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BankRow {
    /// Tile accessed.
    pub tile: TileId,
    /// Instruction class.
    pub class: InstrClass,
    /// One iteration: every warp of one CTA through one loop copy (the body for a GEMM).
    pub per_iteration: AccessStats,
    /// Whole kernel: every stage's accesses times its trips, over all warps and CTAs.
    pub total: AccessStats,
}

/// Bank conflicts of every shared access of a program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BankSummary {
    /// Per (tile, class), sorted.
    pub rows: Vec<BankRow>,
    /// Sum of the rows' `per_iteration`.
    pub per_iteration: AccessStats,
    /// Sum of the rows' `total`.
    pub total: AccessStats,
}

/// Runs every shared access of every warp through the wavefront model
/// ([`crate::sim::bank::WarpRequest::cost`], as the executor does).
/// `stage_trips[s]` is how often stage `s` runs per warp over the whole grid (1 for a GEMM body);
/// its length must equal the number of stages.
pub fn bank_summary(cta: &CtaProgram, stage_trips: &[u64]) -> BankSummary {
    let mut rows: Vec<BankRow> = Vec::new();
    let iter_stage = cta.warps.first().and_then(|w| {
        w.stages
            .iter()
            .position(|s| s.is_loop_copy() || s.kind == StageKind::Body)
    });
    for w in &cta.warps {
        for (si, s) in w.stages.iter().enumerate() {
            let trips = stage_trips.get(si).copied().unwrap_or(0);
            for i in &s.instrs {
                let WarpInstr::Smem(op) = i else { continue };
                let one = AccessStats::from(op.request.cost());
                let class = i.class();
                let row = match rows
                    .iter_mut()
                    .position(|x| x.tile == op.tile && x.class == class)
                {
                    Some(k) => &mut rows[k],
                    None => {
                        rows.push(BankRow {
                            tile: op.tile,
                            class,
                            per_iteration: AccessStats::default(),
                            total: AccessStats::default(),
                        });
                        rows.last_mut().expect("just pushed")
                    }
                };
                if Some(si) == iter_stage {
                    row.per_iteration += one;
                }
                // dynamic_counts checked every class total times 32 (the most wavefronts one
                // request takes) against u64, so its trips cannot overflow these sums.
                row.total = row.total.saturating_add_times(one, trips);
            }
        }
    }
    rows.sort_by_key(|r| (r.tile, r.class));
    let mut per_iteration = AccessStats::default();
    let mut total = AccessStats::default();
    for r in &rows {
        per_iteration += r.per_iteration;
        total += r.total;
    }
    BankSummary {
        rows,
        per_iteration,
        total,
    }
}

/// One line of a warp program, for listings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Line {
    /// Stage index.
    pub stage: usize,
    /// Stage label.
    pub stage_label: String,
    /// Index of the line inside its stage.
    pub index: usize,
    /// Class.
    pub class: InstrClass,
    /// SASS mnemonic.
    pub sass: &'static str,
    /// Tile accessed (shared-memory lines).
    pub tile: Option<TileId>,
    /// Product (mma lines).
    pub product: Option<Product>,
    /// Element coordinates: (row, col) of the block for shared-memory lines; (m, n, k) origin for
    /// mma lines.
    pub coords: Vec<u32>,
    /// Wavefronts of the access (shared-memory lines).
    pub wavefronts: Option<u32>,
    /// Bank conflicts of the access (shared-memory lines).
    pub bank_conflicts: Option<u32>,
    /// Executions of the line over the whole grid, when known.
    pub executions: Option<u64>,
}

/// Lists a warp's program line by line, with wavefronts per access and, when `executions_per_stage`
/// is given, the executions of each line.
pub fn lines(prog: &WarpProgram, executions_per_stage: Option<&[u64]>) -> Vec<Line> {
    let mut out = Vec::new();
    for (si, s) in prog.stages.iter().enumerate() {
        let label = s.label();
        for (ii, i) in s.instrs.iter().enumerate() {
            let (tile, product, coords, wf, bc) = match i {
                WarpInstr::Smem(op) => {
                    let c = op.request.cost();
                    (
                        Some(op.tile),
                        None,
                        vec![op.row, op.col],
                        Some(c.wavefronts),
                        Some(c.bank_conflicts()),
                    )
                }
                WarpInstr::Mma(m) => (None, Some(m.product), vec![m.m, m.n, m.k], None, None),
            };
            out.push(Line {
                stage: si,
                stage_label: label.clone(),
                index: ii,
                class: i.class(),
                sass: i.sass(),
                tile,
                product,
                coords,
                wavefronts: wf,
                bank_conflicts: bc,
                executions: executions_per_stage.and_then(|e| e.get(si).copied()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::arch::Arch;
    use crate::sim::layout::LayoutSpec;

    fn fa(style: FlashStyle) -> FlashTiling {
        FlashTiling {
            style,
            bm: 64,
            bn: 64,
            head_dim: 128,
            warps: 4,
            causal: true,
        }
    }
    const ARTICLE: FlashProblem = FlashProblem {
        batch: 2,
        heads: 16,
        seq: 1024,
    };

    #[test]
    fn torch_reproduces_seed_000() {
        let t = fa(FlashStyle::Torch);
        let cta = t.build(&LayoutSpec::row(), Arch::Sm80).unwrap();
        let s = static_counts(&cta.warps[0]);
        let c = s.per_copy.unwrap();
        assert_eq!((c.ldsm, c.ldsm_t, c.hmma, c.sts), (40, 32, 128, 0));
        let k = s.per_kernel;
        assert_eq!((k.ldsm, k.ldsm_t, k.hmma), (80, 64, 256));
        assert_eq!(s.loop_copies, 2);
        assert!(warps_share_code(&cta));
    }

    #[test]
    fn triton_reproduces_seed_000() {
        let t = fa(FlashStyle::Triton);
        let cta = t.build(&LayoutSpec::row(), Arch::Sm80).unwrap();
        let s = static_counts(&cta.warps[0]);
        let c = s.per_copy.unwrap();
        assert_eq!((c.ldsm, c.ldsm_t, c.hmma, c.sts), (56, 8, 128, 16));
        let k = s.per_kernel;
        assert_eq!((k.ldsm, k.ldsm_t, k.hmma), (112, 16, 256));
    }

    #[test]
    fn dynamic_counts_reproduce_seed_000() {
        for style in [FlashStyle::Torch, FlashStyle::Triton] {
            let t = fa(style);
            let cta = t.build(&LayoutSpec::row(), Arch::Sm80).unwrap();
            let d = dynamic_counts(&t, &ARTICLE, &cta.warps[0]).unwrap();
            assert_eq!(d.ctas, 512);
            for s in &d.stages {
                let want = match s.kind {
                    StageKind::Unmasked => 15360,
                    _ => 2048,
                };
                assert_eq!(s.executions_per_line, want, "{style:?} {}", s.label);
            }
            assert_eq!(d.mean_line_executions, 8704.0);
        }
    }

    #[test]
    fn gemm_torch_qk_is_the_article_example() {
        // Q·Kᵀ of FA2 counts article: 64x128 by 64x128 with 4 warps split over rows: 8 + 32 LDSM, 64 HMMA.
        let t = GemmTiling {
            m: 64,
            n: 64,
            k: 128,
            warps: 4,
            split: Split::Rows,
        };
        let cta = t.build(&LayoutSpec::row(), Arch::Sm80).unwrap();
        let g = gemm_counts(&t, &cta);
        assert_eq!((g.a_loads_per_warp, g.b_loads_per_warp), (8, 32));
        assert_eq!((g.per_warp.ldsm, g.per_warp.hmma), (40, 64));
        assert_eq!(g.per_cta.hmma, 256);
        let f = gemm_formulas(&t);
        assert_eq!((f[2].substituted.as_str(), f[2].value), ("8 + 32", 40.0));
    }

    #[test]
    fn bank_summary_scales_with_trips() {
        let t = fa(FlashStyle::Torch);
        let cta = t.build(&LayoutSpec::row(), Arch::Sm80).unwrap();
        let trips = vec![1, 1, 1, 1];
        let b = bank_summary(&cta, &trips);
        // Row-major 64x128 f16: every ldmatrix matrix is 8-way -> 32 wavefronts per LDSM.
        assert_eq!(b.per_iteration.requests, 4 * 72);
        assert_eq!(b.per_iteration.wavefronts, 4 * 72 * 32);
        assert_eq!(b.total.requests, 2 * b.per_iteration.requests);
        let sw = t
            .build(&"swizzle:3,3,4".parse().unwrap(), Arch::Sm80)
            .unwrap();
        assert_eq!(bank_summary(&sw, &trips).total.conflicts, 0);
    }

    // Third mutation round (2026-12-01): programs built by hand, counts by hand.

    fn mma() -> WarpInstr {
        WarpInstr::Mma(crate::sim::program::MmaOp {
            product: crate::sim::program::Product::AB,
            m: 0,
            n: 0,
            k: 0,
        })
    }

    fn stage(kind: StageKind, instrs: Vec<WarpInstr>) -> crate::sim::program::Stage {
        crate::sim::program::Stage {
            kind,
            step: None,
            instrs,
        }
    }

    /// Loop copies with different instructions (a masked copy of 2 HMMA, an unmasked one of
    /// 1) have no single per-copy count; the kernel's count is their sum.
    #[test]
    fn copies_that_differ_have_no_per_copy_count() {
        let w = WarpProgram {
            warp: 0,
            stages: vec![
                stage(StageKind::Masked, vec![mma(), mma()]),
                stage(StageKind::Unmasked, vec![mma()]),
            ],
        };
        let s = static_counts(&w);
        assert_eq!(s.per_copy, None);
        assert_eq!(s.loop_copies, 2);
        assert_eq!(s.per_kernel.hmma, 3);
        assert_eq!(s.per_kernel.total(), 3);
        let same = WarpProgram {
            warp: 0,
            stages: vec![
                stage(StageKind::Masked, vec![mma()]),
                stage(StageKind::Unmasked, vec![mma()]),
            ],
        };
        assert_eq!(static_counts(&same).per_copy.map(|c| c.hmma), Some(1));
    }

    /// Warps whose stages hold different instruction classes cannot be one SASS kernel.
    #[test]
    fn warps_with_different_code_do_not_share_it() {
        let w = |warp, n| WarpProgram {
            warp,
            stages: vec![stage(StageKind::Body, vec![mma(); n])],
        };
        let cta = |b| CtaProgram {
            tiles: vec![],
            warps: vec![w(0, 2), w(1, b)],
            smem_bytes: 0,
        };
        assert!(warps_share_code(&cta(2)));
        assert!(!warps_share_code(&cta(3)));
    }

    #[test]
    fn checked_arithmetic_of_class_counts() {
        let mut c = ClassCounts::default();
        c.add_n(InstrClass::Ldsm, 3);
        c.add_n(InstrClass::Hmma, 5);
        assert_eq!(c.total(), 8);
        assert_eq!(
            c.checked_scaled(4).map(|x| (x.ldsm, x.hmma)),
            Some((12, 20))
        );
        assert_eq!(c.checked_scaled(u64::MAX), None);
        let d = c.checked_add(c).unwrap();
        assert_eq!((d.ldsm, d.hmma, d.lds), (6, 10, 0));
        let mut big = ClassCounts::default();
        big.add_n(InstrClass::Lds, u64::MAX);
        assert_eq!(big.checked_add(big), None);
    }
}
