// The tiled GEMM of `tilelab sim counts gemm`, as a CUDA kernel with the same tiling, for
// `tilelab verify` (lesson: tiled GEMM instruction counts).
//
// One CTA computes C (M x N, f32) = A (M x K, f16, row-major) * B^T, with B stored N x K (f16,
// row-major), exactly as the simulator's warp program (crates/tilelab-core/src/sim/kernels/program.rs, GemmTiling):
//   * both tiles are copied to shared memory with the layout (row pitch in elements, optional
//     CuTe Swizzle<B,M,S> on element offsets) and B's tile starts at byte TL_B_BASE;
//   * warp w owns rows [w*MW, (w+1)*MW) (split rows) or columns [w*NW, (w+1)*NW) (split cols);
//   * for every 16-wide k step it issues one ldmatrix.x4 per 16-row block of A (registers a0..a3 =
//     (rows 0-7,k 0-7), (rows 8-15,k 0-7), (rows 0-7,k 8-15), (rows 8-15,k 8-15)), one per
//     16-column block of B ((n 0-7,k 0-7), (n 0-7,k 8-15), (n 8-15,k 0-7), (n 8-15,k 8-15)), and
//     one mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 per 16x8 output tile.
// Every CTA computes the same product and writes it to C + blockIdx.x * M * N.
//
// Compile-time parameters (the host prepends #defines): TL_M, TL_N, TL_K, TL_WARPS, TL_MW, TL_NW,
// TL_SPLIT_ROWS (1 or 0), TL_PITCH_A, TL_PITCH_B (elements), TL_B_BASE (bytes), TL_SWZ_B,
// TL_SWZ_M, TL_SWZ_S (TL_SWZ_B = 0: no swizzle).

__device__ __forceinline__ unsigned tl_swizzle(unsigned o)
{
#if TL_SWZ_B > 0
    const unsigned yyy = ((1u << TL_SWZ_B) - 1u) << (TL_SWZ_M + TL_SWZ_S);
    return o ^ ((o & yyy) >> TL_SWZ_S);
#else
    return o;
#endif
}

__device__ __forceinline__ unsigned tl_addr_a(unsigned r, unsigned c) { return tl_swizzle(r * TL_PITCH_A + c) * 2u; }
__device__ __forceinline__ unsigned tl_addr_b(unsigned r, unsigned c) { return TL_B_BASE + tl_swizzle(r * TL_PITCH_B + c) * 2u; }

extern "C" __global__ void __launch_bounds__(TL_WARPS * 32) gemm_tile(const unsigned short *A, const unsigned short *B, float *C)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned base = (unsigned)__cvta_generic_to_shared(smem);
    for (unsigned i = threadIdx.x; i < TL_M * TL_K; i += blockDim.x)
        *(unsigned short *)(smem + tl_addr_a(i / TL_K, i % TL_K)) = A[i];
    for (unsigned i = threadIdx.x; i < TL_N * TL_K; i += blockDim.x)
        *(unsigned short *)(smem + tl_addr_b(i / TL_K, i % TL_K)) = B[i];
    __syncthreads();

    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const unsigned m0 = TL_SPLIT_ROWS ? warp * TL_MW : 0;
    const unsigned n0 = TL_SPLIT_ROWS ? 0 : warp * TL_NW;
    const unsigned j = lane / 8, r = lane % 8; // this lane gives row r of matrix j
    float acc[TL_MW / 16][TL_NW / 8][4];
#pragma unroll
    for (int mb = 0; mb < TL_MW / 16; ++mb)
#pragma unroll
        for (int nb = 0; nb < TL_NW / 8; ++nb)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[mb][nb][e] = 0.f;

#pragma unroll
    for (unsigned k = 0; k < TL_K; k += 16) {
        unsigned a[TL_MW / 16][4], b[TL_NW / 16][4];
#pragma unroll
        for (int mb = 0; mb < TL_MW / 16; ++mb) {
            // X4_ORDER_A: matrix j at (row, k) offset ((j & 1) * 8, (j >> 1) * 8)
            unsigned addr = base + tl_addr_a(m0 + mb * 16 + (j & 1) * 8 + r, k + (j >> 1) * 8);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                         : "=r"(a[mb][0]), "=r"(a[mb][1]), "=r"(a[mb][2]), "=r"(a[mb][3]) : "r"(addr));
        }
#pragma unroll
        for (int nb = 0; nb < TL_NW / 16; ++nb) {
            // X4_ORDER_B_NK: matrix j at (n, k) offset ((j >> 1) * 8, (j & 1) * 8)
            unsigned addr = base + tl_addr_b(n0 + nb * 16 + (j >> 1) * 8 + r, k + (j & 1) * 8);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                         : "=r"(b[nb][0]), "=r"(b[nb][1]), "=r"(b[nb][2]), "=r"(b[nb][3]) : "r"(addr));
        }
#pragma unroll
        for (int mb = 0; mb < TL_MW / 16; ++mb)
#pragma unroll
            for (int nt = 0; nt < TL_NW / 8; ++nt) {
                const unsigned *bb = &b[nt / 2][(nt % 2) * 2];
                asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                             : "+f"(acc[mb][nt][0]), "+f"(acc[mb][nt][1]), "+f"(acc[mb][nt][2]), "+f"(acc[mb][nt][3])
                             : "r"(a[mb][0]), "r"(a[mb][1]), "r"(a[mb][2]), "r"(a[mb][3]), "r"(bb[0]), "r"(bb[1]));
            }
    }
    // C/D fragment: c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1).
    float *Cb = C + (size_t)blockIdx.x * TL_M * TL_N;
    const unsigned g = lane / 4, t = lane % 4;
#pragma unroll
    for (int mb = 0; mb < TL_MW / 16; ++mb)
#pragma unroll
        for (int nt = 0; nt < TL_NW / 8; ++nt) {
            unsigned row = m0 + mb * 16 + g, col = n0 + nt * 8 + 2 * t;
            Cb[row * TL_N + col] = acc[mb][nt][0];
            Cb[row * TL_N + col + 1] = acc[mb][nt][1];
            Cb[(row + 8) * TL_N + col] = acc[mb][nt][2];
            Cb[(row + 8) * TL_N + col + 1] = acc[mb][nt][3];
        }
}
