#!/bin/bash
# One set of fixture launches on the H200 machine under ncu, from a staging folder with
# scripts/research/{ptx_fixtures,hopper_fixtures}, launches_fix.json (paths relative to it),
# metrics_fixtures.txt (the metric list of an earlier run_device.sh) and COMMIT:
#   cd scratch/SET && bash scripts/research/hopper_fixtures/run_set.sh      ($OUT/hw.tgz, as run_device.sh's)
# Then: python3 scripts/research/hopper_fixtures/collect_hopper.py WORK scratch/SET OUTDIR PROBEDIR
# (WORK: hw.tgz unpacked). Used for the unseen-kernel checks (unseen.py).
set -u
S=$(pwd); D=$S/scripts/research/hopper_fixtures; W=/tmp/hwset; OUT=${OUT:-/tmp/hwset_out}
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
python3 "$D/provenance.py" "$W/prov.json" "scripts/research/hopper_fixtures/run_set.sh (harness_hopper.py)"
ls "$W/sass"
} 2>&1 | tee "$OUT/log.txt"
cp "$OUT/log.txt" "$W/"
