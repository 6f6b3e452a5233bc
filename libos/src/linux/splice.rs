//! `splice` and `tee`: moving bytes into or out of a pipe without the
//! program's buffer (they pass through one of lxrt's, `CHUNK` at a time).
//! Nothing is lost when the far side fails: a pipe's bytes are looked at
//! first (`pipe::peek`) and taken only once written, and a pipe is filled
//! only with what it has room for. `splice` needs a pipe on at least one
//! side (EINVAL otherwise); `tee` copies from one pipe into another,
//! leaving the bytes in the first. `SPLICE_F_NONBLOCK` makes the pipes'
//! waits fail with EAGAIN; `SPLICE_F_MOVE`, `SPLICE_F_MORE` and
//! `SPLICE_F_GIFT` change nothing. Linux's checks, in its order.

use crate::errno::Errno;
use crate::errno::{LxResult, EBADF, EINVAL, ESPIPE};
use crate::fd::{self, Fd};
use crate::obj::{flags, pipe, Kind};
use crate::uaccess;
use alloc::vec;

const SPLICE_F_MOVE: u64 = 1;
const SPLICE_F_NONBLOCK: u64 = 2;
const SPLICE_F_MORE: u64 = 4;
const SPLICE_F_GIFT: u64 = 8;
const KNOWN: u64 = SPLICE_F_MOVE | SPLICE_F_NONBLOCK | SPLICE_F_MORE | SPLICE_F_GIFT;

/// The most moved per call.
const CHUNK: usize = 64 * 1024;

fn is_pipe(d: &Fd) -> bool {
    // SAFETY: the descriptor keeps the file live; read only.
    matches!(unsafe { fd::file(d) }.kind, Kind::PipeRead | Kind::PipeWrite)
}

fn access(d: &Fd) -> u32 {
    // SAFETY: as above.
    unsafe { fd::file(d) }.flags & flags::ACCMODE
}

pub fn splice(fd_in: i64, off_in: u64, fd_out: i64, off_out: u64, len: u64, sflags: u64) -> LxResult {
    if sflags & !KNOWN != 0 {
        return Err(EINVAL);
    }
    let (din, dout) = (fd::get(fd_in)?, fd::get(fd_out)?);
    if access(&din) == flags::WRONLY || access(&dout) == flags::RDONLY {
        return Err(EBADF);
    }
    let nonblock = sflags & SPLICE_F_NONBLOCK != 0;
    match (is_pipe(&din), is_pipe(&dout)) {
        (true, true) => {
            if off_in != 0 || off_out != 0 {
                return Err(ESPIPE);
            }
            // SAFETY: as above.
            if unsafe { fd::file(&din).obj == fd::file(&dout).obj } {
                return Err(EINVAL);
            }
            from_pipe(&din, &dout, None, len, nonblock, true)
        }
        (true, false) => {
            if off_in != 0 {
                return Err(ESPIPE);
            }
            let at = offset(&dout, off_out)?;
            // SAFETY: as above.
            if unsafe { fd::file(&dout) }.flags & flags::APPEND != 0 {
                return Err(EINVAL);
            }
            let r = from_pipe(&din, &dout, at, len, nonblock, true)?;
            if let Some(at) = at {
                uaccess::put(off_out, at + r)?;
            }
            Ok(r)
        }
        (false, true) => {
            if off_out != 0 {
                return Err(ESPIPE);
            }
            let at = offset(&din, off_in)?;
            let r = into_pipe(&din, &dout, at, len, nonblock)?;
            if let Some(at) = at {
                uaccess::put(off_in, at + r)?;
            }
            Ok(r)
        }
        (false, false) => Err(EINVAL),
    }
}

pub fn tee(fd_in: i64, fd_out: i64, len: u64, sflags: u64) -> LxResult {
    if sflags & !KNOWN != 0 {
        return Err(EINVAL);
    }
    let (din, dout) = (fd::get(fd_in)?, fd::get(fd_out)?);
    if access(&din) == flags::WRONLY || access(&dout) == flags::RDONLY {
        return Err(EBADF);
    }
    // SAFETY: as above.
    let (fin, fout) = unsafe { (fd::file(&din), fd::file(&dout)) };
    if fin.kind != Kind::PipeRead || fout.kind != Kind::PipeWrite || fin.obj == fout.obj {
        return Err(EINVAL);
    }
    from_pipe(&din, &dout, None, len, sflags & SPLICE_F_NONBLOCK != 0, false)
}

/// A file-side offset pointer's value: ESPIPE where the file has no
/// position, EFAULT, EINVAL when negative.
fn offset(d: &Fd, ptr: u64) -> Result<Option<i64>, Errno> {
    if ptr == 0 {
        return Ok(None);
    }
    // SAFETY: as above.
    if unsafe { fd::file(d) }.kind != Kind::Regular {
        return Err(ESPIPE);
    }
    let at: i64 = uaccess::get(ptr)?;
    if at < 0 {
        return Err(EINVAL);
    }
    Ok(Some(at))
}

/// Runs `f` on `d`'s description with its offset at `at` (the offset is
/// put back after), or at its own offset when `at` is None.
fn at_offset<R>(d: &Fd, at: Option<i64>, f: impl FnOnce(&mut crate::obj::File) -> R) -> R {
    // SAFETY: as above; the only reference while `f` runs.
    let file = unsafe { fd::file(d) };
    let Some(at) = at else { return f(file) };
    let saved = file.off;
    file.off = at as u64;
    let r = f(file);
    file.off = saved;
    r
}

/// From pipe `din` to `dout` (at `at`): waits for bytes as a read would,
/// looks at up to `len`, writes them, then takes what was written
/// (`take`; `tee` leaves them).
fn from_pipe(din: &Fd, dout: &Fd, at: Option<i64>, len: u64, nonblock: bool, take: bool) -> LxResult {
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: as above.
    if !crate::io::pipe_readable(unsafe { fd::file(din) }, nonblock)? {
        return Ok(0);
    }
    let mut buf = vec![0u8; (len as usize).min(CHUNK)];
    // SAFETY: as above.
    let mut n = pipe::peek(unsafe { fd::file(din) }, &mut buf);
    if is_pipe(dout) {
        // Only what fits now, so the write cannot wait or split.
        // SAFETY: as above.
        let fout = unsafe { fd::file(dout) };
        if pipe::room(fout) == 0 {
            crate::io::pipe_writable(fout, nonblock)?;
        }
        // SAFETY: as above.
        n = n.min(pipe::room(unsafe { fd::file(dout) }));
    }
    let put = at_offset(dout, at, |f| crate::io::write_file(dout.ops, f, &buf[..n]))?;
    if take {
        // The bytes are in the ring: this read takes them without waiting.
        // SAFETY: as above.
        (din.ops.read)(unsafe { fd::file(din) }, &mut buf[..put])?;
    }
    Ok(put as i64)
}

/// From `din` (at `at`) into pipe `dout`: waits for room as a write
/// would, then reads no more than fits.
fn into_pipe(din: &Fd, dout: &Fd, at: Option<i64>, len: u64, nonblock: bool) -> LxResult {
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: as above.
    let fout = unsafe { fd::file(dout) };
    crate::io::pipe_writable(fout, nonblock)?;
    // SAFETY: as above.
    let room = pipe::room(unsafe { fd::file(dout) });
    let mut buf = vec![0u8; (len as usize).min(CHUNK).min(room)];
    let got = at_offset(din, at, |f| crate::io::read_file(din.ops, f, &mut buf))?;
    // SAFETY: as above.
    (dout.ops.write)(unsafe { fd::file(dout) }, &buf[..got])?;
    Ok(got as i64)
}
