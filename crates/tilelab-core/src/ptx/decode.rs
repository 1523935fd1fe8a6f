//! A parsed kernel → [`Program`]: every instruction decoded once into a compact [`Op`] whose
//! registers are indices into a flat per-warp register file, labels resolved to instruction
//! indices, special registers (`%tid.x`, `%laneid`, …) and variable addresses turned into
//! per-lane constants, and each branch's reconvergence point (its immediate post-dominator,
//! [`super::cfg`]). Nothing about an instruction is looked up by name while a kernel runs.
//!
//! An opcode outside the supported subset is a [`DecodeError`] naming the line; the subset is
//! listed in `docs/ptx.md`.
//!
//! **The ISA's semantic rules are checked here**, each as a family at the one place it is
//! decided, with the line, the text in PTX's words and the rule's section: the operand count of
//! every opcode from one table (`FORMS`: `add` takes 3); the modifiers (none spelled like a
//! type that is not one, none twice, at most the opcode's number of types, the state spaces
//! the instruction accesses: `ld.global.shared` names two, `st.const` writes a read-only
//! space); each register operand's declared type against the instruction's (PTX ISA §9.4 and
//! §9.4.1, [`agrees`]); guards are `.pred` (§9.3); special registers are never declared or
//! written (§10); a register is declared once per block; `mma` layouts are `.row.col`
//! (9.7.14.5.14). None of it depends on ptxas.

use std::collections::HashMap;
use std::fmt;

use super::parse::{self, Kernel, Module, Operand, Stmt};
use super::types::Ty;
use crate::sim::arch::Arch;
use crate::sim::mma::{MmaAcc, MmaDtype, MmaKind, MmaShape};

mod hopper;
pub mod reads;
mod sync;
mod tensormap;

pub use super::inst::{
    Addr, AsyncUnit, AtomOp, BarRed, Bin, BoolOp, BulkForm, Cmp, Inst, MbarOp, Op, ShflMode, Space,
    Special, Src, Tern, Un, WgmmaSrc,
};

/// A decode error: line and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// 1-based PTX line.
    pub line: u32,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for DecodeError {}

/// A kernel parameter after layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// Name.
    pub name: String,
    /// Type suffix.
    pub ty: String,
    /// Byte offset in the parameter buffer.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// A pointer: marked `.ptr`, or a 64-bit parameter the kernel converts with
    /// `cvta.to.global` (nvcc's pointers carry no `.ptr`).
    pub pointer: bool,
    /// Declared `.align` in bytes (the type's size when not given).
    pub align: u32,
    /// The bytes of this parameter the kernel reads ([`super::params::mark_reads`]).
    pub reads: Vec<reads::ParamRead>,
}

/// A module-scope `.global`/`.const` variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalVar {
    /// Name.
    pub name: String,
    /// Initial bytes: the initializer, cut to the variable's size; the bytes after them are
    /// zero (never stored: a 1 GiB array costs nothing until it is written).
    pub bytes: Vec<u8>,
    /// Size in bytes.
    pub size: u64,
    /// Whether it is a `.const` variable (read-only, PTX ISA §5.1.3).
    pub read_only: bool,
}

/// A kernel ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Kernel name.
    pub name: String,
    /// Instructions.
    pub insts: Vec<Inst>,
    /// Each instruction's PTX text (whitespace collapsed).
    pub texts: Vec<String>,
    /// Registers per lane (the flat register file's width): the declared registers some
    /// instruction names, each given its index on first use (a declared register no instruction
    /// names takes no space).
    pub nregs: u32,
    /// Registers holding special registers: (register, which).
    pub specials: Vec<(u32, Special)>,
    /// Registers holding a global variable's address: (register, global index).
    pub global_addrs: Vec<(u32, usize)>,
    /// Parameters.
    pub params: Vec<ParamInfo>,
    /// Bytes of the parameter buffer.
    pub param_bytes: u32,
    /// Bytes of static shared memory (declared with a size).
    pub static_smem: u32,
    /// Byte offset where `.extern .shared` (dynamic) arrays start; `None` if there are none.
    pub dynamic_smem_offset: Option<u32>,
    /// Bytes of each thread's `.local` frame (every `.local` variable, aligned, in order;
    /// local address 0 is the frame's first byte). 0 when the kernel declares none.
    pub local_frame: u32,
    /// Module `.global`/`.const` variables.
    pub globals: Vec<GlobalVar>,
    /// `.reqntid` of the kernel (PTX ISA §11.4.3): the block it must be launched with.
    pub reqntid: Option<[u32; 3]>,
    /// `.maxntid` of the kernel (PTX ISA §11.4.2): the largest block (the product of the
    /// dimensions bounds the block's threads). Checked at launch by the machine.
    pub maxntid: Option<[u32; 3]>,
    /// `.minnctapersm` of the kernel (PTX ISA §11.4.4), a hint.
    pub minnctapersm: Option<u32>,
    /// `.reqnctapercluster` of the kernel (PTX ISA §11.7.1): its cluster shape in CTAs, the
    /// shape a launch that names none runs with ([`crate::ptx::params::check_cluster`]).
    pub reqnctapercluster: Option<[u32; 3]>,
    /// `.maxclusterrank` of the kernel (PTX ISA §11.7.3): the most CTAs per cluster.
    pub maxclusterrank: Option<u32>,
    /// `.explicitcluster` of the kernel (PTX ISA §11.7.2): it must be launched as clusters.
    pub explicitcluster: bool,
    /// Reconvergence point of each branch instruction (index), `u32::MAX` for none (the
    /// immediate post-dominator is the kernel's exit); unused for other instructions.
    pub reconverge: Vec<u32>,
    /// The shared variables (static and `.extern`) by byte offset, ascending: (offset, name),
    /// for messages naming an address as `name+offset`.
    pub shared_names: Vec<(u32, String)>,
    /// Every instruction that names a `.shared` variable (an operand or an address's base):
    /// (instruction index, the variable's byte offset), in instruction order. The dataflow
    /// pass starts its shared-memory regions here (`ptx::dataflow`, [`Program::shared_names`]).
    pub shared_refs: Vec<(u32, u32)>,
    /// The source line of each instruction's PTX line (the `.loc` in force there),
    /// from the kernel's line table and the module's `.file` names.
    pub sources: std::collections::BTreeMap<u32, super::lineinfo::SourceRef>,
    /// The number of the module's `.target` (90 for `sm_90a`; 0 when it names none): decides
    /// the SASS an `mma.sync` form becomes ([`MmaKind::sass_count`]).
    pub target_sm: u32,
}

impl Program {
    /// A shared byte address in words, by the variable it falls in: `'full'+8 (shared address
    /// 0x10)`, or `at shared address 0x10` before every variable.
    pub fn shared_label(&self, at: u32) -> String {
        match self.shared_names.iter().rev().find(|(o, _)| *o <= at) {
            Some((o, n)) => format!(
                "'{}'+{} (shared address {at:#x})",
                crate::text::escape(n),
                at - o
            ),
            None => format!("at shared address {at:#x}"),
        }
    }
}

/// Base of the generic-address window that maps to shared memory (`cvta.shared`).
pub const SHARED_WINDOW: u64 = 1 << 56;
/// Base of the generic-address window that maps to the executing thread's `.local` frame
/// (`cvta.local`): generic `LOCAL_WINDOW + a` is local address `a` (PTX ISA §6.4.1.1, "Generic
/// Addressing": a window's generic address minus its base is the address in its state space).
/// Generic addresses from here to [`LOCAL_WINDOW_BYTES`] above it are local: one past the
/// frame is an out-of-frame error, not a global access.
pub const LOCAL_WINDOW: u64 = 1 << 57;
/// Span of the local window in the generic address space, in bytes (4 GiB).
pub const LOCAL_WINDOW_BYTES: u64 = 1 << 32;
/// The `.local` frame and parameter limits, read by the parser (they are declarations' sizes).
pub use super::parse::{LOCAL_FRAME_LIMIT, PARAM_LIMIT};
/// The most registers per lane a [`Program`] has (its `nregs`): the kernel's declared ones (at
/// most [`parse::MAX_REGISTERS`]) and the decoder's own, one per special register read (20
/// kinds, at most 32) and one per module variable whose address is taken (at most
/// [`parse::MAX_VARIABLES`]). A warp's register file is `nregs` × 32 lanes × 8 bytes (about
/// 20.5 MiB at this bound); bounds over a launch's warps are the machine's.
pub const MAX_NREGS: u32 = parse::MAX_REGISTERS + parse::MAX_VARIABLES + 32;
/// Base address of global buffer `k` (a pointer parameter or a global variable): `(k + 1) << 40`.
pub fn buffer_base(k: usize) -> u64 {
    (k as u64 + 1) << 40
}

/// How a register operand's declared type must relate to what the instruction asks for at
/// that place (PTX ISA §9.4 "Type Information for Instructions and Operands").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// The type-checking rules of §9.4 (Table "Type Checking Rules"): a bit-size type `.bN`
    /// agrees with every type of N bits, signed and unsigned integers of one size agree, a
    /// floating-point type and `.pred` only with themselves.
    Ty(Ty),
    /// `ld`, `st` and `cvt` (§9.4.1 "Operand Size Exceeding Instruction-Type Size"): as `Ty`,
    /// or a wider register — of bit-size type for any instruction type, of integer type for a
    /// bit-size or integer instruction type (a float register only with a bit-size type).
    Wide(Ty),
}

/// Whether a register declared `reg` may stand where `want` is asked (PTX ISA §9.4 and
/// §9.4.1; see [`Want`]). Predicates agree only with predicates.
pub fn agrees(want: Want, reg: Ty) -> bool {
    let (t, wide) = match want {
        Want::Ty(t) => (t, false),
        Want::Wide(t) => (t, true),
    };
    if t == Ty::Pred || reg == Ty::Pred {
        return t == reg;
    }
    // 0 bit-size, 1 integer, 2 floating point.
    let class = |x: Ty| match x {
        Ty::B(_) => 0,
        Ty::U(_) | Ty::S(_) => 1,
        _ => 2,
    };
    let (ct, cr) = (class(t), class(reg));
    if reg.bits() == t.bits() {
        return match (ct, cr) {
            (0, _) | (_, 0) | (1, 1) => true,
            (2, 2) => t == reg,
            _ => false,
        };
    }
    wide && reg.bits() > t.bits() && (cr == 0 || (cr == 1 && ct != 2) || (cr == 2 && ct == 0))
}

/// Whether `name` is one of PTX's special registers (PTX ISA §10 "Special Registers"), with or
/// without a `.x`/`.y`/`.z`/`.w` component: predefined and read-only, never declared or written.
pub fn is_special_register(name: &str) -> bool {
    let base = match name.rsplit_once('.') {
        Some((b, "x" | "y" | "z" | "w")) => b,
        _ => name,
    };
    // A `match` on the name (by length, then bytes) instead of 37 string compares.
    let fixed = matches!(
        base,
        "%tid"
            | "%ntid"
            | "%laneid"
            | "%warpid"
            | "%nwarpid"
            | "%ctaid"
            | "%nctaid"
            | "%smid"
            | "%nsmid"
            | "%gridid"
            | "%is_explicit_cluster"
            | "%clusterid"
            | "%nclusterid"
            | "%cluster_ctaid"
            | "%cluster_nctaid"
            | "%cluster_ctarank"
            | "%cluster_nctarank"
            | "%lanemask_eq"
            | "%lanemask_le"
            | "%lanemask_lt"
            | "%lanemask_ge"
            | "%lanemask_gt"
            | "%clock"
            | "%clock_hi"
            | "%clock64"
            | "%globaltimer"
            | "%globaltimer_lo"
            | "%globaltimer_hi"
            | "%reserved_smem_offset_begin"
            | "%reserved_smem_offset_end"
            | "%reserved_smem_offset_cap"
            | "%reserved_smem_offset_0"
            | "%reserved_smem_offset_1"
            | "%total_smem_size"
            | "%aggr_smem_size"
            | "%dynamic_smem_size"
            | "%current_graph_exec"
    );
    if fixed {
        return true;
    }
    let numbered = |prefix: &str, max: u32, suffix: &str| {
        base.strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(suffix))
            .and_then(|d| d.parse::<u32>().ok().filter(|_| !d.starts_with('+')))
            .is_some_and(|k| k <= max)
    };
    numbered("%pm", 7, "") || numbered("%pm", 7, "_64") || numbered("%envreg", 31, "")
}

/// Where the PTX ISA defines an instruction: its section where this project cites it
/// elsewhere, else §9.7 and the instruction's name.
fn isa(name: &str) -> String {
    match name {
        "ld" => "PTX ISA 9.7.9.8 ld".into(),
        "cvt" => "PTX ISA 9.7.9.21 cvt".into(),
        "mma" => "PTX ISA 9.7.14.5.14 mma".into(),
        "ldmatrix" => "PTX ISA 9.7.14.5.15 ldmatrix".into(),
        "stmatrix" => "PTX ISA 9.7.14.5.16 stmatrix".into(),
        n => format!("PTX ISA §9.7 '{n}'"),
    }
}

/// One row of the instruction table: an opcode, the modifiers that select the row (all of
/// them present), how many operands it takes, how many type suffixes it may carry, and the
/// ISA's syntax of that form.
struct Form {
    op: &'static str,
    when: &'static [&'static str],
    operands: (u8, u8),
    types: u8,
    syntax: &'static str,
}

const fn form(
    op: &'static str,
    when: &'static [&'static str],
    operands: (u8, u8),
    types: u8,
    syntax: &'static str,
) -> Form {
    Form {
        op,
        when,
        operands,
        types,
        syntax,
    }
}

/// The rows of [`FORMS`] for opcode `name`, in table order (the first that matches applies):
/// an index built once, so that each instruction looks its opcode up instead of scanning the
/// table with string compares.
fn forms_of(name: &str) -> &'static [usize] {
    static INDEX: std::sync::OnceLock<HashMap<&'static str, Vec<usize>>> =
        std::sync::OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut m: HashMap<&'static str, Vec<usize>> = HashMap::new();
        for (k, f) in FORMS.iter().enumerate() {
            m.entry(f.op).or_default().push(k);
        }
        m
    });
    index.get(name).map_or(&[], Vec::as_slice)
}

/// The one table of operand counts (and type-suffix counts) of every opcode the decoder
/// accepts, from each instruction's syntax in the PTX ISA (§9.7); the first row whose opcode
/// matches and whose `when` modifiers are all present applies. An opcode without a row is
/// unsupported.
const FORMS: &[Form] = &[
    form("mov", &[], (2, 2), 1, "mov.type d, a"),
    form("cvta", &[], (2, 2), 1, "cvta{.to}.space.size p, a"),
    form("add", &[], (3, 3), 1, "add.type d, a, b"),
    form("sub", &[], (3, 3), 1, "sub.type d, a, b"),
    form("mul", &[], (3, 3), 1, "mul.mode.type d, a, b"),
    form("div", &[], (3, 3), 1, "div.type d, a, b"),
    form("rem", &[], (3, 3), 1, "rem.type d, a, b"),
    form("min", &[], (3, 3), 1, "min.type d, a, b"),
    form("max", &[], (3, 3), 1, "max.type d, a, b"),
    form("and", &[], (3, 3), 1, "and.type d, a, b"),
    form("or", &[], (3, 3), 1, "or.type d, a, b"),
    form("xor", &[], (3, 3), 1, "xor.type d, a, b"),
    form("shl", &[], (3, 3), 1, "shl.type d, a, b"),
    form("shr", &[], (3, 3), 1, "shr.type d, a, b"),
    form("copysign", &[], (3, 3), 1, "copysign.type d, a, b"),
    form("mad", &[], (4, 4), 1, "mad.mode.type d, a, b, c"),
    form("fma", &[], (4, 4), 1, "fma.rnd.type d, a, b, c"),
    form("bfe", &[], (4, 4), 1, "bfe.type d, a, b, c"),
    form("prmt", &[], (4, 4), 1, "prmt.b32{.mode} d, a, b, c"),
    form("shf", &[], (4, 4), 1, "shf.{l,r}.mode.b32 d, a, b, c"),
    form("bfi", &[], (5, 5), 1, "bfi.type f, a, b, c, d"),
    form("lop3", &[], (5, 5), 1, "lop3.b32 d, a, b, c, immLut"),
    form("not", &[], (2, 2), 1, "not.type d, a"),
    form("cnot", &[], (2, 2), 1, "cnot.type d, a"),
    form("neg", &[], (2, 2), 1, "neg.type d, a"),
    form("abs", &[], (2, 2), 1, "abs.type d, a"),
    form("popc", &[], (2, 2), 1, "popc.type d, a"),
    form("clz", &[], (2, 2), 1, "clz.type d, a"),
    form("brev", &[], (2, 2), 1, "brev.type d, a"),
    form("ex2", &[], (2, 2), 1, "ex2.approx.type d, a"),
    form("lg2", &[], (2, 2), 1, "lg2.approx.type d, a"),
    form("rcp", &[], (2, 2), 1, "rcp.rnd.type d, a"),
    form("sqrt", &[], (2, 2), 1, "sqrt.rnd.type d, a"),
    form("rsqrt", &[], (2, 2), 1, "rsqrt.approx.type d, a"),
    form("sin", &[], (2, 2), 1, "sin.approx.type d, a"),
    form("cos", &[], (2, 2), 1, "cos.approx.type d, a"),
    form("tanh", &[], (2, 2), 1, "tanh.approx.type d, a"),
    form(
        "setp",
        &["and"],
        (4, 4),
        1,
        "setp.CmpOp.BoolOp.type p[|q], a, b, {!}c",
    ),
    form(
        "setp",
        &["or"],
        (4, 4),
        1,
        "setp.CmpOp.BoolOp.type p[|q], a, b, {!}c",
    ),
    form(
        "setp",
        &["xor"],
        (4, 4),
        1,
        "setp.CmpOp.BoolOp.type p[|q], a, b, {!}c",
    ),
    form("setp", &[], (3, 3), 1, "setp.CmpOp.type p[|q], a, b"),
    form("selp", &[], (4, 4), 1, "selp.type d, a, b, c"),
    form(
        "cvt",
        &["f16x2"],
        (3, 3),
        2,
        "cvt.rn{.relu}.f16x2.f32 d, a, b",
    ),
    form(
        "cvt",
        &["bf16x2"],
        (3, 3),
        2,
        "cvt.rn{.relu}.bf16x2.f32 d, a, b",
    ),
    form("cvt", &[], (2, 2), 2, "cvt{.rnd}{.sat}.dtype.atype d, a"),
    form("bra", &[], (1, 1), 0, "bra{.uni} tgt"),
    form("ret", &[], (0, 0), 0, "ret{.uni}"),
    form("exit", &[], (0, 0), 0, "exit"),
    form("trap", &[], (0, 0), 0, "trap"),
    form("bar", &["warp"], (1, 1), 0, "bar.warp.sync membermask"),
    form(
        "barrier",
        &["cluster", "arrive"],
        (0, 0),
        0,
        "barrier.cluster.arrive{.sem}{.aligned}",
    ),
    form(
        "barrier",
        &["cluster", "wait"],
        (0, 0),
        0,
        "barrier.cluster.wait{.acquire}{.aligned}",
    ),
    form("bar", &["arrive"], (2, 2), 0, "bar{.cta}.arrive a, b"),
    form(
        "bar",
        &["red"],
        (3, 4),
        1,
        "bar{.cta}.red.op.type d, a{, b}, {!}c",
    ),
    form("bar", &[], (1, 2), 0, "bar{.cta}.sync a{, b}"),
    form(
        "barrier",
        &["arrive"],
        (2, 2),
        0,
        "barrier{.cta}.arrive{.aligned} a, b",
    ),
    form(
        "barrier",
        &["red"],
        (3, 4),
        1,
        "barrier{.cta}.red.op.type d, a{, b}, {!}c",
    ),
    form(
        "barrier",
        &[],
        (1, 2),
        0,
        "barrier{.cta}.sync{.aligned} a{, b}",
    ),
    form("membar", &[], (0, 0), 0, "membar.level"),
    form("fence", &[], (0, 2), 0, "fence{.sem}.scope"),
    form("nanosleep", &[], (1, 1), 1, "nanosleep.u32 t"),
    form("prefetch", &[], (1, 1), 0, "prefetch{.space}.level [a]"),
    form("prefetchu", &[], (1, 1), 0, "prefetchu.L1 [a]"),
    form("griddepcontrol", &[], (0, 0), 0, "griddepcontrol.action"),
    form(
        "createpolicy",
        &["range"],
        (4, 4),
        1,
        "createpolicy.range… cache-policy, [a], primary-size, total-size",
    ),
    form(
        "createpolicy",
        &["cvt"],
        (2, 2),
        1,
        "createpolicy.cvt.L2.b64 cache-policy, access-property",
    ),
    form(
        "createpolicy",
        &[],
        (1, 2),
        1,
        "createpolicy.fractional… cache-policy{, fraction}",
    ),
    form("activemask", &[], (1, 1), 1, "activemask.b32 d"),
    form(
        "mbarrier",
        &["init"],
        (2, 2),
        1,
        "mbarrier.init{.shared{::cta}}.b64 [addr], count",
    ),
    form(
        "mbarrier",
        &["expect_tx", "arrive"],
        (3, 4),
        1,
        "mbarrier.arrive.expect_tx{.sem}{.scope}{.space}.b64 state, [addr], txCount{, count}",
    ),
    form(
        "mbarrier",
        &["expect_tx", "arrive_drop"],
        (3, 4),
        1,
        "mbarrier.arrive_drop.expect_tx{.sem}{.scope}{.space}.b64 state, [addr], txCount{, count}",
    ),
    form(
        "mbarrier",
        &["arrive"],
        (2, 3),
        1,
        "mbarrier.arrive{.sem}{.scope}{.space}.b64 state, [addr]{, count}",
    ),
    form(
        "mbarrier",
        &["arrive_drop"],
        (2, 3),
        1,
        "mbarrier.arrive_drop{.sem}{.scope}{.space}.b64 state, [addr]{, count}",
    ),
    form(
        "mbarrier",
        &["expect_tx"],
        (2, 2),
        1,
        "mbarrier.expect_tx{.sem}{.scope}{.space}.b64 [addr], txCount",
    ),
    form(
        "mbarrier",
        &["complete_tx"],
        (2, 2),
        1,
        "mbarrier.complete_tx{.sem}{.scope}{.space}.b64 [addr], txCount",
    ),
    form(
        "mbarrier",
        &["test_wait"],
        (3, 3),
        1,
        "mbarrier.test_wait{.parity}{.sem}{.scope}{.shared{::cta}}.b64 waitComplete, [addr], state|phaseParity",
    ),
    form(
        "mbarrier",
        &["try_wait"],
        (3, 4),
        1,
        "mbarrier.try_wait{.parity}{.sem}{.scope}{.shared{::cta}}.b64 waitComplete, [addr], state|phaseParity{, suspendTimeHint}",
    ),
    form(
        "mbarrier",
        &["inval"],
        (1, 1),
        1,
        "mbarrier.inval{.shared{::cta}}.b64 [addr]",
    ),
    form("elect", &[], (2, 2), 0, "elect.sync d|p, membermask"),
    form(
        "setmaxnreg",
        &[],
        (1, 1),
        1,
        "setmaxnreg.action.sync.aligned.u32 imm-reg-count",
    ),
    form("mapa", &[], (3, 3), 1, "mapa{.space}.type d, a, b"),
    form(
        "call",
        &[],
        (1, 1),
        0,
        "call{.uni} (ret-param), func, (param-list)",
    ),
    form(
        "tensormap",
        &["replace"],
        (2, 3),
        1,
        "tensormap.replace.tile.field{.space}.b1024.type [addr], {ord,} new_val",
    ),
    form(
        "tensormap",
        &["cp_fenceproxy"],
        (3, 3),
        0,
        "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst], [src], 128",
    ),
    form("wgmma", &["fence"], (0, 0), 0, "wgmma.fence.sync.aligned"),
    form(
        "wgmma",
        &["commit_group"],
        (0, 0),
        0,
        "wgmma.commit_group.sync.aligned",
    ),
    form(
        "wgmma",
        &["wait_group"],
        (1, 1),
        0,
        "wgmma.wait_group.sync.aligned N",
    ),
    form(
        "ld",
        &["L2::cache_hint"],
        (3, 3),
        1,
        "ld{.ss}.L2::cache_hint.type d, [a], cache-policy",
    ),
    form("ld", &[], (2, 2), 1, "ld{.ss}.type d, [a]"),
    form("ldu", &[], (2, 2), 1, "ldu{.ss}.type d, [a]"),
    form(
        "st",
        &["L2::cache_hint"],
        (3, 3),
        1,
        "st{.ss}.L2::cache_hint.type [a], b, cache-policy",
    ),
    form("st", &[], (2, 2), 1, "st{.ss}.type [a], b"),
    form(
        "ldmatrix",
        &[],
        (2, 2),
        1,
        "ldmatrix.sync.aligned.shape.num{.trans}{.ss}.type r, [p]",
    ),
    form(
        "stmatrix",
        &[],
        (2, 2),
        1,
        "stmatrix.sync.aligned.shape.num{.trans}{.ss}.type [p], r",
    ),
    form("cp", &["commit_group"], (0, 0), 0, "cp.async.commit_group"),
    form(
        "cp",
        &["mbarrier", "arrive"],
        (1, 1),
        1,
        "cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]",
    ),
    form(
        "cp",
        &["bulk", "commit_group"],
        (0, 0),
        0,
        "cp.async.bulk.commit_group",
    ),
    form(
        "cp",
        &["bulk", "wait_group"],
        (1, 1),
        0,
        "cp.async.bulk.wait_group{.read} N",
    ),
    form(
        "cp",
        &["bulk"],
        (2, 6),
        1,
        "cp{.reduce}.async.bulk{.tensor.Nd}.dst.src{.tile}.completion{.op.type} [dst], [src | tensorMap, {coords}]{, size}{, [mbar]}{, ctaMask}{, cache-policy}",
    ),
    form("cp", &["wait_group"], (1, 1), 0, "cp.async.wait_group N"),
    form("cp", &["wait_all"], (0, 0), 0, "cp.async.wait_all"),
    form(
        "cp",
        &["L2::cache_hint"],
        (4, 5),
        0,
        "cp.async.{ca,cg}.shared.global.L2::cache_hint [dst], [src], cp-size{, src-size | ignore-src}, cache-policy",
    ),
    form(
        "cp",
        &[],
        (3, 4),
        0,
        "cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size | ignore-src}",
    ),
    form(
        "mma",
        &[],
        (4, 4),
        4,
        "mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype d, a, b, c",
    ),
    form(
        "shfl",
        &["sync"],
        (5, 5),
        1,
        "shfl.sync.mode.b32 d[|p], a, b, c, membermask",
    ),
    form("shfl", &[], (4, 4), 1, "shfl.mode.b32 d[|p], a, b, c"),
    form(
        "vote",
        &["sync"],
        (3, 3),
        1,
        "vote.sync.mode.type d, {!}a, membermask",
    ),
    form("vote", &[], (2, 2), 1, "vote.mode.type d, {!}a"),
    form(
        "atom",
        &["cas", "L2::cache_hint"],
        (5, 5),
        1,
        "atom{.space}.cas.L2::cache_hint.type d, [a], b, c, cache-policy",
    ),
    form(
        "atom",
        &["cas"],
        (4, 4),
        1,
        "atom{.space}.cas.type d, [a], b, c",
    ),
    form(
        "atom",
        &["L2::cache_hint"],
        (4, 4),
        1,
        "atom{.space}.op.L2::cache_hint.type d, [a], b, cache-policy",
    ),
    form("atom", &[], (3, 3), 1, "atom{.space}.op.type d, [a], b"),
    form(
        "red",
        &["L2::cache_hint"],
        (3, 3),
        1,
        "red{.space}.op.L2::cache_hint.type [a], b, cache-policy",
    ),
    form("red", &[], (2, 2), 1, "red{.space}.op.type [a], b"),
];

/// The state spaces a memory instruction may name, at most one of them (PTX ISA §9.7, each
/// instruction's `.ss`/`.space`); `None` for instructions that name none. `cp.async` (a
/// destination and a source space) and the fences (proxy kinds) are checked apart.
fn spaces_of(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "ld" => &[
            "const",
            "global",
            "local",
            "param",
            "param::entry",
            "param::func",
            "shared",
            "shared::cta",
            "shared::cluster",
        ],
        "ldu" => &["global"],
        "st" => &[
            "global",
            "local",
            "param",
            "param::func",
            "shared",
            "shared::cta",
            "shared::cluster",
        ],
        "atom" | "red" => &["global", "shared", "shared::cta", "shared::cluster"],
        "cvta" => &[
            "const",
            "global",
            "local",
            "param",
            "param::entry",
            "shared",
            "shared::cta",
            "shared::cluster",
        ],
        // `.const`/`.param` are prefetch.tensormap's spaces (PTX ISA 9.7.9.15 prefetch:
        // `prefetch{.tensormap_space}.tensormap [a]`).
        "prefetch" => &["global", "local", "const", "param"],
        "ldmatrix" | "stmatrix" => &["shared", "shared::cta"],
        "mbarrier" => &["shared", "shared::cta", "shared::cluster"],
        "mapa" => &["shared::cluster"],
        "tensormap" => &["global", "shared::cta"],
        _ => return None,
    })
}

/// Whether a modifier names a state space (PTX ISA §5.1, Table "State Spaces"), with its
/// `::` sub-qualifier if any.
fn is_space(m: &str) -> bool {
    let base = m.split("::").next().unwrap_or(m);
    matches!(
        base,
        "reg" | "sreg" | "const" | "global" | "local" | "param" | "shared" | "tex"
    )
}

/// Rounding and precision modes: at most one per instruction.
const ROUNDING: &[&str] = &[
    "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna", "rs", "approx", "full",
];
/// `setp`'s comparison operators (PTX ISA §9.3.1 "Comparisons").
const CMP_OPS: &[&str] = &[
    "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu",
    "geu", "num", "nan",
];
/// `atom`/`red` operations, `setp`'s and `bar.red`'s boolean operations: at most one.
const OPERATIONS: &[&str] = &[
    "and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max", "popc",
];
/// Groups of modifiers of which an instruction takes at most one (each instruction's syntax
/// in the PTX ISA §9.7 has one slot for each group).
const EXCLUSIVE: &[&[&str]] = &[
    ROUNDING,
    CMP_OPS,
    OPERATIONS,
    &["lo", "hi", "wide"],
    &["v2", "v4", "v8"],
    &["x1", "x2", "x4"],
    &["l", "r"],
    &["wrap", "clamp"],
    &["up", "down", "bfly", "idx"],
    &["all", "any", "uni", "ballot"],
    &["ca", "cg", "cs", "lu", "cv", "wb", "wt"],
    &[
        "weak", "volatile", "relaxed", "acquire", "release", "acq_rel", "mmio",
    ],
    &["cta", "cluster", "gpu", "sys"],
    &["sync", "arrive", "red"],
    &["m16n8k16", "m16n8k8", "m8n8k4", "m16n8k32", "m16n8k4"],
];
/// Cache, eviction and prefetch hints of `ld`, `st` and `cp.async` (PTX ISA 9.7.9.8 ld).
const MEMORY_HINTS: &[&str] = &[
    "L1::evict_normal",
    "L1::evict_unchanged",
    "L1::evict_first",
    "L1::evict_last",
    "L1::no_allocate",
    "L2::evict_normal",
    "L2::evict_first",
    "L2::evict_last",
    "L2::cache_hint",
    "L2::64B",
    "L2::128B",
    "L2::256B",
];

/// The qualifiers of the synchronisation and Hopper instructions (`barrier.cluster`, `mbarrier`, `elect`, `setmaxnreg`, `mapa`, `call`, the `wgmma` groups), for `modifiers_of`.
fn sync_modifiers(
    name: &str,
    mods: &[&str],
) -> Option<(Vec<&'static str>, Vec<&'static [&'static str]>)> {
    let v = |a: &[&'static str]| a.to_vec();
    Some(match name {
        "bar" | "barrier" if mods.contains(&"cluster") => (
            v(&[
                "cluster", "arrive", "wait", "aligned", "release", "relaxed", "acquire",
            ]),
            vec![&["arrive", "wait"]],
        ),
        "mbarrier" => (
            v(&[
                "init",
                "arrive",
                "arrive_drop",
                "expect_tx",
                "complete_tx",
                "test_wait",
                "try_wait",
                "parity",
                "inval",
                "release",
                "acquire",
                "relaxed",
                "cta",
                "cluster",
            ]),
            vec![&[
                "init",
                "arrive",
                "arrive_drop",
                "expect_tx",
                "complete_tx",
                "test_wait",
                "try_wait",
                "inval",
            ]],
        ),
        "elect" => (v(&["sync"]), vec![&["sync"]]),
        "setmaxnreg" => (
            v(&["inc", "dec", "sync", "aligned"]),
            vec![&["inc", "dec"], &["sync"], &["aligned"]],
        ),
        "mapa" => (vec![], vec![]),
        "call" => (v(&["uni"]), vec![]),
        "wgmma" if !mods.contains(&"mma_async") => (
            v(&["fence", "commit_group", "wait_group", "sync", "aligned"]),
            vec![
                &["fence", "commit_group", "wait_group"],
                &["sync"],
                &["aligned"],
            ],
        ),
        _ => return None,
    })
}

/// The qualifiers of `ld`, `ldu`, `st`, `ldmatrix`, `stmatrix` and `cp.async`, for `modifiers_of`.
fn memory_modifiers(
    name: &str,
    mods: &[&str],
) -> Option<(Vec<&'static str>, Vec<&'static [&'static str]>)> {
    let v = |a: &[&'static str]| a.to_vec();
    Some(match name {
        // Loads take the load cache operators and `.acquire`, stores the store ones and
        // `.release` (PTX ISA 9.7.9.1 Cache Operators, 9.7.9.8 ld, 9.7.9.10 st).
        "ld" | "ldu" => (
            [
                MEMORY_HINTS,
                &[
                    "weak", "volatile", "relaxed", "acquire", "mmio", "cta", "cluster", "gpu",
                    "sys", "nc", "ca", "cg", "cs", "lu", "cv", "v2", "v4", "v8", "unified",
                ],
            ]
            .concat(),
            vec![],
        ),
        "st" => (
            [
                MEMORY_HINTS,
                &[
                    "weak", "volatile", "relaxed", "release", "mmio", "cta", "cluster", "gpu",
                    "sys", "wb", "cg", "cs", "wt", "v2", "v4", "v8",
                ],
            ]
            .concat(),
            vec![],
        ),
        "ldmatrix" | "stmatrix" => (
            v(&[
                "sync", "aligned", "m8n8", "m8n16", "m16n16", "m16n8", "x1", "x2", "x4", "trans",
            ]),
            vec![&["sync"], &["aligned"], &["x1", "x2", "x4"]],
        ),
        "cp" if mods
            .iter()
            .any(|m| matches!(*m, "bulk" | "mbarrier" | "reduce")) =>
        {
            return None;
        }
        "cp" if mods
            .iter()
            .any(|m| matches!(*m, "commit_group" | "wait_group" | "wait_all")) =>
        {
            (
                v(&["async", "commit_group", "wait_group", "wait_all"]),
                vec![],
            )
        }
        "cp" => (
            [MEMORY_HINTS, &["async", "ca", "cg"]].concat(),
            vec![&["ca", "cg"]],
        ),
        _ => return None,
    })
}

/// The modifiers (besides its types and state spaces) an opcode may carry, and the groups of
/// which it needs exactly one, from each instruction's syntax in the PTX ISA (§9.7); `None`
/// where they are not checked (fences, whose proxy and ordering qualifiers are many and
/// meaningless here, and the unsupported bulk copies).
fn modifiers_of(
    name: &str,
    mods: &[&str],
) -> Option<(Vec<&'static str>, Vec<&'static [&'static str]>)> {
    let fl: &[&str] = &["rn", "rz", "rm", "rp", "ftz", "sat"];
    let v = |a: &[&'static str]| a.to_vec();
    if let Some(m) = sync_modifiers(name, mods).or_else(|| memory_modifiers(name, mods)) {
        return Some(m);
    }
    Some(match name {
        "mov" | "rem" | "and" | "or" | "xor" | "not" | "cnot" | "shl" | "shr" | "copysign"
        | "popc" | "clz" | "brev" | "bfe" | "bfi" | "selp" | "activemask" | "nanosleep"
        | "exit" | "trap" => (vec![], vec![]),
        "cvta" => (v(&["to"]), vec![]),
        "add" | "sub" => ([fl, &["cc", "relu"]].concat(), vec![]),
        "mul" => ([fl, &["lo", "hi", "wide"]].concat(), vec![]),
        "mad" => ([fl, &["lo", "hi", "wide", "cc"]].concat(), vec![]),
        "fma" => ([fl, &["relu", "oob"]].concat(), vec![]),
        "div" => (
            v(&["approx", "full", "rn", "rz", "rm", "rp", "ftz"]),
            vec![],
        ),
        "min" | "max" => (v(&["ftz", "NaN", "xorsign", "abs", "relu"]), vec![]),
        "neg" | "abs" => (v(&["ftz"]), vec![]),
        "rcp" | "sqrt" => (v(&["approx", "rn", "rz", "rm", "rp", "ftz"]), vec![]),
        "ex2" | "lg2" | "rsqrt" | "sin" | "cos" => (v(&["approx", "ftz"]), vec![]),
        "tanh" => (v(&["approx"]), vec![]),
        "prmt" => (v(&["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"]), vec![]),
        "shf" => (
            v(&["l", "r", "wrap", "clamp"]),
            vec![&["l", "r"], &["wrap", "clamp"]],
        ),
        "lop3" => (v(&["and", "or"]), vec![]),
        "setp" => (
            [CMP_OPS, &["and", "or", "xor", "ftz"]].concat(),
            vec![CMP_OPS],
        ),
        "cvt" => (
            [ROUNDING, &["ftz", "sat", "relu", "satfinite"]].concat(),
            vec![],
        ),
        "bra" | "ret" => (v(&["uni"]), vec![]),
        "bar" | "barrier" => (
            v(&[
                "sync", "arrive", "red", "warp", "cta", "aligned", "popc", "and", "or",
            ]),
            vec![&["sync", "arrive", "red"]],
        ),
        "membar" | "fence" => return None,
        "prefetch" => (
            v(&[
                "L1",
                "L2",
                "L2::evict_last",
                "L2::evict_normal",
                "tensormap",
            ]),
            vec![],
        ),
        "prefetchu" => (v(&["L1"]), vec![]),
        "griddepcontrol" => (
            v(&["launch_dependents", "wait"]),
            vec![&["launch_dependents", "wait"]],
        ),
        "createpolicy" => (
            v(&[
                "fractional",
                "range",
                "cvt",
                "L2",
                "L2::evict_last",
                "L2::evict_normal",
                "L2::evict_first",
                "L2::evict_unchanged",
            ]),
            vec![],
        ),
        "mma" => (
            v(&[
                "sync",
                "aligned",
                "m16n8k16",
                "m16n8k8",
                "m8n8k4",
                "m16n8k32",
                "m16n8k4",
                "row",
                "col",
                "satfinite",
            ]),
            vec![&["sync"], &["aligned"]],
        ),
        "shfl" => (
            v(&["sync", "up", "down", "bfly", "idx"]),
            vec![&["up", "down", "bfly", "idx"]],
        ),
        "vote" => (
            v(&["sync", "all", "any", "uni", "ballot"]),
            vec![&["all", "any", "uni", "ballot"]],
        ),
        "atom" | "red" => (
            [
                OPERATIONS,
                MEMORY_HINTS,
                &[
                    "relaxed", "acquire", "release", "acq_rel", "cta", "cluster", "gpu", "sys",
                    "noftz", "v2", "v4", "v8",
                ],
            ]
            .concat(),
            vec![&[
                "and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max",
            ]],
        ),
        _ => return None,
    })
}

/// Integer types of arithmetic (PTX ISA §5.2.2 Fundamental Types: signed and unsigned).
fn is_int(t: &str) -> bool {
    matches!(
        t,
        "u8" | "u16" | "u32" | "u64" | "s8" | "s16" | "s32" | "s64"
    )
}

/// Scalar floating-point types and their sizes in bits.
fn float_bits(t: &str) -> Option<u32> {
    match t {
        "f16" | "bf16" => Some(16),
        "f32" => Some(32),
        "f64" => Some(64),
        _ => None,
    }
}

/// Floating-point rounding modifiers (PTX ISA §9.7.3 "Floating-Point Instructions", §9.7.9.21
/// cvt "Floating-point rounding").
const FP_ROUNDING: &[&str] = &["rn", "rz", "rm", "rp", "rna", "rs"];
/// Integer rounding modifiers of `cvt` (PTX ISA 9.7.9.21 cvt, "Integer rounding").
const INT_ROUNDING: &[&str] = &["rni", "rzi", "rmi", "rpi"];
/// Qualifiers that only floating-point instructions take.
const FLOAT_ONLY: &[&str] = &["rn", "rz", "rm", "rp", "ftz", "approx", "full"];

/// The types each opcode takes where a table says it (PTX ISA §9.7, each instruction's
/// `.type` list); opcodes not here are checked by the register type rules alone.
fn types_of(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "abs" | "neg" => &[
            "s16", "s32", "s64", "f16", "f16x2", "bf16", "bf16x2", "f32", "f64",
        ],
        "bfe" => &["u32", "s32", "u64", "s64"],
        "bfi" | "popc" | "clz" | "brev" => &["b32", "b64"],
        _ => return None,
    })
}

/// The types of each `atom`/`red` operation (PTX ISA 9.7.13.5 atom, 9.7.13.6 red).
fn atom_types(op: &str) -> &'static [&'static str] {
    match op {
        "and" | "or" | "xor" => &["b32", "b64"],
        "exch" => &["b32", "b64", "b128"],
        "cas" => &["b16", "b32", "b64", "b128"],
        "inc" | "dec" => &["u32"],
        "add" => &[
            "u32", "s32", "u64", "s64", "f32", "f64", "f16", "f16x2", "bf16", "bf16x2",
        ],
        "min" | "max" => &["u32", "s32", "u64", "s64", "f16", "f16x2", "bf16", "bf16x2"],
        _ => &[],
    }
}

/// Memory barrier levels and fence forms (PTX ISA 9.7.13.4 membar/fence).
const FENCE_SCOPES: &[&str] = &["cta", "cluster", "gpu", "sys"];
const PROXY_KINDS: &[&str] = &["alias", "async", "tensormap::generic", "async::generic"];
const PROXY_QUALIFIERS: &[&str] = &[
    "global",
    "shared",
    "shared::cta",
    "shared::cluster",
    "release",
    "acquire",
    "sync_restrict::shared::cta",
    "sync_restrict::shared::cluster",
];

/// The PTX type modifiers among `mods` (`s32`, `f16x2`, …), in order.
fn ptx_types<'a>(mods: &[&'a str]) -> Vec<&'a str> {
    mods.iter()
        .copied()
        .filter(|m| parse::PTX_TYPES.contains(m))
        .collect()
}

/// Modifiers as a message lists them: `.a .b .c`.
fn dots(g: &[&str]) -> String {
    g.iter()
        .map(|m| format!(".{m}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The ISA's rules on an instruction's qualifiers beyond which ones it may carry
/// (`modifiers_of`): those some forms require (rounding of `cvt`, `fma`, `mad`, `div`, `sqrt`,
/// `rcp`; `.approx` of `ex2`, `sin`, …; `.lo/.hi/.wide` of integer `mul`/`mad`; a scope of
/// `ld.relaxed`), those some types refuse (rounding and `.ftz` on integers, `.wide` on 64-bit
/// integers, the types of `abs`, `bfe`, `popc`, `atom.add`, …), the cache operators of each
/// space, the levels of `membar`/`fence`, and the forms the target no longer supports (`vote`
/// and `shfl` without `.sync` on sm_70 and later). `sm` is the target's number (90 for
/// `sm_90a`, 0 if unknown), `version` the module's `.version`, `op` the opcode with its
/// modifiers as written (`add.s32`, the decoder's `opname`: joined once per instruction), for
/// the messages. An error is its message.
fn check_rules(
    op: &str,
    name: &str,
    mods: &[&str],
    sm: u32,
    version: (u32, u32),
) -> Result<(), String> {
    let types = ptx_types(mods);
    let has = |m: &str| mods.contains(&m);
    let any = |g: &[&str]| mods.iter().copied().find(|m| g.contains(m));
    let sec = isa(name);
    let ty = types.first().copied().unwrap_or("");
    // Integer arithmetic takes no rounding, no .ftz, no .approx (PTX ISA §9.7.1 Integer
    // Arithmetic Instructions; the floating-point ones are §9.7.3).
    if matches!(
        name,
        "add" | "sub" | "mul" | "mad" | "div" | "rem" | "min" | "max" | "neg" | "abs" | "setp"
    ) && (is_int(ty) || ty.starts_with('b'))
        && let Some(m) = any(FLOAT_ONLY)
    {
        return Err(format!(
            "'{op}': .{m} is a floating-point qualifier, and {name}.{ty} is an integer instruction (PTX ISA §9.7.1 Integer Arithmetic Instructions, {sec})"
        ));
    }
    if let Some(allowed) = types_of(name)
        && let Some(t) = types.iter().find(|t| !allowed.contains(t))
    {
        return Err(format!(
            "'{op}': {name} takes {}, not .{t} ({sec})",
            dots(allowed)
        ));
    }
    match name {
        "mul" | "mad" if is_int(ty) => {
            let Some(m) = any(&["lo", "hi", "wide"]) else {
                return Err(format!(
                    "'{op}': integer {name} needs one of .lo .hi .wide ({sec}: {name}.mode.type)"
                ));
            };
            if m == "wide" && !matches!(ty, "u16" | "u32" | "s16" | "s32") {
                return Err(format!(
                    "'{op}': {name}.wide takes 16- and 32-bit integers (.u16 .u32 .s16 .s32) and writes twice their width ({sec})"
                ));
            }
        }
        "mul" | "mad" if float_bits(ty).is_some() || ty.ends_with("x2") => {
            if let Some(m) = any(&["lo", "hi", "wide"]) {
                return Err(format!(
                    "'{op}': .{m} selects the bits of an integer product; floating-point {name} takes none ({sec})"
                ));
            }
            if name == "mad"
                && ty != "f16"
                && ty != "bf16"
                && !ty.ends_with("x2")
                && any(FP_ROUNDING).is_none()
            {
                return Err(format!(
                    "'{op}': mad.{ty} needs a rounding modifier (.rn .rz .rm .rp) on sm_20 and later targets (PTX ISA 9.7.3.6 mad)"
                ));
            }
        }
        "fma" if any(FP_ROUNDING).is_none() => {
            return Err(format!(
                "'{op}': fma needs a rounding modifier (.rn .rz .rm .rp) (PTX ISA 9.7.3.5 fma: fma.rnd.type)"
            ));
        }
        "div" if float_bits(ty).is_some() => {
            let ok: &[&str] = if ty == "f32" {
                &["approx", "full", "rn", "rz", "rm", "rp"]
            } else {
                &["rn", "rz", "rm", "rp"]
            };
            if any(ok).is_none() {
                return Err(format!(
                    "'{op}': div.{ty} needs one of {} (PTX ISA 9.7.3.8 div)",
                    dots(ok)
                ));
            }
        }
        "sqrt" | "rcp" if any(&["approx", "rn", "rz", "rm", "rp"]).is_none() => {
            return Err(format!(
                "'{op}': {name} needs .approx or a rounding modifier (.rn .rz .rm .rp) ({sec}: {name}.approx.type, {name}.rnd.type)"
            ));
        }
        "ex2" | "lg2" | "rsqrt" | "sin" | "cos" | "tanh" if !has("approx") => {
            return Err(format!(
                "'{op}': {name} needs .approx ({sec}: {name}.approx.type)"
            ));
        }
        _ => return check_rules_cvt_atom(op, name, mods, sm, version),
    }
    Ok(())
}

/// The rules of `check_rules` for `cvt` (rounding by conversion kind) and `atom`/`red` (types per operation).
fn check_rules_cvt_atom(
    op: &str,
    name: &str,
    mods: &[&str],
    sm: u32,
    version: (u32, u32),
) -> Result<(), String> {
    let types = ptx_types(mods);
    let has = |m: &str| mods.contains(&m);
    let any = |g: &[&str]| mods.iter().copied().find(|m| g.contains(m));
    let sec = isa(name);
    let ty = types.first().copied().unwrap_or("");
    match name {
        "cvt" if types.len() == 2 => {
            let (d, a) = (types[0], types[1]);
            let fp = any(FP_ROUNDING);
            let irnd = any(INT_ROUNDING);
            let rule = |what: String| {
                Err(format!(
                    "'{op}': {what} (PTX ISA 9.7.9.21 cvt: integer rounding is required for float-to-integer conversions, floating-point rounding for integer-to-float and narrowing float-to-float ones, and each is illegal elsewhere)"
                ))
            };
            match (is_int(d), is_int(a), float_bits(d), float_bits(a)) {
                (true, true, _, _) => {
                    if let Some(m) = fp.or(irnd) {
                        return rule(format!(
                            "an integer-to-integer cvt takes no rounding, found .{m}"
                        ));
                    }
                }
                (_, true, Some(_), _) => {
                    if let Some(m) = irnd {
                        return rule(format!(
                            "an integer-to-float cvt rounds with .rn .rz .rm .rp, not .{m}"
                        ));
                    }
                    if fp.is_none() {
                        return rule(format!(
                            "cvt.{d}.{a} needs a floating-point rounding .rn .rz .rm .rp"
                        ));
                    }
                }
                (true, _, _, Some(_)) => {
                    if let Some(m) = fp {
                        return rule(format!(
                            "a float-to-integer cvt rounds with .rni .rzi .rmi .rpi, not .{m}"
                        ));
                    }
                    if irnd.is_none() {
                        return rule(format!(
                            "cvt.{d}.{a} needs an integer rounding .rni .rzi .rmi .rpi"
                        ));
                    }
                }
                (_, _, Some(db), Some(ab)) if db < ab => {
                    if let Some(m) = irnd {
                        return rule(format!(
                            "a narrowing float-to-float cvt rounds with .rn .rz .rm .rp, not .{m}"
                        ));
                    }
                    if fp.is_none() {
                        return rule(format!(
                            "cvt.{d}.{a} narrows and needs a floating-point rounding .rn .rz .rm .rp"
                        ));
                    }
                }
                (_, _, Some(db), Some(ab)) if db > ab => {
                    if let Some(m) = fp.or(irnd) {
                        return rule(format!(
                            "cvt.{d}.{a} widens exactly and takes no rounding, found .{m}"
                        ));
                    }
                }
                (_, _, Some(_), Some(_)) if d == a => {
                    if let Some(m) = fp {
                        return rule(format!(
                            "cvt.{d}.{a} takes only an integer rounding (.rni .rzi .rmi .rpi), found .{m}"
                        ));
                    }
                }
                _ => {}
            }
        }
        "atom" | "red" => {
            if let Some(o) = any(&[
                "and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max",
            ]) {
                let allowed = atom_types(o);
                if let Some(t) = types.iter().find(|t| !allowed.contains(t)) {
                    return Err(format!(
                        "'{op}': {name}.{o} takes {}, not .{t} ({sec})",
                        dots(allowed)
                    ));
                }
                if matches!(ty, "f16" | "f16x2" | "bf16" | "bf16x2") && !has("noftz") {
                    return Err(format!(
                        "'{op}': {name}.{o}.{ty} needs .noftz ({sec}: {name}{{.sem}}{{.scope}}{{.space}}.{o}.noftz.{ty})"
                    ));
                }
            }
        }
        _ => return check_rules_memory(op, name, mods, sm, version),
    }
    Ok(())
}

/// The rules of `check_rules` for `ld`/`st` (cache operators, ordering and scope, vector width), `membar`/`fence` (levels and proxy forms) and `vote`/`shfl` without `.sync`.
fn check_rules_memory(
    op: &str,
    name: &str,
    mods: &[&str],
    sm: u32,
    version: (u32, u32),
) -> Result<(), String> {
    let types = ptx_types(mods);
    let has = |m: &str| mods.contains(&m);
    let any = |g: &[&str]| mods.iter().copied().find(|m| g.contains(m));
    let sec = isa(name);
    match name {
        "ld" | "ldu" | "st" => {
            if has("nc") && !(name == "ld" && has("global")) {
                return Err(format!(
                    "'{op}': .nc (the non-coherent read-only cache) is a qualifier of ld.global only (PTX ISA 9.7.9.9 ld.global.nc)"
                ));
            }
            let sem = any(&["relaxed", "acquire", "release"]);
            let scope = any(FENCE_SCOPES);
            match (sem, scope) {
                (Some(s), None) => {
                    return Err(format!(
                        "'{op}': {name}.{s} needs a scope (.cta .cluster .gpu .sys) ({sec}: {name}.{s}.scope)"
                    ));
                }
                (None, Some(s)) => {
                    return Err(format!(
                        "'{op}': the scope .{s} goes with .relaxed or .{} ({sec})",
                        if name == "st" { "release" } else { "acquire" }
                    ));
                }
                _ => {}
            }
            let elem = types.first().and_then(|t| parse::type_size(t)).unwrap_or(0);
            let n = match any(&["v2", "v4", "v8"]) {
                Some("v2") => 2,
                Some("v4") => 4,
                Some(_) => 8,
                None => 1,
            };
            if elem * n > 16 {
                return Err(format!(
                    "'{op}' moves {} bits: 256-bit vectors (.v8 of 32-bit, .v4 of 64-bit types) need .global and sm_100 or later, and are not simulated; a vector is at most 128 bits on sm_90 ({sec})",
                    elem * n * 8
                ));
            }
        }
        "membar" => {
            let ok = matches!(mods, ["cta" | "gl" | "sys"])
                || (mods.first() == Some(&"proxy") && proxy_ok(&mods[1..]));
            if !ok {
                return Err(format!(
                    "'{op}': membar takes one level .cta .gl .sys, or .proxy with a proxy kind (PTX ISA 9.7.13.4 membar/fence)"
                ));
            }
        }
        "fence" => {
            let ok = if mods.first() == Some(&"proxy") {
                proxy_ok(&mods[1..])
            } else {
                let known = [
                    "sc",
                    "acq_rel",
                    "acquire",
                    "release",
                    "op_restrict",
                    "mbarrier_init",
                    "sync_restrict::shared::cta",
                    "sync_restrict::shared::cluster",
                ];
                mods.iter()
                    .all(|m| known.contains(m) || FENCE_SCOPES.contains(m))
                    && mods.iter().filter(|m| FENCE_SCOPES.contains(m)).count() == 1
            };
            if !ok {
                return Err(format!(
                    "'{op}': fence is fence{{.sc,.acq_rel}}.scope with scope .cta .cluster .gpu .sys, or fence.proxy.kind (PTX ISA 9.7.13.4 membar/fence)"
                ));
            }
        }
        "vote" | "shfl" if !has("sync") && sm >= 70 && version >= (6, 4) => {
            return Err(format!(
                "'{op}': {name} without .sync is not supported on sm_70 and later targets from PTX ISA 6.4 (this module's .target is sm_{sm}); use {name}.sync with a member mask ({sec})"
            ));
        }
        _ => {}
    }
    Ok(())
}

/// The number of a target (`sm_90a` → 90, `compute_80` → 80); 0 if it has none.
fn target_number(t: &str) -> u32 {
    let d = t
        .strip_prefix("sm_")
        .or_else(|| t.strip_prefix("compute_"))
        .unwrap_or("");
    let digits: String = d.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or(0)
}

/// A `fence.proxy`/`membar.proxy` tail: one proxy kind and its qualifiers.
fn proxy_ok(rest: &[&str]) -> bool {
    rest.iter().filter(|m| PROXY_KINDS.contains(m)).count() == 1
        && rest.iter().all(|m| {
            PROXY_KINDS.contains(m) || PROXY_QUALIFIERS.contains(m) || FENCE_SCOPES.contains(m)
        })
}

/// A hash map with foldhash's fast hasher (the decoder's name tables: short keys, hashed once
/// or twice per operand; SipHash was a sixth of the load).
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// A register name cut into its stem and its number: `%r12` → (`%r`, 12), `%rd0` → (`%rd`,
/// 0); a name without trailing digits, or whose digits are not a number's own spelling (`%r01`,
/// a leading zero) or pass `u32`, is all stem (`%p`, `%r01`). Two names cut the same way only
/// if they are the same name: the stem of a numbered name never ends in a digit.
fn split_reg_name(name: &str) -> (&str, Option<u32>) {
    let b = name.as_bytes();
    let mut at = b.len();
    while at > 0 && b[at - 1].is_ascii_digit() {
        at -= 1;
    }
    let digits = b.len() - at;
    // At most 10 digits without a leading zero (but `0` itself), at most u32::MAX: what
    // `str::parse::<u32>` reads from a run of digits, written once.
    if digits == 0 || digits > 10 || (digits > 1 && b[at] == b'0') {
        return (name, None);
    }
    let mut k = 0u64;
    for &c in &b[at..] {
        k = k * 10 + u64::from(c - b'0');
    }
    match u32::try_from(k) {
        Ok(k) => (&name[..at], Some(k)),
        Err(_) => (name, None),
    }
}

/// The registers one `{ }` block declares sharing a stem ([`split_reg_name`]).
#[derive(Default)]
struct RegStem {
    /// The register named by the stem alone (`%t`).
    bare: Option<u32>,
    /// `stem<N>`: N and the first of its N consecutive registers (`stem0` … `stem{N-1}`).
    /// At most one per block: a second one declares `stem0` again.
    range: Option<(u32, u32)>,
    /// Numbered names declared one by one (`%r7`, or a range whose name ends in a digit):
    /// number → register.
    singles: FastMap<u32, u32>,
}

impl RegStem {
    /// The register numbered `k` (`None`: the bare stem).
    fn get(&self, k: Option<u32>) -> Option<u32> {
        match k {
            None => self.bare,
            Some(k) => match self.range {
                Some((n, base)) if k < n => Some(base + k),
                _ => self.singles.get(&k).copied(),
            },
        }
    }
}

/// A stem of at most 7 bytes as one integer (its bytes, its length in the top byte): the
/// common stems (`%r`, `%rd`, `%f`, `%p`) are found by an integer's hash, not a string's.
fn short_stem(stem: &str) -> Option<u64> {
    let b = stem.as_bytes();
    (b.len() <= 7).then(|| {
        let mut k = (b.len() as u64) << 56;
        for (i, &c) in b.iter().enumerate() {
            k |= u64::from(c) << (8 * i);
        }
        k
    })
}

/// One `{ }` block's registers by stem: a `%r<N>` range is one entry, not N names.
#[derive(Default)]
struct RegScope {
    /// Stems of at most 7 bytes, by [`short_stem`].
    short: FastMap<u64, RegStem>,
    /// The longer stems.
    long: FastMap<String, RegStem>,
}

impl RegScope {
    fn get(&self, stem: &str) -> Option<&RegStem> {
        match short_stem(stem) {
            Some(k) => self.short.get(&k),
            None => self.long.get(stem),
        }
    }

    fn get_mut(&mut self, stem: &str) -> Option<&mut RegStem> {
        match short_stem(stem) {
            Some(k) => self.short.get_mut(&k),
            None => self.long.get_mut(stem),
        }
    }

    /// The entry of `stem`, made empty if the block has none.
    fn entry(&mut self, stem: &str) -> &mut RegStem {
        match short_stem(stem) {
            Some(k) => self.short.entry(k).or_default(),
            None => self.long.entry(stem.to_string()).or_default(),
        }
    }
}

struct Decoder<'a> {
    regs: Vec<RegScope>, // scope stack
    /// Per register: its declared type (the decoder's own: `.u32` special registers, `.u64`
    /// variable addresses).
    tys: Vec<Ty>,
    /// Per register: the line declaring it (0 for the decoder's own).
    decl_lines: Vec<u32>,
    /// Special registers that legacy code may read with 16-bit `mov`/`cvt` (PTX ISA §10.1
    /// %tid, §10.2 %ntid, §10.6 %ctaid, §10.7 %nctaid: "Legacy PTX code that accesses %tid
    /// using 16-bit mov and cvt instructions are supported").
    legacy16: Vec<bool>,
    /// Registers declared (and the decoder's own) so far: the index of the next one in
    /// `tys`, `decl_lines`, `legacy16` and `dense`.
    nregs: u32,
    /// Per declared register: its index in the program's register file, given when an
    /// instruction first names it (`u32::MAX`: never named yet). A register no instruction
    /// names takes no room in the register file (nvcc declares `%f<8650>` for a kernel naming
    /// about a third of them: issue #31).
    dense: Vec<u32>,
    /// Per register of the program's register file: its declared register (index into `tys`).
    order: Vec<u32>,
    specials: FastMap<Special, u32>,
    shared_syms: HashMap<String, u32>,
    /// [`Program::shared_refs`] so far, and the index of the instruction being decoded.
    shared_refs: Vec<(u32, u32)>,
    at: u32,
    local_syms: HashMap<String, u32>,
    global_syms: HashMap<String, usize>,
    global_regs: HashMap<usize, u32>,
    params: FastMap<String, usize>,
    param_info: &'a mut Vec<ParamInfo>,
    /// Labels by [`scoped_label`] key (a label in a `{ }` block is local to it: Triton's inline
    /// asm repeats `waitLoop:` in one block per wait, PTX ISA §4.4 / §11.1 scopes).
    labels: FastMap<String, u32>,
    /// The `{ }` blocks open at the instruction being decoded, outermost first (0 = the body).
    scopes: Vec<u32>,
    /// Registers loaded from 64-bit parameters: register → parameter index.
    param_regs: HashMap<u32, usize>,
    /// The target's number (90 for `sm_90a`; 0 if none or unknown), for the forms a target
    /// no longer supports.
    sm: u32,
    /// The module's `.version` (major, minor); (0, 0) if none.
    version: (u32, u32),
    /// The module's `.target` as written (`sm_90a`; empty if none), for the version/target
    /// gates ([`crate::sim::instr::GATES`]).
    target: String,
    /// The instruction being decoded, as written (for messages; shortened when shown).
    text: parse::Quoted<'a>,
    /// Its opcode with modifiers (`add.s32`).
    opname: String,
    /// The body's `.param` names (a `call`'s arguments and return values).
    call_params: std::collections::HashSet<String>,
    /// Each opcode text checked so far (`add.s32`, the parts joined by dots: parts hold no
    /// dot, so two opcodes join alike only if they are alike) and its row of [`FORMS`]
    /// ([`Decoder::check_form`]).
    formed: FastMap<String, Option<usize>>,
    /// Each `mma` opcode text decoded so far and its [`MmaKind`] ([`mma_kind`] is a pure
    /// function of the opcode text and the target; a kernel has two or three such texts).
    mma_kinds: Vec<(String, MmaKind)>,
    /// The declared register of each element of an `mma`'s D, A, B and C
    /// ([`Decoder::mma_reg_types`]), one buffer for every `mma`.
    mma_found: Vec<Option<u32>>,
}

/// Pass 1 of [`decode`]: every label's instruction index, by [`scoped_label`] key (blocks
/// numbered in the order they open, as pass 2 numbers them).
fn labels_of(kernel: &Kernel) -> Result<FastMap<String, u32>, DecodeError> {
    let mut labels = FastMap::default();
    let mut n = 0u32;
    let (mut stack, mut blocks) = (vec![0u32], 0u32);
    for s in &kernel.body {
        match s {
            Stmt::Open => {
                blocks += 1;
                stack.push(blocks);
            }
            Stmt::Close => {
                stack.pop();
            }
            Stmt::Label(l, line)
                if labels
                    .insert(scoped_label(l, *stack.last().unwrap_or(&0)), n)
                    .is_some() =>
            {
                return Err(derr(*line, format!("label '{l}' is defined twice")));
            }
            Stmt::Inst(_) => n += 1,
            _ => {}
        }
    }
    Ok(labels)
}

/// The key of label `l` defined in block `b` (0: the kernel body, whose labels keep their
/// names; a NUL cannot be in a PTX name).
fn scoped_label(l: &str, b: u32) -> String {
    if b == 0 {
        l.to_string()
    } else {
        format!("{l}\0{b}")
    }
}

fn derr(line: u32, message: impl Into<String>) -> DecodeError {
    DecodeError {
        line,
        message: message.into(),
    }
}

/// The error for an instruction the interpreter does not run (or a form of it), naming its line
/// and full opcode: one wording for every instruction family's decoder.
fn unsupported_inst(i: &parse::Inst) -> DecodeError {
    derr(
        i.line,
        format!(
            "unsupported instruction '{}' (see docs/ptx.md for the supported subset)",
            i.opcode.join(".")
        ),
    )
}

/// An instruction's opcode as the family decoders read it, split once per instruction: the
/// name (`ld`), its modifiers (`global`, `v4`, `f32`, …) and the last type suffix among them.
struct Opc<'i> {
    inst: &'i parse::Inst,
    name: &'i str,
    parts: OpcParts<'i>,
    ty: Option<Ty>,
}

/// An opcode's parts: in place up to [`OpcParts::INLINE`] (every opcode PTX writes), else
/// in a list (no allocation per instruction).
// On the stack for one instruction: its size is the point (no allocation), not a cost.
#[allow(clippy::large_enum_variant)]
enum OpcParts<'i> {
    Inline([&'i str; OpcParts::INLINE], usize),
    Heap(Vec<&'i str>),
}

impl<'i> OpcParts<'i> {
    const INLINE: usize = 16;

    fn of(opcode: &'i [parse::Name]) -> OpcParts<'i> {
        if opcode.len() <= Self::INLINE {
            let mut a = [""; Self::INLINE];
            for (d, p) in a.iter_mut().zip(opcode) {
                *d = p.as_str();
            }
            OpcParts::Inline(a, opcode.len())
        } else {
            OpcParts::Heap(opcode.iter().map(parse::Name::as_str).collect())
        }
    }

    fn as_slice(&self) -> &[&'i str] {
        match self {
            OpcParts::Inline(a, n) => &a[..*n],
            OpcParts::Heap(v) => v,
        }
    }
}

impl<'i> Opc<'i> {
    fn new(inst: &'i parse::Inst) -> Opc<'i> {
        let parts = OpcParts::of(&inst.opcode);
        let p = parts.as_slice();
        let name = p.first().copied().unwrap_or("");
        let ty = last_ty(p.get(1..).unwrap_or(&[]));
        Opc {
            inst,
            name,
            parts,
            ty,
        }
    }

    /// The modifiers after the name.
    fn mods(&self) -> &[&'i str] {
        self.parts.as_slice().get(1..).unwrap_or(&[])
    }

    fn has(&self, m: &str) -> bool {
        self.mods().contains(&m)
    }

    /// The type suffix, or an error naming the instruction.
    fn need_ty(&self) -> Result<Ty, DecodeError> {
        self.ty.ok_or_else(|| {
            derr(
                self.inst.line,
                format!("'{}' has no type suffix", self.inst.opcode.join(".")),
            )
        })
    }

    fn unsupported(&self) -> DecodeError {
        unsupported_inst(self.inst)
    }
}

/// The last type suffix among `ms`.
fn last_ty(ms: &[&str]) -> Option<Ty> {
    ms.iter().rev().find_map(|m| Ty::parse(m))
}

/// Names the kernels of a module, for error messages: the first few, then how many more
/// ([`crate::text::list`]).
pub fn kernel_names(m: &Module) -> String {
    crate::text::list(m.kernels.iter().map(|k| k.name.as_str()))
}

/// The kernel's variables laid out (PTX ISA §5.1): shared ones from byte 0, module scope then
/// body scope, static ones in order and `.extern` arrays after them; `.global`/`.const` ones
/// as buffers; `.local` ones in each thread's frame.
struct Layout {
    shared_syms: HashMap<String, u32>,
    static_smem: u32,
    globals: Vec<GlobalVar>,
    global_syms: HashMap<String, usize>,
    local_syms: HashMap<String, u32>,
    local_frame: u32,
    dynamic_smem_offset: Option<u32>,
}

/// Lays out the variables of `kernel` in `module` ([`Layout`]).
fn lay_out(module: &Module, kernel: &Kernel) -> Result<Layout, DecodeError> {
    // Shared variables: module scope then body scope, static ones in order, extern at the end.
    let limits = Arch::Sm90.limits();
    let mut shared_syms = HashMap::new();
    let mut static_smem = 0u32;
    let mut extern_align = 0u32;
    let mut externs = Vec::new();
    let body_vars = kernel.body.iter().filter_map(|s| match s {
        Stmt::Var(v) => Some(v),
        _ => None,
    });
    let mut globals = Vec::new();
    let mut global_syms = HashMap::new();
    let mut local_syms = HashMap::new();
    let mut local_frame = 0u32;
    let mut const_bytes = 0u64;
    // Body variables share one name space here (module names are unique, parse.rs).
    let mut body_names: HashMap<&str, u32> = HashMap::new();
    for v in body_vars.clone() {
        if let Some(first) = body_names.insert(v.name.as_str(), v.line) {
            return Err(derr(
                v.line,
                format!(
                    "variable '{}' is declared twice in kernel '{}' (first at line {first}): a name is declared once",
                    v.name, kernel.name
                ),
            ));
        }
    }
    for v in module.vars.iter().chain(body_vars) {
        match v.space.as_str() {
            "shared" => match v.size {
                Some(sz) => {
                    let a = v.align.max(1);
                    let at = static_smem.checked_next_multiple_of(a);
                    let end = at.and_then(|at| at.checked_add(u32::try_from(sz).ok()?));
                    let (Some(at), Some(end)) =
                        (at, end.filter(|&e| e <= limits.smem_per_block_bytes))
                    else {
                        return Err(derr(
                            v.line,
                            format!(
                                "shared variable '{}' of {sz} bytes (.align {a}) takes static shared memory past {} bytes, sm_90's shared memory per block (CUDA C++ Programming Guide, Table 31)",
                                v.name, limits.smem_per_block_bytes
                            ),
                        ));
                    };
                    shared_syms.insert(v.name.clone(), at);
                    static_smem = end;
                }
                None => {
                    extern_align = extern_align.max(v.align.max(16));
                    externs.push(v);
                }
            },
            "global" | "const" => {
                let size = v.size.unwrap_or(0);
                if size > parse::GLOBAL_VAR_LIMIT {
                    return Err(derr(
                        v.line,
                        format!(
                            "global variable '{}' of {size} bytes is too large (at most {} bytes, parse::GLOBAL_VAR_LIMIT)",
                            v.name,
                            parse::GLOBAL_VAR_LIMIT
                        ),
                    ));
                }
                if v.space == "const" {
                    const_bytes = const_bytes.saturating_add(size);
                    if const_bytes > u64::from(limits.const_bytes) {
                        return Err(derr(
                            v.line,
                            format!(
                                "constant variable '{}' brings the module's .const variables to {const_bytes} bytes, past {} bytes of constant memory (CUDA C++ Programming Guide, Table 31)",
                                v.name, limits.const_bytes
                            ),
                        ));
                    }
                }
                let mut bytes = v.init.clone();
                bytes.truncate(usize::try_from(size).unwrap_or(usize::MAX));
                global_syms.insert(v.name.clone(), globals.len());
                globals.push(GlobalVar {
                    name: v.name.clone(),
                    bytes,
                    size,
                    read_only: v.space == "const",
                });
            }
            "local" => {
                // Each thread's frame: the variables in declaration order, each aligned.
                let a = v.align.max(1);
                let size = v.size.unwrap_or(0);
                let at = local_frame
                    .checked_next_multiple_of(a)
                    .filter(|&o| u64::from(o) + size <= u64::from(LOCAL_FRAME_LIMIT));
                let Some(at) = at else {
                    return Err(derr(
                        v.line,
                        format!(
                            "local variable '{}' of {size} bytes makes the frame exceed {LOCAL_FRAME_LIMIT} bytes per thread (CUDA's local-memory limit)",
                            v.name
                        ),
                    ));
                };
                local_syms.insert(v.name.clone(), at);
                local_frame = at + size as u32;
            }
            _ => {}
        }
    }
    let dynamic_smem_offset = if externs.is_empty() {
        None
    } else {
        let o = static_smem
            .checked_next_multiple_of(extern_align)
            .filter(|&o| o <= limits.smem_per_block_bytes)
            .unwrap_or(limits.smem_per_block_bytes);
        for v in &externs {
            shared_syms.insert(v.name.clone(), o);
        }
        Some(o)
    };
    Ok(Layout {
        shared_syms,
        static_smem,
        globals,
        global_syms,
        local_syms,
        local_frame,
        dynamic_smem_offset,
    })
}

/// Decodes `kernel` of `module`.
///
/// # Errors
/// [`DecodeError`] naming the line, for: an unsupported instruction; what the PTX ISA forbids
/// (an operand count other than the instruction's syntax, two state spaces or a space the
/// instruction does not access (a write to `.const`), a modifier that is not a PTX type or is
/// given twice, a register whose declared type does not agree with the instruction (§9.4), a
/// guard that is not `.pred` (§9.3), a write to a special register (§10), a register declared
/// twice in one block, an `mma` layout other than `.row.col`); an undeclared register, an
/// unknown label or variable; static shared or constant memory past sm_90's limits.
pub fn decode(module: &Module, kernel: &Kernel) -> Result<Program, DecodeError> {
    decode_kernel(module, kernel, true)
}

/// [`decode`] of a kernel the caller owns: the program's [`Program::texts`] are the kernel's
/// instruction texts, moved (not copied) out of it.
///
/// # Errors
/// As [`decode`].
pub fn decode_owned(module: &Module, mut kernel: Kernel) -> Result<Program, DecodeError> {
    let mut p = decode_kernel(module, &kernel, false)?;
    p.texts = std::mem::take(&mut kernel.body)
        .into_iter()
        .filter_map(|s| match s {
            Stmt::Inst(i) => Some(i.text),
            _ => None,
        })
        .collect();
    Ok(p)
}

/// [`decode`], the texts copied into [`Program::texts`] when `want_texts` (else left empty).
fn decode_kernel(
    module: &Module,
    kernel: &Kernel,
    want_texts: bool,
) -> Result<Program, DecodeError> {
    // Parameters, each at the next multiple of its alignment, within CUDA's limit.
    let mut params = Vec::new();
    let mut off = 0u32;
    for p in &kernel.params {
        let at = off.checked_next_multiple_of(p.align.max(1));
        let end = at.and_then(|a| a.checked_add(p.size));
        let (Some(at), Some(end)) = (at, end.filter(|&e| e <= PARAM_LIMIT)) else {
            return Err(derr(
                kernel.line,
                format!(
                    "parameter '{}' (.align {}, {} bytes) ends past {PARAM_LIMIT} bytes, CUDA's limit for a kernel's parameters",
                    p.name, p.align, p.size
                ),
            ));
        };
        params.push(ParamInfo {
            name: p.name.clone(),
            ty: p.ty.clone(),
            offset: at,
            size: p.size,
            pointer: p.ptr,
            align: p.align,
            reads: Vec::new(),
        });
        off = end;
    }
    let param_bytes = off;
    reads::mark_reads(kernel, &mut params);
    let Layout {
        shared_syms,
        static_smem,
        globals,
        global_syms,
        local_syms,
        local_frame,
        dynamic_smem_offset,
    } = lay_out(module, kernel)?;

    let mut shared_names: Vec<(u32, String)> =
        shared_syms.iter().map(|(n, &o)| (o, n.clone())).collect();
    shared_names.sort();
    let mut param_info = params;
    let mut d = Decoder::new(
        module,
        kernel,
        shared_syms,
        local_syms,
        global_syms,
        &mut param_info,
    );
    // Pass 1: labels → instruction indices.
    d.labels = labels_of(kernel)?;
    let mut blocks = 0u32;
    // Pass 2: instructions.
    let mut insts = Vec::new();
    let mut texts = Vec::new();
    for s in &kernel.body {
        match s {
            Stmt::Open => {
                d.regs.push(RegScope::default());
                blocks += 1;
                d.scopes.push(blocks);
            }
            Stmt::Close => {
                d.regs.pop();
                d.scopes.pop();
            }
            Stmt::Reg(r) => {
                for (name, count) in &r.names {
                    match count {
                        None => d.declare(name, r.ty, r.line)?,
                        Some(n) => d.declare_range(name, *n, r.ty, r.line)?,
                    }
                }
            }
            Stmt::Inst(i) => {
                d.at = insts.len() as u32;
                insts.push(d.inst(i)?);
                if want_texts {
                    texts.push(i.text.clone());
                }
            }
            Stmt::Label(..) | Stmt::Var(_) | Stmt::CallParam(..) => {}
        }
    }
    let specials: Vec<(u32, Special)> = d.specials.iter().map(|(s, r)| (*r, *s)).collect();
    let global_addrs: Vec<(u32, usize)> = d.global_regs.iter().map(|(g, r)| (*r, *g)).collect();
    check_nregs(kernel, d.nregs)?;
    let nregs = d.order.len() as u32;
    let shared_refs = std::mem::take(&mut d.shared_refs);
    let (param_regs, target_sm) = (std::mem::take(&mut d.param_regs), d.sm);
    drop(d);
    mark_pointers(&insts, &param_regs, &mut param_info);
    let reconverge = super::cfg::reconvergence(&insts);
    Ok(Program {
        name: kernel.name.clone(),
        insts,
        texts,
        nregs,
        specials,
        global_addrs,
        params: param_info,
        param_bytes,
        static_smem,
        dynamic_smem_offset,
        local_frame,
        globals,
        reqntid: kernel.reqntid,
        maxntid: kernel.maxntid,
        reqnctapercluster: kernel.reqnctapercluster,
        maxclusterrank: kernel.maxclusterrank,
        explicitcluster: kernel.explicitcluster,
        minnctapersm: kernel.minnctapersm,
        reconverge,
        shared_names,
        shared_refs,
        sources: source_refs(module, kernel),
        target_sm,
    })
}

/// The flat register file's width must stay within [`MAX_NREGS`].
fn check_nregs(kernel: &Kernel, nregs: u32) -> Result<(), DecodeError> {
    if nregs > MAX_NREGS {
        return Err(derr(
            kernel.line,
            format!(
                "kernel '{}' needs {nregs} registers per lane, more than {MAX_NREGS} (decode::MAX_NREGS)",
                kernel.name
            ),
        ));
    }
    Ok(())
}

/// Each instruction line's `.loc` with its file's name: a `.loc` naming a file index no `.file`
/// declares gives `file N` (the line and column are still right).
fn source_refs(
    module: &Module,
    kernel: &Kernel,
) -> std::collections::BTreeMap<u32, super::lineinfo::SourceRef> {
    use super::lineinfo::{SourcePos, SourceRef};
    use std::sync::Arc;
    let mut names: std::collections::BTreeMap<u32, Arc<str>> = module
        .files
        .iter()
        .map(|(&i, n)| (i, Arc::from(n.as_str())))
        .collect();
    let mut named = |p: SourcePos| SourceRef {
        file: names
            .entry(p.file)
            .or_insert_with(|| Arc::from(format!("file {}", p.file)))
            .clone(),
        line: p.line,
        column: p.column,
        inlined_at: None,
    };
    kernel
        .source
        .iter()
        .map(|(&line, l)| {
            let mut r = named(l.pos);
            r.inlined_at = l.inlined_at.map(|p| Box::new(named(p)));
            (line, r)
        })
        .collect()
}

impl<'a> Decoder<'a> {
    /// A decoder for `kernel`'s body, with `module`'s target and the symbols [`lay_out`] placed;
    /// `param_info` holds the kernel's parameters in order (their reads are marked later).
    fn new(
        module: &'a Module,
        kernel: &Kernel,
        shared_syms: HashMap<String, u32>,
        local_syms: HashMap<String, u32>,
        global_syms: HashMap<String, usize>,
        param_info: &'a mut Vec<ParamInfo>,
    ) -> Self {
        let mut d = Decoder {
            regs: vec![RegScope::default()],
            tys: Vec::new(),
            decl_lines: Vec::new(),
            legacy16: Vec::new(),
            nregs: 0,
            dense: Vec::new(),
            order: Vec::new(),
            specials: FastMap::default(),
            shared_syms,
            shared_refs: Vec::new(),
            at: 0,
            local_syms,
            global_syms,
            global_regs: HashMap::new(),
            params: FastMap::default(),
            param_info,
            labels: FastMap::default(),
            scopes: vec![0],
            param_regs: HashMap::new(),
            sm: module.target.as_deref().map_or(0, target_number),
            version: module.version.unwrap_or((0, 0)),
            target: module.target.clone().unwrap_or_default(),
            text: parse::Quoted::default(),
            opname: String::new(),
            call_params: kernel
                .body
                .iter()
                .filter_map(|s| match s {
                    Stmt::CallParam(n, _) => Some(n.clone()),
                    _ => None,
                })
                .collect(),
            formed: FastMap::default(),
            mma_kinds: Vec::new(),
            mma_found: Vec::new(),
        };
        for (i, p) in d.param_info.iter().enumerate() {
            d.params.insert(p.name.clone(), i);
        }
        d
    }

    /// Notes that the instruction being decoded names the `.shared` variable at byte `offset`
    /// ([`Program::shared_refs`]).
    fn shared_ref(&mut self, offset: u32) {
        let r = (self.at, offset);
        let this = self.shared_refs.iter().rev().take_while(|x| x.0 == self.at);
        if !this.clone().any(|&x| x == r) {
            self.shared_refs.push(r);
        }
    }

    /// A new declared register (not yet in the register file: [`Decoder::named`]).
    fn new_decl(&mut self, ty: Ty, legacy16: bool) -> u32 {
        let r = self.nregs;
        self.nregs = self.nregs.saturating_add(1);
        self.tys.push(ty);
        self.decl_lines.push(0);
        self.legacy16.push(legacy16);
        self.dense.push(u32::MAX);
        r
    }

    /// A new register of the decoder's own (a special register, a variable's address), in
    /// the register file at once.
    fn own_reg(&mut self, ty: Ty, legacy16: bool) -> u32 {
        let d = self.new_decl(ty, legacy16);
        self.named(d)
    }

    /// The register-file index of declared register `d`, given on its first use.
    fn named(&mut self, d: u32) -> u32 {
        match self.dense.get(d as usize) {
            Some(&r) if r != u32::MAX => r,
            Some(_) => {
                let r = self.order.len() as u32;
                self.order.push(d);
                self.dense[d as usize] = r;
                r
            }
            None => d,
        }
    }

    /// The declared type of register-file index `r`.
    fn ty_of(&self, r: u32) -> Option<Ty> {
        let d = *self.order.get(r as usize)?;
        self.tys.get(d as usize).copied()
    }

    /// Declares `name` of type `ty` in the innermost block. A special register's name, or a
    /// name the block already declares, is an error.
    fn declare(&mut self, name: &str, ty: Ty, line: u32) -> Result<(), DecodeError> {
        if is_special_register(name) {
            return Err(derr(
                line,
                format!(
                    "'{name}' is a special register: special registers are predefined and read-only, never declared (PTX ISA §10 Special Registers)"
                ),
            ));
        }
        let Some(top) = self.regs.last_mut() else {
            self.new_decl(ty, false);
            if let Some(l) = self.decl_lines.last_mut() {
                *l = line;
            }
            return Ok(());
        };
        let (stem, k) = split_reg_name(name);
        let r = self.nregs;
        let set = |e: &mut RegStem| match k {
            None => e.bare = Some(r),
            Some(k) => {
                e.singles.insert(k, r);
            }
        };
        // The block's entry for the stem: the name taken or free.
        match top.get_mut(stem) {
            Some(e) => match e.get(k) {
                Some(first) => return Err(self.declared_twice(name, first, line)),
                None => set(e),
            },
            None => set(top.entry(stem)),
        }
        self.new_decl(ty, false);
        if let Some(l) = self.decl_lines.last_mut() {
            *l = line;
        }
        Ok(())
    }

    /// The error for `name` declared again in a block that has it as register `first_reg`.
    fn declared_twice(&self, name: &str, first_reg: u32, line: u32) -> DecodeError {
        let first = self
            .decl_lines
            .get(first_reg as usize)
            .copied()
            .unwrap_or(0);
        derr(
            line,
            format!(
                "register '{name}' is declared twice in one block (first at line {first}): a name is declared once per block, an inner {{ }} block may declare it again (PTX ISA §5.1.1 Register State Space)"
            ),
        )
    }

    /// Declares `%r<N>`'s registers `%r0` … `%r{N-1}`: what [`Decoder::declare`] of each in
    /// turn does, and the same first error, as one entry of the block (`N` consecutive
    /// registers). A name ending in a digit (`%r1<10>`: `%r10` …) is declared name by name.
    fn declare_range(&mut self, name: &str, n: u32, ty: Ty, line: u32) -> Result<(), DecodeError> {
        use std::fmt::Write as _;
        if n == 0 {
            return Ok(());
        }
        let mut buf = String::with_capacity(name.len() + 6);
        let mut at = |k: u32| {
            buf.clear();
            buf.push_str(name);
            let _ = write!(buf, "{k}");
            buf.clone()
        };
        if name.ends_with(|c: char| c.is_ascii_digit()) || self.regs.is_empty() {
            for k in 0..n {
                self.declare(&at(k), ty, line)?;
            }
            return Ok(());
        }
        // A special register's name ending in digits ends in a number below 65 (`%clock64`,
        // `%pm7_64`, `%envreg31`, `%reserved_smem_offset_1`): only `name0` … `name64` can be
        // one.
        let special = (0..n.min(65)).find(|&k| is_special_register(&at(k)));
        let top = self.regs.last().and_then(|t| t.get(name));
        // The first number this block has already: 0 if it has a range, else its least
        // single below n.
        let taken = top.and_then(|e| match e.range {
            Some((_, base)) => Some((0, base)),
            None => e
                .singles
                .iter()
                .filter(|(k, _)| **k < n)
                .min_by_key(|(k, _)| **k)
                .map(|(&k, &r)| (k, r)),
        });
        match (special, taken) {
            (Some(s), t) if t.is_none_or(|(k, _)| s <= k) => {
                // `declare` says why.
                return self.declare(&at(s), ty, line);
            }
            (_, Some((k, r))) => return Err(self.declared_twice(&at(k), r, line)),
            _ => {}
        }
        let base = self.nregs;
        self.nregs = self.nregs.saturating_add(n);
        let len = self.tys.len() + n as usize;
        self.tys.resize(len, ty);
        self.decl_lines.resize(len, line);
        self.legacy16.resize(len, false);
        self.dense.resize(len, u32::MAX);
        if let Some(top) = self.regs.last_mut() {
            top.entry(name).range = Some((n, base));
        }
        Ok(())
    }

    /// The register-file index of the declared register `name` (the innermost block's),
    /// given now if no instruction named it before.
    fn lookup(&mut self, name: &str) -> Option<u32> {
        let (stem, k) = split_reg_name(name);
        let d = self
            .regs
            .iter()
            .rev()
            .find_map(|s| s.get(stem).and_then(|e| e.get(k)))?;
        Some(self.named(d))
    }

    fn special(&mut self, name: &str) -> Option<u32> {
        let dim = |s: &str| match s {
            "x" => Some(0u8),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        let sp = if let Some((base, d)) = name.split_once('.') {
            let d = dim(d)?;
            match base {
                "%tid" => Special::Tid(d),
                "%ntid" => Special::Ntid(d),
                "%ctaid" => Special::Ctaid(d),
                "%nctaid" => Special::Nctaid(d),
                "%cluster_ctaid" => Special::ClusterCtaid(d),
                "%cluster_nctaid" => Special::ClusterNctaid(d),
                "%clusterid" => Special::Clusterid(d),
                "%nclusterid" => Special::Nclusterid(d),
                _ => return None,
            }
        } else {
            match name {
                "%laneid" => Special::Laneid,
                "%warpid" => Special::Warpid,
                "%nwarpid" => Special::Nwarpid,
                "%lanemask_eq" => Special::Lanemask(0),
                "%lanemask_lt" => Special::Lanemask(1),
                "%lanemask_le" => Special::Lanemask(2),
                "%lanemask_gt" => Special::Lanemask(3),
                "%lanemask_ge" => Special::Lanemask(4),
                "%cluster_ctarank" => Special::ClusterCtarank,
                "%cluster_nctarank" => Special::ClusterNctarank,
                "%is_explicit_cluster" => Special::IsExplicitCluster,
                _ => return None,
            }
        };
        if let Some(r) = self.specials.get(&sp) {
            return Some(*r);
        }
        // Every special register modelled is .u32 but %is_explicit_cluster, a .pred (PTX ISA
        // §10).
        let legacy = matches!(
            sp,
            Special::Tid(_) | Special::Ntid(_) | Special::Ctaid(_) | Special::Nctaid(_)
        );
        let ty = if sp == Special::IsExplicitCluster {
            Ty::Pred
        } else {
            Ty::U(32)
        };
        let r = self.own_reg(ty, legacy);
        self.specials.insert(sp, r);
        Some(r)
    }

    fn reg(&mut self, name: &str, line: u32) -> Result<u32, DecodeError> {
        if let Some(r) = self.lookup(name) {
            return Ok(r);
        }
        if let Some(r) = self.special(name) {
            return Ok(r);
        }
        if name.starts_with('%') {
            return Err(derr(
                line,
                format!(
                    "register '{name}' is not declared (or is an unsupported special register)"
                ),
            ));
        }
        Err(derr(line, format!("expected a register, found '{name}'")))
    }

    /// Checks register `r` (written `name`) against `want` (PTX ISA §9.4).
    fn check(&self, r: u32, name: &str, want: Want, line: u32) -> Result<(), DecodeError> {
        let Some(ty) = self.ty_of(r) else {
            return Ok(());
        };
        // A register of the very type asked agrees under both rules (the common case).
        if matches!(want, Want::Ty(t) | Want::Wide(t) if t == ty) || agrees(want, ty) {
            return Ok(());
        }
        let (t, wide) = match want {
            Want::Ty(t) => (t, false),
            Want::Wide(t) => (t, true),
        };
        // Legacy 16-bit reads of %tid, %ntid, %ctaid, %nctaid (PTX ISA §10).
        if self
            .order
            .get(r as usize)
            .and_then(|&d| self.legacy16.get(d as usize))
            == Some(&true)
            && t.bits() == 16
            && matches!(t, Ty::B(_) | Ty::U(_) | Ty::S(_))
        {
            return Ok(());
        }
        let rule = if wide {
            "PTX ISA §9.4.1: ld, st and cvt take a register of the type's size or wider, a wider one of bit-size type, or of integer type for a bit-size or integer type"
        } else {
            "PTX ISA §9.4: .bN agrees with every type of N bits, .sN and .uN with each other, a float type and .pred only with themselves"
        };
        Err(derr(
            line,
            format!(
                "'{name}' is declared .{}, which does not agree with .{} in '{}' ({rule})",
                ty.name(),
                t.name(),
                self.text
            ),
        ))
    }

    /// A source operand where `want` is asked: a register (checked), a special register, a
    /// variable's address, or an immediate (a float immediate converted to an f32/f64 `want`,
    /// an integer literal in a float instruction taken as its value, PTX ISA §4.5.2).
    fn src(&mut self, o: &Operand, want: Want, line: u32) -> Result<Src, DecodeError> {
        let t = match want {
            Want::Ty(t) | Want::Wide(t) => t,
        };
        Ok(match (o, t) {
            (Operand::F64(b), Ty::F32) => Src::Imm((f64::from_bits(*b) as f32).to_bits() as u64),
            (Operand::F32(b), Ty::F64) => Src::Imm((f32::from_bits(*b) as f64).to_bits()),
            (Operand::Int(v), Ty::F32 | Ty::F64) => Src::Imm(super::types::from_f64(t, *v as f64)),
            (Operand::Int(v), _) => Src::Imm(*v as u64),
            (Operand::F32(b), _) => Src::Imm(*b as u64),
            (Operand::F64(b), _) => Src::Imm(*b),
            (Operand::Name(n), _) => {
                if let Some(r) = self.lookup(n).or_else(|| self.special(n)) {
                    self.check(r, n, want, line)?;
                    Src::Reg(r)
                } else if let Some(&o) = self.shared_syms.get(n.as_str()) {
                    self.shared_ref(o);
                    Src::Imm(o as u64)
                } else if let Some(&o) = self.local_syms.get(n.as_str()) {
                    Src::Imm(o as u64)
                } else if let Some(&p) = self.params.get(n.as_str()) {
                    // A kernel parameter's address in the parameter space (`mov.b64 %rd,
                    // param`; `cvta.param` keeps it): its byte offset in the parameter buffer,
                    // which `cp.async.bulk.tensor` and `prefetch.tensormap` take as a tensor
                    // map's address.
                    Src::Imm(self.param_info[p].offset as u64)
                } else if let Some(&g) = self.global_syms.get(n.as_str()) {
                    let r = self.global_reg(g);
                    self.check(r, n, want, line)?;
                    Src::Reg(r)
                } else if n.starts_with('%') {
                    return Err(derr(
                        line,
                        format!(
                            "register '{n}' is not declared (or is an unsupported special register)"
                        ),
                    ));
                } else {
                    return Err(derr(line, format!("unknown name '{n}'")));
                }
            }
            (o, _) => {
                return Err(derr(
                    line,
                    format!(
                        "expected a register or a number, found '{o}' in '{}'",
                        self.text
                    ),
                ));
            }
        })
    }

    fn global_reg(&mut self, g: usize) -> u32 {
        if let Some(r) = self.global_regs.get(&g) {
            return *r;
        }
        // A variable's address is a 64-bit value.
        let r = self.own_reg(Ty::U(64), false);
        self.global_regs.insert(g, r);
        r
    }

    /// A destination register where `want` is asked. Special registers are read-only.
    fn dst(&mut self, o: &Operand, want: Want, line: u32) -> Result<u32, DecodeError> {
        match o {
            Operand::Name(n) => {
                // One lookup: a declared name, else a special register (refused) or the
                // error `reg` gives.
                let r = match self.lookup(n) {
                    Some(r) => r,
                    None if is_special_register(n) => {
                        return Err(derr(
                            line,
                            format!(
                                "'{n}' is a special register, which is read-only (PTX ISA §10 Special Registers): it cannot be the destination of '{}'",
                                self.opname
                            ),
                        ));
                    }
                    None => self.reg(n, line)?,
                };
                self.check(r, n, want, line)?;
                Ok(r)
            }
            _ => Err(derr(
                line,
                format!(
                    "expected a destination register, found '{o}' in '{}'",
                    self.text
                ),
            )),
        }
    }

    /// A predicate source: `%p`, `!%p` or an immediate (0 false, else true).
    fn pred(&mut self, o: &Operand, line: u32) -> Result<(Src, bool), DecodeError> {
        match o {
            Operand::Not(n) => Ok((
                self.src(&Operand::Name(n.clone()), Want::Ty(Ty::Pred), line)?,
                true,
            )),
            Operand::Int(v) => Ok((Src::Imm((*v != 0) as u64), false)),
            o => Ok((self.src(o, Want::Ty(Ty::Pred), line)?, false)),
        }
    }

    fn addr(&mut self, o: &Operand, line: u32) -> Result<Addr, DecodeError> {
        match o {
            Operand::Address(base, off) => {
                let base = match base {
                    None => Src::Imm(0),
                    Some(n) => {
                        if let Some(r) = self.lookup(n) {
                            // An address register holds a 32- or 64-bit integer (PTX ISA
                            // §6.4.1 Addresses as Operands).
                            let ty = self.ty_of(r).unwrap_or(Ty::U(64));
                            if ty == Ty::Pred || ty.is_float() || ty.bits() < 32 {
                                return Err(derr(
                                    line,
                                    format!(
                                        "'{n}' is declared .{}: an address register holds a 32- or 64-bit integer (PTX ISA §6.4.1 Addresses as Operands), in '{}'",
                                        ty.name(),
                                        self.text
                                    ),
                                ));
                            }
                            Src::Reg(r)
                        } else if let Some(&o) = self.shared_syms.get(n.as_str()) {
                            self.shared_ref(o);
                            Src::Imm(o as u64)
                        } else if let Some(&o) = self.local_syms.get(n.as_str()) {
                            Src::Imm(o as u64)
                        } else if let Some(&p) = self.params.get(n.as_str()) {
                            Src::Imm(self.param_info[p].offset as u64)
                        } else if self.call_params.contains(n.as_str()) {
                            Src::Imm(0)
                        } else if let Some(&g) = self.global_syms.get(n.as_str()) {
                            Src::Reg(self.global_reg(g))
                        } else {
                            return Err(derr(line, format!("unknown name '{n}' in an address")));
                        }
                    }
                };
                Ok(Addr { base, offset: *off })
            }
            _ => Err(derr(
                line,
                format!(
                    "expected an address [reg+offset], found '{o}' in '{}'",
                    self.text
                ),
            )),
        }
    }

    /// Destinations of a vector or scalar operand (`None` for `_`), each checked against
    /// `want`.
    fn vec_dsts(
        &mut self,
        o: &Operand,
        want: Want,
        line: u32,
    ) -> Result<Vec<Option<u32>>, DecodeError> {
        match o {
            Operand::Vector(v) => v
                .iter()
                .map(|e| match e {
                    Operand::Sink => Ok(None),
                    e => self.dst(e, want, line).map(Some),
                })
                .collect(),
            Operand::Sink => Ok(vec![None]),
            o => Ok(vec![Some(self.dst(o, want, line)?)]),
        }
    }

    fn vec_srcs(&mut self, o: &Operand, want: Want, line: u32) -> Result<Vec<Src>, DecodeError> {
        match o {
            Operand::Vector(v) => v.iter().map(|e| self.src(e, want, line)).collect(),
            o => Ok(vec![self.src(o, want, line)?]),
        }
    }

    fn inst(&mut self, i: &'a parse::Inst) -> Result<Inst, DecodeError> {
        let line = i.line;
        self.text = parse::Quoted(i.text.trim_end_matches(';'));
        // The opcode text in the decoder's one buffer (no allocation per instruction).
        self.opname.clear();
        for (k, p) in i.opcode.iter().enumerate() {
            if k > 0 {
                self.opname.push('.');
            }
            self.opname.push_str(p);
        }
        let guard = match &i.guard {
            Some((p, neg)) => {
                let r = self.reg(p, line)?;
                let ty = self.ty_of(r).unwrap_or(Ty::Pred);
                if ty != Ty::Pred {
                    return Err(derr(
                        line,
                        format!(
                            "guard '@{}{p}' is declared .{}: a guard predicate is a .pred register (PTX ISA §9.3 Predicated Execution)",
                            if *neg { "!" } else { "" },
                            ty.name()
                        ),
                    ));
                }
                Some((r, *neg))
            }
            None => None,
        };
        let op = self.op(i)?;
        Ok(Inst { op, guard, line })
    }

    /// The state spaces of an instruction (`spaces_of`, `cp.async`'s pair, none for the
    /// others), for `check_form`.
    fn check_spaces(&self, i: &parse::Inst, mods: &[&str], form: &Form) -> Result<(), DecodeError> {
        let line = i.line;
        let name = i.opcode[0].as_str();
        let op = &self.opname;
        let spaces: Vec<&str> = mods.iter().copied().filter(|m| is_space(m)).collect();
        if name == "cp"
            && mods.first() == Some(&"async")
            && !mods.contains(&"bulk")
            && !mods.contains(&"mbarrier")
        {
            let copy = !mods
                .iter()
                .any(|m| matches!(*m, "commit_group" | "wait_group" | "wait_all"));
            let ok = if copy {
                matches!(spaces.as_slice(), ["shared" | "shared::cta", "global"])
            } else {
                spaces.is_empty()
            };
            if !ok {
                return Err(derr(
                    line,
                    format!(
                        "'{op}': cp.async copies from .global to .shared, written .shared{{::cta}}.global in that order ({})",
                        isa("cp.async")
                    ),
                ));
            }
        } else if name == "cp" && mods.contains(&"bulk") {
            // The bulk copies' space pairs are checked by their decoder (`Decoder::bulk`).
        } else if matches!(name, "fence" | "membar") {
            // Proxy kinds (`fence.proxy.async.shared::cta`) are spelled like spaces.
        } else if name == "tensormap" && mods.contains(&"cp_fenceproxy") {
            // Its pair `.global.shared::cta` is checked by its decoder (`Decoder::tensormap`).
        } else if let Some(allowed) = spaces_of(name).or_else(|| {
            (name == "cp" && mods.contains(&"mbarrier") && !mods.contains(&"bulk"))
                .then_some(&["shared", "shared::cta"][..])
        }) {
            if let [a, b, ..] = spaces.as_slice() {
                return Err(derr(
                    line,
                    format!(
                        "'{op}' names two state spaces '.{a}' and '.{b}': {name} accesses one ({}: {})",
                        isa(name),
                        form.syntax
                    ),
                ));
            }
            if let Some(s) = spaces.first().filter(|s| !allowed.contains(s)) {
                let read_only = if *s == "const" {
                    "the .const state space is read-only (PTX ISA §5.1.3 Constant State Space); "
                } else {
                    ""
                };
                return Err(derr(
                    line,
                    format!(
                        "'{op}': {read_only}{name} accesses {} ({})",
                        allowed
                            .iter()
                            .map(|s| format!(".{s}"))
                            .collect::<Vec<_>>()
                            .join(" "),
                        isa(name)
                    ),
                ));
            }
        } else if let Some(s) = spaces.first() {
            return Err(derr(
                line,
                format!(
                    "'{op}' names the state space '.{s}': {name} takes none ({}: {})",
                    isa(name),
                    form.syntax
                ),
            ));
        }
        Ok(())
    }

    /// The rules every instruction obeys before its own: its modifiers (no unknown type, none
    /// twice, at most its number of types, its state spaces) and its operand count, from
    /// `FORMS` and `spaces_of`.
    /// The version/target gate of the instruction (`sim::instr::GATES`, from each section's
    /// "PTX ISA Notes" and "Target ISA Notes"): a form newer than the module's `.version` or
    /// `.target` is refused in one line naming both minimums and the module's values.
    fn check_gate(&self, line: u32, name: &str, mods: &[&str]) -> Result<(), DecodeError> {
        let Some(g) = crate::sim::instr::refusing_gate(name, mods, self.version, &self.target)
        else {
            return Ok(());
        };
        let (ma, mi) = self.version;
        Err(derr(
            line,
            format!(
                "'{}' needs {}; this module has .version {ma}.{mi} and .target {} ({})",
                self.opname,
                g.needs(),
                self.target,
                g.section
            ),
        ))
    }

    /// The rules every instruction obeys before its own ([`Decoder::check_opcode`], once per
    /// distinct opcode text: they depend on nothing else), then its operand count.
    fn check_form(&mut self, i: &parse::Inst) -> Result<(), DecodeError> {
        let form = match self.formed.get(self.opname.as_str()) {
            Some(&f) => f,
            None => {
                let f = self.check_opcode(i)?;
                self.formed.insert(self.opname.clone(), f);
                f
            }
        };
        match form {
            Some(k) => self.check_operands(i, &FORMS[k]),
            None => Ok(()), // unsupported: the decoder says so
        }
    }

    /// The rules of an instruction's opcode text alone (no unknown type, no qualifier twice,
    /// at most its number of types, its qualifiers, state spaces, version/target gate and
    /// [`check_rules`]): the row of [`FORMS`] that applies, `None` when none does. A pure
    /// function of the opcode text and the module's `.version` and `.target` (the line only
    /// in messages), so [`Decoder::check_form`] keeps each opcode's answer.
    fn check_opcode(&self, i: &parse::Inst) -> Result<Option<usize>, DecodeError> {
        let line = i.line;
        let name = i.opcode[0].as_str();
        let mods: Vec<&str> = i.opcode[1..].iter().map(parse::Name::as_str).collect();
        let op = &self.opname;
        // `.b1024` names the tensor-map object in `tensormap.*` (PTX ISA, tensormap.replace),
        // and nowhere else.
        if let Some(m) = mods.iter().find(|m| {
            parse::type_like(m)
                && !parse::PTX_TYPES.contains(m)
                && !(name == "tensormap" && **m == "b1024")
        }) {
            return Err(derr(line, format!("{} in '{op}'", parse::not_a_type(m))));
        }
        self.check_gate(line, name, &mods)?;
        let Some(k) = forms_of(name)
            .iter()
            .copied()
            .find(|&k| FORMS[k].when.iter().all(|w| mods.contains(w)))
        else {
            return Ok(None); // unsupported: the decoder says so
        };
        let form = &FORMS[k];
        let is_type = |m: &str| parse::PTX_TYPES.contains(&m);
        let types: Vec<&str> = mods.iter().copied().filter(|m| is_type(m)).collect();
        for (k, m) in mods.iter().enumerate() {
            if mods[..k].contains(m) && !(form.types > 1 && is_type(m)) {
                return Err(derr(
                    line,
                    format!(
                        "'.{m}' appears twice in '{op}': each qualifier is given once ({}: {})",
                        isa(name),
                        form.syntax
                    ),
                ));
            }
        }
        if types.len() > usize::from(form.types) {
            return Err(derr(
                line,
                format!(
                    "'{op}' has {} type suffixes ({}), {name} takes {} ({}: {})",
                    types.len(),
                    types
                        .iter()
                        .map(|t| format!(".{t}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    form.types,
                    isa(name),
                    form.syntax
                ),
            ));
        }
        let dots = |ms: &[&str]| {
            ms.iter()
                .map(|m| format!(".{m}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        if let Some((allowed, required)) = modifiers_of(name, &mods) {
            if let Some(m) = mods
                .iter()
                .find(|m| !is_type(m) && !is_space(m) && !allowed.contains(m))
            {
                return Err(derr(
                    line,
                    format!(
                        "'.{m}' in '{op}' is not a qualifier of {name} ({}: {})",
                        isa(name),
                        form.syntax
                    ),
                ));
            }
            for g in EXCLUSIVE {
                // Two of one group is rare: the list is built only for the message.
                if mods.iter().filter(|m| g.contains(m)).nth(1).is_some() {
                    let given: Vec<&str> = mods.iter().copied().filter(|m| g.contains(m)).collect();
                    return Err(derr(
                        line,
                        format!(
                            "'{op}' has {}: {name} takes at most one of {} ({})",
                            dots(&given),
                            dots(g),
                            isa(name)
                        ),
                    ));
                }
            }
            for g in required {
                if !mods.iter().any(|m| g.contains(m)) {
                    return Err(derr(
                        line,
                        format!(
                            "'{op}' needs one of {} ({}: {})",
                            dots(g),
                            isa(name),
                            form.syntax
                        ),
                    ));
                }
            }
        }
        self.check_spaces(i, &mods, form)?;
        check_rules(&self.opname, name, &mods, self.sm, self.version).map_err(|m| derr(line, m))?;
        Ok(Some(k))
    }

    /// The operand count of row `form` of [`FORMS`], and `cp.async.wait_group`'s constant.
    fn check_operands(&self, i: &parse::Inst, form: &Form) -> Result<(), DecodeError> {
        let (line, name) = (i.line, i.opcode[0].as_str());
        let n = i.operands.len();
        let (lo, hi) = (usize::from(form.operands.0), usize::from(form.operands.1));
        if n < lo || n > hi {
            let takes = if lo == hi {
                format!("{lo}")
            } else {
                format!("{lo} or {hi}")
            };
            return Err(derr(
                line,
                format!(
                    "'{}' has {n} operand{}; {name} takes {takes} ({}: {})",
                    self.text,
                    if n == 1 { "" } else { "s" },
                    isa(name),
                    form.syntax
                ),
            ));
        }
        if matches!(name, "cp" | "wgmma")
            && i.opcode[1..].iter().any(|m| m == "wait_group")
            && let Some(o) = i.operands.iter().find(|o| !matches!(o, Operand::Int(_)))
        {
            return Err(derr(
                line,
                format!(
                    "'{}': cp.async.wait_group takes an integer constant N, found '{o}' ({}: {})",
                    self.text,
                    isa("cp.async.wait_group"),
                    form.syntax
                ),
            ));
        }
        Ok(())
    }

    fn op(&mut self, i: &parse::Inst) -> Result<Op, DecodeError> {
        self.check_form(i)?;
        let oc = Opc::new(i);
        match oc.name {
            // `mma` first: the names are distinct (the order is only how many are compared),
            // and a tensor-core kernel's most frequent opcode is last among the families.
            "mma" => self.mma(i),
            "mov" | "cvta" | "createpolicy" | "activemask" => self.op_move(i, &oc),
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor"
            | "shl" | "shr" | "copysign" | "mad" | "fma" => self.op_int(i, &oc),
            "bfe" | "prmt" | "shf" | "bfi" | "lop3" => self.op_bits(i, &oc),
            "not" | "cnot" | "neg" | "abs" | "popc" | "clz" | "brev" | "ex2" | "lg2" | "rcp"
            | "sqrt" | "rsqrt" | "sin" | "cos" | "tanh" | "selp" => self.op_unary(i, &oc),
            "setp" => self.op_setp(i, &oc),
            "cvt" => self.op_cvt(i, &oc),
            "bra" | "ret" | "exit" | "trap" | "bar" | "barrier" | "membar" | "fence"
            | "nanosleep" | "prefetch" | "prefetchu" | "griddepcontrol" => self.op_control(i, &oc),
            "ld" | "ldu" | "st" | "ldmatrix" | "stmatrix" | "cp" => self.op_mem(i, &oc),
            "shfl" | "vote" | "atom" | "red" => self.op_warp(i, &oc),
            "mbarrier" => self.mbarrier(i),
            "elect" | "setmaxnreg" | "mapa" | "call" | "wgmma" => self.hopper_misc(i),
            "tensormap" => self.tensormap(i),
            _ => Err(unsupported_inst(i)),
        }
    }

    /// `mov`, `cvta`, `createpolicy`, `activemask`.
    fn op_move(&mut self, i: &parse::Inst, oc: &Opc<'_>) -> Result<Op, DecodeError> {
        let (line, name, mods, ops) = (i.line, oc.name, oc.mods(), &i.operands);
        Ok(match name {
            "mov" => {
                let t = oc.need_ty()?;
                match (&ops[0], &ops[1]) {
                    (Operand::Vector(v), _) | (_, Operand::Vector(v)) => {
                        // mov.b64 d, {a, b} packs, mov.b64 {a, b}, d unpacks: 2 or 4 parts of
                        // a bit-size type of 8 bits or more (PTX ISA §9.7 'mov').
                        let n = v.len() as u32;
                        if !matches!(t, Ty::B(16 | 32 | 64))
                            || !matches!(n, 2 | 4)
                            || t.bits() / n < 8
                        {
                            return Err(derr(
                                line,
                                format!(
                                    "'{}': a vector in mov packs or unpacks 2 or 4 parts of a .b16, .b32 or .b64 value, at least 8 bits each ({})",
                                    self.text,
                                    isa("mov")
                                ),
                            ));
                        }
                        let part_bits = t.bits() / n;
                        let part = Want::Ty(Ty::B(part_bits as u8));
                        if matches!(&ops[0], Operand::Vector(_)) {
                            Op::Unpack {
                                part_bits,
                                parts: self.vec_dsts(&ops[0], part, line)?,
                                a: self.src(&ops[1], Want::Ty(t), line)?,
                            }
                        } else {
                            Op::Pack {
                                part_bits,
                                d: self.dst(&ops[0], Want::Ty(t), line)?,
                                parts: self.vec_srcs(&ops[1], part, line)?,
                            }
                        }
                    }
                    (dst, a) => Op::Mov {
                        ty: t,
                        d: self.dst(dst, Want::Ty(t), line)?,
                        a: self.src(a, Want::Ty(t), line)?,
                    },
                }
            }
            "cvta" => {
                let t = oc.need_ty()?;
                let d = self.dst(&ops[0], Want::Ty(t), line)?;
                let a = self.src(&ops[1], Want::Ty(t), line)?;
                let to = oc.has("to");
                if oc.has("global") || oc.has("const") || oc.has("param") {
                    if to
                        && let Src::Reg(r) = a
                        && let Some(&p) = self.param_regs.get(&r)
                    {
                        self.param_info[p].pointer = true;
                    }
                    Op::Mov { ty: t, d, a }
                } else if mods.iter().any(|m| m.starts_with("shared")) {
                    Op::Un {
                        k: if to {
                            Un::CvtaToShared
                        } else {
                            Un::CvtaFromShared
                        },
                        ty: t,
                        d,
                        a,
                    }
                } else if oc.has("local") {
                    Op::Un {
                        k: if to {
                            Un::CvtaToLocal
                        } else {
                            Un::CvtaFromLocal
                        },
                        ty: t,
                        d,
                        a,
                    }
                } else {
                    return Err(oc.unsupported());
                }
            }
            "createpolicy" => Op::Mov {
                ty: Ty::B(64),
                d: self.dst(&ops[0], Want::Ty(Ty::B(64)), line)?,
                a: Src::Imm(0),
            },
            "activemask" => Op::Activemask {
                d: self.dst(&ops[0], Want::Ty(Ty::B(32)), line)?,
            },
            _ => return Err(oc.unsupported()),
        })
    }

    /// Integer and float arithmetic of two and three operands (`add` … `copysign`, `mad`, `fma`).
    fn op_int(&mut self, i: &parse::Inst, oc: &Opc<'_>) -> Result<Op, DecodeError> {
        let (line, name, ops) = (i.line, oc.name, &i.operands);
        Ok(match name {
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor"
            | "shl" | "shr" | "copysign" => {
                let t = oc.need_ty()?;
                if t == Ty::Pred && matches!(name, "and" | "or" | "xor") {
                    let d = self.dst(&ops[0], Want::Ty(Ty::Pred), line)?;
                    return Ok(Op::PredLogic {
                        k: match name {
                            "and" => 0,
                            "or" => 1,
                            _ => 2,
                        },
                        d,
                        a: self.pred(&ops[1], line)?,
                        b: self.pred(&ops[2], line)?,
                    });
                }
                let k = match name {
                    "add" => Bin::Add,
                    "sub" => Bin::Sub,
                    "mul" if oc.has("hi") => Bin::MulHi,
                    "mul" if oc.has("wide") => Bin::MulWide,
                    "mul" => Bin::MulLo,
                    "div" => Bin::Div,
                    "rem" => Bin::Rem,
                    "min" => Bin::Min,
                    "max" => Bin::Max,
                    "and" => Bin::And,
                    "or" => Bin::Or,
                    "xor" => Bin::Xor,
                    "shl" => Bin::Shl,
                    "shr" => Bin::Shr,
                    _ => Bin::Copysign,
                };
                if oc.has("sat") && !t.is_float() || oc.has("cc") || t == Ty::Pred {
                    return Err(oc.unsupported());
                }
                // Shift amounts are .u32 whatever the shifted type; mul.wide's result is twice
                // the sources' width.
                let bt = if matches!(k, Bin::Shl | Bin::Shr) {
                    Ty::U(32)
                } else {
                    t
                };
                let dt = if k == Bin::MulWide { wide(t) } else { t };
                Op::Bin {
                    k,
                    ty: t,
                    d: self.dst(&ops[0], Want::Ty(dt), line)?,
                    a: self.src(&ops[1], Want::Ty(t), line)?,
                    b: self.src(&ops[2], Want::Ty(bt), line)?,
                }
            }
            "mad" | "fma" => {
                let t = oc.need_ty()?;
                if oc.has("cc") || (oc.has("sat") && !t.is_float()) || t == Ty::Pred {
                    return Err(oc.unsupported());
                }
                let k = if oc.has("hi") {
                    Tern::MadHi
                } else if oc.has("wide") {
                    Tern::MadWide
                } else {
                    Tern::MadLo
                };
                let ct = if k == Tern::MadWide { wide(t) } else { t };
                Op::Tern {
                    k,
                    ty: t,
                    d: self.dst(&ops[0], Want::Ty(ct), line)?,
                    a: self.src(&ops[1], Want::Ty(t), line)?,
                    b: self.src(&ops[2], Want::Ty(t), line)?,
                    c: self.src(&ops[3], Want::Ty(ct), line)?,
                }
            }
            _ => return Err(oc.unsupported()),
        })
    }

    /// Bit-field and permute instructions: `bfe`, `prmt`, `shf`, `bfi`, `lop3`.
    fn op_bits(&mut self, i: &parse::Inst, oc: &Opc<'_>) -> Result<Op, DecodeError> {
        let (line, name, mods, ops) = (i.line, oc.name, oc.mods(), &i.operands);
        Ok(match name {
            "bfe" | "prmt" => {
                let t = oc.need_ty()?;
                if name == "prmt" && mods.len() > 1 {
                    return Err(oc.unsupported());
                }
                // bfe's position and length are .u32 (PTX ISA §9.7 'bfe'); prmt is .b32.
                let bt = if name == "bfe" { Ty::U(32) } else { t };
                Op::Tern {
                    k: if name == "bfe" { Tern::Bfe } else { Tern::Prmt },
                    ty: t,
                    d: self.dst(&ops[0], Want::Ty(t), line)?,
                    a: self.src(&ops[1], Want::Ty(t), line)?,
                    b: self.src(&ops[2], Want::Ty(bt), line)?,
                    c: self.src(&ops[3], Want::Ty(bt), line)?,
                }
            }
            "shf" => {
                let wrap = oc.has("wrap");
                let b32 = Want::Ty(Ty::B(32));
                Op::Tern {
                    k: if oc.has("l") {
                        Tern::ShfL(wrap)
                    } else {
                        Tern::ShfR(wrap)
                    },
                    ty: Ty::B(32),
                    d: self.dst(&ops[0], b32, line)?,
                    a: self.src(&ops[1], b32, line)?,
                    b: self.src(&ops[2], b32, line)?,
                    c: self.src(&ops[3], Want::Ty(Ty::U(32)), line)?,
                }
            }
            "bfi" => {
                let t = oc.need_ty()?;
                let u32_ = Want::Ty(Ty::U(32));
                Op::Bfi {
                    ty: t,
                    d: self.dst(&ops[0], Want::Ty(t), line)?,
                    s: [
                        self.src(&ops[1], Want::Ty(t), line)?,
                        self.src(&ops[2], Want::Ty(t), line)?,
                        self.src(&ops[3], u32_, line)?,
                        self.src(&ops[4], u32_, line)?,
                    ],
                }
            }
            "lop3" => {
                if oc.has("and") || oc.has("or") {
                    return Err(oc.unsupported());
                }
                let lut = match &ops[4] {
                    Operand::Int(v) => *v as u8,
                    _ => return Err(derr(line, "lop3 needs an immediate truth table")),
                };
                let b32 = Want::Ty(Ty::B(32));
                Op::Lop3 {
                    d: self.dst(&ops[0], b32, line)?,
                    s: [
                        self.src(&ops[1], b32, line)?,
                        self.src(&ops[2], b32, line)?,
                        self.src(&ops[3], b32, line)?,
                    ],
                    lut,
                }
            }
            _ => return Err(oc.unsupported()),
        })
    }

    /// One-operand instructions (`not` … `tanh`) and `selp`.
    fn op_unary(&mut self, i: &parse::Inst, oc: &Opc<'_>) -> Result<Op, DecodeError> {
        let (line, name, ops) = (i.line, oc.name, &i.operands);
        Ok(match name {
            "not" | "cnot" | "neg" | "abs" | "popc" | "clz" | "brev" | "ex2" | "lg2" | "rcp"
            | "sqrt" | "rsqrt" | "sin" | "cos" | "tanh" => {
                let t = oc.need_ty()?;
                if t == Ty::Pred && name == "not" {
                    let d = self.dst(&ops[0], Want::Ty(Ty::Pred), line)?;
                    let a = self.pred(&ops[1], line)?;
                    return Ok(Op::PredLogic { k: 3, d, a, b: a });
                }
                if t == Ty::Pred {
                    return Err(oc.unsupported());
                }
                let k = match name {
                    "not" => Un::Not,
                    "cnot" => Un::Cnot,
                    "neg" => Un::Neg,
                    "abs" => Un::Abs,
                    "popc" => Un::Popc,
                    "clz" => Un::Clz,
                    "brev" => Un::Brev,
                    "ex2" => Un::Ex2,
                    "lg2" => Un::Lg2,
                    "rcp" => Un::Rcp,
                    "sqrt" => Un::Sqrt,
                    "rsqrt" => Un::Rsqrt,
                    "sin" => Un::Sin,
                    "cos" => Un::Cos,
                    _ => Un::Tanh,
                };
                // popc and clz count into a .u32 whatever the source type (PTX ISA §9.7).
                let dt = if matches!(k, Un::Popc | Un::Clz) {
                    Ty::U(32)
                } else {
                    t
                };
                Op::Un {
                    k,
                    ty: t,
                    d: self.dst(&ops[0], Want::Ty(dt), line)?,
                    a: self.src(&ops[1], Want::Ty(t), line)?,
                }
            }
            "selp" => {
                let t = oc.need_ty()?;
                if t == Ty::Pred {
                    return Err(oc.unsupported());
                }
                Op::Selp {
                    ty: t,
                    d: self.dst(&ops[0], Want::Ty(t), line)?,
                    a: self.src(&ops[1], Want::Ty(t), line)?,
                    b: self.src(&ops[2], Want::Ty(t), line)?,
                    p: self.pred(&ops[3], line)?,
                }
            }
            _ => return Err(oc.unsupported()),
        })
    }

    /// `setp` with every comparison of PTX ISA §9.3.1 and its boolean combination.
    fn op_setp(&mut self, i: &parse::Inst, oc: &Opc<'_>) -> Result<Op, DecodeError> {
        let (line, name, mods, ops) = (i.line, oc.name, oc.mods(), &i.operands);
        Ok(match name {
            "setp" => {
                let t = oc.need_ty()?;
                let cmp_op = mods
                    .iter()
                    .copied()
                    .find(|m| CMP_OPS.contains(m))
                    .unwrap_or("");
                // PTX ISA §9.3.1 "Comparisons": bit-size types compare only eq and ne;
                // signed integers eq ne lt le gt ge; unsigned ones also lo ls hi hs; floats
                // eq ne lt le gt ge and the unordered equ … geu, num, nan.
                let legal: &[&str] = match t {
                    Ty::B(_) => &["eq", "ne"],
                    Ty::S(_) => &["eq", "ne", "lt", "le", "gt", "ge"],
                    Ty::U(_) => &["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"],
                    _ => &[
                        "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu",
                        "geu", "num", "nan",
                    ],
                };
                if !legal.contains(&cmp_op) {
                    return Err(derr(
                        line,
                        format!(
                            "'{}': .{cmp_op} does not compare .{} values (PTX ISA §9.3.1 Comparisons: for .{} the operators are {})",
                            i.opcode.join("."),
                            t.name(),
                            t.name(),
                            legal
                                .iter()
                                .map(|c| format!(".{c}"))
                                .collect::<Vec<_>>()
                                .join(" ")
                        ),
                    ));
                }
                let cmp = match cmp_op {
                    "eq" => Cmp::Eq,
                    "ne" => Cmp::Ne,
                    "lt" | "lo" => Cmp::Lt,
                    "le" | "ls" => Cmp::Le,
                    "gt" | "hi" => Cmp::Gt,
                    "ge" | "hs" => Cmp::Ge,
                    "equ" => Cmp::Unordered(0),
                    "neu" => Cmp::Unordered(1),
                    "ltu" => Cmp::Unordered(2),
                    "leu" => Cmp::Unordered(3),
                    "gtu" => Cmp::Unordered(4),
                    "geu" => Cmp::Unordered(5),
                    "num" => Cmp::Num,
                    "nan" => Cmp::Nan,
                    _ => return Err(oc.unsupported()),
                };
                if t == Ty::Pred {
                    return Err(oc.unsupported());
                }
                let bop = if oc.has("and") {
                    Some(BoolOp::And)
                } else if oc.has("or") {
                    Some(BoolOp::Or)
                } else if oc.has("xor") {
                    Some(BoolOp::Xor)
                } else {
                    None
                };
                let p = Want::Ty(Ty::Pred);
                let (d, d2) = match &ops[0] {
                    Operand::Pair(a, b) => (
                        self.dst(&Operand::Name(a.clone()), p, line)?,
                        Some(self.dst(&Operand::Name(b.clone()), p, line)?),
                    ),
                    o => (self.dst(o, p, line)?, None),
                };
                let comb = match bop {
                    Some(b) => {
                        let (p, n) = self.pred(&ops[3], line)?;
                        Some((b, p, n))
                    }
                    None => None,
                };
                Op::Setp {
                    cmp,
                    ty: t,
                    d,
                    d2,
                    a: self.src(&ops[1], Want::Ty(t), line)?,
                    b: self.src(&ops[2], Want::Ty(t), line)?,
                    comb,
                }
            }
            _ => return Err(oc.unsupported()),
        })
    }

    /// `cvt` (PTX ISA 9.7.9.21).
    fn op_cvt(&mut self, i: &parse::Inst, oc: &Opc<'_>) -> Result<Op, DecodeError> {
        let (line, name, mods, ops) = (i.line, oc.name, oc.mods(), &i.operands);
        Ok(match name {
            "cvt" => {
                let tys: Vec<Ty> = mods.iter().filter_map(|m| Ty::parse(m)).collect();
                if tys.len() != 2 {
                    return Err(derr(
                        line,
                        format!(
                            "'{}' needs a destination and a source type",
                            i.opcode.join(".")
                        ),
                    ));
                }
                let (dt, st) = (tys[0], tys[1]);
                if dt == Ty::Pred || st == Ty::Pred {
                    return Err(oc.unsupported());
                }
                let rnd_mod = mods.iter().find_map(|m| match *m {
                    "rn" | "rni" => Some((0u8, m.ends_with('i'))),
                    "rz" | "rzi" => Some((1, m.ends_with('i'))),
                    "rm" | "rmi" => Some((2, m.ends_with('i'))),
                    "rp" | "rpi" => Some((3, m.ends_with('i'))),
                    "rna" | "rs" => Some((9, false)),
                    _ => None,
                });
                let (rnd, int_round) = rnd_mod.unwrap_or((0, false));
                if rnd == 9 {
                    return Err(oc.unsupported());
                }
                if matches!(dt, Ty::F16x2 | Ty::Bf16x2) {
                    if ops.len() != 3 || st != Ty::F32 {
                        return Err(oc.unsupported());
                    }
                    return Ok(Op::CvtPack {
                        dt,
                        relu: oc.has("relu"),
                        d: self.dst(&ops[0], Want::Ty(dt), line)?,
                        a: self.src(&ops[1], Want::Ty(Ty::F32), line)?,
                        b: self.src(&ops[2], Want::Ty(Ty::F32), line)?,
                    });
                }
                // Float → integer with no rounding modifier defaults to .rzi? PTX requires one;
                // integer → float defaults to .rn.
                let rnd = if st.is_float() && !dt.is_float() && rnd_mod.is_none() {
                    1
                } else {
                    rnd
                };
                Op::Cvt {
                    dt,
                    st,
                    rnd,
                    int_round,
                    sat: oc.has("sat"),
                    d: self.dst(&ops[0], Want::Wide(dt), line)?,
                    a: self.src(&ops[1], Want::Wide(st), line)?,
                }
            }
            _ => return Err(oc.unsupported()),
        })
    }

    /// Control: `bra`, `ret`/`exit`, the barriers, and the instructions that do nothing here (fences, hints).
    fn op_control(&mut self, i: &parse::Inst, oc: &Opc<'_>) -> Result<Op, DecodeError> {
        let (line, name, ops) = (i.line, oc.name, &i.operands);
        Ok(match name {
            "bra" => {
                let Operand::Name(l) = &ops[0] else {
                    return Err(derr(
                        line,
                        "bra needs a label (indirect branches are not supported)",
                    ));
                };
                let target = *self
                    .scopes
                    .iter()
                    .rev()
                    .find_map(|&b| self.labels.get(&scoped_label(l, b)))
                    .ok_or_else(|| derr(line, format!("unknown label '{l}'")))?;
                Op::Bra { target }
            }
            "ret" | "exit" | "trap" => {
                if name == "trap" {
                    return Err(oc.unsupported());
                }
                Op::Exit
            }
            "bar" | "barrier" => {
                let u32_ = Want::Ty(Ty::U(32));
                if oc.has("warp") {
                    return Ok(Op::WarpSync {
                        member: self.src(&ops[0], Want::Ty(Ty::B(32)), line)?,
                    });
                }
                if oc.has("cluster") {
                    return self.cluster_barrier(i);
                }
                if oc.has("red") {
                    return self.bar_red(i);
                }
                let arrive = oc.has("arrive");
                // PTX ISA §9.7 'bar': "a" is a barrier 0 through 15, "b" a multiple of the warp
                // size (immediates are checked here, registers when run).
                if let Operand::Int(a) = &ops[0]
                    && !(0..16).contains(a)
                {
                    return Err(derr(
                        line,
                        format!(
                            "'{}': barrier {a} does not exist; a CTA has barriers 0 through 15 ({})",
                            self.text,
                            isa(name)
                        ),
                    ));
                }
                if let Some(Operand::Int(b)) = ops.get(1)
                    && (*b < 0 || b % 32 != 0)
                {
                    return Err(derr(
                        line,
                        format!(
                            "'{}': a barrier's thread count is a multiple of the warp size (32), found {b} ({})",
                            self.text,
                            isa(name)
                        ),
                    ));
                }
                let id = self.src(&ops[0], u32_, line)?;
                let count = match ops.get(1) {
                    Some(o) => Some(self.src(o, u32_, line)?),
                    None => None,
                };
                Op::Bar {
                    id,
                    count,
                    arrive,
                    red: None,
                }
            }
            "membar" | "fence" | "nanosleep" | "prefetch" | "prefetchu" | "griddepcontrol" => {
                Op::Nop
            }
            _ => return Err(oc.unsupported()),
        })
    }

    /// Memory: `ld`/`ldu`/`st`, `ldmatrix`/`stmatrix`, `cp.async` and its groups.
    fn op_mem(&mut self, i: &parse::Inst, oc: &Opc<'_>) -> Result<Op, DecodeError> {
        let (line, name, ops) = (i.line, oc.name, &i.operands);
        Ok(match name {
            "ld" | "ldu" | "st" => self.ld_st(i, name == "st")?,
            "ldmatrix" | "stmatrix" => {
                let num = if oc.has("x1") {
                    1
                } else if oc.has("x2") {
                    2
                } else if oc.has("x4") {
                    4
                } else {
                    return Err(oc.unsupported());
                };
                if !oc.has("m8n8") || !oc.has("b16") {
                    return Err(oc.unsupported());
                }
                let trans = oc.has("trans");
                let generic = !oc.has("shared");
                let b32 = Want::Ty(Ty::B(32));
                if name == "ldmatrix" {
                    let d: Vec<u32> = self
                        .vec_dsts(&ops[0], b32, line)?
                        .into_iter()
                        .map(|r| r.ok_or_else(|| derr(line, "ldmatrix destinations cannot be '_'")))
                        .collect::<Result<_, _>>()?;
                    if d.len() != num as usize {
                        return Err(derr(
                            line,
                            format!(
                                "ldmatrix .x{num} needs {num} destination registers, found {}",
                                d.len()
                            ),
                        ));
                    }
                    Op::Ldmatrix {
                        num,
                        trans,
                        d,
                        addr: self.addr(&ops[1], line)?,
                        generic,
                    }
                } else {
                    let s = self.vec_srcs(&ops[1], b32, line)?;
                    if s.len() != num as usize {
                        return Err(derr(
                            line,
                            format!(
                                "stmatrix .x{num} needs {num} source registers, found {}",
                                s.len()
                            ),
                        ));
                    }
                    Op::Stmatrix {
                        num,
                        trans,
                        s,
                        addr: self.addr(&ops[0], line)?,
                        generic,
                    }
                }
            }
            "cp" => {
                if !oc.has("async") {
                    return Err(oc.unsupported());
                }
                if oc.has("commit_group") || oc.has("wait_group") || oc.has("wait_all") {
                    return self.async_group(i);
                }
                if oc.has("mbarrier") && !oc.has("bulk") {
                    return self.cp_async_mbarrier_arrive(i);
                }
                if oc.has("bulk") {
                    return self.bulk(i);
                }
                let size = match &ops[2] {
                    Operand::Int(v) if [4, 8, 16].contains(v) => *v as u32,
                    o => {
                        let found = match o {
                            Operand::Int(v) => v.to_string(),
                            Operand::Name(n) => format!("'{n}' (it must be a literal)"),
                            _ => "an operand that is not an integer literal".to_string(),
                        };
                        return Err(derr(
                            line,
                            format!("cp.async size must be 4, 8 or 16, found {found}"),
                        ));
                    }
                };
                let cg = oc.has("cg");
                let (mut src_size, mut ignore) = (None, None);
                if let Some(o) = ops.get(3) {
                    let is_pred = match o {
                        Operand::Not(_) => true,
                        Operand::Name(n) => self
                            .lookup(n)
                            .is_some_and(|r| self.ty_of(r) == Some(Ty::Pred)),
                        _ => false,
                    };
                    if is_pred {
                        ignore = Some(self.pred(o, line)?);
                    } else if !oc.has("L2::cache_hint") || ops.len() > 4 {
                        src_size = Some(self.src(o, Want::Ty(Ty::U(32)), line)?);
                    }
                }
                Op::CpAsync {
                    cg,
                    size,
                    dst: self.addr(&ops[0], line)?,
                    src: self.addr(&ops[1], line)?,
                    src_size,
                    ignore,
                }
            }
            _ => return Err(oc.unsupported()),
        })
    }

    /// Warp-wide and atomic instructions: `shfl.sync`, `vote.sync`, `atom`/`red`.
    fn op_warp(&mut self, i: &parse::Inst, oc: &Opc<'_>) -> Result<Op, DecodeError> {
        let (line, name, mods, ops) = (i.line, oc.name, oc.mods(), &i.operands);
        Ok(match name {
            "shfl" => {
                if !oc.has("sync") {
                    return Err(oc.unsupported());
                }
                let mode = if oc.has("up") {
                    ShflMode::Up
                } else if oc.has("down") {
                    ShflMode::Down
                } else if oc.has("bfly") {
                    ShflMode::Bfly
                } else if oc.has("idx") {
                    ShflMode::Idx
                } else {
                    return Err(oc.unsupported());
                };
                let b32 = Want::Ty(Ty::B(32));
                let (d, p) = match &ops[0] {
                    Operand::Pair(a, b) => (
                        self.dst(&Operand::Name(a.clone()), b32, line)?,
                        Some(self.dst(&Operand::Name(b.clone()), Want::Ty(Ty::Pred), line)?),
                    ),
                    o => (self.dst(o, b32, line)?, None),
                };
                Op::Shfl {
                    mode,
                    d,
                    p,
                    s: [
                        self.src(&ops[1], b32, line)?,
                        self.src(&ops[2], b32, line)?,
                        self.src(&ops[3], b32, line)?,
                    ],
                    // The member mask (operand 5) is a .b32 (PTX ISA §9.7 'shfl.sync').
                    member: ops.get(4).map(|o| self.src(o, b32, line)).transpose()?,
                }
            }
            "vote" => {
                let mode = if oc.has("all") {
                    0
                } else if oc.has("any") {
                    1
                } else if oc.has("uni") {
                    2
                } else if oc.has("ballot") {
                    3
                } else {
                    return Err(oc.unsupported());
                };
                let dt = if mode == 3 { Ty::B(32) } else { Ty::Pred };
                let d = self.dst(&ops[0], Want::Ty(dt), line)?;
                Op::Vote {
                    mode,
                    d,
                    p: self.pred(&ops[1], line)?,
                    member: ops
                        .get(2)
                        .map(|o| self.src(o, Want::Ty(Ty::B(32)), line))
                        .transpose()?,
                }
            }
            "atom" | "red" => {
                let t = oc.need_ty()?;
                let space = if oc.has("shared::cluster") {
                    Space::Cluster
                } else if mods.iter().any(|m| m.starts_with("shared")) {
                    Space::Shared
                } else if oc.has("global") {
                    Space::Global
                } else {
                    Space::Generic
                };
                let op = match mods.iter().find_map(|m| match *m {
                    "add" => Some(AtomOp::Add),
                    "min" => Some(AtomOp::Min),
                    "max" => Some(AtomOp::Max),
                    "and" => Some(AtomOp::And),
                    "or" => Some(AtomOp::Or),
                    "xor" => Some(AtomOp::Xor),
                    "exch" => Some(AtomOp::Exch),
                    "cas" => Some(AtomOp::Cas),
                    "inc" => Some(AtomOp::Inc),
                    "dec" => Some(AtomOp::Dec),
                    _ => None,
                }) {
                    Some(o) => o,
                    None => return Err(oc.unsupported()),
                };
                if oc.has("v2")
                    || oc.has("v4")
                    || t == Ty::Pred
                    || oc.has("noftz") && !matches!(t, Ty::F16 | Ty::F16x2 | Ty::Bf16 | Ty::Bf16x2)
                {
                    return Err(oc.unsupported());
                }
                let (d, rest) = if name == "atom" {
                    (Some(self.dst(&ops[0], Want::Ty(t), line)?), &ops[1..])
                } else {
                    (None, &ops[..])
                };
                let c = if op == AtomOp::Cas {
                    if rest.len() < 3 {
                        return Err(derr(line, "atom.cas needs a compare and a new value"));
                    }
                    Some(self.src(&rest[2], Want::Ty(t), line)?)
                } else {
                    None
                };
                Op::Atom {
                    space,
                    op,
                    ty: t,
                    d,
                    addr: self.addr(&rest[0], line)?,
                    b: self.src(&rest[1], Want::Ty(t), line)?,
                    c,
                }
            }
            _ => return Err(oc.unsupported()),
        })
    }

    fn ld_st(&mut self, i: &parse::Inst, store: bool) -> Result<Op, DecodeError> {
        let line = i.line;
        let mods: Vec<&str> = i.opcode[1..].iter().map(parse::Name::as_str).collect();
        let ops = &i.operands;
        let mut space = Space::Generic;
        let mut ty = None;
        let mut vec = 1usize;
        for m in &mods {
            match *m {
                "global" | "const" => space = Space::Global,
                "shared" | "shared::cta" => space = Space::Shared,
                "param" | "param::entry" | "param::func" => space = Space::Param,
                "local" => space = Space::Local,
                "shared::cluster" => space = Space::Cluster,
                "v2" => vec = 2,
                "v4" => vec = 4,
                "v8" => vec = 8,
                m => {
                    if let Some(t) = Ty::parse(m) {
                        ty = Some(t);
                    }
                }
            }
        }
        let ty =
            ty.ok_or_else(|| derr(line, format!("'{}' has no type suffix", i.opcode.join("."))))?;
        if ty == Ty::Pred {
            return Err(derr(
                line,
                format!(
                    "'{}': ld and st move data of a fundamental type other than .pred ({})",
                    i.opcode.join("."),
                    isa("ld")
                ),
            ));
        }
        // Registers may be wider than the type (PTX ISA §9.4.1).
        let want = Want::Wide(ty);
        // A call's parameters: written before and read after a `call`, which stops the run
        // when reached; on a path not taken, nothing.
        if space == Space::Param
            && let Some(Operand::Address(Some(n), _)) = ops.get(usize::from(!store))
            && self.call_params.contains(n.as_str())
            && !self.params.contains_key(n.as_str())
        {
            return Ok(Op::Nop);
        }
        if store {
            if space == Space::Param {
                return Err(derr(
                    line,
                    format!(
                        "'{}': st.param writes a device function's call parameters (.param::func), and a kernel's parameters are read-only (PTX ISA §5.1.6.1 Kernel Function Parameters); `call` is not supported",
                        i.opcode.join(".")
                    ),
                ));
            }
            let addr = self.addr(&ops[0], line)?;
            let s = self.vec_srcs(&ops[1], want, line)?;
            if s.len() != vec {
                return Err(derr(
                    line,
                    format!("expected {vec} source values, found {}", s.len()),
                ));
            }
            Ok(Op::St { space, ty, s, addr })
        } else {
            let d = self.vec_dsts(&ops[0], want, line)?;
            if d.len() != vec {
                return Err(derr(
                    line,
                    format!("expected {vec} destinations, found {}", d.len()),
                ));
            }
            let addr = self.addr(&ops[1], line)?;
            if space == Space::Param
                && ty.bits() == 64
                && let (Some(Some(r)), Operand::Address(Some(n), 0)) = (d.first(), &ops[1])
                && let Some(&p) = self.params.get(n.as_str())
            {
                self.param_regs.insert(*r, p);
            }
            Ok(Op::Ld { space, ty, d, addr })
        }
    }

    fn mma(&mut self, i: &parse::Inst) -> Result<Op, DecodeError> {
        let line = i.line;
        let kind = match self.mma_kinds.iter().find(|(t, _)| *t == self.opname) {
            Some(&(_, k)) => k,
            None => {
                let m: Vec<&str> = i.opcode[1..].iter().map(parse::Name::as_str).collect();
                let k = mma_kind(&m, &self.opname, self.sm).map_err(|e| derr(line, e))?;
                self.mma_kinds.push((self.opname.clone(), k));
                k
            }
        };
        let shape = kind.shape;
        use crate::sim::mma::Operand as O;
        // The declared register of each element of D, A, B and C, found while checking their
        // types, so that D's and the sources' decoding below looks none up again: one buffer,
        // operand k's elements at `at[k]..at[k + 1]`.
        let mut found = std::mem::take(&mut self.mma_found);
        found.clear();
        let mut at = [0usize; 5];
        for (k, (which, o, op)) in [
            ("D", &i.operands[0], O::C),
            ("A", &i.operands[1], O::A),
            ("B", &i.operands[2], O::B),
            ("C", &i.operands[3], O::C),
        ]
        .into_iter()
        .enumerate()
        {
            if let Err(e) = self.mma_reg_types(&kind, which, o, op, line, &mut found) {
                self.mma_found = found;
                return Err(e);
            }
            at[k + 1] = found.len();
        }
        let r = self.mma_operands(i, kind, &found, &at);
        self.mma_found = found;
        let (d, a, b, c) = r?;
        let (na, nb, ncd) = (
            kind.regs(O::A) as usize,
            kind.regs(O::B) as usize,
            kind.regs(O::C) as usize,
        );
        if (d.len(), a.len(), b.len(), c.len()) != (ncd, na, nb, ncd) {
            return Err(derr(
                line,
                format!(
                    "'{}' has {} D, {} A, {} B and {} C registers: mma.{} with .{} A, .{} B and .{} C/D takes {ncd} D, {na} A, {nb} B and {ncd} C ({})",
                    self.opname,
                    d.len(),
                    a.len(),
                    b.len(),
                    c.len(),
                    shape.name(),
                    kind.dtype.name(),
                    kind.btype.name(),
                    kind.acc.name(),
                    isa("mma")
                ),
            ));
        }
        Ok(Op::Mma { kind, d, a, b, c })
    }

    /// An `mma`'s D, A, B and C registers, given the registers [`Decoder::mma_reg_types`]
    /// found declared for their elements (`found[at[k]..at[k + 1]]` for operand k).
    #[allow(clippy::type_complexity)]
    fn mma_operands(
        &mut self,
        i: &parse::Inst,
        kind: MmaKind,
        found: &[Option<u32>],
        at: &[usize; 5],
    ) -> Result<(Vec<u32>, Vec<Src>, Vec<Src>, Vec<Src>), DecodeError> {
        let line = i.line;
        // C and D: four .f32/.s32 registers, or two .f16x2 registers (.b32) for .f16.
        let cd = match kind.acc {
            MmaAcc::F16 => Want::Ty(Ty::B(32)),
            MmaAcc::F32 => Want::Ty(Ty::F32),
            MmaAcc::S32 => Want::Ty(Ty::B(32)),
        };
        let b32 = Want::Ty(Ty::B(32));
        let d = self.mma_dsts(&i.operands[0], &found[at[0]..at[1]], cd, line)?;
        let a = self.mma_srcs(&i.operands[1], &found[at[1]..at[2]], b32, line)?;
        let b = self.mma_srcs(&i.operands[2], &found[at[2]..at[3]], b32, line)?;
        let c = self.mma_srcs(&i.operands[3], &found[at[3]..at[4]], cd, line)?;
        Ok((d, a, b, c))
    }

    /// [`Decoder::vec_dsts`] of an `mma`'s D, given the register [`Decoder::mma_reg_types`]
    /// found declared for each element (`found`): those are `dst`'s answer without a lookup.
    /// A `_` among them is refused once every element is checked.
    fn mma_dsts(
        &mut self,
        o: &Operand,
        found: &[Option<u32>],
        want: Want,
        line: u32,
    ) -> Result<Vec<u32>, DecodeError> {
        let mut out = Vec::new();
        let mut sink = false;
        match o {
            Operand::Vector(v) => {
                out.reserve_exact(v.len().min(found.len()));
                for (e, f) in v.iter().zip(found) {
                    match (e, f) {
                        (Operand::Name(n), Some(r)) => {
                            self.check(*r, n, want, line)?;
                            out.push(*r);
                        }
                        (Operand::Sink, _) => sink = true,
                        (e, _) => out.push(self.dst(e, want, line)?),
                    }
                }
            }
            o => {
                for r in self.vec_dsts(o, want, line)? {
                    match r {
                        Some(r) => out.push(r),
                        None => sink = true,
                    }
                }
            }
        }
        if sink {
            return Err(derr(line, "mma destinations cannot be '_'"));
        }
        Ok(out)
    }

    /// [`Decoder::vec_srcs`] of an `mma` source, given the registers found declared
    /// ([`Decoder::mma_dsts`]).
    fn mma_srcs(
        &mut self,
        o: &Operand,
        found: &[Option<u32>],
        want: Want,
        line: u32,
    ) -> Result<Vec<Src>, DecodeError> {
        match o {
            Operand::Vector(v) => {
                let mut out = Vec::with_capacity(v.len().min(found.len()));
                for (e, f) in v.iter().zip(found) {
                    out.push(match (e, f) {
                        (Operand::Name(n), Some(r)) => {
                            self.check(*r, n, want, line)?;
                            Src::Reg(*r)
                        }
                        (e, _) => self.src(e, want, line)?,
                    });
                }
                Ok(out)
            }
            o => self.vec_srcs(o, want, line),
        }
    }

    /// The declared types of an `mma` operand's registers (`which` is D, A, B or C) against
    /// [`mma_reg_types`]: a register of another 32-bit type (`.f32` for an f16 A) is refused in
    /// one line naming the operand, the register, its type and the types the form takes. For a
    /// vector, each element's declared register (`None`: not a name, or not a declared one),
    /// pushed onto `found`.
    fn mma_reg_types(
        &mut self,
        kind: &MmaKind,
        which: &str,
        o: &Operand,
        op: crate::sim::mma::Operand,
        line: u32,
        found: &mut Vec<Option<u32>>,
    ) -> Result<(), DecodeError> {
        let allowed = mma_reg_types(kind, op);
        let regs: &[Operand] = match o {
            Operand::Vector(v) => v,
            o => std::slice::from_ref(o),
        };
        for r in regs {
            let Operand::Name(n) = r else {
                found.push(None);
                continue;
            };
            let idx = match self.lookup(n) {
                Some(idx) => {
                    found.push(Some(idx));
                    idx
                }
                None => {
                    found.push(None);
                    self.reg(n, line)?
                }
            };
            let ty = self.ty_of(idx).unwrap_or(Ty::B(32));
            if !allowed.contains(&ty) {
                let elem = match op {
                    crate::sim::mma::Operand::C => kind.acc.name(),
                    o => kind.input_type(o).name(),
                };
                return Err(derr(
                    line,
                    format!(
                        "'{n}' is declared .{} but {which} of '{}' holds .{elem} elements: its registers are {} ({}; ptxas 13.0.88 refuses the others)",
                        ty.name(),
                        self.opname,
                        allowed
                            .iter()
                            .map(|t| format!(".{}", t.name()))
                            .collect::<Vec<_>>()
                            .join(" or "),
                        isa("mma")
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The register types an `mma` operand accepts, by its element type (PTX ISA 9.7.14.5.14 mma,
/// the fragments of each form: f16 A/B in `.f16x2` registers, f32 C/D in `.f32`, s32 in
/// `.s32`, every other input in `.b32`), with what ptxas 13.0.88 also accepts under the §9.4
/// rule that `.b32` agrees with every 32-bit type: f16 A/B `.b32`/`.f16x2`; bf16 and tf32 A/B
/// `.b32` only (ptxas refuses `.f32`, `.f16x2`, `.u32`); 8-bit integer and fp8 A/B any 32-bit
/// register; f32 C/D `.f32`/`.b32`; f16 C/D `.f16x2`/`.b32`; s32 C/D `.s32`/`.u32`/`.b32`
/// (`tests/data/hopper_probes/ptxas_mma_regs.tsv`).
fn mma_reg_types(kind: &MmaKind, op: crate::sim::mma::Operand) -> &'static [Ty] {
    const ANY32: &[Ty] = &[Ty::B(32), Ty::U(32), Ty::S(32), Ty::F32, Ty::F16x2];
    match op {
        crate::sim::mma::Operand::C => match kind.acc {
            MmaAcc::F32 => &[Ty::F32, Ty::B(32)],
            MmaAcc::F16 => &[Ty::F16x2, Ty::B(32)],
            MmaAcc::S32 => &[Ty::S(32), Ty::U(32), Ty::B(32)],
        },
        o => match kind.input_type(o) {
            MmaDtype::F16 => &[Ty::B(32), Ty::F16x2],
            MmaDtype::Bf16 | MmaDtype::Tf32 => &[Ty::B(32)],
            _ => ANY32,
        },
    }
}

/// The m16n8 forms of `mma.sync.aligned` this interpreter runs (PTX ISA 9.7.14.5.14 mma), for
/// the error messages.
const MMA_FORMS: &str = "mma.sync.aligned.{m16n8k16,m16n8k8}.row.col with .f32.f16.f16.f32, .f16.f16.f16.f16, .f32.bf16.bf16.f32; m16n8k8/m16n8k4 with .f32.tf32.tf32.f32; m16n8k16/m16n8k32 with [.satfinite].s32.{s8,u8}.{s8,u8}.s32; m16n8k32 with .{f32,f16}.{e4m3,e5m2}.{e4m3,e5m2}.{f32,f16}";

/// The [`MmaKind`] of an `mma` opcode's modifiers `m` (`sync`, `aligned`, shape, `row`, `col`,
/// `satfinite`, `.dtype.atype.btype.ctype`), on target `sm` (0: unknown, not checked).
///
/// # Errors
/// A one-line message naming the opcode for: no `.sync.aligned`, a shape other than the m16n8
/// ones (m8n8k4 and the sub-byte and f64 forms are not modelled), layouts other than `.row.col`,
/// a type combination the PTX ISA has not ([`MmaKind::with_types`]), D and C of different types,
/// and a target older than the form's ([`MmaKind::min_sm`]).
fn mma_kind(m: &[&str], name: &str, sm: u32) -> Result<MmaKind, String> {
    let unsupported = || format!("unsupported mma '{name}': modelled are {MMA_FORMS}");
    if !m.contains(&"sync") || !m.contains(&"aligned") {
        return Err(unsupported());
    }
    let shape = MmaShape::ALL
        .into_iter()
        .find(|s| m.contains(&s.name()))
        .ok_or_else(unsupported)?;
    // The layouts: every shape but m8n8k4 is .row.col, in that order (PTX ISA 9.7.14.5.14
    // mma: "mma.sync.aligned.m16n8k16.row.col…"; .alayout/.blayout are free only for m8n8k4).
    let layouts: Vec<&str> = m
        .iter()
        .copied()
        .filter(|s| matches!(*s, "row" | "col"))
        .collect();
    if layouts != ["row", "col"] {
        let shown = if layouts.is_empty() {
            "none".to_string()
        } else {
            layouts.iter().map(|l| format!(".{l}")).collect::<String>()
        };
        return Err(format!(
            "'{name}' has the layouts {shown}: mma.{} takes .row.col only (A row-major, B column-major; {}: .alayout and .blayout are free only for m8n8k4)",
            shape.name(),
            isa("mma")
        ));
    }
    let tys: Vec<&str> = m
        .iter()
        .copied()
        .filter(|s| {
            !matches!(*s, "sync" | "aligned" | "row" | "col" | "satfinite") && *s != shape.name()
        })
        .collect();
    let [dt, at, bt, ct] = tys.as_slice() else {
        return Err(unsupported());
    };
    if dt != ct {
        return Err(format!(
            "'{name}': .dtype .{dt} and .ctype .{ct} differ; D and C have one type in mma.{} ({})",
            shape.name(),
            isa("mma")
        ));
    }
    let ty = |t: &str| MmaDtype::parse(t).map_err(|_| unsupported());
    let acc = MmaAcc::parse(dt).map_err(|_| unsupported())?;
    // A shape/type pair the ISA has not, in PTX's words (the sim's message names `sim mma`'s
    // --dtype flag, which `tilelab ptx` has not).
    for (which, t) in [("A", at), ("B", bt)] {
        if let Err(crate::sim::error::SimError::Unsupported { allowed, .. }) =
            shape.check_dtype(ty(t)?)
        {
            return Err(format!(
                "'{name}': mma.{} does not take .{t} {which} elements; the m16n8 forms are {allowed} ({})",
                shape.name(),
                isa("mma")
            ));
        }
    }
    let kind = MmaKind::with_types(shape, ty(at)?, ty(bt)?, acc, m.contains(&"satfinite"))
        .map_err(|e| format!("'{name}': {e} ({})", isa("mma")))?;
    if sm != 0 && sm < kind.min_sm() {
        return Err(format!(
            "'{name}' needs .target sm_{} or later; this module's .target is sm_{sm} ({})",
            kind.min_sm(),
            isa("mma")
        ));
    }
    Ok(kind)
}

/// The type twice as wide (`mul.wide`/`mad.wide` results): `.s16` → `.s32`, `.u32` → `.u64`.
fn wide(t: Ty) -> Ty {
    match t {
        Ty::S(b) if b <= 32 => Ty::S(b * 2),
        Ty::U(b) if b <= 32 => Ty::U(b * 2),
        Ty::B(b) if b <= 32 => Ty::B(b * 2),
        o => o,
    }
}

/// Marks as pointers the 64-bit parameters whose value reaches the address of a global or
/// generic memory access, through `mov`, `cvta`, integer add/sub/mad (nvcc's pointers carry no
/// `.ptr`; its kernels often add offsets and use the result in `cp.async` or `ld.global` without
/// `cvta.to.global`).
fn mark_pointers(insts: &[Inst], param_regs: &HashMap<u32, usize>, params: &mut [ParamInfo]) {
    // Which parameter each register is derived from (the first one found).
    let mut from: HashMap<u32, usize> = param_regs.clone();
    let src_param = |from: &HashMap<u32, usize>, s: &Src| match s {
        Src::Reg(r) => from.get(r).copied(),
        Src::Imm(_) => None,
    };
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds < 64 {
        changed = false;
        rounds += 1;
        for i in insts {
            let (d, srcs): (u32, Vec<&Src>) = match &i.op {
                Op::Mov { d, a, .. } => (*d, vec![a]),
                Op::Un {
                    k: Un::CvtaToShared | Un::CvtaFromShared | Un::CvtaToLocal | Un::CvtaFromLocal,
                    ..
                } => continue,
                Op::Bin {
                    k: Bin::Add | Bin::Sub,
                    d,
                    a,
                    b,
                    ty,
                } if ty.bits() == 64 => (*d, vec![a, b]),
                Op::Tern {
                    k: Tern::MadLo | Tern::MadWide,
                    d,
                    c,
                    ty,
                    ..
                } if !ty.is_float() => (*d, vec![c]),
                _ => continue,
            };
            if from.contains_key(&d) {
                continue;
            }
            if let Some(p) = srcs.iter().find_map(|s| src_param(&from, s)) {
                from.insert(d, p);
                changed = true;
            }
        }
    }
    for i in insts {
        let addr = match &i.op {
            Op::Ld {
                space: Space::Global | Space::Generic,
                addr,
                ..
            }
            | Op::St {
                space: Space::Global | Space::Generic,
                addr,
                ..
            }
            | Op::Atom {
                space: Space::Global | Space::Generic,
                addr,
                ..
            }
            | Op::CpAsync { src: addr, .. } => addr,
            _ => continue,
        };
        if let Some(p) = src_param(&from, &addr.base) {
            params[p].pointer = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = ".version 8.7\n.target sm_90\n.address_size 64\n";
    /// Registers of every class; the body's first line is line 14.
    const REGS: &str = ".reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n.reg .b16 %rs<4>;\n.reg .f32 %f<8>;\n.reg .f64 %fd<4>;\n.reg .u32 %u<4>;\n.shared .align 16 .b8 s[1024];";

    fn dec(body: &str) -> Result<Program, DecodeError> {
        let src =
            format!("{HEAD}.visible .entry k(.param .u64 k_p0)\n{{\n{REGS}\n{body}\nret;\n}}\n");
        let m = parse::parse(&src).unwrap_or_else(|e| panic!("{e}"));
        decode(&m, &m.kernels[0])
    }

    /// The error of `body`, checked to be one line at line 14 (the body's first).
    fn err_of(body: &str) -> String {
        let e = dec(body).expect_err(body);
        assert_eq!(e.line, 14, "{body}: {e}");
        assert!(!e.message.contains('\n'), "{e}");
        assert!(
            !e.message.contains("Name(") && !e.message.contains("Vector("),
            "{e}"
        );
        e.message
    }

    /// The qualifier rules of the PTX ISA beyond the lists of `modifiers_of` (`check_rules`),
    /// one family each, as ptxas (CUDA 13.0, sm_90) refuses them: cvt's rounding (9.7.9.21),
    /// the rounding `fma`/`mad`/`div`/`sqrt`/`rcp` need and `.approx` of `ex2`/`sin`, no
    /// float qualifiers on integers (§9.7.1), `.lo/.hi/.wide`, the types of `abs`, `bfe`,
    /// `popc`, `atom.add`, `.sync.aligned`, `vote` without `.sync` on sm_70+, cache operators
    /// per instruction and space, scopes of `ld.relaxed`, `membar`/`fence` levels, an immediate
    /// `cp.async.wait_group`, vectors over 128 bits. What nvcc and Triton write stays accepted.
    #[test]
    fn isa_qualifier_rules_refuse_each_family() {
        let bad: &[(&str, &str)] = &[
            ("cvt.f32.s32 %f1, %r1;", "needs a floating-point rounding"),
            (
                "cvt.f32.f64 %f1, %fd1;",
                "narrows and needs a floating-point rounding",
            ),
            ("cvt.s32.f32 %r1, %f1;", "needs an integer rounding"),
            (
                "cvt.rn.s32.f32 %r1, %f1;",
                "rounds with .rni .rzi .rmi .rpi, not .rn",
            ),
            ("cvt.rzi.f32.s32 %f1, %r1;", "not .rzi"),
            (
                "cvt.rn.u32.s32 %r1, %r2;",
                "integer-to-integer cvt takes no rounding",
            ),
            (
                "cvt.rn.f64.f32 %fd1, %f1;",
                "widens exactly and takes no rounding",
            ),
            (
                "mad.f32 %f1, %f2, %f3, %f4;",
                "mad.f32 needs a rounding modifier",
            ),
            (
                "fma.f32 %f1, %f2, %f3, %f4;",
                "fma needs a rounding modifier",
            ),
            (
                "div.f32 %f1, %f2, %f3;",
                "div.f32 needs one of .approx .full",
            ),
            ("div.f64 %fd1, %fd2, %fd3;", "div.f64 needs one of .rn"),
            ("sqrt.f32 %f1, %f2;", "sqrt needs .approx or a rounding"),
            ("rcp.f32 %f1, %f2;", "rcp needs .approx or a rounding"),
            ("ex2.f32 %f1, %f2;", "ex2 needs .approx"),
            ("sin.f32 %f1, %f2;", "sin needs .approx"),
            (
                "add.ftz.s32 %r1, %r2, %r3;",
                ".ftz is a floating-point qualifier",
            ),
            (
                "add.rn.s32 %r1, %r2, %r3;",
                ".rn is a floating-point qualifier",
            ),
            (
                "div.rn.u32 %r1, %r2, %r3;",
                ".rn is a floating-point qualifier",
            ),
            (
                "setp.eq.ftz.s32 %p1, %r1, %r2;",
                ".ftz is a floating-point qualifier",
            ),
            (
                "mul.wide.u64 %rd1, %rd2, %rd3;",
                "mul.wide takes 16- and 32-bit integers",
            ),
            ("mul.lo.f32 %f1, %f2, %f3;", "floating-point mul takes none"),
            (
                "mul.s32 %r1, %r2, %r3;",
                "integer mul needs one of .lo .hi .wide",
            ),
            (
                "mad.s32 %r1, %r2, %r3, %r4;",
                "integer mad needs one of .lo .hi .wide",
            ),
            ("abs.u32 %r1, %r2;", "abs takes .s16"),
            ("neg.u32 %r1, %r2;", "neg takes .s16"),
            (
                "bfe.b32 %r1, %r2, %r3, %r4;",
                "bfe takes .u32 .s32 .u64 .s64, not .b32",
            ),
        ];
        check_bad(bad);
    }

    /// Each `(instruction, message part)` is refused with the part and a PTX ISA citation.
    fn check_bad(bad: &[(&str, &str)]) {
        for (body, want) in bad {
            let m = err_of(body);
            assert!(m.contains(want), "{body}: {m}");
            assert!(m.contains("PTX ISA"), "{body}: {m}");
        }
    }

    /// The same families (second half): see `isa_qualifier_rules_refuse_each_family`.
    #[test]
    fn isa_qualifier_rules_refuse_each_family_2() {
        let bad: &[(&str, &str)] = &[
            ("popc.u32 %r1, %r2;", "popc takes .b32 .b64, not .u32"),
            ("atom.shared.add.b32 %r1, [s], 1;", "atom.add takes .u32"),
            (
                "atom.shared.inc.b32 %r1, [s], 1;",
                "atom.inc takes .u32, not .b32",
            ),
            (
                "atom.shared.add.f16 %rs1, [s], %rs2;",
                "atom.add.f16 needs .noftz",
            ),
            (
                "ldmatrix.sync.m8n8.x1.shared.b16 {%r1}, [s];",
                "needs one of .aligned",
            ),
            (
                "ldmatrix.aligned.m8n8.x1.shared.b16 {%r1}, [s];",
                "needs one of .sync",
            ),
            (
                "stmatrix.sync.m8n8.x1.shared.b16 [s], {%r1};",
                "needs one of .aligned",
            ),
            (
                "mma.sync.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f4};",
                "needs one of .aligned",
            ),
            (
                "vote.any.pred %p1, %p2;",
                "vote without .sync is not supported on sm_70",
            ),
            (
                "shfl.bfly.b32 %r1, %r2, 1, 31;",
                "shfl without .sync is not supported on sm_70",
            ),
            (
                "ld.shared.nc.u32 %r1, [s];",
                ".nc (the non-coherent read-only cache) is a qualifier of ld.global only",
            ),
            (
                "st.global.nc.u32 [%rd1], %r1;",
                "'.nc' in 'st.global.nc.u32' is not a qualifier of st",
            ),
            (
                "st.global.ca.u32 [%rd1], %r1;",
                "'.ca' in 'st.global.ca.u32' is not a qualifier of st",
            ),
            (
                "ld.global.wb.u32 %r1, [%rd1];",
                "'.wb' in 'ld.global.wb.u32' is not a qualifier of ld",
            ),
            ("ld.release.gpu.global.u32 %r1, [%rd1];", "'.release' in"),
            (
                "ld.relaxed.shared.u32 %r1, [s];",
                "ld.relaxed needs a scope",
            ),
            (
                "st.gpu.global.u32 [%rd1], %r1;",
                "goes with .relaxed or .release",
            ),
            ("membar.foo;", "membar takes one level .cta .gl .sys"),
            ("fence.foo;", "fence is fence{.sc,.acq_rel}.scope"),
            ("fence.sc;", "fence is fence{.sc,.acq_rel}.scope"),
            (
                "cp.async.wait_group %r1;",
                "cp.async.wait_group takes an integer constant N",
            ),
            (
                "ld.global.v8.f32 {%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f1}, [%rd1];",
                "moves 256 bits",
            ),
            (
                "ld.global.v4.f64 {%fd1,%fd2,%fd3,%fd1}, [%rd1];",
                "moves 256 bits",
            ),
        ];
        check_bad(bad);
    }

    /// What nvcc and Triton write passes the same rules.
    #[test]
    fn isa_qualifier_rules_accept_what_compilers_write() {
        for ok in [
            "cvt.rn.f32.s32 %f1, %r1;",
            "cvt.rzi.s32.f32 %r1, %f1;",
            "cvt.rn.f32.f64 %f1, %fd1;",
            "cvt.f64.f32 %fd1, %f1;",
            "cvt.rni.f32.f32 %f1, %f2;",
            "cvt.ftz.f32.f32 %f1, %f2;",
            "cvt.u64.u32 %rd1, %r1;",
            "cvt.rn.f16x2.f32 %r1, %f1, %f2;",
            "mad.rn.f32 %f1, %f2, %f3, %f4;",
            "mad.lo.s32 %r1, %r2, %r3, %r4;",
            "mad.wide.u32 %rd1, %r2, %r3, %rd4;",
            "fma.rn.ftz.f32 %f1, %f2, %f3, %f4;",
            "div.full.f32 %f1, %f2, %f3;",
            "div.approx.ftz.f32 %f1, %f2, %f3;",
            "div.u32 %r1, %r2, %r3;",
            "sqrt.rn.f32 %f1, %f2;",
            "rcp.approx.ftz.f32 %f1, %f2;",
            "rcp.approx.ftz.f64 %fd1, %fd2;",
            "ex2.approx.ftz.f32 %f1, %f2;",
            "add.sat.s32 %r1, %r2, %r3;",
            "mul.f32 %f1, %f2, %f3;",
            "mul.wide.s16 %r1, %rs1, %rs2;",
            "abs.s32 %r1, %r2;",
            "neg.ftz.f32 %f1, %f2;",
            "bfe.u32 %r1, %r2, %r3, %r4;",
            "popc.b32 %r1, %r2;",
            "atom.shared.add.u32 %r1, [s], 1;",
            "atom.global.add.f32 %f1, [%rd1], %f2;",
            "atom.shared.add.noftz.f16 %rs1, [s], %rs2;",
            "atom.shared.exch.b32 %r1, [s], %r2;",
            "vote.sync.any.pred %p1, %p2, -1;",
            "ld.global.nc.u32 %r1, [%rd1];",
            "ld.global.cg.u32 %r1, [%rd1];",
            "st.global.wb.u32 [%rd1], %r1;",
            "st.global.cs.u32 [%rd1], %r1;",
            "ld.relaxed.gpu.global.u32 %r1, [%rd1];",
            "ld.acquire.sys.global.u32 %r1, [%rd1];",
            "st.release.cta.shared.u32 [s], %r1;",
            "ld.volatile.global.u32 %r1, [%rd1];",
            "membar.gl;",
            "membar.cta;",
            "fence.acq_rel.gpu;",
            "fence.sc.cta;",
            "fence.proxy.async.shared::cta;",
            "fence.proxy.async;",
            "fence.mbarrier_init.release.cluster;",
            "cp.async.wait_group 0;",
            "ld.global.v4.f32 {%f1,%f2,%f3,%f4}, [%rd1];",
            "ld.global.v2.f64 {%fd1,%fd2}, [%rd1];",
        ] {
            // Accepted, or past every check and not simulated.
            if let Err(e) = dec(ok) {
                assert!(
                    e.message.starts_with("unsupported instruction"),
                    "{ok}: {e}"
                );
            }
        }
    }

    /// Operand counts from each instruction's syntax in the PTX ISA (§9.7): `add.type d, a, b`
    /// has 3, `mad.mode.type d, a, b, c` 4, `bfi.type f, a, b, c, d` 5, `shfl.sync.mode.b32
    /// d[|p], a, b, c, membermask` 5, `vote.sync.mode.pred d, {!}a, membermask` 3, `setp` 3
    /// (4 with `.BoolOp`), `cvt.rn.f16x2.f32 d, a, b` 3, `bar.sync a{, b}` 1 or 2,
    /// `atom.cas.type d, [a], b, c` 4, `red.op.type [a], b` 2, `cp.async.ca.shared.global
    /// [dst], [src], cp-size{, src-size}` 3 or 4, `mma … d, a, b, c` 4. One operand too many or
    /// too few is an error naming the count, for every one.
    #[test]
    fn operand_counts_are_the_isa_syntax() {
        let isa: &[(&str, usize, usize)] = &[
            ("mov.b32", 2, 2),
            ("cvta.to.global.u64", 2, 2),
            ("add.s32", 3, 3),
            ("sub.f32", 3, 3),
            ("mul.lo.s32", 3, 3),
            ("div.rn.f32", 3, 3),
            ("rem.u32", 3, 3),
            ("min.s32", 3, 3),
            ("max.f32", 3, 3),
            ("and.b32", 3, 3),
            ("or.b32", 3, 3),
            ("xor.b32", 3, 3),
            ("shl.b32", 3, 3),
            ("shr.u32", 3, 3),
            ("copysign.f32", 3, 3),
            ("mad.lo.s32", 4, 4),
            ("fma.rn.f32", 4, 4),
            ("bfe.u32", 4, 4),
            ("prmt.b32", 4, 4),
            ("shf.l.wrap.b32", 4, 4),
            ("bfi.b32", 5, 5),
            ("lop3.b32", 5, 5),
            ("not.b32", 2, 2),
            ("cnot.b32", 2, 2),
            ("neg.s32", 2, 2),
            ("abs.f32", 2, 2),
            ("popc.b32", 2, 2),
            ("clz.b32", 2, 2),
            ("brev.b32", 2, 2),
            ("ex2.approx.f32", 2, 2),
            ("lg2.approx.f32", 2, 2),
            ("rcp.rn.f32", 2, 2),
            ("sqrt.rn.f32", 2, 2),
            ("rsqrt.approx.f32", 2, 2),
            ("sin.approx.f32", 2, 2),
            ("cos.approx.f32", 2, 2),
            ("tanh.approx.f32", 2, 2),
            ("setp.lt.s32", 3, 3),
            ("setp.lt.and.s32", 4, 4),
            ("selp.b32", 4, 4),
            ("cvt.u32.u16", 2, 2),
            ("cvt.rn.f16x2.f32", 3, 3),
            ("bra", 1, 1),
            ("ret", 0, 0),
            ("exit", 0, 0),
            ("bar.sync", 1, 2),
            ("barrier.sync", 1, 2),
            ("bar.arrive", 2, 2),
            ("bar.warp.sync", 1, 1),
            ("membar.gl", 0, 0),
            ("nanosleep.u32", 1, 1),
            ("activemask.b32", 1, 1),
            ("ld.global.u32", 2, 2),
            ("ld.global.L2::cache_hint.u32", 3, 3),
            ("ldu.global.u32", 2, 2),
            ("st.global.u32", 2, 2),
            ("ldmatrix.sync.aligned.m8n8.x1.shared.b16", 2, 2),
            ("stmatrix.sync.aligned.m8n8.x1.shared.b16", 2, 2),
            ("cp.async.commit_group", 0, 0),
            ("cp.async.wait_group", 1, 1),
            ("cp.async.wait_all", 0, 0),
            ("cp.async.ca.shared.global", 3, 4),
            ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4, 4),
            ("shfl.sync.bfly.b32", 5, 5),
            ("vote.sync.any.pred", 3, 3),
            ("vote.sync.ballot.b32", 3, 3),
            ("atom.global.add.u32", 3, 3),
            ("atom.global.cas.b32", 4, 4),
            ("red.global.add.u32", 2, 2),
        ];
        for &(op, lo, hi) in isa {
            let name = op.split('.').next().unwrap();
            let row = FORMS
                .iter()
                .find(|f| f.op == name && f.when.iter().all(|w| op.split('.').any(|m| m == *w)))
                .unwrap_or_else(|| panic!("no row for {op}"));
            assert_eq!(
                (usize::from(row.operands.0), usize::from(row.operands.1)),
                (lo, hi),
                "{op}"
            );
            for n in [lo.wrapping_sub(1), hi + 1] {
                if n == usize::MAX {
                    continue;
                }
                let ops = vec!["%r1"; n].join(", ");
                let m = err_of(&format!("{op} {ops};"));
                let s = if n == 1 { "" } else { "s" };
                assert!(
                    m.contains(&format!("has {n} operand{s}; {name} takes")),
                    "{op}: {m}"
                );
            }
        }
        // The sample of the hostile suite, in full.
        assert_eq!(
            err_of("add.s32 %r1, %r2, %r2, %r2;"),
            "'add.s32 %r1, %r2, %r2, %r2' has 4 operands; add takes 3 (PTX ISA §9.7 'add': add.type d, a, b)"
        );
    }

    /// State spaces (PTX ISA §5.1; each instruction's `.ss`): one per memory instruction, one
    /// it accesses (`.const` is read-only, §5.1.3; kernel parameters too, §5.1.6.1), none on
    /// an ALU instruction, `cp.async` from `.global` to `.shared`.
    #[test]
    fn state_spaces_are_the_instructions_own() {
        let m = err_of("ld.global.shared.u32 %r1, [%rd1];");
        assert!(
            m.contains("names two state spaces '.global' and '.shared'"),
            "{m}"
        );
        assert!(m.contains("PTX ISA 9.7.9.8 ld"), "{m}");
        let m = err_of("ld.shared.shared.u32 %r1, [%rd1];");
        assert!(
            m.starts_with("'.shared' appears twice in 'ld.shared.shared.u32'"),
            "{m}"
        );
        for st in [
            "st.const.u32 [%rd1], %r1;",
            "atom.const.add.u32 %r1, [%rd1], 1;",
            "red.const.add.u32 [%rd1], 1;",
        ] {
            let m = err_of(st);
            assert!(
                m.contains("the .const state space is read-only (PTX ISA §5.1.3"),
                "{m}"
            );
        }
        let m = err_of("st.param.u32 [k_p0], %r1;");
        assert!(m.contains("a kernel's parameters are read-only"), "{m}");
        let m = err_of("ld.tex.u32 %r1, [%rd1];");
        assert!(
            m.contains("ld accesses .const .global .local .param"),
            "{m}"
        );
        let m = err_of("add.global.s32 %r1, %r2, %r3;");
        assert!(
            m.contains("names the state space '.global': add takes none"),
            "{m}"
        );
        let m = err_of("cp.async.ca.global.shared [%rd1], [%rd2], 16;");
        assert!(m.contains("copies from .global to .shared"), "{m}");
        for ok in [
            "ld.const.u32 %r1, [%rd1];",
            "ld.param.u64 %rd1, [k_p0];",
            "ld.shared::cta.u32 %r1, [%r2];",
            "st.shared.u32 [%r2], %r1;",
            "cp.async.cg.shared.global [%r1], [%rd1], 16;",
            "cvta.to.global.u64 %rd1, %rd2;",
        ] {
            dec(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    /// PTX ISA §5.2.1: `.b33` is no type, in an instruction as in a declaration; an
    /// instruction takes its number of types (`add` one, `cvt` two, and `cvt.f32.f32` is
    /// legal: 9.7.9.21 cvt allows the same type with an integer rounding).
    #[test]
    fn instruction_types_are_ptx_types() {
        let m = err_of("add.b33 %r1, %r2, %r3;");
        assert!(m.starts_with("'.b33' is not a PTX type"), "{m}");
        let m = err_of("add.s32.u32 %r1, %r2, %r3;");
        assert!(
            m.contains("has 2 type suffixes (.s32 .u32), add takes 1"),
            "{m}"
        );
        let m = err_of("add.s32.s32 %r1, %r2, %r3;");
        assert!(m.contains("'.s32' appears twice"), "{m}");
        dec("cvt.rni.f32.f32 %f1, %f2;").unwrap();
    }

    /// PTX ISA §9.4 "Type Checking Rules" and §9.4.1 "Relaxed Type-checking Rules" (ld, st,
    /// cvt): rows are instruction types, columns register types.
    #[test]
    fn operand_types_agree_as_the_isa_tables_say() {
        use Ty::*;
        let exact = [
            (B(32), U(32), true),
            (B(32), S(32), true),
            (B(32), F32, true),
            (U(32), B(32), true),
            (S(32), U(32), true),
            (U(16), S(16), true),
            (S(32), F32, false),
            (U(32), F32, false),
            (F32, B(32), true),
            (F32, S(32), false),
            (F32, U(32), false),
            (F32, F64, false),
            (F64, B(64), true),
            (F16x2, B(32), true),
            (F16x2, F32, false),
            (F16, Bf16, false),
            (Bf16, B(16), true),
            (U(32), B(64), false),
            (U(64), U(32), false),
            (Pred, Pred, true),
            (Pred, B(32), false),
            (B(32), Pred, false),
        ];
        for (t, r, ok) in exact {
            assert_eq!(
                agrees(Want::Ty(t), r),
                ok,
                "instruction .{} register .{}",
                t.name(),
                r.name()
            );
        }
        let wide = [
            (U(8), B(32), true),
            (U(8), U(16), true),
            (S(16), S(32), true),
            (B(16), F32, true),
            (F32, B(64), true),
            (F32, F64, false),
            (F16, F32, false),
            (U(32), F64, false),
            (F32, U(64), false),
            (U(64), U(32), false),
            (B(8), Pred, false),
        ];
        for (t, r, ok) in wide {
            assert_eq!(
                agrees(Want::Wide(t), r),
                ok,
                "wide .{} register .{}",
                t.name(),
                r.name()
            );
        }
        // In instructions.
        let m = err_of("add.s32 %r1, %p1, %r2;");
        assert!(
            m.starts_with(
                "'%p1' is declared .pred, which does not agree with .s32 in 'add.s32 %r1, %p1, %r2'"
            ),
            "{m}"
        );
        let m = err_of("add.s32 %r1, %rs1, %r2;");
        assert!(m.starts_with("'%rs1' is declared .b16"), "{m}");
        let m = err_of("add.f32 %f1, %u1, %f2;");
        assert!(m.starts_with("'%u1' is declared .u32"), "{m}");
        let m = err_of("ld.global.f32 %fd1, [%rd1];");
        assert!(m.contains("PTX ISA §9.4.1"), "{m}");
        let m = err_of("setp.lt.s32 %r1, %r2, %r3;");
        assert!(
            m.starts_with("'%r1' is declared .b32, which does not agree with .pred"),
            "{m}"
        );
        for ok in [
            "add.s32 %r1, %u1, %r2;",
            "add.f32 %f1, %r1, %f2;",
            "mov.b32 %f1, %r1;",
            "ld.global.u8 %r1, [%rd1];",
            "ld.shared.b16 %f1, [%r1];",
            "st.global.u8 [%rd1], %rd2;",
            "cvt.u64.u32 %rd1, %r1;",
            "cvt.u16.u32 %rs1, %r1;",
            "mul.wide.s32 %rd1, %r1, 4;",
            "mad.wide.u32 %rd1, %r1, %r2, %rd2;",
            "shl.b64 %rd1, %rd2, %r1;",
            "popc.b64 %r1, %rd1;",
            "mov.u16 %rs1, %tid.x;",
            "selp.f32 %f1, %f2, 0f3F800000, %p1;",
            "mov.b64 %rd1, {%r1, %r2};",
            "mov.b32 {%rs1, %rs2}, %r1;",
        ] {
            dec(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        // %tid.x is .u32 (PTX ISA §10.1): 16-bit reads are legacy and allowed, 64-bit ones not.
        let m = err_of("mov.u64 %rd1, %tid.x;");
        assert!(m.starts_with("'%tid.x' is declared .u32"), "{m}");
        let m = err_of("ld.shared.u32 %r1, [%p1];");
        assert!(
            m.contains("an address register holds a 32- or 64-bit integer"),
            "{m}"
        );
    }

    /// PTX ISA §9.3 "Predicated Execution": a guard is a `.pred` register.
    #[test]
    fn guards_are_predicates() {
        let m = err_of("@%r1 bra $L;\n$L:");
        assert!(
            m.starts_with(
                "guard '@%r1' is declared .b32: a guard predicate is a .pred register (PTX ISA §9.3"
            ),
            "{m}"
        );
        let m = err_of("@!%tid.x ret;");
        assert!(m.starts_with("guard '@!%tid.x' is declared .u32"), "{m}");
        dec("@!%p1 bra $L;\n$L:").unwrap();
    }

    /// PTX ISA §10 "Special Registers": predefined and read-only: never a destination, never
    /// declared.
    #[test]
    fn special_registers_are_read_only() {
        for body in [
            "mov.u32 %tid.x, %r1;",
            "add.u32 %laneid, %r1, 1;",
            "mov.u32 %clock, %r1;",
            "ld.global.u32 %ntid.y, [%rd1];",
            "setp.lt.s32 %p1|%lanemask_lt, %r1, 0;",
            "mov.b32 {%rs1, %smid}, %r1;",
        ] {
            let m = err_of(body);
            assert!(
                m.contains("is a special register, which is read-only (PTX ISA §10"),
                "{body}: {m}"
            );
        }
        let m = err_of(".reg .b32 %tid;");
        assert!(m.contains("'%tid' is a special register"), "{m}");
        let m = err_of(".reg .b32 %envreg3;");
        assert!(m.contains("'%envreg3' is a special register"), "{m}");
        assert!(
            is_special_register("%pm7_64")
                && !is_special_register("%pm8")
                && !is_special_register("%r1")
        );
    }

    #[test]
    fn registers_are_declared_once_per_block() {
        let m = err_of(".reg .b32 %r<3>;");
        assert!(
            m.starts_with("register '%r0' is declared twice in one block (first at line 6)"),
            "{m}"
        );
        let m = err_of(".reg .pred %q, %q;");
        assert!(m.contains("'%q'"), "{m}");
        // An inner block may declare a name again (and it shadows the outer one there).
        dec("{\n.reg .b64 %r1;\nmov.b64 %r1, %rd1;\n}\nmov.b32 %r1, 1;").unwrap();
    }

    /// A `%x<N>` range is one entry of its block ([`RegStem`]): each of its names still
    /// collides with the same name declared alone, before or after, with the same first error
    /// a name-by-name declaration gives; a special register's name in a range is refused.
    #[test]
    fn register_ranges_are_names_one_by_one() {
        // The message of `body`'s error (on whichever of its lines).
        let err_of = |body: &str| dec(body).expect_err(body).message;
        let twice = |body: &str, name: &str| {
            let m = err_of(body);
            assert!(
                m.starts_with(&format!("register '{name}' is declared twice in one block")),
                "{body}: {m}"
            );
        };
        twice(".reg .b32 %x5;\n.reg .b32 %x<10>;", "%x5");
        twice(".reg .b32 %x<10>;\n.reg .b32 %x5;", "%x5");
        twice(".reg .b32 %x<10>;\n.reg .b32 %x<3>;", "%x0");
        twice(".reg .b32 %x9, %x4;\n.reg .b32 %x<10>;", "%x4");
        // `%x1<10>` is `%x10` … `%x19`.
        twice(".reg .b32 %x1<10>;\n.reg .b32 %x<20>;", "%x10");
        twice(".reg .b32 %x<20>;\n.reg .b32 %x1<10>;", "%x10");
        twice(".reg .b32 %clock5;\n.reg .b32 %clock<70>;", "%clock5");
        for (body, name) in [
            (".reg .b32 %pm<8>;", "%pm0"),
            (".reg .b32 %clock<70>;", "%clock64"),
            (".reg .b32 %envreg1<2>;", "%envreg10"),
            (
                ".reg .b32 %reserved_smem_offset_<2>;",
                "%reserved_smem_offset_0",
            ),
            (".reg .b32 %clock<65>;\n.reg .b32 %clock<1>;", "%clock64"),
        ] {
            let m = err_of(body);
            assert!(
                m.contains(&format!("'{name}' is a special register")),
                "{body}: {m}"
            );
        }
        // `%x01` is not `%x1`; `%x<5>` ends at `%x4`; an empty range declares nothing.
        dec(".reg .b32 %x<5>;\n.reg .b32 %x01, %x;\nmov.b32 %x01, %x1;\nmov.b32 %x, %x4;").unwrap();
        dec(".reg .b32 %x<0>;\n.reg .b32 %x<0>;\n.reg .b32 %x0;").unwrap();
        let m = err_of(".reg .b32 %x<5>;\nmov.b32 %x5, 1;");
        assert!(m.contains("register '%x5' is not declared"), "{m}");
        let m = err_of(".reg .b32 %x<5>;\nmov.b32 %x04, 1;");
        assert!(m.contains("register '%x04' is not declared"), "{m}");
        // An inner block's range shadows the outer one there, and only there.
        dec(".reg .b32 %x<2>;\n{\n.reg .f32 %x<2>;\nmov.f32 %x1, 0f3F800000;\n}\nmov.u32 %x1, 1;")
            .unwrap();
        let m = err_of(".reg .b32 %x<2>;\n{\n.reg .f32 %x<2>;\nmov.u32 %x1, 1;\n}");
        assert!(m.contains("'%x1' is declared .f32"), "{m}");
        assert_eq!(split_reg_name("%r12"), ("%r", Some(12)));
        assert_eq!(split_reg_name("%r0"), ("%r", Some(0)));
        assert_eq!(split_reg_name("%r01"), ("%r01", None));
        assert_eq!(split_reg_name("%p"), ("%p", None));
        assert_eq!(split_reg_name("%r4294967295"), ("%r", Some(u32::MAX)));
        assert_eq!(split_reg_name("%r4294967296"), ("%r4294967296", None));
        assert_eq!(split_reg_name("%r99999999999"), ("%r99999999999", None));
    }

    /// PTX ISA 9.7.14.5.14 mma: `mma.sync.aligned.m16n8k16.row.col…` and
    /// `…m16n8k8.row.col…`: A row-major and B column-major, in that order; only m8n8k4 takes
    /// other layouts.
    #[test]
    fn mma_layouts_are_row_col() {
        let ops = "{%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f4}";
        let ok = format!("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {ops};");
        dec(&ok).unwrap();
        for bad in ["col.row", "row", "col"] {
            let m = err_of(&format!(
                "mma.sync.aligned.m16n8k16.{bad}.f32.f16.f16.f32 {ops};"
            ));
            assert!(m.contains("mma.m16n8k16 takes .row.col only"), "{bad}: {m}");
        }
        // A layout given twice is a repeated qualifier (one rule for every instruction).
        for bad in ["row.row", "col.col", "row.col.row"] {
            let m = err_of(&format!(
                "mma.sync.aligned.m16n8k16.{bad}.f32.f16.f16.f32 {ops};"
            ));
            assert!(
                m.contains("appears twice in 'mma.sync.aligned.m16n8k16"),
                "{bad}: {m}"
            );
        }
        let m = err_of(
            "mma.sync.aligned.m16n8k8.col.row.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2}, {%r5}, {%f5, %f6, %f7, %f4};",
        );
        assert!(m.contains("mma.m16n8k8 takes .row.col only"), "{m}");
        // Fragments are registers of the fragment types: D and C .f32, A and B .b32.
        let m = err_of(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%fd1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f4};",
        );
        assert!(m.starts_with("'%fd1' is declared .f64"), "{m}");
    }

    /// Static shared memory adds up to at most sm_90's 232,448 bytes per block (CUDA C++
    /// Programming Guide, Table 31: 227 KB); constant memory to 64 KB.
    #[test]
    fn static_memory_sums_stay_within_sm90() {
        let src = format!(
            "{HEAD}.visible .entry k()\n{{\n.shared .align 16 .b8 a[131072];\n.shared .align 16 .b8 b[101376];\nret;\n}}\n"
        );
        let m = parse::parse(&src).unwrap();
        assert_eq!(decode(&m, &m.kernels[0]).unwrap().static_smem, 232_448);
        let src = src.replace("b[101376]", "b[101377]");
        let m = parse::parse(&src).unwrap();
        let e = decode(&m, &m.kernels[0]).unwrap_err();
        assert_eq!(e.line, 7, "{e}");
        assert!(e.message.contains("past 232448 bytes"), "{e}");
        let src = format!(
            "{HEAD}.const .b8 c1[40000];\n.const .b8 c2[30000];\n.visible .entry k()\n{{\nret;\n}}\n"
        );
        let m = parse::parse(&src).unwrap();
        let e = decode(&m, &m.kernels[0]).unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        assert!(
            e.message
                .contains("70000 bytes, past 65536 bytes of constant memory"),
            "{e}"
        );
    }

    /// Each instruction's qualifiers are those of its syntax (PTX ISA §9.7), at most one of
    /// each slot (one rounding, one shuffle mode, one atomic operation), and the slots its
    /// syntax requires (`shf.{l,r}.{wrap,clamp}`, `shfl.sync.mode`, `cp.async.{ca,cg}`).
    #[test]
    fn qualifiers_are_the_instructions_own() {
        let m = err_of("add.foo.s32 %r1, %r2, %r3;");
        assert!(
            m.starts_with("'.foo' in 'add.foo.s32' is not a qualifier of add"),
            "{m}"
        );
        let m = err_of("bra.zz $L;\n$L:");
        assert!(
            m.starts_with("'.zz' in 'bra.zz' is not a qualifier of bra"),
            "{m}"
        );
        let m = err_of("shfl.sync.up.down.b32 %r1, %r2, 1, 31, -1;");
        assert!(
            m.contains("has .up .down: shfl takes at most one of .up .down .bfly .idx"),
            "{m}"
        );
        let m = err_of("shfl.sync.b32 %r1, %r2, 1, 31, -1;");
        assert!(m.contains("needs one of .up .down .bfly .idx"), "{m}");
        let m = err_of("shf.b32 %r1, %r2, %r3, %r4;");
        assert!(m.contains("needs one of .l .r"), "{m}");
        let m = err_of("atom.global.add.min.u32 %r1, [%rd1], 1;");
        assert!(m.contains("has .add .min"), "{m}");
        let m = err_of("cp.async.shared.global [%r1], [%rd1], 16;");
        assert!(m.contains("needs one of .ca .cg"), "{m}");
        let m = err_of("div.rn.approx.f32 %f1, %f2, %f3;");
        assert!(m.contains("has .rn .approx"), "{m}");
        for ok in [
            "add.rn.ftz.sat.f32 %f1, %f2, %f3;",
            "max.NaN.f32 %f1, %f2, %f3;",
            "ld.global.nc.L1::evict_last.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];",
            "st.global.cs.u32 [%rd1], %r1;",
            "shf.r.clamp.b32 %r1, %r2, %r3, %r4;",
            "bar.sync 0;",
            "barrier.sync.aligned 1, 64;",
            "bra.uni $L;\n$L:",
        ] {
            dec(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    /// PTX ISA §9.3.1 "Comparisons": bit-size types compare eq and ne only; signed integers
    /// eq ne lt le gt ge; unsigned integers those and lo ls hi hs; floats eq … ge, the
    /// unordered equ neu ltu leu gtu geu, num and nan.
    #[test]
    fn comparisons_fit_their_type() {
        for bad in [
            "setp.lt.b32 %p1, %r1, %r2;",
            "setp.lo.s32 %p1, %r1, %r2;",
            "setp.equ.s32 %p1, %r1, %r2;",
            "setp.num.u32 %p1, %r1, %r2;",
            "setp.hi.f32 %p1, %f1, %f2;",
        ] {
            let m = err_of(bad);
            assert!(m.contains("PTX ISA §9.3.1 Comparisons"), "{bad}: {m}");
        }
        for ok in [
            "setp.eq.b32 %p1, %r1, %r2;",
            "setp.ne.b64 %p1, %rd1, %rd2;",
            "setp.lt.u32 %p1, %r1, %r2;",
            "setp.hs.u32 %p1, %r1, %r2;",
            "setp.ge.s32 %p1, %r1, %r2;",
            "setp.nan.f32 %p1, %f1, %f2;",
            "setp.gtu.ftz.f32 %p1|%p2, %f1, %f2;",
        ] {
            dec(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    /// PTX ISA §9.7 'bar': barriers 0 through 15, thread counts a multiple of the warp size.
    #[test]
    fn barrier_immediates_are_in_range() {
        let m = err_of("bar.sync 16;");
        assert!(
            m.contains("barrier 16 does not exist; a CTA has barriers 0 through 15"),
            "{m}"
        );
        let m = err_of("bar.sync 1, 48;");
        assert!(
            m.contains("multiple of the warp size (32), found 48"),
            "{m}"
        );
        dec("bar.sync 15, 64;").unwrap();
    }
}
