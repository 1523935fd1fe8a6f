//! How the driver is to load a PTX module, decided on its text alone (pure): the linker path, or
//! `cuModuleLoadDataEx` for a module whose `.extern .shared` is aligned above 16 bytes. Used by
//! `gpu::verify::ptx_file` (the load itself) and `tilelab::sass` (ptxas run as the driver would).

/// How the driver is given the PTX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadPath {
    /// `cuLinkCreate`/`cuLinkAddData`/`cuLinkComplete` + `cuModuleLoadData` on the CUBIN
    /// (`gpu::device::Gpu::jit_ptx`): the path the sm_80-style fixtures of `tests/data/ptx/` were measured
    /// on. Measured on the H200 (2026-12-02, `docs/log/2026-12-02-verify-ptx-hopper.md`):
    /// through `cuModuleLoadDataEx` instead, `triton_matmul_2w` executes 6 `LDS` with a
    /// predicate on, against 4 through this path and in the fixture.
    Link,
    /// `cuModuleLoadDataEx` on the PTX text (`gpu::device::Gpu::load_ptx_ex`): for a module declaring
    /// `.extern .shared .align A` with A above 16 bytes (`extern __shared__ __align__(1024)`),
    /// which faults with error 716 through [`LoadPath::Link`] (FA3's PTX on the H200,
    /// `docs/log/2026-12-01-hopper-fixtures.md`).
    ModuleLoadDataEx,
}

/// The load path for PTX text `ptx` (see [`LoadPath`]).
pub fn load_path(ptx: &str) -> LoadPath {
    let over_16 = ptx.lines().any(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        w.first() == Some(&".extern")
            && w.contains(&".shared")
            && w.iter()
                .position(|&x| x == ".align")
                .and_then(|i| w.get(i + 1))
                .and_then(|a| a.parse::<u64>().ok())
                .is_some_and(|a| a > 16)
    });
    if over_16 {
        LoadPath::ModuleLoadDataEx
    } else {
        LoadPath::Link
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FA3's `.extern .shared .align 1024` takes `cuModuleLoadDataEx`; Triton's `.align 16`
    /// and a module without extern shared memory the linker path.
    #[test]
    fn the_load_path_follows_the_extern_shared_alignment() {
        let read = |f: &str| {
            std::fs::read_to_string(format!(
                "{}/../../tests/data/{f}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap()
        };
        assert_eq!(
            load_path(&read("ptx_hopper/fa3_d64_full_f16.ptx")),
            LoadPath::ModuleLoadDataEx
        );
        assert_eq!(load_path(&read("ptx/triton_matmul_2w.ptx")), LoadPath::Link);
        assert_eq!(
            load_path(&read("ptx_params/map_launch.ptx")),
            LoadPath::Link
        );
        assert_eq!(
            load_path(".extern .shared .align 128 .b8 s[];"),
            LoadPath::ModuleLoadDataEx
        );
    }
}
