//! What a verify run will do, resolved from the flags before the GPU is touched (ripgrep's
//! second argument layer): lessons loaded, record files read, fuzz requests generated, so every
//! input error surfaces first.

use std::path::PathBuf;

use anyhow::Context as _;

use crate::gpu::fuzz;
use crate::lessons::{self, Lesson};
use crate::records::{self, Record};

/// The flags of `tilelab verify` that shape the run (what the user typed, checked only by
/// [`Plan::new`]).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Check one lesson (by name) instead of all.
    pub lesson: Option<String>,
    /// Random warp requests to measure beside the recorded ones.
    pub fuzz: usize,
    /// Seed of the random requests.
    pub seed: u64,
    /// Extra replay files whose records are measured too.
    pub records: Vec<PathBuf>,
    /// Do not run Nsight Compute.
    pub no_ncu: bool,
    /// Where disagreeing wavefront records are written (replay format).
    pub mismatches: PathBuf,
    /// Where every measured wavefront record is written (replay format), if anywhere.
    pub save_measured: Option<PathBuf>,
    /// The command line, as the provenance of measured files records it.
    pub command: String,
}

/// A resolved run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The lessons whose kernels are checked.
    pub lessons: Vec<Lesson>,
    /// Every warp request the wavefront checks measure under ncu, in order: the built-in H200
    /// records (named `h200.*`), the `--records` files, one request per (lesson step, layout)
    /// (`lesson.*`), the `--fuzz` requests (`fuzz.<seed>.*`).
    pub records: Vec<Record>,
    /// Do not run Nsight Compute (its checks are skipped).
    pub no_ncu: bool,
    /// Where disagreeing wavefront records are written.
    pub mismatches: PathBuf,
    /// Where every measured wavefront record is written.
    pub save_measured: Option<PathBuf>,
    /// The command line (for the provenance of measured files).
    pub command: String,
}

impl Plan {
    /// Resolves the options.
    ///
    /// # Errors
    /// An unknown lesson name; an unreadable or malformed `--records` file; a lesson step that
    /// cannot be simulated.
    pub fn new(o: &Options) -> anyhow::Result<Plan> {
        let mut lessons = lessons::builtin()?;
        if let Some(name) = &o.lesson {
            let one = lessons::find(&lessons, name)?.clone();
            lessons = vec![one];
        }
        let mut recs: Vec<Record> = serde_json::from_str(records::MEASURED_H200_JSON)
            .context("built-in measured records")?;
        for r in &mut recs {
            r.name = format!("h200.{}", r.name);
        }
        for p in &o.records {
            recs.extend(records::load(p)?);
        }
        recs.extend(super::lessons::requests(&lessons)?);
        recs.extend(fuzz::records(o.fuzz, o.seed));
        Ok(Plan {
            lessons,
            records: recs,
            no_ncu: o.no_ncu,
            mismatches: o.mismatches.clone(),
            save_measured: o.save_measured.clone(),
            command: o.command.clone(),
        })
    }
}
