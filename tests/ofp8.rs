//! The FP8 inputs of `mma.sync...m16n8k32.{e4m3,e5m2}` (PTX ISA §9.7.14.5.14) against an
//! implementation that shares no code with `crates/tilelab-core/src/sim/isa/mma.rs`: every code's value and the
//! rounding of every midpoint between adjacent finite codes (and of the values just beside
//! them), from ml_dtypes' `float8_e4m3fn` / `float8_e5m2`, the OCP OFP8 rev. 1.0 formats
//! (`tests/data/ofp8_codes.json`, written by `scripts/gen_ofp8_table.py`).

use serde_json::Value;
use tilelab::sim::mma::MmaDtype;

fn table() -> Value {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ofp8_codes.json");
    serde_json::from_str(&std::fs::read_to_string(p).expect("ofp8_codes.json")).expect("JSON")
}

fn value(v: &Value) -> f64 {
    match v.as_str().expect("value string") {
        "nan" => f64::NAN,
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        s => s.parse().expect("number"),
    }
}

fn types() -> [(&'static str, MmaDtype); 2] {
    [("e4m3", MmaDtype::E4m3), ("e5m2", MmaDtype::E5m2)]
}

#[test]
fn every_fp8_code_decodes_to_its_ocp_value() {
    let t = table();
    for (name, dtype) in types() {
        let codes = t[name]["decode"].as_array().unwrap();
        assert_eq!(codes.len(), 256);
        for (code, want) in codes.iter().enumerate() {
            let want = value(want);
            for got in [
                dtype.decode(code as u32),
                dtype.from_bits(code as u16) as f64,
                // Bits above the low 8 are not part of the element.
                dtype.decode(code as u32 | 0xab00),
            ] {
                if want.is_nan() {
                    assert!(got.is_nan(), "{name} {code:#04x}: {got}, want NaN");
                } else {
                    // Bit-equal: the sign of zero counts.
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "{name} {code:#04x}: {got}, want {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn fp8_rounding_is_to_nearest_even_at_every_midpoint() {
    let t = table();
    for (name, dtype) in types() {
        let probes = t[name]["encode"].as_array().unwrap();
        assert!(probes.len() > 700, "{name}: {} probes", probes.len());
        for p in probes {
            let v = value(&p[0]);
            let want = p[1].as_u64().unwrap() as u32;
            assert_eq!(dtype.encode(v), want, "{name} encode({v})");
            assert_eq!(dtype.to_bits(v as f32) as u32, want, "{name} to_bits({v})");
        }
    }
}
