//! What the multi-warp kernel groups (`gemm`, `fa2`) share: their cases launched in a child
//! process under Nsight Compute, and the two shared-load wavefront checks of a kernel.

use std::collections::BTreeMap;

use super::{Check, Context, Plan, Verdict};
use crate::gpu::compare::{self, L1texBand};
use crate::gpu::ncu;

/// Executed `ldmatrix` instructions (all forms), per launch.
pub const LDSM_EXECUTED: &str = "smsp__inst_executed_op_ldsm.sum";

/// Launches `tilelab verify PROBE_FLAG` under ncu and returns one row of metrics per launch of
/// `kernel` (the LDSM count and the metrics of [`wavefront_checks`]), or the check that says why
/// there are none: skipped with `--no-ncu` or without ncu; failed when ncu cannot be started or
/// gives fewer rows than the `cases` launched (e.g. `ERR_NVGPUCTRPERM`: counters not readable).
pub fn metrics(
    ctx: &mut Context<'_>,
    plan: &Plan,
    group: &str,
    what: &str,
    kernel: &str,
    probe_flag: &str,
    cases: usize,
) -> Result<ncu::LaunchMetrics, Box<Check>> {
    let name = "dynamic counts (ncu)";
    let ncu_path = match ncu_for(ctx, plan) {
        Ok(p) => p,
        Err(why) => return Err(Box::new(Check::skipped(group, name, "-", "-", why))),
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
    let (table, o) = match profiled {
        Ok(x) => x,
        Err(e) => {
            return Err(Box::new(Check::new(
                group,
                name,
                format!("{cases} launches"),
                "-",
                false,
                format!("cannot run {}: {e}", ncu_path.display()),
            )));
        }
    };
    if table.len() != cases {
        return Err(Box::new(Check::new(
            group,
            name,
            format!("{cases} launches"),
            format!("{} rows", table.len()),
            false,
            format!(
                "ncu could not read counters: {} (--no-ncu skips these checks)",
                ncu::why_no_rows(&o)
            ),
        )));
    }
    Ok(table)
}

/// The ncu to run, or why none runs (`--no-ncu`, or not found): the checks are then skipped.
pub fn ncu_for(ctx: &Context<'_>, plan: &Plan) -> Result<std::path::PathBuf, &'static str> {
    if plan.no_ncu {
        return Err("--no-ncu given");
    }
    ctx.tools
        .ncu
        .clone()
        .ok_or("ncu not found on PATH, in /usr/local/cuda/bin or /opt/nvidia/nsight-compute")
}

/// The two shared-load wavefront checks of a multi-warp kernel that loads shared memory only
/// with `ldmatrix` (`m`: one launch's ncu metrics; `sim_wf`, `sim_conflicts`: the simulator's
/// totals for the launch).
///
/// 1. Per instruction: the wavefronts Nsight Compute attributes to each executed `LDSM`
///    ([`ncu::SASS_WAVEFRONTS_LDSM`]) must equal the simulator's sum exactly.
/// 2. The L1TEX hardware counter ([`ncu::WAVEFRONTS_LD`]) must be explained, as
///    [`compare::l1tex_band`] says: equal, or a surplus booked as bank conflicts within the
///    measured bound (pass), above it (pass with a warning), far above it (fail).
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
    let band = compare::l1tex_band(&meas, sim_wf, sim_conflicts);
    let (per_instr, hw, hw_conflicts) = (meas.per_instruction, meas.l1tex, meas.l1tex_conflicts);
    let surplus = hw - sim_wf;
    let (max_s, of) = compare::L1TEX_SURPLUS_MEASURED_MAX;
    let bound = format!(
        "measured bound {:.2}% ({max_s} of {of}), failure above {:.2}%",
        100.0 * max_s as f64 / of as f64,
        100.0 * (compare::L1TEX_SURPLUS_FAIL_FACTOR * max_s) as f64 / of as f64
    );
    let hw_detail = if surplus == 0 {
        format!("{}, {setup}", ncu::WAVEFRONTS_LD)
    } else {
        let what = match band {
            L1texBand::WithinMeasured => "re-issued wavefronts within",
            L1texBand::AboveMeasured => "WARNING: re-issued wavefronts above",
            L1texBand::FarAbove => "far above",
            _ => "not explained by re-issue; see",
        };
        format!(
            "{}, {setup}; surplus {surplus} ({:.2}%), ncu bank conflicts {hw_conflicts} vs {sim_conflicts} simulated: {what} the {bound} (docs/wavefront-model.md)",
            ncu::WAVEFRONTS_LD,
            100.0 * surplus as f64 / sim_wf.max(1) as f64
        )
    };
    let verdict = match band {
        L1texBand::Exact | L1texBand::WithinMeasured => Verdict::Pass,
        L1texBand::AboveMeasured => Verdict::Warn,
        L1texBand::FarAbove | L1texBand::Unexplained => Verdict::Fail,
    };
    vec![
        Check::new(
            group,
            format!("{name}: shared-load wavefronts per instruction"),
            sim_wf,
            per_instr,
            per_instr == sim_wf,
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
            true,
            hw_detail,
        )
        .with_verdict(verdict),
    ]
}
