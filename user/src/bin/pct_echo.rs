//! Helper for protected-control-transfer tests and benchmarks: opens its
//! entry point (the echo stub in `user::pct`) and waits.
#![no_std]
#![no_main]

#[repr(C, align(16))]
struct Stack([u8; 4096]);
static mut STACK: Stack = Stack([0; 4096]);

fn main(_: u64) -> i32 {
    let top = (&raw const STACK) as u64 + 4096;
    user::sys::set_pct_entry(0, user::pct::echo_entry(), top).unwrap();
    loop {
        user::sys::yield_now();
    }
}

user::entry!(main);
