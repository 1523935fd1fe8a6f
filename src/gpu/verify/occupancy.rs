//! Group `occupancy`: for each GEMM case's kernel, the driver's resident blocks per SM
//! (`cuOccupancyMaxActiveBlocksPerMultiprocessor`, with the registers the compiler gave it)
//! against the simulator's occupancy model for the device's architecture.

use super::{Check, Context, Group, Plan, gemm};
use crate::gpu::launch::{GemmTile, max_active_blocks, num_regs};
use crate::sim::occupancy::{OccupancyInput, occupancy};

/// The group.
pub const GROUP: Group = Group {
    name: "occupancy",
    about: "blocks per SM of the GEMM kernels: the driver against the occupancy model",
    run,
};

fn run(ctx: &mut Context<'_>, _plan: &Plan) -> anyhow::Result<Vec<Check>> {
    let mut out = Vec::new();
    for i in 0..gemm::CASES.len() {
        let c = gemm::compiled(ctx, i)?;
        let (t, cta, name) = gemm::case(i, ctx.arch)?;
        let f = GemmTile::load(ctx.gpu()?, &c)?;
        let regs = num_regs(&f.0)?;
        let threads = t.warps * 32;
        let driver = max_active_blocks(&f.0, threads, cta.smem_bytes)?;
        let sim = occupancy(&OccupancyInput {
            arch: ctx.arch,
            threads_per_block: threads,
            smem_per_block_bytes: cta.smem_bytes,
            regs_per_thread: Some(regs),
            smem_opt_in: true,
        })?;
        out.push(Check::new(
            "occupancy",
            format!(
                "{name} ({threads} thr, {} B smem, {regs} regs)",
                cta.smem_bytes
            ),
            format!("{} blocks/SM", sim.blocks_per_sm),
            format!("{driver} blocks/SM"),
            sim.blocks_per_sm == driver,
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        ));
    }
    Ok(out)
}
