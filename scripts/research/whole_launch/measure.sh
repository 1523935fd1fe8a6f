#!/usr/bin/env bash
# Whole-launch measurements for issue #31 on the H200 (run from the repository root, with the
# release binary carried to target/release/tilelab; writes into $OUT):
#  1. `tilelab verify --ptx` on Triton's tutorial matmul (tt_matmul_f16_4w, the 128x128x32
#     config, fp16) launched whole: 64 CTAs (M = N = 1024, K = 512) and 4,096 CTAs
#     (M = N = 8192, K = 4096): every CTA simulated, the launch measured by ncu.
#  2. The same two launches under plain ncu: whole-kernel counters, smsp__inst_executed.sum
#     among them (verify's metric list has no total).
#  3. The causal FA2 launch fa2_d64_bm64_causal at S = 512, grid 8 (tests/data/ptx), under ncu's
#     SourceCounters: per SASS instruction executions, for the SASS replay's per-CTA check.
set -u
B=target/release/tilelab
L=tests/data/ptx_hopper/launch/tt_matmul_f16_4w.json
MM=tests/data/ptx_hopper/tt_matmul_f16_4w.ptx
A64="--grid 64 --arg 3=1024 --arg 4=1024 --arg 5=512 --arg 6=512 --arg 7=1024 --arg 8=1024"
A4096="--grid 4096 --arg 3=8192 --arg 4=8192 --arg 5=4096 --arg 6=4096 --arg 7=8192 --arg 8=8192"
NCU=/usr/local/cuda/bin/ncu
M=smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_ldsm.sum,smsp__inst_executed_pipe_tensor_op_hmma.sum,smsp__inst_executed_pipe_tensor_op_gmma.sum,smsp__inst_executed_op_ldgsts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum,sm__ctas_launched.sum
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
date -u +%Y-%m-%dT%H:%M:%SZ >> "$OUT/device.txt"
$NCU --version | tail -1 >> "$OUT/device.txt"
( time $B verify --launch $L $A64 --pointer-bytes 16MiB --json ) > "$OUT/mm64_verify.json" 2> "$OUT/mm64_verify.err"
( time $B verify --launch $L $A4096 --pointer-bytes 128MiB --json ) > "$OUT/mm4096_verify.json" 2> "$OUT/mm4096_verify.err"
for n in 64 4096; do
  if [ $n = 64 ]; then A=$A64; P=16777216; else A=$A4096; P=134217728; fi
  $NCU --clock-control none --csv --metrics $M $B verify --ptx $MM --kernel matmul_kernel --block 128 --dynamic-smem 65536 $A --pointer-bytes $P --probe-ptx > "$OUT/mm${n}_ncu.csv" 2>> "$OUT/ncu.err"
done
F=tests/data/ptx/fa2_d64_bm64_causal.ptx
$NCU --clock-control none --set none --section SourceCounters -f -o /tmp/fa2c $B verify --ptx $F --grid 8 --block 128 --arg fa2_fwd_param_4=512 --arg fa2_fwd_param_5=0.125 --dynamic-smem 40960 --probe-ptx > /dev/null 2>> "$OUT/ncu.err"
$NCU --import /tmp/fa2c.ncu-rep --page source --print-source sass --csv > "$OUT/fa2c_grid8_source.csv" 2>> "$OUT/ncu.err"
ls -la "$OUT"
