//! Group `fa2`: the FlashAttention-2 forward lesson kernel (`kernels/fa2_fwd.cu`) under each
//! case of [`CASES`] on [`PROBLEM`]: O against an f64 reference, its SASS `LDSM` / `LDSM.T` /
//! `HMMA` against the simulator's static counts of the same tiling, and (under ncu) executed
//! `LDSM` and shared-load wavefronts against the simulator's dynamic counts and bank model.

use super::{Check, Context, Group, Plan, kernel};
use crate::gpu::device::{Compiled, Gpu};
use crate::gpu::launch::Fa2Fwd;
use crate::gpu::sass;
use crate::gpu::source::FA2_FWD_CU;
use crate::sim::arch::Arch;
use crate::sim::counts;
use crate::sim::layout::LayoutSpec;
use crate::sim::program::{CtaProgram, FlashProblem, FlashStyle, FlashTiling};

/// The group.
pub const GROUP: Group = Group {
    name: "fa2",
    about: "FlashAttention-2 kernel: O, SASS counts, executed LDSM and wavefronts under ncu",
    run,
};

/// One variant of the kernel: compile-time `FA_D`, `FA_BM`, `FA_BN`, `FA_CAUSAL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fa2Case {
    /// Head dimension d.
    pub head_dim: u32,
    /// Query rows per CTA (B_r).
    pub bm: u32,
    /// Key rows per loop iteration (B_c).
    pub bn: u32,
    /// Causal masking.
    pub causal: bool,
}

impl Fa2Case {
    const fn new(head_dim: u32, bm: u32, bn: u32, causal: bool) -> Fa2Case {
        Fa2Case {
            head_dim,
            bm,
            bn,
            causal,
        }
    }

    /// The tiling `tilelab sim counts flash-attn --style torch --warps 4` describes.
    pub fn tiling(&self) -> FlashTiling {
        FlashTiling {
            style: FlashStyle::Torch,
            bm: self.bm,
            bn: self.bn,
            head_dim: self.head_dim,
            warps: 4,
            causal: self.causal,
        }
    }

    /// The kernel's layout: it XORs each row's 16-byte chunks with row % 8, i.e.
    /// `Swizzle<3,3,3>` on 64-element rows and `Swizzle<3,3,4>` on 128-element rows.
    pub fn layout(&self) -> &'static str {
        if self.head_dim == 64 {
            "swizzle:3,3,3"
        } else {
            "swizzle:3,3,4"
        }
    }

    /// Dynamic shared memory, bytes: Q (bm × d) and two (K, V) buffers of bn × d, f16.
    pub fn smem_bytes(&self) -> u32 {
        (self.bm + 4 * self.bn) * self.head_dim * 2
    }

    /// Its name in the table: `fa2 d128 bm64 causal` (`bnN` added when bn is not 64).
    pub fn name(&self) -> String {
        let bn = if self.bn == 64 {
            String::new()
        } else {
            format!(" bn{}", self.bn)
        };
        format!(
            "fa2 d{} bm{}{bn} {}",
            self.head_dim,
            self.bm,
            if self.causal { "causal" } else { "full" }
        )
    }

    /// The kernel source with this case's `#define`s.
    pub fn source(&self) -> String {
        format!(
            "#define FA_D {}\n#define FA_BM {}\n#define FA_BN {}\n#define FA_CAUSAL {}\n{}",
            self.head_dim, self.bm, self.bn, self.causal as u32, FA2_FWD_CU
        )
    }
}

/// The kernel's variants verify builds: bm = bn = 64; bm = 128 > bn = 64 (two masked copies
/// when causal); bm = 64 < bn = 128, where bm is not a multiple of bn (one masked copy,
/// `ceil(bm/bn)`, and query block q sees `ceil((q+1)·bm/bn)` key blocks: a floor would drop the
/// diagonal block of every even q).
pub const CASES: &[Fa2Case] = &[
    Fa2Case::new(64, 64, 64, false),
    Fa2Case::new(64, 64, 64, true),
    Fa2Case::new(128, 64, 64, false),
    Fa2Case::new(128, 64, 64, true),
    Fa2Case::new(128, 128, 64, false),
    Fa2Case::new(128, 128, 64, true),
    Fa2Case::new(64, 64, 128, false),
    Fa2Case::new(64, 64, 128, true),
    Fa2Case::new(128, 64, 128, false),
    Fa2Case::new(128, 64, 128, true),
];

/// The problem every case runs on (small, so the CPU reference is quick).
pub const PROBLEM: FlashProblem = FlashProblem {
    batch: 1,
    heads: 2,
    seq: 512,
};

/// Case `i`: its tiling and the simulator's program for `arch`.
///
/// # Errors
/// A case the simulator rejects for `arch`.
pub fn program(i: usize, arch: Arch) -> anyhow::Result<(FlashTiling, CtaProgram)> {
    let t = CASES[i].tiling();
    let cta = t.build(&LayoutSpec::parse(CASES[i].layout())?, arch)?;
    Ok((t, cta))
}

/// Q, K, V of case `i`: `n` values each, uniform(-2, 2) rounded to f16 ([`crate::seeded`],
/// seeded by the case index).
pub fn inputs(i: usize, n: usize) -> [Vec<half::f16>; 3] {
    let mut rng = crate::seeded::Seeded::new(0x9E37_79B9_7F4A_7C15u64 ^ i as u64);
    let mut draw = || -> Vec<half::f16> {
        (0..n)
            .map(|_| half::f16::from_f64(rng.uniform(-2.0, 2.0)))
            .collect()
    };
    [draw(), draw(), draw()]
}

/// Relative error `‖O − O_ref‖₂ / ‖O_ref‖₂` of attention output `out` (f16 or bf16) against an
/// f64 reference `softmax(scale · Q·Kᵀ [causal mask]) · V` computed from the same-typed inputs. Shapes:
/// `heads` heads of `seq` rows of `d` elements, contiguous.
pub fn relative_error<T: Copy + Into<f64>>(
    [q, k, v]: [&[T]; 3],
    out: &[T],
    (heads, seq, d): (usize, usize, usize),
    causal: bool,
    scale: f64,
) -> f64 {
    let (mut num, mut den) = (0f64, 0f64);
    for head in 0..heads {
        let at = |x: &[T], r: usize, c: usize| -> f64 { x[(head * seq + r) * d + c].into() };
        for r in 0..seq {
            let keys = if causal { r + 1 } else { seq };
            let sc: Vec<f64> = (0..keys)
                .map(|j| (0..d).map(|c| at(q, r, c) * at(k, j, c)).sum::<f64>() * scale)
                .collect();
            let mx = sc.iter().cloned().fold(f64::MIN, f64::max);
            let e: Vec<f64> = sc.iter().map(|x| (x - mx).exp()).collect();
            let z: f64 = e.iter().sum();
            for c in 0..d {
                let want = (0..keys).map(|j| e[j] * at(v, j, c)).sum::<f64>() / z;
                let got = at(out, r, c);
                num += (got - want) * (got - want);
                den += want * want;
            }
        }
    }
    (num / den).sqrt()
}

/// Compiles case `i` (with `-use_fast_math`).
fn compile(gpu: &Gpu, i: usize) -> anyhow::Result<Compiled> {
    Ok(gpu.compile_with("fa2_fwd.cu", &CASES[i].source(), &["-use_fast_math"])?)
}

/// Runs case `i` on [`PROBLEM`]; returns the relative error of O (see [`relative_error`]).
fn launch(gpu: &Gpu, c: &Compiled, i: usize) -> anyhow::Result<f64> {
    let case = CASES[i];
    let f = Fa2Fwd::load(gpu, c, case.smem_bytes())?;
    let p = PROBLEM;
    let (bh, sq, d) = (
        (p.batch * p.heads) as usize,
        p.seq as usize,
        case.head_dim as usize,
    );
    let [q, k, v] = inputs(i, bh * sq * d);
    let bits = |x: &Vec<half::f16>| x.iter().map(|v| v.to_bits()).collect::<Vec<u16>>();
    let scale = 1.0f32 / (case.head_dim as f32).sqrt();
    let out = f.run(
        gpu,
        [&bits(&q), &bits(&k), &bits(&v)],
        p.seq as i32,
        scale,
        (p.seq / case.bm, bh as u32),
    )?;
    let out: Vec<half::f16> = out.into_iter().map(half::f16::from_bits).collect();
    Ok(relative_error(
        [&q, &k, &v],
        &out,
        (bh, sq, d),
        case.causal,
        scale as f64,
    ))
}

/// The probe mode ([`super::Probe::Fa2`]): every case launched once.
///
/// # Errors
/// A kernel that does not compile, a driver error.
pub fn probe(gpu: &Gpu) -> anyhow::Result<String> {
    for i in 0..CASES.len() {
        launch(gpu, &compile(gpu, i)?, i)?;
    }
    Ok(format!("launched {}", CASES.len()))
}

fn run(ctx: &mut Context<'_>, plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let mut out = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        let name = case.name();
        let (_, cta) = program(i, ctx.arch)?;
        let gpu = ctx.gpu()?;
        ctx.progress
            .start(&format!("{name}: compiling and running"));
        let result = compile(gpu, i).and_then(|c| launch(gpu, &c, i).map(|err| (c, err)));
        ctx.progress.finish();
        let (compiled, err) = result?;
        out.push(Check::new(
            "fa2",
            format!("{name}: O vs f64 reference"),
            "rel err < 2e-3",
            format!("{err:.1e}"),
            err < 2e-3,
            "B=1 H=2 S=512, inputs uniform(-2,2) rounded to f16",
        ));
        out.extend(sass_checks(ctx, &compiled, i, &cta, &name)?);
    }
    out.extend(dynamic_checks(ctx, plan)?);
    Ok(out)
}

/// `LDSM.16.M88.4`, `LDSM.16.MT88.4` and `HMMA.16816.F32` in the kernel's SASS against the
/// static counts of the simulator's warp program (all loop copies).
fn sass_checks(
    ctx: &Context<'_>,
    c: &Compiled,
    i: usize,
    cta: &CtaProgram,
    name: &str,
) -> anyhow::Result<Vec<Check>> {
    let listing =
        match super::sass_listing(ctx, &format!("{name}: SASS"), &c.cubin, &format!("fa2_{i}")) {
            Ok(l) => l,
            Err(row) => return Ok(vec![*row]),
        };
    let want = counts::static_counts(&cta.warps[0]).per_kernel;
    Ok([
        (crate::sim::instr::Instruction::LDSM_X4.sass(), want.ldsm),
        (
            crate::sim::instr::Instruction::LDSM_X4_T.sass(),
            want.ldsm_t,
        ),
        ("HMMA.16816.F32", want.hmma),
    ]
    .into_iter()
    .map(|(m, w)| {
        let g = sass::count(&listing, "fa2_fwd", m) as u64;
        Check::new(
            "sass",
            format!("{name}: {m}"),
            w,
            g,
            g == w,
            "static, all loop copies of the warp program",
        )
    })
    .collect())
}

/// Under ncu: executed LDSM + LDSM.T and the two shared-load wavefront checks of every case.
fn dynamic_checks(ctx: &mut Context<'_>, plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let table = match kernel::metrics(
        ctx,
        plan,
        "fa2",
        "FlashAttention-2",
        "fa2_fwd",
        "--probe-fa2",
        CASES.len(),
    ) {
        Ok(t) => t,
        Err(why) => return Ok(vec![*why]),
    };
    let mut out = Vec::new();
    for i in 0..CASES.len() {
        let name = CASES[i].name();
        let (t, cta) = program(i, ctx.arch)?;
        let dynamic = counts::dynamic_counts(&t, &PROBLEM, &cta.warps[0])?;
        let trips: Vec<u64> = dynamic
            .stages
            .iter()
            .map(|s| s.executions_per_line / t.warps as u64)
            .collect();
        let banks = counts::bank_summary(&cta, &trips);
        let m = &table[&(i as u64)];
        let ldsm = m.get(kernel::LDSM_EXECUTED).copied().unwrap_or(-1.0) as i64;
        let want_ldsm = (dynamic.total.ldsm + dynamic.total.ldsm_t) as i64;
        out.push(Check::new(
            "fa2",
            format!("{name}: LDSM + LDSM.T executed"),
            want_ldsm,
            ldsm,
            ldsm == want_ldsm,
            format!("{}, B=1 H=2 S=512", kernel::LDSM_EXECUTED),
        ));
        out.extend(kernel::wavefront_checks(
            "fa2",
            &name,
            m,
            banks.total.wavefronts,
            banks.total.conflicts,
            "B=1 H=2 S=512",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: &[f64]) -> Vec<half::f16> {
        v.iter().map(|&x| half::f16::from_f64(x)).collect()
    }

    /// Two keys, d = 1: q = 1, k = (0, ln 3), v = (1, 5), scale 1. Row 0 causal sees key 0
    /// only (O = 1); full, softmax(0, ln 3) = (1/4, 3/4) and O = 1/4 + 15/4 = 4. Row 1 sees
    /// both keys either way (O = 4).
    #[test]
    fn the_reference_is_softmax_attention() {
        let (q, k, v) = (h(&[1.0, 1.0]), h(&[0.0, 3f64.ln()]), h(&[1.0, 5.0]));
        // ln 3 in f16 is 1.0986328, so 3 becomes e^1.0986328 = 2.99991: O(full) = 3.99991.
        let w = 3f64.ln();
        let w = half::f16::from_f64(w).to_f64().exp();
        let full = (1.0 + 5.0 * w) / (1.0 + w);
        let exact = |o: &[f64], causal| relative_error([&q, &k, &v], &h(o), (1, 2, 1), causal, 1.0);
        assert!(exact(&[1.0, full], true) < 1e-3);
        assert!(exact(&[full, full], false) < 1e-3);
        // Causal output checked without the mask: row 0 is off by 3 of a norm of ~5.7.
        assert!(exact(&[1.0, full], false) > 0.4);
    }

    #[test]
    fn cases_build_for_sm90_and_fit_its_shared_memory() {
        for (i, c) in CASES.iter().enumerate() {
            let (_, cta) = program(i, Arch::Sm90).unwrap();
            assert!(c.smem_bytes() <= 227 * 1024, "{}", c.name());
            assert!(cta.smem_bytes <= c.smem_bytes(), "{}", c.name());
            assert!(PROBLEM.seq.is_multiple_of(c.bm) && PROBLEM.seq.is_multiple_of(c.bn));
        }
    }
}
