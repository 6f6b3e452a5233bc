//! Internet socket addresses as programs pass them: `struct sockaddr_in`,
//! and for an IPv6 socket `struct sockaddr_in6`, where an IPv4 peer is the
//! IPv4-mapped address `::ffff:a.b.c.d` (Linux's dual stack). The stack
//! (`netstack`) knows IPv4 and IPv6 addresses only: the mapping is made
//! here, both ways, with Linux's checks in Linux's order per call.

use crate::errno::{Errno, LxResult, EAFNOSUPPORT, EINVAL, ENODEV};
use crate::uaccess;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4};

pub const AF_INET: u16 = 2;
pub const AF_INET6: u16 = 10;
const AF_UNSPEC: u16 = 0;
const SOCKADDR_IN: u64 = 16;
const SOCKADDR_IN6: u64 = 28;
/// RFC 2133's `sockaddr_in6`, without `sin6_scope_id`: the least Linux takes.
const SIN6_LEN_RFC2133: u64 = 24;

/// The call an address is for (Linux checks each differently).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Use {
    Bind,
    Connect,
    Send,
}

/// What the checks need to know of the socket.
#[derive(Clone, Copy)]
pub struct Sock {
    pub v6: bool,
    pub v6only: bool,
    pub datagram: bool,
}

/// A `sockaddr_in` (an IPv4 socket's, or one an IPv6 datagram socket
/// is given).
fn sockaddr_in(addr: u64, len: u64) -> Result<SocketAddr, Errno> {
    if len < SOCKADDR_IN {
        return Err(EINVAL);
    }
    let b: [u8; 8] = uaccess::get(addr)?;
    if u16::from_ne_bytes([b[0], b[1]]) != AF_INET {
        return Err(EAFNOSUPPORT);
    }
    let ip = Ipv4Addr::new(b[4], b[5], b[6], b[7]);
    Ok(SocketAddrV4::new(ip, u16::from_be_bytes([b[2], b[3]])).into())
}

/// The address at `addr` (`len` bytes) for `usage` on socket `s`; `None`
/// for a datagram socket's `AF_UNSPEC`: connect forgets the peer (glibc's
/// `getaddrinfo` does it between the addresses it sorts), an IPv6 sendto
/// goes to the connected peer.
pub fn get(addr: u64, len: u64, s: Sock, usage: Use) -> Result<Option<SocketAddr>, Errno> {
    if usage == Use::Connect && s.datagram && len >= 2 && uaccess::get::<u16>(addr)? == AF_UNSPEC {
        return Ok(None);
    }
    if !s.v6 {
        return sockaddr_in(addr, len).map(Some);
    }
    if usage == Use::Send && len < 2 {
        return Err(EINVAL);
    }
    let family: u16 = if len >= 2 { uaccess::get(addr)? } else { AF_INET6 };
    match (usage, family) {
        (Use::Send, AF_UNSPEC) if s.datagram => return Ok(None),
        // An IPv6 datagram socket takes a `sockaddr_in` (not IPv6-only).
        (Use::Connect, AF_INET) if s.datagram && s.v6only => return Err(EAFNOSUPPORT),
        (Use::Connect | Use::Send, AF_INET) if s.datagram => return sockaddr_in(addr, len).map(Some),
        _ => {}
    }
    if len < SIN6_LEN_RFC2133 {
        return Err(EINVAL);
    }
    match family {
        AF_INET6 => {}
        _ if usage == Use::Send => return Err(EINVAL),
        _ => return Err(EAFNOSUPPORT),
    }
    let b: [u8; 24] = uaccess::get(addr)?;
    let port = u16::from_be_bytes([b[2], b[3]]);
    let ip = Ipv6Addr::from(<[u8; 16]>::try_from(&b[8..24]).expect("16 bytes"));
    let scope: u32 = if len >= SOCKADDR_IN6 { uaccess::get(addr + 24)? } else { 0 };
    // A link-local address means nothing without its interface.
    if ip.is_unicast_link_local() && usage != Use::Send {
        if scope == 0 {
            return Err(EINVAL);
        }
        if usage == Use::Bind && !crate::net::ifreq::exists(scope) {
            return Err(ENODEV);
        }
    }
    if let Some(v4) = ip.to_ipv4_mapped() {
        if usage == Use::Bind && s.v6only {
            return Err(EINVAL);
        }
        return Ok(Some(SocketAddr::new(IpAddr::V4(v4), port)));
    }
    // `::` as a destination is this machine, as on Linux.
    let ip = if usage != Use::Bind && ip.is_unspecified() { Ipv6Addr::LOCALHOST } else { ip };
    Ok(Some(SocketAddr::new(IpAddr::V6(ip), port)))
}

/// Writes `a` at `addr` and its length at `lenp`, truncated to the room
/// given (as Linux does): a `sockaddr_in6` for an IPv6 socket (an IPv4
/// address mapped), else a `sockaddr_in`.
pub fn put(addr: u64, lenp: u64, a: SocketAddr, v6: bool) -> LxResult {
    if addr == 0 {
        return Ok(0);
    }
    let room: u32 = uaccess::get(lenp)?;
    let mut b = [0u8; SOCKADDR_IN6 as usize];
    b[2..4].copy_from_slice(&a.port().to_be_bytes());
    let len = match (a.ip(), v6) {
        (IpAddr::V4(ip), false) => {
            b[..2].copy_from_slice(&AF_INET.to_ne_bytes());
            b[4..8].copy_from_slice(&ip.octets());
            SOCKADDR_IN
        }
        (ip, _) => {
            let ip = match ip {
                IpAddr::V4(v4) => v4.to_ipv6_mapped(),
                IpAddr::V6(v6) => v6,
            };
            b[..2].copy_from_slice(&AF_INET6.to_ne_bytes());
            b[8..24].copy_from_slice(&ip.octets());
            SOCKADDR_IN6
        }
    } as usize;
    let n = (room as usize).min(len);
    uaccess::write(addr, &b[..n])?;
    uaccess::put(lenp, len as u32)?;
    Ok(0)
}
