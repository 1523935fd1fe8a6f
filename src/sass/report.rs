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
    /// How the dynamic counts were found: `"replay"` (the SASS control flow replayed per warp,
    /// [`super::replay`]) or `"line counts: WHY"` (the reach-count rules of [`dynamic`], with
    /// why the replay was not used).
    pub counted_by: String,
    /// Dynamic counts per family and in total.
    pub counts: Counts,
    /// Every PTX line with SASS, in line order.
    pub lines: Vec<SassLine>,
}

/// What the replay needs of launch `l` of `prog` (one CTA, `l.cta`), for SASS compiled for
/// `arch`.
///
/// # Errors
/// A cluster launch (the replay runs one CTA), an arch without a known parameter offset, or
/// parameters that do not pack (as the run itself would say).
pub fn replay_launch(
    prog: &crate::ptx::decode::Program,
    l: &crate::ptx::Launch,
    arch: &str,
) -> Result<replay::Launch, String> {
    let (cluster, _) = crate::ptx::params::check_cluster(prog, l).map_err(|e| e.to_string())?;
    if cluster != [1, 1, 1] {
        return Err("a cluster launch (the replay runs one CTA)".into());
    }
    let param_base = replay::param_base(arch)
        .ok_or_else(|| format!("no constant-bank layout known for {arch}"))?;
    Ok(replay::Launch {
        params: crate::ptx::params::launch_params(prog, l).map_err(|e| e.to_string())?,
        param_base,
        ntid: l.block,
        nctaid: l.grid,
        ctaid: l.cta,
    })
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

/// The dynamic count of each instruction of `sass`: replayed when `launch` is given and the
/// replay finishes and [`agrees`] with the run, else from the reach counts; and which.
fn executions(
    sass: &KernelSass,
    reached: &BTreeMap<u32, u64>,
    launch: Result<&replay::Launch, &str>,
) -> (Vec<u64>, String) {
    let replayed = launch.map_err(str::to_string).and_then(|l| {
        let ran: u64 = reached.values().fold(0u64, |a, &b| a.saturating_add(b));
        let budget = ran.saturating_mul(8).saturating_add(1 << 20);
        let v = replay::replay(&sass.insts, l, budget).map_err(|e| e.to_string())?;
        agrees(&sass.insts, &v, reached)?;
        Ok(v)
    });
    match replayed {
        Ok(v) => (v, "replay".into()),
        Err(why) => (
            dynamic::executions(&sass.insts, reached),
            format!("line counts: {why}"),
        ),
    }
}

/// Joins `sass` with the reach counts of a run (`reached[line]`, [`crate::ptx::Report::reached`])
/// of the PTX `src`; `launch` (from [`replay_launch`], or why there is none) lets the SASS
/// control flow be replayed.
pub fn build(
    src: &str,
    sass: &KernelSass,
    reached: &BTreeMap<u32, u64>,
    launch: Result<&replay::Launch, &str>,
) -> SassReport {
    let (execs, counted_by) = executions(sass, reached, launch);
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
