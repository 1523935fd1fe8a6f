//! Decoding of the synchronisation and Hopper instructions: `bar.red`, `barrier.cluster`,
//! the asynchronous units' commits and waits, `mbarrier` (PTX ISA §9.7.13.15), `elect.sync`,
//! `setmaxnreg`, `mapa`, `call` and the `wgmma` fences and groups.

use super::super::parse::{self, Operand};
use super::super::types::Ty;
use super::{
    AsyncUnit, BarRed, DecodeError, Decoder, MbarOp, Op, Space, Src, Want, derr, isa,
    unsupported_inst,
};
use crate::sim::mbarrier::MAX_COUNT;

impl Decoder<'_> {
    /// `cp.async{.bulk}.commit_group`, `cp.async{.bulk}.wait_group{.read} N`,
    /// `cp.async.wait_all`, `wgmma.commit_group.sync.aligned`, `wgmma.wait_group.sync.aligned
    /// N` (N an integer constant, checked by `check_form`).
    pub(super) fn async_group(&mut self, i: &parse::Inst) -> Result<Op, DecodeError> {
        let has = |m: &str| i.opcode.iter().any(|x| x == m);
        let unit = if i.opcode[0] == "wgmma" {
            AsyncUnit::Wgmma
        } else if has("bulk") {
            AsyncUnit::Bulk
        } else {
            AsyncUnit::CpAsync
        };
        if has("commit_group") {
            return Ok(Op::AsyncCommit { unit });
        }
        if has("wait_all") {
            return Ok(Op::AsyncWait {
                unit,
                n: 0,
                all: true,
            });
        }
        let n = match i.operands.first() {
            Some(Operand::Int(v)) => u32::try_from(*v).map_err(|_| {
                derr(
                    i.line,
                    format!(
                        "'{}': N = {v} is not a group count; allowed 0..={} ({})",
                        self.text,
                        u32::MAX,
                        isa(unit.wait_name())
                    ),
                )
            })?,
            _ => return Err(derr(i.line, format!("'{}' needs N", self.text))),
        };
        Ok(Op::AsyncWait {
            unit,
            n,
            all: false,
        })
    }

    /// `barrier.cluster.arrive{.release|.relaxed}{.aligned}`, `barrier.cluster.wait{.acquire}
    /// {.aligned}` (PTX ISA 9.7.13.2 barrier.cluster).
    pub(super) fn cluster_barrier(&mut self, i: &parse::Inst) -> Result<Op, DecodeError> {
        let wait = i.opcode.iter().any(|m| m == "wait");
        Ok(Op::ClusterBarrier { wait })
    }

    /// A named barrier's id and thread count: immediates checked here (ids 0..=15, counts
    /// multiples of 32), registers when run (PTX ISA 9.7.13.1 bar, barrier).
    pub(super) fn bar_operands(
        &mut self,
        name: &str,
        id: &Operand,
        count: Option<&Operand>,
        line: u32,
    ) -> Result<(Src, Option<Src>), DecodeError> {
        if let Operand::Int(a) = id
            && !(0..16).contains(a)
        {
            return Err(derr(
                line,
                format!(
                    "'{}': barrier {a} does not exist; a CTA has barriers 0 through 15 ({})",
                    self.text,
                    isa(name)
                ),
            ));
        }
        if let Some(Operand::Int(b)) = count
            && (*b <= 0 || b % 32 != 0)
        {
            return Err(derr(
                line,
                format!(
                    "'{}': a barrier's thread count is a non-zero multiple of the warp size (32), found {b} ({})",
                    self.text,
                    isa(name)
                ),
            ));
        }
        let u32_ = Want::Ty(Ty::U(32));
        let id = self.src(id, u32_, line)?;
        let count = match count {
            Some(o) => Some(self.src(o, u32_, line)?),
            None => None,
        };
        Ok((id, count))
    }

    /// `bar{.cta}.red.popc.u32 d, a{, b}, {!}c` and `bar{.cta}.red.{and,or}.pred p, a{, b},
    /// {!}c` (PTX ISA 9.7.13.1): a `bar.sync` whose threads' predicates are reduced.
    pub(super) fn bar_red(&mut self, i: &parse::Inst) -> Result<Op, DecodeError> {
        let line = i.line;
        let has = |m: &str| i.opcode.iter().any(|x| x == m);
        let (op, ty) = if has("popc") {
            (BarRed::Popc, Ty::U(32))
        } else if has("and") {
            (BarRed::And, Ty::Pred)
        } else if has("or") {
            (BarRed::Or, Ty::Pred)
        } else {
            return Err(derr(
                line,
                format!(
                    "'{}': bar.red needs .popc.u32, .and.pred or .or.pred ({})",
                    self.text,
                    isa("bar")
                ),
            ));
        };
        let named = i.opcode.iter().rev().find_map(|m| Ty::parse(m));
        if named != Some(ty) {
            return Err(derr(
                line,
                format!(
                    "'{}': bar.red.{} takes .{} ({})",
                    self.text,
                    if op == BarRed::Popc {
                        "popc"
                    } else {
                        "and/.or"
                    },
                    ty.name(),
                    isa("bar")
                ),
            ));
        }
        let ops = &i.operands;
        let d = self.dst(&ops[0], Want::Ty(ty), line)?;
        let count = if ops.len() == 4 { Some(&ops[2]) } else { None };
        let name = i.opcode[0].clone();
        let (id, count) = self.bar_operands(&name, &ops[1], count, line)?;
        let p = self.pred(&ops[ops.len() - 1], line)?;
        Ok(Op::Bar {
            id,
            count,
            arrive: false,
            red: Some((op, d, p)),
        })
    }

    /// The `mbarrier` instructions (PTX ISA §9.7.13.15): `init`, `arrive{.expect_tx}`,
    /// `arrive_drop{.expect_tx}`, `expect_tx`, `complete_tx`, `test_wait{.parity}`,
    /// `try_wait{.parity}`, `inval`, with `.shared`, `.shared::cta`, `.shared::cluster` or a
    /// generic address, the `.sem`/`.scope` qualifiers, `.b64`, and `_` for the state.
    pub(super) fn mbarrier(&mut self, i: &parse::Inst) -> Result<Op, DecodeError> {
        let line = i.line;
        let mods: Vec<&str> = i.opcode[1..].iter().map(parse::Name::as_str).collect();
        let has = |m: &str| mods.contains(&m);
        let op = if has("init") {
            MbarOp::Init
        } else if has("arrive") {
            MbarOp::Arrive
        } else if has("arrive_drop") {
            MbarOp::ArriveDrop
        } else if has("expect_tx") {
            MbarOp::ExpectTx
        } else if has("complete_tx") {
            MbarOp::CompleteTx
        } else if has("test_wait") {
            MbarOp::TestWait
        } else if has("try_wait") {
            MbarOp::TryWait
        } else if has("inval") {
            MbarOp::Inval
        } else {
            return Err(unsupported_inst(i));
        };
        if !has("b64") {
            return Err(derr(
                line,
                format!(
                    "'{}': an mbarrier object is .b64 (PTX ISA §9.7.13.15: mbarrier.*.b64)",
                    self.text
                ),
            ));
        }
        let space = if has("shared::cluster") {
            Space::Cluster
        } else if mods.iter().any(|m| m.starts_with("shared")) {
            Space::Shared
        } else {
            Space::Generic
        };
        let expect_tx = has("expect_tx") && matches!(op, MbarOp::Arrive | MbarOp::ArriveDrop);
        let parity = has("parity");
        if parity && !matches!(op, MbarOp::TestWait | MbarOp::TryWait) {
            return Err(derr(
                line,
                format!(
                    "'{}': .parity belongs to mbarrier.test_wait and mbarrier.try_wait (PTX ISA §9.7.13.15.16)",
                    self.text
                ),
            ));
        }
        let ops = &i.operands;
        let u32_ = Want::Ty(Ty::U(32));
        let b64 = Want::Ty(Ty::B(64));
        let sink_or = |d: &mut Self, o: &Operand, want: Want| match o {
            Operand::Sink => Ok(None),
            o => d.dst(o, want, line).map(Some),
        };
        let (d, addr, a, b) = match op {
            MbarOp::Init => {
                if let Operand::Int(c) = &ops[1]
                    && !(1..=i128::from(MAX_COUNT)).contains(c)
                {
                    return Err(derr(
                        line,
                        format!(
                            "'{}': the expected arrival count {c} is outside 1..={MAX_COUNT} (2^20 - 1; PTX ISA §9.7.13.15.9 mbarrier.init)",
                            self.text
                        ),
                    ));
                }
                let addr = self.addr(&ops[0], line)?;
                (None, addr, Some(self.src(&ops[1], u32_, line)?), None)
            }
            MbarOp::Arrive | MbarOp::ArriveDrop => {
                let d = sink_or(self, &ops[0], b64)?;
                let addr = self.addr(&ops[1], line)?;
                let rest: Vec<Src> = ops[2..]
                    .iter()
                    .map(|o| self.src(o, u32_, line))
                    .collect::<Result<_, _>>()?;
                if expect_tx {
                    (d, addr, rest.first().copied(), rest.get(1).copied())
                } else {
                    (d, addr, rest.first().copied(), None)
                }
            }
            MbarOp::ExpectTx | MbarOp::CompleteTx => {
                let addr = self.addr(&ops[0], line)?;
                (None, addr, Some(self.src(&ops[1], u32_, line)?), None)
            }
            MbarOp::TestWait | MbarOp::TryWait => {
                let d = sink_or(self, &ops[0], Want::Ty(Ty::Pred))?;
                let addr = self.addr(&ops[1], line)?;
                let want = if parity { u32_ } else { b64 };
                (d, addr, Some(self.src(&ops[2], want, line)?), None)
            }
            MbarOp::Inval | MbarOp::CpAsyncArrive { .. } => {
                (None, self.addr(&ops[0], line)?, None, None)
            }
        };
        Ok(Op::Mbarrier {
            op,
            expect_tx,
            parity,
            space,
            d,
            addr,
            a,
            b,
        })
    }

    /// `cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]` (PTX ISA 9.7.9.25.3.5).
    pub(super) fn cp_async_mbarrier_arrive(&mut self, i: &parse::Inst) -> Result<Op, DecodeError> {
        let line = i.line;
        let has = |m: &str| i.opcode.iter().any(|x| x == m);
        if !has("arrive") || !has("b64") {
            return Err(derr(
                line,
                format!(
                    "'{}': the form is cp.async.mbarrier.arrive{{.noinc}}{{.shared{{::cta}}}}.b64 [addr] (PTX ISA 9.7.9.25.3.5)",
                    self.text
                ),
            ));
        }
        let space = if i.opcode.iter().any(|m| m.starts_with("shared")) {
            Space::Shared
        } else {
            Space::Generic
        };
        Ok(Op::Mbarrier {
            op: MbarOp::CpAsyncArrive {
                noinc: has("noinc"),
            },
            expect_tx: false,
            parity: false,
            space,
            d: None,
            addr: self.addr(&i.operands[0], line)?,
            a: None,
            b: None,
        })
    }

    /// `elect.sync`, `setmaxnreg`, `mapa`, `call`, and `wgmma`'s fence and groups.
    pub(super) fn hopper_misc(&mut self, i: &parse::Inst) -> Result<Op, DecodeError> {
        let line = i.line;
        let ops = &i.operands;
        match i.opcode[0].as_str() {
            "elect" => {
                let (d, p) = match &ops[0] {
                    Operand::Pair(a, b) => (a.clone(), b.clone()),
                    o => {
                        return Err(derr(
                            line,
                            format!(
                                "'{}': elect.sync writes d|p (a lane id and a predicate), found '{o}' (PTX ISA 9.7.13.12 elect.sync)",
                                self.text
                            ),
                        ));
                    }
                };
                let name =
                    |d: &mut Self, n: &str, want: Want| -> Result<Option<u32>, DecodeError> {
                        if n == "_" {
                            Ok(None)
                        } else {
                            d.dst(&Operand::Name(n.into()), want, line).map(Some)
                        }
                    };
                Ok(Op::Elect {
                    d: name(self, &d, Want::Ty(Ty::B(32)))?,
                    p: name(self, &p, Want::Ty(Ty::Pred))?,
                    member: self.src(&ops[1], Want::Ty(Ty::B(32)), line)?,
                })
            }
            "setmaxnreg" => {
                let ok = |n: i128| (24..=256).contains(&n) && n % 8 == 0;
                match (&ops[0], i.opcode.iter().any(|m| m == "u32")) {
                    (Operand::Int(n), true) if ok(*n) => Ok(Op::Nop),
                    (o, _) => Err(derr(
                        line,
                        format!(
                            "'{}': setmaxnreg.u32 takes a register count that is an integer constant in 24..=256 and a multiple of 8, found '{o}' (PTX ISA 9.7.17.1 setmaxnreg)",
                            self.text
                        ),
                    )),
                }
            }
            "mapa" => {
                let ty = i.opcode.iter().rev().find_map(|m| Ty::parse(m));
                let Some(ty @ (Ty::U(32) | Ty::U(64))) = ty else {
                    return Err(derr(
                        line,
                        format!(
                            "'{}': mapa takes .u32 or .u64 (PTX ISA 9.7.9.22 mapa)",
                            self.text
                        ),
                    ));
                };
                Ok(Op::Mapa {
                    d: self.dst(&ops[0], Want::Ty(ty), line)?,
                    a: self.src(&ops[1], Want::Ty(ty), line)?,
                    rank: self.src(&ops[2], Want::Ty(Ty::U(32)), line)?,
                })
            }
            "call" => match &ops[0] {
                Operand::Name(n) if !n.starts_with('%') => Ok(Op::Call {
                    name: n.to_string(),
                }),
                o => Err(derr(
                    line,
                    format!(
                        "'{}': an indirect call (through '{o}') is not supported; calls are not simulated",
                        self.text
                    ),
                )),
            },
            // wgmma: the fence orders register accesses (nothing to do in a lockstep warp);
            // the groups are the Wgmma unit's.
            _ if i.opcode.iter().any(|m| m == "mma_async") => self.wgmma(i),
            _ if i.opcode.iter().any(|m| m == "fence") => Ok(Op::Nop),
            _ if i
                .opcode
                .iter()
                .any(|m| m == "commit_group" || m == "wait_group") =>
            {
                self.async_group(i)
            }
            _ => Err(unsupported_inst(i)),
        }
    }
}
