#!/usr/bin/env python3
"""tests/data/ptx_hopper/ptx_manifest.json: per PTX its SHA-256, .version/.target, entries and the
command that made it.  python3 manifest.py CUTLASS_DIR NVCC"""
import glob
import hashlib
import json
import os
import re
import subprocess
import sys

F = "tests/data/ptx_hopper"
P = "tests/data/hopper_probes"


def main():
    cutlass, nvcc = sys.argv[1], sys.argv[2]
    commit = subprocess.run(["git", "-C", cutlass, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    if not commit and os.path.exists(os.path.join(cutlass, "COMMIT")):
        commit = open(os.path.join(cutlass, "COMMIT")).read().strip()
    nv = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-2:]
    out = {}
    for f in sorted(glob.glob(F + "/*.ptx") + glob.glob(P + "/*.ptx")):
        t = open(f).read()
        n = os.path.basename(f)
        e = {"sha256": hashlib.sha256(t.encode()).hexdigest(), "bytes": len(t),
             "version": re.search(r"^\.version\s+(\S+)", t, re.M).group(1),
             "target": re.search(r"^\.target\s+(\S+)", t, re.M).group(1),
             "entries": re.findall(r"\.entry\s+(\w+)", t)}
        if n.startswith("tt_"):
            e["command"] = f"python3 scripts/research/hopper_fixtures/triton_hopper.py {F} (triton 3.6.0, GPUTarget('cuda', 90, 32))"
        elif n.startswith("fa3_"):
            m = re.match(r"fa3_d(\d+)_(full|causal)_f16", n)
            e["command"] = (f"nvcc -gencode=arch=compute_90a,code=sm_90a -ptx -use_fast_math -DFA_D={m.group(1)} "
                            f"-DFA_CAUSAL={int(m.group(2) == 'causal')} -DFA_BF16=0 -o {n} kernels/fa3_fwd.cu")
            e["nvcc"] = " ".join(nv)
        elif n.startswith("cute_"):
            src = {"cute_sgemm_sm80.ptx": "examples/cute/tutorial/sgemm_sm80.cu",
                   "cute_wgmma_sm90.ptx": "examples/cute/tutorial/hopper/wgmma_sm90.cu",
                   "cute_wgmma_tma_sm90.ptx": "examples/cute/tutorial/hopper/wgmma_tma_sm90.cu"}[n]
            e["command"] = (f"nvcc -arch=sm_90a -std=c++17 -I include -I tools/util/include -I <cccl> "
                            f"--expt-relaxed-constexpr -ptx -o {n} {src} (in the CUTLASS checkout)")
            e["cutlass"] = {"repository": "https://github.com/NVIDIA/cutlass", "commit": commit, "source": src}
            e["nvcc"] = " ".join(nv)
        elif n.startswith("hand_cluster_"):
            e["command"] = f"python3 scripts/research/hopper_fixtures/gen_cluster.py {F}"
        elif n.startswith("hand_"):
            e["command"] = f"python3 scripts/research/hopper_fixtures/gen_handwritten.py {F}"
        else:
            e["command"] = f"python3 scripts/research/hopper_fixtures/gen_probes.py {P}"
        out[n] = e
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
