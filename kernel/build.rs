//! Links the kernel binary with its own linker script, for the bare-metal
//! target only (host builds of the library are for unit tests).
fn main() {
    println!("cargo:rerun-if-changed=linker.ld");
    if std::env::var("TARGET").as_deref() == Ok("x86_64-unknown-none") {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
        println!("cargo:rustc-link-arg-bins=-T{dir}/linker.ld");
        println!("cargo:rustc-link-arg-bins=-zmax-page-size=4096");
    }
}
