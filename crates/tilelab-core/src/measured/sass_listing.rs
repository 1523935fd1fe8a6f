//! SASS mnemonic counts from `cuobjdump -sass` (or `nvdisasm`) output (pure; running
//! `cuobjdump` is `gpu::sass`).

use std::collections::BTreeMap;

/// SASS mnemonic counts per kernel function: `listing[function][mnemonic]`.
pub type Listing = BTreeMap<String, BTreeMap<String, u32>>;

/// How many `mnemonic` instructions `function` has in `listing` (0 when either is absent).
pub fn count(listing: &Listing, function: &str, mnemonic: &str) -> u32 {
    listing
        .get(function)
        .and_then(|m| m.get(mnemonic))
        .copied()
        .unwrap_or(0)
}

/// Counts the full mnemonic (opcode with its modifiers, e.g. `LDSM.16.MT88.4`, `HMMA.16816.F32`,
/// `LDS.128`) of every instruction line, per kernel function. Lines look like
/// `        /*0320*/                   LDS.128 R4, [R3+UR4] ;   /* 0x… */`, optionally predicated
/// (`@P0 LDS ...`); functions start with `Function : name`.
pub fn count_mnemonics(text: &str) -> Listing {
    let mut out: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    let mut func = String::from("?");
    for line in text.lines() {
        let t = line.trim();
        if let Some(f) = t.strip_prefix("Function : ") {
            func = f.trim().to_string();
            continue;
        }
        let Some(rest) = t.strip_prefix("/*") else {
            continue;
        };
        let Some((addr, body)) = rest.split_once("*/") else {
            continue;
        };
        if !addr.chars().all(|c| c.is_ascii_hexdigit()) {
            continue;
        }
        let mut words = body.split_whitespace();
        let mut op = match words.next() {
            Some(w) => w,
            None => continue,
        };
        if op.starts_with('@') {
            op = match words.next() {
                Some(w) => w,
                None => continue,
            };
        }
        let op = op.trim_end_matches(';');
        if op.is_empty() || !op.chars().next().unwrap().is_ascii_uppercase() {
            continue;
        }
        *out.entry(func.clone())
            .or_default()
            .entry(op.to_string())
            .or_default() += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_probe_listing() {
        let text = "\tFunction : smem_probe\n        /*0320*/                   LDS.128 R4, [R3+UR4] ;                     /* 0x0000000403047984 */\n        /*0810*/                   LDSM.16.MT88.4 R4, [R3+UR4] ;              /* 0x000000040304783b */\n        /*0820*/               @P0 LDSM.16.MT88.4 R4, [R3+UR4] ;              /* 0x000000040304783b */\n                                                                                 /* 0x000fe20000000f00 */\n";
        let c = count_mnemonics(text);
        assert_eq!(c["smem_probe"]["LDS.128"], 1);
        assert_eq!(c["smem_probe"]["LDSM.16.MT88.4"], 2);
    }
}
