//! Group `wgmma` (sm_90, kernels built for sm_90a): the 43 problems of
//! [`hopper_check::wgmma_cases`] (N = 8 to 256, K- and MN-major A and B, every swizzle, both atom
//! orders, bf16, A from registers) run by `kernels/wgmma_probe.cu` with the **descriptors the
//! simulator builds**, twice: on the small integers of the H200 runs (the accumulators must equal
//! the executor's and the reference's exactly, register by register), and on values that name
//! their place (D(m, n) = m·N + n + 1: each register must hold the element the accumulator map
//! gives it). The SASS of each kernel holds exactly the `HGMMA` the simulator names.

use std::collections::BTreeSet;

use super::{Check, Context, Group, Plan, hopper};
use crate::gpu::hopper_check::{self, WgmmaFill};
use crate::gpu::launch::WgmmaProbe;
use crate::gpu::source::WGMMA_PROBE_CU;

/// The group.
pub const GROUP: Group = Group {
    name: "wgmma",
    about: "wgmma with simulator-built descriptors: results exact, accumulator map register by register, HGMMA names (sm_90a)",
    run,
};

const G: &str = "wgmma";

/// One case measured (`--save-hopper`).
#[derive(serde::Serialize)]
struct Measured {
    case: &'static str,
    fill: &'static str,
    kernel: String,
    descriptors: Vec<String>,
    d_sum_abs: f64,
    verdict: String,
}

fn run(ctx: &mut Context<'_>, plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let cases = hopper_check::wgmma_cases();
    let what = format!("{} wgmma problems", cases.len());
    if let Some(row) = hopper::needs_sm90(ctx.arch, G, &what) {
        return Ok(vec![row]);
    }
    ctx.progress
        .start("compiling kernels/wgmma_probe.cu with NVRTC (sm_90a)");
    let module = ctx.compiled("wgmma_probe.cu sm_90a", |gpu| {
        Ok(gpu.compile_for("wgmma_probe.cu", WGMMA_PROBE_CU, "sm_90a", &[])?)
    });
    ctx.progress.finish();
    let module = match module {
        Ok(m) => m,
        Err(e) => {
            return Ok(vec![Check::new(
                G,
                format!("{what}: kernels/wgmma_probe.cu for sm_90a"),
                "compiled",
                "-",
                false,
                format!("{e:#}"),
            )]);
        }
    };
    let gpu = ctx.gpu()?;
    let mut rows = Vec::new();
    let mut saved = Vec::new();
    let mut kernels = BTreeSet::new();
    for (fill, label) in [
        (
            WgmmaFill::Small,
            "small integers: GPU = simulator = reference, every register",
        ),
        (
            WgmmaFill::Unique,
            "D(m,n) = m*N+n+1: every register holds the element the accumulator map names",
        ),
    ] {
        let (mut ok, mut first_bad, mut regs) = (0, String::new(), 0usize);
        for case in &cases {
            let inp = case.inputs(fill)?;
            let hw = WgmmaProbe::run(
                gpu,
                &module,
                &inp.kernel,
                (&inp.img, &inp.desc, inp.aregs.as_deref()),
                case.n,
            )?;
            let sim = case.simulate(&inp)?;
            let reference = case.reference(&inp);
            let v = hopper_check::wgmma_compare(case.n, &hw, &sim, &reference);
            kernels.insert((
                inp.kernel.clone(),
                crate::sim::instr::wgmma_f32_sass(case.n, case.dtype),
            ));
            regs += hw.len();
            saved.push(Measured {
                case: case.name,
                fill: if fill == WgmmaFill::Small {
                    "small"
                } else {
                    "unique"
                },
                kernel: inp.kernel.clone(),
                descriptors: inp.desc.iter().map(|d| format!("{d:#x}")).collect(),
                d_sum_abs: hw.iter().map(|v| v.abs() as f64).sum(),
                verdict: v.clone().err().unwrap_or_else(|| "exact".into()),
            });
            match v {
                Ok(()) => ok += 1,
                Err(e) if first_bad.is_empty() => first_bad = format!("{}: {e}", case.name),
                Err(_) => {}
            }
        }
        rows.push(Check::new(
            G,
            format!("{} problems, {label}", cases.len()),
            format!("{} problems", cases.len()),
            format!("{ok} exact"),
            ok == cases.len(),
            if first_bad.is_empty() {
                format!("{regs} accumulator registers compared; descriptors built and encoded by the simulator")
            } else {
                first_bad
            },
        ));
    }
    // SASS: each kernel's HGMMA instructions are all the one the simulator names (the k loop
    // is unrolled, so there are several).
    match super::sass_listing(ctx, "wgmma kernels: HGMMA names", &module.cubin, "wgmma") {
        Err(row) => rows.push(Check {
            group: G.to_string(),
            ..*row
        }),
        Ok(listing) => {
            let (mut ok, mut first_bad) = (0, String::new());
            for (k, want) in &kernels {
                let got: BTreeSet<&String> = listing
                    .get(k)
                    .map(|m| {
                        m.keys()
                            .filter(|m| m.starts_with(crate::sim::instr::SassClass::Hgmma.name()))
                            .collect()
                    })
                    .unwrap_or_default();
                if got.len() == 1 && got.contains(want) {
                    ok += 1;
                } else if first_bad.is_empty() {
                    let got = if got.is_empty() {
                        "no HGMMA".to_string()
                    } else {
                        crate::text::list(&got)
                    };
                    first_bad = format!("{k}: {got}, the simulator says {want}");
                }
            }
            rows.push(Check::new(
                G,
                format!(
                    "SASS of {} wgmma kernels: the HGMMA the simulator names",
                    kernels.len()
                ),
                format!("{} kernels", kernels.len()),
                format!("{ok} equal"),
                ok == kernels.len(),
                if first_bad.is_empty() {
                    "cuobjdump -sass; e.g. HGMMA.64x64x16.F32, HGMMA.64x64x16.F32.BF16".to_string()
                } else {
                    first_bad
                },
            ));
        }
    }
    hopper::save(ctx, plan, "wgmma.json", &saved)?;
    Ok(rows)
}
