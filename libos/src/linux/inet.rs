//! Socket calls for Internet sockets (`obj::inet`, over the shared stack
//! `net::stack`), IPv4 and IPv6 (addresses in `inetaddr`): the options
//! Linux programs set, messages. `linux/socket.rs` sends each call here when the descriptor
//! is an Internet socket.

use crate::errno::Errno;
use crate::errno::{
    LxResult, EAGAIN, EDOM, EFAULT, EINTR, EINVAL, ENOPROTOOPT, EOPNOTSUPP, EPIPE, EPROTONOSUPPORT,
    ESOCKTNOSUPPORT,
};
use crate::fd;
use crate::obj::flags::NONBLOCK;
use crate::obj::inet::{self, errno, id, on_stack};
use crate::obj::File;
use crate::uaccess;
use alloc::vec::Vec;
use core::net::SocketAddr;
use netstack::Stack;
use netstack::{Errno as NetErrno, Opt, OptName, Shutdown};

use super::inetaddr::{self, Use};
pub use super::inetaddr::{AF_INET, AF_INET6};
use super::inetcmsg;

const SOCK_STREAM: u64 = 1;
const SOCK_DGRAM: u64 = 2;
const IPPROTO_IP: u64 = 0;
const IPPROTO_TCP: u64 = 6;
const IPPROTO_UDP: u64 = 17;
const IPPROTO_IPV6: u64 = 41;
const IPV6_UNICAST_HOPS: u64 = 16;
const IPV6_V6ONLY: u64 = 26;
const IPV6_RECVHOPLIMIT: u64 = 51;
const IPV6_RECVTCLASS: u64 = 66;
/// The hop limit Linux reports while none is set.
const DEFAULT_HOPS: i32 = 64;

const SOL_SOCKET: u64 = 1;
const SO_REUSEADDR: u64 = 2;
const SO_TYPE: u64 = 3;
const SO_ERROR: u64 = 4;
const SO_BROADCAST: u64 = 6;
const SO_SNDBUF: u64 = 7;
const SO_RCVBUF: u64 = 8;
const SO_KEEPALIVE: u64 = 9;
const SO_LINGER: u64 = 13;
const SO_REUSEPORT: u64 = 15;
const SO_RCVTIMEO: u64 = 20;
const SO_SNDTIMEO: u64 = 21;
const SO_PROTOCOL: u64 = 38;
const SO_DOMAIN: u64 = 39;
const TCP_NODELAY: u64 = 1;
const TCP_MAXSEG: u64 = 2;
const TCP_CORK: u64 = 3;
const TCP_KEEPIDLE: u64 = 4;
const TCP_KEEPINTVL: u64 = 5;
const TCP_KEEPCNT: u64 = 6;
const TCP_DEFER_ACCEPT: u64 = 9;
const TCP_QUICKACK: u64 = 12;

pub const MSG_PEEK: u64 = 0x2;
pub const MSG_TRUNC: u64 = 0x20;
pub const MSG_DONTWAIT: u64 = 0x40;
pub const MSG_WAITALL: u64 = 0x100;
pub const MSG_NOSIGNAL: u64 = 0x4000;

/// socket(AF_INET or AF_INET6, type, protocol) with the type's flags
/// already taken off: (stream?, status flags, close-on-exec) checked by
/// the caller.
pub fn socket(v6: bool, ty: u64, protocol: u64, flags: u32, cloexec: bool) -> LxResult {
    let stream = match ty {
        SOCK_STREAM => true,
        SOCK_DGRAM => false,
        _ => return Err(ESOCKTNOSUPPORT),
    };
    match (stream, protocol) {
        (_, IPPROTO_IP) | (true, IPPROTO_TCP) | (false, IPPROTO_UDP) => {}
        _ => return Err(EPROTONOSUPPORT),
    }
    fd::open(inet::create(stream, v6, flags)?, cloexec)
}

/// The address at `addr` (`len` bytes) for `usage` on `f`; `None` for a
/// datagram's `AF_UNSPEC` destination.
fn sockaddr(f: &File, addr: u64, len: u64, usage: Use) -> Result<Option<SocketAddr>, Errno> {
    let o = inet::inet(f);
    let v6only = o.v6 && matches!(option(f, OptName::V6Only)?, Opt::V6Only(true));
    inetaddr::get(addr, len, inetaddr::Sock { v6: o.v6, v6only, datagram: !o.stream }, usage)
}

/// Writes `a` at `addr` in the form of `f`'s family, and its length at
/// `lenp`.
pub fn put_sockaddr(f: &File, addr: u64, lenp: u64, a: SocketAddr) -> LxResult {
    inetaddr::put(addr, lenp, a, inet::inet(f).v6)
}

fn option(f: &File, n: OptName) -> Result<Opt, Errno> {
    let me = inet::id(f);
    on_stack(|s| s.option(me, n))?.map_err(errno)
}

pub fn bind(f: &File, addr: u64, len: u64) -> LxResult {
    let a = sockaddr(f, addr, len, Use::Bind)?.ok_or(EINVAL)?;
    let me = inet::id(f);
    on_stack(|s| s.bind(me, a))?.map_err(errno)?;
    Ok(0)
}

pub fn listen(f: &File, backlog: i64) -> LxResult {
    let me = inet::id(f);
    let backlog = backlog.clamp(1, 4096) as usize;
    on_stack(|s| s.listen(me, backlog))?.map_err(errno)?;
    Ok(0)
}

/// connect: blocking unless the socket is non-blocking (EINPROGRESS,
/// then `POLLOUT` and `SO_ERROR` tell the end, as on Linux).
pub fn connect(f: &File, addr: u64, len: u64) -> LxResult {
    let me = inet::id(f);
    let Some(to) = sockaddr(f, addr, len, Use::Connect)? else {
        on_stack(|s| s.disconnect(me))?.map_err(errno)?;
        return Ok(0);
    };
    match on_stack(|s| s.connect(me, to))? {
        Err(NetErrno::EINPROGRESS) if f.flags & crate::obj::flags::NONBLOCK == 0 => {}
        r => return r.map(|_| 0).map_err(errno),
    }
    let r = blocking(f, false, None, |s| match s.connect(me, to) {
        Err(NetErrno::EALREADY) => Err(NetErrno::EAGAIN),
        Err(NetErrno::EISCONN) => Ok(()),
        r => r,
    });
    r.map(|_| 0)
}

pub fn accept4(f: &File, addr: u64, lenp: u64, flags: u32, cloexec: bool) -> LxResult {
    if addr != 0 {
        uaccess::writable(lenp, 4)?;
    }
    let me = inet::id(f);
    let (conn, peer) = blocking(f, false, Some(OptName::RcvTimeo), |s| s.accept(me))?;
    let file = inet::adopt(conn, inet::inet(f).v6, flags)?;
    let n = fd::open(file, cloexec)?;
    put_sockaddr(f, addr, lenp, peer)?;
    Ok(n)
}

pub fn getsockname(f: &File, addr: u64, lenp: u64, peer: bool) -> LxResult {
    if addr == 0 {
        return Err(EFAULT);
    }
    let me = inet::id(f);
    let a = on_stack(|s| if peer { s.peer_addr(me) } else { s.local_addr(me) })?.map_err(errno)?;
    put_sockaddr(f, addr, lenp, a)
}

pub fn shutdown(f: &File, how: u64) -> LxResult {
    let how = match how {
        0 => Shutdown::Read,
        1 => Shutdown::Write,
        2 => Shutdown::Both,
        _ => return Err(EINVAL),
    };
    let me = inet::id(f);
    on_stack(|s| s.shutdown(me, how))?.map_err(errno)?;
    Ok(0)
}

/// An option's value as the program gives it: an `int`, a `struct
/// linger`, a `struct timeval`.
fn int_at(val: u64, len: u64) -> Result<i32, Errno> {
    if len < 4 {
        return Err(EINVAL);
    }
    uaccess::get(val)
}

fn timeval_ms(val: u64, len: u64) -> Result<Option<u64>, Errno> {
    if len < 16 {
        return Err(EINVAL);
    }
    let t: [i64; 2] = uaccess::get(val)?;
    if t[0] < 0 || !(0..1_000_000).contains(&t[1]) {
        return Err(EDOM);
    }
    let ms = (t[0] as u64).saturating_mul(1000) + t[1] as u64 / 1000;
    Ok((ms > 0 || t[1] > 0).then_some(ms.max(1)))
}

pub fn setsockopt(f: &File, level: u64, name: u64, val: u64, len: u64) -> LxResult {
    let opt = match (level, name) {
        (SOL_SOCKET, SO_REUSEADDR) => Opt::ReuseAddr(int_at(val, len)? != 0),
        (SOL_SOCKET, SO_REUSEPORT) => Opt::ReusePort(int_at(val, len)? != 0),
        (SOL_SOCKET, SO_KEEPALIVE) => Opt::KeepAlive(int_at(val, len)? != 0),
        (SOL_SOCKET, SO_SNDBUF) => Opt::SndBuf(int_at(val, len)?.max(0) as usize),
        (SOL_SOCKET, SO_RCVBUF) => Opt::RcvBuf(int_at(val, len)?.max(0) as usize),
        (SOL_SOCKET, SO_LINGER) => {
            if len < 8 {
                return Err(EINVAL);
            }
            let l: [i32; 2] = uaccess::get(val)?;
            Opt::Linger((l[0] != 0).then_some(l[1].clamp(0, u16::MAX as i32) as u16))
        }
        (SOL_SOCKET, SO_RCVTIMEO) => Opt::RcvTimeo(timeval_ms(val, len)?),
        (SOL_SOCKET, SO_SNDTIMEO) => Opt::SndTimeo(timeval_ms(val, len)?),
        (IPPROTO_TCP, TCP_NODELAY) => Opt::NoDelay(int_at(val, len)? != 0),
        (IPPROTO_TCP, TCP_QUICKACK) => Opt::QuickAck(int_at(val, len)? != 0),
        (IPPROTO_IPV6, _) if !inet::inet(f).v6 => return Err(ENOPROTOOPT),
        (IPPROTO_IPV6, IPV6_V6ONLY) => Opt::V6Only(int_at(val, len)? != 0),
        (IPPROTO_IPV6, IPV6_RECVHOPLIMIT) => Opt::RecvHopLimit(int_at(val, len)? != 0),
        (IPPROTO_IPV6, IPV6_RECVTCLASS) => Opt::RecvTClass(int_at(val, len)? != 0),
        (IPPROTO_IPV6, IPV6_UNICAST_HOPS) => match int_at(val, len)? {
            -1 => Opt::HopLimit(None),
            h @ 0..=255 => Opt::HopLimit(Some(h as u8)),
            _ => return Err(EINVAL),
        },
        // Taken and without effect here, as for Linux when they do not
        // apply: broadcast, TCP's segment size, corking and keep-alive
        // timing, deferred accept, the IP header's fields.
        (SOL_SOCKET, SO_BROADCAST)
        | (
            IPPROTO_TCP,
            TCP_MAXSEG | TCP_CORK | TCP_KEEPIDLE | TCP_KEEPINTVL | TCP_KEEPCNT | TCP_DEFER_ACCEPT,
        ) => {
            int_at(val, len)?;
            return Ok(0);
        }
        (IPPROTO_IP, _) => return Ok(0),
        (SOL_SOCKET | IPPROTO_TCP, _) => return Err(ENOPROTOOPT),
        _ => return Err(ENOPROTOOPT),
    };
    let me = inet::id(f);
    on_stack(|s| s.set_option(me, opt))?.map_err(errno)?;
    Ok(0)
}

pub(super) fn put_opt(val: u64, lenp: u64, bytes: &[u8]) -> LxResult {
    let room: u32 = uaccess::get(lenp)?;
    let n = (room as usize).min(bytes.len());
    uaccess::write(val, &bytes[..n])?;
    uaccess::put(lenp, n as u32)?;
    Ok(0)
}

pub fn getsockopt(f: &File, level: u64, name: u64, val: u64, lenp: u64) -> LxResult {
    let me = inet::id(f);
    let stream = inet::inet(f).stream;
    let get = |n: OptName| -> Result<Opt, Errno> { on_stack(|s| s.option(me, n))?.map_err(errno) };
    let flag = |o: Opt| match o {
        Opt::ReuseAddr(b) | Opt::ReusePort(b) | Opt::KeepAlive(b) | Opt::NoDelay(b) | Opt::QuickAck(b) => {
            b as i32
        }
        Opt::RcvBuf(n) | Opt::SndBuf(n) => n.min(i32::MAX as usize) as i32,
        _ => 0,
    };
    let int: i32 = match (level, name) {
        (SOL_SOCKET, SO_TYPE) => {
            if stream {
                1
            } else {
                2
            }
        }
        (SOL_SOCKET, SO_DOMAIN) => (if inet::inet(f).v6 { AF_INET6 } else { AF_INET }) as i32,
        // An IPv4 socket's IP layer answers for no other level (Linux's
        // ip_getsockopt).
        (IPPROTO_IPV6, _) if !inet::inet(f).v6 => return Err(EOPNOTSUPP),
        (IPPROTO_IPV6, IPV6_V6ONLY) => matches!(get(OptName::V6Only)?, Opt::V6Only(true)) as i32,
        (IPPROTO_IPV6, IPV6_RECVHOPLIMIT) => {
            matches!(get(OptName::RecvHopLimit)?, Opt::RecvHopLimit(true)) as i32
        }
        (IPPROTO_IPV6, IPV6_RECVTCLASS) => matches!(get(OptName::RecvTClass)?, Opt::RecvTClass(true)) as i32,
        (IPPROTO_IPV6, IPV6_UNICAST_HOPS) => match get(OptName::HopLimit)? {
            Opt::HopLimit(Some(h)) => h as i32,
            _ => DEFAULT_HOPS,
        },
        (SOL_SOCKET, SO_PROTOCOL) => {
            if stream {
                6
            } else {
                17
            }
        }
        (SOL_SOCKET, SO_ERROR) => on_stack(|s| s.take_error(me))?.map_err(errno)?.map_or(0, |e| e.linux()),
        (SOL_SOCKET, SO_REUSEADDR) => flag(get(OptName::ReuseAddr)?),
        (SOL_SOCKET, SO_REUSEPORT) => flag(get(OptName::ReusePort)?),
        (SOL_SOCKET, SO_KEEPALIVE) => flag(get(OptName::KeepAlive)?),
        (SOL_SOCKET, SO_SNDBUF) => flag(get(OptName::SndBuf)?),
        (SOL_SOCKET, SO_RCVBUF) => flag(get(OptName::RcvBuf)?),
        (IPPROTO_TCP, TCP_NODELAY) => flag(get(OptName::NoDelay)?),
        (IPPROTO_TCP, TCP_QUICKACK) => flag(get(OptName::QuickAck)?),
        (SOL_SOCKET, SO_LINGER) => {
            let l = match get(OptName::Linger)? {
                Opt::Linger(Some(s)) => [1, s as i32],
                _ => [0, 0],
            };
            let b: Vec<u8> = l.iter().flat_map(|w| w.to_ne_bytes()).collect();
            return put_opt(val, lenp, &b);
        }
        (SOL_SOCKET, SO_RCVTIMEO | SO_SNDTIMEO) => {
            let n = if name == SO_RCVTIMEO { OptName::RcvTimeo } else { OptName::SndTimeo };
            let ms = match get(n)? {
                Opt::RcvTimeo(Some(ms)) | Opt::SndTimeo(Some(ms)) => ms,
                _ => 0,
            };
            let t = [(ms / 1000) as i64, (ms % 1000 * 1000) as i64];
            let b: Vec<u8> = t.iter().flat_map(|w| w.to_ne_bytes()).collect();
            return put_opt(val, lenp, &b);
        }
        _ => return Err(ENOPROTOOPT),
    };
    put_opt(val, lenp, &int.to_ne_bytes())
}

/// sendmsg/sendto/send: the iovecs' bytes, to `to` (an unconnected
/// datagram socket's destination), with sendmsg's `control` data (an
/// IPv6 datagram's hop limit).
pub fn send(
    f: &File,
    iov: &[(u64, u64)],
    to: Option<(u64, u64)>,
    control: (u64, u64),
    flags: u64,
) -> LxResult {
    let to = match to {
        Some((a, l)) if a != 0 => sockaddr(f, a, l, Use::Send)?,
        _ => None,
    };
    let o = inet::inet(f);
    let hops = if o.v6 && !o.stream { inetcmsg::hop_limit(control.0, control.1)? } else { None };
    let total = iov.iter().fold(0u64, |t, v| t.saturating_add(v.1));
    if !inet::inet(f).stream && total > inet::MAX_DATAGRAM as u64 {
        return Err(crate::errno::EMSGSIZE);
    }
    let mut data = Vec::new();
    for &(p, l) in iov {
        let room = (1u64 << 20).saturating_sub(data.len() as u64);
        data.extend_from_slice(uaccess::bytes(p, l.min(room))?);
    }
    let n = send_all(f, &data, (to, hops), flags & MSG_DONTWAIT != 0, flags & MSG_NOSIGNAL == 0)?;
    Ok(n as i64)
}

/// What one receive gave.
pub struct Got {
    /// The length to return (the datagram's whole with `MSG_TRUNC`).
    pub n: i64,
    /// A datagram's sender.
    pub from: Option<SocketAddr>,
    /// A datagram was cut to the room given.
    pub cut: bool,
    /// A datagram's hop limit and traffic class as it arrived.
    pub traffic: Option<(u8, u8)>,
}

/// The control messages a recvmsg on `f` gives for `got` into the `len`
/// bytes at `control`: (bytes used, truncated).
pub fn control(f: &File, got: &Got, control: u64, len: u64) -> Result<(u64, bool), Errno> {
    let Some((hops, class)) = got.traffic.filter(|_| inet::inet(f).v6) else { return Ok((0, false)) };
    let mut items = Vec::new();
    if option(f, OptName::RecvHopLimit)? == Opt::RecvHopLimit(true) {
        items.push((inetcmsg::IPV6_HOPLIMIT, i32::from(hops)));
    }
    if option(f, OptName::RecvTClass)? == Opt::RecvTClass(true) {
        items.push((inetcmsg::IPV6_TCLASS, i32::from(class)));
    }
    inetcmsg::put(control, len, &items)
}

/// recvmsg/recvfrom/recv into the iovecs.
pub fn recv(f: &File, iov: &[(u64, u64)], flags: u64) -> Result<Got, Errno> {
    for &(p, l) in iov {
        uaccess::writable(p, l)?;
    }
    let total = iov.iter().fold(0u64, |t, v| t.saturating_add(v.1)).min(1 << 20) as usize;
    let mut buf = alloc::vec![0u8; total];
    let me = inet::id(f);
    let peek = flags & MSG_PEEK != 0;
    let nonblock = flags & MSG_DONTWAIT != 0;
    let (n, from, full, traffic) = if inet::inet(f).stream {
        let mut got = 0;
        loop {
            match blocking(f, nonblock, Some(OptName::RcvTimeo), |s| s.recv(me, &mut buf[got..], peek)) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if got > 0 && (e == EAGAIN || e == crate::errno::EINTR) => break,
                Err(e) => return Err(e),
            }
            if flags & MSG_WAITALL == 0 || got == total || peek {
                break;
            }
        }
        (got, None, got, None)
    } else {
        let got = blocking(f, nonblock, Some(OptName::RcvTimeo), |s| s.recv_from(me, &mut buf, peek))?;
        (got.len, Some(got.from), got.full, got.traffic)
    };
    let mut at = 0;
    for &(p, l) in iov {
        let k = (l as usize).min(n - at);
        uaccess::write(p, &buf[at..at + k])?;
        at += k;
    }
    let reported = if flags & MSG_TRUNC != 0 { full } else { n };
    Ok(Got { n: reported as i64, from, cut: full > n, traffic })
}

/// Runs `op` until it gives something other than EAGAIN (only once if
/// `nonblock`), sleeping in between; `timeout` is the option that bounds
/// the wait (its expiry gives EAGAIN).
fn blocking<T>(
    f: &File,
    nonblock: bool,
    timeout: Option<OptName>,
    mut op: impl FnMut(&mut Stack<crate::net::stack::Rings>) -> Result<T, NetErrno>,
) -> Result<T, Errno> {
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
            Err(NetErrno::EAGAIN) if !nonblock => {}
            r => return r.map_err(errno),
        }
        if crate::proc::deliver::pending() {
            return Err(EINTR);
        }
        if until.is_some_and(|u| crate::time::now_ns() >= u) {
            return Err(EAGAIN);
        }
        crate::net::stack::sleep(until);
    }
}

/// Sends `data` whole (a stream: as much as is taken before a signal or
/// the timeout ends the wait; a datagram: one message), with `to` for an
/// unconnected datagram socket and `hops` for a datagram's own hop limit.
/// EPIPE raises SIGPIPE when `sigpipe`.
fn send_all(
    f: &File,
    data: &[u8],
    (to, hops): (Option<SocketAddr>, Option<u8>),
    nonblock: bool,
    sigpipe: bool,
) -> Result<usize, Errno> {
    let me = id(f);
    let r = if !inet::inet(f).stream {
        blocking(f, nonblock, Some(OptName::SndTimeo), |s| match (to, hops) {
            (to, Some(h)) => s.send_with_hops(me, data, to, h),
            (Some(a), None) => s.send_to(me, data, a),
            (None, None) => s.send(me, data),
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
        crate::proc::deliver::raise_self(crate::proc::signal::SIGPIPE);
    }
    r
}
