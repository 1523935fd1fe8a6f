//! `tilelab tui --ptx` on a Hopper kernel: the hand-written two-stage TMA -> mbarrier -> wgmma
//! pipeline `tests/data/ptx_hopper/hand_tma_wgmma_pipe.ptx` (producer warp 4, consumer
//! warpgroup 0; made by `scripts/research/hopper_fixtures/gen_handwritten.py`), launched as its H200
//! launch file gives (`hand_tma_wgmma_pipe.json`: 160 threads, 33,792 bytes of dynamic shared
//! memory, `--arg 3=4`, both maps `f16:256,64:512:64,64:128B`), drawn into ratatui's
//! `TestBackend` and driven by messages as keys would send them.
//!
//! Expected values come from the PTX and the PTX ISA, worked by hand, never from the code under
//! test:
//! * shared memory: `full_bar` at 0, `empty_bar` at 16, `dsmem` (`.align 1024`) at 1024, so the
//!   kernel's `(dsmem + 1023) & -1024` is 1024; stage s's A tile at 1024 + 16384·s, B 8 KiB
//!   after it;
//! * descriptors (PTX ISA 9.7.15.5.1: start >> 4 in bits 0-13, LBO >> 4 in 16-29, SBO >> 4 in
//!   32-45, layout type in 62-63): the kernel ORs `4611686293305360384` = 0x4000004000010000
//!   (LBO 16, SBO 1024, type 1 = 128B swizzle) with `(addr & 0x3ffff) >> 4`, so the first
//!   wgmma's A is 0x4000004000010040 (start 0x400), B 0x4000004000010240 (start 0x2400), and
//!   the k-step `+2` moves the start 32 bytes;
//! * the 128B swizzle (PTX ISA, tensor copy swizzle modes; CuTe `Swizzle<3,4,3>`): the 16-byte
//!   chunk c of 128-byte row r lands at chunk c ^ (r % 8), so core matrix row r of a K-major
//!   tile at 0x400 starts at 0x400 + 128 r + 16 r (row 1 at 0x490, bank 36 % 32 = 4), and line 1
//!   of a TMA box holds chunks 1,0,3,2,5,4,7,6;
//! * the wgmma D fragment (PTX ISA "Register fragment layout for accumulator matrix D",
//!   m64nNk16 f32): thread t = 32w + 4g + q holds in register 4j + i the element (16w + g +
//!   8·(i/2), 8j + 2q + i%2): lane 5 of warp 0 (g 1, q 1) has d0 = (1,2), d2 = (9,2), d4 = (1,10);
//! * mbarriers (PTX ISA 9.7.13.15): `full_bar[0]` is initialised with count 1; the producer's
//!   `arrive.expect_tx 16384` leaves 0 pending arrivals and 16384 tx bytes, its two 8192-byte
//!   boxes complete the phase (0 -> 1), and with 4 k-tiles stage 0 is loaded twice: phases
//!   0 -> 1 -> 2; the consumers wait on parity 0, then 1.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tilelab::ptx::Launch;
use tilelab::ptx::trace::Hopper;
use tilelab::tui::app::{App, Msg, update};
use tilelab::tui::ptx::{HopperKind, PtxState};

const MAP: &str = "f16:256,64:512:64,64:128B";

fn state(warp: u32) -> PtxState {
    let path = format!(
        "{}/tests/data/ptx_hopper/hand_tma_wgmma_pipe.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let src = std::fs::read_to_string(&path).unwrap();
    let launch = Launch {
        grid: [1, 1, 1],
        block: [160, 1, 1],
        cta: [0, 0, 0],
        args: vec![("3".into(), "4".into())],
        tensor_maps: [format!("0={MAP}"), format!("1={MAP}")]
            .iter()
            .map(|m| tilelab::ptx::params::parse_tensor_map(m).unwrap())
            .collect(),
        dynamic_smem: Some(33_792),
        max_instructions: 1_000_000,
        cluster: None,
    };
    PtxState::load(
        "hand_tma_wgmma_pipe.ptx".into(),
        &src,
        None,
        &launch,
        warp,
        10_000,
        None,
    )
    .unwrap()
}

fn screen(app: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(160, 48)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    let buf = t.backend().buffer();
    let w = buf.area.width as usize;
    buf.content
        .chunks(w)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn lane(app: &mut App, n: usize) {
    for _ in 0..n {
        update(app, Msg::NextLane);
    }
}

/// The consumer's first wgmma (`w`): warpgroup 0, both descriptors decoded as the PTX sets
/// them, the core matrices under the 128B swizzle with their banks (conflict-free: 0, 4, ...,
/// 28), lane 5's accumulator map; the next `w` is the k-step 32 bytes on.
#[test]
fn wgmma_shows_descriptors_core_matrices_and_the_accumulator_map() {
    let mut app = App::new_ptx(state(0));
    update(&mut app, Msg::NextHopper(HopperKind::Wgmma));
    lane(&mut app, 5);
    let s = screen(&app);
    for want in [
        "warp 0/5 (consumer)",
        "line 104 HGMMA",
        "wgmma · warpgroup 0 · 32 wf",
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 · warps 0-3 · scale-d 1",
        "A desc 0x4000004000010040: start 0x400 (1024), LBO 16, SBO 1024, swizzle 128B",
        "B desc 0x4000004000010240: start 0x2400 (9216), LBO 16, SBO 1024, swizzle",
        "A: 16 core matrices of 8 rows x 16 B",
        "A mn   0 k  0  400:0 490:4 520:8 5b0:12 640:16 6d0:20 760:24 7f0:28",
        "A mn   0 k  8  410:4 480:0 530:12 5a0:8",
        "thread 5 of the warpgroup (warp 0 lane 5)",
        "d0=(1,2) d1=(1,3) d2=(9,2) d3=(9,3)",
        "d4=(1,10)",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
    update(&mut app, Msg::NextHopper(HopperKind::Wgmma));
    let s = screen(&app);
    assert!(s.contains("line 107 HGMMA"), "{s}");
    assert!(
        s.contains("A desc 0x4000004000010042: start 0x420 (1056)"),
        "{s}"
    );
    // Warp 2's lane 0 is thread 64 of the warpgroup: rows 32 and 40.
    let mut app = App::new_ptx(state(2));
    update(&mut app, Msg::NextHopper(HopperKind::Wgmma));
    let s = screen(&app);
    assert!(s.contains("d0=(32,0) d1=(32,1) d2=(40,0)"), "{s}");
}

/// The producer's copies (`t`): A's box of stage 0 at 0x400 with line 1's chunks swapped in
/// pairs (1 ^ c), its mbarrier and coordinates; then B's box 8 KiB on, then k-tile 1 in
/// stage 1 (0x4400) at column 64.
#[test]
fn tma_shows_where_the_box_landed() {
    let mut app = App::new_ptx(state(4));
    update(&mut app, Msg::NextHopper(HopperKind::Bulk));
    let s = screen(&app);
    for want in [
        "warp 4/5 (producer)",
        "line 182 UTMALDG",
        "cp.async.bulk.tensor.2d load (UTMALDG) · lane 0 · 8192 bytes",
        "completes its bytes on mbarrier 'full_bar'+0 (shared address 0x0)",
        "64 rows x 128 B at 0x400, swizzle 128B",
        "0x00400   0,0   0,1   0,2   0,3   0,4   0,5   0,6   0,7",
        "0x00480   1,1   1,0   1,3   1,2   1,5   1,4   1,7   1,6",
        "0x00780   7,7   7,6   7,5   7,4   7,3   7,2   7,1   7,0",
        "--tensor-map f16:256,64:512:64,64:128B",
        "coordinates {0, 0}",
        "shared destination 0x400 (1024)",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
    update(&mut app, Msg::NextHopper(HopperKind::Bulk));
    let s = screen(&app);
    assert!(
        s.contains("line 183 UTMALDG") && s.contains("shared destination 0x2400"),
        "{s}"
    );
    update(&mut app, Msg::NextHopper(HopperKind::Bulk));
    let s = screen(&app);
    for want in [
        "coordinates {64, 0}",
        "shared destination 0x4400 (17408)",
        "'full_bar'+8 (shared address 0x8)",
        "0x04480   1,1   1,0   1,3   1,2",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
    update(&mut app, Msg::PrevHopper(HopperKind::Bulk));
    assert!(screen(&app).contains("shared destination 0x2400"));
}

/// `full_bar[0]` as the producer sees it: its expect_tx and both boxes landing, twice (k-tiles
/// 0 and 2): (operation, phase after, pending after, tx after).
#[test]
fn mbarrier_phases_of_the_producer() {
    let st = state(4);
    let seq: Vec<(String, u64, u32, i64)> = st
        .trace
        .steps
        .iter()
        .filter_map(|r| match &r.hopper {
            Some(Hopper::Mbarrier(m)) if m.addr == 0 => Some((
                tilelab::tui::view::mbar_op_name(m),
                m.after.phase,
                m.after.pending,
                m.after.tx,
            )),
            _ => None,
        })
        .collect();
    let land = "complete_tx (a bulk copy's bytes land)";
    let x = "mbarrier.arrive.expect_tx";
    let want: Vec<(String, u64, u32, i64)> = [
        (x, 0, 0, 16384),
        (land, 0, 0, 8192),
        (land, 1, 1, 0),
        (x, 1, 0, 16384),
        (land, 1, 0, 8192),
        (land, 2, 1, 0),
    ]
    .iter()
    .map(|&(o, p, n, t)| (o.to_string(), p, n, t))
    .collect();
    assert_eq!(seq, want);
    // On screen: the landing that completes phase 0, and the object's history beside it.
    let mut app = App::new_ptx(st);
    let mut s = String::new();
    for _ in 0..40 {
        update(&mut app, Msg::NextHopper(HopperKind::Mbarrier));
        s = screen(&app);
        if s.contains("phase 0 -> 1") {
            break;
        }
    }
    for want in [
        "mbarrier · 'full_bar'+0 (shared address 0x0)",
        "complete_tx (a bulk copy's bytes land) (line 183), 8192 tx bytes",
        "before       0      0       0/1           8192",
        "after        1      1       1/1              0",
        "phase 0 -> 1: completed (parity 0 -> 1)",
        "   1   177  arrive.expect_tx        0 16384",
        "   8   182  landing                 0 8192",
        "   9   183  landing              0->1    0",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
}

/// The consumer's waits on `full_bar[0]` (`b`): every try_wait that lets the warp on asks for
/// a parity whose phase has completed, parity 0 for k-tile 0 and 1 for k-tile 2; one that does
/// not blocks, and the screen says so.
#[test]
fn mbarrier_waits_of_a_consumer() {
    let st = state(0);
    let waits: Vec<(u64, bool, u64)> = st
        .trace
        .steps
        .iter()
        .filter_map(|r| match &r.hopper {
            Some(Hopper::Mbarrier(m)) if m.addr == 0 && m.wait_for.is_some() => {
                Some((m.wait_for.unwrap(), m.waited.unwrap(), m.after.phase))
            }
            _ => None,
        })
        .collect();
    let ok: Vec<u64> = waits.iter().filter(|w| w.1).map(|w| w.0).collect();
    assert_eq!(ok, [0, 1], "{waits:?}");
    for (parity, done, phase) in &waits {
        // Parity P is complete once the phase count has passed a phase of parity P.
        assert_eq!(*done, *phase > *parity, "{waits:?}");
    }
    assert!(
        waits.iter().any(|w| !w.1),
        "a consumer waits before the first box lands"
    );
    // Thread 0 initialises the four objects first (lane 0 of warp 0); then the first wait.
    let mut app = App::new_ptx(st);
    let s = screen(&app);
    assert!(s.contains("mbarrier.init (line 36), 1 thread"), "{s}");
    assert!(
        s.contains("before       0      0       0/0              0"),
        "{s}"
    );
    assert!(
        s.contains("after        0      0       1/1              0"),
        "{s}"
    );
    for _ in 0..4 {
        update(&mut app, Msg::NextHopper(HopperKind::Mbarrier));
    }
    let s = screen(&app);
    assert!(s.contains("mbarrier.try_wait (line 90), 32 threads"), "{s}");
    assert!(
        s.contains("waits for 0: not complete, the warp blocks"),
        "{s}"
    );
}

/// `R`: the roles from what each warp executed: warps 0-3 take part in 4 wgmma per k-tile (16),
/// warp 4 issues 2 boxes per k-tile (8) and no wgmma.
#[test]
fn roles_per_warp() {
    let mut app = App::new_ptx(state(4));
    update(&mut app, Msg::ToggleRoles);
    let s = screen(&app);
    for want in [
        "Warp roles (R)",
        "   0  consumer               0       0     16",
        "   3  consumer               0       0     16",
        "   4  producer               8       0      0",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
    update(&mut app, Msg::ToggleRoles);
    assert!(!screen(&app).contains("Warp roles (R)"));
}

/// `kernels/fa3_fwd.cu` (D = 64, S = 128, one CTA, its H200 launch `fa3_d64_full_f16_s128.json`):
/// warpgroup 0 is the producer, one elected thread of warp 0 issuing every load (the kernel's
/// header: 1 Q box and 1 K and 1 V box of 64 columns, 3 loads), warps 1-3 idle; warpgroups 1 and
/// 2 the consumers, whose leader warps (4 and 8) also store their 64 rows of O by TMA (one box
/// each) and stay consumers.
#[test]
fn fa3_roles() {
    let path = format!(
        "{}/tests/data/ptx_hopper/fa3_d64_full_f16.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let src = std::fs::read_to_string(&path).unwrap();
    let (m, o) = ("f16:64,128:128:64,128:128B", "f16:64,128:128:64,64:128B");
    let launch = Launch {
        grid: [1, 1, 1],
        block: [384, 1, 1],
        cta: [0, 0, 0],
        args: vec![
            ("4".into(), "128".into()),
            ("5".into(), "1".into()),
            ("6".into(), "0.125".into()),
        ],
        tensor_maps: [
            format!("0={m}"),
            format!("1={m}"),
            format!("2={m}"),
            format!("3={o}"),
        ]
        .iter()
        .map(|x| tilelab::ptx::params::parse_tensor_map(x).unwrap())
        .collect(),
        dynamic_smem: Some(115_712),
        max_instructions: 3_000_000,
        cluster: None,
    };
    let st = PtxState::load(
        "fa3".into(),
        &src,
        Some("fa3_fwd"),
        &launch,
        0,
        10_000,
        None,
    )
    .unwrap();
    let roles: Vec<&str> = (0..12).map(|w| st.role(w).name()).collect();
    let c = "consumer";
    assert_eq!(
        roles,
        ["producer", "-", "-", "-", c, c, c, c, c, c, c, c],
        "{:?}",
        st.trace.warps
    );
    let (p, c4) = (st.activity(0), st.activity(4));
    assert_eq!((p.bulk_copies, p.bulk_stores, p.wgmma), (3, 0, 0));
    assert_eq!(c4.bulk_copies, 0);
    assert_eq!(c4.bulk_stores, 1);
    assert_eq!(st.activity(5).bulk_stores, 0);
}

/// The trace stays bounded with Hopper events: a cap of 3 keeps 3 steps of the producer and
/// counts the rest, and the roles still see every warp.
#[test]
fn the_cap_bounds_hopper_events() {
    let path = format!(
        "{}/tests/data/ptx_hopper/hand_tma_wgmma_pipe.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let src = std::fs::read_to_string(&path).unwrap();
    let full = state(4);
    let launch = Launch {
        grid: [1, 1, 1],
        block: [160, 1, 1],
        cta: [0, 0, 0],
        args: vec![("3".into(), "4".into())],
        tensor_maps: [format!("0={MAP}"), format!("1={MAP}")]
            .iter()
            .map(|m| tilelab::ptx::params::parse_tensor_map(m).unwrap())
            .collect(),
        dynamic_smem: Some(33_792),
        max_instructions: 1_000_000,
        cluster: None,
    };
    let st = PtxState::load("h".into(), &src, None, &launch, 4, 3, None).unwrap();
    assert_eq!(st.trace.steps.len(), 3);
    assert_eq!(st.trace.dropped, full.trace.steps.len() as u64 - 3);
    assert_eq!(st.activity(0).wgmma, 16);
}

/// The keys are in the help (the one key table): `w W`, `t T`, `b B`, `R`; `W` sends the
/// previous-wgmma message.
#[test]
fn the_keys_are_in_the_help() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let rows = tilelab::tui::keys::help_rows(tilelab::tui::app::Screen::Ptx);
    for label in ["w W", "t T", "b B", "R"] {
        assert!(rows.iter().any(|(l, _)| *l == label), "{label}: {rows:?}");
    }
    let app = App::new_ptx(state(0));
    let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    assert_eq!(
        tilelab::tui::keys::msg_for_app(key('W'), &app),
        Some(Msg::PrevHopper(HopperKind::Wgmma))
    );
    assert_eq!(
        tilelab::tui::keys::msg_for_app(key('t'), &app),
        Some(Msg::NextHopper(HopperKind::Bulk))
    );
}
