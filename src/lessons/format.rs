//! The on-disk shape of a lesson file (TOML), as serde sees it before validation.
//!
//! These types mirror the file one to one; [`super::load`] checks them and turns them into the
//! typed [`super::Lesson`]. Every struct denies unknown fields, so a misspelt key is an error
//! naming the key and the keys allowed. The format is documented with an example in
//! `lessons/README.md`.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A whole lesson file.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawLesson {
    /// Identifier (`[a-z0-9-]+`).
    pub name: String,
    /// One-line title.
    pub title: String,
    /// One-line summary for the list.
    pub summary: String,
    /// The NOTES.md claims the lesson covers, in words.
    pub claims: Vec<String>,
    /// Path of the lesson kernel, `kernels/lesson_<name>.cu`.
    pub kernel: String,
    /// Markdown text shown beside the steps.
    pub narrative: String,
    /// Layout strings to compare (`Layout::parse`).
    pub layouts: Vec<String>,
    /// Optional variants (e.g. `torch`, `triton`); steps may belong to one.
    #[serde(default)]
    pub variants: Vec<String>,
    /// The shared-memory tiles.
    pub tiles: Vec<RawTile>,
    /// The warp instructions, in order.
    pub steps: Vec<RawStep>,
    /// Expected SASS mnemonic counts per variant.
    #[serde(default)]
    pub sass_counts: BTreeMap<String, BTreeMap<String, u32>>,
    /// Kernel-level claims checked by the counts model.
    #[serde(default)]
    pub model: Vec<RawModelClaim>,
    /// Arithmetic checks of the narrative's numbers.
    #[serde(default)]
    pub arithmetic: Vec<RawArithmetic>,
    /// Glossary terms the lesson uses.
    #[serde(default)]
    pub terms: Vec<String>,
    /// Real kernels' PTX, by launch file (`super::ptx`).
    #[serde(default)]
    pub ptx: Vec<RawPtxPart>,
}

/// `[[ptx]]`: a PTX fixture's launch and the counters the lesson states.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawPtxPart {
    /// What it shows.
    pub label: String,
    /// The launch file, `tests/data/ptx/NAME.json`.
    pub launch: String,
    /// Markdown.
    #[serde(default)]
    pub note: String,
    /// Stated counters of the launch.
    #[serde(default)]
    pub counters: BTreeMap<String, u64>,
    /// One line's stated numbers.
    pub line: Option<RawLineClaim>,
}

/// `line = { … }` of a `[[ptx]]` part.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawLineClaim {
    /// 1-based PTX line.
    pub line: u32,
    /// Warp-level executions.
    pub executions: u64,
    /// Shared-memory wavefronts.
    pub wavefronts: u64,
    /// Bank conflicts (excessive wavefronts).
    pub conflicts: u64,
    /// The ncu source page that measured them.
    pub source_page: String,
}

/// `[[tiles]]`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawTile {
    /// Identifier (`[a-z0-9-]+`).
    pub name: String,
    /// Rows, in elements.
    pub rows: u32,
    /// Columns, in elements.
    pub cols: u32,
    /// Bytes per element (1, 2, 4 or 8).
    pub elem_bytes: u32,
    /// A fixed layout for this tile (not switched with the lesson).
    #[serde(default)]
    pub layout: Option<String>,
}

/// `[[steps]]`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawStep {
    /// One-line title.
    pub title: String,
    /// Markdown shown with this step.
    #[serde(default)]
    pub note: String,
    /// PTX instruction (`ld.shared.b32`, `ldmatrix.x4.trans`, `mma.m16n8k16.f16`, …).
    pub instruction: String,
    /// Name of the tile the step reads or writes.
    #[serde(default)]
    pub tile: Option<String>,
    /// How lanes address the tile.
    #[serde(default)]
    pub access: Option<RawLanePattern>,
    /// The variant the step belongs to.
    #[serde(default)]
    pub variant: Option<String>,
    /// Expected wavefronts and conflicts per layout.
    #[serde(default)]
    pub expect: BTreeMap<String, RawExpect>,
    /// Per layout, the name of an H200 record with the same addresses.
    #[serde(default)]
    pub measured: BTreeMap<String, String>,
    /// Which mma operand registers an ldmatrix fills.
    #[serde(default)]
    pub feeds: Vec<RawFeed>,
    /// Spot checks of (lane, register, half) → element.
    #[serde(default)]
    pub check: Vec<RawSpot>,
    /// Expected registers per lane of A, B and C (mma steps).
    #[serde(default)]
    pub mma_regs: Option<RawMmaRegs>,
    /// Glossary terms the step uses.
    #[serde(default)]
    pub terms: Vec<String>,
    /// A question for the learner (`[steps.exercise]`).
    #[serde(default)]
    pub exercise: Option<RawExercise>,
}

/// `[steps.exercise]`: a question the simulator answers.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawExercise {
    /// What is asked: the model computes the answer.
    pub kind: RawExerciseKind,
    /// The question, as the learner reads it.
    pub question: String,
    /// The layout the question is asked under (default the lesson's first).
    #[serde(default)]
    pub layout: Option<String>,
    /// `lane_of`: `[row, col]` of the element, elements.
    #[serde(default)]
    pub element: Option<[u32; 2]>,
    /// `lane_of` on mma steps: `A`, `B` or `C`.
    #[serde(default)]
    pub operand: Option<String>,
    /// Shown with a wrong answer.
    #[serde(default)]
    pub hint: Option<String>,
    /// The part of the step's explanation that gives the answer (Markdown): shown only once
    /// the question is answered or its answer revealed, as the step's numbers are.
    #[serde(default)]
    pub explanation: Option<String>,
}

/// `kind` of a `[steps.exercise]`.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RawExerciseKind {
    /// How many wavefronts?
    Wavefronts,
    /// How many bank conflicts?
    Conflicts,
    /// Which layout makes it conflict-free?
    ConflictFree,
    /// Pick the swizzle.
    Swizzle,
    /// Which lane holds element (row, col)?
    LaneOf,
}

/// `access = { kind = ..., ... }`.
#[derive(Deserialize, Debug, Clone)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RawLanePattern {
    /// Consecutive elements in row order from (row, col), `stride` elements apart.
    Sweep {
        /// Row, in elements.
        #[serde(default)]
        row: u32,
        /// Column, in elements.
        #[serde(default)]
        col: u32,
        /// Elements between lanes (default 1).
        #[serde(default)]
        stride: Option<u32>,
    },
    /// Down a column from (row, col); lanes wrap every `period` rows.
    Column {
        /// Row, in elements.
        #[serde(default)]
        row: u32,
        /// Column, in elements.
        #[serde(default)]
        col: u32,
        /// Rows before the lanes wrap.
        #[serde(default)]
        period: Option<u32>,
    },
    /// Every lane at (row, col).
    Broadcast {
        /// Row, in elements.
        #[serde(default)]
        row: u32,
        /// Column, in elements.
        #[serde(default)]
        col: u32,
    },
    /// `ldmatrix`: the (row, col) of each 8x8 matrix; lane 8m+r gives row r of matrix m.
    Ldmatrix {
        /// Top-left (row, col) of each matrix, elements.
        matrices: Vec<[u32; 2]>,
    },
    /// Row and column as affine functions of the lane.
    Affine {
        /// Row, in elements.
        row: RawAffine,
        /// Column, in elements.
        col: RawAffine,
    },
    /// Explicit (row, col) per lane.
    Coords {
        /// (row, col) for lanes 0, 1, …
        coords: Vec<[u32; 2]>,
    },
}

/// `{ base = 0, terms = [{ per = 1, div = 1, modulo = 32 }] }`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawAffine {
    /// Constant term, in elements.
    #[serde(default)]
    pub base: u32,
    /// Per-lane terms.
    #[serde(default)]
    pub terms: Vec<RawTerm>,
}

/// One `per * ((lane / div) % modulo)` term.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawTerm {
    /// Multiplier of the lane term.
    pub per: u32,
    /// Divide the lane index by this first.
    #[serde(default)]
    pub div: Option<u32>,
    /// Take the lane index modulo this first.
    #[serde(default)]
    pub modulo: Option<u32>,
}

/// `expect.<layout> = { wavefronts = .., conflicts = .. }`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawExpect {
    /// Expected wavefronts.
    pub wavefronts: u32,
    /// Expected bank conflicts.
    pub conflicts: u32,
}

/// `[[steps.feeds]]`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawFeed {
    /// mma operand: A, B or C.
    pub operand: String,
    /// Destination registers of the ldmatrix that form the operand.
    pub regs: Vec<u32>,
    /// Top-left (row, col) of the operand in the tile, elements.
    #[serde(default)]
    pub origin: [u32; 2],
    /// How the operand is stored: `mk`, `km`, `nk` or `kn`.
    pub storage: String,
    /// Whether the registers are expected to match the fragment.
    #[serde(default = "yes")]
    pub matches: bool,
}

fn yes() -> bool {
    true
}

/// `[[steps.check]]`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawSpot {
    /// Lane 0-31.
    pub lane: u32,
    /// Register index.
    pub reg: u32,
    /// Part of the register (0 = low 16 bits).
    #[serde(default)]
    pub half: u32,
    /// mma operand: A, B or C.
    #[serde(default)]
    pub operand: Option<String>,
    /// Row, in elements.
    pub row: u32,
    /// Column, in elements.
    pub col: u32,
}

/// `mma_regs = { a = 4, b = 2, c = 4 }`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawMmaRegs {
    /// Expected 32-bit registers per lane of A (4 for m16n8k16, 2 for m16n8k8).
    pub a: u32,
    /// Expected registers per lane of B (2 or 1).
    pub b: u32,
    /// Expected f32 registers per lane of C/D (4).
    pub c: u32,
}

/// `[[model]]`: a claim for the counts model (hook).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawModelClaim {
    /// What is modelled: `counts`, `traffic` or `occupancy`.
    pub kind: String,
    /// What the claim says, in words.
    pub label: String,
    /// Where the numbers come from (article, seed).
    pub source: String,
    /// Parameters of the tiling or problem (names in `lessons/README.md`).
    pub params: BTreeMap<String, toml::Value>,
    /// Expected model answers by name (e.g. `ldsm`, `hmma`, `blocks_per_sm`).
    pub expect: BTreeMap<String, f64>,
    /// Allowed relative difference (default exact).
    #[serde(default)]
    pub tolerance: Option<f64>,
}

/// `[[arithmetic]]`.
#[derive(Deserialize, Debug, Clone)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RawArithmetic {
    /// `label`: the product of `factors` equals `equals` (from `source`).
    Product {
        /// What the number is.
        label: String,
        /// Where it comes from (article, seed).
        source: String,
        /// The factors.
        factors: Vec<f64>,
        /// The stated result.
        equals: f64,
    },
    /// `label`: the sum of `terms` equals `equals` (from `source`).
    Sum {
        /// What the number is.
        label: String,
        /// Where it comes from (article, seed).
        source: String,
        /// The terms.
        terms: Vec<f64>,
        /// The stated result.
        equals: f64,
    },
    /// See `lessons/README.md`.
    Mean {
        /// What the number is.
        label: String,
        /// Where it comes from (article, seed).
        source: String,
        /// See `lessons/README.md`.
        values: Vec<f64>,
        /// The stated result.
        equals: f64,
    },
    /// See `lessons/README.md`.
    Quotient {
        /// What the number is.
        label: String,
        /// Where it comes from (article, seed).
        source: String,
        /// See `lessons/README.md`.
        num: f64,
        /// See `lessons/README.md`.
        den: f64,
        /// The stated result.
        equals: f64,
        /// See `lessons/README.md`.
        #[serde(default)]
        decimals: u32,
    },
}
