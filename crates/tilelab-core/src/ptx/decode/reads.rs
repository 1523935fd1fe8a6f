//! Which bytes of its parameters a kernel reads, found when it is decoded ([`mark_reads`]): a
//! parameter no instruction reads needs no value at launch (`ptx::params::launch_params`).

use crate::ptx::decode::ParamInfo;
use crate::ptx::types::Ty;

/// One byte range of a parameter that the kernel reads: bytes `lo..hi` from the parameter's
/// first byte, first read at PTX line `line`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamRead {
    /// First byte read (from the parameter's start).
    pub lo: u32,
    /// One past the last byte read.
    pub hi: u32,
    /// The 1-based PTX line of the first instruction reading them.
    pub line: u32,
}

/// Records in each parameter's [`ParamInfo::reads`] the bytes `kernel` reads, from its text, in
/// byte order (ranges of one first line merged):
///
/// * `ld.param{.vN}.TYPE d, [NAME+OFF]`: bytes OFF..OFF + N·size(TYPE) of that parameter
///   (with `[OFF]`, the bytes of the parameter buffer at OFF, in whichever parameter they lie);
/// * any other mention of a parameter's name (its address taken with `mov` or `cvta.param`,
///   given to `cp.async.bulk.tensor` or `prefetch.tensormap`): the whole parameter;
/// * an `ld.param` whose address is a register: every byte of every parameter (where it
///   points is not known before the run).
///
/// A parameter with no entry is never read: it needs no value. Conservative: a byte read on a
/// path the run never takes still counts.
pub fn mark_reads(kernel: &crate::ptx::parse::Kernel, params: &mut [ParamInfo]) {
    use crate::ptx::parse::{Operand, Stmt};
    const NONE: u32 = u32::MAX;
    let index: std::collections::HashMap<&str, usize, foldhash::fast::RandomState> = params
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), i))
        .collect();
    // The lengths of the parameters' names (bit L: a name of L < 128 bytes; `long`: one of
    // more): a name of another length is none of them, found without hashing it (most names
    // are registers, far shorter than nvcc's `kernel_param_N`).
    let (mut lens, mut long) = (0u128, false);
    for p in params.iter() {
        match p.name.len() {
            l @ 0..128 => lens |= 1 << l,
            _ => long = true,
        }
    }
    let maybe_param = |n: &str| match n.len() {
        l @ 0..128 => lens >> l & 1 == 1,
        _ => long,
    };
    // Per byte of the parameter buffer (at most `PARAM_LIMIT`): the first line reading it;
    // per parameter: the first line reading all of it; the first line reading everything.
    let total = params
        .iter()
        .map(|p| p.offset.saturating_add(p.size))
        .max()
        .unwrap_or(0) as usize;
    let mut byte_line = vec![NONE; total];
    let mut whole = vec![NONE; params.len()];
    let mut everything = NONE;
    // Every name an operand mentions (exhaustive: an operand form added to the parser must
    // say here whether it can name a parameter).
    fn names<'o>(o: &'o Operand, out: &mut Vec<&'o str>) {
        match o {
            Operand::Name(n) | Operand::Not(n) | Operand::Address(Some(n), _) => out.push(n),
            Operand::Pair(a, b) => out.extend([a.as_str(), b.as_str()]),
            Operand::Vector(v) => v.iter().for_each(|e| names(e, out)),
            Operand::TensorAddress(n, v) => {
                out.push(n);
                v.iter().for_each(|e| names(e, out));
            }
            Operand::Address(None, _)
            | Operand::Int(_)
            | Operand::F32(_)
            | Operand::F64(_)
            | Operand::Sink => {}
        }
    }
    let mut ns = Vec::new();
    for st in &kernel.body {
        let Stmt::Inst(inst) = st else { continue };
        let line = inst.line;
        let is_ld_param = inst.opcode.first().is_some_and(|o| o == "ld")
            && inst.opcode.iter().any(|m| m.starts_with("param"));
        let mut skip = None;
        if is_ld_param && let Some(Operand::Address(base, off)) = inst.operands.get(1) {
            skip = Some(1);
            let vec = inst
                .opcode
                .iter()
                .find_map(|m| m.strip_prefix('v').and_then(|n| n.parse::<i64>().ok()))
                .unwrap_or(1);
            let size = inst
                .opcode
                .iter()
                .rev()
                .find_map(|m| Ty::parse(m))
                .map(|t| i64::from(t.bytes()));
            let named = base.as_ref().map(|n| index.get(n.as_str()).copied());
            let at = match named {
                None => Some(0),
                Some(Some(i)) => Some(i64::from(params[i].offset)),
                // A register address: anywhere.
                Some(None) => None,
            };
            match (at, size) {
                (Some(a), Some(s)) => {
                    let lo = a.saturating_add(*off).clamp(0, total as i64) as usize;
                    let hi = a
                        .saturating_add(*off)
                        .saturating_add(vec * s)
                        .clamp(0, total as i64) as usize;
                    for l in &mut byte_line[lo..hi.max(lo)] {
                        *l = (*l).min(line);
                    }
                }
                (_, None) => match named {
                    Some(Some(i)) => whole[i] = whole[i].min(line),
                    _ => everything = everything.min(line),
                },
                (None, Some(_)) => everything = everything.min(line),
            }
        }
        ns.clear();
        for (k, o) in inst.operands.iter().enumerate() {
            if Some(k) != skip {
                names(o, &mut ns);
            }
        }
        for n in &ns {
            if maybe_param(n)
                && let Some(&i) = index.get(n)
            {
                whole[i] = whole[i].min(line);
            }
        }
    }
    for (i, p) in params.iter_mut().enumerate() {
        let all = whole[i].min(everything);
        p.reads = if all != NONE {
            vec![ParamRead {
                lo: 0,
                hi: p.size,
                line: all,
            }]
        } else {
            let mut out: Vec<ParamRead> = Vec::new();
            let o = p.offset as usize;
            for (b, &line) in byte_line[o..o + p.size as usize].iter().enumerate() {
                let b = b as u32;
                if line == NONE {
                    continue;
                }
                match out.last_mut() {
                    Some(r) if r.hi == b && r.line == line => r.hi += 1,
                    _ => out.push(ParamRead {
                        lo: b,
                        hi: b + 1,
                        line,
                    }),
                }
            }
            out
        };
    }
}
