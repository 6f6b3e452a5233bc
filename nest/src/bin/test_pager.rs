//! Boot test: the demand pager (paper 003 §5.5, the virtual memory
//! nester, `nest::pager`). A child whose subtree may hold only a few
//! frames more than it starts with touches twice as many pages as its quota allows and completes: the
//! pager, its parent, receives its page faults (interposition), gives it
//! frames charged to it while the quota lasts, and then evicts the oldest
//! resident page to frames the pager holds and brings pages back from them.
#![no_std]
#![no_main]

use abi::nest::Event;
use nest::pager::Pager;
use user::{nest as calls, println, spawn};

const REGION: u64 = 0x2000_0000_0000;
/// Frames beyond what it starts with; it touches twice as many pages.
const QUOTA: u64 = 16;
const PAGES: u64 = 2 * QUOTA;

fn main(_: u64) -> i32 {
    let child = spawn::spawn_stopped("pagee", PAGES).unwrap();
    let quota = calls::subtree_frames(child) + QUOTA;
    calls::env_limit(child, quota, abi::syscall::NO_LIMIT).unwrap();
    calls::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    let mut pager = Pager::new(REGION, PAGES);
    let mut most_held = 0;
    let code = calls::serve(child, |_, env, ev: &Event| {
        let a = pager.answer(env, ev);
        most_held = most_held.max(calls::subtree_frames(child));
        a
    })
    .unwrap();
    println!(
        "pager: {PAGES} pages touched under a quota of {QUOTA} more frames: {} faults, {} evictions; \
         the subtree held at most {} frames (limit {quota}); child exited with {code}; error {:?}",
        pager.faults, pager.evictions, most_held, pager.failed
    );
    let ok = code == 0
        && pager.failed.is_none()
        && pager.evictions > 0
        && most_held <= quota
        && pager.faults > PAGES;
    i32::from(!ok)
}

user::entry!(main);
