#!/usr/bin/env python3
"""Triton Hopper kernels the tests had not seen (issue 27's "checked against kernels you have not
seen"), compiled on a CPU as triton_hopper.py compiles the fixtures (same JIT specialisation and
launch files):

    python3 scripts/research/hopper_fixtures/unseen.py OUTDIR [NAME ...]

Each is a tutorial kernel at a configuration none of the fixtures uses: other tile shapes of the
tutorial matmul's autotune list (HGMMA shapes the fixtures lack), tf32 inputs, the causal fused
attention, and the TMA matmul with 8 warps. One program each (grid 1).
"""
import sys

import triton_hopper as T
import unseen_kernels as UK


def causal(f, what):
    g = dict(f, consts=dict(f["consts"], STAGE=3))
    g["what"] = what
    return g


UNSEEN = {
    "u_matmul_f16_64x256x32_4w": T.mm("fp16", 64, 256, 32, 4, 4, 64, 256, 256,
                                      "tutorial matmul at its config (64, 256, 32), 4 stages, 4 warps, fp16, "
                                      "M = 64, N = 256, K = 256 (8 K blocks): one program"),
    "u_matmul_f16_128x64x32_4w": T.mm("fp16", 128, 64, 32, 4, 4, 128, 64, 256,
                                      "tutorial matmul at its config (128, 64, 32), 4 stages, 4 warps, fp16, "
                                      "M = 128, N = 64, K = 256: one program"),
    "u_matmul_tf32_128x128x32_4w": T.mm("fp32", 128, 128, 32, 4, 3, 128, 128, 128,
                                        "tutorial matmul with fp32 A and B (tl.dot's default tf32), "
                                        "(128, 128, 32), 3 stages, 4 warps, M = N = 128, K = 128: one program"),
    "u_attn_fwd_causal_d64": causal(T.attn(64, 128, 64, 4, 2, 512, ""),
                                    "tutorial fused attention forward, causal (STAGE 3), f16, D = 64, BLOCK_M 128, "
                                    "BLOCK_N 64, 2 stages, 4 warps, N_CTX = 512: program (0, 0), the diagonal block"),
    "u_matmul_tma_128x256x64_8w": T.mm_tma(128, 256, 64, 8, 3, 128, 256, 256,
                                           "matmul through host TensorDescriptors, 128x256x64, 3 stages, 8 warps, "
                                           "M = 128, N = 256, K = 256: one program"),
}


def custom(fn, args, consts, warps, stages, what):
    return dict(fn=fn, args=args, consts=consts, warps=warps, stages=stages, grid=[1, 1, 1], what=what,
                source="scripts/research/hopper_fixtures/unseen_kernels.py: " + fn.fn.__name__)


D = T.Desc
UNSEEN2 = {
    "u2_persistent_tma_matmul": custom(
        UK.persistent_tma_matmul,
        [("a_desc", "desc", D("fp16", [256, 128], [128, 1], [128, 64])),
         ("b_desc", "desc", D("fp16", [256, 128], [128, 1], [128, 64])),
         ("c_desc", "desc", D("fp16", [256, 256], [256, 1], [128, 128])),
         ("M", "int", 256), ("N", "int", 256), ("K", "int", 128)],
        {"BM": 128, "BN": 128, "BK": 64, "NUM_PROGRAMS": 1}, 4, 3,
        "persistent matmul, one program walking all 4 output tiles of 128x128 (M = N = 256, K = 128), "
        "host TensorDescriptors, f16, 3 stages, 4 warps"),
    "u2_device_desc_matmul": custom(
        UK.device_desc_matmul,
        [("a_ptr", "ptr", "fp16"), ("b_ptr", "ptr", "fp16"), ("c_ptr", "ptr", "fp16"),
         ("M", "int", 128), ("N", "int", 128), ("K", "int", 256)],
        {"BM": 128, "BN": 128, "BK": 64}, 4, 3,
        "matmul with tensor descriptors made on the device (tl.make_tensor_descriptor), 128x128x64, "
        "M = N = 128, K = 256, 3 stages, 4 warps"),
    "u2_fp8_tma_matmul": custom(
        UK.fp8_tma_matmul,
        [("a_desc", "desc", D("fp8e4nv", [128, 256], [256, 1], [128, 128])),
         ("b_desc", "desc", D("fp8e4nv", [128, 256], [256, 1], [128, 128])),
         ("c_ptr", "ptr", "fp16"), ("M", "int", 128), ("N", "int", 128), ("K", "int", 256),
         ("stride_cm", "int", 128)],
        {"BM": 128, "BN": 128, "BK": 128}, 4, 3,
        "fp8 (e4m3) matmul through host TensorDescriptors, 128x128x128, M = N = 128, K = 256, f16 out, "
        "3 stages, 4 warps"),
}
UNSEEN.update(UNSEEN2)
T.FIXTURES.update(UNSEEN)

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.argv = [sys.argv[0], sys.argv[1]] + (sys.argv[2:] or list(UNSEEN))
    T.main()
