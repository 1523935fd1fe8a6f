//! Reading the launch a PTX fixture's measurement file records (`tests/data/ptx/*.json`, format
//! in `tests/data/ptx/README.md`).

use serde_json::Value;

/// The folder of the PTX fixtures and their launch files.
pub const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx");

/// A `[x, y, z]` grid or block of the launch file.
pub fn dim(v: &Value) -> [u32; 3] {
    std::array::from_fn(|i| v[i].as_u64().and_then(|x| u32::try_from(x).ok()).unwrap())
}

/// Every non-pointer parameter of the launch (`launch.params`) as `--arg NAME=VALUE` would give it.
pub fn args(launch: &Value) -> Vec<(String, String)> {
    launch["params"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["value"] != "pointer")
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["value"].to_string(),
            )
        })
        .collect()
}
