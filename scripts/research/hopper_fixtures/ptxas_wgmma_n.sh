#!/usr/bin/env bash
# Which N does ptxas accept for the integer wgmma form m64nNk32.s32.s8.s8 (sm_90a)?
# Compiles one small kernel per N in 8..256 (steps of 8) and prints the accepted N, one line.
# Usage: PTXAS=.../ptxas bash scripts/research/hopper_fixtures/ptxas_wgmma_n.sh > tests/data/hopper_probes/ptxas_wgmma_integer_n.txt
set -euo pipefail
PTXAS=${PTXAS:-ptxas}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ok=""
for n in $(seq 8 8 256); do
  nreg=$((n / 2))
  regs=$(seq -s, -f '%%r%g' 0 $((nreg - 1)))
  cat > "$dir/k$n.ptx" <<PTX
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p){
.reg .b32 %r<$((nreg + 1))>;
.reg .b64 %rd<3>;
ld.param.u64 %rd1,[p];
mov.b64 %rd2, 0;
wgmma.fence.sync.aligned;
wgmma.mma_async.sync.aligned.m64n${n}k32.s32.s8.s8 {$regs}, %rd2, %rd2, 0;
wgmma.commit_group.sync.aligned;
wgmma.wait_group.sync.aligned 0;
st.global.b32 [%rd1], %r0;
ret;
}
PTX
  if "$PTXAS" -arch=sm_90a "$dir/k$n.ptx" -o "$dir/k$n.cubin" 2>/dev/null; then ok="$ok $n"; fi
done
echo "# $("$PTXAS" --version | tail -1); accepted N of wgmma.mma_async m64nNk32.s32.s8.s8, sm_90a"
echo "${ok# }"
