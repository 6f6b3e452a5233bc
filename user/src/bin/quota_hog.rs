//! Helper for the limits test: tries to exceed its subtree's limits one
//! way (`arg`: 0 frames, 1 page tables, 2 descendants, 3 time slices, 4
//! frames for a descendant it gave a larger limit of its own, 5 runs of
//! fresh pages with their tables, `map_fresh`),
//! then publishes `successes << 8 | error code` and waits to be destroyed.
#![no_std]
#![no_main]

use abi::syscall::{ENV_SELF, FRAME_ANY, SLICE_ANY};
use abi::Error;
use user::sys;

/// Far apart, so each mapping needs page tables of its own.
const SPREAD: u64 = 1 << 30;
const FAR: u64 = 0x100_0000_0000;

fn attempt(way: u64, i: u64, page: u64) -> Result<u64, Error> {
    match way {
        0 => sys::frame_alloc(ENV_SELF, FRAME_ANY),
        1 => sys::map(ENV_SELF, FAR + i * SPREAD, page, 0),
        2 => sys::env_create(),
        3 => sys::slice_alloc(ENV_SELF, SLICE_ANY),
        5 => sys::map_fresh(ENV_SELF, FAR + i * SPREAD, 5, 0),
        _ => sys::frame_alloc(page, FRAME_ANY),
    }
}

fn main(way: u64) -> i32 {
    // A page to map far and wide, or a descendant with a generous limit.
    let page = match way {
        1 => sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap_or(0),
        4 => sys::env_create().and_then(|c| user::nest::env_limit(c, 1 << 20, 64).map(|_| c)).unwrap_or(0),
        _ => 0,
    };
    let mut n = 0;
    let err = loop {
        match attempt(way, n, page) {
            Ok(_) => n += 1,
            Err(e) => break e,
        }
        if n > 10_000 {
            break Error::NoSuchCall; // no limit held
        }
    };
    let _ = sys::env_publish(ENV_SELF, n << 8 | err as u64);
    loop {
        sys::yield_now();
    }
}

user::entry!(main);
