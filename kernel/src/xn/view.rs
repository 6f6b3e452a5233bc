//! What XN exposes read-only to every environment (paper 000 §4.3.3:
//! "the registry is readable by everyone", and §3.1): the buffer-cache
//! registry, an open-addressed hash table of `abi::xn::RegEntry` keyed by
//! block, and the block-state map, one `abi::xn::state` byte per disk
//! block. Both live in frames mapped into the shared window
//! (`abi::layout::XN_REGISTRY_VA`, `XN_BLOCKS_VA`); the kernel writes
//! them through the physical window after each XN call, for the blocks
//! the call changed (`::xn::Xn::take_touched`).

use super::XnDisk;
use crate::frames::Frame;
use crate::memory::Memory;
use crate::mm::PhysTables;
use crate::pagetable::{self, NO_EXEC, PRESENT, USER};
use abi::layout::{XN_BLOCKS_VA, XN_REGISTRY_VA};
use abi::tables::frame_state;
use abi::xn::{reg, registry_slot, state, RegEntry};

/// Registry slots (a power of two), and the most entries the kernel lets
/// it hold (three quarters: probes stay short).
pub const SLOTS: u64 = 1 << 16;
const MAX_ENTRIES: u64 = SLOTS / 4 * 3;

pub struct View {
    registry: &'static mut [RegEntry],
    blocks: &'static mut [u8],
    entries: u64,
}

/// `n` contiguous kernel frames mapped read-only for everyone at `va`.
fn exposed(mem: &mut Memory, va: u64, n: u64) -> Result<Frame, &'static str> {
    let first =
        crate::dev::contig::alloc(&mut mem.frames, n).ok_or("no contiguous memory for XN's tables")?;
    let pml4 = mem.kernel_pml4();
    let frames = &mut mem.frames;
    for i in 0..n {
        let pte = pagetable::entry(first.add(i), PRESENT | USER | NO_EXEC);
        pagetable::map(&mut PhysTables, pml4, va + i * 4096, pte, &mut || {
            frames.alloc(None, 0, frame_state::PAGE_TABLE)
        })
        .map_err(|_| "no memory for XN's tables' page tables")?;
    }
    mem.publish_free();
    Ok(first)
}

impl View {
    pub fn new(mem: &mut Memory, nblocks: u64) -> Result<View, &'static str> {
        let entry = core::mem::size_of::<RegEntry>() as u64;
        let reg = exposed(mem, XN_REGISTRY_VA, (SLOTS * entry).div_ceil(4096))?;
        let map = exposed(mem, XN_BLOCKS_VA, nblocks.div_ceil(4096))?;
        // SAFETY: both runs are zeroed kernel frames of the sizes asked
        // for, used only through these slices (environments read them
        // through their read-only mappings); all-zero is a valid value of
        // both element types.
        let (registry, blocks) = unsafe {
            (
                core::slice::from_raw_parts_mut(crate::mm::frame_ptr::<RegEntry>(reg), SLOTS as usize),
                core::slice::from_raw_parts_mut(crate::mm::frame_ptr::<u8>(map), nblocks as usize),
            )
        };
        Ok(View { registry, blocks, entries: 0 })
    }

    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Whether `n` more blocks fit in the registry.
    pub fn room(&self, n: u64) -> bool {
        self.entries + n <= MAX_ENTRIES
    }

    /// Where `block` is, or the empty slot its probe ends at.
    fn find(&self, block: u64) -> (usize, bool) {
        let mut i = registry_slot(block, SLOTS) as usize;
        loop {
            match self.registry[i].block {
                0 => return (i, false),
                b if b == block => return (i, true),
                _ => i = (i + 1) % SLOTS as usize,
            }
        }
    }

    /// Shows block `b` as XN has it now.
    pub fn publish(&mut self, x: &XnDisk, b: u64) {
        if let Some(byte) = self.blocks.get_mut(b as usize) {
            let mut s = 0;
            for (on, bit) in [
                (x.is_free(b), state::FREE),
                (x.unstable(b), state::UNSTABLE),
                (x.written(b), state::WRITTEN),
                (x.will_free(b), state::WILL_FREE),
            ] {
                if on {
                    s |= bit;
                }
            }
            *byte = s | x.claimants(b).min(15) << state::CLAIMANTS_SHIFT;
        }
        let (i, present) = self.find(b);
        match x.entry(b) {
            Some(e) => {
                let metadata = x.template(e.tid).is_some_and(|t| t.slots > 0);
                let flags = if e.dirty { reg::DIRTY } else { 0 }
                    | if e.locked_by.is_some() { reg::LOCKED } else { 0 }
                    | if metadata { reg::METADATA } else { 0 };
                self.registry[i] = RegEntry { block: b, frame: e.page.0, owner: e.owner, tid: e.tid, flags };
                self.entries += u64::from(!present);
            }
            None if present => self.remove(i),
            None => {}
        }
    }

    /// Empties slot `i`, moving later entries of its probe run back so
    /// that every lookup still finds them (no tombstones).
    fn remove(&mut self, mut i: usize) {
        let n = SLOTS as usize;
        self.registry[i] = RegEntry::default();
        self.entries -= 1;
        let mut j = i;
        loop {
            j = (j + 1) % n;
            let b = self.registry[j].block;
            if b == 0 {
                return;
            }
            let home = registry_slot(b, SLOTS) as usize;
            // Entry j may move to i if its home is not in (i, j].
            let stays = if i <= j { i < home && home <= j } else { i < home || home <= j };
            if !stays {
                self.registry[i] = self.registry[j];
                self.registry[j] = RegEntry::default();
                i = j;
            }
        }
    }

    /// Shows every block (after the mount).
    pub fn publish_all(&mut self, x: &XnDisk) {
        for b in 0..x.nblocks() {
            self.publish(x, b);
        }
    }
}
