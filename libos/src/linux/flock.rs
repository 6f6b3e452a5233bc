//! File locks from Linux's side: `fcntl`'s record locks (`F_GETLK`,
//! `F_SETLK`, `F_SETLKW` and their open-file-description forms
//! `F_OFD_*`) with `struct flock`, and `flock`. The locks themselves are
//! the core's (`locks.rs`); a request that must wait looks again every
//! 5 ms until it gets its lock or a signal comes (EINTR), as a FIFO's
//! opener does. Deadlocks between waiting processes are not detected.

use crate::errno::Errno;
use crate::errno::{LxResult, EAGAIN, EBADF, EINVAL, EOVERFLOW};
use crate::fd;
use crate::fs::node;
use crate::locks::{self, Owner, Space};
use crate::obj::{flags, File};
use crate::uaccess;

pub const F_GETLK: u64 = 5;
pub const F_SETLK: u64 = 6;
pub const F_SETLKW: u64 = 7;
pub const F_OFD_GETLK: u64 = 36;
pub const F_OFD_SETLK: u64 = 37;
pub const F_OFD_SETLKW: u64 = 38;

const F_RDLCK: i16 = 0;
const F_WRLCK: i16 = 1;
const F_UNLCK: i16 = 2;

const LOCK_SH: u64 = 1;
const LOCK_EX: u64 = 2;
const LOCK_NB: u64 = 4;
const LOCK_UN: u64 = 8;

/// Linux's `struct flock` (x86-64).
#[repr(C)]
#[derive(Clone, Copy)]
struct Flock {
    l_type: i16,
    l_whence: i16,
    l_start: i64,
    l_len: i64,
    l_pid: i32,
    pad: i32,
}

/// The inclusive byte range `l` names in `f` (Linux's
/// `flock_to_posix_lock`).
fn range(f: &File, l: &Flock) -> Result<(u64, u64), Errno> {
    let base = match l.l_whence {
        0 => 0,
        1 => f.off as i64,
        2 => node::get(f.ino).size as i64,
        _ => return Err(EINVAL),
    };
    let start = base.checked_add(l.l_start).ok_or(EOVERFLOW)?;
    if start < 0 {
        return Err(EINVAL);
    }
    let (start, end) = if l.l_len > 0 {
        if l.l_len - 1 > i64::MAX - start {
            return Err(EOVERFLOW);
        }
        (start, (start + l.l_len - 1) as u64)
    } else if l.l_len < 0 {
        if start + l.l_len < 0 {
            return Err(EINVAL);
        }
        (start + l.l_len, (start - 1) as u64)
    } else {
        (start, u64::MAX)
    };
    Ok((start as u64, end))
}

/// Waits (or not) until `attempt` stops answering EAGAIN: every few
/// milliseconds, until a signal comes (`ipc::retry`, which System V IPC's
/// waits share).
fn retry(wait: bool, attempt: impl FnMut() -> LxResult) -> LxResult {
    super::ipc::retry(wait, None, attempt)
}

/// `fcntl(fd, cmd, &flock)` for the lock commands.
pub fn fcntl(fdn: i64, cmd: u64, arg: u64) -> LxResult {
    let d = fd::get(fdn)?;
    let mut l: Flock = uaccess::get(arg)?;
    let ofd = matches!(cmd, F_OFD_GETLK | F_OFD_SETLK | F_OFD_SETLKW);
    if ofd && l.l_pid != 0 {
        return Err(EINVAL);
    }
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&d) };
    let owner = if ofd {
        Owner::File(f as *const File as u64)
    } else {
        Owner::Process(crate::proc::env(), crate::proc::pid())
    };
    let file = f.lock_key();
    if cmd == F_GETLK || cmd == F_OFD_GETLK {
        if l.l_type != F_RDLCK && l.l_type != F_WRLCK {
            return Err(EINVAL);
        }
        let (start, end) = range(f, &l)?;
        match locks::conflict(file, Space::Record, owner, l.l_type == F_WRLCK, start, end) {
            None => l.l_type = F_UNLCK,
            Some(h) => {
                l.l_type = if h.write { F_WRLCK } else { F_RDLCK };
                l.l_whence = 0;
                l.l_start = h.start as i64;
                l.l_len = if h.end == u64::MAX { 0 } else { (h.end - h.start + 1) as i64 };
                l.l_pid = match h.owner {
                    Owner::Process(_, pid) => pid as i32,
                    Owner::File(_) => -1,
                };
            }
        }
        return uaccess::put(arg, l);
    }
    let want = match l.l_type {
        F_RDLCK if f.flags & flags::ACCMODE == flags::WRONLY => return Err(EBADF),
        F_WRLCK if f.flags & flags::ACCMODE == flags::RDONLY => return Err(EBADF),
        F_RDLCK => Some(false),
        F_WRLCK => Some(true),
        F_UNLCK => None,
        _ => return Err(EINVAL),
    };
    let (start, end) = range(f, &l)?;
    let wait = cmd == F_SETLKW || cmd == F_OFD_SETLKW;
    retry(wait, || {
        if let Some(write) = want {
            if locks::conflict(file, Space::Record, owner, write, start, end).is_some() {
                return Err(EAGAIN);
            }
        }
        locks::set(file, Space::Record, owner, want, start, end).map(|_| 0)
    })
}

/// `flock(fd, operation)`: a shared or exclusive lock on the whole file,
/// held by the open file description; `LOCK_NB` fails with EWOULDBLOCK
/// (EAGAIN) instead of waiting.
pub fn flock(fdn: i64, op: u64) -> LxResult {
    let d = fd::get(fdn)?;
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&d) };
    let want = match op & !LOCK_NB {
        LOCK_SH => Some(false),
        LOCK_EX => Some(true),
        LOCK_UN => None,
        _ => return Err(EINVAL),
    };
    let (file, owner) = (f.lock_key(), Owner::File(f as *const File as u64));
    // As Linux, a conversion first drops the lock held.
    if want.is_some() {
        locks::set(file, Space::Flock, owner, None, 0, u64::MAX)?;
    }
    retry(op & LOCK_NB == 0, || {
        if let Some(write) = want {
            if locks::conflict(file, Space::Flock, owner, write, 0, u64::MAX).is_some() {
                return Err(EAGAIN);
            }
        }
        locks::set(file, Space::Flock, owner, want, 0, u64::MAX).map(|_| 0)
    })
}
