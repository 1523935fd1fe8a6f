//! `mma.sync.aligned.{m16n8k16,m16n8k8,m16n8k32}.row.col.<dtype>.<atype>.<btype>.<ctype>`: the
//! fragment maps of A, B, C/D and functional execution on per-lane registers.
//!
//! Sources: PTX ISA 9.0 §9.7.14.5.7 "Matrix Fragments for mma.m16n8k8", §9.7.14.5.8 "Matrix
//! Fragments for mma.m16n8k16 with floating point type", §9.7.14.5.10 "Matrix Fragments for
//! mma.m16n8k32". The same tables, written independently from the ISA by
//! `scripts/gen_ptx_isa_tables.py`, are `tests/data/ptx_isa/mma_*.json`; the tests compare every
//! entry.
//!
//! D = A·B + C with A M×K (row), B K×N (col), C and D M×N. The FA2 counts article writes the same
//! product as A·Bᵀ with B stored N×K. The ISA numbers each lane's elements a0, a1, … "low to
//! high": element i sits in register i / e, position i % e, where e is the number of elements a
//! 32-bit register holds (2 of 16 bits, 4 of 8 bits, 1 of 32 bits). With groupID g = lane/4 and
//! threadID_in_group t = lane%4, element units of each operand:
//!
//! ```text
//! m16n8k16 f16/bf16: A ai: row g (+8 for i in 2,3,6,7), col 2t + (i&1) (+8 for i >= 4)
//!                    B bi: row 2t + (i&1) (+8 for i >= 2), col g
//! m16n8k8  f16/bf16: A ai: row g (+8 for i >= 2), col 2t + (i&1);  B bi: row 2t + i, col g
//! m16n8k32 8-bit:    A ai: row g (+8 for i in 4..8, 12..16), col 4t + (i&3) (+16 for i >= 8)
//!                    B bi: row 4t + (i&3) (+16 for i >= 4), col g
//! C/D, every shape:  ci: row g (+8 for i >= 2), col 2t + (i&1)
//!                    4 registers of .f32/.s32, or 2 registers of .f16x2 (f16 accumulators)
//! ```
//!
//! Main types: [`MmaKind`] (shape, input type, accumulator type: one PTX instruction) with
//! [`MmaKind::pack`] and [`MmaKind::unpack`] on raw 32-bit registers ([`RawRegs`]); the
//! arithmetic is the one executor's ([`crate::sim::exec::execute`] of
//! [`crate::sim::exec::WarpOp::mma`]). The older [`pack`]/[`unpack`] functions are the
//! f32-accumulator special case with C/D held as `f32` ([`crate::sim::exec::WarpOp::mma_f32`]).

use half::{bf16, f16};
use ndarray::Array2;

use crate::sim::error::SimError;

/// The mma shapes modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum MmaShape {
    /// m16n8k16: A 16x16, B 16x8, C/D 16x8 (f16, bf16, s8, u8 inputs).
    M16N8K16,
    /// m16n8k8: A 16x8, B 8x8, C/D 16x8 (f16, bf16, tf32 inputs).
    M16N8K8,
    /// m16n8k32: A 16x32, B 32x8, C/D 16x8 (8-bit inputs: s8, u8, e4m3, e5m2).
    M16N8K32,
    /// m16n8k4: A 16x4, B 4x8, C/D 16x8 (tf32 inputs only).
    M16N8K4,
}

/// Input element type of A and B (both operands have the same type here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum MmaDtype {
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
    /// Signed 8-bit integer (accumulates in s32).
    S8,
    /// Unsigned 8-bit integer (accumulates in s32).
    U8,
    /// OCP FP8 E4M3 (sm_89+): bias 7, no infinities, NaN = S.1111.111, largest finite 448.
    E4m3,
    /// OCP FP8 E5M2 (sm_89+): bias 15, IEEE-like (infinities and NaNs), largest finite 57344.
    E5m2,
    /// TensorFloat-32 in a 32-bit register: an f32 whose 13 low mantissa bits the tensor core
    /// does not read (sign, 8 exponent bits, 10 mantissa bits; measured on the H200:
    /// `tests/data/ptx_mma/`).
    Tf32,
}

/// Element type of the accumulators C and D.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum MmaAcc {
    /// `.f32`: four registers of one f32.
    F32,
    /// `.f16`: two `.f16x2` registers of two f16 (c0, c1 in the first; c2, c3 in the second).
    F16,
    /// `.s32`: four registers of one s32 (integer inputs).
    S32,
}

/// Which operand a fragment belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Operand {
    /// A, M×K.
    A,
    /// B, K×N.
    B,
    /// C and D, M×N (same layout).
    C,
}

/// `A`, `B` or `C`, as the PTX ISA names the operands.
impl std::fmt::Display for Operand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Operand::A => "A",
            Operand::B => "B",
            Operand::C => "C",
        })
    }
}

impl MmaShape {
    /// Every shape, in the order the CLI lists them.
    pub const ALL: [MmaShape; 4] = [
        MmaShape::M16N8K16,
        MmaShape::M16N8K8,
        MmaShape::M16N8K32,
        MmaShape::M16N8K4,
    ];

    /// Parses `m16n8k16`, `m16n8k8`, `m16n8k32` or `m16n8k4`.
    ///
    /// # Errors
    /// [`SimError::Unknown`] naming the value and the allowed shapes.
    pub fn parse(s: &str) -> Result<MmaShape, SimError> {
        MmaShape::ALL
            .into_iter()
            .find(|sh| sh.name() == s)
            .ok_or_else(|| SimError::Unknown {
                what: "mma shape",
                given: s.to_string(),
                allowed: "m16n8k16, m16n8k8, m16n8k32, m16n8k4",
            })
    }

    /// `m16n8k16`, `m16n8k8`, `m16n8k32` or `m16n8k4`.
    pub fn name(self) -> &'static str {
        match self {
            MmaShape::M16N8K16 => "m16n8k16",
            MmaShape::M16N8K8 => "m16n8k8",
            MmaShape::M16N8K32 => "m16n8k32",
            MmaShape::M16N8K4 => "m16n8k4",
        }
    }

    /// Element bits of the input type [`element`] and [`fragment`] assume: 16 for m16n8k16 and
    /// m16n8k8 (f16/bf16), 8 for m16n8k32, 32 for m16n8k4 (tf32). The other widths of a shape
    /// (m16n8k16 s8/u8, m16n8k8 tf32) go through [`element_bits`] or [`MmaKind::fragment`].
    pub fn default_bits(self) -> u32 {
        match self {
            MmaShape::M16N8K16 | MmaShape::M16N8K8 => 16,
            MmaShape::M16N8K32 => 8,
            MmaShape::M16N8K4 => 32,
        }
    }

    /// The input type `tilelab sim mma` takes when none is given: s8 for m16n8k32, tf32 for
    /// m16n8k4, f16 otherwise.
    pub fn default_dtype(self) -> MmaDtype {
        match self {
            MmaShape::M16N8K32 => MmaDtype::S8,
            MmaShape::M16N8K4 => MmaDtype::Tf32,
            MmaShape::M16N8K16 | MmaShape::M16N8K8 => MmaDtype::F16,
        }
    }

    /// (M, N, K).
    pub fn mnk(self) -> (u32, u32, u32) {
        match self {
            MmaShape::M16N8K16 => (16, 8, 16),
            MmaShape::M16N8K8 => (16, 8, 8),
            MmaShape::M16N8K32 => (16, 8, 32),
            MmaShape::M16N8K4 => (16, 8, 4),
        }
    }

    /// (rows, cols) of an operand.
    pub fn dims(self, op: Operand) -> (u32, u32) {
        let (m, n, k) = self.mnk();
        match op {
            Operand::A => (m, k),
            Operand::B => (k, n),
            Operand::C => (m, n),
        }
    }

    /// Elements per lane of an operand: (rows · cols) / 32 (A 8/4/16/2, B 4/2/8/1, C/D 4).
    pub fn elems_per_lane(self, op: Operand) -> u32 {
        let (r, c) = self.dims(op);
        r * c / 32
    }

    /// 32-bit registers per lane for an operand with 32-bit accumulators (f32 or s32) and the
    /// shape's [`Self::default_bits`] inputs: A 4/2/4/2, B 2/1/2/1, C 4. Other input widths and
    /// f16 accumulators: [`MmaKind::regs`].
    pub fn regs(self, op: Operand) -> u32 {
        self.elems_per_lane(op) / self.elems_per_reg(op)
    }

    /// Elements one 32-bit register holds with 32-bit accumulators and the shape's
    /// [`Self::default_bits`] inputs: A and B 2 (16-bit), 4 (m16n8k32, 8-bit) or 1 (m16n8k4,
    /// tf32), C/D 1.
    pub fn elems_per_reg(self, op: Operand) -> u32 {
        match op {
            Operand::C => 1,
            _ => 32 / self.default_bits(),
        }
    }

    /// PTX name with the default accumulator of `dtype` (f32, or s32 for integer inputs), e.g.
    /// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`.
    pub fn ptx(self, dtype: MmaDtype) -> String {
        MmaKind::unchecked(self, dtype, dtype.default_acc()).ptx()
    }

    /// SASS mnemonic with the default accumulator: see [`MmaKind::sass`].
    pub fn sass(self, dtype: MmaDtype) -> &'static str {
        MmaKind::unchecked(self, dtype, dtype.default_acc()).sass()
    }

    /// Checks the (shape, dtype) pair is a PTX ISA `mma` form (§9.7.14.5.14, the m16n8 shapes):
    /// m16n8k16 with f16, bf16, s8 or u8; m16n8k8 with f16, bf16 or tf32; m16n8k32 with s8,
    /// u8, e4m3 or e5m2; m16n8k4 with tf32.
    ///
    /// # Errors
    /// [`SimError::Unsupported`] naming the pair and listing the allowed ones.
    pub fn check_dtype(self, dtype: MmaDtype) -> Result<(), SimError> {
        use MmaDtype as D;
        let ok = match self {
            MmaShape::M16N8K16 => matches!(dtype, D::F16 | D::Bf16 | D::S8 | D::U8),
            MmaShape::M16N8K8 => matches!(dtype, D::F16 | D::Bf16 | D::Tf32),
            MmaShape::M16N8K32 => dtype.bits() == 8,
            MmaShape::M16N8K4 => dtype == D::Tf32,
        };
        if ok {
            return Ok(());
        }
        Err(SimError::Unsupported {
            what: format!("mma {} with --dtype {}", self.name(), dtype.name()),
            allowed: "m16n8k16 with f16, bf16, s8 or u8; m16n8k8 with f16, bf16 or tf32; m16n8k32 with s8, u8, e4m3 or e5m2; m16n8k4 with tf32",
        })
    }
}

impl MmaDtype {
    /// Every input type.
    pub const ALL: [MmaDtype; 7] = [
        MmaDtype::F16,
        MmaDtype::Bf16,
        MmaDtype::S8,
        MmaDtype::U8,
        MmaDtype::E4m3,
        MmaDtype::E5m2,
        MmaDtype::Tf32,
    ];

    /// Parses `f16`, `bf16`, `s8`, `u8`, `e4m3`, `e5m2` or `tf32`.
    ///
    /// # Errors
    /// [`SimError::Unknown`] naming the value and the allowed types.
    pub fn parse(s: &str) -> Result<MmaDtype, SimError> {
        MmaDtype::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| SimError::Unknown {
                what: "mma dtype",
                given: s.to_string(),
                allowed: "f16, bf16, s8, u8, e4m3, e5m2, tf32",
            })
    }

    /// The PTX type name without the dot: `f16`, `bf16`, `s8`, `u8`, `e4m3`, `e5m2`, `tf32`.
    pub fn name(self) -> &'static str {
        match self {
            MmaDtype::F16 => "f16",
            MmaDtype::Bf16 => "bf16",
            MmaDtype::S8 => "s8",
            MmaDtype::U8 => "u8",
            MmaDtype::E4m3 => "e4m3",
            MmaDtype::E5m2 => "e5m2",
            MmaDtype::Tf32 => "tf32",
        }
    }

    /// Bits per element in the registers: 32 (tf32), 16 or 8.
    pub fn bits(self) -> u32 {
        match self {
            MmaDtype::Tf32 => 32,
            MmaDtype::F16 | MmaDtype::Bf16 => 16,
            _ => 8,
        }
    }

    /// Whether the type is an integer (s8, u8: s32 accumulators).
    pub fn is_int(self) -> bool {
        matches!(self, MmaDtype::S8 | MmaDtype::U8)
    }

    /// The accumulator PTX pairs with this input when none is named: s32 for s8/u8, f32 else.
    pub fn default_acc(self) -> MmaAcc {
        match self {
            MmaDtype::S8 | MmaDtype::U8 => MmaAcc::S32,
            _ => MmaAcc::F32,
        }
    }

    /// Rounds `v` to this type and returns its bit pattern (low [`Self::bits`] bits): f16 and
    /// bf16 round to nearest even (the `half` crate); s8/u8 round to nearest and saturate (as
    /// `cvt.rni.sat`); e4m3/e5m2 round to nearest even and saturate to the largest finite value
    /// (as `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`, PTX ISA §9.7.9.21); tf32 rounds to f32 and
    /// then to 10 mantissa bits, to nearest with ties away from zero (`cvt.rna.tf32.f32`), the
    /// 13 low bits zero; NaN stays NaN.
    pub fn encode(self, v: f64) -> u32 {
        match self {
            MmaDtype::Tf32 => tf32_rna(v as f32),
            MmaDtype::F16 => f16::from_f64(v).to_bits() as u32,
            MmaDtype::Bf16 => bf16::from_f64(v).to_bits() as u32,
            MmaDtype::S8 => (v.round_ties_even().clamp(-128.0, 127.0) as i8) as u8 as u32,
            MmaDtype::U8 => v.round_ties_even().clamp(0.0, 255.0) as u8 as u32,
            MmaDtype::E4m3 | MmaDtype::E5m2 => encode_fp8(self, v),
        }
    }

    /// Value of the low [`Self::bits`] bits of `bits` as this type (exact in f64). FP8 follows
    /// the OCP 8-bit floating point specification (OFP8, rev. 1.0): e4m3 has no infinities and
    /// one NaN pattern per sign (S.1111.111); e5m2 has IEEE infinities (S.11111.00) and NaNs.
    pub fn decode(self, bits: u32) -> f64 {
        match self {
            MmaDtype::F16 => f16::from_bits(bits as u16).to_f64(),
            MmaDtype::Bf16 => bf16::from_bits(bits as u16).to_f64(),
            MmaDtype::S8 => (bits as u8 as i8) as f64,
            MmaDtype::U8 => (bits as u8) as f64,
            MmaDtype::E4m3 => decode_fp8(bits as u8, 4, 3),
            MmaDtype::E5m2 => decode_fp8(bits as u8, 5, 2),
            MmaDtype::Tf32 => f32::from_bits(bits & TF32_MASK) as f64,
        }
    }

    /// Rounds an f32 to this type and returns its bits ([`Self::encode`]).
    pub fn to_bits(self, v: f32) -> u16 {
        self.encode(v as f64) as u16
    }

    /// Value of a bit pattern of this type, as f32 ([`Self::decode`]; exact for every input
    /// type).
    pub fn from_bits(self, b: u16) -> f32 {
        self.decode(b as u32) as f32
    }
}

/// The bits of a 32-bit register a tf32 mma reads: sign, exponent and the 10 high mantissa bits
/// (the H200 ignores the 13 low bits: `tests/data/ptx_mma/`, fixture `tf32_k8_lowbits`).
pub const TF32_MASK: u32 = 0xffff_e000;

/// `cvt.rna.tf32.f32`: to nearest, ties away from zero, on the 13 low mantissa bits; NaN and
/// infinities are kept (a NaN keeps a mantissa bit set).
fn tf32_rna(v: f32) -> u32 {
    let b = v.to_bits();
    if !v.is_finite() {
        return if v.is_nan() {
            0x7fc0_0000
        } else {
            b & TF32_MASK
        };
    }
    // Adding half an ulp of tf32 to the magnitude and cutting rounds ties away from zero; a
    // carry into the exponent is the correct next binade (or infinity).
    (b.wrapping_add(0x1000)) & TF32_MASK
}

/// Decodes an OCP FP8 value with `e` exponent bits and `m` mantissa bits (bias 2^(e-1) − 1).
fn decode_fp8(b: u8, e: u32, m: u32) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = ((b >> m) as u32) & ((1 << e) - 1);
    let man = (b as u32) & ((1 << m) - 1);
    let bias = (1i32 << (e - 1)) - 1;
    let all_ones = (1 << e) - 1;
    if e == 4 && exp == all_ones && man == (1 << m) - 1 {
        return f64::NAN; // e4m3: S.1111.111 is NaN; S.1111.000-110 are normal numbers
    }
    if e == 5 && exp == all_ones {
        return if man == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    let frac = man as f64 / (1u32 << m) as f64;
    if exp == 0 {
        sign * frac * 2f64.powi(1 - bias) // subnormal
    } else {
        sign * (1.0 + frac) * 2f64.powi(exp as i32 - bias)
    }
}

/// Encodes `v` as FP8 by searching the finite codes for the nearest (ties to the even code),
/// saturating to the largest finite magnitude; NaN gives the canonical NaN (0x7f).
fn encode_fp8(t: MmaDtype, v: f64) -> u32 {
    if v.is_nan() {
        return 0x7f;
    }
    let sign = if v.is_sign_negative() { 0x80 } else { 0 };
    let mag = v.abs();
    let mut best = (f64::INFINITY, 0u32);
    for code in 0u32..0x80 {
        let x = t.decode(code);
        if !x.is_finite() {
            continue;
        }
        let d = (x - mag).abs();
        if d < best.0 || (d == best.0 && code % 2 == 0 && best.1 % 2 == 1) {
            best = (d, code);
        }
    }
    best.1 | sign
}

impl MmaAcc {
    /// Parses `f32`, `f16` or `s32`.
    ///
    /// # Errors
    /// [`SimError::Unknown`] naming the value and the allowed types.
    pub fn parse(s: &str) -> Result<MmaAcc, SimError> {
        match s {
            "f32" => Ok(MmaAcc::F32),
            "f16" => Ok(MmaAcc::F16),
            "s32" => Ok(MmaAcc::S32),
            _ => Err(SimError::Unknown {
                what: "mma accumulator type",
                given: s.to_string(),
                allowed: "f32, f16, s32",
            }),
        }
    }

    /// `f32`, `f16` or `s32`.
    pub fn name(self) -> &'static str {
        match self {
            MmaAcc::F32 => "f32",
            MmaAcc::F16 => "f16",
            MmaAcc::S32 => "s32",
        }
    }

    /// Elements per 32-bit register: 2 for f16, 1 otherwise.
    pub fn elems_per_reg(self) -> u32 {
        if self == MmaAcc::F16 { 2 } else { 1 }
    }

    /// Bit pattern of `v` rounded to this type (f32/f16: to nearest even; s32: `v` must be an
    /// integer and is wrapped modulo 2^32), in the low 16 bits for f16.
    pub fn encode(self, v: f64) -> u32 {
        match self {
            MmaAcc::F32 => (v as f32).to_bits(),
            MmaAcc::F16 => f16::from_f64(v).to_bits() as u32,
            MmaAcc::S32 => (v as i64) as i32 as u32,
        }
    }

    /// Value of the low bits of `bits` as this type.
    pub fn decode(self, bits: u32) -> f64 {
        match self {
            MmaAcc::F32 => f32::from_bits(bits) as f64,
            MmaAcc::F16 => f16::from_bits(bits as u16).to_f64(),
            MmaAcc::S32 => bits as i32 as f64,
        }
    }
}

/// The (row, col) of element i of `op` held by `lane`, the ISA's formulas by element index (see
/// the module docs), for the shape's [`MmaShape::default_bits`] inputs. `i` <
/// [`MmaShape::elems_per_lane`].
pub fn element(shape: MmaShape, op: Operand, lane: u32, i: u32) -> (u32, u32) {
    element_bits(shape, shape.default_bits(), op, lane, i)
}

/// The (row, col) of element i of `op` held by `lane` when A and B have `bits`-bit elements
/// (32 for tf32, 16, 8). Every m16n8 fragment of PTX ISA §9.7.14.5.7-10 follows one pattern
/// with e = 32 / `bits` elements per register, element i in register r = i / e at position
/// p = i % e, g = lane / 4, t = lane % 4:
///
/// ```text
/// A: row g + 8 (r mod 2),  col e t + p + (K / 2) (r / 2)
/// B: row e t + p + (K / 2) r,  col g
/// C/D: row g + 8 (i / 2),  col 2 t + i mod 2
/// ```
///
/// (m16n8k8 tf32: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4), b0 (t, g),
/// b1 (t + 4, g); m16n8k16 8-bit: a0..a3 (g, 4t..4t+3), a4..a7 (g + 8, ..), b0..b3 (4t.., g).)
/// `tests/data/ptx_isa/mma_*.json` holds the ISA's own formulas, transcribed independently.
pub fn element_bits(shape: MmaShape, bits: u32, op: Operand, lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = (lane / 4, lane % 4);
    let (_, _, k) = shape.mnk();
    let e = 32 / bits;
    let (r, p) = (i / e, i % e);
    match op {
        Operand::C => (g + 8 * (i / 2), 2 * t + i % 2),
        Operand::A => (g + 8 * (r % 2), e * t + p + (k / 2) * (r / 2)),
        Operand::B => (e * t + p + (k / 2) * r, g),
    }
}

/// The (row, col) of `op` held by `lane` in register `reg`, position `half` (0 = lowest bits;
/// for m16n8k32 A/B the byte 0..4; always 0 for C/D), with 32-bit accumulators and the shape's
/// [`MmaShape::default_bits`] inputs. PTX ISA §9.7.14.5.7/8/10 fragment figures.
pub fn fragment(shape: MmaShape, op: Operand, lane: u32, reg: u32, half: u32) -> (u32, u32) {
    element(shape, op, lane, reg * shape.elems_per_reg(op) + half)
}

/// One element of an operand's fragment: which lane holds it, in which register and where in
/// it, and its (row, col) in the operand matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragmentElement {
    /// Lane 0..32.
    pub lane: u32,
    /// 32-bit register of the lane.
    pub reg: u32,
    /// Position in the register, 0 = lowest bits: the half for 16-bit elements, the byte for
    /// 8-bit ones, 0 for 32-bit ones.
    pub pos: u32,
    /// Row in the operand matrix.
    pub row: u32,
    /// Column in the operand matrix.
    pub col: u32,
}

/// One mma instruction: shape, input types of A and B, accumulator type of C and D, and
/// `.satfinite`. Combinations modelled (PTX ISA §9.7.14.5.14 "mma", the m16n8 shapes):
/// m16n8k16 f16→f32/f16, bf16→f32, s8/u8→s32; m16n8k8 f16→f32/f16, bf16→f32, tf32→f32;
/// m16n8k4 tf32→f32; m16n8k32 s8/u8→s32, e4m3/e5m2→f32/f16. The integer forms take any mix of
/// s8 and u8 and `.satfinite`; the FP8 forms any mix of e4m3 and e5m2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct MmaKind {
    /// Shape.
    pub shape: MmaShape,
    /// Type of A (and of B unless [`Self::btype`] differs).
    pub dtype: MmaDtype,
    /// Type of B: equal to `dtype` except in the mixed integer (`.s8.u8`) and FP8
    /// (`.e4m3.e5m2`) forms.
    pub btype: MmaDtype,
    /// Type of C and D.
    pub acc: MmaAcc,
    /// `.satfinite` (integer forms): D clamps to the s32 range instead of wrapping.
    pub satfinite: bool,
}

/// Per-lane registers of one mma as raw 32-bit patterns: A and B packed low element first, C/D
/// as f32/s32 bits or two f16 (low half = lower element index). Registers beyond the kind's
/// count are 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawRegs {
    /// `a[lane][reg]`.
    pub a: [[u32; 4]; 32],
    /// `b[lane][reg]`.
    pub b: [[u32; 2]; 32],
    /// `c[lane][reg]` (C on input; D is [`crate::sim::exec::WarpStep::regs`] after the mma).
    pub c: [[u32; 4]; 32],
}

impl RawRegs {
    /// All registers zero.
    pub fn zero() -> RawRegs {
        RawRegs {
            a: [[0; 4]; 32],
            b: [[0; 2]; 32],
            c: [[0; 4]; 32],
        }
    }

    /// Register `reg` of `op` of `lane`.
    pub fn get(&self, op: Operand, lane: u32, reg: u32) -> u32 {
        let (l, r) = (lane as usize, reg as usize);
        match op {
            Operand::A => self.a[l][r],
            Operand::B => self.b[l][r],
            Operand::C => self.c[l][r],
        }
    }

    pub(crate) fn slot(&mut self, op: Operand, lane: u32, reg: u32) -> &mut u32 {
        let (l, r) = (lane as usize, reg as usize);
        match op {
            Operand::A => &mut self.a[l][r],
            Operand::B => &mut self.b[l][r],
            Operand::C => &mut self.c[l][r],
        }
    }
}

impl MmaKind {
    /// The kind, checked.
    ///
    /// # Errors
    /// [`SimError::Unsupported`] for a (shape, dtype) pair [`MmaShape::check_dtype`] refuses, or
    /// an accumulator the ISA does not pair with the input type (s32 only with s8/u8; bf16 only
    /// with f32), naming the values and what is allowed.
    pub fn new(shape: MmaShape, dtype: MmaDtype, acc: MmaAcc) -> Result<MmaKind, SimError> {
        MmaKind::with_types(shape, dtype, dtype, acc, false)
    }

    /// The kind with A of `atype`, B of `btype` and `.satfinite` when `satfinite`, checked.
    ///
    /// # Errors
    /// [`SimError::Unsupported`] for a type the shape does not take ([`MmaShape::check_dtype`]),
    /// A and B of different families (only s8/u8 mix, and e4m3/e5m2), an accumulator the ISA
    /// does not pair with the inputs (s32 only with s8/u8; bf16 and tf32 with f32 only; f16,
    /// e4m3, e5m2 with f32 or f16), or `.satfinite` on a floating-point form.
    pub fn with_types(
        shape: MmaShape,
        atype: MmaDtype,
        btype: MmaDtype,
        acc: MmaAcc,
        satfinite: bool,
    ) -> Result<MmaKind, SimError> {
        use MmaDtype as D;
        shape.check_dtype(atype)?;
        shape.check_dtype(btype)?;
        let fp8 = |d: D| matches!(d, D::E4m3 | D::E5m2);
        if atype != btype && !(atype.is_int() && btype.is_int()) && !(fp8(atype) && fp8(btype)) {
            return Err(SimError::Unsupported {
                what: format!(
                    "mma with {} A and {} B (not a PTX form)",
                    atype.name(),
                    btype.name()
                ),
                allowed: "equal A and B types, or a mix of s8 and u8, or of e4m3 and e5m2",
            });
        }
        let ok = match atype {
            D::S8 | D::U8 => acc == MmaAcc::S32,
            D::Bf16 | D::Tf32 => acc == MmaAcc::F32,
            D::F16 | D::E4m3 | D::E5m2 => acc != MmaAcc::S32,
        };
        if !ok {
            return Err(SimError::Unsupported {
                what: format!(
                    "mma with {} inputs and {} accumulators (not a PTX form)",
                    atype.name(),
                    acc.name()
                ),
                allowed: "f16 with f32 or f16, bf16 and tf32 with f32, s8/u8 with s32, e4m3/e5m2 with f32 or f16",
            });
        }
        if satfinite && !atype.is_int() {
            return Err(SimError::Unsupported {
                what: format!("mma .satfinite with {} inputs", atype.name()),
                allowed: ".satfinite with s8/u8 inputs (s32 accumulators) only",
            });
        }
        Ok(MmaKind {
            shape,
            dtype: atype,
            btype,
            acc,
            satfinite,
        })
    }

    pub(crate) fn unchecked(shape: MmaShape, dtype: MmaDtype, acc: MmaAcc) -> MmaKind {
        MmaKind {
            shape,
            dtype,
            btype: dtype,
            acc,
            satfinite: false,
        }
    }

    /// The oldest target that has the form (PTX ISA §9.7.14.5.14 "Target ISA notes", checked
    /// with ptxas 13.0.88): 75 for m16n8k8 with f16, 80 for bf16, tf32, m16n8k16 and the
    /// integer forms, 89 for e4m3/e5m2.
    pub fn min_sm(&self) -> u32 {
        match (self.shape, self.dtype) {
            (_, MmaDtype::E4m3 | MmaDtype::E5m2) => 89,
            (MmaShape::M16N8K8, MmaDtype::F16) => 75,
            _ => 80,
        }
    }

    /// The type of operand A or B.
    pub fn input_type(&self, op: Operand) -> MmaDtype {
        if op == Operand::B {
            self.btype
        } else {
            self.dtype
        }
    }

    /// Elements one 32-bit register of `op` holds: 32 / element bits.
    pub fn elems_per_reg(&self, op: Operand) -> u32 {
        match op {
            Operand::C => self.acc.elems_per_reg(),
            _ => 32 / self.input_type(op).bits(),
        }
    }

    /// 32-bit registers per lane of `op` (A 4/2/4/2 for m16n8k16/k8/k32/k4 with the shape's
    /// default width, 2 for m16n8k16 8-bit, 4 for m16n8k8 tf32; B half of A; C/D 4, or 2 with
    /// f16 accumulators).
    pub fn regs(&self, op: Operand) -> u32 {
        self.shape.elems_per_lane(op) / self.elems_per_reg(op)
    }

    /// The (row, col) that `lane` holds in register `reg`, position `pos` (0 = lowest bits).
    pub fn fragment(&self, op: Operand, lane: u32, reg: u32, pos: u32) -> (u32, u32) {
        let bits = self.input_type(op).bits();
        element_bits(
            self.shape,
            bits,
            op,
            lane,
            reg * self.elems_per_reg(op) + pos,
        )
    }

    /// Every element of `op`'s fragment, lane by lane, register by register, position by
    /// position ([`MmaKind::fragment`]): 32 × [`MmaKind::regs`] × [`MmaKind::elems_per_reg`]
    /// of them.
    pub fn fragments(&self, op: Operand) -> Vec<FragmentElement> {
        let per_reg = self.elems_per_reg(op);
        (0..32)
            .flat_map(|lane| {
                (0..self.regs(op)).flat_map(move |reg| {
                    (0..per_reg).map(move |pos| {
                        let (row, col) = self.fragment(op, lane, reg, pos);
                        FragmentElement {
                            lane,
                            reg,
                            pos,
                            row,
                            col,
                        }
                    })
                })
            })
            .collect()
    }

    /// PTX name, e.g. `mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16` or
    /// `mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32`.
    pub fn ptx(&self) -> String {
        let (a, b, c) = (self.dtype.name(), self.btype.name(), self.acc.name());
        let sat = if self.satfinite { ".satfinite" } else { "" };
        format!(
            "mma.sync.aligned.{}.row.col{sat}.{c}.{a}.{b}.{c}",
            self.shape.name()
        )
    }

    /// SASS mnemonic on sm_90 (the H200), as ptxas 13.0.88 assembles the form and nvdisasm
    /// prints it (`docs/log/2026-12-02-mma-forms.md`): `HMMA.16816.F32`, `HMMA.16816.F32.BF16`,
    /// `HMMA.16816.F16`, `HMMA.1688.F32`, `HMMA.1688.F16`, `HMMA.1688.F32.BF16`,
    /// `HMMA.1688.F32.TF32`, `HMMA.1684.F32.TF32`, `IMMA.16816.S8.S8`, `IMMA.16832.U8.S8`,
    /// … with `.SAT` for `.satfinite`. sm_90 has no FP8 `mma.sync`: ptxas unpacks A and B to
    /// f16 (`F2FP.F16.E4M3.UNPACK_B`) and issues [`Self::sass_count`] = 2 `HMMA.16816.F32` (or
    /// `.F16`); [`Self::sass_on`] gives sm_89's `QMMA.16832.F32.E4M3.E4M3`.
    pub fn sass(&self) -> &'static str {
        self.sass_on(90)
    }

    /// SASS instructions of the mnemonic [`Self::sass_on`]`(sm)` per `mma.sync`: 2 for the FP8
    /// forms on sm_90 (K 32 as two HMMA.16816 on f16), 1 otherwise.
    pub fn sass_count(&self, sm: u32) -> u32 {
        if self.is_fp8() && sm == 90 { 2 } else { 1 }
    }

    fn is_fp8(&self) -> bool {
        matches!(self.dtype, MmaDtype::E4m3 | MmaDtype::E5m2)
    }

    /// SASS mnemonic on target `sm` (sm_80 and sm_90 print the same names; the FP8 forms are
    /// `QMMA.16832.{F32,F16}.{E4M3,E5M2}.{E4M3,E5M2}` on sm_89 and `HMMA.16816.{F32,F16}` twice
    /// on sm_90). Checked with ptxas 13.0.88 and nvdisasm for sm_89 and sm_90.
    pub fn sass_on(&self, sm: u32) -> &'static str {
        use MmaAcc as C;
        use MmaDtype as D;
        use MmaShape as S;
        if self.is_fp8() && sm != 90 {
            return match (self.acc, self.dtype, self.btype) {
                (C::F16, D::E4m3, D::E4m3) => "QMMA.16832.F16.E4M3.E4M3",
                (C::F16, D::E4m3, _) => "QMMA.16832.F16.E4M3.E5M2",
                (C::F16, _, D::E4m3) => "QMMA.16832.F16.E5M2.E4M3",
                (C::F16, _, _) => "QMMA.16832.F16.E5M2.E5M2",
                (_, D::E4m3, D::E4m3) => "QMMA.16832.F32.E4M3.E4M3",
                (_, D::E4m3, _) => "QMMA.16832.F32.E4M3.E5M2",
                (_, _, D::E4m3) => "QMMA.16832.F32.E5M2.E4M3",
                _ => "QMMA.16832.F32.E5M2.E5M2",
            };
        }
        let imma = |k32: bool| -> &'static str {
            let i = (self.dtype == D::U8) as usize * 2 + (self.btype == D::U8) as usize;
            let names = match (k32, self.satfinite) {
                (true, false) => [
                    "IMMA.16832.S8.S8",
                    "IMMA.16832.S8.U8",
                    "IMMA.16832.U8.S8",
                    "IMMA.16832.U8.U8",
                ],
                (true, true) => [
                    "IMMA.16832.S8.S8.SAT",
                    "IMMA.16832.S8.U8.SAT",
                    "IMMA.16832.U8.S8.SAT",
                    "IMMA.16832.U8.U8.SAT",
                ],
                (false, false) => [
                    "IMMA.16816.S8.S8",
                    "IMMA.16816.S8.U8",
                    "IMMA.16816.U8.S8",
                    "IMMA.16816.U8.U8",
                ],
                (false, true) => [
                    "IMMA.16816.S8.S8.SAT",
                    "IMMA.16816.S8.U8.SAT",
                    "IMMA.16816.U8.S8.SAT",
                    "IMMA.16816.U8.U8.SAT",
                ],
            };
            names[i]
        };
        match (self.shape, self.dtype, self.acc) {
            (_, D::S8 | D::U8, _) => imma(self.shape == S::M16N8K32),
            (S::M16N8K16, D::Bf16, _) => "HMMA.16816.F32.BF16",
            (S::M16N8K16 | S::M16N8K32, _, C::F16) => "HMMA.16816.F16",
            (S::M16N8K16 | S::M16N8K32, _, _) => "HMMA.16816.F32",
            (S::M16N8K8, D::Bf16, _) => "HMMA.1688.F32.BF16",
            (S::M16N8K8, D::Tf32, _) => "HMMA.1688.F32.TF32",
            (S::M16N8K8, _, C::F16) => "HMMA.1688.F16",
            (S::M16N8K8, _, _) => "HMMA.1688.F32",
            (S::M16N8K4, _, _) => "HMMA.1684.F32.TF32",
        }
    }

    /// What the SASS name does not say: for the FP8 forms on sm_90, the conversion ptxas adds
    /// (`None` for the others, whose one SASS instruction is the whole form).
    pub fn sass_note(&self) -> Option<&'static str> {
        self.is_fp8().then_some(
            "sm_90 has no FP8 mma.sync: ptxas 13.0.88 converts A and B to f16 (F2FP.F16.E4M3.UNPACK_B / .E5M2) and issues two HMMA.16816; sm_89 issues one QMMA.16832",
        )
    }

    fn check_dims(&self, name: &'static str, op: Operand, m: &Array2<f64>) -> Result<(), SimError> {
        let want = self.shape.dims(op);
        if m.dim() != (want.0 as usize, want.1 as usize) {
            return Err(SimError::OperandShape {
                operand: name,
                rows: m.nrows(),
                cols: m.ncols(),
                want_rows: want.0,
                want_cols: want.1,
            });
        }
        Ok(())
    }

    fn elem_encode(&self, op: Operand, v: f64) -> u32 {
        match op {
            Operand::C => self.acc.encode(v),
            _ => self.input_type(op).encode(v),
        }
    }

    fn elem_decode(&self, op: Operand, bits: u32) -> f64 {
        match op {
            Operand::C => self.acc.decode(bits),
            _ => self.input_type(op).decode(bits),
        }
    }

    pub(crate) fn elem_bits(&self, op: Operand) -> u32 {
        32 / self.elems_per_reg(op)
    }

    /// Packs A (M×K), B (K×N) and C (M×N) into per-lane registers by the fragment tables,
    /// rounding each element to its operand's type ([`MmaDtype::encode`], [`MmaAcc::encode`]).
    ///
    /// # Errors
    /// [`SimError::OperandShape`] if a matrix has the wrong shape.
    pub fn pack(
        &self,
        a: &Array2<f64>,
        b: &Array2<f64>,
        c: &Array2<f64>,
    ) -> Result<RawRegs, SimError> {
        self.check_dims("A", Operand::A, a)?;
        self.check_dims("B", Operand::B, b)?;
        self.check_dims("C", Operand::C, c)?;
        let mut r = RawRegs::zero();
        for (op, m) in [(Operand::A, a), (Operand::B, b), (Operand::C, c)] {
            let (bits, mask) = (self.elem_bits(op), u32::MAX >> (32 - self.elem_bits(op)));
            for lane in 0..32u32 {
                for reg in 0..self.regs(op) {
                    let mut word = 0u32;
                    for pos in 0..self.elems_per_reg(op) {
                        let (i, j) = self.fragment(op, lane, reg, pos);
                        let v = self.elem_encode(op, m[[i as usize, j as usize]]);
                        word |= (v & mask) << (bits * pos);
                    }
                    *r.slot(op, lane, reg) = word;
                }
            }
        }
        Ok(r)
    }

    /// Gathers operand `op` back from the registers as values (inverse of [`Self::pack`] up to
    /// the rounding; exact in f64 for every type).
    pub fn unpack(&self, op: Operand, regs: &RawRegs) -> Array2<f64> {
        let (rows, cols) = self.shape.dims(op);
        let mut m = Array2::<f64>::zeros((rows as usize, cols as usize));
        let bits = self.elem_bits(op);
        for lane in 0..32u32 {
            for reg in 0..self.regs(op) {
                let word = regs.get(op, lane, reg);
                for pos in 0..self.elems_per_reg(op) {
                    let (i, j) = self.fragment(op, lane, reg, pos);
                    m[[i as usize, j as usize]] = self.elem_decode(op, word >> (bits * pos));
                }
            }
        }
        m
    }
}

/// Per-lane registers of one mma with f32 accumulators: A and B packed two 16-bit (or four
/// 8-bit) elements per register (low bits = lower element index), C/D as f32.
#[derive(Clone, Debug, PartialEq)]
pub struct MmaRegs {
    /// `a[lane][reg]`, regs beyond the shape's count are 0.
    pub a: [[u32; 4]; 32],
    /// `b[lane][reg]`.
    pub b: [[u32; 2]; 32],
    /// `c[lane][reg]`.
    pub c: [[f32; 4]; 32],
}

impl MmaRegs {
    fn raw(&self) -> RawRegs {
        RawRegs {
            a: self.a,
            b: self.b,
            c: self.c.map(|l| l.map(f32::to_bits)),
        }
    }
}

fn f32_kind(shape: MmaShape, dtype: MmaDtype) -> MmaKind {
    MmaKind::unchecked(shape, dtype, MmaAcc::F32)
}

/// Packs A (M×K), B (K×N) and C (M×N) into per-lane registers by the fragment tables, rounding A
/// and B to `dtype`, C/D in f32 ([`MmaKind::pack`] with f32 accumulators).
///
/// # Errors
/// [`SimError::OperandShape`] if a matrix has the wrong shape, [`SimError::Unsupported`] if the
/// dtype is not modelled for the shape or does not accumulate in f32 (s8, u8: use [`MmaKind`]).
pub fn pack(
    shape: MmaShape,
    dtype: MmaDtype,
    a: &Array2<f32>,
    b: &Array2<f32>,
    c: &Array2<f32>,
) -> Result<MmaRegs, SimError> {
    let kind = MmaKind::new(shape, dtype, MmaAcc::F32)?;
    let r = kind.pack(&a.mapv(f64::from), &b.mapv(f64::from), &c.mapv(f64::from))?;
    Ok(MmaRegs {
        a: r.a,
        b: r.b,
        c: r.c.map(|l| l.map(f32::from_bits)),
    })
}

/// Gathers an operand back from f32-accumulator registers (inverse of [`pack`]).
pub fn unpack(shape: MmaShape, dtype: MmaDtype, op: Operand, regs: &MmaRegs) -> Array2<f32> {
    f32_kind(shape, dtype)
        .unpack(op, &regs.raw())
        .mapv(|v| v as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragment_tables_cover_every_element_once() {
        for shape in MmaShape::ALL {
            for op in [Operand::A, Operand::B, Operand::C] {
                let (r, c) = shape.dims(op);
                let mut seen = vec![0; (r * c) as usize];
                for lane in 0..32 {
                    for i in 0..shape.elems_per_lane(op) {
                        let (row, col) = element(shape, op, lane, i);
                        seen[(row * c + col) as usize] += 1;
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "{shape:?} {op:?}");
            }
        }
    }

    #[test]
    fn ptx_figure_spot_checks() {
        // PTX ISA m16n8k16 A figure: lane 6 (g=1, t=2): a0 = (1, 4..5), a3 = (9, 12..13).
        assert_eq!(fragment(MmaShape::M16N8K16, Operand::A, 6, 0, 0), (1, 4));
        assert_eq!(fragment(MmaShape::M16N8K16, Operand::A, 6, 3, 1), (9, 13));
        assert_eq!(fragment(MmaShape::M16N8K16, Operand::B, 6, 1, 1), (13, 1));
        assert_eq!(fragment(MmaShape::M16N8K16, Operand::C, 6, 2, 0), (9, 4));
        // m16n8k32 A: lane 6, a13 = register 3, byte 1: row g+8 = 9, col 4t + 1 + 16 = 25.
        assert_eq!(fragment(MmaShape::M16N8K32, Operand::A, 6, 3, 1), (9, 25));
    }

    #[test]
    fn fp8_special_values_follow_the_ocp_spec() {
        let e4 = MmaDtype::E4m3;
        assert_eq!(e4.decode(0x7e), 448.0); // S.1111.110: largest finite
        assert!(e4.decode(0x7f).is_nan() && e4.decode(0xff).is_nan());
        assert_eq!(e4.decode(0x78), 256.0); // S.1111.000 is a number, not infinity
        assert_eq!(e4.decode(0x01), 2f64.powi(-9)); // smallest subnormal
        assert_eq!(e4.decode(0x08), 2f64.powi(-6)); // smallest normal
        assert_eq!(e4.decode(0x80), 0.0);
        assert!(e4.decode(0x80).is_sign_negative());
        assert_eq!(e4.decode(0xb8), -1.0);
        let e5 = MmaDtype::E5m2;
        assert_eq!(e5.decode(0x7b), 57344.0);
        assert_eq!(e5.decode(0x7c), f64::INFINITY);
        assert_eq!(e5.decode(0xfc), f64::NEG_INFINITY);
        assert!(e5.decode(0x7d).is_nan() && e5.decode(0x7e).is_nan() && e5.decode(0x7f).is_nan());
        assert_eq!(e5.decode(0x01), 2f64.powi(-16));
        assert_eq!(e5.decode(0x3c), 1.0);
        // Round to nearest even and satfinite.
        assert_eq!(e4.encode(1000.0), 0x7e);
        assert_eq!(e4.encode(-1000.0), 0xfe);
        assert_eq!(e5.encode(1e9), 0x7b);
        assert_eq!(e4.encode(1.0625), 0x38); // halfway between 1.0 (0x38) and 1.125: even
        assert_eq!(e4.encode(1.1875), 0x3a); // halfway between 1.125 (0x39) and 1.25: even
    }

    #[test]
    fn execute_sums_in_the_accumulator_type() {
        // Every A element `a`, every B element `b`, every C element `c`: each D element is
        // c + K * a * b (K = 16 for m16n8k16, 32 for m16n8k32), worked out by hand.
        // f16 0.5 = 0x3800, e4m3 0.5 = 0x30 (exponent field 6, bias 7): 0.25 + 16 * 0.25 = 4.25
        // and 0.25 + 32 * 0.25 = 8.25, exact in f32 (integer-valued inputs cannot tell a float
        // sum from an integer one). s8 3 and -2 (0xfe), c = 5: 5 - 32 * 6 = -187. s8 127 * 127
        // from c = 2^31 - 1: 2^31 - 1 + 32 * 16129 = 2,147,999,775, wrapped modulo 2^32 into
        // s32 (PTX ISA §9.7.14.5.14, no .satfinite): -2,146,967,521.
        let f = |x: f32| x.to_bits();
        for (shape, dtype, acc, a, b, c, want) in [
            (
                MmaShape::M16N8K16,
                MmaDtype::F16,
                MmaAcc::F32,
                0x3800_3800u32,
                0x3800_3800u32,
                f(0.25),
                f(4.25),
            ),
            (
                MmaShape::M16N8K32,
                MmaDtype::E4m3,
                MmaAcc::F32,
                0x3030_3030,
                0x3030_3030,
                f(0.25),
                f(8.25),
            ),
            (
                MmaShape::M16N8K32,
                MmaDtype::S8,
                MmaAcc::S32,
                0x0303_0303,
                0xfefe_fefe,
                5,
                -187i32 as u32,
            ),
            (
                MmaShape::M16N8K32,
                MmaDtype::S8,
                MmaAcc::S32,
                0x7f7f_7f7f,
                0x7f7f_7f7f,
                i32::MAX as u32,
                -2_146_967_521i32 as u32,
            ),
        ] {
            let kind = MmaKind::new(shape, dtype, acc).unwrap();
            let mut regs = RawRegs::zero();
            for lane in 0..32 {
                regs.a[lane] = [a; 4];
                regs.b[lane] = [b; 2];
                regs.c[lane] = [c; 4];
            }
            let op = crate::sim::exec::WarpOp::Mma {
                kind,
                a: regs.a,
                b: regs.b.map(|r| [r[0], r[1], 0, 0]),
                c: regs.c,
            };
            let mut none = crate::sim::smem::SharedMemory::zeroed(0);
            let step = crate::sim::exec::execute(&mut none, &op).unwrap();
            for (lane, d) in step.regs.iter().enumerate() {
                assert_eq!(d, &[want; 4], "{shape:?} {dtype:?} lane {lane}");
            }
        }
    }

    // Third mutation round (2026-12-01): names and register counts from the PTX ISA (§9.7.14.5,
    // the mma fragment tables), SASS names as disassembled by `tilelab verify` on the H200
    // (f16/bf16) or public listings (s8), roundings worked out by hand.

    #[test]
    fn names_parse_and_register_counts_follow_the_ptx_isa() {
        use MmaShape as S;
        use Operand::{A, B, C};
        for (name, sh, a, b) in [
            ("m16n8k16", S::M16N8K16, 4, 2),
            ("m16n8k8", S::M16N8K8, 2, 1),
            ("m16n8k32", S::M16N8K32, 4, 2),
            ("m16n8k4", S::M16N8K4, 2, 1),
        ] {
            assert_eq!(MmaShape::parse(name).unwrap(), sh);
            assert_eq!(sh.name(), name);
            assert_eq!((sh.regs(A), sh.regs(B), sh.regs(C)), (a, b, 4), "{name}");
        }
        assert!(matches!(
            MmaShape::parse("m8n8k4"),
            Err(SimError::Unknown { given, .. }) if given == "m8n8k4"
        ));
        for name in ["f16", "bf16", "s8", "u8", "e4m3", "e5m2", "tf32"] {
            assert_eq!(MmaDtype::parse(name).unwrap().name(), name);
        }
        assert!(MmaDtype::parse("f64").is_err());
        // The widths the shape's registers hold (PTX ISA §9.7.14.5.7, 9): m16n8k8 tf32 takes 4 A
        // and 2 B registers, m16n8k16 s8 2 A and 1 B.
        let k = |sh, d, c| MmaKind::new(sh, d, c).unwrap();
        let tf = k(S::M16N8K8, MmaDtype::Tf32, MmaAcc::F32);
        assert_eq!((tf.regs(A), tf.regs(B), tf.regs(C)), (4, 2, 4));
        let i8 = k(S::M16N8K16, MmaDtype::S8, MmaAcc::S32);
        assert_eq!((i8.regs(A), i8.regs(B), i8.regs(C)), (2, 1, 4));
        for (name, acc) in [
            ("f32", MmaAcc::F32),
            ("f16", MmaAcc::F16),
            ("s32", MmaAcc::S32),
        ] {
            assert_eq!(MmaAcc::parse(name).unwrap(), acc);
            assert_eq!(acc.name(), name);
        }
        assert!(matches!(
            MmaAcc::parse("f64"),
            Err(SimError::Unknown { given, .. }) if given == "f64"
        ));
        assert_eq!(
            S::M16N8K16.ptx(MmaDtype::F16),
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
        );
        assert_eq!(
            S::M16N8K32.ptx(MmaDtype::S8),
            "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"
        );
        assert_eq!(
            S::M16N8K32.ptx(MmaDtype::E4m3),
            "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"
        );
        assert_eq!(S::M16N8K16.sass(MmaDtype::F16), "HMMA.16816.F32");
        assert_eq!(S::M16N8K16.sass(MmaDtype::Bf16), "HMMA.16816.F32.BF16");
        assert_eq!(S::M16N8K8.sass(MmaDtype::F16), "HMMA.1688.F32");
        assert_eq!(S::M16N8K32.sass(MmaDtype::S8), "IMMA.16832.S8.S8");
        for d in MmaDtype::ALL {
            let want = matches!(d, MmaDtype::S8 | MmaDtype::U8);
            assert_eq!(d.default_acc() == MmaAcc::S32, want, "{d:?}");
            assert_eq!(d.default_acc() == MmaAcc::F32, !want, "{d:?}");
        }
    }

    #[test]
    fn check_dtype_takes_the_modelled_pairs_only() {
        use MmaDtype as D;
        use MmaShape as S;
        let ok = |s: S, d: D| s.check_dtype(d).is_ok();
        // PTX ISA §9.7.14.5.14, the m16n8 forms (and ptxas 13.0.88 refusing the others).
        for d in [D::F16, D::Bf16, D::S8, D::U8] {
            assert!(ok(S::M16N8K16, d), "{d:?}");
        }
        assert!(!ok(S::M16N8K16, D::E4m3) && !ok(S::M16N8K16, D::Tf32));
        for d in [D::F16, D::Bf16, D::Tf32] {
            assert!(ok(S::M16N8K8, d), "{d:?}");
        }
        assert!(!ok(S::M16N8K8, D::S8));
        for d in [D::S8, D::U8, D::E4m3, D::E5m2] {
            assert!(ok(S::M16N8K32, d), "{d:?}");
        }
        assert!(!ok(S::M16N8K32, D::F16));
        assert!(ok(S::M16N8K4, D::Tf32) && !ok(S::M16N8K4, D::F16));
        let e = S::M16N8K16.check_dtype(D::E4m3).unwrap_err().to_string();
        assert!(e.contains("mma m16n8k16 with --dtype e4m3"), "{e}");
        // Mixed inputs: s8 with u8 and e4m3 with e5m2 only; accumulators and .satfinite.
        let w = |a, b, c, sat| MmaKind::with_types(S::M16N8K32, a, b, c, sat);
        assert!(w(D::S8, D::U8, MmaAcc::S32, true).is_ok());
        assert!(w(D::E4m3, D::E5m2, MmaAcc::F32, false).is_ok());
        assert!(w(D::S8, D::E4m3, MmaAcc::S32, false).is_err());
        assert!(w(D::E4m3, D::E4m3, MmaAcc::F32, true).is_err());
        assert!(MmaKind::new(S::M16N8K8, D::Tf32, MmaAcc::F16).is_err());
        assert!(MmaKind::new(S::M16N8K8, D::Bf16, MmaAcc::F16).is_err());
        // Oldest targets (ptxas 13.0.88: "requires .target sm_89 or higher" for FP8, sm_80 for
        // .m16n8k16 and .bf16; m16n8k8 f16 assembles for sm_75).
        let sm = |sh, d, c| MmaKind::new(sh, d, c).unwrap().min_sm();
        assert_eq!(sm(S::M16N8K8, D::F16, MmaAcc::F32), 75);
        assert_eq!(sm(S::M16N8K16, D::F16, MmaAcc::F32), 80);
        assert_eq!(sm(S::M16N8K8, D::Bf16, MmaAcc::F32), 80);
        assert_eq!(sm(S::M16N8K16, D::S8, MmaAcc::S32), 80);
        assert_eq!(sm(S::M16N8K32, D::E5m2, MmaAcc::F32), 89);
    }

    #[test]
    fn encode_and_bits_round_to_nearest_even_and_saturate() {
        use MmaDtype as D;
        // s8/u8: round to nearest even, saturate (cvt.rni.sat).
        assert_eq!(D::S8.encode(-3.0), 0xfd);
        assert_eq!(D::S8.encode(-2.5), 0xfe);
        assert_eq!(D::S8.encode(2.5), 2);
        assert_eq!(D::S8.encode(-200.0), 0x80);
        assert_eq!(D::S8.encode(200.0), 0x7f);
        assert_eq!(D::U8.encode(3.5), 4);
        assert_eq!(D::U8.encode(300.0), 255);
        assert_eq!(D::U8.encode(-5.0), 0);
        // IEEE half 1.0 = 0x3c00, -2.0 = 0xc000; bfloat16 1.0 = 0x3f80, -2.0 = 0xc000.
        assert_eq!(D::F16.to_bits(1.0), 0x3c00);
        assert_eq!(D::F16.to_bits(-2.0), 0xc000);
        assert_eq!(D::Bf16.to_bits(1.0), 0x3f80);
        assert_eq!(D::F16.from_bits(0x3c00), 1.0);
        assert_eq!(D::Bf16.from_bits(0xc000), -2.0);
        // OFP8: e4m3 1.0 = 0.0111.000 (bias 7), 1.125 = 0x39, 1.25 = 0x3a, largest 448 = 0x7e;
        // e5m2 1.0 = 0.01111.00 (bias 15), largest 57344 = 0x7b.
        assert_eq!(D::E4m3.from_bits(0x38), 1.0);
        assert_eq!(D::E4m3.from_bits(0xb8), -1.0);
        assert_eq!(D::E5m2.from_bits(0x3c), 1.0);
        assert_eq!(D::E4m3.encode(1.0625), 0x38); // halfway 1.0 / 1.125: the even code
        assert_eq!(D::E4m3.encode(1.1875), 0x3a); // halfway 1.125 / 1.25: the even code
        assert_eq!(D::E4m3.encode(1.07), 0x39);
        assert_eq!(D::E4m3.encode(-1.07), 0xb9);
        assert_eq!(D::E4m3.encode(1000.0), 0x7e);
        assert_eq!(D::E4m3.encode(-1000.0), 0xfe);
        assert_eq!(D::E5m2.encode(1e6), 0x7b);
        assert_eq!(D::E4m3.encode(f64::NAN), 0x7f);
        assert_eq!(D::E5m2.to_bits(1.0), 0x3c);
    }

    #[test]
    fn sass_names_are_the_ones_ptxas_13_0_assembles() {
        // nvdisasm of ptxas 13.0.88's sm_90 and sm_89 CUBINs of tests/data/ptx_mma/mma_forms.ptx
        // (docs/log/2026-12-02-mma-forms.md); cuobjdump of the H200 driver's CUBIN agrees.
        use MmaAcc as C;
        use MmaDtype as D;
        use MmaShape as S;
        let k = |sh, a, b, c, sat| MmaKind::with_types(sh, a, b, c, sat).unwrap();
        for (kind, sm90, sm89, n90) in [
            (
                k(S::M16N8K16, D::F16, D::F16, C::F16, false),
                "HMMA.16816.F16",
                "HMMA.16816.F16",
                1,
            ),
            (
                k(S::M16N8K8, D::F16, D::F16, C::F16, false),
                "HMMA.1688.F16",
                "HMMA.1688.F16",
                1,
            ),
            (
                k(S::M16N8K16, D::Bf16, D::Bf16, C::F32, false),
                "HMMA.16816.F32.BF16",
                "HMMA.16816.F32.BF16",
                1,
            ),
            (
                k(S::M16N8K8, D::Bf16, D::Bf16, C::F32, false),
                "HMMA.1688.F32.BF16",
                "HMMA.1688.F32.BF16",
                1,
            ),
            (
                k(S::M16N8K8, D::Tf32, D::Tf32, C::F32, false),
                "HMMA.1688.F32.TF32",
                "HMMA.1688.F32.TF32",
                1,
            ),
            (
                k(S::M16N8K4, D::Tf32, D::Tf32, C::F32, false),
                "HMMA.1684.F32.TF32",
                "HMMA.1684.F32.TF32",
                1,
            ),
            (
                k(S::M16N8K16, D::U8, D::U8, C::S32, true),
                "IMMA.16816.U8.U8.SAT",
                "IMMA.16816.U8.U8.SAT",
                1,
            ),
            (
                k(S::M16N8K32, D::S8, D::U8, C::S32, false),
                "IMMA.16832.S8.U8",
                "IMMA.16832.S8.U8",
                1,
            ),
            (
                k(S::M16N8K32, D::S8, D::S8, C::S32, true),
                "IMMA.16832.S8.S8.SAT",
                "IMMA.16832.S8.S8.SAT",
                1,
            ),
            (
                k(S::M16N8K32, D::E4m3, D::E5m2, C::F32, false),
                "HMMA.16816.F32",
                "QMMA.16832.F32.E4M3.E5M2",
                2,
            ),
            (
                k(S::M16N8K32, D::E5m2, D::E5m2, C::F32, false),
                "HMMA.16816.F32",
                "QMMA.16832.F32.E5M2.E5M2",
                2,
            ),
        ] {
            assert_eq!(kind.sass(), sm90, "{kind:?}");
            assert_eq!(kind.sass_on(89), sm89, "{kind:?}");
            assert_eq!(kind.sass_count(90), n90, "{kind:?}");
            assert_eq!(kind.sass_count(89), 1, "{kind:?}");
            assert_eq!(kind.sass_note().is_some(), n90 == 2, "{kind:?}");
        }
        let fp8 = k(S::M16N8K32, D::E4m3, D::E4m3, C::F32, false)
            .sass_note()
            .unwrap();
        assert!(fp8.contains("F2FP") && fp8.contains("QMMA"), "{fp8}");
    }

    /// tf32: the register's 13 low mantissa bits are not read (measured on the H200,
    /// tests/data/ptx_mma/ `tf32_k8_lowbits`); encoding rounds to nearest, ties away from zero
    /// (`cvt.rna.tf32.f32`): 1 + 2^-11 is halfway between 1 and 1 + 2^-10 and goes up.
    #[test]
    fn tf32_reads_19_bits_and_rounds_ties_away() {
        let t = MmaDtype::Tf32;
        assert_eq!(t.decode(0x3f80_1fff), 1.0);
        assert_eq!(t.decode(0xbfc0_0001), -1.5);
        assert_eq!(t.encode(1.0 + 2f64.powi(-11)), 0x3f80_2000);
        assert_eq!(t.encode(-(1.0 + 2f64.powi(-11))), 0xbf80_2000);
        assert_eq!(t.encode(1.0 + 2f64.powi(-12)), 0x3f80_0000);
        assert_eq!(t.encode(f64::from(f32::MAX)), 0x7f80_0000);
        assert_eq!(t.bits(), 32);
    }

    /// The free `pack` and the f32 mma op: D read through the PTX ISA's C/D
    /// fragment (§9.7.14.5.8: c0, c1 at row groupID, columns 2·threadID_in_group + 0/1; c2, c3
    /// eight rows below) equals A·B + C computed with ndarray from the input matrices.
    #[test]
    fn free_execute_gives_d_in_the_c_fragment_layout() {
        let a = Array2::from_shape_fn((16, 16), |(i, j)| i as f32 - j as f32);
        let b = Array2::from_shape_fn((16, 8), |(i, j)| ((i + 2 * j) % 5) as f32);
        let c = Array2::from_shape_fn((16, 8), |(i, j)| (100 * i + j) as f32);
        let want = a.dot(&b) + &c;
        let regs = pack(MmaShape::M16N8K16, MmaDtype::F16, &a, &b, &c).unwrap();
        let op =
            crate::sim::exec::WarpOp::mma_f32(MmaShape::M16N8K16, MmaDtype::F16, &regs).unwrap();
        let d = crate::sim::exec::execute(&mut crate::sim::smem::SharedMemory::zeroed(0), &op)
            .unwrap()
            .regs
            .map(|l| l.map(f32::from_bits));
        for (lane, r) in d.iter().enumerate() {
            let (g, t) = (lane / 4, lane % 4);
            for (i, &v) in r.iter().enumerate() {
                let (row, col) = (g + 8 * (i / 2), 2 * t + i % 2);
                assert_eq!(v, want[(row, col)], "lane {lane} c{i}");
            }
        }
        // A matrix of the wrong shape is named.
        let e = pack(MmaShape::M16N8K16, MmaDtype::F16, &b, &b, &c).unwrap_err();
        assert!(
            matches!(
                e,
                SimError::OperandShape {
                    operand: "A",
                    rows: 16,
                    cols: 8,
                    want_rows: 16,
                    want_cols: 16
                }
            ),
            "{e}"
        );
        let e = pack(MmaShape::M16N8K16, MmaDtype::F16, &a, &a, &c).unwrap_err();
        assert!(
            matches!(e, SimError::OperandShape { operand: "B", .. }),
            "{e}"
        );
        let e = pack(MmaShape::M16N8K16, MmaDtype::F16, &a, &b, &b.t().to_owned()).unwrap_err();
        assert!(
            matches!(e, SimError::OperandShape { operand: "C", .. }),
            "{e}"
        );
    }
}
