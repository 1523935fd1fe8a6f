#!/usr/bin/env python3
"""On the H200: run every launch of launches.json once and read its output buffer back.

    python3 device.py LAUNCHES.json OUT.json CUBIN_DIR

The PTX is JIT-compiled by the driver as scripts/research/ptx_fixtures/harness.py does (cuLink, default
options; the CUBIN is kept in CUBIN_DIR for cuobjdump); the one pointer parameter gets a
zero-filled 64 KiB buffer; after the launch (one CTA of 32 threads) the first 32 x 16 words are
copied back. OUT.json: {"outputs": {name: [[16 words] for each lane]}, "regs": {name: n}}.
"""
import ctypes as C
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ptx_fixtures"))
import harness as H  # noqa: E402

WORDS = 32 * 16


def main():
    spec = json.load(open(sys.argv[1]))
    cubin_dir = sys.argv[3]
    os.makedirs(cubin_dir, exist_ok=True)
    base = os.path.dirname(os.path.abspath(sys.argv[1]))
    cuda = H.Cuda()
    mods, outs, regs = {}, {}, {}
    for l in spec["launches"]:
        p = os.path.join(base, l["ptx"])
        if p not in mods:
            cubin = cuda.jit(open(p).read().encode(), os.path.basename(p), False)
            open(os.path.join(cubin_dir, os.path.basename(p)[:-4] + ".cubin"), "wb").write(cubin)
            mods[p] = cuda.load(cubin)
        f = cuda.function(mods[p], l["kernel"])
        buf = cuda.alloc_zeroed(64 << 10)
        arg = C.c_uint64(buf.value)
        params = (C.c_void_p * 1)(C.cast(C.pointer(arg), C.c_void_p))
        g, b = l["grid"], l["block"]
        cuda.check(cuda.fn("cuLaunchKernel")(f, g[0], g[1], g[2], b[0], b[1], b[2], 0, None, params, None),
                   f"cuLaunchKernel({l['name']})")
        cuda.check(cuda.fn("cuCtxSynchronize")(), f"kernel {l['name']}")
        host = (C.c_uint32 * WORDS)()
        cuda.check(cuda.lib.cuMemcpyDtoH_v2(host, buf, C.c_size_t(4 * WORDS)), "cuMemcpyDtoH")
        outs[l["name"]] = [list(host[16 * i:16 * i + 16]) for i in range(32)]
        n = C.c_int()
        cuda.fn("cuFuncGetAttribute")(C.byref(n), H.CU_FUNC_ATTRIBUTE_NUM_REGS, f)
        regs[l["name"]] = n.value
        cuda.free(buf)
        print("ran", l["name"], "regs", n.value, flush=True)
    json.dump({"outputs": outs, "regs": regs}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
