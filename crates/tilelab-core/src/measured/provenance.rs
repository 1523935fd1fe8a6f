//! Where a measured data file came from: card, driver, CUDA, tools, date, command, the
//! generator of its requests, and the commit of the binary that measured it.
//!
//! Provenance lives inside the data file, as every measured file of `tests/data/` carries it
//! (`tests/data/README.md`): a replay file with its provenance is an object whose
//! `"provenance"` field is a [`Provenance`] and whose `"records"` field is the array of replay
//! records ([`crate::measured::records`] reads the records of either form, and of a bare array
//! of records, which has no provenance). `tilelab verify --save-measured X.json` writes it
//! ([`file_text`]); the provenance of the files measured before that was reconstructed from
//! `docs/log/2026-11-29-verify.md` and the git history and says so ([`Provenance::reconstructed`]).
//!
//! ```json
//! {
//!   "provenance": {"records": 2326, "card": "NVIDIA H200 (sm_90)", "driver": "580.159.04",
//!     "cuda": "13.0", "tools": {"ncu": "2025.3.1.0"}, "date": "2026-11-29T12:07:38Z",
//!     "command": "tilelab verify --fuzz 2000 --seed 6 --save-measured …",
//!     "generator": "…", "commit": "7cbeada…"},
//!   "records": [{"name": "fuzz.6.0.p1", …}, …]
//! }
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::measured::records::{self, Record};

/// Where one measured data file came from. Every field is required (a provenance that lacks
/// one does not load).
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

/// The fields of a [`Provenance`], for error messages.
const FIELDS: &str =
    "{records, card, driver, cuda, tools, date, command, generator, commit, reconstructed?}";

/// The provenance inside the replay file `data` (its `"provenance"` field), if it has one; a
/// bare array of records, or an object without the field, has none. The whole file is read
/// (as [`records::stream`] reads it), so a file whose records do not read is an error too.
///
/// # Errors
/// The file cannot be read or is not a replay file; its provenance is over
/// [`crate::textfile::MAX_PROVENANCE_BYTES`] or lacks a field (the message names the file).
pub fn load_for(data: &Path) -> anyhow::Result<Option<Provenance>> {
    let (_, text) = records::stream_with_provenance(data, |_| Ok(()))?;
    let Some(text) = text else {
        return Ok(None);
    };
    parse(&text)
        .map(Some)
        .map_err(|why| anyhow::anyhow!("'{}' {why}", crate::text::path(data)))
}

/// A provenance from the JSON text of a `"provenance"` field; the error says what the file
/// has (a phrase to follow the file's name).
fn parse(text: &str) -> Result<Provenance, String> {
    let max = crate::textfile::MAX_PROVENANCE_BYTES;
    if text.len() as u64 > max {
        return Err(format!(
            "has a \"provenance\" of {} bytes, over the limit of {max} bytes",
            text.len()
        ));
    }
    serde_json::from_str(text).map_err(|e| {
        // serde_json's position counts from the field's start, not the file's: left out.
        let msg = e.to_string();
        let msg = msg
            .rsplit_once(" at line ")
            .map_or(msg.as_str(), |(m, _)| m);
        format!("has a \"provenance\" that is not a provenance {FIELDS}: {msg}")
    })
}

/// A replay file with its provenance inside, as `tilelab verify --save-measured` writes it:
/// `{"provenance": {...}, "records": [...]}`, the provenance one field a line, the records on
/// one line (the layout of the measured files of `tests/data/`).
///
/// # Errors
/// Only those of `serde_json` writing the values.
pub fn file_text(records: &[Record], p: &Provenance) -> serde_json::Result<String> {
    let prov = serde_json::to_string_pretty(p)?.replace('\n', "\n  ");
    let recs = serde_json::to_string(records)?;
    Ok(format!(
        "{{\n  \"provenance\": {prov},\n  \"records\": {recs}\n}}\n"
    ))
}

/// Writes the replay file `data` with its provenance inside ([`file_text`]).
///
/// # Errors
/// The file cannot be written (the message names it).
pub fn write_file(data: &Path, records: &[Record], p: &Provenance) -> anyhow::Result<()> {
    std::fs::write(data, file_text(records, p)?)
        .with_context(|| format!("cannot write '{}'", crate::text::path(data)))
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

    fn sample(records: usize) -> Provenance {
        Provenance {
            records,
            card: "NVIDIA H200 (sm_90)".into(),
            driver: "580.159.04".into(),
            cuda: "13.0".into(),
            tools: BTreeMap::from([("ncu".to_string(), "2025.3.1.0".to_string())]),
            date: "2026-11-29T12:07:38Z".into(),
            command: "tilelab verify --save-measured m.json".into(),
            generator: "tilelab verify".into(),
            commit: "7cbeada".into(),
            reconstructed: None,
        }
    }

    fn record(name: &str, wavefronts: u32) -> Record {
        Record {
            name: name.into(),
            instruction: "ld.shared.b32".into(),
            lane_byte_offsets: (0..32).map(|i| 4 * i).collect(),
            active_mask: None,
            wavefronts: Some(wavefronts),
            bank_conflicts: Some(wavefronts - 1),
            global_addresses: None,
        }
    }

    /// A fresh temporary directory, removed when dropped.
    fn dir(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("tilelab-provenance-{name}-"))
            .tempdir()
            .unwrap()
    }

    /// What `--save-measured` writes: one object, the provenance then the records, which the
    /// record reader and [`load_for`] read back as they were; no sidecar.
    #[test]
    fn a_measured_file_carries_its_provenance_inside() {
        let recs = [record("a", 1), record("b", 2)];
        let p = sample(2);
        let text = file_text(&recs, &p).unwrap();
        assert!(
            text.starts_with("{\n  \"provenance\": {\n    \"records\": 2,\n    \"card\""),
            "{text}"
        );
        assert!(text.ends_with("]\n}\n"), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["provenance", "records"]);
        assert_eq!(records::parse::<Record>(&text).unwrap(), recs);
        let d = dir("inside");
        let f = d.path().join("m.json");
        write_file(&f, &recs, &p).unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), text);
        assert_eq!(records::load(&f).unwrap(), recs);
        assert_eq!(load_for(&f).unwrap(), Some(p));
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "one file");
        let reconstructed = Provenance {
            reconstructed: Some("from git history".into()),
            ..sample(0)
        };
        let text = file_text(&[], &reconstructed).unwrap();
        std::fs::write(&f, &text).unwrap();
        assert_eq!(load_for(&f).unwrap(), Some(reconstructed));
    }

    /// A bare array (a user's older file, a mismatch file) reads as records without
    /// provenance; a provenance that lacks a field, has an unknown one, or appears twice is a
    /// one-line error naming the file.
    #[test]
    fn provenance_is_every_field_or_an_error() {
        let d = dir("errors");
        let f = d.path().join("m.json");
        let recs = [record("a", 1)];
        std::fs::write(&f, serde_json::to_string(&recs).unwrap()).unwrap();
        assert_eq!(load_for(&f).unwrap(), None);
        assert_eq!(records::load(&f).unwrap(), recs);
        let good = serde_json::to_value(sample(1)).unwrap();
        let rec = serde_json::to_string(&recs).unwrap();
        let mut lacking = good.clone();
        lacking.as_object_mut().unwrap().remove("commit");
        let mut extra = good.clone();
        extra["colour"] = "green".into();
        for (prov, want) in [
            (lacking.to_string(), "missing field `commit`"),
            (extra.to_string(), "unknown field `colour`"),
            ("[1]".to_string(), "is not a provenance {records, card"),
        ] {
            std::fs::write(&f, format!(r#"{{"provenance": {prov}, "records": {rec}}}"#)).unwrap();
            let e = format!("{:#}", load_for(&f).unwrap_err());
            assert!(e.contains("m.json") && e.contains(want), "{e}");
            assert!(!e.contains('\n'), "{e}");
            // The records still read.
            assert_eq!(records::load(&f).unwrap(), recs);
        }
        let g = good.to_string();
        std::fs::write(
            &f,
            format!(r#"{{"provenance": {g}, "provenance": {g}, "records": {rec}}}"#),
        )
        .unwrap();
        let e = format!("{:#}", load_for(&f).unwrap_err());
        assert!(e.contains("\"provenance\" field appears twice"), "{e}");
        std::fs::write(&f, format!(r#"{{"records": {rec}}}"#)).unwrap();
        assert_eq!(load_for(&f).unwrap(), None);
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
