//! Kits: frames a parent keeps ready for its children's private pages.
//!
//! A forked child needs its own copy of lxrt's writable memory (statics,
//! private heap, the live part of a native program's stack) and its own
//! exception stack. Copy-on-write cannot share them: lxrt writes them from
//! inside its exception handler, where a fault is fatal. Allocating,
//! zeroing and mapping fresh frames one by one for every fork is most of
//! the cost of a fork, so the parent keeps *kits*: runs of frames it owns
//! and maps at a window of its own (`KITS`), one window per kit. Fork copies
//! the live bytes into a free kit and maps its pages into the child with one
//! `map_from_range` per run. The exception stack is not copied at all: the
//! child starts on an empty stack, and stale bytes of an earlier child of
//! the same parent are nobody else's secret.
//!
//! A kit is free again once the child that used it has gone: the kernel
//! unmaps its pages when it reaps the child, so the frames' mapping count
//! (in the exposed frame table) is back to one, the parent's own mapping.

use crate::layout::{KITS, KIT_SIZE, PAGE};
use crate::vm;
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use abi::Error;
use user::{kinfo, sys};

/// How many kits (children forked and alive at once) a process keeps.
pub const SLOTS: usize = 16;

/// A process's kits (`proc::Process::kits`): the pages mapped in each
/// kit's window (0: never used).
pub struct Kits([u64; SLOTS]);

impl Kits {
    pub const NONE: Kits = Kits([0; SLOTS]);
}

/// Pages mapped in kit `slot`'s window.
fn pages(slot: usize) -> u64 {
    super::with_process(|p| p.kits.0[slot])
}

fn base(slot: usize) -> u64 {
    KITS + slot as u64 * KIT_SIZE
}

fn in_use(slot: usize) -> bool {
    let Some(p) = vm::pte(base(slot)) else {
        return false;
    };
    kinfo::frame(abi::pte::frame_of(p)).refs > 1
}

/// A kit being filled for one child: pages are handed out from the start
/// of its window.
pub struct Kit {
    slot: usize,
    used: u64,
}

impl Kit {
    /// A kit no live child uses, if there is one.
    pub fn take() -> Option<Kit> {
        let slot = (0..SLOTS).find(|&s| pages(s) == 0 || !in_use(s))?;
        Some(Kit { slot, used: 0 })
    }

    /// The next `n` pages of the kit (mapped writable here, contents stale),
    /// or `None` when the window is full or memory ran out.
    pub fn next(&mut self, n: u64) -> Option<u64> {
        let want = self.used + n;
        if want * PAGE > KIT_SIZE {
            return None;
        }
        let mut have = pages(self.slot);
        while have < want {
            grow_one(base(self.slot) + have * PAGE).ok()?;
            have += 1;
            super::with_process(|p| p.kits.0[self.slot] = have);
        }
        let va = base(self.slot) + self.used * PAGE;
        self.used = want;
        Some(va)
    }
}

fn grow_one(va: u64) -> Result<(), Error> {
    let f = sys::frame_alloc(super::env() as u64, FRAME_ANY)?;
    if let Err(e) = sys::map(ENV_SELF, va, f, mf::WRITE) {
        let _ = sys::frame_free(f);
        return Err(e);
    }
    Ok(())
}

/// A forked child's copy of our statics lists our kits; it has none.
pub fn forked_child() {
    super::with_process(|p| p.kits = Kits::NONE);
}
