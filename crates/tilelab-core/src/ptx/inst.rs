//! The decoded instruction ([`Inst`], its operation [`Op`]) and the operand types it holds:
//! what [`super::decode`] produces and [`super::cfg`], the engine and the reports read. Types
//! only (PTX ISA chapter 9 for each operation's meaning).

use super::types::Ty;
use crate::sim::mma::MmaKind;
use crate::sim::tma::{ReduceOp, TmaDtype};

/// A source operand: a register index or an immediate (raw bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// Register index.
    Reg(u32),
    /// Immediate bits.
    Imm(u64),
}

/// A special register, materialized per lane when a warp starts (PTX ISA §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    /// `%tid.{x,y,z}`.
    Tid(u8),
    /// `%ntid.{x,y,z}`.
    Ntid(u8),
    /// `%ctaid.{x,y,z}`.
    Ctaid(u8),
    /// `%nctaid.{x,y,z}`.
    Nctaid(u8),
    /// `%laneid`.
    Laneid,
    /// `%warpid`.
    Warpid,
    /// `%nwarpid`.
    Nwarpid,
    /// `%lanemask_{eq,lt,le,gt,ge}` (0..5 in that order).
    Lanemask(u8),
    /// `%cluster_ctaid.{x,y,z}`: the CTA's position in its cluster (PTX ISA §10.13).
    ClusterCtaid(u8),
    /// `%cluster_nctaid.{x,y,z}`: the cluster's shape in CTAs (§10.14).
    ClusterNctaid(u8),
    /// `%clusterid.{x,y,z}`: the cluster's position in the grid (§10.11).
    Clusterid(u8),
    /// `%nclusterid.{x,y,z}`: the grid's shape in clusters (§10.12).
    Nclusterid(u8),
    /// `%cluster_ctarank`: the CTA's rank in its cluster (§10.15).
    ClusterCtarank,
    /// `%cluster_nctarank`: CTAs in the cluster (§10.16).
    ClusterNctarank,
    /// `%is_explicit_cluster` (.pred): whether the launch named a cluster (§10.17).
    IsExplicitCluster,
}

/// State spaces of memory instructions (PTX ISA §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// `.global` (also `.const` variables of the module, read-only here by convention).
    Global,
    /// `.shared` / `.shared::cta`.
    Shared,
    /// `.shared::cluster`: the executing CTA's shared memory or, through an address from
    /// `mapa`, another CTA's of the cluster (PTX ISA §5.1.4.1, distributed shared memory;
    /// [`crate::ptx::mem`]'s address form).
    Cluster,
    /// `.param` (kernel parameters).
    Param,
    /// `.local`: the thread's own frame (nvcc's `__local_depot0` stack).
    Local,
    /// No state space: a generic address (PTX ISA §6.4.1.1: global unless it falls in the
    /// shared window at [`SHARED_WINDOW`](super::decode::SHARED_WINDOW) or the local window at [`LOCAL_WINDOW`](super::decode::LOCAL_WINDOW)).
    Generic,
}

/// Comparison of `setp` (PTX ISA §9.7.1.x "setp", Table "comparison operators").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// eq
    Eq,
    /// ne
    Ne,
    /// lt (lo)
    Lt,
    /// le (ls)
    Le,
    /// gt (hi)
    Gt,
    /// ge (hs)
    Ge,
    /// equ, neu, ltu, leu, gtu, geu: true also when either is NaN.
    Unordered(u8),
    /// num: neither is NaN.
    Num,
    /// nan: either is NaN.
    Nan,
}

/// Boolean combination of a comparison with a predicate (`setp.lt.and.s32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    /// and
    And,
    /// or
    Or,
    /// xor
    Xor,
}

/// Two-operand operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin {
    /// add
    Add,
    /// sub
    Sub,
    /// mul.lo (integers), mul (floats)
    MulLo,
    /// mul.hi
    MulHi,
    /// mul.wide (result twice the source width)
    MulWide,
    /// div (integers: truncating; floats: correctly rounded)
    Div,
    /// rem
    Rem,
    /// min
    Min,
    /// max
    Max,
    /// and
    And,
    /// or
    Or,
    /// xor
    Xor,
    /// shl
    Shl,
    /// shr (arithmetic for signed types)
    Shr,
    /// copysign (d = |b| with the sign of a)
    Copysign,
}

/// One-operand operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Un {
    /// not (bitwise)
    Not,
    /// cnot (d = a == 0)
    Cnot,
    /// neg
    Neg,
    /// abs
    Abs,
    /// popc
    Popc,
    /// clz
    Clz,
    /// brev
    Brev,
    /// ex2.approx: 2^a
    Ex2,
    /// lg2.approx: log2 a
    Lg2,
    /// rcp: 1/a
    Rcp,
    /// sqrt
    Sqrt,
    /// rsqrt.approx
    Rsqrt,
    /// sin.approx
    Sin,
    /// cos.approx
    Cos,
    /// tanh.approx
    Tanh,
    /// cvta.to.shared / cvta.shared (generic ↔ shared window)
    CvtaToShared,
    /// cvta.shared: shared → generic
    CvtaFromShared,
    /// cvta.to.local: generic → local (subtracts [`LOCAL_WINDOW`](super::decode::LOCAL_WINDOW))
    CvtaToLocal,
    /// cvta.local: local → generic (adds [`LOCAL_WINDOW`](super::decode::LOCAL_WINDOW))
    CvtaFromLocal,
}

/// Three-operand operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tern {
    /// mad.lo (ints), mad/fma (floats: fused)
    MadLo,
    /// mad.hi
    MadHi,
    /// mad.wide
    MadWide,
    /// bfe d, a, pos, len
    Bfe,
    /// prmt.b32 d, a, b, selector (default mode)
    Prmt,
    /// shf.l.{wrap,clamp}: funnel shift left of (b:a) by c
    ShfL(bool),
    /// shf.r.{wrap,clamp}
    ShfR(bool),
}

/// `shfl.sync` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    /// up
    Up,
    /// down
    Down,
    /// bfly
    Bfly,
    /// idx
    Idx,
}

/// `atom`/`red` operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomOp {
    /// add
    Add,
    /// min
    Min,
    /// max
    Max,
    /// and
    And,
    /// or
    Or,
    /// xor
    Xor,
    /// exch
    Exch,
    /// cas
    Cas,
    /// inc
    Inc,
    /// dec
    Dec,
}

/// `bar.red`'s operations (PTX ISA 9.7.13.1: `.popc.u32`, `.and.pred`, `.or.pred`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarRed {
    /// `.popc.u32`: the number of threads whose predicate is true.
    Popc,
    /// `.and.pred`: whether all are.
    And,
    /// `.or.pred`: whether any is.
    Or,
}

/// The asynchronous units a warp commits groups to and waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AsyncUnit {
    /// `cp.async` (non-bulk), `cp.async.commit_group` / `wait_group`.
    CpAsync,
    /// The bulk copies (TMA): `cp.async.bulk{.tensor}` with `bulk_group` completion,
    /// `cp.async.bulk.commit_group` / `wait_group{.read}`.
    Bulk,
    /// `wgmma.mma_async`, `wgmma.commit_group` / `wait_group`.
    Wgmma,
}

impl AsyncUnit {
    /// The PTX name of the unit's wait (`cp.async.wait_group`).
    pub fn wait_name(self) -> &'static str {
        match self {
            AsyncUnit::CpAsync => "cp.async.wait_group",
            AsyncUnit::Bulk => "cp.async.bulk.wait_group",
            AsyncUnit::Wgmma => "wgmma.wait_group",
        }
    }
}

/// The mbarrier operations (PTX ISA §9.7.13.15).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbarOp {
    /// `mbarrier.init`.
    Init,
    /// `mbarrier.arrive` (`.expect_tx`).
    Arrive,
    /// `mbarrier.arrive_drop` (`.expect_tx`).
    ArriveDrop,
    /// `mbarrier.expect_tx`.
    ExpectTx,
    /// `mbarrier.complete_tx`.
    CompleteTx,
    /// `mbarrier.test_wait` (non-blocking).
    TestWait,
    /// `mbarrier.try_wait` (potentially blocking: modelled as waiting until the phase
    /// completes, a legal schedule since a try_wait may time out at any point).
    TryWait,
    /// `mbarrier.inval`.
    Inval,
    /// `cp.async.mbarrier.arrive{.noinc}` (PTX ISA 9.7.9.25.3.5): an arrive-on when the
    /// thread's prior `cp.async`s complete (at once here: they complete at issue); without
    /// `.noinc` the pending count is first raised by 1, so the count is unchanged.
    CpAsyncArrive {
        /// `.noinc`.
        noinc: bool,
    },
}

/// A memory address operand: base register (or none) plus byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addr {
    /// Base value (register or the address of a variable as an immediate).
    pub base: Src,
    /// Byte offset.
    pub offset: i64,
}

/// One decoded instruction's operation.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Does nothing (fences, `.pragma`, `nanosleep`, cache hints).
    Nop,
    /// mov / cvta.to.global / cvta.global: d = a.
    Mov {
        /// Type (width kept).
        ty: Ty,
        /// Destination.
        d: u32,
        /// Source.
        a: Src,
    },
    /// `mov.b64 d, {a, b}` and the like: packs parts, low part first.
    Pack {
        /// Bits per part.
        part_bits: u32,
        /// Destination.
        d: u32,
        /// Parts, low first.
        parts: Vec<Src>,
    },
    /// `mov.b64 {a, b}, d`: unpacks parts, low part first (`None` for `_`).
    Unpack {
        /// Bits per part.
        part_bits: u32,
        /// Destinations.
        parts: Vec<Option<u32>>,
        /// Source.
        a: Src,
    },
    /// A one-operand operation.
    Un {
        /// Which.
        k: Un,
        /// Type.
        ty: Ty,
        /// Destination.
        d: u32,
        /// Source.
        a: Src,
    },
    /// A two-operand operation.
    Bin {
        /// Which.
        k: Bin,
        /// Type of the sources.
        ty: Ty,
        /// Destination.
        d: u32,
        /// Sources.
        a: Src,
        /// Sources.
        b: Src,
    },
    /// A three-operand operation.
    Tern {
        /// Which.
        k: Tern,
        /// Type.
        ty: Ty,
        /// Destination.
        d: u32,
        /// Sources.
        a: Src,
        /// Sources.
        b: Src,
        /// Sources.
        c: Src,
    },
    /// `bfi d, a, b, pos, len`.
    Bfi {
        /// Type.
        ty: Ty,
        /// Destination.
        d: u32,
        /// Sources a, b, pos, len.
        s: [Src; 4],
    },
    /// `lop3.b32 d, a, b, c, lut`.
    Lop3 {
        /// Destination.
        d: u32,
        /// Sources.
        s: [Src; 3],
        /// Truth table.
        lut: u8,
    },
    /// setp: d = cmp(a, b) [op p]; d2 = !cmp(a, b) [op p].
    Setp {
        /// Comparison.
        cmp: Cmp,
        /// Type compared.
        ty: Ty,
        /// Predicate result.
        d: u32,
        /// Second (complement) result.
        d2: Option<u32>,
        /// Sources.
        a: Src,
        /// Sources.
        b: Src,
        /// Combining operation and predicate (negated?).
        comb: Option<(BoolOp, Src, bool)>,
    },
    /// Predicate logic: and/or/xor/not on predicates (d = a op b; `not`: b ignored).
    PredLogic {
        /// 0 and, 1 or, 2 xor, 3 not.
        k: u8,
        /// Destination.
        d: u32,
        /// Source (negated?).
        a: (Src, bool),
        /// Source (negated?).
        b: (Src, bool),
    },
    /// selp d, a, b, p.
    Selp {
        /// Type.
        ty: Ty,
        /// Destination.
        d: u32,
        /// Sources.
        a: Src,
        /// Sources.
        b: Src,
        /// Predicate (negated?).
        p: (Src, bool),
    },
    /// cvt.
    Cvt {
        /// Destination type.
        dt: Ty,
        /// Source type.
        st: Ty,
        /// Rounding: 0 none/rn/rni, 1 rz/rzi, 2 rm/rmi, 3 rp/rpi.
        rnd: u8,
        /// Integer rounding modifier given (`.rni` …) for float → float.
        int_round: bool,
        /// `.sat`.
        sat: bool,
        /// Destination.
        d: u32,
        /// Source.
        a: Src,
    },
    /// `cvt.rn.{f16x2,bf16x2}.f32 d, a, b`: d = {hi: a, lo: b}.
    CvtPack {
        /// F16x2 or Bf16x2.
        dt: Ty,
        /// `.relu`.
        relu: bool,
        /// Destination.
        d: u32,
        /// High half source.
        a: Src,
        /// Low half source.
        b: Src,
    },
    /// Branch.
    Bra {
        /// Target instruction index.
        target: u32,
    },
    /// ret / exit.
    Exit,
    /// bar.sync / barrier.sync / bar.arrive (no wait) / bar.red (PTX ISA 9.7.13.1 bar,
    /// barrier).
    Bar {
        /// Barrier id.
        id: Src,
        /// Thread count, if given.
        count: Option<Src>,
        /// `bar.arrive`: arrive without waiting.
        arrive: bool,
        /// `bar.red`: the reduction, its destination and its predicate (negated?).
        red: Option<(BarRed, u32, (Src, bool))>,
    },
    /// `cp.async.commit_group`, `cp.async.bulk.commit_group`, `wgmma.commit_group`: closes
    /// the warp's open group of that unit's asynchronous operations.
    AsyncCommit {
        /// Which unit.
        unit: AsyncUnit,
    },
    /// `cp.async.wait_group N` / `wait_all`, `cp.async.bulk.wait_group{.read} N`,
    /// `wgmma.wait_group N`: waits until at most `n` of the warp's committed groups of the
    /// unit are pending.
    AsyncWait {
        /// Which unit.
        unit: AsyncUnit,
        /// Groups that may stay pending.
        n: u32,
        /// `cp.async.wait_all`: commits the open group first (`commit_group; wait_group 0`).
        all: bool,
    },
    /// An `mbarrier` instruction (PTX ISA §9.7.13.15).
    Mbarrier {
        /// Which operation.
        op: MbarOp,
        /// `.expect_tx` on an arrive.
        expect_tx: bool,
        /// `.parity` on a wait.
        parity: bool,
        /// `Shared` (`.shared`, `.shared::cta`, `.shared::cluster`) or `Generic`.
        space: Space,
        /// The state (arrive) or waitComplete (waits) destination; `None` for `_` or none.
        d: Option<u32>,
        /// The object's address.
        addr: Addr,
        /// count (init, arrive), txCount (expect_tx, complete_tx, arrive.expect_tx), state or
        /// phaseParity (waits).
        a: Option<Src>,
        /// arrive.expect_tx's count.
        b: Option<Src>,
    },
    /// `wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype` (PTX ISA 9.7.15.5.2):
    /// warpgroup-collective, executed once when the four warps of the warpgroup arrive.
    Wgmma {
        /// The form (N, D type, A and B types, `.satfinite`).
        kind: crate::sim::wgmma::WgmmaKind,
        /// The accumulator registers (per thread, `kind.d_regs()` of them).
        d: Vec<u32>,
        /// A: a descriptor (`.b64`) or 4 registers.
        a: WgmmaSrc,
        /// B's descriptor.
        b: Src,
        /// `scale-d` predicate (negated?).
        scale_d: (Src, bool),
        /// `imm-scale-a`, `imm-scale-b` (1 or -1; 1 when the form has none).
        scale: [i32; 2],
        /// `imm-trans-a`, `imm-trans-b` (false when the form has none).
        trans: [bool; 2],
    },
    /// The bulk copies of the TMA unit (PTX ISA 9.7.9.25): `cp.async.bulk{.tensor}`,
    /// `cp.reduce.async.bulk{.tensor}`.
    Bulk {
        /// Which form.
        form: BulkForm,
        /// The shared-memory side (destination of a load, source of a store): a shared address.
        smem: Addr,
        /// The global side of a copy without a tensor map.
        global: Option<Addr>,
        /// The tensor map's address (a parameter's address, or its generic address after
        /// `cvta.param`), with the tensor coordinates (elements, innermost first).
        tmap: Option<(Addr, Vec<Src>)>,
        /// Copy size in bytes (copies without a map).
        size: Option<Src>,
        /// The mbarrier completed (`.mbarrier::complete_tx::bytes` forms).
        mbar: Option<Addr>,
        /// `.multicast::cluster`'s ctaMask.
        cta_mask: Option<Src>,
    },
    /// `elect.sync d|p, membermask` (PTX ISA 9.7.13.12 elect.sync).
    Elect {
        /// The leader's lane id (`None` for `_`).
        d: Option<u32>,
        /// True in the leader lane.
        p: Option<u32>,
        /// membermask.
        member: Src,
    },
    /// `barrier.cluster.arrive` / `barrier.cluster.wait` (PTX ISA 9.7.13.2).
    ClusterBarrier {
        /// `.wait` (else `.arrive`).
        wait: bool,
    },
    /// `mapa{.shared::cluster}.{u32,u64} d, a, rank`: the address of the same variable in the
    /// CTA of `rank` (PTX ISA 9.7.9.22 mapa).
    Mapa {
        /// Destination.
        d: u32,
        /// Address.
        a: Src,
        /// Target CTA rank.
        rank: Src,
    },
    /// `tensormap.replace.tile.<field>{.space}.b1024.<type> [addr], {ord,} new_val` (PTX ISA,
    /// tensormap.replace): writes one field of the tensor-map object at `addr`
    /// ([`crate::sim::tensormap::MapImage::replace`]).
    TensorMapReplace {
        /// `.global`, `.shared::cta`, or generic.
        space: Space,
        /// The object's address (64-byte aligned).
        addr: Addr,
        /// The field, with its ordinal.
        field: crate::sim::tensormap::MapField,
        /// `new_val` (`.b32` or `.b64`).
        value: Src,
    },
    /// `tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned
    /// [dst], [src], 128` (PTX ISA, tensormap.cp_fenceproxy): copies the 128-byte object at
    /// shared `src` to global `dst`.
    TensorMapCopy {
        /// Global destination.
        dst: Addr,
        /// Shared source.
        src: Addr,
    },
    /// `call` to a function the simulator does not run (`vprintf`, `__assertfail`, any
    /// `.extern .func`): an error when a lane reaches it.
    Call {
        /// The callee, as written.
        name: String,
    },
    /// bar.warp.sync: no effect on a lockstep warp beyond its membermask's rule.
    WarpSync {
        /// membermask.
        member: Src,
    },
    /// ld (any state space).
    Ld {
        /// Space.
        space: Space,
        /// Element type.
        ty: Ty,
        /// Destinations (vector elements; `None` for `_`).
        d: Vec<Option<u32>>,
        /// Address.
        addr: Addr,
    },
    /// st.
    St {
        /// Space.
        space: Space,
        /// Element type.
        ty: Ty,
        /// Sources (vector elements).
        s: Vec<Src>,
        /// Address.
        addr: Addr,
    },
    /// ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16.
    Ldmatrix {
        /// 1, 2 or 4.
        num: u8,
        /// .trans
        trans: bool,
        /// Destinations.
        d: Vec<u32>,
        /// Row address.
        addr: Addr,
        /// No `.shared` state space: the row addresses are generic and must lie in the shared
        /// window ([`SHARED_WINDOW`](super::decode::SHARED_WINDOW); PTX ISA 9.7.14.5.15/16: "If no state space is provided,
        /// generic addressing is used", and the address must map to shared memory).
        generic: bool,
    },
    /// stmatrix.sync.aligned.m8n8.xN[.trans].shared.b16.
    Stmatrix {
        /// 1, 2 or 4.
        num: u8,
        /// .trans
        trans: bool,
        /// Sources.
        s: Vec<Src>,
        /// Row address.
        addr: Addr,
        /// No `.shared` state space: the row addresses are generic and must lie in the shared
        /// window ([`SHARED_WINDOW`](super::decode::SHARED_WINDOW); PTX ISA 9.7.14.5.15/16: "If no state space is provided,
        /// generic addressing is used", and the address must map to shared memory).
        generic: bool,
    },
    /// `cp.async.{ca,cg}.shared.global [dst], [src], cp-size[, src-size | ignore-src]`.
    CpAsync {
        /// `.cg`.
        cg: bool,
        /// Bytes copied (4, 8, 16).
        size: u32,
        /// Shared destination.
        dst: Addr,
        /// Global source.
        src: Addr,
        /// Bytes read from the source (rest zero-filled).
        src_size: Option<Src>,
        /// ignore-src predicate: when true, nothing is read (all zero).
        ignore: Option<(Src, bool)>,
    },
    /// mma.sync.aligned.
    Mma {
        /// Shape, A and B types, C/D type (`.f32`/`.s32`: 4 registers, `.f16`: 2 `.f16x2`),
        /// `.satfinite`.
        kind: MmaKind,
        /// D registers.
        d: Vec<u32>,
        /// A, B, C sources.
        a: Vec<Src>,
        /// B.
        b: Vec<Src>,
        /// C.
        c: Vec<Src>,
    },
    /// shfl.sync.
    Shfl {
        /// Mode.
        mode: ShflMode,
        /// Destination.
        d: u32,
        /// Predicate result.
        p: Option<u32>,
        /// Value, lane/delta, clamp/segment.
        s: [Src; 3],
        /// membermask (`None` when the text has none).
        member: Option<Src>,
    },
    /// vote.sync.{all,any,uni}.pred / vote.sync.ballot.b32.
    Vote {
        /// 0 all, 1 any, 2 uni, 3 ballot.
        mode: u8,
        /// Destination.
        d: u32,
        /// Predicate (negated?).
        p: (Src, bool),
        /// membermask (`None` when the text has none).
        member: Option<Src>,
    },
    /// activemask.b32.
    Activemask {
        /// Destination.
        d: u32,
    },
    /// atom / red.
    Atom {
        /// Space.
        space: Space,
        /// Operation.
        op: AtomOp,
        /// Type.
        ty: Ty,
        /// Destination (old value), `None` for red.
        d: Option<u32>,
        /// Address.
        addr: Addr,
        /// Operand.
        b: Src,
        /// cas: new value.
        c: Option<Src>,
    },
}

/// A decoded instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// The operation.
    pub op: Op,
    /// Guard predicate register and negation.
    pub guard: Option<(u32, bool)>,
    /// 1-based PTX line.
    pub line: u32,
}

/// Where `wgmma.mma_async`'s A comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum WgmmaSrc {
    /// A matrix descriptor (a `.b64` register or immediate) into shared memory.
    Desc(Src),
    /// Four `.b32` registers per thread (the A fragment).
    Regs(Vec<Src>),
}

/// Which bulk copy (PTX ISA 9.7.9.25.4-5): the forms [`crate::sim::exec::BulkKind`] executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BulkForm {
    /// `cp.async.bulk.tensor.Nd.shared::cluster.global{.tile}.mbarrier::complete_tx::bytes`.
    TensorLoad {
        /// Rank N (1..=5).
        rank: u8,
    },
    /// `cp.async.bulk.tensor.Nd.global.shared::cta{.tile}.bulk_group`.
    TensorStore {
        /// Rank N.
        rank: u8,
    },
    /// `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.op{.tile}.bulk_group`.
    TensorReduce {
        /// Rank N.
        rank: u8,
        /// The reduction.
        op: ReduceOp,
    },
    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`.
    CopyToShared,
    /// `cp.async.bulk.global.shared::cta.bulk_group`.
    CopyToGlobal,
    /// `cp.reduce.async.bulk.global.shared::cta.bulk_group.op.type`.
    ReduceToGlobal {
        /// The reduction.
        op: ReduceOp,
        /// The element type.
        dtype: TmaDtype,
    },
}

impl BulkForm {
    /// Whether the form writes global memory (completes in a bulk group).
    pub fn is_store(self) -> bool {
        !matches!(self, BulkForm::TensorLoad { .. } | BulkForm::CopyToShared)
    }

    /// Whether the form copies through a tensor map (`cp.async.bulk.tensor`,
    /// `cp.reduce.async.bulk.tensor`).
    pub fn is_tensor(self) -> bool {
        matches!(
            self,
            BulkForm::TensorLoad { .. }
                | BulkForm::TensorStore { .. }
                | BulkForm::TensorReduce { .. }
        )
    }
}
