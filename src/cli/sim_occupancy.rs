//! `tilelab sim occupancy`: the CLI around [`tilelab::sim::occupancy`]. `--json` prints one
//! object:
//!
//! * `occupancy`: `{input: {arch, threads_per_block, smem_per_block_bytes, regs_per_thread,
//!   smem_opt_in}, warps_per_block, regs_per_warp, smem_per_block_limit_bytes,
//!   smem_allocated_per_block_bytes, smem_per_sm_bytes, limits: {warps, blocks, registers,
//!   shared_memory}, blocks_per_sm, active_warps, max_warps, occupancy, limiting, reason}`;
//!   a block that does not fit is a result: `blocks_per_sm` 0 and `reason` says why (null
//!   when it fits).

use std::process::ExitCode;

use tilelab::sim::arch::Arch;
use tilelab::sim::occupancy::{OccupancyInput, occupancy};

use super::out::{self, emit, emit_json, group};

/// Arguments of `tilelab sim occupancy`.
#[derive(clap::Args, Debug)]
pub struct OccupancyArgs {
    /// Architecture: sm_75, sm_80, sm_86, sm_89, sm_90.
    #[arg(long)]
    pub arch: String,
    /// Threads per block.
    #[arg(long, value_parser = super::whole::<u32>("1..=1024 threads per block"))]
    pub threads: u32,
    /// Shared memory per block, a size: bytes (28672) or K, KB, KiB of 1024 bytes (28K, 28KB,
    /// 28KiB, 1.5K), M, MB, MiB of 1024 KiB.
    #[arg(long, value_name = "BYTES", value_parser = super::size_u32, default_value = "0")]
    pub smem: u32,
    /// Registers per thread (left out: registers are not counted as a limit).
    #[arg(long, value_parser = super::whole::<u32>("1..=255 registers per thread"))]
    pub regs: Option<u32>,
    /// The kernel does not opt in to more than 48 KB of shared memory per block
    /// (cudaFuncAttributeMaxDynamicSharedMemorySize): a block gets at most 48 KB. Default: it
    /// opts in and gets the architecture's per-block limit.
    #[arg(long)]
    pub no_opt_in: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run_occupancy(a: OccupancyArgs) -> anyhow::Result<ExitCode> {
    let mut o = String::new();
    let inp = OccupancyInput {
        arch: Arch::parse(&a.arch)?,
        threads_per_block: a.threads,
        smem_per_block_bytes: a.smem,
        regs_per_thread: a.regs,
        smem_opt_in: !a.no_opt_in,
    };
    let r = occupancy(&inp)?;
    if a.json {
        emit_json(&r)?;
        return Ok(ExitCode::SUCCESS);
    }
    let l = inp.arch.limits();
    outln!(
        o,
        "{}",
        out::bold(&format!(
            "{}: {} threads ({} warps) per block, {} B shared memory per block ({} B allocated), {}",
            inp.arch,
            inp.threads_per_block,
            r.warps_per_block,
            group(inp.smem_per_block_bytes as u64),
            group(r.smem_allocated_per_block_bytes),
            match (inp.regs_per_thread, r.regs_per_warp) {
                (Some(n), Some(w)) => format!("{n} registers per thread ({w} per warp)"),
                _ => "registers not given".to_string(),
            }
        ))
    );
    let lim = |v: Option<u32>| v.map_or("-".to_string(), |x| x.to_string());
    let rows = [
        (
            format!("warps ({} per SM)", l.max_warps_per_sm),
            Some(r.limits.warps),
            tilelab::sim::occupancy::Limiter::Warps,
        ),
        (
            format!("blocks ({} per SM)", l.max_blocks_per_sm),
            Some(r.limits.blocks),
            tilelab::sim::occupancy::Limiter::Blocks,
        ),
        (
            format!("registers ({} per SM)", group(l.regs_per_sm as u64)),
            r.limits.registers,
            tilelab::sim::occupancy::Limiter::Registers,
        ),
        (
            format!(
                "shared memory ({} B per SM)",
                group(l.smem_per_sm_bytes as u64)
            ),
            r.limits.shared_memory,
            tilelab::sim::occupancy::Limiter::SharedMemory,
        ),
    ];
    outln!(
        o,
        "shared memory per block: at most {} B ({} KB){}",
        group(r.smem_per_block_limit_bytes as u64),
        r.smem_per_block_limit_bytes / 1024,
        if inp.smem_opt_in {
            " with the opt-in to more than 48 KB (cudaFuncAttributeMaxDynamicSharedMemorySize; --no-opt-in for 48 KB)"
        } else {
            " without the opt-in (--no-opt-in)"
        }
    );
    outln!(o, "  {:<32} {:>10}", "limit", "blocks/SM");
    for (label, v, which) in rows {
        let mark = if r.limiting.contains(&which) {
            out::paint("  <- limiting", tilelab::palette::replay(1))
        } else {
            String::new()
        };
        outln!(o, "  {label:<32} {:>10}{mark}", lim(v));
    }
    let names: Vec<&str> = r.limiting.iter().map(|x| x.name()).collect();
    match &r.reason {
        Some(why) => outln!(
            o,
            "blocks per SM 0: the block does not fit ({why}); theoretical occupancy 0%"
        ),
        None => outln!(
            o,
            "blocks per SM {}, active warps {} of {}, theoretical occupancy {:.1}% (limited by {})",
            r.blocks_per_sm,
            r.active_warps,
            r.max_warps,
            100.0 * r.occupancy,
            names.join(" and ")
        ),
    }
    outln!(
        o,
        "sources: CUDA C++ Programming Guide, Technical Specifications per Compute Capability; cuda_occupancy.h (allocation granularities)"
    );
    emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::{Cli, Command, SimCommand};

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("tilelab").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn occupancy_flags() {
        let c = parse(&[
            "sim",
            "occupancy",
            "--arch",
            "sm_75",
            "--threads",
            "128",
            "--smem",
            "28KB",
        ]);
        let Command::Sim {
            cmd: SimCommand::Occupancy(o),
        } = c.cmd
        else {
            panic!("not occupancy")
        };
        assert_eq!((o.threads, o.smem, o.regs), (128, 28672, None));
    }
}
