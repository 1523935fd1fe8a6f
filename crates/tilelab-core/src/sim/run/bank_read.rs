//! The shared-memory reads `tilelab sim bank-conflicts` costs: a whole tile read with an
//! [`Access`] pattern under one layout ([`read_tile`], with the pattern's default element type
//! and layouts from [`tile_defaults`]), or one warp request whose lane byte offsets are an
//! address expression over `lane` ([`addr_request`]).
//!
//! Every request is checked as the GPU checks it ([`exec::check_request`]: alignment, the
//! range of sm's shared memory) before it is costed.

use crate::sim::access::{self, Access, TileRequest};
use crate::sim::addr::AddrExpr;
use crate::sim::bank::{RequestCost, SharedMemoryConfig, WARP_SIZE, WarpRequest};
use crate::sim::error::SimError;
use crate::sim::exec;
use crate::sim::instr::{AccessWidth, CpAsyncKind, Instruction};
use crate::sim::layout::Layout;
use crate::sim::stats::AccessStats;

/// The element type and the layouts of a tile read: `dtype` and `layouts` when given, else
/// the pattern's defaults ([`Access::default_dtype`], [`Access::default_layouts`]).
pub fn tile_defaults(
    access: Access,
    dtype: Option<&str>,
    layouts: &[String],
) -> (String, Vec<String>) {
    let dtype = dtype.unwrap_or(access.default_dtype()).to_string();
    let layouts = if layouts.is_empty() {
        access
            .default_layouts()
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        layouts.to_vec()
    };
    (dtype, layouts)
}

/// One layout's read of a tile: every request the warp issues and its cost.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutRead {
    /// The layout as given, control bytes escaped (for messages and reports).
    pub spec: String,
    /// The parsed layout.
    pub layout: Layout,
    /// The requests, in issue order ([`access::requests`]).
    pub requests: Vec<TileRequest>,
    /// Each request's cost (wavefronts, ideal), in the same order.
    pub costs: Vec<RequestCost>,
    /// The costs added up.
    pub stats: AccessStats,
}

/// Reads the `rows` × `cols` tile of `elem_bytes`-byte elements stored under layout `spec`
/// with `access`, on the default shared memory ([`SharedMemoryConfig::default`]).
///
/// # Errors
/// A layout that does not parse or does not fit the shared memory per block; a pattern that
/// cannot read the tile ([`access::requests`]); a request the GPU would refuse (misaligned,
/// out of range), named by its label and the layout.
pub fn read_tile(
    spec: &str,
    access: Access,
    rows: u32,
    cols: u32,
    elem_bytes: u32,
) -> Result<LayoutRead, SimError> {
    let layout = Layout::parse(spec, rows, cols, elem_bytes)?;
    // The spec is quoted in messages: control bytes escaped (`trim` lets a tab through).
    let spec = crate::text::escape(spec).to_string();
    let smem = SharedMemoryConfig::default();
    if layout.size_bytes() > smem.size_bytes {
        return Err(SimError::Invalid(format!(
            "the {rows}x{cols} tile of {elem_bytes}-byte elements under layout '{spec}' needs {} bytes of shared memory; {} allows at most {} bytes per block",
            layout.size_bytes(),
            smem.arch,
            smem.size_bytes
        )));
    }
    let requests = access::requests(access, &layout)?;
    // Misaligned or out-of-range addresses are errors, as on the GPU.
    let costs = requests
        .iter()
        .map(|t| {
            exec::check_request(&t.request, &smem)
                .map_err(|e| SimError::Invalid(format!("{} under layout '{spec}': {e}", t.label)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let stats = costs.iter().copied().sum();
    Ok(LayoutRead {
        spec,
        layout,
        requests,
        costs,
        stats,
    })
}

/// What one request of [`addr_request`] does with its lanes' bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrOp {
    /// `ld.shared`.
    Ld,
    /// `st.shared`.
    St,
    /// `cp.async.ca.shared.global` (4, 8 or 16 bytes per lane, sources in global memory).
    CpAsyncCa,
}

/// One request given as address expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddrRequestSpec<'a> {
    /// Each lane's shared-memory byte offset, an expression over `lane`.
    pub expr: &'a str,
    /// Bytes per lane: 1, 2, 4, 8 or 16 (4, 8 or 16 for `cp.async.ca`); default 4.
    pub width: Option<u32>,
    /// Load, store or async copy.
    pub op: AddrOp,
    /// Active lanes, bit i = lane i, hex (`0x…`) or decimal; default all 32.
    pub mask: Option<&'a str>,
    /// `cp.async.ca` only: each lane's global source byte address, an expression over `lane`;
    /// default `lane*W` (W = the width: the contiguous tile copy).
    pub src: Option<&'a str>,
}

/// The request of an [`AddrRequestSpec`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddrRequest {
    /// The warp request (inactive lanes' offsets are 0).
    pub request: WarpRequest,
    /// `cp.async.ca`: the source expression used (given or the default); else `None`.
    pub src_expr: Option<String>,
}

/// A lane mask: hex (`0x…`) or decimal, at least one lane.
///
/// # Errors
/// [`SimError::Invalid`]: not a 32-bit number, or no active lane.
pub fn parse_lane_mask(s: &str) -> Result<u32, SimError> {
    let t = s.trim();
    let (digits, radix) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (t, 10),
    };
    let bad = || {
        SimError::Invalid(format!(
            "bad --mask '{s}'; allowed: a 32-bit lane mask, hex or decimal, e.g. 0xffffffff, 0x0000ffff, 255"
        ))
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(bad());
    }
    let m = u32::from_str_radix(digits, radix).map_err(|_| bad())?;
    if m == 0 {
        return Err(SimError::Invalid(format!(
            "--mask {s} has no active lane; allowed: 0x1..=0xffffffff"
        )));
    }
    Ok(m)
}

/// The instruction of `op` at `width` bytes per lane.
fn addr_instruction(op: AddrOp, width: u32) -> Result<Instruction, SimError> {
    let w = AccessWidth::from_bytes(width).ok_or_else(|| {
        SimError::Invalid(format!(
            "--width {width} is not allowed; allowed: 1, 2, 4, 8, 16 bytes per lane"
        ))
    })?;
    Ok(match op {
        AddrOp::Ld => Instruction::Ld(w),
        AddrOp::St => Instruction::St(w),
        AddrOp::CpAsyncCa => Instruction::CpAsync(match width {
            4 => CpAsyncKind::Ca4,
            8 => CpAsyncKind::Ca8,
            16 => CpAsyncKind::Ca16,
            _ => {
                return Err(SimError::Invalid(format!(
                    "--width {width} is not allowed with --op cp.async.ca; allowed: 4, 8, 16 bytes per lane"
                )));
            }
        }),
    })
}

/// Builds the request: the instruction, the active lanes' offsets (only active lanes are
/// evaluated) and, for `cp.async.ca`, their global sources.
///
/// # Errors
/// An expression that does not parse or fails at an active lane; a width the instruction
/// does not have; `src` for an instruction that reads no global memory; a bad mask.
pub fn addr_request(spec: &AddrRequestSpec) -> Result<AddrRequest, SimError> {
    let e = AddrExpr::parse(spec.expr)?;
    let width = spec.width.unwrap_or(4);
    let ins = addr_instruction(spec.op, width)?;
    let cp_async = matches!(ins, Instruction::CpAsync(_));
    if spec.src.is_some() && !cp_async {
        return Err(SimError::Invalid(format!(
            "--src is for --op cp.async.ca (global source addresses); {ins} reads none"
        )));
    }
    let mask = spec.mask.map_or(Ok(u32::MAX), parse_lane_mask)?;
    let active = |lane: usize| mask >> lane & 1 == 1;
    // Inactive lanes give no address: only active ones are evaluated (and may fail).
    let mut offs = [0u32; WARP_SIZE];
    for (lane, o) in offs.iter_mut().enumerate() {
        if active(lane) {
            *o = e.eval(lane as u32)?;
        }
    }
    let mut request = WarpRequest::new(ins, offs);
    request.active_mask = mask;
    // cp.async: the source expression, `lane*W` (the contiguous copy) unless one is given.
    let src_expr = cp_async.then(|| {
        spec.src
            .map_or_else(|| format!("lane*{width}"), str::to_string)
    });
    if let Some(src_expr) = &src_expr {
        let in_src = |e: SimError| SimError::Invalid(format!("--src: {e}"));
        let se = AddrExpr::parse(src_expr).map_err(in_src)?;
        let mut src = [0u64; WARP_SIZE];
        for (lane, g) in src.iter_mut().enumerate() {
            if active(lane) {
                *g = u64::from(se.eval(lane as u32).map_err(in_src)?);
            }
        }
        request.global_addrs = Some(Box::new(src));
    }
    Ok(AddrRequest { request, src_expr })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values `tests/sim_cli.rs` checks through `tilelab sim bank-conflicts`.
    #[test]
    fn column_reads_of_the_article_tile() {
        // The 32x64 f32 K tile read down columns: 64 requests, each a 32-way conflict.
        let r = read_tile("row", Access::Col, 32, 64, 4).unwrap();
        assert_eq!(r.requests.len(), 64);
        assert_eq!((r.stats.wavefronts, r.stats.ideal), (64 * 32, 64));
        let (dtype, layouts) = tile_defaults(Access::Ldmatrix { trans: false }, None, &[]);
        assert_eq!(
            (dtype.as_str(), layouts),
            ("f16", vec!["row".to_string(), "swizzle:3,3,3".to_string()])
        );
    }

    #[test]
    fn masks_and_widths() {
        assert_eq!(parse_lane_mask("0xffff").unwrap(), 0xffff);
        assert!(
            parse_lane_mask("0")
                .unwrap_err()
                .to_string()
                .contains("no active lane")
        );
        let spec = AddrRequestSpec {
            expr: "lane*4",
            width: Some(2),
            op: AddrOp::CpAsyncCa,
            mask: None,
            src: None,
        };
        assert!(
            addr_request(&spec)
                .unwrap_err()
                .to_string()
                .contains("4, 8, 16 bytes")
        );
        let r = addr_request(&AddrRequestSpec {
            width: Some(16),
            ..spec
        })
        .unwrap();
        assert_eq!(r.src_expr.as_deref(), Some("lane*16"));
    }
}
