//! Files and directories of the in-memory file system as open files.

use super::{flags, no_ioctl, File, Kind, Ops};
use crate::errno::Errno;
use crate::errno::{EBADF, EINVAL, EISDIR, ENXIO};
use crate::fs::node;
use crate::fs::Stat;

pub static OPS: Ops = Ops { read, write, seek, stat, ioctl, close };

/// `FIONREAD` on a file: the bytes from the offset to the end.
fn ioctl(f: &mut File, req: u64, arg: u64) -> Result<usize, Errno> {
    if req != super::FIONREAD || f.kind == Kind::Dir {
        return no_ioctl(f, req, arg);
    }
    super::put_readable(arg, node::get(f.ino).size.saturating_sub(f.off))
}

fn read(f: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    if f.kind == Kind::Dir {
        return Err(EISDIR);
    }
    if f.flags & flags::ACCMODE == flags::WRONLY {
        return Err(EBADF);
    }
    let n = crate::fs::content::read(f.ino, f.off, buf)?;
    f.off += n as u64;
    if n > 0 {
        super::inotify::changed(f.ino, super::inotify::IN_ACCESS);
    }
    Ok(n)
}

fn write(f: &mut File, buf: &[u8]) -> Result<usize, Errno> {
    if f.kind == Kind::Dir || f.flags & flags::ACCMODE == flags::RDONLY {
        return Err(EBADF);
    }
    let n = node::get(f.ino);
    if f.flags & flags::APPEND != 0 {
        f.off = n.size;
    }
    let on_disk = n.disk != 0;
    let k = crate::fs::content::write(f.ino, f.off, buf)?;
    f.off += k as u64;
    super::inotify::changed(f.ino, super::inotify::IN_MODIFY);
    if on_disk {
        use crate::fs::disk::{self, Durable};
        // `O_SYNC`, `O_DSYNC`: durable before the call returns; else the
        // periodic write-back's clock runs (a file held open is written
        // back with everything else).
        match f.flags & (flags::SYNC | flags::DSYNC) {
            0 => disk::changed(),
            flags::DSYNC => disk::write_back(f.ino, Durable::Data)?,
            _ => disk::write_back(f.ino, Durable::All)?,
        }
    }
    Ok(k)
}

/// `SEEK_DATA` and `SEEK_HOLE`: a file in the arena has no holes, so its
/// data is everything before the end and the one hole is the end itself;
/// a `/data` file's holes are C-FFS's (blocks no extent maps).
const SEEK_DATA: u32 = 3;
const SEEK_HOLE: u32 = 4;

fn seek(f: &mut File, off: i64, whence: u32) -> Result<u64, Errno> {
    let n = node::get(f.ino);
    let size = n.size as i64;
    let base = match whence {
        0 => 0,
        1 => f.off as i64,
        2 => size,
        SEEK_DATA | SEEK_HOLE if f.kind == Kind::Regular => {
            if off < 0 || off >= size {
                return Err(ENXIO);
            }
            f.off = match crate::fs::disk::direct(&n) {
                true => crate::fs::disk::seek(f.ino, off as u64, whence == SEEK_HOLE)?,
                false => (if whence == SEEK_DATA { off } else { size }) as u64,
            };
            return Ok(f.off);
        }
        _ => return Err(EINVAL),
    };
    // No offset past the largest file there can be (as Linux's maxbytes):
    // the arena's, or C-FFS's for a file under `/data`.
    let max = if n.disk != 0 { cffs::MAX_FILE } else { crate::layout::SHARED_MAX };
    match base.checked_add(off) {
        Some(n) if n >= 0 && n as u64 <= max => {
            f.off = n as u64;
            Ok(f.off)
        }
        _ => Err(EINVAL),
    }
}

fn stat(f: &File, st: &mut Stat) -> Result<(), Errno> {
    *st = crate::fs::stat::of(f.ino);
    Ok(())
}

fn close(f: &mut File) {
    super::dnotify::closed(f);
    let wrote = f.kind == Kind::Regular && f.flags & flags::ACCMODE != flags::RDONLY;
    let closed = if wrote { super::inotify::IN_CLOSE_WRITE } else { super::inotify::IN_CLOSE_NOWRITE };
    super::inotify::changed(f.ino, closed);
    // A file under `/data` goes to XN's cache once closed, and to the disk
    // at the next `sync` or periodic write-back (an error here has nobody
    // to go to: `fsync` first to see it).
    // A copy made for a mapping or a program goes once nobody uses it.
    let _ = crate::fs::disk::write_back(f.ino, crate::fs::disk::Durable::No);
    node::update(f.ino, |n| n.opens -= 1);
    crate::fs::disk::uncopy(f.ino);
    node::release(f.ino);
}
