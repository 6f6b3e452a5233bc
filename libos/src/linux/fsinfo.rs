//! `statfs`, `fstatfs` and `fadvise64`: what a file system is and how much
//! room it has (GNU `ls`, `df`, `stat -f`), and advice about file access.
//!
//! A file on the disk (`/data`, or `/` with lxrt's `-r`) reports C-FFS's
//! blocks; every other file lives in the one shared arena and reports
//! its space. The type is Linux's magic number for what the directory
//! stands for: `/proc` procfs, `/sys` sysfs, pipes pipefs, sockets
//! sockfs, epoll/eventfd/timerfd anon_inodefs, the rest of memory tmpfs;
//! the disk's, which Linux has no number for, `CFFS_MAGIC`.

use super::file::{base, AT_FDCWD};
use crate::errno::{EINVAL, ESPIPE};
use crate::fs::{dir, path, Ino};
use crate::obj::Kind;
use crate::{fd, uaccess};

const TMPFS_MAGIC: u64 = 0x0102_1994;
const PROC_SUPER_MAGIC: u64 = 0x9fa0;
const SYSFS_MAGIC: u64 = 0x6265_6572;
const PIPEFS_MAGIC: u64 = 0x5049_5045;
const SOCKFS_MAGIC: u64 = 0x534f_434b;
const ANON_INODE_FS_MAGIC: u64 = 0x0904_1934;
/// C-FFS's type: its name's bytes, "CFFS".
const CFFS_MAGIC: u64 = 0x4346_4653;
/// `ST_VALID`: `f_flags` is filled in.
const ST_VALID: u64 = 0x20;

/// The magic number of the file system `ino` is in.
fn magic_of(ino: Ino) -> u64 {
    let n = crate::fs::node::get(ino);
    if n.disk != 0 {
        return CFFS_MAGIC;
    }
    match n.fs {
        crate::fs::node::FS_PROC => PROC_SUPER_MAGIC,
        crate::fs::node::FS_SYS => SYSFS_MAGIC,
        _ => TMPFS_MAGIC,
    }
}

/// Linux's `struct statfs` for a file system of type `magic`.
fn put(buf: u64, magic: u64) -> crate::errno::LxResult {
    const BLOCK: u64 = 4096;
    let (blocks, free, avail) = match magic {
        CFFS_MAGIC => {
            let (blocks, free) = crate::fs::disk::space()?;
            (blocks, free, free)
        }
        // The pseudo file systems hold no blocks (`df` leaves them out).
        PROC_SUPER_MAGIC | SYSFS_MAGIC => (0, 0, 0),
        _ => {
            let (size, in_use) = crate::shared::usage();
            let free = size.saturating_sub(in_use) as u64;
            let avail = free.saturating_sub(crate::shared::reserve() as u64);
            (size as u64 / BLOCK, free / BLOCK, avail / BLOCK)
        }
    };
    let mut s = [0u64; 15];
    s[0] = magic;
    s[1] = BLOCK;
    (s[2], s[3], s[4]) = (blocks, free, avail);
    s[8] = dir::NAME_MAX as u64;
    s[9] = BLOCK;
    s[10] = ST_VALID;
    uaccess::put(buf, s)
}

pub fn statfs(pathp: u64, buf: u64) -> crate::errno::LxResult {
    let p = uaccess::path(pathp)?;
    uaccess::writable(buf, 120)?;
    let ino = path::resolve(base(AT_FDCWD, p)?, p, true)?;
    put(buf, magic_of(ino))
}

pub fn fstatfs(fdn: i64, buf: u64) -> crate::errno::LxResult {
    let d = fd::get_raw(fdn)?;
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&d) };
    let magic = match f.kind {
        Kind::PipeRead | Kind::PipeWrite => PIPEFS_MAGIC,
        Kind::Socket | Kind::Inet | Kind::Netlink => SOCKFS_MAGIC,
        Kind::Epoll | Kind::EventFd | Kind::TimerFd | Kind::SignalFd | Kind::Inotify | Kind::PidFd => {
            ANON_INODE_FS_MAGIC
        }
        Kind::Regular | Kind::Dir | Kind::Path | Kind::PtyMaster | Kind::PtySlave => magic_of(f.ino),
        Kind::Console | Kind::Null | Kind::Zero | Kind::Full | Kind::Random => TMPFS_MAGIC,
    };
    put(buf, magic)
}

/// `fadvise64(fd, offset, len, advice)`: lxrt keeps no page cache, so
/// every valid piece of advice is taken and changes nothing.
pub fn fadvise64(fdn: i64, _offset: i64, len: i64, advice: u64) -> crate::errno::LxResult {
    let d = fd::get(fdn)?;
    // SAFETY: as above.
    let kind = unsafe { fd::file(&d) }.kind;
    if matches!(kind, Kind::PipeRead | Kind::PipeWrite) {
        return Err(ESPIPE);
    }
    // POSIX_FADV_NORMAL..POSIX_FADV_NOREUSE (0..=5).
    if advice > 5 || len < 0 {
        return Err(EINVAL);
    }
    Ok(0)
}
