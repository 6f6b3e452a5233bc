//! Device self-tests, chosen with `devtest=NAME` on the kernel command
//! line and run once the drivers are up (the boot tests of
//! `xtask/src/boottest.rs`): they drive the block and packet interfaces
//! under interrupts and print what they saw. A failure powers off with the
//! failure code.

use super::driver::Span;
use super::{block, driver, packet, Global};
use crate::state::Kernel;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use drvapi::{disk_pattern_byte, op, status, Request};

/// Sectors the write test writes and the second boot reads back.
const PERSIST_SECTOR: u64 = 100;
const PERSIST_TEXT: &[u8] = b"written by veneer before a reboot";

/// Requests that ended and were not waited for yet: (tag, status).
static ENDED: Global<[Option<(u64, i32)>; 32]> = Global::new([None; 32]);
/// The first request that ended with an I/O error.
static FAILED: AtomicU64 = AtomicU64::new(0);

pub(super) fn done(tag: u64, st: i32, _len: usize) {
    let noted = ENDED.with(|e| e.iter_mut().find(|e| e.is_none()).map(|free| *free = Some((tag, st))));
    if noted.is_none() {
        fail(format_args!("more than 32 requests ended unwaited"));
    }
    if st == status::IO_ERROR {
        let _ = FAILED.compare_exchange(0, tag, Relaxed, Relaxed);
    }
}

pub(super) fn fail(why: core::fmt::Arguments) -> ! {
    crate::kprintln!("devtest FAILED: {why}");
    crate::arch::cpu::qemu_exit(crate::EXIT_FAILURE)
}

/// Halts with interrupts on (not polling the device) until `ready`, for
/// at most 5 s.
/// How many timer ticks `wait_for` waits (5 s). Under `-icount` with
/// `sleep=off` (the benchmarks) an idle CPU's virtual time jumps from tick
/// to tick at host speed while the host does the device's work, so the
/// benchmarks allow many more.
pub(super) static WAIT_TICKS: AtomicU64 = AtomicU64::new(2500);

pub(super) fn wait_for(k: &mut Kernel, mut ready: impl FnMut() -> bool, what: core::fmt::Arguments) {
    let start = k.kinfo.ticks;
    // Since when the CPU has been idle: a wait the timer ended goes on
    // until the next halt, and everything between (the tick's accounting,
    // the checks) is the wait's, not the operation's.
    let mut idle_since = None;
    while !ready() {
        let most = WAIT_TICKS.load(Relaxed);
        if k.kinfo.ticks - start > most {
            fail(format_args!("{what} within {most} timer ticks"));
        }
        // A device that interrupted while a driver ran (drivers run with
        // interrupts on) is served now, as work.
        if super::pending() {
            end_idle(&mut idle_since);
            super::service(k);
            continue;
        }
        let t0 = idle_since.take().unwrap_or_else(super::rdtsc);
        // Halts until an interrupt; the drivers of any device that
        // interrupted run before this returns.
        k.idle();
        // Idle from t0 until a device's interrupt arrived; woken by the
        // timer, still idle.
        let woke = super::WOKE.load(Relaxed);
        if woke > t0 {
            HALTED.fetch_add(woke - t0, Relaxed);
        } else {
            idle_since = Some(t0);
        }
    }
    end_idle(&mut idle_since);
}

fn end_idle(since: &mut Option<u64>) {
    if let Some(t0) = since.take() {
        HALTED.fetch_add(super::rdtsc() - t0, Relaxed);
    }
}

/// TSC ticks spent halted in `wait_for` (for the benchmarks, which leave
/// the device's own time out).
pub(super) static HALTED: AtomicU64 = AtomicU64::new(0);

/// Waits until request `tag` completes; its status.
pub(super) fn wait(k: &mut Kernel, tag: u64) -> i32 {
    let take =
        || ENDED.with(|e| e.iter_mut().find(|e| e.is_some_and(|(t, _)| t == tag)).and_then(Option::take));
    let mut ended = None;
    wait_for(
        k,
        || {
            ended = ended.or_else(take);
            ended.is_some()
        },
        format_args!("request {tag} did not complete"),
    );
    ended.expect("waited for").1
}

/// A kernel frame for the tests' buffers.
pub(super) fn frame(k: &mut Kernel) -> u64 {
    let f = k.frames.alloc(None, 0, abi::tables::frame_state::KERNEL);
    f.unwrap_or_else(|_| fail(format_args!("no frame"))).number()
}

pub(super) fn bytes(f: u64) -> &'static mut [u8; 4096] {
    // SAFETY: a kernel frame of the tests', in the physical window, not
    // lent to a driver while this reference is used.
    unsafe { &mut *crate::mm::phys::<[u8; 4096]>(f << 12) }
}

fn transfer(k: &mut Kernel, write: bool, f: u64, sector: u64) {
    let tag = block::submit(k, write, 0, Span { frame: f, offset: 0, len: 4096 }, sector, done)
        .unwrap_or_else(|e| fail(format_args!("block request refused: {e:?}")));
    let st = wait(k, tag);
    if st != status::OK {
        fail(format_args!("block request {tag} ended with status {st}"));
    }
}

fn check_pattern(k: &mut Kernel) {
    let f = frame(k);
    let sector = block::capacity() / 2;
    transfer(k, false, f, sector);
    let b = bytes(f);
    for (i, &got) in b.iter().enumerate() {
        let (s, o) = (sector + (i / 512) as u64, i % 512);
        if got != disk_pattern_byte(s, o) {
            fail(format_args!("sector {s} byte {o}: {got:#x}, want {:#x}", disk_pattern_byte(s, o)));
        }
    }
    crate::kprintln!(
        "devtest blk-pattern: read 8 sectors at {sector} under interrupts: the pattern xtask wrote"
    );
    // Refusals leave the disk and the frame alone.
    let past =
        block::submit(k, false, 0, Span { frame: f, offset: 0, len: 4096 }, block::capacity() - 1, done);
    let not_mine = block::submit(k, false, 7, Span { frame: f, offset: 0, len: 512 }, 0, done);
    if past != Err(block::BlockError::PastEnd) || not_mine != Err(block::BlockError::NotOwner) {
        fail(format_args!("bad requests not refused: {past:?} {not_mine:?}"));
    }
    crate::kprintln!("devtest blk-pattern: a read past the end and a frame not the caller's are refused");
}

fn write_marker(k: &mut Kernel) {
    let f = frame(k);
    let b = bytes(f);
    for (i, chunk) in b.chunks_mut(512).enumerate() {
        chunk[..PERSIST_TEXT.len()].copy_from_slice(PERSIST_TEXT);
        chunk[PERSIST_TEXT.len()] = i as u8;
    }
    transfer(k, true, f, PERSIST_SECTOR);
    crate::kprintln!("devtest blk-write: wrote 8 sectors at {PERSIST_SECTOR}");
}

fn read_marker(k: &mut Kernel) {
    let f = frame(k);
    transfer(k, false, f, PERSIST_SECTOR);
    for (i, chunk) in bytes(f).chunks(512).enumerate() {
        if &chunk[..PERSIST_TEXT.len()] != PERSIST_TEXT || chunk[PERSIST_TEXT.len()] != i as u8 {
            fail(format_args!(
                "sector {} does not hold what the first boot wrote",
                PERSIST_SECTOR + i as u64
            ));
        }
    }
    crate::kprintln!("devtest blk-readback: the 8 sectors the previous boot wrote are on the disk");
}

pub(super) const GATEWAY: [u8; 4] = [10, 0, 2, 2];
const OUR_IP: [u8; 4] = [10, 0, 2, 15];
pub(super) const ARP_LEN: usize = 42;

/// Builds, by hand, an ARP request for QEMU's gateway in frame `f`.
pub(super) fn arp_request(f: u64) {
    let mac = packet::mac().unwrap_or_else(|| fail(format_args!("no network device")));
    let p = &mut bytes(f)[..ARP_LEN];
    p[0..6].copy_from_slice(&[0xFF; 6]);
    p[6..12].copy_from_slice(&mac);
    p[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    p[14..22].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    p[22..28].copy_from_slice(&mac);
    p[28..32].copy_from_slice(&OUR_IP);
    p[32..38].fill(0);
    p[38..42].copy_from_slice(&GATEWAY);
}

fn arp(k: &mut Kernel) {
    let f = frame(k);
    arp_request(f);
    let tag = packet::transmit(k, 0, Span { frame: f, offset: 0, len: ARP_LEN }, done)
        .unwrap_or_else(|e| fail(format_args!("transmit refused: {e:?}")));
    if wait(k, tag) != status::OK {
        fail(format_args!("transmit failed"));
    }
    wait_for(
        k,
        || packet::seen().arp_reply.is_some_and(|(ip, _)| ip == GATEWAY),
        format_args!("no ARP reply from 10.0.2.2"),
    );
    let (_, m) = packet::seen().arp_reply.expect("checked");
    crate::kprintln!(
        "devtest arp: 10.0.2.2 is at {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x} (answered through the virtio-net driver)",
        m[0], m[1], m[2], m[3], m[4], m[5]
    );
}

/// Kernel memory the injected wild write aims at.
static CANARY: AtomicU64 = AtomicU64::new(0x5AFE);

/// Fault injection: the block driver, with a read in flight, writes into
/// kernel memory. Isolated, the write faults in its domain: the driver is
/// disabled, the read fails with an I/O error, the kernel memory is
/// untouched and the kernel runs on.
fn wild_write(k: &mut Kernel) {
    let f = frame(k);
    let read = block::submit(k, false, 0, Span { frame: f, offset: 0, len: 4096 }, 0, done)
        .unwrap_or_else(|e| fail(format_args!("block request refused: {e:?}")));
    let i = driver::find("virtio-blk").unwrap_or_else(|| fail(format_args!("no block driver")));
    let target = CANARY.as_ptr() as u64;
    let r = Request { op: op::INJECT_WILD_WRITE, tag: 0, sector: target, va: 0, len: 0 };
    let injected = driver::submit(k, i, r, f << 12, done);
    let canary = CANARY.load(Relaxed);
    if canary != 0x5AFE {
        fail(format_args!("the driver wrote kernel memory at {target:#x}: now {canary:#x}"));
    }
    if injected != Err(status::IO_ERROR) || FAILED.load(Relaxed) != read {
        fail(format_args!("the driver was not stopped ({injected:?}) or its pending read did not fail"));
    }
    if block::submit(k, false, 0, Span { frame: f, offset: 0, len: 512 }, 0, done)
        != Err(block::BlockError::NoDevice)
    {
        fail(format_args!("the disabled driver still takes requests"));
    }
    crate::kprintln!(
        "devtest wild: the write to {target:#x} was stopped; its pending read failed with an I/O error; the kernel runs on"
    );
}

/// Fault injection beyond Nooks: the block driver reads sector 0 but gives
/// its device the address of a page it does not hold — one it was lent
/// for an earlier read and gave back, so a translation the IOMMU kept
/// cached would let the write through. Under the IOMMU the device's write
/// is blocked and reported, the driver disabled, its read failed, and the
/// page unchanged; without one the write lands.
fn wild_dma(k: &mut Kernel) {
    let (lent, target) = (frame(k), frame(k));
    transfer(k, false, target, 0);
    bytes(target).fill(0x5A);
    let i = driver::find("virtio-blk").unwrap_or_else(|| fail(format_args!("no block driver")));
    let r = Request { op: op::INJECT_WILD_DMA, tag: 0, sector: target << 12, va: 0, len: 512 };
    let tag = driver::submit(k, i, r, lent << 12, done)
        .unwrap_or_else(|e| fail(format_args!("the block driver did not take the injection: {e}")));
    let st = wait(k, tag);
    if let Some(o) = bytes(target).iter().position(|&b| b != 0x5A) {
        fail(format_args!("the device wrote the page at {:#x} it was not lent (byte {o})", target << 12));
    }
    if st != status::IO_ERROR || driver::find("virtio-blk").is_some() {
        fail(format_args!("the driver whose device DMAed astray was not stopped (status {st})"));
    }
    crate::kprintln!(
        "devtest wild-dma: the device's write to {:#x} was blocked; the page is unchanged; its read failed",
        target << 12
    );
}

/// Fault injection: the block driver, with a read in flight, calls a
/// function at an address where nothing is mapped. The fault's `rip` is
/// outside both the driver and the kernel: it is still the driver's.
fn wild_call(k: &mut Kernel) {
    let r = Request { op: op::INJECT_WILD_CALL, tag: 0, sector: 0x1000, va: 0, len: 0 };
    if !stopped_with_read_in_flight(k, r) {
        fail(format_args!("the driver's wild call was not stopped"));
    }
    crate::kprintln!(
        "devtest wild-call: the block driver's jump to 0x1000 was stopped; its pending read failed"
    );
}

/// Fault injection: the block driver, with a read in flight, calls an
/// address in the gigabyte below the driver regions where nothing is
/// mapped (a flipped bit in a call's target): the driver is stopped, not
/// the kernel.
fn wild_call_high(k: &mut Kernel) {
    let r = Request { op: op::INJECT_WILD_CALL, tag: 0, sector: UNMAPPED_HIGH, va: 0, len: 0 };
    if !stopped_with_read_in_flight(k, r) {
        fail(format_args!("the driver's call to {UNMAPPED_HIGH:#x} was not stopped"));
    }
    crate::kprintln!("devtest wild-call-high: the block driver's call to {UNMAPPED_HIGH:#x} was stopped");
}

/// Submits a read to the block driver, then the injection `r`: whether
/// the injection ended in an I/O error, the read failed with one, and the
/// driver is gone.
fn stopped_with_read_in_flight(k: &mut Kernel, r: Request) -> bool {
    let f = frame(k);
    let read = block::submit(k, false, 0, Span { frame: f, offset: 0, len: 4096 }, 0, done)
        .unwrap_or_else(|e| fail(format_args!("block request refused: {e:?}")));
    let i = driver::find("virtio-blk").unwrap_or_else(|| fail(format_args!("no block driver")));
    let injected = driver::submit(k, i, r, f << 12, done);
    injected == Err(status::IO_ERROR) && FAILED.load(Relaxed) == read && driver::find("virtio-blk").is_none()
}

/// Unmapped, between the kernel's image and the first driver region.
const UNMAPPED_HIGH: u64 = 0xFFFF_FFFF_B000_0000;

/// Fault injection: the block driver, with a read in flight, points its
/// stack pointer at its device's registers (its "register window") and
/// then takes an interrupt (`call` false) or calls the kernel (`call`
/// true). The trap's frame must not land there, nor a wrapper run there.
fn bad_stack(k: &mut Kernel, call: bool) {
    let i = driver::find("virtio-blk").unwrap_or_else(|| fail(format_args!("no block driver")));
    let window = driver::with(|ds| {
        ds.get(i).tracker.iter().find_map(|o| match o {
            super::tracker::Object::Mmio { va, .. } => Some(va & !4095),
            _ => None,
        })
    });
    let window = window.unwrap_or_else(|| fail(format_args!("the block driver maps no registers")));
    // The top of the window's first page: what is pushed lands in registers.
    let rsp = window + 0xFF8;
    let r = Request { op: op::INJECT_BAD_STACK, tag: 0, sector: rsp, va: 0, len: call as usize };
    if !stopped_with_read_in_flight(k, r) {
        fail(format_args!("the driver running on its registers was not stopped"));
    }
    let how = if call { "called the kernel" } else { "took an interrupt" };
    crate::kprintln!("devtest bad-stack: the block driver {how} with its stack at {rsp:#x} and was stopped");
}

/// Fault injection: the block driver takes a request and never ends it
/// (alive but useless). The deadline fails the request and the driver.
fn deadline(k: &mut Kernel) {
    let i = driver::find("virtio-blk").unwrap_or_else(|| fail(format_args!("no block driver")));
    let f = frame(k);
    let r = Request { op: op::INJECT_LIE, tag: 0, sector: op::LIE_DROP, va: 0, len: 0 };
    let tag = driver::submit(k, i, r, f << 12, done)
        .unwrap_or_else(|e| fail(format_args!("the block driver did not take the request: {e}")));
    if wait(k, tag) != status::IO_ERROR || driver::find("virtio-blk").is_some() {
        fail(format_args!("the request the driver dropped did not fail it"));
    }
    crate::kprintln!("devtest deadline: the request the block driver never ended failed it");
}

/// Fault injection: a driver lies about its work — the block driver
/// refuses every request as if its queue were full (`LIE_FULL`), the
/// network driver says a frame went out whole when it reports half its
/// bytes (`LIE_SHORT`). Each is declared failed at its first lie.
fn lie(k: &mut Kernel, name: &str, how: u64) {
    let i = driver::find(name).unwrap_or_else(|| fail(format_args!("no {name} driver")));
    let f = frame(k);
    let r = Request { op: op::INJECT_LIE, tag: 0, sector: how, va: 0, len: 0 };
    if driver::submit(k, i, r, f << 12, done).is_err() {
        fail(format_args!("{name} did not take the injection"));
    }
    let failed = if how == op::LIE_FULL {
        let read = block::submit(k, false, 0, Span { frame: f, offset: 0, len: 4096 }, 0, done);
        read == Err(block::BlockError::Driver(status::IO_ERROR))
    } else {
        arp_request(f);
        let tag = packet::transmit(k, 0, Span { frame: f, offset: 0, len: ARP_LEN }, done)
            .unwrap_or_else(|e| fail(format_args!("transmit refused: {e:?}")));
        wait(k, tag) == status::IO_ERROR
    };
    if !failed || driver::find(name).is_some() {
        fail(format_args!("{name}'s lie went unnoticed"));
    }
    crate::kprintln!("devtest lie: {name}'s lie was caught; it was stopped");
}

/// Fault injection: the driver `name`, with a request in flight, runs an
/// instruction only ring 0 may (`how`: `sysret`, or `int 14`); the trap
/// that follows — from ring 3, or with a frame shifted by a word — stops
/// it, not the kernel.
fn privileged(k: &mut Kernel, name: &str, how: u64) {
    let i = driver::find(name).unwrap_or_else(|| fail(format_args!("no {name} driver")));
    let f = frame(k);
    let r = Request { op: op::INJECT_PRIVILEGED, tag: 0, sector: how, va: 0, len: 0 };
    if driver::submit(k, i, r, f << 12, done) != Err(status::IO_ERROR) || driver::find(name).is_some() {
        fail(format_args!("{name} was not stopped"));
    }
    let what = if how == op::PRIVILEGED_SYSRET { "sysret" } else { "int 14" };
    crate::kprintln!("devtest privileged: {name}'s {what} was stopped");
}

/// Fault injection: the network driver's stack overflows into its guard
/// page; the fault is delivered on the double-fault stack, the driver is
/// disabled and the kernel runs on.
fn stack_overflow(k: &mut Kernel) {
    let i = driver::find("virtio-net").unwrap_or_else(|| fail(format_args!("no network driver")));
    let f = frame(k);
    let r = Request { op: op::INJECT_STACK_OVERFLOW, tag: 0, sector: 0, va: 0, len: 0 };
    if driver::submit(k, i, r, f << 12, done) != Err(status::IO_ERROR) || packet::mac().is_some() {
        fail(format_args!("the driver whose stack overflowed was not stopped"));
    }
    crate::kprintln!("devtest overflow: the network driver's stack overflow was stopped; the kernel runs on");
}

/// Fault injection: the block driver, with a read in flight, loops for
/// ever inside its `submit` crossing. The watchdog stops it: the driver is
/// disabled, the call and the pending read fail with an I/O error.
fn livelock(k: &mut Kernel) {
    let r = Request { op: op::INJECT_LIVELOCK, tag: 0, sector: 0, va: 0, len: 0 };
    if !stopped_with_read_in_flight(k, r) {
        fail(format_args!("the looping driver was not stopped or its pending read did not fail"));
    }
    crate::kprintln!(
        "devtest livelock: the block driver looping in a call was stopped; its pending read failed"
    );
}

/// Fault injection: the block driver, with a read in flight, turns
/// interrupts off and loops: the timer's watchdog cannot reach it; the NMI
/// watchdog stops it as the timer's would.
fn cli_livelock(k: &mut Kernel) {
    let r = Request { op: op::INJECT_CLI_LIVELOCK, tag: 0, sector: 0, va: 0, len: 0 };
    if !stopped_with_read_in_flight(k, r) {
        fail(format_args!("the driver looping with interrupts off was not stopped"));
    }
    crate::kprintln!("devtest cli-livelock: the block driver looping with interrupts off was stopped; its pending read failed");
}

/// Fault injection: the network driver's next interrupt handler loops for
/// ever; the frame it was to complete fails with an I/O error.
fn irq_livelock(k: &mut Kernel) {
    let i = driver::find("virtio-net").unwrap_or_else(|| fail(format_args!("no network driver")));
    let f = frame(k);
    let r = Request { op: op::INJECT_IRQ_LIVELOCK, tag: 0, sector: 0, va: 0, len: 0 };
    // The driver keeps this request (and the page) until it is disabled.
    let armed = frame(k);
    if let Err(e) = driver::submit(k, i, r, armed << 12, done) {
        fail(format_args!("the network driver did not take the injection: {e}"));
    }
    arp_request(f);
    let tag = packet::transmit(k, 0, Span { frame: f, offset: 0, len: ARP_LEN }, done)
        .unwrap_or_else(|e| fail(format_args!("transmit refused: {e:?}")));
    if wait(k, tag) != status::IO_ERROR || packet::mac().is_some() {
        fail(format_args!("the driver looping in its interrupt handler was not stopped"));
    }
    crate::kprintln!("devtest irq-livelock: the network driver looping in its interrupt handler was stopped");
}

/// Runs the self-test `name`.
pub fn run(k: &mut Kernel, name: &str) {
    match name {
        "blk-pattern" => check_pattern(k),
        "blk-write" => write_marker(k),
        "blk-readback" => read_marker(k),
        "arp" => arp(k),
        "wild" => wild_write(k),
        "overflow" => stack_overflow(k),
        "livelock" => livelock(k),
        "cli-livelock" => cli_livelock(k),
        "wild-call" => wild_call(k),
        "wild-call-high" => wild_call_high(k),
        "bad-stack-irq" => bad_stack(k, false),
        "bad-stack-call" => bad_stack(k, true),
        "deadline" => deadline(k),
        "sysret" => privileged(k, "virtio-blk", op::PRIVILEGED_SYSRET),
        "int14" => privileged(k, "virtio-net", op::PRIVILEGED_INT14),
        "lie-full" => lie(k, "virtio-blk", op::LIE_FULL),
        "lie-short" => lie(k, "virtio-net", op::LIE_SHORT),
        "wild-dma" => wild_dma(k),
        "irq-livelock" => irq_livelock(k),
        other => fail(format_args!("no device self-test {other:?}")),
    }
}
