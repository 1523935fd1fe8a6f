//! Loading and validating lesson files.
//!
//! Every error is one line naming the file, the field (as a path such as `steps[2].access.kind`)
//! and what is allowed, e.g.
//! `lessons/02-strided.toml:31:10: field 'steps[1].instruction': unknown instruction 'ld.shared.b48'; allowed: …`.

use std::collections::BTreeMap;
use std::path::Path;

use thiserror::Error;

use super::exercise::{Exercise, ExerciseKind};
use super::format::{RawArithmetic, RawExerciseKind, RawLanePattern, RawLesson, RawStep};
use super::hooks::{ModelClaim, ModelKind, ModelQuery};
use super::{
    AffineExpr, ArithKind, Arithmetic, DEFAULT_VARIANT, Expect, Feed, LanePattern, Lesson, Spot,
    Step, StepOp, Tile,
};
use crate::sim::bank::WARP_SIZE;
use crate::sim::instr::Instruction;
use crate::sim::layout::Layout;
use crate::sim::mma::{MmaDtype, MmaShape, Operand};

/// Errors from loading lessons. Each prints as one line.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum LessonError {
    /// The file could not be read.
    #[error("{file}: cannot read: {message}")]
    Read {
        /// Path.
        file: String,
        /// The OS error, or why the file is not a lesson (too large, not text).
        message: String,
    },
    /// The file is not valid TOML, or a value has the wrong type or an unknown key.
    #[error("{file}:{line}:{col}: field '{field}': {message}")]
    Syntax {
        /// Path.
        file: String,
        /// 1-based line of the offending value (0 if unknown).
        line: usize,
        /// 1-based column.
        col: usize,
        /// Field path, e.g. `steps[3].access`.
        field: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// A value that parses but breaks a rule of the format.
    #[error("{file}: field '{field}': {message}")]
    Invalid {
        /// Path.
        file: String,
        /// Field path.
        field: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// A lesson directory without a single `*.toml` file: no lessons is an error, not an
    /// empty list (issue #16).
    #[error(
        "no lessons in '{dir}': it has no *.toml files; allowed: a directory of lesson files (the format is in lessons/README.md)"
    )]
    NoLessons {
        /// The directory given.
        dir: String,
    },
    /// A lesson name that is not known.
    #[error("unknown lesson '{}'; known lessons: {known}", crate::text::value(.name))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A layout, variant or step the command line asked for that the lesson does not have
    /// ([`super::Lesson::layout_index`], [`super::Lesson::variant_index`],
    /// [`super::Lesson::step_index`]); the message names the value and what is allowed.
    #[error("{0}")]
    NotInLesson(String),
}

/// The lessons built into the binary ([`super::embedded::FILES`]), in curriculum order.
///
/// # Errors
/// A built-in file that does not validate (a bug caught by `tests/lessons.rs`).
pub fn builtin() -> Result<Vec<Lesson>, LessonError> {
    super::embedded::FILES
        .iter()
        .map(|(file, text)| parse_lesson(text, &format!("lessons/{file}")))
        .collect()
}

/// Loads every `*.toml` in `dir`, sorted by file name.
///
/// # Errors
/// An unreadable directory or file, an invalid lesson, two lessons with one name, or
/// [`LessonError::NoLessons`] when the directory holds no `*.toml` file.
pub fn load_dir(dir: &Path) -> Result<Vec<Lesson>, LessonError> {
    let rd = std::fs::read_dir(dir).map_err(|e| LessonError::Read {
        file: crate::text::path(dir),
        message: e.to_string(),
    })?;
    let mut paths: Vec<_> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(LessonError::NoLessons {
            dir: crate::text::path(dir),
        });
    }
    let lessons = paths
        .iter()
        .map(|p| load_file(p))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, l) in lessons.iter().enumerate() {
        if let Some(o) = lessons[..i].iter().find(|o| o.name == l.name) {
            return Err(LessonError::Invalid {
                file: l.source.clone(),
                field: "name".into(),
                message: format!("'{}' is already the name of {}", l.name, o.source),
            });
        }
    }
    Ok(lessons)
}

/// Loads one lesson file.
///
/// # Errors
/// See [`parse_lesson`]; also unreadable files.
pub fn load_file(path: &Path) -> Result<Lesson, LessonError> {
    let text = crate::textfile::read_text(path, crate::textfile::MAX_LESSON_BYTES, "lesson file")
        .map_err(|e| LessonError::Read {
        file: crate::text::path(path),
        message: e.to_string(),
    })?;
    parse_lesson(&text, &crate::text::path(path))
}

/// The lesson called `name`.
///
/// # Errors
/// [`LessonError::Unknown`] listing the known names.
pub fn find<'a>(lessons: &'a [Lesson], name: &str) -> Result<&'a Lesson, LessonError> {
    lessons
        .iter()
        .find(|l| l.name == name)
        .ok_or_else(|| LessonError::Unknown {
            name: name.to_string(),
            known: crate::text::list(lessons.iter().map(|l| l.name.as_str())),
        })
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// Parses and validates a lesson from TOML text; `file` names it in errors.
///
/// # Errors
/// [`LessonError::Syntax`] for TOML or type errors, [`LessonError::Invalid`] for rule violations
/// (unknown instruction, layout that does not parse for a tile, missing expectations, …).
pub fn parse_lesson(text: &str, file: &str) -> Result<Lesson, LessonError> {
    let de = toml::Deserializer::parse(text).map_err(|e| {
        let (line, col) = e.span().map_or((0, 0), |s| line_col(text, s.start));
        LessonError::Syntax {
            file: file.to_string(),
            line,
            col,
            field: "(document)".into(),
            message: e.message().trim().replace('\n', " "),
        }
    })?;
    if let Ok(v) = text.parse::<toml::Table>() {
        let mut path = String::new();
        if let Some((field, c)) = control_in(&toml::Value::Table(v), &mut path) {
            return Err(LessonError::Invalid {
                file: file.to_string(),
                field,
                message: format!(
                    "control character '{}' (U+{:04X}) in lesson text; allowed: printable text, newlines and tabs",
                    crate::text::escape(&c.to_string()),
                    c as u32
                ),
            });
        }
    }
    let raw: RawLesson = serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.inner();
        let (line, col) = inner.span().map_or((0, 0), |s| line_col(text, s.start));
        LessonError::Syntax {
            file: file.to_string(),
            line,
            col,
            field: if field.is_empty() || field == "." {
                "(top level)".into()
            } else {
                field
            },
            message: inner.message().trim().replace('\n', " "),
        }
    })?;
    Validator { file }.lesson(raw)
}

/// The first control character (ESC, BEL, DEL, C1; not a newline, a tab or the `\r` of a
/// `\r\n`) in a key or string of `v`, and the field path it is in: lesson text is printed to the
/// terminal, where such a character would move the cursor or retitle the window.
fn control_in(v: &toml::Value, path: &mut String) -> Option<(String, char)> {
    fn bad(s: &str) -> Option<char> {
        let mut it = s.chars().peekable();
        while let Some(c) = it.next() {
            let crlf = c == '\r' && it.peek() == Some(&'\n');
            if c.is_control() && c != '\n' && c != '\t' && !crlf {
                return Some(c);
            }
        }
        None
    }
    let at = |path: &str| {
        if path.is_empty() {
            "(top level)".to_string()
        } else {
            path.to_string()
        }
    };
    match v {
        toml::Value::String(s) => bad(s).map(|c| (at(path), c)),
        toml::Value::Array(a) => a.iter().enumerate().find_map(|(i, x)| {
            let n = path.len();
            path.push_str(&format!("[{i}]"));
            let r = control_in(x, path);
            path.truncate(n);
            r
        }),
        toml::Value::Table(t) => t.iter().find_map(|(k, x)| {
            let n = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&crate::text::escape(k));
            let r = bad(k)
                .map(|c| (at(path), c))
                .or_else(|| control_in(x, path));
            path.truncate(n);
            r
        }),
        _ => None,
    }
}

struct Validator<'a> {
    file: &'a str,
}

impl Validator<'_> {
    fn err(&self, field: impl Into<String>, message: impl Into<String>) -> LessonError {
        LessonError::Invalid {
            file: self.file.to_string(),
            field: field.into(),
            message: message.into(),
        }
    }

    fn lesson(&self, raw: RawLesson) -> Result<Lesson, LessonError> {
        self.header(&raw)?;
        self.terms("terms", &raw.terms)?;
        for (i, s) in raw.steps.iter().enumerate() {
            self.terms(&format!("steps[{i}].terms"), &s.terms)?;
        }
        let variants = if raw.variants.is_empty() {
            vec![DEFAULT_VARIANT.to_string()]
        } else {
            raw.variants.clone()
        };
        let tiles = self.tiles(&raw)?;
        let steps = self.steps(&raw, &tiles, &variants)?;
        self.sass_counts(&raw, &variants)?;
        let model = self.model(&raw)?;
        let arithmetic = raw.arithmetic.iter().cloned().map(arithmetic).collect();
        let ptx = self.ptx_parts(&raw)?;
        // Every layout parsed for every tile and placed once, here (the steps below and every
        // later run read the placement).
        let mut layouts = Vec::with_capacity(raw.layouts.len());
        for spec in &raw.layouts {
            layouts.push(super::LessonLayout::place(&tiles, spec, self.file).map_err(
                |e| match e {
                    LessonError::Invalid { field, message, .. } => self.err(field, message),
                    other => other,
                },
            )?);
        }
        let lesson = Lesson {
            name: raw.name,
            title: raw.title,
            summary: raw.summary,
            claims: raw.claims,
            kernel: raw.kernel,
            narrative: raw.narrative,
            layouts,
            variants,
            tiles,
            steps,
            sass_counts: raw.sass_counts,
            model,
            arithmetic,
            ptx,
            source: self.file.to_string(),
            terms: raw.terms.clone(),
        };
        // Every layout must place every access inside shared memory, aligned and contiguous.
        for li in 0..lesson.layouts.len() {
            for si in 0..lesson.steps.len() {
                super::run::run_step(&lesson, si, li).map_err(|e| match e {
                    LessonError::Invalid { field, message, .. } => self.err(field, message),
                    other => other,
                })?;
            }
        }
        // Every exercise must be answerable by the model.
        for si in 0..lesson.steps.len() {
            super::exercise::validate(&lesson, si)
                .map_err(|m| self.err(format!("steps[{si}].exercise"), m))?;
        }
        Ok(lesson)
    }

    /// Glossary terms: non-empty, one line, each once.
    fn terms(&self, field: &str, terms: &[String]) -> Result<(), LessonError> {
        for (i, t) in terms.iter().enumerate() {
            if t.trim().is_empty() || t.contains('\n') {
                return Err(self.err(format!("{field}[{i}]"), "a term is one non-empty line"));
            }
            if terms[..i].iter().any(|o| o.eq_ignore_ascii_case(t)) {
                return Err(self.err(format!("{field}[{i}]"), format!("'{t}' is listed twice")));
            }
        }
        Ok(())
    }

    /// `[[ptx]]` parts: a label, a `.json` launch file, counters the launch files hold.
    fn ptx_parts(&self, raw: &RawLesson) -> Result<Vec<super::ptx::PtxPart>, LessonError> {
        raw.ptx
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if p.label.trim().is_empty() {
                    return Err(self.err(format!("ptx[{i}].label"), "must not be empty"));
                }
                if !p.launch.ends_with(".json") {
                    return Err(self.err(
                        format!("ptx[{i}].launch"),
                        format!(
                            "'{}' is not a launch file; expected tests/data/ptx/NAME.json",
                            p.launch
                        ),
                    ));
                }
                for k in p.counters.keys() {
                    if !super::ptx::COUNTERS.contains(&k.as_str()) {
                        return Err(self.err(
                            format!("ptx[{i}].counters"),
                            format!(
                                "'{k}' is not a counter a lesson can state; allowed: {}",
                                crate::text::list(super::ptx::COUNTERS.iter())
                            ),
                        ));
                    }
                }
                Ok(super::ptx::PtxPart {
                    label: p.label.clone(),
                    launch: p.launch.clone(),
                    note: p.note.clone(),
                    counters: p.counters.clone(),
                    line: p.line.as_ref().map(|l| super::ptx::LineClaim {
                        line: l.line,
                        executions: l.executions,
                        wavefronts: l.wavefronts,
                        conflicts: l.conflicts,
                        source_page: l.source_page.clone(),
                    }),
                })
            })
            .collect()
    }

    /// Name, title, summary, narrative, claims, kernel file and layouts.
    fn header(&self, raw: &RawLesson) -> Result<(), LessonError> {
        if raw.name.is_empty()
            || !raw
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(self.err(
                "name",
                format!(
                    "'{}' is not allowed; use lowercase letters, digits and '-'",
                    raw.name
                ),
            ));
        }
        for (field, v) in [
            ("title", &raw.title),
            ("summary", &raw.summary),
            ("narrative", &raw.narrative),
        ] {
            if v.trim().is_empty() {
                return Err(self.err(field, "must not be empty"));
            }
        }
        if raw.summary.contains('\n') {
            return Err(self.err("summary", "must be one line"));
        }
        if raw.claims.is_empty() {
            return Err(self.err(
                "claims",
                "list at least one claim of the two articles (README, Sources) that the lesson covers",
            ));
        }
        let want_kernel = format!("kernels/lesson_{}.cu", raw.name.replace('-', "_"));
        if raw.kernel != want_kernel {
            return Err(self.err(
                "kernel",
                format!("'{}' is not allowed; expected '{want_kernel}'", raw.kernel),
            ));
        }
        if raw.layouts.is_empty() {
            return Err(self.err(
                "layouts",
                "list at least one layout, e.g. [\"row\", \"pad:8\", \"swizzle:3,3,3\"]",
            ));
        }
        for (i, l) in raw.layouts.iter().enumerate() {
            if raw.layouts[..i].contains(l) {
                return Err(self.err(format!("layouts[{i}]"), format!("'{l}' is listed twice")));
            }
        }
        Ok(())
    }

    /// The tiles, each with every layout it takes checked.
    fn tiles(&self, raw: &RawLesson) -> Result<Vec<Tile>, LessonError> {
        if raw.tiles.is_empty() {
            return Err(self.err("tiles", "declare at least one [[tiles]]"));
        }
        let mut tiles = Vec::new();
        for (i, t) in raw.tiles.iter().enumerate() {
            let f = format!("tiles[{i}]");
            if tiles.iter().any(|o: &Tile| o.name == t.name) {
                return Err(self.err(
                    format!("{f}.name"),
                    format!("tile '{}' is declared twice", t.name),
                ));
            }
            let specs: Vec<&String> = match &t.layout {
                Some(s) => vec![s],
                None => raw.layouts.iter().collect(),
            };
            for s in specs {
                Layout::parse(s, t.rows, t.cols, t.elem_bytes)
                    .map_err(|e| self.err(f.clone(), format!("tile '{}': {e}", t.name)))?;
            }
            tiles.push(Tile {
                name: t.name.clone(),
                rows: t.rows,
                cols: t.cols,
                elem_bytes: t.elem_bytes,
                fixed_layout: t.layout.clone(),
            });
        }
        Ok(tiles)
    }

    /// The steps, and every variant has some.
    fn steps(
        &self,
        raw: &RawLesson,
        tiles: &[Tile],
        variants: &[String],
    ) -> Result<Vec<Step>, LessonError> {
        if raw.steps.is_empty() {
            return Err(self.err("steps", "declare at least one [[steps]]"));
        }
        let mut steps = Vec::new();
        for (i, s) in raw.steps.iter().enumerate() {
            steps.push(self.step(i, s, tiles, &raw.layouts, variants)?);
        }
        for (vi, v) in variants.iter().enumerate() {
            let n = steps
                .iter()
                .filter(|s| s.variant.is_none() || s.variant.as_deref() == Some(v))
                .count();
            if n == 0 {
                return Err(self.err(
                    format!("variants[{vi}]"),
                    format!("variant '{v}' has no steps"),
                ));
            }
        }
        Ok(steps)
    }

    /// `sass_counts` names only variants.
    fn sass_counts(&self, raw: &RawLesson, variants: &[String]) -> Result<(), LessonError> {
        for k in raw.sass_counts.keys() {
            if !variants.contains(k) {
                return Err(self.err(
                    format!("sass_counts.{k}"),
                    format!(
                        "'{k}' is not a variant; allowed: {}",
                        crate::text::list(variants.iter())
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The `[[model]]` claims, their parameters typed.
    fn model(&self, raw: &RawLesson) -> Result<Vec<ModelClaim>, LessonError> {
        raw
            .model
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let f = format!("model[{i}]");
                let kind = ModelKind::parse(&m.kind).ok_or_else(|| {
                    self.err(
                        format!("{f}.kind"),
                        format!(
                            "'{}' is not allowed; allowed: counts, traffic, occupancy, tma, wgmma, request",
                            m.kind
                        ),
                    )
                })?;
                if m.expect.is_empty() {
                    return Err(
                        self.err(format!("{f}.expect"), "give at least one expected number")
                    );
                }
                let params = m
                    .params
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_string().trim_matches('"').to_string()))
                    .collect();
                let query = ModelQuery::from_params(kind, &params)
                    .map_err(|e| self.err(format!("{f}.params"), e))?;
                Ok(ModelClaim {
                    kind,
                    label: m.label.clone(),
                    source: m.source.clone(),
                    params,
                    query,
                    expect: m.expect.clone(),
                    tolerance: m.tolerance.unwrap_or(0.0),
                })
            })
            .collect()
    }

    fn step(
        &self,
        i: usize,
        s: &RawStep,
        tiles: &[Tile],
        layouts: &[String],
        variants: &[String],
    ) -> Result<Step, LessonError> {
        let f = format!("steps[{i}]");
        if s.title.trim().is_empty() {
            return Err(self.err(format!("{f}.title"), "must not be empty"));
        }
        if let Some(v) = &s.variant
            && !variants.contains(v)
        {
            return Err(self.err(
                format!("{f}.variant"),
                format!(
                    "'{v}' is not declared; allowed: {}",
                    crate::text::list(variants.iter())
                ),
            ));
        }
        let op = self.step_op(&f, s, tiles)?;
        let exercise = self.exercise(&f, s, &op, layouts)?;
        let expect = self.expectations(&f, s, &op, layouts)?;
        let feeds = self.feeds(&f, s, &op)?;
        let checks = self.spots(&f, s, &op)?;
        let mma_regs = match (&op, &s.mma_regs) {
            (StepOp::Mma { .. }, Some(r)) => Some((r.a, r.b, r.c)),
            (StepOp::Mma { .. }, None) => None,
            (_, Some(_)) => {
                return Err(self.err(format!("{f}.mma_regs"), "only mma steps have mma_regs"));
            }
            (_, None) => None,
        };
        Ok(Step {
            title: s.title.clone(),
            note: s.note.clone(),
            op,
            variant: s.variant.clone(),
            expect,
            measured: s.measured.clone(),
            feeds,
            checks,
            mma_regs,
            terms: s.terms.clone(),
            exercise,
        })
    }

    /// The `[steps.exercise]` of a step: kind-specific fields present exactly where needed.
    fn exercise(
        &self,
        f: &str,
        s: &RawStep,
        op: &StepOp,
        layouts: &[String],
    ) -> Result<Option<Exercise>, LessonError> {
        let Some(x) = &s.exercise else {
            return Ok(None);
        };
        let f = format!("{f}.exercise");
        if x.question.trim().is_empty() {
            return Err(self.err(format!("{f}.question"), "must not be empty"));
        }
        let layout = match &x.layout {
            None => 0,
            Some(l) => layouts.iter().position(|o| o == l).ok_or_else(|| {
                self.err(
                    format!("{f}.layout"),
                    format!(
                        "'{l}' is not one of the lesson's layouts; allowed: {}",
                        crate::text::list(layouts.iter())
                    ),
                )
            })?,
        };
        let shared = matches!(op, StepOp::Shared { .. });
        let kind = match x.kind {
            RawExerciseKind::LaneOf => {
                let [row, col] = x.element.ok_or_else(|| {
                    self.err(
                        format!("{f}.element"),
                        "a lane_of question needs element = [row, col]",
                    )
                })?;
                let operand = match (x.operand.as_deref(), shared) {
                    (None, true) => None,
                    (Some("A"), false) => Some(Operand::A),
                    (Some("B"), false) => Some(Operand::B),
                    (Some("C"), false) => Some(Operand::C),
                    (Some(o), true) => {
                        return Err(self.err(
                            format!("{f}.operand"),
                            format!("'{o}' is not allowed on a shared-memory step: element is a tile coordinate; remove operand"),
                        ));
                    }
                    (o, false) => {
                        return Err(self.err(
                            format!("{f}.operand"),
                            format!(
                                "{} is not allowed; an mma step's question names operand = \"A\" | \"B\" | \"C\"",
                                o.map_or_else(|| "no operand".to_string(), |o| format!("'{}'", crate::text::escape(o)))
                            ),
                        ));
                    }
                };
                ExerciseKind::LaneOf { operand, row, col }
            }
            k => {
                if !shared {
                    return Err(self.err(
                        format!("{f}.kind"),
                        "an mma step has no wavefronts; its questions are kind = \"lane_of\"",
                    ));
                }
                for (name, set) in [
                    ("element", x.element.is_some()),
                    ("operand", x.operand.is_some()),
                ] {
                    if set {
                        return Err(self.err(
                            format!("{f}.{name}"),
                            "only lane_of questions take element and operand",
                        ));
                    }
                }
                match k {
                    RawExerciseKind::Wavefronts => ExerciseKind::Wavefronts,
                    RawExerciseKind::Conflicts => ExerciseKind::Conflicts,
                    RawExerciseKind::ConflictFree => ExerciseKind::ConflictFree,
                    _ => ExerciseKind::Swizzle,
                }
            }
        };
        if matches!(kind, ExerciseKind::ConflictFree | ExerciseKind::Swizzle) && x.layout.is_some()
        {
            return Err(self.err(
                format!("{f}.layout"),
                "the answer of this question is a layout: leave layout out",
            ));
        }
        if x.explanation.as_ref().is_some_and(|e| e.trim().is_empty()) {
            return Err(self.err(
                format!("{f}.explanation"),
                "must not be empty (leave it out when the note gives nothing away)",
            ));
        }
        Ok(Some(Exercise {
            kind,
            question: x.question.clone(),
            layout,
            hint: x.hint.clone().unwrap_or_default(),
            explanation: x.explanation.clone().unwrap_or_default(),
        }))
    }

    /// The step's instruction: an mma (registers only) or a shared-memory access over a tile.
    fn step_op(&self, f: &str, s: &RawStep, tiles: &[Tile]) -> Result<StepOp, LessonError> {
        Ok(if let Some(m) = s.instruction.strip_prefix("mma.") {
            let (shape, dtype) = parse_mma(m).ok_or_else(|| {
                self.err(
                    format!("{f}.instruction"),
                    format!(
                        "'{}' is not allowed; mma steps are 'mma.m16n8k16.f16', 'mma.m16n8k16.bf16', 'mma.m16n8k8.f16' or the full PTX 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32'",
                        s.instruction
                    ),
                )
            })?;
            if s.access.is_some() || s.tile.is_some() {
                return Err(self.err(
                    format!("{f}.access"),
                    "mma steps read registers, not shared memory: remove 'tile' and 'access'",
                ));
            }
            StepOp::Mma { shape, dtype }
        } else {
            let instruction = Instruction::parse(&s.instruction)
                .map_err(|e| self.err(format!("{f}.instruction"), e.to_string()))?;
            if matches!(instruction, Instruction::CpAsync(_)) {
                return Err(self.err(
                    format!("{f}.instruction"),
                    format!(
                        "'{}' is not available in lessons (its cost needs global source addresses); allowed: ld.shared.*, st.shared.*, ldmatrix.*, stmatrix.*, mma.*",
                        s.instruction
                    ),
                ));
            }
            let tname = s
                .tile
                .clone()
                .or_else(|| (tiles.len() == 1).then(|| tiles[0].name.clone()));
            let tname = tname.ok_or_else(|| {
                self.err(
                    format!("{f}.tile"),
                    format!(
                        "name the tile; allowed: {}",
                        crate::text::list(tiles.iter().map(|t| t.name.as_str()))
                    ),
                )
            })?;
            let tile = tiles.iter().position(|t| t.name == tname).ok_or_else(|| {
                self.err(
                    format!("{f}.tile"),
                    format!(
                        "'{tname}' is not a tile; allowed: {}",
                        crate::text::list(tiles.iter().map(|t| t.name.as_str()))
                    ),
                )
            })?;
            let raw = s.access.as_ref().ok_or_else(|| {
                self.err(
                    format!("{f}.access"),
                    "shared-memory steps need access = { kind = \"sweep\" | \"column\" | \"broadcast\" | \"ldmatrix\" | \"affine\" | \"coords\", … }",
                )
            })?;
            let access = self.access(&format!("{f}.access"), raw, instruction)?;
            StepOp::Shared {
                instruction,
                tile,
                access,
            }
        })
    }

    /// Wavefronts and conflicts per layout (every layout for shared-memory steps, none for mma);
    /// `measured` names only layouts.
    fn expectations(
        &self,
        f: &str,
        s: &RawStep,
        op: &StepOp,
        layouts: &[String],
    ) -> Result<BTreeMap<String, Expect>, LessonError> {
        let shared = matches!(op, StepOp::Shared { .. });
        let mut expect = BTreeMap::new();
        for (k, e) in &s.expect {
            if !layouts.contains(k) {
                return Err(self.err(
                    format!("{f}.expect.{k}"),
                    format!(
                        "'{k}' is not one of the lesson's layouts; allowed: {}",
                        crate::text::list(layouts.iter())
                    ),
                ));
            }
            expect.insert(
                k.clone(),
                Expect {
                    wavefronts: e.wavefronts,
                    conflicts: e.conflicts,
                },
            );
        }
        if shared {
            if let Some(l) = layouts.iter().find(|l| !expect.contains_key(*l)) {
                return Err(self.err(
                    format!("{f}.expect"),
                    format!("missing the expectation for layout '{l}': every shared-memory step gives {{ wavefronts, conflicts }} for every layout"),
                ));
            }
        } else if !expect.is_empty() {
            return Err(self.err(
                format!("{f}.expect"),
                "mma steps have no wavefronts; use mma_regs = { a, b, c }",
            ));
        }
        for k in s.measured.keys() {
            if !layouts.contains(k) {
                return Err(self.err(
                    format!("{f}.measured.{k}"),
                    format!(
                        "'{k}' is not one of the lesson's layouts; allowed: {}",
                        crate::text::list(layouts.iter())
                    ),
                ));
            }
        }
        Ok(expect)
    }

    /// Which ldmatrix registers feed which mma operand.
    fn feeds(&self, f: &str, s: &RawStep, op: &StepOp) -> Result<Vec<Feed>, LessonError> {
        let is_ldmatrix = matches!(
            op,
            StepOp::Shared {
                instruction: Instruction::Ldmatrix { .. },
                ..
            }
        );
        let mut feeds = Vec::new();
        for (j, fd) in s.feeds.iter().enumerate() {
            let ff = format!("{f}.feeds[{j}]");
            if !is_ldmatrix {
                return Err(self.err(ff, "only ldmatrix steps feed mma operands"));
            }
            let operand = match fd.operand.as_str() {
                "A" => Operand::A,
                "B" => Operand::B,
                o => {
                    return Err(self.err(
                        format!("{ff}.operand"),
                        format!("'{o}' is not allowed; allowed: A, B"),
                    ));
                }
            };
            let allowed: &[&str] = if operand == Operand::A {
                &["mk", "km"]
            } else {
                &["kn", "nk"]
            };
            if !allowed.contains(&fd.storage.as_str()) {
                return Err(self.err(
                    format!("{ff}.storage"),
                    format!(
                        "'{}' is not allowed for {}; allowed: {}",
                        fd.storage,
                        fd.operand,
                        crate::text::list(allowed.iter())
                    ),
                ));
            }
            let max = MmaShape::M16N8K16.regs(operand) as usize;
            if fd.regs.is_empty() || fd.regs.len() > max {
                return Err(self.err(
                    format!("{ff}.regs"),
                    format!(
                        "give 1 to {max} ldmatrix registers for operand {}",
                        fd.operand
                    ),
                ));
            }
            let c: Vec<char> = fd.storage.chars().collect();
            feeds.push(Feed {
                operand,
                regs: fd.regs.clone(),
                origin: (fd.origin[0], fd.origin[1]),
                storage: [c[0], c[1]],
                matches: fd.matches,
            });
        }
        Ok(feeds)
    }

    /// Spot checks of single register halves.
    fn spots(&self, f: &str, s: &RawStep, op: &StepOp) -> Result<Vec<Spot>, LessonError> {
        let mut checks = Vec::new();
        for (j, c) in s.check.iter().enumerate() {
            let ff = format!("{f}.check[{j}]");
            if c.lane >= WARP_SIZE as u32 {
                return Err(self.err(
                    format!("{ff}.lane"),
                    format!("{} is not a lane; allowed: 0..=31", c.lane),
                ));
            }
            let operand = match (&op, c.operand.as_deref()) {
                (StepOp::Mma { .. }, Some("A")) => Some(Operand::A),
                (StepOp::Mma { .. }, Some("B")) => Some(Operand::B),
                (StepOp::Mma { .. }, Some("C")) => Some(Operand::C),
                (StepOp::Mma { .. }, other) => {
                    return Err(self.err(
                        format!("{ff}.operand"),
                        format!(
                            "{} is not allowed; mma checks name operand = \"A\" | \"B\" | \"C\"",
                            other.map_or_else(
                                || "no operand".to_string(),
                                |o| format!("'{}'", crate::text::escape(o))
                            )
                        ),
                    ));
                }
                (_, None) => None,
                (_, Some(_)) => {
                    return Err(self.err(
                        format!("{ff}.operand"),
                        "only mma steps name an operand; shared-memory checks give tile coordinates",
                    ));
                }
            };
            checks.push(Spot {
                lane: c.lane,
                reg: c.reg,
                half: c.half,
                operand,
                row: c.row,
                col: c.col,
            });
        }
        Ok(checks)
    }

    fn access(
        &self,
        f: &str,
        raw: &RawLanePattern,
        instruction: Instruction,
    ) -> Result<LanePattern, LessonError> {
        // ldmatrix and stmatrix: lanes give 16-byte row addresses of 8x8 matrices.
        let is_ldm = instruction.matrices().is_some();
        let a = match raw {
            RawLanePattern::Sweep { row, col, stride } => LanePattern::Sweep {
                row: *row,
                col: *col,
                stride: stride.unwrap_or(0),
            },
            RawLanePattern::Column { row, col, period } => {
                let p = period.unwrap_or(32);
                if !(1..=32).contains(&p) {
                    return Err(self.err(
                        format!("{f}.period"),
                        format!("{p} is not allowed; allowed: 1..=32"),
                    ));
                }
                LanePattern::Column {
                    row: *row,
                    col: *col,
                    period: p,
                }
            }
            RawLanePattern::Broadcast { row, col } => LanePattern::Broadcast {
                row: *row,
                col: *col,
            },
            RawLanePattern::Ldmatrix { matrices } => {
                let Some(num) = instruction.matrices() else {
                    return Err(self.err(
                        format!("{f}.kind"),
                        format!(
                            "'ldmatrix' access needs an ldmatrix or stmatrix instruction, not {instruction}"
                        ),
                    ));
                };
                if matrices.len() != num.count() {
                    return Err(self.err(
                        format!("{f}.matrices"),
                        format!("{instruction} loads {} matrices; give that many [row, col] origins, got {}", num.count(), matrices.len()),
                    ));
                }
                LanePattern::Ldmatrix {
                    matrices: matrices.iter().map(|m| (m[0], m[1])).collect(),
                }
            }
            RawLanePattern::Affine { row, col } => {
                let conv =
                    |name: &str, e: &super::format::RawAffine| -> Result<AffineExpr, LessonError> {
                        let mut terms = Vec::new();
                        for (k, t) in e.terms.iter().enumerate() {
                            let div = t.div.unwrap_or(1);
                            let m = t.modulo.unwrap_or(32);
                            if div == 0 || m == 0 {
                                return Err(self.err(
                                    format!("{f}.{name}.terms[{k}]"),
                                    "div and modulo must be at least 1",
                                ));
                            }
                            terms.push((t.per, div, m));
                        }
                        Ok(AffineExpr {
                            base: e.base,
                            terms,
                        })
                    };
                LanePattern::Affine {
                    row: conv("row", row)?,
                    col: conv("col", col)?,
                }
            }
            RawLanePattern::Coords { coords } => {
                if coords.len() != WARP_SIZE {
                    return Err(self.err(
                        format!("{f}.coords"),
                        format!(
                            "give 32 [row, col] pairs, lane 0 first; got {}",
                            coords.len()
                        ),
                    ));
                }
                LanePattern::Coords(coords.iter().map(|c| (c[0], c[1])).collect())
            }
        };
        if is_ldm
            && !matches!(
                a,
                LanePattern::Ldmatrix { .. } | LanePattern::Coords(_) | LanePattern::Affine { .. }
            )
        {
            return Err(self.err(format!("{f}.kind"), "ldmatrix and stmatrix steps use kind = \"ldmatrix\" (or \"affine\"/\"coords\" giving row addresses)"));
        }
        Ok(a)
    }
}

/// An `[[arithmetic]]` fact as the lesson holds it.
fn arithmetic(a: RawArithmetic) -> Arithmetic {
    match a {
        RawArithmetic::Product {
            label,
            source,
            factors,
            equals,
        } => Arithmetic {
            label,
            source,
            kind: ArithKind::Product(factors),
            equals,
        },
        RawArithmetic::Sum {
            label,
            source,
            terms,
            equals,
        } => Arithmetic {
            label,
            source,
            kind: ArithKind::Sum(terms),
            equals,
        },
        RawArithmetic::Mean {
            label,
            source,
            values,
            equals,
        } => Arithmetic {
            label,
            source,
            kind: ArithKind::Mean(values),
            equals,
        },
        RawArithmetic::Quotient {
            label,
            source,
            num,
            den,
            equals,
            decimals,
        } => Arithmetic {
            label,
            source,
            kind: ArithKind::Quotient { num, den, decimals },
            equals,
        },
    }
}

fn parse_mma(s: &str) -> Option<(MmaShape, MmaDtype)> {
    // Short: m16n8k16.f16 ; full: sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
    let parts: Vec<&str> = s.split('.').collect();
    match parts.as_slice() {
        [shape, dt] => {
            let shape = MmaShape::parse(shape).ok()?;
            let dtype = MmaDtype::parse(dt).ok()?;
            shape.check_dtype(dtype).ok()?;
            // Lessons draw 16-bit fragments with f32 accumulators only.
            (dtype.bits() == 16).then_some((shape, dtype))
        }
        ["sync", "aligned", shape, "row", "col", "f32", a, b, "f32"] if a == b => {
            let shape = MmaShape::parse(shape).ok()?;
            let dtype = MmaDtype::parse(a).ok()?;
            shape.check_dtype(dtype).ok()?;
            // Lessons draw 16-bit fragments with f32 accumulators only.
            (dtype.bits() == 16).then_some((shape, dtype))
        }
        _ => None,
    }
}
