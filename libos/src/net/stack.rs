//! The network stack of the lxrt processes (`docs/network.md`, "Sockets
//! across fork"): one `netstack` TCP/IP stack whose every byte lives in
//! the shared arena (built and changed inside `private::in_arena`), run
//! under the big lock by whichever process makes a socket call, over one
//! packet endpoint whose rings the first process made at start. A socket
//! is an index into this stack, so it works in whichever process holds
//! its descriptor after fork; the kernel's filters keep every other
//! environment from its frames, and the library hands a process only the
//! sockets its descriptors name.
//!
//! Packet filters follow the stack's ports: after a call that may bind or
//! free one, the set of TCP and UDP ports in use is compared with the
//! filters installed and the difference installed or removed, before any
//! frame from a new port leaves (the kernel checks each one).
//!
//! Waiting: a process asleep on a socket sleeps on the receive ring's
//! predicate (a frame waits) or its doorbell, which every poll that did
//! work rings, since the poll may have been another process's and taken
//! the frames meant for the sleeper; and on the stack's next timer.

use crate::layout::{NET_RINGS, PAGE};
use crate::net::endpoint::Endpoint;
use crate::predicate::{self, PACKET, WANT_READ};
use crate::private::in_arena;
use crate::shared;
use abi::net::{ring_pages, RingHeader};
use abi::syscall::{map as mf, CRED_SELF, ENV_SELF, FRAME_ANY};
use alloc::boxed::Box;
use alloc::vec::Vec;
use dpf::pattern::{Pattern, IPPROTO_ICMP, IPPROTO_TCP, IPPROTO_UDP};
use netstack::{Addressing, Link, Stack, StaticIp};
use user::sys;

/// The rings' geometry: 64 slots of 2 KiB each way.
const SLOTS: u32 = 64;
const SLOT_SIZE: u32 = 2048;
/// Pages of both rings.
const RING_PAGES: usize = 2 * ring_pages(SLOTS, SLOT_SIZE) as usize;
/// How long the first socket call waits for a DHCP lease before it takes
/// QEMU's static address (DHCP goes on).
const DHCP_WAIT_MS: u64 = 500;
/// The receive ring header's doorbell word.
const BELL: usize = core::mem::offset_of!(RingHeader, owner_word);

/// The link: the endpoint's rings, sent with this process's credential;
/// with `eth0`'s counters (`/proc/net/dev`).
pub struct Rings(Endpoint, Counters);

/// Frames and bytes each way.
#[derive(Clone, Copy, Default)]
pub struct Counters {
    pub rx_frames: u64,
    pub rx_bytes: u64,
    pub tx_frames: u64,
    pub tx_bytes: u64,
}

impl Link for Rings {
    fn recv(&mut self, buf: &mut [u8]) -> Option<usize> {
        let n = self.0.recv(buf)?;
        self.1.rx_frames += 1;
        self.1.rx_bytes += n as u64;
        Some(n)
    }

    fn send(&mut self, frame: &[u8]) -> bool {
        let sent = self.0.queue(frame) || {
            self.flush();
            self.0.queue(frame)
        };
        if sent {
            self.1.tx_frames += 1;
            self.1.tx_bytes += frame.len() as u64;
        }
        sent
    }

    /// Hands the queued frames to the kernel, waiting (a yield at a time)
    /// while the driver's queue is full.
    fn flush(&mut self) {
        self.0.cred = shared::cred();
        for _ in 0..1000 {
            match self.0.flush() {
                Ok(_) if self.0.unsent() == 0 => return,
                Ok(_) => sys::yield_now(),
                Err(_) => return,
            }
        }
    }
}

/// What the arena holds for the network.
pub struct Shared {
    /// Made by the first socket call.
    stack: Option<Stack<Rings>>,
    endpoint: u64,
    /// The rings' frames, mapped at `NET_RINGS` in each process that uses
    /// the network.
    frames: [u32; RING_PAGES],
    /// Installed port filters: (tcp, port, filter id).
    filters: Vec<(bool, u16, u64)>,
    mac: [u8; 6],
}

fn shared() -> Option<&'static mut Shared> {
    // SAFETY: the word is 0 or the `Shared` `start` put in the arena,
    // which lives for the system's life; the big lock is held, so this is
    // the only reference.
    unsafe { (shared::net_word().load(core::sync::atomic::Ordering::Acquire) as *mut Shared).as_mut() }
}

/// The first process: allocates the rings (guarded by the arena's
/// capability, so every lxrt process may map them and use the endpoint),
/// attaches the endpoint, claims ARP, ICMP and DHCP's port. Without a NIC
/// there is no network for lxrt (its socket calls fail with
/// EAFNOSUPPORT).
pub fn start() {
    let Ok(info) = sys::dev_info(abi::dev::NET) else { return };
    let cred = shared::cred();
    let mut frames = [0u32; RING_PAGES];
    for (i, f) in frames.iter_mut().enumerate() {
        let Ok(frame) = sys::frame_alloc(ENV_SELF, FRAME_ANY) else { return };
        let va = NET_RINGS + i as u64 * PAGE;
        if sys::map(ENV_SELF, va, frame, mf::WRITE).is_err() || sys::frame_share(frame, cred).is_err() {
            return;
        }
        *f = frame as u32;
    }
    let Ok(ep) = Endpoint::attach(NET_RINGS, SLOTS, SLOT_SIZE, cred, CRED_SELF) else { return };
    let ours = [10, 0, 2, 15];
    if let Ok(arp) = ep.filter(&Pattern::new().arp_target(ours).program()) {
        // Other stacks on this machine (a test's, Cheetah's) hear ARP too.
        let _ = sys::net_consent(ep.id, arp, abi::syscall::NET_ANYONE, true, CRED_SELF);
    }
    let _ = ep.filter(&Pattern::new().ipv4(IPPROTO_ICMP).dst_ip(ours).program());
    let _ = ep.filter(&Pattern::new().ipv4(IPPROTO_UDP).dst_port(68).program());
    let s = in_arena(|| {
        Box::into_raw(Box::new(Shared {
            stack: None,
            endpoint: ep.id,
            frames,
            filters: Vec::new(),
            mac: info.mac,
        }))
    });
    shared::net_word().store(s as u64, core::sync::atomic::Ordering::Release);
}

/// Maps the rings into this process if it has not yet.
fn map_rings(s: &Shared) -> bool {
    if crate::vm::pte(NET_RINGS).is_some() {
        return true;
    }
    let cred = shared::cred();
    s.frames.iter().enumerate().all(|(i, &f)| {
        sys::map_with(ENV_SELF, NET_RINGS + i as u64 * PAGE, f as u64, mf::WRITE, CRED_SELF, cred).is_ok()
    })
}

pub fn now_ms() -> u64 {
    crate::time::now_ns() / 1_000_000
}

/// Whether this machine has a network for lxrt.
pub fn present() -> bool {
    shared().is_some()
}

/// Runs `f` on the stack (made, and its address sought, on first use),
/// after processing what waits (frames, loopback, timers); the big lock
/// must be held. None without a network.
pub fn with<R>(f: impl FnOnce(&mut Stack<Rings>) -> R) -> Option<R> {
    let s = shared()?;
    if !map_rings(s) {
        return None;
    }
    if s.stack.is_none() {
        create(s);
    }
    let stack = s.stack.as_mut()?;
    let r = in_arena(|| {
        poll(stack);
        let r = f(stack);
        poll(stack);
        r
    });
    // The filter list is the arena's: every block of it comes from there.
    in_arena(|| reconcile(s));
    Some(r)
}

/// Processes what waits; rings the doorbell if that was anything.
fn poll(stack: &mut Stack<Rings>) {
    let before = stack.stats();
    while stack.poll(now_ms()) {}
    let after = stack.stats();
    if after.frames_in != before.frames_in || after.loop_packets != before.loop_packets {
        ring_bell();
    }
}

fn bell() -> &'static core::sync::atomic::AtomicU64 {
    // SAFETY: the receive ring's header is mapped (`map_rings`); its
    // owner word is the library's alone, 8-aligned.
    unsafe { &*((NET_RINGS as usize + BELL) as *const core::sync::atomic::AtomicU64) }
}

/// A number that changes whenever a poll of the stack did work (an
/// edge-triggered epoll interest in an Internet socket reports again when
/// it moved: more may have arrived, or room been made).
pub fn stamp() -> u64 {
    if crate::vm::pte(NET_RINGS).is_none() {
        return 0;
    }
    bell().load(core::sync::atomic::Ordering::SeqCst)
}

fn ring_bell() {
    bell().fetch_add(1, core::sync::atomic::Ordering::SeqCst);
}

fn create(s: &mut Shared) {
    let geo = match pktring::Geometry::new(SLOTS, SLOT_SIZE, abi::net::ring_bytes(SLOTS, SLOT_SIZE)) {
        Ok(g) => g,
        Err(_) => return,
    };
    let ep = Endpoint::adopt(s.endpoint, shared::cred(), NET_RINGS, geo);
    let mut seed = [0u8; 8];
    crate::random::fill(&mut seed);
    let seed = u64::from_le_bytes(seed);
    let mac = s.mac;
    // Everything the stack keeps is made inside `in_arena`, its fallback
    // address's DNS list too: a block of this process's heap in the arena
    // would be freed by whichever process next replaces it, into that
    // process's own heap (an nginx worker's heap was corrupted so, one
    // run in seven of lx_nginx).
    s.stack = Some(in_arena(|| {
        let addressing = Addressing::Dhcp { fallback_ms: DHCP_WAIT_MS, fallback: StaticIp::qemu() };
        Stack::new(Rings(ep, Counters::default()), mac, seed, addressing, now_ms())
    }));
    // Wait for an address: the lease, or the fallback.
    while let Some(stack) = s.stack.as_mut() {
        in_arena(|| poll(stack));
        if stack.info().is_some() {
            break;
        }
        let at = stack.poll_at();
        sleep_until(at, None);
    }
}

/// Installs filters for the ports the stack uses and removes those of
/// ports it no longer does.
fn reconcile(s: &mut Shared) {
    let Some(stack) = s.stack.as_ref() else { return };
    let want = stack.ports();
    let cred = shared::cred();
    let mut keep = Vec::with_capacity(s.filters.len());
    for &(tcp, port, id) in &s.filters {
        if want.binary_search(&(tcp, port)).is_ok() {
            keep.push((tcp, port, id));
        } else {
            let _ = sys::net_unfilter(s.endpoint, id, cred);
        }
    }
    for &(tcp, port) in &want {
        if keep.iter().any(|&(t, p, _)| (t, p) == (tcp, port)) || (!tcp && port == 68) {
            continue;
        }
        let proto = if tcp { IPPROTO_TCP } else { IPPROTO_UDP };
        let code = bpf::insn::encode(&Pattern::new().ipv4(proto).dst_port(port).program());
        match sys::net_filter(s.endpoint, code.as_ptr() as u64, code.len() as u64 / 8, cred) {
            Ok(id) => keep.push((tcp, port, id)),
            Err(e) => crate::log::note(format_args!("lxrt: no packet filter for port {port}: {}", e.name())),
        }
    }
    s.filters = keep;
}

/// Sleeps until a frame arrives, another process's poll did work, the
/// stack's timer `at_ms`, `until_ns` or `MAX_SLEEP_TICKS` comes (the big
/// lock is dropped meanwhile).
fn sleep_until(at_ms: Option<u64>, until_ns: Option<u64>) {
    let at_ns = at_ms.map(|ms| ms.saturating_mul(1_000_000));
    let until = match (until_ns, at_ns) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    predicate::set_seen(bell().load(core::sync::atomic::Ordering::SeqCst));
    crate::sleep::ring_sleep(NET_RINGS, WANT_READ | PACKET, until);
}

/// Sleeps until something may have changed for a socket, or `until_ns`.
pub fn sleep(until_ns: Option<u64>) {
    let at = shared().and_then(|s| s.stack.as_ref()).and_then(|s| s.poll_at());
    sleep_until(at, until_ns);
}

/// What a wait on a socket sleeps on: the ring (with `PACKET`) and the
/// stack's next timer (ns); marks the doorbell seen.
pub fn wait_terms() -> (u64, u64, Option<u64>) {
    predicate::set_seen(bell().load(core::sync::atomic::Ordering::SeqCst));
    let at = shared().and_then(|s| s.stack.as_ref()).and_then(|s| s.poll_at());
    (NET_RINGS, WANT_READ | PACKET, at.map(|ms| ms.saturating_mul(1_000_000)))
}

/// What `ifconfig` and `/proc/net/dev` show of an interface.
pub struct Interface {
    pub name: &'static [u8],
    pub addr: [u8; 4],
    pub prefix: u8,
    pub mac: Option<[u8; 6]>,
    pub counters: Counters,
}

/// `lo` and, with a network, `eth0` (its address once the stack has one).
/// Reads the stack as it is: it is not made here (a look at `/proc` must
/// not start DHCP).
pub fn interfaces() -> alloc::vec::Vec<Interface> {
    let mut v = alloc::vec![Interface {
        name: b"lo",
        addr: [127, 0, 0, 1],
        prefix: 8,
        mac: None,
        counters: Counters::default()
    }];
    let Some(s) = shared() else { return v };
    let mut eth =
        Interface { name: b"eth0", addr: [0; 4], prefix: 0, mac: Some(s.mac), counters: Counters::default() };
    if let Some(stack) = s.stack.as_mut() {
        let lo = stack.stats();
        v[0].counters = Counters {
            rx_frames: lo.loop_packets,
            rx_bytes: lo.loop_bytes,
            tx_frames: lo.loop_packets,
            tx_bytes: lo.loop_bytes,
        };
        if let Some(i) = stack.info() {
            (eth.addr, eth.prefix) = (i.ip.addr.octets(), i.ip.prefix);
        }
        eth.counters = stack.link().1;
    }
    v.push(eth);
    v
}
