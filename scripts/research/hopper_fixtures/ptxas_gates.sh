#!/usr/bin/env bash
# The oldest .version and .target ptxas accepts for each instruction form the PTX engine gates
# (crates/tilelab-core/src/sim/isa/instr.rs GATES). Each form is compiled under three headers:
#   .version 6.3 .target sm_75  -> ptxas names the PTX ISA version each feature needs,
#   .version 9.0 .target sm_75  -> ptxas names the target each feature needs,
#   .version 9.0 .target sm_90  -> ptxas refuses the sm_90a-only forms on plain sm_90,
# and one line per (form, header) is printed, tab-separated:
#   name  version  target  instruction  ptxas's error lines (joined by " / "; "OK" if none)
# Usage: PTXAS=.../ptxas bash scripts/research/hopper_fixtures/ptxas_gates.sh > tests/data/hopper_probes/ptxas_gates.tsv
set -euo pipefail
PTXAS=${PTXAS:-ptxas}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
forms=(
'stmatrix	.reg .b32 %r<8>; .reg .b64 %rd<4>;	stmatrix.sync.aligned.m8n8.x4.shared.b16 [%rd1], {%r1, %r2, %r3, %r4};'
'ldmatrix	.reg .b32 %r<8>; .reg .b64 %rd<4>;	ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%rd1];'
'elect	.reg .b32 %r<8>; .reg .pred %p<4>;	elect.sync %r1|%p1, 0xffffffff;'
'wgmma_fence		wgmma.fence.sync.aligned;'
'wgmma_commit		wgmma.commit_group.sync.aligned;'
'wgmma_wait		wgmma.wait_group.sync.aligned 0;'
'setmaxnreg		setmaxnreg.inc.sync.aligned.u32 240;'
'fence_proxy_async		fence.proxy.async.shared::cta;'
'fence_proxy_alias		fence.proxy.alias;'
'fence_cluster		fence.acq_rel.cluster;'
'fence_mbarrier_init		fence.mbarrier_init.release.cluster;'
'cp_async_bulk_commit		cp.async.bulk.commit_group;'
'cp_async_bulk_wait		cp.async.bulk.wait_group 0;'
'cp_async_bulk	.reg .b64 %rd<4>;	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd1], [%rd2], 16, [%rd3];'
'cp_async_bulk_tensor	.reg .b64 %rd<4>; .reg .b32 %r<4>;	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%rd1], [%rd2, {%r1, %r2}], [%rd3];'
'cp_reduce_async_bulk	.reg .b64 %rd<4>;	cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%rd2], 16;'
'cp_async	.reg .b64 %rd<4>;	cp.async.ca.shared.global [%rd1], [%rd2], 4;'
'cp_async_commit		cp.async.commit_group;'
'cp_async_wait		cp.async.wait_group 0;'
'mbarrier_init	.reg .b64 %rd<4>; .reg .b32 %r<4>;	mbarrier.init.shared.b64 [%rd1], %r1;'
'mbarrier_arrive	.reg .b64 %rd<4>;	mbarrier.arrive.shared.b64 %rd2, [%rd1];'
'mbarrier_test_wait_parity	.reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %p<4>;	mbarrier.test_wait.parity.shared.b64 %p1, [%rd1], %r1;'
'mbarrier_try_wait	.reg .b64 %rd<4>; .reg .pred %p<4>;	mbarrier.try_wait.shared::cta.b64 %p1, [%rd1], %rd2;'
'mbarrier_try_wait_parity_acquire	.reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %p<4>;	mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p1, [%rd1], %r1;'
'mbarrier_try_wait_parity_relaxed	.reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %p<4>;	mbarrier.try_wait.parity.relaxed.cta.shared::cta.b64 %p1, [%rd1], %r1;'
'mbarrier_arrive_release	.reg .b64 %rd<4>;	mbarrier.arrive.release.cluster.shared::cta.b64 %rd2, [%rd1];'
'mbarrier_arrive_expect_tx	.reg .b64 %rd<4>; .reg .b32 %r<4>;	mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%rd1], %r1;'
'mbarrier_expect_tx	.reg .b64 %rd<4>; .reg .b32 %r<4>;	mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%rd1], %r1;'
'mbarrier_complete_tx	.reg .b64 %rd<4>; .reg .b32 %r<4>;	mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%rd1], %r1;'
'griddepcontrol		griddepcontrol.wait;'
'barrier_cluster		barrier.cluster.arrive;'
'barrier_cluster_release		barrier.cluster.arrive.release;'
'mapa	.reg .b64 %rd<4>; .reg .b32 %r<4>;	mapa.shared::cluster.u64 %rd2, %rd1, %r1;'
'redux	.reg .b32 %r<4>;	redux.sync.add.s32 %r1, %r2, 0xffffffff;'
'prefetch_tensormap	.reg .b64 %rd<4>;	prefetch.tensormap [%rd1];'
'tensormap_replace	.reg .b64 %rd<4>;	tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;'
'tensormap_cp_fenceproxy	.reg .b64 %rd<4>;	tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%rd2], 128;'
'mma_e4m3	.reg .b32 %r<8>; .reg .f32 %f<8>;	mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};'
'mma_e5m2_f16	.reg .b32 %r<12>;	mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e4m3.f16 {%r9, %r10}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%r9, %r10};'
'mma_tf32	.reg .b32 %r<8>; .reg .f32 %f<8>;	mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};'
'mma_bf16	.reg .b32 %r<8>; .reg .f32 %f<8>;	mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2}, {%r5}, {%f1, %f2, %f3, %f4};'
'mma_f16_k16	.reg .b32 %r<8>; .reg .f32 %f<8>;	mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};'
'mma_f16_k8	.reg .b32 %r<8>; .reg .f32 %f<8>;	mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2}, {%r5}, {%f1, %f2, %f3, %f4};'
'mma_s8_k32	.reg .b32 %r<12>;	mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r1, %r2, %r3, %r4}, {%r5, %r6, %r8, %r9}, {%r7, %r10}, {%r1, %r2, %r3, %r4};'
)
echo "# $("$PTXAS" --version | tail -1)"
for f in "${forms[@]}"; do
  name=${f%%$'\t'*}; rest=${f#*$'\t'}; regs=${rest%%$'\t'*}; inst=${rest#*$'\t'}
  for vt in "6.3 sm_75" "9.0 sm_75" "9.0 sm_90"; do
    read -r v t <<<"$vt"
    printf '.version %s\n.target %s\n.address_size 64\n.visible .entry k()\n{\n%s\n%s\nret;\n}\n' "$v" "$t" "$regs" "$inst" > "$dir/k.ptx"
    msgs=$("$PTXAS" -arch="$t" "$dir/k.ptx" -o "$dir/k.cubin" 2>&1 | grep 'error' | grep -v 'fatal' | sed 's/^ptxas [^;]*; error *: //' | paste -sd'#' | sed 's/#/ \/ /g' || true)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$v" "$t" "$regs" "$inst" "${msgs:-OK}"
  done
done
