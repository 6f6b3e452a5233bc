//! Helper for the tracer test: a few system calls with known results, a
//! foreign one (Linux's `getpid`, number 39) and a child, so that the
//! trace shows a subtree. Exits 0 if the answers the tracer gave itself
//! (`self_id` = 0x7ace, `getpid` = 0x99) reached it.
#![no_std]
#![no_main]

use abi::syscall::ENV_SELF;
use user::{spawn, sys};

fn main(_: u64) -> i32 {
    let id = sys::self_id();
    let _ = sys::debug_write(b"tracee: hello\n");
    let bad = sys::frame_free(u64::MAX - 1);
    sys::env_publish(ENV_SELF, 42).unwrap();
    let pid = sys::call(39, [0; 6]);
    let child = spawn::spawn_stopped("nestee", 1).unwrap();
    spawn::start(child).unwrap();
    while user::kinfo::env_by_id(child).is_some_and(|e| e.state != abi::tables::env_state::EXITED) {
        sys::yield_now();
    }
    sys::env_destroy(child).unwrap();
    i32::from(!(id == 0x7ace && pid == 0x99 && bad.is_err()))
}

user::entry!(main);
