//! The lesson files compiled into the binary, in curriculum order, so `tilelab lessons` and
//! `tilelab tui` work from any directory. `tests/lessons.rs` checks that this list and the
//! files in `lessons/` agree.

/// `(file name under lessons/, contents)`.
pub const FILES: &[(&str, &str)] = &[
    (
        "00-warps-and-banks.toml",
        include_str!("../../lessons/00-warps-and-banks.toml"),
    ),
    ("01-banks.toml", include_str!("../../lessons/01-banks.toml")),
    (
        "02-strided.toml",
        include_str!("../../lessons/02-strided.toml"),
    ),
    (
        "03-vectors.toml",
        include_str!("../../lessons/03-vectors.toml"),
    ),
    (
        "04-ldmatrix.toml",
        include_str!("../../lessons/04-ldmatrix.toml"),
    ),
    (
        "05-ldmatrix-trans.toml",
        include_str!("../../lessons/05-ldmatrix-trans.toml"),
    ),
    (
        "06-swizzle.toml",
        include_str!("../../lessons/06-swizzle.toml"),
    ),
    ("07-mma.toml", include_str!("../../lessons/07-mma.toml")),
    (
        "08-gemm-counts.toml",
        include_str!("../../lessons/08-gemm-counts.toml"),
    ),
    (
        "09-fa2-counts.toml",
        include_str!("../../lessons/09-fa2-counts.toml"),
    ),
    (
        "10-fa-v1-v2.toml",
        include_str!("../../lessons/10-fa-v1-v2.toml"),
    ),
    (
        "11-stmatrix-epilogue.toml",
        include_str!("../../lessons/11-stmatrix-epilogue.toml"),
    ),
    (
        "12-hopper-swizzle.toml",
        include_str!("../../lessons/12-hopper-swizzle.toml"),
    ),
    ("13-wgmma.toml", include_str!("../../lessons/13-wgmma.toml")),
    (
        "14-reading-triton-ptx.toml",
        include_str!("../../lessons/14-reading-triton-ptx.toml"),
    ),
];
