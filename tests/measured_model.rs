//! Every measured shared-memory record of `tests/data/` through the library, without the
//! binary: `WarpRequest::cost` (the AVX2 path where the CPU has it), `cost_portable` (the
//! scalar path), `schedule` and `simulate` (the per-wavefront detail the TUI draws) must all
//! give the wavefronts and bank conflicts ncu measured on the H200
//! (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`,
//! `l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum`; provenance inside each file,
//! `{"provenance": {...}, "records": [...]}`). `tests/sim_cli.rs` checks the same files through `tilelab sim
//! replay`; this test links only the library, so it is cheap enough to run for every mutant of
//! `crates/tilelab-core/src/sim/isa/bank.rs` (docs/log/2026-12-01-mutants.md).

use tilelab::records;
use tilelab::sim::bank::{SharedMemoryConfig, schedule, simulate};

/// (file, records): the record-format files with measured wavefronts on every record.
const FILES: [(&str, usize); 11] = [
    ("h200_wavefronts.json", 237),
    ("h200_fuzz_1400.json", 1400),
    ("h200_probe_2026-11-29.json", 1734),
    ("h200_verify_seed3_2026-11-29.json", 1089),
    ("h200_verify_seed4_2026-11-29.json", 1000),
    ("h200_verify_seed5_2026-11-29.json", 1542),
    ("h200_verify_seed6_2026-11-29.json", 2326),
    ("h200_verify_seed7_2026-11-30.json", 1337),
    ("h200_verify_seed21_2026-12-01.json", 1349),
    ("h200_verify_seed43_2026-12-01.json", 1349),
    ("h200_stmatrix_2026-11-30.json", 570),
];

#[test]
fn every_measured_record_is_reproduced_by_every_path_of_the_model() {
    let smem = SharedMemoryConfig::default();
    let mut conflicted = 0;
    let mut partial = 0;
    for (file, len) in FILES {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(file);
        let recs = records::load(&path).expect("measured file");
        assert_eq!(recs.len(), len, "{file}");
        let mut bad = Vec::new();
        for r in &recs {
            let req = r.request().expect("valid record");
            req.validate(&smem).expect("record inside shared memory");
            let w = r.wavefronts.expect("measured wavefronts");
            let fast = req.cost().modelled().expect("modelled");
            let scalar = req.cost_portable().modelled().expect("modelled");
            let sched = schedule(&req);
            let sim = simulate(&req, &smem).expect("valid request");
            let got = [
                ("cost", fast.wavefronts, fast.bank_conflicts()),
                ("cost_portable", scalar.wavefronts, scalar.bank_conflicts()),
                ("schedule", sched.wavefront_count(), sched.bank_conflicts()),
                ("simulate", sim.wavefront_count(), sim.bank_conflicts()),
            ];
            for (how, gw, gc) in got {
                if gw != w || r.bank_conflicts.is_some_and(|c| c != gc) {
                    bad.push(format!(
                        "{}: {how} {gw}/{gc}, measured {w}/{:?}",
                        r.name, r.bank_conflicts
                    ));
                }
            }
            if fast.ideal != sched.ideal() || sched.cost() != fast {
                bad.push(format!(
                    "{}: cost {fast:?} schedule {:?}",
                    r.name,
                    sched.cost()
                ));
            }
            conflicted += (r.bank_conflicts.unwrap_or(0) > 0) as usize;
            partial += (req.active_mask != u32::MAX) as usize;
        }
        assert!(
            bad.is_empty(),
            "{file}: {} mismatches: {:?}",
            bad.len(),
            &bad[..bad.len().min(8)]
        );
    }
    // The files must exercise conflicts and partial masks, or they prove little.
    assert!(conflicted > 1000, "{conflicted} conflicted records");
    assert!(partial > 500, "{partial} records with a partial mask");
}
