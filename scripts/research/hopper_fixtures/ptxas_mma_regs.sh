#!/usr/bin/env bash
# Which register types ptxas accepts for each operand (D, A, B, C) of the mma.sync forms the PTX
# engine runs: each form is compiled with one operand's registers declared .b32, .u32, .s32,
# .f32 or .f16x2 (the others keep the ISA's own types). One line per case, tab-separated:
#   form  operand  type  instruction  OK|REFUSED
# Usage: PTXAS=.../ptxas bash scripts/research/hopper_fixtures/ptxas_mma_regs.sh > tests/data/hopper_probes/ptxas_mma_regs.tsv
set -euo pipefail
PTXAS=${PTXAS:-ptxas}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
prefix() { case $1 in b32) echo r;; u32) echo u;; s32) echo s;; f32) echo f;; f16x2) echo h;; esac; }
vec() { # vec TYPE FIRST COUNT
  local p; p=$(prefix "$1"); local out=""
  for ((k = $2; k < $2 + $3; k++)); do out="$out${out:+, }%$p$k"; done
  echo "{$out}"
}
forms=(
  "m16n8k16.row.col.f32.f16.f16.f32 f32 4 4 2"
  "m16n8k16.row.col.f16.f16.f16.f16 f16x2 2 4 2"
  "m16n8k16.row.col.f32.bf16.bf16.f32 f32 4 4 2"
  "m16n8k8.row.col.f32.tf32.tf32.f32 f32 4 4 2"
  "m16n8k16.row.col.s32.s8.s8.s32 s32 4 2 1"
  "m16n8k32.row.col.f32.e4m3.e4m3.f32 f32 4 4 2"
  "m16n8k32.row.col.f16.e5m2.e4m3.f16 f16x2 2 4 2"
)
echo "# $("$PTXAS" --version | tail -1); .version 8.7 .target sm_90"
for f in "${forms[@]}"; do
  read -r form acc ncd na nb <<<"$f"
  for operand in D A B C; do
    for ty in b32 u32 s32 f32 f16x2; do
      td=$acc; ta=b32; tb=b32; tc=$acc
      case $operand in D) td=$ty;; A) ta=$ty;; B) tb=$ty;; C) tc=$ty;; esac
      inst="mma.sync.aligned.$form $(vec $td 1 $ncd), $(vec $ta 5 $na), $(vec $tb 9 $nb), $(vec $tc 11 $ncd);"
      printf '.version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %%r<16>;\n.reg .u32 %%u<16>;\n.reg .s32 %%s<16>;\n.reg .f32 %%f<16>;\n.reg .f16x2 %%h<16>;\n%s\nret;\n}\n' "$inst" > "$dir/k.ptx"
      if "$PTXAS" -arch=sm_90 "$dir/k.ptx" -o "$dir/k.cubin" > "$dir/log" 2>&1; then r=OK; else r=REFUSED; fi
      printf '%s\t%s\t%s\t%s\t%s\n' "$form" "$operand" "$ty" "$inst" "$r"
    done
  done
done
