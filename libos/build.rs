//! The Linux runtime shares its address space with a Linux binary linked at
//! 0x400000, so it is linked high (but below 2 GiB, so the default small
//! code model still reaches every symbol) and, like every Veneer program,
//! without any C runtime. The vDSO it maps into Linux programs
//! (`src/vdso.rs`) is built here from `vdso/` by the host's gcc.
use std::process::Command;

include!("../user/link.rs");

fn main() {
    link_freestanding();
    println!("cargo:rustc-link-arg-bins=-Wl,--image-base=0x60000000");
    vdso();
}

/// `OUT_DIR/vdso.so`: position-independent, without relocations (nobody
/// relocates a vDSO), its symbols versioned LINUX_2.6 as glibc looks them
/// up. The entry point is one of its functions only because lxrt's ELF
/// check asks every image for one in code.
fn vdso() {
    println!("cargo:rerun-if-changed=vdso/vdso.c");
    println!("cargo:rerun-if-changed=vdso/vdso.map");
    println!("cargo:rerun-if-changed=vdso/vdso.lds");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("vdso.so");
    let status = Command::new("gcc")
        .args(["-O2", "-fPIC", "-shared", "-nostdlib", "-fno-stack-protector", "-fno-builtin"])
        .args(["-mgeneral-regs-only", "-Wall", "-Wextra", "-Werror"])
        .args(["-Wl,-soname=linux-vdso.so.1", "-Wl,--hash-style=both", "-Wl,--build-id=none"])
        .args(["-Wl,--version-script=vdso/vdso.map", "-Wl,-z,noexecstack", "-Wl,-e,__vdso_clock_gettime"])
        .arg("-Wl,-T,vdso/vdso.lds")
        .arg("-o")
        .arg(&out)
        .arg("vdso/vdso.c")
        .status()
        .expect("running gcc for the vDSO");
    assert!(status.success(), "gcc failed on vdso/vdso.c");
    let relocs = Command::new("readelf").arg("-r").arg(&out).output().expect("running readelf");
    let text = String::from_utf8_lossy(&relocs.stdout);
    assert!(text.contains("no relocations"), "the vDSO must not need relocating:\n{text}");
}
