#!/usr/bin/env python3
"""Compile the Triton fixtures of tests/data/ptx_hopper/ to PTX (Triton 3.6, sm_90a).

    python3 scripts/research/hopper_fixtures/triton_hopper.py OUTDIR [NAME ...]

writes OUTDIR/<fixture>.ptx and OUTDIR/<fixture>.launch.json (the launch: kernel, grid, block,
dynamic shared memory, every PTX parameter with its value, "pointer" or "tensor_map", and the
tensor maps as cuTensorMapEncodeTiled's arguments). Runs without a GPU (`GPUTarget("cuda", 90,
32)`). The arguments are specialised by Triton's own JIT rule (`native_specialize_impl`, as
`JITFunction.run` applies it to the tutorial's torch arguments): an integer equal to 1 becomes a
constexpr, pointers and integers divisible by 16 get `tt.divisibility` 16, floats are not
specialised, a host `TensorDescriptor` becomes `tensordesc<dtype[block]>` and is passed as a
128-byte CUtensorMap followed by its shape (i32) and strides (i64), as the launcher
(`backends/nvidia/driver.py`, `make_tensordesc_arg`) expands it. The tensor maps are encoded
as the launcher encodes them (`fill_tma_descriptor`: element strides 1, no interleave, L2
promotion 128B, OOB fill none = zeros, swizzle and box from the kernel's `tensordesc_meta`).

`--check-jit` (on the GPU machine, with torch) also launches each fixture through the real JIT
(`kernel[grid](torch tensors...)`) and reports whether its PTX equals this one (debug sections
and paths aside).
"""
import json
import os
import re
import sys

import triton
import triton.language as tl
from triton.backends.compiler import BaseBackend, GPUTarget
from triton.compiler import ASTSource
from triton.runtime.jit import native_specialize_impl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "ptx_fixtures"))
import tutorial_kernels as TK  # noqa: E402
import tkernels as K  # noqa: E402  (the lesson kernels of tests/data/ptx)

TARGET = GPUTarget("cuda", 90, 32)
TMA_HOST_DTYPE = {  # CUtensorMapDataType
    0: "u8", 1: "u16", 2: "u32", 3: "s32", 4: "u64", 5: "s64", 6: "f16", 7: "f32", 8: "f64", 9: "bf16",
    10: "f32_ftz", 11: "tf32", 12: "tf32_ftz"}
TMA_DTYPE_DEVICE_TO_HOST = dict((i, i) for i in range(16))
TMA_DTYPE_DEVICE_TO_HOST[8] = 10
TMA_DTYPE_DEVICE_TO_HOST[9] = 8
TMA_DTYPE_DEVICE_TO_HOST[10] = 9
SWIZZLE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}
ELEM = {"fp16": 2, "bf16": 2, "fp32": 4, "fp8e5": 1}


class Desc:
    """A host TensorDescriptor argument: global shape and strides (elements, outer first), block."""

    def __init__(self, dtype, shape, strides, block):
        self.dtype, self.shape, self.strides, self.block = dtype, shape, strides, block


def mm(dtype, bm, bn, bk, warps, stages, m, n, k, what):
    args = [("a_ptr", "ptr", dtype), ("b_ptr", "ptr", dtype), ("c_ptr", "ptr", "fp16"),
            ("M", "int", m), ("N", "int", n), ("K", "int", k),
            ("stride_am", "int", k), ("stride_ak", "int", 1), ("stride_bk", "int", n), ("stride_bn", "int", 1),
            ("stride_cm", "int", n), ("stride_cn", "int", 1)]
    consts = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8, "ACTIVATION": ""}
    return dict(fn=TK.matmul_kernel, args=args, consts=consts, warps=warps, stages=stages, grid=[1, 1, 1], what=what,
                source="python/tutorials/03-matrix-multiplication.py: matmul_kernel")


def attn(d, bm, bn, warps, stages, n_ctx, what):
    y = n_ctx  # Z = H = 1
    args = [("sm_scale", "fp32", 0.125), ("M", "ptr", "fp32"), ("Z", "int", 1), ("H", "int", 1),
            ("desc_q", "desc", Desc("fp16", [y, d], [d, 1], [bm, d])),
            ("desc_k", "desc", Desc("fp16", [y, d], [d, 1], [bn, d])),
            ("desc_v", "desc", Desc("fp16", [y, d], [d, 1], [bn, d])),
            ("desc_o", "desc", Desc("fp16", [y, d], [d, 1], [bm, d])),
            ("N_CTX", "int", n_ctx)]
    consts = {"HEAD_DIM": d, "BLOCK_M": bm, "BLOCK_N": bn, "FP8_OUTPUT": False, "STAGE": 1,
              "warp_specialize": False, "IS_HOPPER": True}
    return dict(fn=TK._attn_fwd, args=args, consts=consts, warps=warps, stages=stages, grid=[1, 1, 1], what=what,
                source="python/tutorials/06-fused-attention.py: _attn_fwd (host TensorDescriptor path)")


def mm_tma(bm, bn, bk, warps, stages, m, n, k, what):
    args = [("a_desc", "desc", Desc("fp16", [m, k], [k, 1], [bm, bk])),
            ("b_desc", "desc", Desc("fp16", [n, k], [k, 1], [bn, bk])),
            ("c_desc", "desc", Desc("fp16", [m, n], [n, 1], [bm, bn])),
            ("M", "int", m), ("N", "int", n), ("K", "int", k)]
    consts = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8, "FP8_OUTPUT": False,
              "WARP_SPECIALIZE": False}
    return dict(fn=TK.matmul_kernel_tma, args=args, consts=consts, warps=warps, stages=stages, grid=[1, 1, 1],
                what=what, source="python/tutorials/09-persistent-matmul.py: matmul_kernel_tma")


def lesson_attn(bm):
    args = [("q_ptr", "ptr", "fp16"), ("k_ptr", "ptr", "fp16"), ("v_ptr", "ptr", "fp16"), ("o_ptr", "ptr", "fp16"),
            ("n_ctx", "int", 512), ("sm_scale", "fp32", 0.125), ("stride_s", "int", 64)]
    consts = {"BLOCK_M": bm, "BLOCK_N": 64, "HEAD_DIM": 64}
    return dict(fn=K.tl_attn_fwd, args=args, consts=consts, warps=4, stages=2, grid=[1, 1, 1],
                what=f"lesson reading-triton-ptx's Triton kernel (scripts/research/ptx_fixtures/tkernels.py tl_attn_fwd, "
                     f"tests/data/ptx/triton_attn_fwd at BLOCK_M 32) at BLOCK_M {bm}: 512 keys in blocks of 64, D = 64",
                source="scripts/research/ptx_fixtures/tkernels.py: tl_attn_fwd")


FIXTURES = {
    "tt_matmul_f16_8w": mm("fp16", 128, 256, 64, 8, 3, 128, 256, 256,
                           "tutorial matmul, its first CUDA config (128x256x64, GROUP_SIZE_M 8, 3 stages, 8 warps), "
                           "fp16, M = 128, N = 256, K = 256 (4 K blocks): one program"),
    "tt_matmul_bf16_8w": mm("bf16", 128, 256, 64, 8, 3, 128, 256, 256,
                            "the same with bf16 A and B (C stays f16, as the kernel writes it)"),
    "tt_matmul_f16_4w": mm("fp16", 128, 128, 32, 4, 4, 128, 128, 256,
                           "tutorial matmul, its config 128x128x32 (GROUP_SIZE_M 8, 4 stages, 4 warps), fp16, "
                           "M = N = 128, K = 256 (8 K blocks): one program"),
    "tt_matmul_bf16_4w": mm("bf16", 128, 128, 32, 4, 4, 128, 128, 256,
                            "the same with bf16 A and B (C f16)"),
    "tt_attn_fwd_d64": attn(64, 128, 64, 4, 2, 512,
                            "tutorial fused attention forward, non-causal, f16, D = 64, the tutorial's test config "
                            "(BLOCK_M 128, BLOCK_N 64, 2 stages, 4 warps), Z = H = 1, N_CTX = 512: program (0, 0) walks "
                            "all 8 key blocks"),
    "tt_attn_fwd_d128": attn(128, 128, 64, 4, 2, 512,
                             "the same with D = 128"),
    "tt_matmul_tma": mm_tma(128, 128, 64, 4, 3, 128, 128, 256,
                            "matmul through host TensorDescriptors (A [M, K], B [N, K], C [M, N] f16; "
                            "128x128x64, 3 stages, 4 warps), M = N = 128, K = 256: one program"),
    "tt_lesson_attn_bm64": lesson_attn(64),
}


def jit_spec(kind, v):
    """(signature type, attrs) as Triton's JIT specialises a torch argument of this kind."""
    if kind == "ptr":
        return "*" + v, [["tt.divisibility", 16]]  # torch allocations are 256-byte aligned
    if kind == "desc":
        return f"tensordesc<{v.dtype}[{', '.join(map(str, v.block))}]>", []
    if kind == "fp32":
        return "fp32", []
    t, key = native_specialize_impl(BaseBackend, v, False, True, True)
    return t, BaseBackend.parse_attr(key) if t != "constexpr" else []


def compile_fixture(name):
    f = FIXTURES[name]
    sig, consts, attrs = {}, dict(f["consts"]), {}
    for i, (a, kind, v) in enumerate(f["args"]):
        t, at = jit_spec(kind, v)
        sig[a] = t
        if t == "constexpr":
            consts[a] = v
        if at:
            attrs[(i,)] = at
    for c in f["consts"]:
        sig[c] = "constexpr"
    src = ASTSource(f["fn"], sig, consts, attrs)
    k = triton.compile(src, target=TARGET, options={"num_warps": f["warps"], "num_stages": f["stages"]})
    return k, sig, consts


def ptx_params(ptx, kernel):
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\((.*?)\)", ptx, re.S)
    out = []
    for p in m.group(1).split(","):
        p = p.strip()
        if not p.startswith(".param"):
            continue
        am = re.search(r"\.align\s+(\d+)", p)
        toks = re.sub(r"\.align\s+\d+", "", p).split()
        ty = toks[1]
        nm = re.match(r"(\w+)(?:\[(\d+)\])?", toks[-1])
        pname, n = nm.groups()
        align = am.group(1) if am else None
        out.append({"name": pname, "type": ty + (f"[{n}]" if n else ""), "align": int(align) if align else None})
    return out


def tensor_map(pname, d, meta):
    """cuTensorMapEncodeTiled's arguments for descriptor d, as fill_tma_descriptor makes them."""
    eb = meta["elem_size"]
    dims = list(reversed(d.shape))                    # innermost first
    strides = [s * eb for s in reversed(d.strides[:-1])]  # bytes, dims 1..
    box = list(reversed(meta["block_size"]))
    dt = TMA_HOST_DTYPE[TMA_DTYPE_DEVICE_TO_HOST[meta["elem_type"]]]
    sw = SWIZZLE[meta["swizzle"]]
    cli = f"{pname}={dt}:{','.join(map(str, dims))}:{','.join(map(str, strides))}:{','.join(map(str, box))}:{sw}"
    return {"dtype": dt, "data_type": TMA_DTYPE_DEVICE_TO_HOST[meta["elem_type"]],
            "rank": len(dims), "dims": dims, "strides_bytes": strides, "box": box, "element_strides": [1] * len(dims),
            "interleave": "none", "swizzle": sw, "swizzle_enum": meta["swizzle"], "l2_promotion": "128B",
            "oob_fill": "none (zeros)", "buffer": "its own buffer of 16 MiB, zero-filled (the harness allocates it)",
            "cli": cli}


def launch_of(name, k, sig, consts):
    f = FIXTURES[name]
    ptx = k.asm["ptx"]
    kname = k.metadata.name
    params = ptx_params(ptx, kname)
    metas = list(getattr(k.metadata, "tensordesc_meta", None) or [])
    plist, maps, pi, di = [], [], 0, 0
    for a, kind, v in f["args"]:
        t = sig[a]
        if t == "constexpr":
            continue
        if kind == "desc":
            meta = metas[di]
            di += 1
            p = params[pi]
            assert p["type"] == ".b8[128]", (name, a, p)
            plist.append(dict(p, value="tensor_map", arg=f"{a} (CUtensorMap)"))
            maps.append(dict(tensor_map(str(pi), v, meta), param=p["name"], index=pi))
            pi += 1
            for j, s in enumerate(v.shape):
                plist.append(dict(params[pi], value=s, arg=f"{a}.shape[{j}]"))
                pi += 1
            for j, s in enumerate(v.strides):
                plist.append(dict(params[pi], value=s, arg=f"{a}.strides[{j}]"))
                pi += 1
            continue
        plist.append(dict(params[pi], value="pointer" if kind == "ptr" else v, arg=a))
        pi += 1
    while pi < len(params):
        plist.append(dict(params[pi], value="pointer", arg="triton scratch (global_scratch / profile_scratch)"))
        pi += 1
    for p in plist:
        if p["align"] is None:
            del p["align"]
    args_cli = [f"--arg {i}={p['value']}" for i, p in enumerate(plist) if p["value"] not in ("pointer", "tensor_map")]
    return {
        "fixture": name, "ptx": f"{name}.ptx", "kernel": kname, "grid": f["grid"],
        "block": [32 * f["warps"], 1, 1], "dynamic_smem_bytes": int(k.metadata.shared),
        "params": plist, "tensor_maps": maps,
        "cli": " ".join(args_cli + [f"--tensor-map {m['cli']}" for m in maps]),
        "compiler": {"tool": f"triton {triton.__version__}",
                     "target": "cuda sm_90 (GPUTarget('cuda', 90, 32)); PTX .target sm_90a",
                     "num_warps": f["warps"], "num_stages": f["stages"],
                     "signature": sig, "constexprs": {c: v for c, v in consts.items()},
                     "kernel_source": f["source"] + " (transcribed in scripts/research/hopper_fixtures/tutorial_kernels.py)"
                     if "tutorials" in f["source"] else f["source"]},
        "what": f["what"],
    }


def histogram(ptx):
    keys = ["wgmma.mma_async", "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group", "cp.async.bulk.tensor",
            "mbarrier", "ldmatrix", "stmatrix", "cp.async.cg", "ld.shared", "st.shared", "mma.sync", "bar.sync",
            "fence.proxy.async", "elect.sync"]
    return {key: len(re.findall(re.escape(key), ptx)) for key in keys if key in ptx}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = args[0]
    os.makedirs(out, exist_ok=True)
    for name in args[1:] or list(FIXTURES):
        k, sig, consts = compile_fixture(name)
        ptx = k.asm["ptx"]
        open(os.path.join(out, f"{name}.ptx"), "w").write(ptx)
        l = launch_of(name, k, sig, consts)
        json.dump(l, open(os.path.join(out, f"{name}.launch.json"), "w"), indent=1)
        print(name, l["kernel"], "smem", l["dynamic_smem_bytes"], histogram(ptx), flush=True)


if __name__ == "__main__":
    main()
