//! What XN needs from a disk: whole blocks read and written, and a flush
//! after which every completed write is durable. The kernel backs it with
//! virtio-blk (a block is eight sectors); the host with memory or a file.

use alloc::vec;
use alloc::vec::Vec;

use crate::{PageId, BLOCK};

/// Why the disk refused or failed a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskError {
    /// The request reaches past the last block.
    OutOfRange,
    /// The buffer is not a whole number of blocks, or empty.
    BadLength,
    /// The device reported an error.
    Io,
}

/// A block device. `read`/`write` move `buf.len() / BLOCK` consecutive
/// blocks from `start` in one request; `flush` returns once every write
/// completed before it is on stable storage.
pub trait Disk {
    fn blocks(&self) -> u64;
    fn read(&mut self, start: u64, buf: &mut [u8]) -> Result<(), DiskError>;
    fn write(&mut self, start: u64, buf: &[u8]) -> Result<(), DiskError>;
    fn flush(&mut self) -> Result<(), DiskError>;
    /// Reads `pages.len()` blocks from `start` straight into the pages
    /// (the kernel: the device writes the frames, no copy); `Ok(false)`
    /// if this disk cannot, and XN reads through a buffer.
    fn read_pages(&mut self, _start: u64, _pages: &[PageId]) -> Result<bool, DiskError> {
        Ok(false)
    }
    /// Writes blocks from `start` straight from the pages, or `Ok(false)`.
    fn write_pages(&mut self, _start: u64, _pages: &[PageId]) -> Result<bool, DiskError> {
        Ok(false)
    }
}

/// Checks a request against a disk of `blocks` blocks and returns the byte
/// range it covers.
pub fn span(blocks: u64, start: u64, len: usize) -> Result<core::ops::Range<usize>, DiskError> {
    if len == 0 || !len.is_multiple_of(BLOCK) {
        return Err(DiskError::BadLength);
    }
    let n = (len / BLOCK) as u64;
    match start.checked_add(n) {
        Some(end) if end <= blocks => {
            let s = start as usize * BLOCK;
            Ok(s..s + len)
        }
        _ => Err(DiskError::OutOfRange),
    }
}

/// A disk in memory, with request counters (the figures the small-file
/// comparison reports are requests, as virtio-blk would see them).
#[derive(Clone, Debug)]
pub struct MemDisk {
    pub data: Vec<u8>,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
}

impl MemDisk {
    pub fn new(blocks: u64) -> MemDisk {
        MemDisk::from_image(vec![0; blocks as usize * BLOCK])
    }

    /// A disk holding `image` (its length is rounded down to whole blocks).
    pub fn from_image(mut image: Vec<u8>) -> MemDisk {
        image.truncate(image.len() / BLOCK * BLOCK);
        MemDisk { data: image, reads: 0, writes: 0, flushes: 0 }
    }
}

impl Disk for MemDisk {
    fn blocks(&self) -> u64 {
        (self.data.len() / BLOCK) as u64
    }

    fn read(&mut self, start: u64, buf: &mut [u8]) -> Result<(), DiskError> {
        let r = span(self.blocks(), start, buf.len())?;
        buf.copy_from_slice(&self.data[r]);
        self.reads += 1;
        Ok(())
    }

    fn write(&mut self, start: u64, buf: &[u8]) -> Result<(), DiskError> {
        let r = span(self.blocks(), start, buf.len())?;
        self.data[r].copy_from_slice(buf);
        self.writes += 1;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), DiskError> {
        self.flushes += 1;
        Ok(())
    }
}
