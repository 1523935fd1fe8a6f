#!/usr/bin/env python3
"""Turns one device run (run_device.sh's hw.tgz, unpacked in WORK) into tests/data/ptx_mma/.

    python3 collect.py GEN WORK OUT_DIR GIT_COMMIT

GEN: gen_mma.py's folder (mma_forms.cu, mma_forms.ptx, launches.json); WORK: the unpacked hw.tgz
(outputs.json, ncu.csv, mma_forms.sass, prov.json); the reference check (check.py) runs here.
Writes OUT_DIR/mma_forms.{cu,ptx} and one NAME.json per launch (tests/data/ptx_mma/README.md).
"""
import csv
import hashlib
import io
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check as K  # noqa: E402


def ncu_rows(path):
    rows = [l for l in open(path) if l.startswith('"')]
    out = {}
    for x in csv.DictReader(io.StringIO("".join(rows))):
        v = x["Metric Value"].replace(",", "")
        try:
            num = float(v)
        except ValueError:
            continue
        out.setdefault(x["Kernel Name"], {})[x["Metric Name"]] = int(num) if num.is_integer() else num
    return out


def sass_by_kernel(path):
    """Opcode histogram of each function of cuobjdump -sass."""
    out, cur = {}, None
    for line in open(path):
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = m.group(1)
            out[cur] = {}
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if m and cur:
            op = m.group(2)
            out[cur][op] = out[cur].get(op, 0) + 1
    return out


def main():
    gen, work, out_dir, commit = sys.argv[1:5]
    os.makedirs(out_dir, exist_ok=True)
    spec = json.load(open(os.path.join(gen, "launches.json")))
    outs = json.load(open(os.path.join(work, "outputs.json")))["outputs"]
    counters = ncu_rows(os.path.join(work, "ncu.csv"))
    sass = sass_by_kernel(os.path.join(work, "mma_forms.sass"))
    prov = json.load(open(os.path.join(work, "prov.json")))
    for f in ("mma_forms.cu", "mma_forms.ptx"):
        shutil.copy(os.path.join(gen, f), os.path.join(out_dir, f))
    ptx = open(os.path.join(out_dir, "mma_forms.ptx"), "rb").read()
    forms = {f[0]: f for f in spec["forms"]}
    for l in spec["launches"]:
        name = l["name"]
        if name in forms:
            f = forms[name]
            ref = {"mismatches": K.check_form(f, outs[name])}
            if "tf32" in f[2]:
                ref["mismatches_if_low_bits_used"] = K.check_form(f, outs[name], tf32_low=True)
            sat = ".satfinite" if f[9] else ""
            note = f"one warp: mma.sync.aligned.{f[1]}.row.col{sat}.{f[2]} on registers made from a hash of the lane"
        else:
            bad, olds = K.check_ldsm(outs[name])
            ref = {"mismatches": bad, "atom_old_values_sorted": olds}
            note = "one warp: generic st to shared, ldmatrix.x4 and stmatrix.x4.trans without .shared, generic atom.add and ld"
        doc = {
            "fixture": name,
            "ptx": "mma_forms.ptx",
            "ptx_sha256": hashlib.sha256(ptx).hexdigest(),
            "note": note,
            "launch": {"kernel": l["kernel"], "grid": l["grid"], "block": l["block"],
                       "dynamic_smem_bytes": 0, "params": l["params"]},
            "measured_ctas": "the one CTA (0,0,0)",
            "counters": dict(sorted(counters[name].items())),
            "sass_static": dict(sorted(sass.get(name, {}).items())),
            "device_output": {"layout": "per lane 16 words: A 0..3, B 4..5, C 6..9, D 10..13 (ldsm_generic: ldmatrix 0..3, stmatrix read back 4..7, atom old 8, sum 9)",
                              "words": outs[name]},
            "reference_check": ref,
            "compiler": spec["compiler"] + " (pip nvidia-cuda-nvcc 13.0.88); the driver JIT-compiles the PTX (cuLink, default options)",
            "provenance": dict(prov, command="ncu --clock-control none --csv --print-units base --metrics <metrics_used.txt> python3 harness_hopper.py launches.json; device.py for the outputs",
                               script="scripts/research/mma_fixtures/ (gen_mma.py, run_device.sh, device.py, check.py, collect.py)",
                               git_commit=commit),
        }
        with open(os.path.join(out_dir, name + ".json"), "w") as fh:
            json.dump(doc, fh, indent=1)
            fh.write("\n")
        print(name, ref)


if __name__ == "__main__":
    main()
