//! `tilelab sim tma` and `tilelab sim wgmma`: Hopper's tile copy and warpgroup MMA.
//!
//! `--json` of `tma`: `{"box": [rows, cols], "dtype", "elem_bytes", "swizzle", "cu_swizzle",
//! "base", "size_bytes", "pitch", "footprint_bytes", "repeat_bytes", "cute_bytes",
//! "cute_elements", "lines": [[{"row", "chunk"} or null]] (per 128-byte line of shared memory
//! from the base, which box row and 16-byte chunk each of its chunks holds, null for padding
//! that is not written; a shorter last line for small boxes), "ldmatrix_x4": {"requests",
//! "wavefronts", "ideal", "bank_conflicts"}, "core_matrices": {"count", "wavefronts", "ideal"}}`.
//!
//! `--json` of `wgmma`: `{"ptx", "sass", "n", "dtype", "a": operand, "b": operand, "smem_bytes",
//! "descriptors": [{"k_block", "a", "b"}], "accumulators": [{"thread", "reg", "row", "col"}],
//! "check": {"max_abs_error", "values"}}`; an operand is `{"major", "swizzle", "rows", "k",
//! "base", "leading_byte_offset", "stride_byte_offset", "core_matrices": [{"mn", "k", "rows":
//! [8 byte addresses], "wavefronts"}]}` (core matrices of k-block 0) and each descriptor is
//! `{"hex", "start_address", "leading_byte_offset", "stride_byte_offset", "base_offset",
//! "layout_type"}`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use ndarray::Array2;
use serde::Serialize;
use tilelab::sim::bank::WarpRequest;
use tilelab::sim::instr::Instruction;
use tilelab::sim::mma::MmaDtype;
use tilelab::sim::smem::SharedMemory;
use tilelab::sim::stats::AccessStats;
use tilelab::sim::tma::{TmaBox, TmaSwizzle};
use tilelab::sim::wgmma::{self, ASource, AtomOrder, Major, MatrixDescriptor, OperandTile};

use super::out;
use super::sim_bank::{parse_dtype, parse_tile};

/// Arguments of `tilelab sim tma`.
#[derive(clap::Args, Debug)]
pub struct TmaArgs {
    /// Box as ROWSxCOLS in elements (boxDim[1] x boxDim[0]; columns are the contiguous dimension).
    #[arg(long, default_value = "64x64", allow_hyphen_values = true)]
    pub r#box: String,
    /// Element type: u8, f16, bf16, f32 (or 1, 2, 4).
    #[arg(long, default_value = "f16")]
    pub dtype: String,
    /// Swizzle mode: none, 32B, 64B, 128B.
    #[arg(long, default_value = "128B")]
    pub swizzle: String,
    /// Shared-memory byte address of the destination, in bytes or K/KB/KiB of 1024 (1024, 1K):
    /// a multiple of 128; the box must end within sm_90's 232448 bytes of shared memory per block.
    #[arg(long, value_name = "BYTES", value_parser = super::size_u32, default_value_t = 0, allow_negative_numbers = true)]
    pub base: u32,
    /// Write the shared-memory grid (128-byte lines x 16-byte chunks) as SVG to FILE.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize, Clone, Copy)]
struct ChunkRef {
    row: u32,
    chunk: u32,
}

/// Totals of read-back requests, from `sim`'s one stats type ([`AccessStats`]).
#[derive(Serialize)]
struct CostJson {
    requests: u64,
    wavefronts: u64,
    ideal: u64,
    bank_conflicts: u64,
}

impl From<AccessStats> for CostJson {
    fn from(s: AccessStats) -> Self {
        CostJson {
            requests: s.requests,
            wavefronts: s.wavefronts,
            ideal: s.ideal,
            bank_conflicts: s.conflicts,
        }
    }
}

#[derive(Serialize)]
struct TmaReport {
    r#box: [u32; 2],
    dtype: String,
    elem_bytes: u32,
    swizzle: String,
    cu_swizzle: String,
    base: u32,
    size_bytes: u32,
    pitch: u32,
    footprint_bytes: u32,
    repeat_bytes: u32,
    cute_bytes: Option<String>,
    cute_elements: Option<String>,
    lines: Vec<Vec<Option<ChunkRef>>>,
    ldmatrix_x4: Option<CostJson>,
    core_matrices: Option<CostJson>,
}

/// Bank cost of reading the box back: every 16x(2 chunks) block with `ldmatrix.x4` (lanes 8m+r
/// give row r of matrix m: rows (m%2)*8 + r, chunk m/2), and every 8-row x 16-byte core matrix as
/// one 8-address unit (how a `wgmma` operand is made of core matrices).
fn readback_costs(b: &TmaBox) -> (Option<CostJson>, Option<CostJson>) {
    let cpr = b.chunks_per_row();
    let mut x4 = None;
    if b.rows >= 16 && cpr >= 2 {
        let stats: AccessStats = (0..b.rows - 15)
            .step_by(16)
            .flat_map(|r0| (0..cpr - 1).step_by(2).map(move |c0| (r0, c0)))
            .map(|(r0, c0)| {
                let offs = std::array::from_fn(|l| {
                    let (m, r) = (l as u32 / 8, l as u32 % 8);
                    b.chunk_address(r0 + (m % 2) * 8 + r, c0 + m / 2)
                });
                WarpRequest::new(Instruction::LDSM_X4, offs).cost()
            })
            .sum();
        x4 = Some(stats.into());
    }
    let mut core = None;
    if b.rows >= 8 {
        let x1 = Instruction::parse("ldmatrix.x1").expect("valid name");
        let stats: AccessStats = (0..b.rows - 7)
            .step_by(8)
            .flat_map(|r0| (0..cpr).map(move |ch| (r0, ch)))
            .map(|(r0, ch)| {
                let offs = std::array::from_fn(|l| b.chunk_address(r0 + (l as u32 % 8), ch));
                WarpRequest::new(x1, offs).cost()
            })
            .sum();
        core = Some(stats.into());
    }
    (x4, core)
}

pub fn run_tma(a: TmaArgs) -> anyhow::Result<ExitCode> {
    let (rows, cols) = parse_tile(&a.r#box).map_err(|_| {
        anyhow::anyhow!(
            "bad box '{}'; expected ROWSxCOLS, each 1..={} elements, e.g. 64x64",
            tilelab::text::value(&a.r#box),
            tilelab::sim::tma::MAX_BOX_DIM
        )
    })?;
    let eb = parse_dtype(&a.dtype)?;
    let sw = TmaSwizzle::parse(&a.swizzle)?;
    let b = TmaBox::new(rows, cols, eb, sw, a.base)?;
    let chunks = b.smem_chunks();
    let lines: Vec<Vec<Option<ChunkRef>>> = chunks
        .chunks(8)
        .map(|l| {
            l.iter()
                .map(|c| c.map(|(row, chunk)| ChunkRef { row, chunk }))
                .collect()
        })
        .collect();
    let (x4, core) = readback_costs(&b);
    if let Some(path) = &a.svg {
        let nlines = lines.len() as u32;
        let width = lines.iter().map(Vec::len).max().unwrap_or(0) as u32;
        let label = |r: u32, c: u32| {
            lines[r as usize]
                .get(c as usize)
                .copied()
                .flatten()
                .map_or(String::new(), |x| format!("{},{}", x.row, x.chunk))
        };
        let group = |r: u32, c: u32| {
            lines[r as usize]
                .get(c as usize)
                .copied()
                .flatten()
                .map_or(0, |x| x.chunk as usize + 1)
        };
        let svg = tilelab::viz::fragment_maps(&[tilelab::viz::FragmentMap {
            title: format!(
                "TMA box {rows}x{cols} {} swizzle {sw}: shared memory from {} (128-byte lines x 16-byte chunks) -> box row,chunk",
                a.dtype, a.base
            ),
            rows: nlines,
            cols: width,
            label: &label,
            group: &group,
        }]);
        std::fs::write(path, svg)
            .with_context(|| format!("cannot write SVG to '{}'", tilelab::text::path(path)))?;
    }
    if a.json {
        out::emit_json(&TmaReport {
            r#box: [rows, cols],
            dtype: a.dtype.clone(),
            elem_bytes: eb,
            swizzle: sw.to_string(),
            cu_swizzle: sw.cu_name().to_string(),
            base: a.base,
            size_bytes: b.size_bytes(),
            pitch: b.pitch(),
            footprint_bytes: b.footprint_bytes(),
            repeat_bytes: sw.repeat_bytes(),
            cute_bytes: sw.cute_bytes().map(|s| s.to_string()),
            cute_elements: sw.cute_elements(eb).map(|s| s.to_string()),
            lines,
            ldmatrix_x4: x4,
            core_matrices: core,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    outln!(
        o,
        "{} TMA box {rows}x{cols} {} ({eb} B elements), {} -> shared memory at {}",
        out::bold("==>"),
        a.dtype,
        sw.cu_name(),
        a.base
    );
    outln!(
        o,
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes (SASS UTMALDG.2D): {} bytes, {} per row, rows {} bytes apart ({} bytes of shared memory)",
        b.size_bytes(),
        b.inner_bytes(),
        b.pitch(),
        b.footprint_bytes()
    );
    match (sw.cute_bytes(), sw.cute_elements(eb)) {
        (Some(sb), Some(se)) => outln!(
            o,
            "swizzle: 16-byte chunk index ^= (address / 128) mod {} = CuTe {sb} on byte addresses = {se} on {eb}-byte element offsets; repeats every {} bytes",
            1 << sw.bits(),
            sw.repeat_bytes()
        ),
        _ => outln!(o, "no swizzle: rows packed at {} bytes", b.inner_bytes()),
    }
    outln!(
        o,
        "\nshared memory, one 128-byte line per row (8 chunks of 16 bytes = 4 banks each); cell = box row,chunk (- = not written):"
    );
    let mut hdr = String::from("  byte   ");
    for c in 0..8 {
        hdr.push_str(&format!("{:>8}", format!("b{}-{}", 4 * c, 4 * c + 3)));
    }
    outln!(o, "{hdr}");
    for (i, l) in lines.iter().enumerate() {
        let mut s = format!("  {:>6} ", a.base as usize + 128 * i);
        for x in l {
            match x {
                Some(x) => {
                    let cell = format!("{:>8}", format!("{},{}", x.row, x.chunk));
                    s.push_str(&out::paint(&cell, tilelab::palette::unit(x.chunk as usize)));
                }
                None => s.push_str(&format!("{:>8}", "-")),
            }
        }
        outln!(o, "{s}");
    }
    outln!(o, "\nreading it back:");
    match &x4 {
        Some(c) => outln!(
            o,
            "  ldmatrix.x4 over every 16x32-byte block: {} requests, {} wavefronts (ideal {}), {} bank conflicts",
            c.requests,
            c.wavefronts,
            c.ideal,
            c.bank_conflicts
        ),
        None => outln!(
            o,
            "  ldmatrix.x4: needs at least 16 rows and 32 bytes per row"
        ),
    }
    match &core {
        Some(c) => outln!(
            o,
            "  as wgmma core matrices (8 rows x 16 bytes): {} core matrices, {} wavefronts (ideal {}): {}",
            c.requests,
            c.wavefronts,
            c.ideal,
            if c.wavefronts == c.ideal {
                "each core matrix's 8 rows fall in 8 different bank groups"
            } else {
                "some core matrices put several rows in the same banks"
            }
        ),
        None => outln!(o, "  core matrices: need at least 8 rows"),
    }
    out::emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `tilelab sim wgmma`.
#[derive(clap::Args, Debug)]
pub struct WgmmaArgs {
    /// N: 8, 16, ..., 256.
    #[arg(long, default_value_t = 64, value_parser = super::whole::<u32>("8, 16, ..., 256"))]
    pub n: u32,
    /// Major of both operands: k or mn (see --major-a / --major-b).
    #[arg(long, default_value = "k")]
    pub major: String,
    /// Major of A (overrides --major).
    #[arg(long)]
    pub major_a: Option<String>,
    /// Major of B (overrides --major).
    #[arg(long)]
    pub major_b: Option<String>,
    /// Swizzle mode of both operand tiles: none, 32B, 64B, 128B.
    #[arg(long, default_value = "128B")]
    pub swizzle: String,
    /// Input type: f16 or bf16.
    #[arg(long, default_value = "f16")]
    pub dtype: String,
    /// K extent of the shared-memory tiles (a multiple of 16; one wgmma per 16). Default: one
    /// swizzle span of K-major rows (64 for 128B), at least 16.
    #[arg(long, value_parser = super::whole::<u32>("a multiple of 16, at least 16"))]
    pub k: Option<u32>,
    /// Atom order of the tiles: mn (atoms adjacent along M/N first) or k.
    #[arg(long, default_value = "mn")]
    pub order: String,
    /// A from registers (wgmma's register-A form) instead of shared memory.
    #[arg(long)]
    pub a_regs: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct DescJson {
    hex: String,
    start_address: u32,
    leading_byte_offset: u32,
    stride_byte_offset: u32,
    base_offset: u32,
    layout_type: u64,
}

impl DescJson {
    fn new(d: &MatrixDescriptor) -> anyhow::Result<DescJson> {
        Ok(DescJson {
            hex: format!("{:#018x}", d.encode()?),
            start_address: d.start_address,
            leading_byte_offset: d.leading_byte_offset,
            stride_byte_offset: d.stride_byte_offset,
            base_offset: d.base_offset,
            layout_type: wgmma::layout_type(d.swizzle),
        })
    }
}

#[derive(Serialize)]
struct CoreJson {
    mn: u32,
    k: u32,
    rows: [u32; 8],
    wavefronts: u32,
}

#[derive(Serialize)]
struct OperandJson {
    major: String,
    swizzle: String,
    rows: u32,
    k: u32,
    base: u32,
    leading_byte_offset: u32,
    stride_byte_offset: u32,
    core_matrices: Vec<CoreJson>,
}

#[derive(Serialize)]
struct KbJson {
    k_block: u32,
    a: Option<DescJson>,
    b: DescJson,
}

#[derive(Serialize)]
struct AccJson {
    thread: u32,
    reg: u32,
    row: u32,
    col: u32,
}

#[derive(Serialize)]
struct WgCheck {
    max_abs_error: f64,
    values: usize,
}

#[derive(Serialize)]
struct WgmmaReport {
    ptx: String,
    sass: String,
    n: u32,
    dtype: String,
    a: Option<OperandJson>,
    b: OperandJson,
    smem_bytes: u32,
    descriptors: Vec<KbJson>,
    accumulators: Vec<AccJson>,
    check: WgCheck,
}

fn core_matrices(t: &OperandTile) -> Vec<CoreJson> {
    let d = t.descriptor(0);
    let x1 = Instruction::parse("ldmatrix.x1").expect("valid name");
    let mut v = Vec::new();
    for mn in (0..t.mn).step_by(8) {
        for k in (0..16).step_by(8) {
            let rows = d.core_matrix_rows(t.major, mn, k);
            let offs = std::array::from_fn(|l| rows[l % 8]);
            let wavefronts = WarpRequest::new(x1, offs).cost().wavefronts;
            v.push(CoreJson {
                mn,
                k,
                rows,
                wavefronts,
            });
        }
    }
    v
}

fn operand_json(t: &OperandTile) -> OperandJson {
    let (lbo, sbo) = t.offsets();
    OperandJson {
        major: t.major.to_string(),
        swizzle: t.swizzle.to_string(),
        rows: t.mn,
        k: t.k,
        base: t.base,
        leading_byte_offset: lbo,
        stride_byte_offset: sbo,
        core_matrices: core_matrices(t),
    }
}

/// Small integers in [-3, 3] from `(i, j, salt)`.
fn small(i: usize, j: usize, salt: usize) -> f32 {
    ((i * 7 + j * 3 + salt * 5 + (i * j) % 5) % 7) as f32 - 3.0
}

fn bits(v: f32, dtype: MmaDtype) -> u16 {
    match dtype {
        MmaDtype::Bf16 => half::bf16::from_f32(v).to_bits(),
        _ => half::f16::from_f32(v).to_bits(),
    }
}

pub fn run_wgmma(a: WgmmaArgs) -> anyhow::Result<ExitCode> {
    wgmma::check_n(a.n)?;
    let dtype = MmaDtype::parse(&a.dtype)?;
    wgmma::check_dtype(dtype)?;
    let ma = Major::parse(a.major_a.as_deref().unwrap_or(&a.major))?;
    let mb = Major::parse(a.major_b.as_deref().unwrap_or(&a.major))?;
    let sw = TmaSwizzle::parse(&a.swizzle)?;
    let order = match a.order.as_str() {
        "mn" => AtomOrder::MnFirst,
        "k" => AtomOrder::KFirst,
        o => anyhow::bail!("unknown atom order '{o}'; allowed: mn, k"),
    };
    let k = a.k.unwrap_or((sw.span_bytes() / 2).max(16));
    let (ta, tb, smem_bytes) = wgmma::operand_tiles(a.n, ma, mb, sw, k, order)?;
    let mut descriptors = Vec::new();
    for kb in 0..ta.k_blocks() {
        descriptors.push(KbJson {
            k_block: kb,
            a: if a.a_regs {
                None
            } else {
                Some(DescJson::new(&ta.descriptor(kb))?)
            },
            b: DescJson::new(&tb.descriptor(kb))?,
        });
    }
    // Functional check: A (64 x k) and B (n x k) of small integers placed by the tile layouts,
    // executed k-block by k-block through the descriptors, against ndarray's A · B^T.
    let am = Array2::from_shape_fn((64, k as usize), |(i, j)| small(i, j, 0));
    let bm = Array2::from_shape_fn((a.n as usize, k as usize), |(i, j)| small(i, j, 1));
    let mut smem = SharedMemory::zeroed(smem_bytes);
    for ((i, j), v) in am.indexed_iter() {
        smem.write_u16(ta.byte_address(i as u32, j as u32), bits(*v, dtype))?;
    }
    for ((i, j), v) in bm.indexed_iter() {
        smem.write_u16(tb.byte_address(i as u32, j as u32), bits(*v, dtype))?;
    }
    let mut acc = vec![vec![0f32; (a.n / 2) as usize]; wgmma::WARPGROUP_THREADS];
    for kb in 0..ta.k_blocks() {
        let src = if a.a_regs {
            let regs = std::array::from_fn(|t| {
                std::array::from_fn(|r| {
                    (0..2).fold(0u32, |acc, h| {
                        let (m, kk) = wgmma::a_fragment(t as u32, r as u32, h);
                        let v = am[[m as usize, (16 * kb + kk) as usize]];
                        acc | (bits(v, dtype) as u32) << (16 * h)
                    })
                })
            });
            ASource::Registers(Box::new(regs))
        } else {
            ASource::Smem(ta.descriptor(kb), ma)
        };
        wgmma::execute(a.n, dtype, &src, &tb.descriptor(kb), mb, &smem, &mut acc)?;
    }
    let want = am.mapv(f64::from).dot(&bm.mapv(f64::from).t());
    let mut err = 0f64;
    let mut accumulators = Vec::new();
    for (t, regs) in acc.iter().enumerate() {
        for (r, v) in regs.iter().enumerate() {
            let (row, col) = wgmma::acc_fragment(t as u32, r as u32);
            err = err.max((*v as f64 - want[[row as usize, col as usize]]).abs());
            accumulators.push(AccJson {
                thread: t as u32,
                reg: r as u32,
                row,
                col,
            });
        }
    }
    let report = WgmmaReport {
        ptx: wgmma::ptx(a.n, dtype),
        sass: wgmma::sass(a.n, dtype),
        n: a.n,
        dtype: a.dtype.clone(),
        a: (!a.a_regs).then(|| operand_json(&ta)),
        b: operand_json(&tb),
        smem_bytes,
        descriptors,
        accumulators,
        check: WgCheck {
            max_abs_error: err,
            values: acc.len() * (a.n / 2) as usize,
        },
    };
    if a.json {
        out::emit_json(&report)?;
        return Ok(if err == 0.0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(super::EXIT_MISMATCH)
        });
    }
    let mut o = String::new();
    outln!(
        o,
        "{} {}  (SASS {})",
        out::bold("==>"),
        report.ptx,
        report.sass
    );
    outln!(
        o,
        "one warpgroup (4 warps, 128 threads): D (64x{}, f32, {} registers per thread) += A (64x16) * B (16x{}); {} k16 blocks over K = {k}",
        a.n,
        a.n / 2,
        a.n,
        ta.k_blocks()
    );
    let show = |o: &mut String, name: &str, t: &OperandTile, j: &OperandJson| {
        outln!(
            o,
            "\n{} {}: {} x {k} tile at byte {}, {} with swizzle {} ({}); LBO {} B, SBO {} B",
            out::bold(name),
            if name == "A" { "(M x K)" } else { "(N x K)" },
            t.mn,
            t.base,
            t.major,
            t.swizzle,
            t.swizzle
                .cute_bytes()
                .map_or("no swizzle".to_string(), |s| format!("CuTe {s} on bytes")),
            j.leading_byte_offset,
            j.stride_byte_offset
        );
        outln!(
            o,
            "  core matrices of k-block 0 (8 rows x 16 bytes; rows run along {}): row byte addresses, wavefronts if read as one 8-row unit",
            if t.major == Major::K { "MN" } else { "K" }
        );
        for c in j.core_matrices.iter().take(8) {
            let rows: Vec<String> = c.rows.iter().map(|r| r.to_string()).collect();
            outln!(
                o,
                "    ({:>3},{:>2}): [{}]  {} wavefront{}",
                c.mn,
                c.k,
                rows.join(", "),
                c.wavefronts,
                if c.wavefronts == 1 { "" } else { "s" }
            );
        }
        if j.core_matrices.len() > 8 {
            outln!(o, "    ... {} core matrices in all", j.core_matrices.len());
        }
    };
    if let Some(j) = &report.a {
        show(&mut o, "A", &ta, j);
    } else {
        outln!(
            o,
            "\n{} from registers: thread t holds rows 16*(t/32) + g (+8), columns 2q (+1, +8) as mma.m16n8k16's A",
            out::bold("A")
        );
    }
    show(&mut o, "B", &tb, &report.b);
    outln!(
        o,
        "\ndescriptors (bits 0-13 start>>4, 16-29 LBO>>4, 32-45 SBO>>4, 49-51 base offset, 62-63 layout type):"
    );
    for d in &report.descriptors {
        let a_s = d.a.as_ref().map_or("registers".to_string(), |x| {
            format!("{} (start {})", x.hex, x.start_address)
        });
        outln!(
            o,
            "  k-block {}: A {a_s}  B {} (start {})",
            d.k_block,
            d.b.hex,
            d.b.start_address
        );
    }
    outln!(
        o,
        "\naccumulators: thread t (warp w = t/32, g = lane/4, q = lane%4), register i -> D(16w + g + 8*((i%4)/2), 8*(i/4) + 2q + i%2):"
    );
    for t in [0u32, 1, 4, 31, 32, 127] {
        let cells: Vec<String> = (0..(a.n / 2).min(8))
            .map(|r| {
                let (row, col) = wgmma::acc_fragment(t, r);
                format!("d{r}=({row},{col})")
            })
            .collect();
        outln!(o, "  T{t:<3} {}", cells.join(" "));
    }
    outln!(
        o,
        "\nfunctional check (CPU, operands placed by the tile layouts, read back through the descriptors): max |D - A*B^T| = {err} over {} values",
        report.check.values
    );
    out::emit(&o)?;
    Ok(if err == 0.0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_MISMATCH)
    })
}
