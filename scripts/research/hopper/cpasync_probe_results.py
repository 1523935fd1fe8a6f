#!/usr/bin/env python3
"""Reads what scripts/research/hopper/cpasync_lab/run.sh measured (ncu_{a,b,c,d}.csv with
requests_{a,b,c,d}.txt, unpacked from cpasync_lab.tar.gz; the parts of two runs may be put into
one DIR) and prints, per request, the counters of
every launch: cold (caches flushed by ncu) and warm (sources loaded into L1 first), whether
repeated launches agree, and whether the L1TEX and SASS-attributed wavefront counts agree.

    python3 scripts/research/hopper/cpasync_probe_results.py DIR
"""
import collections
import csv
import io
import os
import sys

W_ALL = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
W_MISC = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum"
C_LDGSTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"
S_LDGSTS = "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"


def launches(d):
    """Every measured launch, in order: dict with name, rep (cold0.., warm0..), part (a-d),
    size, mask, src, dst, W, S, C, counters."""
    out = []
    for p in "abcdefg":
        csvf = os.path.join(d, f"ncu_{p}.csv")
        if not os.path.exists(csvf):
            continue
        reqs = []
        for line in open(os.path.join(d, f"requests_{p}.txt")):
            t = line.split()
            if not t:
                continue
            name, rep = t[0].split("#")
            v = list(map(int, t[4:]))
            reqs.append(dict(name=name, rep=rep, part=p, size=16 if t[1] == "3" else 4 << int(t[1]), cg=t[1] == "3", mask=int(t[2]),
                             warm=int(t[3]), src=v[:32], dst=v[32:]))
        rows = [l for l in open(csvf, errors="replace") if l.startswith('"')]
        rd = csv.reader(io.StringIO("".join(rows)))
        hdr = next(rd)
        iid, im, iv = hdr.index("ID"), hdr.index("Metric Name"), hdr.index("Metric Value")
        m = collections.defaultdict(dict)
        for row in rd:
            try:
                m[int(row[iid])][row[im]] = float(row[iv].replace(",", ""))
            except (ValueError, IndexError):
                pass
        ids = sorted(m)
        if len(ids) != len(reqs):
            print(f"part {p}: {len(ids)} launches measured for {len(reqs)} requests", file=sys.stderr)
        for i, r in zip(ids, reqs):
            c = m[i]
            r.update(W=int(c[W_ALL] - c[W_MISC]), S=int(c[S_LDGSTS]), C=int(c[C_LDGSTS]), counters=c)
            out.append(r)
    return out


def parse(d):
    """Record sets for cpasync_hypotheses.py: the first cold launch of every request of parts
    a-c (structured + re-measured + seed 13), keyed by set, the first warm launch of the
    structured ones, and the first warm launch of part d's requests (the re-measured and the
    seed-13 ones, 2026-12-01 08:48 UTC)."""
    sets = collections.defaultdict(list)
    for r in launches(d):
        if r["part"] == "d":
            if r["rep"] == "warm0":
                sets["probe part d, warm, " + ("seed 13" if r["name"].startswith("rand13") else "old")].append(r)
            continue
        if r["rep"] == "warm0" and not r["name"].startswith("old."):
            sets["probe structured, warm"].append(r)
            continue
        if r["rep"] != "cold0":
            continue
        key = ("probe seed 13 (fresh random)" if r["name"].startswith("rand13")
               else "probe old (re-measured W!=S)" if r["name"].startswith("old.")
               else "probe structured")
        sets[key].append(r)
    return sets


def units(r):
    """Units with an active lane (warp, half-warps or quarter-warps for 4, 8, 16 bytes)."""
    g = 128 // r["size"]
    return sum(1 for k in range(0, 32, g) if r["mask"] >> k & ((1 << g) - 1))


def counters_moved(ls):
    """Per counter, cold and warm: the values seen (value: launches)."""
    keys = sorted({k for r in ls for k in r["counters"]})
    for k in keys:
        for warm in (0, 1):
            c = collections.Counter(int(r["counters"][k]) for r in ls if r["warm"] == warm)
            if c:
                vals = ", ".join(f"{v}: {n}" for v, n in sorted(c.items())[:8])
                more = " ..." if len(c) > 8 else ""
                print(f"  {k:70s} {'warm' if warm else 'cold'} {vals}{more}")


def decomposition(ls):
    """W (L1TEX all - misc), S (SASS-attributed), K = C + units (what the conflicts imply), per
    launch kind: how often they agree, and the cold surplus X = W - K."""
    SC = "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"
    for warm in (0, 1):
        rs = [r for r in ls if r["warm"] == warm]
        if not rs:
            continue
        k = [r["C"] + units(r) for r in rs]
        print(f"  {'warm' if warm else 'cold'} {len(rs)} launches: W = S {sum(r['W'] == r['S'] for r in rs)}, "
              f"W = K {sum(r['W'] == x for r, x in zip(rs, k))}, S = K {sum(r['S'] == x for r, x in zip(rs, k))}, "
              f"SASS conflicts = S - units {sum(int(r['counters'][SC]) == r['S'] - units(r) for r in rs)}, "
              f"W > S {sum(r['W'] > r['S'] for r in rs)}, S > W {sum(r['S'] > r['W'] for r in rs)}, "
              f"X = W - K: {sorted(collections.Counter(r['W'] - x for r, x in zip(rs, k)).items())}")


def main():
    ls = launches(sys.argv[1])
    missing = [p for p in "abcde" if not os.path.exists(os.path.join(sys.argv[1], f"ncu_{p}.csv"))]
    if missing:
        print(f"parts not measured (no ncu_<part>.csv): {', '.join(missing)}")
    print("counters (value: launches):")
    counters_moved(ls)
    print("wavefront counters against each other:")
    decomposition(ls)
    by = collections.defaultdict(list)
    for r in ls:
        by[r["name"]].append(r)
    n_det = n_ws = n_warm = n_both = n_s = 0
    for name, rs in by.items():
        cold = [(r["W"], r["S"], r["C"]) for r in rs if not r["warm"]]
        warm = [(r["W"], r["S"], r["C"]) for r in rs if r["warm"]]
        det = len(set(cold)) <= 1
        n_det += det
        n_ws += all(w == s for w, s, _ in cold)
        n_warm += bool(warm) and set(warm) == set(cold[:1])
        if cold and warm:
            n_both += 1
            n_s += len({x[1] for x in cold + warm}) == 1
        print(f"{name:40s} size {rs[0]['size']:2d} cold (W,S,C) {cold} warm {warm}"
              f"{'' if det else '  COLD VARIES'}")
    print(f"{len(by)} requests: cold repeats agree {n_det}, W = S in every cold launch {n_ws}, "
          f"warm = cold {n_warm}; measured cold and warm {n_both}, S the same in all their launches {n_s}")


if __name__ == "__main__":
    main()
