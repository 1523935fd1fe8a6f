//! Group `lessons`: every lesson's kernel ([`crate::gpu::source::lesson`]). Its SASS holds the
//! shared-memory and tensor-core instructions of its steps, and after every load step each
//! lane's registers hold what the simulator says (shared memory filled with b16 indices, so
//! each value names its address). The lessons' requests are measured by the `wavefronts` group
//! ([`requests`]; stmatrix steps by the `stmatrix` group). A lesson with a `stmatrix` step is one
//! SKIPPED row on a device that is not sm_90.

use std::collections::BTreeMap;

use super::{Check, Context, Group, Plan};
use crate::gpu::device::Gpu;
use crate::gpu::launch::LessonKernel;
use crate::gpu::sass;
use crate::gpu::source::lesson::kernel_source;
use crate::lessons::{Lesson, StepOp, run};
use crate::measured::records::Record;
use crate::sim::arch::Arch;
use crate::sim::bank::WarpRequest;
use crate::sim::exec::{self, WarpOp};
use crate::sim::instr::{Instruction, SassClass};
use crate::sim::smem::SharedMemory;

/// The group.
pub const GROUP: Group = Group {
    name: "lessons",
    about: "each lesson kernel's SASS and its registers after every load step",
    run,
};

/// One replay record per (lesson, layout, shared-memory step), named
/// `lesson.<name>.s<step>.<layout>`, in lesson, layout, step order.
///
/// # Errors
/// A step the simulator cannot run (never for a lesson that loaded).
pub fn requests(lessons: &[Lesson]) -> anyhow::Result<Vec<Record>> {
    let mut recs = Vec::new();
    for lesson in lessons {
        for li in 0..lesson.layouts.len() {
            for (si, st) in lesson.steps.iter().enumerate() {
                if !matches!(st.op, StepOp::Shared { .. }) {
                    continue;
                }
                if let Some(req) = run::run_step(lesson, si, li)?.request {
                    recs.push(Record::from_request(
                        format!("lesson.{}.s{si}.{}", lesson.name, lesson.layouts[li]),
                        &req,
                    ));
                }
            }
        }
    }
    Ok(recs)
}

fn run(ctx: &mut Context<'_>, plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let gpu = ctx.gpu()?;
    let smem = SharedMemory::with_b16_indices(64 * 1024);
    let mut out = Vec::new();
    for lesson in &plan.lessons {
        let stsm = lesson.steps.iter().any(|st| {
            matches!(
                st.op,
                StepOp::Shared {
                    instruction: Instruction::Stmatrix { .. },
                    ..
                }
            )
        });
        if stsm && ctx.arch != Arch::Sm90 {
            out.push(Check::skipped(
                "sass",
                format!("lesson {}: SASS and registers", lesson.name),
                "-",
                "-",
                format!(
                    "its stmatrix step needs an sm_90 (Hopper) GPU; this device is {}",
                    ctx.arch
                ),
            ));
            continue;
        }
        let fname = lesson.kernel_function();
        let compiled = gpu.compile(&lesson.kernel, &kernel_source(lesson))?;
        out.push(
            match super::sass_listing(
                ctx,
                &format!("lesson {}: SASS", lesson.name),
                &compiled.cubin,
                &fname,
            ) {
                Ok(listing) => sass_check(lesson, &listing),
                Err(row) => *row,
            },
        );
        let kernel = LessonKernel::load(gpu, &compiled, &fname)?;
        out.extend(register_check(gpu, lesson, &kernel, &smem)?);
    }
    Ok(out)
}

/// The kernel holds one copy of the steps per variant (`variant == v` branches): every
/// simulated step's SASS mnemonic appears as often as the steps say. Shared-memory and
/// tensor-core instructions only; the prologue's index fill is `STS.U16` (not a lesson step
/// unless a step stores u16).
pub fn sass_check(lesson: &Lesson, listing: &sass::Listing) -> Check {
    let fname = lesson.kernel_function();
    let mut want: BTreeMap<String, u32> = BTreeMap::new();
    for v in 0..lesson.variants.len().max(1) {
        for (m, n) in run::sass_counts(lesson, v) {
            *want.entry(m).or_default() += n;
        }
    }
    let got = listing.get(&fname).cloned().unwrap_or_default();
    let fill_is_extra = !want.contains_key("STS.U16");
    let relevant = |m: &str| {
        [SassClass::Lds, SassClass::Sts, SassClass::Hmma]
            .iter()
            .any(|c| m.starts_with(c.name()))
            && !(fill_is_extra && m == "STS.U16")
    };
    let got_f: BTreeMap<String, u32> = got.into_iter().filter(|(m, _)| relevant(m)).collect();
    let show = |m: &BTreeMap<String, u32>| {
        m.iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Check::new(
        "sass",
        format!("lesson {}: {}", lesson.name, show(&want)),
        want.values().sum::<u32>(),
        got_f.values().sum::<u32>(),
        got_f == want,
        format!("kernel has {}", show(&got_f)),
    )
}

/// The variant index of step `si` (0 for steps of every variant).
fn variant_of(lesson: &Lesson, si: usize) -> usize {
    lesson.steps[si]
        .variant
        .as_ref()
        .and_then(|v| lesson.variants.iter().position(|x| x == v))
        .unwrap_or(0)
}

/// Whether a store of its variant runs before step `si`: the load then reads data the simulator
/// does not model (the stored values come from mma results), so only its wavefronts are
/// measured.
fn after_store(lesson: &Lesson, si: usize) -> bool {
    lesson
        .steps_of(variant_of(lesson, si))
        .into_iter()
        .take_while(|&k| k < si)
        .any(|k| {
            matches!(lesson.steps[k].op, StepOp::Shared { instruction, .. } if instruction.is_store())
        })
}

/// Registers after each load step, under every layout: one row per lesson with load steps.
fn register_check(
    gpu: &Gpu,
    lesson: &Lesson,
    kernel: &LessonKernel,
    smem: &SharedMemory,
) -> anyhow::Result<Option<Check>> {
    let (mut steps_ok, mut steps_all, mut first_bad) = (0, 0, String::new());
    for li in 0..lesson.layouts.len() {
        for (si, st) in lesson.steps.iter().enumerate() {
            let StepOp::Shared { instruction, .. } = st.op else {
                continue;
            };
            if instruction.is_store() || after_store(lesson, si) {
                continue;
            }
            let Some(req) = run::run_step(lesson, si, li)?.request else {
                continue;
            };
            let hw = kernel.run(gpu, si as i32, li as i32, variant_of(lesson, si) as i32)?;
            let want = expected_load_regs(&req, smem)?;
            steps_all += 1;
            match first_difference(&want, &hw) {
                None => steps_ok += 1,
                Some((lane, q)) if first_bad.is_empty() => {
                    first_bad = format!(
                        "step {si} layout {}: lane {lane} r{q} expected {:#x} got {:#x}",
                        lesson.layouts[li],
                        want[lane].map_or(0, |w| w[q]),
                        hw[lane][q]
                    )
                }
                Some(_) => {}
            }
        }
    }
    Ok((steps_all > 0).then(|| {
        Check::new(
            "fragments",
            format!("lesson {}: registers after each load step", lesson.name),
            format!("{steps_all} runs"),
            format!("{steps_ok} equal"),
            steps_ok == steps_all,
            first_bad,
        )
    }))
}

/// The first (lane, register) where a loading lane's registers differ.
fn first_difference(want: &[Option<[u32; 4]>; 32], hw: &[[u32; 4]; 32]) -> Option<(usize, usize)> {
    (0..32).find_map(|lane| {
        let w = want[lane]?;
        (0..4).find(|&q| hw[lane][q] != w[q]).map(|q| (lane, q))
    })
}

/// What each lane's 4 output registers hold after a load step, with shared memory filled with
/// b16 indices; `None` for lanes that do not load.
fn expected_load_regs(
    req: &WarpRequest,
    smem: &SharedMemory,
) -> anyhow::Result<[Option<[u32; 4]>; 32]> {
    let mut want = [None; 32];
    let word = |addr: u32| -> anyhow::Result<u32> {
        Ok(smem.read_u16(addr)? as u32 | (smem.read_u16(addr + 2)? as u32) << 16)
    };
    match req.instruction {
        Instruction::Ldmatrix { num, trans } => {
            let op = WarpOp::ldmatrix(num, trans, req.lane_byte_offsets);
            // A load: the copy is only read.
            let res = exec::execute(&mut smem.clone(), &op)?;
            for (lane, w) in want.iter_mut().enumerate() {
                *w = Some(res.regs[lane]);
            }
        }
        Instruction::Ld(w) => {
            for (lane, slot) in want.iter_mut().enumerate() {
                if req.active_mask >> lane & 1 == 0 {
                    continue;
                }
                let a = req.lane_byte_offsets[lane];
                let mut r = [0u32; 4];
                match w.bytes() {
                    1 => r[0] = (smem.read_u16(a & !1)? >> (8 * (a & 1))) as u32 & 0xff,
                    2 => r[0] = smem.read_u16(a)? as u32,
                    n => {
                        for (q, v) in r.iter_mut().enumerate().take((n / 4) as usize) {
                            *v = word(a + 4 * q as u32)?;
                        }
                    }
                }
                *slot = Some(r);
            }
        }
        Instruction::St(_) | Instruction::Stmatrix { .. } | Instruction::CpAsync(_) => {}
    }
    Ok(want)
}
