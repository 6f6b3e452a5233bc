//! Boot test: an environment tree of depth 3 destroyed from its root frees
//! every frame charged to it (counted in the exposed tables).
#![no_std]
#![no_main]

use abi::tables::{env_state, frame_state, ENV_SLOTS};
use user::{kinfo, println, spawn, sys};

/// The chain below `top`: ids at depth 1, 2, 3 if all exist.
fn chain(top: u64) -> Option<[u64; 3]> {
    let mut ids = [top, 0, 0];
    for d in 1..3 {
        let child = (0..ENV_SLOTS).map(kinfo::env).find(|e| e.id != 0 && e.parent as u64 == ids[d - 1])?;
        ids[d] = child.id as u64;
    }
    Some(ids)
}

fn main(_: u64) -> i32 {
    let before = kinfo::free_plus_own();
    let top = spawn::spawn("treenode", 3).unwrap();
    // Wait until the leaf has taken its 32 frames.
    let ids = loop {
        if let Some(ids) = chain(top) {
            let leaf = kinfo::env_by_id(ids[2]).unwrap();
            if leaf.state == env_state::RUNNABLE && leaf.frames >= 64 + 32 {
                break ids;
            }
        }
        sys::yield_now();
    };
    let charged: u64 = ids.iter().map(|&id| kinfo::env_by_id(id).unwrap().frames).sum();
    println!("tree {:#x} > {:#x} > {:#x} holds {charged} frames", ids[0], ids[1], ids[2]);
    sys::env_destroy(top).unwrap();
    let after = kinfo::free_plus_own();
    let gone = ids.iter().all(|&id| kinfo::env_by_id(id).is_none());
    let stray = (0..kinfo::kernel().frames)
        .map(kinfo::frame)
        .filter(|f| f.state != frame_state::FREE && ids.contains(&(f.owner as u64)))
        .count();
    println!("free+own frames before {before}, after {after}; tree gone: {gone}; frames still owned by it: {stray}");
    if before == after && gone && stray == 0 && charged > 3 * 96 {
        println!("every frame reclaimed");
        0
    } else {
        1
    }
}

user::entry!(main);
