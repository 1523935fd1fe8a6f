//! Issue 27: cluster launches in `tilelab ptx` (`--cluster X,Y,Z`, `Launch::cluster`). Each
//! kernel here checks its own values against what the PTX ISA defines and loads from address 0
//! (a one-line error naming the line) when one differs, so a run without an error is the check;
//! the refusals are compared as the one line they are. The H200 measurement of a cluster launch
//! is `tests/ptx_hopper.rs`'s `hand_cluster_mc_wgmma_matches_the_h200`.

use tilelab::ptx::{self, Launch};

/// A launch; `cluster` as `--cluster` gives it (`None`: no `--cluster`).
fn launch(grid: u32, block: u32, cta: u32, cluster: impl Into<Option<[u32; 3]>>) -> Launch {
    Launch {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        cta: [cta, 0, 0],
        args: vec![],
        tensor_maps: vec![],
        dynamic_smem: None,
        max_instructions: 1_000_000,
        cluster: cluster.into(),
    }
}

fn kernel(directives: &str, body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{directives}\n{{\n.reg .pred %p<8>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<8>;\n{body}\nret;\n}}\n"
    )
}

/// The error of a run, as the one line `tilelab ptx` prints.
fn error(src: &str, l: &Launch) -> String {
    match ptx::simulate(src, None, l) {
        Ok(_) => panic!("the launch ran"),
        Err(e) => e.to_string(),
    }
}

fn runs(src: &str, l: &Launch) -> ptx::Report {
    ptx::simulate(src, None, l).unwrap_or_else(|e| panic!("{e}"))
}

/// The cluster special registers (PTX ISA §10.11-§10.17) of a CTA whose x is `ctaid.x` in
/// clusters of `1 << SHIFT` CTAs along x: `%cluster_ctarank` = `%cluster_ctaid.x` = ctaid.x mod
/// the cluster, `%clusterid.x` = ctaid.x / the cluster, `%cluster_nctarank` =
/// `%cluster_nctaid.x` = the cluster's CTAs, `%nclusterid.x` = NCL, `%is_explicit_cluster` =
/// EXPL. Checked by the kernel itself in every CTA of the cluster.
const SPECIALS: &str = "mov.u32 %r0, %ctaid.x;\nand.b32 %r1, %r0, MASK;\nshr.u32 %r2, %r0, SHIFT;\nmov.u32 %r3, %cluster_ctarank;\nmov.u32 %r4, %cluster_ctaid.x;\nmov.u32 %r5, %clusterid.x;\nmov.u32 %r6, %cluster_nctarank;\nmov.u32 %r7, %cluster_nctaid.x;\nmov.u32 %r8, %nclusterid.x;\nmov.pred %p1, %is_explicit_cluster;\nsetp.ne.u32 %p2, %r3, %r1;\nsetp.ne.u32 %p3, %r4, %r1;\nsetp.ne.u32 %p4, %r5, %r2;\nsetp.ne.or.u32 %p2, %r6, NCTA, %p2;\nsetp.ne.or.u32 %p3, %r7, NCTA, %p3;\nsetp.ne.or.u32 %p4, %r8, NCL, %p4;\nor.pred %p2, %p2, %p3;\nor.pred %p2, %p2, %p4;\nxor.pred %p5, %p1, EXPL;\nor.pred %p2, %p2, %p5;\nmov.u64 %rd0, 0;\n@%p2 ld.global.u32 %r9, [%rd0];";

fn specials(mask: u32, shift: u32, ncta: u32, ncl: u32, explicit: bool) -> String {
    SPECIALS
        .replace("MASK", &mask.to_string())
        .replace("SHIFT", &shift.to_string())
        .replace("NCTA", &ncta.to_string())
        .replace("NCL", &ncl.to_string())
        .replace("EXPL", if explicit { "1" } else { "0" })
}

/// `--grid 8 --cluster 4`: every CTA of `--cta`'s cluster runs (4 rows, ranks 0..3, the
/// `%ctaid`s of that cluster), each with the special registers the ISA gives it; without a
/// cluster each CTA is its own (rank 0 of 1, `%clusterid` = `%ctaid`, not explicit).
#[test]
fn the_cluster_special_registers_follow_the_isa() {
    let src = kernel("", &specials(3, 2, 4, 2, true));
    for cta in [0, 5, 7] {
        let r = runs(&src, &launch(8, 32, cta, [4, 1, 1]));
        assert_eq!(r.cluster, [4, 1, 1]);
        let first = cta / 4 * 4;
        let rows: Vec<([u32; 3], u32)> = r.ctas.iter().map(|c| (c.cta, c.rank)).collect();
        assert_eq!(
            rows,
            (0..4).map(|k| ([first + k, 0, 0], k)).collect::<Vec<_>>()
        );
        // 4 CTAs of one warp, each the same instructions: 4 times one CTA's.
        let one = r.ctas[0].totals.warp_instructions;
        assert_eq!(r.totals.warp_instructions, 4 * one);
    }
    let alone = kernel("", &specials(0, 0, 1, 8, false));
    let r = runs(&alone, &launch(8, 32, 3, None));
    assert_eq!((r.cluster, r.ctas.len()), ([1, 1, 1], 1));
}

/// The refusals of `check_cluster`: a grid that is no whole number of clusters, more than the
/// portable 8 CTAs, a zero dimension, and each cluster directive a launch disagrees with (PTX
/// ISA §11.7.1 `.reqnctapercluster`, §11.7.2 `.explicitcluster`, §11.7.3 `.maxclusterrank`).
#[test]
fn launches_the_cluster_rules_forbid_are_one_line() {
    let plain = kernel("", "");
    assert_eq!(
        error(&plain, &launch(3, 32, 0, [2, 1, 1])),
        "--grid 3,1,1 is not a whole number of clusters 2,1,1: the grid's x (3) must be a multiple of the cluster's (2)"
    );
    let mut l = launch(3, 32, 0, [3, 3, 1]);
    l.grid = [3, 3, 1];
    assert_eq!(
        error(&plain, &l),
        "cluster 3,3,1 has 9 CTAs, more than the portable limit of 8 (CUDA C++ Programming Guide, Thread Block Clusters; 16 on sm_90 needs cudaFuncAttributeNonPortableClusterSizeAllowed, not modelled)"
    );
    assert_eq!(
        error(&plain, &launch(2, 32, 0, [0, 1, 1])),
        "--cluster 0,1,1: every dimension must be at least 1"
    );
    let req = kernel(".reqnctapercluster 2, 1, 1", "");
    assert_eq!(
        error(&req, &launch(4, 32, 0, [4, 1, 1])),
        "--cluster 4,1,1 disagrees with kernel 'k''s .reqnctapercluster 2,1,1 (PTX ISA §11.7.1: a cluster shape given at launch must equal the directive's); leave --cluster out or give 2,1,1"
    );
    assert_eq!(
        error(&req, &launch(3, 32, 0, None)),
        "--grid 3,1,1 is not a whole number of clusters 2,1,1: the grid's x (3) must be a multiple of the cluster's (2)"
    );
    let max = kernel(".maxclusterrank 2", "");
    assert_eq!(
        error(&max, &launch(4, 32, 0, [4, 1, 1])),
        "cluster 4,1,1 has 4 CTAs, more than kernel 'k''s .maxclusterrank 2 (PTX ISA §11.7.3: the most CTAs a cluster may have)"
    );
    runs(&max, &launch(4, 32, 0, [2, 1, 1]));
    let explicit = kernel(".explicitcluster", "");
    assert_eq!(
        error(&explicit, &launch(4, 32, 0, None)),
        "kernel 'k' has .explicitcluster: it must be launched as clusters (PTX ISA §11.7.2); give --cluster X,Y,Z"
    );
    runs(&explicit, &launch(4, 32, 0, [2, 1, 1]));
    // As the H200's driver decides (tests/data/hopper_probes/h200_cluster_rules.json): a
    // cluster of 1x1x1 given at launch is a cluster launch, so `.explicitcluster` runs with it
    // and `.reqnctapercluster 2` refuses it.
    runs(&explicit, &launch(4, 32, 0, [1, 1, 1]));
    assert_eq!(
        error(&req, &launch(4, 32, 0, [1, 1, 1])),
        "--cluster 1,1,1 disagrees with kernel 'k''s .reqnctapercluster 2,1,1 (PTX ISA §11.7.1: a cluster shape given at launch must equal the directive's); leave --cluster out or give 2,1,1"
    );
}

/// A `.reqnctapercluster 2` kernel launched without `--cluster` runs as clusters of 2, an
/// explicit cluster launch (`%is_explicit_cluster` true: the shape is the kernel's own).
#[test]
fn a_reqnctapercluster_kernel_runs_its_own_shape() {
    let src = kernel(".reqnctapercluster 2", &specials(1, 1, 2, 2, true));
    let r = runs(&src, &launch(4, 32, 2, None));
    assert_eq!((r.cluster, r.ctas.len()), ([2, 1, 1], 2));
    let r = runs(&src, &launch(4, 32, 2, [2, 1, 1]));
    assert_eq!(r.cluster, [2, 1, 1]);
}

/// Each CTA of a cluster of 2 stores `(rank + 1) * 100 + tid` into the peer's `slot[tid]`
/// (`mapa.shared::cluster` to rank ^ 1, `st.shared::cluster`: PTX ISA 9.7.9.22 mapa, the same
/// variable in the target CTA) and arrives on the peer's mbarrier (count 32: PTX ISA
/// §9.7.13.15.13 mbarrier.arrive with a `.shared::cluster` address arrives on the object in
/// that CTA); then waits on its own and checks what the peer sent. ARRIVE is replaced by the
/// arrive (or nothing).
const EXCHANGE: &str = ".shared .align 8 .b64 bar;\n.shared .align 4 .b32 slot[32];\nmov.u32 %r0, %tid.x;\nmov.u32 %r1, %cluster_ctarank;\nmov.u32 %r2, bar;\nmov.u32 %r3, slot;\nsetp.eq.u32 %p0, %r0, 0;\n@%p0 mbarrier.init.shared::cta.b64 [%r2], 32;\nbarrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\nxor.b32 %r4, %r1, 1;\nshl.b32 %r5, %r0, 2;\nadd.u32 %r6, %r3, %r5;\nmapa.shared::cluster.u32 %r7, %r6, %r4;\nadd.u32 %r8, %r1, 1;\nmul.lo.u32 %r8, %r8, 100;\nadd.u32 %r8, %r8, %r0;\nst.shared::cluster.u32 [%r7], %r8;\nmapa.shared::cluster.u32 %r9, %r2, %r4;\nARRIVE\nmov.u32 %r10, 0;\n$W:\nmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], %r10;\n@!%p1 bra $W;\nld.shared::cta.u32 %r11, [%r6];\nadd.u32 %r12, %r4, 1;\nmul.lo.u32 %r12, %r12, 100;\nadd.u32 %r12, %r12, %r0;\nsetp.ne.u32 %p2, %r11, %r12;\nmov.u64 %rd0, 0;\n@%p2 ld.global.u32 %r13, [%rd0];\nbarrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;";

const REMOTE_ARRIVE: &str = "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r9];";

#[test]
fn a_dsmem_exchange_with_a_remote_arrive_completes_the_peers_phase() {
    let src = kernel("", &EXCHANGE.replace("ARRIVE", REMOTE_ARRIVE));
    for cta in [0, 1] {
        let r = runs(&src, &launch(2, 32, cta, [2, 1, 1]));
        // One warp per CTA stores 32 x 4 bytes to the other: distributed shared memory, no
        // STS and no shared-store wavefronts (as the H200 counts it, hand_cluster_mc_wgmma).
        let t = &r.totals;
        assert_eq!((t.dshared_st, t.dshared_st_bytes), (2, 256));
        assert_eq!((t.sass.STS, t.shared_st_wavefronts), (0, 0));
        assert_eq!(t.sass.LDS, 2);
    }
    // The same addresses through generic mapa (cvta.shared, then mapa.u64): the same exchange.
    let generic = EXCHANGE
        .replace("ARRIVE", REMOTE_ARRIVE)
        .replace(
            "mapa.shared::cluster.u32 %r7, %r6, %r4;",
            "cvt.u64.u32 %rd1, %r6;\ncvta.shared.u64 %rd1, %rd1;\nmapa.u64 %rd2, %rd1, %r4;",
        )
        .replace("st.shared::cluster.u32 [%r7], %r8;", "st.u32 [%rd2], %r8;");
    runs(&kernel("", &generic), &launch(2, 32, 0, [2, 1, 1]));
}

/// Without the remote arrive nobody completes either CTA's phase: one line naming each CTA
/// (its `%ctaid` and rank), the barrier, its phase and the waiting warp.
#[test]
fn a_missing_remote_arrive_is_a_deadlock_naming_both_ctas() {
    let src = kernel("", &EXCHANGE.replace("ARRIVE", ""));
    let e = error(&src, &launch(2, 32, 0, [2, 1, 1]));
    assert_eq!(e.lines().count(), 1, "{e}");
    for cta in [
        "CTA (0,0,0) (cluster rank 0): warp 0 waits at mbarrier 'bar'+0 (shared address 0x0) (line 32) for phase 0 (parity 0) to complete: 32 of 32 arrivals",
        "CTA (1,0,0) (cluster rank 1): warp 0 waits at mbarrier 'bar'+0",
    ] {
        assert!(e.contains(cta), "{e}");
    }
}

/// What another CTA's mbarrier does not take (PTX ISA §9.7.13.15: test_wait/try_wait and init
/// act on the executing CTA's object; a remote arrive's state is the sink `_`), and a `mapa` to
/// a rank the cluster does not have (PTX ISA 9.7.9.22).
#[test]
fn remote_mbarrier_and_mapa_misuse_is_one_line() {
    let wait = EXCHANGE.replace(
        "ARRIVE",
        "mbarrier.try_wait.parity.shared::cluster.b64 %p3, [%r9], 0;",
    );
    let e = error(&kernel("", &wait), &launch(2, 32, 0, [2, 1, 1]));
    // Rank 1 gets there first: its arrive completed the cluster barrier's phase and it ran on.
    assert!(
        e.starts_with("line 29: CTA (1,0,0): lane 0: mbarrier.try_wait on the object at offset 0x0 of the CTA of cluster rank 0"),
        "{e}"
    );
    let state = EXCHANGE.replace("ARRIVE", "mbarrier.arrive.shared::cluster.b64 %rd3, [%r9];");
    let e = error(&kernel("", &state), &launch(2, 32, 0, [2, 1, 1]));
    assert!(
        e.contains("mbarrier.arrive on the object at offset 0x0 of the CTA of cluster rank 0"),
        "{e}"
    );
    let far = EXCHANGE
        .replace("ARRIVE", REMOTE_ARRIVE)
        .replace("xor.b32 %r4, %r1, 1;", "mov.u32 %r4, 2;");
    let e = error(&kernel("", &far), &launch(2, 32, 0, [2, 1, 1]));
    assert!(
        e.contains("lane 0: mapa to CTA rank 2, but the cluster has 2 CTAs (ranks 0..=1"),
        "{e}"
    );
}

/// `cp.async.bulk...multicast::cluster` of 16 bytes from a `.global` array (PTX ISA
/// 9.7.9.25.4.1 cp.async.bulk: the data lands at the same CTA-relative offset in each CTA of
/// ctaMask, and each destination CTA's mbarrier at the same offset as `mbar` gets the
/// complete-tx): with mask 0b11 both CTAs receive {11, 22, 33, 44} and their phases complete;
/// the box counts once per receiving CTA in the TMA bytes, the instruction once.
const MULTICAST: &str = ".shared .align 8 .b64 bar;\n.shared .align 16 .b32 dst[4];\nmov.u32 %r0, %tid.x;\nmov.u32 %r1, %cluster_ctarank;\nmov.u32 %r2, bar;\nmov.u32 %r3, dst;\nsetp.eq.u32 %p0, %r0, 0;\n@%p0 mbarrier.init.shared::cta.b64 [%r2], 1;\nfence.mbarrier_init.release.cluster;\nbarrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n@%p0 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 16;\nsetp.eq.u32 %p1, %r1, 0;\nand.pred %p1, %p1, %p0;\nmov.u64 %rd1, src;\nmov.u16 %rs1, MASK;\n@%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r3], [%rd1], 16, [%r2], %rs1;\nmov.u32 %r10, 0;\n$W:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], %r10;\n@!%p2 bra $W;\nld.shared::cta.v4.u32 {%r20, %r21, %r22, %r23}, [%r3];\nsetp.ne.u32 %p3, %r20, 11;\nsetp.ne.or.u32 %p3, %r21, 22, %p3;\nsetp.ne.or.u32 %p3, %r22, 33, %p3;\nsetp.ne.or.u32 %p3, %r23, 44, %p3;\nmov.u64 %rd0, 0;\n@%p3 ld.global.u32 %r13, [%rd0];\nbarrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;";

fn multicast(mask: u32) -> String {
    format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n.global .align 16 .b32 src[4] = {{11, 22, 33, 44}};\n.visible .entry k()\n{{\n.reg .pred %p<8>;\n.reg .b16 %rs<4>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<8>;\n{}\nret;\n}}\n",
        MULTICAST.replace("MASK", &mask.to_string())
    )
}

#[test]
fn a_multicast_lands_in_every_masked_cta_and_completes_each_mbarrier() {
    let r = runs(&multicast(3), &launch(2, 32, 1, [2, 1, 1]));
    let t = &r.totals;
    assert_eq!(
        (t.tma_ld, t.sass.UTMALDG + t.sass.UBLKCP, t.tma_ld_bytes),
        (1, 1, 32)
    );
    assert_eq!(r.ctas[1].totals.tma_ld, 0, "rank 1 issues nothing");
}

/// With ctaMask 0b01 only rank 0 receives: rank 1's phase, which expects 16 bytes, never
/// completes (one line naming its mbarrier and the bytes), and a mask naming a rank the
/// cluster does not have is refused.
#[test]
fn a_multicast_misses_the_ctas_outside_its_mask() {
    let e = error(&multicast(1), &launch(2, 32, 0, [2, 1, 1]));
    assert!(
        e.contains(
            "CTA (1,0,0) (cluster rank 1): warp 0 waits at mbarrier 'bar'+0 (shared address 0x0)"
        ) && e.contains("0 of 1 arrivals and 16 transaction bytes pending"),
        "{e}"
    );
    let e = error(&multicast(4), &launch(2, 32, 0, [2, 1, 1]));
    assert!(
        e.contains(".multicast::cluster with ctaMask 0x0004: each bit is a CTA's cluster rank, and the cluster has 2 CTAs"),
        "{e}"
    );
}

/// `barrier.cluster` waits for every warp of every CTA (PTX ISA 9.7.13.2): a CTA whose warp
/// exits before arriving lets the others pass (exited threads do not hold a phase), but a
/// warp of one CTA that never arrives while it waits elsewhere holds both CTAs.
#[test]
fn barrier_cluster_spans_the_ctas() {
    // Rank 1's warp waits on an mbarrier nobody arrives on before its barrier.cluster.
    let body = ".shared .align 8 .b64 bar;\nmov.u32 %r1, %cluster_ctarank;\nmov.u32 %r2, bar;\nmbarrier.init.shared::cta.b64 [%r2], 1;\nsetp.eq.u32 %p0, %r1, 1;\nmov.u32 %r10, 0;\n$W:\n@%p0 mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], %r10;\n@%p0 bra.uni $X;\nbra.uni $Y;\n$X:\n@!%p2 bra $W;\n$Y:\nbarrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;";
    let e = error(&kernel("", body), &launch(2, 32, 0, [2, 1, 1]));
    assert!(
        e.contains("CTA (0,0,0) (cluster rank 0): warp 0 waits at barrier.cluster.wait (line 24) for cluster phase 0: 1 of 2 warps of the cluster's 2 CTAs arrived"),
        "{e}"
    );
}

/// Every CTA of a cluster has its own registers, frames and shared memory: the launch's
/// memory bound (`MAX_LAUNCH_BYTES`, docs/robustness.md) counts them all. 20,000 registers x
/// 1,024 threads x 8 bytes = 163,840,000 bytes fit for one CTA, not for a cluster of 8.
#[test]
fn a_cluster_counts_every_ctas_memory_toward_the_launch_bound() {
    // The register file holds the registers instructions name (a declared, unnamed one costs
    // nothing), so the kernel names all 20,000: 20,000 x 1,024 threads x 8 bytes per CTA.
    let names: String = (0..20_000)
        .map(|i| format!("mov.u32 %r{i}, 0;\n"))
        .collect();
    let src = format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<20000>;\n{names}ret;\n}}\n"
    );
    let src = src.as_str();
    runs(src, &launch(8, 1024, 0, None));
    let e = error(src, &launch(8, 1024, 0, [8, 1, 1]));
    let need: u64 = e
        .strip_prefix("the launch needs ")
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{e}"));
    assert!(need >= 8 * 163_840_000, "{e}");
    assert!(
        e.contains("each of the cluster's 8 CTAs") && e.contains("MAX_LAUNCH_BYTES"),
        "{e}"
    );
}
