#!/bin/bash
# The PTX of kernels/fa3_fwd.cu in tests/data/ptx_hopper/, on a machine without a GPU, from the
# repository root:  NVCC=/path/to/nvcc bash scripts/research/hopper_fixtures/make_fa3_ptx.sh
# NVCC: nvcc 13.0.88 (pip nvidia-cuda-nvcc==13.0.88, see make_ptx.sh; here
# /work/venv-c27-nvcc130/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc).
# The default key block (FA_BN 128): D 64 and 128, full and causal, fa3_d{D}_{full,causal}_f16.ptx
# (measured on the H200: fa3_*_s128.json, fa3_*_s512.json). The other width the kernel builds with,
# FA_BN 64 (not causal: the kernel's #error refuses FA_CAUSAL with FA_BN != 128):
# fa3_d{D}_full_f16_bn64.ptx, checked by tests/ptx_hopper.rs against sim counts --bn 64.
set -eu
F=tests/data/ptx_hopper
mkdir -p $F
for d in 64 128; do
  for c in 0 1; do
    n=fa3_d${d}_$([ $c = 1 ] && echo causal || echo full)_f16
    "$NVCC" -gencode=arch=compute_90a,code=sm_90a -ptx -use_fast_math -DFA_D=$d -DFA_CAUSAL=$c -DFA_BF16=0 \
      -o $F/$n.ptx kernels/fa3_fwd.cu
  done
  "$NVCC" -gencode=arch=compute_90a,code=sm_90a -ptx -use_fast_math -DFA_D=$d -DFA_CAUSAL=0 -DFA_BF16=0 \
    -DFA_BN=64 -o $F/fa3_d${d}_full_f16_bn64.ptx kernels/fa3_fwd.cu
done
