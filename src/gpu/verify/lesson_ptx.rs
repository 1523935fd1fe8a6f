//! Group `lesson-ptx`: the real kernels a lesson names (`[[ptx]]` parts, issue 17), each checked
//! as `tilelab verify --ptx` checks a file ([`super::ptx_file`]): its launch simulated, the same
//! launch measured under ncu (counters, then the source page with the PTX's own line table),
//! compared per counter and per line. A module built into the binary but absent on disk is
//! written to a temporary file first (ncu's child process reads it by path). Without ncu (or
//! with `--no-ncu`) each part is one SKIPPED row.

use std::path::PathBuf;

use anyhow::Context as _;

use super::ptx_file::{self, PtxRun};
use super::{Check, Context, Group, Plan};
use crate::lessons::ptx::Resolved;

/// The group.
pub const GROUP: Group = Group {
    name: "lesson-ptx",
    about: "the PTX kernels lessons name: simulated launch against ncu, per counter and per line",
    run,
};

/// One part to check: `lesson: label` and its launch.
#[derive(Clone, Debug)]
pub struct LessonPtx {
    /// `lesson-name: part label`.
    pub name: String,
    /// The launch file read.
    pub resolved: Resolved,
}

/// The `[[ptx]]` parts of `lessons`, resolved (launch files read, modules found).
///
/// # Errors
/// A part whose launch file or module cannot be read or is malformed (naming the lesson).
pub fn parts(lessons: &[crate::lessons::Lesson]) -> anyhow::Result<Vec<LessonPtx>> {
    let mut out = Vec::new();
    for l in lessons {
        for p in &l.ptx {
            let resolved = p
                .resolve()
                .map_err(|e| anyhow::anyhow!("lesson {}: ptx '{}': {e}", l.name, p.label))?;
            out.push(LessonPtx {
                name: format!("{}: {}", l.name, p.label),
                resolved,
            });
        }
    }
    Ok(out)
}

/// The `verify --ptx` run of a part, its module at `file`.
pub fn ptx_run(r: &Resolved, file: PathBuf) -> PtxRun {
    PtxRun {
        file,
        kernel: Some(r.kernel.clone()),
        grid: r.launch.grid,
        block: r.launch.block,
        args: r.launch.args.clone(),
        tensor_maps: r.launch.tensor_maps.clone(),
        dynamic_smem: r.launch.dynamic_smem,
        max_instructions: r.launch.max_instructions,
        cluster: r.launch.cluster,
        pointer_bytes: ptx_file::POINTER_BYTES,
    }
}

/// The module's path on disk: the launch file's own when it exists, else a temporary copy of
/// the built-in text, removed when the returned guard is dropped.
fn module_file(r: &Resolved) -> anyhow::Result<(PathBuf, Option<tempfile::TempPath>)> {
    let p = PathBuf::from(&r.ptx_path);
    if p.is_file() {
        return Ok((p, None));
    }
    let name = p.file_name().map_or_else(
        || "module.ptx".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let guard = tempfile::Builder::new()
        .prefix("tilelab-lesson-")
        .suffix(&format!("-{name}"))
        .tempfile()
        .context("cannot create a temporary file for the lesson's PTX")?
        .into_temp_path();
    std::fs::write(&guard, &r.ptx_text)
        .with_context(|| format!("cannot write '{}'", guard.display()))?;
    Ok((guard.to_path_buf(), Some(guard)))
}

fn run(ctx: &mut Context<'_>, plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let mut rows = Vec::new();
    for part in &plan.lesson_ptx {
        let (file, _guard) = module_file(&part.resolved)?;
        let run = ptx_run(&part.resolved, file);
        let sim = run.simulate(&mut *ctx.progress)?;
        match super::kernel::ncu_for(ctx, plan) {
            Err(why) => rows.push(Check::skipped(
                GROUP.name,
                format!("{}: counters and lines (ncu)", part.name),
                format!("{} LDS+LDSM wavefronts", sim.totals.shared_ld_wavefronts),
                "-",
                why,
            )),
            Ok(_) => {
                let m = ptx_file::measure(ctx, &run, &sim.kernel)?;
                for mut c in ptx_file::checks(&sim, &m) {
                    c.group = GROUP.name.to_string();
                    c.name = format!("{}: {}", part.name, c.name);
                    rows.push(c);
                }
            }
        }
    }
    Ok(rows)
}
