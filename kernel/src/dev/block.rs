//! The kernel's block interface: read or write whole sectors between the
//! disk and a frame its owner holds, with a completion call. It is the
//! layer protection (XN, a later issue) builds on; environments never see
//! the device or its driver.

use super::driver::{self, Done, Span};
use crate::frames::Frames;
use drvapi::{op, status, Request};

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
    let Span { frame, offset, len } = buf;
    let i = device().ok_or(BlockError::NoDevice)?;
    if len == 0 || !len.is_multiple_of(SECTOR) || !offset.is_multiple_of(SECTOR) || offset + len > 4096 {
        return Err(BlockError::BadRange);
    }
    let end = sector.checked_add((len / SECTOR) as u64).ok_or(BlockError::PastEnd)?;
    if end > capacity() {
        return Err(BlockError::PastEnd);
    }
    if !driver::holds(frames, owner, frame) {
        return Err(BlockError::NotOwner);
    }
    let pa = frame.addr() + offset as u64;
    let r = Request { op: if write { op::WRITE } else { op::READ }, tag: 0, sector, va: 0, len };
    driver::submit(i, r, pa, done, cookie).map_err(|e| {
        if e == status::OK {
            BlockError::Driver(status::IO_ERROR)
        } else {
            BlockError::Driver(e)
        }
    })
}
