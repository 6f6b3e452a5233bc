//! `copy_file_range(fd_in, off_in, fd_out, off_out, len, flags)`: copies
//! between two regular files without the program's buffer. A null offset
//! pointer means the file's own offset (it moves); a given one is read,
//! used and written back advanced, the file's offset left alone. Linux's
//! checks, in its order: EBADF for either descriptor, EFAULT for an
//! offset, EINVAL for flags, EISDIR for a directory, EINVAL for anything
//! but regular files, EBADF for an input not open for reading or an
//! output not open for writing or open with `O_APPEND`, EOVERFLOW for a
//! negative offset, EINVAL for overlapping ranges of one file.

use crate::errno::{LxResult, EBADF, EINVAL, EISDIR, EOVERFLOW};
use crate::fs::node;
use crate::obj::{flags, Kind};
use crate::{fd, uaccess};
use alloc::vec;

/// The most copied per round through lxrt's buffer.
const CHUNK: usize = 64 * 1024;

pub fn copy_file_range(
    fd_in: i64,
    off_in: u64,
    fd_out: i64,
    off_out: u64,
    len: u64,
    cflags: u64,
) -> LxResult {
    let (din, dout) = (fd::get(fd_in)?, fd::get(fd_out)?);
    let given = |p: u64| if p != 0 { uaccess::get::<i64>(p).map(Some) } else { Ok(None) };
    let (pin, pout) = (given(off_in)?, given(off_out)?);
    if cflags != 0 {
        return Err(EINVAL);
    }
    // SAFETY: the descriptors keep the files live; both may name one
    // description, so each reference is taken only while it is used.
    let (kin, fin, ino_in, at_in) = unsafe {
        let f = fd::file(&din);
        (f.kind, f.flags, f.ino, f.off)
    };
    // SAFETY: as above.
    let (kout, fout, ino_out, at_out) = unsafe {
        let f = fd::file(&dout);
        (f.kind, f.flags, f.ino, f.off)
    };
    if kin == Kind::Dir || kout == Kind::Dir {
        return Err(EISDIR);
    }
    if kin != Kind::Regular || kout != Kind::Regular {
        return Err(EINVAL);
    }
    if fin & flags::ACCMODE == flags::WRONLY
        || fout & flags::ACCMODE == flags::RDONLY
        || fout & flags::APPEND != 0
    {
        return Err(EBADF);
    }
    let from = pin.unwrap_or(at_in as i64);
    let to = pout.unwrap_or(at_out as i64);
    if from < 0 || to < 0 {
        return Err(EOVERFLOW);
    }
    let (from, to) = (from as u64, to as u64);
    let size = node::get(ino_in).size;
    let len = len.min(size.saturating_sub(from));
    if ino_in == ino_out && to < from + len && from < to + len {
        return Err(EINVAL);
    }
    let mut buf = vec![0u8; (len as usize).min(CHUNK)];
    let mut done = 0u64;
    while done < len {
        let want = ((len - done) as usize).min(CHUNK);
        let got = {
            // SAFETY: as above.
            let f = unsafe { fd::file(&din) };
            let saved = f.off;
            f.off = from + done;
            let r = (din.ops.read)(f, &mut buf[..want]);
            f.off = saved;
            r
        };
        let got = match got {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        };
        let put = {
            // SAFETY: as above.
            let f = unsafe { fd::file(&dout) };
            let saved = f.off;
            f.off = to + done;
            let r = (dout.ops.write)(f, &buf[..got]);
            f.off = saved;
            r
        };
        match put {
            Ok(n) => done += n as u64,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        }
    }
    // The offsets move by what was copied: the pointers' or the files'.
    match pin {
        Some(_) => uaccess::put(off_in, (from + done) as i64).map(drop)?,
        // SAFETY: as above.
        None => unsafe { fd::file(&din) }.off = from + done,
    }
    match pout {
        Some(_) => uaccess::put(off_out, (to + done) as i64).map(drop)?,
        // SAFETY: as above.
        None => unsafe { fd::file(&dout) }.off = to + done,
    }
    Ok(done as i64)
}
