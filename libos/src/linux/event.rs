//! epoll, eventfd, timerfd and signalfd calls (the objects are in
//! `obj::epoll`, `obj::eventfd`, `obj::timerfd` and `obj::signalfd`;
//! waiting is `crate::wait`).

use super::poll::with_sigmask;
use crate::errno::Errno;
use crate::errno::{LxResult, EFAULT, EINVAL};
use crate::fd;
use crate::obj::{epoll, eventfd, signalfd, timerfd, Kind};
use crate::uaccess;
use alloc::vec::Vec;

const O_NONBLOCK: u64 = crate::obj::flags::NONBLOCK as u64;
const O_CLOEXEC: u64 = 0o2000000;

/// Bytes of a `struct epoll_event` (packed on x86-64: events, data).
const EVENT_SIZE: u64 = 12;
/// Most events one wait may return (Linux: `INT_MAX / EVENT_SIZE`).
const MAX_EVENTS: u64 = i32::MAX as u64 / EVENT_SIZE;

pub fn epoll_create(size: i64) -> LxResult {
    if size <= 0 {
        return Err(EINVAL);
    }
    fd::open(epoll::create(0)?, false)
}

pub fn epoll_create1(flags: u64) -> LxResult {
    if flags & !O_CLOEXEC != 0 {
        return Err(EINVAL);
    }
    fd::open(epoll::create(0)?, flags & O_CLOEXEC != 0)
}

pub fn epoll_ctl(epfd: i64, op: u64, fdn: i64, event: u64) -> LxResult {
    let ep = fd::get(epfd)?;
    let target = fd::get(fdn)?;
    if epfd == fdn || !(epoll::CTL_ADD..=epoll::CTL_MOD).contains(&op) {
        return Err(EINVAL);
    }
    let ev = if op == epoll::CTL_DEL {
        (0, 0)
    } else {
        let b = uaccess::bytes(event, EVENT_SIZE)?;
        let events = u32::from_ne_bytes(b[..4].try_into().expect("4 bytes"));
        (events, u64::from_ne_bytes(b[4..12].try_into().expect("8 bytes")))
    };
    epoll::ctl(ep.file, op, fdn as i32, target.file, ev)
}

/// epoll_wait (no mask) and epoll_pwait: `timeout` in ms, negative: none.
pub fn epoll_pwait(epfd: i64, events: u64, max: u64, timeout: i64, set: u64, size: u64) -> LxResult {
    epoll_common(epfd, events, max, (timeout >= 0).then(|| timeout as u64 * 1_000_000), set, size)
}

/// epoll_pwait2: the timeout a `struct timespec` (null: none).
pub fn epoll_pwait2(epfd: i64, events: u64, max: u64, ts: u64, set: u64, size: u64) -> LxResult {
    let limit = super::poll::timeout(ts, 1)?;
    epoll_common(epfd, events, max, limit, set, size)
}

fn epoll_common(epfd: i64, events: u64, max: u64, limit: Option<u64>, set: u64, size: u64) -> LxResult {
    let ep = fd::get(epfd)?;
    if ep.file.kind() != Kind::Epoll || max as i64 <= 0 || max > MAX_EVENTS {
        return Err(EINVAL);
    }
    uaccess::writable(events, max * EVENT_SIZE).map_err(|_| EFAULT)?;
    // Room for what can be ready: no more than the descriptors there are.
    let mut out: Vec<(u32, u64)> = alloc::vec![(0, 0); max.min(fd::MAX_FDS as u64 * 4) as usize];
    let n = with_sigmask(set, size, || crate::wait::epoll_wait(ep.file, &mut out, limit).map(|n| n as i64))?;
    for (k, &(ev, data)) in out[..n as usize].iter().enumerate() {
        let mut b = [0u8; EVENT_SIZE as usize];
        b[..4].copy_from_slice(&ev.to_ne_bytes());
        b[4..].copy_from_slice(&data.to_ne_bytes());
        uaccess::write(events + EVENT_SIZE * k as u64, &b)?;
    }
    Ok(n)
}

/// eventfd (flags 0) and eventfd2.
pub fn eventfd2(initial: u64, flags: u64) -> LxResult {
    if flags & !(O_CLOEXEC | O_NONBLOCK | eventfd::SEMAPHORE as u64) != 0 {
        return Err(EINVAL);
    }
    let f = eventfd::create(initial as u32, flags as u32, flags & eventfd::SEMAPHORE as u64 != 0)?;
    fd::open(f, flags & O_CLOEXEC != 0)
}

pub fn timerfd_create(clock: u64, flags: u64) -> LxResult {
    use super::time::id;
    if flags & !(O_CLOEXEC | O_NONBLOCK) != 0 {
        return Err(EINVAL);
    }
    let wall = match clock {
        id::REALTIME | id::REALTIME_ALARM => true,
        id::MONOTONIC | id::BOOTTIME | id::BOOTTIME_ALARM => false,
        _ => return Err(EINVAL),
    };
    fd::open(timerfd::create(wall, flags as u32)?, flags & O_CLOEXEC != 0)
}

/// The timerfd open as `fdn`.
fn timer(fdn: i64) -> Result<&'static crate::obj::File, Errno> {
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&fd::get(fdn)?) };
    if f.kind != Kind::TimerFd {
        return Err(EINVAL);
    }
    Ok(f)
}

/// A `struct itimerspec` (interval, value) at `p` in nanoseconds.
fn itimerspec(p: u64) -> Result<(u64, u64), Errno> {
    let v: [i64; 4] = uaccess::get(p)?;
    let ns = |s: i64, n: i64| {
        if s < 0 || !(0..1_000_000_000).contains(&n) {
            return Err(EINVAL);
        }
        Ok((s as u64).saturating_mul(1_000_000_000).saturating_add(n as u64))
    };
    Ok((ns(v[0], v[1])?, ns(v[2], v[3])?))
}

fn put_itimerspec(p: u64, (interval, value): (u64, u64)) -> LxResult {
    let [a, b] = super::time::timespec(interval);
    let [c, d] = super::time::timespec(value);
    uaccess::put(p, [a, b, c, d])
}

pub fn timerfd_settime(fdn: i64, flags: u64, new: u64, old: u64) -> LxResult {
    let f = timer(fdn)?;
    if flags & !(timerfd::ABSTIME | timerfd::CANCEL_ON_SET) != 0 {
        return Err(EINVAL);
    }
    let (interval, value) = itimerspec(new)?;
    if old != 0 {
        uaccess::writable(old, 32)?;
    }
    let prev = timerfd::set(f, flags, interval, value);
    if old != 0 {
        put_itimerspec(old, prev)?;
    }
    Ok(0)
}

pub fn timerfd_gettime(fdn: i64, cur: u64) -> LxResult {
    put_itimerspec(cur, timerfd::get(timer(fdn)?))?;
    Ok(0)
}

/// `signalfd4(fd, mask, sizemask, flags)` (`signalfd`: no flags): a new
/// signalfd for the signals of `mask` (a `sigset_t`; SIGKILL and SIGSTOP
/// left out, as Linux does), or, given one open as `fd`, its new mask.
pub fn signalfd4(fdn: i64, mask: u64, size: u64, flags: u64) -> LxResult {
    if flags & !(O_NONBLOCK | O_CLOEXEC) != 0 || size != 8 {
        return Err(EINVAL);
    }
    let never = 1 << crate::signo::SIGKILL | 1 << crate::signo::SIGSTOP;
    let set = uaccess::get::<u64>(mask)? << 1 & !never;
    if fdn == -1 {
        return fd::open(signalfd::create(set, flags as u32)?, flags & O_CLOEXEC != 0);
    }
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&fd::get(fdn)?) };
    if f.kind != Kind::SignalFd {
        return Err(EINVAL);
    }
    signalfd::set_mask(f, set);
    Ok(fdn)
}
