//! `fallocate` and `ftruncate`/`fsync`'s descriptor checks: space for a
//! regular file's bytes, as tmpfs gives it (the modes `0`,
//! `FALLOC_FL_KEEP_SIZE` and `FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE`),
//! with Linux's errors in Linux's order (`vfs_fallocate`).

use crate::errno::{LxResult, EBADF, EFBIG, EINVAL, EISDIR, ENODEV, EOPNOTSUPP, ESPIPE};
use crate::fd;
use crate::fs::{content, node};
use crate::obj::{flags, Kind};

const FALLOC_FL_KEEP_SIZE: u64 = 1;
const FALLOC_FL_PUNCH_HOLE: u64 = 2;
/// Every mode bit Linux knows (collapse, zero, insert, unshare ranges):
/// known but not supported here, as by tmpfs.
const FALLOC_FL_KNOWN: u64 = 0x7f;

static ZEROS: [u8; 4096] = [0; 4096];

pub fn fallocate(fdn: i64, mode: u64, off: u64, len: u64) -> LxResult {
    let d = fd::get(fdn)?;
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&d) };
    let (off, len) = (off as i64, len as i64);
    if off < 0 || len <= 0 {
        return Err(EINVAL);
    }
    if mode & !FALLOC_FL_KNOWN != 0 || mode & FALLOC_FL_PUNCH_HOLE != 0 && mode & FALLOC_FL_KEEP_SIZE == 0 {
        return Err(EOPNOTSUPP);
    }
    if f.flags & flags::ACCMODE == flags::RDONLY {
        return Err(EBADF);
    }
    match f.kind {
        Kind::PipeRead | Kind::PipeWrite => return Err(ESPIPE),
        Kind::Dir => return Err(EISDIR),
        Kind::Regular => {}
        _ => return Err(ENODEV),
    }
    let end = off.checked_add(len).ok_or(EFBIG)? as u64;
    if mode & !(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE) != 0 {
        return Err(EOPNOTSUPP);
    }
    let n = node::get(f.ino);
    if mode & FALLOC_FL_PUNCH_HOLE != 0 {
        // The range reads as zeros; the size stays.
        let (mut at, to) = (off as u64, end.min(n.size));
        while at < to {
            let k = (to - at).min(ZEROS.len() as u64);
            content::write(f.ino, at, &ZEROS[..k as usize])?;
            at += k;
        }
        Ok(0)
    } else if mode & FALLOC_FL_KEEP_SIZE == 0 && end > n.size {
        content::truncate(f.ino, end).map(|_| 0)
    } else if crate::fs::disk::direct(&n) {
        // C-FFS allocates at the write; nothing is reserved ahead.
        Ok(0)
    } else {
        // Room past the end is not reserved ahead: nothing to do.
        node::update(f.ino, |n| node::reserve(n, n.size)).map(|_| 0)
    }
}

/// `fsync`, `fdatasync` (`data_only`): a file under `/data` is written to
/// the disk and made durable (`fs::disk`); a directory there makes
/// everything durable (its names); files in memory have nothing to write
/// back. Linux's answer for the descriptor: EBADF for none, EINVAL for a
/// kind with no backing store to sync (pipes, sockets, devices, event
/// objects).
pub fn fsync(fdn: i64, data_only: bool) -> LxResult {
    use crate::fs::disk::{self, Durable};
    let d = fd::get(fdn)?;
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&d) };
    match f.kind {
        Kind::Regular => {
            disk::write_back(f.ino, if data_only { Durable::Data } else { Durable::All }).map(|_| 0)
        }
        Kind::Dir if crate::fs::node::get(f.ino).disk != 0 => crate::fs::disk::sync().map(|_| 0),
        Kind::Dir => Ok(0),
        _ => Err(EINVAL),
    }
}

/// `syncfs`: the descriptor's file system made durable: everything under
/// `/data` (the one file system with a disk); EBADF for no descriptor.
pub fn syncfs(fdn: i64) -> LxResult {
    fd::get(fdn)?;
    crate::fs::disk::sync().map(|_| 0)
}
