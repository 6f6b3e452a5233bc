//! Links the image at its own base with the drivers' linker script (for
//! the bare-metal target only).
fn main() {
    println!("cargo:rerun-if-changed=../driver.ld");
    if std::env::var("TARGET").as_deref() == Ok("x86_64-unknown-none") {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
        println!("cargo:rustc-link-arg-bins=-T{dir}/../driver.ld");
        println!("cargo:rustc-link-arg-bins=--defsym=DRIVER_BASE=0xFFFFFFFFC4000000");
        println!("cargo:rustc-link-arg-bins=-zmax-page-size=4096");
    }
}
