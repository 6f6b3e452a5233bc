//! Devices (issue 13, paper 004): PCI enumeration, MSI-X interrupts, and
//! drivers as separately loaded images reached only through the crossing
//! (`xpc`, `wrappers`), each with an object tracker; the block and packet
//! interfaces the rest of the kernel uses. See `docs/drivers.md`.

pub mod acpi;
pub mod pci;
pub mod pending;
pub mod run;
pub mod tracker;

#[cfg(target_os = "none")]
pub mod block;
#[cfg(target_os = "none")]
pub mod client;
#[cfg(target_os = "none")]
pub mod contig;
#[cfg(target_os = "none")]
mod detect;
#[cfg(target_os = "none")]
mod domain;
#[cfg(target_os = "none")]
mod driver;
#[cfg(target_os = "none")]
mod image;
#[cfg(target_os = "none")]
mod ioapic;
#[cfg(target_os = "none")]
mod iommu;
#[cfg(target_os = "none")]
mod msix;
#[cfg(target_os = "none")]
pub mod net;
#[cfg(target_os = "none")]
mod nmi;
#[cfg(target_os = "none")]
pub mod packet;
#[cfg(target_os = "none")]
mod pool;
#[cfg(target_os = "none")]
mod recover;
#[cfg(target_os = "none")]
mod virtio;
#[cfg(target_os = "none")]
pub mod wait;
#[cfg(target_os = "none")]
mod wrappers;
#[cfg(target_os = "none")]
mod xpc;

#[cfg(target_os = "none")]
use core::sync::atomic::{AtomicU64, Ordering};

/// Device state is kept in statics reached only through scoped,
/// non-nesting borrows (the trap handler, which may interrupt a holder,
/// uses `try_with`): the cell the kernel, the library OS and the driver
/// glue share.
pub use cell::Global;

pub use run::Span;

/// At most this many drivers.
#[cfg(target_os = "none")]
const MAX_DRIVERS: usize = 4;

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

/// Finds the devices and loads and starts a driver for each one the
/// kernel knows, with the memory it needs (its pool, driver images,
/// region tables); registers the device layer's hooks.
#[cfg(target_os = "none")]
pub fn init(mem: &mut crate::memory::Memory, bootfs: &'static [u8], cmdline: &[u8]) {
    if !pool::init(&mut mem.frames) {
        crate::kprintln!("dev: no memory for the device layer's pool; no devices");
        return;
    }
    mem.publish_free();
    crate::hooks::register(&HOOKS);
    let words = core::str::from_utf8(cmdline).unwrap_or("");
    let isolated = !words.split_whitespace().any(|w| w == "isolation=off");
    if words.split_whitespace().any(|w| w == "deadline=off") {
        detect::no_deadline();
    }
    if words.split_whitespace().any(|w| w == "recover=restart") {
        recover::enable();
    }
    if isolated {
        let pcids = xpc::use_pcids();
        crate::kprintln!(
            "dev: crossings {}",
            if pcids { "tagged with PCIDs" } else { "flush the TLB (no PCIDs)" }
        );
    }
    nmi::init();
    iommu::init(words.split_whitespace().any(|w| w == "iommu=off"));
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
        // An image damaged as the fault-injection campaign damages one
        // (`cargo xtask faults`) stands for a driver whose code went bad in
        // memory: it is what boots, and a restart loads the clean file, as
        // Nooks reloads a failed driver from disk (paper 004 §3.5).
        let boots = binfmt::cpio::find(bootfs, &alloc::format!("drv/{name}.injected")).unwrap_or(file);
        let kernel = mem.kernel_pml4();
        let started = domain::Domain::build(kernel, base, isolated, at).and_then(|dom| {
            let img = image::load(&mut mem.frames, kernel, boots.data, (base, base + domain::REGION))?;
            driver::start(name, *d, img, dom, vector, &wrappers::KERNEL_API, file.data)
        });
        mem.publish_free();
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
    // A driver whose init failed is restarted (`recover=restart`) before
    // the first environment asks for its device.
    recovery(detect::now());
}

/// What the core calls without naming the device layer (`hooks.rs`):
/// the crossing's page-table view for a trap taken in a driver; a
/// processor exception, a timer tick and an NMI in the kernel, which may
/// be a driver's fault or livelock (then that driver is disabled and the
/// hook does not return); device interrupts noted and serviced.
#[cfg(target_os = "none")]
static HOOKS: crate::hooks::Hooks = crate::hooks::Hooks {
    trap_enter: xpc::trap_enter,
    trap_leave: xpc::trap_leave,
    fault: detect::fault,
    nmi: detect::nmi_watchdog,
    tick: detect::watchdog,
    clock,
    note,
    pending,
    service,
    woke: || WOKE.load(Ordering::Relaxed),
    released: net::released,
};

/// Timer ticks were counted, `now` in all: requests past their deadline
/// fail their drivers, and failed drivers are restarted.
#[cfg(target_os = "none")]
fn clock(now: u64) {
    if let Some(limit) = detect::clock(now) {
        driver::fail_overdue(now, limit);
    }
    recovery(now);
}

/// Failed drivers restarted (`recover`), and requests parked for drivers
/// that are back handed to them.
#[cfg(target_os = "none")]
fn recovery(now: u64) {
    recover::run(now, driver::name, |i| driver::restart(i, &wrappers::KERNEL_API), driver::give_up);
    driver::resume();
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
fn note(vector: u64) -> bool {
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
fn pending() -> bool {
    PENDING.load(Ordering::SeqCst) != 0
}

/// What noted interrupts call for: their drivers, then the frames of
/// ended requests back to their owners.
#[cfg(target_os = "none")]
fn service(mem: &mut crate::memory::Memory) {
    run_drivers();
    // Requests that ended give their frames back.
    client::settle(mem);
}

/// Runs the drivers of every device that interrupted since the last call,
/// and of those that interrupt meanwhile (drivers run with interrupts on).
#[cfg(target_os = "none")]
fn run_drivers() {
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
            driver::dma_faults();
        }
        while pending != 0 {
            let bit = pending.trailing_zeros();
            pending &= pending - 1;
            driver::interrupt(FIRST_DEVICE_VECTOR + bit as u8);
        }
    }
}
