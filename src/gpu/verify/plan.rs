//! What a verify run will do, resolved from the flags (ripgrep's second argument layer):
//! lessons loaded, record files read, fuzz requests generated. The cheap checks
//! ([`Options::check`]: names, counts, files) come before the GPU is looked for; the work that
//! takes time or memory ([`Plan::new`]) after, so a machine without a GPU says so at once.

use std::path::PathBuf;

use anyhow::Context as _;

use crate::gpu::fuzz;
use crate::lessons::{self, Lesson};
use crate::measured::records::{self, Record};

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
    /// Run only these groups (names of [`super::GROUPS`]); empty: all.
    pub groups: Vec<String>,
    /// Random requests for each of the `stmatrix` and `cp.async` groups (seed [`Self::seed`]).
    pub hopper_fuzz: usize,
    /// Where the Hopper groups write what they measured (one JSON file per group), if anywhere.
    pub save_hopper: Option<PathBuf>,
}

/// A resolved run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The lessons whose kernels are checked.
    pub lessons: Vec<Lesson>,
    /// Every warp request the wavefront checks measure under ncu, in order: the built-in H200
    /// records (named `h200.*`), the `--records` files, one request per (lesson step, layout)
    /// (`lesson.*`; stmatrix steps go to [`Self::stmatrix_records`]), the `--fuzz` requests
    /// (`fuzz.<seed>.*`).
    pub records: Vec<Record>,
    /// Do not run Nsight Compute (its checks are skipped).
    pub no_ncu: bool,
    /// Where disagreeing wavefront records are written.
    pub mismatches: PathBuf,
    /// Where every measured wavefront record is written.
    pub save_measured: Option<PathBuf>,
    /// The command line (for the provenance of measured files).
    pub command: String,
    /// The groups to run (empty: all).
    pub groups: Vec<String>,
    /// The `stmatrix` group's requests: the structured ones, the lessons' stmatrix steps
    /// (`lesson.*`), then `hopper_fuzz` random ones (`stsm.<seed>.*`).
    pub stmatrix_records: Vec<Record>,
    /// The `cp.async` group's requests (with `global_addresses`): the structured ones, then
    /// `hopper_fuzz` random ones (`cpasync.<seed>.*`).
    pub cp_async_records: Vec<Record>,
    /// Where the Hopper groups write what they measured.
    pub save_hopper: Option<PathBuf>,
    /// The lessons' real kernels (`[[ptx]]` parts), for the `lesson-ptx` group.
    pub lesson_ptx: Vec<super::lesson_ptx::LessonPtx>,
}

impl Options {
    /// The checks of the options that take milliseconds and allocate nothing in proportion to
    /// them: group names, the counts (`--fuzz` at most [`fuzz::MAX_FUZZ`], `--hopper-fuzz` at
    /// most [`fuzz::MAX_HOPPER_FUZZ`]), the lesson name, that each `--records` file is a
    /// regular file under [`crate::textfile::MAX_REPLAY_BYTES`]. `tilelab verify` runs these,
    /// then looks for a GPU, and only then builds the [`Plan`] (which generates and simulates).
    ///
    /// # Errors
    /// The first option that is not allowed, in one line naming it and what is.
    pub fn check(&self) -> anyhow::Result<()> {
        for g in &self.groups {
            if !super::GROUPS.iter().any(|x| x.name == g) {
                anyhow::bail!(
                    "--group '{}' is not a group; allowed: {}",
                    g.escape_default(),
                    super::group_names()
                );
            }
        }
        for (flag, n, max) in [
            ("--fuzz", self.fuzz, fuzz::MAX_FUZZ),
            ("--hopper-fuzz", self.hopper_fuzz, fuzz::MAX_HOPPER_FUZZ),
        ] {
            if n > max {
                anyhow::bail!(
                    "{flag} {n} is not allowed; allowed: 0..={max} requests (each is one launch under Nsight Compute)"
                );
            }
        }
        if let Some(name) = &self.lesson {
            lessons::find(&lessons::builtin()?, name)?;
        }
        for p in &self.records {
            crate::textfile::open_regular(p, crate::textfile::MAX_REPLAY_BYTES, "replay file")
                .with_context(|| format!("cannot read replay file '{}'", crate::text::path(p)))?;
        }
        Ok(())
    }
}

impl Plan {
    /// Resolves the options (checked first by [`Options::check`]).
    ///
    /// # Errors
    /// Those of [`Options::check`]; an unreadable or malformed `--records` file; a lesson step
    /// that cannot be simulated.
    pub fn new(o: &Options) -> anyhow::Result<Plan> {
        o.check()?;
        let mut lessons = lessons::builtin()?;
        if let Some(name) = &o.lesson {
            let one = lessons::find(&lessons, name)?.clone();
            lessons = vec![one];
        }
        let mut recs: Vec<Record> =
            records::measured_h200().context("built-in measured records")?;
        for r in &mut recs {
            r.name = format!("h200.{}", r.name);
        }
        for p in &o.records {
            recs.extend(records::load(p)?);
        }
        // Lesson steps: ld/st/ldmatrix go to the probe of the wavefronts group, stmatrix steps
        // (sm_90) to the stmatrix group.
        let (lesson_stsm, lesson_other): (Vec<Record>, Vec<Record>) =
            super::lessons::requests(&lessons)?
                .into_iter()
                .partition(|r| fuzz::kind_in(&fuzz::STSM_KINDS, &r.instruction).is_some());
        recs.extend(lesson_other);
        recs.extend(fuzz::records(o.fuzz, o.seed));
        let mut stmatrix_records = super::stmatrix::structured();
        stmatrix_records.extend(lesson_stsm);
        stmatrix_records.extend(fuzz::stmatrix_records(o.hopper_fuzz, o.seed));
        let lesson_ptx = super::lesson_ptx::parts(&lessons)?;
        let mut cp_async_records = super::cpasync::structured();
        cp_async_records.extend(fuzz::cp_async_records(o.hopper_fuzz, o.seed));
        Ok(Plan {
            lessons,
            records: recs,
            no_ncu: o.no_ncu,
            mismatches: o.mismatches.clone(),
            save_measured: o.save_measured.clone(),
            command: o.command.clone(),
            groups: o.groups.clone(),
            stmatrix_records,
            cp_async_records,
            save_hopper: o.save_hopper.clone(),
            lesson_ptx,
        })
    }
}
