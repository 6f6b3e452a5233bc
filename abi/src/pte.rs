//! The x86-64 page-table entry, as programs read it through the self-map
//! (`layout::PAGE_TABLE_VA`, `layout::pte_va`): the format is ABI because
//! every environment can read its own entries. Veneer sets no software
//! bits in the entries that map pages; copy-on-write is the library's
//! reading of a read-only entry in a writable region. In an entry that
//! points to a table, bits 52-58 (ignored by the processor there) are the
//! kernel's note of which part of that table is in use (see
//! `kernel/src/pagetable.rs`): use `FRAME_MASK` and `PRESENT`, not the
//! whole entry.

/// The entry maps something (for a leaf, the page; above, the next table).
pub const PRESENT: u64 = 1 << 0;
/// Writes are allowed.
pub const WRITABLE: u64 = 1 << 1;
/// User mode may use the page.
pub const USER: u64 = 1 << 2;
/// The page was written since the kernel mapped it (set by the CPU).
pub const DIRTY: u64 = 1 << 6;
/// Instruction fetches fault.
pub const NO_EXEC: u64 = 1 << 63;
/// The physical address bits: the frame number shifted left by 12.
pub const FRAME_MASK: u64 = 0x000f_ffff_ffff_f000;

/// The frame number an entry points to.
pub const fn frame_of(pte: u64) -> u64 {
    (pte & FRAME_MASK) >> 12
}
