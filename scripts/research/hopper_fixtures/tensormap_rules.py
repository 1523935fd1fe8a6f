#!/usr/bin/env python3
"""Which tensor maps does the driver's cuTensorMapEncodeTiled accept?

Runs on the H200 machine (needs libcuda, no other package). Each case is one call with
interleave NONE, L2 promotion NONE and OOB fill NONE over a 1 MiB allocation (256-byte aligned);
the case list varies one argument at a time around a valid map. Writes JSON:

    {"driver": ..., "cases": [{"name", "dtype", "rank", "dims", "strides", "box",
                               "elem_strides", "swizzle", "result"}]}

`dtype` is the CUtensorMapDataType value (0 u8 .. 12 tf32_ftz), `swizzle` the
CUtensorMapSwizzle value (0 none, 1 32B, 2 64B, 3 128B), `strides` globalStrides[0..rank-1] in
bytes, `result` the CUresult (0 = accepted). tests/tensormap_rules.rs replays every case through
sim::tma::TensorMap::new.

Usage: python3 tensormap_rules.py OUT.json
"""
import ctypes
import json
import sys

DT = {"u8": 0, "u16": 1, "u32": 2, "s32": 3, "u64": 4, "s64": 5, "f16": 6, "f32": 7,
      "f64": 8, "bf16": 9, "f32_ftz": 10, "tf32": 11, "tf32_ftz": 12}
SIZE = {"u8": 1, "u16": 2, "u32": 4, "s32": 4, "u64": 8, "s64": 8, "f16": 2, "f32": 4,
        "f64": 8, "bf16": 2, "f32_ftz": 4, "tf32": 4, "tf32_ftz": 4}
SW = {"none": 0, "32B": 1, "64B": 2, "128B": 3}


def cases():
    out = []

    def add(name, dtype, dims, strides, box, sw="none", es=None):
        out.append(dict(name=name, dtype=DT[dtype], rank=len(dims), dims=dims,
                        strides=strides, box=box,
                        elem_strides=es if es is not None else [1] * len(dims),
                        swizzle=SW[sw]))

    base = ("f16", [512, 128], [1024], [64, 128], "128B")
    add("base", *base)
    # ranks 1..5 (rank 6 is refused by both before any argument is read)
    add("rank1", "f16", [4096], [], [256])
    add("rank3", "f16", [64, 64, 4], [128, 8192], [64, 16, 2], "128B")
    add("rank4", "f16", [64, 8, 8, 4], [128, 1024, 8192], [64, 8, 2, 2], "128B")
    add("rank5", "f16", [64, 4, 4, 4, 4], [128, 512, 2048, 8192], [64, 2, 2, 2, 2], "128B")
    # globalDim
    for d in [0, 1, 2, 2**31, 2**32 - 1, 2**32, 2**32 + 1]:
        add(f"dim0={d}", "f16", [d, 128], [1024], [64, 128], "128B")
        add(f"dim1={d}", "f16", [512, d], [1024], [64, 128], "128B")
    # globalStrides (bytes)
    for s in [0, 8, 16, 48, 512, 1000, 1008, 1024, 2**32, 2**39, 2**40 - 16, 2**40, 2**40 + 16]:
        add(f"stride={s}", "f16", [512, 128], [s], [64, 128], "128B")
        add(f"stride={s},none", "f16", [8, 128], [s], [8, 128], "none")
    add("stride<row,rank3", "f16", [64, 64, 4], [128, 64], [64, 16, 2], "128B")
    # boxDim
    for b in [0, 1, 2, 8, 255, 256, 257, 512]:
        add(f"box1={b}", "f16", [512, 1024], [1024], [64, b], "128B")
        add(f"box0={b},none", "u8", [4096, 16], [4096], [b, 16], "none")
    for b0 in [1, 2, 4, 8, 12, 16, 24]:
        add(f"box0={b0},f16,none", "f16", [512, 128], [1024], [b0, 16], "none")
    # box larger than the tensor
    add("box>dims", "f16", [32, 32], [64], [64, 64], "128B")
    add("box0>dim0", "f16", [16, 512], [32], [64, 8], "128B")
    # swizzle span against the box's inner bytes
    for sw, span in [("32B", 32), ("64B", 64), ("128B", 128), ("none", 0)]:
        for inner in [16, 32, 64, 128, 256, 512]:
            add(f"{sw},inner={inner}", "f16", [4096, 64], [8192], [inner // 2, 8], sw)
    # element strides
    for es in [0, 1, 2, 3, 8, 9]:
        add(f"es0={es}", "f16", [512, 128], [1024], [64, 64], "128B", [es, 1])
        add(f"es1={es}", "f16", [512, 128], [1024], [64, 64], "128B", [1, es])
    # every data type with a 128-byte inner box
    for name, size in SIZE.items():
        add(f"dtype={name}", name, [4096 // size, 64], [4096], [128 // size, 16], "128B")
    return out


def main():
    path = sys.argv[1]
    cu = ctypes.CDLL("libcuda.so.1")
    assert cu.cuInit(0) == 0
    dev = ctypes.c_int()
    assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
    ctx = ctypes.c_void_p()
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cu.cuCtxSetCurrent(ctx) == 0
    ptr = ctypes.c_uint64()
    assert cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(1 << 20)) == 0
    ver = ctypes.c_int()
    cu.cuDriverGetVersion(ctypes.byref(ver))
    f = cu.cuTensorMapEncodeTiled
    f.restype = ctypes.c_int
    res = []
    for c in cases():
        r = c["rank"]
        tmap = (ctypes.c_uint8 * 128)()
        dims = (ctypes.c_uint64 * r)(*c["dims"])
        strides = (ctypes.c_uint64 * max(r - 1, 1))(*(c["strides"] or [0]))
        box = (ctypes.c_uint32 * r)(*c["box"])
        es = (ctypes.c_uint32 * r)(*c["elem_strides"])
        rc = f(ctypes.byref(tmap), ctypes.c_int(c["dtype"]), ctypes.c_uint32(r),
               ctypes.c_void_p(ptr.value), dims, strides, box, es,
               ctypes.c_int(0), ctypes.c_int(c["swizzle"]), ctypes.c_int(0), ctypes.c_int(0))
        c["result"] = rc
        res.append(c)
    json.dump({"driver": ver.value, "api": "cuTensorMapEncodeTiled",
               "note": "interleave NONE, l2Promotion NONE, oobFill NONE, globalAddress a "
                       "cuMemAlloc pointer (256-byte aligned)", "cases": res},
              open(path, "w"), indent=1)
    print(f"{len(res)} cases, {sum(1 for c in res if c['result'] == 0)} accepted")


if __name__ == "__main__":
    main()
