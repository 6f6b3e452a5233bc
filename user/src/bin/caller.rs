//! Helper for the interposition benchmarks: makes `arg` null system calls
//! (`SELF_ID`), then exits.
#![no_std]
#![no_main]

fn main(n: u64) -> i32 {
    for _ in 0..n {
        user::sys::call0(abi::syscall::SELF_ID);
    }
    0
}

user::entry!(main);
