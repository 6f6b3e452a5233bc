//! Boot test: visible revocation of memory (paper 001 §3.3). A compliant
//! environment asked for 10 frames gives back 10 of its choice and nothing
//! is taken by force; a non-compliant one has 10 repossessed when its
//! deadline passes, finds them in its repossession vector, and sees them
//! gone from its page tables; a request for more than an environment can
//! spare stops at its guaranteed frames.
#![no_std]
#![no_main]

use abi::syscall::GUARANTEED_FRAMES;
use abi::tables::frame_state;
use user::{kinfo, println, spawn, sys};

/// Waits until `id` holds its 64-page pool; returns its user frames.
fn ready(id: u64) -> u64 {
    loop {
        let users = (0..kinfo::kernel().frames)
            .filter(|&f| {
                let i = kinfo::frame(f);
                i.owner as u64 == id && i.state == frame_state::USER
            })
            .count() as u64;
        if users >= 64 + 64 && kinfo::env_by_id(id).is_some_and(|e| e.frames >= 64 + 64 + 8) {
            // (pool + stack + page tables) — and give it time to finish.
            for _ in 0..50 {
                sys::yield_now();
            }
            return users;
        }
        sys::yield_now();
    }
}

fn user_frames(id: u64) -> u64 {
    (0..kinfo::kernel().frames)
        .filter(|&f| {
            let i = kinfo::frame(f);
            i.owner as u64 == id && i.state == frame_state::USER
        })
        .count() as u64
}

fn wait_ticks(n: u64) {
    let end = kinfo::clock().ticks + n;
    while kinfo::clock().ticks < end {
        sys::yield_now();
    }
}

fn main(_: u64) -> i32 {
    let mut ok = true;
    let polite = spawn::spawn("revokee", 1).unwrap();
    let before = ready(polite);
    sys::frames_reclaim(polite, 10).unwrap();
    wait_ticks(5);
    let after = user_frames(polite);
    println!("compliant: {before} user frames, asked for 10, now {after}");
    ok &= after == before - 10;
    sys::env_destroy(polite).unwrap();

    let rude = spawn::spawn("revokee", 2).unwrap();
    let before = ready(rude);
    sys::frames_reclaim(rude, 10).unwrap();
    let verified = spawn::wait(rude).unwrap();
    println!("non-compliant: {before} user frames; it verified {verified} repossessed entries (want 10)");
    ok &= verified == 10;

    let greedy = spawn::spawn("revokee", 2).unwrap();
    let before = ready(greedy);
    sys::frames_reclaim(greedy, 100_000).unwrap();
    let verified = spawn::wait(greedy).unwrap() as u64;
    // Frames it could lose: all but the guaranteed ones, of those the kernel
    // may take (its exception save area and vector pages are pinned).
    println!("greedy request: {before} user frames, {verified} repossessed; guaranteed {GUARANTEED_FRAMES}");
    ok &= verified > 0 && verified <= before - GUARANTEED_FRAMES && verified < 999;
    if ok {
        0
    } else {
        1
    }
}

user::entry!(main);
