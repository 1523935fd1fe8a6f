//! Which tensor-core results a count can do without (issue #31): a pass over the decoded
//! program that proves, per kernel, that no value an `mma.sync` or `wgmma.mma_async` computes
//! can reach an address, a guard, a branch, a barrier or any operand whose value changes what
//! the simulator counts or refuses. When it holds, a counts-only run
//! ([`super::engine::run_counts`]) leaves their D registers as they were instead of doing the
//! multiply-adds (about half the time of a wgmma kernel's CTA), and every count is the same.
//!
//! **The rule.** A register is *tainted* when its value may depend on a tensor-core result:
//! the D registers of every `mma`/`wgmma` are; so is any register an instruction writes from a
//! tainted operand (ALU, `cvt`, `mov`, `selp`, `setp`'s predicates, `shfl`'s value, `vote`,
//! `bar.red`). Memory is followed per state space, as one place each (global with generic and
//! `.const`, shared with `.shared::cluster`, local): a store of a tainted value, a `cp.async`
//! or bulk copy from a tainted space, taints the space; a load from a tainted space taints what
//! it loads (`ld`, `ldmatrix`, `atom`'s old value). The pass runs to a fixed point (it ignores
//! instruction order, so it is sound for every path and loop). The proof **fails** when a
//! tainted register is used as: a guard (`@p`, so also every branch condition); any address
//! (every `ld`/`st`/`atom`/`ldmatrix`/`stmatrix`/`cp.async`/bulk/mbarrier/tensormap operand
//! that is an address); a `wgmma` descriptor; `shfl`'s lane, clamp or membermask; any
//! membermask, barrier id or thread count, mbarrier count or transaction bytes, bulk size,
//! coordinate or ctaMask, `mapa` operand, `cvta.to` source (it can fail on its value),
//! `cp.async` src-size or ignore-src; or when tainted shared memory reaches a tensor map
//! (`tensormap.cp_fenceproxy`, `tensormap.replace`).
//!
//! One read the pass cannot follow is checked at run time instead: a bulk copy's tensor map
//! read from global memory (a map a kernel wrote there) may hold bytes a skipped result wrote,
//! so a counts-only run that reads one is made again with values
//! (`engine::run_counts_proven`).
//!
//! What it does not change: the counts (addresses, guards and control flow are computed from
//! untainted values exactly as before), the errors a run can meet (every operand that can fail
//! on its value is a sink), and runs that show values (`tilelab ptx --json` with a trace, the
//! TUI, data checks), which keep computing D.

use super::decode::{Addr, Op, Program, Space, Src, WgmmaSrc};

/// The pass's verdict for one program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    /// No tensor-core result reaches anything a count depends on: counts-only runs may skip
    /// the multiply-adds.
    Holds,
    /// The kernel has no `mma`/`wgmma`: nothing to skip.
    NoTensorCore,
    /// A tainted value reaches a sink: the first one found, as "line N: why".
    Fails(String),
}

/// The memory places the pass follows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Global,
    Shared,
    Local,
}

fn places(space: Space) -> &'static [Place] {
    match space {
        Space::Global => &[Place::Global],
        Space::Shared | Space::Cluster => &[Place::Shared],
        Space::Local => &[Place::Local],
        Space::Param => &[],
        Space::Generic => &[Place::Global, Place::Shared, Place::Local],
    }
}

/// The fixed point's state.
struct State {
    reg: Vec<bool>,
    mem: [bool; 3],
    changed: bool,
}

impl State {
    fn src(&self, s: &Src) -> bool {
        matches!(s, Src::Reg(r) if self.reg.get(*r as usize).copied().unwrap_or(false))
    }
    fn any(&self, ss: &[Src]) -> bool {
        ss.iter().any(|s| self.src(s))
    }
    fn taint(&mut self, r: u32) {
        if let Some(t) = self.reg.get_mut(r as usize)
            && !*t
        {
            *t = true;
            self.changed = true;
        }
    }
    fn taint_if(&mut self, cond: bool, r: u32) {
        if cond {
            self.taint(r);
        }
    }
    fn mem_of(&self, space: Space) -> bool {
        places(space).iter().any(|p| self.mem[*p as usize])
    }
    fn taint_mem(&mut self, space: Space) {
        for p in places(space) {
            if !self.mem[*p as usize] {
                self.mem[*p as usize] = true;
                self.changed = true;
            }
        }
    }
}

/// Runs the pass over `prog` ([`Proof`]).
pub fn prove(prog: &Program) -> Proof {
    let seeds = prog
        .insts
        .iter()
        .any(|i| matches!(i.op, Op::Mma { .. } | Op::Wgmma { .. }));
    if !seeds {
        return Proof::NoTensorCore;
    }
    let mut st = State {
        reg: vec![false; prog.nregs as usize],
        mem: [false; 3],
        changed: true,
    };
    // Each round only adds taint; at most (registers + places) rounds change anything.
    while st.changed {
        st.changed = false;
        for inst in &prog.insts {
            flow(&mut st, &inst.op);
        }
    }
    for inst in &prog.insts {
        if let Some((r, _)) = inst.guard
            && st.reg.get(r as usize).copied().unwrap_or(false)
        {
            return Proof::Fails(format!(
                "line {}: its guard depends on a tensor-core result",
                inst.line
            ));
        }
        if let Some(why) = sink(&st, &inst.op) {
            return Proof::Fails(format!("line {}: {why}", inst.line));
        }
    }
    Proof::Holds
}

/// Adds what `op` taints.
fn flow(st: &mut State, op: &Op) {
    match op {
        Op::Mov { d, a, .. } | Op::Un { d, a, .. } | Op::Cvt { d, a, .. } => {
            let t = st.src(a);
            st.taint_if(t, *d);
        }
        Op::Pack { d, parts, .. } => {
            let t = st.any(parts);
            st.taint_if(t, *d);
        }
        Op::Unpack { parts, a, .. } => {
            if st.src(a) {
                for p in parts.iter().flatten() {
                    st.taint(*p);
                }
            }
        }
        Op::Bin { d, a, b, .. } | Op::CvtPack { d, a, b, .. } => {
            let t = st.src(a) || st.src(b);
            st.taint_if(t, *d);
        }
        Op::Tern { d, a, b, c, .. } => {
            let t = st.any(&[*a, *b, *c]);
            st.taint_if(t, *d);
        }
        Op::Bfi { d, s, .. } => {
            let t = st.any(s);
            st.taint_if(t, *d);
        }
        Op::Lop3 { d, s, .. } => {
            let t = st.any(s);
            st.taint_if(t, *d);
        }
        Op::Setp {
            d, d2, a, b, comb, ..
        } => {
            let t = st.src(a) || st.src(b) || comb.as_ref().is_some_and(|c| st.src(&c.1));
            st.taint_if(t, *d);
            if let Some(d2) = d2 {
                st.taint_if(t, *d2);
            }
        }
        Op::PredLogic { d, a, b, .. } => {
            let t = st.src(&a.0) || st.src(&b.0);
            st.taint_if(t, *d);
        }
        Op::Selp { d, a, b, p, .. } => {
            let t = st.src(a) || st.src(b) || st.src(&p.0);
            st.taint_if(t, *d);
        }
        Op::Bar { red, .. } => {
            if let Some((_, d, p)) = red {
                let t = st.src(&p.0);
                st.taint_if(t, *d);
            }
        }
        Op::Mma { d, .. } => {
            for r in d {
                st.taint(*r);
            }
        }
        Op::Wgmma { d, .. } => {
            for r in d {
                st.taint(*r);
            }
        }
        Op::Shfl { d, s, .. } => {
            let t = st.src(&s[0]);
            st.taint_if(t, *d);
        }
        Op::Vote { d, p, .. } => {
            let t = st.src(&p.0);
            st.taint_if(t, *d);
        }
        Op::Ld { space, d, .. } => {
            if st.mem_of(*space) {
                for r in d.iter().flatten() {
                    st.taint(*r);
                }
            }
        }
        Op::St { space, s, .. } => {
            if st.any(s) {
                st.taint_mem(*space);
            }
        }
        Op::Ldmatrix { d, .. } => {
            if st.mem_of(Space::Shared) {
                for r in d {
                    st.taint(*r);
                }
            }
        }
        Op::Stmatrix { s, .. } => {
            if st.any(s) {
                st.taint_mem(Space::Shared);
            }
        }
        Op::CpAsync { .. } => {
            if st.mem_of(Space::Global) {
                st.taint_mem(Space::Shared);
            }
        }
        Op::Bulk { form, .. } => {
            use super::decode::BulkForm as F;
            let to_shared = matches!(form, F::TensorLoad { .. } | F::CopyToShared);
            let (from, to) = if to_shared {
                (Space::Global, Space::Shared)
            } else {
                (Space::Shared, Space::Global)
            };
            if st.mem_of(from) {
                st.taint_mem(to);
            }
        }
        Op::Atom { space, d, b, c, .. } => {
            if st.mem_of(*space)
                && let Some(d) = d
            {
                st.taint(*d);
            }
            if st.src(b) || c.as_ref().is_some_and(|c| st.src(c)) {
                st.taint_mem(*space);
            }
        }
        Op::Nop
        | Op::Bra { .. }
        | Op::Exit
        | Op::AsyncCommit { .. }
        | Op::AsyncWait { .. }
        | Op::Mbarrier { .. }
        | Op::Elect { .. }
        | Op::ClusterBarrier { .. }
        | Op::Mapa { .. }
        | Op::TensorMapReplace { .. }
        | Op::TensorMapCopy { .. }
        | Op::Call { .. }
        | Op::WarpSync { .. }
        | Op::Activemask { .. } => {}
    }
}

/// Why a tainted operand of `op` would change a count or an error, if one is tainted.
fn sink(st: &State, op: &Op) -> Option<String> {
    let addr = |a: &Addr| st.src(&a.base);
    let why = |what: &str| Some(format!("{what} depends on a tensor-core result"));
    match op {
        Op::Un { k, a, .. }
            if matches!(
                k,
                super::decode::Un::CvtaToShared | super::decode::Un::CvtaToLocal
            ) && st.src(a) =>
        {
            why("a cvta.to source")
        }
        Op::Bar { id, count, .. } if st.src(id) || count.as_ref().is_some_and(|c| st.src(c)) => {
            why("a barrier id or thread count")
        }
        Op::Mbarrier { addr: ad, a, b, .. }
            if addr(ad)
                || a.as_ref().is_some_and(|x| st.src(x))
                || b.as_ref().is_some_and(|x| st.src(x)) =>
        {
            why("an mbarrier address, count or transaction bytes")
        }
        Op::Wgmma { a, b, .. } if st.src(b) || matches!(a, WgmmaSrc::Desc(s) if st.src(s)) => {
            why("a wgmma descriptor")
        }
        Op::Bulk {
            smem,
            global,
            tmap,
            size,
            mbar,
            cta_mask,
            ..
        } if addr(smem)
            || global.as_ref().is_some_and(addr)
            || tmap.as_ref().is_some_and(|(a, cs)| addr(a) || st.any(cs))
            || size.as_ref().is_some_and(|s| st.src(s))
            || mbar.as_ref().is_some_and(addr)
            || cta_mask.as_ref().is_some_and(|s| st.src(s)) =>
        {
            why("a bulk copy's address, coordinate, size or ctaMask")
        }
        Op::Elect { member, .. } | Op::WarpSync { member } if st.src(member) => why("a membermask"),
        Op::Mapa { a, rank, .. } if st.src(a) || st.src(rank) => why("a mapa operand"),
        Op::TensorMapReplace {
            addr: ad, value, ..
        } if addr(ad) || st.src(value) => why("a tensormap.replace operand"),
        Op::TensorMapReplace { .. } | Op::TensorMapCopy { .. }
            if st.mem[Place::Shared as usize] || st.mem[Place::Global as usize] =>
        {
            Some("a tensor map is made in memory that may hold tensor-core results".into())
        }
        Op::TensorMapCopy { dst, src } if addr(dst) || addr(src) => {
            why("a tensormap.cp_fenceproxy address")
        }
        Op::Shfl { s, member, .. }
            if st.src(&s[1]) || st.src(&s[2]) || member.as_ref().is_some_and(|m| st.src(m)) =>
        {
            why("a shfl lane, clamp or membermask")
        }
        Op::Vote {
            member: Some(m), ..
        } if st.src(m) => why("a membermask"),
        Op::Ld { addr: a, .. }
        | Op::St { addr: a, .. }
        | Op::Ldmatrix { addr: a, .. }
        | Op::Stmatrix { addr: a, .. }
        | Op::Atom { addr: a, .. }
            if addr(a) =>
        {
            why("an address")
        }
        Op::CpAsync {
            dst,
            src,
            src_size,
            ignore,
            ..
        } if addr(dst)
            || addr(src)
            || src_size.as_ref().is_some_and(|s| st.src(s))
            || ignore.as_ref().is_some_and(|i| st.src(&i.0)) =>
        {
            why("a cp.async address, src-size or ignore-src")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prog(body: &str) -> Program {
        let src = format!(
            ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<40>;\n.reg .f32 %f<40>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n.shared .align 16 .b8 s[4096];\n{body}\nret;\n}}\n"
        );
        super::super::report::load(&src, None).unwrap()
    }

    const MMA: &str = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f4,%f5,%f6,%f7};";

    #[test]
    fn results_stored_to_global_hold() {
        let p = prog(&format!(
            "ld.param.u64 %rd0, [p];\n{MMA}\ncvt.rn.f16x2.f32 %r8, %f1, %f0;\nst.shared.b32 [%r9], %r8;\nld.shared.b32 %r10, [%r9];\nst.global.b32 [%rd0], %r10;"
        ));
        assert_eq!(prove(&p), Proof::Holds);
    }

    #[test]
    fn no_tensor_core_means_nothing_to_prove() {
        let p = prog("mov.u32 %r0, 1;");
        assert_eq!(prove(&p), Proof::NoTensorCore);
    }

    /// A result that becomes an address, through shared memory and back: fails at the load.
    #[test]
    fn a_result_used_as_an_address_fails() {
        let p = prog(&format!(
            "{MMA}\ncvt.rzi.s32.f32 %r8, %f0;\nst.shared.b32 [%r9], %r8;\nld.shared.b32 %r10, [%r9];\nld.shared.b32 %r11, [%r10];"
        ));
        let Proof::Fails(why) = prove(&p) else {
            panic!("expected a failure")
        };
        assert!(
            why.ends_with("an address depends on a tensor-core result"),
            "{why}"
        );
        assert!(why.starts_with("line 15:"), "{why}");
    }

    #[test]
    fn a_result_that_decides_a_branch_fails() {
        let p = prog(&format!(
            "{MMA}\nsetp.gt.f32 %p1, %f0, 0f00000000;\n@%p1 bra DONE;\nmov.u32 %r20, 1;\nDONE:"
        ));
        let Proof::Fails(why) = prove(&p) else {
            panic!("expected a failure")
        };
        assert_eq!(why, "line 13: its guard depends on a tensor-core result");
    }

    #[test]
    fn a_result_as_a_shfl_lane_fails_but_as_its_value_holds() {
        let ok = prog(&format!(
            "{MMA}\nmov.b32 %r8, %f0;\nshfl.sync.bfly.b32 %r9, %r8, 1, 31, -1;"
        ));
        assert_eq!(prove(&ok), Proof::Holds);
        let bad = prog(&format!(
            "{MMA}\nmov.b32 %r8, %f0;\nshfl.sync.idx.b32 %r9, %r1, %r8, 31, -1;"
        ));
        assert!(matches!(prove(&bad), Proof::Fails(w) if w.contains("shfl lane")));
    }
}
