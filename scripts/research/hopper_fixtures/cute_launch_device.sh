#!/bin/bash
# On the H200 machine (one `run` call), from a staging folder holding: tilelab (the binary),
# ptx_hopper/{cute_*.ptx,launch/cute_*.json}, param_dump.c, cutlass.tgz (include,
# tools/util/include, examples/cute/tutorial of CUTLASS 7107b055):
#   1. `tilelab verify --launch` on the three CuTe tutorial launch files ($OUT/verify_NAME.json);
#   2. meanwhile the three tutorials built with -cudart shared and run once under the
#      param_dump.c shim: the first gemm_device launch's configuration, parameter bytes and
#      cuTensorMapEncodeTiled arguments ($OUT/dump.txt, lines PARAMDUMP / TMAPDUMP).
# Everything else goes to $OUT/log.txt.
set -u
S=$(pwd); W=$S/w; mkdir -p "$W"
export PATH=/usr/local/cuda/bin:$PATH
exec >> "$OUT/log.txt" 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2 | head -1
tar xzf cutlass.tgz -C "$W"
for t in sgemm_sm80 hopper/wgmma_sm90 hopper/wgmma_tma_sm90; do
  n=$(basename $t)
  (cd "$W" && nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -I include -I tools/util/include \
     --expt-relaxed-constexpr -cudart shared -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL \
     -o "$W/$n" examples/cute/tutorial/$t.cu -lcuda > "$W/build_$n.log" 2>&1; echo "build $n rc=$?" >> "$W/build_$n.log") &
done
gcc -shared -fPIC -O1 -I/usr/local/cuda/include param_dump.c -o "$W/pd.so" -ldl && echo "shim built"
for n in cute_sgemm_sm80 cute_wgmma_sm90 cute_wgmma_tma_sm90; do
  echo "== verify $n"
  timeout 100 ./tilelab verify --launch ptx_hopper/launch/$n.json --json-out "$OUT/verify_$n.json"
  echo "verify $n exit $?"
done
wait
date -u
for a in "sgemm_sm80 256 128 256 T N" "wgmma_sm90 256 128 256" "wgmma_tma_sm90 256 128 256"; do
  set -- $a; n=$1; shift
  tail -3 "$W/build_$n.log"
  echo "== $n $*" >> "$OUT/dump.txt"
  [ -x "$W/$n" ] && LD_PRELOAD="$W/pd.so" timeout 30 "$W/$n" "$@" 2>> "$OUT/dump.txt" | tail -2
  echo "run $n rc=$?"
done
date -u
