#!/usr/bin/env python3
"""The FA2 lesson kernel (kernels/fa2_fwd.cu) against PyTorch on this GPU, in one run.

Usage (on the GPU machine, from the repository root): build the variants, then run
    for d in 64 128; do for bm in 64 128; do for c in 0 1; do
      nvcc -O3 -arch=sm_90 --use_fast_math -cubin -DFA_D=$d -DFA_BM=$bm -DFA_CAUSAL=$c \
           -o DIR/fa2_d${d}_bm${bm}_c${c}.cubin kernels/fa2_fwd.cu; done; done; done
    python3 scripts/bench_fa2.py DIR

The cubins are launched through the CUDA driver API (ctypes) on PyTorch's tensors and stream.
For B = 2, H = 16, S = 1024 and 4096, D = 64 and 128, causal and not, it prints a Markdown table:
median time of the lesson kernel, of SDPA's flash backend and of its default backend (CUDA events,
10 warm-up and 50 timed runs over 4 rotating input sets), TFLOP/s (4·B·H·S²·D, halved when
causal), the ratio to the flash backend, and the relative error ‖out − ref‖/‖ref‖ against SDPA in
float32.
"""
import ctypes
import math
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

cuda = ctypes.CDLL("libcuda.so.1")


def check(r, what):
    if r != 0:
        raise RuntimeError(f"{what} failed with CUDA error {r}")


class Kernel:
    def __init__(self, cubin_path, d, bm):
        self.d, self.bm = d, bm
        data = open(cubin_path, "rb").read()
        self.mod = ctypes.c_void_p()
        check(cuda.cuModuleLoadData(ctypes.byref(self.mod), ctypes.c_char_p(data)), "cuModuleLoadData")
        self.fn = ctypes.c_void_p()
        check(cuda.cuModuleGetFunction(ctypes.byref(self.fn), self.mod, b"fa2_fwd"), "cuModuleGetFunction")
        self.smem = (bm + 4 * 64) * d * 2
        # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
        check(cuda.cuFuncSetAttribute(self.fn, 8, self.smem), "cuFuncSetAttribute")
        regs = ctypes.c_int()
        check(cuda.cuFuncGetAttribute(ctypes.byref(regs), 4, self.fn), "cuFuncGetAttribute")  # NUM_REGS
        self.regs = regs.value

    def __call__(self, q, k, v):
        b, h, s, d = q.shape
        assert d == self.d and s % self.bm == 0 and q.is_contiguous()
        o = torch.empty_like(q)
        ptrs = [ctypes.c_void_p(t.data_ptr()) for t in (q, k, v, o)]
        seq, scale = ctypes.c_int(s), ctypes.c_float(1.0 / math.sqrt(d))
        vals = (*ptrs, seq, scale)
        args = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(x), ctypes.c_void_p) for x in vals])
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        check(cuda.cuLaunchKernel(self.fn, s // self.bm, b * h, 1, 128, 1, 1, self.smem, stream, args, None), "cuLaunchKernel")
        return o


def time_ms(fn, reps=50, warmup=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def main():
    torch.manual_seed(0)
    torch.zeros(1, device="cuda")  # create PyTorch's context first
    d_ = sys.argv[1]
    kernels = {(d, bm, c): Kernel(f"{d_}/fa2_d{d}_bm{bm}_c{c}.cubin", d, bm)
               for d in (64, 128) for bm in (64, 128) for c in (0, 1)}
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}; registers per thread: "
          + ", ".join(f"D{d}/bm{bm}/causal{c}: {k.regs}" for (d, bm, c), k in kernels.items()))
    print("| S | D | causal | bm 64 ms | bm 128 ms | best TFLOP/s | flash ms | default ms | best / flash | rel. error (bm 64, bm 128) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    B, H = 2, 16
    for S in (1024, 4096):
        for D in (64, 128):
            for causal in (False, True):
                sets = [tuple(torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3)) for _ in range(4)]
                q, k, v = sets[0]
                ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
                i = [0]

                def nxt():
                    i[0] += 1
                    return sets[i[0] % 4]

                times, errs = [], []
                for bm in (64, 128):
                    kern = kernels[(D, bm, int(causal))]
                    out = kern(q, k, v)
                    torch.cuda.synchronize()
                    errs.append(((out.float() - ref).norm() / ref.norm()).item())
                    times.append(time_ms(lambda: kern(*nxt())))
                with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                    flash = time_ms(lambda: F.scaled_dot_product_attention(*nxt(), is_causal=causal))
                default = time_ms(lambda: F.scaled_dot_product_attention(*nxt(), is_causal=causal))
                flops = 4 * B * H * S * S * D / (2 if causal else 1)
                best = min(times)
                print(f"| {S} | {D} | {causal} | {times[0]:.4f} | {times[1]:.4f} | {flops / best / 1e9:.1f} | {flash:.4f} | {default:.4f} | {best / flash:.2f} | {errs[0]:.2e}, {errs[1]:.2e} |")
                del sets, ref


if __name__ == "__main__":
    main()
