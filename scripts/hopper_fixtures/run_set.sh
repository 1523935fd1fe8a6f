#!/bin/bash
# One set of fixture launches on the H200 machine under ncu, from a staging folder with
# scripts/{ptx_fixtures,hopper_fixtures}, launches_fix.json (paths relative to it),
# metrics_fixtures.txt (the metric list of an earlier run_device.sh) and COMMIT:
#   cd scratch/SET && bash scripts/hopper_fixtures/run_set.sh      ($OUT/hw.tgz, as run_device.sh's)
# Then: python3 scripts/hopper_fixtures/collect_hopper.py WORK scratch/SET OUTDIR PROBEDIR
# (WORK: hw.tgz unpacked). Used for the unseen-kernel checks (unseen.py).
set -u
S=$(pwd); D=$S/scripts/hopper_fixtures; W=/tmp/hwset; OUT=${OUT:-/tmp/hwset_out}
rm -rf "$W"; mkdir -p "$W/cubin" "$W/sass" "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
pack() { (cd "$W" && tar czf "$OUT/hw.tgz" .); }
trap pack EXIT
{
MF=$(cat metrics_fixtures.txt)
timeout 120 python3 "$D/preflight.py" launches_fix.json "$W/fix_ok.json" 20
timeout 300 ncu --clock-control none --csv --print-units base --metrics "$MF" python3 "$D/harness_hopper.py" \
  "$W/fix_ok.json" --cubin-dir "$W/cubin" > "$W/ncu_fix.csv" 2> "$W/ncu_fix.err"
echo "ncu rc=$? rows=$(grep -c '^"' "$W/ncu_fix.csv")"; tail -3 "$W/ncu_fix.err"
for c in "$W"/cubin/*.cubin; do cuobjdump -sass "$c" > "$W/sass/$(basename "$c" .cubin).sass" 2>&1; done
python3 - "$W/prov.json" <<'PY'
import json, subprocess, sys, datetime
def out(c):
    r = subprocess.run(c, shell=True, capture_output=True, text=True); return (r.stdout + r.stderr).strip()
p = {"card": out("nvidia-smi --query-gpu=name --format=csv,noheader"),
     "driver": out("nvidia-smi --query-gpu=driver_version --format=csv,noheader"),
     "cuda": out("nvcc --version | tail -2 | head -1"), "ncu": out("ncu --version | tail -1"),
     "triton": out("python3 -c 'import triton; print(triton.__version__)'"),
     "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
     "command": "ncu --clock-control none --csv --print-units base --metrics <list> python3 harness_hopper.py <launches>",
     "script": "scripts/hopper_fixtures/run_set.sh (harness_hopper.py)",
     "git_commit": open("COMMIT").read().strip()}
json.dump(p, open(sys.argv[1], "w"), indent=1); print(p)
PY
ls "$W/sass"
} 2>&1 | tee "$OUT/log.txt"
cp "$OUT/log.txt" "$W/"
