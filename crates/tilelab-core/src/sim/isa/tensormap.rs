//! Tensor maps made or changed by the kernel itself: `tensormap.replace` (PTX ISA 9.7.9.26,
//! sm_90a), the instruction behind Triton's `tl.make_tensor_descriptor` and CUTLASS's grouped
//! GEMM descriptor updates.
//!
//! A `CUtensorMap` is 128 opaque bytes (CUDA driver API: "a tensor map object is an opaque
//! value"): `tensormap.replace.tile.<field>` writes one field of the object at a global or
//! shared address, `tensormap.cp_fenceproxy` copies an object from shared to global memory, and
//! a `cp.async.bulk.tensor` then names the object's address. The driver's bit layout is not
//! published, so tilelab keeps its own layout in those 128 bytes ([`MapImage`], magic
//! [`IMAGE_MAGIC`]), which only tilelab's own instructions read: every field as
//! `tensormap.replace` gives it, and which fields were written. An object that came from a
//! tensor-map parameter (tilelab's handle, [`crate::ptx::params::TENSOR_MAP_MAGIC`]) becomes an
//! image with every field set ([`MapImage::of_map`]) at its first replace.
//!
//! The values are those of the PTX ISA's `new_val` operands, as Triton 3.6 writes them for a
//! 2-D f16 descriptor (`tests/data/ptx_hopper/u2_device_desc_matmul.ptx`: rank 0x1, box_dim 64
//! and 128, global_dim M and K, global_stride K·2 bytes, element_stride 1, elemtype 0x6,
//! swizzle_mode 0x3): `.rank` is the rank minus one; `.box_dim`, `.global_dim`,
//! `.element_stride` are in elements and `.global_stride` in bytes, each for ordinal `ord`
//! (dimension `ord`; for strides dimension `ord + 1`); `.elemtype` numbers the types as
//! [`PTX_ELEMTYPES`]; `.swizzle_mode` 0..3 is none, 32B, 64B, 128B; `.interleave_layout` and
//! `.fill_mode` 0 are none and zero fill (the only ones modelled).

use crate::sim::error::SimError;
use crate::sim::tma::{MAX_RANK, TensorMap, TmaDtype, TmaSwizzle};

/// The first 8 bytes of a [`MapImage`] in memory: ASCII `tlTMIM\0\x01` (version 1).
pub const IMAGE_MAGIC: [u8; 8] = *b"tlTMIM\0\x01";

/// Bytes of a tensor-map object.
pub const MAP_BYTES: usize = 128;

/// `.elemtype` values of `tensormap.replace`, in order: the PTX ISA's numbering, which differs
/// from `CUtensorMapDataType` from 8 on (f32.ftz, f64, bf16 here; f64, bf16, f32.ftz there;
/// Triton's `TMA_DTYPE_DEVICE_TO_HOST` maps 8 -> 10, 9 -> 8, 10 -> 9).
pub const PTX_ELEMTYPES: [TmaDtype; 13] = [
    TmaDtype::U8,
    TmaDtype::U16,
    TmaDtype::U32,
    TmaDtype::S32,
    TmaDtype::U64,
    TmaDtype::S64,
    TmaDtype::F16,
    TmaDtype::F32,
    TmaDtype::F32Ftz,
    TmaDtype::F64,
    TmaDtype::Bf16,
    TmaDtype::Tf32,
    TmaDtype::Tf32Ftz,
];

/// A field `tensormap.replace.tile.<field>` writes, with its ordinal where it has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapField {
    /// `.global_address` (`.b64`): the tensor's global byte address.
    GlobalAddress,
    /// `.rank` (`.b32`): the rank minus one.
    Rank,
    /// `.box_dim` ord 0..=4 (`.b32`), elements.
    BoxDim(u8),
    /// `.global_dim` ord 0..=4 (`.b32`), elements.
    GlobalDim(u8),
    /// `.global_stride` ord 0..=3 (`.b64`): the byte stride of dimension ord + 1.
    GlobalStride(u8),
    /// `.element_stride` ord 0..=4 (`.b32`), elements.
    ElementStride(u8),
    /// `.elemtype` (`.b32`): [`PTX_ELEMTYPES`].
    ElemType,
    /// `.interleave_layout` (`.b32`).
    InterleaveLayout,
    /// `.swizzle_mode` (`.b32`).
    SwizzleMode,
    /// `.swizzle_atomicity` (`.b32`, sm_100a).
    SwizzleAtomicity,
    /// `.fill_mode` (`.b32`).
    FillMode,
}

/// Every `.field` name [`MapField::parse`] takes.
pub const FIELD_NAMES: &str = ".global_address .rank .box_dim .global_dim .global_stride .element_stride .elemtype .interleave_layout .swizzle_mode .swizzle_atomicity .fill_mode";

impl MapField {
    /// The field named `name` (without the dot), with ordinal `ord` for the four that take one.
    ///
    /// # Errors
    /// [`SimError::Invalid`]: an unknown name, an ordinal given to a field without one or
    /// missing, or out of range (0..=4; 0..=3 for `.global_stride`).
    pub fn parse(name: &str, ord: Option<u32>) -> Result<MapField, SimError> {
        let with_ord = |max: u32, f: fn(u8) -> MapField| match ord {
            Some(o) if o <= max => Ok(f(o as u8)),
            Some(o) => Err(SimError::Invalid(format!(
                "tensormap.replace .{name} ordinal {o} is not allowed; allowed: 0..={max}"
            ))),
            None => Err(SimError::Invalid(format!(
                "tensormap.replace .{name} takes an ordinal operand (0..={max}) before the new value"
            ))),
        };
        let plain = |f: MapField| match ord {
            None => Ok(f),
            Some(_) => Err(SimError::Invalid(format!(
                "tensormap.replace .{name} takes no ordinal: [addr], new_val"
            ))),
        };
        match name {
            "global_address" => plain(MapField::GlobalAddress),
            "rank" => plain(MapField::Rank),
            "box_dim" => with_ord(4, MapField::BoxDim),
            "global_dim" => with_ord(4, MapField::GlobalDim),
            "global_stride" => with_ord(3, MapField::GlobalStride),
            "element_stride" => with_ord(4, MapField::ElementStride),
            "elemtype" => plain(MapField::ElemType),
            "interleave_layout" => plain(MapField::InterleaveLayout),
            "swizzle_mode" => plain(MapField::SwizzleMode),
            "swizzle_atomicity" => plain(MapField::SwizzleAtomicity),
            "fill_mode" => plain(MapField::FillMode),
            _ => Err(SimError::Invalid(format!(
                "tensormap.replace field '.{name}' is not a PTX field; allowed: {FIELD_NAMES}"
            ))),
        }
    }

    /// Whether the field's `new_val` is `.b64` (the global address and strides) rather than
    /// `.b32`.
    pub fn is_b64(self) -> bool {
        matches!(self, MapField::GlobalAddress | MapField::GlobalStride(_))
    }

    /// Its bit in [`MapImage::set`].
    fn bit(self) -> u32 {
        match self {
            MapField::GlobalAddress => 0,
            MapField::Rank => 1,
            MapField::ElemType => 2,
            MapField::InterleaveLayout => 3,
            MapField::SwizzleMode => 4,
            MapField::SwizzleAtomicity => 5,
            MapField::FillMode => 6,
            MapField::GlobalDim(o) => 7 + u32::from(o),
            MapField::BoxDim(o) => 12 + u32::from(o),
            MapField::GlobalStride(o) => 17 + u32::from(o),
            MapField::ElementStride(o) => 21 + u32::from(o),
        }
    }

    /// The PTX spelling, with its ordinal (`.box_dim ord 1`).
    fn describe(self) -> String {
        match self {
            MapField::GlobalAddress => ".global_address".into(),
            MapField::Rank => ".rank".into(),
            MapField::BoxDim(o) => format!(".box_dim ordinal {o}"),
            MapField::GlobalDim(o) => format!(".global_dim ordinal {o}"),
            MapField::GlobalStride(o) => format!(".global_stride ordinal {o}"),
            MapField::ElementStride(o) => format!(".element_stride ordinal {o}"),
            MapField::ElemType => ".elemtype".into(),
            MapField::InterleaveLayout => ".interleave_layout".into(),
            MapField::SwizzleMode => ".swizzle_mode".into(),
            MapField::SwizzleAtomicity => ".swizzle_atomicity".into(),
            MapField::FillMode => ".fill_mode".into(),
        }
    }
}

/// A tensor-map object as tilelab keeps it in its 128 bytes (see the module docs): the fields
/// as `tensormap.replace` writes them, and which were written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MapImage {
    /// `.global_address`: the tensor's global byte address.
    pub global_address: u64,
    /// `.rank`: rank - 1.
    pub rank: u32,
    /// `.elemtype` ([`PTX_ELEMTYPES`]).
    pub elemtype: u32,
    /// `.interleave_layout`.
    pub interleave: u32,
    /// `.swizzle_mode`.
    pub swizzle: u32,
    /// `.swizzle_atomicity`.
    pub swizzle_atomicity: u32,
    /// `.fill_mode`.
    pub fill_mode: u32,
    /// `.global_dim`, elements.
    pub global_dim: [u32; MAX_RANK],
    /// `.box_dim`, elements.
    pub box_dim: [u32; MAX_RANK],
    /// `.global_stride`, bytes (dimensions 1..).
    pub global_stride: [u64; MAX_RANK - 1],
    /// `.element_stride`, elements.
    pub element_stride: [u32; MAX_RANK],
    /// Which fields were written (bit per field and ordinal).
    pub set: u32,
}

/// Byte offsets of [`MapImage`]'s fields in its 128 bytes, after the 8-byte magic: the address
/// (u64), rank, elemtype, interleave, swizzle, atomicity and fill (u32 each), the global and box
/// dims (u32 x 5 each), the strides (u64 x 4), the element strides (u16 x 5, saturated: a value
/// above 65535 is refused as 65535) and the written-field bits (u32).
const AT_ADDRESS: usize = 8;
const AT_SMALL: usize = 16;
const AT_GDIM: usize = 40;
const AT_BOX: usize = 60;
const AT_STRIDE: usize = 80;
const AT_ESTRIDE: usize = 112;
const AT_SET: usize = 124;

impl MapImage {
    /// The image of a map given as a tensor-map parameter (`base`: its tensor's global
    /// address): every field set.
    pub fn of_map(map: &TensorMap, base: u64) -> MapImage {
        let mut m = MapImage {
            global_address: base,
            rank: map.rank as u32 - 1,
            elemtype: PTX_ELEMTYPES
                .iter()
                .position(|&d| d == map.dtype)
                .unwrap_or(0) as u32,
            swizzle: map.swizzle.bits(),
            set: u32::MAX,
            ..MapImage::default()
        };
        for d in 0..map.rank {
            // globalDim is at most 2^32, which `.global_dim`'s .b32 cannot hold: keep the
            // largest value it can (only a map of 2^32 elements in one dimension differs).
            m.global_dim[d] = u32::try_from(map.dims[d]).unwrap_or(u32::MAX);
            m.box_dim[d] = map.box_dims[d];
            m.element_stride[d] = map.elem_strides[d];
            if d > 0 {
                m.global_stride[d - 1] = map.strides[d];
            }
        }
        m
    }

    /// The image in `bytes`, or `None` when they do not start with [`IMAGE_MAGIC`].
    pub fn from_bytes(bytes: &[u8; MAP_BYTES]) -> Option<MapImage> {
        if bytes[..8] != IMAGE_MAGIC {
            return None;
        }
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
        let mut m = MapImage {
            global_address: u64_at(AT_ADDRESS),
            rank: u32_at(AT_SMALL),
            elemtype: u32_at(AT_SMALL + 4),
            interleave: u32_at(AT_SMALL + 8),
            swizzle: u32_at(AT_SMALL + 12),
            swizzle_atomicity: u32_at(AT_SMALL + 16),
            fill_mode: u32_at(AT_SMALL + 20),
            set: u32_at(AT_SET),
            ..MapImage::default()
        };
        for d in 0..MAX_RANK {
            m.global_dim[d] = u32_at(AT_GDIM + 4 * d);
            m.box_dim[d] = u32_at(AT_BOX + 4 * d);
            m.element_stride[d] = u32::from(u16::from_le_bytes(
                bytes[AT_ESTRIDE + 2 * d..AT_ESTRIDE + 2 * d + 2]
                    .try_into()
                    .unwrap(),
            ));
        }
        for d in 0..MAX_RANK - 1 {
            m.global_stride[d] = u64_at(AT_STRIDE + 8 * d);
        }
        Some(m)
    }

    /// The 128 bytes of the image (magic first).
    pub fn to_bytes(&self) -> [u8; MAP_BYTES] {
        let mut b = [0u8; MAP_BYTES];
        b[..8].copy_from_slice(&IMAGE_MAGIC);
        let mut put = |o: usize, v: &[u8]| b[o..o + v.len()].copy_from_slice(v);
        put(AT_ADDRESS, &self.global_address.to_le_bytes());
        for (i, v) in [
            self.rank,
            self.elemtype,
            self.interleave,
            self.swizzle,
            self.swizzle_atomicity,
            self.fill_mode,
        ]
        .into_iter()
        .enumerate()
        {
            put(AT_SMALL + 4 * i, &v.to_le_bytes());
        }
        for d in 0..MAX_RANK {
            put(AT_GDIM + 4 * d, &self.global_dim[d].to_le_bytes());
            put(AT_BOX + 4 * d, &self.box_dim[d].to_le_bytes());
            let es = u16::try_from(self.element_stride[d]).unwrap_or(u16::MAX);
            put(AT_ESTRIDE + 2 * d, &es.to_le_bytes());
        }
        for d in 0..MAX_RANK - 1 {
            put(AT_STRIDE + 8 * d, &self.global_stride[d].to_le_bytes());
        }
        put(AT_SET, &self.set.to_le_bytes());
        b
    }

    /// `tensormap.replace` of `field` with `value` (a `.b32` field takes the low 32 bits).
    pub fn replace(&mut self, field: MapField, value: u64) {
        let v32 = value as u32;
        match field {
            MapField::GlobalAddress => self.global_address = value,
            MapField::Rank => self.rank = v32,
            MapField::BoxDim(o) => self.box_dim[usize::from(o)] = v32,
            MapField::GlobalDim(o) => self.global_dim[usize::from(o)] = v32,
            MapField::GlobalStride(o) => self.global_stride[usize::from(o)] = value,
            MapField::ElementStride(o) => {
                self.element_stride[usize::from(o)] = v32.min(u32::from(u16::MAX))
            }
            MapField::ElemType => self.elemtype = v32,
            MapField::InterleaveLayout => self.interleave = v32,
            MapField::SwizzleMode => self.swizzle = v32,
            MapField::SwizzleAtomicity => self.swizzle_atomicity = v32,
            MapField::FillMode => self.fill_mode = v32,
        }
        self.set |= 1 << field.bit();
    }

    /// The map the image describes and its tensor's global address, with
    /// `cuTensorMapEncodeTiled`'s rules ([`TensorMap::new`]).
    ///
    /// # Errors
    /// [`SimError::Invalid`], one line naming the field: a field the map needs that no
    /// `tensormap.replace` wrote (rank, elemtype, address, and per dimension global_dim,
    /// box_dim, element_stride and the strides of dimensions 1..), a value outside the PTX
    /// ISA's encodings, a mode tilelab does not model (interleave, NaN fill, swizzle
    /// atomicity), or the map's own rules.
    pub fn tensor_map(&self) -> Result<(TensorMap, u64), SimError> {
        let need = |f: MapField| {
            if self.set & (1 << f.bit()) == 0 {
                Err(SimError::Invalid(format!(
                    "tensor map made by tensormap.replace: its {} was never written (a map that did not come from a tensor-map parameter needs every field it uses replaced)",
                    f.describe()
                )))
            } else {
                Ok(())
            }
        };
        let bad = |m: String| Err(SimError::Invalid(m));
        need(MapField::Rank)?;
        need(MapField::ElemType)?;
        need(MapField::GlobalAddress)?;
        let rank = self.rank as usize + 1;
        if self.rank as usize >= MAX_RANK {
            return bad(format!(
                "tensor map made by tensormap.replace: .rank {} is not allowed; allowed: 0..=4 (the rank minus one)",
                self.rank
            ));
        }
        let Some(&dtype) = PTX_ELEMTYPES.get(self.elemtype as usize) else {
            return bad(format!(
                "tensor map made by tensormap.replace: .elemtype {} is not allowed; allowed: 0..=12 (u8 u16 u32 s32 u64 s64 f16 f32 f32.ftz f64 bf16 tf32 tf32.ftz)",
                self.elemtype
            ));
        };
        for (what, v) in [
            (".interleave_layout", self.interleave),
            (".fill_mode", self.fill_mode),
            (".swizzle_atomicity", self.swizzle_atomicity),
        ] {
            if v != 0 {
                return bad(format!(
                    "tensor map made by tensormap.replace: {what} {v} is not modelled; allowed: 0 (none / zero fill)"
                ));
            }
        }
        let Some(&swizzle) = TmaSwizzle::ALL.get(self.swizzle as usize) else {
            return bad(format!(
                "tensor map made by tensormap.replace: .swizzle_mode {} is not modelled; allowed: 0..=3 (none, 32B, 64B, 128B)",
                self.swizzle
            ));
        };
        let mut dims = Vec::with_capacity(rank);
        let mut boxes = Vec::with_capacity(rank);
        let mut es = Vec::with_capacity(rank);
        let mut strides = Vec::with_capacity(rank - 1);
        for d in 0..rank {
            let o = d as u8;
            need(MapField::GlobalDim(o))?;
            need(MapField::BoxDim(o))?;
            need(MapField::ElementStride(o))?;
            dims.push(u64::from(self.global_dim[d]));
            boxes.push(self.box_dim[d]);
            es.push(self.element_stride[d]);
            if d > 0 {
                need(MapField::GlobalStride(o - 1))?;
                strides.push(self.global_stride[d - 1]);
            }
        }
        let map = TensorMap::new(dtype, &dims, &strides, &boxes, Some(&es), swizzle)?;
        if !self.global_address.is_multiple_of(16) {
            return bad(format!(
                "tensor map made by tensormap.replace: .global_address {:#x} is not allowed; allowed: a multiple of 16 bytes",
                self.global_address
            ));
        }
        Ok((map, self.global_address))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The replaces Triton 3.6 emits for `tl.make_tensor_descriptor(a, shape=[M, K],
    /// strides=[K, 1], block_shape=[128, 64])` of f16 with M = 128, K = 256
    /// (`tests/data/ptx_hopper/u2_device_desc_matmul.ptx`, lines 85-124).
    fn triton_a() -> MapImage {
        let mut m = MapImage::default();
        for (f, v) in [
            (MapField::GlobalAddress, 0x7000_0000),
            (MapField::Rank, 1),
            (MapField::BoxDim(0), 64),
            (MapField::BoxDim(1), 128),
            (MapField::GlobalDim(0), 256),
            (MapField::GlobalDim(1), 128),
            (MapField::GlobalStride(0), 512),
            (MapField::ElementStride(0), 1),
            (MapField::ElementStride(1), 1),
            (MapField::ElemType, 6),
            (MapField::InterleaveLayout, 0),
            (MapField::SwizzleMode, 3),
            (MapField::FillMode, 0),
        ] {
            m.replace(f, v);
        }
        m
    }

    #[test]
    fn triton_s_replaces_make_the_map_its_host_descriptor_would() {
        let (map, base) = triton_a().tensor_map().unwrap();
        assert_eq!(base, 0x7000_0000);
        // The host TensorDescriptor of the same tensor, as tests/data/ptx_hopper's Triton
        // fixtures pass it: f16, dims innermost first, stride in bytes, box, 128B swizzle.
        assert_eq!(
            map,
            TensorMap::parse("f16:256,128:512:64,128:128B").unwrap()
        );
        assert_eq!(map.box_bytes(), 16384);
    }

    #[test]
    fn the_image_survives_its_bytes() {
        let m = triton_a();
        assert_eq!(MapImage::from_bytes(&m.to_bytes()), Some(m));
        assert_eq!(MapImage::from_bytes(&[0u8; MAP_BYTES]), None);
    }

    #[test]
    fn a_parameter_map_replaced_keeps_its_other_fields() {
        let host = TensorMap::parse("bf16:512,64:1024:64,64:128B").unwrap();
        let mut m = MapImage::of_map(&host, 0x1000);
        m.replace(MapField::GlobalAddress, 0x2000);
        let (map, base) = m.tensor_map().unwrap();
        assert_eq!((map, base), (host, 0x2000));
        // .elemtype numbers bf16 10 (CUtensorMapDataType numbers it 9).
        assert_eq!(m.elemtype, 10);
    }

    #[test]
    fn a_field_never_written_is_named() {
        let mut m = triton_a();
        m.set &= !(1 << MapField::GlobalStride(0).bit());
        let e = m.tensor_map().unwrap_err().to_string();
        assert!(
            e.contains(".global_stride ordinal 0 was never written"),
            "{e}"
        );
    }

    #[test]
    fn values_outside_the_encodings_are_refused() {
        for (f, v, want) in [
            (MapField::Rank, 5, ".rank 5 is not allowed"),
            (MapField::ElemType, 13, ".elemtype 13 is not allowed"),
            (MapField::FillMode, 1, ".fill_mode 1 is not modelled"),
            (MapField::SwizzleMode, 4, ".swizzle_mode 4 is not modelled"),
            (MapField::BoxDim(1), 257, "boxDim[1] 257"),
            (MapField::GlobalStride(0), 500, "globalStrides[0] 500"),
            (MapField::GlobalAddress, 8, ".global_address 0x8"),
        ] {
            let mut m = triton_a();
            m.replace(f, v);
            let e = m.tensor_map().unwrap_err().to_string();
            assert!(e.contains(want), "{f:?} {v}: {e}");
        }
    }

    #[test]
    fn ordinals_follow_the_isa() {
        assert_eq!(
            MapField::parse("box_dim", Some(4)).unwrap(),
            MapField::BoxDim(4)
        );
        assert!(MapField::parse("box_dim", Some(5)).is_err());
        assert!(MapField::parse("global_stride", Some(4)).is_err());
        assert!(MapField::parse("global_stride", Some(3)).is_ok());
        assert!(MapField::parse("rank", Some(0)).is_err());
        assert!(MapField::parse("box_dim", None).is_err());
        assert!(MapField::parse("size", None).is_err());
    }
}
