// Lesson `fa2-counts`: FlashAttention-2: PyTorch vs Triton instruction counts
// GENERATED from lessons/09-fa2-counts.toml by `tilelab lessons kernel fa2-counts`; do not edit by hand.
//
// extern "C" __global__ void lesson_fa2_counts(unsigned *out, int step, int layout, int variant)
// One block of 32 threads. Shared memory holds b16 indices (halfword i = i); the warp runs the
// steps of `variant` with file index <= `step` under `layout`, and out[lane*4 + r] gets register r
// of the last step (f32 bits for mma). Contract: src/gpu/source/lesson.rs.
//
// layouts: row | pad:8 | swizzle:3,3,4
// variants: torch | triton
// step 0: ldmatrix.x4 - ldmatrix.x4 of Q: A of S = Q·Kᵀ
// step 1: ldmatrix.x4 - ldmatrix.x4 of K: B of S = Q·Kᵀ, no .trans
// step 2: mma.m16n8k16.f16 - mma: S columns 0-7
// step 3: mma.m16n8k16.f16 - mma: S columns 8-15
// step 4: st.shared.b32 - triton: store P to shared memory [triton]
// step 5: ldmatrix.x4 - triton: reload P with ldmatrix.x4 [triton]
// step 6: ldmatrix.x4.trans - ldmatrix.x4.trans of V: B of O = P·V
// step 7: mma.m16n8k16.f16 - mma: O columns 0-7
// step 8: mma.m16n8k16.f16 - mma: O columns 8-15

// A tile layout, as tilelab's sim::layout::Layout: element (r, c) -> byte offset.
struct Lay {
    unsigned rows, cols, eb, colmajor, pad, swz, sb, sm, ss;
};

__device__ __forceinline__ unsigned lay_off(const Lay &l, unsigned r, unsigned c)
{
    const unsigned pitch = l.colmajor ? l.rows + l.pad : l.cols + l.pad;
    unsigned o = l.colmajor ? c * pitch + r : r * pitch + c;
    if (l.swz) {
        // CuTe Swizzle<B,M,S> on the element offset: bits [M+S, M+S+B) XORed into [M, M+B).
        const unsigned yyy = ((1u << l.sb) - 1u) << (l.sm + l.ss);
        o ^= (o & yyy) >> l.ss;
    }
    return o * l.eb;
}

// The accumulators of two n8 mmas, packed to f16x2 as the A fragment of the next mma:
// a0 = (acc0 c0, c1), a1 = (acc0 c2, c3), a2 = (acc1 c0, c1), a3 = (acc1 c2, c3).
// cvt.rn.f16x2.f32 d, hi, lo (SASS F2FP.PACK_AB).
__device__ __forceinline__ void pack_acc(const float acc[4][4], unsigned p[4])
{
    for (int j = 0; j < 2; ++j)
        for (int h = 0; h < 2; ++h)
            asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(p[2 * j + h]) : "f"(acc[j][2 * h + 1]), "f"(acc[j][2 * h]));
}

extern "C" __global__ void lesson_fa2_counts(unsigned *out, int step, int layout, int variant)
{
    __shared__ __align__(1024) unsigned char smem[16128];
    const unsigned lane = threadIdx.x & 31;
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
    if (layout < 0 || layout >= 3) return;
    for (unsigned i = lane; i < 8064u; i += 32) ((unsigned short *)smem)[i] = (unsigned short)i;
    __syncwarp();
    // tile Q: 16x128 elements of 2 bytes; layouts row | pad:8 | swizzle:3,3,4
    const Lay lay0[3] = {{16u, 128u, 2u, 0u, 0u, 0u, 0u, 0u, 0u}, {16u, 128u, 2u, 0u, 8u, 0u, 0u, 0u, 0u}, {16u, 128u, 2u, 0u, 0u, 1u, 3u, 3u, 4u}};
    const unsigned base0[3] = {0u, 0u, 0u};
    // tile K: 16x128 elements of 2 bytes; layouts row | pad:8 | swizzle:3,3,4
    const Lay lay1[3] = {{16u, 128u, 2u, 0u, 0u, 0u, 0u, 0u, 0u}, {16u, 128u, 2u, 0u, 8u, 0u, 0u, 0u, 0u}, {16u, 128u, 2u, 0u, 0u, 1u, 3u, 3u, 4u}};
    const unsigned base1[3] = {4096u, 5120u, 4096u};
    // tile V: 16x128 elements of 2 bytes; layouts row | pad:8 | swizzle:3,3,4
    const Lay lay2[3] = {{16u, 128u, 2u, 0u, 0u, 0u, 0u, 0u, 0u}, {16u, 128u, 2u, 0u, 8u, 0u, 0u, 0u, 0u}, {16u, 128u, 2u, 0u, 0u, 1u, 3u, 3u, 4u}};
    const unsigned base2[3] = {8192u, 10240u, 8192u};
    // tile P: 16x16 elements of 2 bytes; layouts row | pad:8 | swizzle:3,3,4
    const Lay lay3[3] = {{16u, 16u, 2u, 0u, 0u, 0u, 0u, 0u, 0u}, {16u, 16u, 2u, 0u, 8u, 0u, 0u, 0u, 0u}, {16u, 16u, 2u, 0u, 0u, 1u, 3u, 3u, 4u}};
    const unsigned base3[3] = {12288u, 15360u, 12288u};
    unsigned d[4] = {0u, 0u, 0u, 0u};
    unsigned s0[4] = {0u, 0u, 0u, 0u};
    unsigned s1[4] = {0u, 0u, 0u, 0u};
    unsigned s2[4] = {0u, 0u, 0u, 0u};
    unsigned s3[4] = {0u, 0u, 0u, 0u};
    unsigned s4[4] = {0u, 0u, 0u, 0u};
    unsigned s5[4] = {0u, 0u, 0u, 0u};
    unsigned s6[4] = {0u, 0u, 0u, 0u};
    unsigned s7[4] = {0u, 0u, 0u, 0u};
    unsigned s8[4] = {0u, 0u, 0u, 0u};
    float acc[4][4] = {};
    unsigned s_packed[4] = {0u, 0u, 0u, 0u};
    (void)acc;
    (void)s_packed;
    (void)s0;
    if (variant == 0) { // torch
        if (step >= 0) { // ldmatrix.x4 of Q: A of S = Q·Kᵀ
            unsigned r, c;
            { const unsigned mr[4] = {0u, 8u, 0u, 8u}, mc[4] = {0u, 0u, 8u, 8u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base0[layout] + lay_off(lay0[layout], r, c);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(s0[0]), "=r"(s0[1]), "=r"(s0[2]), "=r"(s0[3]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s0[q];
        }
        if (step >= 1) { // ldmatrix.x4 of K: B of S = Q·Kᵀ, no .trans
            unsigned r, c;
            { const unsigned mr[4] = {0u, 0u, 8u, 8u}, mc[4] = {0u, 8u, 0u, 8u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base1[layout] + lay_off(lay1[layout], r, c);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(s1[0]), "=r"(s1[1]), "=r"(s1[2]), "=r"(s1[3]) : "r"(a) : "memory");
            for (int j = 0; j < 4; ++j) for (int q = 0; q < 4; ++q) acc[j][q] = 0.0f;
            for (int q = 0; q < 4; ++q) d[q] = s1[q];
        }
        if (step >= 2) { // mma: S columns 0-7
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[0][0]), "+f"(acc[0][1]), "+f"(acc[0][2]), "+f"(acc[0][3])
                : "r"(s0[0]), "r"(s0[1]), "r"(s0[2]), "r"(s0[3]), "r"(s1[0]), "r"(s1[1]));
            for (int q = 0; q < 4; ++q) s2[q] = __float_as_uint(acc[0][q]);
            for (int q = 0; q < 4; ++q) d[q] = s2[q];
        }
        if (step >= 3) { // mma: S columns 8-15
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[1][0]), "+f"(acc[1][1]), "+f"(acc[1][2]), "+f"(acc[1][3])
                : "r"(s0[0]), "r"(s0[1]), "r"(s0[2]), "r"(s0[3]), "r"(s1[2]), "r"(s1[3]));
            for (int q = 0; q < 4; ++q) s3[q] = __float_as_uint(acc[1][q]);
            for (int q = 0; q < 4; ++q) d[q] = s3[q];
        }
        if (step >= 6) { // ldmatrix.x4.trans of V: B of O = P·V
            unsigned r, c;
            { const unsigned mr[4] = {0u, 8u, 0u, 8u}, mc[4] = {0u, 0u, 8u, 8u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base2[layout] + lay_off(lay2[layout], r, c);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(s6[0]), "=r"(s6[1]), "=r"(s6[2]), "=r"(s6[3]) : "r"(a) : "memory");
            // A of the next mmas: the accumulators packed to f16x2 (F2FP.PACK_AB)
            pack_acc(acc, s_packed);
            for (int j = 0; j < 4; ++j) for (int q = 0; q < 4; ++q) acc[j][q] = 0.0f;
            for (int q = 0; q < 4; ++q) d[q] = s6[q];
        }
        if (step >= 7) { // mma: O columns 0-7
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[0][0]), "+f"(acc[0][1]), "+f"(acc[0][2]), "+f"(acc[0][3])
                : "r"(s_packed[0]), "r"(s_packed[1]), "r"(s_packed[2]), "r"(s_packed[3]), "r"(s6[0]), "r"(s6[1]));
            for (int q = 0; q < 4; ++q) s7[q] = __float_as_uint(acc[0][q]);
            for (int q = 0; q < 4; ++q) d[q] = s7[q];
        }
        if (step >= 8) { // mma: O columns 8-15
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[1][0]), "+f"(acc[1][1]), "+f"(acc[1][2]), "+f"(acc[1][3])
                : "r"(s_packed[0]), "r"(s_packed[1]), "r"(s_packed[2]), "r"(s_packed[3]), "r"(s6[2]), "r"(s6[3]));
            for (int q = 0; q < 4; ++q) s8[q] = __float_as_uint(acc[1][q]);
            for (int q = 0; q < 4; ++q) d[q] = s8[q];
        }
    }
    if (variant == 1) { // triton
        if (step >= 0) { // ldmatrix.x4 of Q: A of S = Q·Kᵀ
            unsigned r, c;
            { const unsigned mr[4] = {0u, 8u, 0u, 8u}, mc[4] = {0u, 0u, 8u, 8u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base0[layout] + lay_off(lay0[layout], r, c);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(s0[0]), "=r"(s0[1]), "=r"(s0[2]), "=r"(s0[3]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s0[q];
        }
        if (step >= 1) { // ldmatrix.x4 of K: B of S = Q·Kᵀ, no .trans
            unsigned r, c;
            { const unsigned mr[4] = {0u, 0u, 8u, 8u}, mc[4] = {0u, 8u, 0u, 8u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base1[layout] + lay_off(lay1[layout], r, c);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(s1[0]), "=r"(s1[1]), "=r"(s1[2]), "=r"(s1[3]) : "r"(a) : "memory");
            for (int j = 0; j < 4; ++j) for (int q = 0; q < 4; ++q) acc[j][q] = 0.0f;
            for (int q = 0; q < 4; ++q) d[q] = s1[q];
        }
        if (step >= 2) { // mma: S columns 0-7
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[0][0]), "+f"(acc[0][1]), "+f"(acc[0][2]), "+f"(acc[0][3])
                : "r"(s0[0]), "r"(s0[1]), "r"(s0[2]), "r"(s0[3]), "r"(s1[0]), "r"(s1[1]));
            for (int q = 0; q < 4; ++q) s2[q] = __float_as_uint(acc[0][q]);
            for (int q = 0; q < 4; ++q) d[q] = s2[q];
        }
        if (step >= 3) { // mma: S columns 8-15
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[1][0]), "+f"(acc[1][1]), "+f"(acc[1][2]), "+f"(acc[1][3])
                : "r"(s0[0]), "r"(s0[1]), "r"(s0[2]), "r"(s0[3]), "r"(s1[2]), "r"(s1[3]));
            for (int q = 0; q < 4; ++q) s3[q] = __float_as_uint(acc[1][q]);
            for (int q = 0; q < 4; ++q) d[q] = s3[q];
        }
        if (step >= 4) { // triton: store P to shared memory
            unsigned r, c;
            r = 0u + 1u * ((lane / 4u) % 8u); c = 0u + 2u * ((lane / 1u) % 4u);
            const unsigned a = sbase + base3[layout] + lay_off(lay3[layout], r, c);
            for (int q = 0; q < 4; ++q) s4[q] = (lane << 16) | (unsigned)q;
            asm volatile("st.shared.b32 [%0], %1;" :: "r"(a), "r"(s4[0]) : "memory");
            s4[1] = s4[2] = s4[3] = 0u;
            __syncwarp();
            for (int q = 0; q < 4; ++q) d[q] = s4[q];
        }
        if (step >= 5) { // triton: reload P with ldmatrix.x4
            unsigned r, c;
            { const unsigned mr[4] = {0u, 8u, 0u, 8u}, mc[4] = {0u, 0u, 8u, 8u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base3[layout] + lay_off(lay3[layout], r, c);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(s5[0]), "=r"(s5[1]), "=r"(s5[2]), "=r"(s5[3]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s5[q];
        }
        if (step >= 6) { // ldmatrix.x4.trans of V: B of O = P·V
            unsigned r, c;
            { const unsigned mr[4] = {0u, 8u, 0u, 8u}, mc[4] = {0u, 0u, 8u, 8u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base2[layout] + lay_off(lay2[layout], r, c);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(s6[0]), "=r"(s6[1]), "=r"(s6[2]), "=r"(s6[3]) : "r"(a) : "memory");
            for (int j = 0; j < 4; ++j) for (int q = 0; q < 4; ++q) acc[j][q] = 0.0f;
            for (int q = 0; q < 4; ++q) d[q] = s6[q];
        }
        if (step >= 7) { // mma: O columns 0-7
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[0][0]), "+f"(acc[0][1]), "+f"(acc[0][2]), "+f"(acc[0][3])
                : "r"(s5[0]), "r"(s5[1]), "r"(s5[2]), "r"(s5[3]), "r"(s6[0]), "r"(s6[1]));
            for (int q = 0; q < 4; ++q) s7[q] = __float_as_uint(acc[0][q]);
            for (int q = 0; q < 4; ++q) d[q] = s7[q];
        }
        if (step >= 8) { // mma: O columns 8-15
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[1][0]), "+f"(acc[1][1]), "+f"(acc[1][2]), "+f"(acc[1][3])
                : "r"(s5[0]), "r"(s5[1]), "r"(s5[2]), "r"(s5[3]), "r"(s6[2]), "r"(s6[3]));
            for (int q = 0; q < 4; ++q) s8[q] = __float_as_uint(acc[1][q]);
            for (int q = 0; q < 4; ++q) d[q] = s8[q];
        }
    }
    for (int q = 0; q < 4; ++q) out[lane * 4 + q] = d[q];
}
