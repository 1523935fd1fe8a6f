//! Group `wavefronts`: every warp request of the plan ([`Plan::records`]) launched once by the
//! probe kernel (`kernels/smem_probe.cu`) in a child process under Nsight Compute; its
//! wavefronts (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`) and bank conflicts
//! (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum`) compared with the model.

use std::path::Path;

use anyhow::{Context as _, bail};

use super::{Check, Context, Group, Plan};
use crate::gpu::device::Gpu;
use crate::gpu::fuzz;
use crate::gpu::launch::SmemProbe;
use crate::gpu::ncu;
use crate::gpu::source::SMEM_PROBE_CU;
use crate::records;
use crate::sim::bank::schedule;

/// The group.
pub const GROUP: Group = Group {
    name: "wavefronts",
    about: "wavefronts and bank conflicts of every recorded, lesson and fuzz request under ncu",
    run,
};

/// The probe mode ([`super::Probe::Records`]): launches the probe once per record of `file`.
///
/// # Errors
/// An unreadable file, a record the probe has no kind for, a driver error.
pub fn probe(gpu: &Gpu, file: &Path) -> anyhow::Result<String> {
    let recs = records::load(file)?;
    let compiled = gpu.compile("smem_probe.cu", SMEM_PROBE_CU)?;
    let probe = SmemProbe::load(gpu, &compiled, fuzz::PROBE_SMEM_BYTES)?;
    for r in &recs {
        let req = r.request()?;
        let Some(kind) = fuzz::probe_kind(&r.instruction) else {
            bail!("record '{}': the probe has no {}", r.name, r.instruction)
        };
        probe.run(gpu, &req.lane_byte_offsets, req.active_mask, kind)?;
    }
    Ok(format!("launched {}", recs.len()))
}

fn run(ctx: &mut Context<'_>, plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let recs = &plan.records;
    let ncu_path = if plan.no_ncu {
        None
    } else {
        ctx.tools.ncu.clone()
    };
    let Some(ncu_path) = ncu_path else {
        let why = if plan.no_ncu {
            "--no-ncu given"
        } else {
            "ncu not found on PATH or in /usr/local/cuda/bin"
        };
        return Ok(vec![Check::skipped(
            "wavefronts",
            format!("{} records", recs.len()),
            "-",
            "-",
            format!("{why}; wavefronts not measured, see the timing checks (clock64)"),
        )]);
    };
    let tmp = std::env::temp_dir().join(format!("tilelab-probe-{}.json", std::process::id()));
    std::fs::write(&tmp, serde_json::to_string(recs)?)
        .with_context(|| format!("cannot write '{}'", tmp.display()))?;
    ctx.progress.start(&format!(
        "measuring {} warp requests with Nsight Compute (one launch each)",
        recs.len()
    ));
    let profiled = ncu::profile(
        &ncu_path,
        &[ncu::WAVEFRONTS_LD, ncu::WAVEFRONTS_ST, ncu::BANK_CONFLICTS],
        "smem_probe",
        &ctx.exe,
        &[
            std::ffi::OsStr::new("verify"),
            std::ffi::OsStr::new("--probe-file"),
            tmp.as_os_str(),
        ],
    );
    ctx.progress.finish();
    let _ = std::fs::remove_file(&tmp);
    let (table, o) = profiled.with_context(|| format!("cannot run {}", ncu_path.display()))?;
    if table.len() != recs.len() {
        let text = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        let why = text
            .lines()
            .chain(err.lines())
            .find(|l| l.contains("ERR") || l.contains("rror"))
            .unwrap_or("no per-launch metrics in ncu's output");
        return Ok(vec![Check::skipped(
            "wavefronts",
            format!("{} records", recs.len()),
            "-",
            format!("{} rows", table.len()),
            format!("ncu could not read counters: {why}; falling back to clock64 timing"),
        )]);
    }
    let mut checks = Vec::new();
    let mut measured_all = Vec::new();
    let mut mismatches = Vec::new();
    let (mut ok, mut ok_conf) = (0, 0);
    for (i, r) in recs.iter().enumerate() {
        let m = &table[&(i as u64)];
        let wf = (m.get(ncu::WAVEFRONTS_LD).copied().unwrap_or(0.0)
            + m.get(ncu::WAVEFRONTS_ST).copied().unwrap_or(0.0)) as u32;
        let bc = m.get(ncu::BANK_CONFLICTS).copied().unwrap_or(0.0) as u32;
        let rep = schedule(&r.request()?);
        let mut mr = r.clone();
        mr.wavefronts = Some(wf);
        mr.bank_conflicts = Some(bc);
        let agree = rep.wavefront_count() == wf;
        ok += agree as usize;
        ok_conf += (agree && rep.bank_conflicts() == bc) as usize;
        if !agree || rep.bank_conflicts() != bc {
            mismatches.push(mr.clone());
        }
        // A row per record only for those whose wavefronts disagree.
        if !agree {
            checks.push(Check::new(
                "wavefronts",
                format!("{} {}", r.name, r.instruction),
                rep.wavefront_count(),
                wf,
                false,
                format!("bank conflicts sim {} / ncu {}", rep.bank_conflicts(), bc),
            ));
        }
        measured_all.push(mr);
    }
    checks.insert(
        0,
        Check::new(
            "wavefronts",
            format!("{} warp requests under ncu", recs.len()),
            format!("{ok} agree"),
            format!("{} total", recs.len()),
            ok == recs.len(),
            "",
        ),
    );
    checks.insert(
        1,
        Check::new(
            "wavefronts",
            "bank conflicts (ncu counter) where wavefronts agree",
            format!("{ok_conf} agree"),
            format!("{ok} total"),
            ok_conf == ok,
            "",
        ),
    );
    if !mismatches.is_empty() {
        std::fs::write(&plan.mismatches, serde_json::to_string_pretty(&mismatches)?)
            .with_context(|| format!("cannot write '{}'", plan.mismatches.display()))?;
        ctx.progress.note(&format!(
            "{} records disagree; written to {} (replay format)",
            mismatches.len(),
            plan.mismatches.display()
        ));
    }
    if let Some(p) = &plan.save_measured {
        std::fs::write(p, serde_json::to_string(&measured_all)?)
            .with_context(|| format!("cannot write '{}'", p.display()))?;
    }
    Ok(checks)
}
