//! Internet sockets (TCP and UDP over IPv4, and IPv6 on loopback): an open file whose object
//! names its socket in the network stack the lxrt processes share
//! (`net::stack`). The description lives in the arena like every open
//! file, so after fork parent and child hold the same socket and either
//! may use it; the stack closes it when the last descriptor goes.
//!
//! The stack's calls never block, nor do this object's methods: a read or
//! write that would wait answers EAGAIN and the caller waits (`io` for
//! read and write, `linux::inet` for the socket calls with their timeouts).

use super::flags::RDWR;
use super::{no_seek, File, Kind, Ops};
use super::{POLLERR, POLLHUP, POLLIN, POLLOUT};
use crate::errno::Errno;
use crate::errno::{EAFNOSUPPORT, ENOMEM};
use crate::net::stack::{self, Rings};
use crate::obj::Handle;
use netstack::{ready, Errno as NetErrno, SockType, SocketId, Stack};

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat: super::socket_stat, ioctl, close };

/// The object behind an Internet socket's description.
pub struct Inet {
    pub id: usize,
    pub stream: bool,
    /// `AF_INET6` (its addresses are `sockaddr_in6`).
    pub v6: bool,
}

/// Linux's errno for a stack error.
pub fn errno(e: NetErrno) -> Errno {
    Errno::new(e.linux() as u16)
}

/// Runs `f` on the stack: EAFNOSUPPORT without a network.
pub fn on_stack<R>(f: impl FnOnce(&mut Stack<Rings>) -> R) -> Result<R, Errno> {
    stack::with(f).ok_or(EAFNOSUPPORT)
}

pub fn create(stream: bool, v6: bool, flags: u32) -> Result<Handle<File>, Errno> {
    let ty = if stream { SockType::Stream } else { SockType::Datagram };
    let id = on_stack(|s| if v6 { s.socket_v6(ty) } else { s.socket(ty) })?;
    super::new_with(Kind::Inet, RDWR | flags, Inet { id: id.raw(), stream, v6 }).inspect_err(|_| {
        let _ = on_stack(|s| s.close(id));
    })
}

/// A socket's object.
pub fn inet(f: &File) -> &Inet {
    // SAFETY: an Internet socket's `Inet` lives while the description
    // does, and is never changed once made.
    unsafe { f.object::<Inet>().get() }
}

pub fn id(f: &File) -> SocketId {
    SocketId::from_raw(inet(f).id)
}

/// A socket made by `accept` (of the listener's family), with its own
/// description.
pub fn adopt(id: SocketId, v6: bool, flags: u32) -> Result<Handle<File>, Errno> {
    super::new_with(Kind::Inet, RDWR | flags, Inet { id: id.raw(), stream: true, v6 }).inspect_err(|_| {
        let _ = on_stack(|s| s.close(id));
    })
}

/// One try (the caller, `io`, waits and tries again on EAGAIN).
fn read(f: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    let me = id(f);
    on_stack(|s| s.recv(me, buf, false))?.map_err(errno)
}

/// One try, as `read`.
fn write(f: &mut File, buf: &[u8]) -> Result<usize, Errno> {
    let me = id(f);
    on_stack(|s| s.send(me, buf))?.map_err(errno)
}

fn ioctl(f: &mut File, req: u64, arg: u64) -> Result<usize, Errno> {
    match req {
        super::FIONREAD => {
            let me = id(f);
            super::put_readable(arg, on_stack(|s| s.readable(me))? as u64)
        }
        _ => crate::net::ifreq::ioctl(req, arg).map(|()| 0),
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
        stack::sleep(Some(until));
    }
    let _ = on_stack(|s| s.close(me));
    // SAFETY: made by `create` / `adopt`; nobody refers to it now.
    unsafe { f.object::<Inet>().free() };
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

pub fn no_memory() -> Errno {
    ENOMEM
}
