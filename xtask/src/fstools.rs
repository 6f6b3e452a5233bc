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
