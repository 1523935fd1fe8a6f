//! `tilelab sim tma` and `tilelab sim wgmma`: Hopper's tile copy and warpgroup MMA.
//!
//! Both run their instruction through the one executor (`sim::exec::execute`).
//!
//! `--json` of `tma`: `{"ptx", "sass", "tensor_map" (the `--tensor-map` form), "coords",
//! "direction" ("global->shared" or "shared->global"), "box": [rows, cols] (rows: the product of
//! the outer box dims), "dtype", "elem_bytes", "swizzle", "cu_swizzle", "base", "size_bytes",
//! "tx_bytes" (what `mbarrier::complete_tx::bytes` receives: the whole box),
//! "out_of_bounds_elements", "global_bytes_read", "global_bytes_written", "pitch",
//! "footprint_bytes", "repeat_bytes", "cute_bytes", "cute_elements", "lines": [[{"row", "chunk"}
//! or null]] (per 128-byte line of shared memory from the base, which box row and 16-byte chunk
//! each of its chunks holds, null for padding that is not written; a shorter last line for small
//! boxes), "ldmatrix_x4": {"requests", "wavefronts", "ideal", "bank_conflicts"},
//! "core_matrices": the same four}`. With `--bulk`: `{"ptx", "sass",
//! "direction", "base", "bytes", "tx_bytes", "smem_written": [[start, end]]}`.
//!
//! `--json` of `wgmma`: `{"ptx", "sass", "n", "dtype", "dtype_b", "acc", "a": operand, "b":
//! operand, "smem_bytes", "descriptors": [{"k_block", "a", "b", "smem_bytes_read": [A, B],
//! "core_matrices_read", "core_matrix_wavefronts"}] (one per instruction), "accumulators":
//! [{"thread", "reg", "row", "col"}], "check": {"max_abs_error", "values"}}`; an operand is
//! `{"major", "swizzle", "rows", "k", "base", "leading_byte_offset", "stride_byte_offset",
//! "core_matrices": [{"mn", "k", "rows": [8 byte addresses], "wavefronts"}]}` (core matrices of
//! the first instruction; `k` in 2-byte units) and each descriptor is `{"hex", "start_address",
//! "leading_byte_offset", "stride_byte_offset", "base_offset", "layout_type", "swizzle"}`. With
//! `--desc`: that descriptor object alone.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;
use tilelab::sim::instr;
use tilelab::sim::readback::{self, CoreMatrix};
use tilelab::sim::stats::AccessStats;
use tilelab::sim::tma::{TensorMap, TmaBox, TmaDtype, TmaSwizzle};
use tilelab::sim::tma_copy;
use tilelab::sim::wgmma::{
    self, AtomOrder, Major, MatrixDescriptor, OperandTile, WgmmaAcc, WgmmaKind, WgmmaType,
};
use tilelab::sim::wgmma_run::{self, WgmmaProblem, WgmmaRun};

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
    /// Tensor extent as ROWSxCOLS elements (globalDim[1] x globalDim[0]); default the box. A
    /// smaller extent (or --coords past it) leaves part of the box outside the tensor: those
    /// elements are zero-filled, and the mbarrier still receives the whole box's bytes.
    #[arg(long, allow_hyphen_values = true)]
    pub extent: Option<String>,
    /// A tensor map of rank 1..=5 as cuTensorMapEncodeTiled takes it,
    /// DTYPE:DIMS:STRIDES:BOX[:SWIZZLE] (innermost first; strides in bytes for dims 1..),
    /// e.g. f16:512,128:1024:64,128:128B. Replaces --box, --dtype, --swizzle and --extent.
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
    pub tensor_map: Option<String>,
    /// Box start coordinates in elements, innermost first, one per dimension (may be negative
    /// or past the extent). Default 0.
    #[arg(long, allow_hyphen_values = true)]
    pub coords: Option<String>,
    /// The store direction: shared -> global (cp.async.bulk.tensor ... global.shared::cta,
    /// UTMASTG); out-of-bounds elements are not written.
    #[arg(long)]
    pub store: bool,
    /// A bulk copy without a tensor map (cp.async.bulk, UBLKCP) of BYTES bytes between shared
    /// address --base and global memory: no swizzle, 16-byte aligned, a multiple of 16.
    #[arg(long, value_name = "BYTES", value_parser = super::size_u32)]
    pub bulk: Option<u32>,
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
    ptx: String,
    sass: String,
    tensor_map: String,
    coords: Vec<i64>,
    direction: &'static str,
    r#box: [u32; 2],
    dtype: String,
    elem_bytes: u32,
    swizzle: String,
    cu_swizzle: String,
    base: u32,
    size_bytes: u32,
    tx_bytes: u64,
    out_of_bounds_elements: u64,
    global_bytes_read: u64,
    global_bytes_written: u64,
    pitch: u32,
    footprint_bytes: u32,
    repeat_bytes: u32,
    cute_bytes: Option<String>,
    cute_elements: Option<String>,
    lines: Vec<Vec<Option<ChunkRef>>>,
    ldmatrix_x4: Option<CostJson>,
    core_matrices: Option<CostJson>,
}

fn parse_coords(s: Option<&str>, rank: usize) -> anyhow::Result<[i64; 5]> {
    let mut c = [0i64; 5];
    let Some(s) = s else { return Ok(c) };
    let v: Vec<&str> = s.split(',').collect();
    if v.len() != rank {
        anyhow::bail!(
            "--coords '{}' has {} values; allowed: {rank} comma-separated whole numbers (one per tensor dimension, innermost first)",
            tilelab::text::value(s),
            v.len()
        );
    }
    for (i, x) in v.iter().enumerate() {
        c[i] = x
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|x| x.unsigned_abs() <= 1 << 32)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--coords value '{}' is not allowed; allowed: whole numbers from -2^32 to 2^32",
                    tilelab::text::value(x)
                )
            })?;
    }
    Ok(c)
}

fn run_bulk(a: &TmaArgs, bytes: u32) -> anyhow::Result<ExitCode> {
    let r = tma_copy::bulk_copy(a.base, bytes, a.store)?;
    #[derive(Serialize)]
    struct BulkReport {
        ptx: &'static str,
        sass: &'static str,
        direction: &'static str,
        base: u32,
        bytes: u32,
        tx_bytes: u64,
        smem_written: Vec<[u32; 2]>,
    }
    let r = BulkReport {
        ptx: r.ptx,
        sass: r.sass,
        direction: if a.store {
            "shared->global"
        } else {
            "global->shared"
        },
        base: a.base,
        bytes,
        tx_bytes: r.step.tx_bytes,
        smem_written: r
            .step
            .smem_written
            .iter()
            .map(|x| [x.start, x.end])
            .collect(),
    };
    if a.json {
        out::emit_json(&r)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    outln!(
        o,
        "{} {} (SASS {}): {bytes} bytes {} shared memory at {}",
        out::bold("==>"),
        r.ptx,
        r.sass,
        if a.store { "from" } else { "to" },
        a.base
    );
    outln!(
        o,
        "no tensor map: no swizzle, the bytes are contiguous (shared {}..{}); both addresses 16-byte aligned, the size a multiple of 16",
        a.base,
        u64::from(a.base) + u64::from(bytes)
    );
    if a.store {
        outln!(
            o,
            "completes through cp.async.bulk.commit_group / wait_group (bulk group)"
        );
    } else {
        outln!(
            o,
            "mbarrier::complete_tx::bytes: the mbarrier's transaction count receives {} bytes",
            r.tx_bytes
        );
    }
    out::emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

/// The tensor map of `--tensor-map`, or of `--box`, `--dtype`, `--swizzle` and `--extent`, and
/// the element type's name as given.
fn tensor_map_of(a: &TmaArgs) -> anyhow::Result<(TensorMap, String)> {
    if let Some(spec) = &a.tensor_map {
        let m = TensorMap::parse(spec)?;
        return Ok((m, m.dtype.name().to_string()));
    }
    let (rows, cols) = parse_tile(&a.r#box).map_err(|_| {
        anyhow::anyhow!(
            "bad box '{}'; expected ROWSxCOLS, each 1..={} elements, e.g. 64x64",
            tilelab::text::value(&a.r#box),
            tilelab::sim::tma::MAX_BOX_DIM
        )
    })?;
    let eb = parse_dtype(&a.dtype)?;
    let sw = TmaSwizzle::parse(&a.swizzle)?;
    // The measured 2-D rules first, with their messages.
    TmaBox::new(rows, cols, eb, sw, a.base)?;
    let (er, ec) = match &a.extent {
        Some(e) => {
            let (r, c) = parse_tile(e).map_err(|_| {
                anyhow::anyhow!(
                    "bad extent '{}'; expected ROWSxCOLS in elements, e.g. 40x50",
                    tilelab::text::value(e)
                )
            })?;
            (u64::from(r), u64::from(c))
        }
        None => (u64::from(rows), u64::from(cols)),
    };
    let dt = match eb {
        1 => TmaDtype::U8,
        2 if a.dtype == "bf16" => TmaDtype::Bf16,
        2 => TmaDtype::F16,
        4 => TmaDtype::F32,
        _ => TmaDtype::U64,
    };
    let m = tma_copy::tiled_2d(dt, rows, cols, er, ec, sw)?;
    Ok((m, a.dtype.clone()))
}

pub fn run_tma(a: TmaArgs) -> anyhow::Result<ExitCode> {
    if let Some(bytes) = a.bulk {
        if a.tensor_map.is_some() || a.extent.is_some() || a.coords.is_some() || a.svg.is_some() {
            anyhow::bail!(
                "--bulk is a copy without a tensor map; allowed with it: --base, --store, --json (not --tensor-map, --extent, --coords, --svg)"
            );
        }
        return run_bulk(&a, bytes);
    }
    if a.tensor_map.is_some() && a.extent.is_some() {
        anyhow::bail!(
            "--extent is not allowed with --tensor-map; give the tensor's dims in the map (DTYPE:DIMS:STRIDES:BOX[:SWIZZLE])"
        );
    }
    let (map, dtype_name) = tensor_map_of(&a)?;
    let coords = parse_coords(a.coords.as_deref(), map.rank)?;
    let r = tma_copy::tensor_copy(&tma_copy::TensorCopyCase {
        map: &map,
        coords,
        base: a.base,
        store: a.store,
    })?;
    if let Some(path) = &a.svg {
        write_tma_svg(path, &r, map.swizzle, &dtype_name, a.base)?;
    }
    if a.json {
        out::emit_json(&tma_report(&a, &map, &coords, dtype_name, r))?;
        return Ok(ExitCode::SUCCESS);
    }
    out::emit(&tma_text(&a, &map, &coords, &dtype_name, &r))?;
    Ok(ExitCode::SUCCESS)
}

/// `--svg`: the shared-memory grid, one 128-byte line per row, cell = box row,chunk.
fn write_tma_svg(
    path: &std::path::Path,
    r: &tma_copy::TensorCopy,
    sw: TmaSwizzle,
    dtype_name: &str,
    base: u32,
) -> anyhow::Result<()> {
    let (lines, b) = (&r.lines, &r.smem_box);
    let nlines = lines.len() as u32;
    let width = lines.iter().map(Vec::len).max().unwrap_or(0) as u32;
    let cell = |r: u32, c: u32| lines[r as usize].get(c as usize).copied().flatten();
    let label =
        |r: u32, c: u32| cell(r, c).map_or(String::new(), |(row, ch)| format!("{row},{ch}"));
    let group = |r: u32, c: u32| cell(r, c).map_or(0, |(_, ch)| ch as usize + 1);
    let svg = tilelab::viz::fragment_maps(&[tilelab::viz::FragmentMap {
        title: format!(
            "TMA box {}x{} {dtype_name} swizzle {sw}: shared memory from {base} (128-byte lines x 16-byte chunks) -> box row,chunk",
            b.rows, b.cols
        ),
        rows: nlines,
        cols: width,
        label: &label,
        group: &group,
    }]);
    std::fs::write(path, svg)
        .with_context(|| format!("cannot write SVG to '{}'", tilelab::text::path(path)))
}

/// `--json` of a tensor copy.
fn tma_report(
    a: &TmaArgs,
    map: &TensorMap,
    coords: &[i64; 5],
    dtype_name: String,
    r: tma_copy::TensorCopy,
) -> TmaReport {
    let (b, sw, eb) = (&r.smem_box, map.swizzle, map.dtype.bytes());
    let lines = r
        .lines
        .iter()
        .map(|l| {
            l.iter()
                .map(|c| c.map(|(row, chunk)| ChunkRef { row, chunk }))
                .collect()
        })
        .collect();
    TmaReport {
        tensor_map: map.to_string(),
        coords: coords[..map.rank].to_vec(),
        direction: if a.store {
            "shared->global"
        } else {
            "global->shared"
        },
        r#box: [b.rows, b.cols],
        dtype: dtype_name,
        elem_bytes: eb,
        swizzle: sw.to_string(),
        cu_swizzle: sw.cu_name().to_string(),
        base: a.base,
        size_bytes: b.size_bytes(),
        tx_bytes: r.step.tx_bytes,
        out_of_bounds_elements: r.step.out_of_bounds,
        global_bytes_read: r.step.global_read,
        global_bytes_written: r.step.global_written,
        pitch: b.pitch(),
        footprint_bytes: b.footprint_bytes(),
        repeat_bytes: sw.repeat_bytes(),
        cute_bytes: sw.cute_bytes().map(|s| s.to_string()),
        cute_elements: sw.cute_elements(eb).map(|s| s.to_string()),
        lines,
        ldmatrix_x4: r.ldmatrix_x4.map(CostJson::from),
        core_matrices: r.core_matrices.map(CostJson::from),
        ptx: r.ptx,
        sass: r.sass,
    }
}

/// The text of a tensor copy: the instruction, the map, the box's bytes, the swizzle, the
/// shared-memory grid and the read-back costs.
fn tma_text(
    a: &TmaArgs,
    map: &TensorMap,
    coords: &[i64; 5],
    dtype_name: &str,
    r: &tma_copy::TensorCopy,
) -> String {
    let (b, step, sw, eb) = (&r.smem_box, &r.step, map.swizzle, map.dtype.bytes());
    let (ptx, sass) = (&r.ptx, &r.sass);
    let mut o = String::new();
    outln!(
        o,
        "{} TMA box {} {} ({eb} B elements), {} {} shared memory at {}",
        out::bold("==>"),
        map.box_dims[..map.rank]
            .iter()
            .rev()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("x"),
        dtype_name,
        sw.cu_name(),
        if a.store { "<-" } else { "->" },
        a.base
    );
    outln!(
        o,
        "{ptx} (SASS {sass}): {} bytes, {} per row, rows {} bytes apart ({} bytes of shared memory)",
        b.size_bytes(),
        b.inner_bytes(),
        b.pitch(),
        b.footprint_bytes()
    );
    outln!(
        o,
        "tensor map {} at coordinates ({})",
        map,
        coords[..map.rank]
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if step.out_of_bounds > 0 {
        outln!(
            o,
            "{} of the box's {} elements lie outside the tensor: {}",
            step.out_of_bounds,
            map.box_elements(),
            if a.store {
                "the store does not write them".to_string()
            } else {
                format!(
                    "they are zero-filled in shared memory, and mbarrier::complete_tx::bytes still counts the whole box ({} bytes)",
                    step.tx_bytes
                )
            }
        );
    } else if !a.store {
        outln!(
            o,
            "mbarrier::complete_tx::bytes: the mbarrier's transaction count receives the whole box, {} bytes",
            step.tx_bytes
        );
    }
    if a.store {
        outln!(
            o,
            "global bytes written: {} (completes through the bulk group: cp.async.bulk.commit_group / wait_group)",
            step.global_written
        );
    }
    if map.rank > 2 {
        outln!(
            o,
            "rank {}: the outer dimensions stack {} boxes of {} rows each (box row = i1 + boxDim[1] * (i2 + ...))",
            map.rank,
            b.rows / map.box_dims[1],
            map.box_dims[1]
        );
    }
    match (sw.cute_bytes(), sw.cute_elements(eb)) {
        (Some(sb), Some(se)) => outln!(
            o,
            "swizzle: 16-byte chunk index ^= (address / 128) mod {} = CuTe {sb} on byte addresses = {se} on {eb}-byte element offsets; repeats every {} bytes",
            1 << sw.bits(),
            sw.repeat_bytes()
        ),
        _ => outln!(o, "no swizzle: rows packed at {} bytes", b.inner_bytes()),
    }
    smem_grid(&mut o, &r.lines, a.base);
    readback_text(&mut o, r);
    o
}

/// The shared-memory grid: one 128-byte line per row, cell = box row,chunk (`-`: not written).
fn smem_grid(o: &mut String, lines: &[Vec<Option<(u32, u32)>>], base: u32) {
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
        let mut s = format!("  {:>6} ", base as usize + 128 * i);
        for x in l {
            match x {
                Some((row, chunk)) => {
                    let cell = format!("{:>8}", format!("{row},{chunk}"));
                    s.push_str(&out::paint(&cell, tilelab::palette::unit(*chunk as usize)));
                }
                None => s.push_str(&format!("{:>8}", "-")),
            }
        }
        outln!(o, "{s}");
    }
}

/// "reading it back": the `ldmatrix.x4` and core-matrix costs of the box.
fn readback_text(o: &mut String, r: &tma_copy::TensorCopy) {
    outln!(o, "\nreading it back:");
    match &r.ldmatrix_x4 {
        Some(c) => outln!(
            o,
            "  ldmatrix.x4 over every 16x32-byte block: {} requests, {} wavefronts (ideal {}), {} bank conflicts",
            c.requests,
            c.wavefronts,
            c.ideal,
            c.conflicts
        ),
        None => outln!(
            o,
            "  ldmatrix.x4: needs at least 16 rows and 32 bytes per row"
        ),
    }
    match &r.core_matrices {
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
}

/// Arguments of `tilelab sim wgmma`.
#[derive(clap::Args, Debug)]
pub struct WgmmaArgs {
    /// N: 8, 16, ..., 256 (s8/u8: 8, 16, 24, 32, 48, ..., 256).
    #[arg(long, default_value_t = 64, value_parser = super::whole::<u32>("8, 16, ..., 256"))]
    pub n: u32,
    /// Major of both operands: k or mn (see --major-a / --major-b; mn only for f16/bf16).
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
    /// Input type of A and B: f16, bf16, tf32, e4m3, e5m2, s8, u8 (see --dtype-b).
    #[arg(long, default_value = "f16")]
    pub dtype: String,
    /// Input type of B when it differs from A (e4m3 x e5m2, s8 x u8).
    #[arg(long)]
    pub dtype_b: Option<String>,
    /// Accumulator type: f32, f16 (f16 and FP8 inputs) or s32 (s8/u8). Default: f32, s32 for
    /// integer inputs.
    #[arg(long)]
    pub acc: Option<String>,
    /// K extent of the shared-memory tiles in elements (a multiple of the instruction's K: 16
    /// for f16/bf16, 8 for tf32, 32 for 8-bit types). Default: one swizzle span of K-major rows
    /// (128 bytes for 128B), at least one instruction.
    #[arg(long, value_parser = super::whole::<u32>("a multiple of the instruction's K"))]
    pub k: Option<u32>,
    /// Atom order of the tiles: mn (atoms adjacent along M/N first) or k.
    #[arg(long, default_value = "mn")]
    pub order: String,
    /// Shared-memory byte address of A's tile (B follows it): a multiple of the swizzle repeat;
    /// the tiles must stay within the descriptor's 14-bit address field (262128 bytes).
    #[arg(long, value_name = "BYTES", value_parser = super::size_u32, default_value_t = 0, allow_negative_numbers = true)]
    pub base: u32,
    /// A from registers (wgmma's register-A form) instead of shared memory.
    #[arg(long)]
    pub a_regs: bool,
    /// Decode this 64-bit matrix descriptor (hex 0x... or decimal) and print its fields
    /// instead of running a problem.
    #[arg(long, value_name = "DESCRIPTOR", allow_hyphen_values = true)]
    pub desc: Option<String>,
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
    swizzle: String,
}

impl DescJson {
    fn of(d: &MatrixDescriptor, bits: u64) -> DescJson {
        DescJson {
            hex: format!("{bits:#018x}"),
            start_address: d.start_address,
            leading_byte_offset: d.leading_byte_offset,
            stride_byte_offset: d.stride_byte_offset,
            base_offset: d.base_offset,
            layout_type: wgmma::layout_type(d.swizzle),
            swizzle: d.swizzle.to_string(),
        }
    }
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
    core_matrices: Vec<CoreMatrix>,
}

#[derive(Serialize)]
struct KbJson {
    k_block: u32,
    a: Option<DescJson>,
    b: DescJson,
    smem_bytes_read: [u32; 2],
    core_matrices_read: usize,
    core_matrix_wavefronts: u32,
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
    dtype_b: String,
    acc: String,
    a: Option<OperandJson>,
    b: OperandJson,
    smem_bytes: u32,
    descriptors: Vec<KbJson>,
    accumulators: Vec<AccJson>,
    check: WgCheck,
}

fn operand_json(t: &OperandTile, k: u32) -> OperandJson {
    let (lbo, sbo) = t.offsets();
    OperandJson {
        major: t.major.to_string(),
        swizzle: t.swizzle.to_string(),
        rows: t.mn,
        k,
        base: t.base,
        leading_byte_offset: lbo,
        stride_byte_offset: sbo,
        core_matrices: readback::operand_core_matrices(t),
    }
}

fn parse_u64(s: &str) -> anyhow::Result<u64> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(&h.replace('_', ""), 16),
        None => t.replace('_', "").parse::<u64>(),
    };
    r.map_err(|_| {
        anyhow::anyhow!(
            "descriptor '{}' is not a 64-bit number; allowed: hex 0x0..=0xffffffffffffffff or decimal",
            tilelab::text::value(s)
        )
    })
}

fn run_desc(text: &str, json: bool) -> anyhow::Result<ExitCode> {
    let bits = parse_u64(text)?;
    let d = MatrixDescriptor::decode(bits);
    let j = DescJson::of(&d, bits);
    if json {
        out::emit_json(&j)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    outln!(o, "{} wgmma matrix descriptor {}", out::bold("==>"), j.hex);
    outln!(
        o,
        "  start address     bits  0-13: {:>6} (>>4 = {})",
        d.start_address,
        d.start_address >> 4
    );
    outln!(
        o,
        "  leading byte off  bits 16-29: {:>6} bytes (LBO)",
        d.leading_byte_offset
    );
    outln!(
        o,
        "  stride byte off   bits 32-45: {:>6} bytes (SBO)",
        d.stride_byte_offset
    );
    outln!(o, "  base offset       bits 49-51: {:>6}", d.base_offset);
    outln!(
        o,
        "  layout type       bits 62-63: {:>6} (swizzle {})",
        j.layout_type,
        d.swizzle
    );
    if d.base_offset != 0 {
        outln!(
            o,
            "  note: base offset {} is not modelled by the executor (tiles aligned to the swizzle repeat use 0)",
            d.base_offset
        );
    }
    out::emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

/// The problem of the flags, refused in the order the flags are read.
fn wgmma_problem(a: &WgmmaArgs) -> anyhow::Result<WgmmaProblem> {
    let ta_t = WgmmaType::parse(&a.dtype)?;
    let tb_t = match &a.dtype_b {
        Some(t) => WgmmaType::parse(t)?,
        None => ta_t,
    };
    let acc = match &a.acc {
        Some(s) => WgmmaAcc::parse(s)?,
        None if ta_t.is_integer() => WgmmaAcc::S32,
        None => WgmmaAcc::F32,
    };
    let kind = WgmmaKind::new(a.n, acc, ta_t, tb_t, false)?;
    let ma = Major::parse(a.major_a.as_deref().unwrap_or(&a.major))?;
    let mb = Major::parse(a.major_b.as_deref().unwrap_or(&a.major))?;
    wgmma_run::check_majors(&kind, [ma, mb])?;
    let swizzle = TmaSwizzle::parse(&a.swizzle)?;
    let order = match a.order.as_str() {
        "mn" => AtomOrder::MnFirst,
        "k" => AtomOrder::KFirst,
        o => anyhow::bail!("unknown atom order '{o}'; allowed: mn, k"),
    };
    Ok(WgmmaProblem {
        kind,
        majors: [ma, mb],
        swizzle,
        order,
        k: a.k,
        base: a.base,
        a_regs: a.a_regs,
    })
}

pub fn run_wgmma(a: WgmmaArgs) -> anyhow::Result<ExitCode> {
    if let Some(d) = &a.desc {
        return run_desc(d, a.json);
    }
    let p = wgmma_problem(&a)?;
    let run = wgmma_run::run(&p)?;
    let report = wgmma_report(&p, &run);
    let code = if run.check.max_abs_error == 0.0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_MISMATCH)
    };
    if a.json {
        out::emit_json(&report)?;
        return Ok(code);
    }
    out::emit(&wgmma_text(&p, &run, &report))?;
    Ok(code)
}

/// `--json` of a wgmma problem.
fn wgmma_report(p: &WgmmaProblem, run: &WgmmaRun) -> WgmmaReport {
    let kind = p.kind;
    let [ta, tb] = &run.tiles;
    let descriptors = run
        .descriptors
        .iter()
        .zip(&run.check.steps)
        .map(|(d, step)| KbJson {
            k_block: d.k_block,
            a: d.a.map(|(x, bits)| DescJson::of(&x, bits)),
            b: DescJson::of(&d.b.0, d.b.1),
            smem_bytes_read: step.smem_bytes,
            core_matrices_read: step.core_matrices.len(),
            core_matrix_wavefronts: step.wavefronts,
        })
        .collect();
    let accumulators: Vec<AccJson> = (0..wgmma::WARPGROUP_THREADS as u32)
        .flat_map(|t| (0..kind.d_regs()).map(move |r| (t, r)))
        .map(|(t, r)| {
            let (row, col) = kind.d_fragment(t, r, 0);
            AccJson {
                thread: t,
                reg: r,
                row,
                col,
            }
        })
        .collect();
    WgmmaReport {
        ptx: kind.ptx(),
        sass: instr::wgmma_sass(&kind),
        n: kind.n,
        dtype: kind.a.name().to_string(),
        dtype_b: kind.b.name().to_string(),
        acc: kind.acc.name().to_string(),
        a: (!p.a_regs).then(|| operand_json(ta, run.k)),
        b: operand_json(tb, run.k),
        smem_bytes: run.smem_bytes,
        descriptors,
        accumulators,
        check: WgCheck {
            max_abs_error: run.check.max_abs_error,
            values: run.check.values,
        },
    }
}

/// One operand tile's lines: its placement, offsets and first core matrices.
fn operand_text(o: &mut String, name: &str, t: &OperandTile, j: &OperandJson, k: u32, e: u32) {
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
        "  core matrices of the first instruction (8 rows x 16 bytes; rows run along {}): row byte addresses, wavefronts if read as one 8-row unit",
        if t.major == Major::K { "MN" } else { "K" }
    );
    for c in j.core_matrices.iter().take(8) {
        let rows: Vec<String> = c.rows.iter().map(|r| r.to_string()).collect();
        outln!(
            o,
            "    ({:>3},{:>2}): [{}]  {} wavefront{}",
            c.mn,
            c.k * 2 / e,
            rows.join(", "),
            c.wavefronts,
            if c.wavefronts == 1 { "" } else { "s" }
        );
    }
    if j.core_matrices.len() > 8 {
        outln!(o, "    ... {} core matrices in all", j.core_matrices.len());
    }
}

/// The text of a wgmma problem: the form, the operands, the descriptors, the accumulator map
/// and the functional check.
fn wgmma_text(p: &WgmmaProblem, run: &WgmmaRun, report: &WgmmaReport) -> String {
    let (kind, k, [ta, tb]) = (p.kind, run.k, &run.tiles);
    let (e, kk, acc) = (kind.a.bytes(), kind.k(), kind.acc);
    let regs_per = kind.d_regs();
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
        "one warpgroup (4 warps, 128 threads): D (64x{}, {}, {} registers per thread) {}= A (64x{kk}) * B ({kk}x{}); {} instructions over K = {k}",
        kind.n,
        acc.name(),
        regs_per,
        "+",
        kind.n,
        k / kk
    );
    if let Some(j) = &report.a {
        operand_text(&mut o, "A", ta, j, k, e);
    } else {
        outln!(
            o,
            "\n{} from registers: thread t holds rows 16*(t/32) + g (+8), K {} per register from {}q (+{} for registers 2, 3)",
            out::bold("A"),
            4 / e,
            4 / e,
            kk / 2
        );
    }
    operand_text(&mut o, "B", tb, &report.b, k, e);
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
            "  instruction {}: A {a_s}  B {} (start {}); read {} + {} bytes, {} core matrices, {} wavefronts",
            d.k_block,
            d.b.hex,
            d.b.start_address,
            d.smem_bytes_read[0],
            d.smem_bytes_read[1],
            d.core_matrices_read,
            d.core_matrix_wavefronts
        );
    }
    outln!(
        o,
        "\naccumulators: thread t (warp w = t/32, g = lane/4, q = lane%4), register i -> D(16w + g + 8*((i%4)/2), 8*(i/4) + 2q + i%2){}:",
        if acc == WgmmaAcc::F16 {
            " for the f32 layout; an f16 register j holds f32 registers 2j, 2j+1"
        } else {
            ""
        }
    );
    for t in [0u32, 1, 4, 31, 32, 127] {
        let cells: Vec<String> = (0..regs_per.min(8))
            .map(|r| {
                let (row, col) = kind.d_fragment(t, r, 0);
                format!("d{r}=({row},{col})")
            })
            .collect();
        outln!(o, "  T{t:<3} {}", cells.join(" "));
    }
    outln!(
        o,
        "\nfunctional check (CPU, operands placed by the tile layouts, executed through the descriptors): max |D - A*B^T| = {} over {} values",
        run.check.max_abs_error,
        report.check.values
    );
    o
}
