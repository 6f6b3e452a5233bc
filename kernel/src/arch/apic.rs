//! The local APIC (xAPIC, memory-mapped through the physical window): the
//! periodic timer that preempts environments.

use super::cpu::{outb, rdmsr};

const APIC_BASE_MSR: u32 = 0x1B;
const SVR: u64 = 0xF0;
const EOI: u64 = 0xB0;
const LVT_TIMER: u64 = 0x320;
const INITIAL_COUNT: u64 = 0x380;
const DIVIDE: u64 = 0x3E0;

/// The timer's vector.
pub const TIMER_VECTOR: u8 = 32;
/// Spurious-interrupt vector.
pub const SPURIOUS_VECTOR: u8 = 255;
/// Timer period in APIC ticks after divide-by-16 (QEMU's APIC clock runs at
/// 1 GHz of virtual time: 125,000 ticks = 2 ms): the length of a slice.
const PERIOD: u32 = 125_000;
/// Nanoseconds of guest time per tick (exposed on the clock page).
pub const TICK_NS: u64 = PERIOD as u64 * 16;

fn reg(offset: u64) -> *mut u32 {
    let base = rdmsr(APIC_BASE_MSR) & 0xF_FFFF_F000;
    crate::mm::phys::<u32>(base + offset)
}

fn write(offset: u64, v: u32) {
    // SAFETY: a local APIC register, mapped uncached in the physical window.
    unsafe { core::ptr::write_volatile(reg(offset), v) }
}

pub fn init() {
    // The legacy PIC stays masked: every interrupt comes through the APIC.
    outb(0x21, 0xFF);
    outb(0xA1, 0xFF);
    write(SVR, 0x100 | SPURIOUS_VECTOR as u32);
    write(DIVIDE, 0x3);
    write(LVT_TIMER, (1 << 17) | TIMER_VECTOR as u32);
    write(INITIAL_COUNT, PERIOD);
}

pub fn eoi() {
    write(EOI, 0);
}
