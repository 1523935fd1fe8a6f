//! PTX scalar types (PTX ISA §5.2.2 "Fundamental Types") and the per-lane arithmetic on them.
//!
//! Every register holds raw bits in a `u64`; an instruction's type says how to read them. Floats
//! are IEEE (f16 and bf16 through the `half` crate); integer results wrap at the type's width.

use half::{bf16, f16};

/// A PTX scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// `.b8 .b16 .b32 .b64`: untyped bits.
    B(u8),
    /// `.u8 .u16 .u32 .u64`.
    U(u8),
    /// `.s8 .s16 .s32 .s64`.
    S(u8),
    /// `.f16`.
    F16,
    /// `.bf16`.
    Bf16,
    /// `.f32`.
    F32,
    /// `.f64`.
    F64,
    /// `.f16x2`: two f16 in one 32-bit register, element 0 in the low half.
    F16x2,
    /// `.bf16x2`.
    Bf16x2,
    /// `.pred`.
    Pred,
}

impl Ty {
    /// From a type suffix without the dot (`u32`, `f16x2`, …).
    pub fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "b8" => Ty::B(8),
            "b16" => Ty::B(16),
            "b32" => Ty::B(32),
            "b64" => Ty::B(64),
            "u8" => Ty::U(8),
            "u16" => Ty::U(16),
            "u32" => Ty::U(32),
            "u64" => Ty::U(64),
            "s8" => Ty::S(8),
            "s16" => Ty::S(16),
            "s32" => Ty::S(32),
            "s64" => Ty::S(64),
            "f16" => Ty::F16,
            "bf16" => Ty::Bf16,
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "f16x2" => Ty::F16x2,
            "bf16x2" => Ty::Bf16x2,
            "pred" => Ty::Pred,
            _ => return None,
        })
    }

    /// The type suffix as PTX writes it, without the dot (`b32`, `f16x2`, `pred`).
    pub fn name(self) -> &'static str {
        match self {
            Ty::B(8) => "b8",
            Ty::B(16) => "b16",
            Ty::B(32) => "b32",
            Ty::B(_) => "b64",
            Ty::U(8) => "u8",
            Ty::U(16) => "u16",
            Ty::U(32) => "u32",
            Ty::U(_) => "u64",
            Ty::S(8) => "s8",
            Ty::S(16) => "s16",
            Ty::S(32) => "s32",
            Ty::S(_) => "s64",
            Ty::F16 => "f16",
            Ty::Bf16 => "bf16",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::F16x2 => "f16x2",
            Ty::Bf16x2 => "bf16x2",
            Ty::Pred => "pred",
        }
    }

    /// Width in bits.
    pub fn bits(self) -> u32 {
        match self {
            Ty::B(b) | Ty::U(b) | Ty::S(b) => b as u32,
            Ty::F16 | Ty::Bf16 => 16,
            Ty::F32 | Ty::F16x2 | Ty::Bf16x2 => 32,
            Ty::F64 => 64,
            Ty::Pred => 1,
        }
    }

    /// Width in bytes (a predicate counts 1).
    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// Signed integer.
    pub fn signed(self) -> bool {
        matches!(self, Ty::S(_))
    }

    /// Any floating-point type, packed pairs included.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Ty::F16 | Ty::Bf16 | Ty::F32 | Ty::F64 | Ty::F16x2 | Ty::Bf16x2
        )
    }

    /// Keeps the type's low bits of `v`.
    #[inline]
    pub fn trunc(self, v: u64) -> u64 {
        let b = self.bits();
        if b >= 64 { v } else { v & ((1u64 << b) - 1) }
    }

    /// `v` read as this integer type, sign- or zero-extended to i128.
    #[inline]
    pub fn int(self, v: u64) -> i128 {
        let b = self.bits();
        if self.signed() {
            sext(v, b) as i128
        } else {
            self.trunc(v) as i128
        }
    }
}

/// Sign-extends the low `bits` of `v`.
#[inline]
pub fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
}

/// A float value of a scalar float type as f64 (f16/bf16/f32 exactly).
#[inline]
pub fn to_f64(ty: Ty, v: u64) -> f64 {
    match ty {
        Ty::F16 => f16::from_bits(v as u16).to_f64(),
        Ty::Bf16 => bf16::from_bits(v as u16).to_f64(),
        Ty::F32 => f32::from_bits(v as u32) as f64,
        _ => f64::from_bits(v),
    }
}

/// f64 → bits of a scalar float type, rounded to nearest even.
#[inline]
pub fn from_f64(ty: Ty, x: f64) -> u64 {
    match ty {
        Ty::F16 => f16::from_f64(x).to_bits() as u64,
        Ty::Bf16 => bf16::from_f64(x).to_bits() as u64,
        Ty::F32 => (x as f32).to_bits() as u64,
        _ => x.to_bits(),
    }
}

/// Applies `f` to a float operation of `ty`: f32 in f32 arithmetic (correctly rounded, as PTX's
/// `.rn`), f64 in f64, f16/bf16 computed in f64 and rounded once, packed pairs per half.
#[inline]
pub fn float2(
    ty: Ty,
    a: u64,
    b: u64,
    f32op: fn(f32, f32) -> f32,
    f64op: fn(f64, f64) -> f64,
) -> u64 {
    match ty {
        Ty::F32 => f32op(f32::from_bits(a as u32), f32::from_bits(b as u32)).to_bits() as u64,
        Ty::F64 => f64op(f64::from_bits(a), f64::from_bits(b)).to_bits(),
        Ty::F16 | Ty::Bf16 => from_f64(ty, f64op(to_f64(ty, a), to_f64(ty, b))),
        Ty::F16x2 | Ty::Bf16x2 => {
            let e = if ty == Ty::F16x2 { Ty::F16 } else { Ty::Bf16 };
            let lo = float2(e, a & 0xffff, b & 0xffff, f32op, f64op);
            let hi = float2(e, (a >> 16) & 0xffff, (b >> 16) & 0xffff, f32op, f64op);
            lo | hi << 16
        }
        _ => 0,
    }
}

/// As [`float2`] for one operand.
#[inline]
pub fn float1(ty: Ty, a: u64, f32op: fn(f32) -> f32, f64op: fn(f64) -> f64) -> u64 {
    match ty {
        Ty::F32 => f32op(f32::from_bits(a as u32)).to_bits() as u64,
        Ty::F64 => f64op(f64::from_bits(a)).to_bits(),
        Ty::F16 | Ty::Bf16 => from_f64(ty, f64op(to_f64(ty, a))),
        Ty::F16x2 | Ty::Bf16x2 => {
            let e = if ty == Ty::F16x2 { Ty::F16 } else { Ty::Bf16 };
            float1(e, a & 0xffff, f32op, f64op) | float1(e, (a >> 16) & 0xffff, f32op, f64op) << 16
        }
        _ => 0,
    }
}

/// Fused multiply-add `a*b + c` rounded once (`fma.rn`, `mad.rn` on floats).
#[inline]
pub fn fma(ty: Ty, a: u64, b: u64, c: u64) -> u64 {
    match ty {
        Ty::F32 => f32::from_bits(a as u32)
            .mul_add(f32::from_bits(b as u32), f32::from_bits(c as u32))
            .to_bits() as u64,
        Ty::F64 => f64::from_bits(a)
            .mul_add(f64::from_bits(b), f64::from_bits(c))
            .to_bits(),
        Ty::F16 | Ty::Bf16 => from_f64(ty, to_f64(ty, a).mul_add(to_f64(ty, b), to_f64(ty, c))),
        Ty::F16x2 | Ty::Bf16x2 => {
            let e = if ty == Ty::F16x2 { Ty::F16 } else { Ty::Bf16 };
            fma(e, a & 0xffff, b & 0xffff, c & 0xffff)
                | fma(
                    e,
                    (a >> 16) & 0xffff,
                    (b >> 16) & 0xffff,
                    (c >> 16) & 0xffff,
                ) << 16
        }
        _ => 0,
    }
}

/// The value of a PTX integer literal's whole text (PTX ISA 4.5.1: decimal, `0x` hex, `0b`
/// binary, a leading `0` octal, an optional `-` and `U` suffix), or `None`. The parser's
/// literals and the `.loc` line table read numbers through it.
pub(crate) fn int_value(t: &str) -> Option<i128> {
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let t = t.strip_suffix(['U', 'u']).unwrap_or(t);
    if t.is_empty() || !t.bytes().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        u64::from_str_radix(b, 2)
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8)
    } else {
        t.parse::<u64>()
    }
    .ok()? as i128;
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PTX ISA §5.2.2 "Fundamental Types": every type suffix, its width in bits, signedness and
    /// whether it is a float (predicates: 1 bit, counted as 1 byte here).
    #[test]
    fn every_fundamental_type() {
        let table = [
            ("b8", Ty::B(8), 8u32, false, false),
            ("b16", Ty::B(16), 16, false, false),
            ("b32", Ty::B(32), 32, false, false),
            ("b64", Ty::B(64), 64, false, false),
            ("u8", Ty::U(8), 8, false, false),
            ("u16", Ty::U(16), 16, false, false),
            ("u32", Ty::U(32), 32, false, false),
            ("u64", Ty::U(64), 64, false, false),
            ("s8", Ty::S(8), 8, true, false),
            ("s16", Ty::S(16), 16, true, false),
            ("s32", Ty::S(32), 32, true, false),
            ("s64", Ty::S(64), 64, true, false),
            ("f16", Ty::F16, 16, false, true),
            ("bf16", Ty::Bf16, 16, false, true),
            ("f32", Ty::F32, 32, false, true),
            ("f64", Ty::F64, 64, false, true),
            ("f16x2", Ty::F16x2, 32, false, true),
            ("bf16x2", Ty::Bf16x2, 32, false, true),
            ("pred", Ty::Pred, 1, false, false),
        ];
        for (text, ty, bits, signed, float) in table {
            assert_eq!(Ty::parse(text), Some(ty), "{text}");
            assert_eq!(ty.name(), text);
            assert_eq!((ty.bits(), ty.bytes()), (bits, bits.div_ceil(8)), "{text}");
            assert_eq!((ty.signed(), ty.is_float()), (signed, float), "{text}");
        }
        assert_eq!(Ty::parse("f8"), None);
        assert_eq!(Ty::U(8).trunc(0x1ff), 0xff);
        assert_eq!(Ty::B(64).trunc(u64::MAX), u64::MAX);
        assert_eq!(Ty::U(16).int(0x1_8000), 0x8000);
    }

    /// 2·3 + 1 = 7 in every float type, one rounding (IEEE bit patterns: f16 7.0 = 0x4700,
    /// bf16 7.0 = 0x40e0, f32 0x40e0_0000); 1.5 + 2.25 = 3.75 (f32 0x4070_0000, bf16 0x4070);
    /// negation and doubling per half of a packed pair (bf16 1.0 = 0x3f80, −1.0 = 0xbf80).
    #[test]
    fn float_arithmetic_in_every_type() {
        let (f16_, bf16_) = (
            |x: f64| from_f64(Ty::F16, x),
            |x: f64| from_f64(Ty::Bf16, x),
        );
        assert_eq!((f16_(7.0), bf16_(7.0)), (0x4700, 0x40e0));
        assert_eq!(from_f64(Ty::F32, 7.0), 0x40e0_0000);
        assert_eq!(to_f64(Ty::Bf16, 0x3f80), 1.0);
        assert_eq!(to_f64(Ty::F32, 0x4070_0000), 3.75);
        for ty in [Ty::F16, Ty::Bf16, Ty::F32, Ty::F64] {
            let v = |x: f64| from_f64(ty, x);
            assert_eq!(fma(ty, v(2.0), v(3.0), v(1.0)), v(7.0), "{ty:?}");
            let sum = float2(ty, v(1.5), v(2.25), |a, b| a + b, |a, b| a + b);
            assert_eq!(sum, v(3.75), "{ty:?}");
            assert_eq!(float1(ty, v(1.5), |a| -a, |a| -a), v(-1.5), "{ty:?}");
        }
        let pair = |lo: u64, hi: u64| lo | hi << 16;
        let (two, three, one) = (f16_(2.0), f16_(3.0), f16_(1.0));
        assert_eq!(
            fma(
                Ty::F16x2,
                pair(two, three),
                pair(three, two),
                pair(one, two)
            ),
            pair(f16_(7.0), f16_(8.0))
        );
        assert_eq!(
            float1(Ty::Bf16x2, pair(0x3f80, 0xbf80), |a| -a, |a| -a),
            pair(0xbf80, 0x3f80)
        );
        // Doubling tells the halves' format apart: bf16 1.0 → 2.0 = 0x4000 (0x3f80 read as f16
        // is 1.875, whose double is f16 0x4380); f16 1.0 = 0x3c00 → 0x4000.
        let twice = |ty| float1(ty, pair(0x3f80, 0xbf80), |a| 2.0 * a, |a| 2.0 * a);
        assert_eq!(twice(Ty::Bf16x2), pair(0x4000, 0xc000));
        assert_eq!(twice(Ty::F16x2), pair(0x4380, 0xc380));
        assert_eq!(float2(Ty::U(32), 1, 2, |a, b| a + b, |a, b| a + b), 0);
    }

    #[test]
    fn integer_views() {
        assert_eq!(Ty::S(32).int(0xffff_ffff), -1);
        assert_eq!(Ty::U(32).int(0x1_ffff_ffff), 0xffff_ffff);
        assert_eq!(Ty::S(8).int(0x80), -128);
        assert_eq!(sext(0x8000, 16), -32768);
    }

    #[test]
    fn packed_halves_are_independent() {
        // f16 1.0 = 0x3c00, 2.0 = 0x4000: (1, 2) + (2, 1) = (3, 3) = 0x4200 each.
        let a = 0x3c00 | 0x4000 << 16;
        let b = 0x4000 | 0x3c00 << 16;
        assert_eq!(
            float2(Ty::F16x2, a, b, |x, y| x + y, |x, y| x + y),
            0x4200 | 0x4200 << 16
        );
    }
}
