//! Per-lane helpers of the engine's instruction families, as macros (they expand in place,
//! so `?` and `return` inside a lane's body leave the family function).

/// The value of source operand `$s` in lane `$l` of register file `$regs` (an immediate as
/// is).
macro_rules! v {
    ($regs:ident, $s:expr, $l:expr) => {
        match $s {
            $crate::ptx::decode::Src::Reg(r) => {
                $regs[r as usize * $crate::sim::bank::WARP_SIZE + $l]
            }
            $crate::ptx::decode::Src::Imm(v) => v,
        }
    };
}

/// Runs `$body` for each lane `$l` of `$mask`, lowest first.
macro_rules! each {
    ($mask:expr, |$l:ident| $body:expr) => {
        let mut m: u32 = $mask;
        while m != 0 {
            let $l = m.trailing_zeros() as usize;
            m &= m - 1;
            $body;
        }
    };
}

/// Writes `$v` to register `$d` of lane `$l`, noting in `$changed` whether the value changed
/// (a loop iteration that changes nothing is a spin: `Warp::changed`).
macro_rules! set {
    ($changed:ident, $regs:ident, $d:expr, $l:expr, $v:expr) => {{
        let v = $v;
        let slot = &mut $regs[$d as usize * $crate::sim::bank::WARP_SIZE + $l];
        $changed |= *slot != v;
        *slot = v;
    }};
}
