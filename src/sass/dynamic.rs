//! Dynamic SASS counts from a simulated run: how often each SASS instruction of a listing
//! issues, from how often the simulator reached each PTX line (pure). The fallback of
//! [`super::replay`], which replays the SASS control flow itself and is exact where it finishes
//! (loops ptxas unrolled with remainder copies of several sizes, which a line's reach count
//! cannot split between, included); these rules count kernels the replay cannot decide (mbarrier
//! spin-waits, branches on loaded data).
//!
//! Every SASS instruction of a basic block issues as often as the block is entered, whatever
//! its guard (an instruction whose guard is false in every lane still issues: Nsight Compute's
//! `smsp__inst_executed` and its `_pred_off_all` parts count it). So the counts are per block,
//! and a block's count comes from the PTX lines of its instructions, read from the SASS itself:
//!
//! 1. **Anchors.** An unguarded instruction of a class that one PTX instruction makes exactly once
//!    ([`ANCHORS`]: `ld.shared.v4` is one `LDS.128`, `mma.sync.m16n8k16` one
//!    `HMMA.16816.F32`) votes `R / N` where that is a whole number: the PTX line's reach count
//!    `R` shared among the `N` anchors of its class that ptxas made of the line (a loop ptxas
//!    unrolled N times holds N copies, each entered R / N times).
//! 2. **Other unguarded instructions**, when the block has no anchor, vote `R · n / N` (`n` of
//!    the line's `N` SASS instructions are in the block), where that is a whole number.
//! 3. **Only guarded instructions** (a branch ptxas if-converted: the skipped PTX lines became
//!    guarded SASS that issues whenever the block is entered): the block's count is the
//!    largest reach count among them.
//! 4. **No line at all** (the `BRA` trap after `EXIT`, padding): 0.
//! 5. **Fall-through only.** A block no branch names is entered only from the block before it,
//!    so at most as often (a loop's preheader, where ptxas hoisted the loop lines' address
//!    arithmetic and spills, would otherwise vote with the loop: `fa2_d128_bm128_full`).
//!
//! Within a rule the vote is the most frequent value, ties to the larger. `@!PT` instructions
//! (ptxas's placeholder `LDS RZ, [RZ]` before `LDGSTS` groups on sm_90) never vote; they issue
//! with their block. Measured against Nsight Compute on the fixtures of `tests/data/ptx` and
//! `tests/data/ptx_hopper` (`tests/sass_counts.rs`).

use std::collections::BTreeMap;

use super::listing::SassInst;

/// Families a PTX instruction makes exactly one of, on its own line (the anchors of rule 1).
/// Not `HGMMA`: ptxas's line table books a run of `wgmma.mma_async` on the lines of its
/// neighbours (H200 source view of `hand_tma_wgmma_pipe`, docs/log/2026-12-02-verify-ptx-hopper.md),
/// so a line's HGMMA count says nothing about how often it ran.
pub const ANCHORS: &[&str] = &[
    "LDS", "STS", "LDSM", "STSM", "HMMA", "LDGSTS", "BAR", "SHFL",
];

/// Whether `i` is an anchor (rule 1).
fn anchor(i: &SassInst) -> bool {
    ANCHORS.contains(&i.family()) && !i.guarded()
}

/// The basic blocks of `insts`: index ranges, split at instructions whose label some
/// instruction names (a `BRA` target, a `BSSY` reconvergence point) and after branches, exits and
/// calls. nvdisasm also labels addresses nothing branches to (ptxas's if-converted `VOTEU` runs
/// on sm_90 carry one per instruction); those do not split.
pub fn blocks(insts: &[SassInst]) -> Vec<std::ops::Range<usize>> {
    let named: std::collections::BTreeSet<&str> =
        insts.iter().filter_map(|i| i.target.as_deref()).collect();
    let mut out = Vec::new();
    let mut start = 0;
    for (i, x) in insts.iter().enumerate() {
        if i > start && x.labels.iter().any(|l| named.contains(l.as_str())) {
            out.push(start..i);
            start = i;
        }
        if x.ends_block() {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < insts.len() {
        out.push(start..insts.len());
    }
    out
}

/// Which of `bs` (from [`blocks`]) can be entered from the first: by falling through (not after
/// an unguarded `BRA`, `EXIT`, `RET` or `KILL`) or as a branch's target label. The `BRA` to
/// itself after the last `EXIT` and the `NOP`s after it cannot.
pub fn reachable(insts: &[SassInst], bs: &[std::ops::Range<usize>]) -> Vec<bool> {
    let start_of: BTreeMap<&str, usize> = bs
        .iter()
        .enumerate()
        .flat_map(|(k, b)| insts[b.start].labels.iter().map(move |l| (l.as_str(), k)))
        .collect();
    let mut seen = vec![false; bs.len()];
    let mut todo = vec![0usize];
    while let Some(k) = todo.pop() {
        if k >= bs.len() || seen[k] {
            continue;
        }
        seen[k] = true;
        let Some(last) = bs[k].clone().last().map(|i| &insts[i]) else {
            continue;
        };
        if let Some(t) = last.target.as_deref().and_then(|t| start_of.get(t)) {
            todo.push(*t);
        }
        let stops =
            matches!(last.family(), "BRA" | "EXIT" | "RET" | "KILL" | "JMP") && !last.guarded();
        if !stops {
            todo.push(k + 1);
        }
    }
    seen
}

/// The most frequent value of `votes` (ties to the larger), `None` when empty.
fn mode(votes: &[u64]) -> Option<u64> {
    let mut n: BTreeMap<u64, usize> = BTreeMap::new();
    for &v in votes {
        *n.entry(v).or_default() += 1;
    }
    n.into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)))
        .map(|(v, _)| v)
}

/// How many times each instruction of `insts` issues (warp-level), given `reached[line]`, the
/// warp-level executions the simulator counted on each PTX line (warps whose guard was false in
/// every lane included; a line absent from the map counts 0). See the module docs for the rules.
pub fn executions(insts: &[SassInst], reached: &BTreeMap<u32, u64>) -> Vec<u64> {
    let r = |l: Option<u32>| l.and_then(|l| reached.get(&l).copied()).unwrap_or(0);
    // Per line: all SASS instructions, and anchors per family.
    let mut total: BTreeMap<u32, u64> = BTreeMap::new();
    let mut anchors: BTreeMap<(u32, &str), u64> = BTreeMap::new();
    for i in insts {
        if let Some(l) = i.line {
            *total.entry(l).or_default() += 1;
            if anchor(i) {
                *anchors.entry((l, i.family())).or_default() += 1;
            }
        }
    }
    let mut out = vec![0; insts.len()];
    let bs = blocks(insts);
    let live = reachable(insts, &bs);
    let named: std::collections::BTreeSet<&str> =
        insts.iter().filter_map(|i| i.target.as_deref()).collect();
    // The count of the block before (in address order), for rule 5.
    let mut before: Option<u64> = None;
    for (b, l) in bs.into_iter().zip(live) {
        if !l {
            before = Some(0);
            continue;
        }
        let body = &insts[b.clone()];
        let entered_by_branch = insts[b.start]
            .labels
            .iter()
            .any(|l| named.contains(l.as_str()));
        let lined = || body.iter().filter(|i| i.line.is_some() && !i.never_true());
        let first: Vec<u64> = lined()
            .filter(|i| anchor(i))
            .filter_map(|i| {
                let l = i.line.unwrap_or(0);
                let n = anchors.get(&(l, i.family())).copied().unwrap_or(1).max(1);
                let v = r(i.line);
                (v % n == 0).then_some(v / n)
            })
            .collect();
        let count = mode(&first).or_else(|| {
            let mut here: BTreeMap<u32, u64> = BTreeMap::new();
            for i in lined().filter(|i| !i.guarded()) {
                *here.entry(i.line.unwrap_or(0)).or_default() += 1;
            }
            let second: Vec<u64> = here
                .iter()
                .filter_map(|(l, n)| {
                    let all = total.get(l).copied().unwrap_or(1).max(1);
                    let v = r(Some(*l)).checked_mul(*n)?;
                    (v % all == 0).then_some(v / all)
                })
                .collect();
            mode(&second).or_else(|| lined().map(|i| r(i.line)).max())
        });
        let mut count = count.unwrap_or(0);
        if !entered_by_branch && let Some(p) = before {
            count = count.min(p);
        }
        before = Some(count);
        for o in &mut out[b] {
            *o = count;
        }
    }
    out
}

/// Dynamic counts per family (`LDS`, `HGMMA`, ...) and in total (`smsp__inst_executed.sum`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// Warp-level issues of every instruction (`smsp__inst_executed.sum`).
    pub inst_executed: u64,
    /// Warp-level issues per family.
    pub families: BTreeMap<String, u64>,
    /// Of those, issues of `@!PT` instructions per family (`…_pred_off_all` parts that no PTX
    /// line asks for).
    pub never_true: BTreeMap<String, u64>,
}

/// Sums `executions` (one per instruction of `insts`) per family.
pub fn counts(insts: &[SassInst], executions: &[u64]) -> Counts {
    let mut c = Counts::default();
    for (i, &n) in insts.iter().zip(executions) {
        c.inst_executed += n;
        *c.families.entry(i.family().to_string()).or_default() += n;
        if i.never_true() {
            *c.never_true.entry(i.family().to_string()).or_default() += n;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(addr: u32, guard: &str, mnemonic: &str, line: u32, label: bool) -> SassInst {
        SassInst {
            addr,
            guard: guard.into(),
            mnemonic: mnemonic.into(),
            text: mnemonic.into(),
            line: (line > 0).then_some(line),
            target: None,
            labels: if label { vec![".L".into()] } else { vec![] },
        }
    }

    #[test]
    fn blocks_split_at_labels_and_after_branches() {
        let v = [
            inst(0, "", "MOV", 1, false),
            inst(16, "@P0", "BRA", 2, false),
            inst(32, "", "LDS", 3, false),
            inst(48, "", "IADD3", 4, true),
            inst(64, "", "EXIT", 5, false),
            inst(80, "", "NOP", 5, true),
        ];
        // Nothing names the labels of 48 and 80: no block starts there.
        assert_eq!(blocks(&v), [0..2, 2..5, 5..6]);
        let mut w = v.clone();
        w[1].target = Some(".L".into());
        assert_eq!(blocks(&w), [0..2, 2..3, 3..5, 5..6]);
    }

    #[test]
    fn a_guarded_block_issues_with_its_most_reached_line_and_placeholders_with_their_block() {
        // An if-converted store: the branch line reached 8 times, the store's line 2.
        let v = [
            inst(0, "", "ISETP.GE.AND", 10, false),
            inst(16, "@P0", "STS", 12, false),
            inst(32, "@!PT", "LDS", 11, false),
        ];
        let reached = BTreeMap::from([(10, 8), (11, 2), (12, 2)]);
        assert_eq!(executions(&v, &reached), [8, 8, 8]);
        let c = counts(&v, &[8, 8, 8]);
        assert_eq!((c.inst_executed, c.never_true["LDS"]), (24, 8));
    }

    #[test]
    fn a_preheader_of_hoisted_loop_lines_is_entered_as_often_as_the_block_before() {
        // A (4 warps) falls through to the preheader B, whose instructions ptxas hoisted from
        // the loop's lines (reached 28 times); the loop C is entered by its back-edge too.
        let mut v = [
            inst(0, "", "MOV", 1, false),
            inst(16, "@P0", "BRA", 2, false),
            inst(32, "", "IMAD", 6, false),
            inst(48, "", "LEA", 7, false),
            inst(64, "", "LDS", 6, true),
            inst(80, "", "IADD3", 7, false),
            inst(96, "@P1", "BRA", 8, false),
            inst(112, "", "EXIT", 9, false),
        ];
        v[1].target = Some(".L9".into());
        v[7].labels = vec![".L9".into()];
        v[6].target = Some(".L".into());
        let reached = BTreeMap::from([(1, 4), (2, 4), (6, 28), (7, 28), (8, 28), (9, 4)]);
        assert_eq!(executions(&v, &reached), [4, 4, 4, 4, 28, 28, 28, 4]);
    }

    #[test]
    fn an_unrolled_copy_is_entered_its_share_of_the_line() {
        // A loop unrolled twice: two HMMA of line 20, reached 16 times, in one block.
        let v = [
            inst(0, "", "HMMA.16816.F32", 20, true),
            inst(16, "", "HMMA.16816.F32", 20, false),
            inst(32, "", "IADD3", 21, false),
            inst(48, "@P0", "BRA", 22, false),
        ];
        let reached = BTreeMap::from([(20, 16), (21, 16), (22, 16)]);
        assert_eq!(executions(&v, &reached), [8; 4]);
    }
}
