//! Installs what the commands need on a fresh Debian machine.

use std::path::Path;
use std::process::Command;

/// A host requirement: something to look for, and the Debian package that
/// provides it.
pub struct Need {
    pub path: &'static str,
    pub package: &'static str,
}

const fn need(path: &'static str, package: &'static str) -> Need {
    Need { path, package }
}

/// What `run` and `gdb` need (the boot image holds busybox and the static C
/// test programs of `libos/tests/c/`).
pub const RUN: &[Need] = &[
    need("/usr/bin/qemu-system-x86_64", "qemu-system-x86"),
    need("/bin/busybox", "busybox-static"),
    need("/usr/bin/gcc", "gcc"),
    need("/usr/bin/strip", "binutils"),
    need("/usr/lib/x86_64-linux-gnu/libc.a", "libc6-dev"),
    need(crate::lxtest::GO, "golang-go"),
];

/// What the storage tools need (`cffs` compiles its UDFs with clang).
pub const STORAGE: &[Need] = &[need("/usr/bin/clang", "clang")];

/// What `test` needs: everything `run` needs, plus the ISO and BPF tools.
pub const TEST: &[Need] = &[
    need("/usr/bin/qemu-system-x86_64", "qemu-system-x86"),
    need("/bin/busybox", "busybox-static"),
    need("/usr/share/OVMF/OVMF_CODE.fd", "ovmf"),
    need("/usr/bin/grub-mkrescue", "grub-common"),
    need("/usr/lib/grub/i386-pc/modinfo.sh", "grub-pc-bin"),
    need("/usr/lib/grub/x86_64-efi/modinfo.sh", "grub-efi-amd64-bin"),
    need("/usr/bin/xorriso", "xorriso"),
    need("/usr/bin/mformat", "mtools"),
    need("/usr/bin/clang", "clang"),
    need("/usr/bin/gcc", "gcc"),
    need("/usr/bin/strip", "binutils"),
    need("/usr/lib/x86_64-linux-gnu/libc.a", "libc6-dev"),
    need(crate::lxtest::GO, "golang-go"),
    need("/usr/bin/cpio", "cpio"),
    // The host's side of the tests of Debian programs (`# with:`).
    need("/usr/bin/python3", "python3-minimal"),
    need("/usr/lib/erlang/bin/erl", "erlang-base"),
    need("/usr/bin/dpkg-deb", "dpkg"),
    // The host's side of the network's test (`nettest.rs`).
    need("/usr/bin/curl", "curl"),
    need("/usr/bin/md5sum", "coreutils"),
    // The host's side of `lx_netdb`: Debian's services and protocols.
    need("/etc/services", "netbase"),
    // The Linux side of the storage benchmarks: ext4 on its disk.
    need("/usr/sbin/mke2fs", "e2fsprogs"),
];

/// Installs the packages of every missing requirement with apt-get.
pub fn ensure(needs: &[Need]) -> Result<(), String> {
    let mut missing: Vec<&str> =
        needs.iter().filter(|n| !Path::new(n.path).exists()).map(|n| n.package).collect();
    missing.dedup();
    if missing.is_empty() {
        return Ok(());
    }
    println!("xtask: installing missing packages: {}", missing.join(" "));
    let sudo = !is_root();
    apt(sudo, &["update", "-q"])?;
    let mut args = vec!["install", "-y", "-q", "--no-install-recommends"];
    args.extend(missing);
    apt(sudo, &args)
}

fn apt(sudo: bool, args: &[&str]) -> Result<(), String> {
    let mut cmd = if sudo {
        let mut c = Command::new("sudo");
        c.arg("apt-get");
        c
    } else {
        Command::new("apt-get")
    };
    cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
    let status = cmd.status().map_err(|e| format!("cannot run apt-get: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("apt-get {} failed ({status})", args.join(" ")))
    }
}

/// Adds the pinned toolchain's targets and components when they are missing.
/// rustup installs those of `rust-toolchain.toml` only when it installs the
/// toolchain itself, so a machine that already had the toolchain lacks them.
pub fn ensure_toolchain() -> Result<(), String> {
    let root = crate::build::root();
    let listed = |args: &[&str]| -> Result<String, String> {
        let out = Command::new("rustup")
            .args(args)
            .current_dir(&root)
            .output()
            .map_err(|e| format!("cannot run rustup: {e}"))?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let targets = listed(&["target", "list", "--installed"])?;
    // The kernel's target, and musl's for the static-PIE Rust test programs.
    for t in [crate::build::KERNEL_TARGET, crate::lxtest::MUSL_TARGET] {
        if !targets.lines().any(|l| l.trim() == t) {
            println!("xtask: adding the Rust target {t}");
            rustup(&root, &["target", "add", t])?;
        }
    }
    let components = listed(&["component", "list", "--installed"])?;
    for c in ["rustfmt", "clippy"] {
        if !components.lines().any(|l| l.starts_with(c)) {
            println!("xtask: adding the Rust component {c}");
            rustup(&root, &["component", "add", c])?;
        }
    }
    Ok(())
}

fn rustup(dir: &Path, args: &[&str]) -> Result<(), String> {
    let status = Command::new("rustup")
        .args(args)
        .current_dir(dir)
        .status()
        .map_err(|e| format!("cannot run rustup: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("rustup {} failed ({status})", args.join(" ")))
    }
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0\n")).unwrap_or(false)
}
