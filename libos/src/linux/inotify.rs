//! inotify's calls (the instances and their events are `obj::inotify`'s).

use super::file::{O_CLOEXEC, O_NONBLOCK};
use crate::errno::{LxResult, EINVAL, ENOTDIR};
use crate::fd;
use crate::fs::{node, path, perm};
use crate::obj::inotify::{self, IN_DONT_FOLLOW, IN_MASK_ADD, IN_MASK_CREATE, IN_ONLYDIR, VALID};
use crate::uaccess;

/// `inotify_init` (flags 0) and `inotify_init1`: `IN_NONBLOCK`,
/// `IN_CLOEXEC` (the `O_` bits).
pub fn inotify_init1(flags: u64) -> LxResult {
    if flags & !(O_NONBLOCK | O_CLOEXEC) != 0 {
        return Err(EINVAL);
    }
    fd::open(inotify::create(flags as u32)?, flags & O_CLOEXEC != 0)
}

/// `inotify_add_watch(fd, path, mask)`: Linux's checks in its order (the
/// mask: no bit, or one it does not know; the descriptor; the path; read
/// permission). A mask of flags alone (`IN_ONLYDIR`) is a watch for nothing,
/// as on Linux.
pub fn inotify_add_watch(fdn: i64, pathp: u64, mask: u64) -> LxResult {
    let mask = mask as u32;
    if mask & IN_MASK_ADD != 0 && mask & IN_MASK_CREATE != 0 || mask == 0 || mask & !VALID != 0 {
        return Err(EINVAL);
    }
    let d = fd::get(fdn)?;
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&d) };
    if f.kind != crate::obj::Kind::Inotify {
        return Err(EINVAL);
    }
    let ino = path::resolve(crate::proc::cwd(), uaccess::path(pathp)?, mask & IN_DONT_FOLLOW == 0)?;
    if mask & IN_ONLYDIR != 0 && !node::is_dir(ino) {
        return Err(ENOTDIR);
    }
    perm::check(ino, perm::MAY_READ)?;
    inotify::add_watch(f, ino, mask)
}

pub fn inotify_rm_watch(fdn: i64, wd: i64) -> LxResult {
    let d = fd::get(fdn)?;
    // SAFETY: as above.
    inotify::rm_watch(unsafe { fd::file(&d) }, wd as i32 as i64)
}
