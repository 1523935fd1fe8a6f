#!/bin/bash
# The Triton tl.dot kernels (triton_dots.py's output in gen_triton/) on the H200: ncu counters of
# one CTA each and the SASS of the driver's CUBINs. From the staging folder:
#   cd scratch/mma && bash scripts/research/mma_fixtures/run_triton.sh     ($OUT/hw_triton.tgz)
set -u
W=/tmp/mmatt
OUT=${OUT:-/tmp/mmatt_out}
rm -rf "$W"; mkdir -p "$W/cubin" "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
trap '(cd "$W" && tar czf "$OUT/hw_triton.tgz" .); ls -la "$OUT"' EXIT
{
date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cp gen_triton/*.ptx "$W/"
python3 -c "import json; d=json.load(open('gen_triton/launches.json')); [l.update(ptx='$W/'+l['ptx']) for l in d]; json.dump(d, open('$W/launches_h.json','w'))"
M=$(cat gen/metrics.txt),$(cat gen/extra_metrics.txt)
timeout 120 ncu --clock-control none --csv --print-units base --metrics "$M" \
  python3 scripts/research/hopper_fixtures/harness_hopper.py "$W/launches_h.json" --cubin-dir "$W/cubin" > "$W/ncu.csv" 2> "$W/ncu.err"
echo "ncu rc=$? rows=$(grep -c '^"' "$W/ncu.csv")"; tail -2 "$W/ncu.err"
for c in "$W"/cubin/*.cubin; do cuobjdump -sass "$c" > "${c%.cubin}.sass" 2>&1; done; ls "$W/cubin"
} 2>&1 | tee "$W/log.txt"
