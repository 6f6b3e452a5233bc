//! `unmap_range`: a run of pages unmapped with one call (issue 26). Exec's
//! removal of the old image, `munmap` and the like had made one `unmap`
//! per page, each walking the tables from the top, checking the
//! credential and flushing one TLB entry.

use super::Args;
use crate::env::Slot;
use crate::mm::PhysTables;
use crate::pagetable;
use crate::state::Kernel;
use crate::validate::page_range;
use abi::layout::PAGE_SIZE;
use abi::Error;

/// Up to this many pages, each is flushed from the TLB on its own; above
/// it the whole address space is (Linux's `tlb_single_page_flush_ceiling`
/// is 33): what is left cached of a bigger range is worth less than the
/// flushes.
const FLUSH_CEILING: u64 = 32;

impl Kernel {
    /// Drops the TLB's entries for `pages` pages from `va` of slot `s`'s
    /// space, if it is the one loaded.
    fn flush_range(&self, s: Slot, va: u64, pages: u64) {
        if !self.space_is_current(s) {
            return;
        }
        if pages <= FLUSH_CEILING {
            (0..pages).for_each(|i| crate::arch::cpu::invlpg(va + i * PAGE_SIZE));
        } else {
            crate::arch::cpu::flush_tlb();
        }
    }
}

pub fn unmap_range(k: &mut Kernel, Args([env, va, pages, cred, ..]): Args) -> Result<u64, Error> {
    let s = k.env_arg(env, cred)?;
    let _checked = page_range(va, pages)?;
    // Past the checks nothing fails: the whole range goes, or (above) none.
    let frames = &mut k.mem.frames;
    let gone = pagetable::unmap_range(&mut PhysTables, k.envs[s].pml4, va, pages, |old| {
        frames.drop_ref(pagetable::frame_of(old))
    });
    if gone > 0 {
        k.flush_range(s, va, pages);
        // A frame without an owner is freed with its last mapping.
        k.mem.publish_free();
    }
    Ok(gone)
}
