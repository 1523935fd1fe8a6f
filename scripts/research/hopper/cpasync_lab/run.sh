#!/usr/bin/env bash
# cp.async.ca spread-source probe (tilelab issue 13). One call on the H200, from a folder holding
# this script, cpasync_lab.cu and the requests_{a,b,c,d,e}.txt + requests.json that gen.py writes
# (python3 gen.py tests/data/h200_cpasync_verify_2026-11-30.json
#  tests/data/h200_cpasync_verify_seed7_2026-11-30.json):
#   bash run.sh                 (parts a b c: the first run, 2026-12-01 08:15 UTC)
#   PARTS="b d" bash run.sh     (the second run, 08:48 UTC: re-measured records, then part d)
#   PARTS=e TMO=380 bash run.sh (the third run: issue 13's targeted probe and seed 29, held out)
# Builds cpasync_lab.cu with nvcc (sm_90), checks its SASS, then measures requests_<part>.txt
# (one LDGSTS per launch, cold = caches flushed by ncu, warm = sources loaded into L1 by the same
# warp first) under ncu --clock-control none --cache-control all. Writes $OUT/log.txt and
# $OUT/cpasync_lab.tar.gz (CSV per part, the launch order, SASS excerpt). No Rust needed.
set -u
cd "$(dirname "$0")"
R=$OUT/r; mkdir -p "$R"
exec > >(tee "$OUT/log.txt") 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2; ncu --version | tail -1
time nvcc -std=c++17 -O2 -arch=sm_90 cpasync_lab.cu -o lab || exit 1
cuobjdump -sass lab > "$R/sass.txt"; grep -E "Function|LDGSTS|LDG\.|LDGDEPBAR|DEPBAR" "$R/sass.txt" | head -40
PARTS=${PARTS:-a b c}; P0=${PARTS%% *}
./lab requests_$P0.txt 2> "$R/dry_$P0.txt"; echo "dry run rc $? $(tail -1 "$R/dry_$P0.txt")"
M=l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum,sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum,sm__sass_inst_executed_op_ldgsts.sum,sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum,sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts.sum
M7=l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum,sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,sm__sass_inst_executed_op_ldgsts.sum
prof() {  # part, metrics
  local p=$1 m=$2 o=$R/ncu_$1.csv
  echo "ncu part $p: ncu --clock-control none --cache-control all --csv --metrics $m -k regex:cpasync_lab ./lab requests_$p.txt"
  timeout ${TMO:-170} ncu --clock-control none --cache-control all --csv --metrics "$m" -k regex:cpasync_lab ./lab "requests_$p.txt" > "$o" 2> "$R/ncu_$p.err"
  local rc=$?; echo "part $p rc $rc rows $(grep -c '^\"' "$o") launches $(wc -l < requests_$p.txt)"; return $rc
}
for p in $PARTS; do
  time { prof $p "$M" || prof $p "$M7"; }
done
for p in $PARTS; do tail -c 400 "$R/ncu_$p.err"; done
cp requests_*.txt requests.json gen.py cpasync_lab.cu "$R/"
gzip -f "$R/sass.txt"
tar czf "$OUT/cpasync_lab.tar.gz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"; date -u
