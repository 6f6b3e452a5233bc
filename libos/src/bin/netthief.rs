//! Helper of `test_netfilter`: an environment that tries to steal, snoop
//! and spoof the traffic of its parent's endpoint. Argument: the NIC's
//! MAC in bits 0..48, the parent's endpoint id from bit 48. Exit code: a
//! bit per attack refused (and per thing it may do done), `ALL` when
//! every one came out right.
#![no_std]
#![no_main]

use abi::syscall::{CRED_SELF, NO_GUARD};
use abi::Error;
use dpf::pattern::{Pattern, IPPROTO_TCP, IPPROTO_UDP};
use libos::net::endpoint::Endpoint;
use libos::net::frame;
use user::{println, sys};

const OUR_IP: [u8; 4] = [10, 0, 2, 15];
const GATEWAY: [u8; 4] = [10, 0, 2, 2];
const GATEWAY_MAC: [u8; 6] = [0x52, 0x55, 10, 0, 2, 2];
const RINGS: u64 = 0x5000_0000;

fn check(bits: &mut i32, bit: i32, what: &str, ok: bool) {
    println!("netthief: {what}: {}", if ok { "ok" } else { "FAILED" });
    if ok {
        *bits |= bit;
    }
}

/// A frame from `mac`, from 10.0.2.15 port `sport` (protocol `proto`) to
/// the gateway's port 7.
fn frame(buf: &mut [u8], mac: [u8; 6], proto: u8, sport: u16) -> usize {
    let n = frame::udp(buf, mac, GATEWAY_MAC, OUR_IP, GATEWAY, sport, 7, b"not mine");
    buf[23] = proto;
    n
}

fn main(arg: u64) -> i32 {
    libos::private::init();
    let mac: [u8; 6] = core::array::from_fn(|i| (arg >> (8 * i)) as u8);
    let victim = arg >> 48;
    let mut bits = 0;
    let Ok(mut ep) = Endpoint::create(RINGS, 16, 2048, NO_GUARD, CRED_SELF) else {
        println!("netthief: no endpoint of its own");
        return 0;
    };
    let port80 = Pattern::new().ipv4(IPPROTO_TCP).dst_ip(OUR_IP).dst_port(80);
    check(
        &mut bits,
        1,
        "steal: a filter over its port 80",
        ep.filter(&port80.program()) == Err(Error::Claimed),
    );
    let conn = port80.clone().src_ip(GATEWAY).src_port(1234);
    check(
        &mut bits,
        2,
        "steal: a filter for one connection to it",
        ep.filter(&conn.program()) == Err(Error::Claimed),
    );
    // Snooping: a filter that accepts every frame (`r0 = 1; exit`).
    let all = [bpf::insn::Insn::new(0xb7, 0, 0, 0, 1), bpf::insn::Insn::new(0x95, 0, 0, 0, 0)];
    check(&mut bits, 4, "snoop: a filter that claims every frame", ep.filter(&all) == Err(Error::Claimed));
    let before = ep.stats().map(|s| s.filters).unwrap_or(0);
    let own = ep.filter(&Pattern::new().ipv4(IPPROTO_UDP).dst_ip(OUR_IP).dst_port(9999).program());
    let after = ep.stats().map(|s| s.filters).unwrap_or(0);
    check(&mut bits, 8, "its own UDP port 9999", own.is_ok() && after == before + 1);
    let mut buf = [0u8; 128];
    let n = frame(&mut buf, mac, IPPROTO_TCP, 80);
    let took = ep.send(&buf[..n]);
    let s = ep.stats().unwrap_or_default();
    check(&mut bits, 16, "spoof: a frame from its port 80", took == Ok(1) && s.refused == 1 && s.sent == 0);
    let n = frame(&mut buf, mac, IPPROTO_UDP, 9999);
    let took = ep.send(&buf[..n]);
    let s = ep.stats().unwrap_or_default();
    check(&mut bits, 32, "a frame from its own port", took == Ok(1) && s.sent == 1 && s.refused == 1);
    let n = frame(&mut buf, [2, 0, 0, 0, 0, 1], IPPROTO_UDP, 9999);
    let took = ep.send(&buf[..n]);
    let s = ep.stats().unwrap_or_default();
    check(&mut bits, 64, "spoof: another source MAC", took == Ok(1) && s.refused == 2);
    let denied = [
        sys::net_tx(victim, 1, CRED_SELF),
        sys::net_filter(victim, all.as_ptr() as u64, 2, CRED_SELF),
        sys::net_detach(victim, CRED_SELF),
        sys::net_stats(victim, CRED_SELF).map(|_| 0),
        sys::net_unfilter(victim, 0, CRED_SELF),
    ];
    check(&mut bits, 128, "its parent's endpoint", denied.iter().all(|r| *r == Err(Error::NotPermitted)));
    let raw = sys::net_send(0, 0, 60, 0);
    check(&mut bits, 256, "raw sends without the device capability", raw.is_err());
    bits
}

user::entry!(main);
