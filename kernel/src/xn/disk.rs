//! XN's disk in the kernel: the virtio block device through the device
//! layer (`dev::wait`). A block is eight sectors. Blocks that go to or
//! from cache pages move straight between the disk and the frames (the
//! kernel copies no file data); XN's own reads and writes (the
//! superblock, the type catalogue, the metadata the free-map rebuild
//! walks) go through one kernel frame.

use crate::dev::block::{BlockError, SECTOR};
use crate::dev::{wait, Span};
use crate::frames::Frame;
use ::xn::{DiskError, PageId, BLOCK};
use alloc::vec::Vec;

const SECTORS_PER_BLOCK: u64 = (BLOCK / SECTOR) as u64;

pub struct BlockDisk {
    blocks: u64,
    /// A frame of the kernel's: the buffer of XN's own requests, and the
    /// token a flush carries.
    bounce: Frame,
}

impl BlockDisk {
    pub fn new(sectors: u64, bounce: Frame) -> BlockDisk {
        BlockDisk { blocks: sectors / SECTORS_PER_BLOCK, bounce }
    }

    fn bounce(&self) -> &'static mut [u8; BLOCK] {
        // SAFETY: the kernel's own frame, used only here and only while
        // no request on it is in flight (`wait::transfer` returns after
        // every request it started ended).
        unsafe { &mut *crate::mm::frame_ptr::<[u8; BLOCK]>(self.bounce) }
    }

    /// Checks the run of `n` blocks from `start`.
    fn run(&self, start: u64, n: u64) -> Result<(), DiskError> {
        match start.checked_add(n) {
            Some(end) if n > 0 && end <= self.blocks => Ok(()),
            _ if n == 0 => Err(DiskError::BadLength),
            _ => Err(DiskError::OutOfRange),
        }
    }

    /// Moves whole frames to or from the blocks from `start`.
    fn frames(&self, write: bool, start: u64, frames: impl Iterator<Item = Frame>) -> Result<(), DiskError> {
        let reqs: Vec<(Span, u64)> = frames
            .enumerate()
            .map(|(i, f)| (Span { frame: f, offset: 0, len: BLOCK }, (start + i as u64) * SECTORS_PER_BLOCK))
            .collect();
        wait::transfer(write, &reqs).map_err(disk_error)
    }
}

fn disk_error(e: BlockError) -> DiskError {
    match e {
        BlockError::PastEnd => DiskError::OutOfRange,
        BlockError::BadRange => DiskError::BadLength,
        _ => DiskError::Io,
    }
}

impl ::xn::Disk for BlockDisk {
    fn blocks(&self) -> u64 {
        self.blocks
    }

    fn read(&mut self, start: u64, buf: &mut [u8]) -> Result<(), DiskError> {
        if !buf.len().is_multiple_of(BLOCK) {
            return Err(DiskError::BadLength);
        }
        self.run(start, (buf.len() / BLOCK) as u64)?;
        for (i, chunk) in buf.chunks_mut(BLOCK).enumerate() {
            self.frames(false, start + i as u64, core::iter::once(self.bounce))?;
            chunk.copy_from_slice(self.bounce());
        }
        Ok(())
    }

    fn write(&mut self, start: u64, buf: &[u8]) -> Result<(), DiskError> {
        if !buf.len().is_multiple_of(BLOCK) {
            return Err(DiskError::BadLength);
        }
        self.run(start, (buf.len() / BLOCK) as u64)?;
        for (i, chunk) in buf.chunks(BLOCK).enumerate() {
            self.bounce().copy_from_slice(chunk);
            self.frames(true, start + i as u64, core::iter::once(self.bounce))?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), DiskError> {
        wait::flush(Span { frame: self.bounce, offset: 0, len: SECTOR }).map_err(disk_error)
    }

    fn read_pages(&mut self, start: u64, pages: &[PageId]) -> Result<bool, DiskError> {
        self.run(start, pages.len() as u64)?;
        self.frames(false, start, pages.iter().map(|p| Frame::new(p.0))).map(|_| true)
    }

    fn write_pages(&mut self, start: u64, pages: &[PageId]) -> Result<bool, DiskError> {
        self.run(start, pages.len() as u64)?;
        self.frames(true, start, pages.iter().map(|p| Frame::new(p.0))).map(|_| true)
    }
}
