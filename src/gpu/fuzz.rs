//! Random warp requests for `tilelab verify --fuzz N`: every instruction kind, random and
//! structured offsets (strides, permutations, XOR swizzles, groups of lanes sharing one address,
//! contiguous runs per group), partial active masks. Offsets stay inside the probe's 48 KiB of
//! dynamic shared memory and are aligned to the access width.

use chacha20::ChaCha12Rng;
use rand::{RngExt, SeedableRng};

use crate::measured::records::Record;

/// The most random requests `verify --fuzz N` measures: 100,000. Each is one probe launch
/// profiled by Nsight Compute; the largest run on record (`docs/log/2026-11-29-verify.md`, `--fuzz 2000`)
/// took minutes, so 100,000 is hours of H200 time, and generating them takes about 30 MB. A
/// larger N is refused before anything is generated or a GPU is looked for.
pub const MAX_FUZZ: usize = 100_000;

/// The most random requests `verify --hopper-fuzz N` adds to each of the `stmatrix` and
/// `cp.async` groups: 100,000 (each one ncu-profiled launch, as [`MAX_FUZZ`]; runs on record
/// used 80 to 300).
pub const MAX_HOPPER_FUZZ: usize = 100_000;

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

fn mask(rng: &mut ChaCha12Rng) -> u32 {
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
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let limit = PROBE_SMEM_BYTES - 16;
    (0..n)
        .map(|i| {
            let k = rng.random_range(0..16usize);
            let w = WIDTH[k];
            let ldsm = k >= 10;
            let m = if ldsm { u32::MAX } else { mask(&mut rng) };
            let p = rng.random_range(0..7u32);
            let offs = pattern_offsets(&mut rng, p, w, limit);
            let offs = offs.into_iter().map(|o| (o % limit) / w * w);
            Record {
                name: format!("fuzz.{seed}.{i}.p{p}"),
                instruction: PROBE_KINDS[k].to_string(),
                lane_byte_offsets: offs.map(u64::from).collect(),
                active_mask: (m != u32::MAX).then_some(m as u64),
                wavefronts: None,
                bank_conflicts: None,
                global_addresses: None,
            }
        })
        .collect()
}

/// Offsets of random pattern `p` (0..7) for accesses of `w` bytes (before the caller folds them
/// into the probe's memory and aligns them): uniform in a random range, a small pool of
/// addresses, a stride, groups sharing one address, runs per group, a permutation of 16-byte
/// rows, XOR-swizzled strides.
fn pattern_offsets(rng: &mut ChaCha12Rng, p: u32, w: u32, limit: u32) -> Vec<u32> {
    match p {
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
                .map(|_| rng.random_range(0..64) * 128 + [0, 64, 32, 16][rng.random_range(0..4)])
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
    }
}

/// `stmatrix` forms in the Hopper probe's `kind` order (`kernels/hopper_probe.cu`,
/// `stsm_probe`/`stsm_count`).
pub const STSM_KINDS: [&str; 6] = [
    "stmatrix.x1",
    "stmatrix.x2",
    "stmatrix.x4",
    "stmatrix.x1.trans",
    "stmatrix.x2.trans",
    "stmatrix.x4.trans",
];

/// `cp.async` forms in the Hopper probe's `kind` order (`kernels/hopper_probe.cu`,
/// `cpasync_src_count`).
pub const CP_ASYNC_KINDS: [&str; 4] = [
    "cp.async.ca.shared.global.4",
    "cp.async.ca.shared.global.8",
    "cp.async.ca.shared.global.16",
    "cp.async.cg.shared.global.16",
];

/// The cp.async probe's global source buffer, bytes. Records give sources as offsets into it
/// (`global_addresses`); the buffer starts 256-byte aligned (`cuMemAlloc`), so an offset's
/// 128-byte line is the address's.
pub const CP_ASYNC_SRC_BYTES: u32 = 64 * 1024;

/// The index of `instruction` (any accepted spelling) in `kinds`, if it is one of them.
pub fn kind_in(kinds: &[&str], instruction: &str) -> Option<usize> {
    let canon = crate::sim::instr::Instruction::parse(instruction)
        .ok()?
        .to_string();
    kinds.iter().position(|k| *k == canon)
}

/// `n` random `stmatrix` requests named `stsm.<seed>.<i>.p<pattern>` (every form, the offset
/// patterns of [`records`] aligned to 16-byte rows), deterministic in `seed`.
pub fn stmatrix_records(n: usize, seed: u64) -> Vec<Record> {
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let limit = PROBE_SMEM_BYTES - 16;
    (0..n)
        .map(|i| {
            let k = rng.random_range(0..STSM_KINDS.len());
            let p = rng.random_range(0..7u32);
            let offs = pattern_offsets(&mut rng, p, 16, limit);
            Record {
                name: format!("stsm.{seed}.{i}.p{p}"),
                instruction: STSM_KINDS[k].to_string(),
                lane_byte_offsets: offs
                    .into_iter()
                    .map(|o| ((o % limit) / 16 * 16) as u64)
                    .collect(),
                active_mask: None,
                wavefronts: None,
                bank_conflicts: None,
                global_addresses: None,
            }
        })
        .collect()
}

/// Global source offsets of pattern `q` (0..8) for copies of `w` bytes, inside
/// [`CP_ASYNC_SRC_BYTES`] and aligned to `w`: contiguous from a random start (lines split
/// anywhere), a stride, a few random lines, a permutation of a contiguous run, groups of lanes
/// on one line each, reversed; then the two the model covers: each unit (128 bytes of lanes)
/// on its own random line in a random order of its pieces, and the tile copy from a line.
fn source_offsets(rng: &mut ChaCha12Rng, q: u32, w: u32) -> Vec<u64> {
    let top = CP_ASYNC_SRC_BYTES - 32 * 512;
    let base = rng.random_range(0..top / w) * w;
    let line = |rng: &mut ChaCha12Rng| rng.random_range(0..CP_ASYNC_SRC_BYTES / 128 - 1) * 128;
    let offs: Vec<u32> = match q {
        0 => (0..32).map(|l| base + w * l).collect(),
        1 => {
            let strides: Vec<u32> = [w, 2 * w, 4 * w, 8 * w, 16, 32, 48, 64, 96, 128, 160, 256, 0]
                .into_iter()
                .filter(|s| s % w == 0)
                .collect();
            let s = strides[rng.random_range(0..strides.len())];
            (0..32).map(|l| base + s * l).collect()
        }
        2 => {
            let lines: Vec<u32> = (0..rng.random_range(1..=8)).map(|_| line(rng)).collect();
            (0..32)
                .map(|_| lines[rng.random_range(0..lines.len())] + rng.random_range(0..128 / w) * w)
                .collect()
        }
        3 => {
            let mut perm: Vec<u32> = (0..32).collect();
            for i in (1..32).rev() {
                perm.swap(i, rng.random_range(0..=i));
            }
            (0..32).map(|l| base + w * perm[l as usize]).collect()
        }
        4 => {
            let g = [2u32, 4, 8, 16][rng.random_range(0..4)];
            let starts: Vec<u32> = (0..32 / g)
                .map(|_| line(rng) + rng.random_range(0..128 / w) * w)
                .collect();
            (0..32)
                .map(|l| starts[(l / g) as usize] + (l % g) * w)
                .collect()
        }
        5 => (0..32).map(|l| base + w * (31 - l)).collect(),
        6 => {
            let per = 128 / w;
            let mut v = Vec::with_capacity(32);
            for _ in 0..32 / per {
                let at = line(rng);
                let mut slots: Vec<u32> = (0..per).collect();
                for i in (1..per as usize).rev() {
                    slots.swap(i, rng.random_range(0..=i));
                }
                v.extend(slots.into_iter().map(|k| at + k * w));
            }
            v
        }
        _ => {
            let at = line(rng).min(CP_ASYNC_SRC_BYTES - 32 * 16 - 128);
            (0..32).map(|l| at + w * l).collect()
        }
    };
    offs.into_iter()
        .map(|o| ((o % (CP_ASYNC_SRC_BYTES - 16)) / w * w) as u64)
        .collect()
}

/// `n` random `cp.async` requests named `cpasync.<seed>.<i>.p<shared pattern>.s<source
/// pattern>`: every form (`.ca` 4/8/16 bytes, `.cg` 16), random masks, the shared offset
/// patterns of [`records`] and the source patterns of `source_offsets` (`global_addresses`:
/// offsets into the probe's source buffer; `s6`, `s7` the one-line units the model covers).
/// Deterministic in `seed`.
pub fn cp_async_records(n: usize, seed: u64) -> Vec<Record> {
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let limit = PROBE_SMEM_BYTES - 16;
    (0..n)
        .map(|i| {
            let k = rng.random_range(0..CP_ASYNC_KINDS.len());
            let w = [4, 8, 16, 16][k];
            let m = mask(&mut rng);
            let p = rng.random_range(0..7u32);
            let offs = pattern_offsets(&mut rng, p, w, limit);
            let q = rng.random_range(0..8u32);
            let src = source_offsets(&mut rng, q, w);
            Record {
                name: format!("cpasync.{seed}.{i}.p{p}.s{q}"),
                instruction: CP_ASYNC_KINDS[k].to_string(),
                lane_byte_offsets: offs
                    .into_iter()
                    .map(|o| ((o % limit) / w * w) as u64)
                    .collect(),
                active_mask: (m != u32::MAX).then_some(m as u64),
                wavefronts: None,
                bank_conflicts: None,
                global_addresses: Some(src),
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

    #[test]
    fn hopper_records_are_valid_deterministic_and_cover_every_form() {
        let smem = SharedMemoryConfig {
            arch: Arch::Sm90,
            size_bytes: PROBE_SMEM_BYTES,
        };
        let st = stmatrix_records(300, 3);
        assert_eq!(st, stmatrix_records(300, 3));
        let cp = cp_async_records(400, 3);
        assert_eq!(cp, cp_async_records(400, 3));
        for r in st.iter().chain(&cp) {
            simulate(&r.request().unwrap(), &smem).unwrap();
        }
        for k in STSM_KINDS {
            assert!(st.iter().any(|r| r.instruction == k), "{k}");
        }
        for k in CP_ASYNC_KINDS {
            assert!(cp.iter().any(|r| r.instruction == k), "{k}");
        }
        // Sources stay in the buffer, aligned; some requests read one line per unit, most more.
        let mut spread = 0;
        for r in &cp {
            let w = crate::sim::instr::Instruction::parse(&r.instruction)
                .unwrap()
                .bytes_per_address() as u64;
            let g = r.global_addresses.as_ref().unwrap();
            assert!(
                g.iter()
                    .all(|&a| a % w == 0 && a + w <= CP_ASYNC_SRC_BYTES as u64)
            );
            let unit = 128 / w as usize;
            spread += (0..32)
                .step_by(unit)
                .any(|u| (u..u + unit).any(|l| g[l] / 128 != g[u] / 128))
                as usize;
        }
        assert!(spread > 150 && spread < 350, "{spread}");
        let modelled = cp
            .iter()
            .filter(|r| r.request().unwrap().cost().modelled().is_ok())
            .count();
        assert!(modelled > 60, "{modelled}");
    }
}
