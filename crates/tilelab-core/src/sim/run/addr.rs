//! Address expressions: a warp's 32 byte offsets written as one formula over `lane`, so an
//! access pattern can be tried without writing 32 numbers (`tilelab sim bank-conflicts --addr
//! "(lane%8)*132+(lane/8)*4" --width 16 --op st`).
//!
//! Grammar (C's operators and precedence, lowest first; all left-associative):
//!
//! ```text
//! expr    = or
//! or      = xor  ( '|'  xor  )*
//! xor     = and  ( '^'  and  )*
//! and     = shift ( '&' shift )*
//! shift   = sum  ( ('<<' | '>>') sum )*
//! sum     = product ( ('+' | '-') product )*
//! product = atom ( ('*' | '/' | '%') atom )*
//! atom    = 'lane' | NUMBER | '(' expr ')'
//! NUMBER  = decimal digits | '0x' hex digits        (at most 2^32 - 1)
//! ```
//!
//! Values are unsigned 32-bit byte offsets, evaluated with checked arithmetic: a result below 0
//! or above 2^32 − 1, a division or remainder by zero and a shift by 32 or more are errors that
//! name the expression, the lane and the operation ([`SimError::AddrEval`]), never a wrapped
//! value. Expressions are at most [`MAX_EXPR_LEN`] bytes and [`MAX_DEPTH`] parentheses deep.

use std::fmt;

use crate::sim::bank::WARP_SIZE;
use crate::sim::error::SimError;

/// Longest expression accepted, in bytes.
pub const MAX_EXPR_LEN: usize = 1000;
/// Deepest nesting of parentheses accepted.
pub const MAX_DEPTH: usize = 64;

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (unsigned, truncating)
    Div,
    /// `%`
    Rem,
    /// `<<`
    Shl,
    /// `>>` (logical)
    Shr,
    /// `&`
    And,
    /// `^`
    Xor,
    /// `|`
    Or,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            Op::Shl => "<<",
            Op::Shr => ">>",
            Op::And => "&",
            Op::Xor => "^",
            Op::Or => "|",
        }
    }

    /// Applies the operator with checked arithmetic; `Err` says what went wrong.
    fn apply(self, a: u32, b: u32) -> Result<u32, String> {
        let v = match self {
            Op::Add => a.checked_add(b),
            Op::Sub => a.checked_sub(b),
            Op::Mul => a.checked_mul(b),
            Op::Div | Op::Rem if b == 0 => {
                return Err(format!("{a} {} 0 divides by zero", self.symbol()));
            }
            Op::Div => Some(a / b),
            Op::Rem => Some(a % b),
            Op::Shl | Op::Shr if b >= 32 => {
                return Err(format!(
                    "{a} {} {b} shifts by 32 or more (allowed: 0..=31)",
                    self.symbol()
                ));
            }
            // A left shift that drops set bits is an overflow like any other.
            Op::Shl => Some(a << b).filter(|v| v >> b == a),
            Op::Shr => Some(a >> b),
            Op::And => Some(a & b),
            Op::Xor => Some(a ^ b),
            Op::Or => Some(a | b),
        };
        v.ok_or_else(|| match self {
            Op::Sub => format!("{a} - {b} is below 0"),
            _ => format!("{a} {} {b} does not fit in 32 bits", self.symbol()),
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Lane,
    Num(u32),
    Bin(Op, Box<Node>, Box<Node>),
}

/// A parsed address expression (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddrExpr {
    text: String,
    root: Node,
}

impl fmt::Display for AddrExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    Lane,
    Num(u32),
    Op(Op),
    Open,
    Close,
}

struct Parser<'a> {
    text: &'a str,
    toks: Vec<(usize, Tok)>,
    pos: usize,
    depth: usize,
}

impl AddrExpr {
    /// Parses an expression.
    ///
    /// # Errors
    /// [`SimError::AddrSyntax`] quoting the expression, the byte position and what was expected.
    pub fn parse(text: &str) -> Result<AddrExpr, SimError> {
        let syntax = |at: usize, reason: String| SimError::AddrSyntax {
            expr: text.to_string(),
            at,
            reason,
        };
        if text.len() > MAX_EXPR_LEN {
            return Err(syntax(
                MAX_EXPR_LEN,
                format!(
                    "the expression is {} bytes long; allowed: at most {MAX_EXPR_LEN}",
                    text.len()
                ),
            ));
        }
        let toks = tokenize(text).map_err(|(at, r)| syntax(at, r))?;
        let mut p = Parser {
            text,
            toks,
            pos: 0,
            depth: 0,
        };
        let root = p.expr(0).map_err(|(at, r)| syntax(at, r))?;
        if let Some(&(at, t)) = p.toks.get(p.pos) {
            let what = match t {
                Tok::Close => "a ')' without its '('".to_string(),
                _ => format!("'{}' after a complete expression", p.token_text(p.pos)),
            };
            return Err(syntax(at, format!("unexpected {what}")));
        }
        Ok(AddrExpr {
            text: text.to_string(),
            root,
        })
    }

    /// The byte offset of one lane.
    ///
    /// # Errors
    /// [`SimError::AddrEval`] naming the expression, the lane and the operation that overflowed,
    /// went below 0, divided by zero or shifted by 32 or more.
    pub fn eval(&self, lane: u32) -> Result<u32, SimError> {
        eval(&self.root, lane).map_err(|reason| SimError::AddrEval {
            expr: self.text.clone(),
            lane,
            reason,
        })
    }

    /// The byte offsets of lanes 0-31.
    ///
    /// # Errors
    /// As [`Self::eval`], for the first lane that fails.
    pub fn lanes(&self) -> Result<[u32; WARP_SIZE], SimError> {
        let mut out = [0u32; WARP_SIZE];
        for (lane, o) in out.iter_mut().enumerate() {
            *o = self.eval(lane as u32)?;
        }
        Ok(out)
    }
}

fn eval(n: &Node, lane: u32) -> Result<u32, String> {
    match n {
        Node::Lane => Ok(lane),
        Node::Num(v) => Ok(*v),
        Node::Bin(op, a, b) => op.apply(eval(a, lane)?, eval(b, lane)?),
    }
}

fn tokenize(text: &str) -> Result<Vec<(usize, Tok)>, (usize, String)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        let tok = match c {
            b' ' | b'\t' => {
                i += 1;
                continue;
            }
            b'(' => Tok::Open,
            b')' => Tok::Close,
            b'+' => Tok::Op(Op::Add),
            b'-' => Tok::Op(Op::Sub),
            b'*' => Tok::Op(Op::Mul),
            b'/' => Tok::Op(Op::Div),
            b'%' => Tok::Op(Op::Rem),
            b'&' => Tok::Op(Op::And),
            b'^' => Tok::Op(Op::Xor),
            b'|' => Tok::Op(Op::Or),
            b'<' | b'>' => {
                if b.get(i + 1) != Some(&c) {
                    return Err((i, format!("'{}' alone; allowed: << and >>", c as char)));
                }
                i += 1;
                Tok::Op(if c == b'<' { Op::Shl } else { Op::Shr })
            }
            b'0'..=b'9' => {
                let (digits, radix) = if b[i..].starts_with(b"0x") || b[i..].starts_with(b"0X") {
                    i += 2;
                    (i, 16)
                } else {
                    (i, 10)
                };
                while i < b.len() && b[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                let s = &text[digits..i];
                let v = u32::from_str_radix(s, radix).map_err(|_| {
                    let t = &text[start..i];
                    if !s.is_empty() && s.bytes().all(|d| (d as char).is_digit(radix)) {
                        (start, format!("number {t} is larger than 2^32 - 1"))
                    } else {
                        (start, format!("'{t}' is not a number"))
                    }
                })?;
                out.push((start, Tok::Num(v)));
                continue;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &text[start..i];
                if word != "lane" {
                    return Err((
                        start,
                        format!("unknown name '{word}' (the only name is lane)"),
                    ));
                }
                out.push((start, Tok::Lane));
                continue;
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or('?');
                return Err((
                    i,
                    format!(
                        "unexpected character '{}'",
                        crate::text::escape(&ch.to_string())
                    ),
                ));
            }
        };
        out.push((start, tok));
        i += 1;
    }
    Ok(out)
}

/// Binding power of each operator, C's order: `|` lowest, `* / %` highest.
fn precedence(op: Op) -> u8 {
    match op {
        Op::Or => 1,
        Op::Xor => 2,
        Op::And => 3,
        Op::Shl | Op::Shr => 4,
        Op::Add | Op::Sub => 5,
        Op::Mul | Op::Div | Op::Rem => 6,
    }
}

impl Parser<'_> {
    fn token_text(&self, k: usize) -> &str {
        let start = self.toks[k].0;
        let end = self.toks.get(k + 1).map_or(self.text.len(), |t| t.0);
        self.text[start..end].trim()
    }

    fn end(&self) -> usize {
        self.text.len()
    }

    /// Precedence climbing: operands joined by operators binding tighter than `min`.
    fn expr(&mut self, min: u8) -> Result<Node, (usize, String)> {
        let mut lhs = self.atom()?;
        while let Some(&(_, Tok::Op(op))) = self.toks.get(self.pos) {
            let p = precedence(op);
            if p <= min {
                break;
            }
            self.pos += 1;
            let rhs = self.expr(p)?;
            lhs = Node::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn atom(&mut self) -> Result<Node, (usize, String)> {
        let Some(&(at, tok)) = self.toks.get(self.pos) else {
            return Err((
                self.end(),
                "the expression ends where lane, a number or '(' was expected".into(),
            ));
        };
        self.pos += 1;
        match tok {
            Tok::Lane => Ok(Node::Lane),
            Tok::Num(v) => Ok(Node::Num(v)),
            Tok::Open => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err((at, format!("parentheses nested deeper than {MAX_DEPTH}")));
                }
                let inner = self.expr(0)?;
                match self.toks.get(self.pos) {
                    Some((_, Tok::Close)) => {
                        self.pos += 1;
                        self.depth -= 1;
                        Ok(inner)
                    }
                    _ => Err((at, "a '(' without its ')'".into())),
                }
            }
            Tok::Op(_) | Tok::Close => Err((
                at,
                format!(
                    "'{}' where lane, a number or '(' was expected (there is no unary minus)",
                    self.token_text(self.pos - 1)
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Third mutation round (2026-12-01).

    #[test]
    fn limits_positions_and_text() {
        let at = |t: &str| match AddrExpr::parse(t) {
            Err(SimError::AddrSyntax { at, .. }) => at,
            other => panic!("{t}: {other:?}"),
        };
        // Exactly MAX_EXPR_LEN bytes (spaces pad) parse; one more is refused at that byte.
        let pad = |n: usize| format!("lane{}", " ".repeat(n - 4));
        assert!(AddrExpr::parse(&pad(MAX_EXPR_LEN)).is_ok());
        assert_eq!(at(&pad(MAX_EXPR_LEN + 1)), MAX_EXPR_LEN);
        // A cut-short expression is reported at its end.
        assert_eq!(at("lane +"), 6);
        assert_eq!(at("lane * (4 +"), 11);
        // Parentheses side by side do not add up to the nesting limit.
        let flat = vec!["(1)"; MAX_DEPTH + 5].join(" + ");
        assert_eq!(
            AddrExpr::parse(&flat).unwrap().eval(0).unwrap(),
            MAX_DEPTH as u32 + 5
        );
        assert_eq!(
            AddrExpr::parse("lane * 4 + 8").unwrap().to_string(),
            "lane * 4 + 8"
        );
    }

    fn lanes(s: &str) -> [u32; 32] {
        AddrExpr::parse(s).unwrap().lanes().unwrap()
    }

    #[test]
    fn the_issue_example_and_c_precedence() {
        // (lane%8)*132+(lane/8)*4: 8 rows of a 132-byte pitch, then 4-byte steps.
        let v = lanes("(lane%8)*132+(lane/8)*4");
        assert_eq!(&v[..10], &[0, 132, 264, 396, 528, 660, 792, 924, 4, 136]);
        assert_eq!(v[31], 7 * 132 + 3 * 4);
        assert_eq!(lanes("lane*12")[5], 60);
        // * before +, + before <<, << before &, & before ^, ^ before |.
        assert_eq!(lanes("1+2*3")[0], 7);
        assert_eq!(lanes("1<<2+1")[0], 8);
        assert_eq!(lanes("6&3<<1")[0], 6);
        assert_eq!(lanes("1^3&1")[0], 0);
        assert_eq!(lanes("1|2^3")[0], 1);
        assert_eq!(lanes("10-3-2")[0], 5); // left-associative
        assert_eq!(lanes("100/5/2")[0], 10);
        assert_eq!(lanes("0x10 + 0XF")[0], 31);
        // The XOR swizzle of a 128-byte row: chunk ^ row.
        assert_eq!(lanes("((lane%8) ^ (lane/8)) * 16 + (lane/8) * 128")[9], 128);
    }

    #[test]
    fn checked_arithmetic_errors_name_expression_lane_and_operation() {
        for (s, lane, why) in [
            (
                "lane*4294967295",
                2,
                "2 * 4294967295 does not fit in 32 bits",
            ),
            (
                "4294967295+lane",
                1,
                "4294967295 + 1 does not fit in 32 bits",
            ),
            ("lane-1", 0, "0 - 1 is below 0"),
            ("lane/(lane-lane)", 0, "0 / 0 divides by zero"),
            ("lane%0", 0, "0 % 0 divides by zero"),
            ("1<<lane", 0, ""),
            ("lane<<32", 0, "shifts by 32 or more"),
            ("lane>>40", 0, "shifts by 32 or more"),
            (
                "0x80000000<<lane",
                1,
                "2147483648 << 1 does not fit in 32 bits",
            ),
        ] {
            let e = AddrExpr::parse(s).unwrap();
            match e.lanes() {
                Ok(_) if why.is_empty() => {}
                Err(err @ SimError::AddrEval { .. }) => {
                    let m = err.to_string();
                    assert!(
                        m.contains(&format!("'{s}'"))
                            && m.contains(&format!("lane {lane}"))
                            && m.contains(why),
                        "{m}"
                    );
                }
                other => panic!("{s}: {other:?}"),
            }
        }
    }

    #[test]
    fn syntax_errors_say_where_and_what() {
        for (s, why) in [
            ("", "ends where"),
            ("lane*", "ends where"),
            ("(lane", "without its ')'"),
            ("lane)", "')' without its '('"),
            ("lane lane", "'lane' after a complete expression"),
            ("-lane", "no unary minus"),
            ("lane < 2", "'<' alone"),
            ("x*4", "unknown name 'x'"),
            ("lane*4G", "'4G' is not a number"),
            ("4294967296", "larger than 2^32 - 1"),
            ("0x", "'0x' is not a number"),
            ("lane**2", "'*' where"),
            ("lane#", "unexpected character '#'"),
        ] {
            match AddrExpr::parse(s) {
                Err(e @ SimError::AddrSyntax { .. }) => {
                    let m = e.to_string();
                    assert!(m.contains(&format!("'{s}'")) && m.contains(why), "{s}: {m}");
                }
                other => panic!("{s}: {other:?}"),
            }
        }
        let deep = format!("{}lane{}", "(".repeat(65), ")".repeat(65));
        assert!(
            AddrExpr::parse(&deep)
                .unwrap_err()
                .to_string()
                .contains("deeper than 64")
        );
        let ok = format!("{}lane{}", "(".repeat(64), ")".repeat(64));
        assert_eq!(AddrExpr::parse(&ok).unwrap().eval(3).unwrap(), 3);
        assert!(AddrExpr::parse(&"1+".repeat(600)).is_err());
    }

    /// Independent evaluation in i128 of a random expression: the checked u32 result agrees
    /// where it is defined, and errors exactly where i128 leaves 0..2^32 or divides by zero or
    /// shifts by 32 or more.
    fn reference(n: &Node, lane: u32) -> Option<i128> {
        let v = match n {
            Node::Lane => lane as i128,
            Node::Num(v) => *v as i128,
            Node::Bin(op, a, b) => {
                let (a, b) = (reference(a, lane)?, reference(b, lane)?);
                match op {
                    Op::Add => a + b,
                    Op::Sub => a - b,
                    Op::Mul => a * b,
                    Op::Div | Op::Rem if b == 0 => return None,
                    Op::Div => a / b,
                    Op::Rem => a % b,
                    Op::Shl if b < 32 => a << b,
                    Op::Shr if b < 32 => a >> b,
                    Op::Shl | Op::Shr => return None,
                    Op::And => a & b,
                    Op::Xor => a ^ b,
                    Op::Or => a | b,
                }
            }
        };
        (0..=u32::MAX as i128).contains(&v).then_some(v)
    }

    fn print(n: &Node) -> String {
        match n {
            Node::Lane => "lane".into(),
            Node::Num(v) => v.to_string(),
            Node::Bin(op, a, b) => format!("({} {} {})", print(a), op.symbol(), print(b)),
        }
    }

    fn node() -> impl proptest::strategy::Strategy<Value = Node> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Node::Lane),
            (0u32..64).prop_map(Node::Num),
            any::<u32>().prop_map(Node::Num),
        ];
        leaf.prop_recursive(5, 32, 2, |inner| {
            (
                proptest::sample::select(vec![
                    Op::Add,
                    Op::Sub,
                    Op::Mul,
                    Op::Div,
                    Op::Rem,
                    Op::Shl,
                    Op::Shr,
                    Op::And,
                    Op::Xor,
                    Op::Or,
                ]),
                inner.clone(),
                inner,
            )
                .prop_map(|(op, a, b)| Node::Bin(op, Box::new(a), Box::new(b)))
        })
    }

    proptest::proptest! {
        /// Fully parenthesised random trees round-trip through the parser and evaluate like the
        /// i128 reference: same value, or an error exactly where the reference leaves u32.
        #[test]
        fn random_trees_match_the_i128_reference(n in node(), lane in 0u32..32) {
            let text = print(&n);
            let e = AddrExpr::parse(&text).unwrap();
            proptest::prop_assert_eq!(&e.root, &n);
            match (e.eval(lane), reference(&n, lane)) {
                (Ok(v), Some(r)) => proptest::prop_assert_eq!(v as i128, r),
                (Err(_), None) => {}
                (got, want) => proptest::prop_assert!(false, "{text} lane {lane}: {got:?} vs {want:?}"),
            }
        }

        /// Any string of the expression alphabet: parse and evaluate every lane without a
        /// panic or a hang (errors are fine).
        #[test]
        fn any_text_parses_or_errors(s in "[lane0-9x()+*/%^&|<> -]{0,40}") {
            if let Ok(e) = AddrExpr::parse(&s) {
                let _ = e.lanes();
            }
        }
    }
}
