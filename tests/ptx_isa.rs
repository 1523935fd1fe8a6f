//! The simulator's fragment functions and mma execution against the PTX ISA fragment tables
//! (`tests/data/ptx_isa/`, written from the ISA's formulas by `scripts/gen_ptx_isa_tables.py`).
//!
//! * every table entry equals `mma::fragment` / `MmaKind::fragment` / `ldmatrix::fragment`;
//! * registers packed *by the tables* (not by `mma::pack`) from ndarray matrices, executed by
//!   the simulator, and D read back by the table equals `A.dot(B) + C` computed by ndarray from
//!   the original matrices; `mma::pack` and `mma::unpack` agree with the table-packed registers;
//! * `ldmatrix` through `sim::exec::execute` on index-filled memory returns, in every (lane, reg, half), the element
//!   the ldmatrix table names.

use crate::common;

use common::isa_tables::{self as isa, OperandTable};
use ndarray::Array2;
use proptest::prelude::*;
use tilelab::sim::instr::{Instruction, MatrixCount};
use tilelab::sim::ldmatrix;
use tilelab::sim::mma::{self, MmaAcc, MmaDtype, MmaKind, MmaShape, Operand, RawRegs};
use tilelab::sim::smem::SharedMemory;

/// `mma.sync` with f32 accumulators through the one executor: D in the C/D fragment layout.
fn mma_f32(shape: MmaShape, dtype: MmaDtype, regs: &tilelab::sim::mma::MmaRegs) -> [[f32; 4]; 32] {
    let op = tilelab::sim::exec::WarpOp::mma_f32(shape, dtype, regs).unwrap();
    tilelab::sim::exec::execute(&mut SharedMemory::zeroed(0), &op)
        .unwrap()
        .regs
        .map(|l| l.map(f32::from_bits))
}

/// `ldmatrix` through the one executor.
fn ldsm(
    num: MatrixCount,
    trans: bool,
    smem: &SharedMemory,
    offs: [u32; 32],
) -> Result<tilelab::sim::exec::WarpStep, tilelab::sim::error::SimError> {
    let op = tilelab::sim::exec::WarpOp::ldmatrix(num, trans, offs);
    tilelab::sim::exec::execute(&mut smem.clone(), &op)
}

/// `mma.sync` of `kind` on raw registers through the one executor: D's raw bits.
fn raw_mma(kind: MmaKind, regs: &RawRegs) -> [[u32; 4]; 32] {
    let op = tilelab::sim::exec::WarpOp::mma(kind, regs);
    tilelab::sim::exec::execute(&mut SharedMemory::zeroed(0), &op)
        .unwrap()
        .regs
}

fn shape_of(k: u32) -> MmaShape {
    match k {
        16 => MmaShape::M16N8K16,
        8 => MmaShape::M16N8K8,
        32 => MmaShape::M16N8K32,
        4 => MmaShape::M16N8K4,
        _ => panic!("k = {k}"),
    }
}

fn operand_of(name: &str) -> Operand {
    match name {
        "A" => Operand::A,
        "B" => Operand::B,
        "C/D" => Operand::C,
        _ => panic!("{name}"),
    }
}

/// Every modelled kind whose `op` has element type `ty` in the table.
fn kinds_for(shape: MmaShape, op: Operand, ty: &str) -> Vec<MmaKind> {
    let mut out = Vec::new();
    for dtype in MmaDtype::ALL {
        for acc in [MmaAcc::F32, MmaAcc::F16, MmaAcc::S32] {
            if let Ok(k) = MmaKind::new(shape, dtype, acc) {
                let name = if op == Operand::C {
                    acc.name()
                } else {
                    dtype.name()
                };
                if name == ty {
                    out.push(k);
                }
            }
        }
    }
    out
}

#[test]
fn the_tables_are_whole_and_say_where_they_come_from() {
    for f in isa::mma_files() {
        assert!(f.source.contains("PTX ISA") && f.section.starts_with("9.7.14.5."));
        assert_eq!(f.generator, "scripts/gen_ptx_isa_tables.py");
        for t in &f.operands {
            // Every lane holds rows·cols/32 elements, each matrix element exactly once.
            let mut seen = vec![0; (t.rows * t.cols) as usize];
            for &[lane, i, reg, pos, row, col] in &t.fragments {
                assert!(lane < 32 && reg < t.registers && pos < t.elements_per_register);
                assert_eq!(i, reg * t.elements_per_register + pos);
                seen[(row * t.cols + col) as usize] += 1;
            }
            assert!(
                seen.iter().all(|&n| n == 1),
                "{} {}",
                f.instruction,
                t.operand
            );
            assert_eq!(t.element_bits * t.elements_per_register, 32);
        }
    }
}

#[test]
fn mma_fragments_equal_the_isa_tables() {
    let mut checked = 0;
    for f in isa::mma_files() {
        let shape = shape_of(f.shape[2]);
        assert_eq!(shape.mnk(), (f.shape[0], f.shape[1], f.shape[2]));
        for t in &f.operands {
            let op = operand_of(&t.operand);
            assert_eq!(
                shape.dims(op),
                (t.rows, t.cols),
                "{} {}",
                f.instruction,
                t.operand
            );
            for ty in &t.types {
                // A C/D table serves the kinds of its own file's input width only.
                let width = f.operands[0].element_bits;
                let kinds: Vec<MmaKind> = kinds_for(shape, op, ty)
                    .into_iter()
                    .filter(|k| k.dtype.bits() == width)
                    .collect();
                assert!(!kinds.is_empty(), "{} {ty}: no kind", f.instruction);
                for kind in kinds {
                    assert_eq!(kind.regs(op), t.registers, "{} {op:?}", kind.ptx());
                    assert_eq!(kind.elems_per_reg(op), t.elements_per_register);
                    for &[lane, i, reg, pos, row, col] in &t.fragments {
                        assert_eq!(
                            kind.fragment(op, lane, reg, pos),
                            (row, col),
                            "{}: {} lane {lane} element {i} (reg {reg} pos {pos})",
                            kind.ptx(),
                            t.operand
                        );
                        assert_eq!(mma::element_bits(shape, width, op, lane, i), (row, col));
                        // The shape-level API is the 32-bit-accumulator layout of the shape's
                        // default input width.
                        if width == shape.default_bits()
                            && (kind.acc != MmaAcc::F16 || op != Operand::C)
                        {
                            assert_eq!(mma::element(shape, op, lane, i), (row, col));
                            assert_eq!(mma::fragment(shape, op, lane, reg, pos), (row, col));
                            assert_eq!(shape.regs(op), t.registers);
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    // 6 tables over every modelled (dtype, acc): a fixed number of entries. 7552 for the first
    // three before bf16 m16n8k8 was modelled, which adds its A (128), B (64) and f32 C/D (128);
    // m16n8k4 tf32 A 64 + B 32 + C/D 128; m16n8k8 tf32 128 + 64 + 128; m16n8k16 8-bit with s8
    // and u8: 2 x (256 + 128 + 128).
    assert_eq!(checked, 7552 + 320 + 224 + 320 + 1024);
}

#[test]
fn ldmatrix_and_stmatrix_tables_equal_the_fragment_function() {
    for file in [isa::ldmatrix_file(), isa::stmatrix_file()] {
        assert_eq!(file.element_bits, 16);
        assert_eq!(file.forms.len(), 6);
        for f in &file.forms {
            assert_eq!(f.fragments.len(), 32 * f.num as usize * 2);
            // The simulator has no stmatrix: §9.7.14.5.16 (Figure 107) gives it the layout of
            // ldmatrix (Figure 104), which is the function both tables are checked against.
            for &[lane, reg, half, m, row, col] in &f.fragments {
                let e = ldmatrix::fragment(f.trans, lane, reg, half);
                assert_eq!(
                    (e.matrix, e.row, e.col),
                    (m, row, col),
                    "{} lane {lane} r{reg}.{half}",
                    f.ptx
                );
                assert_eq!(
                    ldmatrix::owner(f.trans, row, col),
                    (lane, half),
                    "{}",
                    f.ptx
                );
            }
            let ins = Instruction::Ldmatrix {
                num: MatrixCount::from_count(f.num).unwrap(),
                trans: f.trans,
            };
            let mut mask = 0u32;
            for &[lane, m, row] in &f.address_lanes {
                assert_eq!(ldmatrix::address_lane(m, row), lane, "{}", f.ptx);
                mask |= 1 << lane;
            }
            assert_eq!(ins.address_lanes(), mask, "{}", f.ptx);
        }
    }
}

#[test]
fn ldmatrix_execute_delivers_what_the_table_names() {
    // Index-filled memory: the b16 at byte 2i holds i, so every loaded value names its address.
    let smem = SharedMemory::with_b16_indices(32768);
    for (num, trans) in [1, 2, 4].into_iter().flat_map(|n| [(n, false), (n, true)]) {
        let f = isa::ldmatrix_form(num, trans);
        // Rows of each matrix scattered over memory (a 16-byte aligned row per address lane).
        let mut offs = [0u32; 32];
        for &[lane, m, row] in &f.address_lanes {
            offs[lane as usize] = ((m * 37 + row * 11) % 64) * 80 + (row % 2) * 16 + m * 5120;
        }
        let res = ldsm(MatrixCount::from_count(num).unwrap(), trans, &smem, offs).unwrap();
        let addr_lane = |m: u32, r: u32| {
            f.address_lanes
                .iter()
                .find(|a| a[1] == m && a[2] == r)
                .unwrap()[0]
        };
        for &[lane, reg, half, m, row, col] in &f.fragments {
            let want = (offs[addr_lane(m, row) as usize] + 2 * col) / 2;
            let got = (res.regs[lane as usize][reg as usize] >> (16 * half)) & 0xffff;
            assert_eq!(got, want, "{} lane {lane} r{reg}.{half}", f.ptx);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reference products from unpacked inputs.

/// A kind's three tables: A and B by input type, C/D by accumulator type.
fn tables(kind: MmaKind) -> (OperandTable, OperandTable, OperandTable) {
    let k = kind.shape.mnk().2;
    (
        isa::mma_table(k, "A", kind.dtype.name()),
        isa::mma_table(k, "B", kind.dtype.name()),
        isa::mma_table(k, "C/D", kind.acc.name()),
    )
}

fn to_raw(a: &[Vec<u32>], b: &[Vec<u32>], c: &[Vec<u32>]) -> RawRegs {
    let mut r = RawRegs::zero();
    for lane in 0..32 {
        for (j, &v) in a[lane].iter().enumerate() {
            r.a[lane][j] = v;
        }
        for (j, &v) in b[lane].iter().enumerate() {
            r.b[lane][j] = v;
        }
        for (j, &v) in c[lane].iter().enumerate() {
            r.c[lane][j] = v;
        }
    }
    r
}

/// Values exactly representable in `ty`, drawn by `pick(n)` ∈ 0..n: small integers for the
/// integer types; for the float types (1 + m/2^mb)·2^e with the type's mantissa bits mb, small
/// exponents and both signs, or 0.
fn exact_value(ty: &str, pick: &mut dyn FnMut(u32) -> u32) -> f64 {
    match ty {
        "s8" => pick(256) as f64 - 128.0,
        "u8" => pick(256) as f64,
        "s32" => pick(2_000_001) as f64 - 1_000_000.0,
        _ => {
            let mb = match ty {
                "e5m2" => 2,
                "e4m3" => 3,
                "bf16" => 7,
                "f16" | "tf32" => 10,
                "f32" => 23,
                _ => panic!("{ty}"),
            };
            if pick(8) == 0 {
                return 0.0;
            }
            // At most 3 mantissa bits and exponents -3..=3: products have at most 8 significant
            // bits, so sums of 32 of them are exact in f64.
            let top = mb.min(3);
            let m = pick(1 << top) as f64 / (1u32 << top) as f64;
            let e = pick(7) as i32 - 3;
            let s = if pick(2) == 0 { 1.0 } else { -1.0 };
            s * (1.0 + m) * 2f64.powi(e)
        }
    }
}

/// Draws A, B, C, packs them by the ISA tables, executes the simulator's mma, reads D back by
/// the table and compares with `A.dot(B) + C` from ndarray on the original matrices. Returns
/// max |D − reference| / max(1, |reference|).
fn check_product(kind: MmaKind, seed: u64) -> f64 {
    let mut s = seed | 1;
    let mut pick = move |n: u32| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 11) % n as u64) as u32
    };
    let (ta, tb, tc) = tables(kind);
    let (dt, acc) = (kind.dtype.name(), kind.acc.name());
    let a = Array2::from_shape_simple_fn((ta.rows as usize, ta.cols as usize), || {
        exact_value(dt, &mut pick)
    });
    let b = Array2::from_shape_simple_fn((tb.rows as usize, tb.cols as usize), || {
        exact_value(dt, &mut pick)
    });
    let c = Array2::from_shape_simple_fn((tc.rows as usize, tc.cols as usize), || {
        // f16 accumulators: keep C small so that D stays exact in f16 for integer-valued data.
        if acc == "f16" {
            exact_value("e4m3", &mut pick)
        } else {
            exact_value(acc, &mut pick)
        }
    });
    let regs = to_raw(
        &isa::pack_by_table(&ta, &a, &*isa::encoder(dt)),
        &isa::pack_by_table(&tb, &b, &*isa::encoder(dt)),
        &isa::pack_by_table(&tc, &c, &*isa::encoder(acc)),
    );
    // mma::pack and unpack agree with the table-packed registers.
    let packed = kind.pack(&a, &b, &c).unwrap();
    assert_eq!(
        packed,
        regs,
        "{}: MmaKind::pack differs from the ISA table packing",
        kind.ptx()
    );
    for (op, m) in [(Operand::A, &a), (Operand::B, &b), (Operand::C, &c)] {
        assert_eq!(
            &kind.unpack(op, &regs),
            m,
            "{}: unpack of {op:?}",
            kind.ptx()
        );
    }
    let d = raw_mma(kind, &regs);
    let got = isa::unpack_by_table(
        &tc,
        &|lane, reg| d[lane as usize][reg as usize],
        &*isa::decoder(acc),
    );
    let want = a.dot(&b) + &c;
    got.iter()
        .zip(want.iter())
        .map(|(g, w)| (g - w).abs() / w.abs().max(1.0))
        .fold(0.0, f64::max)
}

fn every_kind() -> Vec<MmaKind> {
    let mut v = Vec::new();
    for shape in MmaShape::ALL {
        for dtype in MmaDtype::ALL {
            for acc in [MmaAcc::F32, MmaAcc::F16, MmaAcc::S32] {
                if let Ok(k) = MmaKind::new(shape, dtype, acc) {
                    v.push(k);
                }
            }
        }
    }
    v
}

#[test]
fn every_modelled_kind_is_listed() {
    let names: Vec<String> = every_kind().iter().map(|k| k.ptx()).collect();
    assert_eq!(
        names,
        [
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
            "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
            "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32",
            "mma.sync.aligned.m16n8k16.row.col.s32.u8.u8.s32",
            "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
            "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16",
            "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32",
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
            "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
            "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32",
            "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
            "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16",
            "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32",
            "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16",
            "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32",
        ]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The product of table-packed inputs equals ndarray's on the original matrices. Inputs are
    /// exact in their type; integer sums are exact; float sums of these values are exact in f64,
    /// so the only error allowed is D's one rounding to the accumulator type.
    #[test]
    fn mma_of_table_packed_inputs_equals_the_ndarray_product(seed in any::<u64>(), which in 0usize..16) {
        let kind = every_kind()[which];
        let err = check_product(kind, seed);
        let ulp = match kind.acc { MmaAcc::F32 => 2f64.powi(-23), MmaAcc::F16 => 2f64.powi(-10), MmaAcc::S32 => 0.0 };
        prop_assert!(err <= ulp, "{}: relative error {err}", kind.ptx());
    }
}

#[test]
fn small_integer_products_are_exact_for_every_kind() {
    // Integers in -3..=3 (0..=3 for u8): exact in every input type, sums below 2^11 so exact in
    // f16 accumulators too.
    for kind in every_kind() {
        let (ta, tb, tc) = tables(kind);
        let lo = if kind.dtype == MmaDtype::U8 { 0 } else { -3 };
        let span = (3 - lo + 1) as usize;
        let a = Array2::from_shape_fn((ta.rows as usize, ta.cols as usize), |(i, j)| {
            ((i * 7 + j * 3) % span) as f64 + lo as f64
        });
        let b = Array2::from_shape_fn((tb.rows as usize, tb.cols as usize), |(i, j)| {
            ((i * 5 + j * 11 + 1) % span) as f64 + lo as f64
        });
        let c = Array2::from_shape_fn((tc.rows as usize, tc.cols as usize), |(i, j)| {
            ((i + 2 * j) % 5) as f64 - 2.0
        });
        let (dt, acc) = (kind.dtype.name(), kind.acc.name());
        let regs = to_raw(
            &isa::pack_by_table(&ta, &a, &*isa::encoder(dt)),
            &isa::pack_by_table(&tb, &b, &*isa::encoder(dt)),
            &isa::pack_by_table(&tc, &c, &*isa::encoder(acc)),
        );
        let d = raw_mma(kind, &regs);
        let got = isa::unpack_by_table(&tc, &|l, r| d[l as usize][r as usize], &*isa::decoder(acc));
        let want = a.dot(&b) + &c;
        assert_eq!(got, want, "{}", kind.ptx());
        assert!(want.iter().any(|&x| x != 0.0) && want.iter().any(|&x| x < 0.0 || lo == 0));
    }
}

#[test]
fn legacy_f32_api_agrees_with_the_tables() {
    // mma::pack / unpack / execute (f32 accumulators, f32 matrices) on the same table packing.
    for (shape, dtype) in [
        (MmaShape::M16N8K16, MmaDtype::F16),
        (MmaShape::M16N8K16, MmaDtype::Bf16),
        (MmaShape::M16N8K8, MmaDtype::F16),
        (MmaShape::M16N8K32, MmaDtype::E4m3),
    ] {
        let k = shape.mnk().2;
        let dt = dtype.name();
        let (ta, tb, tc) = (
            isa::mma_table(k, "A", dt),
            isa::mma_table(k, "B", dt),
            isa::mma_table(k, "C/D", "f32"),
        );
        let a = Array2::from_shape_fn((ta.rows as usize, ta.cols as usize), |(i, j)| {
            ((i * 3 + j) % 7) as f64 - 3.0
        });
        let b = Array2::from_shape_fn((tb.rows as usize, tb.cols as usize), |(i, j)| {
            ((i + 5 * j) % 5) as f64 - 2.0
        });
        let c = Array2::from_shape_fn((tc.rows as usize, tc.cols as usize), |(i, j)| {
            (i * 8 + j) as f64 * 0.5
        });
        let ra = isa::pack_by_table(&ta, &a, &*isa::encoder(dt));
        let rb = isa::pack_by_table(&tb, &b, &*isa::encoder(dt));
        let regs = mma::pack(
            shape,
            dtype,
            &a.mapv(|v| v as f32),
            &b.mapv(|v| v as f32),
            &c.mapv(|v| v as f32),
        )
        .unwrap();
        for lane in 0..32 {
            assert_eq!(
                &regs.a[lane][..ta.registers as usize],
                &ra[lane][..],
                "{shape:?} {dtype:?} A lane {lane}"
            );
            assert_eq!(
                &regs.b[lane][..tb.registers as usize],
                &rb[lane][..],
                "{shape:?} {dtype:?} B lane {lane}"
            );
        }
        assert_eq!(
            mma::unpack(shape, dtype, Operand::A, &regs).mapv(f64::from),
            a
        );
        assert_eq!(
            mma::unpack(shape, dtype, Operand::B, &regs).mapv(f64::from),
            b
        );
        assert_eq!(
            mma::unpack(shape, dtype, Operand::C, &regs).mapv(f64::from),
            c
        );
        let d = mma_f32(shape, dtype, &regs);
        let got = isa::unpack_by_table(
            &tc,
            &|l, r| d[l as usize][r as usize].to_bits(),
            &*isa::decoder("f32"),
        );
        assert_eq!(got, a.dot(&b) + &c, "{shape:?} {dtype:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// The warp executor (sim::exec) against the same tables.

#[test]
fn exec_stmatrix_and_ldmatrix_move_what_the_tables_name() {
    use tilelab::sim::exec::{WarpOp, execute};
    for (num, trans) in [1u32, 2, 4]
        .into_iter()
        .flat_map(|n| [(n, false), (n, true)])
    {
        let count = MatrixCount::from_count(num).unwrap();
        let st = isa::stmatrix_file()
            .forms
            .into_iter()
            .find(|f| f.num == num && f.trans == trans)
            .unwrap();
        let mut addrs = [0u32; 32];
        for &[lane, m, row] in &st.address_lanes {
            addrs[lane as usize] = 1024 * m + 48 * row + 16 * (row % 3);
        }
        // Lane l's register r, half h holds the tag 1 + 64 l + 2 r + h.
        let tag = |lane: u32, reg: u32, half: u32| 1 + 64 * lane + 2 * reg + half;
        let data = std::array::from_fn(|l| {
            std::array::from_fn(|r| tag(l as u32, r as u32, 0) | tag(l as u32, r as u32, 1) << 16)
        });
        let mut smem = SharedMemory::zeroed(8192);
        execute(&mut smem, &WarpOp::stmatrix(count, trans, addrs, data)).unwrap();
        let addr_of = |m: u32, row: u32, col: u32| {
            let lane = st
                .address_lanes
                .iter()
                .find(|a| a[1] == m && a[2] == row)
                .unwrap()[0];
            addrs[lane as usize] + 2 * col
        };
        for &[lane, reg, half, m, row, col] in &st.fragments {
            let got = smem.read_u16(addr_of(m, row, col)).unwrap() as u32;
            assert_eq!(
                got,
                tag(lane, reg, half),
                "{} lane {lane} r{reg}.{half}",
                st.ptx
            );
        }
        // ldmatrix of the same rows reads every tag back into the register it came from.
        let back = execute(&mut smem, &WarpOp::ldmatrix(count, trans, addrs)).unwrap();
        let ld = isa::ldmatrix_form(num, trans);
        for &[lane, reg, half, ..] in &ld.fragments {
            let got = (back.regs[lane as usize][reg as usize] >> (16 * half)) & 0xffff;
            assert_eq!(
                got,
                tag(lane, reg, half),
                "{} lane {lane} r{reg}.{half}",
                ld.ptx
            );
        }
    }
}

#[test]
fn exec_mma_uses_the_default_accumulator_of_each_input_type() {
    use tilelab::sim::exec::{WarpOp, execute};
    // s8 inputs accumulate in s32: D = A·B + C with a C that is not exact in f32 (2^24 + 1).
    let kind = MmaKind::new(MmaShape::M16N8K32, MmaDtype::S8, MmaAcc::S32).unwrap();
    let (ta, tb, tc) = tables(kind);
    let a = Array2::from_shape_fn((16, 32), |(i, j)| ((i * 7 + j) % 255) as f64 - 127.0);
    let b = Array2::from_shape_fn((32, 8), |(i, j)| ((i * 3 + j * 5) % 200) as f64 - 100.0);
    let c = Array2::from_shape_fn((16, 8), |(i, j)| 16_777_217.0 + (i * 8 + j) as f64);
    let widen = |r: Vec<Vec<u32>>| -> [[u32; 4]; 32] {
        std::array::from_fn(|l| std::array::from_fn(|j| r[l].get(j).copied().unwrap_or(0)))
    };
    let op = WarpOp::Mma {
        kind,
        a: widen(isa::pack_by_table(&ta, &a, &*isa::encoder("s8"))),
        b: widen(isa::pack_by_table(&tb, &b, &*isa::encoder("s8"))),
        c: widen(isa::pack_by_table(&tc, &c, &*isa::encoder("s32"))),
    };
    let step = execute(&mut SharedMemory::zeroed(0), &op).unwrap();
    assert_eq!(step.regs_per_lane, 4);
    let got = isa::unpack_by_table(
        &tc,
        &|l, r| step.regs[l as usize][r as usize],
        &*isa::decoder("s32"),
    );
    assert_eq!(got, a.dot(&b) + &c);
}
