//! Clocks: the TSC at the rate the kernel measured at boot (`kinfo::now_ns`)
//! is time since boot; wall time is that plus the wall time at the TSC's
//! zero, which the kernel read from the real-time clock at boot
//! (`Clock::wall_epoch_ns`), plus what `clock_settime` has moved it by
//! (one word in the arena, for every process and the vDSO).

use core::sync::atomic::{AtomicI64, AtomicPtr, Ordering};

/// 2024-01-01T00:00:00Z: the wall clock at boot on a machine without a
/// real-time clock (the vDSO falls back to it too).
pub const EPOCH_NS: u64 = 1_704_067_200 * 1_000_000_000;

/// Nanoseconds since boot.
pub fn now_ns() -> u64 {
    user::kinfo::now_ns()
}

/// Wall-clock nanoseconds since 1970 when `now_ns` was 0, as read at
/// boot (or the fallback).
fn boot_epoch_ns() -> u64 {
    match user::kinfo::clock().wall_epoch_ns {
        0 => EPOCH_NS,
        e => e,
    }
}

/// The word every process reads the wall clock's setting from (the
/// arena's, `shared::wall_adjust`: this layer is below the arena, so the
/// arena names it at start); null: the clock was never set.
static ADJUST: AtomicPtr<AtomicI64> = AtomicPtr::new(core::ptr::null_mut());

/// Where the wall clock's setting is kept (the arena, at start).
pub fn set_adjust_word(w: &'static AtomicI64) {
    ADJUST.store(w as *const AtomicI64 as *mut AtomicI64, Ordering::Relaxed);
}

/// Nanoseconds the wall clock was moved by.
fn adjust() -> i64 {
    // SAFETY: null, or the arena's word, mapped for the process's life.
    unsafe { ADJUST.load(Ordering::Relaxed).as_ref() }.map_or(0, |w| w.load(Ordering::Relaxed))
}

/// Wall-clock nanoseconds since 1970 when `now_ns` was 0, as the clock is
/// set now.
pub fn epoch_ns() -> u64 {
    boot_epoch_ns().saturating_add_signed(adjust())
}

/// Sets the wall clock to `ns` since 1970 (every process sees it; the
/// arena names its word before any program runs).
pub fn set_wall_ns(ns: u64) {
    let adjust = ns as i128 - (boot_epoch_ns() + now_ns()) as i128;
    // SAFETY: as in `adjust`.
    if let Some(w) = unsafe { ADJUST.load(Ordering::Relaxed).as_ref() } {
        w.store(adjust as i64, Ordering::Relaxed);
    }
}

/// Wall-clock nanoseconds since 1970 (file timestamps).
pub fn wall_ns() -> u64 {
    epoch_ns() + now_ns()
}

/// `ns` in clock ticks (UNIX's `CLK_TCK`, 100 per second), as `times` and
/// `/proc` count CPU time.
pub fn clock_ticks(ns: u64) -> u64 {
    ns / 10_000_000
}
