#!/usr/bin/env python3
"""Writes tests/data/ofp8_codes.json: every OCP FP8 code (e4m3, e5m2) with its value, and the
code a value rounds to at every midpoint between adjacent finite codes (ties to even) and just
beside it, from ml_dtypes (the FP8 types JAX uses; float8_e4m3fn and float8_e5m2 are the OCP
OFP8 rev. 1.0 formats PTX calls e4m3 and e5m2). An oracle for crates/tilelab-core/src/sim/isa/mma.rs that does not share
its code: `pip install ml_dtypes && python3 scripts/gen_ofp8_table.py`.

Values are strings so that NaN and the infinities survive JSON; finite ones are Python's repr
of the exact value (every FP8 value is a short dyadic fraction, exact in binary64)."""
import json
import math
import sys

import ml_dtypes
import numpy as np

TYPES = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def text(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    return repr(v)


def main():
    out = {
        "provenance": {
            "generator": "scripts/gen_ofp8_table.py",
            "source": f"ml_dtypes {ml_dtypes.__version__} (numpy {np.__version__}): "
            "float8_e4m3fn and float8_e5m2 (OCP 8-bit floating point specification, rev. 1.0)",
            "command": "python3 scripts/gen_ofp8_table.py",
        }
    }
    for name, t in TYPES.items():
        codes = np.arange(256, dtype=np.uint8).view(t)
        decode = [text(v) for v in codes.astype(np.float64)]
        finite = sorted(
            {float(v) for v in codes[:128].astype(np.float64) if math.isfinite(float(v))}
        )
        probes = []
        for lo, hi in zip(finite, finite[1:]):
            mid = np.float32((lo + hi) / 2)
            assert float(mid) == (lo + hi) / 2, "midpoint not exact in f32"
            for x in (mid, np.nextafter(mid, np.float32(0)), np.nextafter(mid, np.float32(1e9))):
                for s in (1.0, -1.0):
                    v = np.float32(s) * x
                    code = int(np.array([v], dtype=np.float32).astype(t).view(np.uint8)[0])
                    probes.append([text(v), code])
        out[name] = {"decode": decode, "encode": probes}
    json.dump(out, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
