//! The storage tools, run on the host over the same crates the kernel and
//! the library OS link (`xn`, `cffs`), built in release mode:
//!
//! - `mkfs IMAGE [--size MIB] [--from DIR] [--cpio ARCHIVE] [--owner UID:GID] [--no-embed] [--no-group]`
//! - `fsck IMAGE [--compare DIR]`
//! - `crash [--states N] [--seed S] [--depth 1|2] [--seeded-bug]`: the
//!   crash-consistency campaign (docs/cffs.md)
//! - `corrupt [--mutations N] [--seed S]`: the corrupt-image campaign

use std::process::Command;

use crate::build;

/// Runs example `name` of the `cffs` crate with `args`, at low priority
/// (campaigns are long and the machine is shared).
fn example(name: &str, args: &[String]) -> Result<(), String> {
    crate::deps::ensure(crate::deps::STORAGE)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new("nice")
        .args(["-n", "10"])
        .arg(cargo)
        .args(["run", "--release", "--quiet", "-p", "cffs", "--example", name, "--"])
        .args(args)
        .current_dir(build::root())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{name} failed"))
    }
}

pub fn mkfs(args: &[String]) -> Result<(), String> {
    example("mkfs", args)
}

pub fn fsck(args: &[String]) -> Result<(), String> {
    example("fsck", args)
}

pub fn crash(args: &[String]) -> Result<(), String> {
    example("crash", args)
}

pub fn corrupt(args: &[String]) -> Result<(), String> {
    example("corrupt", args)
}

/// The least size of a root disk (MiB): a tree of a few MiB still gets
/// room to work in.
const ROOT_DISK_MIB: u64 = 512;

/// A new C-FFS disk at `path` (any old one goes) holding the root tree of
/// boot archive `archive` (its `root/` members, with their modes and
/// owners), sized for twice the archive and at least `ROOT_DISK_MIB`:
/// `cargo xtask run`'s root and the root-disk boot tests'.
pub fn root_disk(path: &std::path::Path, archive: &std::path::Path) -> Result<(), String> {
    let _ = std::fs::remove_file(path);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let tree = std::fs::metadata(archive).map_err(|e| format!("{}: {e}", archive.display()))?.len() >> 20;
    let mib = (2 * tree + 64).max(ROOT_DISK_MIB);
    println!("xtask: making a {mib} MiB C-FFS root disk at {} from the root tree", path.display());
    mkfs(&[
        path.display().to_string(),
        "--size".into(),
        mib.to_string(),
        "--cpio".into(),
        archive.display().to_string(),
    ])
}
