// cp.async.ca probe for tilelab issue 13 (the spread-source class): one warp, one LDGSTS per
// launch, read from requests.txt, counters under ncu (see run.sh).
//
// requests.txt: one request per line:
//   name kind mask warm src0..src31 dst0..dst31
// kind 0/1/2 = cp.async.ca 4/8/16 B, 3 = cp.async.cg 16 B (part g); src = byte offsets into a 64 KiB global buffer (256-byte
// aligned by cudaMalloc); dst = shared byte offsets (48 KiB dynamic shared memory).
// warm = 1: before the copy every active lane loads 4 bytes at its source with ld.global.ca (so the
// sector is in L1) and the copy's shared address depends on the loaded value (times a runtime
// zero), so the load has completed before the LDGSTS issues. Its wavefronts are mem_lg, not
// mem_shared. warm = 0: the copy alone (as tilelab's cpasync_src_count).
// Kernel names: cpasync_lab_cold, cpasync_lab_warm (ncu -k regex:cpasync_lab).
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 1; } } while (0)

__device__ __forceinline__ void copy(unsigned addr, const unsigned char *g, int kind) {
    switch (kind) {
    case 0: asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(addr), "l"(g) : "memory"); break;
    case 1: asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(addr), "l"(g) : "memory"); break;
    case 2: asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(addr), "l"(g) : "memory"); break;
    case 3: asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(addr), "l"(g) : "memory"); break;
    default: break;
    }
}

extern "C" __global__ void cpasync_lab_cold(const unsigned char *src, const unsigned *so,
                                            const unsigned *offs, unsigned mask, int kind,
                                            unsigned *out) {
    extern __shared__ __align__(16) unsigned char smem[];
    const unsigned lane = threadIdx.x & 31;
    const unsigned addr = (unsigned)__cvta_generic_to_shared(smem) + offs[lane];
    if ((mask >> lane) & 1u) copy(addr, src + so[lane], kind);
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    out[lane] = lane;
}

extern "C" __global__ void cpasync_lab_warm(const unsigned char *src, const unsigned *so,
                                            const unsigned *offs, unsigned mask, int kind,
                                            unsigned *out, unsigned zero) {
    extern __shared__ __align__(16) unsigned char smem[];
    const unsigned lane = threadIdx.x & 31;
    unsigned v = 0;
    const bool on = (mask >> lane) & 1u;
    if (on) asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(src + so[lane]) : "memory");
    __syncwarp();
    const unsigned addr = (unsigned)__cvta_generic_to_shared(smem) + offs[lane] + v * zero;
    __syncwarp();
    if (on) copy(addr, src + so[lane], kind);
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    out[lane] = lane + v * zero;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s requests.txt\n", argv[0]); return 2; }
    FILE *f = fopen(argv[1], "r");
    if (!f) { perror(argv[1]); return 1; }
    const unsigned SRC = 64 * 1024, SMEM = 48 * 1024;
    std::vector<unsigned char> host(SRC);
    for (unsigned i = 0; i < SRC; ++i) host[i] = (unsigned char)(i * 7 + 3);
    unsigned char *d_src; unsigned *d_so, *d_offs, *d_out;
    CK(cudaMalloc(&d_src, SRC)); CK(cudaMemcpy(d_src, host.data(), SRC, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&d_so, 128)); CK(cudaMalloc(&d_offs, 128)); CK(cudaMalloc(&d_out, 128));
    CK(cudaFuncSetAttribute(cpasync_lab_cold, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(cpasync_lab_warm, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    char name[256];
    unsigned n = 0;
    while (true) {
        int kind; unsigned mask, warm, so[32], o[32];
        if (fscanf(f, "%255s %d %u %u", name, &kind, &mask, &warm) != 4) break;
        bool ok = true;
        for (int l = 0; l < 32; ++l) ok &= fscanf(f, "%u", &so[l]) == 1;
        for (int l = 0; l < 32; ++l) ok &= fscanf(f, "%u", &o[l]) == 1;
        if (!ok || kind < 0 || kind > 3) { fprintf(stderr, "bad request %s\n", name); return 1; }
        const unsigned w = kind == 3 ? 16u : 4u << kind;
        for (int l = 0; l < 32; ++l)
            if (((mask >> l) & 1u) && (so[l] % w || so[l] + w > SRC || o[l] % w || o[l] + w > SMEM)) {
                fprintf(stderr, "request %s lane %d out of range\n", name, l); return 1;
            }
        CK(cudaMemcpy(d_so, so, 128, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_offs, o, 128, cudaMemcpyHostToDevice));
        if (warm) cpasync_lab_warm<<<1, 32, SMEM>>>(d_src, d_so, d_offs, mask, kind, d_out, 0u);
        else cpasync_lab_cold<<<1, 32, SMEM>>>(d_src, d_so, d_offs, mask, kind, d_out);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        fprintf(stderr, "%u %s\n", n++, name);
    }
    fclose(f);
    fprintf(stderr, "launched %u\n", n);
    return 0;
}
