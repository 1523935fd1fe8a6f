//! The arithmetic of the CTA engine: unary, binary and ternary integer and float operations,
//! comparisons, conversions (`cvt`) and the atomic operations' combine step, each a pure
//! function of register values (PTX ISA, "Integer Arithmetic", "Floating-Point", "Comparison
//! and Selection", "Data Movement and Conversion: cvt", "atom").

use super::{Machine, Observer, check_member};
use crate::ptx::decode::Src;
use crate::ptx::decode::{AtomOp, Bin, Cmp, LOCAL_WINDOW, SHARED_WINDOW, Tern, Un};
use crate::ptx::decode::{BoolOp, Inst, Op, ShflMode};
use crate::ptx::lanes::arrays;
use crate::ptx::types::{Ty, float1, float2, fma, from_f64, sext, to_f64};

/// The ALU instruction families of the engine, one function per family.
impl Machine<'_> {
    /// `mov`, and packing or unpacking a vector of parts (`mov.b64 d, {a, b}`).
    pub(in crate::ptx) fn exec_move<'o>(
        &mut self,
        w: usize,
        _pc: usize,
        inst: &Inst,
        mask: u32,
        _path: u32,
        _obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let mut changed = false;
        let regs = &mut self.warps[w].regs;
        match &inst.op {
            Op::Mov { ty, d, a } => {
                let (ty, d, a) = (*ty, *d, *a);
                if ty != Ty::Pred {
                    let m = ty.trunc(u64::MAX);
                    return Ok(arrays::map2(regs, mask, d, a, a, |x, _| x & m));
                }
                each!(mask, |l| {
                    let x = v!(regs, a, l);
                    set!(
                        changed,
                        regs,
                        d,
                        l,
                        if ty == Ty::Pred {
                            (x & 1 != 0) as u64
                        } else {
                            ty.trunc(x)
                        }
                    )
                });
            }
            Op::Pack {
                part_bits,
                d,
                parts,
            } => {
                let pb = *part_bits;
                each!(mask, |l| {
                    let mut x = 0u64;
                    for (i, p) in parts.iter().enumerate() {
                        let part =
                            v!(regs, *p, l) & if pb >= 64 { u64::MAX } else { (1u64 << pb) - 1 };
                        x |= part.checked_shl(pb * i as u32).unwrap_or(0);
                    }
                    set!(changed, regs, *d, l, x)
                });
            }
            Op::Unpack {
                part_bits,
                parts,
                a,
            } => {
                let pb = *part_bits;
                each!(mask, |l| {
                    let x = v!(regs, *a, l);
                    for (i, p) in parts.iter().enumerate() {
                        if let Some(p) = p {
                            let part = x.checked_shr(pb * i as u32).unwrap_or(0)
                                & if pb >= 64 { u64::MAX } else { (1u64 << pb) - 1 };
                            set!(changed, regs, *p, l, part);
                        }
                    }
                });
            }
            _ => {}
        }
        Ok(changed)
    }

    /// One-, two- and three-operand arithmetic, `bfi`, `lop3`, and `cvta` between generic and shared or local addresses.
    pub(in crate::ptx) fn exec_arith<'o>(
        &mut self,
        w: usize,
        _pc: usize,
        inst: &Inst,
        mask: u32,
        _path: u32,
        _obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let mut changed = false;
        let smem_len = u64::from(self.smem.len());
        let frame = u64::from(self.prog.local_frame);
        let regs = &mut self.warps[w].regs;
        match &inst.op {
            Op::Un { k, ty, d, a } => {
                let (k, ty, d, a) = (*k, *ty, *d, *a);
                if let Some(c) = un_lanes(regs, mask, k, ty, d, a) {
                    return Ok(c);
                }
                let window = match k {
                    Un::CvtaToShared => Some(("shared", SHARED_WINDOW, smem_len)),
                    Un::CvtaToLocal => Some(("local", LOCAL_WINDOW, frame)),
                    _ => None,
                };
                each!(mask, |l| {
                    let x = v!(regs, a, l);
                    // PTX ISA cvta: undefined when the generic address is outside the state
                    // space's window (one past the end is allowed: an end pointer).
                    if let Some((space, base, len)) = window
                        && !(base..=base + len).contains(&x)
                    {
                        return Err(format!(
                            "lane {l}: cvta.to.{space} of {x:#x}, which is not a generic {space} address (the {space} window is {base:#x}..={:#x}): undefined (PTX ISA, cvta); convert an address from cvta.{space} or a {space} variable",
                            base + len
                        ));
                    }
                    set!(changed, regs, d, l, unary(k, ty, x))
                });
            }
            Op::Bin { k, ty, d, a, b } => {
                let (k, ty, d, a, b) = (*k, *ty, *d, *a, *b);
                if let Some(c) = bin_lanes(regs, mask, k, ty, d, a, b) {
                    return Ok(c);
                }
                each!(mask, |l| {
                    let (x, y) = (v!(regs, a, l), v!(regs, b, l));
                    set!(changed, regs, d, l, binary(k, ty, x, y))
                });
            }
            Op::Tern { k, ty, d, a, b, c } => {
                let (k, ty, d, a, b, c) = (*k, *ty, *d, *a, *b, *c);
                return Ok(tern_lanes(regs, mask, k, ty, d, [a, b, c]));
            }
            Op::Bfi { ty, d, s } => {
                let bits = ty.bits();
                each!(mask, |l| {
                    let (a, b) = (v!(regs, s[0], l), v!(regs, s[1], l));
                    let pos = (v!(regs, s[2], l) & 0xff) as u32;
                    let len = (v!(regs, s[3], l) & 0xff) as u32;
                    let mut x = ty.trunc(b);
                    for i in 0..len {
                        let bit = pos + i;
                        if bit >= bits {
                            break;
                        }
                        x = (x & !(1 << bit)) | ((a >> i) & 1) << bit;
                    }
                    set!(changed, regs, *d, l, x)
                });
            }
            Op::Lop3 { d, s, lut } => {
                each!(mask, |l| {
                    let (a, b, c) = (
                        v!(regs, s[0], l) as u32,
                        v!(regs, s[1], l) as u32,
                        v!(regs, s[2], l) as u32,
                    );
                    let mut r = 0u32;
                    for i in 0..8 {
                        if lut >> i & 1 == 1 {
                            let ta = if i & 4 != 0 { a } else { !a };
                            let tb = if i & 2 != 0 { b } else { !b };
                            let tc = if i & 1 != 0 { c } else { !c };
                            r |= ta & tb & tc;
                        }
                    }
                    set!(changed, regs, *d, l, r as u64)
                });
            }
            _ => {}
        }
        Ok(changed)
    }

    /// `setp`, predicate logic and `selp`.
    pub(in crate::ptx) fn exec_pred<'o>(
        &mut self,
        w: usize,
        _pc: usize,
        inst: &Inst,
        mask: u32,
        _path: u32,
        _obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let mut changed = false;
        let regs = &mut self.warps[w].regs;
        match &inst.op {
            Op::Setp {
                cmp,
                ty,
                d,
                d2,
                a,
                b,
                comb,
            } => {
                let s = SetpSrcs {
                    a: *a,
                    b: *b,
                    comb: *comb,
                };
                changed |= setp_lanes(regs, mask, *cmp, *ty, (*d, *d2), s);
            }
            Op::PredLogic { k, d, a, b } => {
                each!(mask, |l| {
                    let x = (v!(regs, a.0, l) & 1 != 0) != a.1;
                    let y = (v!(regs, b.0, l) & 1 != 0) != b.1;
                    let r = match k {
                        0 => x && y,
                        1 => x || y,
                        2 => x != y,
                        _ => !x,
                    };
                    set!(changed, regs, *d, l, r as u64)
                });
            }
            Op::Selp { ty, d, a, b, p } => {
                let (m, neg) = (ty.trunc(u64::MAX), p.1);
                let pick = |x: u64, y: u64, c: u64| if (c & 1 != 0) != neg { x & m } else { y & m };
                changed |= arrays::map3(regs, mask, *d, [*a, *b, p.0], pick);
            }
            _ => {}
        }
        Ok(changed)
    }

    /// `cvt`, and `cvt` packing two f32 into `.f16x2`/`.bf16x2`.
    pub(in crate::ptx) fn exec_cvt<'o>(
        &mut self,
        w: usize,
        _pc: usize,
        inst: &Inst,
        mask: u32,
        _path: u32,
        _obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let mut changed = false;
        let regs = &mut self.warps[w].regs;
        match &inst.op {
            Op::Cvt {
                dt,
                st,
                rnd,
                int_round,
                sat,
                d,
                a,
            } => {
                let (dt, st, rnd, ir, sat) = (*dt, *st, *rnd, *int_round, *sat);
                changed |= cvt_lanes(regs, mask, (dt, st), (rnd, ir, sat), *d, *a);
            }
            Op::CvtPack { dt, relu, d, a, b } => {
                changed |= cvt_pack_lanes(regs, mask, *dt == Ty::F16x2, *relu, *d, [*a, *b]);
            }
            _ => {}
        }
        Ok(changed)
    }

    /// The warp-collective instructions: `bar.warp.sync`, `activemask`, `vote.sync`, `shfl.sync` (each through the membermask rule, [`check_member`]).
    pub(in crate::ptx) fn exec_collective<'o>(
        &mut self,
        w: usize,
        _pc: usize,
        inst: &Inst,
        mask: u32,
        path: u32,
        _obs: Option<&mut (dyn Observer + 'o)>,
    ) -> Result<bool, String> {
        let mut changed = false;
        let live = self.warps[w].live & !self.warps[w].exited;
        let regs = &mut self.warps[w].regs;
        match &inst.op {
            Op::WarpSync { member } => {
                check_member("bar.warp.sync", regs, Some(*member), mask, path, live)?;
            }
            Op::Activemask { d } => {
                each!(mask, |l| set!(changed, regs, *d, l, path as u64));
            }
            Op::Vote { mode, d, p, member } => {
                check_member("vote.sync", regs, *member, mask, path, live)?;
                let mut ballot = 0u32;
                each!(mask, |l| {
                    if (v!(regs, p.0, l) & 1 != 0) != p.1 {
                        ballot |= 1 << l;
                    }
                });
                let r = match mode {
                    0 => (ballot == mask) as u64,
                    1 => (ballot != 0) as u64,
                    2 => (ballot == 0 || ballot == mask) as u64,
                    _ => ballot as u64,
                };
                each!(mask, |l| set!(changed, regs, *d, l, r));
            }
            Op::Shfl {
                mode,
                d,
                p,
                s,
                member,
            } => {
                check_member("shfl.sync", regs, *member, mask, path, live)?;
                let mut out = [0u64; 32];
                let mut ok = [false; 32];
                each!(mask, |l| {
                    let lane = l as u32;
                    let bval = (v!(regs, s[1], l) & 0x1f) as u32;
                    let c = v!(regs, s[2], l) as u32;
                    let cval = c & 0x1f;
                    let seg = (c >> 8) & 0x1f;
                    let max_lane = (lane & seg) | (cval & !seg);
                    let min_lane = lane & seg;
                    let (j, pval) = match mode {
                        ShflMode::Up => {
                            let j = lane as i32 - bval as i32;
                            (j, j >= max_lane as i32)
                        }
                        ShflMode::Down => {
                            let j = (lane + bval) as i32;
                            (j, j <= max_lane as i32)
                        }
                        ShflMode::Bfly => {
                            let j = (lane ^ bval) as i32;
                            (j, j <= max_lane as i32)
                        }
                        ShflMode::Idx => {
                            let j = (min_lane | (bval & !seg)) as i32;
                            (j, j <= max_lane as i32)
                        }
                    };
                    let src = if pval { j as usize } else { l };
                    if mask >> (src & 31) & 1 == 0 {
                        // PTX ISA shfl.sync: a source lane that is inactive or whose guard is
                        // false gives an unpredictable value.
                        return Err(format!(
                            "lane {l}: shfl.sync reads lane {src}, which does not execute it ({}): its value is unpredictable (PTX ISA, shfl.sync); every source lane must be active with its guard true (executing lanes {mask:#010x})",
                            if live >> src & 1 == 0 {
                                "exited or not in the block"
                            } else if path >> src & 1 == 0 {
                                "on another path"
                            } else {
                                "its guard is false"
                            }
                        ));
                    }
                    out[l] = v!(regs, s[0], src & 31);
                    ok[l] = pval;
                });
                changed |= write_shfl(regs, mask, (*d, *p), &out, &ok);
            }
            _ => {}
        }
        Ok(changed)
    }
}

/// The results of a `shfl.sync` in the lanes of `mask`: `d` = the low 32 bits of `out`, then
/// the predicate `p` = `ok`, as arrays (per lane `d` then `p` writes the same values and finds
/// the same changes: lanes are independent); the changed flag.
fn write_shfl(
    regs: &mut [u64],
    mask: u32,
    (d, p): (u32, Option<u32>),
    out: &[u64; 32],
    ok: &[bool; 32],
) -> bool {
    let vals: [u64; 32] = std::array::from_fn(|l| out[l] & 0xffff_ffff);
    let mut changed = arrays::write(regs, d, mask, &vals);
    if let Some(p) = p {
        changed |= arrays::write(regs, p, mask, &ok.map(u64::from));
    }
    changed
}

/// A loaded value of `ty` in a register: signed types sign-extended.
pub(in crate::ptx) fn extend(ty: Ty, v: u64) -> u64 {
    if ty.signed() {
        sext(v, ty.bits()) as u64
    } else {
        ty.trunc(v)
    }
}

pub(in crate::ptx) fn unary(k: Un, ty: Ty, x: u64) -> u64 {
    let bits = ty.bits();
    match k {
        Un::Not => ty.trunc(!x),
        Un::Cnot => (ty.trunc(x) == 0) as u64,
        Un::Neg if ty.is_float() => float1(ty, x, |a| -a, |a| -a),
        Un::Neg => ty.trunc((ty.int(x)).wrapping_neg() as u64),
        Un::Abs if ty.is_float() => float1(ty, x, f32::abs, f64::abs),
        Un::Abs => ty.trunc(ty.int(x).unsigned_abs() as u64),
        Un::Popc => ty.trunc(x).count_ones() as u64,
        Un::Clz => (ty.trunc(x).leading_zeros() - (64 - bits)) as u64,
        Un::Brev => ty.trunc(x).reverse_bits() >> (64 - bits),
        Un::Ex2 => float1(ty, x, f32::exp2, f64::exp2),
        Un::Lg2 => float1(ty, x, f32::log2, f64::log2),
        Un::Rcp => float1(ty, x, |a| 1.0 / a, |a| 1.0 / a),
        Un::Sqrt => float1(ty, x, f32::sqrt, f64::sqrt),
        Un::Rsqrt => float1(ty, x, |a| 1.0 / a.sqrt(), |a| 1.0 / a.sqrt()),
        Un::Sin => float1(ty, x, f32::sin, f64::sin),
        Un::Cos => float1(ty, x, f32::cos, f64::cos),
        Un::Tanh => float1(ty, x, f32::tanh, f64::tanh),
        Un::CvtaToShared => ty.trunc(x.wrapping_sub(SHARED_WINDOW)),
        Un::CvtaFromShared => ty.trunc((x & 0xffff_ffff).wrapping_add(SHARED_WINDOW)),
        Un::CvtaToLocal => ty.trunc(x.wrapping_sub(LOCAL_WINDOW)),
        Un::CvtaFromLocal => ty.trunc((x & 0xffff_ffff).wrapping_add(LOCAL_WINDOW)),
    }
}

/// [`binary`] over whole lane arrays for the common (operation, type) pairs: f32 add, sub,
/// mul, min, max and integer add, sub, mul.lo, and, or, xor, shl, each computing exactly what
/// [`binary`] computes per lane (integer results are the low bits of the type, which do not
/// depend on signedness for these operations). The changed flag, or `None` for any other pair
/// (the caller runs the per-lane path).
fn bin_lanes(regs: &mut [u64], mask: u32, k: Bin, ty: Ty, d: u32, a: Src, b: Src) -> Option<bool> {
    use arrays::{bits, f, map2};
    let int = matches!(ty, Ty::B(_) | Ty::U(_) | Ty::S(_));
    let m = ty.trunc(u64::MAX);
    let w = u64::from(ty.bits());
    let r = &mut *regs;
    Some(match k {
        Bin::Add if ty == Ty::F32 => map2(r, mask, d, a, b, |x, y| bits(f(x) + f(y))),
        Bin::Sub if ty == Ty::F32 => map2(r, mask, d, a, b, |x, y| bits(f(x) - f(y))),
        Bin::MulLo | Bin::MulHi | Bin::MulWide if ty == Ty::F32 => {
            map2(r, mask, d, a, b, |x, y| bits(f(x) * f(y)))
        }
        Bin::Min if ty == Ty::F32 => map2(r, mask, d, a, b, |x, y| bits(f(x).min(f(y)))),
        Bin::Max if ty == Ty::F32 => map2(r, mask, d, a, b, |x, y| bits(f(x).max(f(y)))),
        Bin::Add if int => map2(r, mask, d, a, b, |x, y| x.wrapping_add(y) & m),
        Bin::Sub if int => map2(r, mask, d, a, b, |x, y| x.wrapping_sub(y) & m),
        Bin::MulLo if int => map2(r, mask, d, a, b, |x, y| x.wrapping_mul(y) & m),
        Bin::And if int => map2(r, mask, d, a, b, |x, y| x & y & m),
        Bin::Or if int => map2(r, mask, d, a, b, |x, y| (x | y) & m),
        Bin::Xor if int => map2(r, mask, d, a, b, |x, y| (x ^ y) & m),
        Bin::Shl if int => map2(r, mask, d, a, b, |x, y| {
            let s = y & 0xffff_ffff;
            if s >= w { 0 } else { (x << s) & m }
        }),
        _ => return None,
    })
}

/// [`ternary`] over whole lane arrays (`fma.rn.f32`, integer `mad.lo` and 32-bit `mad.wide`
/// with loops of their own, every other form through [`ternary`] per lane): the changed flag.
fn tern_lanes(regs: &mut [u64], mask: u32, k: Tern, ty: Ty, d: u32, s: [Src; 3]) -> bool {
    let int = matches!(ty, Ty::B(_) | Ty::U(_) | Ty::S(_));
    let m = ty.trunc(u64::MAX);
    match k {
        Tern::MadLo if ty == Ty::F32 => arrays::fma_f32(regs, mask, d, s),
        Tern::MadLo if int => arrays::map3(regs, mask, d, s, |x, y, z| {
            x.wrapping_mul(y).wrapping_add(z) & m
        }),
        // `mad.wide.s32`/`.u32` in 64-bit arithmetic: the 32 x 32-bit product is exact in 64
        // bits and the 64-bit sum wraps as `ternary`'s truncated 128-bit one does.
        Tern::MadWide if ty == Ty::S(32) => arrays::map3(regs, mask, d, s, |x, y, z| {
            (i64::from(x as i32) * i64::from(y as i32)).wrapping_add(z as i64) as u64
        }),
        Tern::MadWide if ty == Ty::U(32) => arrays::map3(regs, mask, d, s, |x, y, z| {
            (u64::from(x as u32) * u64::from(y as u32)).wrapping_add(z)
        }),
        _ => arrays::map3(regs, mask, d, s, |x, y, z| ternary(k, ty, x, y, z)),
    }
}

/// [`unary`] over whole lane arrays: every operation but `cvta.to.shared`/`cvta.to.local`
/// (whose per-lane address check can fail), f32 `ex2`, `neg`, `abs`, `rcp`, `sqrt`, `rsqrt`
/// and `lg2` each with its own loop; the changed flag, or `None` for the two `cvta`.
fn un_lanes(regs: &mut [u64], mask: u32, k: Un, ty: Ty, d: u32, a: Src) -> Option<bool> {
    use arrays::{bits, f, map1};
    if matches!(k, Un::CvtaToShared | Un::CvtaToLocal) {
        return None;
    }
    let r = &mut *regs;
    Some(match (k, ty) {
        // What `float1` computes for f32: the f32 operation on the low 32 bits.
        (Un::Ex2, Ty::F32) => map1(r, mask, d, a, |x| bits(f(x).exp2())),
        (Un::Neg, Ty::F32) => map1(r, mask, d, a, |x| bits(-f(x))),
        (Un::Abs, Ty::F32) => map1(r, mask, d, a, |x| bits(f(x).abs())),
        (Un::Rcp, Ty::F32) => map1(r, mask, d, a, |x| bits(1.0 / f(x))),
        (Un::Sqrt, Ty::F32) => map1(r, mask, d, a, |x| bits(f(x).sqrt())),
        (Un::Rsqrt, Ty::F32) => map1(r, mask, d, a, |x| bits(1.0 / f(x).sqrt())),
        (Un::Lg2, Ty::F32) => map1(r, mask, d, a, |x| bits(f(x).log2())),
        _ => map1(r, mask, d, a, |x| unary(k, ty, x)),
    })
}

/// The sources of a `setp`: the compared pair and the combining predicate (operation,
/// predicate, negated).
#[derive(Clone, Copy, Debug)]
struct SetpSrcs {
    a: Src,
    b: Src,
    comb: Option<(BoolOp, Src, bool)>,
}

/// `setp` over whole lane arrays: `d = r op c`, `d2 = !r op c` (`r` the comparison, `c` the
/// combining predicate; without one `d = r`, `d2 = !r`) in the lanes of `mask`, written `d`
/// first, then `d2`; the changed flag.
fn setp_lanes(
    regs: &mut [u64],
    mask: u32,
    cmp: Cmp,
    ty: Ty,
    (d, d2): (u32, Option<u32>),
    s: SetpSrcs,
) -> bool {
    use crate::sim::bank::WARP_SIZE;
    if mask == 0 {
        return false;
    }
    let (x, y) = (arrays::operand(regs, s.a), arrays::operand(regs, s.b));
    let r: [bool; WARP_SIZE] = match ty {
        // The f64 compare of two exactly converted f32 values is the f32 compare.
        Ty::F32 => std::array::from_fn(|l| compare(cmp, Ty::F32, x[l], y[l])),
        Ty::S(32) => std::array::from_fn(|l| compare(cmp, Ty::S(32), x[l], y[l])),
        Ty::U(32) => std::array::from_fn(|l| compare(cmp, Ty::U(32), x[l], y[l])),
        _ => std::array::from_fn(|l| compare(cmp, ty, x[l], y[l])),
    };
    let (p, q): ([u64; WARP_SIZE], [u64; WARP_SIZE]) = match s.comb {
        None => (
            std::array::from_fn(|l| r[l] as u64),
            std::array::from_fn(|l| !r[l] as u64),
        ),
        Some((op, c, neg)) => {
            let c = arrays::operand(regs, c);
            let f = |v: bool, l: usize| {
                let c = (c[l] & 1 != 0) != neg;
                (match op {
                    BoolOp::And => v && c,
                    BoolOp::Or => v || c,
                    BoolOp::Xor => v != c,
                }) as u64
            };
            (
                std::array::from_fn(|l| f(r[l], l)),
                std::array::from_fn(|l| f(!r[l], l)),
            )
        }
    };
    let mut changed = arrays::write(regs, d, mask, &p);
    if let Some(d2) = d2 {
        changed |= arrays::write(regs, d2, mask, &q);
    }
    changed
}

/// `cvt` over whole lane arrays: [`convert`] in each lane of `mask` (`types`: destination,
/// source; `modes`: rounding, integer rounding, saturation); the changed flag.
fn cvt_lanes(
    regs: &mut [u64],
    mask: u32,
    (dt, st): (Ty, Ty),
    (rnd, ir, sat): (u8, bool, bool),
    d: u32,
    a: Src,
) -> bool {
    use arrays::map1;
    let r = &mut *regs;
    match (dt, st, ir, sat) {
        // The common forms with their types fixed, so that each loop is specialised.
        (Ty::F16, Ty::F32, false, false) => map1(r, mask, d, a, |x| {
            convert(Ty::F16, Ty::F32, rnd, false, false, x)
        }),
        (Ty::F32, Ty::F16, false, false) => map1(r, mask, d, a, |x| {
            convert(Ty::F32, Ty::F16, rnd, false, false, x)
        }),
        (Ty::U(64), Ty::U(32), false, false) => map1(r, mask, d, a, |x| {
            convert(Ty::U(64), Ty::U(32), rnd, false, false, x)
        }),
        (Ty::S(64), Ty::S(32), false, false) => map1(r, mask, d, a, |x| {
            convert(Ty::S(64), Ty::S(32), rnd, false, false, x)
        }),
        _ => map1(r, mask, d, a, |x| convert(dt, st, rnd, ir, sat, x)),
    }
}

/// `cvt.{rn}{.relu}.f16x2.f32 d, a, b` (`.bf16x2` when `f16` is false) over whole lane
/// arrays: `a` rounded into the upper half, `b` into the lower (each through f64, as
/// [`from_f64`] rounds); the changed flag.
fn cvt_pack_lanes(regs: &mut [u64], mask: u32, f16: bool, relu: bool, d: u32, s: [Src; 2]) -> bool {
    if mask == 0 {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    if f16 && std::is_x86_feature_detected!("f16c") {
        // With F16C, `half`'s f64 → f16 is the F16C conversion of the value as f32, which an
        // f32 widened to f64 is exactly (a NaN quieted either way): the slice conversion is
        // the same instruction, 8 lanes at a time.
        use half::slice::HalfFloatSliceExt;
        use std::array::from_fn;
        let (x, y) = (arrays::operand(regs, s[0]), arrays::operand(regs, s[1]));
        let v = |w: u64| {
            let v = f32::from_bits(w as u32);
            if relu && v <= 0.0 { 0.0 } else { v }
        };
        let src: [f32; 64] = from_fn(|k| if k < 32 { v(x[k]) } else { v(y[k - 32]) });
        let mut h = [half::f16::ZERO; 64];
        h.convert_from_f32_slice(&src);
        let out: [u64; 32] =
            from_fn(|l| u64::from(h[32 + l].to_bits()) | u64::from(h[l].to_bits()) << 16);
        return arrays::write(regs, d, mask, &out);
    }
    let half = |e: Ty, x: u64| {
        let mut v = f32::from_bits(x as u32) as f64;
        if relu && v <= 0.0 {
            v = 0.0;
        }
        from_f64(e, v)
    };
    let r = &mut *regs;
    if f16 {
        arrays::map2(r, mask, d, s[0], s[1], |x, y| {
            half(Ty::F16, y) | half(Ty::F16, x) << 16
        })
    } else {
        arrays::map2(r, mask, d, s[0], s[1], |x, y| {
            half(Ty::Bf16, y) | half(Ty::Bf16, x) << 16
        })
    }
}

pub(in crate::ptx) fn binary(k: Bin, ty: Ty, x: u64, y: u64) -> u64 {
    if ty.is_float() {
        return match k {
            Bin::Add => float2(ty, x, y, |a, b| a + b, |a, b| a + b),
            Bin::Sub => float2(ty, x, y, |a, b| a - b, |a, b| a - b),
            Bin::MulLo | Bin::MulHi | Bin::MulWide => float2(ty, x, y, |a, b| a * b, |a, b| a * b),
            Bin::Div => float2(ty, x, y, |a, b| a / b, |a, b| a / b),
            Bin::Min => float2(ty, x, y, f32::min, f64::min),
            Bin::Max => float2(ty, x, y, f32::max, f64::max),
            Bin::Copysign => float2(ty, x, y, |a, b| b.copysign(a), |a, b| b.copysign(a)),
            Bin::And => x & y,
            Bin::Or => x | y,
            Bin::Xor => x ^ y,
            _ => 0,
        };
    }
    let bits = ty.bits();
    let (a, b) = (ty.int(x), ty.int(y));
    let t = |v: i128| ty.trunc(v as u64);
    match k {
        Bin::Add => t(a.wrapping_add(b)),
        Bin::Sub => t(a.wrapping_sub(b)),
        Bin::MulLo => t(a.wrapping_mul(b)),
        Bin::MulHi => t(a.wrapping_mul(b) >> bits),
        Bin::MulWide => {
            let p = a.wrapping_mul(b) as u128 as u64;
            if bits >= 32 {
                p
            } else {
                p & ((1u64 << (2 * bits)) - 1)
            }
        }
        Bin::Div => {
            if b == 0 {
                ty.trunc(u64::MAX)
            } else {
                t(a.wrapping_div(b))
            }
        }
        Bin::Rem => {
            if b == 0 {
                t(a)
            } else {
                t(a.wrapping_rem(b))
            }
        }
        Bin::Min => t(a.min(b)),
        Bin::Max => t(a.max(b)),
        Bin::And => ty.trunc(x & y),
        Bin::Or => ty.trunc(x | y),
        Bin::Xor => ty.trunc(x ^ y),
        Bin::Shl => {
            let s = y & 0xffff_ffff;
            if s >= bits as u64 {
                0
            } else {
                ty.trunc(x << s)
            }
        }
        Bin::Shr => {
            let s = (y & 0xffff_ffff).min(bits as u64 - 1 + ty.signed() as u64);
            if ty.signed() {
                t(a >> s.min(127))
            } else if s >= bits as u64 {
                0
            } else {
                ty.trunc(x) >> s
            }
        }
        Bin::Copysign => 0,
    }
}

/// `bfe` (PTX ISA 9.7.1.19): bit `i` of `d` is bit `pos + i` of `a` for `i < len` and
/// `pos + i <= msb`, else the sign bit (bit `min(pos + len - 1, msb)` of `a` for a signed type
/// and `len > 0`, else 0); `pos` and `len` are the low bytes of `y` and `z`. In closed form:
/// the `n = min(len, bits - pos)` field bits (none when `pos > msb`), then the sign bit above.
fn bfe(ty: Ty, x: u64, y: u64, z: u64) -> u64 {
    let bits = ty.bits();
    let a = ty.trunc(x);
    let pos = (y & 0xff) as u32;
    let len = (z & 0xff) as u32;
    let msb = bits - 1;
    let ones = |n: u32| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    let sbit = ty.signed() && len > 0 && (a >> (pos + len - 1).min(msb)) & 1 == 1;
    let n = if pos > msb { 0 } else { len.min(bits - pos) };
    let field = if n == 0 { 0 } else { (a >> pos) & ones(n) };
    if sbit {
        field | (ones(bits) & !ones(n))
    } else {
        field
    }
}

pub(in crate::ptx) fn ternary(k: Tern, ty: Ty, x: u64, y: u64, z: u64) -> u64 {
    let bits = ty.bits();
    match k {
        Tern::MadLo if ty.is_float() => fma(ty, x, y, z),
        Tern::MadLo => ty.trunc(ty.int(x).wrapping_mul(ty.int(y)).wrapping_add(ty.int(z)) as u64),
        Tern::MadHi => {
            ty.trunc(((ty.int(x).wrapping_mul(ty.int(y))) >> bits).wrapping_add(ty.int(z)) as u64)
        }
        Tern::MadWide => {
            let wide = match ty {
                Ty::S(b) => Ty::S(b * 2),
                Ty::U(b) => Ty::U(b * 2),
                o => o,
            };
            wide.trunc(ty.int(x).wrapping_mul(ty.int(y)).wrapping_add(wide.int(z)) as u64)
        }
        Tern::Bfe => bfe(ty, x, y, z),
        Tern::Prmt => {
            let src = (x & 0xffff_ffff) | (y & 0xffff_ffff) << 32;
            let mut d = 0u64;
            for i in 0..4 {
                let sel = (z >> (4 * i)) & 0xf;
                let byte = (src >> (8 * (sel & 7))) & 0xff;
                let byte = if sel & 8 != 0 {
                    if byte & 0x80 != 0 { 0xff } else { 0 }
                } else {
                    byte
                };
                d |= byte << (8 * i);
            }
            d
        }
        Tern::ShfL(wrap) | Tern::ShfR(wrap) => {
            let n = if wrap {
                (z & 31) as u32
            } else {
                (z as u32).min(32)
            };
            let v = (x & 0xffff_ffff) | (y & 0xffff_ffff) << 32;
            if matches!(k, Tern::ShfL(_)) {
                ((v << n) >> 32) & 0xffff_ffff
            } else {
                (v >> n) & 0xffff_ffff
            }
        }
    }
}

#[inline]
pub(in crate::ptx) fn compare(cmp: Cmp, ty: Ty, x: u64, y: u64) -> bool {
    if ty.is_float() {
        let (a, b) = (to_f64(ty, x), to_f64(ty, y));
        let nan = a.is_nan() || b.is_nan();
        return match cmp {
            Cmp::Eq => a == b,
            Cmp::Ne => !nan && a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Unordered(k) => {
                nan || match k {
                    0 => a == b,
                    1 => a != b,
                    2 => a < b,
                    3 => a <= b,
                    4 => a > b,
                    _ => a >= b,
                }
            }
            Cmp::Num => !nan,
            Cmp::Nan => nan,
        };
    }
    let (a, b) = (ty.int(x), ty.int(y));
    match cmp {
        Cmp::Eq | Cmp::Unordered(0) => a == b,
        Cmp::Ne | Cmp::Unordered(1) => a != b,
        Cmp::Lt | Cmp::Unordered(2) => a < b,
        Cmp::Le | Cmp::Unordered(3) => a <= b,
        Cmp::Gt | Cmp::Unordered(4) => a > b,
        Cmp::Ge | Cmp::Unordered(_) => a >= b,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

pub(in crate::ptx) fn round(x: f64, rnd: u8) -> f64 {
    match rnd {
        1 => x.trunc(),
        2 => x.floor(),
        3 => x.ceil(),
        _ => x.round_ties_even(),
    }
}

pub(in crate::ptx) fn convert(dt: Ty, st: Ty, rnd: u8, int_round: bool, sat: bool, x: u64) -> u64 {
    let int_range = |t: Ty| -> (f64, f64) {
        let b = t.bits();
        if t.signed() {
            (-(2f64.powi(b as i32 - 1)), 2f64.powi(b as i32 - 1) - 1.0)
        } else {
            (0.0, 2f64.powi(b as i32) - 1.0)
        }
    };
    match (st.is_float(), dt.is_float()) {
        (false, false) => {
            let v = st.int(x);
            let v = if sat {
                let b = dt.bits();
                let (lo, hi) = if dt.signed() {
                    (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
                } else {
                    (0, (1i128 << b) - 1)
                };
                v.clamp(lo, hi)
            } else {
                v
            };
            if dt.signed() && dt.bits() < 64 {
                // Keep the register bits of the destination width, sign-extended.
                sext(v as u64, dt.bits()) as u64 & dt_mask(dt)
            } else {
                dt.trunc(v as u64)
            }
        }
        (true, false) => {
            let f = to_f64(st, x);
            if f.is_nan() {
                return 0;
            }
            let (lo, hi) = int_range(dt);
            let r = round(f, rnd).clamp(lo, hi);
            dt.trunc(r as i128 as u64)
        }
        (false, true) => {
            let v = st.int(x) as f64;
            from_f64(dt, v)
        }
        (true, true) => {
            let mut f = to_f64(st, x);
            if int_round {
                f = round(f, rnd);
            }
            if sat && !f.is_nan() {
                f = f.clamp(0.0, 1.0);
            }
            from_f64(dt, f)
        }
    }
}

pub(in crate::ptx) fn dt_mask(t: Ty) -> u64 {
    if t.bits() >= 64 {
        u64::MAX
    } else {
        (1u64 << t.bits()) - 1
    }
}

pub(in crate::ptx) fn atomic(op: AtomOp, ty: Ty, old: u64, b: u64, c: Option<u64>) -> u64 {
    if ty.is_float() {
        return match op {
            AtomOp::Add => float2(ty, old, b, |x, y| x + y, |x, y| x + y),
            AtomOp::Min => float2(ty, old, b, f32::min, f64::min),
            AtomOp::Max => float2(ty, old, b, f32::max, f64::max),
            AtomOp::Exch => b,
            _ => old,
        };
    }
    let (a, v) = (ty.int(old), ty.int(b));
    let t = |x: i128| ty.trunc(x as u64);
    match op {
        AtomOp::Add => t(a.wrapping_add(v)),
        AtomOp::Min => t(a.min(v)),
        AtomOp::Max => t(a.max(v)),
        AtomOp::And => ty.trunc(old & b),
        AtomOp::Or => ty.trunc(old | b),
        AtomOp::Xor => ty.trunc(old ^ b),
        AtomOp::Exch => ty.trunc(b),
        AtomOp::Cas => {
            if ty.trunc(old) == ty.trunc(b) {
                ty.trunc(c.unwrap_or(old))
            } else {
                old
            }
        }
        AtomOp::Inc => {
            if a >= v {
                0
            } else {
                t(a + 1)
            }
        }
        AtomOp::Dec => {
            if a == 0 || a > v {
                t(v)
            } else {
                t(a - 1)
            }
        }
    }
}

#[cfg(test)]
mod lane_array_tests {
    use super::*;
    use crate::sim::bank::WARP_SIZE;
    use proptest::prelude::*;

    const BINS: [Bin; 13] = [
        Bin::Add,
        Bin::Sub,
        Bin::MulLo,
        Bin::MulHi,
        Bin::MulWide,
        Bin::Min,
        Bin::Max,
        Bin::And,
        Bin::Or,
        Bin::Xor,
        Bin::Shl,
        Bin::Shr,
        Bin::Div,
    ];
    const TYS: [Ty; 8] = [
        Ty::F32,
        Ty::U(32),
        Ty::S(32),
        Ty::B(32),
        Ty::U(64),
        Ty::S(16),
        Ty::B(64),
        Ty::U(8),
    ];

    const UNS: [Un; 17] = [
        Un::Not,
        Un::Cnot,
        Un::Neg,
        Un::Abs,
        Un::Popc,
        Un::Clz,
        Un::Brev,
        Un::Ex2,
        Un::Lg2,
        Un::Rcp,
        Un::Sqrt,
        Un::Rsqrt,
        Un::Sin,
        Un::Cos,
        Un::Tanh,
        Un::CvtaFromShared,
        Un::CvtaToShared,
    ];
    const UN_TYS: [Ty; 8] = [
        Ty::F32,
        Ty::F64,
        Ty::F16,
        Ty::U(32),
        Ty::S(32),
        Ty::B(64),
        Ty::S(16),
        Ty::U(64),
    ];
    const CMPS: [Cmp; 15] = [
        Cmp::Eq,
        Cmp::Ne,
        Cmp::Lt,
        Cmp::Le,
        Cmp::Gt,
        Cmp::Ge,
        Cmp::Unordered(0),
        Cmp::Unordered(1),
        Cmp::Unordered(2),
        Cmp::Unordered(3),
        Cmp::Unordered(4),
        Cmp::Unordered(5),
        Cmp::Num,
        Cmp::Nan,
        Cmp::Eq,
    ];
    const CVTS: [(Ty, Ty); 12] = [
        (Ty::F16, Ty::F32),
        (Ty::F32, Ty::F16),
        (Ty::U(64), Ty::U(32)),
        (Ty::S(64), Ty::S(32)),
        (Ty::Bf16, Ty::F32),
        (Ty::F32, Ty::S(32)),
        (Ty::S(32), Ty::F32),
        (Ty::U(32), Ty::U(64)),
        (Ty::S(8), Ty::S(32)),
        (Ty::F32, Ty::F32),
        (Ty::F64, Ty::F32),
        (Ty::U(16), Ty::F64),
    ];

    /// f32 bit patterns at the edges: signed zeros, infinities, NaNs, subnormals, ±1.
    fn special_f32() -> impl Strategy<Value = u64> {
        prop_oneof![
            Just(0u64),
            Just(0x8000_0000),
            Just(0x7f80_0000),
            Just(0xff80_0000),
            Just(0x7fc0_0000),
            Just(0xffc0_0001),
            Just(0x0000_0001),
            Just(0x807f_ffff),
            Just(0x3f80_0000),
            Just(0xbf80_0000),
            Just(0x7f80_0001),
            Just(0xff80_2001),
            Just(0x477f_f000),
            Just(0x3880_1000),
        ]
    }

    /// f16 bit patterns at the edges (in the low 16 bits).
    fn special_f16() -> impl Strategy<Value = u64> {
        prop_oneof![
            Just(0x7c00u64),
            Just(0xfc00),
            Just(0x7e01),
            Just(0x0001),
            Just(0x8000),
            Just(0x3c00)
        ]
    }

    /// Calls `f` for each lane of `mask`, lowest first (the per-lane path's order).
    fn per_lane(mask: u32, mut f: impl FnMut(usize)) {
        for l in 0..WARP_SIZE {
            if mask >> l & 1 == 1 {
                f(l);
            }
        }
    }

    proptest! {
        /// The whole-warp path of a two-operand instruction writes what `binary` computes lane
        /// by lane, leaves the lanes outside the mask alone, and reports a change exactly when
        /// an active lane's value changed (`d` may also be a source).
        #[test]
        fn bin_lanes_equals_binary_per_lane(
            x in proptest::collection::vec(any::<u64>(), 32),
            y in proptest::collection::vec(prop_oneof![any::<u64>(), 0u64..70], 32),
            old in proptest::collection::vec(any::<u64>(), 32),
            mask in prop_oneof![Just(u32::MAX), any::<u32>()],
            k in 0usize..BINS.len(),
            t in 0usize..TYS.len(),
            alias in any::<bool>(),
            imm in any::<bool>(),
        ) {
            let (k, ty) = (BINS[k], TYS[t]);
            let mut regs = vec![0u64; 3 * WARP_SIZE];
            regs[..32].copy_from_slice(&x);
            regs[32..64].copy_from_slice(&y);
            regs[64..].copy_from_slice(&old);
            let d = if alias { 0 } else { 2 };
            let b = if imm { Src::Imm(y[0]) } else { Src::Reg(1) };
            let before = regs.clone();
            let Some(changed) = bin_lanes(&mut regs, mask, k, ty, d, Src::Reg(0), b) else {
                return Ok(());
            };
            let mut want_changed = false;
            for l in 0..WARP_SIZE {
                let slot = d as usize * WARP_SIZE + l;
                let yv = if imm { y[0] } else { y[l] };
                let want = if mask >> l & 1 == 1 { binary(k, ty, x[l], yv) } else { before[slot] };
                want_changed |= want != before[slot];
                prop_assert_eq!(regs[slot], want, "{:?} {:?} lane {}", k, ty, l);
            }
            prop_assert_eq!(changed, want_changed);
        }

        /// The whole-warp unary operations equal `unary` lane by lane (f32 specials such as
        /// NaN, infinities and subnormals among the inputs), with partial masks and `d` = `a`.
        #[test]
        fn un_lanes_equals_unary_per_lane(
            x in proptest::collection::vec(prop_oneof![any::<u64>(), special_f32()], 32),
            old in proptest::collection::vec(any::<u64>(), 32),
            mask in prop_oneof![Just(u32::MAX), Just(0u32), any::<u32>()],
            k in 0usize..UNS.len(),
            t in 0usize..UN_TYS.len(),
            alias in any::<bool>(),
            imm in any::<bool>(),
        ) {
            let (k, ty) = (UNS[k], UN_TYS[t]);
            let mut regs = [x.clone(), old].concat();
            let d = if alias { 0 } else { 1 };
            let a = if imm { Src::Imm(x[0]) } else { Src::Reg(0) };
            let before = regs.clone();
            let Some(changed) = un_lanes(&mut regs, mask, k, ty, d, a) else {
                return Ok(());
            };
            let mut want = before.clone();
            let mut want_changed = false;
            per_lane(mask, |l| {
                let v = unary(k, ty, if imm { x[0] } else { x[l] });
                let slot = d as usize * WARP_SIZE + l;
                want_changed |= want[slot] != v;
                want[slot] = v;
            });
            prop_assert_eq!(&regs, &want, "{:?} {:?}", k, ty);
            prop_assert_eq!(changed, want_changed);
        }

        /// The whole-warp `setp` equals the per-lane rule (`compare`, then the combining
        /// predicate, `d` written before `d2`), for every comparison, with and without `d2`
        /// and a combining predicate, destinations aliasing the sources or each other.
        #[test]
        fn setp_lanes_equals_per_lane(
            x in proptest::collection::vec(prop_oneof![any::<u64>(), special_f32(), 0u64..4], 32),
            y in proptest::collection::vec(prop_oneof![any::<u64>(), special_f32(), 0u64..4], 32),
            c in proptest::collection::vec(0u64..4, 32),
            old in proptest::collection::vec(0u64..2, 64),
            mask in prop_oneof![Just(u32::MAX), Just(0u32), any::<u32>()],
            cmp in 0usize..CMPS.len(),
            t in 0usize..TYS.len(),
            comb in 0usize..4,
            neg in any::<bool>(),
            dsts in 0usize..5,
        ) {
            let (cmp, ty) = (CMPS[cmp], TYS[t]);
            // Registers: 0 a, 1 b, 2 combining predicate, 3 and 4 destinations.
            let mut regs = [x, y, c, old].concat();
            let (d, d2) = [(3, None), (3, Some(4)), (0, Some(2)), (2, Some(2)), (4, Some(3))][dsts];
            let comb = [None, Some(BoolOp::And), Some(BoolOp::Or), Some(BoolOp::Xor)][comb]
                .map(|op| (op, Src::Reg(2), neg));
            let s = SetpSrcs { a: Src::Reg(0), b: Src::Reg(1), comb };
            let before = regs.clone();
            let changed = setp_lanes(&mut regs, mask, cmp, ty, (d, d2), s);
            let mut want = before.clone();
            let mut want_changed = false;
            per_lane(mask, |l| {
                let at = |r: u32| before[r as usize * WARP_SIZE + l];
                let r = compare(cmp, ty, at(0), at(1));
                let (p, q) = match comb {
                    None => (r, !r),
                    Some((op, _, neg)) => {
                        let c = (at(2) & 1 != 0) != neg;
                        let f = |x: bool| match op {
                            BoolOp::And => x && c,
                            BoolOp::Or => x || c,
                            BoolOp::Xor => x != c,
                        };
                        (f(r), f(!r))
                    }
                };
                for (reg, v) in std::iter::once((d, p)).chain(d2.map(|d2| (d2, q))) {
                    let slot = reg as usize * WARP_SIZE + l;
                    want_changed |= want[slot] != v as u64;
                    want[slot] = v as u64;
                }
            });
            prop_assert_eq!(&regs, &want, "{:?} {:?}", cmp, ty);
            prop_assert_eq!(changed, want_changed);
        }

        /// The whole-warp `cvt` equals `convert` lane by lane for the common pairs and others
        /// (rounding modes, `.sat`, integer rounding), and the packing `cvt` equals its
        /// per-lane rule (`a` in the upper half, `b` in the lower, `.relu`).
        #[test]
        fn cvt_lanes_equal_per_lane(
            x in proptest::collection::vec(prop_oneof![any::<u64>(), special_f32(), special_f16()], 32),
            y in proptest::collection::vec(prop_oneof![any::<u64>(), special_f32()], 32),
            old in proptest::collection::vec(any::<u64>(), 32),
            mask in prop_oneof![Just(u32::MAX), Just(0u32), any::<u32>()],
            pair in 0usize..CVTS.len(),
            rnd in 0u8..4,
            ir in any::<bool>(),
            sat in any::<bool>(),
            relu in any::<bool>(),
            f16 in any::<bool>(),
            alias in any::<bool>(),
        ) {
            let (dt, st) = CVTS[pair];
            let mut regs = [x.clone(), y.clone(), old].concat();
            let d = if alias { 0 } else { 2 };
            let before = regs.clone();
            let changed = cvt_lanes(&mut regs, mask, (dt, st), (rnd, ir, sat), d, Src::Reg(0));
            let mut want = before.clone();
            let mut want_changed = false;
            per_lane(mask, |l| {
                let v = convert(dt, st, rnd, ir, sat, x[l]);
                let slot = d as usize * WARP_SIZE + l;
                want_changed |= want[slot] != v;
                want[slot] = v;
            });
            prop_assert_eq!(&regs, &want, "{:?} <- {:?}", dt, st);
            prop_assert_eq!(changed, want_changed);

            let mut regs = before.clone();
            let changed = cvt_pack_lanes(&mut regs, mask, f16, relu, d, [Src::Reg(0), Src::Reg(1)]);
            let e = if f16 { Ty::F16 } else { Ty::Bf16 };
            let half = |x: u64| {
                let mut v = f32::from_bits(x as u32) as f64;
                if relu && v <= 0.0 {
                    v = 0.0;
                }
                from_f64(e, v)
            };
            let mut want = before.clone();
            let mut want_changed = false;
            per_lane(mask, |l| {
                let v = half(y[l]) | half(x[l]) << 16;
                let slot = d as usize * WARP_SIZE + l;
                want_changed |= want[slot] != v;
                want[slot] = v;
            });
            prop_assert_eq!(&regs, &want);
            prop_assert_eq!(changed, want_changed);
        }

        /// The `shfl.sync` results written as arrays equal the per-lane writes (`d` then `p`
        /// in each lane), `p` absent or present, `d` and `p` the same register or not.
        #[test]
        fn write_shfl_equals_per_lane(
            out in proptest::collection::vec(any::<u64>(), 32),
            ok in proptest::collection::vec(any::<bool>(), 32),
            old in proptest::collection::vec(0u64..3, 64),
            mask in prop_oneof![Just(u32::MAX), Just(0u32), any::<u32>()],
            dp in 0usize..3,
        ) {
            let (d, p) = [(0, None), (0, Some(1)), (1, Some(1))][dp];
            let out: [u64; 32] = out.try_into().unwrap_or_else(|_| unreachable!());
            let ok: [bool; 32] = ok.try_into().unwrap_or_else(|_| unreachable!());
            let mut regs = old.clone();
            let changed = write_shfl(&mut regs, mask, (d, p), &out, &ok);
            let mut want = old.clone();
            let mut want_changed = false;
            per_lane(mask, |l| {
                for (reg, v) in std::iter::once((d, out[l] & 0xffff_ffff)).chain(p.map(|p| (p, ok[l] as u64))) {
                    let slot = reg as usize * WARP_SIZE + l;
                    want_changed |= want[slot] != v;
                    want[slot] = v;
                }
            });
            prop_assert_eq!(&regs, &want);
            prop_assert_eq!(changed, want_changed);
        }

        /// The whole-warp `fma.rn.f32` and integer `mad.lo` equal `ternary` lane by lane.
        #[test]
        fn tern_lanes_equals_ternary_per_lane(
            v in proptest::collection::vec(any::<u32>(), 96),
            mask in prop_oneof![Just(u32::MAX), any::<u32>()],
            t in 0usize..TYS.len(),
        ) {
            let ty = TYS[t];
            let mut regs: Vec<u64> = v.iter().map(|&x| u64::from(x) | if ty.bits() == 64 { u64::from(x) << 32 } else { 0 }).collect();
            regs.extend([7u64; 32]);
            let before = regs.clone();
            let s = [Src::Reg(0), Src::Reg(1), Src::Reg(2)];
            tern_lanes(&mut regs, mask, Tern::MadLo, ty, 3, s);
            for l in 0..WARP_SIZE {
                let want = if mask >> l & 1 == 1 {
                    ternary(Tern::MadLo, ty, before[l], before[32 + l], before[64 + l])
                } else {
                    7
                };
                prop_assert_eq!(regs[96 + l], want, "{:?} lane {}", ty, l);
            }
        }

        /// `bfe` in closed form equals the PTX ISA's definition bit by bit (every position and
        /// length byte, every integer type).
        #[test]
        fn bfe_equals_its_definition_bit_by_bit(
            x in any::<u64>(),
            pos in prop_oneof![0u64..70, any::<u64>()],
            len in prop_oneof![0u64..70, any::<u64>()],
            t in 1usize..TYS.len(),
        ) {
            let ty = TYS[t];
            let bits = ty.bits();
            let a = ty.trunc(x);
            let (p, n) = ((pos & 0xff) as u32, (len & 0xff) as u32);
            let msb = bits - 1;
            let sbit = if ty.signed() && n > 0 { (a >> (p + n - 1).min(msb)) & 1 } else { 0 };
            let mut want = 0u64;
            for i in 0..bits {
                let bit = if i < n && p + i <= msb { (a >> (p + i)) & 1 } else { sbit };
                want |= bit << i;
            }
            prop_assert_eq!(bfe(ty, x, pos, len), want, "{:?} pos {} len {}", ty, p, n);
        }

        /// Every integer ternary form over whole lane arrays equals `ternary` lane by lane, on
        /// registers with arbitrary upper bits (`mad.wide`'s 64-bit addend among them), and
        /// the changed flag is whether any written lane changed.
        #[test]
        fn every_integer_tern_lanes_equals_ternary_per_lane(
            v in proptest::collection::vec(any::<u64>(), 128),
            mask in prop_oneof![Just(u32::MAX), any::<u32>()],
            t in 1usize..TYS.len(),
            kind in 0usize..8,
        ) {
            let k = [
                Tern::MadLo, Tern::MadHi, Tern::MadWide, Tern::Bfe, Tern::Prmt,
                Tern::ShfL(true), Tern::ShfR(false), Tern::ShfL(false),
            ][kind];
            let ty = TYS[t];
            if ty.is_float() {
                return Ok(());
            }
            let mut regs = v.clone();
            let s = [Src::Reg(0), Src::Reg(1), Src::Reg(2)];
            let changed = tern_lanes(&mut regs, mask, k, ty, 3, s);
            let mut want_changed = false;
            for l in 0..WARP_SIZE {
                let want = if mask >> l & 1 == 1 {
                    let w = ternary(k, ty, v[l], v[32 + l], v[64 + l]);
                    want_changed |= w != v[96 + l];
                    w
                } else {
                    v[96 + l]
                };
                prop_assert_eq!(regs[96 + l], want, "{:?} {:?} lane {}", k, ty, l);
            }
            prop_assert_eq!(changed, want_changed);
        }
    }
}
