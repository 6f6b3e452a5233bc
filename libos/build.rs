//! The Linux runtime shares its address space with a Linux binary linked at
//! 0x400000, so it is linked high (but below 2 GiB, so the default small
//! code model still reaches every symbol) and, like every Veneer program,
//! without any C runtime.
fn main() {
    println!("cargo:rustc-link-arg-bins=-nostartfiles");
    println!("cargo:rustc-link-arg-bins=-nostdlib");
    println!("cargo:rustc-link-arg-bins=-static");
    println!("cargo:rustc-link-arg-bins=-no-pie");
    println!("cargo:rustc-link-arg-bins=-Wl,--build-id=none");
    println!("cargo:rustc-link-arg-bins=-Wl,--image-base=0x60000000");
}
