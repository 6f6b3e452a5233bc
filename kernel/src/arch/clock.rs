//! Measuring time at boot. The PIT's input clock (1,193,182 Hz) is fixed by
//! the platform, so the kernel counts how far the TSC and the local APIC
//! timer move while the PIT's channel 2 counts down a known interval. The
//! TSC's rate is not assumed: QEMU's TSC counts host cycles under plain TCG
//! (the host's rate, ~2.6 GHz here) and guest instructions under `-icount
//! shift=0` (1 GHz), while the PIT and the APIC timer follow QEMU's virtual
//! clock in both; real machines differ again.

use super::apic;
use super::cpu::{inb, outb};

const PIT_HZ: u64 = 1_193_182;
const PIT_COMMAND: u16 = 0x43;
const PIT_CH2: u16 = 0x42;
/// Port B: bit 0 gates channel 2, bit 1 drives the speaker from it.
const PORT_B: u16 = 0x61;
/// Channel 2, low then high byte, mode 0 (counts down through 0 and on).
const CH2_COUNT_DOWN: u8 = 0b1011_0000;
/// Latch channel 2's count for reading.
const CH2_LATCH: u8 = 0b1000_0000;
/// Port B: channel 2's output, which mode 0 raises when the count passes 0.
const OUT2: u8 = 1 << 5;
/// The measured interval: 30 ms of PIT counts (under the counter's 16 bits).
const WINDOW_COUNTS: u64 = PIT_HZ * 3 / 100;
/// Intervals measured; the median wins.
const TRIES: usize = 3;
/// Intervals pauses may spoil (`Window::Spoiled`) before giving up: on a
/// host that gave QEMU a tenth of a core, about two in three were.
const MAX_WRAPS: usize = 32;
/// Most PIT counts (~50 µs) between the two PIT readings that bracket a
/// sample: more means the CPU (QEMU's thread, under a loaded host) was
/// preempted inside it, and the sample is taken again.
const MAX_SPREAD: u16 = 60;
/// Samples of the PIT per interval before giving up on it (no PIT: keep
/// the defaults).
const MAX_POLLS: u64 = 10_000_000;

/// Counts per second of the TSC and of the APIC timer (after its divider).
#[derive(Clone, Copy, Debug)]
pub struct Rates {
    pub tsc_hz: u64,
    pub apic_hz: u64,
}

pub fn rdtsc() -> u64 {
    // SAFETY: RDTSC only reads the time-stamp counter.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Channel 2's count.
fn pit() -> u16 {
    outb(PIT_COMMAND, CH2_LATCH);
    let lo = inb(PIT_CH2);
    let hi = inb(PIT_CH2);
    u16::from_le_bytes([lo, hi])
}

/// The TSC and the APIC timer, and the PIT's count at that moment (the
/// middle of two readings just before and after; samples whose readings
/// lie too far apart are taken again).
fn sample() -> Option<(u64, u32, u16)> {
    for _ in 0..MAX_POLLS {
        let before = pit();
        let (tsc, apic) = (rdtsc(), apic::count());
        let spread = before.wrapping_sub(pit());
        if spread <= MAX_SPREAD {
            return Some((tsc, apic, before.wrapping_sub(spread / 2)));
        }
    }
    None
}

/// One interval's measure.
enum Window {
    /// TSC, APIC and PIT counts over about `WINDOW_COUNTS`.
    Counts(u64, u64, u64),
    /// QEMU's thread was paused long enough that the count may have gone
    /// round (16 bits, 55 ms): the PIT's difference could be short by
    /// 65,536 counts, and the rates came out 2.8 times too high. Measured
    /// again.
    Spoiled,
}

/// Measures one interval, or None if the PIT does not count.
fn one_window() -> Option<Window> {
    // Gate off (and the speaker), load the largest count, open the gate.
    let b = inb(PORT_B) & !0b11;
    outb(PORT_B, b);
    outb(PIT_COMMAND, CH2_COUNT_DOWN);
    outb(PIT_CH2, 0xff);
    outb(PIT_CH2, 0xff);
    outb(PORT_B, b | 1);
    // Start once the count is surely loaded and running.
    let (t0, a0, p0) = (0..MAX_POLLS).find_map(|_| sample().filter(|s| s.2 < 0xff00))?;
    let end =
        (0..MAX_POLLS).find_map(|_| sample().filter(|s| p0.wrapping_sub(s.2) as u64 >= WINDOW_COUNTS))?;
    // Started with room for the window before 0, the count reached 0
    // (its output went high) only if a pause delayed a sample.
    let passed_zero = inb(PORT_B) & OUT2 != 0;
    outb(PORT_B, b);
    if passed_zero || (p0 as u64) < WINDOW_COUNTS * 3 / 2 {
        return Some(Window::Spoiled);
    }
    // Both timers count down; the TSC counts up.
    Some(Window::Counts(end.0.wrapping_sub(t0), a0.wrapping_sub(end.1) as u64, p0.wrapping_sub(end.2) as u64))
}

/// Measures both rates; None if there is no working PIT. The APIC timer
/// must be counting down from `apic::init`.
pub fn calibrate() -> Option<Rates> {
    let mut w = [(0, 0, 0); TRIES];
    for x in w.iter_mut() {
        let mut tries = 0..MAX_WRAPS;
        *x = loop {
            // A host that pauses us through every window: the defaults.
            tries.next()?;
            if let Window::Counts(tsc, apic, pit) = one_window()? {
                break (tsc, apic, pit);
            }
        };
    }
    let hz = |n: u64, pit: u64| n * PIT_HZ / pit;
    w.sort_by_key(|&(tsc, _, pit)| hz(tsc, pit));
    let (tsc, apic, pit) = w[TRIES / 2];
    (tsc > 0 && apic > 0).then(|| Rates { tsc_hz: hz(tsc, pit), apic_hz: hz(apic, pit) })
}
