#!/usr/bin/env python3
"""Fixture files of the FA_BN 64 launches measured by run_fa3_widths.sh: from its fa3w.tgz
(unpacked in DIR) and the staging folder's launches_fix.json, one tests/data/ptx_hopper/NAME.json
per launch in the format of the other fixtures (README.md): launch, counters (the metrics the
script measured), sass_static (cuobjdump -sass of the H200's ptxas), provenance.

    python3 collect_fa3_widths.py DIR LAUNCHES_FIX.json OUTDIR DATE
"""
import csv
import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collect_hopper as C  # noqa: E402


def main():
    d, lf, outdir, date = sys.argv[1:5]
    launches = {l["name"]: l for l in json.load(open(lf))}
    order = [l["name"] for l in json.load(open(os.path.join(d, "fix_ok.json")))]
    rows = [l for l in open(os.path.join(d, "ncu_fix.csv")) if l.startswith('"')]
    rows = list(csv.reader(io.StringIO("".join(rows))))
    h = rows[0]
    ii, mi, vi = h.index("ID"), h.index("Metric Name"), h.index("Metric Value")
    by = {}
    for r in rows[1:]:
        by.setdefault(int(r[ii]), {})[r[mi]] = int(r[vi].replace(",", ""))
    log = open(os.path.join(d, "log.txt")).read().splitlines()
    card, driver = [x.strip() for x in log[0].split(",")]
    for k, name in enumerate(order):
        l = launches[name]
        unit = l["unit"]
        sass = C.sass_hist(os.path.join(d, "sass", unit + ".sass"))
        fam, ops = sass.get("fa3_fwd", ({}, {}))
        correct = os.path.join(d, f"correct_{name}.json")
        fx = {
            "fixture": name,
            "ptx": os.path.basename(l["ptx"]),
            "ptx_sha256": l["ptx_sha256"],
            "note": l["note"],
            "launch": {kk: l[kk] for kk in ("kernel", "grid", "block", "dynamic_smem_bytes", "params",
                                             "tensor_maps", "cli")},
            "measured_ctas": "the one CTA (0,0,0)",
            "counters": by[k],
            "sass_counters": {},
            "sass_static": {"families": fam, "opcodes": ops,
                            "from": "cuobjdump -sass of `ptxas -arch=sm_90a` (CUDA 13.0, on the H200 machine) of the PTX"},
            "compiler": l["compiler"],
            "provenance": {"card": card, "driver": driver, "date": date,
                           "command": "ncu --clock-control none --csv --print-units base --metrics <17 counters> "
                                      "python3 harness_hopper.py <launches>",
                           "script": "scripts/research/hopper_fixtures/run_fa3_widths.sh; collect_fa3_widths.py"},
            "load": "cuModuleLoadDataEx on the PTX text (HARNESS_DIRECT=1), as run_fa3.sh",
        }
        if os.path.exists(correct):
            fx["correctness"] = json.load(open(correct))[name]
        json.dump(fx, open(os.path.join(outdir, name + ".json"), "w"), indent=1)
        print(name, len(by[k]), "counters")


if __name__ == "__main__":
    main()
