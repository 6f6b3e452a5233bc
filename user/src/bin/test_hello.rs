//! Boot test: the first environment runs in ring 3 and reads the kernel's
//! exposed information page.
#![no_std]
#![no_main]

use user::{kinfo, println};

fn main(_: u64) -> i32 {
    let cs: u16;
    // SAFETY: reading the code-segment selector has no side effects.
    unsafe { core::arch::asm!("mov {:x}, cs", out(reg) cs) };
    if cs & 3 != 3 {
        println!("not in ring 3 (cs = {cs:#x})");
        return 1;
    }
    println!("hello from ring 3 (environment {:#x})", user::sys::self_id());
    let k = kinfo::kernel();
    println!("kernel: {} frames, {} free, command line {:?}", k.frames, k.free_frames, kinfo::cmdline());
    if k.frames == 0 || k.free_frames == 0 || !kinfo::cmdline().contains("init=test_hello") {
        return 1;
    }
    0
}

user::entry!(main);
