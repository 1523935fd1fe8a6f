#!/usr/bin/env python3
"""Write the hand-written PTX of tests/data/ptx_hopper/: a two-stage TMA -> mbarrier -> wgmma
pipeline with a producer warp (hand_tma_wgmma_pipe.ptx).

    python3 scripts/research/hopper_fixtures/gen_handwritten.py OUTDIR

Kernel `tma_wgmma_pipe(map_a, map_b, c, ktiles)`, 160 threads (warps 0-3: the consumer
warpgroup, warp 4: the producer), C[64][64] (f32, row-major) = A[64][K] . Bt[64][K]^T with A and Bt
f16 row-major (both K-major), K = 64 * ktiles. Tensor maps (cuTensorMapEncodeTiled): f16, dims
{K, 64}, stride {2K bytes}, box {64, 64}, CU_TENSOR_MAP_SWIZZLE_128B: one box is a 64 x 64 tile
(8192 bytes, rows 128 bytes apart, 16-byte chunk c of row r at chunk c ^ (r % 8)).
Shared memory: dynamic, 2 stages of [A tile | B tile] (16384 bytes each) from the first
1024-byte aligned address (dynamic size 2 * 16384 + 1024 = 33792); static: full[2] (count 1:
the producer's arrive.expect_tx of 16384 bytes, completed by the two boxes' complete_tx) and
empty[2] (count 128: every consumer thread arrives when its wgmma of the stage completed).
Producer: the maps' generic addresses (mov.b64 of the .param, cvta.param.u64, as nvcc does
for a __grid_constant__ CUtensorMap); elect.sync one lane; for kt: wait empty[kt % 2] (parity (kt / 2 + 1) & 1) when kt >= 2,
mbarrier.arrive.expect_tx full[kt % 2], two cp.async.bulk.tensor.2d (UTMALDG.2D) at {64 kt, 0}.
Consumer: for kt: mbarrier.try_wait.parity full[kt % 2] (parity (kt / 2) & 1) in a loop,
wgmma.fence, 4 wgmma.mma_async.m64n64k16.f32.f16.f16 (k step kk: both descriptors + 32 kk bytes;
descriptor = 128B swizzle (1 << 62) | SBO 1024 B (64 << 32) | LBO 16 B (1 << 16) | addr >> 4),
commit_group, wait_group 0, mbarrier.arrive empty[kt % 2]. Then each thread stores its 32
accumulators (16 st.global.v2.f32): d[4j + h] at row 16 w + lane / 4 + 8 (h / 2), column
8 j + 2 (lane % 4) + h % 2 (PTX ISA, wgmma D fragment for m64nNk16, f32).
"""
import os
import sys

DESC_HI = (1 << 62) | (64 << 32) | (1 << 16)


def accumulator_parts(scale_d, half_bytes):
    """The PTX of a consumer warpgroup's m64n64k16 f32 accumulator (32 registers %f0..%f31), shared
    with gen_cluster.py: (the register list, their zeroing, four wgmma k-steps from descriptors
    %rd10/%rd11 (each step 2 descriptor units = 32 bytes further) with predicate or constant
    `scale_d`, and the 16 st.global.v2.f32 of the fragment into rows of C at %rd22, the second
    half `half_bytes` after the first)."""
    f = ", ".join(f"%f{i}" for i in range(32))
    zero = "\n".join(f"\tmov.f32 \t%f{i}, 0f00000000;" for i in range(32))
    mma = []
    for kk in range(4):
        if kk == 0:
            da, db = "%rd10", "%rd11"
        else:
            da, db = f"%rd{10 + 2 * kk}", f"%rd{11 + 2 * kk}"
            mma.append(f"\tadd.s64 \t{da}, %rd10, {2 * kk};\n\tadd.s64 \t{db}, %rd11, {2 * kk};")
        mma.append(f"\twgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{f}}}, {da}, {db}, {scale_d}, 1, 1, 0, 0;")
    mma = "\n".join(mma)
    st = []
    for j in range(8):
        st.append(f"\tst.global.v2.f32 \t[%rd22+{32 * j}], {{%f{4 * j}, %f{4 * j + 1}}};")
        st.append(f"\tst.global.v2.f32 \t[%rd22+{half_bytes + 32 * j}], {{%f{4 * j + 2}, %f{4 * j + 3}}};")
    return f, zero, mma, "\n".join(st)


def pipe_ptx():
    f, zero, mma, st = accumulator_parts("%p6", 2048)
    return f"""//
// Hand-written for tilelab's fixtures (scripts/research/hopper_fixtures/gen_handwritten.py): a two-stage
// TMA -> mbarrier -> wgmma pipeline, one producer warp (warp 4) and one consumer warpgroup
// (warps 0-3). C[64][64] f32 = A[64][64*ktiles] . Bt[64][64*ktiles]^T, f16 inputs, 128B swizzle.
//
.version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 dsmem[];
.shared .align 8 .b64 full_bar[2];
.shared .align 8 .b64 empty_bar[2];

.visible .entry tma_wgmma_pipe(
	.param .align 64 .b8 tma_wgmma_pipe_param_0[128],
	.param .align 64 .b8 tma_wgmma_pipe_param_1[128],
	.param .u64 tma_wgmma_pipe_param_2,
	.param .u32 tma_wgmma_pipe_param_3
)
.reqntid 160, 1, 1
{{
	.reg .pred 	%p<8>;
	.reg .b32 	%r<64>;
	.reg .b64 	%rd<32>;
	.reg .f32 	%f<32>;

	mov.u32 	%r0, %tid.x;
	ld.param.u32 	%r1, [tma_wgmma_pipe_param_3];
	mov.u32 	%r2, dsmem;
	add.u32 	%r2, %r2, 1023;
	and.b32 	%r2, %r2, -1024;
	mov.u32 	%r3, full_bar;
	mov.u32 	%r4, empty_bar;
	setp.ne.u32 	%p0, %r0, 0;
	@%p0 bra 	$L_INIT_DONE;
	mbarrier.init.shared::cta.b64 	[%r3], 1;
	mbarrier.init.shared::cta.b64 	[%r3+8], 1;
	mbarrier.init.shared::cta.b64 	[%r4], 128;
	mbarrier.init.shared::cta.b64 	[%r4+8], 128;
	fence.mbarrier_init.release.cluster;
$L_INIT_DONE:
	bar.sync 	0;
	setp.ge.u32 	%p1, %r0, 128;
	@%p1 bra 	$L_PRODUCER;

	// consumer warpgroup
{zero}
	setp.ne.u32 	%p6, %r1, 0;
	mov.u32 	%r30, 0;
$L_CONS_LOOP:
	setp.ge.u32 	%p3, %r30, %r1;
	@%p3 bra 	$L_CONS_DONE;
	and.b32 	%r31, %r30, 1;
	shr.u32 	%r32, %r30, 1;
	and.b32 	%r32, %r32, 1;
	shl.b32 	%r33, %r31, 3;
	add.u32 	%r34, %r3, %r33;
$L_CONS_WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 	%p4, [%r34], %r32;
	@!%p4 bra 	$L_CONS_WAIT;
	shl.b32 	%r35, %r31, 14;
	add.u32 	%r36, %r2, %r35;
	add.u32 	%r37, %r36, 8192;
	and.b32 	%r38, %r36, 262143;
	shr.u32 	%r38, %r38, 4;
	and.b32 	%r39, %r37, 262143;
	shr.u32 	%r39, %r39, 4;
	cvt.u64.u32 	%rd10, %r38;
	cvt.u64.u32 	%rd11, %r39;
	or.b64 	%rd10, %rd10, {DESC_HI};
	or.b64 	%rd11, %rd11, {DESC_HI};
	wgmma.fence.sync.aligned;
{mma}
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 	0;
	add.u32 	%r40, %r4, %r33;
	mbarrier.arrive.shared::cta.b64 	_, [%r40];
	add.u32 	%r30, %r30, 1;
	bra.uni 	$L_CONS_LOOP;
$L_CONS_DONE:
	shr.u32 	%r41, %r0, 5;
	and.b32 	%r42, %r0, 31;
	shr.u32 	%r43, %r42, 2;
	and.b32 	%r44, %r42, 3;
	shl.b32 	%r45, %r41, 4;
	add.u32 	%r45, %r45, %r43;
	shl.b32 	%r46, %r44, 1;
	mad.lo.u32 	%r47, %r45, 64, %r46;
	ld.param.u64 	%rd20, [tma_wgmma_pipe_param_2];
	cvta.to.global.u64 	%rd20, %rd20;
	mul.wide.u32 	%rd21, %r47, 4;
	add.s64 	%rd22, %rd20, %rd21;
{st}
	ret;

	// producer warp
$L_PRODUCER:
	mov.b64 	%rd1, tma_wgmma_pipe_param_0;
	mov.b64 	%rd2, tma_wgmma_pipe_param_1;
	cvta.param.u64 	%rd1, %rd1;
	cvta.param.u64 	%rd2, %rd2;
	elect.sync 	%r10|%p2, -1;
	@!%p2 bra 	$L_PROD_DONE;
	mov.u32 	%r11, 0;
	mov.u32 	%r21, 0;
$L_PROD_LOOP:
	setp.ge.u32 	%p3, %r11, %r1;
	@%p3 bra 	$L_PROD_DONE;
	and.b32 	%r12, %r11, 1;
	shl.b32 	%r14, %r12, 3;
	setp.lt.u32 	%p4, %r11, 2;
	@%p4 bra 	$L_PROD_ISSUE;
	shr.u32 	%r13, %r11, 1;
	add.u32 	%r13, %r13, 1;
	and.b32 	%r13, %r13, 1;
	add.u32 	%r15, %r4, %r14;
$L_PROD_WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 	%p5, [%r15], %r13;
	@!%p5 bra 	$L_PROD_WAIT;
$L_PROD_ISSUE:
	add.u32 	%r16, %r3, %r14;
	mbarrier.arrive.expect_tx.shared::cta.b64 	_, [%r16], 16384;
	shl.b32 	%r17, %r12, 14;
	add.u32 	%r18, %r2, %r17;
	add.u32 	%r19, %r18, 8192;
	shl.b32 	%r20, %r11, 6;
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes 	[%r18], [%rd1, {{%r20, %r21}}], [%r16];
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes 	[%r19], [%rd2, {{%r20, %r21}}], [%r16];
	add.u32 	%r11, %r11, 1;
	bra.uni 	$L_PROD_LOOP;
$L_PROD_DONE:
	ret;
}}
"""


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    open(os.path.join(out, "hand_tma_wgmma_pipe.ptx"), "w").write(pipe_ptx())


if __name__ == "__main__":
    main()
