//! Throughput of the request model: warp requests per second for random `ld.shared.b32`,
//! `ld.shared.v4.b32` and `ldmatrix.x4` requests (`cargo bench`).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tilelab::sim::bank::{WarpRequest, schedule};
use tilelab::sim::instr::Instruction;

fn requests(ins: &str, n: usize) -> Vec<WarpRequest> {
    let ins = Instruction::parse(ins).unwrap();
    let a = ins.alignment();
    let mut s = 0x9E3779B97F4A7C15u64;
    (0..n)
        .map(|_| {
            WarpRequest::new(
                ins,
                std::array::from_fn(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    ((s >> 20) as u32 % 16384) / a * a
                }),
            )
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    const N: usize = 1024;
    let mut g = c.benchmark_group("request_model");
    g.throughput(Throughput::Elements(N as u64));
    for ins in ["ld.shared.b32", "ld.shared.v4.b32", "ldmatrix.x4"] {
        let reqs = requests(ins, N);
        g.bench_function(format!("{ins}/count"), |b| {
            b.iter(|| {
                reqs.iter()
                    .map(|r| black_box(r).wavefront_count())
                    .sum::<u32>()
            })
        });
        g.bench_function(format!("{ins}/schedule"), |b| {
            b.iter(|| {
                reqs.iter()
                    .map(|r| schedule(black_box(r)).wavefront_count())
                    .sum::<u32>()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
