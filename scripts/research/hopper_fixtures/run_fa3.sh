#!/bin/bash
# The fa3_fwd.cu fixtures on the H200 machine, loaded with cuModuleLoadDataEx (HARNESS_DIRECT=1):
# through cuLink every fa3 launch fails with CUDA error 716 (misaligned address, thread 0), the
# same PTX through cuModuleLoadDataEx runs (run_device.sh's run of 2026-12-01). From the staging
# folder:  bash scripts/research/hopper_fixtures/run_fa3.sh   ($OUT/fa3.tgz)
set -u
S=$(pwd); D=$S/scripts/research/hopper_fixtures; W=/tmp/hwfa3; OUT=${OUT:-/tmp/hwfa3_out}
rm -rf "$W"; mkdir -p "$W/sass" "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 HARNESS_DIRECT=1
pack() { (cd "$W" && tar czf "$OUT/fa3.tgz" .); }
trap pack EXIT
{
python3 -c "import json; json.dump([l for l in json.load(open('launches_fix.json')) if l['kernel']=='fa3_fwd'], open('$W/fa3.json','w'), indent=1)"
MF=$(cat metrics_fixtures.txt)
for f in tests/data/ptx_hopper/fa3_*.ptx; do n=$(basename $f .ptx)
  ptxas -arch=sm_90a $f -o $W/$n.cubin && cuobjdump -sass $W/$n.cubin > $W/sass/$n.sass; done &
timeout 100 python3 "$D/preflight.py" "$W/fa3.json" "$W/fix_ok.json" 20
for n in fa3_d64_full_f16_s512 fa3_d64_causal_f16_s512 fa3_d128_full_f16_s512 fa3_d128_causal_f16_s512; do
  timeout 40 python3 "$D/check_correct.py" launches_fix.json "$W/correct_$n.json" $n 2>&1 | grep -v Warning | tail -1
done
pack
timeout 200 ncu --clock-control none --csv --print-units base --metrics "$MF" python3 "$D/harness_hopper.py" "$W/fix_ok.json" \
  > "$W/ncu_fix.csv" 2> "$W/ncu_fix.err"
echo "ncu rc=$? rows=$(grep -c '^"' "$W/ncu_fix.csv")"; grep -v '^"' "$W/ncu_fix.csv" | tail -3
wait; ls $W/sass
} 2>&1 | tee "$OUT/log.txt"
cp "$OUT/log.txt" "$W/"
