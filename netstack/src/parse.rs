//! Just enough parsing to find which connection a frame belongs to, with
//! every length checked; smoltcp parses (and validates) the rest.

use smoltcp::wire::Ipv4Address;

/// What the dispatcher needs from a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// TCP segment: source, destination, and whether it is a bare SYN.
    Tcp {
        src: (Ipv4Address, u16),
        dst: (Ipv4Address, u16),
        syn: bool,
    },
    Udp {
        src: (Ipv4Address, u16),
        dst: (Ipv4Address, u16),
    },
    /// ARP, ICMP, fragments, other protocols, anything malformed: only
    /// the interface looks at it.
    Other,
}

const ETH_IPV4: u16 = 0x0800;

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn addr(b: &[u8], at: usize) -> Option<Ipv4Address> {
    let x: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(Ipv4Address::from(x))
}

/// An Ethernet frame.
pub fn ethernet(frame: &[u8]) -> Kind {
    match be16(frame, 12) {
        Some(ETH_IPV4) => ipv4(frame.get(14..).unwrap_or(&[])),
        _ => Kind::Other,
    }
}

pub fn is_arp(frame: &[u8]) -> bool {
    be16(frame, 12) == Some(0x0806)
}

/// An IPv4 packet.
pub fn ipv4(p: &[u8]) -> Kind {
    ipv4_inner(p).unwrap_or(Kind::Other)
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
    let (src, dst) = (addr(p, 12)?, addr(p, 16)?);
    let l4 = p.get(ihl..)?;
    let ports = (be16(l4, 0)?, be16(l4, 2)?);
    match p[9] {
        6 => {
            let flags = *l4.get(13)?;
            let syn = flags & 0x02 != 0 && flags & 0x10 == 0;
            Some(Kind::Tcp { src: (src, ports.0), dst: (dst, ports.1), syn })
        }
        17 => Some(Kind::Udp { src: (src, ports.0), dst: (dst, ports.1) }),
        _ => None,
    }
}
