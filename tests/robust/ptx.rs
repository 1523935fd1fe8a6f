//! Issue #26, round 2, `tilelab ptx` (and `tui --ptx`, which runs the same machine): no launch
//! CUDA refuses, no argument that silently changes value, no launch whose memory is unbounded,
//! no loop that runs for minutes, no undefined behaviour at run time taken silently. One
//! module per kind; every limit asserted is the CUDA C++ Programming Guide's or the PTX ISA's
//! number, written here, never computed by the code under test.
//!
//! 1. `launch`: grid and block dimensions, threads per block, `--cta`, `.maxntid`/`.reqntid`,
//!    shared memory per block;
//! 2. `args`: every parameter type's range, floats that overflow or underflow, an `--arg`
//!    given twice;
//! 3. `memory`: registers × threads, `.local` frames, the trace, global pages;
//! 4. `hangs`: the budget's cost units, spinning warps, deadlocks;
//! 5. `undefined`: misaligned addresses in every state space, `cp.async` src-size,
//!    membermasks, shuffles from lanes that do not execute, `cvta.to` outside its window,
//!    barriers, partial-warp `mma`.

use super::{assert_error, temp_dir, tilelab};
use tilelab::ptx::machine::{self, DEFAULT_MAX_INSTRUCTIONS, Launch, RunError};
use tilelab::ptx::report::PtxError;

const HEAD: &str = ".version 8.7\n.target sm_90\n.address_size 64\n";

/// Writes `HEAD` + `body` to a new file named after `name` in this test run's folder (each
/// call its own file: tests run in parallel).
fn file(name: &str, body: &str) -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let p = temp_dir("ptx26").join(format!("{n}-{name}"));
    std::fs::write(&p, format!("{HEAD}{body}")).unwrap();
    p.to_string_lossy().into_owned()
}

fn launch(grid: [u32; 3], block: [u32; 3]) -> Launch {
    Launch {
        grid,
        block,
        cta: [0, 0, 0],
        args: vec![],
        tensor_maps: vec![],
        dynamic_smem: None,
        max_instructions: DEFAULT_MAX_INSTRUCTIONS,
        cluster: None,
    }
}

/// The error of simulating `HEAD + body`, as text.
fn sim_err(body: &str, l: &Launch) -> String {
    match tilelab::ptx::simulate(&format!("{HEAD}{body}"), None, l) {
        Ok(_) => panic!("expected an error for {body}"),
        Err(e) => e.to_string(),
    }
}

const TRIVIAL: &str = ".visible .entry k()\n{\nret;\n}\n";

/// The 1-based line of `HEAD + body` that holds `needle` (the first such line).
fn line_of(body: &str, needle: &str) -> usize {
    format!("{HEAD}{body}")
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in {body}"))
        + 1
}

mod launch {
    use super::*;
    use proptest::prelude::*;

    /// CUDA C++ Programming Guide, "Technical Specifications per Compute Capability" (9.0):
    /// grid x at most 2^31 − 1 = 2,147,483,647, grid y and z at most 65,535, block x and y at
    /// most 1,024, block z at most 64, at most 1,024 threads per block.
    #[test]
    fn launches_cuda_refuses_are_one_line_errors_naming_the_limit() {
        let f = file("trivial.ptx", TRIVIAL);
        let run = |grid: &str, block: &str| tilelab(&["ptx", &f, "--grid", grid, "--block", block]);
        for (grid, block) in [
            ("2147483647", "32"),
            ("1,65535,65535", "32"),
            ("1", "1024"),
            ("1", "1,1024"),
            ("1", "16,1,64"),
            ("1", "32,32"),
        ] {
            let o = run(grid, block);
            assert!(
                o.status.success(),
                "{grid} {block}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        for (grid, block, needles) in [
            (
                "2147483648",
                "32",
                &["--grid 2147483648,1,1", "2147483647"][..],
            ),
            ("1,65536", "32", &["y = 65536", "65535"]),
            ("1,1,65536", "32", &["z = 65536", "65535"]),
            ("1", "1025", &["x = 1025", "1024"]),
            ("1", "1,1025", &["y = 1025", "1024"]),
            ("1", "1,1,65", &["z = 65", "64"]),
            (
                "1",
                "32,32,2",
                &["2048 threads", "at most 1024 threads per block"],
            ),
            ("1", "1024,1024,64", &["67108864 threads", "1024"]),
        ] {
            assert_error(&["ptx", &f, "--grid", grid, "--block", block], needles);
            // tui --ptx runs the same machine: the same error before any terminal is needed.
            assert_error(
                &["tui", "--ptx", &f, "--grid", grid, "--block", block],
                needles,
            );
        }
        assert_error(
            &[
                "ptx", &f, "--grid", "2,1,1", "--block", "32", "--cta", "0,1,0",
            ],
            &["--cta 0,1,0 is outside the grid 2,1,1", "0..=1,0,0"],
        );
        // Zero dimensions: the flag parser refuses them; the library refuses them too.
        assert_error(
            &["ptx", &f, "--grid", "1", "--block", "32,0"],
            &["at least 1"],
        );
        let e = sim_err(TRIVIAL, &launch([1, 1, 1], [32, 0, 1]));
        assert!(e.contains("the y dimension is 0"), "{e}");
        // A product past 2^32: named, not wrapped.
        let e = sim_err(TRIVIAL, &launch([1, 1, 1], [u32::MAX; 3]));
        assert!(e.contains("x = 4294967295") && e.contains("1024"), "{e}");
    }

    /// PTX ISA, "Performance-Tuning Directives": `.maxntid` is the most threads a CTA of the
    /// kernel may have (the product of its extents), `.reqntid` the exact block.
    #[test]
    fn maxntid_and_reqntid_bound_the_block() {
        let max = ".visible .entry k() .maxntid 64, 1, 1\n{\nret;\n}\n";
        let f = file("maxntid.ptx", max);
        for ok in ["64", "32", "8,8"] {
            let o = tilelab(&["ptx", &f, "--grid", "1", "--block", ok]);
            assert!(o.status.success(), "{ok}");
        }
        for bad in ["65", "128", "8,16"] {
            assert_error(
                &["ptx", &f, "--grid", "1", "--block", bad],
                &["at most 64 threads per block (.maxntid 64,1,1)"],
            );
        }
        let req = ".visible .entry k() .reqntid 128\n{\nret;\n}\n";
        let f = file("reqntid.ptx", req);
        assert!(
            tilelab(&["ptx", &f, "--grid", "1", "--block", "128"])
                .status
                .success()
        );
        for bad in ["64", "64,2", "256"] {
            assert_error(
                &["ptx", &f, "--grid", "1", "--block", bad],
                &["requires a block of 128,1,1 threads (.reqntid)"],
            );
        }
    }

    /// sm_90: at most 227 KiB = 232,448 bytes of shared memory per block, static and dynamic
    /// together (with the opt-in above 48 KiB; CUDA C++ Programming Guide, Table 31).
    #[test]
    fn static_plus_dynamic_shared_memory_is_bounded_by_the_block_limit() {
        let body = ".visible .entry k()\n{\n.shared .align 4 .b8 s[1024];\nret;\n}\n";
        let f = file("smem.ptx", body);
        let o = tilelab(&[
            "ptx",
            &f,
            "--grid",
            "1",
            "--block",
            "32",
            "--dynamic-smem",
            "231424",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_error(
            &[
                "ptx",
                &f,
                "--grid",
                "1",
                "--block",
                "32",
                "--dynamic-smem",
                "231425",
            ],
            &[
                "1024 static + 231425 dynamic bytes",
                "232448",
                "up to 231424",
            ],
        );
        let big = ".visible .entry k()\n{\n.shared .align 4 .b8 s[232452];\nret;\n}\n";
        assert_error(
            &[
                "ptx",
                &file("smem_big.ptx", big),
                "--grid",
                "1",
                "--block",
                "32",
            ],
            &[
                "shared variable 's' of 232452 bytes exceeds 232448 bytes of shared memory per block on sm_90",
            ],
        );
    }

    /// The Programming Guide's launch limits, written here: a launch runs iff every dimension
    /// is in range and the block has at most 1,024 threads.
    fn accepted(grid: [u32; 3], block: [u32; 3]) -> bool {
        let gmax = [2_147_483_647u32, 65_535, 65_535];
        let bmax = [1024u32, 1024, 64];
        (0..3).all(|i| (1..=gmax[i]).contains(&grid[i]) && (1..=bmax[i]).contains(&block[i]))
            && block.iter().map(|&b| u64::from(b)).product::<u64>() <= 1024
    }

    /// Dimensions near every limit: 0, 1, the limit and one past it, and anything.
    fn dim(limit: u32) -> impl Strategy<Value = u32> {
        prop_oneof![
            Just(0u32),
            Just(1),
            Just(limit),
            Just(limit.saturating_add(1)),
            1u32..=limit,
            any::<u32>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

        #[test]
        fn a_launch_runs_iff_cuda_would_accept_it(
            gx in dim(2_147_483_647), gy in dim(65_535), gz in dim(65_535),
            bx in prop_oneof![dim(1024), 1u32..=64], by in prop_oneof![dim(1024), 1u32..=4],
            bz in prop_oneof![dim(64), 1u32..=2],
        ) {
            let l = launch([gx, gy, gz], [bx, by, bz]);
            let r = tilelab::ptx::simulate(&format!("{HEAD}{TRIVIAL}"), None, &l);
            match r {
                Ok(_) => prop_assert!(accepted(l.grid, l.block), "{l:?} ran"),
                Err(PtxError::Run(RunError::Launch(e))) => {
                    prop_assert!(!accepted(l.grid, l.block), "{l:?}: {e}");
                    prop_assert!(!e.contains('\n'));
                }
                Err(e) => prop_assert!(false, "{l:?}: {e}"),
            }
        }
    }
}

mod args {
    use super::*;
    use proptest::prelude::*;

    const KERNEL: &str = ".visible .entry k(.param .u32 k_u32, .param .s8 k_s8, .param .f32 k_f32, .param .f64 k_f64, .param .b16 k_b16, .param .f16 k_f16)\n{\nret;\n}\n";

    /// `tilelab ptx` of [`KERNEL`] with every parameter valid except the `--arg`s in `over`.
    fn run(over: &[&str]) -> std::process::Output {
        let f = file("args.ptx", KERNEL);
        let names = ["k_u32", "k_s8", "k_f32", "k_f64", "k_b16", "k_f16"];
        let mut given: Vec<String> = names
            .iter()
            .filter(|n| !over.iter().any(|o| o.starts_with(&format!("{n}="))))
            .map(|n| format!("{n}=1"))
            .collect();
        given.extend(over.iter().map(|s| s.to_string()));
        let mut a = vec!["ptx", f.as_str(), "--grid", "1", "--block", "32"];
        for g in &given {
            a.push("--arg");
            a.push(g);
        }
        tilelab(&a)
    }

    fn refused(over: &[&str], needles: &[&str]) {
        let o = run(over);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{over:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        for n in needles {
            assert!(e.contains(n), "{over:?}: {e} lacks {n:?}");
        }
    }

    fn accepted(over: &[&str]) {
        let o = run(over);
        assert!(
            o.status.success(),
            "{over:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    #[test]
    fn values_out_of_their_types_range_are_refused() {
        // .u32: 0..=4294967295; .s8: -128..=127; .b16: -32768..=65535 (either reading).
        for ok in [
            "k_u32=4294967295",
            "k_u32=0xffffffff",
            "k_u32=0",
            "k_s8=-128",
            "k_s8=127",
            "k_b16=65535",
            "k_b16=-32768",
        ] {
            accepted(&[ok]);
        }
        refused(
            &["k_u32=5000000000"],
            &["5000000000 is out of range for .u32", "0..=4294967295"],
        );
        refused(&["k_u32=-1"], &["-1 is out of range for .u32"]);
        refused(
            &["k_s8=200"],
            &["200 is out of range for .s8", "-128..=127"],
        );
        refused(&["k_s8=-129"], &["out of range for .s8"]);
        refused(&["k_b16=65536"], &["out of range for .b16"]);
        refused(&["k_u32=1.5"], &["not a whole number", ".u32"]);
        // One sign, then digits: "--5" and "0x+f" are not numbers, not 5 and 15.
        refused(&["k_u32=--5"], &["'--5' is not a whole number"]);
        refused(&["k_u32=0x+f"], &["'0x+f' is not a whole number"]);
        refused(&["k_u32=+-5"], &["'+-5' is not a whole number"]);
        accepted(&["k_s8=+5"]);
    }

    /// IEEE 754 binary32's largest finite value is 3.4028235e38 and smallest positive one
    /// 1.4e-45; binary64's largest is 1.7976931348623157e308; binary16's largest 65504.
    #[test]
    fn floats_that_overflow_or_underflow_are_refused_and_inf_and_nan_only_when_written() {
        for ok in [
            "k_f32=3.4028235e38",
            "k_f32=inf",
            "k_f32=-inf",
            "k_f32=nan",
            "k_f32=1e-45",
            "k_f32=0",
            "k_f64=1e308",
            "k_f16=65504",
            "k_f16=0.5",
        ] {
            accepted(&[ok]);
        }
        refused(&["k_f32=1e39"], &["1e39 overflows .f32", "inf"]);
        refused(&["k_f32=-1e39"], &["overflows .f32"]);
        refused(&["k_f32=1e-50"], &["1e-50 underflows to 0 in .f32"]);
        refused(&["k_f64=1e309"], &["overflows .f64"]);
        refused(&["k_f16=70000"], &["70000 overflows .f16", "65504"]);
        refused(&["k_f32=abc"], &["'abc' is not a number", ".f32"]);
    }

    #[test]
    fn an_arg_given_twice_with_different_values_is_refused() {
        // The same value twice (as bytes: 7 and 0x7 are one value) is accepted.
        accepted(&["k_u32=7", "k_u32=7"]);
        accepted(&["k_u32=7", "0=0x7"]);
        refused(
            &["k_u32=7", "k_u32=8"],
            &["--arg k_u32=7 and --arg k_u32=8", "two different values"],
        );
        // By name and by index: the same parameter.
        refused(
            &["k_u32=7", "0=8"],
            &["--arg k_u32=7 and --arg 0=8", "(index 0)"],
        );
        refused(&["nope=1"], &["has no parameter 'nope'", "k_u32 (.u32)"]);
        refused(&["6=1"], &["has no parameter '6'"]);
    }

    /// IEEE 754 bit patterns: binary16 1.5 = 0x3e00, -2 = 0xc000; bfloat16 1.5 = 0x3fc0;
    /// binary32 0.125 = 0x3e000000; binary64 -0.5 = 0xbfe0000000000000.
    #[test]
    fn float_parameters_are_encoded_in_their_own_format() {
        let enc = |ty: &str, v: &str| machine::encode_arg(ty, v).unwrap();
        assert_eq!(enc("f16", "1.5"), vec![0x00, 0x3e]);
        assert_eq!(enc("f16", "-2"), vec![0x00, 0xc0]);
        assert_eq!(enc("bf16", "1.5"), vec![0xc0, 0x3f]);
        assert_eq!(enc("f32", "0.125"), 0x3e00_0000u32.to_le_bytes().to_vec());
        assert_eq!(
            enc("f64", "-0.5"),
            0xbfe0_0000_0000_0000u64.to_le_bytes().to_vec()
        );
        assert_eq!(enc("s16", "-2"), vec![0xfe, 0xff]);
        assert_eq!(enc("pred", "1"), vec![1]);
        assert!(machine::encode_arg("pred", "2").is_err());
    }

    /// PTX ISA §5.2.2 integer types: .uN holds 0..=2^N-1, .sN -2^(N-1)..=2^(N-1)-1; .bN is
    /// untyped N bits (either reading accepted). Written here for every width.
    fn range(ty: &str) -> (i128, i128) {
        let bits: u32 = ty[1..].parse().unwrap();
        let (smin, smax, umax) = match bits {
            8 => (-128i128, 127i128, 255i128),
            16 => (-32_768, 32_767, 65_535),
            32 => (-2_147_483_648, 2_147_483_647, 4_294_967_295),
            _ => (
                -9_223_372_036_854_775_808,
                9_223_372_036_854_775_807,
                18_446_744_073_709_551_615,
            ),
        };
        match &ty[..1] {
            "u" => (0, umax),
            "s" => (smin, smax),
            _ => (smin, umax),
        }
    }

    fn int_type() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "b8", "b16", "b32", "b64",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

        /// Every integer type, values around its bounds and anywhere: accepted iff in range,
        /// as the value's little-endian two's complement in the type's bytes.
        #[test]
        fn integer_values_are_accepted_iff_in_range(
            ty in int_type(),
            pick in 0usize..6,
            delta in -2i128..=2,
            any in any::<i64>(),
            hex in any::<bool>(),
        ) {
            let (lo, hi) = range(ty);
            let v = match pick {
                0 => lo + delta,
                1 => hi + delta,
                2 => delta,
                _ => i128::from(any),
            };
            let text = if hex && v >= 0 { format!("{v:#x}") } else { v.to_string() };
            let r = machine::encode_arg(ty, &text);
            if (lo..=hi).contains(&v) {
                let bytes = r.unwrap();
                let n = ty[1..].parse::<usize>().unwrap() / 8;
                prop_assert_eq!(bytes, (v as u128).to_le_bytes()[..n].to_vec());
            } else {
                let e = r.unwrap_err();
                prop_assert!(e.contains("out of range") && e.contains(&format!("{lo}..={hi}")), "{}", e);
            }
        }
    }
}

mod memory {
    use super::*;

    fn program(body: &str) -> tilelab::ptx::decode::Program {
        tilelab::ptx::report::load(&format!("{HEAD}{body}"), None).unwrap()
    }

    /// `.reg .b32 %x<1000000>` launched with 1,024 threads would need 1,000,000 registers x
    /// 1,024 threads x 8 bytes = 8,192,000,000 bytes: refused before anything is allocated,
    /// naming the limit (1 GiB = 1,073,741,824 bytes) and the need, whatever the decoder
    /// accepts (the register count is set on the decoded program here).
    #[test]
    fn registers_times_threads_are_bounded_before_allocation() {
        let mut prog = program(TRIVIAL);
        prog.nregs = 1_000_000;
        let e = machine::run(&prog, &launch([1, 1, 1], [1024, 1, 1]), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("registers 1000000 per thread x 1024 threads x 8 bytes = 8192000000"),
            "{e}"
        );
        assert!(
            e.contains("limit of 1073741824 bytes") && e.contains("MAX_LAUNCH_BYTES"),
            "{e}"
        );
        assert_eq!(machine::MAX_LAUNCH_BYTES, 1_073_741_824);
        // 1,000 registers x 1,024 threads x 8 bytes = 8,192,000 bytes: allowed.
        prog.nregs = 1_000;
        machine::run(&prog, &launch([1, 1, 1], [1024, 1, 1]), None).unwrap();
        // .local frames count too: 512 KiB (CUDA's most per thread) x 1,024 threads =
        // 536,870,912 bytes, plus 70,000 registers x 1,024 x 8 = 573,440,000: over 1 GiB.
        prog.local_frame = 512 * 1024;
        prog.nregs = 70_000;
        let e = machine::run(&prog, &launch([1, 1, 1], [1024, 1, 1]), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(".local 524288 bytes x 1024 threads = 536870912"),
            "{e}"
        );
    }

    /// The CLI with a huge register declaration: one line, exit 2, however it is refused.
    #[test]
    fn a_huge_register_file_is_a_one_line_error() {
        let f = file(
            "regs.ptx",
            ".visible .entry k()\n{\n.reg .b32 %x<1000000>;\nret;\n}\n",
        );
        assert_error(&["ptx", &f, "--grid", "1", "--block", "1024"], &[]);
    }

    /// `tui --ptx --max-steps N` keeps up to N steps: their bytes count toward the limit.
    #[test]
    fn the_trace_is_bounded_before_the_run() {
        let f = file("trivial.ptx", TRIVIAL);
        assert_error(
            &[
                "tui",
                "--ptx",
                &f,
                "--grid",
                "1",
                "--block",
                "32",
                "--max-steps",
                "100000000",
            ],
            &["trace of 100000000 steps", "--max-steps", "1073741824"],
        );
    }

    /// Stores to 6,400 distinct 64 KiB pages: the 4,097th page passes 256 MiB (268,435,456
    /// bytes) and stops the run at the store's line.
    #[test]
    fn written_global_memory_is_bounded() {
        let body = ".visible .entry k(.param .u64 .ptr p)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [p];\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, 0;\n$L:\nmad.lo.s32 %r3, %r2, 32, %r1;\nmul.wide.u32 %rd2, %r3, 65536;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r1;\nadd.s32 %r2, %r2, 1;\nsetp.lt.u32 %p1, %r2, 200;\n@%p1 bra $L;\nret;\n}\n";
        let f = file("pages.ptx", body);
        assert_error(
            &["ptx", &f, "--grid", "1", "--block", "32"],
            &["line 16:", "268435456 bytes", "MAX_GLOBAL_BYTES"],
        );
        assert_eq!(machine::MAX_GLOBAL_BYTES, 268_435_456);
    }
}

mod hangs {
    use super::*;
    use std::time::{Duration, Instant};

    /// The default budget against the heaviest CTA of a real kernel, the FA2 lesson kernel at
    /// S = 4096 (270,596 warp instructions, measured by the H200 fixture): at least 10x
    /// headroom in warp instructions and in cost units.
    #[test]
    fn the_default_budget_has_ten_times_headroom_over_the_largest_real_kernel() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx");
        let src = std::fs::read_to_string(format!("{dir}/fa2_d128_bm128_causal.ptx")).unwrap();
        let prog = tilelab::ptx::report::load(&src, Some("fa2_fwd")).unwrap();
        let l = Launch {
            grid: [32, 1, 1],
            block: [128, 1, 1],
            cta: [0, 0, 0],
            args: vec![
                ("fa2_fwd_param_4".into(), "4096".into()),
                ("fa2_fwd_param_5".into(), "0.0883883461356163".into()),
            ],
            tensor_maps: vec![],
            dynamic_smem: Some(98_304),
            max_instructions: DEFAULT_MAX_INSTRUCTIONS,
            cluster: None,
        };
        let r = machine::run(&prog, &l, None).unwrap();
        assert_eq!(r.instructions, 270_596);
        assert!(DEFAULT_MAX_INSTRUCTIONS >= 10 * r.instructions);
        assert!(DEFAULT_MAX_INSTRUCTIONS * machine::UNITS_PER_INSTRUCTION >= 10 * r.cost_units);
    }

    /// The budget counts cost: 1 per instruction, 64 per mma.sync, at most 20 per warp
    /// instruction on average. With --max-instructions 1000 a loop of mma + bra (65 units an
    /// iteration after 1 unit of set-up) stops when the next mma would pass 20,000 units:
    /// after 307 iterations, 1 + 2 x 307 = 615 warp instructions.
    #[test]
    fn expensive_instructions_spend_the_budget_faster() {
        let body = ".visible .entry k()\n{\n.reg .b32 %r<8>;\nmov.b32 %r1, 0;\n$L:\nmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r2, %r3, %r4, %r5}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r2, %r3, %r4, %r5};\nbra $L;\n}\n";
        let f = file("mma_loop.ptx", body);
        assert_error(
            &[
                "ptx",
                &f,
                "--grid",
                "1",
                "--block",
                "32",
                "--max-instructions",
                "1000",
            ],
            &[
                "stopped after 615 warp instructions at line 9, warp 0",
                "--max-instructions budget of 1000",
            ],
        );
    }

    /// Two warps: warp 1 waits at bar.sync 0, warp 0 spins on a shared flag nobody can set.
    /// The run ends at once with a deadlock naming both, not after the budget.
    #[test]
    fn a_warp_spinning_while_others_wait_at_a_barrier_is_a_prompt_deadlock() {
        let body = ".visible .entry k()\n{\n.reg .pred %p<3>;\n.reg .b32 %r<4>;\n.shared .align 4 .b32 flag;\nmov.u32 %r1, %tid.x;\nsetp.ge.u32 %p1, %r1, 32;\n@%p1 bra $W;\n$S:\nld.shared.u32 %r2, [flag];\nsetp.eq.u32 %p2, %r2, 0;\n@%p2 bra $S;\nret;\n$W:\nbar.sync 0;\nret;\n}\n";
        let f = file("spin.ptx", body);
        let t = Instant::now();
        assert_error(
            &["ptx", &f, "--grid", "1", "--block", "64"],
            &[
                "deadlock",
                &format!(
                    "warp 0 spins in the loop of line {}",
                    line_of(body, "@%p2 bra $S")
                ),
                &format!(
                    "warp 1 waits at barrier 0 (line {})",
                    line_of(body, "bar.sync")
                ),
            ],
        );
        assert_error(
            &["tui", "--ptx", &f, "--grid", "1", "--block", "64"],
            &["deadlock", "warp 0 spins"],
        );
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
        // An endless loop around one ld.shared in every warp of a full block: the same.
        let lds = ".visible .entry k()\n{\n.reg .b32 %r<4>;\n.shared .align 4 .b8 s[4096];\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\n$L:\nld.shared.b32 %r0, [%r2];\nbra $L;\n}\n";
        let f = file("lds_loop.ptx", lds);
        assert_error(
            &["ptx", &f, "--grid", "1", "--block", "1024"],
            &[
                "deadlock",
                &format!(
                    "warps 0-31 spin in the loop of line {}",
                    line_of(lds, "bra $L")
                ),
            ],
        );
    }

    /// A flag handshake without a barrier: warp 0 spins until warp 1 sets the flag. The
    /// spinning warp yields, warp 1 runs, and warp 0 then leaves its loop and stores once.
    #[test]
    fn a_spin_wait_on_another_warps_store_completes() {
        let body = ".visible .entry k()\n{\n.reg .pred %p<3>;\n.reg .b32 %r<4>;\n.shared .align 4 .b8 flag[8];\nmov.u32 %r1, %tid.x;\nsetp.ge.u32 %p1, %r1, 32;\n@%p1 bra $W;\n$S:\nld.shared.u32 %r2, [flag];\nsetp.eq.u32 %p2, %r2, 0;\n@%p2 bra $S;\nst.shared.u32 [flag+4], %r2;\nret;\n$W:\nmov.u32 %r3, 1;\nst.shared.u32 [flag], %r3;\nret;\n}\n";
        let f = file("handshake.ptx", body);
        let o = tilelab(&["ptx", &f, "--grid", "1", "--block", "64", "--json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let line = |n: u64| {
            r["lines"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["line"] == n)
                .unwrap()["executions"]
                .as_u64()
                .unwrap()
        };
        let after = line_of(body, "[flag+4]") as u64;
        let set = line_of(body, "st.shared.u32 [flag],") as u64;
        assert_eq!(line(after), 1, "the store after the loop ran once: {r}");
        assert_eq!(line(set), 1, "warp 1 set the flag once");
    }

    /// Warp 1 loops with a counter (state changes: not a spin) while warp 0 waits at a
    /// barrier: the budget stops it and says who waits and which flag raises the budget.
    #[test]
    fn the_budget_names_the_flag_and_the_waiting_warps() {
        let body = ".visible .entry k()\n{\n.reg .pred %p<3>;\n.reg .b32 %r<4>;\nmov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\n@%p1 bra $W;\n$S:\nadd.s32 %r2, %r2, 1;\nbra $S;\n$W:\nbar.sync 0;\nret;\n}\n";
        let f = file("count.ptx", body);
        assert_error(
            &[
                "ptx",
                &f,
                "--grid",
                "1",
                "--block",
                "64",
                "--max-instructions",
                "10000",
            ],
            &[
                "stopped after 10000 warp instructions",
                ", warp 1: the --max-instructions budget of 10000 is spent",
                &format!(
                    "; warp 0 waits at barrier 0 (line {})",
                    line_of(body, "bar.sync")
                ),
                "raise --max-instructions",
            ],
        );
    }
}

mod undefined {
    use super::*;
    use proptest::prelude::*;

    /// A kernel with a pointer `p` (its buffer at 0x10000000000), `%r1` = tid, `%rd1` = p,
    /// then `body`, then `ret`.
    fn kernel(body: &str) -> String {
        format!(
            ".visible .entry k(.param .u64 .ptr p)\n{{\n.reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n.shared .align 16 .b8 s[1024];\n.local .align 16 .b8 loc[64];\nld.param.u64 %rd1, [p];\nmov.u32 %r1, %tid.x;\n{body}\nret;\n}}\n"
        )
    }

    fn err(body: &str, block: u32) -> String {
        let f = file("ub.ptx", &kernel(body));
        let o = tilelab(&["ptx", &f, "--grid", "1", "--block", &block.to_string()]);
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{body}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        e
    }

    fn ok(body: &str, block: u32) {
        let f = file("ub_ok.ptx", &kernel(body));
        let o = tilelab(&["ptx", &f, "--grid", "1", "--block", &block.to_string()]);
        assert!(
            o.status.success(),
            "{body}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// PTX ISA §6.4.1 "Addresses as Operands": an address must be naturally aligned to the
    /// access size (a vector's whole size). Every state space: global, shared, local,
    /// generic, param; atomics too. The error names the line (13, the body's first), the
    /// lane, the address and the alignment.
    #[test]
    fn misaligned_addresses_are_refused_in_every_state_space() {
        let e = err("ld.global.u32 %r2, [%rd1+2];", 32);
        assert!(
            e.contains("line 13: lane 0: global address 0x10000000002 is not aligned to 4 bytes"),
            "{e}"
        );
        let e = err("st.global.v4.u32 [%rd1+8], {%r1, %r1, %r1, %r1};", 32);
        assert!(e.contains("not aligned to 16 bytes"), "{e}");
        let e = err("ld.shared.u32 %r2, [s+2];", 32);
        assert!(
            e.contains("line 13: lane 0") && e.contains("not aligned to 4 bytes"),
            "{e}"
        );
        let e = err("ld.local.u64 %rd2, [loc+4];", 32);
        assert!(
            e.contains("line 13: lane 0: local address 0x4 is not aligned to 8 bytes"),
            "{e}"
        );
        let e = err("cvta.local.u64 %rd2, loc;\nld.u32 %r2, [%rd2+6];", 32);
        assert!(
            e.contains("line 14: lane 0") && e.contains("not aligned to 4 bytes"),
            "{e}"
        );
        let e = err("atom.global.add.u32 %r2, [%rd1+1], 1;", 32);
        assert!(
            e.contains("global address 0x10000000001 is not aligned to 4 bytes"),
            "{e}"
        );
        // One lane off: that lane is named.
        let e = err(
            "mul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\nsetp.eq.u32 %p1, %r1, 5;\n@%p1 add.s64 %rd3, %rd3, 1;\nld.global.u32 %r2, [%rd3];",
            32,
        );
        assert!(
            e.contains("line 17: lane 5: global address 0x10000000015"),
            "{e}"
        );
        ok("ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd1+16];", 32);
    }

    /// PTX ISA §9.7.9.25.3 cp.async: "Specifying src-size larger than cp-size results in
    /// undefined behavior"; src-size up to cp-size is fine.
    #[test]
    fn cp_async_src_size_larger_than_cp_size_is_refused() {
        let e = err(
            "mov.u32 %r2, 20;\ncp.async.cg.shared.global [s], [%rd1], 16, %r2;",
            32,
        );
        assert!(
            e.contains("line 14: lane 0: cp.async src-size 20 is larger than its cp-size 16"),
            "{e}"
        );
        ok(
            "mov.u32 %r2, 16;\ncp.async.cg.shared.global [s], [%rd1], 16, %r2;",
            32,
        );
        ok(
            "mov.u32 %r2, 3;\ncp.async.ca.shared.global [s], [%rd1], 4, %r2;",
            32,
        );
    }

    /// PTX ISA shfl.sync, vote.sync, bar.warp.sync: undefined if the executing thread is not
    /// in membermask; every non-exited thread of membermask must execute the instruction.
    #[test]
    fn membermasks_must_hold_the_executing_lanes() {
        let e = err("shfl.sync.bfly.b32 %r2, %r1, 1, 31, 0;", 32);
        assert!(
            e.contains("line 13: lane 0: shfl.sync with membermask 0x00000000, which does not include the executing lane 0"),
            "{e}"
        );
        let e = err("shfl.sync.bfly.b32 %r2, %r1, 1, 31, 0xffff;", 32);
        assert!(
            e.contains("lane 16:") && e.contains("membermask 0x0000ffff"),
            "{e}"
        );
        let e = err("vote.sync.ballot.b32 %r2, %p1, 0x7fffffff;", 32);
        assert!(
            e.contains("lane 31: vote.sync with membermask 0x7fffffff"),
            "{e}"
        );
        let e = err("bar.warp.sync 0xfffffffe;", 32);
        assert!(e.contains("lane 0: bar.warp.sync"), "{e}");
        // Lanes 16-31 named in membermask take the other path: they can never join.
        let e = err(
            "setp.ge.u32 %p1, %r1, 16;\n@%p1 bra $X;\nshfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;\n$X:",
            32,
        );
        assert!(
            e.contains("names lanes 0xffff0000, which are on another path"),
            "{e}"
        );
        // A full mask over a partial warp: lanes that do not exist are not waited for.
        ok("shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;", 16);
        ok(
            "shfl.sync.idx.b32 %r2, %r1, 3, 31, 0xffffffff;\nvote.sync.any.pred %p1, %p2, -1;\nbar.warp.sync -1;",
            32,
        );
    }

    /// PTX ISA shfl.sync: reading a register of a lane that is inactive (or whose guard is
    /// false) gives an unpredictable value.
    #[test]
    fn a_shuffle_from_a_lane_that_does_not_execute_is_refused() {
        // 16 threads: lanes 16-31 do not exist; bfly 16 reads them.
        let e = err("shfl.sync.bfly.b32 %r2, %r1, 16, 31, 0xffff;", 16);
        assert!(
            e.contains("lane 0: shfl.sync reads lane 16, which does not execute it (exited or not in the block)"),
            "{e}"
        );
        let e = err(
            "setp.lt.u32 %p1, %r1, 16;\n@%p1 shfl.sync.idx.b32 %r2, %r1, 20, 31, -1;",
            32,
        );
        assert!(
            e.contains("reads lane 20") && e.contains("its guard is false"),
            "{e}"
        );
    }

    /// PTX ISA cvta: undefined when the address is not in the state space's window.
    #[test]
    fn cvta_to_a_space_outside_its_window_is_refused() {
        let e = err("cvta.to.shared.u64 %rd2, %rd1;", 32);
        assert!(
            e.contains("line 13: lane 0: cvta.to.shared of 0x10000000000, which is not a generic shared address"),
            "{e}"
        );
        let e = err("cvta.to.local.u64 %rd2, %rd1;", 32);
        assert!(e.contains("cvta.to.local of 0x10000000000"), "{e}");
        ok(
            "mov.u64 %rd4, s;\ncvta.shared.u64 %rd2, %rd4;\ncvta.to.shared.u64 %rd3, %rd2;\nld.shared.u32 %r2, [%rd3];",
            32,
        );
    }

    /// PTX ISA barrier: sixteen barriers 0..=15, a thread count a multiple of the warp size;
    /// bar.sync is .aligned (the whole warp); mma.sync is .aligned (all 32 lanes).
    #[test]
    fn barriers_and_aligned_instructions_outside_their_rules_are_refused() {
        let e = err("bar.sync 16;", 32);
        assert!(
            e.contains("barrier 16") && e.contains("0 through 15"),
            "{e}"
        );
        let e = err("bar.sync 0, 48;", 64);
        assert!(
            e.contains("bar.sync 0, 48") && e.contains("multiple of the warp size"),
            "{e}"
        );
        let e = err(
            "setp.lt.u32 %p1, %r1, 8;\n@%p1 bra $X;\nbar.sync 0;\n$X:",
            32,
        );
        assert!(e.contains("bar.sync reached by lanes 0xffffff00"), "{e}");
        let e = err(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r2, %r3, %r4, %r5}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r2, %r3, %r4, %r5};",
            16,
        );
        assert!(e.contains("mma.sync needs all 32 lanes"), "{e}");
        let e = err("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r2}, [s];", 16);
        assert!(e.contains("all 32 lanes must be active"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

        /// Any byte offset and access width of ld.global (scalar or vector): refused iff the
        /// offset is not a multiple of the access size (PTX ISA §6.4.1).
        #[test]
        fn a_global_load_is_refused_iff_misaligned(
            off in 0u32..64,
            (ty, bytes) in prop::sample::select(vec![("u8", 1u32), ("u16", 2), ("u32", 4), ("u64", 8)]),
            vec in prop::sample::select(vec![1u32, 2, 4]),
        ) {
            // .v4 of 64-bit elements is not sm_90 PTX.
            let vec = if bytes == 8 { vec.min(2) } else { vec };
            let dst = if ty == "u64" { "%rd" } else { "%r" };
            let regs: Vec<String> = (0..vec).map(|i| format!("{dst}{}", i + 2)).collect();
            let (v, d) = if vec == 1 {
                (String::new(), regs[0].clone())
            } else {
                (format!(".v{vec}"), format!("{{{}}}", regs.join(", ")))
            };
            let body = format!("ld.global{v}.{ty} {d}, [%rd1+{off}];");
            let src = format!("{HEAD}{}", kernel(&body));
            let r = tilelab::ptx::simulate(&src, None, &launch([1, 1, 1], [32, 1, 1]));
            let size = bytes * vec;
            match r {
                Ok(_) => prop_assert!(off % size == 0, "{body} ran"),
                Err(e) => {
                    let e = e.to_string();
                    prop_assert!(off % size != 0, "{body}: {e}");
                    prop_assert!(e.contains(&format!("not aligned to {size} bytes")), "{}", e);
                }
            }
        }
    }
}
