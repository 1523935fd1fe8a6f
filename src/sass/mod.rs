//! The SASS room: what ptxas makes of a PTX kernel, each SASS instruction on its PTX line, and
//! how often each one issues in a simulated CTA.
//!
//! A room of its own because it is neither the pure simulator (`sim`, `ptx`: no I/O) nor the
//! GPU (`gpu`: the driver and Nsight Compute): ptxas and nvdisasm run on the host CPU, so
//! `tilelab ptx --sass` works on a machine without a GPU. [`tools`] is the only file that starts
//! them; [`listing`] (reading nvdisasm's text) and [`dynamic`] (counts from a run) are pure.
//!
//! The line table is the PTX's own ([`crate::measured::source_view::with_own_line_info`], the rewrite
//! `verify --ptx` gives the driver JIT): a `.loc` naming each instruction's line, so
//! `ptxas -lineinfo` and `nvdisasm --print-line-info` attribute every SASS instruction to the
//! PTX line Nsight Compute's source view books it on.

pub mod dynamic;
pub mod listing;
pub mod replay;
pub mod report;
pub mod tools;

use anyhow::Context;

pub use listing::{SassFunction, SassInst};
pub use tools::CudaTools;

/// The name the line table gives the PTX file (nvdisasm prints it; only the line numbers are
/// used).
pub const LINE_TABLE_FILE: &str = "tilelab.ptx";

/// The kernel's SASS, from the tools that made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSass {
    /// `ptxas 13.0.88`.
    pub from: String,
    /// Where ptxas was found ([`CudaTools::from`]) and its path.
    pub tool: String,
    /// The `.target` compiled for (`sm_90a`).
    pub arch: String,
    /// How: `ptxas -c` (a relocatable object, as the driver compiles PTX given to
    /// `cuLinkAddData`) or `ptxas` (a whole program, as for `cuModuleLoadDataEx`), following
    /// the load path `verify --ptx` takes for this PTX
    /// ([`crate::ptx::load_path::load_path`]).
    pub mode: &'static str,
    /// The kernel's instructions in address order.
    pub insts: Vec<SassInst>,
}

/// The architecture of a module's `.target` directive (`sm_90a` of `.target sm_90a` or of
/// `.target sm_80, debug`).
///
/// # Errors
/// No `.target` line, or a target that is not `sm_` followed by digits and an optional `a`/`f`.
pub fn target(ptx: &str) -> anyhow::Result<String> {
    let t = ptx
        .lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .find_map(|l| l.strip_prefix(".target"))
        .context("the PTX has no .target directive")?;
    let arch = t
        .trim()
        .split([',', ' ', '\t'])
        .next()
        .unwrap_or("")
        .to_string();
    let digits = arch
        .strip_prefix("sm_")
        .map(|r| r.trim_end_matches(['a', 'f']))
        .unwrap_or("");
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        anyhow::bail!(
            ".target '{}' is not an sm_NN architecture ptxas can compile for",
            crate::text::value(&arch)
        );
    }
    Ok(arch)
}

/// Compiles `ptx` for its `.target` with its own line table, the way the driver compiles it on
/// the load path `verify --ptx` takes ([`KernelSass::mode`]) unless `relocatable` says
/// (`Some(true)`: as `cuLinkAddData`, `Some(false)`: as `cuModuleLoadDataEx`), and returns the
/// SASS of `kernel` (its `.entry` name, mangled as the PTX spells it).
///
/// # Errors
/// No usable `.target`; ptxas or nvdisasm fails; the listing has no such function.
pub fn of_ptx(
    tools: &CudaTools,
    ptx: &str,
    kernel: &str,
    relocatable: Option<bool>,
) -> anyhow::Result<KernelSass> {
    let arch = target(ptx)?;
    let (text, lines) = crate::measured::source_view::with_own_line_info_map(ptx, LINE_TABLE_FILE);
    use crate::ptx::load_path::{LoadPath, load_path};
    let relocatable = relocatable.unwrap_or_else(|| load_path(ptx) == LoadPath::Link);
    let listing = tools
        .listing(&text, &arch, relocatable)
        .map_err(|e| anyhow::anyhow!(users_lines(&e.to_string(), &lines)))?;
    let fs = listing::parse(&listing)?;
    let f = listing::function(&fs, kernel)?;
    Ok(KernelSass {
        from: tools.version.clone(),
        tool: format!("{} ({})", crate::text::path(&tools.ptxas), tools.from),
        arch,
        mode: if relocatable {
            "ptxas -c (as cuLinkAddData)"
        } else {
            "ptxas (as cuModuleLoadDataEx)"
        },
        insts: f.insts.clone(),
    })
}

/// A tool's message about the rewritten PTX (`k.ptx, line 57`, [`tools::TEMP_PTX`]) told in the
/// user's lines: `line 50` when the rewritten line 57 is the user's line 50 (`lines`, from
/// [`crate::measured::source_view::with_own_line_info_map`]), `line 57 of the PTX as rewritten with
/// its own line table` for a line the rewrite added.
pub fn users_lines(msg: &str, lines: &[u32]) -> String {
    let key = format!("{}, line ", tools::TEMP_PTX);
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(i) = rest.find(&key) {
        out.push_str(&rest[..i]);
        let after = &rest[i + key.len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let n: Option<usize> = after[..digits].parse().ok();
        match n.and_then(|n| lines.get(n.checked_sub(1)?).map(|&u| (n, u))) {
            Some((_, u)) if u > 0 => out.push_str(&format!("line {u}")),
            Some((n, _)) => out.push_str(&format!(
                "line {n} of the PTX as rewritten with its own line table"
            )),
            None => out.push_str(&rest[i..i + key.len() + digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    /// ptxas's `k.ptx, line N` becomes the user's line through the rewrite's map.
    #[test]
    fn tool_messages_name_the_users_lines() {
        let ptx = ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.loc 1 3 1\nbad.op;\nret;\n}\n";
        let (text, lines) = crate::measured::source_view::with_own_line_info_map(ptx, "t.ptx");
        assert_eq!(text.lines().count(), lines.len());
        // The rewritten line holding `bad.op;` is the user's line 7.
        let r = text.lines().position(|l| l == "bad.op;").unwrap() + 1;
        let msg = format!("ptxas k.ptx, line {r}; error   : Unknown 'bad' / ptxas fatal");
        assert_eq!(
            super::users_lines(&msg, &lines),
            "ptxas line 7; error   : Unknown 'bad' / ptxas fatal"
        );
        assert_eq!(
            super::users_lines("ptxas k.ptx, line 4; x", &lines),
            "ptxas line 4 of the PTX as rewritten with its own line table; x"
        );
        assert_eq!(
            super::users_lines("k.ptx, line 999", &lines),
            "k.ptx, line 999"
        );
    }

    #[test]
    fn the_target_is_read_and_checked() {
        let t = |s: &str| super::target(s).map_err(|e| e.to_string());
        assert_eq!(t(".version 8.7\n.target sm_90a\n").unwrap(), "sm_90a");
        assert_eq!(t(".target sm_80, debug // x\n").unwrap(), "sm_80");
        assert_eq!(
            t(".target compute_90\n").unwrap_err(),
            ".target 'compute_90' is not an sm_NN architecture ptxas can compile for"
        );
        assert!(t(".version 8.7\n").is_err());
    }
}
