//! What ring-3 device clients share (`bin/devtest.rs`, `bin/devbench.rs`):
//! buffer pages of their own, and completion words to wait on, each with
//! a wakeup predicate so that waiting sleeps in the kernel (the processor
//! halts until the device's interrupt) instead of polling.

use crate::{ebpf, kinfo, sys};
use abi::syscall::{map, Region, ENV_SELF, FRAME_ANY};
use abi::Error;
use core::sync::atomic::{AtomicU64, Ordering::SeqCst};

/// Where buffer pages are mapped.
const BUFFERS: u64 = 0x6000_0000;

/// A frame of the program's, mapped read-write at `va`.
#[derive(Clone, Copy)]
pub struct Page {
    pub frame: u64,
    pub va: u64,
}

impl Page {
    /// The `n`th buffer page (allocated and mapped).
    pub fn new(n: u64) -> Result<Page, Error> {
        let frame = sys::frame_alloc(ENV_SELF, FRAME_ANY)?;
        let va = BUFFERS + n * 4096;
        sys::map(ENV_SELF, va, frame, map::WRITE)?;
        Ok(Page { frame, va })
    }

    pub fn bytes(&self) -> &'static mut [u8; 4096] {
        // SAFETY: mapped read-write at `va` for the program's life; the
        // device writes it only while a request on it is outstanding, and
        // the clients read it only after the request ended.
        unsafe { &mut *(self.va as *mut [u8; 4096]) }
    }
}

/// Completion words: at most this many requests waited on at once (each
/// word has its own predicate, and an environment holds at most 8).
pub const WORDS: usize = 8;

#[repr(C, align(64))]
struct Words([AtomicU64; WORDS]);

static WORD: Words = Words([const { AtomicU64::new(0) }; WORDS]);
static PRED: [AtomicU64; WORDS] = [const { AtomicU64::new(u64::MAX) }; WORDS];

/// Completion word `i`'s address (for a request).
pub fn word(i: usize) -> u64 {
    &WORD.0[i % WORDS] as *const AtomicU64 as u64
}

/// Completion word `i` as it is now (0: in flight).
pub fn peek(i: usize) -> u64 {
    WORD.0[i % WORDS].load(SeqCst)
}

/// Waits until the request on word `i` ends, sleeping on its predicate
/// for at most `ticks` timer ticks; the word (`abi::dev::DONE | ...`), or
/// `None` on the deadline.
pub fn wait(i: usize, ticks: u64) -> Option<u64> {
    let i = i % WORDS;
    let deadline = kinfo::ticks() + ticks;
    loop {
        let w = WORD.0[i].load(SeqCst);
        if w != 0 {
            return Some(w);
        }
        if kinfo::ticks() >= deadline {
            return None;
        }
        let mut p = PRED[i].load(SeqCst);
        if p == u64::MAX {
            p = sys::pred_install(&ebpf::WORD_NONZERO, &[Region { va: word(i), len: 8 }]).ok()?;
            PRED[i].store(p, SeqCst);
        }
        let _ = sys::sleep(p, deadline);
    }
}
