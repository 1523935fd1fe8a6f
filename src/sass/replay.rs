//! Replays a kernel's SASS control flow for every warp of one CTA, to count how often each SASS
//! instruction issues (pure).
//!
//! [`super::dynamic`] infers each basic block's count from the PTX lines' reach counts, which
//! cannot split a line between the copies of a loop that ptxas unrolled with remainder loops of
//! other widths (nvcc's `lesson_fa_v1_v2`: one PTX fill loop becomes a peeled iteration, a loop
//! unrolled four times, one unrolled twice and an if-converted last copy). Here the SASS itself
//! decides: each warp runs the listing from its first instruction, evaluating the integer and
//! predicate arithmetic that feeds its branches (`IADD3`, `IMAD`, `LOP3.LUT`, `ISETP`, `SHF`,
//! `LEA`, `PRMT`, ... and their uniform `U` forms) from what a CTA knows at launch: `%tid`,
//! `%ctaid`, the constant bank (`c[0x0][0x0..0x18]`: `%ntid`, `%nctaid`; the parameters from
//! `c[0x0][0x210]` on sm_90, `c[0x0][0x160]` on sm_70..sm_89, read from ptxas 13.0.88's SASS of
//! `ld.param` and `mov %ntid`/`%nctaid`, 2026-12-02). Everything else (loads, floating point,
//! instructions not listed) makes its destinations unknown.
//!
//! Divergence follows Volta's convergence barriers: `BSSY Bn` records the lanes that must meet
//! again at `BSYNC Bn`, `BREAK Bn` takes lanes out, a divergent `BRA` splits the warp into groups
//! that issue separately, `EXIT` retires lanes. Every instruction a group reaches issues once for
//! it, whatever its guard (Nsight Compute's `smsp__inst_executed`).
//!
//! The replay refuses ([`Stop`]) rather than guess: a branch on an unknown predicate (a spin
//! loop on an mbarrier, a branch on loaded data), a divergent branch outside every convergence
//! barrier, `CALL`/`RET`/`BRX`/`JMX`, a stuck barrier, or more steps than the budget. The
//! caller then falls back to the reach-count rules.

use super::listing::SassInst;

/// What a CTA knows at launch, for the replay.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The parameters as they lie in constant bank 0 from [`Launch::param_base`] (bytes; each
    /// at an absolute address that is a multiple of its `.align`, as ptxas places them, which
    /// is not the PTX buffer's layout when an alignment exceeds the base's).
    pub params: Vec<u8>,
    /// Offset of the parameters in constant bank 0 (bytes): `0x210` on sm_90 and later,
    /// `0x160` on sm_70..sm_89 ([`param_base`]).
    pub param_base: u32,
    /// `%ntid` (threads).
    pub ntid: [u32; 3],
    /// `%nctaid` (CTAs).
    pub nctaid: [u32; 3],
    /// `%ctaid` of the CTA replayed.
    pub ctaid: [u32; 3],
}

/// The constant-bank word ptxas loads the stack pointer from (`LDC R1, c[0x0][0x28]`).
const LOCAL_WINDOW_OFFSET: u32 = 0x28;

/// The value the replay gives that word: a stand-in (the hardware's value is not known here),
/// which is sound because a thread's local addresses only ever meet its own `STL`/`LDL`.
const LOCAL_WINDOW_TOP: u32 = 0x00ff_fc00;

/// The constant-bank offset of the parameters for `arch` (`sm_90a`, `sm_80`): see [`Launch`].
/// `None` for an arch this was not read for (before sm_70).
pub fn param_base(arch: &str) -> Option<u32> {
    let digits: String = arch
        .trim_start_matches("sm_")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    match digits.parse::<u32>().ok()? {
        70..=89 => Some(0x160),
        90.. => Some(0x210),
        _ => None,
    }
}

/// Why the replay stopped without counts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("SASS replay stopped at /*{addr:04x}*/ {text}: {why}")]
pub struct Stop {
    /// Address of the instruction.
    pub addr: u32,
    /// The instruction.
    pub text: String,
    /// What the replay could not decide.
    pub why: String,
}

/// A value per lane: `None` where unknown.
type Lanes<T> = [Option<T>; 32];

/// The registers of one warp: general (`R0..R255`), uniform (`UR0..UR63`, kept per lane like
/// the others, every lane equal), predicates (`P0..P7`, `UP0..UP7`).
struct Regs {
    r: Vec<Lanes<u32>>,
    ur: Vec<Lanes<u32>>,
    p: [Lanes<bool>; 8],
    up: [Lanes<bool>; 8],
}

/// An operand as nvdisasm prints it.
#[derive(Clone, Debug, PartialEq)]
enum Opnd {
    /// `Rn` / `URn` (`uniform`), `RZ`/`URZ` as `None`; negated (`-R`), inverted (`~R`),
    /// absolute (`|R|`).
    Reg {
        uniform: bool,
        n: Option<u16>,
        neg: bool,
        inv: bool,
        abs: bool,
    },
    /// `Pn` / `UPn`, `PT` as `None`; `!` as `not`.
    Pred {
        uniform: bool,
        n: Option<u8>,
        not: bool,
    },
    /// An integer immediate.
    Imm(u32),
    /// `c[0x0][0xNN]`: a constant-bank word at a fixed offset.
    Const(u32),
    /// `SR_TID.X` and the like.
    Special(String),
    /// Anything else (memory, float immediates, descriptors, `PR`, `SRZ`, labels).
    Other(String),
}

impl Opnd {
    /// Register `n` of the general (`R`) or uniform (`UR`) file, with no modifier.
    fn plain(uniform: bool, n: u16) -> Opnd {
        Opnd::Reg {
            uniform,
            n: Some(n),
            neg: false,
            inv: false,
            abs: false,
        }
    }
}

fn parse_int(s: &str) -> Option<u32> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let v = if let Some(h) = body.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()?
    } else if body.chars().all(|c| c.is_ascii_digit()) && !body.is_empty() {
        body.parse::<u64>().ok()?
    } else {
        return None;
    };
    let v = u32::try_from(v).ok()?;
    Some(if neg { v.wrapping_neg() } else { v })
}

fn operand(s: &str) -> Opnd {
    let s = s.trim();
    let s = s.strip_suffix(".reuse").unwrap_or(s);
    if let Some(v) = parse_int(s) {
        return Opnd::Imm(v);
    }
    if let Some(inner) = s.strip_prefix("c[0x0][").and_then(|r| r.strip_suffix(']')) {
        // `c[0x0][RZ]`: offset 0 (`%ntid.x`); an offset from a register is not read.
        let inner = if inner == "RZ" || inner == "URZ" {
            "0"
        } else {
            inner
        };
        return match parse_int(inner) {
            Some(o) => Opnd::Const(o),
            None => Opnd::Other(s.to_string()),
        };
    }
    if s.starts_with("SR_") {
        return Opnd::Special(s.to_string());
    }
    let (not, body) = match s.strip_prefix('!') {
        Some(b) => (true, b),
        None => (false, s),
    };
    for (prefix, uniform) in [("UP", true), ("P", false)] {
        if let Some(rest) = body.strip_prefix(prefix) {
            if rest == "T" {
                return Opnd::Pred {
                    uniform,
                    n: None,
                    not,
                };
            }
            if let Ok(n) = rest.parse::<u8>()
                && n < 8
            {
                return Opnd::Pred {
                    uniform,
                    n: Some(n),
                    not,
                };
            }
        }
    }
    if not {
        return Opnd::Other(s.to_string());
    }
    let (abs, body) = match body.strip_prefix('|').and_then(|b| b.strip_suffix('|')) {
        Some(b) => (true, b),
        None => (false, body),
    };
    let (neg, body) = match body.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, body),
    };
    let (inv, body) = match body.strip_prefix('~') {
        Some(b) => (true, b),
        None => (false, body),
    };
    for (prefix, uniform) in [("UR", true), ("R", false)] {
        if let Some(rest) = body.strip_prefix(prefix) {
            let n = if rest == "Z" {
                Some(None)
            } else {
                rest.parse::<u16>()
                    .ok()
                    .filter(|&n| n < if uniform { 64 } else { 256 })
                    .map(Some)
            };
            if let Some(n) = n {
                return Opnd::Reg {
                    uniform,
                    n,
                    neg,
                    inv,
                    abs,
                };
            }
        }
    }
    Opnd::Other(s.to_string())
}

/// The operands of `text` (guard and mnemonic removed), split at top-level commas.
fn operands(i: &SassInst) -> Vec<Opnd> {
    let body = i.text.trim();
    let body = body.strip_prefix(i.guard.as_str()).unwrap_or(body).trim();
    let body = body
        .strip_prefix(i.mnemonic.as_str())
        .unwrap_or(body)
        .trim();
    // nvdisasm's annotations: `LDL R249, [R1] (*"SpillRefill"*)`.
    let body = body.split("(*").next().unwrap_or("").trim();
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (k, c) in body.char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(operand(&body[start..k]));
                start = k + 1;
            }
            _ => {}
        }
    }
    if !body[start..].trim().is_empty() {
        out.push(operand(&body[start..]));
    }
    out
}

/// One group of lanes of a warp that runs together.
#[derive(Clone, Debug)]
struct Group {
    mask: u32,
    pc: usize,
    /// Waiting at the `BSYNC` at `pc`.
    waiting: bool,
}

/// The per-warp machine.
struct Warp<'a> {
    insts: &'a [SassInst],
    ops: &'a [Vec<Opnd>],
    launch: &'a Launch,
    tid: [[u32; 3]; 32],
    regs: Regs,
    /// Convergence barriers `B0..B15`: lanes that must meet.
    barriers: [u32; 16],
    exited: u32,
    /// Per lane, the local memory words its `STL`s wrote (byte address -> word): ptxas's
    /// spills of loop counters come back through `LDL`.
    local: Vec<std::collections::BTreeMap<u32, u32>>,
    /// The instruction being replayed (index).
    at: usize,
    /// Per predicate file (`P`, `UP`) and register: the instruction that last made it unknown.
    unknown_from: [[usize; 8]; 2],
    /// The same for `R0..R255` and `UR0..UR63`.
    r_unknown_from: Vec<usize>,
    ur_unknown_from: Vec<usize>,
}

/// `SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [...], R`: an mbarrier `try_wait` (its predicate: the
/// phase completed). The replay takes every one as succeeding at its first try, the schedule
/// the PTX engine runs (`try_wait` blocks until the phase completes), so a kernel's retries,
/// which follow the hardware's timing, are not counted: [`retries_uncounted`].
pub fn is_try_wait(i: &SassInst) -> bool {
    i.mnemonic.starts_with("SYNCS.PHASECHK") && i.mnemonic.contains("TRYWAIT")
}

/// Whether a replay of `insts` leaves out the retries of mbarrier waits ([`is_try_wait`]): its
/// total (`smsp__inst_executed`) is then the count with no retry, a lower bound of the H200's.
pub fn retries_uncounted(insts: &[SassInst]) -> bool {
    insts.iter().any(is_try_wait)
}

fn stop(i: &SassInst, why: impl Into<String>) -> Stop {
    Stop {
        addr: i.addr,
        text: i.text.clone(),
        why: why.into(),
    }
}

/// The lane bits of a group mask.
fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |l| mask >> l & 1 == 1)
}

impl<'a> Warp<'a> {
    fn read(&self, o: &Opnd, lane: usize) -> Option<u32> {
        match o {
            Opnd::Imm(v) => Some(*v),
            Opnd::Reg {
                uniform,
                n,
                neg,
                inv,
                abs,
            } => {
                let v = match n {
                    None => 0,
                    Some(n) => {
                        let file = if *uniform {
                            &self.regs.ur
                        } else {
                            &self.regs.r
                        };
                        file[*n as usize][lane]?
                    }
                };
                let v = if *abs { (v as i32).unsigned_abs() } else { v };
                let v = if *inv { !v } else { v };
                Some(if *neg { v.wrapping_neg() } else { v })
            }
            Opnd::Const(off) => self.constant(*off),
            _ => None,
        }
    }

    /// The 64-bit value of the register pair starting at `o` (`RZ`: 0); `None` for anything
    /// but a plain register (a negated pair is not read).
    fn pair(&self, o: Option<&Opnd>, lane: usize) -> Option<u64> {
        match o? {
            Opnd::Reg {
                n: None,
                neg: false,
                inv: false,
                abs: false,
                ..
            } => Some(0),
            Opnd::Reg {
                uniform,
                n: Some(n),
                neg: false,
                inv: false,
                abs: false,
            } => {
                let file = if *uniform {
                    &self.regs.ur
                } else {
                    &self.regs.r
                };
                let lo = file.get(*n as usize)?[lane]?;
                let hi = file.get(*n as usize + 1)?[lane]?;
                Some(u64::from(lo) | u64::from(hi) << 32)
            }
            _ => None,
        }
    }

    fn constant(&self, off: u32) -> Option<u32> {
        let l = self.launch;
        if off == LOCAL_WINDOW_OFFSET {
            return Some(LOCAL_WINDOW_TOP);
        }
        if off.is_multiple_of(4) && off < 0x18 {
            let k = (off / 4) as usize;
            return Some(if k < 3 { l.ntid[k] } else { l.nctaid[k - 3] });
        }
        let at = off.checked_sub(l.param_base)? as usize;
        let b = l.params.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn pred(&self, o: &Opnd, lane: usize) -> Option<bool> {
        match o {
            Opnd::Pred { uniform, n, not } => {
                let v = match n {
                    None => true,
                    Some(n) => {
                        let file = if *uniform {
                            &self.regs.up
                        } else {
                            &self.regs.p
                        };
                        file[*n as usize][lane]?
                    }
                };
                Some(v != *not)
            }
            _ => None,
        }
    }

    fn special(&self, name: &str, lane: usize) -> Option<u32> {
        let t = self.tid[lane];
        let c = self.launch.ctaid;
        Some(match name {
            "SR_TID.X" => t[0],
            "SR_TID.Y" => t[1],
            "SR_TID.Z" => t[2],
            "SR_CTAID.X" => c[0],
            "SR_CTAID.Y" => c[1],
            "SR_CTAID.Z" => c[2],
            "SR_LANEID" => lane as u32,
            _ => return None,
        })
    }

    fn write(&mut self, o: &Opnd, lane: usize, v: Option<u32>) {
        if let Opnd::Reg {
            uniform,
            n: Some(n),
            ..
        } = o
        {
            let file = if *uniform {
                &mut self.regs.ur
            } else {
                &mut self.regs.r
            };
            if let Some(r) = file.get_mut(*n as usize) {
                r[lane] = v;
                if v.is_none() {
                    let files = if *uniform {
                        &mut self.ur_unknown_from
                    } else {
                        &mut self.r_unknown_from
                    };
                    files[*n as usize] = self.at;
                }
            }
        }
    }

    fn write_pair(&mut self, o: &Opnd, lane: usize, v: Option<u64>) {
        if let Opnd::Reg {
            uniform,
            n: Some(n),
            ..
        } = o
        {
            let hi = Opnd::plain(*uniform, n + 1);
            self.write(o, lane, v.map(|v| v as u32));
            self.write(&hi, lane, v.map(|v| (v >> 32) as u32));
        }
    }

    fn write_pred(&mut self, o: &Opnd, lane: usize, v: Option<bool>) {
        if let Opnd::Pred {
            uniform,
            n: Some(n),
            ..
        } = o
        {
            let file = if *uniform {
                &mut self.regs.up
            } else {
                &mut self.regs.p
            };
            file[*n as usize][lane] = v;
            if v.is_none() {
                self.unknown_from[usize::from(*uniform)][*n as usize] = self.at;
            }
        }
    }

    /// The instruction that last left operand `o` unknown, if it is a register or predicate.
    fn unknown_source(&self, o: &Opnd) -> Option<usize> {
        let k = match o {
            Opnd::Pred {
                uniform,
                n: Some(n),
                ..
            } => self.unknown_from[usize::from(*uniform)][*n as usize],
            Opnd::Reg {
                uniform: false,
                n: Some(n),
                ..
            } => *self.r_unknown_from.get(*n as usize)?,
            Opnd::Reg {
                uniform: true,
                n: Some(n),
                ..
            } => *self.ur_unknown_from.get(*n as usize)?,
            _ => return None,
        };
        (k < self.insts.len()).then_some(k)
    }

    /// Why the guard `g` is unknown: the chain of instructions that left it so, back to one
    /// whose sources were all known (or up to five steps).
    fn unknown_why(&self, g: &Option<Opnd>) -> String {
        let mut chain = Vec::new();
        let mut next = g.as_ref().and_then(|g| self.unknown_source(g));
        while let Some(k) = next {
            if chain.contains(&k) || chain.len() == 5 {
                break;
            }
            chain.push(k);
            // The first source (after the destination) that is itself unknown.
            next = self.ops[k]
                .iter()
                .skip(1)
                .find_map(|o| self.unknown_source(o).filter(|&j| j != k));
        }
        if chain.is_empty() {
            return "a branch on a predicate the replay cannot know (never set)".into();
        }
        let steps: Vec<String> = chain
            .iter()
            .map(|&k| format!("/*{:04x}*/ {}", self.insts[k].addr, self.insts[k].text))
            .collect();
        format!(
            "a branch on a predicate the replay cannot know (from {})",
            steps.join(" <- ")
        )
    }

    /// Makes the registers an instruction this replay does not evaluate may write unknown: its
    /// first operand (and the second when the first is a predicate), as many registers as its
    /// width can cover.
    fn clobber(&mut self, i: &SassInst, ops: &[Opnd], mask: u32) {
        let m = i.mnemonic.as_str();
        let fam = i.family();
        // Registers written: the tensor-core and vector forms name their width; others one.
        let wide = |t: &str| m.split('.').any(|p| p == t);
        let width: u16 = if fam.ends_with("GMMA") {
            gmma_width(m)
        } else if wide("256") {
            8
        } else if wide("128")
            || matches!(fam, "HMMA" | "IMMA" | "DMMA")
            || (fam == "LDSM" && m.ends_with(".4"))
        {
            4
        } else if wide("64")
            || wide("F64")
            || wide("S64")
            || wide("U64")
            || (fam == "LDSM" && m.ends_with(".2"))
            || matches!(fam, "DADD" | "DMUL" | "DFMA" | "DMNMX")
        {
            2
        } else {
            1
        };
        if ops.iter().any(|o| matches!(o, Opnd::Other(s) if s == "PR")) {
            for l in lanes(mask) {
                for p in 0..8 {
                    self.regs.p[p][l] = None;
                }
            }
        }
        let n = if matches!(ops.first(), Some(Opnd::Pred { .. })) {
            2
        } else {
            1
        };
        for o in ops.iter().take(n) {
            for l in lanes(mask) {
                match o {
                    Opnd::Pred { .. } => self.write_pred(o, l, None),
                    Opnd::Reg { .. } => self.forget_regs(o, l, width),
                    _ => {}
                }
            }
        }
    }

    /// Makes `width` registers from register operand `o` on unknown in `lane` (`RZ`: none).
    fn forget_regs(&mut self, o: &Opnd, lane: usize, width: u16) {
        if let Opnd::Reg {
            uniform,
            n: Some(r),
            ..
        } = o
        {
            for k in 0..width {
                self.write(&Opnd::plain(*uniform, r.saturating_add(k)), lane, None);
            }
        }
    }

    /// Makes what an evaluated instruction writes unknown in `lane`: its destination (`width`
    /// registers) and the predicates right after it (carry-outs: `IADD3 R2, P0, ...`,
    /// `LEA R4, P1, ...`); predicates after the sources are inputs and stay.
    fn forget(&mut self, ops: &[Opnd], lane: usize, width: u16) {
        match ops.first() {
            Some(Opnd::Pred { .. }) => self.write_pred(&ops[0], lane, None),
            Some(o @ Opnd::Reg { .. }) => self.forget_regs(o, lane, width),
            _ => {}
        }
        for o in ops.iter().skip(1) {
            if !matches!(o, Opnd::Pred { .. }) {
                break;
            }
            self.write_pred(o, lane, None);
        }
    }

    /// Whether lane `l`'s guard holds (`None`: unknown); no guard holds.
    fn guard_on(&self, guard: &Option<Opnd>, l: usize) -> Option<bool> {
        match guard {
            None => Some(true),
            Some(g) => self.pred(g, l),
        }
    }

    /// `SHFL.{IDX,UP,DOWN,BFLY} Pd, Rd, Ra, b, c` for the lanes of `mask` (PTX ISA shfl.sync:
    /// `c` holds the clamp in bits 0..4 and the segment mask in bits 8..12; the source lane is
    /// `b`'s for IDX, `lane - b`, `lane + b`, `lane ^ b` otherwise, kept within the segment or
    /// else the lane itself, and `Pd` says whether it was in range). A value from a lane
    /// outside `mask`, or with an unknown guard, `b` or `c`, is unknown.
    fn shfl(&mut self, parts: &[&str], ops: &[Opnd], mask: u32, guard: &Option<Opnd>) {
        let (Some(pd), Some(rd), Some(ra)) = (ops.first(), ops.get(1), ops.get(2)) else {
            return;
        };
        // Every lane's value before any is written (Rd may be Ra).
        let vals: [Option<u32>; 32] =
            std::array::from_fn(|l| (mask >> l & 1 == 1).then(|| self.read(ra, l)).flatten());
        let mut out: Vec<(usize, Option<u32>, Option<bool>)> = Vec::new();
        for l in lanes(mask) {
            let on = self.guard_on(guard, l);
            if on == Some(false) {
                continue;
            }
            let b = ops.get(3).and_then(|o| self.read(o, l));
            let c = ops.get(4).and_then(|o| self.read(o, l));
            let r = on.and(b.zip(c)).map(|(b, c)| {
                let (lane, b) = (l as u32, b & 31);
                let seg = (c >> 8) & 31;
                let clamp = c & 31;
                let max = (lane & seg) | (clamp & !seg);
                let min = lane & seg;
                let (j, ok) = match parts.get(1).copied() {
                    Some("UP") => {
                        let j = lane as i32 - b as i32;
                        (j, j >= max as i32)
                    }
                    Some("DOWN") => {
                        let j = (lane + b) as i32;
                        (j, j <= max as i32)
                    }
                    Some("BFLY") => {
                        let j = (lane ^ b) as i32;
                        (j, j <= max as i32)
                    }
                    _ => {
                        let j = (min | (b & !seg)) as i32;
                        (j, j <= max as i32)
                    }
                };
                (if ok { j as usize } else { l }, ok)
            });
            match r {
                Some((src, ok)) => out.push((l, vals[src & 31], Some(ok))),
                None => out.push((l, None, None)),
            }
        }
        for (l, v, p) in out {
            self.write(rd, l, v);
            self.write_pred(pd, l, p);
        }
    }

    /// `ELECT Pd, URd, Pm` (`elect.sync`): among the lanes of `mask` whose guard and `Pm` hold,
    /// the lowest is elected: `Pd` true there and false in the others, `URd` its lane number in
    /// every lane. Unknown when a lane's guard or `Pm` is.
    fn elect(&mut self, ops: &[Opnd], mask: u32, guard: &Option<Opnd>) {
        let (Some(pd), Some(rd)) = (ops.first(), ops.get(1)) else {
            return;
        };
        let mut cand: Option<u32> = Some(0);
        for l in lanes(mask) {
            let on = self.guard_on(guard, l);
            let m = match ops.get(2) {
                Some(o @ Opnd::Pred { .. }) => self.pred(o, l),
                _ => Some(true),
            };
            cand = match (cand, on.zip(m)) {
                (Some(c), Some((a, b))) => Some(c | (u32::from(a && b) << l)),
                _ => None,
            };
        }
        let leader = cand.map(|c| c.trailing_zeros());
        for l in lanes(mask) {
            let on = self.guard_on(guard, l);
            if on == Some(false) {
                continue;
            }
            let p = leader.map(|x| x == l as u32);
            self.write_pred(pd, l, p);
            self.write(rd, l, leader.filter(|&x| x < 32));
        }
    }

    /// Evaluates one non-control instruction for the lanes of `mask` whose guard holds: one
    /// helper per instruction family, each `false` for a form it does not evaluate (whose
    /// destinations then become unknown).
    fn alu(&mut self, k: usize, mask: u32) {
        let (insts, all): (&'a [SassInst], &'a [Vec<Opnd>]) = (self.insts, self.ops);
        let (i, ops) = (&insts[k], all[k].as_slice());
        let guard = guard_opnd(i);
        let m = i.mnemonic.as_str();
        let base = m.strip_prefix('U').filter(|b| known(b)).unwrap_or(m);
        let parts: Vec<&str> = base.split('.').collect();
        let evaluated = known(base);
        if parts[0] == "SHFL" {
            self.shfl(&parts, ops, mask, &guard);
            return;
        }
        if parts[0] == "ELECT" {
            self.elect(ops, mask, &guard);
            return;
        }
        for l in lanes(mask) {
            let on = self.guard_on(&guard, l);
            if on == Some(false) {
                continue;
            }
            if is_try_wait(i)
                && let Some(p @ Opnd::Pred { .. }) = ops.first()
            {
                // The wait completes on this try (`mbarrier.try_wait` as the PTX engine runs it:
                // it waits until the phase completes); the hardware may retry first.
                let v = on.map(|_| true);
                self.write_pred(p, l, v);
                continue;
            }
            if !evaluated {
                self.clobber(i, ops, 1 << l);
                continue;
            }
            if on.is_none() {
                self.forget_unguarded(&parts, ops, l);
                continue;
            }
            let done = match parts[0] {
                "MOV" | "MOV32I" | "S2R" | "S2UR" | "CS2R" | "R2UR" | "HFMA2" => {
                    self.moves(ops, parts[0], l, mask)
                }
                "IMAD" => {
                    self.imad(&parts, ops, l);
                    true
                }
                "IADD3" | "VIADD" | "IADD32I" | "LOP3" | "SHF" | "LEA" | "IABS" | "SGXT"
                | "PRMT" => self.integer(&parts, ops, l),
                "ISETP" | "PLOP3" | "SEL" | "IMNMX" | "VIMNMX" => {
                    self.compare_select(&parts, ops, l)
                }
                "LDC" | "LDCU" | "ULDC" | "STL" | "LDL" => self.constant_local(&parts, ops, l),
                "I2F" | "MUFU" | "F2I" => self.float_convert(&parts, ops, l),
                _ => false,
            };
            if !done {
                self.clobber(i, ops, 1 << l);
            }
        }
    }

    /// An evaluated instruction whose guard is unknown in lane `l`: it may or may not have
    /// written, so what it writes becomes unknown there.
    #[inline]
    fn forget_unguarded(&mut self, parts: &[&str], ops: &[Opnd], l: usize) {
        let has = |s: &str| parts.contains(&s);
        if parts[0] == "STL" {
            // It may or may not have written: nothing stored is known any more.
            self.local[l].clear();
        }
        // ISETP and PLOP3 write two predicates; the wide forms two registers.
        let two =
            matches!(parts[0], "ISETP" | "PLOP3") || has("WIDE") || has("64") || parts[0] == "CS2R";
        self.forget(ops, l, if two { 2 } else { 1 });
        if matches!(parts[0], "ISETP" | "PLOP3")
            && let Some(o) = ops.get(1)
        {
            self.write_pred(o, l, None);
        }
    }

    /// Moves in lane `l` (`op`: the opcode, `U` prefix removed): `MOV`, `MOV32I`, the special
    /// registers (`S2R`, `S2UR`), `CS2R Rd, SRZ`, `R2UR` (uniform: every lane of `mask` must
    /// agree) and `HFMA2.MMA` of a zero product (a constant). `false`: not evaluated.
    #[inline]
    fn moves(&mut self, ops: &[Opnd], op: &str, l: usize, mask: u32) -> bool {
        let r = |w: &Self, n: usize| ops.get(n).and_then(|o| w.read(o, l));
        match op {
            "MOV" | "MOV32I" => {
                let v = r(self, 1);
                self.write(&ops[0], l, v);
            }
            "S2R" | "S2UR" => {
                let v = match ops.get(1) {
                    Some(Opnd::Special(s)) => self.special(s, l),
                    _ => None,
                };
                self.write(&ops[0], l, v);
            }
            "CS2R" => {
                let v = matches!(ops.get(1), Some(Opnd::Other(s)) if s == "SRZ").then_some(0);
                self.write_pair(&ops[0], l, v);
            }
            "R2UR" => {
                // Uniform: every lane of the group must agree.
                let vals: Vec<Option<u32>> = lanes(mask)
                    .map(|x| ops.get(1).and_then(|o| self.read(o, x)))
                    .collect();
                let v = vals
                    .first()
                    .copied()
                    .flatten()
                    .filter(|v0| vals.iter().all(|v| *v == Some(*v0)));
                self.write(&ops[0], l, v);
            }
            "HFMA2" if zero_product(ops) => {
                // `HFMA2.MMA Rd, -RZ, RZ, h0, h1`: ptxas's way to set a constant (the packed
                // f16 pair h1:h0).
                let half = |o: Option<&Opnd>| -> Option<u32> {
                    let x = match o? {
                        Opnd::Imm(v) => f64::from(*v as i32),
                        Opnd::Other(t) => t.parse::<f64>().ok()?,
                        _ => return None,
                    };
                    let h = half::f16::from_f64(x);
                    (h.to_f64() == x || (x == 0.0 && h.to_f64() == 0.0))
                        .then(|| u32::from(h.to_bits()))
                };
                let v = half(ops.get(3))
                    .zip(half(ops.get(4)))
                    .map(|(lo, hi)| hi << 16 | lo);
                self.write(&ops[0], l, v);
            }
            _ => return false,
        }
        true
    }

    /// `IMAD` in lane `l`: `.X` (the high word of a 64-bit add), `.WIDE` (a 64-bit result),
    /// `.HI` (the high word of the product plus a 64-bit addend), plain (`a * b + c`).
    #[inline]
    fn imad(&mut self, parts: &[&str], ops: &[Opnd], l: usize) {
        let has = |s: &str| parts.contains(&s);
        let r = |w: &Self, n: usize| ops.get(n).and_then(|o| w.read(o, l));
        if has("X") {
            // The high word of a 64-bit add: a * b + c + the carry-in predicate
            // (`IMAD.X R7, RZ, RZ, R7, P0`); a carry-out form is not read.
            let cin = ops.get(4).and_then(|o| self.pred(o, l));
            let plain = !matches!(ops.get(1), Some(Opnd::Pred { .. })) && ops.len() == 5;
            let v = r(self, 1)
                .zip(r(self, 2))
                .zip(r(self, 3))
                .zip(cin)
                .filter(|_| plain && !has("HI") && !has("WIDE"))
                .map(|(((a, b), c), p)| {
                    a.wrapping_mul(b).wrapping_add(c).wrapping_add(u32::from(p))
                });
            self.forget(ops, l, 1);
            self.write(&ops[0], l, v);
        } else if has("WIDE") {
            let (a, b) = (r(self, 1), r(self, 2));
            let c = match ops.get(3) {
                Some(o @ Opnd::Reg { .. }) => self.pair(Some(o), l),
                // An immediate addend: sign-extended to 64 bits.
                Some(o) => self.read(o, l).map(|v| i64::from(v as i32) as u64),
                None => None,
            };
            let v = a.zip(b).zip(c).map(|((a, b), c)| {
                let p = if has("U32") {
                    u64::from(a) * u64::from(b)
                } else {
                    (i64::from(a as i32) * i64::from(b as i32)) as u64
                };
                p.wrapping_add(c)
            });
            self.write_pair(&ops[0], l, v);
        } else if has("HI") {
            // The addend is the register pair (c, c+1) as a 64-bit value: ptxas's
            // Newton step `IMAD.HI.U32 R9, R9, R13, R8` (R8 = 0) adds R9 << 32.
            let c = self.pair(ops.get(3), l);
            let v = r(self, 1).zip(r(self, 2)).zip(c).map(|((a, b), c)| {
                if has("U32") {
                    ((u128::from(a) * u128::from(b) + u128::from(c)) >> 32) as u32
                } else {
                    ((i128::from(a as i32) * i128::from(b as i32) + i128::from(c as i64)) >> 32)
                        as u32
                }
            });
            self.write(&ops[0], l, v);
        } else {
            let v = r(self, 1)
                .zip(r(self, 2))
                .zip(r(self, 3))
                .map(|((a, b), c)| a.wrapping_mul(b).wrapping_add(c));
            self.write(&ops[0], l, v);
        }
    }

    /// Integer add, logic, shift and bit-field instructions in lane `l`: `IADD3` (`VIADD`,
    /// `IADD32I`), `LOP3`, `SHF`, `LEA`, `IABS`, `SGXT`, `PRMT`. The 64-bit adds and the carry
    /// forms of `LEA` make their results unknown. `false`: not evaluated.
    #[inline]
    fn integer(&mut self, parts: &[&str], ops: &[Opnd], l: usize) -> bool {
        let has = |s: &str| parts.contains(&s);
        let r = |w: &Self, n: usize| ops.get(n).and_then(|o| w.read(o, l));
        match parts[0] {
            "IADD3" | "VIADD" | "IADD32I" => {
                if has("64") {
                    self.forget(ops, l, 2);
                    return true;
                }
                self.iadd3(ops, l, has("X"));
            }
            "LOP3" => self.lop3(ops, l),
            "SHF" => {
                let v = r(self, 1)
                    .zip(r(self, 2))
                    .zip(r(self, 3))
                    .and_then(|((lo, sh), hi)| {
                        let x = u64::from(hi) << 32 | u64::from(lo);
                        if sh > 32 && (has("U32") || has("S32")) || sh > 63 {
                            return None;
                        }
                        let y = if has("L") {
                            x << sh
                        } else if has("S32") || has("S64") {
                            ((x as i64) >> sh) as u64
                        } else {
                            x >> sh
                        };
                        Some(if has("HI") {
                            (y >> 32) as u32
                        } else {
                            y as u32
                        })
                    });
                self.write(&ops[0], l, v);
            }
            "LEA" => {
                if has("X") || matches!(ops.get(1), Some(Opnd::Pred { .. })) {
                    self.forget(ops, l, 1);
                    return true;
                }
                let v = if has("HI") {
                    let (a, b) = (r(self, 1), r(self, 2));
                    let (c, sh) = if has("SX32") {
                        (a.map(|a| ((a as i32) >> 31) as u32), r(self, 3))
                    } else {
                        (r(self, 3), r(self, 4))
                    };
                    a.zip(b).zip(c).zip(sh).and_then(|(((a, b), c), sh)| {
                        (sh <= 32).then(|| {
                            let x = u64::from(c) << 32 | u64::from(a);
                            b.wrapping_add(((x << sh) >> 32) as u32)
                        })
                    })
                } else {
                    r(self, 1)
                        .zip(r(self, 2))
                        .zip(r(self, 3))
                        .and_then(|((a, b), sh)| (sh < 32).then(|| (a << sh).wrapping_add(b)))
                };
                self.write(&ops[0], l, v);
            }
            "IABS" => {
                let v = r(self, 1).map(|a| (a as i32).unsigned_abs());
                self.write(&ops[0], l, v);
            }
            "SGXT" => {
                let v = r(self, 1).zip(r(self, 2)).and_then(|(a, bits)| {
                    if bits == 0 || bits > 32 {
                        return None;
                    }
                    let sh = 32 - bits;
                    Some(if has("U32") {
                        (a << sh) >> sh
                    } else {
                        (((a << sh) as i32) >> sh) as u32
                    })
                });
                self.write(&ops[0], l, v);
            }
            "PRMT" => {
                let v = r(self, 1)
                    .zip(r(self, 2))
                    .zip(r(self, 3))
                    .map(|((a, s), b)| {
                        let x = u64::from(b) << 32 | u64::from(a);
                        (0..4).fold(0u32, |acc, k| {
                            let sel = s >> (4 * k) & 0xf;
                            let byte = (x >> (8 * (sel & 7))) as u8;
                            let byte = if sel & 8 != 0 {
                                if byte & 0x80 != 0 { 0xff } else { 0 }
                            } else {
                                byte
                            };
                            acc | u32::from(byte) << (8 * k)
                        })
                    });
                self.write(&ops[0], l, v);
            }
            _ => return false,
        }
        true
    }

    /// Compares and selects in lane `l`: `ISETP`, `PLOP3` (two predicates from a truth table
    /// each), `SEL`, `IMNMX` (`VIMNMX`). `false`: not evaluated.
    #[inline]
    fn compare_select(&mut self, parts: &[&str], ops: &[Opnd], l: usize) -> bool {
        let has = |s: &str| parts.contains(&s);
        let r = |w: &Self, n: usize| ops.get(n).and_then(|o| w.read(o, l));
        match parts[0] {
            "ISETP" => self.isetp(parts, ops, l),
            "PLOP3" => {
                let (a, b, c) = (
                    ops.get(2).and_then(|o| self.pred(o, l)),
                    ops.get(3).and_then(|o| self.pred(o, l)),
                    ops.get(4).and_then(|o| self.pred(o, l)),
                );
                let idx = a
                    .zip(b)
                    .zip(c)
                    .map(|((a, b), c)| usize::from(a) << 2 | usize::from(b) << 1 | usize::from(c));
                for (d, lut) in [(0, 5), (1, 6)] {
                    let t = ops.get(lut).and_then(|o| self.read(o, l));
                    let v = idx.zip(t).map(|(x, t)| t >> x & 1 == 1);
                    let dst = ops[d].clone();
                    self.write_pred(&dst, l, v);
                }
            }
            "SEL" => {
                let p = ops.get(3).and_then(|o| self.pred(o, l));
                let v = p.and_then(|p| if p { r(self, 1) } else { r(self, 2) });
                self.write(&ops[0], l, v);
            }
            "IMNMX" | "VIMNMX" => {
                let p = ops.get(3).and_then(|o| self.pred(o, l));
                let v = r(self, 1).zip(r(self, 2)).zip(p).map(|((a, b), min)| {
                    let lt = if has("U32") {
                        a < b
                    } else {
                        (a as i32) < (b as i32)
                    };
                    if lt == min { a } else { b }
                });
                self.write(&ops[0], l, v);
            }
            _ => return false,
        }
        true
    }

    /// Constant-bank loads (`LDC`, `LDCU`, `ULDC`: a word, a sign- or zero-extended byte or
    /// half, or with `.64` a pair) and local memory (`STL`, `LDL`) in lane `l`. `false`: not
    /// evaluated.
    #[inline]
    fn constant_local(&mut self, parts: &[&str], ops: &[Opnd], l: usize) -> bool {
        let has = |s: &str| parts.contains(&s);
        match parts[0] {
            "LDC" | "LDCU" | "ULDC" => {
                let off = match ops.get(1) {
                    Some(Opnd::Const(o)) => Some(*o),
                    _ => None,
                };
                if has("64") {
                    let v = off.and_then(|o| {
                        let lo = self.constant(o)?;
                        let hi = self.constant(o.checked_add(4)?)?;
                        Some(u64::from(lo) | u64::from(hi) << 32)
                    });
                    self.write_pair(&ops[0], l, v);
                } else {
                    let v = off.and_then(|o| {
                        let w = self.constant(o & !3)?;
                        let sh = 8 * (o & 3);
                        Some(if has("U16") {
                            (w >> sh) & 0xffff
                        } else if has("S16") {
                            ((((w >> sh) & 0xffff) as u16) as i16) as i32 as u32
                        } else if has("U8") {
                            (w >> sh) & 0xff
                        } else if has("S8") {
                            ((((w >> sh) & 0xff) as u8) as i8) as i32 as u32
                        } else if o & 3 == 0 {
                            w
                        } else {
                            return None;
                        })
                    });
                    self.write(&ops[0], l, v);
                }
            }
            "STL" | "LDL" => self.local_access(parts, ops, l),
            _ => return false,
        }
        true
    }

    /// The float and conversion steps of ptxas's integer division in lane `l`: `I2F` of a
    /// 32-bit integer, `MUFU.RCP`, `F2I...TRUNC` to a 32-bit integer. `false`: another form.
    #[inline]
    fn float_convert(&mut self, parts: &[&str], ops: &[Opnd], l: usize) -> bool {
        let has = |s: &str| parts.contains(&s);
        let r = |w: &Self, n: usize| ops.get(n).and_then(|o| w.read(o, l));
        match parts[0] {
            "I2F" => {
                // 32-bit integer to f32 with the rounding asked (ptxas's integer division
                // starts so: `I2F.U32.RP`, then `MUFU.RCP`, then `F2I...TRUNC`).
                let wide = has("U64") || has("S64") || has("F64") || has("F16");
                let v = r(self, 1).filter(|_| !wide).and_then(|a| {
                    let x = if has("U32") {
                        f64::from(a)
                    } else {
                        f64::from(a as i32)
                    };
                    round_f32(x, parts).map(f32::to_bits)
                });
                self.write(&ops[0], l, v);
            }
            "MUFU" if has("RCP") && !has("64H") => {
                // The correction steps of ptxas's division make its quotient exact for any
                // reciprocal this close (IEEE 1/x here; the unit's own is within 1 ulp).
                let v = r(self, 1).map(|a| (1.0f32 / f32::from_bits(a)).to_bits());
                self.write(&ops[0], l, v);
            }
            "F2I" if has("TRUNC") && !has("64") && !has("F64") => {
                let v = r(self, 1).and_then(|a| {
                    let f = f64::from(f32::from_bits(a)).trunc();
                    if f.is_nan() {
                        return None;
                    }
                    Some(if has("U32") {
                        f.clamp(0.0, f64::from(u32::MAX)) as u32
                    } else {
                        f.clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32 as u32
                    })
                });
                self.write(&ops[0], l, v);
            }
            _ => return false,
        }
        true
    }

    /// `IADD3 Rd, [Pc0,] a, b, c` and `IADD3.X Rd, a, b, c, Pin0, Pin1`: the sum of the three
    /// sources in 64 bits (`-R` as `~R + 1`, `~R` as `~R`, so that a 64-bit add or subtract
    /// carries as the hardware's does), plus the carry-in predicates of `.X`. A single
    /// carry-out predicate is the sum's bit 32 (when the carry is 0 or 1); two are not read.
    fn iadd3(&mut self, ops: &[Opnd], l: usize, x: bool) {
        let outs = ops
            .iter()
            .skip(1)
            .take_while(|o| matches!(o, Opnd::Pred { .. }))
            .count();
        let rest = &ops[1 + outs..];
        let (srcs, ins) = rest.split_at(
            rest.iter()
                .take_while(|o| !matches!(o, Opnd::Pred { .. }))
                .count(),
        );
        let term = |o: &Opnd| -> Option<u64> {
            match o {
                Opnd::Reg {
                    uniform,
                    n,
                    neg,
                    inv,
                    abs: false,
                } => {
                    let plain = Opnd::Reg {
                        uniform: *uniform,
                        n: *n,
                        neg: false,
                        inv: false,
                        abs: false,
                    };
                    let v = u64::from(self.read(&plain, l)?);
                    Some(if *neg {
                        (!v & 0xffff_ffff) + 1
                    } else if *inv {
                        !v & 0xffff_ffff
                    } else {
                        v
                    })
                }
                o => self.read(o, l).map(u64::from),
            }
        };
        let mut sum = Some(0u64);
        for o in srcs {
            sum = sum.zip(term(o)).map(|(a, b)| a + b);
        }
        if x {
            for o in ins {
                sum = sum.zip(self.pred(o, l)).map(|(a, p)| a + u64::from(p));
            }
        } else if !ins.is_empty() {
            sum = None;
        }
        self.write(&ops[0], l, sum.map(|v| v as u32));
        let carry = sum.map(|v| v >> 32).filter(|&c| c <= 1 && outs == 1);
        for o in &ops[1..1 + outs] {
            self.write_pred(o, l, carry.map(|c| c == 1));
        }
    }

    /// The byte address of a `[Rn]`, `[Rn+0x10]`, `[Rn+-0x8]` or `[0x10]` operand in `lane`.
    fn address(&self, o: &Opnd, lane: usize) -> Option<u32> {
        let Opnd::Other(t) = o else { return None };
        let inner = t.strip_prefix('[')?.strip_suffix(']')?;
        let (reg, off) = match inner.split_once('+') {
            Some((r, o)) => (r, parse_int(o)?),
            None if inner.starts_with('R') || inner.starts_with("UR") => (inner, 0),
            None => ("RZ", parse_int(inner)?),
        };
        let base = self.read(&operand(reg), lane)?;
        Some(base.wrapping_add(off))
    }

    /// `STL[.64|.128] [a], Rs` and `LDL[.LU][.64|.128] Rd, [a]`: whole aligned words through
    /// the lane's own local memory; narrower stores forget the word, narrower loads are unknown.
    fn local_access(&mut self, parts: &[&str], ops: &[Opnd], l: usize) {
        let words: u32 = if parts.contains(&"128") {
            4
        } else if parts.contains(&"64") {
            2
        } else {
            1
        };
        let narrow = parts
            .iter()
            .any(|p| matches!(*p, "U8" | "S8" | "U16" | "S16"));
        let store = parts[0] == "STL";
        let (mem, reg) = if store { (0, 1) } else { (1, 0) };
        let at = ops
            .get(mem)
            .and_then(|o| self.address(o, l))
            .filter(|a| a % 4 == 0);
        let Some(r) = ops.get(reg) else { return };
        for k in 0..words {
            let x = match r {
                Opnd::Reg {
                    uniform,
                    n: Some(n),
                    ..
                } => Opnd::plain(*uniform, n.saturating_add(k as u16)),
                o => o.clone(),
            };
            let addr = at.and_then(|a| a.checked_add(4 * k));
            if store {
                let v = if narrow { None } else { self.read(&x, l) };
                match (addr, v) {
                    (Some(a), Some(v)) => {
                        self.local[l].insert(a, v);
                    }
                    (Some(a), None) => {
                        self.local[l].remove(&a);
                    }
                    // A store to an address not known may have written any word.
                    (None, _) => self.local[l].clear(),
                }
            } else {
                let v = addr
                    .filter(|_| !narrow)
                    .and_then(|a| self.local[l].get(&a).copied());
                self.write(&x, l, v);
            }
        }
    }

    fn lop3(&mut self, ops: &[Opnd], l: usize) {
        // LOP3.LUT [Pd,] Rd, a, b, c, lut, Pin
        let pd = matches!(ops.first(), Some(Opnd::Pred { .. }));
        let at = usize::from(pd);
        let v = (|| {
            let a = self.read(ops.get(at + 1)?, l)?;
            let b = self.read(ops.get(at + 2)?, l)?;
            let c = self.read(ops.get(at + 3)?, l)?;
            let lut = self.read(ops.get(at + 4)?, l)?;
            Some((0..32).fold(0u32, |acc, k| {
                let idx = (a >> k & 1) << 2 | (b >> k & 1) << 1 | (c >> k & 1);
                acc | (lut >> idx & 1) << k
            }))
        })();
        if let Some(d) = ops.get(at) {
            self.write(d, l, v);
        }
        if pd {
            // Pd = (result != 0) when the predicate input is !PT; other forms are not read.
            let plain = matches!(
                ops.get(at + 5),
                Some(Opnd::Pred {
                    n: None,
                    not: true,
                    ..
                })
            );
            let p = v.filter(|_| plain).map(|v| v != 0);
            self.write_pred(&ops[0], l, p);
        }
    }

    fn isetp(&mut self, parts: &[&str], ops: &[Opnd], l: usize) {
        let ex = parts.contains(&"EX");
        let unknown = ops.len() < if ex { 6 } else { 5 };
        let cmp = parts.get(1).copied().unwrap_or("");
        let bop = parts
            .iter()
            .rev()
            .find(|p| matches!(**p, "AND" | "OR" | "XOR"))
            .copied();
        let unsigned = parts.contains(&"U32");
        let c = (|| {
            if unknown {
                return None;
            }
            let a = self.read(&ops[2], l)?;
            let b = self.read(&ops[3], l)?;
            let (x, y) = if unsigned {
                (i64::from(a), i64::from(b))
            } else {
                (i64::from(a as i32), i64::from(b as i32))
            };
            if ex {
                // The high words of a 64-bit compare; operand 5 is the low words' result:
                // strictly ordered on the high words, or equal there and true below.
                let low = self.pred(&ops[5], l)?;
                let strict = match cmp {
                    "LT" | "LE" => x < y,
                    "GT" | "GE" => x > y,
                    "EQ" => false,
                    "NE" => x != y,
                    _ => return None,
                };
                return Some(strict || (x == y && low));
            }
            Some(match cmp {
                "LT" => x < y,
                "LE" => x <= y,
                "GT" => x > y,
                "GE" => x >= y,
                "EQ" => x == y,
                "NE" => x != y,
                _ => return None,
            })
        })();
        let pc = ops.get(4).and_then(|o| self.pred(o, l));
        let comb = |c: Option<bool>| -> Option<bool> {
            let (c, p) = (c?, pc?);
            Some(match bop? {
                "AND" => c && p,
                "OR" => c || p,
                "XOR" => c ^ p,
                _ => return None,
            })
        };
        let (d, e) = (comb(c), comb(c.map(|c| !c)).filter(|_| !ex));
        let (o0, o1) = (ops[0].clone(), ops.get(1).cloned());
        self.write_pred(&o0, l, d);
        if let Some(o1) = o1 {
            self.write_pred(&o1, l, e);
        }
    }
}

/// The accumulator registers per thread of `HGMMA.64xNxK.F32` (N/2; N/4 for an `.F16`
/// accumulator), as the PTX ISA's wgmma D fragments have them (§9.7.15.5.1); 128 (the largest)
/// when the shape cannot be read.
fn gmma_width(m: &str) -> u16 {
    let n = m
        .split('.')
        .nth(1)
        .and_then(|shape| shape.split('x').nth(1))
        .and_then(|n| n.parse::<u16>().ok())
        .filter(|n| (8..=256).contains(n));
    match n {
        Some(n) if m.split('.').any(|p| p == "F16") => n / 4,
        Some(n) => n / 2,
        None => 128,
    }
}

/// Whether operands 1 and 2 of `ops` are both `RZ` (negated or not): a product of zero.
fn zero_product(ops: &[Opnd]) -> bool {
    ops.len() == 5
        && ops[1..3]
            .iter()
            .all(|o| matches!(o, Opnd::Reg { n: None, .. }))
}

/// `x` (an integer, exact in f64) as f32 rounded as `.RN` (default), `.RZ`, `.RM` or `.RP` say.
fn round_f32(x: f64, parts: &[&str]) -> Option<f32> {
    let n = x as f32;
    let up = |f: f32| if f64::from(f) < x { f.next_up() } else { f };
    let down = |f: f32| if f64::from(f) > x { f.next_down() } else { f };
    Some(if parts.contains(&"RP") {
        up(n)
    } else if parts.contains(&"RM") {
        down(n)
    } else if parts.contains(&"RZ") {
        if x >= 0.0 { down(n) } else { up(n) }
    } else {
        n
    })
}

/// Whether the replay evaluates `base` (the mnemonic, a uniform `U` prefix removed).
fn known(base: &str) -> bool {
    matches!(
        base.split('.').next().unwrap_or(""),
        "MOV"
            | "MOV32I"
            | "IMAD"
            | "IADD3"
            | "VIADD"
            | "IADD32I"
            | "LOP3"
            | "PLOP3"
            | "ISETP"
            | "SHF"
            | "LEA"
            | "SEL"
            | "IMNMX"
            | "VIMNMX"
            | "IABS"
            | "SGXT"
            | "PRMT"
            | "S2R"
            | "S2UR"
            | "CS2R"
            | "LDC"
            | "LDCU"
            | "ULDC"
            | "R2UR"
            | "I2F"
            | "MUFU"
            | "F2I"
            | "HFMA2"
            | "LDL"
            | "STL"
    )
}

/// The guard as an operand, `None` when there is none or it is `@PT`.
fn guard_opnd(i: &SassInst) -> Option<Opnd> {
    let g = i.guard.strip_prefix('@')?;
    match operand(g) {
        Opnd::Pred {
            n: None,
            not: false,
            ..
        } => None,
        o => Some(o),
    }
}

/// Instructions that change nothing the replay tracks and do not end a block.
fn no_effect(i: &SassInst) -> bool {
    let fam = i.family();
    matches!(
        fam,
        "NOP"
            | "BAR"
            | "DEPBAR"
            | "WARPSYNC"
            | "YIELD"
            | "MEMBAR"
            | "FENCE"
            | "ERRBAR"
            | "CGAERRBAR"
            | "CCTL"
            | "LDGDEPBAR"
            | "WARPGROUP"
            | "STS"
            | "STG"
            | "ST"
            | "STSM"
            | "RED"
            | "UTMALDG"
            | "UTMASTG"
            | "UTMACMDFLUSH"
            | "UTMACCTL"
            | "UTMAPF"
            | "UCGABAR_ARV"
            | "UCGABAR_WAIT"
            | "LDGSTS"
            | "NANOSLEEP"
            | "ARRIVES"
    )
}

/// How many times each instruction of `insts` issues (warp-level) when the CTA of `launch` runs
/// with `threads` threads, or why the replay cannot tell. At most `budget` group steps in all.
///
/// # Errors
/// [`Stop`]: see the module docs.
pub fn replay(insts: &[SassInst], launch: &Launch, budget: u64) -> Result<Vec<u64>, Stop> {
    let ops: Vec<Vec<Opnd>> = insts.iter().map(operands).collect();
    let at: std::collections::BTreeMap<&str, usize> = insts
        .iter()
        .enumerate()
        .flat_map(|(k, i)| i.labels.iter().map(move |l| (l.as_str(), k)))
        .collect();
    let threads = launch
        .ntid
        .iter()
        .try_fold(1u32, |a, &b| a.checked_mul(b))
        .unwrap_or(0);
    let mut issues = vec![0u64; insts.len()];
    let mut steps = 0u64;
    let empty = || std::array::from_fn::<Option<u32>, 32, _>(|_| None);
    for w in 0..threads.div_ceil(32) {
        let live = (0..32u32)
            .filter(|l| w * 32 + l < threads)
            .fold(0u32, |m, l| m | 1 << l);
        let tid = std::array::from_fn(|l| {
            let t = w * 32 + l as u32;
            let [x, y, _] = launch.ntid;
            [
                t % x.max(1),
                t / x.max(1) % y.max(1),
                t / (x.max(1) * y.max(1)),
            ]
        });
        let mut warp = Warp {
            insts,
            ops: &ops,
            launch,
            tid,
            regs: Regs {
                r: vec![empty(); 256],
                ur: vec![empty(); 64],
                p: std::array::from_fn(|_| [None; 32]),
                up: std::array::from_fn(|_| [None; 32]),
            },
            barriers: [0; 16],
            exited: 0,
            local: vec![std::collections::BTreeMap::new(); 32],
            at: usize::MAX,
            unknown_from: [[usize::MAX; 8]; 2],
            r_unknown_from: vec![usize::MAX; 256],
            ur_unknown_from: vec![usize::MAX; 64],
        };
        let mut groups = vec![Group {
            mask: live,
            pc: 0,
            waiting: false,
        }];
        run_warp(&mut warp, &mut groups, &at, &mut issues, &mut steps, budget)?;
    }
    Ok(issues)
}

/// The label → instruction index map of a listing.
type Labels<'s> = std::collections::BTreeMap<&'s str, usize>;

/// Runs the groups of one warp until every lane has exited: each step issues the instruction
/// of the runnable group with the lowest address, counted in `issues` (`steps`: the group
/// steps so far, at most `budget`).
fn run_warp(
    w: &mut Warp,
    groups: &mut Vec<Group>,
    at: &Labels,
    issues: &mut [u64],
    steps: &mut u64,
    budget: u64,
) -> Result<(), Stop> {
    let insts = w.insts;
    loop {
        drop_exited(groups, w.exited);
        // The runnable group with the lowest address first.
        let Some(gi) = (0..groups.len())
            .filter(|&k| !groups[k].waiting)
            .min_by_key(|&k| groups[k].pc)
        else {
            if groups.is_empty() {
                return Ok(());
            }
            merge_at_bsync(w, groups)?;
            continue;
        };
        let pc = groups[gi].pc;
        let Some(i) = insts.get(pc) else {
            return Err(Stop {
                addr: insts.last().map_or(0, |i| i.addr),
                text: String::new(),
                why: "ran past the last instruction".into(),
            });
        };
        *steps += 1;
        if *steps > budget {
            return Err(stop(i, format!("more than {budget} steps")));
        }
        issues[pc] += 1;
        w.at = pc;
        issue(w, groups, gi, i, at)?;
    }
}

/// Takes the lanes of `exited` out of every group, and the groups left empty out of `groups`.
fn drop_exited(groups: &mut Vec<Group>, exited: u32) {
    groups.retain(|g| g.mask & !exited != 0);
    for g in groups.iter_mut() {
        g.mask &= !exited;
    }
}

/// All groups wait: merges the groups at the first `BSYNC` whose barrier's lanes have all
/// arrived into one that goes on past it; a [`Stop`] when there is none.
fn merge_at_bsync(w: &Warp, groups: &mut Vec<Group>) -> Result<(), Stop> {
    let insts = w.insts;
    for k in 0..groups.len() {
        let pc = groups[k].pc;
        let b = barrier_no(&insts[pc]).unwrap_or(0);
        let arrived = groups
            .iter()
            .filter(|g| g.pc == pc)
            .fold(0, |m, g| m | g.mask);
        let need = w.barriers[b] & !w.exited;
        if need & !arrived == 0 {
            groups.retain(|g| g.pc != pc);
            groups.push(Group {
                mask: arrived,
                pc: pc + 1,
                waiting: false,
            });
            return Ok(());
        }
    }
    let i = &insts[groups[0].pc];
    Err(stop(
        i,
        "lanes wait at convergence barriers that never fill",
    ))
}

/// Issues `i`, the instruction at group `gi`'s address, for that group: a branch, an exit or a
/// convergence-barrier instruction moves, splits or stops the group; any other is evaluated
/// ([`Warp::alu`]) and the group goes on to the next instruction.
fn issue(
    w: &mut Warp,
    groups: &mut Vec<Group>,
    gi: usize,
    i: &SassInst,
    at: &Labels,
) -> Result<(), Stop> {
    let (pc, mask) = (groups[gi].pc, groups[gi].mask);
    match i.family() {
        "BRA" => branch(w, groups, gi, i, at)?,
        "EXIT" => {
            let out = exiting(w, i, pc, mask)?;
            w.exited |= out;
            for b in &mut w.barriers {
                *b &= !out;
            }
            groups[gi].mask &= !out;
            groups[gi].pc = pc + 1;
        }
        "BSSY" => {
            let b = barrier_no(i).ok_or_else(|| stop(i, "no barrier register"))?;
            w.barriers[b] = mask;
            groups[gi].pc = pc + 1;
        }
        "BREAK" => {
            let b = barrier_no(i).ok_or_else(|| stop(i, "no barrier register"))?;
            let guard = guard_opnd(i);
            let mut out = 0u32;
            for l in lanes(mask) {
                match w.guard_on(&guard, l) {
                    Some(true) => out |= 1 << l,
                    Some(false) => {}
                    None => {
                        return Err(stop(i, "a BREAK on a predicate the replay cannot know"));
                    }
                }
            }
            w.barriers[b] &= !out;
            groups[gi].pc = pc + 1;
        }
        "BSYNC" => {
            let b = barrier_no(i).ok_or_else(|| stop(i, "no barrier register"))?;
            let need = w.barriers[b] & !w.exited;
            if need & !mask == 0 {
                groups[gi].pc = pc + 1;
            } else {
                groups[gi].waiting = true;
            }
        }
        "CALL" | "RET" | "BRX" | "JMP" | "JMX" | "KILL" | "BMOV" | "BPT" => {
            return Err(stop(
                i,
                "calls, returns and indirect branches are not replayed",
            ));
        }
        _ => {
            if !no_effect(i) {
                w.alu(pc, mask);
            }
            groups[gi].pc = pc + 1;
        }
    }
    Ok(())
}

/// `BRA` for group `gi`: the lanes whose guard holds (every lane with `.ANY`, when one does)
/// go to the target. A divergent branch splits the group, which only a convergence barrier
/// holding all its lanes allows; a guard the replay cannot know stops it.
fn branch(
    w: &Warp,
    groups: &mut Vec<Group>,
    gi: usize,
    i: &SassInst,
    at: &Labels,
) -> Result<(), Stop> {
    let (pc, mask) = (groups[gi].pc, groups[gi].mask);
    let Some(t) = i.target.as_deref().and_then(|t| at.get(t)).copied() else {
        return Err(stop(
            i,
            "a branch whose target is not a label of the function",
        ));
    };
    let guard = guard_opnd(i);
    let any = i.mnemonic.contains(".ANY");
    let mut taken = 0u32;
    for l in lanes(mask) {
        match w.guard_on(&guard, l) {
            Some(true) => taken |= 1 << l,
            Some(false) => {}
            None => {
                return Err(stop(i, w.unknown_why(&guard)));
            }
        }
    }
    if any && taken != 0 {
        taken = mask;
    }
    let rest = mask & !taken;
    if taken != 0 && rest != 0 {
        let covered = w.barriers.iter().any(|&b| b & mask == mask);
        if !covered {
            return Err(stop(
                i,
                "a divergent branch outside every convergence barrier",
            ));
        }
        groups[gi].mask = rest;
        groups[gi].pc = pc + 1;
        groups.push(Group {
            mask: taken,
            pc: t,
            waiting: false,
        });
    } else {
        groups[gi].pc = if taken != 0 { t } else { pc + 1 };
    }
    Ok(())
}

/// The lanes of `mask` that `i`, the `EXIT` at `pc`, retires: `@P0 EXIT P1` retires a lane
/// where the guard and the operand predicate both hold (ptxas's `@%p ret` of an `and.pred`).
fn exiting(w: &Warp, i: &SassInst, pc: usize, mask: u32) -> Result<u32, Stop> {
    let guard = guard_opnd(i);
    let operand = w.ops[pc]
        .first()
        .filter(|o| matches!(o, Opnd::Pred { .. }))
        .cloned();
    let mut out = 0u32;
    for l in lanes(mask) {
        let also = match &operand {
            Some(o) => w.pred(o, l),
            None => Some(true),
        };
        let go = match (w.guard_on(&guard, l), also) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        };
        match go {
            Some(true) => out |= 1 << l,
            Some(false) => {}
            None => {
                return Err(stop(i, "an exit on a predicate the replay cannot know"));
            }
        }
    }
    Ok(out)
}

/// The `Bn` of `BSSY Bn, …`, `BSYNC Bn`, `BREAK Bn`.
fn barrier_no(i: &SassInst) -> Option<usize> {
    let body = i.text.split_once(i.mnemonic.as_str())?.1.trim();
    let b = body.split(|c: char| c == ',' || c.is_whitespace()).next()?;
    let n: usize = b.strip_prefix('B')?.parse().ok()?;
    (n < 16).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(src: &str) -> Vec<SassInst> {
        let fs = super::super::listing::parse(src).unwrap();
        fs[0].insts.clone()
    }

    fn launch(threads: u32, params: Vec<u8>) -> Launch {
        Launch {
            params,
            param_base: 0x210,
            ntid: [threads, 1, 1],
            nctaid: [1, 1, 1],
            ctaid: [0, 0, 0],
        }
    }

    #[test]
    fn gmma_accumulators_are_as_wide_as_their_fragment() {
        assert_eq!(gmma_width("HGMMA.64x64x16.F32"), 32);
        assert_eq!(gmma_width("HGMMA.64x256x16.F32.BF16"), 128);
        assert_eq!(gmma_width("HGMMA.64x128x16.F16"), 32);
        assert_eq!(gmma_width("QGMMA.64x128x32.F32.E4M3.E4M3"), 64);
        assert_eq!(gmma_width("HGMMA"), 128);
    }

    #[test]
    fn param_bases_as_ptxas_13_places_them() {
        assert_eq!(param_base("sm_80"), Some(0x160));
        assert_eq!(param_base("sm_89"), Some(0x160));
        assert_eq!(param_base("sm_90a"), Some(0x210));
        assert_eq!(param_base("sm_61"), None);
    }

    #[test]
    fn operands_are_read_as_nvdisasm_prints_them() {
        assert_eq!(operand("R2.reuse"), operand("R2"));
        assert_eq!(operand("-0x80"), Opnd::Imm(0xffff_ff80));
        assert_eq!(operand("c[0x0][0x21c]"), Opnd::Const(0x21c));
        assert_eq!(operand("c[0x0][RZ]"), Opnd::Const(0));
        assert!(matches!(operand("c[0x0][R2+0x4]"), Opnd::Other(_)));
        assert_eq!(
            operand("!P1"),
            Opnd::Pred {
                uniform: false,
                n: Some(1),
                not: true
            }
        );
        assert!(matches!(operand("[R2+0x80]"), Opnd::Other(_)));
        assert!(matches!(
            operand("URZ"),
            Opnd::Reg {
                uniform: true,
                n: None,
                ..
            }
        ));
    }

    /// A counted loop: `R0` from a parameter (5 at c[0x0][0x210]), counted down by 1; the body
    /// block issues 5 times per warp, the rest once; two warps.
    #[test]
    fn a_counted_loop_issues_its_trip_count() {
        let src = ".text.k:\n\
            /*0000*/ LDC R0, c[0x0][0x210] ;\n\
            .L_x_0:\n\
            /*0010*/ IADD3 R0, R0, -0x1, RZ ;\n\
            /*0020*/ STS [R1], R0 ;\n\
            /*0030*/ ISETP.NE.AND P0, PT, R0, RZ, PT ;\n\
            /*0040*/ @P0 BRA `(.L_x_0) ;\n\
            /*0050*/ EXIT ;\n";
        let v = replay(
            &listing(src),
            &launch(64, 5u32.to_le_bytes().to_vec()),
            1000,
        )
        .unwrap();
        assert_eq!(v, [2, 10, 10, 10, 10, 2]);
    }

    /// Lanes 0..15 take the branch; the two groups meet again at `BSYNC`: the skipped block
    /// issues for the other group only, the join once.
    #[test]
    fn a_divergent_branch_issues_both_paths_and_reconverges() {
        let src = ".text.k:\n\
            /*0000*/ S2R R0, SR_TID.X ;\n\
            /*0010*/ ISETP.GE.U32.AND P0, PT, R0, 0x10, PT ;\n\
            /*0020*/ BSSY B0, `(.L_x_1) ;\n\
            /*0030*/ @!P0 BRA `(.L_x_0) ;\n\
            /*0040*/ STS [R1], R0 ;\n\
            .L_x_0:\n\
            /*0050*/ STS [R1+0x4], R0 ;\n\
            .L_x_1:\n\
            /*0060*/ BSYNC B0 ;\n\
            /*0070*/ EXIT ;\n";
        let v = replay(&listing(src), &launch(32, vec![]), 1000).unwrap();
        assert_eq!(v, [1, 1, 1, 1, 1, 2, 2, 1]);
    }

    #[test]
    fn a_branch_on_loaded_data_stops_the_replay() {
        let src = ".text.k:\n\
            /*0000*/ LDS R0, [RZ] ;\n\
            /*0010*/ ISETP.NE.AND P0, PT, R0, RZ, PT ;\n\
            /*0020*/ @P0 BRA `(.L_x_0) ;\n\
            .L_x_0:\n\
            /*0030*/ EXIT ;\n";
        let e = replay(&listing(src), &launch(32, vec![]), 1000).unwrap_err();
        assert_eq!(e.addr, 0x20);
        assert!(e.why.contains("cannot know"), "{e}");
    }

    /// ptxas's loop that issues a per-thread TMA copy one lane at a time: `ELECT` picks the
    /// lowest lane still to go, which clears its `P0`; the warp loops while any lane has one
    /// (`BRA.U.ANY`). Lanes 0..2 want a copy: three rounds.
    #[test]
    fn an_elect_loop_runs_once_per_lane_that_wants_it() {
        let src = ".text.k:\n\
            /*0000*/ S2R R0, SR_TID.X ;\n\
            /*0010*/ ISETP.LT.U32.AND P0, PT, R0, 0x3, PT ;\n\
            /*0020*/ PLOP3.LUT P1, PT, PT, PT, PT, 0x8, 0x0 ;\n\
            .L_x_0:\n\
            /*0030*/ @P0 ELECT P1, URZ, PT ;\n\
            /*0040*/ @P1 PLOP3.LUT P0, PT, P1, PT, PT, 0x8, 0x0 ;\n\
            /*0050*/ PLOP3.LUT P1, PT, PT, PT, PT, 0x8, 0x0 ;\n\
            /*0060*/ UTMALDG.2D [UR20], [UR4] ;\n\
            /*0070*/ @P0 BRA.U.ANY `(.L_x_0) ;\n\
            /*0080*/ EXIT ;\n";
        let v = replay(&listing(src), &launch(32, vec![]), 1000).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v, [1, 1, 1, 3, 3, 3, 3, 3, 1]);
    }

    /// `SHFL.IDX` broadcasts lane 5's value, `SHFL.BFLY` 1 swaps neighbours (PTX ISA
    /// shfl.sync): both results are known, so the branches on them are decided.
    #[test]
    fn shuffled_values_are_known_when_their_sources_are() {
        let src = ".text.k:\n\
            /*0000*/ S2R R0, SR_TID.X ;\n\
            /*0010*/ SHFL.IDX PT, R2, R0, 0x5, 0x1f ;\n\
            /*0020*/ ISETP.NE.AND P0, PT, R2, 0x5, PT ;\n\
            /*0030*/ @P0 BRA `(.L_x_0) ;\n\
            /*0040*/ STS [R1], R0 ;\n\
            .L_x_0:\n\
            /*0050*/ SHFL.BFLY PT, R3, R0, 0x1, 0x1f ;\n\
            /*0060*/ LOP3.LUT R4, R3, R0, RZ, 0x96, !PT ;\n\
            /*0070*/ ISETP.NE.AND P1, PT, R4, 0x1, PT ;\n\
            /*0080*/ @P1 BRA `(.L_x_1) ;\n\
            /*0090*/ STS [R1+0x4], R0 ;\n\
            .L_x_1:\n\
            /*00a0*/ EXIT ;\n";
        let v = replay(&listing(src), &launch(32, vec![]), 1000).unwrap();
        assert_eq!(v, [1; 11]);
    }

    #[test]
    fn a_spin_without_end_stops_at_the_budget() {
        let src = ".text.k:\n\
            .L_x_0:\n\
            /*0000*/ BRA `(.L_x_0) ;\n";
        let e = replay(&listing(src), &launch(32, vec![]), 50).unwrap_err();
        assert!(e.why.contains("more than 50 steps"), "{e}");
    }
}
