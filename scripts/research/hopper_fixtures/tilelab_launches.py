#!/usr/bin/env python3
"""Writes the tilelab launch files (docs/launch-files.md) of the Hopper fixtures:
tests/data/ptx_hopper/launch/NAME.json, one per measured launch tests/data/ptx_hopper/NAME.json.

Usage (from the repository root, no GPU):
    python3 scripts/research/hopper_fixtures/tilelab_launches.py [OUTDIR]

These files are the one place the `tilelab ptx` / `verify --ptx` flags of the fixtures live:
tests/ptx_hopper.rs and verify_ptx_device.py run `--launch` on them (the test also checks each
against its measured record's `launch`, so the two cannot drift apart).

* Harness launches (tt_*, fa3_*, hand_*): from the measured record's `launch`: kernel, grid,
  block, dynamic_smem_bytes, the `--arg`/`--tensor-map` values of its `cli`, and per parameter
  its `arg` (the Python or C++ name) as `from`; a pointer is listed with its `from` only.
* CuTe tutorials (cute_*): decoded by hand from the PTX (`.param` sizes, `ld.param` offsets) and
  the tutorial sources at CUTLASS 7107b05535f8977f5ecb9d01ee203205b1fd9bc4 (examples/cute/
  tutorial/sgemm_sm80.cu, hopper/wgmma_sm90.cu, hopper/wgmma_tma_sm90.cu; run as
  `256 128 256` (sgemm_sm80: `T N`), so M = 256, N = 128, K = 256). See CUTE below.
"""
import json
import os
import shlex
import sys

DIR = "tests/data/ptx_hopper"

# The three CuTe tutorial launches. Parameter indices are the PTX's (`_param_N`); every
# by-value struct's bytes are what the host object holds:
#   shape_MNK   cute::tuple<int,int,int>          12 bytes: M, N, K (s32)
#   cta_tiler   tuple<C<128>,C<128>,C<64>>        empty (1 byte, never read)
#   dA/dB/dC    tuple<int,C<1>> or <C<1>,int>     4 bytes: the one dynamic stride (elements)
#   copy/s2r atoms, smem layouts                  empty
#   TiledMMA (SM90 GMMA)                          8 bytes: accumulate_ (GMMA::ScaleOut, One = 1)
#   TmaA/TmaB (Copy_Atom<Copy_Traits<SM90_TMA_LOAD,...>>)   256 bytes, .align 128: the
#               CUtensorMap tma_desc_ (128 bytes at 0) then the empty AuxTmaParams padded to
#               128 bytes (the kernel takes the parameter's address, so all 256 are given)
#   alpha/beta  cute::half_t                      2 bytes each: 1.0 and 0.0
# TMA maps (make_tma_atom over the MN-major Layout_MN_SW128_Atom<half_t> tile, box 64 x 8 as
# the kernel type's AuxTmaParams Layout<(C<64>,C<8>)> says; cuTensorMapEncodeTiled with
# gmem_prob_shape = (M or N, K), byte stride ld * 2, Swizzle<3,4,3> = 128B).
ZEROS = "u64:" + ",".join(["0"] * 16)
CUTE = {
    "cute_sgemm_sm80": dict(
        kernel="#0", grid=[2, 1, 1], block=[128, 1, 1], dynamic_smem=98304,
        note="CuTe sgemm_sm80 (SM80 half_t TN: cp.async, ldmatrix, mma.sync f16), `sgemm_sm80 256 128 256 T N`: "
             "grid ceil(256/128) x ceil(128/128) = (2, 1), block size(TiledMMA) = 128, dynamic shared memory "
             "sizeof(SharedStorage) = 2 x 128x64x3 half_t = 98304 bytes",
        args=[
            dict(param=0, value="s32:256,128,256", **{"from": "shape_MNK = make_shape(M, N, K)"}),
            dict(param=1, **{"from": "cta_tiler (static, empty)"}),
            dict(param=2, **{"from": "A (half_t const*)"}),
            dict(param=3, value="s32:256", **{"from": "dA = make_stride(ldA, Int<1>{}), ldA = k (T)"}),
            dict(param=7, **{"from": "B (half_t const*)"}),
            dict(param=8, value="s32:256", **{"from": "dB = make_stride(ldB, Int<1>{}), ldB = k (N)"}),
            dict(param=12, **{"from": "C (half_t*)"}),
            dict(param=13, value="s32:256", **{"from": "dC = make_stride(Int<1>{}, ldC), ldC = m"}),
            dict(param=16, value="f16:1.0", **{"from": "alpha (half_t)"}),
            dict(param=17, value="f16:0.0", **{"from": "beta (half_t)"}),
        ]),
    "cute_wgmma_sm90": dict(
        kernel="#0", grid=[2, 1, 1], block=[128, 1, 1], dynamic_smem=98304,
        note="CuTe wgmma_sm90 NT (cp.async to 128B-swizzled MN-major tiles, wgmma m64n64k16 f16), "
             "`wgmma_sm90 256 128 256`: grid (2, 1), block 128, dynamic shared memory 2 x 128x64x3 half_t = 98304 bytes",
        args=[
            dict(param=0, value="s32:256,128,256", **{"from": "shape_MNK = make_shape(M, N, K)"}),
            dict(param=1, **{"from": "cta_tiler (static, empty)"}),
            dict(param=2, **{"from": "A (half_t const*)"}),
            dict(param=3, value="s32:256", **{"from": "dA = make_stride(Int<1>{}, ldA), ldA = m (N)"}),
            dict(param=6, **{"from": "B (half_t const*)"}),
            dict(param=7, value="s32:128", **{"from": "dB = make_stride(Int<1>{}, ldB), ldB = n (T)"}),
            dict(param=10, **{"from": "C (half_t*)"}),
            dict(param=11, value="s32:256", **{"from": "dC = make_stride(Int<1>{}, ldC), ldC = m"}),
            dict(param=12, value="u32:1,0", **{"from": "tiled_mma: accumulate_ = GMMA::ScaleOut::One, then padding"}),
            dict(param=13, value="f16:1.0", **{"from": "alpha (half_t)"}),
            dict(param=14, value="f16:0.0", **{"from": "beta (half_t)"}),
        ]),
    "cute_wgmma_tma_sm90": dict(
        kernel="#0", grid=[2, 1, 1], block=[128, 1, 1], cluster=[2, 1, 1], dynamic_smem=98432,
        note="CuTe wgmma_tma_sm90 NT (TMA 64x8 boxes to 128B-swizzled MN-major tiles, mbarriers, wgmma m64n64k16 f16), "
             "`wgmma_tma_sm90 256 128 256`: grid (2, 1) launched by launch_kernel_on_cluster with dimCluster (2, 1, 1); "
             "dynamic shared memory sizeof(SharedStorage) = 98304 + 6 mbarriers x 8, rounded to alignas(128) = 98432 bytes",
        args=[
            dict(param=0, value="s32:256,128,256", **{"from": "shape_MNK = make_shape(M, N, K)"}),
            dict(param=1, **{"from": "cta_tiler (static, empty)"}),
            dict(param=2, **{"from": "A (half_t const*)"}),
            dict(param=3, tensor_map="f16:256,256:512:64,8:128B",
                 **{"from": "tmaA.tma_desc_: make_tma_atom(SM90_TMA_LOAD, mA (M x K, stride (1, ldA = m)), sA, (bM, bK))"}),
            dict(param=3, offset=128, value=ZEROS, **{"from": "tmaA: padding after tma_desc_ (AuxTmaParams is empty)"}),
            dict(param=4, **{"from": "B (half_t const*)"}),
            dict(param=5, tensor_map="f16:128,256:256:64,8:128B",
                 **{"from": "tmaB.tma_desc_: make_tma_atom(SM90_TMA_LOAD, mB (N x K, stride (1, ldB = n)), sB, (bN, bK))"}),
            dict(param=5, offset=128, value=ZEROS, **{"from": "tmaB: padding after tma_desc_ (AuxTmaParams is empty)"}),
            dict(param=6, **{"from": "C (half_t*)"}),
            dict(param=7, value="s32:256", **{"from": "dC = make_stride(Int<1>{}, ldC), ldC = m"}),
            dict(param=8, value="u32:1,0", **{"from": "tiled_mma: accumulate_ = GMMA::ScaleOut::One, then padding"}),
            dict(param=9, value="f16:1.0", **{"from": "alpha (half_t)"}),
            dict(param=10, value="f16:0.0", **{"from": "beta (half_t)"}),
        ]),
}


def from_record(d):
    """The launch file of a harness-measured record."""
    l = d["launch"]
    given, cluster = {}, None
    toks = shlex.split(l.get("cli") or "")
    for flag, val in zip(toks[::2], toks[1::2]):
        if flag == "--cluster":
            cluster = [int(x) for x in val.split(",")]
            continue
        k, v = val.split("=", 1)
        given[int(k)] = ("value" if flag == "--arg" else "tensor_map", v)
    args = []
    for i, p in enumerate(l["params"]):
        a = {"param": i}
        if i in given:
            a[given[i][0]] = given[i][1]
        a["from"] = p.get("arg") or p["name"]
        args.append(a)
    return dict(kernel=l["kernel"], grid=l["grid"], block=l["block"], cluster=cluster,
                dynamic_smem=l["dynamic_smem_bytes"], note=d.get("note"), args=args)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(DIR, "launch")
    os.makedirs(out, exist_ok=True)
    n = 0
    for f in sorted(os.listdir(DIR)):
        if not f.endswith(".json") or f.endswith((".launch.json", ".params_h200.json")) or f == "ptx_manifest.json":
            continue
        name = f[:-5]
        d = json.load(open(os.path.join(DIR, f)))
        body = CUTE[name] if name in CUTE else from_record(d)
        doc = {"format": "tilelab-launch", "version": 1, "ptx": "../" + d["ptx"]}
        doc.update({k: v for k, v in body.items() if v is not None})
        with open(os.path.join(out, name + ".json"), "w") as w:
            json.dump(doc, w, indent=1)
            w.write("\n")
        n += 1
    print(n, "launch files in", out)


if __name__ == "__main__":
    main()
