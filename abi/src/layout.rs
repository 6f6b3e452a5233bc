//! Fixed virtual addresses in every environment's address space.
//!
//! The top 512 GiB of the user half (PML4 slot 255) is shared by all
//! environments and read-only: the kernel exposes its bookkeeping there
//! (paper 000 §3.1, "expose information"). User mappings may not go there.

/// Lowest address a user mapping may use (page 0 stays unmapped).
pub const USER_MIN: u64 = 0x1000;
/// Start of the shared read-only window; user mappings must end below it.
pub const EXPOSED_BASE: u64 = 0x7F80_0000_0000;
/// The kernel information page ([`crate::tables::KernelInfo`]).
pub const KINFO_VA: u64 = EXPOSED_BASE;
/// The environment table ([`crate::tables::EnvInfo`] per slot).
pub const ENV_TABLE_VA: u64 = EXPOSED_BASE + 0x20_0000;
/// The physical frame table ([`crate::tables::FrameInfo`] per frame).
pub const FRAME_TABLE_VA: u64 = EXPOSED_BASE + 0x4000_0000;
/// The boot file system (a cpio "newc" archive handed over by the loader).
pub const BOOTFS_VA: u64 = EXPOSED_BASE + 0x40_0000_0000;
/// Page size.
pub const PAGE_SIZE: u64 = 4096;
/// Top of the first environment's stack (the library OS uses the same
/// layout for the programs it loads).
pub const INIT_STACK_TOP: u64 = 0x7F00_0000_0000;
/// Pages of stack the first environment starts with.
pub const INIT_STACK_PAGES: u64 = 64;
