//! Boot test: hierarchical resource limits. A child whose subtree is capped
//! at a few frames more than it holds, and at two time slices, tries to
//! exceed each limit every way it can (frames, page tables, descendants,
//! slices, runs of fresh pages): each attempt stops at the limit with `OverQuota`, and the
//! subtree never holds more than its limit. A grandchild cannot lift its
//! ancestor's limit by setting a larger one of its own.
#![no_std]
#![no_main]

use abi::tables::ENV_SLOTS;
use abi::Error;
use user::{kinfo, nest, println, spawn, sys};

const EXTRA_FRAMES: u64 = 24;
const SLICES: u64 = 2;
const WAYS: [&str; 6] = [
    "frames",
    "page tables",
    "descendants",
    "time slices",
    "a descendant's own larger limit",
    "runs of fresh pages (map_fresh)",
];

/// Frames and slices held by `top` and everything below it.
fn subtree(top: u64) -> (u64, u64) {
    let (mut frames, mut slices) = (0, 0);
    for slot in 0..ENV_SLOTS {
        let e = kinfo::env(slot);
        let mut id = e.id as u64;
        while id != 0 && id != top {
            id = kinfo::env_by_id(id).map_or(0, |p| p.parent as u64);
        }
        if e.id != 0 && id == top {
            frames += e.frames;
            slices += e.slices as u64;
        }
    }
    (frames, slices)
}

fn main(_: u64) -> i32 {
    let mut failures = 0;
    for (way, name) in WAYS.iter().enumerate() {
        let hog = spawn::spawn_stopped("quota_hog", way as u64).unwrap();
        let (held, _) = subtree(hog);
        let quota = held + EXTRA_FRAMES;
        nest::env_limit(hog, quota, SLICES).unwrap();
        spawn::start(hog).unwrap();
        let word = loop {
            let w = kinfo::env_by_id(hog).unwrap().published;
            if w != 0 {
                break w;
            }
            sys::yield_now();
        };
        let (n, err) = (word >> 8, Error::from_result(-((word & 0xff) as i64)));
        let (frames, slices) = subtree(hog);
        let limited = if way == 3 { slices <= SLICES } else { frames <= quota };
        println!(
            "{name}: {n} succeeded, then {err:?}; subtree holds {frames} frames (limit {quota}), {slices} slices (limit {SLICES})"
        );
        if err != Some(Error::OverQuota) || !limited || n == 0 {
            println!("{name}: limit NOT held");
            failures += 1;
        }
        sys::env_destroy(hog).unwrap();
    }
    if failures == 0 {
        println!("limits: every attempt stopped at the limit");
    }
    failures
}

user::entry!(main);
