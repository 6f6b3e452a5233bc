//! Recovery (paper 004 §3.5 and §4.4; issue 28): a driver that failed —
//! stopped by failure detection (`detect`), or disabled for its device's
//! stray DMA — is restarted. By then disabling it has unloaded it: its
//! device can reach nothing and interrupts no more, what its object
//! tracker recorded came back (interrupts, lent buffers, DMA pages,
//! register mappings), and the requests it held were parked
//! (`pending`): their clients wait. The restart (`driver::restart`) puts
//! a fresh copy of the driver's image in its region, empties its domain,
//! runs its entry point and init as at boot (`virtio-drivers` resets the
//! device when the driver makes its transport), and hands it the parked
//! requests again, oldest first; requests made meanwhile are parked
//! behind them. A driver not restarted (the policy, or the budget below)
//! fails them with an I/O error.
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
/// Drivers (bit `i`) that failed and await their restart.
static DUE: AtomicU64 = AtomicU64::new(0);

/// Each driver's restarts: when its window began, and how many since.
static HISTORY: Global<[(u64, u32); MAX_DRIVERS]> = Global::new([(0, 0); MAX_DRIVERS]);

/// Restart failed drivers (`recover=restart`).
pub fn enable() {
    ON.store(true, Relaxed);
}

/// When each driver failed (TSC cycles), from its first failure until it
/// ends a request well again: the time from a fault to service.
static DOWN: [AtomicU64; MAX_DRIVERS] = [const { AtomicU64::new(0) }; MAX_DRIVERS];

/// Whether failed drivers are restarted.
pub fn on() -> bool {
    ON.load(Relaxed)
}

/// Driver `i` was disabled: whether it is restarted at the next clock
/// (the policy says so; its budget is counted then). (Called wherever it
/// was disabled, perhaps in a trap: only a bit is set here.)
pub fn failed(i: usize) -> bool {
    let due = ON.load(Relaxed);
    if due {
        DUE.fetch_or(1 << i, Relaxed);
        let now = crate::arch::clock::rdtsc().max(1);
        let _ = DOWN[i].compare_exchange(0, now, Relaxed, Relaxed);
    }
    due
}

/// Driver `i` ended a request well: the TSC cycles since it failed, the
/// first time after a failure.
#[inline(always)]
pub fn served(i: usize) -> Option<u64> {
    match DOWN[i].load(Relaxed) {
        0 => None,
        t => {
            DOWN[i].store(0, Relaxed);
            Some(crate::arch::clock::rdtsc().saturating_sub(t))
        }
    }
}

/// Whether driver `i` awaits its restart.
pub fn due(i: usize) -> bool {
    DUE.load(Relaxed) & 1 << i != 0
}

/// Timer ticks were counted, `now` in all (the `clock` hook, or a wait
/// for a disk request: outside any crossing, nothing of the device layer
/// borrowed): restarts the drivers that failed with `restart`; one not
/// restarted is given up on (`give_up(i)`: its parked requests fail).
#[inline(always)]
pub fn run(
    now: u64,
    name: impl Fn(usize) -> &'static str,
    restart: impl Fn(usize) -> Result<(), &'static str>,
    give_up: impl Fn(usize),
) {
    if DUE.load(Relaxed) != 0 {
        restart_due(now, name, restart, give_up);
    }
}

#[inline(never)]
fn restart_due(
    now: u64,
    name: impl Fn(usize) -> &'static str,
    restart: impl Fn(usize) -> Result<(), &'static str>,
    give_up: impl Fn(usize),
) {
    let failed = DUE.swap(0, Relaxed);
    for i in (0..MAX_DRIVERS).filter(|i| failed & 1 << i != 0) {
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
            give_up(i);
            continue;
        }
        match restart(i) {
            Ok(()) => {
                crate::kprintln!("driver {name} restarted ({n} of {RESTARTS} restarts allowed in its window)")
            }
            Err(why) => {
                crate::kprintln!("driver {name}: restart failed: {why}");
                // Its init failed: disabled again, it is due again. Failed
                // before its init, it stays disabled.
                if !due(i) {
                    give_up(i);
                }
            }
        }
    }
}
