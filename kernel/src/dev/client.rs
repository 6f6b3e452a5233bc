//! Device clients outside the kernel: the block and packet interfaces as
//! environments reach them through system calls (`syscall/devices.rs`).
//! Each request names a buffer in a frame its caller holds and a
//! completion word in its memory; both frames are pinned (one more
//! mapping count, so neither can be freed or reused) from the call until
//! the request ends. The end is written into the word
//! (`abi::dev::DONE`), which its owner polls or sleeps on with a wakeup
//! predicate; the pins are dropped afterwards by `settle`, which runs
//! whenever the kernel state is at hand (each device call, and the
//! device interrupt's service), because a request may end inside a
//! crossing, where only the device layer's own state is reachable.

use super::driver::{self, Span};
use super::Global;
use crate::frames::{Frame, Frames};
use crate::memory::Memory;
use abi::dev::{status as st, DONE};
use abi::Error;

/// Requests (sent, or receive buffers posted) outstanding at once.
const SLOTS: usize = 64;

/// A completion word: 8 aligned bytes at `offset` in `frame`.
#[derive(Clone, Copy, Debug)]
pub struct Word {
    pub frame: Frame,
    pub offset: usize,
}

impl Word {
    fn write(self, v: u64) {
        // SAFETY: the word's frame is pinned while the request is
        // outstanding, `offset` is 8-aligned and inside it (checked by the
        // system call), and the physical window maps it.
        unsafe { (crate::mm::frame_ptr::<u8>(self.frame).add(self.offset) as *mut u64).write_volatile(v) }
    }
}

#[derive(Clone, Copy)]
struct Request {
    /// The environment that holds `buf` (the frame's owner when it was
    /// pinned).
    owner: u32,
    buf: Span,
    word: Word,
    /// A receive buffer waiting for a frame: its posting order.
    posted: Option<u64>,
    /// It ended (the word is written); its pins go at the next `settle`.
    ended: bool,
}

struct Table {
    slots: [Option<Request>; SLOTS],
    next_post: u64,
    /// One past the highest slot in use (at most): scans stop here, so
    /// that the `settle` of every call and interrupt looks at the few
    /// requests outstanding, not at all 64 slots.
    top: usize,
}

static TABLE: Global<Table> = Global::new(Table { slots: [None; SLOTS], next_post: 0, top: 0 });

/// Pins `buf`'s frame and `word`'s frame for a request of `owner`'s and
/// records it; its cookie (slot). Nothing is pinned if it fails.
fn start(mem: &mut Memory, owner: u32, buf: Span, word: Word, posted: bool) -> Result<usize, Error> {
    settle(mem);
    let frames = &mut mem.frames;
    if !frames.can_add_refs(buf.frame, 2) || !frames.can_add_refs(word.frame, 2) {
        return Err(Error::NoMemory);
    }
    let slot = TABLE.with(|t| {
        let i = t.slots.iter().position(Option::is_none)?;
        let posted = posted.then(|| {
            t.next_post += 1;
            t.next_post
        });
        t.slots[i] = Some(Request { owner, buf, word, posted, ended: false });
        t.top = t.top.max(i + 1);
        Some(i)
    });
    let slot = slot.ok_or(Error::NoMemory)?;
    frames.add_ref(buf.frame)?;
    if let Err(e) = frames.add_ref(word.frame) {
        frames.drop_ref(buf.frame);
        TABLE.with(|t| t.slots[slot] = None);
        return Err(e);
    }
    word.write(0);
    Ok(slot)
}

/// A request that could not start: unpinned and forgotten — unless it
/// ended meanwhile (its driver was disabled during the call: the word says
/// so, and `settle` unpins it).
fn abandon(mem: &mut Memory, slot: usize) {
    let r = TABLE.with(|t| t.slots[slot].take_if(|r| !r.ended));
    if let Some(r) = r {
        unpin(&mut mem.frames, &r);
    }
}

fn unpin(frames: &mut Frames, r: &Request) {
    frames.drop_ref(r.buf.frame);
    frames.drop_ref(r.word.frame);
}

/// The end of request `cookie` (a driver's completion, or its disabling).
fn done(cookie: u64, status: i32, len: usize) {
    TABLE.with(|t| {
        if let Some(r) = t.slots.get_mut(cookie as usize).and_then(Option::as_mut) {
            let s = if status == drvapi::status::OK { st::OK } else { st::IO_ERROR };
            r.word.write(DONE | s << 32 | len as u64);
            r.ended = true;
        }
    })
}

/// Drops the pins of requests that ended, and cancels receive buffers
/// whose frame is no longer their owner's (it died, or gave it up).
pub fn settle(mem: &mut Memory) {
    let frames = &mut mem.frames;
    TABLE.with(|t| {
        let mut top = 0;
        for (i, slot) in t.slots[..t.top].iter_mut().enumerate() {
            let Some(r) = slot else { continue };
            let orphaned = r.posted.is_some() && frames.info(r.buf.frame).is_none_or(|f| f.owner != r.owner);
            if r.ended || orphaned {
                unpin(frames, r);
                *slot = None;
            } else {
                top = i + 1;
            }
        }
        t.top = top;
    });
}

/// `blk_read`/`blk_write`: sectors from `sector` to or from `buf`.
pub fn block(
    mem: &mut Memory,
    write: bool,
    owner: u32,
    buf: Span,
    sector: u64,
    word: Word,
) -> Result<(), Error> {
    use super::block::BlockError as B;
    let slot = start(mem, owner, buf, word, false)?;
    let r = super::block::submit(&mem.frames, write, owner, buf, sector, done, slot as u64);
    r.map(|_| ()).map_err(|e| {
        abandon(mem, slot);
        match e {
            B::NoDevice => Error::NoDevice,
            B::BadRange => Error::BadLength,
            B::PastEnd => Error::BadAddress,
            B::TooLong => Error::BadLength,
            B::NotOwner => Error::NotOwner,
            B::Driver(drvapi::status::NO_SPACE) => Error::NoMemory,
            B::Driver(_) => Error::NoDevice,
        }
    })
}

/// `net_send`: transmits the Ethernet frame in `buf`.
pub fn send(mem: &mut Memory, owner: u32, buf: Span, word: Word) -> Result<(), Error> {
    use super::packet::PacketError as P;
    let slot = start(mem, owner, buf, word, false)?;
    let r = super::packet::transmit(&mem.frames, owner, buf, done, slot as u64);
    r.map(|_| ()).map_err(|e| {
        abandon(mem, slot);
        match e {
            P::NoDevice => Error::NoDevice,
            P::BadRange => Error::BadLength,
            P::NotOwner => Error::NotOwner,
            P::Driver(drvapi::status::NO_SPACE) => Error::NoMemory,
            P::Driver(_) => Error::NoDevice,
        }
    })
}

/// `net_recv`: posts `buf` for the next received frame.
pub fn post(mem: &mut Memory, owner: u32, buf: Span, word: Word) -> Result<(), Error> {
    if super::packet::mac().is_none() {
        return Err(Error::NoDevice);
    }
    if buf.len < abi::dev::MAX_FRAME as usize || buf.offset + buf.len > 4096 {
        return Err(Error::BadLength);
    }
    if !driver::holds(&mem.frames, owner, buf.frame) {
        return Err(Error::NotOwner);
    }
    start(mem, owner, buf, word, true).map(|_| ())
}

/// Frames received with no buffer posted for them.
static DROPPED: Global<u64> = Global::new(0);

/// Every received frame comes here (from the driver's `receive` call,
/// inside its crossing): into the receive rings of the endpoints whose
/// packet filters claim it (`net`), and into the oldest raw receive
/// buffer posted, if any (a holder of the whole device capability
/// receives everything); dropped if neither took it.
pub fn demux(frame: &[u8]) {
    let raw = deliver(frame);
    if !super::net::receive(frame) && !raw {
        DROPPED.with(|d| *d += 1);
    }
}

/// `frame` copied into the oldest posted buffer: whether there was one.
fn deliver(frame: &[u8]) -> bool {
    TABLE.with(|t| {
        let oldest = t.slots[..t.top]
            .iter_mut()
            .flatten()
            .filter(|r| r.posted.is_some() && !r.ended)
            .min_by_key(|r| r.posted);
        let Some(r) = oldest else { return false };
        let n = frame.len().min(r.buf.len);
        // SAFETY: the buffer's frame is pinned while posted; `offset + len`
        // lies inside it (checked when posted).
        unsafe {
            let dst = crate::mm::frame_ptr::<u8>(r.buf.frame).add(r.buf.offset);
            core::ptr::copy_nonoverlapping(frame.as_ptr(), dst, n);
        }
        r.word.write(DONE | st::OK << 32 | n as u64);
        r.ended = true;
        true
    })
}

/// `dev_ping`: `count` crossings into the driver of `dev`, each with a
/// request of no kind, which it refuses at once (the block driver as
/// invalid, the network driver as unsupported).
pub fn ping(dev: u64, count: u64) -> Result<u64, Error> {
    let i = driver::find(name(dev)?).ok_or(Error::NoDevice)?;
    for _ in 0..count {
        let refused = driver::null_call(i).map(|v| v as i32);
        if !matches!(refused, Ok(drvapi::status::INVALID | drvapi::status::UNSUPPORTED)) {
            return Err(Error::NoDevice);
        }
    }
    Ok(count)
}

/// The driver serving device kind `dev`.
pub fn name(dev: u64) -> Result<&'static str, Error> {
    match dev {
        abi::dev::BLOCK => Ok("virtio-blk"),
        abi::dev::NET => Ok("virtio-net"),
        _ => Err(Error::NoDevice),
    }
}

/// `dev_info`: what device `dev` is.
pub fn info(dev: u64) -> Result<abi::dev::DevInfo, Error> {
    let (facts, isolated) = driver::describe(name(dev)?).ok_or(Error::NoDevice)?;
    Ok(abi::dev::DevInfo {
        capacity: facts.capacity,
        mac: facts.mac,
        queue_depth: facts.queue_depth,
        confined: super::iommu::confinement(),
        isolated: isolated as u32,
        ..Default::default()
    })
}

/// The address of the first page of `dev`'s registers its driver maps
/// (its "register window"), for the injected bad stack pointer.
#[cfg(feature = "inject")]
pub fn registers(dev: u64) -> Result<u64, Error> {
    let i = driver::find(name(dev)?).ok_or(Error::NoDevice)?;
    driver::registers(i).ok_or(Error::NoDevice)
}

/// `dev_inject`: request `r` (a fault-injection request) to `dev`'s
/// driver, lending it `buf`; whether the driver was stopped during the
/// call (else the request is in flight and `word` ends with it).
#[cfg(feature = "inject")]
pub fn inject(
    mem: &mut Memory,
    dev: u64,
    owner: u32,
    r: drvapi::Request,
    buf: Span,
    word: Word,
) -> Result<bool, Error> {
    let i = driver::find(name(dev)?).ok_or(Error::NoDevice)?;
    if !driver::holds(&mem.frames, owner, buf.frame) {
        return Err(Error::NotOwner);
    }
    let slot = start(mem, owner, buf, word, false)?;
    match super::run::addrs(&[buf], |pages| driver::submit(i, r, pages, done, slot as u64)) {
        Ok(_) => Ok(false),
        Err(drvapi::status::IO_ERROR) => {
            abandon(mem, slot);
            Ok(driver::stopped(i))
        }
        Err(_) => {
            abandon(mem, slot);
            Err(Error::NoDevice)
        }
    }
}
