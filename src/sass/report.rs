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
    /// Dynamic counts per family and in total.
    pub counts: Counts,
    /// Every PTX line with SASS, in line order.
    pub lines: Vec<SassLine>,
}

/// Joins `sass` with the reach counts of a run (`reached[line]`, [`crate::ptx::Report::reached`])
/// of the PTX `src`.
pub fn build(src: &str, sass: &KernelSass, reached: &BTreeMap<u32, u64>) -> SassReport {
    let execs = dynamic::executions(&sass.insts, reached);
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
