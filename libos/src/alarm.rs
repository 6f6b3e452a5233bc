//! The process's interval timers (Linux's `ITIMER_REAL`, which `alarm`
//! also sets, `ITIMER_VIRTUAL` and `ITIMER_PROF`): each a deadline and an
//! interval, kept by the library itself (paper 000 §5: the library OS owns
//! time; the kernel only counts ticks). The real timer runs on the
//! monotonic clock, the other two on the process's CPU time (the kernel's
//! ticks charged to its environments, user and system time not told
//! apart). When a deadline passes, the timer's signal (SIGALRM, SIGVTALRM,
//! SIGPROF) becomes pending for the process (`proc::signal::collect` asks
//! `fire`), so it is seen at every call's start and return, by every wait
//! (their sleeps end at the real timer's deadline, `wait.rs`), and, while a
//! timer is armed, at the start of each of the first environment's time
//! slices (start-of-slice upcalls, `trap.rs`), which reach a program that
//! spins without making calls.
//!
//! The words live in lxrt's own memory: a fork copies them, and the child
//! forgets them (`forked_child`), as Linux's child starts with no timers;
//! exec keeps them. They are read and written under the big lock.

use crate::signo::{SIGALRM, SIGPROF, SIGVTALRM};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// The timers, in Linux's order (its `which` numbers).
pub const REAL: usize = 0;
pub const TIMERS: usize = 3;
/// Each timer's signal.
const SIGNALS: [u32; TIMERS] = [SIGALRM, SIGVTALRM, SIGPROF];

/// When each timer next expires, on its clock (nanoseconds; 0: disarmed).
static AT: [AtomicU64; TIMERS] = [const { AtomicU64::new(0) }; TIMERS];
/// Each one's interval (0: one-shot).
static EVERY: [AtomicU64; TIMERS] = [const { AtomicU64::new(0) }; TIMERS];

/// Whether any timer is armed (`armed`).
static ARMED: AtomicBool = AtomicBool::new(false);

/// What `get` reports: nanoseconds left (0: disarmed) and the interval.
pub struct Setting {
    pub left: u64,
    pub every: u64,
}

/// Timer `t`'s clock.
fn clock(t: usize) -> u64 {
    if t == REAL {
        crate::time::now_ns()
    } else {
        crate::proc::process_cpu_ns()
    }
}

/// Timer `t` (below `TIMERS`) as it stands. An expiry not yet acted on
/// reads as 1 ns left, so an armed timer never reads as disarmed.
pub fn get(t: usize) -> Setting {
    let at = AT[t].load(Relaxed);
    let left = if at == 0 { 0 } else { at.saturating_sub(clock(t)).max(1) };
    Setting { left, every: EVERY[t].load(Relaxed) }
}

/// Arms timer `t` to expire in `value` ns, then every `every` ns (0:
/// once); a `value` of 0 disarms it. Returns the previous setting.
pub fn set(t: usize, value: u64, every: u64) -> Setting {
    let old = get(t);
    let at = if value == 0 { 0 } else { clock(t).saturating_add(value).max(1) };
    store_at(t, at);
    EVERY[t].store(if at == 0 { 0 } else { every }, Relaxed);
    upcalls();
    old
}

/// Slice upcalls on the process's first environment while a timer is
/// armed (off otherwise: idle timers cost nothing).
fn upcalls() {
    let on = AT.iter().any(|a| a.load(Relaxed) != 0);
    ARMED.store(on, Relaxed);
    let env = crate::env::id() as u64;
    // Start-of-slice upcalls only: lxrt looks at the timers when a slice
    // starts and promises nothing at its end, so the abort protocol never
    // applies (with both, a program spinning under interval timers was
    // destroyed whenever ticks came with little guest time between them,
    // as under TCG on a busy host). A thread other than the first may lack
    // the right; waits and calls still see the expiry.
    let mode = if on { abi::syscall::UPCALLS_STARTS } else { abi::syscall::UPCALLS_OFF };
    let _ = user::sys::slice_upcalls_mode(env, mode);
}

/// Whether a timer is armed: looking at them reads the process's threads,
/// which needs the big lock (calls that skip it look here first).
pub fn armed() -> bool {
    ARMED.load(Relaxed)
}

/// Whether timer `t`'s deadline has passed.
fn due_one(t: usize) -> bool {
    let at = AT[t].load(Relaxed);
    at != 0 && clock(t) >= at
}

/// Acts on expiries: the signals now due (bit n = signal n). An interval
/// timer is re-armed past now (expiries missed meanwhile coalesce into the
/// one pending signal, as on Linux); a one-shot is disarmed.
pub fn fire() -> u64 {
    let mut sigs = 0;
    for t in (0..TIMERS).filter(|&t| due_one(t)) {
        let (at, every, now) = (AT[t].load(Relaxed), EVERY[t].load(Relaxed), clock(t));
        match (now - at).checked_div(every) {
            Some(missed) => store_at(t, at.saturating_add((missed + 1).saturating_mul(every))),
            None => {
                store_at(t, 0);
                upcalls();
            }
        }
        sigs |= 1 << SIGNALS[t];
    }
    sigs
}

/// Sets when timer `t` next expires; the real timer's expiry ends sleeps
/// (`sleep.rs`; the CPU-time timers do not advance while the process
/// sleeps).
fn store_at(t: usize, at: u64) {
    AT[t].store(at, Relaxed);
    if t == REAL {
        crate::sleep::set_alarm(at);
    }
}

/// A fork child starts with no timers (its environment has no upcalls).
pub fn forked_child() {
    ARMED.store(false, Relaxed);
    for (t, every) in EVERY.iter().enumerate() {
        store_at(t, 0);
        every.store(0, Relaxed);
    }
}
