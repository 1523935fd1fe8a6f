#!/usr/bin/env python3
"""cp.async.ca spread-source S research (2026-12-01, helper session). Consolidated from cpa_*.py.
S = sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum. Train: f1, s11, part a; held-out: s7, part c, part d (warm).
Rules: H8 (docs), M2 (H8 groups, group g written from wave g = its read slot, no in-order start), M3a (M2 + reading of the next group
delayed by the most distinct words per shared bank of the group), M4 (per-lane timing, reads at write time), family sweep (cpa_fam).
Run: python3 scripts/research/hopper/cpasync_s_research.py"""
# ---- cpa_load ----
import json, sys
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from cpasync_hypotheses import one_line, units, words  # noqa: E402  (same record fields)
from collections import Counter, defaultdict, OrderedDict
import os
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "data") + "/"
S_K = "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"
W_ALL = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
W_MISC = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum"

def _rec(name, instr, mask, src, dst, S, W):
    return dict(name=name, size=int(instr.split(".")[-1]), mask=0xFFFFFFFF if mask is None else mask,
                src=list(src), dst=list(dst), S=int(S), W=int(W))

def load_all():
    """returns dict file_tag -> list of distinct requests (by key), each with S."""
    out = OrderedDict((k, OrderedDict()) for k in ["f1", "s11", "s7", "a", "c", "d", "s21"])
    def add(tag, r):
        key = (r["size"], r["mask"], tuple(r["src"]), tuple(r["dst"]))
        if key in out[tag]:
            assert out[tag][key]["S"] == r["S"], (tag, r["name"])
        else:
            out[tag][key] = r
    d = json.load(open(D + "h200_cpasync_2026-11-30.json"))
    for r in d["records"]:
        if not r["instruction"].startswith("cp.async.ca"): continue
        c = r["counters"]
        add("f1", _rec(r["name"], r["instruction"], r.get("active_mask"), [r["src_stride"] * l for l in range(32)],
                       r["lane_byte_offsets"], c["sass_wavefronts_ldgsts"], c["wavefronts_all"] - c["wavefronts_op_misc"]))
    for tag, f in (("s11", "h200_cpasync_verify_2026-11-30.json"), ("s7", "h200_cpasync_verify_seed7_2026-11-30.json"),
                   ("s21", "h200_cpasync_verify_seed21_2026-12-01.json")):
        for r in json.load(open(D + f))["measured"]:
            if not r["instruction"].startswith("cp.async.ca"): continue
            c = r["counters"]
            add(tag, _rec(r["name"], r["instruction"], r.get("active_mask"), r["global_addresses"], r["lane_byte_offsets"], c[S_K], c[W_ALL] - c[W_MISC]))
    for r in json.load(open(D + "h200_cpasync_lab_2026-12-01.json"))["measured"]:
        base = r["name"].split("#")[0]
        tag = "c" if base.startswith("rand13") else "a"
        c = r["counters"]
        add(tag, _rec(base, r["instruction"], r.get("active_mask"), r["global_addresses"], r["lane_byte_offsets"], c[S_K], c[W_ALL] - c[W_MISC]))
    for r in json.load(open(D + "h200_cpasync_lab_d_2026-12-01.json"))["measured"]:
        base = r["name"].split("#")[0]
        if not r["warm"]: continue
        c = r["counters"]
        add("d", _rec(base, r["instruction"], r.get("active_mask"), r["global_addresses"], r["lane_byte_offsets"], c[S_K], c[W_ALL] - c[W_MISC]))
    return {k: list(v.values()) for k, v in out.items()}

def spread_sets():
    a = load_all()
    return {k: [r for r in v if not one_line(r)] for k, v in a.items()}

# ---- cpa_rules ----


def greedy_groups(r, u, side):
    """Lanes in lane order into groups in which no bank of `side` (0: the L1 bank of the global
    word read, 1: the shared bank written) is used twice; a lane that clashes waits for the next."""
    rem, out = list(u), []
    while rem:
        used, g, nxt = set(), [], []
        for l in rem:
            bs = {w[side] % 32 for w in words(r, l)}
            if bs & used: nxt.append(l)
            else: used |= bs; g.append(l)
        out.append(g); rem = nxt
    return out

def groups_nobcast(r, u):
    return greedy_groups(r, u, 0)

def pipelined_unit(r, gs):
    """H4's pipeline over groups gs, a group's passes = the most writes in one shared bank."""
    return pipe_generic(r, gs, WK, WK)

def H8(r):
    return sum(pipelined_unit(r, groups_nobcast(r, u)) for u in units(r))

def score(sets, rule, keys=None):
    res = {}
    for k, v in sets.items():
        if keys and k not in keys: continue
        res[k] = (sum(rule(r) == r["S"] for r in v), len(v))
    return res

# ---- cpa_dump ----

def dump(r, per_unit=None):
    print(f"### {r['name']} size {r['size']} mask {r['mask']:08x} S {r['S']} W {r['W']} H8 {H8(r)}")
    for ui, u in enumerate(units(r)):
        gs = groups_nobcast(r, u)
        uc = pipelined_unit(r, gs)
        lines = sorted({r['src'][l]//128 for l in u})
        print(f"  unit {ui}: H8 {uc}, lines {len(lines)}, groups {[len(g) for g in gs]}")
        for l in u:
            a = r['src'][l]; d = r['dst'][l]
            print(f"    l{l:2d} src {a:7d} line {a//128:5d} off {a%128:3d} L1b {(a//4)%32:2d}-{(a//4+r['size']//4-1)%32:2d} sec {(a%128)//32} | dst {d:6d} sb {(d//4)%32:2d}")

def dump2(r):
    print(f"### {r['name']} size {r['size']} mask {r['mask']:08x} S {r['S']} W {r['W']} H8 {H8(r)}")
    for ui, u in enumerate(units(r)):
        gs = groups_nobcast(r, u)
        print(f"  unit {ui}: H8 {pipelined_unit(r, gs)}")
        for g in gs:
            pb = Counter(s % 32 for l in g for _, s in words(r, l))
            print("    group", [(l, r['src'][l]//128, (r['src'][l]//4)%32, (r['dst'][l]//4)%32) for l in g], "passes", max(pb.values()))

# ---- cpa_iso ----

def unit_one_line(r,u):
    s=[r['src'][l] for l in u]
    return len({x//128 for x in s})==1 and len(set(s))==len(s)
def store_rule(r,u):
    return max(Counter(s%32 for l in u for _,s in words(r,l)).values())
def iso_units(sets):
    """(tag, r, u, cost) for every record with exactly one spread unit"""
    out=[]
    for k,v in sets.items():
        for r in v:
            us=units(r); sp=[u for u in us if not unit_one_line(r,u)]
            if len(sp)==1:
                c=r['S']-sum(store_rule(r,u) for u in us if unit_one_line(r,u))
                out.append((k,r,sp[0],c))
    return out

# ---- cpa_try1 ----

def rb(r,l): return {x%32 for x,_ in words(r,l)}
def wb(r,l): return [s%32 for _,s in words(r,l)]
def greedy_nb(r, firstfit=True, read=True, write=True):
    tot=0
    for u in units(r):
        rem=list(u)
        while rem:
            tot+=1; R=set(); Wb=set(); nxt=[]; closed=False
            for l in rem:
                ok = not closed and not (read and rb(r,l)&R) and not (write and set(wb(r,l))&Wb)
                if ok: R|=rb(r,l); Wb|=set(wb(r,l))
                else:
                    nxt.append(l)
                    if not firstfit: closed=True
            rem=nxt
    return tot

# ---- cpa_try2 ----

TRAIN=['f1','s11','a']
def fifo_unit(r, gs):
    nxt, end = Counter(), 0
    for gi, g in enumerate(gs):
        for l in g:
            for _, s in words(r, l):
                t = max(gi, nxt[s % 32]); nxt[s % 32] = t + 1; end = max(end, t + 1)
    return end
def mk(unitf, groupf=groups_nobcast):
    return lambda r: sum(unitf(r, groupf(r,u)) for u in units(r))

# ---- cpa_m1 ----

def m1_unit(r, gs, block='distinct', order='lane'):
    """per-bank FIFO of writes; group g issues at T_g = T_{g-1} + d_{g-1}, d = most distinct words in one bank"""
    nxt, end, T = Counter(), 0, 0
    for gi, g in enumerate(gs):
        bw = defaultdict(set)
        for l in g:
            for _, s in words(r, l): bw[s % 32].add(s)
        for l in g:
            for _, s in words(r, l):
                t = max(T, nxt[s % 32]); nxt[s % 32] = t + 1; end = max(end, t + 1)
        d = max(len(v) for v in bw.values()) if block == 'distinct' else 1
        T += d
    return end

# ---- cpa_try3 ----

def whole(r):
    return [[l for l in range(32) if r['mask']>>l&1]]
def mkw(unitf, groupf=groups_nobcast, unitsf=whole):
    return lambda r: sum(unitf(r, groupf(r,u)) for u in unitsf(r))

# ---- cpa_try4 ----

def groups_write(r,u):
    return greedy_groups(r, u, 1)
def pipe_generic(r, gs, passkey, bankkey):
    start, passes, banks, end = [], [], [], 0
    for gi, g in enumerate(gs):
        pb = Counter(passkey(r,l,i) for l in g for i in range(r['size']//4))
        p, b = max(pb.values()), set(pb)
        s = start[-1] + 1 if gi else 0
        for h in range(gi):
            if banks[h] & b: s = max(s, start[h] + passes[h])
        start.append(s); passes.append(p); banks.append(b); end = max(end, s + p)
    return end
RK=lambda r,l,i:(r['src'][l]//4+i)%32
WK=lambda r,l,i:(r['dst'][l]//4+i)%32
def H8T(r): return sum(pipe_generic(r,groups_write(r,u),RK,RK) for u in units(r))
def both(r): return sum(max(pipe_generic(r,groups_write(r,u),RK,RK), pipe_generic(r,groups_nobcast(r,u),WK,WK)) for u in units(r))

# ---- cpa_try5 ----


def series_unit(r,gs): return sum(max(Counter(s%32 for l in g for _,s in words(r,l)).values()) for g in gs)
R={'pipe':H8,'series':mk(series_unit),'fifo':mk(fifo_unit),'m1':mk(m1_unit),'H8T':H8T,'contig':lambda r:greedy_nb(r,False),'ff':greedy_nb,'H9':lambda r: sum(max(max(Counter((r['src'][l]//4+i)%32 for l in u for i in range(r['size']//4)).values()),max(Counter((r['dst'][l]//4+i)%32 for l in u for i in range(r['size']//4)).values())) for u in units(r))}

# ---- cpa_fam ----

import itertools
def rbanks(r,l): return {(r['src'][l]//4+i)%32 for i in range(r['size']//4)}
def wbanks(r,l): return {(r['dst'][l]//4+i)%32 for i in range(r['size']//4)}
def grp(r,u,mode):
    rem,out=list(u),[]
    while rem:
        B,g,nxt,closed=set(),[],[],False
        for l in rem:
            b=rbanks(r,l)
            if closed or b&B:
                nxt.append(l)
                if mode=='contig': closed=True
            else: B|=b; g.append(l)
        out.append(g); rem=nxt
    return out
def passes(r,g,mode):
    if mode=='max':
        cnt=Counter(); out=defaultdict(list)
        for l in g:
            p=max(cnt[b] for b in wbanks(r,l))
            for b in wbanks(r,l): cnt[b]=p+1  # lane occupies pass p in all its banks
            out[p].append(l)
        return [out[p] for p in sorted(out)]
    if mode=='ff':  # first-fit passes
        P=[]
        for l in g:
            for q in P:
                if not (q[1]&wbanks(r,l)): q[0].append(l); q[1]|=wbanks(r,l); break
            else: P.append([[l],set(wbanks(r,l))])
        return [q[0] for q in P]
    if mode=='contig':
        P=[[[],set()]]
        for l in g:
            if P[-1][1]&wbanks(r,l): P.append([[],set()])
            P[-1][0].append(l); P[-1][1]|=wbanks(r,l)
        return [q[0] for q in P]
def sched(r,u,gm,pm,sm):
    gs=grp(r,u,gm); ps=[passes(r,g,pm) for g in gs]
    if sm=='series': return sum(len(p) for p in ps)
    if sm=='pipe':
        start,ln,banks,end=[],[],[],0
        for gi,g in enumerate(gs):
            b=set().union(*(wbanks(r,l) for l in g)); p=len(ps[gi])
            s=start[-1]+1 if gi else 0
            for h in range(gi):
                if banks[h]&b: s=max(s,start[h]+ln[h])
            start.append(s); ln.append(p); banks.append(b); end=max(end,s+p)
        return end
    if sm.startswith('fifo'):
        # pass k of group g at time >= T_g + k; each bank one write per time (FIFO)
        free=Counter(); end=0; T=0
        for gi,g in enumerate(gs):
            last=T
            for k,q in enumerate(ps[gi]):
                t0=T+k if sm=='fifo' else last  # fifo2: passes strictly sequential after delays
                for l in q:
                    t=max([t0]+[free[b] for b in wbanks(r,l)])
                    for b in wbanks(r,l): free[b]=t+1
                    end=max(end,t+1); last=max(last,t+ (1 if sm=='fifo2' else 0))
            T = T+1 if sm in ('fifo','fifo2') else T+len(ps[gi])
        return end
FAM={}
for gm,pm,sm in itertools.product(['ff','contig'],['max','ff','contig'],['series','pipe','fifo','fifo2','fifoB']):
    FAM[(gm,pm,sm)]=(lambda gm,pm,sm: lambda r: sum(sched(r,u,gm,pm,sm) for u in units(r)))(gm,pm,sm)

# ---- cpa_m2 ----

def write_passes(r, lanes):
    """(passes, shared banks) of a read group: the most lane writes in one shared bank, and
    the banks its lanes write."""
    pb=Counter(b for l in lanes for b in wbanks(r,l))
    return max(pb.values()), set(pb)

def m2_unit(r, u, gm='ff', readtime='index'):
    gs=grp(r,u,gm)
    start,ln,banks,end=[],[],[],0
    for gi,g in enumerate(gs):
        p,b=write_passes(r,g)
        s=gi
        for h in range(gi):
            if banks[h]&b: s=max(s,start[h]+ln[h])
        start.append(s); ln.append(p); banks.append(b); end=max(end,s+p)
    return end
M2=lambda r: sum(m2_unit(r,u) for u in units(r))

# ---- cpa_m3 ----

def m3_unit(r, u, var='a', gm='ff'):
    gs=grp(r,u,gm)
    start,ln,banks,end=[],[],[],0
    R=0
    for gi,g in enumerate(gs):
        bw=defaultdict(list)
        for l in g:
            for i in range(r['size']//4):
                w=r['dst'][l]//4+i; bw[w%32].append(w)
        p=max(len(v) for v in bw.values()); d=max(len(set(v)) for v in bw.values()); b=set(bw)
        s=R
        for h in range(gi):
            if banks[h]&b: s=max(s,start[h]+ln[h])
        start.append(s); ln.append(p); banks.append(b); end=max(end,s+p)
        if var=='a': R=R+d
        elif var=='b': R=s+d
        elif var=='c': R= s+p if d>1 else R+1
        elif var=='d': R= s+p if d>1 else s+1
        elif var=='e': R= max(R+1, s+d)   # distinct-word passes block reading
    return end
VARS={v:(lambda v: lambda r: sum(m3_unit(r,u,v) for u in units(r)))(v) for v in 'abcde'}

# ---- cpa_m4 ----

def m4_unit(r,u,readc=True,atomic=False):
    gs=grp(r,u,'ff'); lastW=defaultdict(lambda:-1); lastR=defaultdict(lambda:-1); S=-1; end=0
    for g in gs:
        ps=passes(r,g,'ff')
        base=S+1
        if atomic:
            # smallest base such that all lanes fit
            def ok(b0):
                for k,q in enumerate(ps):
                    for l in q:
                        t=b0+k
                        if any(lastW[b]>=t for b in wbanks(r,l)): return False
                        if readc and any(lastR[b]>=t for b in rbanks(r,l)): return False
                return True
            while not ok(base): base+=1
        S=base
        for k,q in enumerate(ps):
            for l in q:
                t=max([base+k]+[lastW[b]+1 for b in wbanks(r,l)]+([lastR[b]+1 for b in rbanks(r,l)] if readc else []))
                for b in wbanks(r,l): lastW[b]=t
                for b in rbanks(r,l): lastR[b]=max(lastR[b],t)
                end=max(end,t+1)
    return end
V={f'm4 readc={a} atomic={b}':(lambda a,b: lambda r: sum(m4_unit(r,u,a,b) for u in units(r)))(a,b) for a in (True,False) for b in (True,False)}

if __name__ == "__main__":
    s = spread_sets()
    R = {"H8": H8, "M2": M2, "M3a": VARS["a"], "M4 (reads at write time, atomic)": V["m4 readc=True atomic=True"]}
    for n, f in R.items():
        sc = score(s, f)
        print(n, sc, "train", sum(sc[k][0] for k in TRAIN), "/", sum(sc[k][1] for k in TRAIN),
              "held-out", sum(sc[k][0] for k in ["s7", "c", "d"]), "/", sum(sc[k][1] for k in ["s7", "c", "d"]))
    print("misses of M2 (file name S M2 H8):")
    for k, v in s.items():
        for r in v:
            if M2(r) != r["S"]: print(" ", k, r["name"], r["size"], r["S"], M2(r), H8(r))
