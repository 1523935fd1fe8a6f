// A 32-way shared read in an inlined __device__ function (nvcc -lineinfo writes .loc ... inlined_at for it); tests/ptx_lines.rs.
__device__ __forceinline__ float rd(const float* s, int i) {
  return s[i * 32];
}
__global__ void k(float* out) {
  __shared__ float s[32 * 32];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = rd(s, threadIdx.x);
}
