#!/usr/bin/env python3
"""The H200's mma results against a plain-loop reference, on a CPU (numpy-free, exact).

    python3 check.py LAUNCHES.json OUTPUTS.json [REPORT.json]

For every form of gen_mma.py: A, B and C are read from the words the device stored (A 0..3, B
4..5, C 6..9 of each lane), placed in matrices by the PTX ISA fragment tables of
scripts/gen_ptx_isa_tables.py (an implementation independent of the simulator), and
D_ref = A . B + C is computed exactly (Python fractions); the device's D (words 10..13) is read
back through the C/D table and compared element by element. Integer forms wrap modulo 2^32, or
clamp with .satfinite; float forms are exact by construction (gen_mma.py), so a mismatch is a
wrong fragment table or element decoding. tf32 inputs are tried two ways: the 13 low mantissa
bits ignored, and used. ldsm_generic is checked against the ldmatrix/stmatrix tables.
"""
import json
import os
import struct
import sys
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import gen_ptx_isa_tables as T  # noqa: E402

A_FORMULAS = {
    ("m16n8k16", 16): (T.m16n8k16_f16_a, T.m16n8k16_f16_b),
    ("m16n8k8", 16): (T.m16n8k8_f16_a, T.m16n8k8_f16_b),
    ("m16n8k8", 32): (T.m16n8k8_tf32_a, T.m16n8k8_tf32_b),
    ("m16n8k4", 32): (T.m16n8k4_tf32_a, T.m16n8k4_tf32_b),
    ("m16n8k16", 8): (T.m16n8k16_8bit_a, T.m16n8k16_8bit_b),
    ("m16n8k32", 8): (T.m16n8k32_8bit_a, T.m16n8k32_8bit_b),
}
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8}


def fp(bits, e, m, bias, ieee_inf):
    s = -1 if bits >> (e + m) & 1 else 1
    ex = (bits >> m) & ((1 << e) - 1)
    man = bits & ((1 << m) - 1)
    if ex == (1 << e) - 1 and (ieee_inf or man == (1 << m) - 1):
        raise ValueError(f"non-finite input {bits:#x}")
    if ex == 0:
        return s * Fraction(man, 1 << m) * Fraction(2) ** (1 - bias)
    return s * (1 + Fraction(man, 1 << m)) * Fraction(2) ** (ex - bias)


def value(ty, bits, tf32_low):
    if ty == "f16":
        return fp(bits, 5, 10, 15, True)
    if ty == "bf16":
        return fp(bits, 8, 7, 127, True)
    if ty == "tf32":
        return fp(bits if tf32_low else bits & 0xFFFFE000, 8, 23, 127, True)
    if ty == "f32":
        return fp(bits, 8, 23, 127, True)
    if ty == "e4m3":
        return fp(bits, 4, 3, 7, False)
    if ty == "e5m2":
        return fp(bits, 5, 2, 15, True)
    if ty == "s8":
        return bits - 256 if bits & 0x80 else bits
    if ty == "u8":
        return bits
    if ty == "s32":
        return bits - (1 << 32) if bits & 0x80000000 else bits
    raise ValueError(ty)


def elements(words, ty_bits):
    per = 32 // ty_bits
    mask = (1 << ty_bits) - 1
    return [(w >> (ty_bits * p)) & mask for w in words for p in range(per)]


def check_form(f, out, tf32_low=False):
    name, shape, types, na, nb, nc, *_rest = f
    sat = f[9]
    dt, at, bt, ct = types.split(".")
    m, n, k = 16, 8, int(shape.split("k")[1])
    fa, _ = A_FORMULAS[(shape, BITS[at])]
    _, fb = A_FORMULAS[(shape, BITS[bt])]
    A = [[None] * k for _ in range(m)]
    B = [[None] * n for _ in range(k)]
    C = [[None] * n for _ in range(m)]
    D = [[None] * n for _ in range(m)]
    cbits = 16 if ct == "f16" else 32
    for lane in range(32):
        w = out[lane]
        for i, e in enumerate(elements(w[0:na], BITS[at])):
            r, c = fa(lane, i)
            A[r][c] = value(at, e, tf32_low)
        for i, e in enumerate(elements(w[4:4 + nb], BITS[bt])):
            r, c = fb(lane, i)
            B[r][c] = value(bt, e, tf32_low)
        for i, e in enumerate(elements(w[6:6 + nc], cbits)):
            r, c = T.m16n8_c(lane, i)
            C[r][c] = value(ct, e, False)
        for i, e in enumerate(elements(w[10:10 + nc], cbits)):
            r, c = T.m16n8_c(lane, i)
            D[r][c] = (e, value(dt, e, False))
    bad = 0
    for i in range(m):
        for j in range(n):
            ref = C[i][j] + sum(A[i][kk] * B[kk][j] for kk in range(k))
            if dt == "s32":
                ref = max(-(1 << 31), min((1 << 31) - 1, ref)) if sat else ((ref + (1 << 31)) % (1 << 32)) - (1 << 31)
            got = D[i][j][1]
            if got != ref:
                bad += 1
    return bad


def check_ldsm(out):
    """ldmatrix.x4 (no .trans) of the 16-bit values idx = 16 lane' + j stored row-major, 8 per
    16-byte row: lane l's register r holds matrix r, row l / 4, columns 2 (l % 4), +1
    (PTX ISA 9.7.14.5.15); stmatrix.trans of the same registers lands each matrix transposed."""
    bad = 0
    for lane in range(32):
        for r in range(4):
            row, col = lane // 4, 2 * (lane % 4)
            base = 16 * (8 * r + row) // 2  # element index of the row start: row (8r+row), 8 per row
            lo = (8 * (8 * r + row) + col) & 0xFFFF
            want = lo | ((lo + 1) << 16)
            if out[lane][r] != want:
                bad += 1
            del base
    # stmatrix.trans: matrix r's element (i, j) goes to row j, column i of matrix r's 8 rows at
    # 1024 + 16 (8 r + j); lane L reads back row L (matrix L / 8, row L % 8) as 4 words.
    for lane in range(32):
        r, j = lane // 8, lane % 8
        for w in range(4):
            vals = []
            for h in range(2):
                i = 2 * w + h  # column i of the stored row j = element (i, j) of matrix r
                vals.append((8 * (8 * r + i) + j) & 0xFFFF)
            want = vals[0] | (vals[1] << 16)
            if out[lane][4 + w] != want:
                bad += 1
    total = out[0][9]
    if total != sum(range(1, 33)):
        bad += 1
    olds = sorted(out[l][8] for l in range(32))
    return bad, olds


def main():
    spec = json.load(open(sys.argv[1]))
    outs = json.load(open(sys.argv[2]))["outputs"]
    report = {}
    for f in spec["forms"]:
        name = f[0]
        res = {"mismatches": check_form(f, outs[name])}
        if "tf32" in f[2]:
            res["mismatches_if_low_bits_used"] = check_form(f, outs[name], tf32_low=True)
        report[name] = res
        print(name, res)
    bad, olds = check_ldsm(outs["ldsm_generic"])
    report["ldsm_generic"] = {"mismatches": bad, "atom_old_values_sorted": olds}
    print("ldsm_generic", report["ldsm_generic"])
    if len(sys.argv) > 3:
        json.dump(report, open(sys.argv[3], "w"), indent=1)


if __name__ == "__main__":
    main()
