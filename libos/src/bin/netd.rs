//! The machine's network responder (issue 24: "ARP, ICMP echo and DHCP are
//! answered by a library environment, not by the kernel"): a ring-3
//! environment with a packet endpoint of its own that claims ARP for the
//! machine's address (consenting to share it: every stack on the machine
//! hears ARP) and ICMP to it, and answers ARP requests and echo requests
//! with `netstack::respond`, the rest refused and counted by reason. It
//! answers while nothing else runs: asleep on its receive ring's
//! predicate, it costs nothing until a frame comes.
//! Each count of refused frames of one reason is printed when it reaches
//! a power of two (a flood costs a few lines).
#![no_std]
#![no_main]

use abi::dev::NET;
use abi::syscall::{CRED_SELF, NET_ANYONE, NO_GUARD};
use dpf::pattern::{Pattern, IPPROTO_ICMP};
use libos::net::endpoint::Endpoint;
use netstack::respond::{answer, Refused};
use user::{println, sys};

const OURS: [u8; 4] = [10, 0, 2, 15];
const RINGS: u64 = 0x5000_0000;

fn fail(why: core::fmt::Arguments) -> ! {
    println!("netd: {why}");
    sys::exit(1)
}

fn main(_: u64) -> i32 {
    libos::private::init();
    let mac = sys::dev_info(NET).map(|i| i.mac).unwrap_or_else(|e| fail(format_args!("no NIC: {e:?}")));
    let mut ep = Endpoint::create(RINGS, 16, 2048, NO_GUARD, CRED_SELF)
        .unwrap_or_else(|e| fail(format_args!("no endpoint: {e:?}")));
    let arp = ep
        .filter(&Pattern::new().arp_target(OURS).program())
        .unwrap_or_else(|e| fail(format_args!("ARP refused: {e:?}")));
    if let Err(e) = sys::net_consent(ep.id, arp, NET_ANYONE, true, CRED_SELF) {
        fail(format_args!("consent: {e:?}"));
    }
    ep.filter(&Pattern::new().ipv4(IPPROTO_ICMP).dst_ip(OURS).program())
        .unwrap_or_else(|e| fail(format_args!("ICMP refused: {e:?}")));
    println!("netd: answering ARP and ICMP echo for 10.0.2.15");
    let mut refused = [0u64; Refused::ALL.len()];
    let (mut frame, mut out) = ([0u8; 2048], [0u8; 2048]);
    loop {
        let Some(n) = ep.recv(&mut frame) else {
            let _ = ep.wait(0);
            continue;
        };
        match answer(&frame[..n], mac, OURS, &mut out) {
            Ok(k) => {
                if let Err(e) = ep.send(&out[..k]) {
                    println!("netd: an answer was not sent: {e:?}");
                }
            }
            Err(why) => {
                // `Refused::ALL` lists the reasons in their declared order.
                let count = &mut refused[why as usize];
                *count += 1;
                if count.is_power_of_two() {
                    println!("netd: refused {count} frames ({})", why.name());
                }
            }
        }
    }
}

user::entry!(main);
