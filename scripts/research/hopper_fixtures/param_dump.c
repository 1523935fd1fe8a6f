/* LD_PRELOAD shim: prints the first kernel launch's configuration and parameter bytes, and every
 * cuTensorMapEncodeTiled call's arguments, as JSON lines on stderr, then calls the real
 * functions. Used on the H200 machine to read the CuTe tutorials' by-value struct parameters
 * from the real binary (scripts/research/hopper_fixtures/cute_params_device.sh; the binary must be built
 * with -cudart shared and -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL -lcuda).
 *   gcc -shared -fPIC -O1 -I$CUDA/include param_dump.c -o param_dump.so -ldl -lcuda -lcudart
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

static int launches;

static void dump(const char *how, const void *func, void **args, dim3 g, dim3 b, size_t smem,
                 const cudaLaunchConfig_t *cfg) {
  if (launches++ > 0) return;
  CUfunction f = 0;
  const char *name = "?";
  if (cudaGetFuncBySymbol(&f, func) == cudaSuccess) cuFuncGetName(&name, f);
  unsigned cl[3] = {1, 1, 1};
  if (cfg)
    for (unsigned i = 0; i < cfg->numAttrs; i++)
      if (cfg->attrs[i].id == cudaLaunchAttributeClusterDimension) {
        cl[0] = cfg->attrs[i].val.clusterDim.x;
        cl[1] = cfg->attrs[i].val.clusterDim.y;
        cl[2] = cfg->attrs[i].val.clusterDim.z;
      }
  fprintf(stderr,
          "PARAMDUMP {\"via\": \"%s\", \"kernel\": \"%s\", \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], "
          "\"dynamic_smem\": %zu, \"cluster\": [%u, %u, %u], \"params\": [",
          how, name, g.x, g.y, g.z, b.x, b.y, b.z, smem, cl[0], cl[1], cl[2]);
  for (size_t i = 0;; i++) {
    size_t off = 0, sz = 0;
    if (!f || cuFuncGetParamInfo(f, i, &off, &sz) != CUDA_SUCCESS) break;
    fprintf(stderr, "%s{\"index\": %zu, \"offset\": %zu, \"size\": %zu, \"hex\": \"", i ? ", " : "", i, off, sz);
    const unsigned char *p = (const unsigned char *)args[i];
    for (size_t k = 0; k < sz; k++) fprintf(stderr, "%02x", p[k]);
    fprintf(stderr, "\"}");
  }
  fprintf(stderr, "]}\n");
}

cudaError_t cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args, size_t smem, cudaStream_t s) {
  static cudaError_t (*real)(const void *, dim3, dim3, void **, size_t, cudaStream_t);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "cudaLaunchKernel");
  dump("cudaLaunchKernel", func, args, g, b, smem, 0);
  return real(func, g, b, args, smem, s);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *cfg, const void *func, void **args) {
  static cudaError_t (*real)(const cudaLaunchConfig_t *, const void *, void **);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "cudaLaunchKernelExC");
  dump("cudaLaunchKernelExC", func, args, cfg->gridDim, cfg->blockDim, cfg->dynamicSmemBytes, cfg);
  return real(cfg, func, args);
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *m, CUtensorMapDataType dt, cuuint32_t rank, void *addr,
                                const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                const cuuint32_t *es, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  static CUresult (*real)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                          const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                          CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "cuTensorMapEncodeTiled");
  fprintf(stderr, "TMAPDUMP {\"data_type\": %d, \"rank\": %u, \"address\": \"%p\", \"dims\": [", (int)dt, rank, addr);
  for (unsigned i = 0; i < rank; i++) fprintf(stderr, "%s%llu", i ? ", " : "", (unsigned long long)dims[i]);
  fprintf(stderr, "], \"strides_bytes\": [");
  for (unsigned i = 0; i + 1 < rank; i++) fprintf(stderr, "%s%llu", i ? ", " : "", (unsigned long long)strides[i]);
  fprintf(stderr, "], \"box\": [");
  for (unsigned i = 0; i < rank; i++) fprintf(stderr, "%s%u", i ? ", " : "", box[i]);
  fprintf(stderr, "], \"element_strides\": [");
  for (unsigned i = 0; i < rank; i++) fprintf(stderr, "%s%u", i ? ", " : "", es[i]);
  fprintf(stderr, "], \"interleave\": %d, \"swizzle\": %d, \"l2_promotion\": %d, \"oob_fill\": %d}\n", (int)il,
          (int)sw, (int)l2, (int)oob);
  return real(m, dt, rank, addr, dims, strides, box, es, il, sw, l2, oob);
}
