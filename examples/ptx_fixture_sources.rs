//! Writes the CUDA sources and launch manifest of the nvcc PTX fixtures (`tests/data/ptx/`):
//!
//! ```text
//! cargo run --release --example ptx_fixture_sources -- OUTDIR
//! ```
//!
//! OUTDIR gets one `.cu` per compilation unit (the lesson kernels as `tilelab lessons kernel`
//! prints them, the GEMM kernel specialised to each tiling `tilelab verify` checks, the FA2 lesson
//! kernel) and `manifest.json`: per unit the nvcc flags and the one-CTA launches to measure.
//! `scripts/ptx_fixtures/run.sh` compiles them with nvcc for sm_90 on the GPU machine and
//! launches each PTX through the driver under Nsight Compute.

use std::path::PathBuf;

use serde_json::{Value, json};
use tilelab::sim::arch::Arch;
use tilelab::sim::program::{GemmTiling, Split};

/// The GEMM cases `tilelab verify` runs (`GEMM_CASES` of the verify command): (m, n, k, warps,
/// split, layout).
const GEMM_CASES: &[(u32, u32, u32, u32, Split, &str)] = &[
    (32, 32, 16, 1, Split::Rows, "row"),
    (32, 64, 16, 2, Split::Cols, "row"),
    (64, 64, 128, 1, Split::Rows, "row"),
    (64, 64, 128, 4, Split::Rows, "row"),
    (64, 64, 128, 4, Split::Rows, "pad:8"),
    (64, 64, 128, 4, Split::Rows, "swizzle:3,3,3"),
    (64, 64, 128, 1, Split::Rows, "pad:8"),
];

/// The FA2 lesson kernel variants `tilelab verify` builds: (head dim, bm, causal).
const FA2_CASES: &[(u32, u32, bool)] = &[
    (64, 64, false),
    (64, 64, true),
    (128, 64, false),
    (128, 64, true),
    (128, 128, false),
    (128, 128, true),
];

/// A file-name-safe spelling of a layout spec (`swizzle:3,3,3` -> `swizzle333`).
fn tag(s: &str) -> String {
    s.chars()
        .filter_map(|c| match c {
            ':' | ',' => None,
            '+' => Some('_'),
            c => Some(c),
        })
        .collect()
}

fn launch(
    name: String,
    grid: [u32; 3],
    block: u32,
    smem: u32,
    params: Vec<Value>,
    note: &str,
) -> Value {
    json!({"name": name, "grid": grid, "block": [block, 1, 1], "dynamic_smem_bytes": smem,
           "params": params, "note": note})
}

fn main() -> anyhow::Result<()> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or_else(|| anyhow::anyhow!("usage: ptx_fixture_sources OUTDIR"))?,
    );
    std::fs::create_dir_all(&out)?;
    let mut units = Vec::new();

    // Lesson kernels: one launch per (layout, variant), running every step of the variant.
    for lesson in tilelab::lessons::builtin()? {
        let f = lesson.kernel_function();
        let cu = format!("{f}.cu");
        std::fs::write(
            out.join(&cu),
            tilelab::gpu::source::lesson::kernel_source(&lesson),
        )?;
        let last = lesson.steps.len().saturating_sub(1) as i64;
        let variants: Vec<String> = if lesson.variants.is_empty() {
            vec!["all".into()]
        } else {
            lesson.variants.clone()
        };
        let mut launches = Vec::new();
        for (li, l) in lesson.layouts.iter().enumerate() {
            for (vi, v) in variants.iter().enumerate() {
                launches.push(launch(
                    format!("{f}.{}.{}", tag(l), tag(v)),
                    [1, 1, 1],
                    32,
                    0,
                    vec![json!("pointer"), json!(last), json!(li), json!(vi)],
                    &format!("steps 0..={last} of variant '{v}' under layout '{l}'"),
                ));
            }
        }
        units.push(
            json!({"unit": f, "source": cu, "kernel": f, "nvcc_flags": [],
                          "launches": launches}),
        );
    }

    // The GEMM kernel, specialised per tiling; one CTA (verify launches 4 identical ones).
    for &(m, n, k, warps, split, layout) in GEMM_CASES {
        let t = GemmTiling {
            m,
            n,
            k,
            warps,
            split,
        };
        let cta = t.build(&layout.parse()?, Arch::Sm90)?;
        let name = format!(
            "gemm_{m}x{n}x{k}_{warps}w_{}_{}",
            format!("{split:?}").to_lowercase(),
            tag(layout)
        );
        let cu = format!("{name}.cu");
        std::fs::write(out.join(&cu), tilelab::gpu::source::gemm::source(&t, &cta)?)?;
        let launches = vec![launch(
            name.clone(),
            [1, 1, 1],
            warps * 32,
            cta.smem_bytes,
            vec![json!("pointer"), json!("pointer"), json!("pointer")],
            &format!("C = A·Bᵀ, {m}x{n}x{k}, {warps} warps split {split:?}, layout {layout}"),
        )];
        units.push(
            json!({"unit": name, "source": cu, "kernel": "gemm_tile", "nvcc_flags": [],
                          "launches": launches}),
        );
    }

    // The FA2 lesson kernel: the variants verify builds at S = 512 (one head), plus S = 4096,
    // D = 128, causal. Not causal: grid (1,1,1) walks all S/64 key blocks. Causal: CTA x works on
    // query block gridDim.x - 1 - x, so the full grid is launched and, beside it, the grid one
    // CTA shorter; the difference is CTA (0,0,0) of the full grid (the longest).
    std::fs::write(out.join("fa2_fwd.cu"), tilelab::gpu::source::FA2_FWD_CU)?;
    let mut fa2 = FA2_CASES.to_vec();
    fa2.push((128, 64, true));
    fa2.push((128, 128, true));
    for (i, &(d, bm, causal)) in fa2.iter().enumerate() {
        let seq: u32 = if i < FA2_CASES.len() { 512 } else { 4096 };
        let unit = format!("fa2_d{d}_bm{bm}_{}", if causal { "causal" } else { "full" });
        let smem = (bm + 4 * 64) * d * 2;
        let scale = 1.0f32 / (d as f32).sqrt();
        let params = vec![
            json!("pointer"),
            json!("pointer"),
            json!("pointer"),
            json!("pointer"),
            json!(seq),
            json!(scale),
        ];
        let name = format!("{unit}_s{seq}");
        let launches = if causal {
            let g = seq / bm;
            vec![
                launch(
                    format!("{name}_grid{g}"),
                    [g, 1, 1],
                    128,
                    smem,
                    params.clone(),
                    "all CTAs of one head; CTA x computes query block gridDim.x-1-x",
                ),
                launch(
                    format!("{name}_grid{}", g - 1),
                    [g - 1, 1, 1],
                    128,
                    smem,
                    params,
                    "one CTA fewer: subtracted from the full grid it leaves CTA (0,0,0) of the full grid",
                ),
            ]
        } else {
            vec![launch(
                name,
                [1, 1, 1],
                128,
                smem,
                params,
                "CTA (0,0,0): query rows 0..bm, every key block",
            )]
        };
        // One unit per compile variant; the S = 4096 launches reuse the S = 512 unit's PTX.
        match units.iter_mut().find(|u| u["unit"] == json!(unit)) {
            Some(u) => u["launches"]
                .as_array_mut()
                .expect("array")
                .extend(launches),
            None => units.push(
                json!({"unit": unit, "source": "fa2_fwd.cu", "kernel": "fa2_fwd",
                "nvcc_flags": [format!("-DFA_D={d}"), format!("-DFA_BM={bm}"),
                               format!("-DFA_CAUSAL={}", causal as u32), "-use_fast_math"],
                "launches": launches}),
            ),
        }
    }
    std::fs::write(
        out.join("manifest.json"),
        serde_json::to_string_pretty(&units)?,
    )?;
    let n: usize = units
        .iter()
        .map(|u| u["launches"].as_array().map_or(0, Vec::len))
        .sum();
    println!("{} units, {n} launches in {}", units.len(), out.display());
    Ok(())
}
