//! Loading a driver image (an ELF executable from the boot file system,
//! built from `drivers/`) into its driver region: a window of the kernel's
//! top 2 GiB that belongs to that driver alone. The image and its stack
//! sit in one physically contiguous run of frames, mapped with the rights
//! of each segment: text read-execute, read-only data read-only, data,
//! stack and mailbox (where the kernel copies a call's arguments)
//! read-write, never executable. Not global: a driver's mappings must go
//! with its page table (`domain`).

use super::{contig, domain};
use crate::frames::{Frame, Frames};
use crate::pagetable::{NO_EXEC, PRESENT, WRITABLE};
use binfmt::elf::{Elf, ET_EXEC, PF_W, PF_X, PT_LOAD};

/// Pages of stack each driver runs on (the block driver's queue, 256
/// descriptors, is built on it).
pub const STACK_PAGES: u64 = 8;

/// A loaded image.
#[derive(Clone, Copy, Debug)]
pub struct Image {
    /// First virtual address (page-aligned) and first frame of the run.
    pub base: u64,
    pub first_frame: Frame,
    /// Pages of the run: the image's, a guard page (not mapped: a stack
    /// overflow faults), the stack, the mailbox.
    pub pages: u64,
    /// The executable range and the writable data range.
    pub text: (u64, u64),
    pub data: (u64, u64),
    pub entry: u64,
}

impl Image {
    pub fn end(&self) -> u64 {
        self.base + self.pages * 4096
    }

    pub fn stack(&self) -> (u64, u64) {
        (self.end() - (STACK_PAGES + 1) * 4096, self.end() - 4096)
    }

    /// The page where the kernel puts the arguments of a call into the
    /// driver.
    pub fn mailbox(&self) -> u64 {
        self.end() - 4096
    }

    /// The physical address of an address inside the run.
    pub fn pa(&self, va: u64) -> u64 {
        self.first_frame.addr() + (va - self.base)
    }

    /// Copies the loadable segments of `elf` into the run.
    fn copy(&self, elf: &Elf) {
        for s in elf.segments().filter(|s| s.kind == PT_LOAD) {
            let bytes = elf.file_bytes(&s);
            // SAFETY: the destination is inside the run (the segment lies
            // in the image's span, checked at load), reached through the
            // physical window.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    crate::mm::phys::<u8>(self.pa(s.vaddr)),
                    bytes.len(),
                )
            };
        }
    }

    /// A fresh copy of `data`, the file this image was loaded from (its
    /// region `window`), in the same frames and mappings: whatever a
    /// failed driver left in its memory (its data, its stack, its text
    /// when it ran unisolated) is gone. The driver must not be running.
    pub fn reload(&self, data: &[u8], window: (u64, u64)) -> Result<(), &'static str> {
        let elf = Elf::parse(data, window.0, window.1, 0).map_err(|e| e.describe())?;
        let len = (self.pages * 4096) as usize;
        // SAFETY: the run is this image's alone (its frames since load),
        // reached through the physical window; nothing runs in it.
        unsafe { core::ptr::write_bytes(crate::mm::phys::<u8>(self.first_frame.addr()), 0, len) };
        self.copy(&elf);
        Ok(())
    }
}

/// Loads `data` at its linked addresses, which must lie in `window`.
pub fn load(
    frames: &mut Frames,
    kernel: Frame,
    data: &[u8],
    window: (u64, u64),
) -> Result<Image, &'static str> {
    let elf = Elf::parse(data, window.0, window.1, 0).map_err(|e| e.describe())?;
    if elf.kind != ET_EXEC {
        return Err("not linked at a fixed address (ET_EXEC)");
    }
    let loads = || elf.segments().filter(|s| s.kind == PT_LOAD);
    let lo = loads().map(|s| s.vaddr & !4095).min().ok_or("no loadable segment")?;
    let hi = loads().map(|s| (s.vaddr + s.memsz).div_ceil(4096) * 4096).max().unwrap_or(lo);
    let span = (hi - lo) / 4096;
    // The image, an unmapped guard page, the stack, the mailbox.
    let pages = span + 1 + STACK_PAGES + 1;
    if hi + (STACK_PAGES + 2) * 4096 > window.1 {
        return Err("no room for the stack in the driver region");
    }
    let first = contig::alloc(frames, pages).ok_or("out of contiguous memory")?;
    let mut img = Image { base: lo, first_frame: first, pages, entry: elf.entry, text: (0, 0), data: (0, 0) };
    img.copy(&elf);
    for s in loads() {
        let range = (s.vaddr, s.vaddr + s.memsz);
        if s.flags & PF_X != 0 {
            img.text = range;
        } else if s.flags & PF_W != 0 {
            img.data = range;
        }
        let rights = PRESENT
            | if s.flags & PF_W != 0 { WRITABLE } else { 0 }
            | if s.flags & PF_X == 0 { NO_EXEC } else { 0 };
        let mut va = s.vaddr & !4095;
        while va < s.vaddr + s.memsz {
            domain::map(kernel, va, img.pa(va) | rights).map_err(|_| "cannot map the image")?;
            va += 4096;
        }
    }
    let (stack_lo, _) = img.stack();
    for va in (stack_lo..img.end()).step_by(4096) {
        domain::map(kernel, va, img.pa(va) | PRESENT | WRITABLE | NO_EXEC)
            .map_err(|_| "cannot map the stack")?;
    }
    Ok(img)
}
