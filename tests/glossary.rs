//! The glossary (`lessons/glossary/glossary.toml`, `tilelab explain`):
//!
//! * `every_term_a_lesson_marks_has_an_entry`: each `terms` of every built-in lesson and step;
//! * `key_terms_have_entries_with_sources`: the terms the issue lists (warp … occupancy), each
//!   with a source naming where it is defined;
//! * `explain_cli`: one entry, the list, `--json`, an unknown term's one-line error with near
//!   matches (exit 2).

use crate::common::run;
use run::tilelab;

use tilelab::lessons::{self, glossary};

/// The terms issue 18 asks the glossary to explain (and a few the lessons lean on).
const KEY_TERMS: &[&str] = &[
    "warp",
    "lane",
    "bank",
    "wavefront",
    "request",
    "bank conflict",
    "phase",
    "fragment",
    "groupID",
    "threadID_in_group",
    "ldmatrix",
    "stmatrix",
    "mma",
    "swizzle",
    "Swizzle<B,M,S>",
    "padding",
    "LDSM",
    "HMMA",
    "STSM",
    "LDGSTS",
    "cp.async",
    "TMA",
    "wgmma",
    "occupancy",
    "broadcast",
    "shared memory",
    "ideal",
    ".trans",
    "warpgroup",
    "matrix descriptor",
    "core matrix",
];

#[test]
fn every_term_a_lesson_marks_has_an_entry() {
    let g = glossary::builtin().unwrap();
    let mut n = 0;
    for l in lessons::builtin().unwrap() {
        assert!(!l.terms.is_empty(), "{}: marks no glossary terms", l.name);
        let step_terms = l.steps.iter().flat_map(|s| s.terms.iter());
        for t in l.terms.iter().chain(step_terms) {
            g.find(t)
                .unwrap_or_else(|e| panic!("lesson {}: term '{t}': {e}", l.name));
            n += 1;
        }
    }
    assert!(n >= 80, "only {n} marked terms");
}

#[test]
fn key_terms_have_entries_with_sources() {
    let g = glossary::builtin().unwrap();
    for t in KEY_TERMS {
        let e = g.find(t).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            e.sources.iter().any(|s| s.starts_with("PTX ISA §")
                || s.starts_with("Nsight Compute")
                || s.starts_with("CUDA")
                || s.starts_with("CUTLASS")),
            "{t}: no PTX ISA section, Nsight Compute metric, CUDA guide or CuTe source: {:?}",
            e.sources
        );
    }
    // Aliases reach their entry whatever the case.
    assert_eq!(g.find("WAVEFRONTS").unwrap().name, "wavefront");
    assert_eq!(g.find("LDSM.16.MT88.4").unwrap().name, ".trans");
    assert_eq!(g.find("%laneid").unwrap().name, "lane");
    // Metrics quoted where the lessons quote them.
    assert!(
        g.find("wavefront")
            .unwrap()
            .sources
            .iter()
            .any(|s| s.contains("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"))
    );
    assert!(
        g.find("bank conflict")
            .unwrap()
            .sources
            .iter()
            .any(|s| s.contains("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"))
    );
}

#[test]
fn explain_cli() {
    let o = tilelab(&["explain", "groupid"]);
    assert!(o.status.success());
    let s = String::from_utf8(o.stdout).unwrap();
    assert!(s.starts_with("groupID\n"), "{s}");
    assert!(s.contains("%laneid >> 2"), "{s}");
    assert!(s.contains("PTX ISA §9.7.14.5.8"), "{s}");
    assert!(s.contains("used in: ") && s.contains("ldmatrix"), "{s}");

    let o = tilelab(&["explain", "wavefront", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["name"], "wavefront");
    assert!(
        v["used_in"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["lesson"] == "banks")
    );

    let o = tilelab(&["explain", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.as_array().unwrap().len() >= KEY_TERMS.len());

    let o = tilelab(&["explain", "wavefrnt"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8(o.stderr).unwrap();
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with("tilelab: error: unknown term 'wavefrnt'; near: wavefront"),
        "{e}"
    );
}
