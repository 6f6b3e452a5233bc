//! Socket calls on route netlink sockets (`obj::netlink`): their address
//! (`struct sockaddr_nl`: family, pad, port, groups; 12 bytes), messages
//! to the kernel (port 0) and the datagrams received from it, and the few
//! options programs set. What netlink sockets do not do answers as
//! Linux's: listen, accept, shutdown and socketpair EOPNOTSUPP, a send to
//! another port ECONNREFUSED.

use super::socket::{
    MSG_DONTWAIT, MSG_PEEK, MSG_TRUNC, SOCK_CLOEXEC, SOCK_NONBLOCK, SOL_SOCKET, SO_DOMAIN, SO_ERROR,
    SO_PROTOCOL, SO_RCVBUF, SO_SNDBUF, SO_TYPE, TYPE_MASK,
};
use crate::errno::Errno;
use crate::errno::{
    LxResult, ECONNREFUSED, EINVAL, EMSGSIZE, ENOPROTOOPT, EOPNOTSUPP, EPROTONOSUPPORT, ESOCKTNOSUPPORT,
};
use crate::fd;
use crate::obj::{netlink, File, Kind};
use crate::uaccess;
use alloc::vec::Vec;

pub const AF_NETLINK: u64 = 16;
const NETLINK_ROUTE: u64 = 0;
/// Bytes of `struct sockaddr_nl`.
const SOCKADDR_NL: u64 = 12;
const SOCK_DGRAM: u64 = 2;
const SOCK_RAW: u64 = 3;
const SOL_NETLINK: u64 = 270;
/// Most bytes one send takes (Linux: the send buffer).
const MAX_SEND: u64 = 32768;
/// The buffer sizes reported.
const BUFFER: i32 = 212_992;

/// `socket(AF_NETLINK, ty, protocol)`: route netlink only, raw or datagram.
pub fn socket(ty: u64, protocol: u64) -> LxResult {
    if ty & !(TYPE_MASK | SOCK_NONBLOCK | SOCK_CLOEXEC) != 0 {
        return Err(EINVAL);
    }
    if !matches!(ty & TYPE_MASK, SOCK_RAW | SOCK_DGRAM) {
        return Err(ESOCKTNOSUPPORT);
    }
    if protocol != NETLINK_ROUTE {
        return Err(EPROTONOSUPPORT);
    }
    fd::open(netlink::create((ty & SOCK_NONBLOCK) as u32, crate::proc::pid())?, ty & SOCK_CLOEXEC != 0)
}

/// The netlink socket open as `fdn`, if it is one.
pub fn sock(fdn: i64) -> Option<&'static File> {
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&fd::get(fdn).ok()?) };
    (f.kind == Kind::Netlink).then_some(f)
}

/// The socket calls on netlink socket `f` (the call's number `nr`, its
/// arguments `a`).
pub fn call(f: &File, nr: u64, a: &[u64; 6]) -> LxResult {
    use super::nr::{
        SYS_BIND, SYS_CONNECT, SYS_GETPEERNAME, SYS_GETSOCKNAME, SYS_GETSOCKOPT, SYS_RECVFROM, SYS_RECVMSG,
        SYS_SENDMSG, SYS_SENDTO, SYS_SETSOCKOPT,
    };
    match nr {
        SYS_BIND => {
            let (port, groups) = address(a[1], a[2])?;
            netlink::bind(f, if port == 0 { crate::proc::pid() } else { port }, groups);
            Ok(0)
        }
        SYS_CONNECT => address(a[1], a[2]).and_then(|(port, _)| kernel(port)),
        SYS_GETSOCKNAME => put_name(a[1], a[2], netlink::name(f)),
        SYS_GETPEERNAME => put_name(a[1], a[2], (0, 0)),
        SYS_SENDTO => send(f, &[(a[1], a[2])], (a[4], a[5])),
        SYS_SENDMSG => {
            let m = super::socket::msghdr(a[1])?;
            send(f, &m.iov, (m.name, m.name_len))
        }
        SYS_RECVFROM => {
            let (n, _) = recv(f, &[(a[1], a[2])], a[3])?;
            if a[4] != 0 {
                put_name(a[4], a[5], (0, 0))?;
            }
            Ok(n)
        }
        SYS_RECVMSG => {
            let m = super::socket::msghdr(a[1])?;
            let (n, cut) = recv(f, &m.iov, a[2])?;
            if m.name != 0 {
                put_name(m.name, a[1] + 8, (0, 0))?;
            }
            uaccess::put(a[1] + 40, 0u64)?;
            uaccess::put(a[1] + 48, if cut { MSG_TRUNC as u32 } else { 0 })?;
            Ok(n)
        }
        SYS_GETSOCKOPT => getsockopt(a[1], a[2], a[3], a[4]),
        SYS_SETSOCKOPT => setsockopt(a[1], a[2], a[4]),
        _ => Err(EOPNOTSUPP),
    }
}

/// The port and groups of the `sockaddr_nl` at `addr` (`len` bytes).
fn address(addr: u64, len: u64) -> Result<(u32, u32), Errno> {
    if len < SOCKADDR_NL {
        return Err(EINVAL);
    }
    let a: [u32; 3] = uaccess::get(addr)?;
    if a[0] as u16 as u64 != AF_NETLINK {
        return Err(EINVAL);
    }
    Ok((a[1], a[2]))
}

/// Only the kernel (port 0) answers here.
fn kernel(port: u32) -> LxResult {
    if port != 0 {
        return Err(ECONNREFUSED);
    }
    Ok(0)
}

/// Writes the `sockaddr_nl` of (port, groups) at `addr`, cut to the room
/// `*lenp` gives, and its length to `*lenp`.
fn put_name(addr: u64, lenp: u64, (port, groups): (u32, u32)) -> LxResult {
    let room: u32 = uaccess::get(lenp)?;
    let mut b = [0u8; SOCKADDR_NL as usize];
    b[..2].copy_from_slice(&(AF_NETLINK as u16).to_ne_bytes());
    b[4..8].copy_from_slice(&port.to_ne_bytes());
    b[8..12].copy_from_slice(&groups.to_ne_bytes());
    uaccess::write(addr, &b[..(room as usize).min(b.len())])?;
    uaccess::put(lenp, SOCKADDR_NL as u32)?;
    Ok(0)
}

/// Sends the bytes of `iov` to the address `to` (pointer, length; none:
/// the kernel).
fn send(f: &File, iov: &[(u64, u64)], to: (u64, u64)) -> LxResult {
    if to.0 != 0 && to.1 != 0 {
        kernel(address(to.0, to.1)?.0)?;
    }
    let total = iov.iter().fold(0u64, |t, v| t.saturating_add(v.1));
    if total > MAX_SEND {
        return Err(EMSGSIZE);
    }
    let mut msg = Vec::with_capacity(total as usize);
    for &(p, l) in iov {
        msg.extend_from_slice(uaccess::bytes(p, l)?);
    }
    netlink::send(f, &msg);
    Ok(total as i64)
}

/// Receives one datagram into `iov` (the rest of it lost); with
/// `MSG_TRUNC` the whole length is returned. Returns (count, cut).
fn recv(f: &File, iov: &[(u64, u64)], flags: u64) -> Result<(i64, bool), Errno> {
    for &(p, l) in iov {
        uaccess::writable(p, l)?;
    }
    let d = crate::io::netlink_recv(f, flags & MSG_DONTWAIT != 0, flags & MSG_PEEK != 0)?;
    let mut at = 0;
    for &(p, l) in iov {
        let n = (l as usize).min(d.len() - at);
        uaccess::write(p, &d[at..at + n])?;
        at += n;
    }
    let cut = at < d.len();
    Ok((if flags & MSG_TRUNC != 0 { d.len() } else { at } as i64, cut))
}

fn getsockopt(level: u64, name: u64, val: u64, lenp: u64) -> LxResult {
    if level != SOL_SOCKET {
        return Err(ENOPROTOOPT);
    }
    let v: i32 = match name {
        SO_TYPE => SOCK_RAW as i32,
        SO_DOMAIN => AF_NETLINK as i32,
        SO_PROTOCOL => NETLINK_ROUTE as i32,
        SO_ERROR => 0,
        SO_SNDBUF | SO_RCVBUF => BUFFER,
        _ => return Err(ENOPROTOOPT),
    };
    super::inet::put_opt(val, lenp, &v.to_ne_bytes())
}

/// The netlink options programs set (memberships, acknowledgement and
/// checking modes: taken, nothing changes here) and the buffer sizes.
fn setsockopt(level: u64, name: u64, len: u64) -> LxResult {
    // SO_SNDBUF, SO_RCVBUF, SO_PASSCRED, SO_SNDBUFFORCE, SO_RCVBUFFORCE.
    let known = match level {
        SOL_SOCKET => matches!(name, 7 | 8 | 16 | 32 | 33),
        // NETLINK_ADD/DROP_MEMBERSHIP, PKTINFO, BROADCAST_ERROR,
        // NO_ENOBUFS, LISTEN_ALL_NSID, CAP_ACK, EXT_ACK, GET_STRICT_CHK.
        SOL_NETLINK => matches!(name, 1..=5 | 8 | 10..=12),
        _ => false,
    };
    if !known {
        return Err(ENOPROTOOPT);
    }
    if len < 4 {
        return Err(EINVAL);
    }
    Ok(0)
}
