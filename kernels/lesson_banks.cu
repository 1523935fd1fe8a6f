// Lesson `banks`: Banks and broadcast
// GENERATED from lessons/01-banks.toml by `tilelab lessons kernel banks`; do not edit by hand.
//
// extern "C" __global__ void lesson_banks(unsigned *out, int step, int layout, int variant)
// One block of 32 threads. Shared memory holds b16 indices (halfword i = i); the warp runs the
// steps of `variant` with file index <= `step` under `layout`, and out[lane*4 + r] gets register r
// of the last step (f32 bits for mma). Contract: src/gpu/source/lesson.rs.
//
// layouts: row
// variants: all
// step 0: ld.shared.b32 - 32 lanes, 32 consecutive words
// step 1: ld.shared.b32 - every lane reads the same word
// step 2: ld.shared.b32 - pairs of lanes share a word
// step 3: ld.shared.b32 - stride of two words
// step 4: ld.shared.b32 - stride of 32 words
// step 5: ld.shared.u8 - 32 consecutive bytes

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

extern "C" __global__ void lesson_banks(unsigned *out, int step, int layout, int variant)
{
    __shared__ __align__(1024) unsigned char smem[4608];
    const unsigned lane = threadIdx.x & 31;
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
    if (layout < 0 || layout >= 1) return;
    for (unsigned i = lane; i < 2304u; i += 32) ((unsigned short *)smem)[i] = (unsigned short)i;
    __syncwarp();
    // tile S: 32x32 elements of 4 bytes; layouts row
    const Lay lay0[1] = {{32u, 32u, 4u, 0u, 0u, 0u, 0u, 0u, 0u}};
    const unsigned base0[1] = {0u};
    // tile bytes: 4x128 elements of 1 bytes; layouts row
    const Lay lay1[1] = {{4u, 128u, 1u, 0u, 0u, 0u, 0u, 0u, 0u}};
    const unsigned base1[1] = {4096u};
    unsigned d[4] = {0u, 0u, 0u, 0u};
    unsigned s0[4] = {0u, 0u, 0u, 0u};
    unsigned s1[4] = {0u, 0u, 0u, 0u};
    unsigned s2[4] = {0u, 0u, 0u, 0u};
    unsigned s3[4] = {0u, 0u, 0u, 0u};
    unsigned s4[4] = {0u, 0u, 0u, 0u};
    unsigned s5[4] = {0u, 0u, 0u, 0u};
    float acc[4][4] = {};
    unsigned s_packed[4] = {0u, 0u, 0u, 0u};
    (void)acc;
    (void)s_packed;
    (void)s0;
    if (variant == 0) { // all
        if (step >= 0) { // 32 lanes, 32 consecutive words
            unsigned r, c;
            { const unsigned idx = 0u + lane * 1u; r = idx / 32u; c = idx % 32u; }
            const unsigned a = sbase + base0[layout] + lay_off(lay0[layout], r, c);
            asm volatile("ld.shared.b32 %0, [%1];" : "=r"(s0[0]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s0[q];
        }
        if (step >= 1) { // every lane reads the same word
            unsigned r, c;
            r = 0u; c = 0u;
            const unsigned a = sbase + base0[layout] + lay_off(lay0[layout], r, c);
            asm volatile("ld.shared.b32 %0, [%1];" : "=r"(s1[0]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s1[q];
        }
        if (step >= 2) { // pairs of lanes share a word
            unsigned r, c;
            r = 0u; c = 0u + 1u * ((lane / 2u) % 32u);
            const unsigned a = sbase + base0[layout] + lay_off(lay0[layout], r, c);
            asm volatile("ld.shared.b32 %0, [%1];" : "=r"(s2[0]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s2[q];
        }
        if (step >= 3) { // stride of two words
            unsigned r, c;
            { const unsigned idx = 0u + lane * 2u; r = idx / 32u; c = idx % 32u; }
            const unsigned a = sbase + base0[layout] + lay_off(lay0[layout], r, c);
            asm volatile("ld.shared.b32 %0, [%1];" : "=r"(s3[0]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s3[q];
        }
        if (step >= 4) { // stride of 32 words
            unsigned r, c;
            r = 0u + lane % 32u; c = 0u;
            const unsigned a = sbase + base0[layout] + lay_off(lay0[layout], r, c);
            asm volatile("ld.shared.b32 %0, [%1];" : "=r"(s4[0]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s4[q];
        }
        if (step >= 5) { // 32 consecutive bytes
            unsigned r, c;
            { const unsigned idx = 0u + lane * 1u; r = idx / 128u; c = idx % 128u; }
            const unsigned a = sbase + base1[layout] + lay_off(lay1[layout], r, c);
            asm volatile("ld.shared.u8 %0, [%1];" : "=r"(s5[0]) : "r"(a) : "memory");
            for (int q = 0; q < 4; ++q) d[q] = s5[q];
        }
    }
    for (int q = 0; q < 4; ++q) out[lane * 4 + q] = d[q];
}
