"""Triton kernels on tilelab without a GPU.

    import tilelab.triton as tt
    r = tt.analyze(matmul_kernel, grid=(4, 4), args={"a_ptr": "*fp16", "b_ptr": "*fp16",
                   "c_ptr": "*fp16", "M": 512, "N": 512, "K": 512, "stride_am": 512, ...},
                   num_warps=4, num_stages=3, target="sm_90", BLOCK_SIZE_M=128, ...)
    r.totals["shared_ld_bank_conflicts"]; r.by_source(); r      # (a table in a notebook)

What it does, as Triton's JIT does at a launch (``JITFunction.run``):

1. **Specialise** each argument by the JIT's own rule (``native_specialize_impl``): an integer
   equal to 1 becomes a constexpr (it leaves the PTX parameter list), integers divisible by 16
   and pointers get ``tt.divisibility`` 16 (vector loads, ``cp.async``), floats are ``fp32``
   and not specialised, booleans ``u1``. A pointer is a dtype string (``"*fp16"``: taken as a
   16-byte aligned allocation, as torch's are) or a tensor (its ``dtype`` and ``data_ptr()``,
   no GPU needed: a CPU tensor works); a host TensorDescriptor (``triton.tools.tensor_descriptor``,
   or :class:`Descriptor`) becomes a ``tensordesc`` with its ``CUtensorMap``.
2. **Compile** on the CPU: ``triton.compile(ASTSource(fn, signature, constexprs, attrs),
   target=GPUTarget("cuda", 80 or 90, 32), options={"num_warps", "num_stages"})``.
3. **Write a launch file** (docs/launch-files.md, version 1): each PTX parameter with its value
   and the Python name it came from (``from``); a descriptor is its 128-byte map followed by its
   shape and strides, as Triton's launcher passes it; Triton's scratch pointers last.
4. **Run** ``tilelab ptx --launch FILE --json`` and return a :class:`tilelab.Report` whose
   lines carry their Python file and line (the PTX's ``.loc``).

``analyze(compiled, grid, args)`` takes a kernel compiled elsewhere (``triton.compile``'s
result, or what ``kernel[grid](...)`` returns): its PTX and signature are used as they are.
"""
import json
import os
import re
import tempfile

from .._binary import TilelabError, run_launch

__all__ = ["analyze", "compile", "Descriptor", "specialise", "TilelabError"]

#: Triton's dtype names a pointer may point to (``"*fp16"``) and what torch calls them.
TORCH_DTYPES = {
    "float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
    "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5", "int8": "i8", "int16": "i16", "int32": "i32",
    "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "i1",
}
DTYPES = sorted(set(TORCH_DTYPES.values()) | {"fp8e4b15", "u1"})
ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8, "fp8e4nv": 1, "fp8e5": 1, "fp8e4b15": 1,
              "i8": 1, "i16": 2, "i32": 4, "i64": 8, "u8": 1, "u16": 2, "u32": 4, "u64": 8, "i1": 1, "u1": 1}
# CUtensorMapDataType names of tilelab's --tensor-map, by the device's elem_type of Triton's
# tensordesc_meta (the PTX ISA numbering: 8 f32.ftz, 9 f64, 10 bf16; the driver's: f64 8, bf16 9,
# f32_ftz 10).
_TMA_DTYPE = ["u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f32_ftz", "f64", "bf16", "tf32", "tf32_ftz"]
_SWIZZLE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}
_TARGETS = {"sm_80": 80, "sm_86": 86, "sm_89": 89, "sm_90": 90, "sm_90a": 90}


class Descriptor:
    """A host tensor descriptor without torch: ``dtype`` (a Triton name, ``"fp16"``), ``shape``
    and ``strides`` (elements, outermost first, the last stride 1), ``block_shape`` (elements),
    as ``triton.tools.tensor_descriptor.TensorDescriptor`` holds them."""

    def __init__(self, dtype, shape, strides, block_shape):
        self.dtype, self.shape, self.strides, self.block_shape = dtype, list(shape), list(strides), list(block_shape)


def _triton():
    try:
        import triton
        from triton.backends.compiler import BaseBackend, GPUTarget
        from triton.compiler import ASTSource
        from triton.runtime.jit import native_specialize_impl
    except ImportError:
        raise TilelabError("Triton is not installed: pip install triton (no GPU needed)") from None
    return triton, BaseBackend, GPUTarget, ASTSource, native_specialize_impl


def _dtype_name(d, what):
    s = str(d).removeprefix("torch.").removeprefix("triton.language.")
    s = TORCH_DTYPES.get(s, s)
    if s not in DTYPES:
        raise TilelabError(f"{what}: dtype {d!r} is not one Triton knows; allowed: {', '.join(DTYPES)}")
    return s


def _descriptor(name, v):
    """(dtype, shape, strides, block) of a descriptor argument, or None if ``v`` is not one."""
    if isinstance(v, Descriptor):
        return _dtype_name(v.dtype, name), v.shape, v.strides, v.block_shape
    if all(hasattr(v, a) for a in ("base", "shape", "strides", "block_shape")):
        return (_dtype_name(v.base.dtype, name), [int(x) for x in v.shape], [int(x) for x in v.strides],
                [int(x) for x in v.block_shape])
    return None


def specialise(name, v):
    """(signature type, attrs, kind) of argument ``name`` = ``v`` as Triton's JIT specialises it:
    kind is "constexpr", "pointer", "scalar" or "descriptor"; attrs the ``tt.divisibility``
    hints (a list of [name, value] pairs)."""
    _, BaseBackend, _, _, native = _triton()
    if isinstance(v, str):
        if not v.startswith("*"):
            raise TilelabError(f"argument {name}={v!r}: a pointer is written '*DTYPE' (e.g. '*fp16'); a value is a number")
        return "*" + _dtype_name(v[1:], f"argument {name}"), [["tt.divisibility", 16]], "pointer"
    d = _descriptor(name, v)
    if d:
        return f"tensordesc<{d[0]}[{', '.join(map(str, d[3]))}]>", [], "descriptor"
    if hasattr(v, "data_ptr") and hasattr(v, "dtype"):
        t = "*" + _dtype_name(v.dtype, f"argument {name}")
        return t, ([["tt.divisibility", 16]] if v.data_ptr() % 16 == 0 else []), "pointer"
    if isinstance(v, float):
        return "fp32", [], "scalar"
    if isinstance(v, bool) or isinstance(v, int):
        t, key = native(BaseBackend, v, False, True, True)
        if t == "constexpr":
            return t, [], "constexpr"
        return t, (BaseBackend.parse_attr(key) if key else []), "scalar"
    raise TilelabError(
        f"argument {name}={v!r} ({type(v).__name__}): give an int, a float, a pointer dtype '*fp16', "
        "a tensor, or a TensorDescriptor")


def _params(ptx, kernel):
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\((.*?)\)", ptx, re.S)
    return [] if not m else [p.strip() for p in m.group(1).split(",") if p.strip().startswith(".param")]


def _arg_names(fn):
    names = getattr(fn, "arg_names", None)
    if names is None:
        raise TilelabError(f"{fn!r} is not a Triton kernel: decorate it with @triton.jit")
    return list(names)


def _tensor_map(d, meta):
    dtype, shape, strides, _block = d
    eb = meta["elem_size"]
    dims = list(reversed(shape))
    st = [s * eb for s in reversed(strides[:-1])]
    box = list(reversed(meta["block_size"]))
    t = _TMA_DTYPE[meta["elem_type"]] if meta["elem_type"] < len(_TMA_DTYPE) else None
    if t is None:
        raise TilelabError(f"a descriptor of {dtype}: Triton's tensor-map element type {meta['elem_type']} is not one tilelab knows")
    return f"{t}:{','.join(map(str, dims))}:{','.join(map(str, st))}:{','.join(map(str, box))}:{_SWIZZLE[meta['swizzle']]}"


def _compile(fn, args, constexprs, num_warps, num_stages, cap):
    triton, _, GPUTarget, ASTSource, _ = _triton()
    names = _arg_names(fn)
    declared_const = set(getattr(fn, "constexprs", []) or [])
    sig, consts, attrs, kinds = {}, {}, {}, {}
    for i, a in enumerate(names):
        if a in constexprs:
            sig[a], consts[a] = "constexpr", constexprs[a]
            continue
        if i in declared_const:
            raise TilelabError(f"{a} is a tl.constexpr of {fn.__name__}: give it as {a}=VALUE")
        if a not in args:
            raise TilelabError(f"argument {a} of {fn.__name__} is missing: give args={{'{a}': ...}}")
        t, at, kind = specialise(a, args[a])
        sig[a], kinds[a] = t, kind
        if kind == "constexpr":
            consts[a] = args[a]
        if at:
            attrs[(i,)] = at
    extra = sorted(set(args) - set(names)) + sorted(set(constexprs) - set(names))
    if extra:
        raise TilelabError(f"{fn.__name__} has no parameter {extra[0]}; its parameters: {', '.join(names)}")
    try:
        k = triton.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", cap, 32),
                           options={"num_warps": num_warps, "num_stages": num_stages})
    except TilelabError:
        raise
    except Exception as e:  # Triton's own compile errors: their first line is the message
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise TilelabError(f"Triton could not compile {fn.__name__}: {first}") from None
    return k, names, sig, kinds


def _launch_doc(k, names, sig, kinds, args, grid, cta, ptx_name):
    kernel = k.metadata.name
    ptx = k.asm["ptx"]
    params = _params(ptx, kernel)
    metas = list(getattr(k.metadata, "tensordesc_meta", None) or [])
    entries, pi, di = [], 0, 0
    for a in names:
        if sig.get(a, "constexpr") == "constexpr":
            continue
        kind = kinds[a]
        if pi >= len(params):
            raise TilelabError(f"the PTX of {kernel} has fewer parameters than the arguments: {a} has none")
        if kind == "descriptor":
            d = _descriptor(a, args[a])
            entries.append({"param": pi, "tensor_map": _tensor_map(d, metas[di]), "from": f"{a} (TensorDescriptor)"})
            di += 1
            pi += 1
            for j, s in enumerate(d[1]):
                entries.append({"param": pi, "value": str(s), "from": f"{a}.shape[{j}]"})
                pi += 1
            for j, s in enumerate(d[2]):
                entries.append({"param": pi, "value": str(s), "from": f"{a}.strides[{j}]"})
                pi += 1
            continue
        if kind == "pointer":
            entries.append({"param": pi, "from": f"{a} ({sig[a]})"})
        else:
            v = args[a]
            entries.append({"param": pi, "value": repr(float(v)) if isinstance(v, float) else str(int(v)),
                            "from": a})
        pi += 1
    while pi < len(params):
        entries.append({"param": pi, "from": "Triton scratch pointer (global_scratch / profile_scratch)"})
        pi += 1
    g = list(grid) + [1] * (3 - len(grid))
    c = list(cta) + [0] * (3 - len(cta))
    return {"format": "tilelab-launch", "version": 1, "ptx": ptx_name, "kernel": kernel, "grid": g,
            "block": [32 * k.metadata.num_warps, 1, 1], "cta": c, "dynamic_smem": int(k.metadata.shared),
            "note": f"written by tilelab.triton.analyze (Triton {__import__('triton').__version__})",
            "args": entries}


def compile(fn, args=None, *, num_warps=4, num_stages=3, target="sm_90", **constexprs):  # noqa: A001
    """Steps 1 and 2 of :func:`analyze` alone: ``fn`` specialised for ``args`` and compiled on the
    CPU; Triton's ``CompiledKernel`` (``.asm["ptx"]``, ``.metadata``)."""
    if target not in _TARGETS:
        raise TilelabError(f"target {target!r} is not allowed; allowed: {', '.join(_TARGETS)}")
    return _compile(fn, dict(args or {}), constexprs, num_warps, num_stages, _TARGETS[target])[0]


def analyze(fn, grid=(1, 1, 1), args=None, *, num_warps=4, num_stages=3, target="sm_90", cta=(0, 0, 0),
            ctas=None, jobs=None, out_dir=None, **constexprs):
    """Compile ``fn`` (a ``@triton.jit`` function) for ``target`` on the CPU as the JIT would for
    ``args`` (Python parameter name -> value, see the module docs), run CTA ``cta`` of ``grid``
    on the simulator and return its :class:`tilelab.Report`. ``constexprs``: the
    ``tl.constexpr`` parameters (``BLOCK_M=128``). ``out_dir``: keep the PTX and launch file
    there (default: a temporary folder, removed after the run).

    ``ctas`` (``"all"``, ``"0..64"``, ``"3"``, ``(1, 2)``) simulates those CTAs instead of one
    (``tilelab ptx --ctas``, on ``jobs`` threads, default: every CPU): the report's totals and
    lines are their sums (the launch's with ``"all"``), ``spread`` gives each counter's min,
    median and max over the CTAs, ``busiest_cta`` the CTA with the most warp instructions.

    ``fn`` may also be a compiled kernel (``triton.compile``'s result, or what ``kernel[grid](...)``
    returns); ``args`` then names the values of its signature's non-constexpr parameters.

    Raises :class:`tilelab.TilelabError` with a one-line message on any failure.
    """
    args = dict(args or {})
    extra = []
    if ctas is not None:
        if isinstance(ctas, (tuple, list)):
            ctas = ",".join(str(int(x)) for x in ctas)
        extra += ["--ctas", str(ctas)]
        if jobs is not None:
            extra += ["--jobs", str(jobs)]
    elif jobs is not None:
        raise TilelabError("jobs is allowed only with ctas (the CTAs to simulate, e.g. ctas='all')")
    if target not in _TARGETS:
        raise TilelabError(f"target {target!r} is not allowed; allowed: {', '.join(_TARGETS)}")
    if not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3 or not all(isinstance(x, int) and x >= 1 for x in grid):
        raise TilelabError(f"grid {grid!r} is not allowed; allowed: 1 to 3 positive integers, e.g. (4, 4)")
    if hasattr(fn, "asm") and hasattr(fn, "metadata"):
        k = fn
        src = getattr(k, "src", None)
        sig = dict(getattr(src, "signature", {}) or {})
        if not sig:
            raise TilelabError("this compiled kernel carries no signature (its .src): pass the @triton.jit function instead")
        names = list(sig)
        kinds = {}
        for a, t in sig.items():
            if t == "constexpr":
                continue
            if a not in args:
                raise TilelabError(f"argument {a} of {k.metadata.name} is missing: give args={{'{a}': ...}}")
            kinds[a] = "descriptor" if str(t).startswith("tensordesc") else ("pointer" if str(t).startswith("*") else "scalar")
    else:
        k, names, sig, kinds = _compile(fn, args, constexprs, num_warps, num_stages, _TARGETS[target])
    tmp = None
    if out_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="tilelab-triton-")
        out_dir = tmp.name
    os.makedirs(out_dir, exist_ok=True)
    base = k.metadata.name
    ptx_path = os.path.join(out_dir, base + ".ptx")
    with open(ptx_path, "w") as f:
        f.write(k.asm["ptx"])
    doc = _launch_doc(k, names, sig, kinds, args, grid, cta, base + ".ptx")
    launch = os.path.join(out_dir, base + ".launch.json")
    with open(launch, "w") as f:
        json.dump(doc, f, indent=1)
    try:
        code = getattr(getattr(fn, "fn", None), "__code__", None)
        hints = {os.path.basename(code.co_filename): code.co_filename} if code else None
        rep = run_launch(launch, *extra, file_hints=hints)
    except BaseException:
        if tmp is not None:
            tmp.cleanup()
        raise
    rep.ptx_file, rep._tmpdir = ptx_path, tmp  # the folder lives as long as the report
    return rep
