//! A whole launch, or a part of one: every selected CTA (every cluster holding one) simulated
//! with [`engine::run`], in parallel over a bounded number of threads, summed into one
//! [`Report`] with Nsight Compute's whole-kernel meaning (`smsp__…​.sum` over the launch), and
//! the spread of each counter over the CTAs (min, median, max and the busiest CTA).
//!
//! Memory stays bounded as the grid grows: each thread holds one cluster's run at a time and
//! folds it into its own per-instruction sums; per counter only the distinct values seen (with
//! how many CTAs had each) are kept, at most [`MAX_DISTINCT`] of them, so a regular grid of a
//! million CTAs keeps a handful of numbers. Time is bounded by [`MAX_GRID_CTAS`] and the
//! launch's warp-instruction budget ([`GridOptions::max_launch_instructions`]), on top of each
//! CTA's own [`Launch::max_instructions`].
//!
//! Each CTA starts from the state one `tilelab ptx --cta` run gives it (zero-filled buffers of
//! its own), so a CTA's counts do not depend on the order CTAs run in; a kernel whose CTAs
//! communicate through global memory (a grid-wide flag, a split-K semaphore) is simulated as
//! if each CTA ran alone.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde::Serialize;

use super::decode::Program;
use super::engine::{self, InstStats, Launch, RunResult};
use super::report::{self, PtxError, Report, Totals};

/// The most CTAs one grid run simulates: 16,777,216 (2^24). A GEMM of 128 x 128 tiles on
/// 65,536 x 65,536 has 262,144; the bound keeps a typo (`--grid 2147483647`) from meaning
/// days.
pub const MAX_GRID_CTAS: u64 = 1 << 24;

/// The default [`GridOptions::max_launch_instructions`]: 10^10 warp instructions over the
/// launch (the 4,096-CTA tutorial matmul of docs/perf-cpu.md runs 1.8 x 10^8).
pub const DEFAULT_MAX_LAUNCH_INSTRUCTIONS: u64 = 10_000_000_000;

/// Per counter, the most distinct per-CTA values kept for the median; past it the median is
/// not given (min, max and the busiest CTA still are).
pub const MAX_DISTINCT: usize = 65_536;

/// Which CTAs of the grid to simulate (`--ctas`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CtaSet {
    /// Every CTA.
    All,
    /// One CTA by its `%ctaid`.
    One([u32; 3]),
    /// CTAs by linear index (`x + y·gx + z·gx·gy`, the order CUDA numbers blocks),
    /// `start..end`, end excluded.
    Linear {
        /// First linear index.
        start: u64,
        /// One past the last.
        end: u64,
    },
}

impl std::fmt::Display for CtaSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CtaSet::All => write!(f, "all"),
            CtaSet::One([x, y, z]) => write!(f, "{x},{y},{z}"),
            CtaSet::Linear { start, end } if end - start == 1 => write!(f, "{start}"),
            CtaSet::Linear { start, end } => write!(f, "{start}..={}", end - 1),
        }
    }
}

/// Reads `--ctas`: `all`, `X,Y[,Z]` (one CTA), `N` (one CTA by linear index), `A..B` (linear
/// indices A to B-1) or `A..=B` (A to B).
///
/// # Errors
/// Any other text, a number past u32 (a coordinate) or u64 (an index), an empty range.
pub fn parse_ctas(s: &str) -> Result<CtaSet, String> {
    let t = s.trim();
    let num = |p: &str| -> Result<u64, String> {
        let p = p.trim();
        p.parse::<u64>().map_err(|e| match e.kind() {
            std::num::IntErrorKind::PosOverflow => format!(
                "'{}' is too large: a grid has at most {MAX_GRID_CTAS} CTAs here",
                crate::text::value(p)
            ),
            _ => format!("'{}' is not a whole number", crate::text::value(p)),
        })
    };
    let usage = "expected all, X,Y[,Z] (one CTA), N (a linear index), A..B or A..=B (linear indices x + y*gx + z*gx*gy)";
    if t == "all" {
        return Ok(CtaSet::All);
    }
    if let Some((a, b)) = t.split_once("..") {
        let (b, inclusive) = match b.strip_prefix('=') {
            Some(b) => (b, true),
            None => (b, false),
        };
        let (start, last) = (
            num(a).map_err(|e| format!("{e}; {usage}"))?,
            num(b).map_err(|e| format!("{e}; {usage}"))?,
        );
        let end = if inclusive {
            last.checked_add(1)
                .ok_or_else(|| format!("'{s}' is too large"))?
        } else {
            last
        };
        if end <= start {
            return Err(format!(
                "'{}' selects no CTA: the end must be past the start",
                crate::text::value(s)
            ));
        }
        return Ok(CtaSet::Linear { start, end });
    }
    if t.contains(',') {
        let parts: Vec<&str> = t.split(',').collect();
        if parts.len() > 3 {
            return Err(format!("'{}': {usage}", crate::text::value(s)));
        }
        let mut c = [0u32; 3];
        for (i, p) in parts.iter().enumerate() {
            let v = num(p).map_err(|e| format!("{e}; {usage}"))?;
            c[i] = u32::try_from(v)
                .map_err(|_| format!("'{}' is past the largest grid dimension", p.trim()))?;
        }
        return Ok(CtaSet::One(c));
    }
    match num(t) {
        Ok(n) => Ok(CtaSet::Linear {
            start: n,
            end: n.saturating_add(1),
        }),
        Err(e) if e.contains("too large") => Err(e),
        Err(_) => Err(format!("'{}': {usage}", crate::text::value(s))),
    }
}

/// How a grid run proceeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GridOptions {
    /// Threads simulating clusters at once (1 or more).
    pub jobs: usize,
    /// Warp instructions the whole run may execute before it stops (each CTA is also bounded
    /// by [`Launch::max_instructions`]).
    pub max_launch_instructions: u64,
}

impl Default for GridOptions {
    fn default() -> GridOptions {
        GridOptions {
            jobs: 1,
            max_launch_instructions: DEFAULT_MAX_LAUNCH_INSTRUCTIONS,
        }
    }
}

/// Extra per-CTA counts a caller adds to a grid run (ptxas's SASS replayed per CTA:
/// `tilelab::sass::report::GridSass`): named counters, summed and spread like the PTX ones, and a
/// vector summed element by element.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CtaExtra {
    /// Named counters of this CTA (`("sass LDS", 32)`), in a fixed order per caller.
    pub counters: Vec<(String, u64)>,
    /// Summed element by element over the run (all of equal length).
    pub vector: Vec<u64>,
    /// Why this CTA's extra counts are less exact than the caller's best (shown once).
    pub note: Option<String>,
}

/// What a caller computes for each cluster of a grid run.
pub trait PerCluster: Sync {
    /// The extra counts of each CTA of the cluster run `run` (launched as `launch`), in
    /// `run.ctas` order.
    ///
    /// # Errors
    /// A message naming what failed; the grid run stops with it.
    fn cluster(&self, launch: &Launch, run: &RunResult) -> Result<Vec<CtaExtra>, String>;
}

/// No extra counts.
pub struct NoExtra;

impl PerCluster for NoExtra {
    fn cluster(&self, _: &Launch, run: &RunResult) -> Result<Vec<CtaExtra>, String> {
        Ok(vec![CtaExtra::default(); run.ctas.len()])
    }
}

/// A caller's counts when it has them (`Some`), none otherwise ([`NoExtra`]).
impl<T: PerCluster> PerCluster for Option<T> {
    fn cluster(&self, launch: &Launch, run: &RunResult) -> Result<Vec<CtaExtra>, String> {
        match self {
            Some(t) => t.cluster(launch, run),
            None => NoExtra.cluster(launch, run),
        }
    }
}

/// One counter's spread over the simulated CTAs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Spread {
    /// The smallest per-CTA value.
    pub min: u64,
    /// The median (the lower of the two middle values for an even count); `None` when more
    /// than [`MAX_DISTINCT`] distinct values were seen.
    pub median: Option<u64>,
    /// The largest per-CTA value.
    pub max: u64,
    /// The first CTA (lowest linear index) with the largest value.
    pub max_cta: [u32; 3],
    /// The sum over the CTAs.
    pub sum: u64,
}

/// A counter's per-CTA values as they arrive.
#[derive(Clone, Debug, Default)]
struct Hist {
    /// Value -> CTAs with it; emptied (and `lost` set) past [`MAX_DISTINCT`] values.
    values: BTreeMap<u64, u64>,
    lost: bool,
    /// (value, linear index, ctaid) of the smallest and largest.
    min: Option<(u64, u64)>,
    max: Option<(u64, u64, [u32; 3])>,
    sum: u64,
    n: u64,
}

impl Hist {
    fn add(&mut self, v: u64, idx: u64, cta: [u32; 3]) {
        if !self.lost {
            *self.values.entry(v).or_default() += 1;
            if self.values.len() > MAX_DISTINCT {
                self.values.clear();
                self.lost = true;
            }
        }
        if self.min.is_none_or(|(m, _)| v < m) {
            self.min = Some((v, idx));
        }
        if self
            .max
            .is_none_or(|(m, i, _)| v > m || (v == m && idx < i))
        {
            self.max = Some((v, idx, cta));
        }
        self.sum = self.sum.saturating_add(v);
        self.n += 1;
    }

    fn merge(&mut self, o: Hist) {
        if self.lost || o.lost {
            self.values.clear();
            self.lost = true;
        } else {
            for (v, c) in o.values {
                *self.values.entry(v).or_default() += c;
            }
            if self.values.len() > MAX_DISTINCT {
                self.values.clear();
                self.lost = true;
            }
        }
        if let Some((v, i)) = o.min
            && self.min.is_none_or(|(m, j)| v < m || (v == m && i < j))
        {
            self.min = Some((v, i));
        }
        if let Some((v, i, c)) = o.max
            && self.max.is_none_or(|(m, j, _)| v > m || (v == m && i < j))
        {
            self.max = Some((v, i, c));
        }
        self.sum = self.sum.saturating_add(o.sum);
        self.n += o.n;
    }

    fn spread(&self) -> Spread {
        let median = (!self.lost && self.n > 0).then(|| {
            // The lower middle value: the ((n - 1) / 2)-th, 0-based.
            let want = (self.n - 1) / 2;
            let mut seen = 0u64;
            let mut out = 0;
            for (&v, &c) in &self.values {
                seen += c;
                if seen > want {
                    out = v;
                    break;
                }
            }
            out
        });
        Spread {
            min: self.min.map_or(0, |m| m.0),
            median,
            max: self.max.map_or(0, |m| m.0),
            max_cta: self.max.map_or([0; 3], |m| m.2),
            sum: self.sum,
        }
    }
}

/// The counters whose spread is reported, as named in the JSON, with their per-CTA value.
pub const SPREAD_COUNTERS: [&str; 13] = [
    "warp_instructions",
    "shared_ld_wavefronts",
    "shared_st_wavefronts",
    "shared_ld_bank_conflicts",
    "shared_st_bank_conflicts",
    "LDS",
    "STS",
    "LDSM",
    "STSM",
    "HMMA",
    "GMMA",
    "LDGSTS",
    "tma_ld_bytes",
];

fn counter_values(t: &Totals) -> [u64; 13] {
    let s = &t.sass;
    [
        t.warp_instructions,
        t.shared_ld_wavefronts,
        t.shared_st_wavefronts,
        t.shared_ld_bank_conflicts,
        t.shared_st_bank_conflicts,
        s.LDS,
        s.STS,
        s.LDSM,
        s.STSM,
        s.HMMA,
        s.GMMA,
        s.LDGSTS,
        t.tma_ld_bytes,
    ]
}

/// A grid run's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GridReport {
    /// The summed run: `totals` and `lines` over every simulated CTA (Nsight Compute's
    /// whole-launch counters when every CTA was simulated); `cta` is the first simulated CTA,
    /// `ctas` (per cluster CTA) is empty.
    #[serde(flatten)]
    pub report: Report,
    /// The grid, in CTAs.
    pub grid: [u32; 3],
    /// What `--ctas` selected, as written back (`all`, `0..64`, `1,2,0`).
    pub selected: String,
    /// CTAs simulated (every CTA of each cluster holding a selected one).
    pub ctas_simulated: u64,
    /// Clusters simulated (as many as CTAs without clusters).
    pub clusters_simulated: u64,
    /// Whether every CTA of the grid was simulated (the totals are the launch's).
    pub whole_launch: bool,
    /// Threads that simulated clusters at once (`--jobs`, at most one per cluster).
    pub jobs: usize,
    /// Per counter ([`SPREAD_COUNTERS`], then the caller's extra ones): min, median, max and
    /// the busiest CTA.
    pub spread: BTreeMap<String, Spread>,
    /// The CTA with the most warp instructions (lowest linear index among equals).
    pub busiest_cta: [u32; 3],
    /// Whether the tensor-core results were computed ([`super::dataflow::plan`]):
    /// "skipped: …" (none), "computed for N of M mma/wgmma instructions, …: line N: why the
    /// proof fails" (those whose results a sink needs), "computed: line N: why", or "none (…)".
    pub tensor_core_values: String,
    /// The caller's extra vector, summed ([`CtaExtra::vector`]); not in the JSON.
    #[serde(skip)]
    pub extra_vector: Vec<u64>,
    /// The caller's notes, each once, with how many CTAs gave it; not in the JSON.
    #[serde(skip)]
    pub extra_notes: BTreeMap<String, u64>,
}

/// What one thread has summed so far.
#[derive(Default)]
struct Acc {
    stats: Vec<InstStats>,
    instructions: u64,
    cost_units: u64,
    smem_bytes: u32,
    smem_touched: u32,
    cluster: [u32; 3],
    ctas: u64,
    clusters: u64,
    first: Option<(u64, [u32; 3])>,
    hists: Vec<Hist>,
    extra_names: Vec<String>,
    extra_vector: Vec<u64>,
    notes: BTreeMap<String, u64>,
}

impl Acc {
    fn merge(mut self, o: Acc) -> Acc {
        if self.clusters == 0 {
            return o;
        }
        if o.clusters == 0 {
            return self;
        }
        for (a, b) in self.stats.iter_mut().zip(&o.stats) {
            a.add(b);
        }
        self.instructions = self.instructions.saturating_add(o.instructions);
        self.cost_units = self.cost_units.saturating_add(o.cost_units);
        self.smem_bytes = self.smem_bytes.max(o.smem_bytes);
        self.smem_touched = self.smem_touched.max(o.smem_touched);
        self.ctas += o.ctas;
        self.clusters += o.clusters;
        self.first = match (self.first, o.first) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        };
        if self.extra_names.is_empty() {
            self.extra_names = o.extra_names;
        }
        let n = self.hists.len().max(o.hists.len());
        self.hists.resize_with(n, Hist::default);
        for (a, b) in self.hists.iter_mut().zip(o.hists) {
            a.merge(b);
        }
        if self.extra_vector.len() < o.extra_vector.len() {
            self.extra_vector.resize(o.extra_vector.len(), 0);
        }
        for (a, b) in self.extra_vector.iter_mut().zip(&o.extra_vector) {
            *a = a.saturating_add(*b);
        }
        for (k, v) in o.notes {
            *self.notes.entry(k).or_default() += v;
        }
        self
    }
}

fn linear(c: [u32; 3], grid: [u32; 3]) -> u64 {
    u64::from(c[0]) + u64::from(grid[0]) * (u64::from(c[1]) + u64::from(grid[1]) * u64::from(c[2]))
}

/// The clusters to run, as work items `0..len()`; [`Clusters::item`] gives an item's cluster
/// (its first CTA), or `None` when the item is not one to run.
struct Clusters {
    grid: [u32; 3],
    dims: [u32; 3],
    set: CtaSet,
}

impl Clusters {
    fn new(grid: [u32; 3], dims: [u32; 3], set: &CtaSet) -> Clusters {
        Clusters {
            grid,
            dims,
            set: set.clone(),
        }
    }
    /// Work items: every cluster for `All`, one for `One`, every linear index of a range.
    fn len(&self) -> u64 {
        match &self.set {
            CtaSet::All => (0..3)
                .map(|d| u64::from(self.grid[d] / self.dims[d]))
                .product(),
            CtaSet::One(_) => 1,
            CtaSet::Linear { start, end } => end - start,
        }
    }
    /// The CTA of linear index `l`.
    fn cta(&self, l: u64) -> [u32; 3] {
        let [gx, gy, _] = self.grid.map(u64::from);
        [
            (l % gx) as u32,
            ((l / gx) % gy) as u32,
            (l / (gx * gy)) as u32,
        ]
    }
    /// The first CTA of the cluster holding `c`.
    fn first_of(&self, c: [u32; 3]) -> [u32; 3] {
        std::array::from_fn(|d| c[d] / self.dims[d] * self.dims[d])
    }
    fn item(&self, i: u64) -> Option<[u32; 3]> {
        match &self.set {
            CtaSet::All => {
                let [px, py, _] =
                    std::array::from_fn::<u64, 3, _>(|d| u64::from(self.grid[d] / self.dims[d]));
                let (x, y, z) = (i % px, (i / px) % py, i / (px * py));
                Some([
                    x as u32 * self.dims[0],
                    y as u32 * self.dims[1],
                    z as u32 * self.dims[2],
                ])
            }
            CtaSet::One(c) => Some(self.first_of(*c)),
            CtaSet::Linear { start, end } => {
                // The cluster of CTA `l` runs once: at the lowest index of its CTAs in range.
                let l = start + i;
                let f = self.first_of(self.cta(l));
                let lowest = (0..self.dims[2])
                    .flat_map(|z| {
                        (0..self.dims[1])
                            .flat_map(move |y| (0..self.dims[0]).map(move |x| (x, y, z)))
                    })
                    .map(|(x, y, z)| linear([f[0] + x, f[1] + y, f[2] + z], self.grid))
                    .filter(|k| (*start..*end).contains(k))
                    .min();
                (lowest == Some(l)).then_some(f)
            }
        }
    }
}

/// How many CTAs [`run`] will simulate for `set` (every CTA of each cluster holding a selected
/// one), for a progress bar; 0 when the launch or the selection is refused (as `run` will).
pub fn planned_ctas(prog: &Program, launch: &Launch, set: &CtaSet) -> u64 {
    let Ok((dims, _)) = super::params::check_cluster(
        prog,
        &Launch {
            cta: [0; 3],
            ..launch.clone()
        },
    ) else {
        return 0;
    };
    let c = Clusters::new(launch.grid, dims, set);
    let size: u64 = dims.iter().map(|&d| u64::from(d)).product();
    match set {
        CtaSet::All => c.len() * size,
        _ if c.len() > MAX_GRID_CTAS => 0,
        _ => (0..c.len()).filter(|&i| c.item(i).is_some()).count() as u64 * size,
    }
}

/// Refuses a selection outside the grid or of more than [`MAX_GRID_CTAS`] CTAs, and
/// `jobs` 0.
fn check_selection(set: &CtaSet, grid: [u32; 3], total: u64, jobs: usize) -> Result<(), PtxError> {
    let bad = |m: String| PtxError::Run(engine::RunError::Launch(m));
    match set {
        CtaSet::One(c) if (0..3).any(|d| c[d] >= grid[d]) => {
            return Err(bad(format!(
                "--ctas {set}: the grid is {},{},{} CTAs (coordinates from 0)",
                grid[0], grid[1], grid[2]
            )));
        }
        CtaSet::Linear { end, .. } if *end > total => {
            return Err(bad(format!(
                "--ctas {set}: the grid has {total} CTAs (linear indices 0..{total})"
            )));
        }
        _ => {}
    }
    let wanted = match set {
        CtaSet::All => total,
        CtaSet::One(_) => 1,
        CtaSet::Linear { start, end } => end - start,
    };
    if wanted > MAX_GRID_CTAS {
        return Err(bad(format!(
            "--ctas {set} selects {} CTAs; at most {} are simulated in one run: choose a part with --ctas A..B",
            crate::text::group(wanted),
            crate::text::group(MAX_GRID_CTAS)
        )));
    }
    if jobs == 0 {
        return Err(bad("--jobs 0: at least one thread is needed".into()));
    }
    Ok(())
}

/// Simulates the CTAs `set` selects of `launch`'s grid (every CTA of each cluster holding one;
/// `launch.cta` is ignored) on `opts.jobs` threads (at most one per cluster), calling
/// `progress` with the number of CTAs done after each cluster, and sums them
/// ([`GridReport`]). `extra` adds the caller's per-CTA counts.
///
/// # Errors
/// [`RunError::Launch`]: a selection outside the grid or of more than [`MAX_GRID_CTAS`] CTAs,
/// `opts.jobs` 0, a thread that cannot start; the failing cluster's error (the lowest first
/// CTA of those that failed), prefixed with its CTA; the launch budget spent. A cluster launch
/// the run refuses ([`super::params::check_cluster`]).
///
/// [`RunError::Launch`]: engine::RunError::Launch
pub fn run(
    prog: &Program,
    launch: &Launch,
    set: &CtaSet,
    opts: &GridOptions,
    progress: &(dyn Fn(u64) + Sync),
    extra: &dyn PerCluster,
) -> Result<GridReport, PtxError> {
    let bad = |m: String| PtxError::Run(engine::RunError::Launch(m));
    let grid = launch.grid;
    let total: u64 = grid.iter().map(|&d| u64::from(d)).product();
    let (dims, _) = super::params::check_cluster(
        prog,
        &Launch {
            cta: [0; 3],
            ..launch.clone()
        },
    )?;
    check_selection(set, grid, total, opts.jobs)?;
    let clusters = Clusters::new(grid, dims, set);
    let cluster_size: u32 = dims.iter().product();
    // Counts only: the tensor-core results are skipped where that is proven to change no count.
    let params = super::params::launch_params(prog, launch).unwrap_or_default();
    let proof = super::dataflow::prove_for(prog, &params);
    let plan = super::dataflow::plan(prog, &params);
    let nitems = clusters.len();
    let jobs = opts
        .jobs
        .min(usize::try_from(nitems).unwrap_or(usize::MAX))
        .max(1);
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let executed = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    // (first CTA's linear index, error) of a failed cluster: the lowest is reported.
    type Fail = (u64, PtxError);
    let one = |acc: &mut Acc, first: [u32; 3]| -> Result<(), Fail> {
        let idx = linear(first, grid);
        let l = Launch {
            cta: first,
            ..launch.clone()
        };
        let at = |e: String| {
            (
                idx,
                bad(format!("CTA ({},{},{}): {e}", first[0], first[1], first[2])),
            )
        };
        let r = engine::run_counts_planned(prog, &l, &plan)
            .map_err(|e| (idx, located(e, first, cluster_size > 1)))?;
        let ex = extra.cluster(&l, &r).map_err(at)?;
        let n = executed.fetch_add(r.instructions, Ordering::Relaxed) + r.instructions;
        if n > opts.max_launch_instructions {
            return Err((
                idx,
                bad(format!(
                    "the launch ran more than {} warp instructions (the launch budget) by CTA ({},{},{}); simulate a part with --ctas A..B",
                    crate::text::group(opts.max_launch_instructions),
                    first[0],
                    first[1],
                    first[2]
                )),
            ));
        }
        fold(acc, prog, &r, ex, grid);
        let k = r.ctas.len() as u64;
        progress(done.fetch_add(k, Ordering::Relaxed) + k);
        Ok(())
    };
    // Each thread takes the next cluster from one counter (clusters of a causal or persistent
    // kernel differ in cost; a thread that finishes early takes more) and sums into its own
    // `Acc`; the sums are merged at the end. std's scoped threads with a work counter: rayon
    // would do the same with 5 more crates in the graph (issue #30 bounds it).
    let work = || -> Result<Acc, Fail> {
        let mut acc = Acc::default();
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= nitems {
                break;
            }
            let Some(first) = clusters.item(i) else {
                continue;
            };
            if let Err(f) = one(&mut acc, first) {
                stop.store(true, Ordering::Relaxed);
                return Err(f);
            }
        }
        Ok(acc)
    };
    let outcomes: Vec<Result<Acc, Fail>> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for t in 1..jobs {
            match std::thread::Builder::new()
                .name(format!("tilelab-grid-{t}"))
                .spawn_scoped(s, work)
            {
                Ok(h) => handles.push(h),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return vec![Err((
                        0,
                        bad(format!("cannot start thread {t} of --jobs {jobs}: {e}")),
                    ))];
                }
            }
        }
        let mut out = vec![work()];
        for h in handles {
            out.push(h.join().unwrap_or_else(|_| {
                Err((0, bad("a simulation thread stopped unexpectedly".into())))
            }));
        }
        out
    });
    let mut acc = Acc::default();
    let mut fail: Option<Fail> = None;
    for o in outcomes {
        match o {
            Ok(a) => acc = acc.merge(a),
            Err(f) => {
                if fail.as_ref().is_none_or(|g| f.0 < g.0) {
                    fail = Some(f);
                }
            }
        }
    }
    if let Some((_, e)) = fail {
        return Err(e);
    }
    let mut g = finish(prog, launch, set, jobs, acc, total)?;
    g.tensor_core_values = tensor_core_values(&proof, &plan);
    Ok(g)
}

/// What the report says of the tensor-core values of a counts-only launch ([`GridReport`]).
fn tensor_core_values(proof: &super::dataflow::Proof, plan: &super::dataflow::Plan) -> String {
    let why = match proof {
        super::dataflow::Proof::Fails(why) => why.as_str(),
        _ => "",
    };
    if plan.tensor_core == 0 {
        "none (no mma or wgmma)".into()
    } else if plan.computed == 0 {
        "skipped: no mma/wgmma result reaches an address, guard or branch (ptx::dataflow)".into()
    } else if plan.skips_tensor_core() {
        format!(
            "computed for {} of {} mma/wgmma instructions, the others skipped (their results reach no address, guard or branch): {why}",
            plan.computed, plan.tensor_core
        )
    } else {
        format!("computed: {why}")
    }
}

/// A failed run's error as the grid reports it: a launch error (grid, block, parameters: the
/// same for every CTA) as it is; a cluster's instruction errors and deadlocks as they are (they
/// name their CTA); anything else prefixed with the CTA (or the cluster's first CTA).
fn located(e: engine::RunError, first: [u32; 3], cluster: bool) -> PtxError {
    use engine::RunError as R;
    let [x, y, z] = first;
    match e {
        R::Launch(_) => PtxError::Run(e),
        R::At { .. } | R::Deadlock(_) if cluster => PtxError::Run(e),
        e if cluster => PtxError::Run(R::Launch(format!("the cluster of CTA ({x},{y},{z}): {e}"))),
        e => PtxError::Run(R::Launch(format!("CTA ({x},{y},{z}): {e}"))),
    }
}

/// Adds one cluster's run to `total` (as an `Acc` of its own, merged).
fn fold(total: &mut Acc, prog: &Program, r: &RunResult, ex: Vec<CtaExtra>, grid: [u32; 3]) {
    let mut acc = Acc {
        stats: r.stats.clone(),
        instructions: r.instructions,
        cost_units: r.cost_units,
        smem_bytes: r.smem_bytes,
        smem_touched: r.smem_touched,
        cluster: r.cluster,
        clusters: 1,
        ..Acc::default()
    };
    for (c, e) in r.ctas.iter().zip(ex) {
        let idx = linear(c.cta, grid);
        if acc.first.is_none_or(|(i, _)| idx < i) {
            acc.first = Some((idx, c.cta));
        }
        acc.ctas += 1;
        let mut t = report::cta_totals(prog, &c.stats);
        t.warp_instructions = c.instructions;
        let vals = counter_values(&t);
        let need = vals.len() + e.counters.len();
        if acc.hists.len() < need {
            acc.hists.resize_with(need, Hist::default);
        }
        if acc.extra_names.is_empty() {
            acc.extra_names = e.counters.iter().map(|(n, _)| n.clone()).collect();
        }
        for (h, v) in acc.hists.iter_mut().zip(vals) {
            h.add(v, idx, c.cta);
        }
        for (h, (_, v)) in acc.hists[vals.len()..].iter_mut().zip(&e.counters) {
            h.add(*v, idx, c.cta);
        }
        if acc.extra_vector.len() < e.vector.len() {
            acc.extra_vector.resize(e.vector.len(), 0);
        }
        for (a, b) in acc.extra_vector.iter_mut().zip(&e.vector) {
            *a = a.saturating_add(*b);
        }
        if let Some(n) = e.note {
            *acc.notes.entry(n).or_default() += 1;
        }
    }
    *total = std::mem::take(total).merge(acc);
}

fn finish(
    prog: &Program,
    launch: &Launch,
    set: &CtaSet,
    jobs: usize,
    acc: Acc,
    total: u64,
) -> Result<GridReport, PtxError> {
    let first = acc.first.map_or([0; 3], |f| f.1);
    let run = RunResult {
        stats: if acc.stats.is_empty() {
            vec![InstStats::default(); prog.insts.len()]
        } else {
            acc.stats
        },
        instructions: acc.instructions,
        cost_units: acc.cost_units,
        smem_bytes: acc.smem_bytes,
        smem_touched: acc.smem_touched,
        cluster: if acc.clusters == 0 {
            [1; 3]
        } else {
            acc.cluster
        },
        ctas: Vec::new(),
    };
    let report = report::build(
        prog,
        &Launch {
            cta: first,
            ..launch.clone()
        },
        &run,
    );
    let mut spread = BTreeMap::new();
    let names = SPREAD_COUNTERS
        .iter()
        .map(|s| s.to_string())
        .chain(acc.extra_names.iter().cloned());
    for (name, h) in names.zip(&acc.hists) {
        spread.insert(name, h.spread());
    }
    let busiest_cta = acc.hists.first().and_then(|h| h.max).map_or(first, |m| m.2);
    Ok(GridReport {
        report,
        grid: launch.grid,
        selected: set.to_string(),
        ctas_simulated: acc.ctas,
        clusters_simulated: acc.clusters,
        whole_launch: acc.ctas == total,
        jobs,
        spread,
        busiest_cta,
        tensor_core_values: String::new(),
        extra_vector: acc.extra_vector,
        extra_notes: acc.notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cta_sets_parse_and_refuse() {
        assert_eq!(parse_ctas("all"), Ok(CtaSet::All));
        assert_eq!(parse_ctas("1,2"), Ok(CtaSet::One([1, 2, 0])));
        assert_eq!(parse_ctas("1,2,3"), Ok(CtaSet::One([1, 2, 3])));
        assert_eq!(parse_ctas("7"), Ok(CtaSet::Linear { start: 7, end: 8 }));
        assert_eq!(
            parse_ctas("0..64"),
            Ok(CtaSet::Linear { start: 0, end: 64 })
        );
        assert_eq!(parse_ctas("2..=3"), Ok(CtaSet::Linear { start: 2, end: 4 }));
        let e = parse_ctas("5..5").unwrap_err();
        assert!(e.contains("selects no CTA"), "{e}");
        let e = parse_ctas("1,2,3,4").unwrap_err();
        assert!(e.contains("expected all"), "{e}");
        let e = parse_ctas("4294967296,0").unwrap_err();
        assert!(e.contains("past the largest grid dimension"), "{e}");
        let e = parse_ctas("most").unwrap_err();
        assert!(e.starts_with("'most': expected all"), "{e}");
        let e = parse_ctas("0..=18446744073709551615").unwrap_err();
        assert!(e.contains("too large"), "{e}");
    }

    /// Median, min, max and the busiest CTA from values given by hand; merging two halves
    /// gives what one pass gives.
    #[test]
    fn spread_of_known_values() {
        let vals = [5u64, 1, 9, 9, 3, 7];
        let mut one = Hist::default();
        let (mut a, mut b) = (Hist::default(), Hist::default());
        for (i, &v) in vals.iter().enumerate() {
            let c = [i as u32, 0, 0];
            one.add(v, i as u64, c);
            if i % 2 == 0 { &mut a } else { &mut b }.add(v, i as u64, c);
        }
        a.merge(b);
        for h in [one, a] {
            let s = h.spread();
            // Sorted 1 3 5 7 9 9: the lower middle is 5.
            assert_eq!(
                s,
                Spread {
                    min: 1,
                    median: Some(5),
                    max: 9,
                    max_cta: [2, 0, 0],
                    sum: 34
                }
            );
        }
    }

    #[test]
    fn too_many_distinct_values_drop_only_the_median() {
        let mut h = Hist::default();
        for v in 0..=MAX_DISTINCT as u64 {
            h.add(v, v, [0; 3]);
        }
        let s = h.spread();
        assert_eq!((s.min, s.median, s.max), (0, None, MAX_DISTINCT as u64));
    }
}
