// Lesson `reading-triton-ptx`: Reading Triton's PTX: find the conflict, fix it, and what Triton does for you
// GENERATED from lessons/14-reading-triton-ptx.toml by `tilelab lessons kernel reading-triton-ptx`; do not edit by hand.
//
// extern "C" __global__ void lesson_reading_triton_ptx(unsigned *out, int step, int layout, int variant)
// One block of 32 threads. Shared memory holds b16 indices (halfword i = i); the warp runs the
// steps of `variant` with file index <= `step` under `layout`, and out[lane*4 + r] gets register r
// of the last step (f32 bits for mma). Contract: src/gpu/source/lesson.rs.
//
// layouts: row | swizzle:3,3,3
// variants: all
// step 0: ld.shared.v4.b32 - line 402: ld.shared.v4.b32 at (tid & 15) * 512
// step 1: ldmatrix.x4.trans - ldmatrix.x4.trans of V (LDSM.16.MT88.4)
// step 2: stmatrix.x4 - stmatrix.x4 of P (STSM.16.M88.4)

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

extern "C" __global__ void lesson_reading_triton_ptx(unsigned *out, int step, int layout, int variant)
{
    __shared__ __align__(1024) unsigned char smem[10240];
    const unsigned lane = threadIdx.x & 31;
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
    if (layout < 0 || layout >= 2) return;
    for (unsigned i = lane; i < 5120u; i += 32) ((unsigned short *)smem)[i] = (unsigned short)i;
    __syncwarp();
    // tile K: 32x64 elements of 4 bytes; layouts row | row
    const Lay lay0[2] = {{32u, 64u, 4u, 0u, 0u, 0u, 0u, 0u, 0u}, {32u, 64u, 4u, 0u, 0u, 0u, 0u, 0u, 0u}};
    const unsigned base0[2] = {0u, 0u};
    // tile V: 16x64 elements of 2 bytes; layouts row | swizzle:3,3,3
    const Lay lay1[2] = {{16u, 64u, 2u, 0u, 0u, 0u, 0u, 0u, 0u}, {16u, 64u, 2u, 0u, 0u, 1u, 3u, 3u, 3u}};
    const unsigned base1[2] = {8192u, 8192u};
    unsigned d[4] = {0u, 0u, 0u, 0u};
    unsigned s0[4] = {0u, 0u, 0u, 0u};
    unsigned s1[4] = {0u, 0u, 0u, 0u};
    unsigned s2[4] = {0u, 0u, 0u, 0u};
    float acc[4][4] = {};
    unsigned s_packed[4] = {0u, 0u, 0u, 0u};
    (void)acc;
    (void)s_packed;
    (void)s0;
    if (variant == 0) { // all
        if (step >= 0) { // line 402: ld.shared.v4.b32 at (tid & 15) * 512
            unsigned r, c;
            r = 0u + 2u * ((lane / 1u) % 16u); c = 0u;
            const unsigned a = sbase + base0[layout] + lay_off(lay0[layout], r, c);
            asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(s0[0]), "=r"(s0[1]), "=r"(s0[2]), "=r"(s0[3]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s0[q];
        }
        if (step >= 1) { // ldmatrix.x4.trans of V (LDSM.16.MT88.4)
            unsigned r, c;
            { const unsigned mr[4] = {0u, 8u, 0u, 8u}, mc[4] = {0u, 0u, 8u, 8u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base1[layout] + lay_off(lay1[layout], r, c);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(s1[0]), "=r"(s1[1]), "=r"(s1[2]), "=r"(s1[3]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s1[q];
        }
        if (step >= 2) { // stmatrix.x4 of P (STSM.16.M88.4)
            unsigned r, c;
            { const unsigned mr[4] = {0u, 8u, 0u, 8u}, mc[4] = {0u, 0u, 8u, 8u}; const unsigned m = (lane / 8) % 4u; r = mr[m] + lane % 8; c = mc[m]; }
            const unsigned a = sbase + base1[layout] + lay_off(lay1[layout], r, c);
            for (int q = 0; q < 4; ++q) s2[q] = q < 4 ? (lane << 16) | (unsigned)q : 0u;
            asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" :: "r"(a), "r"(s2[0]), "r"(s2[1]), "r"(s2[2]), "r"(s2[3]) : "memory");
            __syncwarp();
            for (int q = 0; q < 4; ++q) d[q] = s2[q];
        }
    }
    for (int q = 0; q < 4; ++q) out[lane * 4 + q] = d[q];
}
