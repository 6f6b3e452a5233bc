//! Socket calls for Unix-domain sockets (`obj::unix`): addresses
//! (`struct sockaddr_un`), messages (`struct msghdr`, its iovecs and
//! `SCM_RIGHTS` control messages) and flags. Other families fail with
//! EAFNOSUPPORT.

use super::{cheetah, inet, unixaddr};
use crate::errno::Errno;
use crate::errno::{
    LxResult, EAFNOSUPPORT, EBADF, EFAULT, EINVAL, ENOPROTOOPT, ENOTSOCK, EOPNOTSUPP, EPROTONOSUPPORT,
    ESOCKTNOSUPPORT,
};
use crate::fd;
use crate::obj::{unix, File, Handle, Kind};
use crate::uaccess;
use alloc::vec::Vec;

const AF_UNIX: u16 = 1;
pub const SOCK_NONBLOCK: u64 = 0o4000;
pub const SOCK_CLOEXEC: u64 = 0o2000000;
pub const TYPE_MASK: u64 = 0xf;
const SOCK_RAW: u32 = 3;

const MSG_OOB: u64 = 0x1;
pub const MSG_PEEK: u64 = 0x2;
const MSG_CTRUNC: u32 = 0x8;
pub const MSG_TRUNC: u64 = 0x20;
pub const MSG_DONTWAIT: u64 = 0x40;
const MSG_NOSIGNAL: u64 = 0x4000;
const MSG_CMSG_CLOEXEC: u64 = 0x4000_0000;

pub const SOL_SOCKET: u64 = 1;
const SCM_RIGHTS: u32 = 1;
pub const SO_TYPE: u64 = 3;
pub const SO_ERROR: u64 = 4;
pub const SO_SNDBUF: u64 = 7;
pub const SO_RCVBUF: u64 = 8;
const SO_PEERCRED: u64 = 17;
pub const SO_PROTOCOL: u64 = 38;
pub const SO_DOMAIN: u64 = 39;

/// Bytes of a `struct cmsghdr` (len, level, type).
const CMSG_HDR: usize = 16;
/// Most bytes one stream send takes.
const MAX_SEND: u64 = 1 << 20;

/// The socket type in `ty` and its flags checked: (type, status flags,
/// close-on-exec).
fn type_and_flags(domain: u64, ty: u64, protocol: u64) -> Result<(u32, u32, bool), Errno> {
    if domain as u16 != AF_UNIX || domain >> 16 != 0 {
        return Err(EAFNOSUPPORT);
    }
    unix_type(ty, protocol)
}

/// The type's flags checked: (status flags, close-on-exec).
fn flags_of(ty: u64) -> Result<(u32, bool), Errno> {
    if ty & !(TYPE_MASK | SOCK_NONBLOCK | SOCK_CLOEXEC) != 0 {
        return Err(EINVAL);
    }
    Ok(((ty & SOCK_NONBLOCK) as u32, ty & SOCK_CLOEXEC != 0))
}

fn unix_type(ty: u64, protocol: u64) -> Result<(u32, u32, bool), Errno> {
    if ty & !(TYPE_MASK | SOCK_NONBLOCK | SOCK_CLOEXEC) != 0 {
        return Err(EINVAL);
    }
    // Linux makes a raw Unix socket a datagram one.
    let kind = match (ty & TYPE_MASK) as u32 {
        SOCK_RAW => unix::DGRAM,
        k => k,
    };
    if ![unix::STREAM, unix::DGRAM, unix::SEQPACKET].contains(&kind) {
        return Err(ESOCKTNOSUPPORT);
    }
    if protocol != 0 && protocol != AF_UNIX as u64 {
        return Err(EPROTONOSUPPORT);
    }
    Ok((kind, (ty & SOCK_NONBLOCK) as u32, ty & SOCK_CLOEXEC != 0))
}

pub fn socket(domain: u64, ty: u64, protocol: u64) -> LxResult {
    if domain == inet::AF_INET as u64 || domain == inet::AF_INET6 as u64 {
        let (flags, cloexec) = flags_of(ty)?;
        return inet::socket(domain == inet::AF_INET6 as u64, ty & TYPE_MASK, protocol, flags, cloexec);
    }
    let (kind, flags, cloexec) = type_and_flags(domain, ty, protocol)?;
    fd::open(unix::create(kind, flags)?, cloexec)
}

pub fn socketpair(domain: u64, ty: u64, protocol: u64, sv: u64) -> LxResult {
    // Internet families have no pairs.
    if matches!(domain as u16, inet::AF_INET | inet::AF_INET6) && domain >> 16 == 0 {
        return Err(EOPNOTSUPP);
    }
    let (kind, flags, cloexec) = type_and_flags(domain, ty, protocol)?;
    uaccess::writable(sv, 8)?;
    let (a, b) = unix::pair(kind, flags)?;
    let fa = match fd::open(a, cloexec) {
        Ok(n) => n,
        Err(e) => {
            crate::obj::put(&unix::OPS, b);
            return Err(e);
        }
    };
    let fb = match fd::open(b, cloexec) {
        Ok(n) => n,
        Err(e) => {
            let _ = fd::close(fa);
            return Err(e);
        }
    };
    uaccess::put(sv, [fa as i32, fb as i32])
}

/// The Internet socket open as `fdn`, if it is one.
fn inet_sock(fdn: i64) -> Option<&'static File> {
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&fd::get(fdn).ok()?) };
    (f.kind == Kind::Inet).then_some(f)
}

/// The socket open as `fdn`.
fn sock(fdn: i64) -> Result<&'static File, Errno> {
    // SAFETY: the descriptor keeps the file live; no other reference to it here.
    let f = unsafe { fd::file(&fd::get(fdn)?) };
    if f.kind != Kind::Socket {
        return Err(ENOTSOCK);
    }
    Ok(f)
}

pub fn bind(fdn: i64, addr: u64, len: u64) -> LxResult {
    if let Some(f) = inet_sock(fdn) {
        return inet::bind(f, addr, len);
    }
    let f = sock(fdn)?;
    // The family alone: a name of the kernel's choosing (autobind).
    let name = if len == 2 && uaccess::get::<u16>(addr)? == AF_UNIX {
        None
    } else {
        Some(unixaddr::parse(addr, len)?)
    };
    unixaddr::bind(f, name.as_deref())?;
    Ok(0)
}

pub fn listen(fdn: i64, backlog: u64) -> LxResult {
    if let Some(f) = inet_sock(fdn) {
        return inet::listen(f, backlog as i32 as i64);
    }
    unix::listen(sock(fdn)?, backlog as i32 as i64)?;
    Ok(0)
}

pub fn connect(fdn: i64, addr: u64, len: u64) -> LxResult {
    if let Some(f) = inet_sock(fdn) {
        return inet::connect(f, addr, len);
    }
    let f = sock(fdn)?;
    let ino = unixaddr::find(&unixaddr::parse(addr, len)?)?;
    unix::connect(f, ino)?;
    Ok(0)
}

pub fn accept4(fdn: i64, addr: u64, lenp: u64, flags: u64) -> LxResult {
    if flags & !(SOCK_NONBLOCK | SOCK_CLOEXEC) != 0 {
        return Err(EINVAL);
    }
    if let Some(f) = inet_sock(fdn) {
        return inet::accept4(f, addr, lenp, (flags & SOCK_NONBLOCK) as u32, flags & SOCK_CLOEXEC != 0);
    }
    let f = sock(fdn)?;
    if addr != 0 {
        uaccess::writable(lenp, 4)?;
    }
    let conn = crate::io::accept(f, (flags & SOCK_NONBLOCK) as u32)?;
    let n = fd::open(conn, flags & SOCK_CLOEXEC != 0)?;
    // The client is unnamed: the address is the family alone.
    unixaddr::put(addr, lenp, &[])?;
    Ok(n)
}

pub fn getsockname(fdn: i64, addr: u64, lenp: u64, peer: bool) -> LxResult {
    if let Some(f) = inet_sock(fdn) {
        return inet::getsockname(f, addr, lenp, peer);
    }
    let name = unix::name(sock(fdn)?, peer)?;
    if addr == 0 {
        return Err(EFAULT);
    }
    unixaddr::put(addr, lenp, &name)
}

pub fn shutdown(fdn: i64, how: u64) -> LxResult {
    if let Some(f) = inet_sock(fdn) {
        return inet::shutdown(f, how);
    }
    let f = sock(fdn)?;
    if how > 2 {
        return Err(EINVAL);
    }
    // A ring let go of is unmapped here unless a descriptor needs it.
    let rings = crate::obj::pipes_of(f.handle());
    unix::shutdown(f, how != 1, how != 0)?;
    fd::unmap_unheld(&rings);
    Ok(0)
}

pub fn getsockopt(fdn: i64, level: u64, name: u64, val: u64, lenp: u64) -> LxResult {
    if let Some(f) = inet_sock(fdn) {
        if level == cheetah::SOL_VENEER {
            return cheetah::getsockopt(f, name, val, lenp);
        }
        return inet::getsockopt(f, level, name, val, lenp);
    }
    let f = sock(fdn)?;
    // A Unix socket has options at the socket level only.
    if level != SOL_SOCKET {
        return Err(EOPNOTSUPP);
    }
    if name == SO_PEERCRED {
        // struct ucred: pid, uid, gid (everyone is root); no peer yet:
        // pid 0 and the overflow ids, as Linux answers.
        let cred = unix::peer_env(f).map_or([0, 65534, 65534], |env| [crate::proc::pid::of(env), 0, 0]);
        let room: u32 = uaccess::get(lenp)?;
        let n = (room as usize).min(12);
        let bytes: Vec<u8> = cred.iter().flat_map(|w| w.to_ne_bytes()).collect();
        uaccess::write(val, &bytes[..n])?;
        uaccess::put(lenp, n as u32)?;
        return Ok(0);
    }
    let v: i32 = match name {
        SO_TYPE => unix::kind(f) as i32,
        SO_DOMAIN => AF_UNIX as i32,
        SO_PROTOCOL => 0,
        SO_ERROR => 0,
        SO_SNDBUF | SO_RCVBUF => crate::obj::pipe::CAPACITY as i32,
        _ => return Err(ENOPROTOOPT),
    };
    super::inet::put_opt(val, lenp, &v.to_ne_bytes())
}

/// setsockopt: the socket must be one; options are taken and ignored
/// (buffer sizes are the rings').
pub fn setsockopt(fdn: i64, level: u64, name: u64, val: u64, len: u64) -> LxResult {
    if let Some(f) = inet_sock(fdn) {
        if level == cheetah::SOL_VENEER {
            return cheetah::setsockopt(f, name, val, len);
        }
        return inet::setsockopt(f, level, name, val, len);
    }
    sock(fdn)?;
    if level != SOL_SOCKET {
        return Err(ENOPROTOOPT);
    }
    Ok(0)
}

/// A `struct msghdr`: name, iovecs, control buffer, flags.
pub(super) struct Msg {
    pub(super) name: u64,
    pub(super) name_len: u64,
    pub(super) iov: Vec<(u64, u64)>,
    control: u64,
    control_len: u64,
}

pub(super) fn msghdr(p: u64) -> Result<Msg, Errno> {
    let h: [u64; 7] = uaccess::get(p)?;
    let (iov, iovlen, control, control_len) = (h[2], h[3], h[4], h[5]);
    if iovlen > 1024 {
        return Err(crate::errno::EMSGSIZE);
    }
    let iov = (0..iovlen)
        .map(|i| uaccess::get::<[u64; 2]>(iov + 16 * i).map(|v| (v[0], v[1])))
        .collect::<Result<_, _>>()?;
    Ok(Msg { name: h[0], name_len: h[1] as u32 as u64, iov, control, control_len })
}

/// The descriptors in the control messages of a send, each with one more
/// reference (the caller's to hand on or drop). EINVAL for a malformed or
/// unknown control message, EBADF for a descriptor that is not open.
fn passed(control: u64, len: u64) -> Result<Vec<Handle<File>>, Errno> {
    let mut files: Vec<Handle<File>> = Vec::new();
    let drop_all =
        |files: &[Handle<File>]| files.iter().for_each(|&f| crate::obj::put(crate::obj::ops_for_file(f), f));
    let mut at = 0u64;
    while at + CMSG_HDR as u64 <= len {
        let h: [u64; 2] = match uaccess::get(control + at) {
            Ok(h) => h,
            Err(e) => {
                drop_all(&files);
                return Err(e);
            }
        };
        let (clen, level, ty) = (h[0], h[1] as u32 as u64, (h[1] >> 32) as u32);
        if clen < CMSG_HDR as u64 || clen > len - at {
            drop_all(&files);
            return Err(EINVAL);
        }
        if level != SOL_SOCKET || ty != SCM_RIGHTS {
            drop_all(&files);
            return Err(EINVAL);
        }
        let n = (clen as usize - CMSG_HDR) / 4;
        if files.len() + n > unix::MAX_PASSED {
            drop_all(&files);
            return Err(EINVAL);
        }
        for i in 0..n {
            let got =
                uaccess::get::<i32>(control + at + (CMSG_HDR + 4 * i) as u64).and_then(|n| fd::get(n as i64));
            match got {
                Ok(d) => {
                    // SAFETY: the descriptor keeps the file live; no other reference to it here.
                    unsafe { fd::file(&d) }.refs += 1;
                    files.push(d.file);
                }
                Err(e) => {
                    drop_all(&files);
                    return Err(if e == crate::errno::EFAULT { e } else { EBADF });
                }
            }
        }
        at += clen.next_multiple_of(8);
    }
    Ok(files)
}

/// sendmsg, and sendto/send (`control` None: no control), to the socket
/// named by the address `to` (pointer and length) when one is given.
fn send_common(
    fdn: i64,
    iov: &[(u64, u64)],
    to: (u64, u64),
    control: Option<(u64, u64)>,
    flags: u64,
) -> LxResult {
    let f = sock(fdn)?;
    if flags & MSG_OOB != 0 {
        return Err(EOPNOTSUPP);
    }
    let to = match to {
        (a, l) if a != 0 && l != 0 => match unix::kind(f) {
            unix::DGRAM => Some(unixaddr::find(&unixaddr::parse(a, l)?)?),
            unix::STREAM => return Err(unix::address_refused(f)),
            _ => None,
        },
        _ => None,
    };
    // A stream send takes at most `MAX_SEND` bytes per call (the rest is
    // left to the next call, as a partial write); a message must fit a
    // ring whole.
    let total = iov.iter().fold(0u64, |t, v| t.saturating_add(v.1));
    if unix::kind(f) != unix::STREAM && total > crate::obj::pipe::CAPACITY as u64 {
        return Err(crate::errno::EMSGSIZE);
    }
    let mut data = Vec::new();
    for &(p, l) in iov {
        let room = MAX_SEND - data.len() as u64;
        data.extend_from_slice(uaccess::bytes(p, l.min(room))?);
    }
    let files = match control {
        Some((c, l)) if l > 0 => passed(c, l)?,
        _ => Vec::new(),
    };
    let n = crate::io::send(f, &data, to, files, flags & MSG_DONTWAIT != 0, flags & MSG_NOSIGNAL == 0)?;
    Ok(n as i64)
}

pub fn sendmsg(fdn: i64, msg: u64, flags: u64) -> LxResult {
    if let Some(f) = inet_sock(fdn) {
        let m = msghdr(msg)?;
        return inet::send(f, &m.iov, Some((m.name, m.name_len)), (m.control, m.control_len), flags);
    }
    sock(fdn)?;
    let m = msghdr(msg)?;
    send_common(fdn, &m.iov, (m.name, m.name_len), Some((m.control, m.control_len)), flags)
}

/// sendto (and send).
pub fn sendto(fdn: i64, buf: u64, len: u64, flags: u64, addr: u64, alen: u64) -> LxResult {
    if let Some(f) = inet_sock(fdn) {
        return inet::send(f, &[(buf, len)], Some((addr, alen)), (0, 0), flags);
    }
    send_common(fdn, &[(buf, len)], (addr, alen), None, flags)
}

/// The receive behind recvmsg, recvfrom and recv: data into the iovecs,
/// descriptors installed into the room `control` has (the rest closed,
/// `MSG_CTRUNC`). Returns (bytes, msg_flags, control bytes used, the
/// sender's name).
fn recv_common(
    fdn: i64,
    iov: &[(u64, u64)],
    control: (u64, u64),
    flags: u64,
) -> Result<(i64, u32, u64, Vec<u8>), Errno> {
    let f = sock(fdn)?;
    if flags & MSG_OOB != 0 {
        return Err(EOPNOTSUPP);
    }
    let total = iov.iter().fold(0u64, |t, v| t.saturating_add(v.1));
    for &(p, l) in iov {
        uaccess::writable(p, l)?;
    }
    if control.0 != 0 && control.1 > 0 {
        uaccess::writable(control.0, control.1)?;
    }
    let mut buf = alloc::vec![0u8; total.min(1 << 20) as usize];
    let got = crate::io::recv(f, &mut buf, flags & MSG_DONTWAIT != 0, flags & MSG_PEEK != 0)?;
    let mut at = 0;
    for &(p, l) in iov {
        let n = (l as usize).min(got.len - at);
        uaccess::write(p, &buf[at..at + n])?;
        at += n;
    }
    let mut mflags = 0;
    if got.full > got.len {
        mflags |= MSG_TRUNC as u32;
    }
    let mut used = 0;
    if !got.files.is_empty() {
        let room = if control.0 == 0 || control.1 < CMSG_HDR as u64 {
            0
        } else {
            (control.1 as usize - CMSG_HDR) / 4
        };
        let take = room.min(got.files.len());
        let mut fds = Vec::with_capacity(take);
        for &file in &got.files[..take] {
            // A pipe end (or a socketpair's socket) whose frames this process could not map with the
            // ticket that came with it (`pipemem::take`: a ticket changed
            // in the arena, or the kernel's refusal) can be neither used
            // nor dropped here: left out.
            if !crate::obj::usable(file) {
                mflags |= MSG_CTRUNC;
                continue;
            }
            match fd::open(file, flags & MSG_CMSG_CLOEXEC != 0) {
                Ok(n) => fds.push(n as i32),
                Err(_) => mflags |= MSG_CTRUNC,
            }
        }
        for &file in &got.files[take..] {
            fd::put_unheld(crate::obj::ops_for_file(file), file);
        }
        if take < got.files.len() {
            mflags |= MSG_CTRUNC;
        }
        if !fds.is_empty() {
            let clen = CMSG_HDR + 4 * fds.len();
            let mut c = Vec::with_capacity(clen);
            c.extend_from_slice(&(clen as u64).to_ne_bytes());
            c.extend_from_slice(&(SOL_SOCKET as u32).to_ne_bytes());
            c.extend_from_slice(&SCM_RIGHTS.to_ne_bytes());
            for n in &fds {
                c.extend_from_slice(&n.to_ne_bytes());
            }
            uaccess::write(control.0, &c)?;
            used = (clen as u64).next_multiple_of(8).min(control.1);
        }
    }
    let n = if flags & MSG_TRUNC != 0 { got.full } else { got.len };
    Ok((n as i64, mflags, used, got.from))
}

pub fn recvmsg(fdn: i64, msg: u64, flags: u64) -> LxResult {
    if let Some(f) = inet_sock(fdn) {
        let m = msghdr(msg)?;
        let got = inet::recv(f, &m.iov, flags)?;
        match got.from {
            Some(a) if m.name != 0 => inet::put_sockaddr(f, m.name, msg + 8, a)?,
            _ => uaccess::put(msg + 8, 0u32)?,
        };
        let (used, ctrunc) = inet::control(f, &got, m.control, m.control_len)?;
        uaccess::put(msg + 40, used)?;
        let mflags = if got.cut { MSG_TRUNC as u32 } else { 0 } | if ctrunc { MSG_CTRUNC } else { 0 };
        uaccess::put(msg + 48, mflags)?;
        return Ok(got.n);
    }
    sock(fdn)?;
    let m = msghdr(msg)?;
    let (n, mflags, used, from) = recv_common(fdn, &m.iov, (m.control, m.control_len), flags)?;
    // msg_name and msg_namelen, msg_controllen, msg_flags.
    unixaddr::put_sender(m.name, msg + 8, &from)?;
    uaccess::put(msg + 40, used)?;
    uaccess::put(msg + 48, mflags)?;
    Ok(n)
}

/// recvfrom (and recv).
pub fn recvfrom(fdn: i64, buf: u64, len: u64, flags: u64, addr: u64, lenp: u64) -> LxResult {
    if let Some(f) = inet_sock(fdn) {
        let got = inet::recv(f, &[(buf, len)], flags)?;
        if let Some(a) = got.from {
            inet::put_sockaddr(f, addr, lenp, a)?;
        }
        return Ok(got.n);
    }
    let (n, _, _, from) = recv_common(fdn, &[(buf, len)], (0, 0), flags)?;
    unixaddr::put_sender(addr, lenp, &from)?;
    Ok(n)
}
