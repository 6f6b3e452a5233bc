//! Nesters are freestanding static executables like every user program:
//! no C runtime, no libc, linked at the traditional 0x400000.
include!("../user/link.rs");

fn main() {
    link_freestanding();
}
