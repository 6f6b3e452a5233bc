//! The local APIC in x2APIC mode (MSR access, no MMIO mapping needed): the
//! periodic timer that preempts environments.

use super::cpu::{outb, rdmsr, wrmsr};

const APIC_BASE: u32 = 0x1B;
const SVR: u32 = 0x80F;
const EOI: u32 = 0x80B;
const LVT_TIMER: u32 = 0x832;
const INITIAL_COUNT: u32 = 0x838;
const DIVIDE: u32 = 0x83E;

/// The timer's vector.
pub const TIMER_VECTOR: u8 = 32;
/// Spurious-interrupt vector.
pub const SPURIOUS_VECTOR: u8 = 255;
/// Timer period in APIC ticks after divide-by-16 (QEMU's APIC clock runs at
/// 1 GHz of virtual time: 125,000 ticks = 2 ms).
const PERIOD: u64 = 125_000;

pub fn init() {
    let (_, _, ecx, _) = cpuid(1);
    assert!(ecx & (1 << 21) != 0, "Veneer needs an x2APIC (QEMU -cpu max has one)");
    // The legacy PIC stays masked: every interrupt comes through the APIC.
    outb(0x21, 0xFF);
    outb(0xA1, 0xFF);
    // SAFETY: enabling x2APIC mode and programming the timer touches only
    // this CPU's local APIC registers.
    unsafe {
        wrmsr(APIC_BASE, rdmsr(APIC_BASE) | (1 << 11) | (1 << 10));
        wrmsr(SVR, 0x100 | SPURIOUS_VECTOR as u64);
        wrmsr(DIVIDE, 0x3);
        wrmsr(LVT_TIMER, (1 << 17) | TIMER_VECTOR as u64);
        wrmsr(INITIAL_COUNT, PERIOD);
    }
}

pub fn eoi() {
    // SAFETY: writing 0 to EOI acknowledges the interrupt being serviced.
    unsafe { wrmsr(EOI, 0) }
}

pub fn cpuid(leaf: u32) -> (u32, u32, u32, u32) {
    let r = core::arch::x86_64::__cpuid(leaf);
    (r.eax, r.ebx, r.ecx, r.edx)
}
