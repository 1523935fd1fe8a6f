//! Loader for the PTX ISA fragment tables in `tests/data/ptx_isa/` (written from the ISA's
//! formulas by `scripts/gen_ptx_isa_tables.py`, independently of `src/sim`), and helpers that
//! pack and unpack registers *by those tables*, never with `tilelab::sim::mma::pack`.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;

use ndarray::Array2;
use serde::Deserialize;

/// One `tests/data/ptx_isa/mma_*.json` file.
#[derive(Deserialize, Debug)]
pub struct MmaFile {
    pub source: String,
    pub generator: String,
    pub instruction: String,
    pub section: String,
    /// (M, N, K).
    pub shape: [u32; 3],
    pub operands: Vec<OperandTable>,
}

/// One operand of one mma for a set of element types.
#[derive(Deserialize, Debug)]
pub struct OperandTable {
    /// `A`, `B` or `C/D`.
    pub operand: String,
    /// PTX types this table holds for (`f16`, `s8`, `f32`, …).
    pub types: Vec<String>,
    pub rows: u32,
    pub cols: u32,
    pub registers: u32,
    pub elements_per_register: u32,
    pub element_bits: u32,
    /// `[lane, i, reg, pos, row, col]`: element i (ISA numbering) of `lane` sits in register
    /// `reg` at position `pos` (0 = lowest bits) and is matrix element (row, col).
    pub fragments: Vec<[u32; 6]>,
}

/// One `ldmatrix_*.json` / `stmatrix_*.json` file.
#[derive(Deserialize, Debug)]
pub struct MatrixFile {
    pub source: String,
    pub generator: String,
    pub instruction: String,
    pub section: String,
    pub element_bits: u32,
    pub forms: Vec<MatrixForm>,
}

/// One `.x1/.x2/.x4 [.trans]` form.
#[derive(Deserialize, Debug)]
pub struct MatrixForm {
    pub ptx: String,
    pub num: u32,
    pub trans: bool,
    /// `[lane, matrix, row]`: lane that supplies the address of `row` of `matrix`.
    pub address_lanes: Vec<[u32; 3]>,
    /// `[lane, reg, half, matrix, row, col]`.
    pub fragments: Vec<[u32; 6]>,
}

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/ptx_isa")
        .join(name)
}

fn load<T: for<'de> Deserialize<'de>>(name: &str) -> T {
    let path = data(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The three mma files: m16n8k16 (f16/bf16), m16n8k8 (f16/bf16), m16n8k32 (8-bit).
pub fn mma_files() -> Vec<MmaFile> {
    [
        "mma_m16n8k16_f16.json",
        "mma_m16n8k8_f16.json",
        "mma_m16n8k32_8bit.json",
        "mma_m16n8k4_tf32.json",
        "mma_m16n8k8_tf32.json",
        "mma_m16n8k16_8bit.json",
    ]
    .iter()
    .map(|n| load(n))
    .collect()
}

pub fn ldmatrix_file() -> MatrixFile {
    load("ldmatrix_m8n8_b16.json")
}

pub fn stmatrix_file() -> MatrixFile {
    load("stmatrix_m8n8_b16.json")
}

/// The table of `operand` (`A`, `B`, `C/D`) of the mma with K = `k` for element type `ty`.
pub fn mma_table(k: u32, operand: &str, ty: &str) -> OperandTable {
    // The C/D table is the same in every file of a shape; A and B differ by input width.
    mma_files()
        .into_iter()
        .filter(|f| f.shape[2] == k)
        .flat_map(|f| f.operands)
        .find(|o| o.operand == operand && o.types.iter().any(|t| t == ty))
        .unwrap_or_else(|| panic!("no {operand} table for {ty} with k = {k}"))
}

/// The `.x{num}[.trans]` form of ldmatrix.
pub fn ldmatrix_form(num: u32, trans: bool) -> MatrixForm {
    ldmatrix_file()
        .forms
        .into_iter()
        .find(|f| f.num == num && f.trans == trans)
        .unwrap()
}

/// Packs `m` into `regs` registers per lane by the table: element (row, col) goes to the
/// register and position the table names, as `encode(value)` masked to the element width.
pub fn pack_by_table(
    t: &OperandTable,
    m: &Array2<f64>,
    encode: &dyn Fn(f64) -> u32,
) -> Vec<Vec<u32>> {
    assert_eq!(m.dim(), (t.rows as usize, t.cols as usize));
    let mask = if t.element_bits == 32 {
        u32::MAX
    } else {
        (1 << t.element_bits) - 1
    };
    let mut regs = vec![vec![0u32; t.registers as usize]; 32];
    for &[lane, _i, reg, pos, row, col] in &t.fragments {
        let bits = encode(m[[row as usize, col as usize]]) & mask;
        regs[lane as usize][reg as usize] |= bits << (t.element_bits * pos);
    }
    regs
}

/// Reads a matrix back from registers by the table, decoding each field with `decode`.
pub fn unpack_by_table(
    t: &OperandTable,
    regs: &dyn Fn(u32, u32) -> u32,
    decode: &dyn Fn(u32) -> f64,
) -> Array2<f64> {
    let mask = if t.element_bits == 32 {
        u32::MAX
    } else {
        (1 << t.element_bits) - 1
    };
    let mut m = Array2::<f64>::from_elem((t.rows as usize, t.cols as usize), f64::NAN);
    for &[lane, _i, reg, pos, row, col] in &t.fragments {
        let field = (regs(lane, reg) >> (t.element_bits * pos)) & mask;
        m[[row as usize, col as usize]] = decode(field);
    }
    m
}

/// For each (matrix, row, col) of an ldmatrix form: the (lane, reg, half) that holds it.
pub fn matrix_owners(f: &MatrixForm) -> HashMap<(u32, u32, u32), (u32, u32, u32)> {
    f.fragments
        .iter()
        .map(|&[lane, reg, half, m, r, c]| ((m, r, c), (lane, reg, half)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Element encodings written here from the format definitions (not from `src/sim`): IEEE binary16
// and bfloat16 via the `half` crate, two's complement for s8/u8/s32, and the OCP 8-bit floating
// point specification (OFP8 rev. 1.0) for exactly representable FP8 values.

/// Bits of an exactly representable normal or zero FP8 value with `e` exponent and `m`
/// mantissa bits (bias 2^(e-1) − 1). Panics if `v` is not representable as a normal number.
pub fn fp8_bits(v: f64, e: u32, m: u32) -> u32 {
    if v == 0.0 {
        return if v.is_sign_negative() { 0x80 } else { 0 };
    }
    let sign = if v < 0.0 { 0x80 } else { 0 };
    let a = v.abs();
    let exp = a.log2().floor() as i32;
    let frac = a / 2f64.powi(exp) - 1.0; // in [0, 1)
    let man = frac * (1u32 << m) as f64;
    assert!(man.fract() == 0.0, "{v} needs more than {m} mantissa bits");
    let bias = (1i32 << (e - 1)) - 1;
    let biased = exp + bias;
    assert!(
        biased >= 1 && biased < (1 << e),
        "{v} is not a normal FP8 e{e}m{m} value"
    );
    sign | (biased as u32) << m | man as u32
}

/// Encoder of an mma input or accumulator type for values that are exact in it.
pub fn encoder(ty: &str) -> Box<dyn Fn(f64) -> u32> {
    match ty {
        "f16" => Box::new(|v| half::f16::from_f64(v).to_bits() as u32),
        "bf16" => Box::new(|v| half::bf16::from_f64(v).to_bits() as u32),
        "f32" => Box::new(|v| (v as f32).to_bits()),
        // Values with at most 10 mantissa bits (the tests' exact values): f32 bits, low 13 zero.
        "tf32" => Box::new(|v| (v as f32).to_bits()),
        "s8" => Box::new(|v| (v as i8) as u8 as u32),
        "u8" => Box::new(|v| v as u8 as u32),
        "s32" => Box::new(|v| (v as i32) as u32),
        "e4m3" => Box::new(|v| fp8_bits(v, 4, 3)),
        "e5m2" => Box::new(|v| fp8_bits(v, 5, 2)),
        _ => panic!("no encoder for {ty}"),
    }
}

/// Decoder of an mma accumulator or input type.
pub fn decoder(ty: &str) -> Box<dyn Fn(u32) -> f64> {
    match ty {
        "f16" => Box::new(|b| half::f16::from_bits(b as u16).to_f64()),
        "bf16" => Box::new(|b| half::bf16::from_bits(b as u16).to_f64()),
        "f32" => Box::new(|b| f32::from_bits(b) as f64),
        "s32" => Box::new(|b| b as i32 as f64),
        "s8" => Box::new(|b| b as u8 as i8 as f64),
        "u8" => Box::new(|b| b as u8 as f64),
        _ => panic!("no decoder for {ty} in the tests (FP8 inputs are checked by value)"),
    }
}
