//! The thin glue between `virtio-drivers` (unmodified) and the Veneer
//! driver crossing: every service the crate needs from its platform is a
//! call to one of the kernel's wrappers (`drvapi::KernelApi`). Shared by
//! the driver images; see `docs/drivers.md`.
#![cfg_attr(not(test), no_std)]

mod platform;
pub use platform::Platform;

use core::cell::UnsafeCell;
use core::fmt::Write;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use drvapi::{direction, KernelApi};
use virtio_drivers::transport::pci::bus::{ConfigurationAccess, DeviceFunction, PciRoot};
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

/// A driver's state. The kernel never runs two calls into one driver at
/// once (it enters a driver with interrupts off), so plain interior
/// mutability is enough.
pub struct Global<T>(UnsafeCell<T>);

// SAFETY: see the type's comment: accesses are serialized by the kernel.
unsafe impl<T> Sync for Global<T> {}

impl<T> Global<T> {
    pub const fn new(v: T) -> Self {
        Global(UnsafeCell::new(v))
    }

    /// The state, for the duration of one entry point.
    #[allow(clippy::mut_from_ref)]
    pub fn get(&self) -> &mut T {
        // SAFETY: entry points are not re-entered (see the type), and each
        // takes this reference once.
        unsafe { &mut *self.0.get() }
    }
}

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
        // The injected wrong DMA address (`INJECT_WILD_DMA`): the device
        // is told to write elsewhere.
        match direction {
            BufferDirection::DeviceToDriver => match WILD_DMA.swap(0, Ordering::Relaxed) {
                0 => pa,
                wild => wild,
            },
            _ => pa,
        }
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
/// interrupts. Call after the device's init, before `irq_enable`.
pub fn route_queues_to_entry0(root: &mut PciRoot<KernelConfig>, df: DeviceFunction, queues: u16) {
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

/// Carries out a fault-injection request (`drvapi::op::INJECT_*`): the
/// status to answer `r` with when it was one, or when an injected lie
/// answers every request.
pub fn inject(r: &drvapi::Request) -> Option<i32> {
    use drvapi::op;
    match r.op {
        // SAFETY: none: this is the injected bug. The kernel's protection
        // domain is what stops the write (or, unisolated, does not).
        op::INJECT_WILD_WRITE => unsafe { (r.sector as *mut u8).write_volatile(0xBD) },
        op::INJECT_STACK_OVERFLOW => {
            core::hint::black_box(deeper(r.sector));
        }
        op::INJECT_LIVELOCK => spin(),
        op::INJECT_CLI_LIVELOCK => {
            // SAFETY: none: this is the injected bug (ring 0 may turn
            // interrupts off); the kernel's NMI watchdog must end it.
            unsafe { core::arch::asm!("cli", options(nomem, nostack)) };
            spin()
        }
        op::INJECT_WILD_CALL => {
            // SAFETY: none: this is the injected bug (a corrupted function
            // pointer); the fault it takes is what the kernel must stop.
            let f: extern "C" fn() = unsafe { core::mem::transmute(r.sector as usize) };
            f()
        }
        op::INJECT_IRQ_LIVELOCK => IRQ_LIVELOCK.store(true, Ordering::Relaxed),
        op::INJECT_BAD_STACK => bad_stack(r.sector, r.len != 0),
        op::INJECT_PRIVILEGED => privileged(r.sector),
        // A dropped request is taken and never ended.
        op::INJECT_LIE => LIE.store(r.sector, Ordering::Relaxed),
        _ if LIE.load(Ordering::Relaxed) == drvapi::op::LIE_FULL => return Some(drvapi::status::NO_SPACE),
        _ => return None,
    }
    Some(drvapi::status::OK)
}

/// The lie armed by `INJECT_LIE` (0: none).
static LIE: AtomicU64 = AtomicU64::new(0);

/// Reports request `tag` ended with `status` and `len` bytes moved (half
/// of them, once, under `LIE_SHORT`).
pub fn complete(tag: u64, status: i32, len: usize) {
    let short = LIE.compare_exchange(drvapi::op::LIE_SHORT, 0, Ordering::Relaxed, Ordering::Relaxed).is_ok();
    (kernel().complete)(tag, status, if short { len / 2 } else { len })
}

/// Armed by `INJECT_WILD_DMA`: the next buffer the device writes is
/// given to it at this physical address instead of its own.
static WILD_DMA: AtomicU64 = AtomicU64::new(0);

/// `INJECT_WILD_DMA` turned into what the driver does with it: a read of
/// one sector of sector 0 into the lent buffer, whose device address the
/// next `share` replaces with `r.sector`. Other requests are unchanged.
pub fn wild_dma(r: &drvapi::Request) -> drvapi::Request {
    if r.op != drvapi::op::INJECT_WILD_DMA {
        return *r;
    }
    WILD_DMA.store(r.sector, Ordering::Relaxed);
    drvapi::Request { op: drvapi::op::READ, sector: 0, len: 512, ..*r }
}

/// Armed by `INJECT_IRQ_LIVELOCK`: the next interrupt handler loops.
static IRQ_LIVELOCK: AtomicBool = AtomicBool::new(false);

/// Called first by each driver's interrupt handler (the injected livelock).
pub fn on_interrupt() {
    if IRQ_LIVELOCK.load(Ordering::Relaxed) {
        spin();
    }
}

/// Runs on a stack at `rsp` (the injected corrupted stack pointer): waits
/// for the next interrupt, or calls the kernel (`call`).
fn bad_stack(rsp: u64, call: bool) -> ! {
    let log = kernel().log as usize;
    // SAFETY: none: this is the injected bug. Whatever the stack holds is
    // never used again: the kernel must stop the driver.
    unsafe {
        if call {
            core::arch::asm!("mov rsp, {s}", "call {f}", "2: jmp 2b", s = in(reg) rsp, f = in(reg) log,
                in("rdi") 0, in("rsi") 0, options(noreturn))
        } else {
            core::arch::asm!("mov rsp, {s}", "sti", "2: jmp 2b", s = in(reg) rsp, options(noreturn))
        }
    }
}

/// Runs `sysret` or `int 14` (`INJECT_PRIVILEGED`).
fn privileged(how: u64) {
    // SAFETY: none: this is the injected bug; the kernel must stop the
    // driver at the trap that follows.
    unsafe {
        if how == drvapi::op::PRIVILEGED_SYSRET {
            core::arch::asm!("sysretq", in("rcx") 0x1000, in("r11") 0x202, options(noreturn))
        }
        core::arch::asm!("int 14", options(nomem, nostack))
    }
}

/// Loops forever (the injected livelock); only the kernel's watchdog ends it.
fn spin() -> ! {
    loop {
        core::hint::spin_loop();
    }
}

/// Recurses without end (the injected stack overflow).
#[allow(unconditional_recursion)]
fn deeper(n: u64) -> u64 {
    let frame = core::hint::black_box([n; 32]);
    deeper(frame[1] + 1) + frame[2]
}

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
