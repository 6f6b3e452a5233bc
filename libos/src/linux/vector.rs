//! `preadv`, `pwritev`, `preadv2`, `pwritev2`: `readv`/`writev` at an
//! offset, leaving the file's own offset alone (regular files only, ESPIPE
//! otherwise), or with the v2 calls' position -1 at the file's offset, on
//! any descriptor. The v2 flags: `RWF_HIPRI`, `RWF_DSYNC` and `RWF_SYNC`
//! change nothing (no page cache, nothing to flush); `RWF_NOWAIT` makes
//! the call fail with EAGAIN rather than wait (a regular file never
//! waits); `RWF_APPEND` writes at the end and `RWF_NOAPPEND` at the
//! position even on an `O_APPEND` file; other bits are EOPNOTSUPP.
//! Linux's checks, in its order: the position, the descriptor, ESPIPE,
//! the access mode, the vector, then the flags.

use super::file::{iovecs, readv, writev};
use crate::errno::{LxResult, EBADF, EINVAL, EOPNOTSUPP, ESPIPE};
use crate::fd;
use crate::obj::{flags, Kind};

const RWF_HIPRI: u64 = 1;
const RWF_DSYNC: u64 = 2;
const RWF_SYNC: u64 = 4;
const RWF_NOWAIT: u64 = 8;
const RWF_APPEND: u64 = 0x10;
const RWF_NOAPPEND: u64 = 0x20;
const KNOWN: u64 = RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | RWF_APPEND | RWF_NOAPPEND;

/// `preadv`/`pwritev` (`v2` false: `pos` must be a position and `rwf` is
/// 0) and their v2 forms; `write_it` picks the direction.
pub fn preadv(fdn: i64, iov: u64, cnt: u64, pos: i64, rwf: u64, v2: bool, write_it: bool) -> LxResult {
    let at_offset = v2 && pos == -1;
    if pos < 0 && !at_offset {
        return Err(EINVAL);
    }
    let d = fd::get(fdn)?;
    // SAFETY: the descriptor keeps the file live; no other reference to it
    // here (taken again after each step that may use it).
    let f = unsafe { fd::file(&d) };
    if !at_offset && f.kind != Kind::Regular {
        return Err(ESPIPE);
    }
    let mode = f.flags & flags::ACCMODE;
    if (write_it && mode == flags::RDONLY) || (!write_it && mode == flags::WRONLY) {
        return Err(EBADF);
    }
    let total: u64 = iovecs(iov, cnt)?.iter().map(|v| v.1).sum();
    if total == 0 {
        return Ok(0);
    }
    if rwf & !KNOWN != 0 {
        return Err(EOPNOTSUPP);
    }
    // The flags and position hold for this call only: the description's
    // own flags and offset come back afterwards (under the big lock, so
    // nobody sees them in between).
    let (saved_flags, saved_off) = (f.flags, f.off);
    if rwf & RWF_NOWAIT != 0 {
        f.flags |= flags::NONBLOCK;
    }
    if write_it && rwf & RWF_APPEND != 0 {
        f.flags |= flags::APPEND;
    }
    if write_it && rwf & RWF_NOAPPEND != 0 {
        f.flags &= !flags::APPEND;
    }
    if !at_offset {
        f.off = pos as u64;
    }
    let r = if write_it { writev(fdn, iov, cnt) } else { readv(fdn, iov, cnt) };
    // SAFETY: as above.
    let f = unsafe { fd::file(&d) };
    f.flags = saved_flags;
    if !at_offset {
        f.off = saved_off;
    }
    r
}
