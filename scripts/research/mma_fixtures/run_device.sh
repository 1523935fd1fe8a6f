#!/bin/bash
# The mma.sync form fixtures on the H200 (one call of the device tool), from a staging folder
# holding scripts/{mma_fixtures,ptx_fixtures,hopper_fixtures}/ and gen/ (gen_mma.py's output,
# metrics.txt: the counter list):
#   cd scratch/mma && bash scripts/research/mma_fixtures/run_device.sh
# Writes $OUT/log.txt and $OUT/hw.tgz (outputs.json, ncu.csv, SASS of the driver's CUBIN, provenance).
set -u
S=$(pwd)
W=/tmp/mmahw
OUT=${OUT:-/tmp/mmahw_out}
rm -rf "$W"; mkdir -p "$W/cubin" "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
log() { echo "[$(date -u +%T)] $*"; }
pack() { (cd "$W" && tar czf "$OUT/hw.tgz" .); ls -la "$OUT"; }
trap pack EXIT
{
log start; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
log outputs
timeout 60 python3 scripts/research/mma_fixtures/device.py gen/launches.json "$W/outputs.json" "$W/cubin" 2>&1 | tail -3
cuobjdump -sass "$W/cubin/mma_forms.cubin" > "$W/mma_forms.sass" 2>&1; grep -cE "MMA|LDSM|STSM" "$W/mma_forms.sass"
cp gen/mma_forms.ptx "$W/"
python3 -c "import json; d=json.load(open('gen/launches.json')); [l.update(ptx='$W/mma_forms.ptx') for l in d['launches']]; json.dump(d['launches'], open('$W/launches_h.json','w'))"
M=$(cat gen/metrics.txt)
log validate
timeout 40 ncu --clock-control none --csv --print-units base --metrics "$M,$(cat gen/extra_metrics.txt)" \
  python3 scripts/research/hopper_fixtures/harness_hopper.py "$W/launches_h.json" --only f16_k16_f16 > "$W/val.csv" 2> "$W/val.err"
if grep -q '^"' "$W/val.csv" && ! grep -qi "error" "$W/val.err"; then M="$M,$(cat gen/extra_metrics.txt)"; echo "extras accepted"; else echo "extras refused"; tail -2 "$W/val.err"; fi
echo "$M" > "$W/metrics_used.txt"
log counters
timeout 200 ncu --clock-control none --csv --print-units base --metrics "$M" \
  python3 scripts/research/hopper_fixtures/harness_hopper.py "$W/launches_h.json" > "$W/ncu.csv" 2> "$W/ncu.err"
echo "ncu rc=$? rows=$(grep -c '^"' "$W/ncu.csv")"; tail -2 "$W/ncu.err"
log provenance
python3 - "$W/prov.json" <<'PY'
import json, subprocess, sys, datetime
def out(c):
    r = subprocess.run(c, shell=True, capture_output=True, text=True); return (r.stdout + r.stderr).strip()
json.dump({"card": out("nvidia-smi --query-gpu=name --format=csv,noheader"),
           "driver": out("nvidia-smi --query-gpu=driver_version --format=csv,noheader"),
           "cuda": out("nvcc --version | tail -2 | head -1"), "ncu": out("ncu --version | tail -1"),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")},
          open(sys.argv[1], "w"), indent=1)
PY
cat "$W/prov.json"
log done
} 2>&1 | tee "$W/log.txt"
cp "$W/log.txt" "$OUT/"
