//! Clocks: the TSC at the rate the kernel measured at boot (`kinfo::now_ns`)
//! is time since boot; wall time is that plus the wall time at the TSC's
//! zero, which the kernel read from the real-time clock at boot
//! (`Clock::wall_epoch_ns`), plus what `clock_settime` has moved it by
//! (one word in the arena, for every process and the vDSO).

use core::sync::atomic::Ordering;

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

/// Wall-clock nanoseconds since 1970 when `now_ns` was 0, as the clock is
/// set now.
pub fn epoch_ns() -> u64 {
    boot_epoch_ns().saturating_add_signed(crate::shared::wall_adjust().load(Ordering::Relaxed))
}

/// Sets the wall clock to `ns` since 1970 (every process sees it).
pub fn set_wall_ns(ns: u64) {
    let adjust = ns as i128 - (boot_epoch_ns() + now_ns()) as i128;
    crate::shared::wall_adjust().store(adjust as i64, Ordering::Relaxed);
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
