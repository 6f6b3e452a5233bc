//! The storage tools, run on the host over the same crates the kernel and
//! the library OS link (`xn`, `cffs`), built in release mode:
//!
//! - `mkfs IMAGE [--size MIB] [--from DIR] [--owner UID:GID] [--no-embed] [--no-group]`
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

/// Size of the disk `cargo xtask run` makes (MiB).
const RUN_DISK_MIB: u64 = 256;

/// `cargo xtask run`'s disk at `path`: kept if it is there (unless
/// `fresh`), else made by `mkfs` with an empty C-FFS owned by root.
pub fn persistent_disk(path: &std::path::Path, fresh: bool) -> Result<(), String> {
    if path.exists() && !fresh {
        println!("xtask: keeping the disk {} (`--fresh` makes a new one)", path.display());
        return Ok(());
    }
    let _ = std::fs::remove_file(path);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let empty = build::root().join("target/disks/empty");
    let _ = std::fs::remove_dir_all(&empty);
    std::fs::create_dir_all(&empty).map_err(|e| e.to_string())?;
    println!("xtask: making a {RUN_DISK_MIB} MiB C-FFS disk at {}", path.display());
    mkfs(&[
        path.display().to_string(),
        "--size".into(),
        RUN_DISK_MIB.to_string(),
        "--from".into(),
        empty.display().to_string(),
        "--owner".into(),
        "0:0".into(),
    ])
}
