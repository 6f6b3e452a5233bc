//! File-level imports of a Rust crate's sources, for the host tests that
//! keep the kernel and the library free of import cycles
//! (`xtask/src/conventions.rs`) and the library in its layers
//! (`libos/check/layers.rs`, which includes this file).
//!
//! Each file of `src/` is a module (`a/b` is `src/a/b.rs`, `a` is
//! `src/a.rs` or `src/a/mod.rs`, `` is `lib.rs`); a file names another when
//! it writes a `crate::`, `super::` or `self::` path into it, or a `use` list
//! under one, resolved to the longest module that exists. A module and its
//! own parent or child do not count (that is Rust's module tree, not a
//! design choice), nor do host tests (a `#[cfg(test)] mod` and what follows
//! it) or the programs in `src/bin/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
pub fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
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
pub fn statements(text: &str) -> Vec<(usize, String)> {
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

/// `text` up to its host-test module (`#[cfg(test)]` then `mod name {`);
/// a `#[cfg(test)]` on another item (a counter only tests read) stays.
pub fn design(text: &str) -> &str {
    let mut at = 0;
    while let Some(i) = text[at..].find("#[cfg(test)]").map(|i| i + at) {
        let rest = text[i + "#[cfg(test)]".len()..].trim_start();
        let module = rest
            .strip_prefix("mod ")
            .map(|r| r.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_'));
        if module.is_some_and(|r| r.trim_start().starts_with('{')) {
            return &text[..i];
        }
        at = i + 1;
    }
    text
}

/// The module a source file is (`a/b`; `a` for `a/mod.rs`; `` for lib.rs).
pub fn module_of(rel: &Path) -> String {
    let s = rel.with_extension("").to_string_lossy().replace('\\', "/");
    match s.strip_suffix("/mod") {
        Some(m) => m.to_string(),
        None if s == "lib" => String::new(),
        None => s,
    }
}

/// The modules `code` (one statement of module `here`) names through
/// `crate::`, `super::` or `self::` paths, and `use` lists of them, each
/// resolved to the longest module of `mods` it starts with.
pub fn named(code: &str, here: &str, mods: &BTreeSet<String>) -> Vec<String> {
    let resolve = |kind: &str, parts: &[&str]| -> Option<String> {
        let mut base: Vec<&str> = if here.is_empty() { vec![] } else { here.split('/').collect() };
        let mut parts = parts;
        match kind {
            "crate" => base.clear(),
            "self" => {}
            _ => {
                base.pop();
                while parts.first() == Some(&"super") {
                    parts = &parts[1..];
                    base.pop();
                }
            }
        }
        let full: Vec<&str> = base.into_iter().chain(parts.iter().copied()).collect();
        (0..=full.len()).rev().map(|n| full[..n].join("/")).find(|m| mods.contains(m))
    };
    let mut out = Vec::new();
    let words: Vec<&str> = code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).collect();
    for w in &words {
        let segs: Vec<&str> = w.split("::").filter(|s| !s.is_empty()).collect();
        if let Some(i) = segs.iter().position(|s| matches!(*s, "crate" | "super" | "self")) {
            out.extend(resolve(segs[i], &segs[i + 1..]));
        }
    }
    // `use crate::a::{b, c::d}`: each item of the list under the prefix.
    if let (Some(open), Some(head)) = (code.find('{'), code.split_whitespace().find(|w| w.contains("::{"))) {
        let prefix: Vec<&str> = head.split("::{").next().unwrap().split("::").collect();
        if let Some(kind) = prefix.first().filter(|k| matches!(**k, "crate" | "super" | "self")) {
            let list = &code[open + 1..code.rfind('}').unwrap_or(code.len())];
            for item in list.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
                let item: Vec<&str> = item.split("::").filter(|s| !s.is_empty()).collect();
                if !item.is_empty() {
                    let parts: Vec<&str> = prefix[1..].iter().copied().chain(item).collect();
                    out.extend(resolve(kind, &parts));
                }
            }
        }
    }
    // A module and its own parent or child: Rust's tree, not a choice.
    out.retain(|m| m != here && !is_parent(m, here) && !is_parent(here, m));
    out.sort();
    out.dedup();
    out
}

/// Whether module `a` is module `b`'s parent.
fn is_parent(a: &str, b: &str) -> bool {
    b.rsplit_once('/').map_or(!b.is_empty() && a.is_empty(), |(p, _)| p == a)
}

/// The modules of the crate whose sources are in `src` and the modules
/// each names.
pub fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let files: Vec<(String, String)> = files
        .iter()
        .filter(|f| !f.strip_prefix(src).unwrap().starts_with("bin"))
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            (module_of(f.strip_prefix(src).unwrap()), design(&text).to_string())
        })
        .collect();
    let mods: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    files
        .iter()
        .map(|(m, text)| {
            let names = statements(text).iter().flat_map(|(_, c)| named(c, m, &mods)).collect();
            (m.clone(), names)
        })
        .collect()
}

/// The modules of `g` that lie on a cycle (Tarjan's strongly connected
/// components of more than one module), each sorted.
pub fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        for w in t.g[v].iter().filter(|w| t.g.contains_key(*w)) {
            if !t.index.contains_key(w.as_str()) {
                visit(t, w);
                let lw = t.low[w.as_str()];
                t.low.entry(v).and_modify(|l| *l = (*l).min(lw));
            } else if t.stack.contains(&w.as_str()) {
                let iw = t.index[w.as_str()];
                t.low.entry(v).and_modify(|l| *l = (*l).min(iw));
            }
        }
        if t.low[v] == t.index[v] {
            let at = t.stack.iter().rposition(|x| *x == v).unwrap();
            let mut comp: Vec<String> = t.stack.drain(at..).map(String::from).collect();
            comp.sort();
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let mut t = T { g, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), out: Vec::new() };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn a_host_test_module_is_cut_and_nothing_else() {
    let text = "use crate::a;\n#[cfg(test)]\npub fn count() {}\nuse crate::b;\n#[cfg(test)]\nmod tests {\n use crate::c;\n}\n";
    assert_eq!(design(text), "use crate::a;\n#[cfg(test)]\npub fn count() {}\nuse crate::b;\n");
    let path = "#[cfg(test)]\n#[path = \"x/t.rs\"]\nmod t;\nuse crate::d;\n";
    assert_eq!(design(path), path);
}
