#!/bin/bash
# kernels/fa3_fwd.cu at its other key-block width (FA_BN 64, fa3_d{64,128}_full_f16_bn64.ptx) on
# the H200 machine, as run_fa3.sh runs the default width (cuModuleLoadDataEx, HARNESS_DIRECT=1):
# correctness of the s512 launches against torch, then Nsight Compute's counters of all four.
# From the staging folder (stage.sh):  bash scripts/research/hopper_fixtures/run_fa3_widths.sh  ($OUT/fa3w.tgz)
set -u
S=$(pwd); D=$S/scripts/research/hopper_fixtures; W=/tmp/hwfa3w; OUT=${OUT:-/tmp/hwfa3w_out}
rm -rf "$W"; mkdir -p "$W/sass" "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 HARNESS_DIRECT=1
pack() { (cd "$W" && tar czf "$OUT/fa3w.tgz" .); }
trap pack EXIT
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import json; json.dump([l for l in json.load(open('launches_fix.json')) if l['kernel']=='fa3_fwd' and '_bn64' in l['name']], open('$W/fa3w.json','w'), indent=1)"
# The counters tests/ptx_hopper.rs compares (its COUNTERS) and the HFMA2 part of the tensor pipe.
MF=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,\
smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__inst_executed_op_ldsm.sum,\
smsp__inst_executed_op_shared_stsm.sum,smsp__inst_executed_pipe_tensor_op_hmma.sum,smsp__inst_executed_pipe_tensor_op_gmma.sum,\
smsp__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum,sm__sass_inst_executed_op_ldgsts.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum,smsp__sass_inst_executed_op_tma_ld.sum,smsp__sass_inst_executed_op_tma_st.sum,\
l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum,l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum
for f in tests/data/ptx_hopper/fa3_*_bn64.ptx; do n=$(basename $f .ptx)
  ptxas -arch=sm_90a $f -o $W/$n.cubin && cuobjdump -sass $W/$n.cubin > $W/sass/$n.sass; done &
# No preflight (device time): the correctness runs launch both s512 variants first, in parallel.
cp "$W/fa3w.json" "$W/fix_ok.json"
for n in fa3_d64_full_f16_bn64_s512 fa3_d128_full_f16_bn64_s512; do
  (timeout 40 python3 "$D/check_correct.py" launches_fix.json "$W/correct_$n.json" $n 2>&1 | grep -v Warning | tail -1) &
done
wait
cat "$W"/correct_*.json
pack
timeout 90 ncu --clock-control none --csv --print-units base --metrics "$MF" python3 "$D/harness_hopper.py" "$W/fix_ok.json" \
  > "$W/ncu_fix.csv" 2> "$W/ncu_fix.err"
echo "ncu rc=$? rows=$(grep -c '^"' "$W/ncu_fix.csv")"; grep -v '^"' "$W/ncu_fix.csv" | tail -3
wait; ls $W/sass
} 2>&1 | tee "$OUT/log.txt"
cp "$OUT/log.txt" "$W/"
