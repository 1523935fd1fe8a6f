//! The control-flow graph of a decoded kernel and each branch's **reconvergence point**: the
//! first instruction of the immediate post-dominator of the branch's basic block (the classic
//! SIMT-stack rule, as GPGPU-Sim's functional model uses), computed once per kernel with the
//! Lengauer–Tarjan dominator algorithm on the reversed graph.
//!
//! Blocks end at a branch, an exit (`ret`/`exit`), or before a branch target. A virtual exit
//! node follows every exiting block (and the last block if it falls off the end); a branch whose
//! post-dominator is only that exit reconverges nowhere (`u32::MAX`): its paths run until their
//! lanes exit.

use super::inst::{Inst, Op};

/// Per instruction: the reconvergence instruction index of each branch, `u32::MAX` elsewhere or
/// where the immediate post-dominator is the virtual exit (or where the branch never reaches
/// the exit: an endless loop).
///
/// Every walk over the graph is iterative (an explicit stack, never recursion) and the whole is
/// O(E log N) in the blocks and edges, whatever their shape: 100,000 nested loops (which took
/// the former Cooper–Harvey–Kennedy iteration quadratic time, 36 s) take milliseconds.
pub fn reconvergence(insts: &[Inst]) -> Vec<u32> {
    let n = insts.len();
    let mut out = vec![u32::MAX; n];
    if n == 0 {
        return out;
    }
    // Leaders.
    let mut leader = vec![false; n + 1];
    leader[0] = true;
    for (i, ins) in insts.iter().enumerate() {
        match ins.op {
            Op::Bra { target } => {
                // A label after the last instruction is the end of the body (index n).
                if let Some(l) = leader.get_mut(target as usize) {
                    *l = true;
                }
                leader[i + 1] = true;
            }
            Op::Exit => leader[i + 1] = true,
            _ => {}
        }
    }
    let starts: Vec<usize> = (0..n).filter(|&i| leader[i]).collect();
    let nb = starts.len();
    let mut block_of = vec![0usize; n];
    for (b, &s) in starts.iter().enumerate() {
        let e = starts.get(b + 1).copied().unwrap_or(n);
        block_of[s..e].fill(b);
    }
    let exit = nb;
    // Successors.
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); nb + 1];
    for (b, out) in succ.iter_mut().enumerate().take(nb) {
        let e = starts.get(b + 1).copied().unwrap_or(n);
        let last = &insts[e - 1];
        let fall = if e < n { block_of[e] } else { exit };
        match last.op {
            Op::Bra { target } => {
                // A branch to the end of the body leaves through the virtual exit, as falling
                // off the end does (the machine exits the lanes there).
                out.push(block_of.get(target as usize).copied().unwrap_or(exit));
                if last.guard.is_some() {
                    out.push(fall);
                }
            }
            Op::Exit => {
                out.push(exit);
                if last.guard.is_some() {
                    out.push(fall);
                }
            }
            _ => out.push(fall),
        }
    }
    // Reverse graph: predecessors in the reverse graph are the successors in the CFG.
    let mut rpred: Vec<Vec<usize>> = vec![Vec::new(); nb + 1]; // CFG predecessors
    for (b, ss) in succ.iter().enumerate() {
        for &s in ss {
            rpred[s].push(b);
        }
    }
    let ipdom = dominators(exit, &rpred, &succ);
    for (i, ins) in insts.iter().enumerate() {
        if matches!(ins.op, Op::Bra { .. }) {
            let b = block_of[i];
            let p = ipdom[b];
            if p != NONE && p != exit {
                out[i] = starts[p] as u32;
            }
        }
    }
    out
}

/// No node.
const NONE: usize = usize::MAX;

/// The immediate dominator of every node of a graph rooted at `root`, where `next[v]` are the
/// successors of `v` and `prev[v]` its predecessors (here the reversed CFG: its root the
/// virtual exit, so these are immediate post-dominators). `NONE` for nodes `root` does not
/// reach; the root's is itself. Lengauer and Tarjan's algorithm ("A fast algorithm for finding
/// dominators in a flowgraph", TOPLAS 1979) with path compression, its DFS and its `compress`
/// both iterative: no recursion over the input's shape.
fn dominators(root: usize, next: &[Vec<usize>], prev: &[Vec<usize>]) -> Vec<usize> {
    let n = next.len();
    // Depth-first numbering from the root (preorder), each node's DFS-tree parent.
    let mut dfnum = vec![NONE; n];
    let mut vertex = Vec::with_capacity(n);
    let mut parent = vec![NONE; n];
    let mut stack = vec![(root, 0usize)];
    dfnum[root] = 0;
    vertex.push(root);
    while let Some((v, k)) = stack.pop() {
        if let Some(&w) = next[v].get(k) {
            stack.push((v, k + 1));
            if dfnum[w] == NONE {
                dfnum[w] = vertex.len();
                vertex.push(w);
                parent[w] = v;
                stack.push((w, 0));
            }
        }
    }
    // semi[v]: the DFS number of v's semidominator; label and ancestor: the link-eval forest.
    let mut semi = dfnum.clone();
    let mut label: Vec<usize> = (0..n).collect();
    let mut ancestor = vec![NONE; n];
    let mut idom = vec![NONE; n];
    let mut bucket: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut path = Vec::new();
    // eval(v): the node of least semidominator on v's forest path, compressing the path.
    let eval = |v: usize,
                ancestor: &mut Vec<usize>,
                label: &mut Vec<usize>,
                semi: &[usize],
                path: &mut Vec<usize>| {
        if ancestor[v] == NONE {
            return v;
        }
        let mut u = v;
        while ancestor[ancestor[u]] != NONE {
            path.push(u);
            u = ancestor[u];
        }
        while let Some(x) = path.pop() {
            let a = ancestor[x];
            if semi[label[a]] < semi[label[x]] {
                label[x] = label[a];
            }
            ancestor[x] = ancestor[a];
        }
        label[v]
    };
    for i in (1..vertex.len()).rev() {
        let w = vertex[i];
        for &v in &prev[w] {
            if dfnum[v] == NONE {
                continue; // not reached from the root
            }
            let u = eval(v, &mut ancestor, &mut label, &semi, &mut path);
            if semi[u] < semi[w] {
                semi[w] = semi[u];
            }
        }
        bucket[vertex[semi[w]]].push(w);
        let p = parent[w];
        ancestor[w] = p; // link(parent, w)
        for v in std::mem::take(&mut bucket[p]) {
            let u = eval(v, &mut ancestor, &mut label, &semi, &mut path);
            idom[v] = if semi[u] < semi[v] { u } else { p };
        }
    }
    for &w in vertex.iter().skip(1) {
        if idom[w] != vertex[semi[w]] {
            idom[w] = idom[idom[w]];
        }
    }
    idom[root] = root;
    idom
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::inst::Src;

    fn bra(t: u32, guarded: bool) -> Inst {
        Inst {
            op: Op::Bra { target: t },
            guard: guarded.then_some((0, false)),
            line: 0,
        }
    }
    fn nop() -> Inst {
        Inst {
            op: Op::Mov {
                ty: crate::ptx::types::Ty::B(32),
                d: 0,
                a: Src::Imm(0),
            },
            guard: None,
            line: 0,
        }
    }

    #[test]
    fn if_else_reconverges_after_the_join() {
        // 0: @p bra 3; 1: nop; 2: bra 4; 3: nop; 4: nop (join); 5: ret
        let insts = vec![
            bra(3, true),
            nop(),
            bra(4, false),
            nop(),
            nop(),
            Inst {
                op: Op::Exit,
                guard: None,
                line: 0,
            },
        ];
        let r = reconvergence(&insts);
        assert_eq!(r[0], 4);
    }

    #[test]
    fn loop_back_edge_reconverges_at_the_exit_block() {
        // 0: nop; 1: nop (loop head); 2: @p bra 1; 3: nop (after loop)
        let insts = vec![nop(), nop(), bra(1, true), nop()];
        assert_eq!(reconvergence(&insts)[2], 3);
    }

    #[test]
    fn branch_to_a_label_after_the_last_instruction_goes_to_the_exit() {
        // 0: @p bra 3 (a label just before the closing brace, the `ret` after it deleted);
        // 1: nop; 2: nop. It indexed past the block table (a panic); the paths meet only at
        // the exit.
        let insts = vec![bra(3, true), nop(), nop()];
        assert_eq!(reconvergence(&insts), vec![u32::MAX; 3]);
        // An unguarded one: no fall-through successor, still no reconvergence point.
        let insts = vec![nop(), bra(2, false)];
        assert_eq!(reconvergence(&insts), vec![u32::MAX; 2]);
    }

    #[test]
    fn branch_to_exit_has_no_reconvergence() {
        // 0: @p bra 2; 1: ret; 2: nop; 3: ret  — the paths meet only at the exit
        let ret = || Inst {
            op: Op::Exit,
            guard: None,
            line: 0,
        };
        let insts = vec![bra(2, true), ret(), nop(), ret()];
        assert_eq!(reconvergence(&insts)[0], u32::MAX);
    }

    /// The immediate dominator by its definition, on small random graphs: d dominates v when
    /// every path from the root to v passes d (the sets computed by the classic iterative
    /// data-flow equations, Dom(v) = {v} ∪ ⋂ Dom(p) over v's predecessors); the immediate one
    /// is the strict dominator dominated by all the others.
    #[test]
    fn lengauer_tarjan_agrees_with_the_definition() {
        let mut rng = crate::seeded::Seeded::new(0x9e37_79b9_7f4a_7c15);
        let mut rnd = |m: usize| rng.int_in(0, m as i64 - 1) as usize;
        for _ in 0..300 {
            let n = 1 + rnd(12);
            let mut next = vec![Vec::new(); n];
            for v in next.iter_mut() {
                for _ in 0..rnd(4) {
                    v.push(rnd(n));
                }
            }
            let mut prev = vec![Vec::new(); n];
            for (v, ws) in next.iter().enumerate() {
                for &w in ws {
                    prev[w].push(v);
                }
            }
            let idom = dominators(0, &next, &prev);
            // Reachability and the dominator sets.
            let mut reach = vec![false; n];
            let mut st = vec![0];
            reach[0] = true;
            while let Some(v) = st.pop() {
                for &w in &next[v] {
                    if !reach[w] {
                        reach[w] = true;
                        st.push(w);
                    }
                }
            }
            let all: u64 = (1u64 << n) - 1;
            let mut dom: Vec<u64> = (0..n).map(|v| if v == 0 { 1 } else { all }).collect();
            let mut changed = true;
            while changed {
                changed = false;
                for v in 1..n {
                    if !reach[v] {
                        continue;
                    }
                    let mut d = all;
                    for &p in prev[v].iter().filter(|&&p| reach[p]) {
                        d &= dom[p];
                    }
                    d |= 1 << v;
                    if d != dom[v] {
                        dom[v] = d;
                        changed = true;
                    }
                }
            }
            for v in 0..n {
                let want = if v == 0 {
                    0
                } else if !reach[v] {
                    NONE
                } else {
                    let strict = dom[v] & !(1 << v);
                    (0..n)
                        .find(|&d| strict & (1 << d) != 0 && dom[d] == strict)
                        .unwrap()
                };
                assert_eq!(idom[v], want, "node {v} of {next:?}");
            }
        }
    }

    /// 100,000 nested loops (each a back edge to its own head, the innermost first): the
    /// former iteration took 36 s on them (quadratic); each loop's branch reconverges at the
    /// next branch out, the outermost at the `ret`.
    #[test]
    fn deeply_nested_loops_take_linear_time() {
        let n = 100_000u32;
        let mut insts: Vec<Inst> = (0..n).map(|_| nop()).collect();
        for k in (0..n).rev() {
            insts.push(bra(k, true));
        }
        insts.push(Inst {
            op: Op::Exit,
            guard: None,
            line: 0,
        });
        let t = std::time::Instant::now();
        let r = reconvergence(&insts);
        assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
        // Branch n + j (to head n - 1 - j) reconverges at the instruction after it.
        for j in 0..n as usize {
            assert_eq!(r[n as usize + j], (n as usize + j + 1) as u32, "{j}");
        }
    }
}
