//! A simulated shared-memory byte array, for executing `ldmatrix` (and filling tiles) on the CPU.

use super::bank::SharedMemoryConfig;
use super::error::SimError;

/// Shared memory as bytes, little-endian like the GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedMemory {
    bytes: Vec<u8>,
}

impl SharedMemory {
    /// `size_bytes` zeroed bytes.
    pub fn zeroed(size_bytes: u32) -> Self {
        SharedMemory {
            bytes: vec![0; size_bytes as usize],
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

    fn check(&self, offset: u32, width: u32) -> Result<usize, SimError> {
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
            let cfg = SharedMemoryConfig::default();
            return Err(SimError::OutOfRange {
                lane: 0,
                offset: offset as u64,
                end,
                limit: self.len(),
                arch: format!("simulated array ({} max on {})", cfg.size_bytes, cfg.arch),
                max: (self.len().saturating_sub(width)) as u64,
            });
        }
        Ok(offset as usize)
    }

    /// Reads the 16-bit value at a 2-byte aligned byte offset.
    ///
    /// # Errors
    /// Misaligned or out-of-range offsets.
    pub fn read_u16(&self, offset: u32) -> Result<u16, SimError> {
        let o = self.check(offset, 2)?;
        Ok(u16::from_le_bytes([self.bytes[o], self.bytes[o + 1]]))
    }

    /// Writes a 16-bit value at a 2-byte aligned byte offset.
    ///
    /// # Errors
    /// Misaligned or out-of-range offsets.
    pub fn write_u16(&mut self, offset: u32, v: u16) -> Result<(), SimError> {
        let o = self.check(offset, 2)?;
        self.bytes[o..o + 2].copy_from_slice(&v.to_le_bytes());
        Ok(())
    }
}
