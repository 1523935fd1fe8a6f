#!/usr/bin/env bash
# Writes the wgmma case file the probe harness reads (one case per line:
# name N dtype src ta tb kblocks smem_bytes descA0 descB0 descA1 descB1 ...), every descriptor
# built by `tilelab sim wgmma --json`. Usage: scripts/research/hopper/make_wgmma_cases.sh TILELAB > cases.txt
# With ARGS=1 it prints each case's name and `tilelab sim wgmma` arguments instead.
set -euo pipefail
T=${1:-target/debug/tilelab}
case_line() {  # name, then tilelab sim wgmma arguments
  local name=$1; shift
  if [ -n "${ARGS:-}" ]; then echo "$name $*"; return; fi
  "$T" sim wgmma "$@" --json | python3 -c '
import json, sys
name, args = sys.argv[1], sys.argv[2:]
r = json.load(sys.stdin)
assert r["check"]["max_abs_error"] == 0, name
src = "rs" if r["a"] is None else "ss"
ta = 1 if (r["a"] and r["a"]["major"] == "MN-major") else 0
tb = 1 if r["b"]["major"] == "MN-major" else 0
d = []
for kb in r["descriptors"]:
    d += [kb["a"]["hex"] if kb["a"] else "0x0", kb["b"]["hex"]]
print(name, r["n"], r["dtype"], src, ta, tb, len(r["descriptors"]), r["smem_bytes"], " ".join(x[2:] for x in d))
' "$name" "$@"
}
for sw in none 32B 64B 128B; do
  for ma in k mn; do
    for mb in k mn; do
      case_line "n64.$ma$mb.$sw" --n 64 --major-a $ma --major-b $mb --swizzle $sw --k 64
    done
  done
done
for n in 8 24; do
  for sw in none 32B 64B 128B; do case_line "n$n.kk.$sw" --n $n --major k --swizzle $sw --k 64; done
  case_line "n$n.mnmn.none" --n $n --major mn --swizzle none --k 32
done
for n in 128 256; do
  case_line "n$n.kk.128B" --n $n --major k --swizzle 128B --k 64
  case_line "n$n.kmn.128B" --n $n --major-a k --major-b mn --swizzle 128B --k 64
  case_line "n$n.mnmn.64B" --n $n --major mn --swizzle 64B --k 32
done
case_line "n64.kk.none.korder" --n 64 --major k --swizzle none --k 64 --order k
case_line "n64.mnmn.none.korder" --n 64 --major mn --swizzle none --k 64 --order k
case_line "n64.mnmn.32B.korder" --n 64 --major mn --swizzle 32B --k 64 --order k
case_line "n64.kk.128B.korder" --n 64 --major k --swizzle 128B --k 128 --order k
case_line "bf16.n64.kk.128B" --n 64 --major k --swizzle 128B --k 64 --dtype bf16
case_line "bf16.n64.mnmn.128B" --n 64 --major mn --swizzle 128B --k 64 --dtype bf16
case_line "rs.n64.k.128B" --n 64 --major k --swizzle 128B --k 64 --a-regs
case_line "rs.n64.mn.128B" --n 64 --major mn --swizzle 128B --k 64 --a-regs
case_line "rs.n256.k.128B" --n 256 --major k --swizzle 128B --k 64 --a-regs
case_line "rs.n8.k.none" --n 8 --major k --swizzle none --k 32 --a-regs
case_line "rs.n8.mn.none" --n 8 --major mn --swizzle none --k 32 --a-regs
