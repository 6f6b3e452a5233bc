//! The NMI watchdog (paper 004 §3.3, for what the timer cannot reach): a
//! driver runs in ring 0 and may turn interrupts off (`cli`) and loop; the
//! local APIC's timer then never reaches it. The PIT's channel 0 ticks at
//! 20 Hz into I/O APIC pin 2 (ISA IRQ 0 on QEMU's PC and q35), set to
//! deliver an NMI — but only during a crossing: the pin is unmasked when a
//! crossing starts and masked when it ends (an NMI in user mode would land
//! on the double-fault stack, not in the environment's frame; masked, the
//! I/O APIC drops the PIT's edges). Each NMI that finds interrupts off
//! inside a crossing counts as 50 ms of the crossing's age on the livelock
//! watchdog's clock (`xpc::age`; with interrupts on, the timer's ticks
//! count it); past the budget, a driver caught running its own code is
//! stopped as the timer's watchdog stops it.

use crate::arch::cpu::outb;
use core::sync::atomic::{AtomicBool, Ordering::Relaxed};

const PIT_HZ: u64 = 1_193_182;
const PIT_COMMAND: u16 = 0x43;
const PIT_CH0: u16 = 0x40;
/// Channel 0, low then high byte, mode 2 (a pulse every period).
const CH0_RATE: u8 = 0b0011_0100;
const HZ: u64 = 20;
/// I/O APIC pin of ISA IRQ 0 (QEMU's interrupt source override).
const PIN: u8 = 2;
/// Timer ticks one NMI stands for (its period).
pub const TICKS_PER_NMI: u64 = 1_000_000_000 / HZ / crate::arch::apic::TICK_NS;

/// Whether the watchdog is running (the I/O APIC has the pin).
static READY: AtomicBool = AtomicBool::new(false);

/// Starts the PIT and leaves the pin masked: a console line says whether.
pub fn init() {
    let divisor = (PIT_HZ / HZ) as u16;
    outb(PIT_COMMAND, CH0_RATE);
    outb(PIT_CH0, divisor as u8);
    outb(PIT_CH0, (divisor >> 8) as u8);
    let ok = super::ioapic::nmi_route(PIN);
    READY.store(ok, Relaxed);
    if !ok {
        crate::kprintln!(
            "dev: no I/O APIC pin for the NMI watchdog: a driver looping with interrupts off hangs"
        );
    }
}

/// Lets the PIT's NMIs in (a crossing starts) or keeps them out (it ended).
pub fn arm(on: bool) {
    if READY.load(Relaxed) {
        super::ioapic::nmi_gate(PIN, on);
    }
}
