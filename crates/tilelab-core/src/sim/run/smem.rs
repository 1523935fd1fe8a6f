//! A simulated shared-memory byte array: what [`crate::sim::exec::execute`] reads and writes.
//!
//! Little-endian like the GPU. Every typed access checks natural alignment (PTX requires it:
//! PTX ISA §6.4.1 "Addresses as Operands") and that the whole access lies inside the array,
//! with arithmetic that cannot wrap.

use crate::sim::arch::Arch;
use crate::sim::bank::SharedMemoryConfig;
use crate::sim::error::SimError;

/// Shared memory as bytes, little-endian like the GPU, with the architecture whose limits it
/// models (for error messages and [`Self::config`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedMemory {
    bytes: Vec<u8>,
    arch: Arch,
}

/// Generates a checked typed read and write of one little-endian integer type.
macro_rules! typed_access {
    ($read:ident, $write:ident, $t:ty, $n:literal) => {
        #[doc = concat!("Reads the ", stringify!($n), "-byte little-endian value at byte `offset`.")]
        ///
        /// # Errors
        /// [`SimError::Misaligned`] unless `offset` is a multiple of the size;
        /// [`SimError::OutOfRange`] unless the whole value lies inside the array.
        pub fn $read(&self, offset: u32) -> Result<$t, SimError> {
            let r = self.range(offset, $n)?;
            let mut b = [0u8; $n];
            b.copy_from_slice(&self.bytes[r]);
            Ok(<$t>::from_le_bytes(b))
        }

        #[doc = concat!("Writes a ", stringify!($n), "-byte little-endian value at byte `offset`.")]
        ///
        /// # Errors
        /// As the read of the same width.
        pub fn $write(&mut self, offset: u32, v: $t) -> Result<(), SimError> {
            let r = self.range(offset, $n)?;
            self.bytes[r].copy_from_slice(&v.to_le_bytes());
            Ok(())
        }
    };
}

impl SharedMemory {
    /// `size_bytes` zeroed bytes, modelling sm_90.
    pub fn zeroed(size_bytes: u32) -> Self {
        SharedMemory {
            bytes: vec![0; size_bytes as usize],
            arch: Arch::Sm90,
        }
    }

    /// The largest shared memory one block may use on `arch` (227 KiB on sm_90), zeroed.
    pub fn for_arch(arch: Arch) -> Self {
        SharedMemory {
            bytes: vec![0; arch.limits().smem_per_block_bytes as usize],
            arch,
        }
    }

    /// Filled with b16 index values: the 16-bit word at byte offset `2i` holds `i as u16`
    /// (CuTe's `ldsm.cu` convention, so every loaded value names its own address).
    pub fn with_b16_indices(size_bytes: u32) -> Self {
        let mut s = Self::zeroed(size_bytes);
        for (i, ch) in s.bytes.chunks_exact_mut(2).enumerate() {
            ch.copy_from_slice(&(i as u16).to_le_bytes());
        }
        s
    }

    /// Size in bytes.
    pub fn len(&self) -> u32 {
        self.bytes.len() as u32
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The raw bytes, writable (to fill tiles).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    /// The size and architecture requests are validated against
    /// ([`crate::sim::bank::WarpRequest::validate`]).
    pub fn config(&self) -> SharedMemoryConfig {
        SharedMemoryConfig {
            arch: self.arch,
            size_bytes: self.len(),
        }
    }

    /// The byte range of a `width`-byte access at `offset`, checked for alignment and range.
    fn range(&self, offset: u32, width: u32) -> Result<std::ops::Range<usize>, SimError> {
        if !offset.is_multiple_of(width) {
            return Err(SimError::Misaligned {
                lane: 0,
                offset: offset as u64,
                align: width,
                instruction: format!("a {width}-byte access"),
            });
        }
        let end = offset as u64 + width as u64;
        if end > self.bytes.len() as u64 {
            let cfg = SharedMemoryConfig::for_arch(self.arch);
            return Err(SimError::OutOfRange {
                lane: 0,
                offset: offset as u64,
                end,
                limit: self.len(),
                arch: format!("simulated array ({} max on {})", cfg.size_bytes, cfg.arch),
                max: self.len().saturating_sub(width) as u64,
            });
        }
        Ok(offset as usize..end as usize)
    }

    typed_access!(read_u8, write_u8, u8, 1);
    typed_access!(read_u16, write_u16, u16, 2);
    typed_access!(read_u32, write_u32, u32, 4);
    typed_access!(read_u64, write_u64, u64, 8);
    typed_access!(read_u128, write_u128, u128, 16);

    /// `len` (1..=4) bytes at `offset` as a little-endian `u32`, for the executor after it has
    /// validated the request (so the range is known to be inside the array).
    pub(crate) fn load_le(&self, offset: u32, len: usize) -> u32 {
        let o = offset as usize;
        // The usual widths as fixed-size loads (a copy of `len` bytes is a `memcpy` call).
        match len {
            4 => {
                let w: [u8; 4] = self.bytes[o..o + 4].try_into().unwrap_or([0; 4]);
                return u32::from_le_bytes(w);
            }
            2 => {
                let w: [u8; 2] = self.bytes[o..o + 2].try_into().unwrap_or([0; 2]);
                return u32::from(u16::from_le_bytes(w));
            }
            _ => {}
        }
        let mut b = [0u8; 4];
        b[..len].copy_from_slice(&self.bytes[o..o + len]);
        u32::from_le_bytes(b)
    }

    /// The eight little-endian b16 elements of the 16 bytes at `offset` (an ldmatrix row), for
    /// the executor after it has validated the request; zeros outside the array.
    pub(crate) fn load_row16(&self, offset: u32) -> [u16; 8] {
        let b = self.row_bytes(offset);
        std::array::from_fn(|i| u16::from_le_bytes([b[2 * i], b[2 * i + 1]]))
    }

    /// The 16 bytes at `offset`; zeros outside the array.
    fn row_bytes(&self, offset: u32) -> [u8; 16] {
        let o = offset as usize;
        self.bytes
            .get(o..o + 16)
            .and_then(|s| s.try_into().ok())
            .unwrap_or([0; 16])
    }

    /// The four little-endian 32-bit words of the 16 bytes at `offset` (an ldmatrix row as
    /// words: word `w` holds b16 elements `2w` (low half) and `2w + 1`), for the executor after
    /// it has validated the request; zeros outside the array.
    pub(crate) fn load_row32(&self, offset: u32) -> [u32; 4] {
        let b = self.row_bytes(offset);
        std::array::from_fn(|i| {
            u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
        })
    }

    /// Writes `data` at `offset`, for the executor after it has validated the request (so the
    /// range is known to be inside the array).
    pub(crate) fn store_bytes(&mut self, offset: u32, data: &[u8]) {
        let o = offset as usize;
        // The usual widths as fixed-size copies (a copy of `len` bytes is a `memcpy` call).
        match data.len() {
            16 => self.bytes[o..o + 16].copy_from_slice(&data[..16]),
            8 => self.bytes[o..o + 8].copy_from_slice(&data[..8]),
            4 => self.bytes[o..o + 4].copy_from_slice(&data[..4]),
            n => self.bytes[o..o + n].copy_from_slice(data),
        }
    }

    /// Writes the low `len` (1..=4) bytes of `v` at `offset`, little-endian; the executor's
    /// counterpart of [`Self::load_le`].
    pub(crate) fn store_le(&mut self, offset: u32, len: usize, v: u32) {
        let o = offset as usize;
        self.bytes[o..o + len].copy_from_slice(&v.to_le_bytes()[..len]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sizes: empty only at 0 bytes; sm_90's per-block array is 227 KiB = 232,448 bytes.
    #[test]
    fn sizes() {
        assert!(SharedMemory::zeroed(0).is_empty());
        let m = SharedMemory::zeroed(2);
        assert!(!m.is_empty() && m.len() == 2);
        assert_eq!(SharedMemory::for_arch(Arch::Sm90).len(), 232_448);
    }

    #[test]
    fn typed_reads_are_little_endian() {
        let mut m = SharedMemory::zeroed(64);
        for (i, b) in m.bytes_mut().iter_mut().enumerate() {
            *b = i as u8;
        }
        assert_eq!(m.read_u8(5).unwrap(), 5);
        assert_eq!(m.read_u16(6).unwrap(), 0x0706);
        assert_eq!(m.read_u32(8).unwrap(), 0x0b0a_0908);
        assert_eq!(m.read_u64(16).unwrap(), 0x1716_1514_1312_1110);
        assert_eq!(
            m.read_u128(32).unwrap(),
            0x2f2e_2d2c_2b2a_2928_2726_2524_2322_2120
        );
        m.write_u32(4, 0xdead_beef).unwrap();
        assert_eq!(&m.bytes()[4..8], &[0xef, 0xbe, 0xad, 0xde]);
        m.write_u128(48, u128::MAX).unwrap();
        assert!(m.bytes()[48..64].iter().all(|&b| b == 0xff));
    }

    #[test]
    fn misaligned_and_out_of_range_are_errors() {
        let mut m = SharedMemory::zeroed(64);
        assert!(matches!(
            m.read_u32(2),
            Err(SimError::Misaligned {
                offset: 2,
                align: 4,
                ..
            })
        ));
        assert!(matches!(
            m.read_u128(64),
            Err(SimError::OutOfRange {
                offset: 64,
                end: 80,
                max: 48,
                ..
            })
        ));
        // The end is computed without wrapping.
        assert!(matches!(
            m.write_u64(u32::MAX - 7, 1),
            Err(SimError::OutOfRange { .. })
        ));
        assert_eq!(m.read_u8(63).unwrap(), 0);
    }
}
