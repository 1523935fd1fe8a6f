#!/usr/bin/env python3
"""The Hopper FlashAttention kernel (kernels/fa3_fwd.cu) against the FA2 lesson kernel and PyTorch's
SDPA backends (flash, cuDNN, default), in one run on the GPU machine.

Build (from the repository root, on the GPU machine), then run:
    for d in 64 128; do for c in 0 1; do for t in 0 1; do
      nvcc -O3 -arch=sm_90a --use_fast_math -cubin -DFA_D=$d -DFA_CAUSAL=$c -DFA_BF16=$t \
           -o DIR/fa3_d${d}_c${c}_t${t}.cubin kernels/fa3_fwd.cu; done; done; done
    (and the FA2 lesson kernel's cubins as in scripts/bench_fa2.py)
    python3 scripts/bench_fa3.py DIR [--quick] [--seqs 1024,4096,16384] [--dtypes fp16,bf16]

Tensor maps (cuTensorMapEncodeTiled through ctypes): [B*H*S rows, D columns] of 2-byte elements,
box {64, 128} for Q/K/V and {64, 64} for O, 128-byte swizzle; the kernel is persistent: one CTA per
SM (at most one per tile). Every variant is first checked
against SDPA in float32 (relative error ‖out − ref‖/‖ref‖; a variant above 1e-2 is reported as
WRONG and not timed). Times: the contenders of a row are timed in turns (12 rounds; in each, 8 calls
captured in a CUDA graph, replayed between two CUDA events; 4 rotating input sets), median of the 12
per-call means, after 150 8192² fp16 matmuls that bring the clocks up; TFLOP/s = 4·B·H·S²·D (halved when causal) / time.
"""
import ctypes
import math
import os
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_fa2 import Kernel as Fa2Kernel, check, cuda  # noqa: E402

BM, BN = 128, 128


class TensorMap(ctypes.Structure):
    _fields_ = [("w", ctypes.c_uint64 * 16)]


_maps = {}


def tensor_map(t, box_rows, bf16):
    """A CUtensorMap over t viewed as [rows, D] (2-byte elements), box {64, box_rows}, 128B swizzle
    (cached per tensor address and shape)."""
    key = (t.data_ptr(), tuple(t.shape), box_rows, bf16)
    if key in _maps:
        return _maps[key]
    rows, d = t.numel() // t.shape[-1], t.shape[-1]
    m = TensorMap()
    dims = (ctypes.c_uint64 * 2)(d, rows)
    strides = (ctypes.c_uint64 * 1)(d * 2)
    box = (ctypes.c_uint32 * 2)(64, box_rows)
    estr = (ctypes.c_uint32 * 2)(1, 1)
    # CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6, BFLOAT16 = 9; interleave none; SWIZZLE_128B = 3;
    # L2 promotion 128B = 2; OOB fill none.
    check(cuda.cuTensorMapEncodeTiled(ctypes.byref(m), 9 if bf16 else 6, 2, ctypes.c_void_p(t.data_ptr()),
                                      dims, strides, box, estr, 0, 3, 2, 0), "cuTensorMapEncodeTiled")
    _maps[key] = m
    return m


class Fa3Kernel:
    def __init__(self, path, d):
        self.d = d
        data = open(path, "rb").read()
        self.mod = ctypes.c_void_p()
        check(cuda.cuModuleLoadData(ctypes.byref(self.mod), ctypes.c_char_p(data)), "cuModuleLoadData")
        self.fn = ctypes.c_void_p()
        check(cuda.cuModuleGetFunction(ctypes.byref(self.fn), self.mod, b"fa3_fwd"), "cuModuleGetFunction")
        stages = int(os.environ.get("FA3_STAGES", "2"))  # the FA_STAGES the cubin was built with
        self.smem = 3 * BM * d * 2 + 2 * stages * BN * d * 2 + 1024  # 2 Q, O staging, K and V stages, alignment
        self.sms = torch.cuda.get_device_properties(0).multi_processor_count
        check(cuda.cuFuncSetAttribute(self.fn, 8, self.smem), "cuFuncSetAttribute")
        regs = ctypes.c_int()
        check(cuda.cuFuncGetAttribute(ctypes.byref(regs), 4, self.fn), "cuFuncGetAttribute")
        self.regs = regs.value
        # The tile scheduler's two words (next tile, CTAs done): zero now, zeroed again by the
        # kernel's last CTA, so one buffer serves every launch (and every graph replay).
        self.sched = torch.zeros(2, dtype=torch.int32, device="cuda")

    def __call__(self, q, k, v, o=None):
        b, h, s, d = q.shape
        assert d == self.d and s % BM == 0 and q.is_contiguous() and k.is_contiguous() and v.is_contiguous()
        o = torch.empty_like(q) if o is None else o
        bf16 = q.dtype == torch.bfloat16
        maps = [tensor_map(q, BM, bf16), tensor_map(k, BN, bf16), tensor_map(v, BN, bf16), tensor_map(o, 64, bf16)]
        seq, nbh, scale = ctypes.c_int(s), ctypes.c_int(b * h), ctypes.c_float(1.0 / math.sqrt(d))
        sched = ctypes.c_void_p(self.sched.data_ptr())
        vals = (*maps, seq, nbh, scale, sched)
        args = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(x), ctypes.c_void_p) for x in vals])
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        check(cuda.cuLaunchKernel(self.fn, min(s // BM * b * h, self.sms), 1, 1, 384, 1, 1, self.smem, stream, args, None), "cuLaunchKernel")
        return o


def time_interleaved(fns, rounds=12, reps=8):
    """Median ms per call of each function, timed in turns: 12 rounds, in each every contender runs
    `reps` calls between two CUDA events. The calls are captured once into a CUDA graph and replayed
    (so host work per call, PyTorch's dispatch or our ctypes launch, is not timed: at S = 1024 it is
    longer than the kernels); a contender that cannot be captured runs its calls back to back
    instead (marked with * in the table). Turns spread clock and power changes over every contender."""
    runs, eager = {}, set()
    for k, fn in fns.items():
        fn()
        torch.cuda.synchronize()
        try:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(reps):
                    fn()
            g.replay()
            torch.cuda.synchronize()
            runs[k] = g.replay
        except Exception:  # noqa: BLE001 - any capture failure falls back to eager calls
            torch.cuda.synchronize()
            eager.add(k)
            runs[k] = (lambda fn: lambda: [fn() for _ in range(reps)])(fn)
    ts = {k: [] for k in fns}
    for _ in range(rounds):
        for k, run in runs.items():
            run()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            run()
            b.record()
            b.synchronize()
            ts[k].append(a.elapsed_time(b) / reps)
    return {k: statistics.median(v) for k, v in ts.items()}, eager


def sdpa(backend, causal):
    def f(q, k, v):
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return f


def rel_err(out, ref):
    return ((out.float() - ref).norm() / ref.norm()).item()


def main():
    d_ = sys.argv[1]
    quick = "--quick" in sys.argv
    seqs = [1024, 4096, 16384]
    dtypes = (0, 1)  # 0 fp16, 1 bf16
    for i, a in enumerate(sys.argv):
        if a == "--seqs":
            seqs = [int(x) for x in sys.argv[i + 1].split(",")]
        if a == "--dtypes":
            dtypes = tuple({"fp16": 0, "bf16": 1}[x] for x in sys.argv[i + 1].split(","))
    torch.manual_seed(0)
    torch.zeros(1, device="cuda")
    fa3 = {}
    for d in (64, 128):
        for c in (0, 1):
            for t in (0, 1):
                path = f"{d_}/fa3_d{d}_c{c}_t{t}.cubin"
                if os.path.exists(path):
                    fa3[(d, c, t)] = Fa3Kernel(path, d)
    fa2 = {}
    for d in (64, 128):
        for c in (0, 1):
            for bm in (64, 128):
                path = f"{d_}/fa2_d{d}_bm{bm}_c{c}.cubin"
                if os.path.exists(path):
                    fa2[(d, c, bm)] = Fa2Kernel(path, d, bm)
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}; "
          "fa3 registers per thread: " + ", ".join(f"D{d}/causal{c}/{'bf16' if t else 'fp16'}: {k.regs}" for (d, c, t), k in fa3.items()))
    # Correctness on small shapes first (several query blocks, both heads' offsets).
    for (d, c, t), kern in fa3.items():
        dt = torch.bfloat16 if t else torch.float16
        for (b, h, s) in ((1, 2, 256), (2, 3, 512)):
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dt) for _ in range(3))
            ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=bool(c))
            out = kern(q, k, v)
            torch.cuda.synchronize()
            e = rel_err(out, ref)
            print(f"check fa3 D={d} causal={c} {dt} B={b} H={h} S={s}: rel. error {e:.2e} {'ok' if e < 1e-2 else 'WRONG'}")
    # Bring the clocks up before timing anything (the first timed backend otherwise pays for it).
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    for _ in range(150):
        x @ x
    torch.cuda.synchronize()
    del x
    print()
    print("| S | D | causal | dtype | fa3 ms | fa3 TFLOP/s | fa2 lesson ms (bm 64, bm 128) | flash ms | cudnn ms | default ms | fa3 / cudnn | fa3 / default | fa2 best / flash | rel. error fa3 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    B, H = 2, 16
    shapes = [(4096, d, c, 0) for d in (64, 128) for c in (0, 1)] if quick else \
        [(s, d, c, t) for s in seqs for d in (64, 128) for c in (0, 1) for t in dtypes]
    for (S, D, c, t) in shapes:
        dt = torch.bfloat16 if t else torch.float16
        causal = bool(c)
        sets = [tuple(torch.randn(B, H, S, D, device="cuda", dtype=dt) for _ in range(3)) for _ in range(4)]
        q, k, v = sets[0]
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
        i = [0]

        def nxt():
            i[0] += 1
            return sets[i[0] % 4]

        fns = {}
        kern = fa3.get((D, c, t))
        err = float("nan")
        if kern is not None:
            err = rel_err(kern(q, k, v), ref)
            if err < 1e-2:
                fns["fa3"] = lambda: kern(*nxt())
        for bm in (64, 128):
            if t == 0 and (D, c, bm) in fa2:
                fns[f"fa2_bm{bm}"] = (lambda k2: lambda: k2(*nxt()))(fa2[(D, c, bm)])
        for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            try:
                f = sdpa(be, causal)
                f(q, k, v)
                fns[name] = (lambda f: lambda: f(*nxt()))(f)
            except RuntimeError as ex:
                print(f"  ({name} unavailable: {str(ex).splitlines()[0]})")
        fns["default"] = lambda: F.scaled_dot_product_attention(*nxt(), is_causal=causal)
        row, eager = time_interleaved(fns)
        if eager:
            print(f"  (timed without a CUDA graph: {', '.join(sorted(eager))})")
        flops = 4 * B * H * S * S * D / (2 if causal else 1)
        g = lambda n: row.get(n, float("nan"))
        fa2best = min(g("fa2_bm64"), g("fa2_bm128"))
        print(f"| {S} | {D} | {causal} | {'bf16' if t else 'fp16'} | {g('fa3'):.4f} | {flops / g('fa3') / 1e9:.1f} | "
              f"{g('fa2_bm64'):.4f}, {g('fa2_bm128'):.4f} | {g('flash'):.4f} | {g('cudnn'):.4f} | {g('default'):.4f} | "
              f"{g('fa3') / g('cudnn'):.2f} | {g('fa3') / g('default'):.2f} | {fa2best / g('flash'):.2f} | {err:.2e} |")
        del sets, ref


if __name__ == "__main__":
    main()
