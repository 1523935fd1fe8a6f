//! One `wgmma` problem as `tilelab sim wgmma` runs it: the operand tiles placed in shared
//! memory by their canonical layouts ([`crate::sim::wgmma::operand_tiles_at`]), the chain of
//! `K / instruction K` instructions run through the one executor and checked against plain
//! f64 sums ([`crate::sim::selfcheck::wgmma_check`]), and each instruction's matrix descriptors.
//!
//! K is counted two ways: `k` in elements of the input type (what the flags and the check
//! use) and the tiles' K in 2-byte units (an e-byte K-major tile of k elements has the byte
//! layout of a 2-byte tile of `k * e / 2` elements, so one instruction's 32 bytes of K are one
//! k16 block).

use crate::sim::arch::Arch;
use crate::sim::error::SimError;
use crate::sim::selfcheck::{self, WgmmaCase, WgmmaCheck};
use crate::sim::tma::TmaSwizzle;
use crate::sim::wgmma::{self, AtomOrder, Major, MatrixDescriptor, OperandTile, WgmmaKind};

/// The problem: one instruction form, the operands' majors and tiling, K and where the tiles
/// sit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaProblem {
    /// The instruction form (N, accumulator, A's and B's input types).
    pub kind: WgmmaKind,
    /// A's major and B's.
    pub majors: [Major; 2],
    /// The swizzle mode of both operand tiles.
    pub swizzle: TmaSwizzle,
    /// How the atoms are tiled over each operand.
    pub order: AtomOrder,
    /// K in elements of the input type; `None`: one swizzle span of K-major rows (128 bytes
    /// for 128B), at least one instruction's K.
    pub k: Option<u32>,
    /// Shared-memory byte address of A's tile (B follows it).
    pub base: u32,
    /// A from registers (`wgmma ... {a-regs}, b-desc`) instead of a descriptor.
    pub a_regs: bool,
}

/// One instruction's descriptors: each as decoded fields and as its 64 encoded bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KBlock {
    /// The instruction's index along K (its k16 block of the tiles).
    pub k_block: u32,
    /// A's descriptor (`None` with A from registers).
    pub a: Option<(MatrixDescriptor, u64)>,
    /// B's descriptor.
    pub b: (MatrixDescriptor, u64),
}

/// What [`run`] placed, ran and found.
#[derive(Debug)]
pub struct WgmmaRun {
    /// K in elements of the input type.
    pub k: u32,
    /// A's tile (64 × K) and B's (N × K), K in 2-byte units.
    pub tiles: [OperandTile; 2],
    /// The end of B's tile in bytes (from shared address 0).
    pub smem_bytes: u32,
    /// The executor's steps and the functional check.
    pub check: WgmmaCheck,
    /// Per instruction, its descriptors.
    pub descriptors: Vec<KBlock>,
}

/// Refuses an MN-major operand (`imm-trans` 1) for input types that do not allow it (only
/// f16 and bf16 operands may be MN-major); `majors` are A's and B's.
///
/// # Errors
/// [`SimError::Invalid`] naming the operand and the input type.
pub fn check_majors(kind: &WgmmaKind, majors: [Major; 2]) -> Result<(), SimError> {
    for (name, m) in [("A", majors[0]), ("B", majors[1])] {
        if m == Major::Mn && !kind.allows_transpose() {
            return Err(SimError::Invalid(format!(
                "{name} MN-major (imm-trans 1) with .{} inputs is not allowed; allowed: k (only f16 and bf16 operands may be MN-major)",
                kind.a.name()
            )));
        }
    }
    Ok(())
}

/// K in elements: `k` or the default (one swizzle span, at least the instruction's K),
/// checked for 1- and 4-byte inputs (a multiple of the instruction's K, at most 512 bytes).
fn k_elements(kind: &WgmmaKind, swizzle: TmaSwizzle, k: Option<u32>) -> Result<u32, SimError> {
    let (e, kk) = (kind.a.bytes(), kind.k());
    let k = k.unwrap_or((swizzle.span_bytes() / e).max(kk));
    if e != 2 && (k == 0 || !k.is_multiple_of(kk) || k > 512 / e) {
        return Err(SimError::Invalid(format!(
            "--k {k} is not allowed with .{} inputs; allowed: a multiple of {kk} (the instruction's K) up to {}",
            kind.a.name(),
            512 / e
        )));
    }
    Ok(k)
}

/// Places the tiles, runs and checks the chain, and encodes each instruction's descriptors.
///
/// # Errors
/// [`check_majors`]; a K that is not allowed; the tiles' placement
/// ([`wgmma::operand_tiles_at`]); tiles that end past sm_90's shared memory per block; the
/// executor's; a descriptor field that does not fit.
pub fn run(p: &WgmmaProblem) -> Result<WgmmaRun, SimError> {
    let kind = p.kind;
    check_majors(&kind, p.majors)?;
    let e = kind.a.bytes();
    let k = k_elements(&kind, p.swizzle, p.k)?;
    let k16 = match e {
        2 => k,
        _ => k.checked_mul(e).map(|b| b / 2).ok_or_else(|| {
            SimError::Invalid(format!(
                "--k {k} is not allowed; allowed: at most 256 bytes of K"
            ))
        })?,
    };
    let [ma, mb] = p.majors;
    let (ta, tb, smem_bytes) =
        wgmma::operand_tiles_at(p.base, kind.n, ma, mb, p.swizzle, k16, p.order)?;
    let limit = Arch::Sm90.limits().smem_per_block_bytes;
    if smem_bytes > limit {
        return Err(SimError::Invalid(format!(
            "the operand tiles end at byte {smem_bytes}, past sm_90's {limit} bytes of shared memory per block; allowed: --base and tiles within {limit} bytes"
        )));
    }
    let check = selfcheck::wgmma_check(&WgmmaCase {
        kind,
        tiles: [&ta, &tb],
        majors: p.majors,
        a_regs: p.a_regs,
        k,
        smem_bytes,
    })?;
    let encoded = |d: MatrixDescriptor| d.encode().map(|bits| (d, bits));
    let mut descriptors = Vec::new();
    for kb in 0..check.steps.len() as u32 {
        descriptors.push(KBlock {
            k_block: kb,
            a: if p.a_regs {
                None
            } else {
                Some(encoded(ta.descriptor(kb))?)
            },
            b: encoded(tb.descriptor(kb))?,
        });
    }
    Ok(WgmmaRun {
        k,
        tiles: [ta, tb],
        smem_bytes,
        check,
        descriptors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::wgmma::{WgmmaAcc, WgmmaType};

    fn problem(t: WgmmaType, n: u32, k: Option<u32>) -> WgmmaProblem {
        let acc = if t.is_integer() {
            WgmmaAcc::S32
        } else {
            WgmmaAcc::F32
        };
        WgmmaProblem {
            kind: WgmmaKind::new(n, acc, t, t, false).unwrap(),
            majors: [Major::K; 2],
            swizzle: TmaSwizzle::B128,
            order: AtomOrder::MnFirst,
            k,
            base: 0,
            a_regs: false,
        }
    }

    /// The values `tests/sim_hopper_cli.rs` checks through `tilelab sim wgmma --json`.
    #[test]
    fn e4m3_runs_exactly_over_one_swizzle_span() {
        let r = run(&problem(WgmmaType::E4m3, 64, None)).unwrap();
        assert_eq!(r.check.max_abs_error, 0.0);
        assert_eq!(r.check.values, 128 * 32);
        assert!(
            run(&problem(WgmmaType::E4m3, 64, Some(48)))
                .unwrap_err()
                .to_string()
                .contains("multiple of 32")
        );
        let mut mn = problem(WgmmaType::E4m3, 64, None);
        mn.majors = [Major::Mn; 2];
        assert!(
            run(&mn)
                .unwrap_err()
                .to_string()
                .contains("only f16 and bf16")
        );
    }
}
