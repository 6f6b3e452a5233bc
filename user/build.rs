//! User programs are freestanding static executables: no C runtime, no
//! libc, linked at the traditional 0x400000.
include!("link.rs");

fn main() {
    link_freestanding();
}
