#!/usr/bin/env python3
"""Compile the Triton fixtures of tests/data/ptx/ to PTX (Triton 3.x, target sm_90a).

    python3 scripts/research/ptx_fixtures/triton_fixtures.py OUTDIR

writes OUTDIR/<fixture>.ptx and OUTDIR/<fixture>.launch.json (kernel name, grid, block, dynamic
shared memory bytes, every PTX parameter with its value or "pointer"). Runs on a machine without a
GPU: the target is given (`GPUTarget("cuda", 90, 32)`), as on the H200. The harness
(`harness.py`) then loads exactly this PTX through the driver and launches it.

Arguments are specialised as Triton's launcher does for torch tensors: pointers and integers that
are multiples of 16 get `tt.divisibility = 16`; an integer equal to 1 would be a constexpr (none
here: unit strides are written into the kernels).
"""
import json
import os
import re
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tkernels as K  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)

# name: (kernel, runtime args in order as (name, type, value), constexprs, num_warps, num_stages,
#        what the fixture is for)
FIXTURES = {
    "triton_matmul_2w": (
        K.tl_matmul,
        [("a_ptr", "*fp16", None), ("b_ptr", "*fp16", None), ("c_ptr", "*fp16", None),
         ("K", "i32", 256), ("stride_am", "i32", 256), ("stride_bk", "i32", 32), ("stride_cm", "i32", 32)],
        {"BM": 32, "BN": 32, "BK": 32}, 2, 3,
        "32x32 tile, K = 256 in steps of 32, 2 warps, 3 stages: cp.async, ldmatrix, mma.sync"),
    "triton_matmul_4w": (
        K.tl_matmul,
        [("a_ptr", "*fp16", None), ("b_ptr", "*fp16", None), ("c_ptr", "*fp16", None),
         ("K", "i32", 256), ("stride_am", "i32", 256), ("stride_bk", "i32", 64), ("stride_cm", "i32", 64)],
        {"BM": 32, "BN": 64, "BK": 32}, 4, 3,
        "32x64 tile, K = 256 in steps of 32, 4 warps, 3 stages; BM = 32 keeps mma.sync (no wgmma)"),
    "triton_attn_fwd": (
        K.tl_attn_fwd,
        [("q_ptr", "*fp16", None), ("k_ptr", "*fp16", None), ("v_ptr", "*fp16", None), ("o_ptr", "*fp16", None),
         ("n_ctx", "i32", 512), ("sm_scale", "fp32", 0.125), ("stride_s", "i32", 64)],
        {"BLOCK_M": 32, "BLOCK_N": 64, "HEAD_DIM": 64}, 4, 2,
        "fused attention forward, 32 query rows, 512 keys in blocks of 64, D = 64, 4 warps"),
    "triton_transpose": (
        K.tl_transpose,
        [("x_ptr", "*fp16", None), ("y_ptr", "*fp16", None), ("stride_x", "i32", 64), ("stride_y", "i32", 64)],
        {"BM": 64, "BN": 64}, 4, 1,
        "64x64 f16 tile transposed through tl.trans, 4 warps"),
    "triton_softmax": (
        K.tl_softmax,
        [("x_ptr", "*fp32", None), ("y_ptr", "*fp32", None), ("n_rows", "i32", 4), ("stride", "i32", 1024)],
        {"BLOCK": 1024}, 4, 1,
        "row softmax, 4 rows of 1024 f32, 4 warps (cross-warp max and sum)"),
    "triton_fa_v1_trans": (
        K.tl_fa_v1,
        [("q_ptr", "*fp32", None), ("k_ptr", "*fp32", None), ("v_ptr", "*fp32", None), ("o_ptr", "*fp32", None),
         ("l_ptr", "*fp32", None), ("m_ptr", "*fp32", None), ("n_ctx", "i32", 64), ("sm_scale", "fp32", 0.125)],
        {"D": 64, "BC": 32, "BR": 32}, 4, 1,
        "seed 004's FA v1 with tl.trans(kj), f32, D = 64, Bc = Br = 32, 2 x 2 blocks, 4 warps"),
    "triton_fa_v1_kt": (
        K.tl_fa_v1_kt,
        [("q_ptr", "*fp32", None), ("kt_ptr", "*fp32", None), ("v_ptr", "*fp32", None), ("o_ptr", "*fp32", None),
         ("l_ptr", "*fp32", None), ("m_ptr", "*fp32", None), ("n_ctx", "i32", 64), ("sm_scale", "fp32", 0.125)],
        {"D": 64, "BC": 32, "BR": 32}, 4, 1,
        "the same with K stored pre-transposed (no tl.trans)"),
}


def compile_fixture(name):
    fn, args, consts, warps, stages, what = FIXTURES[name]
    sig = {a: t for a, t, _ in args}
    sig.update({c: "constexpr" for c in consts})
    attrs = {}
    for i, (a, t, v) in enumerate(args):
        if t.startswith("*") or (t == "i32" and v % 16 == 0):
            attrs[(i,)] = [["tt.divisibility", 16]]
    src = ASTSource(fn, sig, consts, attrs)
    k = triton.compile(src, target=TARGET, options={"num_warps": warps, "num_stages": stages})
    return k, args, consts, warps, stages, what


def ptx_params(ptx, kernel):
    """(name, PTX type) of every .param of `.entry kernel`."""
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\((.*?)\)", ptx, re.S)
    if not m:
        raise SystemExit(f"no .entry {kernel} in the PTX")
    out = []
    for p in m.group(1).split(","):
        toks = re.sub(r"\.align\s+\d+", "", p).split()
        if toks and toks[0] == ".param":
            out.append((toks[-1], toks[1]))
    return out


def launch_of(name, k, args, consts, warps, stages, what):
    ptx = k.asm["ptx"]
    kname = k.metadata.name
    params = ptx_params(ptx, kname)
    if len(params) < len(args):
        raise SystemExit(f"{name}: PTX has {len(params)} params, kernel has {len(args)} runtime args")
    plist = []
    for i, (pname, ptype) in enumerate(params):
        if i < len(args):
            a, t, v = args[i]
            val = "pointer" if t.startswith("*") else v
            role = a
        else:
            val, role = "pointer", "triton scratch (global_scratch / profile_scratch)"
        plist.append({"name": pname, "type": ptype, "value": val, "arg": role})
    return {
        "fixture": name,
        "ptx": f"{name}.ptx",
        "kernel": kname,
        "grid": [1, 1, 1],
        "block": [32 * warps, 1, 1],
        "dynamic_smem_bytes": int(k.metadata.shared),
        "params": plist,
        "compiler": {
            "tool": f"triton {triton.__version__}",
            "target": "cuda sm_90 (GPUTarget('cuda', 90, 32)); PTX .target sm_90a",
            "num_warps": warps,
            "num_stages": stages,
            "constexprs": consts,
        },
        "what": what,
    }


def ptx_histogram(ptx):
    keys = ["mma.sync", "wgmma", "ldmatrix", "stmatrix", "cp.async.cg", "cp.async.ca", "ld.shared", "st.shared",
            "bar.sync", "fma.rn.f32"]
    return {key: len(re.findall(re.escape(key), ptx)) for key in keys}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    names = sys.argv[2:] or list(FIXTURES)
    for name in names:
        k, *rest = compile_fixture(name)
        ptx = k.asm["ptx"]
        with open(os.path.join(out, f"{name}.ptx"), "w") as f:
            f.write(ptx)
        with open(os.path.join(out, f"{name}.launch.json"), "w") as f:
            json.dump(launch_of(name, k, *rest), f, indent=1)
        print(name, k.metadata.name, "smem", k.metadata.shared, ptx_histogram(ptx))


if __name__ == "__main__":
    main()
