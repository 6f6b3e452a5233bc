//! Nesters are freestanding static executables like every user program:
//! no C runtime, no libc, linked at the traditional 0x400000.
fn main() {
    println!("cargo:rustc-link-arg-bins=-nostartfiles");
    println!("cargo:rustc-link-arg-bins=-nostdlib");
    println!("cargo:rustc-link-arg-bins=-static");
    println!("cargo:rustc-link-arg-bins=-no-pie");
    println!("cargo:rustc-link-arg-bins=-Wl,--build-id=none");
}
