//! Files and directories of the in-memory file system as open files.

use super::{bad_whence, flags, no_ioctl, File, Kind, Ops};
use crate::errno::{EBADF, EINVAL, EISDIR, ENXIO};
use crate::fs::node;
use crate::fs::Stat;

pub static OPS: Ops = Ops { read, write, seek, stat, ioctl, close };

/// `FIONREAD` on a file: the bytes from the offset to the end.
fn ioctl(f: &mut File, req: u64, arg: u64) -> i64 {
    if req != super::FIONREAD || f.kind == Kind::Dir {
        return no_ioctl(f, req, arg);
    }
    super::put_readable(arg, node::get(f.ino).size.saturating_sub(f.off))
}

fn read(f: &mut File, buf: &mut [u8]) -> i64 {
    if f.kind == Kind::Dir {
        return -EISDIR;
    }
    if f.flags & flags::ACCMODE == flags::WRONLY {
        return -EBADF;
    }
    let n = node::read_at(&node::get(f.ino), f.off, buf);
    f.off += n as u64;
    if n > 0 {
        super::inotify::changed(f.ino, super::inotify::IN_ACCESS);
    }
    n as i64
}

fn write(f: &mut File, buf: &[u8]) -> i64 {
    if f.kind == Kind::Dir || f.flags & flags::ACCMODE == flags::RDONLY {
        return -EBADF;
    }
    let append = f.flags & flags::APPEND != 0;
    let written = node::update(f.ino, |n| {
        if append {
            f.off = n.size;
        }
        node::write_at(n, f.off, buf)
    });
    match written {
        Ok(k) => {
            f.off += k as u64;
            super::inotify::changed(f.ino, super::inotify::IN_MODIFY);
            k as i64
        }
        Err(e) => -e,
    }
}

/// `SEEK_DATA` and `SEEK_HOLE`: a file here has no holes, so its data is
/// everything before the end and the one hole is the end itself.
const SEEK_DATA: u32 = 3;
const SEEK_HOLE: u32 = 4;

fn seek(f: &mut File, off: i64, whence: u32) -> i64 {
    let size = node::get(f.ino).size as i64;
    let base = match whence {
        0 => 0,
        1 => f.off as i64,
        2 => size,
        SEEK_DATA | SEEK_HOLE if f.kind == Kind::Regular => {
            if off < 0 || off >= size {
                return -ENXIO;
            }
            f.off = if whence == SEEK_DATA { off } else { size } as u64;
            return f.off as i64;
        }
        _ => return bad_whence(),
    };
    // No offset past the largest file there can be (as Linux's maxbytes).
    match base.checked_add(off) {
        Some(n) if n >= 0 && n as u64 <= crate::layout::SHARED_MAX => {
            f.off = n as u64;
            n
        }
        _ => -EINVAL,
    }
}

fn stat(f: &File, st: &mut Stat) -> i64 {
    *st = crate::fs::stat::of(f.ino);
    0
}

fn close(f: &mut File) {
    let wrote = f.kind == Kind::Regular && f.flags & flags::ACCMODE != flags::RDONLY;
    let closed = if wrote { super::inotify::IN_CLOSE_WRITE } else { super::inotify::IN_CLOSE_NOWRITE };
    super::inotify::changed(f.ino, closed);
    // A file under `/data` is on the disk once closed (an error here has
    // nobody to go to: `fsync` first to see it).
    let _ = crate::fs::disk::write_back(f.ino, false);
    node::update(f.ino, |n| n.opens -= 1);
    node::release(f.ino);
}
