//! `tilelab lessons export LESSON --html DIR` (issue #18): one self-contained page per lesson.
//!
//! * `the_page_is_self_contained_and_holds_every_step`: `--all` writes one page per built-in
//!   lesson; none references anything outside itself (no `http` but the SVG namespace, no
//!   `src=`, `href=`, `url(`, `<link`, `<img`, ...), each holds one inline SVG per step and
//!   layout, the narrative, the note and the question of every step, and the numbers of
//!   `tilelab lessons show --json` in its data block;
//! * `lesson_text_is_escaped`: a lesson whose title, summary, narrative, notes and question hold
//!   `<script>`, `</script>`, `<img onerror>`, quotes and `&` comes out as text, never markup;
//! * `browser_pages_show_the_tuis_numbers`: in headless Chromium (`scripts/html_check.py`, over
//!   WebDriver) every page of every built-in lesson loads with no browser-log error and no
//!   resource fetched, the buttons and the ← → keys step (the picture changes), 1 and l switch
//!   the layout, a screenshot is taken at every (layout, step), and there the page shows the
//!   numbers the TUI's counters pane shows at that (layout, step) (drawn here into ratatui's
//!   `TestBackend`): running wavefronts, ideal, bank conflicts and SASS counts, this step's
//!   wavefronts and conflicts, and whether they agree with the lesson file. Apart from the
//!   simulator, this step's numbers equal the lesson file's `expect` (the articles' and the
//!   H200's numbers, written by hand) and, for the 22 requests the lessons cite, the wavefronts
//!   measured on the H200 (`tests/data/h200_wavefronts.json`). The escaping lesson shows its
//!   title as text, with no extra script or image. Without chromium, chromedriver or python3 the
//!   test prints `SKIPPED` (tests/common/skip.rs); `TILELAB_REQUIRE=chromium` makes that a
//!   failure (`.ci/run` sets it where the browser is installed);
//! * `lesson_09s_numbered_list_is_an_ordered_list`: the narrative is CommonMark, lesson 09's
//!   numbered list an `<ol>` of its three items;
//! * `export_errors_are_one_line`: unknown lesson or variant, a page path that cannot be
//!   written, bad arguments: one line on stderr, exit 2, nothing on stdout.

use crate::common::run;
use run::tilelab;

use crate::common::skip;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tilelab::lessons::{self, parse_lesson};
use tilelab::tui::app::{App, Msg, update};

#[test]
fn the_page_is_self_contained_and_holds_every_step() {
    let dir = std::env::temp_dir().join(format!("tilelab-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // `--all`: one page per built-in lesson, and nothing else in DIR.
    let o = tilelab(&[
        "lessons",
        "export",
        "--all",
        "--html",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let names: Vec<String> = lessons::builtin()
        .unwrap()
        .iter()
        .map(|l| l.name.clone())
        .collect();
    assert_eq!(names.len(), 15, "the README's fifteen lessons");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let mut want: Vec<String> = names.iter().map(|n| format!("{n}.html")).collect();
    want.sort();
    assert_eq!(files, want);
    for lesson in names.iter().map(String::as_str) {
        let page = std::fs::read_to_string(dir.join(format!("{lesson}.html"))).unwrap();
        let show: serde_json::Value = serde_json::from_slice(
            &tilelab(&["lessons", "show", lesson, "--json", "--answers"]).stdout,
        )
        .unwrap();
        let steps = show["steps"].as_array().unwrap();
        let layouts = show["layouts"].as_array().unwrap();
        // Self-contained: nothing fetched, nothing linked. The only URL is the SVG namespace
        // (a name, never loaded); with it removed no `http` remains anywhere.
        let lower = page
            .replace("xmlns=\"http://www.w3.org/2000/svg\"", "")
            .to_lowercase();
        for bad in [
            "http",
            "src=",
            "href=",
            "url(",
            "@import",
            "<link",
            "<img",
            "<iframe",
            "<object",
            "<embed",
            "<base",
            "fetch(",
            "xmlhttprequest",
            "import(",
            "file:",
            "//cdn",
        ] {
            let hits: Vec<&str> = lower.lines().filter(|l| l.contains(bad)).collect();
            assert!(hits.is_empty(), "{lesson}: '{bad}' in {hits:?}");
        }
        assert_eq!(
            page.matches("<script").count(),
            2,
            "{lesson}: the data and the script"
        );
        assert_eq!(
            page.matches("<svg ").count(),
            steps.len() * layouts.len(),
            "{lesson}: one picture per step and layout"
        );
        assert!(page.contains("<script>") && page.contains("id=\"tilelab-data\""));
        // The data block holds show --json's numbers, step by step, layout by layout.
        let start = page.find("id=\"tilelab-data\">").unwrap() + "id=\"tilelab-data\">".len();
        let end = start + page[start..].find("</script>").unwrap();
        let data: serde_json::Value =
            serde_json::from_str(&page[start..end].replace("<\\/", "</")).unwrap();
        let dsteps = data["steps"].as_array().unwrap();
        assert_eq!(dsteps.len(), steps.len());
        for (s, d) in steps.iter().zip(dsteps) {
            // A question's step is marked, so the script hides its numbers until asked.
            assert_eq!(d["asks"], s["exercise"].is_object(), "{lesson}: {d}");
            for (li, l) in layouts.iter().enumerate() {
                let want = &s["results"][l.as_str().unwrap()];
                let got = &d["results"][li];
                if want.is_null() {
                    assert!(got.is_null(), "{lesson}: {d}");
                } else {
                    for k in ["wavefronts", "conflicts", "ideal"] {
                        assert_eq!(got[k], want[k], "{lesson} step {} {l} {k}", s["index"]);
                    }
                }
            }
        }
        // Every question, and every step's note, is on the page (their words: the Markdown's
        // `code` and **bold** become tags, so compare the text between them).
        let asked = steps.iter().filter(|s| s["exercise"].is_object()).count();
        assert!(asked >= 1, "{lesson} asks nothing");
        // Each question's answer (and the step's numbers and picture) behind its own reveal.
        assert_eq!(
            page.matches("<details data-reveal=").count(),
            asked,
            "{lesson}"
        );
        assert_eq!(
            page.matches("<strong>Exercise:</strong>").count(),
            asked,
            "{lesson}"
        );
        // The explanation of a question's answer is inside its own <details data-reveal>.
        for (n, s) in steps.iter().enumerate() {
            let Some(why) = s["exercise"]["explanation"].as_str() else {
                continue;
            };
            let open = format!("<details data-reveal=\"{n}\">");
            let start = page.find(&open).unwrap();
            let details = &page[start..start + page[start..].find("</details>").unwrap()];
            assert!(
                details.contains("<div class=\"explanation\">"),
                "{lesson}: {details}"
            );
            for piece in why.split(['`', '*', '\n']).filter(|p| p.len() > 12) {
                let piece = piece
                    .trim()
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
                    .replace('"', "&quot;")
                    .replace('\'', "&#39;");
                assert!(
                    details.contains(&piece),
                    "{lesson} step {}: '{piece}' not in its <details>",
                    n + 1
                );
            }
        }
        for s in steps {
            let mut texts = vec![s["note"].as_str().unwrap()];
            if let Some(q) = s["exercise"]["question"].as_str() {
                texts.push(q);
            }
            for t in texts {
                for piece in t.split(['`', '*', '\n']).filter(|p| p.len() > 12) {
                    let piece = piece
                        .trim()
                        .replace('&', "&amp;")
                        .replace('<', "&lt;")
                        .replace('>', "&gt;")
                        .replace('"', "&quot;")
                        .replace('\'', "&#39;");
                    assert!(page.contains(&piece), "{lesson}: '{piece}' not on the page");
                }
            }
        }
    }
    // The first lesson's column step: 32 wavefronts under row (H200 record b32.stride32w).
    let page = std::fs::read_to_string(dir.join("warps-and-banks.html")).unwrap();
    assert!(
        page.contains("32 wavefronts, ideal 1, 31 bank conflicts"),
        "bank grid caption"
    );
    assert!(page.contains("<h2>Warps and banks in five minutes</h2>"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn export_errors_are_one_line() {
    let file = std::env::temp_dir().join(format!("tilelab-export-file-{}", std::process::id()));
    std::fs::write(&file, "x").unwrap();
    let o = tilelab(&[
        "lessons",
        "export",
        "banks",
        "--html",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8(o.stderr).unwrap();
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with("tilelab: error: cannot create directory"),
        "{e}"
    );
    let dir = std::env::temp_dir().join(format!("tilelab-export-err-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("banks.html")).unwrap();
    let d = dir.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["lessons", "export", "bankz", "--html", d],
            "tilelab: error: unknown lesson 'bankz'; known lessons: warps-and-banks, banks,",
        ),
        (
            &["lessons", "export", "banks", "--variant", "q", "--html", d],
            "tilelab: error: variant 'q' is not one of lesson 'banks''s variants",
        ),
        // DIR exists but the page's path is a directory: nothing can be written there.
        (
            &["lessons", "export", "banks", "--html", d],
            "tilelab: error: cannot write '",
        ),
        (
            &["lessons", "export", "--all", "--html", d],
            "tilelab: error: cannot write '",
        ),
        (
            &["lessons", "export", "banks", "--all", "--html", d],
            "tilelab: error: the argument '[NAME]' cannot be used with '--all'",
        ),
        (
            &["lessons", "export", "banks"],
            "tilelab: error: the following required arguments were not provided",
        ),
    ];
    for (args, want) in cases {
        let o = tilelab(args);
        let e = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.starts_with(want), "{args:?}: {e}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // `--all` writes in the list's order and stops at the first page it cannot write: the one
    // before banks (warps-and-banks) is there, nothing after it.
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["banks.html", "warps-and-banks.html"]);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&file);
}

/// A lesson whose every text field tries to break out of HTML.
const EVIL: &str = r#"
name = "evil"
title = "<script>console.error('title ran')</script> & <img src=x onerror=alert(1)> \"q\" 'a'"
summary = "</script><!-- & </style>"
kernel = "kernels/lesson_evil.cu"
claims = ["<b>banks</b>"]
layouts = ["row", "pad:1"]
narrative = """
# <i>Heading</i> & more

A **<script>alert(2)</script>** paragraph with `</script>` and <!-- a comment.

- an item <img src=y onerror=alert(3)>
"""

[[tiles]]
name = "S"
rows = 32
cols = 32
elem_bytes = 4

[[steps]]
title = "column </script><script>alert(4)</script>"
instruction = "ld.shared.b32"
access = { kind = "column" }
note = "a note with <b>tags</b> & \"quotes\" and </script>"
expect = { row = { wavefronts = 32, conflicts = 31 }, "pad:1" = { wavefronts = 1, conflicts = 0 } }

[steps.exercise]
kind = "conflict_free"
question = "Which <layout> </script> is conflict-free?"
"#;

#[test]
fn lesson_text_is_escaped() {
    let l = parse_lesson(EVIL, "lessons/evil.toml").unwrap();
    let page = tilelab::viz::html::lesson_page(&l, 0).unwrap();
    // Exactly the page's own two scripts, its own style, no image, no comment.
    assert_eq!(page.matches("<script").count(), 2, "{page}");
    assert_eq!(page.matches("</script>").count(), 2);
    assert_eq!(page.matches("</style>").count(), 1);
    assert!(!page.contains("<img"), "an image tag got through");
    assert!(!page.contains("<!--"), "a comment got through");
    for tag in ["<b>", "<i>"] {
        assert!(!page.contains(tag), "{tag} got through");
    }
    // The text is there, escaped.
    assert!(page.contains("&lt;script&gt;console.error(&#39;title ran&#39;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt; &quot;q&quot; &#39;a&#39;"));
    assert!(page.contains("<strong>&lt;script&gt;alert(2)&lt;/script&gt;</strong>"));
    assert!(page.contains("<code>&lt;/script&gt;</code>"));
    assert!(page.contains("Which &lt;layout&gt; &lt;/script&gt; is conflict-free?"));
}

/// Issue 30: the narrative is CommonMark (pulldown-cmark). Lesson 09's numbered list of the
/// three stages is an `<ol>` of three items in the exported page; the hand renderer of before
/// joined it into one paragraph (`<p>1. ... 2. ... 3. ...</p>`).
#[test]
fn lesson_09s_numbered_list_is_an_ordered_list() {
    let all = lessons::builtin().unwrap();
    let l = lessons::find(&all, "fa2-counts").unwrap();
    let page = tilelab::viz::html::lesson_page(l, 0).unwrap();
    let start = page.find("<article>").unwrap();
    let article = &page[start..start + page[start..].find("</article>").unwrap()];
    let open = article.find("<ol>\n").expect("an <ol> in the narrative");
    let list = &article[open..open + article[open..].find("</ol>").unwrap()];
    let items: Vec<&str> = list
        .split("<li>")
        .skip(1)
        .map(|i| i.trim_end().trim_end_matches("</li>"))
        .collect();
    assert_eq!(items.len(), 3, "{list}");
    assert!(
        items[0].starts_with("<code>ldmatrix.x4</code> of Q (A)") && items[0].ends_with("→ S."),
        "{}",
        items[0]
    );
    assert!(
        items[1].starts_with("<strong>torch</strong>: P = softmax(S) stays in registers.")
            && items[1].contains("<strong>triton</strong>: <code>tl.dot</code>")
            && items[1].ends_with("one more LDSM per 16x16 of P."),
        "{}",
        items[1]
    );
    assert!(
        items[2].starts_with("<code>ldmatrix.x4.trans</code> of V") && items[2].ends_with("→ O."),
        "{}",
        items[2]
    );
    assert!(!article.contains("<p>1. "), "the list is not a paragraph");
}

fn on_path(names: &[&str]) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|d| names.iter().any(|n| d.join(n).is_file()))
}

/// Runs `scripts/html_check.py` (extra `args`) and returns what the page showed, or `None` after
/// reporting a skip when the browser is not there (the script's exit 77).
fn browser_check(test: &str, args: &[&str], dump: &Path) -> Option<Vec<serde_json::Value>> {
    let o = Command::new("python3")
        .arg("scripts/html_check.py")
        .args(["--bin", env!("CARGO_BIN_EXE_tilelab"), "--dump"])
        .arg(dump)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    if o.status.code() == Some(77) {
        skip::skip(test, "chromium", out.trim());
        return None;
    }
    assert!(o.status.success(), "scripts/html_check.py {args:?}:\n{out}");
    let text = std::fs::read_to_string(dump).unwrap();
    Some(serde_json::from_str(&text).unwrap())
}

/// The numbers of the TUI's counters pane: running (wavefronts, ideal, conflicts), this step's
/// (wavefronts, conflicts) if it has a shared access, the lesson-file mark (✓ true, ✗ false),
/// and the SASS counts as `LDS ×2, LDSM.16.M88.4 ×1`.
#[derive(Debug, PartialEq)]
struct TuiCounters {
    running: (u64, u64, u64),
    step: Option<(u32, u32)>,
    agrees: Option<bool>,
    sass: String,
}

fn tui_counters(app: &App) -> TuiCounters {
    let mut t = Terminal::new(TestBackend::new(200, 60)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    let buf = t.backend().buffer();
    let w = buf.area.width as usize;
    let rows: Vec<String> = buf
        .content
        .chunks(w)
        .map(|r| r.iter().map(|c| c.symbol()).collect::<String>())
        .collect();
    // The counters pane: the rows under its title (other panes may hold the same words).
    let top = rows
        .iter()
        .position(|r| r.contains("Counters · steps 1-"))
        .unwrap_or_else(|| panic!("no counters pane:\n{}", rows.join("\n")));
    let inner = |prefix: &str| -> String {
        let r = rows[top + 1..]
            .iter()
            .find(|r| r.starts_with(&format!("│{prefix}")))
            .unwrap_or_else(|| panic!("no counters line '{prefix}':\n{}", rows.join("\n")));
        r.trim_start_matches('│')
            .trim_end()
            .trim_end_matches('│')
            .trim()
            .to_string()
    };
    let num = |s: &str| -> u64 { s.trim().parse().unwrap_or_else(|_| panic!("'{s}'")) };
    // "wavefronts 34 (ideal 3)  conflicts 31  │ this step 32 wf, 31 cf ✓"
    let line = inner("wavefronts ");
    let (left, right) = match line.split_once('│') {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (line.clone(), None),
    };
    let rest = left.strip_prefix("wavefronts ").unwrap();
    let (wf, rest) = rest.split_once(" (ideal ").unwrap();
    let (ideal, rest) = rest.split_once(')').unwrap();
    let cf = rest.trim().strip_prefix("conflicts ").unwrap();
    let (step, agrees) = match right {
        None => (None, None),
        Some(r) => {
            let r = r.trim().strip_prefix("this step ").unwrap();
            let (w, r) = r.split_once(" wf, ").unwrap();
            let (c, mark) = r.split_once(" cf").unwrap();
            let agrees = if mark.contains('✓') {
                Some(true)
            } else if mark.contains('✗') {
                Some(false)
            } else {
                None
            };
            (Some((num(w) as u32, num(c) as u32)), agrees)
        }
    };
    let sass = inner("SASS ");
    let sass = sass
        .strip_prefix("SASS ")
        .unwrap()
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(", ");
    TuiCounters {
        running: (num(wf), num(ideal), num(cf)),
        step,
        agrees,
        sass,
    }
}

/// The same numbers as the page showed them (one record of the dump).
fn page_counters(v: &serde_json::Value) -> TuiCounters {
    let s = |k: &str| {
        v[k].as_str()
            .unwrap_or_else(|| panic!("{k} in {v}"))
            .to_string()
    };
    let num = |k: &str| -> u64 { s(k).parse().unwrap_or_else(|_| panic!("{k} in {v}")) };
    let step = if s("wf") == "-" {
        None
    } else {
        Some((num("wf") as u32, num("cf") as u32))
    };
    let stated = s("stated");
    TuiCounters {
        running: (num("run_wf"), num("run_ideal"), num("run_cf")),
        step,
        agrees: if stated == "-" {
            None
        } else {
            Some(stated.ends_with('✓'))
        },
        sass: s("run_sass"),
    }
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tilelab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn browser_pages_show_the_tuis_numbers() {
    const TEST: &str = "export::browser_pages_show_the_tuis_numbers";
    let missing: Vec<&str> = [
        (
            &["chromium", "chromium-browser", "google-chrome"][..],
            "chromium",
        ),
        (&["chromedriver"][..], "chromedriver"),
        (&["python3"][..], "python3"),
    ]
    .iter()
    .filter(|(names, _)| !on_path(names))
    .map(|(_, n)| *n)
    .collect();
    if !missing.is_empty() {
        skip::skip(
            TEST,
            "chromium",
            &format!(
                "the browser test of the HTML export needs {} (apt-get install -y chromium chromium-driver python3)",
                missing.join(", ")
            ),
        );
        return;
    }
    let dir = tmp("browser");
    let Some(dump) = browser_check(TEST, &[], &dir.join("dump.json")) else {
        return;
    };
    let mut seen: BTreeMap<(String, String, u64), &serde_json::Value> = BTreeMap::new();
    for v in &dump {
        let key = (
            v["lesson"].as_str().unwrap().to_string(),
            v["layout"].as_str().unwrap().to_string(),
            v["step"].as_u64().unwrap(),
        );
        assert!(seen.insert(key, v).is_none(), "twice: {v}");
    }
    // What the H200 measured for the requests the lessons cite (`measured = { LAYOUT = RECORD }`):
    // numbers from the hardware, not from the simulator.
    let h200: Vec<serde_json::Value> = tilelab::records::parse(
        &std::fs::read_to_string("tests/data/h200_wavefronts.json").unwrap(),
    )
    .unwrap();
    let h200: BTreeMap<&str, u64> = h200
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap(),
                r["wavefronts"].as_u64().unwrap(),
            )
        })
        .collect();
    let all = lessons::builtin().unwrap();
    let mut views = 0;
    let (mut stated_views, mut measured_views) = (0, 0);
    for (i, l) in all.iter().enumerate() {
        let order = l.steps_of(0);
        for (li, layout) in l.layouts.iter().map(|x| &x.spec).enumerate() {
            let mut app = App::new(all.clone(), Some(i));
            update(&mut app, Msg::SetLayout(li));
            assert_eq!(app.runs.len(), order.len(), "{}", l.name);
            for (n, &si) in order.iter().enumerate() {
                let key = (l.name.clone(), layout.clone(), n as u64 + 1);
                let v = seen
                    .get(&key)
                    .unwrap_or_else(|| panic!("the browser never showed {key:?}"));
                // The page's step numbers equal the lesson file's (the articles' and the H200's
                // numbers, written by hand) and the H200 record the step cites.
                let st = &l.steps[si];
                if let Some(e) = st.expect.get(layout) {
                    assert_eq!(
                        (v["wf"].as_str(), v["cf"].as_str()),
                        (
                            Some(e.wavefronts.to_string().as_str()),
                            Some(e.conflicts.to_string().as_str())
                        ),
                        "{key:?}: the page against the lesson file's expect"
                    );
                    stated_views += 1;
                }
                if let Some(rec) = st.measured.get(layout) {
                    let hw = h200
                        .get(rec.as_str())
                        .unwrap_or_else(|| panic!("{key:?}: no H200 record '{rec}'"));
                    assert_eq!(
                        v["wf"].as_str(),
                        Some(hw.to_string().as_str()),
                        "{key:?}: the page against the H200's {rec}"
                    );
                    measured_views += 1;
                }
                // A screenshot was taken of this very view (a PNG of the window).
                let shot = &v["screenshot"];
                assert!(shot["bytes"].as_u64().unwrap() > 10_000, "{key:?}: {shot}");
                assert!(shot["size"][0].as_u64().unwrap() >= 800, "{key:?}: {shot}");
                assert_eq!(v["resources"], 0, "{key:?}: nothing loaded from elsewhere");
                if st.exercise.is_some() {
                    // Before its answer was opened the page hid the step's numbers and picture
                    // (checked at the first layout; it stays open after), and so does the TUI
                    // until `r`.
                    if li == 0 {
                        let h = &v["hidden_before"];
                        assert_eq!(h["visible"], 0, "{key:?}: {h}");
                        assert_eq!(h["run_wf"], "?", "{key:?}: {h}");
                        assert!(h["wf"] == "?" || h["wf"] == "-", "{key:?}: {h}");
                    }
                    assert!(app.answer_hidden(), "{key:?}");
                    update(&mut app, Msg::Reveal);
                    assert!(!app.answer_hidden(), "{key:?}");
                }
                let tui = tui_counters(&app);
                let page = page_counters(v);
                assert_eq!(
                    page, tui,
                    "{key:?}: the page (left) and the TUI (right) differ"
                );
                assert_eq!(v["pos"], format!("step {} / {}", n + 1, app.runs.len()));
                assert_eq!(v["visible"], 1, "{key:?}: one picture at a time");
                if let Some((w, c)) = tui.step {
                    let cap = v["caption"].as_str().unwrap();
                    let want = format!(
                        "{w} wavefronts, ideal {}, {c} bank conflicts",
                        v["ideal"].as_str().unwrap()
                    );
                    assert!(
                        cap.starts_with(&want),
                        "{key:?}: caption '{cap}', want '{want}'"
                    );
                }
                views += 1;
                update(&mut app, Msg::NextStep);
            }
        }
    }
    assert_eq!(
        views,
        dump.len(),
        "the browser showed views the TUI does not have"
    );
    assert!(views > 100, "{views}");
    // Every lesson-file number and every H200 record the lessons cite was on a page: 22 cited
    // records (`grep -c` of `measured` entries by layout in lessons/*.toml).
    assert_eq!(measured_views, 22);
    assert!(stated_views > measured_views, "{stated_views}");

    // A lesson made of markup: shown as text, no script or image of its own runs.
    let evil = dir.join("evil");
    std::fs::create_dir_all(&evil).unwrap();
    std::fs::write(evil.join("evil.toml"), EVIL).unwrap();
    let Some(dump) = browser_check(
        TEST,
        &["--dir", evil.to_str().unwrap()],
        &dir.join("evil.json"),
    ) else {
        return;
    };
    let l = parse_lesson(EVIL, "evil.toml").unwrap();
    assert_eq!(dump.len(), 2, "one step under two layouts");
    for v in &dump {
        assert_eq!(v["h1"].as_str().unwrap(), l.title, "the title, as text");
        assert_eq!(v["scripts"], 2, "only the page's data and script blocks");
        assert_eq!(v["imgs"], 0, "no image from the lesson's text");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
