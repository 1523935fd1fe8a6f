#!/usr/bin/env python3
"""Launch every entry of LAUNCHES.json once, each in its own process (a failed launch leaves a
context unusable), and write the ones that ran to OUT.json; print the error of the others.

    python3 preflight.py LAUNCHES.json OUT.json [SECONDS_EACH]
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    src, out = sys.argv[1], sys.argv[2]
    t = float(sys.argv[3]) if len(sys.argv) > 3 else 30
    L = json.load(open(src))
    ok, res = [], {}
    for l in L:
        try:
            r = subprocess.run([sys.executable, os.path.join(HERE, "harness_hopper.py"), src, "--only", l["name"]],
                               capture_output=True, text=True, timeout=t)
            msg = (r.stdout + r.stderr).strip().splitlines()
            res[l["name"]] = {"rc": r.returncode, "out": msg[-1] if msg else ""}
        except subprocess.TimeoutExpired:
            res[l["name"]] = {"rc": "timeout", "out": f"no return within {t} s"}
        if res[l["name"]]["rc"] == 0:
            ok.append(l)
        else:
            print(f"FAILED {l['name']}: {res[l['name']]}", flush=True)
    json.dump(ok, open(out, "w"), indent=1)
    json.dump(res, open(out[:-5] + ".preflight.json", "w"), indent=1)
    print(f"{len(ok)} of {len(L)} launches ran", flush=True)


if __name__ == "__main__":
    main()
