//! Route netlink sockets (`AF_NETLINK`, `NETLINK_ROUTE`): a program sends
//! requests "to the kernel" and receives the replies as datagrams. Here
//! the library is that kernel: a send parses the requests at once
//! (`net::rtnetlink`) and queues what each is owed; a receive renders the
//! oldest into one datagram (the interfaces as they are then). The queue
//! holds `QUEUE` replies; past that they are dropped and the next receive
//! says ENOBUFS, as Linux says when a socket's buffer overflows.

use super::flags::{NONBLOCK, RDWR};
use super::{no_seek, File, Handle, Kind, Ops, POLLIN, POLLOUT};
use crate::errno::{Errno, EAGAIN, ENOBUFS};
use crate::net::rtnetlink::{self, Reply};
use alloc::vec::Vec;

/// Replies a socket holds before it drops more.
const QUEUE: usize = 16;

pub struct Netlink {
    /// Its port (`nl_pid`): 0 until bound, by `bind` or by its first send
    /// (then its maker's pid, as Linux's autobind gives a process's first).
    port: u32,
    maker: u32,
    /// The multicast groups it asked for (kept and shown; nothing is
    /// multicast).
    groups: u32,
    queue: [Reply; QUEUE],
    head: usize,
    len: usize,
    /// Replies were dropped since the last receive.
    overrun: bool,
    /// Replies queued so far (edge-triggered epoll's stamp).
    queued: u64,
}

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat: super::socket_stat, ioctl, close };

/// A new route netlink socket with status flags `flags` (`NONBLOCK`),
/// made by the process of pid `maker`.
pub fn create(flags: u32, maker: u32) -> Result<Handle<File>, Errno> {
    let s = Netlink {
        port: 0,
        maker,
        groups: 0,
        queue: [Reply::Links { seq: 0 }; QUEUE],
        head: 0,
        len: 0,
        overrun: false,
        queued: 0,
    };
    super::new_with(Kind::Netlink, (flags & NONBLOCK) | RDWR, s)
}

/// The socket behind `f`.
///
/// # Safety
/// `f` is an open netlink socket, and no other reference to its object is
/// live while the result is (the big lock is held).
unsafe fn sock<'a>(f: &File) -> &'a mut Netlink {
    // SAFETY: as the caller promises.
    unsafe { f.object::<Netlink>().get_mut() }
}

/// Binds the socket to port `port` (the caller gives its pid for 0, as
/// Linux's first socket of a process gets) and multicast groups `groups`.
pub fn bind(f: &File, port: u32, groups: u32) {
    // SAFETY: an open netlink socket (the lock held).
    let s = unsafe { sock(f) };
    s.port = port;
    s.groups = groups;
}

/// Its name: (port, groups); port 0 before it is bound.
pub fn name(f: &File) -> (u32, u32) {
    // SAFETY: an open netlink socket; read only.
    let s = unsafe { sock(f) };
    (s.port, s.groups)
}

/// Sends `msg` to the kernel: queues the replies its requests are owed.
/// An unbound socket is bound to its maker's pid first.
pub fn send(f: &File, msg: &[u8]) {
    // SAFETY: an open netlink socket (the lock held).
    let s = unsafe { sock(f) };
    if s.port == 0 {
        s.port = s.maker;
    }
    for r in rtnetlink::requests(msg) {
        if s.len == QUEUE {
            s.overrun = true;
            continue;
        }
        s.queue[(s.head + s.len) % QUEUE] = r;
        s.len += 1;
        s.queued += 1;
    }
}

/// The oldest reply as a datagram, taken unless `peek`; EAGAIN when none
/// waits (the caller waits, `io`), ENOBUFS once after replies were lost.
pub fn recv(f: &File, peek: bool) -> Result<Vec<u8>, Errno> {
    // SAFETY: an open netlink socket (the lock held).
    let s = unsafe { sock(f) };
    if s.overrun && !peek {
        s.overrun = false;
        return Err(ENOBUFS);
    }
    if s.len == 0 {
        return Err(EAGAIN);
    }
    let r = s.queue[s.head];
    if !peek {
        s.head = (s.head + 1) % QUEUE;
        s.len -= 1;
    }
    Ok(rtnetlink::render(r, s.port))
}

/// Readiness for `poll`: always writable; readable with a reply waiting.
pub fn events(f: &File) -> u16 {
    // SAFETY: an open netlink socket; read only.
    let s = unsafe { sock(f) };
    POLLOUT | if s.len > 0 || s.overrun { POLLIN } else { 0 }
}

/// A number that changes when a reply is queued (edge-triggered epoll).
pub fn stamp(f: &File) -> u64 {
    // SAFETY: an open netlink socket; read only.
    unsafe { sock(f) }.queued
}

/// `read`: one datagram, cut to `buf` (the rest is lost).
fn read(f: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    let d = recv(f, false)?;
    let n = d.len().min(buf.len());
    buf[..n].copy_from_slice(&d[..n]);
    Ok(n)
}

fn write(f: &mut File, buf: &[u8]) -> Result<usize, Errno> {
    send(f, buf);
    Ok(buf.len())
}

/// The interface requests, as on any socket.
fn ioctl(_: &mut File, req: u64, arg: u64) -> Result<usize, Errno> {
    crate::net::ifreq::ioctl(req, arg).map(|()| 0)
}

fn close(f: &mut File) {
    // SAFETY: made by `create`; its only file is going.
    unsafe { f.object::<Netlink>().free() };
}
