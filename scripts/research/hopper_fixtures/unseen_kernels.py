"""Triton kernels written for the unseen-kernel checks (unseen.py): patterns the fixtures lack.

* `persistent_tma_matmul`: one program walks every output tile (a persistent loop over tile ids
  with a stride of NUM_PROGRAMS), A [M, K] and B [N, K] and C [M, N] through host
  TensorDescriptors, f16 with an f32 accumulator;
* `device_desc_matmul`: the same tile loop body with descriptors made on the device
  (`tl.make_tensor_descriptor`, which needs Triton's global scratch for the tensor maps);
* `fp8_tma_matmul`: e4m3 A [M, K] and B [N, K] through host descriptors (wgmma's fp8 form),
  f16 output.
"""
import triton
import triton.language as tl


@triton.jit
def persistent_tma_matmul(a_desc, b_desc, c_desc, M, N, K,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, NUM_PROGRAMS: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    for tile in tl.range(pid, tiles_m * tiles_n, NUM_PROGRAMS):
        om = (tile // tiles_n) * BM
        on = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(k_tiles):
            a = a_desc.load([om, k * BK])
            b = b_desc.load([on, k * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([om, on], acc.to(tl.float16))


@triton.jit
def device_desc_matmul(a_ptr, b_ptr, c_ptr, M, N, K,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    om = (pid // tiles_n) * BM
    on = (pid % tiles_n) * BN
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(tl.cdiv(K, BK)):
        a = a_desc.load([om, k * BK])
        b = b_desc.load([on, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([om, on], acc.to(tl.float16))


@triton.jit
def fp8_tma_matmul(a_desc, b_desc, c_ptr, M, N, K, stride_cm,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    om = (pid // tiles_n) * BM
    on = (pid % tiles_n) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(tl.cdiv(K, BK)):
        a = a_desc.load([om, k * BK])
        b = b_desc.load([on, k * BK])
        acc = tl.dot(a, b.T, acc)
    rm = om + tl.arange(0, BM)
    rn = on + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))
