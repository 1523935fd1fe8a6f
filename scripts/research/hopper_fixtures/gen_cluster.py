#!/usr/bin/env python3
"""Write the hand-written cluster PTX of tests/data/ptx_hopper/: a cluster of 2 CTAs sharing one
TMA multicast box, each CTA's consumer warpgroup running wgmma on it, a distributed-shared-memory
exchange and barrier.cluster (hand_cluster_mc_wgmma.ptx).

    python3 scripts/research/hopper_fixtures/gen_cluster.py OUTDIR

Kernel `cluster_mc_wgmma(map_a, map_bt, c, x)`, 128 threads per CTA (one warpgroup), launched as
one cluster of 2 x 1 x 1 CTAs (grid 2 x 1 x 1; no cluster directive: the launch names the
cluster, cuLaunchKernelEx's CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, tilelab's --cluster 2,1,1).
C[64][128] (f32, row-major) = A[64][64] . Bt[128][64]^T, A and Bt f16 row-major (K-major); CTA of
cluster rank r computes columns 64 r .. 64 r + 63. Tensor maps (cuTensorMapEncodeTiled): f16,
A dims {64, 64}, Bt dims {64, 128}, stride {128 bytes}, box {64, 64}, CU_TENSOR_MAP_SWIZZLE_128B.
Shared memory per CTA: dynamic [A tile | B tile] (8192 bytes each) from the first 1024-byte
aligned address (dynamic size 16384 + 1024 = 17408); static full (count 1), xbar (count 128),
xchg[128] (f32).
1. Thread 0 of each CTA initialises full and xbar, fence.mbarrier_init.release.cluster; every
   thread barrier.cluster.arrive.release / wait.acquire (the peer's mbarriers exist before the
   multicast or a remote arrive reaches them).
2. Thread 0 of each CTA: mbarrier.arrive.expect_tx full, 16384 (its B box and the A box), a
   cp.async.bulk.tensor.2d of its own B rows {0, 64 r} into B; thread 0 of rank 0 also the A box
   {0, 0} with .multicast::cluster and ctaMask 0b11: the box lands at the same offset in both CTAs
   and completes 8192 bytes on each CTA's full (PTX ISA 9.7.9.25.5.1 cp.async.bulk.tensor).
3. Every thread: mbarrier.try_wait.parity full (parity 0); wgmma.fence, 4 wgmma.mma_async.m64n64k16
   .f32.f16.f16 (k step kk: descriptors + 32 kk bytes; 128B swizzle (1 << 62) | SBO 1024 B
   (64 << 32) | LBO 16 B (1 << 16) | addr >> 4), commit_group, wait_group 0.
4. Exchange: thread t sends its d0 to xchg[t] of the peer (mapa.shared::cluster to rank r ^ 1,
   st.shared::cluster.f32), then arrives remotely on the peer's xbar
   (mbarrier.arrive.release.cluster.shared::cluster.b64), waits on its own xbar (parity 0) and
   writes the received xchg[t] to X[r][t] (X: f32 [2][128]).
5. C: each thread stores its 32 accumulators (16 st.global.v2.f32), d[4j + h] at row 16 w + lane / 4
   + 8 (h / 2), column 64 r + 8 j + 2 (lane % 4) + h % 2 (PTX ISA, wgmma D fragment, m64nNk16 f32);
   then barrier.cluster.arrive.release / wait.acquire before exit (no CTA leaves while its shared
   memory may still be written by the peer).
So X[r][t] = C[16 w + lane / 4][64 (r ^ 1) + 2 (lane % 4)] with t = 32 w + lane.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_handwritten import DESC_HI, accumulator_parts  # noqa: E402


def cluster_ptx():
    f, zero, mma, st = accumulator_parts(1, 4096)
    return f"""//
// Hand-written for tilelab's fixtures (scripts/research/hopper_fixtures/gen_cluster.py): a cluster of 2
// CTAs; rank 0 multicasts the A box (TMA .multicast::cluster, ctaMask 0b11) into both, each loads
// its own B box, each CTA's warpgroup runs wgmma on them; a distributed-shared-memory exchange
// (mapa, st.shared::cluster, remote mbarrier arrive) and barrier.cluster before exit.
// C[64][128] f32 = A[64][64] . Bt[128][64]^T, f16 inputs, 128B swizzle; X[2][128] f32.
//
.version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 dsmem[];
.shared .align 8 .b64 full_bar;
.shared .align 8 .b64 xchg_bar;
.shared .align 16 .b32 xchg[128];

.visible .entry cluster_mc_wgmma(
	.param .align 64 .b8 cluster_mc_wgmma_param_0[128],
	.param .align 64 .b8 cluster_mc_wgmma_param_1[128],
	.param .u64 cluster_mc_wgmma_param_2,
	.param .u64 cluster_mc_wgmma_param_3
)
.reqntid 128, 1, 1
{{
	.reg .pred 	%p<8>;
	.reg .b16 	%rs<4>;
	.reg .b32 	%r<64>;
	.reg .b64 	%rd<32>;
	.reg .f32 	%f<40>;

	mov.u32 	%r0, %tid.x;
	mov.u32 	%r1, %cluster_ctarank;
	mov.u32 	%r2, dsmem;
	add.u32 	%r2, %r2, 1023;
	and.b32 	%r2, %r2, -1024;
	mov.u32 	%r3, full_bar;
	mov.u32 	%r4, xchg_bar;
	mov.u32 	%r5, xchg;
	setp.ne.u32 	%p0, %r0, 0;
	@%p0 bra 	$L_INIT_DONE;
	mbarrier.init.shared::cta.b64 	[%r3], 1;
	mbarrier.init.shared::cta.b64 	[%r4], 128;
	fence.mbarrier_init.release.cluster;
$L_INIT_DONE:
	barrier.cluster.arrive.release.aligned;
	barrier.cluster.wait.acquire.aligned;
	@%p0 bra 	$L_LOADS_DONE;
	mov.b64 	%rd1, cluster_mc_wgmma_param_0;
	mov.b64 	%rd2, cluster_mc_wgmma_param_1;
	cvta.param.u64 	%rd1, %rd1;
	cvta.param.u64 	%rd2, %rd2;
	mbarrier.arrive.expect_tx.shared::cta.b64 	_, [%r3], 16384;
	mov.u32 	%r6, 0;
	shl.b32 	%r7, %r1, 6;
	add.u32 	%r8, %r2, 8192;
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes 	[%r8], [%rd2, {{%r6, %r7}}], [%r3];
	setp.ne.u32 	%p1, %r1, 0;
	@%p1 bra 	$L_LOADS_DONE;
	mov.u16 	%rs1, 3;
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster 	[%r2], [%rd1, {{%r6, %r6}}], [%r3], %rs1;
$L_LOADS_DONE:
{zero}
	mov.u32 	%r9, 0;
$L_WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 	%p2, [%r3], %r9;
	@!%p2 bra 	$L_WAIT;
	and.b32 	%r38, %r2, 262143;
	shr.u32 	%r38, %r38, 4;
	add.u32 	%r37, %r2, 8192;
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
	// exchange: d0 to the peer's xchg[tid], then a remote arrive on the peer's xbar
	xor.b32 	%r10, %r1, 1;
	shl.b32 	%r11, %r0, 2;
	add.u32 	%r12, %r5, %r11;
	mapa.shared::cluster.u32 	%r13, %r12, %r10;
	st.shared::cluster.f32 	[%r13], %f0;
	mapa.shared::cluster.u32 	%r14, %r4, %r10;
	mbarrier.arrive.release.cluster.shared::cluster.b64 	_, [%r14];
$L_XWAIT:
	mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 	%p3, [%r4], %r9;
	@!%p3 bra 	$L_XWAIT;
	ld.shared::cta.f32 	%f32, [%r12];
	ld.param.u64 	%rd23, [cluster_mc_wgmma_param_3];
	cvta.to.global.u64 	%rd23, %rd23;
	shl.b32 	%r15, %r1, 7;
	add.u32 	%r15, %r15, %r0;
	mul.wide.u32 	%rd24, %r15, 4;
	add.s64 	%rd25, %rd23, %rd24;
	st.global.f32 	[%rd25], %f32;
	// C
	shr.u32 	%r41, %r0, 5;
	and.b32 	%r42, %r0, 31;
	shr.u32 	%r43, %r42, 2;
	and.b32 	%r44, %r42, 3;
	shl.b32 	%r45, %r41, 4;
	add.u32 	%r45, %r45, %r43;
	shl.b32 	%r46, %r44, 1;
	shl.b32 	%r48, %r1, 6;
	add.u32 	%r46, %r46, %r48;
	mad.lo.u32 	%r47, %r45, 128, %r46;
	ld.param.u64 	%rd20, [cluster_mc_wgmma_param_2];
	cvta.to.global.u64 	%rd20, %rd20;
	mul.wide.u32 	%rd21, %r47, 4;
	add.s64 	%rd22, %rd20, %rd21;
{st}
	barrier.cluster.arrive.release.aligned;
	barrier.cluster.wait.acquire.aligned;
	ret;
}}
"""


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    open(os.path.join(out, "hand_cluster_mc_wgmma.ptx"), "w").write(cluster_ptx())


if __name__ == "__main__":
    main()
