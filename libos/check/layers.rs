//! The library OS in layers (docs/libos.md, "Layers"): each file of
//! `src/` belongs to one layer of `LAYERS`, and names (in a path or a `use`
//! list) only files of its own layer or of layers below; and no files name
//! each other in a cycle. The core (every module outside `src/linux/`)
//! does not name the Linux personality, so a second personality or a
//! native program can use the core alone; only the programs in `src/bin/`
//! choose a personality.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

// The import graph, shared with the kernel's cycle check.
#[path = "../../xtask/src/imports.rs"]
mod imports;
use imports::{cycles, named, sources, statements};

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
    (
        "fs",
        &[
            "fs",
            "fs/inode",
            "fs/node",
            "fs/pages",
            "fs/dir",
            "fs/path",
            "fs/stat",
            "fs/mount",
            "fs/sysfs",
            "fs/xnclient",
            "fs/perm",
        ],
    ),
    // The program's memory, and reaching it from the library.
    ("memory", &["vm", "uaccess", "filemap"]),
    // The big lock, notes, sleeping in the kernel, and the tables kept
    // under the lock for every process (futex waiters, file locks).
    ("lock", &["lock", "log", "predicate", "sleep", "futex", "locks"]),
    // The network stack every process shares, over its packet endpoint.
    ("net", &["net", "net/*"]),
    // Open files and their objects: they answer at once, never sleep or
    // signal.
    // (`fs/disk`, the disk's C-FFS at /data, says what it refuses in a note.)
    ("obj", &["obj", "obj/*", "fd", "fs/devfs", "fs/boot", "fs/disk", "fs/content"]),
    // Processes: ids, table, signals, threads, fork, exit.
    (
        "proc",
        &[
            "proc",
            "proc/*",
            "oom",
            "alarm",
            "fs/procfs",
            "fs/procfile",
            "fs/procload",
            "fs/procstatus",
            "fs/procsys",
        ],
    ),
    // Waiting for files, and the calls that wait (blocking reads, writes).
    ("wait", &["wait", "io"]),
    // Programs: loading, the exception stub and dispatch, the native
    // interface.
    ("program", &["exec", "loader", "vdso", "trap", "native"]),
    // Personalities.
    ("personality", &["linux", "linux/*"]),
];

/// Whether a statement names the module `linux`: as a path segment
/// (`linux::`, `crate::linux`), or in a `use` list (`use crate::{fs, linux};`).
fn names_linux(code: &str) -> bool {
    let is_use = code.starts_with("use ") || code.starts_with("pub use ");
    code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .any(|w| (w.contains("::") || is_use) && w.split("::").any(|seg| seg == "linux"))
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

/// The library's modules and the modules each names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    imports::graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
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
