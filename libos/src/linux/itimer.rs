//! `alarm`, `setitimer` and `getitimer`: Linux's interval timers
//! (`ITIMER_REAL`, `ITIMER_VIRTUAL`, `ITIMER_PROF`, its `which` numbers
//! being the library's timer numbers) over the library's (`alarm.rs`).

use crate::alarm::{self, Setting};
use crate::errno::Errno;
use crate::errno::{LxResult, EINVAL};
use crate::uaccess;

const NS_PER_US: u64 = 1000;
const US_PER_S: u64 = 1_000_000;

/// `struct itimerval`: the interval, then the value, each a `timeval`.
#[repr(C)]
#[derive(Clone, Copy)]
struct ItimerVal {
    interval: [i64; 2],
    value: [i64; 2],
}

/// A `timeval` in nanoseconds; EINVAL for a negative one or one whose
/// microseconds are not below a million.
fn ns_of(tv: [i64; 2]) -> Result<u64, Errno> {
    let [s, us] = tv;
    if s < 0 || !(0..US_PER_S as i64).contains(&us) {
        return Err(EINVAL);
    }
    Ok((s as u64).saturating_mul(US_PER_S * NS_PER_US).saturating_add(us as u64 * NS_PER_US))
}

/// Nanoseconds as a `timeval`, rounded up to the microsecond (an armed
/// timer never reads as disarmed).
fn timeval(ns: u64) -> [i64; 2] {
    let us = ns.div_ceil(NS_PER_US);
    [(us / US_PER_S) as i64, (us % US_PER_S) as i64]
}

fn itimerval(s: &Setting) -> ItimerVal {
    ItimerVal { interval: timeval(s.every), value: timeval(s.left) }
}

/// The timer `which` names (a C int); EINVAL for another.
fn timer(which: u64) -> Result<usize, Errno> {
    Some(which as u32 as usize).filter(|&t| t < alarm::ITIMERS).ok_or(EINVAL)
}

/// `getitimer(which, curr)`.
pub fn getitimer(which: u64, curr: u64) -> LxResult {
    let t = timer(which)?;
    uaccess::put(curr, itimerval(&alarm::get(t)))?;
    Ok(0)
}

/// `setitimer(which, new, old)`; a null `new` disarms, as Linux has it.
/// Everything is read and checked, and `old` written, before the timer
/// changes, so a failing call changes nothing.
pub fn setitimer(which: u64, new: u64, old: u64) -> LxResult {
    let v = if new == 0 {
        ItimerVal { interval: [0; 2], value: [0; 2] }
    } else {
        uaccess::get::<ItimerVal>(new)?
    };
    let (value, every) = (ns_of(v.value)?, ns_of(v.interval)?);
    let t = timer(which)?;
    if old != 0 {
        uaccess::put(old, itimerval(&alarm::get(t)))?;
    }
    alarm::set(t, value, every);
    Ok(0)
}

/// `alarm(seconds)`: a one-shot `ITIMER_REAL` (0 disarms); returns the
/// seconds the previous one had left, rounded as Linux does (to the
/// nearest, and at least 1 if it was armed).
pub fn alarm(seconds: u64) -> LxResult {
    let old = alarm::set(alarm::REAL, (seconds as u32 as u64).saturating_mul(US_PER_S * NS_PER_US), 0);
    let [s, us] = timeval(old.left);
    Ok(if (s == 0 && us != 0) || us >= 500_000 { s + 1 } else { s })
}
