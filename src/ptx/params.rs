//! Launch parameters and limits: the kernel-parameter buffer ([`param_buffer`], every
//! `--arg` through [`encode_arg`]), CUDA's grid and block limits ([`check_launch`]) and the
//! shared-memory bytes of a launch ([`check_smem`]), all checked before anything is allocated.

use super::decode::{Program, buffer_base};
use super::engine::{Launch, RunError};
use super::types::Ty;
use crate::sim::arch::Arch;

/// The per-block shared-memory limit of [`ARCH`] in bytes, with the opt-in above 48 KiB
/// (sm_90: 227 KiB = 232,448; `Arch::limits().smem_per_block_bytes`).
pub const SMEM_LIMIT: u32 = ARCH.limits().smem_per_block_bytes;

/// An integer as `--arg` takes it: an optional sign, then decimal digits or `0x` and hex
/// digits, nothing else (no second sign, no `_`).
pub(super) fn parse_int(s: &str) -> Option<i128> {
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
pub(super) fn names_inf_or_nan(t: &str) -> (bool, bool) {
    (t == "inf" || t == "-inf", t == "nan")
}

/// The spellings of a float parameter that are not a decimal number.
const FLOAT_WORDS: &str = "inf, -inf, nan (lowercase, exactly so)";

/// Whether a decimal float's text has a non-zero digit before its exponent (`1e-50` does,
/// `0.0e5` does not).
pub(super) fn nonzero_mantissa(t: &str) -> bool {
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
            prog.name,
            d3(r),
            d3(l.block)
        ));
    }
    if let Some(m) = prog.maxntid {
        let max = m.iter().map(|&x| u64::from(x)).product::<u64>();
        if u64::from(threads) > max {
            return bad(format!(
                "kernel '{}' allows at most {max} threads per block (.maxntid {}); --block {} has {threads}",
                prog.name,
                d3(m),
                d3(l.block)
            ));
        }
    }
    Ok(threads)
}

/// The parameter buffer of a launch: each `--arg` (by name or index) through [`encode_arg`],
/// pointers at their buffers' bases. A parameter given twice with the same value (as bytes:
/// `7` and `0x7` agree) is accepted; with different values it is an error, as is an `--arg`
/// naming no parameter, a value for a pointer, or a parameter left without one.
///
/// # Errors
/// [`RunError::Launch`], one line naming the `--arg`.
pub fn param_buffer(prog: &Program, args: &[(String, String)]) -> Result<Vec<u8>, RunError> {
    let bad = |s: String| Err(RunError::Launch(s));
    let mut params = vec![0u8; prog.param_bytes as usize];
    let mut given: Vec<Option<(&str, &str, Vec<u8>)>> = vec![None; prog.params.len()];
    for (k, v) in args {
        // Quoted clipped: a 100,000-character value leaves the rest of the message on the line.
        let (kq, vq) = (crate::text::value(k), crate::text::value(v));
        let idx = prog
            .params
            .iter()
            .position(|p| &p.name == k)
            .or_else(|| k.parse::<usize>().ok().filter(|&i| i < prog.params.len()));
        let Some(i) = idx else {
            let known = match prog.params.is_empty() {
                true => "the kernel takes no parameters".to_string(),
                false => format!("parameters: {}", param_list(prog)),
            };
            return bad(format!(
                "--arg {kq}={vq}: kernel '{}' has no parameter '{kq}'; {known}",
                prog.name
            ));
        };
        let p = &prog.params[i];
        if p.pointer {
            return bad(format!(
                "--arg {kq}={vq}: '{}' is a pointer; pointers need no value (each gets its own zero-filled buffer)",
                p.name
            ));
        }
        let bytes =
            encode_arg(&p.ty, v).map_err(|e| RunError::Launch(format!("--arg {kq}={vq}: {e}")))?;
        if let Some((k0, v0, b0)) = &given[i] {
            if *b0 != bytes {
                return bad(format!(
                    "--arg {k0}={v0} and --arg {kq}={vq} give parameter '{}' (index {i}) two different values; give it once",
                    p.name
                ));
            }
            continue;
        }
        given[i] = Some((k.as_str(), v.as_str(), bytes));
    }
    let mut missing = Vec::new();
    for (i, p) in prog.params.iter().enumerate() {
        let o = p.offset as usize;
        // The decoder lays the parameters out inside `param_bytes`.
        let Some(dst) = params.get_mut(o..o.saturating_add(p.size as usize)) else {
            return bad(format!(
                "parameter '{}' lies outside the {} parameter bytes",
                p.name, prog.param_bytes
            ));
        };
        match (&given[i], p.pointer) {
            (None, true) => dst.copy_from_slice(&buffer_base(i).to_le_bytes()[..dst.len().min(8)]),
            (None, false) => missing.push(format!("{} (.{}, index {i})", p.name, p.ty)),
            (Some((_, _, bytes)), _) => {
                if bytes.len() != dst.len() {
                    return bad(format!(
                        "parameter '{}' of {} bytes (.{}) is not supported: a value is one scalar",
                        p.name,
                        dst.len(),
                        p.ty
                    ));
                }
                dst.copy_from_slice(bytes);
            }
        }
    }
    if !missing.is_empty() {
        return bad(format!(
            "missing value for parameter{} {}: give --arg NAME=VALUE (or --arg INDEX=VALUE)",
            if missing.len() > 1 { "s" } else { "" },
            crate::text::list(&missing)
        ));
    }
    Ok(params)
}

/// The shared-memory bytes of a launch: the kernel's static bytes and `--dynamic-smem` (all
/// that is left of [`SMEM_LIMIT`] when the kernel declares dynamic shared memory and the flag
/// is not given), within [`SMEM_LIMIT`].
///
/// # Errors
/// [`RunError::Launch`], one line naming the bytes and the limit.
pub fn check_smem(prog: &Program, l: &Launch) -> Result<u32, RunError> {
    let bad = |s: String| Err(RunError::Launch(s));
    let smem_bytes = match (prog.dynamic_smem_offset, l.dynamic_smem) {
        (Some(o), Some(d)) => o.checked_add(d),
        (Some(_), None) => Some(SMEM_LIMIT),
        (None, Some(d)) => prog.static_smem.checked_add(d),
        (None, None) => Some(prog.static_smem),
    };
    let static_end = prog.dynamic_smem_offset.unwrap_or(prog.static_smem);
    if static_end > SMEM_LIMIT {
        return bad(format!(
            "the kernel's static shared memory ends at byte {static_end}, past {ARCH}'s {SMEM_LIMIT} bytes per block"
        ));
    }
    match smem_bytes {
        Some(b) if b <= SMEM_LIMIT => Ok(b),
        _ => bad(format!(
            "shared memory of {} static + {} dynamic bytes exceeds {ARCH}'s {SMEM_LIMIT} bytes per block (with the opt-in above 48 KiB); allowed: --dynamic-smem up to {}",
            prog.static_smem,
            l.dynamic_smem.unwrap_or(0),
            SMEM_LIMIT - static_end
        )),
    }
}

pub(super) fn param_list(p: &Program) -> String {
    crate::text::list(p.params.iter().enumerate().map(|(i, q)| {
        format!(
            "{i}: {} (.{}{})",
            q.name,
            q.ty,
            if q.pointer { ", pointer" } else { "" }
        )
    }))
}
