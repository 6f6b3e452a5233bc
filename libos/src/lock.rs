//! The one lock over the shared arena (file system, open files, pipes,
//! process table). Every Linux call that touches shared state runs with it
//! held; a call that must wait (a pipe, wait4, the console) drops it while
//! it yields. The word holds the owner's environment id, so a lock whose
//! owner has died (killed from outside) is taken over instead of hanging
//! everyone.

use abi::tables::env_state;
use core::sync::atomic::{AtomicU64, Ordering};
use user::{kinfo, sys};

static mut HELD: bool = false;

fn word() -> &'static AtomicU64 {
    &crate::shared::get().lock
}

fn owner_dead(id: u64) -> bool {
    kinfo::env_by_id(id).is_none_or(|e| e.state == env_state::EXITED)
}

/// Takes the lock (no-op if this process already holds it).
pub fn acquire() {
    // SAFETY: one thread per environment.
    if unsafe { HELD } {
        return;
    }
    let me = sys::self_id();
    loop {
        let cur = word().load(Ordering::Acquire);
        if (cur == 0 || owner_dead(cur))
            && word().compare_exchange(cur, me, Ordering::AcqRel, Ordering::Relaxed).is_ok()
        {
            // SAFETY: as above.
            unsafe { HELD = true };
            return;
        }
        sys::yield_now();
    }
}

pub fn release() {
    // SAFETY: one thread per environment.
    if unsafe { HELD } {
        unsafe { HELD = false };
        word().store(0, Ordering::Release);
    }
}

/// Lets others run once while waiting for something shared to change.
pub fn wait() {
    release();
    sys::yield_now();
    acquire();
}

/// After fork: the child's copy of `HELD` says held, but the word names
/// the parent, which releases it when its `fork` returns.
pub fn forked_child() {
    // SAFETY: one thread per environment.
    unsafe { HELD = false };
}
