// FlashAttention forward for Hopper (sm_90a) in the manner of FlashAttention-3: TMA loads of Q, K
// and V into 128-byte-swizzled shared memory, wgmma from shared memory for S = Q·Kᵀ and from
// registers for O += P·V, a producer warpgroup and two consumer warpgroups synchronised by
// mbarriers, and (FA_OVERLAP) the softmax of key block j overlapped with the P·V wgmma of block j-1.
// Compile-time parameters: FA_D (64 or 128), FA_CAUSAL (0/1), FA_BF16 (0: fp16, 1: bf16), FA_BN (keys per
// block: 128, or 64 when not causal),
// FA_STAGES (K/V buffers, 2), FA_OVERLAP (1), FA_PINGPONG (1; needs FA_OVERLAP), FA_RED (softmax partials
// per row, 4), FA_EARLY (1: O rescaled while S = Q·Kᵀ runs; 0: after P·V), FA_XTILE (1), FA_LAZY (0). nvcc -arch=sm_90a.
//
//   Persistent: grid min(B*H*S/128, number of SMs) CTAs of 384 threads; CTA b computes tile b first
//   (a tile: query block of 128 rows, head; fa3_tile), then whichever tile its producer claims next
//   from a global counter (sched[0], atomicAdd) when it has issued the loads of its current tile:
//   tiles go to the CTAs that are ahead, in the order of t, which keeps the K and V that the CTAs
//   read at a time in L2 and, causal, hands out the longest tiles first (fa3_tile). sched: two zero
//   words on the first launch; the CTA that finishes last zeroes them again.
//   q, k, v, o: [B, H, S, D] contiguous, viewed by the tensor maps as 2-D [B*H*S rows, D columns]
//   (element 2 bytes, row pitch 2*D bytes), box {64 columns, 128 rows} for Q, {64, FA_BN} for K and V,
//   {64, 64} for O,
//   CU_TENSOR_MAP_SWIZZLE_128B; S % 128 == 0; parameters seq = S, bh = B*H.
//   Dynamic shared memory: FA3_SMEM_BYTES (+1024 for alignment): two Q buffers (128 x D; tile i of
//   the CTA uses buffer i % 2, so the next tile's Q arrives while this one runs), O staging (128 x D),
//   FA_STAGES K tiles and FA_STAGES V tiles (FA_BN x D each). A tile is D/64 panels of 64 columns
//   (128 bytes per row, rows 128 bytes apart, 16-byte chunk c of row r at chunk c ^ (r % 8): TMA's
//   128B swizzle, CuTe Swizzle<3,4,3> on byte offsets), panel p at p * 128 * 128 bytes.
//   Warpgroup 0 (producer; one thread issues every copy): per tile, Q (D/64 boxes) into its buffer
//   once the last S = Q·Kᵀ of the tile before the previous one has read it, then per key block K and V (D/64 boxes each,
//   cp.async.bulk.tensor.2d, SASS UTMALDG.2D) into stage g % FA_STAGES (g counts the key blocks of
//   the CTA's tiles) once both consumers released it.
//   Warpgroup 1 + c (consumer c = 0, 1) owns query rows 64c..64c+63 of each tile:
//     S = Q·Kᵀ: D/16 wgmma.m64nFA_BNk16 (SASS HGMMA.64x128x16.F32 at FA_BN 128), both operands K-major
//               descriptors (LBO 16 B, SBO 1024 B, layout 128B swizzle), k-step kk at byte
//               (kk / 4) * panel + (kk % 4) * 32;
//     online softmax on the accumulators (thread's rows 16w+g and 16w+g+8; exp2, quad max/sum);
//     O += P·V: FA_BN/16 wgmma.m64nDk16 (HGMMA.64xDx16.F32) with A = P in registers (the
//               accumulators of S repacked to f16x2/bf16x2, as mma.sync's A fragment) and B = V
//               MN-major (imm-trans-b 1; LBO = panel stride, SBO 1024 B), key step kt at kt*2048.
//   Code copies: the CTA's first S = Q·Kᵀ (before the tile loop); a loop over a tile's other
//   blocks issuing the block's S and the previous block's P·V; the last block's P·V together
//   with the next tile's first S (FA_XTILE; after the CTA's last tile an S of stale shared memory,
//   discarded), which runs during the epilogue.
//   Epilogue: O / l written as f16/bf16 into the consumer's half of the O staging buffer (same
//   swizzle; D/4 st.shared.b32 per thread), then one TMA store per panel
//   (cp.async.bulk.tensor.2d.global.shared::cta, SASS UTMASTG.2D), left running while the next
//   tile starts.
//   Key blocks run from the last to the first; causal: a query block sees blocks 0..q_block and
//   only the first one it runs (the diagonal) is masked.

#ifndef FA_D
#define FA_D 128
#endif
#ifndef FA_CAUSAL
#define FA_CAUSAL 0
#endif
#ifndef FA_BF16
#define FA_BF16 0
#endif
#ifndef FA_STAGES
#define FA_STAGES 2
#endif
#ifndef FA_OVERLAP
#define FA_OVERLAP 1
#endif
#ifndef FA_PINGPONG
#define FA_PINGPONG 1
#endif
#ifndef FA_RED
#define FA_RED 4 // partial maxima / sums per row in the softmax (1, 2, 4, 8)
#endif
#ifndef FA_EARLY
#define FA_EARLY 1 // 1: O is rescaled after S = Q·Kᵀ is issued, before P·V (FlashAttention-3's order: the rescale runs while the tensor cores compute S); 0: after P·V
#endif
#ifndef FA_XTILE
#define FA_XTILE 1 // 1: the next tile's first S = Q·Kᵀ is issued with the tile's last P·V and runs during its epilogue (docs/perf-h200.md); 0: at the start of its tile
#endif
#ifndef FA_LAZY
#define FA_LAZY 0 // 1: a warp skips rescaling O when no row's maximum changed (corr = 1 exactly)
#endif
#if FA_PINGPONG && !FA_OVERLAP
#error "FA_PINGPONG needs FA_OVERLAP"
#endif
#define FA_BM 128
#ifndef FA_BN
#define FA_BN 128 // keys per block: 128, or 64 (not causal)
#endif
#if FA_BN != 64 && FA_BN != 128
#error "FA_BN (keys per block) is 64 or 128: the S = Q·K^T wgmma is m64nFA_BNk16, whose wrappers below are n64 and n128"
#endif
#if FA_CAUSAL && FA_BN != FA_BM
#error "FA_CAUSAL needs FA_BN == FA_BM (128): a query block masks only the first key block it runs, the diagonal"
#endif
#define FA_PANELS (FA_D / 64)
#define FA_QPANEL (FA_BM * 128)                 // bytes of one 64-column panel of Q
#define FA_KVPANEL (FA_BN * 128)                // bytes of one panel of K or V
#define FA_QBYTES (FA_BM * FA_D * 2)
#define FA_KVBYTES (FA_BN * FA_D * 2)
#define FA3_SMEM_BYTES (3 * FA_QBYTES + 2 * FA_STAGES * FA_KVBYTES)
#define FA_NEG_INF __int_as_float(0xff800000u)

// The tensor map, passed by value as a __grid_constant__ parameter (128 bytes, 64-byte aligned).
struct __align__(64) Fa3Map {
    unsigned long long w[16];
};

// BEGIN GENERATED by scripts/research/gen_fa3_wgmma.py
__device__ __forceinline__ void fa3_wgmma_ss_n64_f16(float (&d)[32], unsigned long long a, unsigned long long b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(a), "l"(b), "r"(scale_d));
}
__device__ __forceinline__ void fa3_wgmma_rs_n64_f16(float (&d)[32], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned long long b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(scale_d));
}
__device__ __forceinline__ void fa3_wgmma_ss_n128_f16(float (&d)[64], unsigned long long a, unsigned long long b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(a), "l"(b), "r"(scale_d));
}
__device__ __forceinline__ void fa3_wgmma_rs_n128_f16(float (&d)[64], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned long long b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(scale_d));
}
__device__ __forceinline__ void fa3_wgmma_ss_n64_bf16(float (&d)[32], unsigned long long a, unsigned long long b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(a), "l"(b), "r"(scale_d));
}
__device__ __forceinline__ void fa3_wgmma_rs_n64_bf16(float (&d)[32], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned long long b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(scale_d));
}
__device__ __forceinline__ void fa3_wgmma_ss_n128_bf16(float (&d)[64], unsigned long long a, unsigned long long b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(a), "l"(b), "r"(scale_d));
}
__device__ __forceinline__ void fa3_wgmma_rs_n128_bf16(float (&d)[64], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned long long b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(scale_d));
}
// END GENERATED

#if FA_BF16
#define FA3_SS(n) fa3_wgmma_ss_n##n##_bf16
#define FA3_RS(n) fa3_wgmma_rs_n##n##_bf16
#else
#define FA3_SS(n) fa3_wgmma_ss_n##n##_f16
#define FA3_RS(n) fa3_wgmma_rs_n##n##_f16
#endif
#define FA3_XSTR(a, b) a(b)
#define FA3_RS_D FA3_XSTR(FA3_RS, FA_D)
#define FA3_SS_BN FA3_XSTR(FA3_SS, FA_BN)

__device__ __forceinline__ void fa3_bar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void fa3_bar_expect_tx(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void fa3_bar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// Waits until the phase of parity `parity` of the mbarrier has completed.
__device__ __forceinline__ void fa3_bar_wait(unsigned bar, unsigned parity)
{
    unsigned done;
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}
__device__ __forceinline__ void fa3_tma_load(unsigned dst, const Fa3Map *map, int col, int row, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(dst), "l"(map), "r"(col), "r"(row), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void fa3_tma_store(const Fa3Map *map, int col, int row, unsigned src)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(map), "r"(col), "r"(row), "r"(src)
                 : "memory");
}
__device__ __forceinline__ void fa3_wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void fa3_wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void fa3_wg_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Ties registers to the asm statements around them, so the compiler neither reads an accumulator
// before the wgmma.wait_group that completes it nor moves its writes after the wgmma that reads it.
template <int N>
__device__ __forceinline__ void fa3_pin(float (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void fa3_pin(unsigned (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// Shared-memory matrix descriptors (PTX ISA 9.7.15.5.1): start address >> 4 in bits 0-13, LBO >> 4
// in 16-29, SBO >> 4 in 32-45, layout type 1 (128-byte swizzle) in 62-63; tiles are 1024-byte
// aligned, so the base offset (49-51) is 0. The same fields as `tilelab sim wgmma --swizzle 128B`.
__device__ __forceinline__ unsigned long long fa3_desc_k(unsigned addr)
{
    return (1ull << 62) | (64ull << 32) | (1ull << 16) | (unsigned long long)((addr & 0x3ffffu) >> 4);
}
__device__ __forceinline__ unsigned long long fa3_desc_mn(unsigned addr)
{
    return (1ull << 62) | (64ull << 32) | ((unsigned long long)(FA_KVPANEL >> 4) << 16) |
           (unsigned long long)((addr & 0x3ffffu) >> 4);
}

__device__ __forceinline__ unsigned fa3_pack(float lo, float hi)
{
    unsigned r;
#if FA_BF16
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}

// S = Q·Kᵀ for this consumer's 64 rows, issued and committed (not waited for). The descriptors must
// be warp-uniform values the compiler can keep in uniform registers (see `c` in fa3_fwd): computed
// per thread, each would be moved to a uniform register (R2UR) between the wgmmas, and ptxas
// serializes a stage in which a non-wgmma instruction writes a wgmma input (ptxas info C7513).
__device__ __forceinline__ void fa3_issue_s(float (&s)[FA_BN / 2], unsigned sq_rows, unsigned sk)
{
    fa3_pin(s);
    fa3_wg_fence();
#pragma unroll
    for (int kk = 0; kk < FA_D / 16; ++kk) {
        const unsigned off = (kk % 4) * 32u; // k-step inside the 64-column panel
        FA3_SS_BN(s, fa3_desc_k(sq_rows + (kk / 4) * FA_QPANEL + off), fa3_desc_k(sk + (kk / 4) * FA_KVPANEL + off), kk > 0);
    }
    fa3_wg_commit();
}

// O += P·V, issued and committed. PIN: tie O and P to this point first; false where another
// wgmma group is in flight (the S of the next block): the register moves a pin may leave in the
// PTX would then define inputs of a wgmma inside that group's pipeline stage (C7513).
// FIRST: the first P·V of the kernel, whose first k-step overwrites O (scale-d 0) instead of
// adding to it, so O needs no zeroing (zeros written by ordinary instructions land, after
// scheduling, inside the S wgmma's stage, and ptxas serializes it: C7513).
template <bool PIN>
__device__ __forceinline__ void fa3_issue_pv(float (&o)[FA_D / 2], unsigned (&p)[FA_BN / 4], unsigned sv, bool first)
{
    if (PIN) {
        fa3_pin(o);
        fa3_pin(p);
    }
    fa3_wg_fence();
#pragma unroll
    for (int kt = 0; kt < FA_BN / 16; ++kt)
        FA3_RS_D(o, p[4 * kt], p[4 * kt + 1], p[4 * kt + 2], p[4 * kt + 3], fa3_desc_mn(sv + kt * 16 * 128), (kt > 0 || !first) ? 1 : 0);
    fa3_wg_commit();
}

// Online softmax of one block of scores, in place: s becomes exp2(s * scale_log2 - m); updates the
// running max m (log2 domain) and sum l of the thread's two rows and returns the factors O must be
// scaled by. Register i of s holds row 16w + g + 8*((i%4)/2), column 8*(i/4) + 2q + i%2.
template <bool MASK>
__device__ __forceinline__ void fa3_softmax(float (&s)[FA_BN / 2], float (&m)[2], float (&l)[2], float (&corr)[2],
                                            float scale_log2, int row0)
{
    const unsigned lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
    // Row max and row sum over FA_RED independent partials per row (element i goes to partial
    // (i / 4) % FA_RED), combined at the end: one chain of 32 dependent fmax/add per row would wait
    // out the full latency of each.
    float mxp[2][FA_RED], smp[2][FA_RED];
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int r = 0; r < FA_RED; ++r) {
            mxp[h][r] = FA_NEG_INF;
            smp[h][r] = 0.f;
        }
#pragma unroll
    for (int i = 0; i < FA_BN / 2; ++i) {
        if (MASK) {
            const int row = row0 + (int)g + 8 * ((i % 4) / 2);
            const int col = 8 * (i / 4) + 2 * (int)q + (i % 2);
            if (col > row) s[i] = FA_NEG_INF;
        }
        float &x = mxp[(i % 4) / 2][(i / 4) % FA_RED];
        x = fmaxf(x, s[i]);
    }
    float mx[2], base[2], sum[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int w = FA_RED / 2; w >= 1; w /= 2)
#pragma unroll
            for (int r = 0; r < w; ++r) mxp[h][r] = fmaxf(mxp[h][r], mxp[h][r + w]);
        mx[h] = mxp[h][0];
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
        const float m_new = fmaxf(m[h], mx[h] * scale_log2);
        base[h] = (m_new == FA_NEG_INF) ? 0.f : m_new;
        corr[h] = (m[h] == FA_NEG_INF) ? 0.f : exp2f(m[h] - base[h]);
        m[h] = m_new;
    }
#pragma unroll
    for (int i = 0; i < FA_BN / 2; ++i) {
        s[i] = exp2f(fmaf(s[i], scale_log2, -base[(i % 4) / 2]));
        smp[(i % 4) / 2][(i / 4) % FA_RED] += s[i];
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int w = FA_RED / 2; w >= 1; w /= 2)
#pragma unroll
            for (int r = 0; r < w; ++r) smp[h][r] += smp[h][r + w];
        sum[h] = smp[h][0];
        l[h] = l[h] * corr[h] + sum[h];
    }
}

// P for P·V: the probabilities packed to f16x2/bf16x2 in the order of the A fragment (PTX ISA
// m16n8k16 A layout: a0 = (g, 2q..2q+1), a1 = (g+8, ..), a2 = (g, 8+2q..), a3 = (g+8, 8+2q..) of
// each 16-key step), which is the order of the S accumulators. Packed only while no wgmma is in
// flight: a non-wgmma instruction writing a future wgmma input inside a pipeline stage makes
// ptxas serialize every wgmma of it (ptxas info C7513).
__device__ __forceinline__ void fa3_pack_p(const float (&s)[FA_BN / 2], unsigned (&p)[FA_BN / 4])
{
#pragma unroll
    for (int j = 0; j < FA_BN / 4; ++j) p[j] = fa3_pack(s[2 * j], s[2 * j + 1]);
}

__device__ __forceinline__ void fa3_rescale(float (&o)[FA_D / 2], const float (&corr)[2])
{
#if FA_LAZY
    if (__all_sync(0xffffffffu, corr[0] == 1.f && corr[1] == 1.f)) return; // o * 1 == o
#endif
#pragma unroll
    for (int i = 0; i < FA_D / 2; ++i) o[i] *= corr[(i % 4) / 2];
}

// Ping-pong between the two consumer warpgroups (FA_PINGPONG): each issues its wgmmas only in its
// turn (named barrier 3 + c, 256 threads: its own 128 syncing, the other's 128 arriving) and then
// hands the turn over, so one warpgroup's softmax runs while the other's wgmmas use the tensor cores.
__device__ __forceinline__ void fa3_turn_wait(unsigned c)
{
#if FA_PINGPONG
    asm volatile("bar.sync %0, 256;" ::"r"(3 + c) : "memory");
#endif
}
__device__ __forceinline__ void fa3_turn_pass(unsigned c)
{
#if FA_PINGPONG
    asm volatile("bar.arrive %0, 256;" ::"r"(3 + (c ^ 1)) : "memory");
#endif
}

// Query block and head of tile t (of nq * bh tiles). Not causal: one head after another, so the
// CTAs running at the same time share K and V in L2. Causal: the heads in groups, group 0 of r heads
// and the others of gh (r <= gh), and inside a group the longest tiles (last query blocks) first,
// every head of the group in turn. Groups are as small as keeps the claims balanced and as large as
// the L2 allows (fa3_groups), so the K and V the CTAs read at a time stay in L2. (Every head in
// turn made the S = 16384 kernel read 30x more DRAM than cuDNN's and run at a lower clock, a group
// of uneven size at the end left CTAs idle: docs/perf-h200.md.)
__device__ __forceinline__ void fa3_tile(int t, int nq, int gh, int r, int &qb, int &head)
{
    if (FA_CAUSAL) {
        int i = t, n = r, h0 = 0;
        if (t >= nq * r) {
            const int u = t - nq * r, g = u / (nq * gh);
            i = u - g * nq * gh;
            n = gh;
            h0 = r + g * gh;
        }
        qb = nq - 1 - i / n;
        head = h0 + i % n;
    } else {
        qb = t % nq;
        head = t / nq;
    }
}

// The causal head groups of fa3_tile: at least ceil(2 * grid / nq) heads (two tiles per CTA) and
// at most what keeps their K and V (seq * D * 4 bytes a head) within 24 MiB of the 50 MB L2, never
// more than bh; then ng = bh / that groups of gh = ceil(bh / ng) heads, the remainder r in group 0.
__device__ __forceinline__ void fa3_groups(int nq, int bh, int seq, int &gh, int &r)
{
    const int l2_heads = (int)max(1ull, (24ull << 20) / ((unsigned long long)seq * FA_D * 4ull));
    const int want = min(bh, max(1, min(l2_heads, (2 * (int)gridDim.x + nq - 1) / nq)));
    const int ng = bh / want;
    gh = (bh + ng - 1) / ng;
    r = bh - ((bh + gh - 1) / gh - 1) * gh;
}

extern "C" __global__ void __launch_bounds__(384, 1)
    fa3_fwd(const __grid_constant__ Fa3Map mq, const __grid_constant__ Fa3Map mk, const __grid_constant__ Fa3Map mv,
            const __grid_constant__ Fa3Map mo, int seq, int bh, float softmax_scale, unsigned *sched)
{
    extern __shared__ __align__(1024) unsigned char fa3_smem[];
    __shared__ __align__(8) unsigned long long bars[4 + 4 * FA_STAGES];
    // The tile of Q buffer b, written by the producer before it arrives on Q full (b): tiles >= nq*bh
    // mean no more tiles.
    __shared__ volatile int tile_of[2];
    const unsigned raw = (unsigned)__cvta_generic_to_shared(fa3_smem);
    const unsigned sq = raw + ((1024u - (raw & 1023u)) & 1023u);
    // Two Q buffers (tile ti uses ti % 2: the next tile's Q loads while this one runs), then the O
    // staging buffer for the TMA store (same layout as Q).
    const unsigned so = sq + 2 * FA_QBYTES;
    const unsigned sk0 = so + FA_QBYTES, sv0 = sk0 + FA_STAGES * FA_KVBYTES;
    const unsigned bar0 = (unsigned)__cvta_generic_to_shared(bars);
    // bars: [b] Q full and [2 + b] Q empty of Q buffer b, [4 + s] K full, [4 + S + s] V full,
    // [4 + 2S + s] K empty, [4 + 3S + s] V empty
#define FA3_QFULL(b) (bar0 + 8u * (b))
#define FA3_QEMPTY(b) (bar0 + 8u * (2u + (b)))
#define FA3_KFULL(s) (bar0 + 8u * (4u + (s)))
#define FA3_VFULL(s) (bar0 + 8u * (4u + FA_STAGES + (s)))
#define FA3_KEMPTY(s) (bar0 + 8u * (4u + 2 * FA_STAGES + (s)))
#define FA3_VEMPTY(s) (bar0 + 8u * (4u + 3 * FA_STAGES + (s)))
    if (threadIdx.x == 0) {
        for (unsigned b = 0; b < 2; ++b) {
            fa3_bar_init(FA3_QFULL(b), 1);
            fa3_bar_init(FA3_QEMPTY(b), 8); // one arrive per consumer warp after the tile's last S = Q·Kᵀ
        }
        for (unsigned s = 0; s < FA_STAGES; ++s) {
            fa3_bar_init(FA3_KFULL(s), 1);
            fa3_bar_init(FA3_VFULL(s), 1);
            fa3_bar_init(FA3_KEMPTY(s), 8); // one arrive per consumer warp
            fa3_bar_init(FA3_VEMPTY(s), 8);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    const int nq = seq / FA_BM, tiles = nq * bh;
    int gh = 1, r = 1; // causal head groups (fa3_tile)
    if (FA_CAUSAL) fa3_groups(nq, bh, seq, gh, r);
    // Warp-uniform by construction (a shuffle from lane 0), so that the compiler keeps it and every
    // address derived from it (the wgmma descriptors) in uniform registers.
    const unsigned wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;");
        if (threadIdx.x == 0) {
            unsigned gb = 0; // key blocks loaded so far: stage gb % FA_STAGES, phase (gb / FA_STAGES) & 1
            int t = blockIdx.x;
            for (unsigned ti = 0;; ++ti) {
                const unsigned qbuf = ti & 1u, qph = (ti >> 1) & 1u;
                fa3_bar_wait(FA3_QEMPTY(qbuf), qph ^ 1u); // the last S two tiles ago has read it
                tile_of[qbuf] = t;
                if (t >= tiles) {
                    fa3_bar_arrive(FA3_QFULL(qbuf)); // no more tiles: the consumers stop here
                    break;
                }
                int qb, head;
                fa3_tile(t, nq, gh, r, qb, head);
                const int row_base = head * seq, nblocks = FA_CAUSAL ? qb + 1 : seq / FA_BN;
                fa3_bar_expect_tx(FA3_QFULL(qbuf), FA_QBYTES);
#pragma unroll
                for (int p = 0; p < FA_PANELS; ++p)
                    fa3_tma_load(sq + qbuf * FA_QBYTES + p * FA_QPANEL, &mq, 64 * p, row_base + qb * FA_BM, FA3_QFULL(qbuf));
                for (int it = 0; it < nblocks; ++it, ++gb) {
                    const int j = nblocks - 1 - it;
                    const unsigned s = gb % FA_STAGES, ph = (gb / FA_STAGES) & 1;
                    fa3_bar_wait(FA3_KEMPTY(s), ph ^ 1u);
                    fa3_bar_expect_tx(FA3_KFULL(s), FA_KVBYTES);
#pragma unroll
                    for (int p = 0; p < FA_PANELS; ++p)
                        fa3_tma_load(sk0 + s * FA_KVBYTES + p * FA_KVPANEL, &mk, 64 * p, row_base + j * FA_BN, FA3_KFULL(s));
                    fa3_bar_wait(FA3_VEMPTY(s), ph ^ 1u);
                    fa3_bar_expect_tx(FA3_VFULL(s), FA_KVBYTES);
#pragma unroll
                    for (int p = 0; p < FA_PANELS; ++p)
                        fa3_tma_load(sv0 + s * FA_KVBYTES + p * FA_KVPANEL, &mv, 64 * p, row_base + j * FA_BN, FA3_VFULL(s));
                }
                t = (int)gridDim.x + (int)atomicAdd(sched, 1u); // the next tile no CTA has taken
            }
            // Every CTA counts itself out after its last claim; the last one zeroes the counters
            // for the next launch (all claims of this one are done by then).
            __threadfence();
            if (atomicAdd(sched + 1, 1u) == gridDim.x - 1) {
                atomicExch(sched, 0u);
                atomicExch(sched + 1, 0u);
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
    const unsigned c = wg - 1;                  // consumer index: query rows 64c..64c+63 of the block
    const unsigned lane = threadIdx.x & 31, warp = (threadIdx.x / 32) & 3;
    const unsigned so_rows = so + c * 64 * 128;
    const int row0 = (int)(c * 64 + warp * 16); // first row of this warp in the block
    const float scale_log2 = softmax_scale * 1.4426950408889634f;
    const bool leader = (threadIdx.x & 127) == 0; // issues this consumer's TMA stores

    float o[FA_D / 2]; // written first by each tile's first P·V (scale-d 0)
    float s[FA_BN / 2];
    unsigned p[FA_BN / 4];

#if FA_PINGPONG
    if (c == 1) asm volatile("bar.arrive 3, 256;" ::: "memory"); // the first consumer goes first
#endif
    unsigned gb = 0;
#if FA_XTILE
    // The first tile's first S = Q·Kᵀ; every later tile's is issued with the last P·V of the tile
    // before it (below). The CTA has at least one tile (grid <= tiles).
    int t_next;
    {
        fa3_bar_wait(FA3_QFULL(0), 0);
        t_next = __shfl_sync(0xffffffffu, tile_of[0], 0);
        fa3_bar_wait(FA3_KFULL(0), 0);
        fa3_turn_wait(c);
        fa3_issue_s(s, sq + c * 64 * 128, sk0);
        fa3_turn_pass(c);
    }
#endif
    for (unsigned ti = 0;; ++ti) {
        const unsigned qbuf = ti & 1u;
#if FA_XTILE
        const int t = t_next;
#else
        fa3_bar_wait(FA3_QFULL(qbuf), (ti >> 1) & 1u);
        // Warp-uniform by construction (as wg), so the loop counters and descriptors derived from
        // it stay in uniform registers (see fa3_issue_s).
        const int t = __shfl_sync(0xffffffffu, tile_of[qbuf], 0);
#endif
        if (t >= tiles) break;
        int qb, head;
        fa3_tile(t, nq, gh, r, qb, head);
        const int nblocks = FA_CAUSAL ? qb + 1 : seq / FA_BN;
        float m[2] = {FA_NEG_INF, FA_NEG_INF}, l[2] = {0.f, 0.f}, corr[2];

        const unsigned sq_rows = sq + qbuf * FA_QBYTES + c * 64 * 128; // this consumer's rows of Q
        // First block (the diagonal one when causal).
        {
            const unsigned st = gb % FA_STAGES;
#if !FA_XTILE
            const unsigned ph = (gb / FA_STAGES) & 1;
            fa3_bar_wait(FA3_KFULL(st), ph);
            fa3_turn_wait(c);
            fa3_issue_s(s, sq_rows, sk0 + st * FA_KVBYTES);
            fa3_turn_pass(c);
#endif
            fa3_wg_wait<0>();
            fa3_pin(s);
            if (lane == 0) {
                fa3_bar_arrive(FA3_KEMPTY(st));
                if (nblocks == 1) fa3_bar_arrive(FA3_QEMPTY(qbuf));
            }
            fa3_softmax<FA_CAUSAL != 0>(s, m, l, corr, scale_log2, row0);
            fa3_pack_p(s, p);
            fa3_pin(p);
        }
#if FA_OVERLAP
        for (int it = 1; it < nblocks; ++it) {
            const unsigned st = (gb + it) % FA_STAGES, ph = ((gb + it) / FA_STAGES) & 1;
            const unsigned pst = (gb + it - 1) % FA_STAGES, pph = ((gb + it - 1) / FA_STAGES) & 1;
            fa3_bar_wait(FA3_KFULL(st), ph);
            fa3_bar_wait(FA3_VFULL(pst), pph);
            fa3_turn_wait(c);
            fa3_issue_s(s, sq_rows, sk0 + st * FA_KVBYTES);
#if FA_EARLY
            fa3_rescale(o, corr); // while S runs (at it = 1 O is not yet written: overwritten below)
#endif
            fa3_issue_pv<false>(o, p, sv0 + pst * FA_KVBYTES, it == 1);
            fa3_turn_pass(c);
            fa3_wg_wait<1>(); // S of block it is done; P·V of block it - 1 may still run
            fa3_pin(s);
            if (lane == 0) {
                fa3_bar_arrive(FA3_KEMPTY(st));
                if (it == nblocks - 1) fa3_bar_arrive(FA3_QEMPTY(qbuf)); // Q is free again
            }
            fa3_softmax<false>(s, m, l, corr, scale_log2, row0);
            fa3_wg_wait<0>();
            // P is read by the P·V wgmma until this wait: pinning it here keeps it in its registers
            // until then; the next P is packed only now.
            fa3_pin(p);
            fa3_pin(o);
            if (lane == 0) fa3_bar_arrive(FA3_VEMPTY(pst));
#if !FA_EARLY
            fa3_rescale(o, corr);
#endif
            fa3_pack_p(s, p);
            // O and P are final before the next block's first wgmma is issued: ptxas serializes every
            // wgmma of a stage in which a non-wgmma instruction writes one of their input registers.
            fa3_pin(o);
            fa3_pin(p);
        }
        {
            const unsigned pst = (gb + nblocks - 1) % FA_STAGES, pph = ((gb + nblocks - 1) / FA_STAGES) & 1;
            fa3_bar_wait(FA3_VFULL(pst), pph);
#if FA_XTILE
            // The next tile (its Q was loaded long ago) and its first K block; with no next tile
            // the S below reads stale shared memory and is discarded (no wait: nothing is loaded).
            const unsigned nqbuf = qbuf ^ 1u, nst = (gb + nblocks) % FA_STAGES;
            fa3_bar_wait(FA3_QFULL(nqbuf), ((ti + 1) >> 1) & 1u);
            t_next = __shfl_sync(0xffffffffu, tile_of[nqbuf], 0);
            if (t_next < tiles) fa3_bar_wait(FA3_KFULL(nst), ((gb + nblocks) / FA_STAGES) & 1);
#endif
            fa3_turn_wait(c);
#if FA_EARLY
            fa3_rescale(o, corr);
#endif
            fa3_issue_pv<true>(o, p, sv0 + pst * FA_KVBYTES, nblocks == 1);
#if FA_XTILE
            fa3_issue_s(s, sq + nqbuf * FA_QBYTES + c * 64 * 128, sk0 + nst * FA_KVBYTES);
            fa3_turn_pass(c);
            fa3_wg_wait<1>(); // P·V done; the next tile's S runs through the epilogue
#else
            fa3_turn_pass(c);
            fa3_wg_wait<0>();
#endif
            fa3_pin(o);
            if (lane == 0) fa3_bar_arrive(FA3_VEMPTY(pst));
        }
#else
        for (int it = 0;; ++it) {
            const unsigned st = (gb + it) % FA_STAGES, ph = ((gb + it) / FA_STAGES) & 1;
            if (it > 0) {
                fa3_bar_wait(FA3_KFULL(st), ph);
                fa3_issue_s(s, sq_rows, sk0 + st * FA_KVBYTES);
                fa3_wg_wait<0>();
                fa3_pin(s);
                if (lane == 0) {
                    fa3_bar_arrive(FA3_KEMPTY(st));
                    if (it == nblocks - 1) fa3_bar_arrive(FA3_QEMPTY(qbuf));
                }
                fa3_softmax<false>(s, m, l, corr, scale_log2, row0);
                fa3_pack_p(s, p);
            }
            if (it > 0) fa3_rescale(o, corr);
            fa3_bar_wait(FA3_VFULL(st), ph);
            fa3_issue_pv<true>(o, p, sv0 + st * FA_KVBYTES, it == 0);
            fa3_wg_wait<0>();
            fa3_pin(o);
            if (lane == 0) fa3_bar_arrive(FA3_VEMPTY(st));
            if (it + 1 >= nblocks) break;
        }
#endif
        gb += nblocks;

        // Epilogue: O / l into this consumer's half of the O staging buffer (swizzled like the TMA
        // box) once the previous tile's store has read it, then TMA stores (not waited for: they
        // overlap the next tile).
        const unsigned g = lane >> 2, q = lane & 3;
        float inv[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float x = l[h];
            x += __shfl_xor_sync(0xffffffffu, x, 1);
            x += __shfl_xor_sync(0xffffffffu, x, 2);
            inv[h] = 1.f / x;
        }
        if (leader) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        asm volatile("bar.sync %0, 128;" ::"r"(1 + c) : "memory");
#pragma unroll
        for (int i = 0; i < FA_D / 2; i += 2) {
            const unsigned r = warp * 16 + g + 8 * ((i % 4) / 2); // row within the consumer's 64
            const unsigned col = 8 * (i / 4) + 2 * q;             // even column
            const unsigned pnl = col / 64, cb = (col % 64) * 2;   // panel, byte in the 128-byte row
            const unsigned addr = so_rows + pnl * FA_QPANEL + r * 128 + ((((cb >> 4) ^ (r & 7)) << 4) | (cb & 15));
            const unsigned v = fa3_pack(o[i] * inv[(i % 4) / 2], o[i + 1] * inv[(i % 4) / 2]);
            asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("bar.sync %0, 128;" ::"r"(1 + c) : "memory");
        if (leader) {
#pragma unroll
            for (int pn = 0; pn < FA_PANELS; ++pn)
                fa3_tma_store(&mo, 64 * pn, head * seq + qb * FA_BM + (int)c * 64, so_rows + pn * FA_QPANEL);
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
    }
#if FA_XTILE
    fa3_wg_wait<0>(); // the discarded S issued with the last tile's P·V
    fa3_pin(s);
#endif
#if FA_PINGPONG
    // The second consumer passed a turn before its first phase and so one more than the first took:
    // the first takes it here, so both barriers see as many arrivals as syncs.
    if (c == 0) asm volatile("bar.sync 3, 256;" ::: "memory");
#endif
    if (leader) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
