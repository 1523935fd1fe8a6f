#!/bin/bash
# usage: scripts/research/same_counts.sh BIN_BEFORE BIN_AFTER  (run from a checkout root)
# Issue #31: a speed change must leave every report byte-identical.
# Runs every Hopper launch file and the FA2 lesson CTAs with --json through both binaries and cmp's.
A=$1; B=$2; fail=0; n=0
# Private output files: two comparisons at once must not read each other's.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
run() { local tag=$1; shift; "$A" "$@" > "$T/a.json" 2>&1; ea=$?; "$B" "$@" > "$T/b.json" 2>&1; eb=$?;
  n=$((n+1)); if [ $ea != $eb ] || ! cmp -s "$T/a.json" "$T/b.json"; then echo "DIFF $tag (exit $ea vs $eb)"; fail=1; fi; }
for f in tests/data/ptx_hopper/launch/*.json; do run "$f" ptx --launch "$f" --json; run "$f sass" ptx --launch "$f" --json --sass; done
for p in tests/data/ptx/fa2_*.ptx; do
  run "$p" ptx "$p" --grid 32 --block 128 --cta 0,0,0 --arg fa2_fwd_param_4=4096 --arg fa2_fwd_param_5=0.0883883461356163 --dynamic-smem 98304 --json
  run "$p c5" ptx "$p" --grid 32 --block 128 --cta 5,0,0 --arg fa2_fwd_param_4=512 --arg fa2_fwd_param_5=0.125 --dynamic-smem 98304 --json
done
run "matmul grid" ptx --launch tests/data/ptx_hopper/launch/tt_matmul_f16_4w.json --grid 16 --ctas all --jobs 2 --json
echo "$n runs compared, fail=$fail"; exit $fail
