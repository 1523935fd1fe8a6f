// FlashAttention-2 forward with the tiling of `tilelab sim counts flash-attn --style torch
// --bm FA_BM --bn FA_BN --warps 4` (warp w owns query rows w*FA_BM/4 .. (w+1)*FA_BM/4 - 1), fp16
// in, fp32 accumulate. Compile-time parameters: FA_D (64 or 128), FA_BM (64 or 128), FA_BN (64 or
// 128), FA_CAUSAL (0/1).
//
//   grid (S / FA_BM, B * H), 128 threads; q, k, v, o: [B, H, S, D] contiguous f16;
//   S % FA_BM == 0 and S % FA_BN == 0; dynamic shared memory (FA_BM + 4 * FA_BN) * D * 2 bytes.
//   Shared memory: Q (FA_BM x D) and two (K, V) buffers of FA_BN x D f16; each row's 16-byte chunks
//   are XOR-swizzled with (row % 8): element (r, c) at r*D + ((c/8) ^ (r%8))*8 + c%8, i.e. CuTe
//   Swizzle<3,3,3> on the tile's element offsets for D = 64 and Swizzle<3,3,4> for D = 128
//   (`--layout swizzle:3,3,4`).
//   Per key block, per warp (the simulator's warp program):
//     S = Q·Kᵀ: (FA_BM/64)·(D/16) ldmatrix.x4 of Q (A), (FA_BN/16)·(D/16) ldmatrix.x4 of K (B
//               stored n×k), (FA_BM/64)·(FA_BN/8)·(D/16) mma.m16n8k16;
//     online softmax in registers (exp2, row max/sum over the 4 lanes of a quad);
//     O += P·V: P stays in registers (the S accumulators repacked as A fragments),
//               (FA_BN/16)·(D/16) ldmatrix.x4.trans of V, (FA_BM/64)·(D/8)·(FA_BN/16) mma.m16n8k16.
//   Addresses: each lane keeps one byte offset per operand (its row and 16-byte chunk for k-step
//   0); the chunk of k-step kk is that chunk XOR 2kk, so every ldmatrix address is
//   base ^ (kk << 5) plus a constant (folded into LDSM's immediate), with no per-k-step register.
//   Copies of that body: causal, ceil(FA_BM/FA_BN) masked diagonal blocks (unrolled; PyTorch's
//   FA2 n_masking_steps) and the unmasked loop; not causal, one peeled block and the loop, as in
//   PyTorch's FA2. A query block sees ceil((q_block+1)·FA_BM / FA_BN) key blocks when causal. Block j - 1's K and V
//   arrive by cp.async (double buffer) while block j is computed.

#ifndef FA_D
#define FA_D 128
#endif
#ifndef FA_BM
#define FA_BM 64
#endif
#ifndef FA_CAUSAL
#define FA_CAUSAL 1
#endif
#ifndef FA_BN
#define FA_BN 64
#endif
#define FA_WARPS 4
#define FA_NEG_INF __int_as_float(0xff800000u) // -inf without <math.h> (NVRTC)
#define FA_MT (FA_BM / 16 / FA_WARPS) // m16 tiles per warp

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

// Copies a ROWS x D tile (rows `row0`.. of a [S, D] matrix) into swizzled shared memory. Thread
// t copies chunk (t % (D/8)) of rows t / (D/8) + RP*it (RP = 128 / (D/8) rows per pass, a
// multiple of 8, so the row's swizzle (row & 7) is the same on every pass): one shared offset
// and one global pointer per thread, the passes are immediate offsets.
template <unsigned ROWS>
__device__ __forceinline__ void fa_load_tile(unsigned sbase, const unsigned short *g, unsigned row0)
{
    constexpr unsigned cpr = FA_D / 8;             // 16-byte chunks per row
    constexpr unsigned rp = FA_WARPS * 32 / cpr;    // rows per pass
    const unsigned r = threadIdx.x / cpr, c = (threadIdx.x % cpr) * 8;
    const unsigned s0 = sbase + fa_swz(r, c) * 2u;
    const unsigned short *g0 = g + (size_t)(row0 + r) * FA_D + c;
#pragma unroll
    for (unsigned it = 0; it < ROWS / rp; ++it)
        fa_cp_async16(s0 + it * rp * FA_D * 2u, g0 + (size_t)it * rp * FA_D);
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

// Per-lane byte offsets (k-step 0) inside a tile: Q rows (A), K rows (B stored n×k), V rows (B,
// .trans). The 16-byte chunk index of k-step kk is (2kk + h) ^ (row & 7) = ((h ^ (row & 7)) ^ 2kk),
// so offset(kk) = offset(0) ^ (kk << 5); tiles are 1024-byte aligned, so the XOR can be applied
// to the full shared address.
struct FaLane {
    unsigned q, k, v;
};
__device__ __forceinline__ FaLane fa_lane_offsets()
{
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned x = lane & 7, h3 = (lane >> 3) & 1, h4 = lane >> 4;
    FaLane o;
    // A (Q rows): matrix j = lane / 8 at ((j & 1) * 8, (j >> 1) * 8)
    o.q = ((warp * 16 * FA_MT + x + h3 * 8) * FA_D + ((h4 ^ x) << 3)) * 2u;
    // B stored n×k (K rows): matrix j at ((j >> 1) * 8, (j & 1) * 8)
    o.k = ((x + h4 * 8) * FA_D + ((h3 ^ x) << 3)) * 2u;
    // B stored k×n (V rows = keys), .trans: matrix j at ((j & 1) * 8, (j >> 1) * 8)
    o.v = ((x + h3 * 8) * FA_D + ((h4 ^ x) << 3)) * 2u;
    return o;
}

struct FaState {
    float o[FA_MT][FA_D / 8][4]; // O accumulators: m-tile, n-tile (8 columns of D), c0..c3
    float m[FA_MT][2], l[FA_MT][2]; // running max (log2 domain) and sum for rows g and g+8
};

// One key block: S = Q·Kᵀ, online softmax, O += P·V. `MASK`: causal masking (diagonal blocks).
template <bool MASK>
__device__ __forceinline__ void fa_block(FaState &st, unsigned aq, unsigned ak, unsigned av,
                                         unsigned q_row0, unsigned k_row0, float scale_log2)
{
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned g = lane >> 2, t = lane & 3;
    const unsigned wrow = warp * 16 * FA_MT; // first query row of this warp in the tile
    float s[FA_MT][FA_BN / 8][4];
#pragma unroll
    for (int mt = 0; mt < FA_MT; ++mt)
#pragma unroll
        for (int n = 0; n < FA_BN / 8; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[mt][n][e] = 0.f;
#pragma unroll
    for (unsigned kk = 0; kk < FA_D / 16; ++kk) {
        unsigned a[FA_MT][4];
#pragma unroll
        for (unsigned mt = 0; mt < FA_MT; ++mt)
            fa_ldsm_x4((aq ^ (kk << 5)) + mt * 16 * FA_D * 2, a[mt]);
#pragma unroll
        for (unsigned nb = 0; nb < FA_BN / 16; ++nb) {
            unsigned b[4];
            fa_ldsm_x4((ak ^ (kk << 5)) + nb * 16 * FA_D * 2, b);
#pragma unroll
            for (unsigned mt = 0; mt < FA_MT; ++mt) {
                fa_mma(s[mt][2 * nb], a[mt], b[0], b[1]);
                fa_mma(s[mt][2 * nb + 1], a[mt], b[2], b[3]);
            }
        }
    }
    // Online softmax (log2 domain: p = 2^(s * scale_log2 - max)). The row max is taken on the raw
    // scores (scale > 0), so each p is one FFMA and one EX2. Row g uses c0, c1; row g + 8 c2, c3.
#pragma unroll
    for (int mt = 0; mt < FA_MT; ++mt) {
        float mx[2] = {FA_NEG_INF, FA_NEG_INF};
#pragma unroll
        for (int n = 0; n < FA_BN / 8; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                if (MASK) {
                    unsigned qr = q_row0 + wrow + 16 * mt + g + (e >> 1) * 8;
                    unsigned kc = k_row0 + n * 8 + 2 * t + (e & 1);
                    if (kc > qr) s[mt][n][e] = FA_NEG_INF;
                }
                mx[e >> 1] = fmaxf(mx[e >> 1], s[mt][n][e]);
            }
        float corr[2], base[2], sum[2] = {0.f, 0.f};
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
            mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
            const float m_new = fmaxf(st.m[mt][h], mx[h] * scale_log2);
            // A row whose keys are all masked so far keeps max -inf: scale by 0, add nothing.
            base[h] = (m_new == FA_NEG_INF) ? 0.f : m_new;
            corr[h] = (st.m[mt][h] == FA_NEG_INF) ? 0.f : exp2f(st.m[mt][h] - base[h]);
            st.m[mt][h] = m_new;
        }
#pragma unroll
        for (int n = 0; n < FA_BN / 8; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                float p = exp2f(fmaf(s[mt][n][e], scale_log2, -base[e >> 1]));
                s[mt][n][e] = p;
                sum[e >> 1] += p;
            }
#pragma unroll
        for (int h = 0; h < 2; ++h) st.l[mt][h] = st.l[mt][h] * corr[h] + sum[h]; // quad sum at the end
#pragma unroll
        for (int n = 0; n < FA_D / 8; ++n) {
            st.o[mt][n][0] *= corr[0];
            st.o[mt][n][1] *= corr[0];
            st.o[mt][n][2] *= corr[1];
            st.o[mt][n][3] *= corr[1];
        }
    }
    // O += P·V. P's A fragment for k-step kt (keys 16kt..16kt+15) from S n-tiles 2kt, 2kt+1.
#pragma unroll
    for (unsigned kt = 0; kt < FA_BN / 16; ++kt) {
        unsigned a[FA_MT][4];
#pragma unroll
        for (unsigned mt = 0; mt < FA_MT; ++mt) {
            a[mt][0] = fa_pack(s[mt][2 * kt][0], s[mt][2 * kt][1]);
            a[mt][1] = fa_pack(s[mt][2 * kt][2], s[mt][2 * kt][3]);
            a[mt][2] = fa_pack(s[mt][2 * kt + 1][0], s[mt][2 * kt + 1][1]);
            a[mt][3] = fa_pack(s[mt][2 * kt + 1][2], s[mt][2 * kt + 1][3]);
        }
#pragma unroll
        for (unsigned nb = 0; nb < FA_D / 16; ++nb) {
            unsigned b[4];
            fa_ldsm_x4_t((av ^ (nb << 5)) + kt * 16 * FA_D * 2, b);
#pragma unroll
            for (unsigned mt = 0; mt < FA_MT; ++mt) {
                fa_mma(st.o[mt][2 * nb], a[mt], b[0], b[1]);
                fa_mma(st.o[mt][2 * nb + 1], a[mt], b[2], b[3]);
            }
        }
    }
}

// Fetches key block `jb` (K and V) into buffer `buf` (0 or 1) and commits the cp.async group.
__device__ __forceinline__ void fa_fetch(unsigned skv0, unsigned buf, const unsigned short *k,
                                         const unsigned short *v, int jb)
{
    constexpr unsigned tile = FA_BN * FA_D * 2;
    const unsigned base = skv0 + buf * 2u * tile; // K at +0, V at +tile
    fa_load_tile<FA_BN>(base, k, jb * FA_BN);
    fa_load_tile<FA_BN>(base + tile, v, jb * FA_BN);
    fa_cp_commit();
}

extern "C" __global__ void __launch_bounds__(FA_WARPS * 32, 1)
    fa2_fwd(const unsigned short *q, const unsigned short *k, const unsigned short *v, unsigned short *o,
            int seq, float softmax_scale)
{
    // Dynamic shared memory: Q (FA_BM x D), then two (K, V) buffers of FA_BN x D each (f16).
    extern __shared__ __align__(1024) unsigned char fa_smem[];
    constexpr unsigned tile = FA_BN * FA_D * 2;
    const unsigned sq = (unsigned)__cvta_generic_to_shared(fa_smem);
    const unsigned skv0 = sq + FA_BM * FA_D * 2;
    const size_t head = (size_t)blockIdx.y * seq * FA_D;
    k += head;
    v += head;
    // Longest-running query blocks first (causal: the last blocks see the most keys).
    const unsigned qb = FA_CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x, q_row0 = qb * FA_BM;
    const int nblocks = FA_CAUSAL ? (int)((q_row0 + FA_BM + FA_BN - 1) / FA_BN) : seq / FA_BN;
    const float scale_log2 = softmax_scale * 1.4426950408889634f;

    const FaLane ln = fa_lane_offsets();
    FaState st;
#pragma unroll
    for (int mt = 0; mt < FA_MT; ++mt) {
#pragma unroll
        for (int n = 0; n < FA_D / 8; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) st.o[mt][n][e] = 0.f;
        st.m[mt][0] = st.m[mt][1] = FA_NEG_INF;
        st.l[mt][0] = st.l[mt][1] = 0.f;
    }

    // Key blocks from the last down to 0; block j - 1 is fetched into the other buffer while
    // block j is computed. Causal: the ceil(FA_BM / FA_BN) blocks on the diagonal are masked, each its
    // own copy of the body (unrolled, as PyTorch's FA2 does); otherwise the first block is
    // peeled. Then one loop copy without masking.
    int j = nblocks - 1;
    unsigned buf = 0;
    fa_load_tile<FA_BM>(sq, q + head, q_row0);
    fa_fetch(skv0, 0, k, v, j);
    constexpr int first = FA_CAUSAL ? (FA_BM + FA_BN - 1) / FA_BN : 1;
#pragma unroll
    for (int f = 0; f < first; ++f, --j, buf ^= 1u) {
        fa_cp_wait<0>();
        __syncthreads(); // block j has landed; every warp is done with the other buffer
        if (j > 0) fa_fetch(skv0, buf ^ 1u, k, v, j - 1);
        const unsigned kv = skv0 + buf * 2u * tile;
        fa_block<FA_CAUSAL != 0>(st, sq + ln.q, kv + ln.k, kv + tile + ln.v, q_row0, j * FA_BN, scale_log2);
    }
#pragma unroll 1
    for (; j >= 0; --j, buf ^= 1u) {
        fa_cp_wait<0>();
        __syncthreads();
        if (j > 0) fa_fetch(skv0, buf ^ 1u, k, v, j - 1);
        const unsigned kv = skv0 + buf * 2u * tile;
        fa_block<false>(st, sq + ln.q, kv + ln.k, kv + tile + ln.v, q_row0, j * FA_BN, scale_log2);
    }
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mt = 0; mt < FA_MT; ++mt) {
        float inv[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float l = st.l[mt][h];
            l += __shfl_xor_sync(0xffffffffu, l, 1);
            l += __shfl_xor_sync(0xffffffffu, l, 2);
            inv[h] = 1.f / l;
        }
        unsigned short *orow = o + head + (size_t)(q_row0 + warp * 16 * FA_MT + 16 * mt + g) * FA_D;
#pragma unroll
        for (int n = 0; n < FA_D / 8; ++n) {
            unsigned c = n * 8 + 2 * t;
            *(unsigned *)(orow + c) = fa_pack(st.o[mt][n][0] * inv[0], st.o[mt][n][1] * inv[0]);
            *(unsigned *)(orow + 8 * FA_D + c) = fa_pack(st.o[mt][n][2] * inv[1], st.o[mt][n][3] * inv[1]);
        }
    }
}
