#!/bin/bash
# The PTX fixtures on the GPU machine (one call of the device tool), from the repository root:
#   bash .gpu/ptxfix/run.sh        (this folder copied there with src/ = the example's output)
# Writes $OUT/log.txt, $OUT/fixtures.tgz (tests/data/ptx/), $OUT/work.tgz (ncu CSV, source pages).
set -u
D=$(cd "$(dirname "$0")" && pwd)
W=/tmp/ptxfix_work
OUT=${OUT:-/tmp/ptxfix_out}
rm -rf "$W"; mkdir -p "$W/cubin" "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
log() { echo "[$(date -u +%T)] $*"; }
SRC_FIX="triton_fa_v1_trans triton_fa_v1_kt lesson_fa_v1_v2.row.all gemm_64x64x128_4w_rows_pad8 triton_matmul_2w"
{
log start; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
log prepare; python3 "$D/fixtures.py" prepare "$D/src" "$W" || exit 1
log query; ncu --query-metrics --chip gh100 > "$W/query.txt" 2>&1 || ncu --query-metrics > "$W/query.txt" 2>&1
M=$(python3 "$D/fixtures.py" metrics "$W/query.txt")
log validate; M=$(python3 "$D/fixtures.py" validate "$W" "$M"); echo "metrics: $M"
log counters
timeout 220 ncu --clock-control none --csv --print-units base --metrics "$M" \
  python3 "$D/harness.py" "$W/launches.json" --cubin-dir "$W/cubin" > "$W/ncu.csv" 2> "$W/ncu.err"
echo "ncu rc=$? rows=$(grep -c '^"' "$W/ncu.csv")"; grep -v '^"' "$W/ncu.csv" | tail -3; tail -3 "$W/ncu.err"
log source
timeout 60 ncu --clock-control none --section SourceCounters --import-source yes -f -o "$W/src" \
  python3 "$D/harness.py" "$W/launches.json" --lineinfo --cubin-dir "$W/cubin" --only $SRC_FIX > "$W/src.log" 2>&1
echo "source rc=$?"; tail -3 "$W/src.log"
for mode in sass ptx cuda cuda,sass; do
  ncu -i "$W/src.ncu-rep" --page source --csv --print-source "$mode" > "$W/source_${mode/,/_}.csv" 2>&1
  echo "print-source $mode rc=$? lines=$(wc -l < "$W/source_${mode/,/_}.csv")"; head -c 300 "$W/source_${mode/,/_}.csv"; echo
done
log provenance
python3 - "$W/prov.json" "$D" <<'PY'
import json, subprocess, sys, datetime
def out(c):
    r = subprocess.run(c, shell=True, capture_output=True, text=True); return (r.stdout + r.stderr).strip()
d = sys.argv[2]
p = {
  "card": out("nvidia-smi --query-gpu=name --format=csv,noheader"),
  "driver": out("nvidia-smi --query-gpu=driver_version --format=csv,noheader"),
  "cuda": out("nvcc --version | tail -2 | head -1"),
  "ncu": out("ncu --version | tail -1"),
  "triton": out("python3 -c 'import triton; print(triton.__version__)'"),
  "torch": out("python3 -c 'import torch; print(torch.__version__)'"),
  "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
  "command": "ncu --clock-control none --csv --print-units base --metrics <counters> python3 harness.py launches.json",
  "script": "scripts/research/ptx_fixtures/run.sh (harness.py, fixtures.py, triton_fixtures.py, tkernels.py)",
  "git_commit": open(d + "/COMMIT").read().strip(),
}
json.dump(p, open(sys.argv[1], "w"), indent=1); print(p)
PY
log collect; python3 "$D/fixtures.py" collect "$W" "$W/out"
log done
} 2>&1 | tee "$OUT/log.txt"
tar czf "$OUT/fixtures.tgz" -C "$W/out" .
(cd "$W" && tar czf "$OUT/work.tgz" ncu.csv ncu.err query.txt src.log source_*.csv src.ncu-rep ptx launches.json prov.json 2>/dev/null)
ls -la "$OUT"
