#!/usr/bin/env python3
"""Writes the PTX ISA fragment tables as data: tests/data/ptx_isa/*.json.

A second, independent implementation of the fragment layouts that `crates/tilelab-core/src/sim/isa/ldmatrix.rs` and
`crates/tilelab-core/src/sim/isa/mma.rs` model. It transcribes the PTX ISA's own formulas (PTX ISA 9.0, chapter 9.7.14
"Warp Level Matrix Multiply-Accumulate Instructions"), element by element, in the ISA's
notation: every mma fragment is listed by the ISA's element index i (a0, a1, ... "low to high"),
and the register and position inside it follow from how many elements one 32-bit register
holds (one tf32, two 16-bit, or four 8-bit). Nothing here is read from the Rust code.

Sections transcribed (docs.nvidia.com/cuda/parallel-thread-execution, PTX ISA 9.0 numbering):
  9.7.14.5.6   Matrix Fragments for mma.m16n8k4 with .tf32 floating point type
  9.7.14.5.7   Matrix Fragments for mma.m16n8k8 (.f16/.bf16 and .tf32 A, B; C/D)
  9.7.14.5.8   Matrix Fragments for mma.m16n8k16 with floating point type (Figures 79, 81, 83)
  9.7.14.5.9   Matrix Fragments for mma.m16n8k16 with integer type
  9.7.14.5.10  Matrix Fragments for mma.m16n8k32 (.s8/.u8/.e4m3/.e5m2 A, B; C/D)
  9.7.14.5.15  Warp-level matrix load instruction: ldmatrix (address table, Figure 104, .trans)
  9.7.14.5.16  Warp-level matrix store instruction: stmatrix (address table, Figure 107, .trans)

Usage (from the repository root; rewrites the files, which are committed):
    python3 scripts/gen_ptx_isa_tables.py [OUT_DIR]     # default tests/data/ptx_isa
"""
import json
import os
import sys

ISA = "PTX ISA 9.0 (docs.nvidia.com/cuda/parallel-thread-execution)"
GENERATOR = "scripts/gen_ptx_isa_tables.py"
LANES = range(32)


def group_id(lane):
    """groupID = %laneid >> 2"""
    return lane >> 2


def thread_id_in_group(lane):
    """threadID_in_group = %laneid % 4"""
    return lane % 4


# ---------------------------------------------------------------------------------------------
# mma fragments: (lane, i) -> (row, col), the ISA's formulas written as they are printed.

def m16n8k16_f16_a(lane, i):
    """9.7.14.5.8, multiplicand A, .f16/.bf16, a0..a7 in four .f16x2 registers.
    row = groupID       for ai where 0 <= i < 2 || 4 <= i < 6
          groupID + 8   otherwise
    col = (threadID_in_group * 2) + (i & 0x1)       for ai where i < 4
          (threadID_in_group * 2) + (i & 0x1) + 8   for ai where i >= 4"""
    g, t = group_id(lane), thread_id_in_group(lane)
    row = g if (0 <= i < 2 or 4 <= i < 6) else g + 8
    col = (t * 2) + (i & 0x1) if i < 4 else (t * 2) + (i & 0x1) + 8
    return row, col


def m16n8k16_f16_b(lane, i):
    """9.7.14.5.8, multiplicand B, .f16/.bf16, b0..b3 in two .f16x2 registers.
    row = (threadID_in_group * 2) + (i & 0x1)       for bi where i < 2
          (threadID_in_group * 2) + (i & 0x1) + 8   for bi where i >= 2
    col = groupID"""
    g, t = group_id(lane), thread_id_in_group(lane)
    row = (t * 2) + (i & 0x1) if i < 2 else (t * 2) + (i & 0x1) + 8
    return row, g


def m16n8_c(lane, i):
    """Accumulators C/D of m16n8k8 (9.7.14.5.7), m16n8k16 (9.7.14.5.8, Figure 83) and
    m16n8k32 (9.7.14.5.10), c0..c3 (four .f32/.s32 registers or two .f16x2 registers).
    row = groupID       for ci where i < 2
          groupID + 8   for ci where i >= 2
    col = (threadID_in_group * 2) + (i & 0x1)   for ci where i = {0,..,3}"""
    g, t = group_id(lane), thread_id_in_group(lane)
    row = g if i < 2 else g + 8
    return row, (t * 2) + (i & 0x1)


def m16n8k8_f16_a(lane, i):
    """9.7.14.5.7, multiplicand A, .f16/.bf16, a0..a3 in two .f16x2 registers.
    row = groupID       for a0 and a1
          groupID + 8   for a2 and a3
    col = threadID_in_group * 2 + (i & 0x1)   for ai where i = {0,..,3}"""
    g, t = group_id(lane), thread_id_in_group(lane)
    row = g if i < 2 else g + 8
    return row, t * 2 + (i & 0x1)


def m16n8k8_f16_b(lane, i):
    """9.7.14.5.7, multiplicand B, .f16/.bf16, b0, b1 in one .f16x2 register.
    row = (threadID_in_group * 2) + i   for bi where i = {0, 1}
    col = groupID"""
    g, t = group_id(lane), thread_id_in_group(lane)
    return (t * 2) + i, g


def m16n8k32_8bit_a(lane, i):
    """9.7.14.5.10, multiplicand A, .s8/.u8/.e4m3/.e5m2, a0..a15 in four .b32 registers.
    row = groupID       for ai where 0 <= i < 4 || 8 <= i < 12
          groupID + 8   otherwise
    col = (threadID_in_group * 4) + (i & 0x3)        for ai where i < 8
          (threadID_in_group * 4) + (i & 0x3) + 16   for ai where i >= 8"""
    g, t = group_id(lane), thread_id_in_group(lane)
    row = g if (0 <= i < 4 or 8 <= i < 12) else g + 8
    col = (t * 4) + (i & 0x3) if i < 8 else (t * 4) + (i & 0x3) + 16
    return row, col


def m16n8k32_8bit_b(lane, i):
    """9.7.14.5.10, multiplicand B, .s8/.u8/.e4m3/.e5m2, b0..b7 in two .b32 registers.
    row = (threadID_in_group * 4) + (i & 0x3)        for bi where i < 4
          (threadID_in_group * 4) + (i & 0x3) + 16   for bi where i >= 4
    col = groupID"""
    g, t = group_id(lane), thread_id_in_group(lane)
    row = (t * 4) + (i & 0x3) if i < 4 else (t * 4) + (i & 0x3) + 16
    return row, g


def m16n8k4_tf32_a(lane, i):
    """9.7.14.5.6, multiplicand A, .tf32, a0, a1 in two .b32 registers.
    row = groupID       for a0
          groupID + 8   for a1
    col = threadID_in_group"""
    g, t = group_id(lane), thread_id_in_group(lane)
    return (g if i == 0 else g + 8), t


def m16n8k4_tf32_b(lane, i):
    """9.7.14.5.6, multiplicand B, .tf32, b0 in one .b32 register.
    row = threadID_in_group
    col = groupID"""
    g, t = group_id(lane), thread_id_in_group(lane)
    return t, g


def m16n8k8_tf32_a(lane, i):
    """9.7.14.5.7, multiplicand A, .tf32, a0..a3 in four .b32 registers.
    row = groupID       for a0 and a2
          groupID + 8   for a1 and a3
    col = threadID_in_group       for a0 and a1
          threadID_in_group + 4   for a2 and a3"""
    g, t = group_id(lane), thread_id_in_group(lane)
    row = g if i in (0, 2) else g + 8
    col = t if i in (0, 1) else t + 4
    return row, col


def m16n8k8_tf32_b(lane, i):
    """9.7.14.5.7, multiplicand B, .tf32, b0, b1 in two .b32 registers.
    row = threadID_in_group       for b0
          threadID_in_group + 4   for b1
    col = groupID"""
    g, t = group_id(lane), thread_id_in_group(lane)
    return (t if i == 0 else t + 4), g


def m16n8k16_8bit_a(lane, i):
    """9.7.14.5.9, multiplicand A, .s8/.u8, a0..a7 in two .b32 registers.
    row = groupID       for ai where 0 <= i < 4
          groupID + 8   for ai where 4 <= i < 8
    col = (threadID_in_group * 4) + (i & 0x3)   for ai where i = {0,..,7}"""
    g, t = group_id(lane), thread_id_in_group(lane)
    row = g if i < 4 else g + 8
    return row, (t * 4) + (i & 0x3)


def m16n8k16_8bit_b(lane, i):
    """9.7.14.5.9, multiplicand B, .s8/.u8, b0..b3 in one .b32 register.
    row = (threadID_in_group * 4) + i   for bi where i = {0,..,3}
    col = groupID"""
    g, t = group_id(lane), thread_id_in_group(lane)
    return (t * 4) + i, g


def operand(name, types, rows, cols, count, element_bits, formula, register_type):
    """One operand's table: elements a0..a(count-1) packed low to high into 32-bit registers."""
    per_reg = 32 // element_bits
    frags = []
    for lane in LANES:
        for i in range(count):
            row, col = formula(lane, i)
            frags.append([lane, i, i // per_reg, i % per_reg, row, col])
    return {
        "operand": name,
        "types": types,
        "rows": rows,
        "cols": cols,
        "register_type": register_type,
        "registers": count // per_reg,
        "elements_per_register": per_reg,
        "element_bits": element_bits,
        "formula": " ".join(formula.__doc__.split()),
        "columns": ["lane", "i", "reg", "pos", "row", "col"],
        "fragments": frags,
    }


def mma_tables():
    c_doc = "C/D"
    return {
        "mma_m16n8k16_f16.json": {
            "instruction": "mma.sync.aligned.m16n8k16.row.col",
            "section": "9.7.14.5.8 Matrix Fragments for mma.m16n8k16 with floating point type",
            "shape": [16, 8, 16],
            "operands": [
                operand("A", ["f16", "bf16"], 16, 16, 8, 16, m16n8k16_f16_a, ".f16x2"),
                operand("B", ["f16", "bf16"], 16, 8, 4, 16, m16n8k16_f16_b, ".f16x2"),
                operand(c_doc, ["f32"], 16, 8, 4, 32, m16n8_c, ".f32"),
                operand(c_doc, ["f16"], 16, 8, 4, 16, m16n8_c, ".f16x2"),
            ],
        },
        "mma_m16n8k8_f16.json": {
            "instruction": "mma.sync.aligned.m16n8k8.row.col",
            "section": "9.7.14.5.7 Matrix Fragments for mma.m16n8k8 (.f16/.bf16 multiplicands)",
            "shape": [16, 8, 8],
            "operands": [
                operand("A", ["f16", "bf16"], 16, 8, 4, 16, m16n8k8_f16_a, ".f16x2"),
                operand("B", ["f16", "bf16"], 8, 8, 2, 16, m16n8k8_f16_b, ".f16x2"),
                operand(c_doc, ["f32"], 16, 8, 4, 32, m16n8_c, ".f32"),
                operand(c_doc, ["f16"], 16, 8, 4, 16, m16n8_c, ".f16x2"),
            ],
        },
        "mma_m16n8k4_tf32.json": {
            "instruction": "mma.sync.aligned.m16n8k4.row.col",
            "section": "9.7.14.5.6 Matrix Fragments for mma.m16n8k4 with .tf32 floating point type",
            "shape": [16, 8, 4],
            "operands": [
                operand("A", ["tf32"], 16, 4, 2, 32, m16n8k4_tf32_a, ".b32"),
                operand("B", ["tf32"], 4, 8, 1, 32, m16n8k4_tf32_b, ".b32"),
                operand(c_doc, ["f32"], 16, 8, 4, 32, m16n8_c, ".f32"),
            ],
        },
        "mma_m16n8k8_tf32.json": {
            "instruction": "mma.sync.aligned.m16n8k8.row.col",
            "section": "9.7.14.5.7 Matrix Fragments for mma.m16n8k8 (.tf32 multiplicands)",
            "shape": [16, 8, 8],
            "operands": [
                operand("A", ["tf32"], 16, 8, 4, 32, m16n8k8_tf32_a, ".b32"),
                operand("B", ["tf32"], 8, 8, 2, 32, m16n8k8_tf32_b, ".b32"),
                operand(c_doc, ["f32"], 16, 8, 4, 32, m16n8_c, ".f32"),
            ],
        },
        "mma_m16n8k16_8bit.json": {
            "instruction": "mma.sync.aligned.m16n8k16.row.col",
            "section": "9.7.14.5.9 Matrix Fragments for mma.m16n8k16 with integer type",
            "shape": [16, 8, 16],
            "operands": [
                operand("A", ["s8", "u8"], 16, 16, 8, 8, m16n8k16_8bit_a, ".b32"),
                operand("B", ["s8", "u8"], 16, 8, 4, 8, m16n8k16_8bit_b, ".b32"),
                operand(c_doc, ["s32"], 16, 8, 4, 32, m16n8_c, ".s32"),
            ],
        },
        "mma_m16n8k32_8bit.json": {
            "instruction": "mma.sync.aligned.m16n8k32.row.col",
            "section": "9.7.14.5.10 Matrix Fragments for mma.m16n8k32",
            "shape": [16, 8, 32],
            "operands": [
                operand("A", ["s8", "u8", "e4m3", "e5m2"], 16, 32, 16, 8, m16n8k32_8bit_a, ".b32"),
                operand("B", ["s8", "u8", "e4m3", "e5m2"], 32, 8, 8, 8, m16n8k32_8bit_b, ".b32"),
                operand(c_doc, ["s32"], 16, 8, 4, 32, m16n8_c, ".s32"),
                operand(c_doc, ["f32"], 16, 8, 4, 32, m16n8_c, ".f32"),
                operand(c_doc, ["f16"], 16, 8, 4, 16, m16n8_c, ".f16x2"),
            ],
        },
    }


# ---------------------------------------------------------------------------------------------
# ldmatrix / stmatrix .m8n8 .b16

def matrix_fragment(lane, reg, half, trans):
    """Figure 104 (ldmatrix) / Figure 107 (stmatrix), one 8x8 matrix of 16-bit elements: "each
    thread loads fragments of a row, with thread 0 receiving the first fragment in its register
    r, and so on. A group of four threads loads an entire row": thread (groupID, threadID_in_group)
    holds row groupID, columns 2*threadID_in_group and 2*threadID_in_group + 1, the lower column
    in the low 16 bits. Register r holds matrix r ("elements of the second matrix are loaded in
    the next destination register"). With .trans "the matrix is loaded in column-major format":
    the fragment at figure position (groupID, 2*threadID_in_group + half) is memory row
    2*threadID_in_group + half, column groupID of the matrix. Returns (matrix, row, col) with row
    = the matrix row whose address its address lane supplied, col = 16-bit column in that row."""
    fig_row, fig_col = group_id(lane), thread_id_in_group(lane) * 2 + half
    if trans:
        return reg, fig_col, fig_row
    return reg, fig_row, fig_col


def address_lanes(num):
    """The address table of 9.7.14.5.15/16: threads 0-7 give addr0-addr7 (rows of the first
    matrix), threads 8-15 addr8-addr15 (second matrix), ... for .x1 / .x2 / .x4."""
    return [[lane, lane // 8, lane % 8] for lane in range(8 * num)]


def matrix_table(op):
    load = op == "ldmatrix"
    section = (
        "9.7.14.5.15 Warp-level matrix load instruction: ldmatrix (Figure 104)"
        if load
        else "9.7.14.5.16 Warp-level matrix store instruction: stmatrix (Figure 107)"
    )
    forms = []
    for num in (1, 2, 4):
        for trans in (False, True):
            suffix = f".x{num}" + (".trans" if trans else "")
            ptx = (
                f"ldmatrix.sync.aligned.m8n8{suffix}.shared.b16"
                if load
                else f"stmatrix.sync.aligned.m8n8{suffix}.shared.b16"
            )
            frags = []
            for lane in LANES:
                for reg in range(num):
                    for half in (0, 1):
                        m, r, c = matrix_fragment(lane, reg, half, trans)
                        frags.append([lane, reg, half, m, r, c])
            forms.append(
                {
                    "ptx": ptx,
                    "num": num,
                    "trans": trans,
                    "address_columns": ["lane", "matrix", "row"],
                    "address_lanes": address_lanes(num),
                    "columns": ["lane", "reg", "half", "matrix", "row", "col"],
                    "fragments": frags,
                }
            )
    return {
        "instruction": op,
        "section": section,
        "element_bits": 16,
        "formula": " ".join(matrix_fragment.__doc__.split()),
        "forms": forms,
    }


# ---------------------------------------------------------------------------------------------

def dump(obj, indent=0):
    """JSON with one fragment row per line, so a diff names the entry that changed."""
    pad = " " * indent
    if isinstance(obj, dict):
        items = [f'{pad} {json.dumps(k)}: {dump(v, indent + 1).lstrip()}' for k, v in obj.items()]
        return pad + "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and obj and all(isinstance(x, list) for x in obj):
        rows = [pad + " " + json.dumps(x) for x in obj]
        return pad + "[\n" + ",\n".join(rows) + "\n" + pad + "]"
    if isinstance(obj, list) and any(isinstance(x, dict) for x in obj):
        return pad + "[\n" + ",\n".join(dump(x, indent + 1) for x in obj) + "\n" + pad + "]"
    return pad + json.dumps(obj)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join("tests", "data", "ptx_isa")
    os.makedirs(out_dir, exist_ok=True)
    files = dict(mma_tables())
    files["ldmatrix_m8n8_b16.json"] = matrix_table("ldmatrix")
    files["stmatrix_m8n8_b16.json"] = matrix_table("stmatrix")
    for name, body in files.items():
        doc = {"source": ISA, "generator": GENERATOR}
        doc.update(body)
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(dump(doc) + "\n")
        print(os.path.join(out_dir, name))


if __name__ == "__main__":
    main()
