#!/usr/bin/env bash
# The Hopper measurements of tilelab issue 13 in one call on an H200 (see docs/log/2026-11-30-verify.md):
# build scripts/research/hopper/probe_main.cu for sm_90a, dump its SASS, then
#   TMA placement (every swizzle mode, element size, inner box size), wgmma results (cases built
#   by `tilelab sim wgmma`), stmatrix dumps + ncu counters, cp.async counters.
# Expects next to it: probe_main.cu, hopper_probe.cu, wgmma_probe.cu, wgmma_cases.txt,
# select_metrics.py. Writes $OUT/log.txt and $OUT/hopper.tar.gz.
set -u
cd "$(dirname "$0")"
R=$OUT/r; mkdir -p "$R"
exec > >(tee "$OUT/log.txt") 2>&1
SAFE=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_shared_ld.sum
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2; ncu --version | tail -1
time nvcc -std=c++17 -O2 -diag-suppress 550 -gencode=arch=compute_90a,code=sm_90a -I . probe_main.cu -o hopper_probe || exit 1
cuobjdump -sass hopper_probe > "$R/sass.txt"
grep -oE "(HGMMA|STSM|LDGSTS|UTMALDG|LDSM)[A-Z0-9._x]*" "$R/sass.txt" | sort | uniq -c
echo "== tma"; time timeout 60 ./hopper_probe tma "$R/tma.jsonl"; echo "rc $?"
echo "== wgmma"; time timeout 60 ./hopper_probe wgmma wgmma_cases.txt "$R/wgmma.jsonl"; echo "rc $?"
timeout 30 ncu --query-metrics > "$R/metrics_all.txt" 2>&1; echo "query rc $? $(wc -l < "$R/metrics_all.txt") lines"
M_ST=$(python3 select_metrics.py "$R/metrics_all.txt" stsm "$SAFE"); M_CP=$(python3 select_metrics.py "$R/metrics_all.txt" ldgsts "$SAFE,sm__sass_inst_executed_op_ldgsts.sum")
echo "stsm metrics: $M_ST"; echo "ldgsts metrics: $M_CP"
prof() {  # kernel regex, metrics, out csv, args...
  local k=$1 m=$2 o=$3; shift 3
  timeout 120 ncu --clock-control none --csv --metrics "$m" -k "regex:$k" ./hopper_probe "$@" > "$o" 2> "$o.err"
  local rc=$?; echo "ncu $k rc $rc rows $(grep -c '^\"' "$o")"; return $rc
}
echo "== stsm"; time { prof stsm_count "$M_ST" "$R/stsm_ncu.csv" stsm "$R/stsm.jsonl" 8 300 || prof stsm_count "$SAFE" "$R/stsm_ncu.csv" stsm "$R/stsm.jsonl" 8 300; }
echo "== cpasync"; time { prof cpasync_count "$M_CP" "$R/cpasync_ncu.csv" cpasync "$R/cpasync.jsonl" || prof cpasync_count "$SAFE,sm__sass_inst_executed_op_ldgsts.sum" "$R/cpasync_ncu.csv" cpasync "$R/cpasync.jsonl"; }
echo "== tma misaligned"; timeout 30 ./hopper_probe tma "$R/tma_misaligned.jsonl" misaligned; echo "rc $?"
head -c 600 "$R/stsm_ncu.csv.err"; head -c 600 "$R/cpasync_ncu.csv.err"
gzip -f "$R/sass.txt" "$R/metrics_all.txt"
tar czf "$OUT/hopper.tar.gz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"; date -u
