#!/usr/bin/env python3
"""The provenance record of one device run (card, driver, CUDA, ncu, Triton, torch, date, the
command and script, the commit in the staging folder's COMMIT file), as JSON:

    python3 provenance.py OUT.json "SCRIPT DESCRIPTION"
"""
import datetime
import json
import subprocess
import sys


def out(c):
    r = subprocess.run(c, shell=True, capture_output=True, text=True)
    return (r.stdout + r.stderr).strip()


def main():
    p = {"card": out("nvidia-smi --query-gpu=name --format=csv,noheader"),
         "driver": out("nvidia-smi --query-gpu=driver_version --format=csv,noheader"),
         "cuda": out("nvcc --version | tail -2 | head -1"), "ncu": out("ncu --version | tail -1"),
         "triton": out("python3 -c 'import triton; print(triton.__version__)'"),
         "torch": out("python3 -c 'import torch; print(torch.__version__)'"),
         "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
         "command": "ncu --clock-control none --csv --print-units base --metrics <list> python3 harness_hopper.py <launches>",
         "script": sys.argv[2],
         "git_commit": open("COMMIT").read().strip()}
    json.dump(p, open(sys.argv[1], "w"), indent=1)
    print(p)


if __name__ == "__main__":
    main()
