//! Sleeping in the kernel until something shared changes (paper 000
//! §5.1): on a wakeup predicate over ring-shaped headers in the arena
//! (`predicate.rs`), or until a deadline. The big lock is dropped while
//! asleep. Sleeps are cut into at most `MAX_SLEEP_TICKS`, so a signal
//! (`kill`, Ctrl-C) ends a wait within that time, and end at the
//! real-time timer's next expiry (`alarm.rs` tells it here), so its
//! SIGALRM may end the wait. What the sleeper then does (look again, end
//! with EINTR) is its caller's choice (`wait.rs`, `proc/`).

use crate::lock;
use crate::predicate::{self, MAX_RINGS};
use crate::word::Word;
use user::{kinfo, sys};

/// Longest single sleep (2 ms ticks): how late a signal may end a wait.
const MAX_SLEEP_TICKS: u64 = 25;

/// When the real-time interval timer next expires (ns; 0: disarmed).
static ALARM_AT: Word<u64> = Word::new(0);

/// Run after each wake, with the lock (`on_wake`).
static ON_WAKE: Word<Option<fn()>> = Word::new(None);

/// Has `f` run after every wake from a sleep: a layer above that must
/// act while every process waits registers it (`/data`'s periodic
/// write-back, `fs::disk::expire`: a waiting process wakes at least every
/// `MAX_SLEEP_TICKS`).
pub fn on_wake(f: fn()) {
    ON_WAKE.set(Some(f));
}

/// The real-time timer's next expiry, or 0 (`alarm`).
pub fn set_alarm(at: u64) {
    ALARM_AT.set(at);
}

/// Sleeps until a signal arrives or the deadline (or `MAX_SLEEP_TICKS`)
/// comes: nothing else can end the wait.
pub fn pause(until_ns: Option<u64>) {
    sleep_on(Some(([(0, 0); MAX_RINGS], 0)), until_ns)
}

/// Sleeps until the ring-shaped header at `va` (a pipe's, an eventfd's)
/// meets `term`, or `until` (or `MAX_SLEEP_TICKS`) comes.
pub fn ring_sleep(va: u64, term: u64, until: Option<u64>) {
    let mut rings = [(0u64, 0u64); MAX_RINGS];
    rings[0] = (va, term);
    sleep_on(Some((rings, 1)), until)
}

/// Sleeps on the predicate over `rings` (address, terms; sorted by
/// address) until one holds or `until` comes; with no rings to watch (or
/// the predicate refused), yields once instead.
pub fn sleep_on(rings: Option<([(u64, u64); MAX_RINGS], usize)>, until: Option<u64>) {
    let pred = rings.and_then(|(rings, n)| {
        let id = predicate::for_rings(&rings[..n])?;
        predicate::enable(&rings[..n]);
        Some(id)
    });
    let Some(id) = pred else {
        lock::wait();
        return;
    };
    let clock = kinfo::clock();
    let mut ticks = MAX_SLEEP_TICKS;
    let alarm = Some(ALARM_AT.get()).filter(|&t| t != 0);
    let until = match (until, alarm) {
        (Some(u), Some(t)) => Some(u.min(t)),
        (u, t) => u.or(t),
    };
    if let Some(u) = until {
        let left = u.saturating_sub(crate::time::now_ns());
        ticks = ticks.min(left.div_ceil(clock.tick_ns.max(1)).max(1));
    }
    lock::release();
    let _ = sys::sleep(id, clock.ticks + ticks);
    lock::reacquire();
    if let Some(f) = ON_WAKE.get() {
        f();
    }
}
