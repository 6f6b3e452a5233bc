//! This process's page table, read through the self-map (the kernel maps
//! each environment's page-table pages read-only at `abi::layout::pte_va`):
//! whether a page is present, its frame and rights, without a call.

use crate::layout::PAGE;
use abi::layout::pte_va;
use abi::pte::PRESENT;

/// What one leaf table covers.
pub const LEAF_SPAN: u64 = 1 << 21;

/// The page-table entry mapping `va`, if the page is present.
pub fn pte(va: u64) -> Option<u64> {
    for level in (0..4).rev() {
        // SAFETY: the self-map is readable down to the first absent level,
        // which we never go past.
        let e = unsafe { core::ptr::read_volatile(pte_va(va, level) as *const u64) };
        if e & PRESENT == 0 {
            return None;
        }
        if level == 0 {
            return Some(e);
        }
    }
    None
}

/// The first page at or after `va` and below `end` that is mapped, found
/// through the self-map a table at a time: a range of terabytes promised
/// but barely touched costs what is mapped in it, not its length.
pub fn next_mapped(mut va: u64, end: u64) -> Option<u64> {
    'next: while va < end {
        for level in (1..4).rev() {
            // SAFETY: as in `pte`: levels above an absent one are not read.
            let e = unsafe { core::ptr::read_volatile(pte_va(va, level) as *const u64) };
            if e & PRESENT == 0 {
                // Nothing under this entry: skip all it covers.
                let span = PAGE << (9 * level);
                va = (va & !(span - 1)).checked_add(span)?;
                continue 'next;
            }
        }
        // The leaf table is there: read its entries from `va`'s on, one
        // load a page, to its end or `end`.
        let stop = end.min((va | (LEAF_SPAN - 1)) + 1);
        let found = leaf_entries(va, (stop - va).div_ceil(PAGE)).position(|e| e & PRESENT != 0);
        if let Some(i) = found {
            return Some(va + i as u64 * PAGE);
        }
        va = stop;
    }
    None
}

/// The leaf entries of the `n` pages from `va`, which must lie in one leaf
/// table that exists (its upper entries are present): read straight from
/// that table's page of the self-map, no walk per page.
pub fn leaf_entries(va: u64, n: u64) -> impl Iterator<Item = u64> {
    debug_assert!(n > 0 && va / LEAF_SPAN == (va + (n - 1) * PAGE) / LEAF_SPAN);
    let first = pte_va(va, 0) as *const u64;
    // SAFETY: the leaf table is mapped in the self-map (its upper entries
    // are present) and holds all 512 entries, `n` of them from `va`'s.
    (0..n as usize).map(move |i| unsafe { first.add(i).read_volatile() })
}
