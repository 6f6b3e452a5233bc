//! Recovery (paper 004 §3.5 and §4.4; issue 28, first step): a driver
//! that failed — stopped by failure detection (`detect`), or disabled for
//! its device's stray DMA — is restarted. By then disabling it has
//! unloaded it: its device can reach nothing and interrupts no more, what
//! its object tracker recorded came back (interrupts, lent buffers, DMA
//! pages, register mappings), and the requests it held failed with an I/O
//! error, which their clients see (replaying them is the next step). The
//! restart (`driver::restart`) puts a fresh copy of the driver's image in
//! its region, empties its domain, and runs its entry point and init as
//! at boot; `virtio-drivers` resets the device when the driver makes its
//! transport.
//!
//! The policy is the command line's: `recover=restart` restarts a failed
//! driver; without it a failed driver stays disabled, as before. A driver
//! that fails again at once is restarted at most `RESTARTS` times within
//! `WINDOW`, then left disabled: no restart loop starves the machine.
//!
//! This file keeps the books (which drivers are due, how often each was
//! restarted); the `clock` hook (`dev/mod.rs`) hands it the restart
//! itself, so that recovery names neither the drivers nor their wrappers
//! and the driver layer may notify it (`failed`) without a cycle.

use super::{Global, MAX_DRIVERS};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Most restarts of one driver within `WINDOW` (timer ticks: 10 s).
const RESTARTS: u32 = 3;
const WINDOW: u64 = 10_000_000_000 / crate::arch::apic::TICK_NS;

static ON: AtomicBool = AtomicBool::new(false);
/// Drivers (bit `i`) that ran once: only those are restarted (one whose
/// first init failed has nothing to come back to).
static RAN: AtomicU64 = AtomicU64::new(0);
/// Drivers (bit `i`) that failed and await their restart.
static DUE: AtomicU64 = AtomicU64::new(0);

/// Each driver's restarts: when its window began, and how many since.
static HISTORY: Global<[(u64, u32); MAX_DRIVERS]> = Global::new([(0, 0); MAX_DRIVERS]);

/// Restart failed drivers (`recover=restart`).
pub fn enable() {
    ON.store(true, Relaxed);
}

/// Driver `i` started (its init succeeded).
pub fn ran(i: usize) {
    RAN.fetch_or(1 << i, Relaxed);
}

/// Driver `i` was disabled: it is restarted at the next clock if the
/// policy says so. (Called wherever it was disabled, perhaps in a trap:
/// only a bit is set here.)
pub fn failed(i: usize) {
    if ON.load(Relaxed) && RAN.load(Relaxed) & 1 << i != 0 {
        DUE.fetch_or(1 << i, Relaxed);
    }
}

/// Timer ticks were counted, `now` in all (the `clock` hook: outside any
/// crossing, nothing of the device layer borrowed): restarts the drivers
/// that failed with `restart(i)`; `name(i)` is driver `i`'s name.
#[inline(always)]
pub fn run(
    now: u64,
    name: impl Fn(usize) -> &'static str,
    restart: impl Fn(usize) -> Result<(), &'static str>,
) {
    if DUE.load(Relaxed) != 0 {
        restart_due(now, name, restart);
    }
}

#[inline(never)]
fn restart_due(
    now: u64,
    name: impl Fn(usize) -> &'static str,
    restart: impl Fn(usize) -> Result<(), &'static str>,
) {
    let due = DUE.swap(0, Relaxed);
    for i in (0..MAX_DRIVERS).filter(|i| due & 1 << i != 0) {
        let n = HISTORY.with(|h| {
            let (start, n) = &mut h[i];
            if now.saturating_sub(*start) > WINDOW {
                (*start, *n) = (now, 0);
            }
            *n += 1;
            *n
        });
        let name = name(i);
        if n > RESTARTS {
            let s = WINDOW * crate::arch::apic::TICK_NS / 1_000_000_000;
            crate::kprintln!("driver {name}: failed {n} times within {s} s: left disabled");
            continue;
        }
        match restart(i) {
            Ok(()) => {
                crate::kprintln!("driver {name} restarted ({n} of {RESTARTS} restarts allowed in its window)")
            }
            Err(why) => crate::kprintln!("driver {name}: restart failed: {why}"),
        }
    }
}
