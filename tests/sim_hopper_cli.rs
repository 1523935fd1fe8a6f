//! `tilelab sim wgmma` and `tilelab sim tma` as a user runs them: descriptor decoding, tile
//! placement, fp8/int8/tf32 inputs, a tensor smaller than the box, the store direction, rank
//! 3..5 tensor maps and the bulk copy without a map. Expected values are worked out by hand
//! from the PTX ISA (matrix descriptor format, wgmma and cp.async.bulk(.tensor) sections) and
//! the CUDA driver API (`cuTensorMapEncodeTiled`).

use crate::common::run;
use run::{stdout_json as json, tilelab};

/// The one-line error of a failing command.
fn error(args: &[&str]) -> String {
    let o = tilelab(args);
    assert!(!o.status.success(), "{args:?} succeeded");
    let e = String::from_utf8_lossy(&o.stderr).trim().to_string();
    assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
    e
}

#[test]
fn desc_decodes_every_field() {
    // 0x4000_0040_0001_0040: bits 0-13 = 0x40 -> start 0x40 << 4 = 1024; bits 16-29 = 1 ->
    // LBO 16; bits 32-45 = 0x40 -> SBO 1024; bits 62-63 = 1 -> 128B swizzle.
    let v = json(&["sim", "wgmma", "--desc", "0x4000004000010040", "--json"]);
    assert_eq!(v["start_address"], 1024);
    assert_eq!(v["leading_byte_offset"], 16);
    assert_eq!(v["stride_byte_offset"], 1024);
    assert_eq!(v["base_offset"], 0);
    assert_eq!(v["layout_type"], 1);
    assert_eq!(v["swizzle"], "128B");
    // Bits 49-51 = 0b011 -> base offset 3; layout type 3 -> 32B; all 14 bits of the start.
    let v = json(&["sim", "wgmma", "--desc", "0xc0063fff00003fff", "--json"]);
    assert_eq!(v["base_offset"], 3);
    assert_eq!(v["swizzle"], "32B");
    assert_eq!(v["start_address"], 16383 * 16);
    assert_eq!(v["stride_byte_offset"], 16383 * 16);
    let text =
        String::from_utf8_lossy(&tilelab(&["sim", "wgmma", "--desc", "1688849860263952"]).stdout)
            .to_string();
    // 1688849860263952 = 0x0006_0000_0000_0010: start 256, base offset 3.
    assert!(
        text.contains("256") && text.contains("base offset 3 is not modelled"),
        "{text}"
    );
    assert!(error(&["sim", "wgmma", "--desc", "0x1g"]).contains("'0x1g' is not a 64-bit number"));
    assert!(
        error(&["sim", "wgmma", "--desc", "0x10000000000000000"]).contains("not a 64-bit number")
    );
}

#[test]
fn base_places_the_tiles_and_the_14_bit_fields_are_enforced() {
    // 128B swizzle, K = 64: A is 64 x 128 bytes = 8192 bytes at 2048; B at the next 1024
    // multiple after 10240.
    let v = json(&["sim", "wgmma", "--base", "2048", "--n", "8", "--json"]);
    assert_eq!(v["a"]["base"], 2048);
    assert_eq!(v["b"]["base"], 10240);
    assert_eq!(v["descriptors"][0]["a"]["start_address"], 2048);
    assert_eq!(v["descriptors"][1]["a"]["start_address"], 2048 + 32);
    assert_eq!(v["check"]["max_abs_error"], 0.0);
    // The start address field holds at most (2^14 - 1) * 16 = 262128 bytes.
    assert!(error(&["sim", "wgmma", "--base", "262144"]).contains("262128"));
    assert!(error(&["sim", "wgmma", "--base", "512"]).contains("multiple of 1024"));
    // Past the block's shared memory (232448 bytes), though inside the field.
    assert!(error(&["sim", "wgmma", "--base", "230400", "--n", "8"]).contains("232448"));
}

#[test]
fn fp8_int8_and_tf32_inputs_run_and_check_exactly() {
    for (args, ptx, sass, values) in [
        (
            &["--dtype", "e4m3"][..],
            "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3",
            "QGMMA.64x64x32.F32.E4M3.E4M3",
            128 * 32,
        ),
        (
            &[
                "--dtype",
                "e4m3",
                "--dtype-b",
                "e5m2",
                "--acc",
                "f16",
                "--n",
                "32",
            ][..],
            "wgmma.mma_async.sync.aligned.m64n32k32.f16.e4m3.e5m2",
            "QGMMA.64x32x32.F16.E4M3.E5M2",
            128 * 16,
        ),
        (
            &["--dtype", "s8", "--dtype-b", "u8", "--n", "24"][..],
            "wgmma.mma_async.sync.aligned.m64n24k32.s32.s8.u8",
            "IGMMA.64x24x32.S8.U8",
            128 * 12,
        ),
        (
            &["--dtype", "u8", "--n", "48", "--a-regs"][..],
            "wgmma.mma_async.sync.aligned.m64n48k32.s32.u8.u8",
            "IGMMA.64x48x32.U8.U8",
            128 * 24,
        ),
        (
            &["--dtype", "tf32", "--n", "16", "--swizzle", "64B"][..],
            "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32",
            "HGMMA.64x16x8.F32.TF32",
            128 * 8,
        ),
        (
            &["--acc", "f16", "--n", "64", "--major", "mn"][..],
            "wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16",
            "HGMMA.64x64x16.F16",
            64 * 64, // D elements: 32 registers x 2 halves x 128 threads
        ),
    ] {
        let mut a = vec!["sim", "wgmma", "--json"];
        a.extend_from_slice(args);
        let v = json(&a);
        assert_eq!(v["ptx"], ptx, "{args:?}");
        assert_eq!(v["sass"], sass, "{args:?}");
        assert_eq!(v["check"]["max_abs_error"], 0.0, "{args:?}");
        assert_eq!(v["check"]["values"], values, "{args:?}");
        // Every instruction reads 32 bytes of K per row of A (64 rows; none from registers)
        // and of B (N rows).
        let n = v["n"].as_u64().unwrap();
        let from_regs = args.contains(&"--a-regs");
        let read = &v["descriptors"][0]["smem_bytes_read"];
        assert_eq!(read[0], if from_regs { 0 } else { 2048 }, "{args:?}");
        assert_eq!(read[1], 32 * n, "{args:?}");
    }
    assert!(error(&["sim", "wgmma", "--dtype", "s8", "--n", "40"]).contains("N = 40"));
    assert!(
        error(&["sim", "wgmma", "--dtype", "e4m3", "--major", "mn"]).contains("only f16 and bf16")
    );
    assert!(error(&["sim", "wgmma", "--dtype", "bf16", "--acc", "f16"]).contains("not a PTX form"));
    assert!(error(&["sim", "wgmma", "--dtype", "e4m3", "--k", "48"]).contains("multiple of 32"));
    assert!(error(&["sim", "wgmma", "--dtype", "f8"]).contains("'f8'"));
}

#[test]
fn a_tensor_smaller_than_the_box_is_zero_filled_and_counts_the_whole_box() {
    // 64 x 64 f16 box over a 40 x 50 tensor: 40 * 50 elements inside, 4096 - 2000 zero-filled;
    // complete_tx::bytes receives the box's 8192 bytes.
    let v = json(&["sim", "tma", "--extent", "40x50", "--json"]);
    assert_eq!(v["tx_bytes"], 8192);
    assert_eq!(v["out_of_bounds_elements"], 4096 - 2000);
    assert_eq!(v["global_bytes_read"], 4000);
    assert_eq!(v["size_bytes"], 8192);
    let o = tilelab(&["sim", "tma", "--extent", "40x50"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("zero-filled") && text.contains("whole box (8192 bytes)"),
        "{text}"
    );
    // Negative coordinates: 8 columns left of the tensor.
    let v = json(&["sim", "tma", "--coords", "-8,0", "--json"]);
    assert_eq!(v["out_of_bounds_elements"], 8 * 64);
    assert!(error(&["sim", "tma", "--coords", "1,2,3"]).contains("2 comma-separated"));
    assert!(error(&["sim", "tma", "--extent", "0x5"]).contains("bad extent '0x5'"));
}

#[test]
fn the_store_direction_and_ranks_up_to_5() {
    let v = json(&["sim", "tma", "--store", "--extent", "60x64", "--json"]);
    assert_eq!(v["sass"], "UTMASTG.2D");
    assert_eq!(v["direction"], "shared->global");
    assert_eq!(
        v["ptx"],
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"
    );
    // 60 of 64 rows inside: 60 * 128 bytes written, 4 * 64 elements skipped.
    assert_eq!(v["global_bytes_written"], 60 * 128);
    assert_eq!(v["out_of_bounds_elements"], 256);
    // Rank 3: box 64 x 8 x 2 at (0, 0, 3) of a 64 x 8 x 4 tensor: the second slab (z = 4)
    // is outside.
    let v = json(&[
        "sim",
        "tma",
        "--tensor-map",
        "f16:64,8,4:128,1024:64,8,2:128B",
        "--coords",
        "0,0,3",
        "--json",
    ]);
    assert_eq!(v["sass"], "UTMALDG.3D");
    assert_eq!(v["box"], serde_json::json!([16, 64]));
    assert_eq!(
        (v["tx_bytes"].as_u64(), v["out_of_bounds_elements"].as_u64()),
        (Some(2048), Some(512))
    );
    let v = json(&[
        "sim",
        "tma",
        "--tensor-map",
        "u8:32,2,2,2,2:32,64,128,256:32,2,2,2,2:32B",
        "--json",
    ]);
    assert_eq!(
        (v["sass"].as_str(), v["tx_bytes"].as_u64()),
        (Some("UTMALDG.5D"), Some(512))
    );
    let v = json(&[
        "sim",
        "tma",
        "--tensor-map",
        "f32:100::32",
        "--coords",
        "80",
        "--json",
    ]);
    assert_eq!(
        (v["sass"].as_str(), v["out_of_bounds_elements"].as_u64()),
        (Some("UTMALDG.1D"), Some(12))
    );
    assert!(
        error(&["sim", "tma", "--tensor-map", "f16:64,8:120:64,8"])
            .contains("globalStrides[0] 120")
    );
    assert!(error(&["sim", "tma", "--tensor-map", "f16:64:64"]).contains("DTYPE:DIMS:STRIDES:BOX"));
}

#[test]
fn the_bulk_copy_without_a_map() {
    let v = json(&["sim", "tma", "--bulk", "256", "--base", "16", "--json"]);
    assert_eq!(v["sass"], "UBLKCP.S.G");
    assert_eq!(v["tx_bytes"], 256);
    assert_eq!(v["smem_written"], serde_json::json!([[16, 272]]));
    let v = json(&["sim", "tma", "--bulk", "64", "--store", "--json"]);
    assert_eq!(v["ptx"], "cp.async.bulk.global.shared::cta.bulk_group");
    assert!(error(&["sim", "tma", "--bulk", "24"]).contains("multiple of 16"));
    assert!(error(&["sim", "tma", "--bulk", "64", "--coords", "0,0"]).contains("not --tensor-map"));
    assert!(
        error(&[
            "sim",
            "tma",
            "--tensor-map",
            "f16:64,8:128:64,8",
            "--extent",
            "8x8"
        ])
        .contains("--extent is not allowed with --tensor-map")
    );
    assert!(error(&["sim", "tma", "--bulk", "64", "--base", "8"]).contains("shared address 8"));
    assert!(error(&["sim", "tma", "--bulk", "64", "--base", "232432"]).contains("past the end"));
}
