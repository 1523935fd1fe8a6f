#!/usr/bin/env python3
"""Runs `tilelab verify --launch` on the H200 for Hopper fixtures of tests/data/ptx_hopper/.

Usage (on the GPU machine, from the repository root or a staging folder holding
tests/data/ptx_hopper):
    python3 scripts/research/hopper_fixtures/verify_ptx_device.py TILELAB OUTDIR NAME...
Each NAME is a measured launch tests/data/ptx_hopper/NAME.json; its tilelab launch file
tests/data/ptx_hopper/launch/NAME.json (docs/launch-files.md) gives the PTX file, kernel, grid,
block, dynamic shared memory and parameter values. Writes OUTDIR/NAME.json (verify's
--json-out), and OUTDIR/NAME.txt (the command, the table and its exit code).
"""
import shlex
import subprocess
import sys


def main():
    tl, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    for n in names:
        cmd = [tl, "verify", "--launch", f"tests/data/ptx_hopper/launch/{n}.json",
               "--json-out", f"{out}/{n}.json"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=100)
        with open(f"{out}/{n}.txt", "w") as f:
            f.write(" ".join(shlex.quote(c) for c in cmd) + "\n")
            f.write(r.stdout + r.stderr + f"\nexit {r.returncode}\n")
        last = (r.stdout.strip().splitlines() or [""])[-1]
        print(f"{n}: exit {r.returncode}: {last}", flush=True)


if __name__ == "__main__":
    main()
