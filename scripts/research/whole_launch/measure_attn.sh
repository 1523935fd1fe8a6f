#!/usr/bin/env bash
# The causal attention whole launch of tests/data/whole_launch/attn_causal_32cta_prediction.json
# on the H200 (after the prediction was committed): `verify --launch` with the same flags, and
# plain ncu for the whole-kernel counters (smsp__inst_executed.sum among them). Run from the
# repository root with the release binary carried; writes into $OUT.
set -u
B=target/release/tilelab
L=tests/data/ptx_hopper/launch/u_attn_fwd_causal_d64.json
P=tests/data/ptx_hopper/u_attn_fwd_causal_d64.ptx
F="--grid 4,8 --arg 3=4096 --arg 8=4096 --arg 13=4096 --arg 18=4096 --tensor-map 2=f16:64,4096:128:64,128:128B --tensor-map 7=f16:64,4096:128:64,64:128B --tensor-map 12=f16:64,4096:128:64,64:128B --tensor-map 17=f16:64,4096:128:64,128:128B"
export PATH=/usr/local/cuda/bin:$PATH
NCU=/usr/local/cuda/bin/ncu
M=smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_shared_stsm.sum,smsp__inst_executed_pipe_tensor_op_gmma.sum,smsp__sass_inst_executed_op_tma_ld.sum,smsp__inst_executed_op_tma_ld_pred_on_any.sum,smsp__inst_executed_op_tma_st_pred_on_any.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum,l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum,sm__ctas_launched.sum
date -u +%Y-%m-%dT%H:%M:%SZ > "$OUT/attn_device.txt"
( time $B verify --launch $L $F --json ) > "$OUT/attn_verify.json" 2> "$OUT/attn_verify.err"
K=$(python3 -c "import json; print(json.load(open('$L'))['kernel'])")
S=$(python3 -c "import json; print(json.load(open('$L'))['dynamic_smem'])")
A=$(python3 - "$L" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
print(" ".join(f"--arg {a['param']}={a['value']}" for a in v["args"] if "value" in a and a["param"] not in (3, 8, 13, 18)))
PY
)
$NCU --clock-control none --csv --metrics $M $B verify --ptx $P --kernel $K --block 128 --dynamic-smem $S $A $F --probe-ptx > "$OUT/attn_ncu.csv" 2> "$OUT/attn_ncu.err"
ls -la "$OUT"; tail -3 "$OUT/attn_verify.err" "$OUT/attn_ncu.err"
