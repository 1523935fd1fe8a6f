#!/usr/bin/env python3
"""Scores the rules tried for `cp.async.ca` requests whose units read several 128-byte global
lines (issue 13, docs/wavefront-model.md "Hopper: stmatrix and cp.async") against the H200
records, per file: how many records each rule predicts exactly (L1TEX wavefronts W =
l1tex__data_pipe_lsu_wavefronts_mem_shared.sum - ..._op_misc.sum, the SASS-attributed count S =
sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum, and bank conflicts C =
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum against prediction - units).

Research code, not the model: the model is crates/tilelab-core/src/sim/isa/bank.rs. Run from the repository root:
    python3 scripts/research/hopper/cpasync_hypotheses.py [RESULTS_DIR] [--sweep]
RESULTS_DIR (optional): the files of the .gpu/cpasync probe (ncu_{a,b,c,d}.csv, requests_*.txt;
a part without its CSV is skipped; the two runs' parts may share one DIR). Its sets: the first
cold launch of each request, the first warm launch of the structured ones ("probe structured,
warm") and of part d's ("probe part d, warm, old" / "..., seed 13"). --sweep scores the rule
family of the sweep instead (family()).

Terms: a *unit* is the lanes of an st.shared of the copy width (4 B: the warp, 8 B: half-warps,
16 B: quarter-warps); a lane reads `size` bytes at its global source and writes them at its
shared offset. L1 bank of a source word = (global byte address / 4) % 32 (a 128-byte line's word
i sits in bank i); shared bank = (shared byte address / 4) % 32. Writes to one word by two lanes
are never merged (measured: 32 lanes into one word cost 32 wavefronts).
"""
import json
import os
import sys
from collections import Counter, defaultdict

FILES = {
    "f1 (h200_cpasync_2026-11-30)": "tests/data/h200_cpasync_2026-11-30.json",
    "s11 (h200_cpasync_verify_2026-11-30)": "tests/data/h200_cpasync_verify_2026-11-30.json",
    "s7 (h200_cpasync_verify_seed7_2026-11-30)": "tests/data/h200_cpasync_verify_seed7_2026-11-30.json",
}
W_ALL = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
W_MISC = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum"
C_LDGSTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"
S_LDGSTS = "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"


def load(path):
    """The .ca records of one file as dicts: name, size, mask, src[32], dst[32], W, S, C."""
    d = json.load(open(path))
    out = []
    for r in d.get("records") or d["measured"]:
        if not r["instruction"].startswith("cp.async.ca"):
            continue
        c = r["counters"]
        if "records" in d:  # the first file: named counters, sources src_stride apart
            src = [r["src_stride"] * l for l in range(32)]
            W, S, C = c["wavefronts_all"] - c["wavefronts_op_misc"], c["sass_wavefronts_ldgsts"], c["bank_conflicts_op_ldgsts"]
        else:
            src = r["global_addresses"]
            W, S, C = c[W_ALL] - c[W_MISC], c[S_LDGSTS], c[C_LDGSTS]
        m = r.get("active_mask")
        out.append(dict(name=r["name"], size=int(r["instruction"].split(".")[-1]),
                        mask=0xFFFFFFFF if m is None else m, src=src, dst=r["lane_byte_offsets"],
                        W=int(W), S=int(S), C=int(C)))
    return out


def units(r):
    g = {4: 32, 8: 16, 16: 8}[r["size"]]
    us = [[l for l in range(k, k + g) if r["mask"] >> l & 1] for k in range(0, 32, g)]
    return [u for u in us if u]


def words(r, l):
    """(global word, shared word) pairs lane l copies."""
    return [(r["src"][l] // 4 + i, r["dst"][l] // 4 + i) for i in range(r["size"] // 4)]


def line(r, l):
    return r["src"][l] // 128


# ---- classes -------------------------------------------------------------------------------
def one_line(r):
    """The class modelled since c24d5e1: every unit reads distinct pieces of one line."""
    for u in units(r):
        s = [r["src"][l] for l in u]
        if len({x // 128 for x in s}) > 1 or len(set(s)) < len(s):
            return False
    return True


def class_p(r):
    """Fixed before seed 7 was scored: every unit reads at most 2 lines, no line is read by two
    units, no two lanes of a unit read the same address."""
    us = units(r)
    per = [{line(r, l) for l in u} for u in us]
    alll = set().union(*per)
    dup = any(len({r["src"][l] for l in u}) < len(u) for u in us)
    return max(len(p) for p in per) <= 2 and sum(len(p) for p in per) == len(alll) and not dup


# ---- rules ---------------------------------------------------------------------------------
def greedy(r, max_lines=None):
    """H1: per unit, wavefronts filled in lane order; a lane joins when no other word of its L1
    banks is read (the same word is free) and none of its shared banks is written, and (with
    max_lines) the wavefront then reads at most max_lines lines."""
    total = 0
    for u in units(r):
        rem = list(u)
        while rem:
            total += 1
            rb, wb, lines, nxt = {}, set(), set(), []
            for l in rem:
                ws = words(r, l)
                ok = all(g % 32 not in rb or rb[g % 32] == g for g, _ in ws)
                ok = ok and not any(s % 32 in wb for _, s in ws)
                if max_lines is not None:
                    ok = ok and (line(r, l) in lines or len(lines) < max_lines)
                if ok:
                    lines.add(line(r, l))
                    for g, s in ws:
                        rb[g % 32] = g
                        wb.add(s % 32)
                else:
                    nxt.append(l)
            rem = nxt
    return total


def sector_greedy(r):
    """H3: as H1, but the read side holds one 32-byte sector per sector index (0-3) per
    wavefront (a sector occupies 8 L1 banks)."""
    total = 0
    for u in units(r):
        rem = list(u)
        while rem:
            total += 1
            sl, wb, nxt = {}, set(), []
            for l in rem:
                sec = r["src"][l] // 32
                ws = {s % 32 for _, s in words(r, l)}
                if (sec % 4 not in sl or sl[sec % 4] == sec) and not ws & wb:
                    sl[sec % 4] = sec
                    wb |= ws
                else:
                    nxt.append(l)
            rem = nxt
    return total


def groups_by_line(r, u):
    g = {}
    for l in u:
        g.setdefault(line(r, l), []).append(l)
    return list(g.values())


def groups_by_sector(r, u):
    """Read wavefronts of H3 (one sector per sector index), lane order."""
    rem, out = list(u), []
    while rem:
        sl, g, nxt = {}, [], []
        for l in rem:
            sec = r["src"][l] // 32
            if sec % 4 not in sl or sl[sec % 4] == sec:
                sl[sec % 4] = sec
                g.append(l)
            else:
                nxt.append(l)
        out.append(g)
        rem = nxt
    return out


def groups_read_greedy(r, u):
    """Read wavefronts: lane order, no two different words in one L1 bank."""
    rem, out = list(u), []
    while rem:
        rb, g, nxt = {}, [], []
        for l in rem:
            ws = words(r, l)
            if all(x % 32 not in rb or rb[x % 32] == x for x, _ in ws):
                for x, _ in ws:
                    rb[x % 32] = x
                g.append(l)
            else:
                nxt.append(l)
        out.append(g)
        rem = nxt
    return out


def groups_line_merge(r, u, max_lines=2):
    """H*: lines in order of their first lane; a line joins the first group holding fewer than
    max_lines lines none of whose lanes reads another word in an L1 bank the line's lanes read."""
    lines = {}
    for l in u:
        lines.setdefault(line(r, l), []).append(l)
    groups = []  # [lanes, bank->word, lines]
    for ln, lanes in lines.items():
        rm = {x % 32: x for l in lanes for x, _ in words(r, l)}
        for G in groups:
            if len(G[2]) < max_lines and all(b not in G[1] or G[1][b] == x for b, x in rm.items()):
                G[0].extend(lanes)
                G[1].update(rm)
                G[2].add(ln)
                break
        else:
            groups.append([list(lanes), dict(rm), {ln}])
    return [G[0] for G in groups]


def groups_line_merge_nodup(r, u):
    """H7 (second round, fitted on s11 and s7 after H* failed on s7): as H* with any number of
    lines, and two lanes reading one address never in one group (the k-th read of an address
    goes into the line's k-th layer); a layer joins the first group none of whose lanes reads
    any word in its L1 banks."""
    items, seen = {}, Counter()
    for l in u:
        a = r["src"][l]
        items.setdefault((a // 128, seen[a]), []).append(l)
        seen[a] += 1
    groups = []  # [lanes, L1 banks]
    for lanes in items.values():
        rb = {x % 32 for l in lanes for x, _ in words(r, l)}
        for G in groups:
            if not rb & G[1]:
                G[0].extend(lanes)
                G[1] |= rb
                break
        else:
            groups.append([list(lanes), set(rb)])
    return [G[0] for G in groups]


def pipelined(r, groups):
    """The source-line rule's pipeline (7df378e) over any grouping: a group's passes are the
    most lane writes in one shared bank; group g starts one wavefront after g-1, and not before
    every earlier group sharing a shared bank has ended; the unit costs the last end."""
    total = 0
    for u in units(r):
        start, passes, banks, end = [], [], [], 0
        for gi, g in enumerate(groups(r, u)):
            pb = Counter(s % 32 for l in g for _, s in words(r, l))
            p, b = max(pb.values()), set(pb)
            s = start[-1] + 1 if gi else 0
            for h in range(gi):
                if banks[h] & b:
                    s = max(s, start[h] + passes[h])
            start.append(s)
            passes.append(p)
            banks.append(b)
            end = max(end, s + p)
        total += end
    return total


def max_degree(r):
    """Edge colouring of (L1 bank, shared bank) pairs: the larger of the most distinct words
    read in one L1 bank and the most writes to one shared bank, per unit."""
    total = 0
    for u in units(r):
        rd, wd = defaultdict(set), Counter()
        for l in u:
            for g, s in words(r, l):
                rd[g % 32].add(g)
                wd[s % 32] += 1
        total += max(max(len(v) for v in rd.values()), max(wd.values()))
    return total


def groups_read_nobcast(r, u):
    """Read wavefronts without broadcast (2026-12-01): lane order, each L1 bank serves one lane
    per group, even two lanes reading the same word (dup.k of the probe: k reads of one word
    cost k)."""
    rem, out = list(u), []
    while rem:
        rb, g, nxt = set(), [], []
        for l in rem:
            bs = {x % 32 for x, _ in words(r, l)}
            if bs & rb:
                nxt.append(l)
            else:
                rb |= bs
                g.append(l)
        out.append(g)
        rem = nxt
    return out


def degree_no_broadcast(r):
    """The lower bound (2026-12-01): per unit, the larger of the most lane reads in one L1 bank
    (every read counted, no broadcast) and the most lane writes in one shared bank."""
    total = 0
    for u in units(r):
        rd, wd = Counter(), Counter()
        for l in u:
            for g, s in words(r, l):
                rd[g % 32] += 1
                wd[s % 32] += 1
        total += max(max(rd.values()), max(wd.values()))
    return total


def family_groups(r, u, item, max_lines, fit, same_word_free):
    """The rule family of the sweep (2026-12-01): items are lanes, source lines, or source lines
    with the k-th read of an address in the line's k-th layer (H7); an item joins the first group
    (fit "first") or the last one (fit "seq") if the group then reads at most max_lines lines
    (None: any) and each L1 bank serves one word (same_word_free: two lanes reading one word
    share the bank) or one lane read (not same_word_free); otherwise it opens a new group."""
    its, seen = {}, Counter()
    for k, l in enumerate(u):
        a = r["src"][l]
        key = k if item == "lane" else (a // 128, seen[a] if item == "linedup" else 0)
        its.setdefault(key, []).append(l)
        seen[a] += 1
    groups = []  # [lanes, L1 bank -> words read, lines]
    for lanes in its.values():
        rb = defaultdict(list)
        for l in lanes:
            for x, _ in words(r, l):
                rb[x % 32].append(x)
        lines = {line(r, l) for l in lanes}

        def fits(G):
            if max_lines is not None and len(G[2] | lines) > max_lines:
                return False
            for b, xs in rb.items():
                both = G[1].get(b, []) + xs
                if len(set(both) if same_word_free else both) > 1:
                    return False
            return True

        for G in groups if fit == "first" else groups[-1:]:
            if fits(G):
                G[0].extend(lanes)
                G[2] |= lines
                for b, xs in rb.items():
                    G[1].setdefault(b, []).extend(xs)
                break
        else:
            groups.append([list(lanes), {b: list(xs) for b, xs in rb.items()}, set(lines)])
    return [G[0] for G in groups]


def fifo(r, groups):
    """Schedule of the sweep: group g issues in wavefront g; each of its lane writes takes the
    first free wavefront >= g of its shared bank; the unit costs the last one used."""
    total = 0
    for u in units(r):
        nxt, end = Counter(), 0
        for gi, g in enumerate(groups(r, u)):
            for l in g:
                for _, s in words(r, l):
                    t = max(gi, nxt[s % 32])
                    nxt[s % 32] = t + 1
                    end = max(end, t + 1)
        total += end
    return total


def series(r, groups):
    """Schedule of the sweep: groups one after another, each its most writes in one bank."""
    return sum(max(Counter(s % 32 for l in g for _, s in words(r, l)).values())
               for u in units(r) for g in groups(r, u))


def family():
    """The 180 rules of the sweep: item x max lines x fit x same word free x schedule. H7 is
    (linedup, None, first, False, pipe), H8 (lane, None, first, False, pipe)."""
    import itertools
    sched = {"pipe": pipelined, "fifo": fifo, "series": series}
    out = {}
    for item, ml, fit, swf, sc in itertools.product(
            ["lane", "line", "linedup"], [1, 2, 3, 4, None], ["first", "seq"], [True, False], sched):
        g = (lambda item, ml, fit, swf: lambda r, u: family_groups(r, u, item, ml, fit, swf))(item, ml, fit, swf)
        out[(item, ml, fit, swf, sc)] = (lambda g, f: lambda r: f(r, g))(g, sched[sc])
    return out


def sweep(sets):
    """Every rule of the family scored on the spread requests of part d warm (W, S, C), part a
    warm (W) and, over the five sets of distinct requests with a cold launch (f1, s11, s7, part
    a, part c), S (which is the same cold and warm in every request measured both ways)."""
    d = [r for k, v in sets.items() if k.startswith("probe part d") for r in v if not one_line(r)]
    a = [r for r in sets.get("probe structured, warm", []) if not one_line(r)]
    s_keys = [k for k in sets if k.split()[0] in ("f1", "s11", "s7") or k in ("probe structured", "probe seed 13 (fresh random)")]
    s_recs = [r for k in s_keys for r in sets[k] if not one_line(r)]
    rows = []
    for key, rule in family().items():
        p = [rule(r) for r in d]
        rows.append((sum(x == r["W"] for x, r in zip(p, d)), sum(x == r["S"] for x, r in zip(p, d)),
                     sum(x - len(units(r)) == r["C"] for x, r in zip(p, d)),
                     sum(rule(r) == r["W"] for r in a), sum(rule(r) == r["S"] for r in s_recs), key))
    print(f"== family sweep ({len(rows)} rules): part d warm spread ({len(d)}) W / S / C, part a warm "
          f"spread ({len(a)}) W, S over the {len(s_recs)} spread requests with a cold launch")
    for order, what in ((0, "part d warm W"), (1, "part d warm S"), (4, "S, all sets")):
        print(f"  best by {what}:")
        for row in sorted(rows, key=lambda x: (-x[order], -x[0] - x[1]))[:5]:
            print(f"    {row[5]}: part d W {row[0]} S {row[1]} C {row[2]} | part a W {row[3]} | S {row[4]}")


RULES = {
    "H0 store rule without merging (the one-line rule applied to all)": lambda r: sum(
        max(Counter(s % 32 for l in u for _, s in words(r, l)).values()) for u in units(r)),
    "H1 greedy, L1 word banks + shared banks": greedy,
    "H1b greedy, at most 2 lines per wavefront": lambda r: greedy(r, 2),
    "H2 edge colouring (max degree)": max_degree,
    "H3 greedy, one 32-byte sector per sector index": sector_greedy,
    "H4 source-line groups, pipelined (7df378e)": lambda r: pipelined(r, groups_by_line),
    "H5 sector groups, pipelined": lambda r: pipelined(r, groups_by_sector),
    "H6 L1-bank read groups, pipelined": lambda r: pipelined(r, groups_read_greedy),
    "H* line-merge groups (<= 2 lines, no L1 bank conflict), pipelined": lambda r: pipelined(r, groups_line_merge),
    "H7 line-merge groups (any lines, repeated addresses apart), pipelined": lambda r: pipelined(r, groups_line_merge_nodup),
    "H8 no-broadcast L1-bank read groups, pipelined": lambda r: pipelined(r, groups_read_nobcast),
    "H9 lower bound: most reads per L1 bank / writes per shared bank": degree_no_broadcast,
}


def score(recs, rule):
    n = len(recs)
    w = sum(rule(r) == r["W"] for r in recs)
    s = sum(rule(r) == r["S"] for r in recs)
    c = sum(rule(r) - len(units(r)) == r["C"] for r in recs)
    return f"W {w}/{n}  S {s}/{n}  C {c}/{n}"


def score_split(recs, rule):
    """Hits on W, S and C, over the records where the cold surplus is absent (W = S) and where
    it is present (W != S)."""
    eq = [r for r in recs if r["W"] == r["S"]]
    ne = [r for r in recs if r["W"] != r["S"]]
    return f"W = S: {score(eq, rule)} | W != S: {score(ne, rule)}"


def main():
    args = [a for a in sys.argv[1:] if a != "--sweep"]
    sets = {k: load(p) for k, p in FILES.items()}
    if args:
        sys.path.insert(0, os.path.dirname(__file__))
        from cpasync_probe_results import parse  # noqa: E402
        for key, recs in parse(args[0]).items():
            sets[key] = recs
    if "--sweep" in sys.argv:
        sweep(sets)
        return
    for key, recs in sets.items():
        spread = [r for r in recs if not one_line(r)]
        agree = [r for r in spread if r["W"] == r["S"]]
        print(f"== {key}: {len(recs)} .ca records, {len(spread)} outside the one-line class "
              f"({len(agree)} with W = S), {sum(class_p(r) for r in spread)} of them in class P")
        for name, rule in RULES.items():
            print(f"  {name:70s} all: {score(recs, rule)} | spread: {score(spread, rule)} | "
                  f"class P: {score([r for r in spread if class_p(r)], rule)} | spread, "
                  f"{score_split(spread, rule)}")


if __name__ == "__main__":
    main()
