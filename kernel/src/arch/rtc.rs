//! The CMOS real-time clock: read once at boot, so wall time starts at the
//! date the machine keeps (QEMU sets it from the host's clock) rather than
//! a fixed one. The clock page publishes it as the wall time at the TSC's
//! zero (`Clock::wall_epoch_ns`); from then on the TSC keeps time, and the
//! library adds any setting a program makes (`clock_settime`).

use super::cpu::{inb, outb};
use crate::calendar::unix_seconds;

/// The CMOS index and data ports; bit 7 of the index masks NMIs, left
/// clear as the kernel found it.
const INDEX: u16 = 0x70;
const DATA: u16 = 0x71;
const SECONDS: u8 = 0x00;
const MINUTES: u8 = 0x02;
const HOURS: u8 = 0x04;
const DAY: u8 = 0x07;
const MONTH: u8 = 0x08;
const YEAR: u8 = 0x09;
/// The century (the register ACPI's FADT names on QEMU and most PCs).
const CENTURY: u8 = 0x32;
/// Status A bit 7: an update is in progress (the registers may be torn).
const STATUS_A: u8 = 0x0a;
const UPDATING: u8 = 0x80;
/// Status B: the registers' format (`calendar::unix_seconds`).
const STATUS_B: u8 = 0x0b;

fn read(reg: u8) -> u8 {
    outb(INDEX, reg);
    inb(DATA)
}

/// The raw date registers, read until two readings agree outside an
/// update (at most a few tries: an update lasts about 2 ms once a second).
fn registers() -> Option<[u8; 7]> {
    let once = || {
        for _ in 0..100_000 {
            if read(STATUS_A) & UPDATING == 0 {
                return Some([SECONDS, MINUTES, HOURS, DAY, MONTH, YEAR, CENTURY].map(read));
            }
        }
        None
    };
    let mut last = once()?;
    for _ in 0..10 {
        let now = once()?;
        if now == last {
            return Some(now);
        }
        last = now;
    }
    None
}

/// Wall-clock nanoseconds since 1970 at the TSC's zero, from the RTC now
/// and the TSC's rate (`tsc_ns_mult`, 32.32 nanoseconds per count; 0: no
/// TSC rate, time counts from boot); 0 if there is no readable RTC.
pub fn epoch_ns(tsc_ns_mult: u64) -> u64 {
    let Some(secs) = registers().and_then(|r| unix_seconds(r, read(STATUS_B))) else {
        return 0;
    };
    // SAFETY: RDTSC only reads the time-stamp counter.
    let tsc = unsafe { core::arch::x86_64::_rdtsc() };
    let since_zero = ((tsc as u128 * tsc_ns_mult as u128) >> 32) as u64;
    (secs * 1_000_000_000).saturating_sub(since_zero)
}
