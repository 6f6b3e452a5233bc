//! eventfd: a 64-bit counter that writes add to and reads take (all of
//! it, or one in semaphore mode). The counter sits in a header shaped like
//! a pipe ring's (`crate::predicate::READERS_AT` … `TAIL_AT`, with `head` the count
//! and `tail` zero), so a wait for it to become readable sleeps on the
//! same wakeup predicate as a wait for a pipe (`crate::wait`).

use super::flags::NONBLOCK;
use super::{no_ioctl, no_seek, File, Handle, Kind, Ops};
use super::{POLLIN, POLLOUT};
use crate::errno::Errno;
use crate::errno::{EAGAIN, EINVAL};
use crate::fs::Stat;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The largest count (a write that would pass it waits).
const MAX: u64 = u64::MAX - 1;
/// `EFD_SEMAPHORE`: a read takes one.
pub const SEMAPHORE: u32 = 1;

#[repr(C, align(64))]
pub struct EventFd {
    /// Always 1: a predicate's "no writer left" term never holds.
    readers: AtomicU32,
    writers: AtomicU32,
    count: AtomicU64,
    /// Always 0: readable when `count` differs.
    zero: AtomicU64,
    /// Reads and writes so far (edge-triggered epoll's stamp).
    changes: u64,
    semaphore: bool,
}

const _: () = {
    assert!(core::mem::offset_of!(EventFd, readers) == crate::predicate::READERS_AT as usize);
    assert!(core::mem::offset_of!(EventFd, writers) == crate::predicate::WRITERS_AT as usize);
    assert!(core::mem::offset_of!(EventFd, count) == crate::predicate::HEAD_AT as usize);
    assert!(core::mem::offset_of!(EventFd, zero) == crate::predicate::TAIL_AT as usize);
};

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat, ioctl: no_ioctl, close };

/// A new eventfd counting from `initial`; `flags` are the file's status
/// flags (`NONBLOCK`), `semaphore` its mode.
pub fn create(initial: u32, flags: u32, semaphore: bool) -> Result<Handle<File>, Errno> {
    let counter = EventFd {
        readers: AtomicU32::new(1),
        writers: AtomicU32::new(1),
        count: AtomicU64::new(initial as u64),
        zero: AtomicU64::new(0),
        changes: 0,
        semaphore,
    };
    super::new_with(Kind::EventFd, (flags & NONBLOCK) | super::flags::RDWR, counter)
}

/// The counter behind an eventfd.
///
/// # Safety
/// No other reference to it may be live while the result is (the lock is
/// held; lock-free readers use only the atomics).
unsafe fn of(f: &File) -> &'static mut EventFd {
    // SAFETY: an eventfd's counter stays while it is open; the caller
    // makes this the only reference in use.
    unsafe { f.object::<EventFd>().get_mut() }
}

fn read(f: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    if buf.len() < 8 {
        return Err(EINVAL);
    }
    // SAFETY: `f` keeps the counter live; the lock is held.
    let e = unsafe { of(f) };
    let n = e.count.load(Ordering::Acquire);
    if n == 0 {
        // The caller waits (a predicate watches the count).
        return Err(EAGAIN);
    }
    let take = if e.semaphore { 1 } else { n };
    e.count.store(n - take, Ordering::Release);
    e.changes += 1;
    buf[..8].copy_from_slice(&take.to_ne_bytes());
    Ok(8)
}

fn write(f: &mut File, buf: &[u8]) -> Result<usize, Errno> {
    let Some(bytes) = buf.get(..8) else {
        return Err(EINVAL);
    };
    let add = u64::from_ne_bytes(bytes.try_into().expect("8 bytes"));
    if add == u64::MAX {
        return Err(EINVAL);
    }
    // SAFETY: `f` keeps the counter live; the lock is held.
    let e = unsafe { of(f) };
    let n = e.count.load(Ordering::Acquire);
    if add > MAX - n {
        // The caller waits (rare: the count near 2^64; no predicate
        // watches for room, so it looks again after each yield).
        return Err(EAGAIN);
    }
    e.count.store(n + add, Ordering::Release);
    e.changes += 1;
    Ok(8)
}

/// Readiness for `poll` of the eventfd whose counter is `counter`, which
/// the caller holds open (lock-free: only the count is read).
pub fn events(counter: Handle<EventFd>) -> u16 {
    // SAFETY: the caller's description keeps the counter; only the atomic
    // is read.
    let n = unsafe { counter.get() }.count.load(Ordering::Acquire);
    (if n > 0 { POLLIN } else { 0 }) | if n < MAX { POLLOUT } else { 0 }
}

/// Changes so far (edge-triggered epoll).
pub fn stamp(f: &File) -> u64 {
    // SAFETY: `f` keeps the counter live; the lock is held.
    unsafe { of(f) }.changes
}

fn stat(_: &File, st: &mut Stat) -> Result<(), Errno> {
    st.mode = 0o600;
    st.blksize = 4096;
    Ok(())
}

fn close(f: &mut File) {
    // SAFETY: made by `create`; its only file is going.
    unsafe { f.object::<EventFd>().free() };
}
