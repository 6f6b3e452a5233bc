//! Helper for the environment-tree test: takes 32 frames, starts a child
//! one level deeper (while depth > 1), then waits to be destroyed.
#![no_std]
#![no_main]

use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use user::sys;

fn main(depth: u64) -> i32 {
    for i in 0..32u64 {
        let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
        let va = 0x6000_0000_0000 + i * 4096;
        sys::map(ENV_SELF, va, f, mf::WRITE).unwrap();
        // SAFETY: just mapped writable.
        unsafe { core::ptr::write_volatile(va as *mut u64, depth) };
    }
    if depth > 1 {
        user::spawn::spawn("treenode", depth - 1).unwrap();
    }
    loop {
        sys::yield_now();
    }
}

user::entry!(main);
