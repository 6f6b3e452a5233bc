//! The kernel's side of the crossing (paper 004 §3.2-§3.3): the functions
//! of `drvapi::KernelApi`, which a driver calls instead of touching
//! anything itself. Each runs for the driver the crossing is in, checks
//! every argument against what that driver holds (its own memory, buffers
//! lent to it, its device's BARs and configuration space), records what it
//! hands out in the driver's object tracker, and disables the driver when
//! a check fails.

use super::detect::{bad_ending, fail_current, DOUBTED};
use super::driver::{self, owns, Driver, Drivers};
use super::pci::{Bar, ConfigSpace};
use super::tracker::{inside, Object};
use super::xpc::KernelView;
use super::{ioapic, msix, pool};
use drvapi::{status, KernelApi, VERSION};

pub static KERNEL_API: KernelApi = KernelApi {
    version: VERSION,
    log,
    dma_alloc,
    dma_free,
    mmio_map,
    share,
    unshare,
    config_read,
    config_write,
    irq_enable,
    complete,
    receive,
    fail,
};

/// Most pages one DMA allocation may have.
const MAX_DMA_PAGES: usize = 16;
/// Longest console line a driver may print.
const MAX_LOG: usize = 160;

/// A call a wrapper refused: its name, its arguments and why. The driver
/// is then disabled (`wrap`).
struct Refused {
    call: &'static str,
    args: [u64; 3],
    n: usize,
    why: &'static str,
}

fn refused(call: &'static str, args: &[u64], why: &'static str) -> Refused {
    let mut a = [0; 3];
    a[..args.len()].copy_from_slice(args);
    Refused { call, args: a, n: args.len(), why }
}

impl core::fmt::Display for Refused {
    fn fmt(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        write!(f, "{}(", self.call)?;
        for (j, a) in self.args[..self.n].iter().enumerate() {
            write!(f, "{}{a:#x}", if j == 0 { "" } else { ", " })?;
        }
        write!(f, ") refused: {}", self.why)
    }
}

/// Every wrapper's shape: runs `body` for the driver the crossing is in,
/// with interrupts off, in the kernel's page table, with the drivers and
/// that driver's index (never the kernel state: what a wrapper allocates
/// comes from the device layer's pool). A refusal disables the driver and
/// leaves the crossing, once the drivers are no longer borrowed.
fn wrap<R>(body: impl FnOnce(&mut Drivers, usize) -> Result<R, Refused>) -> R {
    let mut view = KernelView::enter(true);
    let (r, stale) = driver::in_crossing(|ds, i| (body(ds, i), ds.get(i).domain.take_stale()))
        .expect("a wrapper runs only inside a crossing");
    if stale {
        view.flush_on_return();
    }
    refuse_or(view, r)
}

/// The shape of the wrappers that only read (`share`, `unshare`): `body`
/// sees the driver, shared, in the domain's page table (where the kernel
/// image is readable and nothing of the kernel writable).
fn wrap_read<R>(body: impl FnOnce(&Driver) -> Result<R, Refused>) -> R {
    let view = KernelView::enter(false);
    let r = driver::peek_current(body).expect("a wrapper runs only inside a crossing");
    refuse_or(view, r)
}

fn refuse_or<R>(view: KernelView, r: Result<R, Refused>) -> R {
    match r {
        Ok(r) => r,
        Err(why) => {
            core::mem::forget(view);
            fail_current(format_args!("{why}"))
        }
    }
}

/// `len` bytes at `va`, which the current driver may read (its own memory
/// or a buffer lent to it).
fn readable(d: &Driver, va: usize, len: usize) -> Option<&[u8]> {
    let ok = owns(d, va as u64, len as u64, true) || d.tracker.lent_covers(va as u64, len as u64);
    // SAFETY: the range is mapped memory of the driver's (checked above),
    // read only while the driver is borrowed (for the wrapper's duration).
    ok.then(|| unsafe { core::slice::from_raw_parts(va as *const u8, len) })
}

fn text(d: &Driver, ptr: *const u8, len: usize) -> &str {
    match readable(d, ptr as usize, len.min(MAX_LOG)) {
        Some(b) => core::str::from_utf8(b).unwrap_or("(not UTF-8)"),
        None => "(text outside the driver)",
    }
}

extern "C" fn log(ptr: *const u8, len: usize) {
    wrap(|ds, i| {
        let d = ds.get(i);
        crate::kprintln!("{}: {}", d.name, text(d, ptr, len));
        Ok(())
    })
}

extern "C" fn fail(ptr: *const u8, len: usize) {
    let mut copy = [0u8; MAX_LOG];
    let n = wrap(|ds, i| {
        let t = text(ds.get(i), ptr, len).as_bytes();
        copy[..t.len()].copy_from_slice(t);
        Ok(t.len())
    });
    fail_current(format_args!("gave up: {}", core::str::from_utf8(&copy[..n]).unwrap_or("")))
}

extern "C" fn dma_alloc(pages: usize, va: *mut usize) -> u64 {
    wrap(|ds, i| {
        let d = ds.get(i);
        if !(1..=MAX_DMA_PAGES).contains(&pages)
            || !owns(d, va as u64, 8, false)
            || !(va as usize).is_multiple_of(8)
        {
            return Err(refused("dma_alloc", &[pages as u64, va as u64], "bad size or result address"));
        }
        let Some(first) = pool::alloc(pages as u64) else { return Ok(0) };
        let pa = first.addr();
        let n = pages as u64;
        let Some(alias) = d.domain.map_dma(pa, n) else {
            pool::free(first, n);
            return Ok(0);
        };
        if d.tracker.add(Object::Dma { pa, va: alias, pages: n }).is_err() {
            d.domain.unmap_dma(alias, pa, n);
            pool::free(first, n);
            return Ok(0);
        }
        // SAFETY: `va` is 8 aligned bytes of the driver's writable memory.
        unsafe { va.write(alias as usize) };
        Ok(pa)
    })
}

extern "C" fn dma_free(pa: u64, va: usize, pages: usize) -> i32 {
    wrap(|ds, i| {
        let d = ds.get(i);
        let n = pages as u64;
        if d.tracker.remove(Object::Dma { pa, va: va as u64, pages: n }).is_err() {
            return Err(refused("dma_free", &[pa, va as u64, n], "pages it does not hold"));
        }
        d.domain.unmap_dma(va as u64, pa, n);
        pool::free(crate::frames::Frame::containing(pa), n);
        Ok(status::OK)
    })
}

extern "C" fn mmio_map(pa: u64, size: usize) -> usize {
    wrap(|ds, i| {
        let d = ds.get(i);
        let in_bar = d.device.bars.iter().any(|b| match *b {
            Bar::Memory { addr, size: s, .. } => inside(pa, size as u64, addr, s),
            _ => false,
        });
        let call = |why| refused("mmio_map", &[pa, size as u64], why);
        // Device registers are reachable only in the uncached last GiB
        // below 4 GiB of the physical window.
        if !in_bar || !inside(pa, size as u64, 3 << 30, 1 << 30) {
            return Err(call("outside its device's registers"));
        }
        let va = d.domain.map_mmio(pa, size as u64).ok_or(call("mapped too many registers"))?;
        d.tracker
            .add(Object::Mmio { pa, va, len: size as u64 })
            .map_err(|_| call("holds too many objects"))?;
        Ok(va as usize)
    })
}

/// The device's address of `va..va + len`: inside one buffer lent to the
/// driver, one of its DMA allocations, or its own data (all physically
/// contiguous).
fn device_address(d: &Driver, va: u64, len: u64) -> Option<u64> {
    let (s, e) = d.image.stack();
    // Its stack too: `virtio-drivers`' waiting requests (a flush) keep
    // their headers there.
    if inside(va, len, d.image.data.0, d.image.data.1 - d.image.data.0) || inside(va, len, s, e - s) {
        return Some(d.image.pa(va));
    }
    // A lent buffer's page (every request's), by its slot; else the
    // tracker's answer.
    d.domain
        .lent_address(va, len)
        .or_else(|| d.tracker.device_address(va, len, |page| d.domain.lent_page(page)))
}

/// `share` and `unshare` run on every buffer of every request, and only
/// read what the kernel tracks (the tracker records the lent buffers and
/// DMA pages a share may name, and disabling a driver stops its device's
/// DMA whatever it shared): they stay in the domain's page table, reading
/// the kernel image there, and switch only to fail (a deferred-call-free
/// shortcut in the spirit of paper 004 §3.1).
extern "C" fn share(va: usize, len: usize, _direction: u32) -> u64 {
    wrap_read(|d| {
        device_address(d, va as u64, len as u64).ok_or(refused(
            "share",
            &[va as u64, len as u64],
            "memory neither its own nor lent to it",
        ))
    })
}

extern "C" fn unshare(pa: u64, va: usize, len: usize) {
    wrap_read(|d| match device_address(d, va as u64, len as u64) {
        Some(p) if p == pa => Ok(()),
        _ => Err(refused("unshare", &[pa, va as u64, len as u64], "a range it does not hold")),
    })
}
/// Configuration words the driver may not write: the expansion ROM and
/// the MSI-X capability (the kernel routes interrupts). BARs are emulated
/// (`bar`).
fn guarded(d: &Driver, offset: u32) -> bool {
    let msix = d.device.msix.is_some_and(|m| (m.cap as u32..m.cap as u32 + 12).contains(&offset));
    offset == 0x30 || msix
}

/// The BAR register at `offset`, if it is one.
fn bar(offset: u32) -> Option<usize> {
    (0x10..0x28).contains(&offset).then(|| (offset as usize - 0x10) / 4)
}

extern "C" fn config_read(offset: u32) -> u32 {
    wrap(|ds, i| {
        let d = ds.get(i);
        if offset > 0xFC || !offset.is_multiple_of(4) {
            return Ok(!0);
        }
        Ok(match bar(offset) {
            Some(b) if d.sizing & 1 << b != 0 => d.device.bar_mask[b],
            _ => d.device.at.read32(offset as u8),
        })
    })
}

/// A driver sizes a BAR as if it owned it (all ones, read, the old value
/// back); the kernel plays the BAR so the device's addresses never move.
extern "C" fn config_write(offset: u32, value: u32) -> i32 {
    wrap(|ds, i| {
        let d = ds.get(i);
        let call = |why| refused("config_write", &[offset as u64, value as u64], why);
        if offset > 0xFC || !offset.is_multiple_of(4) || guarded(d, offset) {
            return Err(call("a register it may not write"));
        }
        match bar(offset) {
            Some(b) if value == !0 => d.sizing |= 1 << b,
            Some(b) if value == d.device.bar_raw[b] => d.sizing &= !(1 << b),
            Some(_) => return Err(call("it would move a BAR")),
            None => d.device.at.write32(offset as u8, value),
        }
        Ok(status::OK)
    })
}

extern "C" fn irq_enable() -> i32 {
    wrap(|ds, i| {
        let d = ds.get(i);
        if d.tracker.iter().any(|o| matches!(o, Object::Irq { .. })) {
            return Ok(status::OK);
        }
        let routed = match (msix::route(&d.device, d.vector), d.device.line) {
            (Ok(()), _) => Ok(()),
            (Err(_), Some(line)) => ioapic::route(line).map(|v| (d.vector, d.line) = (v, Some(line))),
            (Err(why), None) => Err(why),
        };
        if let Err(why) = routed {
            crate::kprintln!("{}: no interrupts: {why}", d.name);
            return Ok(status::UNSUPPORTED);
        }
        d.tracker
            .add(Object::Irq { vector: d.vector })
            .map_err(|_| refused("irq_enable", &[], "holds too many objects"))?;
        Ok(status::OK)
    })
}

extern "C" fn complete(tag: u64, st: i32, len: usize) {
    wrap(|ds, i| {
        let d = ds.get(i);
        let call = |why| refused("complete", &[tag, st as u64, len as u64], why);
        if let Some(why) = bad_ending(st) {
            return Err(call(why));
        }
        // A request that ended well moved all its bytes (every page's).
        match super::driver::take_back(d, tag) {
            Some(lent) if st != status::OK || len as u64 == lent => {}
            Some(_) => return Err(call("a length other than the request's")),
            None => return Err(call("a request it does not hold")),
        }
        // Stopped, the driver leaves the request parked for its restart.
        if st == status::IO_ERROR && ds.doubt(tag) {
            return Err(call(DOUBTED));
        }
        ds.finish(tag, st, len);
        Ok(())
    })
}

/// Lengths of an Ethernet frame (no frame check sequence; one VLAN tag).
const FRAME_LEN: core::ops::RangeInclusive<usize> = 14..=1518;

extern "C" fn receive(va: usize, len: usize) {
    wrap(|ds, i| {
        if !FRAME_LEN.contains(&len) {
            return Err(refused("receive", &[va as u64, len as u64], "a frame of impossible length"));
        }
        let frame = readable(ds.get(i), va, len).ok_or(refused(
            "receive",
            &[va as u64, len as u64],
            "outside its memory",
        ))?;
        super::client::demux(frame);
        Ok(())
    })
}
