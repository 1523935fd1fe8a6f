#!/usr/bin/env python3
"""On a GPU machine (torch, Triton): for each kernel, launch it through Triton's real JIT with torch
tensors, then compile it with tilelab.triton.compile from the same arguments (tensors passed as
they are: their dtype and data_ptr), and compare the two PTX texts with the `.loc`/`.file` lines
and the DWARF sections removed (they hold source paths). Writes OUT.json and prints one line per
kernel.

    PYTHONPATH=python python3 scripts/research/python_door/jit_equivalence.py OUT.json
"""
import json
import os
import re
import sys

import torch
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "hopper_fixtures"))
import kernels as K  # noqa: E402
import tutorial_kernels as TK  # noqa: E402
import tilelab.triton as tt  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402


def code(ptx):
    ptx = ptx.split("\t.section\t.debug")[0]
    return "\n".join(l for l in ptx.splitlines() if not re.match(r"\s*\.(loc|file)\b", l) and "// begin inline asm" not in l
                     and "// end inline asm" not in l)


def cases():
    dev = "cuda"
    f16 = dict(device=dev, dtype=torch.float16)
    a, b, c = torch.randn(512, 256, **f16), torch.randn(256, 384, **f16), torch.empty(512, 384, **f16)
    mm = dict(a_ptr=a, b_ptr=b, c_ptr=c, M=512, N=384, K=256, stride_am=a.stride(0), stride_ak=a.stride(1),
              stride_bk=b.stride(0), stride_bn=b.stride(1), stride_cm=c.stride(0), stride_cn=c.stride(1))
    yield ("tutorial matmul", TK.matmul_kernel, (4, 3), mm,
           dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, ACTIVATION=""), 4, 3)
    z, h, n, d = 1, 2, 512, 64
    q, k, v = (torch.randn(z * h * n, d, **f16) for _ in range(3))
    o = torch.empty(z * h * n, d, **f16)
    m = torch.empty(z * h * n, device=dev, dtype=torch.float32)
    desc = lambda t, bm: TensorDescriptor(t, list(t.shape), list(t.stride()), [bm, d])  # noqa: E731
    at = dict(sm_scale=0.125, M=m, Z=z, H=h, desc_q=desc(q, 128), desc_k=desc(k, 64), desc_v=desc(v, 64),
              desc_o=desc(o, 128), N_CTX=n)
    yield ("tutorial fused attention (host TensorDescriptors)", TK._attn_fwd, (n // 128, z * h, 1), at,
           dict(HEAD_DIM=d, BLOCK_M=128, BLOCK_N=64, FP8_OUTPUT=False, STAGE=1, warp_specialize=False, IS_HOPPER=True), 4, 2)
    x = torch.randn(64, 1000, **f16)
    y = torch.empty_like(x)
    yield ("softmax", K.softmax_kernel, (64,), dict(out_ptr=y, in_ptr=x, in_stride=x.stride(0), out_stride=y.stride(0),
                                                    n_cols=1000), dict(BLOCK_SIZE=1024), 8, 1)
    w, bb = torch.randn(1000, **f16), torch.randn(1000, **f16)
    yield ("layer norm", K.layer_norm_fwd, (64,), dict(x_ptr=x, y_ptr=y, w_ptr=w, b_ptr=bb, stride=x.stride(0), n_cols=1000,
                                                       eps=1e-5), dict(BLOCK_SIZE=1024), 4, 1)
    t, tout = torch.randn(300, 200, **f16), torch.empty(200, 300, **f16)
    yield ("transpose", K.transpose_kernel, (5, 4), dict(in_ptr=t, out_ptr=tout, M=300, N=200), dict(BM=64, BN=64), 4, 1)


def main():
    res = {}
    for name, fn, grid, args, consts, warps, stages in cases():
        real = fn[grid](**args, **consts, num_warps=warps, num_stages=stages)
        mine = tt.compile(fn, args, num_warps=warps, num_stages=stages, target="sm_90", **consts)
        same = code(real.asm["ptx"]) == code(mine.asm["ptx"])
        res[name] = {"same_code": same, "kernel": real.metadata.name, "num_warps": warps, "num_stages": stages,
                     "real_ptx_lines": len(real.asm["ptx"].splitlines()), "analyze_ptx_lines": len(mine.asm["ptx"].splitlines()),
                     "real_params": re.findall(r"\.param \.\w+[^,)]*", real.asm["ptx"])[:3]}
        print(f"{name}: {'identical' if same else 'DIFFERENT'} code ({res[name]['real_ptx_lines']} / {res[name]['analyze_ptx_lines']} lines)", flush=True)
        if not same:
            a, b = code(real.asm["ptx"]).splitlines(), code(mine.asm["ptx"]).splitlines()
            first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            res[name]["first_difference"] = {"line": first, "real": a[first:first + 3], "analyze": b[first:first + 3]}
    res["_provenance"] = {"triton": triton.__version__, "torch": torch.__version__,
                          "device": torch.cuda.get_device_name(), "capability": list(torch.cuda.get_device_capability())}
    json.dump(res, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
