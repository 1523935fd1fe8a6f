//! The parameters real kernels take (issue 27), on `tests/data/ptx_params/` (README there):
//! by-value structs (`--arg NAME[+OFFSET]=TYPE:V,...`), parameters the kernel never reads,
//! tensor maps (`--tensor-map`), and `--kernel` by name, part of one or `#N` with C++ names
//! shown demangled.
//!
//! Where a value can be seen, it is seen through the bank rule: a struct field becomes a row
//! stride of 32 lanes' `ld.shared.u32`, so 128 bytes give one bank for all 32 lanes (32
//! wavefronts, 31 conflicts), 8 bytes two lanes per bank (2 wavefronts), 4 bytes one word per
//! lane (1 wavefront). Demangled names are c++filt's (GNU binutils) for the same symbols.

use crate::common::run;
use run::{json, one_line_error as error, tilelab};

use proptest::prelude::*;
use serde_json::Value;
use tilelab::ptx::{self, Launch};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx_params");

fn file(name: &str) -> String {
    format!("{DIR}/{name}")
}

/// (executions, wavefronts, ideal, bank_conflicts) of PTX line `n`.
fn counts(r: &Value, n: u64) -> [u64; 4] {
    let l = r["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["line"] == n)
        .unwrap_or_else(|| panic!("no line {n} in {r}"));
    ["executions", "wavefronts", "ideal", "bank_conflicts"].map(|k| l[k].as_u64().unwrap())
}

/// nvcc's name of `gemm_device<128>` in struct_params.ptx.
const GEMM: &str = "_Z11gemm_deviceILi128EEvN4cute5tupleIJiiiEEENS0_1CIXT_EEE3EpiPfPi";
/// c++filt's demangling of [`GEMM`].
const GEMM_CXX: &str =
    "void gemm_device<128>(cute::tuple<int, int, int>, cute::C<128>, Epi, float*, int*)";
/// c++filt's demangling of `_Z10tma_kernel3TmaPf`.
const TMA_CXX: &str = "tma_kernel(Tma, float*)";

/// `tilelab ptx struct_params.ptx --kernel gemm`, one warp, with `extra` flags.
fn gemm(extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["ptx", &file("struct_params.ptx"), "--kernel", "gemm"]
        .map(String::from)
        .to_vec();
    a.extend(["--grid", "1", "--block", "32"].map(String::from));
    for e in extra {
        a.extend(["--arg".to_string(), e.to_string()]);
    }
    a
}

fn run(a: &[String]) -> Value {
    json(&a.iter().map(String::as_str).collect::<Vec<_>>())
}

fn fails(a: &[String]) -> String {
    error(&a.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Line 47 of struct_params.ptx: `ld.shared.u32 [s + ((shape.a * tid.x * 4) & 8188)]`, run
/// when `shape.c` (bytes 8..12 of parameter 0) is at least 1.
const LDS: u64 = 47;

#[test]
fn struct_fields_land_where_ld_param_reads_them() {
    // shape = (32, _, 1): row stride 128 bytes, one bank: 32-way.
    let r = run(&gemm(&[
        "0=s32:32",
        "0+8=s32:1",
        "2=f32:1.5",
        "2+8=f16:1.0",
    ]));
    assert_eq!(counts(&r, LDS), [1, 32, 1, 31]);
    // The three fields at once; byte 4..8 (shape.b) is never read, any value does.
    let r = run(&gemm(&["0=s32:32,-7,1", "2=f32:1.5", "2+8=f16:1.0"]));
    assert_eq!(counts(&r, LDS), [1, 32, 1, 31]);
    // Stride 8 bytes: lanes l and l + 16 share a bank, 2 wavefronts.
    let r = run(&gemm(&["0=s32:2", "0+8=s32:1", "2=f32:0", "2+8=f16:0"]));
    assert_eq!(counts(&r, LDS), [1, 2, 1, 1]);
    // Stride 4 bytes (hex): one word per lane, 1 wavefront.
    let r = run(&gemm(&["0=s32:0x1", "0+0x8=s32:1", "2=f32:0", "2+8=f16:0"]));
    assert_eq!(counts(&r, LDS), [1, 1, 1, 0]);
    // shape.c = 0: the loop's guard branches past the load.
    let r = run(&gemm(&["0=s32:32,0,0", "2=f32:0", "2+8=f16:0"]));
    assert_eq!(counts(&r, LDS)[0], 0);
    // Bytes as the same value twice, written two ways: accepted.
    let r = run(&gemm(&[
        "0=s32:32,0,1",
        "0+8=u32:0x1",
        "0+8=u8:1",
        "2=f32:0",
        "2+8=f16:0",
    ]));
    assert_eq!(counts(&r, LDS), [1, 32, 1, 31]);
    // By name as well as by index.
    let p0 = format!("{GEMM}_param_0=s32:32,0,1");
    let r = run(&gemm(&[&p0, "2=f32:0", "2+8=f16:0"]));
    assert_eq!(counts(&r, LDS), [1, 32, 1, 31]);
}

#[test]
fn unread_structs_and_unused_pointers_need_no_value() {
    // param_1 (cute::C<128>, `.align 1 .b8 [1]`) and param_4 (an `int*` the kernel never
    // touches, a plain `.u64`) get none above; param_2's bytes 4..8 (beta) none either.
    let r = run(&gemm(&["0=s32:1,0,1", "2+8=f16:1", "2=f32:2"]));
    assert_eq!(counts(&r, LDS), [1, 1, 1, 0]);
    // An unread empty struct still takes a value when given one.
    let r = run(&gemm(&["0=s32:1,0,1", "2=f32:2", "2+8=f16:1", "1=u8:0"]));
    assert_eq!(counts(&r, LDS), [1, 1, 1, 0]);
}

#[test]
fn a_missing_struct_value_names_the_parameter_and_the_bytes_read() {
    let e = fails(&gemm(&[]));
    assert!(
        e.contains(&format!(
            "missing value for parameters {GEMM}_param_0 (.b8[12], index 0; reads bytes 0..4 at line 36, 8..12 at line 35)"
        )) && e.contains(&format!(
            "{GEMM}_param_2 (.b8[12], index 2; reads bytes 0..4 at line 34, 8..10 at line 33)"
        )) && e.contains("--arg NAME[+OFFSET]=TYPE:V[,V...]"),
        "{e}"
    );
    // Neither the empty struct nor the unused pointer is asked for.
    assert!(!e.contains("param_1") && !e.contains("param_4"), "{e}");
    let e = fails(&gemm(&["0=s32:32", "2=f32:1", "2+8=f16:1"]));
    assert!(
        e.contains(&format!(
            "missing value for parameter {GEMM}_param_0 (.b8[12], index 0; reads bytes 8..12 at line 35, which no --arg gives)"
        )),
        "{e}"
    );
}

#[test]
fn bad_struct_values_are_refused() {
    let p0 = format!("parameter '{GEMM}_param_0'");
    for (arg, want) in [
        (
            "0+4=s32:1,2,3",
            format!("3 values of .s32 (12 bytes) from byte 4 end at byte 16, past the 12 bytes of {p0}"),
        ),
        (
            "0+2=s32:1",
            format!("byte 2 of {p0} (byte 2 of the parameter buffer) is not a multiple of 4, the size of .s32"),
        ),
        ("0+4=f64:1", "is not a multiple of 8, the size of .f64".to_string()),
        ("0=q32:1", "unknown type 'q32'; allowed: u8, u16, u32, u64".to_string()),
        ("0=e4m3:1", "unknown type 'e4m3'".to_string()),
        ("0=pred:1", "a parameter holds no .pred".to_string()),
        ("0=s8:300", "300 is out of range for .s8 (allowed -128..=127)".to_string()),
        ("0=u32:-1", "-1 is out of range for .u32".to_string()),
        ("0=f16:1e5", "overflows .f16".to_string()),
        ("0=s32:1,,2", "is empty".to_string()),
        (
            "0=32",
            "is a 12-byte .b8 array (a by-value struct): give its bytes as --arg NAME[+OFFSET]=TYPE:V[,V...]"
                .to_string(),
        ),
        ("0+4=7", "a value at a byte offset needs its type, e.g. --arg 0+4=u32:7".to_string()),
        ("0+x=u8:1", "'0+x' is not a byte offset".to_string()),
        ("+4=u8:1", "'+4' names no parameter before '+'".to_string()),
        ("9=u8:1", format!("kernel '{GEMM_CXX}' has no parameter '9'")),
        ("3=u64:1", "is a pointer; pointers need no value".to_string()),
        (
            "4=u64:1",
            format!("'{GEMM}_param_4' is a .u64 scalar, not a struct: give its value alone, e.g. --arg 4=1"),
        ),
    ] {
        let e = fails(&gemm(&[arg, "2=f32:1", "2+8=f16:1"]));
        assert!(e.contains(&want), "--arg {arg}: {e}");
    }
    // Two writes of different values to one byte.
    let e = fails(&gemm(&["0=s32:32,0,1", "0+8=u8:2", "2=f32:1", "2+8=f16:1"]));
    assert!(
        e.contains(&format!(
            "--arg 0=s32:32,0,1 and --arg 0+8=u8:2 give byte 8 of {p0} (index 0) two different values"
        )),
        "{e}"
    );
}

#[test]
fn kernel_by_name_part_or_index_and_demangled() {
    let f = file("struct_params.ptx");
    let args = ["0=s32:1,0,1", "2=f32:0", "2+8=f16:0"];
    // The exact mangled name, the exact demangled one, a part, #0: the same kernel.
    for k in [GEMM, GEMM_CXX, "gemm_device<128>", "#0"] {
        let mut a = gemm(&args);
        a[3] = k.to_string();
        let r = run(&a);
        assert_eq!(r["kernel"], GEMM, "--kernel {k}");
        assert_eq!(r["kernel_demangled"], GEMM_CXX, "--kernel {k}");
    }
    // The text report shows the demangled name.
    let o = tilelab(&gemm(&args).iter().map(String::as_str).collect::<Vec<_>>());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with(&format!("kernel {GEMM_CXX}: CTA (0,0,0)")),
        "{out}"
    );
    // A part of both names: ambiguous, both listed demangled.
    let e = error(&["ptx", &f, "--kernel", "_Z1", "--grid", "1", "--block", "32"]);
    assert!(
        e.contains(&format!(
            "--kernel '_Z1' is part of 2 kernels' names; give more of one, its whole name or #N (N from 0 in file order): {GEMM_CXX}, {TMA_CXX}"
        )),
        "{e}"
    );
    let e = error(&["ptx", &f, "--kernel", "#2", "--grid", "1", "--block", "32"]);
    assert!(
        e.contains(&format!(
            "--kernel '#2': the file has 2 .entry kernels (#0..=#1, in file order): {GEMM_CXX}, {TMA_CXX}"
        )),
        "{e}"
    );
    let e = error(&[
        "ptx", &f, "--kernel", "sgemm", "--grid", "1", "--block", "32",
    ]);
    assert!(
        e.contains(&format!(
            "no kernel 'sgemm' in the file; kernels: {GEMM_CXX}, {TMA_CXX}"
        )),
        "{e}"
    );
    let e = error(&["ptx", &f, "--grid", "1", "--block", "32"]);
    assert!(
        e.contains(&format!("the file has 2 kernels; choose one with --kernel: {GEMM_CXX}, {TMA_CXX} (a name, a part of one or #N from 0)")),
        "{e}"
    );
}

#[test]
fn demangled_names_match_cxxfilt() {
    for (m, d) in [
        (GEMM, GEMM_CXX),
        ("_Z10tma_kernel3TmaPf", TMA_CXX),
        (
            "_Z11gemm_kernelILi128EEvPKfPf",
            "void gemm_kernel<128>(float const*, float*)",
        ),
        // Not mangled, or not demangling: as it is.
        ("tl_matmul", "tl_matmul"),
        (
            "_Z10gemm_kernelILi128EEvPKfPf",
            "_Z10gemm_kernelILi128EEvPKfPf",
        ),
    ] {
        assert_eq!(ptx::report::demangle(m), d);
    }
}

/// A name whose substitutions each refer to the one before twice (`B<A<A,A>, A<A,A>>`, …)
/// demangles to a text that doubles at every level (2^24 copies of `A` at 24 levels, more than
/// a minute of cpp_demangle's time without a bound): it is shown mangled, at once.
#[test]
fn a_name_that_demangles_exponentially_is_shown_mangled() {
    fn seq(n: usize) -> String {
        // <seq-id>: S_ is substitution 0, S0_ 1, …, base 36.
        if n == 0 {
            return "S_".into();
        }
        let (mut k, mut d) = (n - 1, Vec::new());
        loop {
            d.push(
                char::from_digit((k % 36) as u32, 36)
                    .unwrap()
                    .to_ascii_uppercase(),
            );
            k /= 36;
            if k == 0 {
                break;
            }
        }
        format!("S{}_", d.iter().rev().collect::<String>())
    }
    let mut name = String::from("_Z1f1AIS_S_E");
    let mut prev = 1;
    for i in 0..24 {
        let n = format!("B{i}");
        name += &format!("{}{n}I{}{}E", n.len(), seq(prev), seq(prev));
        prev += 2;
    }
    let t = std::time::Instant::now();
    assert_eq!(ptx::report::demangle(&name), name);
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
    // Three levels: short enough to show (c++filt's text).
    let mut name = String::from("_Z1f1AIS_S_E");
    for (i, prev) in [(0, 1), (1, 3)] {
        let n = format!("B{i}");
        name += &format!("{}{n}I{}{}E", n.len(), seq(prev), seq(prev));
    }
    assert_eq!(
        ptx::report::demangle(&name),
        "f(A<A, A>, B0<A<A, A>, A<A, A> >, B1<B0<A<A, A>, A<A, A> >, B0<A<A, A>, A<A, A> > >)"
    );
}

/// `tilelab ptx tensor_maps.ptx` with `extra` flags (each a whole flag and its value).
fn maps(extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "ptx",
        &file("tensor_maps.ptx"),
        "--grid",
        "1",
        "--block",
        "32",
    ]
    .map(String::from)
    .to_vec();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Lines 43 and 45 of tensor_maps.ptx: one `ld.shared.u32` and one `st.shared.u32` at row
/// stride 128 × (the index in param_1's handle) + param_3's `stride[1]` + the first word of
/// param_1's tensor.
const MAP_LDS: u64 = 43;

#[test]
fn tensor_maps_write_handles_the_engine_finds() {
    let base = [
        "--arg",
        "2=5",
        "--arg",
        "3+132=s32:0",
        "--tensor-map",
        "3=f16:64::64",
    ];
    // param_1's map is the second: index 1, row stride 128 bytes, 32-way. Its tensor's
    // buffer is read at its base (zero) without an error: the buffer exists.
    let mut a = base.to_vec();
    a.extend(["--tensor-map", "1=f16:512,128:1024:64,128:128B"]);
    let r = run(&maps(&a));
    assert_eq!(counts(&r, MAP_LDS), [1, 32, 1, 31]);
    assert_eq!(counts(&r, MAP_LDS + 2), [1, 32, 1, 31]);
    // Given first, it is index 0: every lane at one word, a broadcast.
    let mut a = vec!["--tensor-map", "1=f16:512,128:1024:64,128:128B"];
    a.extend(base);
    let r = run(&maps(&a));
    assert_eq!(counts(&r, MAP_LDS), [1, 1, 1, 0]);
    // param_3's stride[1] beside its map: 8 bytes, 2-way.
    let mut a = vec!["--tensor-map", "1=f16:64::64@4"];
    a.extend([
        "--arg",
        "2=5",
        "--arg",
        "3+132=s32:8",
        "--tensor-map",
        "3=f16:64::64",
    ]);
    let r = run(&maps(&a));
    assert_eq!(counts(&r, MAP_LDS), [1, 2, 1, 1]);
    // param_0 (a descriptor the kernel never reads) needs no map; param_1 does.
    let e = fails(&maps(&["--arg", "2=5", "--arg", "3+132=s32:0"]));
    assert!(
        e.contains("missing value for parameter tma_desc_probe_param_1 (.b8[128], index 1; reads bytes 8..12 at line 29, 16..24 at line 30)"),
        "{e}"
    );
}

#[test]
fn a_tensor_map_needs_a_place_a_cutensormap_can_live() {
    let place = "a CUtensorMap is 128 bytes at a 64-byte-aligned place";
    for (m, want) in [
        ("2=f16:64::64", format!("parameter 'tma_desc_probe_param_2' is .u32; {place}")),
        ("4=f16:64::64", format!("parameter 'tma_desc_probe_param_4' is .u64; {place}")),
        (
            "1+64=f16:64::64",
            format!("byte offset 64 of parameter 'tma_desc_probe_param_1' (128 bytes) cannot hold it; {place}"),
        ),
        ("3+32=f16:64::64", "allowed offsets 0..=128 in steps of 64".to_string()),
        ("3+192=f16:64::64", "byte offset 192 of parameter 'tma_desc_probe_param_3' (256 bytes)".to_string()),
        ("x=f16:64::64", "kernel 'tma_desc_probe' has no parameter 'x'; parameters: 0: tma_desc_probe_param_0 (.b8[128])".to_string()),
        ("1=f16:64::64@2", "@2: parameter 'tma_desc_probe_param_2' is not a pointer (.u32)".to_string()),
        ("1=f16:64::64@7", "@7: kernel 'tma_desc_probe' has no parameter '7'".to_string()),
    ] {
        let e = fails(&maps(&[
            "--arg",
            "2=5",
            "--arg",
            "3+132=s32:0",
            "--tensor-map",
            m,
        ]));
        assert!(e.contains(&want), "--tensor-map {m}: {e}");
    }
    // A map over bytes an --arg gave, and two maps in one place.
    let e = fails(&maps(&[
        "--arg",
        "2=5",
        "--arg",
        "3+132=s32:1",
        "--tensor-map",
        "3+128=f16:64::64",
        "--tensor-map",
        "1=f16:64::64",
    ]));
    assert!(
        e.contains("--arg 3+132=s32:1 and --tensor-map 3+128=f16:64::64 give byte 132 of parameter 'tma_desc_probe_param_3' (index 3) two different values"),
        "{e}"
    );
    let e = fails(&maps(&[
        "--arg",
        "2=5",
        "--arg",
        "3+132=s32:0",
        "--tensor-map",
        "1=f16:64::64",
        "--tensor-map",
        "1=f16:64::64",
        "--tensor-map",
        "3=f16:64::64",
    ]));
    assert!(
        e.contains("--tensor-map 1=f16:64::64 and --tensor-map 1=f16:64::64 give parameter 'tma_desc_probe_param_1' (index 1) two different values"),
        "{e}"
    );
}

#[test]
fn a_bad_tensor_map_spec_is_refused_by_the_flag() {
    for (m, want) in [
        (
            "1=f16:64",
            "the map has 2 ':'-separated parts; allowed: DTYPE:DIMS:STRIDES:BOX[:SWIZZLE]",
        ),
        (
            "1=e4m3:64::64",
            "unknown tensor map data type 'e4m3'; allowed: u8, u16, u32, s32, u64, s64, f16, f32, f64, bf16, f32_ftz, tf32, tf32_ftz",
        ),
        (
            "1=f16:0::64",
            "dim '0' is not allowed; allowed: whole numbers 1..=4294967296",
        ),
        (
            "1=f16:64,64:100:64,64",
            "stride 100 bytes is not allowed; allowed: multiples of 16",
        ),
        ("1=f16:64,64::64,64", "2 dims, 0 strides and 2 box dims"),
        (
            "1=f16:64::257",
            "box dim '257' is not allowed; allowed: whole numbers 1..=256",
        ),
        (
            "1=f16:64::4",
            "box dim 0 of 4 x 2-byte elements is 8 bytes; allowed: a multiple of 16 bytes",
        ),
        (
            "1=f16:64::64:16B",
            "unknown swizzle '16B'; allowed: none, 32B, 64B, 128B",
        ),
        (
            "1=f32:4294967296,4294967296:1099511627760:64,1",
            "the tensor spans more than 68719476736 bytes",
        ),
        (
            "f16:64::64",
            "expected NAME[+BYTE_OFFSET]=DTYPE:DIMS:STRIDES:BOX[:SWIZZLE][@POINTER]",
        ),
        ("1+z=f16:64::64", "'1+z' is not a byte offset"),
        ("1=f16:64::64@", "'@' names no pointer parameter"),
    ] {
        let e = fails(&maps(&["--tensor-map", m]));
        assert!(e.contains(want), "--tensor-map {m}: {e}");
    }
}

#[test]
fn tui_and_verify_take_the_same_flags() {
    let f = file("tensor_maps.ptx");
    // tui --ptx: the launch is checked before the terminal is looked for.
    let e = error(&[
        "tui", "--ptx", &f, "--grid", "1", "--block", "32", "--arg", "2=5",
    ]);
    assert!(
        e.contains("missing value for parameters tma_desc_probe_param_1"),
        "{e}"
    );
    let o = tilelab(&[
        "tui",
        "--ptx",
        &f,
        "--grid",
        "1",
        "--block",
        "32",
        "--arg",
        "2=5",
        "--arg",
        "3+132=s32:0",
        "--tensor-map",
        "1=f16:64::64",
        "--tensor-map",
        "3=f16:64::64",
        "--kernel",
        "#0",
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("tilelab tui needs a terminal"), "{e}");
    // verify --ptx: the same checks before the GPU is looked for (exit 2).
    let e = error(&[
        "verify",
        "--ptx",
        &f,
        "--grid",
        "1",
        "--block",
        "32",
        "--arg",
        "2=5",
        "--tensor-map",
        "1+64=f16:64::64",
    ]);
    assert!(
        e.contains("byte offset 64 of parameter 'tma_desc_probe_param_1'"),
        "{e}"
    );
    let e = error(&[
        "verify", "--ptx", &f, "--grid", "1", "--block", "32", "--arg", "2=5",
    ]);
    assert!(
        e.contains("missing value for parameters tma_desc_probe_param_1"),
        "{e}"
    );
}

/// The launch of tensor_maps.ptx with `maps` and the scalar it needs.
fn probe_launch(maps: &[&str], args: &[(&str, &str)]) -> Launch {
    Launch {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        cta: [0, 0, 0],
        args: args
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        tensor_maps: maps
            .iter()
            .map(|m| ptx::params::parse_tensor_map(m).unwrap())
            .collect(),
        dynamic_smem: None,
        max_instructions: 1000,
        cluster: None,
    }
}

fn probe_prog() -> ptx::decode::Program {
    let src = std::fs::read_to_string(file("tensor_maps.ptx")).unwrap();
    ptx::report::load(&src, None).unwrap()
}

#[test]
fn the_handle_bytes_are_as_documented() {
    let prog = probe_prog();
    // Parameters: 0 at 0 (128), 1 at 128 (128), 2 at 256 (4), 3 at 384 (256, .align 128),
    // 4 at 640 (8): 648 bytes.
    let off: Vec<u32> = prog.params.iter().map(|p| p.offset).collect();
    assert_eq!((off, prog.param_bytes), (vec![0, 128, 256, 384, 640], 648));
    let l = probe_launch(
        &[
            "3=f16:64::64",
            "1=f16:512,128:1024:64,128:128B@4",
            "0=u8:16::16",
        ],
        &[("2", "5"), ("3+132", "s32:-2")],
    );
    let b = ptx::params::launch_params(&prog, &l).unwrap();
    // Map 0 at param_3 (byte 384): its own buffer, the 6th (5 parameters, no variables):
    // (5 + 1) << 40.
    assert_eq!(&b[384..392], b"tlTMAP\0\x01");
    assert_eq!(&b[392..400], &[0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(u64::from_le_bytes(b[400..408].try_into().unwrap()), 6 << 40);
    assert!(b[408..512].iter().all(|&x| x == 0));
    // stride[1] beside it.
    assert_eq!(&b[516..520], &(-2i32).to_le_bytes());
    // Map 1 at param_1 (byte 128): index 1, the buffer of pointer param_4: (4 + 1) << 40,
    // which is also the pointer's value.
    assert_eq!(&b[128..136], b"tlTMAP\0\x01");
    assert_eq!(&b[136..140], &1u32.to_le_bytes());
    assert_eq!(u64::from_le_bytes(b[144..152].try_into().unwrap()), 5 << 40);
    assert_eq!(u64::from_le_bytes(b[640..648].try_into().unwrap()), 5 << 40);
    // Map 2 at param_0: index 2, buffer (5 + 3) << 40.
    assert_eq!(&b[8..12], &2u32.to_le_bytes());
    assert_eq!(u64::from_le_bytes(b[16..24].try_into().unwrap()), 8 << 40);
    assert_eq!(&b[256..260], &5u32.to_le_bytes());
    // The engine's lookup.
    use ptx::params::tensor_map_index;
    assert_eq!(tensor_map_index(&b, 384), Some(0));
    assert_eq!(tensor_map_index(&b, 128), Some(1));
    assert_eq!(tensor_map_index(&b, 0), Some(2));
    assert_eq!(tensor_map_index(&b, 256), None);
    assert_eq!(tensor_map_index(&b, 640), None);
    assert_eq!(tensor_map_index(&b, 1 << 40), None);
}

#[test]
fn the_reads_of_nvcc_s_tma_kernel() {
    // tma_kernel takes its struct's address (mov.b64, line 123; cvta.param, prefetch.tensormap)
    // and reads stride[1] (line 130): the whole struct is read; the pointer 0..8 at line 124.
    let src = std::fs::read_to_string(file("struct_params.ptx")).unwrap();
    let m = ptx::parse::parse(&src).unwrap();
    let k = &m.kernels[1];
    assert_eq!(k.name, "_Z10tma_kernel3TmaPf");
    let mut params: Vec<ptx::decode::ParamInfo> = k
        .params
        .iter()
        .scan(0u32, |off, p| {
            let at = off.next_multiple_of(p.align);
            *off = at + p.size;
            Some(ptx::decode::ParamInfo {
                name: p.name.clone(),
                ty: p.ty.clone(),
                offset: at,
                size: p.size,
                pointer: false,
                align: p.align,
                reads: Vec::new(),
            })
        })
        .collect();
    ptx::params::mark_reads(k, &mut params);
    let r = |p: &ptx::decode::ParamInfo| -> Vec<(u32, u32, u32)> {
        p.reads.iter().map(|r| (r.lo, r.hi, r.line)).collect()
    };
    assert_eq!((params[0].align, params[0].size), (128, 256));
    assert_eq!(r(&params[0]), vec![(0, 256, 123)]);
    assert_eq!(r(&params[1]), vec![(0, 8, 124)]);
    // gemm_device: the fields one by one; the empty struct and the unused pointer never.
    let prog = ptx::report::load(&src, Some("#0")).unwrap();
    let reads: Vec<Vec<(u32, u32, u32)>> = prog.params.iter().map(r).collect();
    assert_eq!(
        reads,
        vec![
            vec![(0, 4, 36), (8, 12, 35)],
            vec![],
            vec![(0, 4, 34), (8, 10, 33)],
            vec![(0, 8, 32)],
            vec![],
        ]
    );
}

#[test]
fn an_ld_param_through_a_register_reads_every_parameter() {
    let src = ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k(\n\t.param .align 1 .b8 k_param_0[1],\n\t.param .align 4 .b8 k_param_1[8]\n)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\tmov.u64 %rd1, 4;\n\tld.param.u32 %r1, [%rd1];\n\tret;\n}\n";
    let m = ptx::parse::parse(src).unwrap();
    let prog = ptx::decode::decode(&m, &m.kernels[0]).unwrap();
    let reads: Vec<Vec<(u32, u32)>> = prog
        .params
        .iter()
        .map(|p| p.reads.iter().map(|r| (r.lo, r.hi)).collect())
        .collect();
    assert_eq!(reads, vec![vec![(0, 1)], vec![(0, 8)]]);
}

proptest! {
    /// `--arg 3+OFF=u32:V0,V1,...` puts each value's little-endian bytes at byte OFF + 4i of
    /// param_3 (byte 384 of the buffer), after its map and the stride[1] the kernel reads; an
    /// offset that is not a multiple of 4 is refused, as are values past the 256 bytes.
    #[test]
    fn packed_values_land_little_endian(vals in prop::collection::vec(any::<u32>(), 1..32), off in 0u32..128) {
        let prog = probe_prog();
        let text = vals.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",");
        let key = format!("3+{}", 136 + off);
        let l = probe_launch(
            &["1=f16:64::64", "3=f16:64::64"],
            &[("2", "5"), ("3+132", "s32:0"), (&key, &format!("u32:{text}"))],
        );
        let r = ptx::params::launch_params(&prog, &l);
        let end = 136 + off + 4 * vals.len() as u32;
        if end > 256 {
            let e = r.unwrap_err().to_string();
            prop_assert!(e.contains("past the 256 bytes of parameter 'tma_desc_probe_param_3'"), "{}", e);
        } else if off % 4 != 0 {
            let e = r.unwrap_err().to_string();
            prop_assert!(e.contains("is not a multiple of 4, the size of .u32"), "{}", e);
        } else {
            let b = r.unwrap();
            for (i, v) in vals.iter().enumerate() {
                let at = 384 + 136 + off as usize + 4 * i;
                prop_assert_eq!(&b[at..at + 4], &v.to_le_bytes());
            }
        }
    }
}
