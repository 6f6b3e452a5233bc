//! Transmission from an endpoint's transmit ring (`net_tx`): each frame
//! is copied out of the ring into a kernel buffer before it is checked,
//! so its owner cannot change it between the check and the device, then
//! handed to the driver. Several frames per system call; the buffers come
//! back as the driver completes them.

use super::super::driver::Span;
use super::super::{packet, pool};
use super::NET;
use crate::frames::{Frame, Frames};
use crate::memory::Memory;
use abi::Error;
use core::sync::atomic::{AtomicU64, Ordering};
use pktring::Slot;

/// Kernel transmit buffers (2 KiB each, two per frame): frames in flight
/// at once, for all endpoints.
const BUFFERS: usize = 32;
const BUFFER_SIZE: usize = 2048;

/// The first of the buffers' frames (0 until `init`).
static FIRST: AtomicU64 = AtomicU64::new(0);
/// Bit `i`: buffer `i` is free.
static FREE: AtomicU64 = AtomicU64::new(0);

/// Takes the buffers' frames from the device layer's pool (once).
pub fn init(_: &Frames) -> Result<(), Error> {
    if FIRST.load(Ordering::Relaxed) != 0 {
        return Ok(());
    }
    let first = pool::alloc((BUFFERS * BUFFER_SIZE / 4096) as u64).ok_or(Error::NoMemory)?;
    FIRST.store(first.number(), Ordering::Relaxed);
    // No more in flight than the driver takes at once, so a frame that
    // passed the check is not lost for want of room in its queue.
    let depth = packet::queue_depth().clamp(1, BUFFERS as u32);
    FREE.store((1u64 << depth) - 1, Ordering::SeqCst);
    Ok(())
}

fn span(i: usize, len: usize) -> Span {
    let first = Frame::new(FIRST.load(Ordering::Relaxed));
    Span { frame: first.add((i * BUFFER_SIZE / 4096) as u64), offset: i * BUFFER_SIZE % 4096, len }
}

/// Buffer `i`'s bytes.
fn bytes(i: usize) -> &'static mut [u8] {
    let s = span(i, BUFFER_SIZE);
    // SAFETY: buffer `i` is the caller's (taken from `FREE`, not in flight),
    // 2 KiB inside one frame of the pool, in the physical window.
    unsafe { core::slice::from_raw_parts_mut(crate::mm::frame_ptr::<u8>(s.frame).add(s.offset), BUFFER_SIZE) }
}

/// A free buffer, taken.
fn take() -> Option<usize> {
    let mut free = FREE.load(Ordering::SeqCst);
    while free != 0 {
        let i = free.trailing_zeros() as usize;
        match FREE.compare_exchange(free, free & !(1 << i), Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return Some(i),
            Err(now) => free = now,
        }
    }
    None
}

/// The driver is done with buffer `cookie` (may run inside a crossing).
fn done(cookie: u64, _status: i32, _len: usize) {
    give_back(cookie as usize);
}

fn give_back(i: usize) {
    FREE.fetch_or(1 << i, Ordering::SeqCst);
}

/// `net_tx`: up to `max` frames from endpoint `id`'s transmit ring;
/// how many were taken (sent, refused, or lost for want of room in the
/// driver's queue). `Corrupt` rings (a counter further than a ring away)
/// give `BadState`, with nothing taken.
pub fn transmit(mem: &mut Memory, id: u64, max: u64) -> Result<u64, Error> {
    // Buffers the driver finished with come back first.
    super::super::service(mem);
    let mut ready = [(0usize, 0usize); BUFFERS];
    let mut n_ready = 0;
    let (taken, corrupt) = NET.with(|n| {
        let (e, d, owner) = n.ep(id)?;
        let (mut taken, mut corrupt) = (0, false);
        while taken < max {
            let (ring, mut pages) = e.tx_parts();
            match ring.pending(&pages) {
                Ok(0) => break,
                Ok(_) => {}
                Err(_) => {
                    corrupt = true;
                    break;
                }
            }
            let Some(i) = take() else { break };
            let buf = bytes(i);
            // `pending` just said a frame waits.
            let Ok(slot) = ring.pop(&mut pages, buf) else {
                give_back(i);
                corrupt = true;
                break;
            };
            taken += 1;
            match slot {
                Some(Slot::Frame { len, .. }) if d.check_transmit(owner, &buf[..len]).is_ok() => {
                    ready[n_ready] = (i, len);
                    n_ready += 1;
                }
                _ => {
                    give_back(i);
                    ring.refuse(&mut pages);
                    e.refused += 1;
                }
            }
        }
        Ok::<_, Error>((taken, corrupt))
    })?;
    // The driver is called with the endpoint state given back: a frame it
    // receives meanwhile is demultiplexed at once.
    let mut sent = 0;
    for &(i, len) in &ready[..n_ready] {
        match packet::transmit(&mem.frames, 0, span(i, len), done, i as u64) {
            Ok(_) => sent += 1,
            Err(_) => give_back(i),
        }
    }
    NET.with(|n| {
        if let Ok((e, _, _)) = n.ep(id) {
            e.sent += sent;
            e.lost += n_ready as u64 - sent;
        }
    });
    if corrupt && taken == 0 {
        return Err(Error::BadState);
    }
    Ok(taken)
}
