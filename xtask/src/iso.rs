//! A hybrid BIOS/UEFI ISO with GRUB loading the kernel by Multiboot2.

use crate::boottest::BootTest;
use crate::build::{self, root};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const OVMF: &str = "/usr/share/OVMF/OVMF_CODE.fd";

/// Builds `target/veneer.iso` booting `init` and returns its path.
pub fn build_with(init: &str) -> Result<PathBuf, String> {
    let img = build::all()?;
    let dir = root().join("target/iso");
    let grub = dir.join("boot/grub");
    std::fs::create_dir_all(&grub).map_err(|e| e.to_string())?;
    std::fs::copy(&img.kernel, dir.join("boot/kernel")).map_err(|e| e.to_string())?;
    std::fs::copy(&img.bootfs, dir.join("boot/bootfs.cpio")).map_err(|e| e.to_string())?;
    let cfg = format!(
        "set timeout=0\nset default=0\nserial --unit=0 --speed=115200\nterminal_output serial console\n\
         menuentry \"Veneer\" {{\n  multiboot2 /boot/kernel init={init}\n  module2 /boot/bootfs.cpio bootfs\n  boot\n}}\n"
    );
    std::fs::write(grub.join("grub.cfg"), cfg).map_err(|e| e.to_string())?;
    let iso = root().join("target/veneer.iso");
    let out = Command::new("grub-mkrescue")
        .arg("-o")
        .arg(&iso)
        .arg(&dir)
        .output()
        .map_err(|e| format!("cannot run grub-mkrescue: {e}"))?;
    if !out.status.success() {
        return Err(format!("grub-mkrescue failed:\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(iso)
}

/// `cargo xtask iso`: the ISO boots the shell.
pub fn build() -> Result<PathBuf, String> {
    crate::deps::ensure(crate::deps::TEST)?;
    build_with("shell")
}

/// The boot test that boots the ISO under OVMF (UEFI) once.
pub fn boot_test() -> Result<BootTest, String> {
    let iso = build_with("test_hello")?;
    let mut args = crate::qemu::machine_args();
    for a in [
        "-drive",
        &format!("if=pflash,format=raw,readonly=on,file={OVMF}"),
        "-cdrom",
        &iso.display().to_string(),
    ] {
        args.push(a.to_string());
    }
    Ok(BootTest::new(
        "iso (GRUB, UEFI)".into(),
        args,
        vec!["hello from ring 3".into(), "multiboot2".into()],
        Duration::from_secs(180),
    ))
}
