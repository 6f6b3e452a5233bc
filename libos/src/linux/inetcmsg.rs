//! IPv6 ancillary data of Internet sockets (RFC 3542): the hop limit a
//! sendmsg asks for its one datagram (`IPV6_HOPLIMIT`), and the hop limit
//! and traffic class a recvmsg reports when `IPV6_RECVHOPLIMIT` /
//! `IPV6_RECVTCLASS` are on, written with Linux's truncation rules
//! (`put_cmsg`). The values are the received packet's own header fields
//! (`netstack::parse::traffic_id`).

use crate::errno::{Errno, EINVAL};
use crate::uaccess;

pub const IPV6_HOPLIMIT: u32 = 52;
pub const IPV6_TCLASS: u32 = 67;
const IPPROTO_IPV6: u32 = 41;
const SOL_SOCKET: u32 = 1;
const SCM_RIGHTS: u32 = 1;
const SCM_CREDENTIALS: u32 = 2;
/// Bytes of a `struct cmsghdr` (len, level, type).
const CMSG_HDR: u64 = 16;
/// One `int` of data.
const CMSG_INT: u64 = CMSG_HDR + 4;

/// The hop limit the control data of an IPv6 socket's send asks for
/// (`None`: the socket's). EINVAL for a malformed message, a value out of
/// -1..255, a type Linux refuses, or a traffic class other than the
/// default or 0 (smoltcp sends class 0 only: refused rather than ignored).
/// Other levels' messages, and descriptors or credentials (Unix sockets'),
/// are skipped, as Linux does.
pub fn hop_limit(control: u64, len: u64) -> Result<Option<u8>, Errno> {
    let mut hops = None;
    let mut at = 0u64;
    while at + CMSG_HDR <= len {
        let h: [u64; 2] = uaccess::get(control + at)?;
        let (clen, level, ty) = (h[0], h[1] as u32, (h[1] >> 32) as u32);
        if clen < CMSG_HDR || clen > len - at {
            return Err(EINVAL);
        }
        match level {
            IPPROTO_IPV6 => {
                if clen != CMSG_INT {
                    return Err(EINVAL);
                }
                let v: i32 = uaccess::get(control + at + CMSG_HDR)?;
                match (ty, v) {
                    (_, v) if !(-1..=255).contains(&v) => return Err(EINVAL),
                    (IPV6_HOPLIMIT, v) => hops = u8::try_from(v).ok(),
                    (IPV6_TCLASS, -1 | 0) => {}
                    _ => return Err(EINVAL),
                }
            }
            SOL_SOCKET if !matches!(ty, SCM_RIGHTS | SCM_CREDENTIALS) => return Err(EINVAL),
            _ => {}
        }
        at += clen.next_multiple_of(8);
    }
    Ok(hops)
}

/// Writes `items` (IPv6 message types, each with an `int`) into the `len`
/// bytes at `control`: each cut to the room left and none once not even a
/// header fits (both `MSG_CTRUNC`). Returns (bytes used, truncated).
pub fn put(control: u64, len: u64, items: &[(u32, i32)]) -> Result<(u64, bool), Errno> {
    let (mut at, mut cut) = (0u64, false);
    for &(ty, v) in items {
        let room = len - at;
        if control == 0 || room < CMSG_HDR {
            cut = true;
            continue;
        }
        let clen = CMSG_INT.min(room);
        cut |= clen < CMSG_INT;
        let mut b = [0u8; CMSG_INT as usize];
        b[..8].copy_from_slice(&clen.to_ne_bytes());
        b[8..12].copy_from_slice(&IPPROTO_IPV6.to_ne_bytes());
        b[12..16].copy_from_slice(&ty.to_ne_bytes());
        b[16..].copy_from_slice(&v.to_ne_bytes());
        uaccess::write(control + at, &b[..clen as usize])?;
        at += CMSG_INT.next_multiple_of(8).min(room);
    }
    Ok((at, cut))
}
