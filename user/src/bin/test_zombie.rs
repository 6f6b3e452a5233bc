//! Boot test: an environment that exits while it holds an exited,
//! unreaped child. `passer` runs `caller`, which exits; `passer` then
//! exits without reaping it. Its end destroys its subtree, zombie
//! included, which must be reclaimed once: before the fix the kernel tore
//! down the zombie's address space a second time (its page-table root was
//! then frame 0, whose real-mode vectors read as table entries) and
//! panicked. Every frame comes back.
#![no_std]
#![no_main]

use abi::tables::env_state;
use user::{kinfo, println, spawn, sys};

fn main(_: u64) -> i32 {
    let before = kinfo::free_plus_own();
    let top = spawn::spawn("passer", 3).unwrap();
    while kinfo::env_by_id(top).unwrap().state != env_state::EXITED {
        sys::yield_now();
    }
    sys::env_destroy(top).unwrap();
    let after = kinfo::free_plus_own();
    println!("exited holding a zombie; free+own frames before {before}, after {after}");
    i32::from(before != after)
}

user::entry!(main);
