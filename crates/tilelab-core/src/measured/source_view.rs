//! Nsight Compute's source view of a PTX module, per line of the PTX file.
//!
//! The driver JIT-compiles PTX without a line table for the PTX's own lines, so ncu cannot
//! attribute its counters to them. [`with_own_line_info`] gives the PTX one (a `.loc` naming each
//! instruction's own line); JIT-compiled with `CU_JIT_GENERATE_LINE_INFO`, profiled with
//! `ncu --section SourceCounters -o REPORT` and printed with
//! `ncu -i REPORT --page source --csv --print-source cuda,sass`, the report's rows are the PTX
//! file's lines, which [`parse_source_page`] reads. Measured on the H200 (docs/ptx.md): the sums
//! over the lines equal the launch's counters, and the line info leaves the SASS unchanged.

use std::fmt::Write;

/// Counters ncu attributes to one PTX line (summed over the SASS instructions of the line), for
/// one launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineCounters {
    /// Line number in the PTX file (1-based).
    pub line: u32,
    /// Warp-level executions of the line's SASS instructions (`Instructions Executed`).
    pub executions: u64,
    /// Shared-memory wavefronts (`L1 Wavefronts Shared`; `cp.async` lines count the shared
    /// side of their copies here, which no `…op_ld/op_st` counter holds).
    pub wavefronts: u64,
    /// The wavefronts an ideal access would need (`L1 Wavefronts Shared Ideal`).
    pub ideal: u64,
    /// Wavefronts beyond the ideal (`L1 Wavefronts Shared Excessive`): the line's bank conflicts.
    pub excessive: u64,
}

/// One kernel of the source page: the source file ncu resolved, the function and its lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelLines {
    /// `File Path` as ncu printed it (the path given in the PTX's `.file 1`).
    pub file: String,
    /// `Function Name` (the `.entry` name).
    pub function: String,
    /// Every line row, in the order printed (ascending line numbers).
    pub lines: Vec<LineCounters>,
}

/// Why a source page could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SourcePageError {
    /// A line row came before any header row.
    #[error(
        "ncu source page: a line row before the 'Line No' header (not --print-source cuda,sass output?)"
    )]
    NoHeader,
    /// The header lacks a column the parser needs.
    #[error("ncu source page: no '{0}' column (not --section SourceCounters?)")]
    MissingColumn(&'static str),
    /// A cell that must hold a count does not.
    #[error("ncu source page: line {line}: '{value}' in column '{column}' is not a count")]
    BadNumber {
        /// The PTX line of the row.
        line: String,
        /// The column.
        column: &'static str,
        /// The cell.
        value: String,
    },
}

/// `ptx` with its own line directives replaced by one naming each instruction's line in `ptx`.
///
/// Drops every `.file` and `.loc` directive and every `.section` block (Triton's DWARF sections,
/// which refer to its Python source), adds `.file 1 "FILE"` after `.address_size` and, before
/// each instruction inside a function body, `.loc 1 N 1` where N is the instruction's 1-based
/// line number in `ptx`. Everything else, `.local` declarations included, is kept as it was, so
/// line N of `ptx` is what ncu reports as line N of `file`. An instruction spanning several
/// lines gets the `.loc` of its first line.
pub fn with_own_line_info(ptx: &str, file: &str) -> String {
    with_own_line_info_map(ptx, file).0
}

/// [`with_own_line_info`] and, for each line of the rewritten text (index = its 1-based line
/// − 1), the 1-based line of `ptx` it was copied from, 0 for a line the rewrite added (`.file`,
/// `.loc`): how a tool's message about the rewritten file is told in the user's lines.
pub fn with_own_line_info_map(ptx: &str, file: &str) -> (String, Vec<u32>) {
    let mut map: Vec<u32> = Vec::new();
    let mut out = String::with_capacity(ptx.len() * 2);
    let (mut depth, mut section_depth) = (0i64, 0i64);
    let (mut in_section, mut in_statement) = (false, false);
    for (i, line) in ptx.lines().enumerate() {
        let s = line.trim();
        let code = s.split("//").next().unwrap_or("").trim_end();
        let braces = code.matches('{').count() as i64 - code.matches('}').count() as i64;
        if in_section {
            section_depth += braces;
            in_section = section_depth > 0;
            continue;
        }
        let first = s.split_whitespace().next().unwrap_or("");
        if first == ".section" {
            // `.section name {…}` on one line, or `.section name` with its block from the next
            // line on: skip until the block closes.
            section_depth = braces;
            in_section = !code.contains('{') || section_depth > 0;
            continue;
        }
        if first == ".file" || first == ".loc" {
            continue;
        }
        let is_code = depth > 0
            && !s.is_empty()
            && !s.starts_with(['.', '{', '}', '$'])
            && !s.starts_with("//")
            && !code.ends_with(':');
        if is_code && !in_statement {
            let _ = writeln!(out, "\t.loc 1 {} 1", i + 1);
            map.push(0);
        }
        if is_code {
            in_statement = !code.ends_with(';');
        }
        depth += braces;
        out.push_str(line);
        out.push('\n');
        map.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
        if first == ".address_size" {
            let _ = writeln!(
                out,
                ".file 1 \"{}\"",
                file.replace('\\', "\\\\").replace('"', "\\\"")
            );
            map.push(0);
        }
    }
    (out, map)
}

/// A count cell: `""` and `"-"` are 0, thousands separators are dropped.
fn count(cell: &str) -> Option<u64> {
    let c = cell.trim().replace(',', "");
    if c.is_empty() || c == "-" {
        return Some(0);
    }
    c.parse::<u64>().ok().or_else(|| {
        c.parse::<f64>()
            .ok()
            .filter(|v| v.fract() == 0.0 && *v >= 0.0)
            .map(|v| v as u64)
    })
}

/// Reads `ncu -i REPORT --page source --csv --print-source cuda,sass` output: per kernel (one
/// `"File Path"` block each, in report order), every row whose `Line No` is set. SASS rows (no
/// line number) are skipped: their counters are already summed into their line's row.
///
/// # Errors
/// A line row before any header, a header without the SourceCounters columns, or a count cell
/// that is not a number ([`SourcePageError`]).
pub fn parse_source_page(csv: &str) -> Result<Vec<KernelLines>, SourcePageError> {
    const EXE: &str = "Instructions Executed";
    const WF: &str = "L1 Wavefronts Shared";
    const IDEAL: &str = "L1 Wavefronts Shared Ideal";
    const EXC: &str = "L1 Wavefronts Shared Excessive";
    let mut out: Vec<KernelLines> = Vec::new();
    let mut cols: Option<[usize; 4]> = None;
    for raw in csv.lines() {
        if !raw.starts_with('"') {
            continue; // ncu's ==PROF== / ==WARNING== lines
        }
        let r = super::ncu_csv::csv_row(raw);
        match r.first().map(String::as_str) {
            Some("File Path") => out.push(KernelLines {
                file: r.get(1).cloned().unwrap_or_default(),
                ..KernelLines::default()
            }),
            Some("Function Name") => {
                if let Some(k) = out.last_mut() {
                    k.function = r.get(1).cloned().unwrap_or_default();
                }
            }
            Some("Line No") => {
                let find = |name: &'static str| {
                    r.iter()
                        .position(|c| c == name)
                        .ok_or(SourcePageError::MissingColumn(name))
                };
                cols = Some([find(EXE)?, find(WF)?, find(IDEAL)?, find(EXC)?]);
            }
            Some(line) if !line.is_empty() => {
                let Ok(n) = line.parse::<u32>() else { continue };
                let c = cols.ok_or(SourcePageError::NoHeader)?;
                let get = |i: usize, column: &'static str| {
                    let cell = r.get(c[i]).map(String::as_str).unwrap_or("");
                    count(cell).ok_or_else(|| SourcePageError::BadNumber {
                        line: line.to_string(),
                        column,
                        value: cell.to_string(),
                    })
                };
                let row = LineCounters {
                    line: n,
                    executions: get(0, EXE)?,
                    wavefronts: get(1, WF)?,
                    ideal: get(2, IDEAL)?,
                    excessive: get(3, EXC)?,
                };
                match out.last_mut() {
                    Some(k) => k.lines.push(row),
                    None => return Err(SourcePageError::NoHeader),
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of the source page measured on the H200 (2026-11-30, `scripts/research/ptx_fixtures/source_view.sh`,
    /// trimmed to the shared-memory lines of two fixtures).
    const PAGE: &str = include_str!("../../../../tests/data/ncu_source_page_h200_2026-11-30.csv");

    fn line(k: &KernelLines, n: u32) -> &LineCounters {
        k.lines
            .iter()
            .find(|l| l.line == n)
            .expect("line in the page")
    }

    #[test]
    fn reads_the_measured_tl_trans_line() {
        let ks = parse_source_page(PAGE).unwrap();
        let k = ks.iter().find(|k| k.function == "tl_fa_v1").unwrap();
        assert!(k.file.ends_with("triton_fa_v1_trans.ptx"));
        // Line 402: ld.shared.v4.b32 [%r11], %r11 = smem + (tid & 15) * 512.
        let l = line(k, 402);
        assert_eq!(
            (l.executions, l.wavefronts, l.ideal, l.excessive),
            (16, 512, 64, 448)
        );
        // Line 163: st.shared.v4.b32 [%r7], conflict-free.
        let l = line(k, 163);
        assert_eq!(
            (l.executions, l.wavefronts, l.ideal, l.excessive),
            (8, 32, 32, 0)
        );
    }

    #[test]
    fn reads_the_lesson_kernel_and_skips_sass_rows() {
        let ks = parse_source_page(PAGE).unwrap();
        let k = ks.iter().find(|k| k.function == "lesson_fa_v1_v2").unwrap();
        // The lesson's three steps under layout `row`: a column of K (16 wavefronts, 15
        // conflicts), the next column, a row (1).
        let got: Vec<_> = [170, 218, 264]
            .iter()
            .map(|&n| (line(k, n).wavefronts, line(k, n).excessive))
            .collect();
        assert_eq!(got, vec![(16, 15), (16, 15), (1, 0)]);
        assert!(k.lines.iter().all(|l| l.line > 0));
    }

    #[test]
    fn a_line_row_without_header_is_an_error() {
        assert_eq!(
            parse_source_page("\"12\",\"ld.shared.b32 %r1, [%r2];\",\"1\"\n"),
            Err(SourcePageError::NoHeader)
        );
        let bad = "\"File Path\",\"a.ptx\"\n\"Line No\",\"Source\",\"Instructions Executed\",\"L1 Wavefronts Shared\",\"L1 Wavefronts Shared Ideal\"\n";
        assert_eq!(
            parse_source_page(bad),
            Err(SourcePageError::MissingColumn(
                "L1 Wavefronts Shared Excessive"
            ))
        );
    }

    #[test]
    fn quoted_commas_and_quotes_split_right() {
        assert_eq!(
            crate::measured::ncu_csv::csv_row(r#""a,b","say ""hi""",3"#),
            vec!["a,b".to_string(), "say \"hi\"".to_string(), "3".to_string()]
        );
        assert_eq!(count("1,024"), Some(1024));
        assert_eq!(count("-"), Some(0));
        assert_eq!(count("x"), None);
    }

    /// Every `.loc 1 N 1` is followed by line N of the original, unchanged.
    fn check_loc_targets(original: &str, rewritten: &str) -> usize {
        let orig: Vec<&str> = original.lines().collect();
        let new: Vec<&str> = rewritten.lines().collect();
        let mut n = 0;
        for (i, l) in new.iter().enumerate() {
            if let Some(rest) = l.trim().strip_prefix(".loc 1 ") {
                let num: usize = rest.split_whitespace().next().unwrap().parse().unwrap();
                assert_eq!(new[i + 1], orig[num - 1], "line {num}");
                n += 1;
            }
        }
        n
    }

    #[test]
    fn line_info_names_each_instructions_own_line() {
        // Triton PTX: its own .loc/.file and DWARF sections go, one .file 1 names the PTX.
        let t = include_str!("../../../../tests/data/ptx/triton_matmul_2w.ptx");
        let r = with_own_line_info(t, "/x/triton_matmul_2w.ptx");
        assert!(check_loc_targets(t, &r) > 100);
        assert_eq!(r.matches(".file").count(), 1);
        assert!(r.contains(".file 1 \"/x/triton_matmul_2w.ptx\""));
        assert!(!r.contains(".section") && !r.contains("tkernels.py"));
        // The instructions are all still there, in order.
        let instrs = |s: &str| {
            s.lines()
                .filter(|l| {
                    l.contains("ldmatrix") || l.contains("mma.sync") || l.contains("cp.async")
                })
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(instrs(t), instrs(&r));
        // nvcc PTX with a local depot: `.local` is a declaration, not a `.loc`.
        let n = include_str!("../../../../tests/data/ptx/lesson_fa_v1_v2.ptx");
        let r = with_own_line_info(n, "lesson_fa_v1_v2.ptx");
        assert!(r.contains(".local .align 4 .b8 \t__local_depot0[120];"));
        assert!(check_loc_targets(n, &r) > 100);
    }
}
