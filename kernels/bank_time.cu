// Timing of one shared-memory access pattern for `tilelab verify`: every warp of one block (one
// SM) repeats the same warp request 8 x `iters` times, eight independent requests per loop
// iteration, so the shared-memory pipe, not load latency, bounds the loop. Thread 0 reports the
// clock64() cycles between two barriers; cycles / (warps x 8 x iters) = cycles per request on
// the SM, which should track the simulated wavefronts (about one wavefront per cycle).
//   kind: 0 ld.shared.b32, 1 ld.shared.v2.b32, 2 ld.shared.v4.b32, 3 ldmatrix.x4, 4 ldmatrix.x4.trans
extern "C" __global__ void bank_time(const unsigned *offs, int kind, int iters, unsigned long long *cycles, unsigned *sink)
{
    extern __shared__ __align__(16) unsigned char smem[];
    unsigned lane = threadIdx.x & 31;
    for (unsigned i = threadIdx.x; i < 48 * 1024 / 4; i += blockDim.x) ((unsigned *)smem)[i] = 0;
    __syncthreads();
    unsigned base = (unsigned)__cvta_generic_to_shared(smem) + offs[lane];
    unsigned acc = 0;
    __syncthreads();
    long long t0 = clock64();
    for (int it = 0; it < iters; ++it) {
        // Eight independent requests per iteration keep the shared-memory pipe busy, so the
        // loop measures throughput (cycles per request), not load latency.
        unsigned r[8][4];
        unsigned addr = base;
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            switch (kind) {
            case 0: asm volatile("ld.shared.b32 %0, [%1];" : "=r"(r[u][0]) : "r"(addr)); r[u][1] = r[u][2] = r[u][3] = 0; break;
            case 1: asm volatile("ld.shared.v2.b32 {%0,%1}, [%2];" : "=r"(r[u][0]), "=r"(r[u][1]) : "r"(addr)); r[u][2] = r[u][3] = 0; break;
            case 2: asm volatile("ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];" : "=r"(r[u][0]), "=r"(r[u][1]), "=r"(r[u][2]), "=r"(r[u][3]) : "r"(addr)); break;
            case 3: asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[u][0]), "=r"(r[u][1]), "=r"(r[u][2]), "=r"(r[u][3]) : "r"(addr)); break;
            default: asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[u][0]), "=r"(r[u][1]), "=r"(r[u][2]), "=r"(r[u][3]) : "r"(addr)); break;
            }
        }
#pragma unroll
        for (int u = 0; u < 8; ++u) acc += r[u][0] ^ r[u][1] ^ r[u][2] ^ r[u][3];
    }
    __syncthreads();
    long long t1 = clock64();
    if (threadIdx.x == 0 && blockIdx.x == 0) *cycles = (unsigned long long)(t1 - t0);
    if (acc == 0xdeadbeef) sink[threadIdx.x] = acc;
}
