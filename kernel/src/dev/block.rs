//! The kernel's block interface: read or write whole sectors between the
//! disk and a frame its owner holds — or a run of consecutive sectors and
//! as many frames, anywhere in memory, in one request (`run`) — with a
//! completion call, and flush the disk's write cache. XN (`crate::xn`)
//! builds on it through `wait.rs`; environments never see the device or
//! its driver.

use super::driver::{self, Done};
use super::run::{self, Span};
pub use super::run::{BlockError, SECTOR};
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

/// The block driver's index.
fn device() -> Option<usize> {
    driver::find("virtio-blk")
}

/// Sectors on the disk (0 without one).
pub fn capacity() -> u64 {
    driver::facts("virtio-blk").map_or(0, |f| f.capacity)
}

/// The most pages one request may carry (0 without a disk).
pub fn max_pages() -> usize {
    driver::facts("virtio-blk").map_or(0, |f| f.max_pages as usize)
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
    let (i, disk) = driver::found("virtio-blk").ok_or(BlockError::NoDevice)?;
    let bufs = [buf];
    let (capacity, most) = (disk.capacity, disk.max_pages as usize);
    let len = run::check(&bufs, sector, capacity, most, |f| driver::holds(frames, owner, f))?;
    start(i, write, &bufs, len, sector, done, cookie)
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
    let started = run::addrs(&[token], |pages| driver::submit(i, r, pages, done, cookie));
    if started.is_ok() {
        COUNTS[FLUSHES].fetch_add(1, Relaxed);
    }
    started.map_err(driver_error)
}

/// Starts one request on a run of frames the kernel vouches for (its
/// own, or pages XN has taken into its cache, `crate::xn`): `bufs` on
/// the consecutive sectors from `sector`. Checked like `submit` (the
/// shape, the disk's end, the driver's bound) except for the owner.
pub fn submit_pinned(
    write: bool,
    bufs: &[Span],
    sector: u64,
    done: Done,
    cookie: u64,
) -> Result<u64, BlockError> {
    let (i, disk) = driver::found("virtio-blk").ok_or(BlockError::NoDevice)?;
    let len = run::check(bufs, sector, disk.capacity, disk.max_pages as usize, |_| true)?;
    start(i, write, bufs, len, sector, done, cookie)
}

fn driver_error(e: i32) -> BlockError {
    if e == status::OK {
        BlockError::Driver(status::IO_ERROR)
    } else {
        BlockError::Driver(e)
    }
}

/// Starts a checked request of `len` bytes on `bufs`.
fn start(
    i: usize,
    write: bool,
    bufs: &[Span],
    len: usize,
    sector: u64,
    done: Done,
    cookie: u64,
) -> Result<u64, BlockError> {
    let r = Request { op: if write { op::WRITE } else { op::READ }, tag: 0, sector, va: 0, len };
    let started = run::addrs(bufs, |pages| driver::submit(i, r, pages, done, cookie));
    if started.is_ok() {
        // A request, and (the next counter) its sectors.
        let at = if write { WRITES } else { READS };
        COUNTS[at].fetch_add(1, Relaxed);
        COUNTS[at + 1].fetch_add((len / SECTOR) as u64, Relaxed);
    }
    started.map_err(driver_error)
}
