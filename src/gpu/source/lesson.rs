//! The CUDA C kernel of a lesson, generated from the lesson's data so that the GPU runs exactly
//! the tiling the simulator runs. `kernels/lesson_<name>.cu` holds this text (regenerate with
//! `tilelab lessons kernel NAME > kernels/lesson_NAME.cu`; `tests/lessons.rs` checks they agree).
//!
//! # The kernel contract (for `tilelab verify`)
//! ```text
//! extern "C" __global__ void lesson_<name>(unsigned *out, int step, int layout, int variant)
//! ```
//! * launch one block of 32 threads, no dynamic shared memory (the tiles are static
//!   `__shared__`, at most 48 KB);
//! * shared memory is first filled with b16 indices (the halfword at byte `2i` holds `i`, like
//!   `sim::smem::SharedMemory::with_b16_indices`), so every loaded value names its address;
//! * the warp then runs the steps of variant `variant` (index into the lesson's `variants`)
//!   whose file index (0-based) is `<= step`, in order, under layout `layout` (index into the
//!   lesson's `layouts`), with inline PTX `ld.shared`/`st.shared`/`ldmatrix`/`stmatrix`/
//!   `mma.sync` (a lesson with a `stmatrix` step compiles for sm_90 only);
//! * `out[lane*4 + r]` receives register `r` of the last step run: the loaded registers for
//!   loads, the source registers for stores (`lane << 16 | r`, also for `stmatrix`), the D registers (f32 bits) for
//!   mma. Unused registers are 0.
//!
//! # Which registers an mma uses
//! When a step feeds operand B (an ldmatrix step with `feeds` of B), the A operand of the mmas
//! that follow it is fixed: the registers of the latest step feeding A since the previous B
//! load, or, if there is none, the accumulators of the previous mmas packed to f16x2
//! (`cvt.rn.f16x2.f32`, SASS `F2FP.PACK_AB`: "P stays in registers"). The j-th mma after a B
//! load uses that load's j-th B feed and accumulator j. Accumulators carry over while A keeps
//! coming from the same tile (the k-steps of one product) and restart at 0 otherwise.

use std::fmt::Write;

use crate::lessons::run::PlacedTile;
use crate::lessons::{AffineExpr, Feed, LanePattern, Lesson, StepOp, Tile};
use crate::sim::instr::{AccessWidth, Instruction};
use crate::sim::layout::Order;
use crate::sim::mma::{MmaDtype, MmaShape, Operand};

#[derive(Clone, Debug, Default, PartialEq)]
enum ASrc {
    #[default]
    None,
    Feed {
        step: usize,
        regs: Vec<u32>,
        tile: usize,
    },
    Packed,
}

/// The CUDA C source of `lesson`'s kernel (see the module docs for the contract).
///
/// # Panics
/// Never for a lesson that loaded (its layouts were checked then).
pub fn kernel_source(lesson: &Lesson) -> String {
    let placed: Vec<&[PlacedTile]> = lesson.layouts.iter().map(|l| l.tiles.as_slice()).collect();
    let mut s = String::new();
    emit_header(&mut s, lesson);
    s.push_str(PRELUDE);
    emit_prologue(&mut s, lesson, &placed);
    for vi in 0..lesson.variants.len() {
        emit_variant(&mut s, lesson, vi);
    }
    s.push_str("    for (int q = 0; q < 4; ++q) out[lane * 4 + q] = d[q];\n}\n");
    s
}

/// The comment block: what the kernel is, its layouts, variants and steps.
fn emit_header(s: &mut String, lesson: &Lesson) {
    let f = lesson.kernel_function();
    let _ = writeln!(
        s,
        "// Lesson `{}`: {}\n// GENERATED from {} by `tilelab lessons kernel {}`; do not edit by hand.\n//\n// extern \"C\" __global__ void {f}(unsigned *out, int step, int layout, int variant)\n// One block of 32 threads. Shared memory holds b16 indices (halfword i = i); the warp runs the\n// steps of `variant` with file index <= `step` under `layout`, and out[lane*4 + r] gets register r\n// of the last step (f32 bits for mma). Contract: src/gpu/source/lesson.rs.\n//",
        lesson.name, lesson.title, lesson.source, lesson.name
    );
    let _ = writeln!(s, "// layouts: {}", lesson.layout_specs().join(" | "));
    let _ = writeln!(s, "// variants: {}", lesson.variants.join(" | "));
    for (i, st) in lesson.steps.iter().enumerate() {
        let _ = writeln!(
            s,
            "// step {i}: {} - {}{}",
            st.op_name(),
            st.title,
            st.variant
                .as_ref()
                .map(|v| format!(" [{v}]"))
                .unwrap_or_default()
        );
    }
}

/// The kernel's signature, shared memory (filled with b16 indices), each tile's layout table
/// per layout choice, and the register arrays of every step.
fn emit_prologue(s: &mut String, lesson: &Lesson, placed: &[&[PlacedTile]]) {
    let f = lesson.kernel_function();
    let nl = placed.len();
    let smem_bytes = placed
        .iter()
        .map(|p| {
            p.last()
                .map_or(0, |t| t.base + t.layout.size_bytes())
                .next_multiple_of(16)
        })
        .max()
        .unwrap_or(16);
    let _ = writeln!(
        s,
        "\nextern \"C\" __global__ void {f}(unsigned *out, int step, int layout, int variant)\n{{"
    );
    let _ = writeln!(
        s,
        "    __shared__ __align__(1024) unsigned char smem[{smem_bytes}];"
    );
    s.push_str("    const unsigned lane = threadIdx.x & 31;\n");
    s.push_str("    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);\n");
    s.push_str("    if (layout < 0 || layout >= ");
    let _ = writeln!(s, "{nl}) return;");
    let _ = writeln!(
        s,
        "    for (unsigned i = lane; i < {}u; i += 32) ((unsigned short *)smem)[i] = (unsigned short)i;",
        smem_bytes / 2
    );
    s.push_str("    __syncwarp();\n");
    for (ti, t) in lesson.tiles.iter().enumerate() {
        emit_tile(s, ti, t, placed);
    }
    s.push_str("    unsigned d[4] = {0u, 0u, 0u, 0u};\n");
    for si in 0..lesson.steps.len() {
        let _ = writeln!(s, "    unsigned s{si}[4] = {{0u, 0u, 0u, 0u}};");
    }
    s.push_str("    float acc[4][4] = {};\n    unsigned s_packed[4] = {0u, 0u, 0u, 0u};\n    (void)acc;\n    (void)s_packed;\n    (void)s0;\n");
}

/// Tile `ti`'s layout (`Lay`) and base address under every layout choice.
fn emit_tile(s: &mut String, ti: usize, t: &Tile, placed: &[&[PlacedTile]]) {
    let nl = placed.len();
    let lays: Vec<String> = placed
        .iter()
        .map(|p| {
            let l = p[ti].layout;
            let (b, m, sh) = l.swizzle.map_or((0, 0, 0), |z| (z.bits, z.base, z.shift));
            format!(
                "{{{}u, {}u, {}u, {}u, {}u, {}u, {}u, {}u, {}u}}",
                l.rows,
                l.cols,
                l.elem_bytes,
                u32::from(l.order == Order::Col),
                l.pad,
                u32::from(l.swizzle.is_some()),
                b,
                m,
                sh
            )
        })
        .collect();
    let bases: Vec<String> = placed.iter().map(|p| format!("{}u", p[ti].base)).collect();
    let _ = writeln!(
        s,
        "    // tile {}: {}x{} elements of {} bytes; layouts {}",
        t.name,
        t.rows,
        t.cols,
        t.elem_bytes,
        placed
            .iter()
            .map(|p| p[ti].spec.clone())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(
        s,
        "    const Lay lay{ti}[{nl}] = {{{}}};\n    const unsigned base{ti}[{nl}] = {{{}}};",
        lays.join(", "),
        bases.join(", ")
    );
}

/// The steps of variant `vi`, each under `if (step >= i)`.
fn emit_variant(s: &mut String, lesson: &Lesson, vi: usize) {
    let _ = writeln!(s, "    if (variant == {vi}) {{ // {}", lesson.variants[vi]);
    let mut ops = Operands::default();
    for si in lesson.steps_of(vi) {
        let st = &lesson.steps[si];
        let _ = writeln!(s, "        if (step >= {si}) {{ // {}", st.title);
        match &st.op {
            StepOp::Shared {
                instruction,
                tile,
                access,
            } => {
                let t = &lesson.tiles[*tile];
                let n = instruction.bytes_per_address() / t.elem_bytes;
                let _ = writeln!(s, "            unsigned r, c;");
                emit_coords(s, access, t.cols, n);
                let _ = writeln!(
                    s,
                    "            const unsigned a = sbase + base{tile}[layout] + lay_off(lay{tile}[layout], r, c);"
                );
                emit_shared(s, *instruction, si);
                ops.after_load(s, si, *tile, &st.feeds);
            }
            StepOp::Mma { shape, dtype } => {
                let (a, b, acc) = ops.next_mma();
                emit_mma(s, *shape, *dtype, &a, &b, acc, si);
            }
        }
        let _ = writeln!(
            s,
            "            for (int q = 0; q < 4; ++q) d[q] = s{si}[q];\n        }}"
        );
    }
    s.push_str("    }\n");
}

/// Which registers the mmas of one variant use, as its steps go by (module docs: "Which
/// registers an mma uses").
#[derive(Default)]
struct Operands {
    /// A of the mmas since the last B load.
    a_src: ASrc,
    /// The latest step feeding A since the last B load: (step, registers, tile).
    a_since_b: Option<(usize, Vec<u32>, usize)>,
    /// The B feeds of the last B load: (step, registers).
    b_feeds: Vec<(usize, Vec<u32>)>,
    /// mmas since the last B load.
    mma_since_b: usize,
    /// The tile A came from at the previous B load.
    last_a_tile: Option<usize>,
}

impl Operands {
    /// After shared-memory step `si` over `tile` with `feeds`: remembers an A feed; on a B feed,
    /// fixes A of the next mmas and emits the packing of P and the accumulator reset.
    fn after_load(&mut self, s: &mut String, si: usize, tile: usize, feeds: &[Feed]) {
        for fd in feeds {
            if fd.operand == Operand::A {
                self.a_since_b = Some((si, fd.regs.clone(), tile));
            }
        }
        let bf: Vec<(usize, Vec<u32>)> = feeds
            .iter()
            .filter(|fd| fd.operand == Operand::B)
            .map(|fd| (si, fd.regs.clone()))
            .collect();
        if bf.is_empty() {
            return;
        }
        self.b_feeds = bf;
        self.mma_since_b = 0;
        let new_a = match self.a_since_b.take() {
            Some((step, regs, tile)) => ASrc::Feed { step, regs, tile },
            None if self.a_src != ASrc::None => ASrc::Packed,
            None => ASrc::None,
        };
        let this_tile = match &new_a {
            ASrc::Feed { tile, .. } => Some(*tile),
            _ => None,
        };
        let carry = this_tile.is_some() && this_tile == self.last_a_tile;
        if new_a == ASrc::Packed {
            s.push_str("            // A of the next mmas: the accumulators packed to f16x2 (F2FP.PACK_AB)\n");
            s.push_str("            pack_acc(acc, s_packed);\n");
        }
        if !carry {
            s.push_str("            for (int j = 0; j < 4; ++j) for (int q = 0; q < 4; ++q) acc[j][q] = 0.0f;\n");
        }
        self.last_a_tile = this_tile;
        self.a_src = new_a;
    }

    /// The next mma's A (4) and B (2) register expressions and its accumulator index: the j-th
    /// mma after a B load uses that load's j-th B feed and accumulator j.
    fn next_mma(&mut self) -> (Vec<String>, Vec<String>, usize) {
        let j = self.mma_since_b;
        self.mma_since_b += 1;
        let regs_of = |step: usize, regs: &[u32], n: usize| -> Vec<String> {
            (0..n)
                .map(|k| {
                    regs.get(k)
                        .map_or("0u".to_string(), |r| format!("s{step}[{r}]"))
                })
                .collect()
        };
        let a = match &self.a_src {
            ASrc::Feed { step, regs, .. } => regs_of(*step, regs, 4),
            ASrc::Packed => (0..4).map(|k| format!("s_packed[{k}]")).collect(),
            ASrc::None => vec!["0u".to_string(); 4],
        };
        let b = match self.b_feeds.get(j % self.b_feeds.len().max(1)) {
            Some((step, regs)) => regs_of(*step, regs, 2),
            None => vec!["0u".to_string(); 2],
        };
        (a, b, j % 4)
    }
}

fn emit_coords(s: &mut String, access: &LanePattern, cols: u32, n: u32) {
    match access {
        LanePattern::Sweep { row, col, stride } => {
            let st = if *stride == 0 { n } else { *stride };
            let _ = writeln!(
                s,
                "            {{ const unsigned idx = {}u + lane * {st}u; r = idx / {cols}u; c = idx % {cols}u; }}",
                row * cols + col
            );
        }
        LanePattern::Column { row, col, period } => {
            let _ = writeln!(s, "            r = {row}u + lane % {period}u; c = {col}u;");
        }
        LanePattern::Broadcast { row, col } => {
            let _ = writeln!(s, "            r = {row}u; c = {col}u;");
        }
        LanePattern::Ldmatrix { matrices } => {
            let rows: Vec<String> = matrices.iter().map(|m| format!("{}u", m.0)).collect();
            let cs: Vec<String> = matrices.iter().map(|m| format!("{}u", m.1)).collect();
            let k = matrices.len();
            let _ = writeln!(
                s,
                "            {{ const unsigned mr[{k}] = {{{}}}, mc[{k}] = {{{}}}; const unsigned m = (lane / 8) % {k}u; r = mr[m] + lane % 8; c = mc[m]; }}",
                rows.join(", "),
                cs.join(", ")
            );
        }
        LanePattern::Affine { row, col } => {
            let expr = |e: &AffineExpr| {
                let mut t = format!("{}u", e.base);
                for &(per, div, m) in &e.terms {
                    let _ = write!(t, " + {per}u * ((lane / {div}u) % {m}u)");
                }
                t
            };
            let _ = writeln!(s, "            r = {}; c = {};", expr(row), expr(col));
        }
        LanePattern::Coords(c) => {
            let rs: Vec<String> = c.iter().map(|x| format!("{}u", x.0)).collect();
            let cs: Vec<String> = c.iter().map(|x| format!("{}u", x.1)).collect();
            let _ = writeln!(
                s,
                "            {{ const unsigned cr[32] = {{{}}}, cc[32] = {{{}}}; r = cr[lane]; c = cc[lane]; }}",
                rs.join(", "),
                cs.join(", ")
            );
        }
    }
}

fn emit_shared(s: &mut String, ins: Instruction, si: usize) {
    let v = format!("s{si}");
    let line = match ins {
        Instruction::Ld(w) => match w {
            AccessWidth::V2 => format!(
                "asm volatile(\"ld.shared.v2.b32 {{%0, %1}}, [%2];\" : \"=r\"({v}[0]), \"=r\"({v}[1]) : \"r\"(a) : \"memory\");"
            ),
            AccessWidth::V4 => format!(
                "asm volatile(\"ld.shared.v4.b32 {{%0, %1, %2, %3}}, [%4];\" : \"=r\"({v}[0]), \"=r\"({v}[1]), \"=r\"({v}[2]), \"=r\"({v}[3]) : \"r\"(a) : \"memory\");"
            ),
            _ => format!(
                "asm volatile(\"ld.shared.{} %0, [%1];\" : \"=r\"({v}[0]) : \"r\"(a) : \"memory\");",
                w.suffix()
            ),
        },
        Instruction::St(w) => {
            let src = format!(
                "for (int q = 0; q < 4; ++q) {v}[q] = (lane << 16) | (unsigned)q;\n            "
            );
            src + &match w {
                AccessWidth::V2 => format!(
                    "asm volatile(\"st.shared.v2.b32 [%0], {{%1, %2}};\" :: \"r\"(a), \"r\"({v}[0]), \"r\"({v}[1]) : \"memory\");\n            {v}[2] = {v}[3] = 0u;"
                ),
                AccessWidth::V4 => format!(
                    "asm volatile(\"st.shared.v4.b32 [%0], {{%1, %2, %3, %4}};\" :: \"r\"(a), \"r\"({v}[0]), \"r\"({v}[1]), \"r\"({v}[2]), \"r\"({v}[3]) : \"memory\");"
                ),
                _ => format!(
                    "asm volatile(\"st.shared.{} [%0], %1;\" :: \"r\"(a), \"r\"({v}[0]) : \"memory\");\n            {v}[1] = {v}[2] = {v}[3] = 0u;",
                    w.suffix()
                ),
            } + "\n            __syncwarp();"
        }
        Instruction::Ldmatrix { num, trans } => {
            let t = if trans { ".trans" } else { "" };
            let k = num.count();
            let regs: Vec<String> = (0..k).map(|i| format!("%{i}")).collect();
            let outs: Vec<String> = (0..k).map(|i| format!("\"=r\"({v}[{i}])")).collect();
            format!(
                "asm volatile(\"ldmatrix.sync.aligned.m8n8.x{k}{t}.shared.b16 {{{}}}, [%{k}];\" : {} : \"r\"(a) : \"memory\");",
                regs.join(", "),
                outs.join(", ")
            )
        }
        // stmatrix (sm_90): every lane sends `lane << 16 | q` in register q, as st.shared does.
        Instruction::Stmatrix { num, trans } => {
            let t = if trans { ".trans" } else { "" };
            let k = num.count();
            let regs: Vec<String> = (1..=k).map(|i| format!("%{i}")).collect();
            let ins: Vec<String> = (0..k).map(|i| format!("\"r\"({v}[{i}])")).collect();
            format!(
                "for (int q = 0; q < 4; ++q) {v}[q] = q < {k} ? (lane << 16) | (unsigned)q : 0u;\n            asm volatile(\"stmatrix.sync.aligned.m8n8.x{k}{t}.shared.b16 [%0], {{{}}};\" :: \"r\"(a), {} : \"memory\");\n            __syncwarp();",
                regs.join(", "),
                ins.join(", ")
            )
        }
        // The loader rejects it in lessons; a kernel that names one does not compile.
        Instruction::CpAsync(_) => {
            format!("#error \"{ins}: lesson kernels do not generate this instruction\"")
        }
    };
    let _ = writeln!(s, "            {line}");
}

fn emit_mma(
    s: &mut String,
    shape: MmaShape,
    dtype: MmaDtype,
    a: &[String],
    b: &[String],
    acc: usize,
    si: usize,
) {
    let t = dtype.name();
    let (na, nb) = (
        shape.regs(Operand::A) as usize,
        shape.regs(Operand::B) as usize,
    );
    let (m, n, k) = shape.mnk();
    let mut ops = 4usize;
    let aregs: Vec<String> = (0..na)
        .map(|_| {
            ops += 1;
            format!("%{}", ops - 1)
        })
        .collect();
    let bregs: Vec<String> = (0..nb)
        .map(|_| {
            ops += 1;
            format!("%{}", ops - 1)
        })
        .collect();
    let cregs: Vec<String> = (0..4).map(|q| format!("%{q}")).collect();
    let ins: Vec<String> = a[..na]
        .iter()
        .chain(b[..nb].iter())
        .map(|x| format!("\"r\"({x})"))
        .collect();
    let _ = writeln!(
        s,
        "            asm volatile(\"mma.sync.aligned.m{m}n{n}k{k}.row.col.f32.{t}.{t}.f32 {{{}}}, {{{}}}, {{{}}}, {{{}}};\"\n                : \"+f\"(acc[{acc}][0]), \"+f\"(acc[{acc}][1]), \"+f\"(acc[{acc}][2]), \"+f\"(acc[{acc}][3])\n                : {});",
        cregs.join(", "),
        aregs.join(", "),
        bregs.join(", "),
        cregs.join(", "),
        ins.join(", ")
    );
    let _ = writeln!(
        s,
        "            for (int q = 0; q < 4; ++q) s{si}[q] = __float_as_uint(acc[{acc}][q]);"
    );
}

const PRELUDE: &str = r#"
// A tile layout, as tilelab's sim::layout::Layout: element (r, c) -> byte offset.
struct Lay {
    unsigned rows, cols, eb, colmajor, pad, swz, sb, sm, ss;
};

__device__ __forceinline__ unsigned lay_off(const Lay &l, unsigned r, unsigned c)
{
    const unsigned pitch = l.colmajor ? l.rows + l.pad : l.cols + l.pad;
    unsigned o = l.colmajor ? c * pitch + r : r * pitch + c;
    if (l.swz) {
        // CuTe Swizzle<B,M,S> on the element offset: bits [M+S, M+S+B) XORed into [M, M+B).
        const unsigned yyy = ((1u << l.sb) - 1u) << (l.sm + l.ss);
        o ^= (o & yyy) >> l.ss;
    }
    return o * l.eb;
}

// The accumulators of two n8 mmas, packed to f16x2 as the A fragment of the next mma:
// a0 = (acc0 c0, c1), a1 = (acc0 c2, c3), a2 = (acc1 c0, c1), a3 = (acc1 c2, c3).
// cvt.rn.f16x2.f32 d, hi, lo (SASS F2FP.PACK_AB).
__device__ __forceinline__ void pack_acc(const float acc[4][4], unsigned p[4])
{
    for (int j = 0; j < 2; ++j)
        for (int h = 0; h < 2; ++h)
            asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(p[2 * j + h]) : "f"(acc[j][2 * h + 1]), "f"(acc[j][2 * h]));
}
"#;
