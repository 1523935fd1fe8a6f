#!/bin/bash
# All PTX of tests/data/ptx_hopper/ and tests/data/hopper_probes/, on a machine without a GPU,
# from the repository root:
#   TRITON_PY=/path/venv/bin/python NVCC=/path/to/nvcc CUTLASS=/path/to/cutlass \
#     bash scripts/research/hopper_fixtures/make_ptx.sh
# TRITON_PY: a Python with triton==3.6.0 (pip); NVCC: nvcc 13.0.88 (pip nvidia-cuda-nvcc==13.0.88
# with nvidia-nvvm, nvidia-cuda-crt 13.0.88 and nvidia-cuda-cccl 13.0.85: the H200 machine's CUDA
# 13.0 driver JITs PTX up to ISA 9.0, which nvcc 13.5's .version 9.5 exceeds); CUTLASS: a checkout of
# NVIDIA/cutlass (the commit is written to tests/data/ptx_hopper/ptx_manifest.json); CUTE_PTX_DIR
# (optional): take cute_*.ptx already compiled by the same command from there.
set -eu
F=tests/data/ptx_hopper
P=tests/data/hopper_probes
D=scripts/research/hopper_fixtures
mkdir -p $F $P
"$TRITON_PY" $D/triton_hopper.py $F
python3 $D/gen_handwritten.py $F
python3 $D/gen_cluster.py $F
python3 $D/gen_probes.py $P
NVD=$(dirname "$NVCC")
CCCL=$(cd "$NVD/../include/cccl" 2>/dev/null && pwd || true)
NVCC="$NVCC" bash $D/make_fa3_ptx.sh
for t in sgemm_sm80 hopper/wgmma_sm90 hopper/wgmma_tma_sm90; do
  n=$(basename $t)
  [ -n "${CUTE_PTX_DIR:-}" ] && { cp "$CUTE_PTX_DIR/cute_$n.ptx" $F/cute_$n.ptx; continue; }
  (cd "$CUTLASS" && "$NVCC" -arch=sm_90a -std=c++17 -I include -I tools/util/include ${CCCL:+-I $CCCL} \
     --expt-relaxed-constexpr -ptx -o /tmp/cute_$n.ptx examples/cute/tutorial/$t.cu)
  cp /tmp/cute_$n.ptx $F/cute_$n.ptx
done
python3 $D/manifest.py "$CUTLASS" "$NVCC" > $F/ptx_manifest.json
ls -la $F $P
