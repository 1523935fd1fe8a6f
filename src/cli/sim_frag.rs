//! `tilelab sim ldmatrix` and `tilelab sim mma`: fragment maps both ways, as the PTX ISA's
//! figures draw them.
//!
//! `--json` of `ldmatrix`: `{"instruction", "sass", "address_lanes": [{"matrix", "row", "lane"}],
//! "fragments": [{"lane", "reg", "half", "matrix", "row", "col"}]}`.
//! `--json` of `mma`: `{"ptx", "sass", "operands": [{"operand", "rows", "cols", "fragments":
//! [{"lane", "reg", "half", "row", "col"}]}], "check": {...}}`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use ndarray::Array2;
use serde::Serialize;
use tilelab::sim::instr::{Instruction, MatrixCount};
use tilelab::sim::ldmatrix;
use tilelab::sim::mma::{self, MmaDtype, MmaShape, Operand};

use super::out;

/// Arguments of `tilelab sim ldmatrix`.
#[derive(clap::Args, Debug)]
pub struct LdmatrixArgs {
    /// Number of 8x8 matrices: 1, 2 or 4 (.x1, .x2, .x4).
    #[arg(long, default_value_t = 4)]
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
    /// Shape: m16n8k16 or m16n8k8.
    #[arg(long, default_value = "m16n8k16")]
    pub shape: String,
    /// Input type of A and B: f16 or bf16 (accumulators are f32).
    #[arg(long, default_value = "f16")]
    pub dtype: String,
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
    let num = MatrixCount::from_count(a.num)
        .ok_or_else(|| anyhow::anyhow!("--num {} is not allowed; allowed: 1, 2, 4", a.num))?;
    let ins = Instruction::Ldmatrix {
        num,
        trans: a.trans,
    };
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
    let ptx = format!(
        "ldmatrix.sync.aligned.m8n8.x{n}{}.shared.b16",
        if a.trans { ".trans" } else { "" }
    );
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
            .with_context(|| format!("cannot write SVG to '{}'", path.display()))?;
    }
    if a.json {
        out::emit_json(&LdsmReport {
            instruction: ins.to_string(),
            ptx,
            sass: ins.sass().to_string(),
            address_lanes: addr,
            fragments: frags,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    outln!(o, "{} {ptx}  (SASS {})", out::bold("==>"), ins.sass());
    outln!(
        o,
        "row addresses: lanes 0-{} (lane 8m+r gives row r of matrix m); every lane receives {n} register(s) of two b16",
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
            o.push_str(&out::paint(&s, out::wavefront_color((lane % 4) as usize)));
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
    half: u32,
    row: u32,
    col: u32,
}

#[derive(Serialize)]
struct OperandReport {
    operand: String,
    rows: u32,
    cols: u32,
    regs_per_lane: u32,
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

/// Executes the mma on packed registers and compares with an ndarray f64 reference; returns
/// the max absolute error. Inputs come from `gen(row, col, operand)`.
pub fn functional_check(
    shape: MmaShape,
    dtype: MmaDtype,
    input: &dyn Fn(usize, usize, u32) -> f32,
) -> anyhow::Result<f64> {
    let dims = |op| {
        let (r, c) = shape.dims(op);
        (r as usize, c as usize)
    };
    let a = Array2::from_shape_fn(dims(Operand::A), |(i, j)| input(i, j, 0));
    let b = Array2::from_shape_fn(dims(Operand::B), |(i, j)| input(i, j, 1));
    let c = Array2::from_shape_fn(dims(Operand::C), |(i, j)| input(i, j, 2));
    let regs = mma::pack(shape, dtype, &a, &b, &c)?;
    let d = mma::execute(shape, dtype, &regs);
    let mut regs_d = regs.clone();
    regs_d.c = d;
    let got = mma::unpack(shape, dtype, Operand::C, &regs_d);
    // Reference in f64 on the rounded inputs.
    let ar = mma::unpack(shape, dtype, Operand::A, &regs).mapv(f64::from);
    let br = mma::unpack(shape, dtype, Operand::B, &regs).mapv(f64::from);
    let want = ar.dot(&br) + c.mapv(f64::from);
    Ok(got
        .iter()
        .zip(want.iter())
        .map(|(g, w)| (*g as f64 - w).abs())
        .fold(0.0, f64::max))
}

pub fn run_mma(a: MmaArgs) -> anyhow::Result<ExitCode> {
    let shape = MmaShape::parse(&a.shape)?;
    let dtype = MmaDtype::parse(&a.dtype)?;
    shape.check_dtype(dtype)?;
    let ops: Vec<Operand> = match a.operand.as_deref() {
        None => vec![Operand::A, Operand::B, Operand::C],
        Some("a" | "A") => vec![Operand::A],
        Some("b" | "B") => vec![Operand::B],
        Some("c" | "C" | "d" | "D") => vec![Operand::C],
        Some(o) => {
            anyhow::bail!("unknown operand '{o}'; allowed: a, b, c (C and D share a layout)")
        }
    };
    let small = functional_check(shape, dtype, &|i, j, o| {
        ((i * 3 + j * 5 + o as usize) % 7) as f32 - 3.0
    })?;
    let mut seed = 0x2545F4914F6CDD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let randoms: Vec<f32> = (0..3 * 256).map(|_| (next() * 2.0 - 1.0) as f32).collect();
    let random = functional_check(shape, dtype, &|i, j, o| {
        randoms[(o as usize * 256 + i * 16 + j) % randoms.len()]
    })?;
    let reports: Vec<OperandReport> = ops
        .iter()
        .map(|&op| {
            let (rows, cols) = shape.dims(op);
            OperandReport {
                operand: op_name(op).to_string(),
                rows,
                cols,
                regs_per_lane: shape.regs(op),
                fragments: (0..32)
                    .flat_map(|lane| {
                        (0..shape.regs(op)).flat_map(move |reg| {
                            (0..shape.halves(op)).map(move |half| {
                                let (row, col) = mma::fragment(shape, op, lane, reg, half);
                                MmaFrag {
                                    lane,
                                    reg,
                                    half,
                                    row,
                                    col,
                                }
                            })
                        })
                    })
                    .collect(),
            }
        })
        .collect();
    if let Some(path) = &a.svg {
        // Per operand: rows, cols and the (lane, reg) owning each element, row-major.
        type Owners = (Operand, u32, u32, Vec<(u32, u32)>);
        let owners: Vec<Owners> = ops
            .iter()
            .map(|&op| {
                let (rows, cols) = shape.dims(op);
                let mut owner = vec![(0u32, 0u32); (rows * cols) as usize];
                for lane in 0..32 {
                    for reg in 0..shape.regs(op) {
                        for h in 0..shape.halves(op) {
                            let (r, c) = mma::fragment(shape, op, lane, reg, h);
                            owner[(r * cols + c) as usize] = (lane, reg);
                        }
                    }
                }
                (op, rows, cols, owner)
            })
            .collect();
        type Cell<'a> = Box<dyn Fn(u32, u32) -> String + 'a>;
        type Colour<'a> = Box<dyn Fn(u32, u32) -> usize + 'a>;
        let fns: Vec<(Cell, Colour)> = owners
            .iter()
            .map(|(op, _, cols, owner)| {
                let letter = op_name(*op).chars().next().unwrap().to_ascii_lowercase();
                let cols = *cols;
                let label: Cell = Box::new(move |r, c| {
                    let (l, reg) = owner[(r * cols + c) as usize];
                    format!("T{l}.{letter}{reg}")
                });
                let group: Colour = Box::new(move |r, c| owner[(r * cols + c) as usize].1 as usize);
                (label, group)
            })
            .collect();
        let maps: Vec<tilelab::viz::FragmentMap> = owners
            .iter()
            .zip(&fns)
            .map(
                |((op, rows, cols, _), (label, group))| tilelab::viz::FragmentMap {
                    title: format!(
                        "{} {} ({rows}x{cols}): element -> lane.register",
                        shape.ptx(dtype),
                        op_name(*op)
                    ),
                    rows: *rows,
                    cols: *cols,
                    label: label.as_ref(),
                    group: group.as_ref(),
                },
            )
            .collect();
        std::fs::write(path, tilelab::viz::fragment_maps(&maps))
            .with_context(|| format!("cannot write SVG to '{}'", path.display()))?;
    }
    if a.json {
        out::emit_json(&MmaReport {
            ptx: shape.ptx(dtype),
            sass: shape.sass(dtype).to_string(),
            operands: reports,
            check: Check {
                small_integer_max_abs_error: small,
                random_max_abs_error: random,
            },
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} {}  (SASS {})",
        out::bold("==>"),
        shape.ptx(dtype),
        shape.sass(dtype)
    );
    println!(
        "D = A·B + C; groupID g = lane/4, threadID_in_group t = lane%4 (PTX ISA mma fragment figures)"
    );
    for (op, rep) in ops.iter().zip(&reports) {
        println!(
            "\n{} ({}x{}, {} register(s) per lane{}): element -> T<lane>.<reg>{}",
            out::bold(op_name(*op)),
            rep.rows,
            rep.cols,
            rep.regs_per_lane,
            if *op == Operand::C {
                " of f32"
            } else {
                " of two 16-bit values"
            },
            if *op == Operand::C {
                ""
            } else {
                " (.h = half)"
            }
        );
        let mut grid = vec![String::new(); (rep.rows * rep.cols) as usize];
        for f in &rep.fragments {
            grid[(f.row * rep.cols + f.col) as usize] = if *op == Operand::C {
                format!("T{}.{}", f.lane, f.reg)
            } else {
                format!(
                    "T{}.{}{}",
                    f.lane,
                    f.reg,
                    if f.half == 0 { "l" } else { "h" }
                )
            };
        }
        print!("      ");
        for c in 0..rep.cols {
            print!("{:>7}", format!("c{c}"));
        }
        println!();
        for r in 0..rep.rows {
            print!("  r{r:<2} ");
            for c in 0..rep.cols {
                let s = format!("{:>7}", grid[(r * rep.cols + c) as usize]);
                let reg = rep
                    .fragments
                    .iter()
                    .find(|f| f.row == r && f.col == c)
                    .map_or(0, |f| f.reg);
                print!("{}", out::paint(&s, out::wavefront_color(reg as usize)));
            }
            println!();
        }
    }
    println!(
        "\nfunctional check (CPU, registers packed by these maps): max |D - reference| = {small} on small integers, {random:.3e} on uniform(-1,1) inputs"
    );
    Ok(ExitCode::SUCCESS)
}
