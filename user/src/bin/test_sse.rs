//! Boot test: SSE state survives preemption between two environments that
//! both use all sixteen XMM registers and never yield.
#![no_std]
#![no_main]

use user::{println, spawn};

fn main(_: u64) -> i32 {
    let a = spawn::spawn("sse_worker", 1).unwrap();
    let b = spawn::spawn("sse_worker", 2).unwrap();
    let (ca, cb) = (spawn::wait(a).unwrap(), spawn::wait(b).unwrap());
    println!("workers ended with {ca} and {cb}");
    if ca == 0 && cb == 0 {
        0
    } else {
        1
    }
}

user::entry!(main);
