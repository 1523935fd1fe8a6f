//! `tilelab explain [TERM] [--json]`: the glossary of the terms the lessons use.
//!
//! Without TERM, every entry's name and one-line explanation; with TERM (a name or alias, any
//! case), the entry: its explanation, its sources (PTX ISA section, Nsight Compute metric,
//! CUDA guide section), related entries, and the lessons and steps that use the term. An
//! unknown term is one line naming the nearest entries, exit 2.
//!
//! `--json`: the list is an array of `{name, aliases, short, text, sources, see}`; one entry is
//! that object plus `used_in: [{lesson, steps}]` (steps 1-based, in the lesson's first variant;
//! empty when the whole lesson marks the term).

use std::process::ExitCode;

use serde::Serialize;
use tilelab::lessons::glossary::{self, Entry, Glossary};
use tilelab::lessons::{self, Lesson};

use super::out;

/// Arguments of `tilelab explain`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  tilelab explain                 every term, one line each\n  tilelab explain wavefront\n  tilelab explain bank conflict\n  tilelab explain 'Swizzle<B,M,S>'\n  tilelab explain LDSM.16.MT88.4 --json"
)]
pub struct ExplainArgs {
    /// A term or one of its aliases (case ignored; several words need no quotes:
    /// `tilelab explain bank conflict`); without it, the list.
    #[arg(num_args = 0.., value_name = "TERM")]
    pub term: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Used {
    lesson: String,
    steps: Vec<usize>,
}

#[derive(Serialize)]
struct EntryJson<'a> {
    #[serde(flatten)]
    entry: &'a Entry,
    used_in: Vec<Used>,
}

/// Lessons (and 1-based steps of their first variant) that mark `e`'s name or an alias.
fn used_in(e: &Entry, all: &[Lesson]) -> Vec<Used> {
    let is = |t: &String| {
        t.eq_ignore_ascii_case(&e.name) || e.aliases.iter().any(|a| a.eq_ignore_ascii_case(t))
    };
    let mut out = Vec::new();
    for l in all {
        let order = l.steps_of(0);
        let steps: Vec<usize> = order
            .iter()
            .enumerate()
            .filter(|(_, si)| l.steps[**si].terms.iter().any(is))
            .map(|(n, _)| n + 1)
            .collect();
        if !steps.is_empty() || l.terms.iter().any(is) {
            out.push(Used {
                lesson: l.name.clone(),
                steps,
            });
        }
    }
    out
}

pub fn run(a: ExplainArgs) -> anyhow::Result<ExitCode> {
    let g: Glossary = glossary::builtin()?;
    let term = (!a.term.is_empty()).then(|| a.term.join(" "));
    let Some(term) = term else {
        if a.json {
            out::emit_json(&g.entries)?;
        } else {
            let w = out::column_width(g.entries.iter().map(|e| e.name.as_str()), 4, 24);
            let mut o = String::new();
            for e in &g.entries {
                outln!(o, "{:w$}  {}", out::clip(&e.name, 24), e.short);
            }
            outln!(
                o,
                "\n{} terms; `tilelab explain TERM` for one (with its sources).",
                g.entries.len()
            );
            out::emit(&o)?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    let e = g.find(&term)?;
    let all = lessons::builtin()?;
    let used = used_in(e, &all);
    if a.json {
        out::emit_json(&EntryJson {
            entry: e,
            used_in: used,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    outln!(o, "{}", out::bold(&e.name));
    if !e.aliases.is_empty() {
        outln!(o, "also: {}", e.aliases.join(", "));
    }
    outln!(o, "{}\n", e.short);
    outln!(o, "{}\n", e.text.trim());
    outln!(o, "sources:");
    for s in &e.sources {
        outln!(o, "  - {s}");
    }
    if !e.see.is_empty() {
        outln!(o, "see also: {}", e.see.join(", "));
    }
    if !used.is_empty() {
        let u: Vec<String> = used
            .iter()
            .map(|u| match u.steps.as_slice() {
                [] => u.lesson.clone(),
                s => format!(
                    "{} (step{} {})",
                    u.lesson,
                    if s.len() > 1 { "s" } else { "" },
                    s.iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
            .collect();
        outln!(o, "used in: {}", u.join(", "));
    }
    out::emit(&o)?;
    Ok(ExitCode::SUCCESS)
}
