#!/usr/bin/env bash
# Issue #28/#31 follow-up on the H200 (run from the repository root with the release binary
# carried to target/release/tilelab; writes into $OUT): the causal FA2 lesson kernel with
# BM = 128 (tests/data/ptx/fa2_d128_bm128_causal.ptx), S = 512, grid 4 and grid 1, under ncu's
# SourceCounters (executions of every SASS instruction) and, in a second ncu run of the same
# launch, smsp__inst_executed.sum. The SASS replay (`tilelab ptx --ctas all --sass`) is 48
# issues per query block too many on these grids; the source page shows on which instructions.
set -u
B=target/release/tilelab
NCU=/usr/local/cuda/bin/ncu
F=tests/data/ptx/fa2_d128_bm128_causal.ptx
A="--block 128 --arg fa2_fwd_param_4=512 --arg fa2_fwd_param_5=0.0883883461356163 --dynamic-smem 98304 --probe-ptx"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
date -u +%Y-%m-%dT%H:%M:%SZ >> "$OUT/device.txt"
$NCU --version | tail -1 >> "$OUT/device.txt"
for g in 4 1; do
  $NCU --clock-control none --set none --section SourceCounters -f -o /tmp/fa2b$g $B verify --ptx $F --grid $g $A > "$OUT/bm128_grid${g}_verify.txt" 2>> "$OUT/ncu.err"
  $NCU --import /tmp/fa2b$g.ncu-rep --page source --print-source sass --csv > "$OUT/bm128_grid${g}_source.csv" 2>> "$OUT/ncu.err"
  $NCU --clock-control none --csv --metrics smsp__inst_executed.sum,sm__ctas_launched.sum $B verify --ptx $F --grid $g $A > "$OUT/bm128_grid${g}_total.csv" 2>> "$OUT/ncu.err"
done
ls -la "$OUT"
