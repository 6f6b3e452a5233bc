//! Clocks: the TSC at the rate the kernel measured at boot (`kinfo::now_ns`)
//! is time since boot; wall time is that plus the wall time at the TSC's
//! zero, which the kernel read from the real-time clock at boot
//! (`Clock::wall_epoch_ns`).

/// 2024-01-01T00:00:00Z: the wall clock at boot on a machine without a
/// real-time clock (the vDSO falls back to it too).
pub const EPOCH_NS: u64 = 1_704_067_200 * 1_000_000_000;

/// Nanoseconds since boot.
pub fn now_ns() -> u64 {
    user::kinfo::now_ns()
}

/// Wall-clock nanoseconds since 1970 when `now_ns` was 0.
pub fn epoch_ns() -> u64 {
    match user::kinfo::clock().wall_epoch_ns {
        0 => EPOCH_NS,
        e => e,
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
