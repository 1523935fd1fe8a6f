//! Group `gemm`: the tiled GEMM lesson kernel ([`crate::gpu::source::gemm`]) under each case
//! of [`CASES`]: its result against an exact reference, its SASS `LDSM`/`HMMA` counts, and
//! (under ncu) executed `LDSM` and shared-load wavefronts, each against the simulator's program
//! of the same tiling.

use std::rc::Rc;

use super::{Check, Context, Group, Plan, kernel};
use crate::gpu::device::{Compiled, Gpu};
use crate::gpu::launch::{GemmTile, LaunchConfig};
use crate::gpu::sass;
use crate::gpu::source::gemm::source;
use crate::sim::arch::Arch;
use crate::sim::counts;
use crate::sim::layout::LayoutSpec;
use crate::sim::program::{CtaProgram, GemmTiling, Split};

/// The group.
pub const GROUP: Group = Group {
    name: "gemm",
    about: "GEMM lesson kernel: C, SASS counts, executed LDSM and wavefronts under ncu",
    run,
};

/// The GEMM cases: (M, N, K, warps, split, layout). The FA2 counts article's four cases (one warp
/// K = 16; n warps; K != 16; n warps with K != 16) and the 64x64x128 tile under three
/// shared-memory layouts.
pub const CASES: &[(u32, u32, u32, u32, Split, &str)] = &[
    (32, 32, 16, 1, Split::Rows, "row"),
    (32, 64, 16, 2, Split::Cols, "row"),
    (64, 64, 128, 1, Split::Rows, "row"),
    (64, 64, 128, 4, Split::Rows, "row"),
    (64, 64, 128, 4, Split::Rows, "pad:8"),
    (64, 64, 128, 4, Split::Rows, "swizzle:3,3,3"),
    (64, 64, 128, 1, Split::Rows, "pad:8"),
];

/// CTAs per GEMM launch.
pub const GRID: u32 = 4;

/// Case `i`: its tiling, the simulator's program for `arch`, and its name in the table.
///
/// # Errors
/// A case the simulator rejects for `arch` (tiles over its shared memory).
pub fn case(i: usize, arch: Arch) -> anyhow::Result<(GemmTiling, CtaProgram, String)> {
    let (m, n, k, warps, split, layout) = CASES[i];
    let t = GemmTiling {
        m,
        n,
        k,
        warps,
        split,
    };
    let cta = t.build(&LayoutSpec::parse(layout)?, arch)?;
    let name = format!("gemm {m}x{n}x{k} {warps}w {split:?} {layout}");
    Ok((t, cta, name))
}

/// Small-integer f16 inputs (exact in f32 accumulation): A is M×K, B is N×K, and the exact
/// C = A·Bᵀ (M×N, row-major).
pub fn inputs(t: &GemmTiling, seed: u32) -> (Vec<u16>, Vec<u16>, Vec<f32>) {
    let mut rng = crate::seeded::Seeded::new(u64::from(seed));
    let mut next = || rng.int_in(-2, 2) as f32;
    let (m, n, k) = (t.m as usize, t.n as usize, t.k as usize);
    let a: Vec<f32> = (0..m * k).map(|_| next()).collect();
    let b: Vec<f32> = (0..n * k).map(|_| next()).collect();
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|kk| a[i * k + kk] * b[j * k + kk]).sum();
        }
    }
    let h = |v: &Vec<f32>| {
        v.iter()
            .map(|&x| half::f16::from_f32(x).to_bits())
            .collect()
    };
    (h(&a), h(&b), c)
}

/// The kernel of case `i`, compiled once per run (the `occupancy` group asks for it too).
pub(super) fn compiled(ctx: &mut Context<'_>, i: usize) -> anyhow::Result<Rc<Compiled>> {
    let (t, cta, _) = case(i, ctx.arch)?;
    ctx.compiled(&format!("gemm_tile#{i}"), |gpu| {
        Ok(gpu.compile("gemm_tile.cu", &source(&t, &cta)?)?)
    })
}

/// Launches case `i` ([`GRID`] CTAs); returns C of every CTA and the exact C of one.
fn launch(gpu: &Gpu, c: &Compiled, i: usize) -> anyhow::Result<(Vec<f32>, Vec<f32>)> {
    let (t, cta, _) = case(i, gpu.arch)?;
    let (a, b, want) = inputs(&t, i as u32 + 1);
    let cfg = LaunchConfig {
        grid_dim: (GRID, 1, 1),
        block_dim: (t.warps * 32, 1, 1),
        shared_mem_bytes: cta.smem_bytes,
    };
    let got = GemmTile::load(gpu, c)?.run(gpu, &a, &b, (t.m * t.n) as usize, cfg)?;
    Ok((got, want))
}

/// The probe mode ([`super::Probe::Gemm`]): every case launched once.
///
/// # Errors
/// A kernel that does not compile, a driver error.
pub fn probe(gpu: &Gpu) -> anyhow::Result<String> {
    for i in 0..CASES.len() {
        let (t, cta, _) = case(i, gpu.arch)?;
        let c = gpu.compile("gemm_tile.cu", &source(&t, &cta)?)?;
        launch(gpu, &c, i)?;
    }
    Ok(format!("launched {}", CASES.len()))
}

fn run(ctx: &mut Context<'_>, plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let mut out = Vec::new();
    for i in 0..CASES.len() {
        let c = compiled(ctx, i)?;
        let (t, cta, name) = case(i, ctx.arch)?;
        let (got, want) = launch(ctx.gpu()?, &c, i)?;
        let bad = (0..GRID as usize)
            .flat_map(|k| got[k * want.len()..(k + 1) * want.len()].iter().zip(&want))
            .filter(|(g, w)| g != w)
            .count();
        out.push(Check::new(
            "gemm",
            format!("{name}: C = A·Bᵀ"),
            "exact",
            format!("{bad} wrong"),
            bad == 0,
            "small-integer inputs, every CTA",
        ));
        out.extend(sass_checks(ctx, &c, i, &t, &cta, &name)?);
    }
    out.extend(dynamic_checks(ctx, plan)?);
    Ok(out)
}

/// `LDSM.16.M88.4` and `HMMA.16816.F32` in the kernel's SASS against the simulator's warp
/// program.
fn sass_checks(
    ctx: &Context<'_>,
    c: &Compiled,
    i: usize,
    t: &GemmTiling,
    cta: &CtaProgram,
    name: &str,
) -> anyhow::Result<Vec<Check>> {
    let listing = match super::sass_listing(ctx, name, &c.cubin, &format!("gemm{i}")) {
        Ok(l) => l,
        Err(row) => return Ok(vec![*row]),
    };
    let gc = counts::gemm_counts(t, cta);
    let mut out = Vec::new();
    for (m, want) in [
        (
            crate::sim::instr::Instruction::LDSM_X4.sass(),
            gc.per_warp.ldsm,
        ),
        ("HMMA.16816.F32", gc.per_warp.hmma),
    ] {
        let got = sass::count(&listing, "gemm_tile", m) as u64;
        out.push(Check::new(
            "sass",
            format!("{name}: {m}"),
            want,
            got,
            got == want,
            "static, per warp program",
        ));
    }
    Ok(out)
}

/// Under ncu: executed LDSM and the two shared-load wavefront checks of every case.
fn dynamic_checks(ctx: &mut Context<'_>, plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let table = match kernel::metrics(
        ctx,
        plan,
        "gemm",
        "GEMM",
        "gemm_tile",
        "--probe-gemm",
        CASES.len(),
    ) {
        Ok(t) => t,
        Err(why) => return Ok(vec![*why]),
    };
    let mut out = Vec::new();
    for i in 0..CASES.len() {
        let (t, cta, name) = case(i, ctx.arch)?;
        let gc = counts::gemm_counts(&t, &cta);
        let banks = counts::bank_summary(&cta, &[1]);
        let m = &table[&(i as u64)];
        let ldsm = m.get(kernel::LDSM_EXECUTED).copied().unwrap_or(-1.0) as i64;
        let want_ldsm = (gc.per_cta.ldsm * GRID as u64) as i64;
        out.push(Check::new(
            "gemm",
            format!("{name}: LDSM executed"),
            want_ldsm,
            ldsm,
            ldsm == want_ldsm,
            format!("{}, {GRID} CTAs", kernel::LDSM_EXECUTED),
        ));
        out.extend(kernel::wavefront_checks(
            "gemm",
            &name,
            m,
            banks.total.wavefronts * GRID as u64,
            banks.total.conflicts * GRID as u64,
            &format!("{GRID} CTAs"),
        ));
    }
    Ok(out)
}
