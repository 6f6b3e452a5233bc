//! ARP by hand, for the device clients' tests and benchmarks (no network
//! stack here: the library OS's comes with the packet-filter issue).

const OUR_IP: [u8; 4] = [10, 0, 2, 15];
const ETHERTYPE_ARP: u16 = 0x0806;
const REPLY: u16 = 2;
/// Bytes of an ARP request in an Ethernet frame.
pub const ARP_LEN: usize = 42;

/// Writes an ARP request from `mac` (10.0.2.15) for `ip` at the start of
/// `buf`; its length.
pub fn arp_request(buf: &mut [u8], mac: [u8; 6], ip: [u8; 4]) -> usize {
    let p = &mut buf[..ARP_LEN];
    p[0..6].copy_from_slice(&[0xFF; 6]);
    p[6..12].copy_from_slice(&mac);
    p[12..14].copy_from_slice(&ETHERTYPE_ARP.to_be_bytes());
    p[14..22].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    p[22..28].copy_from_slice(&mac);
    p[28..32].copy_from_slice(&OUR_IP);
    p[32..38].fill(0);
    p[38..42].copy_from_slice(&ip);
    ARP_LEN
}

/// The sender's MAC if `frame` is an ARP reply from `ip`.
pub fn arp_reply_from(frame: &[u8], ip: [u8; 4]) -> Option<[u8; 6]> {
    let be16 = |o: usize| u16::from_be_bytes([frame[o], frame[o + 1]]);
    if frame.len() < ARP_LEN || be16(12) != ETHERTYPE_ARP || be16(20) != REPLY || frame[28..32] != ip {
        return None;
    }
    frame[22..28].try_into().ok()
}
