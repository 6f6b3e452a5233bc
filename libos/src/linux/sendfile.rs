//! `sendfile(out_fd, in_fd, offset, count)`: copies from a file to any
//! writable descriptor (busybox `cat`, GNU `cp`) without the program's
//! buffer. The bytes pass through a buffer of lxrt's, a chunk at a time,
//! using each description's own read and write (so pipes and sockets as
//! targets block, and honour O_NONBLOCK, as `write` does).

use crate::errno::{LxResult, EBADF, EINVAL, ESPIPE};
use crate::obj::{flags, Kind};
use crate::{fd, uaccess};
use alloc::vec;

/// The most copied per round through lxrt's buffer.
const CHUNK: usize = 64 * 1024;

pub fn sendfile(out_fd: i64, in_fd: i64, offset: u64, count: u64) -> LxResult {
    // Linux's checks, in its order.
    let pos: Option<i64> = if offset != 0 { Some(uaccess::get(offset)?) } else { None };
    let din = fd::get(in_fd)?;
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let fin = unsafe { fd::file(&din) };
    if fin.flags & flags::ACCMODE == flags::WRONLY {
        return Err(EBADF);
    }
    let seekable = fin.kind == Kind::Regular;
    if pos.is_some() && !seekable {
        return Err(ESPIPE);
    }
    if pos.is_some_and(|p| p < 0) {
        return Err(EINVAL);
    }
    let dout = fd::get(out_fd)?;
    // SAFETY: as above; `in_fd` and `out_fd` may name one description,
    // so each reference is taken only while it is used.
    let out_flags = unsafe { fd::file(&dout) }.flags;
    if out_flags & flags::ACCMODE == flags::RDONLY {
        return Err(EBADF);
    }
    if out_flags & flags::APPEND != 0 || !seekable {
        return Err(EINVAL);
    }
    let mut buf = vec![0u8; (count as usize).min(CHUNK)];
    let mut done = 0u64;
    // With an offset, the input's own position is left as it was.
    // SAFETY: as above.
    let saved = unsafe { fd::file(&din) }.off;
    let mut at = pos.map_or(saved, |p| p as u64);
    while done < count {
        let want = ((count - done) as usize).min(CHUNK);
        // SAFETY: as above.
        let fin = unsafe { fd::file(&din) };
        fin.off = at;
        let got = (din.ops.read)(fin, &mut buf[..want]);
        fin.off = if pos.is_some() { saved } else { fin.off };
        let got = match got {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        };
        // SAFETY: as above.
        let put = crate::io::write(&dout, &buf[..got]).map(|n| n as i64);
        let put = match put {
            Ok(n) => n as usize,
            Err(e) if done == 0 => {
                // Nothing was sent: the input does not move either.
                if pos.is_none() {
                    // SAFETY: as above.
                    unsafe { fd::file(&din) }.off = saved;
                }
                return Err(e);
            }
            Err(_) => 0,
        };
        done += put as u64;
        at += put as u64;
        if pos.is_none() {
            // The input moves by what was sent, not what was read.
            // SAFETY: as above.
            unsafe { fd::file(&din) }.off = at;
        }
        if put < got {
            break;
        }
    }
    if pos.is_some() {
        uaccess::put(offset, at as i64)?;
    }
    Ok(done as i64)
}
