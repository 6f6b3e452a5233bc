//! The exposed window (paper 000 §3.1, "expose information"): kernel tables
//! mapped read-only at fixed addresses in every address space, so libraries
//! read them without system calls. See `abi::layout` for the addresses.

use crate::frames::Frame;
use crate::mm::{EarlyAlloc, PhysTables};
use crate::pagetable::{self, NO_EXEC, PRESENT, USER};

/// Maps `count` frames from `first` at `va` (read-only, user, no-execute)
/// in the shared slot of the kernel's PML4, which every environment copies.
pub fn map(pml4: Frame, va: u64, first: Frame, count: u64, early: &mut EarlyAlloc) {
    for i in 0..count {
        let pte = pagetable::entry(first.add(i), PRESENT | USER | NO_EXEC);
        pagetable::map(&mut PhysTables, pml4, va + i * 4096, pte, &mut || Ok(early.alloc(1)))
            .unwrap_or_else(|e| panic!("exposed window: {:#x}: {e:?}", va + i * 4096));
    }
}
