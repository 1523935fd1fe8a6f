//! `tilelab sim counts flash-attn --style hopper`: the Hopper kernel `kernels/fa3_fwd.cu`
//! ([`tilelab::sim::fa3`]): its persistent grid's schedule, the predicted SASS counts of one
//! compiled variant, and the dynamic counts (wgmma by shape, TMA copies and bytes, mbarrier
//! operations, named barriers, shared stores) of CTA 0, the busiest CTA and the grid.
//!
//! `--json` prints `{kernel: "flash-attn", style: "hopper", tiling, problem, sms,
//! dynamic_smem_bytes, schedule: {nq, bh, tiles, grid, heads_per_group, first_group_heads,
//! per_cta: [{tiles, key_blocks}]}, static:
//! {copies, hgmma, utmaldg, utmastg, sts}, cta0, busiest_index, busiest, grid}`, each count
//! block `{ctas, tiles, key_blocks, hgmma: [{role, ptx, sass, per_consumer, total,
//! warp_executions}], wgmma_groups_per_consumer, tma, mbarrier, barriers, sts, atomics}`.

use std::process::ExitCode;

use serde::Serialize;
use tilelab::sim::SimError;
use tilelab::sim::arch::Arch;
use tilelab::sim::fa3::{
    FA3_BLOCK, FA3_STAGES, FA3_THREADS, Fa3Counts, Fa3Report, Fa3Tiling, H200_SMS,
};
use tilelab::sim::instr::{SassClass, tma_sass};
use tilelab::sim::mma::MmaDtype;
use tilelab::sim::program::FlashProblem;

use super::FlashArgs;
use crate::cli::out::{self, emit, emit_json, group};

#[derive(Serialize)]
struct HopperJson<'a> {
    kernel: &'static str,
    style: &'static str,
    #[serde(flatten)]
    report: &'a Fa3Report,
}

/// Resolves the flags into the kernel variant, the problem and the SM count; every input error
/// is one line.
fn resolve(a: &FlashArgs) -> anyhow::Result<(Fa3Tiling, FlashProblem, u32)> {
    for (flag, given) in [("--layout", a.layout.is_some()), ("--lines", a.lines)] {
        if given {
            anyhow::bail!(
                "{flag} does not apply to --style hopper: its tiles are TMA boxes in 128-byte swizzle and it has no per-line program"
            );
        }
    }
    if let Some(w) = a.warps.filter(|&w| w != FA3_THREADS / 32) {
        anyhow::bail!(
            "--warps {w} is not allowed with --style hopper; allowed: 12 (a producer and two consumer warpgroups)"
        );
    }
    if Arch::parse(&a.arch)? != Arch::Sm90 {
        anyhow::bail!(
            "--arch {} is not allowed with --style hopper; allowed: sm_90 (the kernel is built for sm_90a)",
            a.arch
        );
    }
    let dtype = match a.dtype.as_deref() {
        None | Some("f16") | Some("fp16") => MmaDtype::F16,
        Some("bf16") => MmaDtype::Bf16,
        Some(d) => {
            return Err(SimError::Unknown {
                what: "dtype",
                given: d.to_string(),
                allowed: "f16, bf16 (FA_BF16 of kernels/fa3_fwd.cu)",
            }
            .into());
        }
    };
    let t = Fa3Tiling {
        bm: a.bm.unwrap_or(FA3_BLOCK),
        bn: a.bn.unwrap_or(FA3_BLOCK),
        head_dim: a.head_dim,
        stages: a.stages.unwrap_or(FA3_STAGES),
        causal: a.causal,
        dtype,
    };
    t.validate()?;
    let p = FlashProblem {
        batch: a.batch,
        heads: a.heads,
        seq: a.seq,
    };
    t.check_problem(&p)?;
    Ok((t, p, a.sms.unwrap_or(H200_SMS)))
}

/// `tilelab sim counts flash-attn --style hopper`.
pub(super) fn run(a: FlashArgs) -> anyhow::Result<ExitCode> {
    let (t, p, sms) = resolve(&a)?;
    let r = t.report(&p, sms)?;
    if a.json {
        emit_json(&HopperJson {
            kernel: "flash-attn",
            style: "hopper",
            report: &r,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut o = String::new();
    print(&mut o, &r);
    emit(&o)?;
    Ok(ExitCode::SUCCESS)
}

fn print(o: &mut String, r: &Fa3Report) {
    let (t, p, s) = (&r.tiling, &r.problem, &r.schedule);
    outln!(
        o,
        "{}",
        out::bold(&format!(
            "FlashAttention forward, hopper style (kernels/fa3_fwd.cu, sm_90a): bm {}, bn {}, d {}, {} stages, {}, {}; B {}, H {}, S {}",
            t.bm,
            t.bn,
            t.head_dim,
            t.stages,
            t.dtype.name(),
            if t.causal { "causal" } else { "not causal" },
            p.batch,
            p.heads,
            p.seq
        ))
    );
    let kb = |w: &tilelab::sim::fa3::CtaWork| w.key_blocks;
    let tl = |w: &tilelab::sim::fa3::CtaWork| w.tiles;
    let range = |f: &dyn Fn(&tilelab::sim::fa3::CtaWork) -> u64| {
        let lo = s.per_cta.iter().map(f).min().unwrap_or(0);
        let hi = s.per_cta.iter().map(f).max().unwrap_or(0);
        if lo == hi {
            group(lo)
        } else {
            format!("{}..{}", group(lo), group(hi))
        }
    };
    outln!(
        o,
        "persistent grid: {} tiles ({} query blocks x {} heads) on min({}, {} SMs) = {} CTAs of {} threads (producer warpgroup + 2 consumer warpgroups); {} B of dynamic shared memory",
        group(s.tiles),
        group(s.nq),
        group(s.bh),
        group(s.tiles),
        r.sms,
        group(s.grid),
        FA3_THREADS,
        group(r.dynamic_smem_bytes)
    );
    if r.tiling.causal {
        outln!(
            o,
            "  tile order: heads in groups of {} (the first of {}), each group's longest tiles first; tiles claimed by the CTAs as they get ahead (modelled: every key block the same time)",
            s.heads_per_group,
            s.first_group_heads
        );
    } else {
        outln!(
            o,
            "  tile order: one head after another; tiles claimed by the CTAs as they get ahead (modelled: every key block the same time)"
        );
    }
    outln!(
        o,
        "  per CTA: {} tiles, {} key blocks; CTA 0: {} tiles, {} key blocks; busiest CTA {}: {} tiles, {} key blocks",
        range(&tl),
        range(&kb),
        r.cta0.tiles,
        group(r.cta0.key_blocks),
        r.busiest_index,
        r.busiest.tiles,
        group(r.busiest.key_blocks)
    );
    let st = &r.static_counts;
    outln!(
        o,
        "static counts (SASS lines of this variant; predicted from the code structure, checked by `tilelab verify --group fa3`):\n  {:<34} {:>8} {:>9}",
        "consumer code copy",
        "S wgmma",
        "PV wgmma"
    );
    for c in &st.copies {
        outln!(o, "  {:<34} {:>8} {:>9}", c.label, c.s_hgmma, c.pv_hgmma);
    }
    for (sass, n) in &st.hgmma {
        outln!(o, "  {sass:<34} {n:>8}");
    }
    outln!(
        o,
        "  {:<34} {:>8}  (Q, K, V: D/64 each)",
        tma_sass(SassClass::Utmaldg, 2),
        st.utmaldg
    );
    outln!(
        o,
        "  {:<34} {:>8}  (O: D/64)",
        tma_sass(SassClass::Utmastg, 2),
        st.utmastg
    );
    outln!(
        o,
        "  {:<34} {:>8}  (epilogue st.shared.b32: D/4; the producer's tile number: 1)",
        SassClass::Sts.name(),
        st.sts
    );
    outln!(
        o,
        "  {:<34} {:>8}  (no ldmatrix / stmatrix)",
        "LDSM, STSM",
        0
    );
    let busiest = format!("CTA {}", r.busiest_index);
    outln!(
        o,
        "dynamic counts (wgmma: warpgroup instructions; waits: the fewest try_wait, one per wait call):\n  {:<48} {:>14} {:>14} {:>16}",
        "counter",
        "CTA 0",
        busiest,
        format!("grid ({} CTAs)", group(s.grid))
    );
    for (label, f) in rows(r) {
        outln!(
            o,
            "  {label:<48} {:>14} {:>14} {:>16}",
            group(f(&r.cta0)),
            group(f(&r.busiest)),
            group(f(&r.grid))
        );
    }
}

type Getter = Box<dyn Fn(&Fa3Counts) -> u64>;
type Field = fn(&Fa3Counts) -> u64;

/// The dynamic table's rows: label and value.
fn rows(r: &Fa3Report) -> Vec<(String, Getter)> {
    let mut v: Vec<(String, Getter)> = vec![
        ("tiles".into(), Box::new(|c: &Fa3Counts| c.tiles)),
        ("key blocks".into(), Box::new(|c: &Fa3Counts| c.key_blocks)),
    ];
    for (i, h) in r.cta0.hgmma.iter().enumerate() {
        v.push((
            format!("{} {}, per consumer", h.sass, h.role),
            Box::new(move |c: &Fa3Counts| c.hgmma[i].per_consumer),
        ));
        v.push((
            format!("{} {}, both consumers", h.sass, h.role),
            Box::new(move |c: &Fa3Counts| c.hgmma[i].total),
        ));
    }
    v.push((
        "HGMMA warp executions (x4 warps; ncu inst_executed)".into(),
        Box::new(|c: &Fa3Counts| c.hgmma.iter().map(|h| h.warp_executions).sum()),
    ));
    v.push((
        "wgmma commit groups, per consumer".into(),
        Box::new(|c: &Fa3Counts| c.wgmma_groups_per_consumer),
    ));
    let more: [(&str, Field); 19] = [
        ("TMA loads of Q (UTMALDG boxes 64x128)", |c| c.tma.q_loads),
        ("TMA loads of K", |c| c.tma.k_loads),
        ("TMA loads of V", |c| c.tma.v_loads),
        ("TMA loads, all", |c| c.tma.loads),
        ("TMA bytes loaded: Q", |c| c.tma.q_bytes),
        ("TMA bytes loaded: K", |c| c.tma.k_bytes),
        ("TMA bytes loaded: V", |c| c.tma.v_bytes),
        ("TMA bytes loaded, all", |c| c.tma.load_bytes),
        ("TMA stores of O (UTMASTG boxes 64x64)", |c| c.tma.o_stores),
        ("TMA bytes stored", |c| c.tma.store_bytes),
        ("mbarrier.init", |c| c.mbarrier.init),
        ("mbarrier.arrive.expect_tx (producer)", |c| {
            c.mbarrier.arrive_expect_tx
        }),
        ("mbarrier.arrive (consumer warps, lane 0)", |c| {
            c.mbarrier.arrive
        }),
        ("mbarrier waits, producer thread (min try_wait)", |c| {
            c.mbarrier.wait_producer
        }),
        ("mbarrier waits, consumer warps (min try_wait)", |c| {
            c.mbarrier.wait_consumer_warps
        }),
        ("__syncthreads (warps)", |c| c.barriers.syncthreads),
        ("bar.sync 3+c, 256: ping-pong turns (warps)", |c| {
            c.barriers.turn_sync
        }),
        ("bar.arrive 3+c, 256: hand-overs (warps)", |c| {
            c.barriers.turn_arrive
        }),
        ("bar.sync 1+c, 128: epilogue (warps)", |c| {
            c.barriers.epilogue_sync
        }),
    ];
    for (label, f) in more {
        v.push((label.into(), Box::new(f)));
    }
    v.push((
        "STS (st.shared.b32, warps); LDSM, STSM: 0".into(),
        Box::new(|c: &Fa3Counts| c.sts),
    ));
    v.push((
        "atomicAdd: tile claims and count-outs (producer)".into(),
        Box::new(|c: &Fa3Counts| c.atomics),
    ));
    v
}
