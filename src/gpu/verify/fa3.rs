//! Group `fa3` (sm_90, kernels built for sm_90a): the Hopper FlashAttention forward
//! `kernels/fa3_fwd.cu` in each variant of [`CASES`] (D 64/128, causal or not, f16/bf16),
//! compiled with NVRTC as `scripts/bench_fa3.py` compiles it with nvcc (`-arch=sm_90a
//! -use_fast_math`, `-DFA_D -DFA_CAUSAL -DFA_BF16`):
//!
//! * its SASS (`cuobjdump -sass`) against the static counts of [`crate::sim::fa3`] (`tilelab sim
//!   counts flash-attn --style hopper`): `HGMMA` by shape, any other `HGMMA` (expected none),
//!   `UTMALDG.2D`, `UTMASTG.2D`, `STS`, `LDSM`/`STSM` (expected none); one row per counter,
//!   expected vs found. These static figures are predictions from the code structure (every
//!   wgmma, TMA and store call once per code copy, the `#pragma unroll` loops unrolled): a
//!   difference is a finding about ptxas, to be explained, not a broken kernel;
//! * O of [`PROBLEM`] against an f64 reference, launched with the four TMA tensor maps made by
//!   `cuTensorMapEncodeTiled` (`[B·H·S rows, D columns]`, box `{64, 128}`, `{64, 64}` for O,
//!   128-byte swizzle) on the persistent grid `min(tiles, SMs)` and again on 3 CTAs, where
//!   every CTA loops over 2-3 tiles (both Q buffers, the K/V stage phases wrapping).
//!
//! Not checked here: the dynamic counts (executed HGMMA, TMA bytes, mbarrier operations) need a
//! profiler run of the kernel; they are the simulator's prediction only.

use super::{Check, Context, Group, Plan, hopper};
use crate::gpu::device::{Compiled, Gpu};
use crate::gpu::launch::Fa3Fwd;
use crate::gpu::sass;
use crate::gpu::source::FA3_FWD_CU;
use crate::sim::fa3::Fa3Tiling;
use crate::sim::mma::MmaDtype;
use crate::sim::program::FlashProblem;

/// The group.
pub const GROUP: Group = Group {
    name: "fa3",
    about: "Hopper FlashAttention kernel (kernels/fa3_fwd.cu, sm_90a): SASS HGMMA by shape, UTMALDG/UTMASTG, STS vs the simulator's static counts; O vs an f64 reference (TMA tensor maps from Rust)",
    run,
};

const G: &str = "fa3";

/// One variant of the kernel: compile-time `FA_D`, `FA_CAUSAL`, `FA_BF16` (the other constants
/// at their defaults: `FA_STAGES` 2, `FA_OVERLAP` 1, `FA_PINGPONG` 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fa3Case {
    /// Head dimension D (64 or 128).
    pub head_dim: u32,
    /// Causal masking.
    pub causal: bool,
    /// bf16 inputs and output (else f16).
    pub bf16: bool,
}

impl Fa3Case {
    const fn new(head_dim: u32, causal: bool, bf16: bool) -> Fa3Case {
        Fa3Case {
            head_dim,
            causal,
            bf16,
        }
    }

    /// The variant as the simulator models it (`tilelab sim counts flash-attn --style hopper
    /// --head-dim D [--causal] [--dtype bf16]`).
    pub fn tiling(&self) -> Fa3Tiling {
        let mut t = Fa3Tiling::new(self.head_dim, self.causal);
        t.dtype = if self.bf16 {
            MmaDtype::Bf16
        } else {
            MmaDtype::F16
        };
        t
    }

    /// Its name in the table: `fa3 d128 causal f16`.
    pub fn name(&self) -> String {
        format!(
            "fa3 d{} {} {}",
            self.head_dim,
            if self.causal { "causal" } else { "full" },
            if self.bf16 { "bf16" } else { "f16" }
        )
    }

    /// The `sim counts` command whose static counts the SASS rows compare with.
    pub fn command(&self) -> String {
        format!(
            "tilelab sim counts flash-attn --style hopper --head-dim {}{}{}",
            self.head_dim,
            if self.causal { " --causal" } else { "" },
            if self.bf16 { " --dtype bf16" } else { "" }
        )
    }

    /// The kernel source with this variant's `#define`s (the `-D` flags of the nvcc build).
    pub fn source(&self) -> String {
        format!(
            "#define FA_D {}\n#define FA_CAUSAL {}\n#define FA_BF16 {}\n{}",
            self.head_dim, self.causal as u32, self.bf16 as u32, FA3_FWD_CU
        )
    }
}

/// The 8 variants `scripts/bench_fa3.py` builds.
pub const CASES: &[Fa3Case] = &[
    Fa3Case::new(64, false, false),
    Fa3Case::new(64, true, false),
    Fa3Case::new(128, false, false),
    Fa3Case::new(128, true, false),
    Fa3Case::new(64, false, true),
    Fa3Case::new(64, true, true),
    Fa3Case::new(128, false, true),
    Fa3Case::new(128, true, true),
];

/// The problem O is checked on: 4 query blocks × 2 heads = 8 tiles (small, so the CPU
/// reference is quick).
pub const PROBLEM: FlashProblem = FlashProblem {
    batch: 1,
    heads: 2,
    seq: 512,
};

/// Relative error of O allowed: f16 as the FA2 group; bf16 keeps 8 bits of mantissa in P and O.
fn tolerance(bf16: bool) -> f64 {
    if bf16 { 1e-2 } else { 2e-3 }
}

fn compile(gpu: &Gpu, c: &Fa3Case) -> anyhow::Result<Compiled> {
    Ok(gpu.compile_for("fa3_fwd.cu", &c.source(), "sm_90a", &["-use_fast_math"])?)
}

fn run(ctx: &mut Context<'_>, _plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let what = format!("{} variants of kernels/fa3_fwd.cu", CASES.len());
    if let Some(row) = hopper::needs_sm90(ctx.arch, G, &what) {
        return Ok(vec![row]);
    }
    let mut out = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        let name = case.name();
        let gpu = ctx.gpu()?;
        ctx.progress
            .start(&format!("{name}: compiling with NVRTC (sm_90a)"));
        let compiled = compile(gpu, case);
        ctx.progress.finish();
        let compiled = match compiled {
            Ok(c) => c,
            Err(e) => {
                out.push(Check::new(
                    G,
                    format!("{name}: kernels/fa3_fwd.cu for sm_90a"),
                    "compiled",
                    "-",
                    false,
                    format!("{e:#}"),
                ));
                continue;
            }
        };
        out.extend(sass_checks(ctx, &compiled, i, case));
        ctx.progress.start(&format!("{name}: running"));
        let errs = launch(gpu, &compiled, i, case);
        ctx.progress.finish();
        match errs {
            Ok(rows) => out.extend(rows),
            Err(e) => out.push(Check::new(
                G,
                format!("{name}: O vs f64 reference"),
                "launched",
                "-",
                false,
                format!("{e:#}"),
            )),
        }
    }
    Ok(out)
}

/// One SASS row: `expected` lines of `what` against `found`.
fn sass_row(name: &str, what: &str, expected: u64, found: u64, detail: String) -> Check {
    Check::new(
        "sass",
        format!("{name}: {what}"),
        expected,
        found,
        expected == found,
        detail,
    )
}

/// The kernel's SASS counters against the simulator's static counts of the variant.
fn sass_checks(ctx: &Context<'_>, c: &Compiled, i: usize, case: &Fa3Case) -> Vec<Check> {
    let name = case.name();
    match super::sass_listing(ctx, &format!("{name}: SASS"), &c.cubin, &format!("fa3_{i}")) {
        Ok(l) => sass_rows(case, &l),
        Err(row) => vec![*row],
    }
}

/// The SASS rows of `case` from a listing (`cuobjdump -sass` counted by [`sass::count_mnemonics`]),
/// function `fa3_fwd`: one row per counter, the simulator's static count vs the listing's.
pub fn sass_rows(case: &Fa3Case, listing: &sass::Listing) -> Vec<Check> {
    let name = case.name();
    let f = "fa3_fwd";
    let st = case.tiling().static_counts();
    let found = |m: &str| u64::from(sass::count(listing, f, m));
    let with_prefix = |p: &str| -> Vec<(String, u32)> {
        listing
            .get(f)
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| k.starts_with(p))
                    .map(|(k, n)| (k.clone(), *n))
                    .collect()
            })
            .unwrap_or_default()
    };
    let list = |v: &[(String, u32)]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.iter()
                .map(|(k, n)| format!("{k} x{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let src = format!("predicted by `{}`", case.command());
    let d = case.head_dim;
    let mut rows = Vec::new();
    for (m, &want) in &st.hgmma {
        rows.push(sass_row(
            &name,
            m,
            want,
            found(m),
            format!(
                "{src}: S = Q·Kᵀ D/16 = {} per copy x 2 copies, P·V 8 per copy x 2 copies (by shape)",
                d / 16
            ),
        ));
    }
    let other: Vec<(String, u32)> = with_prefix(crate::sim::instr::SassClass::Hgmma.name())
        .into_iter()
        .filter(|(k, _)| !st.hgmma.contains_key(k))
        .collect();
    rows.push(sass_row(
        &name,
        "HGMMA of other shapes",
        0,
        other.iter().map(|(_, n)| u64::from(*n)).sum(),
        format!("found: {}", list(&other)),
    ));
    let sync_ops = [with_prefix("SYNCS"), with_prefix("BAR")].concat();
    let ldg = crate::sim::instr::tma_sass(crate::sim::instr::SassClass::Utmaldg, 2);
    let stg = crate::sim::instr::tma_sass(crate::sim::instr::SassClass::Utmastg, 2);
    rows.push(sass_row(
        &name,
        &ldg,
        st.utmaldg,
        found(&ldg),
        format!(
            "{src}: Q, K, V D/64 = {} boxes each; not predicted, for the record: {}",
            d / 64,
            list(&sync_ops)
        ),
    ));
    rows.push(sass_row(
        &name,
        &stg,
        st.utmastg,
        found(&stg),
        format!("{src}: O D/64 = {} boxes per consumer", d / 64),
    ));
    rows.push(sass_row(
        &name,
        crate::sim::instr::SassClass::Sts.name(),
        st.sts,
        found(crate::sim::instr::SassClass::Sts.name()),
        format!(
            "{src}: the epilogue's D/4 st.shared.b32 (prediction: none merged); all STS*: {}",
            list(&with_prefix(crate::sim::instr::SassClass::Sts.name()))
        ),
    ));
    let ld_st_matrix = [
        with_prefix(crate::sim::instr::SassClass::Ldsm.name()),
        with_prefix(crate::sim::instr::SassClass::Stsm.name()),
    ]
    .concat();
    rows.push(sass_row(
        &name,
        "LDSM + STSM",
        0,
        ld_st_matrix.iter().map(|(_, n)| u64::from(*n)).sum(),
        format!(
            "the kernel has no ldmatrix/stmatrix; found: {}",
            list(&ld_st_matrix)
        ),
    ));
    rows
}

/// Q, K, V of case `i`: `n` values each, uniform(-2, 2) rounded to the case's type (the FA2
/// group's generator, its f16 values rounded once more to bf16 for bf16 cases).
fn inputs(i: usize, n: usize, bf16: bool) -> [Vec<u16>; 3] {
    let [q, k, v] = super::fa2::inputs(100 + i, n);
    let bits = |x: Vec<half::f16>| -> Vec<u16> {
        x.into_iter()
            .map(|h| {
                if bf16 {
                    half::bf16::from_f32(h.to_f32()).to_bits()
                } else {
                    h.to_bits()
                }
            })
            .collect()
    };
    [bits(q), bits(k), bits(v)]
}

/// Relative error of `out` for case `case` on `inputs` (raw values of the case's type).
fn error_of(case: &Fa3Case, [q, k, v]: [&[u16]; 3], out: &[u16], d: usize, scale: f64) -> f64 {
    let shape = (
        (PROBLEM.batch * PROBLEM.heads) as usize,
        PROBLEM.seq as usize,
        d,
    );
    if case.bf16 {
        let t = |x: &[u16]| -> Vec<half::bf16> {
            x.iter().map(|&b| half::bf16::from_bits(b)).collect()
        };
        super::fa2::relative_error([&t(q), &t(k), &t(v)], &t(out), shape, case.causal, scale)
    } else {
        let t =
            |x: &[u16]| -> Vec<half::f16> { x.iter().map(|&b| half::f16::from_bits(b)).collect() };
        super::fa2::relative_error([&t(q), &t(k), &t(v)], &t(out), shape, case.causal, scale)
    }
}

/// Runs case `i` on [`PROBLEM`] with the full persistent grid and with 3 CTAs; one row each.
fn launch(gpu: &Gpu, c: &Compiled, i: usize, case: &Fa3Case) -> anyhow::Result<Vec<Check>> {
    let t = case.tiling();
    let smem = t
        .dynamic_smem_bytes()
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| anyhow::anyhow!("shared memory of {} does not fit u32", case.name()))?;
    let f = Fa3Fwd::load(gpu, c, smem)?;
    let sms = Fa3Fwd::sms(gpu)?;
    let p = PROBLEM;
    let (bh, d) = (p.batch * p.heads, case.head_dim);
    let n = (bh * p.seq * d) as usize;
    let [q, k, v] = inputs(i, n, case.bf16);
    let scale = 1.0f32 / (d as f32).sqrt();
    let mut rows = Vec::new();
    for ctas in [sms, 3] {
        let sched = t.schedule(&p, ctas)?;
        let out = f.run(gpu, [&q, &k, &v], (bh, p.seq, d), scale, sched.grid as u32)?;
        let err = error_of(case, [&q, &k, &v], &out, d as usize, scale as f64);
        let tiles: Vec<u64> = sched.per_cta.iter().map(|w| w.tiles).collect();
        let lo = tiles.iter().min().copied().unwrap_or(0);
        let hi = tiles.iter().max().copied().unwrap_or(0);
        rows.push(Check::new(
            G,
            format!("{}: O vs f64 reference, {} CTAs", case.name(), sched.grid),
            format!("rel err < {:.0e}", tolerance(case.bf16)),
            format!("{err:.1e}"),
            err < tolerance(case.bf16),
            format!(
                "B=1 H=2 S=512 ({} tiles, {lo}-{hi} per CTA), inputs uniform(-2,2) rounded to {}",
                sched.tiles,
                if case.bf16 { "bf16" } else { "f16" }
            ),
        ));
    }
    // The CTA that ends last zeroes the scheduler's words, so the same buffer serves the next
    // launch (both launches above used it: a word left over would have skipped tiles in the
    // second, and the error row would show it too).
    let words = f.sched_words(gpu)?;
    rows.push(Check::new(
        G,
        format!("{}: tile scheduler words after the launches", case.name()),
        "0 0".to_string(),
        format!("{} {}", words[0], words[1]),
        words == [0, 0],
        "sched[0] tiles claimed, sched[1] CTAs done: zeroed by the last CTA".to_string(),
    ));
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_the_kernels_variants_and_fit_sm90() {
        assert_eq!(CASES.len(), 8);
        for c in CASES {
            let t = c.tiling();
            t.validate().unwrap();
            t.check_problem(&PROBLEM).unwrap();
            let src = c.source();
            assert!(src.starts_with(&format!("#define FA_D {}\n", c.head_dim)));
            assert!(src.contains("fa3_fwd("));
        }
        // On 3 CTAs the 8 tiles are 3, 3, 2 per CTA: every CTA loops.
        let s = CASES[0].tiling().schedule(&PROBLEM, 3).unwrap();
        let tiles: Vec<u64> = s.per_cta.iter().map(|w| w.tiles).collect();
        assert_eq!(tiles, vec![3, 3, 2]);
    }

    /// A listing with the predicted lines of d128 f16 (3 copies x 8 S + 2 x 8 P·V = 40
    /// HGMMA.64x128x16.F32; 3 x 2 UTMALDG.2D; 2 UTMASTG.2D; 128/4 = 32 STS) passes every row; one
    /// planted HGMMA of another shape fails exactly the "other shapes" row.
    #[test]
    fn sass_rows_compare_by_counter() {
        let line = |op: &str, n: usize| -> String {
            (0..n)
                .map(|k| {
                    format!(
                        "        /*{:04x}*/                   {op} R0, R1 ;  /* 0x0 */\n",
                        k * 16
                    )
                })
                .collect()
        };
        let text = format!(
            "\tFunction : fa3_fwd\n{}{}{}{}{}",
            line("HGMMA.64x128x16.F32", 40),
            line("UTMALDG.2D", 6),
            line("UTMASTG.2D", 2),
            line("STS", 33),
            line("SYNCS.ARRIVE.TRANS64.A1T0", 3)
        );
        let case = Fa3Case::new(128, false, false);
        let rows = sass_rows(&case, &sass::count_mnemonics(&text));
        assert_eq!(rows.len(), 6);
        assert!(
            rows.iter()
                .all(|r| r.verdict == crate::gpu::verify::Verdict::Pass),
            "{rows:?}"
        );
        assert!(
            rows[2].detail.contains("SYNCS.ARRIVE.TRANS64.A1T0 x3"),
            "{}",
            rows[2].detail
        );
        let planted = format!("{text}{}", line("HGMMA.64x64x16.F32", 1));
        let rows = sass_rows(&case, &sass::count_mnemonics(&planted));
        let bad: Vec<&str> = rows
            .iter()
            .filter(|r| r.verdict == crate::gpu::verify::Verdict::Fail)
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(bad, ["fa3 d128 full f16: HGMMA of other shapes"]);
    }

    #[test]
    fn the_command_names_the_same_variant() {
        assert_eq!(
            Fa3Case::new(128, true, true).command(),
            "tilelab sim counts flash-attn --style hopper --head-dim 128 --causal --dtype bf16"
        );
        assert_eq!(Fa3Case::new(64, false, false).name(), "fa3 d64 full f16");
    }
}
