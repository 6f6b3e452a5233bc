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
/// This environment's id (0 until first asked; reset in a forked child).
static mut ME: u64 = 0;
/// Who gets the CPU when the current call ends (`hand_off`), or 0.
static mut HAND_OFF: u64 = 0;

/// This environment's id, asked of the kernel once.
#[inline]
pub fn my_id() -> u64 {
    // SAFETY: one thread per environment.
    unsafe {
        if ME == 0 {
            ME = sys::self_id();
        }
        ME
    }
}

fn word() -> &'static AtomicU64 {
    &crate::shared::get().lock
}

fn owner_dead(id: u64) -> bool {
    kinfo::env_by_id(id).is_none_or(|e| e.state == env_state::EXITED)
}

/// Takes the lock (no-op if this process already holds it).
#[inline]
pub fn acquire() {
    // SAFETY: one thread per environment.
    if unsafe { HELD } {
        return;
    }
    let me = my_id();
    // The usual case: nobody holds it.
    if word().compare_exchange(0, me, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
        // SAFETY: as above.
        unsafe { HELD = true };
        crate::shared::sync();
        return;
    }
    contended(me);
}

#[cold]
fn contended(me: u64) {
    loop {
        let cur = word().load(Ordering::Acquire);
        if (cur == 0 || owner_dead(cur))
            && word().compare_exchange(cur, me, Ordering::AcqRel, Ordering::Relaxed).is_ok()
        {
            // SAFETY: as above.
            unsafe { HELD = true };
            crate::shared::sync();
            return;
        }
        // The holder is the one to run: it may own no time slice at all
        // (it runs in spare time), and a plain yield would wait for it to
        // come round.
        if cur == 0 || sys::yield_to(cur).is_err() {
            sys::yield_now();
        }
    }
}

#[inline]
pub fn release() {
    // SAFETY: one thread per environment.
    if unsafe { HELD } {
        // SAFETY: as above.
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

/// Like `wait`, but gives the rest of the slice to environment `env`, the
/// one expected to make the change (a pipe's other end): a directed yield.
/// Falls back to a plain yield when `env` is unknown (0), is this
/// environment, or cannot take the slice (it has ended).
pub fn wait_for(env: u64) {
    release();
    if env == 0 || env == my_id() || sys::yield_to(env).is_err() {
        sys::yield_now();
    }
    acquire();
}

/// Asks that environment `env`, which waits for what the current call has
/// just done (a reader of the pipe it wrote), get the rest of the slice as
/// soon as the call has ended and dropped the lock (`end_call`).
pub fn hand_off(env: u64) {
    // SAFETY: one thread per environment.
    unsafe { HAND_OFF = env };
}

/// Ends a call: drops the lock, then makes the directed yield `hand_off`
/// asked for, if any (a plain return if that one cannot run).
pub fn end_call() {
    release();
    // SAFETY: one thread per environment.
    let env = unsafe { core::mem::replace(&mut *(&raw mut HAND_OFF), 0) };
    if env != 0 && env != my_id() {
        let _ = sys::yield_to(env);
    }
}

/// After fork: the child's copy of `HELD` says held, but the word names
/// the parent, which releases it when its `fork` returns.
pub fn forked_child() {
    // SAFETY: one thread per environment.
    unsafe {
        HELD = false;
        ME = 0;
    }
}
