//! A do-nothing nester (paper 003 §6.2): runs `caller` (with `arg`) in an
//! interposed child and lets every event through; exits with its code.
//! Stacked under another interposer it makes a second level of nesting.
#![no_std]
#![no_main]

use abi::nest::answer;
use user::{nest, spawn};

fn main(n: u64) -> i32 {
    let Ok(child) = spawn::spawn_stopped("caller", n) else { return 1 };
    if nest::interpose(child, true).is_err() || spawn::start(child).is_err() {
        return 1;
    }
    nest::serve(child, |_, _, _| (answer::PASS, 0)).unwrap_or(1)
}

user::entry!(main);
