//! 100,000 malformed frames into a stack that serves a connection, a
//! listening port and a UDP port, each also classified by the packet
//! filters that would guard it in the kernel: no panic, a SYN flood stays
//! within the backlog, and afterwards the connection still moves data
//! intact and the port still accepts.

mod common;

use bpf::gen::Rng;
use common::*;
use dpf::pattern::{Pattern, IPPROTO_TCP, IPPROTO_UDP};
use dpf::Demux;
use netstack::{Errno, SockType};
use std::net::Ipv4Addr;

fn sum(data: &[u8], mut acc: u32) -> u32 {
    for c in data.chunks(2) {
        acc += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// Recomputes the IPv4 and TCP/UDP checksums, so that a mutated frame
/// gets past them into the protocol code.
fn fix_checksums(f: &mut [u8]) {
    if f.len() < 34 || f[12..14] != [8, 0] {
        return;
    }
    let ihl = usize::from(f[14] & 0xf) * 4;
    if ihl < 20 || f.len() < 14 + ihl {
        return;
    }
    f[24..26].fill(0);
    let c = fold(sum(&f[14..14 + ihl], 0));
    f[24..26].copy_from_slice(&c.to_be_bytes());
    let total = usize::from(u16::from_be_bytes([f[16], f[17]]));
    let end = (14 + total).min(f.len());
    let l4 = 14 + ihl;
    let at = match f[23] {
        6 => 16,
        17 => 6,
        _ => return,
    };
    if end < l4 + at + 2 {
        return;
    }
    f[l4 + at..l4 + at + 2].fill(0);
    let mut pseudo = sum(&f[26..34], 0) + u32::from(f[23]) + (end - l4) as u32;
    pseudo = sum(&f[l4..end], pseudo);
    f[l4 + at..l4 + at + 2].copy_from_slice(&fold(pseudo).to_be_bytes());
}

#[test]
fn a_hundred_thousand_malformed_frames() {
    let (mut a, mut b) = stacks(Faults::default(), 21);
    let mut clock = Clock { now: 0 };
    let l = b.socket(SockType::Stream);
    b.bind(l, sa(Ipv4Addr::UNSPECIFIED, 80)).unwrap();
    b.listen(l, 16).unwrap();
    let u = b.socket(SockType::Datagram);
    b.bind(u, sa(Ipv4Addr::UNSPECIFIED, 53)).unwrap();
    let c = a.socket(SockType::Stream);
    let _ = a.connect(c, sa(IP_B, 80));
    clock.run(&mut a, &mut b, 20);
    let (s, _) = b.accept(l).unwrap();
    let cport = a.local_addr(c).unwrap().port();
    // Seeds: the frames of a short exchange, as they reach B.
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    let ua = a.socket(SockType::Datagram);
    for i in 0..20u8 {
        a.send(c, &[i; 100]).unwrap();
        a.send_to(ua, &[i; 30], sa(IP_B, 53)).unwrap();
        for _ in 0..5 {
            a.poll(clock.now);
            seeds.extend(b.link().rx.borrow().iter().cloned());
            b.poll(clock.now);
            clock.now += 1;
        }
    }
    // What Nagle still holds back for a delayed ACK arrives, then is drained.
    clock.run(&mut a, &mut b, 2 * netstack::opts::ACK_DELAY_MS);
    while b.recv(s, &mut [0; 4096], false).is_ok() {}
    while b.recv_from(u, &mut [0; 4096], false).is_ok() {}
    assert!(seeds.len() >= 20, "{} seeds", seeds.len());
    // The kernel's view: B's filters.
    let mut demux = Demux::new(MAC_B, 3);
    let ip_b = IP_B.octets();
    demux.install(1, 1, &Pattern::new().ipv4(IPPROTO_TCP).dst_ip(ip_b).dst_port(80).program()).unwrap();
    demux.install(1, 1, &Pattern::new().ipv4(IPPROTO_UDP).dst_ip(ip_b).dst_port(53).program()).unwrap();
    demux.install(1, 1, &Pattern::new().arp_target(ip_b).program()).unwrap();

    let mut rng = Rng::new(0xf00d);
    let n = 100_000;
    let mut synflood = 0;
    for i in 0..n {
        let mut f = seeds[rng.below(seeds.len() as u64) as usize].clone();
        match rng.below(8) {
            0 => f.truncate(rng.below(f.len() as u64) as usize),
            1 => f.extend((0..rng.below(100)).map(|_| rng.below(256) as u8)),
            2 => f = (0..rng.below(1600)).map(|_| rng.below(256) as u8).collect(),
            3 => {
                // A SYN from a new peer: a flood.
                if f.len() >= 54 && f[23] == 6 {
                    f[26..30].copy_from_slice(&[10, 0, 3, rng.below(250) as u8]);
                    f[34..36].copy_from_slice(&(rng.below(60000) as u16 + 1024).to_be_bytes());
                    f[47] = 0x02;
                    synflood += 1;
                }
            }
            4 => {
                // Fragments, options, zero windows, shifted sequence numbers.
                if f.len() >= 54 {
                    match rng.below(4) {
                        0 => f[20] |= 0x20,
                        1 => f[14] = 0x40 | (5 + rng.below(11) as u8),
                        2 => f[48..50].fill(0),
                        _ => {
                            let seq = u32::from_be_bytes(f[38..42].try_into().unwrap());
                            let shift = rng.below(3000) as u32;
                            f[38..42].copy_from_slice(&seq.wrapping_sub(shift).to_be_bytes());
                        }
                    }
                }
            }
            _ => {
                for _ in 0..1 + rng.below(4) {
                    if !f.is_empty() {
                        let at = rng.below(f.len().min(64) as u64) as usize;
                        f[at] = rng.below(256) as u8;
                    }
                }
            }
        }
        // Valid checksums get junk into the protocol code, except on the
        // live connection's own 4-tuple: an on-path attacker who knows it
        // can reset or corrupt any TCP connection, which no stack prevents.
        let live =
            f.len() >= 38 && f[23] == 6 && f[26..30] == IP_A.octets() && f[34..36] == cport.to_be_bytes();
        if rng.chance(70) && !live {
            fix_checksums(&mut f);
        }
        let _ = demux.classify(&f);
        let _ = demux.check_transmit(1, &f);
        b.link().rx.borrow_mut().push_back(f);
        if i % 64 == 63 {
            clock.now += 1;
            while b.poll(clock.now) {}
            a.poll(clock.now);
            b.link().tx.borrow_mut().retain(|_| false); // B's answers to the junk go nowhere
            assert!(b.connections() <= 16 + 4, "backlog exceeded: {}", b.connections());
        }
    }
    let st = demux.stats();
    assert_eq!(st.frames, n as u64);
    assert!(synflood > 3000 && b.stats().syn_dropped > 1000, "{synflood} {:?}", b.stats());
    println!("{n} frames: {} unclaimed by filters, stack {:?}", st.unclaimed, b.stats());

    // The flood's handshakes die away; the old connection still works.
    while b.accept(l).is_ok() {}
    clock.run(&mut a, &mut b, 200_000);
    let mut got = Vec::new();
    let msg: Vec<u8> = (0..100_000u32).map(|i| pattern(9, u64::from(i))).collect();
    let mut sent = 0;
    for _ in 0..100_000 {
        if sent < msg.len() {
            sent += a.send(c, &msg[sent..]).unwrap_or(0);
        }
        let mut buf = [0u8; 8192];
        match b.recv(s, &mut buf, false) {
            Ok(k) => got.extend_from_slice(&buf[..k]),
            Err(Errno::EAGAIN) => {}
            Err(e) => panic!("{e:?}"),
        }
        if got.len() == msg.len() {
            break;
        }
        clock.step(&mut a, &mut b, true);
    }
    assert!(got == msg, "the connection survived intact ({} of {} bytes)", got.len(), msg.len());
    let c2 = a.socket(SockType::Stream);
    let _ = a.connect(c2, sa(IP_B, 80));
    clock.run(&mut a, &mut b, 50);
    assert!(b.accept(l).is_ok(), "the port still accepts");
}
