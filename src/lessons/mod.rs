//! Lessons: one TOML data file per lesson in `lessons/`, loaded into typed [`Lesson`]s and
//! run step by step on [`crate::sim`].
//!
//! A lesson is a short narrative (Markdown), a few named shared-memory [`Tile`]s, the layouts to
//! compare (`row`, `pad:8`, `swizzle:3,3,3`, … as [`crate::sim::layout::Layout::parse`] reads
//! them), and a list of [`Step`]s. Each step is **one warp instruction**: a shared-memory access
//! (`ld.shared.*`, `st.shared.*`, `ldmatrix.*`) whose 32 lane addresses come from a [`LanePattern`]
//! over a tile (the file's `access` table), or an `mma.sync` whose fragments are shown. Each shared-memory step
//! carries the numbers the simulator must give for every layout (wavefronts, bank conflicts);
//! `tests/lessons.rs` checks them all.
//!
//! * [`load`]: parsing and validation, one-line [`LessonError`]s naming file, field and rule;
//! * [`check`]: one checked number of a lesson ([`check::Check`], its status and basis);
//! * [`run`]: a step → [`run::StepRun`] (the `sim` request, its report, lane coordinates,
//!   register contents), plus the checks of a whole lesson ([`run::check_lesson`]);
//! * [`hooks`]: claims about whole kernels (instruction counts, traffic, occupancy), answered
//!   by the counts model of [`crate::sim::counts`], [`crate::sim::traffic`] and
//!   [`crate::sim::occupancy`];
//! * the CUDA C kernel of a lesson, generated from the same data, is GPU code: it lives in
//!   [`crate::gpu::source::lesson`];
//! * [`exercise`]: questions a step asks, answered by the simulator (not by a stored answer);
//!   [`progress`]: which the learner got right, kept in the user's data directory;
//! * [`glossary`]: the terms the lessons use, each with its source (`tilelab explain TERM`);
//! * [`ptx`]: a lesson's real-kernel parts (`[[ptx]]`): PTX fixtures, their launches and the
//!   H200's counters;
//! * [`embedded`]: the lessons built into the binary.
//!
//! This module does file I/O only in [`load::load_dir`], [`load::load_file`] and [`progress`]; `sim` stays pure.
//!
//! # Example
//! ```
//! let lessons = tilelab::lessons::builtin().unwrap();
//! let banks = tilelab::lessons::find(&lessons, "banks").unwrap();
//! let run = tilelab::lessons::run::run_step(banks, 0, 0).unwrap();
//! assert_eq!(run.report.unwrap().wavefront_count(), 1);
//! ```

use std::collections::BTreeMap;
use std::fmt;

use crate::sim::instr::Instruction;
use crate::sim::mma::{MmaDtype, MmaShape, Operand};

pub mod check;
pub mod embedded;
pub mod exercise;
pub mod format;
pub mod glossary;
pub mod hooks;
pub mod load;
pub mod progress;
pub mod ptx;
pub mod run;

pub use load::{LessonError, builtin, find, load_dir, load_file, parse_lesson};

/// The name of the single variant of a lesson that declares no `variants`.
pub const DEFAULT_VARIANT: &str = "all";

/// One lesson, validated.
#[derive(Clone, Debug)]
pub struct Lesson {
    /// Short name used on the command line (`tilelab tui banks`), `[a-z0-9-]+`.
    pub name: String,
    /// Title shown in lists and in the TUI header.
    pub title: String,
    /// One-line summary for `tilelab lessons`.
    pub summary: String,
    /// The claims of the two articles (README, Sources) this lesson covers, in words.
    pub claims: Vec<String>,
    /// CUDA C file, relative to the repository root (`kernels/lesson_banks.cu`), holding one
    /// `extern "C" __global__` kernel `lesson_<name with '_'>` with the same tiling.
    pub kernel: String,
    /// The narrative, Markdown.
    pub narrative: String,
    /// The layouts to compare, the first is the default; applied to every tile without a
    /// fixed layout. Parsed and placed once, when the lesson is loaded.
    pub layouts: Vec<LessonLayout>,
    /// Named variants of the tile program (e.g. `torch`, `triton`); `["all"]` when the file
    /// declares none.
    pub variants: Vec<String>,
    /// Shared-memory tiles, placed one after another (each at a 1024-byte boundary).
    pub tiles: Vec<Tile>,
    /// The warp instructions, in program order (all variants).
    pub steps: Vec<Step>,
    /// Expected instructions by SASS mnemonic for each variant's steps.
    pub sass_counts: BTreeMap<String, BTreeMap<String, u32>>,
    /// Claims about whole kernels, answered by the counts model through [`hooks`].
    pub model: Vec<hooks::ModelClaim>,
    /// Arithmetic facts of the articles (products, ratios) checked as written.
    pub arithmetic: Vec<Arithmetic>,
    /// Real kernels' PTX (`[[ptx]]`): launch files of `tests/data/ptx/` and the counters the
    /// lesson states about them ([`ptx`]).
    pub ptx: Vec<ptx::PtxPart>,
    /// Where the lesson came from (file path or `builtin:NAME.toml`).
    pub source: String,
    /// Glossary terms the whole lesson uses (names or aliases of [`glossary`] entries).
    pub terms: Vec<String>,
}

/// One of a lesson's layout choices (`row`, `pad:8`, `swizzle:3,3,3`), parsed for every tile
/// and placed in shared memory once, when the lesson is loaded ([`LessonLayout::place`]).
///
/// Displays and serialises as the lesson spells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LessonLayout {
    /// The layout string as the lesson file writes it.
    pub spec: String,
    /// Every tile of the lesson under this choice, in [`Lesson::tiles`] order (a tile with a
    /// fixed layout keeps its own).
    pub tiles: Vec<run::PlacedTile>,
}

impl LessonLayout {
    /// Parses `spec` for every tile of `tiles` (a tile's fixed layout wins) and places them by
    /// `sim`'s one placement rule ([`crate::sim::placement`]) on [`run::LESSON_ARCH`].
    /// `source` names the lesson file in errors.
    ///
    /// # Errors
    /// [`LessonError::Invalid`]: a layout that does not parse for a tile (field `tiles[i]`), or
    /// tiles over sm_90's shared memory (field `tiles`).
    pub fn place(tiles: &[Tile], spec: &str, source: &str) -> Result<LessonLayout, LessonError> {
        Ok(LessonLayout {
            spec: spec.to_string(),
            tiles: run::place(tiles, spec, source)?,
        })
    }
}

impl std::fmt::Display for LessonLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.spec)
    }
}

impl serde::Serialize for LessonLayout {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.spec)
    }
}

/// A tile of `rows x cols` elements of `elem_bytes` bytes in shared memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tile {
    /// Name used by steps (`tile = "K"`).
    pub name: String,
    /// Rows, in elements.
    pub rows: u32,
    /// Columns, in elements.
    pub cols: u32,
    /// Bytes per element (1, 2, 4 or 8).
    pub elem_bytes: u32,
    /// A layout string that does not follow the lesson's layout switch, if any.
    pub fixed_layout: Option<String>,
}

/// One warp instruction of a lesson.
#[derive(Clone, Debug)]
pub struct Step {
    /// Short title ("read one row").
    pub title: String,
    /// Markdown shown beside the narrative while this step is current.
    pub note: String,
    /// What the warp executes.
    pub op: StepOp,
    /// The variant this step belongs to (`None`: every variant).
    pub variant: Option<String>,
    /// Expected wavefronts and bank conflicts per layout string (shared-memory steps).
    pub expect: BTreeMap<String, Expect>,
    /// Per layout string, the name of a record of `tests/data/h200_wavefronts.json` with the same
    /// lane addresses (so the hardware measured this very request).
    pub measured: BTreeMap<String, String>,
    /// ldmatrix steps: which registers form which mma operand fragment.
    pub feeds: Vec<Feed>,
    /// Spot checks of single register halves.
    pub checks: Vec<Spot>,
    /// mma steps: expected 32-bit registers per lane of A, B and C/D.
    pub mma_regs: Option<(u32, u32, u32)>,
    /// Glossary terms this step introduces or uses (the TUI's `e` shows their entries).
    pub terms: Vec<String>,
    /// A question the step asks, answered by the simulator ([`exercise::check_answer`]).
    pub exercise: Option<exercise::Exercise>,
}

/// The instruction of a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepOp {
    /// `ld.shared`, `st.shared` or `ldmatrix` over one tile.
    Shared {
        /// The instruction.
        instruction: Instruction,
        /// Index into [`Lesson::tiles`].
        tile: usize,
        /// Where each lane points.
        access: LanePattern,
    },
    /// `mma.sync.aligned.<shape>.row.col.f32.<dtype>.<dtype>.f32`.
    Mma {
        /// m16n8k16 or m16n8k8.
        shape: MmaShape,
        /// f16 or bf16 inputs.
        dtype: MmaDtype,
    },
}

impl Step {
    /// SASS mnemonic (`LDS.128`, `LDSM.16.MT88.4`, `HMMA.16816.F32`).
    pub fn sass(&self) -> &'static str {
        match &self.op {
            StepOp::Shared { instruction, .. } => instruction.sass(),
            StepOp::Mma { shape, dtype } => shape.sass(*dtype),
        }
    }

    /// PTX spelling of the instruction.
    pub fn ptx(&self) -> String {
        match &self.op {
            StepOp::Shared { instruction, .. } => instruction.full_ptx(),
            StepOp::Mma { shape, dtype } => shape.ptx(*dtype),
        }
    }
}

/// How the 32 lanes of a step pick tile elements (a step's `access` in the lesson file; not to
/// be confused with [`crate::sim::access::Access`], the whole-tile read patterns of
/// `tilelab sim bank-conflicts`). Coordinates are `(row, col)` in elements of
/// the step's tile; each lane's access starts at its element and covers `width / elem_bytes`
/// elements along the row (`ldmatrix`: one 16-byte matrix row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LanePattern {
    /// Row-major sweep: lane `i` reads linear element `row*cols + col + i*stride` (stride in
    /// elements, default the elements one access covers), wrapping to the next rows.
    Sweep {
        /// Start row.
        row: u32,
        /// Start column.
        col: u32,
        /// Elements between consecutive lanes.
        stride: u32,
    },
    /// Column read: lane `i` reads `(row + i % period, col)`; `period` 16 gives the
    /// `tid & 15` pattern of FA v1→v2 article (lanes 16-31 repeat lanes 0-15).
    Column {
        /// Start row.
        row: u32,
        /// Column.
        col: u32,
        /// Lanes before the rows repeat (1..=32).
        period: u32,
    },
    /// Every lane reads `(row, col)`.
    Broadcast {
        /// Row.
        row: u32,
        /// Column.
        col: u32,
    },
    /// `ldmatrix`: matrix `m` is the 8x8 block at `matrices[m]` (its top-left element); lane
    /// `8m + r` gives the address of its row `r`.
    Ldmatrix {
        /// Top-left `(row, col)` of each 8x8 matrix, as many as the instruction loads.
        matrices: Vec<(u32, u32)>,
    },
    /// `row = base + Σ per·((lane / div) % modulo)`, same for `col`.
    Affine {
        /// Row expression.
        row: AffineExpr,
        /// Column expression.
        col: AffineExpr,
    },
    /// Explicit coordinates, lane 0 first (32 entries).
    Coords(Vec<(u32, u32)>),
}

/// `base + Σ per·((lane / div) % modulo)` in elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffineExpr {
    /// Constant part.
    pub base: u32,
    /// `(per, div, modulo)` terms.
    pub terms: Vec<(u32, u32, u32)>,
}

impl AffineExpr {
    /// Value for `lane`, saturating at `u32::MAX` (then it is outside every tile, and the step
    /// is rejected as reading outside its tile rather than wrapping to a believable element).
    pub fn eval(&self, lane: u32) -> u32 {
        let v = self
            .terms
            .iter()
            .fold(u64::from(self.base), |acc, &(per, div, m)| {
                let t = u64::from(per) * u64::from(lane.checked_div(div).unwrap_or(0) % m.max(1));
                acc.saturating_add(t)
            });
        saturate(v)
    }
}

impl LanePattern {
    /// The `(row, col)` element each address lane points at; `None` for lanes whose address the
    /// instruction ignores (ldmatrix .x1/.x2 beyond the matrices).
    ///
    /// Computed in u64 and saturated at `u32::MAX`: a pattern reaching past 32 bits yields a
    /// coordinate outside every tile (which the step runner rejects), never a wrapped one.
    pub fn coords(&self, tile: &Tile, elems_per_access: u32) -> [Option<(u32, u32)>; 32] {
        std::array::from_fn(|lane| {
            let l = lane as u32;
            Some(match self {
                LanePattern::Sweep { row, col, stride } => {
                    let s = if *stride == 0 {
                        elems_per_access
                    } else {
                        *stride
                    };
                    let cols = u64::from(tile.cols.max(1));
                    let idx =
                        u64::from(*row) * cols + u64::from(*col) + u64::from(l) * u64::from(s);
                    (saturate(idx / cols), saturate(idx % cols))
                }
                LanePattern::Column { row, col, period } => {
                    (row.saturating_add(l % (*period).max(1)), *col)
                }
                LanePattern::Broadcast { row, col } => (*row, *col),
                LanePattern::Ldmatrix { matrices } => {
                    let (m, r) = (lane / 8, l % 8);
                    let &(r0, c0) = matrices.get(m)?;
                    (r0.saturating_add(r), c0)
                }
                LanePattern::Affine { row, col } => (row.eval(l), col.eval(l)),
                LanePattern::Coords(c) => c[lane],
            })
        })
    }
}

/// `v` as u32, `u32::MAX` when it does not fit.
fn saturate(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Expected numbers of one shared-memory step under one layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Expect {
    /// Wavefronts (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`).
    pub wavefronts: u32,
    /// Bank conflicts (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum`).
    pub conflicts: u32,
}

/// "Registers `regs` of this ldmatrix are the `operand` fragment of an m16n8k16 mma whose
/// operand sits in the tile at `origin`, stored as `storage`."
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feed {
    /// A or B.
    pub operand: Operand,
    /// ldmatrix destination registers, in mma register order (a0.. or b0..).
    pub regs: Vec<u32>,
    /// Tile `(row, col)` of operand element (0, 0).
    pub origin: (u32, u32),
    /// Which operand dimension runs down the tile rows and which along: `mk`/`km` for A
    /// (M×K), `kn`/`nk` for B (K×N; `nk` is B stored N×K, the `.col` layout of `mma.row.col`).
    pub storage: [char; 2],
    /// Whether the registers are expected to match the fragment (lessons show failures too).
    pub matches: bool,
}

/// One expected register half: lane `lane`, register `reg`, half `half` holds element
/// `(row, col)` of the step's tile (ld/ldmatrix) or of `operand` (mma).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spot {
    /// Lane 0..32.
    pub lane: u32,
    /// Register index.
    pub reg: u32,
    /// Part of the register (0 = low 16 bits for b16 data).
    pub half: u32,
    /// mma operand (mma steps only).
    pub operand: Option<Operand>,
    /// Expected row.
    pub row: u32,
    /// Expected column.
    pub col: u32,
}

/// An arithmetic fact quoted from the articles.
#[derive(Clone, Debug, PartialEq)]
pub struct Arithmetic {
    /// What it is.
    pub label: String,
    /// Where it comes from (`FA2 counts article`).
    pub source: String,
    /// The computation.
    pub kind: ArithKind,
    /// The value the article states (or that the lesson derives).
    pub equals: f64,
}

/// The computation of an [`Arithmetic`] fact.
#[derive(Clone, Debug, PartialEq)]
pub enum ArithKind {
    /// Product of the factors.
    Product(Vec<f64>),
    /// Sum of the terms.
    Sum(Vec<f64>),
    /// Mean of the values.
    Mean(Vec<f64>),
    /// `num / den` rounded to `decimals` places.
    Quotient {
        /// Numerator.
        num: f64,
        /// Denominator.
        den: f64,
        /// Decimal places compared.
        decimals: u32,
    },
}

impl Arithmetic {
    /// The computed value (rounded for quotients).
    pub fn value(&self) -> f64 {
        match &self.kind {
            ArithKind::Product(v) => v.iter().product(),
            ArithKind::Sum(v) => v.iter().sum(),
            ArithKind::Mean(v) => v.iter().sum::<f64>() / v.len().max(1) as f64,
            ArithKind::Quotient { num, den, decimals } => {
                let s = 10f64.powi(*decimals as i32);
                (num / den * s).round() / s
            }
        }
    }

    /// Whether the computed value equals [`Self::equals`] (to 1e-9 relative).
    pub fn holds(&self) -> bool {
        let v = self.value();
        (v - self.equals).abs() <= 1e-9 * self.equals.abs().max(1.0)
    }
}

impl fmt::Display for Arithmetic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[f64], sep: &str| {
            v.iter()
                .map(|x| format!("{x}"))
                .collect::<Vec<_>>()
                .join(sep)
        };
        let expr = match &self.kind {
            ArithKind::Product(v) => list(v, "·"),
            ArithKind::Sum(v) => list(v, " + "),
            ArithKind::Mean(v) => format!("mean({})", list(v, ", ")),
            ArithKind::Quotient { num, den, .. } => format!("{num} / {den}"),
        };
        write!(f, "{}: {expr} = {}", self.label, self.value())
    }
}

impl Lesson {
    /// Index into [`Self::layouts`] of the layout spelled `spec` (`None`: the first, 0).
    ///
    /// # Errors
    /// [`LessonError::NotInLesson`] naming `spec` and the lesson's layouts.
    pub fn layout_index(&self, spec: Option<&str>) -> Result<usize, LessonError> {
        let specs: Vec<&str> = self.layouts.iter().map(|l| l.spec.as_str()).collect();
        self.index_in(&specs, spec, "layout")
    }

    /// The layout strings, in order (`row`, `pad:8`, ...).
    pub fn layout_specs(&self) -> Vec<&str> {
        self.layouts.iter().map(|l| l.spec.as_str()).collect()
    }

    /// Index into [`Self::variants`] of the variant `name` (`None`: the first, 0).
    ///
    /// # Errors
    /// [`LessonError::NotInLesson`] naming `name` and the lesson's variants.
    pub fn variant_index(&self, name: Option<&str>) -> Result<usize, LessonError> {
        self.index_in(&self.variants, name, "variant")
    }

    /// Index of `given` in `list` (the lesson's `what`s; `None`: 0).
    fn index_in<T: AsRef<str> + std::fmt::Display>(
        &self,
        list: &[T],
        given: Option<&str>,
        what: &str,
    ) -> Result<usize, LessonError> {
        let Some(s) = given else { return Ok(0) };
        list.iter().position(|x| x.as_ref() == s).ok_or_else(|| {
            LessonError::NotInLesson(format!(
                "{what} '{}' is not one of lesson '{}''s {what}s; allowed: {}",
                crate::text::value(s),
                self.name,
                crate::text::list(list)
            ))
        })
    }

    /// Index into [`Self::steps`] of step `n` (1-based, as the reader counts them) of variant
    /// `variant` (an index into [`Self::variants`]).
    ///
    /// # Errors
    /// [`LessonError::NotInLesson`] when `n` is 0 or past the variant's last step.
    pub fn step_index(&self, variant: usize, n: usize) -> Result<usize, LessonError> {
        let steps = self.steps_of(variant);
        if n == 0 || n > steps.len() {
            return Err(LessonError::NotInLesson(format!(
                "step {n} is not in lesson '{}' (variant '{}'); allowed: 1..={}",
                self.name,
                self.variants[variant],
                steps.len()
            )));
        }
        Ok(steps[n - 1])
    }

    /// Indices into [`Self::steps`] of the steps of `variant` (program order).
    pub fn steps_of(&self, variant: usize) -> Vec<usize> {
        let v = self.variants.get(variant).map(String::as_str);
        self.steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.variant.is_none() || s.variant.as_deref() == v)
            .map(|(i, _)| i)
            .collect()
    }

    /// The step numbers (1-based, of variant `variant`) whose step asks a question.
    pub fn question_steps(&self, variant: usize) -> Vec<usize> {
        self.steps_of(variant)
            .iter()
            .enumerate()
            .filter(|(_, i)| self.steps[**i].exercise.is_some())
            .map(|(n, _)| n + 1)
            .collect()
    }

    /// What the lesson cites ([`crate::sources::cited_in`]): the sources named in its claims,
    /// narrative, step notes and exercise explanations, and the sources of its arithmetic and
    /// model claims.
    pub fn cited_sources(&self) -> Vec<crate::sources::Source> {
        let mut text = self.claims.join("\n");
        text.push_str(&self.narrative);
        for st in &self.steps {
            text.push_str(&st.note);
            if let Some(e) = &st.exercise {
                text.push_str(&e.explanation);
            }
        }
        for a in &self.arithmetic {
            text.push_str(&a.source);
        }
        for m in &self.model {
            text.push_str(&m.source);
        }
        crate::sources::cited_in(&text)
    }

    /// Index of the tile named `name`.
    pub fn tile_index(&self, name: &str) -> Option<usize> {
        self.tiles.iter().position(|t| t.name == name)
    }

    /// The glossary terms of step `step` (an index into [`Self::steps`]) followed by the
    /// lesson's own, each once, in that order.
    pub fn terms_of(&self, step: usize) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        let own = self
            .steps
            .get(step)
            .map(|s| s.terms.as_slice())
            .unwrap_or(&[]);
        for t in own.iter().chain(&self.terms) {
            if !out.iter().any(|o| o.eq_ignore_ascii_case(t)) {
                out.push(t);
            }
        }
        out
    }

    /// The kernel function name in [`Self::kernel`]: `lesson_` + name with `-` as `_`.
    pub fn kernel_function(&self) -> String {
        format!("lesson_{}", self.name.replace('-', "_"))
    }
}
