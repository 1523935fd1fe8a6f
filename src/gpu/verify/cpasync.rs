//! Group `cp.async` (sm_90): every `cp.async` request of the plan ([`Plan::cp_async_records`]:
//! tile copies of every form and `--hopper-fuzz` random ones, shared addresses and global
//! sources both random) launched alone (`cpasync_src_count`, `kernels/hopper_probe.cu`) in a
//! child under Nsight Compute; the counters against the model
//! ([`crate::gpu::hopper_check::cp_async_checks`]); the SASS names of the four forms.

use anyhow::Context as _;

use super::{Check, Context, Group, Plan, hopper};
use crate::gpu::device::Gpu;
use crate::gpu::fuzz::{self, CP_ASYNC_KINDS, CP_ASYNC_SRC_BYTES};
use crate::gpu::hopper_check::{self, CP_ASYNC_METRICS};
use crate::gpu::launch::{CpAsyncProbe, DeviceBuffer};
use crate::measured::records::{self, Record};
use crate::sim::instr::Instruction;

/// The group.
pub const GROUP: Group = Group {
    name: "cp.async",
    about: "cp.async counters under ncu against the model (tile copies exact, spread sources within the SASS-attributed bounds); .cg moves no L1TEX shared counter; SASS names (sm_90)",
    run,
};

const G: &str = "cp.async";

/// The structured requests: for every form, the tile copy (lane `l` copies from `size·l` to
/// `1024 + size·l`), every lane into one address, lane pairs into one address, a 128-byte
/// shared stride; sources contiguous at the copy size and 16 bytes apart (names
/// `cpasync.<form>.<pattern>.src<stride>`).
pub fn structured() -> Vec<Record> {
    let mut v = Vec::new();
    for ins in CP_ASYNC_KINDS {
        let w = Instruction::parse(ins).map_or(16, |i| i.bytes_per_address());
        let pats: [(&str, [u32; 32]); 4] = [
            ("contiguous", std::array::from_fn(|l| 1024 + w * l as u32)),
            ("same", [1024; 32]),
            (
                "pairs_same",
                std::array::from_fn(|l| 4096 + w * (l as u32 / 2)),
            ),
            ("stride128B", std::array::from_fn(|l| 1024 + 128 * l as u32)),
        ];
        for stride in [w, 16]
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
        {
            for (name, offs) in &pats {
                v.push(Record {
                    name: format!("cpasync.{ins}.{name}.src{stride}"),
                    instruction: ins.to_string(),
                    lane_byte_offsets: offs.iter().map(|&o| o as u64).collect(),
                    active_mask: None,
                    wavefronts: None,
                    bank_conflicts: None,
                    global_addresses: Some((0..32).map(|l| (stride * l) as u64).collect()),
                });
            }
        }
    }
    v
}

/// The probe mode ([`super::Probe::CpAsync`]): `cpasync_src_count` once per record of `file`,
/// sources at `global_addresses` into one [`CP_ASYNC_SRC_BYTES`] buffer.
///
/// # Errors
/// An unreadable file, a record that is no cp.async or has no sources, a driver error.
pub fn probe(gpu: &Gpu, file: &std::path::Path) -> anyhow::Result<String> {
    let recs = records::load(file)?;
    let c = gpu.compile_for(
        "hopper_probe.cu",
        crate::gpu::source::HOPPER_PROBE_CU,
        "sm_90",
        &[],
    )?;
    let p = CpAsyncProbe::load(gpu, &c)?;
    let bytes: Vec<u8> = (0..CP_ASYNC_SRC_BYTES).map(|i| (i * 7 + 3) as u8).collect();
    let src = DeviceBuffer::from_host(gpu, &bytes)?;
    for r in &recs {
        let req = r.request()?;
        let kind = fuzz::kind_in(&CP_ASYNC_KINDS, &r.instruction)
            .with_context(|| format!("record '{}' is not a cp.async", r.name))?;
        let g = req
            .global_addrs
            .as_ref()
            .with_context(|| format!("record '{}' has no global_addresses", r.name))?;
        let mut so = [0u32; 32];
        for (o, &a) in so.iter_mut().zip(g.iter()) {
            *o = u32::try_from(a)
                .with_context(|| format!("record '{}': source offset {a}", r.name))?;
        }
        p.run(
            gpu,
            &src,
            (&so, &req.lane_byte_offsets),
            req.active_mask,
            kind,
        )?;
    }
    Ok(format!("launched {}", recs.len()))
}

/// A record with what ncu measured for it (`--save-hopper`).
#[derive(serde::Serialize)]
struct Measured<'a> {
    #[serde(flatten)]
    record: &'a Record,
    counters: &'a std::collections::BTreeMap<String, f64>,
}

fn run(ctx: &mut Context<'_>, plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let recs = &plan.cp_async_records;
    let what = format!("{} cp.async requests", recs.len());
    if let Some(row) = hopper::needs_sm90(ctx.arch, G, &what) {
        return Ok(vec![row]);
    }
    // Counters first (the child compiles its own module), then the SASS names.
    let mut rows = match hopper::measure(
        ctx,
        plan,
        G,
        (&CP_ASYNC_METRICS, "cpasync_src_count", "--probe-cpasync"),
        recs,
    ) {
        Err(row) => vec![*row],
        Ok(table) => {
            let rows = hopper_check::cp_async_checks(recs, &table)?;
            let saved: Vec<Measured> = recs
                .iter()
                .zip(&table)
                .map(|(record, counters)| Measured { record, counters })
                .collect();
            hopper::save(ctx, plan, "cpasync.json", &saved)?;
            rows
        }
    };
    let names: Vec<String> = CP_ASYNC_KINDS
        .iter()
        .map(|k| Instruction::parse(k).map(|i| i.sass().to_string()))
        .collect::<Result<_, _>>()?;
    ctx.progress
        .start("compiling kernels/hopper_probe.cu with NVRTC (sm_90)");
    let module = hopper::probe_module(ctx);
    ctx.progress.finish();
    match module {
        Ok(m) => rows.extend(hopper::sass_once(
            ctx,
            G,
            &m.cubin,
            "cpasync_src_count",
            &names,
        )),
        Err(e) => rows.push(Check::new(
            G,
            format!("SASS cpasync_src_count: {}", names.join(", ")),
            "-",
            "-",
            false,
            format!("kernels/hopper_probe.cu: {e:#}"),
        )),
    }
    Ok(rows)
}
