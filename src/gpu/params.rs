//! Kernel parameters packed the way a PTX `.entry` declares them, for launching a kernel by name
//! with raw parameters ([`super::launch::PtxKernel`], `tilelab verify --ptx`). The values of
//! `--arg NAME=TYPE:V` are read by [`crate::ptx::params::encode_arg`], the declarations by the
//! one PTX parser ([`entry_param_sizes`]).
//!
//! Layout (PTX ISA, "Kernel Function Parameters" in the `.param` state space section, and the
//! CUDA driver API's `cuLaunchKernel`, `CU_LAUNCH_PARAM_BUFFER_POINTER`): parameters follow one
//! another in declaration order, each at the next offset that is a multiple of its alignment
//! (its size for scalars, or the `.align` of a `.b8` array); values are little-endian. A device
//! pointer is a `u64` (`.param .u64`).
//!
//! ```
//! use tilelab::gpu::params::{Param, ParamBuffer};
//! let mut p = ParamBuffer::new();
//! p.push(Param::U64(0x7f00_0000_1000)).push(Param::S32(-1)).push(Param::F32(0.5));
//! assert_eq!(p.offsets(), &[0, 8, 12]);
//! assert_eq!(p.size_bytes(), 16);
//! ```

use std::fmt;

/// One scalar kernel parameter (the PTX `.param` types tilelab passes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Param {
    /// `.param .u8` / `.b8` / `.s8` (as bits).
    U8(u8),
    /// `.param .u16` / `.b16`.
    U16(u16),
    /// `.param .u32` / `.b32`.
    U32(u32),
    /// `.param .s32`.
    S32(i32),
    /// `.param .u64` / `.b64`, and device pointers.
    U64(u64),
    /// `.param .s64`.
    S64(i64),
    /// `.param .f32`.
    F32(f32),
    /// `.param .f64`.
    F64(f64),
}

impl Param {
    /// Size in bytes (also the alignment in bytes).
    pub fn size_bytes(self) -> usize {
        match self {
            Param::U8(_) => 1,
            Param::U16(_) => 2,
            Param::U32(_) | Param::S32(_) | Param::F32(_) => 4,
            Param::U64(_) | Param::S64(_) | Param::F64(_) => 8,
        }
    }

    /// The PTX type name (`u32`, `f32`, …) of the variant.
    pub fn type_name(self) -> &'static str {
        match self {
            Param::U8(_) => "u8",
            Param::U16(_) => "u16",
            Param::U32(_) => "u32",
            Param::S32(_) => "s32",
            Param::U64(_) => "u64",
            Param::S64(_) => "s64",
            Param::F32(_) => "f32",
            Param::F64(_) => "f64",
        }
    }

    /// The little-endian bytes of the value.
    pub fn to_le_bytes(self) -> Vec<u8> {
        match self {
            Param::U8(v) => vec![v],
            Param::U16(v) => v.to_le_bytes().to_vec(),
            Param::U32(v) => v.to_le_bytes().to_vec(),
            Param::S32(v) => v.to_le_bytes().to_vec(),
            Param::U64(v) => v.to_le_bytes().to_vec(),
            Param::S64(v) => v.to_le_bytes().to_vec(),
            Param::F32(v) => v.to_le_bytes().to_vec(),
            Param::F64(v) => v.to_le_bytes().to_vec(),
        }
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Param::U8(v) => write!(f, "u8:{v}"),
            Param::U16(v) => write!(f, "u16:{v}"),
            Param::U32(v) => write!(f, "u32:{v}"),
            Param::S32(v) => write!(f, "s32:{v}"),
            Param::U64(v) => write!(f, "u64:{v:#x}"),
            Param::S64(v) => write!(f, "s64:{v}"),
            Param::F32(v) => write!(f, "f32:{v}"),
            Param::F64(v) => write!(f, "f64:{v}"),
        }
    }
}

/// Why a parameter list cannot be built or does not fit a kernel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// The kernel declares another number of parameters.
    #[error("kernel '{kernel}' takes {declared} parameters, {given} given")]
    Count {
        /// Kernel name.
        kernel: String,
        /// Parameters the `.entry` declares.
        declared: usize,
        /// Parameters given.
        given: usize,
    },
    /// The PTX has no such `.entry`, or its parameter list does not parse.
    #[error("PTX entry '{entry}': {reason}")]
    Entry {
        /// Entry name.
        entry: String,
        /// What is wrong.
        reason: String,
    },
    /// A parameter of another size than declared.
    #[error(
        "kernel '{kernel}' parameter {index} is {declared} bytes, '{given}' is {given_bytes} bytes"
    )]
    Size {
        /// Kernel name.
        kernel: String,
        /// Parameter index, 0-based.
        index: usize,
        /// Declared size, bytes.
        declared: usize,
        /// The value given.
        given: String,
        /// Its size, bytes.
        given_bytes: usize,
    },
}

/// Kernel parameters packed in declaration order (see the module docs for the layout).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamBuffer {
    bytes: Vec<u8>,
    offsets: Vec<usize>,
    params: Vec<Param>,
    /// Per parameter (scalars and byte arrays, in order): its size in bytes and how it was
    /// given (for [`ParamBuffer::check_declared`]'s messages).
    sizes: Vec<(usize, String)>,
}

impl ParamBuffer {
    /// No parameters.
    pub fn new() -> ParamBuffer {
        ParamBuffer::default()
    }

    /// Appends one parameter at the next offset aligned to its size.
    pub fn push(&mut self, p: Param) -> &mut ParamBuffer {
        let size = p.size_bytes();
        let at = self.bytes.len().next_multiple_of(size);
        self.bytes.resize(at, 0);
        self.bytes.extend(p.to_le_bytes());
        self.offsets.push(at);
        self.params.push(p);
        self.sizes.push((size, p.to_string()));
        self
    }

    /// Appends a byte-array parameter (`.param .align A .b8 name[N]`: a by-value struct, a
    /// `CUtensorMap`) at the next offset that is a multiple of `align` bytes (0 or 1: no
    /// padding); the driver copies its `bytes.len()` bytes as they are.
    ///
    /// ```
    /// use tilelab::gpu::params::{Param, ParamBuffer};
    /// let mut p = ParamBuffer::new();
    /// p.push(Param::U32(7)).push_bytes(8, &[1; 12]).push(Param::U8(2));
    /// assert_eq!(p.offsets(), &[0, 8, 20]);
    /// ```
    pub fn push_bytes(&mut self, align: usize, bytes: &[u8]) -> &mut ParamBuffer {
        let at = self.bytes.len().next_multiple_of(align.max(1));
        self.bytes.resize(at, 0);
        self.bytes.extend_from_slice(bytes);
        self.offsets.push(at);
        self.sizes
            .push((bytes.len(), format!("{} bytes", bytes.len())));
        self
    }

    /// Byte offset of each parameter.
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// The scalar parameters ([`ParamBuffer::push`]), in order (byte arrays not among them).
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// The packed buffer (what `CU_LAUNCH_PARAM_BUFFER_POINTER` takes).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Size of the packed buffer in bytes (the end of the last parameter, not rounded up).
    pub fn size_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Checks the parameters against the sizes (bytes) a kernel declares, in order.
    ///
    /// # Errors
    /// [`ParamError::Count`], [`ParamError::Size`] naming the kernel and the parameter.
    pub fn check_declared(&self, kernel: &str, declared: &[usize]) -> Result<(), ParamError> {
        if declared.len() != self.sizes.len() {
            return Err(ParamError::Count {
                kernel: kernel.to_string(),
                declared: declared.len(),
                given: self.sizes.len(),
            });
        }
        for (index, (&d, (size, given))) in declared.iter().zip(&self.sizes).enumerate() {
            if d != *size {
                return Err(ParamError::Size {
                    kernel: kernel.to_string(),
                    index,
                    declared: d,
                    given: given.clone(),
                    given_bytes: *size,
                });
            }
        }
        Ok(())
    }
}

/// The sizes (bytes) of the parameters the PTX `.entry NAME(...)` declares, in order, as the
/// one PTX parser reads them ([`crate::ptx::parse::parse`]): `.param .u32 x` is 4 bytes,
/// `.param .u64 p` (pointers too) 8, `.param .align A .b8 s[N]` N (PTX ISA, "Kernel Function
/// Parameters").
///
/// # Errors
/// [`ParamError::Entry`] when the module does not parse or has no such entry.
pub fn entry_param_sizes(ptx: &str, entry: &str) -> Result<Vec<usize>, ParamError> {
    let err = |reason: String| ParamError::Entry {
        entry: entry.to_string(),
        reason,
    };
    let module = crate::ptx::parse::parse(ptx).map_err(|e| err(e.to_string()))?;
    let k = module
        .kernels
        .iter()
        .find(|k| k.name == entry)
        .ok_or_else(|| err("no such .entry in the PTX".into()))?;
    Ok(k.params.iter().map(|p| p.size as usize).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_aligned_to_their_size() {
        // ldsm_dump(const unsigned *offs, int kind, unsigned n_b16, unsigned *out) as nvcc
        // declares it: .param .u64, .param .u32, .param .u32, .param .u64.
        let mut p = ParamBuffer::new();
        p.push(Param::U64(0x7f00_0000_1000))
            .push(Param::S32(5))
            .push(Param::U32(4096))
            .push(Param::U64(0x7f00_0000_2000));
        assert_eq!(p.offsets(), &[0, 8, 12, 16]);
        assert_eq!(p.size_bytes(), 24);
        // A byte, then a u16 (skips one byte), a u64 (skips four), an f32.
        let mut q = ParamBuffer::new();
        q.push(Param::U8(0xab))
            .push(Param::U16(0x1234))
            .push(Param::U64(1))
            .push(Param::F32(1.5));
        assert_eq!(q.offsets(), &[0, 2, 8, 16]);
        assert_eq!(
            &q.as_bytes()[..4],
            &[0xab, 0, 0x34, 0x12],
            "u16 at 2, little-endian"
        );
        // 1.5f32 = 0x3fc00000.
        assert_eq!(&q.as_bytes()[16..20], &[0, 0, 0xc0, 0x3f]);
        assert_eq!(q.size_bytes(), 20);
    }

    /// The parameter list as NVRTC 13.0 writes it for `kernels/fragments.cu` (`int` is
    /// `.u32`), and a struct parameter.
    #[test]
    fn entry_parameters_are_read_from_ptx() {
        let ptx = "//\n.version 9.0\n.target sm_90\n.address_size 64\n\n\t// .globl\tldsm_dump\n.extern .shared .align 16 .b8 sm16[];\n\n.visible .entry ldsm_dump(\n\t.param .u64 ldsm_dump_param_0,\n\t.param .u32 ldsm_dump_param_1,\n\t.param .u32 ldsm_dump_param_2,\n\t.param .u64 ldsm_dump_param_3\n)\n{\n\tret;\n}\n.visible .entry mma_dump(\n\t.param .u32 mma_dump_param_0,\n\t.param .u64 mma_dump_param_1,\n\t.param .align 8 .b8 mma_dump_param_2[24]\n)\n{\n}\n.visible .entry empty()\n{\n}\n";
        assert_eq!(entry_param_sizes(ptx, "ldsm_dump"), Ok(vec![8, 4, 4, 8]));
        assert_eq!(entry_param_sizes(ptx, "mma_dump"), Ok(vec![4, 8, 24]));
        assert_eq!(entry_param_sizes(ptx, "empty"), Ok(vec![]));
        let e = entry_param_sizes(ptx, "ldsm").unwrap_err().to_string();
        assert_eq!(e, "PTX entry 'ldsm': no such .entry in the PTX");
        let e = entry_param_sizes(
            ".version 8.0\n.target sm_90\n.entry k(.param .q32 x)\n{\nret;\n}\n",
            "k",
        )
        .unwrap_err();
        assert!(e.to_string().contains("q32"), "{e}");
    }

    /// A CuTe struct `.param .align 4 .b8 [12]` after a `u8` starts at byte 4; a
    /// `CUtensorMap` (`.align 64 .b8 [128]`) after it at 64; the bytes are copied as given.
    #[test]
    fn byte_arrays_are_aligned_to_their_declared_alignment() {
        let mut p = ParamBuffer::new();
        let map = [0xa5u8; 128];
        p.push(Param::U8(1))
            .push_bytes(4, &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0])
            .push_bytes(64, &map)
            .push(Param::U64(9));
        assert_eq!(p.offsets(), &[0, 4, 64, 192]);
        assert_eq!(&p.as_bytes()[4..8], &[1, 0, 0, 0]);
        assert_eq!(&p.as_bytes()[64..192], &map[..]);
        assert_eq!(p.size_bytes(), 200);
        assert_eq!(p.check_declared("k", &[1, 12, 128, 8]), Ok(()));
        let e = p.check_declared("k", &[1, 16, 128, 8]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernel 'k' parameter 1 is 16 bytes, '12 bytes' is 12 bytes"
        );
    }

    #[test]
    fn declared_sizes_are_checked() {
        let mut p = ParamBuffer::new();
        p.push(Param::U64(0)).push(Param::U32(1));
        assert_eq!(p.check_declared("k", &[8, 4]), Ok(()));
        assert!(matches!(
            p.check_declared("k", &[8]),
            Err(ParamError::Count {
                declared: 1,
                given: 2,
                ..
            })
        ));
        let e = p.check_declared("k", &[8, 8]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernel 'k' parameter 1 is 8 bytes, 'u32:1' is 4 bytes"
        );
    }
}
