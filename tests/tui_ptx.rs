//! `tilelab tui --ptx` (issue 17), drawn into ratatui's `TestBackend` at 80x24 and driven by
//! messages as keys would send them. The numbers asserted are the H200's: Nsight Compute's
//! source view of `tests/data/ptx/triton_fa_v1_trans.ptx` gives line 402 16 executions, 512
//! wavefronts, 448 excessive (docs/ptx.md, "Per-PTX-line counters"), i.e. 32 wavefronts per
//! request of which 4 ideal; the fixture's launch file gives the CTA's 22,144 load wavefronts
//! and 14,336 bank conflicts; `triton_matmul_2w.json`'s SASS listing has `LDSM.16.MT88.4` and
//! `HMMA.16816.F32`, and its launch 96 LDSM and 128 HMMA executions in 2 warps.
//!
//! * `fa_v1_first_conflict`: snapshots of step 1 and of the first conflicting instruction;
//! * `filters_and_goto_line`, `goto_a_line_without_steps_says_so`;
//! * `matmul_ldmatrix_trans_and_mma_fragments`: the registers pane of `ldmatrix.trans` and mma;
//! * `the_step_cap_is_said_on_screen`, `bad_warp_is_one_line`, `help_lists_the_ptx_keys`.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use tilelab::ptx::Launch;
use tilelab::tui::app::{App, Msg, Screen, update};
use tilelab::tui::keys;
use tilelab::tui::ptx::PtxState;

fn draw(app: &App, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t
}

fn text(buf: &Buffer) -> String {
    let w = buf.area.width as usize;
    buf.content
        .chunks(w)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn screen(app: &App) -> String {
    text(draw(app, 80, 24).backend().buffer())
}

/// The launch of a fixture: grid and block from its launch file, `args` as `--arg` gives them.
fn state(
    name: &str,
    block: u32,
    smem: u32,
    args: &[(&str, &str)],
    warp: u32,
    cap: usize,
) -> Result<PtxState, String> {
    let path = format!("{}/tests/data/ptx/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).unwrap();
    let launch = Launch {
        grid: [1, 1, 1],
        block: [block, 1, 1],
        cta: [0, 0, 0],
        args: args
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        tensor_maps: vec![],
        dynamic_smem: Some(smem),
        max_instructions: 10_000_000,
        cluster: None,
    };
    PtxState::load(
        format!("tests/data/ptx/{name}.ptx"),
        &src,
        None,
        &launch,
        warp,
        cap,
        None,
    )
}

fn fa_v1(warp: u32) -> App {
    App::new_ptx(
        state(
            "triton_fa_v1_trans",
            128,
            32768,
            &[("6", "64"), ("7", "0.125")],
            warp,
            10_000,
        )
        .unwrap(),
    )
}

fn matmul() -> App {
    let args = [("3", "256"), ("4", "256"), ("5", "32"), ("6", "32")];
    App::new_ptx(state("triton_matmul_2w", 64, 8192, &args, 0, 10_000).unwrap())
}

#[test]
fn fa_v1_first_conflict() {
    let mut app = fa_v1(0);
    assert_eq!(app.screen, Screen::Ptx);
    let s = screen(&app);
    insta::assert_snapshot!("ptx_fa_v1_step1", s);
    assert!(s.contains("tl_fa_v1"), "{s}");
    // At 80 columns the footer keeps `? help` and `q quit` (the new-user trial found `q quit`
    // cut off: the PTX view has more keys than the lesson view).
    let foot = s.lines().last().unwrap();
    assert!(
        foot.contains("?  help") && foot.contains("q  quit"),
        "{foot}"
    );
    assert!(foot.contains("c  conflict"), "{foot}");
    // The CTA's totals, as the H200 measured them (triton_fa_v1_trans.json).
    assert!(s.contains("loads 22144 wf / 14336 cf"), "{s}");
    update(&mut app, Msg::NextConflict);
    let s = screen(&app);
    insta::assert_snapshot!("ptx_fa_v1_first_conflict", s);
    // The `tid & 15` read: 32 wavefronts, 4 of them ideal, per request.
    assert!(s.contains("line 402 LDS"), "{s}");
    assert!(s.contains("Banks · 32 wf, 28 conflicts"), "{s}");
    assert!(
        s.contains("line 402 in the CTA (4 warps): 16 executions, 512 wavefronts, 448 conflicts"),
        "{s}"
    );
    // Lane 16 repeats lane 0's address (tid & 15): lanes 0 and 16 read byte 0 in bank 0.
    let buf = draw(&app, 80, 24);
    let b = buf.backend().buffer();
    // The grid's first row (byte 0), bank 0: the first wavefront (no conflict: a cool
    // foreground); the next row (byte 512, bank 0 again) is a replay on a warm background.
    let (x, y) = (7, 3);
    assert_eq!(b[(x, y)].symbol(), "0", "{s}");
    assert_ne!(b[(x, y)].fg, Color::Reset);
    assert_eq!(b[(x, y)].bg, Color::Reset);
    assert_eq!(b[(x, y + 1)].symbol(), "1", "{s}");
    assert_ne!(b[(x, y + 1)].bg, Color::Reset);
    // Back to the start and forward again lands on the same instruction.
    update(&mut app, Msg::PrevConflict);
    assert!(screen(&app).contains("no earlier instruction with bank conflicts"));
    update(&mut app, Msg::FirstStep);
    assert!(screen(&app).contains("line 163 STS"));
}

#[test]
fn filters_and_goto_line() {
    let mut app = fa_v1(0);
    update(&mut app, Msg::FilterConflicts);
    let s = screen(&app);
    assert!(s.contains("[conflicts only]"), "{s}");
    assert!(s.contains("line 402 LDS"), "{s}");
    // Every step the filter leaves has conflicts.
    let p = app.ptx.as_deref().unwrap();
    let shown = p.visible_steps();
    assert!(!shown.is_empty());
    assert!(shown.iter().all(|&i| p.trace.steps[i].bank_conflicts() > 0));
    update(&mut app, Msg::FilterConflicts);
    // Go to line 406 by typing it.
    update(&mut app, Msg::GotoLine);
    for c in ['4', '0', '6'] {
        update(&mut app, Msg::PromptChar(c));
    }
    assert!(screen(&app).contains("go to PTX line:  406_"));
    update(&mut app, Msg::PromptEnter);
    let s = screen(&app);
    assert!(s.contains("line 406 LDS"), "{s}");
    // Only this line: stepping stays on line 406 (warp 0 runs it 4 times: 16 executions in 4 warps).
    update(&mut app, Msg::FilterLine);
    let s = screen(&app);
    assert!(s.contains("[line 406 only]"), "{s}");
    assert!(s.contains("step 1/4"), "{s}");
    for _ in 0..5 {
        update(&mut app, Msg::NextStep);
        assert!(screen(&app).contains("line 406 LDS"));
    }
    assert!(screen(&app).contains("step 4/4"));
    // Esc closes the prompt without moving.
    update(&mut app, Msg::GotoLine);
    update(&mut app, Msg::PromptChar('1'));
    update(&mut app, Msg::PromptCancel);
    assert!(screen(&app).contains("line 406 LDS"));
}

#[test]
fn goto_a_line_without_steps_says_so() {
    let mut app = fa_v1(0);
    update(&mut app, Msg::GotoLine);
    update(&mut app, Msg::PromptChar('1'));
    update(&mut app, Msg::PromptEnter);
    let s = screen(&app);
    assert!(
        s.contains("line 1: no shared/mma step of warp 0; showing line 163, the next with one"),
        "{s}"
    );
    update(&mut app, Msg::GotoLine);
    for c in "99999".chars() {
        update(&mut app, Msg::PromptChar(c));
    }
    update(&mut app, Msg::PromptEnter);
    assert!(screen(&app).contains("line 99999: no shared/mma step of warp 0 there or after it"));
    // Letters are not taken: ':abc' Enter said "'' is not a line number" (trial 2026-12-01).
    update(&mut app, Msg::GotoLine);
    for c in "abc".chars() {
        update(&mut app, Msg::PromptChar(c));
    }
    update(&mut app, Msg::PromptEnter);
    let s = screen(&app);
    assert!(
        s.contains("no line number: ':' takes the digits of a PTX line, e.g. :402"),
        "{s}"
    );
}

#[test]
fn matmul_ldmatrix_trans_and_mma_fragments() {
    let mut app = matmul();
    // Line 226: ldmatrix.sync.aligned.m8n8.x4.trans (LDSM.16.MT88.4).
    update(&mut app, Msg::GotoLine);
    for c in "226".chars() {
        update(&mut app, Msg::PromptChar(c));
    }
    update(&mut app, Msg::PromptEnter);
    update(&mut app, Msg::NextLane);
    let s = screen(&app);
    insta::assert_snapshot!("ptx_matmul_ldmatrix_trans_lane1", s);
    assert!(s.contains("line 226 LDSM"), "{s}");
    assert!(s.contains("Banks · 4 wf, 0 conflicts"), "{s}");
    // PTX ISA ldmatrix .trans: lane 1 (groupID 0, threadID_in_group 1) receives rows 2 and 3 of
    // column 0 of each matrix; row 2 of matrix 0 is the address of lane 2.
    assert!(s.contains("m0(2,0) (3,0) row from lane 2"), "{s}");
    // The next line with an mma: its fragments.
    update(&mut app, Msg::GotoLine);
    for c in "231".chars() {
        update(&mut app, Msg::PromptChar(c));
    }
    update(&mut app, Msg::PromptEnter);
    let s = screen(&app);
    insta::assert_snapshot!("ptx_matmul_mma_lane1", s);
    assert!(s.contains("line 231 HMMA"), "{s}");
    assert!(s.contains("mma.sync reads registers only"), "{s}");
    // PTX ISA m16n8k16 A fragment: lane 1 holds a0 = A(0,2) A(0,3).
    assert!(s.contains("a0  A(0,2) A(0,3)"), "{s}");
    // The running counters of warp 0 after the whole kernel: 48 LDSM and 64 HMMA (the launch
    // file: 96 and 128 for the CTA's two warps).
    update(&mut app, Msg::LastStep);
    let s = screen(&app);
    assert!(s.contains("HMMA ×64"), "{s}");
    assert!(s.contains("LDSM ×48"), "{s}");
}

#[test]
fn the_step_cap_is_said_on_screen() {
    let mut app = App::new_ptx(
        state(
            "triton_fa_v1_trans",
            128,
            32768,
            &[("6", "64"), ("7", "0.125")],
            1,
            10,
        )
        .unwrap(),
    );
    for _ in 0..4 {
        update(&mut app, Msg::FocusNext);
    }
    update(&mut app, Msg::ToggleZoom);
    let s = screen(&app);
    assert!(
        s.contains("recorded the first 10 steps of warp 1 (cap, --max-steps)"),
        "{s}"
    );
    update(&mut app, Msg::LastStep);
    assert!(screen(&app).contains("steps 1-10"));
}

#[test]
fn bad_warp_is_one_line() {
    let e = state("triton_matmul_2w", 64, 8192, &[], 2, 10).unwrap_err();
    assert_eq!(e, "--warp 2: the CTA has 2 warps (64 threads), so 0-1");
}

#[test]
fn help_lists_the_ptx_keys() {
    let mut app = fa_v1(0);
    update(&mut app, Msg::ToggleHelp);
    let s = screen(&app);
    for (label, what) in keys::help_rows(Screen::Ptx) {
        assert!(s.contains(label), "help lacks {label}\n{s}");
        assert!(s.contains(what), "help lacks {what}\n{s}");
    }
    assert!(s.contains("next instruction with bank conflicts"), "{s}");
}

/// The source line of the selected PTX line (issue 28): `variants.py:37` and its text in the
/// header when the `.file` is readable (here found beside the PTX by its name), the reason in
/// the counters pane when not. `va_f32in`'s line 444 is on the H200's conflicting line 37
/// (`tests/data/ptx_lines/va_f32in.json`).
#[test]
fn the_selected_line_shows_its_source_line() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ptx_lines");
    let tmp = tempfile::tempdir().unwrap();
    let ptx = tmp.path().join("va_f32in.ptx");
    let text = std::fs::read_to_string(format!("{dir}/va_f32in.ptx"))
        .unwrap()
        .replace(
            "\"/work/main/scratch/src/variants.py\"",
            "\"/nonexistent-tilelab/variants.py\"",
        );
    std::fs::write(&ptx, &text).unwrap();
    let launch = Launch {
        grid: [1, 1, 1],
        block: [64, 1, 1],
        cta: [0, 0, 0],
        args: vec![("4".into(), "0.125".into())],
        tensor_maps: vec![],
        dynamic_smem: Some(8192),
        max_instructions: 10_000_000,
        cluster: None,
    };
    let state = || {
        PtxState::load(
            ptx.to_string_lossy().into_owned(),
            &text,
            None,
            &launch,
            0,
            10_000,
            Some(444),
        )
        .unwrap()
    };
    let load = || App::new_ptx(state());
    let (at, why) = state().source_line().unwrap();
    assert_eq!(at, "variants.py:37");
    assert!(why.unwrap_err().contains("No such file"));
    let s = text_of(&load(), 160, 30);
    let head = s.lines().next().unwrap();
    assert!(head.contains("line 444 LDS │ variants.py:37 "), "{head}");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/research/ptx_fixtures/attn_2w.py"
        ),
        tmp.path().join("variants.py"),
    )
    .unwrap();
    let s = text_of(&load(), 160, 30);
    let head = s.lines().next().unwrap();
    assert!(
        head.contains(
            "│ variants.py:37 v = tl.load(V + n[:, None] * D + d[None, :]).to(tl.float16)"
        ),
        "{head}"
    );
}

fn text_of(app: &App, w: u16, h: u16) -> String {
    text(draw(app, w, h).backend().buffer())
}
