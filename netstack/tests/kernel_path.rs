//! The whole phase-1 path on the host: two library stacks in two
//! environments, each with a receive and a transmit packet ring, and a
//! simulated kernel between them that checks every transmitted frame
//! against the sender's filters and demultiplexes it by the merged
//! filters into the owner's ring. A third, hostile environment can neither
//! claim nor spoof the server's port.

mod common;

use std::cell::RefCell;
use std::net::Ipv4Addr;
use std::rc::Rc;

use abi::net::ring_bytes;
use common::{pattern, sa};
use dpf::pattern::{Pattern, IPPROTO_TCP};
use dpf::{Demux, InstallError, TxError};
use netstack::{Addressing, Errno, RingLink, SockType, Stack, StaticIp};
use pktring::{Consumer, Geometry, Producer, RingMem, SliceMem, Slot};

#[derive(Clone)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl RingMem for Shared {
    fn read_u32(&self, off: usize) -> u32 {
        SliceMem(&mut self.0.borrow_mut()).read_u32(off)
    }
    fn write_u32(&mut self, off: usize, v: u32) {
        SliceMem(&mut self.0.borrow_mut()).write_u32(off, v)
    }
    fn write_u64(&mut self, off: usize, v: u64) {
        SliceMem(&mut self.0.borrow_mut()).write_u64(off, v)
    }
    fn read_bytes(&self, off: usize, dst: &mut [u8]) {
        SliceMem(&mut self.0.borrow_mut()).read_bytes(off, dst)
    }
    fn write_bytes(&mut self, off: usize, src: &[u8]) {
        SliceMem(&mut self.0.borrow_mut()).write_bytes(off, src)
    }
}

const MAC: [u8; 6] = [0x52, 0x54, 0, 0x12, 0x34, 0x56];
const SLOTS: u32 = 64;
const SLOT: u32 = 2048;

type Lib = RingLink<Shared, Shared, fn()>;

/// The kernel's side of one environment: producer of its receive ring,
/// consumer of its transmit ring.
struct KernelSide {
    owner: u32,
    rx_mem: Shared,
    rx: Producer,
    tx_mem: Shared,
    tx: Consumer,
}

fn env(owner: u32, ip: Ipv4Addr) -> (Stack<Lib>, KernelSide) {
    let geo = Geometry::new(SLOTS, SLOT, ring_bytes(SLOTS, SLOT)).unwrap();
    let rx_mem = Shared(Rc::new(RefCell::new(vec![0; ring_bytes(SLOTS, SLOT)])));
    let tx_mem = Shared(Rc::new(RefCell::new(vec![0; ring_bytes(SLOTS, SLOT)])));
    let link: Lib = RingLink::new(rx_mem.clone(), geo, tx_mem.clone(), geo, || {});
    let addressing = Addressing::Static(StaticIp { addr: ip, prefix: 24, gateway: None, dns: vec![] });
    let stack = Stack::new(link, MAC, u64::from(owner), addressing, 0);
    let (mut krx, mut ktx) = (rx_mem.clone(), tx_mem.clone());
    let rx = Producer::attach(geo, &mut krx);
    let tx = Consumer::attach(geo, &mut ktx);
    (stack, KernelSide { owner, rx_mem: krx, rx, tx_mem: ktx, tx })
}

/// Sends every queued frame of every environment: transmit check, then
/// demultiplexing into the owners' rings (the NIC loops local traffic).
fn kernel(demux: &mut Demux, sides: &mut [KernelSide]) -> u64 {
    let mut buf = vec![0u8; 2048];
    let mut moved = 0;
    for i in 0..sides.len() {
        while let Ok(Some(slot)) = sides[i].tx.pop(&mut sides[i].tx_mem, &mut buf) {
            let Slot::Frame { len, .. } = slot else { continue };
            let frame = &buf[..len];
            if demux.check_transmit(sides[i].owner, frame).is_err() {
                continue;
            }
            for d in demux.classify(frame).as_slice() {
                let to = sides.iter_mut().find(|s| s.owner == d.owner).unwrap();
                to.rx.push(&mut to.rx_mem, frame, 0);
            }
            moved += 1;
        }
    }
    moved
}

#[test]
fn two_library_stacks_through_filters_and_rings() {
    let (ip_a, ip_b, ip_c) =
        (Ipv4Addr::new(10, 0, 2, 15), Ipv4Addr::new(10, 0, 2, 16), Ipv4Addr::new(10, 0, 2, 17));
    let (mut a, ka) = env(1, ip_a);
    let (mut b, kb) = env(2, ip_b);
    let (_c, kc) = env(3, ip_c);
    let mut sides = [ka, kb, kc];
    let mut demux = Demux::new(MAC, 99);
    // What each library asks for: its ARP, and its TCP.
    demux.install(1, 0, &Pattern::new().arp_target(ip_a.octets()).program()).unwrap();
    demux.install(1, 0, &Pattern::new().ipv4(IPPROTO_TCP).dst_ip(ip_a.octets()).program()).unwrap();
    demux.install(2, 0, &Pattern::new().arp_target(ip_b.octets()).program()).unwrap();
    let web = Pattern::new().ipv4(IPPROTO_TCP).dst_ip(ip_b.octets()).dst_port(80);
    demux.install(2, 0, &web.clone().program()).unwrap();
    // The hostile environment: it may not claim the server's port...
    assert!(matches!(demux.install(3, 0, &web.program()), Err(InstallError::Overlap { owner: 2, .. })));
    demux.install(3, 0, &Pattern::new().ipv4(IPPROTO_TCP).dst_ip(ip_c.octets()).program()).unwrap();

    let l = b.socket(SockType::Stream);
    b.bind(l, sa(Ipv4Addr::UNSPECIFIED, 80)).unwrap();
    b.listen(l, 4).unwrap();
    let c = a.socket(SockType::Stream);
    assert_eq!(a.connect(c, sa(ip_b, 80)), Err(Errno::EINPROGRESS));
    let size = 1u64 << 20;
    let (mut sent, mut got, mut s) = (0u64, 0u64, None);
    let mut now = 0;
    let mut buf = vec![0u8; 8192];
    let mut spoof_tried = false;
    for _ in 0..200_000 {
        a.poll(now);
        b.poll(now);
        let moved = kernel(&mut demux, &mut sides);
        if s.is_none() {
            s = b.accept(l).ok().map(|(s, _)| s);
        }
        if let Some(s) = s {
            if !spoof_tried {
                // ...nor send as it: a copy of the server's last frame,
                // from the hostile environment.
                spoof_tried = true;
                let mut f = vec![0u8; 54];
                f[6..12].copy_from_slice(&MAC);
                f[12] = 8;
                f[14] = 0x45;
                f[23] = 6;
                f[26..30].copy_from_slice(&ip_b.octets());
                f[30..34].copy_from_slice(&ip_a.octets());
                f[34..36].copy_from_slice(&80u16.to_be_bytes());
                assert_eq!(demux.check_transmit(3, &f), Err(TxError::NotBound));
                assert_eq!(demux.check_transmit(2, &f), Ok(()));
            }
            while sent < size {
                let n = (size - sent).min(4096) as usize;
                let chunk: Vec<u8> = (0..n as u64).map(|i| pattern(7, sent + i)).collect();
                match a.send(c, &chunk) {
                    Ok(k) => sent += k as u64,
                    Err(Errno::EAGAIN) => break,
                    Err(e) => panic!("{e:?}"),
                }
            }
            while let Ok(n) = b.recv(s, &mut buf, false) {
                assert!(n > 0);
                for (i, &x) in buf[..n].iter().enumerate() {
                    assert_eq!(x, pattern(7, got + i as u64));
                }
                got += n as u64;
            }
        }
        if got == size {
            break;
        }
        now += if moved == 0 { 5 } else { 1 };
    }
    assert_eq!(got, size, "1 MiB through filters and rings");
    let st = demux.stats();
    assert_eq!(st.tx_refused, 1, "only the spoof was refused: {st:?}");
    // The hostile environment never saw a frame.
    let hostile = &mut sides[2];
    assert_eq!(hostile.rx.head(), 0);
    println!("{st:?}");
}
