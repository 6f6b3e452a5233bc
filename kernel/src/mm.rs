//! The kernel's own address space: a window onto all physical memory, the
//! kernel image at -2 GiB with per-section rights, and the early frame
//! allocator used before the frame table exists.
//!
//! The upper half (PML4 slots 256..512) and slot 255 (the exposed window)
//! are shared by every environment: their PML4 entries are copied into each
//! new address space, so everything below them is the same everywhere.

use crate::arch::cpu;
use crate::bootinfo::{BootInfo, Region};
use crate::frames::Frame;
use crate::pagetable::{self, Tables, GLOBAL, HUGE, NO_EXEC, PRESENT, WRITABLE};

/// Virtual address of physical address 0.
pub const PHYS_BASE: u64 = 0xFFFF_8000_0000_0000;
/// Where the kernel image is linked.
pub const KERNEL_BASE: u64 = 0xFFFF_FFFF_8000_0000;
/// The PML4 slots every address space shares.
pub const SHARED_SLOTS: core::ops::Range<usize> = 255..512;
/// The PML4 slots that belong to each environment.
pub const USER_SLOTS: core::ops::Range<usize> = 0..254;
/// The slot that maps each environment's page tables read-only
/// (`abi::layout::PAGE_TABLE_VA`).
pub const SELF_MAP_SLOT: usize = 254;

const GIB: u64 = 1 << 30;

unsafe extern "C" {
    static __kernel_phys_start: u8;
    static __text_start: u8;
    static __rodata_start: u8;
    static __data_start: u8;
    static __kernel_end: u8;
}

fn sym(s: *const u8) -> u64 {
    s as u64
}

/// A pointer to physical address `pa` through the physical window.
pub fn phys<T>(pa: u64) -> *mut T {
    (PHYS_BASE + pa) as *mut T
}

/// Page tables reached through the physical window.
pub struct PhysTables;

impl Tables for PhysTables {
    fn table(&mut self, frame: Frame) -> &mut [u64; 512] {
        // SAFETY: callers only pass frames that hold page tables (kernel or
        // environment tables tracked in the frame table), which are mapped
        // in the physical window; interrupts are off, so there's no other
        // live reference to the table.
        unsafe { &mut *phys::<[u64; 512]>(frame.addr()) }
    }
}

/// Hands out frames before the frame table exists, skipping the kernel
/// image and the boot module. Everything it hands out lies in
/// `[start, next)` and is marked as kernel memory once the table exists.
pub struct EarlyAlloc<'b> {
    boot: &'b BootInfo,
    pub start: u64,
    pub next: u64,
    /// Where physical memory is visible: 0 under the boot identity map,
    /// `PHYS_BASE` once the kernel tables are live.
    window: u64,
}

impl<'b> EarlyAlloc<'b> {
    pub fn new(boot: &'b BootInfo) -> Self {
        let end = sym(&raw const __kernel_end) - KERNEL_BASE;
        let start = (end + 4095) & !4095;
        EarlyAlloc { boot, start, next: start, window: 0 }
    }

    /// `n` physically contiguous zeroed frames; returns the first.
    pub fn alloc(&mut self, n: u64) -> Frame {
        loop {
            let (s, e) = (self.next, self.next + n * 4096);
            let in_ram = self.boot.ram().iter().any(|r| r.start <= s && e <= r.end);
            let module = self.boot.module.unwrap_or_default();
            let page_module = Region { start: module.start & !4095, end: (module.end + 4095) & !4095 };
            if s < page_module.end && page_module.start < e {
                self.next = page_module.end;
            } else if !in_ram {
                self.next = self
                    .boot
                    .ram()
                    .iter()
                    .filter(|r| r.start > s)
                    .map(|r| r.start)
                    .min()
                    .expect("out of memory during boot");
            } else {
                self.next = e;
                // SAFETY: the range is unused RAM, visible at `window`.
                unsafe { core::ptr::write_bytes((self.window + s) as *mut u8, 0, (n * 4096) as usize) };
                return Frame::containing(s);
            }
        }
    }
}

/// The last GiB below 4 GiB holds device registers (local APIC, I/O APIC):
/// mapped uncached.
fn cache_bits(pa: u64) -> u64 {
    const PWT_PCD: u64 = 0x18;
    if (3 * GIB..4 * GIB).contains(&pa) {
        PWT_PCD
    } else {
        0
    }
}

/// Builds the kernel page tables and switches to them. Returns the PML4's
/// frame. Until the switch the boot identity map is in use, so the early
/// allocator's zeroing writes through identity addresses.
pub fn init(boot: &BootInfo, early: &mut EarlyAlloc) -> Frame {
    let top = boot.ram().iter().map(|r| r.end).max().unwrap_or(0);
    let window = top.max(4 * GIB).div_ceil(GIB) * GIB;
    let pml4 = early.alloc(1);
    let t = |f: Frame| f.addr();
    // SAFETY: (all raw writes below) frames fresh from the early allocator,
    // identity-mapped during boot, not yet referenced by anything else.
    let entry = |table: Frame, i: usize, v: u64| unsafe { *((t(table) + 8 * i as u64) as *mut u64) = v };
    // The physical window: 2 MiB pages, no-execute; not global, so that a
    // driver's domain, which does not map it, cannot reach it through a
    // stale TLB entry when crossings keep the TLB (PCIDs, `dev::xpc`).
    for g in 0..window / GIB {
        let slot = 256 + (g / 512) as usize;
        let pdpt = {
            // SAFETY: reading an entry of our own fresh PML4.
            let e = unsafe { *((t(pml4) + 8 * slot as u64) as *const u64) };
            if e & PRESENT == 0 {
                let f = early.alloc(1);
                entry(pml4, slot, t(f) | PRESENT | WRITABLE);
                f
            } else {
                pagetable::frame_of(e)
            }
        };
        let pd = early.alloc(1);
        entry(pdpt, (g % 512) as usize, t(pd) | PRESENT | WRITABLE);
        for i in 0..512u64 {
            let pa = g * GIB + i * (2 << 20);
            entry(pd, i as usize, pa | PRESENT | WRITABLE | HUGE | NO_EXEC | cache_bits(pa));
        }
    }
    // The kernel image, 4 KiB pages with per-section rights.
    let (pdpt, pd) = (early.alloc(1), early.alloc(1));
    entry(pml4, 511, t(pdpt) | PRESENT | WRITABLE);
    entry(pdpt, 510, t(pd) | PRESENT | WRITABLE);
    let text = sym(&raw const __text_start);
    let rodata = sym(&raw const __rodata_start);
    let data = sym(&raw const __data_start);
    let end = (sym(&raw const __kernel_end) + 4095) & !4095;
    let mut va = text;
    while va < end {
        let rights = if va < rodata {
            PRESENT | GLOBAL
        } else if va < data {
            PRESENT | GLOBAL | NO_EXEC
        } else {
            // Writable data is not global either (as the window above).
            PRESENT | NO_EXEC | WRITABLE
        };
        let off = va - KERNEL_BASE;
        let (pdi, pti) = ((off >> 21) as usize, pagetable::index(off, 0));
        // SAFETY: reading an entry of our own fresh page directory.
        let pde = unsafe { *((t(pd) + 8 * pdi as u64) as *const u64) };
        let pt = if pde & PRESENT == 0 {
            let f = early.alloc(1);
            entry(pd, pdi, t(f) | PRESENT | WRITABLE);
            f
        } else {
            pagetable::frame_of(pde)
        };
        entry(pt, pti, off | rights);
        va += 4096;
    }
    // Every shared slot gets a table now, so later additions below them
    // reach every address space that copied the slot.
    for slot in SHARED_SLOTS {
        // SAFETY: reading an entry of our own fresh PML4.
        let e = unsafe { *((t(pml4) + 8 * slot as u64) as *const u64) };
        if e & PRESENT == 0 {
            let f = early.alloc(1);
            let user = if slot == 255 { pagetable::USER } else { 0 };
            entry(pml4, slot, t(f) | PRESENT | WRITABLE | user);
        }
    }
    // SAFETY: the new tables map the kernel image at the same addresses as
    // the boot tables (and the stack lives in .bss), so execution continues.
    unsafe {
        let cr4: u64;
        core::arch::asm!("mov {}, cr4", out(reg) cr4);
        core::arch::asm!("mov cr4, {}", in(reg) cr4 | (1 << 7)); // global pages
        cpu::set_cr3(t(pml4));
    }
    early.window = PHYS_BASE;
    pml4
}

/// Frames of the kernel image.
pub fn image_frames() -> impl Iterator<Item = Frame> {
    let start = Frame::containing(sym(&raw const __kernel_phys_start)).number();
    let end = (sym(&raw const __kernel_end) - KERNEL_BASE).div_ceil(4096);
    (start..end).map(Frame::new)
}

/// A frame's contents, seen through the physical window.
pub fn frame_ptr<T>(f: Frame) -> *mut T {
    phys(f.addr())
}
