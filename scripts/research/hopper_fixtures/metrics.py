#!/usr/bin/env python3
"""Metric lists for the Hopper runs, from `ncu --query-metrics --chip gh100` output.

    python3 metrics.py fixtures QUERY_BASE.txt [QUERY_SUFFIX.txt]   the fixtures' list
    python3 metrics.py probes   QUERY_BASE.txt [QUERY_SUFFIX.txt]   the probes' (wider) list
    python3 metrics.py candidates QUERY_BASE.txt                    every candidate base name,
                                                                    one a line, for the log
    python3 metrics.py validate LAUNCHES.json NAME LIST             LIST less what ncu refuses

fixtures: the counters of tests/data/ptx fixtures (fixtures.py COUNTERS, EXTRA, DISCOVER) plus
every counter whose name mentions gmma, tma, utma, dsmem, mbar, syncs, shared or bulk, and
`smsp__inst_executed_pipe_*`; probes: that plus `l1tex__m_*`, `lts__t_sectors_srcunit_tex*`-free
`sm__inst_executed_pipe_*`, `l1tex__t_*` of shared/tma, and `smsp__sass_*` of the same. Names
get `.sum` (the suffix file, when given, decides which names accept it).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ptx_fixtures"))
import fixtures as F  # noqa: E402

HOPPER = re.compile(r"(gmma|tma|utma|dsmem|mbar|syncs|shared|bulk|_cluster|warpgroup)")
WIDE = re.compile(r"^(l1tex__m_|smsp__inst_executed_pipe_|sm__inst_executed_pipe_|smsp__sass_inst_executed_op_"
                  r"|sm__sass_inst_executed_op_|l1tex__t_|l1tex__data_|smsp__inst_executed_op_|l1tex__lsuin_requests"
                  r"|l1tex__texin|sm__ctas_launched|smsp__warps_launched|smsp__thread_inst_executed\b)")


def bases(path):
    have = []
    for line in open(path, errors="replace"):
        m = re.match(r"^\s*([a-z0-9]+__[a-z0-9_]+)\b", line)
        if m and m.group(1) not in have:
            have.append(m.group(1))
    return have


def with_sum(names, suffix_file):
    if suffix_file and os.path.exists(suffix_file):
        ok = set()
        for line in open(suffix_file, errors="replace"):
            m = re.match(r"^\s*([a-z0-9]+__[a-z0-9_]+)\.sum\b", line)
            if m:
                ok.add(m.group(1))
        if ok:
            return [n + ".sum" for n in names if n in ok]
    return [n + ".sum" for n in names]


def validate(launches, name, metric_list):
    """The list without the metrics ncu refuses (it refuses a whole run for one bad name): one
    launch of `name` per try, at most 8 tries."""
    import subprocess
    ms = metric_list.split(",")
    here = os.path.dirname(os.path.abspath(__file__))
    for _ in range(8):
        r = subprocess.run(["ncu", "--clock-control", "none", "--csv", "--metrics", ",".join(ms), sys.executable,
                            os.path.join(here, "harness_hopper.py"), launches, "--only", name],
                           capture_output=True, text=True)
        errs = [l for l in (r.stdout + r.stderr).splitlines() if "ERROR" in l or "rror" in l.split(":")[0]]
        if not errs:
            break
        bad = [m for m in ms if any(m in e or m[:-4] in e for e in errs)]
        sys.stderr.write("ncu refused: " + " | ".join(errs)[:800] + "\n")
        if not bad:
            ms = [m for m in ms if m in F.COUNTERS]
            break
        ms = [m for m in ms if m not in bad]
    print(",".join(ms))


def main():
    mode, q = sys.argv[1], sys.argv[2]
    if mode == "validate":
        validate(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    sfx = sys.argv[3] if len(sys.argv) > 3 else None
    have = bases(q)
    fixed = [m[:-4] for m in F.COUNTERS + F.EXTRA]
    disc = [b for b in have if F.DISCOVER.match(b)]
    hop = [b for b in have if HOPPER.search(b) and re.match(r"^(l1tex|smsp|sm|lts)__", b)]
    pipe = [b for b in have if b.startswith("smsp__inst_executed_pipe_")]
    names = []
    for b in fixed + disc + hop + pipe:
        if b not in names and (b in have or not have):
            names.append(b)
    if mode == "probes":
        for b in have:
            if WIDE.match(b) and b not in names:
                names.append(b)
    if mode == "candidates":
        print("\n".join(names))
        return
    print(",".join(with_sum(names, sfx)))


if __name__ == "__main__":
    main()
