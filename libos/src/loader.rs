//! The ELF loader of the library: places a checked ELF file in a range of
//! this address space and maps its loadable segments there (promised to
//! the program as regions; their file bytes mapped from the boot archive
//! where they fill whole pages, else copied in). `exec` loads
//! programs and their interpreters with it, `vdso` the vDSO.

use crate::errno::Errno;
use crate::errno::ENOMEM;
use crate::layout::{page_down, page_up, PAGE};
use crate::vm;
use abi::syscall::{map as mf, ENV_SELF};
use binfmt::elf::{Elf, ET_DYN, PF_W, PF_X, PT_LOAD};
use user::sys;

/// A checked ELF file and the amount its addresses are shifted by.
pub struct Placed<'a> {
    pub elf: Elf<'a>,
    pub bias: u64,
}

impl Placed<'_> {
    /// The entry point where the file was placed.
    pub fn entry(&self) -> u64 {
        self.elf.entry
    }
}

fn prot_of(flags: u32) -> u32 {
    let mut p = vm::R;
    if flags & PF_W != 0 {
        p |= vm::W;
    }
    if flags & PF_X != 0 {
        p |= vm::X;
    }
    p
}

/// Checks `data` is an x86-64 ELF file whose segments fit in
/// `[lo, hi)`: where they say (ET_EXEC) or shifted to start at `base`
/// (ET_DYN).
pub fn place(data: &[u8], lo: u64, hi: u64, base: u64) -> Result<Placed<'_>, binfmt::elf::ElfError> {
    let probe = Elf::parse_dynamic(data, 0, u64::MAX, 0)?;
    let bias = if probe.kind == ET_DYN { base.saturating_sub(page_down(probe.span().0)) } else { 0 };
    Ok(Placed { elf: Elf::parse_dynamic(data, lo, hi, bias)?, bias })
}

/// Promises the loadable segments of `p` and copies their file bytes in;
/// returns the first byte past the highest.
pub fn map_segments(p: &Placed) -> Result<u64, Errno> {
    let mut top = 0;
    for seg in p.elf.segments().filter(|s| s.kind == PT_LOAD) {
        let vaddr = seg.vaddr + p.bias;
        let (start, end) = (page_down(vaddr), page_up(vaddr + seg.memsz));
        let prot = prot_of(seg.flags);
        // Pages another segment already started keep both rights.
        let merged = vm::find(start).map_or(0, |r| r.prot);
        vm::add(start, end, prot);
        if merged != 0 {
            vm::add(start, start + PAGE, prot | merged);
        }
        top = top.max(vaddr + seg.memsz);
        // File bytes go in now: the whole pages of a boot file mapped from
        // the archive, the rest copied; the rest of the segment (bss) is
        // zero pages on demand.
        let bytes = p.elf.file_bytes(&seg);
        let (lo, hi) = map_whole_pages(vaddr, bytes, prot);
        copy_in(vaddr, &bytes[..(lo - vaddr) as usize])?;
        copy_in(hi, &bytes[(hi - vaddr) as usize..])?;
    }
    Ok(top)
}

/// Maps the pages of `bytes` (a segment's file bytes, to go at `vaddr`)
/// that it fills whole straight from the boot archive when the file is
/// there (`vm::map_boot`), as Linux maps a file's pages: the page holding
/// `vaddr` whole from the file's page, unless another segment started it.
/// Returns the part of `[vaddr, vaddr + len)` left to copy before and
/// after them (`lo..hi` mapped; both `vaddr` when nothing was).
fn map_whole_pages(vaddr: u64, bytes: &[u8], prot: u32) -> (u64, u64) {
    let end = vaddr + bytes.len() as u64;
    let mut first = page_down(vaddr);
    if vm::pte(first).is_some() {
        first += PAGE;
    }
    let last = page_down(end);
    if first >= last {
        return (vaddr, vaddr);
    }
    // The archive's address of `first`'s bytes (before `bytes` when the
    // segment starts inside its first page: the same file's bytes).
    let src = (bytes.as_ptr() as u64).wrapping_add(first).wrapping_sub(vaddr);
    let mapped = vm::map_boot(first, src, last - first, prot);
    if mapped == 0 {
        return (vaddr, vaddr);
    }
    (first.max(vaddr), first + mapped)
}

/// Copies `data` to `va` in promised memory, through a writable mapping of
/// each page whatever the region's rights (`load` applies them after).
pub fn copy_in(va: u64, data: &[u8]) -> Result<(), Errno> {
    let end = va + data.len() as u64;
    let mut page = page_down(va);
    while page < end {
        if vm::pte(page).is_none() && !vm::populate(page, vm::W) {
            return Err(ENOMEM);
        }
        let _ = sys::protect(ENV_SELF, page, mf::WRITE);
        let (lo, hi) = (page.max(va), (page + PAGE).min(end));
        let src = &data[(lo - va) as usize..(hi - va) as usize];
        // SAFETY: the page at `page` is mapped writable just above.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), lo as *mut u8, src.len()) };
        page += PAGE;
    }
    Ok(())
}
