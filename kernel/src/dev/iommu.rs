//! DMA confinement beyond Nooks (issue 13): Intel's remapping unit (VT-d,
//! QEMU's `intel-iommu`), found through ACPI's DMAR table. Each driver's
//! device gets a context entry of its own (its domain id: the driver's
//! index + 1) pointing at second-level page tables that map, at their own
//! physical addresses, only the pages its driver holds: its image's data,
//! its DMA allocations, and each lent buffer while the request is out.
//! Unmapping invalidates the domain's IOTLB; a disabled driver's context
//! entry is cleared. Everything else a device addresses faults: the fault
//! event interrupt makes `faults` report it and disable the driver.

use super::acpi;
use super::pci::Function;
use super::Global;
use crate::frames::Frame;
use core::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// The vector of the unit's fault event interrupt (bit 63 of `dev`'s
/// pending set).
pub const FAULT_VECTOR: u8 = 0x7F;

// Registers (VT-d spec §10.4).
const CAP: u64 = 0x08;
const ECAP: u64 = 0x10;
const GCMD: u64 = 0x18;
const GSTS: u64 = 0x1C;
const RTADDR: u64 = 0x20;
const CCMD: u64 = 0x28;
const FSTS: u64 = 0x34;
const FECTL: u64 = 0x38;
const FEDATA: u64 = 0x3C;
const FEADDR: u64 = 0x40;
const FEUADDR: u64 = 0x44;
/// GCMD/GSTS: translation enable, set root table pointer.
const TE: u32 = 1 << 31;
const SRTP: u32 = 1 << 30;
/// GSTS bits that stay set across commands (TE, QIE, IRE, CFI).
const PERSISTENT: u32 = 0x9680_0000;
/// Invalidation: go, and the granularity (global, domain) in CCMD/IOTLB.
const INVALIDATE: u64 = 1 << 63;
const CC_GLOBAL: u64 = 1 << 61;
const CC_DEVICE: u64 = 3 << 61;
const IOTLB_GLOBAL: u64 = 1 << 60;
const IOTLB_DOMAIN: u64 = 2 << 60;
/// Drain reads and writes before the IOTLB invalidation completes.
const DRAIN: u64 = 3 << 48;
/// Second-level entries: readable, writable.
const RW: u64 = 3;

/// Devices under the unit at once (one per driver).
const SPACES: usize = super::MAX_DRIVERS;

/// One device's address space: its source id (bus, device, function) and
/// its top-level table.
#[derive(Clone, Copy)]
struct Space {
    sid: u16,
    top: Frame,
}

struct Unit {
    /// Register base in the (uncached) physical window.
    regs: u64,
    /// The devices it translates.
    scope: acpi::Unit,
    root: Frame,
    /// Second-level paging levels (3: 39-bit, 4: 48-bit addresses).
    levels: u32,
    /// Offsets of the IOTLB register and the fault recording registers,
    /// and how many of those there are.
    iotlb: u64,
    faults: u64,
    nfaults: u64,
    /// The unit's page walks do not snoop the caches: table writes are
    /// flushed to memory.
    flush: bool,
    spaces: [Option<Space>; SPACES],
}

static UNIT: Global<Option<Unit>> = Global::new(None);
/// Whether `UNIT` holds a unit: without one, the calls on every request's
/// path (`map`, `unmap`) return at once.
static ON: AtomicBool = AtomicBool::new(false);

impl Unit {
    fn read32(&self, r: u64) -> u32 {
        // SAFETY: a register of the unit, in the uncached window.
        unsafe { crate::mm::phys::<u32>(self.regs + r).read_volatile() }
    }
    fn write32(&self, r: u64, v: u32) {
        // SAFETY: as in `read32`.
        unsafe { crate::mm::phys::<u32>(self.regs + r).write_volatile(v) }
    }
    fn read64(&self, r: u64) -> u64 {
        // SAFETY: as in `read32`.
        unsafe { crate::mm::phys::<u64>(self.regs + r).read_volatile() }
    }
    fn write64(&self, r: u64, v: u64) {
        // SAFETY: as in `read32`.
        unsafe { crate::mm::phys::<u64>(self.regs + r).write_volatile(v) }
    }

    /// Issues a global command and waits until the unit has done it.
    fn command(&self, bit: u32) {
        self.write32(GCMD, self.read32(GSTS) & PERSISTENT | bit);
        while self.read32(GSTS) & bit == 0 {
            core::hint::spin_loop();
        }
    }

    /// Writes `v` into register `r` and waits until the unit clears its
    /// go bit (an invalidation).
    fn invalidate(&self, r: u64, v: u64) {
        self.write64(r, v | INVALIDATE);
        while self.read64(r) & INVALIDATE != 0 {
            core::hint::spin_loop();
        }
    }

    fn flush_iotlb(&self, did: u64) {
        self.invalidate(self.iotlb, IOTLB_DOMAIN | DRAIN | did << 32);
    }

    /// Writes a table entry (two words for root and context entries; the
    /// word with the present bit last) and, when the unit does not snoop,
    /// flushes it to memory.
    fn set(&self, table: Frame, index: usize, words: &[u64]) {
        let p = crate::mm::frame_ptr::<u64>(table);
        for (j, &w) in words.iter().enumerate().rev() {
            // SAFETY: a table frame of the unit's, `index` within it.
            unsafe { p.add(index * words.len() + j).write_volatile(w) };
        }
        if self.flush {
            // SAFETY: CLFLUSH of a mapped kernel address.
            unsafe { core::arch::x86_64::_mm_clflush(p.add(index * words.len()) as *const u8) };
        }
    }

    fn get(table: Frame, index: usize) -> u64 {
        // SAFETY: a table frame of the unit's, `index` within it.
        unsafe { crate::mm::frame_ptr::<u64>(table).add(index).read_volatile() }
    }

    fn space(&self, sid: u16) -> Option<(usize, Space)> {
        self.spaces.iter().enumerate().find_map(|(i, s)| s.filter(|s| s.sid == sid).map(|s| (i, s)))
    }
}

fn sid(f: Function) -> u16 {
    (f.bus as u16) << 8 | (f.device as u16) << 3 | f.function as u16
}

/// A zeroed table frame, from the device layer's pool (maps happen
/// inside crossings too).
fn table() -> Option<Frame> {
    super::pool::alloc(1)
}

/// Finds the unit (ACPI) and turns translation on with no device mapped:
/// a console line says which, or why not. `off` (`iommu=off`) finds it
/// and leaves translation off (the benchmarks' comparison).
pub fn init(off: bool) {
    match find() {
        Err(acpi::AcpiError::NoDmar) => {}
        Err(why) => crate::kprintln!("iommu: not used: {why}"),
        Ok(_) if off => {
            crate::kprintln!("iommu: found; translation left off (iommu=off)");
            MODE.store(abi::dev::confined::OFF, Relaxed);
        }
        Ok(scope) => match start(scope) {
            Ok(u) => {
                let regs = scope.base;
                crate::kprintln!(
                    "iommu: translation on (unit at {regs:#x}, {}-bit device addresses): each device reaches only what its driver holds",
                    if u.levels == 3 { 39 } else { 48 }
                );
                UNIT.with(|s| *s = Some(u));
                ON.store(true, Relaxed);
                MODE.store(abi::dev::confined::TRANSLATING, Relaxed);
            }
            Err(why) => crate::kprintln!("iommu: not used: {why}"),
        },
    }
}

/// `abi::dev::confined`: what `init` found.
static MODE: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(abi::dev::confined::NONE);

/// Whether devices' DMA is confined (`abi::dev::confined`).
pub fn confinement() -> u32 {
    MODE.load(Relaxed)
}

/// The BIOS area the RSDP lies in (ACPI 5.2.5.1: the first KiB of the
/// EBDA, or 0xE0000..0x100000).
fn find() -> Result<acpi::Unit, acpi::AcpiError> {
    let bios = |pa: u64, len: usize| -> &[u8] {
        // SAFETY: low RAM and BIOS memory, always in the physical window;
        // only read.
        unsafe { core::slice::from_raw_parts(crate::mm::phys::<u8>(pa), len) }
    };
    let ebda = (u16::from_le_bytes(bios(0x40E, 2).try_into().expect("2 bytes")) as u64) << 4;
    let (root, xsdt) = (0x8_0000..0xA_0000)
        .contains(&ebda)
        .then(|| acpi::rsdp(bios(ebda, 1024)).ok())
        .flatten()
        .map_or_else(|| acpi::rsdp(bios(0xE_0000, 0x2_0000)), Ok)?;
    // Tables lie in RAM the firmware reserved (above the frames the kernel
    // manages), never in the device window from 3 GiB, whose reads may
    // have effects.
    let mem = move |pa: u64, len: usize| {
        // SAFETY: below 3 GiB, in the physical window; read only.
        (pa.checked_add(len as u64)? <= 3 << 30)
            .then(|| unsafe { core::slice::from_raw_parts(crate::mm::phys::<u8>(pa), len) })
    };
    acpi::unit(acpi::dmar(&mem, root, xsdt)?)
}

fn start(scope: acpi::Unit) -> Result<Unit, &'static str> {
    let regs = scope.base;
    if !(3 << 30..4 << 30).contains(&regs) || !regs.is_multiple_of(4096) {
        return Err("its registers are not in the device window below 4 GiB");
    }
    let probe = Unit {
        regs,
        scope,
        root: Frame::new(0),
        levels: 0,
        iotlb: 0,
        faults: 0,
        nfaults: 0,
        flush: false,
        spaces: [None; SPACES],
    };
    let (cap, ecap) = (probe.read64(CAP), probe.read64(ECAP));
    let sagaw = cap >> 8 & 0x1F;
    let levels = if sagaw & 4 != 0 {
        4
    } else if sagaw & 2 != 0 {
        3
    } else {
        return Err("it supports neither 3- nor 4-level tables");
    };
    if cap & 1 << 7 != 0 {
        return Err("caching mode (a virtualised unit that needs every map invalidated) is not supported");
    }
    let root = table().ok_or("no memory for its root table")?;
    let u = Unit {
        root,
        levels,
        iotlb: (ecap >> 8 & 0x3FF) * 16 + 8,
        faults: (cap >> 24 & 0x3FF) * 16,
        nfaults: (cap >> 40 & 0xFF) + 1,
        flush: ecap & 1 == 0,
        ..probe
    };
    // Faults interrupt CPU 0's local APIC on FAULT_VECTOR.
    u.write32(FEDATA, FAULT_VECTOR as u32);
    u.write32(FEADDR, 0xFEE0_0000);
    u.write32(FEUADDR, 0);
    u.write32(FECTL, 0);
    u.write64(RTADDR, root.addr());
    u.command(SRTP);
    u.invalidate(CCMD, CC_GLOBAL);
    u.invalidate(u.iotlb, IOTLB_GLOBAL | DRAIN);
    u.command(TE);
    Ok(u)
}

/// Gives device `f` an address space of its own, empty (its domain id:
/// its slot + 1): from now on it reaches only what `map` adds. Without a
/// unit, nothing.
pub fn attach(f: Function) -> Result<(), &'static str> {
    UNIT.with(|u| {
        let Some(u) = u else { return Ok(()) };
        if !u.scope.covers(f.bus, f.device, f.function) {
            crate::kprintln!(
                "iommu: {:02x}:{:02x}.{} is not behind the unit: its DMA is not confined",
                f.bus,
                f.device,
                f.function
            );
            return Ok(());
        }
        let slot = u.spaces.iter().position(Option::is_none).ok_or("too many devices")?;
        let top = table().ok_or("no memory for its device's tables")?;
        let bus = Unit::get(u.root, f.bus as usize * 2);
        let ctx = if bus & 1 != 0 {
            Frame::containing(bus & !0xFFF)
        } else {
            let Some(c) = table() else {
                super::pool::free(top, 1);
                return Err("no memory for its device's tables");
            };
            u.set(u.root, f.bus as usize, &[c.addr() | 1, 0]);
            c
        };
        // Context entry: present, second-level translation of untranslated
        // requests (type 0), faults reported; address width, domain id.
        let aw = if u.levels == 3 { 1 } else { 2 };
        let devfn = (f.device as usize) << 3 | f.function as usize;
        u.set(ctx, devfn, &[top.addr() | 1, aw | (slot as u64 + 1) << 8]);
        u.spaces[slot] = Some(Space { sid: sid(f), top });
        Ok(())
    })
}

/// Lets device `f` read and write the `pages` pages from `pa` (at the
/// same device address). An error (nothing mapped) without memory for a
/// table; without a unit, nothing.
pub fn map(f: Function, pa: u64, pages: u64) -> Result<(), ()> {
    if !ON.load(Relaxed) {
        return Ok(());
    }
    UNIT.with(|u| {
        let Some(u) = u else { return Ok(()) };
        let (_, s) = u.space(sid(f)).ok_or(())?;
        for p in 0..pages {
            let a = pa + p * 4096;
            let mut t = s.top;
            for level in (2..=u.levels).rev() {
                let i = crate::pagetable::index(a, level - 1);
                let e = Unit::get(t, i);
                t = if e & RW != 0 {
                    Frame::containing(e & 0x000F_FFFF_FFFF_F000)
                } else {
                    let n = table().ok_or(())?;
                    u.set(t, i, &[n.addr() | RW]);
                    n
                };
            }
            u.set(t, crate::pagetable::index(a, 0), &[a | RW]);
        }
        Ok(())
    })
}

/// Takes back what `map` gave device `f`: the pages are unmapped and the
/// device's cached translations invalidated before this returns.
pub fn unmap(f: Function, pa: u64, pages: u64) {
    if !ON.load(Relaxed) {
        return;
    }
    UNIT.with(|u| {
        let Some(u) = u else { return };
        let Some((i, s)) = u.space(sid(f)) else { return };
        for p in 0..pages {
            let a = pa + p * 4096;
            let mut t = Some(s.top);
            for level in (2..=u.levels).rev() {
                let e = t.map_or(0, |t| Unit::get(t, crate::pagetable::index(a, level - 1)));
                t = (e & RW != 0).then(|| Frame::containing(e & 0x000F_FFFF_FFFF_F000));
            }
            if let Some(t) = t {
                u.set(t, crate::pagetable::index(a, 0), &[0]);
            }
        }
        u.flush_iotlb(i as u64 + 1);
    })
}

/// Device `f` reaches nothing any more (its driver is disabled): its
/// context entry is cleared and invalidated, its tables freed.
pub fn detach(f: Function) {
    UNIT.with(|u| {
        let Some(u) = u else { return };
        let Some((i, s)) = u.space(sid(f)) else { return };
        let bus = Unit::get(u.root, f.bus as usize * 2);
        let devfn = (f.device as usize) << 3 | f.function as usize;
        u.set(Frame::containing(bus & !0xFFF), devfn, &[0, 0]);
        u.invalidate(CCMD, CC_DEVICE | (s.sid as u64) << 16 | (i as u64 + 1));
        u.flush_iotlb(i as u64 + 1);
        free(s.top, u.levels);
        u.spaces[i] = None;
    })
}

fn free(t: Frame, level: u32) {
    if level > 1 {
        for i in 0..512 {
            let e = Unit::get(t, i);
            if e & RW != 0 {
                free(Frame::containing(e & 0x000F_FFFF_FFFF_F000), level - 1);
            }
        }
    }
    super::pool::free(t, 1);
}

/// One recorded DMA fault: the device (source id), the page it addressed,
/// whether it wrote, and the unit's reason code (VT-d spec §7.1.3).
#[derive(Clone, Copy)]
pub struct Fault {
    pub device: Function,
    pub addr: u64,
    pub write: bool,
    pub reason: u8,
}

/// The faults the unit recorded since the last call, each cleared.
pub fn faults(mut each: impl FnMut(Fault)) {
    let mut found = [None; 8];
    UNIT.with(|u| {
        let Some(u) = u else { return };
        for (n, r) in (0..u.nfaults.min(found.len() as u64)).enumerate() {
            let at = u.faults + r * 16;
            let hi = u.read64(at + 8);
            if hi & 1 << 63 == 0 {
                continue;
            }
            let s = hi as u16;
            found[n] = Some(Fault {
                device: Function {
                    bus: (s >> 8) as u8,
                    device: (s >> 3 & 0x1F) as u8,
                    function: (s & 7) as u8,
                },
                addr: u.read64(at) & !0xFFF,
                write: hi & 1 << 62 == 0,
                reason: (hi >> 32) as u8,
            });
            // F is write-one-to-clear (the record's top bit).
            u.write32(at + 12, 1 << 31);
        }
        // Overflow, if any, is cleared too (write one to clear).
        u.write32(FSTS, u.read32(FSTS) & 1);
    });
    found.into_iter().flatten().for_each(&mut each);
}
