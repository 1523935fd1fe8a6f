// Standalone host harness for the Hopper measurements of tilelab (stmatrix, cp.async, TMA,
// wgmma). Build on the GPU machine (CUDA 13):
//   nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -I kernels \
//        scripts/research/hopper/probe_main.cu -o hopper_probe
// Run (scripts/research/hopper/run.sh does all of it, under ncu where counters are wanted):
//   hopper_probe stsm OUT.jsonl SEED NRANDOM   one line per request: offsets, the dump
//   hopper_probe cpasync OUT.jsonl             one line per request: offsets, mask, read-back
//   hopper_probe tma OUT.jsonl [misaligned]    one line per box: driver status, 16-byte chunk map
//   hopper_probe wgmma CASES.txt OUT.jsonl     one line per case: the accumulator registers
// Launch order = line order, so `ncu --csv` rows (one per launch of the *_count kernels) pair
// with the lines. Every record is written with the inputs that produced it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <string>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

#include "hopper_probe.cu"
#include "wgmma_probe.cu"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

static uint64_t rng_state = 1;
static uint32_t rnd() {  // xorshift64*
    rng_state ^= rng_state >> 12; rng_state ^= rng_state << 25; rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ULL) >> 32);
}
static uint32_t rnd_range(uint32_t n) { return n ? rnd() % n : 0; }

static void print_offs(FILE *f, const uint32_t *o) {
    fprintf(f, "[");
    for (int l = 0; l < 32; ++l) fprintf(f, "%s%u", l ? "," : "", o[l]);
    fprintf(f, "]");
}

// ---------------------------------------------------------------- stmatrix
static const char *STSM_NAMES[6] = {"stmatrix.x1", "stmatrix.x2", "stmatrix.x4",
                                    "stmatrix.x1.trans", "stmatrix.x2.trans", "stmatrix.x4.trans"};

static int run_stsm(const char *out_path, uint64_t seed, int nrandom) {
    FILE *f = fopen(out_path, "w");
    if (!f) { perror(out_path); return 1; }
    rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
    uint32_t *d_offs, *d_dump, *d_out;
    CK(cudaMalloc(&d_offs, 32 * 4)); CK(cudaMalloc(&d_dump, 513 * 4)); CK(cudaMalloc(&d_out, 32 * 4));
    const unsigned SMEM = 48 * 1024, LIMIT = SMEM - 16;
    struct Req { std::string name; int kind; uint32_t offs[32]; };
    std::vector<Req> reqs;
    // Structured requests: row pitch P for matrix rows, every kind.
    const uint32_t pitches[] = {16, 32, 64, 128, 144, 256, 0, 80};
    for (int k = 0; k < 6; ++k) {
        for (uint32_t p : pitches) {
            Req r; r.kind = k; r.name = std::string("stsm.") + STSM_NAMES[k] + ".pitch" + std::to_string(p);
            for (int l = 0; l < 32; ++l) { uint32_t m = l / 8, row = l % 8; r.offs[l] = (m * 8 + row) * p + (p == 0 ? 0 : 0); }
            reqs.push_back(r);
        }
        // 16x16 tile of f16 with 32-byte pitch as mma's C fragment store would use it, and a
        // 128-byte-row tile with the row % 8 chunk swizzle.
        Req t; t.kind = k; t.name = std::string("stsm.") + STSM_NAMES[k] + ".tile64_swizzled";
        for (int l = 0; l < 32; ++l) { uint32_t m = l / 8, row = l % 8; uint32_t rr = (m % 2) * 8 + row, c = m / 2;
            t.offs[l] = rr * 128 + ((c ^ (rr % 8)) * 16); }
        reqs.push_back(t);
        Req u = t; u.name = std::string("stsm.") + STSM_NAMES[k] + ".tile64_plain";
        for (int l = 0; l < 32; ++l) { uint32_t m = l / 8, row = l % 8; uint32_t rr = (m % 2) * 8 + row, c = m / 2; u.offs[l] = rr * 128 + c * 16; }
        reqs.push_back(u);
    }
    // Random requests (the patterns of src/gpu/fuzz.rs, 16-byte rows).
    for (int i = 0; i < nrandom; ++i) {
        Req r; r.kind = rnd_range(6);
        uint32_t p = rnd_range(7);
        r.name = "stsm.fuzz." + std::to_string(seed) + "." + std::to_string(i) + ".p" + std::to_string(p);
        uint32_t o[32];
        if (p == 0) { const uint32_t R[] = {64, 128, 256, 512, 1024, 4096, LIMIT}; uint32_t rr = R[rnd_range(7)];
            for (int l = 0; l < 32; ++l) o[l] = rnd_range(rr); }
        else if (p == 1) { uint32_t pool[8]; uint32_t np = 1 + rnd_range(8); for (uint32_t j = 0; j < np; ++j) pool[j] = rnd_range(8192);
            for (int l = 0; l < 32; ++l) o[l] = pool[rnd_range(np)]; }
        else if (p == 2) { uint32_t s = rnd_range(2) ? rnd_range(41) * 16 : rnd_range(301); uint32_t b = rnd_range(4096);
            for (int l = 0; l < 32; ++l) o[l] = b + s * l; }
        else if (p == 3) { const uint32_t G[] = {2, 4, 8}; uint32_t g = G[rnd_range(3)]; uint32_t a[16];
            for (uint32_t j = 0; j < 32 / g; ++j) a[j] = rnd_range(2048); for (int l = 0; l < 32; ++l) o[l] = a[l / g]; }
        else if (p == 4) { uint32_t base[4]; for (int j = 0; j < 4; ++j) base[j] = rnd_range(64) * 128 + 16 * rnd_range(8);
            const uint32_t S[] = {16, 32, 0, 128, 48}; uint32_t st = S[rnd_range(5)];
            for (int l = 0; l < 32; ++l) o[l] = base[l / 8] + (l % 8) * st; }
        else if (p == 5) { uint32_t base = rnd_range(64) * 128; uint32_t perm[32]; for (int l = 0; l < 32; ++l) perm[l] = l;
            for (int l = 31; l > 0; --l) { uint32_t j = rnd_range(l + 1); uint32_t t = perm[l]; perm[l] = perm[j]; perm[j] = t; }
            for (int l = 0; l < 32; ++l) o[l] = base + perm[l] * 16; }
        else { const uint32_t S[] = {64, 128, 136, 144, 256}; const uint32_t X[] = {0, 1, 3, 7};
            uint32_t s = S[rnd_range(5)], x = X[rnd_range(4)]; for (int l = 0; l < 32; ++l) o[l] = (l * s) ^ ((l & x) << 4); }
        for (int l = 0; l < 32; ++l) r.offs[l] = (o[l] % LIMIT) / 16 * 16;
        reqs.push_back(r);
    }
    CK(cudaFuncSetAttribute(stsm_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(stsm_count, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    for (auto &r : reqs) {
        CK(cudaMemcpy(d_offs, r.offs, 128, cudaMemcpyHostToDevice));
        stsm_count<<<1, 32, SMEM>>>(d_offs, r.kind, d_out);
        CK(cudaGetLastError());
        stsm_probe<<<1, 32, SMEM>>>(d_offs, r.kind, d_dump);
        CK(cudaGetLastError());
        uint32_t dump[513];
        CK(cudaMemcpy(dump, d_dump, sizeof dump, cudaMemcpyDeviceToHost));
        fprintf(f, "{\"name\":\"%s\",\"instruction\":\"%s\",\"lane_byte_offsets\":", r.name.c_str(), STSM_NAMES[r.kind]);
        print_offs(f, r.offs);
        fprintf(f, ",\"written\":%u,\"words\":[", dump[0]);
        for (uint32_t j = 0; j < dump[0] && j < 512; ++j) fprintf(f, "%s[%u,%u]", j ? "," : "", dump[1 + j] >> 16, dump[1 + j] & 0xffff);
        fprintf(f, "]}\n");
    }
    fclose(f);
    printf("stsm: %zu requests\n", reqs.size());
    return 0;
}

// ---------------------------------------------------------------- cp.async
static const char *CPA_NAMES[7] = {"cp.async.ca.shared.global.4", "cp.async.ca.shared.global.8",
                                   "cp.async.ca.shared.global.16", "cp.async.cg.shared.global.16",
                                   "st.shared.b32", "st.shared.v2.b32", "st.shared.v4.b32"};
static const uint32_t CPA_SIZE[7] = {4, 8, 16, 16, 4, 8, 16};

static int run_cpasync(const char *out_path) {
    FILE *f = fopen(out_path, "w");
    if (!f) { perror(out_path); return 1; }
    rng_state = 77;
    unsigned char *d_src; uint32_t *d_offs, *d_out;
    std::vector<unsigned char> src(32 * 16);
    for (size_t i = 0; i < src.size(); ++i) src[i] = (unsigned char)(i * 7 + 3);
    CK(cudaMalloc(&d_src, src.size())); CK(cudaMemcpy(d_src, src.data(), src.size(), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&d_offs, 128)); CK(cudaMalloc(&d_out, 128));
    const unsigned SMEM = 48 * 1024;
    CK(cudaFuncSetAttribute(cpasync_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(cpasync_count, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    for (uint32_t sstride : {16u, 0u})
    for (int k = 0; k < 7; ++k) {
        uint32_t s = CPA_SIZE[k];
        uint32_t src_stride = sstride ? sstride : s;  // 0: contiguous sources, `size` apart
        // (name, stride in bytes or special, mask)
        struct P { const char *name; int stride; uint32_t mask; } pats[] = {
            {"contiguous", (int)s, 0xffffffffu}, {"stride2x", (int)(2 * s), 0xffffffffu},
            {"stride4x", (int)(4 * s), 0xffffffffu}, {"stride8x", (int)(8 * s), 0xffffffffu},
            {"stride128B", 128, 0xffffffffu}, {"stride256B", 256, 0xffffffffu},
            {"same", 0, 0xffffffffu}, {"contiguous_half", (int)s, 0x0000ffffu},
            {"stride128B_quarter", 128, 0x000000ffu}, {"perm", -1, 0xffffffffu},
            {"pairs_same", -2, 0xffffffffu}, {"stride144B", 144, 0xffffffffu},
            {"quads_same", -3, 0xffffffffu}, {"same_even_lanes", 0, 0x55555555u},
            {"pairs_same_half", -2, 0x0000ffffu}, {"swap_pairs", -4, 0xffffffffu}};
        for (auto &p : pats) {
            if (p.stride == 144 && s == 16) continue;  // keep 16-byte alignment
            uint32_t o[32];
            if (p.stride >= 0) for (int l = 0; l < 32; ++l) o[l] = 1024 + l * p.stride;
            else if (p.stride == -1) { for (int l = 0; l < 32; ++l) o[l] = l;
                for (int l = 31; l > 0; --l) { uint32_t j = rnd_range(l + 1); uint32_t t = o[l]; o[l] = o[j]; o[j] = t; }
                for (int l = 0; l < 32; ++l) o[l] = 2048 + o[l] * s; }
            else if (p.stride == -2) for (int l = 0; l < 32; ++l) o[l] = 4096 + (l / 2) * s;
            else if (p.stride == -3) for (int l = 0; l < 32; ++l) o[l] = 4096 + (l / 4) * s;
            else for (int l = 0; l < 32; ++l) o[l] = 4096 + (l ^ 1) * s;
            for (int l = 0; l < 32; ++l) o[l] = o[l] / s * s;
            CK(cudaMemcpy(d_offs, o, 128, cudaMemcpyHostToDevice));
            cpasync_count<<<1, 32, SMEM>>>(d_src, d_offs, p.mask, k, d_out, src_stride);
            CK(cudaGetLastError());
            cpasync_probe<<<1, 32, SMEM>>>(d_src, d_offs, p.mask, k, d_out, src_stride);
            CK(cudaGetLastError());
            uint32_t back[32];
            CK(cudaMemcpy(back, d_out, 128, cudaMemcpyDeviceToHost));
            fprintf(f, "{\"name\":\"cpasync.%s.%s.src%u\",\"instruction\":\"%s\",\"size\":%u,\"src_stride\":%u,\"active_mask\":%u,\"lane_byte_offsets\":",
                    CPA_NAMES[k], p.name, src_stride, CPA_NAMES[k], s, src_stride, p.mask);
            print_offs(f, o);
            fprintf(f, ",\"read_back\":");
            print_offs(f, back);
            fprintf(f, "}\n");
        }
    }
    fclose(f);
    return 0;
}

// ---------------------------------------------------------------- TMA
typedef CUresult (*EncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// Byte `b` of global row `y`: bytes 0-1 of each 16-byte chunk c hold the tag y*32 + c + 1
// (little-endian), the other 14 bytes (y*7 + c*13 + o*29 + 5) & 0xff.
static unsigned char fill_byte(uint32_t y, uint32_t b) {
    uint32_t c = b / 16, o = b % 16, tag = y * 32 + c + 1;
    if (o == 0) return tag & 0xff;
    if (o == 1) return tag >> 8;
    return (y * 7 + c * 13 + o * 29 + 5) & 0xff;
}

static int run_tma(const char *out_path, bool misaligned) {
    FILE *f = fopen(out_path, "w");
    if (!f) { perror(out_path); return 1; }
    void *fn = nullptr; cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
    if (!fn || q != cudaDriverEntryPointSuccess) { fprintf(stderr, "no cuTensorMapEncodeTiled\n"); return 1; }
    EncodeTiled encode = (EncodeTiled)fn;
    const unsigned SMEM = 64 * 1024 + 1024;
    CK(cudaFuncSetAttribute(tma_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    unsigned char *d_out; CK(cudaMalloc(&d_out, 64 * 1024));
    struct Case { uint32_t rows, inner_bytes, elem, swz, dst; int oob; };
    std::vector<Case> cases;
    const uint32_t spans[4] = {0, 32, 64, 128};
    if (!misaligned) {
        for (uint32_t swz = 0; swz < 4; ++swz)
            for (uint32_t e : {1u, 2u, 4u})
                for (uint32_t ib : {16u, 32u, 64u, 128u, 256u})
                    for (uint32_t rows : {8u, 64u, 5u}) {
                        if (rows == 5 && ib != spans[swz] && !(swz == 0 && ib == 64)) continue;
                        if (swz && ib > spans[swz] && !(rows == 8 && e == 2)) continue;  // a few rejected encodes
                        if (ib / e > 256) continue;
                        cases.push_back({rows, ib, e, swz, 0, 0});
                    }
        // Not a multiple of 16 bytes (rejected), boxes running past the tensor (zero fill).
        cases.push_back({8, 24, 2, 0, 0, 0});
        cases.push_back({64, 128, 2, 3, 0, 1});
        cases.push_back({64, 64, 2, 2, 2048, 1});
        // Destinations aligned to the repeat but not at the start of the buffer.
        cases.push_back({64, 128, 2, 3, 3072, 0});
        cases.push_back({16, 64, 4, 2, 1536, 0});
        cases.push_back({32, 32, 1, 1, 768, 0});
    } else {
        cases.push_back({64, 128, 2, 3, 128, 0});
        cases.push_back({64, 128, 2, 3, 256, 0});
        cases.push_back({64, 128, 2, 3, 512, 0});
        cases.push_back({32, 64, 2, 2, 128, 0});
        cases.push_back({32, 64, 2, 2, 256, 0});
        cases.push_back({16, 32, 2, 1, 128, 0});
    }
    const CUtensorMapSwizzle SW[4] = {CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B,
                                      CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B};
    for (auto &c : cases) {
        uint32_t cols = c.inner_bytes / c.elem;
        uint32_t gcols_bytes = c.inner_bytes + 48;                // one chunk left of the box, two right
        gcols_bytes = (gcols_bytes + 15) / 16 * 16;
        uint32_t grows = c.rows + 8;
        int x0 = 16 / c.elem, y0 = 3;
        if (c.oob) y0 = grows - c.rows / 2;                        // half the box past the last row
        std::vector<unsigned char> g(gcols_bytes * grows);
        for (uint32_t y = 0; y < grows; ++y)
            for (uint32_t b = 0; b < gcols_bytes; ++b) g[y * gcols_bytes + b] = fill_byte(y, b);
        unsigned char *d_g; CK(cudaMalloc(&d_g, g.size()));
        CK(cudaMemcpy(d_g, g.data(), g.size(), cudaMemcpyHostToDevice));
        CUtensorMapDataType dt = c.elem == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                               : c.elem == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16 : CU_TENSOR_MAP_DATA_TYPE_UINT32;
        cuuint64_t gdim[2] = {gcols_bytes / c.elem, grows}, gstride[1] = {gcols_bytes};
        cuuint32_t box[2] = {cols, c.rows}, estr[2] = {1, 1};
        alignas(64) TmaMap map;
        memset(&map, 0, sizeof map);
        CUresult st = encode(reinterpret_cast<CUtensorMap *>(&map), dt, 2, d_g, gdim, gstride, box, estr,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, SW[c.swz], CU_TENSOR_MAP_L2_PROMOTION_NONE,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        fprintf(f, "{\"rows\":%u,\"cols\":%u,\"elem_bytes\":%u,\"swizzle\":%u,\"dst\":%u,\"x0\":%d,\"y0\":%d,\"global_rows\":%u,\"global_row_bytes\":%u,\"encode_status\":%d",
                c.rows, cols, c.elem, c.swz, c.dst, x0, y0, grows, gcols_bytes, (int)st);
        if (st == CUDA_SUCCESS) {
            uint32_t nbytes = c.rows * c.inner_bytes;
            uint32_t pitch = c.swz && c.inner_bytes < spans[c.swz] ? spans[c.swz] : c.inner_bytes;
            uint32_t foot = c.rows * pitch;  // the rows' footprint: padded to the span when narrower
            uint32_t out_bytes = c.dst + foot + 1024;
            tma_probe<<<1, 128, SMEM>>>(map, x0, y0, c.dst, nbytes, d_out, out_bytes);
            cudaError_t e = cudaDeviceSynchronize();
            fprintf(f, ",\"launch\":\"%s\"", cudaGetErrorString(e));
            if (e != cudaSuccess) { fprintf(f, "}\n"); fclose(f); return 2; }
            std::vector<unsigned char> s(out_bytes);
            CK(cudaMemcpy(s.data(), d_out, out_bytes, cudaMemcpyDeviceToHost));
            // Per 16-byte chunk of the destination: global tag - 1 (= y*32 + c), -1 untouched
            // (0xA5), -2 zero filled, -3 payload not the tagged chunk's.
            fprintf(f, ",\"footprint\":%u,\"chunks\":[", foot);
            for (uint32_t i = 0; i < foot / 16; ++i) {
                const unsigned char *p = &s[c.dst + 16 * i];
                int v;
                bool all_a5 = true, all_zero = true;
                for (int o = 0; o < 16; ++o) { all_a5 &= p[o] == 0xA5; all_zero &= p[o] == 0; }
                if (all_a5) v = -1;
                else if (all_zero) v = -2;
                else {
                    uint32_t tag = p[0] | (uint32_t)p[1] << 8;
                    v = (int)tag - 1;
                    uint32_t y = (tag - 1) / 32, cc = (tag - 1) % 32;
                    for (int o = 2; o < 16; ++o) if (tag == 0 || p[o] != fill_byte(y, cc * 16 + o)) v = -3;
                }
                fprintf(f, "%s%d", i ? "," : "", v);
            }
            uint32_t stray = 0;
            for (uint32_t i = 0; i < out_bytes; ++i)
                if ((i < c.dst || i >= c.dst + foot) && s[i] != 0xA5) ++stray;
            fprintf(f, "],\"stray_bytes\":%u", stray);
        }
        fprintf(f, "}\n");
        fflush(f);
        CK(cudaFree(d_g));
    }
    fclose(f);
    return 0;
}

// ---------------------------------------------------------------- wgmma
// Small integers in [-2, 2] from a 32-bit key (the shared-memory image and A registers).
static int small_int(uint32_t x) { return (int)(((x * 2654435761u) >> 16) % 5) - 2; }
static uint16_t bits16(int v, bool bf16) {
    static const uint16_t F16[5] = {0xC000, 0xBC00, 0x0000, 0x3C00, 0x4000};
    static const uint16_t BF16[5] = {0xC000, 0xBF80, 0x0000, 0x3F80, 0x4000};
    return bf16 ? BF16[v + 2] : F16[v + 2];
}

static int run_wgmma(const char *cases_path, const char *out_path) {
    FILE *in = fopen(cases_path, "r");
    FILE *f = fopen(out_path, "w");
    if (!in || !f) { perror("wgmma files"); return 1; }
    char name[128], dtype[8], src[8];
    int n, ta, tb, kb; unsigned smem_bytes;
    while (fscanf(in, "%127s %d %7s %7s %d %d %d %u", name, &n, dtype, src, &ta, &tb, &kb, &smem_bytes) == 8) {
        std::vector<unsigned long long> desc(2 * kb);
        for (int i = 0; i < 2 * kb; ++i) if (fscanf(in, "%llx", &desc[i]) != 1) { fprintf(stderr, "bad case %s\n", name); return 1; }
        const WgmmaKernel *kern = nullptr;
        for (auto &k : WGMMA_KERNELS)
            if (k.n == n && !strcmp(k.dtype, dtype) && !strcmp(k.src, src) && k.ta == (strcmp(src, "rs") ? ta : 0) && k.tb == tb) kern = &k;
        if (!kern) { fprintf(f, "{\"name\":\"%s\",\"error\":\"no kernel\"}\n", name); continue; }
        bool bf = !strcmp(dtype, "bf16");
        std::vector<uint16_t> img(smem_bytes / 2);
        for (size_t i = 0; i < img.size(); ++i) img[i] = bits16(small_int((uint32_t)i), bf);
        std::vector<uint32_t> aregs(kb * 128 * 4);
        for (int b = 0; b < kb; ++b) for (int t = 0; t < 128; ++t) for (int j = 0; j < 4; ++j) {
            uint32_t key = 0x40000000u + ((uint32_t)((b * 128 + t) * 4 + j)) * 2;
            aregs[(b * 128 + t) * 4 + j] = bits16(small_int(key), bf) | (uint32_t)bits16(small_int(key + 1), bf) << 16;
        }
        void *d_img, *d_desc, *d_a, *d_out;
        CK(cudaMalloc(&d_img, smem_bytes)); CK(cudaMemcpy(d_img, img.data(), smem_bytes, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&d_desc, desc.size() * 8)); CK(cudaMemcpy(d_desc, desc.data(), desc.size() * 8, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&d_a, aregs.size() * 4)); CK(cudaMemcpy(d_a, aregs.data(), aregs.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&d_out, 128 * (n / 2) * 4));
        unsigned words = smem_bytes / 16, dyn = smem_bytes + 1024;
        const unsigned *aptr = strcmp(src, "rs") ? nullptr : (const unsigned *)d_a;
        void *args[] = {&d_img, &words, &d_desc, &kb, &aptr, &d_out};
        CK(cudaFuncSetAttribute(kern->fn, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
        CK(cudaLaunchKernel(kern->fn, dim3(1), dim3(128), args, dyn, 0));
        CK(cudaDeviceSynchronize());
        std::vector<float> out(128 * (n / 2));
        CK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
        fprintf(f, "{\"name\":\"%s\",\"kernel\":\"%s\",\"d\":[", name, kern->name);
        for (size_t i = 0; i < out.size(); ++i) {
            float v = out[i];
            if (v == (float)(int)v) fprintf(f, "%s%d", i ? "," : "", (int)v);
            else fprintf(f, "%s%.9g", i ? "," : "", v);
        }
        fprintf(f, "]}\n");
        fflush(f);
        cudaFree(d_img); cudaFree(d_desc); cudaFree(d_a); cudaFree(d_out);
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s stsm|cpasync|tma|wgmma ...\n", argv[0]); return 2; }
    std::string cmd = argv[1];
    if (cmd == "stsm" && argc >= 5) return run_stsm(argv[2], strtoull(argv[3], 0, 10), atoi(argv[4]));
    if (cmd == "cpasync") return run_cpasync(argv[2]);
    if (cmd == "tma") return run_tma(argv[2], argc > 3);
    if (cmd == "wgmma" && argc >= 4) return run_wgmma(argv[2], argv[3]);
    fprintf(stderr, "bad arguments\n");
    return 2;
}
