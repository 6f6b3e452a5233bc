//! Named pipes (FIFOs): an `S_IFIFO` inode whose `data` points at the
//! ring its open ends share (borrowed: the inode never frees it), made on
//! the first open and dropped, with whatever it still held, when the last
//! end closes, as on Linux. Opening follows Linux: a reader waits for a
//! writer and a writer for a reader (each until the other side has opened
//! once since it started waiting); `O_NONBLOCK` readers never wait and
//! `O_NONBLOCK` writers without a reader fail with ENXIO; `O_RDWR` never
//! waits and holds both sides. The opener's waiting is its caller's
//! (`io::open_fifo`): `open` says what to wait for, `other_side` when
//! it has come.

use super::flags::{ACCMODE, NONBLOCK, RDWR, WRONLY};
use super::pipe::{self, Pipe};
use super::{File, Kind};
use crate::errno::Errno;
use crate::errno::{EINVAL, ENXIO};
use crate::fs::{node, Ino};
use crate::obj::Handle;

/// How often an opener waiting for the other side looks again (it sleeps
/// in between; no ring term says "an end was opened").
pub const RECHECK_NS: u64 = 5_000_000;

/// Opens FIFO `ino` with status flags `status` (access mode, nonblock):
/// the new end, and, when the opener must wait for the other side, how
/// many of its ends had been opened (`other_side` compares).
pub fn open(ino: Ino, status: u32) -> Result<(Handle<File>, Option<u64>), Errno> {
    let acc = status & ACCMODE;
    if acc == ACCMODE {
        return Err(EINVAL);
    }
    let ring = node::get(ino).data as *mut Pipe;
    let readers = |r: *mut Pipe| {
        if r.is_null() {
            return 0;
        }
        // SAFETY: a ring the inode names is live while it does.
        unsafe { pipe::ends(r) }.0
    };
    if acc == WRONLY && status & NONBLOCK != 0 && readers(ring) == 0 {
        return Err(ENXIO);
    }
    let made = ring.is_null();
    let ring = if made {
        pipe::ring()?
    } else {
        // SAFETY: a ring the inode names is live while it does.
        unsafe { Handle::from_raw(ring) }
    };
    let kind = if acc == WRONLY { Kind::PipeWrite } else { Kind::PipeRead };
    let f = match pipe::open_end(ring, kind, status, ino) {
        Ok(f) => f,
        Err(e) => {
            if made {
                // SAFETY: made above; nothing refers to it.
                unsafe { ring.free() };
            }
            return Err(e);
        }
    };
    node::update(ino, |n| {
        n.opens += 1;
        n.data = ring.as_ptr() as *mut u8;
        n.borrowed = true;
    });
    if acc == RDWR || status & NONBLOCK != 0 {
        return Ok((f, None));
    }
    // SAFETY: just made; no other reference to it here.
    Ok((f, Some(other(unsafe { f.get() }).1)))
}

/// FIFO end `f`'s other side: its open count now, and its ends ever opened.
fn other(f: &File) -> (u32, u64) {
    let reads = f.kind == Kind::PipeRead && f.flags & ACCMODE != RDWR;
    // SAFETY: `f` is a live FIFO end; it keeps the ring live.
    let (readers, writers, opened) = unsafe { pipe::ends(f.object::<Pipe>().as_ptr()) };
    if reads {
        (writers, opened[1])
    } else {
        (readers, opened[0])
    }
}

/// Whether the other side of FIFO end `f` is open, or has been opened
/// since `open` counted `start` of its ends.
pub fn other_side(f: &File, start: u64) -> bool {
    let (open_now, opened) = other(f);
    open_now > 0 || opened != start
}
