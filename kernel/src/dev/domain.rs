//! A driver's lightweight protection domain (paper 004 §3.1): ring 0, but
//! its own page table, in which the kernel image is mapped read-only and
//! only the driver's own region is writable: its image's data, its stack,
//! its mailbox, and the aliases the wrappers map there for it — DMA pages
//! (`dma_alloc`), device registers (`mmio_map`, uncached) and the buffers
//! lent to it with requests (mapped at submit, unmapped at completion).
//! Neither the physical window nor any other kernel memory is mapped.
//!
//! The region (64 MiB of the top 2 GiB) is laid out as: image, stack and
//! mailbox from its start; DMA aliases from 32 MiB; lent buffers from 44
//! MiB; registers from 48 MiB. Its page tables are made once, at load,
//! and shared by the kernel's tables and the domain's, so an alias mapped
//! through the kernel's tables is seen in both.
//!
//! The same layout is used unisolated (`isolation=off`): then the domain's
//! page table is simply not switched to, and the binaries are identical.

use super::iommu;
use super::pci::Function;
use crate::frames::Frame;
use crate::mm::PhysTables;
use crate::pagetable::{self, Tables, GLOBAL, NO_EXEC, PRESENT, WRITABLE};

pub const REGION: u64 = 64 << 20;
const DMA_AREA: (u64, u64) = (32 << 20, 44 << 20);
const LENT_AREA: u64 = 44 << 20;
/// Pages lent at once: every slot of a block driver's queue may hold a
/// run of `drvapi::MAX_PAGES`.
pub const LENT_SLOTS: usize = 256;
const MMIO_AREA: (u64, u64) = (48 << 20, 64 << 20);
const UNCACHED: u64 = 0x18;

/// Maps `pte` at `va` in the kernel's tables `kernel` (for a driver
/// region), any table it needs from the device layer's pool.
pub fn map(kernel: Frame, va: u64, pte: u64) -> Result<(), abi::Error> {
    let mut alloc = || super::pool::alloc(1).ok_or(abi::Error::NoMemory);
    pagetable::map(&mut PhysTables, kernel, va, pte, &mut alloc)
}

fn unmap(kernel: Frame, va: u64) {
    let _ = pagetable::unmap(&mut PhysTables, kernel, va);
    crate::arch::cpu::invlpg(va);
}

pub struct Domain {
    pub base: u64,
    /// The kernel's page table, through which the region is mapped.
    kernel: Frame,
    /// The domain's page table (none: the driver runs unisolated).
    pub pml4: Option<Frame>,
    /// Its PCID (used when the processor has them, `xpc::use_pcids`).
    pcid: u64,
    /// The kernel unmapped something in the region since the domain was
    /// last entered: its TLB entries must be flushed on the next entry.
    stale: bool,
    dma_next: u64,
    mmio_next: u64,
    /// Each lent slot's page (0: none).
    lent_pa: [u64; LENT_SLOTS],
    /// Each lent slot's buffer: its address in the region and length (as
    /// the tracker has it), so that a share of it is checked without a
    /// scan of the tracker (`lent_address`).
    lent_buf: [(u64, u64); LENT_SLOTS],
    /// The driver's device: under an IOMMU it reaches only the pages
    /// mapped here for DMA (`iommu`).
    device: Function,
}

fn new_table() -> Result<Frame, &'static str> {
    super::pool::alloc(1).ok_or("out of memory")
}

impl Domain {
    /// Makes every page table of the region at `base` in the kernel's
    /// tables, and (when `isolated`) the domain's own page table.
    pub fn build(kernel: Frame, base: u64, isolated: bool, device: Function) -> Result<Domain, &'static str> {
        for va in (base..base + REGION).step_by(2 << 20) {
            // An empty entry: only the tables above it are made.
            match map(kernel, va, 0) {
                Ok(()) | Err(abi::Error::AlreadyMapped) => {}
                Err(_) => return Err("cannot make the region's page tables"),
            }
        }
        // One PCID per region, never 0 (the kernel's and environments').
        let pcid = 1 + (base - super::FIRST_REGION) / REGION;
        let mut d = Domain {
            base,
            kernel,
            pml4: None,
            pcid,
            stale: false,
            dma_next: base + DMA_AREA.0,
            mmio_next: base + MMIO_AREA.0,
            lent_pa: [0; LENT_SLOTS],
            lent_buf: [(0, 0); LENT_SLOTS],
            device,
        };
        iommu::attach(device)?;
        if isolated {
            d.pml4 = Some(Self::page_table(kernel, base)?);
        }
        Ok(d)
    }

    /// PML4 slot 511 only: the kernel image read-only (a copy of its
    /// tables, never global) but for the double-fault stack, on which a
    /// fault the driver's own stack cannot take is delivered (a stack
    /// overflow into its guard page); and this driver's region.
    fn page_table(kernel: Frame, base: u64) -> Result<Frame, &'static str> {
        let t = &mut PhysTables;
        let kpdpt = pagetable::frame_of(t.table(kernel)[511]);
        let kimage_pd = pagetable::frame_of(t.table(kpdpt)[510]);
        let kregion_pd = pagetable::frame_of(t.table(kpdpt)[511]);
        let (pml4, pdpt, image_pd, region_pd) = (new_table()?, new_table()?, new_table()?, new_table()?);
        let link = PRESENT | WRITABLE;
        PhysTables.table(pml4)[511] = pagetable::entry(pdpt, link);
        PhysTables.table(pdpt)[510] = pagetable::entry(image_pd, link);
        PhysTables.table(pdpt)[511] = pagetable::entry(region_pd, link);
        for i in 0..512 {
            let pde = PhysTables.table(kimage_pd)[i];
            if pde & PRESENT == 0 {
                continue;
            }
            let pt = new_table()?;
            let stacks = crate::arch::gdt::trap_stacks();
            for j in 0..512 {
                let pte = PhysTables.table(pagetable::frame_of(pde))[j];
                let va = 0xFFFF_FFFF_8000_0000 + (i as u64) * (2 << 20) + (j as u64) * 4096;
                let trap_stack = stacks.iter().any(|&(lo, hi)| (lo & !4095..hi).contains(&va));
                let keep = if trap_stack { WRITABLE } else { 0 };
                PhysTables.table(pt)[j] = pte & !(WRITABLE | GLOBAL) | (pte & keep);
            }
            PhysTables.table(image_pd)[i] = pagetable::entry(pt, link);
        }
        let first = ((base >> 21) & 511) as usize;
        for i in first..first + (REGION >> 21) as usize {
            PhysTables.table(region_pd)[i] = PhysTables.table(kregion_pd)[i];
        }
        Ok(pml4)
    }

    /// The CR3 of the domain (page table and PCID; 0 unisolated), and
    /// whether its TLB entries must be flushed on entering it, which this
    /// counts as done.
    pub fn enter(&mut self) -> (u64, bool) {
        let cr3 = self.pml4.map_or(0, |f| f.addr() | self.pcid);
        (cr3, self.take_stale())
    }

    /// Whether the kernel unmapped something in the region since the last
    /// call (then the domain's TLB entries must go).
    pub fn take_stale(&mut self) -> bool {
        core::mem::take(&mut self.stale)
    }

    /// Lets the device reach `pages` pages from `pa` that are not mapped
    /// for the driver (its image's data, which it may share).
    pub fn expose(&mut self, pa: u64, pages: u64) -> Option<()> {
        iommu::map(self.device, pa, pages).ok()
    }

    /// Maps `pages` DMA pages from `pa` for the driver and its device:
    /// their address.
    pub fn map_dma(&mut self, pa: u64, pages: u64) -> Option<u64> {
        let va = self.dma_next;
        if va + pages * 4096 > self.base + DMA_AREA.1 {
            return None;
        }
        if iommu::map(self.device, pa, pages).is_err() {
            iommu::unmap(self.device, pa, pages);
            return None;
        }
        for p in 0..pages {
            if map(self.kernel, va + p * 4096, (pa + p * 4096) | PRESENT | WRITABLE | NO_EXEC).is_err() {
                self.unmap(va, p);
                iommu::unmap(self.device, pa, pages);
                return None;
            }
        }
        self.dma_next += pages * 4096;
        Some(va)
    }

    /// Maps the registers `pa..pa + len` uncached: the driver's address.
    pub fn map_mmio(&mut self, pa: u64, len: u64) -> Option<u64> {
        let (first, last) = (pa & !4095, (pa + len).div_ceil(4096) * 4096);
        let va = self.mmio_next;
        if va + (last - first) > self.base + MMIO_AREA.1 {
            return None;
        }
        for off in (0..last - first).step_by(4096) {
            map(self.kernel, va + off, (first + off) | PRESENT | WRITABLE | NO_EXEC | UNCACHED).ok()?;
        }
        self.mmio_next += last - first;
        Some(va + (pa - first))
    }

    fn is_lent(&self, slot: usize) -> bool {
        self.lent_pa[slot] != 0
    }

    fn slot_va(&self, slot: usize) -> u64 {
        self.base + LENT_AREA + slot as u64 * 4096
    }

    /// The lent slot holding `va`, if it is in the lent area.
    fn slot_of(&self, va: u64) -> Option<usize> {
        let slot = va.checked_sub(self.base + LENT_AREA)? / 4096;
        (slot < LENT_SLOTS as u64).then_some(slot as usize)
    }

    /// The physical address of the lent page at `va` (page-aligned), if
    /// one is lent there: what the device is given for it.
    pub fn lent_page(&self, va: u64) -> Option<u64> {
        self.slot_of(va).map(|s| self.lent_pa[s]).filter(|&pa| pa != 0)
    }

    /// The device's address of `va..va + len` if it lies in one page of
    /// a buffer lent here: what the tracker answers for a lent buffer
    /// (`tracker::lent_address`), found by its slot rather than a scan.
    pub fn lent_address(&self, va: u64, len: u64) -> Option<u64> {
        let (b, l) = self.lent_buf[self.slot_of(va)?];
        super::tracker::lent_address(va, len, b, l, |p| self.lent_page(p))
    }

    /// Lends the pages holding `pas` (the first may start inside its
    /// page), a buffer of `len` bytes, to the driver and its device, at
    /// consecutive addresses: the buffer's address in the driver's
    /// region; `None` (nothing lent) without room.
    pub fn lend(&mut self, pas: &[u64], len: u64) -> Option<u64> {
        let (n, mut run) = (pas.len(), 0);
        let first = if n == 1 {
            // A one-page request (the commonest): the first free slot.
            self.lent_pa.iter().position(|&pa| pa == 0)?
        } else {
            let last = (0..LENT_SLOTS).find(|&s| {
                run = if self.is_lent(s) { 0 } else { run + 1 };
                run == n
            })?;
            last + 1 - n
        };
        for (k, &pa) in pas.iter().enumerate() {
            if !self.lend_page(first + k, pa & !4095) {
                if k > 0 {
                    self.take_back(self.slot_va(first), (k * 4096) as u64);
                }
                return None;
            }
        }
        let va = self.slot_va(first) + (pas.first()? & 4095);
        self.lent_buf[first..first + n].fill((va, len));
        Some(va)
    }

    /// Maps page `pa` at lent slot `slot`, for the driver and its device.
    fn lend_page(&mut self, slot: usize, pa: u64) -> bool {
        if iommu::map(self.device, pa, 1).is_err() {
            iommu::unmap(self.device, pa, 1);
            return false;
        }
        if map(self.kernel, self.slot_va(slot), pa | PRESENT | WRITABLE | NO_EXEC).is_err() {
            iommu::unmap(self.device, pa, 1);
            return false;
        }
        self.lent_pa[slot] = pa;
        true
    }

    /// Takes back the lent buffer of `len` bytes at `va` (from `lend`;
    /// at least its first page), from the driver and its device.
    pub fn take_back(&mut self, va: u64, len: u64) {
        let pages = ((va & 4095) + len).div_ceil(4096).max(1);
        let Some(first) = self.slot_of(va) else { return };
        for slot in first..(first + pages as usize).min(LENT_SLOTS) {
            if self.lent_pa[slot] == 0 {
                break;
            }
            unmap(self.kernel, self.slot_va(slot));
            iommu::unmap(self.device, self.lent_pa[slot], 1);
            self.lent_pa[slot] = 0;
        }
        self.stale = true;
    }

    /// Unmaps `pages` pages of aliases from `va` (registers).
    pub fn unmap(&mut self, va: u64, pages: u64) {
        for p in 0..pages {
            unmap(self.kernel, va + p * 4096);
        }
        self.stale = true;
    }

    /// Unmaps `pages` DMA pages of `pa` from `va`, for the driver and its
    /// device.
    pub fn unmap_dma(&mut self, va: u64, pa: u64, pages: u64) {
        self.unmap(va, pages);
        iommu::unmap(self.device, pa, pages);
    }

    /// Empties the domain for a restarted driver: its aliases went when it
    /// was disabled (`driver::disable`), so each area starts again from
    /// its beginning; the TLB entries it may still hold go at the next
    /// entry; its device is attached to the IOMMU again.
    pub fn reset(&mut self) -> Result<(), &'static str> {
        // No buffer stays lent (a wrapper that refused a completion may
        // have dropped one from the tracker).
        for s in (0..LENT_SLOTS).filter(|&s| self.is_lent(s)) {
            unmap(self.kernel, self.base + LENT_AREA + s as u64 * 4096);
        }
        self.dma_next = self.base + DMA_AREA.0;
        self.mmio_next = self.base + MMIO_AREA.0;
        self.lent_pa = [0; LENT_SLOTS];
        self.stale = true;
        iommu::attach(self.device)
    }

    /// The device reaches nothing any more (its driver is disabled).
    pub fn cut_dma(&mut self) {
        iommu::detach(self.device);
    }
}
