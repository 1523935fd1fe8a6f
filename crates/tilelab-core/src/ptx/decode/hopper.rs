//! Decoding of the Hopper data-movement and tensor-core instructions: `wgmma.mma_async`
//! (PTX ISA 9.7.15.5.2) and the bulk copies of the TMA unit, `cp.async.bulk{.tensor}` and
//! `cp.reduce.async.bulk{.tensor}` (PTX ISA 9.7.9.25).

use super::super::parse::{self, Operand};
use super::super::types::Ty;
use super::{Addr, BulkForm, DecodeError, Decoder, Op, Src, Want, WgmmaSrc, derr};
use crate::sim::tma::{ReduceOp, TmaDtype};
use crate::sim::wgmma::{WgmmaAcc, WgmmaKind, WgmmaType};

/// The addresses and size a bulk copy's operands give ([`Decoder::bulk_operands`]).
struct BulkParts {
    smem: Addr,
    global: Option<Addr>,
    tmap: Option<(Addr, Vec<Src>)>,
    size: Option<Src>,
    mbar: Option<Addr>,
}

const WGMMA_ISA: &str = "PTX ISA 9.7.15.5.2 wgmma.mma_async";
const BULK_ISA: &str = "PTX ISA 9.7.9.25 cp.async.bulk";

impl Decoder<'_> {
    /// `wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype{.satfinite} d, a, b-desc,
    /// scale-d{, imm-scale-a, imm-scale-b}{, imm-trans-a}{, imm-trans-b}`: A a descriptor or a
    /// vector of 4 registers; imm-scale for the floating-point forms, imm-trans for f16/bf16
    /// (imm-trans-a only with A from a descriptor).
    pub(super) fn wgmma(&mut self, i: &parse::Inst) -> Result<Op, DecodeError> {
        let line = i.line;
        let text = self.text.to_string();
        let bad = |m: String| Err(derr(line, format!("'{text}': {m} ({WGMMA_ISA})")));
        let mods: Vec<&str> = i.opcode[1..].iter().map(parse::Name::as_str).collect();
        for m in &mods {
            let known = matches!(*m, "mma_async" | "sync" | "aligned" | "satfinite")
                || m.starts_with("m64n")
                || WgmmaType::parse(m).is_ok()
                || WgmmaAcc::parse(m).is_ok();
            if !known {
                return bad(format!(
                    "qualifier '.{m}' is not allowed; allowed: .sync.aligned.m64nNkK.dtype.atype.btype{{.satfinite}} (sparse wgmma.mma_async.sp is not modelled)"
                ));
            }
        }
        if !mods.contains(&"sync") || !mods.contains(&"aligned") {
            return bad("needs .sync.aligned".into());
        }
        let Some(shape) = mods.iter().find(|m| m.starts_with("m64n")) else {
            return bad("needs a shape .m64nNkK".into());
        };
        let (n, k) = match shape[4..].split_once('k') {
            Some((n, k)) => (n.parse::<u32>().ok(), k.parse::<u32>().ok()),
            None => (None, None),
        };
        let (Some(n), Some(k)) = (n, k) else {
            return bad(format!("shape '.{shape}' is not m64nNkK"));
        };
        // The three types follow the shape: dtype, atype, btype.
        let pos = mods.iter().position(|m| m == shape).unwrap_or(0);
        let tys: Vec<&str> = mods[pos + 1..]
            .iter()
            .copied()
            .filter(|m| *m != "satfinite")
            .collect();
        let [dt, at, bt] = tys[..] else {
            return bad(format!(
                "needs three types after the shape (.dtype.atype.btype), found {}",
                tys.len()
            ));
        };
        let sim = |e: crate::sim::error::SimError| derr(line, format!("'{text}': {e}"));
        let acc = WgmmaAcc::parse(dt).map_err(sim)?;
        let a = WgmmaType::parse(at).map_err(sim)?;
        let b = WgmmaType::parse(bt).map_err(sim)?;
        let kind = WgmmaKind::new(n, acc, a, b, mods.contains(&"satfinite")).map_err(sim)?;
        if k != kind.k() {
            return bad(format!("K = {k} with .{at} inputs; allowed: k{}", kind.k()));
        }
        let ops = &i.operands;
        let Some(Operand::Vector(dv)) = ops.first() else {
            return bad("d must be a vector of the accumulator registers".into());
        };
        if dv.len() != kind.d_regs() as usize {
            return bad(format!(
                "d has {} registers; m64n{n} .{dt} takes {}",
                dv.len(),
                kind.d_regs()
            ));
        }
        let d = dv
            .iter()
            .map(|o| self.dst(o, Want::Ty(Ty::B(32)), line))
            .collect::<Result<Vec<u32>, _>>()?;
        let a_src = match ops.get(1) {
            Some(Operand::Vector(v)) => {
                if v.len() != 4 {
                    return bad(format!(
                        "A from registers is 4 .b32 registers per thread, found {}",
                        v.len()
                    ));
                }
                WgmmaSrc::Regs(
                    v.iter()
                        .map(|o| self.src(o, Want::Ty(Ty::B(32)), line))
                        .collect::<Result<_, _>>()?,
                )
            }
            Some(o) => WgmmaSrc::Desc(self.src(o, Want::Ty(Ty::B(64)), line)?),
            None => return bad("needs a, b-desc and scale-d".into()),
        };
        let float = !a.is_integer();
        let transposable = matches!(a, WgmmaType::F16 | WgmmaType::Bf16);
        let a_desc = matches!(a_src, WgmmaSrc::Desc(_));
        let want = 4
            + if float { 2 } else { 0 }
            + usize::from(transposable && a_desc)
            + usize::from(transposable);
        if ops.len() != want {
            return bad(format!(
                "{} operands; this form takes {want}: d, a, b-desc, scale-d{}{}{}",
                ops.len(),
                if float {
                    ", imm-scale-a, imm-scale-b"
                } else {
                    ""
                },
                if transposable && a_desc {
                    ", imm-trans-a"
                } else {
                    ""
                },
                if transposable { ", imm-trans-b" } else { "" }
            ));
        }
        let b_src = self.src(&ops[2], Want::Ty(Ty::B(64)), line)?;
        let scale_d = self.pred(&ops[3], line)?;
        let imm = |o: &Operand, what: &str, allowed: &[i128]| -> Result<i128, DecodeError> {
            match o {
                Operand::Int(v) if allowed.contains(v) => Ok(*v),
                o => Err(derr(
                    line,
                    format!(
                        "'{text}': {what} is '{o}'; allowed: {} (an immediate, {WGMMA_ISA})",
                        allowed
                            .iter()
                            .map(i128::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )),
            }
        };
        let mut scale = [1i32; 2];
        let mut trans = [false; 2];
        let mut at = 4;
        if float {
            scale[0] = imm(&ops[4], "imm-scale-a", &[1, -1])? as i32;
            scale[1] = imm(&ops[5], "imm-scale-b", &[1, -1])? as i32;
            at = 6;
        }
        if transposable && a_desc {
            trans[0] = imm(&ops[at], "imm-trans-a", &[0, 1])? == 1;
            at += 1;
        }
        if transposable {
            trans[1] = imm(&ops[at], "imm-trans-b", &[0, 1])? == 1;
        }
        Ok(Op::Wgmma {
            kind,
            d,
            a: a_src,
            b: b_src,
            scale_d,
            scale,
            trans,
        })
    }

    /// A shared-memory or global address operand of a bulk copy.
    fn bulk_addr(
        &mut self,
        o: Option<&Operand>,
        what: &str,
        line: u32,
    ) -> Result<Addr, DecodeError> {
        match o {
            Some(o @ Operand::Address(..)) => self.addr(o, line),
            Some(o) => Err(derr(
                line,
                format!(
                    "'{}': {what} must be an address [a], found '{o}' ({BULK_ISA})",
                    self.text
                ),
            )),
            None => Err(derr(
                line,
                format!("'{}' needs {what} ({BULK_ISA})", self.text),
            )),
        }
    }

    /// `[tensorMap, {c0, …}]`: the map's address and 1..=5 coordinates.
    fn tensor_operand(
        &mut self,
        o: Option<&Operand>,
        rank: u8,
        line: u32,
    ) -> Result<(Addr, Vec<Src>), DecodeError> {
        let Some(Operand::TensorAddress(n, cs)) = o else {
            return Err(derr(
                line,
                format!(
                    "'{}': expected the tensor operand [tensorMap, {{c0, ...}}], found '{}' ({BULK_ISA}.tensor)",
                    self.text,
                    o.map_or("nothing".to_string(), |o| o.to_string())
                ),
            ));
        };
        if cs.len() != usize::from(rank) {
            return Err(derr(
                line,
                format!(
                    "'{}': a .{rank}d copy takes {rank} coordinates, found {} ({BULK_ISA}.tensor)",
                    self.text,
                    cs.len()
                ),
            ));
        }
        let addr = self.addr(&Operand::Address(Some(n.clone()), 0), line)?;
        let coords = cs
            .iter()
            .map(|c| self.src(c, Want::Ty(Ty::B(32)), line))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((addr, coords))
    }

    /// `cp.async.bulk{.tensor.Nd}` and `cp.reduce.async.bulk{.tensor.Nd}`: the tile-mode
    /// tensor loads (global to `shared::cluster` or `shared::cta`, completing on an mbarrier,
    /// `.multicast::cluster` with its ctaMask), tensor stores and reductions (shared::cta to
    /// global, bulk groups), and the copies without a map. `.im2col`, shared-to-cluster copies
    /// and `.prefetch` forms other than the no-op `cp.async.bulk.prefetch` are refused as not
    /// modelled.
    pub(super) fn bulk(&mut self, i: &parse::Inst) -> Result<Op, DecodeError> {
        let line = i.line;
        let mods: Vec<&str> = i.opcode[1..].iter().map(parse::Name::as_str).collect();
        let has = |m: &str| mods.contains(&m);
        let text = self.text.to_string();
        let bad = |m: String| Err(derr(line, format!("'{text}': {m} ({BULK_ISA})")));
        if has("prefetch") {
            return Ok(Op::Nop);
        }
        if has("commit_group") || has("wait_group") {
            return self.async_group(i);
        }
        let reduce = has("reduce");
        let rank = mods
            .iter()
            .find_map(|m| m.strip_suffix('d').and_then(|r| r.parse::<u8>().ok()));
        let tensor = has("tensor");
        if tensor && !rank.is_some_and(|r| (1..=5).contains(&r)) {
            return bad("a tensor copy needs .1d to .5d".into());
        }
        if has("im2col")
            || mods
                .iter()
                .any(|m| m.starts_with("im2col") || m.starts_with("tile::"))
        {
            return bad(".im2col and gather/scatter modes are not modelled; allowed: .tile".into());
        }
        let spaces: Vec<&str> = mods
            .iter()
            .copied()
            .filter(|m| m.starts_with("shared") || *m == "global")
            .collect();
        let to_shared = matches!(
            spaces.as_slice(),
            ["shared::cluster" | "shared::cta", "global"]
        );
        let to_global = matches!(spaces.as_slice(), ["global", "shared::cta"]);
        if !to_shared && !to_global {
            return bad(format!(
                "state spaces {} are not modelled; allowed: .shared::cluster.global or .shared::cta.global (loads), .global.shared::cta (stores; a shared::cluster to shared::cluster copy is not modelled)",
                if spaces.is_empty() {
                    "none".to_string()
                } else {
                    spaces
                        .iter()
                        .map(|s| format!(".{s}"))
                        .collect::<Vec<_>>()
                        .join("")
                }
            ));
        }
        let mbar_form = has("mbarrier::complete_tx::bytes");
        let group_form = has("bulk_group");
        if to_shared && (!mbar_form || reduce) {
            return bad("a copy to shared memory completes with .mbarrier::complete_tx::bytes (and is not a reduction)".into());
        }
        if to_global && !group_form {
            return bad("a copy to global memory completes with .bulk_group".into());
        }
        let multicast = has("multicast::cluster");
        let hint = has("L2::cache_hint");
        let rop = if reduce {
            let found: Vec<ReduceOp> = mods
                .iter()
                .filter_map(|m| ReduceOp::parse(m).ok())
                .collect();
            match found[..] {
                [op] => Some(op),
                _ => {
                    return bad(
                        "a reduction names one of .add .min .max .inc .dec .and .or .xor".into(),
                    );
                }
            }
        } else {
            None
        };
        let ops = &i.operands;
        let (form, parts, mut next) = self.bulk_operands(i, (tensor, to_shared), rank, rop)?;
        let BulkParts {
            smem,
            global,
            tmap,
            size,
            mbar,
        } = parts;
        let mut cta_mask = None;
        if multicast {
            if !to_shared {
                return bad(".multicast::cluster is a load's qualifier".into());
            }
            let Some(m) = ops.get(next) else {
                return bad(".multicast::cluster needs a ctaMask operand".into());
            };
            cta_mask = Some(self.src(m, Want::Ty(Ty::B(16)), line)?);
            next += 1;
        }
        if hint {
            next += 1;
        }
        if ops.len() != next {
            return bad(format!("{} operands; this form takes {next}", ops.len()));
        }
        Ok(Op::Bulk {
            form,
            smem,
            global,
            tmap,
            size,
            mbar,
            cta_mask,
        })
    }

    /// The operands of a bulk copy form: which form, its addresses, and how many operands it
    /// used (the optional ctaMask and cache-policy follow).
    fn bulk_operands(
        &mut self,
        i: &parse::Inst,
        (tensor, to_shared): (bool, bool),
        rank: Option<u8>,
        rop: Option<ReduceOp>,
    ) -> Result<(BulkForm, BulkParts, usize), DecodeError> {
        let line = i.line;
        let mods: Vec<&str> = i.opcode[1..].iter().map(parse::Name::as_str).collect();
        let text = self.text.to_string();
        let bad = |m: String| Err(derr(line, format!("'{text}': {m} ({BULK_ISA})")));
        let ops = &i.operands;
        let (smem, mut global, mut tmap, mut size, mut mbar);
        (global, tmap, size, mbar) = (None, None, None, None);
        let mut next;
        let form = match (tensor, to_shared) {
            (true, true) => {
                let r = rank.unwrap_or(1);
                smem = Some(self.bulk_addr(ops.first(), "the shared destination", line)?);
                tmap = Some(self.tensor_operand(ops.get(1), r, line)?);
                mbar = Some(self.bulk_addr(ops.get(2), "the mbarrier", line)?);
                next = 3;
                BulkForm::TensorLoad { rank: r }
            }
            (true, false) => {
                let r = rank.unwrap_or(1);
                tmap = Some(self.tensor_operand(ops.first(), r, line)?);
                smem = Some(self.bulk_addr(ops.get(1), "the shared source", line)?);
                next = 2;
                match rop {
                    Some(op) => BulkForm::TensorReduce { rank: r, op },
                    None => BulkForm::TensorStore { rank: r },
                }
            }
            (false, ts) => {
                let (dst, src) = (
                    self.bulk_addr(ops.first(), "the destination", line)?,
                    self.bulk_addr(ops.get(1), "the source", line)?,
                );
                let Some(sz) = ops.get(2) else {
                    return bad("needs a size".into());
                };
                size = Some(self.src(sz, Want::Ty(Ty::B(32)), line)?);
                next = 3;
                if ts {
                    smem = Some(dst);
                    global = Some(src);
                    mbar = Some(self.bulk_addr(ops.get(3), "the mbarrier", line)?);
                    next = 4;
                    BulkForm::CopyToShared
                } else {
                    smem = Some(src);
                    global = Some(dst);
                    match rop {
                        Some(op) => {
                            let t = mods.iter().rev().find_map(|m| TmaDtype::parse(m).ok());
                            let Some(dtype) = t else {
                                return bad("a reduction names its element type".into());
                            };
                            BulkForm::ReduceToGlobal { op, dtype }
                        }
                        None => BulkForm::CopyToGlobal,
                    }
                }
            }
        };
        let Some(smem) = smem else {
            return bad("needs a shared-memory address".into());
        };
        Ok((
            form,
            BulkParts {
                smem,
                global,
                tmap,
                size,
                mbar,
            },
            next,
        ))
    }
}
