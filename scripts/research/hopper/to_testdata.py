#!/usr/bin/env python3
"""Turns the output of scripts/research/hopper/run.sh (unpacked hopper.tar.gz folders) into tests/data.

Usage: python3 scripts/research/hopper/to_testdata.py RUN1_DIR RUN2_DIR CASES_ARGS_FILE CASES_FILE OUT_DIR
RUN1 = first run (stmatrix seed 7; cp.async sources 16 bytes apart), RUN2 = second run (stmatrix
seed 8; cp.async with both source strides; TMA footprints dumped whole). CASES_ARGS_FILE is
`ARGS=1 scripts/research/hopper/make_wgmma_cases.sh` (case name, then the `tilelab sim wgmma` arguments);
CASES_FILE the case file the runs read (scripts/research/hopper/make_wgmma_cases.sh).
"""
import csv
import json
import os
import struct
import sys

run1, run2, args_file, cases_file, out = sys.argv[1:6]
DATE = "2026-11-30"
PROV = {
    "card": "NVIDIA H200 (sm_90), driver 580.159.04, CUDA 13.0 (nvcc V13.0.88), Nsight Compute 2025.3.1.0",
    "date": "2026-11-30 18:48 UTC (run 1) and 18:53 UTC (run 2)",
    "command": "bash scripts/research/hopper/run.sh (through the device tool; builds scripts/research/hopper/probe_main.cu with nvcc -gencode=arch=compute_90a,code=sm_90a; ncu --clock-control none --csv)",
    "scripts": "scripts/research/hopper/run.sh, scripts/research/hopper/probe_main.cu, kernels/hopper_probe.cu, kernels/wgmma_probe.cu, scripts/research/hopper/to_testdata.py",
}


def ncu_rows(path):
    rows, hdr = {}, None
    for line in open(path):
        if not line.startswith('"'):
            continue
        cols = next(csv.reader([line]))
        if hdr is None:
            if "Metric Name" in cols:
                hdr = cols
            continue
        g = dict(zip(hdr, cols))
        rows.setdefault(int(g["ID"]), {})[g["Metric Name"]] = float(g["Metric Value"].replace(",", ""))
    return [rows[k] for k in sorted(rows)]


def jl(path):
    return [json.loads(l) for l in open(path)]


def dump(name, obj, compact_records=False):
    path = os.path.join(out, name)
    with open(path, "w") as f:
        if compact_records and isinstance(obj, list):
            f.write("[\n" + ",\n".join(json.dumps(r, separators=(",", ":")) for r in obj) + "\n]\n")
        elif compact_records:
            head = {k: v for k, v in obj.items() if k != "records" and k != "cases"}
            key = "records" if "records" in obj else "cases"
            s = json.dumps(head, indent=1)[:-2]
            s += ',\n "%s": [\n' % key + ",\n".join(json.dumps(r, separators=(",", ":")) for r in obj[key]) + "\n ]\n}\n"
            f.write(s)
        else:
            json.dump(obj, f, indent=1)
    print(path, os.path.getsize(path))


# ---- stmatrix: replay records + placement slots
WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
BC = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
recs, slots = [], []
for run in (run1, run2):
    for r, m in zip(jl(f"{run}/stsm.jsonl"), ncu_rows(f"{run}/stsm_ncu.csv")):
        assert m["smsp__inst_executed_op_shared_stsm.sum"] == 1
        recs.append({"name": r["name"], "instruction": r["instruction"], "lane_byte_offsets": r["lane_byte_offsets"],
                     "wavefronts": int(m[WF]), "bank_conflicts": int(m[BC])})
        num = int(r["instruction"].split(".")[1][1])
        where = {v: a for a, v in r["words"]}
        s = [where.get(0x8000 | lane << 3 | reg << 1 | h, -1) for lane in range(32) for reg in range(num) for h in range(2)]
        slots.append({"name": r["name"], "instruction": r["instruction"], "lane_byte_offsets": r["lane_byte_offsets"],
                      "written": r["written"], "slots": s})
dump(f"h200_stmatrix_{DATE}.json", recs, compact_records=True)
dump(f"h200_stmatrix_smem_{DATE}.json", {
    "provenance": PROV,
    "encoding": "lane l's register r holds b16 values 0x8000|l<<3|r<<1|h (h = 0 low half); shared memory zeroed before; "
                "slots[(l*num + r)*2 + h] = byte offset where that value was found afterwards, -1 if not found (another lane's "
                "value at the same address survived); written = nonzero 16-bit words after the instruction",
    "records": slots}, compact_records=True)

# ---- TMA (run 2: whole footprints)
cases = jl(f"{run2}/tma.jsonl") + jl(f"{run2}/tma_misaligned.jsonl")
dump(f"h200_tma_{DATE}.json", {
    "provenance": PROV,
    "fill": "global row y, byte b: bytes 0-1 of each 16-byte chunk c = tag y*32 + c + 1 (LE), bytes o = 2..15 = (y*7 + c*13 + o*29 + 5) & 0xff; "
            "box at element coordinates (x0, y0); swizzle = CUtensorMapSwizzle value; dst = destination offset from a 1024-aligned base; "
            "chunks[i] = for the i-th 16-byte chunk of the footprint: tag - 1 (= y*32 + c), -1 untouched, -2 zero (out of bounds), -3 payload wrong; "
            "encode_status = cuTensorMapEncodeTiled's CUresult (1 = CUDA_ERROR_INVALID_VALUE)",
    "cases": cases}, compact_records=True)


# ---- wgmma
def fnv(vals):
    h = 0xcbf29ce484222325
    for v in vals:
        for b in struct.pack("<i", v):
            h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return "%016x" % h


args = {}
for line in open(args_file):
    name, *rest = line.split()
    args[name] = " ".join(rest)
KEEP = {"n8.kk.none", "n8.kk.128B", "n24.kk.64B", "n64.kk.128B", "n64.mnmn.none", "n64.kmn.32B", "rs.n64.k.128B", "bf16.n64.mnmn.128B", "rs.n8.mn.none"}
descs = {l.split()[0]: l.split()[8:] for l in open(cases_file)}
out_cases = []
w1 = {o["name"]: o for o in jl(f"{run1}/wgmma.jsonl")}
for o in jl(f"{run2}/wgmma.jsonl"):
    d = [int(v) for v in o["d"]]
    assert all(v == int(v) for v in o["d"]), o["name"]
    assert w1[o["name"]]["d"] == o["d"], "runs disagree: " + o["name"]
    c = {"name": o["name"], "args": args[o["name"]], "kernel": o["kernel"], "descriptors": descs[o["name"]], "values": len(d), "d_fnv1a64": fnv(d), "d_sum_abs": sum(abs(v) for v in d)}
    if o["name"] in KEEP:
        c["d"] = d
    out_cases.append(c)
import gzip
import re
sass = sorted(set(re.findall(r"\b((?:HGMMA|STSM|LDGSTS|UTMALDG)[A-Z0-9._x]*)", gzip.open(f"{run2}/sass.txt.gz", "rt").read())))
dump(f"h200_wgmma_{DATE}.json", {
    "provenance": PROV,
    "sass": sass,
    "fill": "shared-memory image (from a 1024-aligned base) u16 word i = small(i) as f16 (bf16 for dtype bf16); A registers (A from registers) "
            "for k-block kb, thread t, register j, half h = small(0x40000000 + ((kb*128 + t)*4 + j)*2 + h); small(x) = ((x * 2654435761 mod 2^32) >> 16) % 5 - 2; "
            "descriptors = `tilelab sim wgmma ARGS --json` (start addresses relative to the base; per k-block A then B, hex; A 0 when A comes from registers); d = the 128 threads' accumulator registers, "
            "thread-major, after all k-blocks (both runs identical); d_fnv1a64 = FNV-1a 64 of d as little-endian i32",
    "cases": out_cases}, compact_records=True)

# ---- cp.async
KEYS = {
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": "wavefronts_all",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "wavefronts_op_st",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "wavefronts_op_ld",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum": "wavefronts_op_misc",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum": "bank_conflicts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum": "bank_conflicts_op_ldgsts",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum": "sass_wavefronts_ldgsts",
    "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum": "sass_bank_conflicts_ldgsts",
    "sm__sass_inst_executed_op_ldgsts.sum": "inst_ldgsts",
    "smsp__inst_executed_op_shared_st.sum": "inst_shared_st",
    "sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum": "global_requests_ldgsts",
    "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts.sum": "global_sectors_ldgsts",
}
cp = []
for run in (run1, run2):
    for r, m in zip(jl(f"{run}/cpasync.jsonl"), ncu_rows(f"{run}/cpasync_ncu.csv")):
        name = r["name"] if "src_stride" in r else r["name"] + ".src16"
        cp.append({"name": name, "instruction": r["instruction"], "size": r["size"], "src_stride": r.get("src_stride", 16),
                   "active_mask": r["active_mask"], "lane_byte_offsets": r["lane_byte_offsets"],
                   "counters": {v: int(m[k]) for k, v in KEYS.items() if k in m}})
dump(f"h200_cpasync_{DATE}.json", {
    "provenance": PROV,
    "metrics": KEYS,
    "note": "one warp, one instruction per launch (kernels/hopper_probe.cu cpasync_count: the copy, then cp.async.commit_group and wait_group 0); "
            "lane l copies `size` bytes from src + src_stride*l to shared offset lane_byte_offsets[l] if active; st.shared rows store the same bytes for comparison",
    "records": cp}, compact_records=True)
