//! The loaded drivers: each one's image, device, entry points and object
//! tracker; the crossing into a driver; requests in flight (`pending`);
//! and disabling a driver that failed (paper 004 §3.1-§3.3). A disabled
//! driver's device loses bus mastering and interrupts, its DMA pages come
//! back, its requests are kept for its restart (`recover`) or fail with
//! an I/O error, and the kernel goes on.

use super::domain::Domain;
use super::image::Image;
use super::pci::{ConfigSpace, Device};
pub use super::pending::Done;
use super::pending::{self, Table};
use super::tracker::{Object, Tracker};
use super::{detect, msix, recover, xpc, Global, MAX_DRIVERS};
use crate::frames::{Frame, Frames};
use abi::tables::frame_state;
use drvapi::{status, DeviceInfo, DriverApi, Facts, KernelApi, Request};

pub use super::run::Span;

pub struct Driver {
    pub name: &'static str,
    /// The image file it was loaded from (the boot file system's), for a
    /// restart.
    file: &'static [u8],
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

pub struct Drivers {
    pub list: [Option<Driver>; MAX_DRIVERS],
    /// The driver a crossing is in, if any.
    current: Option<usize>,
    pending: Table,
}

static DRIVERS: Global<Drivers> =
    Global::new(Drivers { list: [const { None }; MAX_DRIVERS], current: None, pending: Table::new() });

/// Runs `f` on the loaded drivers (kernel code outside a crossing).
pub fn with<R>(f: impl FnOnce(&mut Drivers) -> R) -> R {
    DRIVERS.with(f)
}

/// `with`, or `None` if the drivers are lent already.
pub fn try_with<R>(f: impl FnOnce(&mut Drivers) -> R) -> Option<R> {
    DRIVERS.try_with(f)
}

/// For kernel code inside a crossing (a wrapper, or a trap the driver
/// took): runs `f` on the drivers and the index of the driver the
/// crossing is in. `None` outside a crossing, or nested in another use of
/// the drivers. Such code reaches the device layer's own state only
/// (what it allocates comes from `pool`), never the kernel state.
pub fn in_crossing<R>(f: impl FnOnce(&mut Drivers, usize) -> R) -> Option<R> {
    DRIVERS.try_with(|ds| ds.current.map(|i| f(ds, i))).flatten()
}

/// Runs `f` on the driver a crossing is in, shared, without writing
/// anything (in its domain: the `share` wrappers); `None` outside a
/// crossing or while the drivers are lent.
pub fn peek_current<R>(f: impl FnOnce(&Driver) -> R) -> Option<R> {
    DRIVERS.peek(|ds| ds.current.and_then(|i| ds.list[i].as_ref()).map(f)).flatten()
}

impl Drivers {
    /// Driver `i`, which exists (it is the crossing's, or was found).
    pub fn get(&mut self, i: usize) -> &mut Driver {
        self.list[i].as_mut().expect("the driver exists")
    }

    /// Whether driver `i` is loaded and not disabled.
    fn enabled(&self, i: usize) -> bool {
        self.list[i].as_ref().is_some_and(|d| !d.disabled)
    }

    /// Request `tag` was refused or ended with an I/O error: whether to
    /// doubt it — stop the driver and have a fresh copy make the request
    /// again (`pending::Table::ask_again`; only when failed drivers are
    /// restarted).
    pub fn doubt(&mut self, tag: u64) -> bool {
        recover::on() && self.pending.ask_again(tag)
    }

    /// Request `tag` ended (the `complete` wrapper, which checked that
    /// the driver held it).
    pub fn finish(&mut self, tag: u64, st: i32, len: usize) {
        let Some(i) = self.pending.finish(tag, st, len).filter(|_| st == status::OK) else { return };
        if let Some(cycles) = recover::served(i) {
            let name = self.get(i).name;
            crate::kprintln!("recovery: {name} ended a request well {cycles} TSC cycles after its failure");
        }
    }
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
pub fn holds(frames: &Frames, owner: u32, frame: Frame) -> bool {
    let want = if owner == 0 { frame_state::KERNEL } else { frame_state::USER };
    frames.info(frame).is_some_and(|f| f.owner == owner && f.state == want)
}

/// Calls into driver `i`: `prepare` (in the same loan of the drivers as
/// the checks) names the entry point and its arguments. An error if the
/// driver is disabled, is stopped during the call, `prepare` refuses, or
/// a crossing is already under way (a completion callback, or a wrapper,
/// may not call into a driver).
fn cross(i: usize, prepare: impl FnOnce(&mut Driver) -> Result<(u64, [u64; 3]), i32>) -> Result<u64, i32> {
    cross_within(i, detect::BUDGET_TICKS, prepare)
}

/// `cross`, stopped by the watchdogs after `budget` timer ticks.
fn cross_within(
    i: usize,
    budget: u64,
    prepare: impl FnOnce(&mut Driver) -> Result<(u64, [u64; 3]), i32>,
) -> Result<u64, i32> {
    detect::set_budget(budget);
    let entry = DRIVERS.try_with(|ds| {
        let idle = ds.current.is_none();
        let d = ds.list[i].as_mut().filter(|d| !d.disabled && idle).ok_or(status::IO_ERROR)?;
        let (f, args) = prepare(d)?;
        let (domain, flush) = d.domain.enter();
        ds.current = Some(i);
        Ok((f, args, d.image.stack(), domain, flush))
    });
    let (f, args, stack, domain, flush) = entry.unwrap_or(Err(status::IO_ERROR))?;
    // The NMI watchdog covers the crossing (a driver may turn interrupts off).
    super::nmi::arm(true);
    // SAFETY: `f` is one of the driver's entry points (checked to lie in
    // its text at load), the stack and page table its own; the kernel
    // runs with interrupts off outside its idle wait, and no crossing is
    // under way (`current` was none).
    let r = unsafe { xpc::enter(f, args, stack, domain, flush) };
    super::nmi::arm(false);
    let stopped = detect::stopped();
    if stopped {
        // Left by `abort`: whatever the abandoned frames had borrowed of
        // the drivers (a wrapper that was running) is free again, and
        // NMIs, blocked since an NMI handler that never returned, too.
        DRIVERS.release_abandoned();
        xpc::unblock_nmis();
    }
    DRIVERS.with(|ds| {
        ds.current = None;
        if stopped {
            detect::report(ds.get(i).name);
            disable(ds, i, "it failed");
        }
        match ds.list[i].as_ref() {
            Some(d) if !d.disabled => Ok(r),
            _ => Err(status::IO_ERROR),
        }
    })
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
    name: &'static str,
    device: Device,
    image: Image,
    domain: Domain,
    vector: u8,
    api: &'static KernelApi,
    file: &'static [u8],
) -> Result<usize, &'static str> {
    let i = with(|ds| {
        let i = ds.list.iter().position(Option::is_none).ok_or("too many drivers")?;
        ds.list[i] = Some(Driver {
            name,
            file,
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
        Ok(i)
    })?;
    let r = init(i, api);
    with(|ds| r.map(|()| i).inspect_err(|why| disable(ds, i, why)))
}

/// Restarts disabled driver `i` (`recover`): a fresh copy of its image in
/// its frames, its domain emptied and its device reachable again, then
/// its entry point and init as at boot. If that fails it is disabled
/// again.
pub fn restart(i: usize, api: &'static KernelApi) -> Result<(), &'static str> {
    with(|ds| {
        let d = ds.list[i].as_mut().filter(|d| d.disabled).ok_or("it is not disabled")?;
        d.image.reload(d.file, (d.domain.base, d.domain.base + super::domain::REGION))?;
        d.domain.reset()?;
        (d.facts, d.sizing, d.disabled) = (Facts::default(), 0, false);
        Ok(())
    })?;
    let r = init(i, api);
    with(|ds| r.inspect_err(|why| disable(ds, i, why)))?;
    replay(i);
    Ok(())
}

/// Runs driver `i`'s entry point, checks the table it returns, runs its
/// init and checks the facts it reports.
fn init(i: usize, api: &'static KernelApi) -> Result<(), &'static str> {
    // The device may reach the image's data and its stack, which the
    // driver may share (`wrappers::share`), besides what it is lent later.
    with(|ds| {
        let d = ds.get(i);
        let (lo, hi) = (d.image.data.0 & !4095, d.image.data.1.div_ceil(4096) * 4096);
        let (s, e) = d.image.stack();
        d.domain.expose(d.image.pa(lo), (hi - lo) / 4096)?;
        d.domain.expose(d.image.pa(s), (e - s) / 4096)
    })
    .ok_or("no memory for its device's DMA tables")?;
    let table = cross(i, |d| Ok((d.image.entry, [0; 3]))).map_err(|_| "its entry point failed")?;
    let (info, facts) = with(|ds| {
        let d = ds.get(i);
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
        // Bus mastering for DMA and memory decoding for its registers;
        // INTx on again (a disabled driver's device had it off).
        let f = d.device.at;
        f.write32(4, f.read32(4) & 0xFFFF & !(1 << 10) | 0x6);
        let info = DeviceInfo {
            bus: f.bus,
            device: f.device,
            function: f.function,
            vendor_id: d.device.vendor,
            device_id: d.device.id,
        };
        Ok((post(d, MAIL_DEVICE, info), post(d, MAIL_FACTS, Facts::default())))
    })?;
    // Init talks to the device (reset, features, queues), which takes
    // longer than a request's call when the host is busy.
    let budget = detect::INIT_BUDGET_TICKS;
    match cross_within(i, budget, |d| Ok((d.init, [api as *const KernelApi as u64, info, facts]))) {
        Ok(v) if v as i32 == status::OK => {}
        _ => return Err("its init failed"),
    }
    with(|ds| {
        let d = ds.get(i);
        // SAFETY: put there by `post` above, in the driver's mailbox.
        d.facts = unsafe { (facts as *const Facts).read() };
        detect::implausible(d.name, &d.facts, &d.device).map_or(Ok(()), |why| {
            crate::kprintln!("driver {}: reported {why}", d.name);
            Err("it reported facts about its device that are not true")
        })
    })
}

/// Lends the buffer of request `r` (`r.len` bytes in `pages`, physical
/// addresses: `run::addrs`) to driver `i` (setting `r.va`) and starts it;
/// `done(cookie, ..)` is called when it ends. Returns the request's tag.
/// A driver awaiting its restart, or with requests parked for it, gets
/// the request after those: it is parked too.
pub fn submit(i: usize, r: Request, pages: &[u64], done: Done, cookie: u64) -> Result<u64, i32> {
    let (slot, tag, parked) = with(|ds| {
        let waiting = recover::due(i) || pending::parked(i);
        let since = (!waiting).then(detect::now);
        ds.pending.add(i, r, pages, (done, cookie), since).map(|(slot, tag)| (slot, tag, waiting))
    })?;
    if parked {
        replay(i);
        return Ok(tag);
    }
    hand(i, tag, r, pages).map(|()| tag).or_else(|st| {
        with(|ds| {
            // Kept if its driver failed during the call, for its restart.
            match ds.pending.not_started(slot, tag) {
                None if ds.pending.is_parked(slot, tag) => Ok(tag),
                _ => Err(st),
            }
        })
    })
}

/// Hands request `tag`, `r` with its buffer in `pages`, to driver `i`:
/// whether it took it; if not, the buffer is back.
fn hand(i: usize, tag: u64, mut r: Request, pages: &[u64]) -> Result<(), i32> {
    let mut lent = false;
    // A flush waits for the device inside the call (`drvapi::op::FLUSH`).
    let budget = if r.op == drvapi::op::FLUSH { detect::FLUSH_BUDGET_TICKS } else { detect::BUDGET_TICKS };
    let st = match cross_within(i, budget, |d| {
        let va = lend(d, tag, pages, r.len)?;
        lent = true;
        (r.tag, r.va) = (tag, va as usize);
        Ok((d.submit, [post(d, MAIL_REQUEST, r), 0, 0]))
    }) {
        Ok(v) if v as i32 == status::OK => return Ok(()),
        Ok(v) => with(|ds| refused(ds, i, tag, r.op, v as i32)),
        Err(e) => e,
    };
    // Not started: the buffer comes back (unless disabling the driver
    // took it back already).
    with(|ds| {
        if let (Some(d), true) = (ds.list[i].as_mut(), lent) {
            take_back(d, tag);
        }
    });
    Err(st)
}

/// Lends `pages`, the buffer of request `tag` (`len` bytes), to driver
/// `d` at consecutive addresses of its region (its device reaches each
/// page apart: `share` gives a page's part, never a range across two):
/// the driver's address of the buffer.
fn lend(d: &mut Driver, tag: u64, pages: &[u64], len: usize) -> Result<u64, i32> {
    let va = d.domain.lend(pages, len as u64).ok_or(status::NO_SPACE)?;
    let lent = Object::Lent { tag, va, pa: pages[0], len: len as u64 };
    if d.tracker.add(lent).is_err() {
        d.domain.take_back(va, len as u64);
        return Err(status::NO_SPACE);
    }
    Ok(va)
}

/// Takes back from driver `d` the buffer lent with request `tag`: its
/// length, `None` if it held none.
pub fn take_back(d: &mut Driver, tag: u64) -> Option<u64> {
    let Some(Object::Lent { va, len, .. }) = d.tracker.take_lent(tag) else { return None };
    d.domain.take_back(va, len);
    Some(len)
}

/// Hands enabled driver `i` the requests parked for it, oldest first,
/// until it has no room (the rest wait for the next clock, `resume`) or
/// fails again (then they wait for its next restart). One it refuses
/// ends with its refusal.
pub fn replay(i: usize) {
    let next = || with(|ds| if ds.enabled(i) { ds.pending.unpark(i, detect::now()) } else { None });
    while let Some((slot, tag, r, pages)) = next() {
        match hand(i, tag, r, pages.addrs()) {
            Ok(()) => {}
            Err(status::NO_SPACE) if with(|ds| ds.enabled(i)) => {
                return with(|ds| ds.pending.repark(slot, tag));
            }
            Err(st) => {
                if let Some((done, cookie)) = with(|ds| ds.pending.not_started(slot, tag)) {
                    done(cookie, st, 0);
                }
            }
        }
    }
}

/// Requests parked for enabled drivers (which had no room for them at
/// their restart) handed to them (the clock hook).
#[inline(always)]
pub fn resume() {
    for i in (0..MAX_DRIVERS).filter(|&i| pending::parked(i)) {
        replay(i);
    }
}

/// Driver `i` will not be restarted: the requests parked for it end with
/// an I/O error.
pub fn give_up(i: usize) {
    with(|ds| ds.pending.give_up(i));
}

/// Driver `i` refused request `tag` of kind `kind` with `st` at submit:
/// `st`, or `IO_ERROR` when the refusal cannot be honest
/// (`detect::dishonest`) or is an I/O error to doubt, and then the
/// driver is disabled.
fn refused(ds: &mut Drivers, i: usize, tag: u64, kind: u32, st: i32) -> i32 {
    let (facts, held) = (ds.get(i).facts, ds.pending.holding(i) - 1);
    let lie = match detect::dishonest(kind, st, &facts, held) {
        Some(lie) => lie,
        None if st == status::IO_ERROR && ds.doubt(tag) => detect::DOUBTED,
        None => return st,
    };
    crate::kprintln!(
        "driver {}: reported {lie} (status {st}, {held} of {} requests in flight)",
        ds.get(i).name,
        facts.queue_depth
    );
    disable(ds, i, "it failed");
    status::IO_ERROR
}

/// Requests held since before `now - limit` (timer ticks, `limit` the
/// deadline `detect::clock` gave) fail their drivers: each is disabled.
/// Nothing is done if the drivers are lent.
pub fn fail_overdue(now: u64, limit: u64) {
    try_with(|ds| {
        while let Some((i, tag)) = ds.pending.overdue(now.saturating_sub(limit), |i| ds.enabled(i)) {
            let ms = limit * crate::arch::apic::TICK_NS / 1_000_000;
            crate::kprintln!(
                "driver {}: request {tag} not ended within {ms} ms: missed its deadline",
                ds.get(i).name
            );
            disable(ds, i, "it failed");
        }
    });
}

/// One crossing into driver `i` and back, doing nothing: its `submit`
/// with a request it refuses at once (the XPC benchmark).
pub fn null_call(i: usize) -> Result<u64, i32> {
    cross(i, |d| Ok((d.submit, [post(d, MAIL_REQUEST, Request::default()), 0, 0])))
}

/// The first page of driver `i`'s registers it maps, if any.
#[cfg(feature = "inject")]
pub fn registers(i: usize) -> Option<u64> {
    with(|ds| {
        ds.get(i).tracker.iter().find_map(|o| match o {
            Object::Mmio { va, .. } => Some(va & !4095),
            _ => None,
        })
    })
}

/// Driver `i`'s name.
pub fn name(i: usize) -> &'static str {
    with(|ds| ds.get(i).name)
}

/// The index of driver `name`, enabled or awaiting its restart (which
/// its requests wait for).
pub fn find(name: &str) -> Option<usize> {
    with(|ds| {
        let serves = |i: usize, d: &Driver| d.name == name && (!d.disabled || recover::due(i));
        (0..ds.list.len()).find(|&i| ds.list[i].as_ref().is_some_and(|d| serves(i, d)))
    })
}

/// Whether driver `i` was stopped (disabled, perhaps awaiting its
/// restart).
#[cfg(feature = "inject")]
pub fn stopped(i: usize) -> bool {
    with(|ds| !ds.enabled(i))
}

/// What enabled driver `name` told about its device, and whether it runs
/// in its own domain.
pub fn describe(name: &str) -> Option<(Facts, bool)> {
    let i = find(name)?;
    with(|ds| ds.list[i].as_ref().map(|d| (d.facts, d.domain.pml4.is_some())))
}

/// What enabled driver `name` told about its device.
pub fn facts(name: &str) -> Option<Facts> {
    found(name).map(|(_, f)| f)
}

/// Driver `name`'s index and facts, if it is loaded and working.
pub fn found(name: &str) -> Option<(usize, Facts)> {
    let i = find(name)?;
    with(|ds| ds.list[i].as_ref().map(|d| (i, d.facts)))
}

/// Whether `vector` is a driver's.
pub fn owns_vector(vector: u8) -> bool {
    with(|ds| ds.list.iter().flatten().any(|d| d.vector == vector && !d.disabled))
}

/// Quiets `vector` until its drivers have run: a level-triggered I/O APIC
/// line is masked (it stays raised until a driver acknowledges its
/// device).
pub fn quiet(vector: u8) {
    if let Some(line) = with(|ds| ds.list.iter().flatten().find(|d| d.vector == vector).and_then(|d| d.line))
    {
        super::ioapic::mask(line);
    }
}

/// Runs every driver on `vector` (a shared INTx line may have several),
/// then lets the line interrupt again if a driver is left on it.
pub fn interrupt(vector: u8) {
    let on = |i: usize| {
        with(|ds| ds.list[i].as_ref().filter(|d| d.vector == vector && !d.disabled).map(|d| d.line))
    };
    for i in 0..MAX_DRIVERS {
        if on(i).is_some() {
            let _ = cross(i, |d| Ok((d.interrupt, [0; 3])));
        }
    }
    if let Some(line) = (0..MAX_DRIVERS).find_map(on).flatten() {
        super::ioapic::route(line).ok();
    }
}

/// Stops driver `i`: its device can no longer interrupt or reach memory,
/// what it held comes back, and its pending requests are kept for its
/// restart if it is due one (`recover`), else fail with an I/O error. If
/// a crossing into it is under way, the caller then leaves it.
pub fn disable(ds: &mut Drivers, i: usize, why: &str) {
    let Some(d) = ds.list[i].as_mut().filter(|d| !d.disabled) else { return };
    d.disabled = true;
    let keep = recover::failed(i);
    let fate = if keep { "are kept for its restart" } else { "fail with an I/O error" };
    crate::kprintln!("driver {} disabled: {why}; its requests {fate}", d.name);
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
    let d = ds.get(i);
    d.domain.cut_dma();
    for o in d.tracker.drain() {
        match o {
            Object::Dma { pa, va, pages } => {
                d.domain.unmap_dma(va, pa, pages);
                // Safe to reuse: bus mastering is off (and, under an
                // IOMMU, the device reaches nothing).
                super::pool::free(Frame::containing(pa), pages);
            }
            Object::Lent { va, len, .. } => d.domain.take_back(va, len),
            Object::Mmio { va, len, .. } => d.domain.unmap(va & !4095, ((va & 4095) + len).div_ceil(4096)),
            Object::Irq { .. } => {}
        }
    }
    ds.pending.failed(i, keep);
}

/// The IOMMU reported DMA faults (`iommu::FAULT_VECTOR`): each names the
/// device and the page it addressed; the device's driver is disabled, as
/// for a fault in its domain (its device tried to reach memory its driver
/// does not hold).
pub fn dma_faults() {
    super::iommu::faults(|f| {
        let (at, a) = (f.device, f.addr);
        with(|ds| {
            let i = (0..MAX_DRIVERS).find(|&i| ds.list[i].as_ref().is_some_and(|d| d.device.at == at));
            let name = i.map_or("no driver", |i| ds.get(i).name);
            crate::kprintln!(
                "iommu: DMA fault: {name}'s device {:02x}:{:02x}.{} {} page {a:#x}, which its driver does not hold: blocked (reason {:#x})",
                at.bus,
                at.device,
                at.function,
                if f.write { "wrote to" } else { "read from" },
                f.reason
            );
            if let Some(i) = i {
                disable(ds, i, "its device's DMA went astray");
            }
        });
    });
}
