//! Decoding of the tensor-map instructions (PTX ISA, sm_90a): `tensormap.replace` (one field of
//! a tensor-map object in global or shared memory) and `tensormap.cp_fenceproxy` (an object
//! copied from shared to global memory, with the proxy fence). Their meaning is
//! [`crate::sim::tensormap`]; `fence.proxy.tensormap::generic` decodes with the other fences.

use super::super::parse::{self, Operand};
use super::super::types::Ty;
use super::{DecodeError, Decoder, Op, Space, Want, derr};
use crate::sim::tensormap::MapField;

/// The PTX ISA's names of the two instructions, for messages.
const REPLACE_ISA: &str = "PTX ISA, tensormap.replace";
const COPY_ISA: &str = "PTX ISA, tensormap.cp_fenceproxy";

impl Decoder<'_> {
    /// `tensormap.replace.tile.<field>{.global,.shared::cta}.b1024.{b32,b64} [addr], {ord,}
    /// new_val` and `tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.
    /// scope.sync.aligned [dst], [src], 128`.
    pub(super) fn tensormap(&mut self, i: &parse::Inst) -> Result<Op, DecodeError> {
        let line = i.line;
        let mods: Vec<&str> = i.opcode[1..].iter().map(parse::Name::as_str).collect();
        let has = |m: &str| mods.contains(&m);
        let text = self.text;
        let ops = &i.operands;
        if has("cp_fenceproxy") {
            let ok = has("global")
                && has("shared::cta")
                && has("tensormap::generic")
                && has("release")
                && has("sync")
                && has("aligned")
                && mods
                    .iter()
                    .any(|m| matches!(*m, "cta" | "cluster" | "gpu" | "sys"));
            if !ok || ops.len() != 3 {
                return Err(derr(
                    line,
                    format!(
                        "'{text}': the form is tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst], [src], 128 with scope .cta .cluster .gpu .sys ({COPY_ISA})"
                    ),
                ));
            }
            if !matches!(ops[2], Operand::Int(128)) {
                return Err(derr(
                    line,
                    format!(
                        "'{text}': the size operand is the integer constant 128 (a tensor-map object's bytes), found '{}' ({COPY_ISA})",
                        ops[2]
                    ),
                ));
            }
            return Ok(Op::TensorMapCopy {
                dst: self.addr(&ops[0], line)?,
                src: self.addr(&ops[1], line)?,
            });
        }
        let form = "tensormap.replace.tile.field{.global,.shared::cta}.b1024.{b32,b64} [addr], {ord,} new_val";
        let bad = |m: String| Err(derr(line, format!("'{text}': {m} ({REPLACE_ISA}: {form})")));
        if !has("replace") {
            return bad("not a tensor-map instruction tilelab knows".into());
        }
        if !has("tile") || !has("b1024") {
            return bad("the mode is .tile and the object type .b1024".into());
        }
        let space = match (has("global"), has("shared::cta")) {
            (true, false) => Space::Global,
            (false, true) => Space::Shared,
            (false, false) => Space::Generic,
            (true, true) => return bad("one state space at most".into()),
        };
        let Some(name) = mods.iter().find(|m| {
            !matches!(
                **m,
                "replace" | "tile" | "b1024" | "b32" | "b64" | "global" | "shared::cta"
            )
        }) else {
            return bad("the field is missing".into());
        };
        let (ord, val) = match ops.as_slice() {
            [_, v] => (None, v),
            [_, Operand::Int(o), v] => (Some(u32::try_from(*o).unwrap_or(u32::MAX)), v),
            [_, o, _] => {
                return bad(format!(
                    "the ordinal must be an integer constant, found '{o}'"
                ));
            }
            _ => return bad(format!("{} operands", ops.len())),
        };
        let field = MapField::parse(name, ord).map_err(|e| derr(line, format!("'{text}': {e}")))?;
        let ty = if field.is_b64() { 64 } else { 32 };
        if !has(if ty == 64 { "b64" } else { "b32" }) {
            return bad(format!("the field .{name} takes a .b{ty} new value"));
        }
        if !matches!(ops[0], Operand::Address(..)) {
            return bad(format!(
                "the object operand must be an address [a], found '{}'",
                ops[0]
            ));
        }
        Ok(Op::TensorMapReplace {
            space,
            addr: self.addr(&ops[0], line)?,
            field,
            value: self.src(val, Want::Ty(Ty::B(ty)), line)?,
        })
    }
}
