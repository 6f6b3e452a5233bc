//! The library OS in layers (docs/libos.md, "Layers"): each file of
//! `src/` belongs to one layer of `LAYERS`, and names (in a path or a `use`
//! list) only files of its own layer or of layers below; and no files name
//! each other in a cycle. The core (every module outside `src/linux/`)
//! does not name the Linux personality, so a second personality or a
//! native program can use the core alone; only the programs in `src/bin/`
//! choose a personality.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first: a module (`a/b` is `src/a/b.rs`, `a` is
/// `src/a.rs` or `src/a/mod.rs`; `a/*` every module under `a`) and the
/// layer it is in.
const LAYERS: &[(&str, &[&str])] = &[
    // What every part uses and that knows no process state.
    (
        "base",
        &[
            "layout", "errno", "copy", "range", "heap", "time", "scoped", "word", "env", "random", "selfmap",
            "signo",
        ],
    ),
    // The thread's block: where each module keeps its per-thread words.
    ("entry", &["entry"]),
    // The shared arena and the private heap.
    ("arena", &["shared", "private"]),
    // The file system in the arena (`/proc` is registered from above).
    ("fs", &["fs", "fs/node", "fs/dir", "fs/path", "fs/stat", "fs/mount", "fs/sysfs", "fs/xnclient"]),
    // The program's memory, and reaching it from the library.
    ("memory", &["vm", "uaccess"]),
    // The big lock, notes, sleeping in the kernel, and the tables kept
    // under the lock for every process (futex waiters, file locks).
    ("lock", &["lock", "log", "predicate", "sleep", "futex", "locks"]),
    // The network stack every process shares, over its packet endpoint.
    ("net", &["net", "net/*"]),
    // Open files and their objects: they answer at once, never sleep or
    // signal.
    // (`fs/disk`, the disk's C-FFS at /data, says what it refuses in a note.)
    ("obj", &["obj", "obj/*", "fd", "fs/devfs", "fs/boot", "fs/disk"]),
    // Processes: ids, table, signals, threads, fork, exit.
    ("proc", &["proc", "proc/*", "oom", "alarm", "fs/procfs"]),
    // Waiting for files, and the calls that wait (blocking reads, writes).
    ("wait", &["wait", "io"]),
    // Programs: loading, the exception stub and dispatch, the native
    // interface.
    ("program", &["exec", "loader", "vdso", "trap", "native"]),
    // Personalities.
    ("personality", &["linux", "linux/*"]),
];

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

/// The module a source file is (`a/b`; `a` for `a/mod.rs`; `` for lib.rs).
fn module_of(rel: &Path) -> String {
    let s = rel.with_extension("").to_string_lossy().replace('\\', "/");
    match s.strip_suffix("/mod") {
        Some(m) => m.to_string(),
        None if s == "lib" => String::new(),
        None => s,
    }
}

/// The layer of module `m` (its index in `LAYERS`).
fn layer_of(m: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| {
        ms.iter().any(|p| match p.strip_suffix("/*") {
            Some(dir) => m.strip_prefix(dir).is_some_and(|r| r.starts_with('/')),
            None => *p == m,
        })
    })
}

/// The modules `code` (one statement of module `here`) names through
/// `crate::`, `super::` or `self::` paths, and `use` lists of them, each
/// resolved to the longest module of `mods` it starts with.
fn named(code: &str, here: &str, mods: &BTreeSet<String>) -> Vec<String> {
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

/// The core's modules and the modules each names (host tests, `mod
/// tests`, are not part of the design and are left out).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let files: Vec<(String, String)> = files
        .iter()
        .filter(|f| !f.strip_prefix(&src).unwrap().starts_with("bin"))
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let text = text.split("#[cfg(test)]").next().unwrap().to_string();
            (module_of(f.strip_prefix(&src).unwrap()), text)
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
/// components of more than one module).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
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
            let comp: Vec<String> = t.stack.drain(at..).map(String::from).collect();
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

/// Every edge of `g` from a lower layer to a higher one, and every module
/// in no layer.
fn upward(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut bad = Vec::new();
    for (m, names) in g.iter().filter(|(m, _)| !m.is_empty()) {
        let Some(lm) = layer_of(m) else {
            bad.push(format!("{m}: in no layer"));
            continue;
        };
        for t in names.iter().filter(|t| !t.is_empty()) {
            match layer_of(t) {
                Some(lt) if lt <= lm => {}
                Some(lt) => bad.push(format!("{m} ({}) names {t} ({})", LAYERS[lm].0, LAYERS[lt].0)),
                None => bad.push(format!("{m} names {t}, in no layer")),
            }
        }
    }
    bad
}

#[test]
fn no_layer_names_a_layer_above_it() {
    let g = graph();
    assert!(g.len() > 80, "found only {} modules", g.len());
    let bad = upward(&g);
    assert!(bad.is_empty(), "the library's layers are crossed upwards:\n{}", bad.join("\n"));
}

#[test]
fn no_files_name_each_other_in_a_cycle() {
    let c = cycles(&graph());
    assert!(c.is_empty(), "import cycles in the library: {c:?}");
}

#[test]
fn the_layer_check_sees_an_upward_name_and_a_cycle() {
    let mods: BTreeSet<String> =
        ["lock", "proc", "proc/signal", "obj", "obj/pipe", "vm"].iter().map(|s| s.to_string()).collect();
    // Paths, `use` lists and `super::` from inside a directory.
    assert_eq!(named("let t = crate::proc::signal::pending();", "lock", &mods), ["proc/signal"]);
    assert_eq!(named("use crate::{proc::signal, vm};", "lock", &mods), ["proc/signal", "vm"]);
    assert_eq!(named("use super::pipe::{self, Pipe};", "obj/fifo", &mods), ["obj/pipe"]);
    assert_eq!(named("super::signal::send(1, 2)", "proc/kill", &mods), ["proc/signal"]);
    assert!(named("use super::{File, Kind};", "obj/pipe", &mods).is_empty(), "a parent is not an import");
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("lock", &["proc/signal"][..]),
        ("proc/signal", &["obj/pipe"][..]),
        ("obj/pipe", &["lock"][..]),
        ("vm", &[][..]),
    ]
    .iter()
    .map(|(m, ns)| (m.to_string(), ns.iter().map(|s| s.to_string()).collect()))
    .collect();
    // Down (obj/pipe to lock, proc/signal to obj/pipe) is allowed; up is not.
    assert_eq!(upward(&g), ["lock (lock) names proc/signal (proc)"]);
    assert_eq!(cycles(&g).len(), 1);
    assert_eq!(cycles(&g)[0].len(), 3);
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
