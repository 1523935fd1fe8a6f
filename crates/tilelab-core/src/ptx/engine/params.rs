//! Launch parameters and limits: the kernel-parameter buffer ([`param_buffer`], every
//! `--arg` through [`encode_arg`]), CUDA's grid and block limits ([`check_launch`]) and the
//! shared-memory bytes of a launch ([`check_smem`]), all checked before anything is allocated.

use super::{Launch, RunError};
pub use crate::ptx::decode::reads::{ParamRead, mark_reads};
use crate::ptx::decode::{ParamInfo, Program, buffer_base};
use crate::ptx::types::Ty;
use crate::sim::arch::Arch;

/// An integer as `--arg` takes it: an optional sign, then decimal digits or `0x` and hex
/// digits, nothing else (no second sign, no `_`).
pub(in crate::ptx) fn parse_int(s: &str) -> Option<i128> {
    let t = s.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (digits, radix) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (t, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = i128::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

/// Whether a float's text names infinity (`inf`, `-Infinity`, …) or NaN (`nan`).
pub(in crate::ptx) fn names_inf_or_nan(t: &str) -> (bool, bool) {
    (t == "inf" || t == "-inf", t == "nan")
}

/// The spellings of a float parameter that are not a decimal number.
const FLOAT_WORDS: &str = "inf, -inf, nan (lowercase, exactly so)";

/// Whether a decimal float's text has a non-zero digit before its exponent (`1e-50` does,
/// `0.0e5` does not).
pub(in crate::ptx) fn nonzero_mantissa(t: &str) -> bool {
    t.split(['e', 'E'])
        .next()
        .is_some_and(|m| m.chars().any(|c| ('1'..='9').contains(&c)))
}

/// The bytes (little-endian, the type's size) of a kernel parameter of PTX type `ty` (a type
/// suffix without the dot, as [`crate::ptx::decode::ParamInfo::ty`]) from the text of
/// `--arg NAME=TEXT`; the one place every parameter value is checked.
///
/// * `.uN`: a whole number, decimal or `0x` hex, in 0..=2^N − 1 (no negative values);
///   `.sN`: −2^(N−1)..=2^(N−1) − 1; `.bN`: either reading, −2^(N−1)..=2^N − 1; `.pred`: 0 or 1;
///   `.f16x2`/`.bf16x2`: the 32 bits as a whole number 0..=2^32 − 1.
/// * `.f16`, `.bf16`, `.f32`, `.f64`: a number as Rust reads it (`0.125`, `-2e-3`), rounded to
///   nearest even; `inf`/`nan` only when written so. A finite text past the type's largest
///   value (f32: 3.4028235e38, f16: 65504) is refused rather than turned into infinity, and a
///   text with a non-zero digit that rounds to 0 is refused rather than turned into 0.
///
/// # Errors
/// One line naming the value, the type and what is allowed.
pub fn encode_arg(ty: &str, text: &str) -> Result<Vec<u8>, String> {
    // One spelling per value: no spaces around it, no other names of infinity or NaN.
    if text.trim() != text || text.is_empty() {
        return Err(format!(
            "'{}' has spaces around it (or is empty); write the value alone, e.g. --arg NAME=4096",
            crate::text::value(text)
        ));
    }
    let t = text;
    let tv = crate::text::value(t);
    let float = |bits: u32, x: f64, max: &str, min: &str| -> Result<u64, String> {
        let (inf, nan) = names_inf_or_nan(t);
        let r = match bits {
            16 if ty == "bf16" => half::bf16::from_f64(x).to_f64(),
            16 => half::f16::from_f64(x).to_f64(),
            32 => f64::from(x as f32),
            _ => x,
        };
        if r.is_nan() && !nan {
            return Err(format!("'{tv}' is not a number (.{ty})"));
        }
        if r.is_infinite() && !inf {
            return Err(format!(
                "{tv} overflows .{ty} (its largest finite value is {max}); write inf for infinity"
            ));
        }
        if r == 0.0 && nonzero_mantissa(t) {
            return Err(format!(
                "{tv} underflows to 0 in .{ty} (its smallest positive value is {min})"
            ));
        }
        Ok(match bits {
            16 if ty == "bf16" => u64::from(half::bf16::from_f64(x).to_bits()),
            16 => u64::from(half::f16::from_f64(x).to_bits()),
            32 => u64::from((x as f32).to_bits()),
            _ => x.to_bits(),
        })
    };
    let (bits, v) = match ty {
        "f16" | "bf16" | "f32" | "f64" => {
            let l = t.to_ascii_lowercase();
            if (l.contains("inf") || l.contains("nan")) && !matches!(t, "inf" | "-inf" | "nan") {
                return Err(format!(
                    "'{}' is not a spelling of a .{ty} value; allowed: a decimal number (0.125, -1e3) or {FLOAT_WORDS}",
                    crate::text::value(t)
                ));
            }
            let x: f64 = t.parse().map_err(|_| {
                format!("'{tv}' is not a number; expected one for a .{ty} parameter, e.g. 0.125")
            })?;
            // IEEE 754 binary16, bfloat16, binary32, binary64: largest finite and smallest
            // positive (subnormal) values.
            let (bits, max, min) = match ty {
                "f16" => (16, "65504", "6e-8"),
                "bf16" => (16, "3.3895314e38", "9.2e-41"),
                "f32" => (32, "3.4028235e38", "1.4e-45"),
                _ => (64, "1.7976931348623157e308", "4.9e-324"),
            };
            (bits, float(bits, x, max, min)?)
        }
        _ => {
            let Some(tyv) = Ty::parse(ty) else {
                return Err(format!("parameters of type .{ty} are not supported"));
            };
            let bits = tyv.bits();
            let Some(n) = parse_int(t) else {
                return Err(format!(
                    "'{tv}' is not a whole number; expected an integer (decimal or 0x hex) for a .{ty} parameter"
                ));
            };
            let (lo, hi) = match tyv {
                Ty::S(_) => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
                Ty::B(_) => (-(1i128 << (bits - 1)), (1i128 << bits) - 1),
                _ => (0, (1i128 << bits) - 1),
            };
            if n < lo || n > hi {
                return Err(format!(
                    "{tv} is out of range for .{ty} (allowed {lo}..={hi})"
                ));
            }
            (bits, n as u64)
        }
    };
    Ok(v.to_le_bytes()[..bits.div_ceil(8) as usize].to_vec())
}

/// The architecture whose launch limits the machine enforces: sm_90 (H100/H200, the card
/// `tilelab verify` runs on).
pub const ARCH: Arch = Arch::Sm90;

/// Checks a launch against CUDA's limits for [`ARCH`] (CUDA C++ Programming Guide, "Technical
/// Specifications per Compute Capability": grid x at most 2^31 − 1, y and z at most 65,535;
/// block x and y at most 1,024, z at most 64, at most 1,024 threads; no dimension 0), the CTA
/// against the grid, and the block against the kernel's `.reqntid` (exactly) and `.maxntid`
/// (at most its product of threads; PTX ISA, "Performance-Tuning Directives"). Returns the
/// threads per block.
///
/// # Errors
/// [`RunError::Launch`], one line naming the flag, the value and the limit.
pub fn check_launch(prog: &Program, l: &Launch) -> Result<u32, RunError> {
    let lim = ARCH.limits();
    let d3 = |v: [u32; 3]| format!("{},{},{}", v[0], v[1], v[2]);
    let bad = |s: String| Err(RunError::Launch(s));
    for (flag, v, max, what) in [
        ("--grid", l.grid, lim.max_grid_dim, "grid (blocks)"),
        ("--block", l.block, lim.max_block_dim, "block (threads)"),
    ] {
        for (i, axis) in ["x", "y", "z"].into_iter().enumerate() {
            if v[i] == 0 {
                return bad(format!(
                    "{flag} {}: the {axis} dimension is 0; every dimension must be at least 1",
                    d3(v)
                ));
            }
            if v[i] > max[i] {
                return bad(format!(
                    "{flag} {}: {axis} = {} is above CUDA's limit of {} for the {axis} dimension of a {what} on {ARCH} (CUDA C++ Programming Guide, Technical Specifications); allowed: 1..={} in x, y, z",
                    d3(v),
                    v[i],
                    max[i],
                    d3(max).replace(',', ", ")
                ));
            }
        }
    }
    let threads = l
        .block
        .iter()
        .try_fold(1u64, |a, &b| a.checked_mul(u64::from(b)));
    let threads = match threads {
        Some(n) if n <= u64::from(lim.max_threads_per_block) => n as u32,
        _ => {
            return bad(format!(
                "--block {} has {} threads; CUDA allows at most {} threads per block on {ARCH}",
                d3(l.block),
                threads.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string()),
                lim.max_threads_per_block
            ));
        }
    };
    for d in 0..3 {
        if l.cta[d] >= l.grid[d] {
            return bad(format!(
                "--cta {} is outside the grid {}: each coordinate must be below the grid's (0..={})",
                d3(l.cta),
                d3(l.grid),
                d3(l.grid.map(|g| g - 1))
            ));
        }
    }
    if let Some(r) = prog.reqntid
        && r != l.block
    {
        return bad(format!(
            "kernel '{}' requires a block of {} threads (.reqntid); --block gave {}",
            crate::ptx::report::demangle(&prog.name),
            d3(r),
            d3(l.block)
        ));
    }
    if let Some(m) = prog.maxntid {
        let max = m.iter().map(|&x| u64::from(x)).product::<u64>();
        if u64::from(threads) > max {
            return bad(format!(
                "kernel '{}' allows at most {max} threads per block (.maxntid {}); --block {} has {threads}",
                crate::ptx::report::demangle(&prog.name),
                d3(m),
                d3(l.block)
            ));
        }
    }
    Ok(threads)
}

/// The most CTAs a cluster may have in a portable launch (CUDA C++ Programming Guide, "Thread
/// Block Clusters": 8; sm_90 allows 16 only with `cudaFuncAttributeNonPortableClusterSizeAllowed`,
/// which the simulator does not model).
pub const MAX_CLUSTER_CTAS: u32 = 8;

/// The cluster a launch runs with: [`Launch::cluster`], or the kernel's `.reqnctapercluster`
/// when the launch names none (`None`; `Some([1, 1, 1])` is a cluster launch, as on the H200's
/// driver: `tests/data/hopper_probes/h200_cluster_rules.json`), checked against the kernel's cluster directives
/// (PTX ISA §11.7: `.reqnctapercluster` must equal a shape given at launch, `.maxclusterrank`
/// bounds the CTAs per cluster, `.explicitcluster` needs a shape) and the grid (each dimension a
/// multiple of the cluster's; CUDA refuses the launch otherwise) and [`MAX_CLUSTER_CTAS`].
/// Returns the shape in CTAs (x, y, z) and whether the launch is an explicit cluster launch
/// (`%is_explicit_cluster`: a shape given at launch or by `.reqnctapercluster`).
///
/// # Errors
/// [`RunError::Launch`], one line naming the shape and the rule.
pub fn check_cluster(prog: &Program, l: &Launch) -> Result<([u32; 3], bool), RunError> {
    let d3 = |v: [u32; 3]| format!("{},{},{}", v[0], v[1], v[2]);
    let bad = |s: String| Err(RunError::Launch(s));
    let name = crate::ptx::report::demangle(&prog.name);
    let given = l.cluster.is_some();
    let asked = l.cluster.unwrap_or([1, 1, 1]);
    if asked.contains(&0) {
        return bad(format!(
            "--cluster {}: every dimension must be at least 1",
            d3(asked)
        ));
    }
    let dims = match prog.reqnctapercluster {
        Some(r) if given && r != asked => {
            return bad(format!(
                "--cluster {} disagrees with kernel '{name}''s .reqnctapercluster {} (PTX ISA §11.7.1: a cluster shape given at launch must equal the directive's); leave --cluster out or give {}",
                d3(asked),
                d3(r),
                d3(r)
            ));
        }
        Some(r) => r,
        None => asked,
    };
    let explicit = given || prog.reqnctapercluster.is_some();
    if prog.explicitcluster && !explicit {
        return bad(format!(
            "kernel '{name}' has .explicitcluster: it must be launched as clusters (PTX ISA §11.7.2); give --cluster X,Y,Z"
        ));
    }
    let ctas = u64::from(dims[0]) * u64::from(dims[1]) * u64::from(dims[2]);
    if ctas > u64::from(MAX_CLUSTER_CTAS) {
        return bad(format!(
            "cluster {} has {ctas} CTAs, more than the portable limit of {MAX_CLUSTER_CTAS} (CUDA C++ Programming Guide, Thread Block Clusters; 16 on sm_90 needs cudaFuncAttributeNonPortableClusterSizeAllowed, not modelled)",
            d3(dims)
        ));
    }
    if let Some(m) = prog.maxclusterrank
        && ctas > u64::from(m)
    {
        return bad(format!(
            "cluster {} has {ctas} CTAs, more than kernel '{name}''s .maxclusterrank {m} (PTX ISA §11.7.3: the most CTAs a cluster may have)",
            d3(dims)
        ));
    }
    for (i, axis) in ["x", "y", "z"].into_iter().enumerate() {
        if !l.grid[i].is_multiple_of(dims[i]) {
            return bad(format!(
                "--grid {} is not a whole number of clusters {}: the grid's {axis} ({}) must be a multiple of the cluster's ({})",
                d3(l.grid),
                d3(dims),
                l.grid[i],
                dims[i]
            ));
        }
    }
    Ok((dims, explicit))
}

/// The parameter buffer of a launch with no tensor maps: [`launch_params`] with `args` only.
///
/// # Errors
/// [`launch_params`]'s.
pub fn param_buffer(prog: &Program, args: &[(String, String)]) -> Result<Vec<u8>, RunError> {
    fill_params(prog, args, &[])
}

/// The parameter buffer of launch `l`: every `--arg` and `--tensor-map` written into the bytes
/// of its parameter, pointers at their buffers' bases, the rest zero.
///
/// * `--arg NAME=VALUE` (NAME a parameter's name or its index from 0): one scalar through
///   [`encode_arg`], the whole parameter.
/// * `--arg NAME[+OFFSET]=TYPE:V[,V...]` for a `.b8` parameter: values of one PTX type
///   (`u8`…`u64`, `s8`…`s64`, `b8`…`b64`, `f16`, `bf16`, `f32`, `f64`, `f16x2`, `bf16x2`), each
///   through [`encode_arg`],
///   packed little-endian one after another from byte OFFSET (decimal or `0x` hex, default 0)
///   of the parameter: the way a by-value struct (`.param .align A .b8 name[N]`) is filled.
///   Refused: bytes past the parameter, a place not a multiple of the type's size (in the
///   parameter buffer, as `ld.param` needs it), a `.pred`.
/// * `--tensor-map`: a handle ([`TENSOR_MAP_MAGIC`]) in its 128 bytes ([`TensorMapArg`]).
///
/// Two writes to the same bytes must agree (as bytes: `7` and `0x7` do). A byte the kernel
/// reads ([`ParamInfo::reads`]) must be given. A `.b8` parameter (the form of every by-value
/// struct) or a 64-bit integer one (an unused pointer) that the kernel never reads needs no
/// value (CuTe's empty structs) and is zero, as are the bytes of a struct it never reads; a
/// scalar of another type always needs one.
///
/// # Errors
/// [`RunError::Launch`], one line naming the `--arg` or `--tensor-map`, or the parameters
/// missing a value (with the bytes read and the line reading them for a struct).
pub fn launch_params(prog: &Program, l: &Launch) -> Result<Vec<u8>, RunError> {
    fill_params(prog, &l.args, &l.tensor_maps)
}

/// Who wrote a parameter byte: the flag's text, for messages.
struct Writes<'a> {
    /// Per parameter: per byte, the index into `flags` of its writer.
    owner: Vec<Vec<Option<u32>>>,
    flags: Vec<String>,
    params: &'a mut [u8],
}

impl Writes<'_> {
    /// Writes `bytes` at byte `at` of parameter `i` for flag `flag`; refuses a byte that another
    /// flag gave a different value.
    fn put(
        &mut self,
        prog: &Program,
        i: usize,
        at: u32,
        bytes: &[u8],
        flag: String,
    ) -> Result<(), RunError> {
        let p = &prog.params[i];
        let f = self.flags.len() as u32;
        self.flags.push(flag);
        let own = &mut self.owner[i];
        if own.is_empty() {
            own.resize(p.size as usize, None);
        }
        let base = p.offset as usize + at as usize;
        for (k, &b) in bytes.iter().enumerate() {
            let j = at as usize + k;
            if let Some(g) = own[j]
                && self.params[base + k] != b
            {
                let whole = at == 0 && bytes.len() == p.size as usize;
                let what = if whole {
                    format!("parameter '{}' (index {i})", p.name)
                } else {
                    format!("byte {j} of parameter '{}' (index {i})", p.name)
                };
                return Err(RunError::Launch(format!(
                    "{} and {} give {what} two different values; give it once",
                    self.flags[g as usize], self.flags[f as usize]
                )));
            }
            own[j] = Some(f);
            self.params[base + k] = b;
        }
        Ok(())
    }
}

/// The index of the parameter `key` names (its name, or its index from 0).
fn find_param(prog: &Program, key: &str) -> Option<usize> {
    prog.params
        .iter()
        .position(|p| p.name == key)
        .or_else(|| key.parse::<usize>().ok().filter(|&i| i < prog.params.len()))
}

/// Where a `--arg`/`--tensor-map` key `NAME[+OFFSET]` writes: (parameter index, byte offset
/// inside it, 0 when not given); `None` when the key names no parameter of `prog` or its offset
/// is not a number.
pub fn arg_place(prog: &Program, key: &str) -> Option<(usize, u32)> {
    let (k, off) = split_offset(key).ok()?;
    Some((find_param(prog, k)?, off.unwrap_or(0)))
}

/// The error for a flag naming no parameter.
fn no_param(prog: &Program, flag: &str, key: &str) -> RunError {
    let known = match prog.params.is_empty() {
        true => "the kernel takes no parameters".to_string(),
        false => format!("parameters: {}", param_list(prog)),
    };
    RunError::Launch(format!(
        "{flag}: kernel '{}' has no parameter '{}'; {known}",
        crate::ptx::report::demangle(&prog.name),
        crate::text::value(key)
    ))
}

/// The PTX types a `--arg NAME=TYPE:V,...` value may have.
pub const PACKED_TYPES: &str =
    "u8, u16, u32, u64, s8, s16, s32, s64, b8, b16, b32, b64, f16, bf16, f32, f64, f16x2, bf16x2";

/// `NAME[+OFFSET]`: the parameter key and the byte offset (0 when not given).
fn split_offset(key: &str) -> Result<(&str, Option<u32>), String> {
    match key.rsplit_once('+') {
        None => Ok((key, None)),
        Some((k, o)) => {
            let off = parse_int(o)
                .filter(|&v| v >= 0 && v <= i128::from(crate::ptx::decode::PARAM_LIMIT))
                .ok_or_else(|| {
                    format!(
                        "'{}' is not a byte offset; allowed: NAME+OFFSET with OFFSET a whole number of bytes (decimal or 0x hex) inside the parameter, e.g. params+16",
                        crate::text::value(key)
                    )
                })?;
            if k.is_empty() {
                return Err(format!(
                    "'{}' names no parameter before '+'; allowed: NAME+OFFSET or INDEX+OFFSET",
                    crate::text::value(key)
                ));
            }
            Ok((k, Some(off as u32)))
        }
    }
}

fn fill_params(
    prog: &Program,
    args: &[(String, String)],
    maps: &[TensorMapArg],
) -> Result<Vec<u8>, RunError> {
    let bad = |s: String| Err(RunError::Launch(s));
    let mut params = vec![0u8; prog.param_bytes as usize];
    for p in &prog.params {
        // The decoder lays the parameters out inside `param_bytes`.
        if (p.offset as usize).saturating_add(p.size as usize) > params.len() {
            return bad(format!(
                "parameter '{}' lies outside the {} parameter bytes",
                p.name, prog.param_bytes
            ));
        }
    }
    let mut w = Writes {
        owner: vec![Vec::new(); prog.params.len()],
        flags: Vec::new(),
        params: &mut params,
    };
    for (k, v) in args {
        // Quoted clipped: a 100,000-character value leaves the rest of the message on the line.
        let (kq, vq) = (crate::text::value(k), crate::text::value(v));
        let flag = format!("--arg {kq}={vq}");
        let (name, off) = split_offset(k).map_err(|e| RunError::Launch(format!("{flag}: {e}")))?;
        let Some(i) = find_param(prog, name) else {
            return Err(no_param(prog, &flag, name));
        };
        let p = &prog.params[i];
        if p.pointer {
            return bad(format!(
                "{flag}: '{}' is a pointer; pointers need no value (each gets its own zero-filled buffer)",
                p.name
            ));
        }
        let err = |e: String| RunError::Launch(format!("{flag}: {e}"));
        let (at, bytes) = match v.split_once(':') {
            Some(_) if p.ty != "b8" => {
                return bad(format!(
                    "{flag}: '{}' is a .{} scalar, not a struct: give its value alone, e.g. --arg {}=1",
                    p.name,
                    p.ty,
                    crate::text::value(name)
                ));
            }
            Some((ty, vals)) => {
                let at = off.unwrap_or(0);
                (at, pack(prog, i, at, ty, vals).map_err(err)?)
            }
            None => {
                if off.is_some() {
                    return bad(format!(
                        "{flag}: a value at a byte offset needs its type, e.g. --arg {}=u32:{vq}",
                        crate::text::value(k)
                    ));
                }
                let bytes = encode_arg(&p.ty, v).map_err(err)?;
                if bytes.len() != p.size as usize {
                    return bad(format!(
                        "{flag}: '{}' is a {}-byte .{} array (a by-value struct): give its bytes as --arg NAME[+OFFSET]=TYPE:V[,V...], e.g. --arg {}=s32:128,128,512",
                        p.name,
                        p.size,
                        p.ty,
                        crate::text::value(name)
                    ));
                }
                (0, bytes)
            }
        };
        w.put(prog, i, at, &bytes, flag)?;
    }
    for (j, m) in maps.iter().enumerate() {
        let flag = format!("--tensor-map {}", m.text());
        let i = find_param(prog, &m.param).ok_or_else(|| no_param(prog, &flag, &m.param))?;
        let base =
            tensor_map_base(prog, maps, j).map_err(|e| RunError::Launch(format!("{flag}: {e}")))?;
        check_map_place(&prog.params[i], m.byte_offset)
            .map_err(|e| RunError::Launch(format!("{flag}: {e}")))?;
        let handle = tensor_map_handle(j as u32, base);
        w.put(prog, i, m.byte_offset, &handle, flag)?;
    }
    let owner = std::mem::take(&mut w.owner);
    let mut missing = Vec::new();
    let (mut strukt, mut map) = (false, false);
    for (i, p) in prog.params.iter().enumerate() {
        if p.pointer {
            if owner[i].is_empty() {
                let o = p.offset as usize;
                let n = (p.size as usize).min(8);
                params[o..o + n].copy_from_slice(&buffer_base(i).to_le_bytes()[..n]);
            }
            continue;
        }
        let own = &owner[i];
        if own.is_empty() && !may_be_unset(p) {
            missing.push(format!("{} (.{}, index {i})", p.name, p.ty));
            continue;
        }
        let gaps = unset_reads(p, own);
        if !gaps.is_empty() {
            strukt |= p.ty == "b8";
            map |= check_map_place(p, 0).is_ok();
            let decl = if p.ty == "b8" {
                format!(".b8[{}]", p.size)
            } else {
                format!(".{}", p.ty)
            };
            missing.push(format!(
                "{} ({decl}, index {i}; reads bytes {}{})",
                p.name,
                gaps.iter()
                    .map(|(lo, hi, line)| format!("{lo}..{hi} at line {line}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if own.is_empty() {
                    ""
                } else {
                    ", which no --arg gives"
                }
            ));
        }
    }
    if !missing.is_empty() {
        return bad(format!(
            "missing value for parameter{} {}: give --arg NAME=VALUE (or --arg INDEX=VALUE){}{}",
            if missing.len() > 1 { "s" } else { "" },
            crate::text::list(&missing),
            if strukt {
                "; struct bytes: --arg NAME[+OFFSET]=TYPE:V[,V...]"
            } else {
                ""
            },
            if map {
                "; a tensor map (CUtensorMap, a .param .align 64 .b8 [128]): --tensor-map NAME[+BYTE_OFFSET]=DTYPE:DIMS:STRIDES:BOX[:SWIZZLE]"
            } else {
                ""
            }
        ));
    }
    Ok(params)
}

/// Whether parameter `p` may be left without a value when the kernel never reads it: a `.b8`
/// parameter (every by-value struct, CuTe's empty ones among them) or a 64-bit integer (the
/// unused pointers nvcc leaves unmarked). Other scalars always need one (a value costs the
/// user one `--arg`, and an `--arg` for the wrong parameter is then caught).
fn may_be_unset(p: &ParamInfo) -> bool {
    matches!(p.ty.as_str(), "b8" | "u64" | "s64" | "b64")
}

/// The byte ranges of `p` the kernel reads that no flag gave (`own`: the writer of each byte,
/// empty for none), each with the first line reading it, in byte order, merged; at most 8.
fn unset_reads(p: &ParamInfo, own: &[Option<u32>]) -> Vec<(u32, u32, u32)> {
    let mut unset: Vec<Option<u32>> = vec![None; p.size as usize];
    for r in &p.reads {
        for b in r.lo..r.hi.min(p.size) {
            if own.get(b as usize).is_none_or(Option::is_none) {
                let l = &mut unset[b as usize];
                *l = Some(l.map_or(r.line, |x| x.min(r.line)));
            }
        }
    }
    let mut out: Vec<(u32, u32, u32)> = Vec::new();
    for (b, l) in unset.iter().enumerate() {
        let Some(line) = *l else { continue };
        let b = b as u32;
        if let Some(last) = out.last_mut()
            && last.1 == b
            && last.2 == line
        {
            last.1 += 1;
        } else if out.len() == 8 {
            break;
        } else {
            out.push((b, b + 1, line));
        }
    }
    out
}

/// The bytes of `vals` (`V[,V...]` of PTX type `ty`) for byte `at` of parameter `i`.
fn pack(prog: &Program, i: usize, at: u32, ty: &str, vals: &str) -> Result<Vec<u8>, String> {
    let p = &prog.params[i];
    let size = match Ty::parse(ty) {
        Some(Ty::Pred) => {
            return Err(format!(
                "a parameter holds no .pred (predicates live only in registers, PTX ISA §5.2.1); write a bool as u8; allowed types: {PACKED_TYPES}"
            ));
        }
        Some(t) => t.bytes(),
        None => {
            return Err(format!(
                "unknown type '{}'; allowed: {PACKED_TYPES}",
                crate::text::value(ty)
            ));
        }
    };
    let n = vals.split(',').count() as u64;
    let end = u64::from(at) + n * u64::from(size);
    if end > u64::from(p.size) {
        return Err(format!(
            "{n} value{} of .{ty} ({} bytes) from byte {at} end at byte {end}, past the {} bytes of parameter '{}'",
            if n == 1 { "" } else { "s" },
            n * u64::from(size),
            p.size,
            p.name
        ));
    }
    let abs = p.offset + at;
    if !abs.is_multiple_of(size) {
        return Err(format!(
            "byte {at} of parameter '{}' (byte {abs} of the parameter buffer) is not a multiple of {size}, the size of .{ty}: ld.param reads a .{ty} at a multiple of its size",
            p.name
        ));
    }
    let mut out = Vec::with_capacity((n * u64::from(size)) as usize);
    for v in vals.split(',') {
        out.extend(encode_arg(ty, v)?);
    }
    Ok(out)
}

/// A `--tensor-map NAME[+BYTE_OFFSET]=DTYPE:DIMS:STRIDES:BOX[:SWIZZLE][@POINTER]`: a tiled
/// `CUtensorMap` (the arguments of `cuTensorMapEncodeTiled`, CUDA driver API: dims and box
/// innermost first, in elements; strides in bytes for dimensions 1..rank; element strides 1;
/// interleave none; out-of-bounds elements read as zero) placed at byte `byte_offset` of
/// parameter `param`. Checked here: the form, the data type's name, the counts (rank 1..=5,
/// rank − 1 strides, rank box dims), whole numbers, dims 1..=2^32, strides below 2^40, box dims
/// 1..=256, the swizzle's name; the rest of the driver's rules are `sim::tma`'s.
///
/// The tensor's global memory: its own zero-filled buffer ([`tensor_map_base`]), or with
/// `@POINTER` the buffer of that pointer parameter (name or index), so that the map and the
/// pointer see the same bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapArg {
    /// The parameter holding the map: its name or index, as written.
    pub param: String,
    /// Byte offset of the map in the parameter (a multiple of 64).
    pub byte_offset: u32,
    /// `DTYPE:DIMS:STRIDES:BOX[:SWIZZLE]` as written; [`TensorMapArg::map`] parses it with
    /// `cuTensorMapEncodeTiled`'s rules ([`crate::sim::tma::TensorMap::parse`]).
    pub spec: String,
    /// `@POINTER`: the pointer parameter whose buffer the map points into.
    pub base: Option<String>,
}

/// The data types of a tensor map (`CUtensorMapDataType`) by short name, with their bytes.
const TMA_DTYPES: [(&str, u32); 13] = [
    ("u8", 1),
    ("u16", 2),
    ("u32", 4),
    ("s32", 4),
    ("u64", 8),
    ("s64", 8),
    ("f16", 2),
    ("f32", 4),
    ("f64", 8),
    ("bf16", 2),
    ("f32_ftz", 4),
    ("tf32", 4),
    ("tf32_ftz", 4),
];

/// `CUtensorMap`'s size in bytes (`CU_TENSOR_MAP_NUM_QWORDS` = 16 in `cuda.h`).
pub const TENSOR_MAP_BYTES: u32 = 128;
/// `CUtensorMap`'s alignment in bytes (`alignas(64)` in `cuda.h`; `cuTensorMapEncodeTiled`
/// refuses a map address that is not 64-byte aligned).
pub const TENSOR_MAP_ALIGN: u32 = 64;

/// The first 8 bytes of the handle `tilelab ptx` writes where a `CUtensorMap` lives: the ASCII
/// bytes `tlTMAP\0\x01` (version 1), little-endian. The handle's 128 bytes: 0..8 this magic;
/// 8..12 the map's index in [`Launch::tensor_maps`] (`u32`, little-endian); 12..16 zero;
/// 16..24 the tensor's global base address (`u64`, the buffer [`tensor_map_base`] names);
/// 24..128 zero. A real `CUtensorMap` is opaque (its encoding is the driver's): a kernel reads
/// it only through `cp.async.bulk.tensor` and `prefetch.tensormap`, which find the map with
/// [`tensor_map_index`].
pub const TENSOR_MAP_MAGIC: u64 = u64::from_le_bytes(*b"tlTMAP\0\x01");

/// The 128 handle bytes of map `index` whose tensor starts at global address `base`.
pub fn tensor_map_handle(index: u32, base: u64) -> [u8; 128] {
    let mut h = [0u8; 128];
    h[..8].copy_from_slice(&TENSOR_MAP_MAGIC.to_le_bytes());
    h[8..12].copy_from_slice(&index.to_le_bytes());
    h[16..24].copy_from_slice(&base.to_le_bytes());
    h
}

/// The index in [`Launch::tensor_maps`] of the map whose handle starts at byte `offset` of the
/// parameter buffer `params`, `None` when no handle is there (the address an instruction gave
/// holds no `--tensor-map`).
pub fn tensor_map_index(params: &[u8], offset: u64) -> Option<usize> {
    let o = usize::try_from(offset).ok()?;
    let h = params.get(o..o.checked_add(16)?)?;
    (h[..8] == TENSOR_MAP_MAGIC.to_le_bytes() && h[12..16] == [0; 4])
        .then(|| u32::from_le_bytes([h[8], h[9], h[10], h[11]]) as usize)
}

/// Whether parameter `p` can hold a `CUtensorMap` at byte `off`: a `.b8` array with `.align`
/// at least 64, `off` a multiple of 64, the 128 bytes inside it.
fn check_map_place(p: &ParamInfo, off: u32) -> Result<(), String> {
    let want = "a CUtensorMap is 128 bytes at a 64-byte-aligned place: a .param .align 64 .b8 NAME[128] (Triton's TensorDescriptor) or a struct holding one (.align 64 or more)";
    if p.ty != "b8" || p.align < TENSOR_MAP_ALIGN {
        let decl = if p.ty == "b8" {
            format!(".align {} .b8 [{}]", p.align, p.size)
        } else {
            format!(".{}", p.ty)
        };
        return Err(format!("parameter '{}' is {decl}; {want}", p.name));
    }
    if !off.is_multiple_of(TENSOR_MAP_ALIGN) || u64::from(off) + 128 > u64::from(p.size) {
        return Err(format!(
            "byte offset {off} of parameter '{}' ({} bytes) cannot hold it; {want}: allowed offsets {}",
            p.name,
            p.size,
            match p.size.checked_sub(TENSOR_MAP_BYTES) {
                Some(last) => format!("0..={} in steps of 64", last - last % 64),
                None => "none".to_string(),
            }
        ));
    }
    Ok(())
}

/// Parses `--tensor-map NAME[+BYTE_OFFSET]=DTYPE:DIMS:STRIDES:BOX[:SWIZZLE][@POINTER]`
/// ([`TensorMapArg`]); whether NAME is a parameter that can hold a map is checked at launch.
///
/// # Errors
/// One line naming the part and what is allowed.
pub fn parse_tensor_map(s: &str) -> Result<TensorMapArg, String> {
    const FORM: &str = "NAME[+BYTE_OFFSET]=DTYPE:DIMS:STRIDES:BOX[:SWIZZLE][@POINTER], e.g. 3=f16:512,128:1024:64,128:128B";
    let sq = crate::text::value(s);
    let Some((key, rest)) = s.split_once('=') else {
        return Err(format!("'{sq}': expected {FORM}"));
    };
    let (param, off) = split_offset(key.trim())?;
    if param.is_empty() {
        return Err(format!("'{sq}' names no parameter; expected {FORM}"));
    }
    let (spec, base) = match rest.split_once('@') {
        Some((a, b)) if !b.trim().is_empty() => (a, Some(b.trim().to_string())),
        Some(_) => {
            return Err(format!(
                "'{sq}': '@' names no pointer parameter; expected {FORM}"
            ));
        }
        None => (rest, None),
    };
    let m = TensorMapArg {
        param: param.to_string(),
        byte_offset: off.unwrap_or(0),
        spec: spec.trim().to_string(),
        base,
    };
    m.tensor_bytes().map_err(|e| format!("'{sq}': {e}"))?;
    // Then cuTensorMapEncodeTiled's other rules (the box's inner bytes within the swizzle
    // span, the box within shared memory, …), as the bulk copies will use the map.
    crate::sim::tma::TensorMap::parse(&m.spec).map_err(|e| format!("'{sq}': {e}"))?;
    Ok(m)
}

impl TensorMapArg {
    /// The map: [`crate::sim::tma::TensorMap::parse`] of the spec.
    ///
    /// # Errors
    /// One line naming the flag's value and the rule it breaks.
    pub fn map(&self) -> Result<crate::sim::tma::TensorMap, String> {
        crate::sim::tma::TensorMap::parse(&self.spec)
            .map_err(|e| format!("--tensor-map {}: {e}", self.text()))
    }

    /// The flag's value as written back (`NAME+OFF=SPEC@PTR`), clipped for messages.
    pub fn text(&self) -> String {
        let mut t = self.param.clone();
        if self.byte_offset > 0 {
            t += &format!("+{}", self.byte_offset);
        }
        t += "=";
        t += &self.spec;
        if let Some(b) = &self.base {
            t += "@";
            t += b;
        }
        crate::text::value(&t).into_owned()
    }

    /// The bytes the tensor spans from its base: the element size plus, for every dimension,
    /// (dim − 1) × its byte stride (the element size for dimension 0).
    ///
    /// # Errors
    /// One line naming the part of the spec that is not allowed.
    pub fn tensor_bytes(&self) -> Result<u64, String> {
        const FORM: &str = "DTYPE:DIMS:STRIDES:BOX[:SWIZZLE]";
        let parts: Vec<&str> = self.spec.split(':').collect();
        if !(4..=5).contains(&parts.len()) {
            return Err(format!(
                "the map has {} ':'-separated parts; allowed: {FORM} (4 or 5)",
                parts.len()
            ));
        }
        let Some(&(_, e)) = TMA_DTYPES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(parts[0]))
        else {
            let names: Vec<&str> = TMA_DTYPES.iter().map(|d| d.0).collect();
            return Err(format!(
                "unknown tensor map data type '{}'; allowed: {}",
                crate::text::value(parts[0]),
                names.join(", ")
            ));
        };
        let list = |what: &str, s: &str, lo: u64, hi: u64| -> Result<Vec<u64>, String> {
            if s.is_empty() {
                return Ok(Vec::new());
            }
            s.split(',')
                .map(|v| {
                    v.parse::<u64>().ok().filter(|x| (lo..=hi).contains(x)).ok_or_else(|| {
                        format!(
                            "{what} '{}' is not allowed; allowed: whole numbers {lo}..={hi}, comma-separated",
                            crate::text::value(v)
                        )
                    })
                })
                .collect()
        };
        let dims = list("dim", parts[1], 1, 1 << 32)?;
        let strides = list("stride", parts[2], 1, (1 << 40) - 1)?;
        let boxes = list("box dim", parts[3], 1, 256)?;
        let rank = dims.len();
        if !(1..=5).contains(&rank) || strides.len() + 1 != rank || boxes.len() != rank {
            return Err(format!(
                "{} dims, {} strides and {} box dims; allowed: a rank of 1..=5 with rank dims, rank − 1 strides (bytes, dimensions 1..) and rank box dims",
                dims.len(),
                strides.len(),
                boxes.len()
            ));
        }
        // cuTensorMapEncodeTiled: globalStrides multiples of 16, boxDim[0] x elementsize too.
        if let Some(st) = strides.iter().find(|&&st| !st.is_multiple_of(16)) {
            return Err(format!(
                "stride {st} bytes is not allowed; allowed: multiples of 16 (cuTensorMapEncodeTiled's globalStrides)"
            ));
        }
        if !(boxes[0] * u64::from(e)).is_multiple_of(16) {
            return Err(format!(
                "box dim 0 of {} x {e}-byte elements is {} bytes; allowed: a multiple of 16 bytes (cuTensorMapEncodeTiled)",
                boxes[0],
                boxes[0] * u64::from(e)
            ));
        }
        if let Some(sw) = parts.get(4)
            && !["none", "32b", "64b", "128b"].contains(&sw.to_ascii_lowercase().as_str())
        {
            return Err(format!(
                "unknown swizzle '{}'; allowed: none, 32B, 64B, 128B",
                crate::text::value(sw)
            ));
        }
        let steps = std::iter::once(u64::from(e)).chain(strides.iter().copied());
        dims.iter().zip(steps).try_fold(u64::from(e), |acc, (&d, st)| {
            (d - 1).checked_mul(st).and_then(|x| x.checked_add(acc))
        })
        .filter(|&b| b <= super::mem::BUFFER_WINDOW)
        .ok_or_else(|| {
            format!(
                "the tensor spans more than {} bytes, the most one buffer of the simulator holds (ptx::mem::BUFFER_WINDOW)",
                super::mem::BUFFER_WINDOW
            )
        })
    }
}

/// The global base address of map `j` of `maps`: the buffer of its `@POINTER`, or its own
/// buffer, numbered after the parameters' and the module variables' (`buffer_base(params +
/// globals + j)`), zero-filled and paged as they are ([`super::mem::MAX_GLOBAL_BYTES`]).
///
/// # Errors
/// A spec that is not allowed, or an `@POINTER` that is not a pointer parameter.
pub fn tensor_map_base(prog: &Program, maps: &[TensorMapArg], j: usize) -> Result<u64, String> {
    let m = &maps[j];
    m.tensor_bytes()?;
    match &m.base {
        None => Ok(buffer_base(prog.params.len() + prog.globals.len() + j)),
        Some(b) => match find_param(prog, b) {
            Some(i) if prog.params[i].pointer => Ok(buffer_base(i)),
            Some(i) => Err(format!(
                "@{}: parameter '{}' is not a pointer (.{}); the map's tensor lives in a pointer parameter's buffer or, without @, its own",
                crate::text::value(b),
                prog.params[i].name,
                prog.params[i].ty
            )),
            None => Err(format!(
                "@{}: kernel '{}' has no parameter '{}'; parameters: {}",
                crate::text::value(b),
                crate::ptx::report::demangle(&prog.name),
                crate::text::value(b),
                param_list(prog)
            )),
        },
    }
}

/// The names of the global buffers the maps of a launch add, one per map in order
/// (`--tensor-map NAME`), after the parameters' and the module variables'.
pub fn tensor_map_names(maps: &[TensorMapArg]) -> impl Iterator<Item = String> + '_ {
    maps.iter().map(|m| format!("--tensor-map {}", m.param))
}

/// The shared-memory bytes of a launch: the kernel's static bytes and `--dynamic-smem` (all
/// that is left of the per-block limit when the kernel declares dynamic shared memory and the
/// flag is not given), within [`ARCH`]'s per-block limit with the opt-in above 48 KiB
/// (`Arch::limits().smem_per_block_bytes`; sm_90: 227 KiB = 232,448).
///
/// # Errors
/// [`RunError::Launch`], one line naming the bytes and the limit.
pub fn check_smem(prog: &Program, l: &Launch) -> Result<u32, RunError> {
    let limit = ARCH.limits().smem_per_block_bytes;
    let bad = |s: String| Err(RunError::Launch(s));
    let smem_bytes = match (prog.dynamic_smem_offset, l.dynamic_smem) {
        (Some(o), Some(d)) => o.checked_add(d),
        (Some(_), None) => Some(limit),
        (None, Some(d)) => prog.static_smem.checked_add(d),
        (None, None) => Some(prog.static_smem),
    };
    let static_end = prog.dynamic_smem_offset.unwrap_or(prog.static_smem);
    if static_end > limit {
        return bad(format!(
            "the kernel's static shared memory ends at byte {static_end}, past {ARCH}'s {limit} bytes per block"
        ));
    }
    match smem_bytes {
        Some(b) if b <= limit => Ok(b),
        _ => bad(format!(
            "shared memory of {} static + {} dynamic bytes exceeds {ARCH}'s {limit} bytes per block (with the opt-in above 48 KiB); allowed: --dynamic-smem up to {}",
            prog.static_smem,
            l.dynamic_smem.unwrap_or(0),
            limit - static_end
        )),
    }
}

pub(in crate::ptx) fn param_list(p: &Program) -> String {
    crate::text::list(p.params.iter().enumerate().map(|(i, q)| {
        let arr = if q.ty == "b8" && q.size > 1 {
            format!("[{}]", q.size)
        } else {
            String::new()
        };
        format!(
            "{i}: {} (.{}{arr}{})",
            q.name,
            q.ty,
            if q.pointer { ", pointer" } else { "" }
        )
    }))
}
