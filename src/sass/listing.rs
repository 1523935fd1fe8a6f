//! `nvdisasm --print-line-info` listings read into instructions, each with the PTX line that
//! ptxas's line table gives it (pure: text in, values out).
//!
//! A listing (nvdisasm 13.x, `-c` code only) looks like
//!
//! ```text
//! .text.tl_matmul:
//!         //## File "tilelab.ptx", line 33
//!         /*0000*/                   LDC R1, c[0x0][0x28] ;
//! .L_x_1:
//!         /*0290*/              @!PT LDS RZ, [RZ] ;
//!         /*0ab0*/               @P0 BRA `(.L_x_1) ;
//! ```
//!
//! A `//## File "…", line N` comment gives the line of every instruction after it until the
//! next such comment (nvdisasm prints it only where the line changes); `, inlined at …` tails are
//! ignored (the PTX's own line table has no inlining). Labels (`.L_x_N:`) start basic blocks.

/// One SASS instruction of a listing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SassInst {
    /// Byte offset in the function's code (`/*0290*/`).
    pub addr: u32,
    /// The guard as written (`@!PT`, `@P0`), empty when there is none.
    pub guard: String,
    /// The opcode with its modifiers (`LDSM.16.MT88.4`, `HGMMA.64x128x16.F32`).
    pub mnemonic: String,
    /// The instruction as printed, guard included, without the trailing `;`.
    pub text: String,
    /// The PTX line (1-based) the line table gives it, `None` before the first line comment.
    pub line: Option<u32>,
    /// Branch target label (`.L_x_1` of `` BRA `(.L_x_1) ``), for BRA/BRX/CALL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Labels that name this instruction's address (it starts a basic block).
    #[serde(skip)]
    pub labels: Vec<String>,
}

impl SassInst {
    /// The family: the mnemonic up to its first `.` (`LDS` of `LDS.128`, `HGMMA` of
    /// `HGMMA.64x128x16.F32`), the name Nsight Compute's instruction classes follow.
    pub fn family(&self) -> &str {
        self.mnemonic.split('.').next().unwrap_or("")
    }

    /// Whether the guard can never be true (`@!PT`: ptxas's placeholder instructions, which still
    /// issue and are counted by `smsp__inst_executed` and its `_pred_off_all` parts).
    pub fn never_true(&self) -> bool {
        self.guard == "@!PT"
    }

    /// Whether the guard is a register (`@P0`, `@!UP1`): the instruction may be if-converted code.
    pub fn guarded(&self) -> bool {
        !self.guard.is_empty() && self.guard != "@PT"
    }

    /// Whether it ends a basic block (branches, exits, returns, calls: its successors are
    /// elsewhere).
    pub fn ends_block(&self) -> bool {
        matches!(
            self.family(),
            "BRA" | "BRX" | "JMP" | "JMX" | "EXIT" | "RET" | "CALL" | "KILL"
        )
    }
}

/// One function of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SassFunction {
    /// The function name (`.text.NAME`).
    pub name: String,
    /// Its instructions in address order.
    pub insts: Vec<SassInst>,
}

/// Why a listing cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ListingError {
    /// An instruction before any `.text.NAME:` label.
    #[error("nvdisasm listing: an instruction at /*{0}*/ before any .text function label")]
    NoFunction(String),
    /// The listing has no function named so.
    #[error("nvdisasm listing: no function '{want}' (functions: {have})")]
    NoSuchFunction {
        /// The name asked for.
        want: String,
        /// The names there are.
        have: String,
    },
}

/// The PTX line of a `//## File "…", line N[, inlined at …]` comment.
fn line_comment(t: &str) -> Option<u32> {
    let rest = t.strip_prefix("//## File ")?;
    let (_, after) = rest.split_once("\", line ")?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// One `/*addr*/ [@guard] MNEMONIC operands ;` line.
fn instruction(t: &str) -> Option<(u32, String, String, String, Option<String>)> {
    let rest = t.strip_prefix("/*")?;
    let (addr, body) = rest.split_once("*/")?;
    if addr.is_empty() || !addr.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let addr = u32::from_str_radix(addr, 16).ok()?;
    let body = body.split("/*").next().unwrap_or("").trim();
    let body = body.trim_end_matches(';').trim_end();
    let mut words = body.split_whitespace();
    let mut op = words.next()?;
    let mut guard = String::new();
    if op.starts_with('@') {
        guard = op.to_string();
        op = words.next()?;
    }
    if !op.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let target = body
        .split_once("`(")
        .and_then(|(_, r)| r.split_once(')'))
        .map(|(l, _)| l.to_string());
    Some((addr, guard, op.to_string(), body.to_string(), target))
}

/// Every function of an `nvdisasm --print-line-info` listing, in listing order.
///
/// # Errors
/// [`ListingError::NoFunction`]: an instruction comes before any `.text.NAME:` label.
pub fn parse(text: &str) -> Result<Vec<SassFunction>, ListingError> {
    let mut out: Vec<SassFunction> = Vec::new();
    let mut line = None;
    let mut labels: Vec<String> = Vec::new();
    for raw in text.lines() {
        let t = raw.trim();
        if let Some(name) = t.strip_prefix(".text.").and_then(|r| r.strip_suffix(':')) {
            out.push(SassFunction {
                name: name.to_string(),
                insts: Vec::new(),
            });
            line = None;
            labels.clear();
            continue;
        }
        if let Some(n) = line_comment(t) {
            line = Some(n);
            continue;
        }
        if let Some(l) = t.strip_suffix(':')
            && l.starts_with('.')
            && !l.contains(char::is_whitespace)
        {
            labels.push(l.to_string());
            continue;
        }
        let Some((addr, guard, mnemonic, text, target)) = instruction(t) else {
            continue;
        };
        let f = out
            .last_mut()
            .ok_or_else(|| ListingError::NoFunction(format!("{addr:04x}")))?;
        f.insts.push(SassInst {
            addr,
            guard,
            mnemonic,
            text,
            line,
            target,
            labels: std::mem::take(&mut labels),
        });
    }
    Ok(out)
}

/// The function named `name` of `fs`, or the only one when `fs` has exactly one.
///
/// # Errors
/// [`ListingError::NoSuchFunction`] naming the functions there are.
pub fn function<'a>(fs: &'a [SassFunction], name: &str) -> Result<&'a SassFunction, ListingError> {
    if let Some(f) = fs.iter().find(|f| f.name == name) {
        return Ok(f);
    }
    Err(ListingError::NoSuchFunction {
        want: crate::text::value(name).into_owned(),
        have: crate::text::list(fs.iter().map(|f| crate::text::value(&f.name).into_owned())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start of `nvdisasm --print-line-info -c` (13.5.37) on ptxas 13.0.88's CUBIN of
    /// tests/data/ptx/triton_matmul_2w.ptx with its own line table.
    const MM: &str = "\t.section\t.text.tl_matmul,\"ax\",@progbits\ntl_matmul:\n.text.tl_matmul:\n\t//## File \"/x/triton_matmul_2w.ptx\", line 33\n        /*0000*/                   LDC R1, c[0x0][0x28] ;\n\t//## File \"/x/triton_matmul_2w.ptx\", line 85\n        /*0050*/                   UMOV UR4, 0x400 ;\n        /*0060*/                   ULDC.64 UR10, c[0x0][0x208] ;\n        /*0290*/              @!PT LDS RZ, [RZ] ;\n        /*0420*/              @!P0 BRA `(.L_x_0) ;\n.L_x_0:\n\t//## File \"/x/triton_matmul_2w.ptx\", line 400, inlined at \"k.py\", line 3\n        /*0d90*/                   EXIT ;\n";

    #[test]
    fn instructions_carry_the_line_of_the_comment_before_them() {
        let fs = parse(MM).unwrap();
        assert_eq!(fs.len(), 1);
        let f = function(&fs, "tl_matmul").unwrap();
        let got: Vec<(u32, &str, &str, Option<u32>)> = f
            .insts
            .iter()
            .map(|i| (i.addr, i.guard.as_str(), i.mnemonic.as_str(), i.line))
            .collect();
        assert_eq!(
            got,
            [
                (0x0, "", "LDC", Some(33)),
                (0x50, "", "UMOV", Some(85)),
                (0x60, "", "ULDC.64", Some(85)),
                (0x290, "@!PT", "LDS", Some(85)),
                (0x420, "@!P0", "BRA", Some(85)),
                (0xd90, "", "EXIT", Some(400)),
            ]
        );
        assert_eq!(f.insts[4].target.as_deref(), Some(".L_x_0"));
        assert_eq!(f.insts[5].labels, [".L_x_0"]);
        assert!(f.insts[3].never_true() && f.insts[4].guarded() && !f.insts[0].guarded());
        assert_eq!(f.insts[2].family(), "ULDC");
    }

    #[test]
    fn a_missing_function_is_named_with_those_there_are() {
        let fs = parse(MM).unwrap();
        let e = function(&fs, "other").unwrap_err().to_string();
        assert_eq!(
            e,
            "nvdisasm listing: no function 'other' (functions: tl_matmul)"
        );
        assert!(parse("        /*0000*/    NOP ;\n").is_err());
    }
}
