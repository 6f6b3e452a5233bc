//! The process's timers: Linux's interval timers (`ITIMER_REAL`, which
//! `alarm` also sets, `ITIMER_VIRTUAL` and `ITIMER_PROF`: slots 0-2, its
//! `which` numbers) and its POSIX timers (`timer_create`: slots from 3,
//! timer id n in slot 3 + n). Each is a deadline and an interval on a
//! clock, kept by the library itself (paper 000 §5: the library OS owns
//! time; the kernel only counts ticks): the monotonic clock, or CPU time
//! (the process's, or one environment's: a thread's, another process's),
//! the kernel's ticks charged to environments, user and system time not
//! told apart. When a deadline passes, the timer's signal becomes pending
//! (`proc::deliver::collect` asks `fire`): SIGALRM, SIGVTALRM or SIGPROF
//! for the process; a POSIX timer's own signal for the process or for one
//! of its threads (`SIGEV_THREAD_ID`), or none (`SIGEV_NONE`). Expiries
//! are seen at every call's start and return, by every wait (their sleeps
//! end at the earliest monotonic deadline, `sleep::set_alarm`), and, while
//! a timer is armed, at the start of each of the first environment's time
//! slices (start-of-slice upcalls, `trap.rs`), which reach a program that
//! spins without making calls.
//!
//! A POSIX timer whose signal is still pending when it expires again
//! counts an overrun instead of queueing it twice (as on Linux); the
//! count goes with the signal when it is delivered (`delivered`:
//! `si_overrun`, `timer_getoverrun`).
//!
//! The words live in lxrt's own memory: a fork copies them, and the child
//! forgets them (`forked_child`), as Linux's child starts with no timers;
//! exec keeps the interval timers and deletes the POSIX ones (`exec`).
//! They are read and written under the big lock.

use crate::scoped::Scoped;
use crate::signo::{SIGALRM, SIGPROF, SIGVTALRM};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// The interval timers, in Linux's order (its `which` numbers).
pub const REAL: usize = 0;
pub const ITIMERS: usize = 3;
/// Each interval timer's signal.
const SIGNALS: [u32; ITIMERS] = [SIGALRM, SIGVTALRM, SIGPROF];
/// How many POSIX timers a process may have (`timer_create`: EAGAIN).
pub const POSIX_TIMERS: usize = 61;
const SLOTS: usize = ITIMERS + POSIX_TIMERS;
/// Linux's cap on an overrun count (`DELAYTIMER_MAX`, `INT_MAX`).
const DELAYTIMER_MAX: u64 = i32::MAX as u64;

/// When each timer next expires, on its clock (nanoseconds; 0: disarmed).
static AT: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
/// Each one's interval (0: one-shot).
static EVERY: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
/// Each one's clock (`Clock::word`).
static CLOCK: [AtomicU64; SLOTS] = {
    let mut c = [const { AtomicU64::new(MONOTONIC) }; SLOTS];
    c[1] = AtomicU64::new(PROCESS_CPU);
    c[2] = AtomicU64::new(PROCESS_CPU);
    c
};
const MONOTONIC: u64 = 0;
const PROCESS_CPU: u64 = 1;

/// Whether any timer is armed (`armed`).
static ARMED: AtomicBool = AtomicBool::new(false);

/// A timer's clock.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Clock {
    Monotonic,
    /// The CPU time of this process's live threads.
    ProcessCpu,
    /// The CPU time of one environment (a thread, or another process's
    /// first thread).
    Cpu(u32),
}

impl Clock {
    /// Its reading, in nanoseconds.
    pub fn now(self) -> u64 {
        match self {
            Clock::Monotonic => crate::time::now_ns(),
            Clock::ProcessCpu => crate::proc::process_cpu_ns(),
            Clock::Cpu(env) => crate::proc::cpu_ns(env),
        }
    }

    fn word(self) -> u64 {
        match self {
            Clock::Monotonic => MONOTONIC,
            Clock::ProcessCpu => PROCESS_CPU,
            Clock::Cpu(env) => 2 + env as u64,
        }
    }

    fn of_word(w: u64) -> Clock {
        match w {
            MONOTONIC => Clock::Monotonic,
            PROCESS_CPU => Clock::ProcessCpu,
            env => Clock::Cpu((env - 2) as u32),
        }
    }
}

/// Where a POSIX timer's expiry goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Notify {
    /// Nowhere (`SIGEV_NONE`: the program reads the timer).
    None,
    /// Signal n to the process.
    Process(u32),
    /// Signal n to the thread in environment env.
    Thread(u32, u32),
}

/// A POSIX timer's settings beside its deadline.
#[derive(Clone, Copy)]
struct Posix {
    notify: Notify,
    /// The program's `sigev_value`, handed back in `si_value`.
    value: u64,
    /// Its absolute times are wall-clock times (`CLOCK_REALTIME`).
    wall: bool,
    /// Armed for an absolute wall-clock time: the wall clock's epoch
    /// (`time::epoch_ns`) its deadline was reckoned against, so that a
    /// `clock_settime` moves the deadline with it (`follow_wall`); 0 for
    /// any other setting.
    epoch: u64,
    /// Expiries not signalled since its pending signal was queued.
    overrun: u64,
    /// The overrun count of the last signal delivered.
    last: u64,
}

static POSIX: Scoped<[Option<Posix>; POSIX_TIMERS]> = Scoped::new("POSIX timers", [None; POSIX_TIMERS]);

/// What `get` reports: nanoseconds left (0: disarmed) and the interval.
pub struct Setting {
    pub left: u64,
    pub every: u64,
}

/// Timer `t`'s clock reading.
pub fn now(t: usize) -> u64 {
    Clock::of_word(CLOCK[t].load(Relaxed)).now()
}

/// Timer `t` as it stands. An expiry not yet acted on reads as 1 ns left,
/// so an armed timer never reads as disarmed.
pub fn get(t: usize) -> Setting {
    let at = AT[t].load(Relaxed);
    let left = if at == 0 { 0 } else { at.saturating_sub(now(t)).max(1) };
    Setting { left, every: EVERY[t].load(Relaxed) }
}

/// Arms timer `t` to expire in `value` ns, then every `every` ns (0:
/// once); a `value` of 0 disarms it. Returns the previous setting.
pub fn set(t: usize, value: u64, every: u64) -> Setting {
    let old = get(t);
    let at = if value == 0 { 0 } else { now(t).saturating_add(value).max(1) };
    store_at(t, at);
    EVERY[t].store(if at == 0 { 0 } else { every }, Relaxed);
    upcalls();
    old
}

/// Makes a POSIX timer on `clock` (disarmed), `wall` if its absolute
/// times are wall-clock times, with `value` for its signal (None: its
/// id); returns its id, or None when the process has `POSIX_TIMERS`.
pub fn create(clock: Clock, wall: bool, notify: Notify, value: Option<u64>) -> Option<usize> {
    let id = POSIX.with(|ps| {
        let id = ps.iter().position(Option::is_none)?;
        let value = value.unwrap_or(id as u64);
        ps[id] = Some(Posix { notify, value, wall, epoch: 0, overrun: 0, last: 0 });
        Some(id)
    })?;
    CLOCK[ITIMERS + id].store(clock.word(), Relaxed);
    Some(id)
}

/// POSIX timer `id`'s slot (for `get` and `set`), if it exists.
pub fn posix(id: usize) -> Option<usize> {
    (id < POSIX_TIMERS && POSIX.with(|ps| ps[id].is_some())).then_some(ITIMERS + id)
}

/// Whether POSIX timer `id`'s absolute times are wall-clock times.
pub fn is_wall(id: usize) -> bool {
    POSIX.with(|ps| ps[id].is_some_and(|p| p.wall))
}

/// POSIX timer `id` (in slot `t`, just armed by `set`) was armed for an
/// absolute wall-clock time (`abs`) or not: only then does its deadline
/// follow the wall clock. (Linux turns a relative `CLOCK_REALTIME` timer
/// into a monotonic one.)
pub fn track_wall(id: usize, t: usize, abs: bool) {
    let epoch = if abs && AT[t].load(Relaxed) != 0 { crate::time::epoch_ns() } else { 0 };
    POSIX.with(|ps| {
        if let Some(p) = ps[id].as_mut() {
            p.epoch = epoch;
        }
    });
}

/// Moves the deadlines of the timers armed for an absolute wall-clock
/// time by as much as the wall clock has been set since (by this process
/// or another: the setting is the arena's), before they are read or
/// checked: forward past a deadline fires it at the next look, back
/// delays it.
fn follow_wall() {
    let now = crate::time::epoch_ns();
    POSIX.with(|ps| {
        for (id, p) in ps.iter_mut().enumerate() {
            let Some(p) = p.as_mut().filter(|p| p.epoch != 0 && p.epoch != now) else { continue };
            let t = ITIMERS + id;
            let at = AT[t].load(Relaxed);
            if at != 0 {
                store_at(t, at.saturating_add(p.epoch).saturating_sub(now).max(1));
            }
            p.epoch = now;
        }
    });
}

/// Deletes POSIX timer `id`; false if there is none.
pub fn delete(id: usize) -> bool {
    let Some(t) = posix(id) else { return false };
    set(t, 0, 0);
    CLOCK[t].store(MONOTONIC, Relaxed);
    POSIX.with(|ps| ps[id] = None);
    true
}

/// The overrun count of POSIX timer `id`'s last delivered signal.
pub fn overrun(id: usize) -> Option<u64> {
    posix(id)?;
    POSIX.with(|ps| ps[id].map(|p| p.last))
}

/// POSIX timer `id`'s signal is being delivered: its overrun count and
/// value, for the `siginfo_t` (a deleted timer's: 0 and 0).
pub fn delivered(id: usize) -> (u64, u64) {
    POSIX.with(|ps| match ps.get_mut(id).and_then(Option::as_mut) {
        Some(p) => {
            p.last = core::mem::take(&mut p.overrun);
            (p.last, p.value)
        }
        None => (0, 0),
    })
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
    at != 0 && now(t) >= at
}

/// Acts on expiries: returns the interval timers' signals now due (bit n
/// = signal n), and hands each POSIX timer's to `send(id, signal, thread
/// env or None for the process)`, which answers false if the one it sent
/// before is still pending (the expiry is an overrun). A periodic timer is
/// re-armed past now (expiries missed meanwhile are overruns; the interval
/// timers' coalesce into the one pending signal, as on Linux); a one-shot
/// is disarmed. Timers found due together fire in the order of their
/// deadlines (a process that ran late still gets its signals in the order
/// the timers expired), each at most once per call.
pub fn fire(mut send: impl FnMut(usize, u32, Option<u32>) -> bool) -> u64 {
    const _: () = assert!(SLOTS <= 64, "fire's `done` has a bit per slot");
    follow_wall();
    let mut sigs = 0;
    let mut done = 0u64;
    let next_due = |done: u64| {
        (0..SLOTS).filter(|&t| done & 1 << t == 0 && due_one(t)).min_by_key(|&t| AT[t].load(Relaxed))
    };
    while let Some(t) = next_due(done) {
        done |= 1 << t;
        let (at, every, now) = (AT[t].load(Relaxed), EVERY[t].load(Relaxed), now(t));
        let missed = match now.saturating_sub(at).checked_div(every) {
            Some(missed) => {
                store_at(t, at.saturating_add((missed + 1).saturating_mul(every)));
                missed
            }
            None => {
                store_at(t, 0);
                upcalls();
                0
            }
        };
        let Some(id) = t.checked_sub(ITIMERS) else {
            sigs |= 1 << SIGNALS[t];
            continue;
        };
        let Some(notify) = POSIX.with(|ps| ps[id].map(|p| p.notify)) else { continue };
        let fresh = match notify {
            Notify::None => continue,
            Notify::Process(sig) => send(id, sig, None),
            Notify::Thread(sig, env) => send(id, sig, Some(env)),
        };
        POSIX.with(|ps| {
            if let Some(p) = ps[id].as_mut() {
                let n = if fresh { missed } else { p.overrun.saturating_add(missed + 1) };
                p.overrun = n.min(DELAYTIMER_MAX);
            }
        });
    }
    sigs
}

/// Sets when timer `t` next expires; the earliest monotonic deadline ends
/// sleeps (`sleep.rs`; CPU time does not advance while the process
/// sleeps).
fn store_at(t: usize, at: u64) {
    AT[t].store(at, Relaxed);
    if CLOCK[t].load(Relaxed) == MONOTONIC {
        let mono = (0..SLOTS).filter(|&s| CLOCK[s].load(Relaxed) == MONOTONIC);
        let next = mono.map(|s| AT[s].load(Relaxed)).filter(|&a| a != 0).min();
        crate::sleep::set_alarm(next.unwrap_or(0));
    }
}

/// exec deletes the POSIX timers (the interval timers go on).
pub fn exec() {
    for id in 0..POSIX_TIMERS {
        delete(id);
    }
}

/// A fork child starts with no timers (its environment has no upcalls).
/// (Every fork comes here: with none armed and no POSIX timer there is
/// nothing to forget.)
pub fn forked_child() {
    let posix = POSIX.with(|ps| ps.iter().any(Option::is_some));
    if !ARMED.swap(false, Relaxed) && !posix {
        return;
    }
    POSIX.with(|ps| *ps = [None; POSIX_TIMERS]);
    for t in 0..SLOTS {
        AT[t].store(0, Relaxed);
        EVERY[t].store(0, Relaxed);
        if t >= ITIMERS {
            CLOCK[t].store(MONOTONIC, Relaxed);
        }
    }
    crate::sleep::set_alarm(0);
}
