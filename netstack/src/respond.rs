//! What an idle machine answers (issue 24 §1: "ARP, ICMP echo ... are
//! answered by a library environment, not by the kernel"): an ARP request
//! for our address and an ICMP echo request to it, each answered from the
//! frame alone, with no state. `netd` (`libos/src/bin/netd.rs`) runs this
//! on its packet endpoint; every frame it does not answer is refused with
//! a [`Refused`] reason, which it counts.

pub use crate::cksum::internet_checksum;

const ETH_IPV4: [u8; 2] = [0x08, 0x00];
const ETH_ARP: [u8; 2] = [0x08, 0x06];
/// Ethernet header bytes.
const ETH: usize = 14;
/// An ARP request or reply for IPv4 over Ethernet, with its Ethernet header.
pub const ARP_FRAME: usize = ETH + 28;
const IPPROTO_ICMP: u8 = 1;
const ICMP_ECHO_REPLY: u8 = 0;
const ICMP_ECHO_REQUEST: u8 = 8;

/// Why a frame got no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Shorter than its headers say (or than any header).
    Truncated,
    /// Neither ARP nor IPv4.
    Protocol,
    /// An ARP frame that is not an IPv4-over-Ethernet request.
    NotArpRequest,
    /// ARP or IPv4 for another address.
    NotOurs,
    /// IPv4 header: version, header length or total length impossible.
    BadHeader,
    /// IPv4 header checksum wrong.
    BadIpChecksum,
    /// A fragment: an echo is answered only whole.
    Fragment,
    /// IPv4, but not an ICMP echo request.
    NotEcho,
    /// ICMP checksum wrong.
    BadIcmpChecksum,
    /// The answer does not fit the buffer given.
    TooLong,
}

impl Refused {
    pub const ALL: [Refused; 10] = [
        Refused::Truncated,
        Refused::Protocol,
        Refused::NotArpRequest,
        Refused::NotOurs,
        Refused::BadHeader,
        Refused::BadIpChecksum,
        Refused::Fragment,
        Refused::NotEcho,
        Refused::BadIcmpChecksum,
        Refused::TooLong,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Refused::Truncated => "truncated",
            Refused::Protocol => "protocol",
            Refused::NotArpRequest => "not-arp-request",
            Refused::NotOurs => "not-ours",
            Refused::BadHeader => "bad-header",
            Refused::BadIpChecksum => "bad-ip-checksum",
            Refused::Fragment => "fragment",
            Refused::NotEcho => "not-echo",
            Refused::BadIcmpChecksum => "bad-icmp-checksum",
            Refused::TooLong => "too-long",
        }
    }
}

/// The answer to `frame` for the machine at `mac`/`ip`, written to the
/// start of `out`: its length, or why there is none.
pub fn answer(frame: &[u8], mac: [u8; 6], ip: [u8; 4], out: &mut [u8]) -> Result<usize, Refused> {
    if frame.len() < ETH {
        return Err(Refused::Truncated);
    }
    match [frame[12], frame[13]] {
        ETH_ARP => arp(frame, mac, ip, out),
        ETH_IPV4 => echo(frame, mac, ip, out),
        _ => Err(Refused::Protocol),
    }
}

fn arp(frame: &[u8], mac: [u8; 6], ip: [u8; 4], out: &mut [u8]) -> Result<usize, Refused> {
    if frame.len() < ARP_FRAME {
        return Err(Refused::Truncated);
    }
    // Ethernet, IPv4, 6- and 4-byte addresses, request.
    if frame[14..22] != [0, 1, 8, 0, 6, 4, 0, 1] {
        return Err(Refused::NotArpRequest);
    }
    if frame[38..42] != ip {
        return Err(Refused::NotOurs);
    }
    let out = out.get_mut(..ARP_FRAME).ok_or(Refused::TooLong)?;
    let (asker_mac, asker_ip) = (&frame[22..28], &frame[28..32]);
    out[0..6].copy_from_slice(asker_mac);
    out[6..12].copy_from_slice(&mac);
    out[12..14].copy_from_slice(&ETH_ARP);
    out[14..22].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 2]);
    out[22..28].copy_from_slice(&mac);
    out[28..32].copy_from_slice(&ip);
    out[32..38].copy_from_slice(asker_mac);
    out[38..42].copy_from_slice(asker_ip);
    Ok(ARP_FRAME)
}

fn echo(frame: &[u8], mac: [u8; 6], ip: [u8; 4], out: &mut [u8]) -> Result<usize, Refused> {
    let packet = &frame[ETH..];
    if packet.len() < 20 {
        return Err(Refused::Truncated);
    }
    let header = usize::from(packet[0] & 0xF) * 4;
    let total = usize::from(u16::from_be_bytes([packet[2], packet[3]]));
    if packet[0] >> 4 != 4 || header < 20 || total < header {
        return Err(Refused::BadHeader);
    }
    if total > packet.len() {
        return Err(Refused::Truncated);
    }
    if internet_checksum(&packet[..header]) != 0 {
        return Err(Refused::BadIpChecksum);
    }
    if packet[16..20] != ip {
        return Err(Refused::NotOurs);
    }
    // More fragments, or an offset.
    if u16::from_be_bytes([packet[6], packet[7]]) & 0x3FFF != 0 {
        return Err(Refused::Fragment);
    }
    let icmp = &packet[header..total];
    if packet[9] != IPPROTO_ICMP || icmp.len() < 8 || icmp[0] != ICMP_ECHO_REQUEST || icmp[1] != 0 {
        return Err(Refused::NotEcho);
    }
    if internet_checksum(icmp) != 0 {
        return Err(Refused::BadIcmpChecksum);
    }
    // The reply carries no IP options: a header of 20 bytes.
    let len = ETH + 20 + icmp.len();
    let out = out.get_mut(..len).ok_or(Refused::TooLong)?;
    out[0..6].copy_from_slice(&frame[6..12]);
    out[6..12].copy_from_slice(&mac);
    out[12..14].copy_from_slice(&ETH_IPV4);
    let reply_ip = &mut out[ETH..ETH + 20];
    reply_ip[..12].copy_from_slice(&[0x45, 0, 0, 0, 0, 0, 0, 0, 64, IPPROTO_ICMP, 0, 0]);
    reply_ip[2..4].copy_from_slice(&((20 + icmp.len()) as u16).to_be_bytes());
    reply_ip[4..6].copy_from_slice(&packet[4..6]);
    reply_ip[12..16].copy_from_slice(&ip);
    reply_ip[16..20].copy_from_slice(&packet[12..16]);
    let sum = internet_checksum(reply_ip);
    reply_ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let reply_icmp = &mut out[ETH + 20..];
    reply_icmp.copy_from_slice(icmp);
    reply_icmp[0] = ICMP_ECHO_REPLY;
    reply_icmp[2..4].fill(0);
    let sum = internet_checksum(reply_icmp);
    reply_icmp[2..4].copy_from_slice(&sum.to_be_bytes());
    Ok(len)
}
