//! Host tests of the project's conventions that no compiler checks
//! (`cargo test -p xtask`, part of `cargo xtask test`):
//!
//! - frames are `Frame`s: no hand-written `<< 12` or `>> 12` in the
//!   kernel or the drivers outside the frame module (`kernel/src/frames.rs`)
//!   and the page-table walker's index arithmetic (`pagetable::index`),
//!   tests not counted;
//! - the docs name what exists: every file path and every code name a
//!   `docs/*.md` page writes in backticks must still be in the tree.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

/// Every file under `dir` (recursively) whose name ends with one of `exts`,
/// skipping build output.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if p.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | "results") {
                files(&p, exts, out);
            }
        } else if exts.iter().any(|x| name.ends_with(x)) {
            out.push(p);
        }
    }
}

/// The lines of `text` before its `#[cfg(test)]` module, numbered from 1.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l)).take_while(|(_, l)| !l.starts_with("#[cfg(test)]"))
}

/// Hand-written frame shifts in `text`: (line, text) of each.
fn frame_shifts(text: &str) -> Vec<(usize, String)> {
    code_lines(text)
        .filter(|(_, l)| {
            let code = l.split("//").next().unwrap_or("");
            ["<< 12", ">> 12", "<<12", ">>12"].iter().any(|s| {
                code.match_indices(s)
                    .any(|(i, _)| !code[i + s.len()..].starts_with(|c: char| c.is_ascii_digit()))
            })
        })
        .map(|(n, l)| (n, l.trim().to_string()))
        .collect()
}

#[test]
fn frame_shifts_are_found() {
    let bad = "fn a(f: u64) -> u64 {\n    f << 12 // a frame's address\n}\nlet x = y >> 12;\n";
    assert_eq!(frame_shifts(bad).iter().map(|l| l.0).collect::<Vec<_>>(), [2, 4]);
    let fine = "let a = 1 << 120;\n// was f << 12\n#[cfg(test)]\nmod tests { const A: u64 = 5 << 12; }\n";
    assert!(frame_shifts(fine).is_empty(), "{:?}", frame_shifts(fine));
}

#[test]
fn no_frame_shifts_outside_the_frame_module() {
    let mut all = Vec::new();
    files(&root().join("kernel/src"), &[".rs"], &mut all);
    files(&root().join("drivers"), &[".rs"], &mut all);
    let allowed = [root().join("kernel/src/frames.rs")];
    let mut found = Vec::new();
    for f in all.iter().filter(|f| !allowed.contains(f)) {
        let text = std::fs::read_to_string(f).expect("readable source");
        for (n, l) in frame_shifts(&text) {
            found.push(format!("{}:{n}: {l}", f.strip_prefix(root()).unwrap_or(f).display()));
        }
    }
    assert!(found.is_empty(), "hand-written frame shifts (use `frames::Frame`):\n{}", found.join("\n"));
}

/// What a backticked span of a doc names, if it names something checkable.
#[derive(Debug, PartialEq)]
enum Named {
    /// A file path (with at least one `/`, or a bare file name).
    Path(String),
    /// A code name: `a::b::c` (the last segment is checked) or one
    /// identifier that cannot be prose (it has an underscore inside or
    /// mixes case, like `pipe_sleep` or `KernelView`).
    Code(String),
}

/// Crates and names outside the tree that docs may name: Rust crates,
/// Linux's and C's names, other systems' functions and files the docs
/// compare with.
const EXTERNAL: &[&str] = &[
    "core",
    "std",
    "alloc",
    "virtio_drivers",
    "smoltcp",
    "iced_x86",
    "linked_list_allocator",
    "zerocopy",
    // Linux's names the library answers for.
    "FUTEX_PRIVATE_FLAG",
    "F_GETPIPE_SZ",
    "F_SETPIPE_SZ",
    "pthread_getcpuclockid",
    // CPython's regression tests (docs/compat.md).
    "test_large_file_ops",
    "test_sigwait_thread",
    "test_forkinthread",
    "test_itimer_virtual",
    "libc",
    "linux",
    "qemu",
    "cargo",
    "rustc",
    // Linux's kernel and ABI.
    "CONFIG_INIT_ON_ALLOC_DEFAULT_ON",
    "clear_page_erms",
    "clear_page_rep",
    "copy_user_enhanced_fast_string",
    "copy_user_generic_string",
    "memcpy_erms",
    "rep_good",
    "BPF_PSEUDO_MAP_VALUE",
    "AF_INET",
    "CLOCK_TAI",
    "FUTEX_OWNER_DIED",
    "PT_DYNAMIC",
    "SCM_CREDENTIALS",
    "SHUT_RD",
    "iov_len",
    "list_op_pending",
    "si_uid",
    "uc_sigmask",
    "SO_REUSEADDR",
    "SO_RCVTIMEO",
    "SO_SNDTIMEO",
    // seL4, xv6, Hubris.
    "decodeUntypedInvocation",
    "invokeUntyped_Retype",
    "main.c",
    "syscalls.rs",
];

fn classify(span: &str) -> Option<Named> {
    let s = span.trim_end_matches("()").trim_end_matches('!');
    // Templates (`libos/tests/NAME.sh`, `NAME_tN`) and outside names.
    if s.contains("NAME") || EXTERNAL.contains(&s) {
        return None;
    }
    let path_chars = |c: char| c.is_ascii_alphanumeric() || "_-./".contains(c);
    let is_file = [".rs", ".md", ".toml", ".ld", ".c", ".sh"].iter().any(|x| s.ends_with(x));
    if is_file && s.chars().all(path_chars) && !s.starts_with('.') && !s.starts_with('/') {
        return Some(Named::Path(s.to_string()));
    }
    let ident = |w: &str| {
        !w.is_empty()
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !w.starts_with(|c: char| c.is_ascii_digit())
    };
    if s.contains("::") {
        let segs: Vec<&str> = s.split("::").collect();
        if segs.iter().all(|w| ident(w)) && !EXTERNAL.contains(&segs[0]) {
            return Some(Named::Code(segs.last().expect("split gives one").to_string()));
        }
        return None;
    }
    let inner_underscore = s.trim_matches('_').contains('_');
    let mixed =
        s.chars().any(|c| c.is_ascii_lowercase()) && s.chars().skip(1).any(|c| c.is_ascii_uppercase());
    (ident(s) && (inner_underscore || mixed) && !EXTERNAL.contains(&s)).then(|| Named::Code(s.to_string()))
}

/// The backticked spans of a Markdown text: not in fenced blocks, nor in
/// sections whose heading says they are proposed or planned (names of
/// what does not exist yet, on purpose).
fn spans(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut fenced, mut proposed) = (false, false);
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if line.starts_with('#') {
            let h = line.to_lowercase();
            proposed = h.contains("proposed") || h.contains("planned");
        }
        if fenced || proposed {
            continue;
        }
        let parts: Vec<&str> = line.split('`').collect();
        out.extend(parts.iter().skip(1).step_by(2).map(|s| s.to_string()));
    }
    out
}

#[test]
fn doc_names_are_classified() {
    let c = |s: &str| classify(s);
    assert_eq!(c("kernel/src/dev/xpc.rs"), Some(Named::Path("kernel/src/dev/xpc.rs".into())));
    assert_eq!(c("trap.rs"), Some(Named::Path("trap.rs".into())));
    assert_eq!(c("state::enter"), Some(Named::Code("enter".into())));
    assert_eq!(c("Kernel::set_state()"), Some(Named::Code("set_state".into())));
    assert_eq!(c("pipe_sleep"), Some(Named::Code("pipe_sleep".into())));
    assert_eq!(c("KernelView"), Some(Named::Code("KernelView".into())));
    // Prose, commands, values and outside names are left alone.
    for prose in [
        "cargo xtask test",
        "isolation=off",
        "0xFFFF_8000_0000_0000",
        "map",
        "READ",
        "core::mem",
        "--quick",
        "NAME_tN",
    ] {
        assert_eq!(c(prose), None, "{prose}");
    }
    assert_eq!(spans("a `b` c `d::e`\n```\n`x`\n```\n`f`"), ["b", "d::e", "f"]);
    assert_eq!(spans("## Calls (proposed)\n`new_call`\n## Now\n`old_call`"), ["old_call"]);
}

/// Every identifier-like word in the tree's sources, and every file's
/// path relative to the root.
fn tree() -> (BTreeSet<String>, Vec<String>) {
    let mut src = Vec::new();
    files(&root(), &[".rs", ".toml", ".c", ".h", ".sh", ".ld", ".md", ".S"], &mut src);
    let mut words = BTreeSet::new();
    let mut paths = Vec::new();
    for f in &src {
        paths.push(f.strip_prefix(root()).unwrap_or(f).to_string_lossy().to_string());
        if f.extension().is_some_and(|e| e == "md") {
            continue;
        }
        // A Linux test is named after its script or program (`lx_NAME`).
        if f.starts_with(root().join("libos/tests")) {
            if let Some(stem) = f.file_stem() {
                words.insert(format!("lx_{}", stem.to_string_lossy()));
            }
        }
        let text = std::fs::read_to_string(f).unwrap_or_default();
        words.extend(text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map(str::to_string));
    }
    (words, paths)
}

#[test]
fn docs_name_only_what_exists() {
    let (words, paths) = tree();
    let mut docs = Vec::new();
    files(&root().join("docs"), &[".md"], &mut docs);
    let mut stale = Vec::new();
    for d in &docs {
        let text = std::fs::read_to_string(d).expect("readable doc");
        for span in spans(&text) {
            let ok = match classify(&span) {
                None => true,
                Some(Named::Path(p)) => paths.iter().any(|f| f == &p || f.ends_with(&format!("/{p}"))),
                Some(Named::Code(w)) => words.contains(&w),
            };
            if !ok {
                stale.push(format!("{}: `{span}`", d.file_name().unwrap_or_default().to_string_lossy()));
            }
        }
    }
    assert!(stale.is_empty(), "docs name what no longer exists:\n{}", stale.join("\n"));
}
