"""Triton kernels of the PTX fixtures (our own code, written for tilelab's fixtures).

Each kernel is launched as ONE program (grid (1,)) by the fixture harness; shapes are chosen so
that one program does the whole interesting loop. Every pointer argument gets its own zero-filled
buffer (as `tilelab ptx` does), so no kernel here lets loaded data choose a shared-memory address.
"""
import triton
import triton.language as tl


@triton.jit
def tl_matmul(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C[BM, BN] (f16) = A[BM, K] (f16, row-major) @ B[K, BN] (f16, row-major); f32 accumulate."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))


@triton.jit
def tl_attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, n_ctx, sm_scale, stride_s,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Fused attention forward (FlashAttention-2 order, as Triton's tutorial does it): one program
    owns BLOCK_M query rows of one head, keeps Q and the f32 accumulator on chip and walks the
    keys in BLOCK_N blocks with an online softmax in base 2. q, k, v, o: [n_ctx, HEAD_DIM] f16."""
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + offs_m[:, None] * stride_s + offs_d[None, :])
    m_i = tl.zeros((BLOCK_M,), dtype=tl.float32) - float("inf")
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32) + 1.0
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, n_ctx, BLOCK_N):
        k = tl.load(k_ptr + (start_n + offs_n)[:, None] * stride_s + offs_d[None, :])
        qk = tl.dot(q, tl.trans(k))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + (start_n + offs_n)[:, None] * stride_s + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(o_ptr + offs_m[:, None] * stride_s + offs_d[None, :], acc.to(tl.float16))


@triton.jit
def tl_transpose(x_ptr, y_ptr, stride_x, stride_y, BM: tl.constexpr, BN: tl.constexpr):
    """y[BN, BM] = x[BM, BN]ᵀ (f16, both row-major) through tl.trans."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * stride_x + rn[None, :])
    tl.store(y_ptr + rn[:, None] * stride_y + rm[None, :], tl.trans(x))


@triton.jit
def tl_softmax(x_ptr, y_ptr, n_rows, stride, BLOCK: tl.constexpr):
    """Row softmax of an [n_rows, BLOCK] f32 matrix; one program walks every row (the row max and
    sum are reduced across all warps of the program)."""
    cols = tl.arange(0, BLOCK)
    for r in range(0, n_rows):
        x = tl.load(x_ptr + r * stride + cols)
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(y_ptr + r * stride + cols, e / tl.sum(e, axis=0))


@triton.jit
def tl_fa_v1(q_ptr, k_ptr, v_ptr, o_ptr, l_ptr, m_ptr, n_ctx, sm_scale,
             D: tl.constexpr, BC: tl.constexpr, BR: tl.constexpr):
    """FlashAttention v1 loop order as in seed 004 (f32 in, f32 out): outer loop over K/V blocks
    j, inner loop over Q blocks i, O_i, l_i, m_i read from and written back to global memory on
    every step. S_ij = Q_i · tl.trans(K_j): K_j is stored [BC, D] row-major, so the dot reads it
    by columns. IEEE f32 dot (FMA), as Triton emitted on the article's sm_75 card."""
    offs_c = tl.arange(0, BC)
    offs_r = tl.arange(0, BR)
    offs_d = tl.arange(0, D)
    for j in range(0, n_ctx, BC):
        kj = tl.load(k_ptr + (j + offs_c)[:, None] * D + offs_d[None, :])
        vj = tl.load(v_ptr + (j + offs_c)[:, None] * D + offs_d[None, :])
        for i in range(0, n_ctx, BR):
            qi = tl.load(q_ptr + (i + offs_r)[:, None] * D + offs_d[None, :])
            oi = tl.load(o_ptr + (i + offs_r)[:, None] * D + offs_d[None, :])
            li = tl.load(l_ptr + i + offs_r)
            mi = tl.load(m_ptr + i + offs_r)
            sij = tl.dot(qi, tl.trans(kj), input_precision="ieee") * sm_scale
            mij = tl.max(sij, 1)
            pij = tl.exp(sij - mij[:, None])
            lij = tl.sum(pij, 1)
            mnew = tl.maximum(mi, mij)
            lnew = tl.exp(mi - mnew) * li + tl.exp(mij - mnew) * lij
            pv = tl.dot(pij, vj, input_precision="ieee")
            oi = (li * tl.exp(mi - mnew))[:, None] * oi + tl.exp(mij - mnew)[:, None] * pv
            oi = oi / lnew[:, None]
            tl.store(o_ptr + (i + offs_r)[:, None] * D + offs_d[None, :], oi)
            tl.store(l_ptr + i + offs_r, lnew)
            tl.store(m_ptr + i + offs_r, mnew)


@triton.jit
def tl_fa_v1_kt(q_ptr, kt_ptr, v_ptr, o_ptr, l_ptr, m_ptr, n_ctx, sm_scale,
                D: tl.constexpr, BC: tl.constexpr, BR: tl.constexpr):
    """tl_fa_v1 with K stored pre-transposed (kt = k.transpose(-1, -2).contiguous(), [D, n_ctx]):
    the dot loads K_jᵀ [D, BC] directly, no tl.trans (seed 004's fix)."""
    offs_c = tl.arange(0, BC)
    offs_r = tl.arange(0, BR)
    offs_d = tl.arange(0, D)
    for j in range(0, n_ctx, BC):
        ktj = tl.load(kt_ptr + offs_d[:, None] * n_ctx + (j + offs_c)[None, :])
        vj = tl.load(v_ptr + (j + offs_c)[:, None] * D + offs_d[None, :])
        for i in range(0, n_ctx, BR):
            qi = tl.load(q_ptr + (i + offs_r)[:, None] * D + offs_d[None, :])
            oi = tl.load(o_ptr + (i + offs_r)[:, None] * D + offs_d[None, :])
            li = tl.load(l_ptr + i + offs_r)
            mi = tl.load(m_ptr + i + offs_r)
            sij = tl.dot(qi, ktj, input_precision="ieee") * sm_scale
            mij = tl.max(sij, 1)
            pij = tl.exp(sij - mij[:, None])
            lij = tl.sum(pij, 1)
            mnew = tl.maximum(mi, mij)
            lnew = tl.exp(mi - mnew) * li + tl.exp(mij - mnew) * lij
            pv = tl.dot(pij, vj, input_precision="ieee")
            oi = (li * tl.exp(mi - mnew))[:, None] * oi + tl.exp(mij - mnew)[:, None] * pv
            oi = oi / lnew[:, None]
            tl.store(o_ptr + (i + offs_r)[:, None] * D + offs_d[None, :], oi)
            tl.store(l_ptr + i + offs_r, lnew)
            tl.store(m_ptr + i + offs_r, mnew)
