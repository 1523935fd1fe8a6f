//! Throughput of the request model in warp requests per second (`cargo bench --bench
//! request_model`): random `ld.shared.b32`, `ld.shared.v2.b32`, `ld.shared.v4.b32`,
//! `st.shared.v4.b32` and `ldmatrix.x4` requests with offsets below 16 KiB, all 32 lanes active
//! (`full`) or a random mask (`partial`; ldmatrix always has all 32), through
//! [`WarpRequest::cost`] (what every command counts with; AVX2 where the CPU has it), through
//! [`WarpRequest::cost_portable`] (its scalar path) and through [`schedule`] (the per-wavefront
//! detail built only for display). Figures are in `docs/perf-cpu.md`.
//!
//! `TILELAB_BENCH_CLOCK=cpu` measures the benchmark thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`, Linux) instead of wall-clock time: requests per second *per core*
//! even while other processes share the cores.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tilelab::sim::bank::{WarpRequest, schedule};

mod common;
use common::Clock;
use tilelab::sim::instr::Instruction;

/// `n` random requests of `ins` (xorshift64, fixed seed: the same requests every run).
fn requests(ins: &str, partial: bool, n: usize) -> Vec<WarpRequest> {
    let ins = Instruction::parse(ins).unwrap();
    let a = ins.alignment();
    let mut s = 0x9E3779B97F4A7C15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    (0..n)
        .map(|_| {
            let mut r = WarpRequest::new(
                ins,
                std::array::from_fn(|_| ((next() >> 20) as u32 % 16384) / a * a),
            );
            if partial {
                r.active_mask = (next() >> 32) as u32;
            }
            r
        })
        .collect()
}

fn bench(c: &mut Criterion<Clock>) {
    const N: usize = 1024;
    let mut g = c.benchmark_group("request_model");
    g.throughput(Throughput::Elements(N as u64));
    for ins in [
        "ld.shared.b32",
        "ld.shared.v2.b32",
        "ld.shared.v4.b32",
        "st.shared.v4.b32",
        "ldmatrix.x4",
    ] {
        for partial in [false, true] {
            if partial && ins.starts_with("ldmatrix") {
                continue;
            }
            let mask = if partial { "partial" } else { "full" };
            let reqs = requests(ins, partial, N);
            g.bench_function(format!("{ins}/{mask}/cost"), |b| {
                b.iter(|| {
                    reqs.iter()
                        .map(|r| black_box(r).cost().wavefronts)
                        .sum::<u32>()
                })
            });
            g.bench_function(format!("{ins}/{mask}/portable"), |b| {
                b.iter(|| {
                    reqs.iter()
                        .map(|r| black_box(r).cost_portable().wavefronts)
                        .sum::<u32>()
                })
            });
            if !partial {
                g.bench_function(format!("{ins}/{mask}/schedule"), |b| {
                    b.iter(|| {
                        reqs.iter()
                            .map(|r| schedule(black_box(r)).wavefront_count())
                            .sum::<u32>()
                    })
                });
            }
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = bench
}
criterion_main!(benches);
