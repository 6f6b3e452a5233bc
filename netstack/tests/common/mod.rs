//! A simulated wire between stacks, with seeded loss, reordering and
//! truncation, and a clock the tests drive.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::rc::Rc;

use bpf::gen::Rng;
use netstack::{Addressing, Link, Stack, StaticIp};

#[derive(Clone, Copy, Debug, Default)]
pub struct Faults {
    /// Percent of frames lost.
    pub loss: u64,
    /// Percent delivered out of order (behind up to 3 later ones).
    pub reorder: u64,
    /// Percent cut short at a random length.
    pub truncate: u64,
}

type Queue = Rc<RefCell<VecDeque<Vec<u8>>>>;

pub struct End {
    pub rx: Queue,
    pub tx: Queue,
    pub faults: Faults,
    pub rng: Rng,
    pub sent: u64,
}

impl Link for End {
    fn recv(&mut self, buf: &mut [u8]) -> Option<usize> {
        let f = self.rx.borrow_mut().pop_front()?;
        let n = f.len().min(buf.len());
        buf[..n].copy_from_slice(&f[..n]);
        Some(n)
    }

    fn send(&mut self, frame: &[u8]) -> bool {
        self.sent += 1;
        if self.rng.chance(self.faults.loss) {
            return true;
        }
        let mut f = frame.to_vec();
        if self.rng.chance(self.faults.truncate) {
            f.truncate(self.rng.below(f.len() as u64) as usize);
        }
        let mut q = self.tx.borrow_mut();
        if self.rng.chance(self.faults.reorder) && !q.is_empty() {
            let back = (self.rng.below(3) as usize + 1).min(q.len());
            let at = q.len() - back;
            q.insert(at, f);
        } else {
            q.push_back(f);
        }
        true
    }
}

pub fn pair(faults: Faults, seed: u64) -> (End, End) {
    let (a, b): (Queue, Queue) = Default::default();
    let ea = End { rx: a.clone(), tx: b.clone(), faults, rng: Rng::new(seed), sent: 0 };
    let eb = End { rx: b, tx: a, faults, rng: Rng::new(seed ^ 0x5555), sent: 0 };
    (ea, eb)
}

pub const MAC_A: [u8; 6] = [0x52, 0x54, 0, 0x12, 0x34, 0x56];
pub const MAC_B: [u8; 6] = [0x52, 0x55, 0x0a, 0, 2, 2];
pub const IP_A: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 15);
pub const IP_B: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 2);

pub fn ip(addr: Ipv4Addr) -> Addressing {
    Addressing::Static(StaticIp { addr, prefix: 24, gateway: None, dns: vec![] })
}

pub fn stacks(faults: Faults, seed: u64) -> (Stack<End>, Stack<End>) {
    let (ea, eb) = pair(faults, seed);
    (Stack::new(ea, MAC_A, seed, ip(IP_A), 0), Stack::new(eb, MAC_B, seed ^ 1, ip(IP_B), 0))
}

pub fn sa(ip: Ipv4Addr, port: u16) -> SocketAddr {
    SocketAddr::V4(SocketAddrV4::new(ip, port))
}

/// Both stacks polled at `now`; the clock then jumps to the next thing
/// due if nothing is in flight, else one millisecond.
pub struct Clock {
    pub now: u64,
}

impl Clock {
    pub fn step(&mut self, a: &mut Stack<End>, b: &mut Stack<End>, busy: bool) {
        a.poll(self.now);
        b.poll(self.now);
        let in_flight = !a.link().rx.borrow().is_empty() || !b.link().rx.borrow().is_empty();
        let next = [a.poll_at(), b.poll_at()].into_iter().flatten().min();
        self.now = match next {
            Some(t) if !in_flight && !busy => t.max(self.now + 1),
            _ => self.now + 1,
        };
    }
}

impl Clock {
    /// Steps both stacks for `ms` simulated milliseconds.
    pub fn run(&mut self, a: &mut Stack<End>, b: &mut Stack<End>, ms: u64) {
        let end = self.now + ms;
        while self.now < end {
            self.step(a, b, true);
        }
    }
}

/// The byte at position `i` of a test stream `tag`.
pub fn pattern(tag: u8, i: u64) -> u8 {
    ((i.wrapping_mul(2654435761) >> 13) as u8) ^ tag
}
