#!/bin/bash
# Do the counters tilelab cannot match repeat on the H200? One device call, from the staging
# folder stage.sh makes (launches_fix.json holds every *.launch.json and nvcc launch):
#   cd scratch/rep && bash scripts/research/hopper_fixtures/run_repeat.sh      ($OUT/repeat.tgz)
# Each chosen launch runs REPEAT times in one process (harness_hopper.py --repeat) under one ncu
# with a short metric list: the plain shared-pipe counters (l1tex__data_pipe_lsu_*), their
# SASS-attributed twins (smsp__sass_l1tex_*), and smsp__inst_executed. The FA3 launches load
# with cuModuleLoadDataEx (--direct), the rest through cuLink, as their fixtures were measured.
set -u
S=$(pwd); D=$S/scripts/research/hopper_fixtures; W=/tmp/rep; OUT=${OUT:-/tmp/rep_out}
REPEAT=${REPEAT:-5}
rm -rf "$W"; mkdir -p "$W" "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
pack() { (cd "$W" && tar czf "$OUT/repeat.tgz" .); }
trap pack EXIT
M=smsp__inst_executed.sum
for op in ld st misc atom; do
  M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_$op.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_$op.sum
done
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
M=$M,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum
M=$M,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
M=$M,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum
LINK="hand_tma_wgmma_pipe tt_matmul_tma tt_matmul_f16_4w tt_attn_fwd_d64 u2_device_desc_matmul u2_persistent_tma_matmul"
DIRECT="fa3_d64_full_f16_s128 fa3_d64_causal_f16_s128 fa3_d128_full_f16_s128 fa3_d64_full_f16_bn64_s128"
{
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; ncu --version | tail -1
echo "metrics: $M"
timeout 240 ncu --clock-control none --csv --print-units base --metrics "$M" \
  python3 "$D/harness_hopper.py" launches_fix.json --only $LINK --repeat "$REPEAT" > "$W/ncu_link.csv" 2> "$W/ncu_link.err"
echo "link: ncu rc=$? rows=$(grep -c '^"' "$W/ncu_link.csv")"; tail -3 "$W/ncu_link.err"
timeout 240 ncu --clock-control none --csv --print-units base --metrics "$M" \
  python3 "$D/harness_hopper.py" launches_fix.json --only $DIRECT --repeat "$REPEAT" --direct > "$W/ncu_direct.csv" 2> "$W/ncu_direct.err"
echo "direct: ncu rc=$? rows=$(grep -c '^"' "$W/ncu_direct.csv")"; tail -3 "$W/ncu_direct.err"
date -u
} 2>&1 | tee "$W/log.txt"
cp "$W/log.txt" "$OUT/"
