#!/usr/bin/env python3
"""cp.async.ca spread-source S research, part e (issue 13's targeted probe, 2026-12-01 13:14 UTC,
tests/data/h200_cpasync_lab_e_2026-12-01.json). Reuses cpasync_s_research.py's loader and rules.

Sets: "e" = the 71 targeted requests e.* (training, with f1, s11, part a as before); "h29" = the
60 fresh random spread requests rand29.* of seed 29, the held-out test. Every request of part e
was launched cold once and warm once; S (the SASS-attributed wavefronts) is the target, as in
cpasync_s_research.py.

    python3 scripts/research/hopper/cpasync_e_research.py            # training sets only (part e listed)
    python3 scripts/research/hopper/cpasync_e_research.py --heldout  # and the held-out scores
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpasync_s_research as sr  # noqa: E402
from cpasync_hypotheses import one_line, units, pipelined, groups_line_merge_nodup  # noqa: E402

C_K = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"
FILE_E = sr.D + "h200_cpasync_lab_e_2026-12-01.json"


def load_e():
    """{'e': [...], 'h29': [...]}: one record per request (sr._rec fields, plus cold / warm:
    (W, S, C) of its launch)."""
    out = {"e": {}, "h29": {}}
    for x in json.load(open(FILE_E))["measured"]:
        base, rep = x["name"].split("#")
        c = x["counters"]
        tag = "h29" if base.startswith("rand29") else "e"
        W = c[sr.W_ALL] - c[sr.W_MISC]
        r = out[tag].setdefault(base, sr._rec(base, x["instruction"], x.get("active_mask"), x["global_addresses"],
                                               x["lane_byte_offsets"], c[sr.S_K], W))
        r[rep[:4]] = (int(W), int(c[sr.S_K]), int(c[C_K]))
        assert r["S"] == int(c[sr.S_K]), base  # S is the same cold and warm (as in parts a-d)
    return {k: list(v.values()) for k, v in out.items()}


H7 = lambda r: pipelined(r, groups_line_merge_nodup)  # noqa: E731


# ---- M5 (written after part e's targeted requests, before the held-out ones were scored) ----
def m5_unit(r, u, groups):
    """M2's per-bank queue plus one more wait. Groups (read groups, lane order) are read one per
    slot: group g's read slot is g. A group's passes = the most lane writes in one shared bank.
    Group g starts writing at the latest of: its read slot g; the end of every earlier group
    writing one of its shared banks; and the end of the last earlier group that started at its
    own read slot ("undelayed"). A group that had to wait for a shared bank ("delayed") does not
    hold later groups back. The unit costs the last end."""
    end, last_undelayed_end, hist = 0, 0, []  # hist: (shared banks, end)
    for g, lanes in enumerate(groups(r, u)):
        p, banks = sr.write_passes(r, lanes)
        s = max([g, last_undelayed_end] + [e for b2, e in hist if b2 & banks])
        if s == g:
            last_undelayed_end = s + p
        hist.append((banks, s + p))
        end = max(end, s + p)
    return end


GROUPS = {
    "ff": lambda r, u: sr.grp(r, u, "ff"),          # H8's: a lane joins the first group with its L1 banks free
    "contig": lambda r, u: sr.grp(r, u, "contig"),  # a group closes at the first lane whose L1 banks clash
    "line": groups_line_merge_nodup,                # H7's line-merge groups
}
M5 = {k: (lambda g: lambda r: sum(m5_unit(r, u, g) for u in units(r)))(g) for k, g in GROUPS.items()}


def m6_unit(r, u, groups):
    """M6 (fixed on f1 + s11 + part a + part e before the held-out set was scored): M2's per-bank
    queue, and groups that were not held back by a shared bank end in order.
    Groups (read groups, lane order) are read one per slot: group g's read slot is g; its passes p
    = the most lane writes in one shared bank. s = the latest of g and the end of every earlier
    group writing one of its shared banks. If s > g the group is "delayed" and runs [s, s + p).
    Otherwise ("undelayed") it must also end at least one slot after the last undelayed group
    ended: s = max(s, E + 1 - p), E = that group's end (none before the first); it runs [s, s + p)
    and E becomes s + p. The unit costs the last end; the request the sum over units."""
    end, E, hist = 0, None, []  # hist: (shared banks, end) of earlier groups
    for g, lanes in enumerate(groups(r, u)):
        p, banks = sr.write_passes(r, lanes)
        s = max([g] + [e for b2, e in hist if b2 & banks])
        if s == g:
            if E is not None:
                s = max(s, E + 1 - p)
            E = s + p
        hist.append((banks, s + p))
        end = max(end, s + p)
    return end


M6 = {k: (lambda g: lambda r: sum(m6_unit(r, u, g) for u in units(r)))(g) for k, g in GROUPS.items()}

RULES = {
    "H8": sr.H8,
    "M2": sr.M2,
    "H7": H7,
    "M5 (line groups)": M5["line"],
    "M6 (lane groups, ff)": M6["ff"],
    "M6 (line groups)": M6["line"],  # the rule fixed for the held-out test
}


def main():
    old = sr.spread_sets()
    e = load_e()
    train = {"f1": old["f1"], "s11": old["s11"], "part a": old["a"], "part e": [r for r in e["e"] if not one_line(r)]}
    sets = dict(train)
    if "--heldout" in sys.argv:
        sets["held out: seed 29"] = e["h29"]
        # held out for H8 and M2 earlier; their misses were listed before M6 was written, M6 was not fitted on them
        for k, n in (("s7", "s7"), ("c", "part c"), ("d", "part d (warm)"), ("s21", "s21")):
            sets["earlier held out: " + n] = old[k]
    print("spread requests, exact S (the SASS-attributed wavefronts):")
    print(f"{'rule':24s}" + "".join(f" | {k} ({len(v)})" for k, v in sets.items()))
    for name, f in RULES.items():
        row = [sum(f(r) == r["S"] for r in v) for v in sets.values()]
        t = sum(row[:len(train)])
        print(f"{name:24s}" + "".join(f" | {x}" for x in row) + f" | train {t}/{sum(len(v) for v in train.values())}")
    if "--misses" in sys.argv:
        f = RULES["M6 (line groups)"]
        for k, v in sets.items():
            for r in v:
                if f(r) != r["S"]:
                    print(f"  miss {k}: {r['name']} size {r['size']} S {r['S']} M6 {f(r)} M2 {sr.M2(r)} H8 {sr.H8(r)}")


if __name__ == "__main__":
    main()
