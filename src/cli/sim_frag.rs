//! `tilelab sim ldmatrix`, `tilelab sim stmatrix` and `tilelab sim mma`: fragment maps both ways, as the PTX ISA's
//! figures draw them.
//!
//! `--json` of `ldmatrix`: `{"instruction", "sass", "address_lanes": [{"matrix", "row", "lane"}],
//! "fragments": [{"lane", "reg", "half", "matrix", "row", "col"}]}`.
//! `--json` of `mma`: `{"ptx", "sass", "operands": [{"operand", "rows", "cols", "fragments":
//! [{"lane", "reg", "half", "row", "col"}]}], "check": {...}}`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;
use tilelab::sim::instr::{Instruction, MatrixCount};
use tilelab::sim::ldmatrix;
use tilelab::sim::mma::{MmaAcc, MmaDtype, MmaKind, MmaShape, Operand};

use super::out;

/// Arguments of `tilelab sim ldmatrix`.
#[derive(clap::Args, Debug)]
pub struct LdmatrixArgs {
    /// Number of 8x8 matrices: 1, 2 or 4 (.x1, .x2, .x4).
    #[arg(long, default_value_t = 4, value_parser = super::whole::<u32>("1, 2, 4"))]
    pub num: u32,
    /// The .trans form (each lane receives a column pair instead of a row pair).
    #[arg(long)]
    pub trans: bool,
    /// Write the element -> (lane, half) grid of all matrices as SVG to FILE.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tilelab sim mma`.
#[derive(clap::Args, Debug)]
pub struct MmaArgs {
    /// Shape: m16n8k16, m16n8k8, m16n8k32 or m16n8k4.
    #[arg(long, default_value = "m16n8k16")]
    pub shape: String,
    /// Input type of A and B: f16, bf16, s8 or u8 (m16n8k16); f16, bf16 or tf32 (m16n8k8);
    /// s8, u8, e4m3 or e5m2 (m16n8k32); tf32 (m16n8k4). Default: f16, s8 for m16n8k32, tf32
    /// for m16n8k4.
    #[arg(long)]
    pub dtype: Option<String>,
    /// Accumulator type of C and D: f32 or f16 (f16, e4m3, e5m2 inputs), f32 (bf16, tf32),
    /// s32 (s8, u8). Default: s32 for s8/u8, f32 otherwise.
    #[arg(long)]
    pub acc: Option<String>,
    /// Show only one operand: a, b or c (C and D share a layout).
    #[arg(long)]
    pub operand: Option<String>,
    /// Write the element grids of A, B and C/D as SVG to FILE.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct LdsmFrag {
    lane: u32,
    reg: u32,
    half: u32,
    matrix: u32,
    row: u32,
    col: u32,
}

#[derive(Serialize)]
struct AddrLane {
    matrix: u32,
    row: u32,
    lane: u32,
}

#[derive(Serialize)]
struct LdsmReport {
    instruction: String,
    ptx: String,
    sass: String,
    address_lanes: Vec<AddrLane>,
    fragments: Vec<LdsmFrag>,
}

pub fn run_ldmatrix(a: LdmatrixArgs) -> anyhow::Result<ExitCode> {
    run_matrix_frag(a, false)
}

/// `tilelab sim stmatrix`: the same maps as ldmatrix, read as "register -> where it is written".
pub fn run_stmatrix(a: LdmatrixArgs) -> anyhow::Result<ExitCode> {
    run_matrix_frag(a, true)
}

fn run_matrix_frag(a: LdmatrixArgs, store: bool) -> anyhow::Result<ExitCode> {
    let num = MatrixCount::from_count(a.num)
        .ok_or_else(|| anyhow::anyhow!("--num {} is not allowed; allowed: 1, 2, 4", a.num))?;
    let ins = Instruction::Ldmatrix {
        num,
        trans: a.trans,
    };
    let ins = if store {
        Instruction::Stmatrix {
            num,
            trans: a.trans,
        }
    } else {
        ins
    };
    let (name, sass) = (ins.to_string(), ins.sass().to_string());
    let n = num.count() as u32;
    let frags: Vec<LdsmFrag> = (0..32)
        .flat_map(|lane| {
            (0..n).flat_map(move |reg| {
                (0..2).map(move |half| {
                    let e = ldmatrix::fragment(a.trans, lane, reg, half);
                    LdsmFrag {
                        lane,
                        reg,
                        half,
                        matrix: e.matrix,
                        row: e.row,
                        col: e.col,
                    }
                })
            })
        })
        .collect();
    let addr: Vec<AddrLane> = (0..n)
        .flat_map(|m| {
            (0..8).map(move |r| AddrLane {
                matrix: m,
                row: r,
                lane: ldmatrix::address_lane(m, r),
            })
        })
        .collect();
    let ptx = ins.full_ptx();
    let (verb, arrow) = if store {
        ("sends", "register -> element written")
    } else {
        ("receives", "element -> lane T.half")
    };
    if let Some(path) = &a.svg {
        // Matrices side by side: 8 rows x 8n columns.
        let label = |r: u32, c: u32| {
            let (lane, h) = ldmatrix::owner(a.trans, r, c % 8);
            format!("T{lane}.{h}")
        };
        let group = |_r: u32, c: u32| (c / 8) as usize;
        let svg = tilelab::viz::fragment_maps(&[tilelab::viz::FragmentMap {
            title: format!(
                "{ptx}: element (row, col) of matrices 0..{n} -> lane T.half (register = matrix)"
            ),
            rows: 8,
            cols: 8 * n,
            label: &label,
            group: &group,
        }]);
        std::fs::write(path, svg)
            .with_context(|| format!("cannot write SVG to '{}'", tilelab::text::path(path)))?;
    }
    if a.json {
        out::emit_json(&LdsmReport {
            instruction: name,
            ptx,
            sass,
            address_lanes: addr,
            fragments: frags,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    outln!(o, "{} {ptx}  (SASS {sass})", out::bold("==>"));
    outln!(
        o,
        "row addresses: lanes 0-{} (lane 8m+r gives row r of matrix m); every lane {verb} {n} register(s) of two b16 ({arrow})",
        8 * n - 1
    );
    outln!(
        o,
        "\nlane -> elements: register rK holds two elements (row, col) of matrix K: half 0 (low 16 bits), then half 1"
    );
    for lane in 0..32u32 {
        let mut line = format!("  T{lane:<2} (g={} t={})", lane / 4, lane % 4);
        for reg in 0..n {
            let e0 = ldmatrix::fragment(a.trans, lane, reg, 0);
            let e1 = ldmatrix::fragment(a.trans, lane, reg, 1);
            line.push_str(&format!(
                "  r{reg}: ({},{}) ({},{})",
                e0.row, e0.col, e1.row, e1.col
            ));
        }
        outln!(o, "{line}");
    }
    outln!(
        o,
        "\nelement -> lane: one 8x8 matrix (the same map for every register), rows x columns, cell = T<lane>.<half>"
    );
    o.push_str("      ");
    for c in 0..8 {
        o.push_str(&format!("{:>6}", format!("c{c}")));
    }
    outln!(o);
    for r in 0..8 {
        o.push_str(&format!("  row{r}"));
        for c in 0..8 {
            let (lane, h) = ldmatrix::owner(a.trans, r, c);
            let s = format!("{:>6}", format!("T{lane}.{h}"));
            o.push_str(&out::paint(&s, tilelab::palette::unit((lane % 4) as usize)));
        }
        outln!(o);
    }
    out::emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct MmaFrag {
    lane: u32,
    reg: u32,
    /// Position in the register, 0 = lowest bits: the half for 16-bit elements, the byte for
    /// 8-bit ones, 0 for 32-bit ones.
    half: u32,
    row: u32,
    col: u32,
}

#[derive(Serialize)]
struct OperandReport {
    operand: String,
    /// PTX element type (`f16`, `e4m3`, `s32`, …).
    dtype: String,
    rows: u32,
    cols: u32,
    regs_per_lane: u32,
    elements_per_register: u32,
    fragments: Vec<MmaFrag>,
}

#[derive(Serialize)]
struct Check {
    small_integer_max_abs_error: f64,
    random_max_abs_error: f64,
}

#[derive(Serialize)]
struct MmaReport {
    ptx: String,
    sass: String,
    /// Where the SASS name comes from when tilelab has not disassembled it; null otherwise.
    sass_note: Option<String>,
    acc: String,
    operands: Vec<OperandReport>,
    check: Check,
}

fn op_name(op: Operand) -> &'static str {
    match op {
        Operand::A => "A",
        Operand::B => "B",
        Operand::C => "C/D",
    }
}

/// Resolves `--shape`, `--dtype` and `--acc` into a checked [`MmaKind`], with the defaults
/// (f16, or s8 for m16n8k32; the input type's usual accumulator).
fn mma_kind(a: &MmaArgs) -> anyhow::Result<MmaKind> {
    let shape = MmaShape::parse(&a.shape)?;
    let dtype = match &a.dtype {
        Some(d) => MmaDtype::parse(d)?,
        None => shape.default_dtype(),
    };
    shape.check_dtype(dtype)?;
    let acc = match &a.acc {
        Some(c) => MmaAcc::parse(c)?,
        None => dtype.default_acc(),
    };
    Ok(MmaKind::new(shape, dtype, acc)?)
}

/// Label of one register position in the grids: `l`/`h` for halves, `b0`..`b3` for bytes,
/// nothing for 32-bit elements.
fn pos_label(per_reg: u32, pos: u32) -> String {
    match per_reg {
        1 => String::new(),
        2 => (if pos == 0 { "l" } else { "h" }).to_string(),
        _ => format!("b{pos}"),
    }
}

/// One operand's shape, register counts and fragment ([`MmaKind::fragments`]).
fn operand_report(kind: &MmaKind, op: Operand) -> OperandReport {
    let (rows, cols) = kind.shape.dims(op);
    let dtype = match op {
        Operand::C => kind.acc.name(),
        _ => kind.dtype.name(),
    };
    OperandReport {
        operand: op_name(op).to_string(),
        dtype: dtype.to_string(),
        rows,
        cols,
        regs_per_lane: kind.regs(op),
        elements_per_register: kind.elems_per_reg(op),
        fragments: kind
            .fragments(op)
            .into_iter()
            .map(|f| MmaFrag {
                lane: f.lane,
                reg: f.reg,
                half: f.pos,
                row: f.row,
                col: f.col,
            })
            .collect(),
    }
}

/// The label of the (lane, register, position) owning each element of an operand and its
/// register (for colour), row-major.
fn operand_grid(rep: &OperandReport) -> (Vec<String>, Vec<u32>) {
    let n = (rep.rows * rep.cols) as usize;
    let (mut label, mut reg) = (vec![String::new(); n], vec![0u32; n]);
    for f in &rep.fragments {
        let at = (f.row * rep.cols + f.col) as usize;
        label[at] = format!(
            "T{}.{}{}",
            f.lane,
            f.reg,
            pos_label(rep.elements_per_register, f.half)
        );
        reg[at] = f.reg;
    }
    (label, reg)
}

type Grid = (Vec<String>, Vec<u32>);

pub fn run_mma(a: MmaArgs) -> anyhow::Result<ExitCode> {
    let kind = mma_kind(&a)?;
    let ops: Vec<Operand> = match a.operand.as_deref() {
        None => vec![Operand::A, Operand::B, Operand::C],
        Some("a" | "A") => vec![Operand::A],
        Some("b" | "B") => vec![Operand::B],
        Some("c" | "C" | "d" | "D") => vec![Operand::C],
        Some(o) => {
            anyhow::bail!("unknown operand '{o}'; allowed: a, b, c (C and D share a layout)")
        }
    };
    let check = tilelab::sim::selfcheck::mma_check(kind)?;
    let reports: Vec<OperandReport> = ops.iter().map(|&op| operand_report(&kind, op)).collect();
    let grids: Vec<Grid> = reports.iter().map(operand_grid).collect();
    if let Some(path) = &a.svg {
        write_mma_svg(path, &kind, &reports, &grids)?;
    }
    if a.json {
        out::emit_json(&MmaReport {
            ptx: kind.ptx(),
            sass: kind.sass().to_string(),
            sass_note: kind.sass_note().map(str::to_string),
            acc: kind.acc.name().to_string(),
            operands: reports,
            check: Check {
                small_integer_max_abs_error: check.small_integer_max_abs_error,
                random_max_abs_error: check.random_max_abs_error,
            },
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    out::emit(&mma_text(&kind, &reports, &grids, &check))?;
    Ok(ExitCode::SUCCESS)
}

/// `--svg`: the element grids of the operands shown, cell = lane.register.
fn write_mma_svg(
    path: &std::path::Path,
    kind: &MmaKind,
    reports: &[OperandReport],
    grids: &[Grid],
) -> anyhow::Result<()> {
    type Cell<'a> = Box<dyn Fn(u32, u32) -> String + 'a>;
    type Colour<'a> = Box<dyn Fn(u32, u32) -> usize + 'a>;
    let fns: Vec<(Cell, Colour)> = reports
        .iter()
        .zip(grids)
        .map(|(rep, (label, reg))| {
            let cols = rep.cols;
            let cell: Cell = Box::new(move |r, c| label[(r * cols + c) as usize].clone());
            let colour: Colour = Box::new(move |r, c| reg[(r * cols + c) as usize] as usize);
            (cell, colour)
        })
        .collect();
    let maps: Vec<tilelab::viz::FragmentMap> = reports
        .iter()
        .zip(&fns)
        .map(|(rep, (cell, colour))| tilelab::viz::FragmentMap {
            title: format!(
                "{} {} ({}x{}): element -> lane.register",
                kind.ptx(),
                rep.operand,
                rep.rows,
                rep.cols
            ),
            rows: rep.rows,
            cols: rep.cols,
            label: cell.as_ref(),
            group: colour.as_ref(),
        })
        .collect();
    std::fs::write(path, tilelab::viz::fragment_maps(&maps))
        .with_context(|| format!("cannot write SVG to '{}'", tilelab::text::path(path)))
}

/// The text of `sim mma`: the form, each operand's element grid, the functional check.
fn mma_text(
    kind: &MmaKind,
    reports: &[OperandReport],
    grids: &[Grid],
    check: &tilelab::sim::selfcheck::MmaCheck,
) -> String {
    let mut o = String::new();
    outln!(
        o,
        "{} {}  (SASS {}{})",
        out::bold("==>"),
        kind.ptx(),
        kind.sass(),
        kind.sass_note().map_or(String::new(), |n| format!("; {n}"))
    );
    outln!(
        o,
        "D = A·B + C; groupID g = lane/4, threadID_in_group t = lane%4 (PTX ISA §9.7.14.5 mma fragment figures)"
    );
    for (rep, (label, reg)) in reports.iter().zip(grids) {
        let per_reg = rep.elements_per_register;
        outln!(
            o,
            "\n{} ({}x{}, {} register(s) per lane of {} {}): element -> T<lane>.<reg>{}",
            out::bold(&rep.operand),
            rep.rows,
            rep.cols,
            rep.regs_per_lane,
            per_reg,
            rep.dtype,
            match per_reg {
                1 => "",
                2 => " l|h (low or high half)",
                _ => " b0-b3 (byte)",
            }
        );
        let w = 1 + label.iter().map(String::len).max().unwrap_or(0).max(4);
        o.push_str("      ");
        for c in 0..rep.cols {
            o.push_str(&format!("{:>w$}", format!("c{c}")));
        }
        outln!(o);
        for r in 0..rep.rows {
            o.push_str(&format!("  r{r:<2} "));
            for c in 0..rep.cols {
                let at = (r * rep.cols + c) as usize;
                let s = format!("{:>w$}", label[at]);
                o.push_str(&out::paint(&s, tilelab::palette::unit(reg[at] as usize)));
            }
            outln!(o);
        }
    }
    outln!(
        o,
        "\nfunctional check (CPU, registers packed by these maps, reference from the input matrices): max |D - reference| = {} on small integers, {:.3e} on uniform(-1,1) inputs rounded to {}",
        check.small_integer_max_abs_error,
        check.random_max_abs_error,
        kind.dtype.name()
    );
    o
}
