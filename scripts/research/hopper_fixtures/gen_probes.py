#!/usr/bin/env python3
"""Hand-written PTX probes for issue 27's question: which Nsight Compute counters do wgmma
operand reads, TMA / bulk-copy writes into shared memory and mbarrier operations move?

    python3 scripts/research/hopper_fixtures/gen_probes.py OUTDIR

writes OUTDIR/hopper_probes.ptx (one module, sm_90a) and OUTDIR/probes.launch.json (the
launches `run_device.sh` measures). Every kernel does one kind of work `n` times (a parameter),
so a counter's slope between n = 1 and n = 4 is its cost per instruction (or per box / byte), and
the intercept (n = 1 minus the slope) the kernel's fixed part (compare probe_empty).

* probe_empty: 128 threads, nothing (the baseline).
* probe_mbar(out, n): 128 threads; thread 0 inits one mbarrier (count 128); n phases of:
  every thread mbarrier.arrive, then mbarrier.try_wait.parity in a loop.
* probe_mbar_tx(out, n): 32 threads, lane 0 alone: one mbarrier (count 1); n phases of
  mbarrier.expect_tx 64, mbarrier.complete_tx 64, mbarrier.arrive, try_wait.parity loop.
* probe_tma_load(map, n, box_bytes, box_rows): 32 threads, lane 0: n boxes
  (mbarrier.arrive.expect_tx box_bytes; cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::
  complete_tx::bytes at {0, i * box_rows} into shared byte i * box_bytes; wait) - the tensor map
  chooses the box and the swizzle.
* probe_tma_store(map, n, box_bytes, box_rows): 32 threads, lane 0: n boxes shared -> global
  (cp.async.bulk.tensor.2d.global.shared::cta.bulk_group), commit_group, wait_group 0.
* probe_bulk_load(src, n, bytes): 32 threads, lane 0: n cp.async.bulk.shared::cluster.global.
  mbarrier::complete_tx::bytes of `bytes` each (no tensor map; UBLKCP), each waited for.
* probe_wgmma_ss_n{64,128,256}(out, n): one warpgroup; n x (wgmma.fence; one
  wgmma.mma_async.m64nNk16.f32.f16.f16, A and B from descriptors, 128B swizzle, K-major;
  commit_group; wait_group 0); thread t stores d0 to out[t]. A at the 1024-aligned base, B 8192
  bytes above (shared memory is not written: the values do not matter to the counters).
* probe_wgmma_ss_n64_sw{0,32,64}: the same with no swizzle (LBO 128 B, SBO 256 B) or the 32B / 64B
  swizzle (SBO 256 / 512 B); probe_wgmma_ss_n64_tb: B MN-major (imm-trans-b 1);
  probe_wgmma_rs_n64: A from registers (4 x b32), B from a descriptor.
"""
import json
import os
import sys

HDR = """//
// Hand-written probes for tilelab (scripts/research/hopper_fixtures/gen_probes.py), sm_90a.
//
.version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 dsmem[];
.shared .align 8 .b64 pbar[1];
"""

PRE = """	.reg .pred 	%p<8>;
	.reg .b32 	%r<64>;
	.reg .b64 	%rd<32>;
	.reg .f32 	%f<140>;
	mov.u32 	%r0, %tid.x;
	mov.u32 	%r2, dsmem;
	add.u32 	%r2, %r2, 1023;
	and.b32 	%r2, %r2, -1024;
	mov.u32 	%r3, pbar;
"""


def entry(name, params, body, ntid):
    ps = ",\n".join(f"\t.param {t} {name}_param_{i}{suffix}" for i, (t, suffix) in enumerate(params))
    return f"\n.visible .entry {name}(\n{ps}\n)\n.reqntid {ntid}, 1, 1\n{{\n{PRE}{body}}}\n"


def lane0_only():
    return "\tsetp.ne.u32 \t%p0, %r0, 0;\n\t@%p0 bra \t$L_END;\n"


def wait_loop(tag, parity_reg):
    return (f"$L_W{tag}:\n\tmbarrier.try_wait.parity.shared::cta.b64 \t%p1, [%r3], {parity_reg};\n"
            f"\t@!%p1 bra \t$L_W{tag};\n")


def k_empty():
    return entry("probe_empty", [(".u64", "")], "\tret;\n", 128)


def k_mbar():
    b = """	ld.param.u32 	%r1, [probe_mbar_param_1];
	setp.ne.u32 	%p0, %r0, 0;
	@%p0 bra 	$L_I;
	mbarrier.init.shared::cta.b64 	[%r3], 128;
	fence.mbarrier_init.release.cluster;
$L_I:
	bar.sync 	0;
	mov.u32 	%r10, 0;
$L_LOOP:
	setp.ge.u32 	%p2, %r10, %r1;
	@%p2 bra 	$L_END;
	mbarrier.arrive.shared::cta.b64 	_, [%r3];
	and.b32 	%r11, %r10, 1;
""" + wait_loop("A", "%r11") + """	add.u32 	%r10, %r10, 1;
	bra.uni 	$L_LOOP;
$L_END:
	ret;
"""
    return entry("probe_mbar", [(".u64", ""), (".u32", "")], b, 128)


def k_mbar_tx():
    b = lane0_only() + """	ld.param.u32 	%r1, [probe_mbar_tx_param_1];
	mbarrier.init.shared::cta.b64 	[%r3], 1;
	fence.mbarrier_init.release.cluster;
	mov.u32 	%r10, 0;
$L_LOOP:
	setp.ge.u32 	%p2, %r10, %r1;
	@%p2 bra 	$L_END;
	mbarrier.expect_tx.relaxed.cta.shared::cta.b64 	[%r3], 64;
	mbarrier.complete_tx.relaxed.cta.shared::cta.b64 	[%r3], 64;
	mbarrier.arrive.shared::cta.b64 	_, [%r3];
	and.b32 	%r11, %r10, 1;
""" + wait_loop("A", "%r11") + """	add.u32 	%r10, %r10, 1;
	bra.uni 	$L_LOOP;
$L_END:
	ret;
"""
    return entry("probe_mbar_tx", [(".u64", ""), (".u32", "")], b, 32)


def k_tma_load():
    b = lane0_only() + """	mov.b64 	%rd1, probe_tma_load_param_0;
	cvta.param.u64 	%rd1, %rd1;
	ld.param.u32 	%r1, [probe_tma_load_param_1];
	ld.param.u32 	%r4, [probe_tma_load_param_2];
	ld.param.u32 	%r5, [probe_tma_load_param_3];
	mbarrier.init.shared::cta.b64 	[%r3], 1;
	fence.mbarrier_init.release.cluster;
	mov.u32 	%r10, 0;
	mov.u32 	%r12, 0;
$L_LOOP:
	setp.ge.u32 	%p2, %r10, %r1;
	@%p2 bra 	$L_END;
	mbarrier.arrive.expect_tx.shared::cta.b64 	_, [%r3], %r4;
	mad.lo.u32 	%r13, %r10, %r4, %r2;
	mul.lo.u32 	%r14, %r10, %r5;
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes 	[%r13], [%rd1, {%r12, %r14}], [%r3];
	and.b32 	%r11, %r10, 1;
""" + wait_loop("A", "%r11") + """	add.u32 	%r10, %r10, 1;
	bra.uni 	$L_LOOP;
$L_END:
	ret;
"""
    return entry("probe_tma_load", [(".align 64 .b8", "[128]"), (".u32", ""), (".u32", ""), (".u32", "")], b, 32)


def k_tma_store():
    b = lane0_only() + """	mov.b64 	%rd1, probe_tma_store_param_0;
	cvta.param.u64 	%rd1, %rd1;
	ld.param.u32 	%r1, [probe_tma_store_param_1];
	ld.param.u32 	%r4, [probe_tma_store_param_2];
	ld.param.u32 	%r5, [probe_tma_store_param_3];
	mov.u32 	%r10, 0;
	mov.u32 	%r12, 0;
$L_LOOP:
	setp.ge.u32 	%p2, %r10, %r1;
	@%p2 bra 	$L_DONE;
	mad.lo.u32 	%r13, %r10, %r4, %r2;
	mul.lo.u32 	%r14, %r10, %r5;
	cp.async.bulk.tensor.2d.global.shared::cta.bulk_group 	[%rd1, {%r12, %r14}], [%r13];
	add.u32 	%r10, %r10, 1;
	bra.uni 	$L_LOOP;
$L_DONE:
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group 	0;
$L_END:
	ret;
"""
    return entry("probe_tma_store", [(".align 64 .b8", "[128]"), (".u32", ""), (".u32", ""), (".u32", "")], b, 32)


def k_bulk_load():
    b = lane0_only() + """	ld.param.u64 	%rd1, [probe_bulk_load_param_0];
	cvta.to.global.u64 	%rd1, %rd1;
	ld.param.u32 	%r1, [probe_bulk_load_param_1];
	ld.param.u32 	%r4, [probe_bulk_load_param_2];
	mbarrier.init.shared::cta.b64 	[%r3], 1;
	fence.mbarrier_init.release.cluster;
	mov.u32 	%r10, 0;
$L_LOOP:
	setp.ge.u32 	%p2, %r10, %r1;
	@%p2 bra 	$L_END;
	mbarrier.arrive.expect_tx.shared::cta.b64 	_, [%r3], %r4;
	mad.lo.u32 	%r13, %r10, %r4, %r2;
	mul.wide.u32 	%rd2, %r10, %r4;
	add.s64 	%rd3, %rd1, %rd2;
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes 	[%r13], [%rd3], %r4, [%r3];
	and.b32 	%r11, %r10, 1;
""" + wait_loop("A", "%r11") + """	add.u32 	%r10, %r10, 1;
	bra.uni 	$L_LOOP;
$L_END:
	ret;
"""
    return entry("probe_bulk_load", [(".u64", ""), (".u32", ""), (".u32", "")], b, 32)


LAYOUT = {"128": (1, 64), "64": (2, 32), "32": (3, 16), "0": (0, 16)}  # layout type, SBO >> 4


def k_wgmma(name, n, swz="128", trans_b=0, rs=False):
    lt, sbo = LAYOUT[swz]
    lbo = 8 if swz == "0" else 1
    hi = (lt << 62) | (sbo << 32) | (lbo << 16)
    nacc = n // 2
    acc = ", ".join(f"%f{i}" for i in range(nacc))
    zero = "\n".join(f"\tmov.f32 \t%f{i}, 0f00000000;" for i in range(nacc))
    if rs:
        aop = "{%r20, %r21, %r22, %r23}"
        instr = (f"\twgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 {{{acc}}}, {aop}, %rd11, %p6, 1, 1, {trans_b};")
        aregs = "\tmov.b32 \t%r20, 0;\n\tmov.b32 \t%r21, 0;\n\tmov.b32 \t%r22, 0;\n\tmov.b32 \t%r23, 0;\n"
    else:
        instr = (f"\twgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 {{{acc}}}, %rd10, %rd11, %p6, 1, 1, 0, {trans_b};")
        aregs = ""
    b = f"""	ld.param.u32 	%r1, [{name}_param_1];
	and.b32 	%r38, %r2, 262143;
	shr.u32 	%r38, %r38, 4;
	add.u32 	%r39, %r38, 512;
	cvt.u64.u32 	%rd10, %r38;
	cvt.u64.u32 	%rd11, %r39;
	or.b64 	%rd10, %rd10, {hi};
	or.b64 	%rd11, %rd11, {hi};
	setp.ne.u32 	%p6, %r1, 0;
{zero}
{aregs}	mov.u32 	%r10, 0;
$L_LOOP:
	setp.ge.u32 	%p2, %r10, %r1;
	@%p2 bra 	$L_DONE;
	wgmma.fence.sync.aligned;
{instr}
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 	0;
	add.u32 	%r10, %r10, 1;
	bra.uni 	$L_LOOP;
$L_DONE:
	ld.param.u64 	%rd20, [{name}_param_0];
	cvta.to.global.u64 	%rd20, %rd20;
	mul.wide.u32 	%rd21, %r0, 4;
	add.s64 	%rd22, %rd20, %rd21;
	st.global.f32 	[%rd22], %f0;
	ret;
"""
    return entry(name, [(".u64", ""), (".u32", "")], b, 128)


WGMMA = [("probe_wgmma_ss_n64", 64, "128", 0, False), ("probe_wgmma_ss_n128", 128, "128", 0, False),
         ("probe_wgmma_ss_n256", 256, "128", 0, False), ("probe_wgmma_ss_n64_sw0", 64, "0", 0, False),
         ("probe_wgmma_ss_n64_sw32", 64, "32", 0, False), ("probe_wgmma_ss_n64_sw64", 64, "64", 0, False),
         ("probe_wgmma_ss_n64_tb", 64, "128", 1, False), ("probe_wgmma_rs_n64", 64, "128", 0, True)]


def module():
    ks = [k_empty(), k_mbar(), k_mbar_tx(), k_tma_load(), k_tma_store(), k_bulk_load()]
    ks += [k_wgmma(*w) for w in WGMMA]
    return HDR + "".join(ks)


def tmap(index, box_cols, box_rows, swz):
    dims, strides = [64, 1024], [128]
    return {"index": index, "dtype": "f16", "data_type": 6, "rank": 2, "dims": dims, "strides_bytes": strides,
            "box": [box_cols, box_rows], "element_strides": [1, 1], "interleave": "none", "swizzle": swz,
            "swizzle_enum": {"none": 0, "32B": 1, "64B": 2, "128B": 3}[swz], "l2_promotion": "128B",
            "oob_fill": "none (zeros)", "buffer": "its own buffer of 16 MiB, zero-filled (the harness allocates it)",
            "cli": f"{index}=f16:64,1024:128:{box_cols},{box_rows}:{swz}"}


def launches(ptx_name):
    L = []

    def add(name, kernel, block, smem, params, maps=(), note=""):
        L.append({"name": name, "ptx": ptx_name, "kernel": kernel, "grid": [1, 1, 1], "block": [block, 1, 1],
                  "dynamic_smem_bytes": smem, "params": params, "tensor_maps": list(maps), "note": note})

    ptr = {"type": ".u64", "value": "pointer"}
    u32 = lambda v: {"type": ".u32", "value": v}  # noqa: E731
    tm = {"type": ".b8[128]", "value": "tensor_map", "align": 64}
    add("probe_empty", "probe_empty", 128, 0, [ptr], note="baseline: 4 warps, no work")
    for n in (1, 4):
        add(f"probe_mbar_n{n}", "probe_mbar", 128, 0, [ptr, u32(n)], note=f"{n} mbarrier phases, 128 arrivals each")
        add(f"probe_mbar_tx_n{n}", "probe_mbar_tx", 32, 0, [ptr, u32(n)],
            note=f"{n} phases of expect_tx/complete_tx/arrive by one thread")
    boxes = [("none", 64, 64), ("32B", 16, 64), ("64B", 32, 64), ("128B", 64, 64), ("128B", 64, 128)]
    for swz, bc, br in boxes:
        nb = bc * br * 2
        for n in ((1, 4) if br == 64 else (1,)):
            add(f"probe_tma_load_{swz}_{bc}x{br}_n{n}", "probe_tma_load", 32, 4 * 16384 + 1024,
                [tm, u32(n), u32(nb), u32(br)], [tmap(0, bc, br, swz)],
                note=f"{n} TMA load boxes of {bc} x {br} f16 ({nb} bytes), swizzle {swz}")
    for swz in ("128B", "none"):
        for n in ((1, 4) if swz == "128B" else (1,)):
            add(f"probe_tma_store_{swz}_64x64_n{n}", "probe_tma_store", 32, 4 * 16384 + 1024,
                [tm, u32(n), u32(8192), u32(64)], [tmap(0, 64, 64, swz)],
                note=f"{n} TMA store boxes of 64 x 64 f16 (8192 bytes), swizzle {swz}")
    for n in (1, 4):
        add(f"probe_bulk_load_8192_n{n}", "probe_bulk_load", 32, 4 * 16384 + 1024, [ptr, u32(n), u32(8192)],
            note=f"{n} cp.async.bulk (no tensor map) of 8192 bytes into shared memory")
    for name, nn, swz, tb, rs in WGMMA:
        for n in ((1, 4) if swz == "128" and not tb else (1,)):
            add(f"{name}_x{n}", name, 128, 40960 + 1024, [ptr, u32(n)],
                note=f"{n} x wgmma m64n{nn}k16 f32.f16.f16, {'A registers' if rs else 'A descriptor'}, B descriptor, "
                     f"swizzle {swz if swz != '0' else 'none'}{', B MN-major' if tb else ''}")
    for l in L:
        for i, p in enumerate(l["params"]):
            p["name"] = f"{l['kernel']}_param_{i}"
    return L


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    open(os.path.join(out, "hopper_probes.ptx"), "w").write(module())
    json.dump(launches("hopper_probes.ptx"), open(os.path.join(out, "probes.launch.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
