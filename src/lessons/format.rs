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
    pub name: String,
    pub title: String,
    pub summary: String,
    pub claims: Vec<String>,
    pub kernel: String,
    pub narrative: String,
    pub layouts: Vec<String>,
    #[serde(default)]
    pub variants: Vec<String>,
    pub tiles: Vec<RawTile>,
    pub steps: Vec<RawStep>,
    #[serde(default)]
    pub sass_counts: BTreeMap<String, BTreeMap<String, u32>>,
    #[serde(default)]
    pub model: Vec<RawModelClaim>,
    #[serde(default)]
    pub arithmetic: Vec<RawArithmetic>,
}

/// `[[tiles]]`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawTile {
    pub name: String,
    pub rows: u32,
    pub cols: u32,
    pub elem_bytes: u32,
    #[serde(default)]
    pub layout: Option<String>,
}

/// `[[steps]]`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawStep {
    pub title: String,
    #[serde(default)]
    pub note: String,
    pub instruction: String,
    #[serde(default)]
    pub tile: Option<String>,
    #[serde(default)]
    pub access: Option<RawAccess>,
    #[serde(default)]
    pub variant: Option<String>,
    #[serde(default)]
    pub expect: BTreeMap<String, RawExpect>,
    #[serde(default)]
    pub measured: BTreeMap<String, String>,
    #[serde(default)]
    pub feeds: Vec<RawFeed>,
    #[serde(default)]
    pub check: Vec<RawSpot>,
    #[serde(default)]
    pub mma_regs: Option<RawMmaRegs>,
}

/// `access = { kind = ..., ... }`.
#[derive(Deserialize, Debug, Clone)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RawAccess {
    Sweep {
        #[serde(default)]
        row: u32,
        #[serde(default)]
        col: u32,
        #[serde(default)]
        stride: Option<u32>,
    },
    Column {
        #[serde(default)]
        row: u32,
        #[serde(default)]
        col: u32,
        #[serde(default)]
        period: Option<u32>,
    },
    Broadcast {
        #[serde(default)]
        row: u32,
        #[serde(default)]
        col: u32,
    },
    Ldmatrix {
        matrices: Vec<[u32; 2]>,
    },
    Affine {
        row: RawAffine,
        col: RawAffine,
    },
    Coords {
        coords: Vec<[u32; 2]>,
    },
}

/// `{ base = 0, terms = [{ per = 1, div = 1, modulo = 32 }] }`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawAffine {
    #[serde(default)]
    pub base: u32,
    #[serde(default)]
    pub terms: Vec<RawTerm>,
}

/// One `per * ((lane / div) % modulo)` term.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawTerm {
    pub per: u32,
    #[serde(default)]
    pub div: Option<u32>,
    #[serde(default)]
    pub modulo: Option<u32>,
}

/// `expect.<layout> = { wavefronts = .., conflicts = .. }`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawExpect {
    pub wavefronts: u32,
    pub conflicts: u32,
}

/// `[[steps.feeds]]`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawFeed {
    pub operand: String,
    pub regs: Vec<u32>,
    #[serde(default)]
    pub origin: [u32; 2],
    pub storage: String,
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
    pub lane: u32,
    pub reg: u32,
    #[serde(default)]
    pub half: u32,
    #[serde(default)]
    pub operand: Option<String>,
    pub row: u32,
    pub col: u32,
}

/// `mma_regs = { a = 4, b = 2, c = 4 }`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawMmaRegs {
    pub a: u32,
    pub b: u32,
    pub c: u32,
}

/// `[[model]]`: a claim for the counts model (hook).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawModelClaim {
    pub kind: String,
    pub label: String,
    pub source: String,
    pub params: BTreeMap<String, toml::Value>,
    pub expect: BTreeMap<String, f64>,
    #[serde(default)]
    pub tolerance: Option<f64>,
}

/// `[[arithmetic]]`.
#[derive(Deserialize, Debug, Clone)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RawArithmetic {
    Product {
        label: String,
        source: String,
        factors: Vec<f64>,
        equals: f64,
    },
    Sum {
        label: String,
        source: String,
        terms: Vec<f64>,
        equals: f64,
    },
    Mean {
        label: String,
        source: String,
        values: Vec<f64>,
        equals: f64,
    },
    Quotient {
        label: String,
        source: String,
        num: f64,
        den: f64,
        equals: f64,
        #[serde(default)]
        decimals: u32,
    },
}
