// Lesson `gemm-counts`: Tiled GEMM instruction counts
// GENERATED from lessons/08-gemm-counts.toml by `tilelab lessons kernel gemm-counts`; do not edit by hand.
//
// extern "C" __global__ void lesson_gemm_counts(unsigned *out, int step, int layout, int variant)
// One block of 32 threads. Shared memory holds b16 indices (halfword i = i); the warp runs the
// steps of `variant` with file index <= `step` under `layout`, and out[lane*4 + r] gets register r
// of the last step (f32 bits for mma). Contract: src/gpu/source/lesson.rs.
//
// layouts: row | pad:8
// variants: all
// step 0: ldmatrix.x4 - k 0-15: ldmatrix.x4 of A
// step 1: ldmatrix.x4 - k 0-15: ldmatrix.x4 of B (n 0-15)
// step 2: mma.m16n8k16.f16 - k 0-15: mma for C columns 0-7
// step 3: mma.m16n8k16.f16 - k 0-15: mma for C columns 8-15
// step 4: ldmatrix.x4 - k 16-31: ldmatrix.x4 of A
// step 5: ldmatrix.x4 - k 16-31: ldmatrix.x4 of B
// step 6: mma.m16n8k16.f16 - k 16-31: mma for C columns 0-7
// step 7: mma.m16n8k16.f16 - k 16-31: mma for C columns 8-15

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

extern "C" __global__ void lesson_gemm_counts(unsigned *out, int step, int layout, int variant)
{
    __shared__ __align__(1024) unsigned char smem[3328];
    const unsigned lane = threadIdx.x & 31;
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
    if (layout < 0 || layout >= 2) return;
    for (unsigned i = lane; i < 1664u; i += 32) ((unsigned short *)smem)[i] = (unsigned short)i;
    __syncwarp();
    // tile A: 16x32 elements of 2 bytes; layouts row | pad:8
    const Lay lay0[2] = {{16u, 32u, 2u, 0u, 0u, 0u, 0u, 0u, 0u}, {16u, 32u, 2u, 0u, 8u, 0u, 0u, 0u, 0u}};
    const unsigned base0[2] = {0u, 0u};
    // tile B: 16x32 elements of 2 bytes; layouts row | pad:8
    const Lay lay1[2] = {{16u, 32u, 2u, 0u, 0u, 0u, 0u, 0u, 0u}, {16u, 32u, 2u, 0u, 8u, 0u, 0u, 0u, 0u}};
    const unsigned base1[2] = {1024u, 2048u};
    unsigned d[4] = {0u, 0u, 0u, 0u};
    unsigned s0[4] = {0u, 0u, 0u, 0u};
    unsigned s1[4] = {0u, 0u, 0u, 0u};
    unsigned s2[4] = {0u, 0u, 0u, 0u};
    unsigned s3[4] = {0u, 0u, 0u, 0u};
    unsigned s4[4] = {0u, 0u, 0u, 0u};
    unsigned s5[4] = {0u, 0u, 0u, 0u};
    unsigned s6[4] = {0u, 0u, 0u, 0u};
    unsigned s7[4] = {0u, 0u, 0u, 0u};
    float acc[4][4] = {};
    unsigned s_packed[4] = {0u, 0u, 0u, 0u};
    (void)acc;
    (void)s_packed;
    (void)s0;
    if (variant == 0) { // all
        if (step >= 0) { // k 0-15: ldmatrix.x4 of A
            unsigned r, c;
            { const unsigned mr[4] = {0u, 8u, 0u, 8u}, mc[4] = {0u, 0u, 8u, 8u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base0[layout] + lay_off(lay0[layout], r, c);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(s0[0]), "=r"(s0[1]), "=r"(s0[2]), "=r"(s0[3]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s0[q];
        }
        if (step >= 1) { // k 0-15: ldmatrix.x4 of B (n 0-15)
            unsigned r, c;
            { const unsigned mr[4] = {0u, 0u, 8u, 8u}, mc[4] = {0u, 8u, 0u, 8u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base1[layout] + lay_off(lay1[layout], r, c);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(s1[0]), "=r"(s1[1]), "=r"(s1[2]), "=r"(s1[3]) : "r"(a) : "memory");
            for (int j = 0; j < 4; ++j) for (int q = 0; q < 4; ++q) acc[j][q] = 0.0f;
            for (int q = 0; q < 4; ++q) d[q] = s1[q];
        }
        if (step >= 2) { // k 0-15: mma for C columns 0-7
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[0][0]), "+f"(acc[0][1]), "+f"(acc[0][2]), "+f"(acc[0][3])
                : "r"(s0[0]), "r"(s0[1]), "r"(s0[2]), "r"(s0[3]), "r"(s1[0]), "r"(s1[1]));
            for (int q = 0; q < 4; ++q) s2[q] = __float_as_uint(acc[0][q]);
            for (int q = 0; q < 4; ++q) d[q] = s2[q];
        }
        if (step >= 3) { // k 0-15: mma for C columns 8-15
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[1][0]), "+f"(acc[1][1]), "+f"(acc[1][2]), "+f"(acc[1][3])
                : "r"(s0[0]), "r"(s0[1]), "r"(s0[2]), "r"(s0[3]), "r"(s1[2]), "r"(s1[3]));
            for (int q = 0; q < 4; ++q) s3[q] = __float_as_uint(acc[1][q]);
            for (int q = 0; q < 4; ++q) d[q] = s3[q];
        }
        if (step >= 4) { // k 16-31: ldmatrix.x4 of A
            unsigned r, c;
            { const unsigned mr[4] = {0u, 8u, 0u, 8u}, mc[4] = {16u, 16u, 24u, 24u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base0[layout] + lay_off(lay0[layout], r, c);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(s4[0]), "=r"(s4[1]), "=r"(s4[2]), "=r"(s4[3]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s4[q];
        }
        if (step >= 5) { // k 16-31: ldmatrix.x4 of B
            unsigned r, c;
            { const unsigned mr[4] = {0u, 0u, 8u, 8u}, mc[4] = {16u, 24u, 16u, 24u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base1[layout] + lay_off(lay1[layout], r, c);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(s5[0]), "=r"(s5[1]), "=r"(s5[2]), "=r"(s5[3]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s5[q];
        }
        if (step >= 6) { // k 16-31: mma for C columns 0-7
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[0][0]), "+f"(acc[0][1]), "+f"(acc[0][2]), "+f"(acc[0][3])
                : "r"(s4[0]), "r"(s4[1]), "r"(s4[2]), "r"(s4[3]), "r"(s5[0]), "r"(s5[1]));
            for (int q = 0; q < 4; ++q) s6[q] = __float_as_uint(acc[0][q]);
            for (int q = 0; q < 4; ++q) d[q] = s6[q];
        }
        if (step >= 7) { // k 16-31: mma for C columns 8-15
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                : "+f"(acc[1][0]), "+f"(acc[1][1]), "+f"(acc[1][2]), "+f"(acc[1][3])
                : "r"(s4[0]), "r"(s4[1]), "r"(s4[2]), "r"(s4[3]), "r"(s5[2]), "r"(s5[3]));
            for (int q = 0; q < 4; ++q) s7[q] = __float_as_uint(acc[1][q]);
            for (int q = 0; q < 4; ++q) d[q] = s7[q];
        }
    }
    for (int q = 0; q < 4; ++q) out[lane * 4 + q] = d[q];
}
