#!/usr/bin/env python3
"""Launch Hopper PTX fixtures through the CUDA driver, as scripts/research/ptx_fixtures/harness.py does,
plus the parameters Hopper kernels take.

    python3 harness_hopper.py LAUNCHES.json [--only NAME ...] [--cubin-dir DIR] [--direct] [--repeat N]

(--repeat N: each launch N times in a row on the one loaded module, fresh buffers each time, so
that ncu profiles N identical launches: run_repeat.sh.)

(--direct, or HARNESS_DIRECT=1: cuModuleLoadDataEx on the PTX text instead of cuLink, as harness.py
--direct and cudarc's load_module do. kernels/fa3_fwd.cu needs it: through cuLink its launch fails
with CUDA error 716, misaligned address, in thread 0 (2026-12-01, H200).)

LAUNCHES.json: a list of launches {"name", "ptx", "kernel", "grid", "block", ("cluster": CTAs per
cluster x, y, z, launched with cuLaunchKernelEx and CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION),
"dynamic_smem_bytes", "params": [{"name", "type", "value"}], "tensor_maps": [...]}. As in
harness.py: the PTX is JIT-compiled with cuLinkCreate/cuLinkAddData/cuLinkComplete (default
options) and the CUBIN loaded with cuModuleLoadData; every "pointer" parameter gets its own
zero-filled 16 MiB buffer; the maximum dynamic shared memory is raised when over 48 KiB; one
launch, synchronised, every return code checked. In addition:

* a parameter of type `.b8[128]` with value "tensor_map" is the 128-byte CUtensorMap made by
  cuTensorMapEncodeTiled from the launch's `tensor_maps` entry with that parameter's `index`
  (dtype enum `data_type`, `dims` innermost first, `strides_bytes` of dims 1.., `box`,
  `element_strides`, no interleave, `swizzle_enum`, L2 promotion 128B, OOB fill none) over its
  own zero-filled 16 MiB buffer;
* a parameter of type `.b8[N]` with value {"struct": [[BYTE_OFFSET, TYPE, [V, ...]], ...]} is N
  bytes, zero except the values packed little-endian from each offset (issue 27's
  `--arg NAME=TYPE:V[,V...]`).

Library use from check_correct.py: `encode_tensor_map`, `pack`, and `Cuda` (from harness.py).
"""
import ctypes as C
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ptx_fixtures"))
import harness as H  # noqa: E402

L2_128B = 2
STRUCT_FMT = {"s8": "b", "u8": "B", "s16": "h", "u16": "H", "s32": "i", "u32": "I", "b32": "I", "s64": "q",
              "u64": "Q", "b64": "Q", "f32": "f", "f64": "d", "f16": "e"}


class Aligned:
    """n bytes at a 64-byte aligned host address (kernelParams points here)."""

    def __init__(self, data: bytes):
        self.raw = C.create_string_buffer(len(data) + 64)
        addr = C.addressof(self.raw)
        self.addr = (addr + 63) & ~63
        C.memmove(self.addr, data, len(data))


def encode_tensor_map(cuda, m, gaddr):
    """128 bytes of CUtensorMap for tensor-map spec m over global address gaddr."""
    f = cuda.fn("cuTensorMapEncodeTiled")
    rank = m["rank"]
    out = (C.c_ubyte * 128)()
    dims = (C.c_uint64 * rank)(*m["dims"])
    strides = (C.c_uint64 * max(1, rank - 1))(*m["strides_bytes"])
    box = (C.c_uint32 * rank)(*m["box"])
    es = (C.c_uint32 * rank)(*m.get("element_strides", [1] * rank))
    rc = f(out, C.c_int(m["data_type"]), C.c_uint32(rank), C.c_void_p(gaddr), dims, strides, box, es,
           C.c_int(0), C.c_int(m["swizzle_enum"]), C.c_int(L2_128B), C.c_int(0))
    cuda.check(rc, f"cuTensorMapEncodeTiled({m['cli']})")
    return bytes(out)


def pack_struct(n, spec):
    b = bytearray(n)
    for off, ty, vals in spec:
        raw = b"".join(struct.pack("<" + STRUCT_FMT[ty], v) for v in vals)
        if off + len(raw) > n:
            raise SystemExit(f"harness: struct values at byte {off} overflow the {n}-byte parameter")
        b[off:off + len(raw)] = raw
    return bytes(b)


def pack(l, cuda, buffers, gaddr_of=None):
    """The kernelParams array for launch l; buffers collects device allocations to free.
    gaddr_of(index, kind) may supply a device address for a pointer / tensor map (else a fresh
    zero-filled 16 MiB buffer)."""
    maps = {m["index"]: m for m in l.get("tensor_maps", [])}
    vals = []
    for i, p in enumerate(l["params"]):
        t, v = p["type"], p["value"]
        if t.startswith(".b8["):
            n = int(t[4:-1])
            if v == "tensor_map":
                if i not in maps:
                    raise SystemExit(f"harness: parameter {i} ({p['name']}) is a tensor map with no tensor_maps entry")
                g = gaddr_of(i, "tensor_map") if gaddr_of else None
                if g is None:
                    b = cuda.alloc_zeroed(H.POINTER_BYTES)
                    buffers.append(b)
                    g = b.value
                vals.append(Aligned(encode_tensor_map(cuda, maps[i], g)))
            elif isinstance(v, dict) and "struct" in v:
                vals.append(Aligned(pack_struct(n, v["struct"])))
            else:
                raise SystemExit(f"harness: parameter {i} ({p['name']}) of type {t} needs a tensor map or struct value")
            continue
        if v == "pointer" and gaddr_of:
            g = gaddr_of(i, "pointer")
            if g is not None:
                vals.append(C.c_uint64(g))
                continue
        vals.append(H.pack_param(p, buffers, cuda))
    ptrs = [C.c_void_p(v.addr) if isinstance(v, Aligned) else C.cast(C.pointer(v), C.c_void_p) for v in vals]
    return (C.c_void_p * max(1, len(ptrs)))(*ptrs), vals


def load_module(cuda, path, cubin_dir=None, direct=False):
    ptx = open(path).read()
    if direct or os.environ.get("HARNESS_DIRECT") == "1":
        return cuda.load_ptx(ptx.encode(), False)
    cubin = cuda.jit(ptx.encode(), os.path.basename(path), False)
    if cubin_dir:
        with open(os.path.join(cubin_dir, os.path.basename(path)[:-4] + ".cubin"), "wb") as f:
            f.write(cubin)
    return cuda.load(cubin)


CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4


class LaunchAttribute(C.Structure):
    """CUlaunchAttribute: the id, padding to 8 bytes, a 64-byte value union (cuda.h, CUDA 12+)."""
    _fields_ = [("id", C.c_int), ("pad", C.c_char * 4), ("value", C.c_uint32 * 16)]


class LaunchConfig(C.Structure):
    """CUlaunchConfig of cuLaunchKernelEx (cuda.h)."""
    _fields_ = [("gridDimX", C.c_uint), ("gridDimY", C.c_uint), ("gridDimZ", C.c_uint),
                ("blockDimX", C.c_uint), ("blockDimY", C.c_uint), ("blockDimZ", C.c_uint),
                ("sharedMemBytes", C.c_uint), ("hStream", C.c_void_p),
                ("attrs", C.POINTER(LaunchAttribute)), ("numAttrs", C.c_uint)]


def launch_cluster(cuda, f, l, smem, ptrs):
    """cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = l["cluster"] (CTAs per
    cluster in x, y, z; the grid stays in CTAs)."""
    g, b, c = l["grid"], l["block"], l["cluster"]
    attr = LaunchAttribute()
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attr.value[0], attr.value[1], attr.value[2] = c
    cfg = LaunchConfig(g[0], g[1], g[2], b[0], b[1], b[2], smem, None, C.pointer(attr), 1)
    return cuda.fn("cuLaunchKernelEx")(C.byref(cfg), f, ptrs, None)


def launch(cuda, mod, l, gaddr_of=None):
    f = cuda.function(mod, l["kernel"])
    smem = int(l["dynamic_smem_bytes"])
    if smem > 48 * 1024:
        cuda.check(cuda.fn("cuFuncSetAttribute")(f, H.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
                   "cuFuncSetAttribute")
    buffers = []
    ptrs, keep = pack(l, cuda, buffers, gaddr_of)
    g, b = l["grid"], l["block"]
    if l.get("cluster", [1, 1, 1]) != [1, 1, 1]:
        rc = launch_cluster(cuda, f, l, smem, ptrs)
        cuda.check(rc, f"cuLaunchKernelEx({l['name']}, cluster {l['cluster']})")
    else:
        rc = cuda.fn("cuLaunchKernel")(f, g[0], g[1], g[2], b[0], b[1], b[2], smem, None, ptrs, None)
        cuda.check(rc, f"cuLaunchKernel({l['name']})")
    cuda.check(cuda.fn("cuCtxSynchronize")(), f"kernel {l['name']}")
    regs = C.c_int()
    cuda.fn("cuFuncGetAttribute")(C.byref(regs), H.CU_FUNC_ATTRIBUTE_NUM_REGS, f)
    for bf in buffers:
        cuda.free(bf)
    del keep
    return regs.value


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    only, cubin_dir = [], None
    if "--only" in args:
        i = args.index("--only")
        for a in args[i + 1:]:
            if a.startswith("--"):
                break
            only.append(a)
    if "--cubin-dir" in args:
        cubin_dir = args[args.index("--cubin-dir") + 1]
        os.makedirs(cubin_dir, exist_ok=True)
    repeat = int(args[args.index("--repeat") + 1]) if "--repeat" in args else 1
    launches = json.load(open(args[0]))
    if only:
        launches = [l for l in launches if l["name"] in only]
    cuda = H.Cuda()
    mods = {}
    for l in launches:
        if l["ptx"] not in mods:
            mods[l["ptx"]] = load_module(cuda, l["ptx"], cubin_dir, "--direct" in args)
        for k in range(repeat):
            regs = launch(cuda, mods[l["ptx"]], l)
            print(f"launched {l['name']} ({k + 1}/{repeat}) kernel={l['kernel']} grid={tuple(l['grid'])} block={tuple(l['block'])} "
                    f"smem={l['dynamic_smem_bytes']} regs={regs}", flush=True)


if __name__ == "__main__":
    main()
