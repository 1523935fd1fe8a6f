#!/bin/bash
# On the H200 machine, from the repository root: each launch of scripts/research/sass_replay/launches.json
# once under ncu (one CTA each), through scripts/research/hopper_fixtures/harness_hopper.py (cuLink JIT,
# zero-filled pointer buffers). Writes $OUT/ncu.csv and $OUT/gpu.txt.
set -u
export PATH=/usr/local/cuda/bin:$PATH
M=smsp__inst_executed.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
cd scripts/research/sass_replay
ncu --clock-control none --csv --print-units base --metrics "$M" \
  python3 ../hopper_fixtures/harness_hopper.py launches.json > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
echo "ncu rc=$?"; tail -3 "$OUT/ncu.err"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
ptxas --version | tail -1 >> "$OUT/gpu.txt"
