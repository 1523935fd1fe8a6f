#!/usr/bin/env python3
"""Launches the five kernels of attn_2w.py once each, one CTA (grid (1,)), 2 warps, through
Triton's own launcher (Triton 3.6 compiles them with its ptxas; the PTX equals what
`triton_fixtures.compile_fixture` gives on a CPU), and writes each launch's PTX to OUTDIR.

    ncu --clock-control none --csv --print-units base --metrics M -k regex:va_ python3 attn_2w_launch.py OUTDIR
    ncu --clock-control none --section SourceCounters -o OUTDIR/var -k regex:va_ python3 attn_2w_launch.py OUTDIR
    ncu -i OUTDIR/var.ncu-rep --page source --csv --print-source cuda,sass > OUTDIR/var_source.csv

Measured on the H200 on 2026-12-02 with this file copied as `variants.py` (docs/log/2026-12-02-source-lines.md).
The inputs are torch.randn values: no address depends on them.
"""
import sys

import torch

sys.path.insert(0, ".")
import variants as V  # noqa: E402  (attn_2w.py, copied under the name the PTX's .file gives)

out = sys.argv[1]
torch.manual_seed(0)
h = lambda: torch.randn(32, 64, device="cuda", dtype=torch.float16)  # noqa: E731
f = lambda: torch.randn(32, 64, device="cuda", dtype=torch.float32)  # noqa: E731
C = dict(BM=32, BN=32, D=64, num_warps=2)
runs = {
    "va_mask": lambda: V.va_mask[(1,)](h(), h(), h(), h(), 32, 0.125, **C),
    "va_pid": lambda: V.va_pid[(1,)](h(), h(), h(), h(), 0.125, **C),
    "va_f32in": lambda: V.va_f32in[(1,)](f(), f(), f(), f(), 0.125, **C),
    "va_exp2": lambda: V.va_exp2[(1,)](h(), h(), h(), h(), 0.125, **C),
    "va_kT": lambda: V.va_kT[(1,)](h(), h(), h(), f(), 0.125, **C),
}
for n, r in runs.items():
    c = r()
    torch.cuda.synchronize()
    open(f"{out}/{n}.jit.ptx", "w").write(c.asm["ptx"])
