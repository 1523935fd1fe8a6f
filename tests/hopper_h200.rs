//! The Hopper models against what an H200 did (tests/data/h200_{stmatrix,stmatrix_smem,tma,
//! wgmma}_2026-11-30.json, measured by scripts/research/hopper/run.sh; provenance inside the files and in
//! docs/log/2026-11-30-verify.md). Every record must match.

use std::collections::HashMap;

use serde_json::Value;
use tilelab::sim::bank::{NotModelled, WarpRequest, schedule};
use tilelab::sim::exec::{self, LaneRegs, WarpOp};
use tilelab::sim::instr::{Instruction, MatrixCount};
use tilelab::sim::mma::MmaDtype;
use tilelab::sim::smem::SharedMemory;
use tilelab::sim::tma::{TmaBox, TmaSwizzle};
use tilelab::sim::wgmma::{self, ASource, AtomOrder, Major, MatrixDescriptor};

fn load(name: &str) -> Value {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("data file")).expect("JSON")
}

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_u64().expect("u32") as u32)
        .collect()
}

/// `stmatrix.x4.trans` -> (x4, true).
fn stsm_form(name: &str) -> (MatrixCount, bool) {
    let num = match name.split('.').nth(1) {
        Some("x1") => MatrixCount::X1,
        Some("x2") => MatrixCount::X2,
        Some("x4") => MatrixCount::X4,
        _ => panic!("bad instruction {name}"),
    };
    (num, name.ends_with(".trans"))
}

#[test]
fn stmatrix_wavefronts_follow_the_ldmatrix_rule_on_every_record() {
    // The model (bank.rs): one unit per 8x8 matrix, each costing its rows' largest number of
    // distinct words in one bank, as ldmatrix.
    let path = format!(
        "{}/tests/data/h200_stmatrix_2026-11-30.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let recs: Vec<Value> =
        tilelab::records::parse(&std::fs::read_to_string(&path).expect("data file")).expect("JSON");
    assert_eq!(recs.len(), 570);
    let mut bad = Vec::new();
    let mut conflicted = 0;
    for r in &recs {
        let (num, trans) = stsm_form(r["instruction"].as_str().unwrap());
        let offs: [u32; 32] = u32s(&r["lane_byte_offsets"]).try_into().unwrap();
        let cost = WarpRequest::new(Instruction::Stmatrix { num, trans }, offs).cost();
        let (w, c) = (
            r["wavefronts"].as_u64().unwrap() as u32,
            r["bank_conflicts"].as_u64().unwrap() as u32,
        );
        conflicted += (c > 0) as usize;
        if (cost.wavefronts, cost.bank_conflicts()) != (w, c) {
            bad.push(format!(
                "{}: model {}/{} measured {w}/{c}",
                r["name"],
                cost.wavefronts,
                cost.bank_conflicts()
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches: {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    assert!(
        conflicted > 100,
        "the records must exercise conflicts ({conflicted})"
    );
}

#[test]
fn stmatrix_writes_every_register_where_the_executor_writes_it() {
    let data = load("h200_stmatrix_smem_2026-11-30.json");
    let recs = data["records"].as_array().unwrap();
    assert_eq!(recs.len(), 570);
    let mut collisions = 0;
    for r in recs {
        let name = r["name"].as_str().unwrap();
        let (num, trans) = stsm_form(r["instruction"].as_str().unwrap());
        let offs: [u32; 32] = u32s(&r["lane_byte_offsets"]).try_into().unwrap();
        let slots: Vec<i64> = r["slots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect();
        let n = num.count() as u32;
        assert_eq!(slots.len() as u32, 32 * n * 2, "{name}");
        // The probe's registers: 0x8000 | lane<<3 | reg<<1 | half.
        let value = |lane: u32, reg: u32, h: u32| 0x8000 | lane << 3 | reg << 1 | h;
        let data: LaneRegs = std::array::from_fn(|l| {
            std::array::from_fn(|j| {
                value(l as u32, j as u32, 0) | value(l as u32, j as u32, 1) << 16
            })
        });
        let mut smem = SharedMemory::zeroed(48 * 1024);
        let req = WarpRequest::new(Instruction::Stmatrix { num, trans }, offs);
        let step = exec::execute(&mut smem, &WarpOp::stmatrix(num, trans, offs, data)).unwrap();
        assert_eq!(
            step.cost,
            WarpRequest::new(Instruction::Stmatrix { num, trans }, offs).cost()
        );
        // Who writes where, by the fragment map; what the H200 left there.
        let mut writers: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut measured: HashMap<u32, u32> = HashMap::new();
        let mut i = 0;
        for lane in 0..32 {
            for reg in 0..n {
                for h in 0..2 {
                    let d = exec::register_byte_address(&req, lane as usize, reg as usize, 2 * h)
                        .unwrap();
                    writers.entry(d).or_default().push(value(lane, reg, h));
                    if slots[i] >= 0 {
                        assert_eq!(slots[i] as u32, d, "{name}: lane {lane} reg {reg} half {h}");
                        measured.insert(d, value(lane, reg, h));
                    }
                    i += 1;
                }
            }
        }
        assert_eq!(
            r["written"].as_u64().unwrap() as usize,
            writers.len(),
            "{name}: words written"
        );
        for (addr, w) in &writers {
            let sim = smem.read_u16(*addr).unwrap() as u32;
            let hw = *measured
                .get(addr)
                .unwrap_or_else(|| panic!("{name}: nothing survived at {addr}"));
            if w.len() == 1 {
                assert_eq!((sim, hw), (w[0], w[0]), "{name}: address {addr}");
            } else {
                // Several registers to one address: the H200 keeps one of them (no fixed lane
                // order), so does the executor.
                assert!(
                    w.contains(&sim) && w.contains(&hw),
                    "{name}: address {addr}"
                );
                collisions += 1;
            }
        }
        // Nothing outside the destinations was written.
        let nonzero = smem.bytes().chunks(2).filter(|c| c != &[0, 0]).count();
        assert_eq!(nonzero, writers.len(), "{name}");
    }
    assert!(collisions > 0, "the records must include overlapping rows");
}

#[test]
fn cp_async_ca_one_line_units_match_every_record_and_cg_moves_no_l1tex_counter() {
    // bank.rs: modelled only when every unit (the lanes of a store of the copy width) reads
    // distinct pieces of one 128-byte line; then the store rule without merging. The H200's
    // count for LDGSTS is l1tex__data_pipe_lsu_wavefronts_mem_shared.sum minus the launch's
    // op_misc wavefronts (neither op_st nor op_ld move). Lane l's source is src + src_stride*l,
    // src from cudaMalloc (256-byte aligned), so the lines are those of src_stride*l.
    let data = load("h200_cpasync_2026-11-30.json");
    let (mut checked, mut spread, mut stores, mut cg) = (0, 0, 0, 0);
    for r in data["records"].as_array().unwrap() {
        let name = r["name"].as_str().unwrap();
        let ins = r["instruction"].as_str().unwrap();
        let c = &r["counters"];
        let n = |k: &str| c[k].as_i64().unwrap();
        let offs: [u32; 32] = u32s(&r["lane_byte_offsets"]).try_into().unwrap();
        let mut req = WarpRequest::new(Instruction::parse(ins).unwrap(), offs);
        req.active_mask = r["active_mask"].as_u64().unwrap() as u32;
        if !ins.starts_with("cp.async") {
            // The st.shared of the same addresses, for comparison: the existing store rule.
            assert_eq!(
                req.cost().wavefronts as i64,
                n("wavefronts_op_st"),
                "{name}"
            );
            stores += 1;
            continue;
        }
        assert_eq!(
            (
                n("wavefronts_op_st"),
                n("wavefronts_op_ld"),
                n("inst_ldgsts")
            ),
            (0, 0, 1),
            "{name}"
        );
        let stride = r["src_stride"].as_u64().unwrap();
        req.global_addrs = Some(Box::new(std::array::from_fn(|l| stride * l as u64)));
        let measured = n("wavefronts_all") - n("wavefronts_op_misc");
        match req.cost().modelled() {
            Err(NotModelled::CpAsyncCg) => {
                // Not modelled, because no L1TEX shared wavefront counter moves.
                assert_eq!((measured, n("bank_conflicts_op_ldgsts")), (0, 0), "{name}");
                cg += 1;
            }
            Err(NotModelled::CpAsyncSpreadSources(b)) => {
                // The SASS-attributed count lies within the model's bounds.
                let s = n("sass_wavefronts_ldgsts");
                assert!(
                    (b.lo as i64..=b.hi as i64).contains(&s),
                    "{name}: {s} outside {b}"
                );
                spread += 1;
            }
            Err(e) => panic!("{name}: {e}"),
            Ok(cost) => {
                assert_eq!(cost.wavefronts as i64, measured, "{name}");
                assert_eq!(
                    cost.wavefronts as i64,
                    n("sass_wavefronts_ldgsts"),
                    "{name}"
                );
                assert_eq!(
                    cost.bank_conflicts() as i64,
                    n("bank_conflicts_op_ldgsts"),
                    "{name}"
                );
                assert_eq!(schedule(&req).cost(), cost, "{name}");
                checked += 1;
                // Without the sources the model has no number.
                req.global_addrs = None;
                assert_eq!(
                    req.cost().modelled(),
                    Err(NotModelled::CpAsyncSourcesUnknown)
                );
            }
        }
    }
    assert_eq!((checked, spread, cg, stores), (77, 52, 41, 129));
}

/// The random and structured requests `tilelab verify --group cp.async --hopper-fuzz 80 --seed
/// 11` measured on the H200 after the first file (tests/data/h200_cpasync_verify_2026-11-30.json):
/// sources are offsets into a 256-byte aligned buffer. Every request the model covers matches
/// in wavefronts and bank conflicts; every .cg leaves the L1TEX counters alone.
#[test]
fn cp_async_fresh_requests_match_where_modelled() {
    assert_eq!(
        cp_async_classes("h200_cpasync_verify_2026-11-30.json", 104),
        (22, 55, 27, 28)
    );
}

/// `tilelab verify --fuzz 1000 --hopper-fuzz 200 --seed 7` on the H200 (2026-11-30 23:14 UTC,
/// after the `.ca` rule was narrowed to distinct pieces of one 128-byte line; none of these
/// requests was seen before): 224 cp.async requests, every modelled one matches.
#[test]
fn cp_async_seed7_requests_match_where_modelled() {
    assert_eq!(
        cp_async_classes("h200_cpasync_verify_seed7_2026-11-30.json", 224),
        (60, 110, 54, 59)
    );
}

/// `tilelab verify --fuzz 1000 --hopper-fuzz 200 --seed 21` on the H200 (2026-12-01 11:14-11:18
/// UTC; 200 random requests of seed 21 never seen before, whole suite 1798 passed, 0 failed, 1
/// skipped = the spread class): all 81 modelled cp.async requests match; 96 spread, 47 .cg.
#[test]
fn cp_async_seed21_requests_match_where_modelled() {
    assert_eq!(
        cp_async_classes("h200_cpasync_verify_seed21_2026-12-01.json", 224),
        (81, 96, 47, 58)
    );
}

/// `tilelab verify --fuzz 1000 --hopper-fuzz 300 --seed 43` on the H200 (2026-12-01 16:01-16:07
/// UTC, the binary of 4892e38, after the spread-source bounds were written; 300 random requests
/// of seed 43 never seen before; whole suite 1799 passed, 0 failed, 1 skipped = the spread class's
/// L1TEX count): all 99 modelled cp.async requests match; the SASS-attributed count of all 152
/// spread ones lies within the bounds (exact for 88); 73 .cg.
#[test]
fn cp_async_seed43_requests_match_where_modelled_and_within_bounds_where_spread() {
    assert_eq!(
        cp_async_classes("h200_cpasync_verify_seed43_2026-12-01.json", 324),
        (99, 152, 73, 88)
    );
}

/// `scripts/research/hopper/cpasync_lab` on the H200 (2026-12-01, tests/data/h200_cpasync_lab_2026-12-01.json,
/// one record per launch): 70 structured requests launched cold three times and warm (sources
/// loaded into L1 by the same warp first) twice, and 110 random ones of seed 13 (none seen before)
/// cold twice. Every launch the model covers (one line per unit) matches; the spread ones stay
/// not modelled. What the file shows about the counters (docs/wavefront-model.md): ncu's
/// SASS-attributed conflicts are its SASS-attributed wavefronts minus the units in every launch;
/// warm, the L1TEX count equals the SASS-attributed one and its conflicts are that count minus
/// the units (in these 140 warm launches; the second run's warm launches break the first
/// equality, see the next test); cold, the L1TEX count can exceed both (wavefronts booked as
/// neither), never the other way for the conflicts; repeated launches of a request agree.
#[test]
fn cp_async_lab_launches_match_where_modelled_and_warm_counts_agree() {
    let file = "h200_cpasync_lab_2026-12-01.json";
    assert_eq!(cp_async_classes(file, 570), (119, 451, 0, 383));
    let launches = lab_launches(file);
    let warm: Vec<_> = launches.iter().filter(|l| l.warm).collect();
    assert!(warm.iter().all(|l| l.wsc[0] == l.wsc[1]));
    let cold_extra = launches
        .iter()
        .filter(|l| !l.warm && l.wsc[0] > l.wsc[1])
        .count();
    let by_request = lab_requests(&launches);
    assert_eq!((warm.len(), cold_extra, by_request.len()), (140, 93, 180));
}

/// The second run of `scripts/research/hopper/cpasync_lab` on the H200 (2026-12-01 08:48 UTC,
/// tests/data/h200_cpasync_lab_d_2026-12-01.json, one record per launch): part b, the 50 earlier
/// spread records whose L1TEX (W) and SASS-attributed (S) counts disagreed (16 of seed 11, 34 of
/// seed 7), cold three times and warm once; part d, those 50 and the first run's 110 seed-13
/// requests, warm twice. Checks: the one-line launches (47 seed-13 requests) match the model, the
/// spread ones stay not modelled; every launch books SASS conflicts = S − units and, warm,
/// L1TEX conflicts = W − units; the cold launches of part b repeat the earlier files' W, S and C
/// exactly; S is the same cold and warm for every request measured both ways (230 over the two
/// runs); but warm W = S, true in all 140 warm launches of the first run, fails in 114 of the
/// 370 here (S > W in 89), always in spread requests: no single count meets both.
#[test]
fn cp_async_lab_second_run_warm_conflicts_follow_l1tex_and_s_is_cache_independent() {
    let file = "h200_cpasync_lab_d_2026-12-01.json";
    assert_eq!(cp_async_classes(file, 520), (94, 426, 0, 182));
    let launches = lab_launches(file);
    let warm: Vec<_> = launches.iter().filter(|l| l.warm).collect();
    let w_gt_s = warm.iter().filter(|l| l.wsc[0] > l.wsc[1]).count();
    let s_gt_w = warm.iter().filter(|l| l.wsc[1] > l.wsc[0]).count();
    assert_eq!((warm.len(), w_gt_s, s_gt_w), (370, 25, 89));
    let by_request = lab_requests(&launches);
    assert_eq!(by_request.len(), 160);
    // Part b against the files the requests came from.
    let mut earlier: HashMap<String, [i64; 3]> = HashMap::new();
    for f in [
        "h200_cpasync_verify_2026-11-30.json",
        "h200_cpasync_verify_seed7_2026-11-30.json",
    ] {
        for r in load(f)["measured"].as_array().unwrap() {
            let name = r["name"].as_str().unwrap().to_string();
            earlier.insert(name, wsc(&r["counters"]));
        }
    }
    let mut repeated = 0;
    for l in launches.iter().filter(|l| !l.warm) {
        let old = l.request.strip_prefix("old.").expect("part b");
        assert_eq!(earlier[old], l.wsc, "{}", l.name);
        repeated += 1;
    }
    assert_eq!(repeated, 150);
    // S does not depend on the cache: the same in every launch of a request, cold or warm.
    let mut first_run = lab_requests(&lab_launches("h200_cpasync_lab_2026-12-01.json"));
    for (request, ls) in by_request {
        first_run.entry(request).or_default().extend(ls);
    }
    let both: Vec<_> = first_run
        .values()
        .filter(|ls| ls.iter().any(|l| l.0) && ls.iter().any(|l| !l.0))
        .collect();
    assert_eq!(both.len(), 230);
    for ls in both {
        assert!(ls.iter().all(|l| l.1[1] == ls[0].1[1]), "{ls:?}");
    }
}

/// The third run of `scripts/research/hopper/cpasync_lab` on the H200 (2026-12-01 13:14 UTC, part e,
/// tests/data/h200_cpasync_lab_e_2026-12-01.json): 71 targeted requests and 60 random spread
/// requests of seed 29, each once cold and once warm. The 9 one-line controls match the model,
/// the 122 spread requests stay not modelled (docs/wavefront-model.md: no rule is exact on the
/// held-out 60). What the probe showed, from the file: S is the same cold and warm in all 131
/// requests; two lanes writing the *same* word of a shared bank cost what two *different* words
/// cost (16 pairs); the `11.9` pattern costs S 24, 20, 18 with 2, 4, 8 shared banks written,
/// whatever the words per bank.
#[test]
fn cp_async_lab_part_e_same_or_different_word_and_banks_not_words() {
    let file = "h200_cpasync_lab_e_2026-12-01.json";
    assert_eq!(cp_async_classes(file, 262), (18, 244, 0, 116));
    let by_request = lab_requests(&lab_launches(file));
    assert_eq!(by_request.len(), 131);
    let s = |request: &str| {
        let ls = &by_request[request];
        assert!(
            ls.iter().any(|l| l.0) && ls.iter().any(|l| !l.0),
            "{request}"
        );
        assert!(ls.iter().all(|l| l.1[1] == ls[0].1[1]), "{request}");
        ls[0].1[1]
    };
    let mut pairs = 0;
    for request in by_request.keys() {
        s(request);
        if request.starts_with("e.wpass") && request.contains(".same.") {
            let other = request.replace(".same.", ".diff.");
            assert_eq!(s(request), s(&other), "{request}");
            pairs += 1;
        }
    }
    assert_eq!(pairs, 16);
    for (banks, words, cost) in [
        (2, [1, 2, 4, 8].as_slice(), 24),
        (4, &[1, 2, 4, 8], 20),
        (8, &[1, 2, 4], 18),
    ] {
        for w in words {
            assert_eq!(s(&format!("e.p9.{banks}b.{w}w.il")), cost, "{banks}b {w}w");
        }
    }
}

/// The fourth run of `scripts/research/hopper/cpasync_lab` on the H200 (2026-12-01 16:01 UTC, part f,
/// tests/data/h200_cpasync_lab_f_2026-12-01.json, cold once): 144 spread requests written to press
/// on the upper bound of the SASS-attributed count. `f.grp.<size>.G<g>.k<k>.*`: g read groups (the
/// lanes of g lines reading the same L1 banks), each with k lanes writing k distinct words of its
/// own shared bank (bank 4 + 8j for group j, so with g = 8 groups j and j + 4 share one: W = 2k);
/// run one after the other the groups would cost g·k, the bound says g + W − 1. Every count lies
/// within the bounds; with g ≤ 4 every one is g + W − 1 per unit (the groups overlap as far as
/// the bound allows), with g = 8 one less.
#[test]
fn cp_async_lab_part_f_presses_on_the_upper_bound_and_stays_within() {
    let file = "h200_cpasync_lab_f_2026-12-01.json";
    assert_eq!(cp_async_classes(file, 144), (0, 144, 0, 0));
    let by_request = lab_requests(&lab_launches(file));
    let mut grp = 0;
    for (request, ls) in &by_request {
        let Some(rest) = request.strip_prefix("f.grp.") else {
            continue;
        };
        // f.grp.<size>.G<g>.k<k>.<first|last|allunits>
        let f: Vec<&str> = rest.split('.').collect();
        let size: u32 = f[0].parse().unwrap();
        let g: i64 = f[1][1..].parse().unwrap();
        let k: i64 = f[2][1..].parse().unwrap();
        let units = if f[3] == "allunits" { size / 4 } else { 1 } as i64;
        // Group j writes bank 4 + 8j mod 32: with g = 8, groups j and j + 4 share it (W = 2k).
        let w = if g == 8 { 2 * k } else { k };
        let per_unit = if g <= 4 { g + w - 1 } else { g + w - 2 };
        assert_eq!(ls[0].1[1], units * per_unit, "{request}");
        grp += 1;
    }
    assert_eq!((grp, by_request.len()), (44, 144));
}

/// The fifth run of `scripts/research/hopper/cpasync_lab` on the H200 (2026-12-01 16:57 UTC, part g,
/// tests/data/h200_cpasync_lab_g_2026-12-01.json): 73 `cp.async.cg` (16 B) requests, the first
/// ten launched twice. `.cg` stays not modelled; what the file shows: no L1TEX shared counter moves
/// (as in every earlier `.cg` record) and its SASS-attributed bank conflicts stay 0, but the
/// SASS-attributed wavefronts do move and repeat; permuting the destinations with the sources
/// fixed costs exactly what permuting the sources the same way with the destinations fixed costs
/// (23 permutations), and permuting both alike costs what the plain copy costs (4); duplicated
/// destinations cost one per distinct 16-byte chunk written.
#[test]
fn cp_async_cg_part_g_counts_depend_on_the_source_to_destination_map() {
    let data = load("h200_cpasync_lab_g_2026-12-01.json");
    let recs = data["measured"].as_array().unwrap();
    assert_eq!(recs.len(), 83);
    let mut s: HashMap<String, i64> = HashMap::new();
    for r in recs {
        let name = r["name"].as_str().unwrap();
        assert_eq!(r["instruction"], "cp.async.cg.shared.global.16", "{name}");
        let [w, sass, c] = wsc(&r["counters"]);
        assert_eq!((w, c), (0, 0), "{name}: no L1TEX shared counter moves");
        let sass_bc =
            r["counters"]["sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"]
                .as_f64()
                .unwrap();
        assert_eq!(sass_bc, 0.0, "{name}");
        let (request, _) = name.split_once('#').unwrap();
        if let Some(&old) = s.get(request) {
            assert_eq!(old, sass, "{name}: repeats");
        }
        s.insert(request.to_string(), sass);
    }
    assert_eq!(s.len(), 73);
    let mut perms = 0;
    for (request, &v) in &s {
        if let Some(p) = request.strip_prefix("g.dst.") {
            assert_eq!(v, s[&format!("g.src.{p}")], "{request}");
            perms += 1;
        }
    }
    assert_eq!(perms, 23);
    for (request, want) in [
        ("g.id", 4),
        ("g.both.rand0", 4),
        ("g.both.rand3", 4),
        ("g.dst.revline", 4),
        ("g.dst.rotline", 8),
        ("g.dst.t4x8", 32),
        ("g.dup2", 16),
        ("g.dup4", 8),
        ("g.dup8", 4),
        ("g.dup32", 1),
        ("g.mask.l0", 1),
    ] {
        assert_eq!(s[request], want, "{request}");
    }
}

/// One launch of a cpasync_lab record file.
struct LabLaunch {
    name: String,
    request: String,
    warm: bool,
    /// W (L1TEX wavefronts − misc), S (SASS-attributed), C (L1TEX `op_ldgsts` conflicts).
    wsc: [i64; 3],
}

/// W, S and C of a record's counters.
fn wsc(c: &Value) -> [i64; 3] {
    let n = |k: &str| c[k].as_f64().unwrap() as i64;
    [
        n("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
            - n("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum"),
        n("sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"),
        n("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"),
    ]
}

/// The launches of a cpasync_lab record file, each checked: SASS conflicts = S − units; warm,
/// C = W − units; cold, C <= W − units.
fn lab_launches(file: &str) -> Vec<LabLaunch> {
    let data = load(file);
    let mut out = Vec::new();
    for r in data["measured"].as_array().unwrap() {
        let name = r["name"].as_str().unwrap();
        let c = &r["counters"];
        let [w, s, bc] = wsc(c);
        let sass_bc = c["sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"]
            .as_f64()
            .unwrap() as i64;
        let size: usize = r["instruction"].as_str().unwrap()[26..].parse().unwrap();
        let per_unit = 128 / size;
        let mask = r["active_mask"].as_u64().unwrap();
        let units = (0..32 / per_unit)
            .filter(|u| mask >> (u * per_unit) & ((1 << per_unit) - 1) != 0)
            .count() as i64;
        assert_eq!(sass_bc, s - units, "{name}");
        let warm = r["warm"].as_bool().unwrap();
        if warm {
            assert_eq!(bc, w - units, "{name}");
        } else {
            assert!(bc <= w - units, "{name}");
        }
        let (request, _) = name.split_once('#').unwrap();
        out.push(LabLaunch {
            name: name.to_string(),
            request: request.to_string(),
            warm,
            wsc: [w, s, bc],
        });
    }
    out
}

/// The launches by request, (warm, [W, S, C]); checks that a request's cold launches agree and
/// so do its warm ones.
fn lab_requests(launches: &[LabLaunch]) -> HashMap<String, Vec<(bool, [i64; 3])>> {
    let mut by_request: HashMap<String, Vec<(bool, [i64; 3])>> = HashMap::new();
    for l in launches {
        by_request
            .entry(l.request.clone())
            .or_default()
            .push((l.warm, l.wsc));
    }
    for (request, launches) in &by_request {
        for is_warm in [false, true] {
            let mut v = launches.iter().filter(|l| l.0 == is_warm).map(|l| l.1);
            if let Some(first) = v.next() {
                assert!(v.all(|x| x == first), "{request}");
            }
        }
    }
    by_request
}

/// Checks every request of a `--save-hopper` cp.async file (modelled: equal wavefronts and bank
/// conflicts; `.cg`: no L1TEX shared counter moves; spread sources: the SASS-attributed count
/// within the model's bounds) and returns (modelled, spread, cg, spread with lo = hi).
fn cp_async_classes(file: &str, len: usize) -> (usize, usize, usize, usize) {
    let data = load(file);
    let recs = data["measured"].as_array().unwrap();
    assert_eq!(recs.len(), len);
    let (mut modelled, mut spread, mut cg, mut exact) = (0, 0, 0, 0);
    for r in recs {
        let name = r["name"].as_str().unwrap();
        let rec: tilelab::records::Record = serde_json::from_value(serde_json::json!({
            "name": r["name"], "instruction": r["instruction"],
            "lane_byte_offsets": r["lane_byte_offsets"], "active_mask": r["active_mask"],
            "global_addresses": r["global_addresses"],
        }))
        .unwrap();
        let req = rec.request().unwrap();
        let c = &r["counters"];
        let n = |k: &str| c[k].as_f64().unwrap() as i64;
        let l1tex = n("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
            - n("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum");
        let bc = n("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum");
        match req.cost().modelled() {
            Ok(cost) => {
                assert_eq!(
                    (cost.wavefronts as i64, cost.bank_conflicts() as i64),
                    (l1tex, bc),
                    "{name}"
                );
                modelled += 1;
            }
            Err(NotModelled::CpAsyncCg) => {
                assert_eq!((l1tex, bc), (0, 0), "{name}");
                cg += 1;
            }
            Err(NotModelled::CpAsyncSpreadSources(b)) => {
                let s = n("sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum");
                assert!(
                    (b.lo as i64..=b.hi as i64).contains(&s),
                    "{name}: SASS-attributed {s} outside the bounds, {b}"
                );
                spread += 1;
                exact += (b.lo == b.hi) as usize;
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
    (modelled, spread, cg, exact)
}

/// `tilelab verify --group stmatrix` on the H200 (tests/data/h200_stmatrix_verify_2026-11-30.json):
/// 118 requests (structured, lesson 11's step, 80 random of seed 11) with ncu's values.
#[test]
fn stmatrix_fresh_requests_follow_the_ldmatrix_rule() {
    stmatrix_file_follows_the_ldmatrix_rule("h200_stmatrix_verify_2026-11-30.json", 118);
}

/// The 238 stmatrix requests of `tilelab verify --fuzz 1000 --hopper-fuzz 200 --seed 7` on the
/// H200 (2026-11-30 23:14 UTC; 200 random of seed 7 never seen before).
#[test]
fn stmatrix_seed7_requests_follow_the_ldmatrix_rule() {
    stmatrix_file_follows_the_ldmatrix_rule("h200_stmatrix_verify_seed7_2026-11-30.json", 238);
}

/// The 240 stmatrix requests of the same run with seed 21 (2026-12-01, 200 random never seen
/// before).
#[test]
fn stmatrix_seed21_requests_follow_the_ldmatrix_rule() {
    stmatrix_file_follows_the_ldmatrix_rule("h200_stmatrix_verify_seed21_2026-12-01.json", 240);
}

/// The 340 stmatrix requests of `tilelab verify --fuzz 1000 --hopper-fuzz 300 --seed 43`
/// (2026-12-01 16:01-16:07 UTC, 300 random never seen before).
#[test]
fn stmatrix_seed43_requests_follow_the_ldmatrix_rule() {
    stmatrix_file_follows_the_ldmatrix_rule("h200_stmatrix_verify_seed43_2026-12-01.json", 340);
}

fn stmatrix_file_follows_the_ldmatrix_rule(file: &str, len: usize) {
    let data = load(file);
    let recs: Vec<tilelab::records::Record> =
        serde_json::from_value(data["measured"].clone()).unwrap();
    assert_eq!(recs.len(), len);
    for r in &recs {
        let c = r.request().unwrap().cost();
        assert_eq!(
            (Some(c.wavefronts), Some(c.bank_conflicts())),
            (r.wavefronts, r.bank_conflicts),
            "{}",
            r.name
        );
    }
    assert!(recs.iter().filter(|r| r.bank_conflicts > Some(0)).count() > 40);
}

/// What the tma and wgmma groups of that run concluded, case by case.
#[test]
fn tma_and_wgmma_verify_runs_agreed_on_every_case() {
    let tma = load("h200_tma_verify_2026-11-30.json");
    let cases = tma["measured"].as_array().unwrap();
    assert_eq!(cases.len(), 111);
    let rejected = cases
        .iter()
        .filter(|c| c["encode"] != "CUDA_SUCCESS")
        .count();
    assert_eq!(rejected, 7);
    assert!(cases.iter().all(|c| c["verdict"] == "as modelled"));
    let wg = load("h200_wgmma_verify_2026-11-30.json");
    let cases = wg["measured"].as_array().unwrap();
    assert_eq!(cases.len(), 86);
    assert!(cases.iter().all(|c| c["verdict"] == "exact"));
}

#[test]
fn tma_places_every_measured_chunk_and_rejects_what_the_driver_rejects() {
    let data = load("h200_tma_2026-11-30.json");
    let cases = data["cases"].as_array().unwrap();
    let (mut placed, mut rejected) = (0, 0);
    let mut seen = std::collections::BTreeSet::new();
    for c in cases {
        let g = |k: &str| c[k].as_i64().unwrap_or_else(|| panic!("field {k}"));
        let sw = TmaSwizzle::ALL[g("swizzle") as usize];
        let (rows, cols, e, dst) = (
            g("rows") as u32,
            g("cols") as u32,
            g("elem_bytes") as u32,
            g("dst") as u32,
        );
        let model = TmaBox::new(rows, cols, e, sw, dst);
        let what = format!("box {rows}x{cols} e{e} {sw} dst {dst}");
        if g("encode_status") != 0 {
            assert!(
                model.is_err(),
                "{what}: the driver rejected it, the model accepts it"
            );
            rejected += 1;
            continue;
        }
        let b = model.unwrap_or_else(|e| panic!("{what}: the driver accepted it: {e}"));
        assert_eq!(b.footprint_bytes() as i64, g("footprint"), "{what}");
        assert_eq!(g("stray_bytes"), 0, "{what}");
        let (x0, y0, grows) = (g("x0"), g("y0"), g("global_rows"));
        let chunk0 = x0 * e as i64 / 16;
        let got: Vec<i64> = c["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        let want: Vec<i64> = b
            .smem_chunks()
            .iter()
            .map(|s| match s {
                None => -1,
                Some((r, _)) if y0 + *r as i64 >= grows => -2,
                Some((r, ch)) => (y0 + *r as i64) * 32 + chunk0 + *ch as i64,
            })
            .collect();
        assert_eq!(got, want, "{what}");
        seen.insert((sw.bits(), e));
        placed += 1;
    }
    assert!(
        placed >= 100 && rejected >= 7,
        "{placed} placed, {rejected} rejected"
    );
    assert_eq!(
        seen.len(),
        12,
        "every swizzle mode with 1, 2 and 4-byte elements"
    );
}

/// `tilelab sim wgmma` arguments as recorded with each case.
struct WgArgs {
    n: u32,
    ma: Major,
    mb: Major,
    sw: TmaSwizzle,
    k: u32,
    order: AtomOrder,
    dtype: MmaDtype,
    a_regs: bool,
}

fn parse_args(s: &str) -> WgArgs {
    let mut a = WgArgs {
        n: 64,
        ma: Major::K,
        mb: Major::K,
        sw: TmaSwizzle::B128,
        k: 64,
        order: AtomOrder::MnFirst,
        dtype: MmaDtype::F16,
        a_regs: false,
    };
    let t: Vec<&str> = s.split_whitespace().collect();
    let mut i = 0;
    while i < t.len() {
        let v = t.get(i + 1).copied().unwrap_or("");
        match t[i] {
            "--n" => a.n = v.parse().unwrap(),
            "--major" => {
                a.ma = Major::parse(v).unwrap();
                a.mb = a.ma;
            }
            "--major-a" => a.ma = Major::parse(v).unwrap(),
            "--major-b" => a.mb = Major::parse(v).unwrap(),
            "--swizzle" => a.sw = TmaSwizzle::parse(v).unwrap(),
            "--k" => a.k = v.parse().unwrap(),
            "--order" => {
                a.order = if v == "k" {
                    AtomOrder::KFirst
                } else {
                    AtomOrder::MnFirst
                }
            }
            "--dtype" => a.dtype = MmaDtype::parse(v).unwrap(),
            "--a-regs" => {
                a.a_regs = true;
                i += 1;
                continue;
            }
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    a
}

/// The harness's small integers in [-2, 2].
fn small(x: u32) -> f32 {
    ((x.wrapping_mul(2_654_435_761) >> 16) % 5) as f32 - 2.0
}

fn bits(v: f32, dtype: MmaDtype) -> u16 {
    match dtype {
        MmaDtype::Bf16 => half::bf16::from_f32(v).to_bits(),
        _ => half::f16::from_f32(v).to_bits(),
    }
}

fn fnv1a64(vals: &[i32]) -> String {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for v in vals {
        for b in v.to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

#[test]
fn wgmma_descriptors_and_accumulators_match_the_h200() {
    let data = load("h200_wgmma_2026-11-30.json");
    let cases = data["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 43);
    let mut with_values = 0;
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let a = parse_args(c["args"].as_str().unwrap());
        let (ta, tb, smem_bytes) =
            wgmma::operand_tiles(a.n, a.ma, a.mb, a.sw, a.k, a.order).unwrap();
        // The kernel the case ran encodes N, dtype, A source and the transposes.
        let kernel = c["kernel"].as_str().unwrap();
        let ta_imm = if a.a_regs { 0 } else { a.ma.imm_trans() };
        assert_eq!(
            kernel,
            format!(
                "wgmma_n{}_{}_{}_t{}{}",
                a.n,
                a.dtype.name(),
                if a.a_regs { "rs" } else { "ss" },
                ta_imm,
                a.mb.imm_trans()
            ),
            "{name}"
        );
        let mut smem = SharedMemory::zeroed(smem_bytes);
        for i in 0..smem_bytes / 2 {
            smem.write_u16(2 * i, bits(small(i), a.dtype)).unwrap();
        }
        let mut acc = vec![vec![0f32; (a.n / 2) as usize]; 128];
        for kb in 0..ta.k_blocks() {
            let src = if a.a_regs {
                let regs = std::array::from_fn(|t| {
                    std::array::from_fn(|j| {
                        let key = 0x4000_0000u32 + ((kb * 128 + t as u32) * 4 + j as u32) * 2;
                        bits(small(key), a.dtype) as u32
                            | (bits(small(key + 1), a.dtype) as u32) << 16
                    })
                });
                ASource::Registers(Box::new(regs))
            } else {
                ASource::Smem(ta.descriptor(kb), a.ma)
            };
            let mut d: Vec<u32> = acc.iter().flatten().map(|v| v.to_bits()).collect();
            let op = exec::WgmmaOp::f32_acc(a.n, a.dtype, &src, tb.descriptor(kb), a.mb, &mut d);
            exec::execute(&mut smem, op).unwrap();
            for (v, bits) in acc.iter_mut().flatten().zip(d) {
                *v = f32::from_bits(bits);
            }
        }
        let model: Vec<i32> = acc.iter().flatten().map(|&v| v as i32).collect();
        assert!(acc.iter().flatten().all(|v| v.fract() == 0.0));
        assert_eq!(model.len() as u64, c["values"].as_u64().unwrap(), "{name}");
        if let Some(d) = c["d"].as_array() {
            with_values += 1;
            for (i, (m, h)) in model.iter().zip(d).enumerate() {
                let (t, r) = (i as u32 / (a.n / 2), i as u32 % (a.n / 2));
                assert_eq!(
                    *m as i64,
                    h.as_i64().unwrap(),
                    "{name}: thread {t} register {r} = D{:?}",
                    wgmma::acc_fragment(t, r)
                );
            }
        }
        assert_eq!(fnv1a64(&model), c["d_fnv1a64"].as_str().unwrap(), "{name}");
    }
    assert!(with_values >= 8);
}

#[test]
fn wgmma_case_descriptors_decode_to_their_tiles() {
    // The descriptors the H200 ran (scripts/research/hopper/make_wgmma_cases.sh, built by `tilelab sim
    // wgmma`) are the ones the simulator builds today, bit for bit.
    let text = std::fs::read_to_string(format!(
        "{}/tests/data/h200_wgmma_2026-11-30.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let data: Value = serde_json::from_str(&text).unwrap();
    for c in data["cases"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let a = parse_args(c["args"].as_str().unwrap());
        let (ta, tb, _) = wgmma::operand_tiles(a.n, a.ma, a.mb, a.sw, a.k, a.order).unwrap();
        let ran: Vec<u64> = c["descriptors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| u64::from_str_radix(h.as_str().unwrap(), 16).unwrap())
            .collect();
        assert_eq!(ran.len() as u32, 2 * ta.k_blocks(), "{name}");
        for kb in 0..ta.k_blocks() {
            for (i, t) in [&ta, &tb].into_iter().enumerate() {
                let d = t.descriptor(kb);
                let bits = d.encode().unwrap();
                assert_eq!(MatrixDescriptor::decode(bits), d);
                if i == 1 || !a.a_regs {
                    assert_eq!(bits, ran[(2 * kb) as usize + i], "{name} k-block {kb}");
                }
            }
        }
    }
}

#[test]
fn sass_names_are_the_ones_cuobjdump_printed() {
    let data = load("h200_wgmma_2026-11-30.json");
    let sass: Vec<&str> = data["sass"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for n in [8, 24, 64, 128, 256] {
        assert!(
            sass.contains(&tilelab::sim::instr::wgmma_f32_sass(n, MmaDtype::F16).as_str()),
            "{n}"
        );
    }
    assert!(sass.contains(&tilelab::sim::instr::wgmma_f32_sass(64, MmaDtype::Bf16).as_str()));
    for num in [MatrixCount::X1, MatrixCount::X2, MatrixCount::X4] {
        for trans in [false, true] {
            assert!(sass.contains(&Instruction::Stmatrix { num, trans }.sass()));
        }
    }
    for k in [
        "ca.shared.global.4",
        "ca.shared.global.8",
        "ca.shared.global.16",
        "cg.shared.global.16",
    ] {
        let ins = Instruction::parse(&format!("cp.async.{k}")).unwrap();
        assert!(sass.contains(&ins.sass()), "{k}: {}", ins.sass());
    }
    assert!(sass.contains(&"UTMALDG.2D") && sass.contains(&"LDGSTS.E.BYPASS.128"));
}
