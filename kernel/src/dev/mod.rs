//! Devices (issue 13, paper 004): PCI enumeration, MSI-X interrupts, and
//! drivers as separately loaded images reached only through the crossing
//! (`xpc`, `wrappers`), each with an object tracker; the block and packet
//! interfaces the rest of the kernel uses. See `docs/drivers.md`.

pub mod acpi;
pub mod pci;
pub mod tracker;

#[cfg(target_os = "none")]
mod bench;
#[cfg(target_os = "none")]
pub mod block;
#[cfg(target_os = "none")]
mod contig;
#[cfg(target_os = "none")]
mod detect;
#[cfg(target_os = "none")]
mod domain;
#[cfg(target_os = "none")]
mod driver;
#[cfg(target_os = "none")]
mod faultload;
#[cfg(target_os = "none")]
mod image;
#[cfg(target_os = "none")]
mod ioapic;
#[cfg(target_os = "none")]
mod iommu;
#[cfg(target_os = "none")]
mod msix;
#[cfg(target_os = "none")]
mod nmi;
#[cfg(target_os = "none")]
pub mod packet;
#[cfg(target_os = "none")]
mod selftest;
#[cfg(target_os = "none")]
mod wrappers;
#[cfg(target_os = "none")]
mod xpc;

#[cfg(target_os = "none")]
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Device state, reached only inside `with`, which refuses nesting: no
/// two `&mut` to it ever exist, and no reference outlives the call. (One
/// CPU; the trap handler, which may interrupt a holder, uses `try_with`.)
#[cfg(target_os = "none")]
pub struct Global<T> {
    busy: AtomicBool,
    value: core::cell::UnsafeCell<T>,
}

// SAFETY: access is serialised by `busy` (see `try_with`).
#[cfg(target_os = "none")]
unsafe impl<T> Sync for Global<T> {}

#[cfg(target_os = "none")]
impl<T> Global<T> {
    pub const fn new(v: T) -> Self {
        Global { busy: AtomicBool::new(false), value: core::cell::UnsafeCell::new(v) }
    }

    /// Runs `f` on the value, or returns `None` if it is already lent
    /// (a nested call). `f` must return: leaving it another way (an
    /// abort) would keep the value lent for ever.
    pub fn try_with<R>(&self, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        if self.busy.swap(true, Ordering::Acquire) {
            return None;
        }
        // SAFETY: `busy` was clear and is now set: this is the only
        // reference, and it does not outlive `f`.
        let r = f(unsafe { &mut *self.value.get() });
        self.busy.store(false, Ordering::Release);
        Some(r)
    }

    /// Runs `f` on the value, shared, or returns `None` if it is lent.
    /// It writes nothing, so it may run in a driver's domain, where kernel
    /// data is read-only; nothing may take the value meanwhile (the code
    /// runs with interrupts off, and a trap inside it is a kernel bug).
    pub fn peek<R>(&self, f: impl FnOnce(&T) -> R) -> Option<R> {
        if self.busy.load(Ordering::Acquire) {
            return None;
        }
        // SAFETY: not lent (checked above) and, as the caller promised,
        // not lent while `f` runs.
        Some(f(unsafe { &*self.value.get() }))
    }

    /// Ends a loan whose holder was abandoned: a crossing left by `abort`
    /// from inside a wrapper, whose frames will never run again.
    pub fn release_abandoned(&self) {
        self.busy.store(false, Ordering::Release);
    }

    /// `try_with` where nesting is a kernel bug.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let lent = || panic!("device state lent twice: {}", core::any::type_name::<T>());
        self.try_with(f).unwrap_or_else(lent)
    }
}

/// The drivers the kernel knows: image name in the boot file system,
/// the PCI vendor and device IDs it serves (virtio 1.x: 0x1040 + type),
/// and its driver region (where its image is linked, `drivers/*/build.rs`).
#[cfg(target_os = "none")]
const FIRST_REGION: u64 = 0xFFFF_FFFF_C000_0000;
#[cfg(target_os = "none")]
const KNOWN: &[(&str, u16, u16, u64)] = &[
    ("virtio-blk", 0x1AF4, 0x1042, 0xFFFF_FFFF_C000_0000),
    ("virtio-net", 0x1AF4, 0x1041, 0xFFFF_FFFF_C400_0000),
];

/// Finds the devices, loads and starts a driver for each one the kernel
/// knows, and runs the self-test `devtest=` names, if any, or the device
/// benchmarks when the first program is `devbench`.
#[cfg(target_os = "none")]
pub fn init(k: &mut crate::state::Kernel, bootfs: &[u8], cmdline: &[u8]) {
    let words = core::str::from_utf8(cmdline).unwrap_or("");
    let isolated = !words.split_whitespace().any(|w| w == "isolation=off");
    if isolated {
        let pcids = xpc::use_pcids();
        crate::kprintln!(
            "dev: crossings {}",
            if pcids { "tagged with PCIDs" } else { "flush the TLB (no PCIDs)" }
        );
    }
    nmi::init();
    let confined = iommu::init(k, words.split_whitespace().any(|w| w == "iommu=off"));
    let mut found = [None; 8];
    let mut n = 0;
    pci::enumerate(&mut |d| {
        if n < found.len() {
            found[n] = Some(d);
            n += 1;
        }
    });
    for d in found.iter().flatten() {
        let Some(&(name, _, _, base)) = KNOWN.iter().find(|k| k.1 == d.vendor && k.2 == d.id) else {
            continue;
        };
        let at = d.at;
        let Some(file) = binfmt::cpio::find(bootfs, &alloc::format!("drv/{name}")) else {
            crate::kprintln!(
                "dev: no driver image drv/{name} for {:02x}:{:02x}.{}",
                at.bus,
                at.device,
                at.function
            );
            continue;
        };
        let vector = msix::FIRST_VECTOR + driver::with(|ds| ds.list.iter().flatten().count()) as u8;
        let started = domain::Domain::build(k, base, isolated, at).and_then(|dom| {
            let img = image::load(k, file.data, (base, base + domain::REGION))?;
            driver::start(k, name, *d, img, dom, vector)
        });
        match started {
            Ok(i) => driver::with(|ds| {
                let d = ds.get(i);
                // What the device is: a disk's size, a NIC's address.
                let what = match d.facts.capacity {
                    0 => alloc::format!("mac {:02x?}", d.facts.mac),
                    sectors => alloc::format!("{sectors} sectors"),
                };
                crate::kprintln!(
                    "dev: {name} at {:02x}:{:02x}.{} ({}, image at {base:#x}, {} vector {:#x}): {what}, {} requests in flight at most",
                    at.bus,
                    at.device,
                    at.function,
                    if isolated { "isolated" } else { "unisolated" },
                    if d.line.is_some() { "I/O APIC" } else { "MSI-X" },
                    d.vector,
                    d.facts.queue_depth
                );
            }),
            Err(why) => crate::kprintln!(
                "dev: {name} at {:02x}:{:02x}.{} not started: {why}",
                at.bus,
                at.device,
                at.function
            ),
        }
    }
    if words.split_whitespace().any(|w| w == "init=devbench") {
        bench::run(k, isolated, words.split_whitespace().any(|w| w == "quick"), confined);
    }
    for w in words.split_whitespace().filter_map(|w| w.strip_prefix("faultload=")) {
        faultload::run(k, w);
    }
    for t in words.split_whitespace().filter_map(|w| w.strip_prefix("devtest=")) {
        for name in t.split(',') {
            selftest::run(k, name);
        }
    }
}

/// A trap taken in the kernel: if a driver was running in its domain, the
/// kernel's page table until the handler returns. The trap handler's
/// first act.
#[cfg(target_os = "none")]
pub fn trap_view() -> Option<impl Drop> {
    xpc::KernelView::from_trap()
}

/// A processor exception in the kernel: whether it was a driver's (then
/// that driver is disabled and this does not return).
#[cfg(target_os = "none")]
pub fn fault(vector: u64, rip: u64, rsp: u64) -> bool {
    detect::fault(vector, rip, rsp)
}

/// A timer tick in the kernel: the livelock watchdog (a driver looping in
/// a crossing is disabled and this does not return).
#[cfg(target_os = "none")]
pub fn tick() {
    detect::watchdog()
}

/// A timer tick with the kernel state at hand: requests past their
/// deadline fail their drivers.
#[cfg(target_os = "none")]
#[inline(always)]
pub fn expire(k: &mut crate::state::Kernel) {
    detect::expire(k)
}

/// A non-maskable interrupt in the kernel: the NMI watchdog (a driver
/// looping with interrupts off is disabled and this does not return).
#[cfg(target_os = "none")]
pub fn nmi(rip: u64, rsp: u64) {
    detect::nmi_watchdog(rip, rsp)
}

/// When the last device interrupt that ended an idle wait arrived (TSC).
#[cfg(target_os = "none")]
static WOKE: AtomicU64 = AtomicU64::new(0);
/// Device vectors (bit `v - 0x40`) that interrupted and whose drivers
/// have not run yet.
#[cfg(target_os = "none")]
static PENDING: AtomicU64 = AtomicU64::new(0);
#[cfg(target_os = "none")]
const FIRST_DEVICE_VECTOR: u8 = 0x40;

#[cfg(target_os = "none")]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC only reads the time-stamp counter.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// An interrupt on `vector`, taken wherever the kernel was: whether it is
/// a device's. If so it is acknowledged (a level-triggered line masked
/// first) and noted; its drivers run in `service`, called by whoever holds
/// the kernel state (a trap from user mode, the idle loop).
#[cfg(target_os = "none")]
pub fn note(vector: u64) -> bool {
    let Some(v) = u8::try_from(vector)
        .ok()
        .filter(|&v| v >= FIRST_DEVICE_VECTOR && (v == iommu::FAULT_VECTOR || driver::owns_vector(v)))
    else {
        return false;
    };
    // The end of an idle wait (not an interrupt taken while a driver ran).
    if !xpc::under_way() {
        WOKE.store(rdtsc(), Ordering::Relaxed);
    }
    driver::quiet(v);
    PENDING.fetch_or(1 << (v - FIRST_DEVICE_VECTOR), Ordering::SeqCst);
    crate::arch::apic::eoi();
    true
}

/// Whether a device interrupted and its drivers have not run yet (its
/// interrupt arrived while a driver ran: the idle loop must not halt).
#[cfg(target_os = "none")]
pub fn pending() -> bool {
    PENDING.load(Ordering::SeqCst) != 0
}

/// Runs the drivers of every device that interrupted since the last call,
/// and of those that interrupt meanwhile (drivers run with interrupts on).
#[cfg(target_os = "none")]
pub fn service(k: &mut crate::state::Kernel) {
    loop {
        let mut pending = PENDING.swap(0, Ordering::SeqCst);
        if pending == 0 {
            return;
        }
        // DMA faults first: a device's stray write is blamed before its
        // driver runs on (and perhaps completes the request it spoiled).
        let fault = 1 << (iommu::FAULT_VECTOR - FIRST_DEVICE_VECTOR);
        if pending & fault != 0 {
            pending &= !fault;
            driver::dma_faults(k);
        }
        while pending != 0 {
            let bit = pending.trailing_zeros();
            pending &= pending - 1;
            driver::interrupt(k, FIRST_DEVICE_VECTOR + bit as u8);
        }
    }
}
