//! Helper for the yield ping-pong benchmark: yields `n` times, then exits.
#![no_std]
#![no_main]

fn main(n: u64) -> i32 {
    for _ in 0..n {
        user::sys::yield_now();
    }
    0
}

user::entry!(main);
