#!/usr/bin/env python3
"""Build, launch and collect the PTX fixtures of tests/data/ptx/ (run.sh calls these steps).

    fixtures.py prepare SRC WORK        nvcc (sm_90) every unit of SRC/manifest.json and Triton
                                        (sm_90a) every fixture of triton_fixtures.py into
                                        WORK/ptx/; the launch list WORK/launches.json
    fixtures.py launches FIXDIR WORK    WORK/launches.json from the committed fixture JSONs
    fixtures.py metrics QUERY.txt       the metric list for ncu (fixed counters plus every
                                        shared/ldsm/stsm/ldgsts/tensor counter the query names)
    fixtures.py validate WORK LIST      LIST without the metrics ncu refuses
    fixtures.py collect WORK OUT        per launch OUT/<launch>.json from WORK/ncu.csv,
                                        cuobjdump -sass of WORK/cubin/*.cubin and WORK/prov.json;
                                        OUT/<unit>.ptx the PTX launched

SRC is written by `cargo run --release --example ptx_fixture_sources -- SRC`.
"""
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# The counters `tilelab ptx --json` totals mean (issue 12), always requested.
COUNTERS = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "smsp__inst_executed_op_ldsm.sum",
    "smsp__inst_executed_pipe_tensor_op_hmma.sum",
    "sm__sass_inst_executed_op_ldgsts.sum",
]
# SASS-attributed (patched) counterparts and the whole-pipe totals, requested when they exist.
EXTRA = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared.sum",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum",
    "smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "smsp__sass_inst_executed_op_ldsm.sum",
    "smsp__sass_inst_executed_op_stsm.sum",
    "smsp__sass_inst_executed_op_ldgsts.sum",
    "smsp__inst_executed_op_stsm.sum",
    "smsp__inst_executed_op_ldgsts.sum",
    "smsp__inst_executed.sum",
]
DISCOVER = re.compile(
    r"^(smsp__sass_(l1tex_data_pipe_lsu_wavefronts_mem_shared|l1tex_data_bank_conflicts_pipe_lsu_mem_shared"
    r"|inst_executed_op_(shared|ldsm|stsm|ldgsts))\w*"
    r"|l1tex__data_(pipe_lsu_wavefronts|bank_conflicts_pipe_lsu)_mem_shared\w*"
    r"|smsp__inst_executed_op_(shared|ldsm|stsm|ldgsts)\w*"
    r"|sm__sass_inst_executed_op_(shared|ldsm|stsm|ldgsts)\w*"
    r"|smsp__inst_executed_pipe_tensor\w*)$")
SASS_FAMILIES = ["LDS", "STS", "LDSM", "STSM", "HMMA", "LDGSTS", "HGMMA", "LDGDEPBAR", "BAR", "SHFL"]


def entry_params(ptx, kernel):
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\((.*?)\)", ptx, re.S)
    if not m:
        raise SystemExit(f"fixtures: no .entry {kernel}")
    out = []
    for p in m.group(1).split(","):
        toks = re.sub(r"\.align\s+\d+", "", p).split()
        if toks and toks[0] == ".param":
            out.append({"name": toks[-1].split("[")[0], "type": toks[1]})
    return out


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, **kw)


def prepare(src, work):
    ptxdir = os.path.join(work, "ptx")
    os.makedirs(ptxdir, exist_ok=True)
    units = json.load(open(os.path.join(src, "manifest.json")))
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"

    def build(u):
        cmd = [nvcc, "-arch=sm_90", "-ptx", *u["nvcc_flags"], "-o", os.path.join(ptxdir, u["unit"] + ".ptx"),
               os.path.join(src, u["source"])]
        r = subprocess.run(cmd, capture_output=True, text=True)
        return u, cmd, r

    launches = []
    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        for u, cmd, r in ex.map(build, units):
            if r.returncode != 0:
                print(f"nvcc failed for {u['unit']}: {r.stderr.strip()[:400]}", flush=True)
                continue
            ptxf = os.path.join(ptxdir, u["unit"] + ".ptx")
            params = entry_params(open(ptxf).read(), u["kernel"])
            for l in u["launches"]:
                if len(l["params"]) != len(params):
                    raise SystemExit(f"{l['name']}: {len(l['params'])} values for {len(params)} PTX params")
                ps = [dict(p, value=v) for p, v in zip(params, l["params"])]
                launches.append({
                    "name": l["name"], "unit": u["unit"], "ptx": ptxf, "kernel": u["kernel"],
                    "grid": l["grid"], "block": l["block"], "dynamic_smem_bytes": l["dynamic_smem_bytes"],
                    "params": ps, "note": l["note"],
                    "compiler": {"tool": "nvcc", "command": " ".join(
                        ["nvcc", "-arch=sm_90", "-ptx", *u["nvcc_flags"], "-o", u["unit"] + ".ptx", u["source"]])},
                })
    sys.path.insert(0, HERE)
    import triton_fixtures as T
    for name in T.FIXTURES:
        k, *rest = T.compile_fixture(name)
        ptxf = os.path.join(ptxdir, name + ".ptx")
        with open(ptxf, "w") as f:
            f.write(k.asm["ptx"])
        l = T.launch_of(name, k, *rest)
        launches.append({
            "name": name, "unit": name, "ptx": ptxf, "kernel": l["kernel"], "grid": l["grid"],
            "block": l["block"], "dynamic_smem_bytes": l["dynamic_smem_bytes"], "params": l["params"],
            "note": l["what"], "compiler": l["compiler"],
        })
        print(name, T.ptx_histogram(k.asm["ptx"]), flush=True)
    json.dump(launches, open(os.path.join(work, "launches.json"), "w"), indent=1)
    print(f"{len(launches)} launches", flush=True)


def launches_from(fixdir, work):
    """WORK/launches.json from the fixture JSONs of FIXDIR (tests/data/ptx), in file-name order."""
    import glob
    out = []
    for f in sorted(glob.glob(os.path.join(fixdir, "*.json"))):
        d = json.load(open(f))
        l = d["launch"]
        out.append(dict(name=d["fixture"], unit=d["ptx"][:-4], ptx=os.path.join(fixdir, d["ptx"]),
                        kernel=l["kernel"], grid=l["grid"], block=l["block"],
                        dynamic_smem_bytes=l["dynamic_smem_bytes"], params=l["params"],
                        note=d["note"], compiler=d["compiler"]))
    os.makedirs(work, exist_ok=True)
    json.dump(out, open(os.path.join(work, "launches.json"), "w"), indent=1)
    print(f"{len(out)} launches")


def metrics(query_file):
    have = set()
    for line in open(query_file, errors="replace"):
        m = re.match(r"^\s*([a-z0-9]+__[a-z0-9_]+)\b", line)
        if m:
            have.add(m.group(1))
    wanted = list(COUNTERS)
    for m in EXTRA:
        if not have or m[:-4] in have:
            wanted.append(m)
    for base in sorted(have):
        if DISCOVER.match(base) and base + ".sum" not in wanted:
            wanted.append(base + ".sum")
    print(",".join(wanted[:64]))


def parse_ncu_csv(text):
    """[(kernel, grid, block, {metric: value})] in launch order."""
    import csv
    rows = [l for l in text.splitlines() if l.startswith('"')]
    if not rows:
        return []
    rd = list(csv.reader(rows))
    h = rd[0]
    ix = {c: i for i, c in enumerate(h)}
    by_id = {}
    for r in rd[1:]:
        if len(r) != len(h) or r[ix["ID"]] == "ID":
            continue
        i = int(r[ix["ID"]])
        e = by_id.setdefault(i, (r[ix["Kernel Name"]], r[ix.get("Grid Size", 0)], r[ix.get("Block Size", 0)], {}))
        v = r[ix["Metric Value"]].replace(",", "")
        try:
            e[3][r[ix["Metric Name"]]] = int(v) if re.fullmatch(r"-?\d+", v) else float(v)
        except ValueError:
            e[3][r[ix["Metric Name"]]] = v
    return [by_id[i] for i in sorted(by_id)]


def sass_histogram(cubin, cuobjdump):
    r = sh([cuobjdump, "-sass", cubin])
    ops = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if m:
            ops[m.group(1)] = ops.get(m.group(1), 0) + 1
    fam = {f: 0 for f in SASS_FAMILIES}
    for op, n in ops.items():
        head = op.split(".")[0]
        if head in fam:
            fam[head] += n
    keep = {op: n for op, n in sorted(ops.items()) if op.split(".")[0] in fam}
    return fam, keep, r.returncode


def collect(work, out):
    os.makedirs(out, exist_ok=True)
    launches = json.load(open(os.path.join(work, "launches.json")))
    prov = json.load(open(os.path.join(work, "prov.json")))
    rows = parse_ncu_csv(open(os.path.join(work, "ncu.csv"), errors="replace").read())
    if len(rows) != len(launches):
        print(f"WARNING: ncu gave {len(rows)} launches for {len(launches)} launched", flush=True)
    cuobjdump = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    sass = {}
    measured = {}
    for i, l in enumerate(launches):
        unit = l["unit"]
        if unit not in sass:
            cub = os.path.join(work, "cubin", unit + ".cubin")
            sass[unit] = sass_histogram(cub, cuobjdump) if os.path.exists(cub) else ({}, {}, -1)
            li = os.path.join(work, "cubin", unit + ".lineinfo.cubin")
            if os.path.exists(li):
                sass[unit] = sass[unit] + (sass_histogram(li, cuobjdump)[1] == sass[unit][1],)
            shutil.copy(l["ptx"], os.path.join(out, unit + ".ptx"))
        kernel, grid, block, m = rows[i] if i < len(rows) else ("?", "?", "?", {})
        if kernel != "?" and kernel != l["kernel"]:
            raise SystemExit(f"ncu row {i} is {kernel}, launch {l['name']} is {l['kernel']}")
        # "counters": issue 12's nine (what `tilelab ptx` totals mean) and the other hardware
        # counters; "sass_counters": the rest of the SASS-attributed (patched) ones.
        patched = lambda k: k.startswith(("smsp__sass", "sm__sass")) and k not in COUNTERS
        hw = {k: v for k, v in m.items() if not patched(k)}
        sw = {k: v for k, v in m.items() if patched(k)}
        fam, ops, rc = sass[unit][:3]
        fx = {
            "fixture": l["name"],
            "ptx": unit + ".ptx",
            "ptx_sha256": hashlib.sha256(open(l["ptx"], "rb").read()).hexdigest(),
            "note": l["note"],
            "launch": {
                "kernel": l["kernel"], "grid": l["grid"], "block": l["block"],
                "dynamic_smem_bytes": l["dynamic_smem_bytes"],
                "params": [{k: p[k] for k in ("name", "type", "value", "arg") if k in p} for p in l["params"]],
            },
            "measured_ctas": "all CTAs of the grid" if l["grid"] != [1, 1, 1] else "the one CTA (0,0,0)",
            "counters": hw,
            "sass_counters": sw,
            "sass_static": {"families": fam, "opcodes": ops,
                            "from": "cuobjdump -sass of the CUBIN the driver JIT-compiled from this PTX (the module launched)"},
            "compiler": l["compiler"],
            "provenance": dict(prov, ncu_row_kernel=kernel, ncu_row_grid=grid, ncu_row_block=block),
        }
        if len(sass[unit]) > 3:
            fx["sass_static"]["lineinfo_build_same_sass"] = sass[unit][3]
        measured[l["name"]] = fx
    # Causal FA2: CTA (0,0,0) of grid (g,1,1) = launch(grid g) - launch(grid g-1).
    for name, fx in measured.items():
        m = re.match(r"(.*)_grid(\d+)$", name)
        if not m:
            continue
        other = f"{m.group(1)}_grid{int(m.group(2)) - 1}"
        if other in measured:
            a, b = fx, measured[other]
            diff = {k: a["counters"][k] - b["counters"].get(k, 0) for k in a["counters"]
                    if isinstance(a["counters"][k], (int, float))}
            sdiff = {k: a["sass_counters"][k] - b["sass_counters"].get(k, 0) for k in a["sass_counters"]
                     if isinstance(a["sass_counters"][k], (int, float))}
            fx["cta0_by_difference"] = {
                "cta": [0, 0, 0], "grid": a["launch"]["grid"], "minus": other,
                "counters": diff, "sass_counters": sdiff,
                "method": f"this launch's counters minus those of {other} (grid one CTA shorter); "
                          "CTA x computes query block gridDim.x-1-x, so the difference is the CTA that "
                          "walks every key block",
            }
    for name, fx in measured.items():
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(fx, f, indent=1)
    key = ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
           "smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
           "smsp__inst_executed_op_ldsm.sum", "smsp__inst_executed_pipe_tensor_op_hmma.sum",
           "sm__sass_inst_executed_op_ldgsts.sum"]
    print("launch | ld_wf st_wf ld_conf st_conf | LDS STS LDSM HMMA LDGSTS")
    for name, fx in measured.items():
        c = fx["counters"]
        print(name, "|", " ".join(str(c.get(k, "-")) for k in key))


def validate(work, metric_list):
    """Drops the metrics ncu does not know (it refuses a whole run for one unknown name): one
    launch of the smallest fixture per try. Prints the list that ncu accepted."""
    ms = metric_list.split(",")
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    first = json.load(open(os.path.join(work, "launches.json")))[0]["name"]
    for _ in range(8):
        r = sh([ncu, "--clock-control", "none", "--csv", "--metrics", ",".join(ms), sys.executable,
                os.path.join(HERE, "harness.py"), os.path.join(work, "launches.json"), "--only", first])
        text = r.stdout + r.stderr
        errs = [l for l in text.splitlines() if "ERROR" in l]
        if not errs:
            break
        bad = [m for m in ms if any(m in e or m[:-4] in e for e in errs)]
        sys.stderr.write("ncu refused: " + " | ".join(errs)[:600] + "\n")
        if not bad:
            ms = [m for m in ms if m in COUNTERS]
            break
        ms = [m for m in ms if m not in bad]
    print(",".join(ms))


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "prepare":
        prepare(sys.argv[2], sys.argv[3])
    elif cmd == "launches":
        launches_from(sys.argv[2], sys.argv[3])
    elif cmd == "metrics":
        metrics(sys.argv[2])
    elif cmd == "validate":
        validate(sys.argv[2], sys.argv[3])
    elif cmd == "collect":
        collect(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
