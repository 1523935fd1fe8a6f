#!/usr/bin/env python3
"""Launch files (harness_hopper.py format) of the nvcc-compiled and hand-written fixtures.

    python3 scripts/research/hopper_fixtures/nvcc_launches.py FIXDIR OUT.json

* fa3_d{64,128}_{full,causal}_f16.ptx (kernels/fa3_fwd.cu, `nvcc -gencode=arch=compute_90a,
  code=sm_90a -ptx -use_fast_math -DFA_D=D -DFA_CAUSAL=C -DFA_BF16=0`, as src/gpu/verify/fa3.rs
  builds it): fa3_fwd(map q, map k, map v, map o, int seq, int bh, float softmax_scale,
  unsigned *sched), 384 threads, dynamic shared memory FA3_SMEM_BYTES + 1024 = 3 * 128 * D * 2
  + 4 * 128 * D * 2 + 1024 bytes; maps over [bh * seq rows, D columns] f16 (row pitch 2D bytes),
  box {64, 128} ({64, 64} for O), 128B swizzle. Grid (1, 1, 1): the persistent kernel's one CTA
  computes every tile (seq / 128 query blocks x bh heads) itself, claiming tiles 1.. from sched.
  Two launches each: seq 128 (one tile, one key block) and seq 512 (4 tiles of 4 key blocks,
  causal: 4, 3, 2, 1 blocks), bh 1, softmax_scale 0.125.
* hand_tma_wgmma_pipe.ptx (gen_handwritten.py): tma_wgmma_pipe(map A, map Bt, float *C, ktiles),
  160 threads, 33792 bytes of dynamic shared memory, ktiles 4 (K = 256).
"""
import hashlib
import json
import os
import sys


def tmap(index, dims, stride, box, swz="128B"):
    sw = {"none": 0, "32B": 1, "64B": 2, "128B": 3}[swz]
    return {"index": index, "dtype": "f16", "data_type": 6, "rank": 2, "dims": dims, "strides_bytes": [stride],
            "box": box, "element_strides": [1, 1], "interleave": "none", "swizzle": swz, "swizzle_enum": sw,
            "l2_promotion": "128B", "oob_fill": "none (zeros)",
            "buffer": "its own buffer of 16 MiB, zero-filled (the harness allocates it)",
            "cli": f"{index}={'f16'}:{dims[0]},{dims[1]}:{stride}:{box[0]},{box[1]}:{swz}"}


def fa3(fixdir, d, causal, seq, bn=128):
    # bn: the key block (FA_BN; 64 only not causal, fa3_d{d}_full_f16_bn64.ptx): the K and V boxes are {64, bn}.
    name = f"fa3_d{d}_{'causal' if causal else 'full'}_f16" + ("" if bn == 128 else f"_bn{bn}")
    rows = seq
    maps = [tmap(i, [d, rows], 2 * d, [64, [128, bn, bn, 64][i]]) for i in range(4)]
    params = [{"name": f"fa3_fwd_param_{i}", "type": ".b8[128]", "align": 64, "value": "tensor_map",
               "arg": ["mq", "mk", "mv", "mo"][i]} for i in range(4)]
    params += [{"name": "fa3_fwd_param_4", "type": ".u32", "value": seq, "arg": "seq"},
               {"name": "fa3_fwd_param_5", "type": ".u32", "value": 1, "arg": "bh"},
               {"name": "fa3_fwd_param_6", "type": ".f32", "value": 0.125, "arg": "softmax_scale"},
               {"name": "fa3_fwd_param_7", "type": ".u64", "value": "pointer", "arg": "sched (2 zero words)"}]
    smem = 3 * 128 * d * 2 + 4 * bn * d * 2 + 1024
    tiles = seq // 128
    return {"name": f"{name}_s{seq}", "unit": name, "ptx": os.path.join(fixdir, name + ".ptx"), "kernel": "fa3_fwd",
            "grid": [1, 1, 1], "block": [384, 1, 1], "dynamic_smem_bytes": smem, "params": params,
            "tensor_maps": maps,
            "note": f"kernels/fa3_fwd.cu D = {d}, {'causal' if causal else 'full'}, f16; seq {seq}, bh 1: the one CTA "
                    f"computes all {tiles} tile(s) of 128 query rows" + (f" ({', '.join(str(tiles - t) for t in range(tiles))} key blocks)" if causal else f", {seq // bn} key block(s) of {bn} each"),
            "compiler": {"tool": "nvcc 13.0.88 (pip nvidia-cuda-nvcc==13.0.88, the H200 machine's version)",
                         "command": f"nvcc -gencode=arch=compute_90a,code=sm_90a -ptx -use_fast_math -DFA_D={d} "
                                    f"-DFA_CAUSAL={int(causal)} -DFA_BF16=0" + ("" if bn == 128 else f" -DFA_BN={bn}")
                                    + f" -o {name}.ptx kernels/fa3_fwd.cu"}}


def hand(fixdir):
    maps = [tmap(0, [256, 64], 512, [64, 64]), tmap(1, [256, 64], 512, [64, 64])]
    params = [{"name": "tma_wgmma_pipe_param_0", "type": ".b8[128]", "align": 64, "value": "tensor_map", "arg": "map A"},
              {"name": "tma_wgmma_pipe_param_1", "type": ".b8[128]", "align": 64, "value": "tensor_map", "arg": "map Bt"},
              {"name": "tma_wgmma_pipe_param_2", "type": ".u64", "value": "pointer", "arg": "C (f32, 64 x 64)"},
              {"name": "tma_wgmma_pipe_param_3", "type": ".u32", "value": 4, "arg": "ktiles"}]
    return {"name": "hand_tma_wgmma_pipe", "unit": "hand_tma_wgmma_pipe",
            "ptx": os.path.join(fixdir, "hand_tma_wgmma_pipe.ptx"), "kernel": "tma_wgmma_pipe",
            "grid": [1, 1, 1], "block": [160, 1, 1], "dynamic_smem_bytes": 33792, "params": params, "tensor_maps": maps,
            "note": "hand-written two-stage TMA -> mbarrier -> wgmma pipeline: producer warp 4 (elect.sync, "
                    "arrive.expect_tx, 2 UTMALDG.2D per stage), consumer warpgroup 0-3 (try_wait.parity, 4 x "
                    "wgmma m64n64k16 per stage), K = 256 in 4 stages of 64, C[64][64] f32",
            "compiler": {"tool": "hand-written PTX", "command": "python3 scripts/research/hopper_fixtures/gen_handwritten.py DIR"}}


def hand_cluster(fixdir):
    maps = [tmap(0, [64, 64], 128, [64, 64]), tmap(1, [64, 128], 128, [64, 64])]
    params = [{"name": "cluster_mc_wgmma_param_0", "type": ".b8[128]", "align": 64, "value": "tensor_map", "arg": "map A"},
              {"name": "cluster_mc_wgmma_param_1", "type": ".b8[128]", "align": 64, "value": "tensor_map",
               "arg": "map Bt"},
              {"name": "cluster_mc_wgmma_param_2", "type": ".u64", "value": "pointer", "arg": "C (f32, 64 x 128)"},
              {"name": "cluster_mc_wgmma_param_3", "type": ".u64", "value": "pointer", "arg": "X (f32, 2 x 128)"}]
    return {"name": "hand_cluster_mc_wgmma", "unit": "hand_cluster_mc_wgmma",
            "ptx": os.path.join(fixdir, "hand_cluster_mc_wgmma.ptx"), "kernel": "cluster_mc_wgmma",
            "grid": [2, 1, 1], "cluster": [2, 1, 1], "block": [128, 1, 1], "dynamic_smem_bytes": 17408,
            "params": params, "tensor_maps": maps,
            "note": "hand-written cluster of 2 (one launch, grid = one cluster): rank 0 multicasts the A box "
                    "(UTMALDG.2D .multicast::cluster, ctaMask 0b11) into both CTAs, each CTA loads its own B box and "
                    "runs 4 x wgmma m64n64k16 on them; each thread sends d0 to the peer (mapa + st.shared::cluster) "
                    "and arrives on the peer's mbarrier; barrier.cluster before exit. C[64][128] f32, X[2][128]",
            "compiler": {"tool": "hand-written PTX", "command": "python3 scripts/research/hopper_fixtures/gen_cluster.py DIR"}}


def main():
    fixdir, out = sys.argv[1], sys.argv[2]
    L = []
    for d in (64, 128):
        for c in (False, True):
            for s in (128, 512):
                L.append(fa3(fixdir, d, c, s))
        for s in (128, 512):
            L.append(fa3(fixdir, d, False, s, 64))
    L.append(hand(fixdir))
    L.append(hand_cluster(fixdir))
    for l in L:
        l["ptx_sha256"] = hashlib.sha256(open(l["ptx"], "rb").read()).hexdigest()
        l["cli"] = " ".join([f"--arg {i}={p['value']}" for i, p in enumerate(l["params"])
                             if p["value"] not in ("pointer", "tensor_map")] +
                            [f"--tensor-map {m['cli']}" for m in l["tensor_maps"]] +
                            ([f"--cluster {','.join(map(str, l['cluster']))}"] if "cluster" in l else []))
    json.dump(L, open(out, "w"), indent=1)
    print(len(L), "launches")


if __name__ == "__main__":
    main()
