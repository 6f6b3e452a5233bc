//! The local APIC (xAPIC, memory-mapped through the physical window): the
//! periodic timer that preempts environments, its rate measured at boot
//! (`clock.rs`).

use super::cpu::{outb, rdmsr};

const APIC_BASE_MSR: u32 = 0x1B;
const SVR: u64 = 0xF0;
const EOI: u64 = 0xB0;
const LVT_TIMER: u64 = 0x320;
const INITIAL_COUNT: u64 = 0x380;
const CURRENT_COUNT: u64 = 0x390;
const DIVIDE: u64 = 0x3E0;

/// The timer's vector.
pub const TIMER_VECTOR: u8 = 32;
/// Spurious-interrupt vector.
pub const SPURIOUS_VECTOR: u8 = 255;
/// Length of a tick (a time slice) in nanoseconds (on the clock page).
pub const TICK_NS: u64 = 2_000_000;
/// The timer's rate after divide-by-16 when it cannot be measured: QEMU's
/// APIC clock runs at 1 GHz of virtual time.
pub const DEFAULT_HZ: u64 = 1_000_000_000 / 16;

fn reg(offset: u64) -> *mut u32 {
    let base = rdmsr(APIC_BASE_MSR) & 0xF_FFFF_F000;
    crate::mm::phys::<u32>(base + offset)
}

fn write(offset: u64, v: u32) {
    // SAFETY: a local APIC register, mapped uncached in the physical window.
    unsafe { core::ptr::write_volatile(reg(offset), v) }
}

/// Enables the APIC with its timer counting down from the top, masked and
/// one-shot, so that `clock::calibrate` can measure its rate.
pub fn init() {
    // The legacy PIC stays masked: every interrupt comes through the APIC.
    outb(0x21, 0xFF);
    outb(0xA1, 0xFF);
    write(SVR, 0x100 | SPURIOUS_VECTOR as u32);
    write(DIVIDE, 0x3);
    write(LVT_TIMER, (1 << 16) | TIMER_VECTOR as u32);
    write(INITIAL_COUNT, u32::MAX);
}

/// The timer's current count.
pub fn count() -> u32 {
    // SAFETY: as in `write`.
    unsafe { core::ptr::read_volatile(reg(CURRENT_COUNT)) }
}

/// Starts the periodic timer that preempts environments: one interrupt
/// per tick, for a timer counting `hz` per second.
pub fn start(hz: u64) {
    let period = (hz * TICK_NS / 1_000_000_000).clamp(1, u32::MAX as u64);
    write(LVT_TIMER, (1 << 17) | TIMER_VECTOR as u32);
    write(INITIAL_COUNT, period as u32);
}

pub fn eoi() {
    write(EOI, 0);
}
