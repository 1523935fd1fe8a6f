//! Issue 31's benchmark: `tilelab ptx` on a mix of the fixtures, one CTA each, reported as warp
//! instructions per second (criterion's throughput in elements = warp instructions the run
//! executed). Run with `cargo bench --bench ptx_mix`; `TILELAB_BENCH_CLOCK=cpu` measures the
//! benchmark thread's CPU time (`benches/common/mod.rs`). Results and the machine:
//! `docs/perf-cpu.md`.
//!
//! The mix (PTX from `tests/data/ptx/` and `tests/data/ptx_hopper/`, launches as their fixtures
//! give them unless noted):
//! - `fa2_s4096_cta0`: the FA2 lesson kernel (nvcc, sm_90, mma.sync m16n8k16, ldmatrix,
//!   cp.async), S = 4096, D = 128, causal, CTA (0,0,0) of grid 32 (the heaviest: 270,596 warp
//!   instructions);
//! - `tt_matmul_f16_4w_k4096`: Triton's tutorial matmul, 128x128x32 tile, wgmma (Hopper), with
//!   K = 4096 instead of the fixture's 256;
//! - `triton_matmul_4w_k4096`: Triton's 32x64 matmul (mma.sync), K = 4096;
//! - `tt_attn_fwd_d64`: Triton's fused attention through TensorDescriptors (TMA, wgmma, Hopper);
//! - `fa3_d64_causal_f16_s512`: the FA3-style nvcc kernel (TMA, mbarriers, wgmma, warp
//!   specialisation; Hopper);
//! - `cute_sgemm_sm80`: CuTe's sm80 SGEMM tutorial (nvcc, f32 FMA loop).
//!
//! Each case's warp-instruction count is taken from one untimed run and the case is refused
//! (panics before timing) if the run fails.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;
use tilelab::ptx::{self, Launch, launch_file};

mod common;
use common::Clock;

const PTX_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx");
const HOPPER_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx_hopper");

/// A case: its name, PTX text, kernel and launch.
struct Case {
    name: &'static str,
    ptx: String,
    kernel: Option<String>,
    launch: Launch,
}

fn flags_case(
    name: &'static str,
    ptx: &str,
    grid: u32,
    block: u32,
    smem: u32,
    args: &[(&str, &str)],
) -> Case {
    Case {
        name,
        ptx: std::fs::read_to_string(Path::new(PTX_DIR).join(ptx)).expect("fixture PTX"),
        kernel: None,
        launch: Launch {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            cta: [0, 0, 0],
            args: args
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            tensor_maps: vec![],
            dynamic_smem: Some(smem),
            max_instructions: 30_000_000,
            cluster: None,
        },
    }
}

/// A case from a launch file of `tests/data/ptx_hopper/launch/`, with `extra` args on top.
fn launch_case(name: &'static str, file: &str, extra: &[(&str, &str)]) -> Case {
    let path = Path::new(HOPPER_DIR).join("launch").join(file);
    let spec = launch_file::parse(&std::fs::read_to_string(&path).expect("launch file"))
        .expect("a valid launch file");
    let ptx_path = path.parent().unwrap().join(&spec.ptx);
    let ptx = std::fs::read_to_string(ptx_path).expect("fixture PTX");
    let prog = ptx::report::load(&ptx, spec.kernel.as_deref()).expect("the fixture decodes");
    let extra: Vec<(String, String)> = extra
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let args = launch_file::override_args(&prog, &spec.args, &extra);
    Case {
        name,
        ptx,
        kernel: spec.kernel.clone(),
        launch: Launch {
            grid: spec.grid,
            block: spec.block,
            cta: spec.cta,
            args,
            tensor_maps: spec.tensor_maps.clone(),
            dynamic_smem: spec.dynamic_smem,
            max_instructions: 30_000_000,
            cluster: spec.cluster,
        },
    }
}

fn cases() -> Vec<Case> {
    vec![
        flags_case(
            "fa2_s4096_cta0",
            "fa2_d128_bm128_causal.ptx",
            32,
            128,
            98_304,
            &[
                ("fa2_fwd_param_4", "4096"),
                ("fa2_fwd_param_5", "0.0883883461356163"),
            ],
        ),
        launch_case(
            "tt_matmul_f16_4w_k4096",
            "tt_matmul_f16_4w.json",
            &[("5", "4096"), ("6", "4096")],
        ),
        flags_case(
            "triton_matmul_4w_k4096",
            "triton_matmul_4w.ptx",
            1,
            128,
            12_288,
            &[("3", "4096"), ("4", "4096"), ("5", "64"), ("6", "64")],
        ),
        launch_case("tt_attn_fwd_d64", "tt_attn_fwd_d64.json", &[]),
        launch_case(
            "fa3_d64_causal_f16_s512",
            "fa3_d64_causal_f16_s512.json",
            &[],
        ),
        launch_case("cute_sgemm_sm80", "cute_sgemm_sm80.json", &[]),
    ]
}

fn bench(c: &mut Criterion<Clock>) {
    let mut g = c.benchmark_group("ptx_mix");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for case in cases() {
        let r = ptx::simulate(&case.ptx, case.kernel.as_deref(), &case.launch)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        g.throughput(Throughput::Elements(r.totals.warp_instructions));
        g.bench_function(case.name, |b| {
            b.iter(|| {
                black_box(
                    ptx::simulate(black_box(&case.ptx), case.kernel.as_deref(), &case.launch)
                        .unwrap(),
                )
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = bench
}
criterion_main!(benches);
