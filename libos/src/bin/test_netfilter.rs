//! Boot test: packet endpoints and filters as secure bindings (paper 001
//! §3.2; `docs/network.md`). Bad arguments are refused with their own
//! errors and change nothing; an ARP exchange with QEMU's gateway goes
//! through the transmit check and comes back through the merged filters
//! into the packet ring, waking the program asleep on the ring's
//! predicate; a child environment (`netthief`) that tries to steal, snoop
//! and spoof is refused; its endpoint goes with it; consent lets a second
//! endpoint share ARP, and withdrawing it removes that endpoint's filter;
//! a frame nobody claims is counted and dropped.
#![no_std]
#![no_main]

use abi::dev::NET;
use abi::syscall::{map, CRED_SELF, ENV_SELF, FRAME_ANY, NET_ANYONE, NO_GUARD};
use abi::Error;
use dpf::pattern::{Pattern, IPPROTO_TCP, IPPROTO_UDP};
use libos::net::endpoint::{self, Endpoint};
use user::{kinfo, println, spawn, sys};

const OUR_IP: [u8; 4] = [10, 0, 2, 15];
const GATEWAY: [u8; 4] = [10, 0, 2, 2];
const A: u64 = 0x5000_0000;
const C: u64 = 0x5100_0000;
const SPARE: u64 = 0x5200_0000;
/// 5 s of 2 ms ticks.
const WAIT: u64 = 2500;
/// Every bit `netthief` sets.
const THIEF_ALL: i32 = 511;

struct Checks(u32);

impl Checks {
    fn check(&mut self, what: &str, ok: bool) {
        println!("netfilter: {what}: {}", if ok { "ok" } else { "FAILED" });
        if !ok {
            self.0 += 1;
        }
    }
}

/// Sends an ARP request for the gateway from `ep`.
fn ask_gateway(ep: &mut Endpoint, mac: [u8; 6]) -> Result<u64, Error> {
    let mut buf = [0u8; 64];
    let n = user::net::arp_request(&mut buf, mac, GATEWAY);
    ep.send(&buf[..n])
}

/// Waits up to `ticks` for a frame in `ep`'s ring; whether it is the
/// gateway's ARP reply.
fn gateway_reply(ep: &mut Endpoint, ticks: u64) -> bool {
    let deadline = kinfo::ticks() + ticks;
    let mut buf = [0u8; 2048];
    while kinfo::ticks() < deadline {
        match ep.recv(&mut buf) {
            Some(n) if user::net::arp_reply_from(&buf[..n], GATEWAY).is_some() => return true,
            Some(_) => {}
            None => {
                let _ = ep.wait(deadline);
            }
        }
    }
    false
}

fn bad_arguments(c: &mut Checks) {
    let e = |r: Result<u64, Error>| r.err();
    c.check(
        "attach: unaligned",
        e(sys::net_attach(SPARE + 8, 16, 2048, NO_GUARD, CRED_SELF)) == Some(Error::BadAddress),
    );
    c.check(
        "attach: unmapped",
        e(sys::net_attach(SPARE, 16, 2048, NO_GUARD, CRED_SELF)) == Some(Error::BadPointer),
    );
    let _ = endpoint::map_fresh(SPARE, 2);
    c.check(
        "attach: 3 slots",
        e(sys::net_attach(SPARE, 3, 2048, NO_GUARD, CRED_SELF)) == Some(Error::BadLength),
    );
    c.check(
        "attach: 100-byte slots",
        e(sys::net_attach(SPARE, 1, 100, NO_GUARD, CRED_SELF)) == Some(Error::BadLength),
    );
    c.check(
        "attach: too big",
        e(sys::net_attach(SPARE, 4096, 2048, NO_GUARD, CRED_SELF)) == Some(Error::BadLength),
    );
    // One slot each fits a page; make the second page read-only.
    let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap_or(0);
    let _ = sys::map(ENV_SELF, SPARE + 2 * 4096, f, 0);
    let _ = sys::map(ENV_SELF, SPARE + 3 * 4096, f, 0);
    let ro = e(sys::net_attach(SPARE + 4096, 1, 2048, NO_GUARD, CRED_SELF));
    c.check("attach: a read-only page", ro == Some(Error::BadPointer));
    c.check("attach: a bad credential", e(sys::net_attach(SPARE, 1, 2048, NO_GUARD, 77)).is_some());
    c.check("tx: no such endpoint", e(sys::net_tx(0x7733, 1, CRED_SELF)) == Some(Error::BadState));
    let _ = map::WRITE;
}

fn main(_: u64) -> i32 {
    libos::private::init();
    let mut c = Checks(0);
    let Ok(mac) = sys::dev_info(NET).map(|i| i.mac) else {
        println!("netfilter: no network device");
        return 1;
    };
    bad_arguments(&mut c);
    let Ok(mut a) = Endpoint::create(A, 16, 2048, NO_GUARD, CRED_SELF) else {
        println!("netfilter: no endpoint");
        return 1;
    };
    c.check("filter: no instructions", sys::net_filter(a.id, 0, 0, CRED_SELF) == Err(Error::BadLength));
    // `exit` with r0 never set: the verifier refuses it.
    let bad = [bpf::insn::Insn::new(0x95, 0, 0, 0, 0)];
    c.check("filter: an unverifiable program", a.filter(&bad) == Err(Error::BadProgram));
    c.check("tx: max 0", sys::net_tx(a.id, 0, CRED_SELF) == Err(Error::BadLength));
    let web = a.filter(&Pattern::new().ipv4(IPPROTO_TCP).dst_ip(OUR_IP).dst_port(80).program());
    let arp = a.filter(&Pattern::new().arp_target(OUR_IP).program());
    c.check("filters for port 80 and ARP", web.is_ok() && arp.is_ok());
    let arp = arp.unwrap_or(0);
    c.check(
        "withdrawing a consent never given",
        sys::net_consent(a.id, arp, NET_ANYONE, false, CRED_SELF).is_ok(),
    );
    let r = user::sys::call(abi::syscall::NET_CONSENT, [a.id, arp, NET_ANYONE, 2, CRED_SELF, 0]);
    c.check("consent: on = 2", Error::from_result(r) == Some(Error::BadFlags));

    c.check("ARP request sent", ask_gateway(&mut a, mac) == Ok(1) && a.stats().is_ok_and(|s| s.sent == 1));
    c.check("the gateway's reply, through the ring", gateway_reply(&mut a, WAIT));

    // The thief: a child environment of its own.
    let arg = mac.iter().enumerate().fold(a.id << 48, |v, (i, b)| v | (*b as u64) << (8 * i));
    let bits = spawn::spawn("netthief", arg).and_then(|t| spawn::wait(t).map_err(Into::into));
    c.check("netthief: every attack refused", bits.as_ref().is_ok_and(|b| *b == THIEF_ALL));
    // Its endpoint went with it: its port is free.
    let udp = Pattern::new().ipv4(IPPROTO_UDP).dst_ip(OUR_IP).dst_port(9999);
    c.check("the thief's port is free once it is gone", a.filter(&udp.program()).is_ok());

    // Consent: a second endpoint shares ARP only once allowed.
    let Ok(mut b) = Endpoint::create(C, 16, 2048, NO_GUARD, CRED_SELF) else {
        println!("netfilter: no second endpoint");
        return 1;
    };
    let arp_b = Pattern::new().arp_target(OUR_IP).program();
    let before = a.stats().map(|s| s.filters).unwrap_or(0);
    c.check("ARP for a second endpoint: refused", b.filter(&arp_b) == Err(Error::Claimed));
    c.check("a refused filter changes nothing", a.stats().is_ok_and(|s| s.filters == before));
    c.check("consent to anyone", sys::net_consent(a.id, arp, NET_ANYONE, true, CRED_SELF) == Ok(0));
    c.check("ARP for a second endpoint: allowed", b.filter(&arp_b).is_ok());
    let _ = ask_gateway(&mut a, mac);
    c.check("both endpoints get the reply", gateway_reply(&mut a, WAIT) && gateway_reply(&mut b, WAIT));
    let gone = sys::net_consent(a.id, arp, NET_ANYONE, false, CRED_SELF);
    c.check(
        "withdrawn: the second endpoint's filter removed",
        gone == Ok(1) && b.stats().is_ok_and(|s| s.ep_filters == 0),
    );

    // Unclaimed: only ARP requests are claimed now; the reply is not.
    let _ = a.unfilter(arp);
    let requests = Pattern::new().arp_target(OUR_IP).field(20, 2, 1);
    c.check("a filter for ARP requests only", a.filter(&requests.program()).is_ok());
    let unclaimed = a.stats().map(|s| s.unclaimed).unwrap_or(0);
    let _ = ask_gateway(&mut a, mac);
    let got = gateway_reply(&mut a, 250);
    let now = a.stats().map(|s| s.unclaimed).unwrap_or(0);
    c.check("the reply nobody claims: counted and dropped", !got && now > unclaimed);

    let filters = a.stats().map(|s| s.filters).unwrap_or(0);
    c.check("detach", sys::net_detach(a.id, CRED_SELF) == Ok(0));
    c.check("its filters go with it", b.stats().is_ok_and(|s| s.filters == filters - 3));
    c.check("a detached endpoint is gone", sys::net_tx(a.id, 1, CRED_SELF) == Err(Error::BadState));
    if c.0 == 0 {
        println!("netfilter: every check passed");
        0
    } else {
        println!("netfilter: {} checks FAILED", c.0);
        1
    }
}

user::entry!(main);
