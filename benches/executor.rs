//! Throughput of the warp executor (`sim::exec::execute`): random `ld.shared.b32`,
//! `ld.shared.v4.b32`, `ldmatrix.x4` and `stmatrix.x4` warp instructions on a 16 KiB shared
//! memory, validated, costed and performed (`cargo bench --bench executor`).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tilelab::sim::bank::WarpRequest;
use tilelab::sim::exec::{WarpOp, execute};
use tilelab::sim::instr::Instruction;
use tilelab::sim::smem::SharedMemory;

fn ops(ins: &str, n: usize) -> Vec<WarpOp> {
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
            let addrs = std::array::from_fn(|_| ((next() >> 20) as u32 % 16368) / a * a);
            let data = std::array::from_fn(|_| std::array::from_fn(|_| next() as u32));
            WarpOp::store(WarpRequest::new(ins, addrs), data)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    const N: usize = 1024;
    let mut g = c.benchmark_group("executor");
    g.throughput(Throughput::Elements(N as u64));
    let mut smem = SharedMemory::with_b16_indices(16384);
    for ins in [
        "ld.shared.b32",
        "ld.shared.v4.b32",
        "ldmatrix.x4",
        "stmatrix.x4",
    ] {
        let ops = ops(ins, N);
        g.bench_function(format!("{ins}/execute"), |b| {
            b.iter(|| {
                ops.iter()
                    .map(|op| execute(&mut smem, black_box(op)).unwrap().cost.wavefronts)
                    .sum::<u32>()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
