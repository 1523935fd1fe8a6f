#!/bin/bash
# Nsight Compute's source view on PTX fixtures (what docs/ptx.md records), from the repository root:
#   bash .gpu/ptxfix/source_view.sh      (this folder copied there; FIX = the fixture folder)
# Per fixture in SEL: SourceCounters with the PTX's own line numbers as line info, through the
# cuLink path and through cuModuleLoadDataEx on the PTX text; every --print-source mode; and the
# counters of the direct load, to compare with the fixtures (measured through cuLink).
set -u
D=$(cd "$(dirname "$0")" && pwd)
FIX=${FIX:-tests/data/ptx}
W=/tmp/ptxsrc
OUT=${OUT:-/tmp/ptxsrc_out}
rm -rf "$W"; mkdir -p "$W/cubin" "$OUT"; cp -r "$FIX" "$W/fix"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
SEL=${SEL:-"triton_fa_v1_trans triton_fa_v1_kt lesson_fa_v1_v2.row.all gemm_64x64x128_4w_rows_pad8 triton_matmul_2w"}
M=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_ldsm.sum,smsp__inst_executed_pipe_tensor_op_hmma.sum,sm__sass_inst_executed_op_ldgsts.sum
{
python3 "$D/fixtures.py" launches "$W/fix" "$W"
for mode in link direct; do
  flag=""; [ $mode = direct ] && flag=--direct
  timeout 90 ncu --clock-control none --section SourceCounters --import-source yes -f -o "$W/$mode" \
    python3 "$D/harness.py" "$W/launches.json" --lineinfo $flag --cubin-dir "$W/cubin" --only $SEL > "$W/$mode.log" 2>&1
  echo "== $mode rc=$?"; grep -v "^launched" "$W/$mode.log" | tail -4
  for p in sass ptx cuda cuda,sass; do
    f="$W/${mode}_${p/,/_}.csv"
    ncu -i "$W/$mode.ncu-rep" --page source --csv --print-source "$p" > "$f" 2>&1
    echo "-- $mode --print-source $p rc=$? lines=$(wc -l < "$f")"; head -c 700 "$f"; echo
  done
done
timeout 60 ncu --clock-control none --csv --print-units base --metrics "$M" \
  python3 "$D/harness.py" "$W/launches.json" --direct --only $SEL > "$W/direct_counters.csv" 2>&1
echo "== direct counters rc=$?"
D="$D" W="$W" SEL="$SEL" python3 -c "
import json, os, sys
sys.path.insert(0, os.environ['D']); import fixtures as F
W = os.environ['W']
L = [l for l in json.load(open(W + '/launches.json'))]
rows = F.parse_ncu_csv(open(W + '/direct_counters.csv').read())
sel = os.environ.get('SEL', '').split() or [l['name'] for l in L]
names = [l['name'] for l in L if l['name'] in sel]
for name, (k, g, b, m) in zip(names, rows):
    fx = json.load(open(W + '/fix/' + name + '.json'))['counters']
    diff = {c: (fx.get(c), v) for c, v in m.items() if fx.get(c) != v}
    print(name, 'direct load == fixture' if not diff else f'differs: {diff}')
"
} 2>&1 | tee "$OUT/source_log.txt"
(cd "$W" && tar czf "$OUT/source.tgz" *.csv *.log *.ncu-rep launches.json fix/*.lineinfo.ptx 2>/dev/null)
ls -la "$OUT"
