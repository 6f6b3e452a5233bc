//! What XN exposes read-only to every environment (paper 000 §4.3.3:
//! "the registry is readable by everyone", and §3.1): the buffer-cache
//! registry (`table.rs`) and the block-state map, one `abi::xn::state` byte per disk
//! block. Both live in frames mapped into the shared window
//! (`abi::layout::XN_REGISTRY_VA`, `XN_BLOCKS_VA`); the kernel writes
//! them through the physical window after each XN call, for the blocks
//! the call changed (`::xn::Xn::take_touched`).

use super::table::Table;
use super::XnDisk;
use crate::frames::Frame;
use crate::memory::Memory;
use crate::mm::PhysTables;
use crate::pagetable::{self, NO_EXEC, PRESENT, USER};
use abi::layout::{XN_BLOCKS_VA, XN_REGISTRY_VA};
use abi::tables::frame_state;
use abi::xn::{reg, state, RegEntry};

/// Registry slots (a power of two), and the most entries the kernel lets
/// it hold (three quarters: probes stay short).
pub const SLOTS: u64 = 1 << 16;
const MAX_ENTRIES: u64 = SLOTS / 4 * 3;

pub struct View {
    registry: Table<'static>,
    blocks: &'static mut [u8],
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
        Ok(View { registry: Table::new(registry), blocks })
    }

    pub fn entries(&self) -> u64 {
        self.registry.entries()
    }

    /// Whether `n` more blocks fit in the registry.
    pub fn room(&self, n: u64) -> bool {
        self.entries() + n <= MAX_ENTRIES
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
        match x.entry(b) {
            Some(e) => {
                let metadata = x.template(e.tid).is_some_and(|t| t.slots > 0);
                let flags = if e.dirty { reg::DIRTY } else { 0 }
                    | if e.locked_by.is_some() { reg::LOCKED } else { 0 }
                    | if metadata { reg::METADATA } else { 0 };
                self.registry.put(RegEntry { block: b, frame: e.page.0, owner: e.owner, tid: e.tid, flags });
            }
            None => self.registry.remove(b),
        }
    }

    /// Shows every block (after the mount).
    pub fn publish_all(&mut self, x: &XnDisk) {
        for b in 0..x.nblocks() {
            self.publish(x, b);
        }
    }
}
