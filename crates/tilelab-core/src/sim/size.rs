//! The one spelling of a byte size, for every flag and lesson field that takes one
//! (`--dynamic-smem`, `--smem`, `--base`, `--pointer-bytes`, `--width`, `--elem-bytes`, a
//! lesson's `smem_bytes`): a whole number of bytes, or of kibibytes or mebibytes.
//!
//! * `32768`, `32768B`: bytes;
//! * `32K`, `32KB`, `32KiB`: 1024 bytes each (as the CUDA guide's "48 KB" means);
//! * `2M`, `2MB`, `2MiB`: 1024 × 1024 bytes each;
//! * a decimal fraction whose bytes are whole (`1.5K` = 1536), a space before the unit, any case.
//!
//! The arithmetic is exact (integers, checked): `0.3` is not a whole number of bytes, and a
//! value past the flag's maximum is "too large", never wrapped or rounded.

/// The accepted forms, as errors list them.
pub const FORMS: &str = "a whole number of bytes (32768 or 32768B), or of K, KB, KiB (1024 bytes: 32K, 32KB, 1.5KiB) or M, MB, MiB (1024 KiB: 2M)";

/// Why [`parse_bytes`] refused a size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Not a number with an optional unit.
    #[error("not a size; allowed: {FORMS}")]
    Malformed,
    /// A fraction of a byte (`0.3`, `1.0001K`).
    #[error("not a whole number of bytes; allowed: {FORMS}")]
    Fraction,
    /// More bytes than the flag allows.
    #[error("too large: at most {} bytes", crate::text::group(*max))]
    TooLarge {
        /// The most bytes allowed.
        max: u64,
    },
}

/// The bytes `s` spells ([`FORMS`]), at most `max`.
///
/// ```
/// use tilelab_core::sim::size::{parse_bytes, SizeError};
/// assert_eq!(parse_bytes("16KB", u64::MAX), Ok(16384));
/// assert_eq!(parse_bytes("1.5 KiB", u64::MAX), Ok(1536));
/// assert_eq!(parse_bytes("2M", u64::MAX), Ok(2 << 20));
/// assert_eq!(parse_bytes("0.3", u64::MAX), Err(SizeError::Fraction));
/// assert_eq!(parse_bytes("5G", u64::MAX), Err(SizeError::Malformed));
/// assert_eq!(parse_bytes("4096M", u32::MAX as u64), Err(SizeError::TooLarge { max: u32::MAX as u64 }));
/// ```
///
/// # Errors
/// [`SizeError`]: a malformed size, a fraction of a byte, or more than `max` bytes.
pub fn parse_bytes(s: &str, max: u64) -> Result<u64, SizeError> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: u128 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        _ => return Err(SizeError::Malformed),
    };
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(frac) || (num.contains('.') && frac.is_empty())
    {
        return Err(SizeError::Malformed);
    }
    let too_large = SizeError::TooLarge { max };
    // Leading zeros do not change the value; a whole part of more than 39 digits cannot fit.
    let whole = whole.trim_start_matches('0');
    let w: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| too_large.clone())?
    };
    let mut bytes = w.checked_mul(mult).ok_or(too_large.clone())?;
    let frac = frac.trim_end_matches('0');
    if !frac.is_empty() {
        // frac / 10^n of a unit must be whole bytes: n ≤ 20 digits, or it is not (mult < 10^7).
        if frac.len() > 20 {
            return Err(SizeError::Fraction);
        }
        let f: u128 = frac.parse().map_err(|_| SizeError::Malformed)?;
        let scale = 10u128.pow(frac.len() as u32);
        let part = f * mult;
        if !part.is_multiple_of(scale) {
            return Err(SizeError::Fraction);
        }
        bytes = bytes.checked_add(part / scale).ok_or(too_large.clone())?;
    }
    if bytes > max as u128 {
        return Err(too_large);
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_spelling() {
        for (s, want) in [
            ("0", 0),
            ("28672", 28672),
            ("28672B", 28672),
            ("28672 b", 28672),
            ("28K", 28672),
            ("28k", 28672),
            ("28KB", 28672),
            ("28 KiB", 28672),
            ("28kib", 28672),
            ("1.5K", 1536),
            ("1.50K", 1536),
            ("0.25KB", 256),
            ("2M", 2_097_152),
            ("2MB", 2_097_152),
            ("2MiB", 2_097_152),
            ("0.5M", 524_288),
            ("  16KB ", 16384),
            ("007", 7),
        ] {
            assert_eq!(parse_bytes(s, u64::MAX), Ok(want), "{s}");
        }
    }

    #[test]
    fn refusals_say_why() {
        for s in [
            "", "K", "lots", "1e9", "-1", "+1", "1.", ".5K", "1..5", "16KX", "16 K B", "16G",
            "0x10", "1_000",
        ] {
            assert_eq!(parse_bytes(s, u64::MAX), Err(SizeError::Malformed), "{s:?}");
        }
        for s in ["0.3", "1.0001K", "0.000001M", "1.123456789012345678901K"] {
            assert_eq!(parse_bytes(s, u64::MAX), Err(SizeError::Fraction), "{s:?}");
        }
        let max = 232_448;
        assert_eq!(parse_bytes("227K", max), Ok(232_448));
        assert_eq!(parse_bytes("232449", max), Err(SizeError::TooLarge { max }));
        let huge = "9".repeat(60);
        assert_eq!(parse_bytes(&huge, max), Err(SizeError::TooLarge { max }));
        assert_eq!(
            parse_bytes(&format!("{huge}M"), u64::MAX),
            Err(SizeError::TooLarge { max: u64::MAX })
        );
        assert_eq!(
            parse_bytes("18446744073709551616", u64::MAX),
            Err(SizeError::TooLarge { max: u64::MAX })
        );
        assert_eq!(
            parse_bytes("232449", max).unwrap_err().to_string(),
            "too large: at most 232,448 bytes"
        );
    }
}
