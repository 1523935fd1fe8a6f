//! A one-step lesson file (a 32x32 b32 tile read by columns: 32 wavefronts under `row`, 1 under
//! `pad:1`) that the lesson-format and exercise tests extend or break.

/// The lesson's TOML text.
pub const TINY_LESSON: &str = r#"
name = "tiny"
title = "Tiny"
summary = "one step"
kernel = "kernels/lesson_tiny.cu"
claims = ["banks"]
layouts = ["row", "pad:1"]
narrative = "text"

[[tiles]]
name = "S"
rows = 32
cols = 32
elem_bytes = 4

[[steps]]
title = "column"
instruction = "ld.shared.b32"
access = { kind = "column" }
expect = { row = { wavefronts = 32, conflicts = 31 }, "pad:1" = { wavefronts = 1, conflicts = 0 } }
"#;
