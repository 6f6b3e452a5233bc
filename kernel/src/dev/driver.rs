//! The loaded drivers: each one's image, device, entry points and object
//! tracker; the crossing into a driver; requests in flight; and disabling
//! a driver that failed (paper 004 §3.1-§3.3). A disabled driver's device
//! loses bus mastering and interrupts, its requests fail with an I/O
//! error, its DMA pages come back, and the kernel goes on.

use super::domain::Domain;
use super::image::Image;
use super::pci::{ConfigSpace, Device};
use super::tracker::{Object, Tracker};
use super::{msix, xpc, Global};
use crate::frames::Frame;
use crate::state::Kernel;
use abi::tables::frame_state;
use drvapi::{status, DeviceInfo, DriverApi, Facts, Request};

/// At most this many drivers.
pub const MAX_DRIVERS: usize = 4;
/// Requests in flight across all drivers.
const MAX_PENDING: usize = 64;

/// Bytes `offset..offset + len` of frame `frame`: a request's buffer.
#[derive(Clone, Copy, Debug)]
pub struct Span {
    pub frame: u64,
    pub offset: usize,
    pub len: usize,
}

/// What the kernel calls when a request ends: its tag, a `drvapi::status`
/// and the bytes moved.
pub type Done = fn(tag: u64, status: i32, len: usize);

pub struct Driver {
    pub name: &'static str,
    pub device: Device,
    pub image: Image,
    pub domain: Domain,
    init: u64,
    submit: u64,
    interrupt: u64,
    pub tracker: Tracker,
    /// The device's vector, and its INTx line when it interrupts through
    /// the I/O APIC rather than MSI-X.
    pub vector: u8,
    pub line: Option<u8>,
    pub facts: Facts,
    pub disabled: bool,
    /// BARs the driver is sizing (see `wrappers::config_write`).
    pub sizing: u8,
}

struct Pending {
    tag: u64,
    driver: usize,
    done: Done,
}

pub struct Drivers {
    pub list: [Option<Driver>; MAX_DRIVERS],
    /// The driver a crossing is in, if any, and the kernel state the
    /// crossing's caller lent it (the wrappers' only way to it).
    pub current: Option<usize>,
    kernel: *mut Kernel,
    pub saved: xpc::Saved,
    pending: [Option<Pending>; MAX_PENDING],
    next_tag: u64,
}

static DRIVERS: Global<Drivers> = Global::new(Drivers {
    list: [const { None }; MAX_DRIVERS],
    current: None,
    kernel: core::ptr::null_mut(),
    saved: xpc::Saved::ZERO,
    pending: [const { None }; MAX_PENDING],
    next_tag: 1,
});

pub fn drivers() -> &'static mut Drivers {
    DRIVERS.get()
}

/// The driver a wrapper is serving (wrappers run only inside a crossing).
pub fn current() -> (usize, &'static mut Driver) {
    let ds = drivers();
    let i = ds.current.expect("a driver wrapper called outside a crossing");
    (i, ds.list[i].as_mut().expect("the current driver exists"))
}

/// The kernel state, for a wrapper or a fault inside a crossing.
pub fn lent_kernel() -> &'static mut Kernel {
    let k = drivers().kernel;
    assert!(!k.is_null(), "kernel state asked for outside a crossing");
    // SAFETY: `cross` stores its caller's `&mut Kernel` here for the
    // crossing's duration and clears it after; the caller is suspended
    // in the crossing meanwhile, so this is the only use of it.
    unsafe { &mut *k }
}

/// Whether `va..va + len` is the driver's own memory: its data or its
/// stack (`stack`), or also its text and read-only data (`any`).
pub fn owns(d: &Driver, va: u64, len: u64, any: bool) -> bool {
    let (s, e) = d.image.stack();
    let (ds, de) = d.image.data;
    super::tracker::inside(va, len, ds, de - ds)
        || super::tracker::inside(va, len, s, e - s)
        || (any && super::tracker::inside(va, len, d.image.base, d.image.end() - d.image.base))
}

/// Whether `owner` (0: the kernel) holds `frame`, so it may be lent to a
/// driver for a request.
pub fn holds(k: &Kernel, owner: u32, frame: Frame) -> bool {
    let want = if owner == 0 { frame_state::KERNEL } else { frame_state::USER };
    k.frames.info(frame).is_some_and(|f| f.owner == owner && f.state == want)
}

/// Calls entry `func` of driver `i`; an error if the driver is disabled,
/// is disabled during the call, or a crossing is already under way (a
/// completion callback may not call into a driver).
fn cross(k: &mut Kernel, i: usize, func: impl Fn(&Driver) -> u64, args: [u64; 3]) -> Result<u64, i32> {
    let ds = drivers();
    let Some(d) = ds.list[i].as_ref() else { return Err(status::IO_ERROR) };
    if d.disabled || ds.current.is_some() {
        return Err(status::IO_ERROR);
    }
    let f = func(d);
    (ds.saved.stack_top, ds.saved.domain) = (d.image.stack().1, d.domain.pml4.map_or(0, Frame::addr));
    (ds.current, ds.kernel) = (Some(i), k as *mut Kernel);
    // SAFETY: `f` is one of the driver's entry points (checked to lie in
    // its text at load), the stack and page table its own; the kernel
    // runs with interrupts off outside its idle wait.
    let r = unsafe { xpc::enter(f, args, &mut ds.saved) };
    (ds.current, ds.kernel) = (None, core::ptr::null_mut());
    match ds.list[i].as_ref() {
        Some(d) if !d.disabled => Ok(r),
        _ => Err(status::IO_ERROR),
    }
}

/// Copies `v` into driver `d`'s mailbox at `offset`: the driver's
/// address of it.
fn post<T: Copy>(d: &Driver, offset: u64, v: T) -> u64 {
    let va = d.image.mailbox() + offset;
    // SAFETY: the mailbox is a page of the driver's region, mapped in the
    // kernel's tables; offsets used here keep within it and aligned.
    unsafe { (va as *mut T).write(v) };
    va
}

const MAIL_DEVICE: u64 = 0;
const MAIL_FACTS: u64 = 64;
const MAIL_REQUEST: u64 = 128;

/// Installs a loaded image for `device` and runs its init.
pub fn start(
    k: &mut Kernel,
    name: &'static str,
    device: Device,
    image: Image,
    domain: Domain,
    vector: u8,
) -> Result<usize, &'static str> {
    let ds = drivers();
    let i = ds.list.iter().position(Option::is_none).ok_or("too many drivers")?;
    ds.list[i] = Some(Driver {
        name,
        device,
        image,
        domain,
        init: 0,
        submit: 0,
        interrupt: 0,
        tracker: Tracker::default(),
        vector,
        line: None,
        facts: Facts::default(),
        disabled: false,
        sizing: 0,
    });
    let table = cross(k, i, |d| d.image.entry, [0; 3]).map_err(|_| "its entry point failed")?;
    let d = ds.list[i].as_mut().expect("just installed");
    let size = core::mem::size_of::<DriverApi>() as u64;
    let (ro_lo, ro_hi) = (d.image.base, d.image.end());
    if !super::tracker::inside(table, size, ro_lo, ro_hi - ro_lo) || table % 8 != 0 {
        return Err("its entry point returned a table outside its image");
    }
    // SAFETY: inside the driver's image (checked above), aligned; a
    // `DriverApi` is plain integers and function addresses, read as such.
    let api = unsafe { core::ptr::read(table as *const [u64; 4]) };
    let (t0, t1) = d.image.text;
    if api[0] as u32 != drvapi::VERSION || api[1..].iter().any(|&f| !(t0..t1).contains(&f)) {
        return Err("its entry table has the wrong version or points outside its text");
    }
    (d.init, d.submit, d.interrupt) = (api[1], api[2], api[3]);
    // Bus mastering for DMA and memory decoding for its registers.
    let f = d.device.at;
    f.write32(4, f.read32(4) & 0xFFFF | 0x6);
    let info = DeviceInfo {
        bus: f.bus,
        device: f.device,
        function: f.function,
        vendor_id: d.device.vendor,
        device_id: d.device.id,
    };
    let (info, facts) = (post(d, MAIL_DEVICE, info), post(d, MAIL_FACTS, Facts::default()));
    let r = cross(k, i, |d| d.init, [&super::wrappers::KERNEL_API as *const _ as u64, info, facts]);
    match r {
        Ok(v) if v as i32 == status::OK => {
            let d = ds.list[i].as_mut().expect("installed");
            // SAFETY: put there by `post` above, in the driver's mailbox.
            d.facts = unsafe { (facts as *const Facts).read() };
            Ok(i)
        }
        _ => {
            disable(k, i, "its init failed");
            Err("its init failed")
        }
    }
}

/// Lends the `len` bytes at physical address `pa` (inside one page) to
/// driver `i` for request `r` (whose `va` is set here) and starts it;
/// `done` is called when it ends. Returns the request's tag.
pub fn submit(k: &mut Kernel, i: usize, mut r: Request, pa: u64, done: Done) -> Result<u64, i32> {
    let ds = drivers();
    let Some(slot) = ds.pending.iter().position(Option::is_none) else { return Err(status::NO_SPACE) };
    let d = ds.list[i].as_mut().ok_or(status::IO_ERROR)?;
    if d.disabled {
        return Err(status::IO_ERROR);
    }
    let va = d.domain.lend(k, pa).ok_or(status::NO_SPACE)?;
    r.tag = ds.next_tag;
    r.va = va as usize;
    ds.next_tag += 1;
    if d.tracker.add(Object::Lent { tag: r.tag, va, pa, len: r.len as u64 }).is_err() {
        d.domain.take_back(k, va);
        return Err(status::NO_SPACE);
    }
    ds.pending[slot] = Some(Pending { tag: r.tag, driver: i, done });
    let req = post(d, MAIL_REQUEST, r);
    match cross(k, i, |d| d.submit, [req, 0, 0]) {
        Ok(v) if v as i32 == status::OK => Ok(r.tag),
        other => {
            // Not started: the buffer comes back, no completion is due
            // (unless disabling the driver already failed it).
            if let Some(d) = ds.list[i].as_mut() {
                if d.tracker.take_lent(r.tag).is_some() {
                    d.domain.take_back(k, va);
                }
            }
            if ds.pending[slot].as_ref().is_some_and(|p| p.tag == r.tag) {
                ds.pending[slot] = None;
            }
            Err(match other {
                Ok(v) => v as i32,
                Err(e) => e,
            })
        }
    }
}

/// One crossing into driver `i` and back, doing nothing: its `submit`
/// with a request it refuses at once (the XPC benchmark).
pub fn null_call(k: &mut Kernel, i: usize) -> Result<u64, i32> {
    let d = drivers().list[i].as_ref().ok_or(status::IO_ERROR)?;
    let req = post(d, MAIL_REQUEST, Request::default());
    cross(k, i, |d| d.submit, [req, 0, 0])
}

/// The index of the enabled driver `name`.
pub fn find(name: &str) -> Option<usize> {
    let ds = drivers();
    (0..ds.list.len()).find(|&i| ds.list[i].as_ref().is_some_and(|d| d.name == name && !d.disabled))
}

/// Request `tag` of the current driver ended (the `complete` wrapper,
/// which checked that the driver holds it).
pub fn finish(tag: u64, st: i32, len: usize) {
    let ds = drivers();
    if let Some(slot) = ds.pending.iter_mut().find(|p| p.as_ref().is_some_and(|p| p.tag == tag)) {
        let p = slot.take().expect("found");
        (p.done)(tag, st, len);
    }
}

/// Whether `vector` is a driver's.
pub fn owns_vector(vector: u8) -> bool {
    drivers().list.iter().flatten().any(|d| d.vector == vector && !d.disabled)
}

/// Quiets `vector` until its drivers have run: a level-triggered I/O APIC
/// line is masked (it stays raised until a driver acknowledges its
/// device).
pub fn quiet(vector: u8) {
    if let Some(line) = drivers().list.iter().flatten().find(|d| d.vector == vector).and_then(|d| d.line) {
        super::ioapic::mask(line);
    }
}

/// Runs every driver on `vector` (a shared INTx line may have several),
/// then lets the line interrupt again if a driver is left on it.
pub fn interrupt(k: &mut Kernel, vector: u8) {
    let on = |i: usize| drivers().list[i].as_ref().is_some_and(|d| d.vector == vector && !d.disabled);
    for i in 0..MAX_DRIVERS {
        if on(i) {
            let _ = cross(k, i, |d| d.interrupt, [0; 3]);
        }
    }
    if let Some(line) = (0..MAX_DRIVERS).find(|&i| on(i)).and_then(|i| drivers().list[i].as_ref()?.line) {
        super::ioapic::route(line).ok();
    }
}

/// Stops driver `i`: its device can no longer interrupt or reach memory,
/// its pending requests fail with an I/O error, and what it held comes
/// back. If a crossing into it is under way, the caller then leaves it.
pub fn disable(k: &mut Kernel, i: usize, why: &str) {
    let ds = drivers();
    let Some(d) = ds.list[i].as_mut() else { return };
    if d.disabled {
        return;
    }
    d.disabled = true;
    crate::kprintln!("driver {} disabled: {why}; its requests fail with an I/O error", d.name);
    let f = d.device.at;
    // Bus mastering off (no more DMA) and INTx off (a device nobody
    // acknowledges any more must not hold a shared line raised).
    f.write32(4, f.read32(4) & 0xFFFF & !0x4 | 1 << 10);
    msix::mask(&d.device);
    let (vector, line) = (d.vector, d.line);
    let shared = ds.list.iter().flatten().any(|o| !o.disabled && o.vector == vector);
    if let (Some(line), false) = (line, shared) {
        super::ioapic::mask(line);
    }
    let Some(d) = ds.list[i].as_mut() else { return };
    for o in d.tracker.drain() {
        match o {
            Object::Dma { pa, va, pages } => {
                d.domain.unmap(k, va, pages);
                // Safe to reuse: bus mastering is off.
                super::contig::free(&mut k.frames, Frame::containing(pa), pages);
            }
            Object::Lent { va, .. } => d.domain.take_back(k, va),
            Object::Mmio { va, len, .. } => d.domain.unmap(k, va & !4095, ((va & 4095) + len).div_ceil(4096)),
            Object::Irq { .. } => {}
        }
    }
    for slot in ds.pending.iter_mut() {
        if slot.as_ref().is_some_and(|p| p.driver == i) {
            let p = slot.take().expect("checked");
            (p.done)(p.tag, status::IO_ERROR, 0);
        }
    }
}

/// A processor exception: if it happened inside a crossing (the driver
/// wrote outside its domain, or faulted otherwise), the driver is
/// disabled and the crossing left; otherwise `false`. Runs first thing in
/// the kernel's trap handler, still in the domain's page table.
pub fn fault(vector: u64, rip: u64) -> bool {
    let ds = drivers();
    if ds.current.is_none() {
        return false;
    }
    xpc::leave_domain(&ds.saved);
    match vector {
        14 => {
            let addr = crate::arch::cpu::cr2();
            fail_current(format_args!("page fault at address {addr:#x} (rip {rip:#x}): outside its domain"))
        }
        8 => fail_current(format_args!(
            "double fault at rip {rip:#x}: its stack overflowed into its guard page"
        )),
        v => fail_current(format_args!("{} at rip {rip:#x}", abi::exception::vector::name(v))),
    }
}

/// Disables the current driver and leaves the crossing (a wrapper check
/// failed, or the driver gave up).
pub fn fail_current(why: core::fmt::Arguments) -> ! {
    let ds = drivers();
    let (i, d) = current();
    crate::kprintln!("driver {}: {why}", d.name);
    disable(lent_kernel(), i, "it failed");
    // SAFETY: called by a wrapper inside the crossing `saved` records.
    unsafe { xpc::abort(&ds.saved, status::IO_ERROR as i64) }
}
