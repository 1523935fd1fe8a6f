//! Issue #27: the CTA engine's scheduler over warps and asynchronous units, on small
//! hand-written PTX kernels: named barriers with counts (`bar.arrive`, `bar.red`), mbarrier
//! producer/consumer hand-overs (`mbarrier.arrive.expect_tx`, `complete_tx`,
//! `try_wait.parity`, `test_wait`), `elect.sync`, `barrier.cluster`, the cluster special
//! registers, `mapa`, `setmaxnreg`, `call`. Each value checked inside a kernel is checked by
//! the kernel itself: a wrong value reaches `call __assertfail`, which stops the run with an
//! error naming it (so a run that succeeds saw every value right). The expected values come
//! from the PTX ISA's definitions (cited at each test), the deadlock lines from the issue's
//! wording: barrier, phase, warps.

use tilelab::ptx::engine::{self, DEFAULT_MAX_INSTRUCTIONS, Launch, RunResult};
use tilelab::ptx::report::load;

const HEAD: &str = ".version 8.7\n.target sm_90a\n.address_size 64\n.extern .func __assertfail(.param .b64 a);\n.extern .func (.param .b32 r) vprintf(.param .b64 f);\n";

fn launch(block: u32) -> Launch {
    Launch {
        grid: [4, 1, 1],
        block: [block, 1, 1],
        cta: [3, 0, 0],
        args: vec![],
        tensor_maps: vec![],
        dynamic_smem: None,
        max_instructions: DEFAULT_MAX_INSTRUCTIONS,
        cluster: None,
    }
}

fn src(body: &str) -> String {
    format!("{HEAD}.visible .entry k()\n{{\n{body}\n}}\n")
}

/// Runs the kernel; the result or the one-line error.
fn run(body: &str, block: u32) -> Result<(RunResult, tilelab::ptx::decode::Program), String> {
    let s = src(body);
    let prog = load(&s, None).map_err(|e| e.to_string())?;
    let r = engine::run(&prog, &launch(block), None).map_err(|e| e.to_string())?;
    Ok((r, prog))
}

/// The 1-based line of the first line of the whole source containing `needle`.
fn line_of(body: &str, needle: &str) -> u32 {
    src(body)
        .lines()
        .position(|l| l.contains(needle))
        .map(|i| i as u32 + 1)
        .unwrap_or_else(|| panic!("{needle} not in the kernel"))
}

/// Executions of the instruction on `line`.
fn executions(r: &RunResult, prog: &tilelab::ptx::decode::Program, line: u32) -> u64 {
    let i = prog.insts.iter().position(|i| i.line == line).unwrap();
    r.stats[i].executions
}

/// Two warps. Thread 0 initialises `full` (1 arrival); after `bar.sync 0` warp 0 consumes:
/// it arrives at named barrier 1 (so that the producer completes only after the consumer
/// began to wait), waits with `try_wait.parity` on phase 0, then checks that lane l reads the
/// 8 bytes warp 1's lane l stored (its lane id); warp 1 produces: its elected lane arrives
/// expecting 256 bytes (32 lanes x 8), every lane stores, it waits at barrier 1, and the
/// elected lane completes the 256 bytes.
const PRODUCER_CONSUMER: &str = ".reg .pred %p<4>;
.reg .b32 %r<8>;
.reg .b64 %rd<4>;
.shared .align 8 .b64 full;
.shared .align 16 .b8 buf[256];
mov.u32 %r1, %tid.x;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra $INIT_DONE;
mbarrier.init.shared::cta.b64 [full], INIT_COUNT;
$INIT_DONE:
fence.mbarrier_init.release.cluster;
bar.sync 0;
and.b32 %r6, %r1, 31;
shl.b32 %r3, %r6, 3;
mov.u32 %r4, buf;
add.u32 %r5, %r4, %r3;
shr.u32 %r2, %r1, 5;
setp.ne.u32 %p2, %r2, 0;
@%p2 bra $PRODUCER;
mov.u32 %r7, 0;
bar.arrive 1, 64;
$WAIT:
mbarrier.try_wait.parity.shared::cta.b64 %p1, [full], %r7;
@!%p1 bra $WAIT;
ld.shared.u64 %rd3, [%r5];
cvt.u64.u32 %rd1, %r6;
setp.ne.u64 %p2, %rd3, %rd1;
@%p2 call.uni __assertfail, ();
ret;
$PRODUCER:
elect.sync %r2|%p3, 0xffffffff;
@%p3 mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [full], 256;
cvt.u64.u32 %rd1, %r6;
st.shared.u64 [%r5], %rd1;
bar.sync 1, 64;
COMPLETE
ret;";

#[test]
fn a_consumer_waits_for_the_producers_phase_and_reads_its_data() {
    let body = PRODUCER_CONSUMER.replace("INIT_COUNT", "1").replace(
        "COMPLETE",
        "@%p3 mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [full], 256;",
    );
    let (r, prog) = run(&body, 64).unwrap();
    // The consumer's try_wait ran twice: once on the incomplete phase (blocking warp 0 while
    // warp 1 ran), once after the phase completed.
    let wait = line_of(&body, "mbarrier.try_wait");
    assert_eq!(executions(&r, &prog, wait), 2);
    // A bounded run: 2 warps x about 20 instructions, not a spin through the budget.
    assert!(r.instructions < 60, "{} instructions", r.instructions);
}

#[test]
fn a_consumer_waiting_on_a_phase_nobody_completes_is_a_one_line_deadlock() {
    // The producer expects 256 bytes that never come.
    let body = PRODUCER_CONSUMER
        .replace("INIT_COUNT", "1")
        .replace("COMPLETE", "");
    let e = run(&body, 64).unwrap_err();
    let wait = line_of(&body, "mbarrier.try_wait");
    assert_eq!(
        e,
        format!(
            "deadlock: warp 0 waits at mbarrier 'full'+0 (shared address 0x0) (line {wait}) for phase 0 (parity 0) to complete: 0 of 1 arrivals and 256 transaction bytes pending, warp 1 has exited; no warp that could arrive on or complete what they wait for can run, and no asynchronous operation is in flight (64 threads in the CTA)"
        )
    );
    assert!(!e.contains('\n'));
    // Two arrivals expected, one given: the arrivals are what is missing.
    let body = PRODUCER_CONSUMER.replace("INIT_COUNT", "2").replace(
        "COMPLETE",
        "@%p3 mbarrier.complete_tx.shared::cta.b64 [full], 256;",
    );
    let e = run(&body, 64).unwrap_err();
    assert!(
        e.contains(
            "for phase 0 (parity 0) to complete: 1 of 2 arrivals and 0 transaction bytes pending"
        ),
        "{e}"
    );
}

/// `test_wait` never blocks (PTX ISA §9.7.13.15.16): a loop on it spins; the engine sees the
/// iteration change nothing, lets the producer run, and the loop ends once it arrived.
#[test]
fn a_test_wait_spin_loop_ends_when_the_producer_arrives() {
    let body = ".reg .pred %p<4>;
.reg .b32 %r<8>;
.shared .align 8 .b64 bars[2];
mov.u32 %r1, %tid.x;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra $I;
mbarrier.init.shared.b64 [bars+8], 32;
$I:
bar.sync 0;
shr.u32 %r2, %r1, 5;
setp.ne.u32 %p2, %r2, 0;
@%p2 bra $P;
mov.u32 %r7, 0;
$WAIT:
mbarrier.test_wait.parity.shared.b64 %p1, [bars+8], %r7;
@!%p1 bra $WAIT;
ret;
$P:
mbarrier.arrive.shared.b64 _, [bars+8];
ret;";
    let (r, _) = run(body, 64).unwrap();
    assert!(r.instructions < 60, "{} instructions", r.instructions);
}

/// The mbarrier's address through a generic pointer (`cvta.shared`), the state token of
/// `arrive_drop` and `test_wait` on it (not parity): lane 0 of each of two warps arrives once
/// with `arrive_drop` on an object expecting INIT arrivals (PTX ISA §9.7.13.15.14: each drop
/// also lowers the following phases' expected count).
#[test]
fn generic_addresses_state_tokens_and_arrive_drop() {
    let body = ".reg .pred %p<5>;
.reg .b32 %r<8>;
.reg .b64 %rd<6>;
.shared .align 8 .b64 bar;
mov.u32 %r1, %tid.x;
and.b32 %r2, %r1, 31;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra $I;
mbarrier.init.shared.b64 [bar], INIT;
$I:
bar.sync 0;
mov.u64 %rd1, bar;
cvta.shared.u64 %rd2, %rd1;
setp.eq.u32 %p2, %r2, 0;
setp.eq.u32 %p3, %r1, %r1;
@%p2 mbarrier.arrive_drop.b64 %rd3, [%rd2];
bar.sync 0;
@%p2 mbarrier.test_wait.b64 %p3, [%rd2], %rd3;
@!%p3 call.uni __assertfail, ();
ret;";
    // Two arrivals expected, two given: the phase of both tokens completed.
    run(&body.replace("INIT", "2"), 64).unwrap();
    // Three expected: phase 0 is still pending, test_wait is false.
    let e = run(&body.replace("INIT", "3"), 64).unwrap_err();
    assert!(e.contains("call to '__assertfail'"), "{e}");
    // One expected: warp 0's arrive_drop completes phase 0 and leaves phase 1 expecting 0,
    // so warp 1's is one arrival too many (undefined in the ISA): an error naming the object.
    let e = run(&body.replace("INIT", "1"), 64).unwrap_err();
    assert!(e.contains("mbarrier 'bar'+0 (shared address 0x0)"), "{e}");
    assert!(e.contains("more arrivals than pending"), "{e}");
    run(&body.replace("INIT", "1"), 32).unwrap();
}

/// Named barriers with a thread count (PTX ISA 9.7.13.1): warp 1 `bar.arrive 1, 64` (it does
/// not wait), warp 0 `bar.sync 1, 64`: 2 warps x 32 = 64 threads, the barrier completes.
#[test]
fn bar_arrive_and_bar_sync_with_a_count_meet() {
    let body = ".reg .pred %p<3>;
.reg .b32 %r<4>;
mov.u32 %r1, %tid.x;
setp.ge.u32 %p1, %r1, 32;
@%p1 bra $A;
bar.sync 1, COUNT;
ret;
$A:
bar.arrive 1, COUNT;
ret;";
    run(&body.replace("COUNT", "64"), 64).unwrap();
    let e = run(&body.replace("COUNT", "96"), 64).unwrap_err();
    let l = line_of(body, "bar.sync 1");
    // The one line: the barrier, its count, the waiting warps.
    assert!(
        e.starts_with(&format!(
            "deadlock: warp 0 waits at barrier 1 (line {l}, 96 threads), warp 1 has exited; the barrier can never complete (64 threads in the CTA)"
        )),
        "{e}"
    );
    // Two counts in one round: an error.
    let e = run(
        &body
            .replace("COUNT", "64")
            .replace("bar.arrive 1, 64", "bar.arrive 1, 128"),
        64,
    )
    .unwrap_err();
    assert!(e.contains("same thread count"), "{e}");
}

/// `bar.red` (PTX ISA 9.7.13.1): popc counts the threads whose predicate is true (tid < 10:
/// 10 of 64), and is false (not all), or is true.
#[test]
fn bar_red_reduces_the_predicates_of_all_threads() {
    let body = ".reg .pred %p<5>;
.reg .b32 %r<4>;
mov.u32 %r1, %tid.x;
setp.lt.u32 %p1, %r1, 10;
bar.red.popc.u32 %r2, 0, %p1;
setp.ne.u32 %p2, %r2, 10;
@%p2 call.uni __assertfail, ();
bar.red.and.pred %p3, 2, 64, %p1;
@%p3 call.uni __assertfail, ();
bar.red.or.pred %p4, 0, !%p1;
@!%p4 call.uni __assertfail, ();
ret;";
    run(body, 64).unwrap();
    // The check is live: 11 is not the count.
    let e = run(&body.replace("%r2, 10;", "%r2, 11;"), 64).unwrap_err();
    assert!(e.contains("__assertfail"), "{e}");
}

/// `elect.sync` (PTX ISA 9.7.13.12): the leader is the lowest active lane of membermask; on
/// the path of lanes 4-31 with membermask 0xfffffff0, lane 4, and exactly one lane's
/// predicate is true.
#[test]
fn elect_sync_elects_the_lowest_active_lane() {
    let body = ".reg .pred %p<5>;
.reg .b32 %r<5>;
mov.u32 %r1, %tid.x;
setp.lt.u32 %p1, %r1, 4;
@%p1 bra $END;
elect.sync %r2|%p2, 0xfffffff0;
setp.ne.u32 %p3, %r2, 4;
@%p3 call.uni __assertfail, ();
selp.u32 %r3, 1, 0, %p2;
setp.eq.u32 %p4, %r1, 4;
selp.u32 %r4, 1, 0, %p4;
setp.ne.u32 %p3, %r3, %r4;
@%p3 call.uni __assertfail, ();
elect.sync _|%p2, 0xfffffff0;
$END:
ret;";
    run(body, 32).unwrap();
    // A membermask without an executing lane is undefined: the one-line rule of shfl/vote.
    let e = run(&body.replace("0xfffffff0;\nsetp", "0xffffff00;\nsetp"), 32).unwrap_err();
    assert!(e.contains("elect.sync with membermask 0xffffff00"), "{e}");
}

/// The cluster special registers of a launch without a cluster (PTX ISA §10.11-§10.17): each
/// CTA is a cluster of one, so %clusterid is %ctaid (3 of 4 here), the CTA's rank 0 of 1,
/// %is_explicit_cluster false; `barrier.cluster` is a barrier of the CTA's warps, and `mapa`
/// to rank 0 gives the address back.
#[test]
fn a_cta_is_its_own_cluster() {
    let body = ".reg .pred %p<3>;
.reg .b32 %r<9>;
.shared .align 4 .b32 s;
mov.u32 %r1, %clusterid.x;
setp.ne.u32 %p1, %r1, 3;
@%p1 call.uni __assertfail, ();
mov.u32 %r2, %nclusterid.x;
setp.ne.u32 %p1, %r2, 4;
@%p1 call.uni __assertfail, ();
mov.u32 %r3, %cluster_ctarank;
mov.u32 %r4, %cluster_nctarank;
mov.u32 %r5, %cluster_ctaid.x;
mov.u32 %r6, %cluster_nctaid.y;
add.u32 %r7, %r3, %r5;
setp.ne.u32 %p1, %r7, 0;
@%p1 call.uni __assertfail, ();
add.u32 %r7, %r4, %r6;
setp.ne.u32 %p1, %r7, 2;
@%p1 call.uni __assertfail, ();
@%is_explicit_cluster call.uni __assertfail, ();
mov.u32 %r8, s;
mapa.shared::cluster.u32 %r7, %r8, RANK;
setp.ne.u32 %p1, %r7, %r8;
@%p1 call.uni __assertfail, ();
barrier.cluster.arrive.release.aligned;
barrier.cluster.wait.acquire.aligned;
barrier.cluster.arrive.relaxed;
barrier.cluster.wait;
ret;";
    run(&body.replace("RANK", "0"), 96).unwrap();
    let e = run(&body.replace("RANK", "1"), 96).unwrap_err();
    assert!(
        e.starts_with(&format!(
            "line {}: lane 0: mapa to CTA rank 1, but the cluster has 1 CTA",
            line_of(body, "mapa")
        )),
        "{e}"
    );
    let e = run(
        &body
            .replace("RANK", "0")
            .replace("barrier.cluster.arrive.relaxed;\n", ""),
        96,
    )
    .unwrap_err();
    assert!(
        e.contains("barrier.cluster.wait without a barrier.cluster.arrive"),
        "{e}"
    );
}

/// `call` to an extern function: on a path taken, one line naming it and the line; on a
/// path not taken, nothing (nvcc's printf and assert() set up `.param` blocks around it).
#[test]
fn a_call_stops_the_run_only_where_it_is_reached() {
    let body = ".reg .pred %p<3>;
.reg .b32 %r<5>;
.reg .b64 %rd<3>;
mov.u32 %r1, %tid.x;
setp.ge.u32 %p1, %r1, LIMIT;
@!%p1 bra $OK;
{
.param .b64 param0;
st.param.b64 [param0], %rd1;
.param .b32 retval0;
call.uni (retval0), vprintf, (param0);
ld.param.b32 %r2, [retval0];
}
$OK:
ret;";
    run(&body.replace("LIMIT", "1000"), 64).unwrap();
    let e = run(&body.replace("LIMIT", "40"), 64).unwrap_err();
    assert_eq!(
        e,
        format!(
            "line {}: call to 'vprintf': device-side printf; calls to functions are not simulated (lanes 0xffffff00 reach it)",
            line_of(body, "call.uni")
        )
    );
}

/// `setmaxnreg` takes 24..=256 registers in multiples of 8 (PTX ISA 9.7.17.1); the
/// `griddepcontrol`, `prefetch.tensormap`, `fence.proxy.async` forms run as nothing; the
/// bulk-copy and wgmma groups (empty here) never block.
#[test]
fn hopper_housekeeping_instructions_run() {
    let body = ".reg .b64 %rd<2>;
setmaxnreg.dec.sync.aligned.u32 N;
griddepcontrol.wait;
griddepcontrol.launch_dependents;
prefetch.tensormap [%rd1];
prefetch.global.L2 [%rd1];
fence.proxy.async.shared::cta;
fence.proxy.async.global;
fence.proxy.async;
fence.acq_rel.gpu;
cp.async.bulk.commit_group;
cp.async.bulk.wait_group.read 0;
cp.async.bulk.wait_group 1;
wgmma.fence.sync.aligned;
wgmma.commit_group.sync.aligned;
wgmma.wait_group.sync.aligned 0;
cp.async.wait_all;
ret;";
    run(&body.replace("N;", "240;"), 128).unwrap();
    run(&body.replace("N;", "24;"), 128).unwrap();
    for bad in ["23;", "257;", "100;"] {
        let e = run(&body.replace("N;", bad), 128).unwrap_err();
        assert!(e.contains("24..=256 and a multiple of 8"), "{bad}: {e}");
    }
}

/// The mbarrier rules of the PTX ISA as one-line errors: an init count outside
/// 1..=2^20-1, an arrive on an object never initialised, an address outside shared memory.
#[test]
fn mbarrier_misuse_is_a_one_line_error() {
    let k = |inst: &str| {
        format!(".reg .b64 %rd<3>;\n.reg .b32 %r<3>;\n.shared .align 8 .b64 bar[2];\n{inst}\nret;")
    };
    let e = run(&k("mbarrier.init.shared.b64 [bar], 1048576;"), 32).unwrap_err();
    assert!(e.contains("outside 1..=1048575"), "{e}");
    let e = run(&k("mbarrier.arrive.shared.b64 %rd1, [bar];"), 32).unwrap_err();
    assert!(e.contains("lane 0: mbarrier 'bar'+0 (shared address 0x0): mbarrier.arrive on an mbarrier object that is not initialised"), "{e}");
    let e = run(&k("mbarrier.inval.shared.b64 [bar+4];"), 32).unwrap_err();
    assert!(e.contains("not aligned to 8 bytes"), "{e}");
    let e = run(
        &k("mbarrier.try_wait.parity.shared.b64 %rd1, [bar], 0;"),
        32,
    )
    .unwrap_err();
    assert!(e.contains("does not agree with .pred"), "{e}");
}

/// `cp.async.mbarrier.arrive.noinc` (PTX ISA 9.7.9.25.3.5): each thread arrives once its prior
/// `cp.async`s complete, so 32 threads complete a phase that expects 32; without `.noinc` the
/// pending count is raised by one first, so the arrivals leave it unchanged and the phase
/// never completes.
#[test]
fn cp_async_mbarrier_arrive_counts_as_an_arrival_with_noinc_only() {
    let body = ".reg .pred %p<3>;
.reg .b32 %r<3>;
.shared .align 8 .b64 bar;
.shared .align 16 .b8 buf[512];
elect.sync _|%p1, 0xffffffff;
@%p1 mbarrier.init.shared::cta.b64 [bar], 32;
cp.async.mbarrier.arrive.NOINC.shared::cta.b64 [bar];
mov.u32 %r1, 0;
$W:
mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], %r1;
@!%p2 bra $W;
ret;";
    run(&body.replace("NOINC", "noinc"), 32).unwrap();
    let e = run(&body.replace(".NOINC", ""), 32).unwrap_err();
    assert!(
        e.contains("for phase 0 (parity 0) to complete: 32 of 32 arrivals"),
        "{e}"
    );
}

/// An mbarrier operation the PTX ISA does not have is refused at decode, naming it; it used to
/// run as `mbarrier.inval` (the decoder's last branch took anything else).
#[test]
fn an_unknown_mbarrier_operation_is_refused_not_run_as_inval() {
    let e = run(
        ".shared .align 8 .b64 full;\nmbarrier.bogus.shared.b64 [full];\nret;",
        32,
    )
    .unwrap_err();
    assert!(
        e.contains("unsupported instruction 'mbarrier.bogus.shared.b64'"),
        "{e}"
    );
    // The real inval still runs after an init.
    run(
        ".reg .pred %p;\n.reg .b32 %r;\n.shared .align 8 .b64 full;\nmov.u32 %r, %tid.x;\nsetp.eq.u32 %p, %r, 0;\n@%p mbarrier.init.shared.b64 [full], 1;\n@%p mbarrier.inval.shared.b64 [full];\nret;",
        32,
    )
    .unwrap();
}
