//! Random warp requests for `tilelab verify --fuzz N`: every instruction kind, random and
//! structured offsets (strides, permutations, XOR swizzles, groups of lanes sharing one address,
//! contiguous runs per group), partial active masks. Offsets stay inside the probe's 48 KiB of
//! dynamic shared memory and are aligned to the access width.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::records::Record;

/// The probe's dynamic shared memory, bytes.
pub const PROBE_SMEM_BYTES: u32 = 48 * 1024;

/// Instruction names in the probe's `kind` order (`kernels/smem_probe.cu`).
pub const PROBE_KINDS: [&str; 16] = [
    "ld.shared.u8",
    "ld.shared.u16",
    "ld.shared.b32",
    "ld.shared.v2.b32",
    "ld.shared.v4.b32",
    "st.shared.u8",
    "st.shared.u16",
    "st.shared.b32",
    "st.shared.v2.b32",
    "st.shared.v4.b32",
    "ldmatrix.x1",
    "ldmatrix.x2",
    "ldmatrix.x4",
    "ldmatrix.x1.trans",
    "ldmatrix.x2.trans",
    "ldmatrix.x4.trans",
];

const WIDTH: [u32; 16] = [1, 2, 4, 8, 16, 1, 2, 4, 8, 16, 16, 16, 16, 16, 16, 16];

/// The probe kind of an instruction name (canonical spelling), if the probe has it.
pub fn probe_kind(instruction: &str) -> Option<usize> {
    let canon = crate::sim::instr::Instruction::parse(instruction)
        .ok()?
        .to_string();
    PROBE_KINDS.iter().position(|k| *k == canon)
}

fn mask(rng: &mut StdRng) -> u32 {
    let c: f64 = rng.random();
    if c < 0.4 {
        u32::MAX
    } else if c < 0.6 {
        rng.random::<u32>().max(1)
    } else if c < 0.7 {
        (1u32 << rng.random_range(1..32)) - 1
    } else if c < 0.8 {
        1 << rng.random_range(0..32)
    } else if c < 0.9 {
        let m = [
            0x0000ffff, 0xffff0000, 0x00ff00ff, 0xff00ff00, 0x0f0f0f0f, 0x55555555, 0xaaaaaaaa,
            0xff, 0xff00,
        ];
        m[rng.random_range(0..m.len())]
    } else {
        (rng.random::<u32>() & rng.random::<u32>()).max(2)
    }
}

/// `n` random records named `fuzz.<seed>.<i>.<pattern>`, deterministic in `seed`.
pub fn records(n: usize, seed: u64) -> Vec<Record> {
    let mut rng = StdRng::seed_from_u64(seed);
    let limit = PROBE_SMEM_BYTES - 16;
    (0..n)
        .map(|i| {
            let k = rng.random_range(0..16usize);
            let w = WIDTH[k];
            let ldsm = k >= 10;
            let m = if ldsm { u32::MAX } else { mask(&mut rng) };
            let p = rng.random_range(0..7u32);
            let offs: Vec<u32> = match p {
                0 => {
                    let r = [64, 128, 256, 512, 1024, 4096, limit][rng.random_range(0..7)];
                    (0..32).map(|_| rng.random_range(0..r)).collect()
                }
                1 => {
                    let pool: Vec<u32> = (0..rng.random_range(1..=8))
                        .map(|_| rng.random_range(0..8192))
                        .collect();
                    (0..32)
                        .map(|_| pool[rng.random_range(0..pool.len())])
                        .collect()
                }
                2 => {
                    let s = if rng.random_bool(0.6) {
                        rng.random_range(0..=40) * w
                    } else {
                        rng.random_range(0..=300)
                    };
                    let b = rng.random_range(0..4096);
                    (0..32).map(|l| b + s * l).collect()
                }
                3 => {
                    let g = [4, 8, 16][rng.random_range(0..3)];
                    let addrs: Vec<u32> = (0..32 / g).map(|_| rng.random_range(0..2048)).collect();
                    (0..32).map(|l| addrs[l as usize / g]).collect()
                }
                4 => {
                    let g = [8u32, 16][rng.random_range(0..2)];
                    let bases: Vec<u32> = (0..32 / g)
                        .map(|_| {
                            rng.random_range(0..64) * 128 + [0, 64, 32, 16][rng.random_range(0..4)]
                        })
                        .collect();
                    let st = if w < 16 {
                        [w, 2 * w, 4][rng.random_range(0..3)]
                    } else {
                        [16, 32, 0][rng.random_range(0..3)]
                    };
                    (0..32)
                        .map(|l| bases[(l / g) as usize] + (l % g) * st)
                        .collect()
                }
                5 => {
                    let base = rng.random_range(0..64) * 128;
                    let mut perm: Vec<u32> = (0..32).collect();
                    for i in (1..32).rev() {
                        perm.swap(i, rng.random_range(0..=i));
                    }
                    (0..32).map(|l| base + perm[l] * w).collect()
                }
                _ => {
                    let s = [64, 128, 136, 144, 256][rng.random_range(0..5)];
                    let x = [0, 1, 3, 7][rng.random_range(0..4)];
                    (0..32).map(|l| (l * s) ^ ((l & x) << 4)).collect()
                }
            };
            let offs = offs.into_iter().map(|o| (o % limit) / w * w);
            Record {
                name: format!("fuzz.{seed}.{i}.p{p}"),
                instruction: PROBE_KINDS[k].to_string(),
                lane_byte_offsets: offs.map(u64::from).collect(),
                active_mask: (m != u32::MAX).then_some(m as u64),
                wavefronts: None,
                bank_conflicts: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::arch::Arch;
    use crate::sim::bank::{SharedMemoryConfig, simulate};

    #[test]
    fn fuzz_records_are_valid_and_deterministic() {
        let a = records(500, 7);
        assert_eq!(a, records(500, 7));
        let smem = SharedMemoryConfig {
            arch: Arch::Sm90,
            size_bytes: PROBE_SMEM_BYTES,
        };
        for r in &a {
            let req = r.request().unwrap();
            simulate(&req, &smem).unwrap();
            assert!(probe_kind(&r.instruction).is_some());
        }
        // Every kind appears.
        for k in PROBE_KINDS {
            assert!(a.iter().any(|r| r.instruction == k), "{k}");
        }
    }
}
