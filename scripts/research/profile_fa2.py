#!/usr/bin/env python3
"""One launch each of the FA2 lesson kernel and of SDPA's flash backend at B = 2, H = 16,
S = 4096, D = 128, causal, for Nsight Compute:

    ncu --section SpeedOfLight --section Occupancy --section WarpStateStats \
        -k regex:'fa2_fwd|flash' python3 scripts/research/profile_fa2.py DIR/fa2_d128_bm64_c1.cubin
"""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, "scripts")
from bench_fa2 import Kernel  # noqa: E402


def main():
    torch.zeros(1, device="cuda")
    kern = Kernel(sys.argv[1], 128, 64)
    q, k, v = (torch.randn(2, 16, 4096, 128, device="cuda", dtype=torch.float16) for _ in range(3))
    kern(q, k, v)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
