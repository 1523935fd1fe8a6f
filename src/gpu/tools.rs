//! The command-line tools the suite runs beside the driver: Nsight Compute (`ncu`, hardware
//! counters) and `cuobjdump` (SASS). A tool that is not found is `None`, and the checks that need
//! it are reported as skipped, never as passed.

use std::path::PathBuf;

/// Where each tool is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tools {
    /// `ncu`, Nsight Compute's command line.
    pub ncu: Option<PathBuf>,
    /// `cuobjdump`, for `-sass` listings of CUBINs.
    pub cuobjdump: Option<PathBuf>,
}

impl Tools {
    /// Looks for each tool on `PATH`, then in the usual CUDA locations (`/usr/local/cuda/bin`,
    /// and `/opt/nvidia/nsight-compute` for ncu).
    pub fn find() -> Tools {
        Tools {
            ncu: find(
                "ncu",
                &["/usr/local/cuda/bin", "/opt/nvidia/nsight-compute"],
            ),
            cuobjdump: find("cuobjdump", &["/usr/local/cuda/bin"]),
        }
    }
}

/// The first file named `name` in a directory of `PATH`, or else of `extra_dirs`.
pub fn find(name: &str, extra_dirs: &[&str]) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain(extra_dirs.iter().map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
