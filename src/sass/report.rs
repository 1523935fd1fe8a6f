//! The SASS beside each PTX line of a simulated CTA, with dynamic counts (pure): the part of
//! `tilelab ptx --sass`'s report that the SASS gives.
//!
//! ```json
//! {"from": "ptxas 13.0.88", "tool": "/…/ptxas (PATH)", "arch": "sm_90a",
//!  "counts": {"inst_executed": 1270, "families": {"LDS": 64, …}, "never_true": {"LDS": 60}},
//!  "lines": [{"line": 85, "ptx": "cp.async.cg.shared.global [ %r1 + 0 ], …;", "reached": 2,
//!             "sass": [{"addr": 656, "text": "@!PT LDS RZ, [RZ]", "mnemonic": "LDS",
//!                       "executions": 2}, …]}]}
//! ```

use std::collections::BTreeMap;

use serde::Serialize;

use super::KernelSass;
use super::dynamic::{self, Counts};
use super::replay;

/// One SASS instruction with its dynamic count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SassRow {
    /// Byte offset in the function.
    pub addr: u32,
    /// As nvdisasm prints it, guard included.
    pub text: String,
    /// Opcode with modifiers.
    pub mnemonic: String,
    /// Warp-level issues in the simulated CTA.
    pub executions: u64,
}

/// One PTX line and the SASS ptxas's line table gives it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SassLine {
    /// 1-based PTX line (0: instructions the line table gives no line).
    pub line: u32,
    /// The PTX line's text, its runs of blanks as one space.
    pub ptx: String,
    /// Warp-level executions of the PTX line in the simulated CTA (guard false in every lane
    /// included).
    pub reached: u64,
    /// Its SASS instructions in address order.
    pub sass: Vec<SassRow>,
}

/// The SASS part of the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SassReport {
    /// `ptxas 13.0.88`.
    pub from: String,
    /// Where ptxas was found.
    pub tool: String,
    /// The `.target` compiled for.
    pub arch: String,
    /// How ptxas compiled it ([`KernelSass::mode`]).
    pub mode: &'static str,
    /// How the dynamic counts were found: `"replay"` (the SASS control flow replayed per warp;
    /// `"replay, each mbarrier try_wait done at its first try …"` for a kernel with mbarrier
    /// waits, whose retries are then not counted,
    /// [`super::replay`]) or `"line counts: WHY"` (the reach-count rules of [`dynamic`], with
    /// why the replay was not used).
    pub counted_by: String,
    /// Dynamic counts per family and in total.
    pub counts: Counts,
    /// The shared-memory traffic of the `LDS`/`STS` ptxas expands tensor-map instructions into
    /// ([`Expansion`]): added to the run's totals ([`Expansion::add_to`]).
    pub expansion: Expansion,
    /// Every PTX line with SASS, in line order.
    pub lines: Vec<SassLine>,
}

/// What the `LDS` and `STS` that ptxas writes for `tensormap.replace` (a read-modify-write of
/// the field's words, or a plain store: 10 `LDS` and 14 `STS` for Triton's 13 replaces of one
/// map) and `tensormap.cp_fenceproxy` (the map read as one word per lane: 1 `LDS`) add to a
/// run's shared-memory counts. The PTX model gives these instructions no wavefronts, and their
/// number is ptxas's choice, so they come from the SASS: every `LDS`/`STS` that ptxas's line
/// table puts on such a line executes once per execution of the line with a lane's guard on,
/// and costs one wavefront per distinct map the lanes name (a map is a 128-byte-aligned object,
/// so the same word of two maps is in one bank: one wavefront each, the second a bank
/// conflict). Measured (H200, 5 launches, `u2_device_desc_matmul`: 3 maps made by one thread
/// each): `smsp__sass_inst_executed_op_shared_ld` 33 and `_st` 45, op_ld wavefronts 33 and op_st
/// 301, where the PTX model alone gives 0, 3, 0 and 259. Several maps in one execution are the
/// bank model's consequence, not measured.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Expansion {
    /// Tensor-map lines with such `LDS`/`STS`.
    pub lines: u64,
    /// `LDS` executions with a lane's guard on (`smsp__sass_inst_executed_op_shared_ld`).
    pub lds: u64,
    /// `STS` executions with a lane's guard on.
    pub sts: u64,
    /// Their load wavefronts (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld`).
    pub ld_wavefronts: u64,
    /// Their store wavefronts.
    pub st_wavefronts: u64,
    /// Load bank conflicts (wavefronts beyond one per execution).
    pub ld_bank_conflicts: u64,
    /// Store bank conflicts.
    pub st_bank_conflicts: u64,
    /// Per PTX line: `[wavefronts, bank conflicts]`, loads and stores together (what Nsight
    /// Compute's source view books on the line). Not in the JSON.
    #[serde(skip)]
    pub by_line: BTreeMap<u32, [u64; 2]>,
}

impl Expansion {
    /// The expansion of `sass` for a run whose tensor-map lines ran as `map_lines` says
    /// (`[pred_on, maps]` per PTX line, [`crate::ptx::report::Report::map_lines`]).
    pub fn of(sass: &KernelSass, map_lines: &BTreeMap<u32, [u64; 2]>) -> Expansion {
        let mut per: BTreeMap<u32, [u64; 2]> = BTreeMap::new();
        for i in &sass.insts {
            let Some(l) = i.line.filter(|l| map_lines.contains_key(l)) else {
                continue;
            };
            if i.never_true() {
                continue;
            }
            match i.family() {
                "LDS" => per.entry(l).or_default()[0] += 1,
                "STS" => per.entry(l).or_default()[1] += 1,
                _ => {}
            }
        }
        let mut e = Expansion::default();
        for (l, [ld, st]) in per {
            let [on, maps] = map_lines[&l];
            let extra = maps.saturating_sub(on);
            e.lines += 1;
            e.lds = e.lds.saturating_add(ld.saturating_mul(on));
            e.sts = e.sts.saturating_add(st.saturating_mul(on));
            e.ld_wavefronts = e.ld_wavefronts.saturating_add(ld.saturating_mul(maps));
            e.st_wavefronts = e.st_wavefronts.saturating_add(st.saturating_mul(maps));
            e.ld_bank_conflicts = e.ld_bank_conflicts.saturating_add(ld.saturating_mul(extra));
            e.st_bank_conflicts = e.st_bank_conflicts.saturating_add(st.saturating_mul(extra));
            let n = ld.saturating_add(st);
            e.by_line
                .insert(l, [n.saturating_mul(maps), n.saturating_mul(extra)]);
        }
        e
    }

    /// Adds the expansion to a run's totals: the shared-memory wavefronts and conflicts and the
    /// `LDS`/`STS` executions with a lane's guard on.
    pub fn add_to(&self, t: &mut crate::ptx::report::Totals) {
        t.shared_ld_wavefronts = t.shared_ld_wavefronts.saturating_add(self.ld_wavefronts);
        t.shared_st_wavefronts = t.shared_st_wavefronts.saturating_add(self.st_wavefronts);
        t.shared_ld_bank_conflicts = t
            .shared_ld_bank_conflicts
            .saturating_add(self.ld_bank_conflicts);
        t.shared_st_bank_conflicts = t
            .shared_st_bank_conflicts
            .saturating_add(self.st_bank_conflicts);
        t.sass.LDS = t.sass.LDS.saturating_add(self.lds);
        t.sass.STS = t.sass.STS.saturating_add(self.sts);
    }
}

/// What the replay needs of launch `l` of `prog`, for SASS compiled for `arch`: one entry per
/// CTA the run simulates (`l.cta`, or every CTA of its cluster).
///
/// # Errors
/// An arch without a known parameter offset, or a launch or parameters the run itself refuses.
pub fn replay_launch(
    prog: &crate::ptx::decode::Program,
    l: &crate::ptx::Launch,
    arch: &str,
) -> Result<Vec<replay::Launch>, String> {
    let (cluster, _) = crate::ptx::params::check_cluster(prog, l).map_err(|e| e.to_string())?;
    let param_base = replay::param_base(arch)
        .ok_or_else(|| format!("no constant-bank layout known for {arch}"))?;
    let buffer = crate::ptx::params::launch_params(prog, l).map_err(|e| e.to_string())?;
    let params = constant_bank_params(prog, &buffer, param_base)
        .ok_or("a parameter layout beyond the constant bank")?;
    // Every CTA of the cluster that holds `l.cta`, as the run simulates them.
    let first: [u32; 3] = std::array::from_fn(|i| l.cta[i] / cluster[i] * cluster[i]);
    let mut out = Vec::new();
    for z in 0..cluster[2] {
        for y in 0..cluster[1] {
            for x in 0..cluster[0] {
                out.push(replay::Launch {
                    params: params.clone(),
                    param_base,
                    ntid: l.block,
                    nctaid: l.grid,
                    ctaid: [first[0] + x, first[1] + y, first[2] + z],
                });
            }
        }
    }
    Ok(out)
}

/// The parameters as ptxas places them in constant bank 0 from `base` (bytes from `base`): in
/// order, each at an absolute address that is a multiple of its `.align`. This differs from
/// the PTX buffer `buffer` (each aligned from offset 0) when an alignment exceeds the base's
/// (16 at 0x210, 32 at 0x160): `.param .align 64 .b8 map[128]` after a `.u64` sits at
/// `c[0x0][0x240]` on sm_90 and the `.u32` after it at `0x2c0` (ptxas 13.0.88's SASS of
/// such kernels, 2026-12-02). `None` when the layout overflows `u32`.
fn constant_bank_params(
    prog: &crate::ptx::decode::Program,
    buffer: &[u8],
    base: u32,
) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = base;
    for p in &prog.params {
        let a = p.align.max(1);
        at = at.checked_next_multiple_of(a)?;
        let rel = (at - base) as usize;
        let end = rel.checked_add(p.size as usize)?;
        if out.len() < end {
            out.resize(end, 0);
        }
        let from = p.offset as usize;
        let bytes = buffer.get(from..from.checked_add(p.size as usize)?)?;
        out[rel..end].copy_from_slice(bytes);
        at = at.checked_add(p.size)?;
    }
    Some(out)
}

/// Checks replayed `execs` against the PTX run: an unguarded instruction of a class one PTX
/// instruction makes once ([`dynamic::ANCHORS`]) issues only when its line runs, so per line and
/// class their issues are at most the line's reach count.
fn agrees(
    insts: &[super::listing::SassInst],
    execs: &[u64],
    reached: &BTreeMap<u32, u64>,
) -> Result<(), String> {
    let mut sum: BTreeMap<(u32, &str), u64> = BTreeMap::new();
    for (i, &n) in insts.iter().zip(execs) {
        if let Some(l) = i.line
            && !i.guarded()
            && dynamic::ANCHORS.contains(&i.family())
        {
            let e = sum.entry((l, i.family())).or_default();
            *e = e.saturating_add(n);
        }
    }
    for ((l, f), n) in sum {
        let r = reached.get(&l).copied().unwrap_or(0);
        if n > r {
            return Err(format!(
                "the replay issues {n} {f} of PTX line {l}, which ran {r} times"
            ));
        }
    }
    Ok(())
}

/// `counted_by` of a replayed `sass`: `"replay"`, or with mbarrier waits, that their retries
/// are not counted ([`replay::retries_uncounted`]).
fn replayed_by(sass: &KernelSass) -> String {
    if replay::retries_uncounted(&sass.insts) {
        "replay, each mbarrier try_wait done at its first try (the hardware's retries, which follow its timing, are not counted)".into()
    } else {
        "replay".into()
    }
}

/// The dynamic count of each instruction of `sass`: replayed when `launch` is given and the
/// replay finishes and [`agrees`] with the run, else from the reach counts; and which.
fn executions(
    sass: &KernelSass,
    reached: &BTreeMap<u32, u64>,
    cta_reached: &[BTreeMap<u32, u64>],
    launch: Result<&[replay::Launch], &str>,
) -> (Vec<u64>, String) {
    let replayed = launch.map_err(str::to_string).and_then(|ls| {
        let ran: u64 = reached.values().fold(0u64, |a, &b| a.saturating_add(b));
        let budget = ran.saturating_mul(8).saturating_add(1 << 20);
        let mut v = vec![0u64; sass.insts.len()];
        for l in ls {
            let one = replay::replay(&sass.insts, l, budget).map_err(|e| e.to_string())?;
            for (t, n) in v.iter_mut().zip(one) {
                *t = t.saturating_add(n);
            }
        }
        agrees(&sass.insts, &v, reached)?;
        Ok(v)
    });
    match replayed {
        Ok(v) => (v, replayed_by(sass)),
        // A cluster's CTAs are counted one by one, as a grid run counts them.
        Err(why) if !cta_reached.is_empty() => {
            let mut v = vec![0u64; sass.insts.len()];
            for r in cta_reached {
                for (t, n) in v.iter_mut().zip(dynamic::executions(&sass.insts, r)) {
                    *t = t.saturating_add(n);
                }
            }
            (v, format!("line counts: {why}"))
        }
        Err(why) => (
            dynamic::executions(&sass.insts, reached),
            format!("line counts: {why}"),
        ),
    }
}

/// ptxas's SASS replayed for every CTA of a grid run ([`crate::ptx::grid::run`]): per CTA, its
/// instructions' executions (the grid's [`crate::ptx::grid::CtaExtra::vector`]), its
/// `smsp__inst_executed` (counter `"sass inst_executed"`) and the issues of each counted family
/// (`"sass LDS"`, ...; [`GRID_FAMILIES`]). A CTA whose replay stops or disagrees is counted from
/// its line counts, with a note.
pub struct GridSass<'a> {
    /// The decoded kernel.
    pub prog: &'a crate::ptx::decode::Program,
    /// Its SASS.
    pub sass: &'a KernelSass,
}

/// The SASS families whose per-CTA issues a grid run spreads ([`GridSass`]).
pub const GRID_FAMILIES: [&str; 10] = [
    "LDS", "STS", "LDSM", "STSM", "HMMA", "HGMMA", "LDGSTS", "BAR", "UTMALDG", "SYNCS",
];

impl crate::ptx::grid::PerCluster for GridSass<'_> {
    fn cluster(
        &self,
        launch: &crate::ptx::Launch,
        run: &crate::ptx::engine::RunResult,
    ) -> Result<Vec<crate::ptx::grid::CtaExtra>, String> {
        let ls = replay_launch(self.prog, launch, &self.sass.arch);
        let mut out = Vec::with_capacity(run.ctas.len());
        for (i, c) in run.ctas.iter().enumerate() {
            let reached = crate::ptx::report::reached(self.prog, &c.stats);
            let one = match &ls {
                Ok(v) => v
                    .get(i..i + 1)
                    .ok_or("the replay has fewer CTAs than the cluster"),
                Err(e) => Err(e.as_str()),
            };
            let (execs, by) = executions(self.sass, &reached, &[], one);
            let counts = dynamic::counts(&self.sass.insts, &execs);
            let mut counters = vec![("sass inst_executed".to_string(), counts.inst_executed)];
            for f in GRID_FAMILIES {
                counters.push((
                    format!("sass {f}"),
                    counts.families.get(f).copied().unwrap_or(0),
                ));
            }
            out.push(crate::ptx::grid::CtaExtra {
                counters,
                vector: execs,
                note: (!by.starts_with("replay")).then_some(by),
            });
        }
        Ok(out)
    }
}

/// The SASS report of a grid run: `execs` (per instruction of `sass`, summed over the CTAs:
/// [`crate::ptx::grid::GridReport::extra_vector`]) with the summed reach counts; `notes` (how
/// many CTAs were counted from line counts, and why) give `counted_by`.
pub fn build_grid(
    src: &str,
    sass: &KernelSass,
    reached: &BTreeMap<u32, u64>,
    map_lines: &BTreeMap<u32, [u64; 2]>,
    execs: Vec<u64>,
    notes: &BTreeMap<String, u64>,
    ctas: u64,
) -> SassReport {
    let counted_by = if notes.is_empty() {
        replayed_by(sass)
    } else {
        let fell: u64 = notes.values().sum();
        let (why, _) = notes.iter().max_by_key(|(_, n)| **n).expect("not empty");
        format!(
            "replay in {} of {ctas} CTAs; {why} in {fell}",
            ctas.saturating_sub(fell)
        )
    };
    assemble(src, sass, (reached, map_lines), execs, counted_by)
}

/// Joins `sass` with the reach counts of a run (`reached[line]`, [`crate::ptx::Report::reached`])
/// of the PTX `src` (for a cluster of several CTAs, `cta_reached` holds each CTA's, by rank, so
/// that a fallback to line counts counts them one by one; else empty); `launch` (from
/// [`replay_launch`], or why there is none) lets the SASS
/// control flow be replayed.
pub fn build(
    src: &str,
    sass: &KernelSass,
    (reached, map_lines): (&BTreeMap<u32, u64>, &BTreeMap<u32, [u64; 2]>),
    cta_reached: &[BTreeMap<u32, u64>],
    launch: Result<&[replay::Launch], &str>,
) -> SassReport {
    let (execs, counted_by) = executions(sass, reached, cta_reached, launch);
    assemble(src, sass, (reached, map_lines), execs, counted_by)
}

/// The report of `sass` with per-instruction executions `execs`.
fn assemble(
    src: &str,
    sass: &KernelSass,
    (reached, map_lines): (&BTreeMap<u32, u64>, &BTreeMap<u32, [u64; 2]>),
    execs: Vec<u64>,
    counted_by: String,
) -> SassReport {
    let texts: Vec<&str> = src.lines().collect();
    let mut by_line: BTreeMap<u32, Vec<SassRow>> = BTreeMap::new();
    for (i, &n) in sass.insts.iter().zip(&execs) {
        by_line
            .entry(i.line.unwrap_or(0))
            .or_default()
            .push(SassRow {
                addr: i.addr,
                text: i.text.clone(),
                mnemonic: i.mnemonic.clone(),
                executions: n,
            });
    }
    SassReport {
        from: sass.from.clone(),
        tool: sass.tool.clone(),
        arch: sass.arch.clone(),
        mode: sass.mode,
        counted_by,
        counts: dynamic::counts(&sass.insts, &execs),
        expansion: Expansion::of(sass, map_lines),
        lines: by_line
            .into_iter()
            .map(|(line, sass)| SassLine {
                line,
                ptx: line
                    .checked_sub(1)
                    .and_then(|i| texts.get(i as usize))
                    .map_or(String::new(), |t| {
                        t.split_whitespace().collect::<Vec<_>>().join(" ")
                    }),
                reached: reached.get(&line).copied().unwrap_or(0),
                sass,
            })
            .collect(),
    }
}

impl SassReport {
    /// Per PTX line, the dynamic SASS counts of the families in `families` summed (the line a
    /// Nsight Compute source view books them on).
    pub fn per_line(&self, families: &[&str]) -> BTreeMap<u32, u64> {
        let mut m = BTreeMap::new();
        for l in &self.lines {
            let n: u64 = l
                .sass
                .iter()
                .filter(|r| families.contains(&r.mnemonic.split('.').next().unwrap_or("")))
                .map(|r| r.executions)
                .sum();
            if n > 0 {
                m.insert(l.line, n);
            }
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listing in nvdisasm's form: line 10 a `tensormap.replace` (a read-modify-write: one
    /// LDS, one STS, a `@!PT` placeholder), line 11 an `ld.shared` (its LDS is the PTX model's).
    const LISTING: &str = "\t.section\t.text.k,\"ax\",@progbits\nk:\n.text.k:\n\t//## File \"/x/k.ptx\", line 10\n        /*0000*/                   LDS R5, [UR16+0x8] ;\n        /*0010*/                   LOP3.LUT R5, R5, 0x10, R8, 0xd8, !PT ;\n        /*0020*/                   STS [UR16+0x8], R5 ;\n        /*0030*/              @!PT LDS RZ, [RZ] ;\n\t//## File \"/x/k.ptx\", line 11\n        /*0040*/                   LDS R6, [R2] ;\n        /*0050*/                   EXIT ;\n";

    fn kernel() -> KernelSass {
        let fs = super::super::listing::parse(LISTING).unwrap();
        KernelSass {
            from: "ptxas test".into(),
            tool: String::new(),
            arch: "sm_90a".into(),
            mode: "ptxas -c",
            insts: super::super::listing::function(&fs, "k")
                .unwrap()
                .insts
                .clone(),
        }
    }

    /// One thread per execution (Triton's maps, measured): one wavefront per LDS/STS execution.
    /// Three executions naming five maps in all: five wavefronts each way, two of them conflicts.
    #[test]
    fn each_expanded_access_costs_one_wavefront_per_distinct_map() {
        let k = kernel();
        let one = Expansion::of(&k, &BTreeMap::from([(10, [3, 3])]));
        assert_eq!(
            one,
            Expansion {
                lines: 1,
                lds: 3,
                sts: 3,
                ld_wavefronts: 3,
                st_wavefronts: 3,
                ld_bank_conflicts: 0,
                st_bank_conflicts: 0,
                by_line: BTreeMap::from([(10, [6, 0])]),
            }
        );
        let many = Expansion::of(&k, &BTreeMap::from([(10, [3, 5])]));
        assert_eq!(
            (many.lds, many.ld_wavefronts, many.ld_bank_conflicts),
            (3, 5, 2)
        );
        assert_eq!(
            (many.sts, many.st_wavefronts, many.st_bank_conflicts),
            (3, 5, 2)
        );
        assert_eq!(many.by_line, BTreeMap::from([(10, [10, 4])]));
        // A line that is no tensor-map line (11) adds nothing; neither does a map line that
        // never ran with a guard on (absent from map_lines).
        assert_eq!(Expansion::of(&k, &BTreeMap::new()), Expansion::default());
        let mut t = crate::ptx::report::Totals::default();
        many.add_to(&mut t);
        assert_eq!(
            (
                t.shared_ld_wavefronts,
                t.shared_st_bank_conflicts,
                t.sass.LDS,
                t.sass.STS
            ),
            (5, 2, 3, 3)
        );
    }
}
