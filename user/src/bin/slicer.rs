//! Helper for the time-slice test. Argument 1: a rogue that asks for
//! slice upcalls and then never gives up the CPU. Argument 2: a polite
//! environment that yields when told its slice is over and exits after
//! seeing 5 start-of-slice upcalls. Argument 4: the same, but spending
//! most of its time in critical sections (upcalls deferred, yielding on
//! leaving one if the kernel deferred an upcall). Argument 3: a plain
//! worker that spins
//! (preempted by force, no upcalls) until 60 ticks have passed and exits
//! with the number of ticks it saw itself running in — its CPU share.
#![no_std]
#![no_main]

use abi::exception::{vector, ExceptionFrame};
use core::sync::atomic::{AtomicU64, Ordering};
use user::{kinfo, sys};

static MUST_YIELD: AtomicU64 = AtomicU64::new(0);
static STARTS: AtomicU64 = AtomicU64::new(0);

fn rogue(f: &mut ExceptionFrame) -> bool {
    if f.vector == vector::END_OF_SLICE {
        loop {
            core::hint::spin_loop();
        }
    }
    true
}

fn polite(f: &mut ExceptionFrame) -> bool {
    match f.vector {
        vector::END_OF_SLICE => MUST_YIELD.store(1, Ordering::Relaxed),
        vector::START_OF_SLICE => {
            STARTS.fetch_add(1, Ordering::Relaxed);
        }
        _ => return false,
    }
    true
}

fn main(mode: u64) -> i32 {
    match mode {
        1 => {
            user::exc::install(rogue).unwrap();
            sys::slice_upcalls(0, true).unwrap();
            loop {
                core::hint::spin_loop();
            }
        }
        2 | 4 => {
            user::exc::install(polite).unwrap();
            sys::slice_upcalls(0, true).unwrap();
            while STARTS.load(Ordering::Relaxed) < 5 || (mode == 4 && user::exc::deferrals() < 2) {
                if mode == 4 {
                    // About a tenth of a slice with upcalls held off
                    // (longer than what is left of a slice is an offence).
                    user::exc::critical(|| {
                        for i in 0..30_000u64 {
                            core::hint::black_box(i);
                        }
                    });
                }
                if MUST_YIELD.swap(0, Ordering::Relaxed) == 1 {
                    sys::yield_now();
                }
            }
            0
        }
        _ => {
            let start = kinfo::ticks();
            let (mut seen, mut last) = (0, start);
            while kinfo::ticks() < start + 60 {
                let t = kinfo::ticks();
                if t != last {
                    seen += 1;
                    last = t;
                }
            }
            seen
        }
    }
}

user::entry!(main);
