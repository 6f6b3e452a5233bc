//! Helper for protected-control-transfer tests and benchmarks: opens its
//! entry point (the echo stub in `user::pct`) and waits. With argument 1
//! the entry is guarded by its own root capability, so only callers whose
//! credential dominates it (its ancestors) get through.
#![no_std]
#![no_main]

#[repr(C, align(16))]
struct Stack([u8; 4096]);
static mut STACK: Stack = Stack([0; 4096]);

fn main(arg: u64) -> i32 {
    let top = (&raw const STACK) as u64 + 4096;
    let guard = if arg == 1 { abi::syscall::CRED_SELF } else { abi::syscall::NO_GUARD };
    user::sys::set_pct_entry_guarded(0, user::pct::echo_entry(), top, guard).unwrap();
    loop {
        user::sys::yield_now();
    }
}

user::entry!(main);
