//! The one executor (`sim::exec::execute`) at warpgroup and bulk scope, the tensor map rules and
//! the instruction table, against the PTX ISA (9.7.15 wgmma register fragments and matrix
//! descriptors, written out here as data), the CUDA driver API's `cuTensorMapEncodeTiled` rules,
//! the OCP FP8 code table (`tests/data/ofp8_codes.json`, from ml_dtypes) and matrix products
//! summed here in plain f64 loops.

use serde_json::Value;
use tilelab::sim::exec::{self, BulkKind, BulkOp, FlatGlobal, GlobalMemory, WgmmaA, WgmmaOp};
use tilelab::sim::instr::{self, Completion, SassClass, Scope};
use tilelab::sim::smem::SharedMemory;
use tilelab::sim::tma::{ReduceOp, TensorMap, TmaBox, TmaDtype, TmaSwizzle};
use tilelab::sim::wgmma::{MatrixDescriptor, WgmmaAcc, WgmmaKind, WgmmaType};

// ---------------------------------------------------------------------------------------------
// wgmma: fragments as the PTX ISA draws them.
// ---------------------------------------------------------------------------------------------

/// PTX ISA 9.7.15.5.1, "register fragment layout for matrix A" figures, read off the figures:
/// (type, thread, register, element) -> (row, k). `.m64nNk16` (f16: 2 per register),
/// `.m64nNk8` (tf32: 1), `.m64nNk32` (8-bit: 4).
/// (type or accumulator, thread, register, element, (row, column)).
type Figure<T> = &'static [(T, u32, u32, u32, (u32, u32))];

const A_FIGURE: Figure<WgmmaType> = &[
    (WgmmaType::F16, 0, 0, 0, (0, 0)),
    (WgmmaType::F16, 0, 0, 1, (0, 1)),
    (WgmmaType::F16, 0, 1, 0, (8, 0)),
    (WgmmaType::F16, 0, 2, 1, (0, 9)),
    (WgmmaType::F16, 5, 3, 0, (9, 10)),
    (WgmmaType::F16, 33, 0, 0, (16, 2)),
    (WgmmaType::Tf32, 0, 0, 0, (0, 0)),
    (WgmmaType::Tf32, 1, 0, 0, (0, 1)),
    (WgmmaType::Tf32, 3, 2, 0, (0, 7)),
    (WgmmaType::Tf32, 4, 1, 0, (9, 0)),
    (WgmmaType::Tf32, 127, 3, 0, (63, 7)),
    (WgmmaType::E4m3, 0, 0, 3, (0, 3)),
    (WgmmaType::E4m3, 1, 0, 0, (0, 4)),
    (WgmmaType::E4m3, 2, 2, 1, (0, 25)),
    (WgmmaType::S8, 7, 3, 3, (9, 31)),
    (WgmmaType::U8, 64, 1, 2, (40, 2)),
];

/// PTX ISA 9.7.15.5.1, "register fragment layout for accumulator matrix D": (accumulator,
/// thread, register, half) -> (row, col). f32/s32: one element per register; f16: two.
const D_FIGURE: Figure<WgmmaAcc> = &[
    (WgmmaAcc::F32, 0, 0, 0, (0, 0)),
    (WgmmaAcc::F32, 0, 1, 0, (0, 1)),
    (WgmmaAcc::F32, 0, 2, 0, (8, 0)),
    (WgmmaAcc::F32, 0, 3, 0, (8, 1)),
    (WgmmaAcc::F32, 0, 4, 0, (0, 8)),
    (WgmmaAcc::F32, 1, 0, 0, (0, 2)),
    (WgmmaAcc::S32, 4, 0, 0, (1, 0)),
    (WgmmaAcc::S32, 37, 5, 0, (17, 11)),
    (WgmmaAcc::F16, 0, 0, 0, (0, 0)),
    (WgmmaAcc::F16, 0, 0, 1, (0, 1)),
    (WgmmaAcc::F16, 0, 1, 0, (8, 0)),
    (WgmmaAcc::F16, 0, 1, 1, (8, 1)),
    (WgmmaAcc::F16, 0, 2, 0, (0, 8)),
    (WgmmaAcc::F16, 0, 3, 1, (8, 9)),
    (WgmmaAcc::F16, 2, 0, 1, (0, 5)),
    (WgmmaAcc::F16, 96, 2, 0, (48, 8)),
];

fn kind_of(t: WgmmaType, acc: WgmmaAcc, n: u32) -> WgmmaKind {
    WgmmaKind::new(n, acc, t, t, false).unwrap()
}

#[test]
fn a_and_d_fragments_are_the_ptx_figures() {
    for &(t, thread, reg, pos, want) in A_FIGURE {
        let acc = if t.is_integer() {
            WgmmaAcc::S32
        } else {
            WgmmaAcc::F32
        };
        let k = kind_of(t, acc, 64);
        assert_eq!(
            k.a_fragment(thread, reg, pos),
            want,
            "{t:?} T{thread} a{reg}.{pos}"
        );
    }
    for &(acc, thread, reg, half, want) in D_FIGURE {
        let t = match acc {
            WgmmaAcc::S32 => WgmmaType::S8,
            _ => WgmmaType::F16,
        };
        let k = kind_of(t, acc, 64);
        assert_eq!(
            k.d_fragment(thread, reg, half),
            want,
            "{acc:?} T{thread} d{reg}.{half}"
        );
    }
    // Registers per thread: N/2 for f32 and s32, N/4 for f16 (PTX ISA: `.f16` D is `.f16x2`).
    assert_eq!(kind_of(WgmmaType::F16, WgmmaAcc::F16, 128).d_regs(), 32);
    assert_eq!(kind_of(WgmmaType::S8, WgmmaAcc::S32, 24).d_regs(), 12);
}

/// The OCP FP8 code of value `v` in the ml_dtypes table.
fn fp8_code(table: &Value, name: &str, v: f64) -> u32 {
    table[name]["decode"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c.as_str().unwrap().parse::<f64>() == Ok(v))
        .unwrap_or_else(|| panic!("{name} has no code for {v}")) as u32
}

fn ofp8() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/ofp8_codes.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Bits of `v` as `t`, written here: f16/bf16 through the `half` crate, tf32 as the f32 bits
/// (small integers have no low mantissa bits), FP8 from the OCP table, integers two's complement.
fn bits_of(t: WgmmaType, v: f64, table: &Value) -> u32 {
    match t {
        WgmmaType::F16 => half::f16::from_f64(v).to_bits() as u32,
        WgmmaType::Bf16 => half::bf16::from_f64(v).to_bits() as u32,
        WgmmaType::Tf32 => (v as f32).to_bits(),
        WgmmaType::E4m3 => fp8_code(table, "e4m3", v),
        WgmmaType::E5m2 => fp8_code(table, "e5m2", v),
        WgmmaType::S8 | WgmmaType::U8 => (v as i64 as u8) as u32,
    }
}

/// The PTX ISA's canonical K-major layouts, written here from the "Matrix Descriptor Format"
/// section: element (mn, k) of an `e`-byte operand, no swizzle: core matrices of 8 rows x 16
/// bytes, `(mn/8)*SBO + (kbyte/16)*LBO + (mn%8)*16 + kbyte%16`; 128B swizzle: rows of 128
/// bytes, `(mn/8)*SBO + (mn%8)*128 + kbyte`, then 16-byte chunk ^= (address/128) % 8.
fn k_major(start: u32, lbo: u32, sbo: u32, swz128: bool, mn: u32, k: u32, e: u32) -> u32 {
    let kb = k * e;
    let a = if swz128 {
        start + (mn / 8) * sbo + (mn % 8) * 128 + kb
    } else {
        start + (mn / 8) * sbo + (kb / 16) * lbo + (mn % 8) * 16 + kb % 16
    };
    if swz128 { a ^ (((a >> 7) & 7) << 4) } else { a }
}

struct Problem {
    smem: SharedMemory,
    a: Vec<Vec<f64>>,
    b: Vec<Vec<f64>>,
    da: MatrixDescriptor,
    db: MatrixDescriptor,
}

/// A (64 x K) and B (N x K) of small values, written K-major at 0 (A) and 16384 (B).
fn problem(kind: &WgmmaKind, swz128: bool, table: &Value) -> Problem {
    problem_salted(kind, swz128, table, 0)
}

fn problem_salted(kind: &WgmmaKind, swz128: bool, table: &Value, salt: u32) -> Problem {
    let (n, k) = (kind.n, kind.k());
    let val = |t: WgmmaType, i: u32, j: u32, s: u32| -> f64 {
        let v = ((i * 5 + j * 3 + s * 7 + (i * j) % 3 + salt * (i + 2 * j + 1)) % 7) as f64;
        if t == WgmmaType::U8 { v } else { v - 3.0 }
    };
    let a: Vec<Vec<f64>> = (0..64)
        .map(|i| (0..k).map(|j| val(kind.a, i, j, 0)).collect())
        .collect();
    let b: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..k).map(|j| val(kind.b, i, j, 1)).collect())
        .collect();
    let mut smem = SharedMemory::zeroed(65536);
    // No swizzle: LBO 128 (K step between core matrices), SBO 256 (MN step); 128B: SBO 1024.
    let (lbo, sbo) = if swz128 { (16, 1024) } else { (128, 256) };
    let sw = if swz128 {
        TmaSwizzle::B128
    } else {
        TmaSwizzle::None
    };
    for (m, base, t) in [(&a, 0u32, kind.a), (&b, 16384, kind.b)] {
        let e = t.bytes();
        for (i, row) in m.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                let at = k_major(base, lbo, sbo, swz128, i as u32, j as u32, e) as usize;
                let x = bits_of(t, *v, table).to_le_bytes();
                smem.bytes_mut()[at..at + e as usize].copy_from_slice(&x[..e as usize]);
            }
        }
    }
    let d = |start| MatrixDescriptor {
        start_address: start,
        leading_byte_offset: lbo,
        stride_byte_offset: sbo,
        base_offset: 0,
        swizzle: sw,
    };
    Problem {
        smem,
        a,
        b,
        da: d(0),
        db: d(16384),
    }
}

/// D(row, col) read from the thread-major registers through the ISA's D layout written here:
/// register i of thread t: row 16w + g + 8((i%4)/2), col 8(i/4) + 2q + i%2 (f16: register j
/// holds i = 2j, 2j + 1 in its low and high halves).
fn d_value(kind: &WgmmaKind, d: &[u32], row: u32, col: u32) -> f64 {
    let (w, g) = (row / 16, row % 8);
    let hi = (row % 16) / 8;
    let q = (col % 8) / 2;
    let i = 4 * (col / 8) + 2 * hi + col % 2;
    let t = 32 * w + 4 * g + q;
    let regs = kind.d_regs();
    match kind.acc {
        WgmmaAcc::F32 => f32::from_bits(d[(t * regs + i) as usize]) as f64,
        WgmmaAcc::S32 => d[(t * regs + i) as usize] as i32 as f64,
        WgmmaAcc::F16 => {
            let word = d[(t * regs + i / 2) as usize];
            half::f16::from_bits((word >> (16 * (i % 2))) as u16).to_f64()
        }
    }
}

fn run(p: &mut Problem, kind: WgmmaKind, scale_d: bool, sa: i32, sb: i32, d: &mut [u32]) {
    let step = exec::execute(
        &mut p.smem,
        WgmmaOp {
            kind,
            a: WgmmaA::Desc(p.da),
            b: p.db,
            scale_d,
            scale_a: sa,
            scale_b: sb,
            trans_a: false,
            trans_b: false,
            d,
            values: true,
        },
    )
    .unwrap();
    // 64 x 32 bytes of A, N x 32 of B: 2 core matrices per 8 rows of each.
    assert_eq!(step.smem_bytes, [2048, 32 * kind.n]);
    assert_eq!(step.core_matrices.len() as u32, 16 + 2 * kind.n / 8);
}

#[test]
fn every_dense_form_computes_the_f64_product() {
    let table = ofp8();
    use WgmmaAcc as A;
    use WgmmaType as T;
    let forms = [
        (T::F16, T::F16, A::F32, 64),
        (T::F16, T::F16, A::F16, 32),
        (T::Bf16, T::Bf16, A::F32, 24),
        (T::Tf32, T::Tf32, A::F32, 16),
        (T::E4m3, T::E4m3, A::F32, 8),
        (T::E5m2, T::E5m2, A::F16, 16),
        (T::E4m3, T::E5m2, A::F32, 32),
        (T::S8, T::S8, A::S32, 24),
        (T::U8, T::U8, A::S32, 48),
        (T::S8, T::U8, A::S32, 16),
    ];
    for (ta, tb, acc, n) in forms {
        let kind = WgmmaKind::new(n, acc, ta, tb, false).unwrap();
        for swz in [false, true] {
            let mut p = problem(&kind, swz, &table);
            let mut d = vec![0u32; 128 * kind.d_regs() as usize];
            // D = A*B (scale-d 0 over garbage), then D += (-A)*B: 0 everywhere for floats.
            d.iter_mut().for_each(|x| *x = 0x7fc0_0000);
            run(&mut p, kind, false, 1, 1, &mut d);
            for row in 0..64 {
                for col in 0..n {
                    let want: f64 = (0..kind.k() as usize)
                        .map(|j| p.a[row as usize][j] * p.b[col as usize][j])
                        .sum();
                    let got = d_value(&kind, &d, row, col);
                    assert_eq!(
                        got, want,
                        "{ta:?}x{tb:?}->{acc:?} n{n} swz{swz} D({row},{col})"
                    );
                }
            }
            if kind.allows_scale() {
                run(&mut p, kind, true, -1, 1, &mut d);
                for row in (0..64).step_by(7) {
                    assert_eq!(d_value(&kind, &d, row, n - 1), 0.0, "{ta:?} scale-a -1");
                }
            } else {
                // Integers: D += A*B doubles it.
                run(&mut p, kind, true, 1, 1, &mut d);
                let want: f64 = (0..kind.k() as usize).map(|j| p.a[5][j] * p.b[3][j]).sum();
                assert_eq!(d_value(&kind, &d, 5, 3), 2.0 * want);
            }
        }
    }
}

#[test]
fn satfinite_saturates_and_plain_s32_wraps() {
    // One u8 x u8 product of 32 ones of 255 = 2080800; D starts at i32::MAX - 1000.
    let kind = WgmmaKind::new(8, WgmmaAcc::S32, WgmmaType::U8, WgmmaType::U8, false).unwrap();
    let sat = WgmmaKind {
        satfinite: true,
        ..kind
    };
    let mut smem = SharedMemory::zeroed(32768);
    smem.bytes_mut().iter_mut().for_each(|b| *b = 255);
    let desc = |s| MatrixDescriptor {
        start_address: s,
        leading_byte_offset: 128,
        stride_byte_offset: 256,
        base_offset: 0,
        swizzle: TmaSwizzle::None,
    };
    for (k, want) in [
        (
            kind,
            (i32::MAX as i64 - 1000 + 2_080_800 - (1i64 << 32)) as i32,
        ),
        (sat, i32::MAX),
    ] {
        let mut d = vec![(i32::MAX - 1000) as u32; 128 * 4];
        exec::execute(
            &mut smem,
            WgmmaOp {
                kind: k,
                a: WgmmaA::Desc(desc(0)),
                b: desc(8192),
                scale_d: true,
                scale_a: 1,
                scale_b: 1,
                trans_a: false,
                trans_b: false,
                d: &mut d,
                values: true,
            },
        )
        .unwrap();
        assert!(d.iter().all(|&x| x as i32 == want), "{}", k.ptx());
    }
}

#[test]
fn forbidden_forms_are_one_line_errors() {
    use WgmmaAcc as A;
    use WgmmaType as T;
    let e = |n, acc, a, b, s| WgmmaKind::new(n, acc, a, b, s).unwrap_err().to_string();
    assert!(e(64, A::F16, T::Bf16, T::Bf16, false).contains(".f16.bf16.bf16 is not a PTX form"));
    assert!(e(64, A::F32, T::F16, T::Bf16, false).contains("not a PTX form"));
    assert!(e(64, A::F32, T::S8, T::S8, false).contains("not a PTX form"));
    assert!(e(64, A::F16, T::Tf32, T::Tf32, false).contains("not a PTX form"));
    assert!(e(64, A::F32, T::F16, T::F16, true).contains(".satfinite"));
    // Integer N: 8, 16, 24, then multiples of 16 (PTX ISA's .m64nNk32 integer shapes).
    for n in [8, 16, 24, 32, 48, 80, 256] {
        assert!(WgmmaKind::new(n, A::S32, T::S8, T::U8, true).is_ok(), "{n}");
    }
    for n in [40, 56, 72, 264] {
        assert!(
            e(n, A::S32, T::S8, T::S8, false).contains(&format!("N = {n}")),
            "{n}"
        );
    }
    assert!(e(264, A::F32, T::F16, T::F16, false).contains("N = 264"));
    assert!(WgmmaKind::new(40, A::F16, T::E4m3, T::E5m2, false).is_ok());
    // imm-trans only for f16/bf16, imm-scale +-1 and not for integers, trans-a not with
    // registers, D of the right size, base offset 0.
    let mut smem = SharedMemory::zeroed(65536);
    let desc = MatrixDescriptor::decode(0x10);
    let regs = [[0u32; 4]; 128];
    let cases: Vec<(WgmmaKind, WgmmaA, i32, bool, usize, &str)> = vec![
        (
            kind_of(T::Tf32, A::F32, 8),
            WgmmaA::Desc(desc),
            1,
            true,
            512,
            "imm-trans-a 1 with .tf32",
        ),
        (
            kind_of(T::F16, A::F32, 8),
            WgmmaA::Desc(desc),
            2,
            false,
            512,
            "imm-scale-a 2",
        ),
        (
            kind_of(T::S8, A::S32, 8),
            WgmmaA::Desc(desc),
            -1,
            false,
            512,
            "no imm-scale",
        ),
        (
            kind_of(T::F16, A::F32, 8),
            WgmmaA::Regs(&regs),
            1,
            true,
            512,
            "A from registers",
        ),
        (
            kind_of(T::F16, A::F32, 8),
            WgmmaA::Desc(desc),
            1,
            false,
            511,
            "given 511",
        ),
        (
            kind_of(T::F16, A::F32, 8),
            WgmmaA::Desc(MatrixDescriptor::decode(3 << 49)),
            1,
            false,
            512,
            "base offset 3 is not modelled",
        ),
    ];
    for (kind, a, scale, trans, len, want) in cases {
        let mut d = vec![0u32; len];
        let err = exec::execute(
            &mut smem,
            WgmmaOp {
                kind,
                a,
                b: desc,
                scale_d: false,
                scale_a: scale,
                scale_b: 1,
                trans_a: trans,
                trans_b: false,
                d: &mut d,
                values: true,
            },
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(want) && !err.contains('\n'), "{err}");
    }
}

/// The SASS forms of the table: the f16/bf16 ones cuobjdump printed for sm_90a
/// (`tests/data/h200_wgmma_2026-11-30.json`), the others NVIDIA's names.
#[test]
fn wgmma_names() {
    use WgmmaAcc as A;
    use WgmmaType as T;
    let k = |n, acc, a, b, s| WgmmaKind::new(n, acc, a, b, s).unwrap();
    for (kind, ptx, sass) in [
        (
            k(128, A::F32, T::F16, T::F16, false),
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
            "HGMMA.64x128x16.F32",
        ),
        (
            k(64, A::F32, T::Bf16, T::Bf16, false),
            "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
            "HGMMA.64x64x16.F32.BF16",
        ),
        (
            k(32, A::F32, T::Tf32, T::Tf32, false),
            "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32",
            "HGMMA.64x32x8.F32.TF32",
        ),
        (
            k(64, A::F16, T::E4m3, T::E5m2, false),
            "wgmma.mma_async.sync.aligned.m64n64k32.f16.e4m3.e5m2",
            "QGMMA.64x64x32.F16.E4M3.E5M2",
        ),
        (
            k(24, A::S32, T::S8, T::U8, true),
            "wgmma.mma_async.sync.aligned.m64n24k32.satfinite.s32.s8.u8",
            "IGMMA.64x24x32.S8.U8.SAT",
        ),
    ] {
        assert_eq!(kind.ptx(), ptx);
        assert_eq!(instr::wgmma_sass(&kind), sass);
    }
}

// ---------------------------------------------------------------------------------------------
// Tensor maps and the bulk scope.
// ---------------------------------------------------------------------------------------------

/// `cuTensorMapEncodeTiled`'s rules (CUDA driver API): each violation one line naming it.
#[test]
fn tensor_map_rules_are_the_drivers() {
    let ok = TensorMap::parse("f16:512,128:1024:64,128:128B").unwrap();
    assert_eq!(
        (ok.rank, ok.dims[..2].to_vec(), ok.strides[1]),
        (2, vec![512, 128], 1024)
    );
    assert_eq!((ok.box_bytes(), ok.box_rows()), (64 * 128 * 2, 128));
    assert_eq!(ok.to_string(), "f16:512,128:1024:64,128:128B");
    let one = TensorMap::parse("f32:1000::32").unwrap();
    assert_eq!(
        (one.rank, one.box_rows(), one.swizzle),
        (1, 1, TmaSwizzle::None)
    );
    let five = TensorMap::parse("u8:16,2,2,2,2:16,32,64,128:16,2,2,2,2").unwrap();
    assert_eq!((five.rank, five.box_rows(), five.box_bytes()), (5, 16, 256));
    for (spec, want) in [
        (
            "f16:64,64,1,1,1,1:128,8192,8192,8192,8192:64,64,1,1,1,1",
            "rank 6",
        ),
        ("f16:0,8:128:64,8", "globalDim[0] 0"),
        (
            "f16:4294967297,8:8589934608:64,8",
            "globalDim[0] 4294967297",
        ),
        ("f16:64,8:120:64,8", "globalStrides[0] 120"),
        ("f16:64,8:1099511627776:64,8", "below 2^40"),
        ("f16:64,8:128:64,257", "boxDim[1] 257"),
        ("f16:64,8:128:0,8", "boxDim[0] 0"),
        ("f16:64,8:128:4,8", "8 bytes is not allowed"),
        ("f16:128,8:256:128,8:128B", "at most 128 bytes"),
        ("f16:64,8:128,256:64,8", "takes 2 dims, 1 strides"),
        ("f8:64,8:128:64,8", "unknown tensor map data type 'f8'"),
        ("f16:64,8:128", "3 ':'-separated parts"),
        ("f16:64,x:128:64,8", "dim 'x'"),
        ("f16:64,8:128:64,8:16B", "'16B'"),
    ] {
        let e = TensorMap::parse(spec).unwrap_err().to_string();
        assert!(e.contains(want) && !e.contains('\n'), "{spec}: {e}");
    }
    let e = TensorMap::new(
        TmaDtype::F16,
        &[64, 8],
        &[128],
        &[64, 8],
        Some(&[1, 2]),
        TmaSwizzle::None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("elementStrides[1] 2 is not modelled"), "{e}");
    let e = TensorMap::new(
        TmaDtype::F16,
        &[64, 8],
        &[128],
        &[64, 8],
        Some(&[1, 9]),
        TmaSwizzle::None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("1..=8"), "{e}");
    assert!(TensorMap::check_driver_options(0, 0, 3).is_ok());
    for (args, want) in [
        ((1, 0, 0), "INTERLEAVE_16B) is not modelled"),
        ((3, 0, 0), "interleave 3 is not allowed"),
        ((0, 1, 0), "NAN_REQUEST_ZERO_FMA) is not modelled"),
        ((0, 0, 4), "l2Promotion 4"),
    ] {
        let e = TensorMap::check_driver_options(args.0, args.1, args.2)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e}");
    }
    for (t, b) in [
        ("u8", 1),
        ("bf16", 2),
        ("tf32_ftz", 4),
        ("s64", 8),
        ("F32_FTZ", 4),
    ] {
        assert_eq!(TmaDtype::parse(t).unwrap().bytes(), b, "{t}");
    }
}

/// Global memory where byte `a` of the tensor holds a code of its element index, so every
/// byte that lands in shared memory names where it came from.
fn tensor(map: &TensorMap, base: u64) -> FlatGlobal {
    let mut span = 0u64; // offset of the last element
    for d in 0..map.rank {
        span += (map.dims[d] - 1) * map.strides[d];
    }
    let mut bytes = vec![0u8; (span + 64) as usize];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (i % 251) as u8 + 1; // never 0: zero fill shows
    }
    FlatGlobal { base, bytes }
}

#[test]
fn a_2d_load_lands_where_the_measured_box_model_says() {
    // The measured rule (tests/data/h200_tma_2026-11-30.json, via TmaBox) for the in-bounds
    // bytes: byte c of row r of the box comes from tensor byte (y0 + r) * stride + 2 x0 + c.
    for sw in TmaSwizzle::ALL {
        let cols = (sw.span_bytes().max(32) / 2).min(64);
        let map =
            TensorMap::new(TmaDtype::F16, &[200, 100], &[512], &[cols, 16], None, sw).unwrap();
        let base = 0x1000_0000u64;
        let mut g = tensor(&map, base);
        let mut smem = SharedMemory::zeroed(16384);
        let (x0, y0) = (24i64, 7i64);
        let step = exec::execute(
            &mut smem,
            BulkOp {
                kind: BulkKind::TensorLoad {
                    map: &map,
                    tensor: base,
                    coords: [x0, y0, 0, 0, 0],
                    smem: 2048,
                },
                global: &mut g,
            },
        )
        .unwrap();
        let bx = TmaBox::new(16, cols, 2, sw, 2048).unwrap();
        for r in 0..16u32 {
            for c in 0..cols * 2 {
                let from = ((y0 as u32 + r) * 512 + 2 * x0 as u32 + c) as usize;
                let at = bx.byte_address(r, c / 2) + c % 2;
                assert_eq!(
                    smem.bytes()[at as usize],
                    g.bytes[from],
                    "{sw} r{r} byte {c}"
                );
            }
        }
        assert_eq!(
            (step.tx_bytes, step.out_of_bounds, step.global_read),
            (u64::from(32 * cols), 0, u64::from(32 * cols))
        );
        let written: u32 = step.smem_written.iter().map(|r| r.end - r.start).sum();
        assert_eq!(written, 32 * cols);
    }
}

#[test]
fn out_of_bounds_elements_are_zero_and_the_mbarrier_gets_the_whole_box() {
    // A 40 x 50 f16 tensor, a 64 x 64 box at (-8, 30): columns -8..-1 and 50..55 and rows
    // 40.. are outside. PTX ISA (cp.async.bulk.tensor, tile mode): out-of-bound elements are
    // filled with zero; complete_tx counts the box's bytes.
    let map = TensorMap::parse("f16:50,40:112:64,64:128B").unwrap();
    let mut g = tensor(&map, 0);
    let mut smem = SharedMemory::zeroed(8192);
    smem.bytes_mut().iter_mut().for_each(|b| *b = 0xee);
    let step = exec::execute(
        &mut smem,
        BulkOp {
            kind: BulkKind::TensorLoad {
                map: &map,
                tensor: 0,
                coords: [-8, 30, 0, 0, 0],
                smem: 0,
            },
            global: &mut g,
        },
    )
    .unwrap();
    assert_eq!(step.tx_bytes, 8192);
    // In bounds: rows 30..39 (10 of 64), columns 0..49 (50 of 64).
    assert_eq!(step.out_of_bounds, 64 * 64 - 10 * 50);
    assert_eq!(step.global_read, 10 * 50 * 2);
    let bx = TmaBox::new(64, 64, 2, TmaSwizzle::B128, 0).unwrap();
    for r in 0..64u32 {
        for c in 0..64u32 {
            let a = bx.byte_address(r, c) as usize;
            let v = u16::from_le_bytes([smem.bytes()[a], smem.bytes()[a + 1]]);
            let (y, x) = (30 + r as i64, c as i64 - 8);
            if (0..40).contains(&y) && (0..50).contains(&x) {
                let from = (y * 112 + 2 * x) as usize;
                assert_eq!(v, u16::from_le_bytes([g.bytes[from], g.bytes[from + 1]]));
            } else {
                assert_eq!(v, 0, "({r},{c})");
            }
        }
    }
}

#[test]
fn rank_3_to_5_boxes_stack_rows_of_the_2d_rule() {
    // f32 tensor 8 x 4 x 3 x 2 x 2 (innermost first), box 8 x 2 x 2 x 1 x 2: the shared row of
    // box index (i1, i2, i3, i4) is i1 + 2 (i2 + 2 (i3 + 1 i4)).
    let map = TensorMap::parse("f32:8,4,3,2,2:32,128,384,768:8,2,2,1,2:32B").unwrap();
    assert_eq!(map.box_rows(), 8);
    let mut g = tensor(&map, 4096);
    let mut smem = SharedMemory::zeroed(4096);
    let coords = [0, 1, 2, 1, 0];
    let step = exec::execute(
        &mut smem,
        BulkOp {
            kind: BulkKind::TensorLoad {
                map: &map,
                tensor: 4096,
                coords,
                smem: 1024,
            },
            global: &mut g,
        },
    )
    .unwrap();
    // Dim 2 at coordinate 2 + i2: i2 = 1 is outside (extent 3): half the box is zero.
    assert_eq!((step.tx_bytes, step.out_of_bounds), (8 * 2 * 2 * 2 * 4, 32));
    let bx = TmaBox::stacked(8, 8, 4, TmaSwizzle::B32, 1024).unwrap();
    for i4 in 0..2u32 {
        for i2 in 0..2u32 {
            for i1 in 0..2u32 {
                let row = i1 + 2 * (i2 + 2 * i4);
                for x in 0..8u32 {
                    let a = bx.byte_address(row, x) as usize;
                    let got = &smem.bytes()[a..a + 4];
                    if i2 == 1 {
                        assert_eq!(got, [0; 4]);
                    } else {
                        let off =
                            (x * 4 + (1 + i1) * 32 + (2 + i2) * 128 + 384 + i4 * 768) as usize;
                        assert_eq!(got, &g.bytes[off..off + 4], "row {row} x {x}");
                    }
                }
            }
        }
    }
}

#[test]
fn store_skips_out_of_bounds_and_reduce_combines_by_type() {
    let map = TensorMap::parse("s32:6,3:32:8,4").unwrap();
    let mut smem = SharedMemory::zeroed(4096);
    for i in 0..32u32 {
        smem.write_u32(256 + 4 * i, i + 1).unwrap();
    }
    let mut g = FlatGlobal {
        base: 0,
        bytes: vec![0; 96],
    };
    let step = exec::execute(
        &mut smem,
        BulkOp {
            kind: BulkKind::TensorStore {
                map: &map,
                tensor: 0,
                coords: [0, 0, 0, 0, 0],
                smem: 256,
            },
            global: &mut g,
        },
    )
    .unwrap();
    // 3 rows x 6 columns in bounds of the 4 x 8 box.
    assert_eq!(
        (step.global_written, step.out_of_bounds, step.tx_bytes),
        (72, 32 - 18, 128)
    );
    let word = |g: &FlatGlobal, i: usize| {
        i32::from_le_bytes(g.bytes[4 * i..4 * i + 4].try_into().unwrap())
    };
    // Box element (r, c) holds 8r + c + 1 (packed rows, no swizzle); global word 8r + c.
    assert_eq!(
        (
            word(&g, 0),
            word(&g, 5),
            word(&g, 8),
            word(&g, 17),
            word(&g, 6)
        ),
        (1, 6, 9, 18, 0)
    );
    // Reducing the same data again: .add doubles, .max and .min keep it (word 9 = box (1, 1)).
    for (op, want9) in [
        (ReduceOp::Add, 2 * 10),
        (ReduceOp::Max, 10),
        (ReduceOp::Min, 10),
    ] {
        let mut gg = g.clone();
        exec::execute(
            &mut smem,
            BulkOp {
                kind: BulkKind::TensorReduce {
                    map: &map,
                    tensor: 0,
                    coords: [0, 0, 0, 0, 0],
                    smem: 256,
                    op,
                },
                global: &mut gg,
            },
        )
        .unwrap();
        assert_eq!(word(&gg, 9), want9, "{op:?}");
    }
    let e = exec::execute(
        &mut smem,
        BulkOp {
            kind: BulkKind::TensorReduce {
                map: &map,
                tensor: 0,
                coords: [0; 5],
                smem: 256,
                op: ReduceOp::Inc,
            },
            global: &mut g,
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(".inc on s32 is not allowed; allowed: u32"),
        "{e}"
    );
    // cuTensorMapEncodeTiled: globalAddress 16-byte aligned; the destination 128-byte aligned.
    for (tensor, dst, want) in [
        (8u64, 0u32, "tensor global address 0x8"),
        (0, 64, "destination address 64"),
    ] {
        let e = exec::execute(
            &mut smem,
            BulkOp {
                kind: BulkKind::TensorLoad {
                    map: &map,
                    tensor,
                    coords: [0; 5],
                    smem: dst,
                },
                global: &mut g,
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains(want) && e.contains("multiple of"), "{e}");
    }
}

#[test]
fn non_tensor_bulk_reduce_follows_the_ptx_semantics() {
    // u32 .inc: old >= src ? 0 : old + 1; .dec: old == 0 || old > src ? src : old - 1 (PTX ISA
    // atom/red). f16 .add rounds once; bf16 .min.
    let mut smem = SharedMemory::zeroed(64);
    let src: [u32; 4] = [5, 5, 5, 5];
    let old: [u32; 4] = [3, 5, 9, 0];
    for (i, v) in src.iter().enumerate() {
        smem.write_u32(4 * i as u32, *v).unwrap();
    }
    for (op, want) in [
        (ReduceOp::Inc, [4, 0, 0, 1]),
        (ReduceOp::Dec, [2, 4, 5, 5]),
        (ReduceOp::Xor, [6, 0, 12, 5]),
    ] {
        let mut g = FlatGlobal {
            base: 64,
            bytes: old.iter().flat_map(|w| w.to_le_bytes()).collect(),
        };
        exec::execute(
            &mut smem,
            BulkOp {
                kind: BulkKind::ReduceToGlobal {
                    smem: 0,
                    global: 64,
                    bytes: 16,
                    dtype: TmaDtype::U32,
                    op,
                },
                global: &mut g,
            },
        )
        .unwrap();
        let got: Vec<u32> = g
            .bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, want, "{op:?}");
    }
    // f16: 1.0 + 2^-11 is a tie at f16 precision and rounds to even (1.0).
    let mut smem = SharedMemory::zeroed(16);
    smem.write_u16(0, half::f16::from_f32(1.0).to_bits())
        .unwrap();
    let mut g = FlatGlobal {
        base: 0,
        bytes: vec![0; 16],
    };
    g.write(
        0,
        &half::f16::from_f64(2f64.powi(-11)).to_bits().to_le_bytes(),
    )
    .unwrap();
    exec::execute(
        &mut smem,
        BulkOp {
            kind: BulkKind::ReduceToGlobal {
                smem: 0,
                global: 0,
                bytes: 16,
                dtype: TmaDtype::F16,
                op: ReduceOp::Add,
            },
            global: &mut g,
        },
    )
    .unwrap();
    assert_eq!(
        half::f16::from_le_bytes([g.bytes[0], g.bytes[1]]).to_f32(),
        1.0
    );
}

#[test]
fn bulk_copy_is_contiguous_and_checked() {
    let mut smem = SharedMemory::zeroed(1024);
    let mut g = FlatGlobal {
        base: 0x100,
        bytes: (0..=255).collect(),
    };
    let step = exec::execute(
        &mut smem,
        BulkOp {
            kind: BulkKind::CopyToShared {
                smem: 32,
                global: 0x110,
                bytes: 64,
            },
            global: &mut g,
        },
    )
    .unwrap();
    assert_eq!(
        (step.tx_bytes, step.smem_written.clone()),
        (64, vec![std::ops::Range { start: 32, end: 96 }])
    );
    assert_eq!(&smem.bytes()[32..96], &g.bytes[16..80]);
    let back = exec::execute(
        &mut smem,
        BulkOp {
            kind: BulkKind::CopyToGlobal {
                smem: 32,
                global: 0x180,
                bytes: 16,
            },
            global: &mut g,
        },
    )
    .unwrap();
    assert_eq!((back.global_written, back.tx_bytes), (16, 16));
    // Global 0x180 is byte 0x80 of the allocation; shared 32.. holds global 0x110...
    assert_eq!(&g.bytes[0x80..0x90], &(16u8..32).collect::<Vec<_>>()[..]);

    for (s, gl, n, want) in [
        (8, 0x100, 16, "shared address 8"),
        (0, 0x108, 16, "global address 0x108"),
        (0, 0x100, 24, "size 24 bytes"),
        (0, 0x100, 0, "size 0 bytes"),
        (1008, 0x100, 32, "past the end of the 1024 bytes"),
        (0, 0x1f0, 32, "outside the allocation"),
    ] {
        let before = smem.clone();
        let e = exec::execute(
            &mut smem,
            BulkOp {
                kind: BulkKind::CopyToShared {
                    smem: s,
                    global: gl,
                    bytes: n,
                },
                global: &mut g,
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains(want), "{e}");
        assert_eq!(smem, before, "an error writes nothing");
    }
}

// ---------------------------------------------------------------------------------------------
// The instruction table.
// ---------------------------------------------------------------------------------------------

#[test]
fn the_table_has_one_row_per_instruction_and_one_vocabulary() {
    for (ptx, class, scope, completion) in [
        (
            "wgmma.mma_async",
            SassClass::Hgmma,
            Scope::Warpgroup,
            Completion::WgmmaGroup,
        ),
        (
            "cp.async.bulk.tensor.{1d..5d}.shared::cluster",
            SassClass::Utmaldg,
            Scope::Bulk,
            Completion::MbarrierTxBytes,
        ),
        (
            "cp.async.bulk.tensor.{1d..5d}.global",
            SassClass::Utmastg,
            Scope::Bulk,
            Completion::BulkGroup,
        ),
        (
            "cp.async.bulk.shared::cluster",
            SassClass::Ublkcp,
            Scope::Bulk,
            Completion::MbarrierTxBytes,
        ),
        (
            "cp.reduce.async.bulk.tensor",
            SassClass::Utmaredg,
            Scope::Bulk,
            Completion::BulkGroup,
        ),
        (
            "cp.reduce.async.bulk.global",
            SassClass::Ublkred,
            Scope::Bulk,
            Completion::BulkGroup,
        ),
        (
            "cp.async.{ca,cg}",
            SassClass::Ldgsts,
            Scope::Warp,
            Completion::CpAsyncGroup,
        ),
        (
            "ldmatrix",
            SassClass::Ldsm,
            Scope::Warp,
            Completion::Synchronous,
        ),
        (
            "stmatrix",
            SassClass::Stsm,
            Scope::Warp,
            Completion::Synchronous,
        ),
    ] {
        let row = instr::TABLE
            .iter()
            .find(|r| r.ptx.starts_with(ptx))
            .unwrap_or_else(|| panic!("{ptx}"));
        assert_eq!(
            (row.sass, row.scope, row.completion),
            (class, scope, completion),
            "{ptx}"
        );
    }
    for r in instr::TABLE {
        assert!(r.sass_form.starts_with(r.sass.name()), "{r:?}");
    }
    // Every class has a row.
    use SassClass::*;
    for c in [
        Lds, Sts, Ldsm, Stsm, Ldgsts, Hmma, Imma, Hgmma, Qgmma, Igmma, Utmaldg, Utmastg, Utmaredg,
        Ublkcp, Ublkred,
    ] {
        assert_eq!(instr::class_row(c).sass, c, "{c}");
    }
    // Every warp instruction's mnemonic starts with its row's class name.
    for s in [
        "ld.shared.v4.b32",
        "st.shared.u8",
        "ldmatrix.x4.trans",
        "stmatrix.x2",
        "cp.async.cg.shared.global.16",
    ] {
        let ins = tilelab::sim::instr::Instruction::parse(s).unwrap();
        assert!(
            ins.sass().starts_with(instr::row_of(ins).sass.name()),
            "{s}"
        );
    }
    assert_eq!(instr::tma_sass(SassClass::Utmaldg, 3), "UTMALDG.3D");
    assert_eq!(instr::tma_sass(SassClass::Utmastg, 2), "UTMASTG.2D");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any 2-D f16/f32 map, swizzle and signed start: every box byte is the tensor byte the
    /// measured placement (TmaBox) and the coordinates name, or zero outside the tensor; the
    /// transaction bytes are the whole box; a store of the box writes back exactly the
    /// in-bounds bytes.
    #[test]
    fn loads_place_every_byte_and_stores_invert_them(
        e in proptest::sample::select(vec![2u32, 4]),
        sw_i in 0usize..4,
        dims in (1u64..90, 1u64..40),
        rows in 1u32..24,
        x0 in -40i64..100,
        y0 in -30i64..50,
    ) {
        let sw = TmaSwizzle::ALL[sw_i];
        let cols = sw.span_bytes().max(16) / e;
        let dt = if e == 2 { TmaDtype::F16 } else { TmaDtype::F32 };
        let stride = (dims.0 * u64::from(e)).next_multiple_of(16);
        let map = TensorMap::new(dt, &[dims.0, dims.1], &[stride], &[cols, rows], None, sw).unwrap();
        let mut g = tensor(&map, 1 << 20);
        let mut smem = SharedMemory::zeroed(16384);
        smem.bytes_mut().iter_mut().for_each(|b| *b = 0xaa);
        let coords = [x0, y0, 0, 0, 0];
        let step = exec::execute(&mut smem, BulkOp {
            kind: BulkKind::TensorLoad { map: &map, tensor: 1 << 20, coords, smem: 1024 },
            global: &mut g,
        }).unwrap();
        proptest::prop_assert_eq!(step.tx_bytes, u64::from(rows * cols * e));
        let bx = TmaBox::new(rows, cols, e, sw, 1024).unwrap();
        let mut inside = 0u64;
        for r in 0..rows {
            for c in 0..cols {
                let (x, y) = (x0 + i64::from(c), y0 + i64::from(r));
                let a = bx.byte_address(r, c) as usize;
                let got = &smem.bytes()[a..a + e as usize];
                if x >= 0 && y >= 0 && (x as u64) < dims.0 && (y as u64) < dims.1 {
                    inside += 1;
                    let from = (y as u64 * stride + x as u64 * u64::from(e)) as usize;
                    proptest::prop_assert_eq!(got, &g.bytes[from..from + e as usize]);
                } else {
                    proptest::prop_assert!(got.iter().all(|&b| b == 0));
                }
            }
        }
        proptest::prop_assert_eq!(step.out_of_bounds, u64::from(rows * cols) - inside);
        let mut back = FlatGlobal { base: g.base, bytes: vec![0; g.bytes.len()] };
        let st = exec::execute(&mut smem, BulkOp {
            kind: BulkKind::TensorStore { map: &map, tensor: 1 << 20, coords, smem: 1024 },
            global: &mut back,
        }).unwrap();
        proptest::prop_assert_eq!(st.global_written, inside * u64::from(e));
        for (i, (&b, &want)) in back.bytes.iter().zip(&g.bytes).enumerate() {
            if b != 0 {
                proptest::prop_assert_eq!(b, want, "byte {}", i);
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Any dense form, any N the ISA allows for it, either layout, scale-d on a random D:
    /// D = C + A*B (or A*B) exactly, summed here in f64 from the values written.
    #[test]
    fn any_form_and_n_is_the_f64_product(
        form in 0usize..8,
        n_i in 0u32..32,
        swz in proptest::bool::ANY,
        scale_d in proptest::bool::ANY,
        salt in 0u32..50,
        c0 in -4i32..4,
    ) {
        use WgmmaAcc as A;
        use WgmmaType as T;
        let (ta, tb, acc) = [
            (T::F16, T::F16, A::F32), (T::F16, T::F16, A::F16), (T::Bf16, T::Bf16, A::F32),
            (T::Tf32, T::Tf32, A::F32), (T::E5m2, T::E4m3, A::F32), (T::E4m3, T::E4m3, A::F16),
            (T::S8, T::U8, A::S32), (T::U8, T::S8, A::S32),
        ][form];
        let allowed: Vec<u32> = if ta.is_integer() {
            (1..=256).filter(|n| matches!(n, 8 | 16 | 24) || (*n >= 32 && n % 16 == 0)).collect()
        } else {
            (1..=32).map(|i| 8 * i).collect()
        };
        let n = allowed[n_i as usize % allowed.len()];
        let kind = WgmmaKind::new(n, acc, ta, tb, false).unwrap();
        let table = ofp8();
        let mut p = problem_salted(&kind, swz, &table, salt);
        // C: c0 + (thread + register) % 3 in the accumulator's type.
        let regs = kind.d_regs() as usize;
        let c_of = |t: usize, r: usize| f64::from(c0) + ((t + r) % 3) as f64;
        let mut d: Vec<u32> = (0..128 * regs)
            .map(|i| {
                let v = c_of(i / regs, i % regs);
                match acc {
                    A::F32 => (v as f32).to_bits(),
                    A::S32 => v as i32 as u32,
                    A::F16 => {
                        let h = u32::from(half::f16::from_f64(v).to_bits());
                        h | h << 16
                    }
                }
            })
            .collect();
        let before = d.clone();
        run(&mut p, kind, scale_d, 1, 1, &mut d);
        for t in 0..128u32 {
            for r in 0..regs as u32 {
                for h in 0..if acc == A::F16 { 2 } else { 1 } {
                    // Where this register element sits, by the ISA's D figure (f32 layout;
                    // f16 register j = f32 registers 2j, 2j + 1).
                    let i = if acc == A::F16 { 2 * r + h } else { r };
                    let (w, lane) = (t / 32, t % 32);
                    let row = 16 * w + lane / 4 + 8 * ((i % 4) / 2);
                    let col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
                    let c = if scale_d {
                        let word = before[(t as usize) * regs + r as usize];
                        match acc {
                            A::F32 => f64::from(f32::from_bits(word)),
                            A::S32 => f64::from(word as i32),
                            A::F16 => half::f16::from_bits((word >> (16 * h)) as u16).to_f64(),
                        }
                    } else {
                        0.0
                    };
                    let want = c + (0..kind.k() as usize)
                        .map(|j| p.a[row as usize][j] * p.b[col as usize][j])
                        .sum::<f64>();
                    let got = d_value(&kind, &d, row, col);
                    proptest::prop_assert_eq!(got, want, "{} T{} d{}.{}", kind.ptx(), t, r, h);
                }
            }
        }
    }
}
