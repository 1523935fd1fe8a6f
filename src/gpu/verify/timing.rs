//! Group `timing`: cycles per request (clock64, 32 warps of one SM repeating one access,
//! `kernels/bank_time.cu`) beside the simulated wavefronts: within each pattern, more
//! wavefronts must cost more cycles. Needs no Nsight Compute.

use super::{Check, Context, Group, Plan};
use crate::gpu::launch::BankTime;
use crate::gpu::source::BANK_TIME_CU;
use crate::sim::access::{self, Access};
use crate::sim::bank::WarpRequest;
use crate::sim::instr::Instruction;
use crate::sim::layout::Layout;

/// The group.
pub const GROUP: Group = Group {
    name: "timing",
    about: "clock64 cycles per request grow with the simulated wavefronts",
    run,
};

/// The timed cases: (group label, access, layout, rows, cols, dtype).
pub const CASES: &[(&str, &str, &str, u32, u32, &str)] = &[
    ("K column read", "col", "row", 32, 64, "f32"),
    ("K column read", "col", "row+pad:1", 32, 64, "f32"),
    ("K column read", "col", "trans", 32, 64, "f32"),
    ("ldmatrix.x4 64x64 f16", "ldmatrix", "row", 64, 64, "f16"),
    ("ldmatrix.x4 64x64 f16", "ldmatrix", "pad:8", 64, 64, "f16"),
    (
        "ldmatrix.x4 64x64 f16",
        "ldmatrix",
        "swizzle:3,3,3",
        64,
        64,
        "f16",
    ),
];

/// The kernel's `kind` of a request: 0 b32, 1 v2, 2 v4, 3 ldmatrix.x4, 4 ldmatrix.x4.trans.
fn kind(req: &WarpRequest) -> i32 {
    match req.instruction {
        Instruction::Ld(w) if w.bytes() == 4 => 0,
        Instruction::Ld(w) if w.bytes() == 8 => 1,
        Instruction::Ld(_) => 2,
        Instruction::Ldmatrix { trans: false, .. } => 3,
        _ => 4,
    }
}

fn run(ctx: &mut Context<'_>, _plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let gpu = ctx.gpu()?;
    let compiled = ctx.compiled("bank_time.cu", |gpu| {
        Ok(gpu.compile("bank_time.cu", BANK_TIME_CU)?)
    })?;
    let f = BankTime::load(gpu, &compiled)?;
    let iters = 4096i32;
    // (label, layout, simulated wavefronts, best cycles per request).
    let mut measured: Vec<(&str, &str, u32, f64)> = Vec::new();
    for &(label, acc, lay, r, c, dt) in CASES {
        let eb = if dt == "f32" { 4 } else { 2 };
        let l = Layout::parse(lay, r, c, eb)?;
        let req: WarpRequest = access::requests(Access::parse(acc)?, &l)?.remove(0).request;
        let cycles = f.run(gpu, &req.lane_byte_offsets, kind(&req), iters, 5)?;
        let best = cycles
            .iter()
            .map(|&c| c as f64 / (32.0 * 8.0 * iters as f64))
            .fold(f64::MAX, f64::min);
        measured.push((label, lay, req.cost().wavefronts, best));
    }
    let mut out = Vec::new();
    for &(label, lay, wf, cyc) in &measured {
        let worse_ok = measured
            .iter()
            .filter(|(l2, _, w2, _)| *l2 == label && *w2 < wf)
            .all(|(_, _, _, c2)| *c2 < cyc);
        out.push(Check::new(
            "time",
            format!("{label}, layout {lay}"),
            format!("{wf} wavefronts"),
            format!("{cyc:.1} cycles"),
            worse_ok,
            "cycles per request should grow with wavefronts",
        ));
    }
    Ok(out)
}
