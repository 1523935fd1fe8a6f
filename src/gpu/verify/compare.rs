//! Comparison of simulated and measured results (pure: no GPU needed, so the logic is tested in
//! CI). The checks of [`super`] turn these comparisons into rows
//! ([`super::Check`]).

use serde::Serialize;

use crate::sim::instr::MatrixCount;
use crate::sim::ldmatrix::MatrixElem;
use ndarray::Array2;

use crate::sim::exec::{self, WarpOp};
use crate::sim::mma::{MmaDtype, MmaRegs, MmaShape};
use crate::sim::smem::SharedMemory;

/// A register that differs: lane, register, expected and measured bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RegDiff {
    /// Lane 0-31.
    pub lane: usize,
    /// Destination register index.
    pub reg: usize,
    /// What the simulator expected.
    pub expected: u32,
    /// What the GPU returned.
    pub got: u32,
}

/// A fragment table: (trans, lane, reg, half) -> element, like [`crate::sim::ldmatrix::fragment`].
pub type LdsmTable = dyn Fn(bool, u32, u32, u32) -> MatrixElem;

/// The registers `ldmatrix` should return under `table`, with shared memory filled with b16
/// indices (value at byte 2i = i), for the lane row addresses `offs` (bytes).
pub fn ldmatrix_expected(
    table: &LdsmTable,
    num: MatrixCount,
    trans: bool,
    offs: &[u32; 32],
    smem: &SharedMemory,
) -> Result<[[u32; 4]; 32], crate::sim::SimError> {
    let mut regs = [[0u32; 4]; 32];
    for lane in 0..32u32 {
        for r in 0..num.count() as u32 {
            let mut v = 0u32;
            for h in 0..2 {
                let e = table(trans, lane, r, h);
                let addr = offs[(8 * e.matrix + e.row) as usize] + 2 * e.col;
                v |= (smem.read_u16(addr)? as u32) << (16 * h);
            }
            regs[lane as usize][r as usize] = v;
        }
    }
    Ok(regs)
}

/// Registers that differ between expected and measured (only the first `num` registers count).
pub fn diff_regs(num: usize, expected: &[[u32; 4]; 32], got: &[[u32; 4]; 32]) -> Vec<RegDiff> {
    let mut d = Vec::new();
    for lane in 0..32 {
        for reg in 0..num {
            if expected[lane][reg] != got[lane][reg] {
                d.push(RegDiff {
                    lane,
                    reg,
                    expected: expected[lane][reg],
                    got: got[lane][reg],
                });
            }
        }
    }
    d
}

/// Describes register differences in one line (the first few, with b16 halves decoded).
pub fn describe_diffs(d: &[RegDiff]) -> String {
    if d.is_empty() {
        return "all registers equal".into();
    }
    let first: Vec<String> = d
        .iter()
        .take(3)
        .map(|x| {
            format!(
                "lane {} r{}: expected ({},{}) got ({},{})",
                x.lane,
                x.reg,
                x.expected & 0xffff,
                x.expected >> 16,
                x.got & 0xffff,
                x.got >> 16
            )
        })
        .collect();
    format!("{} registers differ; {}", d.len(), first.join("; "))
}

/// Result of checking one mma on the GPU.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MmaCheck {
    /// max |D_gpu − D_sim| over the 16×8 result (D_sim: the simulator executing the registers
    /// that were uploaded).
    pub max_err_vs_sim: f64,
    /// max |D_gpu − (A·B + C)|, the reference in f64 from the matrices the check generated (A and
    /// B rounded to the input type), never from the simulator's registers; D_gpu placed by the
    /// PTX ISA's C/D table ([`cd_element`]). A packer that puts a value in the wrong register or
    /// loses half of one shows up here.
    pub max_err_vs_reference: f64,
}

/// Where lane `lane`'s accumulator register `reg` (0-3) sits in the 16×8 C/D matrix of
/// `mma.m16n8k16` / `mma.m16n8k8` with f32 accumulators: (row, col) = (groupID + 8·(reg / 2),
/// 2·threadID_in_group + reg % 2), groupID = lane / 4, threadID_in_group = lane % 4 (PTX ISA,
/// "Matrix Fragments for mma.m16n8k16", accumulators C/D; the same for m16n8k8). Written out here
/// rather than taken from `sim::mma`, so the check does not lean on the code it checks.
pub fn cd_element(lane: usize, reg: usize) -> (usize, usize) {
    (lane / 4 + 8 * (reg / 2), 2 * (lane % 4) + reg % 2)
}

/// Compares the GPU's D registers (`gpu_d`, `[lane][reg]` f32) with the simulator executing
/// `regs` (what was uploaded) and with an f64 reference `A·B + C` from the inputs `[a, b, c]`
/// themselves: A (M×K) and B (K×N) rounded to `dtype` as the registers hold them, C (M×N) f32.
///
/// # Panics
/// If the inputs are not the shape's M×K, K×N, M×N.
pub fn mma_check(
    shape: MmaShape,
    dtype: MmaDtype,
    [a, b, c]: [&Array2<f32>; 3],
    regs: &MmaRegs,
    gpu_d: &[[f32; 4]; 32],
) -> MmaCheck {
    // The executor refuses only a (shape, dtype) with no f32-accumulator form; its D is then
    // NaN, which no GPU value equals.
    let sim_d = WarpOp::mma_f32(shape, dtype, regs)
        .and_then(|op| exec::execute(&mut SharedMemory::zeroed(0), &op))
        .map_or([[f32::NAN; 4]; 32], |s| {
            s.regs.map(|l| l.map(f32::from_bits))
        });
    let max_err_vs_sim = sim_d
        .iter()
        .flatten()
        .zip(gpu_d.iter().flatten())
        .map(|(s, g)| (*s as f64 - *g as f64).abs())
        .fold(0.0, f64::max);
    let round = |x: &f32| dtype.from_bits(dtype.to_bits(*x)) as f64;
    let want = a.map(round).dot(&b.map(round)) + c.mapv(f64::from);
    let (m, n) = (want.nrows(), want.ncols());
    assert_eq!((m, n), (16, 8), "mma_check: C/D must be 16x8");
    let mut max_err_vs_reference = 0.0f64;
    for (lane, d) in gpu_d.iter().enumerate() {
        for (reg, &v) in d.iter().enumerate() {
            let (r, col) = cd_element(lane, reg);
            max_err_vs_reference = max_err_vs_reference.max((v as f64 - want[(r, col)]).abs());
        }
    }
    MmaCheck {
        max_err_vs_sim,
        max_err_vs_reference,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::ldmatrix;

    #[test]
    fn identical_tables_agree() {
        let smem = SharedMemory::with_b16_indices(4096);
        let offs = std::array::from_fn(|l| l as u32 * 16);
        let a =
            ldmatrix_expected(&ldmatrix::fragment, MatrixCount::X4, true, &offs, &smem).unwrap();
        assert!(diff_regs(4, &a, &a).is_empty());
    }
}

/// Measured shared-load wavefronts of one multi-warp kernel launch that loads shared memory only
/// with `ldmatrix`, from Nsight Compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelWavefronts {
    /// Wavefronts attributed to the executed `LDSM` instructions by ncu's SASS patching
    /// (`smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum`).
    pub per_instruction: i64,
    /// The L1TEX unit's counter (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum`).
    pub l1tex: i64,
    /// The L1TEX unit's load bank conflicts
    /// (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum`).
    pub l1tex_conflicts: i64,
}

/// The largest L1TEX surplus measured on the H200 over the per-instruction wavefronts of a
/// multi-warp kernel, as (surplus, per-instruction wavefronts): 28 of 2,560, i.e. 1.09%
/// (GEMM 64x64x128, 4 warps, `pad:8`, 4 CTAs, the 12:39 UTC run of 2026-11-29 in
/// `docs/log/2026-11-29-verify.md`). Every measured surplus (`docs/wavefront-model.md`, "Beyond one
/// instruction"): GEMM `pad:8` 25, 26, 27, 27, 28 of 2,560 (0.98-1.09%), GEMM `swizzle:3,3,3`
/// 20, 20, 20, 24, 24 of 5,120 (0.39-0.47%), the FA2 bm = 128 build with register spills 433 of
/// 81,920 and 508 of 51,200 (0.53%, 0.99%); one warp and the current FA2 builds: none.
pub const L1TEX_SURPLUS_MEASURED_MAX: (i64, i64) = (28, 2560);

/// A surplus above this many times [`L1TEX_SURPLUS_MEASURED_MAX`] (3.28%) fails: far outside
/// anything the hardware was seen to re-issue.
pub const L1TEX_SURPLUS_FAIL_FACTOR: i64 = 3;

/// Where a kernel's L1TEX load-wavefront counter stands against the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L1texBand {
    /// Equal to the simulated wavefronts (and the per-instruction count exact).
    Exact,
    /// A surplus booked entirely as bank conflicts, at most [`L1TEX_SURPLUS_MEASURED_MAX`] of
    /// the simulated wavefronts: re-issued wavefronts, as measured before.
    WithinMeasured,
    /// Booked as conflicts, above the measured bound but at most
    /// [`L1TEX_SURPLUS_FAIL_FACTOR`] times it: passes with a warning.
    AboveMeasured,
    /// Booked as conflicts but more than [`L1TEX_SURPLUS_FAIL_FACTOR`] times the measured
    /// bound: fails.
    FarAbove,
    /// Not explained: the per-instruction count differs from the simulation, the surplus is not
    /// all booked as conflicts, or the counter is below the simulation. Fails.
    Unexplained,
}

/// The band of a kernel's L1TEX counter (`m`) against the simulator's totals (`sim_wavefronts`,
/// `sim_conflicts`): see [`L1texBand`]. A surplus is compared with the measured bound as a
/// fraction of `sim_wavefronts` (exact rational arithmetic).
pub fn l1tex_band(m: &KernelWavefronts, sim_wavefronts: i64, sim_conflicts: i64) -> L1texBand {
    let surplus = m.l1tex - sim_wavefronts;
    if m.per_instruction != sim_wavefronts || surplus < 0 {
        return L1texBand::Unexplained;
    }
    if surplus == 0 {
        return L1texBand::Exact;
    }
    if m.l1tex_conflicts - sim_conflicts != surplus {
        return L1texBand::Unexplained;
    }
    let (max_surplus, of) = L1TEX_SURPLUS_MEASURED_MAX;
    // surplus / sim <= max_surplus / of, in i128 so no product overflows.
    let scaled = surplus as i128 * of as i128;
    let bound = max_surplus as i128 * sim_wavefronts as i128;
    if scaled <= bound {
        L1texBand::WithinMeasured
    } else if scaled <= bound * L1TEX_SURPLUS_FAIL_FACTOR as i128 {
        L1texBand::AboveMeasured
    } else {
        L1texBand::FarAbove
    }
}

/// Verdicts of the two kernel wavefront checks against the simulator's totals (`sim_wavefronts`,
/// `sim_conflicts`): (per-instruction count equal, L1TEX counter explained).
///
/// The L1TEX counter is explained when it equals the simulation, or when the per-instruction
/// count is exact and the whole surplus is booked by the unit as bank conflicts (its conflict
/// count exceeds the simulated one by exactly the surplus): wavefronts the unit re-issued while
/// several warps shared it, which the addresses did not ask for, up to
/// [`L1TEX_SURPLUS_FAIL_FACTOR`] times the largest surplus measured ([`l1tex_band`] tells a
/// surplus within the measured range from one above it). A surplus that is not all conflicts or
/// is far above the measured range, a deficit, or a wrong per-instruction count fails.
pub fn kernel_wavefront_verdicts(
    m: &KernelWavefronts,
    sim_wavefronts: i64,
    sim_conflicts: i64,
) -> (bool, bool) {
    let per_instr = m.per_instruction == sim_wavefronts;
    let band = l1tex_band(m, sim_wavefronts, sim_conflicts);
    (
        per_instr,
        !matches!(band, L1texBand::FarAbove | L1texBand::Unexplained),
    )
}
