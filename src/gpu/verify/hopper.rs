//! What the Hopper groups (`stmatrix`, `cp.async`, `tma`, `wgmma`) share: the sm_90 gate (on any
//! other device each group is one SKIPPED row, never a pass), `kernels/hopper_probe.cu` compiled
//! once, the ncu run of a probe child, and where `--save-hopper DIR` writes what was measured.

use std::rc::Rc;

use anyhow::Context as _;

use super::{Check, Context, Plan, kernel};
use crate::gpu::device::Compiled;
use crate::gpu::ncu;
use crate::gpu::source::HOPPER_PROBE_CU;
use crate::measured::records::Record;
use crate::sim::arch::Arch;

/// The row that stands for group `group` on a device that is not sm_90, or `None` on sm_90.
pub fn needs_sm90(arch: Arch, group: &str, what: &str) -> Option<Check> {
    (arch != Arch::Sm90).then(|| {
        Check::skipped(
            group,
            what,
            "-",
            "-",
            format!("needs an sm_90 (Hopper) GPU; this device is {arch}"),
        )
    })
}

/// `kernels/hopper_probe.cu` for sm_90, compiled once per run.
pub(super) fn probe_module(ctx: &mut Context<'_>) -> anyhow::Result<Rc<Compiled>> {
    ctx.compiled("hopper_probe.cu", |gpu| {
        Ok(gpu.compile_for("hopper_probe.cu", HOPPER_PROBE_CU, "sm_90", &[])?)
    })
}

/// Measures `recs` under ncu (`metrics`, kernel `kernel`) by running `tilelab verify
/// PROBE_FLAG FILE` in a child, one launch per record; returns one row of metrics per record, in
/// order, or the row that says why there are none (skipped without ncu or with `--no-ncu`,
/// failed when ncu fails or gives another number of launches).
pub(super) fn measure(
    ctx: &mut Context<'_>,
    plan: &Plan,
    group: &str,
    (metrics, kernel_name, probe_flag): (&[&str], &str, &str),
    recs: &[Record],
) -> Result<Vec<std::collections::BTreeMap<String, f64>>, Box<Check>> {
    let what = format!("{} requests under ncu", recs.len());
    let ncu_path = match kernel::ncu_for(ctx, plan) {
        Ok(p) => p,
        Err(why) => return Err(Box::new(Check::skipped(group, what, "-", "-", why))),
    };
    let fail = |measured: String, why: String| {
        Box::new(Check::new(
            group,
            format!("{} requests under ncu", recs.len()),
            format!("{} launches", recs.len()),
            measured,
            false,
            format!("{why} (--no-ncu skips these checks)"),
        ))
    };
    // Removed when `guard` is dropped (tempfile: a fresh name, not the pid's).
    let guard = match tempfile::Builder::new()
        .prefix(&format!("tilelab-{}-", group.replace('.', "")))
        .suffix(".json")
        .tempfile()
    {
        Ok(f) => f.into_temp_path(),
        Err(e) => {
            return Err(fail(
                "-".into(),
                format!("cannot create a temporary file: {e}"),
            ));
        }
    };
    let tmp = guard.to_path_buf();
    let written = serde_json::to_string(recs)
        .map_err(anyhow::Error::from)
        .and_then(|s| {
            std::fs::write(&tmp, s)
                .with_context(|| format!("cannot write '{}'", crate::text::path(&tmp)))
        });
    if let Err(e) = written {
        return Err(fail("-".into(), format!("{e:#}")));
    }
    ctx.progress.start(&format!(
        "measuring {} {group} requests with Nsight Compute (one launch each)",
        recs.len()
    ));
    let profiled = ncu::profile(
        &ncu_path,
        metrics,
        kernel_name,
        &ctx.exe,
        &[
            std::ffi::OsStr::new("verify"),
            std::ffi::OsStr::new(probe_flag),
            tmp.as_os_str(),
        ],
    );
    ctx.progress.finish();
    drop(guard);
    let (table, o) = match profiled {
        Ok(x) => x,
        Err(e) => {
            return Err(fail(
                "-".into(),
                format!("cannot run {}: {e}", crate::text::path(&ncu_path)),
            ));
        }
    };
    if table.len() != recs.len() {
        return Err(fail(
            format!("{} rows", table.len()),
            format!("ncu could not read counters: {}", ncu::why_no_rows(&o)),
        ));
    }
    Ok(table.into_values().collect())
}

/// Writes `value` as JSON to `DIR/file` when `--save-hopper DIR` was given; the note names it.
///
/// # Errors
/// The directory or file cannot be written.
pub(super) fn save(
    ctx: &mut Context<'_>,
    plan: &Plan,
    file: &str,
    value: &impl serde::Serialize,
) -> anyhow::Result<()> {
    let Some(dir) = &plan.save_hopper else {
        return Ok(());
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create '{}'", crate::text::path(dir)))?;
    let p = dir.join(file);
    let doc = serde_json::json!({
        "provenance": {
            "card": ctx.device.card,
            "driver": ctx.device.driver,
            "cuda": ctx.device.cuda,
            "date": crate::measured::provenance::utc_now(),
            "command": plan.command,
            "commit": crate::BUILD_COMMIT,
        },
        "measured": value,
    });
    std::fs::write(&p, serde_json::to_string(&doc)? + "\n")
        .with_context(|| format!("cannot write '{}'", crate::text::path(&p)))?;
    ctx.progress.note(&format!(
        "{file}: measured values written to {}",
        crate::text::path(&p)
    ));
    Ok(())
}

/// Rows for the SASS of one probe kernel: each of `mnemonics` appears exactly once in function
/// `function` of `cubin` (skipped without cuobjdump).
pub(super) fn sass_once(
    ctx: &Context<'_>,
    group: &str,
    cubin: &[u8],
    function: &str,
    mnemonics: &[String],
) -> Vec<Check> {
    let name = format!("{function}: {}", mnemonics.join(", "));
    match super::sass_listing(ctx, &name, cubin, function) {
        Err(row) => vec![Check {
            group: group.to_string(),
            ..*row
        }],
        Ok(listing) => {
            let got: Vec<u32> = mnemonics
                .iter()
                .map(|m| crate::gpu::sass::count(&listing, function, m))
                .collect();
            vec![Check::new(
                group,
                format!("SASS {name}"),
                format!("{} x1", mnemonics.len()),
                got.iter().map(u32::to_string).collect::<Vec<_>>().join(" "),
                got.iter().all(|&n| n == 1),
                "cuobjdump -sass, one instruction each",
            )]
        }
    }
}
