//! POSIX timers (`timer_create`, `timer_settime`, `timer_gettime`,
//! `timer_getoverrun`, `timer_delete`) over the library's timers
//! (`alarm.rs`): the arguments read and checked in Linux's order, a failed
//! call changing nothing. glibc's `SIGEV_THREAD` timers are made of these
//! (a helper thread waits in `sigwaitinfo` for the timers' signals sent to
//! it alone, `SIGEV_THREAD_ID`, and runs the callback named by
//! `si_value`).

use super::time;
use crate::alarm::{self, Notify};
use crate::errno::Errno;
use crate::errno::{LxResult, EAGAIN, EINVAL};
use crate::uaccess;

const SIGEV_SIGNAL: i32 = 0;
const SIGEV_NONE: i32 = 1;
const SIGEV_THREAD: i32 = 2;
const SIGEV_THREAD_ID: i32 = 4;
const TIMER_ABSTIME: u64 = 1;
const NS_PER_S: u64 = 1_000_000_000;

/// `struct sigevent` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
struct SigEvent {
    value: u64,
    signo: i32,
    notify: i32,
    /// `sigev_notify_thread_id`, the first word of its union.
    tid: i32,
    _rest: [i32; 11],
}

/// `struct itimerspec`: the interval, then the value, each a `timespec`.
#[repr(C)]
#[derive(Clone, Copy)]
struct ItimerSpec {
    interval: [i64; 2],
    value: [i64; 2],
}

/// A `timespec` in nanoseconds; EINVAL for a negative one or one whose
/// nanoseconds are not below a second.
fn ns_of([s, ns]: [i64; 2]) -> Result<u64, Errno> {
    if s < 0 || !(0..NS_PER_S as i64).contains(&ns) {
        return Err(EINVAL);
    }
    Ok((s as u64).saturating_mul(NS_PER_S).saturating_add(ns as u64))
}

/// Where a `sigevent` sends the expiries (Linux's `good_sigevent`).
fn notify_of(ev: &SigEvent) -> Result<Notify, Errno> {
    let signal = || Some(ev.signo as u32).filter(|s| (1..=64).contains(s)).ok_or(EINVAL);
    match ev.notify {
        SIGEV_NONE => Ok(Notify::None),
        SIGEV_SIGNAL | SIGEV_THREAD => Ok(Notify::Process(signal()?)),
        n if n == SIGEV_SIGNAL | SIGEV_THREAD_ID => {
            let env = u32::try_from(ev.tid).ok().and_then(crate::proc::thread::env_of).ok_or(EINVAL)?;
            Ok(Notify::Thread(signal()?, env))
        }
        _ => Err(EINVAL),
    }
}

/// `timer_create(clock, sevp, timerid)`; no `sevp`: SIGALRM to the
/// process, with the timer's id as its value.
pub fn timer_create(clock: u64, sevp: u64, idp: u64) -> LxResult {
    let ev = if sevp != 0 { Some(uaccess::get::<SigEvent>(sevp)?) } else { None };
    let (clock, wall) = time::timer_clock(clock)?;
    let notify = ev.as_ref().map_or(Ok(Notify::Process(crate::signo::SIGALRM)), notify_of)?;
    let id = alarm::create(clock, wall, notify, ev.map(|e| e.value)).ok_or(EAGAIN)?;
    if let Err(e) = uaccess::put(idp, id as i32) {
        alarm::delete(id);
        return Err(e);
    }
    Ok(0)
}

/// The timer a `timer_t` argument names (an int); EINVAL for none.
fn timer(id: u64) -> Result<(usize, usize), Errno> {
    let id = usize::try_from(id as i32).map_err(|_| EINVAL)?;
    Ok((id, alarm::posix(id).ok_or(EINVAL)?))
}

fn itimerspec(s: &alarm::Setting) -> ItimerSpec {
    ItimerSpec { interval: time::timespec(s.every), value: time::timespec(s.left) }
}

/// `timer_settime(timerid, flags, new, old)`: `new` is not optional; an
/// absolute time already past expires at once.
pub fn timer_settime(id: u64, flags: u64, new: u64, old: u64) -> LxResult {
    if new == 0 {
        return Err(EINVAL);
    }
    let v = uaccess::get::<ItimerSpec>(new)?;
    let (every, value) = (ns_of(v.interval)?, ns_of(v.value)?);
    let (id, t) = timer(id)?;
    if old != 0 {
        uaccess::put(old, itimerspec(&alarm::get(t)))?;
    }
    let abs = flags & TIMER_ABSTIME != 0;
    let value = if abs && value != 0 {
        let now = if alarm::is_wall(id) { crate::time::wall_ns() } else { alarm::now(t) };
        value.saturating_sub(now).max(1)
    } else {
        value
    };
    alarm::set(t, value, every);
    alarm::track_wall(id, t, abs && alarm::is_wall(id));
    Ok(0)
}

/// `timer_gettime(timerid, curr)`.
pub fn timer_gettime(id: u64, curr: u64) -> LxResult {
    let (_, t) = timer(id)?;
    uaccess::put(curr, itimerspec(&alarm::get(t)))
}

/// `timer_getoverrun(timerid)`: the overrun count its last signal carried.
pub fn timer_getoverrun(id: u64) -> LxResult {
    let (id, _) = timer(id)?;
    Ok(alarm::overrun(id).ok_or(EINVAL)? as i64)
}

/// `timer_delete(timerid)`.
pub fn timer_delete(id: u64) -> LxResult {
    let (id, _) = timer(id)?;
    alarm::delete(id);
    Ok(0)
}
