//! Just enough parsing to find which connection a frame belongs to, with
//! every length checked; smoltcp parses (and validates) the rest.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What the dispatcher needs from a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// TCP segment: source, destination, whether it is a bare SYN, and
    /// whether it carries a FIN.
    Tcp {
        src: (IpAddr, u16),
        dst: (IpAddr, u16),
        syn: bool,
        fin: bool,
    },
    Udp {
        src: (IpAddr, u16),
        dst: (IpAddr, u16),
    },
    /// ARP, ICMP, fragments, other protocols, anything malformed: only
    /// the interface looks at it.
    Other,
}

const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86dd;

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn addr<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at + N)?.try_into().ok()
}

/// An Ethernet frame.
pub fn ethernet(frame: &[u8]) -> Kind {
    match be16(frame, 12) {
        Some(ETH_IPV4 | ETH_IPV6) => ip(frame.get(14..).unwrap_or(&[])),
        _ => Kind::Other,
    }
}

/// A received packet's hop limit (TTL) and traffic class (TOS), which
/// smoltcp does not report, as smoltcp's packet metadata carries them to
/// the datagram: bit 16 set, the class in bits 8..16, the hop limit in
/// 0..8. `eth`: `frame` has an Ethernet header.
pub fn traffic_id(frame: &[u8], eth: bool) -> u32 {
    let p = if eth { frame.get(14..).unwrap_or(&[]) } else { frame };
    let (hops, class) = match (p.first().map(|v| v >> 4), p.get(..9)) {
        (Some(4), Some(h)) => (h[8], h[1]),
        (Some(6), Some(h)) => (h[7], h[0] << 4 | h[1] >> 4),
        _ => return 0,
    };
    1 << 16 | u32::from(class) << 8 | u32::from(hops)
}

/// The (hop limit, traffic class) `traffic_id` put in `id`, if any.
pub fn traffic(id: u32) -> Option<(u8, u8)> {
    (id & 1 << 16 != 0).then_some((id as u8, (id >> 8) as u8))
}

pub fn is_arp(frame: &[u8]) -> bool {
    be16(frame, 12) == Some(0x0806)
}

/// An IP packet of either version.
pub fn ip(p: &[u8]) -> Kind {
    match p.first().map(|v| v >> 4) {
        Some(4) => ipv4(p),
        Some(6) => ipv6(p).unwrap_or(Kind::Other),
        _ => Kind::Other,
    }
}

/// An IPv4 packet.
pub fn ipv4(p: &[u8]) -> Kind {
    ipv4_inner(p).unwrap_or(Kind::Other)
}

/// An IPv6 packet whose next header is TCP or UDP (extension headers,
/// which this stack never sends, go to the interface).
fn ipv6(p: &[u8]) -> Option<Kind> {
    let src = IpAddr::V6(Ipv6Addr::from(addr::<16>(p, 8)?));
    let dst = IpAddr::V6(Ipv6Addr::from(addr::<16>(p, 24)?));
    transport(*p.get(6)?, src, dst, p.get(40..)?)
}

fn ipv4_inner(p: &[u8]) -> Option<Kind> {
    let vihl = *p.first()?;
    let ihl = usize::from(vihl & 0x0f) * 4;
    if vihl >> 4 != 4 || ihl < 20 || p.len() < ihl {
        return None;
    }
    // Fragments (offset or more-fragments set) go to the interface.
    if be16(p, 6)? & 0x3fff != 0 {
        return None;
    }
    let src = IpAddr::V4(Ipv4Addr::from(addr::<4>(p, 12)?));
    let dst = IpAddr::V4(Ipv4Addr::from(addr::<4>(p, 16)?));
    transport(p[9], src, dst, p.get(ihl..)?)
}

/// The TCP or UDP header `l4` of protocol `proto`.
fn transport(proto: u8, src: IpAddr, dst: IpAddr, l4: &[u8]) -> Option<Kind> {
    let ports = (be16(l4, 0)?, be16(l4, 2)?);
    match proto {
        6 => {
            let flags = *l4.get(13)?;
            let syn = flags & 0x02 != 0 && flags & 0x10 == 0;
            let fin = flags & 0x01 != 0;
            Some(Kind::Tcp { src: (src, ports.0), dst: (dst, ports.1), syn, fin })
        }
        17 => Some(Kind::Udp { src: (src, ports.0), dst: (dst, ports.1) }),
        _ => None,
    }
}
