//! timerfd: a timer read as a file. A read returns how many times it has
//! expired since the last read (waiting for the first expiry unless
//! nonblocking). Expiries are counted when someone looks (a read, a poll,
//! an epoll wait), not by an interrupt: the count is a function of the
//! time. The deadline is kept in time since boot for both clocks (the wall
//! clock is boot time plus the wall time at boot, `time::epoch_ns`), and a
//! wait on the timer sleeps until it (`crate::wait`).

use super::flags::NONBLOCK;
use super::POLLIN;
use super::{no_ioctl, no_seek, File, Kind, Ops};
use crate::errno::Errno;
use crate::errno::{EAGAIN, EINVAL};
use crate::fs::Stat;
use crate::obj::Handle;
use crate::scoped::Scoped;
use crate::time::now_ns;

/// `TFD_TIMER_ABSTIME`: the expiry is a time on the timer's clock.
pub const ABSTIME: u64 = 1;
/// `TFD_TIMER_CANCEL_ON_SET`: accepted; the wall clock is never set.
pub const CANCEL_ON_SET: u64 = 2;

pub struct Timer {
    /// Whether the timer runs on the wall clock (else time since boot).
    wall: bool,
    /// Next expiry in time since boot; 0: disarmed.
    next: u64,
    /// Rearm period; 0: one expiry.
    interval: u64,
    /// Expiries not yet read, and all expiries so far (edge-triggered
    /// epoll's stamp).
    pending: u64,
    total: u64,
}

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat, ioctl: no_ioctl, close };

/// A timerfd takes no writes (Linux: EINVAL, it has no write method).
fn write(_: &mut File, _: &[u8]) -> Result<usize, Errno> {
    Err(EINVAL)
}

/// A disarmed timer on the wall clock (`wall`) or time since boot.
pub fn create(wall: bool, flags: u32) -> Result<Handle<File>, Errno> {
    let t = Timer { wall, next: 0, interval: 0, pending: 0, total: 0 };
    super::new_with(Kind::TimerFd, flags & NONBLOCK, t)
}

/// Guards the only `&mut` to a timer in this process (the big lock keeps
/// the other processes out).
static TIMERS: Scoped<()> = Scoped::new("a timer", ());

/// Runs `op` on the timer behind `f`, its expiries counted up to now;
/// panics if a timer is borrowed already.
fn with_timer<R>(f: &File, op: impl FnOnce(&mut Timer) -> R) -> R {
    // SAFETY: a timerfd's timer stays while it is open; the flag makes
    // this the only reference to a timer here.
    TIMERS.with(|()| op(count_up(unsafe { f.object::<Timer>().get_mut() })))
}

/// `t` with its expiries counted up to now.
fn count_up(t: &mut Timer) -> &mut Timer {
    let now = now_ns();
    if t.next != 0 && now >= t.next {
        let k = (now - t.next).checked_div(t.interval).map_or(1, |k| k + 1);
        t.pending = t.pending.saturating_add(k);
        t.total = t.total.wrapping_add(k);
        // A period so long that the next expiry passes 2^64 ns: none.
        t.next =
            if t.interval == 0 { 0 } else { t.next.checked_add(k.saturating_mul(t.interval)).unwrap_or(0) };
    }
    t
}

/// `timerfd_settime`: arms (`value` > 0, relative or with `ABSTIME` a
/// time on the timer's clock) or disarms (`value` 0); returns the old
/// setting as `gettime` would.
pub fn set(f: &File, flags: u64, interval: u64, value: u64) -> (u64, u64) {
    let old = get(f);
    with_timer(f, |t| {
        let now = now_ns();
        t.next = match (value, flags & ABSTIME != 0) {
            (0, _) => 0,
            (v, false) => now.saturating_add(v),
            (v, true) => v.saturating_sub(if t.wall { crate::time::epoch_ns() } else { 0 }).max(1),
        };
        t.interval = interval;
        t.pending = 0;
    });
    old
}

/// `timerfd_gettime`: (interval, time to the next expiry; 0 disarmed).
pub fn get(f: &File) -> (u64, u64) {
    with_timer(f, |t| (t.interval, if t.next == 0 { 0 } else { t.next.saturating_sub(now_ns()).max(1) }))
}

fn read(f: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    if buf.len() < 8 {
        return Err(EINVAL);
    }
    let n = with_timer(f, |t| core::mem::take(&mut t.pending));
    if n == 0 {
        // The caller waits, until the next expiry (`next_expiry`).
        return Err(EAGAIN);
    }
    buf[..8].copy_from_slice(&n.to_ne_bytes());
    Ok(8)
}

/// Readiness for `poll`: readable once it has expired.
pub fn events(f: &File) -> u16 {
    if with_timer(f, |t| t.pending) > 0 {
        POLLIN
    } else {
        0
    }
}

/// When a wait on `f` should look again: its next expiry (None:
/// disarmed).
pub fn next_expiry(f: &File) -> Option<u64> {
    with_timer(f, |t| (t.next != 0).then_some(t.next))
}

/// Expiries so far (edge-triggered epoll).
pub fn stamp(f: &File) -> u64 {
    with_timer(f, |t| t.total)
}

fn stat(_: &File, st: &mut Stat) -> Result<(), Errno> {
    st.mode = 0o600;
    st.blksize = 4096;
    Ok(())
}

fn close(f: &mut File) {
    // SAFETY: made by `create`; its only file is going.
    unsafe { f.object::<Timer>().free() };
}
