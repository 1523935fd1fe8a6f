#!/usr/bin/env python3
"""Correctness of fixtures on the GPU machine (torch): the launch of each fixture as the harness
makes it, but with random inputs in the buffers, the output poisoned (NaN) before the launch and
compared with a float64 torch reference by ||out - ref|| / ||ref||.

    python3 check_correct.py LAUNCHES.json OUT.json [NAME ...]   (only these; run one per process:
                                                     a failed launch spoils the context)

Checks: hand_tma_wgmma_pipe (C = A . Bt^T, f32 out, A and Bt f16 [64, 256] through the tensor
maps), hand_cluster_mc_wgmma (a cluster of 2: C = A . Bt^T [64, 128] and the exchanged X [2, 128]), tt_matmul_tma (C = A . B^T through host-descriptor maps), tt_matmul_f16_8w (pointers),
tt_attn_fwd_d64 / _d128 (program (0, 0): rows 0..127 of softmax(Q K^T sm_scale) V), and
fa3_*_s512 (all of O; full or causal). It validates the tensor maps of the launch files: a wrong
box, stride or swizzle gives a wrong answer.
"""
import json
import math
import sys

import torch

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
import harness_hopper as HH  # noqa: E402


def rel(out, ref):
    out, ref = out.double(), ref.double()
    if torch.isnan(out).any():
        return float("nan")
    return float((out - ref).norm() / ref.norm())


def attn_ref(q, k, v, scale, causal, rows=None):
    s = (q.double() @ k.double().T) * scale
    if causal:
        n = s.shape[0]
        s = s.masked_fill(torch.triu(torch.ones(n, s.shape[1], dtype=torch.bool, device=s.device), 1), -math.inf)
    return torch.softmax(s, -1) @ v.double()


def main():
    launches = {l["name"]: l for l in json.load(open(sys.argv[1]))}
    if len(sys.argv) > 3:
        launches = {n: l for n, l in launches.items() if n in sys.argv[3:]}
    torch.manual_seed(27)
    torch.cuda.init()
    torch.empty(1, device="cuda")
    cuda = HH.H.Cuda()
    mods, res = {}, {}

    def run(name, bufs, out, ref, tol):
        l = launches[name]
        if l["ptx"] not in mods:
            mods[l["ptx"]] = HH.load_module(cuda, l["ptx"])
        HH.launch(cuda, mods[l["ptx"]], l, lambda i, kind: bufs[i].data_ptr() if i in bufs else None)
        torch.cuda.synchronize()
        e = rel(out(), ref)
        res[name] = {"relative_error": e, "tolerance": tol, "pass": bool(e == e and e < tol)}
        print(f"{name}: rel err {e:.3e} (tol {tol}) {'PASS' if res[name]['pass'] else 'FAIL'}", flush=True)

    dev = "cuda"
    if "hand_tma_wgmma_pipe" in launches:
        a = torch.randn(64, 256, device=dev).half()
        bt = torch.randn(64, 256, device=dev).half()
        c = torch.full((64, 64), float("nan"), device=dev)
        run("hand_tma_wgmma_pipe", {0: a, 1: bt, 2: c}, lambda: c, a.double() @ bt.double().T, 1e-5)
    if "hand_cluster_mc_wgmma" in launches:
        # C = A . Bt^T (64 x 128); X[r][t] = C[16 w + lane / 4][64 (r ^ 1) + 2 (lane % 4)], t = 32 w + lane:
        # what the peer CTA sent through distributed shared memory (gen_cluster.py).
        a = torch.randn(64, 64, device=dev).half()
        bt = torch.randn(128, 64, device=dev).half()
        c = torch.full((64, 128), float("nan"), device=dev)
        x = torch.full((2, 128), float("nan"), device=dev)
        ref = a.double() @ bt.double().T
        t = torch.arange(128)
        rows, cols = 16 * (t // 32) + (t % 32) // 4, 2 * (t % 4)
        xref = torch.stack([ref[rows, 64 * (r ^ 1) + cols] for r in (0, 1)])
        run("hand_cluster_mc_wgmma", {0: a, 1: bt, 2: c, 3: x}, lambda: torch.cat([c.flatten(), x.flatten()]),
            torch.cat([ref.flatten(), xref.flatten()]), 1e-5)
    if "tt_matmul_tma" in launches:
        a = torch.randn(128, 256, device=dev).half()
        b = torch.randn(128, 256, device=dev).half()
        c = torch.full((128, 128), float("nan"), device=dev).half()
        run("tt_matmul_tma", {0: a, 5: b, 10: c}, lambda: c, a.double() @ b.double().T, 2e-3)
    for nm in ("tt_matmul_f16_8w", "tt_matmul_f16_4w"):
        if nm in launches:
            n = 256 if nm.endswith("8w") else 128
            a = torch.randn(128, 256, device=dev).half()
            b = torch.randn(256, n, device=dev).half()
            c = torch.full((128, n), float("nan"), device=dev).half()
            run(nm, {0: a, 1: b, 2: c}, lambda: c, a.double() @ b.double(), 2e-3)
    for d in (64, 128):
        nm = f"tt_attn_fwd_d{d}"
        if nm in launches:
            q, k, v = (torch.randn(512, d, device=dev).half() for _ in range(3))
            o = torch.full((512, d), float("nan"), device=dev).half()
            m = torch.zeros(512, device=dev)
            run(nm, {1: m, 2: q, 7: k, 12: v, 17: o}, lambda: o[:128], attn_ref(q[:128], k, v, 0.125, False), 2e-3)
    for d in (64, 128):
        for causal, bn in ((False, ""), (True, ""), (False, "_bn64")):
            nm = f"fa3_d{d}_{'causal' if causal else 'full'}_f16{bn}_s512"
            if nm in launches:
                q, k, v = (torch.randn(512, d, device=dev).half() for _ in range(3))
                o = torch.full((512, d), float("nan"), device=dev).half()
                run(nm, {0: q, 1: k, 2: v, 3: o}, lambda: o, attn_ref(q, k, v, 0.125, causal), 2e-3)
    json.dump(res, open(sys.argv[2], "w"), indent=1)


if __name__ == "__main__":
    main()
