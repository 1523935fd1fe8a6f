//! Group `fragments`: register contents after every `ldmatrix` form and `mma` results
//! (`kernels/fragments.cu`), and the SASS of the probe and fragment kernels (one
//! `LDS*`/`STS*`/`LDSM*` per probe kind, one `HMMA*` per mma kind).

use ndarray::Array2;

use super::{Check, Context, Group, Plan};
use crate::gpu::compare;
use crate::gpu::device::{Compiled, Gpu};
use crate::gpu::fuzz;
use crate::gpu::launch::{LdsmDump, MmaDump};
use crate::gpu::sass;
use crate::gpu::source::{FRAGMENTS_CU, SMEM_PROBE_CU};
use crate::sim::instr::{Instruction, MatrixCount};
use crate::sim::ldmatrix;
use crate::sim::mma::{self, MmaShape};
use crate::sim::smem::SharedMemory;

/// The group.
pub const GROUP: Group = Group {
    name: "fragments",
    about: "ldmatrix registers, mma results, SASS of the probe and fragment kernels",
    run,
};

/// The six `ldmatrix` forms, in the order of the table.
const LDSM_FORMS: [(MatrixCount, bool); 6] = [
    (MatrixCount::X1, false),
    (MatrixCount::X2, false),
    (MatrixCount::X4, false),
    (MatrixCount::X1, true),
    (MatrixCount::X2, true),
    (MatrixCount::X4, true),
];

/// `kernels/fragments.cu`, compiled once per run.
pub(super) fn fragments_module(ctx: &mut Context<'_>) -> anyhow::Result<std::rc::Rc<Compiled>> {
    ctx.compiled("fragments.cu", |gpu| {
        Ok(gpu.compile("fragments.cu", FRAGMENTS_CU)?)
    })
}

/// `kernels/smem_probe.cu`, compiled once per run.
pub(super) fn probe_module(ctx: &mut Context<'_>) -> anyhow::Result<std::rc::Rc<Compiled>> {
    ctx.compiled("smem_probe.cu", |gpu| {
        Ok(gpu.compile("smem_probe.cu", SMEM_PROBE_CU)?)
    })
}

fn run(ctx: &mut Context<'_>, _plan: &Plan) -> anyhow::Result<Vec<Check>> {
    ctx.progress.start("compiling kernels with NVRTC");
    let probe = probe_module(ctx)?;
    let frags = fragments_module(ctx)?;
    ctx.progress.finish();
    let gpu = ctx.gpu()?;
    let mut out = ldmatrix_checks(gpu, &frags)?;
    out.extend(mma_checks(gpu, &frags)?);
    out.extend(sass_checks(ctx, &probe.cubin, &frags.cubin));
    Ok(out)
}

/// ldmatrix register dumps against the simulator's fragment table, with shared memory filled
/// with b16 indices, under two address patterns: a 16x16 f16 tile (32-byte pitch) and
/// scattered rows.
fn ldmatrix_checks(gpu: &Gpu, frags: &Compiled) -> anyhow::Result<Vec<Check>> {
    let dump = LdsmDump::load(gpu, frags)?;
    let smem_bytes = 8192u32;
    let smem = SharedMemory::with_b16_indices(smem_bytes);
    let tile: [u32; 32] = std::array::from_fn(|l| {
        let (m, r) = (l as u32 / 8, l as u32 % 8);
        ((m % 2) * 8 + r) * 32 + (m / 2) * 16
    });
    let scattered: [u32; 32] = std::array::from_fn(|l| ((l as u32 * 37 + 11) % 512) * 16);
    let mut out = Vec::new();
    for (num, trans) in LDSM_FORMS {
        for (pname, offs) in [("16x16 tile", &tile), ("scattered rows", &scattered)] {
            let hw = dump.run(gpu, num, trans, offs, smem_bytes)?;
            let want = compare::ldmatrix_expected(&ldmatrix::fragment, num, trans, offs, &smem)?;
            let d = compare::diff_regs(num.count(), &want, &hw);
            let ins = Instruction::Ldmatrix { num, trans };
            out.push(Check::new(
                "fragments",
                format!("{ins} {pname}"),
                format!("{} regs", 32 * num.count()),
                format!("{} equal", 32 * num.count() - d.len()),
                d.is_empty(),
                compare::describe_diffs(&d),
            ));
        }
    }
    Ok(out)
}

/// Deterministic mma inputs ([`crate::seeded`]): small integers in -4..=4 (exact in f16, bf16
/// and f32) or N(0,1) values.
struct MmaInputs {
    rng: crate::seeded::Seeded,
}

impl MmaInputs {
    /// A, B and C of `shape`, small integers or normal values.
    fn operands(&mut self, shape: MmaShape, random: bool) -> [Array2<f32>; 3] {
        let dims = |op| {
            let (r, c) = shape.dims(op);
            (r as usize, c as usize)
        };
        let mut gen_val = || -> f32 {
            if random {
                self.rng.normal() as f32
            } else {
                self.rng.int_in(-4, 4) as f32
            }
        };
        let a = Array2::from_shape_simple_fn(dims(mma::Operand::A), &mut gen_val);
        let b = Array2::from_shape_simple_fn(dims(mma::Operand::B), &mut gen_val);
        let c = Array2::from_shape_simple_fn(dims(mma::Operand::C), &mut gen_val);
        [a, b, c]
    }
}

/// mma results: small integers (exact) and N(0,1)-like inputs (tolerance 1e-5 absolute), against
/// an f64 reference from the generated matrices (never from the packed registers).
fn mma_checks(gpu: &Gpu, frags: &Compiled) -> anyhow::Result<Vec<Check>> {
    let dump = MmaDump::load(gpu, frags)?;
    let mut inputs = MmaInputs {
        rng: crate::seeded::Seeded::new(0x1234_5678_9abc_def1),
    };
    let mut out = Vec::new();
    for (shape, dtype) in MmaDump::KINDS {
        for random in [false, true] {
            let [a, b, c] = inputs.operands(shape, random);
            let regs = mma::pack(shape, dtype, &a, &b, &c)?;
            let d = dump.run(gpu, shape, dtype, &regs.a, &regs.b, &regs.c)?;
            let m = compare::mma_check(shape, dtype, [&a, &b, &c], &regs, &d);
            let (tol, what) = if random {
                (1e-5, "N(0,1) inputs, tol 1e-5")
            } else {
                (0.0, "small integers, exact")
            };
            out.push(Check::new(
                "fragments",
                format!("{} {what}", shape.sass(dtype)),
                "A·B+C",
                format!("err {:.1e}", m.max_err_vs_reference),
                m.max_err_vs_reference <= tol && m.max_err_vs_sim <= tol.max(1e-6),
                format!(
                    "max |D_gpu - reference| = {:e}, max |D_gpu - D_sim| = {:e}",
                    m.max_err_vs_reference, m.max_err_vs_sim
                ),
            ));
        }
    }
    Ok(out)
}

/// The SASS of the probe and fragment kernels holds exactly the mnemonics the simulator names.
fn sass_checks(ctx: &Context<'_>, probe_cubin: &[u8], frag_cubin: &[u8]) -> Vec<Check> {
    let (pl, fl) = match (
        super::sass_listing(ctx, "smem_probe SASS", probe_cubin, "probe"),
        super::sass_listing(ctx, "mma_dump SASS", frag_cubin, "frag"),
    ) {
        (Ok(p), Ok(f)) => (p, f),
        (p, f) => return p.err().into_iter().chain(f.err()).map(|b| *b).collect(),
    };
    let get = |l: &sass::Listing, f: &str, m: &str| sass::count(l, f, m);
    let mut rows = Vec::new();
    for name in fuzz::PROBE_KINDS {
        let m = Instruction::parse(name).expect("probe kinds parse").sass();
        let n = get(&pl, "smem_probe", m);
        rows.push(Check::new(
            "sass",
            format!("smem_probe {name} -> {m}"),
            1,
            n,
            n == 1,
            "",
        ));
    }
    for (shape, dtype) in MmaDump::KINDS {
        let m = shape.sass(dtype);
        let n = get(&fl, "mma_dump", m);
        rows.push(Check::new(
            "sass",
            format!(
                "mma_dump {} -> {m}",
                shape.ptx(dtype).replace("mma.sync.aligned.", "")
            ),
            1,
            n,
            n == 1,
            "",
        ));
    }
    rows
}
