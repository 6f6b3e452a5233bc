//! Ethernet/IPv4/UDP frames built by hand, for the endpoint tests and
//! benchmarks (the library's TCP/IP is `netstack`).

/// Writes an Ethernet/IPv4/UDP frame carrying `payload` into `buf`; its
/// length. The IPv4 header checksum is filled in, the UDP one left 0.
#[allow(clippy::too_many_arguments)]
pub fn udp(
    buf: &mut [u8],
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    payload: &[u8],
) -> usize {
    let n = 42 + payload.len();
    let f = &mut buf[..n];
    f[0..6].copy_from_slice(&dst_mac);
    f[6..12].copy_from_slice(&src_mac);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip_len = (20 + 8 + payload.len()) as u16;
    f[14..34].copy_from_slice(&[0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    f[16..18].copy_from_slice(&ip_len.to_be_bytes());
    f[26..30].copy_from_slice(&src);
    f[30..34].copy_from_slice(&dst);
    let sum = checksum(&f[14..34]);
    f[24..26].copy_from_slice(&sum.to_be_bytes());
    f[34..36].copy_from_slice(&sport.to_be_bytes());
    f[36..38].copy_from_slice(&dport.to_be_bytes());
    f[38..40].copy_from_slice(&(8 + payload.len() as u16).to_be_bytes());
    f[40..42].fill(0);
    f[42..].copy_from_slice(payload);
    n
}

/// The Internet checksum of `b`.
pub fn checksum(b: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in b.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while s >> 16 != 0 {
        s = (s & 0xFFFF) + (s >> 16);
    }
    !(s as u16)
}
