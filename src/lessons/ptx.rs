//! A lesson's PTX parts (`[[ptx]]`, issue 17): a real kernel's PTX, named by its launch file in
//! `tests/data/ptx/` (the module, the launch, and the counters Nsight Compute measured on the
//! H200), instead of a generated kernel. The lesson states counters of that launch (and
//! optionally one PTX line's executions, wavefronts and bank conflicts, measured by ncu's source
//! view); [`check_part`] compares each stated number with the data file and with the simulator
//! (`tilelab ptx`'s one CTA), so the numbers come from the measurements, never from the code
//! under test.
//!
//! ```toml
//! [[ptx]]
//! label = "FA v1, tl.trans(k)"
//! launch = "tests/data/ptx/triton_fa_v1_trans.json"
//! note = "Markdown"
//! counters = { "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum" = 14336 }
//! line = { line = 402, executions = 16, wavefronts = 512, conflicts = 448, source_page = "tests/data/ncu_source_page_h200_2026-11-30.csv" }
//! ```
//!
//! Files are looked up among those built into the binary ([`EMBEDDED`]) first, then on disk
//! relative to the working directory (lessons loaded with `--dir`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::check::{Basis, Check, CheckStatus};
use crate::ptx::report::Report;
use crate::ptx::{self, Launch};

/// Launch files and modules built into the binary: the fixtures the built-in lessons name.
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "tests/data/ptx/triton_fa_v1_trans.json",
        include_str!("../../tests/data/ptx/triton_fa_v1_trans.json"),
    ),
    (
        "tests/data/ptx/triton_fa_v1_trans.ptx",
        include_str!("../../tests/data/ptx/triton_fa_v1_trans.ptx"),
    ),
    (
        "tests/data/ptx/triton_fa_v1_kt.json",
        include_str!("../../tests/data/ptx/triton_fa_v1_kt.json"),
    ),
    (
        "tests/data/ptx/triton_fa_v1_kt.ptx",
        include_str!("../../tests/data/ptx/triton_fa_v1_kt.ptx"),
    ),
    (
        "tests/data/ptx/triton_attn_fwd.json",
        include_str!("../../tests/data/ptx/triton_attn_fwd.json"),
    ),
    (
        "tests/data/ptx/triton_attn_fwd.ptx",
        include_str!("../../tests/data/ptx/triton_attn_fwd.ptx"),
    ),
    (
        "tests/data/ncu_source_page_h200_2026-11-30.csv",
        include_str!("../../tests/data/ncu_source_page_h200_2026-11-30.csv"),
    ),
];

/// The launch counters a lesson may state, as the launch files name them.
pub const COUNTERS: &[&str] = &[
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__inst_executed_op_shared_ld_pred_on_any.sum",
    "smsp__inst_executed_op_shared_st_pred_on_any.sum",
    "smsp__inst_executed_op_ldsm.sum",
    "smsp__inst_executed_op_shared_stsm.sum",
    "smsp__inst_executed_pipe_tensor_op_hmma.sum",
    "sm__sass_inst_executed_op_ldgsts.sum",
];

/// One PTX line's numbers from Nsight Compute's source view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineClaim {
    /// 1-based line of the PTX module.
    pub line: u32,
    /// Warp-level executions (`Instructions Executed`).
    pub executions: u64,
    /// `L1 Wavefronts Shared`.
    pub wavefronts: u64,
    /// `L1 Wavefronts Shared Excessive`: the line's bank conflicts.
    pub conflicts: u64,
    /// The source page (`ncu --page source --csv --print-source cuda,sass`) that measured it.
    pub source_page: String,
}

/// One `[[ptx]]` part of a lesson.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxPart {
    /// What the part shows, in a few words.
    pub label: String,
    /// The launch file (`tests/data/ptx/NAME.json`): module, launch, measured counters.
    pub launch: String,
    /// Markdown shown with it.
    pub note: String,
    /// Counters of the launch the lesson states (names of [`COUNTERS`]).
    pub counters: BTreeMap<String, u64>,
    /// One line's numbers, optional.
    pub line: Option<LineClaim>,
}

/// A launch file read: the module's path and text, the launch, the measured counters.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The PTX module's path as the launch file names it (`tests/data/ptx/NAME.ptx`).
    pub ptx_path: String,
    /// The module's text.
    pub ptx_text: String,
    /// The `.entry` launched.
    pub kernel: String,
    /// The launch (CTA 0,0,0; non-pointer parameters as `--arg INDEX=VALUE`).
    pub launch: Launch,
    /// Measured counters of the launch file (`counters`), numeric ones.
    pub counters: BTreeMap<String, f64>,
}

/// The text of `path`: built in, or read from disk.
///
/// # Errors
/// Neither built in nor readable (one line naming the path).
pub fn read_data(path: &str) -> Result<String, String> {
    if let Some((_, t)) = EMBEDDED.iter().find(|(p, _)| *p == path) {
        return Ok((*t).to_string());
    }
    crate::textfile::read_text(
        std::path::Path::new(path),
        crate::textfile::MAX_PTX_BYTES,
        "PTX module or launch file",
    )
    .map_err(|e| format!("cannot read '{path}': {e}"))
}

fn dim3(v: &Value, what: &str) -> Result<[u32; 3], String> {
    let a = v
        .as_array()
        .filter(|a| a.len() == 3)
        .ok_or_else(|| format!("launch.{what} is not [x, y, z]"))?;
    let mut out = [0u32; 3];
    for (o, x) in out.iter_mut().zip(a) {
        *o = x
            .as_u64()
            .and_then(|x| u32::try_from(x).ok())
            .filter(|&x| x > 0)
            .ok_or_else(|| format!("launch.{what}: {x} is not a positive 32-bit number"))?;
    }
    Ok(out)
}

impl PtxPart {
    /// Reads the launch file and its module.
    ///
    /// # Errors
    /// An unreadable or malformed launch file, a grid of more than one CTA (the launch's counters
    /// then sum several CTAs; the lesson parts simulate one), a module that is not found.
    pub fn resolve(&self) -> Result<Resolved, String> {
        let text = read_data(&self.launch)?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| format!("'{}' is not JSON: {e}", self.launch))?;
        let bad = |what: &str| format!("'{}': {what}", self.launch);
        let module = v["ptx"]
            .as_str()
            .ok_or_else(|| bad("no 'ptx' (module file)"))?;
        let dir = self.launch.rsplit_once('/').map_or("", |(d, _)| d);
        let ptx_path = if dir.is_empty() {
            module.to_string()
        } else {
            format!("{dir}/{module}")
        };
        let ptx_text = read_data(&ptx_path)?;
        let l = &v["launch"];
        let kernel = l["kernel"]
            .as_str()
            .ok_or_else(|| bad("no launch.kernel"))?
            .to_string();
        let grid = dim3(&l["grid"], "grid").map_err(|e| bad(&e))?;
        let block = dim3(&l["block"], "block").map_err(|e| bad(&e))?;
        if grid != [1, 1, 1] {
            let [x, y, z] = grid;
            return Err(bad(&format!(
                "grid [{x}, {y}, {z}]: a lesson part simulates one CTA, so its launch must be grid [1, 1, 1]"
            )));
        }
        let mut args = Vec::new();
        for (i, p) in l["params"].as_array().into_iter().flatten().enumerate() {
            match &p["value"] {
                Value::String(s) if s == "pointer" => {}
                Value::Number(n) => args.push((i.to_string(), n.to_string())),
                other => return Err(bad(&format!("launch.params[{i}].value {other}"))),
            }
        }
        let dynamic_smem = l["dynamic_smem_bytes"]
            .as_u64()
            .map(|x| u32::try_from(x).map_err(|_| bad("dynamic_smem_bytes above 2^32")))
            .transpose()?;
        let counters = v["counters"]
            .as_object()
            .ok_or_else(|| bad("no 'counters'"))?
            .iter()
            .filter_map(|(k, x)| x.as_f64().map(|x| (k.clone(), x)))
            .collect();
        Ok(Resolved {
            ptx_path,
            ptx_text,
            kernel,
            launch: Launch {
                grid,
                block,
                cta: [0, 0, 0],
                args,
                tensor_maps: vec![],
                dynamic_smem,
                max_instructions: crate::ptx::engine::DEFAULT_MAX_INSTRUCTIONS,
                cluster: None,
            },
            counters,
        })
    }
}

impl Resolved {
    /// The launch flags of `tilelab ptx`, `tilelab tui --ptx` and `tilelab verify --ptx`.
    pub fn flags(&self) -> String {
        let d = |v: [u32; 3]| {
            if v[1] == 1 && v[2] == 1 {
                v[0].to_string()
            } else {
                format!("{},{},{}", v[0], v[1], v[2])
            }
        };
        let mut s = format!(
            "--kernel {} --grid {} --block {}",
            self.kernel,
            d(self.launch.grid),
            d(self.launch.block)
        );
        if let Some(b) = self.launch.dynamic_smem {
            s.push_str(&format!(" --dynamic-smem {b}"));
        }
        for (k, v) in &self.launch.args {
            s.push_str(&format!(" --arg {k}={v}"));
        }
        s
    }
}

/// The simulated value of a launch counter ([`COUNTERS`]) in a one-CTA report.
pub fn simulated(r: &Report, counter: &str) -> Option<u64> {
    let t = &r.totals;
    Some(match counter {
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum" => t.shared_ld_wavefronts,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum" => t.shared_ld_bank_conflicts,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum" => t.shared_st_wavefronts,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum" => t.shared_st_bank_conflicts,
        "smsp__inst_executed_op_shared_ld_pred_on_any.sum" => t.sass.LDS,
        "smsp__inst_executed_op_shared_st_pred_on_any.sum" => t.sass.STS,
        "smsp__inst_executed_op_ldsm.sum" => t.sass.LDSM,
        "smsp__inst_executed_op_shared_stsm.sum" => t.sass.STSM,
        "smsp__inst_executed_pipe_tensor_op_hmma.sum" => t.sass.HMMA,
        "sm__sass_inst_executed_op_ldgsts.sum" => t.sass.LDGSTS,
        _ => return None,
    })
}

/// The measured value to compare a simulated counter with: the HMMA counter less its
/// `HFMA2.MMA` part (`docs/ptx.md`), the others as measured.
fn measured_for_sim(r: &Resolved, counter: &str) -> Option<f64> {
    let m = *r.counters.get(counter)?;
    if counter == "smsp__inst_executed_pipe_tensor_op_hmma.sum" {
        let hfma2 = r
            .counters
            .get("smsp__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum")
            .copied()
            .unwrap_or(0.0);
        return Some(m - hfma2);
    }
    Some(m)
}

fn check(basis: Basis, what: String, ok: Result<(), String>) -> Check {
    match ok {
        Ok(()) => Check {
            what,
            status: CheckStatus::Pass,
            basis,
            detail: String::new(),
        },
        Err(d) => Check {
            what,
            status: CheckStatus::Fail,
            basis,
            detail: d,
        },
    }
}

fn short(counter: &str) -> &str {
    counter.trim_end_matches(".sum")
}

/// Every check of one part: each stated counter against the launch file's measurement
/// ([`Basis::Measured`]: the lesson's number is the H200's) and the simulated CTA against the
/// same measurement; the stated line against the source page and the simulated line.
pub fn check_part(p: &PtxPart) -> Vec<Check> {
    let label = format!("ptx '{}'", p.label);
    let mut out = Vec::new();
    let r = match p.resolve() {
        Ok(r) => r,
        Err(e) => {
            out.push(check(
                Basis::Measured,
                format!("{label}: launch file"),
                Err(e),
            ));
            return out;
        }
    };
    let report = ptx::simulate(&r.ptx_text, Some(&r.kernel), &r.launch);
    for (name, &stated) in &p.counters {
        let what = format!("{label}: {} = {stated}", short(name));
        let sim_what = format!(
            "{label}: {}: the simulated CTA agrees with the H200",
            short(name)
        );
        let measured = r.counters.get(name).copied();
        out.push(check(
            Basis::Measured,
            format!("{what} as {} measured it", p.launch),
            match measured {
                Some(m) if m == stated as f64 => Ok(()),
                Some(m) => Err(format!("the launch file says {m}")),
                None => Err("the launch file has no such counter".into()),
            },
        ));
        let sim = report
            .as_ref()
            .map_err(|e| e.to_string())
            .and_then(|rep| simulated(rep, name).ok_or_else(|| "not a simulated counter".into()));
        out.push(check(
            Basis::Measured,
            sim_what,
            match (sim, measured_for_sim(&r, name)) {
                (Ok(s), Some(m)) if s as f64 == m => Ok(()),
                (Ok(s), Some(m)) => Err(format!("simulated {s}, measured {m}")),
                (Ok(s), None) => Err(format!("simulated {s}, nothing measured")),
                (Err(e), _) => Err(format!("simulator: {e}")),
            },
        ));
    }
    if let Some(lc) = &p.line {
        let what = format!(
            "{label}: line {} runs {} times, {} wavefronts, {} bank conflicts",
            lc.line, lc.executions, lc.wavefronts, lc.conflicts
        );
        let measured = read_data(&lc.source_page).and_then(|page| {
            crate::measured::source_view::parse_source_page(&page)
                .map_err(|e| format!("{}: {e}", lc.source_page))?
                .into_iter()
                .find(|k| k.function == r.kernel)
                .and_then(|k| k.lines.into_iter().find(|x| x.line == lc.line))
                .map(|x| (x.executions, x.wavefronts, x.excessive))
                .ok_or_else(|| {
                    format!("{} has no line {} of {}", lc.source_page, lc.line, r.kernel)
                })
        });
        let stated = (lc.executions, lc.wavefronts, lc.conflicts);
        out.push(check(
            Basis::Measured,
            format!("{what} as ncu's source view measured it"),
            match &measured {
                Ok(m) if *m == stated => Ok(()),
                Ok(m) => Err(format!(
                    "the source page says {} times, {} wavefronts, {} excessive",
                    m.0, m.1, m.2
                )),
                Err(e) => Err(e.clone()),
            },
        ));
        let sim = report.as_ref().map_err(|e| e.to_string()).and_then(|rep| {
            rep.lines
                .iter()
                .find(|x| x.line == lc.line)
                .map(|x| (x.executions, x.wavefronts, x.bank_conflicts))
                .ok_or_else(|| format!("line {} has no shared-memory instruction", lc.line))
        });
        out.push(check(
            Basis::Measured,
            format!(
                "{label}: line {}: the simulated CTA agrees with ncu's source view",
                lc.line
            ),
            match (sim, measured) {
                (Ok(s), Ok(m)) if s == m => Ok(()),
                (Ok(s), Ok(m)) => Err(format!(
                    "simulated {} times, {} wavefronts, {} conflicts; measured {}, {}, {}",
                    s.0, s.1, s.2, m.0, m.1, m.2
                )),
                (Err(e), _) | (_, Err(e)) => Err(e),
            },
        ));
    }
    out
}
