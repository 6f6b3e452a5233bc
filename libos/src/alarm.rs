//! The process's real-time timer (Linux's `ITIMER_REAL` and `alarm`): a
//! deadline on the monotonic clock and an interval, kept by the library
//! itself (paper 000 §5: the library OS owns time; the kernel only counts
//! ticks). When the deadline passes, SIGALRM becomes pending for the
//! process (`proc::signal::collect` asks `fire`), so it is seen at every
//! call's start and return, by every wait (their sleeps end at the
//! deadline, `wait.rs`), and, while the timer is armed, at the start and
//! end of each of the first environment's time slices (slice upcalls,
//! `trap.rs`), which reach a program that spins without making calls.
//!
//! The words live in lxrt's own memory: a fork copies them, and the child
//! forgets them (`forked_child`), as Linux's child starts with no timer;
//! exec keeps them. They are read and written under the big lock.

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// When the timer next expires (monotonic nanoseconds; 0: disarmed).
static AT: AtomicU64 = AtomicU64::new(0);
/// Its interval (0: one-shot).
static EVERY: AtomicU64 = AtomicU64::new(0);

/// What `get` reports: nanoseconds left (0: disarmed) and the interval.
pub struct Setting {
    pub left: u64,
    pub every: u64,
}

/// The timer as it stands. An expiry not yet acted on reads as 1 ns left
/// (Linux reports one microsecond), so an armed timer never reads as 0.
pub fn get() -> Setting {
    let at = AT.load(Relaxed);
    let left = if at == 0 { 0 } else { at.saturating_sub(crate::time::now_ns()).max(1) };
    Setting { left, every: EVERY.load(Relaxed) }
}

/// Arms the timer to expire in `value` ns, then every `every` ns (0: once);
/// a `value` of 0 disarms it. Returns the previous setting.
pub fn set(value: u64, every: u64) -> Setting {
    let old = get();
    let at = if value == 0 { 0 } else { crate::time::now_ns().saturating_add(value).max(1) };
    AT.store(at, Relaxed);
    EVERY.store(if at == 0 { 0 } else { every }, Relaxed);
    upcalls(at != 0);
    old
}

/// Slice upcalls on the process's first environment while the timer is
/// armed (off otherwise: an idle timer costs nothing).
fn upcalls(on: bool) {
    let env = crate::proc::vars().env.get() as u64;
    // A thread other than the first may lack the right; waits and calls
    // still see the expiry.
    let _ = user::sys::slice_upcalls(env, on);
}

/// Whether the deadline has passed (a cheap look for the slice upcalls).
pub fn due() -> bool {
    let at = AT.load(Relaxed);
    at != 0 && crate::time::now_ns() >= at
}

/// Acts on an expiry: true if the timer expired (SIGALRM is then due);
/// an interval timer is re-armed past now (expiries missed meanwhile
/// coalesce into one signal, as Linux's pending SIGALRM does).
pub fn fire() -> bool {
    if !due() {
        return false;
    }
    let (at, every, now) = (AT.load(Relaxed), EVERY.load(Relaxed), crate::time::now_ns());
    match (now - at).checked_div(every) {
        Some(missed) => AT.store(at.saturating_add((missed + 1).saturating_mul(every)), Relaxed),
        None => {
            AT.store(0, Relaxed);
            upcalls(false);
        }
    }
    true
}

/// When the timer next expires, for a sleep's deadline.
pub fn next() -> Option<u64> {
    Some(AT.load(Relaxed)).filter(|&at| at != 0)
}

/// A fork child starts with no timer (its environment has no upcalls).
pub fn forked_child() {
    AT.store(0, Relaxed);
    EVERY.store(0, Relaxed);
}
