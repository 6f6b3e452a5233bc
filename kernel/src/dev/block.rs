//! The kernel's block interface: read or write whole sectors between the
//! disk and a frame its owner holds, with a completion call, and flush the
//! disk's write cache. XN (`crate::xn`) builds on it through `wait.rs`;
//! environments never see the device or its driver.

use super::driver::{self, Done, Span};
use crate::frames::Frames;
use abi::tables::BlockCounts;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use drvapi::{op, status, Request};

/// The requests the driver took since boot (`counts`): reads, sectors
/// read, writes, sectors written, flushes. Atomics: the timer's tick
/// reads them and may interrupt a request being started.
static COUNTS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];
const READS: usize = 0;
const WRITES: usize = 2;
const FLUSHES: usize = 4;

/// Requests the driver took since boot, by kind, and the sectors they
/// move (what `KernelInfo::block` shows).
pub fn counts() -> BlockCounts {
    let c = |i: usize| COUNTS[i].load(Relaxed);
    BlockCounts { reads: c(0), read_sectors: c(1), writes: c(2), write_sectors: c(3), flushes: c(4) }
}

pub const SECTOR: usize = 512;

/// Why a block request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockError {
    NoDevice,
    /// Length or offset not whole sectors, or past the frame's end.
    BadRange,
    /// Past the end of the disk.
    PastEnd,
    /// The frame is not `owner`'s.
    NotOwner,
    /// The driver failed or is busy (a `drvapi::status`).
    Driver(i32),
}

/// The block driver's index.
fn device() -> Option<usize> {
    driver::find("virtio-blk")
}

/// Sectors on the disk (0 without one).
pub fn capacity() -> u64 {
    driver::facts("virtio-blk").map_or(0, |f| f.capacity)
}

/// Starts moving the bytes of `buf` (a frame `owner`, 0 for the kernel,
/// must hold) to or from sectors from `sector`; `done` gets `cookie` back
/// with the outcome.
pub fn submit(
    frames: &Frames,
    write: bool,
    owner: u32,
    buf: Span,
    sector: u64,
    done: Done,
    cookie: u64,
) -> Result<u64, BlockError> {
    let i = checked(buf, sector)?;
    if !driver::holds(frames, owner, buf.frame) {
        return Err(BlockError::NotOwner);
    }
    start(i, write, buf, sector, done, cookie)
}

/// The driver's index, if `buf` is whole sectors inside its frame and
/// the sectors from `sector` lie on the disk.
fn checked(buf: Span, sector: u64) -> Result<usize, BlockError> {
    let Span { offset, len, .. } = buf;
    let i = device().ok_or(BlockError::NoDevice)?;
    if len == 0 || !len.is_multiple_of(SECTOR) || !offset.is_multiple_of(SECTOR) || offset + len > 4096 {
        return Err(BlockError::BadRange);
    }
    let end = sector.checked_add((len / SECTOR) as u64).ok_or(BlockError::PastEnd)?;
    if end > capacity() {
        return Err(BlockError::PastEnd);
    }
    Ok(i)
}

/// Whether the disk flushes its write cache on request (virtio's
/// `VIRTIO_BLK_F_FLUSH` negotiated; `drvapi::Facts::flush`).
pub fn flushes() -> bool {
    driver::facts("virtio-blk").is_some_and(|f| f.flush != 0)
}

/// Starts a flush: every write completed before it is on stable storage
/// when it ends. `token` (a frame the kernel holds) is lent with it as
/// every request's buffer is; nothing moves through it: its length is 0
/// (`drvapi::op::FLUSH`), which is what the driver reports moved when it
/// ends well (the `complete` wrapper holds it to the request's length).
pub fn flush(token: Span, done: Done, cookie: u64) -> Result<u64, BlockError> {
    let i = device().ok_or(BlockError::NoDevice)?;
    let r = Request { op: op::FLUSH, tag: 0, sector: 0, va: 0, len: 0 };
    let started = driver::submit(i, r, token.frame.addr() + token.offset as u64, done, cookie);
    if started.is_ok() {
        COUNTS[FLUSHES].fetch_add(1, Relaxed);
    }
    started.map_err(driver_error)
}

/// Starts a request on a frame the kernel vouches for: its own, or a page
/// XN has taken into its cache (`crate::xn`). Checked like `submit`
/// except for the owner.
pub fn submit_pinned(
    write: bool,
    buf: Span,
    sector: u64,
    done: Done,
    cookie: u64,
) -> Result<u64, BlockError> {
    start(checked(buf, sector)?, write, buf, sector, done, cookie)
}

fn driver_error(e: i32) -> BlockError {
    if e == status::OK {
        BlockError::Driver(status::IO_ERROR)
    } else {
        BlockError::Driver(e)
    }
}

fn start(i: usize, write: bool, buf: Span, sector: u64, done: Done, cookie: u64) -> Result<u64, BlockError> {
    let Span { frame, offset, len } = buf;
    let pa = frame.addr() + offset as u64;
    let r = Request { op: if write { op::WRITE } else { op::READ }, tag: 0, sector, va: 0, len };
    let started = driver::submit(i, r, pa, done, cookie);
    if started.is_ok() {
        // A request, and (the next counter) its sectors.
        let at = if write { WRITES } else { READS };
        COUNTS[at].fetch_add(1, Relaxed);
        COUNTS[at + 1].fetch_add((len / SECTOR) as u64, Relaxed);
    }
    started.map_err(driver_error)
}
