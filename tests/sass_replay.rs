//! The SASS control-flow replay (`tilelab::sass::replay`) on ptxas's own code, no GPU and no
//! ptxas needed: `tests/data/sass/div_loops.sass` is `nvdisasm -c --print-line-info` of
//! ptxas 13.0.88's `-arch=sm_90 -lineinfo` CUBIN of `tests/data/sass/div_loops.ptx`
//! (2026-12-02). Its two loops run `a / b` (`div.u32`) and `|c / d|` (`div.s32`) times, so the
//! replay must carry ptxas's division sequence (`I2F.RP`, `MUFU.RCP`, `F2I.FTZ.U32.TRUNC.NTZ`,
//! `IMAD.HI.U32` and its correction steps) exactly: the expected counts are plain integer
//! division.

use tilelab::sass::listing;
use tilelab::sass::replay::{Launch, replay};

fn insts() -> Vec<listing::SassInst> {
    let text = include_str!("data/sass/div_loops.sass");
    let fs = listing::parse(text).unwrap();
    listing::function(&fs, "div_loops").unwrap().insts.clone()
}

fn issues_of(family: &str, insts: &[listing::SassInst], counts: &[u64]) -> u64 {
    insts
        .iter()
        .zip(counts)
        .filter(|(i, _)| i.family() == family)
        .map(|(_, n)| n)
        .sum()
}

#[test]
fn loops_run_as_many_times_as_the_quotients() {
    let insts = insts();
    let cases: [(u32, u32, i32, i32); 10] = [
        (0, 1, 0, 5),
        (1, 1, -7, 2),
        (7, 2, 7, -2),
        (100, 7, -100, -7),
        (999, 1000, 1000, 999),
        (1000, 1000, -1, 1),
        (4096, 3, i32::MIN + 1, 1 << 20),
        (65535, 255, 123_456, -1000),
        (12345, 1, 5, 5),
        (3_000_000_000, 1_000_000, 2_000_000_000, -1_000_000),
    ];
    for (a, b, c, d) in cases {
        let mut params = Vec::new();
        for v in [a, b, c as u32, d as u32] {
            params.extend_from_slice(&v.to_le_bytes());
        }
        let launch = Launch {
            params,
            param_base: 0x210,
            ntid: [64, 1, 1],
            nctaid: [1, 1, 1],
            ctaid: [0, 0, 0],
        };
        let n = replay(&insts, &launch, 10_000_000).unwrap();
        // Two warps, each running both loops.
        assert_eq!(
            issues_of("BAR", &insts, &n),
            2 * u64::from(a / b),
            "a = {a}, b = {b}"
        );
        assert_eq!(
            issues_of("MEMBAR", &insts, &n),
            2 * u64::from((c / d).unsigned_abs()),
            "c = {c}, d = {d}"
        );
    }
}
