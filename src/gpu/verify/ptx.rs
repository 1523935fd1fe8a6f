//! Group `ptx`: the path `tilelab verify --ptx FILE` will take, checked end to end on a kernel
//! whose answer is known. `kernels/fragments.cu` is compiled by NVRTC to PTX text, the text is
//! loaded through the driver's JIT (`cuModuleLoadData`), `ldsm_dump` is looked up by name and
//! launched with parameters packed as its `.entry` declares them ([`crate::gpu::params`]), and
//! the registers are compared with the simulator's `ldmatrix` table.
//!
//! A PTX kernel check (a file from `src/ptx/` or the PTX fixtures, one CTA under ncu) goes here
//! or in a file beside it, registered in [`super::GROUPS`].

use super::{Check, Context, Group, Plan};
use crate::gpu::compare;
use crate::gpu::launch::LdsmDump;
use crate::gpu::source::FRAGMENTS_CU;
use crate::sim::instr::{Instruction, MatrixCount};
use crate::sim::ldmatrix;
use crate::sim::smem::SharedMemory;

/// The group.
pub const GROUP: Group = Group {
    name: "ptx",
    about: "a PTX module through the driver's JIT, launched by name with packed parameters",
    run,
};

fn run(ctx: &mut Context<'_>, _plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let gpu = ctx.gpu()?;
    ctx.progress
        .start("compiling fragments.cu to PTX and loading it through the driver's JIT");
    let loaded = gpu
        .compile_to_ptx("fragments.cu", FRAGMENTS_CU)
        .and_then(|ptx| gpu.load_ptx("fragments.ptx", &ptx).map(|m| (ptx, m)));
    ctx.progress.finish();
    let (ptx, module) = loaded?;
    let smem_bytes = 8192u32;
    let smem = SharedMemory::with_b16_indices(smem_bytes);
    let offs: [u32; 32] = std::array::from_fn(|l| ((l as u32 * 37 + 11) % 512) * 16);
    let (num, trans) = (MatrixCount::X4, true);
    let hw = LdsmDump::run_ptx(gpu, &module, &ptx, (num, trans), &offs, smem_bytes)?;
    let want = compare::ldmatrix_expected(&ldmatrix::fragment, num, trans, &offs, &smem)?;
    let d = compare::diff_regs(num.count(), &want, &hw);
    Ok(vec![Check::new(
        "ptx",
        format!(
            "{} scattered rows, PTX JIT + packed params",
            Instruction::Ldmatrix { num, trans }
        ),
        format!("{} regs", 32 * num.count()),
        format!("{} equal", 32 * num.count() - d.len()),
        d.is_empty(),
        compare::describe_diffs(&d),
    )])
}
