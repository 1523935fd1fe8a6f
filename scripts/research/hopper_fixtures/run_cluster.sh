#!/bin/bash
# The cluster fixture (gen_cluster.py) on the H200 machine, one call of the device tool, from a
# staging folder holding scripts/, tests/data/ptx_hopper/, cl.json (its launch, nvcc_launches.py's
# hand_cluster_mc_wgmma entry, paths relative to the folder), COMMIT and optionally the tilelab
# binary (./tilelab):
#   cd scratch/cl && bash scripts/research/hopper_fixtures/run_cluster.sh
# Steps (STEP=hw: 1-3, STEP=verify: 4, default both): 1. correctness against float64 torch
# (check_correct.py); 2. ncu, one launch (grid = one cluster of 2, cuLaunchKernelEx with
# CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION), the metric list of hand_tma_wgmma_pipe.json (metrics.py's
# fixture set as validated on 2026-12-01); 3. cuobjdump -sass of the CUBIN launched; 4. tilelab
# verify --ptx --cluster 2,1,1. Writes $OUT/log.txt and $OUT/hw.tgz.
set -u
S=$(pwd); D=$S/scripts/research/hopper_fixtures; W=/tmp/hwcl; OUT=${OUT:-/tmp/hwcl_out}; STEP=${STEP:-all}
rm -rf "$W"; mkdir -p "$W/cubin" "$W/sass" "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
pack() { (cd "$W" && tar czf "$OUT/hw.tgz" .); }
trap pack EXIT
{
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv
if [ "$STEP" != verify ]; then
  timeout 60 python3 "$D/check_correct.py" cl.json "$W/correct_hand_cluster_mc_wgmma.json" hand_cluster_mc_wgmma 2>&1 | grep -v Warning | tail -3
  python3 -c "import json; f=json.load(open('tests/data/ptx_hopper/hand_tma_wgmma_pipe.json')); print(','.join(sorted(list(f['counters'])+list(f['sass_counters']))))" > "$W/metrics.txt"
  echo "metrics: $(tr ',' '\n' < "$W/metrics.txt" | wc -l)"
  cp cl.json "$W/fix_ok.json"
  timeout 240 ncu --clock-control none --csv --print-units base --metrics "$(cat "$W/metrics.txt")" \
    python3 "$D/harness_hopper.py" cl.json --cubin-dir "$W/cubin" > "$W/ncu_fix.csv" 2> "$W/ncu_fix.err"
  echo "ncu rc=$? rows=$(grep -c '^"' "$W/ncu_fix.csv")"; grep -v '^"' "$W/ncu_fix.csv" | tail -4; tail -3 "$W/ncu_fix.err"
  for c in "$W"/cubin/*.cubin; do cuobjdump -sass "$c" > "$W/sass/$(basename "$c" .cubin).sass" 2>&1; done
  grep -oE "(UTMALDG|HGMMA|SYNCS|UCGABAR|STAS|ST\.E|STS|LDS|MEMBAR|FENCE)[A-Z0-9_.]*" "$W"/sass/*.sass | sort | uniq -c
  python3 "$D/provenance.py" "$W/prov.json" "scripts/research/hopper_fixtures/run_cluster.sh (harness_hopper.py, check_correct.py)"
fi
if [ "$STEP" != hw ] && [ -x ./tilelab ]; then
  A=$(python3 -c "import json; l=json.load(open('cl.json'))[0]; print(l['cli'])")
  timeout 120 ./tilelab verify --ptx tests/data/ptx_hopper/hand_cluster_mc_wgmma.ptx --grid 2,1,1 --block 128 \
    --dynamic-smem 17408 $A > "$W/verify.txt" 2>&1
  echo "verify rc=$?"; cat "$W/verify.txt" | head -60
  timeout 120 ./tilelab verify --ptx tests/data/ptx_hopper/hand_cluster_mc_wgmma.ptx --grid 2,1,1 --block 128 \
    --dynamic-smem 17408 $A --json > "$W/verify.json" 2> "$W/verify_json.err"; echo "verify --json rc=$?"
fi
date -u
} 2>&1 | tee "$OUT/log.txt"
cp "$OUT/log.txt" "$W/"
