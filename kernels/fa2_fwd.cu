// FlashAttention-2 forward, the tiling of `tilelab sim counts flash-attn --style torch`
// (bm = bn = 64, 4 warps, warp w owns query rows 16w..16w+15), fp16 in, fp32 accumulate.
//
//   grid (S / 64, B * H), 128 threads; q, k, v, o: [B, H, S, D] contiguous f16; S % 64 == 0.
//   Shared memory: Q, K, V tiles of 64 x D f16, each row's 16-byte chunks XOR-swizzled with
//   (row % 8): element (r, c) at r*D + ((c/8) ^ (r%8))*8 + c%8, i.e. CuTe Swizzle<3,3,3> on the
//   tile's element offsets for D = 64 and Swizzle<3,3,4> for D = 128 (`--layout swizzle:3,3,4`).
//   Per key block, per warp (the simulator's warp program):
//     S = Q·Kᵀ: D/16 ldmatrix.x4 of Q (A), (64/16)·(D/16) ldmatrix.x4 of K (B stored n×k),
//               (64/8)·(D/16) mma.m16n8k16;
//     online softmax in registers (exp2, row max/sum over the 4 lanes of a quad);
//     O += P·V: P stays in registers (the S accumulators repacked as A fragments),
//               (64/16)·(D/16) ldmatrix.x4.trans of V, (D/8)·(64/16) mma.m16n8k16.
//   The first key block processed (the diagonal block when causal, masked; the last block
//   otherwise) and the loop over the others are two copies of that body, as in PyTorch's FA2.
//   K and V tiles arrive by cp.async while the previous product runs.

#ifndef FA_D
#define FA_D 128
#endif
#define FA_BM 64
#define FA_BN 64
#define FA_WARPS 4

__device__ __forceinline__ unsigned fa_swz(unsigned r, unsigned c)
{
    return r * FA_D + ((((c >> 3) ^ (r & 7u)) << 3) | (c & 7u));
}

__device__ __forceinline__ void fa_cp_async16(unsigned dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void fa_cp_commit() { asm volatile("cp.async.commit_group;"); }
template <int N>
__device__ __forceinline__ void fa_cp_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N)); }

// Copies a 64 x D tile (rows `row0`.. of a [S, D] matrix) into swizzled shared memory.
__device__ __forceinline__ void fa_load_tile(unsigned sbase, const unsigned short *g, unsigned row0)
{
    constexpr unsigned chunks = FA_BN * FA_D / 8; // 16-byte chunks
#pragma unroll
    for (unsigned i = threadIdx.x; i < chunks; i += FA_WARPS * 32) {
        unsigned r = i / (FA_D / 8), c = (i % (FA_D / 8)) * 8;
        fa_cp_async16(sbase + fa_swz(r, c) * 2u, g + (size_t)(row0 + r) * FA_D + c);
    }
}

__device__ __forceinline__ void fa_ldsm_x4(unsigned addr, unsigned r[4])
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void fa_ldsm_x4_t(unsigned addr, unsigned r[4])
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void fa_mma(float d[4], const unsigned a[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ unsigned fa_pack(float lo, float hi)
{
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

struct FaState {
    float o[FA_D / 8][4]; // O accumulators: n-tile (8 columns of D), c0..c3
    float m[2], l[2];     // running max (log2 domain) and sum for rows g and g+8
};

// One key block: S = Q·Kᵀ, online softmax, O += P·V. `mask`: causal masking of the diagonal.
__device__ __forceinline__ void fa_block(FaState &st, unsigned sq, unsigned sk, unsigned sv,
                                         unsigned q_row0, unsigned k_row0, bool mask, float scale_log2)
{
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned g = lane >> 2, t = lane & 3;
    float s[FA_BN / 8][4];
#pragma unroll
    for (int n = 0; n < FA_BN / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[n][e] = 0.f;
#pragma unroll
    for (unsigned kk = 0; kk < FA_D / 16; ++kk) {
        unsigned a[4];
        // A (Q rows 16w..): matrix j at ((j & 1) * 8, (j >> 1) * 8)
        fa_ldsm_x4(sq + fa_swz(16 * warp + (lane & 7) + ((lane >> 3) & 1) * 8, kk * 16 + (lane >> 4) * 8) * 2u, a);
#pragma unroll
        for (unsigned nb = 0; nb < FA_BN / 16; ++nb) {
            unsigned b[4];
            // B stored n×k (K rows): matrix j at ((j >> 1) * 8, (j & 1) * 8)
            fa_ldsm_x4(sk + fa_swz(nb * 16 + (lane & 7) + (lane >> 4) * 8, kk * 16 + ((lane >> 3) & 1) * 8) * 2u, b);
            fa_mma(s[2 * nb], a, b[0], b[1]);
            fa_mma(s[2 * nb + 1], a, b[2], b[3]);
        }
    }
    // Online softmax (log2 domain). Row g uses c0, c1; row g + 8 uses c2, c3.
    float mx[2] = {st.m[0], st.m[1]};
#pragma unroll
    for (int n = 0; n < FA_BN / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            float x = s[n][e] * scale_log2;
            if (mask) {
                unsigned qr = q_row0 + 16 * warp + g + (e >> 1) * 8;
                unsigned kc = k_row0 + n * 8 + 2 * t + (e & 1);
                if (kc > qr) x = -INFINITY;
            }
            s[n][e] = x;
            mx[e >> 1] = fmaxf(mx[e >> 1], x);
        }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
    }
    float corr[2], sum[2] = {0.f, 0.f};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        corr[h] = (st.m[h] == -INFINITY) ? 0.f : exp2f(st.m[h] - mx[h]);
        st.m[h] = mx[h];
    }
#pragma unroll
    for (int n = 0; n < FA_BN / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            float p = exp2f(s[n][e] - mx[e >> 1]);
            s[n][e] = p;
            sum[e >> 1] += p;
        }
#pragma unroll
    for (int h = 0; h < 2; ++h) st.l[h] = st.l[h] * corr[h] + sum[h]; // quad sum reduced at the end
#pragma unroll
    for (int n = 0; n < FA_D / 8; ++n) {
        st.o[n][0] *= corr[0];
        st.o[n][1] *= corr[0];
        st.o[n][2] *= corr[1];
        st.o[n][3] *= corr[1];
    }
    // O += P·V. P's A fragment for k-step kt (keys 16kt..16kt+15) from S n-tiles 2kt, 2kt+1.
#pragma unroll
    for (unsigned kt = 0; kt < FA_BN / 16; ++kt) {
        unsigned a[4] = {fa_pack(s[2 * kt][0], s[2 * kt][1]), fa_pack(s[2 * kt][2], s[2 * kt][3]),
                         fa_pack(s[2 * kt + 1][0], s[2 * kt + 1][1]), fa_pack(s[2 * kt + 1][2], s[2 * kt + 1][3])};
#pragma unroll
        for (unsigned nb = 0; nb < FA_D / 16; ++nb) {
            unsigned b[4];
            // B stored k×n (V rows = keys), .trans: matrix j at ((j & 1) * 8, (j >> 1) * 8)
            fa_ldsm_x4_t(sv + fa_swz(kt * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, nb * 16 + (lane >> 4) * 8) * 2u, b);
            fa_mma(st.o[2 * nb], a, b[0], b[1]);
            fa_mma(st.o[2 * nb + 1], a, b[2], b[3]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(FA_WARPS * 32)
    fa2_fwd(const unsigned short *q, const unsigned short *k, const unsigned short *v, unsigned short *o,
            int seq, int causal, float softmax_scale)
{
    // Dynamic shared memory: Q, then two (K, V) buffers: (1 + 2 * 2) * 64 * D * 2 bytes.
    extern __shared__ __align__(128) unsigned char fa_smem[];
    constexpr unsigned tile = FA_BN * FA_D * 2;
    const unsigned sq = (unsigned)__cvta_generic_to_shared(fa_smem);
    const unsigned skv[2] = {sq + tile, sq + 3 * tile}; // K at +0, V at +tile
    const size_t head = (size_t)blockIdx.y * seq * FA_D;
    const unsigned qb = blockIdx.x, q_row0 = qb * FA_BM;
    const int nblocks = causal ? (int)qb + 1 : seq / FA_BN;
    const float scale_log2 = softmax_scale * 1.4426950408889634f;

    FaState st;
#pragma unroll
    for (int n = 0; n < FA_D / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) st.o[n][e] = 0.f;
    st.m[0] = st.m[1] = -INFINITY;
    st.l[0] = st.l[1] = 0.f;

    // Key blocks from the last (the diagonal when causal) down to 0; block j - 1 is fetched
    // into the other buffer while block j is computed.
    int j = nblocks - 1;
    fa_load_tile(sq, q + head, q_row0);
    fa_load_tile(skv[0], k + head, j * FA_BN);
    fa_load_tile(skv[0] + tile, v + head, j * FA_BN);
    fa_cp_commit();
    fa_cp_wait<0>();
    __syncthreads();
    if (j > 0) {
        fa_load_tile(skv[1], k + head, (j - 1) * FA_BN);
        fa_load_tile(skv[1] + tile, v + head, (j - 1) * FA_BN);
        fa_cp_commit();
    }
    // First block: one copy of the body, with run-time causal masking.
    fa_block(st, sq, skv[0], skv[0] + tile, q_row0, j * FA_BN, causal != 0, scale_log2);
    // The other blocks: the second copy, never masked.
    unsigned buf = 1;
    for (j = nblocks - 2; j >= 0; --j, buf ^= 1u) {
        fa_cp_wait<0>();
        __syncthreads(); // block j has landed; every warp is done with the other buffer
        if (j > 0) {
            fa_load_tile(skv[buf ^ 1u], k + head, (j - 1) * FA_BN);
            fa_load_tile(skv[buf ^ 1u] + tile, v + head, (j - 1) * FA_BN);
            fa_cp_commit();
        }
        fa_block(st, sq, skv[buf], skv[buf] + tile, q_row0, j * FA_BN, false, scale_log2);
    }
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned g = lane >> 2, t = lane & 3;
    float inv[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float l = st.l[h];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        inv[h] = 1.f / l;
    }
    unsigned short *orow = o + head + (size_t)(q_row0 + 16 * warp + g) * FA_D;
#pragma unroll
    for (int n = 0; n < FA_D / 8; ++n) {
        unsigned c = n * 8 + 2 * t;
        *(unsigned *)(orow + c) = fa_pack(st.o[n][0] * inv[0], st.o[n][1] * inv[0]);
        *(unsigned *)(orow + 8 * FA_D + c) = fa_pack(st.o[n][2] * inv[1], st.o[n][3] * inv[1]);
    }
}
