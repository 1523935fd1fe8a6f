#!/bin/bash
# The Hopper fixtures and probes on the H200 machine (one call of the device tool), from the
# staging folder stage.sh makes (scripts/, tests/data/ptx_hopper/, probes/, launches_*.json,
# cutlass/ with the CuTe tutorial sources and headers):
#   cd scratch/c27 && bash scripts/research/hopper_fixtures/run_device.sh
# Writes $OUT/log.txt and $OUT/hw.tgz (ncu CSVs, cubins' SASS, query lists, checks, provenance).
set -u
S=$(pwd)
D=$S/scripts/research/hopper_fixtures
W=/tmp/hw
OUT=${OUT:-/tmp/hw_out}
STEP=${STEP:-all}
rm -rf "$W"; mkdir -p "$W/cubin" "$W/sass" "$W/cute" "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
log() { echo "[$(date -u +%T)] $*"; }
pack() { (cd "$W" && tar czf "$OUT/hw.tgz" --exclude='*.ncu-rep' --exclude='./cute/cute_*' . ); ls -la "$OUT"; }
trap pack EXIT
NCU="ncu --clock-control none --csv --print-units base"
{
log start; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
# CuTe tutorials: built here by the machine's nvcc, in the background while the rest runs.
if [ -d cutlass ]; then
  for t in sgemm_sm80 hopper/wgmma_sm90 hopper/wgmma_tma_sm90; do
    n=$(basename $t)
    (cd cutlass && nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -I include -I tools/util/include \
       --expt-relaxed-constexpr -o "$W/cute/cute_$n" examples/cute/tutorial/$t.cu > "$W/cute/build_$n.log" 2>&1;
     echo "rc=$?" >> "$W/cute/build_$n.log") &
  done
fi
log query
ncu --query-metrics --chip gh100 > "$W/query_base.txt" 2>&1
ncu --query-metrics --chip gh100 --query-metrics-mode suffix > "$W/query_suffix.txt" 2>&1
echo "query lines: $(wc -l < "$W/query_base.txt") / $(wc -l < "$W/query_suffix.txt")"
python3 "$D/metrics.py" candidates "$W/query_base.txt" > "$W/candidates.txt"
MF=$(python3 "$D/metrics.py" fixtures "$W/query_base.txt" "$W/query_suffix.txt")
MP=$(python3 "$D/metrics.py" probes "$W/query_base.txt" "$W/query_suffix.txt")
log validate
MP=$(timeout 90 python3 "$D/metrics.py" validate launches_probe.json probe_empty "$MP" 2> "$W/validate_probe.err") || true
if [ -z "$MP" ]; then echo "validation gave nothing: the fixed list"; MP=$(python3 -c "import sys; sys.path.insert(0, '$S/scripts/research/ptx_fixtures'); import fixtures as F; print(','.join(F.COUNTERS + F.EXTRA))"); fi
MF=$(python3 -c "import sys; p=set(sys.argv[2].split(',')); print(','.join(m for m in sys.argv[1].split(',') if m in p))" "$MF" "$MP")
echo "$MF" > "$W/metrics_fixtures.txt"; echo "$MP" > "$W/metrics_probes.txt"
echo "fixture metrics: $(echo "$MF" | tr ',' '\n' | wc -l), probe metrics: $(echo "$MP" | tr ',' '\n' | wc -l)"
tail -2 "$W/validate_probe.err"
log preflight
timeout 100 python3 "$D/preflight.py" launches_fix.json "$W/fix_ok.json" 20
timeout 60 python3 "$D/preflight.py" launches_probe.json "$W/probe_ok.json" 10
if command -v compute-sanitizer > /dev/null; then
  for n in $(python3 -c "import json; ok={l['name'] for l in json.load(open('$W/fix_ok.json'))}; print(' '.join(l['name'] for l in json.load(open('launches_fix.json')) if l['name'] not in ok and l['name'].endswith(('s128', 'pipe'))))"); do
    timeout 30 python3 "$D/harness_hopper.py" launches_fix.json --only $n --direct 2>&1 | tail -1
    timeout 60 compute-sanitizer --tool memcheck python3 "$D/harness_hopper.py" launches_fix.json --only $n > "$W/sanitizer_$n.txt" 2>&1
    echo "sanitizer $n rc=$?"; grep -m6 -E "Invalid|Error|error|at 0x|by thread|Address" "$W/sanitizer_$n.txt"
  done
fi
pack > /dev/null
log correctness
for n in fa3_d64_full_f16_s512 fa3_d64_causal_f16_s512 fa3_d128_full_f16_s512 fa3_d128_causal_f16_s512 tt_attn_fwd_d64 tt_attn_fwd_d128 tt_matmul_tma tt_matmul_f16_8w tt_matmul_f16_4w hand_tma_wgmma_pipe; do
  timeout 40 python3 "$D/check_correct.py" launches_fix.json "$W/correct_$n.json" $n 2>&1 | grep -v Warning | tail -2
done
pack > /dev/null
log counters-fixtures
timeout 200 $NCU --metrics "$MF" python3 "$D/harness_hopper.py" "$W/fix_ok.json" --cubin-dir "$W/cubin" \
  > "$W/ncu_fix.csv" 2> "$W/ncu_fix.err"
echo "ncu rc=$? rows=$(grep -c '^"' "$W/ncu_fix.csv")"; grep -v '^"' "$W/ncu_fix.csv" | tail -4; tail -3 "$W/ncu_fix.err"
pack > /dev/null
log counters-probes
timeout 150 $NCU --metrics "$MP" python3 "$D/harness_hopper.py" "$W/probe_ok.json" --cubin-dir "$W/cubin" \
  > "$W/ncu_probe.csv" 2> "$W/ncu_probe.err"
echo "ncu rc=$? rows=$(grep -c '^"' "$W/ncu_probe.csv")"; grep -v '^"' "$W/ncu_probe.csv" | tail -4; tail -3 "$W/ncu_probe.err"
pack > /dev/null
log jit
timeout 100 python3 "$D/check_jit.py" tests/data/ptx_hopper "$W/jit.json" 2>&1 | cut -c1-300 | tail -12
pack > /dev/null
log sass
for c in "$W"/cubin/*.cubin; do cuobjdump -sass "$c" > "$W/sass/$(basename "$c" .cubin).sass" 2>&1; done
ls "$W/sass" | wc -l
pack > /dev/null
log cute
wait
for n in sgemm_sm80 wgmma_sm90 wgmma_tma_sm90; do
  b="$W/cute/cute_$n"; tail -1 "$W/cute/build_$n.log"
  [ -x "$b" ] || b="$S/cute_bin/cute_$n"
  [ -x "$b" ] || { echo "no binary for $n"; continue; }
  echo "== $n from $b"
  cuobjdump -sass "$b" > "$W/sass/cute_$n.sass" 2>&1
  A="256 128 256"; [ $n = sgemm_sm80 ] && A="256 128 256 T N"  # sgemm_sm80 has no half_t NT
  timeout 30 "$b" $A > "$W/cute/run_$n.txt" 2>&1; echo "plain run rc=$?"; tail -3 "$W/cute/run_$n.txt"
  timeout 60 $NCU --metrics "$MF" -k regex:gemm_device -c 1 "$b" $A > "$W/cute/ncu_$n.csv" 2> "$W/cute/ncu_$n.err"
  echo "ncu rc=$? rows=$(grep -c '^"' "$W/cute/ncu_$n.csv")"; tail -2 "$W/cute/ncu_$n.err"
done
pack > /dev/null
log provenance
python3 "$D/provenance.py" "$W/prov.json" "scripts/research/hopper_fixtures/run_device.sh (harness_hopper.py, metrics.py, check_correct.py, check_jit.py)"
log done
} 2>&1 | tee "$OUT/log.txt"
cp "$OUT/log.txt" "$W/log.txt"
