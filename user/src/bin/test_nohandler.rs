//! Boot test: an environment without an exception handler that faults is
//! destroyed with a console message naming the fault; its parent sees the
//! fault in the exit code and no frame is leaked.
#![no_std]
#![no_main]

use abi::tables::FAULT_EXIT_BASE;
use user::{kinfo, println, spawn};

fn main(_: u64) -> i32 {
    let before = kinfo::free_plus_own();
    let mut ok = true;
    for (arg, vector) in [(1u64, 14i32), (2, 6)] {
        let child = spawn::spawn("faulter", arg).unwrap();
        let code = spawn::wait(child).unwrap();
        println!("child {child:#x} (mode {arg}) ended with code {code}");
        ok &= code == FAULT_EXIT_BASE - vector;
    }
    let after = kinfo::free_plus_own();
    println!("free+own frames before {before}, after {after}");
    if ok && before == after {
        0
    } else {
        1
    }
}

user::entry!(main);
