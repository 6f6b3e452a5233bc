//! Internet sockets (TCP and UDP over IPv4): an open file whose object
//! names its socket in the network stack the lxrt processes share
//! (`net::stack`). The description lives in the arena like every open
//! file, so after fork parent and child hold the same socket and either
//! may use it; the stack closes it when the last descriptor goes.
//!
//! The stack's calls never block; here a blocking call is repeated,
//! sleeping between tries (`net::stack::sleep`), until it no longer says
//! EAGAIN, a signal comes (EINTR) or its timeout passes (`SO_RCVTIMEO`,
//! `SO_SNDTIMEO`: EAGAIN).

use super::flags::{NONBLOCK, RDWR};
use super::{no_seek, File, Kind, Ops};
use crate::errno::{EAFNOSUPPORT, EAGAIN, EINTR, ENOMEM, EPIPE};
use crate::fs::{Stat, S_IFSOCK};
use crate::net::stack::{self, Rings};
use crate::wait::{POLLERR, POLLHUP, POLLIN, POLLOUT};
use netstack::{ready, Errno, OptName, SockType, SocketId, Stack};

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat, ioctl, close };

/// The object behind an Internet socket's description.
pub struct Inet {
    pub id: usize,
    pub stream: bool,
}

/// Linux's errno for a stack error (negative, as `Ops` return).
pub fn errno(e: Errno) -> i64 {
    e.linux() as i64
}

/// Runs `f` on the stack: EAFNOSUPPORT without a network.
pub fn on_stack<R>(f: impl FnOnce(&mut Stack<Rings>) -> R) -> Result<R, i64> {
    stack::with(f).ok_or(EAFNOSUPPORT)
}

pub fn create(stream: bool, flags: u32) -> Result<*mut File, i64> {
    let ty = if stream { SockType::Stream } else { SockType::Datagram };
    let id = on_stack(|s| s.socket(ty))?;
    super::new_with(Kind::Inet, RDWR | flags, Inet { id: id.raw(), stream }).inspect_err(|_| {
        let _ = on_stack(|s| s.close(id));
    })
}

/// A socket's object.
pub fn inet(f: &File) -> &Inet {
    // SAFETY: an Internet socket's `data` is its `Inet`, live while the
    // description is.
    unsafe { &*(f.data as *const Inet) }
}

pub fn id(f: &File) -> SocketId {
    SocketId::from_raw(inet(f).id)
}

/// A socket made by `accept`, with its own description.
pub fn adopt(id: SocketId, flags: u32) -> Result<*mut File, i64> {
    super::new_with(Kind::Inet, RDWR | flags, Inet { id: id.raw(), stream: true }).inspect_err(|_| {
        let _ = on_stack(|s| s.close(id));
    })
}

/// Runs `op` until it gives something other than EAGAIN (only once if
/// `nonblock`), sleeping in between; `timeout` is the option that bounds
/// the wait (its expiry gives EAGAIN).
pub fn blocking<T>(
    f: &File,
    nonblock: bool,
    timeout: Option<OptName>,
    mut op: impl FnMut(&mut Stack<Rings>) -> Result<T, Errno>,
) -> Result<T, i64> {
    let nonblock = nonblock || f.flags & NONBLOCK != 0;
    let limit = match timeout {
        Some(name) => match on_stack(|s| s.option(id(f), name))? {
            Ok(netstack::Opt::RcvTimeo(Some(ms)) | netstack::Opt::SndTimeo(Some(ms))) => Some(ms),
            _ => None,
        },
        None => None,
    };
    let until = limit.map(|ms| crate::time::now_ns().saturating_add(ms.saturating_mul(1_000_000)));
    loop {
        match on_stack(&mut op)? {
            Err(Errno::EAGAIN) if !nonblock => {}
            r => return r.map_err(errno),
        }
        if crate::proc::signal::pending() {
            return Err(EINTR);
        }
        if until.is_some_and(|u| crate::time::now_ns() >= u) {
            return Err(EAGAIN);
        }
        stack::sleep(until);
    }
}

/// Sends `data` whole (a stream: as much as is taken before a signal or
/// the timeout ends the wait; a datagram: one message), with `to` for an
/// unconnected datagram socket. EPIPE raises SIGPIPE when `sigpipe`.
pub fn send(
    f: &File,
    data: &[u8],
    to: Option<core::net::SocketAddrV4>,
    nonblock: bool,
    sigpipe: bool,
) -> Result<usize, i64> {
    let me = id(f);
    let r = if !inet(f).stream {
        blocking(f, nonblock, Some(OptName::SndTimeo), |s| match to {
            Some(a) => s.send_to(me, data, a),
            None => s.send(me, data),
        })
    } else {
        let mut sent = 0;
        loop {
            match blocking(f, nonblock, Some(OptName::SndTimeo), |s| s.send(me, &data[sent..])) {
                Ok(n) => sent += n,
                Err(e) if sent > 0 && (e == EAGAIN || e == EINTR) => break Ok(sent),
                Err(e) => break Err(e),
            }
            if sent == data.len() || nonblock || f.flags & NONBLOCK != 0 {
                break Ok(sent);
            }
        }
    };
    if r == Err(EPIPE) && sigpipe {
        crate::proc::signal::raise_self(crate::proc::signal::SIGPIPE);
    }
    r
}

fn read(f: &mut File, buf: &mut [u8]) -> i64 {
    let me = id(f);
    match blocking(f, false, Some(OptName::RcvTimeo), |s| s.recv(me, buf, false)) {
        Ok(n) => n as i64,
        Err(e) => -e,
    }
}

fn write(f: &mut File, buf: &[u8]) -> i64 {
    match send(f, buf, None, false, true) {
        Ok(n) => n as i64,
        Err(e) => -e,
    }
}

fn stat(f: &File, st: &mut Stat) -> i64 {
    st.mode = S_IFSOCK | 0o777;
    st.ino = f.data as u64 % 1_000_000_007;
    st.blksize = 4096;
    0
}

fn ioctl(f: &mut File, req: u64, arg: u64) -> i64 {
    match req {
        super::FIONREAD => {
            let me = id(f);
            match on_stack(|s| s.readable(me)) {
                Ok(n) => super::put_readable(arg, n as u64),
                Err(e) => -e,
            }
        }
        _ => crate::net::ifreq::ioctl(req, arg),
    }
}

/// How long the last close waits for the peer to take what was sent.
const LINGER_NS: u64 = 10_000_000_000;

/// The last descriptor is gone: what was written still reaches the peer
/// (the close waits while it is sent, at most `LINGER_NS`, for nobody may
/// be left to run the stack for it), then the stack closes the socket.
fn close(f: &mut File) {
    let me = id(f);
    let until = crate::time::now_ns().saturating_add(LINGER_NS);
    while on_stack(|s| s.unsent(me)).unwrap_or(0) > 0 && crate::time::now_ns() < until {
        if crate::proc::signal::pending() {
            break;
        }
        stack::sleep(Some(until));
    }
    let _ = on_stack(|s| s.close(me));
    // SAFETY: made by `create` / `adopt`; nobody refers to it now.
    unsafe { super::free_object(f.data as *mut Inet) };
}

/// What the socket is ready for (the lock held).
pub fn events(f: &File) -> u16 {
    let me = id(f);
    let r = on_stack(|s| s.readiness(me)).ok().and_then(Result::ok).unwrap_or(ready::POLLERR);
    let mut ev = 0;
    for (from, to) in [
        (ready::POLLIN, POLLIN),
        (ready::POLLOUT, POLLOUT),
        (ready::POLLERR, POLLERR),
        (ready::POLLHUP, POLLHUP),
    ] {
        if r & from != 0 {
            ev |= to;
        }
    }
    ev | if r & ready::POLLRDHUP != 0 { POLLRDHUP } else { 0 }
}

/// `POLLRDHUP` (the peer shut its side).
pub const POLLRDHUP: u16 = 0x2000;

/// Bytes one datagram may have.
pub const MAX_DATAGRAM: usize = 65507;

pub fn no_memory() -> i64 {
    ENOMEM
}
