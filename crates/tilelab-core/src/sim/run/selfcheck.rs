//! Functional checks of the one executor ([`crate::sim::exec::execute`]): an `mma.sync` or a
//! `wgmma.mma_async` chain run on known inputs and compared with plain f64 sums of the same
//! inputs (never with the packed registers). `tilelab sim mma` and `tilelab sim wgmma` print
//! what these return; a non-zero error is a defect of the fragment tables or the executor.

use ndarray::Array2;

use crate::sim::error::SimError;
use crate::sim::exec::{self, WarpOp, WgmmaA, WgmmaOp, WgmmaStep};
use crate::sim::mma::{MmaDtype, MmaKind, Operand};
use crate::sim::smem::SharedMemory;
use crate::sim::wgmma::{self, Major, OperandTile, WgmmaAcc, WgmmaKind, WgmmaType};

/// Executes `kind`'s `mma.sync` on registers packed from `input(row, col, operand)` (operand 0
/// = A, 1 = B, 2 = C) and returns max |D − reference|, the reference computed by ndarray in f64
/// from the input matrices after rounding each element to its type.
///
/// # Errors
/// The executor's, or a packing error ([`SimError::OperandShape`]).
pub fn mma_max_abs_error(
    kind: MmaKind,
    input: &dyn Fn(usize, usize, u32) -> f64,
) -> Result<f64, SimError> {
    let matrix = |op: Operand, o: u32| {
        let (r, c) = kind.shape.dims(op);
        Array2::from_shape_fn((r as usize, c as usize), |(i, j)| {
            let v = input(i, j, o);
            match op {
                Operand::C => kind.acc.decode(kind.acc.encode(v)),
                _ => kind.dtype.decode(kind.dtype.encode(v)),
            }
        })
    };
    let (a, b, c) = (
        matrix(Operand::A, 0),
        matrix(Operand::B, 1),
        matrix(Operand::C, 2),
    );
    let regs = kind.pack(&a, &b, &c)?;
    let mut out = regs.clone();
    let op = WarpOp::Mma {
        kind,
        a: regs.a,
        b: regs.b.map(|r| [r[0], r[1], 0, 0]),
        c: regs.c,
    };
    let mut none = SharedMemory::zeroed(0);
    out.c = exec::execute(&mut none, &op)?.regs;
    let got = kind.unpack(Operand::C, &out);
    let want = a.dot(&b) + &c;
    Ok(got
        .iter()
        .zip(want.iter())
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f64::max))
}

/// The two errors of [`mma_check`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MmaCheck {
    /// On small integers in [-3, 3] ([0, 6] for u8 inputs): exact in every type, so 0.
    pub small_integer_max_abs_error: f64,
    /// On fixed pseudo-random values in [-1, 1): the rounding of the accumulator type.
    pub random_max_abs_error: f64,
}

/// `kind`'s mma on small integers and on fixed pseudo-random values ([`crate::seeded`] from a
/// fixed seed), each through [`mma_max_abs_error`].
///
/// # Errors
/// As [`mma_max_abs_error`].
pub fn mma_check(kind: MmaKind) -> Result<MmaCheck, SimError> {
    let unsigned = kind.dtype == MmaDtype::U8;
    let small = mma_max_abs_error(kind, &|i, j, o| {
        let v = ((i * 3 + j * 5 + o as usize) % 7) as f64;
        if unsigned && o < 2 { v } else { v - 3.0 }
    })?;
    let mut rng = crate::seeded::Seeded::new(0x2545_F491_4F6C_DD1D);
    let randoms: Vec<f64> = (0..3 * 512).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let random = mma_max_abs_error(kind, &|i, j, o| {
        randoms[(o as usize * 512 + i * 32 + j) % randoms.len()]
    })?;
    Ok(MmaCheck {
        small_integer_max_abs_error: small,
        random_max_abs_error: random,
    })
}

/// Small integers in [-3, 3] from `(i, j, salt)` (in [0, 6] for u8).
pub fn wgmma_small(i: usize, j: usize, salt: usize, t: WgmmaType) -> f64 {
    let v = ((i * 7 + j * 3 + salt * 5 + (i * j) % 5) % 7) as f64;
    if t == WgmmaType::U8 { v } else { v - 3.0 }
}

/// One `wgmma` chain to check: the kind, its operand tiles in shared memory and their majors.
#[derive(Clone, Copy, Debug)]
pub struct WgmmaCase<'a> {
    /// The instruction form (N, accumulator, A's and B's input types).
    pub kind: WgmmaKind,
    /// A's tile (read through its descriptor unless `a_regs`) and B's.
    pub tiles: [&'a OperandTile; 2],
    /// A's major and B's (MN-major is `imm-trans` 1).
    pub majors: [Major; 2],
    /// A from registers (`wgmma ... {a-regs}, b-desc`) instead of a descriptor.
    pub a_regs: bool,
    /// K in elements of the input type (a multiple of the instruction's K).
    pub k: u32,
    /// Bytes of shared memory the tiles need.
    pub smem_bytes: u32,
}

/// What [`wgmma_check`] ran and found.
#[derive(Debug)]
pub struct WgmmaCheck {
    /// The executor's step of each instruction, k-block 0 first.
    pub steps: Vec<WgmmaStep>,
    /// The accumulator registers after the chain, thread by thread (`kind.d_regs()` each).
    pub d: Vec<u32>,
    /// max |D − Σ_k A·B| over every value (f16 accumulators hold two values a register).
    pub max_abs_error: f64,
    /// How many accumulator values were compared.
    pub values: usize,
}

/// Writes A (64×k) and B (N×k) of [`wgmma_small`] integers into shared memory by their tiles,
/// runs `k / K` chained `wgmma` instructions (D = A·B, then D += A·B) through the executor and
/// compares every accumulator with plain f64 sums.
///
/// # Errors
/// The executor's (a descriptor or tile outside shared memory, a form it refuses).
pub fn wgmma_check(case: &WgmmaCase) -> Result<WgmmaCheck, SimError> {
    let WgmmaCase {
        kind,
        tiles: [ta, tb],
        majors: [ma, mb],
        a_regs,
        k,
        smem_bytes,
    } = *case;
    let (ta_t, tb_t) = (kind.a, kind.b);
    let e = ta_t.bytes();
    let kk = kind.k();
    let n = kind.n;
    // Element (mn, k) of an e-byte tile: byte address of its 2-byte unit plus the byte in it.
    let addr = |t: &OperandTile, mn: u32, kx: u32| t.byte_address(mn, kx * e / 2) + (kx * e) % 2;
    let am: Vec<Vec<f64>> = (0..64)
        .map(|i| {
            (0..k as usize)
                .map(|j| wgmma_small(i, j, 0, ta_t))
                .collect()
        })
        .collect();
    let bm: Vec<Vec<f64>> = (0..n as usize)
        .map(|i| {
            (0..k as usize)
                .map(|j| wgmma_small(i, j, 1, tb_t))
                .collect()
        })
        .collect();
    let mut smem = SharedMemory::zeroed(smem_bytes);
    for (t, m, ty) in [(ta, &am, ta_t), (tb, &bm, tb_t)] {
        for (i, row) in m.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                let at = addr(t, i as u32, j as u32) as usize;
                let bits = ty.encode(*v).to_le_bytes();
                smem.bytes_mut()[at..at + e as usize].copy_from_slice(&bits[..e as usize]);
            }
        }
    }
    let regs_per = kind.d_regs() as usize;
    let mut d = vec![0u32; wgmma::WARPGROUP_THREADS * regs_per];
    let mut steps = Vec::new();
    for kb in 0..k / kk {
        let regs: Box<[[u32; 4]; wgmma::WARPGROUP_THREADS]> = Box::new(std::array::from_fn(|t| {
            std::array::from_fn(|r| {
                (0..4 / e).fold(0u32, |w, pos| {
                    let (m, kx) = kind.a_fragment(t as u32, r as u32, pos);
                    let v = am[m as usize][(kk * kb + kx) as usize];
                    w | ta_t.encode(v).checked_shl(8 * e * pos).unwrap_or(0)
                })
            })
        }));
        let src = if a_regs {
            WgmmaA::Regs(&regs)
        } else {
            WgmmaA::Desc(ta.descriptor(kb))
        };
        steps.push(exec::execute(
            &mut smem,
            WgmmaOp {
                kind,
                a: src,
                b: tb.descriptor(kb),
                scale_d: kb > 0,
                scale_a: 1,
                scale_b: 1,
                trans_a: !a_regs && ma == Major::Mn,
                trans_b: mb == Major::Mn,
                d: &mut d,
                values: true,
            },
        )?);
    }
    // Reference: plain f64 sums over the values written.
    let mut err = 0f64;
    let halves = if kind.acc == WgmmaAcc::F16 { 2 } else { 1 };
    for t in 0..wgmma::WARPGROUP_THREADS as u32 {
        for r in 0..regs_per as u32 {
            let word = d[t as usize * regs_per + r as usize];
            for h in 0..halves {
                let (row, col) = kind.d_fragment(t, r, h);
                let want: f64 = (0..k as usize)
                    .map(|j| am[row as usize][j] * bm[col as usize][j])
                    .sum();
                let got = match kind.acc {
                    WgmmaAcc::F32 => f64::from(f32::from_bits(word)),
                    WgmmaAcc::S32 => f64::from(word as i32),
                    WgmmaAcc::F16 => half::f16::from_bits((word >> (16 * h)) as u16).to_f64(),
                };
                err = err.max((got - want).abs());
            }
        }
    }
    let values = d.len() * halves as usize;
    Ok(WgmmaCheck {
        steps,
        d,
        max_abs_error: err,
        values,
    })
}
