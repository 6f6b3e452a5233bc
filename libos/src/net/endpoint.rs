//! A packet endpoint as a program uses it (`docs/network.md`): two rings
//! in memory it has mapped, attached with `net_attach`; frames read from
//! the receive ring without a system call, frames written into the
//! transmit ring and sent in batches with `net_tx`; sleeping on the
//! receive ring's wakeup predicate while it is empty.

use abi::net::{ring_pages, NetStats};
use abi::syscall::Region;
use abi::Error;
use alloc::vec::Vec;
use bpf::insn::Insn;
use pktring::{Consumer, Geometry, Producer, Push, RingMem, Slot};
use user::sys;

/// Ring memory the kernel may write at any moment: every access is
/// volatile, so no read is cached across a wait.
pub struct Volatile {
    base: *mut u8,
    len: usize,
}

impl Volatile {
    /// # Safety
    /// `base..base + len` is mapped writable for as long as this lives.
    pub unsafe fn new(base: *mut u8, len: usize) -> Volatile {
        Volatile { base, len }
    }

    fn at(&self, off: usize, n: usize) -> Option<*mut u8> {
        // SAFETY: inside the range `new` was given.
        (off.checked_add(n)? <= self.len).then(|| unsafe { self.base.add(off) })
    }
}

impl RingMem for Volatile {
    fn read_u32(&self, off: usize) -> u32 {
        // SAFETY: in range (`at`); an aligned word of the ring's header.
        self.at(off, 4).map_or(0, |p| unsafe { (p as *const u32).read_volatile() })
    }

    fn write_u32(&mut self, off: usize, v: u32) {
        if let Some(p) = self.at(off, 4) {
            // SAFETY: as in `read_u32`.
            unsafe { (p as *mut u32).write_volatile(v) }
        }
    }

    fn write_u64(&mut self, off: usize, v: u64) {
        if let Some(p) = self.at(off, 8) {
            // SAFETY: as in `read_u32`.
            unsafe { (p as *mut u64).write_volatile(v) }
        }
    }

    fn read_bytes(&self, off: usize, dst: &mut [u8]) {
        match self.at(off, dst.len()) {
            // SAFETY: in range; the bytes are copied once.
            Some(p) => unsafe { core::ptr::copy_nonoverlapping(p, dst.as_mut_ptr(), dst.len()) },
            None => dst.fill(0),
        }
    }

    fn write_bytes(&mut self, off: usize, src: &[u8]) {
        if let Some(p) = self.at(off, src.len()) {
            // SAFETY: in range.
            unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), p, src.len()) }
        }
    }
}

/// One endpoint.
pub struct Endpoint {
    pub id: u64,
    /// The credential that covers its guard.
    pub cred: u64,
    va: u64,
    rx_mem: Volatile,
    tx_mem: Volatile,
    rx: Consumer,
    tx: Producer,
    pred: Option<u64>,
}

/// Bytes of the two rings of an endpoint with this geometry.
pub fn bytes(slots: u32, slot_size: u32) -> u64 {
    2 * ring_pages(slots, slot_size) * 4096
}

impl Endpoint {
    /// Attaches rings at `va` (already mapped writable, `bytes` long),
    /// guarded by the caller's capability in `guard`.
    pub fn attach(va: u64, slots: u32, slot_size: u32, guard: u64, cred: u64) -> Result<Endpoint, Error> {
        let geo = Geometry::new(slots, slot_size, abi::net::ring_bytes(slots, slot_size))
            .map_err(|_| Error::BadLength)?;
        let id = sys::net_attach(va, slots as u64, slot_size as u64, guard, cred)?;
        Ok(Endpoint::adopt(id, cred, va, geo))
    }

    /// Allocates and maps the rings' pages at `va` (page-aligned, free),
    /// then attaches them.
    pub fn create(va: u64, slots: u32, slot_size: u32, guard: u64, cred: u64) -> Result<Endpoint, Error> {
        map_fresh(va, bytes(slots, slot_size) / 4096)?;
        Endpoint::attach(va, slots, slot_size, guard, cred)
    }

    /// The library's side of endpoint `id`, whose rings are at `va`.
    pub fn adopt(id: u64, cred: u64, va: u64, geo: Geometry) -> Endpoint {
        let ring = (ring_pages(geo.slots(), (geo.capacity() + 8) as u32) * 4096) as usize;
        // SAFETY: the caller mapped both rings at `va` (`attach`).
        let (mut rx_mem, mut tx_mem) = unsafe {
            (Volatile::new(va as *mut u8, ring), Volatile::new((va as usize + ring) as *mut u8, ring))
        };
        let rx = Consumer::attach(geo, &mut rx_mem);
        let tx = Producer::attach(geo, &mut tx_mem);
        Endpoint { id, cred, va, rx_mem, tx_mem, rx, tx, pred: None }
    }

    /// Installs a filter; its id.
    pub fn filter(&self, insns: &[Insn]) -> Result<u64, Error> {
        let code: Vec<u8> = bpf::insn::encode(insns);
        sys::net_filter(self.id, code.as_ptr() as u64, insns.len() as u64, self.cred)
    }

    pub fn unfilter(&self, f: u64) -> Result<u64, Error> {
        sys::net_unfilter(self.id, f, self.cred)
    }

    /// The next received frame, copied into `buf`: its length.
    pub fn recv(&mut self, buf: &mut [u8]) -> Option<usize> {
        loop {
            match self.rx.pop(&mut self.rx_mem, buf) {
                Ok(Some(Slot::Frame { len, .. })) => return Some(len),
                Ok(Some(Slot::Malformed)) => continue,
                Ok(None) | Err(_) => return None,
            }
        }
    }

    /// Queues `frame`; false if the transmit ring is full.
    pub fn queue(&mut self, frame: &[u8]) -> bool {
        self.tx.push(&mut self.tx_mem, frame, 0) != Push::Full
    }

    /// Frames queued and not yet taken by the kernel.
    pub fn unsent(&self) -> u32 {
        self.tx.head().wrapping_sub(self.tx_mem.read_u32(core::mem::offset_of!(abi::net::RingHeader, tail)))
    }

    /// Hands the queued frames to the kernel: how many it took.
    pub fn flush(&mut self) -> Result<u64, Error> {
        match self.unsent() {
            0 => Ok(0),
            n => sys::net_tx(self.id, n as u64, self.cred),
        }
    }

    /// Queues and sends one frame.
    pub fn send(&mut self, frame: &[u8]) -> Result<u64, Error> {
        if !self.queue(frame) {
            return Err(Error::NoMemory);
        }
        self.flush()
    }

    pub fn stats(&self) -> Result<NetStats, Error> {
        sys::net_stats(self.id, self.cred)
    }

    /// Frames waiting in the receive ring.
    pub fn pending(&self) -> u32 {
        self.rx.pending(&self.rx_mem).unwrap_or(0)
    }

    /// The wakeup predicate "a frame waits" (installed once).
    pub fn predicate(&mut self) -> Result<u64, Error> {
        if let Some(p) = self.pred {
            return Ok(p);
        }
        let code: Vec<u64> =
            pktring::nonempty_predicate().iter().map(|i| u64::from_le_bytes(i.to_bytes())).collect();
        let p = sys::pred_install(&code, &[Region { va: self.va, len: 64 }])?;
        self.pred = Some(p);
        Ok(p)
    }

    /// Sleeps until a frame waits or the clock reaches tick `deadline`
    /// (0: none).
    pub fn wait(&mut self, deadline: u64) -> Result<(), Error> {
        if self.pending() > 0 {
            return Ok(());
        }
        let p = self.predicate()?;
        sys::sleep(p, deadline).map(|_| ())
    }
}

/// Allocates `pages` frames and maps them writable from `va`.
pub fn map_fresh(va: u64, pages: u64) -> Result<(), Error> {
    use abi::syscall::{map, ENV_SELF, FRAME_ANY};
    for p in 0..pages {
        let f = sys::frame_alloc(ENV_SELF, FRAME_ANY)?;
        sys::map(ENV_SELF, va + p * 4096, f, map::WRITE)?;
    }
    Ok(())
}
