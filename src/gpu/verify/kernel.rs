//! What the multi-warp kernel groups (`gemm`, `fa2`) share: their cases launched in a child
//! process under Nsight Compute, and the two shared-load wavefront checks of a kernel.

use std::collections::BTreeMap;

use super::{Check, Context, Plan};
use crate::gpu::{compare, ncu};

/// Executed `ldmatrix` instructions (all forms), per launch.
pub const LDSM_EXECUTED: &str = "smsp__inst_executed_op_ldsm.sum";

/// Launches `tilelab verify PROBE_FLAG` under ncu and returns one row of metrics per launch of
/// `kernel` (the LDSM count and the metrics of [`wavefront_checks`]), or the skipped check that
/// says why there are none (`--no-ncu` or no ncu; fewer rows than the `cases` launched).
///
/// # Errors
/// ncu cannot be started.
pub fn metrics(
    ctx: &mut Context<'_>,
    plan: &Plan,
    group: &str,
    what: &str,
    kernel: &str,
    probe_flag: &str,
    cases: usize,
) -> anyhow::Result<Result<ncu::LaunchMetrics, Check>> {
    let skipped = |measured: String, why: &str| {
        Ok(Err(Check::skipped(
            group,
            "dynamic counts (ncu)",
            "-",
            measured,
            why,
        )))
    };
    let ncu_path = if plan.no_ncu {
        None
    } else {
        ctx.tools.ncu.clone()
    };
    let Some(ncu_path) = ncu_path else {
        return skipped("-".into(), "ncu not available");
    };
    ctx.progress
        .start(&format!("measuring the {what} kernels with Nsight Compute"));
    let profiled = ncu::profile(
        &ncu_path,
        &[
            LDSM_EXECUTED,
            ncu::WAVEFRONTS_LD,
            ncu::SASS_WAVEFRONTS_LDSM,
            ncu::BANK_CONFLICTS_LD,
        ],
        kernel,
        &ctx.exe,
        &["verify", probe_flag],
    );
    ctx.progress.finish();
    let (table, _) = profiled?;
    if table.len() != cases {
        return skipped(
            format!("{} rows", table.len()),
            "ncu gave no per-launch metrics",
        );
    }
    Ok(Ok(table))
}

/// The two shared-load wavefront checks of a multi-warp kernel that loads shared memory only
/// with `ldmatrix` (`m`: one launch's ncu metrics; `sim_wf`, `sim_conflicts`: the simulator's
/// totals for the launch).
///
/// 1. Per instruction: the wavefronts Nsight Compute attributes to each executed `LDSM`
///    ([`ncu::SASS_WAVEFRONTS_LDSM`]) must equal the simulator's sum exactly.
/// 2. The L1TEX hardware counter ([`ncu::WAVEFRONTS_LD`]) must be explained, as
///    [`compare::kernel_wavefront_verdicts`] says.
pub fn wavefront_checks(
    group: &str,
    name: &str,
    m: &BTreeMap<String, f64>,
    sim_wf: u64,
    sim_conflicts: u64,
    setup: &str,
) -> Vec<Check> {
    let get = |k: &str| m.get(k).copied().map(|v| v as i64).unwrap_or(-1);
    let (sim_wf, sim_conflicts) = (sim_wf as i64, sim_conflicts as i64);
    let meas = compare::KernelWavefronts {
        per_instruction: get(ncu::SASS_WAVEFRONTS_LDSM),
        l1tex: get(ncu::WAVEFRONTS_LD),
        l1tex_conflicts: get(ncu::BANK_CONFLICTS_LD),
    };
    let (per_instr_ok, hw_ok) = compare::kernel_wavefront_verdicts(&meas, sim_wf, sim_conflicts);
    let (per_instr, hw, hw_conflicts) = (meas.per_instruction, meas.l1tex, meas.l1tex_conflicts);
    let surplus = hw - sim_wf;
    let hw_detail = if surplus == 0 {
        format!("{}, {setup}", ncu::WAVEFRONTS_LD)
    } else {
        format!(
            "{}, {setup}; surplus {surplus} ({:.2}%), ncu bank conflicts {hw_conflicts} vs {sim_conflicts} simulated: re-issued wavefronts (docs/wavefront-model.md)",
            ncu::WAVEFRONTS_LD,
            100.0 * surplus as f64 / sim_wf.max(1) as f64
        )
    };
    vec![
        Check::new(
            group,
            format!("{name}: shared-load wavefronts per instruction"),
            sim_wf,
            per_instr,
            per_instr_ok,
            format!("{}, {setup}", ncu::SASS_WAVEFRONTS_LDSM),
        ),
        Check::new(
            group,
            format!("{name}: shared-load wavefronts, L1TEX counter"),
            sim_wf,
            if surplus > 0 {
                format!("{hw} (+{surplus})")
            } else {
                hw.to_string()
            },
            hw_ok,
            hw_detail,
        ),
    ]
}
