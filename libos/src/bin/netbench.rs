//! The network's benchmarks (`cargo xtask bench`, issue 24): CPU cost per
//! packet through a packet endpoint, and how demultiplexing scales with
//! the number of filters. `init=netbench` prints the harness's `BENCH`
//! lines; under `-icount` the TSC counts guest instructions, and the time
//! the processor spent halted waiting for QEMU's network (the gateway's
//! answers) is left out, as in `devbench`.
//!
//! - `ep_tx`: per frame sent: a UDP frame written into the transmit ring
//!   and handed to the kernel in batches (`net_tx`: copied out, checked by
//!   its mirror against the endpoint's filters, given to the driver).
//! - `ep_ping_N`: per ICMP echo round trip with the gateway: the request
//!   out through the ring, the reply demultiplexed by the merged tree into
//!   the receive ring (the program asleep on the ring's predicate), with N
//!   filters installed that differ only in the ICMP identifier they claim,
//!   so the reply's lookup goes through a hash table of N entries.
#![no_std]
#![no_main]

use abi::dev::NET;
use abi::syscall::{CRED_SELF, NO_GUARD};
use dpf::pattern::{Pattern, IPPROTO_ICMP, IPPROTO_UDP};
use libos::net::endpoint::Endpoint;
use libos::net::frame;
use user::{kinfo, println, sys};

const OURS: [u8; 4] = [10, 0, 2, 15];
const GATEWAY: [u8; 4] = [10, 0, 2, 2];
const RINGS: u64 = 0x5000_0000;
const FILTERS: [u64; 4] = [1, 10, 100, 1000];

fn fail(why: core::fmt::Arguments) -> ! {
    println!("BENCH-FAIL netbench {why}");
    sys::exit(1)
}

fn rdtsc() -> u64 {
    // SAFETY: RDTSC only reads the time-stamp counter; lfence keeps it
    // from moving across the measured code.
    unsafe { core::arch::x86_64::_mm_lfence() };
    // SAFETY: as above.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Sends what waits in the transmit ring, sleeping a tick at a time while
/// the driver's queue is full (halted, not counted).
fn drain(ep: &mut Endpoint) {
    while ep.unsent() > 0 {
        ep.flush().unwrap_or_else(|e| fail(format_args!("net_tx: {e:?}")));
        if ep.unsent() > 0 {
            let _ = ep.wait(kinfo::ticks() + 1);
        }
    }
}

fn halted() -> u64 {
    kinfo::clock().halted_tsc
}

fn calib(n: u64) {
    for _ in 0..n {
        // SAFETY: nops only; the loop's dec/jnz are the other two of 1000.
        unsafe { core::arch::asm!(".rept 998", "nop", ".endr", options(nomem, nostack)) };
    }
}

/// Waits (asleep on the ring) for a frame `want` accepts; false after
/// about 10 s of guest time.
fn expect(ep: &mut Endpoint, want: impl Fn(&[u8]) -> bool) -> bool {
    let mut buf = [0u8; 2048];
    let deadline = kinfo::ticks() + 5000;
    while kinfo::ticks() < deadline {
        match ep.recv(&mut buf) {
            Some(n) if want(&buf[..n]) => return true,
            Some(_) => {}
            None => {
                let _ = ep.wait(deadline);
            }
        }
    }
    false
}

/// The gateway's MAC, by ARP through the endpoint.
fn gateway_mac(ep: &mut Endpoint, mac: [u8; 6]) -> [u8; 6] {
    let mut buf = [0u8; 64];
    let n = user::net::arp_request(&mut buf, mac, GATEWAY);
    if !ep.queue(&buf[..n]) {
        fail(format_args!("the ARP request found the ring full"));
    }
    drain(ep);
    let mut reply = [0u8; 2048];
    let deadline = kinfo::ticks() + 5000;
    while kinfo::ticks() < deadline {
        match ep.recv(&mut reply) {
            Some(k) => {
                if let Some(m) = user::net::arp_reply_from(&reply[..k], GATEWAY) {
                    return m;
                }
            }
            None => {
                let _ = ep.wait(deadline);
            }
        }
    }
    fail(format_args!("no ARP reply from the gateway"))
}

/// An ICMP echo request from us to the gateway with identifier `id`.
fn echo(buf: &mut [u8], mac: [u8; 6], gw: [u8; 6], id: u16, seq: u16) -> usize {
    let n = frame::udp(buf, mac, gw, OURS, GATEWAY, 0, 0, &[0x5a; 24]);
    buf[23] = IPPROTO_ICMP;
    // Header checksum again: the protocol byte changed.
    buf[24..26].fill(0);
    let sum = frame::checksum(&buf[14..34]);
    buf[24..26].copy_from_slice(&sum.to_be_bytes());
    let icmp = &mut buf[34..n];
    icmp[..8].copy_from_slice(&[8, 0, 0, 0, (id >> 8) as u8, id as u8, (seq >> 8) as u8, seq as u8]);
    let sum = frame::checksum(icmp);
    icmp[2..4].copy_from_slice(&sum.to_be_bytes());
    n
}

fn is_reply(f: &[u8], id: u16, seq: u16) -> bool {
    f.len() >= 42
        && f[23] == IPPROTO_ICMP
        && f[34] == 0
        && f[38..40] == id.to_be_bytes()
        && f[40..42] == seq.to_be_bytes()
}

fn main(_: u64) -> i32 {
    libos::private::init();
    let quick = kinfo::cmdline().split_whitespace().any(|w| w == "quick");
    let mac =
        sys::dev_info(NET).map(|i| i.mac).unwrap_or_else(|e| fail(format_args!("no network device: {e:?}")));
    let mut ep = Endpoint::create(RINGS, 64, 2048, NO_GUARD, CRED_SELF)
        .unwrap_or_else(|e| fail(format_args!("no endpoint: {e:?}")));
    ep.filter(&Pattern::new().arp_target(OURS).program())
        .unwrap_or_else(|e| fail(format_args!("ARP: {e:?}")));
    ep.filter(&Pattern::new().ipv4(IPPROTO_UDP).dst_ip(OURS).dst_port(4000).program())
        .unwrap_or_else(|e| fail(format_args!("UDP: {e:?}")));
    let gw = gateway_mac(&mut ep, mac);
    println!("BENCH-PLAN calib ep_tx ep_ping_1 ep_ping_10 ep_ping_100 ep_ping_1000");
    let (trials, scale) = if quick { (1, 1) } else { (5, 10) };
    for _ in 0..trials {
        let (h0, t0) = (halted(), rdtsc());
        calib(100 * scale);
        println!("BENCH calib {} {}", 100 * scale, rdtsc() - t0 - (halted() - h0));
    }
    let mut buf = [0u8; 2048];
    let n = frame::udp(&mut buf, mac, gw, OURS, GATEWAY, 4000, 9, &[0x33; 64]);
    for _ in 0..trials {
        let count = 20 * scale;
        let (h0, t0) = (halted(), rdtsc());
        let mut queued = 0;
        while queued < count {
            while queued < count && ep.queue(&buf[..n]) {
                queued += 1;
            }
            drain(&mut ep);
        }
        println!("BENCH ep_tx {count} {}", rdtsc() - t0 - (halted() - h0));
    }
    let mut installed = 0u64;
    let mut seq = 0u16;
    for &want in &FILTERS {
        while installed < want {
            let id = 1000 + installed as u16;
            let p = Pattern::new().ipv4(IPPROTO_ICMP).dst_ip(OURS).src_ip(GATEWAY).field(38, 2, id as u32);
            ep.filter(&p.program()).unwrap_or_else(|e| fail(format_args!("filter {installed}: {e:?}")));
            installed += 1;
        }
        // The last filter's identifier: its entry among all the others.
        let id = 1000 + installed as u16 - 1;
        for _ in 0..trials {
            let count = 5 * scale;
            let (h0, t0) = (halted(), rdtsc());
            for _ in 0..count {
                seq = seq.wrapping_add(1);
                let k = echo(&mut buf, mac, gw, id, seq);
                if !ep.queue(&buf[..k]) {
                    fail(format_args!("the echo request found the ring full"));
                }
                drain(&mut ep);
                if !expect(&mut ep, |f| is_reply(f, id, seq)) {
                    fail(format_args!("no echo reply with {want} filters"));
                }
            }
            println!("BENCH ep_ping_{want} {count} {}", rdtsc() - t0 - (halted() - h0));
        }
    }
    let s = ep.stats().unwrap_or_default();
    println!(
        "netbench: {} filters, {} tree nodes, {} frames unclaimed",
        s.filters, s.tree_nodes, s.unclaimed
    );
    println!("BENCH-DONE");
    0
}

user::entry!(main);
