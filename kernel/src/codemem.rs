//! Executable kernel memory for compiled downloaded code. Pages are written
//! through the physical window (never executable there) and mapped
//! executable and read-only in a kernel region every address space shares:
//! no page is ever writable and executable at once.

use crate::memory::Memory;
use crate::mm::{self, PhysTables};
use crate::pagetable::{self, GLOBAL, PRESENT};
use abi::tables::frame_state;
use abi::Error;

/// Where compiled code lives (PML4 slot 510, shared by every environment).
pub const CODE_BASE: u64 = 0xFFFF_FF00_0000_0000;
/// Pages of code at most (a bound on what downloaded code can occupy).
pub const CODE_PAGES: u64 = 1024;

impl Memory {
    /// Copies `code` into fresh executable pages; returns its address.
    pub fn code_install(&mut self, code: &[u8]) -> Result<u64, Error> {
        let pages = (code.len() as u64).div_ceil(4096).max(1);
        let start = self.code_free_run(pages).ok_or(Error::NoMemory)?;
        for i in 0..pages {
            let f = match self.frames.alloc(None, 0, frame_state::KERNEL) {
                Ok(f) => f,
                Err(e) => {
                    self.code_remove(start, i);
                    return Err(e);
                }
            };
            let chunk = &code[(i * 4096) as usize..code.len().min(((i + 1) * 4096) as usize)];
            // SAFETY: a fresh kernel frame seen through the physical window;
            // nothing maps it yet.
            unsafe {
                let dst = mm::frame_ptr::<u8>(f);
                core::ptr::write_bytes(dst, 0xCC, 4096); // int3 padding
                core::ptr::copy_nonoverlapping(chunk.as_ptr(), dst, chunk.len());
            }
            let pml4 = self.kernel_pml4();
            let frames = &mut self.frames;
            let r = pagetable::map(
                &mut PhysTables,
                pml4,
                start + i * 4096,
                pagetable::entry(f, PRESENT | GLOBAL),
                &mut || frames.alloc(None, 0, frame_state::PAGE_TABLE),
            );
            if let Err(e) = r {
                let _ = self.frames.free(f);
                self.code_remove(start, i);
                return Err(e);
            }
        }
        self.publish_free();
        Ok(start)
    }

    /// Unmaps and frees `pages` pages of code at `start`.
    pub fn code_remove(&mut self, start: u64, pages: u64) {
        for i in 0..pages {
            let va = start + i * 4096;
            if let Ok(old) = pagetable::unmap(&mut PhysTables, self.kernel_pml4(), va) {
                crate::arch::cpu::invlpg(va);
                let _ = self.frames.free(pagetable::frame_of(old));
            }
        }
        self.publish_free();
    }

    /// The first run of `pages` unmapped pages in the code region.
    fn code_free_run(&mut self, pages: u64) -> Option<u64> {
        let mut run = 0;
        for p in 0..CODE_PAGES {
            let va = CODE_BASE + p * 4096;
            if pagetable::lookup(&mut PhysTables, self.kernel_pml4(), va).is_some() {
                run = 0;
            } else {
                run += 1;
                if run == pages {
                    return Some(va - (pages - 1) * 4096);
                }
            }
        }
        None
    }
}
