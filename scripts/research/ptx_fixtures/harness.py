#!/usr/bin/env python3
"""Load PTX through the CUDA driver (JIT) and launch kernels the way `tilelab ptx` simulates them.

    python3 harness.py LAUNCHES.json [--lineinfo] [--direct] [--only NAME ...] [--cubin-dir DIR]

LAUNCHES.json is a list of launches: {"name", "ptx" (path), "kernel", "grid", "block",
"dynamic_smem_bytes", "params": [{"name", "type", "value"}]}. For each launch, in order:

* the PTX is JIT-compiled by the driver through cuLinkCreate / cuLinkAddData / cuLinkComplete and
  the resulting CUBIN loaded with cuModuleLoadData (so the SASS that runs is exactly the CUBIN
  saved under --cubin-dir, which cuobjdump reads); one module per PTX file;
* every parameter whose value is "pointer" gets its own fresh buffer of POINTER_BYTES, zero-filled
  with cuMemsetD8 (what the simulator does: a separate zero-filled buffer per pointer parameter);
  .u32/.s32/.b32 take the integer value, .f32 the float, .u64/.s64 a non-pointer integer;
* the function's maximum dynamic shared memory is raised to dynamic_smem_bytes when that is over
  48 KiB, the kernel is launched once with cuLaunchKernel, the context synchronised and every
  return code checked (a failure stops the harness with a one-line error).

--lineinfo replaces the PTX's own line directives with `.loc 1 N 1` before the instruction on line
N of the PTX file itself (`.file 1` = the PTX path) and JITs with CU_JIT_GENERATE_LINE_INFO, so
Nsight Compute's source view attributes SASS to PTX lines.

--direct loads the PTX text with cuModuleLoadDataEx instead (no CUBIN to save), as cudarc's
`load_module` does.

No package beyond the Python standard library; libcuda.so.1 from the driver.
"""
import ctypes as C
import json
import os
import sys

POINTER_BYTES = 16 << 20
CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
CU_JIT_GENERATE_LINE_INFO = 13
CU_JIT_INPUT_PTX = 1
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_FUNC_ATTRIBUTE_NUM_REGS = 4


class Cuda:
    def __init__(self):
        self.lib = C.CDLL("libcuda.so.1")
        self.check(self.fn("cuInit")(0), "cuInit")
        dev = C.c_int()
        self.check(self.fn("cuDeviceGet")(C.byref(dev), 0), "cuDeviceGet")
        ctx = C.c_void_p()
        self.check(self.fn("cuDevicePrimaryCtxRetain")(C.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        self.check(self.fn("cuCtxSetCurrent")(ctx), "cuCtxSetCurrent")

    # The ABI versions cuda.h maps these names to (the plain symbol is the oldest ABI).
    V2 = {"cuLinkCreate", "cuLinkAddData", "cuMemAlloc", "cuMemsetD8", "cuMemFree"}

    def fn(self, name):
        sym = name + "_v2" if name in self.V2 else name
        f = getattr(self.lib, sym, None)
        if f is None:
            raise SystemExit(f"harness: libcuda has no {sym}")
        return f

    def check(self, rc, what, log=None):
        if rc != 0:
            s = C.c_char_p()
            self.lib.cuGetErrorString(rc, C.byref(s))
            extra = f": {log}" if log else ""
            raise SystemExit(f"harness: {what} failed with CUDA error {rc} ({(s.value or b'').decode()}){extra}")

    def jit(self, ptx: bytes, name: str, lineinfo: bool) -> bytes:
        """PTX -> CUBIN through the driver's JIT (cuLink*), as bytes."""
        errbuf = C.create_string_buffer(1 << 16)
        opts = [CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
        vals = [C.cast(errbuf, C.c_void_p), C.c_void_p(len(errbuf))]
        if lineinfo:
            opts.append(CU_JIT_GENERATE_LINE_INFO)
            vals.append(C.c_void_p(1))
        n = len(opts)
        copts = (C.c_int * n)(*opts)
        cvals = (C.c_void_p * n)(*[v.value if isinstance(v, C.c_void_p) else v for v in vals])
        state = C.c_void_p()
        self.check(self.fn("cuLinkCreate")(n, copts, cvals, C.byref(state)), "cuLinkCreate")
        data = C.create_string_buffer(ptx)  # NUL-terminated
        rc = self.fn("cuLinkAddData")(state, CU_JIT_INPUT_PTX, data, C.c_size_t(len(ptx) + 1),
                                      name.encode(), 0, None, None)
        self.check(rc, f"cuLinkAddData({name})", errbuf.value.decode(errors="replace"))
        cubin, size = C.c_void_p(), C.c_size_t()
        rc = self.fn("cuLinkComplete")(state, C.byref(cubin), C.byref(size))
        self.check(rc, f"cuLinkComplete({name})", errbuf.value.decode(errors="replace"))
        out = C.string_at(cubin, size.value)
        self.fn("cuLinkDestroy")(state)
        return out

    def load_ptx(self, ptx: bytes, lineinfo: bool):
        """cuModuleLoadDataEx on the PTX text itself (the driver JITs it inside; what cudarc's
        `load_module` does), optionally with CU_JIT_GENERATE_LINE_INFO."""
        mod = C.c_void_p()
        errbuf = C.create_string_buffer(1 << 16)
        opts = [CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
        vals = [C.cast(errbuf, C.c_void_p).value, len(errbuf)]
        if lineinfo:
            opts.append(CU_JIT_GENERATE_LINE_INFO)
            vals.append(1)
        n = len(opts)
        data = C.create_string_buffer(ptx)
        rc = self.fn("cuModuleLoadDataEx")(C.byref(mod), data, n, (C.c_int * n)(*opts), (C.c_void_p * n)(*vals))
        self.check(rc, "cuModuleLoadDataEx", errbuf.value.decode(errors="replace"))
        return mod

    def load(self, cubin: bytes):
        mod = C.c_void_p()
        buf = C.create_string_buffer(cubin, len(cubin))
        self.check(self.fn("cuModuleLoadData")(C.byref(mod), buf), "cuModuleLoadData")
        return mod

    def function(self, mod, name):
        f = C.c_void_p()
        self.check(self.fn("cuModuleGetFunction")(C.byref(f), mod, name.encode()), f"cuModuleGetFunction({name})")
        return f

    def alloc_zeroed(self, nbytes):
        p = C.c_uint64()
        self.check(self.fn("cuMemAlloc")(C.byref(p), C.c_size_t(nbytes)), "cuMemAlloc")
        self.check(self.fn("cuMemsetD8")(p, C.c_ubyte(0), C.c_size_t(nbytes)), "cuMemsetD8")
        return p

    def free(self, p):
        self.check(self.fn("cuMemFree")(p), "cuMemFree")


def lineinfo_ptx(ptx: str, path: str) -> str:
    """The PTX with its own .file/.loc/debug sections removed and `.loc 1 N 1` (N = line in
    `ptx`, 1-based) before every instruction, `.file 1 "path"` after .address_size."""
    out, depth, skip_section, in_stmt = [], 0, 0, False
    for n, line in enumerate(ptx.splitlines(), 1):
        s = line.strip()
        if skip_section:
            skip_section += s.count("{") - s.count("}")
            continue
        if s.startswith(".section"):
            d = s.count("{") - s.count("}")
            skip_section = d if d > 0 else (1 if "{" not in s else 0)
            continue
        if s.split()[:1] in ([".file"], [".loc"]):
            continue
        if s.startswith(".address_size"):
            out.append(line)
            out.append(f'.file 1 "{path}"')
            continue
        is_instr = (depth > 0 and s and not in_stmt and not s.startswith((".", "//", "$", "{", "}"))
                    and not s.endswith(":"))
        if is_instr:
            out.append(f"\t.loc 1 {n} 1")
        if depth > 0 and s and not s.startswith((".", "//", "{", "}")) and not s.endswith(":"):
            in_stmt = not s.split("//")[0].rstrip().endswith(";")
        depth += s.split("//")[0].count("{") - s.split("//")[0].count("}")
        out.append(line)
    return "\n".join(out) + "\n"


def pack_param(p, buffers, cuda):
    t, v = p["type"], p["value"]
    if v == "pointer":
        if t not in (".u64", ".b64", ".s64"):
            raise SystemExit(f"harness: pointer parameter {p['name']} has PTX type {t}")
        b = cuda.alloc_zeroed(POINTER_BYTES)
        buffers.append(b)
        return C.c_uint64(b.value)
    if t in (".u32", ".b32"):
        return C.c_uint32(int(v) & 0xFFFFFFFF)
    if t == ".s32":
        return C.c_int32(int(v))
    if t == ".f32":
        return C.c_float(float(v))
    if t in (".u64", ".b64", ".s64"):
        return C.c_uint64(int(v) & 0xFFFFFFFFFFFFFFFF)
    if t == ".f64":
        return C.c_double(float(v))
    raise SystemExit(f"harness: parameter {p['name']}: PTX type {t} is not supported")


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    lineinfo = "--lineinfo" in args
    direct = "--direct" in args
    only = []
    cubin_dir = None
    if "--only" in args:
        i = args.index("--only")
        only = [a for a in args[i + 1:] if not a.startswith("--")]
    if "--cubin-dir" in args:
        cubin_dir = args[args.index("--cubin-dir") + 1]
        os.makedirs(cubin_dir, exist_ok=True)
    launches = json.load(open(args[0]))
    if only:
        launches = [l for l in launches if l["name"] in only]
    cuda = Cuda()
    modules = {}
    for l in launches:
        key = l["ptx"]
        if key not in modules:
            ptx = open(key).read()
            if lineinfo:
                path = os.path.abspath(key)
                ptx = lineinfo_ptx(ptx, path)
                with open(key + ".lineinfo.ptx", "w") as f:
                    f.write(ptx)
            if direct:
                modules[key] = cuda.load_ptx(ptx.encode(), lineinfo)
            else:
                cubin = cuda.jit(ptx.encode(), os.path.basename(key), lineinfo)
                if cubin_dir:
                    stem = os.path.basename(key)[:-4] + (".lineinfo" if lineinfo else "")
                    with open(os.path.join(cubin_dir, stem + ".cubin"), "wb") as f:
                        f.write(cubin)
                modules[key] = cuda.load(cubin)
        f = cuda.function(modules[key], l["kernel"])
        smem = int(l["dynamic_smem_bytes"])
        if smem > 48 * 1024:
            cuda.check(cuda.fn("cuFuncSetAttribute")(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
                       "cuFuncSetAttribute")
        buffers = []
        vals = [pack_param(p, buffers, cuda) for p in l["params"]]
        ptrs = (C.c_void_p * max(1, len(vals)))(*[C.cast(C.pointer(v), C.c_void_p) for v in vals])
        g, b = l["grid"], l["block"]
        rc = cuda.fn("cuLaunchKernel")(f, g[0], g[1], g[2], b[0], b[1], b[2], smem, None, ptrs, None)
        cuda.check(rc, f"cuLaunchKernel({l['name']})")
        cuda.check(cuda.fn("cuCtxSynchronize")(), f"kernel {l['name']}")
        regs = C.c_int()
        cuda.fn("cuFuncGetAttribute")(C.byref(regs), CU_FUNC_ATTRIBUTE_NUM_REGS, f)
        for bf in buffers:
            cuda.free(bf)
        print(f"launched {l['name']} kernel={l['kernel']} grid={tuple(g)} block={tuple(b)} smem={smem} "
              f"regs={regs.value}", flush=True)


if __name__ == "__main__":
    main()
