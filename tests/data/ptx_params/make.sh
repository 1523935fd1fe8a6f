#!/bin/sh
# Regenerates struct_params.ptx from struct_params.cu with nvcc (CUDA 13.0; the pip package
# nvidia-cuda-nvcc runs on a CPU). tensor_maps.ptx is hand-written.
#   NVCC=/path/to/nvcc sh tests/data/ptx_params/make.sh
set -eu
cd "$(dirname "$0")"
"${NVCC:-nvcc}" -arch=sm_90a -ptx -O3 struct_params.cu -o struct_params.ptx
