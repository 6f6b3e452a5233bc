//! Helper for the checkpoint tests: prints `arg` lines (the low 32 bits),
//! each with a running hash of the ones before (state a restore must carry
//! over) and its tag (the high 32 bits), waits until every child it has
//! has exited (a parent in a saved subtree must outlive its children), then
//! exits.
#![no_std]
#![no_main]

use abi::tables::{env_state, ENV_SLOTS};
use user::{kinfo, sys};

fn main(arg: u64) -> i32 {
    let (lines, tag) = (arg & 0xffff_ffff, arg >> 32);
    let mut x: u64 = 0x5eed + tag;
    for i in 0..lines {
        // Some work between lines, so that a slice ends mid-way now and then.
        for _ in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        }
        user::println!("counter {tag}: line {i} hash {x:#018x}");
    }
    // Its own id is asked each time: a restored counter has a new one.
    let busy_child = || {
        let me = sys::self_id();
        (0..ENV_SLOTS)
            .map(kinfo::env)
            .any(|e| e.id != 0 && e.parent as u64 == me && e.state != env_state::EXITED)
    };
    while busy_child() {
        sys::yield_now();
    }
    0
}

user::entry!(main);
