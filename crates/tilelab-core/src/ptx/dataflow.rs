//! Which results a count can do without (issue #31): passes over the decoded program that
//! find the `mma.sync` and `wgmma.mma_async` instructions, and the pure ALU ones, whose values
//! cannot reach an address, a guard, a branch, a barrier or any operand whose value changes
//! what the simulator counts or refuses. A counts-only run ([`super::engine::run_counts`])
//! leaves their destination registers as they were instead of computing them (the
//! multiply-adds are about half the time of a wgmma kernel's CTA), and every count is the
//! same.
//!
//! **The sinks.** An operand is a *sink* when its value changes a count or an error: a guard
//! (`@p`, so also every branch condition); any address (every `ld`/`st`/`atom`/`ldmatrix`/
//! `stmatrix`/`cp.async`/bulk/mbarrier/tensormap operand that is an address); a `wgmma`
//! descriptor; `shfl`'s lane, clamp or membermask; any membermask, barrier id or thread
//! count, mbarrier count or transaction bytes, bulk size, coordinate or ctaMask, `mapa`
//! operand, `cvta.to` source (it can fail on its value), `cp.async` src-size or ignore-src; and
//! the shared and global memory a tensor map is made in (`tensormap.cp_fenceproxy`,
//! `tensormap.replace`).
//!
//! **The flow.** Values move from an instruction's sources to its targets (`flow_of`: ALU,
//! `cvt`, `mov`, `selp`, `setp`'s predicates, `shfl`'s value, `vote`, `bar.red`, the tensor
//! cores' operands); memory is followed per state space (global with generic and `.const`,
//! shared with `.shared::cluster`, local): a store moves its value into its space, a load out
//! of it, a `cp.async` or bulk copy from one space to the other. The passes run to a fixed
//! point and ignore instruction order, so they are sound for every path and loop. [`plan`]
//! also cuts two spaces into parts: global memory into the launch's buffers, shared memory
//! into [`Regions`] (one per `.shared` variable, the dynamic area one more), each access
//! placed where the pointer its address is computed from points; a counts-only run checks
//! every placed access and counts again with values where one strays.
//!
//! * [`prove`] (forward, per kernel): taint from every tensor-core result; it **holds** when no
//!   sink is tainted, and its failure names the first sink reached ("line N: why").
//! * [`plan`] (backward, per instruction and launch): what the sinks need; an `mma`/`wgmma`
//!   is computed when one of its D registers is needed, and a pure ALU instruction
//!   ([`pure_alu`]) when one of its destinations is ([`Plan::lanes`], below). It also places
//!   global accesses per buffer (an address computed from a pointer parameter stays in its
//!   buffer) and `.shared` ones per region (an address computed from a variable's address
//!   stays in its region; a bulk copy's shared side too), which the run checks on every access
//!   ([`Plan::global`], [`Plan::shared`]); a tensor-map copy's global side is placed in the
//!   buffers of the launch's tensor maps.
//!
//! **ALU instructions.** The same need marks decide every `mov`, `mov` packing or unpacking
//! parts, one-, two- and three-operand operation (`add`, `fma`, `ex2`, `shf`, `prmt`, ...),
//! `bfi`, `lop3`, `setp`, predicate logic, `selp`, `cvt` and packing `cvt` (`f16x2`): one none
//! of whose destination registers is needed is skipped by a counts-only run (an attention
//! kernel's softmax: the `ex2` of the scores, the `cvt` of P into `f16x2`, O's rescaling).
//! These are the instructions whose only effect is writing their destinations from their
//! sources and which cannot fail: `cvta.to.shared`/`cvta.to.local` (which check the address
//! they convert) are not among them. A skipped instruction is still issued and counted as
//! before (executions, guards, cost units, budget, SASS lines): only its lanes are not
//! computed, so its destinations keep their old values, which no count reads (a destination
//! not needed reaches no sink, through registers or memory). The one thing a register's value
//! decides beside the sinks is the spin rule (`engine::Machine::branch`: a loop iteration that
//! changed no register yields while another warp could write memory); whether a skipped
//! instruction would have changed its destination is not known, nor whether an `ld`,
//! `ldmatrix`, `shfl` or `vote` writing only registers no sink needs did (its sources may hold
//! what a skipped instruction left: [`Lanes::Inexact`]). So a counts-only run notes, per warp,
//! such instructions in each loop iteration (the uncomputed `mma` too), leaves their changes
//! out of the iteration's, and one whose spin rule would yield on an iteration that held one
//! is made again with values. Every other register write is the values run's (a needed
//! register is computed from needed registers and memory only), so a change it sees is real.
//!
//! Two reads the passes cannot follow are checked at run time instead: a bulk copy's tensor
//! map read from global memory (a map a kernel wrote there) may hold bytes a skipped result
//! wrote, and an access may leave the buffer it was placed in; a counts-only run that meets
//! either is made again with values (`engine::run_counts_planned`).
//!
//! What it does not change: the counts (addresses, guards and control flow are computed from
//! the values they need exactly as before), the errors a run can meet (every operand that can
//! fail on its value is a sink, and no instruction that can fail is skipped), and runs that
//! show values (`tilelab ptx --json` with a trace,
//! the TUI, data checks), which compute every D.

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

/// A place a value can be in: a register, or memory of a state space (its [`places`]); for
/// global memory, of the buffers a [`GlobalSet`] names, for shared memory of the regions a
/// [`SharedSet`] names.
#[derive(Clone, Copy)]
enum Node {
    Reg(u32),
    Mem(Space, GlobalSet, SharedSet),
}

/// Shared-memory regions as a bit set: bit `i` for region `i` of the program's [`Regions`]
/// (`i` up to 62, the regions past 62 sharing bit 62); bit 63 for addresses the pass cannot
/// place. [`ALL_SHARED`] is every region.
pub type SharedSet = u64;

/// Every shared-memory region ([`SharedSet`]).
pub const ALL_SHARED: SharedSet = u64::MAX;

/// A program's shared memory cut into regions at the start of every `.shared` variable
/// (static ones, then the dynamic area at [`Program::dynamic_smem_offset`]): region `i` is
/// bytes `starts[i] .. starts[i + 1]`, the last one to the end of shared memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regions {
    starts: Vec<u32>,
}

impl Regions {
    /// The regions of `prog` (always at least one, starting at byte 0).
    pub fn of(prog: &Program) -> Self {
        let mut starts: Vec<u32> = std::iter::once(0)
            .chain(prog.shared_names.iter().map(|(o, _)| *o))
            .chain(prog.dynamic_smem_offset)
            .collect();
        starts.sort_unstable();
        starts.dedup();
        Regions { starts }
    }

    /// The bit of the region holding shared byte `offset` ([`SharedSet`]).
    fn bit(&self, offset: u64) -> u32 {
        let i = self.starts.partition_point(|&s| u64::from(s) <= offset);
        (i.saturating_sub(1) as u32).min(62)
    }

    /// The regions that shared bytes `lo .. end` (byte offsets, `end` exclusive) touch; none
    /// for an empty range.
    pub fn span(&self, lo: u64, end: u64) -> SharedSet {
        if end <= lo {
            return 0;
        }
        let (a, b) = (self.bit(lo), self.bit(end - 1));
        (u64::MAX >> (63 - b)) & (u64::MAX << a)
    }
}

/// Global buffers as a bit set: bit `k - 1` for the launch's buffer `k` (the one at
/// [`super::decode::buffer_base`]`(k - 1)`, `k` up to 63); bit 63 for everything else (the
/// buffers past 63, addresses the pass cannot place). [`ALL_GLOBAL`] is every buffer.
pub type GlobalSet = u64;

/// Every global buffer ([`GlobalSet`]).
pub const ALL_GLOBAL: GlobalSet = u64::MAX;

/// The set of the buffer a pointer value points into (the engine's layout: buffer `k` at
/// `k << 40`, [`super::decode::buffer_base`]); 0 for a value that is no pointer into one of
/// the first 63 (an access through it is then placed nowhere known: every buffer).
fn buffer_of(v: u64) -> GlobalSet {
    match v >> 40 {
        k @ 1..=63 => 1 << (k - 1),
        _ => 0,
    }
}

/// One instruction's value flow ([`flow_of`]): every source may reach every target; `seed`:
/// the targets are tensor-core results. `atom` has a second flow (`src2` to `dst2`: its
/// operands into memory) beside the first (memory's old value into `d`).
#[derive(Default)]
struct Flow {
    src: Vec<Node>,
    dst: Vec<Node>,
    seed: bool,
    src2: Vec<Node>,
    dst2: Vec<Node>,
}

impl Flow {
    fn src(&mut self, s: &Src) {
        if let Src::Reg(r) = s {
            self.src.push(Node::Reg(*r));
        }
    }
    fn srcs<'a>(&mut self, ss: impl IntoIterator<Item = &'a Src>) {
        for s in ss {
            self.src(s);
        }
    }
    fn dst(&mut self, r: u32) {
        self.dst.push(Node::Reg(r));
    }
}

/// Where a plan places accesses: per register, the global buffers and the shared regions its
/// value may point into ([`provenance`]); per instruction, the shared regions it names
/// ([`Program::shared_refs`]); the buffers the launch's tensor maps point into.
struct Placement {
    global: Vec<GlobalSet>,
    shared: Vec<SharedSet>,
    refs: Vec<SharedSet>,
    tmaps: GlobalSet,
}

/// One instruction's view of a [`Placement`] (`None`: nothing is placed, every access may touch
/// every buffer and region).
#[derive(Clone, Copy)]
struct At<'a> {
    place: Option<&'a Placement>,
    inst: usize,
}

impl At<'_> {
    /// The global buffers an access through `a` may touch.
    fn global(&self, a: &Addr) -> GlobalSet {
        self.place.map_or(ALL_GLOBAL, |p| access_set(&p.global, a))
    }

    /// The shared regions an access through `a` in state space `space` may touch: placed for
    /// `.shared` (`shared::cta`) addresses, every region for the other spaces.
    fn shared(&self, space: Space, a: &Addr) -> SharedSet {
        let Some(p) = self.place else {
            return ALL_SHARED;
        };
        if space != Space::Shared {
            return ALL_SHARED;
        }
        let s = match a.base {
            Src::Reg(r) => p.shared.get(r as usize).copied().unwrap_or(0),
            Src::Imm(_) => p.refs.get(self.inst).copied().unwrap_or(0),
        };
        if s == 0 || s & (1 << 63) != 0 {
            ALL_SHARED
        } else {
            s
        }
    }

    /// The global buffers a tensor-map copy may touch.
    fn tmaps(&self) -> GlobalSet {
        self.place.map_or(ALL_GLOBAL, |p| p.tmaps)
    }
}

/// Fills `f` with what `op` moves from where to where (cleared first). Both passes read it:
/// [`prove`] forward from the tensor-core results, [`plan`] backward from the sinks, so the
/// two cannot disagree on an edge.
fn flow_of(op: &Op, at: At, f: &mut Flow) {
    f.src.clear();
    f.dst.clear();
    f.src2.clear();
    f.dst2.clear();
    f.seed = false;
    match op {
        Op::Mov { d, a, .. } | Op::Un { d, a, .. } | Op::Cvt { d, a, .. } => {
            f.src(a);
            f.dst(*d);
        }
        Op::Pack { d, parts, .. } => {
            f.srcs(parts);
            f.dst(*d);
        }
        Op::Unpack { parts, a, .. } => {
            f.src(a);
            for p in parts.iter().flatten() {
                f.dst(*p);
            }
        }
        Op::Bin { d, a, b, .. } | Op::CvtPack { d, a, b, .. } => {
            f.srcs([a, b]);
            f.dst(*d);
        }
        Op::Tern { d, a, b, c, .. } => {
            f.srcs([a, b, c]);
            f.dst(*d);
        }
        Op::Bfi { d, s, .. } => {
            f.srcs(s);
            f.dst(*d);
        }
        Op::Lop3 { d, s, .. } => {
            f.srcs(s);
            f.dst(*d);
        }
        Op::Setp {
            d, d2, a, b, comb, ..
        } => {
            f.srcs([a, b]);
            if let Some(c) = comb {
                f.src(&c.1);
            }
            f.dst(*d);
            if let Some(d2) = d2 {
                f.dst(*d2);
            }
        }
        Op::PredLogic { d, a, b, .. } => {
            f.srcs([&a.0, &b.0]);
            f.dst(*d);
        }
        Op::Selp { d, a, b, p, .. } => {
            f.srcs([a, b, &p.0]);
            f.dst(*d);
        }
        Op::Bar {
            red: Some((_, d, p)),
            ..
        } => {
            f.src(&p.0);
            f.dst(*d);
        }
        Op::Mma { d, a, b, c, .. } => {
            f.seed = true;
            f.srcs(a.iter().chain(b).chain(c));
            for r in d {
                f.dst(*r);
            }
        }
        Op::Wgmma { d, a, scale_d, .. } => {
            // D accumulates (it is read), A is registers or shared memory, B shared memory.
            f.seed = true;
            if let WgmmaSrc::Regs(rs) = a {
                f.srcs(rs);
            }
            f.src(&scale_d.0);
            f.src.push(Node::Mem(Space::Shared, 0, ALL_SHARED));
            for r in d {
                f.src.push(Node::Reg(*r));
                f.dst(*r);
            }
        }
        Op::Shfl { d, s, .. } => {
            f.src(&s[0]);
            f.dst(*d);
        }
        Op::Vote { d, p, .. } => {
            f.src(&p.0);
            f.dst(*d);
        }
        Op::Ld { .. }
        | Op::St { .. }
        | Op::Ldmatrix { .. }
        | Op::Stmatrix { .. }
        | Op::CpAsync { .. }
        | Op::Bulk { .. }
        | Op::Atom { .. } => memory_flow(op, at, f),
        Op::Bar { red: None, .. }
        | Op::Nop
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

/// [`flow_of`] for the instructions that load or store memory.
fn memory_flow(op: &Op, at: At, f: &mut Flow) {
    let mem = |space: Space, a: &Addr| Node::Mem(space, at.global(a), at.shared(space, a));
    match op {
        Op::Ld { space, d, addr, .. } => {
            f.src.push(mem(*space, addr));
            for r in d.iter().flatten() {
                f.dst(*r);
            }
        }
        Op::St { space, s, addr, .. } => {
            f.srcs(s);
            f.dst.push(mem(*space, addr));
        }
        Op::Ldmatrix { d, .. } => {
            f.src.push(Node::Mem(Space::Shared, 0, ALL_SHARED));
            for r in d {
                f.dst(*r);
            }
        }
        Op::Stmatrix { s, .. } => {
            f.srcs(s);
            f.dst.push(Node::Mem(Space::Shared, 0, ALL_SHARED));
        }
        Op::CpAsync { src, dst, .. } => {
            f.src.push(mem(Space::Global, src));
            f.dst
                .push(Node::Mem(Space::Shared, 0, at.shared(Space::Shared, dst)));
        }
        Op::Bulk {
            form, smem, global, ..
        } => {
            use super::decode::BulkForm as F;
            let to_shared = matches!(form, F::TensorLoad { .. } | F::CopyToShared);
            // The shared side: a load's `.shared::cluster` address is the same offset in the
            // CTA it lands in, placed in the same regions (`bulk_sets`).
            let (g, sh) = bulk_sets(form, smem, global.as_ref(), at);
            let (gm, sm) = (
                Node::Mem(Space::Global, g, 0),
                Node::Mem(Space::Shared, 0, sh),
            );
            let (from, to) = if to_shared { (gm, sm) } else { (sm, gm) };
            f.src.push(from);
            f.dst.push(to);
        }
        Op::Atom {
            space,
            d,
            addr,
            b,
            c,
            ..
        } => {
            // The old value (memory) reaches d; b and c reach memory.
            let node = mem(*space, addr);
            f.src.push(node);
            if let Some(d) = d {
                f.dst(*d);
            }
            for s in std::iter::once(b).chain(c) {
                if let Src::Reg(r) = s {
                    f.src2.push(Node::Reg(*r));
                }
            }
            f.dst2.push(node);
        }
        _ => {}
    }
}

/// The global buffers and shared regions a bulk copy touches: a tensor-map copy's global side
/// in the buffers the launch's tensor maps point into, a plain copy's where its address
/// points; the shared side where its shared address points (a `.shared::cluster` load's
/// offset is the same in every CTA it lands in).
fn bulk_sets(
    form: &super::decode::BulkForm,
    smem: &Addr,
    global: Option<&Addr>,
    at: At,
) -> (GlobalSet, SharedSet) {
    let g = match (form.is_tensor(), global) {
        (false, Some(a)) => at.global(a),
        _ => at.tmaps(),
    };
    (g, at.shared(Space::Shared, smem))
}

/// Why a sink matters: "X depends on a tensor-core result", or memory a tensor map is made in.
#[derive(Clone, Copy)]
enum Why {
    Depends(&'static str),
    MapMemory,
}

impl Why {
    fn text(self) -> String {
        match self {
            Why::Depends(what) => format!("{what} depends on a tensor-core result"),
            Why::MapMemory => {
                "a tensor map is made in memory that may hold tensor-core results".into()
            }
        }
    }
}

/// Calls `f` with every operand of `op` whose value changes a count or an error (the guard
/// aside), in the order the reasons are reported.
fn sinks(op: &Op, f: &mut dyn FnMut(Node, Why)) {
    fn reg(f: &mut dyn FnMut(Node, Why), s: &Src, why: &'static str) {
        if let Src::Reg(r) = s {
            f(Node::Reg(*r), Why::Depends(why));
        }
    }
    match op {
        Op::Un {
            k: super::decode::Un::CvtaToShared | super::decode::Un::CvtaToLocal,
            a,
            ..
        } => reg(f, a, "a cvta.to source"),
        Op::Bar { id, count, .. } => {
            for s in std::iter::once(id).chain(count) {
                reg(f, s, "a barrier id or thread count");
            }
        }
        Op::Mbarrier { addr, a, b, .. } => {
            let why = "an mbarrier address, count or transaction bytes";
            for s in std::iter::once(&addr.base).chain(a).chain(b) {
                reg(f, s, why);
            }
        }
        Op::Wgmma { a, b, .. } => {
            reg(f, b, "a wgmma descriptor");
            if let WgmmaSrc::Desc(s) = a {
                reg(f, s, "a wgmma descriptor");
            }
        }
        Op::Bulk {
            smem,
            global,
            tmap,
            size,
            mbar,
            cta_mask,
            ..
        } => {
            let why = "a bulk copy's address, coordinate, size or ctaMask";
            reg(f, &smem.base, why);
            for a in global.iter().chain(mbar) {
                reg(f, &a.base, why);
            }
            if let Some((a, cs)) = tmap {
                reg(f, &a.base, why);
                for c in cs {
                    reg(f, c, why);
                }
            }
            for s in size.iter().chain(cta_mask) {
                reg(f, s, why);
            }
        }
        Op::Elect { member, .. } | Op::WarpSync { member } => reg(f, member, "a membermask"),
        Op::Mapa { a, rank, .. } => {
            reg(f, a, "a mapa operand");
            reg(f, rank, "a mapa operand");
        }
        Op::TensorMapReplace { addr, value, .. } => {
            reg(f, &addr.base, "a tensormap.replace operand");
            reg(f, value, "a tensormap.replace operand");
            f(Node::Mem(Space::Shared, 0, ALL_SHARED), Why::MapMemory);
            f(Node::Mem(Space::Global, ALL_GLOBAL, 0), Why::MapMemory);
        }
        Op::TensorMapCopy { dst, src } => {
            f(Node::Mem(Space::Shared, 0, ALL_SHARED), Why::MapMemory);
            f(Node::Mem(Space::Global, ALL_GLOBAL, 0), Why::MapMemory);
            reg(f, &dst.base, "a tensormap.cp_fenceproxy address");
            reg(f, &src.base, "a tensormap.cp_fenceproxy address");
        }
        Op::Shfl { s, member, .. } => {
            let why = "a shfl lane, clamp or membermask";
            for x in [&s[1], &s[2]].into_iter().chain(member) {
                reg(f, x, why);
            }
        }
        Op::Vote {
            member: Some(m), ..
        } => reg(f, m, "a membermask"),
        Op::Ld { addr: a, .. }
        | Op::St { addr: a, .. }
        | Op::Ldmatrix { addr: a, .. }
        | Op::Stmatrix { addr: a, .. }
        | Op::Atom { addr: a, .. } => reg(f, &a.base, "an address"),
        Op::CpAsync {
            dst,
            src,
            src_size,
            ignore,
            ..
        } => {
            let why = "a cp.async address, src-size or ignore-src";
            reg(f, &dst.base, why);
            reg(f, &src.base, why);
            for s in src_size.iter().chain(ignore.as_ref().map(|i| &i.0)) {
                reg(f, s, why);
            }
        }
        _ => {}
    }
}

/// Per-register and per-place marks: tainted (forward) or needed (backward); global memory
/// per buffer ([`GlobalSet`]).
struct Marks {
    reg: Vec<bool>,
    shared: SharedSet,
    local: bool,
    global: GlobalSet,
    changed: bool,
}

impl Marks {
    fn new(nregs: u32) -> Self {
        Self {
            reg: vec![false; nregs as usize],
            shared: 0,
            local: false,
            global: 0,
            changed: true,
        }
    }
    fn get(&self, n: Node) -> bool {
        match n {
            Node::Reg(r) => self.reg.get(r as usize).copied().unwrap_or(false),
            Node::Mem(space, g, sh) => places(space).iter().any(|p| match p {
                Place::Global => self.global & g != 0,
                Place::Shared => self.shared & sh != 0,
                Place::Local => self.local,
            }),
        }
    }
    fn set(&mut self, n: Node) {
        match n {
            Node::Reg(r) => {
                if let Some(t) = self.reg.get_mut(r as usize)
                    && !*t
                {
                    *t = true;
                    self.changed = true;
                }
            }
            Node::Mem(space, g, sh) => {
                for p in places(space) {
                    let changed = match p {
                        Place::Global => self.global | g != self.global,
                        Place::Shared => self.shared | sh != self.shared,
                        Place::Local => !self.local,
                    };
                    if changed {
                        match p {
                            Place::Global => self.global |= g,
                            Place::Shared => self.shared |= sh,
                            Place::Local => self.local = true,
                        }
                        self.changed = true;
                    }
                }
            }
        }
    }
}

/// One flow of [`Flows`]: nodes `src` (a range of [`Flows::nodes`]) reach nodes `dst`;
/// `seed`: the targets are tensor-core results; `konst`: the global buffers an `ld.param`'s
/// bytes point into ([`provenance`]).
struct FlowItem {
    src: std::ops::Range<usize>,
    dst: std::ops::Range<usize>,
    seed: bool,
    konst: GlobalSet,
    /// The shared regions the instruction names ([`Program::shared_refs`]): its targets may
    /// point into them ([`provenance`]).
    kshared: SharedSet,
}

/// Every instruction's [`flow_of`], made once and kept flat, for the fixed points (each round
/// reads these instead of matching every instruction again).
struct Flows {
    nodes: Vec<Node>,
    items: Vec<FlowItem>,
}

impl Flows {
    /// The flows of `prog` with accesses placed by `place` (`None`: nowhere known); with
    /// `params` (the launch's parameter buffer), an `ld.param` is a flow from nothing whose
    /// `konst` is where its bytes point ([`provenance`]), else it is one from parameter memory
    /// (no place).
    fn of(prog: &Program, place: Option<&Placement>, params: Option<&[u8]>) -> Self {
        let mut out = Flows {
            nodes: Vec::new(),
            items: Vec::with_capacity(prog.insts.len()),
        };
        let mut f = Flow::default();
        let named = named_regions(prog);
        for (i, inst) in prog.insts.iter().enumerate() {
            let kshared = named[i];
            if let (
                Some(params),
                Op::Ld {
                    space: Space::Param,
                    ty,
                    d,
                    addr,
                },
            ) = (params, &inst.op)
            {
                let konst = match addr.base {
                    Src::Imm(b) => {
                        let lo = b.wrapping_add(addr.offset as u64);
                        param_words(params, lo, u64::from(ty.bytes()) * d.len() as u64)
                    }
                    Src::Reg(_) => param_words(params, 0, params.len() as u64),
                };
                let at = out.nodes.len();
                out.nodes.extend(d.iter().flatten().map(|r| Node::Reg(*r)));
                out.items.push(FlowItem {
                    src: at..at,
                    dst: at..out.nodes.len(),
                    seed: false,
                    konst,
                    kshared,
                });
                continue;
            }
            flow_of(&inst.op, At { place, inst: i }, &mut f);
            out.push(&f.src, &f.dst, f.seed, kshared);
            out.push(&f.src2, &f.dst2, false, kshared);
        }
        out
    }

    fn push(&mut self, src: &[Node], dst: &[Node], seed: bool, kshared: SharedSet) {
        if dst.is_empty() {
            return;
        }
        let a = self.nodes.len();
        self.nodes.extend_from_slice(src);
        let b = self.nodes.len();
        self.nodes.extend_from_slice(dst);
        self.items.push(FlowItem {
            src: a..b,
            dst: b..self.nodes.len(),
            seed,
            konst: 0,
            kshared,
        });
    }
}

/// The buffers of the aligned 8-byte words inside bytes `lo..lo + n` of `params`.
fn param_words(params: &[u8], lo: u64, n: u64) -> GlobalSet {
    let hi = lo.saturating_add(n).min(params.len() as u64);
    let mut g = 0;
    let mut at = lo.next_multiple_of(8);
    while at + 8 <= hi {
        let i = at as usize;
        let mut w = [0u8; 8];
        w.copy_from_slice(&params[i..i + 8]);
        g |= buffer_of(u64::from_le_bytes(w));
        at += 8;
    }
    g
}

/// Runs the pass over `prog` ([`Proof`]).
pub fn prove(prog: &Program) -> Proof {
    prove_placed(prog, None)
}

/// [`prove`] for a launch whose parameter buffer is `params`, with accesses placed as
/// [`plan`] places them (global buffers, shared regions): it holds exactly when the plan
/// computes no tensor-core instruction.
pub fn prove_for(prog: &Program, params: &[u8]) -> Proof {
    prove_placed(prog, Some(&provenance(prog, params)))
}

fn prove_placed(prog: &Program, place: Option<&Placement>) -> Proof {
    let seeds = prog
        .insts
        .iter()
        .any(|i| matches!(i.op, Op::Mma { .. } | Op::Wgmma { .. }));
    if !seeds {
        return Proof::NoTensorCore;
    }
    let mut st = Marks::new(prog.nregs);
    let fl = Flows::of(prog, place, None);
    // Each round only adds taint; at most (registers + places) rounds change anything.
    while st.changed {
        st.changed = false;
        for it in &fl.items {
            if it.seed || fl.nodes[it.src.clone()].iter().any(|n| st.get(*n)) {
                for n in &fl.nodes[it.dst.clone()] {
                    st.set(*n);
                }
            }
        }
    }
    for inst in &prog.insts {
        if let Some((r, _)) = inst.guard
            && st.get(Node::Reg(r))
        {
            return Proof::Fails(format!(
                "line {}: its guard depends on a tensor-core result",
                inst.line
            ));
        }
        let mut why = None;
        sinks(&inst.op, &mut |n, w| {
            if why.is_none() && st.get(n) {
                why = Some(w);
            }
        });
        if let Some(w) = why {
            return Proof::Fails(format!("line {}: {}", inst.line, w.text()));
        }
    }
    Proof::Holds
}

/// Which tensor-core instructions a counts-only run computes ([`plan`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// By instruction index (`Program::insts`): true for an `mma`/`wgmma` whose result may
    /// reach a sink (compute it), false for every other instruction.
    pub compute: Vec<bool>,
    /// By instruction index: the global buffers the plan assumed the instruction's global
    /// accesses stay in ([`GlobalSet`]; [`ALL_GLOBAL`] where it assumed nothing). A counts-only
    /// run checks every access against it and is made again with values where one strays
    /// (`engine::run_counts_planned`).
    pub global: Vec<GlobalSet>,
    /// By instruction index: the shared-memory regions ([`SharedSet`] of [`Plan::regions`])
    /// the plan assumed the instruction's `.shared` accesses stay in ([`ALL_SHARED`] where it
    /// assumed nothing); checked like [`Plan::global`].
    pub shared: Vec<SharedSet>,
    /// The program's shared-memory regions ([`Regions`]).
    pub regions: Regions,
    /// `mma`/`wgmma` instructions in the program (static count).
    pub tensor_core: usize,
    /// Of those, how many are computed.
    pub computed: usize,
    /// By instruction index: what a counts-only run does with the instruction's lanes
    /// ([`Lanes`]; the tensor cores are in [`Plan::compute`] and are [`Lanes::Exact`] here).
    pub lanes: Vec<Lanes>,
    /// How many instructions are [`Lanes::Skip`] (static count).
    pub alu_skipped: usize,
}

/// What a counts-only run does with one instruction's lanes ([`Plan::lanes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lanes {
    /// Computed, from values that are the kernel's (every register a sink needs is computed
    /// from registers and memory that are needed in turn): as in a run with values.
    Exact,
    /// A pure ALU instruction ([`pure_alu`]) none of whose destination registers is needed:
    /// counted as always, its destinations left as they were instead of computed.
    Skip,
    /// An `ld`, `ldmatrix`, `shfl` or `vote` none of whose destination registers is needed:
    /// computed, but from registers or memory that may hold stale values (what a skipped
    /// instruction left), so whether it changed a register is not the run with values'.
    Inexact,
}

impl Plan {
    /// True when a counts-only run skips at least one instruction's values: a tensor-core
    /// instruction ([`Plan::skips_tensor_core`]) or an ALU one ([`Plan::lanes`]).
    pub fn skips_any(&self) -> bool {
        self.skips_tensor_core() || self.alu_skipped > 0
    }

    /// True when a counts-only run skips at least one tensor-core instruction.
    pub fn skips_tensor_core(&self) -> bool {
        self.computed < self.tensor_core
    }
}

/// Whether `op` is a pure ALU instruction: its only effect is writing its destination
/// registers (all of them in its `flow_of` targets), from its source operands alone, and its
/// execution cannot fail (engine/alu.rs: `exec_move`, `exec_arith`, `exec_pred`, `exec_cvt`
/// return no error for these). `cvta.to.shared`/`cvta.to.local` are not: they fail on a source
/// outside the window (their source is a sink, and the check is their computation).
pub fn pure_alu(op: &Op) -> bool {
    use super::decode::Un;
    match op {
        Op::Un { k, .. } => !matches!(k, Un::CvtaToShared | Un::CvtaToLocal),
        Op::Mov { .. }
        | Op::Pack { .. }
        | Op::Unpack { .. }
        | Op::Bin { .. }
        | Op::Tern { .. }
        | Op::Bfi { .. }
        | Op::Lop3 { .. }
        | Op::Setp { .. }
        | Op::PredLogic { .. }
        | Op::Selp { .. }
        | Op::Cvt { .. }
        | Op::CvtPack { .. } => true,
        _ => false,
    }
}

/// By instruction index, the shared regions the instruction names ([`Program::shared_refs`]).
fn named_regions(prog: &Program) -> Vec<SharedSet> {
    let regions = Regions::of(prog);
    let mut named = vec![0 as SharedSet; prog.insts.len()];
    for &(i, off) in &prog.shared_refs {
        if let Some(r) = named.get_mut(i as usize) {
            *r |= 1 << regions.bit(u64::from(off));
        }
    }
    named
}

/// Where each register's value may point (a flow-insensitive fixed point), as a [`Place`]:
/// into which global buffers (a parameter loaded with `ld.param` points where the pointers
/// among its bytes of `params`, the launch's parameter buffer, point) and which shared regions
/// (an instruction naming a `.shared` variable makes its targets point into its region); a
/// value computed from registers, where they point; a value loaded from memory or made by a
/// tensor core, anywhere (bit 63 of each set). The tensor maps' buffers are the pointers among
/// the bytes of every 128-byte parameter (a `__grid_constant__ CUtensorMap`).
fn provenance(prog: &Program, params: &[u8]) -> Placement {
    let fl = Flows::of(prog, None, Some(params));
    let n = prog.nregs as usize;
    let (mut global, mut shared) = (vec![0 as GlobalSet; n], vec![0 as SharedSet; n]);
    let mut changed = true;
    while changed {
        changed = false;
        for it in &fl.items {
            let seed = if it.seed { 1 << 63 } else { 0 };
            let (mut g, mut s) = (it.konst | seed, it.kshared | seed);
            for n in &fl.nodes[it.src.clone()] {
                match n {
                    Node::Reg(r) => {
                        g |= global.get(*r as usize).copied().unwrap_or(0);
                        s |= shared.get(*r as usize).copied().unwrap_or(0);
                    }
                    Node::Mem(..) => (g, s) = (g | 1 << 63, s | 1 << 63),
                }
            }
            for n in &fl.nodes[it.dst.clone()] {
                if let Node::Reg(r) = n
                    && let (Some(pg), Some(ps)) =
                        (global.get_mut(*r as usize), shared.get_mut(*r as usize))
                    && (*pg | g != *pg || *ps | s != *ps)
                {
                    *pg |= g;
                    *ps |= s;
                    changed = true;
                }
            }
        }
    }
    let refs = named_regions(prog);
    let tmaps = prog
        .params
        .iter()
        .filter(|p| p.size == 128)
        .fold(0, |acc, p| {
            acc | param_words(params, u64::from(p.offset), u64::from(p.size))
        });
    Placement {
        global,
        shared,
        refs,
        tmaps: if tmaps == 0 { ALL_GLOBAL } else { tmaps },
    }
}

/// The buffers an access through `a` may touch, by `prov`: [`ALL_GLOBAL`] for an address
/// that is not a register, or whose register points nowhere known (0, or bit 63).
fn access_set(prov: &[GlobalSet], a: &Addr) -> GlobalSet {
    match a.base {
        Src::Reg(r) => match prov.get(r as usize).copied().unwrap_or(0) {
            0 => ALL_GLOBAL,
            g if g & (1 << 63) != 0 => ALL_GLOBAL,
            g => g,
        },
        Src::Imm(_) => ALL_GLOBAL,
    }
}

/// The per-instruction form of the proof (issue #31): which `mma`/`wgmma` results a count may
/// depend on, for a launch whose parameter buffer is `params`. A backward pass over the same
/// value flow as [`prove`]: every sink operand (guards, addresses, ..., the list in this
/// module's doc) is *needed*; a needed target makes every source of its instruction needed.
/// Memory is followed per state space and, in global memory, per buffer: an `ld`, `st`,
/// `atom` or `cp.async` whose address is computed from a pointer parameter is taken to stay in
/// that parameter's buffer (`provenance`; [`Plan::global`] records it, and a counts-only run
/// checks it on every access); in shared memory per region, an `ld`, `st`, `atom`, `cp.async` or
/// bulk copy whose `.shared` address is computed from a variable's address staying in that
/// variable's region ([`Plan::shared`], checked the same way). An `mma`/`wgmma` is computed when
/// one of its D registers is needed: when [`prove`] holds none is; when it fails at a guard, the
/// instructions feeding that guard are, and the others (an attention kernel's P·V products, whose
/// results reach only stores to the output) are not.
pub fn plan(prog: &Program, params: &[u8]) -> Plan {
    let place = provenance(prog, params);
    let mut need = Marks::new(prog.nregs);
    for inst in &prog.insts {
        if let Some((r, _)) = inst.guard {
            need.set(Node::Reg(r));
        }
        sinks(&inst.op, &mut |n, _| need.set(n));
    }
    let fl = Flows::of(prog, Some(&place), None);
    // Backward: in reverse order a use's need reaches the definitions above it in one round.
    while need.changed {
        need.changed = false;
        for it in fl.items.iter().rev() {
            if fl.nodes[it.dst.clone()].iter().any(|n| need.get(*n)) {
                for n in &fl.nodes[it.src.clone()] {
                    need.set(*n);
                }
            }
        }
    }
    let mut f = Flow::default();
    let mut p = Plan {
        compute: vec![false; prog.insts.len()],
        global: vec![ALL_GLOBAL; prog.insts.len()],
        shared: vec![ALL_SHARED; prog.insts.len()],
        regions: Regions::of(prog),
        tensor_core: 0,
        computed: 0,
        lanes: vec![Lanes::Exact; prog.insts.len()],
        alu_skipped: 0,
    };
    for (i, inst) in prog.insts.iter().enumerate() {
        let at = At {
            place: Some(&place),
            inst: i,
        };
        // Where the plan placed the instruction's accesses, which the run checks.
        (p.global[i], p.shared[i]) = placed(&inst.op, at);
        if p.regions.starts.len() == 1 {
            // One region: every access is in it, nothing to check.
            p.shared[i] = ALL_SHARED;
        }
        // The instructions whose only effect besides counts is writing registers, and whose
        // change of a register is value-dependent (`mma` is computed only for a needed D, a
        // `wgmma` always counts as a change; `ld.param` reads the launch's exact bytes).
        let pure = pure_alu(&inst.op);
        let reads = match &inst.op {
            Op::Ld { space, .. } => *space != Space::Param,
            Op::Ldmatrix { .. } | Op::Shfl { .. } | Op::Vote { .. } => true,
            _ => false,
        };
        if pure || reads {
            flow_of(&inst.op, at, &mut f);
            // An instruction that writes nothing (every `Unpack` part `_`) has nothing to skip.
            // One with a needed destination has every source needed: its values are exact.
            if !f.dst.is_empty() && !f.dst.iter().any(|n| need.get(*n)) {
                p.lanes[i] = if pure { Lanes::Skip } else { Lanes::Inexact };
                p.alu_skipped += usize::from(pure);
            }
            continue;
        }
        if !matches!(inst.op, Op::Mma { .. } | Op::Wgmma { .. }) {
            continue;
        }
        p.tensor_core += 1;
        flow_of(&inst.op, at, &mut f);
        if f.dst.iter().any(|n| need.get(*n)) {
            p.compute[i] = true;
            p.computed += 1;
        }
    }
    p
}

/// The global buffers and shared regions the plan assumes `op`'s accesses stay in, which a
/// counts-only run checks ([`Plan::global`], [`Plan::shared`]): those of `ld`, `st`, `atom`,
/// `cp.async` and bulk copies; every buffer and region for the rest (nothing to check).
fn placed(op: &Op, at: At) -> (GlobalSet, SharedSet) {
    match op {
        Op::Ld { space, addr, .. } | Op::St { space, addr, .. } | Op::Atom { space, addr, .. } => {
            let g = match space {
                Space::Global | Space::Generic => at.global(addr),
                _ => ALL_GLOBAL,
            };
            (g, at.shared(*space, addr))
        }
        Op::CpAsync { src, dst, .. } => (at.global(src), at.shared(Space::Shared, dst)),
        Op::Bulk {
            form, smem, global, ..
        } => bulk_sets(form, smem, global.as_ref(), at),
        _ => (ALL_GLOBAL, ALL_SHARED),
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

    /// A kernel of two pointer parameters `in` and `out` (buffers 1 and 2 of a launch) and
    /// two mma: the first's D decides a branch, the second's is stored through `store_addr`
    /// (`%rd2` is `out`, `%rd1` is `in`), then `tail` runs.
    fn two_mma(store_addr: &str, tail: &str) -> String {
        format!(
            ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 k_in, .param .u64 k_out)\n{{\n.reg .b32 %r<40>;\n.reg .f32 %f<40>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n\
ld.param.u64 %rd1, [k_in];\nld.param.u64 %rd2, [k_out];\n\
mov.b32 %r0, 0x3C003C00;\nmov.b32 %r1, 0x3C003C00;\nmov.b32 %r2, 0x3C003C00;\nmov.b32 %r3, 0x3C003C00;\nmov.b32 %r4, 0x3C003C00;\nmov.b32 %r5, 0x3C003C00;\n\
mov.f32 %f4, 0f00000000;\nmov.f32 %f5, 0f00000000;\nmov.f32 %f6, 0f00000000;\nmov.f32 %f7, 0f00000000;\n\
mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{%f0,%f1,%f2,%f3}}, {{%r0,%r1,%r2,%r3}}, {{%r4,%r5}}, {{%f4,%f5,%f6,%f7}};\n\
setp.gt.f32 %p1, %f0, 0f41000000;\n@%p1 bra A;\nmov.u32 %r20, 1;\nA:\n\
mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{%f8,%f9,%f10,%f11}}, {{%r0,%r1,%r2,%r3}}, {{%r4,%r5}}, {{%f4,%f5,%f6,%f7}};\n\
{store_addr}\nst.global.f32 [%rd3], %f8;\n{tail}\nret;\n}}\n"
        )
    }

    /// The parameter buffer of a launch of [`two_mma`]: `in` and `out` point to buffers 1 and 2.
    fn two_params() -> Vec<u8> {
        let mut p = super::super::decode::buffer_base(0).to_le_bytes().to_vec();
        p.extend(super::super::decode::buffer_base(1).to_le_bytes());
        p
    }

    fn load(src: &str) -> Program {
        super::super::report::load(src, None).unwrap()
    }

    fn mma_plan(p: &Plan, prog: &Program) -> Vec<bool> {
        prog.insts
            .iter()
            .zip(&p.compute)
            .filter(|(i, _)| matches!(i.op, Op::Mma { .. }))
            .map(|(_, c)| *c)
            .collect()
    }

    /// The branch's mma is computed; the one whose D only reaches the output buffer is not,
    /// though the proof fails (a guard depends on a tensor-core result).
    #[test]
    fn the_plan_computes_what_a_guard_needs_and_skips_what_only_reaches_the_output() {
        let prog = load(&two_mma("add.s64 %rd3, %rd2, 64;", ""));
        assert!(matches!(prove(&prog), Proof::Fails(w) if w.contains("guard")));
        let p = plan(&prog, &two_params());
        assert_eq!(mma_plan(&p, &prog), [true, false]);
        assert_eq!((p.tensor_core, p.computed), (2, 1));
        // The store's address comes from `out`: buffer 2 only.
        let st = prog
            .insts
            .iter()
            .position(|i| matches!(i.op, Op::St { .. }))
            .unwrap();
        assert_eq!(p.global[st], 0b10);
        // Without the launch's pointers no buffer is known and global memory is one place;
        // this kernel loads nothing from it, so the stored values are still unneeded.
        assert_eq!(mma_plan(&plan(&prog, &[]), &prog), [true, false]);
    }

    /// Read back from the output and used as a guard: the stored D is needed.
    #[test]
    fn a_result_read_back_from_its_buffer_into_a_guard_is_computed() {
        let tail = "ld.global.f32 %f20, [%rd2+64];\nsetp.gt.f32 %p2, %f20, 0f41000000;\n@%p2 bra B;\nmov.u32 %r21, 1;\nB:";
        let prog = load(&two_mma("add.s64 %rd3, %rd2, 64;", tail));
        assert_eq!(mma_plan(&plan(&prog, &two_params()), &prog), [true, true]);
        // Read from the other buffer instead: the stored D is not needed.
        let tail = tail.replace("[%rd2+64]", "[%rd1+64]");
        let prog = load(&two_mma("add.s64 %rd3, %rd2, 64;", &tail));
        assert_eq!(mma_plan(&plan(&prog, &two_params()), &prog), [true, false]);
    }

    fn launch() -> super::super::engine::Launch {
        super::super::engine::Launch {
            grid: [1, 1, 1],
            block: [32, 1, 1],
            cta: [0, 0, 0],
            args: vec![],
            tensor_maps: vec![],
            dynamic_smem: None,
            max_instructions: 10_000,
            cluster: None,
        }
    }

    /// A store whose address comes from `out` but lands in `in` (out - 2^40), read back from
    /// `in` into a branch: the plan placed the store in `out` and skipped its mma; the run
    /// sees the access leave `out` and counts again with values, so the counts are those of
    /// the exact run (with the skip kept, the branch would go the other way: 16.0 > 8.0 is
    /// false for a D left at 0).
    #[test]
    fn an_access_that_leaves_its_planned_buffer_makes_the_run_exact() {
        use super::super::engine;
        let tail = "ld.global.f32 %f20, [%rd1+64];\nsetp.gt.f32 %p2, %f20, 0f41000000;\n@%p2 bra B;\nmov.u32 %r21, 1;\nmov.u32 %r22, 1;\nmov.u32 %r23, 1;\nB:";
        let stray = "add.s64 %rd3, %rd2, -1099511627712;"; // out - 2^40 + 64 = in + 64
        let prog = load(&two_mma(stray, tail));
        let p = plan(&prog, &two_params());
        assert_eq!(mma_plan(&p, &prog), [true, false]);
        let l = launch();
        let exact = engine::run(&prog, &l, None).unwrap();
        let counts = engine::run_counts(&prog, &l).unwrap();
        assert_eq!(exact.instructions, counts.instructions);
        assert_eq!(exact.stats, counts.stats);
        // The same kernel storing inside `out`: the skip is kept and the counts still agree.
        let ok = load(&two_mma(
            "add.s64 %rd3, %rd2, 64;",
            &tail.replace("%rd1", "%rd2"),
        ));
        assert_eq!(mma_plan(&plan(&ok, &two_params()), &ok), [true, true]);
    }

    /// A load whose address comes from `in` but lands in `out` (in + 2^40 + 64), where the
    /// skipped mma's D was stored: the plan placed the load in `in`, and the run sees it leave
    /// `in` and counts again with values (before loads were checked, the counts-only run read
    /// the 0 the skipped mma left and took the other branch).
    #[test]
    fn a_load_that_leaves_its_planned_buffer_makes_the_run_exact() {
        use super::super::engine;
        let tail = "add.s64 %rd4, %rd1, 1099511627840;
ld.global.f32 %f20, [%rd4];
setp.gt.f32 %p2, %f20, 0f41000000;
@%p2 bra B;
mov.u32 %r21, 1;
mov.u32 %r22, 1;
B:";
        let prog = load(&two_mma("add.s64 %rd3, %rd2, 64;", tail));
        let p = plan(&prog, &two_params());
        assert_eq!(mma_plan(&p, &prog), [true, false]);
        let ld = prog
            .insts
            .iter()
            .position(|i| {
                matches!(
                    i.op,
                    Op::Ld {
                        space: Space::Global,
                        ..
                    }
                )
            })
            .unwrap();
        assert_eq!(p.global[ld], 0b01);
        let l = launch();
        let exact = engine::run(&prog, &l, None).unwrap();
        let counts = engine::run_counts(&prog, &l).unwrap();
        assert_eq!(exact.instructions, counts.instructions);
        assert_eq!(exact.stats, counts.stats);
    }

    /// One mma (D = 16.0: A and B all 1.0, C 0) stored to `s_out` (bytes 0..256), then `tail`;
    /// `%r10` holds `s_out`'s address, `%r11` `s_flag`'s (bytes 256..272).
    fn shared_mma(tail: &str) -> String {
        format!(
            ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<40>;\n.reg .f32 %f<40>;\n.reg .pred %p<4>;\n.shared .align 16 .b8 s_out[256];\n.shared .align 16 .b8 s_flag[16];\n\
mov.b32 %r0, 0x3C003C00;\nmov.b32 %r1, 0x3C003C00;\nmov.b32 %r2, 0x3C003C00;\nmov.b32 %r3, 0x3C003C00;\nmov.b32 %r4, 0x3C003C00;\nmov.b32 %r5, 0x3C003C00;\n\
mov.f32 %f4, 0f00000000;\nmov.f32 %f5, 0f00000000;\nmov.f32 %f6, 0f00000000;\nmov.f32 %f7, 0f00000000;\n\
mov.u32 %r10, s_out;\nmov.u32 %r11, s_flag;\n\
mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{%f8,%f9,%f10,%f11}}, {{%r0,%r1,%r2,%r3}}, {{%r4,%r5}}, {{%f4,%f5,%f6,%f7}};\n\
st.shared.f32 [%r10+64], %f8;\n{tail}\nret;\n}}\n"
        )
    }

    /// Shared memory is cut at every variable: `s_out` is region 0, `s_flag` region 1, and a
    /// range spans the regions it touches (worked by hand from the layout above).
    #[test]
    fn regions_cut_shared_memory_at_every_variable() {
        let prog = load(&shared_mma(""));
        let r = Regions::of(&prog);
        assert_eq!(r.span(0, 256), 0b01);
        assert_eq!(r.span(64, 68), 0b01);
        assert_eq!(r.span(256, 260), 0b10);
        assert_eq!(r.span(252, 260), 0b11);
        assert_eq!(r.span(300, 300), 0);
        assert_eq!(r.span(1 << 20, (1 << 20) + 4), 0b10);
    }

    /// D stored to `s_out`, the guard read from `s_flag`: with shared memory one place the mma
    /// was computed; cut into regions it is skipped, and the load is placed in `s_flag`.
    #[test]
    fn a_result_in_one_shared_variable_does_not_reach_a_guard_read_from_another() {
        let tail = "ld.shared.f32 %f20, [%r11];\nsetp.gt.f32 %p2, %f20, 0f41000000;\n@%p2 bra B;\nmov.u32 %r21, 1;\nB:";
        let prog = load(&shared_mma(tail));
        let p = plan(&prog, &[]);
        assert_eq!(mma_plan(&p, &prog), [false]);
        assert_eq!(prove_for(&prog, &[]), Proof::Holds);
        let at = |want: fn(&Op) -> bool| prog.insts.iter().position(|i| want(&i.op)).unwrap();
        assert_eq!(p.shared[at(|o| matches!(o, Op::Ld { .. }))], 0b10);
        assert_eq!(p.shared[at(|o| matches!(o, Op::St { .. }))], 0b01);
        // Read back from `s_out` instead: computed.
        let back = load(&shared_mma(&tail.replace("[%r11]", "[%r10+64]")));
        assert_eq!(mma_plan(&plan(&back, &[]), &back), [true]);
    }

    /// The guard's load is placed in `s_flag` (its address is computed from `s_flag`) but lands
    /// on the D in `s_out` (256 - 192 = 64): the run sees it leave `s_flag` and counts again
    /// with values, so the counts are the exact run's (with the skip kept, the load would read
    /// the 0 the skipped mma left, not 16.0, and take the other branch).
    #[test]
    fn a_shared_access_that_leaves_its_planned_region_makes_the_run_exact() {
        use super::super::engine;
        let tail = "add.s32 %r12, %r11, -192;\nld.shared.f32 %f20, [%r12];\nsetp.gt.f32 %p2, %f20, 0f41000000;\n@%p2 bra B;\nmov.u32 %r21, 1;\nmov.u32 %r22, 1;\nB:";
        let prog = load(&shared_mma(tail));
        assert_eq!(mma_plan(&plan(&prog, &[]), &prog), [false]);
        let l = launch();
        let exact = engine::run(&prog, &l, None).unwrap();
        let counts = engine::run_counts(&prog, &l).unwrap();
        assert_eq!(exact.instructions, counts.instructions);
        assert_eq!(exact.stats, counts.stats);
    }

    /// The plan's ALU skips of `prog` as (line, skipped) for the pure ALU instructions.
    fn alu_plan(p: &Plan, prog: &Program) -> Vec<(u32, bool)> {
        prog.insts
            .iter()
            .zip(&p.lanes)
            .filter(|(i, _)| pure_alu(&i.op))
            .map(|(i, s)| (i.line, *s == Lanes::Skip))
            .collect()
    }

    /// ALU results that reach an address, a guard or a checked operand are computed; the ones
    /// that reach only a store's value (or nothing) are skipped, and the counts are those of
    /// the exact run.
    #[test]
    fn alu_results_that_reach_a_sink_are_computed_and_the_others_skipped() {
        // Lines (the header is 10 lines, the body starts at line 11).
        let body = "mov.u32 %r0, %tid.x;\n\
            shl.b32 %r1, %r0, 2;\n\
            mov.u32 %r2, s;\n\
            add.u32 %r3, %r2, %r1;\n\
            mul.lo.u32 %r4, %r0, 3;\n\
            st.shared.u32 [%r3], %r4;\n\
            setp.lt.u32 %p1, %r0, 16;\n\
            ex2.approx.f32 %f1, %f0;\n\
            cvt.rn.f16x2.f32 %r5, %f1, %f1;\n\
            @%p1 st.shared.u32 [%r3+128], %r5;\n\
            cvta.shared.u64 %rd1, %rd2;\n\
            cvta.to.shared.u64 %rd3, %rd1;\n\
            setp.gt.f32 %p2, %f1, 0f00000000;\n\
            selp.u32 %r6, 1, 0, %p2;";
        let prog = prog(body);
        let p = plan(&prog, &[]);
        assert_eq!(
            alu_plan(&p, &prog),
            [
                (11, false), // %tid.x: an address and a guard
                (12, false), // the address
                (13, false), // the address
                (14, false), // the address
                (15, true),  // a stored value only
                (17, false), // a guard
                (18, true),  // stored value only
                (19, true),  // stored value only
                (21, false), // a cvta.to source (line 22's cvta.to is no pure ALU instruction:
                // it checks its source, and is never skipped)
                (23, true), // nothing reads it
                (24, true), // nothing reads it
            ]
        );
        assert_eq!(p.alu_skipped, 5);
        assert!(p.skips_any() && !p.skips_tensor_core());
        let l = super::super::engine::Launch {
            block: [64, 1, 1],
            ..launch()
        };
        let exact = super::super::engine::run(&prog, &l, None).unwrap();
        let counts = super::super::engine::run_counts(&prog, &l).unwrap();
        assert_eq!(exact, counts);
        // A value read back from shared memory into a guard: what was stored is computed.
        let prog2 = super::super::report::load(
            ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<8>;\n.reg .pred %p<4>;\n.shared .align 16 .b8 s[256];\nmov.u32 %r0, %tid.x;\nmul.lo.u32 %r4, %r0, 3;\nmov.u32 %r2, s;\nst.shared.u32 [%r2], %r4;\nld.shared.u32 %r5, [%r2];\nsetp.eq.u32 %p1, %r5, 0;\n@%p1 bra D;\nadd.u32 %r6, %r5, 1;\nD:\nret;\n}\n",
            None,
        )
        .unwrap();
        let p2 = plan(&prog2, &[]);
        assert_eq!(
            alu_plan(&p2, &prog2),
            [
                (9, false),
                (10, false),
                (11, false),
                (14, false),
                (16, true)
            ]
        );
    }

    /// A spin-wait whose iterations hold skipped instructions: warp 0 waits on a shared flag
    /// that warp 1 sets; the loop body copies `%r5` into `%r6`, then moves the same 7 into
    /// `%r5`, results nothing needs. With values the second iteration changes `%r6` (0 to 7)
    /// and the warp yields as a spin only after the third; a counts-only run cannot know that
    /// (it skipped both moves), so it is made again with values and counts the same.
    #[test]
    fn a_spin_loop_with_skipped_moves_counts_as_the_exact_run() {
        use super::super::engine;
        let src = ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<10>;\n.reg .pred %p<4>;\n.shared .align 16 .b8 s[256];\n\
mov.u32 %r0, %tid.x;\nshr.u32 %r1, %r0, 5;\nsetp.eq.u32 %p0, %r1, 0;\nmov.u32 %r9, s;\n@%p0 bra SPIN;\n\
mov.u32 %r3, 1;\nst.shared.u32 [%r9], %r3;\nbra.uni DONE;\n\
SPIN:\nld.volatile.shared.u32 %r2, [%r9];\nmov.u32 %r6, %r5;\nmov.u32 %r5, 7;\nsetp.eq.u32 %p1, %r2, 0;\n@%p1 bra SPIN;\n\
DONE:\nret;\n}\n";
        let prog = super::super::report::load(src, None).unwrap();
        let p = plan(&prog, &[]);
        // Lines 19 and 20 are the two moves; the flag stored at line 15 reaches the loop's
        // guard through shared memory, so its `mov` (line 14) is computed.
        assert_eq!(
            alu_plan(&p, &prog),
            [
                (9, false),
                (10, false),
                (11, false),
                (12, false),
                (14, false),
                (19, true),
                (20, true),
                (21, false)
            ]
        );
        let l = engine::Launch {
            block: [64, 1, 1],
            ..launch()
        };
        let exact = engine::run(&prog, &l, None).unwrap();
        let counts = engine::run_counts(&prog, &l).unwrap();
        assert_eq!(exact, counts);
        // The counts-only machine itself gives up at the second iteration's back edge (where,
        // without the moves' values, it would have yielded one iteration early).
        let mut m = engine::Machine::counts_only(&prog, &l, &p).unwrap();
        assert!(!m.values);
        assert!(m.run(None).is_err());
        assert!(m.needs_values.get());
        // Warp 0 went three times round the loop before it yielded, then once more after warp
        // 1's store: 4 executions of the back edge.
        let back = prog
            .insts
            .iter()
            .rposition(|i| matches!(i.op, Op::Bra { .. }))
            .unwrap();
        assert_eq!(exact.stats[back].executions, 4);
    }

    /// A load whose destination no sink needs, in a spin-wait: warp 0 loads shared `x`, stores
    /// 7 there once (a `mov` the plan skips: shared memory reaches no sink here, the flag is in
    /// global memory), then spins on a global flag warp 1 sets. With values the second
    /// iteration's load changes its register (0 to 7) and the warp yields only after the
    /// third; the counts-only run loads 0 (its `mov` left 0 to store), so the load's change is
    /// not known to it ([`Lanes::Inexact`]): the run is made again with values.
    #[test]
    fn a_spin_loop_with_an_inexact_load_counts_as_the_exact_run() {
        use super::super::engine;
        let src = ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 f)\n{\n.reg .b32 %r<10>;\n.reg .b64 %rd<4>;\n.reg .pred %p<4>;\n.shared .align 16 .b8 s[256];\n\
ld.param.u64 %rd1, [f];\nmov.u32 %r0, %tid.x;\nshr.u32 %r1, %r0, 5;\nsetp.eq.u32 %p0, %r1, 0;\nmov.u32 %r9, s;\nmov.u32 %r7, 7;\nsetp.eq.u32 %p2, %r1, 0;\n@%p0 bra SPIN;\n\
mov.u32 %r3, 1;\nst.global.u32 [%rd1], %r3;\nbra.uni DONE;\n\
SPIN:\nld.shared.u32 %r5, [%r9];\n@%p2 st.shared.u32 [%r9], %r7;\nsetp.ne.u32 %p2, %r0, %r0;\nld.volatile.global.u32 %r2, [%rd1];\nsetp.eq.u32 %p1, %r2, 0;\n@%p1 bra SPIN;\n\
DONE:\nret;\n}\n";
        let prog = super::super::report::load(src, None).unwrap();
        let params = super::super::decode::buffer_base(0).to_le_bytes();
        let p = plan(&prog, &params);
        let lanes = |line: u32| {
            let i = prog.insts.iter().position(|i| i.line == line).unwrap();
            p.lanes[i]
        };
        assert_eq!(lanes(15), Lanes::Skip, "mov.u32 %r7, 7");
        assert_eq!(lanes(22), Lanes::Inexact, "ld.shared.u32 %r5");
        assert_eq!(lanes(25), Lanes::Exact, "the flag's load");
        let l = engine::Launch {
            block: [64, 1, 1],
            ..launch()
        };
        let exact = engine::run(&prog, &l, None).unwrap();
        let counts = engine::run_counts(&prog, &l).unwrap();
        assert_eq!(exact, counts);
        let mut m = engine::Machine::counts_only(&prog, &l, &p).unwrap();
        assert!(!m.values);
        assert!(m.run(None).is_err());
        assert!(m.needs_values.get());
        // Three iterations before the yield, one after warp 1's store.
        let back = prog
            .insts
            .iter()
            .rposition(|i| matches!(i.op, Op::Bra { .. }))
            .unwrap();
        assert_eq!(exact.stats[back].executions, 4);
    }
}
