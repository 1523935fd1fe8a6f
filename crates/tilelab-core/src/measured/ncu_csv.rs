//! Nsight Compute's text: the metric names the suite reads and the `ncu --csv` output parsed
//! (pure; running `ncu` is `gpu::ncu`).

use std::collections::BTreeMap;

/// Shared-memory load wavefronts (ldmatrix counts here too).
pub const WAVEFRONTS_LD: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
/// Shared-memory store wavefronts.
pub const WAVEFRONTS_ST: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
/// Shared-memory load bank conflicts (extra load wavefronts) as the L1TEX unit counts them.
pub const BANK_CONFLICTS_LD: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
/// `ldmatrix` wavefronts attributed to each executed instruction, from Nsight Compute's SASS
/// patching (the per-instruction count of its Source page), summed over the launch.
pub const SASS_WAVEFRONTS_LDSM: &str =
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum";
/// Bank conflicts as Nsight Compute counts them.
pub const BANK_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum";

/// Per kernel launch ID (in launch order), the value of each metric.
pub type LaunchMetrics = BTreeMap<u64, BTreeMap<String, f64>>;

/// The version number in `ncu --version` output.
pub fn version_of(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Version "))
        .and_then(|v| v.split_whitespace().next())
        .map(str::to_string)
}

/// Parses `ncu --csv --metrics …` output into, per kernel launch ID (in launch order), the value
/// of each metric. Lines that are not CSV rows (ncu's `==PROF==` notes, the program's own
/// output) are skipped.
pub fn parse_csv(text: &str) -> LaunchMetrics {
    let mut out: BTreeMap<u64, BTreeMap<String, f64>> = BTreeMap::new();
    let mut header: Option<Vec<String>> = None;
    for line in text.lines() {
        if !line.starts_with('"') {
            continue;
        }
        let cols = csv_row(line);
        if header.is_none() {
            if cols.iter().any(|c| c == "Metric Name") {
                header = Some(cols);
            }
            continue;
        }
        let h = header.as_ref().unwrap();
        let get = |name: &str| h.iter().position(|c| c == name).and_then(|i| cols.get(i));
        let (Some(id), Some(metric), Some(value)) =
            (get("ID"), get("Metric Name"), get("Metric Value"))
        else {
            continue;
        };
        let (Ok(id), Ok(v)) = (id.parse::<u64>(), value.replace(',', "").parse::<f64>()) else {
            continue;
        };
        out.entry(id).or_default().insert(metric.clone(), v);
    }
    out
}

/// The cells of one CSV record of ncu's `--csv` output (RFC 4180 quoting: a `""` inside a
/// quoted cell is one `"`), read with the `csv` crate; the one reader of ncu's CSV
/// ([`parse_csv`], [`super::source_view::parse_source_page`]). A line that is not one whole
/// record (an unterminated quote) gives the cells read so far.
pub(crate) fn csv_row(line: &str) -> Vec<String> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes());
    let mut rec = csv::StringRecord::new();
    match r.read_record(&mut rec) {
        Ok(true) => rec.iter().map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4180: `""` inside a quoted cell is one quote, a comma inside quotes is text (a
    /// demangled template name in ncu's "Kernel Name" column has both). The hand splitter this
    /// replaced dropped the quotes (`k<"a">` read as `k<a>`).
    #[test]
    fn csv_cells_keep_escaped_quotes() {
        assert_eq!(
            csv_row(r#""1","k<""a"", 2>","smsp__inst_executed.sum","1,234""#),
            ["1", r#"k<"a", 2>"#, "smsp__inst_executed.sum", "1,234"]
        );
        assert_eq!(csv_row(r#""","x""#), ["", "x"]);
        let text = concat!(
            "==PROF== Connected\n",
            r#""ID","Kernel Name","Metric Name","Metric Value""#,
            "\n",
            r#""0","k<""a"", 2>","smsp__inst_executed.sum","1,234""#,
            "\n",
        );
        let m = parse_csv(text);
        assert_eq!(m[&0]["smsp__inst_executed.sum"], 1234.0);
    }

    #[test]
    fn parses_ncu_rows_and_skips_noise() {
        let text = "==PROF== Connected to process 482\nlaunched 2\n\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\"0\",\"641\",\"probe\",\"127.0.0.1\",\"smem_probe\",\"1\",\"7\",\"(32, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum\",\"\",\"1,024\"\n\"1\",\"641\",\"probe\",\"127.0.0.1\",\"smem_probe\",\"1\",\"7\",\"(32, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum\",\"\",\"3\"\n";
        let m = parse_csv(text);
        assert_eq!(m[&0][WAVEFRONTS_LD], 1024.0);
        assert_eq!(m[&1][BANK_CONFLICTS], 3.0);
    }
}
