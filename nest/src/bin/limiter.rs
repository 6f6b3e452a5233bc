//! A nester for the nesting bench rows (paper 003 §6). Off the path (like
//! the memory and process managers' limits) it runs its child under a
//! memory quota and a CPU share (`env_limit`) and otherwise stays out of
//! the way, waiting in the kernel. With `ON_PATH` in its argument it also
//! interposes on the child and lets every event through, like Fluke's
//! tracing nester (§6.2). `arg` = `ON_PATH? | depth << 32 | pages`: with
//! `depth` > 1 it runs a limiter of depth - 1 (the same kind), else
//! `memtest` with `pages`. Exits with the child's code.
#![no_std]
#![no_main]

use abi::nest::Event;
use user::{nest, spawn, sys};

/// The quota each level gives: 256 MiB, 8 slices.
const FRAMES: u64 = 65_536;
const SLICES: u64 = 8;
/// In the argument: interpose on the child, passing every event.
const ON_PATH: u64 = 1 << 62;

fn main(arg: u64) -> i32 {
    let (on_path, depth, pages) = (arg & ON_PATH, (arg & !ON_PATH) >> 32, arg & 0xFFFF_FFFF);
    let child = if depth > 1 {
        spawn::spawn_stopped("limiter", on_path | (depth - 1) << 32 | pages)
    } else {
        spawn::spawn_stopped("memtest", pages)
    };
    let Ok(child) = child else { return -1 };
    if nest::env_limit(child, FRAMES, SLICES).is_err() {
        return -1;
    }
    if on_path != 0 {
        if nest::interpose(child, true).is_err() || spawn::start(child).is_err() {
            return -1;
        }
        let code = nest::serve(child, |_, _, _| (abi::nest::answer::PASS, 0)).unwrap_or(-1);
        let _ = sys::env_destroy(child);
        return code;
    }
    if spawn::start(child).is_err() {
        return -1;
    }
    // No event comes for it: the wait ends when the child does.
    let mut ev = Event::default();
    while nest::intercept_wait(child, &mut ev, 0, 0, 0).is_ok() {
        if let Some(e) = user::kinfo::env_by_id(child).filter(|e| e.state == abi::tables::env_state::EXITED) {
            let _ = sys::env_destroy(child);
            return e.exit_code;
        }
        sys::yield_now();
    }
    -1
}

user::entry!(main);
