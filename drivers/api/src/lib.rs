//! The crossing between the Veneer kernel and a driver image (paper 004
//! §3.2, "extension procedure call"). The two sides share nothing but the
//! two tables below: the kernel hands the driver a [`KernelApi`] of wrapper
//! functions at init, and the driver's image exports a [`DriverApi`] of entry
//! points (its ELF entry point returns it). Every call across goes through
//! one of them, so that moving the driver into a protection domain of its
//! own changes the crossing, not the driver. See `docs/drivers.md`.
#![no_std]

/// The version both sides must agree on.
pub const VERSION: u32 = 2;

/// The most pages one block request may carry (`Request`): a run of
/// consecutive sectors whose buffer is that many frames anywhere in
/// memory, which the driver hands its device as one descriptor chain.
pub const MAX_PAGES: usize = 32;

/// Status codes returned across the crossing.
pub mod status {
    pub const OK: i32 = 0;
    /// An argument was refused by a wrapper's checks.
    pub const INVALID: i32 = -1;
    /// Out of memory, queue slots or table entries.
    pub const NO_SPACE: i32 = -2;
    /// The device reported an error, or the driver was disabled.
    pub const IO_ERROR: i32 = -3;
    /// The request is of a kind this driver does not serve.
    pub const UNSUPPORTED: i32 = -4;
}

/// Directions of a shared buffer (as `virtio_drivers::BufferDirection`).
pub mod direction {
    pub const TO_DEVICE: u32 = 0;
    pub const FROM_DEVICE: u32 = 1;
    pub const BOTH: u32 = 2;
}

/// The kernel's wrappers, handed to the driver at init. Each checks its
/// arguments against what the calling driver holds and records what it
/// hands out in the driver's object tracker.
#[repr(C)]
pub struct KernelApi {
    pub version: u32,
    /// Prints a line on the console, prefixed with the driver's name.
    pub log: extern "C" fn(text: *const u8, len: usize),
    /// `pages` zeroed, physically contiguous pages for DMA: returns the
    /// physical address (0 on failure) and stores the driver's address of
    /// them in `*va`.
    pub dma_alloc: extern "C" fn(pages: usize, va: *mut usize) -> u64,
    /// Gives back pages from `dma_alloc`: 0, or `status::INVALID` when they
    /// are not exactly an allocation this driver holds.
    pub dma_free: extern "C" fn(paddr: u64, va: usize, pages: usize) -> i32,
    /// The driver's address of `size` bytes of device registers at
    /// `paddr`, which must lie inside one of its device's memory BARs (0 if
    /// not).
    pub mmio_map: extern "C" fn(paddr: u64, size: usize) -> usize,
    /// Lets the device reach `len` bytes at `va` (a buffer lent to the
    /// driver with a request, or the driver's own data): returns the
    /// physical address, 0 if refused.
    pub share: extern "C" fn(va: usize, len: usize, direction: u32) -> u64,
    /// Ends a `share`.
    pub unshare: extern "C" fn(paddr: u64, va: usize, len: usize),
    /// Reads the 32-bit word at `offset` of the driver's own device's
    /// configuration space (all ones when out of range).
    pub config_read: extern "C" fn(offset: u32) -> u32,
    /// Writes a configuration word of the driver's own device; the kernel
    /// keeps the BARs and the MSI-X capability to itself.
    pub config_write: extern "C" fn(offset: u32, value: u32) -> i32,
    /// Routes the device's interrupts to the driver's `interrupt` entry
    /// (MSI-X table entry 0, else its INTx line): 0 or an error.
    pub irq_enable: extern "C" fn() -> i32,
    /// Reports request `tag` finished with `status` (and `len` bytes moved).
    pub complete: extern "C" fn(tag: u64, status: i32, len: usize),
    /// Hands a received frame (`len` bytes at `va`, valid during the call)
    /// to the kernel's packet demultiplexer.
    pub receive: extern "C" fn(va: usize, len: usize),
    /// The driver cannot go on (its panic handler): the kernel disables it.
    pub fail: extern "C" fn(text: *const u8, len: usize),
}

/// Request kinds.
pub mod op {
    pub const READ: u32 = 1;
    pub const WRITE: u32 = 2;
    pub const TRANSMIT: u32 = 3;
    /// Every write completed before this request is on stable storage
    /// when it completes (no buffer: `len` is 0). A block driver takes it
    /// only with no other request in flight (else `NO_SPACE`).
    pub const FLUSH: u32 = 4;
    /// Fault injection (paper 004 §4), in builds with the `inject`
    /// feature only (the boot tests'): the driver writes a byte at the
    /// address in `sector`, as a buggy driver's wild write would. Used by
    /// the isolation boot test.
    #[cfg(feature = "inject")]
    pub const INJECT_WILD_WRITE: u32 = 0xF0;
    /// Fault injection: the driver recurses until its stack overflows.
    #[cfg(feature = "inject")]
    pub const INJECT_STACK_OVERFLOW: u32 = 0xF1;
    /// Fault injection: the driver loops forever in this call.
    #[cfg(feature = "inject")]
    pub const INJECT_LIVELOCK: u32 = 0xF2;
    /// Fault injection: the driver's next interrupt handler loops forever.
    #[cfg(feature = "inject")]
    pub const INJECT_IRQ_LIVELOCK: u32 = 0xF3;
    /// Fault injection: the driver calls a function at the address in
    /// `sector` (a wild jump: a corrupted function pointer).
    #[cfg(feature = "inject")]
    pub const INJECT_WILD_CALL: u32 = 0xF4;
    /// Fault injection: a read of sector 0 whose buffer the driver hands
    /// its device as physical address `sector` instead of the lent page's
    /// (a wrong DMA address; only an IOMMU stops the device's write).
    #[cfg(feature = "inject")]
    pub const INJECT_WILD_DMA: u32 = 0xF5;
    /// Fault injection: the driver turns interrupts off and loops forever
    /// in this call (`cli; jmp $`): only an NMI reaches it.
    #[cfg(feature = "inject")]
    pub const INJECT_CLI_LIVELOCK: u32 = 0xF6;
    /// Fault injection: the driver points its stack pointer at the address
    /// in `sector` (a corrupted `rsp`), then waits for an interrupt with
    /// interrupts on (`len` 0) or calls the kernel's `log` (`len` 1).
    #[cfg(feature = "inject")]
    pub const INJECT_BAD_STACK: u32 = 0xF7;
    /// Fault injection: the driver runs an instruction only ring 0 may,
    /// as `sector` says: `sysret` (to ring 3, at 0x1000) or `int 14` (a
    /// software interrupt to a vector whose processor-raised form pushes
    /// an error code, so the frame the kernel reads is shifted).
    #[cfg(feature = "inject")]
    pub const INJECT_PRIVILEGED: u32 = 0xF9;
    #[cfg(feature = "inject")]
    pub const PRIVILEGED_SYSRET: u64 = 1;
    #[cfg(feature = "inject")]
    pub const PRIVILEGED_INT14: u64 = 2;
    /// Fault injection: the driver lies from now on, as `sector` says.
    #[cfg(feature = "inject")]
    pub const INJECT_LIE: u32 = 0xF8;
    /// `INJECT_LIE`: it refuses every request, saying its queue is full.
    #[cfg(feature = "inject")]
    pub const LIE_FULL: u64 = 1;
    /// `INJECT_LIE`: it says its next request ended well, with half the
    /// bytes moved.
    #[cfg(feature = "inject")]
    pub const LIE_SHORT: u64 = 2;
    /// `INJECT_LIE`: it takes this request and never ends it.
    #[cfg(feature = "inject")]
    pub const LIE_DROP: u64 = 3;
    /// `INJECT_LIE`: it refuses its next request with an I/O error its
    /// device never reported.
    #[cfg(feature = "inject")]
    pub const LIE_REFUSE: u64 = 4;
    /// `INJECT_LIE`: it ends its next request with an I/O error its
    /// device never reported.
    #[cfg(feature = "inject")]
    pub const LIE_ERROR: u64 = 5;
    /// `INJECT_LIE`: it ends its next request calling it invalid.
    #[cfg(feature = "inject")]
    pub const LIE_INVALID: u64 = 6;
}

/// One request from the kernel: sectors to read into or write from the
/// lent buffer `va..va + len`, or a frame there to transmit. The buffer
/// may span several pages (up to `Facts::max_pages`): each is its own
/// frame, so the device must be given each page's part apart (`share`
/// refuses a range that crosses from one lent page into the next).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Request {
    pub op: u32,
    pub tag: u64,
    pub sector: u64,
    pub va: usize,
    pub len: usize,
}

/// What the kernel tells a driver about its device.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceInfo {
    pub bus: u8,
    pub device: u8,
    pub function: u8,
    pub vendor_id: u16,
    pub device_id: u16,
}

/// Facts a driver reports after init.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts {
    /// Sectors (block devices).
    pub capacity: u64,
    /// The MAC address (network devices).
    pub mac: [u8; 6],
    /// How many requests may be in flight at once.
    pub queue_depth: u32,
    /// Whether the device has a volatile write cache it flushes on
    /// [`op::FLUSH`] (virtio's `VIRTIO_BLK_F_FLUSH` negotiated): 1 or 0.
    /// Without it a flush request is refused (`UNSUPPORTED`), never
    /// answered with a success that promises nothing.
    pub flush: u32,
    /// The most pages one request may carry (block devices): 1 to
    /// [`MAX_PAGES`], no more than the device takes in one request.
    pub max_pages: u32,
}

/// The entry points a driver image exports.
#[repr(C)]
pub struct DriverApi {
    pub version: u32,
    /// Brings the device up; fills `facts`.
    pub init: extern "C" fn(kernel: &'static KernelApi, device: &DeviceInfo, facts: &mut Facts) -> i32,
    /// Starts a request; its end is reported through `KernelApi::complete`.
    pub submit: extern "C" fn(request: &Request) -> i32,
    /// The device interrupted.
    pub interrupt: extern "C" fn(),
}

/// The type of a driver image's ELF entry point.
pub type Entry = extern "C" fn() -> &'static DriverApi;

/// The pattern `cargo xtask` writes into every fresh disk image, which the
/// kernel's block self-test reads back: byte `i` of sector `s` is the
/// sector number (little-endian) in the first eight bytes, then a
/// sequence that differs from sector to sector.
pub fn disk_pattern_byte(s: u64, i: usize) -> u8 {
    if i < 8 {
        s.to_le_bytes()[i]
    } else {
        (s.wrapping_mul(31) as u8).wrapping_add((i as u8).wrapping_mul(7)) ^ 0x5A
    }
}

/// Where the fault-injection workload (`user/src/bin/faultload.rs`,
/// `cargo xtask faults`) writes its blocks: `WORKLOAD_BLOCKS` blocks of 4
/// KiB from this sector, block `j` holding `workload_byte(j, i)`. The
/// campaign checks the disk image for every write the kernel acknowledged.
pub const WORKLOAD_SECTOR: u64 = 2048;
pub const WORKLOAD_BLOCKS: usize = 16;

/// Byte `i` of the workload's block (or echo payload) `j`.
pub fn workload_byte(j: usize, i: usize) -> u8 {
    ((j as u32).wrapping_mul(0x9E37_79B9) ^ (i as u32).wrapping_mul(0x85EB_CA6B)).to_le_bytes()[(i + j) % 4]
        ^ (i >> 8) as u8
}
