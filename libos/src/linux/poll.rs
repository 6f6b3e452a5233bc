//! poll, ppoll, select, pselect6 over `crate::wait` (wakeup predicates on
//! pipe rings; see there). ppoll, pselect6 and epoll_pwait put their
//! signal mask in place for the wait (`with_sigmask`).

use crate::errno::Errno;
use crate::errno::{LxResult, EINTR, EINVAL};
use crate::proc::{deliver, signal};
use crate::uaccess;
use crate::wait::{self, Entry};
use alloc::vec::Vec;

/// A `struct timespec` / `struct timeval` at `ptr` as nanoseconds (`unit`:
/// nanoseconds per unit of its second field); None for a null pointer.
pub fn timeout(ptr: u64, unit: u64) -> Result<Option<u64>, Errno> {
    if ptr == 0 {
        return Ok(None);
    }
    let [s, frac]: [i64; 2] = uaccess::get(ptr)?;
    if s < 0 || frac < 0 || frac as u64 * unit >= 1_000_000_000 {
        return Err(EINVAL);
    }
    Ok(Some((s as u64).saturating_mul(1_000_000_000).saturating_add(frac as u64 * unit)))
}

/// Writes back the time left, as Linux does for select and ppoll.
fn time_left(ptr: u64, unit: u64, total: Option<u64>, start: u64) -> Result<(), Errno> {
    if let (true, Some(t)) = (ptr != 0, total) {
        let left = t.saturating_sub(crate::time::now_ns() - start);
        uaccess::put(ptr, [(left / 1_000_000_000) as i64, ((left % 1_000_000_000) / unit) as i64])?;
    }
    Ok(())
}

/// poll (timeout in ms, negative: none) and ppoll (a timespec).
fn poll_ns(fds: u64, n: u64, limit: Option<u64>) -> LxResult {
    if n > crate::fd::limit() as u64 {
        return Err(EINVAL);
    }
    // A few entries (the usual case) on the stack, more on the heap.
    let mut small = [Entry::default(); 8];
    let mut big = Vec::new();
    let entries = if n as usize <= small.len() {
        &mut small[..n as usize]
    } else {
        big.resize(n as usize, Entry::default());
        &mut big[..]
    };
    for (i, e) in entries.iter_mut().enumerate() {
        let p: [i16; 4] = uaccess::get(fds + 8 * i as u64)?;
        let fd = p[0] as u16 as u32 as i32 | (p[1] as u16 as i32) << 16;
        *e = Entry { fd: fd as i64, events: p[2] as u16, revents: 0 };
    }
    let ready = wait::wait(entries, limit)?;
    for (i, e) in entries.iter().enumerate() {
        uaccess::put(fds + 8 * i as u64 + 6, e.revents as i16)?;
    }
    Ok(ready as i64)
}

pub fn poll(fds: u64, n: u64, ms: i64) -> LxResult {
    poll_ns(fds, n, (ms >= 0).then(|| ms as u64 * 1_000_000))
}

/// Runs `wait` with the signal mask at `set` (`size` bytes; a null `set`
/// keeps the mask) in place of the program's, as one step: a signal the
/// new mask lets through ends the wait with EINTR, and its handler runs
/// with the new mask, the old one coming back when it returns (as after
/// `rt_sigsuspend`); otherwise the old mask is back when the call returns.
pub fn with_sigmask(set: u64, size: u64, wait: impl FnOnce() -> LxResult) -> LxResult {
    if set == 0 {
        return wait();
    }
    if size != 8 {
        return Err(EINVAL);
    }
    let new: u64 = uaccess::get(set)?;
    let old = signal::mask();
    signal::set_mask(new);
    let r = wait();
    if r == Err(EINTR) && deliver::pending() {
        // Read by the handler's frame on this call's return.
        crate::proc::signal::suspended(old);
    } else {
        signal::set_mask(old);
    }
    r
}

pub fn ppoll(fds: u64, n: u64, ts: u64, set: u64, size: u64) -> LxResult {
    let limit = timeout(ts, 1)?;
    let start = crate::time::now_ns();
    let r = with_sigmask(set, size, || poll_ns(fds, n, limit));
    time_left(ts, 1, limit, start)?;
    r
}

/// pselect6: select with a timespec and, at `sig`, a (mask pointer, size)
/// pair (a null `sig` or mask pointer: the mask stays).
pub fn pselect6(nfds: u64, r: u64, w: u64, x: u64, ts: u64, sig: u64) -> LxResult {
    let [set, size]: [u64; 2] = if sig == 0 { [0, 0] } else { uaccess::get(sig)? };
    with_sigmask(set, size, || select(nfds, r, w, x, ts, 1))
}

/// select (a timeval, `unit` 1000) and pselect6 (a timespec, `unit` 1).
pub fn select(nfds: u64, r: u64, w: u64, x: u64, tv: u64, unit: u64) -> LxResult {
    let nfds = i32::try_from(nfds as i64).map_err(|_| EINVAL)?;
    if !(0..=wait::FD_SETSIZE as i32).contains(&nfds) {
        return Err(EINVAL);
    }
    let words = (nfds as usize).div_ceil(64);
    // The sets on the stack (a null pointer: an empty set).
    let mut sets = [[0u64; wait::FD_SETSIZE / 64]; 3];
    let len = |p: u64| if p == 0 { 0 } else { words };
    for (set, p) in sets.iter_mut().zip([r, w, x]) {
        for (i, word) in set[..len(p)].iter_mut().enumerate() {
            *word = uaccess::get(p + 8 * i as u64)?;
        }
    }
    let limit = timeout(tv, unit)?;
    let start = crate::time::now_ns();
    let [rs, ws, xs] = &mut sets;
    let n = wait::select(nfds as usize, &mut rs[..len(r)], &mut ws[..len(w)], &mut xs[..len(x)], limit)?;
    for (set, p) in sets.iter().zip([r, w, x]) {
        for (i, word) in set[..len(p)].iter().enumerate() {
            uaccess::put(p + 8 * i as u64, *word)?;
        }
    }
    time_left(tv, unit, limit, start)?;
    Ok(n as i64)
}
