//! A call's reads and writes on open files, and the other calls that may
//! have to wait for one (accept, a socket's send and receive, a FIFO's
//! open). The object answers at once: bytes, or EAGAIN when it would have
//! to wait (on a blocking file it has marked itself as waited on, so the
//! other side hands over the CPU when it has made progress), or EPIPE when
//! nobody will read. Here, the caller decides: a nonblocking file's EAGAIN
//! goes back to the program; a blocking one waits (`wait::block_on`: a
//! directed yield to the other end, then a sleep on a wakeup predicate)
//! and tries again, until a signal ends the wait with EINTR (or with what
//! a write has already done). A write to a pipe or socket without a reader
//! raises SIGPIPE here, the caller's signal, as Linux raises it in the
//! writer's context.

use crate::errno::Errno;
use crate::errno::{EAGAIN, EINTR, EPIPE};
use crate::fd::{self, Fd};
use crate::obj::flags::NONBLOCK;
use crate::obj::{self, fifo, unix, File, Handle, Kind, Ops, POLLIN, POLLOUT};
use crate::proc::{deliver, signal};
use crate::wait;
use alloc::vec::Vec;

/// Whether `f` waits when it cannot go on (not `O_NONBLOCK`).
fn blocks(f: &File) -> bool {
    f.flags & NONBLOCK == 0
}

/// Runs `op` until it answers something other than EAGAIN, waiting for
/// `events` on `f` in between; EAGAIN when `nonblock`, EINTR for a signal.
fn retry<T>(
    f: Handle<File>,
    events: u16,
    nonblock: bool,
    mut op: impl FnMut() -> Result<T, Errno>,
) -> Result<T, Errno> {
    let mut yielded = false;
    loop {
        match op() {
            Err(EAGAIN) if !nonblock => {}
            r => return r,
        }
        // A signal ends the wait; it is acted on as the call returns.
        if deliver::pending() {
            return Err(EINTR);
        }
        wait::block_on(f, events, &mut yielded);
    }
}

/// `read` of descriptor `d` into `buf` through its methods.
#[inline]
pub fn read(d: &Fd, buf: &mut [u8]) -> Result<usize, Errno> {
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    read_file(d.ops, unsafe { fd::file(d) }, buf)
}

/// `read` of open file `f` through methods `ops`. The usual answer (bytes
/// there, or the end) takes the short path; waiting, and the terminal's
/// job control, the long one.
#[inline]
pub fn read_file(ops: &Ops, f: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    if f.kind == Kind::Console {
        return read_slow(ops, f, buf, false);
    }
    match read_once(ops, f, buf) {
        Err(EAGAIN) => read_slow(ops, f, buf, true),
        r => r,
    }
}

/// One read through `ops`. A pipe with the library's own methods is called
/// directly, so the compiler can inline its read.
#[inline(always)]
fn read_once(ops: &Ops, f: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    if core::ptr::eq(ops, &obj::pipe::OPS) {
        obj::pipe::read(f, buf)
    } else {
        (ops.read)(f, buf)
    }
}

/// `read_file`'s long path; `again`: a first read has answered EAGAIN.
#[cold]
#[inline(never)]
fn read_slow(ops: &Ops, f: &mut File, buf: &mut [u8], mut again: bool) -> Result<usize, Errno> {
    if f.kind == Kind::Console {
        crate::proc::kill::await_foreground()?;
    }
    let nonblock = !blocks(f);
    let ptr = f.handle();
    // A long blocking read of an empty pipe lets the writer fill its buffer
    // directly while it waits (`obj::handover`).
    let long = !nonblock && buf.len() >= obj::handover::MIN;
    let r = retry(ptr, POLLIN, nonblock, || {
        if core::mem::take(&mut again) {
            if long {
                obj::pipe::post(f, buf);
            }
            return Err(EAGAIN);
        }
        if let Some(n) = long.then(obj::handover::close).flatten() {
            return Ok(n);
        }
        // After a wait: a sibling may have unmapped the buffer meanwhile
        // (a partial count or EFAULT, as Linux answers).
        read_once(ops, f, crate::uaccess::still_lent(&mut *buf)?)
    });
    // Bytes handed over before a signal ended the wait are the answer.
    match long.then(obj::handover::close).flatten() {
        Some(n) => Ok(n),
        None => r,
    }
}

/// `write` of `buf` to descriptor `d` through its methods: on a blocking
/// file, all of it unless a signal comes first (then what went in).
#[inline]
pub fn write(d: &Fd, buf: &[u8]) -> Result<usize, Errno> {
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    write_file(d.ops, unsafe { fd::file(d) }, buf)
}

/// One write through `ops` (a pipe's directly, as `read_once`).
#[inline(always)]
fn write_once(ops: &Ops, f: &mut File, buf: &[u8]) -> Result<usize, Errno> {
    if core::ptr::eq(ops, &obj::pipe::OPS) {
        obj::pipe::write(f, buf)
    } else {
        (ops.write)(f, buf)
    }
}

/// `write` to open file `f` through methods `ops`: all of it at once is
/// the short path.
#[inline]
pub fn write_file(ops: &Ops, f: &mut File, buf: &[u8]) -> Result<usize, Errno> {
    let r = write_once(ops, f, buf);
    if r == Ok(buf.len()) {
        return r;
    }
    write_slow(ops, f, buf, r)
}

/// `write_file`'s long path: the rest after a first answer `first`.
#[cold]
#[inline(never)]
fn write_slow(ops: &Ops, f: &mut File, buf: &[u8], first: Result<usize, Errno>) -> Result<usize, Errno> {
    let ptr = f.handle();
    let mut done = 0;
    let mut r = first;
    let mut yielded = false;
    loop {
        match r {
            Ok(n) => {
                done += n;
                if done == buf.len() || n == 0 {
                    return Ok(done);
                }
                r = write_once(ops, f, &buf[done..]);
                continue;
            }
            Err(EAGAIN) if blocks(f) => {}
            Err(e) => {
                if e == EPIPE
                    && matches!(f.kind, Kind::PipeWrite | Kind::PipeRead | Kind::Socket | Kind::Inet)
                {
                    deliver::raise_self(signal::SIGPIPE);
                }
                return if done > 0 { Ok(done) } else { Err(e) };
            }
        }
        if deliver::pending() {
            return if done > 0 { Ok(done) } else { Err(EINTR) };
        }
        wait::block_on(ptr, POLLOUT, &mut yielded);
        r = write_once(ops, f, &buf[done..]);
    }
}

/// Waits until pipe read end `f` holds bytes (true) or has no writer left
/// (false) (`splice`, `tee`).
pub fn pipe_readable(f: &mut File, nonblock: bool) -> Result<bool, Errno> {
    let nonblock = nonblock || !blocks(f);
    let ptr = f.handle();
    retry(ptr, POLLIN, nonblock, || obj::pipe::readable(f, nonblock))
}

/// Waits until pipe write end `f` has room; EPIPE and SIGPIPE with no
/// reader left (`splice`, `tee`).
pub fn pipe_writable(f: &mut File, nonblock: bool) -> Result<(), Errno> {
    let nonblock = nonblock || !blocks(f);
    let ptr = f.handle();
    let r = retry(ptr, POLLOUT, nonblock, || obj::pipe::writable(f, nonblock));
    if r == Err(EPIPE) {
        deliver::raise_self(signal::SIGPIPE);
    }
    r
}

/// Opens FIFO `ino`: waits for the other side as Linux does (`fifo`).
pub fn open_fifo(ino: crate::fs::Ino, status: u32) -> Result<Handle<File>, Errno> {
    let (f, start) = fifo::open(ino, status)?;
    let Some(start) = start else {
        return Ok(f);
    };
    // SAFETY: the end just opened, live until put; only read here.
    while !fifo::other_side(unsafe { f.get() }, start) {
        if deliver::pending() {
            fd::put_unheld(&obj::pipe::OPS, f);
            return Err(EINTR);
        }
        crate::sleep::pause(Some(crate::time::now_ns() + fifo::RECHECK_NS));
    }
    Ok(f)
}

/// `accept` on listening socket `f`: waits for a connection unless it is
/// nonblocking.
pub fn accept(f: &File, flags: u32) -> Result<Handle<File>, Errno> {
    let nonblock = !blocks(f);
    let ptr = f.handle();
    retry(ptr, POLLIN, nonblock, || unix::accept(f, flags))
}

/// Receives from socket `f` (`unix::recv`), waiting for data unless
/// `nonblock` or the socket is nonblocking.
pub fn recv(f: &File, buf: &mut [u8], nonblock: bool, peek: bool) -> Result<unix::Received, Errno> {
    let nonblock = nonblock || !blocks(f);
    let ptr = f.handle();
    retry(ptr, POLLIN, nonblock, || unix::recv(f, buf, nonblock, peek))
}

/// Receives a datagram from netlink socket `f` (`netlink::recv`), waiting
/// for one unless `nonblock` or the socket is nonblocking.
pub fn netlink_recv(f: &File, nonblock: bool, peek: bool) -> Result<alloc::vec::Vec<u8>, Errno> {
    let nonblock = nonblock || !blocks(f);
    retry(f.handle(), POLLIN, nonblock, || obj::netlink::recv(f, peek))
}

/// Sends `data` with descriptors `files` on socket `f` (`unix::send`):
/// a stream's bytes all, unless a signal comes first or `nonblock`; a
/// message whole. The files' references pass with the first bytes that go,
/// or are dropped. `sigpipe`: a peer that is gone raises SIGPIPE (not with
/// `MSG_NOSIGNAL`).
pub fn send(
    f: &File,
    data: &[u8],
    to: Option<crate::fs::Ino>,
    mut files: Vec<Handle<File>>,
    nonblock: bool,
    sigpipe: bool,
) -> Result<usize, Errno> {
    let nonblock = nonblock || !blocks(f);
    let ptr = f.handle();
    let mut done = 0;
    let mut yielded = false;
    let r = loop {
        match unix::send(f, &data[done..], to, &mut files, nonblock) {
            Ok(n) => {
                done += n;
                if done == data.len() || n == 0 || nonblock || unix::kind(f) != unix::STREAM {
                    break Ok(done);
                }
                continue;
            }
            Err(EAGAIN) if !nonblock => {}
            Err(e) => {
                // Linux raises it for stream and packet sockets only.
                if sigpipe && e == EPIPE && unix::kind(f) != unix::DGRAM {
                    deliver::raise_self(signal::SIGPIPE);
                }
                break if done > 0 { Ok(done) } else { Err(e) };
            }
        }
        if deliver::pending() {
            break if done > 0 { Ok(done) } else { Err(EINTR) };
        }
        wait::block_on(ptr, POLLOUT, &mut yielded);
    };
    files.iter().for_each(|&x| obj::put(obj::ops_for_file(x), x));
    r
}
