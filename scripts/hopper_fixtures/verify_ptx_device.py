#!/usr/bin/env python3
"""Runs `tilelab verify --ptx` on the H200 for Hopper fixtures of tests/data/ptx_hopper/.

Usage (on the GPU machine, from the repository root):
    python3 scripts/hopper_fixtures/verify_ptx_device.py TILELAB OUTDIR NAME...
Each NAME is a launch file tests/data/ptx_hopper/NAME.json; its `launch` (kernel, grid, block,
dynamic_smem_bytes, cli) gives the flags. Writes OUTDIR/NAME.json (verify's --json-out), and
OUTDIR/NAME.txt (the table and its exit code).
"""
import json
import shlex
import subprocess
import sys


def main():
    tl, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    for n in names:
        d = json.load(open(f"tests/data/ptx_hopper/{n}.json"))
        l = d["launch"]
        ptx = f"tests/data/ptx_hopper/{d.get('ptx', n + '.ptx')}"
        cmd = [tl, "verify", "--ptx", ptx, "--kernel", l["kernel"],
               "--grid", ",".join(map(str, l["grid"])),
               "--block", ",".join(map(str, l["block"])),
               "--dynamic-smem", str(l["dynamic_smem_bytes"]),
               "--json-out", f"{out}/{n}.json"] + shlex.split(l.get("cli") or "")
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=100)
        with open(f"{out}/{n}.txt", "w") as f:
            f.write(" ".join(shlex.quote(c) for c in cmd) + "\n")
            f.write(r.stdout + r.stderr + f"\nexit {r.returncode}\n")
        last = (r.stdout.strip().splitlines() or [""])[-1]
        print(f"{n}: exit {r.returncode}: {last}", flush=True)


if __name__ == "__main__":
    main()
