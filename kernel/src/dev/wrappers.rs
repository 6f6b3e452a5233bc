//! The kernel's side of the crossing (paper 004 §3.2-§3.3): the functions
//! of `drvapi::KernelApi`, which a driver calls instead of touching
//! anything itself. Each runs for the driver the crossing is in, checks
//! every argument against what that driver holds (its own memory, buffers
//! lent to it, its device's BARs and configuration space), records what it
//! hands out in the driver's object tracker, and disables the driver when
//! a check fails.

use super::driver::{self, current, fail_current, lent_kernel, owns, Driver};
use super::pci::{Bar, ConfigSpace};
use super::tracker::{inside, Object};
use super::xpc::KernelView;
use super::{contig, ioapic, msix};
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

/// `len` bytes at `va`, which the current driver may read (its own memory
/// or a buffer lent to it).
fn readable(d: &Driver, va: usize, len: usize) -> Option<&'static [u8]> {
    let ok = owns(d, va as u64, len as u64, true) || d.tracker.lent_covers(va as u64, len as u64);
    // SAFETY: the range is mapped memory of the driver's (checked above),
    // read only for the duration of the wrapper.
    ok.then(|| unsafe { core::slice::from_raw_parts(va as *const u8, len) })
}

fn text(d: &Driver, ptr: *const u8, len: usize) -> &'static str {
    match readable(d, ptr as usize, len.min(MAX_LOG)) {
        Some(b) => core::str::from_utf8(b).unwrap_or("(not UTF-8)"),
        None => "(text outside the driver)",
    }
}

/// The kernel's page table for the rest of a wrapper (see `xpc`).
fn kernel_view() -> KernelView<'static> {
    KernelView::enter(&driver::drivers().saved)
}

extern "C" fn log(ptr: *const u8, len: usize) {
    let _k = kernel_view();
    let (_, d) = current();
    crate::kprintln!("{}: {}", d.name, text(d, ptr, len));
}

extern "C" fn fail(ptr: *const u8, len: usize) {
    let _k = kernel_view();
    let (_, d) = current();
    fail_current(format_args!("gave up: {}", text(d, ptr, len)))
}

extern "C" fn dma_alloc(pages: usize, va: *mut usize) -> u64 {
    let _k = kernel_view();
    let (_, d) = current();
    if !(1..=MAX_DMA_PAGES).contains(&pages)
        || !owns(d, va as u64, 8, false)
        || !(va as usize).is_multiple_of(8)
    {
        fail_current(format_args!("dma_alloc({pages}, {va:p}) refused"));
    }
    let k = lent_kernel();
    let Some(first) = contig::alloc(&mut k.frames, pages as u64) else { return 0 };
    let pa = first.addr();
    let n = pages as u64;
    let Some(alias) = d.domain.map_dma(k, pa, n) else {
        contig::free(&mut k.frames, first, n);
        return 0;
    };
    if d.tracker.add(Object::Dma { pa, va: alias, pages: n }).is_err() {
        d.domain.unmap(k, alias, n);
        contig::free(&mut k.frames, first, n);
        return 0;
    }
    // SAFETY: `va` is 8 aligned bytes of the driver's writable memory.
    unsafe { va.write(alias as usize) };
    pa
}

extern "C" fn dma_free(pa: u64, va: usize, pages: usize) -> i32 {
    let _k = kernel_view();
    let (_, d) = current();
    let n = pages as u64;
    if d.tracker.remove(Object::Dma { pa, va: va as u64, pages: n }).is_err() {
        fail_current(format_args!("dma_free({pa:#x}, {va:#x}, {pages}) of pages it does not hold"));
    }
    let k = lent_kernel();
    d.domain.unmap(k, va as u64, n);
    contig::free(&mut k.frames, crate::frames::Frame::containing(pa), n);
    status::OK
}

extern "C" fn mmio_map(pa: u64, size: usize) -> usize {
    let _k = kernel_view();
    let (_, d) = current();
    let in_bar = d.device.bars.iter().any(|b| match *b {
        Bar::Memory { addr, size: s, .. } => inside(pa, size as u64, addr, s),
        _ => false,
    });
    // Device registers are reachable only in the uncached last GiB below
    // 4 GiB of the physical window.
    if !in_bar || !inside(pa, size as u64, 3 << 30, 1 << 30) {
        fail_current(format_args!("mmio_map({pa:#x}, {size:#x}) outside its device's registers"));
    }
    let Some(va) = d.domain.map_mmio(lent_kernel(), pa, size as u64) else {
        fail_current(format_args!("mapped too many registers"));
    };
    if d.tracker.add(Object::Mmio { pa, va, len: size as u64 }).is_err() {
        fail_current(format_args!("holds too many objects"));
    }
    va as usize
}

/// The device's address of `va..va + len`: inside one buffer lent to the
/// driver, one of its DMA allocations, or its own data (all physically
/// contiguous).
fn device_address(d: &Driver, va: u64, len: u64) -> Option<u64> {
    if inside(va, len, d.image.data.0, d.image.data.1 - d.image.data.0) {
        return Some(d.image.pa(va));
    }
    d.tracker.device_address(va, len)
}

/// `share` and `unshare` run on every buffer of every request, and only
/// read what the kernel tracks (the tracker records the lent buffers and
/// DMA pages a share may name, and disabling a driver stops its device's
/// DMA whatever it shared): they stay in the domain's page table, reading
/// the kernel image there, and switch only to fail (a deferred-call-free
/// shortcut in the spirit of paper 004 §3.1).
extern "C" fn share(va: usize, len: usize, _direction: u32) -> u64 {
    let (_, d) = current();
    match device_address(d, va as u64, len as u64) {
        Some(pa) => pa,
        None => {
            let _k = kernel_view();
            fail_current(format_args!("share({va:#x}, {len:#x}) of memory neither its own nor lent to it"))
        }
    }
}

extern "C" fn unshare(pa: u64, va: usize, len: usize) {
    let (_, d) = current();
    if device_address(d, va as u64, len as u64) != Some(pa) {
        let _k = kernel_view();
        fail_current(format_args!("unshare({pa:#x}, {va:#x}, {len:#x}) of a range it does not hold"));
    }
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
    let _k = kernel_view();
    let (_, d) = current();
    if offset > 0xFC || !offset.is_multiple_of(4) {
        return !0;
    }
    match bar(offset) {
        Some(i) if d.sizing & 1 << i != 0 => d.device.bar_mask[i],
        _ => d.device.at.read32(offset as u8),
    }
}

/// A driver sizes a BAR as if it owned it (all ones, read, the old value
/// back); the kernel plays the BAR so the device's addresses never move.
extern "C" fn config_write(offset: u32, value: u32) -> i32 {
    let _k = kernel_view();
    let (_, d) = current();
    if offset > 0xFC || !offset.is_multiple_of(4) || guarded(d, offset) {
        fail_current(format_args!("config_write({offset:#x}) of a register it may not write"));
    }
    match bar(offset) {
        Some(i) if value == !0 => d.sizing |= 1 << i,
        Some(i) if value == d.device.bar_raw[i] => d.sizing &= !(1 << i),
        Some(_) => fail_current(format_args!("config_write({offset:#x}, {value:#x}) would move a BAR")),
        None => d.device.at.write32(offset as u8, value),
    }
    status::OK
}

extern "C" fn irq_enable() -> i32 {
    let _k = kernel_view();
    let (_, d) = current();
    if d.tracker.iter().any(|o| matches!(o, Object::Irq { .. })) {
        return status::OK;
    }
    let routed = match (msix::route(&d.device, d.vector), d.device.line) {
        (Ok(()), _) => Ok(()),
        (Err(_), Some(line)) => ioapic::route(line).map(|v| (d.vector, d.line) = (v, Some(line))),
        (Err(why), None) => Err(why),
    };
    if let Err(why) = routed {
        crate::kprintln!("{}: no interrupts: {why}", d.name);
        return status::UNSUPPORTED;
    }
    if d.tracker.add(Object::Irq { vector: d.vector }).is_err() {
        fail_current(format_args!("holds too many objects"));
    }
    status::OK
}

extern "C" fn complete(tag: u64, st: i32, len: usize) {
    let _k = kernel_view();
    let (_, d) = current();
    match d.tracker.take_lent(tag) {
        Some(Object::Lent { va, len: lent, .. }) if st != status::OK || len <= lent as usize => {
            d.domain.take_back(lent_kernel(), va)
        }
        _ => fail_current(format_args!("completed request {tag} it does not hold (or overran it)")),
    }
    driver::finish(tag, st, len);
}

extern "C" fn receive(va: usize, len: usize) {
    let _k = kernel_view();
    let (_, d) = current();
    let Some(frame) = readable(d, va, len) else {
        fail_current(format_args!("receive({va:#x}, {len}) outside its memory"));
    };
    super::packet::demux(frame);
}
