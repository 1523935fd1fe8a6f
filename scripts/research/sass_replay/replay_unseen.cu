// Kernels for checking the SASS replay (src/sass/replay.rs) on code it was not written against:
// loops with run-time trip counts that ptxas unrolls with remainders, a signed division, lanes
// of one warp running different trip counts, and 64-bit loop indices. Compiled to PTX with
// nvcc 13.0.88 -arch=sm_90 -ptx; each writes to `out` so nothing is dead.
extern "C" __global__ void fill_rem(unsigned *out, int n) {
    __shared__ unsigned short s[4096];
    for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = (unsigned short)(i * 3);
    __syncthreads();
    unsigned acc = 0;
    for (int i = threadIdx.x; i < n; i += 2 * blockDim.x) acc += s[(i * 7) % n];
    out[threadIdx.x] = acc;
}

extern "C" __global__ void div_loop(unsigned *out, int a, int b) {
    __shared__ unsigned s[1024];
    int q = a / b;
    if (q < 0) q = -q;
    unsigned acc = threadIdx.x;
    for (int i = 0; i < q; ++i) {
        s[(threadIdx.x + i) & 1023] = acc;
        acc = acc * 1664525u + 1013904223u;
    }
    __syncthreads();
    out[threadIdx.x] = acc + s[threadIdx.x & 1023];
}

extern "C" __global__ void lanes_differ(unsigned *out, int n) {
    __shared__ unsigned s[2048];
    unsigned t = threadIdx.x;
    unsigned acc = 0;
    if (t % 3 == 0) {
        for (int i = 0; i < (int)(t & 7) + n; ++i) { s[(t * 5 + i) & 2047] = i; acc += i; }
    } else if (t & 4) {
        for (int i = 0; i < n / 2; ++i) acc ^= s[(t + i) & 2047];
    }
    __syncthreads();
    out[t] = acc;
}

extern "C" __global__ void wide_index(unsigned *out, int m, int n) {
    __shared__ unsigned s[4096];
    size_t total = (size_t)m * (size_t)n;
    for (size_t i = threadIdx.x; i < total; i += blockDim.x) s[i & 4095] = (unsigned)(i >> 3);
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x * 33) & 4095];
}
