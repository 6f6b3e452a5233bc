//! Cheetah's TCP segments on the wire: parsing a received one (every
//! length and both checksums checked) and building one whose payload
//! checksum is given (from the file cache) rather than computed.

use alloc::vec::Vec;
use core::net::{Ipv4Addr, SocketAddrV4};

use crate::cksum::{fold, sum};

pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;

const ETH_HDR: usize = 14;
const IP_HDR: usize = 20;
const TCP_HDR: usize = 20;

/// Where a reply goes: its addresses, and for Ethernet the two MACs
/// (destination, source) taken from the segment it answers.
#[derive(Clone, Copy, Debug)]
pub struct Path {
    pub macs: Option<[u8; 12]>,
    pub local: SocketAddrV4,
    pub remote: SocketAddrV4,
}

/// A received segment.
#[derive(Debug)]
pub struct Seg<'a> {
    pub path: Path,
    pub seq: u32,
    pub ack: Option<u32>,
    pub flags: u8,
    pub wnd: u16,
    pub mss: Option<u16>,
    pub payload: &'a [u8],
}

impl Seg<'_> {
    /// Sequence space the segment takes (SYN and FIN count one).
    pub fn space(&self) -> u32 {
        self.payload.len() as u32 + u32::from(self.flags & SYN != 0) + u32::from(self.flags & FIN != 0)
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn ip(b: &[u8], at: usize) -> Ipv4Addr {
    Ipv4Addr::new(b[at], b[at + 1], b[at + 2], b[at + 3])
}

fn pseudo(src: Ipv4Addr, dst: Ipv4Addr, len: usize) -> u64 {
    let s = src.octets();
    let d = dst.octets();
    [u16::from_be_bytes([s[0], s[1]]), u16::from_be_bytes([s[2], s[3]])]
        .into_iter()
        .chain([u16::from_be_bytes([d[0], d[1]]), u16::from_be_bytes([d[2], d[3]])])
        .map(u64::from)
        .sum::<u64>()
        + 6
        + len as u64
}

/// A TCP segment in an Ethernet frame (`eth`) or a bare IPv4 packet;
/// `None` for anything malformed: short, not IPv4/TCP, a fragment, a
/// length that disagrees with the frame, a bad IP or TCP checksum.
pub fn parse(frame: &[u8], eth: bool) -> Option<Seg<'_>> {
    let (macs, p) = if eth {
        if frame.len() < ETH_HDR || be16(frame, 12) != 0x0800 {
            return None;
        }
        let mut m = [0u8; 12];
        m[..6].copy_from_slice(&frame[6..12]); // reply to the sender
        m[6..].copy_from_slice(&frame[..6]);
        (Some(m), &frame[ETH_HDR..])
    } else {
        (None, frame)
    };
    if p.len() < IP_HDR || p[0] >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(p[0] & 0xf) * 4;
    let total = usize::from(be16(p, 2));
    if ihl < IP_HDR || total < ihl + TCP_HDR || total > p.len() || p[9] != 6 || be16(p, 6) & 0x3fff != 0 {
        return None;
    }
    if fold(u64::from(sum(&p[..ihl]))) != 0xffff {
        return None;
    }
    let (src, dst) = (ip(p, 12), ip(p, 16));
    let t = &p[ihl..total];
    let doff = usize::from(t[12] >> 4) * 4;
    if doff < TCP_HDR || doff > t.len() {
        return None;
    }
    if fold(pseudo(src, dst, t.len()) + u64::from(sum(t))) != 0xffff {
        return None;
    }
    let flags = t[13];
    Some(Seg {
        path: Path {
            macs,
            local: SocketAddrV4::new(dst, be16(t, 2)),
            remote: SocketAddrV4::new(src, be16(t, 0)),
        },
        seq: be32(t, 4),
        ack: (flags & ACK != 0).then(|| be32(t, 8)),
        flags,
        wnd: be16(t, 14),
        mss: mss_option(&t[TCP_HDR..doff]),
        payload: &t[doff..],
    })
}

/// The MSS option among `opts`, if present and well formed.
fn mss_option(mut opts: &[u8]) -> Option<u16> {
    while let [kind, rest @ ..] = opts {
        match kind {
            0 => return None,
            1 => opts = rest,
            _ => {
                let len = usize::from(*rest.first()?);
                if len < 2 || len > opts.len() {
                    return None;
                }
                if *kind == 2 && len == 4 {
                    return Some(be16(opts, 2));
                }
                opts = &opts[len..];
            }
        }
    }
    None
}

/// What goes into one outgoing segment's header.
pub struct Header {
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub wnd: u16,
    /// Send our MSS option (the SYN-ACK).
    pub mss: Option<u16>,
    pub ip_id: u16,
}

/// The frame (or packet) for `h` with `payload`, whose one's complement
/// sum is `payload_sum`: the checksum is the header's sum folded into
/// it, the payload's bytes are copied once, into the frame.
pub fn build(path: &Path, h: &Header, payload: &[u8], payload_sum: u32) -> Vec<u8> {
    let eth = if path.macs.is_some() { ETH_HDR } else { 0 };
    let tcp_len = TCP_HDR + if h.mss.is_some() { 4 } else { 0 };
    let total = IP_HDR + tcp_len + payload.len();
    let mut f = Vec::with_capacity(eth + total);
    if let Some(m) = path.macs {
        f.extend_from_slice(&m);
        f.extend_from_slice(&0x0800u16.to_be_bytes());
    }
    let (src, dst) = (*path.local.ip(), *path.remote.ip());
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&(total as u16).to_be_bytes());
    f.extend_from_slice(&h.ip_id.to_be_bytes());
    f.extend_from_slice(&[0x40, 0, 64, 6, 0, 0]); // DF, TTL 64, TCP
    f.extend_from_slice(&src.octets());
    f.extend_from_slice(&dst.octets());
    let ck = !fold(u64::from(sum(&f[eth..eth + IP_HDR])));
    f[eth + 10..eth + 12].copy_from_slice(&ck.to_be_bytes());
    let t = f.len();
    f.extend_from_slice(&path.local.port().to_be_bytes());
    f.extend_from_slice(&path.remote.port().to_be_bytes());
    f.extend_from_slice(&h.seq.to_be_bytes());
    f.extend_from_slice(&h.ack.to_be_bytes());
    f.extend_from_slice(&[((tcp_len / 4) as u8) << 4, h.flags]);
    f.extend_from_slice(&h.wnd.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    if let Some(mss) = h.mss {
        f.extend_from_slice(&[2, 4]);
        f.extend_from_slice(&mss.to_be_bytes());
    }
    let head = u64::from(sum(&f[t..]));
    let ck = !fold(pseudo(src, dst, tcp_len + payload.len()) + head + u64::from(payload_sum));
    f[t + 16..t + 18].copy_from_slice(&ck.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> Vec<u8> {
        let path = Path {
            macs: Some([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
            local: SocketAddrV4::new(Ipv4Addr::new(10, 0, 2, 15), 80),
            remote: SocketAddrV4::new(Ipv4Addr::new(10, 0, 2, 2), 4000),
        };
        let h = Header { seq: 7, ack: 9, flags: SYN | ACK, wnd: 100, mss: Some(1460), ip_id: 3 };
        let payload = b"hello, odd length";
        build(&path, &h, payload, sum(payload))
    }

    #[test]
    fn built_segments_parse_back_with_both_checksums_right() {
        let f = frame();
        let s = parse(&f, true).expect("valid");
        // Parsed from the receiver's side: our source is its remote.
        assert_eq!((s.seq, s.ack, s.flags, s.wnd, s.mss), (7, Some(9), SYN | ACK, 100, Some(1460)));
        assert_eq!(s.payload, b"hello, odd length");
        assert_eq!(s.path.local.port(), 4000);
        assert_eq!(s.path.remote.port(), 80);
        assert!(parse(&f[14..], false).is_some());
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_refused() {
        let f = frame();
        for n in 0..f.len() {
            assert!(parse(&f[..n], true).is_none(), "cut at {n}");
        }
        // Past the Ethernet header, any change breaks a checksum, a
        // length or the protocol (the MAC bytes are not covered).
        for i in 14..f.len() {
            let mut g = f.clone();
            g[i] ^= 0x20;
            assert!(parse(&g, true).is_none(), "byte {i}");
        }
    }
}
