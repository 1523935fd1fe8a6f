#!/usr/bin/env python3
"""Two Triton 3.6 kernels a new user writes, compiled on a CPU (issue 28: "fp32 tl.dot (tf32) and
int8 tl.dot are refused"): a 32x32x32 tl.dot of fp32 (tf32 mma.sync m16n8k8) and of int8
(mma.sync m16n8k32 .satfinite s8), one warp, for sm_80 and sm_90 (GPUTarget, num_warps 1).

    /work/venv-c27/bin/python triton_dots.py OUTDIR     writes dot_{f32,i8}_sm{80,90}.ptx, launches.json
"""
import json
import os
import sys

import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
@triton.jit
def dot_k(a, b, c, DT: tl.constexpr):
    i = tl.arange(0, 32)
    x = tl.load(a + i[:, None] * 32 + i[None, :])
    y = tl.load(b + i[:, None] * 32 + i[None, :])
    z = tl.dot(x, y, out_dtype=tl.int32 if DT == 1 else tl.float32)
    tl.store(c + i[:, None] * 32 + i[None, :], z)
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
launches = []
for name, ty, dt in [("f32", "*fp32", 0), ("i8", "*i8", 1)]:
    for cap in (80, 90):
        src = ASTSource(fn=dot_k, signature={"a": ty, "b": ty, "c": "*fp32" if dt == 0 else "*i32", "DT": "constexpr"}, constexprs={"DT": dt})
        k = triton.compile(src, target=GPUTarget("cuda", cap, 32), options={"num_warps": 1})
        n = f"dot_{name}_sm{cap}"
        open(os.path.join(out, n + ".ptx"), "w").write(k.asm["ptx"])
        launches.append({"name": n, "ptx": n + ".ptx", "kernel": "dot_k", "grid": [1, 1, 1], "block": [32, 1, 1],
                         "dynamic_smem_bytes": k.metadata.shared,
                         "params": [{"name": f"dot_k_param_{i}", "type": ".u64", "value": "pointer"} for i in range(5)]})
        print(name, cap, k.metadata.shared, [l.strip().split()[0] for l in k.asm["ptx"].splitlines() if "mma" in l][:2])
json.dump(launches, open(os.path.join(out, "launches.json"), "w"), indent=1)
