"""2-warp attentions (BM = BN = 32, D = 64) of tests/data/ptx_lines/, measured as variants.py: keep every line where it is (the .loc lines name them)."""
import triton, triton.language as tl

@triton.jit
def va_mask(Q, K, V, O, N, sm_scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    m = tl.arange(0, BM); n = tl.arange(0, BN); d = tl.arange(0, D)
    q = tl.load(Q + m[:, None] * D + d[None, :], mask=m[:, None] < N, other=0.0)
    k = tl.load(K + n[:, None] * D + d[None, :], mask=n[:, None] < N, other=0.0)
    v = tl.load(V + n[:, None] * D + d[None, :], mask=n[:, None] < N, other=0.0)
    s = tl.dot(q, tl.trans(k)) * sm_scale
    s = tl.where(n[None, :] < N, s, float("-inf"))
    p = tl.exp(s - tl.max(s, 1)[:, None])
    p = p / tl.sum(p, 1)[:, None]
    o = tl.dot(p.to(tl.float16), v)
    tl.store(O + m[:, None] * D + d[None, :], o.to(tl.float16), mask=m[:, None] < N)

@triton.jit
def va_pid(Q, K, V, O, sm_scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    pid = tl.program_id(0)
    m = pid * BM + tl.arange(0, BM); n = tl.arange(0, BN); d = tl.arange(0, D)
    q = tl.load(Q + m[:, None] * D + d[None, :])
    k = tl.load(K + n[:, None] * D + d[None, :])
    v = tl.load(V + n[:, None] * D + d[None, :])
    s = tl.dot(q, tl.trans(k)) * sm_scale
    m_ = tl.max(s, 1)
    p = tl.exp(s - m_[:, None])
    l = tl.sum(p, 1)
    o = tl.dot(p.to(tl.float16), v)
    o = o / l[:, None]
    tl.store(O + m[:, None] * D + d[None, :], o.to(tl.float16))

@triton.jit
def va_f32in(Q, K, V, O, sm_scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    m = tl.arange(0, BM); n = tl.arange(0, BN); d = tl.arange(0, D)
    q = tl.load(Q + m[:, None] * D + d[None, :]).to(tl.float16)
    k = tl.load(K + n[:, None] * D + d[None, :]).to(tl.float16)
    v = tl.load(V + n[:, None] * D + d[None, :]).to(tl.float16)
    s = tl.dot(q, tl.trans(k)) * sm_scale
    p = tl.exp(s - tl.max(s, 1)[:, None])
    p = p / tl.sum(p, 1)[:, None]
    o = tl.dot(p.to(tl.float16), v)
    tl.store(O + m[:, None] * D + d[None, :], o)

@triton.jit
def va_exp2(Q, K, V, O, sm_scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    m = tl.arange(0, BM); n = tl.arange(0, BN); d = tl.arange(0, D)
    q = tl.load(Q + m[:, None] * D + d[None, :])
    k = tl.load(K + n[:, None] * D + d[None, :])
    v = tl.load(V + n[:, None] * D + d[None, :])
    s = tl.dot(q, tl.trans(k)) * (sm_scale * 1.44269504)
    p = tl.math.exp2(s - tl.max(s, 1)[:, None])
    o = tl.dot(p.to(tl.float16), v) / tl.sum(p, 1)[:, None]
    tl.store(O + m[:, None] * D + d[None, :], o.to(tl.float16))

@triton.jit
def va_kT(Q, K, V, O, sm_scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    m = tl.arange(0, BM); n = tl.arange(0, BN); d = tl.arange(0, D)
    q = tl.load(Q + m[:, None] * D + d[None, :])
    k = tl.load(K + n[:, None] * D + d[None, :])
    v = tl.load(V + n[:, None] * D + d[None, :])
    s = tl.dot(q, k.T) * sm_scale
    p = tl.softmax(s, dim=1).to(tl.float16)
    o = tl.dot(p, v)
    tl.store(O + m[:, None] * D + d[None, :], o)
