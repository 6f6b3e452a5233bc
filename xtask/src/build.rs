//! Builds the kernel, the user programs and the boot file system.

use crate::cpio::Archive;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What QEMU boots: the kernel ELF and the boot module.
pub struct Image {
    pub kernel: PathBuf,
    pub bootfs: PathBuf,
}

/// The kernel's build target.
pub const KERNEL_TARGET: &str = "x86_64-unknown-none";
/// User programs are freestanding static ELF executables; the Linux target
/// gives them SSE and the System V ABI without any Linux library.
pub const USER_TARGET: &str = "x86_64-unknown-linux-gnu";

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// Runs cargo with `args` in the workspace root.
pub fn cargo(args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(args).current_dir(root());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo {} failed", args.join(" ")))
    }
}

/// Builds everything and writes the boot file system archive.
pub fn all() -> Result<Image, String> {
    println!("xtask: building the kernel and user programs");
    cargo(
        &[
            "build",
            "--release",
            "-p",
            "kernel",
            "--target",
            KERNEL_TARGET,
        ],
        &[],
    )?;
    cargo(
        &["build", "--release", "-p", "user", "--target", USER_TARGET],
        &[],
    )?;
    let target = root().join("target");
    let kernel = target.join(KERNEL_TARGET).join("release/kernel");
    let bootfs = target.join("bootfs.cpio");
    std::fs::write(&bootfs, bootfs_archive()?).map_err(|e| format!("writing bootfs: {e}"))?;
    Ok(Image { kernel, bootfs })
}

/// Names of the user programs (`user/src/bin/*.rs`).
pub fn user_programs() -> Result<Vec<String>, String> {
    let dir = root().join("user/src/bin");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_suffix(".rs").map(str::to_string)
        })
        .collect();
    names.sort();
    Ok(names)
}

/// Packs every user program into `bin/`.
fn bootfs_archive() -> Result<Vec<u8>, String> {
    let bin = root().join("target").join(USER_TARGET).join("release");
    let mut ar = Archive::default();
    ar.dir("bin");
    for name in user_programs()? {
        let path = bin.join(&name);
        let data = std::fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        ar.file(&format!("bin/{name}"), 0o755, &data);
    }
    Ok(ar.finish())
}
