//! Issue 12's benchmark: the FA2 lesson kernel's PTX (`kernels/fa2_fwd.cu` compiled by nvcc for
//! sm_90, `tests/data/ptx/fa2_d128_bm128_causal.ptx`), one CTA of S = 4096, D = 128, causal,
//! simulated from text to report (`cargo bench --bench ptx_fa2`). The launch is the fixture's
//! (`fa2_d128_bm128_causal_s4096_grid32.json`: grid 32, block 128, 98,304 bytes of dynamic
//! shared memory); CTA (0,0,0) is the one that walks all 32 key blocks (the most work). Target:
//! under 2 s per run. Results and the machine: `docs/perf-cpu.md`.
//!
//! `TILELAB_BENCH_CLOCK=cpu` measures the benchmark thread's CPU time instead of wall-clock
//! time (the development machine's two cores are shared; see `benches/common/mod.rs`).

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;
use tilelab::ptx::{self, Launch};

mod common;
use common::Clock;

const PTX: &str = include_str!("../tests/data/ptx/fa2_d128_bm128_causal.ptx");

fn launch() -> Launch {
    Launch {
        grid: [32, 1, 1],
        block: [128, 1, 1],
        cta: [0, 0, 0],
        args: vec![
            ("fa2_fwd_param_4".into(), "4096".into()),
            ("fa2_fwd_param_5".into(), "0.0883883461356163".into()),
        ],
        tensor_maps: vec![],
        dynamic_smem: Some(98_304),
        max_instructions: 200_000_000,
        cluster: None,
    }
}

fn bench(c: &mut Criterion<Clock>) {
    let l = launch();
    // The counts the H200 measured for this CTA (the fixture's `cta0_by_difference`): a run
    // that does less work would be faster and wrong.
    let r = ptx::simulate(PTX, None, &l).expect("the fixture simulates");
    assert_eq!(
        (
            r.totals.sass.HMMA,
            r.totals.sass.LDSM,
            r.totals.sass.LDGSTS,
            r.totals.shared_ld_wavefronts
        ),
        (65_536, 20_480, 4_160, 81_920),
        "HMMA, LDSM, LDGSTS, shared load wavefronts of CTA 0 as measured"
    );
    let mut g = c.benchmark_group("ptx");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("fa2_d128_bm128_causal_s4096_cta0", |b| {
        b.iter(|| black_box(ptx::simulate(black_box(PTX), None, &l).unwrap()))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = bench
}
criterion_main!(benches);
