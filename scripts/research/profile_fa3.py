#!/usr/bin/env python3
"""One launch each of the Hopper FA kernel (kernels/fa3_fwd.cu cubin) and of SDPA's cuDNN backend at
B = 2, H = 16, S = 4096 (default), D = 128 (default), fp16, for Nsight Compute:

    ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis \
        --section WarpStateStats --section MemoryWorkloadAnalysis \
        -k regex:'fa3_fwd|cudnn|fmha|sdpa|attn' python3 scripts/research/profile_fa3.py CUBIN [S D CAUSAL]

Both run once untimed first (module load, cuDNN plan), then once more; profile the second launch
(ncu --launch-skip 1 per kernel name, or read the last rows).
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_fa3 import Fa3Kernel  # noqa: E402


def main():
    cubin = sys.argv[1]
    s = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    d = int(sys.argv[3]) if len(sys.argv) > 3 else 128
    causal = bool(int(sys.argv[4])) if len(sys.argv) > 4 else False
    q, k, v = (torch.randn(2, 16, s, d, device="cuda", dtype=torch.float16) for _ in range(3))
    kern = Fa3Kernel(cubin, d)
    for _ in range(2):
        kern(q, k, v)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
