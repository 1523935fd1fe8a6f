#!/usr/bin/env python3
"""On the GPU machine: launch each Triton fixture through Triton's real JIT (torch tensors, as the
tutorials call the kernels) and compare the PTX it compiled with the committed fixture PTX
(made on a CPU by triton_hopper.py), ignoring debug sections, .file/.loc lines and comments.

    python3 check_jit.py FIXDIR OUT.json
"""
import json
import os
import re
import sys

import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import triton_hopper as T  # noqa: E402


def strip(ptx):
    """The code of a PTX module: everything before the first .section (the DWARF sections hold the
    source paths), without .file/.loc lines, comments and blank lines."""
    i = ptx.find(".section")
    out = []
    for line in (ptx[:i] if i >= 0 else ptx).splitlines():
        s = line.strip()
        if not s or s.startswith((".file", ".loc", "//")):
            continue
        out.append(re.sub(r"\s*//.*$", "", line))
    return out


def launch(name):
    f = T.FIXTURES[name]
    dev = "cuda"
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
    args = []
    for a, kind, v in f["args"]:
        if kind == "ptr":
            args.append(torch.zeros(1 << 20, dtype=dt[v], device=dev))
        elif kind == "desc":
            base = torch.zeros(v.shape[0] * v.shape[1], dtype=dt[v.dtype], device=dev)
            args.append(TensorDescriptor(base, v.shape, v.strides, v.block))
        else:
            args.append(v)
    k = f["fn"][tuple(f["grid"])](*args, **f["consts"], num_warps=f["warps"], num_stages=f["stages"])
    torch.cuda.synchronize()
    return k


def main():
    fixdir, out = sys.argv[1], sys.argv[2]

    def alloc(size, align, stream):
        return torch.empty(size, dtype=torch.int8, device="cuda")

    triton.set_allocator(alloc)
    res = {}
    for name in T.FIXTURES:
        try:
            k = launch(name)
            jit = k.asm["ptx"]
            mine = open(os.path.join(fixdir, name + ".ptx")).read()
            same = strip(jit) == strip(mine)
            res[name] = {"same_code": same, "jit_shared": int(k.metadata.shared)}
            if not same:
                a, b = strip(jit), strip(mine)
                diff = [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if x != y][:5]
                res[name]["first_differences"] = diff
                res[name]["lines"] = [len(a), len(b)]
                open(os.path.join(os.path.dirname(out), name + ".jit.ptx"), "w").write(jit)
        except Exception as e:  # noqa: BLE001
            res[name] = {"error": f"{type(e).__name__}: {e}"[:500]}
        print(name, res[name], flush=True)
    json.dump(res, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
