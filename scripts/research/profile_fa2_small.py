#!/usr/bin/env python3
"""One launch each of the FA2 lesson kernel (bm 64 and bm 128 cubins from DIR, built as in
scripts/bench_fa2.py) and of SDPA's flash backend at B = 2, H = 16, S = 1024, D = 128, fp16, causal
and not, for Nsight Compute (why the lesson kernel trails flash at S = 1024):

    ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy \
        --section WarpStateStats -k regex:'fa2_fwd|flash|fmha' python3 scripts/research/profile_fa2_small.py DIR
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_fa2 import Kernel  # noqa: E402


def main():
    d_ = sys.argv[1]
    q, k, v = (torch.randn(2, 16, 1024, 128, device="cuda", dtype=torch.float16) for _ in range(3))
    for c in (0, 1):
        for bm in (64, 128):
            Kernel(f"{d_}/fa2_d128_bm{bm}_c{c}.cubin", 128, bm)(q, k, v)
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            F.scaled_dot_product_attention(q, k, v, is_causal=bool(c))
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
