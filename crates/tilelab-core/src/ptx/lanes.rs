//! Per-lane helpers of the engine's instruction families, as macros (they expand in place,
//! so `?` and `return` inside a lane's body leave the family function).

/// The value of source operand `$s` in lane `$l` of register file `$regs` (an immediate as
/// is).
macro_rules! v {
    ($regs:ident, $s:expr, $l:expr) => {
        match $s {
            $crate::ptx::decode::Src::Reg(r) => {
                $regs[r as usize * $crate::sim::bank::WARP_SIZE + $l]
            }
            $crate::ptx::decode::Src::Imm(v) => v,
        }
    };
}

/// Runs `$body` for each lane `$l` of `$mask`, lowest first.
macro_rules! each {
    ($mask:expr, |$l:ident| $body:expr) => {
        let mut m: u32 = $mask;
        while m != 0 {
            let $l = m.trailing_zeros() as usize;
            m &= m - 1;
            $body;
        }
    };
}

/// Writes `$v` to register `$d` of lane `$l`, noting in `$changed` whether the value changed
/// (a loop iteration that changes nothing is a spin: `Warp::changed`).
macro_rules! set {
    ($changed:ident, $regs:ident, $d:expr, $l:expr, $v:expr) => {{
        let v = $v;
        let slot = &mut $regs[$d as usize * $crate::sim::bank::WARP_SIZE + $l];
        $changed |= *slot != v;
        *slot = v;
    }};
}

/// Whole-warp lane arrays: the fast path of the simplest instruction families (issue #31).
///
/// A register holds its 32 lanes contiguously (`regs[r · 32 + lane]`), so an instruction whose
/// every lane computes the same function of its own operands is a loop over arrays of 32
/// `u64`, which the compiler unrolls and vectorises once the function is known at compile time
/// (one monomorphised loop per operation, chosen by the family before the lanes run). Results
/// and the changed-register flag are those of the per-lane path (`each!` and `set!`): lanes
/// outside the mask keep their values, an active lane counts as changed when its value differs.
pub(super) mod arrays {
    use crate::ptx::decode::Src;
    use crate::sim::bank::WARP_SIZE;

    /// The 32 lanes of source `s`: a register's lanes, or an immediate in every lane.
    #[inline(always)]
    pub fn operand(regs: &[u64], s: Src) -> [u64; WARP_SIZE] {
        match s {
            Src::Reg(r) => {
                let b = r as usize * WARP_SIZE;
                let mut out = [0u64; WARP_SIZE];
                out.copy_from_slice(&regs[b..b + WARP_SIZE]);
                out
            }
            Src::Imm(v) => [v; WARP_SIZE],
        }
    }

    /// Writes `out` to register `d`'s lanes of `mask`; true when one of them changed. `out`'s
    /// lanes are 64-bit values or 32-bit ones zero-extended (`u32`: the D registers of
    /// `ldmatrix` and `mma` go straight from the executor's register-major step into the
    /// register file, without a widened 256-byte copy per register).
    #[inline(always)]
    pub fn write<T: Copy + Into<u64>>(
        regs: &mut [u64],
        d: u32,
        mask: u32,
        out: &[T; WARP_SIZE],
    ) -> bool {
        let b = d as usize * WARP_SIZE;
        let dst: &mut [u64; WARP_SIZE] = (&mut regs[b..b + WARP_SIZE])
            .try_into()
            .unwrap_or_else(|_| unreachable!());
        if mask == u32::MAX {
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 is present (checked just above).
                return unsafe { write_all_avx2(dst, out) };
            }
            return write_all(dst, out);
        }
        let mut changed = false;
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let v = out[l].into();
            changed |= dst[l] != v;
            dst[l] = v;
        }
        changed
    }

    /// Every lane of `dst` set to `out`'s; true when one changed. One pass: the differences
    /// ORed as the lanes are stored (vectorised; a slice compare would call `memcmp`).
    #[inline(always)]
    fn write_all<T: Copy + Into<u64>>(dst: &mut [u64; WARP_SIZE], out: &[T; WARP_SIZE]) -> bool {
        let mut diff = 0u64;
        for (x, &y) in dst.iter_mut().zip(out) {
            let y = y.into();
            diff |= *x ^ y;
            *x = y;
        }
        diff != 0
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn write_all_avx2<T: Copy + Into<u64>>(
        dst: &mut [u64; WARP_SIZE],
        out: &[T; WARP_SIZE],
    ) -> bool {
        write_all(dst, out)
    }

    /// `d = f(a, b)` in the lanes of `mask`.
    ///
    /// With AVX2 present the loop is compiled for it (a copy of the same code, 4 lanes per
    /// vector instead of 2): integer and IEEE float operations give the same bits whatever the
    /// instruction set (Rust never fuses a multiply and an add on its own).
    #[inline(always)]
    pub fn map2(
        regs: &mut [u64],
        mask: u32,
        d: u32,
        a: Src,
        b: Src,
        f: impl Fn(u64, u64) -> u64,
    ) -> bool {
        if mask == 0 {
            return false; // no lane executes (`f` is pure: nothing to compute)
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present (checked just above).
            return unsafe { map2_avx2(regs, mask, d, [a, b], f) };
        }
        map2_plain(regs, mask, d, [a, b], f)
    }

    #[inline(always)]
    fn map2_plain(
        regs: &mut [u64],
        mask: u32,
        d: u32,
        s: [Src; 2],
        f: impl Fn(u64, u64) -> u64,
    ) -> bool {
        let (x, y) = (operand(regs, s[0]), operand(regs, s[1]));
        let out: [u64; WARP_SIZE] = std::array::from_fn(|l| f(x[l], y[l]));
        write(regs, d, mask, &out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn map2_avx2(
        regs: &mut [u64],
        mask: u32,
        d: u32,
        s: [Src; 2],
        f: impl Fn(u64, u64) -> u64,
    ) -> bool {
        map2_plain(regs, mask, d, s, f)
    }

    /// `d = f(a, b, c)` in the lanes of `mask` (AVX2 as [`map2`]).
    #[inline(always)]
    pub fn map3(
        regs: &mut [u64],
        mask: u32,
        d: u32,
        s: [Src; 3],
        f: impl Fn(u64, u64, u64) -> u64,
    ) -> bool {
        if mask == 0 {
            return false;
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present (checked just above).
            return unsafe { map3_avx2(regs, mask, d, s, f) };
        }
        map3_plain(regs, mask, d, s, f)
    }

    #[inline(always)]
    fn map3_plain(
        regs: &mut [u64],
        mask: u32,
        d: u32,
        s: [Src; 3],
        f: impl Fn(u64, u64, u64) -> u64,
    ) -> bool {
        let (x, y, z) = (
            operand(regs, s[0]),
            operand(regs, s[1]),
            operand(regs, s[2]),
        );
        let out: [u64; WARP_SIZE] = std::array::from_fn(|l| f(x[l], y[l], z[l]));
        write(regs, d, mask, &out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn map3_avx2(
        regs: &mut [u64],
        mask: u32,
        d: u32,
        s: [Src; 3],
        f: impl Fn(u64, u64, u64) -> u64,
    ) -> bool {
        map3_plain(regs, mask, d, s, f)
    }

    /// `d = f(a)` in the lanes of `mask`.
    #[inline(always)]
    pub fn map1(regs: &mut [u64], mask: u32, d: u32, a: Src, f: impl Fn(u64) -> u64) -> bool {
        map2(regs, mask, d, a, a, |x, _| f(x))
    }

    /// The f32 of a register's low 32 bits, and back (upper bits zero, as `float2` writes).
    #[inline(always)]
    pub fn f(x: u64) -> f32 {
        f32::from_bits(x as u32)
    }

    /// See [`f`].
    #[inline(always)]
    pub fn bits(v: f32) -> u64 {
        u64::from(v.to_bits())
    }

    /// `fma.rn.f32` over the lanes of `mask`: `a·b + c` rounded once (`f32::mul_add`, which
    /// is correctly rounded everywhere; with the FMA unit present it is one instruction instead
    /// of a call to the C library's `fmaf`).
    pub fn fma_f32(regs: &mut [u64], mask: u32, d: u32, s: [Src; 3]) -> bool {
        if mask == 0 {
            return false;
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("fma") && std::is_x86_feature_detected!("avx2") {
            // SAFETY: the FMA and AVX2 extensions are present (checked just above).
            return unsafe { fma_f32_fma(regs, mask, d, s) };
        }
        map3(regs, mask, d, s, |x, y, z| bits(f(x).mul_add(f(y), f(z))))
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "fma,avx2")]
    fn fma_f32_fma(regs: &mut [u64], mask: u32, d: u32, s: [Src; 3]) -> bool {
        map3_plain(regs, mask, d, s, |x, y, z| bits(f(x).mul_add(f(y), f(z))))
    }
}

#[cfg(test)]
mod tests {
    use super::arrays;
    use crate::sim::bank::WARP_SIZE;

    /// `write` of `u32` lanes (the AVX2 copy where the CPU has one) writes the registers and
    /// reports the changes that `write` of the widened array does, for full and partial masks.
    #[test]
    fn write_u32_is_write_of_the_widened_lanes() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..200 {
            let mut regs: Vec<u64> = (0..3 * WARP_SIZE).map(|_| next() & 0x1_ffff_ffff).collect();
            let d = (round % 3) as u32;
            let b = d as usize * WARP_SIZE;
            // Some rounds write the register's own (32-bit) values back: no change.
            let out: [u32; WARP_SIZE] = std::array::from_fn(|l| match round % 4 {
                0 => regs[b + l] as u32,
                _ => next() as u32,
            });
            let mask = match round % 5 {
                0 | 1 => u32::MAX,
                2 => 0,
                _ => next() as u32,
            };
            let mut want = regs.clone();
            let changed_want = arrays::write(&mut want, d, mask, &out.map(u64::from));
            let changed = arrays::write(&mut regs, d, mask, &out);
            assert_eq!(regs, want, "round {round}");
            assert_eq!(changed, changed_want, "round {round}");
        }
    }
}
