//! Where a measured data file came from: card, driver, CUDA, tools, date, command, the
//! generator of its requests, and the commit of the binary that measured it.
//!
//! Provenance lives in a sidecar beside the data, so the data formats (replay records,
//! [`crate::measured::records`]) and their loaders stay as they are: the sidecar of `X.json` is
//! `X.provenance.json` ([`sidecar_path`]). `tilelab verify --save-measured X.json` writes both;
//! the sidecars of the files measured before that were reconstructed from `docs/verify-h200.md`
//! and the git history and say so ([`Provenance::reconstructed`]).
//!
//! ```json
//! {"records": 2326, "card": "NVIDIA H200 (sm_90)", "driver": "580.159.04", "cuda": "13.0",
//!  "tools": {"ncu": "2025.3.1.0"}, "date": "2026-11-29T12:07:38Z",
//!  "command": "tilelab verify --fuzz 2000 --seed 6 --save-measured …",
//!  "generator": "…", "commit": "7cbeada…"}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

/// Where one measured data file came from. Every field is required (a sidecar that lacks one
/// does not load).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Records in the data file.
    pub records: usize,
    /// The card and its architecture, e.g. `NVIDIA H200 (sm_90)`.
    pub card: String,
    /// The NVIDIA driver, e.g. `580.159.04`.
    pub driver: String,
    /// The CUDA version of the driver API, e.g. `13.0`.
    pub cuda: String,
    /// Tools and their versions, e.g. `{"ncu": "2025.3.1.0"}`.
    pub tools: BTreeMap<String, String>,
    /// When it was measured, UTC (ISO 8601 when known to the second).
    pub date: String,
    /// The command that measured it.
    pub command: String,
    /// How its requests are generated again (a script or command in this repository), and how
    /// the measurement is repeated.
    pub generator: String,
    /// The commit of the tilelab binary that measured it (`unknown`, or a note, when none).
    pub commit: String,
    /// Set when this provenance was written after the fact: from what it was reconstructed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconstructed: Option<String>,
}

/// The sidecar of a data file: `X.provenance.json` for `X.json` (`X.provenance.json` beside
/// any other name `X`).
pub fn sidecar_path(data: &Path) -> PathBuf {
    let name = data
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    data.with_file_name(format!("{stem}.provenance.json"))
}

/// The provenance of `data`, if it has a sidecar.
///
/// # Errors
/// A sidecar that cannot be read or lacks a field (the message names the file).
pub fn load_for(data: &Path) -> anyhow::Result<Option<Provenance>> {
    let p = sidecar_path(data);
    if !p.exists() {
        return Ok(None);
    }
    let text = crate::textfile::read_text(
        &p,
        crate::textfile::MAX_PROVENANCE_BYTES,
        "provenance sidecar",
    )
    .with_context(|| format!("cannot read '{}'", crate::text::path(&p)))?;
    let v = serde_json::from_str(&text).with_context(|| {
        format!(
            "'{}' is not a provenance sidecar {{records, card, driver, cuda, tools, date, command, generator, commit, reconstructed?}}",
            crate::text::path(&p)
        )
    })?;
    Ok(Some(v))
}

/// Writes the sidecar of `data`.
///
/// # Errors
/// The sidecar cannot be written (the message names it).
pub fn write_for(data: &Path, p: &Provenance) -> anyhow::Result<()> {
    let path = sidecar_path(data);
    std::fs::write(&path, serde_json::to_string_pretty(p)? + "\n")
        .with_context(|| format!("cannot write '{}'", crate::text::path(&path)))
}

/// Now, UTC, as `YYYY-MM-DDTHH:MM:SSZ` (from the system clock; the civil date from the days
/// since 1970-01-01 by Howard Hinnant's `civil_from_days`).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc_iso(secs)
}

/// `secs` since 1970-01-01T00:00:00Z as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_iso(secs: u64) -> String {
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sidecars_sit_beside_their_data() {
        assert_eq!(
            sidecar_path(Path::new("tests/data/h200_wavefronts.json")),
            Path::new("tests/data/h200_wavefronts.provenance.json")
        );
        assert_eq!(
            sidecar_path(Path::new("measured")),
            Path::new("measured.provenance.json")
        );
    }

    #[test]
    fn utc_dates_follow_the_calendar() {
        assert_eq!(utc_iso(0), "1970-01-01T00:00:00Z");
        // `date -u -d @951782400`: the leap day of 2000.
        assert_eq!(utc_iso(951_782_400), "2000-02-29T00:00:00Z");
        // `date -u -d 2026-11-29T12:07:38Z +%s` = 1795954058.
        assert_eq!(utc_iso(1_795_954_058), "2026-11-29T12:07:38Z");
    }
}
