//! The control-flow graph of a decoded kernel and each branch's **reconvergence point**: the
//! first instruction of the immediate post-dominator of the branch's basic block (the classic
//! SIMT-stack rule, as GPGPU-Sim's functional model uses), computed once per kernel with the
//! Cooper–Harvey–Kennedy iterative dominator algorithm on the reversed graph.
//!
//! Blocks end at a branch, an exit (`ret`/`exit`), or before a branch target. A virtual exit
//! node follows every exiting block (and the last block if it falls off the end); a branch whose
//! post-dominator is only that exit reconverges nowhere (`u32::MAX`): its paths run until their
//! lanes exit.

use super::decode::{Inst, Op};

/// Per instruction: the reconvergence instruction index of each branch, `u32::MAX` elsewhere or
/// where the immediate post-dominator is the virtual exit.
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
    // Postorder of the reverse graph from the exit (following CFG predecessor edges).
    let mut order = Vec::with_capacity(nb + 1);
    let mut seen = vec![false; nb + 1];
    let mut stack = vec![(exit, 0usize)];
    seen[exit] = true;
    while let Some((v, k)) = stack.pop() {
        if k < rpred[v].len() {
            stack.push((v, k + 1));
            let w = rpred[v][k];
            if !seen[w] {
                seen[w] = true;
                stack.push((w, 0));
            }
        } else {
            order.push(v);
        }
    }
    let mut po = vec![usize::MAX; nb + 1];
    for (i, &v) in order.iter().enumerate() {
        po[v] = i;
    }
    const UNDEF: usize = usize::MAX;
    let mut ipdom = vec![UNDEF; nb + 1];
    ipdom[exit] = exit;
    let intersect = |ipdom: &[usize], mut a: usize, mut b: usize| {
        while a != b {
            while po[a] < po[b] {
                a = ipdom[a];
            }
            while po[b] < po[a] {
                b = ipdom[b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        // Reverse postorder, skipping the exit.
        for &v in order.iter().rev() {
            if v == exit {
                continue;
            }
            // "Predecessors" in the reverse graph = CFG successors.
            let mut new = UNDEF;
            for &s in &succ[v] {
                if ipdom[s] == UNDEF {
                    continue;
                }
                new = if new == UNDEF {
                    s
                } else {
                    intersect(&ipdom, s, new)
                };
            }
            if new != UNDEF && ipdom[v] != new {
                ipdom[v] = new;
                changed = true;
            }
        }
    }
    for (i, ins) in insts.iter().enumerate() {
        if matches!(ins.op, Op::Bra { .. }) {
            let b = block_of[i];
            let p = ipdom[b];
            if p != UNDEF && p != exit {
                out[i] = starts[p] as u32;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::decode::Src;

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
}
