//! A file's attributes beyond its data: times (`utimensat`, `utimes`,
//! `futimesat`, `utime`) and owners (`chown`, `fchown`, `lchown`,
//! `fchownat`), with Linux's checks and side effects: a change of owner
//! clears the set-user-ID bit of anything but a directory, and the
//! set-group-ID bit where it means one (group execute set); every change
//! sets the change time.

use super::file::{base, AT_SYMLINK_NOFOLLOW};
use crate::errno::Errno;
use crate::errno::{LxResult, EFAULT, EINVAL};
use crate::fd;
use crate::fs::{node, path, perm, Ino, S_IFDIR, S_IFMT, S_ISGID};
use crate::time::wall_ns;
use crate::uaccess;

const AT_EMPTY_PATH: u64 = 0x1000;
const S_ISUID: u32 = 0o4000;
const S_IXGRP: u32 = 0o010;
const UTIME_NOW: i64 = (1 << 30) - 1;
const UTIME_OMIT: i64 = (1 << 30) - 2;

/// The inode a `*at` call names: the descriptor itself for an empty path
/// with `AT_EMPTY_PATH` (or no path at all, `by_fd`), else the path from
/// `dirfd`. 0 for a descriptor without one (a pipe).
fn target(dirfd: i64, pathp: u64, flags: u64, by_fd: bool) -> Result<Ino, Errno> {
    let p = if by_fd { &[][..] } else { uaccess::path(pathp)? };
    // fchown and futimens need a descriptor open for I/O; an empty path
    // with AT_EMPTY_PATH takes an O_PATH one too.
    if by_fd || p.is_empty() && flags & AT_EMPTY_PATH != 0 {
        let d = if by_fd { fd::get(dirfd)? } else { fd::get_raw(dirfd)? };
        // SAFETY: the descriptor keeps the file live; no other reference to it here.
        return Ok(unsafe { fd::file(&d) }.ino);
    }
    path::resolve(base(dirfd, p)?, p, flags & AT_SYMLINK_NOFOLLOW == 0)
}

/// `utimensat(dirfd, path, times, flags)`: access and modification times
/// (each a `timespec`, `UTIME_NOW` or `UTIME_OMIT`; no `times`: now).
/// With no path it sets the descriptor's file (`futimens`).
pub fn utimensat(dirfd: i64, pathp: u64, times: u64, flags: u64) -> LxResult {
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(EINVAL);
    }
    let t: [[i64; 2]; 2] = if times == 0 { [[0, UTIME_NOW]; 2] } else { uaccess::get(times)? };
    for [_, ns] in t {
        if !(0..1_000_000_000).contains(&ns) && ns != UTIME_NOW && ns != UTIME_OMIT {
            return Err(EINVAL);
        }
    }
    if t[0][1] == UTIME_OMIT && t[1][1] == UTIME_OMIT {
        return Ok(0);
    }
    let by_fd = pathp == 0;
    if by_fd && (dirfd == super::file::AT_FDCWD || flags != 0) {
        return Err(if flags != 0 { EINVAL } else { EFAULT });
    }
    set_times(target(dirfd, pathp, flags, by_fd)?, t)
}

/// Sets `t` (Linux's `timespec` pair, with `UTIME_*`) on `ino`.
fn set_times(ino: Ino, t: [[i64; 2]; 2]) -> LxResult {
    if ino == 0 {
        return Ok(0);
    }
    let now = wall_ns();
    let ns = |[s, ns]: [i64; 2]| match ns {
        UTIME_OMIT => None,
        UTIME_NOW => Some(now),
        _ => Some((s as u64).wrapping_mul(1_000_000_000).wrapping_add(ns as u64)),
    };
    // Times of one's choosing need the owner (or root); "now" also anyone
    // who may write the file (Linux's rule).
    let chosen = t.iter().any(|&[_, n]| n != UTIME_NOW && n != UTIME_OMIT);
    if chosen {
        perm::owner(ino)?;
    } else {
        perm::owner(ino).or_else(|_| perm::check(ino, perm::MAY_WRITE))?;
    }
    let (a, m) = (ns(t[0]), ns(t[1]));
    node::update(ino, |n| {
        n.atime_ns = a.unwrap_or(n.atime_ns);
        n.mtime_ns = m.unwrap_or(n.mtime_ns);
        n.ctime_ns = now;
    });
    crate::obj::inotify::changed(ino, crate::obj::inotify::IN_ATTRIB);
    Ok(0)
}

/// `utimes(path, tv)` and `futimesat(dirfd, path, tv)`: `timeval`s
/// (microseconds, 0..1_000_000), or now without them.
pub fn futimesat(dirfd: i64, pathp: u64, tv: u64) -> LxResult {
    let t = if tv == 0 {
        [[0, UTIME_NOW]; 2]
    } else {
        let v: [[i64; 2]; 2] = uaccess::get(tv)?;
        if v.iter().any(|[_, us]| !(0..1_000_000).contains(us)) {
            return Err(EINVAL);
        }
        v.map(|[s, us]| [s, us * 1000])
    };
    set_times(target(dirfd, pathp, 0, false)?, t)
}

/// `utime(path, buf)`: whole seconds (`struct utimbuf`), or now.
pub fn utime(pathp: u64, buf: u64) -> LxResult {
    let t = if buf == 0 {
        [[0, UTIME_NOW]; 2]
    } else {
        let [a, m]: [i64; 2] = uaccess::get(buf)?;
        [[a, 0], [m, 0]]
    };
    set_times(target(super::file::AT_FDCWD, pathp, 0, false)?, t)
}

/// `fchownat(dirfd, path, uid, gid, flags)` (and `chown`, `lchown`;
/// `fchown` is `by_fd`): -1 leaves an id as it is.
pub fn fchownat(dirfd: i64, pathp: u64, uid: u64, gid: u64, flags: u64, by_fd: bool) -> LxResult {
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(EINVAL);
    }
    let ino = target(dirfd, pathp, flags, by_fd)?;
    if ino == 0 {
        return Ok(0);
    }
    let (uid, gid) = (uid as u32, gid as u32);
    perm::may_chown(ino, uid, gid)?;
    node::update(ino, |n| {
        if uid != u32::MAX {
            n.uid = uid;
        }
        if gid != u32::MAX {
            n.gid = gid;
        }
        if n.mode & S_IFMT != S_IFDIR {
            n.mode &= !S_ISUID;
            if n.mode & S_IXGRP != 0 {
                n.mode &= !S_ISGID;
            }
        }
        n.ctime_ns = wall_ns();
    });
    crate::obj::fifo::bits_changed(ino);
    crate::obj::inotify::changed(ino, crate::obj::inotify::IN_ATTRIB);
    crate::fs::disk::attributes(ino).map(|_| 0)
}
