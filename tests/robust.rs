//! Issue #16 (robustness): every sample input of the issue, run through the binary with the
//! behaviour it must have, and one property test per kind of fault over random input.
//!
//! Contents, by fault kind of the issue:
//! 1. `overflow`: layouts whose footprint or offsets pass 32 bits are one-line errors;
//! 5. `strict`: layout strings and instruction names are parsed strictly.

use std::process::{Command, Output};

fn tilelab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tilelab"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run tilelab")
}

/// Asserts a bad input: exit 2, nothing on stdout, one line on stderr starting
/// `tilelab: error: ` and containing every needle, no panic.
fn assert_error(args: &[&str], needles: &[&str]) {
    let o = tilelab(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}: stdout not empty");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("tilelab: error: "), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err} lacks {n:?}");
    }
}

mod overflow {
    use super::*;

    /// `pad:4294967232` made 64 + pad wrap to 0: every row at one address, "0 conflicts".
    #[test]
    fn huge_pad_is_an_error_not_zero_conflicts() {
        assert_error(
            &["sim", "bank-conflicts", "--layout", "pad:4294967232"],
            &["'pad:4294967232'", "2^32 bytes"],
        );
    }

    /// `Swizzle<10,10,11>` rounded the tile up to 2^32 bytes = 0: tiles placed at 0 B.
    #[test]
    fn huge_swizzle_period_is_an_error_not_tiles_at_zero() {
        assert_error(
            &[
                "sim",
                "counts",
                "gemm",
                "--m",
                "16",
                "--n",
                "16",
                "--k",
                "16",
                "--layout",
                "swizzle:10,10,11",
            ],
            &["'swizzle:10,10,11'", "2^32 bytes"],
        );
        // One bit less fits in 32 bits but not in shared memory: the exact byte count.
        assert_error(
            &[
                "sim",
                "counts",
                "gemm",
                "--m",
                "16",
                "--n",
                "16",
                "--k",
                "16",
                "--layout",
                "swizzle:9,10,11",
            ],
            &["needs 4294967296 bytes", "at most 232448 bytes"],
        );
    }

    /// GEMM edges near u32::MAX: the unpadded tile bytes pass 2^64; still an exact error.
    #[test]
    fn gemm_edges_at_u32_max_are_errors() {
        assert_error(
            &[
                "sim",
                "counts",
                "gemm",
                "--m",
                "4294967280",
                "--n",
                "4294967280",
                "--k",
                "4294967280",
                "--warps",
                "1",
            ],
            &["allows at most 232448 bytes per block"],
        );
    }
}

mod strict {
    use super::*;

    #[test]
    fn a_layout_part_given_twice_is_an_error() {
        assert_error(
            &["sim", "bank-conflicts", "--layout", "pad:0+pad:8"],
            &["'pad:0+pad:8'", "more than one pad", "allowed:"],
        );
    }

    #[test]
    fn ldmatrix_with_two_counts_or_two_trans_is_an_error() {
        let dir = std::env::temp_dir().join(format!("tilelab-strict-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let offs = (0..32)
            .map(|l| (l * 16).to_string())
            .collect::<Vec<_>>()
            .join(",");
        for (ins, why) in [
            ("ldmatrix.x2.x4", "two matrix counts"),
            ("ldmatrix.x4.trans.trans", "'.trans' given twice"),
        ] {
            let p = dir.join(format!("{ins}.json"));
            std::fs::write(
                &p,
                format!(r#"[{{"name":"n","instruction":"{ins}","lane_byte_offsets":[{offs}]}}]"#),
            )
            .unwrap();
            assert_error(
                &["sim", "replay", p.to_str().unwrap()],
                &[&format!("'{ins}'"), why, "allowed:"],
            );
        }
    }
}
