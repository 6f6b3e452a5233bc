//! The two ends of a ring.

use core::mem::offset_of;

use abi::net::{
    ring_bytes, RingHeader, MAX_SLOTS, MAX_SLOT_SIZE, MIN_SLOT_SIZE, RING_SLOTS_OFFSET, SLOT_TRUNCATED,
};

use crate::mem::RingMem;

const HEAD: usize = offset_of!(RingHeader, head);
const TAIL: usize = offset_of!(RingHeader, tail);
const OVERFLOW: usize = offset_of!(RingHeader, overflow);
const DAMAGED: usize = offset_of!(RingHeader, damaged);
const SLOT_HEADER: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingError {
    /// Not a power of two in 1..=MAX_SLOTS.
    BadSlots,
    /// Not a multiple of 8 in MIN_SLOT_SIZE..=MAX_SLOT_SIZE.
    BadSlotSize,
    /// The memory is smaller than the geometry needs.
    TooSmall,
}

/// A ring's shape, validated once when the ring is attached; both ends
/// keep their own copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    slots: u32,
    slot_size: u32,
}

impl Geometry {
    pub fn new(slots: u32, slot_size: u32, mem_len: usize) -> Result<Geometry, RingError> {
        if !slots.is_power_of_two() || slots > MAX_SLOTS {
            return Err(RingError::BadSlots);
        }
        if !slot_size.is_multiple_of(8) || !(MIN_SLOT_SIZE..=MAX_SLOT_SIZE).contains(&slot_size) {
            return Err(RingError::BadSlotSize);
        }
        if mem_len < ring_bytes(slots, slot_size) {
            return Err(RingError::TooSmall);
        }
        Ok(Geometry { slots, slot_size })
    }

    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// Largest frame a slot holds.
    pub fn capacity(&self) -> usize {
        self.slot_size as usize - SLOT_HEADER
    }

    fn slot(&self, counter: u32) -> usize {
        RING_SLOTS_OFFSET + (counter & (self.slots - 1)) as usize * self.slot_size as usize
    }
}

/// The other side's counter is further from ours than a ring can be: it
/// wrote garbage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Corrupt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Push {
    Stored,
    /// Stored, cut to the slot's capacity.
    Truncated,
    /// No free slot (the consumer is behind, or its counter is garbage):
    /// dropped and counted in `overflow`.
    Full,
}

/// The end that fills slots and advances `head`.
#[derive(Debug)]
pub struct Producer {
    geo: Geometry,
    head: u32,
    overflow: u64,
    damaged: u64,
}

impl Producer {
    /// Starts at counter 0 and says so in the ring.
    pub fn attach(geo: Geometry, mem: &mut impl RingMem) -> Producer {
        mem.write_u32(HEAD, 0);
        Producer { geo, head: 0, overflow: 0, damaged: 0 }
    }

    pub fn head(&self) -> u32 {
        self.head
    }

    pub fn overflow(&self) -> u64 {
        self.overflow
    }

    /// Free slots, as far as the consumer's counter says (0 if garbage).
    pub fn room(&self, mem: &impl RingMem) -> u32 {
        let used = self.head.wrapping_sub(mem.read_u32(TAIL));
        self.geo.slots.saturating_sub(used)
    }

    /// Copies `frame` into the next slot.
    pub fn push(&mut self, mem: &mut impl RingMem, frame: &[u8], flags: u32) -> Push {
        if self.room(mem) == 0 {
            self.overflow += 1;
            mem.write_u64(OVERFLOW, self.overflow);
            return Push::Full;
        }
        let off = self.geo.slot(self.head);
        let n = frame.len().min(self.geo.capacity());
        let cut = n < frame.len();
        mem.write_bytes(off + SLOT_HEADER, &frame[..n]);
        mem.write_u32(off, n as u32);
        mem.write_u32(off + 4, flags | if cut { SLOT_TRUNCATED } else { 0 });
        if cut {
            self.damaged += 1;
            mem.write_u64(DAMAGED, self.damaged);
        }
        // Last: the consumer sees the slot only once it is complete.
        self.head = self.head.wrapping_add(1);
        mem.write_u32(HEAD, self.head);
        if cut {
            Push::Truncated
        } else {
            Push::Stored
        }
    }
}

/// What a consumer took from one slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// `len` bytes copied to the front of the buffer.
    Frame { len: usize, flags: u32 },
    /// The slot's length word exceeds the slot or the buffer: skipped and
    /// counted in `damaged`.
    Malformed,
}

/// The end that empties slots and advances `tail`.
#[derive(Debug)]
pub struct Consumer {
    geo: Geometry,
    tail: u32,
    damaged: u64,
}

impl Consumer {
    /// Starts at counter 0 and says so in the ring.
    pub fn attach(geo: Geometry, mem: &mut impl RingMem) -> Consumer {
        mem.write_u32(TAIL, 0);
        Consumer { geo, tail: 0, damaged: 0 }
    }

    pub fn tail(&self) -> u32 {
        self.tail
    }

    /// Frames waiting, or `Corrupt` if the producer's counter is garbage.
    pub fn pending(&self, mem: &impl RingMem) -> Result<u32, Corrupt> {
        let avail = mem.read_u32(HEAD).wrapping_sub(self.tail);
        if avail > self.geo.slots {
            return Err(Corrupt);
        }
        Ok(avail)
    }

    /// Takes the next frame into `buf`, if there is one.
    pub fn pop(&mut self, mem: &mut impl RingMem, buf: &mut [u8]) -> Result<Option<Slot>, Corrupt> {
        if self.pending(mem)? == 0 {
            return Ok(None);
        }
        let off = self.geo.slot(self.tail);
        let len = mem.read_u32(off) as usize;
        let flags = mem.read_u32(off + 4);
        let slot = if len > self.geo.capacity() || len > buf.len() {
            self.damaged += 1;
            mem.write_u64(DAMAGED, self.damaged);
            Slot::Malformed
        } else {
            mem.read_bytes(off + SLOT_HEADER, &mut buf[..len]);
            Slot::Frame { len, flags }
        };
        self.tail = self.tail.wrapping_add(1);
        mem.write_u32(TAIL, self.tail);
        Ok(Some(slot))
    }

    /// Counts a frame taken but not accepted (the kernel refused to send
    /// it) in `damaged`.
    pub fn refuse(&mut self, mem: &mut impl RingMem) {
        self.damaged += 1;
        mem.write_u64(DAMAGED, self.damaged);
    }
}
