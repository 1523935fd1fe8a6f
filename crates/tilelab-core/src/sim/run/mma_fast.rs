//! The tensor-core arithmetic on flat arrays: the same sums as the reference arms of
//! [`crate::sim::exec`] (`mma_d` for `mma.sync`, the f32/f16 accumulators of `warpgroup_on` for
//! `wgmma.mma_async`), in the same order, so every result is bit-identical, only laid out so
//! that the compiler vectorises across output columns (issue #31).
//!
//! Why the results cannot differ: the reference computes each D element as a left fold in f64,
//! `c + a[i][0]·b[0][j] + a[i][1]·b[1][j] + ...` (k ascending, every product and every sum
//! rounded once, no fused multiply-add: Rust never contracts `a * b + c`). Here the same fold
//! runs for eight (or four) columns at once: lane `j` of a vector holds column `j`'s partial
//! sum, and step `k` adds `a[i][k]·b[k][j]` to it. Each lane sees exactly the reference's
//! operations on exactly its operands, so its rounding is the same. The one freedom IEEE
//! leaves, which NaN payload a NaN result carries, is the compiler's in both versions; tests
//! compare NaNs as NaNs.
//!
//! Elements come from the registers by the same fragment tables ([`MmaKind::fragment`]) and
//! element decoders ([`crate::sim::mma::MmaDtype::decode`]); only the integer forms (s8/u8 into
//! s32) keep the reference path.

use crate::sim::mma::{MmaAcc, MmaDtype, MmaKind, Operand, RawRegs};
use half::f16;

/// Where each lane's elements sit in the flat matrices of an m16n8kK `mma.sync`: element `e` of
/// `lane` (register `e / per_reg`, position `e % per_reg`) is `a[idx]` with `idx = i * K + k`, `b[k][j]` as `k * 8 + j`, C/D `c[i][j]` as `i * 8 + j` ([`MmaKind::fragment`]'s table,
/// built once per K).
struct Frags {
    a: [[u16; 16]; 32],
    b: [[u16; 8]; 32],
    c: [[u16; 4]; 32],
}

fn frags(k: u32) -> Option<&'static Frags> {
    use crate::sim::mma::MmaShape;
    use std::sync::OnceLock;
    static T: [OnceLock<Frags>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let (slot, shape) = match k {
        8 => (0, MmaShape::M16N8K8),
        16 => (1, MmaShape::M16N8K16),
        32 => (2, MmaShape::M16N8K32),
        _ => return None,
    };
    Some(T[slot].get_or_init(|| {
        let mut f = Frags {
            a: [[0; 16]; 32],
            b: [[0; 8]; 32],
            c: [[0; 4]; 32],
        };
        for lane in 0..32u32 {
            let l = lane as usize;
            for e in 0..shape.elems_per_lane(Operand::A) {
                let (i, j) = crate::sim::mma::element(shape, Operand::A, lane, e);
                f.a[l][e as usize] = (i * k + j) as u16;
            }
            for e in 0..shape.elems_per_lane(Operand::B) {
                let (i, j) = crate::sim::mma::element(shape, Operand::B, lane, e);
                f.b[l][e as usize] = (i * 8 + j) as u16;
            }
            for e in 0..shape.elems_per_lane(Operand::C) {
                let (i, j) = crate::sim::mma::element(shape, Operand::C, lane, e);
                f.c[l][e as usize] = (i * 8 + j) as u16;
            }
        }
        f
    }))
}

/// D of one `mma.sync` of `kind` (M = 16, N = 8) on raw registers, every lane's registers in the
/// C/D fragment layout (f32 bits, or two f16 per register): the reference `mma_d`'s values.
/// `None` for a form this path does not take (integer accumulators, a shape other than
/// m16n8kK with K of 8, 16 or 32): the caller computes it the reference way.
pub(crate) fn mma_d(kind: MmaKind, regs: &RawRegs) -> Option<[[u32; 4]; 32]> {
    mma_d_lanes(kind, &regs.a, &regs.b, &regs.c)
}

/// [`mma_d`] on the registers as separate per-lane arrays (B with `NB` >= 2 words per lane, of
/// which the first 2 are read).
pub(crate) fn mma_d_lanes<const NB: usize>(
    kind: MmaKind,
    ra: &[[u32; 4]; 32],
    rb: &[[u32; NB]; 32],
    rc: &[[u32; 4]; 32],
) -> Option<[[u32; 4]; 32]> {
    let (m, n, k) = kind.shape.mnk();
    // One input type for A and B (mixed FP8 and mixed 8-bit integer forms take the reference).
    if (m, n) != (16, 8) || kind.acc == MmaAcc::S32 || kind.btype != kind.dtype {
        return None;
    }
    let wide = match kind.dtype {
        MmaDtype::F16 | MmaDtype::Bf16 => true,
        MmaDtype::E4m3 | MmaDtype::E5m2 => false,
        // tf32 (32-bit elements, its low 13 mantissa bits ignored) and the integer forms.
        MmaDtype::Tf32 | MmaDtype::S8 | MmaDtype::U8 => return None,
    };
    let f = frags(k)?;
    // Arrays sized to K (zeroing them for the largest K cost more than the sums at K = 16).
    Some(match k as usize {
        8 => fast_k::<8, 128, 64, NB>(kind, f, wide, (ra, rb, rc)),
        16 => fast_k::<16, 256, 128, NB>(kind, f, wide, (ra, rb, rc)),
        32 => fast_k::<32, 512, 256, NB>(kind, f, wide, (ra, rb, rc)),
        _ => return None,
    })
}

/// `N` 32-bit registers of each of the 32 lanes.
type LaneWords<const N: usize> = [[u32; N]; 32];

/// The fast D for one K: `AK` = 16·K and `BK` = K·8 elements (stable Rust has no `16 * K` in
/// an array length).
fn fast_k<const K: usize, const AK: usize, const BK: usize, const NB: usize>(
    kind: MmaKind,
    f: &Frags,
    wide: bool,
    (ra, rb, rc): (&LaneWords<4>, &LaneWords<NB>, &LaneWords<4>),
) -> [[u32; 4]; 32] {
    debug_assert!(AK == 16 * K && BK == K * 8);
    let (na, nb) = (
        kind.shape.elems_per_lane(Operand::A) as usize,
        kind.shape.elems_per_lane(Operand::B) as usize,
    );
    // Raw element bits in matrix order: A row-major (16 x K), B k-major (K x 8).
    let mut araw = [0u16; AK];
    let mut braw = [0u16; BK];
    if wide {
        gather::<2, NB>(ra, rb, f, na, nb, &mut araw, &mut braw);
    } else {
        gather::<4, NB>(ra, rb, f, na, nb, &mut araw, &mut braw);
    }
    let mut a = [0f64; AK];
    let mut b = [[0f64; 8]; K];
    decode_all(kind.dtype, &araw, &mut a);
    decode_all(kind.dtype, &braw, b.as_flattened_mut());
    let mut c = [[0f64; 8]; 16];
    let f16acc = kind.acc == MmaAcc::F16;
    for (words, fc) in rc.iter().zip(&f.c) {
        for e in 0..4 {
            let idx = fc[e] as usize;
            let x = if f16acc {
                f16::from_bits((words[e / 2] >> (16 * (e % 2))) as u16).to_f64()
            } else {
                f64::from(f32::from_bits(words[e]))
            };
            c[idx / 8][idx % 8] = x;
        }
    }
    let d = mma_sums(&a, &b, &c);
    let mut out = [[0u32; 4]; 32];
    for (words, fc) in out.iter_mut().zip(&f.c) {
        for e in 0..4 {
            let idx = fc[e] as usize;
            let v = d[idx / 8][idx % 8];
            if f16acc {
                words[e / 2] |= u32::from(f16::from_f64(v).to_bits()) << (16 * (e % 2));
            } else {
                words[e] = (v as f32).to_bits();
            }
        }
    }
    out
}

/// Scatters the A and B elements of every lane's registers (`PER` elements of `32 / PER` bits
/// per register, lowest first) to their matrix positions.
fn gather<const PER: usize, const NB: usize>(
    ra: &[[u32; 4]; 32],
    rb: &[[u32; NB]; 32],
    f: &Frags,
    na: usize,
    nb: usize,
    araw: &mut [u16],
    braw: &mut [u16],
) {
    let bits = 32 / PER;
    let emask = (1u32 << bits) - 1;
    for lane in 0..32 {
        for e in 0..na {
            let w = ra[lane][e / PER] >> (bits * (e % PER));
            araw[f.a[lane][e] as usize] = (w & emask) as u16;
        }
        for e in 0..nb {
            let w = rb[lane][e / PER] >> (bits * (e % PER));
            braw[f.b[lane][e] as usize] = (w & emask) as u16;
        }
    }
}

/// Decodes raw input elements (the low 16 or 8 bits of each) into values, exactly as
/// [`MmaDtype::decode`]: f16 and bf16 through `half`'s slice conversions (F16C where present), FP8
/// element by element.
fn decode_all(dtype: MmaDtype, raw: &[u16], out: &mut [f64]) {
    use half::slice::HalfFloatSliceExt;
    match dtype {
        MmaDtype::F16 => {
            let h: &[f16] = half::slice::HalfBitsSliceExt::reinterpret_cast(raw);
            h.convert_to_f64_slice(out);
        }
        MmaDtype::Bf16 => {
            let h: &[half::bf16] = half::slice::HalfBitsSliceExt::reinterpret_cast(raw);
            h.convert_to_f64_slice(out);
        }
        _ => {
            for (o, &x) in out.iter_mut().zip(raw) {
                *o = dtype.decode(u32::from(x));
            }
        }
    }
}

/// `d[i][j] = c[i][j] + Σ_k a[i][k]·b[k][j]`, folded left in k (the reference's order).
fn mma_sums<const K: usize, const AK: usize>(
    a: &[f64; AK],
    b: &[[f64; 8]; K],
    c: &[[f64; 8]; 16],
) -> [[f64; 8]; 16] {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked just above).
        return unsafe { mma_sums_avx2(a, b, c) };
    }
    mma_sums_body(a, b, c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mma_sums_avx2<const K: usize, const AK: usize>(
    a: &[f64; AK],
    b: &[[f64; 8]; K],
    c: &[[f64; 8]; 16],
) -> [[f64; 8]; 16] {
    mma_sums_body(a, b, c)
}

#[inline(always)]
fn mma_sums_body<const K: usize, const AK: usize>(
    a: &[f64; AK],
    b: &[[f64; 8]; K],
    c: &[[f64; 8]; 16],
) -> [[f64; 8]; 16] {
    let mut d = *c;
    for (row, arow) in d.iter_mut().zip(a.chunks_exact(K)) {
        for (&x, brow) in arow.iter().zip(b) {
            for j in 0..8 {
                row[j] += x * brow[j];
            }
        }
    }
    d
}

/// The dot products of a `wgmma.mma_async` with float accumulators: `out[row · n + col] =
/// Σ_k a[row · kk + k] · bt[k · n + col]`, folded left in k from the neutral element of `f64`'s
/// [`Sum`](std::iter::Sum) (the reference's `iter().sum()`, bit for bit). `a`: 64 x kk
/// row-major; `bt`: kk x n (B with k as the row); `out`: 64 x n.
pub(crate) fn wgmma_dots(a: &[f64], bt: &[f64], kk: usize, n: usize, out: &mut [f64]) {
    debug_assert!(a.len() >= 64 * kk && bt.len() >= kk * n && out.len() >= 64 * n);
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked just above).
        return unsafe { wgmma_dots_avx2(a, bt, kk, n, out) };
    }
    wgmma_dots_body(a, bt, kk, n, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn wgmma_dots_avx2(a: &[f64], bt: &[f64], kk: usize, n: usize, out: &mut [f64]) {
    wgmma_dots_body(a, bt, kk, n, out)
}

#[inline(always)]
fn wgmma_dots_body(a: &[f64], bt: &[f64], kk: usize, n: usize, out: &mut [f64]) {
    let zero: f64 = std::iter::empty::<f64>().sum();
    for (row, orow) in out.chunks_exact_mut(n).take(64).enumerate() {
        orow.fill(zero);
        let arow = &a[row * kk..(row + 1) * kk];
        for (k, &x) in arow.iter().enumerate() {
            let brow = &bt[k * n..(k + 1) * n];
            for (o, &y) in orow.iter_mut().zip(brow) {
                *o += x * y;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::mma::MmaShape;
    use proptest::prelude::*;

    /// The reference `mma_d` of `sim::exec` on the same registers.
    fn reference(kind: MmaKind, regs: &RawRegs) -> [[u32; 4]; 32] {
        crate::sim::exec::mma_d_reference(kind, regs)
    }

    fn same(kind: MmaKind, x: u32, y: u32) -> bool {
        let nan = |v: u32| match kind.acc {
            MmaAcc::F32 => f32::from_bits(v).is_nan(),
            _ => false,
        };
        if kind.acc == MmaAcc::F16 {
            return (0..2).all(|h| {
                let (p, q) = ((x >> (16 * h)) as u16, (y >> (16 * h)) as u16);
                p == q || (f16::from_bits(p).is_nan() && f16::from_bits(q).is_nan())
            });
        }
        x == y || (nan(x) && nan(y))
    }

    fn kinds() -> Vec<MmaKind> {
        use MmaAcc as C;
        use MmaDtype as D;
        use MmaShape as S;
        [
            (S::M16N8K16, D::F16, C::F32),
            (S::M16N8K16, D::F16, C::F16),
            (S::M16N8K16, D::Bf16, C::F32),
            (S::M16N8K8, D::F16, C::F32),
            (S::M16N8K8, D::F16, C::F16),
            (S::M16N8K32, D::E4m3, C::F32),
            (S::M16N8K32, D::E5m2, C::F16),
        ]
        .into_iter()
        .map(|(s, d, c)| MmaKind::new(s, d, c).unwrap())
        .collect()
    }

    /// Words whose halves are small values (sums stay finite and exercise rounding), or any
    /// bits at all (NaN, infinities, subnormals, signed zeros).
    fn word() -> impl Strategy<Value = u32> {
        prop_oneof![
            any::<u32>(),
            (any::<u16>(), any::<u16>()).prop_map(|(a, b)| {
                let f = |v: u16| u32::from(v & 0x83ff | 0x3800);
                f(a) | f(b) << 16
            }),
            Just(0x8000_8000),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every float form: D of the flat-array path equals the reference's, register by
        /// register (NaN equals NaN).
        #[test]
        fn fast_mma_equals_the_reference(words in proptest::collection::vec(word(), 320), which in 0usize..7) {
            let kind = kinds()[which];
            let mut r = RawRegs::zero();
            let mut it = words.into_iter();
            for lane in 0..32 {
                for op in [Operand::A, Operand::B, Operand::C] {
                    for reg in 0..kind.regs(op) {
                        *r.slot(op, lane, reg) = it.next().unwrap_or(0);
                    }
                }
            }
            let fast = mma_d(kind, &r).expect("a float form");
            let slow = reference(kind, &r);
            for lane in 0..32 {
                for reg in 0..kind.regs(Operand::C) as usize {
                    prop_assert!(same(kind, fast[lane][reg], slow[lane][reg]),
                        "{kind:?} lane {lane} reg {reg}: {:#x} vs {:#x}", fast[lane][reg], slow[lane][reg]);
                }
            }
        }

        /// The wgmma dot products equal the reference's `iter().sum()` of the products, bit
        /// for bit, signed zeros included (all products -0.0 sum to -0.0).
        #[test]
        fn wgmma_dots_equal_iterator_sums(vals in proptest::collection::vec(prop_oneof![-4.0f64..4.0, Just(-0.0), Just(0.0), Just(f64::INFINITY)], 64 * 8 + 8 * 24), n in prop_oneof![Just(8usize), Just(24)]) {
            let kk = 8;
            let a = &vals[..64 * kk];
            let bt = &vals[64 * kk..64 * kk + kk * n];
            let mut out = vec![0.0; 64 * n];
            wgmma_dots(a, bt, kk, n, &mut out);
            for row in 0..64 {
                for col in 0..n {
                    let want: f64 = (0..kk).map(|k| a[row * kk + k] * bt[k * n + col]).sum();
                    let got = out[row * n + col];
                    prop_assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{row},{col}: {got} vs {want}");
                }
            }
        }
    }

    /// All-negative-zero products: the fold starts from `Sum`'s neutral element (-0.0 since
    /// Rust 1.83), so the dot is -0.0 as the iterator sum is.
    #[test]
    fn a_dot_of_negative_zeros_is_negative_zero() {
        let a = vec![-0.0f64; 64];
        let bt = vec![1.0f64; 8];
        let mut out = vec![1.0; 64 * 8];
        wgmma_dots(&a, &bt, 1, 8, &mut out);
        let want: f64 = [-0.0f64].iter().copied().sum();
        assert_eq!(out[0].to_bits(), want.to_bits());
        assert!(out[0].is_sign_negative());
    }
}
