//! A parsed kernel → [`Program`]: every instruction decoded once into a compact [`Op`] whose
//! registers are indices into a flat per-warp register file, labels resolved to instruction
//! indices, special registers (`%tid.x`, `%laneid`, …) and variable addresses turned into
//! per-lane constants, and each branch's reconvergence point (its immediate post-dominator,
//! [`super::cfg`]). Nothing about an instruction is looked up by name while a kernel runs.
//!
//! An opcode outside the supported subset is a [`DecodeError`] naming the line; the subset is
//! listed in `docs/ptx.md`.

use std::collections::HashMap;
use std::fmt;

use super::parse::{self, Kernel, Module, Operand, Stmt};
use super::types::Ty;
use crate::sim::mma::{MmaDtype, MmaShape};

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
}

/// State spaces of memory instructions (PTX ISA §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// `.global` (also `.const` variables of the module, read-only here by convention).
    Global,
    /// `.shared` / `.shared::cta`.
    Shared,
    /// `.param` (kernel parameters).
    Param,
    /// `.local`: the thread's own frame (nvcc's `__local_depot0` stack).
    Local,
    /// No state space: a generic address (PTX ISA §6.4.1.1: global unless it falls in the
    /// shared window at [`SHARED_WINDOW`] or the local window at [`LOCAL_WINDOW`]).
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
    /// cvta.to.local: generic → local (subtracts [`LOCAL_WINDOW`])
    CvtaToLocal,
    /// cvta.local: local → generic (adds [`LOCAL_WINDOW`])
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
    /// bar.sync / barrier.sync / bar.arrive (no wait).
    Bar {
        /// Barrier id.
        id: Src,
        /// Thread count, if given.
        count: Option<Src>,
        /// `bar.arrive`: arrive without waiting.
        arrive: bool,
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
    /// cp.async.commit_group.
    CpCommit,
    /// cp.async.wait_group N / wait_all.
    CpWait,
    /// mma.sync.aligned.
    Mma {
        /// Shape.
        shape: MmaShape,
        /// A/B type.
        dtype: MmaDtype,
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
    /// Registers per lane (the flat register file's width).
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
    /// `.reqntid` of the kernel.
    pub reqntid: Option<[u32; 3]>,
    /// `.maxntid` of the kernel.
    pub maxntid: Option<[u32; 3]>,
    /// Reconvergence point of each branch instruction (index), `u32::MAX` for none (the
    /// immediate post-dominator is the kernel's exit); unused for other instructions.
    pub reconverge: Vec<u32>,
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
/// The largest `.local` frame accepted, in bytes per thread (CUDA's 512 KiB of local memory
/// per thread).
pub const LOCAL_FRAME_LIMIT: u32 = 512 * 1024;
/// The most bytes a kernel's parameters may take (CUDA 12.1 and later on Volta and newer:
/// 32,764; older toolkits allow 4,096).
pub const PARAM_LIMIT: u32 = 32_764;
/// Base address of global buffer `k` (a pointer parameter or a global variable): `(k + 1) << 40`.
pub fn buffer_base(k: usize) -> u64 {
    (k as u64 + 1) << 40
}

struct Decoder<'a> {
    regs: Vec<HashMap<String, u32>>, // scope stack
    preds: Vec<bool>,                // per register: declared .pred
    nregs: u32,
    specials: HashMap<Special, u32>,
    shared_syms: HashMap<String, u32>,
    local_syms: HashMap<String, u32>,
    global_syms: HashMap<String, usize>,
    global_regs: HashMap<usize, u32>,
    params: HashMap<String, usize>,
    param_info: &'a mut Vec<ParamInfo>,
    labels: HashMap<String, u32>,
    /// Registers loaded from 64-bit parameters: register → parameter index.
    param_regs: HashMap<u32, usize>,
}

fn derr(line: u32, message: impl Into<String>) -> DecodeError {
    DecodeError {
        line,
        message: message.into(),
    }
}

/// Names the kernels of a module, for error messages: the first few, then how many more
/// ([`crate::text::list`]).
pub fn kernel_names(m: &Module) -> String {
    crate::text::list(m.kernels.iter().map(|k| k.name.as_str()))
}

/// Decodes `kernel` of `module`.
///
/// # Errors
/// [`DecodeError`] for an unsupported instruction, an undeclared register, an unknown label or
/// variable, naming the line.
pub fn decode(module: &Module, kernel: &Kernel) -> Result<Program, DecodeError> {
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
        });
        off = end;
    }
    let param_bytes = off;
    // Shared variables: module scope then body scope, static ones in order, extern at the end.
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
    for v in module.vars.iter().chain(body_vars) {
        match v.space.as_str() {
            "shared" => match v.size {
                Some(sz) => {
                    let a = v.align.max(1);
                    static_smem = static_smem.div_ceil(a).saturating_mul(a);
                    shared_syms.insert(v.name.clone(), static_smem);
                    let sz = u32::try_from(sz).map_err(|_| {
                        derr(
                            v.line,
                            format!("shared variable '{}' of {sz} bytes is too large", v.name),
                        )
                    })?;
                    static_smem = static_smem.saturating_add(sz);
                }
                None => {
                    extern_align = extern_align.max(v.align.max(16));
                    externs.push(v);
                }
            },
            "global" | "const" => {
                let size = v.size.unwrap_or(0);
                if size > 1 << 30 {
                    return Err(derr(
                        v.line,
                        format!(
                            "global variable '{}' of {size} bytes is too large (at most 1 GiB)",
                            v.name
                        ),
                    ));
                }
                let mut bytes = v.init.clone();
                bytes.truncate(usize::try_from(size).unwrap_or(usize::MAX));
                global_syms.insert(v.name.clone(), globals.len());
                globals.push(GlobalVar {
                    name: v.name.clone(),
                    bytes,
                    size,
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
            .div_ceil(extern_align)
            .saturating_mul(extern_align);
        for v in &externs {
            shared_syms.insert(v.name.clone(), o);
        }
        Some(o)
    };

    let mut param_info = params;
    let mut d = Decoder {
        regs: vec![HashMap::new()],
        preds: Vec::new(),
        nregs: 0,
        specials: HashMap::new(),
        shared_syms,
        local_syms,
        global_syms,
        global_regs: HashMap::new(),
        params: HashMap::new(),
        param_info: &mut param_info,
        labels: HashMap::new(),
        param_regs: HashMap::new(),
    };
    for (i, p) in d.param_info.iter().enumerate() {
        d.params.insert(p.name.clone(), i);
    }
    // Pass 1: labels → instruction indices.
    let mut n = 0u32;
    for s in &kernel.body {
        match s {
            Stmt::Label(l, line) if d.labels.insert(l.clone(), n).is_some() => {
                return Err(derr(*line, format!("label '{l}' is defined twice")));
            }
            Stmt::Inst(_) => n += 1,
            _ => {}
        }
    }
    // Pass 2: instructions.
    let mut insts = Vec::new();
    let mut texts = Vec::new();
    for s in &kernel.body {
        match s {
            Stmt::Open => d.regs.push(HashMap::new()),
            Stmt::Close => {
                d.regs.pop();
            }
            Stmt::Reg(names, pred, line) => {
                for name in names {
                    let r = d.declare(name, *line)?;
                    d.preds[r as usize] = *pred;
                }
            }
            Stmt::Inst(i) => {
                insts.push(d.inst(i)?);
                texts.push(i.text.clone());
            }
            Stmt::Label(..) | Stmt::Var(_) => {}
        }
    }
    let specials: Vec<(u32, Special)> = d.specials.iter().map(|(s, r)| (*r, *s)).collect();
    let global_addrs: Vec<(u32, usize)> = d.global_regs.iter().map(|(g, r)| (*r, *g)).collect();
    let nregs = d.nregs;
    let param_regs = std::mem::take(&mut d.param_regs);
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
        reconverge,
    })
}

impl Decoder<'_> {
    fn declare(&mut self, name: &str, line: u32) -> Result<u32, DecodeError> {
        if self.nregs >= 1 << 20 {
            return Err(derr(line, "more than 1,048,576 registers declared"));
        }
        let r = self.nregs;
        self.nregs += 1;
        self.preds.push(false);
        if let Some(top) = self.regs.last_mut() {
            top.insert(name.to_string(), r);
        }
        Ok(r)
    }

    fn lookup(&self, name: &str) -> Option<u32> {
        self.regs.iter().rev().find_map(|s| s.get(name).copied())
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
                _ => return None,
            }
        };
        if let Some(r) = self.specials.get(&sp) {
            return Some(*r);
        }
        let r = self.nregs;
        self.nregs += 1;
        self.preds.push(false);
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

    /// A name used as a value: register, special register, or a variable's address.
    fn src(&mut self, o: &Operand, line: u32) -> Result<Src, DecodeError> {
        Ok(match o {
            Operand::Name(n) => {
                if let Some(r) = self.lookup(n) {
                    Src::Reg(r)
                } else if let Some(r) = self.special(n) {
                    Src::Reg(r)
                } else if let Some(&o) = self.shared_syms.get(n) {
                    Src::Imm(o as u64)
                } else if let Some(&o) = self.local_syms.get(n) {
                    Src::Imm(o as u64)
                } else if let Some(&g) = self.global_syms.get(n) {
                    Src::Reg(self.global_reg(g))
                } else {
                    return Err(derr(line, format!("unknown name '{n}'")));
                }
            }
            Operand::Int(v) => Src::Imm(*v as u64),
            Operand::F32(b) => Src::Imm(*b as u64),
            Operand::F64(b) => Src::Imm(*b),
            _ => {
                return Err(derr(
                    line,
                    format!("expected a register or a number, found '{o}'"),
                ));
            }
        })
    }

    fn global_reg(&mut self, g: usize) -> u32 {
        if let Some(r) = self.global_regs.get(&g) {
            return *r;
        }
        let r = self.nregs;
        self.nregs += 1;
        self.preds.push(false);
        self.global_regs.insert(g, r);
        r
    }

    /// A float immediate for an f32 operation: `0f` bits as is, `0d`/decimal rounded to f32.
    fn src_typed(&mut self, o: &Operand, ty: Ty, line: u32) -> Result<Src, DecodeError> {
        match (o, ty) {
            (Operand::F64(b), Ty::F32) => {
                Ok(Src::Imm((f64::from_bits(*b) as f32).to_bits() as u64))
            }
            (Operand::F32(b), Ty::F64) => Ok(Src::Imm((f32::from_bits(*b) as f64).to_bits())),
            (Operand::Int(v), t) if t.is_float() && matches!(t, Ty::F32 | Ty::F64) => {
                // An integer literal in a float instruction is its value (PTX ISA §4.5.2).
                Ok(Src::Imm(super::types::from_f64(t, *v as f64)))
            }
            _ => self.src(o, line),
        }
    }

    fn dst(&mut self, o: &Operand, line: u32) -> Result<u32, DecodeError> {
        match o {
            Operand::Name(n) => self.reg(n, line),
            _ => Err(derr(
                line,
                format!("expected a destination register, found '{o}'"),
            )),
        }
    }

    fn pred(&mut self, o: &Operand, line: u32) -> Result<(Src, bool), DecodeError> {
        match o {
            Operand::Not(n) => Ok((Src::Reg(self.reg(n, line)?), true)),
            Operand::Int(v) => Ok((Src::Imm((*v != 0) as u64), false)),
            o => Ok((self.src(o, line)?, false)),
        }
    }

    fn addr(&mut self, o: &Operand, line: u32) -> Result<Addr, DecodeError> {
        match o {
            Operand::Address(base, off) => {
                let base = match base {
                    None => Src::Imm(0),
                    Some(n) => {
                        if let Some(r) = self.lookup(n) {
                            Src::Reg(r)
                        } else if let Some(&o) = self.shared_syms.get(n) {
                            Src::Imm(o as u64)
                        } else if let Some(&o) = self.local_syms.get(n) {
                            Src::Imm(o as u64)
                        } else if let Some(&p) = self.params.get(n) {
                            Src::Imm(self.param_info[p].offset as u64)
                        } else if let Some(&g) = self.global_syms.get(n) {
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
                format!("expected an address [reg+offset], found '{o}'"),
            )),
        }
    }

    fn vec_dsts(&mut self, o: &Operand, line: u32) -> Result<Vec<Option<u32>>, DecodeError> {
        match o {
            Operand::Vector(v) => v
                .iter()
                .map(|e| match e {
                    Operand::Sink => Ok(None),
                    e => self.dst(e, line).map(Some),
                })
                .collect(),
            Operand::Sink => Ok(vec![None]),
            o => Ok(vec![Some(self.dst(o, line)?)]),
        }
    }

    fn vec_srcs(&mut self, o: &Operand, ty: Ty, line: u32) -> Result<Vec<Src>, DecodeError> {
        match o {
            Operand::Vector(v) => v.iter().map(|e| self.src_typed(e, ty, line)).collect(),
            o => Ok(vec![self.src_typed(o, ty, line)?]),
        }
    }

    fn inst(&mut self, i: &parse::Inst) -> Result<Inst, DecodeError> {
        let line = i.line;
        let guard = match &i.guard {
            Some((p, neg)) => Some((self.reg(p, line)?, *neg)),
            None => None,
        };
        let op = self.op(i)?;
        Ok(Inst { op, guard, line })
    }

    fn op(&mut self, i: &parse::Inst) -> Result<Op, DecodeError> {
        let line = i.line;
        let parts: Vec<&str> = i.opcode.iter().map(String::as_str).collect();
        let name = parts[0];
        let mods = &parts[1..];
        let has = |m: &str| mods.contains(&m);
        let ops = &i.operands;
        let unsupported = || {
            derr(
                line,
                format!(
                    "unsupported instruction '{}' (see docs/ptx.md for the supported subset)",
                    i.opcode.join(".")
                ),
            )
        };
        let nops = |n: usize| -> Result<(), DecodeError> {
            if ops.len() < n {
                Err(derr(
                    line,
                    format!(
                        "'{}' needs {n} operands, found {}",
                        i.opcode.join("."),
                        ops.len()
                    ),
                ))
            } else {
                Ok(())
            }
        };
        // The last type suffix among the modifiers.
        let ty_of = |ms: &[&str]| ms.iter().rev().find_map(|m| Ty::parse(m));
        let ty = ty_of(mods);
        let need_ty =
            || ty.ok_or_else(|| derr(line, format!("'{}' has no type suffix", i.opcode.join("."))));
        Ok(match name {
            "mov" => {
                nops(2)?;
                let t = need_ty()?;
                match (&ops[0], &ops[1]) {
                    (Operand::Vector(v), a) => Op::Unpack {
                        part_bits: t.bits() / v.len().max(1) as u32,
                        parts: self.vec_dsts(&ops[0], line)?,
                        a: self.src(a, line)?,
                    },
                    (dst, Operand::Vector(v)) => Op::Pack {
                        part_bits: t.bits() / v.len().max(1) as u32,
                        d: self.dst(dst, line)?,
                        parts: self.vec_srcs(&ops[1], Ty::B(32), line)?,
                    },
                    (dst, a) => {
                        let d = self.dst(dst, line)?;
                        if t == Ty::Pred {
                            self.preds[d as usize] = true;
                        }
                        Op::Mov {
                            ty: t,
                            d,
                            a: self.src_typed(a, t, line)?,
                        }
                    }
                }
            }
            "cvta" => {
                nops(2)?;
                let t = need_ty()?;
                let d = self.dst(&ops[0], line)?;
                let a = self.src(&ops[1], line)?;
                let to = has("to");
                if has("global") || has("const") || has("param") {
                    if to
                        && let Src::Reg(r) = a
                        && let Some(&p) = self.param_regs.get(&r)
                    {
                        self.param_info[p].pointer = true;
                    }
                    Op::Mov { ty: t, d, a }
                } else if has("shared") {
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
                } else if has("local") {
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
                    return Err(unsupported());
                }
            }
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor"
            | "shl" | "shr" | "copysign" => {
                nops(3)?;
                let t = need_ty()?;
                if t == Ty::Pred && matches!(name, "and" | "or" | "xor") {
                    let d = self.dst(&ops[0], line)?;
                    self.preds[d as usize] = true;
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
                    "mul" if has("hi") => Bin::MulHi,
                    "mul" if has("wide") => Bin::MulWide,
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
                if has("sat") && !t.is_float() || has("cc") {
                    return Err(unsupported());
                }
                // Shift amounts are .u32 whatever the shifted type.
                let bt = if matches!(k, Bin::Shl | Bin::Shr) {
                    Ty::U(32)
                } else {
                    t
                };
                Op::Bin {
                    k,
                    ty: t,
                    d: self.dst(&ops[0], line)?,
                    a: self.src_typed(&ops[1], t, line)?,
                    b: self.src_typed(&ops[2], bt, line)?,
                }
            }
            "mad" | "fma" => {
                nops(4)?;
                let t = need_ty()?;
                if has("cc") || (has("sat") && !t.is_float()) {
                    return Err(unsupported());
                }
                let k = if has("hi") {
                    Tern::MadHi
                } else if has("wide") {
                    Tern::MadWide
                } else {
                    Tern::MadLo
                };
                let ct = if k == Tern::MadWide {
                    match t {
                        Ty::S(b) => Ty::S(b * 2),
                        Ty::U(b) => Ty::U(b * 2),
                        o => o,
                    }
                } else {
                    t
                };
                Op::Tern {
                    k,
                    ty: t,
                    d: self.dst(&ops[0], line)?,
                    a: self.src_typed(&ops[1], t, line)?,
                    b: self.src_typed(&ops[2], t, line)?,
                    c: self.src_typed(&ops[3], ct, line)?,
                }
            }
            "bfe" | "prmt" => {
                nops(4)?;
                let t = need_ty()?;
                if name == "prmt" && mods.len() > 1 {
                    return Err(unsupported());
                }
                Op::Tern {
                    k: if name == "bfe" { Tern::Bfe } else { Tern::Prmt },
                    ty: t,
                    d: self.dst(&ops[0], line)?,
                    a: self.src(&ops[1], line)?,
                    b: self.src(&ops[2], line)?,
                    c: self.src(&ops[3], line)?,
                }
            }
            "shf" => {
                nops(4)?;
                let wrap = has("wrap");
                Op::Tern {
                    k: if has("l") {
                        Tern::ShfL(wrap)
                    } else {
                        Tern::ShfR(wrap)
                    },
                    ty: Ty::B(32),
                    d: self.dst(&ops[0], line)?,
                    a: self.src(&ops[1], line)?,
                    b: self.src(&ops[2], line)?,
                    c: self.src(&ops[3], line)?,
                }
            }
            "bfi" => {
                nops(5)?;
                Op::Bfi {
                    ty: need_ty()?,
                    d: self.dst(&ops[0], line)?,
                    s: [
                        self.src(&ops[1], line)?,
                        self.src(&ops[2], line)?,
                        self.src(&ops[3], line)?,
                        self.src(&ops[4], line)?,
                    ],
                }
            }
            "lop3" => {
                nops(5)?;
                let lut = match &ops[4] {
                    Operand::Int(v) => *v as u8,
                    _ => return Err(derr(line, "lop3 needs an immediate truth table")),
                };
                Op::Lop3 {
                    d: self.dst(&ops[0], line)?,
                    s: [
                        self.src(&ops[1], line)?,
                        self.src(&ops[2], line)?,
                        self.src(&ops[3], line)?,
                    ],
                    lut,
                }
            }
            "not" | "cnot" | "neg" | "abs" | "popc" | "clz" | "brev" | "ex2" | "lg2" | "rcp"
            | "sqrt" | "rsqrt" | "sin" | "cos" | "tanh" => {
                nops(2)?;
                let t = need_ty()?;
                if t == Ty::Pred && name == "not" {
                    let d = self.dst(&ops[0], line)?;
                    self.preds[d as usize] = true;
                    let a = self.pred(&ops[1], line)?;
                    return Ok(Op::PredLogic { k: 3, d, a, b: a });
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
                Op::Un {
                    k,
                    ty: t,
                    d: self.dst(&ops[0], line)?,
                    a: self.src_typed(&ops[1], t, line)?,
                }
            }
            "setp" => {
                nops(3)?;
                let t = need_ty()?;
                let cmp = match mods.first().copied().unwrap_or("") {
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
                    _ => return Err(unsupported()),
                };
                let bop = if has("and") {
                    Some(BoolOp::And)
                } else if has("or") {
                    Some(BoolOp::Or)
                } else if has("xor") {
                    Some(BoolOp::Xor)
                } else {
                    None
                };
                let (d, d2) = match &ops[0] {
                    Operand::Pair(a, b) => (self.reg(a, line)?, Some(self.reg(b, line)?)),
                    o => (self.dst(o, line)?, None),
                };
                self.preds[d as usize] = true;
                if let Some(d2) = d2 {
                    self.preds[d2 as usize] = true;
                }
                let comb = match bop {
                    Some(b) => {
                        nops(4)?;
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
                    a: self.src_typed(&ops[1], t, line)?,
                    b: self.src_typed(&ops[2], t, line)?,
                    comb,
                }
            }
            "selp" => {
                nops(4)?;
                let t = need_ty()?;
                Op::Selp {
                    ty: t,
                    d: self.dst(&ops[0], line)?,
                    a: self.src_typed(&ops[1], t, line)?,
                    b: self.src_typed(&ops[2], t, line)?,
                    p: self.pred(&ops[3], line)?,
                }
            }
            "cvt" => {
                nops(2)?;
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
                    return Err(unsupported());
                }
                if matches!(dt, Ty::F16x2 | Ty::Bf16x2) {
                    nops(3)?;
                    return Ok(Op::CvtPack {
                        dt,
                        relu: has("relu"),
                        d: self.dst(&ops[0], line)?,
                        a: self.src_typed(&ops[1], Ty::F32, line)?,
                        b: self.src_typed(&ops[2], Ty::F32, line)?,
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
                    sat: has("sat"),
                    d: self.dst(&ops[0], line)?,
                    a: self.src_typed(&ops[1], st, line)?,
                }
            }
            "bra" => {
                nops(1)?;
                let Operand::Name(l) = &ops[0] else {
                    return Err(derr(
                        line,
                        "bra needs a label (indirect branches are not supported)",
                    ));
                };
                let target = *self
                    .labels
                    .get(l)
                    .ok_or_else(|| derr(line, format!("unknown label '{l}'")))?;
                Op::Bra { target }
            }
            "ret" | "exit" | "trap" => {
                if name == "trap" {
                    return Err(unsupported());
                }
                Op::Exit
            }
            "bar" | "barrier" => {
                if has("warp") {
                    nops(1)?;
                    return Ok(Op::WarpSync {
                        member: self.src(&ops[0], line)?,
                    });
                }
                if has("red") || has("cluster") {
                    return Err(unsupported());
                }
                let arrive = has("arrive");
                let id = match ops.first() {
                    Some(o) => self.src(o, line)?,
                    None => Src::Imm(0),
                };
                let count = match ops.get(1) {
                    Some(o) => Some(self.src(o, line)?),
                    None => None,
                };
                Op::Bar { id, count, arrive }
            }
            "membar" | "fence" | "nanosleep" | "prefetch" | "prefetchu" | "griddepcontrol" => {
                Op::Nop
            }
            "createpolicy" => {
                nops(1)?;
                Op::Mov {
                    ty: Ty::B(64),
                    d: self.dst(&ops[0], line)?,
                    a: Src::Imm(0),
                }
            }
            "activemask" => {
                nops(1)?;
                Op::Activemask {
                    d: self.dst(&ops[0], line)?,
                }
            }
            "ld" | "ldu" | "st" => self.ld_st(i, name == "st")?,
            "ldmatrix" | "stmatrix" => {
                nops(2)?;
                let num = if has("x1") {
                    1
                } else if has("x2") {
                    2
                } else if has("x4") {
                    4
                } else {
                    return Err(unsupported());
                };
                if !has("m8n8") || !has("b16") {
                    return Err(unsupported());
                }
                let trans = has("trans");
                if name == "ldmatrix" {
                    let d: Vec<u32> = self
                        .vec_dsts(&ops[0], line)?
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
                    }
                } else {
                    let s = self.vec_srcs(&ops[1], Ty::B(32), line)?;
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
                    }
                }
            }
            "cp" => {
                if !has("async") {
                    return Err(unsupported());
                }
                if has("commit_group") {
                    return Ok(Op::CpCommit);
                }
                if has("wait_group") || has("wait_all") {
                    return Ok(Op::CpWait);
                }
                if has("bulk") || has("mbarrier") {
                    return Err(unsupported());
                }
                nops(3)?;
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
                let cg = has("cg");
                let (mut src_size, mut ignore) = (None, None);
                if let Some(o) = ops.get(3) {
                    let is_pred = match o {
                        Operand::Not(_) => true,
                        Operand::Name(n) => self.lookup(n).is_some_and(|r| self.preds[r as usize]),
                        _ => false,
                    };
                    if is_pred {
                        ignore = Some(self.pred(o, line)?);
                    } else if !has("L2::cache_hint") || ops.len() > 4 {
                        src_size = Some(self.src(o, line)?);
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
            "mma" => self.mma(i)?,
            "shfl" => {
                nops(4)?;
                if !has("sync") {
                    return Err(unsupported());
                }
                let mode = if has("up") {
                    ShflMode::Up
                } else if has("down") {
                    ShflMode::Down
                } else if has("bfly") {
                    ShflMode::Bfly
                } else if has("idx") {
                    ShflMode::Idx
                } else {
                    return Err(unsupported());
                };
                let (d, p) = match &ops[0] {
                    Operand::Pair(a, b) => (self.reg(a, line)?, Some(self.reg(b, line)?)),
                    o => (self.dst(o, line)?, None),
                };
                Op::Shfl {
                    mode,
                    d,
                    p,
                    s: [
                        self.src(&ops[1], line)?,
                        self.src(&ops[2], line)?,
                        self.src(&ops[3], line)?,
                    ],
                    member: ops.get(4).map(|o| self.src(o, line)).transpose()?,
                }
            }
            "vote" => {
                nops(2)?;
                let mode = if has("all") {
                    0
                } else if has("any") {
                    1
                } else if has("uni") {
                    2
                } else if has("ballot") {
                    3
                } else {
                    return Err(unsupported());
                };
                let d = self.dst(&ops[0], line)?;
                if mode != 3 {
                    self.preds[d as usize] = true;
                }
                Op::Vote {
                    mode,
                    d,
                    p: self.pred(&ops[1], line)?,
                    member: ops.get(2).map(|o| self.src(o, line)).transpose()?,
                }
            }
            "atom" | "red" => {
                let t = need_ty()?;
                let space = if mods.iter().any(|m| m.starts_with("shared")) {
                    Space::Shared
                } else if has("global") {
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
                    None => return Err(unsupported()),
                };
                if has("v2")
                    || has("v4")
                    || has("noftz") && !matches!(t, Ty::F16 | Ty::F16x2 | Ty::Bf16 | Ty::Bf16x2)
                {
                    return Err(unsupported());
                }
                let (d, rest) = if name == "atom" {
                    nops(3)?;
                    (Some(self.dst(&ops[0], line)?), &ops[1..])
                } else {
                    nops(2)?;
                    (None, &ops[..])
                };
                let c = if op == AtomOp::Cas {
                    if rest.len() < 3 {
                        return Err(derr(line, "atom.cas needs a compare and a new value"));
                    }
                    Some(self.src_typed(&rest[2], t, line)?)
                } else {
                    None
                };
                Op::Atom {
                    space,
                    op,
                    ty: t,
                    d,
                    addr: self.addr(&rest[0], line)?,
                    b: self.src_typed(&rest[1], t, line)?,
                    c,
                }
            }
            _ => return Err(unsupported()),
        })
    }

    fn ld_st(&mut self, i: &parse::Inst, store: bool) -> Result<Op, DecodeError> {
        let line = i.line;
        let mods: Vec<&str> = i.opcode[1..].iter().map(String::as_str).collect();
        let ops = &i.operands;
        if ops.len() < 2 {
            return Err(derr(
                line,
                format!("'{}' needs 2 operands", i.opcode.join(".")),
            ));
        }
        let mut space = Space::Generic;
        let mut ty = None;
        let mut vec = 1usize;
        for m in &mods {
            match *m {
                "global" | "const" => space = Space::Global,
                "shared" | "shared::cta" => space = Space::Shared,
                "param" | "param::entry" => space = Space::Param,
                "local" => space = Space::Local,
                "shared::cluster" => {
                    return Err(derr(
                        line,
                        format!("unsupported state space '.{m}' in '{}'", i.opcode.join(".")),
                    ));
                }
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
        if store {
            let addr = self.addr(&ops[0], line)?;
            let s = self.vec_srcs(&ops[1], ty, line)?;
            if s.len() != vec {
                return Err(derr(
                    line,
                    format!("expected {vec} source values, found {}", s.len()),
                ));
            }
            Ok(Op::St { space, ty, s, addr })
        } else {
            let d = self.vec_dsts(&ops[0], line)?;
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
        let m: Vec<&str> = i.opcode[1..].iter().map(String::as_str).collect();
        let unsupported = || {
            derr(
                line,
                format!(
                    "unsupported mma '{}': modelled are mma.sync.aligned.{{m16n8k16,m16n8k8}}.row.col.f32.{{f16,bf16}}.{{f16,bf16}}.f32 (m16n8k8: f16)",
                    i.opcode.join(".")
                ),
            )
        };
        if !m.contains(&"sync") || !m.contains(&"row") || !m.contains(&"col") {
            return Err(unsupported());
        }
        let shape = if m.contains(&"m16n8k16") {
            MmaShape::M16N8K16
        } else if m.contains(&"m16n8k8") {
            MmaShape::M16N8K8
        } else {
            return Err(unsupported());
        };
        let tys: Vec<&str> = m
            .iter()
            .copied()
            .filter(|s| Ty::parse(s).is_some())
            .collect();
        let dtype = match tys.as_slice() {
            ["f32", "f16", "f16", "f32"] => MmaDtype::F16,
            ["f32", "bf16", "bf16", "f32"] => MmaDtype::Bf16,
            _ => return Err(unsupported()),
        };
        if shape == MmaShape::M16N8K8 && dtype == MmaDtype::Bf16 {
            return Err(unsupported());
        }
        if i.operands.len() != 4 {
            return Err(derr(line, "mma needs 4 operands {d}, {a}, {b}, {c}"));
        }
        let d: Vec<u32> = self
            .vec_dsts(&i.operands[0], line)?
            .into_iter()
            .map(|r| r.ok_or_else(|| derr(line, "mma destinations cannot be '_'")))
            .collect::<Result<_, _>>()?;
        let a = self.vec_srcs(&i.operands[1], Ty::B(32), line)?;
        let b = self.vec_srcs(&i.operands[2], Ty::B(32), line)?;
        let c = self.vec_srcs(&i.operands[3], Ty::F32, line)?;
        let (na, nb) = if shape == MmaShape::M16N8K16 {
            (4, 2)
        } else {
            (2, 1)
        };
        if d.len() != 4 || a.len() != na || b.len() != nb || c.len() != 4 {
            return Err(derr(
                line,
                format!(
                    "mma.{} needs 4 D, {na} A, {nb} B and 4 C registers",
                    shape.name()
                ),
            ));
        }
        Ok(Op::Mma {
            shape,
            dtype,
            d,
            a,
            b,
            c,
        })
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
