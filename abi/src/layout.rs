//! Fixed virtual addresses in every environment's address space.
//!
//! The top 512 GiB of the user half (PML4 slot 255) is shared by all
//! environments and read-only: the kernel exposes its bookkeeping there
//! (paper 000 §3.1, "expose information"). User mappings may not go there.

/// Lowest address a user mapping may use (page 0 stays unmapped).
pub const USER_MIN: u64 = 0x1000;
/// User mappings must end below this address.
pub const USER_END: u64 = PAGE_TABLE_VA;
/// Each environment's own page tables, mapped read-only (PML4 slot 254
/// points to the PML4 itself), so a library can scan its address space
/// without system calls (as ExOS's fork does, paper 000 §5.2.1). The entry
/// mapping `va` is at `PAGE_TABLE_VA + (va >> 12) * 8` (for `va` below
/// `USER_END`); see [`pte_va`].
pub const PAGE_TABLE_VA: u64 = 254 << 39;

/// Address of the read-only page-table entry at `level` (0 = the 4 KiB
/// page entry, 3 = the PML4 entry) that maps `va`: the entry mapping an
/// address is found through the self-map, and the entry one level up is the
/// one mapping that entry's own address.
pub const fn pte_va(va: u64, level: u32) -> u64 {
    let mut a = va;
    let mut l = 0;
    while l <= level {
        a = PAGE_TABLE_VA + ((a & 0x0000_7FFF_FFFF_FFFF) >> 12) * 8;
        l += 1;
    }
    a
}

/// Start of the shared read-only window (PML4 slot 255).
pub const EXPOSED_BASE: u64 = 0x7F80_0000_0000;
/// The kernel information page ([`crate::tables::KernelInfo`]).
pub const KINFO_VA: u64 = EXPOSED_BASE;
/// The time-slice vector ([`crate::tables::SliceVector`]).
pub const SLICES_VA: u64 = EXPOSED_BASE + 0x1000;
/// The clock page ([`crate::tables::Clock`]).
pub const CLOCK_VA: u64 = EXPOSED_BASE + 0x2000;
/// The environment table ([`crate::tables::EnvInfo`] per slot).
pub const ENV_TABLE_VA: u64 = EXPOSED_BASE + 0x20_0000;
/// The physical frame table ([`crate::tables::FrameInfo`] per frame).
pub const FRAME_TABLE_VA: u64 = EXPOSED_BASE + 0x4000_0000;
/// XN's buffer-cache registry (`xn::RegEntry` per slot, `xn::Info`
/// says how many).
pub const XN_REGISTRY_VA: u64 = EXPOSED_BASE + 0x10_0000_0000;
/// XN's block-state map (one `xn::state` byte per disk block).
pub const XN_BLOCKS_VA: u64 = EXPOSED_BASE + 0x20_0000_0000;
/// The boot file system (a cpio "newc" archive handed over by the loader).
pub const BOOTFS_VA: u64 = EXPOSED_BASE + 0x40_0000_0000;
/// Page size.
pub const PAGE_SIZE: u64 = 4096;

/// Top of the first environment's stack (the library OS uses the same
/// layout for the programs it loads).
pub const INIT_STACK_TOP: u64 = USER_END;
/// Pages of stack the first environment starts with.
pub const INIT_STACK_PAGES: u64 = 64;
