//! Boot test: booted with `selftest=jit`, the kernel compiles thousands of
//! random verified eBPF programs with its JIT into executable kernel pages,
//! runs them there and compares every result with the reference
//! interpreter before starting this program (the boot fails on the first
//! disagreement; the test checks the kernel's report line).
#![no_std]
#![no_main]

fn main(_: u64) -> i32 {
    let asked = user::kinfo::cmdline().split_whitespace().any(|w| w == "selftest=jit");
    user::println!("kernel JIT self-test requested: {asked}");
    if asked {
        0
    } else {
        1
    }
}

user::entry!(main);
