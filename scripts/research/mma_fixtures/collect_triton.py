#!/usr/bin/env python3
"""run_triton.sh's hw_triton.tgz (unpacked in WORK) into tests/data/ptx_mma/triton/.

    python3 collect_triton.py GEN_TRITON WORK OUT_DIR GIT_COMMIT

One NAME.json per launch of GEN_TRITON/launches.json (ncu rows are in launch order: all four
kernels are named dot_k), with the PTX copied beside it; the format of ../README.md without
device_output and reference_check.
"""
import csv
import hashlib
import io
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collect as C  # noqa: E402


def main():
    gen, work, out_dir, commit = sys.argv[1:5]
    os.makedirs(out_dir, exist_ok=True)
    launches = json.load(open(os.path.join(gen, "launches.json")))
    rows = [l for l in open(os.path.join(work, "ncu.csv")) if l.startswith('"')]
    by_id = {}
    for x in csv.DictReader(io.StringIO("".join(rows))):
        try:
            v = float(x["Metric Value"].replace(",", ""))
        except ValueError:
            continue
        by_id.setdefault(int(x["ID"]), {})[x["Metric Name"]] = int(v) if v.is_integer() else v
    log = open(os.path.join(work, "log.txt")).read().splitlines()
    for i, l in enumerate(launches):
        n = l["name"]
        shutil.copy(os.path.join(gen, l["ptx"]), os.path.join(out_dir, l["ptx"]))
        ptx = open(os.path.join(out_dir, l["ptx"]), "rb").read()
        sass = C.sass_by_kernel(os.path.join(work, "cubin", n + ".sass")).get("dot_k", {})
        doc = {
            "fixture": n, "ptx": l["ptx"], "ptx_sha256": hashlib.sha256(ptx).hexdigest(),
            "note": "Triton 3.6: a 32x32x32 tl.dot of " + ("fp32 (tf32 mma.sync m16n8k8)" if "f32" in n else "int8 (mma.sync m16n8k32 .satfinite s8)") + ", one warp",
            "launch": {k: l[k] for k in ("kernel", "grid", "block", "dynamic_smem_bytes", "params")},
            "measured_ctas": "the one CTA (0,0,0)",
            "counters": dict(sorted(by_id[i].items())),
            "sass_static": dict(sorted(sass.items())),
            "compiler": "Triton 3.6.0 triton.compile(ASTSource, GPUTarget('cuda', %s, 32), num_warps=1) on a CPU (scripts/research/mma_fixtures/triton_dots.py); the driver JIT-compiles the PTX (cuLink)" % n[-2:],
            "provenance": {"card": log[1].split(",")[0], "driver": log[1].split(",")[1].strip(), "date": log[0],
                           "command": "ncu --clock-control none --csv --print-units base --metrics <metrics.txt,extra_metrics.txt> python3 harness_hopper.py launches.json",
                           "script": "scripts/research/mma_fixtures/run_triton.sh", "git_commit": commit},
        }
        with open(os.path.join(out_dir, n + ".json"), "w") as fh:
            json.dump(doc, fh, indent=1)
            fh.write("\n")
        print(n, {k: v for k, v in sass.items() if "MMA" in k})


if __name__ == "__main__":
    main()
