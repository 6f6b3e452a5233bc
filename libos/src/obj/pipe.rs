//! Pipes as rings in shared memory (paper 000 §5.2.1, paper 001 §5.1).
//! A reader of an empty ring or a writer to a full one yields and looks
//! again (a directed yield to the other side comes with the exokernel-CPU
//! work). A write with no reader left raises SIGPIPE, or fails with EPIPE
//! when the program ignores it, as on Linux.

use super::{no_ioctl, no_seek, File, Kind, Ops};
use crate::errno::{EAGAIN, EBADF, ENOMEM, EPIPE};
use crate::linux::stat::Stat;
use crate::shared;

pub const CAPACITY: usize = 65536;
/// Writes up to this size are never interleaved with others (POSIX).
const PIPE_BUF: usize = 4096;
const O_NONBLOCK: u32 = 0o4000;

#[repr(C)]
pub struct Pipe {
    pub readers: u32,
    pub writers: u32,
    /// Total bytes ever written / read; their difference is the fill.
    head: u64,
    tail: u64,
    id: u64,
    buf: [u8; CAPACITY],
}

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat, ioctl: no_ioctl, close };

/// A new pipe: (read end, write end).
pub fn create(flags: u32) -> Result<(*mut File, *mut File), i64> {
    let p = shared::alloc(size_of::<Pipe>(), 8) as *mut Pipe;
    if p.is_null() {
        return Err(ENOMEM);
    }
    // SAFETY: a fresh block big enough; the id (its address) only labels
    // fstat output.
    unsafe {
        let id = p as u64;
        (*p).readers = 1;
        (*p).writers = 1;
        (*p).head = 0;
        (*p).tail = 0;
        (*p).id = id;
    }
    let r = super::new(Kind::PipeRead, flags & O_NONBLOCK, 0)?;
    let w = super::new(Kind::PipeWrite, (flags & O_NONBLOCK) | 1, 0)?;
    // SAFETY: both were just created.
    unsafe {
        (*r).pipe = p;
        (*w).pipe = p;
    }
    Ok((r, w))
}

fn pipe_of(f: &File) -> &'static mut Pipe {
    // SAFETY: a pipe end's `pipe` stays valid while any end is open.
    unsafe { &mut *f.pipe }
}

fn read(f: &mut File, buf: &mut [u8]) -> i64 {
    if f.kind != Kind::PipeRead {
        return -EBADF;
    }
    let p = pipe_of(f);
    loop {
        let fill = (p.head - p.tail) as usize;
        if fill > 0 {
            let n = fill.min(buf.len());
            for (i, b) in buf[..n].iter_mut().enumerate() {
                *b = p.buf[(p.tail as usize + i) % CAPACITY];
            }
            p.tail += n as u64;
            return n as i64;
        }
        if p.writers == 0 {
            return 0;
        }
        if f.flags & O_NONBLOCK != 0 {
            return -EAGAIN;
        }
        crate::lock::wait();
    }
}

fn write(f: &mut File, buf: &[u8]) -> i64 {
    if f.kind != Kind::PipeWrite {
        return -EBADF;
    }
    let p = pipe_of(f);
    let mut done = 0;
    while done < buf.len() {
        if p.readers == 0 {
            crate::proc::signal::raise_self(crate::proc::signal::SIGPIPE);
            return if done > 0 { done as i64 } else { -EPIPE };
        }
        let room = CAPACITY - (p.head - p.tail) as usize;
        let want = buf.len() - done;
        // Small writes go in whole or wait; big ones may go in pieces.
        if room > 0 && (want > PIPE_BUF || room >= want) {
            let n = room.min(want);
            for i in 0..n {
                p.buf[(p.head as usize + i) % CAPACITY] = buf[done + i];
            }
            p.head += n as u64;
            done += n;
            continue;
        }
        if f.flags & O_NONBLOCK != 0 {
            return if done > 0 { done as i64 } else { -EAGAIN };
        }
        crate::lock::wait();
    }
    done as i64
}

fn stat(f: &File, st: &mut Stat) -> i64 {
    st.mode = crate::fs::S_IFIFO | 0o600;
    st.ino = pipe_of(f).id;
    st.blksize = 4096;
    0
}

fn close(f: &mut File) {
    let p = pipe_of(f);
    match f.kind {
        Kind::PipeRead => p.readers -= 1,
        _ => p.writers -= 1,
    }
    if p.readers == 0 && p.writers == 0 {
        // SAFETY: allocated by `create`; no end refers to it any more.
        unsafe { shared::free(f.pipe as *mut u8, size_of::<Pipe>(), 8) };
    }
}
