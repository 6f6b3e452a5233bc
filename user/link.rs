// Shared by the build scripts of `user`, `nest` and `libos` (`include!`):
// Veneer programs are freestanding static executables.

/// Links every binary of the package with no C runtime, no libc, statically
/// and not position-independent.
fn link_freestanding() {
    for arg in ["-nostartfiles", "-nostdlib", "-static", "-no-pie", "-Wl,--build-id=none"] {
        println!("cargo:rustc-link-arg-bins={arg}");
    }
}
