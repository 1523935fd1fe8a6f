//! Launch files (`tilelab ptx --launch FILE.json`, `tui --ptx --launch`, `verify --ptx
//! --launch`): one kernel launch written down once, so that a fixture, a Python front end or
//! a user keeps the PTX file, kernel, grid, block, cluster, dynamic shared memory and every
//! parameter's value (with where it came from) together. The format is documented in
//! `docs/launch-files.md`; this module parses it (pure: the caller reads the file through
//! [`crate::textfile`], at most [`crate::textfile::MAX_LAUNCH_FILE_BYTES`]) and turns it into the
//! values the flags give.
//!
//! ```text
//! {"format": "tilelab-launch", "version": 1, "ptx": "k.ptx", "kernel": "matmul_kernel",
//!  "grid": [4, 4], "block": [128], "dynamic_smem": 98304,
//!  "args": [{"param": 3, "value": 512, "from": "M"},
//!           {"param": "p", "offset": 16, "value": "f16:1.0", "from": "alpha"},
//!           {"param": 0, "tensor_map": "f16:512,128:1024:64,128:128B", "from": "a_desc"},
//!           {"param": 1, "from": "a_ptr (a pointer: its own zero-filled buffer)"}]}
//! ```
//!
//! Unknown fields and any other `format`/`version` are refused with one line naming them;
//! every error names the JSON path of the value ([`LaunchFileError`]).

use serde::{Deserialize, Serialize};

use super::decode::Program;
use super::params::TensorMapArg;

/// The `format` a launch file must name.
pub const FORMAT: &str = "tilelab-launch";

/// The format version this build reads and writes.
pub const VERSION: u64 = 1;

/// A launch file as written (field meanings in `docs/launch-files.md`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u64,
    /// The PTX module, relative to the launch file's folder (or absolute).
    pub ptx: String,
    /// The `.entry`: as `--kernel` takes it (name, unique part of one, or `#N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Grid size in CTAs, 1 to 3 numbers (x first; missing ones are 1).
    pub grid: Vec<u32>,
    /// Block size in threads, 1 to 3 numbers.
    pub block: Vec<u32>,
    /// CTAs per cluster, 1 to 3 numbers (default 1,1,1): the launch's
    /// `cudaLaunchAttributeClusterDimension`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Vec<u32>>,
    /// The CTA to simulate, 1 to 3 numbers (default 0,0,0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cta: Option<Vec<u32>>,
    /// Dynamic shared memory per block in bytes (default: what is left of sm_90's 232,448).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_smem: Option<u32>,
    /// `--max-instructions` (default [`super::engine::DEFAULT_MAX_INSTRUCTIONS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_instructions: Option<u64>,
    /// Free text: what the launch is (not read by tilelab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The parameters' values, in any order.
    #[serde(default)]
    pub args: Vec<LaunchArg>,
}

/// One parameter's value (or bytes of it) in a launch file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchArg {
    /// The PTX parameter: its name (a string) or its index from 0 (a number or a string of
    /// digits), as `--arg NAME=` takes it.
    pub param: serde_json::Value,
    /// Byte offset inside a by-value struct (`.b8` array) parameter (default 0): the `+OFF` of
    /// `--arg NAME+OFF=TYPE:V,...` and `--tensor-map NAME+OFF=...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// The value as `--arg` takes it after `=`: a scalar (`512`, `0.125`, `0x10`) or
    /// `TYPE:V[,V...]` packed little-endian from `offset`. A JSON number is written as its text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    /// A `CUtensorMap` at `offset` as `--tensor-map` takes it after `=`:
    /// `DTYPE:DIMS:STRIDES:BOX[:SWIZZLE]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_map: Option<String>,
    /// With `tensor_map`: the pointer parameter whose buffer the map points into (`@POINTER`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// Where the value came from: the Python or C++ name, a field of a host struct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// A launch file's values, checked: what the flags of `tilelab ptx` would give.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchSpec {
    /// The PTX path as written in the file (relative to the file's folder unless absolute).
    pub ptx: String,
    /// `--kernel`.
    pub kernel: Option<String>,
    /// `--grid`.
    pub grid: [u32; 3],
    /// `--block`.
    pub block: [u32; 3],
    /// CTAs per cluster (`--cluster`); `None` when the file names none.
    pub cluster: Option<[u32; 3]>,
    /// `--cta`.
    pub cta: [u32; 3],
    /// `--dynamic-smem` (bytes).
    pub dynamic_smem: Option<u32>,
    /// `--max-instructions`.
    pub max_instructions: Option<u64>,
    /// Every `--arg`: (`NAME[+OFF]`, value).
    pub args: Vec<(String, String)>,
    /// Every `--tensor-map`.
    pub tensor_maps: Vec<TensorMapArg>,
    /// Per parameter key (`NAME[+OFF]` as in `args`/`tensor_maps`, and the entries that give no
    /// value), its `from`.
    pub from: Vec<(String, String)>,
}

/// A launch file that cannot be used: the JSON path of the value (`args[2].tensor_map`,
/// `(top level)`) and why, one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct LaunchFileError {
    /// The JSON path.
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> LaunchFileError {
    LaunchFileError {
        path: path.into(),
        message: message.into(),
    }
}

/// Parses and checks a launch file's text.
///
/// # Errors
/// [`LaunchFileError`]: not JSON (with line and column), another `format` or `version`, an
/// unknown field, a value of the wrong kind, a dimension list not of 1 to 3 numbers (grid,
/// block and cluster at least 1), an arg with both or neither of `value` and `tensor_map` but
/// `pointer`, a tensor map `--tensor-map` refuses.
pub fn parse(text: &str) -> Result<LaunchSpec, LaunchFileError> {
    let top: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        err(
            "(document)",
            format!(
                "not JSON: {} (line {}, column {})",
                msg(&e),
                e.line(),
                e.column()
            ),
        )
    })?;
    check_header(&top)?;
    let file: LaunchFile = serde_path_to_error::deserialize(&top).map_err(|e| {
        let p = e.path().to_string();
        err(
            if p.is_empty() || p == "." {
                "(top level)".to_string()
            } else {
                p
            },
            msg(e.inner()),
        )
    })?;
    file.spec()
}

/// serde_json's message without its " at line L column C" tail (the path says where).
fn msg(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// `format` and `version` first, so that a newer file is named as such rather than by its
/// first unknown field.
fn check_header(top: &serde_json::Value) -> Result<(), LaunchFileError> {
    let Some(obj) = top.as_object() else {
        return Err(err(
            "(top level)",
            format!("expected an object {{\"format\": \"{FORMAT}\", \"version\": {VERSION}, ...}}"),
        ));
    };
    match obj.get("format") {
        Some(serde_json::Value::String(f)) if f == FORMAT => {}
        Some(v) => {
            return Err(err(
                "format",
                format!(
                    "'{}' is not a launch file format; allowed: \"{FORMAT}\"",
                    show(v)
                ),
            ));
        }
        None => {
            return Err(err(
                "format",
                format!(
                    "missing; a launch file starts {{\"format\": \"{FORMAT}\", \"version\": {VERSION}"
                ),
            ));
        }
    }
    match obj.get("version") {
        Some(v) if v.as_u64() == Some(VERSION) => Ok(()),
        Some(v) => Err(err(
            "version",
            format!(
                "version {} is not supported; this tilelab reads version {VERSION}",
                show(v)
            ),
        )),
        None => Err(err("version", format!("missing; allowed: {VERSION}"))),
    }
}

/// A JSON value shown in a message, cut at 80 characters.
fn show(v: &serde_json::Value) -> String {
    let s = match v {
        serde_json::Value::String(s) => s.clone(),
        o => o.to_string(),
    };
    crate::text::value(&s).chars().take(80).collect()
}

/// A dimension list: 1 to 3 numbers, each at least `min`, missing ones `fill`.
fn dims(path: &str, v: &[u32], min: u32, fill: u32) -> Result<[u32; 3], LaunchFileError> {
    if v.is_empty() || v.len() > 3 {
        return Err(err(
            path,
            format!(
                "{} numbers; expected 1 to 3 ([x], [x, y] or [x, y, z])",
                v.len()
            ),
        ));
    }
    let mut out = [fill; 3];
    for (i, &d) in v.iter().enumerate() {
        if d < min {
            return Err(err(
                format!("{path}[{i}]"),
                format!("{d}: every dimension must be at least {min}"),
            ));
        }
        out[i] = d;
    }
    Ok(out)
}

impl LaunchFile {
    /// The checked values ([`parse`] without the JSON step).
    ///
    /// # Errors
    /// As [`parse`].
    pub fn spec(&self) -> Result<LaunchSpec, LaunchFileError> {
        if self.format != FORMAT {
            return Err(err("format", format!("allowed: \"{FORMAT}\"")));
        }
        if self.version != VERSION {
            return Err(err("version", format!("allowed: {VERSION}")));
        }
        if self.ptx.trim().is_empty() {
            return Err(err(
                "ptx",
                "empty; give the PTX file, relative to the launch file",
            ));
        }
        let mut s = LaunchSpec {
            ptx: self.ptx.clone(),
            kernel: self.kernel.clone(),
            grid: dims("grid", &self.grid, 1, 1)?,
            block: dims("block", &self.block, 1, 1)?,
            cluster: match &self.cluster {
                Some(c) => Some(dims("cluster", c, 1, 1)?),
                None => None,
            },
            cta: match &self.cta {
                Some(c) => dims("cta", c, 0, 0)?,
                None => [0, 0, 0],
            },
            dynamic_smem: self.dynamic_smem,
            max_instructions: self.max_instructions,
            args: Vec::new(),
            tensor_maps: Vec::new(),
            from: Vec::new(),
        };
        if let Some(n) = self.max_instructions
            && n > super::engine::MAX_INSTRUCTIONS_LIMIT
        {
            return Err(err(
                "max_instructions",
                format!("{n}: at most {}", super::engine::MAX_INSTRUCTIONS_LIMIT),
            ));
        }
        for (i, a) in self.args.iter().enumerate() {
            a.add_to(&format!("args[{i}]"), &mut s)?;
        }
        Ok(s)
    }
}

impl LaunchArg {
    /// The `NAME[+OFF]` key of `--arg`/`--tensor-map`.
    fn key(&self, path: &str) -> Result<String, LaunchFileError> {
        let name = match &self.param {
            serde_json::Value::String(s)
                if !s.trim().is_empty() && !s.contains(['+', '=', '@']) =>
            {
                s.clone()
            }
            serde_json::Value::Number(n) if n.as_u64().is_some() => n.to_string(),
            v => {
                return Err(err(
                    format!("{path}.param"),
                    format!(
                        "'{}' names no parameter; allowed: its PTX name (a string without '+', '=', '@') or its index from 0",
                        show(v)
                    ),
                ));
            }
        };
        Ok(match self.offset {
            Some(o) if o > 0 => format!("{name}+{o}"),
            _ => name,
        })
    }

    fn add_to(&self, path: &str, s: &mut LaunchSpec) -> Result<(), LaunchFileError> {
        let key = self.key(path)?;
        if let Some(f) = &self.from {
            s.from.push((key.clone(), f.clone()));
        }
        match (&self.value, &self.tensor_map) {
            (Some(_), Some(_)) => Err(err(
                path,
                "both value and tensor_map; give one (a struct's other bytes in another entry with its offset)",
            )),
            (Some(v), None) => {
                if self.pointer.is_some() {
                    return Err(err(
                        format!("{path}.pointer"),
                        "only a tensor_map takes a pointer",
                    ));
                }
                let text = match v {
                    serde_json::Value::String(t) if !t.trim().is_empty() => t.clone(),
                    serde_json::Value::Number(n) => n.to_string(),
                    o => {
                        return Err(err(
                            format!("{path}.value"),
                            format!(
                                "'{}' is not a value; allowed: a number, or a string as --arg takes it (512, 0.125, s32:128,128,512)",
                                show(o)
                            ),
                        ));
                    }
                };
                s.args.push((key, text));
                Ok(())
            }
            (None, Some(spec)) => {
                let flag = match &self.pointer {
                    Some(p) => format!("{key}={spec}@{p}"),
                    None => format!("{key}={spec}"),
                };
                let m = super::params::parse_tensor_map(&flag)
                    .map_err(|e| err(format!("{path}.tensor_map"), e))?;
                s.tensor_maps.push(m);
                Ok(())
            }
            (None, None) if self.pointer.is_some() => Err(err(
                format!("{path}.pointer"),
                "only a tensor_map takes a pointer",
            )),
            // A parameter named for its `from` only: a pointer (its own buffer) or a struct the
            // kernel never reads.
            (None, None) => Ok(()),
        }
    }
}

/// Where a `--arg`/`--tensor-map` key writes: (parameter index, byte offset), or `None` when
/// it names no parameter of `prog` (the run then names it).
fn place(prog: &Program, key: &str) -> Option<(usize, u32)> {
    super::params::arg_place(prog, key)
}

/// The launch file's args with the flags' on top: a flag replaces every file entry that writes
/// at the same parameter and byte offset (by name or by index alike); other file entries stay.
pub fn override_args(
    prog: &Program,
    file: &[(String, String)],
    flags: &[(String, String)],
) -> Vec<(String, String)> {
    let given: Vec<Option<(usize, u32)>> = flags.iter().map(|(k, _)| place(prog, k)).collect();
    let mut out: Vec<(String, String)> = file
        .iter()
        .filter(|(k, _)| {
            let p = place(prog, k);
            !flags
                .iter()
                .zip(&given)
                .any(|((fk, _), g)| fk == k || (p.is_some() && *g == p))
        })
        .cloned()
        .collect();
    out.extend(flags.iter().cloned());
    out
}

/// The launch file's tensor maps with the flags' on top, as [`override_args`].
pub fn override_maps(
    prog: &Program,
    file: &[TensorMapArg],
    flags: &[TensorMapArg],
) -> Vec<TensorMapArg> {
    let at = |m: &TensorMapArg| {
        super::params::arg_place(prog, &m.param).map(|(i, _)| (i, m.byte_offset))
    };
    let mut out: Vec<TensorMapArg> = file
        .iter()
        .filter(|m| {
            let p = at(m);
            !flags.iter().any(|f| {
                (f.param == m.param && f.byte_offset == m.byte_offset)
                    || (p.is_some() && at(f) == p)
            })
        })
        .cloned()
        .collect();
    out.extend(flags.iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"{"format": "tilelab-launch", "version": 1, "ptx": "k.ptx",
        "kernel": "k", "grid": [2], "block": [128, 1], "cluster": [2, 1, 1],
        "dynamic_smem": 1024,
        "args": [{"param": 0, "value": "s32:256,128,256", "from": "shape_MNK"},
                 {"param": "p", "offset": 16, "value": 7},
                 {"param": 3, "tensor_map": "f16:256,256:512:64,8:128B", "from": "tma_a"},
                 {"param": 2, "from": "A"}]}"#;

    #[test]
    fn a_file_gives_the_flags_values() {
        let s = parse(OK).unwrap();
        assert_eq!(s.grid, [2, 1, 1]);
        assert_eq!(s.block, [128, 1, 1]);
        assert_eq!(s.cluster, Some([2, 1, 1]));
        assert_eq!(s.cta, [0, 0, 0]);
        assert_eq!(s.dynamic_smem, Some(1024));
        assert_eq!(
            s.args,
            [
                ("0".to_string(), "s32:256,128,256".to_string()),
                ("p+16".to_string(), "7".to_string())
            ]
        );
        assert_eq!(s.tensor_maps.len(), 1);
        assert_eq!(s.tensor_maps[0].param, "3");
        assert_eq!(s.tensor_maps[0].spec, "f16:256,256:512:64,8:128B");
        assert_eq!(
            s.from,
            [
                ("0".to_string(), "shape_MNK".to_string()),
                ("3".to_string(), "tma_a".to_string()),
                ("2".to_string(), "A".to_string())
            ]
        );
    }

    #[test]
    fn the_written_file_reads_back_the_same() {
        let f: LaunchFile = serde_json::from_str(OK).unwrap();
        let text = serde_json::to_string_pretty(&f).unwrap();
        assert_eq!(parse(&text).unwrap(), parse(OK).unwrap());
    }

    /// Each bad file: the JSON path named and one line.
    #[test]
    fn bad_files_name_the_path() {
        let cases: [(&str, &str, &str); 9] = [
            (
                "\"version\": 1",
                "\"version\": 2",
                "version: version 2 is not supported",
            ),
            (
                "\"tilelab-launch\"",
                "\"tilelab-lunch\"",
                "format: 'tilelab-lunch' is not a launch file format",
            ),
            ("\"kernel\"", "\"kernal\"", "kernal: unknown field `kernal`"),
            (
                "\"from\": \"A\"",
                "\"form\": \"A\"",
                "args[3].form: unknown field `form`",
            ),
            ("[2]", "[]", "grid: 0 numbers"),
            (
                "[128, 1]",
                "[128, 0]",
                "block[1]: 0: every dimension must be at least 1",
            ),
            (
                "\"param\": 0,",
                "\"param\": -1,",
                "args[0].param: '-1' names no parameter",
            ),
            (":128B", ":100B", "args[2].tensor_map:"),
            (
                "\"value\": 7",
                "\"value\": 7, \"tensor_map\": \"f16:1:2\"",
                "args[1]: both value and tensor_map",
            ),
        ];
        for (from, to, want) in cases {
            let text = OK.replacen(from, to, 1);
            assert_ne!(text, OK, "{from}");
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{to}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = parse("{\"format\": \"tilelab-launch\", \"version\": 1,").unwrap_err();
        assert!(e.to_string().starts_with("(document): not JSON"), "{e}");
        let e = parse("[1]").unwrap_err();
        assert_eq!(e.path, "(top level)");
    }
}
