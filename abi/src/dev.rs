//! The block and packet interfaces as environments reach them: device
//! kinds, what `dev_info` reports, and the completion word a request ends
//! in (`docs/drivers.md`, "Device clients in ring 3").

/// Device kinds (`dev_info`, `dev_ping`, `dev_inject`).
pub const BLOCK: u64 = 0;
pub const NET: u64 = 1;

/// Bytes in a disk sector.
pub const SECTOR: u64 = 512;
/// Shortest and longest Ethernet frame `net_send` takes (no FCS).
pub const MIN_FRAME: u64 = 14;
pub const MAX_FRAME: u64 = 1514;

/// What `dev_info` reports about a device.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DevInfo {
    /// Sectors on the disk (block devices).
    pub capacity: u64,
    /// The NIC's address (network devices).
    pub mac: [u8; 6],
    pub reserved: u16,
    /// Requests the driver takes at once.
    pub queue_depth: u32,
    /// Whether DMA is confined by an IOMMU: [`confined`].
    pub confined: u32,
    /// Whether the driver runs in its own protection domain.
    pub isolated: u32,
    pub reserved2: u32,
}

/// Values of [`DevInfo::confined`].
pub mod confined {
    /// No remapping unit (or one the kernel refused).
    pub const NONE: u32 = 0;
    /// A unit, left off (`iommu=off`).
    pub const OFF: u32 = 1;
    pub const TRANSLATING: u32 = 2;
}

/// A request's completion word: the kernel sets it to 0 when it takes the
/// request and to `DONE | status << 32 | bytes` when it ends, so a
/// requester polls it or sleeps on a wakeup predicate over it
/// (`user::ebpf::WORD_NONZERO`).
pub const DONE: u64 = 1 << 63;

/// Status codes in a completion word.
pub mod status {
    pub const OK: u64 = 0;
    /// The device reported an error, or its driver was disabled with the
    /// request in flight.
    pub const IO_ERROR: u64 = 1;
}

/// A completion word's status (`None` while in flight).
pub const fn status_of(word: u64) -> Option<u64> {
    if word & DONE == 0 {
        None
    } else {
        Some(word >> 32 & 0x7FFF_FFFF)
    }
}

/// A completion word's byte count.
pub const fn bytes_of(word: u64) -> u64 {
    word & 0xFFFF_FFFF
}

/// Fault injection (`dev_inject`, kernels built with the `inject`
/// feature only: the boot tests of `docs/drivers.md`; paper 004 §4).
pub mod inject {
    /// The block driver writes into a kernel variable (`dev_wild`).
    pub const WILD_WRITE: u64 = 0;
    /// The network driver overflows its stack (`dev_overflow`).
    pub const STACK_OVERFLOW: u64 = 1;
    /// The block driver loops in a call (`dev_livelock`).
    pub const LIVELOCK: u64 = 2;
    /// The network driver's next interrupt handler loops.
    pub const IRQ_LIVELOCK: u64 = 3;
    /// The block driver jumps to 0x1000 (`dev_wildcall`).
    pub const WILD_CALL: u64 = 4;
    /// The block driver reads sector 0 but gives its device the address of
    /// frame `arg` (`dev_iommu`).
    pub const WILD_DMA: u64 = 5;
    /// The block driver turns interrupts off and loops (`dev_cli_livelock`).
    pub const CLI_LIVELOCK: u64 = 6;
    /// The block driver calls an unmapped address between the kernel's
    /// image and the driver regions (`dev_wildcall_high`).
    pub const WILD_CALL_HIGH: u64 = 7;
    /// The block driver points its stack pointer at its device's
    /// registers and waits for an interrupt there (`dev_wildcall_high`).
    pub const BAD_STACK_IRQ: u64 = 8;
    /// The same, then calls the kernel on that stack.
    pub const BAD_STACK_CALL: u64 = 9;
    /// The block driver runs `sysret` (and traps from ring 3:
    /// `dev_privileged`).
    pub const SYSRET: u64 = 10;
    /// The network driver runs `int 14` (a frame without the error code
    /// the vector's stub expects).
    pub const INT14: u64 = 11;
    /// The block driver refuses every request from now on, saying its
    /// queue is full (`dev_detect`).
    pub const LIE_FULL: u64 = 12;
    /// The network driver says its next frame went out whole, reporting
    /// half its bytes.
    pub const LIE_SHORT: u64 = 13;
    /// The block driver keeps this request and never ends it (the
    /// kernel's deadline must fail it).
    pub const LIE_DROP: u64 = 14;
    /// A driver refuses its next request with an I/O error its device
    /// never reported (`dev_restart`: a fresh copy of the driver is asked
    /// again).
    pub const LIE_REFUSE: u64 = 15;
    /// A driver ends its next request with an I/O error its device never
    /// reported.
    pub const LIE_ERROR: u64 = 16;
    /// A driver ends its next request calling it invalid.
    pub const LIE_INVALID: u64 = 17;
}
