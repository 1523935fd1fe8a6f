//! The glossary: every term the lessons use, with a short and a longer explanation and where it
//! is defined (PTX ISA section, Nsight Compute metric or guide section, CUDA C++ Programming
//! Guide section, CuTe source). Data, not code: `lessons/glossary/glossary.toml`, compiled into
//! the binary ([`builtin`]) and validated when loaded.
//!
//! Lessons mark the terms they use (`terms = [...]` on the lesson and on steps); `tilelab explain
//! TERM` prints an entry, and the TUI shows the entries of the current step on `e`.
//! `tests/glossary.rs` checks that every marked term, and a list of key terms, has an entry.
//!
//! Lookup ([`Glossary::find`]) ignores case and accepts aliases (`wavefronts`, `LDSM.16.M88.4`);
//! an unknown term is a [`GlossaryError::Unknown`] naming the closest entries (Jaro-Winkler
//! similarity of `strsim`, plus entries that contain the term).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The glossary file compiled into the binary.
pub const GLOSSARY_TOML: &str = include_str!("../../lessons/glossary/glossary.toml");

/// Where [`GLOSSARY_TOML`] lives in the repository (for error messages).
pub const GLOSSARY_FILE: &str = "lessons/glossary/glossary.toml";

/// One glossary entry.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The term as the lessons write it (`wavefront`, `Swizzle<B,M,S>`).
    pub name: String,
    /// Other spellings that find this entry (plurals, SASS suffixes).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// One line.
    pub short: String,
    /// A few sentences, Markdown (CommonMark: `code`, **bold**, lists).
    pub text: String,
    /// Where the term is defined: PTX ISA section, Nsight Compute metric, CUDA guide section.
    pub sources: Vec<String>,
    /// Names of related entries.
    #[serde(default)]
    pub see: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGlossary {
    term: Vec<Entry>,
}

/// The validated glossary, entries in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glossary {
    /// The entries.
    pub entries: Vec<Entry>,
}

/// Errors of loading or looking up the glossary; each prints as one line.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum GlossaryError {
    /// The file is not valid TOML or breaks a rule (field path and rule named).
    #[error("{file}: field '{field}': {message}")]
    Invalid {
        /// The file.
        file: String,
        /// Field path, e.g. `term[3].sources`.
        field: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// No entry has this name or alias.
    #[error("unknown term '{}'; {near}; `tilelab explain` lists all {count} terms", crate::text::value(.term))]
    Unknown {
        /// The term asked for.
        term: String,
        /// "near: a, b, c" or "no near match".
        near: String,
        /// How many entries there are.
        count: usize,
    },
}

/// The glossary compiled into the binary.
///
/// # Errors
/// A built-in file that does not validate (caught by `tests/glossary.rs`).
pub fn builtin() -> Result<Glossary, GlossaryError> {
    parse(GLOSSARY_TOML, GLOSSARY_FILE)
}

fn key(s: &str) -> String {
    s.trim().to_lowercase()
}

/// Parses and validates glossary TOML; `file` names it in errors.
///
/// Rules: at least one entry; names and aliases non-empty and unique ignoring case across the
/// whole file; `short` one line; `text` non-empty; at least one source; every `see` names an
/// entry.
///
/// # Errors
/// [`GlossaryError::Invalid`] naming the field.
pub fn parse(text: &str, file: &str) -> Result<Glossary, GlossaryError> {
    let invalid = |field: String, message: String| GlossaryError::Invalid {
        file: file.to_string(),
        field,
        message,
    };
    let de = toml::Deserializer::parse(text)
        .map_err(|e| invalid("(document)".into(), e.message().trim().replace('\n', " ")))?;
    let raw: RawGlossary = serde_path_to_error::deserialize(de).map_err(|e| {
        invalid(
            e.path().to_string(),
            e.inner().message().trim().replace('\n', " "),
        )
    })?;
    if raw.term.is_empty() {
        return Err(invalid(
            "term".into(),
            "declare at least one [[term]]".into(),
        ));
    }
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    for (i, e) in raw.term.iter().enumerate() {
        let f = format!("term[{i}]");
        for (field, v) in [("name", &e.name), ("short", &e.short), ("text", &e.text)] {
            if v.trim().is_empty() {
                return Err(invalid(format!("{f}.{field}"), "must not be empty".into()));
            }
        }
        if e.short.contains('\n') {
            return Err(invalid(format!("{f}.short"), "must be one line".into()));
        }
        if e.sources.is_empty() || e.sources.iter().any(|s| s.trim().is_empty()) {
            return Err(invalid(
                format!("{f}.sources"),
                "give at least one non-empty source (PTX ISA section, Nsight Compute metric, CUDA guide section)".into(),
            ));
        }
        for (j, n) in std::iter::once(&e.name).chain(&e.aliases).enumerate() {
            let field = if j == 0 {
                format!("{f}.name")
            } else {
                format!("{f}.aliases[{}]", j - 1)
            };
            if n.trim().is_empty() {
                return Err(invalid(field, "must not be empty".into()));
            }
            if let Some(&o) = seen.get(&key(n)) {
                return Err(invalid(
                    field,
                    format!(
                        "'{n}' already names term[{o}] '{}' (names and aliases are unique, ignoring case)",
                        raw.term[o].name
                    ),
                ));
            }
            seen.insert(key(n), i);
        }
    }
    for (i, e) in raw.term.iter().enumerate() {
        for (j, s) in e.see.iter().enumerate() {
            if !raw.term.iter().any(|o| o.name == *s) {
                return Err(invalid(
                    format!("term[{i}].see[{j}]"),
                    format!("'{s}' is not the name of an entry"),
                ));
            }
        }
    }
    Ok(Glossary { entries: raw.term })
}

/// The longest term (in bytes) [`Glossary::near`] scores by similarity.
pub const NEAR_MAX: usize = 256;

impl Glossary {
    /// The entry whose name or alias is `term`, ignoring case and surrounding spaces.
    ///
    /// # Errors
    /// [`GlossaryError::Unknown`] with up to five near matches ([`Self::near`]).
    pub fn find(&self, term: &str) -> Result<&Entry, GlossaryError> {
        let k = key(term);
        // `bank-conflict`, `bank_conflict` and `bank conflict` are one term.
        let loose = |s: &str| key(s).replace(['-', '_'], " ");
        let l = loose(term);
        self.entries
            .iter()
            .find(|e| key(&e.name) == k || e.aliases.iter().any(|a| key(a) == k))
            .or_else(|| {
                self.entries
                    .iter()
                    .find(|e| loose(&e.name) == l || e.aliases.iter().any(|a| loose(a) == l))
            })
            .ok_or_else(|| {
                let near = self.near(term);
                GlossaryError::Unknown {
                    term: term.to_string(),
                    near: if near.is_empty() {
                        "no near match".into()
                    } else {
                        format!("near: {}", crate::text::list(&near))
                    },
                    count: self.entries.len(),
                }
            })
    }

    /// Up to five entry names closest to `term`: names or aliases with Jaro-Winkler similarity
    /// at least 0.8 (ignoring case), or that contain `term` or are contained in it (at least
    /// three characters), best first. A term longer than [`NEAR_MAX`] bytes is compared by
    /// containment only: Jaro-Winkler's cost grows with the product of the lengths (a
    /// 100,000-character argument took seconds), and no name is that long.
    pub fn near(&self, term: &str) -> Vec<String> {
        let k = key(term);
        let similar = k.len() <= NEAR_MAX;
        let mut scored: Vec<(f64, &str)> = Vec::new();
        for e in &self.entries {
            let best = std::iter::once(&e.name)
                .chain(&e.aliases)
                .map(|n| {
                    let n = key(n);
                    let sim = if similar {
                        strsim::jaro_winkler(&k, &n)
                    } else {
                        0.0
                    };
                    let contains = k.len() >= 3 && (n.contains(&k) || k.contains(&n));
                    if contains { sim.max(0.8) } else { sim }
                })
                .fold(0.0, f64::max);
            if best >= 0.8 {
                scored.push((best, e.name.as_str()));
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored
            .into_iter()
            .take(5)
            .map(|(_, n)| n.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = "[[term]]\nname = \"bank\"\naliases = [\"banks\"]\nshort = \"s\"\ntext = \"t\"\nsources = [\"PTX ISA\"]\n";

    #[test]
    fn rules_are_one_line_errors_naming_the_field() {
        assert!(parse(ONE, "g.toml").is_ok());
        let e = parse(
            &ONE.replace("sources = [\"PTX ISA\"]", "sources = []"),
            "g.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("g.toml: field 'term[0].sources'"), "{e}");
        let twice = format!(
            "{ONE}{}",
            ONE.replace("name = \"bank\"", "name = \"Banks\"")
        );
        let e = parse(&twice, "g.toml").unwrap_err().to_string();
        assert!(
            e.contains("term[1].name") && e.contains("already names term[0]"),
            "{e}"
        );
        let e = parse(&format!("{ONE}see = [\"warp\"]\n"), "g.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("term[0].see[0]") && e.contains("'warp'"), "{e}");
        let e = parse(&ONE.replace("text = ", "txt = "), "g.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown field `txt`") && !e.contains('\n'),
            "{e}"
        );
    }

    #[test]
    fn lookup_ignores_case_and_takes_aliases() {
        let g = parse(ONE, "g.toml").unwrap();
        assert_eq!(g.find("BANKS").unwrap().name, "bank");
        let e = g.find("bnk").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown term 'bnk'; near: bank; `tilelab explain` lists all 1 terms"
        );
        let e = g.find("occupancy").unwrap_err().to_string();
        assert!(e.contains("no near match"), "{e}");
    }
}
