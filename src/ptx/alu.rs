//! The arithmetic of the CTA engine: unary, binary and ternary integer and float operations,
//! comparisons, conversions (`cvt`) and the atomic operations' combine step, each a pure
//! function of register values (PTX ISA, "Integer Arithmetic", "Floating-Point", "Comparison
//! and Selection", "Data Movement and Conversion: cvt", "atom").

use super::decode::{AtomOp, Bin, Cmp, LOCAL_WINDOW, SHARED_WINDOW, Tern, Un};
use super::types::{Ty, float1, float2, fma, from_f64, sext, to_f64};

/// A loaded value of `ty` in a register: signed types sign-extended.
pub(super) fn extend(ty: Ty, v: u64) -> u64 {
    if ty.signed() {
        sext(v, ty.bits()) as u64
    } else {
        ty.trunc(v)
    }
}

pub(super) fn unary(k: Un, ty: Ty, x: u64) -> u64 {
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

pub(super) fn binary(k: Bin, ty: Ty, x: u64, y: u64) -> u64 {
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

pub(super) fn ternary(k: Tern, ty: Ty, x: u64, y: u64, z: u64) -> u64 {
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
        Tern::Bfe => {
            let a = ty.trunc(x);
            let pos = (y & 0xff) as u32;
            let len = (z & 0xff) as u32;
            let msb = bits - 1;
            let sbit = if ty.signed() && len > 0 {
                (a >> (pos + len - 1).min(msb)) & 1
            } else {
                0
            };
            let mut d = 0u64;
            for i in 0..bits {
                let bit = if i < len && pos + i <= msb {
                    (a >> (pos + i)) & 1
                } else {
                    sbit
                };
                d |= bit << i;
            }
            d
        }
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

pub(super) fn compare(cmp: Cmp, ty: Ty, x: u64, y: u64) -> bool {
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

pub(super) fn round(x: f64, rnd: u8) -> f64 {
    match rnd {
        1 => x.trunc(),
        2 => x.floor(),
        3 => x.ceil(),
        _ => x.round_ties_even(),
    }
}

pub(super) fn convert(dt: Ty, st: Ty, rnd: u8, int_round: bool, sat: bool, x: u64) -> u64 {
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

pub(super) fn dt_mask(t: Ty) -> u64 {
    if t.bits() >= 64 {
        u64::MAX
    } else {
        (1u64 << t.bits()) - 1
    }
}

pub(super) fn atomic(op: AtomOp, ty: Ty, old: u64, b: u64, c: Option<u64>) -> u64 {
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
