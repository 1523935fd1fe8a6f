#!/usr/bin/env python3
"""Turn one run_device.sh result (hw.tgz, unpacked into WORK) into the committed files.

    python3 collect_hopper.py WORK STAGE FIXDIR PROBEDIR

STAGE: the staging folder the run used (launches_fix.json, launches_probe.json). Writes
FIXDIR/<launch>.json per measured fixture launch (tests/data/ptx/README.md's launch-file format
plus `tensor_maps`, `cli`, `correctness`), FIXDIR/cute_<tutorial>.json (ncu of the tutorial
binary's first gemm_device launch), PROBEDIR/h200_probes.json (every probe launch's counters)
and PROBEDIR/h200_probes_moved.json (per probe family: the counters that differ from the
baseline kernel, with their per-instruction slopes), PROBEDIR/ncu_candidates_gh100.txt.
"""
import glob
import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ptx_fixtures"))
import fixtures as F  # noqa: E402

FAMILIES = ["LDS", "STS", "LDSM", "STSM", "HMMA", "LDGSTS", "HGMMA", "QGMMA", "IGMMA", "LDGDEPBAR", "BAR", "SHFL", "UTMALDG",
            "UTMASTG", "UBLKCP", "UTMACMDFLUSH", "UTMAPF", "UTMACCTL", "SYNCS", "WARPGROUP", "ELECT", "DEPBAR",
            "ARRIVES", "USETMAXREG", "UCGABAR_ARV", "UCGABAR_WAIT", "MEMBAR", "FENCE", "LDG", "STG", "REDG", "ATOMG"]
ISSUE12 = F.COUNTERS


def sass_hist(path):
    """{function: (families, opcodes)} from a cuobjdump -sass listing."""
    out, fn = {}, None
    for line in open(path, errors="replace"):
        m = re.match(r"\s+Function : (\S+)", line)
        if m:
            fn = m.group(1)
            out[fn] = {}
            continue
        m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Za-z0-9_.]*)", line)
        if m and fn:
            out[fn][m.group(1)] = out[fn].get(m.group(1), 0) + 1
    res = {}
    for fn, ops in out.items():
        fam = {f: 0 for f in FAMILIES}
        for op, n in ops.items():
            h = op.split(".")[0]
            if h in fam:
                fam[h] += n
        keep = {op: n for op, n in sorted(ops.items()) if op.split(".")[0] in fam}
        res[fn] = (fam, keep)
    return res


def split(m):
    patched = lambda k: k.startswith(("smsp__sass", "sm__sass")) and k not in ISSUE12  # noqa: E731
    return ({k: v for k, v in m.items() if not patched(k)}, {k: v for k, v in m.items() if patched(k)})


def nonzero(d):
    return {k: v for k, v in d.items() if isinstance(v, (int, float)) and v != 0}


def main():
    work, stage, fixdir, probedir = sys.argv[1:5]
    prov = json.load(open(os.path.join(work, "prov.json")))
    launches = {l["name"]: l for l in json.load(open(os.path.join(stage, "launches_fix.json")))}
    ran = json.load(open(os.path.join(work, "fix_ok.json")))
    rows = F.parse_ncu_csv(open(os.path.join(work, "ncu_fix.csv"), errors="replace").read())
    correct = {}
    for f in glob.glob(os.path.join(work, "correct_*.json")):
        try:
            correct.update(json.load(open(f)))
        except ValueError:
            pass
    jit = json.load(open(os.path.join(work, "jit.json"))) if os.path.exists(os.path.join(work, "jit.json")) else {}
    sass = {}
    for l, (kernel, grid, block, m) in zip(ran, rows):
        if kernel != l["kernel"]:
            raise SystemExit(f"ncu row {kernel} is not launch {l['name']} ({l['kernel']})")
        unit = os.path.basename(l["ptx"])[:-4]
        if unit not in sass:
            p = os.path.join(work, "sass", unit + ".sass")
            sass[unit] = sass_hist(p) if os.path.exists(p) else {}
        fam, ops = sass[unit].get(l["kernel"], ({}, {}))
        hw, sw = split(m)
        src = os.path.join(stage, l["ptx"])
        fx = {
            "fixture": l["name"], "ptx": os.path.basename(l["ptx"]),
            "ptx_sha256": hashlib.sha256(open(src, "rb").read()).hexdigest(),
            "note": l["note"],
            "launch": {"kernel": l["kernel"], "grid": l["grid"], "block": l["block"],
                       "dynamic_smem_bytes": l["dynamic_smem_bytes"],
                       "params": [{k: p[k] for k in ("name", "type", "value", "arg", "align") if k in p}
                                  for p in l["params"]],
                       "tensor_maps": l.get("tensor_maps", []), "cli": l.get("cli", "")},
            "measured_ctas": "the one CTA (0,0,0)" if l["grid"] == [1, 1, 1] else "all CTAs of the grid",
            "counters": hw, "sass_counters": sw,
            "sass_static": {"families": fam, "opcodes": ops,
                            "from": "cuobjdump -sass of the CUBIN the driver JIT-compiled from this PTX (the module launched)"},
            "compiler": l.get("compiler", {}),
            "provenance": dict(prov, ncu_row_kernel=kernel, ncu_row_grid=grid, ncu_row_block=block,
                               script="scripts/research/hopper_fixtures/run_device.sh (harness_hopper.py, metrics.py); "
                                      "collect_hopper.py made this file"),
        }
        if os.environ.get("COLLECT_DIRECT") == "1":
            fx["sass_static"]["from"] = ("cuobjdump -sass of `ptxas -arch=sm_90a` (CUDA 13.0.88, on the H200 machine) of "
                                         "this PTX: the module was loaded with cuModuleLoadDataEx, which keeps no CUBIN")
            fx["load"] = ("cuModuleLoadDataEx on the PTX text (harness_hopper.py with HARNESS_DIRECT=1, as cudarc's "
                          "load_module): through cuLinkCreate/cuLinkAddData/cuLinkComplete + cuModuleLoadData this "
                          "kernel's launch fails with CUDA error 716 (misaligned address) in thread (0,0,0)")
            fx["provenance"]["script"] = "scripts/research/hopper_fixtures/run_fa3.sh (harness_hopper.py); collect_hopper.py"
            fx["provenance"]["date"] = os.environ.get("COLLECT_DATE", fx["provenance"]["date"])
        if l["name"] in correct:
            fx["correctness"] = dict(correct[l["name"]], how="check_correct.py: random inputs, output poisoned with "
                                     "NaN, ||out - ref|| / ||ref|| against float64 torch")
        if l["name"] in jit:
            fx["compiler"]["real_jit_same_code"] = jit[l["name"]].get("same_code")
        json.dump(fx, open(os.path.join(fixdir, l["name"] + ".json"), "w"), indent=1)
        c = fx["counters"]
        print(l["name"], "|", " ".join(str(c.get(k, "-")) for k in ISSUE12),
              "| gmma wf", c.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum", "-"),
              "| HGMMA", fam.get("HGMMA"), "UTMALDG", fam.get("UTMALDG"))
    # CuTe tutorial binaries.
    if os.environ.get("COLLECT_DIRECT") == "1":
        return
    for f in sorted(glob.glob(os.path.join(work, "cute", "ncu_*.csv"))):
        n = os.path.basename(f)[4:-4]
        rr = F.parse_ncu_csv(open(f, errors="replace").read())
        if not rr:
            print("no ncu rows for", n)
            continue
        kernel, grid, block, m = rr[0]
        hw, sw = split(m)
        s = sass_hist(os.path.join(work, "sass", f"cute_{n}.sass"))
        fams = {fn: v[0] for fn, v in s.items() if "gemm_device" in fn}
        run = open(os.path.join(work, "cute", f"run_{n}.txt"), errors="replace").read().strip().splitlines()
        args = "256 128 256 T N" if n == "sgemm_sm80" else "256 128 256"
        out = {"fixture": f"cute_{n}", "ptx": f"cute_{n}.ptx",
               "note": f"CuTe tutorial {n}: binary built on the H200 machine (nvcc 13.0, -gencode=arch=compute_90a,"
                       f"code=sm_90a -std=c++17 -O3 --expt-relaxed-constexpr), run as `{n} {args}`; the first "
                       "gemm_device launch measured (all CTAs of its grid). Its by-value struct parameters cannot "
                       "be replayed by the harness yet, so there is no launch file for the PTX.",
               "ncu_row": {"kernel": kernel, "grid": grid, "block": block},
               "counters": hw, "sass_counters": sw, "sass_static_of_binary": fams,
               "program_output_tail": run[-3:], "provenance": prov}
        json.dump(out, open(os.path.join(fixdir, f"cute_{n}.json"), "w"), indent=1)
        print(f"cute_{n}", grid, block, "|", " ".join(str(hw.get(k, sw.get(k, "-"))) for k in ISSUE12))
    if not os.path.exists(os.path.join(work, "probe_ok.json")):
        return
    # Probes.
    P = json.load(open(os.path.join(work, "probe_ok.json")))
    prow = F.parse_ncu_csv(open(os.path.join(work, "ncu_probe.csv"), errors="replace").read())
    ps = sass_hist(os.path.join(work, "sass", "hopper_probes.sass"))
    probes = {}
    for l, (kernel, grid, block, m) in zip(P, prow):
        if kernel != l["kernel"]:
            raise SystemExit(f"probe row {kernel} is not {l['name']}")
        probes[l["name"]] = {"kernel": kernel, "note": l["note"], "launch": {k: l[k] for k in (
            "grid", "block", "dynamic_smem_bytes", "params", "tensor_maps")},
            "sass_static": ps.get(kernel, ({}, {}))[1], "counters": m}
    json.dump({"provenance": dict(prov, script="scripts/research/hopper_fixtures/run_device.sh; gen_probes.py; collect_hopper.py"),
               "ptx": "hopper_probes.ptx",
               "ptx_sha256": hashlib.sha256(open(os.path.join(probedir, "hopper_probes.ptx"), "rb").read()).hexdigest(),
               "probes": probes}, open(os.path.join(probedir, "h200_probes.json"), "w"), indent=1)
    base = probes.get("probe_empty", {}).get("counters", {})
    moved = {}
    for name, p in probes.items():
        m = p["counters"]
        d = {k: v for k, v in m.items() if isinstance(v, (int, float)) and v != base.get(k) and not k.startswith(
            ("sm__cycles", "smsp__cycles", "gpc__cycles", "sys__cycles"))}
        moved[name] = {"note": p["note"], "differs_from_probe_empty": d}
    slopes = {}
    for name in probes:
        if name.endswith(("_n4", "_x4")):
            one = name[:-1] + "1"
            if one in probes:
                a, b = probes[one]["counters"], probes[name]["counters"]
                s = {k: (b[k] - a.get(k, 0)) / 3 for k in b if isinstance(b[k], (int, float))
                     and isinstance(a.get(k), (int, float)) and b[k] != a[k]}
                slopes[name[:-3]] = {k: v for k, v in sorted(s.items())}
    json.dump({"provenance": prov, "method": "differs_from_probe_empty: every counter whose value differs from the "
               "baseline kernel probe_empty (4 warps, no work); per_instruction: (value at n = 4 - value at n = 1) / 3, "
               "i.e. the cost of one more box / wgmma / mbarrier phase", "moved": moved, "per_instruction": slopes},
              open(os.path.join(probedir, "h200_probes_moved.json"), "w"), indent=1)
    cands = os.path.join(work, "candidates.txt")
    if os.path.exists(cands):
        lines = [l for l in open(os.path.join(work, "query_base.txt"), errors="replace")
                 if re.search(r"(shared|tma|gmma|utma|dsmem|mbar|syncs|l1tex__m_|inst_executed_pipe_)", l)]
        open(os.path.join(probedir, "ncu_query_gh100_candidates.txt"), "w").write(
            "# ncu --query-metrics --chip gh100 (ncu 2025.3.1, H200 machine), the lines naming shared, tma, gmma, "
            "utma, dsmem, mbar, syncs, l1tex__m_ or inst_executed_pipe_\n" + "".join(lines))
    print(len(probes), "probes")


if __name__ == "__main__":
    main()
