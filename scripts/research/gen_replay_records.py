#!/usr/bin/env python3
"""Random warp requests in the replay format, for timing `tilelab sim replay` (docs/perf-cpu.md).

Deterministic: the same arguments always write the same bytes. Instructions cycle through every
kind the model knows (ld/st of u8, u16, b32, v2, v4; ldmatrix x1/x2/x4 with and without .trans);
offsets are aligned and below 16 KiB; ld/st records get a random partial mask one time in four
(ldmatrix needs all 32 lanes). No record carries measured values, so replay prints predictions
and exits 0. Usage:
    python3 scripts/research/gen_replay_records.py OUT.json [COUNT=1000000] [SEED=11]
"""
import random
import sys

INSTRUCTIONS = [
    ("ld.shared.b32", 4), ("ld.shared.v4.b32", 16), ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", 16),
    ("st.shared.b32", 4), ("ld.shared.v2.b32", 8), ("st.shared.v4.b32", 16),
    ("ld.shared.u16", 2), ("st.shared.u8", 1), ("st.shared.v2.b32", 8),
    ("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", 16), ("ldmatrix.sync.aligned.m8n8.x1.shared.b16", 16),
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "replay_1m.json"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 11)
    with open(out, "w") as f:
        f.write("[\n")
        for i in range(count):
            ins, align = INSTRUCTIONS[i % len(INSTRUCTIONS)]
            offs = ",".join(str(rng.randrange(16384 // align) * align) for _ in range(32))
            mask = ""
            if not ins.startswith("ldmatrix") and rng.randrange(4) == 0:
                mask = f',"active_mask":{rng.getrandbits(32)}'
            sep = ",\n" if i + 1 < count else "\n"
            f.write(f'{{"name":"rand.{i}","instruction":"{ins}","lane_byte_offsets":[{offs}]{mask}}}{sep}')
        f.write("]\n")


if __name__ == "__main__":
    main()
