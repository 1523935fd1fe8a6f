#!/usr/bin/env python3
"""Builds tests/data/ptx_lines/ from one H200 run of attn_2w_launch.py (on this machine, no GPU):

    python3 scripts/research/ptx_fixtures/attn_2w_fixtures.py RUNDIR tests/data/ptx_lines

RUNDIR holds the run's var_metrics.csv (launch counters), var_source.csv (ncu's source page,
`--print-source cuda,sass`: per Python line and per SASS instruction) and NAME.jit.ptx. Writes
NAME.ptx (the PTX as launched) and NAME.json: the launch (a tilelab launch file's fields), the
launch counters, the per-source-line rows (file's last component, line, wavefronts, ideal,
excessive) and the SASS-attributed sums, with provenance.
"""
import collections
import csv
import hashlib
import json
import os
import shutil
import sys

LAUNCH = {  # name: (runtime scalar args by PTX parameter index, what)
    "va_mask": ({4: "32", 5: "0.125"}, "masked loads and store (mask=offs < N, N = 32)"),
    "va_pid": ({4: "0.125"}, "rows offset by program_id, 1/l applied after the second dot"),
    "va_f32in": ({4: "0.125"}, "f32 q, k, v loaded and cast to f16 in the kernel, f32 output"),
    "va_exp2": ({4: "0.125"}, "exp2 with the scale folded in, 1/l after the dot"),
    "va_kT": ({4: "0.125"}, "k.T and tl.softmax, f32 output"),
}
PROVENANCE = {
    "card": "NVIDIA H200", "driver": "580.159.04", "cuda": "13.0 (driver)",
    "ncu": "2025.3.1.0 (build 36398880)", "triton": "3.6.0", "torch": "2.11.0+cu130",
    "date": "2026-12-02T04:52Z",
    "command": "ncu --clock-control none --csv --print-units base --metrics <counters> -k regex:va_ python3 attn_2w_launch.py OUT; "
               "ncu --clock-control none --section SourceCounters -o OUT/var -k regex:va_ python3 attn_2w_launch.py OUT; "
               "ncu -i OUT/var.ncu-rep --page source --csv --print-source cuda,sass",
    "script": "scripts/research/ptx_fixtures/attn_2w_launch.py (copied as variants.py), attn_2w.py",
    "note": "written from the run's outputs (card.txt of the same session's previous call: driver, ncu, triton, torch); "
            "provenance.py was not run on the device",
}


def num(s):
    return int(s.replace(",", "")) if s not in ("-", "") else 0


def main():
    run, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    counters = collections.defaultdict(dict)
    for r in csv.reader(open(os.path.join(run, "var_metrics.csv"))):
        if len(r) > 14 and r[0] != "ID":
            counters[r[4]][r[12]] = num(r[14])
    lines = collections.defaultdict(list)
    sass = collections.defaultdict(collections.Counter)
    hdr = fn = fp = None
    for r in csv.reader(open(os.path.join(run, "var_source.csv"))):
        if not r:
            continue
        if r[0] == "File Path":
            fp = r[1].split("/")[-1]
        elif r[0] == "Function Name":
            fn = r[1]
        elif r[0] == "Line No":
            hdr = r
        elif hdr is not None:
            d = dict(zip(hdr, r))
            w, i, x = (num(d[k]) for k in ("L1 Wavefronts Shared", "L1 Wavefronts Shared Ideal",
                                          "L1 Wavefronts Shared Excessive"))
            if r[0] != "" and w:
                lines[fn].append({"file": fp, "line": int(r[0]), "wavefronts": w, "ideal": i, "excessive": x})
            elif r[0] == "" and r[2].startswith("0x") and w:
                op = r[3].split()
                op = (op[1] if op[0].startswith("@") else op[0]).split(".")[0]
                sass[fn]["ld" if op in ("LDS", "LDSM") else "st"] += w
                sass[fn]["excessive"] += x
    for name, (args, what) in LAUNCH.items():
        src = os.path.join(run, f"{name}.jit.ptx")
        shutil.copy(src, os.path.join(out, f"{name}.ptx"))
        ptx = open(src, "rb").read()
        doc = {
            "fixture": name,
            "ptx": f"{name}.ptx",
            "ptx_sha256": hashlib.sha256(ptx).hexdigest(),
            "note": f"2-warp attention, BM = BN = 32, D = 64: {what}",
            "launch": {"kernel": name, "grid": [1, 1, 1], "block": [64, 1, 1], "dynamic_smem_bytes": 8192,
                       "args": {str(k): v for k, v in args.items()}},
            "measured_ctas": "the one CTA (0,0,0)",
            "counters": dict(sorted(counters[name].items())),
            "sass_attributed": {"shared_ld_wavefronts": sass[name]["ld"], "shared_st_wavefronts": sass[name]["st"],
                                "excessive": sass[name]["excessive"]},
            "source_lines": sorted(lines[name], key=lambda e: (e["file"], e["line"])),
            "compiler": {"tool": "triton 3.6.0 (its launcher and ptxas)", "target": "sm_90a", "num_warps": 2,
                         "num_stages": 3, "constexprs": {"BM": 32, "BN": 32, "D": 64}},
            "provenance": PROVENANCE,
        }
        json.dump(doc, open(os.path.join(out, f"{name}.json"), "w"), indent=1)
        print(name, doc["counters"].get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
              doc["sass_attributed"], len(doc["source_lines"]))


if __name__ == "__main__":
    main()
