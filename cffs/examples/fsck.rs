//! `fsck IMAGE [--compare DIR]`: mounts the XN disk read-only (the free-map rebuild
//! checks every claim) and checks the C-FFS on it without recovering;
//! says precisely what is wrong and exits non-zero if anything is.
//! `cargo xtask fsck` runs it.

#[path = "common/file_disk.rs"]
mod file_disk;

use cffs::{Fs, Local};
use file_disk::FileDisk;
use xn::Cred;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(image) = args.get(1).cloned() else {
        eprintln!("usage: fsck IMAGE [--compare DIR]");
        std::process::exit(2);
    };
    let compare = args.iter().position(|a| a == "--compare").and_then(|i| args.get(i + 1)).cloned();
    let bad = |what: String| -> ! {
        println!("fsck: {image}: {what}");
        std::process::exit(1);
    };
    let disk = FileDisk::open(&image).unwrap_or_else(|e| bad(e));
    let local =
        Local::mount(disk, 1, Cred::new(0, 0)).unwrap_or_else(|e| bad(format!("XN refuses to mount: {e:?}")));
    let report = local.report.clone();
    for c in &report.conflicts {
        println!(
            "fsck: block {} claimed again (as template {}) by {:?}{}",
            c.block,
            c.tid,
            c.claimant,
            if c.cycle { ", which it contains: a loop" } else { "" }
        );
    }
    let mut fs = Fs::open(local, false).unwrap_or_else(|e| bad(format!("C-FFS refuses to open: {e:?}")));
    let r = cffs::check::fsck(&mut fs);
    let mut problems = r.problems.clone();
    if let Some(dir) = compare {
        match cffs::check::snapshot(&mut fs) {
            Ok(snap) => problems.extend(compare_tree(&snap, std::path::Path::new(&dir))),
            Err(e) => problems.push(format!("reading the tree: {e:?}")),
        }
    }
    for p in &problems {
        println!("fsck: {p}");
    }
    println!(
        "fsck: {image}: {} files, {} directories, {} symbolic links, {} table inodes; {} metadata blocks, {} blocks in use; {}",
        r.files,
        r.dirs,
        r.symlinks,
        r.table_inodes,
        report.metadata_blocks,
        report.allocated_blocks,
        if problems.is_empty() && report.conflicts.is_empty() { "clean" } else { "PROBLEMS" }
    );
    if !problems.is_empty() || !report.conflicts.is_empty() {
        std::process::exit(1);
    }
}

/// Every file, link and directory of the host tree `dir` must be in the
/// image with the same contents, and nothing else.
fn compare_tree(
    snap: &std::collections::BTreeMap<String, cffs::check::Node>,
    dir: &std::path::Path,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = 0;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let rel = format!("/{}", p.strip_prefix(dir).unwrap_or(&p).display());
            let Ok(md) = std::fs::symlink_metadata(&p) else { continue };
            let want = if md.is_dir() {
                todo.push(p.clone());
                Some(Vec::new())
            } else if md.file_type().is_symlink() {
                std::fs::read_link(&p).ok().map(|t| t.as_os_str().as_encoded_bytes().to_vec())
            } else if md.is_file() {
                std::fs::read(&p).ok()
            } else {
                None
            };
            let Some(want) = want else { continue };
            seen += 1;
            match snap.get(&rel) {
                None => out.push(format!("{rel} is missing")),
                Some(n) if n.data != want => out.push(format!("{rel} differs")),
                _ => {}
            }
        }
    }
    if snap.len() != seen {
        out.push(format!("the image has {} names, the tree {seen}", snap.len()));
    }
    out
}
