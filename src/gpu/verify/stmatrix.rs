//! Group `stmatrix` (sm_90): every `stmatrix` request of the plan ([`Plan::stmatrix_records`]:
//! structured pitches and tiles of every form, and `--hopper-fuzz` random ones) stored by
//! `stsm_probe` (`kernels/hopper_probe.cu`) and its shared memory compared with the executor,
//! word for word; the same requests launched alone (`stsm_count`) in a child under Nsight
//! Compute, wavefronts (`..._mem_shared_op_st.sum`) and bank conflicts against the model; the
//! SASS names of the six forms.

use anyhow::Context as _;

use super::{Check, Context, Group, Plan, hopper, wavefronts};
use crate::gpu::device::Gpu;
use crate::gpu::fuzz::{self, STSM_KINDS};
use crate::gpu::hopper_check;
use crate::gpu::launch::StsmProbe;
use crate::gpu::ncu;
use crate::measured::records::{self, Record};
use crate::sim::instr::Instruction;

/// The group.
pub const GROUP: Group = Group {
    name: "stmatrix",
    about: "stmatrix placement (smem bit-exact vs the executor), wavefronts and conflicts under ncu, SASS names (sm_90)",
    run,
};

const G: &str = "stmatrix";

/// The structured requests: for every form, matrix rows 16, 32 and 128 bytes apart, all rows at
/// one address, and a 16x16 f16 block of a 64-wide tile plain and with 16-byte chunks XOR-ed by
/// row % 8 (names `stsm.<form>.<pattern>`).
pub fn structured() -> Vec<Record> {
    let mut v = Vec::new();
    for ins in STSM_KINDS {
        let pats: [(&str, [u32; 32]); 6] = [
            ("pitch16", std::array::from_fn(|l| 16 * l as u32)),
            ("pitch32", std::array::from_fn(|l| 32 * l as u32)),
            ("pitch128", std::array::from_fn(|l| 128 * l as u32)),
            ("pitch0", [256; 32]),
            (
                "tile64_plain",
                std::array::from_fn(|l| {
                    let (m, r) = (l as u32 / 8, l as u32 % 8);
                    ((m % 2) * 8 + r) * 128 + (m / 2) * 16
                }),
            ),
            (
                "tile64_swizzled",
                std::array::from_fn(|l| {
                    let (m, r) = (l as u32 / 8, l as u32 % 8);
                    let rr = (m % 2) * 8 + r;
                    rr * 128 + ((m / 2) ^ (rr % 8)) * 16
                }),
            ),
        ];
        for (name, offs) in pats {
            v.push(Record {
                name: format!("stsm.{ins}.{name}"),
                instruction: ins.to_string(),
                lane_byte_offsets: offs.iter().map(|&o| o as u64).collect(),
                active_mask: None,
                wavefronts: None,
                bank_conflicts: None,
                global_addresses: None,
            });
        }
    }
    v
}

/// The probe mode ([`super::Probe::Stmatrix`]): `stsm_count` once per record of `file`.
///
/// # Errors
/// An unreadable file, a record that is no stmatrix, a driver error.
pub fn probe(gpu: &Gpu, file: &std::path::Path) -> anyhow::Result<String> {
    let recs = records::load(file)?;
    let c = gpu.compile_for(
        "hopper_probe.cu",
        crate::gpu::source::HOPPER_PROBE_CU,
        "sm_90",
        &[],
    )?;
    let p = StsmProbe::load(gpu, &c)?;
    for r in &recs {
        let req = r.request()?;
        let kind = fuzz::kind_in(&STSM_KINDS, &r.instruction)
            .with_context(|| format!("record '{}' is not a stmatrix", r.name))?;
        p.count(gpu, &req.lane_byte_offsets, kind)?;
    }
    Ok(format!("launched {}", recs.len()))
}

fn run(ctx: &mut Context<'_>, plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let recs = &plan.stmatrix_records;
    let what = format!("{} stmatrix requests", recs.len());
    if let Some(row) = hopper::needs_sm90(ctx.arch, G, &what) {
        return Ok(vec![row]);
    }
    ctx.progress
        .start("compiling kernels/hopper_probe.cu with NVRTC (sm_90)");
    let module = hopper::probe_module(ctx)?;
    ctx.progress.finish();
    let gpu = ctx.gpu()?;
    let probe = StsmProbe::load(gpu, &module)?;
    let mut rows = Vec::new();
    // Placement: every written word against the executor.
    let (mut ok, mut words, mut first_bad) = (0, 0, String::new());
    for r in recs {
        let req = r.request()?;
        let kind = fuzz::kind_in(&STSM_KINDS, &r.instruction)
            .with_context(|| format!("record '{}' is not a stmatrix", r.name))?;
        let (n, list) = probe.dump(gpu, &req.lane_byte_offsets, kind)?;
        match hopper_check::stmatrix_placement(&req, n, &list) {
            Ok(w) => {
                ok += 1;
                words += w;
            }
            Err(e) if first_bad.is_empty() => first_bad = format!("{}: {e}", r.name),
            Err(_) => {}
        }
    }
    rows.push(Check::new(
        G,
        format!("shared memory after {what} (bit-exact vs the executor)"),
        format!("{} requests", recs.len()),
        format!("{ok} equal"),
        ok == recs.len(),
        if first_bad.is_empty() {
            format!("{words} 16-bit words checked; overlapping rows keep one of their writers")
        } else {
            first_bad
        },
    ));
    let names: Vec<String> = STSM_KINDS
        .iter()
        .map(|k| Instruction::parse(k).map(|i| i.sass().to_string()))
        .collect::<Result<_, _>>()?;
    rows.extend(hopper::sass_once(
        ctx,
        G,
        &module.cubin,
        "stsm_count",
        &names,
    ));
    // Wavefronts and conflicts under ncu.
    match hopper::measure(
        ctx,
        plan,
        G,
        (
            &[ncu::WAVEFRONTS_LD, ncu::WAVEFRONTS_ST, ncu::BANK_CONFLICTS],
            "stsm_count",
            "--probe-stmatrix",
        ),
        recs,
    ) {
        Err(row) => rows.push(*row),
        Ok(table) => {
            let table: ncu::LaunchMetrics = table
                .into_iter()
                .enumerate()
                .map(|(i, m)| (i as u64, m))
                .collect();
            let measured = wavefronts::measured_records(recs, &table);
            let (checks, _) = wavefronts::compare_records(recs, &measured)?;
            rows.extend(checks.into_iter().map(|c| Check {
                group: G.to_string(),
                ..c
            }));
            hopper::save(ctx, plan, "stmatrix.json", &measured)?;
        }
    }
    Ok(rows)
}
