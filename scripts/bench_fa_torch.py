#!/usr/bin/env python3
"""Baseline for the FlashAttention-2 lesson kernel: PyTorch's scaled_dot_product_attention on
this GPU, flash backend and default backend, at the shapes of the FA2 performance issue
(B = 2, H = 16, S = 1024 and 4096, D = 64 and 128, causal and not), fp16 in.

Prints a Markdown table: median time (CUDA events, warm-up, 50 timed runs over 4 rotating input
sets), TFLOP/s (4·B·H·S²·D, halved when causal) and the relative error against a float32
reference. Run it on the GPU machine: `python3 scripts/bench_fa_torch.py`.
"""
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


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
    dev = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    print("| S | D | causal | backend | median ms | TFLOP/s | rel. error vs fp32 |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    B, H = 2, 16
    for S in (1024, 4096):
        for D in (64, 128):
            for causal in (False, True):
                sets = [tuple(torch.randn(B, H, S, D, device=dev, dtype=torch.float16) for _ in range(3)) for _ in range(4)]
                q, k, v = sets[0]
                ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
                flops = 4 * B * H * S * S * D / (2 if causal else 1)
                for name, backends in (("flash", [SDPBackend.FLASH_ATTENTION]), ("default", None)):
                    i = [0]

                    def run():
                        qq, kk, vv = sets[i[0] % 4]
                        i[0] += 1
                        return F.scaled_dot_product_attention(qq, kk, vv, is_causal=causal)

                    if backends:
                        with sdpa_kernel(backends):
                            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                            ms = time_ms(run)
                    else:
                        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        ms = time_ms(run)
                    err = ((out.float() - ref).norm() / ref.norm()).item()
                    print(f"| {S} | {D} | {causal} | {name} | {ms:.4f} | {flops / ms / 1e9:.1f} | {err:.2e} |")
                del sets, ref


if __name__ == "__main__":
    main()
