//! Group `wavefronts`: every warp request of the plan ([`Plan::records`]) launched once by the
//! probe kernel (`kernels/smem_probe.cu`) in a child process under Nsight Compute; its
//! wavefronts (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`) and bank conflicts
//! (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum`) compared with the model.

use std::path::Path;

use anyhow::{Context as _, bail};

use super::{Check, Context, Group, Plan, kernel};
use crate::gpu::device::Gpu;
use crate::gpu::fuzz;
use crate::gpu::launch::SmemProbe;
use crate::gpu::ncu;
use crate::gpu::source::SMEM_PROBE_CU;
use crate::measured::provenance;
use crate::measured::records::{self, Record};

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
    let what = format!("{} records", recs.len());
    let ncu_path = match kernel::ncu_for(ctx, plan) {
        Ok(p) => p,
        Err(why) => {
            return Ok(vec![Check::skipped(
                "wavefronts",
                what,
                "-",
                "-",
                format!("{why}; wavefronts not measured, see the timing checks (clock64)"),
            )]);
        }
    };
    // Removed when `guard` is dropped (tempfile: a fresh name, not the pid's).
    let guard = tempfile::Builder::new()
        .prefix("tilelab-probe-")
        .suffix(".json")
        .tempfile()
        .context("cannot create a temporary file for the probe's requests")?
        .into_temp_path();
    let tmp = guard.to_path_buf();
    std::fs::write(&tmp, serde_json::to_string(recs)?)
        .with_context(|| format!("cannot write '{}'", crate::text::path(&tmp)))?;
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
    drop(guard);
    let failed = |measured: String, why: String| {
        Ok(vec![Check::new(
            "wavefronts",
            format!("{} records", recs.len()),
            format!("{} launches", recs.len()),
            measured,
            false,
            format!("{why} (--no-ncu skips these checks)"),
        )])
    };
    let (table, o) = match profiled {
        Ok(x) => x,
        Err(e) => {
            return failed(
                "-".into(),
                format!("cannot run {}: {e}", crate::text::path(&ncu_path)),
            );
        }
    };
    if table.len() != recs.len() {
        return failed(
            format!("{} rows", table.len()),
            format!("ncu could not read counters: {}", ncu::why_no_rows(&o)),
        );
    }
    let measured = measured_records(recs, &table);
    let (checks, mismatches) = compare_records(recs, &measured)?;
    if !mismatches.is_empty() {
        std::fs::write(&plan.mismatches, serde_json::to_string_pretty(&mismatches)?)
            .with_context(|| format!("cannot write '{}'", crate::text::path(&plan.mismatches)))?;
        ctx.progress.note(&format!(
            "{} records disagree; written to {} (replay format)",
            mismatches.len(),
            crate::text::path(&plan.mismatches)
        ));
    }
    if let Some(p) = &plan.save_measured {
        let prov = provenance_of(ctx, plan, &ncu_path, measured.len());
        provenance::write_file(p, &measured, &prov)?;
        ctx.progress.note(&format!(
            "{} measured records written to {} (replay format, provenance inside)",
            measured.len(),
            crate::text::path(p)
        ));
    }
    Ok(checks)
}

/// The records with ncu's values: launch `i` of `table` measured record `i` (wavefronts =
/// load + store wavefronts; bank conflicts). A metric missing from a row counts as 0.
pub fn measured_records(recs: &[Record], table: &ncu::LaunchMetrics) -> Vec<Record> {
    recs.iter()
        .enumerate()
        .map(|(i, r)| {
            let m = table.get(&(i as u64));
            let get = |k: &str| m.and_then(|m| m.get(k)).copied().unwrap_or(0.0);
            Record {
                wavefronts: Some((get(ncu::WAVEFRONTS_LD) + get(ncu::WAVEFRONTS_ST)) as u32),
                bank_conflicts: Some(get(ncu::BANK_CONFLICTS) as u32),
                ..r.clone()
            }
        })
        .collect()
}

/// The rows for the measured records (`measured[i]` is `recs[i]` with ncu's values): two summary
/// rows (wavefronts; bank conflicts where the wavefronts agree) and one row per record whose
/// wavefronts disagree; and every record that disagrees in either, with its measured values.
///
/// # Errors
/// A record that is not a valid request.
pub fn compare_records(
    recs: &[Record],
    measured: &[Record],
) -> anyhow::Result<(Vec<Check>, Vec<Record>)> {
    let mut rows = Vec::new();
    let mut mismatches = Vec::new();
    let (mut ok, mut ok_conf) = (0, 0);
    for (r, mr) in recs.iter().zip(measured) {
        let (wf, bc) = (mr.wavefronts.unwrap_or(0), mr.bank_conflicts.unwrap_or(0));
        let rep = r.request()?.cost();
        let agree = rep.wavefronts == wf;
        ok += agree as usize;
        ok_conf += (agree && rep.bank_conflicts() == bc) as usize;
        if !agree || rep.bank_conflicts() != bc {
            mismatches.push(mr.clone());
        }
        if !agree {
            rows.push(Check::new(
                "wavefronts",
                format!("{} {}", r.name, r.instruction),
                rep.wavefronts,
                wf,
                false,
                format!("bank conflicts sim {} / ncu {}", rep.bank_conflicts(), bc),
            ));
        }
    }
    rows.insert(
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
    rows.insert(
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
    Ok((rows, mismatches))
}

/// The provenance of a `--save-measured` file: the device of the context, ncu's version, now,
/// the plan's command, this binary's commit.
fn provenance_of(
    ctx: &Context<'_>,
    plan: &Plan,
    ncu_path: &Path,
    records: usize,
) -> provenance::Provenance {
    let mut tools = std::collections::BTreeMap::new();
    tools.insert("ncu".to_string(), ncu::version(ncu_path));
    provenance::Provenance {
        records,
        card: ctx.device.card.clone(),
        driver: ctx.device.driver.clone(),
        cuda: ctx.device.cuda.clone(),
        tools,
        date: provenance::utc_now(),
        command: plan.command.clone(),
        generator: GENERATOR.to_string(),
        commit: crate::BUILD_COMMIT.to_string(),
        reconstructed: None,
    }
}

/// Where the records `tilelab verify` measures come from, by name.
pub const GENERATOR: &str = "tilelab verify: h200.* = tests/data/h200_wavefronts.json (built in), lesson.* = one request per lesson step and layout (lessons/*.toml, gpu::verify::lessons::requests), fuzz.<seed>.* = --fuzz N --seed S (gpu::fuzz::records), any other name = the --records files given (their own generators); the command above measures them again";
