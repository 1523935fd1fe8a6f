#!/usr/bin/env python3
"""Bounds on ncu's SASS-attributed cp.async.ca wavefronts for spread sources (issue 13; the model
is SassBounds in crates/tilelab-core/src/sim/isa/bank.rs, written independently here). Per unit: R = most lane words read
from one L1 bank, W = most lane words written to one shared bank, G = first-fit read groups (no L1
bank twice in a group); lo = max(R, W), hi = G + W - 1; summed over units. Prints, per measured
file, the distinct spread requests and where S lies (the table of docs/wavefront-model.md,
"Bounds on the SASS-attributed count"); exits 1 if a request lies outside.

    python3 scripts/research/hopper/cpasync_bounds.py
"""
import json
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpasync_hypotheses import one_line, units  # noqa: E402
import cpasync_s_research as sr  # noqa: E402

FILES = [
    ("f1", "h200_cpasync_2026-11-30.json"),
    ("s11", "h200_cpasync_verify_2026-11-30.json"),
    ("s7", "h200_cpasync_verify_seed7_2026-11-30.json"),
    ("s21", "h200_cpasync_verify_seed21_2026-12-01.json"),
    ("parts a, c", "h200_cpasync_lab_2026-12-01.json"),
    ("parts b, d", "h200_cpasync_lab_d_2026-12-01.json"),
    ("part e", "h200_cpasync_lab_e_2026-12-01.json"),
    ("part f", "h200_cpasync_lab_f_2026-12-01.json"),
    ("s43", "h200_cpasync_verify_seed43_2026-12-01.json"),
]


def bounds(r):
    lo = hi = 0
    for u in units(r):
        words = r["size"] // 4
        reads = Counter((r["src"][l] // 4 + i) % 32 for l in u for i in range(words))
        writes = Counter((r["dst"][l] // 4 + i) % 32 for l in u for i in range(words))
        groups = len(sr.grp(r, u, "ff"))
        lo += max(max(reads.values()), max(writes.values()))
        hi += groups + max(writes.values()) - 1
    return lo, hi


def main():
    print("| file | spread requests | within the bounds | lo = hi | S = lo < hi | S = hi > lo | between |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    everything, outside = set(), 0
    for tag, f in FILES:
        data = json.load(open(sr.D + f))
        seen = {}
        for x in data.get("measured") or data["records"]:
            if not x["instruction"].startswith("cp.async.ca"):
                continue
            src = x.get("global_addresses") or [x["src_stride"] * l for l in range(32)]
            r = sr._rec(x["name"], x["instruction"], x.get("active_mask"), src, x["lane_byte_offsets"], 0, 0)
            if one_line(r):
                continue
            c = x["counters"]
            s = c.get(sr.S_K, c.get("sass_wavefronts_ldgsts"))
            key = (r["size"], r["mask"], tuple(r["src"]), tuple(r["dst"]))
            seen.setdefault(key, (r, set()))[1].add(int(s))
        n = Counter()
        for key, (r, ss) in seen.items():
            assert len(ss) == 1, r["name"]  # S is the same in every launch of a request
            s, (lo, hi) = ss.pop(), bounds(r)
            if not lo <= s <= hi:
                outside += 1
                print(f"  OUTSIDE: {r['name']} S {s} bounds {lo}..{hi}")
            n["within"] += lo <= s <= hi
            n["exact"] += lo == hi
            n["lo"] += s == lo < hi
            n["hi"] += s == hi > lo
            n["between"] += lo < s < hi
        everything |= set(seen)
        print(f"| {tag} `{f}` | {len(seen)} | {n['within']} | {n['exact']} | {n['lo']} | {n['hi']} | {n['between']} |")
    print(f"{len(everything)} distinct spread requests over all files, {outside} outside the bounds")
    sys.exit(1 if outside else 0)


if __name__ == "__main__":
    main()
