//! Helper for the tracer test: a few system calls with known results, a
//! foreign one (Linux's `getpid`, number 39), and a child it interposes on
//! itself (a nester inside the traced subtree: the child's calls come to
//! it first). Exits 0 if the answers the tracer gave
//! itself (`self_id` = 0x7ace, `getpid` = 0x99) reached it and it saw its
//! child's calls.
#![no_std]
#![no_main]

use abi::nest::answer;
use abi::syscall::ENV_SELF;
use user::{nest, spawn, sys};

fn main(_: u64) -> i32 {
    let id = sys::self_id();
    let _ = sys::debug_write(b"tracee: hello\n");
    let bad = sys::frame_free(u64::MAX - 1);
    sys::env_publish(ENV_SELF, 42).unwrap();
    let pid = sys::call(39, [0; 6]);
    let child = spawn::spawn_stopped("nestee", 1).unwrap();
    nest::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    let mut seen = 0;
    let code = nest::serve(child, |_, _, _| {
        seen += 1;
        (answer::PASS, 0)
    });
    sys::env_destroy(child).unwrap();
    i32::from(!(id == 0x7ace && pid == 0x99 && bad.is_err() && seen > 0 && code.is_ok()))
}

user::entry!(main);
