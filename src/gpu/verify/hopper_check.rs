//! The pure side of the Hopper checks of `tilelab verify` (groups `stmatrix`, `cp.async`, `tma`,
//! `wgmma`): the cases, the inputs the probes get, what the simulator expects, and the
//! comparisons of what an H200 returned. No GPU here: the tests feed these functions the H200's
//! own measurements (`tests/data/h200_*_2026-11-30.json`) and planted disagreements.
//!
//! * `stmatrix`: [`stsm_value`] is what the probe's lane `l` sends in register `r`, half `h`;
//!   [`stmatrix_placement`] compares the probe's list of nonzero 16-bit words with the executor;
//! * `cp.async`: [`CP_ASYNC_METRICS`] and [`cp_async_checks`] (ncu's counters against the model;
//!   `.cg` must move no L1TEX shared counter);
//! * TMA: [`tma_cases`], [`TmaCase`] (global image, launch geometry, the bytes shared memory
//!   must hold), [`tma_compare`];
//! * wgmma: [`wgmma_cases`], [`WgmmaCase::inputs`] (image, descriptors built by the simulator, A
//!   registers), [`WgmmaCase::simulate`] (the executor), [`WgmmaCase::reference`] (products of
//!   the tiles' elements, placed by the accumulator map), [`wgmma_compare`].

use std::collections::BTreeMap;

use crate::gpu::check::Check;
use crate::measured::records::Record;
use crate::sim::bank::WarpRequest;
use crate::sim::exec::{self, WarpOp};
use crate::sim::instr::Instruction;
use crate::sim::mma::MmaDtype;
use crate::sim::smem::SharedMemory;
use crate::sim::tma::{TmaBox, TmaSwizzle};
use crate::sim::wgmma::{self, ASource, AtomOrder, Major, OperandTile};

// ------------------------------------------------------------------------------ stmatrix

/// The 16-bit value lane `lane` sends in register `reg`, half `half` in `stsm_probe`
/// (`kernels/hopper_probe.cu`): `0x8000 | lane << 3 | reg << 1 | half`, so every written word
/// names its sender.
pub fn stsm_value(lane: u32, reg: u32, half: u32) -> u16 {
    (0x8000 | lane << 3 | reg << 1 | half) as u16
}

/// Compares `stsm_probe`'s output for `req` (a `stmatrix`) with the executor: `written` nonzero
/// 16-bit words, the first 512 of them `words` (byte offset, value). The executor runs the same
/// registers on zeroed shared memory; every word must be where it writes one, with its value.
/// Where several registers land on one address the hardware keeps one of them in no fixed lane
/// order (measured), so any of those writers is accepted there. Returns the words checked.
///
/// # Errors
/// The first difference, in words.
pub fn stmatrix_placement(
    req: &WarpRequest,
    written: u32,
    words: &[(u32, u16)],
) -> Result<usize, String> {
    let Instruction::Stmatrix { num, trans } = req.instruction else {
        return Err(format!("{} is not a stmatrix", req.instruction));
    };
    let n = num.count();
    let data = std::array::from_fn(|l| {
        std::array::from_fn(|r| {
            if r < n {
                stsm_value(l as u32, r as u32, 0) as u32
                    | (stsm_value(l as u32, r as u32, 1) as u32) << 16
            } else {
                0
            }
        })
    });
    let size = req
        .lane_byte_offsets
        .iter()
        .max()
        .map_or(0, |&m| m.saturating_add(16));
    let mut smem = SharedMemory::zeroed(size);
    let op = WarpOp::stmatrix(num, trans, req.lane_byte_offsets, data);
    exec::execute(&mut smem, &op).map_err(|e| e.to_string())?;
    let mut writers: BTreeMap<u32, Vec<u16>> = BTreeMap::new();
    for lane in 0..32u32 {
        for reg in 0..n as u32 {
            for half in 0..2 {
                let a = exec::register_byte_address(req, lane as usize, reg as usize, 2 * half)
                    .ok_or_else(|| format!("lane {lane} register {reg}: no address"))?;
                writers
                    .entry(a)
                    .or_default()
                    .push(stsm_value(lane, reg, half));
            }
        }
    }
    if written as usize != writers.len() {
        return Err(format!(
            "{written} words written, the executor writes {}",
            writers.len()
        ));
    }
    if words.len() != writers.len().min(512) {
        return Err(format!(
            "{} words listed for {written} written",
            words.len()
        ));
    }
    for &(addr, v) in words {
        let Some(w) = writers.get(&addr) else {
            return Err(format!("byte {addr} holds {v:#06x}; nothing writes it"));
        };
        let sim = smem.read_u16(addr).map_err(|e| e.to_string())?;
        let ok = if w.len() == 1 {
            v == sim
        } else {
            w.contains(&v)
        };
        if !ok {
            let writers = crate::text::list(w.iter().map(|x| format!("{x:#06x}")));
            return Err(format!(
                "byte {addr} holds {v:#06x}; the executor writes {sim:#06x} (values written there: {writers})"
            ));
        }
    }
    Ok(words.len())
}

// ------------------------------------------------------------------------------ cp.async

/// `l1tex__data_pipe_lsu_wavefronts_mem_shared.sum`: every shared wavefront of the launch.
pub const WAVEFRONTS_ALL: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum";
/// `..._op_misc.sum`: the launch's other shared wavefronts (4 with the commit and wait).
pub const WAVEFRONTS_MISC: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum";
/// LDGSTS bank conflicts as the L1TEX unit counts them.
pub const BANK_CONFLICTS_LDGSTS: &str =
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum";
/// LDGSTS wavefronts attributed to the instruction by ncu's SASS patching.
pub const SASS_WAVEFRONTS_LDGSTS: &str =
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum";
/// Executed LDGSTS instructions.
pub const INST_LDGSTS: &str = "sm__sass_inst_executed_op_ldgsts.sum";

/// The counters the `cp.async` group reads (all measured on the H200 before, so ncu knows them).
pub const CP_ASYNC_METRICS: [&str; 7] = [
    WAVEFRONTS_ALL,
    WAVEFRONTS_MISC,
    crate::gpu::ncu::WAVEFRONTS_LD,
    crate::gpu::ncu::WAVEFRONTS_ST,
    BANK_CONFLICTS_LDGSTS,
    SASS_WAVEFRONTS_LDGSTS,
    INST_LDGSTS,
];

/// The rows of the `cp.async` group for `recs` (each with `global_addresses`, offsets into a
/// 256-byte aligned buffer) and ncu's counters, launch `i` = record `i`:
/// * one LDGSTS per launch and no `op_ld`/`op_st` wavefront;
/// * `.ca` the model covers (one line per unit): its wavefronts = the L1TEX count (all −
///   `op_misc`), one row per record that disagrees (at most 20), and the bank conflicts
///   (`..._op_ldgsts`) where they agree;
/// * those `.ca`: how often ncu's SASS-attributed count equals the L1TEX count (a warning, not
///   a failure, when it does not: it is not the counter the model predicts);
/// * `.cg`: not modelled, and no L1TEX shared counter may move (all − misc = 0, no conflict);
/// * `.ca` with spread sources: ncu's SASS-attributed count within the model's [`SassBounds`]
///   (one row per record outside, at most 20 rows in all with the ones above); their L1TEX
///   count is not modelled, a SKIPPED row (their counters are kept by `--save-hopper`).
///
/// [`SassBounds`]: crate::sim::bank::SassBounds
///
/// # Errors
/// A record that is not a valid request, or a `.ca` one without global sources.
pub fn cp_async_checks(
    recs: &[Record],
    rows: &[BTreeMap<String, f64>],
) -> anyhow::Result<Vec<Check>> {
    const G: &str = "cp.async";
    let get = |m: &BTreeMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(-1.0) as i64;
    let (mut ca, mut ca_ok, mut bc_ok, mut sass_eq, mut cg, mut cg_quiet, mut inst_ok) =
        (0, 0, 0, 0, 0, 0, 0);
    let (mut spread, mut spread_ok, mut spread_exact) = (0, 0, 0);
    let mut bad = Vec::new();
    let mut first_cg = String::new();
    for (r, m) in recs.iter().zip(rows) {
        let req = r.request()?;
        let l1tex = get(m, WAVEFRONTS_ALL) - get(m, WAVEFRONTS_MISC);
        let bc = get(m, BANK_CONFLICTS_LDGSTS);
        inst_ok += (get(m, INST_LDGSTS) == 1
            && get(m, crate::gpu::ncu::WAVEFRONTS_LD) == 0
            && get(m, crate::gpu::ncu::WAVEFRONTS_ST) == 0) as usize;
        match req.cost().modelled() {
            Ok(c) => {
                ca += 1;
                let agree = c.wavefronts as i64 == l1tex;
                ca_ok += agree as usize;
                bc_ok += (agree && c.bank_conflicts() as i64 == bc) as usize;
                sass_eq += (get(m, SASS_WAVEFRONTS_LDGSTS) == l1tex) as usize;
                if !agree && bad.len() < 20 {
                    bad.push(Check::new(
                        G,
                        format!("{} {}", r.name, r.instruction),
                        c.wavefronts,
                        l1tex,
                        false,
                        format!("bank conflicts sim {} / ncu {bc}", c.bank_conflicts()),
                    ));
                }
            }
            Err(crate::sim::bank::NotModelled::CpAsyncCg) => {
                let why = crate::sim::bank::NotModelled::CpAsyncCg;
                cg += 1;
                let quiet = l1tex == 0 && bc == 0;
                cg_quiet += quiet as usize;
                if !quiet && first_cg.is_empty() {
                    first_cg = format!(
                        "{}: {l1tex} L1TEX wavefronts, {bc} conflicts ({why})",
                        r.name
                    );
                }
            }
            Err(crate::sim::bank::NotModelled::CpAsyncSpreadSources(b)) => {
                spread += 1;
                let s = get(m, SASS_WAVEFRONTS_LDGSTS);
                let within = (i64::from(b.lo)..=i64::from(b.hi)).contains(&s);
                spread_ok += within as usize;
                spread_exact += (b.lo == b.hi) as usize;
                if !within && bad.len() < 20 {
                    bad.push(Check::new(
                        G,
                        format!("{} {} (spread sources)", r.name, r.instruction),
                        format!("{}..={}", b.lo, b.hi),
                        s,
                        false,
                        format!("{SASS_WAVEFRONTS_LDGSTS} outside the bounds"),
                    ));
                }
            }
            Err(why) => {
                // Every request of the group has its global sources.
                anyhow::bail!("{}: {why}", r.name);
            }
        }
    }
    let n = recs.len().min(rows.len());
    let mut out = vec![
        Check::new(
            G,
            format!("{n} launches: one LDGSTS each, no op_ld/op_st wavefront"),
            format!("{n} launches"),
            format!("{inst_ok} as said"),
            inst_ok == n && n == recs.len(),
            format!("{INST_LDGSTS}, ..._op_ld.sum, ..._op_st.sum"),
        ),
        Check::new(
            G,
            format!("{ca} cp.async.ca requests: wavefronts (L1TEX shared total - op_misc)"),
            format!("{ca_ok} agree"),
            format!("{ca} total"),
            ca_ok == ca,
            "units reading distinct pieces of one 128-byte line: the store rule without merging (docs/wavefront-model.md)",
        ),
        Check::new(
            G,
            "cp.async.ca bank conflicts (op_ldgsts) where wavefronts agree",
            format!("{bc_ok} agree"),
            format!("{ca_ok} total"),
            bc_ok == ca_ok,
            BANK_CONFLICTS_LDGSTS,
        ),
        Check::new(
            G,
            "cp.async.ca: ncu's SASS-attributed count = the L1TEX count",
            format!("{ca} requests"),
            format!("{sass_eq} equal"),
            true,
            format!("{SASS_WAVEFRONTS_LDGSTS}; equal on all 99 such requests measured on 2026-11-30 (it differs on some spread ones)"),
        )
        .with_verdict(if sass_eq == ca {
            crate::gpu::check::Verdict::Pass
        } else {
            crate::gpu::check::Verdict::Warn
        }),
        Check::new(
            G,
            format!("{cg} cp.async.cg requests: no L1TEX shared counter moves (not modelled)"),
            "not modelled",
            format!("{cg_quiet} quiet"),
            cg_quiet == cg,
            if first_cg.is_empty() {
                "all − op_misc = 0 and no op_ldgsts bank conflict in every launch".to_string()
            } else {
                first_cg
            },
        ),
    ];
    out.push(Check::new(
        G,
        format!(
            "{spread} cp.async.ca requests with spread sources: SASS-attributed wavefronts within the model's bounds"
        ),
        format!("{spread_ok} within"),
        format!("{spread} total"),
        spread_ok == spread,
        format!(
            "{SASS_WAVEFRONTS_LDGSTS}; bounds max(R, W) .. G + W - 1 per unit, exact (lo = hi) for {spread_exact} (docs/wavefront-model.md)"
        ),
    ));
    out.push(
        Check::new(
            G,
            format!("{spread} cp.async.ca requests with spread sources: L1TEX wavefronts and bank conflicts"),
            "not modelled",
            format!("{spread} measured"),
            true,
            "units reading several 128-byte lines or one address twice: the L1TEX count depends on the cache state; their counters are kept (--save-hopper)",
        )
        .with_verdict(crate::gpu::check::Verdict::Skip),
    );
    out.extend(bad);
    Ok(out)
}

// ------------------------------------------------------------------------------ TMA

/// One TMA box the `tma` group copies (the set of `scripts/research/hopper/probe_main.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmaCase {
    /// Box rows.
    pub rows: u32,
    /// Box row bytes (inner dimension × element size).
    pub inner_bytes: u32,
    /// Element bytes: 1, 2 or 4.
    pub elem_bytes: u32,
    /// Swizzle mode.
    pub swizzle: TmaSwizzle,
    /// Destination offset from the probe's 1024-byte aligned base.
    pub dst: u32,
    /// Whether half the box lies past the tensor's last row (zero fill).
    pub oob: bool,
}

/// Where and how a [`TmaCase`] is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmaLaunch {
    /// Box columns (elements).
    pub cols: u32,
    /// Box start: element column.
    pub x0: u32,
    /// Box start: row.
    pub y0: u32,
    /// Rows of the global tensor.
    pub global_rows: u32,
    /// Bytes per global row (the box's inner bytes plus 48, rounded up to 16).
    pub global_row_bytes: u32,
    /// Bytes the mbarrier expects (`rows * inner_bytes`).
    pub nbytes: u32,
    /// Bytes of shared memory read back from the aligned base: the footprint past `dst` and
    /// 1024 more, so stray writes show.
    pub out_bytes: u32,
}

/// Global byte `b` of row `y` of the probe's tensor: bytes 0-1 of each 16-byte chunk `c` hold
/// the tag `y*32 + c + 1` (little-endian), bytes `o` = 2..15 hold `(y*7 + c*13 + o*29 + 5) &
/// 0xff` (the fill of `tests/data/h200_tma_2026-11-30.json`).
pub fn tma_fill_byte(y: u32, b: u32) -> u8 {
    let (c, o) = (b / 16, b % 16);
    let tag = y * 32 + c + 1;
    match o {
        0 => (tag & 0xff) as u8,
        1 => (tag >> 8) as u8,
        _ => ((y * 7 + c * 13 + o * 29 + 5) & 0xff) as u8,
    }
}

/// The boxes: every swizzle mode × element size 1/2/4 × inner bytes 16..256 × 8 and 64 rows
/// (5 rows where the row is the swizzle span), boxes wider than the span for 8-row f16 (the
/// driver rejects those), a 24-byte row (rejected), two boxes half past the tensor, three
/// destinations inside the buffer, and three destinations 128-512 bytes past a 1024-byte
/// boundary (the XOR uses the address).
pub fn tma_cases() -> Vec<TmaCase> {
    let mut v = Vec::new();
    let case = |rows, inner_bytes, elem_bytes, swizzle, dst, oob| TmaCase {
        rows,
        inner_bytes,
        elem_bytes,
        swizzle,
        dst,
        oob,
    };
    for sw in TmaSwizzle::ALL {
        let span = if sw == TmaSwizzle::None {
            0
        } else {
            sw.span_bytes()
        };
        for e in [1, 2, 4] {
            for ib in [16, 32, 64, 128, 256] {
                for rows in [8, 64, 5] {
                    if rows == 5 && ib != span && !(sw == TmaSwizzle::None && ib == 64) {
                        continue;
                    }
                    if sw != TmaSwizzle::None && ib > span && !(rows == 8 && e == 2) {
                        continue;
                    }
                    if ib / e > 256 {
                        continue;
                    }
                    v.push(case(rows, ib, e, sw, 0, false));
                }
            }
        }
    }
    v.push(case(8, 24, 2, TmaSwizzle::None, 0, false));
    v.push(case(64, 128, 2, TmaSwizzle::B128, 0, true));
    v.push(case(64, 64, 2, TmaSwizzle::B64, 2048, true));
    v.push(case(64, 128, 2, TmaSwizzle::B128, 3072, false));
    v.push(case(16, 64, 4, TmaSwizzle::B64, 1536, false));
    v.push(case(32, 32, 1, TmaSwizzle::B32, 768, false));
    v.push(case(64, 128, 2, TmaSwizzle::B128, 128, false));
    v.push(case(64, 128, 2, TmaSwizzle::B128, 512, false));
    v.push(case(32, 64, 2, TmaSwizzle::B64, 256, false));
    v
}

impl TmaCase {
    /// The model's box (`Err`: the model rejects the tensor map).
    ///
    /// # Errors
    /// The model's reason.
    pub fn model(&self) -> Result<TmaBox, crate::sim::SimError> {
        TmaBox::new(
            self.rows,
            self.inner_bytes / self.elem_bytes,
            self.elem_bytes,
            self.swizzle,
            self.dst,
        )
    }

    /// The launch geometry: the box one chunk in from the left (`x0` = 16 bytes), at row 3 (or
    /// with half its rows past the tensor), in a tensor 8 rows taller and 48 bytes wider than it.
    pub fn launch(&self) -> TmaLaunch {
        let global_row_bytes = (self.inner_bytes + 48).next_multiple_of(16);
        let global_rows = self.rows + 8;
        let span = match self.swizzle {
            TmaSwizzle::None => 0,
            s => s.span_bytes(),
        };
        let pitch = self.inner_bytes.max(span);
        TmaLaunch {
            cols: self.inner_bytes / self.elem_bytes,
            x0: 16 / self.elem_bytes,
            y0: if self.oob {
                global_rows - self.rows / 2
            } else {
                3
            },
            global_rows,
            global_row_bytes,
            nbytes: self.rows * self.inner_bytes,
            out_bytes: self.dst + self.rows * pitch + 1024,
        }
    }

    /// The global tensor's bytes ([`tma_fill_byte`]).
    pub fn global_image(&self) -> Vec<u8> {
        let l = self.launch();
        (0..l.global_rows)
            .flat_map(|y| (0..l.global_row_bytes).map(move |b| tma_fill_byte(y, b)))
            .collect()
    }

    /// What the probe must read back for box `b` (from [`Self::model`]): `0xA5` everywhere
    /// except the box's chunks where the model places them, each the global chunk of its row
    /// (zeros for rows past the tensor).
    pub fn expected(&self, b: &TmaBox) -> Vec<u8> {
        let l = self.launch();
        let mut out = vec![0xA5u8; l.out_bytes as usize];
        for (i, slot) in b.smem_chunks().into_iter().enumerate() {
            let Some((r, c)) = slot else { continue };
            let y = l.y0 + r;
            let at = (self.dst + 16 * i as u32) as usize;
            for o in 0..16u32 {
                out[at + o as usize] = if y >= l.global_rows {
                    0
                } else {
                    tma_fill_byte(y, 16 + 16 * c + o)
                };
            }
        }
        out
    }

    /// `box 64x128B f16 128B dst 0`.
    pub fn label(&self) -> String {
        format!(
            "box {}x{}B e{} {} dst {}{}",
            self.rows,
            self.inner_bytes,
            self.elem_bytes,
            self.swizzle,
            self.dst,
            if self.oob {
                " half past the tensor"
            } else {
                ""
            }
        )
    }
}

/// Compares one box: the driver's verdict on the tensor map (`Err`: rejected, with its reason)
/// and, when it accepted, the bytes read back, with the model.
///
/// # Errors
/// What differs: a rejection one side makes alone, or the first differing byte (with the
/// global row and chunk it should hold).
pub fn tma_compare(case: &TmaCase, driver: Result<&[u8], &str>) -> Result<(), String> {
    match (case.model(), driver) {
        (Err(_), Err(_)) => Ok(()),
        (Err(e), Ok(_)) => Err(format!("the driver accepts it, the model rejects it: {e}")),
        (Ok(_), Err(why)) => Err(format!(
            "the driver rejects it ({why}), the model accepts it"
        )),
        (Ok(b), Ok(got)) => {
            let want = case.expected(&b);
            if got.len() != want.len() {
                return Err(format!(
                    "{} bytes read back, {} expected",
                    got.len(),
                    want.len()
                ));
            }
            match want.iter().zip(got).position(|(w, g)| w != g) {
                None => Ok(()),
                Some(i) => Err(format!(
                    "byte {i} (chunk {} from dst) is {:#04x}, the model says {:#04x}",
                    (i as i64 - case.dst as i64).div_euclid(16),
                    got[i],
                    want[i]
                )),
            }
        }
    }
}

// ------------------------------------------------------------------------------ wgmma

/// One wgmma problem of the `wgmma` group: `tilelab sim wgmma` arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaCase {
    /// The case's name (as in `tests/data/h200_wgmma_2026-11-30.json`).
    pub name: &'static str,
    /// N.
    pub n: u32,
    /// A's major.
    pub major_a: Major,
    /// B's major.
    pub major_b: Major,
    /// Swizzle mode of both tiles.
    pub swizzle: TmaSwizzle,
    /// K extent.
    pub k: u32,
    /// Atom order.
    pub order: AtomOrder,
    /// Input type (f16 or bf16).
    pub dtype: MmaDtype,
    /// A from registers instead of shared memory.
    pub a_regs: bool,
}

/// The 43 cases measured on 2026-11-30 (`scripts/research/hopper/make_wgmma_cases.sh`): N = 64 in every
/// swizzle and major pairing, N = 8 and 24 in every swizzle, N = 128 and 256 with 128B and
/// 64B, both atom orders, bf16, A from registers.
pub fn wgmma_cases() -> Vec<WgmmaCase> {
    use Major::{K, Mn};
    use TmaSwizzle::{B32, B64, B128, None as Sw0};
    let c = |name, n, major_a, major_b, swizzle, k| WgmmaCase {
        name,
        n,
        major_a,
        major_b,
        swizzle,
        k,
        order: AtomOrder::MnFirst,
        dtype: MmaDtype::F16,
        a_regs: false,
    };
    let mut v = Vec::new();
    const N64: [&str; 16] = [
        "n64.kk.none",
        "n64.kmn.none",
        "n64.mnk.none",
        "n64.mnmn.none",
        "n64.kk.32B",
        "n64.kmn.32B",
        "n64.mnk.32B",
        "n64.mnmn.32B",
        "n64.kk.64B",
        "n64.kmn.64B",
        "n64.mnk.64B",
        "n64.mnmn.64B",
        "n64.kk.128B",
        "n64.kmn.128B",
        "n64.mnk.128B",
        "n64.mnmn.128B",
    ];
    let mut i = 0;
    for sw in [Sw0, B32, B64, B128] {
        for ma in [K, Mn] {
            for mb in [K, Mn] {
                v.push(c(N64[i], 64, ma, mb, sw, 64));
                i += 1;
            }
        }
    }
    const SMALL: [[&str; 5]; 2] = [
        [
            "n8.kk.none",
            "n8.kk.32B",
            "n8.kk.64B",
            "n8.kk.128B",
            "n8.mnmn.none",
        ],
        [
            "n24.kk.none",
            "n24.kk.32B",
            "n24.kk.64B",
            "n24.kk.128B",
            "n24.mnmn.none",
        ],
    ];
    for (j, n) in [8, 24].into_iter().enumerate() {
        for (s, sw) in [Sw0, B32, B64, B128].into_iter().enumerate() {
            v.push(c(SMALL[j][s], n, K, K, sw, 64));
        }
        v.push(c(SMALL[j][4], n, Mn, Mn, Sw0, 32));
    }
    for (n, names) in [
        (128, ["n128.kk.128B", "n128.kmn.128B", "n128.mnmn.64B"]),
        (256, ["n256.kk.128B", "n256.kmn.128B", "n256.mnmn.64B"]),
    ] {
        v.push(c(names[0], n, K, K, B128, 64));
        v.push(c(names[1], n, K, Mn, B128, 64));
        v.push(c(names[2], n, Mn, Mn, B64, 32));
    }
    let korder = |mut x: WgmmaCase| {
        x.order = AtomOrder::KFirst;
        x
    };
    v.push(korder(c("n64.kk.none.korder", 64, K, K, Sw0, 64)));
    v.push(korder(c("n64.mnmn.none.korder", 64, Mn, Mn, Sw0, 64)));
    v.push(korder(c("n64.mnmn.32B.korder", 64, Mn, Mn, B32, 64)));
    v.push(korder(c("n64.kk.128B.korder", 64, K, K, B128, 128)));
    let bf = |mut x: WgmmaCase| {
        x.dtype = MmaDtype::Bf16;
        x
    };
    v.push(bf(c("bf16.n64.kk.128B", 64, K, K, B128, 64)));
    v.push(bf(c("bf16.n64.mnmn.128B", 64, Mn, Mn, B128, 64)));
    let rs = |mut x: WgmmaCase| {
        x.a_regs = true;
        x
    };
    v.push(rs(c("rs.n64.k.128B", 64, K, K, B128, 64)));
    v.push(rs(c("rs.n64.mn.128B", 64, Mn, Mn, B128, 64)));
    v.push(rs(c("rs.n256.k.128B", 256, K, K, B128, 64)));
    v.push(rs(c("rs.n8.k.none", 8, K, K, Sw0, 32)));
    v.push(rs(c("rs.n8.mn.none", 8, Mn, Mn, Sw0, 32)));
    v
}

/// How the operands are filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgmmaFill {
    /// The H200 runs' small integers in [-2, 2]: shared-memory u16 word `i` = [`wgmma_small`]`(i)`,
    /// A register `j` of thread `t` in k block `kb`, half `h` = `small(0x40000000 + ((kb*128 +
    /// t)*4 + j)*2 + h)`.
    Small,
    /// Values that name their place: A(m, 0) = m, A(m, 1) = 1, B(0, n) = N, B(1, n) = n + 1, all
    /// other elements 0, so D(m, n) = m·N + n + 1 (exact in f16, bf16 and f32): every
    /// accumulator register says which element of D it holds.
    Unique,
}

/// The H200 runs' small integer of key `x`: `((x * 2654435761 mod 2^32) >> 16) % 5 - 2`.
pub fn wgmma_small(x: u32) -> f32 {
    ((x.wrapping_mul(2_654_435_761) >> 16) % 5) as f32 - 2.0
}

fn bits16(v: f32, dtype: MmaDtype) -> u16 {
    match dtype {
        MmaDtype::Bf16 => half::bf16::from_f32(v).to_bits(),
        _ => half::f16::from_f32(v).to_bits(),
    }
}

fn value16(bits: u16, dtype: MmaDtype) -> f64 {
    match dtype {
        MmaDtype::Bf16 => half::bf16::from_bits(bits).to_f64(),
        _ => half::f16::from_bits(bits).to_f64(),
    }
}

/// What one wgmma launch gets.
#[derive(Clone, Debug, PartialEq)]
pub struct WgmmaInputs {
    /// The kernel ([`crate::gpu::launch::WgmmaProbe::kernel_name`]).
    pub kernel: String,
    /// The shared-memory image (from the aligned base).
    pub img: Vec<u8>,
    /// Per k block, A's then B's descriptor, as the simulator encodes them (A's is 0 when A
    /// comes from registers).
    pub desc: Vec<u64>,
    /// A registers (`kb*128*4` words), when A comes from registers.
    pub aregs: Option<Vec<u32>>,
    /// A's and B's tiles.
    pub tiles: (OperandTile, OperandTile),
}

impl WgmmaCase {
    /// The case's tiles, image, descriptors (built and encoded by the simulator) and registers.
    ///
    /// # Errors
    /// The simulator's refusal of the case (never for [`wgmma_cases`]).
    pub fn inputs(&self, fill: WgmmaFill) -> anyhow::Result<WgmmaInputs> {
        let (ta, tb, smem_bytes) = wgmma::operand_tiles(
            self.n,
            self.major_a,
            self.major_b,
            self.swizzle,
            self.k,
            self.order,
        )?;
        let mut img = vec![0u8; smem_bytes.next_multiple_of(16) as usize];
        let dt = self.dtype;
        let mut put = |addr: u32, v: f32| {
            let b = bits16(v, dt).to_le_bytes();
            img[addr as usize] = b[0];
            img[addr as usize + 1] = b[1];
        };
        let a_val = |m: u32, k: u32| match k {
            0 => m as f32,
            1 => 1.0,
            _ => 0.0,
        };
        let b_val = |k: u32, n: u32| match k {
            0 => self.n as f32,
            1 => (n + 1) as f32,
            _ => 0.0,
        };
        match fill {
            WgmmaFill::Small => {
                for i in 0..smem_bytes / 2 {
                    put(2 * i, wgmma_small(i));
                }
            }
            WgmmaFill::Unique => {
                for k in 0..self.k {
                    if !self.a_regs {
                        for m in 0..wgmma::M {
                            put(ta.byte_address(m, k), a_val(m, k));
                        }
                    }
                    for n in 0..self.n {
                        put(tb.byte_address(n, k), b_val(k, n));
                    }
                }
            }
        }
        let kb_n = ta.k_blocks();
        let mut desc = Vec::with_capacity(2 * kb_n as usize);
        for kb in 0..kb_n {
            desc.push(if self.a_regs {
                0
            } else {
                ta.descriptor(kb).encode()?
            });
            desc.push(tb.descriptor(kb).encode()?);
        }
        let aregs = self.a_regs.then(|| {
            let mut v = Vec::with_capacity((kb_n * 128 * 4) as usize);
            for kb in 0..kb_n {
                for t in 0..128u32 {
                    for j in 0..4u32 {
                        let half = |h: u32| {
                            let x = match fill {
                                WgmmaFill::Small => {
                                    wgmma_small(0x4000_0000 + ((kb * 128 + t) * 4 + j) * 2 + h)
                                }
                                WgmmaFill::Unique => {
                                    let (m, k) = wgmma::a_fragment(t, j, h);
                                    a_val(m, 16 * kb + k)
                                }
                            };
                            bits16(x, dt) as u32
                        };
                        v.push(half(0) | half(1) << 16);
                    }
                }
            }
            v
        });
        Ok(WgmmaInputs {
            kernel: crate::gpu::launch::WgmmaProbe::kernel_name(
                self.n,
                self.dtype,
                self.a_regs,
                self.major_a.imm_trans(),
                self.major_b.imm_trans(),
            ),
            img,
            desc,
            aregs,
            tiles: (ta, tb),
        })
    }

    /// The simulator's accumulators after every k block (the executor's
    /// [`crate::sim::exec::WgmmaOp::f32_acc`] through the same descriptors), thread-major like
    /// the probe's output.
    ///
    /// # Errors
    /// The executor's.
    pub fn simulate(&self, inp: &WgmmaInputs) -> anyhow::Result<Vec<f32>> {
        let mut smem = SharedMemory::zeroed(inp.img.len() as u32);
        for (i, c) in inp.img.chunks(2).enumerate() {
            smem.write_u16(2 * i as u32, u16::from_le_bytes([c[0], c[1]]))?;
        }
        let (ta, tb) = inp.tiles;
        let mut acc = vec![0u32; (self.n / 2) as usize * wgmma::WARPGROUP_THREADS];
        for kb in 0..ta.k_blocks() {
            let src = match &inp.aregs {
                Some(a) => {
                    let base = (kb * 128 * 4) as usize;
                    ASource::Registers(Box::new(std::array::from_fn(|t| {
                        std::array::from_fn(|j| a[base + t * 4 + j])
                    })))
                }
                None => ASource::Smem(ta.descriptor(kb), self.major_a),
            };
            let op = exec::WgmmaOp::f32_acc(
                self.n,
                self.dtype,
                &src,
                tb.descriptor(kb),
                self.major_b,
                &mut acc,
            );
            exec::execute(&mut smem, op)?;
        }
        Ok(acc.into_iter().map(f32::from_bits).collect())
    }

    /// The reference: D(m, n) = Σ_k A(m, k)·B(k, n) in f64 over the tiles' elements (A(m, k) at
    /// `byte_address(m, k)` of A's tile or in the registers the A fragment names, B(k, n) at
    /// `byte_address(n, k)` of B's tile), then placed by the accumulator map
    /// ([`wgmma::acc_fragment`]): thread-major like the probe's output. No descriptor involved.
    pub fn reference(&self, inp: &WgmmaInputs) -> Vec<f32> {
        let (ta, tb) = inp.tiles;
        let dt = self.dtype;
        let at = |addr: u32| {
            let a = addr as usize;
            value16(u16::from_le_bytes([inp.img[a], inp.img[a + 1]]), dt)
        };
        let mut a = vec![vec![0f64; self.k as usize]; wgmma::M as usize];
        match &inp.aregs {
            Some(regs) => {
                for kb in 0..ta.k_blocks() {
                    for t in 0..128u32 {
                        for j in 0..4u32 {
                            let w = regs[((kb * 128 + t) * 4 + j) as usize];
                            for h in 0..2 {
                                let (m, k) = wgmma::a_fragment(t, j, h);
                                a[m as usize][(16 * kb + k) as usize] =
                                    value16((w >> (16 * h)) as u16, dt);
                            }
                        }
                    }
                }
            }
            None => {
                for (m, row) in a.iter_mut().enumerate() {
                    for (k, v) in row.iter_mut().enumerate() {
                        *v = at(ta.byte_address(m as u32, k as u32));
                    }
                }
            }
        }
        let mut out = Vec::with_capacity(128 * (self.n / 2) as usize);
        for t in 0..128u32 {
            for r in 0..self.n / 2 {
                let (m, n) = wgmma::acc_fragment(t, r);
                let d: f64 = (0..self.k)
                    .map(|k| a[m as usize][k as usize] * at(tb.byte_address(n, k)))
                    .sum();
                out.push(d as f32);
            }
        }
        out
    }
}

/// Compares the probe's accumulators `hw` (thread-major) with the simulator and the reference,
/// register by register, exactly (small integers: every value is exact in f32).
///
/// # Errors
/// The first register that differs from either, with the element of D it holds.
pub fn wgmma_compare(n: u32, hw: &[f32], sim: &[f32], reference: &[f32]) -> Result<(), String> {
    let regs = (n / 2) as usize;
    if hw.len() != 128 * regs || sim.len() != hw.len() || reference.len() != hw.len() {
        return Err(format!(
            "{} values from the GPU, {} simulated, {} in the reference; {} expected",
            hw.len(),
            sim.len(),
            reference.len(),
            128 * regs
        ));
    }
    for (i, ((h, s), r)) in hw.iter().zip(sim).zip(reference).enumerate() {
        if h != s || h != r {
            let (t, q) = ((i / regs) as u32, (i % regs) as u32);
            let (row, col) = wgmma::acc_fragment(t, q);
            return Err(format!(
                "thread {t} register {q} = D({row}, {col}): GPU {h}, simulator {s}, reference {r}"
            ));
        }
    }
    Ok(())
}
