#!/usr/bin/env python3
"""Requests for the cp.async.ca spread-source probe (tilelab issue 13). Writes requests.txt
(cpasync_lab.cu's input: name kind mask warm src[32] dst[32]) and requests.json (the same as
tilelab replay records, one per distinct request, with the replicate plan). Deterministic.
Sets: structured (nlines, overlap, sector, straddle, dup, pipe, xunit, many), each cold x3 and
warm x2; re-measurements of earlier records whose two wavefront counters disagreed (cold x3,
warm x1); fresh random requests (seed 13, verify's pattern families; cold x2); part e (the
targeted probe of issue 13 and 60 fresh random spread requests of seed 29, cold x1 and warm x1);
part f (requests that press on the upper bound of the SASS-attributed count, cold x1)."""
import json, random, sys
SRC, SMEM, LINE = 64 * 1024, 48 * 1024, 128
KIND = {4: 0, 8: 1, 16: 2}
FULL = 0xffffffff
reqs = []  # (name, size, mask, src[32], dst[32])

def add(name, size, src, dst, mask=FULL):
    src = [int(s) for s in src]; dst = [int(d) for d in dst]
    assert len(src) == 32 and len(dst) == 32
    for l in range(32):
        if mask >> l & 1:
            assert src[l] % size == 0 and 0 <= src[l] <= SRC - size, (name, l, src[l])
            assert dst[l] % size == 0 and 0 <= dst[l] <= SMEM - size, (name, l, dst[l])
    reqs.append((name, size, mask, src, dst))

C4 = [1024 + 4 * l for l in range(32)]
def line(k, far=False):
    return (16 + (37 * k if far else k)) % 500 * LINE

# A/B: n lines, distinct L1 banks (lane l reads word l), conflict-free contiguous destination.
for far in (False, True):
    for n in (1, 2, 3, 4, 8, 16, 32):
        add(f"nlines.inter.{n}.{'far' if far else 'adj'}", 4, [line(l % n, far) + 4 * l for l in range(32)], C4)
for n in (2, 4, 8):
    add(f"nlines.block.{n}", 4, [line(l // (32 // n)) + 4 * l for l in range(32)], C4)
# 8 and 16 bytes: n lines per unit, distinct banks.
for n in (2, 4):
    add(f"nlines.inter8.{n}", 8, [line(l % n) + 8 * (l % 16) for l in range(32)], [1024 + 8 * l for l in range(32)])
    add(f"nlines.inter16.{n}", 16, [line(l % n) + 16 * (l % 8) for l in range(32)], [1024 + 16 * l for l in range(32)])
# C: two lines, lanes 16-31 read k banks that lanes 0-15 read (different words).
for k in (0, 1, 2, 4, 8, 16):
    for far in (False, True):
        add(f"overlap.{k}.{'far' if far else 'adj'}", 4,
            [line(0) + 4 * l if l < 16 else line(1, far) + 4 * (l - k) for l in range(32)], C4)
# D: each 32-byte sector split between two (three) lines, banks distinct.
add("sector.split2", 4, [line((l // 4) % 2) + 4 * l for l in range(32)], C4)
add("sector.split3", 4, [line((l // 4) % 3) + 4 * l for l in range(32)], C4)
add("sector.split2.8B", 8, [line((l // 2) % 2) + 8 * (l % 16) for l in range(32)], [1024 + 8 * l for l in range(32)])
# E: contiguous runs that straddle a line boundary (the misaligned tile copy).
for w in (4, 8, 16):
    for s in sorted({w, 32, 64, 96, 128 - w}):
        add(f"straddle.{w}.{s}", w, [line(0) + s + w * l for l in range(32)], [1024 + w * l for l in range(32)])
# F: one line, k lanes read the same bytes (destinations distinct and conflict-free).
for k in (2, 4, 8, 16, 32):
    add(f"dup.{k}", 4, [line(0) + 4 * (0 if l < k else l) for l in range(32)], C4)
add("dup.pairs", 4, [line(0) + 4 * (l // 2) for l in range(32)], C4)
add("dup.pairs16", 16, [line(l // 8) + 16 * ((l % 8) // 2) for l in range(32)], [1024 + 16 * l for l in range(32)])
# G: write pairs into one word (pairs_same) with lines blocked / interleaved, banks distinct or not.
P = [4096 + 4 * (l // 2) for l in range(32)]
add("pipe.2.block.distinct", 4, [line(l // 16) + 4 * l for l in range(32)], P)
add("pipe.2.block.conflict", 4, [line(l // 16) + 4 * (l % 16) for l in range(32)], P)
add("pipe.2.inter.distinct", 4, [line((l // 2) % 2) + 4 * l for l in range(32)], P)
add("pipe.3.block.distinct", 4, [line(min(l // 11, 2)) + 4 * l for l in range(32)], P)
add("pipe.4.block.conflict", 4, [line(l // 8) + 4 * (l % 8) for l in range(32)], P)
add("pipe.4.block.distinct", 4, [line(l // 8) + 4 * l for l in range(32)], P)
# H: 16-byte units sharing lines across units (halfline: units read 64-byte halves of lines 0-2).
add("xunit.sameline", 16, [line(l // 16) + 16 * (l % 8) for l in range(32)], [1024 + 16 * l for l in range(32)])
add("xunit.sameline.rev", 16, [line(l // 16) + 16 * (7 - l % 8) for l in range(32)], [1024 + 16 * l for l in range(32)])
add("xunit.halfline", 16, [line((l // 8 + 1) // 2) + (64 * ((l // 8 + 1) % 2) + 16 * (l % 4) + 64 * ((l % 8) // 4)) % 128 for l in range(32)], [1024 + 16 * l for l in range(32)])
# I: every lane its own line, distinct banks.
add("many.4", 4, [line(l) + 4 * l for l in range(32)], C4)
add("many.8", 8, [line(l) + 8 * (l % 16) for l in range(32)], [1024 + 8 * l for l in range(32)])
add("many.16", 16, [line(l) + 16 * (l % 8) for l in range(32)], [1024 + 16 * l for l in range(32)])
n_struct = len(reqs)

# Earlier records whose two wavefront counters disagreed (W != S), re-measured.
old = []
for f in sys.argv[1:]:
    d = json.load(open(f))
    for r in d["measured"]:
        ins = r["instruction"]
        if not ins.startswith("cp.async.ca"):
            continue
        c = r["counters"]
        W = c["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"] - c["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum"]
        S = c["sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"]
        if W != S:
            size = int(ins.split(".")[-1])
            m = r.get("active_mask")
            add("old." + r["name"], size, r["global_addresses"], r["lane_byte_offsets"], FULL if m is None else m)
n_old = len(reqs) - n_struct

# Fresh random requests (seed 13): verify's shared patterns and source families, .ca only.
rng = random.Random(13)
def rmask():
    c = rng.random()
    if c < 0.4: return FULL
    if c < 0.6: return rng.getrandbits(32) or 1
    if c < 0.7: return (1 << rng.randrange(1, 32)) - 1
    if c < 0.8: return 1 << rng.randrange(32)
    if c < 0.9: return rng.choice([0x0000ffff, 0xffff0000, 0x00ff00ff, 0xff00ff00, 0x0f0f0f0f, 0x55555555, 0xaaaaaaaa, 0xff, 0xff00])
    return rng.getrandbits(32) & rng.getrandbits(32) or 1
def pat(p, w, limit):
    if p == 0:
        r = rng.choice([64, 128, 256, 512, 1024, 4096, limit]); return [rng.randrange(r) for _ in range(32)]
    if p == 1:
        pool = [rng.randrange(8192) for _ in range(rng.randint(1, 8))]; return [rng.choice(pool) for _ in range(32)]
    if p == 2:
        s = rng.randint(0, 40) * w if rng.random() < 0.6 else rng.randint(0, 300); b = rng.randrange(4096)
        return [b + s * l for l in range(32)]
    if p == 3:
        g = rng.choice([4, 8, 16]); a = [rng.randrange(2048) for _ in range(32 // g)]; return [a[l // g] for l in range(32)]
    if p == 4:
        g = rng.choice([8, 16]); b = [rng.randrange(64) * 128 + rng.choice([0, 64, 32, 16]) for _ in range(32 // g)]
        st = rng.choice([w, 2 * w, 4]) if w < 16 else rng.choice([16, 32, 0])
        return [b[l // g] + (l % g) * st for l in range(32)]
    if p == 5:
        base = rng.randrange(64) * 128; perm = list(range(32)); rng.shuffle(perm); return [base + perm[l] * w for l in range(32)]
    s = rng.choice([64, 128, 136, 144, 256]); x = rng.choice([0, 1, 3, 7]); return [(l * s) ^ ((l & x) << 4) for l in range(32)]
def srcs(q, w):
    top = SRC - 32 * 512; base = rng.randrange(top // w) * w
    ln = lambda: rng.randrange(SRC // 128 - 1) * 128
    if q == 0: o = [base + w * l for l in range(32)]
    elif q == 1:
        st = [s for s in [w, 2 * w, 4 * w, 8 * w, 16, 32, 48, 64, 96, 128, 160, 256, 0] if s % w == 0]
        s = rng.choice(st); o = [base + s * l for l in range(32)]
    elif q == 2:
        ls = [ln() for _ in range(rng.randint(1, 8))]; o = [rng.choice(ls) + rng.randrange(128 // w) * w for _ in range(32)]
    elif q == 3:
        perm = list(range(32)); rng.shuffle(perm); o = [base + w * perm[l] for l in range(32)]
    elif q == 4:
        g = rng.choice([2, 4, 8, 16]); st = [ln() + rng.randrange(128 // w) * w for _ in range(32 // g)]
        o = [st[l // g] + (l % g) * w for l in range(32)]
    elif q == 5: o = [base + w * (31 - l) for l in range(32)]
    elif q == 6:
        per = 128 // w; o = []
        for _ in range(32 // per):
            at = ln(); sl = list(range(per)); rng.shuffle(sl); o += [at + k * w for k in sl]
    else:
        at = min(ln(), SRC - 32 * 16 - 128); o = [at + w * l for l in range(32)]
    return [(x % (SRC - 16)) // w * w for x in o]
limit = SMEM - 16
for i in range(110):
    w = rng.choice([4, 8, 16]); m = rmask(); p = rng.randrange(7); q = rng.randrange(8)
    dst = [(o % limit) // w * w for o in pat(p, w, limit)]
    add(f"rand13.{i}.p{p}.s{q}", w, srcs(q, w), dst, m)
n_rand = len(reqs) - n_struct - n_old

plan = []
for i, r in enumerate(reqs):
    if i < n_struct: plan += [(r, 0, k) for k in range(3)] + [(r, 1, k) for k in range(2)]
    elif i < n_struct + n_old: plan += [(r, 0, k) for k in range(3)] + [(r, 1, 0)]
    else: plan += [(r, 0, k) for k in range(2)]
# Three files (one ncu call each), in priority order.
parts = {"a": [], "b": [], "c": []}
for (r, warm, k) in plan:
    name = r[0]
    part = "c" if name.startswith("rand13") else "b" if name.startswith("old.") else "a"
    parts[part].append(f"{name}#{'warm' if warm else 'cold'}{k} {KIND[r[1]]} {r[2]} {warm} " + " ".join(map(str, r[3])) + " " + " ".join(map(str, r[4])))
# Part d (2026-12-01, after the first probe): the older records and the random ones warm x2, the
# count without the cold-miss surplus that a rule for spread sources has to meet.
parts["d"] = []
for i, r in enumerate(reqs[n_struct:]):
    for k in range(2):
        parts["d"].append(f"{r[0]}#warm{k} {KIND[r[1]]} {r[2]} 1 " + " ".join(map(str, r[3])) + " " + " ".join(map(str, r[4])))
# Part e (2026-12-01, issue 13's targeted probe, "What the misses suggest for the next probe" in
# docs/wavefront-model.md): structured requests e.* and 60 fresh random spread requests rand29.*
# (seed 29, kept aside as the held-out test); every request cold x1 then warm x1. Added after
# parts a-d are fixed, so their files are unchanged.
n_e0 = len(reqs)
A, B = line(100), line(101)
def lanes_req(name, size, ls):
    """ls: (src, dst) of lanes 0, 1, ...; the rest inactive."""
    src = [s for s, _ in ls] + [0] * (32 - len(ls)); dst = [d for _, d in ls] + [0] * (32 - len(ls))
    add(name, size, src, dst, (1 << len(ls)) - 1)
# e1: two group-0 lanes P, Q writing one shared bank (bank 5): the same word or different words;
# optional E (bank 7, one write) before or after them; a group-1 lane G (reads line B word 0, the
# L1 bank of P's line-A word 0) writing a bank shared with nobody (20), the conflict bank (5,
# another word) or E's bank (7, another word). P, Q, E read words 0, 1, 2 of line A.
for same in (True, False):
    P = (A + 0, 1024 + 20); Q = (A + 4, 1024 + 20 if same else 1024 + 20 + 128); E = (A + 8, 1024 + 28)
    tag = "same" if same else "diff"
    for order, ls in (("PQ", [P, Q]), ("EPQ", [E, P, Q]), ("PQE", [P, Q, E])):
        lanes_req(f"e.wpass.{tag}.{order}.nog1", 4, ls)
        g1s = [("none", 1024 + 80), ("conf", 1024 + 20 + 256)] + ([("e", 1024 + 28 + 256)] if "E" in order else [])
        for g, d in g1s:
            lanes_req(f"e.wpass.{tag}.{order}.g1{g}", 4, ls + [(B, d)])
    # three writers to bank 5, G writes bank 20
    R = (A + 12, 1024 + 20 if same else 1024 + 20 + 512)
    lanes_req(f"e.wpass.{tag}.PQR.g1none", 4, [P, Q, R, (B, 1024 + 80)])
    # the conflict in group 1: lane 0 reads A word 0 (bank 9); lanes 1, 2 read B words 0, 1 (lane 2
    # fits group 0 by L1 bank, line B by line) writing bank 5
    lanes_req(f"e.wpass.{tag}.g1pair", 4, [(A, 1024 + 36), (B, 1024 + 20), (B + 4, 1024 + 20 if same else 1024 + 20 + 128)])
    # 8 bytes (a half-warp; P, Q read banks 0-1, 2-3 of A, write banks 14-15; G reads B 0-1, writes 4-5)
    lanes_req(f"e.wpass8.{tag}.g1none", 8, [(A, 1024 + 56), (A + 8, 1024 + 56 if same else 1024 + 56 + 128), (B, 1024 + 16)])
    lanes_req(f"e.wpass8.{tag}.nog1", 8, [(A, 1024 + 56), (A + 8, 1024 + 56 if same else 1024 + 56 + 128)])
    # 16 bytes (a quarter-warp; P, Q read banks 0-3, 4-7 of A, write banks 0-3; G reads B 0-3, writes 8-11)
    lanes_req(f"e.wpass16.{tag}.g1none", 16, [(A, 1024), (A + 16, 1024 if same else 1024 + 128), (B, 1024 + 32)])
# e2: the 11.9 pattern (lane pairs read words 9 and 25 of 16 consecutive lines) writing nb banks,
# 32 / nb lanes per bank (blocked by lane), k distinct words per bank (interleaved: lane j of a
# bank's block writes word j % k; "blk": word j // (n / k)).
BANKS9 = [14, 23, 16, 30, 5, 9, 27, 1]
src9 = [line(200 + l // 2) + (36 if l % 2 == 0 else 100) for l in range(32)]
for nb in (2, 4, 8):
    n = 32 // nb
    for k in (1, 2, 4, 8):
        if k > n: continue
        for mode in (("il", "blk") if nb == 4 and k in (2, 4) else ("il",)):
            dst = []
            for l in range(32):
                b, j = BANKS9[l // n], l % n
                w = j % k if mode == "il" else j // (n // k)
                dst.append(4 * (b + 32 * w))
            add(f"e.p9.{nb}b.{k}w.{mode}", 4, src9, dst)
# e3: adjacent-word lane pairs (lanes 2i, 2i+1 read words o_i, o_i + 1) on k lines (pair i on line
# i mod k), random lines against consecutive ones, the same word offsets; conflict-free writes.
erng = random.Random(1301)
offs = [erng.randrange(31) for _ in range(16)]
rlines = erng.sample(range(20, 500), 16)
for k in (2, 4, 8, 16):
    for kind, ls in (("rand", rlines[:k]), ("consec", [300 + j for j in range(k)])):
        add(f"e.adj.{k}.{kind}", 4, [ls[(l // 2) % k] * LINE + 4 * (offs[l // 2] + l % 2) for l in range(32)], C4)
olds = {}
for f in sys.argv[1:]:
    for r in json.load(open(f))["measured"]:
        olds[r["name"]] = r
r32 = olds["cpasync.11.32.p0.s4"]
s32 = r32["global_addresses"]
ln32 = list(dict.fromkeys(a // LINE for a in s32))
c32 = [(300 + ln32.index(a // LINE)) * LINE + a % LINE for a in s32]
add("e.adj.11_32.c4", 4, s32, C4)
add("e.adj.11_32.consec", 4, c32, r32["lane_byte_offsets"])
add("e.adj.11_32.consec.c4", 4, c32, C4)
# e4: 16-byte one-line duplicates: k lanes of a quarter-warp read chunk 4 of one line, the others
# distinct chunks; conflict-free destinations (16 B apart) unless said.
D16 = [1024 + 16 * l for l in range(32)]
L = line(120)
def dupq(k, spread=False):
    """8 chunk indices: k lanes on chunk 4 (lanes 0..k-1, or spread 0, 7, ...), the rest distinct."""
    pos = list(range(k)) if not spread else [0, 7, 3, 5, 1, 6, 2, 4][:k]
    rest = [c for c in range(8) if c != 4]
    out, it = [], iter(rest)
    for l in range(8):
        out.append(4 if l in pos else next(it))
    return out
for k in (2, 3, 4, 8):
    add(f"e.dup16.q0.{k}", 16, [L + 16 * c for c in dupq(k)] + [0] * 24, D16, 0xff)
add("e.dup16.q0.2.far", 16, [L + 16 * c for c in dupq(2, True)] + [0] * 24, D16, 0xff)
for k in (2, 4):
    add(f"e.dup16.all.{k}.sameline", 16, [L + 16 * c for c in dupq(k)] * 4, D16)
    add(f"e.dup16.all.{k}.ownline", 16, [line(121 + u) + 16 * c for u in range(4) for c in dupq(k)], D16)
# two duplicates writing one bank (different words) against distinct banks
add("e.dup16.q0.2.wconf", 16, [L + 16 * c for c in dupq(2)] + [0] * 24, [1024, 1024 + 128] + D16[2:], 0xff)
add("e.dup16.q0.2.wsame", 16, [L + 16 * c for c in dupq(2)] + [0] * 24, [1024, 1024] + D16[2:], 0xff)
r75 = olds["cpasync.11.75.p0.s2"]
s75 = r75["global_addresses"]
add("e.dup16.11_75.d16", 16, s75, D16, r75["active_mask"])
u75 = []  # the same, every repeated read of an address moved to an unused chunk of the line
for u in range(4):
    q = s75[8 * u: 8 * u + 8]; free = [L2 for L2 in range(8) if (q[0] // LINE) * LINE + 16 * L2 not in q]
    seen = set()
    for a in q:
        if a in seen: a = (a // LINE) * LINE + 16 * free.pop(0)
        seen.add(a); u75.append(a)
add("e.dup16.11_75.nodup", 16, u75, r75["lane_byte_offsets"], r75["active_mask"])
for k in (2, 4):
    add(f"e.dup8.h0.{k}", 8, [L + 8 * (0 if l < k else l) for l in range(16)] + [0] * 16, [1024 + 8 * l for l in range(32)], 0xffff)
n_e = len(reqs) - n_e0
# fresh random spread requests, seed 29 (the families of part c); one-line-class ones are skipped.
def one_line_req(size, mask, src):
    g = 128 // size
    for k in range(0, 32, g):
        s = [src[l] for l in range(k, k + g) if mask >> l & 1]
        if len({x // LINE for x in s}) > 1 or len(set(s)) < len(s): return False
    return True
rng = random.Random(29)
i = 0
while len(reqs) - n_e0 - n_e < 60:
    w = rng.choice([4, 8, 16]); m = rmask(); p = rng.randrange(7); q = rng.randrange(8)
    dst = [(o % limit) // w * w for o in pat(p, w, limit)]
    s = srcs(q, w)
    if not one_line_req(w, m, s):
        add(f"rand29.{i}.p{p}.s{q}", w, s, dst, m)
    i += 1
parts["e"] = []
for warm in (0, 1):
    for r in reqs[n_e0:]:
        parts["e"].append(f"{r[0]}#{'warm' if warm else 'cold'}0 {KIND[r[1]]} {r[2]} {warm} " + " ".join(map(str, r[3])) + " " + " ".join(map(str, r[4])))
print(f"part e: {n_e} structured, {len(reqs) - n_e0 - n_e} random spread (seed 29, {i} drawn)")
# Part f (2026-12-01, after the bounds of docs/wavefront-model.md "Bounds" were written): requests
# that press on the upper bound G + W - 1, cold x1 (S, the count bounded, is the same cold and
# warm). f.grp.*: G read groups (lanes reading the same L1 banks of G lines), each group with k
# lanes writing k distinct words of its own shared bank, so that groups run one after the other
# would cost G*k where the bound says G + k - 1; the conflicting lanes first or last in their
# group. rand31.*: random spread requests of seed 31 drawn to have many read groups and many
# writes per bank (sources on few L1 banks of many lines, destinations on few banks).
n_f0 = len(reqs)
def grp_req(name, w, G, k, last, units=1):
    per = 128 // w                      # lanes per unit
    n = per // G                        # lanes per group
    wpl = w // 4                        # words per lane
    src, dst = [0] * 32, [0] * 32
    mask = 0
    for u in range(units):
        cb = [(4 + 8 * g) % 32 for g in range(G)]   # conflict bank of group g (a multiple of 4)
        free = [b for b in range(0, 32, wpl) if all(not (c <= b < c + wpl or b <= c < b + wpl) for c in cb)]
        fi = 0
        for g in range(G):
            for j in range(n):
                l = u * per + g * n + j
                mask |= 1 << l
                src[l] = line(200 + 8 * u + g) + w * j
                conflict = (j >= n - k) if last else (j < k)
                if conflict:
                    jj = (j - (n - k)) if last else j
                    dst[l] = 4096 * (1 + jj) + 4 * cb[g]
                else:
                    dst[l] = 40960 + 4 * free[fi % len(free)] + 128 * (fi // len(free)); fi += 1
    add(name, w, src, dst, mask)
for w, cases in ((4, [(2, 2), (2, 4), (2, 8), (3, 2), (3, 4), (4, 2), (4, 4), (4, 8), (8, 2), (8, 4)]),
                 (8, [(2, 2), (2, 4), (4, 2), (4, 4), (8, 2)]),
                 (16, [(2, 2), (2, 4), (4, 2)])):
    for G, k in cases:
        if k > 128 // w // G: continue
        for last in (False, True):
            grp_req(f"f.grp.{w}.G{G}.k{k}.{'last' if last else 'first'}", w, G, k, last)
        if w > 4:
            grp_req(f"f.grp.{w}.G{G}.k{k}.allunits", w, G, k, False, units=32 * w // 128)
n_f = len(reqs) - n_f0
rng = random.Random(31)
i = 0
while len(reqs) - n_f0 - n_f < 100:
    w = rng.choice([4, 8, 16]); m = rmask() if rng.random() < 0.3 else FULL
    nb = rng.choice([1, 2, 4, 8])                       # L1 banks the sources use (per lane start)
    starts = rng.sample(range(0, 128, w), min(nb, 128 // w))
    nl = rng.choice([2, 4, 8, 16, 32])
    lines_ = [line(300 + rng.randrange(150)) for _ in range(nl)]
    s = [rng.choice(lines_) + rng.choice(starts) for _ in range(32)]
    wb = rng.choice([1, 2, 4, 8, 32])                   # shared bank slots the destinations use
    slots = rng.sample(range(0, 128, w), min(wb, 128 // w))
    d = [rng.randrange(2, 40) * 1024 + rng.choice(slots) for _ in range(32)]
    if not one_line_req(w, m, s):
        add(f"rand31.{i}.nb{nb}.nl{nl}.wb{wb}", w, s, d, m)
    i += 1
parts["f"] = []
for r in reqs[n_f0:]:
    parts["f"].append(f"{r[0]}#cold0 {KIND[r[1]]} {r[2]} 0 " + " ".join(map(str, r[3])) + " " + " ".join(map(str, r[4])))
print(f"part f: {n_f} structured, {len(reqs) - n_f0 - n_f} random spread (seed 31, {i} drawn)")
# Part g (2026-12-01, 17:00 UTC): cp.async.cg 16 B (kind 3), whose SASS-attributed count moves
# but no L1TEX counter does: the shared destinations' order varied with the sources fixed, and the
# other way round, each cold x1 (ten of them twice, to see whether the count repeats).
G_SRC = line(400)                    # 4 adjacent lines: lane l's chunk l is src + 16 * l
G_DST = 8192
perms = {
    "id": list(range(32)), "rev": [31 - l for l in range(32)],
    "revline": [8 * (l // 8) + 7 - l % 8 for l in range(32)],
    "x1": [l ^ 1 for l in range(32)], "x2": [l ^ 2 for l in range(32)], "x4": [l ^ 4 for l in range(32)],
    "x8": [l ^ 8 for l in range(32)], "x16": [l ^ 16 for l in range(32)],
    "rotline": [8 * (l // 8) + (l + 1) % 8 for l in range(32)], "rot1": [(l + 1) % 32 for l in range(32)],
    "t4x8": [(l % 4) * 8 + l // 4 for l in range(32)], "t8x4": [(l % 8) * 4 + l // 8 for l in range(32)],
}
grng = random.Random(37)
for k in range(8):
    p_ = list(range(32)); grng.shuffle(p_); perms[f"rand{k}"] = p_
for k in range(4):
    p_ = []
    for q in range(4):
        c = list(range(8 * q, 8 * q + 8)); grng.shuffle(c); p_ += c
    perms[f"randline{k}"] = p_
n_g0 = len(reqs)
for nm, p_ in perms.items():
    if nm == "id":
        add("g.id", 16, [G_SRC + 16 * l for l in range(32)], [G_DST + 16 * l for l in range(32)])
        continue
    add(f"g.dst.{nm}", 16, [G_SRC + 16 * l for l in range(32)], [G_DST + 16 * p_[l] for l in range(32)])
    add(f"g.src.{nm}", 16, [G_SRC + 16 * p_[l] for l in range(32)], [G_DST + 16 * l for l in range(32)])
for k in range(4):
    p_ = perms[f"rand{k}"]
    add(f"g.both.rand{k}", 16, [G_SRC + 16 * p_[l] for l in range(32)], [G_DST + 16 * p_[l] for l in range(32)])
for d in (2, 4, 8, 32):
    add(f"g.dup{d}", 16, [G_SRC + 16 * l for l in range(32)], [G_DST + 16 * (l // d) for l in range(32)])
for st in (32, 64, 128, 256):
    add(f"g.dststride{st}", 16, [G_SRC + 16 * l for l in range(32)], [G_DST + st * l for l in range(32)])
    add(f"g.srcstride{st}", 16, [G_SRC + st * l for l in range(32)], [G_DST + 16 * l for l in range(32)])
for off in (16, 64):
    add(f"g.dstoff{off}", 16, [G_SRC + 16 * l for l in range(32)], [G_DST + off + 16 * l for l in range(32)])
    add(f"g.srcoff{off}", 16, [G_SRC + off + 16 * l for l in range(32)], [G_DST + 16 * l for l in range(32)])
for nm, m in (("q0", 0xff), ("even", 0x55555555), ("odd", 0xaaaaaaaa), ("half", 0xffff), ("l0", 1), ("l0l8", 0x101)):
    add(f"g.mask.{nm}", 16, [G_SRC + 16 * l for l in range(32)], [G_DST + 16 * l for l in range(32)], m)
n_g = len(reqs) - n_g0
parts["g"] = []
for j, r in enumerate(reqs[n_g0:n_g0 + n_g]):
    for k in range(2 if j < 10 else 1):
        parts["g"].append(f"{r[0]}#cold{k} 3 {r[2]} 0 " + " ".join(map(str, r[3])) + " " + " ".join(map(str, r[4])))
print(f"part g: {n_g} cp.async.cg requests, {len(parts['g'])} launches")
for p, lines in parts.items():
    open(f"requests_{p}.txt", "w").write("\n".join(lines) + "\n")
recs = [{"name": n, "instruction": f"cp.async.{'cg' if n.startswith('g.') else 'ca'}.shared.global.{s}", "lane_byte_offsets": d,
         "active_mask": m, "global_addresses": src} for (n, s, m, src, d) in reqs]
json.dump({"note": "requests of .gpu/cpasync (gen.py); each launched cold (and warm) several times, see requests_*.txt", "records": recs}, open("requests.json", "w"))
print(f"structured {n_struct}, old {n_old}, random {n_rand}; launches " + " ".join(f"{p} {len(v)}" for p, v in parts.items()))
