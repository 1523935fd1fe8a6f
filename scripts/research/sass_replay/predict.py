#!/usr/bin/env python3
"""tilelab's predictions for launches.json, made before the H200 measured them:

    python3 predict.py TILELAB > predictions.json

Each launch through `tilelab ptx --sass --json` (ptxas and nvdisasm on PATH): how the counts
were found (`counted_by`), smsp__inst_executed and the LDS/STS issues."""
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
out = {}
for l in json.load(open(os.path.join(here, "launches.json"))):
    a = [sys.argv[1], "ptx", os.path.join(here, l["ptx"]), "--kernel", l["kernel"],
         "--grid", ",".join(map(str, l["grid"])), "--block", ",".join(map(str, l["block"])),
         "--json", "--sass", "--sass-load", "link"]
    for p in l["params"]:
        if p["value"] != "pointer":
            a += ["--arg", "%s=%s" % (p["name"], p["value"])]
    r = json.loads(subprocess.run(a, check=True, capture_output=True, text=True).stdout)
    s = r["sass"]
    out[l["name"]] = {
        "counted_by": s["counted_by"],
        "smsp__inst_executed.sum": s["counts"]["inst_executed"],
        "smsp__inst_executed_op_shared_ld.sum": s["counts"]["families"].get("LDS", 0),
        "smsp__inst_executed_op_shared_st.sum": s["counts"]["families"].get("STS", 0),
        "ptx_warp_instructions": r["totals"]["warp_instructions"],
    }
print(json.dumps(out, indent=1))
