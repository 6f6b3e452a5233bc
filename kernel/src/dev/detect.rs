//! Failure detection (paper 004 §3.5: "software checks, processor
//! exceptions, or explicit external signals"; issue 28): deciding that
//! the driver a crossing is in has failed, and stopping it.
//!
//! - **Exceptions.** Any processor exception during a crossing is the
//!   driver's, wherever its `rip` points and whatever it did to its stack
//!   (the crossing's traps arrive on a stack of their own, `arch::idt`) —
//!   except one in kernel code running for the driver (a wrapper), which
//!   is the kernel's own bug, unless the driver's stack ran out under it.
//! - **Livelock**: the timer's and the NMI's watchdogs.
//! - **Deadline**: a request the driver took and never ended.
//! - **What the driver reports**: facts about its device that cannot be
//!   true, refusals of requests the kernel has already checked, statuses
//!   that do not exist (the wrappers check completions and frames).
//!
//! Stopping is in two steps: the code that finds the failure — a trap
//! handler or a wrapper, perhaps holding the drivers' loan or on a stack
//! the driver spoilt — notes why and leaves the crossing at once
//! (`stop`); the crossing, back on the kernel's stack with nothing
//! borrowed, disables the driver (`driver::cross`). The recovery of the
//! next phase replaces that last step.
//!
//! This file gives verdicts only; the driver layer (`driver.rs`) acts on
//! them — disables the driver, walks its requests — so that detection
//! sits below the drivers rather than in a cycle with them.

use super::{xpc, Global};
use core::fmt::Write;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use drvapi::{op, status, Facts};

/// Why the driver was stopped, as a console line.
struct Why {
    text: [u8; 160],
    len: usize,
}

impl Write for Why {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        // Whole characters only, so that `text` stays UTF-8.
        let n = s.char_indices().map(|(i, c)| i + c.len_utf8()).take_while(|&e| e <= 160 - self.len).last();
        let n = n.unwrap_or(0);
        self.text[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

static WHY: Global<Why> = Global::new(Why { text: [0; 160], len: 0 });
/// `stop` left the crossing (looked at after every crossing: one load).
static STOPPED: AtomicBool = AtomicBool::new(false);

/// Whether the crossing just left was left by `stop` or by a wrapper's
/// stack check; forgotten. If so, the reason is free again: a stop that
/// interrupted another (an NMI in the timer watchdog's) abandoned it.
pub fn stopped() -> bool {
    let stopped = STOPPED.swap(false, Relaxed) | xpc::bad_rsp().is_some();
    if stopped {
        WHY.release_abandoned();
    }
    stopped
}

/// Prints why driver `name` was stopped (after `stopped`).
pub fn report(name: &str) {
    match xpc::take_bad_rsp() {
        Some(rsp) => {
            crate::kprintln!(
                "driver {name}: called the kernel with its stack pointer at {rsp:#x}, not in its stack"
            )
        }
        None => WHY.with(|w| {
            crate::kprintln!(
                "driver {name}: {}",
                core::str::from_utf8(&w.text[..w.len]).unwrap_or("(garbled)")
            )
        }),
    }
}

/// Notes why the driver the crossing is in failed and leaves the
/// crossing, which then disables it. Must run in the kernel's page table
/// (a trap handler's or a wrapper's view), inside a crossing.
fn stop(why: core::fmt::Arguments) -> ! {
    WHY.try_with(|w| {
        w.len = 0;
        let _ = w.write_fmt(why);
    });
    STOPPED.store(true, Relaxed);
    // SAFETY: inside the crossing (the callers check); the frames left are
    // the driver's and this handler's or wrapper's, and the crossing
    // releases whatever they had borrowed.
    unsafe { xpc::abort(status::IO_ERROR as i64) }
}

/// Disables the current driver and leaves the crossing (a wrapper check
/// failed, or the driver gave up). Called outside any loan.
pub fn fail_current(why: core::fmt::Arguments) -> ! {
    let _kernel = xpc::KernelView::enter(true);
    stop(why)
}

/// Whether code interrupted with its stack pointer at `rsp` is the
/// kernel's own, running for the driver: a wrapper, or a trap handler
/// (on the crossing's trap stack).
fn kernel_running(rsp: u64) -> bool {
    let (lo, hi) = crate::arch::gdt::trap_stacks()[1];
    xpc::in_wrapper() || (lo..hi).contains(&rsp)
}

/// A processor exception in the kernel (in the kernel's page table, the
/// trap handler's first act), taken at `rip` with the stack at `rsp`: if
/// it is the driver's (see the module's comment), the driver is stopped
/// and this does not return; otherwise `false`.
pub fn fault(vector: u64, rip: u64, rsp: u64) -> bool {
    if !xpc::under_way() {
        return false;
    }
    let addr = if vector == 14 { crate::arch::cpu::cr2() } else { 0 };
    let (low, _) = xpc::stack();
    let overflow = vector == 8 || vector == 14 && (low.saturating_sub(4096)..low).contains(&addr);
    if kernel_running(rsp) && !overflow {
        return false;
    }
    match vector {
        14 if overflow => stop(format_args!(
            "page fault at address {addr:#x} (rip {rip:#x}): its stack overflowed into its guard page"
        )),
        14 => stop(format_args!("page fault at address {addr:#x} (rip {rip:#x}): outside its domain")),
        8 => stop(format_args!("double fault at rip {rip:#x}")),
        v => stop(format_args!("{} at rip {rip:#x}", abi::exception::vector::name(v))),
    }
}

/// How many timer ticks a crossing may last before the watchdog calls it
/// a livelock (100 ms; a crossing normally lasts microseconds).
pub const BUDGET_TICKS: u64 = 100_000_000 / crate::arch::apic::TICK_NS;
/// A flush's budget: the host may take seconds to make its image
/// durable (30 s).
pub const FLUSH_BUDGET_TICKS: u64 = 30_000_000_000 / crate::arch::apic::TICK_NS;
/// A driver's init's budget (2 s): it resets its device and waits for it
/// (and, emulated on a busy host, each register access is slow).
pub const INIT_BUDGET_TICKS: u64 = 2_000_000_000 / crate::arch::apic::TICK_NS;
/// The budget of the crossing under way.
static BUDGET: AtomicU64 = AtomicU64::new(BUDGET_TICKS);

/// The next crossing's budget (timer ticks).
pub fn set_budget(ticks: u64) {
    BUDGET.store(ticks, Relaxed);
}

/// The budget, and what it is in milliseconds.
fn budget() -> (u64, u64) {
    let b = BUDGET.load(Relaxed);
    (b, b * crate::arch::apic::TICK_NS / 1_000_000)
}

/// A timer tick (paper 004 §3.3, the livelock watchdog): a crossing that
/// has lasted longer than its budget — a driver looping in a call or in
/// its interrupt handler — is stopped as if it had faulted.
pub fn watchdog() {
    let (budget, ms) = budget();
    if xpc::under_way() && xpc::age(1) > budget {
        stop(format_args!("livelock: still running after {ms} ms; stopped by the watchdog"));
    }
}

/// An NMI (the NMI watchdog, `nmi.rs`) that interrupted code at `rip`
/// with its stack at `rsp`: with interrupts off it stands for its period
/// of the crossing's age; past the budget, a driver caught in its own
/// code (not the kernel's running for it, a wrapper or a trap handler,
/// which may hold the kernel's state or be stopping the driver already)
/// is stopped as by the timer's watchdog. With interrupts on it adds
/// nothing: the timer's ticks reach the crossing and count its age, one
/// a tick taken. Counted as well, each NMI of a QEMU thread that a busy
/// host left waiting added 50 ms to a crossing of microseconds (the
/// pending NMI and tick are taken when it runs again): two such waits
/// and a tick stopped a sound driver in its `submit`.
pub fn nmi_watchdog(rip: u64, rsp: u64, interrupts_on: bool) {
    let (budget, ms) = budget();
    let ticks = if interrupts_on { 0 } else { super::nmi::TICKS_PER_NMI };
    if xpc::under_way() && xpc::age(ticks) > budget && !kernel_running(rsp) {
        stop(format_args!(
            "livelock with interrupts off: still running after {ms} ms at rip {rip:#x}; stopped by the NMI watchdog"
        ));
    }
}

/// How long a driver may hold a request (timer ticks; 1 s, where a disk
/// or network request takes well under a millisecond). 0: no deadline
/// (`deadline=off` on the command line: the benchmarks, whose clock
/// races ahead through halts under `-icount sleep=off`).
static DEADLINE: AtomicU64 = AtomicU64::new(1_000_000_000 / crate::arch::apic::TICK_NS);
/// The timer ticks counted so far (`Hooks::clock`).
static NOW: AtomicU64 = AtomicU64::new(0);
/// The next tick at which requests are looked at: every half deadline
/// (a request is failed 1 to 1.5 s after it was submitted; looking costs
/// a walk of every pending request, which a tick should not pay).
static NEXT_LOOK: AtomicU64 = AtomicU64::new(0);

/// No deadline for requests (`deadline=off`).
pub fn no_deadline() {
    DEADLINE.store(0, Relaxed);
}

/// The timer ticks counted so far.
pub fn now() -> u64 {
    NOW.load(Relaxed)
}

/// Timer ticks were counted, `now` in all, by the holder of the kernel
/// state (not in a crossing): the deadline (timer ticks) when it is time
/// to look for requests held past it (`driver::fail_overdue`: a driver
/// holding one — alive but useless — is declared failed and stopped).
#[inline(always)]
pub fn clock(now: u64) -> Option<u64> {
    NOW.store(now, Relaxed);
    if now >= NEXT_LOOK.load(Relaxed) {
        look(now)
    } else {
        None
    }
}

#[inline(never)]
fn look(now: u64) -> Option<u64> {
    let limit = DEADLINE.load(Relaxed);
    if limit == 0 {
        NEXT_LOOK.store(u64::MAX, Relaxed);
        return None;
    }
    NEXT_LOOK.store(now + limit / 2, Relaxed);
    Some(limit)
}

/// Facts driver `name` reported about its device `device` that cannot be
/// true, if any (checked after its init): impossible ones, or a disk
/// size other than the one the device states itself (`virtio`).
pub fn implausible(name: &str, f: &Facts, device: &super::pci::Device) -> Option<&'static str> {
    if !(1..=super::domain::LENT_SLOTS as u32).contains(&f.queue_depth) {
        return Some("a queue depth it cannot have");
    }
    match name {
        "virtio-blk" if f.capacity == 0 || f.capacity > 1 << 48 => Some("a disk capacity that cannot be"),
        "virtio-blk" if !(1..=drvapi::MAX_PAGES as u32).contains(&f.max_pages) => {
            Some("a bound on a request's pages it cannot have")
        }
        "virtio-blk" if super::virtio::blk_capacity(device).is_some_and(|c| c != f.capacity) => {
            Some("a disk capacity other than the one its device states")
        }
        "virtio-net" if f.mac == [0; 6] || f.mac[0] & 1 != 0 => Some("a MAC address that is not a station's"),
        _ => None,
    }
}

/// A driver whose facts are `f`, holding `held` other requests, refused
/// a request of kind `kind` with `st` at submit: the lie it told, if the
/// refusal cannot be honest — a status that does not exist, a request
/// the kernel had checked called invalid or (but for a flush on a device
/// without a cache) unsupported, or a full queue with slots to spare (a
/// flush runs alone) (`driver::refused` then disables it).
pub fn dishonest(kind: u32, st: i32, f: &Facts, held: usize) -> Option<&'static str> {
    let checked = matches!(kind, op::READ | op::WRITE | op::TRANSMIT | op::FLUSH);
    let (room, unsupported) = match kind {
        op::FLUSH => (held == 0, f.flush == 0),
        _ => (held < f.queue_depth as usize, false),
    };
    let lie = match st {
        status::INVALID if checked => "a request the kernel had checked is invalid",
        status::UNSUPPORTED if checked && !unsupported => "a request it serves is unsupported",
        status::NO_SPACE if checked && room => "its queue full with slots to spare",
        status::INVALID | status::UNSUPPORTED | status::NO_SPACE | status::IO_ERROR => return None,
        _ => "a status that does not exist",
    };
    Some(lie)
}

/// What a driver is told when an I/O error it reported is not believed
/// before a fresh copy of it repeats it (`pending::Table::ask_again`).
pub const DOUBTED: &str = "an I/O error, not believed until a fresh copy of the driver repeats it";

/// What is wrong with `st` as the status a driver ends a request it took
/// with, if anything: having taken it, it can no longer call it invalid,
/// unsupported or beyond its queue; it succeeded or the device failed.
pub fn bad_ending(st: i32) -> Option<&'static str> {
    match st {
        status::OK | status::IO_ERROR => None,
        status::INVALID | status::NO_SPACE | status::UNSUPPORTED => Some("a refusal, for a request it took"),
        _ => Some("a status that does not exist"),
    }
}
