//! Group `tma` (sm_90): every box of [`hopper_check::tma_cases`] (4 swizzle modes × 1/2/4-byte
//! elements × inner sizes 16-256 bytes × 5/8/64 rows, boxes half past the tensor, destinations
//! inside the buffer and past a 1024-byte boundary) encoded with `cuTensorMapEncodeTiled`,
//! copied by `tma_probe` (`kernels/hopper_probe.cu`, `cp.async.bulk.tensor.2d`) and read back:
//! every byte of the footprint and around it against the model's placement; the maps the driver
//! rejects against the ones the model rejects; the SASS name `UTMALDG.2D`.

use super::{Check, Context, Group, Plan, hopper};
use crate::gpu::hopper_check::{self, TmaCase};
use crate::gpu::launch::{DeviceBuffer, TmaProbe};

/// The group.
pub const GROUP: Group = Group {
    name: "tma",
    about: "TMA box placement bit-exact for every swizzle mode, element size and box shape; driver rejections; SASS (sm_90)",
    run,
};

const G: &str = "tma";

/// One box measured (`--save-hopper`).
#[derive(serde::Serialize)]
struct Measured {
    case: String,
    encode: String,
    verdict: String,
}

fn run(ctx: &mut Context<'_>, plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let cases = hopper_check::tma_cases();
    let what = format!("{} TMA boxes", cases.len());
    if let Some(row) = hopper::needs_sm90(ctx.arch, G, &what) {
        return Ok(vec![row]);
    }
    ctx.progress
        .start("compiling kernels/hopper_probe.cu with NVRTC (sm_90)");
    let module = hopper::probe_module(ctx)?;
    ctx.progress.finish();
    let gpu = ctx.gpu()?;
    let probe = TmaProbe::load(gpu, &module)?;
    let (mut placed, mut exact, mut rejected, mut agree_rej) = (0, 0, 0, 0);
    let mut seen = std::collections::BTreeSet::new();
    let mut bad = Vec::new();
    let mut saved = Vec::new();
    for case in &cases {
        let l = case.launch();
        let g = DeviceBuffer::from_host(gpu, &case.global_image())?;
        let e = case.elem_bytes;
        let enc = TmaProbe::encode(
            gpu,
            &g,
            e,
            [(l.global_row_bytes / e) as u64, l.global_rows as u64],
            l.global_row_bytes as u64,
            [l.cols, case.rows],
            case.swizzle,
        )?;
        let verdict = match &enc {
            Ok(map) => {
                placed += 1;
                let got = probe.run(
                    gpu,
                    map,
                    (l.x0 as i32, l.y0 as i32),
                    case.dst,
                    l.nbytes,
                    l.out_bytes,
                )?;
                let v = hopper_check::tma_compare(case, Ok(&got));
                if v.is_ok() {
                    exact += 1;
                    seen.insert((case.swizzle.bits(), e));
                }
                v
            }
            Err(why) => {
                rejected += 1;
                let v = hopper_check::tma_compare(case, Err(why));
                agree_rej += v.is_ok() as usize;
                v
            }
        };
        saved.push(Measured {
            case: case.label(),
            encode: match &enc {
                Ok(_) => "CUDA_SUCCESS".into(),
                Err(w) => w.clone(),
            },
            verdict: match &verdict {
                Ok(()) => "as modelled".into(),
                Err(e) => e.clone(),
            },
        });
        if let Err(why) = verdict {
            bad.push(failure(case, why));
        }
        drop(g);
    }
    let mut rows = vec![
        Check::new(
            G,
            format!(
                "{placed} TMA boxes: shared memory bit-exact (every swizzle, 1/2/4-byte elements)"
            ),
            format!("{placed} placed"),
            format!("{exact} bit-exact"),
            exact == placed && placed > 0,
            format!(
                "{} (swizzle, element size) pairs covered of 12; the footprint, its padding and 1024 bytes after it compared byte by byte",
                seen.len()
            ),
        ),
        Check::new(
            G,
            format!(
                "{rejected} tensor maps cuTensorMapEncodeTiled rejects: the model rejects them too"
            ),
            format!("{rejected} rejected"),
            format!("{agree_rej} agree"),
            agree_rej == rejected,
            "inner box wider than the swizzle span, rows not a multiple of 16 bytes",
        ),
    ];
    rows.extend(bad.into_iter().take(20));
    rows.extend(hopper::sass_once(
        ctx,
        G,
        &module.cubin,
        "tma_probe",
        &[crate::sim::instr::tma_sass(
            crate::sim::instr::SassClass::Utmaldg,
            2,
        )],
    ));
    hopper::save(ctx, plan, "tma.json", &saved)?;
    Ok(rows)
}

fn failure(case: &TmaCase, why: String) -> Check {
    Check::new(G, case.label(), "model", "GPU", false, why)
}
