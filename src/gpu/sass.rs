//! SASS of a CUBIN by running `cuobjdump -sass`; the listing is read by [`crate::measured::sass_listing`].

use std::path::Path;
use std::process::Command;

use anyhow::Context;

pub use crate::measured::sass_listing::{Listing, count, count_mnemonics};

/// SASS mnemonic counts per function (see [`count_mnemonics`]) of a CUBIN, by running
/// `cuobjdump -sass` (`tool`) on it; `tag` names the temporary file.
///
/// # Errors
/// The temporary file cannot be written, `cuobjdump` cannot be started or exits with an error.
pub fn of_cubin(tool: &Path, cubin: &[u8], tag: &str) -> anyhow::Result<Listing> {
    // Removed when `tmp` is dropped, whatever happens (tempfile: a fresh name, not the pid's).
    let tmp = tempfile::Builder::new()
        .prefix("tilelab-")
        .suffix(&format!("-{tag}.cubin"))
        .tempfile()
        .context("cannot create a temporary file for the CUBIN")?;
    let p = tmp.path();
    std::fs::write(p, cubin).with_context(|| format!("cannot write '{}'", p.display()))?;
    let o = Command::new(tool).arg("-sass").arg(p).output();
    drop(tmp);
    let o = o.with_context(|| format!("cannot run {}", tool.display()))?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        anyhow::bail!(
            "{} -sass exited with {}: {}",
            tool.display(),
            o.status,
            err.lines().next().unwrap_or("").trim()
        );
    }
    Ok(count_mnemonics(&String::from_utf8_lossy(&o.stdout)))
}
