#!/usr/bin/env python3
"""`tilelab verify --ptx` on every fixture of tests/data/ptx/ (on the GPU machine):

    python3 verify_all.py TILELAB FIXDIR OUTDIR [SECONDS]

One run per launch file, with the launch the file records (kernel, grid, block, dynamic shared
memory, every non-pointer parameter as --arg INDEX=VALUE). First one launch of every PTX module,
cheapest grids first, then the other launches, until SECONDS (default 170) have passed. Writes
OUTDIR/<launch>.json (verify's --json-out), OUTDIR/<launch>.txt (its table) and prints one line
per run: exit code (0 agree, 1 a counter or line disagrees, 2 input error), passed/failed/skipped.
"""
import json
import os
import subprocess
import sys
import time


def main():
    exe, fixdir, out = sys.argv[1:4]
    budget = float(sys.argv[4]) if len(sys.argv) > 4 else 170.0
    os.makedirs(out, exist_ok=True)
    fx = []
    for f in sorted(os.listdir(fixdir)):
        if f.endswith(".json"):
            d = json.load(open(os.path.join(fixdir, f)))
            g = d["launch"]["grid"]
            fx.append((g[0] * g[1] * g[2], d))
    seen, first, rest = set(), [], []
    for n, d in sorted(fx, key=lambda t: t[0]):
        (rest if d["ptx"] in seen else first).append(d)
        seen.add(d["ptx"])
    t0 = time.time()
    print("launch | exit | passed failed skipped | seconds | first failing rows", flush=True)
    for d in first + rest:
        if time.time() - t0 > budget:
            print(f"{d['fixture']} | not run (time budget)", flush=True)
            continue
        l = d["launch"]
        cmd = [exe, "verify", "--ptx", os.path.join(fixdir, d["ptx"]), "--kernel", l["kernel"],
               "--grid", ",".join(map(str, l["grid"])), "--block", ",".join(map(str, l["block"])),
               "--json-out", os.path.join(out, d["fixture"] + ".json")]
        if l["dynamic_smem_bytes"]:
            cmd += ["--dynamic-smem", str(l["dynamic_smem_bytes"])]
        for i, p in enumerate(l["params"]):
            if p["value"] != "pointer":
                cmd += ["--arg", f"{i}={p['value']}"]
        s = time.time()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            rc, text = r.returncode, r.stdout + r.stderr
        except subprocess.TimeoutExpired as e:
            rc, text = "timeout", (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        dt = time.time() - s
        open(os.path.join(out, d["fixture"] + ".txt"), "w").write(" ".join(cmd) + "\n" + text)
        tally, bad = "-", []
        try:
            j = json.load(open(os.path.join(out, d["fixture"] + ".json")))
            tally = f"{j['passed']} {j['failed']} {j['skipped']}"
            bad = [f"{c['name']}: {c['simulated']} vs {c['measured']}" for c in j["checks"] if c["verdict"] == "fail"][:3]
        except (OSError, ValueError, KeyError):
            bad = [text.strip().splitlines()[-1][:160] if text.strip() else "no output"]
        print(f"{d['fixture']} | {rc} | {tally} | {dt:.1f} | {'; '.join(bad)}", flush=True)


if __name__ == "__main__":
    main()
