//! The network's shared structures: packet rings in pages the owning
//! environment supplies, and the context packet filters see. Layouts are
//! fixed (`repr(C)`, checked below); see `docs/network.md`.
//!
//! A ring is a header followed by `slots` slots of `slot_size` bytes; each
//! slot is a [`SlotHeader`] then the frame. One side produces (advances
//! `head`), the other consumes (advances `tail`); both are free-running
//! u32 counters, the slot of counter `i` is `i % slots`. A receive ring is
//! produced by the kernel and consumed by its owner; a transmit ring the
//! other way round. The kernel keeps its own copy of the geometry and of
//! its own counter, taken at attach time, and never trusts the words the
//! other side can write.

/// Header at offset 0 of a ring.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingHeader {
    /// Number of slots: a power of two, 1..=`MAX_SLOTS`.
    pub slots: u32,
    /// Bytes per slot, `SlotHeader` included: a multiple of 8,
    /// `MIN_SLOT_SIZE..=MAX_SLOT_SIZE`.
    pub slot_size: u32,
    /// Frames produced (written by the producer only).
    pub head: u32,
    /// Frames consumed (written by the consumer only).
    pub tail: u32,
    /// Frames the producer dropped because the ring was full.
    pub overflow: u64,
    /// Frames cut to the slot's capacity (receive) or refused as malformed
    /// or not allowed (transmit).
    pub damaged: u64,
    /// The owner's to use as it likes; the kernel never reads or writes
    /// it (the library OS rings a doorbell here: its sleepers wake when it
    /// changes).
    pub owner_word: u64,
    pub _reserved: [u64; 3],
}

/// Header of each slot.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotHeader {
    /// Bytes of frame that follow (at most `slot_size - 8`).
    pub len: u32,
    /// `SLOT_*` bits.
    pub flags: u32,
}

/// The frame did not fit and was cut (receive).
pub const SLOT_TRUNCATED: u32 = 1;
/// The kernel refused to send this frame (transmit; see `damaged`).
pub const SLOT_REFUSED: u32 = 2;

/// Offset of slot 0.
pub const RING_SLOTS_OFFSET: usize = 64;
pub const MIN_SLOT_SIZE: u32 = 64;
/// Room for a 1514-byte frame and the slot header, rounded to 2 KiB.
pub const MAX_SLOT_SIZE: u32 = 2048;
pub const MAX_SLOTS: u32 = 4096;

/// Bytes a ring with this geometry needs.
pub const fn ring_bytes(slots: u32, slot_size: u32) -> usize {
    RING_SLOTS_OFFSET + slots as usize * slot_size as usize
}

/// The context a packet filter gets in r1 (`struct veneer_packet_ctx` in
/// `bpf/include/veneer_bpf.h`): words 0 and 1 are the packet bounds.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCtx {
    pub data: u32,
    pub data_end: u32,
    pub ifindex: u32,
    pub flags: u32,
}

/// Pages one ring of this geometry takes (an endpoint's transmit ring
/// starts on the page after its receive ring).
pub const fn ring_pages(slots: u32, slot_size: u32) -> u64 {
    (ring_bytes(slots, slot_size) as u64).div_ceil(4096)
}

/// Most bytes of slots one ring may have.
pub const MAX_RING_BYTES: usize = 1 << 20;
/// Most instructions in one packet filter.
pub const FILTER_MAX_INSNS: u64 = 1024;

/// What `net_stats` reports: the machine's counters, then the endpoint's.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetStats {
    /// Frames the NIC received.
    pub frames: u64,
    /// Frames no filter claimed: dropped (a raw receive buffer of the
    /// device capability's holder may still have had a copy).
    pub unclaimed: u64,
    /// Frames checked on transmit, and refused.
    pub tx_checked: u64,
    pub tx_refused: u64,
    /// Work of the merged tree (nodes visited, field loads, hash probes).
    pub tree_work: u64,
    /// Installed filters (all endpoints), and merged-tree nodes.
    pub filters: u64,
    pub tree_nodes: u64,
    /// This endpoint: frames delivered into its receive ring, dropped
    /// because it was full, sent, refused on transmit, its filters.
    pub delivered: u64,
    pub ring_full: u64,
    pub sent: u64,
    pub refused: u64,
    /// Frames that passed the check but found the driver's queue full.
    pub lost: u64,
    pub ep_filters: u64,
}

const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<RingHeader>() == RING_SLOTS_OFFSET);
    assert!(offset_of!(RingHeader, head) == 8 && offset_of!(RingHeader, tail) == 12);
    assert!(offset_of!(RingHeader, overflow) == 16 && offset_of!(RingHeader, damaged) == 24);
    assert!(size_of::<SlotHeader>() == 8);
    assert!(size_of::<PacketCtx>() == 16 && offset_of!(PacketCtx, data_end) == 4);
};
