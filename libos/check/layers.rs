//! The library OS in layers (docs/libos.md, "Layers"): the core (every
//! module outside `src/linux/`) must not name the Linux personality, so a
//! second personality or a native program can use the core alone. Only
//! the programs in `src/bin/` choose a personality.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
        if e.is_dir() {
            sources(&e, out);
        } else if e.extension().is_some_and(|x| x == "rs") {
            out.push(e);
        }
    }
}

/// The code of `text` (comments removed) split into items, each `use`
/// statement whole (one may span lines), with the line it starts on.
fn statements(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut in_use = false;
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap().trim();
        if in_use {
            out.last_mut().unwrap().1.push_str(code);
        } else {
            out.push((n + 1, code.to_string()));
            in_use = code.starts_with("use ") || code.starts_with("pub use ");
        }
        in_use = in_use && !code.ends_with(';');
    }
    out
}

/// Whether a statement names the module `linux`: as a path segment
/// (`linux::`, `crate::linux`), or in a `use` list (`use crate::{fs, linux};`).
fn names_linux(code: &str) -> bool {
    let is_use = code.starts_with("use ") || code.starts_with("pub use ");
    code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .any(|w| (w.contains("::") || is_use) && w.split("::").any(|seg| seg == "linux"))
}

#[test]
fn the_core_does_not_import_the_personality() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut offenders = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        if rel.starts_with("linux") || rel.starts_with("bin") {
            continue;
        }
        for (n, code) in statements(&std::fs::read_to_string(f).unwrap()) {
            if names_linux(&code) {
                offenders.push(format!("{}:{n}: {code}", rel.display()));
            }
        }
    }
    assert!(files.len() > 40, "found only {} sources under {}", files.len(), src.display());
    assert!(offenders.is_empty(), "the core names the Linux personality:\n{}", offenders.join("\n"));
}

#[test]
fn the_check_sees_every_way_of_naming_it() {
    let text = "use crate::linux::stat::Stat;\nlet t = crate::linux::time::now_ns(); // x\nuse crate::{fs, linux};\n\
                use crate::{\n    fs,\n    linux::nr,\n};\nsuper::linux::x();\n";
    let found: Vec<usize> =
        statements(text).into_iter().filter(|(_, c)| names_linux(c)).map(|(n, _)| n).collect();
    assert_eq!(found, [1, 2, 3, 4, 8]);
    let clean = "pub mod linux;\npub fn linux(nr: u64) {}\nlet linuxish = 1; // crate::linux::x\nuse crate::{fs, proc};\n";
    assert!(statements(clean).iter().all(|(_, c)| !names_linux(c)), "{:?}", statements(clean));
}
