#!/usr/bin/env python3
"""Picks Nsight Compute counters for the cp.async / stmatrix measurements from `ncu
--query-metrics` output (argv[1]): every base metric that names ldgsts or stsm, or the shared-memory
LSU wavefronts, bank conflicts and shared instruction counts; prints them comma-separated with .sum.
argv[2] = 'ldgsts' or 'stsm' picks the instruction-specific set; argv[3] (optional) is a
comma-separated list always appended (duplicates dropped)."""
import re
import sys

text = open(sys.argv[1], errors="replace").read()
names = set()
for line in text.splitlines():
    tok = line.strip().split()
    if tok and re.fullmatch(r"[a-z0-9]+__[a-z0-9_]+", tok[0]):
        names.add(tok[0])
which = sys.argv[2]
keep = []
for n in sorted(names):
    if any(b in n for b in ("pct", "ratio", "per_", "_rate", "peak", "realtime")):
        continue
    shared = (n.startswith("l1tex__data_pipe_lsu_wavefronts_mem_shared")
              or n.startswith("l1tex__data_bank_conflicts_pipe_lsu_mem_shared")
              or n.startswith("smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared")
              or n in ("smsp__inst_executed_op_shared_st", "smsp__inst_executed_op_shared_ld"))
    if shared or which in n:
        keep.append(n + ".sum")
extra = [m for m in (sys.argv[3].split(",") if len(sys.argv) > 3 else []) if m]
print(",".join(dict.fromkeys(keep[:60] + extra)))
