#!/bin/bash
# The folder the device call carries (an ignored folder of the checkout the device tool sends):
#   bash scripts/research/hopper_fixtures/stage.sh DEST [CUTLASS_DIR] [CUTE_BIN_DIR]
# DEST gets scripts/research/{ptx_fixtures,hopper_fixtures}, tests/data/{ptx_hopper,hopper_probes},
# launches_fix.json (every fixture launch, paths relative to DEST), launches_probe.json, COMMIT,
# cutlass/ (include, tools/util/include and examples/cute/tutorial of CUTLASS_DIR) and cute_bin/.
set -eu
DEST=$1; CUT=${2:-}; BIN=${3:-}
R=$(pwd)
rm -rf "$DEST"; mkdir -p "$DEST/scripts/research" "$DEST/tests/data"
cp -r scripts/research/ptx_fixtures scripts/research/hopper_fixtures "$DEST/scripts/research/"
cp -r tests/data/ptx_hopper tests/data/hopper_probes "$DEST/tests/data/"
git rev-parse HEAD > "$DEST/COMMIT"
python3 scripts/research/hopper_fixtures/nvcc_launches.py tests/data/ptx_hopper "$DEST/nvcc.json" > /dev/null
python3 - "$DEST" <<'PY'
import glob, json, os, sys
dest = sys.argv[1]
L = []
for f in sorted(glob.glob("tests/data/ptx_hopper/*.launch.json")):
    d = json.load(open(f))
    L.append(dict(name=d["fixture"], unit=d["fixture"], ptx="tests/data/ptx_hopper/" + d["ptx"], kernel=d["kernel"],
                  grid=d["grid"], block=d["block"], dynamic_smem_bytes=d["dynamic_smem_bytes"], params=d["params"],
                  tensor_maps=d["tensor_maps"], note=d["what"], compiler=d["compiler"], cli=d["cli"]))
L += json.load(open(os.path.join(dest, "nvcc.json")))
json.dump(L, open(os.path.join(dest, "launches_fix.json"), "w"), indent=1)
P = json.load(open("tests/data/hopper_probes/probes.launch.json"))
for p in P:
    p["ptx"] = "tests/data/hopper_probes/" + p["ptx"]
json.dump(P, open(os.path.join(dest, "launches_probe.json"), "w"), indent=1)
print(len(L), "fixture launches,", len(P), "probe launches")
PY
if [ -n "$CUT" ]; then
  mkdir -p "$DEST/cutlass/examples/cute" "$DEST/cutlass/tools/util"
  cp -r "$CUT/include" "$DEST/cutlass/"; cp -r "$CUT/tools/util/include" "$DEST/cutlass/tools/util/"
  cp -r "$CUT/examples/cute/tutorial" "$DEST/cutlass/examples/cute/"
fi
if [ -n "$BIN" ]; then mkdir -p "$DEST/cute_bin"; cp "$BIN"/cute_sgemm_sm80 "$BIN"/cute_wgmma_sm90 "$BIN"/cute_wgmma_tma_sm90 "$DEST/cute_bin/" 2>/dev/null || true; fi
du -sh "$DEST"
