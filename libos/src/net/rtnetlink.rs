//! What Linux's route netlink (`NETLINK_ROUTE`) answers about the
//! interfaces, as lxrt knows them (`net::stack::interfaces`): link and
//! address dumps, one link by index or name, and errors, in Linux's
//! message layout (`struct nlmsghdr`, `ifinfomsg`, `ifaddrmsg`, `rtattr`).
//! glibc's `if_nameindex` and `getifaddrs` ask these, as do `ip` and
//! programs that list their addresses. Requests are parsed as Linux's
//! `netlink_rcv_skb` does: a message with a length below its header or
//! past the buffer ends the batch unread; one that is not a request, or a
//! control message, is only acknowledged when asked.
//! Routes, neighbours and changes (`RTM_NEW*`, multicast groups) are not
//! answered: EOPNOTSUPP.

use crate::net::ifreq::{flags, mask};
use crate::net::stack::{interfaces, Interface};
use alloc::vec::Vec;

/// Bytes of `struct nlmsghdr`.
pub const HEADER: usize = 16;

const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
/// Types below this are netlink's own (noop, error, done, overrun).
const NLMSG_MIN_TYPE: u16 = 0x10;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_MULTI: u16 = 0x2;
const NLM_F_ACK: u16 = 0x4;
const NLM_F_DUMP: u16 = 0x300;
/// An error message carries only the request's header (`NETLINK_CAP_ACK`).
const NLM_F_CAPPED: u16 = 0x100;

const RTM_NEWLINK: u16 = 16;
const RTM_GETLINK: u16 = 18;
const RTM_NEWADDR: u16 = 20;
const RTM_GETADDR: u16 = 22;

const IFLA_ADDRESS: u16 = 1;
const IFLA_BROADCAST: u16 = 2;
const IFLA_IFNAME: u16 = 3;
const IFLA_MTU: u16 = 4;
const IFLA_STATS: u16 = 7;
const IFLA_TXQLEN: u16 = 13;
const IFLA_OPERSTATE: u16 = 16;
const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;
const IFA_LABEL: u16 = 3;
const IFA_BROADCAST: u16 = 4;
const IFA_FLAGS: u16 = 8;
const IFA_F_PERMANENT: u32 = 0x80;
const IFF_LOWER_UP: u32 = 0x1_0000;
const RT_SCOPE_UNIVERSE: u8 = 0;
const RT_SCOPE_HOST: u8 = 254;
const IF_OPER_UNKNOWN: u8 = 0;
const IF_OPER_UP: u8 = 6;
const AF_UNSPEC: u8 = 0;
const AF_INET: u8 = 2;
const AF_INET6: u8 = 10;
const IFA_CACHEINFO: u16 = 6;
const ARPHRD_ETHER: u16 = 1;
const ARPHRD_LOOPBACK: u16 = 772;
/// `struct rtnl_link_stats`: 24 counters of 32 bits.
const LINK_STATS: usize = 96;

const EINVAL: i32 = 22;
const ENODEV: i32 = 19;
const EOPNOTSUPP: i32 = 95;

/// A reply owed to the socket, made when it is received.
#[derive(Clone, Copy)]
pub enum Reply {
    /// Every link, then NLMSG_DONE.
    Links { seq: u32 },
    /// Every address of family `family` (0: all), then NLMSG_DONE.
    Addresses { seq: u32, family: u8 },
    /// The link with index `index`.
    Link { seq: u32, index: u32 },
    /// NLMSG_ERROR with `errno` (0: an acknowledgement) and the request's
    /// header.
    Error { errno: i32, header: [u8; HEADER] },
}

/// The replies the requests in `buf` (one send) are owed, in order.
pub fn requests(buf: &[u8]) -> Vec<Reply> {
    let mut out = Vec::new();
    let mut at = 0;
    while buf.len() - at >= HEADER {
        let h = &buf[at..at + HEADER];
        let len = u32::from_ne_bytes([h[0], h[1], h[2], h[3]]) as usize;
        if len < HEADER || len > buf.len() - at {
            break;
        }
        let (ty, fl) = (u16::from_ne_bytes([h[4], h[5]]), u16::from_ne_bytes([h[6], h[7]]));
        let header: [u8; HEADER] = h.try_into().unwrap_or([0; HEADER]);
        let seq = u32::from_ne_bytes([h[8], h[9], h[10], h[11]]);
        let body = &buf[at + HEADER..at + len];
        let answer = if fl & NLM_F_REQUEST == 0 || ty < NLMSG_MIN_TYPE {
            Ok(None)
        } else {
            request(ty, fl, seq, body)
        };
        match answer {
            Ok(Some(r)) => out.push(r),
            Err(errno) => out.push(Reply::Error { errno, header }),
            Ok(None) => {}
        }
        let dump = matches!(answer, Ok(Some(Reply::Links { .. } | Reply::Addresses { .. })));
        if answer.is_ok() && fl & NLM_F_ACK != 0 && !dump {
            out.push(Reply::Error { errno: 0, header });
        }
        at += len.next_multiple_of(4).min(buf.len() - at);
    }
    out
}

/// The reply one request of type `ty` is owed, or its error.
fn request(ty: u16, fl: u16, seq: u32, body: &[u8]) -> Result<Option<Reply>, i32> {
    let dump = fl & NLM_F_DUMP == NLM_F_DUMP;
    match ty {
        RTM_GETLINK if dump => Ok(Some(Reply::Links { seq })),
        RTM_GETADDR if dump => Ok(Some(Reply::Addresses { seq, family: body.first().copied().unwrap_or(0) })),
        RTM_GETLINK => {
            // struct ifinfomsg: the index at 4, attributes after 16 bytes.
            let index = body.get(4..8).ok_or(EINVAL)?;
            let index = i32::from_ne_bytes([index[0], index[1], index[2], index[3]]);
            let all = interfaces();
            let found = if index > 0 {
                all.get(index as usize - 1).map(|_| index as u32)
            } else {
                let name = attribute(body.get(16..).unwrap_or(&[]), IFLA_IFNAME).ok_or(EINVAL)?;
                let name = &name[..name.iter().position(|&c| c == 0).unwrap_or(name.len())];
                all.iter().position(|i| i.name == name).map(|i| i as u32 + 1)
            };
            Ok(Some(Reply::Link { seq, index: found.ok_or(ENODEV)? }))
        }
        _ => Err(EOPNOTSUPP),
    }
}

/// The data of the first attribute of type `ty` among `attrs`.
fn attribute(mut attrs: &[u8], ty: u16) -> Option<&[u8]> {
    while attrs.len() >= 4 {
        let len = u16::from_ne_bytes([attrs[0], attrs[1]]) as usize;
        if len < 4 || len > attrs.len() {
            return None;
        }
        if u16::from_ne_bytes([attrs[2], attrs[3]]) == ty {
            return Some(&attrs[4..len]);
        }
        attrs = &attrs[len.next_multiple_of(4).min(attrs.len())..];
    }
    None
}

/// Reply `r` to the socket of port `port`, as the datagram it receives.
pub fn render(r: Reply, port: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let all = interfaces();
    match r {
        Reply::Links { seq } => {
            for (n, i) in all.iter().enumerate() {
                Message::new(RTM_NEWLINK, NLM_F_MULTI, seq, port, &mut out).link(i, n as u32 + 1);
            }
            Message::new(NLMSG_DONE, NLM_F_MULTI, seq, port, &mut out).raw(&0i32.to_ne_bytes());
        }
        Reply::Addresses { seq, family } => {
            if family == AF_UNSPEC || family == AF_INET {
                for (n, i) in all.iter().enumerate().filter(|(_, i)| i.addr != [0; 4]) {
                    Message::new(RTM_NEWADDR, NLM_F_MULTI, seq, port, &mut out).address(i, n as u32 + 1);
                }
            }
            // IPv6 is loopback's alone (`netstack`): `::1/128`.
            if family == AF_UNSPEC || family == AF_INET6 {
                for (n, _) in all.iter().enumerate().filter(|(_, i)| i.mac.is_none()) {
                    Message::new(RTM_NEWADDR, NLM_F_MULTI, seq, port, &mut out).loopback6(n as u32 + 1);
                }
            }
            Message::new(NLMSG_DONE, NLM_F_MULTI, seq, port, &mut out).raw(&0i32.to_ne_bytes());
        }
        Reply::Link { seq, index } => {
            if let Some(i) = all.get(index as usize - 1) {
                Message::new(RTM_NEWLINK, 0, seq, port, &mut out).link(i, index);
            }
        }
        Reply::Error { errno, header } => {
            let seq = u32::from_ne_bytes([header[8], header[9], header[10], header[11]]);
            let mut m = Message::new(NLMSG_ERROR, NLM_F_CAPPED, seq, port, &mut out);
            m.raw(&(-errno).to_ne_bytes());
            m.raw(&header);
        }
    }
    out
}

/// One message being appended to a datagram: its length is set as its
/// parts are added.
struct Message<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
}

impl<'a> Message<'a> {
    fn new(ty: u16, fl: u16, seq: u32, port: u32, out: &'a mut Vec<u8>) -> Message<'a> {
        let start = out.len();
        out.extend_from_slice(&(HEADER as u32).to_ne_bytes());
        out.extend_from_slice(&ty.to_ne_bytes());
        out.extend_from_slice(&fl.to_ne_bytes());
        out.extend_from_slice(&seq.to_ne_bytes());
        out.extend_from_slice(&port.to_ne_bytes());
        Message { out, start }
    }

    /// Appends `bytes`, padded to four.
    fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.out.extend_from_slice(bytes);
        self.out.resize(self.out.len().next_multiple_of(4), 0);
        let len = (self.out.len() - self.start) as u32;
        self.out[self.start..self.start + 4].copy_from_slice(&len.to_ne_bytes());
        self
    }

    /// Appends attribute `ty` holding `data`.
    fn attr(&mut self, ty: u16, data: &[u8]) -> &mut Self {
        let mut a = Vec::with_capacity(4 + data.len());
        a.extend_from_slice(&(4 + data.len() as u16).to_ne_bytes());
        a.extend_from_slice(&ty.to_ne_bytes());
        a.extend_from_slice(data);
        self.raw(&a)
    }

    /// `struct ifinfomsg` and the attributes of interface `i` (index `index`).
    fn link(&mut self, i: &Interface, index: u32) {
        let lo = i.mac.is_none();
        let mut m = [0u8; 16];
        m[2..4].copy_from_slice(&(if lo { ARPHRD_LOOPBACK } else { ARPHRD_ETHER }).to_ne_bytes());
        m[4..8].copy_from_slice(&index.to_ne_bytes());
        m[8..12].copy_from_slice(&(flags(i) as u32 | IFF_LOWER_UP).to_ne_bytes());
        let mut name = i.name.to_vec();
        name.push(0);
        let mut stats = [0u8; LINK_STATS];
        let c = &i.counters;
        for (k, v) in [c.rx_frames, c.tx_frames, c.rx_bytes, c.tx_bytes].into_iter().enumerate() {
            stats[4 * k..4 * k + 4].copy_from_slice(&(v as u32).to_ne_bytes());
        }
        self.raw(&m)
            .attr(IFLA_IFNAME, &name)
            .attr(IFLA_TXQLEN, &1000u32.to_ne_bytes())
            .attr(IFLA_OPERSTATE, &[if lo { IF_OPER_UNKNOWN } else { IF_OPER_UP }])
            .attr(IFLA_MTU, &(if lo { 65536u32 } else { 1500 }).to_ne_bytes())
            .attr(IFLA_ADDRESS, &i.mac.unwrap_or([0; 6]))
            .attr(IFLA_BROADCAST, &if lo { [0; 6] } else { [0xff; 6] })
            .attr(IFLA_STATS, &stats);
    }

    /// `struct ifaddrmsg` and the attributes of interface `i`'s IPv4 address.
    fn address(&mut self, i: &Interface, index: u32) {
        let lo = i.mac.is_none();
        let mut m = [0u8; 8];
        m[0] = AF_INET;
        m[1] = i.prefix;
        m[2] = IFA_F_PERMANENT as u8;
        m[3] = if lo { RT_SCOPE_HOST } else { RT_SCOPE_UNIVERSE };
        m[4..8].copy_from_slice(&index.to_ne_bytes());
        let mut name = i.name.to_vec();
        name.push(0);
        self.raw(&m).attr(IFA_ADDRESS, &i.addr).attr(IFA_LOCAL, &i.addr);
        if !lo {
            let b = u32::from_be_bytes(i.addr) | !u32::from_be_bytes(mask(i.prefix));
            self.attr(IFA_BROADCAST, &b.to_be_bytes());
        }
        self.attr(IFA_LABEL, &name).attr(IFA_FLAGS, &IFA_F_PERMANENT.to_ne_bytes());
    }

    /// `struct ifaddrmsg` and the attributes of `::1/128` on loopback
    /// (index `index`), lifetimes forever as Linux gives them.
    fn loopback6(&mut self, index: u32) {
        let mut m = [0u8; 8];
        m[0] = AF_INET6;
        m[1] = 128;
        m[2] = IFA_F_PERMANENT as u8;
        m[3] = RT_SCOPE_HOST;
        m[4..8].copy_from_slice(&index.to_ne_bytes());
        let mut cache = [0u8; 16];
        cache[..8].copy_from_slice(&[0xff; 8]);
        self.raw(&m)
            .attr(IFA_ADDRESS, &core::net::Ipv6Addr::LOCALHOST.octets())
            .attr(IFA_CACHEINFO, &cache)
            .attr(IFA_FLAGS, &IFA_F_PERMANENT.to_ne_bytes());
    }
}
