//! Sources are cited by title, author and address (`tilelab::sources`), never by a path of the
//! development machine users do not get ("seed 000", `shared/hw/…`, `shared/seeds/…`).

use std::path::Path;

use tilelab::sources;

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "rs" || x == "toml" || x == "md")
        {
            out.push(p);
        }
    }
}

#[test]
fn no_development_paths_in_sources_lessons_or_readme() {
    let mut all = vec![Path::new("README.md").to_path_buf()];
    files(Path::new("src"), &mut all);
    files(Path::new("crates/tilelab-core/src"), &mut all);
    files(Path::new("lessons"), &mut all);
    assert!(all.len() > 50, "{}", all.len());
    let mut bad = Vec::new();
    for f in &all {
        if f.ends_with("src/sources.rs") {
            continue; // its test names the words it forbids
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let l = line.to_lowercase();
            if ["seed 0", "seed article", "shared/hw", "shared/seeds"]
                .iter()
                .any(|w| l.contains(w))
            {
                bad.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn readme_cites_every_source_in_full() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    for s in sources::ALL {
        assert!(flat.contains(s.short), "{}", s.short);
        let title = s.title.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(&title), "{title}");
        if s.address.starts_with("https://") {
            assert!(readme.contains(s.address), "{}", s.address);
        }
    }
}

#[test]
fn reports_cite_the_articles() {
    let run = |args: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_tilelab"))
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    let t = run(&["sim", "traffic", "flash-attn"]);
    assert!(t.contains(sources::FA_ARCHAEOLOGY.address), "{t}");
    let c = run(&[
        "sim",
        "counts",
        "flash-attn",
        "--style",
        "torch",
        "--causal",
    ]);
    assert!(c.contains(sources::FA2_COUNTS.title), "{c}");
    let v = run(&["lessons", "show", "fa-v1-v2"]);
    assert!(v.contains(sources::FA_ARCHAEOLOGY.address), "{v}");
    let f = run(&["lessons", "show", "fa2-counts"]);
    assert!(f.contains(sources::FA2_COUNTS.title), "{f}");
    for out in [t, c, v, f] {
        assert!(!out.to_lowercase().contains("seed 0"), "{out}");
    }
}
