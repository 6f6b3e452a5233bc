//! Compiles C-FFS's UDFs (restricted C, `udf/cffs.c`) to eBPF with
//! `clang -target bpf`; the library embeds the object and XN verifies the
//! functions when they are installed.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("cffs.o");
    let src = dir.join("udf/cffs.c");
    let include = |p: &str| dir.join("..").join(p);
    for dep in [src.clone(), include("xn/include/xn_udf.h"), include("bpf/include/veneer_bpf.h")] {
        println!("cargo:rerun-if-changed={}", dep.display());
    }
    let status = Command::new("clang")
        .args(["-target", "bpf", "-O2", "-g0", "-c"])
        .arg("-I")
        .arg(include("bpf/include"))
        .arg("-I")
        .arg(include("xn/include"))
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("clang failed on {} ({s})", src.display()),
        Err(e) => panic!("cannot run clang ({e}): `cargo xtask` installs it (xtask/src/deps.rs)"),
    }
}
