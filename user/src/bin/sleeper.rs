//! Helper for the predicate test: sleeps on "the word at `WORD` is not
//! zero" with a deadline `arg` ticks ahead, then exits with
//! `10 * sleep result + the word` (or 100 + error code on failure).
#![no_std]
#![no_main]

use abi::syscall::Region;
use user::{ebpf, kinfo, sys};

/// Where the parent maps the word (shared page).
pub const WORD: u64 = 0x3000_0000_0000;

fn main(ticks: u64) -> i32 {
    let pred = match sys::pred_install(&ebpf::WORD_NONZERO, &[Region { va: WORD, len: 8 }]) {
        Ok(p) => p,
        Err(e) => return 100 + e as i32,
    };
    let r = sys::sleep(pred, kinfo::clock().ticks + ticks).unwrap_or(9);
    // SAFETY: the parent mapped this page before starting us.
    let word = unsafe { core::ptr::read_volatile(WORD as *const u64) };
    (10 * r + word) as i32
}

user::entry!(main);
