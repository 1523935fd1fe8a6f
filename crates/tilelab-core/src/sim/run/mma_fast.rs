//! The tensor-core arithmetic on flat arrays: the same sums as the reference arms of
//! [`crate::sim::exec`] (`mma_d_reference` for `mma.sync`, the f32/f16 accumulators of
//! `warpgroup_on` for `wgmma.mma_async`), in the same order, so every result is bit-identical,
//! only laid out so that the compiler vectorises across output columns (issue #31).
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
//! `mma.sync` with a fused multiply-add: every input type this path takes (f16, bf16, e4m3,
//! e5m2) has at most 11 significand bits and an exponent range inside f32's, so a product of
//! two of them has at most 22 significand bits and lies between 2^-266 and 2^256: it is exact
//! in f64. For an exact product `p = a·b`, `fma(a, b, s)` rounds `s + p` once, and so does the
//! reference's `s + round(a·b)` (= `s + p`): the same value, signed zeros, infinities and
//! overflow included. So the AVX2 path folds with `vfmadd` (one instruction per 4 columns
//! instead of two), the portable one with `s + a * b`; both are the reference's fold.
//!
//! `mma.sync` operands come as the PTX engine's register file holds them ([`Lanes`]: each
//! register's 32 lanes contiguous) and are decoded straight into the matrices: in every m16n8
//! fragment (PTX ISA §9.7.14.5.7-10) one register of lanes `4g .. 4g + 3` holds `4·P`
//! consecutive elements (`P` per register) of one row of A, of one column of B, or 8 (f16 C)
//! or 4 every-other (f32 C) elements of one row of C. [`layout`] derives those blocks from
//! [`MmaKind::fragment`] and checks every element against them once per form; a form whose
//! table did not fit would take the reference. Only one input type for A and B (mixed FP8 and
//! the integer forms keep the reference), tf32 too.

use crate::sim::bank::WARP_SIZE;
use crate::sim::mma::{MmaAcc, MmaDtype, MmaKind, MmaShape, Operand};
use half::f16;
use std::sync::OnceLock;

/// One 32-bit register of the warp: its 32 lanes, lane 0 first, the register's bits in the
/// low 32 bits of each (the PTX engine's register file, `regs[r · 32 + lane]`).
pub(crate) type Lanes = [u64; WARP_SIZE];

/// D registers, register-major: `d[r][lane]` (registers beyond the form's count are 0).
pub(crate) type DRegs = [[u32; WARP_SIZE]; 4];

/// Where one form's registers put their elements (see the module docs), lane `4g + t`,
/// position `p` (0 = lowest bits), `P` elements per A/B register:
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    /// A register `r` holds `(a[r].0 + g, a[r].1 + P·t + p)`.
    a: [(usize, usize); 4],
    /// B register `r` holds `(b[r] + P·t + p, g)`.
    b: [usize; 4],
    /// C/D register `r` holds `(c[r].0 + g, c[r].1 + 2t + p)` (`p` < 2 for f16, 0 for f32;
    /// `c[r].1` is 0 or 1).
    c: [(usize, usize); 4],
}

/// The block layout of `kind`'s fragments, checked against [`MmaKind::fragment`] for every
/// element, or `None` when one does not fit it.
fn layout(kind: &MmaKind) -> Option<Layout> {
    let per = kind.elems_per_reg(Operand::A) as usize;
    let mut l = Layout {
        a: [(0, 0); 4],
        b: [0; 4],
        c: [(0, 0); 4],
    };
    for op in [Operand::A, Operand::B, Operand::C] {
        let n = kind.regs(op) as usize;
        if n > 4 || (op == Operand::B && n > 2) {
            return None;
        }
        for r in 0..n {
            let (r0, c0) = kind.fragment(op, 0, r as u32, 0);
            let (r0, c0) = (r0 as usize, c0 as usize);
            match op {
                Operand::A => l.a[r] = (r0, c0),
                Operand::B if c0 == 0 => l.b[r] = r0,
                Operand::C if c0 < 2 && (c0 == 0 || kind.acc == MmaAcc::F32) => l.c[r] = (r0, c0),
                _ => return None,
            }
            for lane in 0..32usize {
                let (g, t) = (lane / 4, lane % 4);
                for p in 0..kind.elems_per_reg(op) as usize {
                    let want = match op {
                        Operand::A => (r0 + g, c0 + per * t + p),
                        Operand::B => (r0 + per * t + p, g),
                        Operand::C => (r0 + g, c0 + 2 * t + p),
                    };
                    let (i, j) = kind.fragment(op, lane as u32, r as u32, p as u32);
                    if (i as usize, j as usize) != want {
                        return None;
                    }
                }
            }
        }
    }
    Some(l)
}

/// [`layout`] of `kind`, computed once per (K, input width, accumulator).
fn layout_of(kind: &MmaKind, k: u32) -> Option<&'static Layout> {
    static T: [OnceLock<Option<Layout>>; 12] = [const { OnceLock::new() }; 12];
    let ks = match k {
        8 => 0,
        16 => 1,
        32 => 2,
        _ => return None,
    };
    let wide = usize::from(kind.dtype.bits() == 16);
    let f16acc = usize::from(kind.acc == MmaAcc::F16);
    T[ks * 4 + wide * 2 + f16acc]
        .get_or_init(|| layout(kind))
        .as_ref()
}

/// The A blocks of the f16 m16n8k16 form (m16n8k8: the first two): registers 0 and 1 hold
/// columns 0-7 of rows `g` and `g + 8`, registers 2 and 3 columns 8-15.
const F16_A: [(usize, usize); 4] = [(0, 0), (8, 0), (0, 8), (8, 8)];

/// The C/D layout of every m16n8 form with f32 accumulators: registers 0, 1 hold row `g`,
/// columns `2t`, `2t + 1`; registers 2, 3 the same of row `g + 8`.
const F32_C: [(usize, usize); 4] = [(0, 0), (0, 1), (8, 0), (8, 1)];

/// The column slot of D column `j` in the sums' rows: f32 accumulators put the even columns
/// first (a C/D register's 4 lanes of one row are then 4 consecutive slots), f16 ones keep
/// the order. Any order gives the same sums: each column is its own fold.
const fn slot(f16acc: bool, j: usize) -> usize {
    if f16acc { j } else { (j % 2) * 4 + j / 2 }
}

/// [`mma_d_into`] returning D (`None` where it returns false): the tests' form.
#[cfg(test)]
pub(crate) fn mma_d(kind: MmaKind, a: &[&Lanes], b: &[&Lanes], c: &[&Lanes]) -> Option<DRegs> {
    let mut d = [[0u32; WARP_SIZE]; 4];
    mma_d_into(kind, a, b, c, &mut d).then_some(d)
}

/// D of one `mma.sync` of `kind` (M = 16, N = 8) on the lane arrays of its A, B and C
/// registers (`a[r]`: A register `r`; C/D as f32 bits or two f16 per register): the reference
/// `mma_d_reference`'s values, register-major, written to `out` (not returned: no 512-byte D
/// moved through each caller, issue #31); true when written. False, `out` untouched, for a
/// form this path does not take (integer, tf32 or mixed inputs, a shape other than m16n8kK
/// with K of 8, 16 or 32, fewer registers than the form has): the caller computes it the
/// reference way.
pub(crate) fn mma_d_into(
    kind: MmaKind,
    a: &[&Lanes],
    b: &[&Lanes],
    c: &[&Lanes],
    out: &mut DRegs,
) -> bool {
    let (m, n, k) = kind.shape.mnk();
    if (m, n) != (16, 8)
        || kind.acc == MmaAcc::S32
        || kind.btype != kind.dtype
        || !matches!(
            kind.dtype,
            MmaDtype::F16 | MmaDtype::Bf16 | MmaDtype::E4m3 | MmaDtype::E5m2
        )
        || a.len() < kind.regs(Operand::A) as usize
        || b.len() < kind.regs(Operand::B) as usize
        || c.len() < kind.regs(Operand::C) as usize
    {
        return false;
    }
    let Some(lay) = layout_of(&kind, k) else {
        return false;
    };
    let ops = Ops { kind, lay, a, b, c };
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("fma")
        && std::is_x86_feature_detected!("f16c")
    {
        // SAFETY: AVX2, FMA and F16C are present (checked just above).
        return unsafe { simd::mma_d(&ops, out) };
    }
    mma_d_portable(&ops, out)
}

/// Whether every element of `regs` (the low 32 bits of each lane) is ±0: its `mag` bits all
/// 0. A branch-free fold over the lanes as they are stored (u64: the upper bits masked off),
/// so that it vectorises.
#[inline(always)]
fn all_zero(regs: &[&Lanes], mag: u32) -> bool {
    let mag = u64::from(mag);
    let mut any = 0u64;
    for r in regs {
        for &x in r.iter() {
            any |= x & mag;
        }
    }
    any == 0
}

/// Whether no element of `regs` (the low 32 bits of each lane) is infinite or NaN: `exp` has
/// each element's exponent field (e4m3: its seven magnitude bits) and `one` the lowest bit of
/// each; a field is all ones exactly when adding its lowest bit carries into the bit above it
/// (`top`: those bits; no carry leaves an element).
#[inline(always)]
fn all_finite(regs: &[&Lanes], exp: u32, one: u32, top: u32) -> bool {
    let (exp, one, top) = (u64::from(exp), u64::from(one), u64::from(top));
    let mut inf = 0u64;
    for r in regs {
        for &x in r.iter() {
            inf |= ((x & exp) + one) & top;
        }
    }
    inf == 0
}

/// Whether `regs` (the low 32 bits of each lane: f32 bits, or two f16 with `f16`) hold a -0 or
/// a NaN: the C elements an added zero could change (-0 + +0 = +0; a NaN may be quieted).
#[inline(always)]
fn c_changes(regs: &[&Lanes], f16: bool) -> bool {
    let mut bad = 0u64;
    for r in regs {
        for &x in r.iter() {
            let x = x & 0xffff_ffff;
            bad |= if f16 {
                // Per half: -0 is 0x8000; NaN has magnitude > 0x7c00 (then + 0x03ff
                // carries into the half's bit 15).
                let m = x & 0x7fff_7fff;
                u64::from(x & 0xffff == 0x8000)
                    | u64::from(x >> 16 == 0x8000)
                    | ((m + 0x03ff_03ff) & 0x8000_8000)
            } else {
                // -0 is 0x8000_0000; NaN has magnitude > 0x7f80_0000 (then + 0x007f_ffff
                // carries into bit 31).
                u64::from(x == 0x8000_0000) | (((x & 0x7fff_ffff) + 0x007f_ffff) & 0x8000_0000)
            };
        }
    }
    bad != 0
}

/// D = C without the multiply-adds when every product is exactly ±0: A all zeros and B
/// finite, or B all zeros and A finite (0 · finite = ±0, exactly; the element formats of
/// PTX ISA §5.2.5: f16, bf16, and e4m3, which has no infinity and whose NaN has all seven
/// magnitude bits set, and e5m2). The reference's fold then adds only zeros to each C
/// element, which gives that element back unless it is -0 (-0 + +0 = +0) or NaN (which may be
/// quieted): with any such C element this returns false and the caller computes. True when
/// `out` holds D (registers past C's count 0): the reference's D bit for bit (tested). A
/// zero-filled buffer (every `tilelab ptx` run without data) gives such operands.
#[inline(always)]
fn zero_products(o: &Ops<'_>, out: &mut DRegs) -> bool {
    let kind = &o.kind;
    let (na, nb, nc) = (
        kind.regs(Operand::A) as usize,
        kind.regs(Operand::B) as usize,
        kind.regs(Operand::C) as usize,
    );
    let (a, b, c) = (&o.a[..na], &o.b[..nb], &o.c[..nc]);
    // (magnitude bits, exponent fields, their lowest bits, the bits above them) per format.
    let (mag, exp, one, top) = match kind.dtype {
        MmaDtype::F16 => (0x7fff_7fff, 0x7c00_7c00, 0x0400_0400, 0x8000_8000),
        MmaDtype::Bf16 => (0x7fff_7fff, 0x7f80_7f80, 0x0080_0080, 0x8000_8000),
        MmaDtype::E4m3 => (0x7f7f_7f7f, 0x7f7f_7f7f, 0x0101_0101, 0x8080_8080),
        MmaDtype::E5m2 => (0x7f7f_7f7f, 0x7c7c_7c7c, 0x0404_0404, 0x8080_8080),
        _ => return false,
    };
    let ok = if all_zero(a, mag) {
        all_finite(b, exp, one, top)
    } else {
        all_zero(b, mag) && all_finite(a, exp, one, top)
    };
    if !ok {
        return false;
    }
    if kind.acc == MmaAcc::S32 || c_changes(c, kind.acc == MmaAcc::F16) {
        return false;
    }
    for (r, d) in out.iter_mut().enumerate() {
        match c.get(r) {
            Some(cr) => {
                for (x, &y) in d.iter_mut().zip(cr.iter()) {
                    *x = y as u32;
                }
            }
            None => *d = [0; WARP_SIZE],
        }
    }
    true
}

/// One `mma.sync`'s form, layout and operand registers.
struct Ops<'a> {
    kind: MmaKind,
    lay: &'static Layout,
    a: &'a [&'a Lanes],
    b: &'a [&'a Lanes],
    c: &'a [&'a Lanes],
}

/// [`mma_d_into`] without SIMD (every CPU; tested against the reference like the SIMD path).
fn mma_d_portable(o: &Ops<'_>, out: &mut DRegs) -> bool {
    dispatch::<false>(o, out)
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use super::{DRegs, Ops, dispatch};

    /// [`super::mma_d_into`] with AVX2, FMA and F16C.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) fn mma_d(o: &Ops<'_>, out: &mut DRegs) -> bool {
        dispatch::<true>(o, out)
    }

    /// The low 32 bits of four lanes (a register's lanes `4g .. 4g + 3`), in lane order.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn lo32x4(q: &[u64; 4]) -> std::arch::x86_64::__m128i {
        use std::arch::x86_64::*;
        // SAFETY: 32 bytes read from `q` (an unaligned load).
        unsafe {
            let v = _mm256_loadu_si256(q.as_ptr().cast());
            let p = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
            _mm256_castsi256_si128(p)
        }
    }

    /// Eight f16 (two per lane, the low half first) of a quad of lanes as f64: what
    /// `decode_block::<2, _>` gives for f16 (F16C converts exactly, as `half` does).
    #[target_feature(enable = "avx2,f16c")]
    #[inline]
    pub(super) fn quad_f16(q: &[u64; 4], out: &mut [f64; 8]) {
        use std::arch::x86_64::*;
        let h = lo32x4(q);
        // SAFETY: 64 bytes written to `out` (unaligned stores).
        unsafe {
            let f = _mm256_cvtph_ps(h);
            _mm256_storeu_pd(out.as_mut_ptr(), _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
            _mm256_storeu_pd(
                out.as_mut_ptr().add(4),
                _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(f)),
            );
        }
    }

    /// Four lanes' low 32 bits as f32 values widened to f64 (exact, as `f64::from`).
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn quad_f32(q: &[u64; 4], out: &mut [f64; 4]) {
        use std::arch::x86_64::*;
        let w = lo32x4(q);
        // SAFETY: 32 bytes written to `out` (an unaligned store).
        unsafe { _mm256_storeu_pd(out.as_mut_ptr(), _mm256_cvtps_pd(_mm_castsi128_ps(w))) };
    }

    /// Four f64 rounded to f32 bit patterns: `(x as f32).to_bits()` each (round to nearest
    /// even, the MXCSR default Rust assumes; NaNs quieted as `cvtsd2ss` does).
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn d_f32(x: &[f64; 4], out: &mut [u32; 4]) {
        use std::arch::x86_64::*;
        // SAFETY: 32 bytes read from `x`, 16 written to `out` (unaligned accesses).
        unsafe {
            let f = _mm256_cvtpd_ps(_mm256_loadu_pd(x.as_ptr()));
            _mm_storeu_si128(out.as_mut_ptr().cast(), _mm_castps_si128(f));
        }
    }

    /// One f16 B register (its 32 lanes; lane `4g + t` holds rows `2t`, `2t + 1` of column
    /// `g`) as its 8 rows of `rows`, columns in slot order (`super::slot`): the scalar
    /// placement and `decode8` of `fast_k`, by an 8 x 8 transpose of 16-bit elements.
    #[target_feature(enable = "avx2,f16c")]
    #[inline]
    pub(super) fn b_f16(lanes: &super::Lanes, f16acc: bool, rows: &mut [[f64; 8]; 8]) {
        use std::arch::x86_64::*;
        // Input row `s` (slot `s`): column `g` with `slot(f16acc, g) == s`, its 8 k elements.
        let col = |s: usize| match (f16acc, s) {
            (true, _) => s,
            (false, 0..4) => 2 * s,
            (false, _) => 2 * (s - 4) + 1,
        };
        let r: [__m128i; 8] = std::array::from_fn(|s| {
            let g = col(s);
            lo32x4(lanes[4 * g..4 * g + 4].try_into().unwrap())
        });
        let a0 = _mm_unpacklo_epi16(r[0], r[1]);
        let a1 = _mm_unpackhi_epi16(r[0], r[1]);
        let a2 = _mm_unpacklo_epi16(r[2], r[3]);
        let a3 = _mm_unpackhi_epi16(r[2], r[3]);
        let a4 = _mm_unpacklo_epi16(r[4], r[5]);
        let a5 = _mm_unpackhi_epi16(r[4], r[5]);
        let a6 = _mm_unpacklo_epi16(r[6], r[7]);
        let a7 = _mm_unpackhi_epi16(r[6], r[7]);
        let b0 = _mm_unpacklo_epi32(a0, a2);
        let b1 = _mm_unpackhi_epi32(a0, a2);
        let b2 = _mm_unpacklo_epi32(a1, a3);
        let b3 = _mm_unpackhi_epi32(a1, a3);
        let b4 = _mm_unpacklo_epi32(a4, a6);
        let b5 = _mm_unpackhi_epi32(a4, a6);
        let b6 = _mm_unpacklo_epi32(a5, a7);
        let b7 = _mm_unpackhi_epi32(a5, a7);
        let c = [
            _mm_unpacklo_epi64(b0, b4),
            _mm_unpackhi_epi64(b0, b4),
            _mm_unpacklo_epi64(b1, b5),
            _mm_unpackhi_epi64(b1, b5),
            _mm_unpacklo_epi64(b2, b6),
            _mm_unpackhi_epi64(b2, b6),
            _mm_unpacklo_epi64(b3, b7),
            _mm_unpackhi_epi64(b3, b7),
        ];
        for (row, &h) in rows.iter_mut().zip(&c) {
            let f = _mm256_cvtph_ps(h);
            // SAFETY: 64 bytes written to `row` (unaligned stores).
            unsafe {
                _mm256_storeu_pd(row.as_mut_ptr(), _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
                _mm256_storeu_pd(
                    row.as_mut_ptr().add(4),
                    _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(f)),
                );
            }
        }
    }

    /// D of an f16 `mma.sync` m16n8kK (K = 8 or 16) with f32 accumulators, A in the blocks
    /// [`super::F16_A`] and C/D in [`super::F32_C`], a row at a time: row `8h + g`'s A
    /// elements (registers `h`, and `h + 2` for K = 16), its C (slots in [`super::slot`]
    /// order: even columns from register `2h`, odd ones from `2h + 1`) widened into two
    /// vectors, folded with `b` (K x 8, slot order) in k order by fused multiply-adds (the
    /// sums of `super::sums`, element by element), rounded to f32 into `out` as `fast_k`
    /// writes D.
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    pub(super) fn rows_f32acc<const K: usize>(
        a: &[&super::Lanes],
        b: &[[f64; 8]; K],
        c: &[&super::Lanes],
        out: &mut super::DRegs,
    ) {
        use std::arch::x86_64::*;
        for h in 0..2 {
            for g in 0..8 {
                let mut arow = [0f64; 16];
                let (first, second) = arow.split_at_mut(8);
                quad_f16(super::quad(a[h], g), first.try_into().unwrap());
                if K == 16 {
                    quad_f16(super::quad(a[h + 2], g), second.try_into().unwrap());
                }
                let (ce, co) = (2 * h, 2 * h + 1);
                let mut lo = _mm256_cvtps_pd(_mm_castsi128_ps(lo32x4(super::quad(c[ce], g))));
                let mut hi = _mm256_cvtps_pd(_mm_castsi128_ps(lo32x4(super::quad(c[co], g))));
                // An index loop, which the compiler unrolls (K is a constant); the zipped
                // iterators it was first written with kept a loop counter per k.
                #[allow(clippy::needless_range_loop)]
                for k in 0..K {
                    let x = _mm256_set1_pd(arow[k]);
                    // SAFETY: 32 bytes read at each half of the 8-element row `b[k]`.
                    let (b0, b1) = unsafe {
                        (
                            _mm256_loadu_pd(b[k].as_ptr()),
                            _mm256_loadu_pd(b[k].as_ptr().add(4)),
                        )
                    };
                    lo = _mm256_fmadd_pd(x, b0, lo);
                    hi = _mm256_fmadd_pd(x, b1, hi);
                }
                let (wl, wh) = (
                    _mm_castps_si128(_mm256_cvtpd_ps(lo)),
                    _mm_castps_si128(_mm256_cvtpd_ps(hi)),
                );
                // SAFETY: 16 bytes written to lanes 4g .. 4g + 3 of registers `ce` and `co`.
                unsafe {
                    _mm_storeu_si128(out[ce][4 * g..4 * g + 4].as_mut_ptr().cast(), wl);
                    _mm_storeu_si128(out[co][4 * g..4 * g + 4].as_mut_ptr().cast(), wh);
                }
            }
        }
    }

    /// Eight f16 bit patterns as f64 (F16C: exact, as `half`'s conversion).
    #[target_feature(enable = "avx,f16c")]
    #[inline]
    pub(super) fn f16x8(bits: &[u16; 8], out: &mut [f64; 8]) {
        use std::arch::x86_64::*;
        // SAFETY: 16 bytes read from `bits`, 64 written to `out` (unaligned accesses).
        unsafe {
            let f = _mm256_cvtph_ps(_mm_loadu_si128(bits.as_ptr().cast()));
            let lo = _mm256_cvtps_pd(_mm256_castps256_ps128(f));
            let hi = _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(f));
            _mm256_storeu_pd(out.as_mut_ptr(), lo);
            _mm256_storeu_pd(out.as_mut_ptr().add(4), hi);
        }
    }
}

/// The values of the 256 FP8 bit patterns of `dtype` ([`MmaDtype::decode`], once).
fn fp8_table(dtype: MmaDtype) -> &'static [f64; 256] {
    static T: [OnceLock<[f64; 256]>; 2] = [const { OnceLock::new() }; 2];
    let i = usize::from(dtype == MmaDtype::E5m2);
    T[i].get_or_init(|| std::array::from_fn(|b| dtype.decode(b as u32)))
}

/// Decodes eight raw elements (16-bit, or one FP8 byte in the low bits of each) exactly as
/// [`MmaDtype::decode`].
#[inline(always)]
fn decode8<const SIMD: bool>(dtype: MmaDtype, bits: &[u16; 8], out: &mut [f64; 8]) {
    match dtype {
        MmaDtype::F16 => {
            #[cfg(target_arch = "x86_64")]
            if SIMD {
                // SAFETY: `SIMD` is only set under AVX2, FMA and F16C (`mma_d_into`).
                unsafe { simd::f16x8(bits, out) };
                return;
            }
            for (o, &x) in out.iter_mut().zip(bits) {
                *o = f16::from_bits(x).to_f64();
            }
        }
        MmaDtype::Bf16 => {
            for (o, &x) in out.iter_mut().zip(bits) {
                *o = f64::from(f32::from_bits(u32::from(x) << 16));
            }
        }
        _ => {
            let t = fp8_table(dtype);
            for (o, &x) in out.iter_mut().zip(bits) {
                *o = t[usize::from(x as u8)];
            }
        }
    }
}

/// The elements of four consecutive lanes of one register (lane order, lowest bits first):
/// 8 halves (`PER` = 2), or 16 bytes as two groups of 8 (`PER` = 4), decoded into `out`.
#[inline(always)]
fn decode_block<const PER: usize, const SIMD: bool>(
    dtype: MmaDtype,
    lanes: &[u64; 4],
    out: &mut [f64],
) {
    let w: [u32; 4] = lanes.map(|x| x as u32);
    if PER == 2 {
        let h: [u16; 8] = std::array::from_fn(|e| (w[e / 2] >> (16 * (e % 2))) as u16);
        decode8::<SIMD>(dtype, &h, (&mut out[..8]).try_into().unwrap());
    } else {
        for (half, o) in out.chunks_exact_mut(8).take(2).enumerate() {
            let h: [u16; 8] = std::array::from_fn(|e| {
                let e = 8 * half + e;
                u16::from((w[e / 4] >> (8 * (e % 4))) as u8)
            });
            decode8::<SIMD>(dtype, &h, o.try_into().unwrap());
        }
    }
}

/// Lanes `4g .. 4g + 3` of a register.
#[inline(always)]
fn quad(lanes: &Lanes, g: usize) -> &[u64; 4] {
    lanes[4 * g..4 * g + 4].try_into().unwrap()
}

/// [`mma_d_into`] of one form: `K`, `AK` = 16·K (stable Rust has no `16 * K` in an array length),
/// `PER` elements per A/B register (2 or 4), f16 or f32 accumulators, written to `out`; false
/// (`out` untouched) for another. Inlined into its callers, so that the SIMD one's target
/// features reach the arithmetic.
#[inline(always)]
fn dispatch<const SIMD: bool>(o: &Ops<'_>, out: &mut DRegs) -> bool {
    use MmaShape as S;
    if zero_products(o, out) {
        return true;
    }
    let f16acc = o.kind.acc == MmaAcc::F16;
    *out = match (o.kind.shape, o.kind.dtype.bits(), f16acc) {
        (S::M16N8K8, 16, false) => fast_k::<8, 128, 2, false, SIMD>(o),
        (S::M16N8K8, 16, true) => fast_k::<8, 128, 2, true, SIMD>(o),
        (S::M16N8K16, 16, false) => fast_k::<16, 256, 2, false, SIMD>(o),
        (S::M16N8K16, 16, true) => fast_k::<16, 256, 2, true, SIMD>(o),
        (S::M16N8K32, 8, false) => fast_k::<32, 512, 4, false, SIMD>(o),
        (S::M16N8K32, 8, true) => fast_k::<32, 512, 4, true, SIMD>(o),
        _ => return false,
    };
    true
}

/// The fast D of one form (see [`dispatch`]).
#[inline(always)]
fn fast_k<
    const K: usize,
    const AK: usize,
    const PER: usize,
    const F16ACC: bool,
    const SIMD: bool,
>(
    o: &Ops<'_>,
) -> DRegs {
    debug_assert!(AK == 16 * K && 32 / PER == o.kind.dtype.bits() as usize);
    let (kind, lay) = (o.kind, o.lay);
    let dt = kind.dtype;
    // f16 pairs under SIMD: a quad's low words are its 8 elements in order (one F16C
    // conversion), the same values as `decode_block`'s.
    let f16_simd = SIMD && PER == 2 && dt == MmaDtype::F16;
    // B k-major (K x 8, columns in slot order): raw bits placed, then decoded 8 at a time.
    let mut b = [[0f64; 8]; K];
    #[cfg(target_arch = "x86_64")]
    if f16_simd {
        // Each register's 8 x 8 block of b16 elements transposed in SSE registers (the same
        // placement as the scalar loop below), then decoded a row at a time.
        for (lanes, &k0) in o.b.iter().zip(&lay.b).take(kind.regs(Operand::B) as usize) {
            let rows: &mut [[f64; 8]; 8] = (&mut b[k0..k0 + 8]).try_into().unwrap();
            // SAFETY: `SIMD` is only set under AVX2, FMA and F16C (`mma_d_into`).
            unsafe { simd::b_f16(lanes, F16ACC, rows) };
        }
    }
    #[cfg(target_arch = "x86_64")]
    let na = kind.regs(Operand::A) as usize;
    if f16_simd
        && !F16ACC
        && (K == 8 || K == 16)
        && na == K / 4
        && lay.a[..na] == F16_A[..na]
        && kind.regs(Operand::C) == 4
        && lay.c == F32_C
    {
        // f32 accumulators: each D row decoded, folded and written in AVX2 registers.
        let mut out = [[0u32; WARP_SIZE]; 4];
        // SAFETY: `SIMD` is only set under AVX2, FMA and F16C (`mma_d_into`).
        unsafe { simd::rows_f32acc::<K>(o.a, &b, o.c, &mut out) };
        return out;
    }
    // A row-major (16 x K): each (register, g) is 4·PER consecutive elements of one row.
    let mut a = [0f64; AK];
    for (lanes, &(row, col)) in o.a.iter().zip(&lay.a).take(kind.regs(Operand::A) as usize) {
        for g in 0..8 {
            let at = (row + g) * K + col;
            #[cfg(target_arch = "x86_64")]
            if f16_simd {
                let out: &mut [f64; 8] = (&mut a[at..at + 8]).try_into().unwrap();
                // SAFETY: `SIMD` is only set under AVX2, FMA and F16C (`mma_d_into`).
                unsafe { simd::quad_f16(quad(lanes, g), out) };
                continue;
            }
            decode_block::<PER, SIMD>(dt, quad(lanes, g), &mut a[at..at + 4 * PER]);
        }
    }
    let mut braw = [[0u16; 8]; K];
    let bits = 32 / PER;
    let emask = (1u32 << bits) - 1;
    for (lanes, &k0) in o.b.iter().zip(&lay.b).take(if f16_simd {
        0
    } else {
        kind.regs(Operand::B) as usize
    }) {
        let rows = &mut braw[k0..k0 + 4 * PER];
        for g in 0..8 {
            let s = slot(F16ACC, g);
            for (t, &w) in quad(lanes, g).iter().enumerate() {
                for p in 0..PER {
                    rows[PER * t + p][s] = ((w as u32 >> (bits * p)) & emask) as u16;
                }
            }
        }
    }
    if !f16_simd {
        for (row, raw) in b.iter_mut().zip(&braw) {
            decode8::<SIMD>(dt, raw, row);
        }
    }
    // C (16 x 8, slot order), summed into in place.
    let mut d = [[0f64; 8]; 16];
    for (lanes, &(row, c0)) in o.c.iter().zip(&lay.c).take(kind.regs(Operand::C) as usize) {
        let rows = &mut d[row..row + 8];
        for (g, drow) in rows.iter_mut().enumerate() {
            if F16ACC {
                decode_block::<2, SIMD>(MmaDtype::F16, quad(lanes, g), drow);
            } else {
                let q: &mut [f64; 4] = (&mut drow[4 * c0..4 * c0 + 4]).try_into().unwrap();
                #[cfg(target_arch = "x86_64")]
                if SIMD {
                    // SAFETY: `SIMD` is only set under AVX2, FMA and F16C (`mma_d_into`).
                    unsafe { simd::quad_f32(quad(lanes, g), q) };
                    continue;
                }
                for (x, &w) in q.iter_mut().zip(quad(lanes, g)) {
                    *x = f64::from(f32::from_bits(w as u32));
                }
            }
        }
    }
    sums::<K, AK, SIMD>(&a, &b, &mut d);
    let mut out = [[0u32; WARP_SIZE]; 4];
    for (words, &(row, c0)) in out
        .iter_mut()
        .zip(&lay.c)
        .take(kind.regs(Operand::C) as usize)
    {
        for (g, drow) in d[row..row + 8].iter().enumerate() {
            let q: &mut [u32; 4] = (&mut words[4 * g..4 * g + 4]).try_into().unwrap();
            #[cfg(target_arch = "x86_64")]
            if SIMD && !F16ACC {
                let x: &[f64; 4] = (&drow[4 * c0..4 * c0 + 4]).try_into().unwrap();
                // SAFETY: `SIMD` is only set under AVX2, FMA and F16C (`mma_d_into`).
                unsafe { simd::d_f32(x, q) };
                continue;
            }
            for (t, w) in q.iter_mut().enumerate() {
                *w = if F16ACC {
                    let h = |j: usize| u32::from(f16::from_f64(drow[j]).to_bits());
                    h(2 * t) | h(2 * t + 1) << 16
                } else {
                    (drow[(4 * c0 + t) % 8] as f32).to_bits()
                };
            }
        }
    }
    out
}

/// `d[i][s] += Σ_k a[i][k]·b[k][s]` on `d` = C, folded left in k (the reference's order);
/// with `SIMD` through fused multiply-adds (exact products: module docs).
#[inline(always)]
fn sums<const K: usize, const AK: usize, const SIMD: bool>(
    a: &[f64; AK],
    b: &[[f64; 8]; K],
    d: &mut [[f64; 8]; 16],
) {
    for (row, arow) in d.iter_mut().zip(a.chunks_exact(K)) {
        for (&x, brow) in arow.iter().zip(b) {
            for j in 0..8 {
                row[j] = if SIMD {
                    x.mul_add(brow[j], row[j])
                } else {
                    row[j] + x * brow[j]
                };
            }
        }
    }
}

/// The dot products of a `wgmma.mma_async` with float accumulators: `out[row · n + col] =
/// Σ_k a[row · kk + k] · bt[k · n + col]`, folded left in k from the neutral element of `f64`'s
/// [`Sum`](std::iter::Sum) (the reference's `iter().sum()`, bit for bit). `a`: 64 x kk
/// row-major; `bt`: kk x n (B with k as the row); `out`: 64 x n.
/// Eight little-endian f16 bit patterns (one 16-byte core-matrix row) as f64, exactly as
/// [`MmaDtype::decode`] gives them; through F16C where the CPU has it.
pub(crate) fn f16_row(row: &[u8; 16], out: &mut [f64; 8]) {
    let bits: [u16; 8] = std::array::from_fn(|j| u16::from_le_bytes([row[2 * j], row[2 * j + 1]]));
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx") && std::is_x86_feature_detected!("f16c") {
        // SAFETY: AVX and F16C are present (checked just above).
        unsafe { simd::f16x8(&bits, out) };
        return;
    }
    for (o, &b) in out.iter_mut().zip(&bits) {
        *o = MmaDtype::F16.decode(u32::from(b));
    }
}

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

/// Every `out[row][col] = Σ_k a[row][k] · bt[k][col]` (64 rows, `n` columns), each sum in
/// ascending k from the empty sum's zero, products and additions unfused: the iterator sum's
/// value bit for bit. Blocked over columns (32, then 8, then 1 at a time) so that a block's
/// sums stay in registers across k; the order of each sum does not depend on the blocking.
#[inline(always)]
fn wgmma_dots_body(a: &[f64], bt: &[f64], kk: usize, n: usize, out: &mut [f64]) {
    let zero: f64 = std::iter::empty::<f64>().sum();
    #[inline(always)]
    fn block<const W: usize>(arow: &[f64], bt: &[f64], n: usize, c0: usize, zero: f64) -> [f64; W] {
        let mut acc = [zero; W];
        for (k, &x) in arow.iter().enumerate() {
            let b: &[f64; W] = bt[k * n + c0..k * n + c0 + W]
                .try_into()
                .unwrap_or_else(|_| unreachable!());
            for (o, &y) in acc.iter_mut().zip(b) {
                *o += x * y;
            }
        }
        acc
    }
    for (row, orow) in out.chunks_exact_mut(n).take(64).enumerate() {
        let arow = &a[row * kk..(row + 1) * kk];
        let mut c = 0;
        while c + 32 <= n {
            orow[c..c + 32].copy_from_slice(&block::<32>(arow, bt, n, c, zero));
            c += 32;
        }
        while c + 8 <= n {
            orow[c..c + 8].copy_from_slice(&block::<8>(arow, bt, n, c, zero));
            c += 8;
        }
        while c < n {
            orow[c..c + 1].copy_from_slice(&block::<1>(arow, bt, n, c, zero));
            c += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::mma::MmaShape;
    use proptest::prelude::*;

    use crate::sim::mma::RawRegs;

    /// The reference `mma_d` of `sim::exec` on the same registers.
    fn reference(kind: MmaKind, regs: &RawRegs) -> [[u32; 4]; 32] {
        crate::sim::exec::mma_d_reference(kind, regs)
    }

    /// `regs`' registers of `op` as lane arrays (the engine's layout), 4 of them.
    fn lanes_of(kind: MmaKind, regs: &RawRegs, op: Operand) -> [Lanes; 4] {
        let mut out = [[0u64; WARP_SIZE]; 4];
        for (reg, lanes) in out.iter_mut().enumerate().take(kind.regs(op) as usize) {
            for (lane, x) in lanes.iter_mut().enumerate() {
                // High bits the register file may hold are not the register's: set some.
                *x = u64::from(regs.get(op, lane as u32, reg as u32)) | 0xdead_0000_0000_0000;
            }
        }
        out
    }

    /// D of the fast path (SIMD where the CPU has it, else portable), lane-major.
    fn fast(kind: MmaKind, regs: &RawRegs, portable: bool) -> Option<[[u32; 4]; 32]> {
        let (a, b, c) = (
            lanes_of(kind, regs, Operand::A),
            lanes_of(kind, regs, Operand::B),
            lanes_of(kind, regs, Operand::C),
        );
        let (a, b, c) = (a.each_ref(), b.each_ref(), c.each_ref());
        let d = if portable {
            let (_, _, k) = kind.shape.mnk();
            let lay = layout_of(&kind, k)?;
            let mut d = [[0u32; WARP_SIZE]; 4];
            let ops = Ops {
                kind,
                lay,
                a: &a,
                b: &b,
                c: &c,
            };
            mma_d_portable(&ops, &mut d).then_some(d)?
        } else {
            mma_d(kind, &a, &b, &c)?
        };
        Some(std::array::from_fn(|lane| {
            std::array::from_fn(|r| d[r][lane])
        }))
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

    /// Every float form of the m16n8 shapes with one input type (what the fast path takes).
    fn kinds() -> Vec<MmaKind> {
        use MmaDtype as D;
        let mut out = Vec::new();
        for s in MmaShape::ALL {
            for d in [D::F16, D::Bf16, D::E4m3, D::E5m2] {
                for c in [MmaAcc::F32, MmaAcc::F16] {
                    if let Ok(k) = MmaKind::new(s, d, c) {
                        out.push(k);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn every_float_form_has_a_layout() {
        let ks = kinds();
        // m16n8k16 and m16n8k8 f16 (f32, f16 acc), bf16 (f32); m16n8k32 e4m3, e5m2 (both).
        assert!(ks.len() >= 10, "{ks:?}");
        for k in ks {
            let (_, _, kk) = k.shape.mnk();
            assert!(layout_of(&k, kk).is_some(), "{k:?}");
        }
    }

    /// Forms the fast path refuses: integer, tf32, mixed FP8.
    #[test]
    fn other_forms_take_the_reference() {
        use MmaDtype as D;
        let z = [[0u64; WARP_SIZE]; 4];
        let z = z.each_ref();
        for k in [
            MmaKind::new(MmaShape::M16N8K32, D::S8, MmaAcc::S32).unwrap(),
            MmaKind::new(MmaShape::M16N8K8, D::Tf32, MmaAcc::F32).unwrap(),
            MmaKind::with_types(MmaShape::M16N8K32, D::E4m3, D::E5m2, MmaAcc::F32, false).unwrap(),
        ] {
            assert!(mma_d(k, &z, &z, &z).is_none(), "{k:?}");
        }
    }

    /// Words whose halves are small values (sums stay finite and exercise rounding), or any
    /// bits at all (NaN, infinities, subnormals, signed zeros), or bytes of small FP8 values.
    fn word() -> impl Strategy<Value = u32> {
        prop_oneof![
            any::<u32>(),
            (any::<u16>(), any::<u16>()).prop_map(|(a, b)| {
                let f = |v: u16| u32::from(v & 0x83ff | 0x3800);
                f(a) | f(b) << 16
            }),
            any::<u32>().prop_map(|w| w & 0xb7b7_b7b7),
            Just(0x8000_8000),
            Just(0x8080_8080),
            Just(0),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Every float form: D of the fast path (SIMD here, and the portable one) equals the
        /// reference's, register by register (NaN equals NaN).
        #[test]
        fn fast_mma_equals_the_reference(words in proptest::collection::vec(word(), 320), which in 0usize..64, portable in any::<bool>()) {
            let ks = kinds();
            let kind = ks[which % ks.len()];
            let mut r = RawRegs::zero();
            let mut it = words.into_iter();
            for lane in 0..32 {
                for op in [Operand::A, Operand::B, Operand::C] {
                    for reg in 0..kind.regs(op) {
                        *r.slot(op, lane, reg) = it.next().unwrap_or(0);
                    }
                }
            }
            let fast = fast(kind, &r, portable).expect("a float form");
            let slow = reference(kind, &r);
            for lane in 0..32 {
                for reg in 0..kind.regs(Operand::C) as usize {
                    prop_assert!(same(kind, fast[lane][reg], slow[lane][reg]),
                        "{kind:?} lane {lane} reg {reg}: {:#x} vs {:#x}", fast[lane][reg], slow[lane][reg]);
                }
            }
        }

        /// With A or B all signed zeros (the other operand and C any bits: NaN, infinities,
        /// -0 included): D equals the reference's, and where the zero-product shortcut
        /// takes the instruction ([`zero_products`]) bit for bit, NaNs included.
        #[test]
        fn zero_operand_mma_equals_the_reference(words in proptest::collection::vec(word(), 320), signs in any::<u32>(), which in 0usize..64, zero_b in any::<bool>(), portable in any::<bool>()) {
            let ks = kinds();
            let kind = ks[which % ks.len()];
            let zero_op = if zero_b { Operand::B } else { Operand::A };
            // A signed zero per element: the sign bits of the format's elements from `signs`.
            let sign_bits = if kind.dtype.bits() == 16 { 0x8000_8000u32 } else { 0x8080_8080 };
            let mut r = RawRegs::zero();
            let mut it = words.into_iter();
            for lane in 0..32 {
                for op in [Operand::A, Operand::B, Operand::C] {
                    for reg in 0..kind.regs(op) {
                        let w = it.next().unwrap_or(0);
                        *r.slot(op, lane, reg) = if op == zero_op {
                            signs.rotate_left(lane + 7 * reg) & sign_bits
                        } else {
                            w
                        };
                    }
                }
            }
            let fast = fast(kind, &r, portable).expect("a float form");
            let slow = reference(kind, &r);
            let (a, b, c) = (
                lanes_of(kind, &r, Operand::A),
                lanes_of(kind, &r, Operand::B),
                lanes_of(kind, &r, Operand::C),
            );
            let (_, _, k) = kind.shape.mnk();
            let ops = Ops { kind, lay: layout_of(&kind, k).unwrap(), a: &a.each_ref(), b: &b.each_ref(), c: &c.each_ref() };
            let mut d = [[0u32; WARP_SIZE]; 4];
            let short = zero_products(&ops, &mut d);
            for lane in 0..32 {
                for reg in 0..kind.regs(Operand::C) as usize {
                    prop_assert!(same(kind, fast[lane][reg], slow[lane][reg]),
                        "{kind:?} lane {lane} reg {reg}: {:#x} vs {:#x}", fast[lane][reg], slow[lane][reg]);
                    if short {
                        prop_assert_eq!(d[reg][lane], slow[lane][reg], "{:?} lane {} reg {}", kind, lane, reg);
                    }
                }
            }
        }

        /// The wgmma dot products equal the reference's `iter().sum()` of the products, bit
        /// for bit, signed zeros included (all products -0.0 sum to -0.0), for N in the
        /// 32-column blocks, the 8-column ones and both (72 = 2 x 32 + 8).
        #[test]
        fn wgmma_dots_equal_iterator_sums(vals in proptest::collection::vec(prop_oneof![-4.0f64..4.0, Just(-0.0), Just(0.0), Just(f64::INFINITY)], 64 * 8 + 8 * 72), n in prop_oneof![Just(8usize), Just(24), Just(32), Just(72)]) {
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

    /// The zero-product shortcut takes A = 0 with finite B and C (D = C), and refuses a C
    /// of -0 or NaN, an infinite or NaN B (0 · inf = NaN), and non-zero A and B.
    #[test]
    fn zero_products_takes_only_what_gives_c_back() {
        let kind = MmaKind::new(MmaShape::M16N8K16, MmaDtype::F16, MmaAcc::F32).unwrap();
        let lay = layout_of(&kind, 16).unwrap();
        let one = 0x3c00_3c00u64; // f16 1.0, 1.0
        let run = |a: u64, b: u64, c: u64| {
            let (a, b, c) = (
                [[a; WARP_SIZE]; 4],
                [[b; WARP_SIZE]; 4],
                [[c; WARP_SIZE]; 4],
            );
            let ops = Ops {
                kind,
                lay,
                a: &a.each_ref(),
                b: &b.each_ref(),
                c: &c.each_ref(),
            };
            let mut d = [[7u32; WARP_SIZE]; 4];
            zero_products(&ops, &mut d).then_some(d)
        };
        // 2.5 in f32: D = C; -0 A elements are zeros too.
        let d = run(0x8000_0000, one, 0x4020_0000).expect("A = 0, B = 1");
        assert_eq!(d, [[0x4020_0000; WARP_SIZE]; 4]);
        assert!(run(0, one, 0x8000_0000).is_none(), "C = -0");
        assert!(run(0, one, 0x7fc0_0000).is_none(), "C = NaN");
        assert!(run(0, 0x7c00_3c00, 0).is_none(), "B = inf");
        assert!(run(0, 0x3c00_7e00, 0).is_none(), "B = NaN");
        assert!(run(one, one, 0).is_none(), "A, B = 1");
        assert_eq!(
            run(one, 0, 0x3f80_0000),
            Some([[0x3f80_0000; WARP_SIZE]; 4]),
            "B = 0"
        );
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
