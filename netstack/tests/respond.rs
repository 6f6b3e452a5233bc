//! The idle machine's responder (`netstack::respond`, run by `netd`): what
//! it answers, and every way a frame is refused.

use netstack::respond::{answer, internet_checksum, Refused, ARP_FRAME};

const MAC: [u8; 6] = [0x52, 0x54, 0, 0x12, 0x34, 0x56];
const IP: [u8; 4] = [10, 0, 2, 15];
const PEER_MAC: [u8; 6] = [0x52, 0x54, 0, 0x12, 0x34, 0x57];
const PEER: [u8; 4] = [10, 0, 2, 16];

fn arp_request(target: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0xFF; 6];
    f.extend_from_slice(&PEER_MAC);
    f.extend_from_slice(&[8, 6, 0, 1, 8, 0, 6, 4, 0, 1]);
    f.extend_from_slice(&PEER_MAC);
    f.extend_from_slice(&PEER);
    f.extend_from_slice(&[0; 6]);
    f.extend_from_slice(&target);
    f
}

fn echo_request(dst: [u8; 4], data: &[u8]) -> Vec<u8> {
    let mut f = MAC.to_vec();
    f.extend_from_slice(&PEER_MAC);
    f.extend_from_slice(&[8, 0]);
    let total = (20 + 8 + data.len()) as u16;
    let mut ip = vec![0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, 1, 0, 0];
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&PEER);
    ip.extend_from_slice(&dst);
    let sum = internet_checksum(&ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&ip);
    let mut icmp = vec![8, 0, 0, 0, 0xAB, 0xCD, 0, 7];
    icmp.extend_from_slice(data);
    let sum = internet_checksum(&icmp);
    icmp[2..4].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&icmp);
    f
}

fn respond(frame: &[u8]) -> Result<Vec<u8>, Refused> {
    let mut out = [0u8; 2048];
    answer(frame, MAC, IP, &mut out).map(|n| out[..n].to_vec())
}

#[test]
fn answers_arp_for_our_address() {
    let r = respond(&arp_request(IP)).expect("answered");
    assert_eq!(r.len(), ARP_FRAME);
    assert_eq!(r[0..6], PEER_MAC, "to the asker");
    assert_eq!(r[6..12], MAC, "from us");
    assert_eq!(r[20..22], [0, 2], "a reply");
    assert_eq!(r[22..28], MAC);
    assert_eq!(r[28..32], IP);
    assert_eq!(r[32..38], PEER_MAC);
    assert_eq!(r[38..42], PEER);
}

#[test]
fn answers_echo_with_the_same_data() {
    let data: Vec<u8> = (0..56).collect();
    let r = respond(&echo_request(IP, &data)).expect("answered");
    assert_eq!(r[0..6], PEER_MAC);
    assert_eq!(r[6..12], MAC);
    let ip = &r[14..34];
    assert_eq!(internet_checksum(ip), 0, "IP header checksum");
    assert_eq!(ip[9], 1);
    assert_eq!(ip[12..16], IP);
    assert_eq!(ip[16..20], PEER);
    assert_eq!(usize::from(u16::from_be_bytes([ip[2], ip[3]])), 20 + 8 + data.len());
    let icmp = &r[34..];
    assert_eq!(icmp[0], 0, "echo reply");
    assert_eq!(icmp[4..8], [0xAB, 0xCD, 0, 7], "identifier and sequence kept");
    assert_eq!(icmp[8..], data[..]);
    assert_eq!(internet_checksum(icmp), 0, "ICMP checksum");
}

#[test]
fn refuses_with_a_reason() {
    let mut cases: Vec<(&str, Vec<u8>, Refused)> = vec![
        ("empty", vec![], Refused::Truncated),
        ("ARP for another", arp_request(PEER), Refused::NotOurs),
        ("echo to another", echo_request(PEER, b"x"), Refused::NotOurs),
    ];
    let mut reply = arp_request(IP);
    reply[21] = 2;
    cases.push(("ARP reply", reply, Refused::NotArpRequest));
    let mut v6 = echo_request(IP, b"x");
    v6[12..14].copy_from_slice(&[0x86, 0xDD]);
    cases.push(("IPv6", v6, Refused::Protocol));
    let mut ihl = echo_request(IP, b"x");
    ihl[14] = 0x44;
    cases.push(("IHL 4", ihl, Refused::BadHeader));
    let mut long = echo_request(IP, b"x");
    long[16..18].copy_from_slice(&1000u16.to_be_bytes());
    cases.push(("total length past the frame", long, Refused::Truncated));
    let mut sum = echo_request(IP, b"x");
    sum[24] ^= 1;
    cases.push(("IP checksum", sum, Refused::BadIpChecksum));
    let mut icmp = echo_request(IP, b"hello");
    icmp[40] ^= 0x80;
    cases.push(("ICMP checksum", icmp, Refused::BadIcmpChecksum));
    let mut udp = echo_request(IP, b"x");
    udp[23] = 17;
    let s = internet_checksum(&{
        let mut h = udp[14..34].to_vec();
        h[10..12].fill(0);
        h
    });
    udp[24..26].copy_from_slice(&s.to_be_bytes());
    cases.push(("UDP", udp, Refused::NotEcho));
    let mut frag = echo_request(IP, b"x");
    frag[20] = 0x20; // more fragments
    let s = internet_checksum(&{
        let mut h = frag[14..34].to_vec();
        h[10..12].fill(0);
        h
    });
    frag[24..26].copy_from_slice(&s.to_be_bytes());
    cases.push(("fragment", frag, Refused::Fragment));
    for (what, frame, want) in cases {
        assert_eq!(respond(&frame), Err(want), "{what}");
    }
    let mut small = [0u8; 40];
    assert_eq!(answer(&arp_request(IP), MAC, IP, &mut small), Err(Refused::TooLong));
}

#[test]
fn no_truncation_is_answered() {
    for frame in [arp_request(IP), echo_request(IP, &[7; 100])] {
        for n in 0..frame.len() {
            let r = respond(&frame[..n]);
            assert!(r.is_err(), "answered {n} bytes of a {}-byte frame", frame.len());
        }
    }
}

/// 100,000 mutated frames: no panic, and whatever is answered is a
/// well-formed answer to a well-formed request.
#[test]
fn mutated_frames() {
    let mut x: u32 = 0x9E37_79B9;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let seeds = [arp_request(IP), echo_request(IP, &[1; 32])];
    let (mut answered, mut refused) = (0, 0);
    for i in 0..100_000 {
        let mut f = seeds[i % 2].clone();
        for _ in 0..1 + next() % 3 {
            let at = next() as usize % f.len();
            f[at] = next() as u8;
        }
        if next() % 4 == 0 {
            f.truncate(next() as usize % (f.len() + 1));
        }
        match respond(&f) {
            Ok(r) if r[12..14] == [8, 6] => {
                assert_eq!(r[38..42], f[28..32]);
                answered += 1;
            }
            Ok(r) => {
                assert_eq!(internet_checksum(&r[14..34]), 0);
                assert_eq!(internet_checksum(&r[34..]), 0);
                // Only an intact request is answered.
                let header = usize::from(f[14] & 0xF) * 4;
                let total = usize::from(u16::from_be_bytes([f[16], f[17]]));
                assert_eq!(internet_checksum(&f[14..14 + header]), 0, "IP header of an answered request");
                assert_eq!(internet_checksum(&f[14 + header..14 + total]), 0, "ICMP of an answered request");
                answered += 1;
            }
            Err(_) => refused += 1,
        }
    }
    assert!(answered > 1000 && refused > 10_000, "answered {answered}, refused {refused}");
}
