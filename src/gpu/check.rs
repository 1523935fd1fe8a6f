//! One row of the verify table ([`Check`]), its [`Verdict`], the counts of a whole run
//! ([`Tally`]), and the machine-readable result ([`Report`], what `verify --json` prints).

use serde::Serialize;
use serde::ser::SerializeStruct;

/// What a check concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The simulator and the hardware agree.
    Pass,
    /// They agree within what was measured before, but the hardware's number is outside the
    /// range seen so far: passes, and says so (e.g. an L1TEX surplus above the measured bound).
    Warn,
    /// They disagree (or the measurement could not be taken although asked for).
    Fail,
    /// Not checked: a tool is missing or the user asked not to measure (`--no-ncu`). Never
    /// counted as passed.
    Skip,
}

/// One row of the verify table.
///
/// JSON (`verify --json`): `{"group", "name", "simulated", "measured", "verdict": "pass" |
/// "warn" | "fail" | "skip", "pass": bool (pass or warn), "skipped": bool, "detail"}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// Group label of the table: fragments, sass, wavefronts, gemm, occupancy, fa2, time, ptx.
    pub group: String,
    /// What was checked.
    pub name: String,
    /// The simulator's answer.
    pub simulated: String,
    /// The hardware's answer.
    pub measured: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why not, or extra facts (first differing element, max error, why skipped).
    pub detail: String,
}

impl Check {
    /// A check that passes when `pass` holds and fails otherwise.
    pub fn new(
        group: &str,
        name: impl Into<String>,
        simulated: impl ToString,
        measured: impl ToString,
        pass: bool,
        detail: impl Into<String>,
    ) -> Check {
        Check {
            group: group.into(),
            name: name.into(),
            simulated: simulated.to_string(),
            measured: measured.to_string(),
            verdict: if pass { Verdict::Pass } else { Verdict::Fail },
            detail: detail.into(),
        }
    }

    /// A check that was not made; `why` says which tool is missing or which flag asked for it.
    pub fn skipped(
        group: &str,
        name: impl Into<String>,
        simulated: impl ToString,
        measured: impl ToString,
        why: impl Into<String>,
    ) -> Check {
        Check {
            verdict: Verdict::Skip,
            ..Check::new(group, name, simulated, measured, true, why)
        }
    }

    /// The same check with another verdict.
    pub fn with_verdict(self, verdict: Verdict) -> Check {
        Check { verdict, ..self }
    }

    /// Passed (with or without a warning).
    pub fn passed(&self) -> bool {
        matches!(self.verdict, Verdict::Pass | Verdict::Warn)
    }
}

impl Serialize for Check {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Check", 8)?;
        st.serialize_field("group", &self.group)?;
        st.serialize_field("name", &self.name)?;
        st.serialize_field("simulated", &self.simulated)?;
        st.serialize_field("measured", &self.measured)?;
        st.serialize_field("verdict", &self.verdict)?;
        st.serialize_field("pass", &(self.passed() || self.verdict == Verdict::Skip))?;
        st.serialize_field("skipped", &(self.verdict == Verdict::Skip))?;
        st.serialize_field("detail", &self.detail)?;
        st.end()
    }
}

/// How many checks of a run ended how.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Passed, warnings included.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Not checked.
    pub skipped: usize,
    /// Passed with a warning (also counted in `passed`).
    pub warnings: usize,
}

impl Tally {
    /// Counts `checks`.
    pub fn of(checks: &[Check]) -> Tally {
        let mut t = Tally::default();
        for c in checks {
            match c.verdict {
                Verdict::Pass => t.passed += 1,
                Verdict::Warn => {
                    t.passed += 1;
                    t.warnings += 1
                }
                Verdict::Fail => t.failed += 1,
                Verdict::Skip => t.skipped += 1,
            }
        }
        t
    }
}

impl std::fmt::Display for Tally {
    /// `N passed, N failed, N skipped`, then `, N warnings` when there are any.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )?;
        match self.warnings {
            0 => Ok(()),
            1 => write!(f, ", 1 warning"),
            n => write!(f, ", {n} warnings"),
        }
    }
}

/// The result of a run, as `tilelab verify --json` prints it and `--json-out FILE` writes it:
///
/// ```json
/// {"device": "NVIDIA H200", "driver_version": 13000, "arch": "sm_90",
///  "date": "2026-11-30T12:00:00Z",
///  "checks": [{"group": "fragments", "name": "ldmatrix.x1 16x16 tile", "simulated": "32 regs",
///              "measured": "32 equal", "verdict": "pass", "pass": true, "skipped": false,
///              "detail": "all registers equal"}],
///  "passed": 156, "failed": 0, "skipped": 0, "warnings": 0}
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct Report<'a> {
    /// Device name.
    pub device: &'a str,
    /// `cuDriverGetVersion` (13000 = CUDA 13.0).
    pub driver_version: i32,
    /// The device's architecture, `sm_XY`.
    pub arch: String,
    /// When the run ended, UTC.
    pub date: String,
    /// Every row, in table order.
    pub checks: &'a [Check],
    /// The counts.
    #[serde(flatten)]
    pub tally: Tally,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipped_and_warned_rows_are_counted_apart() {
        let rows = [
            Check::new("fragments", "a", 1, 1, true, ""),
            Check::new("gemm", "b", 1, 2, false, "differs"),
            Check::skipped("sass", "c", "-", "-", "cuobjdump not found"),
            Check::new("fa2", "d", 1, 1, true, "").with_verdict(Verdict::Warn),
        ];
        let t = Tally::of(&rows);
        assert_eq!((t.passed, t.failed, t.skipped, t.warnings), (2, 1, 1, 1));
        assert_eq!(t.to_string(), "2 passed, 1 failed, 1 skipped, 1 warning");
        let json = serde_json::to_value(&rows[2]).unwrap();
        assert_eq!(json["verdict"], "skip");
        assert_eq!(json["skipped"], true);
        let json = serde_json::to_value(&rows[1]).unwrap();
        assert_eq!(
            (json["verdict"].as_str(), json["pass"].as_bool()),
            (Some("fail"), Some(false))
        );
    }
}
