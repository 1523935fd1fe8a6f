//! `tilelab verify --ptx`: one simulated CTA of a PTX kernel against Nsight Compute's counters of
//! the same launch on the GPU, counter by counter ([`counter_checks`]) and per PTX line where ncu's
//! source view attributes the counters to lines ([`line_checks`]). Pure: the numbers come in, the
//! verdicts go out; the launch and ncu live in the verify command.
//!
//! The rules come from the fixtures measured on the H200 (`tests/data/ptx/README.md`,
//! `docs/ptx.md`):
//! * wavefronts and bank conflicts: the L1TEX counters, or, when several warps shared the unit and
//!   it re-issued wavefronts, the SASS-attributed wavefronts exactly and the whole surplus booked
//!   as bank conflicts ([`super::compare::kernel_wavefront_verdicts`]); or the SASS-attributed
//!   wavefronts exactly and a surplus that belongs to no SASS instruction, with no more
//!   conflicts than it holds: a warning (the H200 varies such traffic between identical
//!   launches: FA3's store counter 161 to 176 over five launches for its 130 STS wavefronts,
//!   tests/data/ptx_hopper/repeat_2026-12-03.json);
//! * `LDS`/`STS` executions: the `_pred_on_any` counters, because ptxas adds `@!PT LDS RZ, [RZ]`
//!   beside `cp.async` that no PTX line asks for;
//! * `HMMA`: `…pipe_tensor_op_hmma` minus its `HFMA2.MMA` part (register moves ptxas runs on the
//!   tensor pipe);
//! * per line: wavefronts and excessive wavefronts of every line with shared-memory traffic
//!   equal, and ncu's `Instructions Executed` of the line at least the simulated executions (it
//!   counts every SASS instruction ptxas attributes to the line: measured on the H200, an
//!   `ldmatrix` line of the FA2 kernel ran 8 SASS instructions per 4 PTX executions), except
//!   `cp.async` lines (ncu counts the shared side of the copies and ptxas's dummy
//!   `LDS` on them, which the simulator's line does not hold).

use std::collections::BTreeMap;

use super::compare::{KernelWavefronts, kernel_wavefront_verdicts};
use crate::measured::source_view::KernelLines;

/// Shared-memory load wavefronts (LDS and LDSM), per launch.
pub const LD_WAVEFRONTS: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
/// Shared-memory store wavefronts (STS and STSM), per launch.
pub const ST_WAVEFRONTS: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
/// Load bank conflicts (extra load wavefronts).
pub const LD_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
/// Store bank conflicts.
pub const ST_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
/// Load wavefronts attributed to executed `LDS` by ncu's SASS patching.
pub const SASS_LD_WAVEFRONTS: &str =
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
/// Load wavefronts attributed to executed `LDSM`.
pub const SASS_LDSM_WAVEFRONTS: &str =
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum";
/// Store wavefronts attributed to executed `STS`.
pub const SASS_ST_WAVEFRONTS: &str =
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
/// Store wavefronts attributed to executed `STSM`.
pub const SASS_STSM_WAVEFRONTS: &str =
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum";
/// Executed `LDS` with at least one thread's predicate on.
pub const LDS: &str = "smsp__inst_executed_op_shared_ld_pred_on_any.sum";
/// Executed `STS` with at least one thread's predicate on.
pub const STS: &str = "smsp__inst_executed_op_shared_st_pred_on_any.sum";
/// Issued `LDS`, every predicate (ptxas's `@!PT LDS RZ, [RZ]` and all-false guards included).
pub const LDS_ISSUED: &str = "smsp__inst_executed_op_shared_ld.sum";
/// Issued `STS`, every predicate.
pub const STS_ISSUED: &str = "smsp__inst_executed_op_shared_st.sum";
/// Executed `LDSM`.
pub const LDSM: &str = "smsp__inst_executed_op_ldsm.sum";
/// Executed `STSM`.
pub const STSM: &str = "smsp__inst_executed_op_shared_stsm.sum";
/// Executed instructions of the tensor pipe's HMMA class (`HMMA` and `HFMA2.MMA`).
pub const HMMA_PIPE: &str = "smsp__inst_executed_pipe_tensor_op_hmma.sum";
/// The `HFMA2.MMA` part of [`HMMA_PIPE`].
pub const HMMA_PIPE_HFMA2: &str = "smsp__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum";
/// Executed `LDGSTS` (`cp.async`).
pub const LDGSTS: &str = "sm__sass_inst_executed_op_ldgsts.sum";

/// Every metric [`counter_checks`] reads, for `ncu --metrics`.
pub const METRICS: &[&str] = &[
    LD_WAVEFRONTS,
    ST_WAVEFRONTS,
    LD_CONFLICTS,
    ST_CONFLICTS,
    SASS_LD_WAVEFRONTS,
    SASS_LDSM_WAVEFRONTS,
    SASS_ST_WAVEFRONTS,
    SASS_STSM_WAVEFRONTS,
    LDS,
    STS,
    LDS_ISSUED,
    STS_ISSUED,
    LDSM,
    STSM,
    HMMA_PIPE,
    HMMA_PIPE_HFMA2,
    LDGSTS,
];

/// The simulator's totals for the launch (all simulated CTAs): the `totals` of
/// `tilelab ptx --json`. Wavefronts and conflicts in Nsight Compute's sense; executions are
/// warp-level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimTotals {
    /// Wavefronts of `ld.shared` and `ldmatrix`.
    pub shared_ld_wavefronts: u64,
    /// Wavefronts of `st.shared` and `stmatrix`.
    pub shared_st_wavefronts: u64,
    /// Load bank conflicts (wavefronts beyond one per distinct unit).
    pub shared_ld_bank_conflicts: u64,
    /// Store bank conflicts.
    pub shared_st_bank_conflicts: u64,
    /// Executed `ld.shared` (SASS `LDS`).
    pub lds: u64,
    /// Executed `st.shared` (SASS `STS`).
    pub sts: u64,
    /// Executed `ldmatrix` (SASS `LDSM`).
    pub ldsm: u64,
    /// Executed `stmatrix` (SASS `STSM`).
    pub stsm: u64,
    /// Executed `mma.sync` (SASS `HMMA`).
    pub hmma: u64,
    /// Executed `cp.async` (SASS `LDGSTS`).
    pub ldgsts: u64,
    /// Issued `LDS` and `STS` of ptxas's SASS of the module (`crate::sass`: each SASS
    /// instruction as often as its block was entered, the ones ptxas inserted and the guarded
    /// ones included), when ptxas and nvdisasm were found: then these are checked against
    /// [`LDS_ISSUED`]/[`STS_ISSUED`] instead of the PTX-level [`Self::lds`]/[`Self::sts`]
    /// against the `_pred_on_any` counters.
    pub sass_issued: Option<[u64; 2]>,
}

/// The simulator's numbers for one PTX line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimLine {
    /// Line number in the PTX file (1-based).
    pub line: u32,
    /// The instruction text (for the report).
    pub ptx: String,
    /// Warp-level executions.
    pub executions: u64,
    /// Shared-memory wavefronts of all executions.
    pub wavefronts: u64,
    /// Bank conflicts of all executions (wavefronts beyond the ideal).
    pub bank_conflicts: u64,
}

/// One comparison: a counter or a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxCheck {
    /// What is compared (`shared-load wavefronts`, `line 402 wavefronts`, …).
    pub name: String,
    /// The simulator's value.
    pub simulated: u64,
    /// The GPU's value (`None`: ncu did not report the metric).
    pub measured: Option<u64>,
    /// Whether they agree under the rules of the module docs.
    pub pass: bool,
    /// A pass that says something the hardware did beyond the model (a shared-memory surplus of
    /// no instruction): reported as a warning.
    pub warn: bool,
    /// Which counter, and why a difference is accepted or not.
    pub detail: String,
}

fn metric(m: &BTreeMap<String, f64>, name: &str) -> Option<u64> {
    m.get(name)
        .copied()
        .filter(|v| v.is_finite() && *v >= 0.0 && v.fract() == 0.0)
        .map(|v| v as u64)
}

fn as_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The L1TEX wavefront and conflict checks of one direction (loads or stores).
fn wavefront_pair(
    out: &mut Vec<PtxCheck>,
    m: &BTreeMap<String, f64>,
    what: &str,
    (l1tex, conflicts, sass_a, sass_b): (&str, &str, &str, &str),
    sim_wf: u64,
    sim_conf: u64,
) {
    let hw = metric(m, l1tex);
    let hw_conf = metric(m, conflicts);
    let per_instr = match (metric(m, sass_a), metric(m, sass_b)) {
        (Some(a), Some(b)) => a.checked_add(b),
        _ => None,
    };
    // (wavefronts pass, conflicts pass, wavefronts warn, conflicts warn, detail)
    let (wf_ok, conf_ok, wf_warn, conf_warn, detail) = match (hw, hw_conf, per_instr) {
        (Some(w), Some(c), _) if w == sim_wf && c == sim_conf => {
            (true, true, false, false, l1tex.to_string())
        }
        (Some(w), Some(c), Some(p)) => {
            let k = KernelWavefronts {
                per_instruction: as_i64(p),
                l1tex: as_i64(w),
                l1tex_conflicts: as_i64(c),
            };
            let (p_ok, l_ok) = kernel_wavefront_verdicts(&k, as_i64(sim_wf), as_i64(sim_conf));
            let surplus = as_i64(w) - as_i64(sim_wf);
            if l_ok && surplus > 0 {
                (
                    true,
                    true,
                    false,
                    false,
                    format!(
                        "{l1tex}: surplus {surplus} re-issued wavefronts, all booked as conflicts; per instruction {p} ({sass_a} + {sass_b}) exact"
                    ),
                )
            } else if p_ok && surplus > 0 {
                // Every SASS instruction's wavefronts are in the per-instruction counters, and
                // they equal the model's: the rest is traffic of no instruction, which the
                // H200 varies between identical launches (FA3: 161-176 store wavefronts over 5
                // launches for 130 of its STS; docs/log/2026-12-03-repeat.md).
                let extra = as_i64(c) - as_i64(sim_conf);
                (
                    true,
                    (0..=surplus).contains(&extra),
                    true,
                    extra != 0,
                    format!(
                        "{l1tex}: surplus {surplus} wavefronts of no SASS instruction (per instruction {p} ({sass_a} + {sass_b}) exact; ncu conflicts {c}, simulated {sim_conf}): traffic the H200 varies between identical launches (docs/log/2026-12-03-repeat.md)"
                    ),
                )
            } else {
                (
                    l_ok || w == sim_wf,
                    c == sim_conf || (l_ok && surplus > 0),
                    false,
                    false,
                    format!("{l1tex}; per instruction {p} ({sass_a} + {sass_b}), exact: {p_ok}"),
                )
            }
        }
        (Some(w), Some(c), None) => (
            w == sim_wf,
            c == sim_conf,
            false,
            false,
            format!("{l1tex}; {sass_a} or {sass_b} not measured"),
        ),
        _ => (
            false,
            false,
            false,
            false,
            format!("{l1tex} or {conflicts} not measured"),
        ),
    };
    let conf_detail = if conf_warn {
        format!("{conflicts}: within the surplus of no instruction (see the wavefronts row)")
    } else {
        conflicts.to_string()
    };
    out.push(PtxCheck {
        name: format!("shared-{what} wavefronts"),
        simulated: sim_wf,
        measured: hw,
        pass: wf_ok,
        warn: wf_ok && wf_warn,
        detail,
    });
    out.push(PtxCheck {
        name: format!("shared-{what} bank conflicts"),
        simulated: sim_conf,
        measured: hw_conf,
        pass: conf_ok,
        warn: conf_ok && conf_warn,
        detail: conf_detail,
    });
}

/// Every counter check of one launch: `sim` against `m` (metric name to value, one launch of
/// ncu's `--csv` output, e.g. [`crate::gpu::ncu::parse_csv`]'s row).
pub fn counter_checks(sim: &SimTotals, m: &BTreeMap<String, f64>) -> Vec<PtxCheck> {
    let mut out = Vec::new();
    wavefront_pair(
        &mut out,
        m,
        "load",
        (
            LD_WAVEFRONTS,
            LD_CONFLICTS,
            SASS_LD_WAVEFRONTS,
            SASS_LDSM_WAVEFRONTS,
        ),
        sim.shared_ld_wavefronts,
        sim.shared_ld_bank_conflicts,
    );
    wavefront_pair(
        &mut out,
        m,
        "store",
        (
            ST_WAVEFRONTS,
            ST_CONFLICTS,
            SASS_ST_WAVEFRONTS,
            SASS_STSM_WAVEFRONTS,
        ),
        sim.shared_st_wavefronts,
        sim.shared_st_bank_conflicts,
    );
    let mut exact = |name: &str, simulated: u64, measured: Option<u64>, detail: String| {
        out.push(PtxCheck {
            name: name.to_string(),
            simulated,
            measured,
            pass: measured == Some(simulated),
            warn: false,
            detail,
        })
    };
    match sim.sass_issued {
        Some([lds, sts]) => {
            let from =
                "issued by the SASS of the module, ptxas's inserted and guarded ones included";
            exact(
                "LDS issued (SASS)",
                lds,
                metric(m, LDS_ISSUED),
                format!("{LDS_ISSUED}; {from}"),
            );
            exact(
                "STS issued (SASS)",
                sts,
                metric(m, STS_ISSUED),
                format!("{STS_ISSUED}; {from}"),
            );
        }
        None => {
            exact("LDS executed", sim.lds, metric(m, LDS), LDS.into());
            exact("STS executed", sim.sts, metric(m, STS), STS.into());
        }
    }
    exact("LDSM executed", sim.ldsm, metric(m, LDSM), LDSM.into());
    exact("STSM executed", sim.stsm, metric(m, STSM), STSM.into());
    let hmma = match (metric(m, HMMA_PIPE), metric(m, HMMA_PIPE_HFMA2)) {
        (Some(a), Some(b)) => a.checked_sub(b),
        _ => None,
    };
    exact(
        "HMMA executed",
        sim.hmma,
        hmma,
        format!("{HMMA_PIPE} - {HMMA_PIPE_HFMA2} (HFMA2.MMA moves)"),
    );
    exact(
        "LDGSTS executed",
        sim.ldgsts,
        metric(m, LDGSTS),
        LDGSTS.into(),
    );
    out
}

/// `lines` with each `wgmma.mma_async` line's executions, wavefronts and bank conflicts booked
/// on the PTX line that ptxas's line table gives its HGMMA (`gmma_lines`: the HGMMA/IGMMA/QGMMA
/// lines in SASS address order; the k-th wgmma line in line order is the k-th of them, since
/// ptxas keeps the warpgroup MMAs in order). Nsight Compute's source view books them so: in
/// `hand_tma_wgmma_pipe` the wgmma lines 104/107/110/113 (128 wavefronts each) appear as 128 on
/// line 82, 0 on 104, 128 on 106 and 256 on 112 (H200, docs/log/2026-12-02-verify-ptx-hopper.md),
/// which is where ptxas 13.0.88's line table puts the four HGMMA (106, 82, 112, 112). Unchanged
/// when the numbers differ (ptxas duplicated a wgmma: no order to follow).
pub fn book_wgmma_on_sass_lines(lines: &[SimLine], gmma_lines: &[u32]) -> Vec<SimLine> {
    let is_wgmma = |l: &SimLine| l.ptx.trim_start().starts_with("wgmma.mma_async");
    let n = lines.iter().filter(|l| is_wgmma(l)).count();
    if n == 0 || n != gmma_lines.len() {
        return lines.to_vec();
    }
    let mut by: BTreeMap<u32, SimLine> = BTreeMap::new();
    for l in lines.iter().filter(|l| !is_wgmma(l)) {
        by.insert(l.line, l.clone());
    }
    for (l, &to) in lines.iter().filter(|l| is_wgmma(l)).zip(gmma_lines) {
        let e = by.entry(to).or_insert_with(|| SimLine {
            line: to,
            ptx: format!("(HGMMA of line {})", l.line),
            ..SimLine::default()
        });
        e.executions = e.executions.saturating_add(l.executions);
        e.wavefronts = e.wavefronts.saturating_add(l.wavefronts);
        e.bank_conflicts = e.bank_conflicts.saturating_add(l.bank_conflicts);
    }
    by.into_values().collect()
}

/// Per-line checks: every line with shared-memory wavefronts on either side, except `cp.async`
/// lines (see the module docs), compared in executions, wavefronts and bank conflicts
/// (ncu's excessive wavefronts). A line the simulator has and ncu does not (or the reverse)
/// fails with the missing side as 0.
pub fn line_checks(sim: &[SimLine], measured: &KernelLines) -> Vec<PtxCheck> {
    let hw: BTreeMap<u32, &crate::measured::source_view::LineCounters> =
        measured.lines.iter().map(|l| (l.line, l)).collect();
    let sim_by: BTreeMap<u32, &SimLine> = sim.iter().map(|l| (l.line, l)).collect();
    let mut lines: Vec<u32> = sim
        .iter()
        .filter(|l| l.wavefronts > 0)
        .map(|l| l.line)
        .chain(
            measured
                .lines
                .iter()
                .filter(|l| l.wavefronts > 0)
                .map(|l| l.line),
        )
        .collect();
    lines.sort_unstable();
    lines.dedup();
    let mut out = Vec::new();
    for n in lines {
        let s = sim_by.get(&n);
        if s.is_some_and(|s| s.ptx.trim_start().starts_with("cp.async")) {
            continue;
        }
        let h = hw.get(&n);
        let text = s.map_or(String::new(), |s| format!(": {}", s.ptx.trim()));
        for (what, sv, hv) in [
            (
                "executions",
                s.map_or(0, |s| s.executions),
                h.map(|h| h.executions),
            ),
            (
                "wavefronts",
                s.map_or(0, |s| s.wavefronts),
                h.map(|h| h.wavefronts),
            ),
            (
                "bank conflicts",
                s.map_or(0, |s| s.bank_conflicts),
                h.map(|h| h.excessive),
            ),
        ] {
            let hv = hv.unwrap_or(0);
            // ncu's `Instructions Executed` of a line counts every SASS instruction ptxas
            // attributes to it (the address arithmetic beside an LDSM, a second copy of the line
            // in an unrolled or duplicated block), so a line's PTX executions are a lower bound
            // of it; its wavefronts and excessive wavefronts are the shared-memory traffic alone
            // and must be equal.
            let (pass, rule) = if what == "executions" {
                (
                    hv >= sv,
                    "ncu source view, SASS instructions of the line >= its PTX executions",
                )
            } else {
                (hv == sv, "ncu source view")
            };
            out.push(PtxCheck {
                name: format!("line {n} {what}"),
                simulated: sv,
                measured: Some(hv),
                pass,
                warn: false,
                detail: format!("{rule}{text}"),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `hand_tma_wgmma_pipe`: four wgmma lines of 16 executions and 128 wavefronts each, whose
    /// HGMMA ptxas 13.0.88 (`-c`, as the H200's cuLink JIT) books on lines 106, 82, 112, 112;
    /// the H200's source view: 128 wavefronts on line 82, 0 on 104, 128 on 106, 256 on 112
    /// (docs/log/2026-12-02-verify-ptx-hopper.md).
    #[test]
    fn wgmma_counts_go_to_their_hgmma_lines() {
        let w = |line| SimLine {
            line,
            ptx:
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {…}, %rd1, %rd2, p, 1, 1, 0, 0;"
                    .into(),
            executions: 16,
            wavefronts: 128,
            bank_conflicts: 0,
        };
        let lines = [w(104), w(107), w(110), w(113)];
        let got: Vec<(u32, u64)> = book_wgmma_on_sass_lines(&lines, &[106, 82, 112, 112])
            .iter()
            .map(|l| (l.line, l.wavefronts))
            .collect();
        assert_eq!(got, [(82, 128), (106, 128), (112, 256)]);
        // Three HGMMA for four wgmma: nothing to follow, the PTX lines stay.
        assert_eq!(book_wgmma_on_sass_lines(&lines, &[1, 2, 3]), lines);
    }
    use crate::measured::source_view::parse_source_page;

    /// Counters of `tests/data/ptx/*.json` (measured on the H200) as a metric map.
    fn measured(fixture: &str) -> BTreeMap<String, f64> {
        let path = format!(
            "{}/tests/data/ptx/{fixture}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut m = BTreeMap::new();
        for part in ["counters", "sass_counters"] {
            for (k, x) in v[part].as_object().unwrap() {
                m.insert(k.clone(), x.as_f64().unwrap());
            }
        }
        m
    }

    /// `triton_matmul_2w`'s totals written out from the measurement: what a correct simulator
    /// must report for it (2 warps: 384 LDSM wavefronts + 16 LDS, 16 STSM wavefronts, 4 LDS,
    /// 96 LDSM, 4 STSM, 128 HMMA, 80 LDGSTS).
    const MATMUL_2W: SimTotals = SimTotals {
        shared_ld_wavefronts: 400,
        shared_st_wavefronts: 16,
        shared_ld_bank_conflicts: 0,
        shared_st_bank_conflicts: 0,
        lds: 4,
        sts: 0,
        ldsm: 96,
        stsm: 4,
        hmma: 128,
        ldgsts: 80,
        sass_issued: None,
    };

    /// With the SASS of the module, LDS/STS are compared as issued: `triton_matmul_2w`'s SASS
    /// issues 64 LDS (60 of them ptxas's `@!PT LDS RZ, [RZ]`, tests/sass_counts.rs) and its
    /// H200 counter says 64; the PTX-level 4 would fail there.
    #[test]
    fn sass_issued_counts_are_checked_against_the_issued_counters() {
        let m = measured("triton_matmul_2w");
        let sts = m["smsp__inst_executed_op_shared_st.sum"] as u64;
        let with = |lds| SimTotals {
            sass_issued: Some([lds, sts]),
            ..MATMUL_2W
        };
        let c = counter_checks(&with(64), &m);
        assert!(c.iter().all(|c| c.pass), "{c:#?}");
        assert!(
            c.iter()
                .any(|c| c.name == "LDS issued (SASS)" && c.simulated == 64)
        );
        assert!(c.iter().all(|c| c.name != "LDS executed"));
        let c = counter_checks(&with(4), &m);
        let bad: Vec<&str> = c
            .iter()
            .filter(|c| !c.pass)
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(bad, ["LDS issued (SASS)"]);
    }

    #[test]
    fn exact_totals_pass_and_the_raw_counters_would_not() {
        let m = measured("triton_matmul_2w");
        let c = counter_checks(&MATMUL_2W, &m);
        assert!(c.iter().all(|c| c.pass), "{c:#?}");
        // The raw shared-load counter holds 60 predicated-off LDS: comparing with it would fail.
        assert_eq!(m["smsp__inst_executed_op_shared_ld.sum"], 64.0);
        // One wavefront off fails, naming the counter.
        let off = SimTotals {
            shared_st_wavefronts: 17,
            ..MATMUL_2W
        };
        let bad: Vec<_> = counter_checks(&off, &m)
            .into_iter()
            .filter(|c| !c.pass)
            .map(|c| c.name)
            .collect();
        assert_eq!(bad, vec!["shared-store wavefronts".to_string()]);
    }

    #[test]
    fn hfma2_moves_are_not_mma() {
        // lesson_strided has no mma: the hmma counter reads 6, all HFMA2.MMA.
        let m = measured("lesson_strided.row.all");
        assert_eq!(m[HMMA_PIPE], 6.0);
        let c = counter_checks(&SimTotals::default(), &m);
        let h = c.iter().find(|c| c.name == "HMMA executed").unwrap();
        assert_eq!((h.measured, h.pass), (Some(0), true));
    }

    #[test]
    fn a_surplus_booked_as_conflicts_passes_only_with_exact_per_instruction_counts() {
        // gemm_64x64x128_4w_rows_pad8 loaded through cuModuleLoadDataEx on the H200
        // (docs/ptx.md): 646 L1TEX load wavefronts, 6 conflicts, against 640 and 0.
        let mut m = measured("gemm_64x64x128_4w_rows_pad8");
        m.insert(LD_WAVEFRONTS.into(), 646.0);
        m.insert(LD_CONFLICTS.into(), 6.0);
        let sim = SimTotals {
            shared_ld_wavefronts: 640,
            shared_st_wavefronts: 512,
            ldsm: 160,
            sts: 512,
            hmma: 256,
            ..SimTotals::default()
        };
        let c = counter_checks(&sim, &m);
        assert!(c.iter().all(|c| c.pass), "{c:#?}");
        // One of the six not booked as a conflict: traffic of no instruction (the
        // per-instruction count is exact), a warning, as FA3's surplus that varies between
        // identical launches (docs/log/2026-12-03-repeat.md).
        m.insert(LD_CONFLICTS.into(), 5.0);
        let c = counter_checks(&sim, &m);
        let row = |c: &[PtxCheck], n: &str| c.iter().find(|c| c.name == n).unwrap().clone();
        let w = row(&c, "shared-load wavefronts");
        assert!(
            w.pass && w.warn && w.detail.contains("no SASS instruction"),
            "{w:?}"
        );
        let k = row(&c, "shared-load bank conflicts");
        assert!(k.pass && k.warn, "{k:?}");
        // More conflicts than the surplus can hold: fails.
        m.insert(LD_CONFLICTS.into(), 7.0);
        let c = counter_checks(&sim, &m);
        assert!(!row(&c, "shared-load bank conflicts").pass);
        // A per-instruction count that differs from the model fails, surplus or not.
        m.insert(LD_CONFLICTS.into(), 5.0);
        m.insert(SASS_LDSM_WAVEFRONTS.into(), m[SASS_LDSM_WAVEFRONTS] + 1.0);
        let c = counter_checks(&sim, &m);
        assert!(!row(&c, "shared-load wavefronts").pass);
        // Fewer wavefronts than simulated fails.
        m.insert(SASS_LDSM_WAVEFRONTS.into(), m[SASS_LDSM_WAVEFRONTS] - 1.0);
        m.insert(LD_WAVEFRONTS.into(), 639.0);
        let c = counter_checks(&sim, &m);
        assert!(!row(&c, "shared-load wavefronts").pass);
    }

    #[test]
    fn lines_compare_where_ncu_attributes_them() {
        let page = include_str!("../../../tests/data/ncu_source_page_h200_2026-11-30.csv");
        let ks = parse_source_page(page).unwrap();
        let k = ks.iter().find(|k| k.function == "lesson_fa_v1_v2").unwrap();
        // The lesson's steps under layout `row` as the simulator must see them, and the
        // index-fill stores before them.
        let mut sim: Vec<SimLine> = k
            .lines
            .iter()
            .map(|l| SimLine {
                line: l.line,
                ptx: "st.shared.u16".into(),
                executions: l.executions,
                wavefronts: l.wavefronts,
                bank_conflicts: l.excessive,
            })
            .collect();
        assert!(line_checks(&sim, k).iter().all(|c| c.pass));
        // A 16-way conflict simulated as conflict-free is caught on its line.
        let s = sim.iter_mut().find(|l| l.line == 170).unwrap();
        s.wavefronts = 1;
        s.bank_conflicts = 0;
        let bad: Vec<_> = line_checks(&sim, k)
            .into_iter()
            .filter(|c| !c.pass)
            .map(|c| c.name)
            .collect();
        assert_eq!(bad, vec!["line 170 wavefronts", "line 170 bank conflicts"]);
        // More SASS instructions on a line than PTX executions is what ptxas does; fewer is a
        // simulator running the line too often.
        let hw = k.lines.iter().find(|l| l.line == 170).unwrap();
        let s = sim.iter_mut().find(|l| l.line == 170).unwrap();
        (s.wavefronts, s.bank_conflicts) = (hw.wavefronts, hw.excessive);
        s.executions = hw.executions - 1;
        assert!(line_checks(&sim, k).iter().all(|c| c.pass));
        let s = sim.iter_mut().find(|l| l.line == 170).unwrap();
        s.executions = hw.executions + 1;
        let bad: Vec<_> = line_checks(&sim, k)
            .into_iter()
            .filter(|c| !c.pass)
            .map(|c| c.name)
            .collect();
        assert_eq!(bad, vec!["line 170 executions"]);
    }
}
