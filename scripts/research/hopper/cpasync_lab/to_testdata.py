#!/usr/bin/env python3
"""Turns what cpasync_lab/run.sh measured on the H200 (ncu_{a,...,f}.csv with the
requests_{a,...,f}.txt they measured, unpacked from cpasync_lab.tar.gz into DIR; a part whose CSV
is missing was not run and is skipped) into a tilelab record file in the `--save-hopper` format
(`{"measured": [...], "provenance": {...}}`): one record per launch, named `<request>#<launch>`
(cold0.., warm0..), with ncu's counters, plus `warm` (true: the sources were loaded into L1 by the
same warp before the copy).

    python3 scripts/research/hopper/cpasync_lab/to_testdata.py DIR OUT.json DATE_UTC [COMMIT]

COMMIT: the commit whose gen.py wrote the requests (default f5cd6e2, the first run's).
tests/data/h200_cpasync_lab_2026-12-01.json: the first run (parts a, c; 08:15 UTC);
tests/data/h200_cpasync_lab_d_2026-12-01.json: the second (parts b, d; 08:48 UTC, COMMIT
246b2d0c7f69c420e4dec38eb404285949467421); tests/data/h200_cpasync_lab_e_2026-12-01.json: the
third (part e, with TMO=300; COMMIT: the commit that added part e to gen.py);
tests/data/h200_cpasync_lab_f_2026-12-01.json: the fourth (part f, 16:01 UTC, TMO=200; COMMIT: the
commit that added part f to gen.py); tests/data/h200_cpasync_lab_g_2026-12-01.json: the fifth
(part g, cp.async.cg, 16:57 UTC, TMO=200).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from cpasync_probe_results import launches  # noqa: E402


def main():
    d, out, date = sys.argv[1:4]
    commit = sys.argv[4] if len(sys.argv) > 4 else "f5cd6e29423d3c0d6aafe849efb69df936b3e65e"
    log = open(os.path.join(d, "log.txt")).read().splitlines()
    driver = log[1].split(",")[1].strip()
    cuda = log[2].split("release")[1].split(",")[0].strip()
    ncu = log[4].split()[1]
    parts = [p for p in "abcdefg" if os.path.exists(os.path.join(d, f"ncu_{p}.csv"))]
    measured = []
    for r in launches(d):
        measured.append({
            "name": f"{r['name']}#{r['rep']}",
            "instruction": f"cp.async.{'cg' if r.get('cg') else 'ca'}.shared.global.{r['size']}",
            "lane_byte_offsets": r["dst"],
            "active_mask": r["mask"],
            "global_addresses": r["src"],
            "warm": bool(r["warm"]),
            "counters": {k: v for k, v in sorted(r["counters"].items())},
        })
    prov = {
        "card": "NVIDIA H200 (sm_90)",
        "driver": driver,
        "cuda": cuda,
        "tools": {"ncu": ncu},
        "date": date,
        "command": f"PARTS=\"{' '.join(parts)}\"{' TMO=300' if parts == ['e'] else ' TMO=200' if parts in (['f'], ['g']) else ''} bash scripts/research/hopper/cpasync_lab/run.sh (per part: ncu --clock-control none "
                   "--cache-control all --csv --metrics <11 metrics> -k regex:cpasync_lab "
                   "./lab requests_<part>.txt)",
        "generator": "scripts/research/hopper/cpasync_lab/gen.py tests/data/h200_cpasync_verify_2026-11-30.json "
                     "tests/data/h200_cpasync_verify_seed7_2026-11-30.json (part a: structured sets, cold x3, "
                     "warm x2; part b: old.* = earlier records whose W != S, cold x3, warm x1; part c: "
                     "rand13.* = seed 13, cold x2; part d: old.* and rand13.*, warm x2; part e: e.* = issue 13's "
                     "targeted probe and rand29.* = 60 fresh random spread requests of seed 29, held out, "
                     "each cold x1 then warm x1; part f: f.grp.* and rand31.* = requests pressing on the "
                     "upper bound of the SASS-attributed count, seed 31, cold x1; part g: g.* = cp.async.cg 16 B "
                     "(kind 3), destination or source order varied, cold x1, the first ten x2); kernel "
                     "scripts/research/hopper/cpasync_lab/cpasync_lab.cu",
        "commit": commit,
        "parts": parts,
        "note": "parts not in this run: " + (", ".join(p for p in "abcdefg" if p not in parts) or "none"),
    }
    json.dump({"measured": measured, "provenance": prov}, open(out, "w"), indent=None, separators=(",", ":"))
    print(f"{len(measured)} launches ({', '.join(parts)}) -> {out}")


if __name__ == "__main__":
    main()
