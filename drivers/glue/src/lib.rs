//! The thin glue between `virtio-drivers` (unmodified) and the Veneer
//! driver crossing: every service the crate needs from its platform is a
//! call to one of the kernel's wrappers (`drvapi::KernelApi`). Shared by
//! the driver images; see `docs/drivers.md`.
#![cfg_attr(not(test), no_std)]

mod platform;
pub use platform::Platform;

use core::fmt::Write;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, Ordering};
use drvapi::{direction, KernelApi};
use drvapi::{status, DeviceInfo};
use virtio_drivers::transport::pci::bus::{ConfigurationAccess, DeviceFunction, PciRoot};
use virtio_drivers::transport::pci::PciTransport;
use virtio_drivers::{BufferDirection, Hal, PhysAddr};

static KERNEL: AtomicPtr<KernelApi> = AtomicPtr::new(core::ptr::null_mut());

/// Remembers the kernel's wrapper table (at init).
pub fn set_kernel(api: &'static KernelApi) {
    KERNEL.store(api as *const KernelApi as *mut KernelApi, Ordering::Relaxed);
}

/// The kernel's wrapper table.
pub fn kernel() -> &'static KernelApi {
    let p = KERNEL.load(Ordering::Relaxed);
    // SAFETY: set once at init from a `&'static KernelApi`; no entry point
    // runs before init.
    unsafe { p.as_ref() }.expect("driver entered before init")
}

/// A driver's state: the cell the kernel and the library OS use too
/// (`cell::Global`), reached only inside `with`, which refuses nesting. The
/// kernel never runs two calls into one driver at once (it enters a driver
/// with interrupts off and crossings do not nest), so `with` never finds
/// it lent; if it did, the driver would panic and the kernel disable it.
pub use cell::Global;

/// Formats into a fixed buffer for `KernelApi::log`.
struct Line {
    buf: [u8; 160],
    len: usize,
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Prints a console line through the kernel.
pub fn log(args: core::fmt::Arguments) {
    let mut l = Line { buf: [0; 160], len: 0 };
    let _ = l.write_fmt(args);
    (kernel().log)(l.buf.as_ptr(), l.len);
}

#[macro_export]
macro_rules! log {
    ($($t:tt)*) => { $crate::log(format_args!($($t)*)) };
}

/// The device a driver was given, opened at `init`.
pub struct Device {
    root: PciRoot<KernelConfig>,
    df: DeviceFunction,
}

/// The start of every driver's `init`: remembers the kernel's table and
/// opens the device's virtio transport; a failure is logged and becomes the
/// status `init` returns.
pub fn open(k: &'static KernelApi, dev: &DeviceInfo) -> Result<(Device, Platform<PciTransport>), i32> {
    set_kernel(k);
    let df = DeviceFunction { bus: dev.bus, device: dev.device, function: dev.function };
    let mut root = PciRoot::new(KernelConfig);
    let transport = PciTransport::new::<KernelHal, _>(&mut root, df).map(Platform::new);
    let transport = started("no virtio transport", transport)?;
    Ok((Device { root, df }, transport))
}

impl Device {
    /// Routes the device's `queues` to MSI-X entry 0 and has the kernel
    /// deliver its interrupts (after the device's own init).
    pub fn interrupts_on(mut self, queues: u16) -> Result<(), i32> {
        route_queues_to_entry0(&mut self.root, self.df, queues);
        match (kernel().irq_enable)() {
            status::OK => Ok(()),
            refused => Err(refused),
        }
    }
}

/// `r`, or the error logged under `what` and turned into `IO_ERROR`.
pub fn started<T, E: core::fmt::Display>(what: &str, r: Result<T, E>) -> Result<T, i32> {
    r.map_err(|e| {
        log!("{what}: {e}");
        status::IO_ERROR
    })
}

/// A driver image's two ends: the `driver_entry` the kernel's loader calls
/// for the image's table, and on the host a `main` that says the image runs
/// only inside the kernel. Used at the image's top level.
#[macro_export]
macro_rules! driver_image {
    ($init:path, $submit:path, $interrupt:path) => {
        #[cfg(target_os = "none")]
        #[no_mangle]
        extern "C" fn driver_entry() -> &'static drvapi::DriverApi {
            static API: drvapi::DriverApi = drvapi::DriverApi {
                version: drvapi::VERSION,
                init: $init,
                submit: $submit,
                interrupt: $interrupt,
            };
            &API
        }

        #[cfg(not(target_os = "none"))]
        fn main() {
            eprintln!("A driver image runs only inside the Veneer kernel (x86_64-unknown-none).");
            std::process::exit(1);
        }
    };
}

/// virtio-drivers' platform: DMA, MMIO and sharing, each a kernel wrapper.
pub struct KernelHal;

fn dir(d: BufferDirection) -> u32 {
    match d {
        BufferDirection::DriverToDevice => direction::TO_DEVICE,
        BufferDirection::DeviceToDriver => direction::FROM_DEVICE,
        BufferDirection::Both => direction::BOTH,
    }
}

// SAFETY: the kernel's wrappers hand out zeroed, page-aligned, exclusively
// owned DMA pages and MMIO mappings of the device's own BARs; a refusal
// (0) becomes a null physical address or a panic, never a bad pointer.
unsafe impl Hal for KernelHal {
    fn dma_alloc(pages: usize, _direction: BufferDirection) -> (PhysAddr, NonNull<u8>) {
        let mut va = 0usize;
        let pa = (kernel().dma_alloc)(pages, &mut va);
        match NonNull::new(va as *mut u8) {
            Some(p) if pa != 0 => (pa, p),
            _ => (0, NonNull::dangling()),
        }
    }

    unsafe fn dma_dealloc(paddr: PhysAddr, vaddr: NonNull<u8>, pages: usize) -> i32 {
        (kernel().dma_free)(paddr, vaddr.as_ptr() as usize, pages)
    }

    unsafe fn mmio_phys_to_virt(paddr: PhysAddr, size: usize) -> NonNull<u8> {
        let va = (kernel().mmio_map)(paddr, size);
        NonNull::new(va as *mut u8).expect("the kernel refused an MMIO mapping")
    }

    unsafe fn share(buffer: NonNull<[u8]>, direction: BufferDirection) -> PhysAddr {
        let pa = (kernel().share)(buffer.as_ptr() as *mut u8 as usize, buffer.len(), dir(direction));
        assert_ne!(pa, 0, "the kernel refused to share a buffer");
        // The injected wrong DMA address (`INJECT_WILD_DMA`, test builds):
        // the device is told to write elsewhere.
        #[cfg(feature = "inject")]
        if matches!(direction, BufferDirection::DeviceToDriver) {
            if let Some(wild) = inject::wild_dma_address() {
                return wild;
            }
        }
        pa
    }

    unsafe fn unshare(paddr: PhysAddr, buffer: NonNull<[u8]>, _direction: BufferDirection) {
        (kernel().unshare)(paddr, buffer.as_ptr() as *mut u8 as usize, buffer.len())
    }
}

/// Configuration space of the driver's own device, through the kernel
/// (which refuses other devices' and guards the BARs and MSI-X).
pub struct KernelConfig;

impl ConfigurationAccess for KernelConfig {
    fn read_word(&self, _device_function: DeviceFunction, register_offset: u8) -> u32 {
        (kernel().config_read)(register_offset as u32)
    }

    fn write_word(&mut self, _device_function: DeviceFunction, register_offset: u8, data: u32) {
        (kernel().config_write)(register_offset as u32, data);
    }

    unsafe fn unsafe_clone(&self) -> Self {
        KernelConfig
    }
}

const PCI_CAP_ID_VNDR: u8 = 0x09;
const VIRTIO_PCI_CAP_COMMON_CFG: u8 = 1;
const NO_VECTOR: u16 = 0xFFFF;
// Offsets in virtio's common configuration structure (virtio 1.x §4.1.4.3).
const MSIX_CONFIG: usize = 16;
const QUEUE_SELECT: usize = 22;
const QUEUE_MSIX_VECTOR: usize = 26;

/// Points every queue's interrupt at MSI-X table entry 0 and turns
/// configuration-change interrupts off. virtio-drivers leaves the vectors
/// at "none" (it expects INTx), and with MSI-X on a device then never
/// interrupts. After the device's init, before `irq_enable`.
fn route_queues_to_entry0(root: &mut PciRoot<KernelConfig>, df: DeviceFunction, queues: u16) {
    let Some(cap) = root
        .capabilities(df)
        .find(|c| c.id == PCI_CAP_ID_VNDR && (c.private_header >> 8) as u8 == VIRTIO_PCI_CAP_COMMON_CFG)
    else {
        return;
    };
    let cfg = KernelConfig;
    let bar = cfg.read_word(df, cap.offset + 4) as u8;
    let offset = cfg.read_word(df, cap.offset + 8) as u64;
    let Ok(Some(info)) = root.bar_info(df, bar) else { return };
    let Some((base, _)) = info.memory_address_size() else { return };
    let common = (kernel().mmio_map)(base + offset, 64);
    if common == 0 {
        return;
    }
    let reg = |off: usize| (common + off) as *mut u16;
    // SAFETY: `common` maps the device's common configuration structure
    // (64 bytes, checked by the kernel against the BAR); 16-bit registers
    // at these offsets are part of it.
    unsafe {
        reg(MSIX_CONFIG).write_volatile(NO_VECTOR);
        for q in 0..queues {
            reg(QUEUE_SELECT).write_volatile(q);
            reg(QUEUE_MSIX_VECTOR).write_volatile(0);
        }
    }
}

#[cfg(feature = "inject")]
mod inject;
#[cfg(feature = "inject")]
pub use inject::{complete, inject, on_interrupt, wild_dma};

/// Without the `inject` feature no request is a fault injection.
#[cfg(not(feature = "inject"))]
pub fn inject(_: &drvapi::Request) -> Option<i32> {
    None
}

/// Reports request `tag` ended with `status` and `len` bytes moved.
#[cfg(not(feature = "inject"))]
pub fn complete(tag: u64, status: i32, len: usize) {
    (kernel().complete)(tag, status, len)
}

#[cfg(not(feature = "inject"))]
pub fn wild_dma(r: &drvapi::Request) -> drvapi::Request {
    *r
}

#[cfg(not(feature = "inject"))]
pub fn on_interrupt() {}

#[cfg(all(target_os = "none", not(test)))]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let mut l = Line { buf: [0; 160], len: 0 };
    let _ = write!(l, "{}", info.message());
    if let Some(loc) = info.location() {
        let _ = write!(l, " at {}:{}", loc.file(), loc.line());
    }
    (kernel().fail)(l.buf.as_ptr(), l.len);
    // `fail` does not come back: the kernel leaves the driver.
    loop {
        core::hint::spin_loop();
    }
}
