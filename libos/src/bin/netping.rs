//! Helper of the boot test `net_idle` (`xtask/src/nettest.rs`): the second
//! machine, at 10.0.2.16, on a point-to-point link with a machine where
//! only `netd` runs (10.0.2.15). It asks for the idle machine's MAC by
//! ARP (once a second, until that machine has booted), pings it five
//! times and checks each reply (identifier, sequence number, data, both
//! checksums), sends an echo request with a wrong checksum, which must go
//! unanswered, and one more, which must be answered.
#![no_std]
#![no_main]

use abi::dev::NET;
use abi::syscall::{CRED_SELF, NO_GUARD};
use dpf::pattern::{Pattern, IPPROTO_ICMP};
use libos::net::endpoint::Endpoint;
use libos::net::frame;
use user::{kinfo, println, sys};

const ME: [u8; 4] = [10, 0, 2, 16];
const IDLE: [u8; 4] = [10, 0, 2, 15];
const RINGS: u64 = 0x5000_0000;
const ID: u16 = 0x5EED;

fn fail(why: core::fmt::Arguments) -> ! {
    println!("netping: FAILED: {why}");
    sys::exit(1)
}

fn ticks_per_second() -> u64 {
    1_000_000_000 / kinfo::clock().tick_ns.max(1)
}

/// The idle machine's MAC: an ARP request from 10.0.2.16 once a second
/// for up to `secs` seconds.
fn resolve(ep: &mut Endpoint, mac: [u8; 6], secs: u64) -> Option<[u8; 6]> {
    let mut req = [0u8; 64];
    let n = user::net::arp_request(&mut req, mac, IDLE);
    req[28..32].copy_from_slice(&ME);
    let mut buf = [0u8; 2048];
    for _ in 0..secs {
        ep.send(&req[..n]).unwrap_or_else(|e| fail(format_args!("ARP request refused: {e:?}")));
        let deadline = kinfo::ticks() + ticks_per_second();
        while kinfo::ticks() < deadline {
            match ep.recv(&mut buf) {
                Some(k) => {
                    if let Some(m) = user::net::arp_reply_from(&buf[..k], IDLE) {
                        return (buf[32..38] == mac && buf[38..42] == ME).then_some(m);
                    }
                }
                None => {
                    let _ = ep.wait(deadline);
                }
            }
        }
    }
    None
}

fn data(seq: u16) -> [u8; 56] {
    core::array::from_fn(|i| (i as u16 * 7 + seq) as u8)
}

/// Whether `f` is the idle machine's correct reply to echo `seq`.
fn is_reply(f: &[u8], seq: u16) -> bool {
    let icmp = f.get(34..).unwrap_or(&[]);
    f.len() == 34 + 8 + 56
        && f[23] == IPPROTO_ICMP
        && f[26..30] == IDLE
        && f[30..34] == ME
        && frame::checksum(&f[14..34]) == 0
        && frame::checksum(icmp) == 0
        && icmp[0] == 0
        && icmp[4..6] == ID.to_be_bytes()
        && icmp[6..8] == seq.to_be_bytes()
        && icmp[8..] == data(seq)
}

fn ping(ep: &mut Endpoint, mac: [u8; 6], peer: [u8; 6], seq: u16, corrupt: bool) -> bool {
    let mut buf = [0u8; 128];
    let n = frame::echo_request(&mut buf, mac, peer, ME, IDLE, ID, seq, &data(seq));
    if corrupt {
        buf[36] ^= 0x55;
    }
    ep.send(&buf[..n]).unwrap_or_else(|e| fail(format_args!("echo request refused: {e:?}")));
    let deadline = kinfo::ticks() + 2 * ticks_per_second();
    ep.expect(deadline, |f| is_reply(f, seq))
}

fn main(_: u64) -> i32 {
    libos::private::init();
    let mac = sys::dev_info(NET).map(|i| i.mac).unwrap_or_else(|e| fail(format_args!("no NIC: {e:?}")));
    let mut ep = Endpoint::create(RINGS, 16, 2048, NO_GUARD, CRED_SELF)
        .unwrap_or_else(|e| fail(format_args!("no endpoint: {e:?}")));
    for p in [Pattern::new().arp_target(ME), Pattern::new().ipv4(IPPROTO_ICMP).dst_ip(ME)] {
        ep.filter(&p.program()).unwrap_or_else(|e| fail(format_args!("filter refused: {e:?}")));
    }
    let Some(peer) = resolve(&mut ep, mac, 240) else { fail(format_args!("no ARP reply from 10.0.2.15")) };
    println!("netping: the idle machine answered ARP");
    for seq in 1..=5 {
        if !ping(&mut ep, mac, peer, seq, false) {
            fail(format_args!("no correct reply to echo {seq}"));
        }
    }
    println!("netping: 5 echo replies, data and checksums intact");
    if ping(&mut ep, mac, peer, 6, true) {
        fail(format_args!("a request with a bad checksum was answered"));
    }
    if !ping(&mut ep, mac, peer, 7, false) {
        fail(format_args!("no reply after the bad request"));
    }
    println!("netping: a request with a bad checksum went unanswered, the next was answered");
    0
}

user::entry!(main);
